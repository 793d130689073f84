/* Text-protocol value decoders (ProtocolText::ResultsetRow values).
 *
 * Each decoder parses the wire text in one pass straight from the receive buffer and
 * materialises the final Python object without an intermediate str (DESIGN.md rule 1).
 * Shapes follow mysqlclient: zero or invalid dates -> None, TIME -> timedelta,
 * DECIMAL -> decimal.Decimal, BIT/BLOB/binary -> bytes, JSON -> str.
 */
#include "mysqlc.h"
#include <datetime.h>

locale_t mc_c_locale = (locale_t)0;

int mc_decode_init(void) {
    PyDateTime_IMPORT;
    if (!PyDateTimeAPI) return -1;
    if (mc_c_locale == (locale_t)0) {
        mc_c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
        if (mc_c_locale == (locale_t)0) {
            PyErr_SetFromErrno(PyExc_OSError);
            return -1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- plan */

int mc_is_string_type(uint8_t t) {
    switch (t) {
    case MC_TYPE_VARCHAR: case MC_TYPE_VAR_STRING: case MC_TYPE_STRING:
    case MC_TYPE_TINY_BLOB: case MC_TYPE_MEDIUM_BLOB: case MC_TYPE_LONG_BLOB:
    case MC_TYPE_BLOB: case MC_TYPE_ENUM: case MC_TYPE_SET: case MC_TYPE_JSON:
        return 1;
    default:
        return 0;
    }
}

static mc_dec_kind builtin_kind(mc_state *st, mc_column_plan *col) {
    uint8_t t = col->type;
    int unsig = (col->flags & MC_FLAG_UNSIGNED) != 0;
    switch (t) {
    case MC_TYPE_TINY: case MC_TYPE_SHORT: case MC_TYPE_INT24: case MC_TYPE_LONG:
    case MC_TYPE_YEAR:
        return MC_DEC_INT; /* all fit int64 either way */
    case MC_TYPE_LONGLONG:
        return unsig ? MC_DEC_UINT : MC_DEC_INT;
    case MC_TYPE_FLOAT: case MC_TYPE_DOUBLE:
        return MC_DEC_FLOAT;
    case MC_TYPE_DECIMAL: case MC_TYPE_NEWDECIMAL:
        return MC_DEC_DECIMAL;
    case MC_TYPE_DATE: case MC_TYPE_NEWDATE:
        return MC_DEC_DATE;
    case MC_TYPE_DATETIME: case MC_TYPE_TIMESTAMP: case MC_TYPE_DATETIME2: case MC_TYPE_TIMESTAMP2:
        return MC_DEC_DATETIME;
    case MC_TYPE_TIME: case MC_TYPE_TIME2:
        return MC_DEC_TIME;
    case MC_TYPE_BIT: case MC_TYPE_GEOMETRY: case MC_TYPE_NULL:
        return MC_DEC_BYTES;
    default:
        break;
    }
    if (!mc_is_string_type(t))
        return MC_DEC_BYTES;
    if (t == MC_TYPE_JSON)   /* MySQL reports JSON with the binary charset; it is utf8mb4 text */
        return MC_DEC_STR_UTF8;
    if (col->charset == MC_CHARSET_BINARY)
        return MC_DEC_BYTES;
    PyObject *key = PyLong_FromLong(col->charset);
    if (!key) return (mc_dec_kind)-1;
    PyObject *codec = PyDict_GetItemWithError(st->collation_codecs, key);
    Py_DECREF(key);
    if (!codec) {
        if (PyErr_Occurred()) return (mc_dec_kind)-1;
        return MC_DEC_BYTES;   /* unknown collation: raw bytes (documented) */
    }
    if (codec == Py_None || !PyUnicode_Check(codec))
        return MC_DEC_BYTES;
    const char *name = PyUnicode_AsUTF8(codec);
    if (!name) return (mc_dec_kind)-1;
    if (!strcmp(name, "utf-8") || !strcmp(name, "utf8")) return MC_DEC_STR_UTF8;
    if (!strcmp(name, "latin1")) return MC_DEC_STR_LATIN1;
    if (!strcmp(name, "ascii")) return MC_DEC_STR_ASCII;
    Py_INCREF(codec);
    col->codec_obj = codec;
    col->codec = name;
    return MC_DEC_STR_CODEC;
}

int mc_plan_column(mc_state *st, mc_column_plan *col, uint8_t type, uint16_t flags,
                   uint16_t charset, PyObject *converters) {
    memset(col, 0, sizeof(*col));
    col->type = type;
    col->flags = flags;
    col->charset = charset;
    mc_dec_kind k = builtin_kind(st, col);
    if ((int)k < 0) return -1;
    col->kind = k;
    if (converters && converters != Py_None) {
        PyObject *key = PyLong_FromLong(type);
        if (!key) return -1;
        PyObject *conv = PyDict_GetItemWithError(converters, key);
        Py_DECREF(key);
        if (!conv && PyErr_Occurred()) return -1;
        if (conv && conv != Py_None) {
            Py_INCREF(conv);
            col->converter = conv;
            /* the converter's argument, as mysqlclient's _mysql_field_to_python: the
               ASCII text (str) of DECIMAL, dates and times; the wire bytes of numbers
               (integers, YEAR, FLOAT, DOUBLE), except for the converter str itself,
               which gets the text; bytes where the built-in decoder gives bytes; the
               column's text for strings (mysqlclient with use_unicode replaces a
               string column's converter by its own str/bytes rule instead) */
            if (k == MC_DEC_BYTES || k == MC_DEC_STR_UTF8 || k == MC_DEC_STR_LATIN1 ||
                k == MC_DEC_STR_ASCII || k == MC_DEC_STR_CODEC)
                col->arg_kind = k;
            else if ((k == MC_DEC_INT || k == MC_DEC_UINT || k == MC_DEC_FLOAT) &&
                     conv != (PyObject *)&PyUnicode_Type)
                col->arg_kind = MC_DEC_BYTES;
            else
                col->arg_kind = MC_DEC_STR_ASCII;
            col->kind = MC_DEC_CONVERTER;
        }
    }
    return 0;
}

void mc_plan_clear(mc_column_plan *col) {
    Py_CLEAR(col->codec_obj);
    Py_CLEAR(col->converter);
    col->codec = NULL;
}

/* ---------------------------------------------------------------- numbers */

static PyObject *int_fallback(const unsigned char *s, size_t n) {
    /* Odd shapes (leading '+', spaces, beyond 64 bits): exact via PyLong_FromString. */
    char stackbuf[80];
    char *buf = stackbuf;
    for (size_t i = 0; i < n; i++) {
        /* PyLong_FromString would stop at a NUL (taking "1\0x" for 1); bytes past ASCII
           are no digits either */
        if (s[i] == 0 || s[i] >= 0x80) {
            PyObject *b = PyBytes_FromStringAndSize((const char *)s, (Py_ssize_t)n);
            if (b) {
                PyErr_Format(PyExc_ValueError, "invalid literal for int() with base 10: %R", b);
                Py_DECREF(b);
            }
            return NULL;
        }
    }
    if (n + 1 > sizeof(stackbuf)) {
        buf = PyMem_Malloc(n + 1);
        if (!buf) return PyErr_NoMemory();
    }
    memcpy(buf, s, n);
    buf[n] = 0;
    PyObject *r = PyLong_FromString(buf, NULL, 10);
    if (buf != stackbuf) PyMem_Free(buf);
    return r;
}

static inline PyObject *decode_int(const unsigned char *s, size_t n, int unsig) {
    const unsigned char *p = s, *e = s + n;
    int neg = 0;
    if (p < e && *p == '-') { neg = 1; p++; }
    if (p == e || (size_t)(e - p) > 19) return int_fallback(s, n);
    uint64_t v = 0;
    for (; p < e; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (d > 9) return int_fallback(s, n);
        v = v * 10 + d;   /* <= 19 digits: cannot overflow uint64 */
    }
    if (neg) {
        if (v > (uint64_t)INT64_MAX + 1) return int_fallback(s, n);
        return PyLong_FromLongLong(v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v);
    }
    if (v > (uint64_t)INT64_MAX)
        return PyLong_FromUnsignedLongLong(v);
    (void)unsig;
    return PyLong_FromLongLong((int64_t)v);
}

static PyObject *decode_uint(const unsigned char *s, size_t n) {
    if (n == 20) {   /* 20-digit values up to 18446744073709551615 */
        uint64_t v = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned d = (unsigned)(s[i] - '0');
            if (d > 9) return int_fallback(s, n);
            if (v > (UINT64_MAX - d) / 10) return int_fallback(s, n);
            v = v * 10 + d;
        }
        return PyLong_FromUnsignedLongLong(v);
    }
    return decode_int(s, n, 1);
}

static PyObject *float_slow(const unsigned char *s, size_t n) {
    PyObject *str = PyUnicode_DecodeASCII((const char *)s, (Py_ssize_t)n, "strict");
    if (!str) return NULL;
    PyObject *r = PyFloat_FromString(str);   /* raises ValueError naming the text */
    Py_DECREF(str);
    return r;
}

/* Digits, sign, point and exponent only: what MySQL prints for FLOAT/DOUBLE.  Anything
   else ("inf", hex, spaces) takes float_slow, so the result is always float(text)'s. */
static int plain_float_text(const unsigned char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = s[i];
        if (!((ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '+' || ch == 'e' ||
              ch == 'E'))
            return 0;
    }
    return n > 0;
}

static PyObject *decode_float(const unsigned char *s, size_t n) {
    char stackbuf[64];
    if (n + 1 > sizeof(stackbuf) || !plain_float_text(s, n))
        return float_slow(s, n);
    memcpy(stackbuf, s, n);
    stackbuf[n] = 0;
    char *end;
    /* glibc's strtod is correctly rounded, as CPython's own conversion: the same double,
       without PyOS_string_to_double's FPU control-word switching on every call */
    double d = strtod_l(stackbuf, &end, mc_c_locale);
    if (end != stackbuf + n)
        return float_slow(s, n);
    return PyFloat_FromDouble(d);
}

static PyObject *decode_decimal(mc_state *st, const unsigned char *s, size_t n) {
    PyObject *str = PyUnicode_DecodeASCII((const char *)s, (Py_ssize_t)n, "strict");
    if (!str) return NULL;
    PyObject *r = PyObject_CallOneArg(st->Decimal, str);
    Py_DECREF(str);
    /* decimal.Decimal refuses bad text ('', '-', '1.2.3') with InvalidOperation, an
       ArithmeticError: make it the ValueError that mc_value_error turns into 2027 (and
       closes the stream) like every other malformed value, instead of letting a
       non-DB-API exception escape with the result half read. */
    if (!r && PyErr_ExceptionMatches(PyExc_ArithmeticError)) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        Py_XDECREF(et); Py_XDECREF(ev); Py_XDECREF(tb);
        PyObject *text = PyBytes_FromStringAndSize((const char *)s,
                                                   (Py_ssize_t)(n < 40 ? n : 40));
        if (text) {
            PyErr_Format(PyExc_ValueError, "invalid DECIMAL text %R", text);
            Py_DECREF(text);
        }
    }
    return r;
}

/* ---------------------------------------------------------------- temporal */

static PyObject *decode_date(const unsigned char *s, size_t n) {
    mc_datetime t;
    if (mc_parse_text_date(s, n, &t) < 0)
        Py_RETURN_NONE;   /* zero or invalid date: None, as mysqlclient */
    return PyDate_FromDate(t.year, t.month, t.day);
}

static PyObject *decode_datetime(const unsigned char *s, size_t n) {
    mc_datetime t;
    if (mc_parse_text_datetime(s, n, &t) < 0)
        Py_RETURN_NONE;
    return PyDateTime_FromDateAndTime(t.year, t.month, t.day, t.hour, t.minute, t.second,
                                      t.usecond);
}

static PyObject *decode_time(const unsigned char *s, size_t n) {
    int neg, us;
    long long total;
    if (mc_parse_text_time(s, n, &neg, &total, &us) < 0)
        Py_RETURN_NONE;
    if (neg)
        /* days and seconds apart: (int)-total would wrap past 596523 hours */
        return PyDelta_FromDSU(-(int)(total / 86400), -(int)(total % 86400), -us);
    return PyDelta_FromDSU((int)(total / 86400), (int)(total % 86400), us);
}

/* ---------------------------------------------------------------- strings */

/* MySQL's latin1 is Windows-1252 with the five unassigned bytes mapped to C1 controls. */
const Py_UCS2 mc_cp1252_high[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
    0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178,
};

static PyObject *decode_latin1(const unsigned char *s, size_t n) {
    size_t i;
    /* Only bytes whose cp1252 character is above U+00FF need the 2-byte kind; the five
       that map to C1 controls keep their value.  A str must be built with the smallest
       kind that holds its characters (PEP 393), or it compares unequal to an equal str. */
    for (i = 0; i < n; i++)
        if (s[i] >= 0x80 && s[i] < 0xA0 && mc_cp1252_high[s[i] - 0x80] > 0xFF) break;
    if (i == n)
        return PyUnicode_DecodeLatin1((const char *)s, (Py_ssize_t)n, NULL);
    PyObject *u = PyUnicode_New((Py_ssize_t)n, 0xFFFF);
    if (!u) return NULL;
    Py_UCS2 *out = PyUnicode_2BYTE_DATA(u);
    for (i = 0; i < n; i++) {
        unsigned char b = s[i];
        out[i] = (b >= 0x80 && b < 0xA0) ? mc_cp1252_high[b - 0x80] : b;
    }
    return u;
}

static PyObject *decode_str(const mc_column_plan *col, const unsigned char *s, size_t n) {
    switch (col->kind) {
    case MC_DEC_STR_UTF8:
        return PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)n, NULL);
    case MC_DEC_STR_LATIN1:
        return decode_latin1(s, n);
    case MC_DEC_STR_ASCII:
        return PyUnicode_DecodeASCII((const char *)s, (Py_ssize_t)n, NULL);
    case MC_DEC_STR_CODEC:
        return PyUnicode_Decode((const char *)s, (Py_ssize_t)n, col->codec, NULL);
    default:
        return PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)n, NULL);
    }
}

/* ---------------------------------------------------------------- dispatch */

PyObject *mc_decode_text_value(mc_state *st, const mc_column_plan *col,
                               const unsigned char *s, size_t n) {
    switch (col->kind) {
    case MC_DEC_INT:
        return decode_int(s, n, 0);
    case MC_DEC_UINT:
        return decode_uint(s, n);
    case MC_DEC_STR_UTF8:
        return PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)n, NULL);
    case MC_DEC_BYTES:
        return PyBytes_FromStringAndSize((const char *)s, (Py_ssize_t)n);
    case MC_DEC_STR_LATIN1: case MC_DEC_STR_ASCII: case MC_DEC_STR_CODEC:
        return decode_str(col, s, n);
    case MC_DEC_FLOAT:
        return decode_float(s, n);
    case MC_DEC_DECIMAL:
        return decode_decimal(st, s, n);
    case MC_DEC_DATE:
        return decode_date(s, n);
    case MC_DEC_DATETIME:
        return decode_datetime(s, n);
    case MC_DEC_TIME:
        return decode_time(s, n);
    case MC_DEC_CONVERTER: {
        PyObject *arg;
        if (col->arg_kind == MC_DEC_BYTES) {
            arg = PyBytes_FromStringAndSize((const char *)s, (Py_ssize_t)n);
        } else {
            mc_column_plan probe = *col;
            probe.kind = col->arg_kind;
            arg = decode_str(&probe, s, n);
        }
        if (!arg) return NULL;
        PyObject *r = PyObject_CallOneArg(col->converter, arg);
        Py_DECREF(arg);
        return r;
    }
    }
    PyErr_SetString(PyExc_SystemError, "mysqlc: bad column plan");
    return NULL;
}
