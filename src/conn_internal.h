/* The C Connection's state and the interfaces between the C core's layers (the map is
 * docs/architecture.md).  Internal to the extension.
 *
 *   engine     framing.c (packets in/out, compressed envelope, send buffer),
 *              packets.c (OK/ERR/EOF, client errors), session.c (handshake, auth),
 *              results.c (result sets, rows), prepared.c (COM_STMT_*): never touch a
 *              socket; they read packets with mc_read_packet() and frame output with
 *              mc_conn_send() into c->out.
 *   transport  transport.c: a blocking socket (+ TLS, tls.c) behind the mc_io interface.
 *   driver     conn.c: the Python type mysqlc._core.Connection, argument parsing, the
 *              thread guard; columnar.c and store.c read rows through the engine.
 */
#ifndef MYSQLC_CONN_INTERNAL_H
#define MYSQLC_CONN_INTERNAL_H
#include "mysqlc.h"
#include <sys/types.h>
#include <sys/uio.h>

/* ST_CURSOR: a server-side cursor (COM_STMT_EXECUTE with CURSOR_TYPE_READ_ONLY) is open
   and its rows are fetched with COM_STMT_FETCH. */
/* ST_INFILE: the file of a LOCAL INFILE request was sent; the server's answer is next
   (only seen between MC_NEED returns). */
enum { ST_IDLE = 0, ST_ROWS = 1, ST_MORE = 2, ST_CURSOR = 3, ST_INFILE = 4 };

#define RBUF_INITIAL (128 * 1024)
#define RBUF_KEEP (4 * 1024 * 1024)
#define MC_MAX_JOINED ((size_t)1 << 30)   /* max_allowed_packet cannot exceed 1 GiB */
#define MC_MIN_MAX_PACKET 1024   /* the smallest max_allowed_packet a server accepts */
#define MC_SIGNAL_PACKETS 1024u           /* packets between PyErr_CheckSignals() calls */
#define MARIADB_CLIENT_STMT_BULK_OPERATIONS (1u << 2)   /* of the extended (upper) 32 bits */
#define MARIADB_CLIENT_CACHE_METADATA (1u << 4)        /* of the extended (upper) 32 bits */
#define COM_STMT_BULK_EXECUTE 0xFA
#define CR_NET_PACKET_TOO_LARGE 2020

/* Returned (as an int or Py_ssize_t) by an engine function that needs more received bytes
   than are buffered, when no blocking transport is attached (c->io == NULL): nothing was
   lost, c->need says how many bytes from the read position the next packet needs, and the
   same call made again after mc_engine_feed() continues.  Never returned while c->io is
   set.  Callers that only test `< 0` treat it as an error with no exception set, so a flow
   that does not handle it fails loudly (SystemError) rather than misreading. */
#define MC_NEED (-2)

/* Where a lost connection was lost, for CR_SERVER_LOST messages: libmysqlclient says "at
   'reading initial communication packet'" for the greeting, "during query" otherwise. */
#define LOST_AT(c) ((c)->lost_at ? (c)->lost_at : "during query")

typedef struct mc_conn_s mc_conn;

/* A transport under the engine.  fill(): write c->out, then receive at least one byte
   into the engine (mc_engine_recv_buffer / mc_engine_received); 0 or -1 with the exception
   and the connection closed.  flush(): write c->out; 0 or -1.  close(): end the stream at
   once (may be NULL). */
typedef struct {
    int (*fill)(mc_conn *c);
    int (*flush)(mc_conn *c);
    void (*close)(mc_conn *c);
    /* wait(): up to `seconds` for received bytes (drain()); 1 they arrived (given to the
       engine or readable), 0 none, 2 interrupted by a signal that raised nothing (try
       again), -1 with the exception and the connection closed */
    int (*wait)(mc_conn *c, double seconds);
} mc_io;

typedef struct {
    const unsigned char *data;
    size_t len;
} span;

/* One queued response of a pipelined command (mc_conn.pipe_q, conn.c "pipelining"). */
typedef struct {
    PyObject *owner;     /* whose response it is: the caller's object (a reference), or
                            NULL until the method layer sets it (mc_pipe_set_owner) */
    size_t size;         /* bytes the command took in the send buffer (the bound) */
    uint32_t stmt;       /* COM_STMT_EXECUTE: its statement (MariaDB's metadata cache) */
    uint8_t seq;         /* the sequence id the response starts with */
    uint8_t binary;      /* a COM_STMT_EXECUTE: binary rows */
} mc_pipe_entry;

/* the default bound on what is in flight (Connection.pipeline): commands, bytes */
#define MC_PIPE_MAX_COMMANDS 256
#define MC_PIPE_MAX_BYTES (64 * 1024)

struct mc_conn_s {
    PyObject_HEAD
    PyObject *module;
    mc_state *st;
    const mc_io *io;      /* the transport driving the engine, or NULL (MC_NEED returns) */
    mc_writer out;        /* bytes for the wire, framed (and compressed) by the engine */
    mc_writer wout;       /* under TLS: c->out encrypted (and handshake records), to write */
    mc_writer tin;        /* under TLS: where the transport receives records */
    int tls_handshaking;  /* the TLS handshake is in progress (mc_engine_tls_handshake) */
    size_t need;          /* with MC_NEED: unread bytes the next packet needs in rbuf */
    int fd;
    int in_use;
    int is_unix;
    int secure;           /* TLS is up or the socket is a unix socket (the transport sets it;
                             plugins that send the password in clear need it) */
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
    PyObject *infile_exc;  /* ST_INFILE: the handler's exception, raised after the answer */
    int infile_seq_off;    /* ST_INFILE: the answer came out of sequence (the server gave up
                              reading the file: a packet it refused), see framing.c */
    int replaying;         /* parsing bytes given to _replay(), no socket */
    int capturing;         /* record every received byte into `capture` */
    mc_writer capture;
    uint64_t rows_read;
    uint64_t result_seq;   /* incremented for every response read: identifies a result */
    /* TLS */
    SSL_CTX *ssl_ctx;
    SSL *ssl;
    /* or TLS through a Python ssl.SSLContext (connect(ssl=ctx), tls_py.c): the session
       (ssl.SSLObject) and its two ssl.MemoryBIO objects; NULL otherwise */
    PyObject *pytls, *pytls_in, *pytls_out;
    mc_tls_status tls;     /* how the certificate was verified (tls.c, session.c) */
    /* compressed protocol (CLIENT_COMPRESS): raw frames are read into zbuf */
    int compress;
    uint8_t cseq;
    /* pipelining (Connection.pipeline(), see docs/architecture.md "Commands in flight"):
       the queue of the responses still to be read, in the order their commands went: a
       ring of pipe_cap entries, pipe_n of them held from pipe_first.  Each entry says how
       its response is read (binary rows, the sequence id it starts with, the prepared
       statement whose metadata MariaDB may skip) and whose it is (owner, the caller's
       object).  pipe_pending is how many the engine will read: pipe_n while the
       connection is up, 0 once it is lost (the entries stay until pipe_drop() hands
       their owners back).  The bound on what is in flight (pipe_max_commands commands,
       pipe_max_bytes bytes) is the engine's: pipe_room(). */
    mc_pipe_entry *pipe_q;
    Py_ssize_t pipe_cap, pipe_first, pipe_n;
    size_t pipe_bytes;
    Py_ssize_t pipe_max_commands;
    size_t pipe_max_bytes;
    Py_ssize_t pipe_pending;
    int pipe_reading;      /* a pipelined command's response is being read */
    /* a cancellation of the caller's call is being handled (mysqlc.aio sets it while it
       stops a cancelled statement): no further command starts (mc_check_idle), and a
       call of several commands (a bulk executemany) stops at its next command */
    int stop_requested;
    /* read while writing (transport.c, transport_py.c): the bytes the server sent while a
       write waited for it to take ours, kept raw (malloc'd: filled without the GIL) and
       given to the engine once that write is done, before anything is parsed.  A server
       blocked writing the answers of commands in flight stops reading; reading them while
       the write waits is what lets it go on (docs/architecture.md "Commands in flight"). */
    unsigned char *stash;
    size_t stash_len, stash_cap;
    int stashing;          /* the Python transport's write waits: _transport_buffer() and
                              _transport_received() fill the stash, not the engine */
    /* statement.c: one statement in one call (query_result), and the same read by an
       event loop (send_query_nowait + take_result): the response being read */
    int nowait;            /* the engine returns MC_NEED instead of waiting for bytes, and
                              writes without waiting for the transport to drain */
    int take_phase;        /* 0 none, 1 sent (head not read), 2 rows being kept */
    Py_ssize_t take_nc;    /* phase 2: the result's field count */
    PyObject *take_rows;   /* phase 2: the Store being filled, or the list of decoded rows */
    mc_fmt_cache *fmt_cache;   /* format_statement()'s options, or NULL (encode.c) */
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
    /* results.c: the last result set's column definitions (u32 length + payload each)
       and what was built from them, reused when the next head repeats them byte for byte
       (the same statement again: no plan, names or description tuples built) */
    mc_writer hc_bytes;
    Py_ssize_t hc_nc;      /* 0: nothing cached */
    int hc_binary, hc_has_conv;
    mc_column_plan *hc_plan;
    PyObject *hc_desc, *hc_flags, *hc_names, *hc_tables;
    /* store.c: how the connection's Stores were read.  rows_mode: the last one was read as
       rows (1) or columns (0; also a new connection); read_shape/read_rows: the same for
       the last MC_READ_SHAPES result shapes (a hash of the column definitions, 0: empty
       slot).  A Store whose shape (or, for a shape not seen, whose connection) was last
       read as rows also decodes its rows ahead in execute(); see store.c. */
    int rows_mode;
#define MC_READ_SHAPES 8
    uint64_t read_shape[MC_READ_SHAPES];
    unsigned char read_rows[MC_READ_SHAPES];
    unsigned read_next;
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
    void *engine_hs;       /* engine_api.c: a handshake driven from Python, or NULL */
    PyObject *pyio;        /* transport_py.c: the Python transport object, or NULL */
    PyObject *on_abandon;  /* callable(thread_id) after an interrupt or read timeout closed
                              the stream mid-command (mc_conn_abandoned), or NULL */
    int abandon_called;    /* on_abandon was called for this stream */
    /* session state tracking (CLIENT_SESSION_TRACK, packets.c) */
    PyObject *schema;          /* str: the last SESSION_TRACK_SCHEMA ("" none), NULL: none yet */
    PyObject *session_changes; /* dict: the last OK's session state changes, or NULL */
    PyObject *session_vars;    /* dict str -> str: every tracked system variable's last value */
    uint64_t track_seq;        /* OK packets with session state changes so far */
    uint64_t uncertain_seq;    /* track_seq of the last change reported before the end of a
                                  response (SERVER_MORE_RESULTS_EXISTS): a stored procedure
                                  restores sql_mode / character_set_client when it ends,
                                  unreported after a result set */
    int tracked_nbe;           /* NO_BACKSLASH_ESCAPES in the tracked sql_mode: 0 unknown,
                                  1 off, 2 on */
};

/* a result, its rows, further results or a server-side cursor left unread (the Python
   attribute `unread`; what a new command must read or drop first) */
static inline int mc_conn_unread(const mc_conn *c) {
    return c->state == ST_ROWS || c->state == ST_MORE || c->state == ST_CURSOR;
}

/* session.c: what an authentication exchange keeps between packets */
typedef struct {
    char plugin[64];
    unsigned char nonce[64];
    size_t nonce_len;      /* without the trailing NULs */
    size_t nonce_raw_len;  /* as sent: what a Python plugin is given */
    unsigned char scramble20[20];  /* the native scramble the zero-configuration TLS proof
                                      hashes (Connector/C's scramble_buff) */
    PyObject *pyx;         /* a Python plugin's exchange object (later rounds), or NULL */
    int pubkey_requested;
    int rounds;            /* packets of the exchange so far (bounded) */
} auth_state;

/* conn.c -> session.c / transport.c: the connect() options the handshake uses */
typedef struct {
    mc_tls_opts tls;
    PyObject *ssl_context;   /* ssl.SSLContext (borrowed) whose session runs TLS, or NULL */
    const char *host;
    double connect_timeout;
    unsigned collation;
    uint32_t extra_flags;
    int want_compress;
    int no_session_track;   /* do not ask for CLIENT_SESSION_TRACK */
    PyObject *attrs;   /* dict str -> str or NULL */
} connect_opts;

/* session.c: the connection phase as a state machine (mc_handshake_step).  The spans and
   `o` are the caller's and must stay valid until the handshake is done. */
enum { HS_GREETING = 0, HS_TLS, HS_AUTH, HS_DONE };
#define MC_HS_TLS 1        /* mc_handshake_step: upgrade the transport to TLS now */
typedef struct {
    int step;
    auth_state a;
    mc_writer authout;     /* the current authentication response (wiped after use) */
    span user, password, database;
    const connect_opts *o;
    unsigned char zeros[23];   /* filler of the SSLRequest / HandshakeResponse41 */
} mc_handshake;

extern const mc_io mc_socket_io;   /* transport.c: a connected socket */
extern const mc_io mc_replay_io;   /* transport.c: _replay() data, complete, no socket */
extern const mc_io mc_py_io;       /* transport_py.c: a transport written in Python (mysqlc.aio) */

/* transport_py.c */
int mc_py_attach(mc_conn *c, PyObject *obj, int is_unix);
void mc_py_send_nowait(mc_conn *c);
PyObject *Conn_transport_buffer(mc_conn *c, PyObject *arg);
PyObject *Conn_transport_received(mc_conn *c, PyObject *arg);
int mc_py_recv_space(mc_conn *c, Py_ssize_t hint, unsigned char **dst, size_t *room);
int mc_py_recv_done(mc_conn *c, Py_ssize_t n);
/* aio_stream.c: the asyncio stream's C half (mysqlc.aio._transport.StreamProtocol) */
int mc_aio_stream_write(PyObject *stream, PyObject *data, double timeout, int block);
PyObject *mc_aio_stream_wait(PyObject *stream);
int mc_aio_stream_ready(PyObject *stream);
int mc_aio_stream_open(PyObject *stream);
int mc_aio_stream_held(mc_state *st, PyObject *stream);
/* aio_call.c: the checks src/aio_pool.c shares */
int mc_aio_on_running_loop(mc_state *st, PyObject *loop);
int mc_pool_idle_check(mc_state *st, PyObject *core, PyObject *stream);
PyObject *mc_session_need(mc_state *st, PyObject *core, PyObject *seq, PyObject *autocommit);
/* `it` sent `arg`: 1 (*out yielded), 0 (*out returned), -1 (exception); PyIter_Send for
   every supported Python */
int mc_aio_send_to(PyObject *it, PyObject *arg, PyObject **out);
/* StopIteration(v) raised (v's reference taken; a tuple or exception value wrapped); NULL */
PyObject *mc_aio_stop_with(PyObject *v);

#define MC_TRANSPORT_PY_METHODS \
    {"_transport_buffer", (PyCFunction)Conn_transport_buffer, METH_O, \
     "_transport_buffer(sizehint) -> memoryview of the engine's receive space"}, \
    {"_transport_received", (PyCFunction)Conn_transport_received, METH_O, \
     "_transport_received(n): n bytes were written into _transport_buffer()'s view"},

/* framing.c */
int mc_buf_make_room(unsigned char **buf, size_t *cap, size_t *pos, size_t *end, size_t need);
int mc_frame_inflate(mc_conn *c);
size_t mc_frame_zneed(mc_conn *c);
int mc_engine_recv_buffer(mc_conn *c, size_t min, unsigned char **dst, size_t *room);
int mc_engine_received(mc_conn *c, size_t n);
int mc_engine_feed(mc_conn *c, const unsigned char *data, size_t len);
int mc_frame_complete(mc_conn *c, size_t count);
int mc_frame_next(mc_conn *c, const unsigned char **payload, size_t *len);
int mc_read_packet_slow(mc_conn *c, const unsigned char **payload, size_t *len);
int mc_frame_wait(mc_conn *c, size_t count);
int mc_frame_peek(mc_conn *c, const unsigned char **payload, size_t *len);
int mc_conn_check_signals(mc_conn *c);
void mc_conn_abandoned(mc_conn *c);
void mc_engine_tls_start(mc_conn *c, SSL *ssl);
int mc_engine_tls_handshake(mc_conn *c);

/* TLS is on: an OpenSSL session of our own (tls.c) or a Python one (tls_py.c) */
#define MC_TLS_ON(c) ((c)->ssl != NULL || (c)->pytls != NULL)

/* tls_py.c: TLS through a Python ssl.SSLContext, over ssl.MemoryBIO objects */
#define MC_PYTLS_EOF (-2)
int mc_pytls_start(mc_conn *c, PyObject *ctx, const char *host, int mode);
int mc_pytls_handshake(mc_conn *c);
int mc_pytls_done(mc_conn *c);
int mc_pytls_feed(mc_conn *c, const unsigned char *data, size_t n);
int mc_pytls_read(mc_conn *c, unsigned char *dst, size_t room);
int mc_pytls_encrypt(mc_conn *c, const unsigned char *src, size_t n);
int mc_pytls_take_out(mc_conn *c, mc_writer *w);
int mc_pytls_pending_out(mc_conn *c);
void mc_pytls_free(mc_conn *c);
PyObject *mc_pytls_info(mc_conn *c);
int mc_engine_wire_out(mc_conn *c, const unsigned char **buf, size_t *len);
void mc_engine_wire_sent(mc_conn *c);
int mc_conn_send(mc_conn *c, const unsigned char *prefix, size_t plen, const unsigned char *data, size_t dlen);
int mc_conn_flush(mc_conn *c);
int mc_conn_command(mc_conn *c, uint8_t cmd, const unsigned char *arg, size_t arglen);
int mc_conn_command_head(mc_conn *c, const unsigned char *head, size_t hlen,
                         const unsigned char *arg, size_t arglen);
void mc_conn_close_socket(mc_conn *c);

/* transport.c */
double mc_monotonic(void);
int mc_wait_fd(int fd, short events, double timeout);
ssize_t mc_transport_recv(mc_conn *c, unsigned char *dst, size_t room);
int mc_send_all(mc_conn *c, struct iovec *iov, int iovcnt);
int mc_open_socket(mc_conn *c, const char *host, int port, const char *unix_path, double timeout);
int mc_start_tls(mc_conn *c, const connect_opts *o);
void mc_transport_send_nowait(mc_conn *c);

/* packets.c */
void mc_conn_record_error(mc_conn *c, int errnum, PyObject *msg, const char *sqlstate);
void mc_conn_clear_error(mc_conn *c);
void mc_set_exc_sqlstate(PyObject *exc, const char *sqlstate);
PyObject *mc_client_error_msg(mc_conn *c, PyObject *cls, int errnum, PyObject *msg);
PyObject *mc_conn_client_error(mc_conn *c, PyObject *cls, int errnum, const char *fmt, ...);
int mc_pipe_send_ready(mc_conn *c);
int mc_check_stop(mc_conn *c);
int mc_pipe_sent(mc_conn *c, int binary, uint32_t stmt);
void mc_pipe_set_owner(mc_conn *c, PyObject *owner);
void mc_pipe_clear(mc_conn *c);
PyObject *mc_conn_raise_closed(mc_conn *c);
PyObject *mc_conn_fatal(mc_conn *c, PyObject *cls, int errnum, const char *fmt, ...);
PyObject *mc_conn_malformed(mc_conn *c, const char *what);
int mc_parse_ok(mc_conn *c, const unsigned char *p, size_t n);
PyObject *mc_raise_err_packet(mc_conn *c, const unsigned char *p, size_t n);
int mc_parse_eof(mc_conn *c, const unsigned char *p, size_t n);
void mc_track_reset(mc_conn *c, PyObject *schema);
int mc_no_backslash_escapes(mc_conn *c);
PyObject *mc_get_schema(mc_conn *c, void *x);
PyObject *mc_get_session_changes(mc_conn *c, void *x);
PyObject *mc_get_session_variables(mc_conn *c, void *x);
PyObject *mc_get_track_seq(mc_conn *c, void *x);
PyObject *mc_get_uncertain_seq(mc_conn *c, void *x);

/* results.c */
void mc_clear_result(mc_conn *c);
PyObject *mc_decode_name(const unsigned char *s, size_t n);
void mc_after_result(mc_conn *c);
int mc_send_file_chunk(mc_conn *c, const unsigned char *d, size_t n);
Py_ssize_t mc_local_infile(mc_conn *c, const unsigned char *name, size_t name_n);
void mc_plan_text_as_bytes(mc_column_plan *col);
Py_ssize_t mc_read_query_response(mc_conn *c);
PyObject *mc_value_error(mc_conn *c, Py_ssize_t i);
PyObject *mc_decode_binary_row(mc_conn *c, const unsigned char *p, size_t n, PyObject *keys);
PyObject *mc_conn_decode_row(mc_conn *c, const unsigned char *p, size_t n, PyObject *keys);
int mc_conn_next_row(mc_conn *c, const unsigned char **p, size_t *n);
int mc_conn_cursor_fetch(mc_conn *c, uint32_t n);
/* `before`: NULL, or where a failed call puts the rows it decoded before the error (a
   new list; left as it was when there were none) */
PyObject *mc_fetch_rows_bounded(mc_conn *c, Py_ssize_t limit, PyObject *keys, size_t max_bytes,
                                PyObject **before);
PyObject *mc_fetch_rows(mc_conn *c, Py_ssize_t limit, PyObject *keys);
int mc_skip_rows(mc_conn *c);

/* session.c */
int mc_secure_transport(mc_conn *c);
int mc_auth_first(mc_conn *c, auth_state *a, span pw, mc_writer *out);
int mc_put_attrs(mc_writer *w, PyObject *attrs);
const char *mc_ssl_mode_name(int m);
int mc_auth_exchange(mc_conn *c, auth_state *a, span password, mc_writer *authout);
int mc_do_handshake(mc_conn *c, span user, span password, span database, const connect_opts *o);
int mc_handshake_init(mc_handshake *h, span user, span password, span database, const connect_opts *o);
void mc_handshake_clear(mc_handshake *h);
int mc_handshake_step(mc_conn *c, mc_handshake *h);
int mc_change_user(mc_conn *c, span user, span password, span database);

/* prepared.c: the flows, on C arguments (the methods: prepared_methods.c) */
int mc_skip_column_defs(mc_conn *c, unsigned count, PyObject *record);
int mc_read_prepare_response(mc_conn *c, uint32_t *stmt_id, unsigned *nparams, unsigned *ncols);
int mc_stmt_prepare(mc_conn *c, const unsigned char *sql, size_t n, uint32_t *stmt_id,
                    unsigned *nparams, unsigned *ncols);
Py_ssize_t mc_stmt_execute(mc_conn *c, unsigned long stmt_id, PyObject *seq, PyObject *types,
                           int cursor, Py_ssize_t threshold, const char *encoding,
                           PyObject *attrs, int send_only, PyObject **newtypes);
PyObject *mc_fetch_exception(void);
int mc_one_trip_supported(mc_conn *c);
int mc_stmt_prepare_execute(mc_conn *c, const unsigned char *sql, size_t n, PyObject *seq,
                            const char *encoding, uint32_t *stmt_id, unsigned *nparams,
                            unsigned *ncols, Py_ssize_t *nc, PyObject **newtypes,
                            PyObject **error);
Py_ssize_t mc_query_with_attributes(mc_conn *c, const unsigned char *sql, size_t n,
                                    PyObject *attrs, const char *encoding);
int mc_stmt_reset(mc_conn *c, unsigned long stmt_id);
int mc_stmt_close(mc_conn *c, unsigned long stmt_id);
/* a COM_STMT_BULK_EXECUTE: planned (rows encoded) by mc_bulk_plan, sent by mc_bulk_send */
typedef struct {
    PyObject *seq, *first;          /* the rows (PySequence_Fast), the first row's */
    Py_ssize_t np;                  /* parameters per row */
    unsigned char *kinds;           /* nrows * np: each value's kind */
    unsigned char *btypes;          /* nbatches * np: each batch's column kinds */
    size_t *bstart, nb;             /* first row of each batch */
    mc_writer w;                    /* every command's rows of values */
    size_t *bounds, nbounds;        /* byte offset in w where each command ends */
    size_t *bbatch;                 /* the batch of each command */
    unsigned char *wire;            /* 2 * np: a command's wire types */
    size_t header;                  /* a command's bytes before its values */
    unsigned long long total;       /* mc_bulk_send: affected rows */
    int prepared;                   /* the one-trip prepare succeeded, with: */
    uint32_t new_id;
    unsigned new_np, new_nc;
} mc_bulk;
enum { MC_BULK_READY = 0, MC_BULK_EMPTY, MC_BULK_NOT_BINARY, MC_BULK_UNSUPPORTED };
/* at most this many runs of one column type in a text cursor's bulk executemany, else
   MC_BULK_NOT_BINARY (mc_bulk_plan: the text path sends fewer commands) */
#define MC_BULK_MAX_RUNS 4
int mc_bulk_plan(mc_conn *c, mc_bulk *bk, PyObject *rows, PyObject *prepare,
                 Py_ssize_t max_payload, const char *encoding, int exact);
int mc_bulk_send(mc_conn *c, mc_bulk *bk, unsigned long stmt_id, const unsigned char *prep,
                 size_t prep_len);
void mc_bulk_free(mc_bulk *bk);
int mc_send_query(mc_conn *c, const unsigned char *sql, size_t n);
int mc_no_query_attributes(mc_conn *c);
#define PARAMETER_COUNT_AVAILABLE 0x08   /* COM_STMT_EXECUTE flags */

/* prepared_methods.c: the Connection methods over prepared.c (table in conn.c) */
PyObject *Conn_stmt_prepare(mc_conn *c, PyObject *arg);
PyObject *Conn_stmt_execute(mc_conn *c, PyObject *args, PyObject *kwds);
PyObject *Conn_stmt_bulk_execute(mc_conn *c, PyObject *args, PyObject *kwds);
PyObject *Conn_stmt_prepare_execute(mc_conn *c, PyObject *args, PyObject *kwds);
PyObject *Conn_stmt_fetch(mc_conn *c, PyObject *args, PyObject *kwds);
PyObject *Conn_stmt_reset(mc_conn *c, PyObject *arg);
PyObject *Conn_stmt_close(mc_conn *c, PyObject *arg);
PyObject *Conn_query_attributes(mc_conn *c, PyObject *args);
PyObject *mc_get_query_attributes(mc_conn *c, void *x);

/* results.c: forget the cached column definitions (converters or use_unicode changed) */
void mc_head_cache_forget(mc_conn *c);

/* statement.c: one statement in one call (methods of Connection) */
PyObject *mc_conn_format_statement(mc_conn *c, PyObject *const *args, Py_ssize_t nargs);
PyObject *mc_conn_query_result(mc_conn *c, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames);
PyObject *mc_conn_send_query_nowait(mc_conn *c, PyObject *arg);
PyObject *mc_conn_send_ping_nowait(mc_conn *c, PyObject *noargs);
PyObject *mc_conn_take_result(mc_conn *c, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames);
PyObject *mc_conn_take_head(mc_conn *c, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames);
PyObject *mc_conn_take_rows(mc_conn *c, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames);
PyObject *mc_conn_get_take_pending(mc_conn *c, void *x);

/* engine_api.c: the _engine_* methods of Connection (listed in conn.c's method table) */
void mc_engine_api_free(mc_conn *c);
PyObject *Conn_engine_start(mc_conn *c, PyObject *args, PyObject *kwds);
PyObject *Conn_engine_handshake(mc_conn *c, PyObject *args, PyObject *kwds);
PyObject *Conn_engine_handshake_step(mc_conn *c, PyObject *noargs);
PyObject *Conn_engine_feed(mc_conn *c, PyObject *arg);
PyObject *Conn_engine_output(mc_conn *c, PyObject *noargs);
PyObject *Conn_engine_response(mc_conn *c, PyObject *noargs);
PyObject *Conn_engine_fetch(mc_conn *c, PyObject *args, PyObject *kwds);
PyObject *Conn_engine_prepare_response(mc_conn *c, PyObject *noargs);
PyObject *Conn_engine_command(mc_conn *c, PyObject *args);
PyObject *Conn_engine_need(mc_conn *c, PyObject *noargs);
#define MC_ENGINE_METHODS \
    {"_engine_start", (PyCFunction)(void (*)(void))Conn_engine_start, METH_VARARGS | METH_KEYWORDS, NULL}, \
    {"_engine_handshake", (PyCFunction)(void (*)(void))Conn_engine_handshake, METH_VARARGS | METH_KEYWORDS, NULL}, \
    {"_engine_handshake_step", (PyCFunction)Conn_engine_handshake_step, METH_NOARGS, NULL}, \
    {"_engine_feed", (PyCFunction)Conn_engine_feed, METH_O, NULL}, \
    {"_engine_output", (PyCFunction)Conn_engine_output, METH_NOARGS, NULL}, \
    {"_engine_response", (PyCFunction)Conn_engine_response, METH_NOARGS, NULL}, \
    {"_engine_fetch", (PyCFunction)(void (*)(void))Conn_engine_fetch, METH_VARARGS | METH_KEYWORDS, NULL}, \
    {"_engine_prepare_response", (PyCFunction)Conn_engine_prepare_response, METH_NOARGS, NULL}, \
    {"_engine_command", (PyCFunction)Conn_engine_command, METH_VARARGS, NULL}, \
    {"_engine_need", (PyCFunction)Conn_engine_need, METH_NOARGS, NULL},

/* conn.c */
int mc_conn_enter(mc_conn *c);
void mc_conn_leave(mc_conn *c);
int mc_get_span(PyObject *o, span *s, Py_buffer *view, const char *name);
int mc_check_idle(mc_conn *c);
/* transport.c: room for `min` more bytes at the end of the stash (0 or -1, no exception:
   callable without the GIL); the stash given to the engine and emptied (0, or -1 with the
   exception and the connection closed); the stash dropped (its memory freed). */
int mc_stash_reserve(mc_conn *c, size_t min);
int mc_stash_feed(mc_conn *c);
void mc_stash_free(mc_conn *c);
int mc_read_max_packet(mc_conn *c);
size_t mc_packet_limit(mc_conn *c, size_t payload);
int mc_check_packet(mc_conn *c, size_t payload, const char *what);
int mc_infile_limit_prepare(mc_conn *c, const unsigned char *sql, size_t n);
/* the statement text contains LOCAL in any case (may be LOAD DATA LOCAL INFILE) */
int mc_mentions_local(const unsigned char *s, size_t n);
PyObject *mc_simple_command(mc_conn *c, uint8_t cmd, const unsigned char *arg, size_t len);
int mc_conn_add_type(PyObject *module);

/* One logical packet: 0 with *payload and *len (valid until the next read), -1 with the
   exception, MC_NEED (no transport: not complete yet).  The fast path (a whole
   single-fragment packet buffered) is inline: it is taken once per row. */
static inline int mc_read_packet(mc_conn *c, const unsigned char **payload, size_t *len) {
    size_t avail = c->rend - c->rpos;
    if (avail >= 4 && c->out.len == 0) {   /* (pending output is written first: slow path) */
        const unsigned char *h = c->rbuf + c->rpos;
        size_t plen = mc_load_u24(h);
        if (plen < MC_MAX_PACKET && avail >= 4 + plen && (h[3] == c->seq || c->compress)) {
            if (--c->sig_countdown == 0 && mc_conn_check_signals(c) < 0) return -1;
            c->seq = (uint8_t)(h[3] + 1);
            *payload = h + 4;
            *len = plen;
            c->rpos += 4 + plen;
            return 0;
        }
    }
    return mc_read_packet_slow(c, payload, len);
}

/* The stream can still be read: a socket, or bytes given by Python (replay, _engine_*). */
static inline int mc_stream_open(mc_conn *c) { return c->fd >= 0 || c->replaying; }

static inline int mc_is_eof_packet(const unsigned char *p, size_t n) {
    return n > 0 && n < MC_MAX_PACKET && p[0] == 0xFE;
}

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
    /* rows decoded ahead (see mc_store_begin): pre[i] is row i
       for i < npre (NULL once handed out); pre_off is the byte offset of row npre */
    PyObject **pre;
    Py_ssize_t npre, pre_cap;
    size_t pre_off;
    uint64_t shape;        /* hash of the column definitions (see mc_conn.read_shape) */
    int noted;             /* how it was read, noted in the owner: 0 not yet, 1 columns, 2 rows */
    int ahead;             /* decode rows ahead (mc_store_begin) */
    int checked;           /* complete, and every row's text was found valid as it was
                              stored (row_ok) or decoded ahead: the columnar decode of
                              UTF-8 columns need not check it again */
} mc_store;

PyObject *mc_conn_store(mc_conn *c, PyObject *args, PyObject *kwds);
/* A new empty Store for the current result set, or NULL (with an exception, or without
   one: decoding may run Python code -- a user converter, a column whose character set
   needs a Python codec -- so decode the rows at once instead); its rows read by
   mc_store_pull: 1 complete, MC_NEED (no wait allowed, call again), -1.  The caller has
   entered.  Whether the rows become tuples/dicts or Arrow is decided at the Store's first
   fetch.  When the connection's last Store of the same shape (for a shape not among its
   last MC_READ_SHAPES: its last Store) was read as rows, mc_store_pull also decodes the
   rows ahead -- while the socket has nothing to read (blocking transport), one step before
   each MC_NEED (no wait allowed), and the rest once the last packet was read -- so that
   fetchall() costs what decoding as the rows came did; the row fetches hand them out, a
   columnar first fetch drops them (store.c, "decoding ahead").  Errors of rows decoded
   ahead are raised by mc_store_pull, as decoding them as they came raised them. */
mc_store *mc_store_begin(mc_conn *c, PyObject *keys);
int mc_store_pull(mc_store *s, mc_conn *c);
PyObject *mc_conn_prefer_store(mc_conn *c, PyObject *noargs);
/* byte offset of row `row` (0 <= row < nrows) in s->buf; no Python API */
size_t mc_store_offset(mc_store *s, Py_ssize_t row);
/* a stored row did not decode (the exception is set): close the connection that read it,
   as the row decoders do for wire data that does not parse (not for a user converter's
   error, which never reaches a store) */
void mc_store_distrust(mc_store *s);
/* the rows are being read as columns: rows decoded ahead are dropped, and this shape's
   next Stores are not decoded ahead */
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
