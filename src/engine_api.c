/* The engine driven from Python with no transport: the Connection methods _engine_*.
 *
 * A Connection that was never connected can be put in engine mode (_engine_start or
 * _engine_handshake): c->io is NULL, so the engine never reads or writes anything itself.
 * The caller gives it the bytes the server sent (_engine_feed, in chunks of any size),
 * calls a step (_engine_handshake_step, _engine_response, _engine_fetch,
 * _engine_prepare_response), which either makes progress or returns None / fewer rows when
 * it needs more bytes (MC_NEED inside), and takes what the engine wants sent
 * (_engine_output).  This is how the chunking-property tests and the fuzz harness drive
 * the same code the blocking transport drives, and the shape an event-loop transport
 * uses.  Results are read back with the Connection's usual attributes (description,
 * server_status, affected_rows, ...).
 */
#include "conn_internal.h"

typedef struct {
    mc_handshake h;
    connect_opts o;
    PyObject *user, *password, *database, *attrs;   /* kept alive for h's spans */
} engine_hs;

void mc_engine_api_free(mc_conn *c) {
    engine_hs *e = (engine_hs *)c->engine_hs;
    if (!e) return;
    c->engine_hs = NULL;
    mc_handshake_clear(&e->h);
    Py_XDECREF(e->user);
    Py_XDECREF(e->password);
    Py_XDECREF(e->database);
    Py_XDECREF(e->attrs);
    PyMem_Free(e);
}

static int engine_reset(mc_conn *c) {
    if (c->fd >= 0 || c->in_use) {
        mc_raise(c->st->ProgrammingError, 0, "engine mode needs an unconnected Connection");
        return -1;
    }
    mc_engine_api_free(c);
    c->io = NULL;
    c->replaying = 1;     /* mc_conn_enter() accepts the socketless connection */
    c->rpos = c->rend = 0;
    c->zpos = c->zend = 0;
    c->out.len = 0;
    c->need = 0;
    c->state = ST_IDLE;
    c->protocol_version = 10;
    return 0;
}

/* _engine_start(client_flag=PROTOCOL_41|DEPRECATE_EOF, binary=False, compress=False,
                 ext_caps=0, cursor=False, seq=1, cseq=1, stmt=0)
   Engine mode after a command was sent: the bytes fed next are its response, with
   packet sequence ids from `seq` (compressed frames from `cseq` when compress); `stmt`
   is the prepared statement a binary response belongs to (MariaDB's metadata cache,
   filled by an earlier _engine_prepare_response on this Connection). */
PyObject *Conn_engine_start(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"client_flag", "binary", "compress", "ext_caps", "cursor", "seq",
                             "cseq", "stmt", NULL};
    unsigned long flags = CLIENT_PROTOCOL_41 | CLIENT_DEPRECATE_EOF, ext = 0, stmt = 0;
    int binary = 0, compress = 0, cursor = 0;
    unsigned int seq = 1, cseq = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|kppkpIIk:_engine_start", kwlist, &flags,
                                     &binary, &compress, &ext, &cursor, &seq, &cseq, &stmt))
        return NULL;
    if (engine_reset(c) < 0) return NULL;
    c->client_flag = (uint32_t)flags;
    c->ext_caps = (uint32_t)ext;
    c->binary = binary;
    c->cursor_wanted = cursor;
    c->cursor_stmt = (uint32_t)stmt;   /* the statement whose metadata is cached */
    c->compress = compress;
    c->seq = (uint8_t)seq;
    c->cseq = (uint8_t)cseq;
    Py_RETURN_NONE;
}

/* _engine_handshake(user, password=b"", database=None, client_flag=0, compress=False,
                     attrs=None, collation=45, auth_plugins=None, server_public_key=None)
   Engine mode at the start of the connection phase (the greeting is fed next). */
PyObject *Conn_engine_handshake(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"user", "password", "database", "client_flag", "compress", "attrs",
                             "collation", "auth_plugins", "server_public_key", NULL};
    PyObject *user, *password = NULL, *database = Py_None, *attrs = Py_None;
    PyObject *plugins = Py_None, *pubkey = Py_None;
    unsigned long extra = 0;
    int compress = 0;
    unsigned int collation = 45;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "S|SOkpOIOO:_engine_handshake", kwlist, &user,
                                     &password, &database, &extra, &compress, &attrs, &collation,
                                     &plugins, &pubkey))
        return NULL;
    if (plugins != Py_None && !PyDict_Check(plugins))
        return PyErr_Format(PyExc_TypeError, "auth_plugins must be a dict or None");
    if (pubkey != Py_None && !PyBytes_Check(pubkey))
        return PyErr_Format(PyExc_TypeError, "server_public_key must be bytes (PEM) or None");
    if (database != Py_None && !PyBytes_Check(database))
        return PyErr_Format(PyExc_TypeError, "database must be bytes or None");
    if (attrs != Py_None && !PyDict_Check(attrs))
        return PyErr_Format(PyExc_TypeError, "attrs must be a dict or None");
    if (engine_reset(c) < 0) return NULL;
    Py_XSETREF(c->auth_plugins, plugins == Py_None ? NULL : Py_NewRef(plugins));
    Py_XSETREF(c->server_public_key, pubkey == Py_None ? NULL : Py_NewRef(pubkey));
    engine_hs *e = PyMem_Calloc(1, sizeof(engine_hs));
    if (!e) return PyErr_NoMemory();
    e->user = Py_NewRef(user);
    e->password = password ? Py_NewRef(password) : PyBytes_FromStringAndSize("", 0);
    e->database = database == Py_None ? NULL : Py_NewRef(database);
    e->attrs = attrs == Py_None ? NULL : Py_NewRef(attrs);
    c->engine_hs = e;
    if (!e->password) return NULL;
    e->o.tls.mode = MC_SSL_DISABLED;
    e->o.connect_timeout = -1;
    e->o.collation = collation;
    e->o.extra_flags = (uint32_t)extra;
    e->o.want_compress = compress;
    e->o.attrs = e->attrs;
    span su = {(const unsigned char *)PyBytes_AS_STRING(user), (size_t)PyBytes_GET_SIZE(user)};
    span sp = {(const unsigned char *)PyBytes_AS_STRING(e->password),
               (size_t)PyBytes_GET_SIZE(e->password)};
    span sd = {NULL, 0};
    if (e->database) {
        sd.data = (const unsigned char *)PyBytes_AS_STRING(e->database);
        sd.len = (size_t)PyBytes_GET_SIZE(e->database);
    }
    if (mc_handshake_init(&e->h, su, sp, sd, &e->o) < 0) return NULL;
    c->seq = 0;
    Py_RETURN_NONE;
}

/* _engine_handshake_step() -> True when authenticated, None when more bytes are needed.
   Raises the server's or the protocol's error (the engine is closed then). */
PyObject *Conn_engine_handshake_step(mc_conn *c, PyObject *noargs) {
    engine_hs *e = (engine_hs *)c->engine_hs;
    if (!e) return mc_raise(c->st->ProgrammingError, 0, "no engine handshake in progress");
    if (mc_conn_enter(c) < 0) return NULL;
    int r = mc_handshake_step(c, &e->h);
    mc_conn_leave(c);
    if (r == MC_NEED) Py_RETURN_NONE;
    if (r == MC_HS_TLS)
        return mc_raise(c->st->NotSupportedError, 0,
                        "the engine asks for TLS; _engine_handshake has no TLS layer");
    if (r < 0) return NULL;
    Py_RETURN_TRUE;
}

/* _engine_feed(data): bytes received from the server (any chunk size). */
/* The buffers a step is reading (rbuf, whose rows' values point into it) or framing into
   (out) must not move under it: a converter, an infile handler or another thread calling
   _engine_feed / _engine_command / _engine_output while a step runs gets the thread
   guard's ProgrammingError (a feed there reallocated rbuf under the row decoder). */
static int engine_not_busy(mc_conn *c) {
    if (!c->in_use) return 0;
    mc_raise(c->st->ProgrammingError, 0,
             "this connection is being used by another thread (or re-entered from a "
             "converter); connections cannot be shared between threads at once");
    return -1;
}

PyObject *Conn_engine_feed(mc_conn *c, PyObject *arg) {
    Py_buffer view;
    if (c->io) return mc_raise(c->st->ProgrammingError, 0, "not in engine mode");
    if (engine_not_busy(c) < 0) return NULL;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    int r = mc_engine_feed(c, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    if (r < 0) return NULL;
    Py_RETURN_NONE;
}

/* _engine_output() -> bytes the engine framed for the server since the last call. */
PyObject *Conn_engine_output(mc_conn *c, PyObject *noargs) {
    if (engine_not_busy(c) < 0) return NULL;
    PyObject *r = PyBytes_FromStringAndSize((const char *)c->out.buf, (Py_ssize_t)c->out.len);
    if (r) c->out.len = 0;
    return r;
}

/* _engine_response() -> field count (0: OK), or None when more bytes are needed.  Reads
   the next result of a multi-result response too (state more_results). */
PyObject *Conn_engine_response(mc_conn *c, PyObject *noargs) {
    if (c->io) return mc_raise(c->st->ProgrammingError, 0, "not in engine mode");
    if (mc_conn_enter(c) < 0) return NULL;
    int more = c->state == ST_MORE;
    if (more) c->state = ST_IDLE;
    Py_ssize_t nc = mc_read_query_response(c);
    if (nc == MC_NEED && more) c->state = ST_MORE;
    mc_conn_leave(c);
    if (nc == MC_NEED) Py_RETURN_NONE;
    if (nc < 0) return NULL;
    return PyLong_FromSsize_t(nc);
}

/* _engine_fetch(limit=-1, keys=None) -> list of the rows whose packets are complete (up
   to limit); rows_pending stays True until the result's end was read. */
PyObject *Conn_engine_fetch(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"limit", "keys", NULL};
    Py_ssize_t limit = -1;
    PyObject *keys = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|nO:_engine_fetch", kwlist, &limit, &keys))
        return NULL;
    if (c->io) return mc_raise(c->st->ProgrammingError, 0, "not in engine mode");
    if (keys != Py_None && (!PyTuple_Check(keys) || PyTuple_GET_SIZE(keys) != c->plan_len))
        return PyErr_Format(PyExc_ValueError, "keys must be a tuple with one name per column");
    if (mc_conn_enter(c) < 0) return NULL;
    PyObject *rows = mc_fetch_rows(c, limit, keys == Py_None ? NULL : keys);
    mc_conn_leave(c);
    return rows;
}

/* _engine_prepare_response() -> (statement id, parameter count, column count), or None
   when more bytes are needed. */
PyObject *Conn_engine_prepare_response(mc_conn *c, PyObject *noargs) {
    if (c->io) return mc_raise(c->st->ProgrammingError, 0, "not in engine mode");
    if (mc_conn_enter(c) < 0) return NULL;
    uint32_t id;
    unsigned np, nc;
    int r = mc_read_prepare_response(c, &id, &np, &nc);
    mc_conn_leave(c);
    if (r == MC_NEED) Py_RETURN_NONE;
    if (r < 0) return NULL;
    return Py_BuildValue("(kII)", (unsigned long)id, np, nc);
}

/* _engine_command(command, argument=b"") : frame a command (sequence id 0) into the
   output, as the driver's commands do. */
PyObject *Conn_engine_command(mc_conn *c, PyObject *args) {
    int cmd;
    Py_buffer view = {0};
    if (!PyArg_ParseTuple(args, "i|y*:_engine_command", &cmd, &view)) return NULL;
    if (c->io) { PyBuffer_Release(&view); return mc_raise(c->st->ProgrammingError, 0, "not in engine mode"); }
    if (engine_not_busy(c) < 0) { PyBuffer_Release(&view); return NULL; }
    int r = mc_conn_command(c, (uint8_t)cmd, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    if (r < 0) return NULL;
    Py_RETURN_NONE;
}

PyObject *Conn_engine_need(mc_conn *c, PyObject *noargs) {
    return PyLong_FromSize_t(c->need > c->rend - c->rpos ? c->need - (c->rend - c->rpos) : 0);
}
