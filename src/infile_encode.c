/* Rows -> the text format of LOAD DATA LOCAL INFILE, for mysqlc.bulk.load_table.
 *
 * Output format: LOAD DATA's defaults (MySQL reference manual, "LOAD DATA Statement",
 * FIELDS/LINES defaults): FIELDS TERMINATED BY '\t' ENCLOSED BY '' ESCAPED BY '\\'
 * LINES TERMINATED BY '\n'.  Each row is one line, fields separated by TAB; in a field
 * the bytes NUL, TAB, LF, CR and backslash are written as \0 \t \n \r \\ (the escape
 * sequences the server reads back as those bytes) and SQL NULL is \N.  Text is UTF-8
 * (the statement says CHARACTER SET utf8mb4); binary values are their raw bytes, escaped
 * the same way (the server copies bytes into BINARY/BLOB columns without conversion).
 *
 * Two sources:
 *
 * infile_encode_rows(rows, ncols, names=None, first_row=0) -> bytes
 *     A list of sequences of Python values (GIL held; see the table in the function's
 *     docstring below).
 *
 * infile_encode_arrow(schema_capsule, array_capsule) -> bytes
 *     A struct array (a record batch) received through the Arrow C Data Interface
 *     (https://arrow.apache.org/docs/format/CDataInterface.html) as the PyCapsule pair
 *     of `__arrow_c_array__()`.  The structs are moved out of the capsules, read with
 *     the GIL released and without any Python object per value, and released (their
 *     release callbacks called) before returning.
 *
 * infile_arrow_check(schema_capsule) -> None
 *     Raises TypeError naming the column and format when a field has a type the
 *     encoder does not support; borrows the schema (does not consume it).
 */
#include "mysqlc.h"
#include "infile_encode.h"
#include <datetime.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "arrow_c.h"

/* ------------------------------------------------------------------------ */
/* growable output buffer on the C heap (usable without the GIL)            */

typedef struct {
    char *p;
    size_t len;
    size_t cap;
} ibuf;

static int ib_grow(ibuf *b, size_t need) {
    size_t cap = b->cap ? b->cap : 65536;
    while (cap - b->len < need) {
        if (cap > ((size_t)PY_SSIZE_T_MAX) / 2) return -1;
        cap *= 2;
    }
    char *p = realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

/* make room for `need` more bytes; 0 or -1 (out of memory, no exception set) */
static inline int ib_need(ibuf *b, size_t need) {
    return (b->cap - b->len >= need) ? 0 : ib_grow(b, need);
}

static inline void ib_putc(ibuf *b, char c) { b->p[b->len++] = c; }   /* room reserved */

static inline void ib_put(ibuf *b, const void *s, size_t n) {
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

/* ------------------------------------------------------------------------ */
/* field writers (callers reserve room first)                               */

/* the character written after the backslash for the bytes that need escaping */
static const unsigned char esc_code[256] = {
    [0] = '0', ['\t'] = 't', ['\n'] = 'n', ['\r'] = 'r', ['\\'] = '\\',
};

/* escaped copy of s[0:n]; needs 2n bytes of room */
static void put_escaped(ibuf *b, const unsigned char *s, size_t n) {
    char *w = b->p + b->len;
    size_t run = 0;
    for (size_t k = 0; k < n; k++) {
        unsigned char e = esc_code[s[k]];
        if (e) {
            if (k > run) { memcpy(w, s + run, k - run); w += k - run; }
            *w++ = '\\';
            *w++ = (char)e;
            run = k + 1;
        }
    }
    if (n > run) { memcpy(w, s + run, n - run); w += n - run; }
    b->len = (size_t)(w - b->p);
}

static int put_escaped_checked(ibuf *b, const unsigned char *s, size_t n) {
    if (n > ((size_t)PY_SSIZE_T_MAX - 16) / 2 || ib_need(b, 2 * n + 16) < 0) return -1;
    put_escaped(b, s, n);
    return 0;
}

/* decimal digits of v; returns the length (<= 20) */
static int fmt_u64(char *out, uint64_t v) {
    char tmp[24];
    int n = 0;
    do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    for (int k = 0; k < n; k++) out[k] = tmp[n - 1 - k];
    return n;
}

static int fmt_i64(char *out, int64_t v) {
    if (v < 0) {
        out[0] = '-';
        return 1 + fmt_u64(out + 1, (uint64_t)0 - (uint64_t)v);
    }
    return fmt_u64(out, (uint64_t)v);
}

/* v in 0..99 as two digits */
static inline char *put2d(char *w, unsigned v) {
    w[0] = (char)('0' + v / 10);
    w[1] = (char)('0' + v % 10);
    return w + 2;
}

/* `digits` digits of v, zero padded */
static char *putnd(char *w, uint64_t v, int digits) {
    for (int k = digits - 1; k >= 0; k--) { w[k] = (char)('0' + v % 10); v /= 10; }
    return w + digits;
}

/* shortest of 15/16/17 significant digits that reads back as x (strtod); x finite.
   The C locale is in effect (see with_c_locale). */
static int fmt_f64(char *out, double x) {
    int n = 0;
    for (int p = 15; p <= 17; p++) {
        n = snprintf(out, 40, "%.*g", p, x);
        if (p == 17 || strtod(out, NULL) == x) break;
    }
    return n;
}

/* the same for float32 values: 6..9 significant digits, checked with strtof */
static int fmt_f32(char *out, float x) {
    int n = 0;
    for (int p = 6; p <= 9; p++) {
        n = snprintf(out, 40, "%.*g", p, (double)x);
        if (p == 9 || strtof(out, NULL) == x) break;
    }
    return n;
}

static float half_to_float(uint16_t h) {
    int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    float v;
    if (exp == 0) v = ldexpf((float)man, -24);
    else if (exp == 31) v = man ? NAN : INFINITY;
    else v = ldexpf((float)(man | 0x400), exp - 25);
    return sign ? -v : v;
}

static inline int64_t floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Proleptic Gregorian calendar: days since 1970-01-01 -> year, month, day.
   Counts from 0000-03-01 so that the leap day ends a year of the 400-year cycle. */
static void days_to_ymd(int64_t days, int64_t *y, int *m, int *d) {
    int64_t z = days + 719468;                 /* days since 0000-03-01 */
    int64_t cycle = floordiv(z, 146097);       /* 400-year cycles of 146097 days */
    int64_t doc = z - cycle * 146097;          /* 0..146096 */
    int64_t yoc = (doc - doc / 1460 + doc / 36524 - doc / 146096) / 365;   /* 0..399 */
    int64_t doy = doc - (365 * yoc + yoc / 4 - yoc / 100);                 /* 0..365 */
    int64_t mp = (5 * doy + 2) / 153;          /* month from March = 0 */
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = cycle * 400 + yoc + (*m <= 2);
}

/* YYYY-MM-DD; returns NULL when the year is outside 0..9999 */
static char *put_ymd(char *w, int64_t days) {
    int64_t y;
    int m, d;
    days_to_ymd(days, &y, &m, &d);
    if (y < 0 || y > 9999) return NULL;
    w = putnd(w, (uint64_t)y, 4);
    *w++ = '-';
    w = put2d(w, (unsigned)m);
    *w++ = '-';
    return put2d(w, (unsigned)d);
}

/* ".fff", ".ffffff" or ".fffffffff" for `frac` ticks of a unit with `digits` digits
   (0: none); nothing when frac == 0; nanoseconds that are whole microseconds get 6. */
static char *put_frac(char *w, uint64_t frac, int digits) {
    if (!frac || !digits) return w;
    if (digits == 9 && frac % 1000 == 0) { frac /= 1000; digits = 6; }
    *w++ = '.';
    return putnd(w, frac, digits);
}

/* [-]H:MM:SS[.f] from a signed tick count (TIME: hours not wrapped at 24) */
static char *put_hms(char *w, int64_t v, int64_t unit, int digits) {
    uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    uint64_t secs = mag / (uint64_t)unit, frac = mag % (uint64_t)unit;
    uint64_t h = secs / 3600;
    if (v < 0) *w++ = '-';
    if (h < 10) *w++ = '0';
    w += fmt_u64(w, h);
    *w++ = ':';
    w = put2d(w, (unsigned)((secs / 60) % 60));
    *w++ = ':';
    w = put2d(w, (unsigned)(secs % 60));
    return put_frac(w, frac, digits);
}

/* "YYYY-MM-DD HH:MM:SS[.f]" from ticks since the epoch; NULL when the year is out of
   0..9999 */
static char *put_timestamp(char *w, int64_t v, int64_t unit, int digits) {
    int64_t secs = v / unit, rem = v % unit;     /* floor division without overflow */
    if (rem < 0) { rem += unit; secs -= 1; }
    uint64_t frac = (uint64_t)rem;
    int64_t days = floordiv(secs, 86400);
    int64_t sod = secs - days * 86400;
    w = put_ymd(w, days);
    if (!w) return NULL;
    *w++ = ' ';
    w = put2d(w, (unsigned)(sod / 3600));
    *w++ = ':';
    w = put2d(w, (unsigned)((sod / 60) % 60));
    *w++ = ':';
    w = put2d(w, (unsigned)(sod % 60));
    return put_frac(w, frac, digits);
}

/* Decimal digits of an integer given as little-endian 64-bit limbs (two's complement,
   nl <= 4), with `scale` digits after the point (negative: zeros appended).  Writes at
   most 80 + max(0, -scale) bytes. */
static int fmt_decimal(char *out, const uint64_t *limbs_in, int nl, int scale) {
    uint64_t limbs[4];
    int neg = (limbs_in[nl - 1] >> 63) & 1;
    memcpy(limbs, limbs_in, (size_t)nl * 8);
    if (neg) {   /* negate: invert and add one */
        unsigned carry = 1;
        for (int k = 0; k < nl; k++) {
            limbs[k] = ~limbs[k] + carry;
            carry = carry && limbs[k] == 0;
        }
    }
    char digs[96];
    int nd = 0;            /* digits written backwards into digs */
    for (;;) {
        int top = nl - 1;
        while (top >= 0 && limbs[top] == 0) top--;
        if (top < 0) break;
        uint64_t rem = 0;
        for (int k = top; k >= 0; k--) {
            unsigned __int128 cur = ((unsigned __int128)rem << 64) | limbs[k];
            limbs[k] = (uint64_t)(cur / 10000000000000000000ULL);
            rem = (uint64_t)(cur % 10000000000000000000ULL);
        }
        for (int k = 0; k < 19; k++) { digs[nd++] = (char)('0' + rem % 10); rem /= 10; }
    }
    while (nd > 0 && digs[nd - 1] == '0') nd--;     /* leading zeros of the number */
    char *w = out;
    if (nd == 0) { *w++ = '0'; return 1; }
    if (neg) *w++ = '-';
    if (scale <= 0) {
        for (int k = nd - 1; k >= 0; k--) *w++ = digs[k];
        for (int k = 0; k < -scale; k++) *w++ = '0';
    } else if (nd <= scale) {
        *w++ = '0';
        *w++ = '.';
        for (int k = 0; k < scale - nd; k++) *w++ = '0';
        for (int k = nd - 1; k >= 0; k--) *w++ = digs[k];
    } else {
        for (int k = nd - 1; k >= scale; k--) *w++ = digs[k];
        *w++ = '.';
        for (int k = scale - 1; k >= 0; k--) *w++ = digs[k];
    }
    return (int)(w - out);
}

/* ------------------------------------------------------------------------ */
/* Arrow columns                                                            */

enum {
    K_NULL, K_BOOL, K_INT, K_UINT, K_F16, K_F32, K_F64, K_DEC, K_DATE32, K_DATE64,
    K_TS, K_DUR, K_TIME, K_BIN32, K_BIN64, K_VIEW, K_FIXED,
};

typedef struct icol {
    int kind;
    int isz;              /* bytes per value: ints, decimals, times, fixed binary */
    int scale;            /* decimal */
    int digits;           /* fraction digits of the temporal unit: 0, 3, 6, 9 */
    int64_t unit;         /* ticks per second */
    const char *name;     /* borrowed from the schema (may be NULL) */
    const char *format;
    int index;            /* position in the batch */
    /* buffers */
    const uint8_t *valid;
    const uint8_t *data;
    const uint8_t *vdata;
    const uint8_t *const *vbufs;
    int64_t nvbufs;
    int64_t off;          /* physical index of row 0 */
    int64_t length;       /* rows addressable from off */
    struct icol *dict;    /* dictionary values (for dictionary-encoded columns) */
} icol;

enum { E_NONE, E_DATA, E_VALUE, E_NOMEM };

typedef struct {
    int kind;
    int64_t row;
    const icol *col;
    char msg[200];
} enc_err;

static int parse_int(const char *s, const char **end) {
    long v = strtol(s, (char **)end, 10);
    if (*end == s || v < INT_MIN || v > INT_MAX) return INT_MIN;
    return (int)v;
}

/* Set up the type part of `c` from a format string.  0, or -1 with TypeError set. */
static int plan_format(icol *c, const char *fmt, const char *colname, int index) {
    c->format = fmt;
    c->name = colname;
    c->index = index;
    c->unit = 1;
    c->digits = 0;
    const char *f = fmt;
    if (!f) f = "";
    switch (f[0]) {
    case 'n': if (!f[1]) { c->kind = K_NULL; return 0; } break;
    case 'b': if (!f[1]) { c->kind = K_BOOL; return 0; } break;
    case 'c': if (!f[1]) { c->kind = K_INT; c->isz = 1; return 0; } break;
    case 'C': if (!f[1]) { c->kind = K_UINT; c->isz = 1; return 0; } break;
    case 's': if (!f[1]) { c->kind = K_INT; c->isz = 2; return 0; } break;
    case 'S': if (!f[1]) { c->kind = K_UINT; c->isz = 2; return 0; } break;
    case 'i': if (!f[1]) { c->kind = K_INT; c->isz = 4; return 0; } break;
    case 'I': if (!f[1]) { c->kind = K_UINT; c->isz = 4; return 0; } break;
    case 'l': if (!f[1]) { c->kind = K_INT; c->isz = 8; return 0; } break;
    case 'L': if (!f[1]) { c->kind = K_UINT; c->isz = 8; return 0; } break;
    case 'e': if (!f[1]) { c->kind = K_F16; return 0; } break;
    case 'f': if (!f[1]) { c->kind = K_F32; return 0; } break;
    case 'g': if (!f[1]) { c->kind = K_F64; return 0; } break;
    case 'u': case 'z': if (!f[1]) { c->kind = K_BIN32; return 0; } break;
    case 'U': case 'Z': if (!f[1]) { c->kind = K_BIN64; return 0; } break;
    case 'v':
        if ((f[1] == 'u' || f[1] == 'z') && !f[2]) { c->kind = K_VIEW; return 0; }
        break;
    case 'w':
        if (f[1] == ':') {
            const char *end;
            int w = parse_int(f + 2, &end);
            if (w > 0 && !*end) { c->kind = K_FIXED; c->isz = w; return 0; }
        }
        break;
    case 'd':
        if (f[1] == ':') {   /* d:P,S[,bits] */
            const char *end;
            int p = parse_int(f + 2, &end);
            if (p == INT_MIN || *end != ',') break;
            int s = parse_int(end + 1, &end);
            if (s == INT_MIN || s > 200 || s < -200) break;
            int bits = 128;
            if (*end == ',') {
                bits = parse_int(end + 1, &end);
            }
            if (*end) break;
            if (bits != 32 && bits != 64 && bits != 128 && bits != 256) break;
            c->kind = K_DEC;
            c->scale = s;
            c->isz = bits / 8;
            return 0;
        }
        break;
    case 't': {
        int64_t unit = 0;
        int digits = 0;
        char u = f[2];
        switch (u) {
        case 's': unit = 1; digits = 0; break;
        case 'm': unit = 1000; digits = 3; break;
        case 'u': unit = 1000000; digits = 6; break;
        case 'n': unit = 1000000000; digits = 9; break;
        }
        if (f[1] == 'd' && f[2] == 'D' && !f[3]) { c->kind = K_DATE32; return 0; }
        if (f[1] == 'd' && f[2] == 'm' && !f[3]) { c->kind = K_DATE64; return 0; }
        if (!unit) break;
        c->unit = unit;
        c->digits = digits;
        if (f[1] == 's' && f[3] == ':') { c->kind = K_TS; return 0; }   /* any zone: UTC */
        if (f[1] == 'D' && !f[3]) { c->kind = K_DUR; return 0; }
        if (f[1] == 't' && !f[3]) {
            c->kind = K_TIME;
            c->isz = (u == 's' || u == 'm') ? 4 : 8;
            return 0;
        }
        break;
    }
    default:
        break;
    }
    PyObject *nm = colname ? PyUnicode_DecodeUTF8(colname, (Py_ssize_t)strlen(colname),
                                                  "replace")
                           : PyUnicode_FromFormat("#%d", index);
    if (nm) {
        PyErr_Format(PyExc_TypeError,
                     "load_table: column %R has the Arrow type format '%s', which "
                     "load_table does not support (supported: null, bool, integers, "
                     "float16/32/64, decimal32/64/128/256, date32/64, timestamp, "
                     "duration, time32/64, string, large_string, string_view, binary, "
                     "large_binary, binary_view, fixed_size_binary and dictionaries of "
                     "these)", nm, f);
        Py_DECREF(nm);
    }
    return -1;
}

/* type plan of one field, including its dictionary's value type */
static int plan_field(icol *c, icol *dict, const struct ArrowSchema *s, int index) {
    const char *name = s->name;
    if (s->dictionary) {
        if (plan_format(c, s->format, name, index) < 0) return -1;
        if (c->kind != K_INT && c->kind != K_UINT) {
            PyErr_Format(PyExc_TypeError,
                         "load_table: column #%d: dictionary indices of format '%s'", index,
                         s->format ? s->format : "");
            return -1;
        }
        if (s->dictionary->dictionary) {
            PyErr_Format(PyExc_TypeError,
                         "load_table: column #%d: nested dictionaries are not supported",
                         index);
            return -1;
        }
        if (plan_format(dict, s->dictionary->format, name, index) < 0) return -1;
        c->dict = dict;
        return 0;
    }
    c->dict = NULL;
    return plan_format(c, s->format, name, index);
}

static int malformed(const icol *c, const char *what) {
    PyErr_Format(PyExc_ValueError, "load_table: column #%d (%s): malformed Arrow array: %s",
                 c->index, c->name ? c->name : "?", what);
    return -1;
}

static int64_t expected_buffers(const icol *c) {
    switch (c->kind) {
    case K_NULL: return 0;
    case K_BIN32: case K_BIN64: return 3;
    case K_VIEW: return -1;
    default: return 2;
    }
}

/* Buffer part of the plan: `a` is the child array, `parent_off`/`nrows` the rows of the
   struct that are read.  0, or -1 with ValueError set. */
static int plan_array(icol *c, const struct ArrowArray *a, int64_t parent_off, int64_t nrows) {
    if (!a || a->release == NULL) return malformed(c, "released child array");
    if (a->offset < 0 || a->length < 0 || a->length - parent_off < nrows)
        return malformed(c, "child shorter than the batch");
    c->off = a->offset + parent_off;
    c->length = nrows;
    int64_t nb = expected_buffers(c);
    if (nb >= 0 && a->n_buffers != nb) return malformed(c, "unexpected number of buffers");
    if (c->kind == K_VIEW && a->n_buffers < 3) return malformed(c, "too few view buffers");
    const void *const *bufs = (const void *const *)a->buffers;
    c->valid = NULL;
    if (a->n_buffers > 0 && a->null_count != 0 && bufs[0] != NULL)
        c->valid = bufs[0];
    else if (a->null_count > 0 && c->kind != K_NULL)
        return malformed(c, "nulls without a validity bitmap");
    c->data = a->n_buffers > 1 ? bufs[1] : NULL;
    c->vdata = a->n_buffers > 2 ? bufs[2] : NULL;
    if (c->kind == K_VIEW) {
        c->vbufs = (const uint8_t *const *)(bufs + 2);
        c->nvbufs = a->n_buffers - 3;   /* the last buffer holds the variadic sizes */
    }
    if (c->kind != K_NULL && nrows > 0 && !c->data) return malformed(c, "missing data buffer");
    if ((c->kind == K_BIN32 || c->kind == K_BIN64) && nrows > 0 && !c->vdata) {
        /* an all-empty string array may have no data buffer; offsets tell */
        static const uint8_t empty = 0;
        c->vdata = &empty;
    }
    if (c->dict) {
        const struct ArrowArray *d = a->dictionary;
        if (!d || d->release == NULL) return malformed(c, "missing dictionary");
        if (plan_array(c->dict, d, 0, d->length) < 0) return -1;
    }
    return 0;
}

static inline int is_valid(const icol *c, int64_t j) {
    return !c->valid || ((c->valid[j >> 3] >> (j & 7)) & 1);
}

static inline int64_t load_int(const uint8_t *p, int isz, int64_t j) {
    switch (isz) {
    case 1: return (int8_t)p[j];
    case 2: { int16_t v; memcpy(&v, p + 2 * j, 2); return v; }
    case 4: { int32_t v; memcpy(&v, p + 4 * j, 4); return v; }
    default: { int64_t v; memcpy(&v, p + 8 * j, 8); return v; }
    }
}

static inline uint64_t load_uint(const uint8_t *p, int isz, int64_t j) {
    switch (isz) {
    case 1: return p[j];
    case 2: { uint16_t v; memcpy(&v, p + 2 * j, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, p + 4 * j, 4); return v; }
    default: { uint64_t v; memcpy(&v, p + 8 * j, 8); return v; }
    }
}

static int set_err(enc_err *e, int kind, const char *fmt, ...) {
    va_list va;
    e->kind = kind;
    va_start(va, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, va);
    va_end(va);
    return -1;
}

#define NEED(n) do { if (ib_need(b, (n)) < 0) return set_err(e, E_NOMEM, "out of memory"); } while (0)

/* encode the value at physical index j of column c (no GIL needed) */
static int put_arrow(ibuf *b, const icol *c, int64_t j, enc_err *e) {
    if (c->kind == K_NULL || !is_valid(c, j)) {
        NEED(2);
        ib_put(b, "\\N", 2);
        return 0;
    }
    if (c->dict) {
        int64_t k;
        if (c->kind == K_INT) k = load_int(c->data, c->isz, j);
        else {
            uint64_t u = load_uint(c->data, c->isz, j);
            k = u > INT64_MAX ? -1 : (int64_t)u;
        }
        if (k < 0 || k >= c->dict->length)
            return set_err(e, E_VALUE, "dictionary index %lld out of range (dictionary of "
                           "%lld values)", (long long)k, (long long)c->dict->length);
        return put_arrow(b, c->dict, c->dict->off + k, e);
    }
    char *w;
    NEED(128);
    w = b->p + b->len;
    switch (c->kind) {
    case K_BOOL:
        *w++ = ((c->data[j >> 3] >> (j & 7)) & 1) ? '1' : '0';
        break;
    case K_INT:
        w += fmt_i64(w, load_int(c->data, c->isz, j));
        break;
    case K_UINT:
        w += fmt_u64(w, load_uint(c->data, c->isz, j));
        break;
    case K_F16: case K_F32: case K_F64: {
        double x;
        if (c->kind == K_F16) {
            uint16_t h;
            memcpy(&h, c->data + 2 * j, 2);
            x = half_to_float(h);
        } else if (c->kind == K_F32) {
            float f;
            memcpy(&f, c->data + 4 * j, 4);
            x = f;
        } else {
            memcpy(&x, c->data + 8 * j, 8);
        }
        if (!isfinite(x))
            return set_err(e, E_DATA, "%s can not be stored in MySQL (load NULL instead)",
                           isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf"));
        w += c->kind == K_F64 ? fmt_f64(w, x) : fmt_f32(w, (float)x);
        break;
    }
    case K_DEC: {
        uint64_t limbs[4];
        int nl;
        const uint8_t *p = c->data + (size_t)c->isz * (size_t)j;
        if (c->isz == 4) {
            int32_t v; memcpy(&v, p, 4); limbs[0] = (uint64_t)(int64_t)v; nl = 1;
        } else if (c->isz == 8) {
            int64_t v; memcpy(&v, p, 8); limbs[0] = (uint64_t)v; nl = 1;
        } else {
            nl = c->isz / 8;
            memcpy(limbs, p, (size_t)c->isz);
        }
        NEED(100 + (size_t)(c->scale < 0 ? -c->scale : c->scale));
        w = b->p + b->len;
        w += fmt_decimal(w, limbs, nl, c->scale);
        break;
    }
    case K_DATE32: case K_DATE64: {
        int64_t days;
        if (c->kind == K_DATE32) { int32_t v; memcpy(&v, c->data + 4 * j, 4); days = v; }
        else { int64_t v; memcpy(&v, c->data + 8 * j, 8); days = floordiv(v, 86400000); }
        w = put_ymd(w, days);
        if (!w) return set_err(e, E_DATA, "date outside the years 0-9999 of MySQL's DATE");
        break;
    }
    case K_TS: {
        int64_t v;
        memcpy(&v, c->data + 8 * j, 8);
        w = put_timestamp(w, v, c->unit, c->digits);
        if (!w)
            return set_err(e, E_DATA, "timestamp outside the years 0-9999 of MySQL's "
                           "DATETIME");
        break;
    }
    case K_DUR: case K_TIME: {
        int64_t v;
        if (c->kind == K_TIME && c->isz == 4) { int32_t t; memcpy(&t, c->data + 4 * j, 4); v = t; }
        else memcpy(&v, c->data + 8 * j, 8);
        w = put_hms(w, v, c->unit, c->digits);
        break;
    }
    case K_BIN32: case K_BIN64: {
        int64_t o0, o1;
        if (c->kind == K_BIN32) {
            int32_t a, z;
            memcpy(&a, c->data + 4 * j, 4);
            memcpy(&z, c->data + 4 * j + 4, 4);
            o0 = a; o1 = z;
        } else {
            memcpy(&o0, c->data + 8 * j, 8);
            memcpy(&o1, c->data + 8 * j + 8, 8);
        }
        if (o0 < 0 || o1 < o0) return set_err(e, E_VALUE, "malformed Arrow offsets");
        if (put_escaped_checked(b, c->vdata + o0, (size_t)(o1 - o0)) < 0)
            return set_err(e, E_NOMEM, "out of memory");
        return 0;
    }
    case K_VIEW: {
        const uint8_t *v = c->data + 16 * j;
        int32_t size;
        memcpy(&size, v, 4);
        if (size < 0) return set_err(e, E_VALUE, "malformed Arrow view (negative size)");
        const uint8_t *s;
        if (size <= 12) s = v + 4;
        else {
            int32_t bi, bo;
            memcpy(&bi, v + 8, 4);
            memcpy(&bo, v + 12, 4);
            if (bi < 0 || bi >= c->nvbufs || bo < 0 || !c->vbufs[bi])
                return set_err(e, E_VALUE, "malformed Arrow view (buffer %d)", (int)bi);
            s = c->vbufs[bi] + bo;
        }
        if (put_escaped_checked(b, s, (size_t)size) < 0)
            return set_err(e, E_NOMEM, "out of memory");
        return 0;
    }
    case K_FIXED:
        if (put_escaped_checked(b, c->data + (size_t)c->isz * (size_t)j, (size_t)c->isz) < 0)
            return set_err(e, E_NOMEM, "out of memory");
        return 0;
    default:
        return set_err(e, E_VALUE, "internal error: unknown column kind %d", c->kind);
    }
    b->len = (size_t)(w - b->p);
    return 0;
}

static int encode_arrow_rows(ibuf *b, icol *cols, int ncols, int64_t nrows, enc_err *e) {
    for (int64_t i = 0; i < nrows; i++) {
        for (int k = 0; k < ncols; k++) {
            if (k) {
                NEED(1);
                ib_putc(b, '\t');
            }
            if (put_arrow(b, &cols[k], cols[k].off + i, e) < 0) {
                e->row = i;
                e->col = &cols[k];
                return -1;
            }
        }
        NEED(1);
        ib_putc(b, '\n');
    }
    return 0;
}

static void raise_enc_err(mc_state *st, const enc_err *e) {
    if (e->kind == E_NOMEM) {
        PyErr_NoMemory();
        return;
    }
    PyObject *cls = e->kind == E_DATA ? st->DataError : PyExc_ValueError;
    const icol *c = e->col;
    const char *name = c && c->name ? c->name : "?";
    if (cls == PyExc_ValueError)
        PyErr_Format(cls, "load_table: column %s (#%d), row %lld of the batch: %s", name,
                     c ? c->index : -1, (long long)e->row, e->msg);
    else
        mc_raise(cls, 0, "load_table: column %s (#%d), row %lld of the batch: %s", name,
                 c ? c->index : -1, (long long)e->row, e->msg);
}

static PyObject *bytes_from_ibuf(ibuf *b) {
    PyObject *r = PyBytes_FromStringAndSize(b->p ? b->p : "", (Py_ssize_t)b->len);
    free(b->p);
    b->p = NULL;
    return r;
}

static struct ArrowSchema *get_schema(PyObject *cap) {
    if (!PyCapsule_CheckExact(cap) || !PyCapsule_IsValid(cap, "arrow_schema")) {
        PyErr_SetString(PyExc_TypeError,
                        "expected an 'arrow_schema' PyCapsule (from __arrow_c_schema__ or "
                        "__arrow_c_array__)");
        return NULL;
    }
    struct ArrowSchema *s = PyCapsule_GetPointer(cap, "arrow_schema");
    if (s && !s->release) {
        PyErr_SetString(PyExc_ValueError, "the ArrowSchema was already released or consumed");
        return NULL;
    }
    return s;
}

static int check_struct_schema(const struct ArrowSchema *s) {
    if (!s->format || strcmp(s->format, "+s") != 0) {
        PyErr_Format(PyExc_TypeError,
                     "load_table: expected a struct array (a record batch), got Arrow format "
                     "'%s'", s->format ? s->format : "");
        return -1;
    }
    if (s->n_children < 0 || s->n_children > 4096) {
        PyErr_SetString(PyExc_ValueError, "load_table: bad number of fields");
        return -1;
    }
    return 0;
}

static PyObject *infile_arrow_check(PyObject *module, PyObject *cap) {
    struct ArrowSchema *s = get_schema(cap);
    if (!s || check_struct_schema(s) < 0) return NULL;
    for (int64_t k = 0; k < s->n_children; k++) {
        icol c, d;
        memset(&c, 0, sizeof c);
        memset(&d, 0, sizeof d);
        if (!s->children[k]) return PyErr_Format(PyExc_ValueError, "null child schema");
        if (plan_field(&c, &d, s->children[k], (int)k) < 0) return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *infile_encode_arrow(PyObject *module, PyObject *args) {
    PyObject *scap, *acap;
    if (!PyArg_ParseTuple(args, "OO:infile_encode_arrow", &scap, &acap)) return NULL;
    mc_state *st = mc_state_from_module(module);
    struct ArrowSchema *s0 = get_schema(scap);
    if (!s0) return NULL;
    if (!PyCapsule_CheckExact(acap) || !PyCapsule_IsValid(acap, "arrow_array")) {
        PyErr_SetString(PyExc_TypeError, "expected an 'arrow_array' PyCapsule "
                        "(the second item of __arrow_c_array__())");
        return NULL;
    }
    struct ArrowArray *a0 = PyCapsule_GetPointer(acap, "arrow_array");
    if (!a0) return NULL;
    if (!a0->release) {
        PyErr_SetString(PyExc_ValueError, "the ArrowArray was already released or consumed");
        return NULL;
    }
    /* move both structs out of the capsules: from here on we release them */
    struct ArrowSchema s = *s0;
    struct ArrowArray a = *a0;
    s0->release = NULL;
    a0->release = NULL;

    PyObject *result = NULL;
    icol *cols = NULL;
    ibuf b = {NULL, 0, 0};
    enc_err e;
    memset(&e, 0, sizeof e);
    int ncols;

    if (check_struct_schema(&s) < 0) goto done;
    if (a.n_children != s.n_children || a.length < 0 || a.offset < 0) {
        PyErr_SetString(PyExc_ValueError, "load_table: Arrow array does not match its schema");
        goto done;
    }
    if (a.null_count != 0 && a.n_buffers > 0 && a.buffers[0] != NULL) {
        PyErr_SetString(PyExc_ValueError,
                        "load_table: the struct array has null rows (a record batch has none)");
        goto done;
    }
    ncols = (int)s.n_children;
    cols = PyMem_Calloc((size_t)(2 * ncols + 1), sizeof(icol));
    if (!cols) { PyErr_NoMemory(); goto done; }
    for (int k = 0; k < ncols; k++) {
        if (!s.children[k] || !a.children[k]) {
            PyErr_SetString(PyExc_ValueError, "load_table: null child in the Arrow array");
            goto done;
        }
        if (plan_field(&cols[k], &cols[ncols + k], s.children[k], k) < 0) goto done;
        if (plan_array(&cols[k], a.children[k], a.offset, a.length) < 0) goto done;
    }
    if (ncols == 0 && a.length > 0) {
        PyErr_SetString(PyExc_ValueError, "load_table: a record batch without columns");
        goto done;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    locale_t prev = (locale_t)0;
    if (mc_c_locale) prev = uselocale(mc_c_locale);
    size_t guess = (size_t)a.length * (size_t)(ncols * 8 + 1) + 1;
    if (guess > ((size_t)64 << 20)) guess = (size_t)64 << 20;   /* grows as needed */
    rc = ib_need(&b, guess) < 0
             ? set_err(&e, E_NOMEM, "out of memory")
             : encode_arrow_rows(&b, cols, ncols, a.length, &e);
    if (mc_c_locale) uselocale(prev);
    Py_END_ALLOW_THREADS
    if (rc < 0) raise_enc_err(st, &e);
    else result = bytes_from_ibuf(&b);
done:
    free(b.p);
    PyMem_Free(cols);
    if (a.release) a.release(&a);
    if (s.release) s.release(&s);
    return result;
}

/* ------------------------------------------------------------------------ */
/* Python rows                                                              */

static int ensure_datetime_api(void) {
    if (PyDateTimeAPI == NULL) {
        PyDateTime_IMPORT;
        if (PyDateTimeAPI == NULL) return -1;
    }
    return 0;
}

static PyObject *col_label(PyObject *names, Py_ssize_t k) {
    if (names && PyTuple_Check(names) && k < PyTuple_GET_SIZE(names))
        return PyUnicode_FromFormat("%R", PyTuple_GET_ITEM(names, k));
    return PyUnicode_FromFormat("#%zd", k);
}

/* raise cls("load_table: row R, column C: <detail>"); `detail` is a new reference (or
   NULL with an exception set) and is consumed */
static int row_error(PyObject *cls, PyObject *names, Py_ssize_t k, long long row,
                     PyObject *detail, int with_errno) {
    if (!detail) return -1;
    PyObject *lab = col_label(names, k);
    if (lab) {
        if (with_errno)
            mc_raise(cls, 0, "load_table: row %lld, column %U: %U", row, lab, detail);
        else
            PyErr_Format(cls, "load_table: row %lld, column %U: %U", row, lab, detail);
        Py_DECREF(lab);
    }
    Py_DECREF(detail);
    return -1;
}

static int put_pyvalue(ibuf *b, PyObject *v, mc_state *st, PyObject *names, Py_ssize_t k,
                       long long row) {
    char *w;
    if (v == Py_None) {
        if (ib_need(b, 2) < 0) goto nomem;
        ib_put(b, "\\N", 2);
        return 0;
    }
    PyTypeObject *tp = Py_TYPE(v);
    if (tp == &PyBool_Type) {
        if (ib_need(b, 1) < 0) goto nomem;
        ib_putc(b, v == Py_True ? '1' : '0');
        return 0;
    }
    if (PyUnicode_Check(v)) {
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(v, &n);
        if (!s) return -1;
        if (put_escaped_checked(b, (const unsigned char *)s, (size_t)n) < 0) goto nomem;
        return 0;
    }
    if (PyLong_Check(v)) {
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (x == -1 && PyErr_Occurred()) return -1;
        if (ib_need(b, 24) < 0) goto nomem;
        if (!overflow) {
            b->len += (size_t)fmt_i64(b->p + b->len, x);
            return 0;
        }
        /* beyond 64 bits (DECIMAL columns): the exact digits of int.__repr__ */
        PyObject *s = PyLong_Type.tp_repr(v);
        if (!s) return -1;
        Py_ssize_t n;
        const char *u = PyUnicode_AsUTF8AndSize(s, &n);
        int r = u ? 0 : -1;
        if (u) {
            if (ib_need(b, (size_t)n) < 0) { Py_DECREF(s); goto nomem; }
            ib_put(b, u, (size_t)n);
        }
        Py_DECREF(s);
        return r;
    }
    if (PyFloat_Check(v)) {
        double x = PyFloat_AS_DOUBLE(v);
        if (!isfinite(x))
            return row_error(st->DataError, names, k, row,
                             PyUnicode_FromFormat("%S can not be stored in MySQL (load None for NULL)", v), 1);
        char *r = PyOS_double_to_string(x, 'r', 0, 0, NULL);
        if (!r) return -1;
        size_t n = strlen(r);
        if (ib_need(b, n) < 0) { PyMem_Free(r); goto nomem; }
        ib_put(b, r, n);
        PyMem_Free(r);
        return 0;
    }
    if (PyBytes_Check(v)) {
        if (put_escaped_checked(b, (const unsigned char *)PyBytes_AS_STRING(v),
                                (size_t)PyBytes_GET_SIZE(v)) < 0)
            goto nomem;
        return 0;
    }
    if (PyByteArray_Check(v) || PyMemoryView_Check(v)) {
        Py_buffer view;
        if (PyObject_GetBuffer(v, &view, PyBUF_SIMPLE) < 0) {
            PyErr_Clear();
            return row_error(PyExc_TypeError, names, k, row,
                             PyUnicode_FromFormat("a non-contiguous %s can not be loaded", tp->tp_name), 0);
        }
        int r = put_escaped_checked(b, view.buf, (size_t)view.len);
        PyBuffer_Release(&view);
        if (r < 0) goto nomem;
        return 0;
    }
    if (ensure_datetime_api() < 0) return -1;
    if (PyDateTime_Check(v)) {   /* before PyDate_Check: datetime is a date */
        if (!PyDateTime_CheckExact(v) && mc_param_is_nat(v)) {   /* pandas.NaT: NULL */
            if (ib_need(b, 2) < 0) goto nomem;
            ib_put(b, "\\N", 2);
            return 0;
        }
        if (ib_need(b, 40) < 0) goto nomem;
        int y = PyDateTime_GET_YEAR(v);
        w = b->p + b->len;
        w = putnd(w, (uint64_t)y, 4);
        *w++ = '-';
        w = put2d(w, (unsigned)PyDateTime_GET_MONTH(v));
        *w++ = '-';
        w = put2d(w, (unsigned)PyDateTime_GET_DAY(v));
        *w++ = ' ';
        w = put2d(w, (unsigned)PyDateTime_DATE_GET_HOUR(v));
        *w++ = ':';
        w = put2d(w, (unsigned)PyDateTime_DATE_GET_MINUTE(v));
        *w++ = ':';
        w = put2d(w, (unsigned)PyDateTime_DATE_GET_SECOND(v));
        w = put_frac(w, (uint64_t)PyDateTime_DATE_GET_MICROSECOND(v), 6);
        b->len = (size_t)(w - b->p);
        return 0;
    }
    if (PyDate_Check(v)) {
        if (ib_need(b, 16) < 0) goto nomem;
        w = b->p + b->len;
        w = putnd(w, (uint64_t)PyDateTime_GET_YEAR(v), 4);
        *w++ = '-';
        w = put2d(w, (unsigned)PyDateTime_GET_MONTH(v));
        *w++ = '-';
        w = put2d(w, (unsigned)PyDateTime_GET_DAY(v));
        b->len = (size_t)(w - b->p);
        return 0;
    }
    if (PyTime_Check(v)) {
        if (ib_need(b, 24) < 0) goto nomem;
        w = b->p + b->len;
        w = put2d(w, (unsigned)PyDateTime_TIME_GET_HOUR(v));
        *w++ = ':';
        w = put2d(w, (unsigned)PyDateTime_TIME_GET_MINUTE(v));
        *w++ = ':';
        w = put2d(w, (unsigned)PyDateTime_TIME_GET_SECOND(v));
        w = put_frac(w, (uint64_t)PyDateTime_TIME_GET_MICROSECOND(v), 6);
        b->len = (size_t)(w - b->p);
        return 0;
    }
    if (PyDelta_Check(v)) {
        /* days may be negative; seconds in 0..86399 and microseconds in 0..999999 */
        int64_t total_s = (int64_t)PyDateTime_DELTA_GET_DAYS(v) * 86400 +
                          PyDateTime_DELTA_GET_SECONDS(v);
        int64_t us = PyDateTime_DELTA_GET_MICROSECONDS(v);
        int neg = total_s < 0;
        uint64_t mag_s, mag_us;
        if (!neg) { mag_s = (uint64_t)total_s; mag_us = (uint64_t)us; }
        else if (us) { mag_s = (uint64_t)(-(total_s + 1)); mag_us = (uint64_t)(1000000 - us); }
        else { mag_s = (uint64_t)(-total_s); mag_us = 0; }
        if (ib_need(b, 48) < 0) goto nomem;
        w = b->p + b->len;
        if (neg) *w++ = '-';
        uint64_t h = mag_s / 3600;
        if (h < 10) *w++ = '0';
        w += fmt_u64(w, h);
        *w++ = ':';
        w = put2d(w, (unsigned)((mag_s / 60) % 60));
        *w++ = ':';
        w = put2d(w, (unsigned)(mag_s % 60));
        w = put_frac(w, mag_us, 6);
        b->len = (size_t)(w - b->p);
        return 0;
    }
    int isdec = PyObject_IsInstance(v, st->Decimal);
    if (isdec < 0) return -1;
    if (isdec) {
        /* Decimal's own __format__ with 'f': exact digits, no exponent */
        PyObject *s = PyObject_CallMethod(v, "__format__", "s", "f");
        if (!s) return -1;
        Py_ssize_t n;
        const char *u = PyUnicode_AsUTF8AndSize(s, &n);
        if (!u) { Py_DECREF(s); return -1; }
        if (n == 0 || (u[0] != '-' && (u[0] < '0' || u[0] > '9')) ||
            (u[0] == '-' && (n < 2 || u[1] < '0' || u[1] > '9'))) {
            Py_DECREF(s);
            return row_error(st->DataError, names, k, row,
                             PyUnicode_FromFormat("Decimal %R can not be stored in MySQL", v), 1);
        }
        if (ib_need(b, (size_t)n) < 0) { Py_DECREF(s); goto nomem; }
        ib_put(b, u, (size_t)n);
        Py_DECREF(s);
        return 0;
    }
    {
        /* NumPy scalars, uuid.UUID, time.struct_time, sets, objects with __index__: the
           value mysqlc.converters._adapt_param gives, as every write path (param_adapt.c) */
        PyObject *a = mc_param_adapt(st, v);
        if (!a) {
            if (PyErr_ExceptionMatches(st->ProgrammingError)) {
                /* out-of-range NumPy temporal values: DataError naming the row/column */
                PyObject *et, *ev, *tb;
                PyErr_Fetch(&et, &ev, &tb);
                PyErr_NormalizeException(&et, &ev, &tb);
                PyObject *eargs = ev ? PyObject_GetAttrString(ev, "args") : NULL;
                PyObject *msg = NULL;
                if (eargs && PyTuple_Check(eargs) && PyTuple_GET_SIZE(eargs) > 0)
                    msg = PyObject_Str(PyTuple_GET_ITEM(eargs, PyTuple_GET_SIZE(eargs) - 1));
                else
                    PyErr_Clear();
                Py_XDECREF(eargs); Py_XDECREF(et); Py_XDECREF(ev); Py_XDECREF(tb);
                if (!msg) msg = PyUnicode_FromString("value out of range");
                return row_error(st->DataError, names, k, row, msg, 1);
            }
            return -1;
        }
        if (a != Py_NotImplemented && Py_TYPE(a) != tp) {
            int r = put_pyvalue(b, a, st, names, k, row);
            Py_DECREF(a);
            return r;
        }
        Py_DECREF(a);
    }
    return row_error(PyExc_TypeError, names, k, row,
                     PyUnicode_FromFormat(
                         "unsupported type %.200s (load_table takes None, bool, int, "
                         "float, decimal.Decimal, str, bytes, bytearray, memoryview, "
                         "datetime.datetime, date, time and timedelta)", tp->tp_name), 0);
nomem:
    PyErr_NoMemory();
    return -1;
}

static PyObject *infile_encode_rows(PyObject *module, PyObject *args, PyObject *kwargs) {
    static char *kwlist[] = {"rows", "ncols", "names", "first_row", NULL};
    PyObject *rows, *names = Py_None;
    Py_ssize_t ncols;
    long long first_row = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "On|OL:infile_encode_rows", kwlist, &rows,
                                     &ncols, &names, &first_row))
        return NULL;
    mc_state *st = mc_state_from_module(module);
    if (ncols <= 0) {
        PyErr_SetString(PyExc_ValueError, "ncols must be positive");
        return NULL;
    }
    if (names == Py_None) names = NULL;
    PyObject *seq = PySequence_Fast(rows, "rows must be a sequence of rows");
    if (!seq) return NULL;
    ibuf b = {NULL, 0, 0};
    Py_ssize_t nrows = PySequence_Fast_GET_SIZE(seq);
    size_t guess = (size_t)nrows * (size_t)ncols * 8 + 1;
    if (guess > ((size_t)64 << 20)) guess = (size_t)64 << 20;   /* grows as needed */
    if (ib_need(&b, guess) < 0) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < nrows; i++) {
        PyObject *row = PySequence_Fast_GET_ITEM(seq, i);
        long long rowno = first_row + i;
        if (!PyTuple_Check(row) && !PyList_Check(row)) {
            if (PyUnicode_Check(row) || PyBytes_Check(row) || PyByteArray_Check(row) ||
                !PySequence_Check(row)) {
                mc_raise(st->ProgrammingError, 0,
                         "load_table: row %lld is a %.200s, not a tuple or list of values",
                         rowno, Py_TYPE(row)->tp_name);
                goto error;
            }
        }
        PyObject *fast = PySequence_Fast(row, "row must be a sequence");
        if (!fast) goto error;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
        if (n != ncols) {
            Py_DECREF(fast);
            mc_raise(st->ProgrammingError, 0,
                     "load_table: row %lld has %zd values, but %zd columns are loaded", rowno,
                     n, ncols);
            goto error;
        }
        PyObject **items = PySequence_Fast_ITEMS(fast);
        for (Py_ssize_t k = 0; k < n; k++) {
            if (k) {
                if (ib_need(&b, 1) < 0) { Py_DECREF(fast); PyErr_NoMemory(); goto error; }
                ib_putc(&b, '\t');
            }
            if (put_pyvalue(&b, items[k], st, names, k, rowno) < 0) {
                Py_DECREF(fast);
                goto error;
            }
        }
        Py_DECREF(fast);
        if (ib_need(&b, 1) < 0) { PyErr_NoMemory(); goto error; }
        ib_putc(&b, '\n');
    }
    Py_DECREF(seq);
    return bytes_from_ibuf(&b);
error:
    Py_DECREF(seq);
    free(b.p);
    return NULL;
}

PyMethodDef mc_infile_methods[] = {
    {"infile_encode_rows", (PyCFunction)(void (*)(void))infile_encode_rows,
     METH_VARARGS | METH_KEYWORDS,
     "infile_encode_rows(rows, ncols, names=None, first_row=0)\n--\n\n"
     "Encode Python rows as LOAD DATA LOCAL INFILE text (TAB between fields, LF after\n"
     "each row, backslash escapes, \\N for None).\n\n"
     "Parameters\n----------\n"
     "rows : sequence of tuple or list\n    Each row has exactly `ncols` values.\n"
     "ncols : int\n    Number of columns loaded.\n"
     "names : tuple of str, optional\n    Column names, for error messages.\n"
     "first_row : int\n    Number of the first row, for error messages.\n\n"
     "Values: None and pandas.NaT -> \\N; bool -> 1/0; int -> digits;\n"
     "float -> shortest repr (nan/inf raise DataError); decimal.Decimal -> exact digits\n"
     "(NaN/Infinity raise DataError); str -> UTF-8; bytes, bytearray, memoryview -> raw\n"
     "bytes; datetime -> YYYY-MM-DD HH:MM:SS[.ffffff] (tzinfo ignored); date ->\n"
     "YYYY-MM-DD; time -> HH:MM:SS[.ffffff]; timedelta -> [-]H:MM:SS[.ffffff] (hours\n"
     "not wrapped); NumPy scalars, uuid.UUID, time.struct_time, sets of str and\n"
     "__index__ objects as mysqlc.converters._adapt_param converts them.\n\n"
     "Returns\n-------\nbytes\n\n"
     "Raises\n------\nProgrammingError\n    A row that is not a sequence of `ncols` values.\n"
     "TypeError\n    A value of another type (naming the row, column and type).\n"
     "DataError\n    nan/inf floats, NaN/Infinity decimals.\n"},
    {"infile_encode_arrow", (PyCFunction)infile_encode_arrow, METH_VARARGS,
     "infile_encode_arrow(schema_capsule, array_capsule)\n--\n\n"
     "Encode a record batch given through the Arrow C Data Interface (the PyCapsule pair\n"
     "of ``batch.__arrow_c_array__()``) as LOAD DATA LOCAL INFILE text.  The arrays are\n"
     "consumed (moved out of the capsules and released); the GIL is released while the\n"
     "rows are encoded.\n\n"
     "Returns\n-------\nbytes\n\n"
     "Raises\n------\nTypeError\n    Not a struct array, or a column of an unsupported "
     "format.\n"
     "DataError\n    nan/inf, dates and timestamps outside the years 0-9999.\n"
     "ValueError\n    Malformed arrays (bad offsets, dictionary indices out of range).\n"},
    {"infile_arrow_check", (PyCFunction)infile_arrow_check, METH_O,
     "infile_arrow_check(schema_capsule)\n--\n\n"
     "Raise TypeError when `schema_capsule` (an 'arrow_schema' PyCapsule of a struct) has\n"
     "a field load_table cannot encode; the schema is only borrowed.\n"},
    {NULL, NULL, 0, NULL},
};
