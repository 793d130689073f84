/* A transport written in Python under the engine: the mc_io of mysqlc.aio.
 *
 * connect(transport=obj) attaches `obj` instead of opening a socket.  The engine calls it
 * through mc_py_io exactly where it would call the blocking socket (transport.c):
 *
 *   obj.wait(timeout) -> int     fill(): return once received bytes were given to the
 *                                engine (0), or say why not: 1 timed out, 2 end of stream,
 *                                3 an error (obj.errno holds its errno).  May raise.
 *   obj.write(data, timeout, block) -> int
 *                                flush(): hand `data` (bytes) to the stream; 0, 1 timed
 *                                out waiting for the peer to take it, 3 error.  block=False:
 *                                never wait (COM_QUIT on close).
 *   obj.close()                  end the stream at once.
 *   obj.fileno() -> int          the socket's descriptor (fileno(), `open`).
 *
 * The bytes themselves arrive without a copy: the object's receiver (an
 * asyncio.BufferedProtocol) asks Connection._transport_buffer(sizehint) for a memoryview
 * of the engine's receive space and reports Connection._transport_received(n).  It may do
 * so only while the connection is idle, the engine waits inside obj.wait() -- the points
 * where the blocking transport itself would receive -- or a write waits inside
 * obj.write(block=True): then the bytes go to the stash (c->stashing) and reach the engine
 * once the write is done, as the blocking transport reads while it writes.  The messages of
 * lost connections and timeouts are the blocking transport's, so both APIs raise the same
 * errors (CR_SERVER_LOST / CR_SERVER_GONE_ERROR with libmysqlclient's texts).
 */
#include "conn_internal.h"

/* "%g" of a timeout for the messages */
static void fmt_seconds(char *buf, size_t n, double s) { snprintf(buf, n, "%g", s); }

static long call_status(PyObject *r) {
    if (!r) return -1;
    long v = PyLong_AsLong(r);
    Py_DECREF(r);
    if (v == -1 && PyErr_Occurred()) return -1;
    return v;
}

static int obj_errno(mc_conn *c) {
    PyObject *e = PyObject_GetAttrString(c->pyio, "errno");
    if (!e) { PyErr_Clear(); return EIO; }
    long v = PyLong_AsLong(e);
    Py_DECREF(e);
    if (v == -1 && PyErr_Occurred()) { PyErr_Clear(); return EIO; }
    return (int)v;
}

/* The transport object raised: close the stream, keeping its exception.  -1. */
static int close_keeping_error(mc_conn *c) {
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    mc_conn_close_socket(c);
    PyErr_Restore(et, ev, tb);
    return -1;
}

/* The stream ended while reading: close, with the blocking transport's message. */
static int read_failed(mc_conn *c, long status, double to) {
    if (status < 0) return close_keeping_error(c);
    if (c->tls_handshaking) {
        /* inside the TLS handshake (mc_start_tls): the blocking transport's 2026 texts,
           and no on_abandon call -- no statement runs yet, so there is nothing to stop */
        const char *why = status == 1 ? "TLS handshake timed out"
                          : status == 2 ? "the server closed the connection"
                          : strerror(obj_errno(c));
        mc_conn_fatal(c, c->st->OperationalError, CR_SSL_CONNECTION_ERROR,
                      "SSL connection error: %s", why);
        return -1;
    }
    if (status == 1) {
        char tbuf[32];
        fmt_seconds(tbuf, sizeof(tbuf), to);
        mc_conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                      "Lost connection to server %s (read timed out after %s s)",
                      LOST_AT(c), tbuf);
        mc_conn_abandoned(c);   /* the statement the server may still run is stopped */
        return -1;
    }
    if (status == 2) {
        mc_conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                      "Lost connection to server %s", LOST_AT(c));
        return -1;
    }
    int err = obj_errno(c);
    mc_conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                  "Lost connection to server %s (%s)", LOST_AT(c), strerror(err));
    return -1;
}

static int write_bytes(mc_conn *c, int block) {
    const unsigned char *buf;
    size_t len;
    if (mc_engine_wire_out(c, &buf, &len) < 0) return -1;
    if (!len) { mc_engine_wire_sent(c); return 0; }
    PyObject *data = PyBytes_FromStringAndSize((const char *)buf, (Py_ssize_t)len);
    mc_engine_wire_sent(c);
    if (!data) return -1;
    /* a write that may wait for the peer: what arrives meanwhile goes to the stash (read
       while writing, as the blocking transport does), given to the engine once it is done */
    c->stashing = block;
    int status;
    if (PyObject_TypeCheck(c->pyio, c->st->AioStreamType)) {
        status = mc_aio_stream_write(c->pyio, data, c->write_timeout, block);
    } else {
        PyObject *r = PyObject_CallMethod(c->pyio, "write", "Odi", data, c->write_timeout,
                                          block);
        status = (int)call_status(r);
    }
    c->stashing = 0;
    Py_DECREF(data);
    if (status != 0) {
        c->stash_len = 0;
        return status;
    }
    return mc_stash_feed(c) < 0 ? -2 : 0;
}

static int py_flush(mc_conn *c) {
    if (c->fd < 0 || !c->pyio) {
        c->out.len = 0;
        mc_engine_wire_sent(c);
        mc_conn_raise_closed(c);
        return -1;
    }
    int status = write_bytes(c, !c->nowait);
    if (status == 0) return 0;
    if (status == -2) return -1;   /* the stash's bytes failed the engine: closed */
    if (status < 0) return close_keeping_error(c);
    if (status == 1) {
        mc_conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                      "Lost connection to server (write timed out)");
        return -1;
    }
    /* status 2 (the stream ended while the write waited to drain) or 3: the errno the
       stream recorded, EPIPE when it recorded none (an end of stream) */
    int err = obj_errno(c);
    if (!err) err = EPIPE;
    mc_conn_fatal(c, c->st->OperationalError, CR_SERVER_GONE_ERROR,
                  "Server has gone away (%s)", strerror(err));
    return -1;
}

/* Bytes for the server not written yet: the packets in c->out, the records in c->wout,
   or (under TLS) records the session made that are still in its write BIO (OpenSSL's, or
   the outgoing ssl.MemoryBIO of a Python session) -- the TLS handshake's ClientHello and
   Finished are only there. */
static int wire_pending(mc_conn *c) {
    return c->out.len || c->wout.len || (c->ssl && BIO_ctrl_pending(SSL_get_wbio(c->ssl))) ||
           (c->pytls && mc_pytls_pending_out(c));
}

static int py_fill(mc_conn *c) {
    if (wire_pending(c) && py_flush(c) < 0) return -1;
    if (c->fd < 0 || !c->pyio) {
        mc_conn_raise_closed(c);
        return -1;
    }
    if (mc_conn_check_signals(c) < 0) return -1;
    double to = c->read_timeout;
    long status = call_status(PyObject_CallMethod(c->pyio, "wait", "d", to));
    if (status == 0) return 0;
    return read_failed(c, status, to);
}

/* drain(): 1 bytes arrived, 0 none within `seconds`, -1 the stream ended (closed). */
static int py_wait(mc_conn *c, double seconds) {
    if (c->fd < 0 || !c->pyio) {
        mc_conn_raise_closed(c);
        return -1;
    }
    long status = call_status(PyObject_CallMethod(c->pyio, "wait", "d", seconds));
    if (status == 0) return 1;
    if (status == 1) return 0;
    return read_failed(c, status, seconds);
}

static void py_close(mc_conn *c) {
    c->secure = 0;
    c->fd = -1;
    PyObject *io = c->pyio;
    if (!io) return;
    c->pyio = NULL;
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyObject *r = PyObject_CallMethod(io, "close", NULL);
    if (r) Py_DECREF(r);
    else PyErr_Clear();
    PyErr_Restore(et, ev, tb);
    Py_DECREF(io);
}

/* COM_QUIT on close: written without waiting; errors are dropped. */
void mc_py_send_nowait(mc_conn *c) {
    if (c->fd < 0 || !c->pyio) { c->out.len = 0; mc_engine_wire_sent(c); return; }
    if (write_bytes(c, 0) != 0) PyErr_Clear();
}

const mc_io mc_py_io = {py_fill, py_flush, py_close, py_wait};

/* Attach `obj` as the transport of a connection about to run its handshake. */
int mc_py_attach(mc_conn *c, PyObject *obj, int is_unix) {
    PyObject *r = PyObject_CallMethod(obj, "fileno", NULL);
    if (!r) return -1;
    long fd = PyLong_AsLong(r);
    Py_DECREF(r);
    if (fd == -1 && PyErr_Occurred()) return -1;
    if (fd < 0) {
        PyErr_SetString(PyExc_ValueError, "transport.fileno() must be a descriptor >= 0");
        return -1;
    }
    Py_XSETREF(c->pyio, Py_NewRef(obj));
    c->fd = (int)fd;
    c->io = &mc_py_io;
    c->is_unix = is_unix;
    c->secure = is_unix;
    return 0;
}

/* Where the receiver writes the next bytes: the engine's receive space (rbuf, or under TLS
   or compression the records' / frames' buffer), or the stash while a write waits.  `hint`
   <= 0: any amount.  0, or -1 with an exception. */
int mc_py_recv_space(mc_conn *c, Py_ssize_t hint, unsigned char **dst, size_t *room) {
    if (c->io != &mc_py_io || c->fd < 0) {
        mc_raise(c->st->ProgrammingError, 0, "no transport attached");
        return -1;
    }
    size_t min = hint > 0 ? (size_t)hint : 1;
    if (min > RBUF_INITIAL) min = RBUF_INITIAL;
    if (c->stashing) {   /* a write waits: the bytes are kept for after it */
        if (mc_stash_reserve(c, min < 65536 ? 65536 : min) < 0) {
            PyErr_NoMemory();
            return -1;
        }
        *dst = c->stash + c->stash_len;
        *room = c->stash_cap - c->stash_len;
        return 0;
    }
    return mc_engine_recv_buffer(c, min, dst, room);
}

/* n bytes were written where mc_py_recv_space() said.  0, or -1 with an exception (the
   engine's own: a TLS or inflate error closed the connection). */
int mc_py_recv_done(mc_conn *c, Py_ssize_t n) {
    if (c->io != &mc_py_io || c->fd < 0) {
        mc_raise(c->st->ProgrammingError, 0, "no transport attached");
        return -1;
    }
    if (n < 0) {
        PyErr_Format(PyExc_ValueError, "n must be >= 0");
        return -1;
    }
    if (c->stashing) {
        if ((size_t)n > c->stash_cap - c->stash_len) {
            PyErr_Format(PyExc_ValueError, "n is more than the buffer given");
            return -1;
        }
        c->stash_len += (size_t)n;
        return 0;
    }
    return n ? mc_engine_received(c, (size_t)n) : 0;
}

/* _transport_buffer(sizehint) -> memoryview: where the transport's receiver writes the
   next bytes (mc_py_recv_space).  Valid until _transport_received() or any other call on
   the connection. */
PyObject *Conn_transport_buffer(mc_conn *c, PyObject *arg) {
    Py_ssize_t hint = PyLong_AsSsize_t(arg);
    if (hint == -1 && PyErr_Occurred()) return NULL;
    unsigned char *dst;
    size_t room;
    if (mc_py_recv_space(c, hint, &dst, &room) < 0) return NULL;
    return PyMemoryView_FromMemory((char *)dst, (Py_ssize_t)room, PyBUF_WRITE);
}

/* _transport_received(n): n bytes were written where _transport_buffer() said. */
PyObject *Conn_transport_received(mc_conn *c, PyObject *arg) {
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    if (mc_py_recv_done(c, n) < 0) return NULL;
    Py_RETURN_NONE;
}
