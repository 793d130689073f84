/* The engine's framing layer: bytes in, packets out; packets in, bytes out.  No socket.
 *
 * Input: the transport (or a test, or a fuzz harness) gives the bytes it received with
 * mc_engine_feed(); inside the compressed protocol they are compressed-protocol frames
 * (7-byte header: compressed length, sequence id, uncompressed length, 0 meaning stored)
 * that are inflated here into the plain receive buffer rbuf.  mc_frame_next() takes one
 * logical packet (Protocol::Packet: 3-byte length, sequence id, payload; payloads of
 * 0xFFFFFF bytes continue in the next packet, joined here) from rbuf, or says how many
 * bytes it still needs (MC_NEED, c->need), consuming nothing.
 *
 * Output: mc_conn_send() frames a logical payload into the send buffer c->out (16 MiB
 * split; inside the compressed protocol, as compressed frames); the transport writes
 * c->out out when the engine next waits for bytes (mc_io fill) or when a command that has
 * no response is complete (mc_conn_flush).
 *
 * mc_read_packet() is what the protocol flows call: a packet when one is complete; else,
 * with a blocking transport attached (c->io), it asks the transport for bytes and tries
 * again; without one it returns MC_NEED and the flow returns MC_NEED to its caller with
 * its progress kept (see docs/architecture.md).
 *
 * Protocol references: Protocol::Packet, "Sending more than 16Mb", Compression
 * (Protocol::CompressedPacket) of the MySQL client/server protocol documentation.
 */
#include "conn_internal.h"
#include <zlib.h>
#include <openssl/err.h>

static int tls_received(mc_conn *c, const unsigned char *data, size_t n);

#define MIN_COMPRESS_LENGTH 50

/* A receive buffer whose unread bytes are [*pos, *end): move them to the front and grow
   the buffer so that `need` bytes fit from there.  0, or -1 with MemoryError. */
int mc_buf_make_room(unsigned char **buf, size_t *cap, size_t *pos, size_t *end, size_t need) {
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

/* Room for `more` bytes after rend (unread bytes kept, moved to the front). 0 or -1. */
static int rbuf_room(mc_conn *c, size_t more) {
    if (c->rcap - c->rend >= more) return 0;
    return mc_buf_make_room(&c->rbuf, &c->rcap, &c->rpos, &c->rend, (c->rend - c->rpos) + more);
}

/* Inflate every complete compressed-protocol frame in zbuf onto the end of rbuf.  A frame
   that is not complete yet stays in zbuf.  0, or -1 (malformed: the connection is closed). */
int mc_frame_inflate(mc_conn *c) {
    while (c->zend - c->zpos >= 7) {
        const unsigned char *h = c->zbuf + c->zpos;
        size_t clen = mc_load_u24(h);
        size_t ulen = mc_load_u24(h + 4);
        if (c->zend - c->zpos < 7 + clen) break;
        if (h[3] != c->cseq) {
            /* a server that refused a LOCAL INFILE data packet answers with the ids of
               where it stopped reading; results.c (infile_response) takes only an ERR.
               With pipelined commands in flight each response restarts the frame ids
               where its own command left them, and several responses may arrive in one
               read: the ids are followed, not checked, then (the inner packets' ids are
               not checked inside the compressed protocol either) */
            if (c->state != ST_INFILE && !c->pipe_pending && !c->pipe_reading) {
                mc_conn_malformed(c, "compressed packets out of order (unexpected sequence id)");
                return -1;
            }
            if (c->state == ST_INFILE) c->infile_seq_off = 1;
            c->cseq = h[3];
        }
        c->cseq++;
        size_t out = ulen ? ulen : clen;
        if (out == 0) {   /* an empty frame carries nothing (and rbuf may not exist yet) */
            c->zpos += 7 + clen;
            continue;
        }
        if (rbuf_room(c, out) < 0) return -1;
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
                mc_conn_malformed(c, "compressed frame does not inflate to its stated length");
                return -1;
            }
        }
        if (c->capturing && mc_writer_put(&c->capture, dst, out) < 0) return -1;
        c->rend += out;
        c->zpos += 7 + clen;
    }
    if (c->zpos == c->zend) c->zpos = c->zend = 0;
    return 0;
}

/* Bytes the next compressed frame needs in zbuf from zpos (at least its header). */
size_t mc_frame_zneed(mc_conn *c) {
    if (c->zend - c->zpos < 7) return 7;
    return 7 + mc_load_u24(c->zbuf + c->zpos);
}

/* Where plain (decrypted) stream bytes go: zbuf inside the compressed protocol, else
   rbuf; room for at least `min`.  0 or -1. */
static int plain_buffer(mc_conn *c, size_t min, unsigned char **dst, size_t *room) {
    if (c->compress) {
        size_t need = mc_frame_zneed(c);
        if (need < c->zend - c->zpos + min) need = c->zend - c->zpos + min;
        if (c->zcap - c->zpos < need || c->zcap - c->zend < min || c->zcap == c->zend) {
            if (mc_buf_make_room(&c->zbuf, &c->zcap, &c->zpos, &c->zend,
                                 need < RBUF_INITIAL ? RBUF_INITIAL : need) < 0) return -1;
        }
        *dst = c->zbuf + c->zend;
        *room = c->zcap - c->zend;
        return 0;
    }
    size_t need = c->need > c->rend - c->rpos ? c->need - (c->rend - c->rpos) : 0;
    if (need < min) need = min;
    if (c->rcap - c->rend < need || c->rcap == c->rend) {
        if (mc_buf_make_room(&c->rbuf, &c->rcap, &c->rpos, &c->rend,
                             (c->rend - c->rpos) + need) < 0) return -1;
    }
    *dst = c->rbuf + c->rend;
    *room = c->rcap - c->rend;
    return 0;
}

/* n plain bytes were written where plain_buffer() said.  0 or -1. */
static int plain_received(mc_conn *c, size_t n) {
    if (c->compress) {
        c->zend += n;
        return mc_frame_inflate(c);
    }
    if (c->capturing && mc_writer_put(&c->capture, c->rbuf + c->rend, n) < 0) {
        mc_conn_close_socket(c);
        return -1;
    }
    c->rend += n;
    return 0;
}

/* Where the transport puts received bytes: room for at least `min` bytes at *dst, *room
   bytes in all (under TLS a scratch buffer for the records; else the plain stream's
   buffer).  mc_engine_received() then says how many it wrote.  0 or -1. */
int mc_engine_recv_buffer(mc_conn *c, size_t min, unsigned char **dst, size_t *room) {
    if (MC_TLS_ON(c)) {
        size_t want = min > RBUF_INITIAL ? min : RBUF_INITIAL;
        c->tin.len = 0;
        if (mc_writer_reserve(&c->tin, want) < 0) return -1;
        *dst = c->tin.buf;
        *room = c->tin.cap;
        return 0;
    }
    return plain_buffer(c, min, dst, room);
}

/* n bytes were written at the place mc_engine_recv_buffer() gave.  0 or -1. */
int mc_engine_received(mc_conn *c, size_t n) {
    if (MC_TLS_ON(c)) return tls_received(c, c->tin.buf, n);
    return plain_received(c, n);
}

/* Give the engine received bytes (copied).  0 or -1. */
int mc_engine_feed(mc_conn *c, const unsigned char *data, size_t len) {
    while (len > 0) {
        unsigned char *dst;
        size_t room;
        if (mc_engine_recv_buffer(c, len, &dst, &room) < 0) return -1;
        size_t k = room < len ? room : len;
        memcpy(dst, data, k);
        if (mc_engine_received(c, k) < 0) return -1;
        data += k;
        len -= k;
    }
    return 0;
}

/* ---------------------------------------------------------------- TLS records

   Under TLS the server's bytes are records: they are written into the session's read
   BIO and decrypted at once into the plain stream (so no plaintext ever waits inside
   OpenSSL: what is complete is in rbuf), and c->out is encrypted into c->wout when the
   transport asks for the bytes to write (mc_engine_wire_out).  One implementation for
   every transport; tls.c makes the session and owns the verification policy.

   The session is OpenSSL's (c->ssl, made by tls.c from the ssl options), or with
   connect(ssl=ssl.SSLContext) Python's (c->pytls: an ssl.SSLObject over ssl.MemoryBIO
   objects, tls_py.c, whose context owns the verification); the functions below take
   whichever the connection has, at the same points. */

static int tls_failed(mc_conn *c, const char *what) {
    char msg[512];
    msg[0] = 0;
    mc_tls_errors(msg, sizeof(msg));
    mc_conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                  "Lost connection to server %s (TLS error: %s%s%s)", LOST_AT(c), what,
                  msg[0] ? ": " : "", msg);
    return -1;
}

/* Decrypt whatever the read BIO holds into the plain stream.  0 or -1. */
static int tls_pump(mc_conn *c) {
    if (c->tls_handshaking) return 0;   /* mc_engine_tls_handshake consumes it */
    for (;;) {
        unsigned char *dst;
        size_t room;
        if (plain_buffer(c, 16384 + 512, &dst, &room) < 0) return -1;
        int r, want = room > INT32_MAX ? INT32_MAX : (int)room;
        if (c->pytls) {
            r = mc_pytls_read(c, dst, (size_t)want);
            if (r > 0) {
                if (plain_received(c, (size_t)r) < 0) return -1;
                continue;
            }
            if (r == 0) return 0;
            if (r == MC_PYTLS_EOF) {
                mc_conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                              "Lost connection to server %s", LOST_AT(c));
            }
            return -1;
        }
        SSL *ssl = c->ssl;
        ERR_clear_error();
        Py_BEGIN_ALLOW_THREADS   /* decryption: no Python objects involved */
        r = SSL_read(ssl, dst, want);
        Py_END_ALLOW_THREADS
        if (r > 0) {
            if (plain_received(c, (size_t)r) < 0) return -1;
            continue;
        }
        int e = SSL_get_error(c->ssl, r);
        if (e == SSL_ERROR_WANT_READ) return 0;
        if (e == SSL_ERROR_ZERO_RETURN) {
            mc_conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                          "Lost connection to server %s", LOST_AT(c));
            return -1;
        }
        return tls_failed(c, e == SSL_ERROR_WANT_WRITE ? "renegotiation is not supported"
                                                       : "bad record");
    }
}

static int tls_received(mc_conn *c, const unsigned char *data, size_t n) {
    if (c->pytls) {
        if (mc_pytls_feed(c, data, n) < 0) return -1;
        return tls_pump(c);
    }
    size_t off = 0;
    while (off < n) {
        int k = BIO_write(SSL_get_rbio(c->ssl), data + off,
                          n - off > INT32_MAX ? INT32_MAX : (int)(n - off));
        if (k <= 0) { PyErr_NoMemory(); mc_conn_close_socket(c); return -1; }
        off += (size_t)k;
    }
    return tls_pump(c);
}

/* The engine's stream continues inside the TLS session `ssl` (made by mc_tls_session,
   owned by the connection from now on); mc_engine_tls_handshake() runs the handshake. */
void mc_engine_tls_start(mc_conn *c, SSL *ssl) {
    c->ssl = ssl;
    c->tls_handshaking = 1;
    c->tin.len = 0;
    c->wout.len = 0;
}

/* Advance the TLS handshake: 0 when done (the session verified the peer as the mode asks),
   MC_NEED when the server's next bytes are needed (after writing mc_engine_wire_out()'s),
   -1 with OperationalError 2026 and the stream closed. */
int mc_engine_tls_handshake(mc_conn *c) {
    if (c->pytls) {
        int r = mc_pytls_handshake(c);
        if (r != 0) return r;
        return tls_pump(c) < 0 ? -1 : 0;
    }
    int rc;
    SSL *ssl = c->ssl;
    ERR_clear_error();
    Py_BEGIN_ALLOW_THREADS   /* the handshake's public-key work; the verify callback
                                (tls.c) uses no Python API */
    rc = SSL_connect(ssl);
    Py_END_ALLOW_THREADS
    if (rc == 1) {
        c->tls_handshaking = 0;
        return tls_pump(c) < 0 ? -1 : 0;
    }
    int e = SSL_get_error(c->ssl, rc);
    if (e == SSL_ERROR_WANT_READ) return MC_NEED;
    mc_tls_handshake_error(c->st, c->ssl, e);
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    mc_conn_close_socket(c);
    PyErr_Restore(et, ev, tb);
    return -1;
}

/* The bytes to write now: c->out as it is, or under TLS c->out encrypted (and any
   handshake records) in c->wout.  Then mc_engine_wire_sent().  0 or -1. */
int mc_engine_wire_out(mc_conn *c, const unsigned char **buf, size_t *len) {
    if (!MC_TLS_ON(c)) {
        *buf = c->out.buf;
        *len = c->out.len;
        return 0;
    }
    if (c->pytls) {
        size_t off = 0;
        while (c->out.len && !c->tls_handshaking && off < c->out.len) {
            size_t k = c->out.len - off;
            if (k > (1u << 20)) k = 1u << 20;
            int r = mc_pytls_encrypt(c, c->out.buf + off, k);
            if (r < 0) return -1;
            off += (size_t)r;
            /* records leave the BIO as they are made: it holds at most ~1 MiB */
            if (mc_pytls_take_out(c, &c->wout) < 0) return -1;
        }
        if (!c->tls_handshaking) c->out.len = 0;
        if (mc_pytls_take_out(c, &c->wout) < 0) return -1;
        *buf = c->wout.buf;
        *len = c->wout.len;
        return 0;
    }
    if (c->out.len && !c->tls_handshaking) {
        size_t off = 0;
        while (off < c->out.len) {   /* records of up to 16 KiB, written whole or in parts */
            size_t k = c->out.len - off;
            if (k > (1u << 20)) k = 1u << 20;
            int r;
            SSL *ssl = c->ssl;
            const unsigned char *src = c->out.buf + off;
            ERR_clear_error();
            Py_BEGIN_ALLOW_THREADS   /* encryption: no Python objects involved */
            r = SSL_write(ssl, src, (int)k);
            Py_END_ALLOW_THREADS
            if (r <= 0) return tls_failed(c, "cannot encrypt");
            off += (size_t)r;
        }
        c->out.len = 0;
    }
    BIO *w = SSL_get_wbio(c->ssl);
    for (;;) {
        size_t pending = BIO_ctrl_pending(w);
        if (!pending) break;
        if (mc_writer_reserve(&c->wout, pending) < 0) return -1;
        int k = BIO_read(w, c->wout.buf + c->wout.len, (int)pending);
        if (k <= 0) break;
        c->wout.len += (size_t)k;
    }
    *buf = c->wout.buf;
    *len = c->wout.len;
    return 0;
}

/* What mc_engine_wire_out() gave was written (or dropped). */
void mc_engine_wire_sent(mc_conn *c) {
    if (MC_TLS_ON(c)) {
        c->wout.len = 0;
        if (c->wout.cap > RBUF_KEEP) {
            mc_writer_free(&c->wout);
            (void)mc_writer_init(&c->wout, 512);
        }
    } else {
        c->out.len = 0;
    }
    if (c->out.cap > RBUF_KEEP) {
        mc_writer_free(&c->out);
        (void)mc_writer_init(&c->out, 512);
    }
}

/* Is the logical packet at byte offset `off` of the unread bytes complete?  1 with its
   total wire length in *wire (headers included), 0 with c->need set (bytes wanted from
   rpos), -1 (too large: the connection is closed). */
static int packet_extent(mc_conn *c, size_t off, size_t *wire) {
    size_t avail = c->rend - c->rpos;
    size_t pos = off, payload = 0;
    for (;;) {
        if (avail < pos + 4) { c->need = pos + 4; return 0; }
        size_t plen = mc_load_u24(c->rbuf + c->rpos + pos);
        if (avail < pos + 4 + plen) { c->need = pos + 4 + plen; return 0; }
        pos += 4 + plen;
        payload += plen;
        if (payload > MC_MAX_JOINED) {
            mc_conn_malformed(c, "packet larger than 1 GiB (the server's max_allowed_packet limit)");
            return -1;
        }
        if (plen < MC_MAX_PACKET) break;
    }
    *wire = pos - off;
    return 1;
}

/* Are the next `count` logical packets all complete in rbuf?  1, 0 (c->need set), -1. */
int mc_frame_complete(mc_conn *c, size_t count) {
    size_t off = 0;
    for (size_t i = 0; i < count; i++) {
        size_t wire;
        int r = packet_extent(c, off, &wire);
        if (r <= 0) return r;
        off += wire;
    }
    return 1;
}

/* Take the next logical packet: 1 with *payload, *len (valid until the next call that
   feeds or reads), 0 when it is not complete (nothing consumed, c->need set), -1. */
int mc_frame_next(mc_conn *c, const unsigned char **payload, size_t *len) {
    size_t wire;
    int r = packet_extent(c, 0, &wire);
    if (r <= 0) return r;
    const unsigned char *h = c->rbuf + c->rpos;
    size_t plen = mc_load_u24(h);
    /* Inside the compressed protocol the server restarts the inner ids at each flush
       (as libmysqlclient, only the frames' own ids are checked then). */
    if (h[3] != c->seq && !c->compress) {
        /* an ERR from a server that refused a LOCAL INFILE data packet has the id that
           follows the last packet it read (results.c, infile_response) */
        if (!(c->state == ST_INFILE && plen > 0 && plen < MC_MAX_PACKET && h[4] == 0xFF)) {
            mc_conn_malformed(c, "packets out of order (unexpected sequence id)");
            return -1;
        }
        c->infile_seq_off = 1;
    }
    c->seq = (uint8_t)(h[3] + 1);
    if (plen < MC_MAX_PACKET) {
        *payload = h + 4;
        *len = plen;
        c->rpos += 4 + plen;
        return 1;
    }
    /* multi-packet payload (all fragments are buffered): join them */
    c->join.len = 0;
    for (;;) {
        if (mc_writer_put(&c->join, c->rbuf + c->rpos + 4, plen) < 0) return -1;
        c->rpos += 4 + plen;
        if (plen < MC_MAX_PACKET) break;
        h = c->rbuf + c->rpos;
        plen = mc_load_u24(h);
        if (h[3] != c->seq && !c->compress) {
            mc_conn_malformed(c, "packets out of order in a multi-packet payload");
            return -1;
        }
        c->seq = (uint8_t)(h[3] + 1);
    }
    *payload = c->join.buf;
    *len = c->join.len;
    return 1;
}

/* Ask the transport for more bytes (after writing what is pending).  0, MC_NEED when no
   transport is attached, or -1. */
static int engine_wait(mc_conn *c) {
    if (!c->io || c->nowait) return MC_NEED;
    return c->io->fill(c);
}

/* With a transport attached, what the engine framed is written before anything more is
   parsed: a command always reaches the server before bytes already buffered are taken as
   its answer (an unsolicited packet then fails the sequence check instead of answering a
   command the server never saw).  0 or -1. */
static inline int flush_first(mc_conn *c) {
    if (c->io && c->out.len) return c->io->flush(c);
    return 0;
}

int mc_read_packet_slow(mc_conn *c, const unsigned char **payload, size_t *len) {
    if (flush_first(c) < 0) return -1;
    for (;;) {
        int r = mc_frame_next(c, payload, len);
        if (r > 0) {
            if (--c->sig_countdown == 0 && mc_conn_check_signals(c) < 0) return -1;
            return 0;
        }
        if (r < 0) return -1;
        r = engine_wait(c);
        if (r != 0) return r;
    }
}

/* Wait (blocking transport) until the next `count` packets are complete.  0, MC_NEED, -1. */
int mc_frame_wait(mc_conn *c, size_t count) {
    if (flush_first(c) < 0) return -1;
    for (;;) {
        int r = mc_frame_complete(c, count);
        if (r > 0) return 0;
        if (r < 0) return -1;
        r = engine_wait(c);
        if (r != 0) return r;
    }
}

/* The next packet without consuming it, when it is a single fragment: 1 with *payload and
   *len, 2 when it is a multi-packet payload (not peeked), MC_NEED, or -1. */
int mc_frame_peek(mc_conn *c, const unsigned char **payload, size_t *len) {
    int r = mc_frame_wait(c, 1);
    if (r != 0) return r;
    const unsigned char *h = c->rbuf + c->rpos;
    size_t plen = mc_load_u24(h);
    if (plen >= MC_MAX_PACKET) return 2;
    *payload = h + 4;
    *len = plen;
    return 1;
}

/* Ctrl-C and other signals (PyErr_CheckSignals) are honoured at the packet layer, not
   only when a syscall is interrupted: every MC_SIGNAL_PACKETS packets taken from the
   receive buffer and before every read from the socket, so that every path that reads
   packets (buffered, unbuffered and prepared rows, server cursors, the columnar reader,
   executemany, LOAD DATA) stops within a few milliseconds of decoding.  When a handler
   raises (KeyboardInterrupt), the connection is closed: the rest of the response (up to
   millions of rows) cannot be drained in a bounded time, and a half-read response cannot
   be resumed.  Later use raises OperationalError 2006.  0, or -1 with the exception. */
#if defined(__GNUC__)
__attribute__((noinline, cold))   /* keep the packet fast path small */
#endif
int mc_conn_check_signals(mc_conn *c) {
    c->sig_countdown = MC_SIGNAL_PACKETS;
    if (PyErr_CheckSignals() < 0) {
        mc_conn_close_socket(c);   /* keeps the exception set */
        mc_conn_abandoned(c);
        return -1;
    }
    return 0;
}

/* The stream was closed in the middle of a command by an interrupt (a signal handler's
   exception: Ctrl-C) or a read timeout: the server may still be running the statement,
   and nobody will read its result.  Call the connection's on_abandon(thread_id) hook
   (mysqlc.connections: KILL QUERY over a short side connection, bounded) once per stream,
   with the pending exception kept as it is: the hook's own errors are dropped.  Nothing
   without a hook or before the handshake gave a thread id. */
void mc_conn_abandoned(mc_conn *c) {
    if (!c->on_abandon || !c->thread_id || c->abandon_called) return;
    c->abandon_called = 1;
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyObject *hook = Py_NewRef(c->on_abandon);
    PyObject *r = PyObject_CallFunction(hook, "k", (unsigned long)c->thread_id);
    Py_DECREF(hook);
    if (r) Py_DECREF(r);
    else PyErr_Clear();
    PyErr_Restore(et, ev, tb);
}

/* ---------------------------------------------------------------- output */

/* A payload of many 16 MiB packets is written as it is framed when a transport is
   attached (bounded memory, and a peer that stops reading is noticed by the write timeout
   before the rest is framed or deflated); without one it accumulates in c->out. */
static int stream_out(mc_conn *c) {
    if (!c->io || c->out.len < ((size_t)1 << 20)) return 0;
    return c->io->flush(c);
}

/* Append `len` bytes of plain packets (headers included) to c->out as compressed-protocol
   frames. */
static int put_compressed(mc_conn *c, const unsigned char *data, size_t len) {
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
                mc_conn_fatal(c, c->st->OperationalError, CR_UNKNOWN_ERROR, "zlib compress failed (%d)", zr);
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
        if (mc_writer_put(&c->out, hdr, 7) < 0 || mc_writer_put(&c->out, body, blen) < 0)
            return -1;
        off += chunk;
        if (off < len && stream_out(c) < 0) return -1;
    } while (off < len);
    return 0;
}

/* Frame the logical payload prefix+data as one or more packets into c->out (16 MiB split;
   a payload that is an exact multiple of 0xFFFFFF ends with an empty packet).  Sequence
   ids continue from c->seq.  0 or -1 (MemoryError). */
int mc_conn_send(mc_conn *c, const unsigned char *prefix, size_t plen,
                 const unsigned char *data, size_t dlen) {
    mc_writer *w = c->compress ? &c->zsend : &c->out;
    if (c->compress) c->zsend.len = 0;
    size_t total = plen + dlen, sent = 0;
    size_t first = total < MC_MAX_PACKET ? total : MC_MAX_PACKET;
    if (mc_writer_reserve(w, (c->compress ? total : first) + 4 * (total / MC_MAX_PACKET + 1)) < 0)
        return -1;
    for (;;) {
        size_t chunk = total - sent;
        if (chunk > MC_MAX_PACKET) chunk = MC_MAX_PACKET;
        unsigned char hdr[4];
        mc_store_u24(hdr, (uint32_t)chunk);
        hdr[3] = c->seq++;
        if (mc_writer_put(w, hdr, 4) < 0) return -1;
        /* the part of [sent, sent+chunk) that lies in prefix, then in data */
        size_t a = sent, b = sent + chunk;
        if (a < plen) {
            size_t e = b < plen ? b : plen;
            if (mc_writer_put(w, prefix + a, e - a) < 0) return -1;
            a = e;
        }
        if (b > a && b > plen) {
            if (mc_writer_put(w, data + (a - plen), b - a) < 0) return -1;
        }
        sent += chunk;
        if (chunk < MC_MAX_PACKET) break;
        if (!c->compress && stream_out(c) < 0) return -1;
    }
    if (c->compress) {
        int r = put_compressed(c, c->zsend.buf, c->zsend.len);
        if (c->zsend.cap > RBUF_KEEP) {
            mc_writer_free(&c->zsend);
            if (mc_writer_init(&c->zsend, 256) < 0) return -1;
        }
        return r;
    }
    return 0;
}

/* Write what the engine has put into c->out, when a transport is attached.  0 or -1. */
int mc_conn_flush(mc_conn *c) {
    if ((c->out.len == 0 && c->wout.len == 0) || !c->io) return 0;
    return c->io->flush(c);
}

/* Start a command: sequence id 0, then frame cmd + arg. */
int mc_conn_command(mc_conn *c, uint8_t cmd, const unsigned char *arg, size_t arglen) {
    return mc_conn_command_head(c, &cmd, 1, arg, arglen);
}

/* A command whose payload is `head` (the command byte and what precedes `arg`) then `arg`,
   e.g. COM_QUERY's query attributes then the query. */
int mc_conn_command_head(mc_conn *c, const unsigned char *head, size_t hlen,
                         const unsigned char *arg, size_t arglen) {
    mc_conn_clear_error(c);
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
    return mc_conn_send(c, head, hlen, arg, arglen);
}

/* The stream is no longer trusted (error, interrupt, close): the transport closes, the
   engine forgets what it had buffered.  No exception is set or changed. */
void mc_conn_close_socket(mc_conn *c) {
    c->compress = 0;
    c->pipe_pending = 0;   /* their responses will never be read */
    c->pipe_reading = 0;
    c->stash_len = 0;      /* (read while a write waited: never parsed now) */
    c->stashing = 0;
    c->take_phase = 0;     /* (statement.c: the response will never be read) */
    c->zpos = c->zend = 0;
    c->out.len = 0;
    c->wout.len = 0;
    c->tls_handshaking = 0;
    c->replaying = 0;   /* bytes given by Python: not read further either (2006 from now on) */
    if (c->ssl) {
        SSL_free(c->ssl);   /* no close_notify: the stream is going away */
        c->ssl = NULL;
    }
    mc_pytls_free(c);
    if (c->io && c->io->close) c->io->close(c);
    c->state = ST_IDLE;
}
