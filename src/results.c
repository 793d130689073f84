/* The engine's result sets: the COM_QUERY / COM_STMT_EXECUTE response (OK, ERR, LOCAL
 * INFILE request, or column count + ColumnDefinition41 packets, with MariaDB's metadata
 * cache), the per-column decoding plan, text (ProtocolText::ResultsetRow) and binary
 * (ProtocolBinary::ResultsetRow) rows into tuples or dicts, multi-results, and the row
 * loops of fetch().  No socket: packets come from mc_read_packet(). */
#include "conn_internal.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#include <math.h>
#include <openssl/err.h>


/* ================================================================ result sets */

void mc_clear_result(mc_conn *c) {
    if (c->plan) {
        for (Py_ssize_t i = 0; i < c->plan_len; i++) mc_plan_clear(&c->plan[i]);
        PyMem_Free(c->plan);
        c->plan = NULL;
    }
    c->plan_len = 0;
    c->field_count = 0;
    c->has_converters = 0;
    Py_CLEAR(c->description);
    Py_CLEAR(c->description_flags);
    Py_CLEAR(c->column_names);
    Py_CLEAR(c->column_tables);
}

PyObject *mc_decode_name(const unsigned char *s, size_t n) {
    PyObject *u = PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)n, NULL);
    if (!u) {
        PyErr_Clear();
        u = PyUnicode_DecodeLatin1((const char *)s, (Py_ssize_t)n, NULL);
    }
    return u;
}

/* After a terminating OK/EOF: set the state from SERVER_MORE_RESULTS_EXISTS. */
void mc_after_result(mc_conn *c) {
    c->state = (c->server_status & SERVER_MORE_RESULTS_EXISTS) ? ST_MORE : ST_IDLE;
}

/* ---------------------------------------------------------------- LOCAL INFILE */

#define MC_INFILE_PACKET_MAX ((size_t)1 << 20)   /* payload bytes per data packet, at most */
#define MC_INFILE_FLUSH ((size_t)256 << 10)      /* framed bytes written at a time */

/* Payload bytes per LOCAL INFILE data packet.  The server reads the file packet by packet
   (sql_load.cc READ_INFO over my_net_read), and a packet its read buffer cannot hold
   without growing to max_allowed_packet or more is refused: ER_NET_PACKET_TOO_LARGE, an
   ERR packet, and the server closes the connection (net_serv.cc, net_realloc).  In the
   compressed protocol the buffer holds the whole frame (one packet per frame here: the
   4-byte packet header counts), so the payload stays at max_allowed_packet - 5; measured
   against MariaDB 10.11: at 1024 and 1 MiB, max - 1 is the largest payload accepted
   without compression and max - 5 with it (tests/test_local_infile.py).  The limit was
   read before the statement was sent (mc_infile_limit_prepare); when the server would not
   say (SELECT @@max_allowed_packet failed), the smallest limit a server can have.  At
   most 1 MiB, so that no packet is a 16 MiB fragment (0xFFFFFF, which a next packet would
   continue: the empty packet that ends the file would be taken for that). */
static size_t infile_packet_size(const mc_conn *c) {
    size_t limit = c->max_packet;
    if (limit < MC_MIN_MAX_PACKET || limit == SIZE_MAX) limit = MC_MIN_MAX_PACKET;
    size_t n = limit - 5;
    return n < MC_INFILE_PACKET_MAX ? n : MC_INFILE_PACKET_MAX;
}

/* Frame the file bytes d[0, n) as data packets of infile_packet_size() bytes (no chunk is
   empty, so none ends the file early), written whenever MC_INFILE_FLUSH bytes are
   pending: small packets share a write.  0, or -1 (the connection is closed). */
int mc_send_file_chunk(mc_conn *c, const unsigned char *d, size_t n) {
    size_t size = infile_packet_size(c);
    if (mc_conn_check_signals(c) < 0) return -1;   /* the file cannot be resumed: closed */
    while (n > 0) {
        size_t k = n > size ? size : n;
        if (mc_conn_send(c, d, k, NULL, 0) < 0) return -1;
        if (c->out.len >= MC_INFILE_FLUSH && mc_conn_flush(c) < 0) return -1;
        d += k;
        n -= k;
    }
    return 0;
}

/* The connection was lost while the file went in or before its answer came (a server
   that refuses a data packet closes the connection: the client then sees a broken pipe
   or a reset).  The pending OperationalError 2006 / 2013 keeps its class and number, and
   its message says what was being sent; other errors are left as they are. */
static void infile_lost(mc_conn *c) {
    if (!PyErr_ExceptionMatches(c->st->OperationalError)) return;
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    PyObject *args = v ? PyObject_GetAttrString(v, "args") : NULL;
    if (!args) PyErr_Clear();
    else if (PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 2 &&
             PyLong_Check(PyTuple_GET_ITEM(args, 0)) && PyUnicode_Check(PyTuple_GET_ITEM(args, 1))) {
        long errnum = PyLong_AsLong(PyTuple_GET_ITEM(args, 0));
        PyObject *msg = NULL;
        if (errnum == CR_SERVER_GONE_ERROR || errnum == CR_SERVER_LOST) {
            size_t limit = c->max_packet;
            if (limit == 0 || limit == SIZE_MAX)
                msg = PyUnicode_FromFormat("%U, during LOAD DATA LOCAL INFILE (the file went in "
                                           "packets of %zu bytes; the session's "
                                           "max_allowed_packet is unknown)",
                                           PyTuple_GET_ITEM(args, 1), infile_packet_size(c));
            else
                msg = PyUnicode_FromFormat("%U, during LOAD DATA LOCAL INFILE (the file went in "
                                           "packets of %zu bytes; the session's "
                                           "max_allowed_packet is %zu)",
                                           PyTuple_GET_ITEM(args, 1), infile_packet_size(c), limit);
        }
        PyObject *nargs = msg ? Py_BuildValue("(lO)", errnum, msg) : NULL;
        if (nargs && PyObject_SetAttrString(v, "args", nargs) == 0)
            mc_conn_record_error(c, (int)errnum, msg, "HY000");
        PyErr_Clear();   /* (a failure here keeps the original message) */
        Py_XDECREF(nargs);
        Py_XDECREF(msg);
    }
    Py_XDECREF(args);
    PyErr_Restore(t, v, tb);
}

/* LOCAL INFILE request (0xFB + file name): stream the file from the user's handler (which
   enforces the allowed directory), or refuse.  A refusal still sends the empty packet that
   ends the transfer, so that the connection stays in sync, and sends no byte of the file.
   Returns 0 (OK, affected rows set) or -1. */
static Py_ssize_t infile_response(mc_conn *c);

Py_ssize_t mc_local_infile(mc_conn *c, const unsigned char *name, size_t name_n) {
    PyObject *exc_t = NULL, *exc_v = NULL, *exc_tb = NULL;
    PyObject *it = NULL;
    if (c->pipe_pending > 0 || c->pipe_reading) {
        /* commands already sent behind this statement would be read as the file's data */
        Py_ssize_t queued = c->pipe_pending;
        mc_conn_close_socket(c);
        mc_conn_client_error(c, c->st->OperationalError, CR_SERVER_LOST,
                             "the server asked for a LOAD DATA LOCAL INFILE file for a "
                             "pipelined statement (%zd command(s) were sent behind it and "
                             "would be read as the file's data): the connection is closed",
                             queued);
        return -1;
    }
    if (c->nowait && c->infile_handler) {
        /* statement.c: only a statement that does not mention LOCAL goes without waiting
           on a connection that serves files, so no file was asked for: refused (no byte
           of any file is sent; the connection stays in sync), as a request for a plain
           statement is refused by the handler's own rules */
        PyObject *fn = PyBytes_FromStringAndSize((const char *)name, (Py_ssize_t)name_n);
        if (fn) {
            mc_raise(c->st->OperationalError, 2068,
                     "LOAD DATA LOCAL INFILE refused: the statement does not mention LOCAL "
                     "(the server asked for %R)", fn);
            Py_DECREF(fn);
        }
        PyErr_Fetch(&exc_t, &exc_v, &exc_tb);
    } else if (!c->infile_handler) {
        PyObject *fn = PyBytes_FromStringAndSize((const char *)name, (Py_ssize_t)name_n);
        if (fn) {
            mc_raise(c->st->OperationalError, 2068,
                     "LOAD DATA LOCAL INFILE refused: local_infile is not enabled on this "
                     "connection (the server asked for %R)", fn);
            Py_DECREF(fn);
        }
        PyErr_Fetch(&exc_t, &exc_v, &exc_tb);
    } else {
        PyObject *src = PyObject_CallFunction(c->infile_handler, "y#", (const char *)name,
                                              (Py_ssize_t)name_n);
        if (src) {
            it = PyObject_GetIter(src);
            Py_DECREF(src);
        }
        if (!it) PyErr_Fetch(&exc_t, &exc_v, &exc_tb);
    }
    if (it) {
        PyObject *chunk;
        while ((chunk = PyIter_Next(it)) != NULL) {
            Py_buffer view;
            if (PyObject_GetBuffer(chunk, &view, PyBUF_SIMPLE) < 0) { Py_DECREF(chunk); break; }
            int r = mc_send_file_chunk(c, view.buf, (size_t)view.len);
            PyBuffer_Release(&view);
            Py_DECREF(chunk);
            if (r < 0) {   /* connection lost */
                infile_lost(c);
                Py_DECREF(it);
                Py_XDECREF(exc_t); Py_XDECREF(exc_v); Py_XDECREF(exc_tb);
                return -1;
            }
        }
        Py_DECREF(it);
        if (PyErr_Occurred()) PyErr_Fetch(&exc_t, &exc_v, &exc_tb);  /* read error: stop */
    }
    /* the empty packet ends the file (or sends none); it and what is pending are written
       before the answer is read (mc_read_packet writes first) */
    if (mc_conn_send(c, NULL, 0, NULL, 0) < 0) {
        infile_lost(c);
        Py_XDECREF(exc_t); Py_XDECREF(exc_v); Py_XDECREF(exc_tb);
        return -1;
    }
    /* the handler's error (if any) is raised after the server's answer is read */
    if (exc_t) {
        PyErr_NormalizeException(&exc_t, &exc_v, &exc_tb);
        if (exc_tb && exc_v) PyException_SetTraceback(exc_v, exc_tb);
        Py_XSETREF(c->infile_exc, exc_v ? exc_v : Py_NewRef(Py_None));
        Py_XDECREF(exc_t);
        Py_XDECREF(exc_tb);
    }
    c->state = ST_INFILE;
    c->infile_seq_off = 0;
    return infile_response(c);
}

/* ST_INFILE: the file was sent; read the server's OK or ERR.  The handler's exception
   (c->infile_exc), if any, wins over the server's error.  An ERR out of sequence comes
   from a server that refused a data packet (e.g. 1153 ER_NET_PACKET_TOO_LARGE) and closed
   the connection: its error is raised and the connection is closed here too (later use
   raises 2006), never left to read what follows out of step.  0, -1, or MC_NEED (nothing
   consumed; call again). */
static Py_ssize_t infile_response(mc_conn *c) {
    const unsigned char *p;
    size_t n;
    int r = mc_read_packet(c, &p, &n);
    if (r == MC_NEED) return MC_NEED;
    int seq_off = c->infile_seq_off;
    c->infile_seq_off = 0;
    PyObject *exc = c->infile_exc;
    c->infile_exc = NULL;
    c->state = ST_IDLE;
    if (r < 0) {
        if (c->fd < 0) infile_lost(c);
        goto lost;
    }
    if (seq_off) {
        if (n && p[0] == 0xFF) mc_raise_err_packet(c, p, n);
        else mc_conn_malformed(c, "packets out of order (unexpected sequence id)");
        mc_conn_close_socket(c);   /* keeps the exception */
        goto lost;
    }
    if (n && p[0] == 0xFF) {
        if (exc) goto restore;
        mc_raise_err_packet(c, p, n);
        return -1;
    }
    if (!n || p[0] != 0x00) { mc_conn_malformed(c, "expected OK after LOCAL INFILE data"); goto lost; }
    if (mc_parse_ok(c, p, n) < 0) goto lost;
    mc_after_result(c);
    if (exc) goto restore;
    return 0;
restore:
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return -1;
lost:
    Py_XDECREF(exc);
    return -1;
}

/* use_unicode=False (mysqlclient): every column that would decode to str -- CHAR, VARCHAR,
   TEXT, ENUM, SET, JSON in any character set -- gives the wire bytes instead, also as the
   argument of a user converter; numbers, DECIMAL, dates and times are unchanged (their
   converters get what they get with use_unicode, as in mysqlclient).  Chosen once per
   result set, so the default path pays nothing per value. */
void mc_plan_text_as_bytes(mc_column_plan *col) {
    if (col->kind == MC_DEC_CONVERTER && !mc_is_string_type(col->type)) return;
    mc_dec_kind *k = col->kind == MC_DEC_CONVERTER ? &col->arg_kind : &col->kind;
    if (*k == MC_DEC_STR_UTF8 || *k == MC_DEC_STR_LATIN1 || *k == MC_DEC_STR_ASCII ||
        *k == MC_DEC_STR_CODEC) {
        *k = MC_DEC_BYTES;
        col->codec = NULL;
        Py_CLEAR(col->codec_obj);
    }
}

/* Read a COM_QUERY response's first packet and, for a result set, its column definitions.
   Returns the field count (0 for OK) or -1. */
/* Is the whole head of the response in the buffer: its first packet and, for a result
   set, every column definition with the EOF that follows them?  Waits for it with a
   blocking transport; 0, MC_NEED (nothing consumed) or -1.  A first packet that is not a
   well-formed column count needs only itself (mc_read_query_response refuses it). */
static int response_head_ready(mc_conn *c) {
    const unsigned char *p;
    size_t n;
    int r = mc_frame_peek(c, &p, &n);
    if (r < 0) return r;
    if (r == 2 || n == 0 || p[0] == 0x00 || p[0] == 0xFF || p[0] == 0xFB) return 0;
    mc_reader rd;
    uint64_t ncols;
    mc_reader_init(&rd, p, n);
    if (mc_reader_lenenc(&rd, &ncols, NULL) < 0 || ncols == 0 || ncols > 65535) return 0;
    int meta_follows = 1;
    if (c->ext_caps & MARIADB_CLIENT_CACHE_METADATA) {
        uint8_t mf;
        if (mc_reader_u8(&rd, &mf) < 0) return 0;
        meta_follows = mf != 0;
    }
    size_t count = 1 + (meta_follows ? (size_t)ncols : 0);
    if ((!(c->client_flag & CLIENT_DEPRECATE_EOF) && meta_follows) || c->cursor_wanted) count++;
    return mc_frame_wait(c, count);
}

/* ---------------------------------------------------------------- head cache */

void mc_head_cache_forget(mc_conn *c) {
    if (c->hc_plan) {
        for (Py_ssize_t i = 0; i < c->hc_nc; i++) mc_plan_clear(&c->hc_plan[i]);
        PyMem_Free(c->hc_plan);
        c->hc_plan = NULL;
    }
    c->hc_nc = 0;
    c->hc_bytes.len = 0;
    Py_CLEAR(c->hc_desc);
    Py_CLEAR(c->hc_flags);
    Py_CLEAR(c->hc_names);
    Py_CLEAR(c->hc_tables);
}

static mc_column_plan *plan_copy(const mc_column_plan *from, Py_ssize_t n) {
    mc_column_plan *p = PyMem_Calloc((size_t)n, sizeof(mc_column_plan));
    if (!p) { PyErr_NoMemory(); return NULL; }
    memcpy(p, from, (size_t)n * sizeof(mc_column_plan));
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_XINCREF(p[i].codec_obj);
        Py_XINCREF(p[i].converter);
    }
    return p;
}

/* Are the next `nc` packets in rbuf (all complete: response_head_ready) the cached
   column definitions, byte for byte and in sequence?  Then the result's head is installed
   from the cache, the packets consumed: 1.  0: not cached (nothing consumed), -1: no
   memory. */
static int head_cache_take(mc_conn *c, Py_ssize_t nc) {
    if (c->hc_nc != nc || !c->hc_desc || c->hc_binary != c->binary) return 0;
    const unsigned char *cb = c->hc_bytes.buf;
    size_t cl = c->hc_bytes.len, ci = 0, pos = c->rpos;
    uint8_t seq = c->seq;
    for (Py_ssize_t i = 0; i < nc; i++) {
        if (c->rend - pos < 4) return 0;
        const unsigned char *h = c->rbuf + pos;
        size_t plen = mc_load_u24(h);
        if (plen >= MC_MAX_PACKET || c->rend - pos - 4 < plen) return 0;
        if (h[3] != seq && !c->compress) return 0;
        if (cl - ci < 4 + plen || mc_load_u24(cb + ci) != plen || cb[ci + 3] != 0 ||
            memcmp(cb + ci + 4, h + 4, plen) != 0)
            return 0;
        seq = (uint8_t)(h[3] + 1);
        pos += 4 + plen;
        ci += 4 + plen;
    }
    if (ci != cl) return 0;
    c->plan = plan_copy(c->hc_plan, nc);
    if (!c->plan) return -1;
    c->rpos = pos;
    c->seq = seq;
    c->plan_len = nc;
    c->field_count = nc;
    c->has_converters = c->hc_has_conv;
    c->description = Py_NewRef(c->hc_desc);
    c->description_flags = Py_NewRef(c->hc_flags);
    c->column_names = Py_NewRef(c->hc_names);
    c->column_tables = Py_NewRef(c->hc_tables);
    return 1;
}

/* Keep what the head just read built (its column definitions are in c->hc_bytes). */
static void head_cache_keep(mc_conn *c, Py_ssize_t nc) {
    mc_column_plan *p = plan_copy(c->plan, nc);
    if (!p) { PyErr_Clear(); mc_head_cache_forget(c); return; }
    c->hc_plan = p;
    c->hc_nc = nc;
    c->hc_binary = c->binary;
    c->hc_has_conv = c->has_converters;
    c->hc_desc = Py_NewRef(c->description);
    c->hc_flags = Py_NewRef(c->description_flags);
    c->hc_names = Py_NewRef(c->column_names);
    c->hc_tables = Py_NewRef(c->column_tables);
}

Py_ssize_t mc_read_query_response(mc_conn *c) {
    const unsigned char *p;
    size_t n;
    if (c->state == ST_INFILE) return infile_response(c);
    int ready = response_head_ready(c);
    if (ready != 0) return ready;
    mc_clear_result(c);
    c->rows_read = 0;
    c->result_seq++;
    if (mc_read_packet(c, &p, &n) < 0) return -1;
    if (n == 0) { mc_conn_malformed(c, "empty response packet"); return -1; }
    if (p[0] == 0x00) {
        if (mc_parse_ok(c, p, n) < 0) return -1;
        mc_after_result(c);
        return 0;
    }
    if (p[0] == 0xFF) {
        c->state = ST_IDLE;
        mc_raise_err_packet(c, p, n);
        return -1;
    }
    if (p[0] == 0xFB)
        return mc_local_infile(c, p + 1, n - 1);
    mc_reader r;
    uint64_t ncols;
    mc_reader_init(&r, p, n);
    if (mc_reader_lenenc(&r, &ncols, NULL) < 0 || ncols == 0 || ncols > 65535) {
        mc_conn_malformed(c, "bad column count");
        return -1;
    }
    Py_ssize_t nc = (Py_ssize_t)ncols;
    /* MariaDB's metadata cache: a byte says whether the column definitions follow; when
       they do not, they are the ones recorded for this prepared statement. */
    int meta_follows = 1;
    PyObject *cached = NULL, *record = NULL;
    if (c->ext_caps & MARIADB_CLIENT_CACHE_METADATA) {
        uint8_t mf;
        if (mc_reader_u8(&r, &mf) < 0) { mc_conn_malformed(c, "column count without its metadata flag"); return -1; }
        meta_follows = mf != 0;
        /* the cache exists once any statement's definitions were recorded: a prepare
           that reported no columns (an INSERT ... RETURNING) has its result's
           definitions recorded here, at its first execute */
        if (c->binary && !c->meta_cache && meta_follows && !(c->meta_cache = PyDict_New()))
            return -1;
        if (c->binary && c->meta_cache) {
            PyObject *key = PyLong_FromUnsignedLong(c->cursor_stmt);
            if (!key) return -1;
            if (!meta_follows) {
                cached = PyDict_GetItemWithError(c->meta_cache, key);   /* borrowed */
                if (!cached && PyErr_Occurred()) { Py_DECREF(key); return -1; }
            } else {
                record = PyTuple_New(nc);
                if (!record || PyDict_SetItem(c->meta_cache, key, record) < 0) {
                    Py_XDECREF(record);
                    Py_DECREF(key);
                    return -1;
                }
                Py_DECREF(record);   /* the dict holds it */
            }
            Py_DECREF(key);
        }
        if (!meta_follows && (!cached || PyTuple_GET_SIZE(cached) != nc)) {
            mc_conn_malformed(c, "the server skipped column definitions the client does not have");
            return -1;
        }
    }
    c->insert_id = 0;        /* a result set carries no insert id (mysql_insert_id() is 0) */
    c->affected_rows = 0;
    /* the column definitions as the last result set had them: reused (text results and
       binary ones outside MariaDB's metadata cache) */
    int caching = !cached && !record && meta_follows;
    if (caching) {
        int hit = head_cache_take(c, nc);
        if (hit < 0) return -1;
        if (hit) {
            c->state = ST_ROWS;
            goto after_columns;
        }
        mc_head_cache_forget(c);   /* rebuilt below from the bytes read */
    }
    c->plan = PyMem_Calloc((size_t)nc, sizeof(mc_column_plan));
    if (!c->plan) { PyErr_NoMemory(); return -1; }
    c->plan_len = nc;
    c->field_count = nc;
    c->description = PyTuple_New(nc);
    c->description_flags = PyTuple_New(nc);
    c->column_names = PyTuple_New(nc);
    c->column_tables = PyTuple_New(nc);
    if (!c->description || !c->description_flags || !c->column_names || !c->column_tables)
        goto error;
    /* rows are pending from here on: an error below leaves the stream mid-result */
    c->state = ST_ROWS;
    for (Py_ssize_t i = 0; i < nc; i++) {
        const unsigned char *catalog, *schema, *table, *org_table, *name, *org_name;
        size_t catalog_n, schema_n, table_n, org_table_n, name_n, org_name_n;
        uint64_t fixed_len;
        uint16_t charset, flags;
        uint32_t length;
        uint8_t type, decimals;
        if (cached) {
            PyObject *def = PyTuple_GET_ITEM(cached, i);
            p = (const unsigned char *)PyBytes_AS_STRING(def);
            n = (size_t)PyBytes_GET_SIZE(def);
        } else {
            if (mc_read_packet(c, &p, &n) < 0) goto error;
            if (caching) {
                if (n >= MC_MAX_PACKET) {
                    caching = 0;   /* (a joined 16 MiB definition: not worth keeping) */
                } else {
                    unsigned char lh[4];
                    mc_store_u24(lh, (uint32_t)n);
                    lh[3] = 0;
                    if (mc_writer_put(&c->hc_bytes, lh, 4) < 0 ||
                        mc_writer_put(&c->hc_bytes, p, n) < 0) {
                        PyErr_Clear();
                        caching = 0;
                    }
                }
            }
            if (record) {
                PyObject *def = PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)n);
                if (!def) goto error;
                PyTuple_SET_ITEM(record, i, def);
            }
        }
        mc_reader_init(&r, p, n);
        if (mc_reader_lenenc_str(&r, &catalog, &catalog_n) < 0 ||
            mc_reader_lenenc_str(&r, &schema, &schema_n) < 0 ||
            mc_reader_lenenc_str(&r, &table, &table_n) < 0 ||
            mc_reader_lenenc_str(&r, &org_table, &org_table_n) < 0 ||
            mc_reader_lenenc_str(&r, &name, &name_n) < 0 ||
            mc_reader_lenenc_str(&r, &org_name, &org_name_n) < 0 ||
            mc_reader_lenenc(&r, &fixed_len, NULL) < 0 ||
            mc_reader_u16(&r, &charset) < 0 || mc_reader_u32(&r, &length) < 0 ||
            mc_reader_u8(&r, &type) < 0 || mc_reader_u16(&r, &flags) < 0 ||
            mc_reader_u8(&r, &decimals) < 0) {
            mc_conn_malformed(c, "short column definition");
            goto error;
        }
        (void)catalog; (void)schema; (void)org_table; (void)org_name; (void)fixed_len;
        (void)catalog_n; (void)schema_n; (void)org_table_n; (void)org_name_n;
        if (mc_plan_column(c->st, &c->plan[i], type, flags, charset, c->converters) < 0)
            goto error;
        if (!c->use_unicode) mc_plan_text_as_bytes(&c->plan[i]);
        c->plan[i].decimals = decimals;
        c->plan[i].length = length;
        if (c->plan[i].converter) c->has_converters = 1;
        PyObject *pyname = mc_decode_name(name, name_n);
        if (!pyname) goto error;
        PyTuple_SET_ITEM(c->column_names, i, pyname);
        PyObject *pytable = mc_decode_name(table, table_n);
        if (!pytable) goto error;
        PyTuple_SET_ITEM(c->column_tables, i, pytable);
        Py_INCREF(pyname);
        PyObject *d = Py_BuildValue("(NiOkkiO)", pyname, (int)type, Py_None,
                                    (unsigned long)length, (unsigned long)length, (int)decimals,
                                    (flags & MC_FLAG_NOT_NULL) ? Py_False : Py_True);
        if (!d) goto error;
        PyTuple_SET_ITEM(c->description, i, d);
        PyObject *f = PyLong_FromLong(flags);
        if (!f) goto error;
        PyTuple_SET_ITEM(c->description_flags, i, f);
    }
    if (caching) head_cache_keep(c, nc);
    else if (!cached && !record) mc_head_cache_forget(c);
after_columns:
    if ((!(c->client_flag & CLIENT_DEPRECATE_EOF) && meta_follows) || c->cursor_wanted) {
        /* With a cursor the metadata is always followed by EOF/OK carrying
           SERVER_STATUS_CURSOR_EXISTS; without DEPRECATE_EOF there is always an EOF. */
        if (mc_read_packet(c, &p, &n) < 0) goto error;
        if (!mc_is_eof_packet(p, n)) {
            if (!(c->client_flag & CLIENT_DEPRECATE_EOF) || !c->cursor_wanted) {
                mc_conn_malformed(c, "missing EOF after column definitions");
                goto error;
            }
            /* no cursor was opened: this is the first row; put it back */
            if (n >= MC_MAX_PACKET) { mc_conn_malformed(c, "cursor not opened before a 16 MiB row"); goto error; }
            c->rpos -= 4 + n;   /* single-fragment rows only reach here (is_eof checked) */
            c->seq--;
        } else {
            if (mc_parse_eof(c, p, n) < 0) goto error;
            if (c->cursor_wanted && (c->server_status & SERVER_STATUS_CURSOR_EXISTS)) {
                c->state = ST_CURSOR;
            } else if (c->cursor_wanted && (c->client_flag & CLIENT_DEPRECATE_EOF)) {
                /* no cursor and DEPRECATE_EOF: that packet was the end of an empty result */
                mc_after_result(c);
            }
        }
    }
    return nc;
error:
    /* The stream is in the middle of the result's metadata: it cannot be resumed.
       Never leave half-built description tuples behind. */
    mc_clear_result(c);
    if (mc_stream_open(c)) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        mc_conn_close_socket(c);
        c->replaying = 0;
        PyErr_Restore(et, ev, tb);
    }
    return -1;
}

/* Decode one text row packet into a tuple (keys == NULL) or a dict. */
/* Put value v (a reference that is stolen) as column i of a tuple row, or under keys[i] of
   a dict row.  0 or -1. */
static inline int mc_row_put(PyObject *row, PyObject *keys, Py_ssize_t i, PyObject *v) {
    if (!keys) {
        PyTuple_SET_ITEM(row, i, v);
        return 0;
    }
    int rc = PyDict_SetItem(row, PyTuple_GET_ITEM(keys, i), v);
    Py_DECREF(v);
    return rc;
}

/* A value failed to decode.  A built-in decoder's ValueError (bad digits, bad UTF-8, ...)
   becomes OperationalError(2027) naming the column, with the original as __cause__, and the
   connection is closed (wire data that does not parse is not trusted further); a user
   converter's exception propagates unchanged (with a note naming the column on 3.11+) and
   the connection stays usable (the row packet was consumed whole). */
PyObject *mc_value_error(mc_conn *c, Py_ssize_t i) {
    PyObject *name = c->column_names ? PyTuple_GET_ITEM(c->column_names, i) : Py_None;
    if (!c->plan[i].converter && PyErr_ExceptionMatches(PyExc_ValueError)) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        PyErr_NormalizeException(&et, &ev, &tb);
        PyObject *msg = PyUnicode_FromFormat("Malformed value in column %R: %S", name,
                                             ev ? ev : Py_None);
        PyObject *exc = msg ? PyObject_CallFunction(c->st->OperationalError, "iO",
                                                    CR_MALFORMED_PACKET, msg) : NULL;
        Py_XDECREF(msg);
        if (exc) {
            if (ev) PyException_SetCause(exc, Py_NewRef(ev));
            PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
            Py_DECREF(exc);
        }
        Py_XDECREF(et); Py_XDECREF(ev); Py_XDECREF(tb);
        PyObject *t2, *v2, *tb2;
        PyErr_Fetch(&t2, &v2, &tb2);
        mc_conn_close_socket(c);
        PyErr_Restore(t2, v2, tb2);
        return NULL;
    }
#if PY_VERSION_HEX >= 0x030B0000
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyErr_NormalizeException(&et, &ev, &tb);
    if (ev && PyErr_GivenExceptionMatches(et, PyExc_Exception)) {
        PyObject *note = PyUnicode_FromFormat("while decoding column %R", name);
        if (note) {
            PyObject *res = PyObject_CallMethod(ev, "add_note", "O", note);
            Py_XDECREF(res);
            Py_DECREF(note);
        }
        PyErr_Clear();
    }
    PyErr_Restore(et, ev, tb);
#endif
    return NULL;
}

PyObject *mc_decode_binary_row(mc_conn *c, const unsigned char *p, size_t n, PyObject *keys) {
    const unsigned char *e = p + n;
    Py_ssize_t nc = c->plan_len;
    size_t bitmap_len = (size_t)(nc + 7 + 2) / 8;
    if (n < 1 + bitmap_len || p[0] != 0x00)
        return mc_conn_malformed(c, "binary row without its header and NULL bitmap");
    const unsigned char *bitmap = p + 1;
    p += 1 + bitmap_len;
    PyObject *row = keys ? PyDict_New() : PyTuple_New(nc);
    if (!row) return NULL;
    for (Py_ssize_t i = 0; i < nc; i++) {
        PyObject *v;
        size_t bit = (size_t)i + 2;
        if (bitmap[bit / 8] & (1u << (bit % 8))) {
            v = Py_NewRef(Py_None);
        } else if (c->plan[i].type == MC_TYPE_LONGLONG && e - p >= 8 &&
                   c->plan[i].kind != MC_DEC_CONVERTER) {
            /* inline fast path for the commonest binary integer: 8 bytes little-endian */
            uint64_t u = (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16) |
                         ((uint64_t)p[3] << 24) | ((uint64_t)p[4] << 32) | ((uint64_t)p[5] << 40) |
                         ((uint64_t)p[6] << 48) | ((uint64_t)p[7] << 56);   /* one load with -O2 */
            p += 8;
            v = (c->plan[i].flags & MC_FLAG_UNSIGNED) ? PyLong_FromUnsignedLongLong(u)
                                                      : PyLong_FromLongLong((long long)u);
            if (!v) { Py_DECREF(row); return NULL; }
        } else if (c->plan[i].type == MC_TYPE_LONG && e - p >= 4 &&
                   c->plan[i].kind != MC_DEC_CONVERTER) {
            uint32_t u = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                         ((uint32_t)p[3] << 24);
            p += 4;
            v = (c->plan[i].flags & MC_FLAG_UNSIGNED) ? PyLong_FromUnsignedLong(u)
                                                      : PyLong_FromLong((long)(int32_t)u);
            if (!v) { Py_DECREF(row); return NULL; }
        } else {
            int short_packet = 0;
            v = mc_decode_binary_value(c->st, &c->plan[i], &p, e, &short_packet);
            if (!v) {
                Py_DECREF(row);
                if (short_packet) return mc_conn_malformed(c, "binary value runs past the end of the row packet");
                return mc_value_error(c, i);
            }
        }
        if (mc_row_put(row, keys, i, v) < 0) { Py_DECREF(row); return NULL; }
    }
    if (p != e) {
        Py_DECREF(row);
        return mc_conn_malformed(c, "binary row has more values than columns");
    }
    if (!keys && !c->has_converters) PyObject_GC_UnTrack(row);   /* as mc_conn_decode_row */
    return row;
}

PyObject *mc_conn_decode_row(mc_conn *c, const unsigned char *p, size_t n, PyObject *keys) {
    if (c->binary) return mc_decode_binary_row(c, p, n, keys);
    const unsigned char *e = p + n;
    Py_ssize_t nc = c->plan_len;
    PyObject *row = keys ? PyDict_New() : PyTuple_New(nc);
    if (!row) return NULL;
    for (Py_ssize_t i = 0; i < nc; i++) {
        PyObject *v;
        if (p >= e) {
            Py_DECREF(row);
            return mc_conn_malformed(c, "row has fewer values than columns");
        }
        unsigned b = *p++;
        if (b == 0xFB) {
            v = Py_None;
            Py_INCREF(v);
        } else {
            uint64_t len;
            if (b < 0xFB) {
                len = b;
            } else if (b == 0xFC) {
                if (e - p < 2) goto short_row;
                len = (uint64_t)p[0] | ((uint64_t)p[1] << 8);
                p += 2;
            } else if (b == 0xFD) {
                if (e - p < 3) goto short_row;
                len = mc_load_u24(p);
                p += 3;
            } else if (b == 0xFE) {
                if (e - p < 8) goto short_row;
                len = 0;
                for (int k = 7; k >= 0; k--) len = (len << 8) | p[k];
                p += 8;
            } else {
                goto short_row;
            }
            if (len > (uint64_t)(e - p)) goto short_row;
            const mc_column_plan *col = &c->plan[i];
            v = NULL;
            if (col->kind == MC_DEC_INT && len > 0 && len <= 18) {
                /* inline fast path: [-]digits, at most 18 of them, always fits int64 */
                const unsigned char *q = p, *qe = p + len;
                int neg = (*q == '-');
                q += neg;
                if (q < qe) {
                    int64_t acc = 0;
                    for (; q < qe; q++) {
                        unsigned d = (unsigned)(*q - '0');
                        if (d > 9) break;
                        acc = acc * 10 + (int64_t)d;
                    }
                    if (q == qe) {
                        v = PyLong_FromLongLong(neg ? -acc : acc);
                        if (!v) goto mc_value_error;
                    }
                }
            }
            if (!v)
                v = mc_decode_text_value(c->st, col, p, (size_t)len);
            p += len;
            if (!v) {
            mc_value_error:;
                Py_DECREF(row);
                return mc_value_error(c, i);
            }
        }
        if (mc_row_put(row, keys, i, v) < 0) { Py_DECREF(row); return NULL; }
    }
    if (p != e) {
        Py_DECREF(row);
        return mc_conn_malformed(c, "row has more values than columns");
    }
    if (!keys) {
        /* A tuple of atomic values (int, float, str, bytes, Decimal, date/time, None) cannot
           be part of a reference cycle: untrack it now, as CPython's GC would on its first
           pass, so that large results do not make every collection walk every row. */
        /* With a user converter any object may come back (even an untracked dict
           that becomes part of a cycle later), so the tuple stays tracked. */
        if (!c->has_converters) PyObject_GC_UnTrack(row);
    }
    return row;
short_row:
    Py_DECREF(row);
    return mc_conn_malformed(c, "value length runs past the end of the row packet");
}

/* Read the next row packet; returns 1 with the packet in p and n for a row, 0 at the end of the result
   set (state updated), -1 on error. */
int mc_conn_next_row(mc_conn *c, const unsigned char **p, size_t *n) {
    int rr = mc_read_packet(c, p, n);
    if (rr < 0) return rr;   /* -1, or MC_NEED (no transport; nothing consumed) */
    if (*n == 0) { mc_conn_malformed(c, "empty row packet"); return -1; }
    unsigned char h = (*p)[0];
    if (h == 0xFE && *n < MC_MAX_PACKET) {
        if (mc_parse_eof(c, *p, *n) < 0) return -1;
        if (c->cursor_wanted && (c->server_status & SERVER_STATUS_CURSOR_EXISTS) &&
            !(c->server_status & SERVER_STATUS_LAST_ROW_SENT))
            c->state = ST_CURSOR;   /* more rows with the next COM_STMT_FETCH */
        else
            mc_after_result(c);
        return 0;
    }
    if (h == 0xFF) {
        c->state = ST_IDLE;
        mc_raise_err_packet(c, *p, *n);
        return -1;
    }
    return 1;
}
int mc_conn_cursor_fetch(mc_conn *c, uint32_t n) {
    unsigned char arg[8];
    for (int q = 0; q < 4; q++) arg[q] = (unsigned char)(c->cursor_stmt >> (8 * q));
    for (int q = 0; q < 4; q++) arg[4 + q] = (unsigned char)(n >> (8 * q));
    if (mc_conn_command(c, COM_STMT_FETCH, arg, 8) < 0) return -1;
    c->state = ST_ROWS;
    return 0;
}

/* Read up to `limit` rows (all when < 0) of the current result; the caller has entered. */
/* Read up to `limit` rows (all when < 0), and stop early once the rows' packets add up to
   `max_bytes` (when > 0; at least one row is read), so that a batch of large rows stays
   bounded in memory; the caller has entered. */
PyObject *mc_fetch_rows_bounded(mc_conn *c, Py_ssize_t limit, PyObject *keys,
                                    size_t max_bytes, PyObject **before) {
    PyObject *list = PyList_New(0);
    if (!list) return NULL;
    Py_ssize_t got = 0;
    size_t bytes = 0;
    while (c->state == ST_ROWS && (limit < 0 || got < limit) &&
           (max_bytes == 0 || bytes < max_bytes)) {
        const unsigned char *p;
        size_t n;
        int r = mc_conn_next_row(c, &p, &n);
        if (r == MC_NEED) break;   /* no transport: the rows so far; call again after feeding */
        if (r < 0) goto error;
        if (r == 0) break;
        bytes += n;
        PyObject *row = mc_conn_decode_row(c, p, n, keys);
        if (!row) goto error;
        int rc = PyList_Append(list, row);
        Py_DECREF(row);
        if (rc < 0) goto error;
        got++;
        c->rows_read++;
    }
    return list;
error:
    if (before && got > 0) {
        *before = list;   /* (the rows decoded before the error: the caller's) */
        return NULL;
    }
    Py_DECREF(list);
    return NULL;
}

PyObject *mc_fetch_rows(mc_conn *c, Py_ssize_t limit, PyObject *keys) {
    return mc_fetch_rows_bounded(c, limit, keys, 0, NULL);
}

/* Drop the rest of the current result set; 0 or -1. */
int mc_skip_rows(mc_conn *c) {
    while (c->state == ST_ROWS) {
        const unsigned char *p;
        size_t n;
        int r = mc_conn_next_row(c, &p, &n);
        if (r < 0) return r;   /* -1 or MC_NEED */
        if (r == 0) break;
        c->rows_read++;
    }
    return 0;
}
