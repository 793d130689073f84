/* Fuzz harness: binary-protocol value decoders (src/binary.c mc_decode_binary_value).
 *
 * One column plan (fuzzed type, flags, charset, optionally a user converter) and a run
 * of values decoded back to back from a buffer of exactly the input's size, as the
 * binary row decoder does.  Invariants besides ASan/UBSan: the cursor only moves
 * forward and stays inside the buffer; a short value sets *short_packet with no
 * exception; an error is ValueError/ArithmeticError (a bad value) and nothing else;
 * integers are the little-endian value of their bytes.
 *
 * Input: type (1 byte), flags (2), charset (2), converter flag (1), then values.
 */
#include "common.h"

static PyObject *converters;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    mc_fuzz_init();
    PyObject *builtins = PyEval_GetBuiltins();
    converters = PyDict_New();
    for (int t = 0; t < 256; t++) {
        PyObject *k = PyLong_FromLong(t);
        if (!k || PyDict_SetItem(converters, k, PyDict_GetItemString(builtins, "repr")) < 0)
            mcf_die("init");
        Py_DECREF(k);
    }
    return 0;
}

static int64_t le_signed(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~(uint64_t)0 << (8 * n);
    return (int64_t)v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mcf_in in = {data, size};
    if (size < 6) return 0;
    uint8_t type = mcf_u8(&in);
    uint16_t flags = mcf_u16(&in);
    uint16_t charset = mcf_u16(&in);
    int conv = mcf_u8(&in) & 1;
    mc_column_plan plan;
    if (mc_plan_column(mcf_state, &plan, type, flags, charset, conv ? converters : NULL) < 0)
        mcf_die("plan");
    unsigned char *buf = malloc(in.n ? in.n : 1);
    memcpy(buf, in.p, in.n);
    const unsigned char *p = buf, *e = buf + in.n;
    for (int i = 0; i < 16 && p < e; i++) {
        const unsigned char *before = p;
        int short_packet = 0;
        PyObject *v = mc_decode_binary_value(mcf_state, &plan, &p, e, &short_packet);
        if (p < before || p > e) mcf_die("cursor outside the value buffer");
        if (!v) {
            if (short_packet) {
                if (PyErr_Occurred()) mcf_die("short value with an exception set");
                if (p != before) mcf_die("short value moved the cursor");
                break;
            }
            if (!PyErr_Occurred()) mcf_die("NULL without an exception");
            if (!PyErr_ExceptionMatches(PyExc_ValueError) && !PyErr_ExceptionMatches(PyExc_ArithmeticError))
                mcf_die("unexpected exception class");
            PyErr_Clear();
            break;
        }
        if (PyErr_Occurred()) mcf_die("value returned with an exception set");
        if (p == before && type != MC_TYPE_NULL) mcf_die("a value that consumed no bytes");
        int width = type == MC_TYPE_TINY ? 1 : type == MC_TYPE_SHORT ? 2
                  : (type == MC_TYPE_LONG || type == MC_TYPE_INT24) ? 4 : type == MC_TYPE_LONGLONG ? 8 : 0;
        if (width && !conv) {
            if (!PyLong_Check(v)) mcf_die("integer column gave a non-int");
            int unsig = (flags & MC_FLAG_UNSIGNED) != 0;
            PyObject *want = unsig ? PyLong_FromUnsignedLongLong(width == 8 ? (uint64_t)le_signed(before, 8)
                                                                 : (uint64_t)le_signed(before, width) & ((1ULL << (8 * width)) - 1))
                                   : PyLong_FromLongLong(le_signed(before, width));
            if (PyObject_RichCompareBool(v, want, Py_EQ) != 1) mcf_die("integer value differs from its bytes");
            Py_DECREF(want);
        }
        Py_DECREF(v);
    }
    mc_plan_clear(&plan);
    free(buf);
    return 0;
}
