/* Bounds-checked little-endian reader and growable writer (DESIGN.md rule 7). */
#include "mysqlc.h"

int mc_reader_u8(mc_reader *r, uint8_t *v) {
    if (r->p >= r->end) return -1;
    *v = *r->p++;
    return 0;
}

int mc_reader_u16(mc_reader *r, uint16_t *v) {
    if (mc_reader_left(r) < 2) return -1;
    *v = (uint16_t)(r->p[0] | (r->p[1] << 8));
    r->p += 2;
    return 0;
}

int mc_reader_u24(mc_reader *r, uint32_t *v) {
    if (mc_reader_left(r) < 3) return -1;
    *v = mc_load_u24(r->p);
    r->p += 3;
    return 0;
}

int mc_reader_u32(mc_reader *r, uint32_t *v) {
    if (mc_reader_left(r) < 4) return -1;
    *v = (uint32_t)r->p[0] | ((uint32_t)r->p[1] << 8) | ((uint32_t)r->p[2] << 16) |
         ((uint32_t)r->p[3] << 24);
    r->p += 4;
    return 0;
}

int mc_reader_u64(mc_reader *r, uint64_t *v) {
    uint64_t x = 0;
    if (mc_reader_left(r) < 8) return -1;
    for (int i = 7; i >= 0; i--) x = (x << 8) | r->p[i];
    *v = x;
    r->p += 8;
    return 0;
}

int mc_reader_lenenc(mc_reader *r, uint64_t *v, int *is_null) {
    uint8_t b;
    if (is_null) *is_null = 0;
    if (mc_reader_u8(r, &b) < 0) return -1;
    if (b < 0xFB) { *v = b; return 0; }
    if (b == 0xFB) {
        if (!is_null) return -1;
        *is_null = 1; *v = 0; return 0;
    }
    if (b == 0xFC) { uint16_t x; if (mc_reader_u16(r, &x) < 0) return -1; *v = x; return 0; }
    if (b == 0xFD) { uint32_t x; if (mc_reader_u24(r, &x) < 0) return -1; *v = x; return 0; }
    if (b == 0xFE) return mc_reader_u64(r, v);
    return -1; /* 0xFF is not a valid length */
}

int mc_reader_lenenc_str(mc_reader *r, const unsigned char **s, size_t *n) {
    uint64_t len;
    if (mc_reader_lenenc(r, &len, NULL) < 0) return -1;
    if (len > mc_reader_left(r)) return -1;
    *s = r->p; *n = (size_t)len;
    r->p += len;
    return 0;
}

int mc_reader_bytes(mc_reader *r, size_t n, const unsigned char **s) {
    if (n > mc_reader_left(r)) return -1;
    *s = r->p;
    r->p += n;
    return 0;
}

int mc_reader_nulstr(mc_reader *r, const unsigned char **s, size_t *n) {
    const unsigned char *z = memchr(r->p, 0, mc_reader_left(r));
    if (!z) return -1;
    *s = r->p; *n = (size_t)(z - r->p);
    r->p = z + 1;
    return 0;
}

int mc_writer_init(mc_writer *w, size_t cap) {
    w->len = 0;
    w->cap = cap ? cap : 256;
    w->buf = PyMem_Malloc(w->cap);
    if (!w->buf) { w->cap = 0; PyErr_NoMemory(); return -1; }
    return 0;
}

void mc_writer_free(mc_writer *w) {
    PyMem_Free(w->buf);
    w->buf = NULL; w->len = w->cap = 0;
}

int mc_writer_reserve(mc_writer *w, size_t extra) {
    if (w->cap - w->len >= extra) return 0;
    size_t need = w->len + extra;
    if (need < w->len) { PyErr_NoMemory(); return -1; }
    size_t cap = w->cap ? w->cap : 256;
    while (cap < need) {
        if (cap > ((size_t)-1) / 2) { cap = need; break; }
        cap *= 2;
    }
    unsigned char *nb = PyMem_Realloc(w->buf, cap);
    if (!nb) { PyErr_NoMemory(); return -1; }
    w->buf = nb; w->cap = cap;
    return 0;
}

int mc_writer_put(mc_writer *w, const void *data, size_t n) {
    if (mc_writer_reserve(w, n) < 0) return -1;
    if (n) memcpy(w->buf + w->len, data, n);
    w->len += n;
    return 0;
}

int mc_writer_u8(mc_writer *w, uint8_t v) {
    if (mc_writer_reserve(w, 1) < 0) return -1;
    w->buf[w->len++] = v;
    return 0;
}

int mc_writer_u16(mc_writer *w, uint16_t v) {
    unsigned char b[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
    return mc_writer_put(w, b, 2);
}

int mc_writer_u32(mc_writer *w, uint32_t v) {
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8),
                          (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    return mc_writer_put(w, b, 4);
}

int mc_writer_lenenc(mc_writer *w, uint64_t v) {
    unsigned char b[9];
    size_t n;
    if (v < 0xFB) { b[0] = (unsigned char)v; n = 1; }
    else if (v <= 0xFFFF) { b[0] = 0xFC; b[1] = (unsigned char)v; b[2] = (unsigned char)(v >> 8); n = 3; }
    else if (v <= 0xFFFFFF) { b[0] = 0xFD; mc_store_u24(b + 1, (uint32_t)v); n = 4; }
    else {
        b[0] = 0xFE;
        for (int i = 0; i < 8; i++) b[1 + i] = (unsigned char)(v >> (8 * i));
        n = 9;
    }
    return mc_writer_put(w, b, n);
}

int mc_writer_lenenc_str(mc_writer *w, const void *data, size_t n) {
    if (mc_writer_lenenc(w, n) < 0) return -1;
    return mc_writer_put(w, data, n);
}
