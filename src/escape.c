/* The quoting of str and bytes values for client-side SQL literals (encode.c's literal()
 * and format_query()): mysql_real_escape_string's backslash escaping, quote doubling under
 * NO_BACKSLASH_ESCAPES, the multibyte charsets whose trail byte can be 0x5C, and the
 * portable form that reads the same in either sql_mode for the values whose literal does
 * not depend on it (doubled quotes), with a hex literal (the charset's introducer) as the
 * last resort for a value that holds a backslash; see the top of encode.c and
 * docs/compat.md, "Escaping").
 */
#include "encode_internal.h"

/* ------------------------------------------------------------------------ */
/* escaping: out must have room for 2*n bytes; returns the bytes written     */

static const unsigned char esc_table[256] = {
    [0x00] = '0', ['\n'] = 'n', ['\r'] = 'r', ['\\'] = '\\',
    ['\''] = '\'', ['"'] = '"', [0x1A] = 'Z',
};

static Py_ssize_t
escape_backslash(char *out, const unsigned char *s, Py_ssize_t n)
{
    char *w = out;
    const unsigned char *run = s, *p = s, *end = s + n;
    for (; p < end; p++) {
        unsigned char e = esc_table[*p];
        if (e) {
            size_t k = (size_t)(p - run);
            memcpy(w, run, k);
            w += k;
            w[0] = '\\';
            w[1] = (char)e;
            w += 2;
            run = p + 1;
        }
    }
    memcpy(w, run, (size_t)(end - run));
    w += end - run;
    return w - out;
}

static Py_ssize_t
escape_quotes(char *out, const unsigned char *s, Py_ssize_t n)
{
    char *w = out;
    const unsigned char *p = s, *end = s + n, *q;
    while ((q = memchr(p, '\'', (size_t)(end - p))) != NULL) {
        size_t k = (size_t)(q - p) + 1;    /* the run and the quote */
        memcpy(w, p, k);
        w += k;
        *w++ = '\'';
        p = q + 1;
    }
    memcpy(w, p, (size_t)(end - p));
    w += end - p;
    return w - out;
}

/* Length (2 or 4) of the valid multibyte character at p, or 0 (server's
 * my_ismbchar for the charset). */
static inline Py_ssize_t
mb_valid(mb_kind mb, const unsigned char *p, const unsigned char *end)
{
    unsigned c, d;
    if (end - p < 2)
        return 0;
    c = p[0];
    d = p[1];
    switch (mb) {
    case MB_BIG5:
        return (c >= 0xA1 && c <= 0xF9 &&
                ((d >= 0x40 && d <= 0x7E) || (d >= 0xA1 && d <= 0xFE))) ? 2 : 0;
    case MB_GBK:
        return (c >= 0x81 && c <= 0xFE &&
                ((d >= 0x40 && d <= 0x7E) || (d >= 0x80 && d <= 0xFE))) ? 2 : 0;
    case MB_SJIS:
        return (((c >= 0x81 && c <= 0x9F) || (c >= 0xE0 && c <= 0xFC)) &&
                ((d >= 0x40 && d <= 0x7E) || (d >= 0x80 && d <= 0xFC))) ? 2 : 0;
    case MB_GB18030:
        if (c < 0x81 || c > 0xFE)
            return 0;
        if ((d >= 0x40 && d <= 0x7E) || (d >= 0x80 && d <= 0xFE))
            return 2;
        if (d >= 0x30 && d <= 0x39 && end - p >= 4 &&
            p[2] >= 0x81 && p[2] <= 0xFE && p[3] >= 0x30 && p[3] <= 0x39)
            return 4;
        return 0;
    default:
        return 0;
    }
}

/* Can `c` begin a multibyte character?  (A superset of the server's lead
 * bytes is safe; a lead byte that is not followed by a valid character is
 * escaped.) */
static inline int
mb_lead(mb_kind mb, unsigned c)
{
    switch (mb) {
    case MB_BIG5:
        return c >= 0xA1 && c <= 0xF9;
    case MB_GBK:
    case MB_GB18030:
        return c >= 0x81 && c <= 0xFE;
    case MB_SJIS:
        return (c >= 0x81 && c <= 0x9F) || (c >= 0xE0 && c <= 0xFC);
    default:
        return 0;
    }
}

static Py_ssize_t
escape_mb(char *out, const unsigned char *s, Py_ssize_t n, mb_kind mb, int nbe)
{
    char *w = out;
    const unsigned char *p = s, *end = s + n;
    while (p < end) {
        unsigned c = *p;
        if (c >= 0x80) {
            Py_ssize_t l = mb_valid(mb, p, end);
            if (l) {
                memcpy(w, p, (size_t)l);
                w += l;
                p += l;
                continue;
            }
            if (!nbe && mb_lead(mb, c))
                *w++ = '\\';
            *w++ = (char)c;
            p++;
            continue;
        }
        if (nbe) {
            if (c == '\'')
                *w++ = '\'';
            *w++ = (char)c;
        }
        else if (esc_table[c]) {
            w[0] = '\\';
            w[1] = (char)esc_table[c];
            w += 2;
        }
        else {
            *w++ = (char)c;
        }
        p++;
    }
    return w - out;
}

Py_ssize_t
mc_enc_escape_into(char *out, const unsigned char *s, Py_ssize_t n, const enc_opts *o)
{
    if (n == 0)
        return 0;   /* s may be NULL for an empty buffer */
    if (o->mb != MB_NONE)
        return escape_mb(out, s, n, o->mb, o->nbe);
    if (o->nbe)
        return escape_quotes(out, s, n);
    return escape_backslash(out, s, n);
}

static const char hex_digits[16] = "0123456789ABCDEF";

/* Is [s, s+n) well-formed UTF-8 (Unicode 3-7: no overlong forms, no surrogates,
 * at most U+10FFFF; with maxlen 3 at most U+FFFF, as utf8mb3)? */
static int
utf8_wellformed(const unsigned char *s, Py_ssize_t n, int maxlen)
{
    const unsigned char *p = s, *end = s + n;
    while (p < end) {
        unsigned c = *p;
        if (c < 0x80) {
            p++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            if (end - p < 2 || (p[1] & 0xC0) != 0x80)
                return 0;
            p += 2;
        }
        else if (c >= 0xE0 && c <= 0xEF) {
            unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
            if (end - p < 3 || p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80)
                return 0;
            p += 3;
        }
        else if (c >= 0xF0 && c <= 0xF4 && maxlen >= 4) {
            unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
            if (end - p < 4 || p[1] < lo || p[1] > hi || (p[2] & 0xC0) != 0x80 ||
                (p[3] & 0xC0) != 0x80)
                return 0;
            p += 4;
        }
        else {
            return 0;
        }
    }
    return 1;
}

/* Would the server accept the span as a _<charset> X'..' literal (an introduced
 * literal must be well-formed in its charset: ER_INVALID_CHARACTER_STRING)?  0
 * also when not known for sure. */
static int
intro_wellformed(const unsigned char *s, Py_ssize_t n, const enc_opts *o)
{
    const unsigned char *p = s, *end = s + n;
    switch (o->cs_wf) {
    case WF_ANY:
        return 1;
    case WF_UTF8MB4:
        return utf8_wellformed(s, n, 4);
    case WF_UTF8MB3:
        return utf8_wellformed(s, n, 3);
    case WF_MB:
        while (p < end) {
            Py_ssize_t l;
            if (*p < 0x80 || (o->mb == MB_SJIS && *p >= 0xA1 && *p <= 0xDF)) {
                p++;       /* ASCII; sjis half-width katakana are single bytes */
                continue;
            }
            l = mb_valid(o->mb, p, end);
            if (!l)
                return 0;
            p += l;
        }
        return 1;
    default:
        for (; p < end; p++)
            if (*p >= 0x80)
                return 0;
        return 1;
    }
}

/* Portable form of a span that contains a backslash (0x5C): a hex literal,
 * _binary X'..' for a _binary value, else _<charset> X'..' so that it stays a
 * character string of the connection charset as the quoted form is -- unless the
 * bytes are not (known to be) well-formed in that charset: the server refuses
 * such an introduced literal, where it takes a quoted one as it is, so they are
 * written X'..', a binary string (what a BLOB column stores from either form). */
static int
put_hex(obuf *b, const unsigned char *s, Py_ssize_t n, int binary, const enc_opts *o)
{
    char *w;
    if (ob_reserve(b, 2 * n + o->intro_len + 11) < 0)
        return -1;
    w = b->p + b->len;
    if (binary) {
        memcpy(w, "_binary ", 8);
        w += 8;
    }
    else if (intro_wellformed(s, n, o)) {
        memcpy(w, o->intro, (size_t)o->intro_len);
        w += o->intro_len;
    }
    *w++ = 'X';
    *w++ = '\'';
    for (Py_ssize_t i = 0; i < n; i++) {
        w[0] = hex_digits[s[i] >> 4];
        w[1] = hex_digits[s[i] & 15];
        w += 2;
    }
    *w++ = '\'';
    b->len = w - b->p;
    return 0;
}

/* Does the span need the hex form in portable mode: a backslash that is not
 * followed by % or _?  ("\%" and "\_" read as those two bytes in both modes:
 * with backslash escapes the server keeps the backslash of these two, for LIKE
 * patterns; so a LIKE pattern stays a quoted string, also where the grammar takes
 * only one, as SHOW TABLES LIKE.) */
static inline int
needs_hex(const char *s, Py_ssize_t n)
{
    const char *p = s, *end = s + n, *q;
    while ((q = memchr(p, '\\', (size_t)(end - p))) != NULL) {
        if (q + 1 >= end || (q[1] != '%' && q[1] != '_'))
            return 1;
        p = q + 2;
    }
    return 0;
}

/* Append [_binary]'escaped' for the span.
 *
 * Portable mode (o->portable; what the cursors use while the connection does not
 * know the sql_mode for certain, Connection._escape_mode in mysqlc/connections.py:
 * after CALL, a multi-statement text, a session reset, with tracking off, ...):
 * the literal must read as the same bytes whether or not the server's
 * NO_BACKSLASH_ESCAPES is in effect.  The only byte whose meaning in a quoted
 * literal depends on the mode is the backslash, and '' is a quote in both modes,
 * so a span without 0x5C is written with its quotes doubled and every other byte
 * (NUL, LF, CR, 0x1A, ...) as it is -- also one whose backslashes are all followed
 * by % or _ (needs_hex).  A span with any other 0x5C byte (also as the trail byte
 * of a gbk/sjis/big5 character) needs the mode: portable 2 fails the call with
 * *o->needs_mode set (the caller confirms the mode with the server and formats
 * again with the mode's escaping, as mysqlclient writes it), portable 1 writes a
 * hex literal (the last resort: where the mode cannot be known at all, as a
 * statement after a mode change in one multi-statement text).  A quote cannot be
 * the trail byte of a multibyte character in any client charset, so the
 * byte-wise doubling is exact for those charsets too.
 *
 * Otherwise (portable 0, the mode known) mysql_real_escape_string's escaping for
 * o->nbe: 1x the size plus the escapes. */
int
mc_enc_put_quoted(obuf *b, const char *s, Py_ssize_t n, int binary, const enc_opts *o)
{
    char *w;
    if (n > (PY_SSIZE_T_MAX - 64) / 2) {
        PyErr_NoMemory();
        return -1;
    }
    if (o->portable) {
        if (n && needs_hex(s, n)) {
            if (o->portable == 2 && o->needs_mode) {
                *o->needs_mode = 1;
                PyErr_SetString(PyExc_ValueError, "the literal needs the sql_mode");
                return -1;
            }
            return put_hex(b, (const unsigned char *)s, n, binary, o);
        }
        if (ob_reserve(b, 2 * n + 9) < 0)
            return -1;
        w = b->p + b->len;
        if (binary) {
            memcpy(w, "_binary", 7);
            w += 7;
        }
        *w++ = '\'';
        if (n)
            w += escape_quotes(w, (const unsigned char *)s, n);
        *w++ = '\'';
        b->len = w - b->p;
        return 0;
    }
    if (ob_reserve(b, 2 * n + 9) < 0)
        return -1;
    w = b->p + b->len;
    if (binary) {
        memcpy(w, "_binary", 7);
        w += 7;
    }
    *w++ = '\'';
    w += mc_enc_escape_into(w, (const unsigned char *)s, n, o);
    *w++ = '\'';
    b->len = w - b->p;
    return 0;
}

