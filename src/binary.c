/* Binary-protocol rows (ProtocolBinary::ResultsetRow) and COM_STMT_EXECUTE parameters.
 *
 * Row: 0x00, a NULL bitmap of (columns + 7 + 2) / 8 bytes (offset 2), then each non-NULL
 * value in its binary form: fixed-width little-endian integers and IEEE floats, packed
 * DATE/DATETIME/TIMESTAMP (length 0, 4, 7 or 11) and TIME (length 0, 8 or 12), and
 * lenenc strings for DECIMAL, strings, BLOBs, BIT, JSON, ENUM, SET and GEOMETRY.
 * Values equal what the text protocol gives for the same data (mysqlclient's shapes).
 */
#include "mysqlc.h"
#include <datetime.h>
#include <math.h>

static int binary_ready = 0;

static int ensure_datetime(void) {
    if (!binary_ready) {
        PyDateTime_IMPORT;
        if (!PyDateTimeAPI) return -1;
        binary_ready = 1;
    }
    return 0;
}

static inline uint64_t le(const unsigned char *p, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--) v = (v << 8) | p[i];
    return v;
}


/* Decode one non-NULL binary value at *pp (bounded by e); advances *pp.  Returns a new
   reference, or NULL with an exception; *short_packet is set when the value runs past e
   (no exception set then: the caller reports a malformed packet). */
PyObject *mc_decode_binary_value(mc_state *st, const mc_column_plan *col,
                                 const unsigned char **pp, const unsigned char *e,
                                 int *short_packet) {
    const unsigned char *p = *pp;
    int unsig = (col->flags & MC_FLAG_UNSIGNED) != 0;
    size_t avail = (size_t)(e - p);
    *short_packet = 0;
    switch (col->type) {
    case MC_TYPE_TINY:
        if (avail < 1) goto short_value;
        *pp = p + 1;
        return PyLong_FromLong(unsig ? (long)p[0] : (long)(int8_t)p[0]);
    case MC_TYPE_SHORT: case MC_TYPE_YEAR:
        if (avail < 2) goto short_value;
        *pp = p + 2;
        return PyLong_FromLong(unsig || col->type == MC_TYPE_YEAR ? (long)le(p, 2)
                                                                  : (long)(int16_t)le(p, 2));
    case MC_TYPE_INT24: case MC_TYPE_LONG:
        if (avail < 4) goto short_value;
        *pp = p + 4;
        return unsig ? PyLong_FromUnsignedLong((unsigned long)le(p, 4))
                     : PyLong_FromLong((long)(int32_t)le(p, 4));
    case MC_TYPE_LONGLONG:
        if (avail < 8) goto short_value;
        *pp = p + 8;
        return unsig ? PyLong_FromUnsignedLongLong(le(p, 8))
                     : PyLong_FromLongLong((long long)(int64_t)le(p, 8));
    case MC_TYPE_FLOAT: {
        if (avail < 4) goto short_value;
        uint32_t bits = (uint32_t)le(p, 4);
        float f;
        memcpy(&f, &bits, 4);
        *pp = p + 4;
        /* the text protocol prints FLOAT with its fixed decimals, else with ~6
           significant digits; match it so both protocols give equal values */
        char buf[64];
        if (col->decimals < 31)
            snprintf(buf, sizeof(buf), "%.*f", (int)col->decimals, (double)f);
        else
            snprintf(buf, sizeof(buf), "%.6g", (double)f);
        double d = PyOS_string_to_double(buf, NULL, NULL);
        if (d == -1.0 && PyErr_Occurred()) return NULL;
        return PyFloat_FromDouble(d);
    }
    case MC_TYPE_DOUBLE: {
        if (avail < 8) goto short_value;
        uint64_t bits = le(p, 8);
        double d;
        memcpy(&d, &bits, 8);
        *pp = p + 8;
        if (col->decimals < 31 && isfinite(d) && fabs(d) < 1e300) {
            /* fixed decimals (DOUBLE(M,D), PI(), arithmetic on them): the text protocol
               rounds to them, and so do we */
            char buf[400];
            snprintf(buf, sizeof(buf), "%.*f", (int)col->decimals, d);
            double r = PyOS_string_to_double(buf, NULL, NULL);
            if (r == -1.0 && PyErr_Occurred()) return NULL;
            return PyFloat_FromDouble(r);
        }
        return PyFloat_FromDouble(d);
    }
    case MC_TYPE_DATE: case MC_TYPE_NEWDATE:
    case MC_TYPE_DATETIME: case MC_TYPE_TIMESTAMP:
    case MC_TYPE_DATETIME2: case MC_TYPE_TIMESTAMP2: {
        if (avail < 1) goto short_value;
        unsigned len = p[0];
        if (len != 0 && len != 4 && len != 7 && len != 11) {
            PyErr_Format(PyExc_ValueError, "bad binary date length %u", len);
            return NULL;
        }
        if (avail < 1 + (size_t)len) goto short_value;
        const unsigned char *q = p + 1;
        *pp = p + 1 + len;
        int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
        uint32_t us = 0;   /* unsigned on the wire: range-checked before any int use */
        if (len >= 4) { y = (int)le(q, 2); mo = q[2]; d = q[3]; }
        if (len >= 7) { h = q[4]; mi = q[5]; s = q[6]; }
        if (len == 11) us = (uint32_t)le(q + 7, 4);
        if (ensure_datetime() < 0) return NULL;
        if (!mc_valid_date(y, mo, d) || h > 23 || mi > 59 || s > 59 || us > 999999)
            Py_RETURN_NONE;   /* zero or invalid date: None, as mysqlclient */
        if (col->type == MC_TYPE_DATE || col->type == MC_TYPE_NEWDATE)
            return PyDate_FromDate(y, mo, d);
        return PyDateTime_FromDateAndTime(y, mo, d, h, mi, s, (int)us);
    }
    case MC_TYPE_TIME: case MC_TYPE_TIME2: {
        if (avail < 1) goto short_value;
        unsigned len = p[0];
        if (len != 0 && len != 8 && len != 12) {
            PyErr_Format(PyExc_ValueError, "bad binary time length %u", len);
            return NULL;
        }
        if (avail < 1 + (size_t)len) goto short_value;
        const unsigned char *q = p + 1;
        *pp = p + 1 + len;
        if (ensure_datetime() < 0) return NULL;
        if (len == 0) return PyDelta_FromDSU(0, 0, 0);
        int neg = q[0] != 0;
        long days = (long)le(q + 1, 4);
        int h = q[5], mi = q[6], s = q[7];
        uint32_t us = len == 12 ? (uint32_t)le(q + 8, 4) : 0;   /* unsigned on the wire */
        if (days > 999999 || h > 23 || mi > 59 || s > 59 || us > 999999) {
            PyErr_SetString(PyExc_ValueError, "binary TIME value out of range");
            return NULL;
        }
        long secs = h * 3600L + mi * 60L + s;
        if (neg) return PyDelta_FromDSU((int)-days, (int)-secs, -(int)us);
        return PyDelta_FromDSU((int)days, (int)secs, (int)us);
    }
    case MC_TYPE_NULL:
        Py_RETURN_NONE;
    default: {
        /* lenenc string: DECIMAL text, strings, blobs, BIT, JSON, ENUM, SET, GEOMETRY */
        mc_reader r;
        const unsigned char *s;
        size_t n;
        mc_reader_init(&r, p, avail);
        if (mc_reader_lenenc_str(&r, &s, &n) < 0) goto short_value;
        *pp = r.p;
        mc_column_plan text = *col;
        if (text.kind == MC_DEC_CONVERTER) text.kind = text.arg_kind;
        return mc_decode_text_value(st, &text, s, n);
    }
    }
short_value:
    *short_packet = 1;
    return NULL;
}

/* ================================================================ parameters */

static PyObject *decimal_type(mc_state *st) { return st->Decimal; }

/* Encode one non-NULL value v (parameter number i, for messages) at the end of w in the
   binary protocol's format; *tp / *tflagp receive its type and unsigned flag. 0 or -1. */
static int encode_value(mc_state *st, mc_writer *w, PyObject *v, Py_ssize_t i,
                        const char *encoding, PyObject *dec, unsigned char *tp,
                        unsigned char *tflagp) {
    unsigned char t = MC_TYPE_NULL, tflag = 0;
    if (PyBool_Check(v)) {
        t = MC_TYPE_TINY;
        if (mc_writer_u8(w, v == Py_True) < 0) return -1;
    } else if (PyLong_Check(v)) {
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (x == -1 && PyErr_Occurred()) return -1;
        unsigned char b[8];
        uint64_t u;
        if (overflow == 0) {
            u = (uint64_t)x;
            t = MC_TYPE_LONGLONG;
        } else if (overflow > 0) {
            u = PyLong_AsUnsignedLongLong(v);
            if (u == (uint64_t)-1 && PyErr_Occurred()) {
                PyErr_Clear();
                goto as_text;   /* beyond uint64: exact decimal text */
            }
            t = MC_TYPE_LONGLONG;
            tflag = 0x80;
        } else {
            goto as_text;
        }
        for (int k = 0; k < 8; k++) b[k] = (unsigned char)(u >> (8 * k));
        if (mc_writer_put(w, b, 8) < 0) return -1;
    } else if (PyFloat_Check(v)) {
        double d = PyFloat_AS_DOUBLE(v);
        if (!isfinite(d)) {
            mc_raise(st->ProgrammingError, 0, "parameter %zd: %R can not be used with MySQL", i + 1, v);
            return -1;
        }
        uint64_t bits;
        memcpy(&bits, &d, 8);
        unsigned char b[8];
        for (int k = 0; k < 8; k++) b[k] = (unsigned char)(bits >> (8 * k));
        t = MC_TYPE_DOUBLE;
        if (mc_writer_put(w, b, 8) < 0) return -1;
    } else if (PyUnicode_Check(v)) {
        t = MC_TYPE_VAR_STRING;
        if (!encoding || !strcmp(encoding, "utf-8") || !strcmp(encoding, "utf8")) {
            Py_ssize_t l;
            const char *s = PyUnicode_AsUTF8AndSize(v, &l);
            if (!s) return -1;
            if (mc_writer_lenenc_str(w, s, (size_t)l) < 0) return -1;
        } else {
            PyObject *b = PyUnicode_AsEncodedString(v, encoding, "strict");
            if (!b) return -1;
            int r = mc_writer_lenenc_str(w, PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
            Py_DECREF(b);
            if (r < 0) return -1;
        }
    } else if (PyBytes_Check(v) || PyByteArray_Check(v) || PyMemoryView_Check(v)) {
        Py_buffer view;
        if (PyObject_GetBuffer(v, &view, PyBUF_SIMPLE) < 0) return -1;
        int r = mc_writer_lenenc_str(w, view.buf, (size_t)view.len);
        PyBuffer_Release(&view);
        if (r < 0) return -1;
        t = MC_TYPE_BLOB;
    } else if (PyDateTime_Check(v)) {
        unsigned char b[12];
        int y = PyDateTime_GET_YEAR(v);
        b[0] = 11;
        b[1] = (unsigned char)y; b[2] = (unsigned char)(y >> 8);
        b[3] = (unsigned char)PyDateTime_GET_MONTH(v); b[4] = (unsigned char)PyDateTime_GET_DAY(v);
        b[5] = (unsigned char)PyDateTime_DATE_GET_HOUR(v);
        b[6] = (unsigned char)PyDateTime_DATE_GET_MINUTE(v);
        b[7] = (unsigned char)PyDateTime_DATE_GET_SECOND(v);
        uint32_t us = (uint32_t)PyDateTime_DATE_GET_MICROSECOND(v);
        for (int k = 0; k < 4; k++) b[8 + k] = (unsigned char)(us >> (8 * k));
        t = MC_TYPE_DATETIME;
        if (mc_writer_put(w, b, 12) < 0) return -1;
    } else if (PyDate_Check(v)) {
        unsigned char b[5];
        int y = PyDateTime_GET_YEAR(v);
        b[0] = 4;
        b[1] = (unsigned char)y; b[2] = (unsigned char)(y >> 8);
        b[3] = (unsigned char)PyDateTime_GET_MONTH(v); b[4] = (unsigned char)PyDateTime_GET_DAY(v);
        t = MC_TYPE_DATE;
        if (mc_writer_put(w, b, 5) < 0) return -1;
    } else if (PyTime_Check(v) || PyDelta_Check(v)) {
        unsigned char b[13];
        int neg = 0;
        long long days = 0;
        int h, mi, s, us;
        if (PyTime_Check(v)) {
            h = PyDateTime_TIME_GET_HOUR(v); mi = PyDateTime_TIME_GET_MINUTE(v);
            s = PyDateTime_TIME_GET_SECOND(v); us = PyDateTime_TIME_GET_MICROSECOND(v);
        } else {
            long long total_us = (long long)PyDateTime_DELTA_GET_DAYS(v) * 86400000000LL +
                                 (long long)PyDateTime_DELTA_GET_SECONDS(v) * 1000000LL +
                                 PyDateTime_DELTA_GET_MICROSECONDS(v);
            if (total_us < 0) { neg = 1; total_us = -total_us; }
            us = (int)(total_us % 1000000);
            long long secs = total_us / 1000000;
            days = secs / 86400;
            secs %= 86400;
            h = (int)(secs / 3600); mi = (int)(secs / 60 % 60); s = (int)(secs % 60);
        }
        b[0] = 12;
        b[1] = (unsigned char)neg;
        for (int k = 0; k < 4; k++) b[2 + k] = (unsigned char)((uint64_t)days >> (8 * k));
        b[6] = (unsigned char)h; b[7] = (unsigned char)mi; b[8] = (unsigned char)s;
        for (int k = 0; k < 4; k++) b[9 + k] = (unsigned char)((uint32_t)us >> (8 * k));
        t = MC_TYPE_TIME;
        if (mc_writer_put(w, b, 13) < 0) return -1;
    } else if (dec && PyObject_IsInstance(v, dec) == 1) {
        goto as_text_decimal;
    } else {
        mc_raise(st->ProgrammingError, 0,
                 "parameter %zd: unsupported type %s for a prepared statement",
                 i + 1, Py_TYPE(v)->tp_name);
        return -1;
    }
    goto store_type;
as_text_decimal: {
        PyObject *fin = PyObject_CallMethod(v, "is_finite", NULL);
        if (!fin) return -1;
        int ok = PyObject_IsTrue(fin);
        Py_DECREF(fin);
        if (!ok) {
            mc_raise(st->ProgrammingError, 0, "parameter %zd: %R can not be used with MySQL", i + 1, v);
            return -1;
        }
    }
as_text: {
        PyObject *sv = PyObject_Str(v);
        if (!sv) return -1;
        Py_ssize_t l;
        const char *s = PyUnicode_AsUTF8AndSize(sv, &l);
        int r = s ? mc_writer_lenenc_str(w, s, (size_t)l) : -1;
        Py_DECREF(sv);
        if (r < 0) return -1;
        t = MC_TYPE_NEWDECIMAL;
    }
store_type:
    *tp = t;
    *tflagp = tflag;
    return 0;
}

/* The value to encode for parameter v: v itself (new reference) for the types
   encode_value handles, Py_None for pandas.NaT, mysqlc.converters._adapt_param(v) for
   the others (NumPy scalars, uuid.UUID, time.struct_time, sets, __index__ objects) when
   it has a value for them; NULL with an exception.  Exact builtin types return first. */
PyObject *mc_binary_param(mc_state *st, PyObject *v) {
    PyTypeObject *tp = Py_TYPE(v);
    if (v == Py_None || tp == &PyLong_Type || tp == &PyUnicode_Type || tp == &PyFloat_Type ||
        tp == &PyBytes_Type || tp == &PyBool_Type)
        return Py_NewRef(v);
    if (ensure_datetime() < 0) return NULL;
    if (tp == PyDateTimeAPI->DateTimeType || tp == PyDateTimeAPI->DateType)
        return Py_NewRef(v);
    if (PyDateTime_Check(v))
        return Py_NewRef(mc_param_is_nat(v) ? Py_None : v);
    if (PyLong_Check(v) || PyFloat_Check(v) || PyUnicode_Check(v) || PyBytes_Check(v) ||
        PyByteArray_Check(v) || PyMemoryView_Check(v) || PyDate_Check(v) || PyTime_Check(v) ||
        PyDelta_Check(v) || (PyObject *)tp == st->Decimal)
        return Py_NewRef(v);
    if (st->Decimal) {
        int r = PyObject_IsInstance(v, st->Decimal);
        if (r < 0) return NULL;
        if (r) return Py_NewRef(v);
    }
    PyObject *a = mc_param_adapt(st, v);
    if (!a) return NULL;
    if (a == Py_NotImplemented || Py_TYPE(a) == tp) {   /* encode_value names the type */
        Py_DECREF(a);
        return Py_NewRef(v);
    }
    return a;
}

int mc_binary_encode_value(mc_state *st, mc_writer *w, PyObject *v, Py_ssize_t i,
                     const char *encoding, PyObject *dec, unsigned char *tp,
                     unsigned char *tflagp) {
    if (ensure_datetime() < 0) return -1;
    return encode_value(st, w, v, i, encoding, dec, tp, tflagp);
}

/* Encode params for COM_STMT_EXECUTE after the fixed header: NULL bitmap,
 * new-params-bound flag, the types (2 bytes each: type, 0x80 for unsigned) when they
 * differ from *types (previous execute's, bytes or NULL), then the values.
 * `long_data` (may be NULL) is a tuple/list of indexes already sent with
 * COM_STMT_SEND_LONG_DATA: their values are omitted (type BLOB / VAR_STRING).
 * On success *types is replaced by this execute's types (new reference).
 * `encoding` is the Python codec for str values (NULL or "utf-8" for UTF-8).
 * Returns 0 or -1 with ProgrammingError naming the parameter. */
int mc_encode_binary_params(mc_state *st, mc_writer *w, PyObject *params, const char *encoding,
                            PyObject **types, const char *long_mask) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(params);
    PyObject **items = PySequence_Fast_ITEMS(params);
    size_t bitmap_len = (size_t)(n + 7) / 8;
    size_t bitmap_at = w->len;
    if (ensure_datetime() < 0) return -1;
    if (mc_writer_reserve(w, bitmap_len + 1 + 2 * (size_t)n) < 0) return -1;
    memset(w->buf + w->len, 0, bitmap_len);
    w->len += bitmap_len;
    size_t flag_at = w->len;
    w->buf[w->len++] = 1;
    size_t types_at = w->len;
    w->len += 2 * (size_t)n;
    PyObject *dec = decimal_type(st);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = items[i];
        unsigned char t = MC_TYPE_NULL, tflag = 0;
        if (long_mask && long_mask[i]) {
            t = PyBytes_Check(v) || PyByteArray_Check(v) || PyMemoryView_Check(v)
                    ? MC_TYPE_BLOB : MC_TYPE_VAR_STRING;
        } else {
            PyObject *a = mc_binary_param(st, v);
            if (!a) return -1;
            if (a == Py_None) {
                w->buf[bitmap_at + i / 8] |= (unsigned char)(1u << (i % 8));
                t = MC_TYPE_NULL;
            } else if (encode_value(st, w, a, i, encoding, dec, &t, &tflag) < 0) {
                Py_DECREF(a);
                return -1;
            }
            Py_DECREF(a);
        }
        w->buf[types_at + 2 * (size_t)i] = t;
        w->buf[types_at + 2 * (size_t)i + 1] = tflag;
    }
    /* types unchanged since the last execute: send new-params-bound = 0 without them */
    PyObject *now = PyBytes_FromStringAndSize((const char *)w->buf + types_at, 2 * n);
    if (!now) return -1;
    if (*types && PyBytes_Check(*types) && PyBytes_GET_SIZE(*types) == 2 * n &&
        memcmp(PyBytes_AS_STRING(*types), PyBytes_AS_STRING(now), (size_t)(2 * n)) == 0) {
        w->buf[flag_at] = 0;
        memmove(w->buf + types_at, w->buf + types_at + 2 * (size_t)n, w->len - types_at - 2 * (size_t)n);
        w->len -= 2 * (size_t)n;
    }
    Py_XSETREF(*types, now);
    return 0;
}

static size_t lenenc_size(size_t n) {
    return n < 251 ? 1 : n < 0x10000 ? 3 : n < 0x1000000 ? 4 : 9;
}

/* The UTF-8 (str) or raw (bytes) text of a query attribute name; 0 or -1 (TypeError). */
static int attr_name(PyObject *o, Py_ssize_t i, const char **s, Py_ssize_t *n) {
    if (PyUnicode_Check(o)) {
        *s = PyUnicode_AsUTF8AndSize(o, n);
        return *s ? 0 : -1;
    }
    if (PyBytes_Check(o)) {
        *s = PyBytes_AS_STRING(o);
        *n = PyBytes_GET_SIZE(o);
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "query attribute %zd: the name must be str or bytes, not %s",
                 i + 1, Py_TYPE(o)->tp_name);
    return -1;
}

/* Parameters then named query attributes, in the layout COM_QUERY (CLIENT_QUERY_ATTRIBUTES)
 * and COM_STMT_EXECUTE (PARAMETER_COUNT_AVAILABLE) carry after the parameter count (MySQL
 * docs "COM_QUERY", "COM_STMT_EXECUTE"): NULL bitmap over all of them,
 * new_params_bind_flag = 1, per value its type int<2> and name string<lenenc> (empty for
 * the statement's parameters), then the non-NULL values.  `params` (a fast sequence, or
 * NULL) come first, `long_mask` as for mc_encode_binary_params; `attrs` (a fast sequence
 * or NULL) holds (name, value) tuples, name str or bytes.  Written once, straight into w: the names' sizes are
 * known first, the types are filled in as each value is encoded.  0, or -1 with
 * ProgrammingError/TypeError naming the parameter or attribute. */
#define ATTR_NAME(k) PyTuple_GET_ITEM(PySequence_Fast_GET_ITEM(attrs, (k)), 0)
#define ATTR_VALUE(k) PyTuple_GET_ITEM(PySequence_Fast_GET_ITEM(attrs, (k)), 1)
int mc_encode_named_params(mc_state *st, mc_writer *w, PyObject *params, const char *long_mask,
                           PyObject *attrs, const char *encoding) {
    Py_ssize_t np = params ? PySequence_Fast_GET_SIZE(params) : 0;
    Py_ssize_t na = attrs ? PySequence_Fast_GET_SIZE(attrs) : 0;
    Py_ssize_t n = np + na;
    if (n == 0) return 0;
    if (ensure_datetime() < 0) return -1;
    size_t head = (size_t)(n + 7) / 8 + 1 + 3 * (size_t)np;
    for (Py_ssize_t i = 0; i < na; i++) {
        const char *s;
        Py_ssize_t l;
        PyObject *pair = PySequence_Fast_GET_ITEM(attrs, i);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_Format(PyExc_TypeError, "query attribute %zd: expected a (name, value) tuple,"
                         " not %s", i + 1, Py_TYPE(pair)->tp_name);
            return -1;
        }
        if (attr_name(PyTuple_GET_ITEM(pair, 0), i, &s, &l) < 0) return -1;
        head += 2 + lenenc_size((size_t)l) + (size_t)l;
    }
    if (mc_writer_reserve(w, head) < 0) return -1;
    size_t bitmap_at = w->len;
    memset(w->buf + w->len, 0, (size_t)(n + 7) / 8);
    w->len += (size_t)(n + 7) / 8;
    w->buf[w->len++] = 1;                      /* new_params_bind_flag */
    size_t *type_at = PyMem_Malloc(sizeof(size_t) * (size_t)n);
    if (!type_at) { PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < n; i++) {
        type_at[i] = w->len;
        w->len += 2;                           /* type, flag: filled below */
        if (i < np) {
            w->buf[w->len++] = 0;              /* an unnamed parameter */
        } else {
            const char *s;
            Py_ssize_t l;
            (void)attr_name(ATTR_NAME(i - np), i - np, &s, &l);
            if (mc_writer_lenenc_str(w, s, (size_t)l) < 0) goto error;   /* reserved: no realloc */
        }
    }
    PyObject *dec = decimal_type(st);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = i < np ? PySequence_Fast_GET_ITEM(params, i)
                             : ATTR_VALUE(i - np);
        unsigned char t = MC_TYPE_NULL, tflag = 0;
        if (i < np && long_mask && long_mask[i]) {
            t = PyBytes_Check(v) || PyByteArray_Check(v) || PyMemoryView_Check(v)
                    ? MC_TYPE_BLOB : MC_TYPE_VAR_STRING;
        } else {
            PyObject *a = mc_binary_param(st, v);
            if (!a) goto error;
            int rc = 0;
            if (a == Py_None)
                w->buf[bitmap_at + (size_t)i / 8] |= (unsigned char)(1u << (i % 8));
            else
                rc = encode_value(st, w, a, i < np ? i : i - np, encoding, dec, &t, &tflag);
            Py_DECREF(a);
            if (rc < 0) {
                if (i >= np && PyErr_ExceptionMatches(st->ProgrammingError)) {
                    /* the encoder names "parameter k": name the attribute instead */
                    PyObject *et, *ev, *tb;
                    PyErr_Fetch(&et, &ev, &tb);
                    PyErr_NormalizeException(&et, &ev, &tb);
                    PyObject *args = ev ? PyObject_GetAttrString(ev, "args") : NULL;
                    PyObject *msg = args && PyTuple_Check(args) && PyTuple_GET_SIZE(args) > 1
                                        ? PyTuple_GET_ITEM(args, 1) : Py_None;
                    mc_raise(st->ProgrammingError, 0, "query attribute %R (a %s): %S",
                             ATTR_NAME(i - np), Py_TYPE(v)->tp_name, msg);
                    Py_XDECREF(args);
                    Py_XDECREF(et);
                    Py_XDECREF(ev);
                    Py_XDECREF(tb);
                }
                goto error;
            }
        }
        w->buf[type_at[i]] = t;
        w->buf[type_at[i] + 1] = tflag;
    }
    PyMem_Free(type_at);
    return 0;
error:
    PyMem_Free(type_at);
    return -1;
}
#undef ATTR_NAME
#undef ATTR_VALUE
