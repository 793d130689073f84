/* The driver: the Python type mysqlc._core.Connection over the engine and the blocking
 * transport.  Argument parsing, connect() (socket, then the handshake), the thread guard,
 * the COM_QUERY / fetch / next_result / discard entry points, the simple commands (ping,
 * select_db, stat), drain and close, wire capture and replay, and the attributes.
 *
 * The GIL is released around every blocking syscall (in transport.c).  Wire data is parsed
 * with the bounds-checked reader; a malformed packet raises OperationalError(2027) and
 * closes the connection. */
#include "conn_internal.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#include <math.h>
#include <openssl/err.h>

/* ================================================================ guard */

int mc_conn_enter(mc_conn *c) {
    if (c->closing) {   /* another thread is closing it (drain(closing=True), then close()) */
        mc_conn_client_error(c, c->st->InterfaceError, 0,
                          "the connection was closed (close() from another thread)");
        return -1;
    }
    if (c->in_use) {
        mc_raise(c->st->ProgrammingError, 0,
                 "this connection is being used by another thread (or re-entered from a "
                 "converter); connections cannot be shared between threads at once");
        return -1;
    }
    if (c->fd < 0 && !c->replaying) {
        mc_conn_raise_closed(c);
        return -1;
    }
    c->in_use = 1;
    return 0;
}

void mc_conn_leave(mc_conn *c) { c->in_use = 0; }

/* ================================================================ type */

static PyObject *Conn_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    mc_conn *c = (mc_conn *)type->tp_alloc(type, 0);
    if (!c) return NULL;
    c->fd = -1;
    c->read_timeout = c->write_timeout = -1;
    c->sig_countdown = MC_SIGNAL_PACKETS;
    c->use_unicode = 1;
    c->pipe_max_commands = MC_PIPE_MAX_COMMANDS;
    c->pipe_max_bytes = MC_PIPE_MAX_BYTES;
    memcpy(c->last_sqlstate, "00000", 6);
    c->st = mc_state_from_type(type);
    if (!c->st) { Py_DECREF(c); return NULL; }
    c->module = PyType_GetModule(type);   /* the type is not subclassable */
    if (!c->module) { Py_DECREF(c); return NULL; }
    Py_INCREF(c->module);
    if (mc_writer_init(&c->join, 256) < 0 || mc_writer_init(&c->wbuf, 512) < 0 ||
        mc_writer_init(&c->zsend, 256) < 0 || mc_writer_init(&c->zout, 256) < 0 ||
        mc_writer_init(&c->out, 512) < 0 || mc_writer_init(&c->wout, 512) < 0 ||
        mc_writer_init(&c->tin, 512) < 0) {
        Py_DECREF(c);
        return NULL;
    }
    return (PyObject *)c;
}

static int Conn_traverse(mc_conn *c, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(c));
    Py_VISIT(c->module);
    Py_VISIT(c->converters);
    Py_VISIT(c->auth_plugins);
    Py_VISIT(c->infile_handler);
    Py_VISIT(c->infile_exc);
    Py_VISIT(c->on_abandon);
    Py_VISIT(c->pyio);
    Py_VISIT(c->pytls);
    Py_VISIT(c->pytls_in);
    Py_VISIT(c->pytls_out);
    Py_VISIT(c->meta_cache);
    if (mc_fmt_cache_traverse(c->fmt_cache, visit, arg)) return -1;
    Py_VISIT(c->connect_attrs);
    Py_VISIT(c->description);
    Py_VISIT(c->column_names);
    Py_VISIT(c->column_tables);
    Py_VISIT(c->take_rows);
    Py_VISIT(c->hc_desc);
    for (Py_ssize_t i = 0; i < c->pipe_n; i++)
        Py_VISIT(c->pipe_q[(c->pipe_first + i) % c->pipe_cap].owner);
    for (Py_ssize_t i = 0; i < c->hc_nc && c->hc_plan; i++) {
        Py_VISIT(c->hc_plan[i].converter);
        Py_VISIT(c->hc_plan[i].codec_obj);
    }
    for (Py_ssize_t i = 0; i < c->plan_len; i++) {
        Py_VISIT(c->plan[i].converter);
        Py_VISIT(c->plan[i].codec_obj);
    }
    return 0;
}

static int Conn_clear(mc_conn *c) {
    mc_clear_result(c);
    mc_pipe_clear(c);
    Py_CLEAR(c->converters);
    Py_CLEAR(c->server_version);
    Py_CLEAR(c->auth_plugin_name);
    Py_CLEAR(c->info);
    Py_CLEAR(c->auth_plugins);
    Py_CLEAR(c->server_public_key);
    Py_CLEAR(c->infile_handler);
    Py_CLEAR(c->infile_exc);
    Py_CLEAR(c->take_rows);
    mc_fmt_cache_free(&c->fmt_cache);
    mc_head_cache_forget(c);
    mc_writer_free(&c->hc_bytes);
    Py_CLEAR(c->on_abandon);
    Py_CLEAR(c->pyio);
    mc_pytls_free(c);
    mc_engine_api_free(c);
    Py_CLEAR(c->meta_cache);
    Py_CLEAR(c->last_error);
    Py_CLEAR(c->connect_attrs);
    Py_CLEAR(c->schema);
    Py_CLEAR(c->session_changes);
    Py_CLEAR(c->session_vars);
    return 0;
}

/* Frame COM_QUIT and hand it to the transport to write without blocking (best effort:
   the server closes its side without answering).  No exception is left set. */
static void say_goodbye(mc_conn *c) {
    unsigned char cmd = COM_QUIT;
    c->out.len = 0;
    c->seq = 0;
    c->cseq = 0;
    if (mc_conn_send(c, &cmd, 1, NULL, 0) < 0) { PyErr_Clear(); c->out.len = 0; return; }
    mc_transport_send_nowait(c);
}

static void Conn_dealloc(mc_conn *c) {
    PyTypeObject *tp = Py_TYPE(c);
    PyObject_GC_UnTrack(c);
    if (c->fd >= 0 && !MC_TLS_ON(c) && !c->compress && (c->state == ST_IDLE || c->state == ST_CURSOR))
        say_goodbye(c);   /* dropped without close(): still COM_QUIT, without blocking */
    mc_conn_close_socket(c);
    if (c->ssl_ctx) { SSL_CTX_free(c->ssl_ctx); c->ssl_ctx = NULL; }
    Conn_clear(c);
    PyMem_Free(c->zbuf);
    mc_writer_free(&c->zsend);
    mc_stash_free(c);
    PyMem_Free(c->pipe_q);
    c->pipe_q = NULL;
    c->pipe_cap = 0;
    mc_writer_free(&c->zout);
    mc_writer_free(&c->out);
    mc_writer_free(&c->wout);
    mc_writer_free(&c->tin);
    PyMem_Free(c->rbuf);
    mc_writer_free(&c->join);
    mc_writer_free(&c->wbuf);
    mc_writer_free(&c->capture);
    Py_CLEAR(c->module);
    tp->tp_free((PyObject *)c);
    Py_DECREF(tp);
}

/* ---------------------------------------------------------------- connect */

static int set_timeout(PyObject *v, double *out, const char *name) {
    if (v == NULL || v == Py_None) { *out = -1; return 0; }
    double d = PyFloat_AsDouble(v);
    if (d == -1.0 && PyErr_Occurred()) return -1;
    if (!(d > 0) || isinf(d)) {
        PyErr_Format(PyExc_ValueError, "%s must be a positive number of seconds or None", name);
        return -1;
    }
    *out = d;
    return 0;
}


/* The connection phase over the blocking transport: the state machine of session.c, with the TLS
   upgrade done by the transport (mc_start_tls).  0 or -1. */
int mc_do_handshake(mc_conn *c, span user, span password, span database,
                    const connect_opts *o) {
    mc_handshake h;
    if (mc_handshake_init(&h, user, password, database, o) < 0) return -1;
    int r;
    for (;;) {
        r = mc_handshake_step(c, &h);
        if (r != MC_HS_TLS) break;
        if (mc_conn_flush(c) < 0 || mc_start_tls(c, o) < 0) { r = -1; break; }
    }
    mc_handshake_clear(&h);
    return r < 0 ? -1 : 0;
}

int mc_get_span(PyObject *o, span *s, Py_buffer *view, const char *name) {
    s->data = NULL;
    s->len = 0;
    view->obj = NULL;
    if (o == NULL || o == Py_None) return 0;
    if (PyUnicode_Check(o)) {
        Py_ssize_t l;
        const char *u = PyUnicode_AsUTF8AndSize(o, &l);
        if (!u) return -1;
        s->data = (const unsigned char *)u;
        s->len = (size_t)l;
        return 0;
    }
    if (PyObject_GetBuffer(o, view, PyBUF_SIMPLE) < 0) {
        PyErr_Format(PyExc_TypeError, "%s must be bytes or str", name);
        return -1;
    }
    s->data = view->buf;
    s->len = (size_t)view->len;
    return 0;
}

static PyObject *Conn_connect(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"host", "port", "unix_socket", "user", "password", "database",
                             "collation", "client_flag", "connect_timeout", "read_timeout",
                             "write_timeout", "ssl_mode", "ssl_ca", "ssl_capath", "ssl_cert",
                             "ssl_key", "ssl_cipher", "tls_min_version", "tls_max_version",
                             "server_public_key", "allow_public_key_request",
                             "allow_cleartext", "compress", "attrs", "auth_plugins",
                             "local_files", "server_hostname", "ssl_fingerprint",
                             "session_track", "transport", "ssl_context", NULL};
    const char *host = NULL, *unix_socket = NULL;
    int port = 3306;
    unsigned int collation = 45;
    unsigned long client_flag = 0;
    PyObject *user = NULL, *password = NULL, *database = NULL;
    PyObject *ct = NULL, *rt = NULL, *wt = NULL;
    connect_opts o;
    memset(&o, 0, sizeof(o));
    PyObject *pubkey = Py_None, *attrs = Py_None, *plugins = Py_None;
    int allow_req = 0, allow_clear = 0, compress = 0, local_files = 0;
    const char *server_hostname = NULL;
    PyObject *fingerprints = Py_None;
    int session_track = 1;
    PyObject *transport = Py_None, *ssl_context = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|ziz$OOOIkOOOizzzzzii" "OpppOOpzOpOO", kwlist,
                                     &host, &port, &unix_socket, &user, &password, &database,
                                     &collation, &client_flag, &ct, &rt, &wt,
                                     &o.tls.mode, &o.tls.ca, &o.tls.capath, &o.tls.cert,
                                     &o.tls.key, &o.tls.cipher, &o.tls.min_version,
                                     &o.tls.max_version, &pubkey, &allow_req, &allow_clear,
                                     &compress, &attrs, &plugins, &local_files,
                                     &server_hostname, &fingerprints, &session_track,
                                     &transport, &ssl_context))
        return NULL;
    /* ssl_fingerprint: SHA-256 digests, 32 bytes each, concatenated (mysqlc._secure) */
    if (fingerprints != Py_None) {
        if (!PyBytes_Check(fingerprints) || PyBytes_GET_SIZE(fingerprints) == 0 ||
            PyBytes_GET_SIZE(fingerprints) % 32) {
            PyErr_SetString(PyExc_ValueError, "ssl_fingerprint must be bytes of SHA-256 digests (32 bytes each)");
            return NULL;
        }
        o.tls.fingerprints = (const unsigned char *)PyBytes_AS_STRING(fingerprints);
        o.tls.n_fingerprints = (size_t)PyBytes_GET_SIZE(fingerprints) / 32;
    }
    if (c->fd >= 0) {
        mc_raise(c->st->ProgrammingError, 0, "already connected");
        return NULL;
    }
    if (c->in_use) return mc_raise(c->st->ProgrammingError, 0, "connection is in use");
    mc_pipe_clear(c);   /* an earlier connection's queue (never read now) */
    if (o.tls.mode < MC_SSL_DISABLED || o.tls.mode > MC_SSL_VERIFY_IDENTITY) {
        PyErr_Format(PyExc_ValueError, "ssl_mode must be 0..4, not %d", o.tls.mode);
        return NULL;
    }
    /* ssl_context: an ssl.SSLContext whose session carries TLS (tls_py.c); it is the
       whole TLS configuration, and ssl_mode is what it verifies (mysqlc._secure) */
    if (ssl_context != Py_None) {
        if (o.tls.mode < MC_SSL_REQUIRED) {
            PyErr_SetString(PyExc_ValueError, "ssl_context needs ssl_mode 2..4 (REQUIRED or stricter)");
            return NULL;
        }
        if (o.tls.ca || o.tls.capath || o.tls.cert || o.tls.key || o.tls.cipher ||
            o.tls.min_version || o.tls.max_version || o.tls.n_fingerprints) {
            PyErr_SetString(PyExc_ValueError, "ssl_context cannot be combined with the other "
                            "ssl options (they belong to the context)");
            return NULL;
        }
        if (!PyObject_HasAttrString(ssl_context, "wrap_bio")) {
            PyErr_SetString(PyExc_TypeError, "ssl_context must be an ssl.SSLContext");
            return NULL;
        }
        o.ssl_context = ssl_context;
    }
    if (pubkey != Py_None && !PyBytes_Check(pubkey)) {
        PyErr_SetString(PyExc_TypeError, "server_public_key must be bytes (PEM) or None");
        return NULL;
    }
    if (attrs != Py_None && !PyDict_Check(attrs)) {
        PyErr_SetString(PyExc_TypeError, "attrs must be a dict or None");
        return NULL;
    }
    if (plugins != Py_None && !PyDict_Check(plugins)) {
        PyErr_SetString(PyExc_TypeError, "auth_plugins must be a dict or None");
        return NULL;
    }
    if (!host && !unix_socket) host = "127.0.0.1";
    if (port <= 0 || port > 65535) {
        PyErr_Format(PyExc_ValueError, "port must be in 1..65535, not %d", port);
        return NULL;
    }
    if (set_timeout(ct, &o.connect_timeout, "connect_timeout") < 0 ||
        set_timeout(rt, &c->read_timeout, "read_timeout") < 0 ||
        set_timeout(wt, &c->write_timeout, "write_timeout") < 0)
        return NULL;
    /* the name TLS checks the certificate against (and sends as SNI) */
    o.host = server_hostname ? server_hostname : unix_socket ? (host ? host : "localhost") : host;
    o.collation = collation;
    o.extra_flags = (uint32_t)client_flag;
    o.want_compress = compress;
    o.no_session_track = !session_track;
    if (local_files) o.extra_flags |= CLIENT_LOCAL_FILES;
    o.attrs = attrs == Py_None ? NULL : attrs;
    Py_XSETREF(c->server_public_key, pubkey == Py_None ? NULL : Py_NewRef(pubkey));
    Py_XSETREF(c->auth_plugins, plugins == Py_None ? NULL : Py_NewRef(plugins));
    c->allow_pubkey_request = allow_req;
    c->allow_cleartext = allow_clear;
    if (c->ssl_ctx) { SSL_CTX_free(c->ssl_ctx); c->ssl_ctx = NULL; }

    span su, sp, sd;
    Py_buffer vu, vp, vd;
    vu.obj = vp.obj = vd.obj = NULL;
    PyObject *ret = NULL;
    if (mc_get_span(user, &su, &vu, "user") < 0 || mc_get_span(password, &sp, &vp, "password") < 0 ||
        mc_get_span(database, &sd, &vd, "database") < 0)
        goto done;
    if (su.data && memchr(su.data, 0, su.len)) {
        PyErr_SetString(PyExc_ValueError, "user must not contain NUL");
        goto done;
    }
    if (sd.data && memchr(sd.data, 0, sd.len)) {
        PyErr_SetString(PyExc_ValueError, "database must not contain NUL");
        goto done;
    }
    if (!su.data) { su.data = (const unsigned char *)""; su.len = 0; }
    if (!sp.data) { sp.data = (const unsigned char *)""; sp.len = 0; }
    if (!c->rbuf) {
        c->rbuf = PyMem_Malloc(RBUF_INITIAL);
        if (!c->rbuf) { PyErr_NoMemory(); goto done; }
        c->rcap = RBUF_INITIAL;
    }
    c->rpos = c->rend = 0;
    c->zpos = c->zend = 0;
    c->compress = 0;
    c->replaying = 0;
    c->closing = 0;
    mc_conn_clear_error(c);
    c->in_use = 1;
    /* transport=: a stream the caller opened (mysqlc.aio), attached instead of a socket */
    if (transport != Py_None ? mc_py_attach(c, transport, unix_socket != NULL) < 0
                             : mc_open_socket(c, host, port, unix_socket, o.connect_timeout) < 0) {
        c->in_use = 0;
        goto done;
    }
    /* the handshake is bounded by connect_timeout too */
    double saved_rt = c->read_timeout, saved_wt = c->write_timeout;
    if (o.connect_timeout >= 0) c->read_timeout = c->write_timeout = o.connect_timeout;
    int rc = mc_do_handshake(c, su, sp, sd, &o);
    c->read_timeout = saved_rt;
    c->write_timeout = saved_wt;
    c->in_use = 0;
    if (rc < 0) {
        mc_conn_close_socket(c);
        goto done;
    }
    ret = Py_None;
    Py_INCREF(ret);
done:
    if (vu.obj) PyBuffer_Release(&vu);
    if (vp.obj) PyBuffer_Release(&vp);
    if (vd.obj) PyBuffer_Release(&vd);
    return ret;
}

/* ---------------------------------------------------------------- commands */

static int refuse_stopped(mc_conn *c) {
    mc_raise(c->st->OperationalError, 0,
             "the command was not sent: the call was cancelled and its cancellation is "
             "being handled (the commands before it ran)");
    return -1;
}

int mc_check_stop(mc_conn *c) { return c->stop_requested ? refuse_stopped(c) : 0; }

int mc_check_idle(mc_conn *c) {
    if (c->stop_requested) return refuse_stopped(c);
    if (c->pipe_pending > 0) {
        mc_conn_client_error(c, c->st->ProgrammingError, CR_COMMANDS_OUT_OF_SYNC,
                             "Commands out of sync: %zd pipelined command(s) still await "
                             "their responses (read them with read_response())",
                             c->pipe_pending);
        return -1;
    }
    if (c->state != ST_IDLE || c->take_phase) {
        mc_conn_client_error(c, c->st->ProgrammingError, CR_COMMANDS_OUT_OF_SYNC,
                          "Commands out of sync; you can't run this command now");
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- max_allowed_packet */

/* Read the session's @@max_allowed_packet into c->max_packet (once per connection; the
   caller has entered and the connection is idle).  The raw text of the value is parsed,
   so that no converter runs.  A server error leaves the limit unknown (SIZE_MAX: the
   server then enforces it).  0, or -1 with an exception (a connection failure). */
int mc_read_max_packet(mc_conn *c) {
    static const char q[] = "SELECT @@max_allowed_packet";
    const unsigned char *p;
    size_t n;
    if (c->pipe_pending > 0) {   /* its answer would come after theirs */
        mc_conn_client_error(c, c->st->ProgrammingError, CR_COMMANDS_OUT_OF_SYNC,
                             "max_allowed_packet is not known and %zd pipelined command(s) "
                             "await their responses", c->pipe_pending);
        return -1;
    }
    c->max_packet = SIZE_MAX;
    c->binary = 0;
    c->cursor_wanted = 0;
    if (mc_send_query(c, (const unsigned char *)q, sizeof q - 1) < 0) return -1;
    Py_ssize_t nc = mc_read_query_response(c);
    if (nc < 0) {
        if (c->fd < 0 || c->state != ST_IDLE) return -1;
        PyErr_Clear();   /* an ERR packet: the connection is fine */
        return 0;
    }
    if (nc == 0) return 0;   /* an OK instead of a result set: the limit stays unknown */
    size_t value = 0;
    for (;;) {
        int r = mc_conn_next_row(c, &p, &n);
        if (r < 0) return -1;
        if (r == 0) break;
        mc_reader rd;
        const unsigned char *s;
        size_t len;
        mc_reader_init(&rd, p, n);
        if (value == 0 && mc_reader_lenenc_str(&rd, &s, &len) == 0 && len > 0 && len < 20) {
            size_t v = 0, k = 0;
            while (k < len && s[k] >= '0' && s[k] <= '9') v = v * 10 + (size_t)(s[k++] - '0');
            if (k == len) value = v;
        }
    }
    if (c->state != ST_IDLE) return 0;   /* not a plain result: leave the limit unknown */
    if (value >= MC_MIN_MAX_PACKET) c->max_packet = value;
    return 0;
}

/* The server's max_allowed_packet when a command payload of `payload` bytes could exceed
   it (read once, see mc_read_max_packet), else SIZE_MAX without a round trip; 0 on error. */
size_t mc_packet_limit(mc_conn *c, size_t payload) {
    if (payload < MC_MIN_MAX_PACKET) return SIZE_MAX;
    if (c->max_packet == 0 && mc_read_max_packet(c) < 0) return 0;
    return c->max_packet;
}

/* 0 when a command payload of `payload` bytes (command byte included) is below the
   server's max_allowed_packet; else -1 with OperationalError(2020, ...) naming both
   sizes, before anything is sent: the server would answer "Got a packet bigger than
   'max_allowed_packet' bytes" and close the connection.  `what` names the payload. */
int mc_check_packet(mc_conn *c, size_t payload, const char *what) {
    size_t limit = mc_packet_limit(c, payload);
    if (limit == 0) return -1;
    if (payload < limit) return 0;
    mc_raise(c->st->OperationalError, CR_NET_PACKET_TOO_LARGE,
             "Got packet bigger than 'max_allowed_packet' bytes: %s is %zu bytes, the "
             "server's max_allowed_packet is %zu (nothing was sent; the connection is "
             "still usable)", what, payload, limit);
    return -1;
}

/* Does `s` contain LOCAL, in any case?  Every LOAD DATA LOCAL INFILE statement does (LOAD
   DATA can be neither prepared nor built at run time), so a statement that does not
   cannot make a well-behaved server ask for a file. */
int mc_mentions_local(const unsigned char *s, size_t n) {
    for (size_t i = 0; i + 5 <= n; i++) {
        if ((s[i] | 0x20) == 'l' && (s[i + 1] | 0x20) == 'o' && (s[i + 2] | 0x20) == 'c' &&
            (s[i + 3] | 0x20) == 'a' && (s[i + 4] | 0x20) == 'l')
            return 1;
    }
    return 0;
}

/* Before sending the statement `sql`: on a connection that allows LOAD DATA LOCAL INFILE
   (an infile handler is set), when the statement may be one, read the session's
   max_allowed_packet now unless it is known, so that the file goes in packets the server
   accepts (see infile_packet_size in results.c): once the server has asked for the file,
   no query can be sent until the transfer ends.  One round trip, once per connection, and
   only then: a statement of MC_MIN_MAX_PACKET bytes or more had the limit read by
   mc_check_packet, so at most that many bytes are scanned.  0, or -1 (connection failed). */
int mc_infile_limit_prepare(mc_conn *c, const unsigned char *sql, size_t n) {
    if (!c->infile_handler || c->max_packet != 0 || !mc_mentions_local(sql, n)) return 0;
    return mc_read_max_packet(c);
}

static PyObject *Conn_query(mc_conn *c, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    if (mc_conn_enter(c) < 0) { PyBuffer_Release(&view); return NULL; }
    PyObject *ret = NULL;
    if (mc_check_idle(c) < 0) goto done;
    if (mc_check_packet(c, 1 + (size_t)view.len, "the statement (COM_QUERY)") < 0) goto done;
    if (mc_infile_limit_prepare(c, view.buf, (size_t)view.len) < 0) goto done;
    c->binary = 0;
    c->cursor_wanted = 0;
    if (mc_send_query(c, view.buf, (size_t)view.len) < 0) goto done;
    Py_ssize_t nc = mc_read_query_response(c);
    if (nc < 0) goto done;
    ret = PyLong_FromSsize_t(nc);
done:
    mc_conn_leave(c);
    PyBuffer_Release(&view);
    return ret;
}

/* ---------------------------------------------------------------- pipelining */

/* The queue of pipelined responses (mc_conn.pipe_q): the entry `i` places from the
   oldest. */
static mc_pipe_entry *pipe_at(mc_conn *c, Py_ssize_t i) {
    return &c->pipe_q[(c->pipe_first + i) % c->pipe_cap];
}

/* Forget every entry (their owners released): after pipe_drop(), at connect, at clear.
   The GIL is held (owners are Python objects). */
void mc_pipe_clear(mc_conn *c) {
    while (c->pipe_n > 0) {
        mc_pipe_entry *e = pipe_at(c, 0);
        PyObject *owner = e->owner;
        e->owner = NULL;
        c->pipe_first = (c->pipe_first + 1) % c->pipe_cap;
        c->pipe_n--;
        Py_XDECREF(owner);
    }
    c->pipe_first = 0;
    c->pipe_bytes = 0;
    c->pipe_pending = 0;
}

/* Before a command is sent without its response being read: the connection is idle or
   has only pipelined responses in flight, the bound leaves room for one more command, the
   queue has a free entry for it (reserved here, so that queueing it after it was written
   cannot fail), and a connection that may send a statement of MC_MIN_MAX_PACKET bytes or
   more has read the session's max_allowed_packet while nothing is in flight (its answer
   would otherwise come behind the queued ones).  0 or -1. */
int mc_pipe_send_ready(mc_conn *c) {
    if (c->state != ST_IDLE) return mc_check_idle(c);
    if (!c->io) {
        mc_raise(c->st->NotSupportedError, 0, "pipelining needs a transport");
        return -1;
    }
    if (c->pipe_pending == 0 && c->pipe_n > 0) mc_pipe_clear(c);   /* an earlier loss's */
    if (c->pipe_n >= c->pipe_max_commands) {
        mc_raise(c->st->ProgrammingError, CR_COMMANDS_OUT_OF_SYNC,
                 "%zd pipelined commands are in flight, the bound (pipe_max_commands): read "
                 "the oldest response (read_response()) before sending more", c->pipe_n);
        return -1;
    }
    if (c->pipe_n == c->pipe_cap) {
        Py_ssize_t ncap = c->pipe_cap ? 2 * c->pipe_cap : 16;
        mc_pipe_entry *q = PyMem_Calloc((size_t)ncap, sizeof *q);
        if (!q) { PyErr_NoMemory(); return -1; }
        for (Py_ssize_t i = 0; i < c->pipe_n; i++) q[i] = *pipe_at(c, i);
        PyMem_Free(c->pipe_q);
        c->pipe_q = q;
        c->pipe_cap = ncap;
        c->pipe_first = 0;
    }
    if (c->max_packet == 0 && c->pipe_pending == 0 && mc_read_max_packet(c) < 0) return -1;
    return 0;
}

/* The framed command (after mc_pipe_send_ready) is written now, without reading
   anything, and its response joins the queue, read as `binary` rows of statement `stmt`
   (0: a COM_QUERY).  Returns the sequence id its response starts with (1 after a
   one-packet command; a command of several 16 MiB packets moves it), or -1 (the
   connection failed and is closed).  The entry's owner is set by the method layer
   (mc_pipe_set_owner). */
int mc_pipe_sent(mc_conn *c, int binary, uint32_t stmt) {
    int seq = c->seq;
    size_t size = c->out.len;
    if (c->io->flush(c) < 0) return -1;
    mc_pipe_entry *e = &c->pipe_q[(c->pipe_first + c->pipe_n) % c->pipe_cap];
    e->owner = NULL;
    e->size = size;
    e->stmt = stmt;
    e->seq = (uint8_t)seq;
    e->binary = (uint8_t)(binary != 0);
    c->pipe_n++;
    c->pipe_pending++;
    c->pipe_bytes += size;
    return seq;
}

/* The newest entry's owner (a new reference to `owner`; None stays NULL). */
void mc_pipe_set_owner(mc_conn *c, PyObject *owner) {
    if (c->pipe_n == 0 || owner == Py_None) return;
    mc_pipe_entry *e = pipe_at(c, c->pipe_n - 1);
    Py_XSETREF(e->owner, Py_NewRef(owner));
}

/* send_query(sql: bytes, owner=None) -> int: COM_QUERY written at once, its response
   queued (pipe_pending + 1) with `owner` (pipe_head names it when it is the oldest);
   returns the sequence id its response starts with.  Refused (ProgrammingError, nothing
   sent) when the bound's commands are in flight; the caller reads the oldest responses
   first while pipe_room() is False.  Statements that may be LOAD DATA LOCAL are refused
   by the caller (the file would come behind commands already sent). */
static PyObject *Conn_send_query(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"sql", "owner", NULL};
    Py_buffer view;
    PyObject *owner = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*|O:send_query", kwlist, &view, &owner))
        return NULL;
    if (mc_conn_enter(c) < 0) { PyBuffer_Release(&view); return NULL; }
    PyObject *ret = NULL;
    if (mc_pipe_send_ready(c) < 0) goto done;
    if (mc_check_packet(c, 1 + (size_t)view.len, "the statement (COM_QUERY)") < 0) goto done;
    if (mc_send_query(c, view.buf, (size_t)view.len) < 0) goto done;
    int seq = mc_pipe_sent(c, 0, 0);
    if (seq < 0) goto done;
    mc_pipe_set_owner(c, owner);
    ret = PyLong_FromLong(seq);
done:
    mc_conn_leave(c);
    PyBuffer_Release(&view);
    return ret;
}

/* read_response() -> field count: the response of the oldest pipelined command (the
   queue's head, pipe_head), read as query() reads its own, with the entry's way of
   reading (binary rows and the statement of a COM_STMT_EXECUTE, the sequence id): rows
   are then stored/fetched and more results read with next_result() before the next
   read_response().  The entry leaves the queue before its response is read: an ERR
   raises as query() does and the queue moves on; a connection failure closes the
   connection (pipe_pending 0; pipe_drop() hands back the owners of the rest). */
static PyObject *Conn_read_response(mc_conn *c, PyObject *noargs) {
    if (mc_conn_enter(c) < 0) return NULL;
    PyObject *ret = NULL;
    if (c->state != ST_IDLE) {
        mc_conn_client_error(c, c->st->ProgrammingError, CR_COMMANDS_OUT_OF_SYNC,
                             "Commands out of sync: the previous response is not read yet");
        goto done;
    }
    if (c->pipe_pending <= 0) {
        mc_raise(c->st->ProgrammingError, CR_COMMANDS_OUT_OF_SYNC,
                 "no pipelined command awaits a response");
        goto done;
    }
    mc_pipe_entry *e = pipe_at(c, 0);
    PyObject *owner = e->owner;
    e->owner = NULL;
    c->binary = e->binary;
    c->cursor_wanted = 0;
    if (e->binary) c->cursor_stmt = e->stmt;   /* whose metadata the server may skip */
    c->seq = e->seq;   /* the response follows its command's last packet */
    c->pipe_bytes -= e->size;
    c->pipe_first = (c->pipe_first + 1) % c->pipe_cap;
    c->pipe_n--;
    c->pipe_pending--;
    c->pipe_reading = 1;
    Py_ssize_t nc = mc_read_query_response(c);
    c->pipe_reading = 0;
    Py_XDECREF(owner);
    if (nc >= 0) ret = PyLong_FromSsize_t(nc);
done:
    mc_conn_leave(c);
    return ret;
}

/* pipe_room(size=0) -> bool: one more command of `size` bytes fits the bound on what is
   in flight (fewer than pipe_max_commands commands and at most pipe_max_bytes bytes, or
   nothing in flight). */
static PyObject *Conn_pipe_room(mc_conn *c, PyObject *arg) {
    Py_ssize_t size = PyLong_AsSsize_t(arg);
    if (size == -1 && PyErr_Occurred()) return NULL;
    if (c->pipe_pending == 0) Py_RETURN_TRUE;
    if (c->pipe_n >= c->pipe_max_commands) Py_RETURN_FALSE;
    if (size < 0 || c->pipe_bytes + (size_t)size > c->pipe_max_bytes) Py_RETURN_FALSE;
    Py_RETURN_TRUE;
}

/* pipe_drop() -> list: the owners of the queued entries whose responses will never be
   read (the connection was lost or closed with them in flight), oldest first; the queue
   is then empty.  ProgrammingError while the connection would still read them. */
static PyObject *Conn_pipe_drop(mc_conn *c, PyObject *noargs) {
    if (c->pipe_pending > 0)
        return mc_raise(c->st->ProgrammingError, CR_COMMANDS_OUT_OF_SYNC,
                        "%zd pipelined responses are still to be read", c->pipe_pending);
    if (c->in_use)
        return mc_raise(c->st->ProgrammingError, 0, "the connection is in use");
    PyObject *list = PyList_New(0);
    if (!list) return NULL;
    for (Py_ssize_t i = 0; i < c->pipe_n; i++) {
        PyObject *o = pipe_at(c, i)->owner;
        if (PyList_Append(list, o ? o : Py_None) < 0) { Py_DECREF(list); return NULL; }
    }
    mc_pipe_clear(c);
    return list;
}

static PyObject *get_stop_requested(mc_conn *c, void *x) {
    return PyBool_FromLong(c->stop_requested);
}

static int set_stop_requested(mc_conn *c, PyObject *v, void *x) {
    int on = v ? PyObject_IsTrue(v) : 0;
    if (on < 0) return -1;
    c->stop_requested = on;
    return 0;
}

static PyObject *get_pipe_pending(mc_conn *c, void *x) { return PyLong_FromSsize_t(c->pipe_pending); }

static PyObject *get_pipe_head(mc_conn *c, void *x) {
    if (c->pipe_pending <= 0 || c->pipe_n <= 0) Py_RETURN_NONE;
    PyObject *o = pipe_at(c, 0)->owner;
    return Py_NewRef(o ? o : Py_None);
}

static PyObject *get_pipe_bytes(mc_conn *c, void *x) {
    return PyLong_FromSize_t(c->pipe_pending ? c->pipe_bytes : 0);
}

/* pipe_max_commands (closure NULL) and pipe_max_bytes (closure non-NULL) */
static PyObject *get_pipe_bound(mc_conn *c, void *bytes) {
    return PyLong_FromSsize_t(bytes ? (Py_ssize_t)c->pipe_max_bytes : c->pipe_max_commands);
}

static int set_pipe_bound(mc_conn *c, PyObject *v, void *bytes) {
    Py_ssize_t n = v ? PyLong_AsSsize_t(v) : bytes ? MC_PIPE_MAX_BYTES : MC_PIPE_MAX_COMMANDS;
    if (n == -1 && PyErr_Occurred()) return -1;
    if (n < 1) {
        PyErr_Format(PyExc_ValueError, "%s must be >= 1",
                     bytes ? "pipe_max_bytes" : "pipe_max_commands");
        return -1;
    }
    if (bytes) c->pipe_max_bytes = (size_t)n;
    else c->pipe_max_commands = n;
    return 0;
}

/* fetch(n=-1, keys=None, max_bytes=0, wait=True) -> list of up to n rows of the current
   result (all when n < 0), fewer once their packets add up to max_bytes (> 0).  With
   wait=False the engine never waits for bytes (c->nowait): the rows whose packets are
   all received already, possibly none (rows_pending then still true; mysqlc.aio's
   unbuffered fetchone() without the greenlet). */
static PyObject *Conn_fetch(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"n", "keys", "max_bytes", "wait", "partial", NULL};
    Py_ssize_t limit = -1, max_bytes = 0;
    PyObject *keys = Py_None;
    int wait = 1, partial = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|nOnpp", kwlist, &limit, &keys, &max_bytes,
                                     &wait, &partial))
        return NULL;
    if (keys == Py_None) keys = NULL;
    if (keys && (!PyTuple_Check(keys) || PyTuple_GET_SIZE(keys) != c->plan_len)) {
        PyErr_SetString(PyExc_TypeError, "keys must be a tuple with one key per column");
        return NULL;
    }
    if (mc_conn_enter(c) < 0) return NULL;
    c->nowait = !wait;
    PyObject *before = NULL;
    PyObject *list = mc_fetch_rows_bounded(c, limit, keys, max_bytes > 0 ? (size_t)max_bytes : 0,
                                           partial ? &before : NULL);
    c->nowait = 0;
    mc_conn_leave(c);
    if (!list && before) {
        /* `partial`: a mysqlc.Error after some rows (the server's error mid-result, a
           lost connection): the rows go with it as its `_rows_before`
           (mysqlc.cursors.SSCursor returns them first and raises the error at the next
           fetch) */
        mc_state *st = mc_state_from_type(Py_TYPE(c));
        PyObject *t, *v, *tb;
        PyErr_Fetch(&t, &v, &tb);
        PyErr_NormalizeException(&t, &v, &tb);
        if (st && v && PyObject_IsInstance(v, st->Error) == 1 &&
                PyObject_SetAttrString(v, "_rows_before", before) < 0)
            PyErr_Clear();
        PyErr_Clear();
        if (tb && v) PyException_SetTraceback(v, tb);
        PyErr_Restore(t, v, tb);
        Py_DECREF(before);
    }
    return list;
}

static PyObject *Conn_next_result(mc_conn *c, PyObject *noargs) {
    if (mc_conn_enter(c) < 0) return NULL;
    PyObject *ret = NULL;
    if (c->state == ST_ROWS && mc_skip_rows(c) < 0) goto done;
    if (c->state != ST_MORE) {
        ret = PyLong_FromLong(-1);
        goto done;
    }
    c->state = ST_IDLE;
    Py_ssize_t nc = mc_read_query_response(c);
    if (nc >= 0) ret = PyLong_FromSsize_t(nc);
done:
    mc_conn_leave(c);
    return ret;
}

static PyObject *Conn_discard(mc_conn *c, PyObject *noargs) {
    if (c->fd < 0) Py_RETURN_NONE;
    if (mc_conn_enter(c) < 0) return NULL;
    int failed = 0;
    while (c->state != ST_IDLE && c->fd >= 0) {
        if (c->state == ST_CURSOR) {
            /* COM_STMT_RESET closes the cursor */
            unsigned char b[4];
            const unsigned char *p;
            size_t n;
            for (int q = 0; q < 4; q++) b[q] = (unsigned char)(c->cursor_stmt >> (8 * q));
            c->state = ST_IDLE;
            mc_clear_result(c);
            if (mc_conn_command(c, COM_STMT_RESET, b, 4) < 0 || mc_read_packet(c, &p, &n) < 0) {
                failed = 1;
                break;
            }
            if (n && p[0] == 0xFF) { mc_raise_err_packet(c, p, n); failed = 1; break; }
            if (n && p[0] == 0x00 && mc_parse_ok(c, p, n) < 0) { failed = 1; break; }
            continue;
        }
        if (c->state == ST_ROWS) {
            if (mc_skip_rows(c) < 0) { failed = 1; break; }
        } else {
            c->state = ST_IDLE;
            if (mc_read_query_response(c) < 0) { failed = 1; break; }
        }
    }
    mc_conn_leave(c);
    if (failed) return NULL;
    Py_RETURN_NONE;
}

/* Commands whose answer is a single OK or ERR. */
PyObject *mc_simple_command(mc_conn *c, uint8_t cmd, const unsigned char *arg, size_t len) {
    if (mc_conn_enter(c) < 0) return NULL;
    PyObject *ret = NULL;
    const unsigned char *p;
    size_t n;
    if (mc_check_idle(c) < 0) goto done;
    if (mc_conn_command(c, cmd, arg, len) < 0) goto done;
    if (mc_read_packet(c, &p, &n) < 0) goto done;
    if (n == 0) { mc_conn_malformed(c, "empty reply"); goto done; }
    if (p[0] == 0xFF) { mc_raise_err_packet(c, p, n); goto done; }
    if (p[0] != 0x00) { mc_conn_malformed(c, "expected an OK packet"); goto done; }
    if (mc_parse_ok(c, p, n) < 0) goto done;
    ret = Py_None;
    Py_INCREF(ret);
done:
    mc_conn_leave(c);
    return ret;
}

static PyObject *Conn_ping(mc_conn *c, PyObject *noargs) {
    return mc_simple_command(c, COM_PING, NULL, 0);
}

#define COM_RESET_CONNECTION 0x1f

/* reset_connection()  [COM_RESET_CONNECTION, MySQL 5.7.3+, MariaDB 10.2.4+]: the server
   ends the session's state without a new login -- rolls back, drops user variables,
   temporary tables, prepared statements and locks, and sets every session variable
   (autocommit, the character set, sql_mode, session tracking) back to its global value;
   the default database stays.  The statements' metadata cache is emptied and session
   tracking starts again from the current database.  Error 1047 from a server without
   the command. */
static PyObject *Conn_reset_connection(mc_conn *c, PyObject *noargs) {
    PyObject *r = mc_simple_command(c, COM_RESET_CONNECTION, NULL, 0);
    /* a sent command may have dropped the statements even when its answer was lost */
    if (c->meta_cache) PyDict_Clear(c->meta_cache);
    if (r) mc_track_reset(c, c->schema);
    return r;
}

static PyObject *Conn_select_db(mc_conn *c, PyObject *arg) {
    Py_buffer view;
    span s;
    if (mc_get_span(arg, &s, &view, "database") < 0) return NULL;
    PyObject *r = mc_simple_command(c, COM_INIT_DB, s.data, s.len);
    if (view.obj) PyBuffer_Release(&view);
    return r;
}

/* ---------------------------------------------------------------- change_user, stat, fileno */

/* change_user(user, password=None, database=None)  [COM_CHANGE_USER]
   Logs in again as `user` on this connection with the whole authentication exchange of
   the handshake (mc_change_user, session.c, which says what the server resets).  Raises
   ValueError for a NUL in user or database, the server's error (e.g. OperationalError
   1045) when the login is refused; MariaDB then keeps the previous session and the
   connection stays usable.  A malformed exchange closes the connection. */
static PyObject *Conn_change_user(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"user", "password", "database", NULL};
    PyObject *user, *password = Py_None, *database = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OO:change_user", kwlist, &user, &password,
                                     &database))
        return NULL;
    span su, sp, sd;
    Py_buffer vu, vp, vd;
    vu.obj = vp.obj = vd.obj = NULL;
    PyObject *ret = NULL;
    if (mc_get_span(user, &su, &vu, "user") < 0 || mc_get_span(password, &sp, &vp, "password") < 0 ||
        mc_get_span(database, &sd, &vd, "database") < 0)
        goto done;
    if ((su.data && memchr(su.data, 0, su.len)) || (sd.data && memchr(sd.data, 0, sd.len))) {
        PyErr_SetString(PyExc_ValueError, "user and database must not contain NUL");
        goto done;
    }
    if (!su.data) { su.data = (const unsigned char *)""; su.len = 0; }
    if (!sp.data) { sp.data = (const unsigned char *)""; sp.len = 0; }
    if (mc_conn_enter(c) < 0) goto done;
    if (mc_change_user(c, su, sp, sd) == 0) ret = Py_NewRef(Py_None);
    mc_conn_leave(c);
done:
    if (vu.obj) PyBuffer_Release(&vu);
    if (vp.obj) PyBuffer_Release(&vp);
    if (vd.obj) PyBuffer_Release(&vd);
    return ret;
}

#define COM_STATISTICS  0x09

/* stat() -> str  [COM_STATISTICS]: the server's status line ("Uptime: ...  Threads: ..."),
   as mysql_stat(). */
static PyObject *Conn_stat(mc_conn *c, PyObject *noargs) {
    if (mc_conn_enter(c) < 0) return NULL;
    PyObject *ret = NULL;
    const unsigned char *p;
    size_t n;
    if (mc_check_idle(c) < 0) goto done;
    if (mc_conn_command(c, COM_STATISTICS, NULL, 0) < 0) goto done;
    if (mc_read_packet(c, &p, &n) < 0) goto done;
    /* the answer is a bare string<EOF>; an ERR packet can only start with 0xFF */
    if (n >= 3 && p[0] == 0xFF) { mc_raise_err_packet(c, p, n); goto done; }
    ret = PyUnicode_DecodeUTF8((const char *)p, (Py_ssize_t)n, "replace");
done:
    mc_conn_leave(c);
    return ret;
}

/* fileno() -> int: the socket's file descriptor (mysqlclient's fileno()); raises the
   closed-connection error when there is no socket. */
static PyObject *Conn_fileno(mc_conn *c, PyObject *noargs) {
    if (c->fd < 0) return mc_conn_raise_closed(c);
    return PyLong_FromLong(c->fd);
}

/* drain(timeout, closing=False) -> bool: read and drop, without decoding a value, what is left of the
   current response (unread rows, further results) for at most `timeout` seconds, so
   that close() can end with COM_QUIT instead of leaving the server an aborted client.
   True: the server waits for a command (an open server-side cursor counts: it is idle);
   False: the time ran out first, the connection is left as it is (the caller may stop
   the statement with KILL QUERY and drain again).  A server error that ends a result
   (1317 after KILL QUERY) is dropped.  Raises when the connection is lost (then
   closed), or on Ctrl-C (closed too).  closing=True (close() follows): from now on other
   users of the connection (another thread between two batches) get InterfaceError "the
   connection was closed" instead of a read that races the drain. */
static PyObject *Conn_drain(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"timeout", "closing", NULL};
    double timeout;
    int closing = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "d|p:drain", kwlist, &timeout, &closing))
        return NULL;
    if (!(timeout >= 0) || isinf(timeout)) {
        PyErr_SetString(PyExc_ValueError, "timeout must be a finite number of seconds >= 0");
        return NULL;
    }
    if (c->fd < 0) Py_RETURN_FALSE;
    if (closing && c->closing && !c->in_use) {
        c->in_use = 1;   /* the closer's second drain */
    } else {
        if (mc_conn_enter(c) < 0) return NULL;
        if (closing) c->closing = 1;
    }
    double deadline = mc_monotonic() + timeout;
    int done = 0, failed = 0;
    unsigned k = 0;
    while (!done) {
        if (c->state == ST_IDLE || c->state == ST_CURSOR) { done = 1; break; }
        if (c->state == ST_MORE) {
            c->state = ST_IDLE;
            if (mc_read_query_response(c) < 0) {
                if (c->fd < 0) { failed = 1; break; }
                PyErr_Clear();   /* a statement of the batch failed: the batch ends */
            }
            continue;
        }
        /* ST_ROWS: wait for bytes only while the time lasts */
        size_t avail = c->rend - c->rpos;
        /* (under TLS, what was decrypted is in rbuf or zbuf already) */
        int buffered = (avail >= 4 && avail >= 4 + (size_t)mc_load_u24(c->rbuf + c->rpos)) ||
                       (c->compress && c->zend > c->zpos);
        if (!buffered) {
            double left = deadline - mc_monotonic();
            if (left <= 0) break;
            int w = c->io->wait(c, left);
            if (w == 0) break;
            if (w == 2) continue;   /* a signal whose handler raised nothing */
            if (w < 0) { failed = 1; break; }
        }
        const unsigned char *p;
        size_t n;
        int r = mc_conn_next_row(c, &p, &n);
        if (r < 0) {
            if (c->fd < 0) { failed = 1; break; }
            PyErr_Clear();   /* the server ended the result with an error (KILL QUERY) */
            continue;
        }
        if (r == 1) c->rows_read++;
        if ((++k & 1023u) == 0 && mc_monotonic() > deadline) break;
    }
    mc_conn_leave(c);
    if (failed) return NULL;
    return PyBool_FromLong(done);
}

static PyObject *Conn_close(mc_conn *c, PyObject *noargs) {
    if (c->fd < 0) {
        c->closing = 0;
        Py_RETURN_NONE;
    }
    if (c->in_use)
        return mc_raise(c->st->ProgrammingError, 0,
                        "this connection is being used by another thread");
    /* COM_QUIT: best effort and non-blocking; the server closes without answering (with
       a server-side cursor open the server is idle too) */
    if (c->state == ST_IDLE || c->state == ST_CURSOR) say_goodbye(c);
    mc_conn_close_socket(c);
    c->closing = 0;
    mc_clear_result(c);
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------- wire replay */

/* _start_capture(): record every byte received from now on (for benchmarks and fuzz corpora). */
static PyObject *Conn_start_capture(mc_conn *c, PyObject *noargs) {
    mc_writer_free(&c->capture);
    if (mc_writer_init(&c->capture, 64 * 1024) < 0) return NULL;
    c->capturing = 1;
    Py_RETURN_NONE;
}

/* _stop_capture() -> bytes received since _start_capture(). */
static PyObject *Conn_stop_capture(mc_conn *c, PyObject *noargs) {
    PyObject *r = PyBytes_FromStringAndSize((const char *)c->capture.buf, (Py_ssize_t)c->capture.len);
    c->capturing = 0;
    mc_writer_free(&c->capture);
    return r;
}

/* _replay(data, client_flag, binary=False) -> field count: parse `data` as the server's
   complete response to a COM_QUERY (or, with binary, a COM_STMT_EXECUTE) with sequence
   ids from 1, with no socket.  fetch()/next_result() then read from it.
   Used by the wire-replay benchmark and the fuzz harnesses. */
static PyObject *Conn_replay(mc_conn *c, PyObject *args) {
    Py_buffer view;
    unsigned long flags = CLIENT_PROTOCOL_41 | CLIENT_DEPRECATE_EOF;
    int binary = 0;
    if (!PyArg_ParseTuple(args, "y*|kp", &view, &flags, &binary)) return NULL;
    if (c->fd >= 0 || c->in_use) {
        PyBuffer_Release(&view);
        return mc_raise(c->st->ProgrammingError, 0, "_replay() needs an unconnected Connection");
    }
    unsigned char *nb = PyMem_Realloc(c->rbuf, view.len ? (size_t)view.len : 1);
    if (!nb) { PyBuffer_Release(&view); return PyErr_NoMemory(); }
    c->rbuf = nb;
    c->rcap = view.len ? (size_t)view.len : 1;
    memcpy(c->rbuf, view.buf, (size_t)view.len);
    c->rpos = 0;
    c->rend = (size_t)view.len;
    PyBuffer_Release(&view);
    c->replaying = 1;
    c->io = &mc_replay_io;   /* complete data: reading past its end is an error */
    c->binary = binary;         /* a COM_STMT_EXECUTE response: binary rows */
    c->cursor_wanted = 0;
    c->client_flag = (uint32_t)flags;
    c->protocol_version = 10;
    c->state = ST_IDLE;
    c->seq = 1;
    c->in_use = 1;
    Py_ssize_t nc = mc_read_query_response(c);
    c->in_use = 0;
    if (nc < 0) return NULL;
    return PyLong_FromSsize_t(nc);
}

/* ---------------------------------------------------------------- attributes */

#define U64_GETTER(name, expr) \
    static PyObject *get_##name(mc_conn *c, void *x) { return PyLong_FromUnsignedLongLong((unsigned long long)(expr)); }

U64_GETTER(thread_id, c->thread_id)
U64_GETTER(ext_caps, c->ext_caps)
U64_GETTER(server_capabilities, c->server_caps)
U64_GETTER(client_flag, c->client_flag)
U64_GETTER(server_status, c->server_status)
U64_GETTER(server_collation, c->server_collation)
U64_GETTER(protocol_version, c->protocol_version)
U64_GETTER(affected_rows, c->field_count > 0 ? c->rows_read : c->affected_rows)
U64_GETTER(insert_id, c->insert_id)
U64_GETTER(warning_count, c->warning_count)
U64_GETTER(result_id, c->result_seq)

static PyObject *obj_or_none(PyObject *o) {
    if (!o) Py_RETURN_NONE;
    Py_INCREF(o);
    return o;
}

static PyObject *get_server_version(mc_conn *c, void *x) { return obj_or_none(c->server_version); }
static PyObject *get_auth_plugin_name(mc_conn *c, void *x) { return obj_or_none(c->auth_plugin_name); }
static PyObject *get_info(mc_conn *c, void *x) { return obj_or_none(c->info); }
static PyObject *get_description(mc_conn *c, void *x) { return obj_or_none(c->description); }
static PyObject *get_description_flags(mc_conn *c, void *x) { return obj_or_none(c->description_flags); }
static PyObject *get_column_names(mc_conn *c, void *x) { return obj_or_none(c->column_names); }
static PyObject *get_column_tables(mc_conn *c, void *x) { return obj_or_none(c->column_tables); }
static PyObject *get_field_count(mc_conn *c, void *x) { return PyLong_FromSsize_t(c->field_count); }
static PyObject *get_more_results(mc_conn *c, void *x) { return PyBool_FromLong(c->state == ST_MORE); }
static PyObject *get_rows_pending(mc_conn *c, void *x) { return PyBool_FromLong(c->state == ST_ROWS); }
static PyObject *get_cursor_open(mc_conn *c, void *x) { return PyBool_FromLong(c->state == ST_CURSOR); }
static PyObject *get_unread(mc_conn *c, void *x) {
    return PyBool_FromLong(mc_conn_unread(c));
}
static PyObject *get_on_abandon(mc_conn *c, void *x) { return obj_or_none(c->on_abandon); }
static int set_on_abandon(mc_conn *c, PyObject *v, void *x) {
    if (v && v != Py_None && !PyCallable_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "on_abandon must be callable or None");
        return -1;
    }
    Py_XSETREF(c->on_abandon, (v && v != Py_None) ? Py_NewRef(v) : NULL);
    return 0;
}
static PyObject *get_infile_handler(mc_conn *c, void *x) { return obj_or_none(c->infile_handler); }
static int set_infile_handler(mc_conn *c, PyObject *v, void *x) {
    if (v == Py_None) v = NULL;
    if (v && !PyCallable_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "infile_handler must be callable or None");
        return -1;
    }
    Py_XINCREF(v);
    Py_XSETREF(c->infile_handler, v);
    return 0;
}
static PyObject *get_open(mc_conn *c, void *x) { return PyBool_FromLong(c->fd >= 0); }
static PyObject *get_fd(mc_conn *c, void *x) { return PyLong_FromLong(c->fd >= 0 ? c->fd : -1); }
static PyObject *get_no_backslash_escapes(mc_conn *c, void *x) {
    return PyBool_FromLong(mc_no_backslash_escapes(c));
}
static PyObject *get_converters(mc_conn *c, void *x) { return obj_or_none(c->converters); }
static int set_converters(mc_conn *c, PyObject *v, void *x) {
    if (v && v != Py_None && !PyDict_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "converters must be a dict or None");
        return -1;
    }
    if (v == Py_None) v = NULL;
    Py_XINCREF(v);
    Py_XSETREF(c->converters, v);
    mc_head_cache_forget(c);
    return 0;
}

static PyObject *get_bulk(mc_conn *c, void *x) {
    return PyBool_FromLong((c->ext_caps & MARIADB_CLIENT_STMT_BULK_OPERATIONS) != 0);
}

static PyObject *get_max_packet(mc_conn *c, void *closure) {
    if (c->max_packet == 0 || c->max_packet == SIZE_MAX) return PyLong_FromLong(0);
    return PyLong_FromSize_t(c->max_packet);
}

static int set_max_packet(mc_conn *c, PyObject *v, void *closure) {
    if (v == NULL) { c->max_packet = 0; return 0; }
    Py_ssize_t n = PyLong_AsSsize_t(v);
    if (n == -1 && PyErr_Occurred()) return -1;
    c->max_packet = n >= MC_MIN_MAX_PACKET ? (size_t)n : 0;
    return 0;
}

static PyObject *get_last_errno(mc_conn *c, void *x) { return PyLong_FromLong(c->last_errno); }
static PyObject *get_last_error(mc_conn *c, void *x) {
    if (!c->last_error) return PyUnicode_FromStringAndSize("", 0);
    return Py_NewRef(c->last_error);
}
static PyObject *get_last_sqlstate(mc_conn *c, void *x) {
    return PyUnicode_FromStringAndSize(c->last_sqlstate, 5);
}
static PyObject *get_use_unicode(mc_conn *c, void *x) { return PyBool_FromLong(c->use_unicode); }
static int set_use_unicode(mc_conn *c, PyObject *v, void *x) {
    int b = v ? PyObject_IsTrue(v) : -1;
    if (b < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "use_unicode cannot be deleted");
        return -1;
    }
    c->use_unicode = b;
    mc_head_cache_forget(c);
    return 0;
}

static PyObject *get_tls_verified_by(mc_conn *c, void *x) {
    if (!MC_TLS_ON(c) || !c->tls.verified_by) Py_RETURN_NONE;
    return PyUnicode_FromString(c->tls.verified_by);
}
static PyObject *get_tls_peer_fingerprint(mc_conn *c, void *x) {
    if (!MC_TLS_ON(c) || !c->tls.have_fp) Py_RETURN_NONE;
    return PyBytes_FromStringAndSize((const char *)c->tls.fp, 32);
}
static PyObject *get_tls_info(mc_conn *c, void *x) {   /* tls.c, tls_py.c */
    if (c->pytls) return mc_pytls_info(c);
    return mc_tls_info(c->ssl, &c->tls);
}

static PyGetSetDef Conn_getset[] = {
    {"tls_verified_by", (getter)get_tls_verified_by, NULL,
     "how the server's TLS certificate was verified: 'ca' (chain and, for VERIFY_IDENTITY, "
     "host name), 'fingerprint' (ssl_fingerprint), 'password' (MariaDB 11.4+'s proof in "
     "the final OK, MDEV-31855), or None (no TLS, or encrypted but unverified)", NULL},
    {"tls_peer_fingerprint", (getter)get_tls_peer_fingerprint, NULL,
     "SHA-256 digest (32 bytes) of the server's TLS certificate (DER), or None without TLS", NULL},
    {"on_abandon", (getter)get_on_abandon, (setter)set_on_abandon,
     "callable(thread_id) called once when an interrupt (Ctrl-C) or a read timeout closes the "
     "connection in the middle of a command (the server may still run the statement); its "
     "errors are dropped, the caller's exception is kept", NULL},
    {"max_allowed_packet", (getter)get_max_packet, (setter)set_max_packet,
     "the session's max_allowed_packet (bytes) as read by the core (once, when a command "
     "is first large enough to exceed 1024 bytes), or 0 when not read yet; commands this "
     "large or larger are refused with OperationalError 2020 before they are sent", NULL},
    {"result_id", (getter)get_result_id, NULL,
     "number of the current response: changes with every statement and next result", NULL},
    {"bulk_operations", (getter)get_bulk, NULL,
     "the server accepted MariaDB's COM_STMT_BULK_EXECUTE", NULL},
    {"last_errno", (getter)get_last_errno, NULL,
     "error number of the last command (mysql_errno()); 0 when it succeeded", NULL},
    {"last_error", (getter)get_last_error, NULL,
     "message of the last command's error (mysql_error()); '' when it succeeded", NULL},
    {"last_sqlstate", (getter)get_last_sqlstate, NULL,
     "SQLSTATE of the last command's error (mysql_sqlstate()); '00000' when it succeeded", NULL},
    {"use_unicode", (getter)get_use_unicode, (setter)set_use_unicode,
     "False: text columns (CHAR, VARCHAR, TEXT, ENUM, SET, JSON) come as bytes; read when a"
     " result's column plan is built", NULL},
    {"server_version", (getter)get_server_version, NULL, "server version string from the handshake", NULL},
    {"protocol_version", (getter)get_protocol_version, NULL, NULL, NULL},
    {"thread_id", (getter)get_thread_id, NULL, "connection id from the handshake", NULL},
    {"ext_caps", (getter)get_ext_caps, NULL, "MariaDB extended capabilities agreed in the handshake", NULL},
    {"server_capabilities", (getter)get_server_capabilities, NULL, NULL, NULL},
    {"client_flag", (getter)get_client_flag, NULL, "negotiated capability flags", NULL},
    {"server_status", (getter)get_server_status, NULL, "SERVER_STATUS_* flags of the last OK/EOF", NULL},
    {"server_collation", (getter)get_server_collation, NULL, NULL, NULL},
    {"affected_rows", (getter)get_affected_rows, NULL, NULL, NULL},
    {"insert_id", (getter)get_insert_id, NULL, NULL, NULL},
    {"warning_count", (getter)get_warning_count, NULL, NULL, NULL},
    {"info", (getter)get_info, NULL, NULL, NULL},
    {"field_count", (getter)get_field_count, NULL, NULL, NULL},
    {"description", (getter)get_description, NULL, "PEP 249 7-tuples of the current result", NULL},
    {"description_flags", (getter)get_description_flags, NULL, NULL, NULL},
    {"column_names", (getter)get_column_names, NULL, NULL, NULL},
    {"column_tables", (getter)get_column_tables, NULL, NULL, NULL},
    {"more_results", (getter)get_more_results, NULL, NULL, NULL},
    {"take_pending", (getter)mc_conn_get_take_pending, NULL,
     "a statement sent with send_query_nowait() awaits take_result()", NULL},
    {"pipe_pending", (getter)get_pipe_pending, NULL,
     "pipelined commands whose responses are not read yet (0 once the connection is lost)",
     NULL},
    {"stop_requested", (getter)get_stop_requested, (setter)set_stop_requested,
     "True while a cancellation of the caller's call is handled (mysqlc.aio): no new"
     " command starts (OperationalError), a bulk executemany stops before its next"
     " command", NULL},
    {"pipe_head", (getter)get_pipe_head, NULL,
     "the owner given with the oldest pipelined command whose response read_response()"
     " reads next, or None", NULL},
    {"pipe_bytes", (getter)get_pipe_bytes, NULL,
     "bytes of the pipelined commands in flight", NULL},
    {"pipe_max_commands", (getter)get_pipe_bound, (setter)set_pipe_bound,
     "the bound on pipelined commands in flight (default 256)", NULL},
    {"pipe_max_bytes", (getter)get_pipe_bound, (setter)set_pipe_bound,
     "the bound on the bytes of pipelined commands in flight (default 65536)", (void *)1},
    {"rows_pending", (getter)get_rows_pending, NULL, NULL, NULL},
    {"unread", (getter)get_unread, NULL,
     "rows_pending or more_results or cursor_open: a response left to read (or discard) "
     "before the next command", NULL},
    {"cursor_open", (getter)get_cursor_open, NULL,
     "a server-side cursor is open: read it with stmt_fetch()", NULL},
    {"infile_handler", (getter)get_infile_handler, (setter)set_infile_handler,
     "callable(filename: bytes) -> iterable of bytes for LOAD DATA LOCAL INFILE, or None", NULL},
    {"open", (getter)get_open, NULL, NULL, NULL},
    {"fd", (getter)get_fd, NULL, "socket file descriptor, -1 when closed (fileno())", NULL},
    {"auth_plugin_name", (getter)get_auth_plugin_name, NULL, NULL, NULL},
    {"no_backslash_escapes", (getter)get_no_backslash_escapes, NULL,
     "string literals must not use backslash escapes: NO_BACKSLASH_ESCAPES in the tracked"
     " sql_mode when the server reported it, else the last OK/EOF's status flag", NULL},
    /* session state tracking (packets.c) and query attributes (prepared.c) */
    {"schema", (getter)mc_get_schema, NULL,
     "the default database as the session state tracker last reported it (or as given at"
     " connect / change_user): str, '' for none, None when unknown", NULL},
    {"session_changes", (getter)mc_get_session_changes, NULL,
     "dict of the session state changes of the last OK packet, or None", NULL},
    {"session_variables", (getter)mc_get_session_variables, NULL,
     "dict name -> value (str) of every system variable the server reported as changed in"
     " this session (a copy)", NULL},
    {"session_track_seq", (getter)mc_get_track_seq, NULL,
     "int that changes whenever tracked session state changes (or the session is new)", NULL},
    {"session_uncertain_seq", (getter)mc_get_uncertain_seq, NULL,
     "session_track_seq of the last change reported before the end of a response"
     " (SERVER_MORE_RESULTS_EXISTS): a stored procedure may have undone it unreported", NULL},
    {"has_query_attributes", (getter)mc_get_query_attributes, NULL,
     "the server accepted CLIENT_QUERY_ATTRIBUTES (query_attributes(), stmt_execute("
     "attributes=...))", NULL},
    {"converters", (getter)get_converters, (setter)set_converters,
     "dict field_type -> callable used instead of the built-in decoder", NULL},
    {"tls_info", (getter)get_tls_info, NULL,
     "None without TLS, else {'version', 'cipher', 'verified', 'verified_by'} (src/tls.c)", NULL},
    {NULL},
};

static PyMethodDef Conn_methods[] = {
    MC_ENGINE_METHODS
    MC_TRANSPORT_PY_METHODS
    {"connect", (PyCFunction)(void (*)(void))Conn_connect, METH_VARARGS | METH_KEYWORDS,
     "connect(host=None, port=3306, unix_socket=None, user=b'', password=b'', database=None,"
     " collation=45, client_flag=0, connect_timeout=None, read_timeout=None,"
     " write_timeout=None)"},
    {"query", (PyCFunction)Conn_query, METH_O, "query(sql: bytes) -> field count"},
    {"send_query", (PyCFunction)(void (*)(void))Conn_send_query, METH_VARARGS | METH_KEYWORDS,
     "send_query(sql: bytes, owner=None) -> int: COM_QUERY written, its response queued"
     " with owner (pipelining); the response's sequence id"},
    {"read_response", (PyCFunction)Conn_read_response, METH_NOARGS,
     "read_response() -> field count of the oldest queued response (pipe_head's)"},
    {"pipe_room", (PyCFunction)Conn_pipe_room, METH_O,
     "pipe_room(size) -> bool: a command of size bytes fits the bound on what is in flight"},
    {"pipe_drop", (PyCFunction)Conn_pipe_drop, METH_NOARGS,
     "pipe_drop() -> list of the owners of the queued responses that will never be read"
     " (after a loss or close); empties the queue"},
    {"query_attributes", (PyCFunction)Conn_query_attributes, METH_VARARGS,
     "query_attributes(sql: bytes, attributes: sequence of (name, value), encoding='utf-8')"
     " -> field count: COM_QUERY with query attributes (CLIENT_QUERY_ATTRIBUTES)"},
    {"fetch", (PyCFunction)(void (*)(void))Conn_fetch, METH_VARARGS | METH_KEYWORDS,
     "fetch(n=-1, keys=None, max_bytes=0, wait=True, partial=False) -> list of rows (at most"
     " n; stops once the rows read add up to max_bytes of packets, when > 0; wait=False:"
     " only the rows already received, never waiting for bytes; partial=True: a mysqlc.Error"
     " after some rows carries them as its _rows_before)"},
    {"next_result", (PyCFunction)Conn_next_result, METH_NOARGS, NULL},
    {"discard", (PyCFunction)Conn_discard, METH_NOARGS, NULL},
    {"ping", (PyCFunction)Conn_ping, METH_NOARGS, NULL},
    {"select_db", (PyCFunction)Conn_select_db, METH_O, NULL},
    {"reset_connection", (PyCFunction)Conn_reset_connection, METH_NOARGS,
     "reset_connection(): COM_RESET_CONNECTION; the session's state returns to the"
     " server's defaults (the default database stays)"},
    {"close", (PyCFunction)Conn_close, METH_NOARGS, NULL},
    {"drain", (PyCFunction)(void (*)(void))Conn_drain, METH_VARARGS | METH_KEYWORDS,
     "drain(timeout, closing=False) -> bool: drop the rest of the response (no decoding)"
     " for at most timeout seconds; True when the server waits for a command"},
    {"change_user", (PyCFunction)(void (*)(void))Conn_change_user, METH_VARARGS | METH_KEYWORDS,
     "change_user(user, password=None, database=None): COM_CHANGE_USER with the whole"
     " authentication exchange; the session (and its prepared statements) is reset"},
    {"stat", (PyCFunction)Conn_stat, METH_NOARGS, "stat() -> str: COM_STATISTICS"},
    {"fileno", (PyCFunction)Conn_fileno, METH_NOARGS, "fileno() -> int: the socket's descriptor"},
    {"stmt_prepare", (PyCFunction)Conn_stmt_prepare, METH_O,
     "stmt_prepare(sql: bytes) -> (statement_id, num_params, num_columns)"},
    {"stmt_execute", (PyCFunction)(void (*)(void))Conn_stmt_execute, METH_VARARGS | METH_KEYWORDS,
     "stmt_execute(statement_id, params, types=None, cursor=False, long_data_threshold=0,"
     " encoding='utf-8') -> (field_count, types)"},
    {"stmt_fetch", (PyCFunction)(void (*)(void))Conn_stmt_fetch, METH_VARARGS | METH_KEYWORDS,
     "stmt_fetch(n=1, keys=None) -> list of rows from the open server-side cursor"},
    {"stmt_reset", (PyCFunction)Conn_stmt_reset, METH_O, NULL},
    {"stmt_bulk_execute", (PyCFunction)(void (*)(void))Conn_stmt_bulk_execute,
     METH_VARARGS | METH_KEYWORDS,
     "stmt_bulk_execute(statement_id, rows, max_payload=16777216, encoding='utf-8', exact=False)"
     " -> affected rows, or None when bulk execution does not apply (exact: also when a"
     " value has no binary form)"},
    {"stmt_prepare_execute", (PyCFunction)(void (*)(void))Conn_stmt_prepare_execute,
     METH_VARARGS | METH_KEYWORDS,
     "stmt_prepare_execute(sql, params, encoding='utf-8') -> (statement_id, num_params,"
     " num_columns, field_count, types, error): MariaDB's one-trip COM_STMT_PREPARE +"
     " COM_STMT_EXECUTE (statement id 0xffffffff)"},
    {"stmt_close", (PyCFunction)Conn_stmt_close, METH_O, NULL},
    {"_start_capture", (PyCFunction)Conn_start_capture, METH_NOARGS, NULL},
    {"_stop_capture", (PyCFunction)Conn_stop_capture, METH_NOARGS, NULL},
    {"_replay", (PyCFunction)Conn_replay, METH_VARARGS, NULL},
    {"fetch_arrow", (PyCFunction)(void (*)(void))mc_conn_fetch_arrow, METH_VARARGS | METH_KEYWORDS,
     "fetch_arrow(n=-1, decimal='decimal') -> (schema capsule, array capsule, rows):"
     " up to n rows of the pending result as one Arrow record batch (struct array)"},
    {"arrow_schema", (PyCFunction)(void (*)(void))mc_conn_arrow_schema, METH_VARARGS | METH_KEYWORDS,
     "arrow_schema(decimal='decimal') -> schema capsule of the current result"},
    {"store", (PyCFunction)(void (*)(void))mc_conn_store, METH_VARARGS | METH_KEYWORDS,
     "store(keys=None) -> Store of all the current result's rows, read off the socket and"
     " kept as packets (also decoded ahead when this shape was last read as rows); None"
     " (nothing read) when decoding them may run Python code"},
    {"prefer_store", (PyCFunction)mc_conn_prefer_store, METH_NOARGS,
     "prefer_store(): store() keeps the next results (a columnar read happened)"},
    {"format_statement", (PyCFunction)(void (*)(void))mc_conn_format_statement, METH_FASTCALL,
     "format_statement(query, args, no_backslash_escapes, charset, encoding, encoders,"
     " binary_prefix) -> bytes: format_query() with these options (portable=0), all"
     " positional; the options are read again only when an argument object differs from"
     " the last call's.  Raises what format_query() raises: TypeError for a str query or"
     " a bad option, ProgrammingError for a placeholder/parameter mismatch or a value"
     " without a literal (src/encode.c)"},
    {"query_result", (PyCFunction)(void (*)(void))mc_conn_query_result, METH_FASTCALL | METH_KEYWORDS,
     "query_result(sql, keys=None) -> (rows, description, description_flags, rowcount,"
     " lastrowid, warning_count): query() and store() in one call (statement.c)"},
    {"send_ping_nowait", (PyCFunction)mc_conn_send_ping_nowait, METH_NOARGS,
     "send_ping_nowait() -> True: COM_PING handed to the transport without waiting;"
     " take_result() reads its answer"},
    {"send_query_nowait", (PyCFunction)mc_conn_send_query_nowait, METH_O,
     "send_query_nowait(sql) -> bool: COM_QUERY handed to the transport without waiting;"
     " False (nothing sent) when it needs a wait first (statement.c)"},
    {"take_head", (PyCFunction)(void (*)(void))mc_conn_take_head, METH_FASTCALL | METH_KEYWORDS,
     "take_head(wait=False) -> the field count of the statement send_query_nowait() sent,"
     " its rows left for fetch(), or None while the response's head is not complete"},
    {"take_rows", (PyCFunction)(void (*)(void))mc_conn_take_rows, METH_FASTCALL | METH_KEYWORDS,
     "take_rows(keys=None) -> after take_head() read a result set's head: its rows taken"
     " as take_result() takes them (the result tuple, or None while they are not all there)"},
    {"take_result", (PyCFunction)(void (*)(void))mc_conn_take_result, METH_FASTCALL | METH_KEYWORDS,
     "take_result(keys=None, wait=False) -> the query_result() tuple of the statement"
     " send_query_nowait() sent, or None while its response is not complete"},
    {NULL},
};

static PyType_Slot Conn_slots[] = {
    {Py_tp_new, Conn_new},
    {Py_tp_dealloc, Conn_dealloc},
    {Py_tp_traverse, Conn_traverse},
    {Py_tp_clear, Conn_clear},
    {Py_tp_methods, Conn_methods},
    {Py_tp_getset, Conn_getset},
    {Py_tp_doc, "Low-level MySQL protocol connection (see docs/core-api.md)."},
    {0, NULL},
};

static PyType_Spec Conn_spec = {
    .name = "mysqlc._core.Connection",
    .basicsize = sizeof(mc_conn),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .slots = Conn_slots,
};

int mc_conn_add_type(PyObject *module) {
    mc_state *st = mc_state_from_module(module);
    st->ConnectionType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &Conn_spec, NULL);
    if (!st->ConnectionType) return -1;
    Py_INCREF(st->ConnectionType);
    if (PyModule_AddObject(module, "Connection", (PyObject *)st->ConnectionType) < 0) {
        Py_DECREF(st->ConnectionType);
        return -1;
    }
    return PyModule_AddFunctions(module, mc_columnar_functions);   /* columnar.c */
}
