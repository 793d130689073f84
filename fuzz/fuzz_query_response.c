/* Fuzz harness: a complete COM_QUERY response parsed from raw bytes.
 *
 * Covers packet framing and sequence ids, OK / ERR / EOF packets (with and without
 * CLIENT_DEPRECATE_EOF and CLIENT_SESSION_TRACK), the column count, column
 * definitions, text rows for every column type, multi-result sets and LOCAL INFILE
 * requests, through Connection._replay() -> fetch() / next_result().
 *
 * Input: byte 0 selects the mode, the rest is what the server sent (sequence ids
 * starting at 1).
 *   bit 0  CLIENT_DEPRECATE_EOF      bit 1  CLIENT_SESSION_TRACK
 *   bit 2  fetch one row at a time, as dicts (keys=)
 *   bit 3  user converters for some column types
 *   bit 4  discard() instead of fetching
 */
#include "common.h"

static PyObject *converters;
static PyObject *attr_names;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    mc_fuzz_init();
    PyObject *builtins = PyEval_GetBuiltins();   /* borrowed */
    converters = Py_BuildValue("{iOiOiOiOiO}", 3, PyDict_GetItemString(builtins, "str"),
                               253, PyDict_GetItemString(builtins, "len"),
                               8, PyDict_GetItemString(builtins, "int"),
                               10, PyDict_GetItemString(builtins, "repr"),
                               252, PyDict_GetItemString(builtins, "ascii"));
    attr_names = Py_BuildValue("(sssssssssssssss)", "affected_rows", "insert_id",
                               "warning_count", "info", "field_count", "description",
                               "description_flags", "column_names", "column_tables",
                               "more_results", "rows_pending", "open", "server_status",
                               "no_backslash_escapes", "client_flag");
    if (!converters || !attr_names) mcf_die("init");
    return 0;
}

static void touch_attributes(PyObject *c) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(attr_names); i++) {
        PyObject *v = PyObject_GetAttr(c, PyTuple_GET_ITEM(attr_names, i));
        if (!mc_fuzz_check(v)) mcf_die("attribute getter failed");
        Py_DECREF(v);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    uint8_t mode = data[0];
    unsigned long flags = CLIENT_PROTOCOL_41;
    if (mode & 1) flags |= CLIENT_DEPRECATE_EOF;
    if (mode & 2) flags |= CLIENT_SESSION_TRACK;
    PyObject *c = PyObject_CallNoArgs(mcf_Connection);
    if (!c) mcf_die("Connection()");
    if ((mode & 8) && PyObject_SetAttrString(c, "converters", converters) < 0)
        mcf_die("set converters");
    PyObject *r = PyObject_CallMethod(c, "_replay", "y#k", (const char *)data + 1,
                                      (Py_ssize_t)(size - 1), flags);
    int ok = mc_fuzz_check(r);
    Py_XDECREF(r);
    touch_attributes(c);
    for (int round = 0; ok && round < 64; round++) {
        if (mode & 16) {
            r = PyObject_CallMethod(c, "discard", NULL);
            ok = mc_fuzz_check(r);
            Py_XDECREF(r);
            break;
        }
        if (mode & 4) {
            PyObject *names = PyObject_GetAttrString(c, "column_names");
            if (!names) mcf_die("column_names");
            PyObject *keys = names == Py_None ? Py_None : names;
            for (int k = 0; ok && k < 100000; k++) {
                r = PyObject_CallMethod(c, "fetch", "nO", (Py_ssize_t)1, keys);
                ok = mc_fuzz_check(r);
                if (ok && PyList_GET_SIZE(r) == 0) { Py_DECREF(r); break; }
                Py_XDECREF(r);
            }
            Py_DECREF(names);
        } else {
            r = PyObject_CallMethod(c, "fetch", NULL);
            ok = mc_fuzz_check(r);
            Py_XDECREF(r);
        }
        touch_attributes(c);
        if (!ok) break;
        r = PyObject_CallMethod(c, "next_result", NULL);
        ok = mc_fuzz_check(r);
        if (ok && PyLong_AsLong(r) < 0) ok = 0;
        Py_XDECREF(r);
        touch_attributes(c);
    }
    /* after everything (or an error) the connection must still answer politely */
    r = PyObject_CallMethod(c, "fetch", NULL);
    mc_fuzz_check(r);
    Py_XDECREF(r);
    r = PyObject_CallMethod(c, "close", NULL);
    mc_fuzz_check(r);
    Py_XDECREF(r);
    Py_DECREF(c);
    return 0;
}
