/* The asyncio stream's C half: mysqlc._core.AioStream, the base of
 * mysqlc.aio._transport.StreamProtocol (an asyncio.BufferedProtocol).
 *
 * What runs once per statement lives here, so that no Python frame of the driver is on the
 * path between the socket and the engine:
 *
 *   get_buffer(sizehint)    asyncio receives into the engine's receive space (a
 *                           memoryview of it: mc_py_recv_space), or a scratch buffer
 *                           before the core is attached and after the stream ended;
 *   buffer_updated(n)       the bytes given to the engine (mc_py_recv_done), the waiting
 *                           future settled, or reading paused at HIGH_WATER;
 *   wait_future()           the future the event-loop-driven statement awaits
 *                           (mysqlc/aio/_statement.py);
 *   mc_aio_stream_write()   the engine's bytes to transport.write, called from
 *                           transport_py.c without a method lookup.
 *
 * The rest (connection_made, connection_lost, eof_received, pause/resume_writing, the
 * greenlet path's wait(), a write that must wait for the peer, close) is the Python
 * subclass's: it runs once per connection or on a rare path.  The Python side reads and
 * writes the same state through the members below (their Python names are those the
 * Python class had), so either half may change it.
 *
 * Status codes are transport_py.c's: 0 done, 1 timed out, 2 end of stream, 3 error.
 */
#include "conn_internal.h"
#include <structmember.h>
#include <errno.h>
#include <sys/socket.h>

/* bytes received while nobody waited (an unbuffered result read row by row) after which
   reading pauses until the next wait: the kernel's socket buffers then hold the server
   back, as with the blocking transport */
#define AIO_HIGH_WATER ((Py_ssize_t)1 << 20)

typedef struct {
    PyObject_HEAD
    mc_state *st;
    PyObject *loop;
    PyObject *core;          /* the engine (_core.Connection) receiving the bytes, or None */
    PyObject *transport;     /* the asyncio transport, or None once it is lost */
    PyObject *waiter;        /* the future a wait awaits, or None */
    PyObject *drain;         /* the future a blocked write awaits, or None */
    PyObject *exc;           /* what the engine raised on received bytes, kept for the
                                next wait, or None */
    PyObject *early;         /* bytearray: bytes received before the core was attached */
    PyObject *scratch;       /* bytearray: receives what nobody will read */
    PyObject *future_class;  /* asyncio.Future where the loop's create_future() is
                                asyncio's own (called directly), else None */
    PyObject *twrite;        /* transport.write, kept by connection_made */
    int err;                 /* errno of the error that ended the stream (status 3) */
    int state;               /* 0 open, else the status that ended the stream (2 / 3) */
    int paused;              /* asyncio asked us to stop writing (pause_writing) */
    int held;                /* reading paused at AIO_HIGH_WATER */
    int writing;             /* a write waits for the drain (bytes go to the stash) */
    int fd;                  /* the socket's descriptor when the stream opened, or -1 */
    int reader;              /* the loop calls _on_readable (a selector loop), not the
                                transport's reader; writes go to the socket first */
    int wdirty;              /* reader mode: bytes were handed to the transport, which may
                                still hold some (direct sends wait until it is empty) */
    Py_ssize_t unasked;      /* bytes received since the engine last waited */
} aio_stream;

static inline int absent(PyObject *o) { return o == NULL || o == Py_None; }

/* The engine behind the stream, or NULL (none attached, or not a _core.Connection). */
static mc_conn *stream_core(aio_stream *s) {
    PyObject *core = s->core;
    if (absent(core) || !s->st || !PyObject_TypeCheck(core, s->st->ConnectionType)) return NULL;
    return (mc_conn *)core;
}

/* fut.set_result(status) unless fut is done.  0, or -1 with an exception. */
static int settle(mc_state *st, PyObject *fut, int status) {
    PyObject *done = PyObject_CallMethodNoArgs(fut, st->s_done);
    if (!done) return -1;
    int is_done = PyObject_IsTrue(done);
    Py_DECREF(done);
    if (is_done < 0) return -1;
    if (is_done) return 0;
    PyObject *v = PyLong_FromLong(status);
    if (!v) return -1;
    PyObject *r = PyObject_CallMethodOneArg(fut, st->s_set_result, v);
    Py_DECREF(v);
    if (!r) return -1;
    Py_DECREF(r);
    return 0;
}

/* The engine raised on received bytes (a TLS or inflate error: it closed itself): the
   exception is kept for the engine's next wait, which raises it (_received_error), not
   raised here in the event loop's callback.  None, or NULL with an exception. */
static PyObject *keep_error(aio_stream *s) {
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyErr_NormalizeException(&et, &ev, &tb);
    if (!ev) {
        Py_XDECREF(et);
        Py_XDECREF(tb);
        Py_RETURN_NONE;
    }
    if (tb) PyException_SetTraceback(ev, tb);
    Py_XDECREF(et);
    Py_XDECREF(tb);
    PyObject *r = PyObject_CallMethod((PyObject *)s, "_received_error", "O", ev);
    Py_DECREF(ev);
    return r;
}

/* n bytes arrived where mc_py_recv_space() said: given to the engine, the waiting future
   settled, or reading held at AIO_HIGH_WATER while nobody waits. */
static PyObject *received(aio_stream *s, mc_conn *c, Py_ssize_t n) {
    if (mc_py_recv_done(c, n) < 0) return keep_error(s);
    PyObject *waiter = s->waiter;
    if (!absent(waiter)) {
        s->waiter = Py_NewRef(Py_None);
        int rc = settle(s->st, waiter, 0);
        Py_DECREF(waiter);
        if (rc < 0) return NULL;
    } else if (!s->writing) {
        s->unasked += n;
        if (s->unasked > AIO_HIGH_WATER && !s->held && !absent(s->transport)) {
            s->held = 1;
            PyObject *r = PyObject_CallMethod((PyObject *)s, "_pause_reading", NULL);
            if (!r) return NULL;
            Py_DECREF(r);
        }
    }
    Py_RETURN_NONE;
}


/* get_buffer(sizehint) -> a writable buffer asyncio receives into */
static PyObject *stream_get_buffer(aio_stream *s, PyObject *arg) {
    Py_ssize_t hint = PyLong_AsSsize_t(arg);
    if (hint == -1 && PyErr_Occurred()) return NULL;
    mc_conn *c = s->state ? NULL : stream_core(s);
    if (!c) return Py_NewRef(s->scratch ? s->scratch : Py_None);
    unsigned char *dst;
    size_t room;
    if (mc_py_recv_space(c, hint, &dst, &room) < 0) return NULL;
    return PyMemoryView_FromMemory((char *)dst, (Py_ssize_t)room, PyBUF_WRITE);
}

/* buffer_updated(nbytes): nbytes arrived where get_buffer() said */
static PyObject *stream_buffer_updated(aio_stream *s, PyObject *arg) {
    Py_ssize_t n = PyLong_AsSsize_t(arg);
    if (n == -1 && PyErr_Occurred()) return NULL;
    mc_conn *c = s->state ? NULL : stream_core(s);
    if (!c) {   /* before the core was attached (kept), or after the end (dropped) */
        if (s->state || absent(s->early) || absent(s->scratch)) Py_RETURN_NONE;
        PyObject *part = PySequence_GetSlice(s->scratch, 0, n);
        if (!part) return NULL;
        PyObject *r = PyNumber_InPlaceAdd(s->early, part);
        Py_DECREF(part);
        if (!r) return NULL;
        Py_DECREF(r);
        Py_RETURN_NONE;
    }
    return received(s, c, n);
}

/* _on_readable(): the event loop's reader callback on the socket (asyncio's selector
   loops: StreamProtocol.attach registers it in place of the transport's own reader).  One
   recv() straight into the engine's receive space, then as buffer_updated. */
static PyObject *stream_on_readable(aio_stream *s, PyObject *Py_UNUSED(ignored)) {
    mc_conn *c = s->state ? NULL : stream_core(s);
    if (!c || s->fd < 0) Py_RETURN_NONE;
    unsigned char *dst;
    size_t room;
    if (mc_py_recv_space(c, -1, &dst, &room) < 0) return keep_error(s);
    ssize_t n;
    do {
        n = recv(s->fd, dst, room, 0);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) Py_RETURN_NONE;
        return PyObject_CallMethod((PyObject *)s, "_read_failed", "i", errno);
    }
    if (n == 0) return PyObject_CallMethod((PyObject *)s, "_read_failed", "i", 0);
    return received(s, c, (Py_ssize_t)n);
}

/* wait_future() -> a future settled with a status when bytes were given to the engine or
   the stream ended; what the event-loop-driven statement awaits.  Reading resumes if it
   was held. */
static PyObject *stream_wait_future(aio_stream *s, PyObject *Py_UNUSED(ignored)) {
    s->unasked = 0;
    if (s->held) {
        s->held = 0;
        PyObject *r = PyObject_CallMethod((PyObject *)s, "_resume_reading", NULL);
        if (!r) return NULL;
        Py_DECREF(r);
    }
    PyObject *fut;
    if (!absent(s->future_class)) {
        PyObject *args[1] = {s->loop};   /* asyncio.Future(loop=loop) */
        fut = PyObject_Vectorcall(s->future_class, args, 0, s->st->s_loop_kw);
    } else {
        fut = PyObject_CallMethod(s->loop, "create_future", NULL);
    }
    if (!fut) return NULL;
    Py_SETREF(s->waiter, Py_NewRef(fut));
    if (s->state && settle(s->st, fut, s->state) < 0) {
        Py_DECREF(fut);
        return NULL;
    }
    return fut;
}

/* The engine's bytes for the server (transport_py.c write_bytes): 0 once asyncio took them
   (and, when `block`, once its buffer is below the high-water mark again: the Python
   half's _write_wait), 1 when that did not happen within `timeout` seconds, 3 when the
   stream is gone; -1 with an exception. */
int mc_aio_stream_write(PyObject *stream, PyObject *data, double timeout, int block) {
    aio_stream *s = (aio_stream *)stream;
    if (absent(s->transport) || s->state) {
        if (!s->err) s->err = EPIPE;
        return 3;
    }
    PyObject *rest = NULL;
    if (s->reader && s->wdirty) {
        /* bytes handed to the transport before may still be in its buffer: send
           directly again only once it is empty, so that the order is kept */
        PyObject *r = PyObject_CallMethodNoArgs(s->transport, s->st->s_write_buffer_size);
        if (!r) return -1;
        Py_ssize_t left = PyLong_AsSsize_t(r);
        Py_DECREF(r);
        if (left == -1 && PyErr_Occurred()) return -1;
        if (left == 0) s->wdirty = 0;
    }
    if (s->reader && !s->wdirty) {
        /* a selector loop whose reader is ours (StreamProtocol.attach): the socket is
           written here, as asyncio's transport itself would first try; what the kernel
           does not take goes to the transport, which waits for the socket to drain */
        const char *p = PyBytes_AS_STRING(data);
        size_t len = (size_t)PyBytes_GET_SIZE(data);
        ssize_t n;
        do {
            n = send(s->fd, p, len, MSG_NOSIGNAL);
        } while (n < 0 && errno == EINTR);
        if (n < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                s->err = errno;
                return 3;
            }
            n = 0;
        }
        if ((size_t)n == len) return 0;
        rest = PyBytes_FromStringAndSize(p + n, (Py_ssize_t)(len - (size_t)n));
        if (!rest) return -1;
        s->wdirty = 1;
        data = rest;
    }
    PyObject *closing = PyObject_CallMethodNoArgs(s->transport, s->st->s_is_closing);
    if (!closing) { Py_XDECREF(rest); return -1; }
    int is_closing = PyObject_IsTrue(closing);
    Py_DECREF(closing);
    if (is_closing < 0) { Py_XDECREF(rest); return -1; }
    if (is_closing) {
        Py_XDECREF(rest);
        if (!s->err) s->err = EPIPE;
        return 3;
    }
    PyObject *r = absent(s->twrite) ? PyObject_CallMethod(s->transport, "write", "O", data)
                                    : PyObject_CallOneArg(s->twrite, data);
    Py_XDECREF(rest);
    if (!r) return -1;
    Py_DECREF(r);
    if (!(block && s->paused)) return 0;
    /* asyncio's buffer is above its high-water mark: wait for the drain (Python half) */
    r = PyObject_CallMethod(stream, "_write_wait", "d", timeout);
    if (!r) return -1;
    long v = PyLong_AsLong(r);
    Py_DECREF(r);
    if (v == -1 && PyErr_Occurred()) return -1;
    return (int)v;
}

static PyObject *stream_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
    (void)args;
    (void)kw;
    aio_stream *s = (aio_stream *)tp->tp_alloc(tp, 0);
    if (!s) return NULL;
    s->fd = -1;
    /* the module state: found on the first type of the MRO made from this file's spec
       (a Python subclass has none of its own) */
    for (PyTypeObject *t = tp; t; t = t->tp_base) {
        if (t->tp_new == stream_new && (t->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
            PyObject *m = PyType_GetModule(t);
            if (m) {
                s->st = (mc_state *)PyModule_GetState(m);
                break;
            }
            PyErr_Clear();
        }
    }
    if (!s->st) {
        Py_DECREF(s);
        PyErr_SetString(PyExc_TypeError, "AioStream: module state not found");
        return NULL;
    }
    return (PyObject *)s;
}

static int stream_traverse(aio_stream *s, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(s));
    Py_VISIT(s->loop); Py_VISIT(s->core); Py_VISIT(s->transport); Py_VISIT(s->waiter);
    Py_VISIT(s->drain); Py_VISIT(s->exc); Py_VISIT(s->early); Py_VISIT(s->scratch);
    Py_VISIT(s->future_class); Py_VISIT(s->twrite);
    return 0;
}

static int stream_clear(aio_stream *s) {
    Py_CLEAR(s->loop); Py_CLEAR(s->core); Py_CLEAR(s->transport); Py_CLEAR(s->waiter);
    Py_CLEAR(s->drain); Py_CLEAR(s->exc); Py_CLEAR(s->early); Py_CLEAR(s->scratch);
    Py_CLEAR(s->future_class); Py_CLEAR(s->twrite);
    return 0;
}

static void stream_dealloc(aio_stream *s) {
    PyTypeObject *tp = Py_TYPE(s);
    PyObject_GC_UnTrack(s);
    stream_clear(s);
    tp->tp_free((PyObject *)s);
    Py_DECREF(tp);
}

static PyMethodDef stream_methods[] = {
    {"get_buffer", (PyCFunction)stream_get_buffer, METH_O,
     "get_buffer(sizehint) -> the writable buffer asyncio receives the next bytes into"},
    {"buffer_updated", (PyCFunction)stream_buffer_updated, METH_O,
     "buffer_updated(nbytes): nbytes arrived in get_buffer()'s buffer"},
    {"_on_readable", (PyCFunction)stream_on_readable, METH_NOARGS,
     "_on_readable(): the event loop's reader callback: one recv() into the engine"},
    {"wait_future", (PyCFunction)stream_wait_future, METH_NOARGS,
     "wait_future() -> a future settled with a status (0 bytes given to the engine, 2 end"
     " of stream, 3 error) once the engine has new bytes or the stream ended"},
    {NULL, NULL, 0, NULL},
};

#define MEMBER(name, type, field) {name, type, offsetof(aio_stream, field), 0, NULL}
static PyMemberDef stream_members[] = {
    MEMBER("loop", T_OBJECT, loop),
    MEMBER("core", T_OBJECT, core),
    MEMBER("transport", T_OBJECT, transport),
    MEMBER("_waiter", T_OBJECT, waiter),
    MEMBER("_drain", T_OBJECT, drain),
    MEMBER("_exc", T_OBJECT, exc),
    MEMBER("_early", T_OBJECT, early),
    MEMBER("_scratch", T_OBJECT, scratch),
    MEMBER("_future_class", T_OBJECT, future_class),
    MEMBER("_twrite", T_OBJECT, twrite),
    MEMBER("errno", T_INT, err),
    MEMBER("_state", T_INT, state),
    MEMBER("_paused", T_INT, paused),
    MEMBER("_held", T_INT, held),
    MEMBER("_writing", T_INT, writing),
    MEMBER("_fd", T_INT, fd),
    MEMBER("_reader", T_INT, reader),
    MEMBER("_wdirty", T_INT, wdirty),
    MEMBER("_unasked", T_PYSSIZET, unasked),
    {NULL, 0, 0, 0, NULL},
};
#undef MEMBER

static PyType_Slot stream_slots[] = {
    {Py_tp_new, stream_new},
    {Py_tp_dealloc, stream_dealloc},
    {Py_tp_traverse, stream_traverse},
    {Py_tp_clear, stream_clear},
    {Py_tp_methods, stream_methods},
    {Py_tp_members, stream_members},
    {Py_tp_doc, "The per-statement half of mysqlc.aio's stream protocol, in C (see"
                " mysqlc/aio/_transport.py StreamProtocol, its subclass)."},
    {0, NULL},
};

static PyType_Spec stream_spec = {
    .name = "mysqlc._core.AioStream",
    .basicsize = sizeof(aio_stream),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = stream_slots,
};

int mc_aio_stream_add_type(PyObject *module) {
    mc_state *st = mc_state_from_module(module);
    st->s_done = PyUnicode_InternFromString("done");
    st->s_set_result = PyUnicode_InternFromString("set_result");
    st->s_is_closing = PyUnicode_InternFromString("is_closing");
    st->s_write_buffer_size = PyUnicode_InternFromString("get_write_buffer_size");
    st->s_loop_kw = Py_BuildValue("(s)", "loop");
    if (!st->s_done || !st->s_set_result || !st->s_is_closing || !st->s_loop_kw ||
        !st->s_write_buffer_size)
        return -1;
    st->AioStreamType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &stream_spec, NULL);
    if (!st->AioStreamType) return -1;
    Py_INCREF(st->AioStreamType);
    if (PyModule_AddObject(module, "AioStream", (PyObject *)st->AioStreamType) < 0) {
        Py_DECREF(st->AioStreamType);
        return -1;
    }
    return 0;
}
