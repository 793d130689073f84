/* Client-side SQL literals, string escaping and query formatting.
 *
 * Module functions (added to mysqlc._core by module.c via mc_encode_methods):
 *
 *   escape_string(data, no_backslash_escapes=False, charset="utf8mb4",
 *                 encoding="utf-8") -> bytes
 *   literal(obj, no_backslash_escapes=False, charset="utf8mb4", encoding="utf-8",
 *           encoders=None, binary_prefix=False, *, portable=False) -> bytes | None
 *   format_query(query, args, no_backslash_escapes=False, charset="utf8mb4",
 *                encoding="utf-8", encoders=None, binary_prefix=False, *,
 *                portable=False) -> bytes | None
 *
 * Literal table (behaviour follows mysqlclient's Connection.literal):
 *
 *   None                        NULL
 *   bool                        1 / 0
 *   int (and subclasses)        decimal digits of the value (an IntEnum member gives
 *                                 its number, not its name)
 *   float                       repr(x), plus "e0" when repr has no exponent, so the
 *                               server reads a DOUBLE; nan/inf/-inf -> ProgrammingError
 *   decimal.Decimal             format(d, "f") (no exponent, exact); NaN/Infinity
 *                               -> ProgrammingError
 *   str                         '...' encoded with `encoding`, then escaped
 *   bytes, bytearray,           '...' escaped; _binary'...' when binary_prefix
 *     memoryview
 *   datetime.datetime           'YYYY-MM-DD HH:MM:SS[.ffffff]' (tzinfo ignored)
 *   datetime.date               'YYYY-MM-DD'
 *   datetime.time               'HH:MM:SS[.ffffff]' (tzinfo ignored)
 *   datetime.timedelta          '[-]H:MM:SS[.ffffff]', hours not wrapped at 24, the
 *                               sign printed before the absolute value
 *   tuple, list                 (lit,lit,...) -- each element by these same rules
 *   set, frozenset              'a,b,...' -- a MySQL SET value: the str members joined
 *                               with commas and quoted (mysqlclient's Set2Str);
 *                               non-str members raise TypeError
 *   pandas.NaT                  NULL (a datetime subclass whose fields read 0001-01-01)
 *   NumPy scalars, uuid.UUID,   the literal of mysqlc.converters._adapt_param(obj):
 *     time.struct_time, other     int / bool / float (float32: the shortest decimal,
 *     objects with __index__      as mysqlclient) / datetime / date / timedelta / str /
 *                                 None for NaT (param_adapt.c; the same values as the
 *                                 binary and LOAD DATA encoders write)
 *   type(obj) in encoders       encoders[type(obj)](obj): bytes used as is, str
 *                               encoded with `encoding` (consulted after the exact
 *                               builtin types None/bool/int/float/str/bytes and
 *                               before everything else)
 *   anything else               ProgrammingError naming the type
 *
 * Escaping is mysql_real_escape_string's: NUL \n \r \ ' " and 0x1A are
 * backslash-escaped; with no_backslash_escapes only ' is doubled.  For the
 * charsets whose multibyte characters may have a trail byte in the ASCII range
 * (big5, gbk, gb18030, sjis, cp932) a complete, valid multibyte character is
 * copied unescaped (the server's lexer reads it as one character) and, with
 * backslash escapes, a lead byte that does not start a valid character gets a
 * backslash so that the server cannot join it with a following escape
 * backslash.  The byte ranges are those of the server's ctype-*.c.
 *
 * portable (what the cursors use when the connection does not know the sql_mode
 * for certain; mysqlc/connections.py Connection._escape_mode) ignores
 * no_backslash_escapes for str and bytes values: a value whose bytes contain no
 * backslash (0x5C), or only backslashes followed by % or _, is written '...' with
 * only ' doubled, which the server reads the same in both modes.  Any other value
 * needs the mode: with portable=2 the call then returns None (the caller confirms
 * the mode and formats again with portable=0); with portable=1 (True) it is
 * written as a hex literal: _<charset> X'..' when its bytes are well-formed in the
 * charset, else X'..'; _binary X'..' for bytes with binary_prefix.  See
 * mc_enc_put_quoted in escape.c and docs/compat.md ("Escaping of str and bytes
 * parameters").
 */
#include "encode_internal.h"
#include <datetime.h>
#include <math.h>


/* Lower-case `s` into out[cap] dropping '-', '_' and ' '; 0, or -1 if too long. */
static int
norm_name(const char *s, Py_ssize_t n, char *out, size_t cap)
{
    size_t k = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '-' || c == '_' || c == ' ')
            continue;
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (k + 1 >= cap)
            return -1;
        out[k++] = c;
    }
    out[k] = '\0';
    return 0;
}

static int
name_in(const char *name, const char *const *list)
{
    for (; *list; list++)
        if (strcmp(name, *list) == 0)
            return 1;
    return 0;
}

/* Python codecs (normalised names) that map ASCII to itself. */
static const char *const ascii_compat_codecs[] = {
    "cp1252", "windows1252", "gbk", "cp936", "gb18030", "gb2312", "big5", "cp950",
    "shiftjis", "sjis", "cp932", "ms932", "mskanji", "eucjp", "ujis", "euckr",
    "cp949", "cp1250", "cp1251", "cp1256", "cp1257", "koi8r", "koi8u", "iso88592",
    "iso88597", "iso88598", "iso88599", "iso885913", "cp850", "cp852", "cp866",
    "macroman", "tis620", NULL,
};

/* The server's single-byte charsets: an introduced literal of any bytes is
 * well-formed in them (checked against MariaDB 10.11 for all 256 bytes). */
static const char *const single_byte_charsets[] = {
    "armscii8", "ascii", "binary", "cp1250", "cp1251", "cp1256", "cp1257", "cp850",
    "cp852", "cp866", "dec8", "geostd8", "greek", "hebrew", "hp8", "keybcs2", "koi8r",
    "koi8u", "latin1", "latin2", "latin5", "latin7", "macce", "macroman", "swe7",
    "tis620", NULL,
};

static int
opts_init(enc_opts *o, mc_state *st, PyObject *nbe, PyObject *charset,
          PyObject *encoding, PyObject *encoders, PyObject *binary_prefix,
          PyObject *portable)
{
    char norm[32];
    const char *s;
    Py_ssize_t n;
    const char *cs_name = "utf8mb4";
    Py_ssize_t cs_len = 7;

    o->st = st;
    o->nbe = 0;
    o->mb = MB_NONE;
    o->enc = ENC_UTF8;
    o->ascii_compat = 1;
    o->codec = "utf-8";
    o->encoders = NULL;
    o->binary_prefix = 0;
    o->portable = 0;
    o->needs_mode = NULL;
    o->intro_len = 0;
    o->intro[0] = '\0';

    if (nbe && nbe != Py_False && nbe != Py_None) {
        int t = PyObject_IsTrue(nbe);
        if (t < 0)
            return -1;
        o->nbe = t;
    }
    if (binary_prefix && binary_prefix != Py_False && binary_prefix != Py_None) {
        int t = PyObject_IsTrue(binary_prefix);
        if (t < 0)
            return -1;
        o->binary_prefix = t;
    }
    if (charset && charset != Py_None) {
        if (!PyUnicode_Check(charset)) {
            PyErr_Format(PyExc_TypeError, "charset must be str, not %.100s",
                         Py_TYPE(charset)->tp_name);
            return -1;
        }
        s = PyUnicode_AsUTF8AndSize(charset, &n);
        if (!s)
            return -1;
        cs_name = s;
        cs_len = n;
        if (n <= 8 && norm_name(s, n, norm, sizeof norm) == 0) {
            if (strcmp(norm, "big5") == 0)
                o->mb = MB_BIG5;
            else if (strcmp(norm, "gbk") == 0)
                o->mb = MB_GBK;
            else if (strcmp(norm, "gb18030") == 0)
                o->mb = MB_GB18030;
            else if (strcmp(norm, "sjis") == 0 || strcmp(norm, "cp932") == 0)
                o->mb = MB_SJIS;
        }
    }
    if (portable && portable != Py_False && portable != Py_None) {
        int t;
        if (PyLong_Check(portable) && !PyBool_Check(portable)) {
            long l = PyLong_AsLong(portable);
            if (l == -1 && PyErr_Occurred())
                return -1;
            if (l < 0 || l > 2) {
                PyErr_Format(PyExc_ValueError, "portable must be 0, 1 or 2, not %ld", l);
                return -1;
            }
            t = (int)l;
        }
        else if ((t = PyObject_IsTrue(portable)) < 0) {
            return -1;
        }
        o->portable = t;
    }
    if (o->portable) {
        /* the introducer names the connection charset: a MySQL charset name is
         * [a-z0-9_]; anything else is refused rather than written into the SQL */
        int ok = cs_len > 0 && cs_len <= 32;
        for (Py_ssize_t i = 0; ok && i < cs_len; i++) {
            char c = cs_name[i];
            ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9') || c == '_';
        }
        if (!ok) {
            PyErr_Format(PyExc_ValueError,
                         "charset %R is not a MySQL character set name", charset);
            return -1;
        }
        o->cs_wf = WF_ASCII;
        if (cs_len <= 16 && norm_name(cs_name, cs_len, norm, sizeof norm) == 0) {
            if (strcmp(norm, "utf8mb4") == 0)
                o->cs_wf = WF_UTF8MB4;
            else if (strcmp(norm, "utf8") == 0 || strcmp(norm, "utf8mb3") == 0)
                o->cs_wf = WF_UTF8MB3;
            else if (name_in(norm, single_byte_charsets))
                o->cs_wf = WF_ANY;
            else if (o->mb != MB_NONE)
                o->cs_wf = WF_MB;
        }
        o->intro[0] = '_';
        memcpy(o->intro + 1, cs_name, (size_t)cs_len);
        o->intro[cs_len + 1] = ' ';
        o->intro_len = cs_len + 2;
    }
    if (encoding && encoding != Py_None) {
        if (!PyUnicode_Check(encoding)) {
            PyErr_Format(PyExc_TypeError, "encoding must be str, not %.100s",
                         Py_TYPE(encoding)->tp_name);
            return -1;
        }
        s = PyUnicode_AsUTF8AndSize(encoding, &n);
        if (!s)
            return -1;
        o->codec = s;
        if (norm_name(s, n, norm, sizeof norm) < 0) {
            o->enc = ENC_CODEC;
            o->ascii_compat = 0;
        }
        else if (strcmp(norm, "utf8") == 0 || strcmp(norm, "u8") == 0) {
            o->enc = ENC_UTF8;
        }
        else if (strcmp(norm, "latin1") == 0 || strcmp(norm, "iso88591") == 0 ||
                 strcmp(norm, "l1") == 0 || strcmp(norm, "8859") == 0 ||
                 strcmp(norm, "cp819") == 0) {
            o->enc = ENC_LATIN1;
        }
        else if (strcmp(norm, "ascii") == 0 || strcmp(norm, "usascii") == 0 ||
                 strcmp(norm, "646") == 0) {
            o->enc = ENC_ASCII;
        }
        else {
            o->enc = ENC_CODEC;
            o->ascii_compat = name_in(norm, ascii_compat_codecs);
        }
    }
    if (encoders && encoders != Py_None) {
        if (!PyDict_Check(encoders)) {
            PyErr_Format(PyExc_TypeError, "encoders must be a dict or None, not %.100s",
                         Py_TYPE(encoders)->tp_name);
            return -1;
        }
        if (PyDict_GET_SIZE(encoders) > 0)
            o->encoders = encoders;
    }
    return 0;
}

/* The bytes of str `u` in the connection encoding.  Sets *s and *n; *tmp receives
 * a new reference that keeps them alive (NULL when they point into `u`). */
static int
str_bytes(PyObject *u, const enc_opts *o, const char **s, Py_ssize_t *n, PyObject **tmp)
{
    *tmp = NULL;
    if (o->enc == ENC_UTF8) {
        *s = PyUnicode_AsUTF8AndSize(u, n);
        return *s ? 0 : -1;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(u) < 0)
        return -1;
#endif
    if ((o->enc == ENC_LATIN1 && PyUnicode_KIND(u) == PyUnicode_1BYTE_KIND) ||
        (o->ascii_compat && PyUnicode_IS_ASCII(u))) {
        *s = (const char *)PyUnicode_1BYTE_DATA(u);
        *n = PyUnicode_GET_LENGTH(u);
        return 0;
    }
    *tmp = PyUnicode_AsEncodedString(u, o->codec, "strict");
    if (!*tmp)
        return -1;
    if (!PyBytes_Check(*tmp)) {
        PyErr_Format(PyExc_TypeError, "codec %.100s did not return bytes", o->codec);
        Py_CLEAR(*tmp);
        return -1;
    }
    *s = PyBytes_AS_STRING(*tmp);
    *n = PyBytes_GET_SIZE(*tmp);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* literals                                                                  */

static int lit_append(obuf *b, PyObject *obj, const enc_opts *o);

static int
put_ll(obuf *b, long long v)
{
    char tmp[24];
    char *e = tmp + sizeof tmp, *w = e;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        *--w = (char)('0' + (int)(u % 10));
        u /= 10;
    } while (u);
    if (v < 0)
        *--w = '-';
    return ob_put(b, w, e - w);
}

/* `obj` is an int or an int subclass: its value in decimal. */
static int
put_int(obuf *b, PyObject *obj)
{
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    PyObject *s;
    const char *d;
    Py_ssize_t n;
    int r;

    if (v == -1 && PyErr_Occurred())
        return -1;
    if (!overflow)
        return put_ll(b, v);
    s = PyLong_Type.tp_repr(obj);
    if (!s)
        return -1;
    d = PyUnicode_AsUTF8AndSize(s, &n);
    r = d ? ob_put(b, d, n) : -1;
    Py_DECREF(s);
    return r;
}

static int
put_float(obuf *b, double x, const enc_opts *o)
{
    char *r;
    size_t n;
    int rc;

    if (!isfinite(x)) {
        mc_raise(o->st->ProgrammingError, 0, "%s can not be used with MySQL",
                 isnan(x) ? "nan" : (x > 0 ? "inf" : "-inf"));
        return -1;
    }
    r = PyOS_double_to_string(x, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
    if (!r)
        return -1;
    n = strlen(r);
    rc = ob_put(b, r, (Py_ssize_t)n);
    if (rc == 0 && !memchr(r, 'e', n))
        rc = ob_put(b, "e0", 2);
    PyMem_Free(r);
    return rc;
}

/* `dec` is decimal.Decimal: its own __str__/__format__ are used, not a
 * subclass's overrides. */
static int
put_decimal(obuf *b, PyObject *obj, PyObject *dec, const enc_opts *o)
{
    PyObject *s;
    const char *d;
    Py_ssize_t n;
    int rc = -1;

    /* str(d) is format(d, "f") unless it uses an exponent, and much faster */
    s = ((PyTypeObject *)dec)->tp_str(obj);
    if (!s)
        return -1;
    d = PyUnicode_AsUTF8AndSize(s, &n);
    if (!d)
        goto done;
    if (memchr(d, 'E', (size_t)n) || memchr(d, 'e', (size_t)n)) {
        Py_DECREF(s);
        s = PyObject_CallMethod(dec, "__format__", "Os", obj, "f");
        if (!s)
            return -1;
        if (!PyUnicode_Check(s)) {
            PyErr_SetString(PyExc_TypeError, "Decimal.__format__ did not return str");
            goto done;
        }
        d = PyUnicode_AsUTF8AndSize(s, &n);
        if (!d)
            goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        char c = d[i];
        if (!((c >= '0' && c <= '9') || c == '-' || c == '.')) {
            /* NaN, sNaN, Infinity: no SQL value for them */
            PyObject *rep = PyObject_Repr(obj);
            if (rep) {
                mc_raise(o->st->ProgrammingError, 0, "%U can not be used with MySQL", rep);
                Py_DECREF(rep);
            }
            goto done;
        }
    }
    rc = ob_put(b, d, n);
done:
    Py_DECREF(s);
    return rc;
}

static inline char *
put2(char *w, int v)
{
    w[0] = (char)('0' + v / 10);
    w[1] = (char)('0' + v % 10);
    return w + 2;
}

static char *
put_date_chars(char *w, int y, int m, int d)
{
    w[0] = (char)('0' + y / 1000 % 10);
    w[1] = (char)('0' + y / 100 % 10);
    w[2] = (char)('0' + y / 10 % 10);
    w[3] = (char)('0' + y % 10);
    w[4] = '-';
    w = put2(w + 5, m);
    *w++ = '-';
    return put2(w, d);
}

/* MM:SS[.ffffff] after the hours */
static char *
put_ms_us_chars(char *w, int mi, int s, int us)
{
    *w++ = ':';
    w = put2(w, mi);
    *w++ = ':';
    w = put2(w, s);
    if (us) {
        *w++ = '.';
        for (int i = 5; i >= 0; i--) {
            w[i] = (char)('0' + us % 10);
            us /= 10;
        }
        w += 6;
    }
    return w;
}

static int
ensure_datetime_api(void)
{
    if (PyDateTimeAPI == NULL) {
        PyDateTime_IMPORT;
        if (PyDateTimeAPI == NULL)
            return -1;
    }
    return 0;
}

/* The text literal of a temporal value, without its quotes, into out (at least
   MC_TEMPORAL_CHARS bytes): datetime 'YYYY-MM-DD hh:mm:ss[.ffffff]' (tzinfo ignored, as
   MySQLdb's converters do), date, time, and timedelta as [-]h:mm:ss[.ffffff] with the
   hours not wrapped at 24.  The fraction only when nonzero.  Returns the length, or 0
   when obj is not temporal, -1 when the datetime C API cannot be imported (the API
   pointer is per file: this one's is imported here).  Shared with the text cursor's bulk
   path (src/prepared.c), which must store what the literal stores. */
Py_ssize_t
mc_enc_temporal_chars(char *out, PyObject *obj)
{
    char *w = out;

    if (ensure_datetime_api() < 0)
        return -1;
    if (PyDateTime_Check(obj)) {
        w = put_date_chars(w, PyDateTime_GET_YEAR(obj), PyDateTime_GET_MONTH(obj),
                           PyDateTime_GET_DAY(obj));
        *w++ = ' ';
        w = put2(w, PyDateTime_DATE_GET_HOUR(obj));
        w = put_ms_us_chars(w, PyDateTime_DATE_GET_MINUTE(obj),
                            PyDateTime_DATE_GET_SECOND(obj),
                            PyDateTime_DATE_GET_MICROSECOND(obj));
    }
    else if (PyDate_Check(obj)) {
        w = put_date_chars(w, PyDateTime_GET_YEAR(obj), PyDateTime_GET_MONTH(obj),
                           PyDateTime_GET_DAY(obj));
    }
    else if (PyTime_Check(obj)) {
        w = put2(w, PyDateTime_TIME_GET_HOUR(obj));
        w = put_ms_us_chars(w, PyDateTime_TIME_GET_MINUTE(obj),
                            PyDateTime_TIME_GET_SECOND(obj),
                            PyDateTime_TIME_GET_MICROSECOND(obj));
    }
    else if (PyDelta_Check(obj)) {
        /* normalised: days any sign, 0 <= seconds < 86400, 0 <= us < 10**6 */
        long long days = PyDateTime_DELTA_GET_DAYS(obj);
        long long secs = days * 86400 + PyDateTime_DELTA_GET_SECONDS(obj);
        int us = PyDateTime_DELTA_GET_MICROSECONDS(obj);
        long long hours;
        char digits[24], *e = digits + sizeof digits, *h = e;
        if (secs < 0) {
            *w++ = '-';
            if (us) {
                secs = -secs - 1;
                us = 1000000 - us;
            }
            else {
                secs = -secs;
            }
        }
        hours = secs / 3600;
        /* hours in decimal, at least one digit (at most 11 digits) */
        do {
            *--h = (char)('0' + (int)(hours % 10));
            hours /= 10;
        } while (hours);
        memcpy(w, h, (size_t)(e - h));
        w += e - h;
        w = put_ms_us_chars(w, (int)(secs / 60 % 60), (int)(secs % 60), us);
    }
    return w - out;
}

/* Temporal values; returns 1 when handled, 0 when obj is not temporal, -1. */
static int
put_temporal(obuf *b, PyObject *obj)
{
    char tmp[MC_TEMPORAL_CHARS + 2];
    Py_ssize_t n = mc_enc_temporal_chars(tmp + 1, obj);
    if (n <= 0)
        return (int)n;
    tmp[0] = '\'';
    tmp[n + 1] = '\'';
    return ob_put(b, tmp, n + 2) < 0 ? -1 : 1;
}

static int
put_str(obuf *b, PyObject *u, const enc_opts *o)
{
    const char *s;
    Py_ssize_t n;
    PyObject *tmp;
    int r;
    if (str_bytes(u, o, &s, &n, &tmp) < 0)
        return -1;
    r = mc_enc_put_quoted(b, s, n, 0, o);
    Py_XDECREF(tmp);
    return r;
}

/* bytes, bytearray, memoryview (and subclasses) */
static int
put_buffer(obuf *b, PyObject *obj, const enc_opts *o)
{
    Py_buffer view;
    int r;
    if (PyBytes_Check(obj))
        return mc_enc_put_quoted(b, PyBytes_AS_STRING(obj), PyBytes_GET_SIZE(obj),
                          o->binary_prefix, o);
    if (PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) < 0)
        return -1;
    r = mc_enc_put_quoted(b, (const char *)view.buf, view.len, o->binary_prefix, o);
    PyBuffer_Release(&view);
    return r;
}

/* tuple/list (or subclasses): (a,b,...) */
static int
put_seq(obuf *b, PyObject *seq, const enc_opts *o)
{
    int is_tuple = PyTuple_Check(seq);
    int r = -1;
    if (Py_EnterRecursiveCall(" while converting a parameter sequence"))
        return -1;
    if (ob_putc(b, '(') < 0)
        goto done;
    /* size re-read each time: an encoder may mutate a list */
    for (Py_ssize_t i = 0; i < (is_tuple ? PyTuple_GET_SIZE(seq) : PyList_GET_SIZE(seq)); i++) {
        PyObject *item = is_tuple ? PyTuple_GET_ITEM(seq, i) : PyList_GET_ITEM(seq, i);
        int rc;
        if (i && ob_putc(b, ',') < 0)
            goto done;
        Py_INCREF(item);
        rc = lit_append(b, item, o);
        Py_DECREF(item);
        if (rc < 0)
            goto done;
    }
    r = ob_putc(b, ')');
done:
    Py_LeaveRecursiveCall();
    return r;
}

/* set/frozenset: a MySQL SET value 'a,b,...' (mysqlclient's Set2Str) */
static int
put_set(obuf *b, PyObject *obj, const enc_opts *o)
{
    /* the members joined, or TypeError for a non-str member (as mysqlclient) */
    PyObject *joined = mc_param_adapt(o->st, obj);
    if (!joined)
        return -1;
    if (!PyUnicode_Check(joined)) {
        Py_DECREF(joined);
        PyErr_SetString(PyExc_TypeError, "set elements must be strings");
        return -1;
    }
    int r = put_str(b, joined, o);
    Py_DECREF(joined);
    return r;
}

static int
put_encoded(obuf *b, PyObject *obj, PyObject *conv, const enc_opts *o)
{
    PyObject *res = PyObject_CallOneArg(conv, obj);
    int r = -1;
    if (!res)
        return -1;
    if (PyBytes_Check(res)) {
        r = ob_put(b, PyBytes_AS_STRING(res), PyBytes_GET_SIZE(res));
    }
    else if (PyUnicode_Check(res)) {
        const char *s;
        Py_ssize_t n;
        PyObject *tmp;
        if (str_bytes(res, o, &s, &n, &tmp) == 0) {
            r = ob_put(b, s, n);
            Py_XDECREF(tmp);
        }
    }
    else {
        mc_raise(o->st->ProgrammingError, 0,
                 "encoder for %.200s returned %.200s; expected bytes or str",
                 Py_TYPE(obj)->tp_name, Py_TYPE(res)->tp_name);
    }
    Py_DECREF(res);
    return r;
}

static PyObject *
get_decimal_type(mc_state *st)
{
    if (st->Decimal == NULL) {
        PyObject *mod = PyImport_ImportModule("decimal");
        if (!mod)
            return NULL;
        st->Decimal = PyObject_GetAttrString(mod, "Decimal");
        Py_DECREF(mod);
    }
    return st->Decimal;
}

/* Everything but the exact builtin fast-path types and encoders. */
static int
lit_append_slow(obuf *b, PyObject *obj, const enc_opts *o)
{
    PyTypeObject *tp = Py_TYPE(obj);
    PyObject *dec;
    int r;

    if (tp == &PyTuple_Type || tp == &PyList_Type)
        return put_seq(b, obj, o);

    if (ensure_datetime_api() < 0)
        return -1;
    if (!PyDateTime_CheckExact(obj) && PyDateTime_Check(obj) && mc_param_is_nat(obj))
        return ob_put(b, "NULL", 4);     /* pandas.NaT: a missing value */
    r = put_temporal(b, obj);
    if (r)
        return r < 0 ? -1 : 0;

    dec = get_decimal_type(o->st);
    if (!dec)
        return -1;
    if ((PyObject *)tp == dec)
        return put_decimal(b, obj, dec, o);
    if (PyByteArray_Check(obj) || PyMemoryView_Check(obj) || PyBytes_Check(obj))
        return put_buffer(b, obj, o);
    if (PyAnySet_Check(obj))
        return put_set(b, obj, o);
    if (PyLong_Check(obj))
        return put_int(b, obj);
    if (PyFloat_Check(obj))
        return put_float(b, PyFloat_AS_DOUBLE(obj), o);
    if (PyUnicode_Check(obj))
        return put_str(b, obj, o);
    if ((PyTuple_Check(obj) && strcmp(tp->tp_name, "time.struct_time") != 0) ||
        PyList_Check(obj))
        return put_seq(b, obj, o);
    r = PyObject_IsInstance(obj, dec);
    if (r < 0)
        return -1;
    if (r)
        return put_decimal(b, obj, dec, o);
    /* NumPy scalars, uuid.UUID, time.struct_time, objects with __index__ */
    PyObject *adapted = mc_param_adapt(o->st, obj);
    if (!adapted)
        return -1;
    if (adapted != Py_NotImplemented && Py_TYPE(adapted) != tp) {
        r = lit_append(b, adapted, o);
        Py_DECREF(adapted);
        return r;
    }
    Py_DECREF(adapted);
    mc_raise(o->st->ProgrammingError, 0,
             "unsupported parameter type %.200s; register an encoder for it in "
             "encoders", tp->tp_name);
    return -1;
}

static int
lit_append(obuf *b, PyObject *obj, const enc_opts *o)
{
    PyTypeObject *tp = Py_TYPE(obj);

    if (obj == Py_None)
        return ob_put(b, "NULL", 4);
    if (tp == &PyUnicode_Type)
        return put_str(b, obj, o);
    if (tp == &PyLong_Type)
        return put_int(b, obj);
    if (tp == &PyBool_Type)
        return ob_putc(b, obj == Py_True ? '1' : '0');
    if (tp == &PyFloat_Type)
        return put_float(b, PyFloat_AS_DOUBLE(obj), o);
    if (tp == &PyBytes_Type)
        return mc_enc_put_quoted(b, PyBytes_AS_STRING(obj), PyBytes_GET_SIZE(obj),
                          o->binary_prefix, o);
    if (o->encoders) {
        PyObject *conv = PyDict_GetItemWithError(o->encoders, (PyObject *)tp);
        if (conv) {
            int r;
            Py_INCREF(conv);
            r = put_encoded(b, obj, conv, o);
            Py_DECREF(conv);
            return r;
        }
        if (PyErr_Occurred())
            return -1;
    }
    return lit_append_slow(b, obj, o);
}

/* ------------------------------------------------------------------------ */
/* argument parsing for METH_FASTCALL | METH_KEYWORDS                        */

#if PY_VERSION_HEX < 0x030C0000
#define ENC_UNICODE_READY(o) PyUnicode_IS_READY(o)
#else
#define ENC_UNICODE_READY(o) 1     /* every str is ready since 3.12 */
#endif

static int
parse_args(const char *fname, const char *const *names, Py_ssize_t nnames,
           Py_ssize_t npos, Py_ssize_t nrequired, PyObject *const *args, Py_ssize_t nargs,
           PyObject *kwnames, PyObject **out)
{
    /* names[npos:] are keyword-only */
    Py_ssize_t i;
    for (i = 0; i < nnames; i++)
        out[i] = NULL;
    if (nargs > npos) {
        PyErr_Format(PyExc_TypeError,
                     "%s() takes at most %zd positional arguments (%zd given)",
                     fname, npos, nargs);
        return -1;
    }
    for (i = 0; i < nargs; i++)
        out[i] = args[i];
    if (kwnames) {
        Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
        Py_ssize_t hint = nargs;     /* keywords usually come in signature order */
        for (Py_ssize_t k = 0; k < nkw; k++) {
            PyObject *key = PyTuple_GET_ITEM(kwnames, k);
            Py_ssize_t j = nnames, klen = 0;
            const char *ks = NULL;
            if (PyUnicode_Check(key) && ENC_UNICODE_READY(key) && PyUnicode_IS_ASCII(key)) {
                ks = (const char *)PyUnicode_1BYTE_DATA(key);
                klen = PyUnicode_GET_LENGTH(key);
            }
            if (ks && klen > 0) {
                for (Py_ssize_t t = 0; t < nnames; t++) {
                    Py_ssize_t c = (hint + t) % nnames;
                    if (names[c][0] == ks[0] && strncmp(names[c], ks, (size_t)klen) == 0 &&
                        names[c][klen] == '\0') {
                        j = c;
                        break;
                    }
                }
            }
            if (j == nnames) {
                PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%S'",
                             fname, key);
                return -1;
            }
            if (out[j]) {
                PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'",
                             fname, names[j]);
                return -1;
            }
            out[j] = args[nargs + k];
            hint = j + 1;
        }
    }
    for (i = 0; i < nrequired; i++) {
        if (!out[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos %zd)",
                         fname, names[i], i + 1);
            return -1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------------------ */
/* escape_string                                                             */

static const char *const escape_string_names[] = {
    "data", "no_backslash_escapes", "charset", "encoding",
};

static PyObject *
mc_encode_escape_string(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames)
{
    PyObject *v[4], *tmp = NULL, *result = NULL;
    enc_opts o;
    Py_buffer view;
    int have_view = 0;
    const char *s;
    Py_ssize_t n;
    obuf b;

    if (parse_args("escape_string", escape_string_names, 4, 4, 1, args, nargs, kwnames, v) < 0)
        return NULL;
    if (opts_init(&o, mc_state_from_module(module), v[1], v[2], v[3], NULL, NULL, NULL) < 0)
        return NULL;
    if (PyUnicode_Check(v[0])) {
        if (str_bytes(v[0], &o, &s, &n, &tmp) < 0)
            return NULL;
    }
    else if (PyBytes_Check(v[0])) {
        s = PyBytes_AS_STRING(v[0]);
        n = PyBytes_GET_SIZE(v[0]);
    }
    else if (PyObject_CheckBuffer(v[0])) {
        if (PyObject_GetBuffer(v[0], &view, PyBUF_SIMPLE) < 0)
            return NULL;
        have_view = 1;
        s = (const char *)view.buf;
        n = view.len;
    }
    else {
        PyErr_Format(PyExc_TypeError,
                     "escape_string() argument must be str or a bytes-like object, not %.100s",
                     Py_TYPE(v[0])->tp_name);
        return NULL;
    }
    if (n > (PY_SSIZE_T_MAX - 16) / 2) {
        PyErr_NoMemory();
        goto done;
    }
    if (ob_init(&b, 2 * n) < 0)
        goto done;
    b.len = mc_enc_escape_into(b.p, (const unsigned char *)s, n, &o);
    result = ob_finish(&b);
    ob_discard(&b);
done:
    if (have_view)
        PyBuffer_Release(&view);
    Py_XDECREF(tmp);
    return result;
}

/* ------------------------------------------------------------------------ */
/* literal                                                                   */

static const char *const literal_names[] = {
    "obj", "no_backslash_escapes", "charset", "encoding", "encoders", "binary_prefix",
    "portable",
};

static PyObject *
mc_encode_literal(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                  PyObject *kwnames)
{
    PyObject *v[7], *result;
    enc_opts o;
    obuf b;
    int needs_mode = 0;

    if (parse_args("literal", literal_names, 7, 6, 1, args, nargs, kwnames, v) < 0)
        return NULL;
    if (opts_init(&o, mc_state_from_module(module), v[1], v[2], v[3], v[4], v[5], v[6]) < 0)
        return NULL;
    o.needs_mode = &needs_mode;
    if (ob_init(&b, 32) < 0)
        return NULL;
    if (lit_append(&b, v[0], &o) < 0) {
        ob_discard(&b);
        if (needs_mode) {          /* portable=2 and a value that needs the sql_mode */
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        return NULL;
    }
    result = ob_finish(&b);
    ob_discard(&b);
    return result;
}

/* ------------------------------------------------------------------------ */
/* format_query                                                              */

static int
is_mapping(PyObject *args)
{
#ifdef Py_TPFLAGS_MAPPING
    return PyType_HasFeature(Py_TYPE(args), Py_TPFLAGS_MAPPING);
#else
    PyObject *abc, *mapping;
    int r;
    abc = PyImport_ImportModule("collections.abc");
    if (!abc)
        return -1;
    mapping = PyObject_GetAttrString(abc, "Mapping");
    Py_DECREF(abc);
    if (!mapping)
        return -1;
    r = PyObject_IsInstance(args, mapping);
    Py_DECREF(mapping);
    return r;
#endif
}

static void
raise_bad_format(const enc_opts *o, const char *q, const char *pct, const char *end)
{
    Py_ssize_t at = pct - q;
    if (pct + 1 >= end) {
        mc_raise(o->st->ProgrammingError, 0,
                 "incomplete format: '%%' at the end of the query (index %zd); "
                 "write %%%% for a literal %%", at);
        return;
    }
    unsigned char c = (unsigned char)pct[1];
    if (c >= 0x20 && c < 0x7F)
        mc_raise(o->st->ProgrammingError, 0,
                 "unsupported format character '%c' (0x%x) at index %zd; only %%s, "
                 "%%(name)s and %%%% are supported", (int)c, (unsigned)c, at + 1);
    else
        mc_raise(o->st->ProgrammingError, 0,
                 "unsupported format character 0x%x at index %zd; only %%s, "
                 "%%(name)s and %%%% are supported", (unsigned)c, at + 1);
}

/* Look `name` (bytes of the query) up in the mapping: str key first (decoded
 * with the connection encoding), then bytes.  New reference, or NULL. */
static PyObject *
map_lookup(PyObject *args, const char *name, Py_ssize_t n, const enc_opts *o)
{
    PyObject *key, *bkey, *val;

    if (o->enc == ENC_UTF8)
        key = PyUnicode_DecodeUTF8(name, n, "strict");
    else if (o->enc == ENC_LATIN1)
        key = PyUnicode_DecodeLatin1(name, n, "strict");
    else
        key = PyUnicode_Decode(name, n, o->codec, "strict");
    if (!key) {
        /* a name that is not text in the encoding: try it as bytes only */
        if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError))
            return NULL;
        PyErr_Clear();
    }
    else {
        if (PyDict_CheckExact(args)) {
            val = PyDict_GetItemWithError(args, key);
            Py_XINCREF(val);
        }
        else {
            val = PyObject_GetItem(args, key);
            if (!val && PyErr_ExceptionMatches(PyExc_KeyError))
                PyErr_Clear();
        }
        if (val || PyErr_Occurred()) {
            Py_DECREF(key);
            return val;
        }
    }
    bkey = PyBytes_FromStringAndSize(name, n);
    if (!bkey) {
        Py_XDECREF(key);
        return NULL;
    }
    if (PyDict_CheckExact(args)) {
        val = PyDict_GetItemWithError(args, bkey);
        Py_XINCREF(val);
    }
    else {
        val = PyObject_GetItem(args, bkey);
        if (!val && PyErr_ExceptionMatches(PyExc_KeyError))
            PyErr_Clear();
    }
    if (!val && !PyErr_Occurred()) {
        if (key)
            mc_raise(o->st->ProgrammingError, 0,
                     "format_query: no parameter named %R in the mapping (placeholder "
                     "%%(%U)s)", key, key);
        else
            mc_raise(o->st->ProgrammingError, 0,
                     "format_query: no parameter named %R in the mapping", bkey);
    }
    Py_DECREF(bkey);
    Py_XDECREF(key);
    return val;
}

static const char *const format_query_names[] = {
    "query", "args", "no_backslash_escapes", "charset", "encoding", "encoders",
    "binary_prefix", "portable",
};

/* `query` (bytes-like, not str) with `params` substituted under the options `o` (its
 * needs_mode is set here); None for portable=2 and a value that needs the mode.  The
 * body of format_query() and of Connection.format_statement(). */
static PyObject *
format_with(enc_opts *op, PyObject *query, PyObject *params)
{
    PyObject *seq = NULL, *result = NULL;
    enc_opts o = *op;
    Py_buffer qview;
    const char *q, *p, *end;
    Py_ssize_t qlen, used = 0, nparams = 0;
    int mapping = 0, needs_mode = 0;
    obuf b;

    b.obj = NULL;
    o.needs_mode = &needs_mode;

    if (PyDict_Check(params)) {
        mapping = 1;
    }
    else if (PyTuple_Check(params) || PyList_Check(params)) {
        Py_INCREF(params);
        seq = params;
    }
    else if (PyUnicode_Check(params) || PyBytes_Check(params) || PyByteArray_Check(params)) {
        mc_raise(o.st->ProgrammingError, 0,
                 "format_query: args must be a sequence or a mapping, not %.100s",
                 Py_TYPE(params)->tp_name);
        return NULL;
    }
    else {
        int m = is_mapping(params);
        if (m < 0)
            return NULL;
        if (m) {
            mapping = 1;
        }
        else if (Py_TYPE(params)->tp_iter == NULL && !PySequence_Check(params)) {
            mc_raise(o.st->ProgrammingError, 0,
                     "format_query: args must be a sequence or a mapping, not %.100s",
                     Py_TYPE(params)->tp_name);
            return NULL;
        }
        else {
            seq = PySequence_Fast(params, "format_query: args must be a sequence or a mapping");
            if (!seq)
                return NULL;
        }
    }

    if (PyObject_GetBuffer(query, &qview, PyBUF_SIMPLE) < 0) {
        Py_XDECREF(seq);
        return NULL;
    }
    q = (const char *)qview.buf;
    qlen = qview.len;
    end = q + qlen;
    if (seq)
        nparams = PySequence_Fast_GET_SIZE(seq);
    {
        /* literal text plus a guess for the values; grown as needed */
        Py_ssize_t est = nparams < 4096 ? 16 * (nparams + 1) : 65536;
        if (ob_init(&b, qlen <= PY_SSIZE_T_MAX - est ? qlen + est : qlen) < 0)
            goto error;
    }

    p = q;
    for (;;) {
        const char *pct = memchr(p, '%', (size_t)(end - p));
        if (!pct) {
            if (ob_put(&b, p, end - p) < 0)
                goto error;
            break;
        }
        if (ob_put(&b, p, pct - p) < 0)
            goto error;
        if (pct + 1 >= end) {
            raise_bad_format(&o, q, pct, end);
            goto error;
        }
        if (pct[1] == '%') {
            if (ob_putc(&b, '%') < 0)
                goto error;
            p = pct + 2;
        }
        else if (!mapping && pct[1] == 's') {
            /* re-read the size: an encoder may have changed a list */
            Py_ssize_t have = PySequence_Fast_GET_SIZE(seq);
            if (used < have) {
                PyObject *item = PySequence_Fast_GET_ITEM(seq, used);
                int rc;
                Py_INCREF(item);
                rc = lit_append(&b, item, &o);
                Py_DECREF(item);
                if (rc < 0)
                    goto error;
            }
            used++;
            p = pct + 2;
        }
        else if (mapping && pct[1] == '(') {
            const char *name = pct + 2, *c = name;
            int depth = 1;
            PyObject *val;
            int rc;
            for (; c < end; c++) {
                if (*c == '(')
                    depth++;
                else if (*c == ')' && --depth == 0)
                    break;
            }
            if (c >= end) {
                mc_raise(o.st->ProgrammingError, 0,
                         "incomplete format key: '%%(' at index %zd has no ')'", pct - q);
                goto error;
            }
            if (c + 1 >= end || c[1] != 's') {
                if (c + 1 >= end)
                    mc_raise(o.st->ProgrammingError, 0,
                             "incomplete format: %%(...) at index %zd is not followed by 's'",
                             pct - q);
                else
                    raise_bad_format(&o, q, c, end);
                goto error;
            }
            val = map_lookup(params, name, c - name, &o);
            if (!val)
                goto error;
            rc = lit_append(&b, val, &o);
            Py_DECREF(val);
            if (rc < 0)
                goto error;
            p = c + 2;
        }
        else if (mapping && pct[1] == 's') {
            mc_raise(o.st->ProgrammingError, 0,
                     "format_query: %%s placeholder at index %zd but args is a mapping; "
                     "use %%(name)s placeholders or pass a sequence", pct - q);
            goto error;
        }
        else if (!mapping && pct[1] == '(') {
            mc_raise(o.st->ProgrammingError, 0,
                     "format_query: %%(name)s placeholder at index %zd but args is a "
                     "sequence; pass a mapping or use %%s placeholders", pct - q);
            goto error;
        }
        else {
            raise_bad_format(&o, q, pct, end);
            goto error;
        }
    }
    if (seq) {
        Py_ssize_t have = PySequence_Fast_GET_SIZE(seq);
        if (used != have) {
            mc_raise(o.st->ProgrammingError, 0,
                     "wrong number of parameters: the query has %zd placeholder%s (%%s) "
                     "but %zd parameter%s given", used, used == 1 ? "" : "s",
                     have, have == 1 ? " was" : "s were");
            goto error;
        }
    }
    result = ob_finish(&b);
error:
    ob_discard(&b);
    PyBuffer_Release(&qview);
    Py_XDECREF(seq);
    if (!result && needs_mode) {    /* portable=2 and a value that needs the sql_mode */
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return result;
}

static int
check_query(const char *fname, PyObject *query)
{
    if (!PyObject_CheckBuffer(query) || PyUnicode_Check(query)) {
        PyErr_Format(PyExc_TypeError, "%s() query must be bytes, not %.100s", fname,
                     Py_TYPE(query)->tp_name);
        return -1;
    }
    return 0;
}

static PyObject *
query_unchanged(PyObject *query)
{
    if (PyBytes_CheckExact(query))
        return Py_NewRef(query);
    return PyBytes_FromObject(query);
}

static PyObject *
mc_encode_format_query(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                       PyObject *kwnames)
{
    PyObject *v[8];
    enc_opts o;

    if (parse_args("format_query", format_query_names, 8, 7, 2, args, nargs, kwnames, v) < 0)
        return NULL;
    if (check_query("format_query", v[0]) < 0)
        return NULL;
    if (v[1] == Py_None)
        return query_unchanged(v[0]);
    if (opts_init(&o, mc_state_from_module(module), v[2], v[3], v[4], v[5], v[6], v[7]) < 0)
        return NULL;
    return format_with(&o, v[0], v[1]);
}

/* The options of the last format_statement() call of one connection, kept with strong
 * references to the objects they were read from (opts borrows the codec name's UTF-8
 * and the encoders dict from them). */
struct mc_fmt_cache {
    PyObject *key[5];      /* no_backslash_escapes, charset, encoding, encoders,
                              binary_prefix; NULL: nothing kept */
    enc_opts o;
};

void
mc_fmt_cache_free(mc_fmt_cache **pc)
{
    mc_fmt_cache *c = *pc;
    if (!c)
        return;
    *pc = NULL;
    for (int i = 0; i < 5; i++)
        Py_CLEAR(c->key[i]);
    PyMem_Free(c);
}

int
mc_fmt_cache_traverse(mc_fmt_cache *c, visitproc visit, void *arg)
{
    if (c)
        for (int i = 0; i < 5; i++)
            Py_VISIT(c->key[i]);
    return 0;
}

/* Connection.format_statement(query, args, no_backslash_escapes, charset, encoding,
 * encoders, binary_prefix) -> bytes: format_query() with these options (portable=0),
 * all positional, the options read again only when one of the objects differs from the
 * last call's (or the encoders dict became empty or non-empty): the statement path's
 * call (mysqlc/cursors.py BaseCursor._format). */
PyObject *
mc_encode_format_cached(mc_fmt_cache **pc, mc_state *st, PyObject *const *args,
                        Py_ssize_t nargs)
{
    mc_fmt_cache *c = *pc;
    int hit;

    if (nargs != 7) {
        PyErr_Format(PyExc_TypeError, "format_statement() takes 7 positional arguments "
                     "(query, args, no_backslash_escapes, charset, encoding, encoders, "
                     "binary_prefix), %zd given", nargs);
        return NULL;
    }
    if (check_query("format_statement", args[0]) < 0)
        return NULL;
    if (args[1] == Py_None)
        return query_unchanged(args[0]);
    if (!c) {
        c = PyMem_Calloc(1, sizeof *c);
        if (!c)
            return PyErr_NoMemory();
        *pc = c;
    }
    hit = c->key[0] != NULL;
    for (int i = 0; hit && i < 5; i++)
        hit = c->key[i] == args[2 + i];
    if (hit && args[5] != Py_None &&
        (PyDict_GET_SIZE(args[5]) == 0) != (c->o.encoders == NULL))
        hit = 0;
    if (!hit) {
        /* read into a local first: opts_init may run Python code (__bool__) that calls
           this again on the same connection */
        enc_opts fresh;
        if (opts_init(&fresh, st, args[2], args[3], args[4], args[5], args[6], NULL) < 0)
            return NULL;
        for (int i = 0; i < 5; i++)
            Py_CLEAR(c->key[i]);
        c->o = fresh;
        for (int i = 0; i < 5; i++)
            c->key[i] = Py_NewRef(args[2 + i]);
    }
    /* (what c->o borrows is also held by the caller's arguments for this call: an encoder
       that formats on the same connection meanwhile cannot free it) */
    return format_with(&c->o, args[0], args[1]);
}

/* ------------------------------------------------------------------------ */

PyMethodDef mc_encode_methods[] = {
    {"escape_string", (PyCFunction)(void (*)(void))mc_encode_escape_string,
     METH_FASTCALL | METH_KEYWORDS,
     "escape_string(data, no_backslash_escapes=False, charset='utf8mb4', "
     "encoding='utf-8')\n--\n\n"
     "Escape `data` as mysql_real_escape_string does, without surrounding quotes.\n\n"
     "Parameters\n----------\n"
     "data : str or bytes-like\n    str is encoded with `encoding` (a Python codec name).\n"
     "no_backslash_escapes : bool\n    The server's NO_BACKSLASH_ESCAPES mode: only ' is "
     "doubled.\n"
     "charset : str\n    MySQL charset of the connection; big5, gbk, gb18030, sjis and "
     "cp932\n    keep multibyte characters intact.\n"
     "encoding : str\n    Python codec for str data.\n\n"
     "Returns\n-------\nbytes\n"},
    {"literal", (PyCFunction)(void (*)(void))mc_encode_literal,
     METH_FASTCALL | METH_KEYWORDS,
     "literal(obj, no_backslash_escapes=False, charset='utf8mb4', encoding='utf-8', "
     "encoders=None, binary_prefix=False, *, portable=False)\n--\n\n"
     "The SQL literal for one Python value, as bytes.\n\n"
     "None -> NULL, bool -> 1/0, int, float (repr + 'e0'), Decimal, str and bytes-like\n"
     "(quoted and escaped; bytes-like with _binary when binary_prefix), date, datetime,\n"
     "time, timedelta (quoted), tuple/list -> (a,b,...), set/frozenset -> 'a,b'.\n"
     "`encoders` maps a type to callable(obj) -> bytes|str, used verbatim.\n"
     "portable=1 (True): str/bytes literals that read the same with and without the\n"
     "server's NO_BACKSLASH_ESCAPES (no_backslash_escapes is then not used for them):\n"
     "quotes doubled, or _<charset> X'..' / _binary X'..' when the bytes contain a\n"
     "backslash (0x5C) not followed by % or _.  portable=2: the same, but a value\n"
     "with such a backslash makes the call return None (its literal needs the mode).\n\n"
     "Raises\n------\nValueError\n    portable with a charset that is not a MySQL "
     "charset name ([A-Za-z0-9_]);\n    portable not False/True/0/1/2.\n"
     "ProgrammingError\n    nan/inf floats, non-finite Decimal, unsupported types.\n"},
    {"format_query", (PyCFunction)(void (*)(void))mc_encode_format_query,
     METH_FASTCALL | METH_KEYWORDS,
     "format_query(query, args, no_backslash_escapes=False, charset='utf8mb4', "
     "encoding='utf-8', encoders=None, binary_prefix=False, *, portable=False)\n--\n\n"
     "Interpolate literals of `args` into the bytes `query`.\n\n"
     "args None returns query unchanged; a sequence fills %s placeholders in order; a\n"
     "mapping fills %(name)s placeholders. %% becomes %. The values are written as\n"
     "literal() writes them (portable: see literal; None for portable=2 when a\n"
     "value needs the mode).\n\n"
     "Raises\n------\nProgrammingError\n    placeholder/parameter count mismatch (naming "
     "both counts), missing\n    mapping key, unsupported format character, or a value "
     "literal() rejects.\n"},
    {NULL, NULL, 0, NULL},
};
