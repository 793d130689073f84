/* Fuzz harness: the columnar builder (src/columnar.c) on well-framed result sets.
 *
 * As fuzz_resultset, the input chooses the column definitions (type, flags, charset,
 * column_length, decimals: every enum_field_types value, decimal precisions up to and
 * past 76 digits, text, latin1, other and binary character sets) and the rows, framed
 * as a correct result set; the rows are text rows (ProtocolText::ResultsetRow) or, with
 * mode bit 1, binary rows (ProtocolBinary::ResultsetRow: header, NULL bitmap and raw
 * fuzzed value bytes).  They are read with Connection.fetch_arrow() in fuzzed batch
 * sizes and the Arrow capsules are released.  Invariants besides ASan/UBSan: a batch
 * never holds more rows than asked for; an error is mysqlc.Error (or a codec's
 * ValueError) and nothing else.
 *
 * Input: mode byte (bit 0 CLIENT_DEPRECATE_EOF, bit 1 binary rows, bits 2-3 decimal
 * option, bits 4-7 batch size selector), column count byte (1..8), per column 8 bytes
 * (type, flags u16, charset u16, length u16 (x 1), decimals), then rows: text rows as
 * mcf_text_row (fuzz/common.h) makes them; binary rows as a bitmap of (columns + 9) / 8
 * bytes, a length byte and that many value bytes.
 */
#include "common.h"

static const char *decimal_modes[4] = {"decimal", "float", "str", "decimal"};

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    mc_fuzz_init();
    return 0;
}

static void binary_row(mcf_in *in, mc_writer *p, int ncols) {
    size_t nb = (size_t)(ncols + 9) / 8;
    if (mc_writer_u8(p, 0) < 0) mcf_die("oom");
    const uint8_t *bm = mcf_take(in, &nb);
    if (mc_writer_put(p, bm, nb) < 0) mcf_die("oom");
    for (size_t k = nb; k < (size_t)(ncols + 9) / 8; k++)
        if (mc_writer_u8(p, 0) < 0) mcf_die("oom");
    size_t n = mcf_u8(in);
    const uint8_t *s = mcf_take(in, &n);
    if (mc_writer_put(p, s, n) < 0) mcf_die("oom");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mcf_in in = {data, size};
    if (size < 10) return 0;
    uint8_t mode = mcf_u8(&in);
    int deprecate_eof = mode & 1, binary = (mode >> 1) & 1;
    const char *decimal = decimal_modes[(mode >> 2) & 3];
    static const Py_ssize_t sizes[16] = {1, 2, 3, 7, 64, 1000, -1, 1, 5, 8, 9, 100, -1, 2, 1, 3};
    Py_ssize_t batch = sizes[mode >> 4];
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
        uint16_t length = mcf_u16(&in);
        uint8_t decimals = mcf_u8(&in);
        mcf_coldef(&p, type, flags, charset, length, decimals, i);
        mcf_packet(&w, seq++, p.buf, p.len);
    }
    static const unsigned char eof[5] = {0xfe, 0, 0, 2, 0};
    static const unsigned char ok_eof[7] = {0xfe, 0, 0, 2, 0, 0, 0};
    if (!deprecate_eof) mcf_packet(&w, seq++, eof, sizeof(eof));
    for (int row = 0; row < 64 && in.n > 0; row++) {
        p.len = 0;
        if (binary) binary_row(&in, &p, ncols);
        else mcf_text_row(&in, &p, ncols);
        mcf_packet(&w, seq++, p.buf, p.len);
    }
    if (deprecate_eof) mcf_packet(&w, seq++, ok_eof, sizeof(ok_eof));
    else mcf_packet(&w, seq++, eof, sizeof(eof));

    PyObject *c = PyObject_CallNoArgs(mcf_Connection);
    if (!c) mcf_die("Connection()");
    unsigned long flags = CLIENT_PROTOCOL_41 | (deprecate_eof ? CLIENT_DEPRECATE_EOF : 0);
    PyObject *r = PyObject_CallMethod(c, "_replay", "y#ki", (const char *)w.buf,
                                      (Py_ssize_t)w.len, flags, binary);
    if (!r) mcf_die("a well-framed result set was rejected");
    Py_DECREF(r);
    PyObject *kw = Py_BuildValue("{s:s}", "decimal", decimal);
    PyObject *args = Py_BuildValue("(n)", batch);
    if (!kw || !args) mcf_die("oom");
    for (int guard = 0; guard < 200; guard++) {
        PyObject *pending = PyObject_GetAttrString(c, "rows_pending");
        int more = pending == Py_True;
        Py_XDECREF(pending);
        if (!more) break;
        PyObject *meth = PyObject_GetAttrString(c, "fetch_arrow");
        r = meth ? PyObject_Call(meth, args, kw) : NULL;
        Py_XDECREF(meth);
        if (!mc_fuzz_check(r)) break;
        if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 3) mcf_die("fetch_arrow() shape");
        long long got = PyLong_AsLongLong(PyTuple_GET_ITEM(r, 2));
        if (got < 0 || (batch > 0 && got > batch)) mcf_die("batch larger than asked for");
        Py_DECREF(r);   /* the capsules release the Arrow buffers */
    }
    Py_DECREF(args);
    Py_DECREF(kw);
    Py_DECREF(c);
    mc_writer_free(&w);
    mc_writer_free(&p);
    return 0;
}
