/* Columnar fetch: the rows of the pending result set decoded straight into Arrow column
 * buffers, with no Python object per value, and handed out through the Arrow C Data
 * Interface as PyCapsules ("arrow_schema", "arrow_array", "arrow_array_stream": the Arrow
 * PyCapsule Interface), so that pyarrow, polars, pandas or numpy are needed only by the
 * caller, at run time.
 *
 * Row packets already in the receive buffer are parsed with the GIL released; the GIL is
 * taken back only to read more bytes from the socket (which itself releases it around
 * recv) and at the end of a result.  Several connections therefore decode in parallel
 * threads.  Text rows (ProtocolText::ResultsetRow) and binary rows
 * (ProtocolBinary::ResultsetRow) are both read, and an open server-side cursor is
 * advanced with COM_STMT_FETCH.
 *
 * Column types (the mapping is documented in mysqlc/columnar.py):
 *   TINY/SHORT/INT24/LONG/LONGLONG -> int8/16/32/32/64 (uint* when UNSIGNED), YEAR -> int16,
 *   FLOAT/DOUBLE -> float64 (the row cursors' values), DECIMAL -> decimal128(P,S)
 *   (decimal256 above 38 digits; float64 or utf8 on request), DATE -> date32,
 *   DATETIME/TIMESTAMP -> timestamp[us] (no time zone), TIME -> duration[us],
 *   character strings, JSON, ENUM, SET -> utf8, binary strings, BLOB, BIT, GEOMETRY ->
 *   binary, NULL -> null.  Zero and invalid dates become NULL, as the row cursors give None.
 */
#include "conn_internal.h"
#include <errno.h>
#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "arrow_c.h"

/* ---------------------------------------------------------------- column builders */

typedef enum {
    K_NULL, K_I8, K_U8, K_I16, K_U16, K_I32, K_U32, K_I64, K_U64, K_F64,
    K_DEC,        /* decimal128 / decimal256 (width 16 / 32) */
    K_DEC_F64,    /* DECIMAL as float64 */
    K_DEC_STR,    /* DECIMAL as its text (utf8) */
    K_DATE32, K_TS, K_DUR,
    K_UTF8,       /* UTF-8 text, validated */
    K_LATIN1,     /* MySQL latin1 transcoded to UTF-8 */
    K_CODEC,      /* other character sets: a Python codec (needs the GIL) */
    K_BINARY,
} kind_t;

enum { DECIMAL_AS_DECIMAL = 0, DECIMAL_AS_FLOAT = 1, DECIMAL_AS_STR = 2 };

/* A variable-length column may hold at most this many bytes per batch before the batch
   is cut, so that offsets stay below 2^31 even if the next row adds a 1 GiB value. */
#define VAR_LIMIT (((size_t)1 << 30) - ((size_t)1 << 20))

typedef struct {
    kind_t kind;
    int width;             /* bytes per value (fixed widths), 0 for variable length */
    int precision, scale;  /* K_DEC */
    uint8_t type;          /* enum_field_types */
    uint8_t decimals;
    const char *codec;     /* K_CODEC: borrowed from the column plan */
    uint8_t *valid;        /* validity bitmap, allocated at the first NULL */
    unsigned char *data;   /* fixed: rows * width bytes; variable: the values' bytes */
    size_t len, cap;       /* variable: bytes used / allocated */
    int32_t *offs;         /* variable: rows + 1 offsets */
    int64_t nulls;
} colbuf;

typedef struct {
    Py_ssize_t ncols;
    int64_t rows, cap;     /* rows complete, rows allocated */
    int binary;            /* binary-protocol rows */
    int full;              /* a variable-length column reached VAR_LIMIT */
    int needs_gil;         /* a K_CODEC column: decode with the GIL held */
    int text_checked;      /* the rows' UTF-8 text was validated already (a Store's) */
    colbuf *cols;
    int err_col;           /* column of a bad value, or -1 */
    char err[200];
} batch;

/* parse results */
enum { OK = 0, E_SHORT = -1, E_VALUE = -2, E_NOMEM = -3, E_PY = -4 };


static kind_t column_kind(const mc_column_plan *pl, int decimal_as, int *width, int *prec,
                          int *scale) {
    int unsig = (pl->flags & MC_FLAG_UNSIGNED) != 0;
    *width = 0;
    switch (pl->type) {
    case MC_TYPE_TINY: *width = 1; return unsig ? K_U8 : K_I8;
    case MC_TYPE_SHORT: *width = 2; return unsig ? K_U16 : K_I16;
    case MC_TYPE_YEAR: *width = 2; return K_I16;
    case MC_TYPE_INT24: case MC_TYPE_LONG: *width = 4; return unsig ? K_U32 : K_I32;
    case MC_TYPE_LONGLONG: *width = 8; return unsig ? K_U64 : K_I64;
    case MC_TYPE_FLOAT: case MC_TYPE_DOUBLE: *width = 8; return K_F64;
    case MC_TYPE_DECIMAL: case MC_TYPE_NEWDECIMAL: {
        if (decimal_as == DECIMAL_AS_FLOAT) { *width = 8; return K_DEC_F64; }
        if (decimal_as == DECIMAL_AS_STR) return K_DEC_STR;
        /* column_length = precision + (scale > 0) + (signed ? 1 : 0) */
        int s = pl->decimals > 76 ? 0 : pl->decimals;
        long p = (long)pl->length - (s > 0) - (unsig ? 0 : 1);
        if (p < s) p = s;
        if (p < 1) p = 1;
        if (p > 76) p = 76;
        *prec = (int)p;
        *scale = s;
        *width = p > 38 ? 32 : 16;
        return K_DEC;
    }
    case MC_TYPE_DATE: case MC_TYPE_NEWDATE: *width = 4; return K_DATE32;
    case MC_TYPE_DATETIME: case MC_TYPE_TIMESTAMP: case MC_TYPE_DATETIME2:
    case MC_TYPE_TIMESTAMP2: *width = 8; return K_TS;
    case MC_TYPE_TIME: case MC_TYPE_TIME2: *width = 8; return K_DUR;
    case MC_TYPE_NULL: return K_NULL;
    case MC_TYPE_BIT: case MC_TYPE_GEOMETRY: return K_BINARY;
    default: break;
    }
    mc_dec_kind k = pl->kind == MC_DEC_CONVERTER ? pl->arg_kind : pl->kind;
    switch (k) {
    case MC_DEC_STR_UTF8: case MC_DEC_STR_ASCII: return K_UTF8;
    case MC_DEC_STR_LATIN1: return K_LATIN1;
    case MC_DEC_STR_CODEC: return K_CODEC;
    default: return K_BINARY;
    }
}

static void batch_free(batch *b) {
    if (!b->cols) return;
    for (Py_ssize_t i = 0; i < b->ncols; i++) {
        free(b->cols[i].valid);
        free(b->cols[i].data);
        free(b->cols[i].offs);
    }
    free(b->cols);
    b->cols = NULL;
}

static int batch_init(batch *b, const mc_conn *c, int decimal_as) {
    memset(b, 0, sizeof(*b));
    b->ncols = c->plan_len;
    b->binary = c->binary;
    b->err_col = -1;
    b->cols = calloc((size_t)(b->ncols ? b->ncols : 1), sizeof(colbuf));
    if (!b->cols) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < b->ncols; i++) {
        colbuf *cb = &b->cols[i];
        const mc_column_plan *pl = &c->plan[i];
        cb->kind = column_kind(pl, decimal_as, &cb->width, &cb->precision, &cb->scale);
        cb->type = pl->type;
        cb->decimals = pl->decimals;
        cb->codec = pl->codec;
        if (cb->kind == K_CODEC) b->needs_gil = 1;
    }
    return 0;
}

static inline int is_var(const colbuf *cb) { return cb->width == 0 && cb->kind != K_NULL; }

/* Make room for row b->rows in every column. */
static int batch_grow(batch *b, int64_t want) {
    if (b->rows < b->cap) return OK;
    int64_t ncap = b->cap ? b->cap * 2 : 1024;
    if (want > 0 && ncap > want) ncap = want > b->cap ? want : ncap;
    for (Py_ssize_t i = 0; i < b->ncols; i++) {
        colbuf *cb = &b->cols[i];
        if (cb->width) {
            void *d = realloc(cb->data, (size_t)ncap * (size_t)cb->width);
            if (!d) return E_NOMEM;
            cb->data = d;
        } else if (is_var(cb)) {
            void *o = realloc(cb->offs, ((size_t)ncap + 1) * sizeof(int32_t));
            if (!o) return E_NOMEM;
            cb->offs = o;
            if (b->cap == 0) cb->offs[0] = 0;
        }
        if (cb->valid) {
            size_t oldn = ((size_t)b->cap + 7) / 8, newn = ((size_t)ncap + 7) / 8;
            uint8_t *v = realloc(cb->valid, newn);
            if (!v) return E_NOMEM;
            memset(v + oldn, 0xFF, newn - oldn);
            cb->valid = v;
        }
    }
    b->cap = ncap;
    return OK;
}

static int put_null(batch *b, colbuf *cb) {
    int64_t r = b->rows;
    if (!cb->valid) {
        size_t nb = ((size_t)b->cap + 7) / 8;
        cb->valid = malloc(nb ? nb : 1);
        if (!cb->valid) return E_NOMEM;
        memset(cb->valid, 0xFF, nb ? nb : 1);
    }
    cb->valid[r >> 3] &= (uint8_t)~(1u << (r & 7));
    cb->nulls++;
    if (cb->width) memset(cb->data + (size_t)r * (size_t)cb->width, 0, (size_t)cb->width);
    else if (is_var(cb)) cb->offs[r + 1] = cb->offs[r];
    return OK;
}

static int var_reserve(batch *b, colbuf *cb, size_t n) {
    if (cb->data && cb->cap - cb->len >= n) return OK;
    size_t ncap = cb->cap ? cb->cap : 4096;
    while (ncap - cb->len < n) ncap *= 2;
    unsigned char *d = realloc(cb->data, ncap);
    if (!d) return E_NOMEM;
    cb->data = d;
    cb->cap = ncap;
    (void)b;
    return OK;
}

static inline void var_commit(batch *b, colbuf *cb) {
    cb->offs[b->rows + 1] = (int32_t)cb->len;
    if (cb->len >= VAR_LIMIT) b->full = 1;
}

static int put_bytes(batch *b, colbuf *cb, const unsigned char *s, size_t n) {
    if (var_reserve(b, cb, n) < 0) return E_NOMEM;
    if (n) memcpy(cb->data + cb->len, s, n);
    cb->len += n;
    var_commit(b, cb);
    return OK;
}

static int bad_value(batch *b, colbuf *cb, const char *what) {
    b->err_col = (int)(cb - b->cols);
    snprintf(b->err, sizeof(b->err), "%s", what);
    return E_VALUE;
}

/* Strict UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF), as Python's
   decoder: the row cursors would raise on anything else. */
static int utf8_valid(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        if (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!(w & 0x8080808080808080ull)) { i += 8; continue; }
        }
        unsigned char c = s[i];
        if (c < 0x80) { i++; continue; }
        size_t need;
        unsigned char lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) need = 1;
        else if (c == 0xE0) { need = 2; lo = 0xA0; }
        else if (c == 0xED) { need = 2; hi = 0x9F; }
        else if (c >= 0xE1 && c <= 0xEF) need = 2;
        else if (c == 0xF0) { need = 3; lo = 0x90; }
        else if (c >= 0xF1 && c <= 0xF3) need = 3;
        else if (c == 0xF4) { need = 3; hi = 0x8F; }
        else return 0;
        if (n - i <= need) return 0;
        if (s[i + 1] < lo || s[i + 1] > hi) return 0;
        for (size_t k = 2; k <= need; k++)
            if ((s[i + k] & 0xC0) != 0x80) return 0;
        i += need + 1;
    }
    return 1;
}

static int put_latin1(batch *b, colbuf *cb, const unsigned char *s, size_t n) {
    if (var_reserve(b, cb, n * 3) < 0) return E_NOMEM;
    unsigned char *o = cb->data + cb->len;
    for (size_t i = 0; i < n; i++) {
        unsigned ch = s[i];
        if (ch >= 0x80 && ch < 0xA0) ch = mc_cp1252_high[ch - 0x80];
        if (ch < 0x80) {
            *o++ = (unsigned char)ch;
        } else if (ch < 0x800) {
            *o++ = (unsigned char)(0xC0 | (ch >> 6));
            *o++ = (unsigned char)(0x80 | (ch & 0x3F));
        } else {
            *o++ = (unsigned char)(0xE0 | (ch >> 12));
            *o++ = (unsigned char)(0x80 | ((ch >> 6) & 0x3F));
            *o++ = (unsigned char)(0x80 | (ch & 0x3F));
        }
    }
    cb->len = (size_t)(o - cb->data);
    var_commit(b, cb);
    return OK;
}

/* GIL held (the batch runs with it when a K_CODEC column exists). */
static int put_codec(batch *b, colbuf *cb, const unsigned char *s, size_t n) {
    PyObject *u = PyUnicode_Decode((const char *)s, (Py_ssize_t)n, cb->codec, NULL);
    if (!u) return E_PY;
    Py_ssize_t un;
    const char *utf8 = PyUnicode_AsUTF8AndSize(u, &un);
    int rc = utf8 ? put_bytes(b, cb, (const unsigned char *)utf8, (size_t)un) : E_PY;
    Py_DECREF(u);
    return rc;
}

/* "[-]digits" -> magnitude and sign; -1 on any other shape or above 2^64-1 */
static int parse_integer(const unsigned char *s, size_t n, int *neg, uint64_t *out) {
    const unsigned char *p = s, *e = s + n;
    *neg = 0;
    if (p < e && (*p == '-' || *p == '+')) { *neg = *p == '-'; p++; }
    size_t nd = (size_t)(e - p);
    if (nd == 0 || nd > 20) return -1;
    /* 19 digits cannot overflow (10^19 - 1 < 2^64): only a 20th is checked */
    const unsigned char *e19 = nd > 19 ? p + 19 : e;
    uint64_t v = 0;
    for (; p < e19; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (d > 9) return -1;
        v = v * 10 + d;
    }
    if (p < e) {
        unsigned d = (unsigned)(*p - '0');
        if (d > 9 || v > (UINT64_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static int put_int(batch *b, colbuf *cb, int neg, uint64_t v) {
    unsigned char *slot = cb->data + (size_t)b->rows * (size_t)cb->width;
    int is_signed = cb->kind == K_I8 || cb->kind == K_I16 || cb->kind == K_I32 ||
                    cb->kind == K_I64;
    if (!is_signed) {
        if (neg && v) return bad_value(b, cb, "negative value in an UNSIGNED column");
        uint64_t max = cb->width == 8 ? UINT64_MAX : (((uint64_t)1 << (8 * cb->width)) - 1);
        if (v > max) return bad_value(b, cb, "integer out of the column's range");
        switch (cb->width) {
        case 1: { uint8_t x = (uint8_t)v; memcpy(slot, &x, 1); break; }
        case 2: { uint16_t x = (uint16_t)v; memcpy(slot, &x, 2); break; }
        case 4: { uint32_t x = (uint32_t)v; memcpy(slot, &x, 4); break; }
        default: memcpy(slot, &v, 8);
        }
        return OK;
    }
    uint64_t lim = (uint64_t)1 << (8 * cb->width - 1);   /* |min| */
    if (neg ? v > lim : v >= lim) return bad_value(b, cb, "integer out of the column's range");
    int64_t x = neg ? (int64_t)(0 - v) : (int64_t)v;
    switch (cb->width) {
    case 1: { int8_t y = (int8_t)x; memcpy(slot, &y, 1); break; }
    case 2: { int16_t y = (int16_t)x; memcpy(slot, &y, 2); break; }
    case 4: { int32_t y = (int32_t)x; memcpy(slot, &y, 4); break; }
    default: memcpy(slot, &x, 8);
    }
    return OK;
}

/* Clinger's fast path: text whose decimal significand M is below 2^53 and whose decimal
   exponent q is within [-22, 22] is M * 10^q, or M / 10^-q, with both operands exact
   doubles (10^22 = 2^22 * 5^22, 5^22 < 2^53), so the one IEEE multiplication or division
   rounds the exact value once, as strtod does (in any rounding mode).  1 with *out set, or
   0 for every other text (strtod then decides, including what it rejects).  Needs double
   arithmetic in double precision (FLT_EVAL_METHOD 0: SSE2 on x86-64, every 64-bit ABI). */
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
#define MC_FAST_DOUBLE 1
static const double exact_pow10[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int double_fast(const unsigned char *s, size_t n, double *out) {
    const unsigned char *p = s, *e = s + n;
    int neg = 0, digits = 0, any = 0, q = 0;
    uint64_t m = 0;
    if (p < e && (*p == '-' || *p == '+')) { neg = *p == '-'; p++; }
    for (; p < e && (unsigned)(*p - '0') <= 9; p++) {
        any = 1;
        if (m == 0 && *p == '0') continue;          /* leading zeros */
        if (++digits > 19) return 0;
        m = m * 10 + (unsigned)(*p - '0');
    }
    if (p < e && *p == '.') {
        for (p++; p < e && (unsigned)(*p - '0') <= 9; p++) {
            any = 1;
            q--;
            if (m == 0 && *p == '0') continue;
            if (++digits > 19) return 0;
            m = m * 10 + (unsigned)(*p - '0');
        }
    }
    if (!any) return 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        int eneg = 0, ev = 0, ed = 0;
        p++;
        if (p < e && (*p == '-' || *p == '+')) { eneg = *p == '-'; p++; }
        for (; p < e && (unsigned)(*p - '0') <= 9; p++, ed++)
            if (ev < 100000) ev = ev * 10 + (*p - '0');
        if (!ed) return 0;
        q += eneg ? -ev : ev;
    }
    if (p != e || m > ((uint64_t)1 << 53) || q < -22 || q > 22) return 0;
    double d = (double)m;   /* exact: m <= 2^53 */
    d = q < 0 ? d / exact_pow10[-q] : d * exact_pow10[q];
    *out = neg ? -d : d;
    return 1;
}
#endif

/* Text -> double exactly as float(text) (strtod is correctly rounded in glibc). */
static int text_to_double(const unsigned char *s, size_t n, double *out) {
#ifdef MC_FAST_DOUBLE
    if (double_fast(s, n, out)) return OK;
#endif
    char stack[128];
    char *buf = n < sizeof(stack) ? stack : malloc(n + 1);
    if (!buf) return E_NOMEM;
    memcpy(buf, s, n);
    buf[n] = 0;
    char *end;
    double d = strtod_l(buf, &end, mc_c_locale);
    int ok = n > 0 && end == buf + n && memchr(s, 0, n) == NULL;
    if (buf != stack) free(buf);
    if (!ok) return -1;
    *out = d;
    return OK;
}

static int put_f64(batch *b, colbuf *cb, double d) {
    memcpy(cb->data + (size_t)b->rows * 8, &d, 8);
    return OK;
}

/* 10^0 .. 10^19 */
static const uint64_t pow10_u64[20] = {
    1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
    100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
    10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
    100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull};

/* w = w * m + a over `limbs` little-endian words; -1 when the result needs the sign bit
   of the top word or more words */
static inline int limbs_mul_add(uint64_t *w, int limbs, uint64_t m, uint64_t a) {
    unsigned __int128 carry = a;
    for (int k = 0; k < limbs; k++) {
        unsigned __int128 t = (unsigned __int128)w[k] * m + carry;
        w[k] = (uint64_t)t;
        carry = t >> 64;
    }
    return (carry || (w[limbs - 1] >> 63)) ? -1 : 0;
}

/* DECIMAL text -> two's-complement integer of `limbs` 64-bit little-endian words scaled
   by 10^scale.  -1 on a bad shape, more fraction digits than the scale, or overflow.
   Digits are gathered 19 at a time in one word and folded into the limbs (the value only
   grows digit by digit, so checking the range at each fold is checking it at each
   digit). */
static int parse_decimal(const unsigned char *s, size_t n, int scale, int limbs, uint64_t *w) {
    const unsigned char *p = s, *e = s + n;
    int neg = 0, frac = -1, any = 0, k = 0;
    uint64_t acc = 0;
    memset(w, 0, (size_t)limbs * 8);
    if (p < e && (*p == '-' || *p == '+')) { neg = *p == '-'; p++; }
    for (; p < e; p++) {
        if (*p == '.' && frac < 0) { frac = 0; continue; }
        unsigned d = (unsigned)(*p - '0');
        if (d > 9) return -1;
        any = 1;
        if (frac >= 0 && ++frac > scale) return -1;
        acc = acc * 10 + d;
        if (++k == 19) {
            if (limbs_mul_add(w, limbs, pow10_u64[19], acc) < 0) return -1;
            acc = 0;
            k = 0;
        }
    }
    if (!any) return -1;
    if (frac < 0) frac = 0;
    if (k && limbs_mul_add(w, limbs, pow10_u64[k], acc) < 0) return -1;
    for (int pad = scale - frac; pad > 0; pad -= 19)   /* pad the fraction to the scale */
        if (limbs_mul_add(w, limbs, pow10_u64[pad > 19 ? 19 : pad], 0) < 0) return -1;
    if (neg) {   /* two's complement */
        unsigned __int128 c = 1;
        for (int j = 0; j < limbs; j++) {
            unsigned __int128 t = (unsigned __int128)(uint64_t)~w[j] + c;
            w[j] = (uint64_t)t;
            c = t >> 64;
        }
    }
    return 0;
}

/* days since 1970-01-01 of a proleptic Gregorian date */
static int64_t days_from_civil(int y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static inline int64_t ts_micros(const mc_datetime *t) {
    int64_t days = days_from_civil(t->year, t->month, t->day);
    return ((days * 24 + t->hour) * 60 + t->minute) * (int64_t)60000000 +
           (int64_t)t->second * 1000000 + t->usecond;
}

static int put_i64(batch *b, colbuf *cb, int64_t v) {
    memcpy(cb->data + (size_t)b->rows * 8, &v, 8);
    (void)cb;
    return OK;
}

static int put_text(batch *b, colbuf *cb, const unsigned char *s, size_t n) {
    switch (cb->kind) {
    case K_I8: case K_U8: case K_I16: case K_U16: case K_I32: case K_U32: case K_I64:
    case K_U64: {
        int neg;
        uint64_t v;
        if (parse_integer(s, n, &neg, &v) < 0) return bad_value(b, cb, "not an integer");
        return put_int(b, cb, neg, v);
    }
    case K_F64: case K_DEC_F64: {
        double d;
        int rc = text_to_double(s, n, &d);
        if (rc == E_NOMEM) return rc;
        if (rc < 0) return bad_value(b, cb, "not a number");
        return put_f64(b, cb, d);
    }
    case K_DEC: {
        uint64_t w[4];
        int limbs = cb->width / 8;
        if (parse_decimal(s, n, cb->scale, limbs, w) < 0)
            return bad_value(b, cb, "not a decimal number of the column's precision and scale");
        memcpy(cb->data + (size_t)b->rows * (size_t)cb->width, w, (size_t)cb->width);
        return OK;
    }
    case K_DATE32: {
        mc_datetime t;
        if (mc_parse_text_date(s, n, &t) < 0) return put_null(b, cb);
        int32_t days = (int32_t)days_from_civil(t.year, t.month, t.day);
        memcpy(cb->data + (size_t)b->rows * 4, &days, 4);
        return OK;
    }
    case K_TS: {
        mc_datetime t;
        if (mc_parse_text_datetime(s, n, &t) < 0) return put_null(b, cb);
        return put_i64(b, cb, ts_micros(&t));
    }
    case K_DUR: {
        int neg, us;
        long long secs;
        if (mc_parse_text_time(s, n, &neg, &secs, &us) < 0) return put_null(b, cb);
        int64_t v = (int64_t)secs * 1000000 + us;
        return put_i64(b, cb, neg ? -v : v);
    }
    case K_UTF8:
        if (!b->text_checked && !utf8_valid(s, n)) return bad_value(b, cb, "invalid UTF-8");
        return put_bytes(b, cb, s, n);
    case K_DEC_STR: case K_BINARY:
        return put_bytes(b, cb, s, n);
    case K_LATIN1:
        return put_latin1(b, cb, s, n);
    case K_CODEC:
        return put_codec(b, cb, s, n);
    case K_NULL:
        return put_null(b, cb);
    }
    return bad_value(b, cb, "unsupported column");
}

static inline uint64_t load_le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}

/* Round a binary FLOAT/DOUBLE as the text protocol prints it (see binary.c), so both
   protocols and both output forms give equal values. */
static double text_rounded(double d, int is_float, uint8_t decimals) {
    char buf[400];
    if (is_float) {
        if (decimals < 31) snprintf(buf, sizeof(buf), "%.*f", (int)decimals, d);
        else snprintf(buf, sizeof(buf), "%.6g", d);
    } else {
        if (!(decimals < 31 && isfinite(d) && fabs(d) < 1e300)) return d;
        snprintf(buf, sizeof(buf), "%.*f", (int)decimals, d);
    }
    return strtod_l(buf, NULL, mc_c_locale);
}

/* One non-NULL binary value at *pp (bounded by e). */
static int put_binary(batch *b, colbuf *cb, const unsigned char **pp, const unsigned char *e) {
    const unsigned char *p = *pp;
    size_t avail = (size_t)(e - p);
    switch (cb->type) {
    case MC_TYPE_TINY: case MC_TYPE_SHORT: case MC_TYPE_YEAR: case MC_TYPE_INT24:
    case MC_TYPE_LONG: case MC_TYPE_LONGLONG: {
        int w = cb->type == MC_TYPE_TINY ? 1 : cb->type == MC_TYPE_LONGLONG ? 8
              : (cb->type == MC_TYPE_SHORT || cb->type == MC_TYPE_YEAR) ? 2 : 4;
        if (avail < (size_t)w) return E_SHORT;
        /* the wire width equals the column width (INT24 travels as 4 bytes) */
        memcpy(cb->data + (size_t)b->rows * (size_t)cb->width, p, (size_t)w);
        *pp = p + w;
        return OK;
    }
    case MC_TYPE_FLOAT: {
        if (avail < 4) return E_SHORT;
        uint32_t bits = (uint32_t)load_le(p, 4);
        float f;
        memcpy(&f, &bits, 4);
        *pp = p + 4;
        return put_f64(b, cb, text_rounded((double)f, 1, cb->decimals));
    }
    case MC_TYPE_DOUBLE: {
        if (avail < 8) return E_SHORT;
        uint64_t bits = load_le(p, 8);
        double d;
        memcpy(&d, &bits, 8);
        *pp = p + 8;
        return put_f64(b, cb, text_rounded(d, 0, cb->decimals));
    }
    case MC_TYPE_DATE: case MC_TYPE_NEWDATE:
    case MC_TYPE_DATETIME: case MC_TYPE_TIMESTAMP:
    case MC_TYPE_DATETIME2: case MC_TYPE_TIMESTAMP2: {
        if (avail < 1) return E_SHORT;
        unsigned len = p[0];
        if (len != 0 && len != 4 && len != 7 && len != 11)
            return bad_value(b, cb, "bad binary date length");
        if (avail < 1 + (size_t)len) return E_SHORT;
        const unsigned char *q = p + 1;
        *pp = p + 1 + len;
        mc_datetime t = {0, 0, 0, 0, 0, 0, 0};
        uint32_t us = 0;
        if (len >= 4) { t.year = (int)load_le(q, 2); t.month = q[2]; t.day = q[3]; }
        if (len >= 7) { t.hour = q[4]; t.minute = q[5]; t.second = q[6]; }
        if (len == 11) us = (uint32_t)load_le(q + 7, 4);
        if (!mc_valid_date(t.year, t.month, t.day) || t.hour > 23 || t.minute > 59 ||
            t.second > 59 || us > 999999)
            return put_null(b, cb);   /* zero or invalid date, as the row cursors' None */
        t.usecond = (int)us;
        if (cb->kind == K_DATE32) {
            int32_t days = (int32_t)days_from_civil(t.year, t.month, t.day);
            memcpy(cb->data + (size_t)b->rows * 4, &days, 4);
            return OK;
        }
        return put_i64(b, cb, ts_micros(&t));
    }
    case MC_TYPE_TIME: case MC_TYPE_TIME2: {
        if (avail < 1) return E_SHORT;
        unsigned len = p[0];
        if (len != 0 && len != 8 && len != 12) return bad_value(b, cb, "bad binary time length");
        if (avail < 1 + (size_t)len) return E_SHORT;
        const unsigned char *q = p + 1;
        *pp = p + 1 + len;
        if (len == 0) return put_i64(b, cb, 0);
        int neg = q[0] != 0;
        uint64_t days = load_le(q + 1, 4);
        unsigned h = q[5], mi = q[6], s = q[7];
        uint64_t us = len == 12 ? load_le(q + 8, 4) : 0;
        if (days > 999999 || h > 23 || mi > 59 || s > 59 || us > 999999)
            return bad_value(b, cb, "binary TIME value out of range");
        int64_t v = ((int64_t)days * 86400 + h * 3600 + mi * 60 + s) * 1000000 + (int64_t)us;
        return put_i64(b, cb, neg ? -v : v);
    }
    case MC_TYPE_NULL:
        return put_null(b, cb);
    default: {
        mc_reader r;
        const unsigned char *s;
        size_t n;
        mc_reader_init(&r, p, avail);
        if (mc_reader_lenenc_str(&r, &s, &n) < 0) return E_SHORT;
        *pp = r.p;
        return put_text(b, cb, s, n);
    }
    }
}

static int parse_text_row(batch *b, const unsigned char *p, size_t n) {
    const unsigned char *e = p + n;
    for (Py_ssize_t i = 0; i < b->ncols; i++) {
        colbuf *cb = &b->cols[i];
        if (p >= e) return E_SHORT;
        unsigned char h = *p;
        int rc;
        if (h < 0xFB) {
            size_t len = h;
            p++;
            if ((size_t)(e - p) < len) return E_SHORT;
            rc = put_text(b, cb, p, len);
            p += len;
        } else if (h == 0xFB) {
            p++;
            rc = put_null(b, cb);
        } else {
            mc_reader r;
            const unsigned char *s;
            size_t len;
            mc_reader_init(&r, p, (size_t)(e - p));
            if (mc_reader_lenenc_str(&r, &s, &len) < 0) return E_SHORT;
            p = r.p;
            rc = put_text(b, cb, s, len);
        }
        if (rc < 0) return rc;
    }
    if (p != e) {
        snprintf(b->err, sizeof(b->err), "row has more values than columns");
        return E_SHORT;
    }
    b->rows++;
    return OK;
}

static int parse_binary_row(batch *b, const unsigned char *p, size_t n) {
    const unsigned char *e = p + n;
    size_t bitmap_len = (size_t)(b->ncols + 7 + 2) / 8;
    if (n < 1 + bitmap_len || p[0] != 0x00) {
        snprintf(b->err, sizeof(b->err), "binary row without its header and NULL bitmap");
        return E_SHORT;
    }
    const unsigned char *bitmap = p + 1;
    p += 1 + bitmap_len;
    for (Py_ssize_t i = 0; i < b->ncols; i++) {
        colbuf *cb = &b->cols[i];
        size_t bit = (size_t)i + 2;
        int rc = (bitmap[bit / 8] & (1u << (bit % 8))) ? put_null(b, cb) : put_binary(b, cb, &p, e);
        if (rc < 0) return rc;
    }
    if (p != e) {
        snprintf(b->err, sizeof(b->err), "binary row has more values than columns");
        return E_SHORT;
    }
    b->rows++;
    return OK;
}

static inline int parse_row(batch *b, const unsigned char *p, size_t n) {
    int rc = batch_grow(b, -1);
    if (rc < 0) return rc;
    return b->binary ? parse_binary_row(b, p, n) : parse_text_row(b, p, n);
}

/* Parse the row packets that are whole in the receive buffer, up to max_rows; stops at
   anything else (a terminator, an error packet, a partial or multi-fragment packet),
   which the caller reads with the GIL.  No Python API unless b->needs_gil. */
static int drain_buffered(mc_conn *c, batch *b, int64_t max_rows) {
    while (b->rows < max_rows && !b->full) {
        size_t avail = c->rend - c->rpos;
        if (avail < 4) return OK;
        const unsigned char *h = c->rbuf + c->rpos;
        size_t plen = mc_load_u24(h);
        if (plen >= MC_MAX_PACKET || avail < 4 + plen || (h[3] != c->seq && !c->compress))
            return OK;
        const unsigned char *p = h + 4;
        if (plen == 0 || p[0] == 0xFE || p[0] == 0xFF) return OK;
        int rc = parse_row(b, p, plen);
        if (rc < 0) return rc;
        c->seq = (uint8_t)(h[3] + 1);
        c->rpos += 4 + plen;
        c->rows_read++;
    }
    return OK;
}

/* Turn a parse failure into an exception; the connection is closed (the rest of the
   result cannot be trusted or resumed). */
static int raise_parse_error(mc_conn *c, batch *b, int rc) {
    if (rc == E_PY) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        mc_conn_malformed(c, "a value does not decode in the column's character set");
        PyObject *et2, *ev2, *tb2;
        PyErr_Fetch(&et2, &ev2, &tb2);
        PyErr_NormalizeException(&et, &ev, &tb);
        PyErr_NormalizeException(&et2, &ev2, &tb2);
        if (ev2 && ev) PyException_SetCause(ev2, Py_NewRef(ev));
        Py_XDECREF(et); Py_XDECREF(ev); Py_XDECREF(tb);
        PyErr_Restore(et2, ev2, tb2);
        return -1;
    }
    if (rc == E_NOMEM) {
        PyErr_NoMemory();
        return -1;
    }
    char msg[400];
    if (rc == E_VALUE && b->err_col >= 0 && c->column_names) {
        PyObject *name = PyTuple_GET_ITEM(c->column_names, b->err_col);
        const char *u = PyUnicode_AsUTF8(name);
        if (!u) { PyErr_Clear(); u = "?"; }
        snprintf(msg, sizeof(msg), "value in column '%s': %s", u, b->err);
    } else {
        snprintf(msg, sizeof(msg), "%s", b->err[0] ? b->err : "value length runs past the end of the row packet");
    }
    mc_conn_malformed(c, msg);
    return -1;
}

/* Fill `b` with up to max_rows rows (< 0: all) of the pending result. 0 or -1. */
static int fill_batch(mc_conn *c, batch *b, int64_t max_rows) {
    if (max_rows < 0) max_rows = INT64_MAX;
    while (b->rows < max_rows && !b->full) {
        if (c->state == ST_CURSOR) {
            int64_t want = max_rows - b->rows;
            if (want > 65536) want = 65536;
            if (mc_conn_cursor_fetch(c, (uint32_t)want) < 0) return -1;
        }
        if (c->state != ST_ROWS) break;
        int rc;
        if (b->needs_gil) {
            rc = drain_buffered(c, b, max_rows);
        } else {
            locale_t old;
            Py_BEGIN_ALLOW_THREADS
            old = uselocale(mc_c_locale);
            rc = drain_buffered(c, b, max_rows);
            uselocale(old);
            Py_END_ALLOW_THREADS
        }
        if (rc < 0) return raise_parse_error(c, b, rc);
        if (b->rows >= max_rows || b->full) break;
        /* with the GIL: read more bytes, or the terminator / error packet */
        const unsigned char *p;
        size_t n;
        int r = mc_conn_next_row(c, &p, &n);
        if (r < 0) return -1;
        if (r == 0) continue;
        locale_t old = uselocale(mc_c_locale);
        rc = parse_row(b, p, n);
        uselocale(old);
        if (rc < 0) return raise_parse_error(c, b, rc);
        c->rows_read++;
    }
    return 0;
}

/* ---------------------------------------------------------------- export */

static const char *kind_format(const colbuf *cb, char *buf, size_t cap) {
    switch (cb->kind) {
    case K_NULL: return "n";
    case K_I8: return "c";
    case K_U8: return "C";
    case K_I16: return "s";
    case K_U16: return "S";
    case K_I32: return "i";
    case K_U32: return "I";
    case K_I64: return "l";
    case K_U64: return "L";
    case K_F64: case K_DEC_F64: return "g";
    case K_DEC:
        if (cb->width == 32) snprintf(buf, cap, "d:%d,%d,256", cb->precision, cb->scale);
        else snprintf(buf, cap, "d:%d,%d", cb->precision, cb->scale);
        return buf;
    case K_DATE32: return "tdD";
    case K_TS: return "tsu:";
    case K_DUR: return "tDu";
    case K_UTF8: case K_LATIN1: case K_CODEC: case K_DEC_STR: return "u";
    case K_BINARY: return "z";
    }
    return "z";
}

typedef struct {
    char *format;
    char *name;
} schema_priv;

static void release_schema(struct ArrowSchema *s) {
    if (!s->release) return;
    for (int64_t i = 0; i < s->n_children; i++) {
        struct ArrowSchema *ch = s->children[i];
        if (ch->release) ch->release(ch);
        free(ch);
    }
    free(s->children);
    schema_priv *pv = s->private_data;
    if (pv) { free(pv->format); free(pv->name); free(pv); }
    s->release = NULL;
}

static int schema_node(struct ArrowSchema *s, const char *format, const char *name,
                       Py_ssize_t name_n, int64_t n_children) {
    memset(s, 0, sizeof(*s));
    schema_priv *pv = calloc(1, sizeof(schema_priv));
    if (!pv) return -1;
    s->private_data = pv;
    s->release = release_schema;
    pv->format = strdup(format);
    pv->name = malloc((size_t)name_n + 1);
    if (!pv->format || !pv->name) return -1;
    memcpy(pv->name, name, (size_t)name_n);
    pv->name[name_n] = 0;
    s->format = pv->format;
    s->name = pv->name;
    s->flags = n_children ? 0 : ARROW_FLAG_NULLABLE;
    if (n_children) {
        s->children = calloc((size_t)n_children, sizeof(struct ArrowSchema *));
        if (!s->children) return -1;
        s->n_children = 0;
        for (int64_t i = 0; i < n_children; i++) {
            s->children[i] = calloc(1, sizeof(struct ArrowSchema));
            if (!s->children[i]) return -1;
            s->n_children = i + 1;   /* released with the parent from here on */
        }
    }
    return 0;
}

static void capsule_free_schema(PyObject *cap) {
    struct ArrowSchema *s = PyCapsule_GetPointer(cap, "arrow_schema");
    if (!s) { PyErr_Clear(); return; }
    if (s->release) s->release(s);
    free(s);
}

static void capsule_free_array(PyObject *cap) {
    struct ArrowArray *a = PyCapsule_GetPointer(cap, "arrow_array");
    if (!a) { PyErr_Clear(); return; }
    if (a->release) a->release(a);
    free(a);
}

/* The struct schema of the current result (GIL held). */
static PyObject *make_schema_capsule(mc_conn *c, const batch *b) {
    struct ArrowSchema *s = calloc(1, sizeof(*s));
    if (!s) return PyErr_NoMemory();
    PyObject *cap = PyCapsule_New(s, "arrow_schema", capsule_free_schema);
    if (!cap) { free(s); return NULL; }
    if (schema_node(s, "+s", "", 0, b->ncols) < 0) goto nomem;
    for (Py_ssize_t i = 0; i < b->ncols; i++) {
        char fmt[32];
        Py_ssize_t nn = 0;
        const char *name = "";
        if (c->column_names) {
            name = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(c->column_names, i), &nn);
            if (!name) { Py_DECREF(cap); return NULL; }
        }
        if (schema_node(s->children[i], kind_format(&b->cols[i], fmt, sizeof(fmt)), name, nn, 0) < 0)
            goto nomem;
    }
    return cap;
nomem:
    Py_DECREF(cap);
    return PyErr_NoMemory();
}

typedef struct {
    const void *bufs[3];
    void *owned[3];
} array_priv;

static void release_array(struct ArrowArray *a) {
    if (!a->release) return;
    for (int64_t i = 0; i < a->n_children; i++) {
        struct ArrowArray *ch = a->children[i];
        if (ch->release) ch->release(ch);
        free(ch);
    }
    free(a->children);
    array_priv *pv = a->private_data;
    if (pv) {
        for (int k = 0; k < 3; k++) free(pv->owned[k]);
        free(pv);
    }
    a->release = NULL;
}

/* Move column cb's buffers into a child array (shrunk to their size). */
static int column_array(struct ArrowArray *a, colbuf *cb, int64_t rows) {
    memset(a, 0, sizeof(*a));
    array_priv *pv = calloc(1, sizeof(array_priv));
    if (!pv) return -1;
    a->private_data = pv;
    a->release = release_array;
    a->buffers = pv->bufs;
    a->length = rows;
    if (cb->kind == K_NULL) {
        a->null_count = rows;
        a->n_buffers = 0;
        return 0;
    }
    a->null_count = cb->nulls;
    pv->owned[0] = cb->valid;
    cb->valid = NULL;
    pv->bufs[0] = cb->nulls ? pv->owned[0] : NULL;
    if (cb->width) {
        size_t sz = (size_t)rows * (size_t)cb->width;
        void *d = cb->data;
        if (!d) d = malloc(8);
        else if (sz) {
            void *shrunk = realloc(d, sz);
            if (shrunk) d = shrunk;
        }
        cb->data = NULL;
        if (!d) return -1;
        pv->owned[1] = d;
        pv->bufs[1] = d;
        a->n_buffers = 2;
        return 0;
    }
    int32_t *offs = cb->offs;
    if (!offs) {
        offs = malloc(sizeof(int32_t));
        if (!offs) return -1;
        offs[0] = 0;
    } else {
        void *shrunk = realloc(offs, ((size_t)rows + 1) * sizeof(int32_t));
        if (shrunk) offs = shrunk;
    }
    cb->offs = NULL;
    pv->owned[1] = offs;
    pv->bufs[1] = offs;
    void *d = cb->data;
    if (!d) d = malloc(8);
    else if (cb->len) {
        void *shrunk = realloc(d, cb->len);
        if (shrunk) d = shrunk;
    }
    cb->data = NULL;
    if (!d) return -1;
    pv->owned[2] = d;
    pv->bufs[2] = d;
    a->n_buffers = 3;
    return 0;
}

/* Move the batch into a struct ArrowArray capsule (GIL held). */
static PyObject *make_array_capsule(batch *b) {
    struct ArrowArray *a = calloc(1, sizeof(*a));
    if (!a) return PyErr_NoMemory();
    PyObject *cap = PyCapsule_New(a, "arrow_array", capsule_free_array);
    if (!cap) { free(a); return NULL; }
    array_priv *pv = calloc(1, sizeof(array_priv));
    if (!pv) goto nomem;
    a->private_data = pv;
    a->release = release_array;
    a->buffers = pv->bufs;   /* one (absent) validity buffer */
    a->n_buffers = 1;
    a->length = b->rows;
    if (b->ncols) {
        a->children = calloc((size_t)b->ncols, sizeof(struct ArrowArray *));
        if (!a->children) goto nomem;
    }
    for (Py_ssize_t i = 0; i < b->ncols; i++) {
        a->children[i] = calloc(1, sizeof(struct ArrowArray));
        if (!a->children[i]) goto nomem;
        a->n_children = i + 1;
        if (column_array(a->children[i], &b->cols[i], b->rows) < 0) goto nomem;
    }
    return cap;
nomem:
    Py_DECREF(cap);
    return PyErr_NoMemory();
}

static int parse_decimal_option(PyObject *o, int *out) {
    if (!o || o == Py_None) { *out = DECIMAL_AS_DECIMAL; return 0; }
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    if (s && !strcmp(s, "decimal")) *out = DECIMAL_AS_DECIMAL;
    else if (s && !strcmp(s, "float")) *out = DECIMAL_AS_FLOAT;
    else if (s && !strcmp(s, "str")) *out = DECIMAL_AS_STR;
    else {
        PyErr_SetString(PyExc_ValueError, "decimal must be 'decimal', 'float' or 'str'");
        return -1;
    }
    return 0;
}

PyObject *mc_conn_arrow_schema(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"decimal", NULL};
    PyObject *dec = NULL;
    int decimal_as;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O", kwlist, &dec)) return NULL;
    if (parse_decimal_option(dec, &decimal_as) < 0) return NULL;
    if (!c->plan || c->field_count <= 0)
        return mc_raise(c->st->ProgrammingError, 0, "no result set with columns");
    batch b;
    if (batch_init(&b, c, decimal_as) < 0) return NULL;
    PyObject *r = make_schema_capsule(c, &b);
    batch_free(&b);
    return r;
}

PyObject *mc_conn_fetch_arrow(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"n", "decimal", NULL};
    Py_ssize_t limit = -1;
    PyObject *dec = NULL;
    int decimal_as;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|nO", kwlist, &limit, &dec)) return NULL;
    if (parse_decimal_option(dec, &decimal_as) < 0) return NULL;
    if (limit == 0) limit = 1;
    if (mc_conn_enter(c) < 0) return NULL;
    PyObject *ret = NULL, *sc = NULL, *ac = NULL;
    batch b;
    b.cols = NULL;
    if (!c->plan || c->field_count <= 0) {
        mc_raise(c->st->ProgrammingError, 0, "no result set with columns");
        goto done;
    }
    if (batch_init(&b, c, decimal_as) < 0) goto done;
    if (limit > 0 && limit < 1024) {   /* small batches: allocate what they need at once */
        int rc = batch_grow(&b, limit);
        if (rc < 0) { PyErr_NoMemory(); goto done; }
    }
    if (fill_batch(c, &b, limit) < 0) goto done;
    int64_t rows = b.rows;
    sc = make_schema_capsule(c, &b);
    if (!sc) goto done;
    ac = make_array_capsule(&b);
    if (!ac) goto done;
    ret = Py_BuildValue("(OOL)", sc, ac, (long long)rows);
done:
    Py_XDECREF(sc);
    Py_XDECREF(ac);
    batch_free(&b);
    mc_conn_leave(c);
    return ret;
}

/* ---------------------------------------------------------------- stream adapter */

/* An ArrowArrayStream over two Python callables: get_schema() -> "arrow_schema" capsule,
   get_next() -> ("arrow_schema", "arrow_array") capsules or None at the end.  The
   callbacks take the GIL, so the consumer may call them from any thread. */
typedef struct {
    PyObject *get_schema;
    PyObject *get_next;
    char *error;
} stream_priv;

static void stream_set_error(stream_priv *pv) {
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyErr_NormalizeException(&et, &ev, &tb);
    free(pv->error);
    pv->error = NULL;
    PyObject *s = ev ? PyObject_Str(ev) : NULL;
    const char *u = s ? PyUnicode_AsUTF8(s) : NULL;
    const char *tn = et ? ((PyTypeObject *)et)->tp_name : "error";
    if (u) {
        size_t n = strlen(tn) + strlen(u) + 3;
        pv->error = malloc(n);
        if (pv->error) snprintf(pv->error, n, "%s: %s", tn, u);
    }
    PyErr_Clear();
    Py_XDECREF(s);
    Py_XDECREF(et); Py_XDECREF(ev); Py_XDECREF(tb);
}

/* Move the struct out of a capsule (the capsule keeps an empty, released one). */
static int take_from_capsule(PyObject *cap, const char *name, void *out, size_t size) {
    void *p = PyCapsule_GetPointer(cap, name);
    if (!p) return -1;
    int released = !strcmp(name, "arrow_schema") ? ((struct ArrowSchema *)p)->release == NULL
                                                 : ((struct ArrowArray *)p)->release == NULL;
    if (released) {
        PyErr_Format(PyExc_ValueError, "this %s capsule has already been consumed", name);
        return -1;
    }
    memcpy(out, p, size);
    /* release is the 9th / 8th member of both structs; clear it in the source */
    if (!strcmp(name, "arrow_schema")) ((struct ArrowSchema *)p)->release = NULL;
    else ((struct ArrowArray *)p)->release = NULL;
    return 0;
}

static int stream_get_schema(struct ArrowArrayStream *st, struct ArrowSchema *out) {
    stream_priv *pv = st->private_data;
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = 0;
    PyObject *cap = PyObject_CallNoArgs(pv->get_schema);
    if (!cap || take_from_capsule(cap, "arrow_schema", out, sizeof(*out)) < 0) {
        stream_set_error(pv);
        rc = EIO;
    }
    Py_XDECREF(cap);
    PyGILState_Release(g);
    return rc;
}

static int stream_get_next(struct ArrowArrayStream *st, struct ArrowArray *out) {
    stream_priv *pv = st->private_data;
    PyGILState_STATE g = PyGILState_Ensure();
    int rc = 0;
    PyObject *r = PyObject_CallNoArgs(pv->get_next);
    if (!r) {
        stream_set_error(pv);
        rc = EIO;
    } else if (r == Py_None) {
        memset(out, 0, sizeof(*out));   /* release == NULL: the end of the stream */
    } else if (!PyTuple_Check(r) || PyTuple_GET_SIZE(r) != 2 ||
               take_from_capsule(PyTuple_GET_ITEM(r, 1), "arrow_array", out, sizeof(*out)) < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "get_next() must return (schema, array) capsules");
        stream_set_error(pv);
        rc = EIO;
    }
    Py_XDECREF(r);
    PyGILState_Release(g);
    return rc;
}

static const char *stream_get_last_error(struct ArrowArrayStream *st) {
    stream_priv *pv = st->private_data;
    return pv->error;
}

static void stream_release(struct ArrowArrayStream *st) {
    if (!st->release) return;
    stream_priv *pv = st->private_data;
    PyGILState_STATE g = PyGILState_Ensure();
    Py_XDECREF(pv->get_schema);
    Py_XDECREF(pv->get_next);
    PyGILState_Release(g);
    free(pv->error);
    free(pv);
    st->release = NULL;
}

static void capsule_free_stream(PyObject *cap) {
    struct ArrowArrayStream *s = PyCapsule_GetPointer(cap, "arrow_array_stream");
    if (!s) { PyErr_Clear(); return; }
    if (s->release) s->release(s);
    free(s);
}

/* arrow_stream(get_schema, get_next) -> "arrow_array_stream" capsule */
static PyObject *mc_arrow_stream(PyObject *mod, PyObject *args) {
    PyObject *gs, *gn;
    if (!PyArg_ParseTuple(args, "OO", &gs, &gn)) return NULL;
    if (!PyCallable_Check(gs) || !PyCallable_Check(gn)) {
        PyErr_SetString(PyExc_TypeError, "arrow_stream() takes two callables");
        return NULL;
    }
    struct ArrowArrayStream *s = calloc(1, sizeof(*s));
    stream_priv *pv = calloc(1, sizeof(*pv));
    if (!s || !pv) { free(s); free(pv); return PyErr_NoMemory(); }
    pv->get_schema = Py_NewRef(gs);
    pv->get_next = Py_NewRef(gn);
    s->get_schema = stream_get_schema;
    s->get_next = stream_get_next;
    s->get_last_error = stream_get_last_error;
    s->release = stream_release;
    s->private_data = pv;
    PyObject *cap = PyCapsule_New(s, "arrow_array_stream", capsule_free_stream);
    if (!cap) { s->release(s); free(s); }
    (void)mod;
    return cap;
}

PyMethodDef mc_columnar_functions[] = {
    {"arrow_stream", (PyCFunction)mc_arrow_stream, METH_VARARGS,
     "arrow_stream(get_schema, get_next) -> 'arrow_array_stream' PyCapsule (Arrow C Stream"
     " Interface) calling get_schema() -> schema capsule and get_next() -> (schema, array)"
     " capsules or None at the end"},
    {NULL},
};

/* ---------------------------------------------------------------- from a Store */

int mc_utf8_valid(const unsigned char *s, size_t n) { return utf8_valid(s, n); }

/* rows decoded from a Store between two checks for signals (mc_store_fetch_arrow) */
#define MC_STORE_SIGNAL_ROWS 65536

/* Parse stored rows from byte offset *off (row `row`) into `b`, up to max_rows or the end of
   the store; no Python API unless b->needs_gil. */
static int drain_store(const mc_store *s, batch *b, Py_ssize_t *row, size_t *off,
                       int64_t max_rows) {
    while (b->rows < max_rows && !b->full && *row < s->nrows) {
        const unsigned char *h = s->buf + *off;
        size_t n = (size_t)h[0] | ((size_t)h[1] << 8) | ((size_t)h[2] << 16) |
                   ((size_t)h[3] << 24);
        int rc = parse_row(b, h + 4, n);
        if (rc < 0) return rc;
        *off += 4 + n;
        (*row)++;
    }
    return OK;
}

PyObject *mc_store_arrow_schema(mc_store *s, PyObject *args, PyObject *kwds) {
    return mc_conn_arrow_schema(&s->ctx, args, kwds);
}

/* Store.fetch_arrow(start, n=-1, decimal='decimal') -> (schema, array, rows) */
PyObject *mc_store_fetch_arrow(mc_store *s, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"start", "n", "decimal", NULL};
    Py_ssize_t start, limit = -1;
    PyObject *dec = NULL;
    int decimal_as;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "n|nO", kwlist, &start, &limit, &dec))
        return NULL;
    if (parse_decimal_option(dec, &decimal_as) < 0) return NULL;
    if (start < 0) start = 0;
    if (start > s->nrows) start = s->nrows;
    Py_ssize_t left = s->nrows - start;
    if (limit < 0 || limit > left) limit = left;
    PyObject *ret = NULL, *sc = NULL, *ac = NULL;
    batch b;
    mc_store_read_as_columns(s);
    if (batch_init(&b, &s->ctx, decimal_as) < 0) return NULL;
    b.text_checked = s->checked;
    if (limit > 0) {   /* the row count is known: allocate the fixed-width columns once */
        int rc = batch_grow(&b, limit < 1024 ? limit : -1);
        if (rc < 0) { PyErr_NoMemory(); goto done; }
    }
    Py_ssize_t row = start;
    size_t off = limit > 0 ? mc_store_offset(s, start) : 0;
    int rc = OK;
    /* in steps of MC_STORE_SIGNAL_ROWS rows, with the GIL (and PyErr_CheckSignals) between
       them: Ctrl-C during the decode of a large stored result is honoured within a step
       (a few ms), and the store stays as it was (the result was read whole already) */
    for (;;) {
        int64_t upto = b.rows + MC_STORE_SIGNAL_ROWS < (int64_t)limit
                       ? b.rows + MC_STORE_SIGNAL_ROWS : (int64_t)limit;
        if (b.needs_gil) {
            locale_t old = uselocale(mc_c_locale);
            rc = drain_store(s, &b, &row, &off, upto);
            uselocale(old);
        } else {
            locale_t old;
            Py_BEGIN_ALLOW_THREADS
            old = uselocale(mc_c_locale);
            rc = drain_store(s, &b, &row, &off, upto);
            uselocale(old);
            Py_END_ALLOW_THREADS
        }
        if (rc < 0 || b.rows >= (int64_t)limit || b.full || row >= s->nrows) break;
        if (PyErr_CheckSignals() < 0) goto done;
    }
    if (rc < 0) { raise_parse_error(&s->ctx, &b, rc); mc_store_distrust(s); goto done; }
    s->pos_row = row;
    s->pos_off = off;
    sc = make_schema_capsule(&s->ctx, &b);
    if (!sc) goto done;
    ac = make_array_capsule(&b);
    if (!ac) goto done;
    ret = Py_BuildValue("(OOL)", sc, ac, (long long)b.rows);
done:
    Py_XDECREF(sc);
    Py_XDECREF(ac);
    batch_free(&b);
    return ret;
}
