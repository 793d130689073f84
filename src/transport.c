/* The blocking transport: a socket (TCP or unix), poll() timeouts, TLS on the socket
 * (OpenSSL, src/tls.c), the GIL released around every blocking call.  It drives the
 * engine (framing.c) through the mc_io interface: fill() writes the engine's pending
 * output, then receives at least one byte into the engine's buffer; flush() writes the
 * output; close() ends the socket.  Timeouts, Ctrl-C (EINTR and PyErr_CheckSignals before
 * every read) and lost connections become OperationalError here, with the connection
 * closed.  Nothing here parses the protocol.
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
#include <openssl/err.h>

/* ================================================================ socket I/O */

double mc_monotonic(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait for fd readiness with the GIL held by the caller released inside. Returns
   1 ready, 0 timeout, -1 with errno. */
int mc_wait_fd(int fd, short events, double timeout) {
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

enum { IO_OK = 0, IO_EINTR, IO_TIMEOUT, IO_EOF, IO_ERRNO };

/* One read from the socket (TLS records or plain bytes: the engine decrypts), GIL
   released by the caller.  Returns bytes read (> 0) or -1 with *status set. */
static ssize_t io_read_nogil(int fd, unsigned char *dst, size_t room, double to,
                             int *status, int *err) {
    for (;;) {
        if (to >= 0) {
            int w = mc_wait_fd(fd, POLLIN, to);
            if (w == 0) { *status = IO_TIMEOUT; return -1; }
            if (w < 0) { *err = errno; *status = errno == EINTR ? IO_EINTR : IO_ERRNO; return -1; }
        }
        ssize_t n = recv(fd, dst, room, 0);
        if (n > 0) return n;
        if (n == 0) { *status = IO_EOF; return -1; }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            int w = mc_wait_fd(fd, POLLIN, to);
            if (w == 0) { *status = IO_TIMEOUT; return -1; }
            if (w < 0) { *err = errno; *status = errno == EINTR ? IO_EINTR : IO_ERRNO; return -1; }
            continue;
        }
        *err = errno;
        *status = errno == EINTR ? IO_EINTR : IO_ERRNO;
        return -1;
    }
}

/* Read at least one byte into dst, waiting at most `to` seconds (< 0: no limit).  Returns
   the count, or -1 with *status set (IO_EINTR after a signal handler ran cleanly is
   retried here). */
static ssize_t recv_some(mc_conn *c, unsigned char *dst, size_t room, double to, int *status,
                         int *err) {
    for (;;) {
        ssize_t n;
        int fd = c->fd;
        *status = IO_OK;
        Py_BEGIN_ALLOW_THREADS
        n = io_read_nogil(fd, dst, room, to, status, err);
        Py_END_ALLOW_THREADS
        if (n > 0) return n;
        if (*status == IO_EINTR) {
            if (PyErr_CheckSignals() < 0) return -1;
            continue;
        }
        return -1;
    }
}

/* Read at least one byte into dst.  Returns the count, or -1 with an exception set and
   the connection closed (lost connection, timeout, Ctrl-C). */
ssize_t mc_transport_recv(mc_conn *c, unsigned char *dst, size_t room) {
    int status, err = 0;
    double to = c->read_timeout;
    ssize_t n = recv_some(c, dst, room, to, &status, &err);
    if (n > 0) return n;
    switch (status) {
    case IO_EINTR:
        mc_conn_close_socket(c);   /* Ctrl-C: a half-read response cannot be resumed */
        mc_conn_abandoned(c);      /* ... and the server's statement is stopped */
        return -1;
    case IO_TIMEOUT: {
        char tbuf[32];
        snprintf(tbuf, sizeof(tbuf), "%g", to);
        mc_conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                      "Lost connection to server %s (read timed out after %s s)",
                      LOST_AT(c), tbuf);
        mc_conn_abandoned(c);
        return -1;
    }
    case IO_EOF:
        mc_conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                      "Lost connection to server %s", LOST_AT(c));
        return -1;
    default:
        mc_conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                      "Lost connection to server %s (%s)", LOST_AT(c), strerror(err));
        return -1;
    }
}

/* ---------------------------------------------------------------- read while writing */

/* Room for `min` more bytes at the end of c->stash.  0, or -1 (out of memory; no
   exception: called without the GIL too). */
int mc_stash_reserve(mc_conn *c, size_t min) {
    if (c->stash_cap - c->stash_len >= min) return 0;
    size_t cap = c->stash_cap ? c->stash_cap : 65536;
    while (cap - c->stash_len < min) {
        if (cap > SIZE_MAX / 2) return -1;
        cap *= 2;
    }
    unsigned char *nb = realloc(c->stash, cap);
    if (!nb) return -1;
    c->stash = nb;
    c->stash_cap = cap;
    return 0;
}

void mc_stash_free(mc_conn *c) {
    free(c->stash);
    c->stash = NULL;
    c->stash_len = c->stash_cap = 0;
    c->stashing = 0;
}

/* The bytes received while a write waited go to the engine now (the write is done, so
   nothing the engine sends can be overtaken by a parse of them).  0, or -1 with the
   exception (a TLS or inflate error: the connection closed). */
int mc_stash_feed(mc_conn *c) {
    size_t n = c->stash_len;
    if (!n) return 0;
    c->stash_len = 0;
    int r = mc_engine_feed(c, c->stash, n);
    if (c->stash_cap > (4u << 20)) mc_stash_free(c);   /* a burst: do not keep its memory */
    return r;
}

/* Write all of iov, GIL released by the caller.  0, or -1 with *status set.

   While the socket does not take more, what the server sends is read into c->stash (the
   answers of commands in flight: a server blocked writing them stops reading ours, and
   would never take the rest of this write).  `to` bounds the time without progress of
   the write itself; bytes read meanwhile do not extend it. */
static int io_write_nogil(mc_conn *c, int fd, struct iovec *iov, int iovcnt, double to,
                          int *status, int *err) {
    int reading = 1;   /* until the server's end of the stream (or a read error) */
    double deadline = to >= 0 ? mc_monotonic() + to : -1;
    while (iovcnt > 0) {
        /* never block inside sendmsg(): a peer that stops reading would hold us there
           past write_timeout and past Ctrl-C; wait in poll() instead */
        struct msghdr mh;
        memset(&mh, 0, sizeof(mh));
        mh.msg_iov = iov;
        mh.msg_iovlen = (size_t)iovcnt;
        ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct pollfd pfd;
                pfd.fd = fd;
                pfd.events = (short)(POLLOUT | (reading ? POLLIN : 0));
                pfd.revents = 0;
                double left = deadline < 0 ? -1 : deadline - mc_monotonic();
                if (deadline >= 0 && left <= 0) { *status = IO_TIMEOUT; return -1; }
                int ms = left < 0 ? -1 : (left > 2e6 ? 2000000000 : (int)ceil(left * 1000.0));
                int w = poll(&pfd, 1, ms);
                if (w == 0) { *status = IO_TIMEOUT; return -1; }
                if (w < 0) { *err = errno; *status = errno == EINTR ? IO_EINTR : IO_ERRNO; return -1; }
                if (reading && (pfd.revents & POLLIN)) {
                    if (mc_stash_reserve(c, 65536) < 0) {
                        reading = 0;   /* no memory for more: wait for the write alone */
                        continue;
                    }
                    ssize_t r = recv(fd, c->stash + c->stash_len, c->stash_cap - c->stash_len,
                                     MSG_DONTWAIT);
                    if (r > 0) c->stash_len += (size_t)r;
                    else if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
                        reading = 0;   /* the write itself will say what happened */
                }
                continue;
            }
            *err = errno;
            *status = errno == EINTR ? IO_EINTR : IO_ERRNO;
            return -1;
        }
        if (n > 0 && deadline >= 0) deadline = mc_monotonic() + to;   /* progress */
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

int mc_send_all(mc_conn *c, struct iovec *iov, int iovcnt) {
    for (;;) {
        int status = IO_OK, err = 0, rc;
        int fd = c->fd;
        double to = c->write_timeout;
        Py_BEGIN_ALLOW_THREADS
        rc = io_write_nogil(c, fd, iov, iovcnt, to, &status, &err);
        Py_END_ALLOW_THREADS
        if (rc == 0) return 0;
        switch (status) {
        case IO_EINTR:
            if (PyErr_CheckSignals() < 0) {
                mc_conn_close_socket(c);
                mc_conn_abandoned(c);   /* e.g. LOAD DATA LOCAL, which the server runs as the
                                           file arrives: its statement is stopped too */
                return -1;
            }
            continue;   /* iov was advanced past what was written */
        case IO_TIMEOUT:
            mc_conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                          "Lost connection to server (write timed out)");
            return -1;
        default:
            mc_conn_fatal(c, c->st->OperationalError, CR_SERVER_GONE_ERROR,
                          "Server has gone away (%s)", strerror(err));
            return -1;
        }
    }
}

/* Open the socket; returns 0 or -1 with exception. */
int mc_open_socket(mc_conn *c, const char *host, int port, const char *unix_path,
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
        c->io = &mc_socket_io;
        c->is_unix = 1;
        c->secure = 1;
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
    double deadline = timeout >= 0 ? mc_monotonic() + timeout : -1;
    Py_BEGIN_ALLOW_THREADS
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) { err = errno; continue; }
        int fl = fcntl(fd, F_GETFL, 0);
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
        int r = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (r < 0 && errno == EINPROGRESS) {
            for (;;) {
                double left = deadline < 0 ? -1 : deadline - mc_monotonic();
                if (deadline >= 0 && left <= 0) { timed_out = 1; break; }
                int w = mc_wait_fd(fd, POLLOUT, left);
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
    c->io = &mc_socket_io;
    c->is_unix = 0;
    c->secure = 0;
    return 0;
}

static int blocking_flush(mc_conn *c);

int mc_start_tls(mc_conn *c, const connect_opts *o) {
    if (o->ssl_context) {
        /* connect(ssl=ssl.SSLContext): Python's session over memory BIOs (tls_py.c),
           driven by the same handshake loop below */
        if (mc_pytls_start(c, o->ssl_context, o->host, o->tls.mode) < 0) return -1;
    } else {
        if (!c->ssl_ctx) {
            c->ssl_ctx = mc_tls_context(c->st, &o->tls);
            if (!c->ssl_ctx) { mc_conn_close_socket(c); return -1; }
        }
        SSL *ssl = mc_tls_session(c->st, c->ssl_ctx, o->host, &o->tls, &c->tls);
        if (!ssl) { mc_conn_close_socket(c); return -1; }
        mc_engine_tls_start(c, ssl);
    }
    if (c->io != &mc_socket_io) {
        /* another transport: its fill() writes the records and waits for the server's,
           bounded by the read timeout (connect_timeout during the handshake) */
        for (;;) {
            int r = mc_engine_tls_handshake(c);
            if (r == 0) break;
            /* (fill() writes the handshake's records from the session's write BIO) */
            if (r != MC_NEED || c->io->fill(c) < 0) return -1;
        }
        goto verified;
    }
    double deadline = o->connect_timeout >= 0 ? mc_monotonic() + o->connect_timeout : -1;
    for (;;) {
        int r = mc_engine_tls_handshake(c);
        if (r == 0) break;
        if (r != MC_NEED) return -1;   /* closed, with the exception */
        if (blocking_flush(c) < 0) return -1;
        double left = deadline < 0 ? -1 : deadline - mc_monotonic();
        int status = IO_OK, err = 0;
        unsigned char *dst;
        size_t room;
        if (deadline >= 0 && left <= 0) {
            status = IO_TIMEOUT;
        } else {
            if (mc_engine_recv_buffer(c, 1, &dst, &room) < 0) { mc_conn_close_socket(c); return -1; }
            ssize_t n = recv_some(c, dst, room, left, &status, &err);
            if (n > 0) {
                if (mc_engine_received(c, (size_t)n) < 0) return -1;
                continue;
            }
        }
        if (status == IO_EINTR) { mc_conn_close_socket(c); return -1; }
        if (status == IO_TIMEOUT)
            mc_raise(c->st->OperationalError, CR_SSL_CONNECTION_ERROR,
                     "SSL connection error: TLS handshake timed out");
        else if (status == IO_EOF)
            mc_raise(c->st->OperationalError, CR_SSL_CONNECTION_ERROR,
                     "SSL connection error: the server closed the connection");
        else
            mc_raise(c->st->OperationalError, CR_SSL_CONNECTION_ERROR,
                     "SSL connection error: %s", strerror(err));
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        mc_conn_close_socket(c);
        PyErr_Restore(et, ev, tb);
        return -1;
    }
verified:
    if (c->pytls) {
        if (mc_pytls_done(c) < 0) return -1;
    } else if (mc_tls_session_done(c->st, c->ssl, &o->tls, &c->tls) < 0) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        mc_conn_close_socket(c);
        PyErr_Restore(et, ev, tb);
        return -1;
    }
    c->secure = 1;
    return 0;
}

/* ---------------------------------------------------------------- the mc_io of a socket */

/* Close the socket at once (no TLS close_notify round trip: the stream is no longer
   trusted; the engine frees the TLS session). */
static void blocking_close(mc_conn *c) {
    c->secure = 0;
    if (c->fd >= 0) {
        int fd = c->fd;
        c->fd = -1;
        Py_BEGIN_ALLOW_THREADS
        close(fd);
        Py_END_ALLOW_THREADS
    }
}

/* Write what the engine has for the wire.  0, or -1 with the exception (the connection
   closed). */
static int blocking_flush(mc_conn *c) {
    const unsigned char *buf;
    size_t len;
    if (c->fd < 0) {
        c->out.len = 0;
        mc_engine_wire_sent(c);
        mc_conn_raise_closed(c);
        return -1;
    }
    if (mc_engine_wire_out(c, &buf, &len) < 0) return -1;
    int r = 0;
    if (len) {
        struct iovec iov = {(void *)buf, len};
        r = mc_send_all(c, &iov, 1);
    }
    mc_engine_wire_sent(c);
    if (r < 0) {
        c->stash_len = 0;   /* the connection is closed: nothing more is parsed */
        return -1;
    }
    return mc_stash_feed(c);
}

/* Write pending output, then receive at least one byte into the engine.  0 or -1. */
static int blocking_fill(mc_conn *c) {
    if ((c->out.len || c->wout.len) && blocking_flush(c) < 0) return -1;
    if (c->fd < 0) {
        mc_conn_raise_closed(c);
        return -1;
    }
    if (mc_conn_check_signals(c) < 0) return -1;
    unsigned char *dst;
    size_t room;
    if (mc_engine_recv_buffer(c, 1, &dst, &room) < 0) return -1;
    ssize_t n = mc_transport_recv(c, dst, room);
    if (n < 0) return -1;
    return mc_engine_received(c, (size_t)n);
}

/* Write the engine's output without waiting (COM_QUIT on close): what the socket does not
   take at once is dropped; errors are ignored. */
void mc_transport_send_nowait(mc_conn *c) {
    const unsigned char *buf;
    size_t len;
    if (c->io == &mc_py_io) {
        mc_py_send_nowait(c);
        return;
    }
    if (c->fd < 0 || mc_engine_wire_out(c, &buf, &len) < 0) {
        PyErr_Clear();
        c->out.len = 0;
        mc_engine_wire_sent(c);
        return;
    }
    int fd = c->fd;
    if (len) {
        Py_BEGIN_ALLOW_THREADS
        (void)send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        Py_END_ALLOW_THREADS
    }
    mc_engine_wire_sent(c);
}

/* drain(): wait up to `seconds` for the socket to be readable. */
static int blocking_wait(mc_conn *c, double seconds) {
    int w, e = 0, fd = c->fd;
    if (fd < 0) {
        mc_conn_raise_closed(c);
        return -1;
    }
    Py_BEGIN_ALLOW_THREADS
    w = mc_wait_fd(fd, POLLIN, seconds);
    if (w < 0) e = errno;
    Py_END_ALLOW_THREADS
    if (w >= 0) return w > 0;
    if (e == EINTR) return mc_conn_check_signals(c) == 0 ? 2 : -1;
    mc_conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                  "Lost connection to server during query (%s)", strerror(e));
    return -1;
}

const mc_io mc_socket_io = {blocking_fill, blocking_flush, blocking_close, blocking_wait};

/* Bytes given to _replay(): no socket, the data is complete.  Reading past its end is an
   error; what the engine would send is dropped. */
static int replay_fill(mc_conn *c) {
    c->out.len = 0;
    mc_raise(c->st->OperationalError, CR_SERVER_LOST,
             "replayed data ends in the middle of a packet or result");
    return -1;
}

static int replay_flush(mc_conn *c) {
    c->out.len = 0;
    return 0;
}

static int replay_wait(mc_conn *c, double seconds) {
    return replay_fill(c);
}

const mc_io mc_replay_io = {replay_fill, replay_flush, NULL, replay_wait};
