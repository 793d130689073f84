/* Fuzz harness: well-framed text result sets with fuzzed column types and values.
 *
 * The fuzz input chooses the column definitions (type, flags, charset: every
 * enum_field_types value, signed/unsigned, binary or a text collation) and the values
 * of the rows; the harness frames them as a correct result set (column count,
 * ColumnDefinition41 packets, [EOF], ProtocolText::ResultsetRow packets, EOF/OK) so
 * that the fuzzer spends its time in the value decoders of every column type rather
 * than in the framing (fuzz_query_response covers that).
 *
 * Input: mode byte (bit 0 CLIENT_DEPRECATE_EOF, bit 1 user converters, bit 2 dict
 * rows), column count byte (1..8), per column 5 bytes (type, flags u16, charset u16),
 * then values: a control byte each (0xFB: NULL, 0xFC: 300-byte value of repeated
 * bytes, else a length 0..63 followed by that many bytes).
 */
#include "common.h"

static PyObject *converters;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    mc_fuzz_init();
    PyObject *builtins = PyEval_GetBuiltins();
    PyObject *conv = PyDict_New();
    if (!conv) mcf_die("init");
    /* every column type gets a converter: str() of its argument (str or bytes) */
    for (int t = 0; t < 256; t++) {
        PyObject *k = PyLong_FromLong(t);
        if (!k || PyDict_SetItem(conv, k, PyDict_GetItemString(builtins, t % 2 ? "str" : "repr")) < 0)
            mcf_die("init");
        Py_DECREF(k);
    }
    converters = conv;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mcf_in in = {data, size};
    if (size < 7) return 0;
    uint8_t mode = mcf_u8(&in);
    int deprecate_eof = mode & 1;
    int ncols = 1 + mcf_u8(&in) % 8;
    mc_writer w, p;
    if (mc_writer_init(&w, 1024) < 0 || mc_writer_init(&p, 256) < 0) mcf_die("oom");
    uint8_t seq = 1;
    unsigned char nc = (unsigned char)ncols;
    mcf_packet(&w, seq++, &nc, 1);
    for (int i = 0; i < ncols; i++) {
        uint8_t type = mcf_u8(&in);
        uint16_t flags = mcf_u16(&in);
        uint16_t charset = mcf_u16(&in);
        mcf_coldef(&p, type, flags, charset, 255, 0, i);
        mcf_packet(&w, seq++, p.buf, p.len);
    }
    static const unsigned char eof[5] = {0xfe, 0, 0, 2, 0};
    static const unsigned char ok_eof[7] = {0xfe, 0, 0, 2, 0, 0, 0};
    if (!deprecate_eof) mcf_packet(&w, seq++, eof, sizeof(eof));
    for (int row = 0; row < 64 && in.n > 0; row++) {
        p.len = 0;
        mcf_text_row(&in, &p, ncols);
        mcf_packet(&w, seq++, p.buf, p.len);
    }
    if (deprecate_eof) mcf_packet(&w, seq++, ok_eof, sizeof(ok_eof));
    else mcf_packet(&w, seq++, eof, sizeof(eof));

    PyObject *c = PyObject_CallNoArgs(mcf_Connection);
    if (!c) mcf_die("Connection()");
    if ((mode & 2) && PyObject_SetAttrString(c, "converters", converters) < 0) mcf_die("converters");
    unsigned long flags = CLIENT_PROTOCOL_41 | (deprecate_eof ? CLIENT_DEPRECATE_EOF : 0);
    PyObject *r = PyObject_CallMethod(c, "_replay", "y#k", (const char *)w.buf, (Py_ssize_t)w.len, flags);
    /* the framing is correct: the column definitions must be accepted */
    if (!r) mcf_die("a well-framed result set was rejected");
    if (PyLong_AsLong(r) != ncols) mcf_die("wrong field count");
    Py_DECREF(r);
    PyObject *keys = Py_None;
    if (mode & 4) {
        keys = PyObject_GetAttrString(c, "column_names");
        if (!keys) mcf_die("column_names");
    } else {
        Py_INCREF(keys);
    }
    for (;;) {
        r = PyObject_CallMethod(c, "fetch", "nO", (Py_ssize_t)1, keys);
        if (!mc_fuzz_check(r)) break;
        Py_ssize_t got = PyList_GET_SIZE(r);
        Py_DECREF(r);
        if (got == 0) break;
    }
    Py_DECREF(keys);
    r = PyObject_GetAttrString(c, "rows_pending");
    Py_XDECREF(r);
    Py_DECREF(c);
    mc_writer_free(&w);
    mc_writer_free(&p);
    return 0;
}
