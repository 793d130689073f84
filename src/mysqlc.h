/* mysqlc._core: shared declarations for every C unit.
 *
 * Module state, protocol constants (names as in the MySQL client/server
 * protocol documentation) and the functions one unit exports to another.
 */
#ifndef MYSQLC_H
#define MYSQLC_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if PY_VERSION_HEX < 0x030A0000
static inline PyObject *Py_NewRef(PyObject *o) { Py_INCREF(o); return o; }
#endif

/* ---- capability flags (Protocol::CapabilityFlags) ---- */
#define CLIENT_LONG_PASSWORD                  0x00000001u
#define CLIENT_FOUND_ROWS                     0x00000002u
#define CLIENT_LONG_FLAG                      0x00000004u
#define CLIENT_CONNECT_WITH_DB                0x00000008u
#define CLIENT_NO_SCHEMA                      0x00000010u
#define CLIENT_COMPRESS                       0x00000020u
#define CLIENT_ODBC                           0x00000040u
#define CLIENT_LOCAL_FILES                    0x00000080u
#define CLIENT_IGNORE_SPACE                   0x00000100u
#define CLIENT_PROTOCOL_41                    0x00000200u
#define CLIENT_INTERACTIVE                    0x00000400u
#define CLIENT_SSL                            0x00000800u
#define CLIENT_IGNORE_SIGPIPE                 0x00001000u
#define CLIENT_TRANSACTIONS                   0x00002000u
#define CLIENT_RESERVED                       0x00004000u
#define CLIENT_SECURE_CONNECTION              0x00008000u
#define CLIENT_MULTI_STATEMENTS               0x00010000u
#define CLIENT_MULTI_RESULTS                  0x00020000u
#define CLIENT_PS_MULTI_RESULTS               0x00040000u
#define CLIENT_PLUGIN_AUTH                    0x00080000u
#define CLIENT_CONNECT_ATTRS                  0x00100000u
#define CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA 0x00200000u
#define CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS   0x00400000u
#define CLIENT_SESSION_TRACK                  0x00800000u
#define CLIENT_DEPRECATE_EOF                  0x01000000u
#define CLIENT_QUERY_ATTRIBUTES               0x08000000u   /* MySQL 8.0.23+ */

/* ---- server status flags (SERVER_STATUS_*) ---- */
#define SERVER_STATUS_IN_TRANS             0x0001u
#define SERVER_STATUS_AUTOCOMMIT           0x0002u
#define SERVER_MORE_RESULTS_EXISTS         0x0008u
#define SERVER_STATUS_CURSOR_EXISTS        0x0040u
#define SERVER_STATUS_LAST_ROW_SENT        0x0080u
#define SERVER_STATUS_NO_BACKSLASH_ESCAPES 0x0200u
#define SERVER_PS_OUT_PARAMS               0x1000u
#define SERVER_SESSION_STATE_CHANGED       0x4000u

/* ---- commands ---- */
#define COM_QUIT        0x01
#define COM_INIT_DB     0x02
#define COM_QUERY       0x03
#define COM_PING        0x0e
#define COM_STMT_PREPARE        0x16
#define COM_STMT_EXECUTE        0x17
#define COM_STMT_SEND_LONG_DATA 0x18
#define COM_STMT_CLOSE          0x19
#define COM_STMT_RESET          0x1a
#define COM_STMT_FETCH          0x1c
#define CURSOR_TYPE_READ_ONLY   0x01

/* ---- column types (enum_field_types) ---- */
#define MC_TYPE_DECIMAL     0
#define MC_TYPE_TINY        1
#define MC_TYPE_SHORT       2
#define MC_TYPE_LONG        3
#define MC_TYPE_FLOAT       4
#define MC_TYPE_DOUBLE      5
#define MC_TYPE_NULL        6
#define MC_TYPE_TIMESTAMP   7
#define MC_TYPE_LONGLONG    8
#define MC_TYPE_INT24       9
#define MC_TYPE_DATE        10
#define MC_TYPE_TIME        11
#define MC_TYPE_DATETIME    12
#define MC_TYPE_YEAR        13
#define MC_TYPE_NEWDATE     14
#define MC_TYPE_VARCHAR     15
#define MC_TYPE_BIT         16
#define MC_TYPE_TIMESTAMP2  17
#define MC_TYPE_DATETIME2   18
#define MC_TYPE_TIME2       19
#define MC_TYPE_JSON        245
#define MC_TYPE_NEWDECIMAL  246
#define MC_TYPE_ENUM        247
#define MC_TYPE_SET         248
#define MC_TYPE_TINY_BLOB   249
#define MC_TYPE_MEDIUM_BLOB 250
#define MC_TYPE_LONG_BLOB   251
#define MC_TYPE_BLOB        252
#define MC_TYPE_VAR_STRING  253
#define MC_TYPE_STRING      254
#define MC_TYPE_GEOMETRY    255

/* ---- column definition flags ---- */
#define MC_FLAG_NOT_NULL  0x0001u
#define MC_FLAG_UNSIGNED  0x0020u
#define MC_FLAG_BINARY    0x0080u

#define MC_CHARSET_BINARY 63

/* client error numbers (CR_*) */
#define CR_UNKNOWN_ERROR        2000
#define CR_CONNECTION_ERROR     2002
#define CR_CONN_HOST_ERROR      2003
#define CR_SERVER_GONE_ERROR    2006
#define CR_SERVER_HANDSHAKE_ERR 2012
#define CR_SERVER_LOST          2013
#define CR_COMMANDS_OUT_OF_SYNC 2014
#define CR_MALFORMED_PACKET     2027
#define CR_SSL_CONNECTION_ERROR 2026
#define CR_AUTH_PLUGIN_CANNOT_LOAD 2059
#define CR_AUTH_PLUGIN_ERR      2061

#define MC_MAX_PACKET 0xFFFFFFu

/* ---- module state ---- */
typedef struct {
    /* exception classes, defined in mysqlc/errors.py */
    PyObject *Warning;
    PyObject *Error;
    PyObject *InterfaceError;
    PyObject *DatabaseError;
    PyObject *DataError;
    PyObject *OperationalError;
    PyObject *IntegrityError;
    PyObject *InternalError;
    PyObject *ProgrammingError;
    PyObject *NotSupportedError;
    PyObject *error_class_for;   /* errors._error_class(errno) -> class */
    PyObject *collation_codecs;  /* dict int -> str|None (mysqlc/_charsets.py) */
    PyObject *Decimal;           /* decimal.Decimal */
    PyObject *empty_str;
    PyObject *empty_bytes;
    PyTypeObject *ConnectionType;
    PyObject *param_adapter;     /* mysqlc.converters._adapt_param, fetched on first use */
    PyTypeObject *StoreType;     /* store.c */
    PyTypeObject *AioStreamType; /* aio_stream.c */
    PyTypeObject *AioWaiterType; /* aio_stream.c */
    PyTypeObject *AioCallType;   /* aio_call.c */
    PyObject *aio_names;         /* aio_call.c: the attribute names it uses, interned */
    PyObject *aio_env;           /* aio_call.c: mysqlc.aio._statement's helpers, or NULL */
    PyTypeObject *ReadyType, *PoolBaseType, *PoolAcquireType, *AioCursorBaseType, *AioConnBaseType,
                 *PoolEnterType;   /* aio_pool.c */
    PyObject *ready_none;        /* aio_pool.c: the _Ready of None */
    PyObject *pool_names;        /* aio_pool.c: the attribute names it uses, interned */
    PyObject *pool_env;          /* aio_pool.c: mysqlc.aio.pool's helpers, or NULL */
    PyObject *s_done, *s_set_result, *s_is_closing, *s_loop_kw, *s_write_buffer_size;   /* aio_stream.c's names */
    /* Python's ssl module, loaded on the first connect(ssl_context=...) (tls_py.c) */
    PyObject *ssl_MemoryBIO, *ssl_WantRead, *ssl_ZeroReturn, *ssl_CertVerify, *ssl_Error;
} mc_state;

mc_state *mc_state_from_type(PyTypeObject *tp);
mc_state *mc_state_from_module(PyObject *module);

/* Raise `cls(errno, message)`; returns NULL. */
PyObject *mc_raise(PyObject *cls, int errnum, const char *fmt, ...);

/* ---- buffer.c: bounds-checked reader and growable writer ---- */
typedef struct {
    const unsigned char *p;
    const unsigned char *end;
} mc_reader;

static inline void mc_reader_init(mc_reader *r, const void *data, size_t len) {
    r->p = (const unsigned char *)data;
    r->end = r->p + len;
}
static inline size_t mc_reader_left(const mc_reader *r) { return (size_t)(r->end - r->p); }

/* Each returns 0, or -1 when the packet is too short (no exception set). */
int mc_reader_u8(mc_reader *r, uint8_t *v);
int mc_reader_u16(mc_reader *r, uint16_t *v);
int mc_reader_u24(mc_reader *r, uint32_t *v);
int mc_reader_u32(mc_reader *r, uint32_t *v);
int mc_reader_u64(mc_reader *r, uint64_t *v);
/* lenenc integer; *is_null set for 0xFB (may be NULL if caller forbids it) */
int mc_reader_lenenc(mc_reader *r, uint64_t *v, int *is_null);
int mc_reader_lenenc_str(mc_reader *r, const unsigned char **s, size_t *n);
int mc_reader_bytes(mc_reader *r, size_t n, const unsigned char **s);
/* NUL-terminated string; the NUL is consumed and not counted */
int mc_reader_nulstr(mc_reader *r, const unsigned char **s, size_t *n);

typedef struct {
    unsigned char *buf;
    size_t len;
    size_t cap;
} mc_writer;

int mc_writer_init(mc_writer *w, size_t cap);      /* -1 + MemoryError */
void mc_writer_free(mc_writer *w);
int mc_writer_reserve(mc_writer *w, size_t extra); /* -1 + MemoryError */
int mc_writer_put(mc_writer *w, const void *data, size_t n);
int mc_writer_u8(mc_writer *w, uint8_t v);
int mc_writer_u16(mc_writer *w, uint16_t v);
int mc_writer_u32(mc_writer *w, uint32_t v);
int mc_writer_lenenc(mc_writer *w, uint64_t v);
int mc_writer_lenenc_str(mc_writer *w, const void *data, size_t n);

static inline void mc_store_u24(unsigned char *p, uint32_t v) {
    p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); p[2] = (unsigned char)(v >> 16);
}
static inline uint32_t mc_load_u24(const unsigned char *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16);
}

/* ---- encode.c: client-side literals and query formatting ---- */
extern PyMethodDef mc_encode_methods[];
/* the options of a connection's last format_statement() call (Connection.fmt_cache) */
typedef struct mc_fmt_cache mc_fmt_cache;
PyObject *mc_encode_format_cached(mc_fmt_cache **pc, mc_state *st, PyObject *const *args,
                                  Py_ssize_t nargs);
void mc_fmt_cache_free(mc_fmt_cache **pc);
int mc_fmt_cache_traverse(mc_fmt_cache *c, visitproc visit, void *arg);
/* a temporal value's text literal without quotes; its length, 0 when not temporal */
#define MC_TEMPORAL_CHARS 48
Py_ssize_t mc_enc_temporal_chars(char *out, PyObject *obj);

/* ---- tls.c ---- */
#include <openssl/ssl.h>

enum { MC_SSL_DISABLED = 0, MC_SSL_PREFERRED = 1, MC_SSL_REQUIRED = 2,
       MC_SSL_VERIFY_CA = 3, MC_SSL_VERIFY_IDENTITY = 4 };

typedef struct {
    int mode;              /* MC_SSL_* */
    const char *ca, *capath, *cert, *key, *cipher;   /* UTF-8 paths / names or NULL */
    int min_version, max_version;                    /* TLS1_2_VERSION, ... or 0 */
    const unsigned char *fingerprints;  /* ssl_fingerprint: n_fingerprints SHA-256 digests */
    size_t n_fingerprints;
} mc_tls_opts;

/* What the TLS handshake established about the server's certificate (tls.c). */
typedef struct {
    int policy;              /* internal: how the verify callback treats errors */
    int mode;                /* the ssl_mode of the session (MC_SSL_*) */
    int deferred;            /* VERIFY_* without a CA and the chain is not trusted: the
                                certificate awaits the server's proof of the password
                                (MariaDB 11.4+, MDEV-31855) */
    const char *verified_by; /* "ca", "fingerprint", "password" or NULL (unverified) */
    unsigned char fp[32];    /* SHA-256 of the peer certificate (DER) */
    int have_fp;
    char reason[200];        /* OpenSSL's words for the deferred verification error */
} mc_tls_status;

SSL_CTX *mc_tls_context(mc_state *st, const mc_tls_opts *o);
SSL *mc_tls_session(mc_state *st, SSL_CTX *ctx, const char *host, const mc_tls_opts *o,
                    mc_tls_status *out);
int mc_tls_session_done(mc_state *st, SSL *ssl, const mc_tls_opts *o, mc_tls_status *out);
PyObject *mc_tls_handshake_error(mc_state *st, SSL *ssl, int err);
void mc_tls_errors(char *buf, size_t cap);
/* None (ssl NULL) or {'version', 'cipher', 'verified', 'verified_by'}; new reference */
PyObject *mc_tls_info(SSL *ssl, const mc_tls_status *st);
PyObject *mc_tls_info_dict(const char *version, const char *cipher, const mc_tls_status *st);

/* ---- auth.c ---- */
/* mysql_native_password scramble: out 20 bytes. Returns 0 or -1 with exception. */
int mc_auth_native(const unsigned char *pw, size_t pwlen,
                   const unsigned char *scramble, size_t scrlen, unsigned char out[20]);
/* caching_sha2_password fast-auth scramble: out 32 bytes. */
int mc_auth_caching_sha2(const unsigned char *pw, size_t pwlen,
                         const unsigned char *nonce, size_t nlen, unsigned char out[32]);
/* RSA-OAEP encryption of (password + NUL) XOR nonce with a PEM public key, for
   caching_sha2_password / sha256_password over plain TCP.  Returns a new bytes object
   or NULL with an exception (OperationalError 2061 for a bad key). */
PyObject *mc_auth_rsa_encrypt(mc_state *st, const unsigned char *pem, size_t pemlen,
                              const unsigned char *pw, size_t pwlen,
                              const unsigned char *nonce, size_t nlen);

/* ---- conn.c ---- */
int mc_conn_add_type(PyObject *module);
/* ---- store.c ---- */
int mc_store_add_type(PyObject *module);
int mc_aio_stream_add_type(PyObject *module);   /* aio_stream.c */
int mc_aio_call_add_type(PyObject *module);     /* aio_call.c */
int mc_aio_pool_add_types(PyObject *module);    /* aio_pool.c */

/* ---- decode_text.c ---- */
/* Per-column decoder kinds, chosen once per result set. */
typedef enum {
    MC_DEC_BYTES = 0,
    MC_DEC_STR_UTF8,
    MC_DEC_STR_LATIN1,
    MC_DEC_STR_ASCII,
    MC_DEC_STR_CODEC,     /* Python codec by name */
    MC_DEC_INT,           /* signed 64-bit text integer */
    MC_DEC_UINT,          /* unsigned 64-bit text integer */
    MC_DEC_FLOAT,
    MC_DEC_DECIMAL,
    MC_DEC_DATE,
    MC_DEC_DATETIME,
    MC_DEC_TIME,
    MC_DEC_CONVERTER,     /* user converter, called with str (or bytes for binary) */
} mc_dec_kind;

typedef struct {
    mc_dec_kind kind;
    uint8_t type;
    uint16_t flags;
    uint16_t charset;
    uint8_t decimals;       /* column definition's decimals (31: not fixed) */
    uint32_t length;        /* column definition's column_length */
    const char *codec;      /* for MC_DEC_STR_CODEC (borrowed from codec_obj) */
    PyObject *codec_obj;    /* owned str or NULL */
    PyObject *converter;    /* owned callable or NULL */
    mc_dec_kind arg_kind;   /* for MC_DEC_CONVERTER: how the converter's argument is made */
} mc_column_plan;

/* Decode one text-protocol value [s, s+n) per plan.  New ref or NULL. */
PyObject *mc_decode_text_value(mc_state *st, const mc_column_plan *col,
                               const unsigned char *s, size_t n);
/* Build a plan for a column; 0 or -1. */
int mc_plan_column(mc_state *st, mc_column_plan *col, uint8_t type, uint16_t flags,
                   uint16_t charset, PyObject *converters);
void mc_plan_clear(mc_column_plan *col);
/* CHAR/VARCHAR/TEXT/BLOB, ENUM, SET, JSON: the types the built-in decoder may give str. */
int mc_is_string_type(uint8_t type);
int mc_decode_init(void);   /* imports the datetime C API for this unit, makes mc_c_locale */
#include <locale.h>
/* The "C" locale, for strtod_l / number formatting whatever LC_NUMERIC the process uses;
   created once at module initialisation and never changed. */
extern locale_t mc_c_locale;

/* Calendar checks shared by the text and binary temporal decoders. */
static inline int mc_days_in_month(int y, int m) {
    static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return 29;
    return dm[m - 1];
}
static inline int mc_valid_date(int y, int m, int d) {
    return y >= 1 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 && d <= mc_days_in_month(y, m);
}

/* ---- text temporal parsers: the *parse* halves shared by the row decoders
   (decode_text.c) and the columnar builder (columnar.c).  Each returns 0 for a valid
   value, -1 for a zero, invalid or oddly shaped one (None / NULL, as mysqlclient). ---- */
static inline int mc_digits(const unsigned char *p, int count, int *out) {
    int v = 0;
    for (int i = 0; i < count; i++) {
        unsigned d = (unsigned)(p[i] - '0');
        if (d > 9) return -1;
        v = v * 10 + (int)d;
    }
    *out = v;
    return 0;
}
/* ".ffffff" (1-6 digits) or nothing -> microseconds */
static inline int mc_parse_frac(const unsigned char *p, size_t n, int *us) {
    if (n == 0) { *us = 0; return 0; }
    if (p[0] != '.' || n < 2 || n > 7) return -1;
    int v = 0;
    size_t i;
    for (i = 1; i < n; i++) {
        unsigned d = (unsigned)(p[i] - '0');
        if (d > 9) return -1;
        v = v * 10 + (int)d;
    }
    for (; i < 7; i++) v *= 10;
    *us = v;
    return 0;
}
typedef struct { int year, month, day, hour, minute, second, usecond; } mc_datetime;
/* "YYYY-MM-DD" */
static inline int mc_parse_text_date(const unsigned char *s, size_t n, mc_datetime *t) {
    memset(t, 0, sizeof(*t));
    if (n != 10 || s[4] != '-' || s[7] != '-' || mc_digits(s, 4, &t->year) < 0 ||
        mc_digits(s + 5, 2, &t->month) < 0 || mc_digits(s + 8, 2, &t->day) < 0 ||
        !mc_valid_date(t->year, t->month, t->day))
        return -1;
    return 0;
}
/* "YYYY-MM-DD HH:MM:SS[.ffffff]" ('T' accepted for the space; a bare date too) */
static inline int mc_parse_text_datetime(const unsigned char *s, size_t n, mc_datetime *t) {
    memset(t, 0, sizeof(*t));
    if (n == 10) {   /* a DATETIME never comes this short, but be liberal */
        if (s[4] != '-' || s[7] != '-') return -1;
    } else if (n < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
               s[13] != ':' || s[16] != ':' || mc_digits(s + 11, 2, &t->hour) < 0 ||
               mc_digits(s + 14, 2, &t->minute) < 0 || mc_digits(s + 17, 2, &t->second) < 0 ||
               mc_parse_frac(s + 19, n - 19, &t->usecond) < 0) {
        return -1;
    }
    if (mc_digits(s, 4, &t->year) < 0 || mc_digits(s + 5, 2, &t->month) < 0 ||
        mc_digits(s + 8, 2, &t->day) < 0)
        return -1;
    if (!mc_valid_date(t->year, t->month, t->day) || t->hour > 23 || t->minute > 59 ||
        t->second > 59)
        return -1;
    return 0;
}
/* "[-]H...H:MM:SS[.ffffff]" (up to 9 hour digits) -> sign and magnitude */
static inline int mc_parse_text_time(const unsigned char *s, size_t n, int *neg,
                                     long long *seconds, int *us) {
    const unsigned char *p = s, *e = s + n;
    *neg = 0;
    if (p < e && *p == '-') { *neg = 1; p++; }
    long hours = 0;
    int nd = 0, mi, sec;
    while (p < e && *p >= '0' && *p <= '9' && nd < 9) { hours = hours * 10 + (*p - '0'); p++; nd++; }
    if (nd == 0 || e - p < 6 || p[0] != ':' || p[3] != ':' ||
        mc_digits(p + 1, 2, &mi) < 0 || mc_digits(p + 4, 2, &sec) < 0 || mi > 59 || sec > 59 ||
        mc_parse_frac(p + 6, (size_t)(e - p - 6), us) < 0)
        return -1;
    *seconds = (long long)hours * 3600 + mi * 60 + sec;
    return 0;
}
/* MySQL's latin1 (Windows-1252 with C1 controls for its five holes): bytes 0x80-0x9F */
extern const Py_UCS2 mc_cp1252_high[32];

/* ---- binary.c ---- */
PyObject *mc_decode_binary_value(mc_state *st, const mc_column_plan *col,
                                 const unsigned char **pp, const unsigned char *e,
                                 int *short_packet);
/* One non-NULL parameter value in the binary format (for COM_STMT_BULK_EXECUTE). */
int mc_binary_encode_value(mc_state *st, mc_writer *w, PyObject *v, Py_ssize_t i,
                     const char *encoding, PyObject *dec, unsigned char *tp,
                     unsigned char *tflagp);
/* ---- param_adapt.c ---- */
int mc_param_is_nat(PyObject *v);
PyObject *mc_param_adapt(mc_state *st, PyObject *v);

PyObject *mc_binary_param(mc_state *st, PyObject *v);
int mc_encode_binary_params(mc_state *st, mc_writer *w, PyObject *params, const char *encoding,
                            PyObject **types, const char *long_mask);
int mc_encode_named_params(mc_state *st, mc_writer *w, PyObject *params, const char *long_mask,
                           PyObject *attrs, const char *encoding);

#endif
