/* The C Connection: sockets, packet framing, handshake, authentication, COM_* commands
 * and the result-set state machine with text-row decoding.
 *
 * Protocol references (MySQL client/server protocol documentation):
 *   Protocol::Packet (4-byte header, 16 MiB split), Protocol::HandshakeV10,
 *   Protocol::HandshakeResponse41, Protocol::AuthSwitchRequest, OK_Packet, ERR_Packet,
 *   EOF_Packet, COM_QUERY Response, ColumnDefinition41, ProtocolText::ResultsetRow.
 *
 * The GIL is released around every blocking syscall (connect, poll, recv, send).
 * Wire data is parsed with the bounds-checked reader; a malformed packet raises
 * OperationalError(2027) and closes the connection.
 */
#include "conn_internal.h"
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>
#include <time.h>
#include <math.h>
#include <zlib.h>
#include <openssl/err.h>

#define RBUF_INITIAL (128 * 1024)
#define RBUF_KEEP (4 * 1024 * 1024)
#define MARIADB_CLIENT_STMT_BULK_OPERATIONS (1u << 2)   /* of the extended (upper) 32 bits */
#define MARIADB_CLIENT_CACHE_METADATA (1u << 4)        /* of the extended (upper) 32 bits */
#define COM_STMT_BULK_EXECUTE 0xFA
#define MC_MAX_JOINED ((size_t)1 << 30)   /* max_allowed_packet cannot exceed 1 GiB */


/* ================================================================ errors */

static void conn_close_socket(mc_conn *c) {
    if (c->ssl) {
        SSL_free(c->ssl);   /* no close_notify round trip: the socket is going away */
        c->ssl = NULL;
    }
    c->compress = 0;
    c->zpos = c->zend = 0;
    if (c->fd >= 0) {
        int fd = c->fd;
        c->fd = -1;
        Py_BEGIN_ALLOW_THREADS
        close(fd);
        Py_END_ALLOW_THREADS
    }
    c->state = ST_IDLE;
}

/* Remember the error of the current command for last_errno / last_error / last_sqlstate
   (mysql_errno(), mysql_error(), mysql_sqlstate()).  msg is borrowed; never fails. */
static void conn_record_error(mc_conn *c, int errnum, PyObject *msg, const char *sqlstate) {
    c->last_errno = errnum;
    Py_XINCREF(msg);
    Py_XSETREF(c->last_error, msg);
    memcpy(c->last_sqlstate, sqlstate, 5);
    c->last_sqlstate[5] = 0;
}

/* A new command starts with no error (as libmysqlclient clears mysql_errno()). */
static void conn_clear_error(mc_conn *c) {
    c->last_errno = 0;
    Py_CLEAR(c->last_error);
    memcpy(c->last_sqlstate, "00000", 6);
}

/* Set exc.sqlstate (a 5-character str); errors in doing so are dropped. */
static void set_exc_sqlstate(PyObject *exc, const char *sqlstate) {
    PyObject *s = PyUnicode_FromStringAndSize(sqlstate, 5);
    if (!s || PyObject_SetAttrString(exc, "sqlstate", s) < 0) PyErr_Clear();
    Py_XDECREF(s);
}

/* Raise cls(errnum, msg) for a client-side error (SQLSTATE HY000) and record it as the
   connection's last error; msg is stolen (NULL: formatting failed).  NULL. */
static PyObject *client_error_msg(mc_conn *c, PyObject *cls, int errnum, PyObject *msg) {
    if (!msg) return NULL;
    conn_record_error(c, errnum, msg, "HY000");
    PyObject *exc = PyObject_CallFunction(cls, "iO", errnum, msg);
    Py_DECREF(msg);
    if (!exc) return NULL;
    set_exc_sqlstate(exc, "HY000");
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return NULL;
}

static PyObject *conn_client_error(mc_conn *c, PyObject *cls, int errnum, const char *fmt, ...) {
    va_list va;
    va_start(va, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, va);
    va_end(va);
    return client_error_msg(c, cls, errnum, msg);
}

/* The error for using a connection whose socket is closed: OperationalError 2006
   "Server has gone away", as libmysqlclient answers every command after close() or
   after the connection was lost (an error, a timeout, an interrupt).  NULL. */
static PyObject *raise_closed(mc_conn *c) {
    return conn_client_error(c, c->st->OperationalError, CR_SERVER_GONE_ERROR,
                             "Server has gone away");
}

/* Raise cls(errnum, msg) and close the connection (the stream is no longer in sync).
   The message is formatted first: its arguments may point into connection state. */
static PyObject *conn_fatal(mc_conn *c, PyObject *cls, int errnum, const char *fmt, ...) {
    va_list va;
    va_start(va, fmt);
    PyObject *msg = PyUnicode_FromFormatV(fmt, va);
    va_end(va);
    conn_close_socket(c);
    return client_error_msg(c, cls, errnum, msg);
}

static PyObject *malformed(mc_conn *c, const char *what) {
    return conn_fatal(c, c->st->OperationalError, CR_MALFORMED_PACKET,
                      "Malformed packet: %s", what);
}

/* ================================================================ socket I/O */

static double monotonic(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait for fd readiness with the GIL held by the caller released inside. Returns
   1 ready, 0 timeout, -1 with errno. */
static int wait_fd(int fd, short events, double timeout) {
    struct pollfd pfd;
    pfd.fd = fd;
    pfd.events = events;
    pfd.revents = 0;
    int ms = timeout < 0 ? -1 : (timeout > 2e6 ? 2000000000 : (int)ceil(timeout * 1000.0));
    int r = poll(&pfd, 1, ms);
    if (r < 0) return -1;
    return r > 0 ? 1 : 0;
}

/* ---------------------------------------------------------------- transport */

enum { IO_OK = 0, IO_EINTR, IO_TIMEOUT, IO_EOF, IO_ERRNO, IO_TLS };

/* One read from the socket or the TLS session, GIL released by the caller.
   Returns bytes read (> 0) or -1 with *status set. */
static ssize_t io_read_nogil(int fd, SSL *ssl, unsigned char *dst, size_t room, double to,
                             int *status, int *err, char *msg, size_t msgcap) {
    for (;;) {
        if (ssl) {
            ERR_clear_error();
            int r = SSL_read(ssl, dst, room > INT32_MAX ? INT32_MAX : (int)room);
            if (r > 0) return r;
            int e = SSL_get_error(ssl, r);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
                int w = wait_fd(fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, to);
                if (w == 0) { *status = IO_TIMEOUT; return -1; }
                if (w < 0) {
                    *err = errno;
                    *status = errno == EINTR ? IO_EINTR : IO_ERRNO;
                    return -1;
                }
                continue;
            }
            if (e == SSL_ERROR_ZERO_RETURN) { *status = IO_EOF; return -1; }
            if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
                *err = errno;
                if (errno == EINTR) { *status = IO_EINTR; return -1; }
                *status = errno ? IO_ERRNO : IO_EOF;
                return -1;
            }
            msg[0] = 0;
            mc_tls_errors(msg, msgcap);
            *status = IO_TLS;
            return -1;
        }
        if (to >= 0) {
            int w = wait_fd(fd, POLLIN, to);
            if (w == 0) { *status = IO_TIMEOUT; return -1; }
            if (w < 0) { *err = errno; *status = errno == EINTR ? IO_EINTR : IO_ERRNO; return -1; }
        }
        ssize_t n = recv(fd, dst, room, 0);
        if (n > 0) return n;
        if (n == 0) { *status = IO_EOF; return -1; }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int w = wait_fd(fd, POLLIN, to);
            if (w == 0) { *status = IO_TIMEOUT; return -1; }
            if (w < 0) { *err = errno; *status = errno == EINTR ? IO_EINTR : IO_ERRNO; return -1; }
            continue;
        }
        *err = errno;
        *status = errno == EINTR ? IO_EINTR : IO_ERRNO;
        return -1;
    }
}

/* Read at least one byte into dst.  Returns the count, or -1 with an exception set and
   the connection closed (lost connection, timeout, Ctrl-C). */
/* Where a lost connection was lost, for CR_SERVER_LOST messages: libmysqlclient says "at
   'reading initial communication packet'" for the greeting, "during query" otherwise. */
#define LOST_AT(c) ((c)->lost_at ? (c)->lost_at : "during query")

static ssize_t transport_recv(mc_conn *c, unsigned char *dst, size_t room) {
    for (;;) {
        ssize_t n;
        int status = IO_OK, err = 0;
        char msg[512];
        int fd = c->fd;
        SSL *ssl = c->ssl;
        double to = c->read_timeout;
        Py_BEGIN_ALLOW_THREADS
        n = io_read_nogil(fd, ssl, dst, room, to, &status, &err, msg, sizeof(msg));
        Py_END_ALLOW_THREADS
        if (n > 0) return n;
        switch (status) {
        case IO_EINTR:
            if (PyErr_CheckSignals() < 0) {
                conn_close_socket(c);   /* a half-read response cannot be resumed */
                return -1;
            }
            continue;
        case IO_TIMEOUT: {
            char tbuf[32];
            snprintf(tbuf, sizeof(tbuf), "%g", to);
            conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                       "Lost connection to server %s (read timed out after %s s)",
                       LOST_AT(c), tbuf);
            return -1;
        }
        case IO_EOF:
            conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                       "Lost connection to server %s", LOST_AT(c));
            return -1;
        case IO_TLS:
            conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                       "Lost connection to server %s (TLS error: %s)", LOST_AT(c), msg);
            return -1;
        default:
            conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                       "Lost connection to server %s (%s)", LOST_AT(c), strerror(err));
            return -1;
        }
    }
}

/* A receive buffer whose unread bytes are [*pos, *end): move them to the front and grow
   the buffer so that `need` bytes fit from there.  0, or -1 with MemoryError. */
static int buf_make_room(unsigned char **buf, size_t *cap, size_t *pos, size_t *end, size_t need) {
    if (*pos > 0) {
        size_t left = *end - *pos;
        if (left) memmove(*buf, *buf + *pos, left);
        *pos = 0;
        *end = left;
    }
    if (need > *cap) {
        size_t ncap = *cap ? *cap : RBUF_INITIAL;
        while (ncap < need) ncap *= 2;
        unsigned char *nb = PyMem_Realloc(*buf, ncap);
        if (!nb) { PyErr_NoMemory(); return -1; }
        *buf = nb;
        *cap = ncap;
    }
    return 0;
}

/* Inflate one compressed-protocol frame (7-byte header: compressed length, sequence id,
   uncompressed length; 0 means stored) onto the end of rbuf.  0 or -1. */
static int recv_frame(mc_conn *c) {
    /* make sure the 7-byte header and then the whole frame are in zbuf */
    size_t need = 7;
    for (int pass = 0; pass < 2; pass++) {
        while (c->zend - c->zpos < need) {
            if (buf_make_room(&c->zbuf, &c->zcap, &c->zpos, &c->zend, need) < 0) return -1;
            ssize_t n = transport_recv(c, c->zbuf + c->zend, c->zcap - c->zend);
            if (n < 0) return -1;
            c->zend += (size_t)n;
        }
        if (pass == 0) need = 7 + mc_load_u24(c->zbuf + c->zpos);
    }
    const unsigned char *h = c->zbuf + c->zpos;
    size_t clen = mc_load_u24(h);
    size_t ulen = mc_load_u24(h + 4);
    if (h[3] != c->cseq) {
        malformed(c, "compressed packets out of order (unexpected sequence id)");
        return -1;
    }
    c->cseq++;
    size_t out = ulen ? ulen : clen;
    if (c->rcap - c->rend < out) {
        size_t cap = c->rcap ? c->rcap : RBUF_INITIAL;
        while (cap - c->rend < out) cap *= 2;
        unsigned char *nb = PyMem_Realloc(c->rbuf, cap);
        if (!nb) { PyErr_NoMemory(); return -1; }
        c->rbuf = nb;
        c->rcap = cap;
    }
    unsigned char *dst = c->rbuf + c->rend;
    const unsigned char *src = h + 7;
    if (ulen == 0) {
        memcpy(dst, src, clen);
    } else {
        uLongf dlen = (uLongf)ulen;
        int zr;
        Py_BEGIN_ALLOW_THREADS
        zr = uncompress(dst, &dlen, src, (uLong)clen);
        Py_END_ALLOW_THREADS
        if (zr != Z_OK || dlen != ulen) {
            malformed(c, "compressed frame does not inflate to its stated length");
            return -1;
        }
    }
    if (c->capturing && mc_writer_put(&c->capture, dst, out) < 0) return -1;
    c->rend += out;
    c->zpos += 7 + clen;
    return 0;
}

/* Ctrl-C and other signals (PyErr_CheckSignals) are honoured at the packet layer, not
   only when a syscall is interrupted: every MC_SIGNAL_PACKETS packets taken from the
   receive buffer and before every read from the socket, so that every path that reads
   packets (buffered, unbuffered and prepared rows, server cursors, the columnar reader,
   executemany, LOAD DATA) stops within a few milliseconds of decoding.  When a handler
   raises (KeyboardInterrupt), the connection is closed: the rest of the response (up to
   millions of rows) cannot be drained in a bounded time, and a half-read response cannot
   be resumed.  Later use raises OperationalError 2006.  0, or -1 with the exception. */
#define MC_SIGNAL_PACKETS 1024u

#if defined(__GNUC__)
__attribute__((noinline, cold))   /* keep the packet fast path small */
#endif
static int conn_check_signals(mc_conn *c) {
    c->sig_countdown = MC_SIGNAL_PACKETS;
    if (PyErr_CheckSignals() < 0) {
        conn_close_socket(c);   /* keeps the exception set */
        return -1;
    }
    return 0;
}

/* Append at least one byte of the (decompressed) packet stream to rbuf. 0 or -1. */
static int conn_recv_some(mc_conn *c) {
    if (c->compress) return recv_frame(c);
    ssize_t n = transport_recv(c, c->rbuf + c->rend, c->rcap - c->rend);
    if (n < 0) return -1;
    if (c->capturing && mc_writer_put(&c->capture, c->rbuf + c->rend, (size_t)n) < 0) {
        conn_close_socket(c);
        return -1;
    }
    c->rend += (size_t)n;
    return 0;
}

/* Make sure at least `need` unread bytes are buffered. */
static int conn_fill(mc_conn *c, size_t need) {
    if (c->rend - c->rpos >= need) return 0;
    if (c->replaying) {
        mc_raise(c->st->OperationalError, CR_SERVER_LOST,
                 "replayed data ends in the middle of a packet or result");
        return -1;
    }
    if (c->fd < 0) {
        raise_closed(c);
        return -1;
    }
    if (conn_check_signals(c) < 0) return -1;
    if (buf_make_room(&c->rbuf, &c->rcap, &c->rpos, &c->rend, need) < 0) return -1;
    while (c->rend - c->rpos < need)
        if (conn_recv_some(c) < 0) return -1;
    return 0;
}

/* Read one logical packet (joined across 16 MiB fragments).  *payload stays valid until
   the next read.  0 or -1 with exception. */
static int conn_read_packet_slow(mc_conn *c, const unsigned char **payload, size_t *len);

/* Fast path: the whole (single-fragment) packet is already buffered. */
static inline int conn_read_packet(mc_conn *c, const unsigned char **payload, size_t *len) {
    size_t avail = c->rend - c->rpos;
    if (avail >= 4) {
        const unsigned char *h = c->rbuf + c->rpos;
        size_t plen = mc_load_u24(h);
        if (plen < MC_MAX_PACKET && avail >= 4 + plen && (h[3] == c->seq || c->compress)) {
            if (--c->sig_countdown == 0 && conn_check_signals(c) < 0) return -1;
            c->seq = (uint8_t)(h[3] + 1);
            *payload = h + 4;
            *len = plen;
            c->rpos += 4 + plen;
            return 0;
        }
    }
    return conn_read_packet_slow(c, payload, len);
}

static int conn_read_packet_slow(mc_conn *c, const unsigned char **payload, size_t *len) {
    if (conn_fill(c, 4) < 0) return -1;
    const unsigned char *h = c->rbuf + c->rpos;
    size_t plen = mc_load_u24(h);
    uint8_t seq = h[3];
    /* Inside the compressed protocol the server restarts the inner ids at each flush
       (as libmysqlclient, only the frames' own ids are checked then). */
    if (seq != c->seq && !c->compress) {
        malformed(c, "packets out of order (unexpected sequence id)");
        return -1;
    }
    c->seq = (uint8_t)(seq + 1);
    if (plen < MC_MAX_PACKET) {
        if (conn_fill(c, 4 + plen) < 0) return -1;
        *payload = c->rbuf + c->rpos + 4;
        *len = plen;
        c->rpos += 4 + plen;
        return 0;
    }
    /* multi-packet payload: join fragments */
    c->join.len = 0;
    for (;;) {
        if (c->join.len + plen > MC_MAX_JOINED) {
            malformed(c, "packet larger than 1 GiB (the server's max_allowed_packet limit)");
            return -1;
        }
        if (conn_fill(c, 4 + plen) < 0) return -1;
        if (mc_writer_put(&c->join, c->rbuf + c->rpos + 4, plen) < 0) return -1;
        c->rpos += 4 + plen;
        if (plen < MC_MAX_PACKET) break;
        if (conn_fill(c, 4) < 0) return -1;
        h = c->rbuf + c->rpos;
        plen = mc_load_u24(h);
        if (h[3] != c->seq && !c->compress) {
            malformed(c, "packets out of order in a multi-packet payload");
            return -1;
        }
        c->seq = (uint8_t)(h[3] + 1);
    }
    *payload = c->join.buf;
    *len = c->join.len;
    return 0;
}

/* Write all of iov, GIL released by the caller.  0, or -1 with *status set. */
static int io_write_nogil(int fd, SSL *ssl, struct iovec *iov, int iovcnt, double to,
                          int *status, int *err, char *msg, size_t msgcap) {
    while (iovcnt > 0) {
        ssize_t n;
        if (ssl) {
            if (iov->iov_len == 0) { iov++; iovcnt--; continue; }
            ERR_clear_error();
            int r = SSL_write(ssl, iov->iov_base, iov->iov_len > INT32_MAX ? INT32_MAX : (int)iov->iov_len);
            if (r <= 0) {
                int e = SSL_get_error(ssl, r);
                if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
                    int w = wait_fd(fd, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, to);
                    if (w == 0) { *status = IO_TIMEOUT; return -1; }
                    if (w < 0) { *err = errno; *status = errno == EINTR ? IO_EINTR : IO_ERRNO; return -1; }
                    continue;
                }
                if (e == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
                    *err = errno ? errno : EPIPE;
                    *status = errno == EINTR ? IO_EINTR : IO_ERRNO;
                    return -1;
                }
                msg[0] = 0;
                mc_tls_errors(msg, msgcap);
                *status = IO_TLS;
                return -1;
            }
            n = r;
        } else {
            /* never block inside sendmsg(): a peer that stops reading would hold us
               there past write_timeout and past Ctrl-C; wait in poll() instead */
            struct msghdr mh;
            memset(&mh, 0, sizeof(mh));
            mh.msg_iov = iov;
            mh.msg_iovlen = (size_t)iovcnt;
            n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
            if (n < 0) {
                if (errno == EAGAIN || errno == EWOULDBLOCK) {
                    int w = wait_fd(fd, POLLOUT, to);
                    if (w == 0) { *status = IO_TIMEOUT; return -1; }
                    if (w < 0) { *err = errno; *status = errno == EINTR ? IO_EINTR : IO_ERRNO; return -1; }
                    continue;
                }
                *err = errno;
                *status = errno == EINTR ? IO_EINTR : IO_ERRNO;
                return -1;
            }
        }
        size_t done = (size_t)n;
        while (iovcnt > 0 && done >= iov->iov_len) {
            done -= iov->iov_len;
            iov++;
            iovcnt--;
        }
        if (iovcnt > 0) {
            iov->iov_base = (char *)iov->iov_base + done;
            iov->iov_len -= done;
        }
    }
    return 0;
}

static int send_all(mc_conn *c, struct iovec *iov, int iovcnt) {
    /* TLS: gather small pieces into one record instead of one record per piece */
    unsigned char gather[16384];
    struct iovec one;
    if (c->ssl && iovcnt > 1) {
        size_t total = 0;
        for (int i = 0; i < iovcnt; i++) total += iov[i].iov_len;
        if (total <= sizeof(gather)) {
            size_t off = 0;
            for (int i = 0; i < iovcnt; i++) {
                memcpy(gather + off, iov[i].iov_base, iov[i].iov_len);
                off += iov[i].iov_len;
            }
            one.iov_base = gather;
            one.iov_len = total;
            iov = &one;
            iovcnt = 1;
        }
    }
    for (;;) {
        int status = IO_OK, err = 0, rc;
        char msg[512];
        int fd = c->fd;
        SSL *ssl = c->ssl;
        double to = c->write_timeout;
        Py_BEGIN_ALLOW_THREADS
        rc = io_write_nogil(fd, ssl, iov, iovcnt, to, &status, &err, msg, sizeof(msg));
        Py_END_ALLOW_THREADS
        if (rc == 0) return 0;
        switch (status) {
        case IO_EINTR:
            if (PyErr_CheckSignals() < 0) { conn_close_socket(c); return -1; }
            continue;   /* iov was advanced past what was written */
        case IO_TIMEOUT:
            conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                       "Lost connection to server (write timed out)");
            return -1;
        case IO_TLS:
            conn_fatal(c, c->st->OperationalError, CR_SERVER_GONE_ERROR,
                       "Server has gone away (TLS error: %s)", msg);
            return -1;
        default:
            conn_fatal(c, c->st->OperationalError, CR_SERVER_GONE_ERROR,
                       "Server has gone away (%s)", strerror(err));
            return -1;
        }
    }
}

#define MIN_COMPRESS_LENGTH 50

/* Send `data` (complete plain packets, headers included) as compressed-protocol frames. */
static int send_compressed(mc_conn *c, const unsigned char *data, size_t len) {
    size_t off = 0;
    do {
        size_t chunk = len - off;
        if (chunk > MC_MAX_PACKET) chunk = MC_MAX_PACKET;
        unsigned char hdr[7];
        const unsigned char *body = data + off;
        size_t blen = chunk, ulen = 0;
        if (chunk >= MIN_COMPRESS_LENGTH) {
            uLongf zl = compressBound((uLong)chunk);
            c->zout.len = 0;
            if (mc_writer_reserve(&c->zout, zl) < 0) return -1;
            int zr;
            unsigned char *zdst = c->zout.buf;
            Py_BEGIN_ALLOW_THREADS
            zr = compress2(zdst, &zl, body, (uLong)chunk, Z_DEFAULT_COMPRESSION);
            Py_END_ALLOW_THREADS
            if (zr != Z_OK) {
                conn_fatal(c, c->st->OperationalError, CR_UNKNOWN_ERROR, "zlib compress failed (%d)", zr);
                return -1;
            }
            if (zl < chunk) {
                body = c->zout.buf;
                blen = zl;
                ulen = chunk;
            }
        }
        mc_store_u24(hdr, (uint32_t)blen);
        hdr[3] = c->cseq++;
        mc_store_u24(hdr + 4, (uint32_t)ulen);
        struct iovec iov[2] = {{hdr, 7}, {(void *)body, blen}};
        if (send_all(c, iov, 2) < 0) return -1;
        off += chunk;
    } while (off < len);
    return 0;
}

/* Send the logical payload prefix+data as one or more packets (16 MiB split; a payload that
   is an exact multiple of 0xFFFFFF ends with an empty packet).  Sequence ids continue from
   c->seq. */
static int conn_send(mc_conn *c, const unsigned char *prefix, size_t plen,
                     const unsigned char *data, size_t dlen) {
    if (c->fd < 0) {
        raise_closed(c);
        return -1;
    }
    size_t total = plen + dlen, sent = 0;
    if (c->compress) c->zsend.len = 0;
    for (;;) {
        size_t chunk = total - sent;
        if (chunk > MC_MAX_PACKET) chunk = MC_MAX_PACKET;
        unsigned char hdr[4];
        mc_store_u24(hdr, (uint32_t)chunk);
        hdr[3] = c->seq++;
        struct iovec iov[3];
        int n = 0;
        iov[n].iov_base = hdr; iov[n].iov_len = 4; n++;
        /* the part of [sent, sent+chunk) that lies in prefix, then in data */
        size_t a = sent, b = sent + chunk;
        if (a < plen) {
            size_t e = b < plen ? b : plen;
            iov[n].iov_base = (void *)(prefix + a); iov[n].iov_len = e - a; n++;
            a = e;
        }
        if (b > a && b > plen) {
            size_t s0 = a - plen;
            iov[n].iov_base = (void *)(data + s0); iov[n].iov_len = b - a; n++;
        }
        if (c->compress) {
            for (int i = 0; i < n; i++)
                if (mc_writer_put(&c->zsend, iov[i].iov_base, iov[i].iov_len) < 0) return -1;
        } else if (send_all(c, iov, n) < 0) {
            return -1;
        }
        sent += chunk;
        if (chunk < MC_MAX_PACKET) break;
    }
    if (c->compress) {
        int r = send_compressed(c, c->zsend.buf, c->zsend.len);
        if (c->zsend.cap > RBUF_KEEP) {
            mc_writer_free(&c->zsend);
            if (mc_writer_init(&c->zsend, 256) < 0) return -1;
        }
        return r;
    }
    return 0;
}

/* Start a command: sequence id 0, then send cmd + arg. */
static int conn_command(mc_conn *c, uint8_t cmd, const unsigned char *arg, size_t arglen) {
    conn_clear_error(c);
    c->seq = 0;
    c->cseq = 0;
    /* shrink an oversized receive buffer left by a large result */
    if (c->rcap > RBUF_KEEP && c->rpos == c->rend) {
        unsigned char *nb = PyMem_Realloc(c->rbuf, RBUF_INITIAL);
        if (nb) { c->rbuf = nb; c->rcap = RBUF_INITIAL; c->rpos = c->rend = 0; }
    }
    if (c->join.cap > RBUF_KEEP) {
        mc_writer_free(&c->join);
        if (mc_writer_init(&c->join, 256) < 0) return -1;
    }
    return conn_send(c, &cmd, 1, arg, arglen);
}

/* ================================================================ OK / ERR / EOF */

static int parse_ok(mc_conn *c, const unsigned char *p, size_t n) {
    mc_reader r;
    uint8_t hdr;
    uint64_t affected, insert_id;
    uint16_t status = 0, warnings = 0;
    mc_reader_init(&r, p, n);
    if (mc_reader_u8(&r, &hdr) < 0 || mc_reader_lenenc(&r, &affected, NULL) < 0 ||
        mc_reader_lenenc(&r, &insert_id, NULL) < 0) {
        malformed(c, "short OK packet");
        return -1;
    }
    if (mc_reader_u16(&r, &status) < 0 || mc_reader_u16(&r, &warnings) < 0) {
        malformed(c, "OK packet without status flags");
        return -1;
    }
    c->affected_rows = affected;
    c->insert_id = insert_id;
    c->server_status = status;
    c->warning_count = warnings;
    Py_CLEAR(c->info);
    size_t left = mc_reader_left(&r);
    if (left) {
        const unsigned char *s = r.p;
        size_t sl = left;
        /* MariaDB sends the info as a length-encoded string even without
           CLIENT_SESSION_TRACK; MySQL sends string<EOF> then.  Take the length when
           it covers the rest exactly. */
        mc_reader probe = r;
        const unsigned char *ls;
        size_t ln;
        if ((c->client_flag & CLIENT_SESSION_TRACK) ||
            (mc_reader_lenenc_str(&probe, &ls, &ln) == 0 && mc_reader_left(&probe) == 0)) {
            if (mc_reader_lenenc_str(&r, &s, &sl) < 0) { s = NULL; sl = 0; }
        }
        if (sl) {
            c->info = PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)sl, "replace");
            if (!c->info) return -1;
        }
    }
    return 0;
}

/* Raise the mapped exception for an ERR packet. The connection stays usable. */
static PyObject *raise_err_packet(mc_conn *c, const unsigned char *p, size_t n) {
    mc_reader r;
    uint8_t hdr;
    uint16_t errnum;
    mc_reader_init(&r, p, n);
    if (mc_reader_u8(&r, &hdr) < 0 || mc_reader_u16(&r, &errnum) < 0)
        return malformed(c, "short ERR packet");
    /* '#' + 5-character SQLSTATE (CLIENT_PROTOCOL_41), else the generic "HY000" as
       libmysqlclient's mysql_sqlstate(); the 5 characters must be printable ASCII */
    char sqlstate[6] = "HY000";
    if (c->client_flag & CLIENT_PROTOCOL_41 || c->protocol_version == 0) {
        if (mc_reader_left(&r) >= 6 && r.p[0] == '#') {
            int ok = 1;
            for (int i = 1; i <= 5; i++) ok &= r.p[i] > 0x20 && r.p[i] < 0x7F;
            if (ok) memcpy(sqlstate, r.p + 1, 5);
            r.p += 6;
        }
    }
    PyObject *msg = PyUnicode_DecodeUTF8((const char *)r.p, (Py_ssize_t)mc_reader_left(&r), "replace");
    if (!msg) return NULL;
    conn_record_error(c, (int)errnum, msg, sqlstate);
    PyObject *cls = PyObject_CallFunction(c->st->error_class_for, "i", (int)errnum);
    if (!cls) { Py_DECREF(msg); return NULL; }
    PyObject *exc = PyObject_CallFunction(cls, "iO", (int)errnum, msg);
    Py_DECREF(cls);
    Py_DECREF(msg);
    if (!exc) return NULL;
    set_exc_sqlstate(exc, sqlstate);
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return NULL;
}

/* EOF_Packet (0xFE, warnings, status) or, with CLIENT_DEPRECATE_EOF, an OK packet with a
   0xFE header. */
static int parse_eof(mc_conn *c, const unsigned char *p, size_t n) {
    if (c->client_flag & CLIENT_DEPRECATE_EOF)
        return parse_ok(c, p, n);
    mc_reader r;
    uint8_t hdr;
    uint16_t warnings, status;
    mc_reader_init(&r, p, n);
    if (mc_reader_u8(&r, &hdr) < 0 || mc_reader_u16(&r, &warnings) < 0 ||
        mc_reader_u16(&r, &status) < 0) {
        malformed(c, "short EOF packet");
        return -1;
    }
    c->warning_count = warnings;
    c->server_status = status;
    return 0;
}

static inline int is_eof_packet(const unsigned char *p, size_t n) {
    return n > 0 && n < MC_MAX_PACKET && p[0] == 0xFE;
}

/* ================================================================ result sets */

static void clear_result(mc_conn *c) {
    if (c->plan) {
        for (Py_ssize_t i = 0; i < c->plan_len; i++) mc_plan_clear(&c->plan[i]);
        PyMem_Free(c->plan);
        c->plan = NULL;
    }
    c->plan_len = 0;
    c->field_count = 0;
    c->has_converters = 0;
    Py_CLEAR(c->description);
    Py_CLEAR(c->description_flags);
    Py_CLEAR(c->column_names);
    Py_CLEAR(c->column_tables);
}

static PyObject *decode_name(const unsigned char *s, size_t n) {
    PyObject *u = PyUnicode_DecodeUTF8((const char *)s, (Py_ssize_t)n, NULL);
    if (!u) {
        PyErr_Clear();
        u = PyUnicode_DecodeLatin1((const char *)s, (Py_ssize_t)n, NULL);
    }
    return u;
}

/* After a terminating OK/EOF: set the state from SERVER_MORE_RESULTS_EXISTS. */
static void after_result(mc_conn *c) {
    c->state = (c->server_status & SERVER_MORE_RESULTS_EXISTS) ? ST_MORE : ST_IDLE;
}

/* Send at most 1 MiB per packet, so that no chunk can end the file early. */
static int send_file_chunk(mc_conn *c, const unsigned char *d, size_t n) {
    while (n > 0) {
        size_t k = n > (1u << 20) ? (1u << 20) : n;
        if (conn_check_signals(c) < 0) return -1;   /* the file cannot be resumed: closed */
        if (conn_send(c, d, k, NULL, 0) < 0) return -1;
        d += k;
        n -= k;
    }
    return 0;
}

/* LOCAL INFILE request (0xFB + file name): stream the file from the user's handler (which
   enforces the allowed directory), or refuse.  A refusal still sends the empty packet that
   ends the transfer, so that the connection stays in sync, and sends no byte of the file.
   Returns 0 (OK, affected rows set) or -1. */
static Py_ssize_t local_infile(mc_conn *c, const unsigned char *name, size_t name_n) {
    PyObject *exc_t = NULL, *exc_v = NULL, *exc_tb = NULL;
    PyObject *it = NULL;
    if (!c->infile_handler) {
        PyObject *fn = PyBytes_FromStringAndSize((const char *)name, (Py_ssize_t)name_n);
        if (fn) {
            mc_raise(c->st->OperationalError, 2068,
                     "LOAD DATA LOCAL INFILE refused: local_infile is not enabled on this "
                     "connection (the server asked for %R)", fn);
            Py_DECREF(fn);
        }
        PyErr_Fetch(&exc_t, &exc_v, &exc_tb);
    } else {
        PyObject *src = PyObject_CallFunction(c->infile_handler, "y#", (const char *)name,
                                              (Py_ssize_t)name_n);
        if (src) {
            it = PyObject_GetIter(src);
            Py_DECREF(src);
        }
        if (!it) PyErr_Fetch(&exc_t, &exc_v, &exc_tb);
    }
    if (it) {
        PyObject *chunk;
        while ((chunk = PyIter_Next(it)) != NULL) {
            Py_buffer view;
            if (PyObject_GetBuffer(chunk, &view, PyBUF_SIMPLE) < 0) { Py_DECREF(chunk); break; }
            int r = send_file_chunk(c, view.buf, (size_t)view.len);
            PyBuffer_Release(&view);
            Py_DECREF(chunk);
            if (r < 0) { Py_DECREF(it); return -1; }   /* connection lost */
        }
        Py_DECREF(it);
        if (PyErr_Occurred()) PyErr_Fetch(&exc_t, &exc_v, &exc_tb);  /* read error: stop */
    }
    /* the empty packet ends the file (or sends none) */
    if (conn_send(c, NULL, 0, NULL, 0) < 0) goto lost;
    const unsigned char *p;
    size_t n;
    if (conn_read_packet(c, &p, &n) < 0) goto lost;
    if (n && p[0] == 0xFF) {
        c->state = ST_IDLE;
        if (exc_t) { PyErr_Restore(exc_t, exc_v, exc_tb); return -1; }
        raise_err_packet(c, p, n);
        return -1;
    }
    if (!n || p[0] != 0x00) { malformed(c, "expected OK after LOCAL INFILE data"); goto lost; }
    if (parse_ok(c, p, n) < 0) goto lost;
    after_result(c);
    if (exc_t) { PyErr_Restore(exc_t, exc_v, exc_tb); return -1; }
    return 0;
lost:
    Py_XDECREF(exc_t); Py_XDECREF(exc_v); Py_XDECREF(exc_tb);
    return -1;
}

/* use_unicode=False (mysqlclient): every column that would decode to str -- CHAR, VARCHAR,
   TEXT, ENUM, SET, JSON in any character set -- gives the wire bytes instead, also as the
   argument of a user converter; numbers, DECIMAL, dates and times are unchanged.  Chosen
   once per result set, so the default path pays nothing per value. */
static void plan_text_as_bytes(mc_column_plan *col) {
    mc_dec_kind *k = col->kind == MC_DEC_CONVERTER ? &col->arg_kind : &col->kind;
    if (*k == MC_DEC_STR_UTF8 || *k == MC_DEC_STR_LATIN1 || *k == MC_DEC_STR_ASCII ||
        *k == MC_DEC_STR_CODEC) {
        *k = MC_DEC_BYTES;
        col->codec = NULL;
        Py_CLEAR(col->codec_obj);
    }
}

/* Read a COM_QUERY response's first packet and, for a result set, its column definitions.
   Returns the field count (0 for OK) or -1. */
static Py_ssize_t read_query_response(mc_conn *c) {
    const unsigned char *p;
    size_t n;
    clear_result(c);
    c->rows_read = 0;
    c->result_seq++;
    if (conn_read_packet(c, &p, &n) < 0) return -1;
    if (n == 0) { malformed(c, "empty response packet"); return -1; }
    if (p[0] == 0x00) {
        if (parse_ok(c, p, n) < 0) return -1;
        after_result(c);
        return 0;
    }
    if (p[0] == 0xFF) {
        c->state = ST_IDLE;
        raise_err_packet(c, p, n);
        return -1;
    }
    if (p[0] == 0xFB)
        return local_infile(c, p + 1, n - 1);
    mc_reader r;
    uint64_t ncols;
    mc_reader_init(&r, p, n);
    if (mc_reader_lenenc(&r, &ncols, NULL) < 0 || ncols == 0 || ncols > 65535) {
        malformed(c, "bad column count");
        return -1;
    }
    Py_ssize_t nc = (Py_ssize_t)ncols;
    /* MariaDB's metadata cache: a byte says whether the column definitions follow; when
       they do not, they are the ones recorded for this prepared statement. */
    int meta_follows = 1;
    PyObject *cached = NULL, *record = NULL;
    if (c->ext_caps & MARIADB_CLIENT_CACHE_METADATA) {
        uint8_t mf;
        if (mc_reader_u8(&r, &mf) < 0) { malformed(c, "column count without its metadata flag"); return -1; }
        meta_follows = mf != 0;
        if (c->binary && c->meta_cache) {
            PyObject *key = PyLong_FromUnsignedLong(c->cursor_stmt);
            if (!key) return -1;
            if (!meta_follows) {
                cached = PyDict_GetItemWithError(c->meta_cache, key);   /* borrowed */
                if (!cached && PyErr_Occurred()) { Py_DECREF(key); return -1; }
            } else {
                record = PyTuple_New(nc);
                if (!record || PyDict_SetItem(c->meta_cache, key, record) < 0) {
                    Py_XDECREF(record);
                    Py_DECREF(key);
                    return -1;
                }
                Py_DECREF(record);   /* the dict holds it */
            }
            Py_DECREF(key);
        }
        if (!meta_follows && (!cached || PyTuple_GET_SIZE(cached) != nc)) {
            malformed(c, "the server skipped column definitions the client does not have");
            return -1;
        }
    }
    c->insert_id = 0;        /* a result set carries no insert id (mysql_insert_id() is 0) */
    c->affected_rows = 0;
    c->plan = PyMem_Calloc((size_t)nc, sizeof(mc_column_plan));
    if (!c->plan) { PyErr_NoMemory(); return -1; }
    c->plan_len = nc;
    c->field_count = nc;
    c->description = PyTuple_New(nc);
    c->description_flags = PyTuple_New(nc);
    c->column_names = PyTuple_New(nc);
    c->column_tables = PyTuple_New(nc);
    if (!c->description || !c->description_flags || !c->column_names || !c->column_tables)
        goto error;
    /* rows are pending from here on: an error below leaves the stream mid-result */
    c->state = ST_ROWS;
    for (Py_ssize_t i = 0; i < nc; i++) {
        const unsigned char *catalog, *schema, *table, *org_table, *name, *org_name;
        size_t catalog_n, schema_n, table_n, org_table_n, name_n, org_name_n;
        uint64_t fixed_len;
        uint16_t charset, flags;
        uint32_t length;
        uint8_t type, decimals;
        if (cached) {
            PyObject *def = PyTuple_GET_ITEM(cached, i);
            p = (const unsigned char *)PyBytes_AS_STRING(def);
            n = (size_t)PyBytes_GET_SIZE(def);
        } else {
            if (conn_read_packet(c, &p, &n) < 0) goto error;
            if (record) {
                PyObject *def = PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)n);
                if (!def) goto error;
                PyTuple_SET_ITEM(record, i, def);
            }
        }
        mc_reader_init(&r, p, n);
        if (mc_reader_lenenc_str(&r, &catalog, &catalog_n) < 0 ||
            mc_reader_lenenc_str(&r, &schema, &schema_n) < 0 ||
            mc_reader_lenenc_str(&r, &table, &table_n) < 0 ||
            mc_reader_lenenc_str(&r, &org_table, &org_table_n) < 0 ||
            mc_reader_lenenc_str(&r, &name, &name_n) < 0 ||
            mc_reader_lenenc_str(&r, &org_name, &org_name_n) < 0 ||
            mc_reader_lenenc(&r, &fixed_len, NULL) < 0 ||
            mc_reader_u16(&r, &charset) < 0 || mc_reader_u32(&r, &length) < 0 ||
            mc_reader_u8(&r, &type) < 0 || mc_reader_u16(&r, &flags) < 0 ||
            mc_reader_u8(&r, &decimals) < 0) {
            malformed(c, "short column definition");
            goto error;
        }
        (void)catalog; (void)schema; (void)org_table; (void)org_name; (void)fixed_len;
        (void)catalog_n; (void)schema_n; (void)org_table_n; (void)org_name_n;
        if (mc_plan_column(c->st, &c->plan[i], type, flags, charset, c->converters) < 0)
            goto error;
        if (!c->use_unicode) plan_text_as_bytes(&c->plan[i]);
        c->plan[i].decimals = decimals;
        c->plan[i].length = length;
        if (c->plan[i].converter) c->has_converters = 1;
        PyObject *pyname = decode_name(name, name_n);
        if (!pyname) goto error;
        PyTuple_SET_ITEM(c->column_names, i, pyname);
        PyObject *pytable = decode_name(table, table_n);
        if (!pytable) goto error;
        PyTuple_SET_ITEM(c->column_tables, i, pytable);
        Py_INCREF(pyname);
        PyObject *d = Py_BuildValue("(NiOkkiO)", pyname, (int)type, Py_None,
                                    (unsigned long)length, (unsigned long)length, (int)decimals,
                                    (flags & MC_FLAG_NOT_NULL) ? Py_False : Py_True);
        if (!d) goto error;
        PyTuple_SET_ITEM(c->description, i, d);
        PyObject *f = PyLong_FromLong(flags);
        if (!f) goto error;
        PyTuple_SET_ITEM(c->description_flags, i, f);
    }
    if ((!(c->client_flag & CLIENT_DEPRECATE_EOF) && meta_follows) || c->cursor_wanted) {
        /* With a cursor the metadata is always followed by EOF/OK carrying
           SERVER_STATUS_CURSOR_EXISTS; without DEPRECATE_EOF there is always an EOF. */
        if (conn_read_packet(c, &p, &n) < 0) goto error;
        if (!is_eof_packet(p, n)) {
            if (!(c->client_flag & CLIENT_DEPRECATE_EOF) || !c->cursor_wanted) {
                malformed(c, "missing EOF after column definitions");
                goto error;
            }
            /* no cursor was opened: this is the first row; put it back */
            if (n >= MC_MAX_PACKET) { malformed(c, "cursor not opened before a 16 MiB row"); goto error; }
            c->rpos -= 4 + n;   /* single-fragment rows only reach here (is_eof checked) */
            c->seq--;
        } else {
            if (parse_eof(c, p, n) < 0) goto error;
            if (c->cursor_wanted && (c->server_status & SERVER_STATUS_CURSOR_EXISTS)) {
                c->state = ST_CURSOR;
            } else if (c->cursor_wanted && (c->client_flag & CLIENT_DEPRECATE_EOF)) {
                /* no cursor and DEPRECATE_EOF: that packet was the end of an empty result */
                after_result(c);
            }
        }
    }
    return nc;
error:
    /* The stream is in the middle of the result's metadata: it cannot be resumed.
       Never leave half-built description tuples behind. */
    clear_result(c);
    if (c->fd >= 0 || c->replaying) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        conn_close_socket(c);
        c->replaying = 0;
        PyErr_Restore(et, ev, tb);
    }
    return -1;
}

/* Decode one text row packet into a tuple (keys == NULL) or a dict. */
/* Put value v (a reference that is stolen) as column i of a tuple row, or under keys[i] of
   a dict row.  0 or -1. */
static inline int row_put(PyObject *row, PyObject *keys, Py_ssize_t i, PyObject *v) {
    if (!keys) {
        PyTuple_SET_ITEM(row, i, v);
        return 0;
    }
    int rc = PyDict_SetItem(row, PyTuple_GET_ITEM(keys, i), v);
    Py_DECREF(v);
    return rc;
}

/* A value failed to decode.  A built-in decoder's ValueError (bad digits, bad UTF-8, ...)
   becomes OperationalError(2027) naming the column, with the original as __cause__, and the
   connection is closed (wire data that does not parse is not trusted further); a user
   converter's exception propagates unchanged (with a note naming the column on 3.11+) and
   the connection stays usable (the row packet was consumed whole). */
static PyObject *value_error(mc_conn *c, Py_ssize_t i) {
    PyObject *name = c->column_names ? PyTuple_GET_ITEM(c->column_names, i) : Py_None;
    if (!c->plan[i].converter && PyErr_ExceptionMatches(PyExc_ValueError)) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        PyErr_NormalizeException(&et, &ev, &tb);
        PyObject *msg = PyUnicode_FromFormat("Malformed value in column %R: %S", name,
                                             ev ? ev : Py_None);
        PyObject *exc = msg ? PyObject_CallFunction(c->st->OperationalError, "iO",
                                                    CR_MALFORMED_PACKET, msg) : NULL;
        Py_XDECREF(msg);
        if (exc) {
            if (ev) PyException_SetCause(exc, Py_NewRef(ev));
            PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
            Py_DECREF(exc);
        }
        Py_XDECREF(et); Py_XDECREF(ev); Py_XDECREF(tb);
        PyObject *t2, *v2, *tb2;
        PyErr_Fetch(&t2, &v2, &tb2);
        conn_close_socket(c);
        PyErr_Restore(t2, v2, tb2);
        return NULL;
    }
#if PY_VERSION_HEX >= 0x030B0000
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyErr_NormalizeException(&et, &ev, &tb);
    if (ev && PyErr_GivenExceptionMatches(et, PyExc_Exception)) {
        PyObject *note = PyUnicode_FromFormat("while decoding column %R", name);
        if (note) {
            PyObject *res = PyObject_CallMethod(ev, "add_note", "O", note);
            Py_XDECREF(res);
            Py_DECREF(note);
        }
        PyErr_Clear();
    }
    PyErr_Restore(et, ev, tb);
#endif
    return NULL;
}

static PyObject *decode_binary_row(mc_conn *c, const unsigned char *p, size_t n, PyObject *keys) {
    const unsigned char *e = p + n;
    Py_ssize_t nc = c->plan_len;
    size_t bitmap_len = (size_t)(nc + 7 + 2) / 8;
    if (n < 1 + bitmap_len || p[0] != 0x00)
        return malformed(c, "binary row without its header and NULL bitmap");
    const unsigned char *bitmap = p + 1;
    p += 1 + bitmap_len;
    PyObject *row = keys ? PyDict_New() : PyTuple_New(nc);
    if (!row) return NULL;
    for (Py_ssize_t i = 0; i < nc; i++) {
        PyObject *v;
        size_t bit = (size_t)i + 2;
        if (bitmap[bit / 8] & (1u << (bit % 8))) {
            v = Py_NewRef(Py_None);
        } else if (c->plan[i].type == MC_TYPE_LONGLONG && e - p >= 8 &&
                   c->plan[i].kind != MC_DEC_CONVERTER) {
            /* inline fast path for the commonest binary integer: 8 bytes little-endian */
            uint64_t u = (uint64_t)p[0] | ((uint64_t)p[1] << 8) | ((uint64_t)p[2] << 16) |
                         ((uint64_t)p[3] << 24) | ((uint64_t)p[4] << 32) | ((uint64_t)p[5] << 40) |
                         ((uint64_t)p[6] << 48) | ((uint64_t)p[7] << 56);   /* one load with -O2 */
            p += 8;
            v = (c->plan[i].flags & MC_FLAG_UNSIGNED) ? PyLong_FromUnsignedLongLong(u)
                                                      : PyLong_FromLongLong((long long)u);
            if (!v) { Py_DECREF(row); return NULL; }
        } else if (c->plan[i].type == MC_TYPE_LONG && e - p >= 4 &&
                   c->plan[i].kind != MC_DEC_CONVERTER) {
            uint32_t u = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
                         ((uint32_t)p[3] << 24);
            p += 4;
            v = (c->plan[i].flags & MC_FLAG_UNSIGNED) ? PyLong_FromUnsignedLong(u)
                                                      : PyLong_FromLong((long)(int32_t)u);
            if (!v) { Py_DECREF(row); return NULL; }
        } else {
            int short_packet = 0;
            v = mc_decode_binary_value(c->st, &c->plan[i], &p, e, &short_packet);
            if (!v) {
                Py_DECREF(row);
                if (short_packet) return malformed(c, "binary value runs past the end of the row packet");
                return value_error(c, i);
            }
        }
        if (row_put(row, keys, i, v) < 0) { Py_DECREF(row); return NULL; }
    }
    if (p != e) {
        Py_DECREF(row);
        return malformed(c, "binary row has more values than columns");
    }
    if (!keys && !c->has_converters) PyObject_GC_UnTrack(row);   /* as decode_row */
    return row;
}

static PyObject *decode_row(mc_conn *c, const unsigned char *p, size_t n, PyObject *keys) {
    if (c->binary) return decode_binary_row(c, p, n, keys);
    const unsigned char *e = p + n;
    Py_ssize_t nc = c->plan_len;
    PyObject *row = keys ? PyDict_New() : PyTuple_New(nc);
    if (!row) return NULL;
    for (Py_ssize_t i = 0; i < nc; i++) {
        PyObject *v;
        if (p >= e) {
            Py_DECREF(row);
            return malformed(c, "row has fewer values than columns");
        }
        unsigned b = *p++;
        if (b == 0xFB) {
            v = Py_None;
            Py_INCREF(v);
        } else {
            uint64_t len;
            if (b < 0xFB) {
                len = b;
            } else if (b == 0xFC) {
                if (e - p < 2) goto short_row;
                len = (uint64_t)p[0] | ((uint64_t)p[1] << 8);
                p += 2;
            } else if (b == 0xFD) {
                if (e - p < 3) goto short_row;
                len = mc_load_u24(p);
                p += 3;
            } else if (b == 0xFE) {
                if (e - p < 8) goto short_row;
                len = 0;
                for (int k = 7; k >= 0; k--) len = (len << 8) | p[k];
                p += 8;
            } else {
                goto short_row;
            }
            if (len > (uint64_t)(e - p)) goto short_row;
            const mc_column_plan *col = &c->plan[i];
            v = NULL;
            if (col->kind == MC_DEC_INT && len > 0 && len <= 18) {
                /* inline fast path: [-]digits, at most 18 of them, always fits int64 */
                const unsigned char *q = p, *qe = p + len;
                int neg = (*q == '-');
                q += neg;
                if (q < qe) {
                    int64_t acc = 0;
                    for (; q < qe; q++) {
                        unsigned d = (unsigned)(*q - '0');
                        if (d > 9) break;
                        acc = acc * 10 + (int64_t)d;
                    }
                    if (q == qe) {
                        v = PyLong_FromLongLong(neg ? -acc : acc);
                        if (!v) goto value_error;
                    }
                }
            }
            if (!v)
                v = mc_decode_text_value(c->st, col, p, (size_t)len);
            p += len;
            if (!v) {
            value_error:;
                Py_DECREF(row);
                return value_error(c, i);
            }
        }
        if (row_put(row, keys, i, v) < 0) { Py_DECREF(row); return NULL; }
    }
    if (p != e) {
        Py_DECREF(row);
        return malformed(c, "row has more values than columns");
    }
    if (!keys) {
        /* A tuple of atomic values (int, float, str, bytes, Decimal, date/time, None) cannot
           be part of a reference cycle: untrack it now, as CPython's GC would on its first
           pass, so that large results do not make every collection walk every row. */
        /* With a user converter any object may come back (even an untracked dict
           that becomes part of a cycle later), so the tuple stays tracked. */
        if (!c->has_converters) PyObject_GC_UnTrack(row);
    }
    return row;
short_row:
    Py_DECREF(row);
    return malformed(c, "value length runs past the end of the row packet");
}

/* Read the next row packet; returns 1 with the packet in p and n for a row, 0 at the end of the result
   set (state updated), -1 on error. */
static int next_row_packet(mc_conn *c, const unsigned char **p, size_t *n) {
    if (conn_read_packet(c, p, n) < 0) return -1;
    if (*n == 0) { malformed(c, "empty row packet"); return -1; }
    unsigned char h = (*p)[0];
    if (h == 0xFE && *n < MC_MAX_PACKET) {
        if (parse_eof(c, *p, *n) < 0) return -1;
        if (c->cursor_wanted && (c->server_status & SERVER_STATUS_CURSOR_EXISTS) &&
            !(c->server_status & SERVER_STATUS_LAST_ROW_SENT))
            c->state = ST_CURSOR;   /* more rows with the next COM_STMT_FETCH */
        else
            after_result(c);
        return 0;
    }
    if (h == 0xFF) {
        c->state = ST_IDLE;
        raise_err_packet(c, *p, *n);
        return -1;
    }
    return 1;
}

/* ================================================================ guard */

static int enter(mc_conn *c) {
    if (c->closing) {   /* another thread is closing it (drain(closing=True), then close()) */
        conn_client_error(c, c->st->InterfaceError, 0,
                          "the connection was closed (close() from another thread)");
        return -1;
    }
    if (c->in_use) {
        mc_raise(c->st->ProgrammingError, 0,
                 "this connection is being used by another thread (or re-entered from a "
                 "converter); connections cannot be shared between threads at once");
        return -1;
    }
    if (c->fd < 0 && !c->replaying) {
        raise_closed(c);
        return -1;
    }
    c->in_use = 1;
    return 0;
}

static inline void leave(mc_conn *c) { c->in_use = 0; }

/* ---------------------------------------------------------------- for columnar.c */

int mc_conn_enter(mc_conn *c) { return enter(c); }
void mc_conn_leave(mc_conn *c) { leave(c); }
int mc_conn_next_row(mc_conn *c, const unsigned char **p, size_t *n) {
    return next_row_packet(c, p, n);
}
PyObject *mc_conn_malformed(mc_conn *c, const char *what) { return malformed(c, what); }
PyObject *mc_conn_decode_row(mc_conn *c, const unsigned char *p, size_t n, PyObject *keys) {
    return decode_row(c, p, n, keys);
}
void mc_conn_close_socket(mc_conn *c) { conn_close_socket(c); }
int mc_conn_cursor_fetch(mc_conn *c, uint32_t n) {
    unsigned char arg[8];
    for (int q = 0; q < 4; q++) arg[q] = (unsigned char)(c->cursor_stmt >> (8 * q));
    for (int q = 0; q < 4; q++) arg[4 + q] = (unsigned char)(n >> (8 * q));
    if (conn_command(c, COM_STMT_FETCH, arg, 8) < 0) return -1;
    c->state = ST_ROWS;
    return 0;
}

/* ================================================================ type */

static PyObject *Conn_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    mc_conn *c = (mc_conn *)type->tp_alloc(type, 0);
    if (!c) return NULL;
    c->fd = -1;
    c->read_timeout = c->write_timeout = -1;
    c->sig_countdown = MC_SIGNAL_PACKETS;
    c->use_unicode = 1;
    memcpy(c->last_sqlstate, "00000", 6);
    c->st = mc_state_from_type(type);
    if (!c->st) { Py_DECREF(c); return NULL; }
    c->module = PyType_GetModule(type);   /* the type is not subclassable */
    if (!c->module) { Py_DECREF(c); return NULL; }
    Py_INCREF(c->module);
    if (mc_writer_init(&c->join, 256) < 0 || mc_writer_init(&c->wbuf, 512) < 0 ||
        mc_writer_init(&c->zsend, 256) < 0 || mc_writer_init(&c->zout, 256) < 0) {
        Py_DECREF(c);
        return NULL;
    }
    return (PyObject *)c;
}

static int Conn_traverse(mc_conn *c, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(c));
    Py_VISIT(c->module);
    Py_VISIT(c->converters);
    Py_VISIT(c->auth_plugins);
    Py_VISIT(c->infile_handler);
    Py_VISIT(c->meta_cache);
    Py_VISIT(c->connect_attrs);
    Py_VISIT(c->description);
    Py_VISIT(c->column_names);
    Py_VISIT(c->column_tables);
    for (Py_ssize_t i = 0; i < c->plan_len; i++) {
        Py_VISIT(c->plan[i].converter);
        Py_VISIT(c->plan[i].codec_obj);
    }
    return 0;
}

static int Conn_clear(mc_conn *c) {
    clear_result(c);
    Py_CLEAR(c->converters);
    Py_CLEAR(c->server_version);
    Py_CLEAR(c->auth_plugin_name);
    Py_CLEAR(c->info);
    Py_CLEAR(c->auth_plugins);
    Py_CLEAR(c->server_public_key);
    Py_CLEAR(c->infile_handler);
    Py_CLEAR(c->meta_cache);
    Py_CLEAR(c->last_error);
    Py_CLEAR(c->connect_attrs);
    return 0;
}

static void Conn_dealloc(mc_conn *c) {
    PyTypeObject *tp = Py_TYPE(c);
    PyObject_GC_UnTrack(c);
    if (c->fd >= 0 && !c->ssl && !c->compress && (c->state == ST_IDLE || c->state == ST_CURSOR)) {
        /* dropped without close(): still say goodbye (COM_QUIT), without blocking */
        unsigned char pkt[5] = {1, 0, 0, 0, COM_QUIT};
        (void)send(c->fd, pkt, sizeof(pkt), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    if (c->ssl) { SSL_free(c->ssl); c->ssl = NULL; }
    if (c->ssl_ctx) { SSL_CTX_free(c->ssl_ctx); c->ssl_ctx = NULL; }
    if (c->fd >= 0) { close(c->fd); c->fd = -1; }
    Conn_clear(c);
    PyMem_Free(c->zbuf);
    mc_writer_free(&c->zsend);
    mc_writer_free(&c->zout);
    PyMem_Free(c->rbuf);
    mc_writer_free(&c->join);
    mc_writer_free(&c->wbuf);
    mc_writer_free(&c->capture);
    Py_CLEAR(c->module);
    tp->tp_free((PyObject *)c);
    Py_DECREF(tp);
}

/* ---------------------------------------------------------------- connect */

static int set_timeout(PyObject *v, double *out, const char *name) {
    if (v == NULL || v == Py_None) { *out = -1; return 0; }
    double d = PyFloat_AsDouble(v);
    if (d == -1.0 && PyErr_Occurred()) return -1;
    if (!(d > 0) || isinf(d)) {
        PyErr_Format(PyExc_ValueError, "%s must be a positive number of seconds or None", name);
        return -1;
    }
    *out = d;
    return 0;
}

/* Open the socket; returns 0 or -1 with exception. */
static int open_socket(mc_conn *c, const char *host, int port, const char *unix_path,
                       double timeout) {
    int fd = -1, err = 0, timed_out = 0;
    if (unix_path) {
        struct sockaddr_un sa;
        if (strlen(unix_path) >= sizeof(sa.sun_path)) {
            mc_raise(c->st->OperationalError, CR_CONNECTION_ERROR,
                     "Can't connect to local server through socket '%s' (path too long)", unix_path);
            return -1;
        }
        memset(&sa, 0, sizeof(sa));
        sa.sun_family = AF_UNIX;
        strcpy(sa.sun_path, unix_path);
        Py_BEGIN_ALLOW_THREADS
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) err = errno;
        else if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
            err = errno; close(fd); fd = -1;
        }
        Py_END_ALLOW_THREADS
        if (fd < 0) {
            mc_raise(c->st->OperationalError, CR_CONNECTION_ERROR,
                     "Can't connect to local server through socket '%s' (%d: %s)",
                     unix_path, err, strerror(err));
            return -1;
        }
        c->fd = fd;
        c->is_unix = 1;
        return 0;
    }
    char portstr[16];
    snprintf(portstr, sizeof(portstr), "%d", port);
    struct addrinfo hints, *res = NULL, *ai;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    int gai;
    Py_BEGIN_ALLOW_THREADS
    gai = getaddrinfo(host, portstr, &hints, &res);
    Py_END_ALLOW_THREADS
    if (gai != 0) {
        mc_raise(c->st->OperationalError, 2005, "Unknown server host '%s' (%s)", host,
                 gai_strerror(gai));
        return -1;
    }
    double deadline = timeout >= 0 ? monotonic() + timeout : -1;
    Py_BEGIN_ALLOW_THREADS
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) { err = errno; continue; }
        int fl = fcntl(fd, F_GETFL, 0);
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
        int r = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (r < 0 && errno == EINPROGRESS) {
            for (;;) {
                double left = deadline < 0 ? -1 : deadline - monotonic();
                if (deadline >= 0 && left <= 0) { timed_out = 1; break; }
                int w = wait_fd(fd, POLLOUT, left);
                if (w == 0) { timed_out = 1; break; }
                if (w < 0) { err = errno; break; }   /* EINTR: give Python a chance (below) */
                int soerr = 0;
                socklen_t sl = sizeof(soerr);
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
                err = soerr;
                break;
            }
            if (timed_out) err = ETIMEDOUT;
            r = (err == 0) ? 0 : -1;
        } else if (r < 0) {
            err = errno;
        }
        if (r == 0) {
            fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
            setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
            err = 0;
            break;
        }
        close(fd);
        fd = -1;
        if (timed_out) break;
    }
    Py_END_ALLOW_THREADS
    freeaddrinfo(res);
    if (fd < 0 && err == EINTR && PyErr_CheckSignals() < 0)
        return -1;   /* Ctrl-C while connecting */
    if (fd < 0) {
        if (timed_out) {
            char tbuf[32];
            snprintf(tbuf, sizeof(tbuf), "%g", timeout);
            mc_raise(c->st->OperationalError, CR_CONN_HOST_ERROR,
                     "Can't connect to server on '%s:%d' (timed out after %s s)", host, port,
                     tbuf);
        }
        else
            mc_raise(c->st->OperationalError, CR_CONN_HOST_ERROR,
                     "Can't connect to server on '%s:%d' (%d: %s)", host, port, err,
                     strerror(err));
        return -1;
    }
    c->fd = fd;
    c->is_unix = 0;
    return 0;
}

typedef struct {
    const unsigned char *data;
    size_t len;
} span;

/* ---------------------------------------------------------------- authentication */

typedef struct {
    char plugin[64];
    unsigned char nonce[64];
    size_t nonce_len;
    int pubkey_requested;
} auth_state;

static int secure_transport(mc_conn *c) { return c->ssl != NULL || c->is_unix; }

static int plugin_known(const char *name) {
    return !strcmp(name, "mysql_native_password") || !strcmp(name, "caching_sha2_password") ||
           !strcmp(name, "sha256_password") || !strcmp(name, "mysql_clear_password");
}

static int put_clear_password(mc_writer *out, span pw) {
    if (mc_writer_put(out, pw.data, pw.len) < 0) return -1;
    return mc_writer_u8(out, 0);
}

static int put_rsa_password(mc_conn *c, auth_state *a, span pw, const unsigned char *pem,
                            size_t pemlen, mc_writer *out) {
    PyObject *enc = mc_auth_rsa_encrypt(c->st, pem, pemlen, pw.data, pw.len, a->nonce,
                                        a->nonce_len > 20 ? 20 : a->nonce_len);
    if (!enc) { conn_close_socket(c); return -1; }
    int r = mc_writer_put(out, PyBytes_AS_STRING(enc), (size_t)PyBytes_GET_SIZE(enc));
    Py_DECREF(enc);
    return r;
}

static int no_secure_path(mc_conn *c, const char *plugin) {
    conn_fatal(c, c->st->OperationalError, CR_AUTH_PLUGIN_ERR,
               "Authentication plugin '%s' reported error: Authentication requires secure "
               "connection (use TLS, a unix socket, server_public_key=..., or allow "
               "get_server_public_key=True)", plugin);
    return -1;
}

/* The first response for a.plugin (after the handshake or an AuthSwitchRequest), into out. */
static int auth_first(mc_conn *c, auth_state *a, span pw, mc_writer *out) {
    const char *pl = a->plugin;
    out->len = 0;
    if (!strcmp(pl, "mysql_native_password")) {
        unsigned char r[20];
        if (pw.len == 0) return 0;
        if (a->nonce_len < 20) { malformed(c, "authentication nonce shorter than 20 bytes"); return -1; }
        if (mc_auth_native(pw.data, pw.len, a->nonce, 20, r) < 0) return -1;
        return mc_writer_put(out, r, 20);
    }
    if (!strcmp(pl, "caching_sha2_password")) {
        unsigned char r[32];
        if (pw.len == 0) return 0;
        if (a->nonce_len < 20) { malformed(c, "authentication nonce shorter than 20 bytes"); return -1; }
        if (mc_auth_caching_sha2(pw.data, pw.len, a->nonce, 20, r) < 0) return -1;
        return mc_writer_put(out, r, 32);
    }
    if (!strcmp(pl, "sha256_password")) {
        if (pw.len == 0) return mc_writer_u8(out, 0);
        if (secure_transport(c)) return put_clear_password(out, pw);
        if (c->server_public_key)
            return put_rsa_password(c, a, pw, (const unsigned char *)PyBytes_AS_STRING(c->server_public_key),
                                    (size_t)PyBytes_GET_SIZE(c->server_public_key), out);
        if (c->allow_pubkey_request) {
            a->pubkey_requested = 1;
            return mc_writer_u8(out, 1);   /* request the server's public key */
        }
        return no_secure_path(c, pl);
    }
    if (!strcmp(pl, "mysql_clear_password")) {
        if (!secure_transport(c) && !c->allow_cleartext) {
            conn_fatal(c, c->st->OperationalError, CR_AUTH_PLUGIN_CANNOT_LOAD,
                       "Authentication plugin 'mysql_clear_password' refused: it would send the "
                       "password in clear text over an unencrypted connection (use TLS or a unix "
                       "socket, or pass enable_cleartext_plugin=True)");
            return -1;
        }
        return put_clear_password(out, pw);
    }
    /* plugins implemented in Python (client_ed25519 via PyNaCl), registered by the DB-API layer */
    PyObject *fn = c->auth_plugins ? PyDict_GetItemString(c->auth_plugins, pl) : NULL;
    if (fn) {
        PyObject *res = PyObject_CallFunction(fn, "y#y#", (const char *)pw.data, (Py_ssize_t)pw.len,
                                              (const char *)a->nonce, (Py_ssize_t)a->nonce_len);
        if (!res) { conn_close_socket(c); return -1; }
        if (!PyBytes_Check(res)) {
            Py_DECREF(res);
            conn_fatal(c, c->st->OperationalError, CR_AUTH_PLUGIN_ERR,
                       "authentication plugin '%s' returned a non-bytes response", pl);
            return -1;
        }
        int r = mc_writer_put(out, PyBytes_AS_STRING(res), (size_t)PyBytes_GET_SIZE(res));
        Py_DECREF(res);
        return r;
    }
    conn_fatal(c, c->st->OperationalError, CR_AUTH_PLUGIN_CANNOT_LOAD,
               "Authentication plugin '%s' cannot be loaded: not supported by mysqlc", pl);
    return -1;
}

/* AuthMoreData (0x01 + data).  Returns 1 with a response in out, 0 when nothing is to be
   sent (keep reading), -1 on error. */
static int auth_more(mc_conn *c, auth_state *a, span pw, const unsigned char *d, size_t n,
                     mc_writer *out) {
    out->len = 0;
    int is_pem = n > 10 && !memcmp(d, "-----BEGIN", 10);
    if (a->pubkey_requested && is_pem) {
        a->pubkey_requested = 0;
        if (put_rsa_password(c, a, pw, d, n, out) < 0) return -1;
        return 1;
    }
    if (!strcmp(a->plugin, "caching_sha2_password") && n == 1) {
        if (d[0] == 3) return 0;   /* fast authentication succeeded; OK follows */
        if (d[0] == 4) {           /* full authentication */
            if (secure_transport(c)) {
                if (put_clear_password(out, pw) < 0) return -1;
                return 1;
            }
            if (c->server_public_key) {
                if (put_rsa_password(c, a, pw,
                                     (const unsigned char *)PyBytes_AS_STRING(c->server_public_key),
                                     (size_t)PyBytes_GET_SIZE(c->server_public_key), out) < 0)
                    return -1;
                return 1;
            }
            if (c->allow_pubkey_request) {
                a->pubkey_requested = 1;
                if (mc_writer_u8(out, 2) < 0) return -1;   /* request the public key */
                return 1;
            }
            return no_secure_path(c, a->plugin);
        }
    }
    malformed(c, "unexpected AuthMoreData from the server");
    return -1;
}

typedef struct {
    mc_tls_opts tls;
    const char *host;
    double connect_timeout;
    unsigned collation;
    uint32_t extra_flags;
    int want_compress;
    PyObject *attrs;   /* dict str -> str or NULL */
} connect_opts;

static int put_attrs(mc_writer *w, PyObject *attrs) {
    mc_writer tmp;
    if (mc_writer_init(&tmp, 256) < 0) return -1;
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(attrs, &pos, &k, &v)) {
        Py_ssize_t kl, vl;
        const char *ks = PyUnicode_Check(k) ? PyUnicode_AsUTF8AndSize(k, &kl) : NULL;
        const char *vs = PyUnicode_Check(v) ? PyUnicode_AsUTF8AndSize(v, &vl) : NULL;
        if (!ks || !vs) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "connection attributes must be str -> str");
            mc_writer_free(&tmp);
            return -1;
        }
        if (mc_writer_lenenc_str(&tmp, ks, (size_t)kl) < 0 || mc_writer_lenenc_str(&tmp, vs, (size_t)vl) < 0) {
            mc_writer_free(&tmp);
            return -1;
        }
    }
    int r = mc_writer_lenenc_str(w, tmp.buf, tmp.len);
    mc_writer_free(&tmp);
    return r;
}

static const char *ssl_mode_name(int m) {
    static const char *names[] = {"DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY"};
    return (m >= 0 && m <= 4) ? names[m] : "?";
}

static int start_tls(mc_conn *c, const connect_opts *o) {
    if (!c->ssl_ctx) {
        c->ssl_ctx = mc_tls_context(c->st, &o->tls);
        if (!c->ssl_ctx) { conn_close_socket(c); return -1; }
    }
    int fl = fcntl(c->fd, F_GETFL, 0);
    fcntl(c->fd, F_SETFL, fl | O_NONBLOCK);
    c->ssl = mc_tls_handshake(c->st, c->ssl_ctx, c->fd, o->host, &o->tls, o->connect_timeout);
    if (!c->ssl) { conn_close_socket(c); return -1; }
    return 0;
}

/* The authentication exchange after the HandshakeResponse41 or COM_CHANGE_USER has been
   sent: OK, ERR, AuthSwitchRequest (0xFE) or AuthMoreData (0x01) until OK.  0 with the OK
   parsed; -1 with the exception (ERR: the server's error, the connection left open for
   the caller to decide; anything malformed: the connection closed). */
static int auth_exchange(mc_conn *c, auth_state *a, span password, mc_writer *authout) {
    const unsigned char *p;
    size_t n;
    mc_reader r;
    int rounds = 0;
    for (;;) {
        if (++rounds > 16) { malformed(c, "too many authentication round trips"); return -1; }
        if (conn_read_packet(c, &p, &n) < 0) return -1;
        if (n == 0) { malformed(c, "empty authentication reply"); return -1; }
        if (p[0] == 0x00) return parse_ok(c, p, n);
        if (p[0] == 0xFF) {
            raise_err_packet(c, p, n);
            return -1;
        }
        if (p[0] == 0xFE) {
            if (n == 1) {   /* old AuthSwitchRequest: mysql_old_password */
                conn_fatal(c, c->st->OperationalError, CR_AUTH_PLUGIN_CANNOT_LOAD,
                           "Server requested the insecure pre-4.1 password authentication");
                return -1;
            }
            const unsigned char *pn, *data;
            size_t pn_n, data_n;
            mc_reader_init(&r, p + 1, n - 1);
            if (mc_reader_nulstr(&r, &pn, &pn_n) < 0) { malformed(c, "bad AuthSwitchRequest"); return -1; }
            data = r.p;
            data_n = mc_reader_left(&r);
            while (data_n > 0 && data[data_n - 1] == 0) data_n--;
            if (pn_n == 0 || pn_n >= sizeof(a->plugin)) { malformed(c, "bad plugin name"); return -1; }
            memcpy(a->plugin, pn, pn_n);
            a->plugin[pn_n] = 0;
            if (data_n > sizeof(a->nonce)) data_n = sizeof(a->nonce);
            memcpy(a->nonce, data, data_n);
            a->nonce_len = data_n;
            a->pubkey_requested = 0;
            if (auth_first(c, a, password, authout) < 0) return -1;
            if (conn_send(c, authout->buf, authout->len, NULL, 0) < 0) return -1;
            continue;
        }
        if (p[0] == 0x01) {
            int m = auth_more(c, a, password, p + 1, n - 1, authout);
            if (m < 0) return -1;
            if (m == 1 && conn_send(c, authout->buf, authout->len, NULL, 0) < 0) return -1;
            continue;
        }
        malformed(c, "unexpected authentication reply");
        return -1;
    }
}

static int do_handshake(mc_conn *c, span user, span password, span database,
                        const connect_opts *o) {
    const unsigned char *p;
    size_t n;
    mc_reader r;
    auth_state a;
    memset(&a, 0, sizeof(a));
    c->seq = 0;
    /* libmysqlclient's words for a greeting that never comes */
    c->lost_at = "at 'reading initial communication packet'";
    int got = conn_read_packet(c, &p, &n);
    c->lost_at = NULL;
    if (got < 0) return -1;
    if (n == 0) { malformed(c, "empty handshake"); return -1; }
    if (p[0] == 0xFF) {    /* e.g. too many connections, host blocked */
        raise_err_packet(c, p, n);
        conn_close_socket(c);
        return -1;
    }
    mc_reader_init(&r, p, n);
    uint8_t proto;
    const unsigned char *ver, *part1, *part2 = NULL, *plugin = NULL;
    size_t ver_n, part2_n = 0, plugin_n = 0;
    uint32_t thread_id;
    uint16_t cap_lo, cap_hi = 0, status = 0;
    uint8_t charset = 0, authlen = 0, filler;
    if (mc_reader_u8(&r, &proto) < 0 || proto != 10) {
        conn_fatal(c, c->st->OperationalError, CR_SERVER_HANDSHAKE_ERR,
                   "Unsupported handshake protocol version %d (expected 10)", (int)proto);
        return -1;
    }
    if (mc_reader_nulstr(&r, &ver, &ver_n) < 0 || mc_reader_u32(&r, &thread_id) < 0 ||
        mc_reader_bytes(&r, 8, &part1) < 0 || mc_reader_u8(&r, &filler) < 0 ||
        mc_reader_u16(&r, &cap_lo) < 0) {
        malformed(c, "short handshake");
        return -1;
    }
    uint32_t caps = cap_lo;
    uint32_t srv_ext = 0;
    if (mc_reader_left(&r) > 0) {
        const unsigned char *reserved;
        if (mc_reader_u8(&r, &charset) < 0 || mc_reader_u16(&r, &status) < 0 ||
            mc_reader_u16(&r, &cap_hi) < 0 || mc_reader_u8(&r, &authlen) < 0 ||
            mc_reader_bytes(&r, 10, &reserved) < 0) {
            malformed(c, "short handshake");
            return -1;
        }
        caps |= (uint32_t)cap_hi << 16;
        /* MariaDB (10.2+) clears CLIENT_LONG_PASSWORD ("CLIENT_MYSQL") and puts its
           extended capabilities in the last 4 reserved bytes */
        srv_ext = (cap_lo & CLIENT_LONG_PASSWORD) ? 0 :
                  (uint32_t)reserved[6] | ((uint32_t)reserved[7] << 8) |
                  ((uint32_t)reserved[8] << 16) | ((uint32_t)reserved[9] << 24);
        if (caps & CLIENT_SECURE_CONNECTION) {
            size_t want = authlen > 8 ? (size_t)authlen - 8 : 13;
            if (want < 13) want = 13;
            if (want > mc_reader_left(&r)) want = mc_reader_left(&r);
            mc_reader_bytes(&r, want, &part2);
            part2_n = want;
            while (part2_n > 0 && part2[part2_n - 1] == 0) part2_n--;  /* trailing NUL */
        }
        if (caps & CLIENT_PLUGIN_AUTH) {
            if (mc_reader_nulstr(&r, &plugin, &plugin_n) < 0) {
                plugin = r.p;   /* some servers omit the final NUL */
                plugin_n = mc_reader_left(&r);
            }
        }
    }
    c->protocol_version = proto;
    c->thread_id = thread_id;
    c->server_caps = caps;
    c->server_collation = charset;
    c->server_status = status;
    Py_XSETREF(c->server_version, PyUnicode_DecodeUTF8((const char *)ver, (Py_ssize_t)ver_n, "replace"));
    if (!c->server_version) return -1;
    if (!(caps & CLIENT_PROTOCOL_41)) {
        conn_fatal(c, c->st->OperationalError, CR_SERVER_HANDSHAKE_ERR,
                   "Server does not support the 4.1 protocol (CLIENT_PROTOCOL_41)");
        return -1;
    }
    memcpy(a.nonce, part1, 8);
    a.nonce_len = 8;
    if (part2_n) {
        if (part2_n > sizeof(a.nonce) - 8) part2_n = sizeof(a.nonce) - 8;
        memcpy(a.nonce + 8, part2, part2_n);
        a.nonce_len += part2_n;
    }
    strcpy(a.plugin, "mysql_native_password");
    if (plugin && plugin_n > 0 && plugin_n < sizeof(a.plugin)) {
        char srv[64];
        memcpy(srv, plugin, plugin_n);
        srv[plugin_n] = 0;
        /* answer with the server's default plugin when we implement it in C */
        if (plugin_known(srv) && strcmp(srv, "mysql_clear_password") != 0) strcpy(a.plugin, srv);
    }
    /* COM_CHANGE_USER answers the handshake's scramble with the same first plugin */
    memcpy(c->scramble, a.nonce, a.nonce_len);
    c->scramble_len = a.nonce_len;
    memcpy(c->first_plugin, a.plugin, sizeof(a.plugin));
    c->handshake_collation = (uint8_t)(o->collation & 0xFF);
    Py_XSETREF(c->connect_attrs, o->attrs ? Py_NewRef(o->attrs) : NULL);

    uint32_t want = CLIENT_LONG_PASSWORD | CLIENT_LONG_FLAG | CLIENT_PROTOCOL_41 |
                    CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH |
                    CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | CLIENT_TRANSACTIONS |
                    CLIENT_MULTI_RESULTS | CLIENT_PS_MULTI_RESULTS | CLIENT_DEPRECATE_EOF |
                    (o->extra_flags & (CLIENT_FOUND_ROWS | CLIENT_MULTI_STATEMENTS |
                                       CLIENT_IGNORE_SPACE | CLIENT_INTERACTIVE |
                                       CLIENT_NO_SCHEMA | CLIENT_ODBC | CLIENT_LOCAL_FILES));
    if (database.data) want |= CLIENT_CONNECT_WITH_DB;
    if (o->want_compress) want |= CLIENT_COMPRESS;
    if (o->attrs) want |= CLIENT_CONNECT_ATTRS;
    uint32_t flags = want & caps;

    /* TLS: never send credentials in the clear when TLS is required */
    int use_tls = 0;
    if (o->tls.mode >= MC_SSL_REQUIRED) {
        if (!(caps & CLIENT_SSL)) {
            conn_fatal(c, c->st->OperationalError, CR_SSL_CONNECTION_ERROR,
                       "SSL connection error: the server does not support TLS, but "
                       "ssl_mode=%s requires it", ssl_mode_name(o->tls.mode));
            return -1;
        }
        use_tls = 1;
    } else if (o->tls.mode == MC_SSL_PREFERRED && (caps & CLIENT_SSL) && !c->is_unix) {
        use_tls = 1;
    }
    mc_writer *w = &c->wbuf;
    unsigned char zeros[23];
    memset(zeros, 0, sizeof(zeros));
    /* MariaDB extended capabilities go in the last 4 filler bytes, of the SSLRequest too
       (the server takes them from the first packet it reads) */
    c->ext_caps = srv_ext & (MARIADB_CLIENT_STMT_BULK_OPERATIONS | MARIADB_CLIENT_CACHE_METADATA);
    zeros[19] = (unsigned char)c->ext_caps;
    zeros[20] = (unsigned char)(c->ext_caps >> 8);
    zeros[21] = (unsigned char)(c->ext_caps >> 16);
    zeros[22] = (unsigned char)(c->ext_caps >> 24);
    if (use_tls) {
        flags |= CLIENT_SSL;
        w->len = 0;
        if (mc_writer_u32(w, flags) < 0 || mc_writer_u32(w, 0x01000000u) < 0 ||
            mc_writer_u8(w, (uint8_t)(o->collation & 0xFF)) < 0 || mc_writer_put(w, zeros, 23) < 0)
            return -1;
        if (conn_send(c, w->buf, w->len, NULL, 0) < 0) return -1;   /* SSLRequest */
        if (start_tls(c, o) < 0) return -1;
    }
    c->client_flag = flags;

    mc_writer authout;
    if (mc_writer_init(&authout, 64) < 0) return -1;
    int rc = -1;
    if (auth_first(c, &a, password, &authout) < 0) goto done;

    w->len = 0;
    if (mc_writer_u32(w, flags) < 0 || mc_writer_u32(w, 0x01000000u) < 0 ||
        mc_writer_u8(w, (uint8_t)(o->collation & 0xFF)) < 0 || mc_writer_put(w, zeros, 23) < 0 ||
        mc_writer_put(w, user.data, user.len) < 0 || mc_writer_u8(w, 0) < 0)
        goto done;
    if (flags & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA) {
        if (mc_writer_lenenc_str(w, authout.buf, authout.len) < 0) goto done;
    } else {
        if (authout.len > 255) { malformed(c, "authentication response too long"); goto done; }
        if (mc_writer_u8(w, (uint8_t)authout.len) < 0 || mc_writer_put(w, authout.buf, authout.len) < 0)
            goto done;
    }
    if (flags & CLIENT_CONNECT_WITH_DB) {
        if (mc_writer_put(w, database.data, database.len) < 0 || mc_writer_u8(w, 0) < 0) goto done;
    }
    if (flags & CLIENT_PLUGIN_AUTH) {
        if (mc_writer_put(w, a.plugin, strlen(a.plugin)) < 0 || mc_writer_u8(w, 0) < 0) goto done;
    }
    if ((flags & CLIENT_CONNECT_ATTRS) && o->attrs) {
        if (put_attrs(w, o->attrs) < 0) goto done;
    }
    if (conn_send(c, w->buf, w->len, NULL, 0) < 0) goto done;
    if (auth_exchange(c, &a, password, &authout) < 0) {
        conn_close_socket(c);   /* a refused login ends the connection */
        goto done;
    }
    Py_XSETREF(c->auth_plugin_name, PyUnicode_FromString(a.plugin));
    if (!c->auth_plugin_name) goto done;
    c->state = ST_IDLE;
    if (flags & CLIENT_COMPRESS) {
        c->compress = 1;   /* everything after the handshake is framed */
        c->cseq = 0;
        if (c->rpos != c->rend) { malformed(c, "unexpected bytes after authentication"); goto done; }
    }
    rc = 0;
done:
    if (authout.buf) memset(authout.buf, 0, authout.cap);
    mc_writer_free(&authout);
    return rc;
}

static int get_span(PyObject *o, span *s, Py_buffer *view, const char *name) {
    s->data = NULL;
    s->len = 0;
    view->obj = NULL;
    if (o == NULL || o == Py_None) return 0;
    if (PyUnicode_Check(o)) {
        Py_ssize_t l;
        const char *u = PyUnicode_AsUTF8AndSize(o, &l);
        if (!u) return -1;
        s->data = (const unsigned char *)u;
        s->len = (size_t)l;
        return 0;
    }
    if (PyObject_GetBuffer(o, view, PyBUF_SIMPLE) < 0) {
        PyErr_Format(PyExc_TypeError, "%s must be bytes or str", name);
        return -1;
    }
    s->data = view->buf;
    s->len = (size_t)view->len;
    return 0;
}

static PyObject *Conn_connect(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"host", "port", "unix_socket", "user", "password", "database",
                             "collation", "client_flag", "connect_timeout", "read_timeout",
                             "write_timeout", "ssl_mode", "ssl_ca", "ssl_capath", "ssl_cert",
                             "ssl_key", "ssl_cipher", "tls_min_version", "tls_max_version",
                             "server_public_key", "allow_public_key_request",
                             "allow_cleartext", "compress", "attrs", "auth_plugins",
                             "local_files", "server_hostname", NULL};
    const char *host = NULL, *unix_socket = NULL;
    int port = 3306;
    unsigned int collation = 45;
    unsigned long client_flag = 0;
    PyObject *user = NULL, *password = NULL, *database = NULL;
    PyObject *ct = NULL, *rt = NULL, *wt = NULL;
    connect_opts o;
    memset(&o, 0, sizeof(o));
    PyObject *pubkey = Py_None, *attrs = Py_None, *plugins = Py_None;
    int allow_req = 0, allow_clear = 0, compress = 0, local_files = 0;
    const char *server_hostname = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|ziz$OOOIkOOOizzzzzii" "OpppOOpz", kwlist,
                                     &host, &port, &unix_socket, &user, &password, &database,
                                     &collation, &client_flag, &ct, &rt, &wt,
                                     &o.tls.mode, &o.tls.ca, &o.tls.capath, &o.tls.cert,
                                     &o.tls.key, &o.tls.cipher, &o.tls.min_version,
                                     &o.tls.max_version, &pubkey, &allow_req, &allow_clear,
                                     &compress, &attrs, &plugins, &local_files,
                                     &server_hostname))
        return NULL;
    if (c->fd >= 0) {
        mc_raise(c->st->ProgrammingError, 0, "already connected");
        return NULL;
    }
    if (c->in_use) return mc_raise(c->st->ProgrammingError, 0, "connection is in use");
    if (o.tls.mode < MC_SSL_DISABLED || o.tls.mode > MC_SSL_VERIFY_IDENTITY) {
        PyErr_Format(PyExc_ValueError, "ssl_mode must be 0..4, not %d", o.tls.mode);
        return NULL;
    }
    if (pubkey != Py_None && !PyBytes_Check(pubkey)) {
        PyErr_SetString(PyExc_TypeError, "server_public_key must be bytes (PEM) or None");
        return NULL;
    }
    if (attrs != Py_None && !PyDict_Check(attrs)) {
        PyErr_SetString(PyExc_TypeError, "attrs must be a dict or None");
        return NULL;
    }
    if (plugins != Py_None && !PyDict_Check(plugins)) {
        PyErr_SetString(PyExc_TypeError, "auth_plugins must be a dict or None");
        return NULL;
    }
    if (!host && !unix_socket) host = "127.0.0.1";
    if (port <= 0 || port > 65535) {
        PyErr_Format(PyExc_ValueError, "port must be in 1..65535, not %d", port);
        return NULL;
    }
    if (set_timeout(ct, &o.connect_timeout, "connect_timeout") < 0 ||
        set_timeout(rt, &c->read_timeout, "read_timeout") < 0 ||
        set_timeout(wt, &c->write_timeout, "write_timeout") < 0)
        return NULL;
    /* the name TLS checks the certificate against (and sends as SNI) */
    o.host = server_hostname ? server_hostname : unix_socket ? (host ? host : "localhost") : host;
    o.collation = collation;
    o.extra_flags = (uint32_t)client_flag;
    o.want_compress = compress;
    if (local_files) o.extra_flags |= CLIENT_LOCAL_FILES;
    o.attrs = attrs == Py_None ? NULL : attrs;
    Py_XSETREF(c->server_public_key, pubkey == Py_None ? NULL : Py_NewRef(pubkey));
    Py_XSETREF(c->auth_plugins, plugins == Py_None ? NULL : Py_NewRef(plugins));
    c->allow_pubkey_request = allow_req;
    c->allow_cleartext = allow_clear;
    if (c->ssl_ctx) { SSL_CTX_free(c->ssl_ctx); c->ssl_ctx = NULL; }

    span su, sp, sd;
    Py_buffer vu, vp, vd;
    vu.obj = vp.obj = vd.obj = NULL;
    PyObject *ret = NULL;
    if (get_span(user, &su, &vu, "user") < 0 || get_span(password, &sp, &vp, "password") < 0 ||
        get_span(database, &sd, &vd, "database") < 0)
        goto done;
    if (su.data && memchr(su.data, 0, su.len)) {
        PyErr_SetString(PyExc_ValueError, "user must not contain NUL");
        goto done;
    }
    if (sd.data && memchr(sd.data, 0, sd.len)) {
        PyErr_SetString(PyExc_ValueError, "database must not contain NUL");
        goto done;
    }
    if (!su.data) { su.data = (const unsigned char *)""; su.len = 0; }
    if (!sp.data) { sp.data = (const unsigned char *)""; sp.len = 0; }
    if (!c->rbuf) {
        c->rbuf = PyMem_Malloc(RBUF_INITIAL);
        if (!c->rbuf) { PyErr_NoMemory(); goto done; }
        c->rcap = RBUF_INITIAL;
    }
    c->rpos = c->rend = 0;
    c->zpos = c->zend = 0;
    c->compress = 0;
    c->replaying = 0;
    c->closing = 0;
    conn_clear_error(c);
    c->in_use = 1;
    if (open_socket(c, host, port, unix_socket, o.connect_timeout) < 0) {
        c->in_use = 0;
        goto done;
    }
    /* the handshake is bounded by connect_timeout too */
    double saved_rt = c->read_timeout, saved_wt = c->write_timeout;
    if (o.connect_timeout >= 0) c->read_timeout = c->write_timeout = o.connect_timeout;
    int rc = do_handshake(c, su, sp, sd, &o);
    c->read_timeout = saved_rt;
    c->write_timeout = saved_wt;
    c->in_use = 0;
    if (rc < 0) {
        conn_close_socket(c);
        goto done;
    }
    ret = Py_None;
    Py_INCREF(ret);
done:
    if (vu.obj) PyBuffer_Release(&vu);
    if (vp.obj) PyBuffer_Release(&vp);
    if (vd.obj) PyBuffer_Release(&vd);
    return ret;
}

/* ---------------------------------------------------------------- commands */

static int check_idle(mc_conn *c) {
    if (c->state != ST_IDLE) {
        conn_client_error(c, c->st->ProgrammingError, CR_COMMANDS_OUT_OF_SYNC,
                          "Commands out of sync; you can't run this command now");
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- max_allowed_packet */

#define CR_NET_PACKET_TOO_LARGE 2020
#define MC_MIN_MAX_PACKET 1024   /* the smallest max_allowed_packet a server accepts */

/* Read the session's @@max_allowed_packet into c->max_packet (once per connection; the
   caller has entered and the connection is idle).  The raw text of the value is parsed,
   so that no converter runs.  A server error leaves the limit unknown (SIZE_MAX: the
   server then enforces it).  0, or -1 with an exception (a connection failure). */
static int read_max_packet(mc_conn *c) {
    static const char q[] = "SELECT @@max_allowed_packet";
    const unsigned char *p;
    size_t n;
    c->max_packet = SIZE_MAX;
    c->binary = 0;
    c->cursor_wanted = 0;
    if (conn_command(c, COM_QUERY, (const unsigned char *)q, sizeof q - 1) < 0) return -1;
    Py_ssize_t nc = read_query_response(c);
    if (nc < 0) {
        if (c->fd < 0 || c->state != ST_IDLE) return -1;
        PyErr_Clear();   /* an ERR packet: the connection is fine */
        return 0;
    }
    size_t value = 0;
    for (;;) {
        int r = next_row_packet(c, &p, &n);
        if (r < 0) return -1;
        if (r == 0) break;
        mc_reader rd;
        const unsigned char *s;
        size_t len;
        mc_reader_init(&rd, p, n);
        if (value == 0 && mc_reader_lenenc_str(&rd, &s, &len) == 0 && len > 0 && len < 20) {
            size_t v = 0, k = 0;
            while (k < len && s[k] >= '0' && s[k] <= '9') v = v * 10 + (size_t)(s[k++] - '0');
            if (k == len) value = v;
        }
    }
    if (c->state != ST_IDLE) return 0;   /* not a plain result: leave the limit unknown */
    if (value >= MC_MIN_MAX_PACKET) c->max_packet = value;
    return 0;
}

/* The server's max_allowed_packet when a command payload of `payload` bytes could exceed
   it (read once, see read_max_packet), else SIZE_MAX without a round trip; 0 on error. */
static size_t packet_limit(mc_conn *c, size_t payload) {
    if (payload < MC_MIN_MAX_PACKET) return SIZE_MAX;
    if (c->max_packet == 0 && read_max_packet(c) < 0) return 0;
    return c->max_packet;
}

/* 0 when a command payload of `payload` bytes (command byte included) is below the
   server's max_allowed_packet; else -1 with OperationalError(2020, ...) naming both
   sizes, before anything is sent: the server would answer "Got a packet bigger than
   'max_allowed_packet' bytes" and close the connection.  `what` names the payload. */
static int check_packet(mc_conn *c, size_t payload, const char *what) {
    size_t limit = packet_limit(c, payload);
    if (limit == 0) return -1;
    if (payload < limit) return 0;
    mc_raise(c->st->OperationalError, CR_NET_PACKET_TOO_LARGE,
             "Got packet bigger than 'max_allowed_packet' bytes: %s is %zu bytes, the "
             "server's max_allowed_packet is %zu (nothing was sent; the connection is "
             "still usable)", what, payload, limit);
    return -1;
}

static PyObject *Conn_query(mc_conn *c, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    if (enter(c) < 0) { PyBuffer_Release(&view); return NULL; }
    PyObject *ret = NULL;
    if (check_idle(c) < 0) goto done;
    if (check_packet(c, 1 + (size_t)view.len, "the statement (COM_QUERY)") < 0) goto done;
    c->binary = 0;
    c->cursor_wanted = 0;
    if (conn_command(c, COM_QUERY, view.buf, (size_t)view.len) < 0) goto done;
    Py_ssize_t nc = read_query_response(c);
    if (nc < 0) goto done;
    ret = PyLong_FromSsize_t(nc);
done:
    leave(c);
    PyBuffer_Release(&view);
    return ret;
}

/* Read up to `limit` rows (all when < 0) of the current result; the caller has entered. */
/* Read up to `limit` rows (all when < 0), and stop early once the rows' packets add up to
   `max_bytes` (when > 0; at least one row is read), so that a batch of large rows stays
   bounded in memory; the caller has entered. */
static PyObject *fetch_rows_bounded(mc_conn *c, Py_ssize_t limit, PyObject *keys,
                                    size_t max_bytes) {
    PyObject *list = PyList_New(0);
    if (!list) return NULL;
    Py_ssize_t got = 0;
    size_t bytes = 0;
    while (c->state == ST_ROWS && (limit < 0 || got < limit) &&
           (max_bytes == 0 || bytes < max_bytes)) {
        const unsigned char *p;
        size_t n;
        int r = next_row_packet(c, &p, &n);
        if (r < 0) goto error;
        if (r == 0) break;
        bytes += n;
        PyObject *row = decode_row(c, p, n, keys);
        if (!row) goto error;
        int rc = PyList_Append(list, row);
        Py_DECREF(row);
        if (rc < 0) goto error;
        got++;
        c->rows_read++;
    }
    return list;
error:
    Py_DECREF(list);
    return NULL;
}

static PyObject *fetch_rows(mc_conn *c, Py_ssize_t limit, PyObject *keys) {
    return fetch_rows_bounded(c, limit, keys, 0);
}

static PyObject *Conn_fetch(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"n", "keys", "max_bytes", NULL};
    Py_ssize_t limit = -1, max_bytes = 0;
    PyObject *keys = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|nOn", kwlist, &limit, &keys, &max_bytes))
        return NULL;
    if (keys == Py_None) keys = NULL;
    if (keys && (!PyTuple_Check(keys) || PyTuple_GET_SIZE(keys) != c->plan_len)) {
        PyErr_SetString(PyExc_TypeError, "keys must be a tuple with one key per column");
        return NULL;
    }
    if (enter(c) < 0) return NULL;
    PyObject *list = fetch_rows_bounded(c, limit, keys, max_bytes > 0 ? (size_t)max_bytes : 0);
    leave(c);
    return list;
}

/* Drop the rest of the current result set; 0 or -1. */
static int skip_rows(mc_conn *c) {
    while (c->state == ST_ROWS) {
        const unsigned char *p;
        size_t n;
        int r = next_row_packet(c, &p, &n);
        if (r < 0) return -1;
        if (r == 0) break;
        c->rows_read++;
    }
    return 0;
}

static PyObject *Conn_next_result(mc_conn *c, PyObject *noargs) {
    if (enter(c) < 0) return NULL;
    PyObject *ret = NULL;
    if (c->state == ST_ROWS && skip_rows(c) < 0) goto done;
    if (c->state != ST_MORE) {
        ret = PyLong_FromLong(-1);
        goto done;
    }
    c->state = ST_IDLE;
    Py_ssize_t nc = read_query_response(c);
    if (nc >= 0) ret = PyLong_FromSsize_t(nc);
done:
    leave(c);
    return ret;
}

static PyObject *Conn_discard(mc_conn *c, PyObject *noargs) {
    if (c->fd < 0) Py_RETURN_NONE;
    if (enter(c) < 0) return NULL;
    int failed = 0;
    while (c->state != ST_IDLE && c->fd >= 0) {
        if (c->state == ST_CURSOR) {
            /* COM_STMT_RESET closes the cursor */
            unsigned char b[4];
            const unsigned char *p;
            size_t n;
            for (int q = 0; q < 4; q++) b[q] = (unsigned char)(c->cursor_stmt >> (8 * q));
            c->state = ST_IDLE;
            clear_result(c);
            if (conn_command(c, COM_STMT_RESET, b, 4) < 0 || conn_read_packet(c, &p, &n) < 0) {
                failed = 1;
                break;
            }
            if (n && p[0] == 0xFF) { raise_err_packet(c, p, n); failed = 1; break; }
            if (n && p[0] == 0x00 && parse_ok(c, p, n) < 0) { failed = 1; break; }
            continue;
        }
        if (c->state == ST_ROWS) {
            if (skip_rows(c) < 0) { failed = 1; break; }
        } else {
            c->state = ST_IDLE;
            if (read_query_response(c) < 0) { failed = 1; break; }
        }
    }
    leave(c);
    if (failed) return NULL;
    Py_RETURN_NONE;
}

/* Commands whose answer is a single OK or ERR. */
static PyObject *simple_command(mc_conn *c, uint8_t cmd, const unsigned char *arg, size_t len) {
    if (enter(c) < 0) return NULL;
    PyObject *ret = NULL;
    const unsigned char *p;
    size_t n;
    if (check_idle(c) < 0) goto done;
    if (conn_command(c, cmd, arg, len) < 0) goto done;
    if (conn_read_packet(c, &p, &n) < 0) goto done;
    if (n == 0) { malformed(c, "empty reply"); goto done; }
    if (p[0] == 0xFF) { raise_err_packet(c, p, n); goto done; }
    if (p[0] != 0x00) { malformed(c, "expected an OK packet"); goto done; }
    if (parse_ok(c, p, n) < 0) goto done;
    ret = Py_None;
    Py_INCREF(ret);
done:
    leave(c);
    return ret;
}

/* ---------------------------------------------------------------- prepared statements */

/* Read `count` column definitions (and their EOF without DEPRECATE_EOF); they are kept in
   `record` (a tuple of `count` items) when it is given, else dropped. */
static int skip_column_defs(mc_conn *c, unsigned count, PyObject *record) {
    const unsigned char *p;
    size_t n;
    for (unsigned i = 0; i < count; i++) {
        if (conn_read_packet(c, &p, &n) < 0) return -1;
        if (n == 0 || p[0] == 0xFF) { malformed(c, "bad column definition in COM_STMT_PREPARE response"); return -1; }
        if (record) {   /* kept for executes whose response skips the metadata */
            PyObject *def = PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)n);
            if (!def) return -1;
            PyTuple_SET_ITEM(record, i, def);
        }
    }
    if (count && !(c->client_flag & CLIENT_DEPRECATE_EOF)) {
        if (conn_read_packet(c, &p, &n) < 0) return -1;
        if (!is_eof_packet(p, n)) { malformed(c, "missing EOF in COM_STMT_PREPARE response"); return -1; }
    }
    return 0;
}

/* stmt_prepare(sql: bytes) -> (statement_id, num_params, num_columns)  [COM_STMT_PREPARE] */
static PyObject *Conn_stmt_prepare(mc_conn *c, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    if (enter(c) < 0) { PyBuffer_Release(&view); return NULL; }
    PyObject *ret = NULL;
    const unsigned char *p;
    size_t n;
    if (check_idle(c) < 0) goto done;
    if (check_packet(c, 1 + (size_t)view.len, "the statement (COM_STMT_PREPARE)") < 0) goto done;
    if (conn_command(c, COM_STMT_PREPARE, view.buf, (size_t)view.len) < 0) goto done;
    if (conn_read_packet(c, &p, &n) < 0) goto done;
    if (n && p[0] == 0xFF) { raise_err_packet(c, p, n); goto done; }
    mc_reader r;
    uint8_t status, filler;
    uint32_t stmt_id;
    uint16_t ncols, nparams, warnings = 0;
    mc_reader_init(&r, p, n);
    if (mc_reader_u8(&r, &status) < 0 || status != 0 || mc_reader_u32(&r, &stmt_id) < 0 ||
        mc_reader_u16(&r, &ncols) < 0 || mc_reader_u16(&r, &nparams) < 0 ||
        mc_reader_u8(&r, &filler) < 0) {
        malformed(c, "bad COM_STMT_PREPARE_OK");
        goto done;
    }
    if (mc_reader_u16(&r, &warnings) == 0) c->warning_count = warnings;
    if (skip_column_defs(c, nparams, NULL) < 0) goto done;
    PyObject *record = NULL;
    if (ncols && (c->ext_caps & MARIADB_CLIENT_CACHE_METADATA)) {
        if (!c->meta_cache && !(c->meta_cache = PyDict_New())) goto done;
        record = PyTuple_New(ncols);
        if (!record) goto done;
    }
    if (skip_column_defs(c, ncols, record) < 0) { Py_XDECREF(record); goto done; }
    if (record) {
        PyObject *key = PyLong_FromUnsignedLong(stmt_id);
        int rc = key ? PyDict_SetItem(c->meta_cache, key, record) : -1;
        Py_XDECREF(key);
        Py_DECREF(record);
        if (rc < 0) goto done;
    }
    ret = Py_BuildValue("(kII)", (unsigned long)stmt_id, (unsigned)nparams, (unsigned)ncols);
done:
    leave(c);
    PyBuffer_Release(&view);
    return ret;
}

/* stmt_execute(statement_id, params, types=None, cursor=False, long_data_threshold=0,
                encoding="utf-8") -> (field_count, types)   [COM_STMT_EXECUTE]
   `types` is the previous execute's parameter types (bytes) so that they are re-sent only
   when they change; parameters whose str/bytes value is longer than long_data_threshold
   (> 0) are sent first with COM_STMT_SEND_LONG_DATA. */
static PyObject *Conn_stmt_execute(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"statement_id", "params", "types", "cursor", "long_data_threshold",
                             "encoding", NULL};
    unsigned long stmt_id;
    PyObject *params, *types = Py_None;
    int cursor = 0;
    Py_ssize_t threshold = 0;
    const char *encoding = "utf-8";
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "kO|Opnz", kwlist, &stmt_id, &params, &types,
                                     &cursor, &threshold, &encoding))
        return NULL;
    PyObject *seq = PySequence_Fast(params, "params must be a sequence");
    if (!seq) return NULL;
    if (enter(c) < 0) { Py_DECREF(seq); return NULL; }
    PyObject *ret = NULL, *newtypes = NULL;
    char *long_mask = NULL;
    Py_ssize_t np = PySequence_Fast_GET_SIZE(seq);
    if (check_idle(c) < 0) goto done;
    /* which values go as long data: str/bytes longer than the threshold */
    if (threshold > 0) {
        for (Py_ssize_t i = 0; i < np; i++) {
            PyObject *v = PySequence_Fast_GET_ITEM(seq, i);
            if (!(PyBytes_Check(v) || PyByteArray_Check(v) || PyUnicode_Check(v))) continue;
            Py_ssize_t len = PyUnicode_Check(v) ? PyUnicode_GET_LENGTH(v) : PyObject_Length(v);
            if (len <= threshold) continue;
            /* the server joins the chunks and refuses a value of more than
               max_allowed_packet bytes, at execute time, and then keeps refusing the
               statement: check all values before the first chunk is sent */
            size_t blen = (size_t)len;
            if (PyUnicode_Check(v)) {
                if (!encoding || !strcmp(encoding, "utf-8") || !strcmp(encoding, "utf8")) {
                    Py_ssize_t l;
                    if (!PyUnicode_AsUTF8AndSize(v, &l)) goto done;
                    blen = (size_t)l;
                } else {
                    PyObject *eb = PyUnicode_AsEncodedString(v, encoding, "strict");
                    if (!eb) goto done;
                    blen = (size_t)PyBytes_GET_SIZE(eb);
                    Py_DECREF(eb);
                }
            }
            size_t limit = packet_limit(c, blen);
            if (limit == 0) goto done;
            if (blen > limit) {
                mc_raise(c->st->OperationalError, CR_NET_PACKET_TOO_LARGE,
                         "Got packet bigger than 'max_allowed_packet' bytes: parameter %zd "
                         "(sent as COM_STMT_SEND_LONG_DATA) is %zu bytes, the server's "
                         "max_allowed_packet is %zu (nothing was sent; the connection is "
                         "still usable)", i + 1, blen, limit);
                goto done;
            }
            if (!long_mask) {
                long_mask = PyMem_Calloc((size_t)np, 1);
                if (!long_mask) { PyErr_NoMemory(); goto done; }
            }
            long_mask[i] = 1;
        }
    }
    /* the COM_STMT_EXECUTE packet, encoded (and checked against max_allowed_packet)
       before any long data is sent: a refused execute leaves no long data behind */
    mc_writer *w = &c->wbuf;
    w->len = 0;
    if (mc_writer_u32(w, (uint32_t)stmt_id) < 0 ||
        mc_writer_u8(w, cursor ? CURSOR_TYPE_READ_ONLY : 0) < 0 || mc_writer_u32(w, 1) < 0)
        goto done;
    if (np > 0) {
        newtypes = types == Py_None ? NULL : Py_NewRef(types);
        if (mc_encode_binary_params(c->st, w, seq, encoding, &newtypes, long_mask) < 0) goto done;
    }
    if (check_packet(c, 1 + w->len, "the parameters of COM_STMT_EXECUTE") < 0) goto done;
    /* long data: each COM_STMT_SEND_LONG_DATA is its own command, with no reply; its
       chunks are smaller than max_allowed_packet (the server joins them) */
    for (Py_ssize_t i = 0; long_mask && i < np; i++) {
        if (!long_mask[i]) continue;
        PyObject *v = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *b = NULL;
        Py_buffer view;
        if (PyUnicode_Check(v)) {
            b = PyUnicode_AsEncodedString(v, encoding ? encoding : "utf-8", "strict");
            if (!b) goto done;
            if (PyObject_GetBuffer(b, &view, PyBUF_SIMPLE) < 0) { Py_DECREF(b); goto done; }
        } else if (PyObject_GetBuffer(v, &view, PyBUF_SIMPLE) < 0) {
            goto done;
        }
        size_t off = 0, total = (size_t)view.len, step = 8u << 20;
        size_t limit = packet_limit(c, 7 + (total < step ? total : step));
        if (limit == 0) { PyBuffer_Release(&view); Py_XDECREF(b); goto done; }
        if (limit != SIZE_MAX && limit - 8 < step) step = limit - 8;   /* 7 + step < limit */
        int rc = 0;
        do {
            size_t k = total - off > step ? step : total - off;
            unsigned char hdr[6];
            for (int q = 0; q < 4; q++) hdr[q] = (unsigned char)(stmt_id >> (8 * q));
            hdr[4] = (unsigned char)i;
            hdr[5] = (unsigned char)(i >> 8);
            c->seq = 0;
            c->cseq = 0;
            unsigned char cmd[7] = {COM_STMT_SEND_LONG_DATA};
            memcpy(cmd + 1, hdr, 6);
            rc = conn_send(c, cmd, 7, (const unsigned char *)view.buf + off, k);
            off += k;
        } while (rc == 0 && off < total);
        PyBuffer_Release(&view);
        Py_XDECREF(b);
        if (rc < 0) goto done;
    }
    c->binary = 1;
    c->cursor_wanted = cursor;
    c->cursor_stmt = (uint32_t)stmt_id;
    if (conn_command(c, COM_STMT_EXECUTE, w->buf, w->len) < 0) goto done;
    Py_ssize_t nc = read_query_response(c);
    if (nc < 0) goto done;
    ret = Py_BuildValue("(nO)", nc, newtypes ? newtypes : Py_None);
done:
    leave(c);
    Py_XDECREF(newtypes);
    PyMem_Free(long_mask);
    Py_DECREF(seq);
    return ret;
}

static PyObject *fetch_rows(mc_conn *c, Py_ssize_t limit, PyObject *keys);

/* stmt_bulk_execute(statement_id, rows, max_payload=16 MiB, encoding="utf-8")
       -> total affected rows, or None
   MariaDB's COM_STMT_BULK_EXECUTE: all rows of parameters in as few commands as fit
   max_payload.  Returns None, having sent nothing, when the server lacks the capability
   or a column's values do not share one binary type (the caller then executes row by
   row).  Rows must all have the statement's parameter count (checked by the caller). */
/* Append v to a growable array of size_t; 0, or -1 with MemoryError. */
static int push_bound(size_t **a, size_t *n, size_t *cap, size_t v) {
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        size_t *na = PyMem_Realloc(*a, ncap * sizeof(size_t));
        if (!na) { PyErr_NoMemory(); return -1; }
        *a = na;
        *cap = ncap;
    }
    (*a)[(*n)++] = v;
    return 0;
}

static PyObject *Conn_stmt_bulk_execute(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"statement_id", "rows", "max_payload", "encoding", "exact", NULL};
    unsigned long stmt_id;
    PyObject *rows;
    Py_ssize_t max_payload = 16 << 20;
    const char *encoding = "utf-8";
    int exact = 0;   /* refuse values whose binary form is not what their SQL literal means */
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "kO|nzp", kwlist, &stmt_id, &rows,
                                     &max_payload, &encoding, &exact))
        return NULL;
    if (!(c->ext_caps & MARIADB_CLIENT_STMT_BULK_OPERATIONS)) Py_RETURN_NONE;
    PyObject *seq = PySequence_Fast(rows, "rows must be a sequence");
    if (!seq) return NULL;
    Py_ssize_t nrows = PySequence_Fast_GET_SIZE(seq);
    PyObject *ret = NULL, *batches = NULL, *first = NULL;
    unsigned char *types = NULL;
    mc_writer w = {0};
    /* byte offsets in w where each batch ends (C memory: no Python object per batch) */
    size_t *bounds = NULL, nbounds = 0, capbounds = 0;
    if (nrows == 0) { ret = PyLong_FromLong(0); goto out; }
    first = PySequence_Fast(PySequence_Fast_GET_ITEM(seq, 0), "each row must be a sequence");
    if (!first) goto out;
    Py_ssize_t np = PySequence_Fast_GET_SIZE(first);
    if (np == 0 || np > 65535) { ret = Py_NewRef(Py_None); goto out; }
    types = PyMem_Calloc((size_t)np, 2);
    batches = PyList_New(0);
    if (!types || !batches || mc_writer_init(&w, 4096) < 0) { if (!types) PyErr_NoMemory(); goto out; }
    PyObject *dec = c->st->Decimal;
    size_t header = 1 + 4 + 2 + 2 * (size_t)np;
    /* the rows' encoded values go into w; a batch ends where max_payload would be passed */
    Py_ssize_t batch_start_row = 0;
    size_t batch_start = 0;
    for (Py_ssize_t r = 0; r < nrows; r++) {
        /* Ctrl-C while millions of rows are encoded: nothing is sent yet, the connection
           stays in sync */
        if ((r & 1023) == 1023 && PyErr_CheckSignals() < 0) goto out;
        PyObject *row = PySequence_Fast(PySequence_Fast_GET_ITEM(seq, r), "each row must be a sequence");
        if (!row) { goto out; }
        if (PySequence_Fast_GET_SIZE(row) != np) {
            Py_DECREF(row);
                        mc_raise(c->st->ProgrammingError, 0, "row %zd has %zd parameters, expected %zd",
                     r, PySequence_Fast_GET_SIZE(row), np);
            goto out;
        }
        size_t row_start = w.len;
        for (Py_ssize_t i = 0; i < np; i++) {
            /* NumPy scalars, NaT, UUID, sets ...: their builtin-typed value (param_adapt.c) */
            PyObject *v = mc_binary_param(c->st, PySequence_Fast_GET_ITEM(row, i));
            if (!v) { Py_DECREF(row); goto out; }
            if (v == Py_None) {
                Py_DECREF(v);
                if (mc_writer_u8(&w, 1) < 0) { Py_DECREF(row); goto out; }
                continue;
            }
            unsigned char t, tflag;
            if (exact && PyFloat_Check(v)) {
                /* a float's literal (its repr) is an exact decimal number; as a DOUBLE
                   parameter it would store its binary value in a DECIMAL column */
                Py_DECREF(v);
                Py_DECREF(row);
                                ret = Py_NewRef(Py_None);
                goto out;
            }
            if (mc_writer_u8(&w, 0) < 0 ||
                mc_binary_encode_value(c->st, &w, v, i, encoding, dec, &t, &tflag) < 0) {
                Py_DECREF(v);
                Py_DECREF(row);
                if (exact && PyErr_ExceptionMatches(c->st->ProgrammingError)) {
                    /* a value the binary format has no type for: the text path writes
                       it, or raises its own error for it (nothing was sent) */
                    PyErr_Clear();
                    ret = Py_NewRef(Py_None);
                }
                goto out;
            }
            Py_DECREF(v);
            unsigned char *slot = types + 2 * i;
            if (slot[0] == 0 && slot[1] == 0 && t != MC_TYPE_NULL) {
                slot[0] = t;
                slot[1] = tflag | 0x01;   /* low bit: slot set (cleared before sending) */
            } else if (slot[0] != t || (slot[1] & 0x80) != tflag) {
                Py_DECREF(row);
                                ret = Py_NewRef(Py_None);   /* mixed types in one column: not for bulk */
                goto out;
            }
        }
        Py_DECREF(row);
        if (r > batch_start_row && header + (w.len - batch_start) > (size_t)max_payload) {
            /* this row starts the next batch */
            if (push_bound(&bounds, &nbounds, &capbounds, row_start) < 0) goto out;
            batch_start_row = r;
            batch_start = row_start;
        }
    }
    if (push_bound(&bounds, &nbounds, &capbounds, w.len) < 0) goto out;
    for (Py_ssize_t i = 0; i < np; i++) {
        if (types[2 * i] == 0 && types[2 * i + 1] == 0) types[2 * i] = MC_TYPE_VAR_STRING;  /* all NULL */
        types[2 * i + 1] &= 0x80;
    }
    if (enter(c) < 0) { goto out; }
    if (check_idle(c) < 0) { leave(c); goto out; }
    {
        /* every command checked before the first is sent: a row of parameters too large
           for any command fails the executemany with nothing inserted */
        size_t largest = 0, prev = 0;
        for (size_t k = 0; k < nbounds; k++) {
            if (bounds[k] - prev > largest) largest = bounds[k] - prev;
            prev = bounds[k];
        }
        if (check_packet(c, header + largest, "a COM_STMT_BULK_EXECUTE of one row") < 0) {
            leave(c);
            goto out;
        }
    }
    unsigned long long total = 0;
    size_t off = 0;
    mc_writer hdr = {0};
    int failed = 0;
    if (mc_writer_init(&hdr, header) < 0) failed = 1;
    for (size_t k = 0; !failed && k < nbounds; k++) {
        size_t end = bounds[k];
        hdr.len = 0;
        unsigned char cmdhead[7] = {COM_STMT_BULK_EXECUTE,
                                    (unsigned char)stmt_id, (unsigned char)(stmt_id >> 8),
                                    (unsigned char)(stmt_id >> 16), (unsigned char)(stmt_id >> 24),
                                    128, 0};   /* flags: STMT_BULK_FLAG_SEND_TYPES_TO_SERVER */
        if (mc_writer_put(&hdr, cmdhead, 7) < 0 || mc_writer_put(&hdr, types, 2 * (size_t)np) < 0) {
            failed = 1;
            break;
        }
        /* conn_command sends one byte of command + arg: send hdr minus its command byte */
        c->binary = 1;
        c->cursor_wanted = 0;
        c->seq = 0;
        c->cseq = 0;
        if (conn_send(c, hdr.buf, hdr.len, w.buf + off, end - off) < 0) { failed = 1; break; }
        Py_ssize_t nc = read_query_response(c);
        if (nc < 0) { failed = 1; break; }
        if (nc > 0 || c->state != ST_IDLE) {
            malformed(c, "unexpected result set from COM_STMT_BULK_EXECUTE");
            failed = 1;
            break;
        }
        total += c->affected_rows;
        off = end;
    }
    mc_writer_free(&hdr);
    leave(c);
        if (!failed) {
        c->affected_rows = total;
        ret = PyLong_FromUnsignedLongLong(total);
    }
out:
    PyMem_Free(bounds);
    mc_writer_free(&w);
    PyMem_Free(types);
    Py_XDECREF(batches);
    Py_XDECREF(first);
    Py_DECREF(seq);
    return ret;
}

/* stmt_fetch(n, keys=None) -> list: the next (at most) n rows of the open server-side
   cursor [COM_STMT_FETCH]; [] once it is exhausted. */
static PyObject *Conn_stmt_fetch(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"n", "keys", NULL};
    Py_ssize_t limit = 1;
    PyObject *keys = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|nO", kwlist, &limit, &keys)) return NULL;
    if (keys == Py_None) keys = NULL;
    if (keys && (!PyTuple_Check(keys) || PyTuple_GET_SIZE(keys) != c->plan_len)) {
        PyErr_SetString(PyExc_TypeError, "keys must be a tuple with one key per column");
        return NULL;
    }
    if (limit < 1 || (uint64_t)limit > 0xFFFFFFFFu) {
        PyErr_SetString(PyExc_ValueError, "n must be in 1..4294967295");
        return NULL;
    }
    if (c->state != ST_CURSOR) return PyList_New(0);
    if (enter(c) < 0) return NULL;
    PyObject *ret = NULL;
    if (mc_conn_cursor_fetch(c, (uint32_t)limit) < 0) goto done;
    ret = fetch_rows(c, -1, keys);   /* this batch, through its terminator */
done:
    leave(c);
    return ret;
}

/* stmt_reset(statement_id)  [COM_STMT_RESET]: also closes the statement's open cursor. */
static PyObject *Conn_stmt_reset(mc_conn *c, PyObject *arg) {
    unsigned long stmt_id = PyLong_AsUnsignedLong(arg);
    if (stmt_id == (unsigned long)-1 && PyErr_Occurred()) return NULL;
    if (enter(c) < 0) return NULL;
    PyObject *ret = NULL;
    const unsigned char *p;
    size_t n;
    if (c->state == ST_CURSOR && c->cursor_stmt == (uint32_t)stmt_id) {
        c->state = ST_IDLE;
        clear_result(c);
    }
    if (check_idle(c) < 0) goto done;
    unsigned char b[4];
    for (int q = 0; q < 4; q++) b[q] = (unsigned char)(stmt_id >> (8 * q));
    if (conn_command(c, COM_STMT_RESET, b, 4) < 0) goto done;
    if (conn_read_packet(c, &p, &n) < 0) goto done;
    if (n && p[0] == 0xFF) { raise_err_packet(c, p, n); goto done; }
    if (!n || p[0] != 0x00) { malformed(c, "expected OK after COM_STMT_RESET"); goto done; }
    if (parse_ok(c, p, n) < 0) goto done;
    ret = Py_NewRef(Py_None);
done:
    leave(c);
    return ret;
}

/* stmt_close(statement_id)  [COM_STMT_CLOSE, no reply].  A no-op on a closed connection. */
static PyObject *Conn_stmt_close(mc_conn *c, PyObject *arg) {
    unsigned long stmt_id = PyLong_AsUnsignedLong(arg);
    if (stmt_id == (unsigned long)-1 && PyErr_Occurred()) return NULL;
    if (c->fd < 0) Py_RETURN_NONE;   /* statements die with the connection */
    if (enter(c) < 0) return NULL;
    if (c->state == ST_CURSOR && c->cursor_stmt == (uint32_t)stmt_id) {
        c->state = ST_IDLE;   /* closing the statement closes its cursor */
        clear_result(c);
    }
    int rc = 0;
    if (c->meta_cache) {
        PyObject *key = PyLong_FromUnsignedLong(stmt_id);
        if (key && PyDict_DelItem(c->meta_cache, key) < 0) PyErr_Clear();
        Py_XDECREF(key);
    }
    if (c->state == ST_IDLE) {
        unsigned char b[4];
        for (int q = 0; q < 4; q++) b[q] = (unsigned char)(stmt_id >> (8 * q));
        rc = conn_command(c, COM_STMT_CLOSE, b, 4);
    } else {
        rc = -1;
        mc_raise(c->st->ProgrammingError, CR_COMMANDS_OUT_OF_SYNC,
                 "Commands out of sync; you can't run this command now");
    }
    leave(c);
    if (rc < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *Conn_ping(mc_conn *c, PyObject *noargs) {
    return simple_command(c, COM_PING, NULL, 0);
}

static PyObject *Conn_select_db(mc_conn *c, PyObject *arg) {
    Py_buffer view;
    span s;
    if (get_span(arg, &s, &view, "database") < 0) return NULL;
    PyObject *r = simple_command(c, COM_INIT_DB, s.data, s.len);
    if (view.obj) PyBuffer_Release(&view);
    return r;
}

/* ---------------------------------------------------------------- change_user, stat, fileno */

#define COM_STATISTICS  0x09
#define COM_CHANGE_USER 0x11

/* change_user(user, password=None, database=None)  [COM_CHANGE_USER]
   Logs in again as `user` on this connection with the whole authentication exchange of
   the handshake: the first answer uses the handshake's scramble and plugin, and the server
   may switch to any plugin the handshake supports (C ones and the auth_plugins dict).  The
   handshake's collation and connection attributes are sent again.  The server resets the
   session: prepared statements (and the metadata cached for them) are gone, session
   variables return to their defaults.  Raises the server's error (e.g. OperationalError
   1045) when the login is refused; MariaDB then keeps the previous session and the
   connection stays usable.  A malformed exchange closes the connection. */
static PyObject *Conn_change_user(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"user", "password", "database", NULL};
    PyObject *user, *password = Py_None, *database = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|OO:change_user", kwlist, &user, &password,
                                     &database))
        return NULL;
    span su, sp, sd;
    Py_buffer vu, vp, vd;
    vu.obj = vp.obj = vd.obj = NULL;
    PyObject *ret = NULL;
    mc_writer authout = {0}, w = {0};
    int entered = 0;
    if (get_span(user, &su, &vu, "user") < 0 || get_span(password, &sp, &vp, "password") < 0 ||
        get_span(database, &sd, &vd, "database") < 0)
        goto done;
    if ((su.data && memchr(su.data, 0, su.len)) || (sd.data && memchr(sd.data, 0, sd.len))) {
        PyErr_SetString(PyExc_ValueError, "user and database must not contain NUL");
        goto done;
    }
    if (!su.data) { su.data = (const unsigned char *)""; su.len = 0; }
    if (!sp.data) { sp.data = (const unsigned char *)""; sp.len = 0; }
    if (enter(c) < 0) goto done;
    entered = 1;
    if (check_idle(c) < 0) goto done;
    auth_state a;
    memset(&a, 0, sizeof(a));
    memcpy(a.plugin, c->first_plugin, sizeof(a.plugin));
    a.plugin[sizeof(a.plugin) - 1] = 0;
    if (!a.plugin[0]) strcpy(a.plugin, "mysql_native_password");
    memcpy(a.nonce, c->scramble, c->scramble_len);
    a.nonce_len = c->scramble_len;
    if (mc_writer_init(&authout, 64) < 0 || mc_writer_init(&w, 256) < 0) goto done;
    if (auth_first(c, &a, sp, &authout) < 0) goto done;
    /* COM_CHANGE_USER: user NUL, auth response (1-byte length with
       CLIENT_SECURE_CONNECTION), database NUL, character set, plugin name, attributes */
    if (mc_writer_put(&w, su.data, su.len) < 0 || mc_writer_u8(&w, 0) < 0) goto done;
    if (c->client_flag & CLIENT_SECURE_CONNECTION) {
        if (authout.len > 255) { malformed(c, "authentication response too long"); goto done; }
        if (mc_writer_u8(&w, (uint8_t)authout.len) < 0 ||
            mc_writer_put(&w, authout.buf, authout.len) < 0)
            goto done;
    } else if (mc_writer_put(&w, authout.buf, authout.len) < 0 || mc_writer_u8(&w, 0) < 0) {
        goto done;
    }
    if ((sd.data && mc_writer_put(&w, sd.data, sd.len) < 0) || mc_writer_u8(&w, 0) < 0 ||
        mc_writer_u16(&w, c->handshake_collation) < 0)
        goto done;
    if ((c->client_flag & CLIENT_PLUGIN_AUTH) &&
        (mc_writer_put(&w, a.plugin, strlen(a.plugin)) < 0 || mc_writer_u8(&w, 0) < 0))
        goto done;
    if ((c->client_flag & CLIENT_CONNECT_ATTRS) && c->connect_attrs &&
        put_attrs(&w, c->connect_attrs) < 0)
        goto done;
    clear_result(c);
    if (conn_command(c, COM_CHANGE_USER, w.buf, w.len) < 0) goto done;
    /* whatever the outcome, the server has dropped this session's prepared statements
       when it accepted the command */
    if (c->meta_cache) PyDict_Clear(c->meta_cache);
    if (auth_exchange(c, &a, sp, &authout) < 0) goto done;
    Py_XSETREF(c->auth_plugin_name, PyUnicode_FromString(a.plugin));
    if (!c->auth_plugin_name) goto done;
    c->state = ST_IDLE;
    ret = Py_NewRef(Py_None);
done:
    if (entered) leave(c);
    if (authout.buf) memset(authout.buf, 0, authout.cap);
    if (w.buf) memset(w.buf, 0, w.cap);
    mc_writer_free(&authout);
    mc_writer_free(&w);
    if (vu.obj) PyBuffer_Release(&vu);
    if (vp.obj) PyBuffer_Release(&vp);
    if (vd.obj) PyBuffer_Release(&vd);
    return ret;
}

/* stat() -> str  [COM_STATISTICS]: the server's status line ("Uptime: ...  Threads: ..."),
   as mysql_stat(). */
static PyObject *Conn_stat(mc_conn *c, PyObject *noargs) {
    if (enter(c) < 0) return NULL;
    PyObject *ret = NULL;
    const unsigned char *p;
    size_t n;
    if (check_idle(c) < 0) goto done;
    if (conn_command(c, COM_STATISTICS, NULL, 0) < 0) goto done;
    if (conn_read_packet(c, &p, &n) < 0) goto done;
    /* the answer is a bare string<EOF>; an ERR packet can only start with 0xFF */
    if (n >= 3 && p[0] == 0xFF) { raise_err_packet(c, p, n); goto done; }
    ret = PyUnicode_DecodeUTF8((const char *)p, (Py_ssize_t)n, "replace");
done:
    leave(c);
    return ret;
}

/* fileno() -> int: the socket's file descriptor (mysqlclient's fileno()); raises the
   closed-connection error when there is no socket. */
static PyObject *Conn_fileno(mc_conn *c, PyObject *noargs) {
    if (c->fd < 0) return raise_closed(c);
    return PyLong_FromLong(c->fd);
}

/* drain(timeout, closing=False) -> bool: read and drop, without decoding a value, what is left of the
   current response (unread rows, further results) for at most `timeout` seconds, so
   that close() can end with COM_QUIT instead of leaving the server an aborted client.
   True: the server waits for a command (an open server-side cursor counts: it is idle);
   False: the time ran out first, the connection is left as it is (the caller may stop
   the statement with KILL QUERY and drain again).  A server error that ends a result
   (1317 after KILL QUERY) is dropped.  Raises when the connection is lost (then
   closed), or on Ctrl-C (closed too).  closing=True (close() follows): from now on other
   users of the connection (another thread between two batches) get InterfaceError "the
   connection was closed" instead of a read that races the drain. */
static PyObject *Conn_drain(mc_conn *c, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"timeout", "closing", NULL};
    double timeout;
    int closing = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "d|p:drain", kwlist, &timeout, &closing))
        return NULL;
    if (!(timeout >= 0) || isinf(timeout)) {
        PyErr_SetString(PyExc_ValueError, "timeout must be a finite number of seconds >= 0");
        return NULL;
    }
    if (c->fd < 0) Py_RETURN_FALSE;
    if (closing && c->closing && !c->in_use) {
        c->in_use = 1;   /* the closer's second drain */
    } else {
        if (enter(c) < 0) return NULL;
        if (closing) c->closing = 1;
    }
    double deadline = monotonic() + timeout;
    int done = 0, failed = 0;
    unsigned k = 0;
    while (!done) {
        if (c->state == ST_IDLE || c->state == ST_CURSOR) { done = 1; break; }
        if (c->state == ST_MORE) {
            c->state = ST_IDLE;
            if (read_query_response(c) < 0) {
                if (c->fd < 0) { failed = 1; break; }
                PyErr_Clear();   /* a statement of the batch failed: the batch ends */
            }
            continue;
        }
        /* ST_ROWS: wait for bytes only while the time lasts */
        size_t avail = c->rend - c->rpos;
        int buffered = (avail >= 4 && avail >= 4 + (size_t)mc_load_u24(c->rbuf + c->rpos)) ||
                       (c->compress && c->zend > c->zpos) ||
                       (c->ssl && SSL_pending(c->ssl) > 0);
        if (!buffered) {
            double left = deadline - monotonic();
            if (left <= 0) break;
            int w, e = 0, fd = c->fd;
            Py_BEGIN_ALLOW_THREADS
            w = wait_fd(fd, POLLIN, left);
            if (w < 0) e = errno;
            Py_END_ALLOW_THREADS
            if (w == 0) break;
            if (w < 0) {
                if (e == EINTR && conn_check_signals(c) == 0) continue;
                if (e != EINTR)
                    conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                               "Lost connection to server during query (%s)", strerror(e));
                failed = 1;
                break;
            }
        }
        const unsigned char *p;
        size_t n;
        int r = next_row_packet(c, &p, &n);
        if (r < 0) {
            if (c->fd < 0) { failed = 1; break; }
            PyErr_Clear();   /* the server ended the result with an error (KILL QUERY) */
            continue;
        }
        if (r == 1) c->rows_read++;
        if ((++k & 1023u) == 0 && monotonic() > deadline) break;
    }
    leave(c);
    if (failed) return NULL;
    return PyBool_FromLong(done);
}

static PyObject *Conn_close(mc_conn *c, PyObject *noargs) {
    if (c->fd < 0) {
        c->closing = 0;
        Py_RETURN_NONE;
    }
    if (c->in_use)
        return mc_raise(c->st->ProgrammingError, 0,
                        "this connection is being used by another thread");
    if (c->state == ST_IDLE || c->state == ST_CURSOR) {
        /* COM_QUIT: best effort and non-blocking; the server closes without answering
           (with a server-side cursor open the server is idle too) */
        unsigned char pkt[12] = {1, 0, 0, 0, COM_QUIT};
        size_t len = 5;
        if (c->compress) {   /* one stored (uncompressed) frame around the packet */
            unsigned char framed[12] = {5, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, COM_QUIT};
            memcpy(pkt, framed, sizeof(framed));
            len = 12;
        }
        int fd = c->fd;
        SSL *ssl = c->ssl;
        if (ssl) {
            int fl = fcntl(fd, F_GETFL, 0);
            fcntl(fd, F_SETFL, fl | O_NONBLOCK);
        }
        Py_BEGIN_ALLOW_THREADS
        if (ssl) {
            if (SSL_write(ssl, pkt, (int)len) <= 0) ERR_clear_error();
        } else {
            (void)send(fd, pkt, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        }
        Py_END_ALLOW_THREADS
    }
    conn_close_socket(c);
    c->closing = 0;
    clear_result(c);
    Py_RETURN_NONE;
}

/* ---------------------------------------------------------------- wire replay */

/* _start_capture(): record every byte received from now on (for benchmarks and fuzz corpora). */
static PyObject *Conn_start_capture(mc_conn *c, PyObject *noargs) {
    mc_writer_free(&c->capture);
    if (mc_writer_init(&c->capture, 64 * 1024) < 0) return NULL;
    c->capturing = 1;
    Py_RETURN_NONE;
}

/* _stop_capture() -> bytes received since _start_capture(). */
static PyObject *Conn_stop_capture(mc_conn *c, PyObject *noargs) {
    PyObject *r = PyBytes_FromStringAndSize((const char *)c->capture.buf, (Py_ssize_t)c->capture.len);
    c->capturing = 0;
    mc_writer_free(&c->capture);
    return r;
}

/* _replay(data, client_flag, binary=False) -> field count: parse `data` as the server's
   complete response to a COM_QUERY (or, with binary, a COM_STMT_EXECUTE) with sequence
   ids from 1, with no socket.  fetch()/next_result() then read from it.
   Used by the wire-replay benchmark and the fuzz harnesses. */
static PyObject *Conn_replay(mc_conn *c, PyObject *args) {
    Py_buffer view;
    unsigned long flags = CLIENT_PROTOCOL_41 | CLIENT_DEPRECATE_EOF;
    int binary = 0;
    if (!PyArg_ParseTuple(args, "y*|kp", &view, &flags, &binary)) return NULL;
    if (c->fd >= 0 || c->in_use) {
        PyBuffer_Release(&view);
        return mc_raise(c->st->ProgrammingError, 0, "_replay() needs an unconnected Connection");
    }
    unsigned char *nb = PyMem_Realloc(c->rbuf, view.len ? (size_t)view.len : 1);
    if (!nb) { PyBuffer_Release(&view); return PyErr_NoMemory(); }
    c->rbuf = nb;
    c->rcap = view.len ? (size_t)view.len : 1;
    memcpy(c->rbuf, view.buf, (size_t)view.len);
    c->rpos = 0;
    c->rend = (size_t)view.len;
    PyBuffer_Release(&view);
    c->replaying = 1;
    c->binary = binary;         /* a COM_STMT_EXECUTE response: binary rows */
    c->cursor_wanted = 0;
    c->client_flag = (uint32_t)flags;
    c->protocol_version = 10;
    c->state = ST_IDLE;
    c->seq = 1;
    c->in_use = 1;
    Py_ssize_t nc = read_query_response(c);
    c->in_use = 0;
    if (nc < 0) return NULL;
    return PyLong_FromSsize_t(nc);
}

/* ---------------------------------------------------------------- attributes */

#define U64_GETTER(name, expr) \
    static PyObject *get_##name(mc_conn *c, void *x) { return PyLong_FromUnsignedLongLong((unsigned long long)(expr)); }

U64_GETTER(thread_id, c->thread_id)
U64_GETTER(server_capabilities, c->server_caps)
U64_GETTER(client_flag, c->client_flag)
U64_GETTER(server_status, c->server_status)
U64_GETTER(server_collation, c->server_collation)
U64_GETTER(protocol_version, c->protocol_version)
U64_GETTER(affected_rows, c->field_count > 0 ? c->rows_read : c->affected_rows)
U64_GETTER(insert_id, c->insert_id)
U64_GETTER(warning_count, c->warning_count)
U64_GETTER(result_id, c->result_seq)

static PyObject *obj_or_none(PyObject *o) {
    if (!o) Py_RETURN_NONE;
    Py_INCREF(o);
    return o;
}

static PyObject *get_server_version(mc_conn *c, void *x) { return obj_or_none(c->server_version); }
static PyObject *get_auth_plugin_name(mc_conn *c, void *x) { return obj_or_none(c->auth_plugin_name); }
static PyObject *get_info(mc_conn *c, void *x) { return obj_or_none(c->info); }
static PyObject *get_description(mc_conn *c, void *x) { return obj_or_none(c->description); }
static PyObject *get_description_flags(mc_conn *c, void *x) { return obj_or_none(c->description_flags); }
static PyObject *get_column_names(mc_conn *c, void *x) { return obj_or_none(c->column_names); }
static PyObject *get_column_tables(mc_conn *c, void *x) { return obj_or_none(c->column_tables); }
static PyObject *get_field_count(mc_conn *c, void *x) { return PyLong_FromSsize_t(c->field_count); }
static PyObject *get_more_results(mc_conn *c, void *x) { return PyBool_FromLong(c->state == ST_MORE); }
static PyObject *get_rows_pending(mc_conn *c, void *x) { return PyBool_FromLong(c->state == ST_ROWS); }
static PyObject *get_cursor_open(mc_conn *c, void *x) { return PyBool_FromLong(c->state == ST_CURSOR); }
static PyObject *get_infile_handler(mc_conn *c, void *x) { return obj_or_none(c->infile_handler); }
static int set_infile_handler(mc_conn *c, PyObject *v, void *x) {
    if (v == Py_None) v = NULL;
    if (v && !PyCallable_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "infile_handler must be callable or None");
        return -1;
    }
    Py_XINCREF(v);
    Py_XSETREF(c->infile_handler, v);
    return 0;
}
static PyObject *get_open(mc_conn *c, void *x) { return PyBool_FromLong(c->fd >= 0); }
static PyObject *get_fd(mc_conn *c, void *x) { return PyLong_FromLong(c->fd >= 0 ? c->fd : -1); }
static PyObject *get_no_backslash_escapes(mc_conn *c, void *x) {
    return PyBool_FromLong((c->server_status & SERVER_STATUS_NO_BACKSLASH_ESCAPES) != 0);
}
static PyObject *get_converters(mc_conn *c, void *x) { return obj_or_none(c->converters); }
static int set_converters(mc_conn *c, PyObject *v, void *x) {
    if (v && v != Py_None && !PyDict_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "converters must be a dict or None");
        return -1;
    }
    if (v == Py_None) v = NULL;
    Py_XINCREF(v);
    Py_XSETREF(c->converters, v);
    return 0;
}

static PyObject *get_bulk(mc_conn *c, void *x) {
    return PyBool_FromLong((c->ext_caps & MARIADB_CLIENT_STMT_BULK_OPERATIONS) != 0);
}

static PyObject *get_max_packet(mc_conn *c, void *closure) {
    if (c->max_packet == 0 || c->max_packet == SIZE_MAX) return PyLong_FromLong(0);
    return PyLong_FromSize_t(c->max_packet);
}

static int set_max_packet(mc_conn *c, PyObject *v, void *closure) {
    if (v == NULL) { c->max_packet = 0; return 0; }
    Py_ssize_t n = PyLong_AsSsize_t(v);
    if (n == -1 && PyErr_Occurred()) return -1;
    c->max_packet = n >= MC_MIN_MAX_PACKET ? (size_t)n : 0;
    return 0;
}

static PyObject *get_last_errno(mc_conn *c, void *x) { return PyLong_FromLong(c->last_errno); }
static PyObject *get_last_error(mc_conn *c, void *x) {
    if (!c->last_error) return PyUnicode_FromStringAndSize("", 0);
    return Py_NewRef(c->last_error);
}
static PyObject *get_last_sqlstate(mc_conn *c, void *x) {
    return PyUnicode_FromStringAndSize(c->last_sqlstate, 5);
}
static PyObject *get_use_unicode(mc_conn *c, void *x) { return PyBool_FromLong(c->use_unicode); }
static int set_use_unicode(mc_conn *c, PyObject *v, void *x) {
    int b = v ? PyObject_IsTrue(v) : -1;
    if (b < 0) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "use_unicode cannot be deleted");
        return -1;
    }
    c->use_unicode = b;
    return 0;
}

static PyObject *get_tls_info(mc_conn *c, void *x) { return mc_tls_info(c->ssl); }   /* tls.c */

static PyGetSetDef Conn_getset[] = {
    {"max_allowed_packet", (getter)get_max_packet, (setter)set_max_packet,
     "the session's max_allowed_packet (bytes) as read by the core (once, when a command "
     "is first large enough to exceed 1024 bytes), or 0 when not read yet; commands this "
     "large or larger are refused with OperationalError 2020 before they are sent", NULL},
    {"result_id", (getter)get_result_id, NULL,
     "number of the current response: changes with every statement and next result", NULL},
    {"bulk_operations", (getter)get_bulk, NULL,
     "the server accepted MariaDB's COM_STMT_BULK_EXECUTE", NULL},
    {"last_errno", (getter)get_last_errno, NULL,
     "error number of the last command (mysql_errno()); 0 when it succeeded", NULL},
    {"last_error", (getter)get_last_error, NULL,
     "message of the last command's error (mysql_error()); '' when it succeeded", NULL},
    {"last_sqlstate", (getter)get_last_sqlstate, NULL,
     "SQLSTATE of the last command's error (mysql_sqlstate()); '00000' when it succeeded", NULL},
    {"use_unicode", (getter)get_use_unicode, (setter)set_use_unicode,
     "False: text columns (CHAR, VARCHAR, TEXT, ENUM, SET, JSON) come as bytes; read when a"
     " result's column plan is built", NULL},
    {"server_version", (getter)get_server_version, NULL, "server version string from the handshake", NULL},
    {"protocol_version", (getter)get_protocol_version, NULL, NULL, NULL},
    {"thread_id", (getter)get_thread_id, NULL, "connection id from the handshake", NULL},
    {"server_capabilities", (getter)get_server_capabilities, NULL, NULL, NULL},
    {"client_flag", (getter)get_client_flag, NULL, "negotiated capability flags", NULL},
    {"server_status", (getter)get_server_status, NULL, "SERVER_STATUS_* flags of the last OK/EOF", NULL},
    {"server_collation", (getter)get_server_collation, NULL, NULL, NULL},
    {"affected_rows", (getter)get_affected_rows, NULL, NULL, NULL},
    {"insert_id", (getter)get_insert_id, NULL, NULL, NULL},
    {"warning_count", (getter)get_warning_count, NULL, NULL, NULL},
    {"info", (getter)get_info, NULL, NULL, NULL},
    {"field_count", (getter)get_field_count, NULL, NULL, NULL},
    {"description", (getter)get_description, NULL, "PEP 249 7-tuples of the current result", NULL},
    {"description_flags", (getter)get_description_flags, NULL, NULL, NULL},
    {"column_names", (getter)get_column_names, NULL, NULL, NULL},
    {"column_tables", (getter)get_column_tables, NULL, NULL, NULL},
    {"more_results", (getter)get_more_results, NULL, NULL, NULL},
    {"rows_pending", (getter)get_rows_pending, NULL, NULL, NULL},
    {"cursor_open", (getter)get_cursor_open, NULL,
     "a server-side cursor is open: read it with stmt_fetch()", NULL},
    {"infile_handler", (getter)get_infile_handler, (setter)set_infile_handler,
     "callable(filename: bytes) -> iterable of bytes for LOAD DATA LOCAL INFILE, or None", NULL},
    {"open", (getter)get_open, NULL, NULL, NULL},
    {"fd", (getter)get_fd, NULL, "socket file descriptor, -1 when closed (fileno())", NULL},
    {"auth_plugin_name", (getter)get_auth_plugin_name, NULL, NULL, NULL},
    {"no_backslash_escapes", (getter)get_no_backslash_escapes, NULL, NULL, NULL},
    {"converters", (getter)get_converters, (setter)set_converters,
     "dict field_type -> callable used instead of the built-in decoder", NULL},
    {"tls_info", (getter)get_tls_info, NULL,
     "None without TLS, else {'version', 'cipher', 'verified', 'hostname'} (src/tls.c)", NULL},
    {NULL},
};

static PyMethodDef Conn_methods[] = {
    {"connect", (PyCFunction)(void (*)(void))Conn_connect, METH_VARARGS | METH_KEYWORDS,
     "connect(host=None, port=3306, unix_socket=None, user=b'', password=b'', database=None,"
     " collation=45, client_flag=0, connect_timeout=None, read_timeout=None,"
     " write_timeout=None)"},
    {"query", (PyCFunction)Conn_query, METH_O, "query(sql: bytes) -> field count"},
    {"fetch", (PyCFunction)(void (*)(void))Conn_fetch, METH_VARARGS | METH_KEYWORDS,
     "fetch(n=-1, keys=None, max_bytes=0) -> list of rows (at most n; stops once the rows"
     " read add up to max_bytes of packets, when > 0)"},
    {"next_result", (PyCFunction)Conn_next_result, METH_NOARGS, NULL},
    {"discard", (PyCFunction)Conn_discard, METH_NOARGS, NULL},
    {"ping", (PyCFunction)Conn_ping, METH_NOARGS, NULL},
    {"select_db", (PyCFunction)Conn_select_db, METH_O, NULL},
    {"close", (PyCFunction)Conn_close, METH_NOARGS, NULL},
    {"drain", (PyCFunction)(void (*)(void))Conn_drain, METH_VARARGS | METH_KEYWORDS,
     "drain(timeout, closing=False) -> bool: drop the rest of the response (no decoding)"
     " for at most timeout seconds; True when the server waits for a command"},
    {"change_user", (PyCFunction)(void (*)(void))Conn_change_user, METH_VARARGS | METH_KEYWORDS,
     "change_user(user, password=None, database=None): COM_CHANGE_USER with the whole"
     " authentication exchange; the session (and its prepared statements) is reset"},
    {"stat", (PyCFunction)Conn_stat, METH_NOARGS, "stat() -> str: COM_STATISTICS"},
    {"fileno", (PyCFunction)Conn_fileno, METH_NOARGS, "fileno() -> int: the socket's descriptor"},
    {"stmt_prepare", (PyCFunction)Conn_stmt_prepare, METH_O,
     "stmt_prepare(sql: bytes) -> (statement_id, num_params, num_columns)"},
    {"stmt_execute", (PyCFunction)(void (*)(void))Conn_stmt_execute, METH_VARARGS | METH_KEYWORDS,
     "stmt_execute(statement_id, params, types=None, cursor=False, long_data_threshold=0,"
     " encoding='utf-8') -> (field_count, types)"},
    {"stmt_fetch", (PyCFunction)(void (*)(void))Conn_stmt_fetch, METH_VARARGS | METH_KEYWORDS,
     "stmt_fetch(n=1, keys=None) -> list of rows from the open server-side cursor"},
    {"stmt_reset", (PyCFunction)Conn_stmt_reset, METH_O, NULL},
    {"stmt_bulk_execute", (PyCFunction)(void (*)(void))Conn_stmt_bulk_execute,
     METH_VARARGS | METH_KEYWORDS,
     "stmt_bulk_execute(statement_id, rows, max_payload=16777216, encoding='utf-8', exact=False)"
     " -> affected rows, or None when bulk execution does not apply (exact: also when a"
     " value is a float)"},
    {"stmt_close", (PyCFunction)Conn_stmt_close, METH_O, NULL},
    {"_start_capture", (PyCFunction)Conn_start_capture, METH_NOARGS, NULL},
    {"_stop_capture", (PyCFunction)Conn_stop_capture, METH_NOARGS, NULL},
    {"_replay", (PyCFunction)Conn_replay, METH_VARARGS, NULL},
    {"fetch_arrow", (PyCFunction)(void (*)(void))mc_conn_fetch_arrow, METH_VARARGS | METH_KEYWORDS,
     "fetch_arrow(n=-1, decimal='decimal') -> (schema capsule, array capsule, rows):"
     " up to n rows of the pending result as one Arrow record batch (struct array)"},
    {"arrow_schema", (PyCFunction)(void (*)(void))mc_conn_arrow_schema, METH_VARARGS | METH_KEYWORDS,
     "arrow_schema(decimal='decimal') -> schema capsule of the current result"},
    {"store", (PyCFunction)(void (*)(void))mc_conn_store, METH_VARARGS | METH_KEYWORDS,
     "store(keys=None) -> Store of all the current result's rows, read off the socket and"
     " kept undecoded; None (nothing read) when decoding them may run Python code or the"
     " connection's last Store was read as rows"},
    {"prefer_store", (PyCFunction)mc_conn_prefer_store, METH_NOARGS,
     "prefer_store(): store() keeps the next results (a columnar read happened)"},
    {NULL},
};

static PyType_Slot Conn_slots[] = {
    {Py_tp_new, Conn_new},
    {Py_tp_dealloc, Conn_dealloc},
    {Py_tp_traverse, Conn_traverse},
    {Py_tp_clear, Conn_clear},
    {Py_tp_methods, Conn_methods},
    {Py_tp_getset, Conn_getset},
    {Py_tp_doc, "Low-level MySQL protocol connection (see docs/core-api.md)."},
    {0, NULL},
};

static PyType_Spec Conn_spec = {
    .name = "mysqlc._core.Connection",
    .basicsize = sizeof(mc_conn),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .slots = Conn_slots,
};

int mc_conn_add_type(PyObject *module) {
    mc_state *st = mc_state_from_module(module);
    st->ConnectionType = (PyTypeObject *)PyType_FromModuleAndSpec(module, &Conn_spec, NULL);
    if (!st->ConnectionType) return -1;
    Py_INCREF(st->ConnectionType);
    if (PyModule_AddObject(module, "Connection", (PyObject *)st->ConnectionType) < 0) {
        Py_DECREF(st->ConnectionType);
        return -1;
    }
    return PyModule_AddFunctions(module, mc_columnar_functions);   /* columnar.c */
}
