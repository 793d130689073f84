/* Shared by encode.c (literals, format_query) and escape.c (the quoting of str and bytes
 * values): the output buffer and the per-call options.  Internal to the extension. */
#ifndef MYSQLC_ENCODE_INTERNAL_H
#define MYSQLC_ENCODE_INTERNAL_H
#include "mysqlc.h"

/* ------------------------------------------------------------------------ */
/* output buffer: small results are built on the stack and copied once into
 * their bytes object; larger ones grow a bytes object in place, which is
 * shrunk to size at the end (no final copy of a large result)              */

#define OB_STACK 512

typedef struct {
    PyObject *obj;      /* NULL while the data is in `stack`; else a bytes of
                           refcount 1 (never the shared empty bytes) */
    char *p;            /* stack or PyBytes_AS_STRING(obj) */
    Py_ssize_t len;
    Py_ssize_t cap;
    char stack[OB_STACK];
} obuf;

static inline int
ob_init(obuf *b, Py_ssize_t cap)
{
    b->len = 0;
    if (cap <= OB_STACK) {
        b->obj = NULL;
        b->p = b->stack;
        b->cap = OB_STACK;
        return 0;
    }
    b->obj = PyBytes_FromStringAndSize(NULL, cap);
    if (!b->obj)
        return -1;
    b->p = PyBytes_AS_STRING(b->obj);
    b->cap = cap;
    return 0;
}

static inline int
ob_grow(obuf *b, Py_ssize_t extra)
{
    Py_ssize_t need, cap;
    if (extra > PY_SSIZE_T_MAX - b->len) {
        PyErr_NoMemory();
        return -1;
    }
    need = b->len + extra;
    cap = b->cap <= PY_SSIZE_T_MAX / 2 ? b->cap * 2 : PY_SSIZE_T_MAX;
    if (cap < need)
        cap = need;
    if (b->obj == NULL) {
        b->obj = PyBytes_FromStringAndSize(NULL, cap);
        if (!b->obj)
            return -1;
        memcpy(PyBytes_AS_STRING(b->obj), b->stack, (size_t)b->len);
    }
    else if (_PyBytes_Resize(&b->obj, cap) < 0) {   /* sets obj = NULL on failure */
        return -1;
    }
    b->p = PyBytes_AS_STRING(b->obj);
    b->cap = cap;
    return 0;
}

static inline int
ob_reserve(obuf *b, Py_ssize_t extra)
{
    return (b->cap - b->len >= extra) ? 0 : ob_grow(b, extra);
}

static inline int
ob_put(obuf *b, const void *s, Py_ssize_t n)
{
    if (ob_reserve(b, n) < 0)
        return -1;
    memcpy(b->p + b->len, s, (size_t)n);
    b->len += n;
    return 0;
}

static inline int
ob_putc(obuf *b, char c)
{
    if (b->len == b->cap && ob_grow(b, 1) < 0)
        return -1;
    b->p[b->len++] = c;
    return 0;
}

/* The result as a new bytes object; the buffer is left empty. */
static inline PyObject *
ob_finish(obuf *b)
{
    PyObject *r;
    if (b->obj == NULL)
        return PyBytes_FromStringAndSize(b->stack, b->len);
    if (b->len != b->cap && _PyBytes_Resize(&b->obj, b->len) < 0)
        return NULL;
    r = b->obj;
    b->obj = NULL;
    return r;
}

static inline void
ob_discard(obuf *b)
{
    Py_CLEAR(b->obj);
}

/* ------------------------------------------------------------------------ */
/* options, resolved once per call                                          */

typedef enum { ENC_UTF8, ENC_LATIN1, ENC_ASCII, ENC_CODEC } enc_kind;
/* what is known of the connection charset's well-formed byte sequences: every
 * byte (the single-byte charsets), UTF-8 of at most 4 / 3 bytes, the multibyte sets of
 * mb_valid, or only ASCII for sure (any other charset) */
enum { WF_ASCII, WF_ANY, WF_UTF8MB4, WF_UTF8MB3, WF_MB };
typedef enum { MB_NONE, MB_BIG5, MB_GBK, MB_GB18030, MB_SJIS } mb_kind;

typedef struct {
    mc_state *st;
    int nbe;               /* NO_BACKSLASH_ESCAPES */
    mb_kind mb;
    enc_kind enc;
    int ascii_compat;      /* codec encodes U+0000..U+007F to the same bytes */
    const char *codec;     /* Python codec name, borrowed from the argument */
    PyObject *encoders;    /* borrowed non-empty dict or NULL */
    int binary_prefix;
    int portable;          /* str/bytes literals read the same in either sql_mode: 0 no (the
                              nbe mode's escaping), 1 yes (a value that needs the mode as a hex
                              literal), 2 yes where that costs nothing (a value that needs the
                              mode sets *needs_mode and fails the call; see escape.c) */
    int *needs_mode;       /* portable 2: set to 1 when a value needs the mode, else NULL */
    int cs_wf;             /* portable: how intro's charset checks well-formedness */
    Py_ssize_t intro_len;  /* portable: length of `intro` */
    char intro[40];        /* portable: "_<charset> " introducer of a hex literal */
} enc_opts;

/* escape.c */
Py_ssize_t mc_enc_escape_into(char *out, const unsigned char *s, Py_ssize_t n, const enc_opts *o);
int mc_enc_put_quoted(obuf *b, const char *s, Py_ssize_t n, int binary, const enc_opts *o);

#endif
