/* Fuzz harness: query formatting (src/encode.c format_query / literal).
 *
 * The query bytes come from the input (placeholders %s, %(name)s, %%, and anything
 * else); the parameters are drawn from a fixed pool of every supported Python type
 * (None, bool, ints at the 64-bit edges, floats incl. nan, Decimal, str with quotes
 * and non-ASCII, bytes with every escape, dates, times, timedeltas, tuples, sets,
 * an unsupported object) as a tuple or as a mapping.  Errors must be
 * ProgrammingError (or TypeError/ValueError for a wrong argument); nothing crashes.
 *
 * Input: byte 0: bit 0 mapping, bit 1 NO_BACKSLASH_ESCAPES, bits 2-4 charset;
 * byte 1: parameter count (0..7); next bytes: pool indexes; the rest: the query.
 */
#include "common.h"

static PyObject *format_fn, *pool, *names;
static const char *const charsets[] = {"utf8mb4", "latin1", "binary", "gbk", "sjis", "big5",
                                       "cp932", "ascii"};

static const char pool_py[] =
"import datetime, decimal\n"
"class Odd: pass\n"
"POOL = [None, True, False, 0, -1, 2**63 - 1, -2**63, 2**64, 1.5, -0.0, float('nan'), 1e308,\n"
"        decimal.Decimal('1.50'), decimal.Decimal('-1E+5'), decimal.Decimal('NaN'),\n"
"        '', \"it's\", 'caf\\xe9 \\u20ac \\U0001F600', '\\\\\\'\"\\x00\\x1a\\n\\r', '%s', '%(a)s',\n"
"        b'', b\"\\x00'\\\\\\\"\\x1a\\n\\r\", bytes(range(256)), bytearray(b'ba'), memoryview(b'mv'),\n"
"        datetime.date(2024, 2, 29), datetime.datetime(1, 1, 1, 0, 0, 0, 1),\n"
"        datetime.time(23, 59, 59, 999999), datetime.timedelta(days=-1, microseconds=1),\n"
"        datetime.timedelta(hours=838), (1, 'a', None), [], {'x', 'y'}, frozenset(), Odd(),\n"
"        {1, 2}]\n"
"NAMES = ['a', 'b', 'c', 'd', 'e', 'f', 'g']\n";

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    mc_fuzz_init();
    format_fn = PyObject_GetAttrString(mcf_core, "format_query");
    PyObject *g = PyDict_New();
    if (!g || !format_fn || PyDict_SetItemString(g, "__builtins__", PyEval_GetBuiltins()) < 0)
        mcf_die("init");
    PyObject *r = PyRun_String(pool_py, Py_file_input, g, g);
    if (!r) mcf_die("pool");
    Py_DECREF(r);
    pool = PyDict_GetItemString(g, "POOL");
    names = PyDict_GetItemString(g, "NAMES");
    Py_XINCREF(pool);
    Py_XINCREF(names);
    if (!pool || !names) mcf_die("pool");
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mcf_in in = {data, size};
    if (size < 2) return 0;
    uint8_t mode = mcf_u8(&in);
    int nparams = mcf_u8(&in) % 8;
    int mapping = mode & 1;
    PyObject *args = mapping ? PyDict_New() : PyTuple_New(nparams);
    if (!args) mcf_die("oom");
    for (int i = 0; i < nparams; i++) {
        PyObject *v = PyList_GET_ITEM(pool, mcf_u8(&in) % PyList_GET_SIZE(pool));
        Py_INCREF(v);
        if (mapping) {
            if (PyDict_SetItem(args, PyList_GET_ITEM(names, i), v) < 0) mcf_die("oom");
            Py_DECREF(v);
        } else {
            PyTuple_SET_ITEM(args, i, v);
        }
    }
    PyObject *r = PyObject_CallFunction(format_fn, "y#OOs", (const char *)in.p, (Py_ssize_t)in.n,
                                        args, (mode & 2) ? Py_True : Py_False,
                                        charsets[(mode >> 2) % 8]);
    if (!r && (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_ValueError)))
        PyErr_Clear();
    else if (mc_fuzz_check(r) && !PyBytes_Check(r))
        mcf_die("format_query did not return bytes");
    Py_XDECREF(r);
    Py_DECREF(args);
    return 0;
}
