/* The floor of the wire-replay benchmark (benchmarks/bench.py --replay).
 *
 * Creates, in a C loop, the Python objects a decoder has to return for a result set --
 * a list with one tuple per row holding new int / float / str / bytes / Decimal / date /
 * datetime / timedelta objects -- and nothing else: no wire bytes are read or parsed.
 * The values come from a sample of rows a real decoder returned, so every object is
 * equivalent (same type, same value, same size) to the decoder's.  The time this takes
 * is the cost no decoder can go under; bench.py reports replay time / floor time.
 *
 * The objects are made the cheapest way the C API allows: PyLong_FromLongLong,
 * PyFloat_FromDouble, PyUnicode_New + memcpy of the canonical (PEP 393) characters,
 * PyBytes_FromStringAndSize, the datetime C API, Decimal(str) with the str made
 * beforehand (the C API has no cheaper Decimal constructor); the list is allocated at its
 * final length, and each tuple is untracked by the GC once filled (its items are atomic),
 * as mysqlc does.
 *
 *     plan = _floor.plan(sample_rows, decimal_type)   # untimed
 *     rows = _floor.build(plan, n)                      # timed: n rows, sample cycled
 *
 * Not part of mysqlc: bench.py compiles it at run time into benchmarks/out/build/.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>
#include <string.h>

enum { K_NONE, K_INT, K_UINT, K_FLOAT, K_STR, K_BYTES, K_DATE, K_DATETIME, K_TIME, K_DECIMAL,
       K_SHARED };

typedef struct {
    int kind;
    long long i;
    unsigned long long u;
    double d;
    int y, mo, da, h, mi, s, us, fold;
    const void *data;    /* str: canonical characters; bytes: the bytes */
    Py_ssize_t len;
    Py_UCS4 maxchar;
    int ukind;
    PyObject *obj;       /* Decimal: its str; datetime: tzinfo or None; K_SHARED: the value */
} cell;

typedef struct {
    Py_ssize_t nrows, ncols;
    cell *cells;
    PyObject *sample;    /* keeps the data the cells point into alive */
    PyObject *decimal;
} plan;

static void plan_free(PyObject *capsule) {
    plan *p = PyCapsule_GetPointer(capsule, "mysqlc.bench.floor");
    if (!p) return;
    if (p->cells) {
        for (Py_ssize_t k = 0; k < p->nrows * p->ncols; k++) Py_XDECREF(p->cells[k].obj);
        PyMem_Free(p->cells);
    }
    Py_XDECREF(p->sample);
    Py_XDECREF(p->decimal);
    PyMem_Free(p);
}

static int fill_cell(cell *c, PyObject *v, PyObject *decimal) {
    memset(c, 0, sizeof(*c));
    if (v == Py_None) { c->kind = K_NONE; return 0; }
    if (PyLong_CheckExact(v)) {
        int overflow;
        c->i = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (c->i == -1 && PyErr_Occurred()) return -1;
        if (!overflow) { c->kind = K_INT; return 0; }
        c->u = PyLong_AsUnsignedLongLong(v);
        if (!PyErr_Occurred()) { c->kind = K_UINT; return 0; }
        PyErr_Clear();
    } else if (PyFloat_CheckExact(v)) {
        c->kind = K_FLOAT;
        c->d = PyFloat_AS_DOUBLE(v);
        return 0;
    } else if (PyUnicode_CheckExact(v)) {
        if (PyUnicode_READY(v) < 0) return -1;
        c->kind = K_STR;
        c->len = PyUnicode_GET_LENGTH(v);
        c->ukind = PyUnicode_KIND(v);
        c->data = PyUnicode_DATA(v);
        c->maxchar = PyUnicode_IS_ASCII(v) ? 0x7F : c->ukind == PyUnicode_1BYTE_KIND ? 0xFF
                   : c->ukind == PyUnicode_2BYTE_KIND ? 0xFFFF : 0x10FFFF;
        return 0;
    } else if (PyBytes_CheckExact(v)) {
        c->kind = K_BYTES;
        c->data = PyBytes_AS_STRING(v);
        c->len = PyBytes_GET_SIZE(v);
        return 0;
    } else if (PyDateTime_CheckExact(v)) {
        c->kind = K_DATETIME;
        c->y = PyDateTime_GET_YEAR(v); c->mo = PyDateTime_GET_MONTH(v); c->da = PyDateTime_GET_DAY(v);
        c->h = PyDateTime_DATE_GET_HOUR(v); c->mi = PyDateTime_DATE_GET_MINUTE(v);
        c->s = PyDateTime_DATE_GET_SECOND(v); c->us = PyDateTime_DATE_GET_MICROSECOND(v);
        c->fold = PyDateTime_DATE_GET_FOLD(v);
        c->obj = Py_NewRef(PyDateTime_DATE_GET_TZINFO(v));
        return 0;
    } else if (PyDate_CheckExact(v)) {
        c->kind = K_DATE;
        c->y = PyDateTime_GET_YEAR(v); c->mo = PyDateTime_GET_MONTH(v); c->da = PyDateTime_GET_DAY(v);
        return 0;
    } else if (PyDelta_CheckExact(v)) {
        c->kind = K_TIME;
        c->da = PyDateTime_DELTA_GET_DAYS(v);
        c->s = PyDateTime_DELTA_GET_SECONDS(v);
        c->us = PyDateTime_DELTA_GET_MICROSECONDS(v);
        return 0;
    } else if (decimal != Py_None && Py_IS_TYPE(v, (PyTypeObject *)decimal)) {
        c->kind = K_DECIMAL;
        c->obj = PyObject_Str(v);
        return c->obj ? 0 : -1;
    }
    /* anything else (ints beyond 64 bits, other types): the sample's object itself */
    c->kind = K_SHARED;
    c->obj = Py_NewRef(v);
    return 0;
}

/* plan(sample_rows, decimal_type) -> capsule */
static PyObject *floor_plan(PyObject *self, PyObject *args) {
    PyObject *sample, *decimal;
    if (!PyArg_ParseTuple(args, "OO", &sample, &decimal)) return NULL;
    PyObject *rows = PySequence_Tuple(sample);
    if (!rows) return NULL;
    Py_ssize_t nrows = PyTuple_GET_SIZE(rows);
    if (nrows == 0 || !PyTuple_Check(PyTuple_GET_ITEM(rows, 0))) {
        Py_DECREF(rows);
        PyErr_SetString(PyExc_ValueError, "plan() needs a non-empty sequence of tuples");
        return NULL;
    }
    Py_ssize_t ncols = PyTuple_GET_SIZE(PyTuple_GET_ITEM(rows, 0));
    plan *p = PyMem_Calloc(1, sizeof(plan));
    if (!p) { Py_DECREF(rows); return PyErr_NoMemory(); }
    p->nrows = nrows;
    p->ncols = ncols;
    p->sample = rows;
    p->decimal = Py_NewRef(decimal);
    PyObject *capsule = PyCapsule_New(p, "mysqlc.bench.floor", plan_free);
    if (!capsule) {
        Py_DECREF(rows); Py_DECREF(decimal); PyMem_Free(p);
        return NULL;
    }
    p->cells = PyMem_Calloc((size_t)(nrows * ncols ? nrows * ncols : 1), sizeof(cell));
    if (!p->cells) { Py_DECREF(capsule); return PyErr_NoMemory(); }
    for (Py_ssize_t r = 0; r < nrows; r++) {
        PyObject *row = PyTuple_GET_ITEM(rows, r);
        if (!PyTuple_Check(row) || PyTuple_GET_SIZE(row) != ncols) {
            PyErr_SetString(PyExc_ValueError, "every sample row must be a tuple of the same length");
            Py_DECREF(capsule);
            return NULL;
        }
        for (Py_ssize_t k = 0; k < ncols; k++)
            if (fill_cell(&p->cells[r * ncols + k], PyTuple_GET_ITEM(row, k), decimal) < 0) {
                Py_DECREF(capsule);
                return NULL;
            }
    }
    return capsule;
}

static inline PyObject *make(const cell *c, PyObject *decimal) {
    switch (c->kind) {
    case K_NONE: return Py_NewRef(Py_None);
    case K_INT: return PyLong_FromLongLong(c->i);
    case K_UINT: return PyLong_FromUnsignedLongLong(c->u);
    case K_FLOAT: return PyFloat_FromDouble(c->d);
    case K_STR: {
        PyObject *s = PyUnicode_New(c->len, c->maxchar);
        if (s) memcpy(PyUnicode_DATA(s), c->data, (size_t)c->len * (size_t)c->ukind);
        return s;
    }
    case K_BYTES: return PyBytes_FromStringAndSize(c->data, c->len);
    case K_DATE: return PyDate_FromDate(c->y, c->mo, c->da);
    case K_DATETIME:
        return PyDateTimeAPI->DateTime_FromDateAndTimeAndFold(
            c->y, c->mo, c->da, c->h, c->mi, c->s, c->us, c->obj, c->fold,
            PyDateTimeAPI->DateTimeType);
    case K_TIME: return PyDelta_FromDSU(c->da, c->s, c->us);
    case K_DECIMAL: return PyObject_CallOneArg(decimal, c->obj);
    default: return Py_NewRef(c->obj);
    }
}

/* build(plan, n) -> list of n new tuples, the sample's rows cycled */
static PyObject *floor_build(PyObject *self, PyObject *args) {
    PyObject *capsule;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(args, "On", &capsule, &n)) return NULL;
    plan *p = PyCapsule_GetPointer(capsule, "mysqlc.bench.floor");
    if (!p) return NULL;
    PyObject *list = PyList_New(n);
    if (!list) return NULL;
    Py_ssize_t r = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const cell *c = p->cells + r * p->ncols;
        PyObject *row = PyTuple_New(p->ncols);
        if (!row) goto error;
        PyList_SET_ITEM(list, i, row);
        for (Py_ssize_t k = 0; k < p->ncols; k++) {
            PyObject *v = make(&c[k], p->decimal);
            if (!v) goto error;
            PyTuple_SET_ITEM(row, k, v);
        }
        PyObject_GC_UnTrack(row);
        if (++r == p->nrows) r = 0;
    }
    return list;
error:
    Py_DECREF(list);
    return NULL;
}

static PyMethodDef methods[] = {
    {"plan", floor_plan, METH_VARARGS, "plan(sample_rows, decimal_type) -> plan"},
    {"build", floor_build, METH_VARARGS, "build(plan, n) -> list of n tuples"},
    {NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_floor", NULL, -1, methods};

PyMODINIT_FUNC PyInit__floor(void) {
    PyDateTime_IMPORT;
    if (!PyDateTimeAPI) return NULL;
    return PyModule_Create(&module);
}
