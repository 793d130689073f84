/* One statement in one call: COM_QUERY sent, its response read to the end of its first
 * result, the rows kept, and what a DB-API cursor sets from it returned together.
 *
 *   query_result(sql, keys=None)       blocking: send, read, keep (the sync cursors)
 *   send_query_nowait(sql)             send without waiting for anything (an event loop)
 *   send_ping_nowait()                 the same with COM_PING
 *   take_result(keys=None, wait=False) the response of that statement, or None while its
 *                                      packets are not all there (wait=False: MC_NEED)
 *
 * The reading is one resumable flow (c->take_phase): 1 = sent, the response head not read
 * yet; 2 = rows being kept, into a Store (store.c: the packets, the first fetch decoding
 * them as rows or columns) or, where decoding may run Python code (a user converter, a
 * Python codec column: store_applies), into a list of rows decoded as they come.  With c->nowait the engine
 * returns MC_NEED where it would wait (framing.c engine_wait) and writes without waiting
 * for the transport to drain (transport_py.c), so an asyncio task can call take_result()
 * after each wake-up of its stream and decode in its own context (mysqlc/aio).  While a
 * statement is being taken no other command can be sent (mc_check_idle).
 *
 * The result: (rows, description, description_flags, rowcount, lastrowid, warning_count)
 * -- for a result set the Store or tuple of rows, its PEP 249 description, the column
 * flags, the row count, 0 and the warnings of its EOF/OK; for an OK packet (), None,
 * None, affected rows, insert id and warnings -- the values mysqlclient's cursor takes
 * from mysql_store_result() / mysql_affected_rows() / mysql_insert_id() /
 * mysql_warning_count().  Further results (SERVER_MORE_RESULTS_EXISTS) stay unread: the
 * caller reads them with next_result() as after query().
 */
#include "conn_internal.h"

static void take_clear(mc_conn *c) {
    c->take_phase = 0;
    c->take_nc = 0;
    Py_CLEAR(c->take_rows);
}

static PyObject *result_tuple(mc_conn *c, Py_ssize_t nc, PyObject *rows) {
    if (nc > 0) {
        Py_ssize_t n = PyObject_Length(rows);
        if (n < 0) return NULL;
        PyObject *t = PyTuple_New(6);
        if (!t) return NULL;
        PyObject *count = PyLong_FromSsize_t(n);
        PyObject *wc = PyLong_FromLong((long)c->warning_count);
        if (!count || !wc) {
            Py_XDECREF(count); Py_XDECREF(wc); Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, 0, Py_NewRef(rows));
        PyTuple_SET_ITEM(t, 1, Py_NewRef(c->description ? c->description : Py_None));
        PyTuple_SET_ITEM(t, 2, Py_NewRef(c->description_flags ? c->description_flags
                                                              : Py_None));
        PyTuple_SET_ITEM(t, 3, count);
        PyTuple_SET_ITEM(t, 4, PyLong_FromLong(0));   /* (a small int: cannot fail) */
        PyTuple_SET_ITEM(t, 5, wc);
        return t;
    }
    PyObject *t = PyTuple_New(6);
    if (!t) return NULL;
    PyObject *aff = PyLong_FromUnsignedLongLong((unsigned long long)c->affected_rows);
    PyObject *iid = PyLong_FromUnsignedLongLong((unsigned long long)c->insert_id);
    PyObject *wc = PyLong_FromLong((long)c->warning_count);
    if (!aff || !iid || !wc) {
        Py_XDECREF(aff); Py_XDECREF(iid); Py_XDECREF(wc); Py_DECREF(t);
        return NULL;
    }
    PyTuple_SET_ITEM(t, 0, PyTuple_New(0));
    PyTuple_SET_ITEM(t, 1, Py_NewRef(Py_None));
    PyTuple_SET_ITEM(t, 2, Py_NewRef(Py_None));
    PyTuple_SET_ITEM(t, 3, aff);
    PyTuple_SET_ITEM(t, 4, iid);
    PyTuple_SET_ITEM(t, 5, wc);
    if (!PyTuple_GET_ITEM(t, 0)) { Py_DECREF(t); return NULL; }
    return t;
}

/* Phase 2 begins: the `nc` columns' rows are kept as they complete, into a Store (or a
   list where decoding runs Python code).  0, or -1 with an exception (the flow over). */
static int rows_begin(mc_conn *c, Py_ssize_t nc, PyObject *keys) {
    c->take_nc = nc;
    c->take_phase = 2;
    PyObject *s = (PyObject *)mc_store_begin(c, keys);
    if (!s) {
        if (PyErr_Occurred()) { take_clear(c); return -1; }
        s = PyList_New(0);   /* decoded as the rows come */
        if (!s) { take_clear(c); return -1; }
    }
    c->take_rows = s;
    return 0;
}

/* Advance the flow.  The result tuple; NULL with an exception (the flow is over: an ERR
   packet leaves the connection usable, a failure closes it); NULL without one when the
   packets are not all there and c->nowait (call again after more bytes).  The caller has
   entered. */
static PyObject *take(mc_conn *c, PyObject *keys) {
    if (c->take_phase == 1) {
        Py_ssize_t nc = mc_read_query_response(c);
        if (nc == MC_NEED) return NULL;
        if (nc < 0) { take_clear(c); return NULL; }
        if (nc == 0) { take_clear(c); return result_tuple(c, 0, NULL); }
        if (keys && PyTuple_GET_SIZE(keys) != c->plan_len) {
            /* the rows stay unread (rows_pending): the next command drops them */
            take_clear(c);
            PyErr_SetString(PyExc_TypeError, "keys must be a tuple with one key per column");
            return NULL;
        }
        if (rows_begin(c, nc, keys) < 0) return NULL;
    }
    if (c->take_phase != 2) {
        mc_raise(c->st->ProgrammingError, CR_COMMANDS_OUT_OF_SYNC,
                 "no statement sent with send_query_nowait() awaits its response");
        return NULL;
    }
    PyObject *rows = c->take_rows;
    if (PyList_CheckExact(rows)) {
        while (c->state == ST_ROWS) {
            PyObject *more = mc_fetch_rows(c, -1, keys);
            if (!more) { take_clear(c); return NULL; }
            Py_ssize_t got = PyList_GET_SIZE(more);
            int rc = got ? PyList_SetSlice(rows, PyList_GET_SIZE(rows), PyList_GET_SIZE(rows),
                                           more) : 0;
            Py_DECREF(more);
            if (rc < 0) { take_clear(c); return NULL; }
            if (c->state == ST_ROWS && (c->nowait || !got)) {
                if (!c->nowait) {   /* (a blocking transport always makes progress) */
                    mc_raise(c->st->InternalError, 0, "no progress reading rows");
                    take_clear(c);
                    return NULL;
                }
                return NULL;   /* the next row is not complete */
            }
        }
        PyObject *t = PyList_AsTuple(rows);
        if (!t) { take_clear(c); return NULL; }
        Py_ssize_t nc = c->take_nc;
        take_clear(c);
        PyObject *r = result_tuple(c, nc, t);
        Py_DECREF(t);
        return r;
    }
    int r = mc_store_pull((mc_store *)rows, c);
    if (r == MC_NEED) return NULL;
    if (r < 0) { take_clear(c); return NULL; }
    Py_INCREF(rows);
    Py_ssize_t nc = c->take_nc;
    take_clear(c);
    PyObject *t = result_tuple(c, nc, rows);
    Py_DECREF(rows);
    return t;
}

/* The arguments of a METH_FASTCALL | METH_KEYWORDS method into out[0..n): positional
   ones first, then keywords by name (`names`); `required` of them must be given; out[]
   holds the defaults of the others on entry.  0, or -1 with TypeError. */
static int fast_args(const char *fn, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames, const char *const *names, Py_ssize_t n,
                     Py_ssize_t required, PyObject **out) {
    if (nargs > n) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %zd arguments (%zd given)", fn, n,
                     nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++) out[i] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    Py_ssize_t given = nargs;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        Py_ssize_t i = 0;
        while (i < n && PyUnicode_CompareWithASCIIString(name, names[i]) != 0) i++;
        if (i == n || i < nargs) {
            PyErr_Format(PyExc_TypeError, i == n ? "%s() got an unexpected keyword "
                         "argument %R" : "%s() got multiple values for argument %R", fn, name);
            return -1;
        }
        out[i] = args[nargs + k];
        if (i < required) given++;
    }
    if (given < required) {
        PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fn,
                     names[given]);
        return -1;
    }
    return 0;
}

static int parse_keys(PyObject **keys) {
    if (*keys == Py_None) { *keys = NULL; return 0; }
    if (!PyTuple_Check(*keys)) {
        PyErr_SetString(PyExc_TypeError, "keys must be a tuple with one key per column");
        return -1;
    }
    return 0;
}

/* Before COM_QUERY `sql` is framed: as query() checks it.  0 or -1. */
static int query_ready(mc_conn *c, const unsigned char *sql, size_t n) {
    if (mc_check_idle(c) < 0) return -1;
    if (mc_check_packet(c, 1 + n, "the statement (COM_QUERY)") < 0) return -1;
    if (mc_infile_limit_prepare(c, sql, n) < 0) return -1;
    c->binary = 0;
    c->cursor_wanted = 0;
    return 0;
}

/* format_statement(query, args, no_backslash_escapes, charset, encoding, encoders,
   binary_prefix) -> bytes: the statement path's formatting (encode.c), its options kept
   per connection.  No I/O and no state of the session: no thread guard. */
PyObject *mc_conn_format_statement(mc_conn *c, PyObject *const *args, Py_ssize_t nargs) {
    return mc_encode_format_cached(&c->fmt_cache, c->st, args, nargs);
}

/* query_result(sql: bytes, keys=None) -> (rows, description, description_flags, rowcount,
   lastrowid, warning_count): query() and store() (or fetch(-1)) in one call. */
PyObject *mc_conn_query_result(mc_conn *c, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames) {
    /* METH_FASTCALL: the sync cursors' per-statement call, so the arguments are taken
       by hand (PyArg_ParseTupleAndKeywords and a Py_buffer cost about as much as the
       rest of the call's Python-facing work for a small statement) */
    static const char *const names[] = {"sql", "keys"};
    PyObject *a[2] = {NULL, Py_None};
    if (fast_args("query_result", args, nargs, kwnames, names, 2, 1, a) < 0) return NULL;
    PyObject *keys = a[1];
    Py_buffer view;
    if (PyObject_GetBuffer(a[0], &view, PyBUF_SIMPLE) < 0) return NULL;
    PyObject *ret = NULL;
    if (parse_keys(&keys) < 0) goto out;
    if (mc_conn_enter(c) < 0) goto out;
    if (query_ready(c, view.buf, (size_t)view.len) < 0) goto done;
    if (mc_send_query(c, view.buf, (size_t)view.len) < 0) goto done;
    take_clear(c);
    c->take_phase = 1;
    ret = take(c, keys);
    if (!ret && !PyErr_Occurred()) {   /* (cannot happen without nowait) */
        take_clear(c);
        mc_raise(c->st->InternalError, 0, "the response is not complete");
    }
done:
    mc_conn_leave(c);
out:
    PyBuffer_Release(&view);
    return ret;
}

/* The command framed in c->out handed to the transport without waiting; its response is
   taken by take_result() from now on.  0, or -1 with an exception. */
static int send_framed_nowait(mc_conn *c) {
    take_clear(c);
    c->nowait = 1;
    int r = c->io->flush(c);
    c->nowait = 0;
    if (r < 0) return -1;
    c->take_phase = 1;
    return 0;
}

/* send_query_nowait(sql: bytes) -> bool: COM_QUERY framed and handed to the transport
   without waiting (take_result() reads its response).  False, with nothing sent, when the
   statement cannot go without a wait first: the session's max_allowed_packet must be read
   (a statement of 1024 bytes or more, before the first such), the statement takes more
   than one 16 MiB packet (written packet by packet, each write waiting for the transport
   to drain), or it may be LOAD DATA LOCAL on a connection that serves files (its flow
   waits for the server). */
PyObject *mc_conn_send_query_nowait(mc_conn *c, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *sql = view.buf;
    size_t n = (size_t)view.len;
    PyObject *ret = NULL;
    if (mc_conn_enter(c) < 0) goto out;
    if (!c->io) {
        mc_raise(c->st->NotSupportedError, 0, "send_query_nowait needs a transport");
        goto done;
    }
    if ((1 + n >= MC_MIN_MAX_PACKET && c->max_packet == 0) ||
        /* a statement of several 16 MiB packets is written as it is framed (framing.c
           stream_out), waiting for the transport between them */
        n >= MC_MAX_PACKET - 64 ||
        (c->infile_handler && mc_mentions_local(sql, n))) {
        ret = Py_NewRef(Py_False);
        goto done;
    }
    if (query_ready(c, sql, n) < 0) goto done;
    if (mc_send_query(c, sql, n) < 0) goto done;
    if (send_framed_nowait(c) < 0) goto done;
    ret = Py_NewRef(Py_True);
done:
    mc_conn_leave(c);
out:
    PyBuffer_Release(&view);
    return ret;
}

/* send_ping_nowait() -> True: COM_PING handed to the transport without waiting;
   take_result() reads its answer (an OK packet: the result tuple of a statement without
   a result set; an ERR raises).  The event loop's ping (mysqlc.aio), as
   send_query_nowait() is its statement. */
PyObject *mc_conn_send_ping_nowait(mc_conn *c, PyObject *Py_UNUSED(ignored)) {
    PyObject *ret = NULL;
    if (mc_conn_enter(c) < 0) return NULL;
    if (!c->io) {
        mc_raise(c->st->NotSupportedError, 0, "send_ping_nowait needs a transport");
        goto done;
    }
    if (mc_check_idle(c) < 0) goto done;
    c->binary = 0;
    c->cursor_wanted = 0;
    if (mc_conn_command(c, COM_PING, NULL, 0) < 0) goto done;
    if (send_framed_nowait(c) < 0) goto done;
    ret = Py_NewRef(Py_True);
done:
    mc_conn_leave(c);
    return ret;
}

/* take_result(keys=None, wait=False) -> the result tuple, or None (wait=False) while the
   response of the statement send_query_nowait() sent is not complete; the rows that are
   complete are kept meanwhile.  An ERR raises as query() does. */
PyObject *mc_conn_take_result(mc_conn *c, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames) {
    static const char *const names[] = {"keys", "wait"};   /* (METH_FASTCALL: per statement) */
    PyObject *a[2] = {Py_None, Py_False};
    if (fast_args("take_result", args, nargs, kwnames, names, 2, 0, a) < 0) return NULL;
    PyObject *keys = a[0];
    int wait = PyObject_IsTrue(a[1]);
    if (wait < 0) return NULL;
    if (parse_keys(&keys) < 0) return NULL;
    if (c->fd < 0) {   /* (the stream ended, and with it the statement's response) */
        take_clear(c);
        return mc_conn_raise_closed(c);
    }
    if (c->take_phase == 0)
        return mc_raise(c->st->ProgrammingError, CR_COMMANDS_OUT_OF_SYNC,
                        "no statement sent with send_query_nowait() awaits its response");
    if (mc_conn_enter(c) < 0) return NULL;
    c->nowait = !wait;
    PyObject *ret = take(c, keys);
    c->nowait = 0;
    mc_conn_leave(c);
    if (!ret && !PyErr_Occurred()) Py_RETURN_NONE;
    return ret;
}

/* take_head(wait=False) -> the field count of the statement send_query_nowait() sent, as
   query() returns it, or None (wait=False) while the response's head (an OK packet, or the
   column definitions) is not complete.  The rows are left unread (rows_pending), for
   fetch() as after query(): the unbuffered cursors of mysqlc.aio.  An ERR raises as
   query() does. */
PyObject *mc_conn_take_head(mc_conn *c, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
    static const char *const names[] = {"wait"};
    PyObject *a[1] = {Py_False};
    if (fast_args("take_head", args, nargs, kwnames, names, 1, 0, a) < 0) return NULL;
    int wait = PyObject_IsTrue(a[0]);
    if (wait < 0) return NULL;
    if (c->fd < 0) {
        take_clear(c);
        return mc_conn_raise_closed(c);
    }
    if (c->take_phase != 1)
        return mc_raise(c->st->ProgrammingError, CR_COMMANDS_OUT_OF_SYNC,
                        "no statement sent with send_query_nowait() awaits its response");
    if (mc_conn_enter(c) < 0) return NULL;
    c->nowait = !wait;
    Py_ssize_t nc = mc_read_query_response(c);
    c->nowait = 0;
    mc_conn_leave(c);
    if (nc == MC_NEED) Py_RETURN_NONE;
    take_clear(c);
    if (nc < 0) return NULL;
    return PyLong_FromSsize_t(nc);
}

/* take_rows(keys=None) -> the result tuple, or None while the rows are not all there:
   after take_head() returned a field count above 0, the rows of that result are taken as
   take_result() takes them (later calls: take_result()), `keys` decided from the head
   (the column names: a dict cursor's).  mysqlc.aio's buffered cursors whose classes read
   results their own way. */
PyObject *mc_conn_take_rows(mc_conn *c, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) {
    static const char *const names[] = {"keys"};
    PyObject *a[1] = {Py_None};
    if (fast_args("take_rows", args, nargs, kwnames, names, 1, 0, a) < 0) return NULL;
    PyObject *keys = a[0];
    if (parse_keys(&keys) < 0) return NULL;
    if (c->fd < 0) {
        take_clear(c);
        return mc_conn_raise_closed(c);
    }
    if (c->take_phase != 0 || c->state != ST_ROWS || c->plan_len <= 0)
        return mc_raise(c->st->ProgrammingError, CR_COMMANDS_OUT_OF_SYNC,
                        "take_rows() comes after a take_head() that read a result set's "
                        "head");
    if (keys && PyTuple_GET_SIZE(keys) != c->plan_len) {
        PyErr_SetString(PyExc_TypeError, "keys must be a tuple with one key per column");
        return NULL;
    }
    if (mc_conn_enter(c) < 0) return NULL;
    PyObject *ret = NULL;
    if (rows_begin(c, c->plan_len, keys) == 0) {
        c->nowait = 1;
        ret = take(c, keys);
        c->nowait = 0;
    }
    mc_conn_leave(c);
    if (!ret && !PyErr_Occurred()) Py_RETURN_NONE;
    return ret;
}

/* take_pending -> bool: a statement's response is being taken (take_result() not done) */
PyObject *mc_conn_get_take_pending(mc_conn *c, void *x) {
    return PyBool_FromLong(c->take_phase != 0);
}
