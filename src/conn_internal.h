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
    /* interrupts, lost connections, last error, text columns as bytes */
    uint32_t sig_countdown; /* packets until the next PyErr_CheckSignals() (conn_read_packet) */
    int lost;              /* the socket was closed by an error or an interrupt, not close() */
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

/* columnar.c: methods of the Connection type */
PyObject *mc_conn_fetch_arrow(mc_conn *c, PyObject *args, PyObject *kwds);
PyObject *mc_conn_arrow_schema(mc_conn *c, PyObject *args, PyObject *kwds);
extern PyMethodDef mc_columnar_functions[];

#endif
