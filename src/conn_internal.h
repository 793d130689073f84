/* The C Connection's state, shared by conn.c (protocol, row decoding) and columnar.c
 * (columnar Arrow batches).  Internal to the extension. */
#ifndef MYSQLC_CONN_INTERNAL_H
#define MYSQLC_CONN_INTERNAL_H
#include "mysqlc.h"

/* ST_CURSOR: a server-side cursor (COM_STMT_EXECUTE with CURSOR_TYPE_READ_ONLY) is open
   and its rows are fetched with COM_STMT_FETCH. */
enum { ST_IDLE = 0, ST_ROWS = 1, ST_MORE = 2, ST_CURSOR = 3 };

typedef struct {
    PyObject_HEAD
    PyObject *module;
    mc_state *st;
    int fd;
    int in_use;
    int is_unix;
    /* receive buffer: bytes [rpos, rend) are unread */
    unsigned char *rbuf;
    size_t rcap, rpos, rend;
    mc_writer join;       /* multi-packet payloads are joined here */
    mc_writer wbuf;       /* commands are serialised here */
    uint8_t seq;
    double read_timeout, write_timeout;   /* seconds; < 0: none */
    /* handshake */
    PyObject *server_version;
    PyObject *auth_plugin_name;
    uint32_t server_caps;
    uint32_t client_flag;
    uint32_t thread_id;
    uint16_t server_status;
    uint8_t server_collation;
    uint8_t protocol_version;
    /* last OK */
    uint64_t affected_rows;
    uint64_t insert_id;
    uint16_t warning_count;
    PyObject *info;
    /* current result */
    int state;
    Py_ssize_t field_count;
    mc_column_plan *plan;
    Py_ssize_t plan_len;
    PyObject *description;
    PyObject *description_flags;
    PyObject *column_names;
    PyObject *column_tables;
    PyObject *converters;
    int has_converters;    /* some column of the current result uses a user converter */
    int binary;            /* the current command's rows use the binary protocol */
    int cursor_wanted;     /* COM_STMT_EXECUTE asked for a read-only cursor */
    uint32_t cursor_stmt;  /* statement whose cursor is open (ST_CURSOR) */
    PyObject *infile_handler;   /* callable(filename: bytes) -> iterable of bytes, or NULL */
    int replaying;         /* parsing bytes given to _replay(), no socket */
    int capturing;         /* record every received byte into `capture` */
    mc_writer capture;
    uint64_t rows_read;
    uint64_t result_seq;   /* incremented for every response read: identifies a result */
    /* TLS */
    SSL_CTX *ssl_ctx;
    SSL *ssl;
    /* compressed protocol (CLIENT_COMPRESS): raw frames are read into zbuf */
    int compress;
    uint8_t cseq;
    unsigned char *zbuf;
    size_t zcap, zpos, zend;
    mc_writer zsend;       /* plain packets assembled before compression */
    mc_writer zout;        /* compressed frames */
    /* authentication options */
    PyObject *auth_plugins;        /* dict name -> callable(password, data) -> bytes */
    PyObject *server_public_key;   /* bytes (PEM) or NULL */
    int allow_pubkey_request;
    int allow_cleartext;
    uint32_t ext_caps;     /* MariaDB extended capabilities agreed in the handshake */
    PyObject *meta_cache;  /* statement id -> tuple of column definition packets (bytes) */
    size_t max_packet;     /* the session's max_allowed_packet: 0 not read yet, SIZE_MAX unknown */
    int rows_mode;         /* store.c: 1 once a Store was read as rows: store() then keeps
                              nothing (rows are decoded in execute(), as before); 0 for a new
                              connection and after a columnar read: store() keeps the packets */
    /* interrupts, lost connections, last error, text columns as bytes */
    uint32_t sig_countdown; /* packets until the next PyErr_CheckSignals() (conn_read_packet) */
    const char *lost_at;   /* static text for CR_SERVER_LOST messages; NULL: "during query" */
    int closing;           /* drain(closing=True) began: close() follows, other users get
                              InterfaceError "the connection was closed" */
    int use_unicode;       /* 0: text columns decode to bytes (mysqlclient's use_unicode=False) */
    int last_errno;        /* errno / message / SQLSTATE of the last command's error; 0 if none */
    PyObject *last_error;  /* str or NULL */
    char last_sqlstate[6]; /* "00000" when the last command succeeded */
    /* what COM_CHANGE_USER repeats from the handshake */
    unsigned char scramble[64];
    size_t scramble_len;
    char first_plugin[64];
    uint8_t handshake_collation;
    PyObject *connect_attrs;   /* dict str -> str or NULL */
} mc_conn;

/* conn.c functions columnar.c uses; same contracts as their static counterparts. */
int mc_conn_enter(mc_conn *c);              /* 0, or -1 (in use / closed) */
void mc_conn_leave(mc_conn *c);
/* 1: a row packet in *p, *n; 0: end of the result set (state updated); -1: error */
int mc_conn_next_row(mc_conn *c, const unsigned char **p, size_t *n);
/* OperationalError(2027, "Malformed packet: what"), connection closed; NULL */
PyObject *mc_conn_malformed(mc_conn *c, const char *what);
/* COM_STMT_FETCH of up to n rows of the open server-side cursor; state becomes ST_ROWS */
int mc_conn_cursor_fetch(mc_conn *c, uint32_t n);

/* Decode one row packet of the current result (of c's plan) into a tuple, or a dict keyed by
   `keys`; new reference or NULL (a malformed row closes c's socket, as fetch()). */
PyObject *mc_conn_decode_row(mc_conn *c, const unsigned char *p, size_t n, PyObject *keys);
/* close c's socket (the stream is no longer trusted); no exception is set or changed */
void mc_conn_close_socket(mc_conn *c);

/* store.c: a buffered result kept as its row packets (mysqlc._core.Store).  `ctx` is no
   Python object and has no socket: it holds the copy of the result's plan and column names
   the row decoders and the columnar builder read. */
typedef struct {
    PyObject_HEAD
    mc_conn ctx;
    PyObject *keys;        /* tuple of dict keys (DictCursor) or NULL */
    unsigned char *buf;    /* rows back to back: 4-byte LE payload length, payload */
    size_t len, cap;
    int mapped;            /* buf is an anonymous mapping (else from PyMem) */
    size_t *index;         /* byte offset of rows 0, 256, 512, ... */
    size_t index_cap;
    Py_ssize_t nrows;
    Py_ssize_t pos_row;    /* position cache for sequential reads: row pos_row starts */
    size_t pos_off;        /* at byte pos_off */
    mc_conn *owner;        /* strong reference: told how the rows were read (rows_mode) */
} mc_store;

PyObject *mc_conn_store(mc_conn *c, PyObject *args, PyObject *kwds);
PyObject *mc_conn_prefer_store(mc_conn *c, PyObject *noargs);
/* byte offset of row `row` (0 <= row < nrows) in s->buf; no Python API */
size_t mc_store_offset(mc_store *s, Py_ssize_t row);
/* a stored row did not decode (the exception is set): close the connection that read it,
   as the row decoders do for wire data that does not parse (not for a user converter's
   error, which never reaches a store) */
void mc_store_distrust(mc_store *s);
/* the rows are being read as columns: the connection's next results are stored */
void mc_store_read_as_columns(mc_store *s);
/* columnar.c: methods of the Store type */
PyObject *mc_store_fetch_arrow(mc_store *s, PyObject *args, PyObject *kwds);
PyObject *mc_store_arrow_schema(mc_store *s, PyObject *args, PyObject *kwds);
/* columnar.c: strict UTF-8 check (as Python's decoder); 1 valid, 0 not */
int mc_utf8_valid(const unsigned char *s, size_t n);

/* columnar.c: methods of the Connection type */
PyObject *mc_conn_fetch_arrow(mc_conn *c, PyObject *args, PyObject *kwds);
PyObject *mc_conn_arrow_schema(mc_conn *c, PyObject *args, PyObject *kwds);
extern PyMethodDef mc_columnar_functions[];

#endif
