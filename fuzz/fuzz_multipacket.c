/* Fuzz harness: 16 MiB packet framing -- payloads split into 0xFFFFFF-byte fragments
 * and joined again, with fuzzed fragment lengths and sequence ids.
 *
 * A result set of one BLOB column whose rows are built from a short description:
 * each row is a list of fragments, each either full (0xFFFFFF bytes) or short (the
 * length from the input); a fragment's sequence id may be off by the fuzzed amount,
 * and the stream may be cut after any fragment.  The first fragment of a row starts
 * with a well-formed lenenc length or a fuzzed one.  Decoding must give the value of
 * the right length or a clean error.
 *
 * Input: mode (bit 0 CLIENT_DEPRECATE_EOF, bit 1 cut the stream at the end of the
 * description), then per fragment 3 bytes: kind (bit 0 full, bit 1 last of its row,
 * bits 2-4 sequence skew, bit 5 fuzzed first bytes), length u16.
 */
#include "common.h"

#define FULL 0xFFFFFFu

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    mc_fuzz_init();
    return 0;
}

static void coldef(mc_writer *w, uint8_t seq) {
    static const unsigned char def[] = {
        3, 'd', 'e', 'f', 2, 'd', 'b', 1, 't', 1, 't', 1, 'b', 1, 'b', 0x0c,
        63, 0, 0xff, 0xff, 0xff, 0xff, 252, 0x90, 0, 0, 0, 0};
    mcf_packet(w, seq, def, sizeof(def));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mcf_in in = {data, size};
    if (size < 4) return 0;
    uint8_t mode = mcf_u8(&in);
    int deprecate_eof = mode & 1;
    mc_writer w;
    if (mc_writer_init(&w, 1 << 16) < 0) mcf_die("oom");
    uint8_t seq = 1;
    unsigned char one = 1;
    mcf_packet(&w, seq++, &one, 1);
    coldef(&w, seq++);
    static const unsigned char eof[5] = {0xfe, 0, 0, 2, 0};
    static const unsigned char ok_eof[7] = {0xfe, 0, 0, 2, 0, 0, 0};
    if (!deprecate_eof) mcf_packet(&w, seq++, eof, sizeof(eof));
    int full_frags = 0, first = 1;
    while (in.n >= 3 && full_frags < 3) {
        uint8_t kind = mcf_u8(&in);
        size_t len = (kind & 1) ? FULL : mcf_u16(&in) % 4096;
        if (kind & 1) { mcf_u16(&in); full_frags++; }
        uint8_t skew = (kind >> 2) & 7;
        unsigned char hdr[4];
        mc_store_u24(hdr, (uint32_t)len);
        hdr[3] = (uint8_t)(seq + (skew == 7 ? 1 : 0));
        seq++;
        if (mc_writer_put(&w, hdr, 4) < 0 || mc_writer_reserve(&w, len) < 0) mcf_die("oom");
        unsigned char *p = w.buf + w.len;
        memset(p, 'x', len);
        if (first && len >= 4) {
            /* the value's lenenc length: for the row's planned size, or fuzzed */
            if (kind & 0x20) {
                size_t k = in.n < 4 ? in.n : 4;
                memcpy(p, in.p, k);
            } else {
                p[0] = 0xFD;
                mc_store_u24(p + 1, (uint32_t)((kind & 1) ? FULL * 2 : len - 4));
            }
        }
        if (first && len > 0 && len < 4) p[0] = (unsigned char)(len - 1);
        w.len += len;
        first = 0;
        if ((kind & 2) || len < FULL) {   /* the row ends with a short fragment */
            first = 1;
        }
    }
    if (!(mode & 2)) {
        if (deprecate_eof) mcf_packet(&w, seq++, ok_eof, sizeof(ok_eof));
        else mcf_packet(&w, seq++, eof, sizeof(eof));
    }
    PyObject *c = PyObject_CallNoArgs(mcf_Connection);
    if (!c) mcf_die("Connection()");
    unsigned long flags = CLIENT_PROTOCOL_41 | (deprecate_eof ? CLIENT_DEPRECATE_EOF : 0);
    PyObject *r = PyObject_CallMethod(c, "_replay", "y#k", (const char *)w.buf, (Py_ssize_t)w.len, flags);
    if (!r) mcf_die("the column definitions were rejected");
    Py_DECREF(r);
    for (;;) {
        r = PyObject_CallMethod(c, "fetch", "n", (Py_ssize_t)1);
        if (!mc_fuzz_check(r)) break;
        Py_ssize_t got = PyList_GET_SIZE(r);
        if (got == 1) {
            PyObject *v = PyTuple_GET_ITEM(PyList_GET_ITEM(r, 0), 0);
            if (v != Py_None && !PyBytes_Check(v)) mcf_die("a BLOB value that is not bytes");
        }
        Py_DECREF(r);
        if (got == 0) break;
    }
    Py_DECREF(c);
    mc_writer_free(&w);
    return 0;
}
