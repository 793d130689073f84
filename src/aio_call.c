/* mysqlc.aio's execute() without a Python coroutine: _core.AioCall, the awaitable a
 * buffered asyncio cursor's execute() returns, and _core.AioMethod, the method
 * descriptor the cursor class holds (mysqlc/aio/_statement.py, cursors.py).  The
 * connection's commit(), rollback(), begin() and ping() are AioCalls too (K_CALL: the
 * same wait, with _begin_call / _finish_call / _call_py in place of the cursor's).
 *
 * An awaited statement on the event loop's hot path cost, above the sync path's C work
 * and one wake-up of the stream's future, a Python coroutine and its frames.  Here the
 * await is C: the call runs _statement._begin (one Python frame: the checks, the SQL
 * bytes, the lock, the send and a first take_result), then awaits the stream's future
 * and calls the engine's take_result() after each wake-up, and hands the result to
 * _statement._finish.  The checks stay in Python, where an attribute read of the
 * cursor's or the connection's state is a specialized bytecode (read from C, each is a
 * type and a dict lookup: measured slower).  _statement._execute_py stays the
 * reference: every case _begin does not take goes to it before anything was changed,
 * and every case that turns unusual while the response is read (a read timeout set,
 * the stream ended or failed, the task cancelled) goes to _statement._take_over, which
 * reads on exactly where this file stopped.
 *
 * The object is a coroutine in asyncio's sense (send, throw, close, __await__:
 * collections.abc.Coroutine; asyncio.create_task() takes it): nothing happens before
 * its first send(None), as with an `async def`.  States:
 *
 *   0  not started       send(None) runs _begin; the result is taken, or the stream's
 *                        future awaited (1); or a Python coroutine takes the call (2)
 *   1  awaiting `it`     the stream's future (its __await__ iterator); resumed, the
 *                        engine takes what arrived (take_result), again until complete;
 *                        a CancelledError thrown in goes to _take_over (KILL QUERY and
 *                        the drain); close() closes the stream (_abandon)
 *   2  delegating        send/throw/close go to `sub`, a Python coroutine
 *   3  over              (4 while a step runs)
 */
#include "conn_internal.h"
#include <structmember.h>
#include <pthread.h>
#include <unistd.h>

/* the Python names this file uses (interned once, st->aio_names) */
enum { N_throw, N_close, N_running_loop_key, N_reset, N_rollback, N_autocommit, N_COUNT };
static const char *const aio_name_text[N_COUNT] = {"throw", "close",
                                                   "__asyncio_running_event_loop__",
                                                   "reset", "rollback", "autocommit"};

/* what _statement.py gives (_core._aio_configure), st->aio_env */
enum {
    E_execute_py,    /* _execute_py(shell, query, args, infile, attributes): the coroutine */
    E_begin,         /* _begin(shell, query, args): None, a coroutine, or the sent state */
    E_finish,        /* _finish(cur, worker, lock, result) -> rowcount */
    E_failed,        /* _failed(cur, conn, worker, lock, sql, exc): its handlers */
    E_take_over,     /* _take_over(cur, conn, worker, core, proto, sql, status, exc) */
    E_abandon,       /* _abandon(core, proto): the response will not be read */
    E_cancelled,     /* asyncio.CancelledError */
    /* the connection's own calls (K_CALL): commit(), rollback(), begin(), ping() */
    E_begin_call,    /* _begin_call(shell, name, sql): None, a coroutine, or the sent state */
    E_finish_call,   /* _finish_call(name, conn, worker, lock, result) -> None or a coroutine */
    E_call_py,       /* _call_py(shell, name, sql[, reconnect]): the coroutine */
    E_running_loop,  /* asyncio._get_running_loop */
    E_COUNT
};

#define NAME(st, i) PyTuple_GET_ITEM((st)->aio_names, (i))
#define ENV(st, i) PyTuple_GET_ITEM((st)->aio_env, (i))

/* what the call is: a cursor's execute(), or one of the connection's own calls */
enum { K_EXECUTE, K_CALL };

typedef struct {
    PyObject_HEAD
    mc_state *st;
    int phase;
    int kind;        /* K_EXECUTE, K_CALL */
    int given;       /* K_CALL: ping()'s `reconnect` was given (in `infile`) */
    /* the call's arguments: execute()'s (shell, query, args, infile, attributes); a
       K_CALL's (shell, name, sql or None for COM_PING, reconnect, None) */
    PyObject *shell, *query, *args, *infile, *attributes;
    /* from _begin() on: the statement sent, the lock held */
    PyObject *cur, *conn, *worker, *core, *proto, *lock, *sql;
    int timed;       /* a read timeout is set: every wait is _take_over's */
    PyObject *it;    /* state 1: the awaited future's iterator */
    PyObject *sub;   /* state 2: the Python coroutine the call went to */
} aio_call;

/* ---------------------------------------------------------------- small helpers */

/* `it` sent `arg`: 1 with *out the value it yielded, 0 with *out its return value, -1
   with an exception (PyIter_Send, for every supported Python) */
int mc_aio_send_to(PyObject *it, PyObject *arg, PyObject **out) {
#if PY_VERSION_HEX >= 0x030A0000
    PySendResult r = PyIter_Send(it, arg, out);
    return r == PYGEN_NEXT ? 1 : r == PYGEN_RETURN ? 0 : -1;
#else
    PyObject *y;
    if (arg == Py_None && Py_TYPE(it)->tp_iternext)
        y = Py_TYPE(it)->tp_iternext(it);
    else
        y = PyObject_CallMethod(it, "send", "O", arg);
    if (y) { *out = y; return 1; }
    if (!PyErr_Occurred() || PyErr_ExceptionMatches(PyExc_StopIteration)) {
        if (_PyGen_FetchStopIterationValue(out) < 0) return -1;
        return 0;
    }
    *out = NULL;
    return -1;
#endif
}

/* the value `v` of a coroutine's return, raised as StopIteration(v) for tp_iternext and
   send() (an exception or tuple value wrapped so that it is not taken apart) */
PyObject *mc_aio_stop_with(PyObject *v) {
    if (v == Py_None) {
        PyErr_SetNone(PyExc_StopIteration);
    } else {
        PyObject *e = PyObject_CallOneArg(PyExc_StopIteration, v);
        if (e) {
            PyErr_SetObject(PyExc_StopIteration, e);
            Py_DECREF(e);
        }
    }
    Py_DECREF(v);
    return NULL;
}

static void drop_state(aio_call *a) {
    Py_CLEAR(a->cur); Py_CLEAR(a->conn); Py_CLEAR(a->worker); Py_CLEAR(a->core);
    Py_CLEAR(a->proto); Py_CLEAR(a->lock); Py_CLEAR(a->sql); Py_CLEAR(a->it);
}

/* ---------------------------------------------------------------- the call's end */

/* The exception set now, normalized with its traceback attached: a new reference (NULL
   when none is set); none is set afterwards. */
static PyObject *take_exception(void) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyErr_NormalizeException(&t, &v, &tb);
    if (tb && v) PyException_SetTraceback(v, tb);
    Py_XDECREF(t);
    Py_XDECREF(tb);
    return v;
}

/* An exception while the statement was under way (the one set now): _failed(cur, conn,
   worker, lock, sql, exc), _execute_py's handlers, then the exception raised again (or
   what _failed raised instead, as a raise inside a handler would).  The call is over. */
static void fail_started(aio_call *a) {
    PyObject *exc = take_exception();
    if (exc) {
        PyObject *args[6] = {a->cur, a->conn, a->worker, a->lock, a->sql, exc};
        PyObject *r = PyObject_Vectorcall(ENV(a->st, E_failed), args, 6, NULL);
        if (r) {
            Py_DECREF(r);
            PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
        }
        Py_DECREF(exc);
    }
    drop_state(a);
    a->phase = 3;
}

/* The result tuple of take_result() into the cursor: _finish(cur, worker, lock, r) (its
   own finally unlocks).  The cursor's rowcount, or NULL with an exception.  (A K_CALL:
   _finish_call(name, conn, worker, lock, r), None.) */
static PyObject *finish(aio_call *a, PyObject *r) {
    mc_state *st = a->st;
    PyObject *count;
    if (a->kind == K_CALL) {
        PyObject *args[5] = {a->cur, a->conn, a->worker, a->lock, r};
        count = PyObject_Vectorcall(ENV(st, E_finish_call), args, 5, NULL);
    } else {
        PyObject *args[4] = {a->cur, a->worker, a->lock, r};
        count = PyObject_Vectorcall(ENV(st, E_finish), args, 4, NULL);
    }
    Py_DECREF(r);
    drop_state(a);
    a->phase = 3;
    return count;
}

/* ---------------------------------------------------------------- going to Python */

/* The call goes on in `coro` (a new reference, or NULL with an exception): state 2, and
   its first step. */
static int delegate(aio_call *a, PyObject *coro, PyObject **out) {
    drop_state(a);
    if (!coro) { a->phase = 3; return -1; }
    a->sub = coro;
    a->phase = 2;
    int r = mc_aio_send_to(coro, Py_None, out);
    if (r != 1) { a->phase = 3; Py_CLEAR(a->sub); }
    return r;
}

/* The whole call to _execute_py (nothing was changed yet); a K_CALL's to _call_py */
static int go_python(aio_call *a, PyObject **out) {
    mc_state *st = a->st;
    if (a->kind == K_CALL) {
        PyObject *args[4] = {a->shell, a->query, a->args, a->infile};
        return delegate(a, PyObject_Vectorcall(ENV(st, E_call_py), args, 3 + a->given,
                                               NULL), out);
    }
    PyObject *args[5] = {a->shell, a->query, a->args, a->infile, a->attributes};
    return delegate(a, PyObject_Vectorcall(ENV(st, E_execute_py), args, 5, NULL), out);
}

/* _take_over(cur, conn, worker, core, proto, sql, status, exc): the lock is held, the
   statement sent; Python reads on from here */
static int take_over(aio_call *a, PyObject *status, PyObject *exc, PyObject **out) {
    mc_state *st = a->st;
    PyObject *args[8] = {a->cur, a->conn, a->worker, a->core, a->proto, a->sql, status, exc};
    return delegate(a, PyObject_Vectorcall(ENV(st, E_take_over), args, 8, NULL), out);
}

/* ---------------------------------------------------------------- the steps */

/* _abandon(core, proto): the response will not be read by this call (its coroutine was
   closed, or an exception other than CancelledError was thrown into its wait): the
   stream is closed rather than the session left out of sync.  The exception set now
   stays set (an error of _abandon's own is reported as unraisable). */
static void abandon(aio_call *a) {
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyObject *args[2] = {a->core, a->proto};
    PyObject *r = PyObject_Vectorcall(ENV(a->st, E_abandon), args, 2, NULL);
    if (!r) PyErr_WriteUnraisable((PyObject *)a);
    Py_XDECREF(r);
    PyErr_Restore(t, v, tb);
}

/* PEP 479: a StopIteration leaving the coroutine becomes RuntimeError (its cause), as
   a native coroutine's does -- else a Task would take it for a return */
static void no_stop_iteration(void) {
    if (!PyErr_ExceptionMatches(PyExc_StopIteration)) return;
    PyObject *v = take_exception();
    PyErr_SetString(PyExc_RuntimeError, "coroutine raised StopIteration");
    PyObject *e = take_exception();
    if (e && v) {
        PyException_SetCause(e, Py_NewRef(v));
        PyException_SetContext(e, Py_NewRef(v));
    }
    Py_XDECREF(v);
    if (e) {
        PyErr_SetObject((PyObject *)Py_TYPE(e), e);
        Py_DECREF(e);
    }
}

/* An exception the awaited future raised, or one thrown into the call while it awaited:
   a CancelledError goes to _take_over (KILL QUERY, the response read to its end, as
   _execute_py's handler), anything else ends the call as in _execute_py.  -1, or what
   _take_over's first step gives.  The exception is the one set now. */
static int interrupted(aio_call *a, PyObject **out) {
    mc_state *st = a->st;
    Py_CLEAR(a->it);
    if (!PyErr_ExceptionMatches(ENV(st, E_cancelled))) {
        abandon(a);
        fail_started(a);
        return -1;
    }
    PyObject *v = take_exception();
    if (!v) v = Py_NewRef(Py_None);
    int r = take_over(a, Py_None, v, out);
    Py_DECREF(v);
    return r;
}

/* the stream's future awaited: 1 (state 1, *out to yield), 2 (it was done at once:
   *out its status), or what _take_over gives with a read timeout (every wait then has
   its timer: Python's path) */
static int await_stream(aio_call *a, PyObject **out) {
    if (a->timed) return take_over(a, Py_None, Py_None, out);
    PyObject *fut = mc_aio_stream_wait(a->proto);
    if (!fut) { fail_started(a); return -1; }
    unaryfunc aw = Py_TYPE(fut)->tp_as_async ? Py_TYPE(fut)->tp_as_async->am_await : NULL;
    PyObject *it = aw ? aw(fut) : NULL;
    Py_DECREF(fut);
    if (!it) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "the stream's future is not awaitable");
        fail_started(a);
        return -1;
    }
    a->it = it;
    int r = mc_aio_send_to(it, Py_None, out);
    if (r == 1) { a->phase = 1; return 1; }   /* pending: the task waits for it */
    if (r < 0) return interrupted(a, out);
    Py_CLEAR(a->it);
    return 2;
}

/* the stream future's status is 0: bytes were given to the engine */
static int is_done(PyObject *status) {
    return PyLong_CheckExact(status) && PyLong_AsLong(status) == 0;
}

/* `r`, what take_result() gave (a new reference; NULL with an exception): the result
   into the cursor (0, *out the rowcount), else the stream awaited (1) and taken again
   until it is complete, or Python's path (_take_over) when the stream reports anything
   but bytes */
static int taken(aio_call *a, PyObject *r, PyObject **out) {
    for (;;) {
        if (!r) { fail_started(a); return -1; }
        if (r != Py_None) {
            *out = finish(a, r);
            if (*out && *out != Py_None && a->kind == K_CALL)
                return delegate(a, *out, out);   /* (_finish_call's coroutine: more to do) */
            return *out ? 0 : -1;
        }
        Py_DECREF(r);
        int w = await_stream(a, out);
        if (w != 2) return w;
        PyObject *status = *out;   /* (the future was done at once) */
        *out = NULL;
        if (!is_done(status)) {   /* the stream ended, failed or timed out */
            w = take_over(a, status, Py_None, out);
            Py_DECREF(status);
            return w;
        }
        Py_DECREF(status);
        r = mc_conn_take_result((mc_conn *)a->core, NULL, 0, NULL);
    }
}

static int start(aio_call *a, PyObject **out) {
    mc_state *st = a->st;
    PyObject *args[3] = {a->shell, a->query, a->args};
    PyObject *b;
    if (a->kind == K_CALL) {
        /* ping(reconnect=True): the sync ping's reconnection, in Python */
        if (a->given && a->infile != Py_False) {
            int t = PyObject_IsTrue(a->infile);
            if (t < 0) return -1;
            if (t) return go_python(a, out);
        }
        b = PyObject_Vectorcall(ENV(st, E_begin_call), args, 3, NULL);
    } else {
        if (a->infile != Py_None || a->attributes != Py_None) return go_python(a, out);
        b = PyObject_Vectorcall(ENV(st, E_begin), args, 3, NULL);
    }
    if (!b) return -1;
    if (b == Py_None) {
        Py_DECREF(b);
        return go_python(a, out);
    }
    if (!PyTuple_CheckExact(b)) return delegate(a, b, out);   /* (a coroutine) */
    if (PyTuple_GET_SIZE(b) != 9) {
        Py_DECREF(b);
        PyErr_SetString(PyExc_SystemError, "_begin() gave no state");
        return -1;
    }
    PyObject **f[7] = {&a->cur, &a->conn, &a->worker, &a->core, &a->proto, &a->lock, &a->sql};
    for (int i = 0; i < 7; i++) *f[i] = Py_NewRef(PyTuple_GET_ITEM(b, i));
    PyObject *r = Py_NewRef(PyTuple_GET_ITEM(b, 7));
    a->timed = PyTuple_GET_ITEM(b, 8) != Py_None;
    Py_DECREF(b);
    if (!PyObject_TypeCheck(a->core, st->ConnectionType) ||
            !PyObject_TypeCheck(a->proto, st->AioStreamType)) {
        Py_DECREF(r);
        PyErr_SetString(PyExc_TypeError, "_begin(): not a core and its stream");
        fail_started(a);
        return -1;
    }
    return taken(a, r, out);
}

#define RUNNING 4

/* one step of the coroutine: 1 yielded *out, 0 returned *out, -1 raised */
static int step(aio_call *a, PyObject *arg, PyObject **out) {
    *out = NULL;
    int r;
    switch (a->phase) {
    case 0:
        if (arg != Py_None) {
            PyErr_SetString(PyExc_TypeError,
                            "can't send non-None value to a just-started coroutine");
            return -1;
        }
        a->phase = RUNNING;
        r = start(a, out);
        break;
    case 1: {
        a->phase = RUNNING;
        PyObject *status = NULL;
        r = mc_aio_send_to(a->it, arg, &status);
        if (r == 1) {   /* (still pending: the task waits on) */
            a->phase = 1;
            *out = status;
            return 1;
        }
        if (r < 0) { r = interrupted(a, out); break; }
        Py_CLEAR(a->it);
        if (!is_done(status)) {   /* the stream ended, failed or timed out */
            r = take_over(a, status, Py_None, out);
            Py_DECREF(status);
            break;
        }
        Py_DECREF(status);
        r = taken(a, mc_conn_take_result((mc_conn *)a->core, NULL, 0, NULL), out);
        break;
    }
    case 2:
        a->phase = RUNNING;
        r = mc_aio_send_to(a->sub, arg, out);
        if (r == 1) { a->phase = 2; return 1; }
        break;
    case RUNNING:
        PyErr_SetString(PyExc_ValueError, "coroutine already executing");
        return -1;
    default:
        PyErr_SetString(PyExc_RuntimeError, "cannot reuse already awaited coroutine");
        return -1;
    }
    if (r < 0 && a->sub == NULL)   /* (a Python coroutine's own error is its own) */
        no_stop_iteration();
    if (r != 1) {   /* over: returned or raised */
        a->phase = 3;
        drop_state(a);
        Py_CLEAR(a->sub);
    }
    return r;
}

/* ---------------------------------------------------------------- the coroutine's API */

#if PY_VERSION_HEX >= 0x030A0000
static PySendResult call_am_send(aio_call *a, PyObject *arg, PyObject **out) {
    int r = step(a, arg, out);
    return r == 1 ? PYGEN_NEXT : r == 0 ? PYGEN_RETURN : PYGEN_ERROR;
}
#endif

static PyObject *call_iternext(aio_call *a) {
    PyObject *out;
    int r = step(a, Py_None, &out);
    if (r == 1) return out;
    if (r == 0) return mc_aio_stop_with(out);
    return NULL;
}

static PyObject *call_send(aio_call *a, PyObject *arg) {
    PyObject *out;
    int r = step(a, arg, &out);
    if (r == 1) return out;
    if (r == 0) return mc_aio_stop_with(out);
    return NULL;
}

/* the exception throw()'s arguments describe, set as the current one: 0, or -1 with
   TypeError for arguments that describe none */
static int set_thrown(PyObject *typ, PyObject *val, PyObject *tb) {
    if (tb != Py_None && !PyTraceBack_Check(tb)) {
        PyErr_SetString(PyExc_TypeError, "throw() third argument must be a traceback object");
        return -1;
    }
    if (PyExceptionInstance_Check(typ)) {
        if (val != Py_None) {
            PyErr_SetString(PyExc_TypeError, "instance exception may not have a separate value");
            return -1;
        }
        PyErr_SetObject((PyObject *)Py_TYPE(typ), typ);
    } else if (PyExceptionClass_Check(typ)) {
        PyErr_SetObject(typ, val);
    } else {
        PyErr_Format(PyExc_TypeError, "exceptions must be classes or instances deriving from "
                     "BaseException, not %s", Py_TYPE(typ)->tp_name);
        return -1;
    }
    if (tb != Py_None) {
        PyObject *t, *v, *old;
        PyErr_Fetch(&t, &v, &old);
        PyErr_NormalizeException(&t, &v, &old);
        Py_XDECREF(old);
        if (v) PyException_SetTraceback(v, tb);
        PyErr_Restore(t, v, Py_NewRef(tb));
    }
    return 0;
}

/* throw(exc) / throw(type[, value[, traceback]]), as a coroutine's */
static PyObject *call_throw(aio_call *a, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 1 || nargs > 3) {
        PyErr_SetString(PyExc_TypeError, "throw expected 1 to 3 arguments");
        return NULL;
    }
    if (a->phase == RUNNING) {
        PyErr_SetString(PyExc_ValueError, "coroutine already executing");
        return NULL;
    }
    PyObject *out = NULL;
    int r;
    if (a->phase == 2) {   /* the Python coroutine's own throw() */
        a->phase = RUNNING;
        PyObject *m = PyObject_GetAttr(a->sub, NAME(a->st, N_throw));
        out = m ? PyObject_Vectorcall(m, args, (size_t)nargs, NULL) : NULL;
        Py_XDECREF(m);
        if (out) { a->phase = 2; return out; }
        a->phase = 3;
        Py_CLEAR(a->sub);
        return NULL;   /* (StopIteration with its value, or what it raised) */
    }
    if (set_thrown(args[0], nargs > 1 ? args[1] : Py_None, nargs > 2 ? args[2] : Py_None) < 0)
        return NULL;
    if (a->phase != 1) {   /* not started, or over: the exception as it is */
        if (a->phase == 0) no_stop_iteration();
        a->phase = 3;
        drop_state(a);
        return NULL;
    }
    a->phase = RUNNING;
    r = interrupted(a, &out);
    if (r == 1) return out;   /* (_take_over's first wait: state 2) */
    if (r < 0 && a->sub == NULL) no_stop_iteration();
    a->phase = 3;
    drop_state(a);
    Py_CLEAR(a->sub);
    if (r == 0) return mc_aio_stop_with(out);
    return NULL;
}

/* close(): GeneratorExit where the call waits (its cleanup: _execute_py's handlers) */
static PyObject *call_close(aio_call *a, PyObject *Py_UNUSED(ignored)) {
    if (a->phase == RUNNING) {
        PyErr_SetString(PyExc_ValueError, "coroutine already executing");
        return NULL;
    }
    int phase = a->phase;
    a->phase = 3;
    if (phase == 2) {
        PyObject *r = PyObject_CallMethodNoArgs(a->sub, NAME(a->st, N_close));
        Py_CLEAR(a->sub);
        return r;
    }
    if (phase == 1) {   /* as _execute_py's GeneratorExit: the stream closed */
        Py_CLEAR(a->it);
        abandon(a);
        PyErr_SetNone(PyExc_GeneratorExit);
        fail_started(a);
        if (!PyErr_ExceptionMatches(PyExc_GeneratorExit)) return NULL;
        PyErr_Clear();
    }
    drop_state(a);
    Py_RETURN_NONE;
}

static PyObject *call_get_qualname(aio_call *a, void *Py_UNUSED(x));

static void call_finalize(aio_call *a) {
    if (a->phase == 0) {   /* as a native coroutine never awaited */
        PyObject *t, *v, *tb;
        PyErr_Fetch(&t, &v, &tb);
        PyObject *q = call_get_qualname(a, NULL);
        if (!q || PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                                   "coroutine '%U' was never awaited", q) < 0)
            PyErr_WriteUnraisable((PyObject *)a);
        Py_XDECREF(q);
        PyErr_Restore(t, v, tb);
        return;
    }
    if (a->phase != 1 && a->phase != 2) return;
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyObject *r = call_close(a, NULL);
    if (!r) PyErr_WriteUnraisable((PyObject *)a);
    Py_XDECREF(r);
    PyErr_Restore(t, v, tb);
}

static PyObject *call_await(aio_call *a) { return Py_NewRef((PyObject *)a); }

static int call_traverse(aio_call *a, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(a));
    Py_VISIT(a->shell); Py_VISIT(a->query); Py_VISIT(a->args); Py_VISIT(a->infile);
    Py_VISIT(a->attributes); Py_VISIT(a->cur); Py_VISIT(a->conn); Py_VISIT(a->worker);
    Py_VISIT(a->core); Py_VISIT(a->proto); Py_VISIT(a->lock); Py_VISIT(a->sql);
    Py_VISIT(a->it); Py_VISIT(a->sub);
    return 0;
}

static int call_clear(aio_call *a) {
    drop_state(a);
    Py_CLEAR(a->shell); Py_CLEAR(a->query); Py_CLEAR(a->args); Py_CLEAR(a->infile);
    Py_CLEAR(a->attributes); Py_CLEAR(a->sub);
    return 0;
}

static void call_dealloc(aio_call *a) {
    PyTypeObject *tp = Py_TYPE(a);
    PyObject_GC_UnTrack(a);
    if (PyObject_CallFinalizerFromDealloc((PyObject *)a) < 0) return;   /* resurrected */
    call_clear(a);
    tp->tp_free((PyObject *)a);
    Py_DECREF(tp);
}

static PyObject *call_get_name(aio_call *a, void *Py_UNUSED(x)) {
    if (a->kind == K_CALL) return Py_NewRef(a->query);
    return PyUnicode_FromString("execute");
}

static PyObject *call_get_qualname(aio_call *a, void *Py_UNUSED(x)) {
    if (a->kind == K_CALL) return PyUnicode_FromFormat("Connection.%U", a->query);
    return PyUnicode_FromString("Cursor.execute");
}

static PyObject *call_get_running(aio_call *a, void *Py_UNUSED(x)) {
    return PyBool_FromLong(a->phase == RUNNING);
}

static PyMethodDef call_methods[] = {
    {"send", (PyCFunction)call_send, METH_O, "send(value): the next step (as a coroutine's)"},
    {"throw", (PyCFunction)(void (*)(void))call_throw, METH_FASTCALL,
     "throw(exc): the exception where the call waits (as a coroutine's)"},
    {"close", (PyCFunction)call_close, METH_NOARGS, "close(): as a coroutine's"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef call_getset[] = {
    {"__name__", (getter)call_get_name, NULL, NULL, NULL},
    {"__qualname__", (getter)call_get_qualname, NULL, NULL, NULL},
    {"cr_running", (getter)call_get_running, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyType_Slot call_slots[] = {
    {Py_tp_dealloc, call_dealloc},
    {Py_tp_traverse, call_traverse},
    {Py_tp_clear, call_clear},
    {Py_tp_finalize, call_finalize},
    {Py_tp_iternext, call_iternext},
    {Py_am_await, call_await},
#if PY_VERSION_HEX >= 0x030A0000
    {Py_am_send, call_am_send},
#endif
    {Py_tp_methods, call_methods},
    {Py_tp_getset, call_getset},
    {Py_tp_doc, "The awaitable of a buffered asyncio cursor's execute() (mysqlc.aio): a "
                "coroutine in asyncio's sense (src/aio_call.c)."},
    {0, NULL},
};

static PyType_Spec call_spec = {
    .name = "mysqlc._core.AioCall",
    .basicsize = sizeof(aio_call),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC
#if PY_VERSION_HEX < 0x030C0000
             | Py_TPFLAGS_HAVE_FINALIZE
#endif
    ,
    .slots = call_slots,
};

/* ---------------------------------------------------------------- the method
 *
 * _core.AioMethod(template): what the cursor class holds as `execute`: a method
 * descriptor (Py_TPFLAGS_METHOD_DESCRIPTOR: `cur.execute(...)` calls it with the cursor
 * first, no bound method made) whose call makes the AioCall; it shows `template` (the
 * Python function with its signature and docstring) as __wrapped__, __doc__, __name__,
 * __qualname__ and __module__ so that inspect.signature() and the docs see that.
 * _core.AioMethod(template, name, sql): the connection's own call `name` (commit,
 * rollback, begin: `sql`; ping: `sql` None, COM_PING, with ping's `reconnect`). */
typedef struct {
    PyObject_HEAD
    mc_state *st;
    PyObject *template;
    vectorcallfunc vectorcall;
    PyObject *name, *sql;   /* a K_CALL's; NULL for execute() */
} aio_method;

static PyObject *new_call(mc_state *st, int kind, PyObject *shell, PyObject *query,
                          PyObject *args, PyObject *infile, PyObject *attributes) {
    if (!st->aio_env) {
        PyErr_SetString(PyExc_RuntimeError, "aio_execute(): _aio_configure() was not called");
        return NULL;
    }
    aio_call *a = PyObject_GC_New(aio_call, st->AioCallType);
    if (!a) return NULL;
    a->st = st;
    a->phase = 0;
    a->kind = kind;
    a->given = 0;
    a->shell = Py_NewRef(shell);
    a->query = Py_NewRef(query);
    a->args = Py_NewRef(args);
    a->infile = Py_NewRef(infile);
    a->attributes = Py_NewRef(attributes);
    a->cur = a->conn = a->worker = a->core = a->proto = a->lock = a->sql = NULL;
    a->it = a->sub = NULL;
    a->timed = 0;
    PyObject_GC_Track(a);
    return (PyObject *)a;
}

/* execute(self, query, args=None, *, infile=None, attributes=None) */
static PyObject *method_vectorcall(aio_method *m, PyObject *const *args, size_t nargsf,
                                   PyObject *kwnames) {
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    PyObject *a[5] = {NULL, NULL, Py_None, Py_None, Py_None};
    static const char *const names[5] = {"self", "query", "args", "infile", "attributes"};
    if (n > 3) {
        PyErr_Format(PyExc_TypeError, "execute() takes from 2 to 3 positional arguments but "
                     "%zd were given", n);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) a[i] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int i = 1;
        while (i < 5 && PyUnicode_CompareWithASCIIString(key, names[i]) != 0) i++;
        if (i == 5) {
            PyErr_Format(PyExc_TypeError, "execute() got an unexpected keyword argument %R",
                         key);
            return NULL;
        }
        if (i < n) {
            PyErr_Format(PyExc_TypeError, "execute() got multiple values for argument %R",
                         key);
            return NULL;
        }
        a[i] = args[n + k];
    }
    if (!a[0] || !a[1]) {
        PyErr_Format(PyExc_TypeError, "execute() missing required argument '%s'",
                     a[0] ? "query" : "self");
        return NULL;
    }
    return new_call(m->st, K_EXECUTE, a[0], a[1], a[2], a[3], a[4]);
}

/* commit(self) / rollback(self) / begin(self) / ping(self, reconnect=False) */
static PyObject *method_call_vectorcall(aio_method *m, PyObject *const *args, size_t nargsf,
                                        PyObject *kwnames) {
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    int ping = m->sql == Py_None;
    PyObject *reconnect = NULL;
    if (n < 1) {
        PyErr_Format(PyExc_TypeError, "%U() missing required argument 'self'", m->name);
        return NULL;
    }
    if (n > 1 + ping) {
        PyErr_Format(PyExc_TypeError, "%U() takes %d positional argument%s but %zd were "
                     "given", m->name, 1 + ping, ping ? "s" : "", n);
        return NULL;
    }
    if (n == 2) reconnect = args[1];
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        if (!ping || PyUnicode_CompareWithASCIIString(key, "reconnect") != 0) {
            PyErr_Format(PyExc_TypeError, "%U() got an unexpected keyword argument %R",
                         m->name, key);
            return NULL;
        }
        if (reconnect) {
            PyErr_Format(PyExc_TypeError, "%U() got multiple values for argument "
                         "'reconnect'", m->name);
            return NULL;
        }
        reconnect = args[n + k];
    }
    aio_call *a = (aio_call *)new_call(m->st, K_CALL, args[0], m->name, m->sql,
                                       reconnect ? reconnect : Py_None, Py_None);
    if (a && reconnect) a->given = 1;
    return (PyObject *)a;
}

static PyObject *method_descr_get(PyObject *self, PyObject *obj, PyObject *type) {
    if (obj == NULL || obj == Py_None) return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static PyObject *method_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
    PyObject *template, *name = NULL, *sql = NULL;
    if (!PyArg_ParseTuple(args, "O|UO:AioMethod", &template, &name, &sql)) return NULL;
    if (name && (!sql || (sql != Py_None && !PyBytes_CheckExact(sql)))) {
        PyErr_SetString(PyExc_TypeError, "AioMethod(template, name, sql): sql is bytes or "
                        "None (COM_PING)");
        return NULL;
    }
    aio_method *m = (aio_method *)tp->tp_alloc(tp, 0);
    if (!m) return NULL;
    m->st = PyType_GetModuleState(tp);
    m->template = Py_NewRef(template);
    Py_XINCREF(name);
    Py_XINCREF(sql);
    m->name = name;
    m->sql = sql;
    m->vectorcall = name ? (vectorcallfunc)method_call_vectorcall
                         : (vectorcallfunc)method_vectorcall;
    return (PyObject *)m;
}

static PyObject *method_template_attr(aio_method *m, void *name) {
    return PyObject_GetAttrString(m->template, (const char *)name);
}

static PyObject *method_get_wrapped(aio_method *m, void *Py_UNUSED(x)) {
    return Py_NewRef(m->template);
}

static int method_traverse(aio_method *m, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(m));
    Py_VISIT(m->template);
    Py_VISIT(m->name);
    Py_VISIT(m->sql);
    return 0;
}

static int method_clear(aio_method *m) {
    Py_CLEAR(m->template);
    Py_CLEAR(m->name);
    Py_CLEAR(m->sql);
    return 0;
}

static void method_dealloc(aio_method *m) {
    PyTypeObject *tp = Py_TYPE(m);
    PyObject_GC_UnTrack(m);
    method_clear(m);
    tp->tp_free((PyObject *)m);
    Py_DECREF(tp);
}

static PyGetSetDef method_getset[] = {
    {"__doc__", (getter)method_template_attr, NULL, NULL, "__doc__"},
    {"__name__", (getter)method_template_attr, NULL, NULL, "__name__"},
    {"__qualname__", (getter)method_template_attr, NULL, NULL, "__qualname__"},
    {"__module__", (getter)method_template_attr, NULL, NULL, "__module__"},
    {"__wrapped__", (getter)method_get_wrapped, NULL, NULL, NULL},
    /* what inspect's "function-like" test reads: iscoroutinefunction() is then the
       template's (an `async def`), as the method's was before it moved to C */
    {"__code__", (getter)method_template_attr, NULL, NULL, "__code__"},
    {"__defaults__", (getter)method_template_attr, NULL, NULL, "__defaults__"},
    {"__kwdefaults__", (getter)method_template_attr, NULL, NULL, "__kwdefaults__"},
    {"__annotations__", (getter)method_template_attr, NULL, NULL, "__annotations__"},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef method_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(aio_method, vectorcall), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot method_slots[] = {
    {Py_tp_new, method_new},
    {Py_tp_dealloc, method_dealloc},
    {Py_tp_traverse, method_traverse},
    {Py_tp_clear, method_clear},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_descr_get, method_descr_get},
    {Py_tp_getset, method_getset},
    {Py_tp_members, method_members},
    {0, NULL},
};

static PyType_Spec method_spec = {
    .name = "mysqlc._core.AioMethod",
    .basicsize = sizeof(aio_method),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
             Py_TPFLAGS_METHOD_DESCRIPTOR,
    .slots = method_slots,
};

/* _core.aio_execute(shell, query, args, infile, attributes) -> AioCall */
static PyObject *aio_execute(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "aio_execute(shell, query, args, infile, attributes)");
        return NULL;
    }
    return new_call(mc_state_from_module(module), K_EXECUTE, args[0], args[1], args[2],
                    args[3], args[4]);
}

/* ---------------------------------------------------------------- the running loop
 *
 * Is `loop` the running event loop of this thread (asyncio.get_running_loop() is loop)?
 * Up to CPython 3.11 get_running_loop() compares the pid its loop was set in with
 * getpid(), a system call on every call (0.6 us here; once per awaited statement): the
 * same check here reads the thread's running-loop holder (the thread state dict's
 * "__asyncio_running_event_loop__", asyncio's _RunningLoopHolder: the loop and that
 * pid) and compares with the pid this process has, kept by a fork handler.  A holder
 * of another shape, and CPython 3.12+ (no pid check, no holder), take
 * asyncio._get_running_loop() itself. */
#if PY_VERSION_HEX < 0x030C0000
typedef struct {
    PyObject_HEAD
    PyObject *rl_loop;
    pid_t rl_pid;
} running_loop_holder;   /* _asynciomodule.c's PyRunningLoopHolder, 3.7-3.11 */

static pid_t own_pid;
static void pid_after_fork(void) { own_pid = getpid(); }
#endif

int mc_aio_on_running_loop(mc_state *st, PyObject *loop) {
    if (loop == Py_None) return 0;   /* (a holder's loop is None once its loop stopped) */
#if PY_VERSION_HEX < 0x030C0000
    PyObject *d = PyThreadState_GetDict();   /* (borrowed) */
    if (d && own_pid) {
        PyObject *h = PyDict_GetItemWithError(d, NAME(st, N_running_loop_key));
        if (h && strcmp(Py_TYPE(h)->tp_name, "_RunningLoopHolder") == 0 &&
                Py_TYPE(h)->tp_basicsize >= (Py_ssize_t)sizeof(running_loop_holder)) {
            running_loop_holder *rl = (running_loop_holder *)h;
            return rl->rl_loop == loop && rl->rl_pid == own_pid;
        }
        if (!h && !PyErr_Occurred()) return 0;   /* no loop ever ran in this thread */
        PyErr_Clear();
    }
#endif
    PyObject *r = PyObject_CallNoArgs(ENV(st, E_running_loop));
    if (!r) {
        PyErr_Clear();
        return 0;
    }
    int same = r == loop;
    Py_DECREF(r);
    return same;
}

/* _core._aio_ready(core, stream, track_seq, loop) -> bool: can a command be driven from
   the event loop now, as far as the core, its stream and the loop say: `loop` running
   in this thread (asyncio.get_running_loop() is loop: on_running_loop), `core` a
   _core.Connection with no result, rows or cursor left unread, `stream` its AioStream
   open with nothing of its own to report (no error, no bytes that came before the
   core), and the session's track_seq `track_seq` (None: not compared).
   _statement._begin's checks of C state in one call: read from Python, each is an
   attribute lookup CPython 3.11 does not specialize (a getset or member descriptor of a
   C type). */
static PyObject *aio_ready(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "_aio_ready(core, stream, track_seq, loop)");
        return NULL;
    }
    mc_state *st = mc_state_from_module(module);
    if (!st->aio_env) {
        PyErr_SetString(PyExc_RuntimeError, "_aio_ready(): _aio_configure() was not called");
        return NULL;
    }
    if (!mc_aio_on_running_loop(st, args[3])) Py_RETURN_FALSE;
    if (!PyObject_TypeCheck(args[0], st->ConnectionType) ||
            !PyObject_TypeCheck(args[1], st->AioStreamType))
        Py_RETURN_FALSE;
    mc_conn *c = (mc_conn *)args[0];
    if (mc_conn_unread(c))
        Py_RETURN_FALSE;
    if (args[2] != Py_None) {
        if (!PyLong_CheckExact(args[2])) Py_RETURN_FALSE;
        unsigned long long seq = PyLong_AsUnsignedLongLong(args[2]);
        if (seq == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            Py_RETURN_FALSE;
        }
        if (seq != c->track_seq) Py_RETURN_FALSE;
    }
    return PyBool_FromLong(mc_aio_stream_ready(args[1]));
}

/* _core._loop_running(loop) -> bool: asyncio.get_running_loop() is loop, without its
   getpid() (on_running_loop; mysqlc.aio.pool's acquire without a wait) */
static PyObject *loop_running(PyObject *module, PyObject *loop) {
    mc_state *st = mc_state_from_module(module);
    if (!st->aio_env) {
        PyErr_SetString(PyExc_RuntimeError, "_loop_running(): _aio_configure() was not called");
        return NULL;
    }
    return PyBool_FromLong(mc_aio_on_running_loop(st, loop));
}

/* ---------------------------------------------------------------- the pool's checks
 *
 * mysqlc.aio.pool reads a pooled connection's C state twice per acquire and release
 * (_idle) and once per release (_SessionStart.restore_needed).  From Python each read
 * is a getset lookup CPython 3.11 does not specialize (about 190 instructions, and an
 * int or bool made); these take the C fields in one call. */

/* _core._pool_idle(core, stream) -> bool: `core` a _core.Connection open (its socket),
   with no result, rows or server-side cursor unread (core.unread) and no pipelined
   response pending (core.pipe_pending), and `stream` its AioStream not ended by
   asyncio (not stream._state).  False for objects of other types. */
int mc_pool_idle_check(mc_state *st, PyObject *core, PyObject *stream) {
    if (!PyObject_TypeCheck(core, st->ConnectionType) ||
            !PyObject_TypeCheck(stream, st->AioStreamType))
        return 0;
    mc_conn *c = (mc_conn *)core;
    if (c->fd < 0 || mc_conn_unread(c) ||
            c->pipe_pending != 0)
        return 0;
    return mc_aio_stream_open(stream);
}

static PyObject *pool_idle(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "_pool_idle(core, stream)");
        return NULL;
    }
    return PyBool_FromLong(mc_pool_idle_check(mc_state_from_module(module), args[0], args[1]));
}

/* _core._session_need(core, seq, autocommit) -> None, "reset", "rollback" or
   "autocommit": what a pooled connection's session needs on release, from the core's
   state after its last response (no I/O).  "reset": `seq` is an int (session state
   tracked) and core.session_track_seq moved from it; "rollback": a transaction is open
   (SERVER_STATUS_IN_TRANS); "autocommit": SERVER_STATUS_AUTOCOMMIT is not `autocommit`
   (a bool).  In that order, as mysqlc.aio.pool._SessionStart.restore_needed. */
PyObject *mc_session_need(mc_state *st, PyObject *core, PyObject *seq,
                          PyObject *autocommit) {
    if (!PyObject_TypeCheck(core, st->ConnectionType)) {
        PyErr_SetString(PyExc_TypeError, "_session_need(): core is not a _core.Connection");
        return NULL;
    }
    mc_conn *c = (mc_conn *)core;
    if (seq != Py_None) {
        unsigned long long n = PyLong_AsUnsignedLongLong(seq);
        if (n == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
        if (n != c->track_seq) return Py_NewRef(NAME(st, N_reset));
    }
    if (c->server_status & SERVER_STATUS_IN_TRANS) return Py_NewRef(NAME(st, N_rollback));
    int on = PyObject_IsTrue(autocommit);
    if (on < 0) return NULL;
    if (!(c->server_status & SERVER_STATUS_AUTOCOMMIT) != !on)
        return Py_NewRef(NAME(st, N_autocommit));
    Py_RETURN_NONE;
}

static PyObject *session_need(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "_session_need(core, seq, autocommit)");
        return NULL;
    }
    return mc_session_need(mc_state_from_module(module), args[0], args[1], args[2]);
}

/* _core._aio_configure(env): the Python helpers of mysqlc/aio/_statement.py (E_*) */
static PyObject *aio_configure(PyObject *module, PyObject *env) {
    mc_state *st = mc_state_from_module(module);
    if (!PyTuple_CheckExact(env) || PyTuple_GET_SIZE(env) != E_COUNT) {
        PyErr_Format(PyExc_TypeError, "_aio_configure() takes a tuple of %d", (int)E_COUNT);
        return NULL;
    }
    Py_XSETREF(st->aio_env, Py_NewRef(env));
    Py_RETURN_NONE;
}

static PyMethodDef aio_call_functions[] = {
    {"aio_execute", (PyCFunction)(void (*)(void))aio_execute, METH_FASTCALL,
     "aio_execute(shell, query, args, infile, attributes) -> the awaitable of a buffered "
     "asyncio cursor's execute() (mysqlc/aio/_statement.py)"},
    {"_aio_ready", (PyCFunction)(void (*)(void))aio_ready, METH_FASTCALL,
     "_aio_ready(core, stream, track_seq, loop) -> bool: `loop` running in this thread, "
     "the core idle, its stream open with nothing to report, the session's track_seq as "
     "given (None: any)"},
    {"_loop_running", (PyCFunction)loop_running, METH_O,
     "_loop_running(loop) -> bool: asyncio.get_running_loop() is loop (no getpid() call)"},
    {"_pool_idle", (PyCFunction)(void (*)(void))pool_idle, METH_FASTCALL,
     "_pool_idle(core, stream) -> bool: core open with nothing unread or pipelined "
     "pending, stream not ended (mysqlc.aio.pool)"},
    {"_session_need", (PyCFunction)(void (*)(void))session_need, METH_FASTCALL,
     "_session_need(core, seq, autocommit) -> None, 'reset', 'rollback' or 'autocommit' "
     "(mysqlc.aio.pool)"},
    {"_aio_configure", (PyCFunction)aio_configure, METH_O,
     "_aio_configure(env): the Python helpers aio_execute() hands unusual cases to"},
    {NULL, NULL, 0, NULL},
};

int mc_aio_call_add_type(PyObject *module) {
    mc_state *st = mc_state_from_module(module);
#if PY_VERSION_HEX < 0x030C0000
    if (!own_pid) {
        own_pid = getpid();
        if (pthread_atfork(NULL, NULL, pid_after_fork) != 0) own_pid = 0;   /* (then: asyncio's) */
    }
#endif
    st->aio_names = PyTuple_New(N_COUNT);
    if (!st->aio_names) return -1;
    for (int i = 0; i < N_COUNT; i++) {
        PyObject *s = PyUnicode_InternFromString(aio_name_text[i]);
        if (!s) return -1;
        PyTuple_SET_ITEM(st->aio_names, i, s);
    }
    st->AioCallType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &call_spec, NULL);
    if (!st->AioCallType) return -1;
    Py_INCREF(st->AioCallType);
    if (PyModule_AddObject(module, "AioCall", (PyObject *)st->AioCallType) < 0) {
        Py_DECREF(st->AioCallType);
        return -1;
    }
    PyObject *mt = PyType_FromModuleAndSpec(module, &method_spec, NULL);
    if (!mt) return -1;
    if (PyModule_AddObject(module, "AioMethod", mt) < 0) {
        Py_DECREF(mt);
        return -1;
    }
    return PyModule_AddFunctions(module, aio_call_functions);
}
