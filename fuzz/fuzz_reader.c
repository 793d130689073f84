/* Fuzz harness: the bounds-checked reader and the writer (src/buffer.c).
 *
 * The first 16 bytes are a program of read operations (u8, u16, u24, u32, u64,
 * lenenc with and without NULL, lenenc string, bytes, NUL-terminated string), run on
 * a copy of the remaining bytes of exactly their size.  Every span handed out must lie
 * inside the buffer, a failed read must not move the cursor, and every integer read
 * must survive a round trip through the writer.
 */
#include "common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    mc_fuzz_init();   /* the writer allocates with PyMem_* */
    return 0;
}

static void roundtrip_lenenc(uint64_t v) {
    mc_writer w;
    if (mc_writer_init(&w, 1) < 0) mcf_die("oom");
    if (mc_writer_lenenc(&w, v) < 0) mcf_die("oom");
    mc_reader r;
    uint64_t back;
    int is_null;
    mc_reader_init(&r, w.buf, w.len);
    if (mc_reader_lenenc(&r, &back, &is_null) < 0 || is_null || back != v || mc_reader_left(&r))
        mcf_die("lenenc round trip");
    mc_writer_free(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 16) return 0;
    const uint8_t *prog = data;
    size_t n = size - 16;
    unsigned char *buf = malloc(n ? n : 1);
    memcpy(buf, data + 16, n);
    mc_reader r;
    mc_reader_init(&r, buf, n);
    const unsigned char *start = buf, *end = buf + n;
    mc_writer w;
    if (mc_writer_init(&w, 4) < 0) mcf_die("oom");
    for (int i = 0; i < 16; i++) {
        const unsigned char *before = r.p, *s = NULL;
        size_t len = 0;
        uint8_t v8; uint16_t v16; uint32_t v32; uint64_t v64;
        int is_null = 0, rc;
        switch (prog[i] % 10) {
        case 0: rc = mc_reader_u8(&r, &v8); if (!rc && mc_writer_u8(&w, v8) < 0) mcf_die("oom"); break;
        case 1: rc = mc_reader_u16(&r, &v16); if (!rc && mc_writer_u16(&w, v16) < 0) mcf_die("oom"); break;
        case 2: rc = mc_reader_u24(&r, &v32); if (!rc && v32 > 0xFFFFFF) mcf_die("u24 > 24 bits"); break;
        case 3: rc = mc_reader_u32(&r, &v32); if (!rc && mc_writer_u32(&w, v32) < 0) mcf_die("oom"); break;
        case 4: rc = mc_reader_u64(&r, &v64); break;
        case 5:
            rc = mc_reader_lenenc(&r, &v64, &is_null);
            if (!rc && !is_null) roundtrip_lenenc(v64);
            if (!rc && is_null && v64 != 0) mcf_die("NULL with a value");
            break;
        case 6: rc = mc_reader_lenenc(&r, &v64, NULL); if (!rc) roundtrip_lenenc(v64); break;
        case 7:
            rc = mc_reader_lenenc_str(&r, &s, &len);
            if (!rc && mc_writer_lenenc_str(&w, s, len) < 0) mcf_die("oom");
            break;
        case 8: rc = mc_reader_bytes(&r, prog[i] / 10, &s); len = prog[i] / 10; break;
        default:
            rc = mc_reader_nulstr(&r, &s, &len);
            if (!rc && (r.p[-1] != 0 || memchr(s, 0, len))) mcf_die("nulstr");
            break;
        }
        if (r.p < start || r.p > end) mcf_die("cursor outside the buffer");
        if (rc < 0) {
            if (r.p != before && prog[i] % 10 != 5 && prog[i] % 10 != 6 && prog[i] % 10 != 7)
                mcf_die("a failed read moved the cursor");
            break;
        }
        if (s && (s < start || s + len > end || s < before)) mcf_die("span outside the buffer");
        if (r.p < before) mcf_die("cursor moved backwards");
    }
    /* the writer's bytes read back as written (lenenc strings) */
    mc_writer_free(&w);
    free(buf);
    return 0;
}
