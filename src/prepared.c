/* The engine's prepared statements: COM_STMT_PREPARE (and its response), COM_STMT_EXECUTE
 * with binary parameters (src/encode.c), COM_STMT_SEND_LONG_DATA, MariaDB's
 * COM_STMT_BULK_EXECUTE, server-side cursors (COM_STMT_FETCH), COM_STMT_RESET and
 * COM_STMT_CLOSE: flows on C arguments returning C status codes (the Connection methods
 * over them, with their argument parsing and the thread guard: prepared_methods.c).
 * No socket. */
#include "conn_internal.h"
#include <datetime.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#include <math.h>
#include <openssl/err.h>


/* ---------------------------------------------------------------- prepared statements */

/* Read `count` column definitions (and their EOF without DEPRECATE_EOF); they are kept in
   `record` (a tuple of `count` items) when it is given, else dropped. */
int mc_skip_column_defs(mc_conn *c, unsigned count, PyObject *record) {
    const unsigned char *p;
    size_t n;
    for (unsigned i = 0; i < count; i++) {
        if (mc_read_packet(c, &p, &n) < 0) return -1;
        if (n == 0 || p[0] == 0xFF) { mc_conn_malformed(c, "bad column definition in COM_STMT_PREPARE response"); return -1; }
        if (record) {   /* kept for executes whose response skips the metadata */
            PyObject *def = PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)n);
            if (!def) return -1;
            PyTuple_SET_ITEM(record, i, def);
        }
    }
    if (count && !(c->client_flag & CLIENT_DEPRECATE_EOF)) {
        if (mc_read_packet(c, &p, &n) < 0) return -1;
        if (!mc_is_eof_packet(p, n)) { mc_conn_malformed(c, "missing EOF in COM_STMT_PREPARE response"); return -1; }
    }
    return 0;
}

/* The COM_STMT_PREPARE response: COM_STMT_PREPARE_OK, the parameter definitions and the
   column definitions (each followed by an EOF without DEPRECATE_EOF), or ERR.  The whole
   response is waited for before it is parsed.  0 with *stmt_id, *nparams, *ncols (the
   column definitions recorded for MariaDB's metadata cache), MC_NEED (no transport,
   nothing consumed), or -1. */
int mc_read_prepare_response(mc_conn *c, uint32_t *stmt_id_out, unsigned *nparams_out,
                             unsigned *ncols_out) {
    const unsigned char *p;
    size_t n;
    mc_reader r;
    uint8_t status, filler;
    uint32_t stmt_id;
    uint16_t ncols, nparams, warnings = 0;
    int pk = mc_frame_peek(c, &p, &n);
    if (pk < 0) return pk;
    if (pk == 1 && n >= 9 && p[0] == 0x00) {
        size_t count = 1;
        unsigned nc = (unsigned)p[5] | ((unsigned)p[6] << 8), np = (unsigned)p[7] | ((unsigned)p[8] << 8);
        int eofs = !(c->client_flag & CLIENT_DEPRECATE_EOF);
        count += np + (np && eofs) + nc + (nc && eofs);
        int w = mc_frame_wait(c, count);
        if (w != 0) return w;
    }
    if (mc_read_packet(c, &p, &n) < 0) return -1;
    if (n && p[0] == 0xFF) { mc_raise_err_packet(c, p, n); return -1; }
    mc_reader_init(&r, p, n);
    if (mc_reader_u8(&r, &status) < 0 || status != 0 || mc_reader_u32(&r, &stmt_id) < 0 ||
        mc_reader_u16(&r, &ncols) < 0 || mc_reader_u16(&r, &nparams) < 0 ||
        mc_reader_u8(&r, &filler) < 0) {
        mc_conn_malformed(c, "bad COM_STMT_PREPARE_OK");
        return -1;
    }
    if (mc_reader_u16(&r, &warnings) == 0) c->warning_count = warnings;
    if (mc_skip_column_defs(c, nparams, NULL) < 0) return -1;
    PyObject *record = NULL;
    if (ncols && (c->ext_caps & MARIADB_CLIENT_CACHE_METADATA)) {
        if (!c->meta_cache && !(c->meta_cache = PyDict_New())) return -1;
        record = PyTuple_New(ncols);
        if (!record) return -1;
    }
    if (mc_skip_column_defs(c, ncols, record) < 0) { Py_XDECREF(record); return -1; }
    if (record) {
        PyObject *key = PyLong_FromUnsignedLong(stmt_id);
        int rc = key ? PyDict_SetItem(c->meta_cache, key, record) : -1;
        Py_XDECREF(key);
        Py_DECREF(record);
        if (rc < 0) return -1;
    }
    *stmt_id_out = stmt_id;
    *nparams_out = nparams;
    *ncols_out = ncols;
    return 0;
}

/* COM_STMT_PREPARE of `sql` and its response: 0 with *stmt_id, *nparams, *ncols, or -1.
   (The method stmt_prepare(): prepared_methods.c.) */
int mc_stmt_prepare(mc_conn *c, const unsigned char *sql, size_t n, uint32_t *stmt_id,
                    unsigned *nparams, unsigned *ncols) {
    if (mc_check_idle(c) < 0) return -1;
    if (mc_check_packet(c, 1 + n, "the statement (COM_STMT_PREPARE)") < 0) return -1;
    if (mc_conn_command(c, COM_STMT_PREPARE, sql, n) < 0) return -1;
    return mc_read_prepare_response(c, stmt_id, nparams, ncols) < 0 ? -1 : 0;
}

/* COM_STMT_EXECUTE of statement `stmt_id` with the parameters `seq` (a PySequence_Fast),
   encoded with `encoding` (a Python codec; NULL: utf-8), and the query attributes `attrs`
   (a tuple of (name, value), or NULL).  `types` is the previous execute's parameter types
   (bytes, or None) so that they are re-sent only when they change; *newtypes receives
   the types sent (a new reference, or NULL; also set on error).  Parameters whose
   str/bytes value is longer than `threshold` (> 0) are sent first with
   COM_STMT_SEND_LONG_DATA; `cursor` opens a read-only server-side cursor.  Returns the
   field count of the response, with `send_only` (pipelining: the command written, its
   response queued) the response's sequence id; -1 on error.  (The method
   stmt_execute(): prepared_methods.c.) */
Py_ssize_t mc_stmt_execute(mc_conn *c, unsigned long stmt_id, PyObject *seq, PyObject *types,
                           int cursor, Py_ssize_t threshold, const char *encoding,
                           PyObject *attrs, int send_only, PyObject **newtypes_out) {
    Py_ssize_t ret = -1;
    PyObject *newtypes = NULL;
    int named = (c->client_flag & CLIENT_QUERY_ATTRIBUTES) != 0;
    char *long_mask = NULL;
    Py_ssize_t np = PySequence_Fast_GET_SIZE(seq);
    *newtypes_out = NULL;
    if (send_only ? mc_pipe_send_ready(c) < 0 : mc_check_idle(c) < 0) goto done;
    if (attrs && !named && mc_no_query_attributes(c) < 0) goto done;
    /* which values go as long data: str/bytes longer than the threshold */
    if (threshold > 0) {
        for (Py_ssize_t i = 0; i < np; i++) {
            PyObject *v = PySequence_Fast_GET_ITEM(seq, i);
            if (!(PyBytes_Check(v) || PyByteArray_Check(v) || PyUnicode_Check(v))) continue;
            Py_ssize_t len = PyUnicode_Check(v) ? PyUnicode_GET_LENGTH(v) : PyObject_Length(v);
            if (len <= threshold) continue;
            /* the server joins the chunks and refuses a value of more than
               max_allowed_packet bytes, at execute time, and then keeps refusing the
               statement: check all values before the first chunk is sent */
            size_t blen = (size_t)len;
            if (PyUnicode_Check(v)) {
                if (!encoding || !strcmp(encoding, "utf-8") || !strcmp(encoding, "utf8")) {
                    Py_ssize_t l;
                    if (!PyUnicode_AsUTF8AndSize(v, &l)) goto done;
                    blen = (size_t)l;
                } else {
                    PyObject *eb = PyUnicode_AsEncodedString(v, encoding, "strict");
                    if (!eb) goto done;
                    blen = (size_t)PyBytes_GET_SIZE(eb);
                    Py_DECREF(eb);
                }
            }
            size_t limit = mc_packet_limit(c, blen);
            if (limit == 0) goto done;
            if (blen > limit) {
                mc_raise(c->st->OperationalError, CR_NET_PACKET_TOO_LARGE,
                         "Got packet bigger than 'max_allowed_packet' bytes: parameter %zd "
                         "(sent as COM_STMT_SEND_LONG_DATA) is %zu bytes, the server's "
                         "max_allowed_packet is %zu (nothing was sent; the connection is "
                         "still usable)", i + 1, blen, limit);
                goto done;
            }
            if (!long_mask) {
                long_mask = PyMem_Calloc((size_t)np, 1);
                if (!long_mask) { PyErr_NoMemory(); goto done; }
            }
            long_mask[i] = 1;
        }
    }
    /* the COM_STMT_EXECUTE packet, encoded (and checked against max_allowed_packet)
       before any long data is sent: a refused execute leaves no long data behind */
    mc_writer *w = &c->wbuf;
    w->len = 0;
    if (mc_writer_u32(w, (uint32_t)stmt_id) < 0 ||
        mc_writer_u8(w, (cursor ? CURSOR_TYPE_READ_ONLY : 0) |
                        (named ? PARAMETER_COUNT_AVAILABLE : 0)) < 0 ||
        mc_writer_u32(w, 1) < 0)
        goto done;
    if (named) {   /* parameter_count, then parameters and attributes with names */
        Py_ssize_t na = attrs ? PySequence_Fast_GET_SIZE(attrs) : 0;
        if (mc_writer_lenenc(w, (uint64_t)(np + na)) < 0 ||
            mc_encode_named_params(c->st, w, seq, long_mask, attrs, encoding) < 0)
            goto done;
    } else if (np > 0) {
        newtypes = types == Py_None ? NULL : Py_NewRef(types);
        if (mc_encode_binary_params(c->st, w, seq, encoding, &newtypes, long_mask) < 0) goto done;
    }
    if (mc_check_packet(c, 1 + w->len, "the parameters of COM_STMT_EXECUTE") < 0) goto done;
    /* long data: each COM_STMT_SEND_LONG_DATA is its own command, with no reply; its
       chunks are smaller than max_allowed_packet (the server joins them) */
    for (Py_ssize_t i = 0; long_mask && i < np; i++) {
        if (!long_mask[i]) continue;
        PyObject *v = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *b = NULL;
        Py_buffer view;
        if (PyUnicode_Check(v)) {
            b = PyUnicode_AsEncodedString(v, encoding ? encoding : "utf-8", "strict");
            if (!b) goto done;
            if (PyObject_GetBuffer(b, &view, PyBUF_SIMPLE) < 0) { Py_DECREF(b); goto done; }
        } else if (PyObject_GetBuffer(v, &view, PyBUF_SIMPLE) < 0) {
            goto done;
        }
        size_t off = 0, total = (size_t)view.len, step = 8u << 20;
        size_t limit = mc_packet_limit(c, 7 + (total < step ? total : step));
        if (limit == 0) { PyBuffer_Release(&view); Py_XDECREF(b); goto done; }
        if (limit != SIZE_MAX && limit - 8 < step) step = limit - 8;   /* 7 + step < limit */
        int rc = 0;
        do {
            size_t k = total - off > step ? step : total - off;
            unsigned char hdr[6];
            for (int q = 0; q < 4; q++) hdr[q] = (unsigned char)(stmt_id >> (8 * q));
            hdr[4] = (unsigned char)i;
            hdr[5] = (unsigned char)(i >> 8);
            c->seq = 0;
            c->cseq = 0;
            unsigned char cmd[7] = {COM_STMT_SEND_LONG_DATA};
            memcpy(cmd + 1, hdr, 6);
            rc = mc_conn_send(c, cmd, 7, (const unsigned char *)view.buf + off, k);
            if (rc == 0) rc = mc_conn_flush(c);   /* one chunk buffered at a time */
            off += k;
        } while (rc == 0 && off < total);
        PyBuffer_Release(&view);
        Py_XDECREF(b);
        if (rc < 0) goto done;
    }
    c->binary = 1;
    c->cursor_wanted = cursor;
    c->cursor_stmt = (uint32_t)stmt_id;
    if (mc_conn_command(c, COM_STMT_EXECUTE, w->buf, w->len) < 0) goto done;
    if (send_only) {   /* pipelined: the response is read later with read_response() */
        ret = mc_pipe_sent(c, 1, (uint32_t)stmt_id);
        goto done;
    }
    ret = mc_read_query_response(c);
done:
    *newtypes_out = newtypes;
    PyMem_Free(long_mask);
    return ret < 0 ? -1 : ret;
}

/* The COM_STMT_PREPARE response of a one-trip prepare, whose command was followed by a
   command on statement id 0xffffffff: 0 with the statement, or -1.  When the prepare
   failed, its error is raised after the following command's ERR (the server refuses an
   unknown statement) was read and dropped; when that read fails (the connection went),
   its error is raised instead.  `second` is the sequence id the second command's response
   starts with: the one after its last packet (2 or more for a command of several 16 MiB
   packets); on success c->seq is set to it for the caller's read of that response. */
static int one_trip_prepare_response(mc_conn *c, uint32_t *stmt_id, unsigned *nparams,
                                     unsigned *ncols, uint8_t second) {
    const unsigned char *p;
    size_t n;
    c->seq = 1;   /* the prepare's response follows its one-packet command */
    int pk = mc_frame_peek(c, &p, &n);
    if (pk < 0) return -1;
    if (pk == 1 && n && p[0] == 0xFF) {
        if (mc_read_packet(c, &p, &n) < 0) return -1;
        mc_raise_err_packet(c, p, n);
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        c->seq = second;   /* the second command's response follows its last packet */
        if (mc_read_packet(c, &p, &n) < 0) {   /* the connection went: that error wins */
            Py_XDECREF(et); Py_XDECREF(ev); Py_XDECREF(tb);
            return -1;
        }
        if (n == 0 || p[0] != 0xFF) {
            Py_XDECREF(et); Py_XDECREF(ev); Py_XDECREF(tb);
            mc_conn_malformed(c, "no ERR for the command after a failed one-trip COM_STMT_PREPARE");
            return -1;
        }
        PyErr_Restore(et, ev, tb);
        return -1;
    }
    if (mc_read_prepare_response(c, stmt_id, nparams, ncols) < 0) return -1;
    c->seq = second;
    return 0;
}

/* The pending exception as a value (normalized, with its traceback); NULL if none. */
PyObject *mc_fetch_exception(void) {
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyErr_NormalizeException(&et, &ev, &tb);
    if (tb && ev) PyException_SetTraceback(ev, tb);
    Py_XDECREF(et);
    Py_XDECREF(tb);
    return ev;
}

/* 0 when the server takes MariaDB's one-trip prepare (statement id 0xffffffff) on this
   connection, else -1 with NotSupportedError (compressed: the two commands would share
   the compressed sequence). */
int mc_one_trip_supported(mc_conn *c) {
    if ((c->ext_caps & MARIADB_CLIENT_STMT_BULK_OPERATIONS) && !c->compress) return 0;
    mc_raise(c->st->NotSupportedError, 0, c->compress ?
             "no one-trip prepare on a compressed connection" :
             "the server has no one-trip prepare (MariaDB's statement id -1)");
    return -1;
}

/* MariaDB's one-trip prepare (the caller checked mc_one_trip_supported): COM_STMT_PREPARE
   of `sql` and a COM_STMT_EXECUTE of statement id 0xffffffff ("the statement prepared
   last") with the parameters `seq` (a PySequence_Fast, encoded with `encoding`) go in one
   write, and both responses are read in order.  The caller gives exactly the statement's
   parameters; a server count that differs closes the connection.  Returns 0 with
   *stmt_id, *nparams, *ncols, the field count *nc and the parameter types *newtypes (a
   new reference or NULL, also set on error); 1 when the statement was prepared and the
   execute failed, with *error its exception (a new reference; nothing pending); -1 with
   the exception (when the prepare failed, after the execute's error that follows it was
   read and dropped).  No long data, no server-side cursor, no query attributes.  (The
   method stmt_prepare_execute(): prepared_methods.c.) */
int mc_stmt_prepare_execute(mc_conn *c, const unsigned char *sql, size_t n, PyObject *seq,
                            const char *encoding, uint32_t *stmt_id, unsigned *nparams,
                            unsigned *ncols, Py_ssize_t *nc, PyObject **newtypes,
                            PyObject **error) {
    Py_ssize_t np = PySequence_Fast_GET_SIZE(seq);
    *newtypes = NULL;
    *error = NULL;
    if (mc_check_idle(c) < 0) return -1;
    if (mc_check_packet(c, 1 + n, "the statement (COM_STMT_PREPARE)") < 0) return -1;
    mc_writer *w = &c->wbuf;
    w->len = 0;
    if (mc_writer_u32(w, 0xffffffffu) < 0 || mc_writer_u8(w, 0) < 0 || mc_writer_u32(w, 1) < 0)
        return -1;
    if (np > 0 && mc_encode_binary_params(c->st, w, seq, encoding, newtypes, NULL) < 0) return -1;
    if (mc_check_packet(c, 1 + w->len, "the parameters of COM_STMT_EXECUTE") < 0) return -1;
    /* both commands buffered, sent by the first read */
    if (mc_conn_command(c, COM_STMT_PREPARE, sql, n) < 0) return -1;
    c->binary = 1;
    c->cursor_wanted = 0;
    if (mc_conn_command(c, COM_STMT_EXECUTE, w->buf, w->len) < 0) return -1;
    if (one_trip_prepare_response(c, stmt_id, nparams, ncols, c->seq) < 0) return -1;
    if ((Py_ssize_t)*nparams != np) {
        mc_conn_malformed(c, "the statement has a different number of parameters than the "
                             "one-trip COM_STMT_EXECUTE sent");
        return -1;
    }
    c->cursor_stmt = *stmt_id;
    *nc = mc_read_query_response(c);   /* (c->seq: after the execute's last packet) */
    if (*nc < 0) {
        *error = mc_fetch_exception();
        return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- query attributes */

/* NotSupportedError: query attributes were given but the server did not offer
   CLIENT_QUERY_ATTRIBUTES (MariaDB, MySQL before 8.0.23).  Nothing was sent.  -1. */
int mc_no_query_attributes(mc_conn *c) {
    mc_conn_client_error(c, c->st->NotSupportedError, 0,
                         "query attributes need a server with CLIENT_QUERY_ATTRIBUTES "
                         "(MySQL 8.0.23 or later); this server (%U) does not offer it, so "
                         "nothing was sent", c->server_version ? c->server_version : Py_None);
    return -1;
}

/* COM_QUERY for `sql`: with CLIENT_QUERY_ATTRIBUTES the payload starts with
   parameter_count = 0 and parameter_set_count = 1 (MySQL docs "COM_QUERY").  0 or -1. */
int mc_send_query(mc_conn *c, const unsigned char *sql, size_t n) {
    if (!(c->client_flag & CLIENT_QUERY_ATTRIBUTES))
        return mc_conn_command(c, COM_QUERY, sql, n);
    static const unsigned char head[3] = {COM_QUERY, 0, 1};
    return mc_conn_command_head(c, head, 3, sql, n);
}

/* COM_QUERY of `sql` with the query attributes `attrs` (a tuple of (name, value), name
   str or bytes, value of a type stmt_execute() takes; str values encoded with `encoding`,
   a Python codec): the attribute block is encoded into c->wbuf and sent with the query
   behind it, in one packet.  The field count, or -1 (NotSupportedError without
   CLIENT_QUERY_ATTRIBUTES, nothing sent).  (The method query_attributes():
   prepared_methods.c.) */
Py_ssize_t mc_query_with_attributes(mc_conn *c, const unsigned char *sql, size_t n,
                                    PyObject *attrs, const char *encoding) {
    if (mc_check_idle(c) < 0) return -1;
    if (!(c->client_flag & CLIENT_QUERY_ATTRIBUTES)) return mc_no_query_attributes(c);
    mc_writer *w = &c->wbuf;
    w->len = 0;
    Py_ssize_t na = PySequence_Fast_GET_SIZE(attrs);
    if (mc_writer_u8(w, COM_QUERY) < 0 || mc_writer_lenenc(w, (uint64_t)na) < 0 ||
        mc_writer_lenenc(w, 1) < 0 ||
        mc_encode_named_params(c->st, w, NULL, NULL, attrs, encoding) < 0)
        return -1;
    if (mc_check_packet(c, w->len + n, "the statement (COM_QUERY)") < 0) return -1;
    if (mc_infile_limit_prepare(c, sql, n) < 0) return -1;
    c->binary = 0;
    c->cursor_wanted = 0;
    if (mc_conn_command_head(c, w->buf, w->len, sql, n) < 0) return -1;
    Py_ssize_t nc = mc_read_query_response(c);
    return nc < 0 ? -1 : nc;
}

/* ---------------------------------------------------------------- COM_STMT_BULK_EXECUTE */

/* MariaDB's COM_STMT_BULK_EXECUTE (the method stmt_bulk_execute(): prepared_methods.c):
   all rows of parameters in as few commands as fit max_payload (one round trip each).
   A command carries one type per column (STMT_BULK_FLAG_SEND_TYPES_TO_SERVER), so the
   values of a column are given one type per command (see bulk_join): NULL goes with
   anything; bool/int mixes travel as the widest integer (or as DECIMAL digits when signed
   and unsigned 64-bit values or ints beyond 64 bits meet); ints with Decimals as DECIMAL
   text; floats with ints of at most 2**53 in magnitude as DOUBLE;
   str/bytes/datetime/date/time/timedelta mixes as strings written as the text protocol's
   literals write them.  Any other mix (a float with a Decimal, a number with a string)
   starts a new command at the row where the types change.  mc_bulk_plan encodes every
   row (nothing sent), mc_bulk_send sends the commands; a server error stops at the
   failing command, the commands before it were applied. */

/* Append v to a growable array of size_t; 0, or -1 with MemoryError. */
static int push_bound(size_t **a, size_t *n, size_t *cap, size_t v) {
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        size_t *na = PyMem_Realloc(*a, ncap * sizeof(size_t));
        if (!na) { PyErr_NoMemory(); return -1; }
        *a = na;
        *cap = ncap;
    }
    (*a)[(*n)++] = v;
    return 0;
}

/* What a parameter value is for COM_STMT_BULK_EXECUTE: its own binary type (BK_TINY ..
   BK_TIME), or (BK_NUMDEC, BK_TEXT) the type a column of mixed values is sent as. */
enum {
    BK_NULL = 0, BK_TINY, BK_LLS /* int, |v| <= 2**53 */, BK_LL /* other signed 64-bit */,
    BK_ULL /* 2**63 .. 2**64-1 */, BK_NUMDEC /* DECIMAL text: ints beyond 64 bits, mixes */,
    BK_DOUBLE, BK_DEC /* decimal.Decimal */, BK_STR, BK_BLOB, BK_DT, BK_DATE, BK_TIME,
    BK_TEXT /* a string-like mix, as text */, BK_OTHER = 0xFE, BK_CONFLICT = 0xFF
};

static int bk_intlike(unsigned k) { return k == BK_TINY || k == BK_LLS || k == BK_LL || k == BK_ULL || k == BK_NUMDEC; }
static int bk_strlike(unsigned k) { return k >= BK_STR && k <= BK_TEXT; }

/* The type a column whose values so far are of kind a takes with a value of kind b. */
static unsigned bulk_join(unsigned a, unsigned b) {
    if (a == b || b == BK_NULL) return a;
    if (a == BK_NULL) return b;
    if ((bk_intlike(a) || a == BK_DEC) && (bk_intlike(b) || b == BK_DEC)) {
        if (a == BK_NUMDEC || b == BK_NUMDEC || a == BK_DEC || b == BK_DEC) return BK_NUMDEC;
        if (a == BK_ULL || b == BK_ULL)   /* with a bool: unsigned; with a signed int: digits */
            return (a == BK_TINY || b == BK_TINY) ? BK_ULL : BK_NUMDEC;
        return a > b ? a : b;             /* TINY < LLS < LL */
    }
    if ((a == BK_DOUBLE && (b == BK_TINY || b == BK_LLS)) ||
        (b == BK_DOUBLE && (a == BK_TINY || a == BK_LLS)))
        return BK_DOUBLE;                 /* these ints are exact doubles */
    if (bk_strlike(a) && bk_strlike(b)) return BK_TEXT;
    return BK_CONFLICT;
}

/* The kind a column takes for a value of kind k: with `exact` (a text cursor: the values
   stored must be the text path's) temporal values and bytes go as text, as the text
   literal writes them (VAR_STRING, converted by the server as a string literal is:
   their own temporal or BLOB types convert otherwise into other column types, e.g. a
   datetime into a BIGINT, a timedelta into a VARCHAR, bytes into a latin1 CHAR). */
static unsigned bulk_column_kind(unsigned k, int exact) {
    if (exact && (k == BK_DT || k == BK_DATE || k == BK_TIME || k == BK_BLOB)) return BK_TEXT;
    return k;
}

/* wire type and unsigned flag of a column sent as kind k */
static void bulk_wire_type(unsigned k, unsigned char *t, unsigned char *flag) {
    static const unsigned char map[] = {
        [BK_NULL] = MC_TYPE_VAR_STRING, [BK_TINY] = MC_TYPE_TINY, [BK_LLS] = MC_TYPE_LONGLONG,
        [BK_LL] = MC_TYPE_LONGLONG, [BK_ULL] = MC_TYPE_LONGLONG, [BK_NUMDEC] = MC_TYPE_NEWDECIMAL,
        [BK_DOUBLE] = MC_TYPE_DOUBLE, [BK_DEC] = MC_TYPE_NEWDECIMAL, [BK_STR] = MC_TYPE_VAR_STRING,
        [BK_BLOB] = MC_TYPE_BLOB, [BK_DT] = MC_TYPE_DATETIME, [BK_DATE] = MC_TYPE_DATE,
        [BK_TIME] = MC_TYPE_TIME, [BK_TEXT] = MC_TYPE_VAR_STRING};
    *t = map[k];
    *flag = k == BK_ULL ? 0x80 : 0;
}

/* The kind of value v (after mc_binary_param); BK_OTHER for a type without binary form. */
static unsigned bulk_kind(mc_state *st, PyObject *v) {
    if (v == Py_None) return BK_NULL;
    if (PyBool_Check(v)) return BK_TINY;
    if (PyLong_Check(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (x == -1 && PyErr_Occurred()) { PyErr_Clear(); return BK_NUMDEC; }
        if (overflow == 0)
            return (x <= (1LL << 53) && x >= -(1LL << 53)) ? BK_LLS : BK_LL;
        if (overflow > 0) {
            unsigned long long u = PyLong_AsUnsignedLongLong(v);
            if (u == (unsigned long long)-1 && PyErr_Occurred()) { PyErr_Clear(); return BK_NUMDEC; }
            return BK_ULL;
        }
        return BK_NUMDEC;
    }
    if (PyFloat_Check(v)) return BK_DOUBLE;
    if (PyUnicode_Check(v)) return BK_STR;
    if (PyBytes_Check(v) || PyByteArray_Check(v) || PyMemoryView_Check(v)) return BK_BLOB;
    if (PyDateTime_Check(v)) return BK_DT;
    if (PyDate_Check(v)) return BK_DATE;
    if (PyTime_Check(v) || PyDelta_Check(v)) return BK_TIME;
    if (st->Decimal) {
        int r = PyObject_IsInstance(v, st->Decimal);
        if (r < 0) { PyErr_Clear(); return BK_OTHER; }
        if (r) return BK_DEC;
    }
    return BK_OTHER;
}

/* Write v (of kind k, not NULL) as a value of a column sent as kind `as`; the cases where
   the value's own binary form is not the column's (the joins of bulk_join).  0 or -1. */
static int bulk_encode_as(mc_writer *w, PyObject *v, unsigned k, unsigned as) {
    if (as == BK_LLS || as == BK_LL || as == BK_ULL || as == BK_DOUBLE) {
        /* from a bool (k == BK_TINY) or, for DOUBLE, an int within 2**53 */
        uint64_t bits;
        if (as == BK_DOUBLE) {
            double d = k == BK_TINY ? (v == Py_True ? 1.0 : 0.0) : (double)PyLong_AsLongLong(v);
            if (PyErr_Occurred()) return -1;
            memcpy(&bits, &d, 8);
        } else {
            bits = v == Py_True ? 1 : 0;
        }
        unsigned char b[8];
        for (int i = 0; i < 8; i++) b[i] = (unsigned char)(bits >> (8 * i));
        return mc_writer_put(w, b, 8);
    }
    char buf[MC_TEMPORAL_CHARS];
    Py_ssize_t n;
    if (as == BK_NUMDEC) {   /* an int (or bool) as its decimal digits, as the text literal */
        if (k == BK_TINY) return mc_writer_lenenc_str(w, v == Py_True ? "1" : "0", 1);
        PyObject *s = PyLong_Type.tp_repr(v);
        if (!s) return -1;
        Py_ssize_t l;
        const char *u = PyUnicode_AsUTF8AndSize(s, &l);
        int r = u ? mc_writer_lenenc_str(w, u, (size_t)l) : -1;
        Py_DECREF(s);
        return r;
    }
    /* as == BK_TEXT: a temporal value as the text protocol's literal writes it */
    n = mc_enc_temporal_chars(buf, v);
    if (n <= 0) {
        if (n == 0) PyErr_SetString(PyExc_SystemError, "bulk: no text form for a value");
        return -1;
    }
    return mc_writer_lenenc_str(w, buf, (size_t)n);
}

/* Plan the commands for `rows` (a sequence of parameter sequences) and encode their
   values (with `encoding`, a Python codec) into bk, sending nothing.  `prepare` is None or
   the statement's SQL (bytes; checked here) for a one-trip prepare.  Returns
   MC_BULK_READY (send with mc_bulk_send), MC_BULK_EMPTY (no rows), MC_BULK_NOT_BINARY
   (no parameters or more than 65535, or with `exact` a value without binary form: the
   text path writes it or reports it), MC_BULK_UNSUPPORTED (the server lacks the
   capability), or -1 (ProgrammingError for a row with another parameter count).  bk is
   freed with mc_bulk_free whatever the result. */
int mc_bulk_plan(mc_conn *c, mc_bulk *bk, PyObject *rows, PyObject *prepare,
                 Py_ssize_t max_payload, const char *encoding, int exact) {
    memset(bk, 0, sizeof(*bk));
    if (!(c->ext_caps & MARIADB_CLIENT_STMT_BULK_OPERATIONS)) return MC_BULK_UNSUPPORTED;
    if (prepare != Py_None && (!PyBytes_Check(prepare) || c->compress)) {
        if (!PyBytes_Check(prepare))
            mc_raise(c->st->ProgrammingError, 0, "prepare must be bytes or None");
        else
            mc_raise(c->st->NotSupportedError, 0, "no one-trip prepare on a compressed connection");
        return -1;
    }
    if (!PyDateTimeAPI) {
        PyDateTime_IMPORT;
        if (!PyDateTimeAPI) return -1;
    }
    PyObject *seq = PySequence_Fast(rows, "rows must be a sequence");
    if (!seq) return -1;
    bk->seq = seq;
    Py_ssize_t nrows = PySequence_Fast_GET_SIZE(seq);
    int ret = -1;
    PyObject *first = NULL;
    unsigned char *kinds = NULL;        /* nrows * np: each value's kind */
    unsigned char *btypes = NULL;       /* nbatches * np: each batch's column kinds */
    size_t *bstart = NULL, nb = 0, capb = 0;       /* first row of each batch */
    mc_writer w = {0};
    /* byte offsets in w where each command ends, and the batch of each command */
    size_t *bounds = NULL, nbounds = 0, capbounds = 0;
    size_t *bbatch = NULL, nbbatch = 0, capbbatch = 0;
    unsigned char *wire = NULL;
    if (nrows == 0) { ret = MC_BULK_EMPTY; goto out; }
    first = PySequence_Fast(PySequence_Fast_GET_ITEM(seq, 0), "each row must be a sequence");
    if (!first) goto out;
    Py_ssize_t np = PySequence_Fast_GET_SIZE(first);
    if (np == 0 || np > 65535) { ret = MC_BULK_NOT_BINARY; goto out; }
    if ((size_t)nrows > ((size_t)-1) / (size_t)np) { PyErr_NoMemory(); goto out; }
    kinds = PyMem_Malloc((size_t)nrows * (size_t)np);
    wire = PyMem_Malloc(2 * (size_t)np);
    if (!kinds || !wire) { PyErr_NoMemory(); goto out; }
    PyObject *dec = c->st->Decimal;
    size_t header = 1 + 4 + 2 + 2 * (size_t)np;

    /* pass 1: each value's kind; a batch (one type per column) ends before the row whose
       value cannot join its column's type */
    size_t capbt = 0;
    for (Py_ssize_t r = 0; r < nrows; r++) {
        if ((r & 1023) == 1023 && PyErr_CheckSignals() < 0) goto out;
        PyObject *row = PySequence_Fast(PySequence_Fast_GET_ITEM(seq, r), "each row must be a sequence");
        if (!row) goto out;
        if (PySequence_Fast_GET_SIZE(row) != np) {
            Py_DECREF(row);
            mc_raise(c->st->ProgrammingError, 0, "row %zd has %zd parameters, expected %zd",
                     r, PySequence_Fast_GET_SIZE(row), np);
            goto out;
        }
        unsigned char *rk = kinds + (size_t)r * (size_t)np;
        for (Py_ssize_t i = 0; i < np; i++) {
            PyObject *v = mc_binary_param(c->st, PySequence_Fast_GET_ITEM(row, i));
            if (!v) { Py_DECREF(row); goto out; }
            unsigned k = bulk_kind(c->st, v);
            if (k == BK_OTHER) {
                /* the binary encoder's own error for it (nothing is sent) */
                mc_writer tmp = {0};
                unsigned char t, tf;
                if (mc_writer_init(&tmp, 64) == 0 &&
                    mc_binary_encode_value(c->st, &tmp, v, i, encoding, dec, &t, &tf) == 0)
                    mc_raise(c->st->ProgrammingError, 0,
                             "parameter %zd: unsupported type %s for a prepared statement",
                             i + 1, Py_TYPE(v)->tp_name);
                mc_writer_free(&tmp);
                Py_DECREF(v);
                Py_DECREF(row);
                if (exact && PyErr_ExceptionMatches(c->st->ProgrammingError)) {
                    PyErr_Clear();
                    ret = MC_BULK_NOT_BINARY;
                }
                goto out;
            }
            Py_DECREF(v);
            rk[i] = (unsigned char)k;
        }
        Py_DECREF(row);
        int conflict = nb == 0;
        unsigned char *cur = nb ? btypes + (nb - 1) * (size_t)np : NULL;
        for (Py_ssize_t i = 0; !conflict && i < np; i++)
            if (bulk_join(cur[i], rk[i]) == BK_CONFLICT) conflict = 1;
        if (conflict) {   /* this row starts a batch */
            if (push_bound(&bstart, &nb, &capb, (size_t)r) < 0) goto out;
            if (nb > capbt) {
                size_t ncap = capbt ? capbt * 2 : 4;
                unsigned char *nbt = PyMem_Realloc(btypes, ncap * (size_t)np);
                if (!nbt) { PyErr_NoMemory(); goto out; }
                btypes = nbt;
                capbt = ncap;
            }
            unsigned char *bt = btypes + (nb - 1) * (size_t)np;
            for (Py_ssize_t i = 0; i < np; i++)
                bt[i] = (unsigned char)bulk_column_kind(rk[i], exact);
        } else {
            for (Py_ssize_t i = 0; i < np; i++)
                cur[i] = (unsigned char)bulk_column_kind(bulk_join(cur[i], rk[i]), exact);
        }
    }

    /* a text cursor's rows whose column types change often (an int then a str, a float
       then a Decimal, alternating): each run of one type is a command and a round trip
       of its own, so past MC_BULK_MAX_RUNS runs the text path does better (one
       multi-row INSERT or one multi-statement query per max_allowed_packet, the text
       literals' values): nothing is sent here */
    if (exact && nb > MC_BULK_MAX_RUNS) { ret = MC_BULK_NOT_BINARY; goto out; }

    /* pass 2: the values as their batch's column types; a command ends at a batch's end
       or where max_payload would be passed */
    if (mc_writer_init(&w, 4096) < 0) goto out;
    for (size_t b = 0; b < nb; b++) {
        size_t r0 = bstart[b], r1 = b + 1 < nb ? bstart[b + 1] : (size_t)nrows;
        const unsigned char *bt = btypes + b * (size_t)np;
        size_t cmd_start = w.len, cmd_first_row = r0;
        for (size_t r = r0; r < r1; r++) {
            if ((r & 1023) == 1023 && PyErr_CheckSignals() < 0) goto out;
            PyObject *row = PySequence_Fast(PySequence_Fast_GET_ITEM(seq, (Py_ssize_t)r), "each row must be a sequence");
            if (!row) goto out;
            if (PySequence_Fast_GET_SIZE(row) != np) {   /* the sequence changed under us */
                Py_DECREF(row);
                mc_raise(c->st->ProgrammingError, 0, "row %zd changed length", (Py_ssize_t)r);
                goto out;
            }
            size_t row_start = w.len;
            const unsigned char *rk = kinds + r * (size_t)np;
            for (Py_ssize_t i = 0; i < np; i++) {
                PyObject *v = mc_binary_param(c->st, PySequence_Fast_GET_ITEM(row, i));
                if (!v) { Py_DECREF(row); goto out; }
                unsigned k = bulk_kind(c->st, v), as = bt[i];
                int rc;
                if (k != rk[i]) {
                    Py_DECREF(v);
                    Py_DECREF(row);
                    mc_raise(c->st->ProgrammingError, 0, "parameter %zd of row %zd changed type",
                             i + 1, (Py_ssize_t)r);
                    goto out;
                }
                if (k == BK_NULL) {
                    rc = mc_writer_u8(&w, 1);
                } else if (mc_writer_u8(&w, 0) < 0) {
                    rc = -1;
                } else if (k == as || (as == BK_LL && k == BK_LLS) ||
                           (as == BK_NUMDEC && k == BK_DEC) ||
                           (as == BK_TEXT && (k == BK_STR || k == BK_BLOB))) {
                    /* the value's own binary form is the column's */
                    unsigned char t, tf;
                    rc = mc_binary_encode_value(c->st, &w, v, i, encoding, dec, &t, &tf);
                } else {
                    rc = bulk_encode_as(&w, v, k, as);
                }
                Py_DECREF(v);
                if (rc < 0) {
                    Py_DECREF(row);
                    if (exact && PyErr_ExceptionMatches(c->st->ProgrammingError)) {
                        /* nan/inf, a non-finite Decimal: the text path reports it */
                        PyErr_Clear();
                        ret = MC_BULK_NOT_BINARY;
                    }
                    goto out;
                }
            }
            Py_DECREF(row);
            if (r > cmd_first_row && header + (w.len - cmd_start) > (size_t)max_payload) {
                /* this row starts the next command of the batch */
                if (push_bound(&bounds, &nbounds, &capbounds, row_start) < 0 ||
                    push_bound(&bbatch, &nbbatch, &capbbatch, b) < 0) goto out;
                cmd_start = row_start;
                cmd_first_row = r;
            }
        }
        if (push_bound(&bounds, &nbounds, &capbounds, w.len) < 0 ||
            push_bound(&bbatch, &nbbatch, &capbbatch, b) < 0) goto out;
    }
    ret = MC_BULK_READY;
out:   /* what mc_bulk_send needs, and what mc_bulk_free frees */
    bk->first = first;
    bk->np = first && ret >= 0 ? PySequence_Fast_GET_SIZE(first) : 0;
    bk->kinds = kinds;
    bk->btypes = btypes;
    bk->bstart = bstart;
    bk->nb = nb;
    bk->w = w;
    bk->bounds = bounds;
    bk->nbounds = nbounds;
    bk->bbatch = bbatch;
    bk->wire = wire;
    bk->header = first && ret >= 0 ? 1 + 4 + 2 + 2 * (size_t)bk->np : 0;
    return ret;
}

/* Send the commands mc_bulk_plan made ready, on statement `stmt_id`; with `prep` (the
   statement's SQL, n bytes) a one-trip COM_STMT_PREPARE goes before the first command,
   which then runs on statement id 0xffffffff.  Every command is checked against
   max_allowed_packet before the first is sent.  0 with bk->total (also
   c->affected_rows), or -1; bk->prepared (with bk->new_id, new_np, new_nc) says whether
   the one-trip prepare succeeded, also when a later command failed. */
int mc_bulk_send(mc_conn *c, mc_bulk *bk, unsigned long stmt_id, const unsigned char *prep,
                 size_t prep_len) {
    Py_ssize_t np = bk->np;
    const unsigned char *btypes = bk->btypes;
    unsigned char *wire = bk->wire;
    const size_t *bounds = bk->bounds, *bbatch = bk->bbatch;
    size_t nbounds = bk->nbounds, header = bk->header;
    if (mc_check_idle(c) < 0) return -1;
    {
        /* every command checked before the first is sent: a row of parameters too large
           for any command fails the executemany with nothing sent */
        size_t largest = 0, prev = 0;
        for (size_t k = 0; k < nbounds; k++) {
            if (bounds[k] - prev > largest) largest = bounds[k] - prev;
            prev = bounds[k];
        }
        if (mc_check_packet(c, header + largest, "a COM_STMT_BULK_EXECUTE of one row") < 0 ||
            (prep && mc_check_packet(c, 1 + prep_len, "the statement (COM_STMT_PREPARE)") < 0))
            return -1;
    }
    unsigned long long total = 0;
    size_t off = 0;
    mc_writer hdr = {0};
    int failed = 0;
    if (mc_writer_init(&hdr, header) < 0) failed = 1;
    for (size_t k = 0; !failed && k < nbounds; k++) {
        size_t end = bounds[k];
        const unsigned char *bt = btypes + bbatch[k] * (size_t)np;
        for (Py_ssize_t i = 0; i < np; i++) bulk_wire_type(bt[i], wire + 2 * i, wire + 2 * i + 1);
        hdr.len = 0;
        if (k > 0 && mc_check_stop(c) < 0) { failed = 1; break; }   /* a cancelled call */
        int one_trip = k == 0 && prep != NULL;
        if (one_trip) {
            /* COM_STMT_PREPARE, then this command on statement id 0xffffffff ("the one
               prepared last"), in one write */
            if (mc_conn_command(c, COM_STMT_PREPARE, prep, prep_len) < 0) { failed = 1; break; }
            stmt_id = 0xffffffffUL;
        }
        unsigned char cmdhead[7] = {COM_STMT_BULK_EXECUTE,
                                    (unsigned char)stmt_id, (unsigned char)(stmt_id >> 8),
                                    (unsigned char)(stmt_id >> 16), (unsigned char)(stmt_id >> 24),
                                    128, 0};   /* flags: STMT_BULK_FLAG_SEND_TYPES_TO_SERVER */
        if (mc_writer_put(&hdr, cmdhead, 7) < 0 || mc_writer_put(&hdr, wire, 2 * (size_t)np) < 0) {
            failed = 1;
            break;
        }
        c->binary = 1;
        c->cursor_wanted = 0;
        c->seq = 0;
        c->cseq = 0;
        if (mc_conn_send(c, hdr.buf, hdr.len, bk->w.buf + off, end - off) < 0) { failed = 1; break; }
        if (one_trip) {
            if (one_trip_prepare_response(c, &bk->new_id, &bk->new_np, &bk->new_nc,
                                          c->seq) < 0) {
                failed = 1;
                break;
            }
            bk->prepared = 1;
            if ((Py_ssize_t)bk->new_np != np) {
                mc_conn_malformed(c, "the statement has a different number of parameters "
                                     "than the one-trip COM_STMT_BULK_EXECUTE sent");
                failed = 1;
                break;
            }
            stmt_id = bk->new_id;   /* (c->seq: after the bulk command's last packet) */
        }
        Py_ssize_t nc = mc_read_query_response(c);
        if (nc < 0) { failed = 1; break; }
        if (nc > 0 || c->state != ST_IDLE) {
            mc_conn_malformed(c, "unexpected result set from COM_STMT_BULK_EXECUTE");
            failed = 1;
            break;
        }
        total += c->affected_rows;
        off = end;
    }
    mc_writer_free(&hdr);
    if (failed) return -1;
    c->affected_rows = total;
    bk->total = total;
    return 0;
}

/* Free what mc_bulk_plan kept (also after it failed). */
void mc_bulk_free(mc_bulk *bk) {
    PyMem_Free(bk->bounds);
    PyMem_Free(bk->bbatch);
    PyMem_Free(bk->bstart);
    PyMem_Free(bk->btypes);
    PyMem_Free(bk->kinds);
    PyMem_Free(bk->wire);
    mc_writer_free(&bk->w);
    Py_XDECREF(bk->first);
    Py_XDECREF(bk->seq);
}

/* COM_STMT_RESET of statement `stmt_id` (its low 32 bits), which also closes its open
   cursor: 0 or -1.  (The method stmt_reset(): prepared_methods.c.) */
int mc_stmt_reset(mc_conn *c, unsigned long stmt_id) {
    const unsigned char *p;
    size_t n;
    if (c->state == ST_CURSOR && c->cursor_stmt == (uint32_t)stmt_id) {
        c->state = ST_IDLE;
        mc_clear_result(c);
    }
    if (mc_check_idle(c) < 0) return -1;
    unsigned char b[4];
    for (int q = 0; q < 4; q++) b[q] = (unsigned char)(stmt_id >> (8 * q));
    if (mc_conn_command(c, COM_STMT_RESET, b, 4) < 0) return -1;
    if (mc_read_packet(c, &p, &n) < 0) return -1;
    if (n && p[0] == 0xFF) { mc_raise_err_packet(c, p, n); return -1; }
    if (!n || p[0] != 0x00) { mc_conn_malformed(c, "expected OK after COM_STMT_RESET"); return -1; }
    return mc_parse_ok(c, p, n) < 0 ? -1 : 0;
}

/* COM_STMT_CLOSE of statement `stmt_id` (no reply; written at once), which also closes
   its open cursor and forgets its cached metadata: 0 or -1 (2014 while another result
   is pending, or while pipelined responses are queued: one of them may be this
   statement's, read with the metadata it would forget; nothing is sent or forgotten).
   (The method stmt_close(): prepared_methods.c.) */
int mc_stmt_close(mc_conn *c, unsigned long stmt_id) {
    if (c->pipe_pending > 0) return mc_check_idle(c);
    if (c->state == ST_CURSOR && c->cursor_stmt == (uint32_t)stmt_id) {
        c->state = ST_IDLE;   /* closing the statement closes its cursor */
        mc_clear_result(c);
    }
    int rc = 0;
    if (c->meta_cache) {
        PyObject *key = PyLong_FromUnsignedLong(stmt_id);
        if (key && PyDict_DelItem(c->meta_cache, key) < 0) PyErr_Clear();
        Py_XDECREF(key);
    }
    if (c->state == ST_IDLE) {
        unsigned char b[4];
        for (int q = 0; q < 4; q++) b[q] = (unsigned char)(stmt_id >> (8 * q));
        rc = mc_conn_command(c, COM_STMT_CLOSE, b, 4);
        if (rc == 0) rc = mc_conn_flush(c);   /* no reply follows to flush it */
    } else {
        rc = -1;
        mc_raise(c->st->ProgrammingError, CR_COMMANDS_OUT_OF_SYNC,
                 "Commands out of sync; you can't run this command now");
    }
    return rc < 0 ? -1 : 0;
}
