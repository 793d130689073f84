/* Fuzz harness: string escaping (src/encode.c escape_string), checked against a model
 * of the server's lexer.
 *
 * For each input the escaped bytes are read back the way the server reads the inside
 * of a '...' string literal (sql/sql_lex.cc get_text + unescape: a valid multibyte
 * character of the connection charset is taken whole, '\' takes the next byte, ''
 * is one quote, a lone ' ends the string).  The literal must not end early (that
 * would be SQL injection) and must read back to exactly the input bytes.
 *
 * Input: charset selector (1 byte), flags (1 byte: bit 0 NO_BACKSLASH_ESCAPES), data.
 * The multibyte rules below follow the server's ctype-big5.c, ctype-gbk.c,
 * ctype-sjis.c / ctype-cp932.c and ctype-gb18030.c ismbchar functions.
 */
#include "common.h"

static const char *const charsets[] = {"utf8mb4", "latin1", "binary", "gbk", "sjis", "big5",
                                       "cp932", "gb18030", "ascii"};
#define NCHARSETS (sizeof(charsets) / sizeof(charsets[0]))

static PyObject *escape_fn;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    mc_fuzz_init();
    escape_fn = PyObject_GetAttrString(mcf_core, "escape_string");
    if (!escape_fn) mcf_die("no escape_string");
    return 0;
}

/* The server's my_ismbchar(): length of the multibyte character at p, or 0. */
static size_t server_mbchar(const char *cs, const unsigned char *p, const unsigned char *e) {
    if (e - p < 2) return 0;
    unsigned c = p[0], d = p[1];
    if (!strcmp(cs, "gbk"))
        return (c >= 0x81 && c <= 0xFE && ((d >= 0x40 && d <= 0x7E) || (d >= 0x80 && d <= 0xFE))) ? 2 : 0;
    if (!strcmp(cs, "big5"))
        return (c >= 0xA1 && c <= 0xF9 && ((d >= 0x40 && d <= 0x7E) || (d >= 0xA1 && d <= 0xFE))) ? 2 : 0;
    if (!strcmp(cs, "sjis") || !strcmp(cs, "cp932"))
        return (((c >= 0x81 && c <= 0x9F) || (c >= 0xE0 && c <= 0xFC)) &&
                ((d >= 0x40 && d <= 0x7E) || (d >= 0x80 && d <= 0xFC))) ? 2 : 0;
    if (!strcmp(cs, "gb18030")) {
        if (c < 0x81 || c > 0xFE) return 0;
        if ((d >= 0x40 && d <= 0x7E) || (d >= 0x80 && d <= 0xFE)) return 2;
        if (d >= 0x30 && d <= 0x39 && e - p >= 4 && p[2] >= 0x81 && p[2] <= 0xFE &&
            p[3] >= 0x30 && p[3] <= 0x39)
            return 4;
        return 0;
    }
    return 0;   /* single-byte charsets; utf8mb4 characters have no ASCII bytes */
}

static unsigned char unescape_byte(unsigned char c) {
    switch (c) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case 'b': return '\b';
    case '0': return 0;
    case 'Z': return 0x1A;
    default: return c;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const char *cs = charsets[data[0] % NCHARSETS];
    int nbe = data[1] & 1;
    const unsigned char *in = data + 2;
    size_t n = size - 2;
    PyObject *r = PyObject_CallFunction(escape_fn, "y#Os", (const char *)in, (Py_ssize_t)n,
                                        nbe ? Py_True : Py_False, cs);
    if (!mc_fuzz_check(r)) mcf_die("escape_string failed on bytes");
    if (!PyBytes_Check(r)) mcf_die("escape_string did not return bytes");
    const unsigned char *o = (const unsigned char *)PyBytes_AS_STRING(r);
    const unsigned char *oe = o + PyBytes_GET_SIZE(r);
    if ((size_t)(oe - o) > 2 * n) mcf_die("escaped text longer than twice the input");
    /* the server's reading of '<o>' */
    unsigned char *back = malloc(n + 1);
    size_t k = 0;
    const unsigned char *p = o;
    while (p < oe) {
        size_t l = server_mbchar(cs, p, oe);
        if (l) {
            if (k + l > n) mcf_die("read-back longer than the input");
            memcpy(back + k, p, l);
            k += l;
            p += l;
            continue;
        }
        unsigned char c = *p;
        if (c == '\\' && !nbe) {
            if (p + 1 >= oe) mcf_die("escaped text ends in a lone backslash (eats the closing quote)");
            if (k + 1 > n) mcf_die("read-back longer than the input");
            back[k++] = unescape_byte(p[1]);
            p += 2;
            continue;
        }
        if (c == '\'') {
            if (p + 1 >= oe || p[1] != '\'')
                mcf_die("unescaped quote: the literal would end early (injection)");
            if (k + 1 > n) mcf_die("read-back longer than the input");
            back[k++] = '\'';
            p += 2;
            continue;
        }
        if (k + 1 > n) mcf_die("read-back longer than the input");
        back[k++] = c;
        p++;
    }
    if (k != n || (n && memcmp(back, in, n) != 0)) mcf_die("escaped text does not read back to the input");
    free(back);
    Py_DECREF(r);
    return 0;
}
