/* The Connection methods of prepared statements and query attributes (driver layer):
 * their Python arguments, the thread guard and their return values, over the engine's
 * flows in prepared.c, which take C arguments and return C status codes.  The method
 * table entries are in conn.c. */
#include "conn_internal.h"


/* stmt_prepare(sql: bytes) -> (statement_id, num_params, num_columns)  [COM_STMT_PREPARE] */
PyObject *Conn_stmt_prepare(mc_conn *c, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    if (mc_conn_enter(c) < 0) { PyBuffer_Release(&view); return NULL; }
    PyObject *ret = NULL;
    uint32_t stmt_id;
    unsigned nparams, ncols;
    if (mc_stmt_prepare(c, view.buf, (size_t)view.len, &stmt_id, &nparams, &ncols) == 0)
        ret = Py_BuildValue("(kII)", (unsigned long)stmt_id, (unsigned)nparams, (unsigned)ncols);
    mc_conn_leave(c);
    PyBuffer_Release(&view);
    return ret;
}

/* stmt_execute(statement_id, params, types=None, cursor=False, long_data_threshold=0,
                encoding="utf-8", attributes=None) -> (field_count, types)   [COM_STMT_EXECUTE]
   `attributes`: a sequence of (name, value) query attributes (CLIENT_QUERY_ATTRIBUTES);
   with that capability the parameter count is always sent (PARAMETER_COUNT_AVAILABLE)
   and the types with names every time (the returned types are then None).
   `types` is the previous execute's parameter types (bytes) so that they are re-sent only
   when they change; parameters whose str/bytes value is longer than long_data_threshold
   (> 0) are sent first with COM_STMT_SEND_LONG_DATA.  send_only=True (pipelining): the
   command is written and its response queued with `owner` (the engine's queue:
   pipe_head, read_response(); conn.c "pipelining"); returns (response sequence id, types).
   The flow: mc_stmt_execute (prepared.c). */
PyObject *Conn_stmt_execute(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"statement_id", "params", "types", "cursor", "long_data_threshold",
                             "encoding", "attributes", "send_only", "owner", NULL};
    unsigned long stmt_id;
    PyObject *params, *types = Py_None, *owner = Py_None;
    int cursor = 0, send_only = 0;
    Py_ssize_t threshold = 0;
    const char *encoding = "utf-8";
    PyObject *attributes = Py_None, *attrs = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "kO|OpnzOpO", kwlist, &stmt_id, &params,
                                     &types, &cursor, &threshold, &encoding, &attributes,
                                     &send_only, &owner))
        return NULL;
    if (send_only && (cursor || threshold > 0)) {
        PyErr_SetString(PyExc_ValueError, "send_only takes no cursor and no long data");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(params, "params must be a sequence");
    if (!seq) return NULL;
    if (attributes != Py_None) {
        attrs = PySequence_Tuple(attributes);   /* immutable while values are encoded */
        if (!attrs) { Py_DECREF(seq); return NULL; }
    }
    if (mc_conn_enter(c) < 0) { Py_DECREF(seq); Py_XDECREF(attrs); return NULL; }
    PyObject *ret = NULL, *newtypes = NULL;
    Py_ssize_t r = mc_stmt_execute(c, stmt_id, seq, types, cursor, threshold, encoding, attrs,
                                   send_only, &newtypes);
    if (r >= 0 && send_only) mc_pipe_set_owner(c, owner);   /* the queued entry's */
    if (r >= 0)   /* the field count, or with send_only the response's sequence id */
        ret = Py_BuildValue("(nO)", r, newtypes ? newtypes : Py_None);
    mc_conn_leave(c);
    Py_XDECREF(newtypes);
    Py_DECREF(seq);
    Py_XDECREF(attrs);
    return ret;
}

/* stmt_prepare_execute(sql, params, encoding="utf-8")
       -> (statement_id, num_params, num_columns, field_count, types, error)
   MariaDB's one-trip prepare (MARIADB_CLIENT_STMT_BULK_OPERATIONS servers): COM_STMT_PREPARE
   and a COM_STMT_EXECUTE of statement id 0xffffffff ("the statement prepared last") go in
   one write, and both responses are read in order.  The caller gives exactly the
   statement's parameters (it counted the placeholders); a server count that differs
   closes the connection (the execute's values cannot be trusted).  When the prepare
   fails its error is raised, after the execute's error that follows it was read and
   dropped.  When the prepare succeeds and the execute fails, the statement exists: the
   tuple is returned with field_count and types None and the execute's exception as
   `error` (the caller keeps the statement and raises it).  No long data, no server-side
   cursor, no query attributes.  The flow: mc_stmt_prepare_execute (prepared.c). */
PyObject *Conn_stmt_prepare_execute(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"sql", "params", "encoding", NULL};
    Py_buffer view;
    PyObject *params;
    const char *encoding = "utf-8";
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*O|z", kwlist, &view, &params, &encoding))
        return NULL;
    if (mc_one_trip_supported(c) < 0) { PyBuffer_Release(&view); return NULL; }
    PyObject *seq = PySequence_Fast(params, "params must be a sequence");
    if (!seq) { PyBuffer_Release(&view); return NULL; }
    if (mc_conn_enter(c) < 0) { Py_DECREF(seq); PyBuffer_Release(&view); return NULL; }
    PyObject *ret = NULL, *newtypes = NULL, *error = NULL;
    uint32_t stmt_id;
    unsigned nparams, ncols;
    Py_ssize_t nc;
    int r = mc_stmt_prepare_execute(c, view.buf, (size_t)view.len, seq, encoding, &stmt_id,
                                    &nparams, &ncols, &nc, &newtypes, &error);
    if (r == 1)   /* prepared; the execute failed with `error` */
        ret = Py_BuildValue("(kIIOOO)", (unsigned long)stmt_id, nparams, ncols, Py_None,
                            Py_None, error ? error : Py_None);
    else if (r == 0)
        ret = Py_BuildValue("(kIInOO)", (unsigned long)stmt_id, nparams, ncols, nc,
                            newtypes ? newtypes : Py_None, Py_None);
    Py_XDECREF(error);
    mc_conn_leave(c);
    Py_XDECREF(newtypes);
    Py_DECREF(seq);
    PyBuffer_Release(&view);
    return ret;
}

/* query_attributes(sql, attributes, encoding="utf-8") -> field count
   [COM_QUERY with query attributes]
   `attributes`: a sequence of (name, value) tuples, name str or bytes, value of a type
   stmt_execute() takes (None, int, float, str, bytes, Decimal, date/time types; str
   values encoded with `encoding`, a Python codec).  The
   attribute block is encoded into c->wbuf and sent with the query behind it, in one
   packet.  NotSupportedError without CLIENT_QUERY_ATTRIBUTES (nothing sent).  The flow:
   mc_query_with_attributes (prepared.c). */
PyObject *Conn_query_attributes(mc_conn *c, PyObject *args) {
    PyObject *sql, *attributes;
    const char *encoding = "utf-8";
    if (!PyArg_ParseTuple(args, "OO|z:query_attributes", &sql, &attributes, &encoding))
        return NULL;
    PyObject *attrs = PySequence_Tuple(attributes);   /* immutable while values are encoded */
    if (!attrs) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(sql, &view, PyBUF_SIMPLE) < 0) { Py_DECREF(attrs); return NULL; }
    if (mc_conn_enter(c) < 0) { PyBuffer_Release(&view); Py_DECREF(attrs); return NULL; }
    PyObject *ret = NULL;
    Py_ssize_t nc = mc_query_with_attributes(c, view.buf, (size_t)view.len, attrs, encoding);
    if (nc >= 0) ret = PyLong_FromSsize_t(nc);
    mc_conn_leave(c);
    PyBuffer_Release(&view);
    Py_DECREF(attrs);
    return ret;
}

PyObject *mc_get_query_attributes(mc_conn *c, void *x) {
    return PyBool_FromLong((c->client_flag & CLIENT_QUERY_ATTRIBUTES) != 0);
}

/* stmt_bulk_execute(statement_id, rows, max_payload=16 MiB, encoding="utf-8", exact=False,
                     prepare=None) -> total affected rows, or None
   MariaDB's COM_STMT_BULK_EXECUTE: all rows of parameters in as few commands as fit
   max_payload (one round trip each); the commands' types and bounds are planned by
   mc_bulk_plan and sent by mc_bulk_send (prepared.c, which documents the type joins).
   Returns None, having sent nothing, when the server lacks the capability, and with
   `exact` also when a value has no binary form (the caller's text path then writes it
   or reports it).  Rows must all have the statement's parameter count (checked here
   too: ProgrammingError).  A server error stops at the failing command; the commands
   before it were applied.  With `prepare` (the statement's SQL, bytes: a one-trip
   COM_STMT_PREPARE before the first command): (total or None, statement_id or None,
   num_params, num_columns, error), `error` the exception of a bulk command that failed
   after the statement was prepared. */
PyObject *Conn_stmt_bulk_execute(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"statement_id", "rows", "max_payload", "encoding", "exact",
                             "prepare", NULL};
    unsigned long stmt_id;
    PyObject *rows, *prepare = Py_None;
    Py_ssize_t max_payload = 16 << 20;
    const char *encoding = "utf-8";
    int exact = 0;   /* a value without binary form: None (the text path writes it) */
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "kO|nzpO", kwlist, &stmt_id, &rows,
                                     &max_payload, &encoding, &exact, &prepare))
        return NULL;
    mc_bulk b;
    int plan = mc_bulk_plan(c, &b, rows, prepare, max_payload, encoding, exact);
    if (plan < 0 || plan == MC_BULK_UNSUPPORTED) {
        mc_bulk_free(&b);
        return plan < 0 ? NULL : Py_NewRef(Py_None);
    }
    PyObject *ret = NULL, *bulk_error = NULL;
    if (plan == MC_BULK_EMPTY) {
        ret = PyLong_FromLong(0);
    } else if (plan == MC_BULK_NOT_BINARY) {
        ret = Py_NewRef(Py_None);
    } else if (mc_conn_enter(c) == 0) {
        int rc = mc_bulk_send(c, &b, stmt_id,
                              prepare != Py_None ? (const unsigned char *)PyBytes_AS_STRING(prepare) : NULL,
                              prepare != Py_None ? (size_t)PyBytes_GET_SIZE(prepare) : 0);
        mc_conn_leave(c);
        if (rc == 0) {
            ret = PyLong_FromUnsignedLongLong(b.total);
        } else if (b.prepared) {
            bulk_error = mc_fetch_exception();   /* the statement exists: the caller keeps it */
            ret = Py_NewRef(Py_None);
        }
    }
    if (prepare != Py_None && ret) {
        PyObject *t;
        if (b.prepared)
            t = Py_BuildValue("(OkIIO)", ret, (unsigned long)b.new_id, b.new_np, b.new_nc,
                              bulk_error ? bulk_error : Py_None);
        else   /* nothing was sent: bulk does not apply */
            t = Py_BuildValue("(OOIIO)", ret, Py_None, 0u, 0u, Py_None);
        Py_DECREF(ret);
        ret = t;
    }
    Py_XDECREF(bulk_error);
    mc_bulk_free(&b);
    return ret;
}

/* stmt_fetch(n, keys=None) -> list: the next (at most) n rows of the open server-side
   cursor [COM_STMT_FETCH]; [] once it is exhausted. */
PyObject *Conn_stmt_fetch(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"n", "keys", NULL};
    Py_ssize_t limit = 1;
    PyObject *keys = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|nO", kwlist, &limit, &keys)) return NULL;
    if (keys == Py_None) keys = NULL;
    if (keys && (!PyTuple_Check(keys) || PyTuple_GET_SIZE(keys) != c->plan_len)) {
        PyErr_SetString(PyExc_TypeError, "keys must be a tuple with one key per column");
        return NULL;
    }
    if (limit < 1 || (uint64_t)limit > 0xFFFFFFFFu) {
        PyErr_SetString(PyExc_ValueError, "n must be in 1..4294967295");
        return NULL;
    }
    if (c->state != ST_CURSOR) return PyList_New(0);
    if (mc_conn_enter(c) < 0) return NULL;
    PyObject *ret = NULL;
    if (mc_conn_cursor_fetch(c, (uint32_t)limit) == 0)
        ret = mc_fetch_rows(c, -1, keys);   /* this batch, through its terminator */
    mc_conn_leave(c);
    return ret;
}

/* stmt_reset(statement_id)  [COM_STMT_RESET]: also closes the statement's open cursor. */
PyObject *Conn_stmt_reset(mc_conn *c, PyObject *arg) {
    unsigned long stmt_id = PyLong_AsUnsignedLong(arg);
    if (stmt_id == (unsigned long)-1 && PyErr_Occurred()) return NULL;
    if (mc_conn_enter(c) < 0) return NULL;
    int rc = mc_stmt_reset(c, stmt_id);
    mc_conn_leave(c);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

/* stmt_close(statement_id)  [COM_STMT_CLOSE, no reply].  A no-op on a closed connection. */
PyObject *Conn_stmt_close(mc_conn *c, PyObject *arg) {
    unsigned long stmt_id = PyLong_AsUnsignedLong(arg);
    if (stmt_id == (unsigned long)-1 && PyErr_Occurred()) return NULL;
    if (!mc_stream_open(c)) Py_RETURN_NONE;   /* statements die with the connection */
    if (mc_conn_enter(c) < 0) return NULL;
    int rc = mc_stmt_close(c, stmt_id);
    mc_conn_leave(c);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}
