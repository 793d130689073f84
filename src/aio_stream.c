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
    PyObject *done_future;   /* a done asyncio.Future (result None) for the waiters'
                                task wake-ups (run_callback), made at the first wait;
                                None where none can be made */
    int err;                 /* errno of the error that ended the stream (status 3) */
    int state;               /* 0 open, else the status that ended the stream (2 / 3) */
    int paused;              /* asyncio asked us to stop writing (pause_writing) */
    int held;                /* reading paused at AIO_HIGH_WATER */
    int writing;             /* a write waits for the drain (bytes go to the stash) */
    int fd;                  /* the socket's descriptor when the stream opened, or -1 */
    int reader;              /* the loop calls _on_readable (a selector loop), not the
                                transport's reader; writes go to the socket first */
    int fast_waiter;         /* wait_future() gives an AioWaiter (else an asyncio future) */
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

/* ---------------------------------------------------------------- the waiter
 *
 * _core.AioWaiter: what wait_future() returns, a future in asyncio's sense (the methods
 * and the _asyncio_future_blocking protocol an asyncio Task and asyncio.wait() use) whose
 * completion by the stream's reader runs its done callbacks at once instead of through
 * loop.call_soon().  The awaiting task's wake-up then runs in the same turn of the event
 * loop as the bytes that completed its wait: one loop iteration per statement, not two.
 * Only the reader does that (received(): the loop's own callback, when no task is
 * running); set_result() and cancel(), which code inside a task may call, schedule the
 * callbacks with call_soon() as asyncio.Future does.  Each callback runs in the context
 * it was added with. */
typedef struct {
    PyObject_HEAD
    PyObject *loop;
    PyObject *cb0, *ctx0;   /* the first done callback and its context (a task's wake-up,
                               usually the only one), or NULL */
    PyObject *callbacks;    /* list of further (fn, context) pairs, or NULL */
    PyObject *result;       /* once finished */
    PyObject *cancel_msg;
    PyObject *done;         /* the stream's done_future, or NULL (run_callback) */
    int state;              /* 0 pending, 1 finished, 2 cancelled */
    int blocking;           /* _asyncio_future_blocking */
} aio_waiter;

static PyObject *asyncio_attr(const char *name) {
    PyObject *m = PyImport_ImportModule("asyncio");
    if (!m) return NULL;
    PyObject *r = PyObject_GetAttrString(m, name);
    Py_DECREF(m);
    return r;
}

static PyObject *raise_asyncio(const char *cls, PyObject *msg) {
    PyObject *c = asyncio_attr(cls);
    if (!c) return NULL;
    if (msg && msg != Py_None) PyErr_SetObject(c, msg);
    else PyErr_SetNone(c);
    Py_DECREF(c);
    return NULL;
}

/* Every callback as a new list of (fn, context) pairs, the first one first, taken out of
   the waiter (which then has none); NULL with an exception. */
static PyObject *take_callbacks(aio_waiter *w) {
    PyObject *all = w->callbacks ? w->callbacks : PyList_New(0);
    w->callbacks = NULL;
    if (!all) return NULL;
    if (w->cb0) {
        PyObject *pair = PyTuple_Pack(2, w->cb0, w->ctx0);
        Py_CLEAR(w->cb0);
        Py_CLEAR(w->ctx0);
        if (!pair || PyList_Insert(all, 0, pair) < 0) {
            Py_XDECREF(pair);
            Py_DECREF(all);
            return NULL;
        }
        Py_DECREF(pair);
    }
    return all;
}

/* The callbacks through loop.call_soon(fn, self, context=ctx), as asyncio.Future. */
static int waiter_schedule(aio_waiter *w) {
    if (!w->cb0 && !w->callbacks) return 0;
    PyObject *cbs = take_callbacks(w);
    if (!cbs) return -1;
    int rc = 0;
    PyObject *call_soon = PyObject_GetAttrString(w->loop, "call_soon");
    if (!call_soon) { Py_DECREF(cbs); return -1; }
    PyObject *kwnames = Py_BuildValue("(s)", "context");
    if (!kwnames) rc = -1;
    for (Py_ssize_t i = 0; rc == 0 && i < PyList_GET_SIZE(cbs); i++) {
        PyObject *pair = PyList_GET_ITEM(cbs, i);
        PyObject *args[3] = {PyTuple_GET_ITEM(pair, 0), (PyObject *)w, PyTuple_GET_ITEM(pair, 1)};
        PyObject *r = PyObject_Vectorcall(call_soon, args, 2, kwnames);
        if (!r) rc = -1;
        else Py_DECREF(r);
    }
    Py_XDECREF(kwnames);
    Py_DECREF(call_soon);
    Py_DECREF(cbs);
    return rc;
}

/* Is fn the wake-up an asyncio Task (C, 3.10+) gave add_done_callback: the builtin
   method "task_wakeup" bound to the task?  Called with a future, it looks at that
   future only for its exception: done with a result, it resumes the task with nothing
   sent in (the coroutine then reads the result from what it awaits).  With an exact
   asyncio.Future it reads that directly; with any other object it calls its result()
   through a method lookup (about 1,400 instructions per statement). */
static int is_task_wakeup(PyObject *fn) {
    if (!PyCFunction_Check(fn)) return 0;
    PyCFunctionObject *f = (PyCFunctionObject *)fn;
    return f->m_self != NULL && f->m_ml && f->m_ml->ml_name &&
           strcmp(f->m_ml->ml_name, "task_wakeup") == 0;
}

/* fn(w) in `ctx` now (as asyncio.Handle._run runs a callback): 0; -1 with SystemExit or
   KeyboardInterrupt (which a task lets through); anything else fn raises goes to the
   loop's exception handler.  A context entered already: fn through call_soon.  A task's
   wake-up, the waiter finished with a result, gets the stream's done future instead of
   the waiter (is_task_wakeup: the same resumption, without the result() call). */
static int run_callback(aio_waiter *w, PyObject *fn, PyObject *ctx) {
    int entered = 0;
    if (PyContext_CheckExact(ctx)) {
        if (PyContext_Enter(ctx) < 0) {
            PyErr_Clear();
            PyObject *args[3] = {fn, (PyObject *)w, ctx};
            PyObject *call_soon = PyObject_GetAttrString(w->loop, "call_soon");
            if (!call_soon) return -1;
            PyObject *kwnames = Py_BuildValue("(s)", "context");
            PyObject *r = kwnames ? PyObject_Vectorcall(call_soon, args, 2, kwnames) : NULL;
            Py_XDECREF(kwnames);
            Py_DECREF(call_soon);
            if (!r) return -1;
            Py_DECREF(r);
            return 0;
        }
        entered = 1;
    }
    PyObject *arg = (w->state == 1 && w->done && is_task_wakeup(fn)) ? w->done
                                                                      : (PyObject *)w;
    PyObject *r = PyObject_CallOneArg(fn, arg);
    if (entered && PyContext_Exit(ctx) < 0 && r) { Py_DECREF(r); r = NULL; }
    if (r) { Py_DECREF(r); return 0; }
    if (PyErr_ExceptionMatches(PyExc_SystemExit) ||
        PyErr_ExceptionMatches(PyExc_KeyboardInterrupt))
        return -1;
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyErr_NormalizeException(&et, &ev, &tb);
    if (tb && ev) PyException_SetTraceback(ev, tb);
    PyObject *ctxd = Py_BuildValue("{s:s,s:O}", "message",
                                   "Exception in a callback of a mysqlc stream's waiter",
                                   "exception", ev ? ev : Py_None);
    Py_XDECREF(et); Py_XDECREF(ev); Py_XDECREF(tb);
    if (!ctxd) return -1;
    PyObject *h = PyObject_CallMethod(w->loop, "call_exception_handler", "O", ctxd);
    Py_DECREF(ctxd);
    if (!h) return -1;
    Py_DECREF(h);
    return 0;
}

/* Finished by the stream's reader: the callbacks run now, each in its context
   (run_callback).  0, or -1 with an exception (SystemExit / KeyboardInterrupt). */
static int waiter_finish_now(aio_waiter *w, int status) {
    if (w->state) return 0;
    PyObject *v = PyLong_FromLong(status);
    if (!v) return -1;
    w->state = 1;
    w->result = v;
    int rc = 0;
    Py_INCREF(w);
    if (w->cb0 && !w->callbacks) {   /* the common case: one task waits */
        PyObject *fn = w->cb0, *ctx = w->ctx0;
        w->cb0 = w->ctx0 = NULL;
        rc = run_callback(w, fn, ctx);
        Py_DECREF(fn);
        Py_DECREF(ctx);
    } else if (w->cb0 || w->callbacks) {
        PyObject *cbs = take_callbacks(w);
        if (!cbs) rc = -1;
        Py_ssize_t i = 0;
        for (; rc == 0 && i < PyList_GET_SIZE(cbs); i++) {
            PyObject *pair = PyList_GET_ITEM(cbs, i);
            rc = run_callback(w, PyTuple_GET_ITEM(pair, 0), PyTuple_GET_ITEM(pair, 1));
        }
        if (rc < 0 && cbs && i < PyList_GET_SIZE(cbs)) {
            /* the rest still run, through call_soon, as asyncio.Future's would */
            PyObject *et, *ev, *tb;
            PyErr_Fetch(&et, &ev, &tb);
            PyObject *rest = PyList_GetSlice(cbs, i, PyList_GET_SIZE(cbs));
            if (rest) {
                w->callbacks = rest;
                if (waiter_schedule(w) < 0) PyErr_WriteUnraisable((PyObject *)w);
            } else {
                PyErr_WriteUnraisable((PyObject *)w);
            }
            PyErr_Restore(et, ev, tb);
        }
        Py_XDECREF(cbs);
    }
    Py_DECREF(w);
    return rc;
}

static PyObject *waiter_done(aio_waiter *w, PyObject *Py_UNUSED(x)) {
    return PyBool_FromLong(w->state != 0);
}

static PyObject *waiter_cancelled(aio_waiter *w, PyObject *Py_UNUSED(x)) {
    return PyBool_FromLong(w->state == 2);
}

static PyObject *waiter_result(aio_waiter *w, PyObject *Py_UNUSED(x)) {
    if (w->state == 1) return Py_NewRef(w->result);
    if (w->state == 2) return raise_asyncio("CancelledError", w->cancel_msg);
    PyObject *msg = PyUnicode_FromString("Result is not set.");
    if (!msg) return NULL;
    raise_asyncio("InvalidStateError", msg);
    Py_DECREF(msg);
    return NULL;
}

static PyObject *waiter_exception(aio_waiter *w, PyObject *Py_UNUSED(x)) {
    if (w->state == 1) Py_RETURN_NONE;
    return waiter_result(w, NULL);
}

static PyObject *waiter_get_loop(aio_waiter *w, PyObject *Py_UNUSED(x)) {
    return Py_NewRef(w->loop);
}

/* add_done_callback(fn, *, context=None) (METH_FASTCALL: a task calls it per await) */
static PyObject *waiter_add_done_callback(aio_waiter *w, PyObject *const *args, Py_ssize_t nargs,
                                          PyObject *kwnames) {
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs != 1 || nkw > 1 ||
        (nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "context"))) {
        PyErr_SetString(PyExc_TypeError,
                        "add_done_callback(fn, *, context=None) takes one callable");
        return NULL;
    }
    PyObject *fn = args[0];
    PyObject *ctx = nkw ? args[1] : Py_None;
    PyObject *own = NULL;
    if (ctx == Py_None) {
        own = PyContext_CopyCurrent();
        if (!own) return NULL;
        ctx = own;
    }
    if (!w->cb0 && !w->callbacks) {
        w->cb0 = Py_NewRef(fn);
        w->ctx0 = Py_NewRef(ctx);
    } else {
        PyObject *pair = PyTuple_Pack(2, fn, ctx);
        if (!pair) { Py_XDECREF(own); return NULL; }
        if (!w->callbacks && !(w->callbacks = PyList_New(0))) {
            Py_DECREF(pair);
            Py_XDECREF(own);
            return NULL;
        }
        int rc = PyList_Append(w->callbacks, pair);
        Py_DECREF(pair);
        if (rc < 0) { Py_XDECREF(own); return NULL; }
    }
    Py_XDECREF(own);
    if (w->state && waiter_schedule(w) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *waiter_remove_done_callback(aio_waiter *w, PyObject *fn) {
    Py_ssize_t removed = 0;
    if (!w->cb0 && !w->callbacks) return PyLong_FromSsize_t(0);
    PyObject *cbs = take_callbacks(w);
    if (!cbs) return NULL;
    PyObject *keep = PyList_New(0);
    if (!keep) { Py_DECREF(cbs); return NULL; }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(cbs); i++) {
        PyObject *pair = PyList_GET_ITEM(cbs, i);
        int eq = PyObject_RichCompareBool(PyTuple_GET_ITEM(pair, 0), fn, Py_EQ);
        if (eq < 0 || (!eq && PyList_Append(keep, pair) < 0)) {
            w->callbacks = cbs;   /* (nothing removed: keep them all) */
            Py_DECREF(keep);
            return NULL;
        }
        if (eq) removed++;
    }
    Py_DECREF(cbs);
    if (PyList_GET_SIZE(keep)) w->callbacks = keep;
    else Py_DECREF(keep);
    return PyLong_FromSsize_t(removed);
}

static PyObject *waiter_cancel(aio_waiter *w, PyObject *args, PyObject *kw) {
    static char *names[] = {"msg", NULL};
    PyObject *msg = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O:cancel", names, &msg)) return NULL;
    if (w->state) Py_RETURN_FALSE;
    w->state = 2;
    Py_XSETREF(w->cancel_msg, Py_NewRef(msg));
    if (waiter_schedule(w) < 0) return NULL;
    Py_RETURN_TRUE;
}

static PyObject *waiter_set_result(aio_waiter *w, PyObject *v) {
    if (w->state) {
        PyObject *msg = PyUnicode_FromString("invalid state");
        if (!msg) return NULL;
        raise_asyncio("InvalidStateError", msg);
        Py_DECREF(msg);
        return NULL;
    }
    w->state = 1;
    Py_XSETREF(w->result, Py_NewRef(v));
    if (waiter_schedule(w) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *waiter_get_blocking(aio_waiter *w, void *Py_UNUSED(x)) {
    return PyBool_FromLong(w->blocking);
}

static int waiter_set_blocking(aio_waiter *w, PyObject *v, void *Py_UNUSED(x)) {
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "cannot delete _asyncio_future_blocking");
        return -1;
    }
    int b = PyObject_IsTrue(v);
    if (b < 0) return -1;
    w->blocking = b;
    return 0;
}

static PyObject *waiter_await(aio_waiter *w) { return Py_NewRef((PyObject *)w); }

/* the await: yields the waiter while it is pending (to the task, as
   asyncio.Future.__await__; every coroutine awaiting it gets it), then ends with its
   result */
static PyObject *waiter_next(aio_waiter *w) {
    if (w->state == 0) {
        w->blocking = 1;
        return Py_NewRef((PyObject *)w);
    }
    PyObject *r = waiter_result(w, NULL);
    if (!r) return NULL;
    PyObject *stop = PyObject_CallOneArg(PyExc_StopIteration, r);
    Py_DECREF(r);
    if (!stop) return NULL;
    PyErr_SetObject(PyExc_StopIteration, stop);
    Py_DECREF(stop);
    return NULL;
}

/* _make_cancelled_error(): what asyncio.gather() asks a cancelled child future for */
static PyObject *waiter_make_cancelled_error(aio_waiter *w, PyObject *Py_UNUSED(x)) {
    PyObject *cls = asyncio_attr("CancelledError");
    if (!cls) return NULL;
    PyObject *exc = (w->cancel_msg && w->cancel_msg != Py_None)
                        ? PyObject_CallOneArg(cls, w->cancel_msg) : PyObject_CallNoArgs(cls);
    Py_DECREF(cls);
    return exc;
}

static int waiter_traverse(aio_waiter *w, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(w));
    Py_VISIT(w->loop); Py_VISIT(w->cb0); Py_VISIT(w->ctx0); Py_VISIT(w->callbacks);
    Py_VISIT(w->result); Py_VISIT(w->cancel_msg); Py_VISIT(w->done);
    return 0;
}

static int waiter_clear(aio_waiter *w) {
    Py_CLEAR(w->loop); Py_CLEAR(w->cb0); Py_CLEAR(w->ctx0); Py_CLEAR(w->callbacks);
    Py_CLEAR(w->result); Py_CLEAR(w->cancel_msg); Py_CLEAR(w->done);
    return 0;
}

static void waiter_dealloc(aio_waiter *w) {
    PyTypeObject *tp = Py_TYPE(w);
    PyObject_GC_UnTrack(w);
    waiter_clear(w);
    tp->tp_free((PyObject *)w);
    Py_DECREF(tp);
}

static PyMethodDef waiter_methods[] = {
    {"done", (PyCFunction)waiter_done, METH_NOARGS, NULL},
    {"cancelled", (PyCFunction)waiter_cancelled, METH_NOARGS, NULL},
    {"result", (PyCFunction)waiter_result, METH_NOARGS, NULL},
    {"exception", (PyCFunction)waiter_exception, METH_NOARGS, NULL},
    {"get_loop", (PyCFunction)waiter_get_loop, METH_NOARGS, NULL},
    {"add_done_callback", (PyCFunction)(void (*)(void))waiter_add_done_callback,
     METH_FASTCALL | METH_KEYWORDS, NULL},
    {"remove_done_callback", (PyCFunction)waiter_remove_done_callback, METH_O, NULL},
    {"cancel", (PyCFunction)(void (*)(void))waiter_cancel, METH_VARARGS | METH_KEYWORDS, NULL},
    {"set_result", (PyCFunction)waiter_set_result, METH_O, NULL},
    {"_make_cancelled_error", (PyCFunction)waiter_make_cancelled_error, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef waiter_getset[] = {
    {"_asyncio_future_blocking", (getter)waiter_get_blocking, (setter)waiter_set_blocking,
     NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot waiter_slots[] = {
    {Py_tp_dealloc, waiter_dealloc},
    {Py_tp_traverse, waiter_traverse},
    {Py_tp_clear, waiter_clear},
    {Py_tp_methods, waiter_methods},
    {Py_tp_getset, waiter_getset},
    {Py_am_await, waiter_await},
    {Py_tp_iter, waiter_await},
    {Py_tp_iternext, waiter_next},
    {Py_tp_doc, "The future of AioStream.wait_future(): settled by the stream's reader, its"
                " done callbacks run at once (see src/aio_stream.c)."},
    {0, NULL},
};

static PyType_Spec waiter_spec = {
    .name = "mysqlc._core.AioWaiter",
    .basicsize = sizeof(aio_waiter),
#ifdef Py_TPFLAGS_DISALLOW_INSTANTIATION
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_DISALLOW_INSTANTIATION,
#else
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
#endif
    .slots = waiter_slots,
};

/* _asyncio.Future(loop=loop) with the result None, the C future a C task's wake-up reads
   directly: a new reference, or None (no error set) when it cannot be made (no
   _asyncio: the tasks are Python's then, and is_task_wakeup() never matches) */
static PyObject *make_done_future(PyObject *loop) {
    PyObject *f = NULL;
    PyObject *m = PyImport_ImportModule("_asyncio");
    PyObject *cls = m ? PyObject_GetAttrString(m, "Future") : NULL;
    Py_XDECREF(m);
    if (cls) {
        PyObject *kw = Py_BuildValue("(s)", "loop");
        PyObject *args[1] = {loop};
        f = kw ? PyObject_Vectorcall(cls, args, 0, kw) : NULL;
        Py_XDECREF(kw);
        if (f && Py_TYPE(f) != (PyTypeObject *)cls) Py_CLEAR(f);
        if (f) {
            PyObject *r = PyObject_CallMethod(f, "set_result", "O", Py_None);
            if (r) Py_DECREF(r);
            else Py_CLEAR(f);
        }
        Py_DECREF(cls);
    }
    if (!f) {
        PyErr_Clear();
        f = Py_NewRef(Py_None);
    }
    return f;
}

static PyObject *waiter_new(PyTypeObject *tp, PyObject *loop) {
    aio_waiter *w = PyObject_GC_New(aio_waiter, tp);
    if (!w) return NULL;   /* (it holds a reference to its heap type: _PyObject_Init) */
    w->loop = Py_NewRef(loop);
    w->cb0 = w->ctx0 = NULL;
    w->callbacks = NULL;
    w->result = NULL;
    w->cancel_msg = NULL;
    w->done = NULL;
    w->state = 0;
    w->blocking = 0;
    PyObject_GC_Track(w);
    return (PyObject *)w;
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
        /* an AioWaiter's task wakes up now, in this turn of the loop (the reader and
           buffer_updated are the loop's own callbacks: no task is running) */
        Py_INCREF(s);
        int rc = Py_IS_TYPE(waiter, s->st->AioWaiterType)
                     ? waiter_finish_now((aio_waiter *)waiter, 0) : settle(s->st, waiter, 0);
        Py_DECREF(waiter);
        if (rc < 0 && !s->reader && !absent(s->loop) &&
            (PyErr_ExceptionMatches(PyExc_SystemExit) ||
             PyErr_ExceptionMatches(PyExc_KeyboardInterrupt))) {
            /* the woken task let SystemExit / KeyboardInterrupt through, inside the
               transport's buffer_updated: a transport (uvloop's) takes what its protocol
               raises for a fatal error of its own and swallows it.  It is raised again
               by a callback of the loop's, which lets the two through run_forever, as
               the task's own step would have. */
            PyObject *et, *ev, *tb;
            PyErr_Fetch(&et, &ev, &tb);
            PyErr_NormalizeException(&et, &ev, &tb);
            if (tb && ev) PyException_SetTraceback(ev, tb);
            PyObject *raiser = PyObject_GetAttrString((PyObject *)s, "_raise");
            PyObject *h = raiser ? PyObject_CallMethod(s->loop, "call_soon", "OO", raiser,
                                                       ev ? ev : Py_None) : NULL;
            Py_XDECREF(raiser);
            if (h) {
                Py_DECREF(h);
                Py_XDECREF(et); Py_XDECREF(ev); Py_XDECREF(tb);
                Py_DECREF(s);
                Py_RETURN_NONE;
            }
            Py_XDECREF(et); Py_XDECREF(ev); Py_XDECREF(tb);
        }
        Py_DECREF(s);
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
    /* the socket is non-blocking (asyncio's): recv() does not wait, so the GIL stays
       held, as it does around asyncio's own sock.recv_into() */
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
    if (absent(s->loop)) {
        PyErr_SetString(PyExc_RuntimeError, "wait_future(): the stream has no event loop");
        return NULL;
    }
    s->unasked = 0;
    if (s->held) {
        s->held = 0;
        PyObject *r = PyObject_CallMethod((PyObject *)s, "_resume_reading", NULL);
        if (!r) return NULL;
        Py_DECREF(r);
    }
    PyObject *fut;
    if (s->fast_waiter) {
        if (!s->done_future) s->done_future = make_done_future(s->loop);
        fut = waiter_new(s->st->AioWaiterType, s->loop);
        if (fut && s->done_future != Py_None)
            ((aio_waiter *)fut)->done = Py_NewRef(s->done_future);
    } else if (!absent(s->future_class)) {
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

/* wait_future() for aio_call.c (`stream` an AioStream) */
PyObject *mc_aio_stream_wait(PyObject *stream) {
    return stream_wait_future((aio_stream *)stream, NULL);
}

/* the stream is open with nothing of its own to report (_statement._engine_ready's
   `not (proto._state or proto._early or proto._exc is not None)`): 1 or 0 */
int mc_aio_stream_ready(PyObject *stream) {
    aio_stream *s = (aio_stream *)stream;
    if (s->state || !absent(s->exc)) return 0;
    if (absent(s->early)) return 1;
    if (PyByteArray_CheckExact(s->early)) return PyByteArray_GET_SIZE(s->early) == 0;
    int t = PyObject_IsTrue(s->early);
    if (t < 0) { PyErr_Clear(); return 0; }
    return !t;
}

/* The stream is open: asyncio has not ended it (the pool's idle check, mysqlc.aio.pool
   _idle: `not proto._state`): 1 or 0 */
int mc_aio_stream_open(PyObject *stream) {
    return ((aio_stream *)stream)->state == 0;
}

/* reading paused at AIO_HIGH_WATER (the stream's _held): 1, 0, or -1 for an object that
   is not an AioStream */
int mc_aio_stream_held(mc_state *st, PyObject *stream) {
    if (!PyObject_TypeCheck(stream, st->AioStreamType)) return -1;
    return ((aio_stream *)stream)->held != 0;
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
        /* non-blocking as well: no wait, the GIL stays held (as around sock.send()) */
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
    s->fast_waiter = 1;
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
    Py_VISIT(s->future_class); Py_VISIT(s->twrite); Py_VISIT(s->done_future);
    return 0;
}

static int stream_clear(aio_stream *s) {
    Py_CLEAR(s->loop); Py_CLEAR(s->core); Py_CLEAR(s->transport); Py_CLEAR(s->waiter);
    Py_CLEAR(s->drain); Py_CLEAR(s->exc); Py_CLEAR(s->early); Py_CLEAR(s->scratch);
    Py_CLEAR(s->future_class); Py_CLEAR(s->twrite); Py_CLEAR(s->done_future);
    return 0;
}

static void stream_dealloc(aio_stream *s) {
    PyTypeObject *tp = Py_TYPE(s);
    PyObject_GC_UnTrack(s);
    stream_clear(s);
    tp->tp_free((PyObject *)s);
    Py_DECREF(tp);
}

/* _raise(exc): raises exc (a callback of the loop's: see received()) */
static PyObject *stream_raise(aio_stream *s, PyObject *exc) {
    (void)s;
    if (!PyExceptionInstance_Check(exc)) {
        PyErr_SetString(PyExc_TypeError, "_raise() takes an exception");
        return NULL;
    }
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    return NULL;
}

static PyMethodDef stream_methods[] = {
    {"get_buffer", (PyCFunction)stream_get_buffer, METH_O,
     "get_buffer(sizehint) -> the writable buffer asyncio receives the next bytes into"},
    {"buffer_updated", (PyCFunction)stream_buffer_updated, METH_O,
     "buffer_updated(nbytes): nbytes arrived in get_buffer()'s buffer"},
    {"_raise", (PyCFunction)stream_raise, METH_O,
     "_raise(exc): raise exc (from a callback of the event loop's)"},
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
    MEMBER("_fast_waiter", T_INT, fast_waiter),
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
    st->AioWaiterType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &waiter_spec, NULL);
    if (!st->AioWaiterType) return -1;
    Py_INCREF(st->AioWaiterType);
    if (PyModule_AddObject(module, "AioWaiter", (PyObject *)st->AioWaiterType) < 0) {
        Py_DECREF(st->AioWaiterType);
        return -1;
    }
    st->AioStreamType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &stream_spec, NULL);
    if (!st->AioStreamType) return -1;
    Py_INCREF(st->AioStreamType);
    if (PyModule_AddObject(module, "AioStream", (PyObject *)st->AioStreamType) < 0) {
        Py_DECREF(st->AioStreamType);
        return -1;
    }
    return 0;
}
