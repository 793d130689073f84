/* mysqlc.aio's pool and cursor bookkeeping on the hot path, in C.
 *
 * A pooled statement, ``async with pool.acquire() as conn: async with conn.cursor() as
 * cur: ...``, spent about 4 µs of Python around the statement itself (two context
 * managers' coroutines, the pool's checks, its free list): as much as the rest of the
 * client's user time for a SELECT 1.  These types run the common case without a Python
 * frame; every other case goes to the Python code of mysqlc/aio/pool.py and cursors.py,
 * which stays the reference the C follows.
 *
 *   _core.PoolBase      the base class of mysqlc.aio.Pool: the state the fast paths read
 *                       (_free, _used, _waiters, _terminated, _start, _loop, _clock,
 *                       _closing, _ping_idle, _recycle) as C members.  Python reads and
 *                       writes them as before (a T_OBJECT_EX member is a specialized
 *                       attribute access on CPython 3.11, as a __slots__ one).
 *   _core.PoolAcquire   the base class of the acquire context (pool._AcquireContext):
 *                       __aenter__ takes the most recently released free connection when
 *                       Pool._acquire would at once (nothing waits, the pool open on the running
 *                       loop, no ping or recycle due, the connection at rest) and
 *                       __aexit__ puts it back when Pool._release would do just that
 *                       (handed out from this pool, at rest, the session as it was
 *                       opened, nobody waiting, reading not held); else Pool._acquire()
 *                       / Pool._release() run.
 *   _core.AioCursorBase the base class of the asyncio cursors: __aenter__ gives the
 *                       cursor, __aexit__ closes a cursor with nothing left unread
 *                       without the close() coroutine (a subclass's own close() is
 *                       awaited as before).
 *   _core._PoolEnter    what PoolAcquire.__aenter__ returns: a C awaitable that takes
 *                       the connection when it is first resumed (as a coroutine would:
 *                       one dropped unawaited takes nothing).
 *   _core._Ready        an awaitable that is done already (its value): what the
 *                       cursors' __aenter__ and the fast __aexit__s return in place of
 *                       a coroutine.
 */
#include "conn_internal.h"
#include <structmember.h>

/* the attribute names read here, interned once (st->pool_names) */
enum {
    P_worker, P_busy, P_sync_obj, P_closed, P_pipeline, P_conn, P_proto, P_user,
    P_password, P_login, P_seq, P_autocommit, P_pop, P_append, P_acquire, P_release,
    P_close, P_connection, P_popleft, P_done, P_set_result,
    P_create_future, P_abandon_wait, P_take, P_COUNT
};
static const char *const pool_name_text[P_COUNT] = {
    "_worker", "busy", "_sync_obj", "_closed", "_pipeline", "_conn", "_proto", "user",
    "_password", "login", "seq", "autocommit", "pop", "append", "_acquire", "_release",
    "close", "connection", "popleft", "done", "set_result",
    "create_future", "_abandon_wait", "_take"};
#define PNAME(st, i) PyTuple_GET_ITEM((st)->pool_names, (i))

/* what mysqlc/aio/pool.py and cursors.py give (_core._pool_configure), st->pool_env */
enum {
    PE_enter_slow,   /* pool._enter_slow(ctx, co): the coroutine awaiting co, keeping its
                        connection in ctx._conn */
    PE_shield,       /* asyncio.shield */
    PE_cursor_close, /* mysqlc.aio.cursors.BaseCursor.close (a subclass's own is awaited) */
    PE_COUNT
};
#define PENV(st, i) PyTuple_GET_ITEM((st)->pool_env, (i))

/* the module state of a type of this file or of a Python subclass of one (CPython
   before 3.11 has no PyType_GetModuleByDef: the bases are walked) */
static mc_state *state_of(PyTypeObject *tp) {
#if PY_VERSION_HEX >= 0x030B0000
    return mc_state_from_type(tp);
#else
    while (tp) {
        if (PyType_HasFeature(tp, Py_TPFLAGS_HEAPTYPE)) {
            PyObject *m = PyType_GetModule(tp);
            if (m) return (mc_state *)PyModule_GetState(m);
            PyErr_Clear();
        }
        tp = tp->tp_base;
    }
    PyErr_SetString(PyExc_TypeError, "not a mysqlc._core type");
    return NULL;
#endif
}

/* ---------------------------------------------------------------- _Ready */

typedef struct {
    PyObject_HEAD
    PyObject *value;
} ready_obj;

static PyObject *ready_new(mc_state *st, PyObject *value) {
    if (value == Py_None && st->ready_none) return Py_NewRef(st->ready_none);
    ready_obj *r = PyObject_New(ready_obj, st->ReadyType);
    if (!r) return NULL;
    r->value = Py_NewRef(value);
    return (PyObject *)r;
}

static void ready_dealloc(ready_obj *r) {
    PyTypeObject *tp = Py_TYPE(r);
    Py_XDECREF(r->value);
    PyObject_Free(r);
    Py_DECREF(tp);
}

static PyObject *ready_await(PyObject *r) { return Py_NewRef(r); }

static PyObject *ready_iternext(ready_obj *r) {
    return mc_aio_stop_with(Py_NewRef(r->value));
}

#if PY_VERSION_HEX >= 0x030A0000
static PySendResult ready_am_send(ready_obj *r, PyObject *arg, PyObject **out) {
    (void)arg;
    *out = Py_NewRef(r->value);
    return PYGEN_RETURN;
}
#endif

static PyObject *ready_send(ready_obj *r, PyObject *arg) {
    (void)arg;
    return ready_iternext(r);
}

static PyObject *ready_close(PyObject *r, PyObject *Py_UNUSED(x)) {
    (void)r;
    Py_RETURN_NONE;
}

static PyMethodDef ready_methods[] = {
    {"send", (PyCFunction)ready_send, METH_O, "send(value): StopIteration(its value)"},
    {"close", (PyCFunction)ready_close, METH_NOARGS, "close(): nothing to do"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot ready_slots[] = {
    {Py_tp_dealloc, ready_dealloc},
    {Py_tp_iter, ready_await},
    {Py_tp_iternext, ready_iternext},
    {Py_am_await, ready_await},
#if PY_VERSION_HEX >= 0x030A0000
    {Py_am_send, ready_am_send},
#endif
    {Py_tp_methods, ready_methods},
    {Py_tp_doc, "An awaitable that is done already: awaited, it gives its value at once "
                "(src/aio_pool.c)."},
    {0, NULL},
};

static PyType_Spec ready_spec = {
    .name = "mysqlc._core._Ready",
    .basicsize = sizeof(ready_obj),
    .flags = Py_TPFLAGS_DEFAULT,
    .slots = ready_slots,
};

/* ---------------------------------------------------------------- PoolBase */

typedef struct {
    PyObject_HEAD
    mc_state *st;
    PyObject *free;        /* collections.deque of (conn, released at) */
    PyObject *used;        /* set */
    PyObject *waiters;     /* collections.deque of futures */
    PyObject *terminated;  /* set */
    PyObject *start;       /* dict conn -> _SessionStart */
    PyObject *loop, *clock, *closing, *ping_idle, *recycle;
} pool_base;

#define POOL_FIELDS(X) X(free) X(used) X(waiters) X(terminated) X(start) X(loop) X(clock) \
    X(closing) X(ping_idle) X(recycle)

static PyObject *pool_base_new(PyTypeObject *tp, PyObject *args, PyObject *kw) {
    (void)args; (void)kw;
    mc_state *st = state_of(tp);
    if (!st) return NULL;
    pool_base *p = (pool_base *)tp->tp_alloc(tp, 0);
    if (p) p->st = st;
    return (PyObject *)p;
}

static int pool_base_traverse(pool_base *p, visitproc visit, void *arg) {
#define V(f) Py_VISIT(p->f);
    POOL_FIELDS(V)
#undef V
#if PY_VERSION_HEX >= 0x03090000
    Py_VISIT(Py_TYPE(p));
#endif
    return 0;
}

static int pool_base_clear(pool_base *p) {
#define C(f) Py_CLEAR(p->f);
    POOL_FIELDS(C)
#undef C
    return 0;
}

static void pool_base_dealloc(pool_base *p) {
    PyTypeObject *tp = Py_TYPE(p);
    PyObject_GC_UnTrack(p);
    pool_base_clear(p);
    tp->tp_free(p);
    Py_DECREF(tp);
}

#define PMEMBER(name, field) {name, T_OBJECT_EX, offsetof(pool_base, field), 0, NULL}
static PyMemberDef pool_base_members[] = {
    PMEMBER("_free", free), PMEMBER("_used", used), PMEMBER("_waiters", waiters),
    PMEMBER("_terminated", terminated), PMEMBER("_start", start), PMEMBER("_loop", loop),
    PMEMBER("_clock", clock), PMEMBER("_closing", closing),
    PMEMBER("_ping_idle", ping_idle), PMEMBER("_recycle", recycle),
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot pool_base_slots[] = {
    {Py_tp_new, pool_base_new},
    {Py_tp_dealloc, pool_base_dealloc},
    {Py_tp_traverse, pool_base_traverse},
    {Py_tp_clear, pool_base_clear},
    {Py_tp_members, pool_base_members},
    {Py_tp_doc, "The state of mysqlc.aio.Pool that its C fast paths read (src/aio_pool.c)."},
    {0, NULL},
};

static PyType_Spec pool_base_spec = {
    .name = "mysqlc._core.PoolBase",
    .basicsize = sizeof(pool_base),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = pool_base_slots,
};

/* ---------------------------------------------------------------- the checks */

/* a new reference to obj.<name>, or NULL with no exception set */
static PyObject *attr(mc_state *st, PyObject *obj, int name);

/* ---------------------------------------------------------------- the shells' bases
 *
 * _core.AioConnBase (mysqlc.aio.Connection's) and _core.AioCursorBase (the asyncio
 * cursors'): the attributes the fast paths read, as C members (`_worker`, `_sync_obj`;
 * a cursor's `connection` too).  Python sets and reads them as before. */

typedef struct {
    PyObject_HEAD
    PyObject *worker, *sync_obj, *connection;
} shell_obj;

static int shell_traverse(shell_obj *o, visitproc visit, void *arg) {
    Py_VISIT(o->worker); Py_VISIT(o->sync_obj); Py_VISIT(o->connection);
    Py_VISIT(Py_TYPE(o));
    return 0;
}

static int shell_clear(shell_obj *o) {
    Py_CLEAR(o->worker); Py_CLEAR(o->sync_obj); Py_CLEAR(o->connection);
    return 0;
}

static void shell_dealloc(shell_obj *o) {
    PyTypeObject *tp = Py_TYPE(o);
    PyObject_GC_UnTrack(o);
    shell_clear(o);
    tp->tp_free(o);
    Py_DECREF(tp);
}

static PyMemberDef conn_base_members[] = {
    {"_worker", T_OBJECT_EX, offsetof(shell_obj, worker), 0, NULL},
    {"_sync_obj", T_OBJECT_EX, offsetof(shell_obj, sync_obj), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot conn_base_slots[] = {
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, shell_dealloc},
    {Py_tp_traverse, shell_traverse},
    {Py_tp_clear, shell_clear},
    {Py_tp_members, conn_base_members},
    {Py_tp_doc, "The C half of mysqlc.aio.Connection: the attributes src/aio_pool.c reads."},
    {0, NULL},
};

static PyType_Spec conn_base_spec = {
    .name = "mysqlc._core.AioConnBase",
    .basicsize = sizeof(shell_obj),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = conn_base_slots,
};

/* a new reference to the shell's `_worker` (field: 0) or `_sync_obj` (1): the C member
   of an AioConnBase, else the attribute; NULL (no exception) when there is none */
static PyObject *shell_field(mc_state *st, PyObject *obj, int which) {
    if (PyObject_TypeCheck(obj, st->AioConnBaseType)) {
        PyObject *v = which ? ((shell_obj *)obj)->sync_obj : ((shell_obj *)obj)->worker;
        return v ? Py_NewRef(v) : NULL;
    }
    return attr(st, obj, which ? P_sync_obj : P_worker);
}


static PyObject *attr(mc_state *st, PyObject *obj, int name) {
    PyObject *v = PyObject_GetAttr(obj, PNAME(st, name));
    if (!v) PyErr_Clear();
    return v;
}

/* Pool's _idle(conn): 1 when the connection can go to the next user as it is (no await
   running on it, its engine open with no pipeline, its core and stream idle:
   mc_pool_idle_check), with *engine set (a new reference); 0 otherwise (also when a
   state cannot be read), never an exception */
static int conn_idle(mc_state *st, PyObject *conn, PyObject **engine) {
    *engine = NULL;
    PyObject *worker = shell_field(st, conn, 0);
    if (!worker) return 0;
    PyObject *busy = attr(st, worker, P_busy);
    Py_DECREF(worker);
    if (!busy) return 0;
    int b = busy == Py_False ? 0 : busy == Py_True ? 1 : PyObject_IsTrue(busy);
    Py_DECREF(busy);
    if (b != 0) {
        PyErr_Clear();
        return 0;
    }
    PyObject *eng = shell_field(st, conn, 1);
    if (!eng) return 0;
    int ok = 0;
    PyObject *closed = attr(st, eng, P_closed), *pipe = NULL, *core = NULL, *proto = NULL;
    if (!closed || closed != Py_False) goto done;
    pipe = attr(st, eng, P_pipeline);
    if (pipe != Py_None) goto done;
    core = attr(st, eng, P_conn);
    proto = attr(st, eng, P_proto);
    if (core && proto && mc_pool_idle_check(st, core, proto)) {
        ok = 1;
        *engine = Py_NewRef(eng);
    }
done:
    Py_XDECREF(closed); Py_XDECREF(pipe); Py_XDECREF(core); Py_XDECREF(proto);
    Py_DECREF(eng);
    return ok;
}

/* `v` as a double, or *bad set (not a number) */
static double as_double(PyObject *v, int *bad) {
    double d = PyFloat_Check(v) ? PyFloat_AS_DOUBLE(v)
               : PyLong_CheckExact(v) ? PyLong_AsDouble(v) : PyFloat_AsDouble(v);
    if (d == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        *bad = 1;
    }
    return d;
}

/* a free connection's entry or a grant, (conn, released at), that needs nothing
   (Pool._verdict would say "ok": at rest, no ping or recycle due): the connection (a
   new reference), else NULL (no exception): the Python code decides */
static PyObject *grant_ok(pool_base *p, PyObject *grant) {
    if (!PyTuple_CheckExact(grant) || PyTuple_GET_SIZE(grant) != 2 || !p->recycle ||
            !p->ping_idle || !p->clock)
        return NULL;
    PyObject *conn = PyTuple_GET_ITEM(grant, 0);
    int bad = 0;
    if (p->recycle != Py_None && as_double(p->recycle, &bad) > -1) return NULL;
    if (p->ping_idle != Py_None) {
        double limit = as_double(p->ping_idle, &bad);
        double idle = as_double(PyTuple_GET_ITEM(grant, 1), &bad);
        if (bad) return NULL;
        PyObject *now = PyObject_CallNoArgs(p->clock);
        if (!now) {
            PyErr_Clear();
            return NULL;
        }
        double t = as_double(now, &bad);
        Py_DECREF(now);
        if (bad || t - idle > limit) return NULL;
    }
    PyObject *engine = NULL;
    if (bad || !conn_idle(p->st, conn, &engine)) return NULL;
    Py_DECREF(engine);
    return Py_NewRef(conn);
}

/* Pool._acquire's case without a wait, without its frame: the most recently released
   free connection when nobody waits, the pool is open on the running loop and the
   connection needs nothing (grant_ok); a new reference to it, taken (in _used), or
   NULL (no exception) when Pool._acquire() must run */
static PyObject *fast_grab(pool_base *p) {
    mc_state *st = p->st;
    if (!p->free || !p->waiters || !p->closing || !p->loop || !p->used || !st->aio_env)
        return NULL;
    Py_ssize_t nfree = PyObject_Size(p->free), nwait = PyObject_Size(p->waiters);
    if (nfree <= 0 || nwait != 0) {
        PyErr_Clear();
        return NULL;
    }
    if (p->closing != Py_False || !mc_aio_on_running_loop(st, p->loop)) return NULL;
    PyObject *last = PySequence_GetItem(p->free, -1);
    if (!last) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *conn = grant_ok(p, last);
    Py_DECREF(last);
    if (!conn) return NULL;
    PyObject *popped = PyObject_CallMethodNoArgs(p->free, PNAME(st, P_pop));
    if (!popped) {
        PyErr_Clear();
        Py_DECREF(conn);
        return NULL;
    }
    Py_DECREF(popped);   /* (the entry of `conn`: nothing ran in between) */
    if (PySet_Add(p->used, conn) < 0) {   /* (then: as a connection lost) */
        PyErr_Clear();
    }
    return conn;
}

/* Pool._hand_on's waiter case: the first waiter whose future is not done gets (conn,
   now), the connection staying in _used; 1 when one did, 0 when none is left (the
   waiters that were done are gone from the list, as Pool._hand_on drops them), -1 with
   an exception (set_result failed: as Pool._hand_on's) */
static int hand_to_waiter(pool_base *p, PyObject *conn, PyObject *now) {
    mc_state *st = p->st;
    for (;;) {
        Py_ssize_t n = PyObject_Size(p->waiters);
        if (n < 0) return -1;
        if (n == 0) return 0;
        PyObject *fut = PyObject_CallMethodNoArgs(p->waiters, PNAME(st, P_popleft));
        if (!fut) return -1;
        PyObject *done = PyObject_CallMethodNoArgs(fut, PNAME(st, P_done));
        int d = done ? PyObject_IsTrue(done) : -1;
        Py_XDECREF(done);
        if (d < 0) {
            Py_DECREF(fut);
            return -1;
        }
        if (d) {
            Py_DECREF(fut);
            continue;
        }
        PyObject *grant = PyTuple_Pack(2, conn, now);
        PyObject *r = NULL;
        if (grant && PySet_Add(p->used, conn) == 0)
            r = PyObject_CallMethodOneArg(fut, PNAME(st, P_set_result), grant);
        Py_XDECREF(grant);
        Py_DECREF(fut);
        if (!r) return -1;
        Py_DECREF(r);
        return 1;
    }
}

/* Pool._release's common case without its frame: 1 when the connection went back to the
   free list or to the first waiter, 0 when Pool._release() must run (nothing was
   changed), -1 with the exception of a waiter's set_result() */
static int fast_release(pool_base *p, PyObject *conn) {
    mc_state *st = p->st;
    if (conn == Py_None || !p->terminated || !p->used || !p->closing || !p->start ||
            !p->waiters || !p->free || !p->clock)
        return 0;
    if (!PyAnySet_Check(p->terminated) || !PyAnySet_Check(p->used) || !PyDict_Check(p->start))
        return 0;
    int in = PySet_Contains(p->terminated, conn);
    if (in != 0) goto no;
    in = PySet_Contains(p->used, conn);
    if (in != 1) goto no;
    if (p->closing != Py_False) return 0;
    PyObject *engine = NULL;
    if (!conn_idle(st, conn, &engine)) return 0;
    int ok = 0;
    PyObject *start = PyDict_GetItemWithError(p->start, conn);   /* borrowed */
    PyObject *user = NULL, *pw = NULL, *login = NULL, *seq = NULL, *ac = NULL, *core = NULL,
             *proto = NULL;
    if (!start) goto done;
    /* _SessionStart.restore_needed: the same login, then _session_need() is None */
    user = attr(st, engine, P_user);
    pw = attr(st, engine, P_password);
    login = attr(st, start, P_login);
    if (!user || !pw || !login || !PyTuple_CheckExact(login) || PyTuple_GET_SIZE(login) != 2)
        goto done;
    int ne = PyObject_RichCompareBool(user, PyTuple_GET_ITEM(login, 0), Py_NE);
    if (ne != 0) goto done;
    ne = PyObject_RichCompareBool(pw, PyTuple_GET_ITEM(login, 1), Py_NE);
    if (ne != 0) goto done;
    seq = attr(st, start, P_seq);
    ac = attr(st, start, P_autocommit);
    core = attr(st, engine, P_conn);
    proto = attr(st, engine, P_proto);
    if (!seq || !ac || !core || !proto) goto done;
    PyObject *need = mc_session_need(st, core, seq, ac);
    if (!need) goto done;
    int none = need == Py_None;
    Py_DECREF(need);
    /* Pool._hand_on: reading held (unhold() is Python's) or a waiter: Python's */
    if (!none || mc_aio_stream_held(st, proto) != 0) goto done;
    PyObject *now = PyObject_CallNoArgs(p->clock);
    if (!now) goto done;
    if (PySet_Discard(p->used, conn) != 1) {
        Py_DECREF(now);
        goto done;
    }
    int w = hand_to_waiter(p, conn, now);
    if (w != 0) {
        Py_DECREF(now);
        if (w < 0) {
            ok = -1;
            goto out;
        }
        ok = 1;
        goto done;
    }
    PyObject *item = PyTuple_Pack(2, conn, now);
    Py_DECREF(now);
    if (!item) {
        PySet_Add(p->used, conn);
        goto done;
    }
    PyObject *r = PyObject_CallMethodOneArg(p->free, PNAME(st, P_append), item);
    Py_DECREF(item);
    if (!r) {   /* (the deque refused it: as Pool._release would have failed) */
        PySet_Add(p->used, conn);
        goto done;
    }
    Py_DECREF(r);
    ok = 1;
done:
    PyErr_Clear();
out:
    Py_XDECREF(user); Py_XDECREF(pw); Py_XDECREF(login); Py_XDECREF(seq); Py_XDECREF(ac);
    Py_XDECREF(core); Py_XDECREF(proto);
    Py_DECREF(engine);
    return ok;
no:
    PyErr_Clear();
    return 0;
}

/* ---------------------------------------------------------------- PoolAcquire */

typedef struct {
    PyObject_HEAD
    mc_state *st;
    PyObject *pool;   /* the Pool (a PoolBase) */
    PyObject *conn;   /* the connection entered, or NULL */
    PyObject *co;     /* Pool._acquire()'s coroutine once made, or NULL */
    char spent;       /* entered, awaited or closed: once, as a coroutine is */
} pool_acquire;

static int acq_init(pool_acquire *a, PyObject *args, PyObject *kw) {
    PyObject *pool;
    if (kw && PyDict_GET_SIZE(kw)) {
        PyErr_SetString(PyExc_TypeError, "PoolAcquire(pool) takes no keyword arguments");
        return -1;
    }
    if (!PyArg_UnpackTuple(args, "PoolAcquire", 1, 1, &pool)) return -1;
    mc_state *st = state_of(Py_TYPE(a));
    if (!st) return -1;
    if (!PyObject_TypeCheck(pool, st->PoolBaseType)) {
        PyErr_SetString(PyExc_TypeError, "PoolAcquire(pool): pool must be a mysqlc.aio.Pool");
        return -1;
    }
    a->st = st;
    Py_XSETREF(a->pool, Py_NewRef(pool));
    return 0;
}

static int acq_traverse(pool_acquire *a, visitproc visit, void *arg) {
    Py_VISIT(a->pool); Py_VISIT(a->conn); Py_VISIT(a->co);
#if PY_VERSION_HEX >= 0x03090000
    Py_VISIT(Py_TYPE(a));
#endif
    return 0;
}

static int acq_clear(pool_acquire *a) {
    Py_CLEAR(a->pool); Py_CLEAR(a->conn); Py_CLEAR(a->co);
    return 0;
}

static void acq_dealloc(pool_acquire *a) {
    PyTypeObject *tp = Py_TYPE(a);
    PyObject_GC_UnTrack(a);
    acq_clear(a);
    tp->tp_free(a);
    Py_DECREF(tp);
}

/* What __aenter__() returns: an awaitable that does nothing until it is first resumed,
   as the coroutine of an `async def __aenter__` (a result dropped unawaited takes no
   connection).  Resumed, it takes a free connection as fast_grab does (phase 0 ->
   over), else delegates to the coroutine of Pool._enter_slow(ctx, Pool._acquire())
   (phase 1). */
typedef struct {
    PyObject_HEAD
    pool_acquire *ctx;
    PyObject *sub;   /* phase 1: the Python coroutine */
    PyObject *fut;   /* phase 4: the future in the pool's _waiters this waits on */
    PyObject *it;    /* phase 4: its __await__ iterator */
    int phase;       /* 0 not started, 1 delegating, 2 over, 3 running, 4 waiting */
} enter_obj;

/* Pool._acquire's wait, when it is the plain case: the pool open on the running loop
   and others waiting already (Pool._acquire waits then, whatever is free): a future of
   the loop's at the end of _waiters.  1 when waiting (e->fut, e->it set), 0 when
   Pool._acquire() must run instead, -1 with an exception */
static int start_wait(enter_obj *e) {
    pool_base *p = (pool_base *)e->ctx->pool;
    mc_state *st = p->st;
    if (!p->waiters || !p->closing || !p->loop || p->closing != Py_False)
        return 0;
    Py_ssize_t nwait = PyObject_Size(p->waiters);
    if (nwait <= 0) {
        PyErr_Clear();
        return 0;
    }
    if (!mc_aio_on_running_loop(st, p->loop)) return 0;
    PyObject *fut = PyObject_CallMethodNoArgs(p->loop, PNAME(st, P_create_future));
    if (!fut) return -1;
    unaryfunc await = Py_TYPE(fut)->tp_as_async ? Py_TYPE(fut)->tp_as_async->am_await : NULL;
    PyObject *it = await ? await(fut) : NULL;
    if (!it) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "create_future() gave no future");
        Py_DECREF(fut);
        return -1;
    }
    PyObject *r = PyObject_CallMethodOneArg(p->waiters, PNAME(st, P_append), fut);
    if (!r) {
        Py_DECREF(it);
        Py_DECREF(fut);
        return -1;
    }
    Py_DECREF(r);
    e->fut = fut;
    e->it = it;
    return 1;
}

/* the wait ends without a grant taken (an exception, close()): Pool._abandon_wait(fut),
   the current exception kept */
static void abandon_wait(enter_obj *e) {
    PyObject *fut = e->fut;
    e->fut = NULL;
    Py_CLEAR(e->it);
    if (!fut) return;
    PyObject *t, *v, *tb;
    PyErr_Fetch(&t, &v, &tb);
    PyObject *r = PyObject_CallMethodOneArg(e->ctx->pool, PNAME(e->ctx->st, P_abandon_wait),
                                            fut);
    if (r) {
        Py_DECREF(r);
    } else {
        PyErr_WriteUnraisable(e->ctx->pool);
    }
    PyErr_Restore(t, v, tb);
    Py_DECREF(fut);
}


static int enter_step(enter_obj *e, PyObject *arg, PyObject **out) {
    pool_acquire *a = e->ctx;
    mc_state *st = a->st;
    if (e->phase == 3) {
        PyErr_SetString(PyExc_ValueError, "coroutine already executing");
        return -1;
    }
    if (e->phase == 2) {
        PyErr_SetString(PyExc_RuntimeError, "cannot reuse already awaited coroutine");
        return -1;
    }
    int phase = e->phase;
    e->phase = 3;
    if (phase == 0 && !a->co) {   /* (a->co: the context was awaited as a coroutine) */
        PyObject *conn = fast_grab((pool_base *)a->pool);
        if (conn) {
            Py_XSETREF(a->conn, Py_NewRef(conn));
            e->phase = 2;
            *out = conn;
            return 0;
        }
        int w = start_wait(e);
        if (w < 0) {
            e->phase = 2;
            return -1;
        }
        if (w) {
            phase = 4;
            arg = Py_None;
        }
    }
    if (phase == 4) {
        PyObject *grant;
        int r = mc_aio_send_to(e->it, arg, &grant);
        if (r == 1) {   /* (the future, to the task) */
            e->phase = 4;
            *out = grant;
            return 1;
        }
        if (r < 0) {   /* (cancelled, or failed by close()) */
            abandon_wait(e);
            e->phase = 2;
            return -1;
        }
        Py_CLEAR(e->it);
        Py_CLEAR(e->fut);
        PyObject *conn = grant_ok((pool_base *)a->pool, grant);
        if (conn) {
            Py_DECREF(grant);
            Py_XSETREF(a->conn, Py_NewRef(conn));
            e->phase = 2;
            *out = conn;
            return 0;
        }
        /* "open", or a connection Pool._take checks: its coroutine from here */
        a->co = PyObject_CallMethodOneArg(a->pool, PNAME(st, P_take), grant);
        Py_DECREF(grant);
        if (!a->co) {
            e->phase = 2;
            return -1;
        }
    }
    if (!e->sub) {
        if (!a->co) {
            a->co = PyObject_CallMethodNoArgs(a->pool, PNAME(st, P_acquire));
            if (!a->co) {
                e->phase = 2;
                return -1;
            }
        }
        e->sub = PyObject_CallFunctionObjArgs(PENV(st, PE_enter_slow), (PyObject *)a, a->co,
                                              NULL);
        if (!e->sub) {
            e->phase = 2;
            return -1;
        }
        arg = Py_None;
    }
    int r = mc_aio_send_to(e->sub, arg, out);
    if (r == 1) {
        e->phase = 1;
    } else {
        e->phase = 2;
        Py_CLEAR(e->sub);
    }
    return r;
}

static PyObject *enter_iternext(enter_obj *e) {
    PyObject *out;
    int r = enter_step(e, Py_None, &out);
    if (r == 1) return out;
    if (r == 0) return mc_aio_stop_with(out);
    return NULL;
}

static PyObject *enter_send(enter_obj *e, PyObject *arg) {
    PyObject *out;
    int r = enter_step(e, arg, &out);
    if (r == 1) return out;
    if (r == 0) return mc_aio_stop_with(out);
    return NULL;
}

#if PY_VERSION_HEX >= 0x030A0000
static PySendResult enter_am_send(enter_obj *e, PyObject *arg, PyObject **out) {
    int r = enter_step(e, arg, out);
    return r == 1 ? PYGEN_NEXT : r == 0 ? PYGEN_RETURN : PYGEN_ERROR;
}
#endif

/* throw(...): into the Python coroutine when one runs; before the first step the
   exception is raised as it is, and nothing was taken */
static PyObject *enter_throw(enter_obj *e, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 1 || nargs > 3) {
        PyErr_SetString(PyExc_TypeError, "throw expected 1 to 3 arguments");
        return NULL;
    }
    if (e->phase == 3) {
        PyErr_SetString(PyExc_ValueError, "coroutine already executing");
        return NULL;
    }
    if (e->phase == 4) {   /* the exception where Pool._acquire awaits its future */
        e->phase = 3;
        PyObject *m = PyObject_GetAttrString(e->it, "throw");
        PyObject *r = m ? PyObject_Vectorcall(m, args, (size_t)nargs, NULL) : NULL;
        Py_XDECREF(m);
        if (r) {   /* (the future's iterator went on waiting) */
            e->phase = 4;
            return r;
        }
        if (PyErr_ExceptionMatches(PyExc_StopIteration)) {   /* (a grant, oddly) */
            PyErr_Clear();
            PyErr_SetString(PyExc_RuntimeError, "pool acquire: the wait ended on a throw()");
        }
        abandon_wait(e);
        e->phase = 2;
        return NULL;
    }
    if (e->phase == 1 && e->sub) {
        PyObject *m = PyObject_GetAttrString(e->sub, "throw");
        PyObject *r = m ? PyObject_Vectorcall(m, args, (size_t)nargs, NULL) : NULL;
        Py_XDECREF(m);
        if (!r) {
            e->phase = 2;
            Py_CLEAR(e->sub);
        }
        return r;   /* (StopIteration with its value, or what it raised) */
    }
    e->phase = 2;
    PyObject *typ = args[0];
    if (PyExceptionInstance_Check(typ)) {
        PyErr_SetObject((PyObject *)Py_TYPE(typ), typ);
    } else if (PyExceptionClass_Check(typ)) {
        PyErr_SetObject(typ, nargs > 1 ? args[1] : Py_None);
    } else {
        PyErr_Format(PyExc_TypeError, "exceptions must be classes or instances deriving from "
                     "BaseException, not %s", Py_TYPE(typ)->tp_name);
    }
    return NULL;
}

static PyObject *enter_close(enter_obj *e, PyObject *Py_UNUSED(x)) {
    if (e->phase == 3) {
        PyErr_SetString(PyExc_ValueError, "coroutine already executing");
        return NULL;
    }
    if (e->phase == 4) {
        abandon_wait(e);
        e->phase = 2;
        Py_RETURN_NONE;
    }
    e->phase = 2;
    if (e->sub) {
        PyObject *sub = e->sub;
        e->sub = NULL;
        PyObject *r = PyObject_CallMethodNoArgs(sub, PNAME(e->ctx->st, P_close));
        Py_DECREF(sub);
        return r;
    }
    Py_RETURN_NONE;
}

static PyObject *enter_await(PyObject *e) { return Py_NewRef(e); }

static int enter_traverse(enter_obj *e, visitproc visit, void *arg) {
    Py_VISIT(e->ctx); Py_VISIT(e->sub); Py_VISIT(e->fut); Py_VISIT(e->it);
    Py_VISIT(Py_TYPE(e));
    return 0;
}

static int enter_clear(enter_obj *e) {
    Py_CLEAR(e->ctx); Py_CLEAR(e->sub); Py_CLEAR(e->fut); Py_CLEAR(e->it);
    return 0;
}

/* dropped while waiting (its task destroyed): the wait leaves the pool's list, as a
   Python coroutine's GeneratorExit would take it off */
static void enter_finalize(enter_obj *e) {
    if (e->phase == 4 && e->fut && e->ctx) abandon_wait(e);
}

static void enter_dealloc(enter_obj *e) {
    PyTypeObject *tp = Py_TYPE(e);
    if (PyObject_CallFinalizerFromDealloc((PyObject *)e) < 0) return;   /* (resurrected) */
    PyObject_GC_UnTrack(e);
    enter_clear(e);
    PyObject_GC_Del(e);
    Py_DECREF(tp);
}

static PyMethodDef enter_methods[] = {
    {"send", (PyCFunction)enter_send, METH_O, "send(value): as a coroutine's"},
    {"throw", (PyCFunction)(void (*)(void))enter_throw, METH_FASTCALL,
     "throw(exc): as a coroutine's"},
    {"close", (PyCFunction)enter_close, METH_NOARGS, "close(): as a coroutine's"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot enter_slots[] = {
    {Py_tp_dealloc, enter_dealloc},
    {Py_tp_finalize, enter_finalize},
    {Py_tp_traverse, enter_traverse},
    {Py_tp_clear, enter_clear},
    {Py_tp_iter, enter_await},
    {Py_tp_iternext, enter_iternext},
    {Py_am_await, enter_await},
#if PY_VERSION_HEX >= 0x030A0000
    {Py_am_send, enter_am_send},
#endif
    {Py_tp_methods, enter_methods},
    {Py_tp_doc, "The awaitable of `pool.acquire().__aenter__()`: the connection, taken when "
                "it is awaited (src/aio_pool.c)."},
    {0, NULL},
};

static PyType_Spec enter_spec = {
    .name = "mysqlc._core._PoolEnter",
    .basicsize = sizeof(enter_obj),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC
#if PY_VERSION_HEX < 0x030C0000
             | Py_TPFLAGS_HAVE_FINALIZE
#endif
    ,
    .slots = enter_slots,
};

/* __aenter__(): the awaitable of the connection (_PoolEnter): taken when it is awaited,
   without a wait when fast_grab takes it, else by Pool._acquire() */
static PyObject *acq_aenter(pool_acquire *a, PyObject *Py_UNUSED(x)) {
    mc_state *st = a->st;
    if (!st || !a->pool || !st->pool_env) {
        PyErr_SetString(PyExc_RuntimeError, "PoolAcquire was not initialized");
        return NULL;
    }
    if (!a->co && a->spent) {   /* (a coroutine's own error for a second await) */
        PyErr_SetString(PyExc_RuntimeError, "cannot reuse already awaited coroutine");
        return NULL;
    }
    a->spent = 1;
    enter_obj *e = PyObject_GC_New(enter_obj, st->PoolEnterType);
    if (!e) return NULL;
    e->ctx = (pool_acquire *)Py_NewRef((PyObject *)a);
    e->sub = e->fut = e->it = NULL;
    e->phase = 0;
    PyObject_GC_Track(e);
    return (PyObject *)e;
}

/* __aexit__(*exc): the connection back to the pool: a _Ready when that is done, else the
   shielded reset (asyncio.shield of Pool._release()'s task) */
static PyObject *acq_aexit(pool_acquire *a, PyObject *const *args, Py_ssize_t nargs) {
    (void)args; (void)nargs;
    mc_state *st = a->st;
    if (!st || !a->pool || !st->pool_env) {
        PyErr_SetString(PyExc_RuntimeError, "PoolAcquire was not initialized");
        return NULL;
    }
    PyObject *conn = a->conn ? a->conn : Py_NewRef(Py_None);
    a->conn = NULL;
    int done = fast_release((pool_base *)a->pool, conn);
    if (done) {
        Py_DECREF(conn);
        return done < 0 ? NULL : Py_NewRef(st->ready_none);
    }
    PyObject *resetting = PyObject_CallMethodOneArg(a->pool, PNAME(st, P_release), conn);
    Py_DECREF(conn);
    if (!resetting) return NULL;
    if (resetting == Py_None) {
        Py_DECREF(resetting);
        return Py_NewRef(st->ready_none);
    }
    /* the reset runs as its own task: cancelling the block's task does not stop it */
    PyObject *r = PyObject_CallOneArg(PENV(st, PE_shield), resetting);
    Py_DECREF(resetting);
    return r;
}

static PyMethodDef acq_methods[] = {
    {"__aenter__", (PyCFunction)acq_aenter, METH_NOARGS,
     "__aenter__(): awaitable of the connection acquired"},
    {"__aexit__", (PyCFunction)(void (*)(void))acq_aexit, METH_FASTCALL,
     "__aexit__(exc_type, exc, tb): awaitable of the connection's release"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef acq_members[] = {
    {"_pool", T_OBJECT, offsetof(pool_acquire, pool), READONLY, NULL},
    {"_conn", T_OBJECT, offsetof(pool_acquire, conn), 0, NULL},
    {"_co", T_OBJECT, offsetof(pool_acquire, co), 0, NULL},
    {"_spent", T_BOOL, offsetof(pool_acquire, spent), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot acq_slots[] = {
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_init, acq_init},
    {Py_tp_dealloc, acq_dealloc},
    {Py_tp_traverse, acq_traverse},
    {Py_tp_clear, acq_clear},
    {Py_tp_methods, acq_methods},
    {Py_tp_members, acq_members},
    {Py_tp_doc, "The C half of mysqlc.aio.pool._AcquireContext: __aenter__ and __aexit__ "
                "(src/aio_pool.c)."},
    {0, NULL},
};

static PyType_Spec acq_spec = {
    .name = "mysqlc._core.PoolAcquire",
    .basicsize = sizeof(pool_acquire),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = acq_slots,
};

/* ---------------------------------------------------------------- AioCursorBase */

static PyObject *cur_aenter(PyObject *self, PyObject *Py_UNUSED(x)) {
    mc_state *st = state_of(Py_TYPE(self));
    if (!st) return NULL;
    return ready_new(st, self);
}

/* __aexit__(*exc): close() of mysqlc.aio.cursors.BaseCursor without its coroutine when
   no result is left unread (the sync cursor's close() called here); its coroutine
   otherwise, and a close() of a subclass's or set on the cursor always */
static PyObject *cur_aexit(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)args; (void)nargs;
    mc_state *st = state_of(Py_TYPE(self));
    if (!st) return NULL;
    if (!st->pool_env) {
        PyErr_SetString(PyExc_RuntimeError, "_pool_configure() was not called");
        return NULL;
    }
    /* cur.close is BaseCursor.close bound to this cursor: not a subclass's own, not one
       set on the object (a mock) */
    PyObject *bound = PyObject_GetAttr(self, PNAME(st, P_close));
    if (!bound) return NULL;
    int own = PyMethod_Check(bound) && PyMethod_GET_FUNCTION(bound) == PENV(st, PE_cursor_close)
              && PyMethod_GET_SELF(bound) == self;
    if (!own) {
        PyObject *r = PyObject_CallNoArgs(bound);
        Py_DECREF(bound);
        return r;
    }
    Py_DECREF(bound);
    PyObject *cur = ((shell_obj *)self)->sync_obj;
    if (!cur) {
        PyErr_SetString(PyExc_AttributeError, "_sync_obj");
        return NULL;
    }
    Py_INCREF(cur);
    PyObject *conn = PyObject_GetAttr(cur, PNAME(st, P_connection));
    if (!conn) {
        Py_DECREF(cur);
        return NULL;
    }
    int python = 0;
    if (conn != Py_None) {
        PyObject *core = PyObject_GetAttr(conn, PNAME(st, P_conn));
        if (!core) {
            PyErr_Clear();
            python = 1;
        } else {
            /* core.unread and core.open (mysqlc.aio.cursors.BaseCursor.close) */
            if (core != Py_None) {
                if (!PyObject_TypeCheck(core, st->ConnectionType)) {
                    python = 1;
                } else {
                    mc_conn *c = (mc_conn *)core;
                    python = c->fd >= 0 && mc_conn_unread(c);
                }
            }
            Py_DECREF(core);
        }
    }
    Py_DECREF(conn);
    if (python) {
        Py_DECREF(cur);
        return PyObject_CallMethodNoArgs(self, PNAME(st, P_close));
    }
    PyObject *r = PyObject_CallMethodNoArgs(cur, PNAME(st, P_close));
    Py_DECREF(cur);
    if (!r) return NULL;
    Py_DECREF(r);
    return Py_NewRef(st->ready_none);
}

static PyMethodDef cur_methods[] = {
    {"__aenter__", (PyCFunction)cur_aenter, METH_NOARGS,
     "__aenter__(): awaitable of the cursor itself"},
    {"__aexit__", (PyCFunction)(void (*)(void))cur_aexit, METH_FASTCALL,
     "__aexit__(exc_type, exc, tb): awaitable of close()"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef cur_members[] = {
    {"connection", T_OBJECT_EX, offsetof(shell_obj, connection), 0, NULL},
    {"_worker", T_OBJECT_EX, offsetof(shell_obj, worker), 0, NULL},
    {"_sync_obj", T_OBJECT_EX, offsetof(shell_obj, sync_obj), 0, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot cur_slots[] = {
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_dealloc, shell_dealloc},
    {Py_tp_traverse, shell_traverse},
    {Py_tp_clear, shell_clear},
    {Py_tp_members, cur_members},
    {Py_tp_methods, cur_methods},
    {Py_tp_doc, "The C half of mysqlc.aio.cursors.BaseCursor: __aenter__ and __aexit__ "
                "(src/aio_pool.c)."},
    {0, NULL},
};

static PyType_Spec cur_spec = {
    .name = "mysqlc._core.AioCursorBase",
    .basicsize = sizeof(shell_obj),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = cur_slots,
};

/* ---------------------------------------------------------------- module level */

/* _core._pool_configure(env): the Python helpers (PE_*) */
static PyObject *pool_configure(PyObject *module, PyObject *env) {
    mc_state *st = mc_state_from_module(module);
    if (!PyTuple_CheckExact(env) || PyTuple_GET_SIZE(env) != PE_COUNT) {
        PyErr_Format(PyExc_TypeError, "_pool_configure() takes a tuple of %d", (int)PE_COUNT);
        return NULL;
    }
    Py_XSETREF(st->pool_env, Py_NewRef(env));
    Py_RETURN_NONE;
}

static PyMethodDef aio_pool_functions[] = {
    {"_pool_configure", (PyCFunction)pool_configure, METH_O,
     "_pool_configure((enter_slow, shield, cursor_close)): the Python helpers of "
     "src/aio_pool.c's slow paths"},
    {NULL, NULL, 0, NULL},
};

static int add_type(PyObject *module, PyType_Spec *spec, PyTypeObject **slot,
                    const char *name) {
    PyTypeObject *t = (PyTypeObject *)PyType_FromModuleAndSpec(module, spec, NULL);
    if (!t) return -1;
    *slot = t;
    Py_INCREF(t);
    if (PyModule_AddObject(module, name, (PyObject *)t) < 0) {
        Py_DECREF(t);
        return -1;
    }
    return 0;
}

int mc_aio_pool_add_types(PyObject *module) {
    mc_state *st = mc_state_from_module(module);
    st->pool_names = PyTuple_New(P_COUNT);
    if (!st->pool_names) return -1;
    for (int i = 0; i < P_COUNT; i++) {
        PyObject *s = PyUnicode_InternFromString(pool_name_text[i]);
        if (!s) return -1;
        PyTuple_SET_ITEM(st->pool_names, i, s);
    }
    if (add_type(module, &ready_spec, &st->ReadyType, "_Ready") < 0) return -1;
    ready_obj *none = PyObject_New(ready_obj, st->ReadyType);
    if (!none) return -1;
    none->value = Py_NewRef(Py_None);
    st->ready_none = (PyObject *)none;
    if (add_type(module, &pool_base_spec, &st->PoolBaseType, "PoolBase") < 0) return -1;
    if (add_type(module, &acq_spec, &st->PoolAcquireType, "PoolAcquire") < 0) return -1;
    if (add_type(module, &enter_spec, &st->PoolEnterType, "_PoolEnter") < 0) return -1;
    if (add_type(module, &cur_spec, &st->AioCursorBaseType, "AioCursorBase") < 0) return -1;
    if (add_type(module, &conn_base_spec, &st->AioConnBaseType, "AioConnBase") < 0) return -1;
    return PyModule_AddFunctions(module, aio_pool_functions);
}
