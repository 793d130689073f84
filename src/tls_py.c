/* TLS through a Python ssl.SSLContext: connect(ssl=ctx), PyMySQL's and aiomysql's form.
 *
 * A context's CA certificates (default-path ones included), client certificate and key,
 * verification flags, version bounds and callbacks live inside Python's _ssl module --
 * possibly linked with another OpenSSL than this extension -- and cannot be read back out
 * to build an SSL_CTX of our own (tls.c).  So with a context the session is Python's:
 * ctx.wrap_bio(incoming, outgoing, server_side=False, server_hostname=host), an
 * ssl.SSLObject over two ssl.MemoryBIO objects.  framing.c drives it where it drives the
 * OpenSSL session: the records the transport received are written into `incoming` and read
 * back decrypted (SSLObject.read straight into the plain stream's buffer), c->out is
 * encrypted with SSLObject.write and the records are taken from `outgoing`; the handshake
 * is do_handshake() (SSLWantReadError: MC_NEED, the server's next bytes are needed).  Every
 * transport (the blocking socket, mysqlc.aio's) carries the same bytes either way.
 *
 * Verification is the context's own: its verify_mode and check_hostname decide.  The
 * Python layer (mysqlc/_secure.py) passes the ssl_mode they amount to (CERT_NONE:
 * REQUIRED, else VERIFY_CA, and VERIFY_IDENTITY with check_hostname), so the session
 * layer's rules -- a server without TLS is refused before any credential is sent, when a
 * clear password may be sent (mc_secure_transport) -- are those of that mode, and
 * tls_info() reports what the context verified.
 *
 * Errors, as the OpenSSL path: OperationalError 2026 "SSL connection error: certificate
 * verify failed: <Python's verify_message>" or "SSL connection error: TLS handshake
 * failed: <reason>" during the handshake (the ssl exception is the __cause__), and
 * CR_SERVER_LOST for a bad record or a close_notify afterwards.  The GIL stays held
 * around these calls; Python's _ssl releases it itself around SSL_read / SSL_write /
 * SSL_do_handshake.
 */
#include "conn_internal.h"
#include <openssl/evp.h>

/* Python's ssl module's classes, kept in the module state on first use.  0 or -1. */
static int load_ssl(mc_state *st) {
    if (st->ssl_Error) return 0;
    PyObject *m = PyImport_ImportModule("ssl");
    if (!m) return -1;
    PyObject *bio = PyObject_GetAttrString(m, "MemoryBIO");
    PyObject *want = PyObject_GetAttrString(m, "SSLWantReadError");
    PyObject *zero = PyObject_GetAttrString(m, "SSLZeroReturnError");
    PyObject *cert = PyObject_GetAttrString(m, "SSLCertVerificationError");
    PyObject *err = PyObject_GetAttrString(m, "SSLError");
    Py_DECREF(m);
    if (!bio || !want || !zero || !cert || !err) {
        Py_XDECREF(bio); Py_XDECREF(want); Py_XDECREF(zero); Py_XDECREF(cert); Py_XDECREF(err);
        return -1;
    }
    st->ssl_MemoryBIO = bio;
    st->ssl_WantRead = want;
    st->ssl_ZeroReturn = zero;
    st->ssl_CertVerify = cert;
    st->ssl_Error = err;
    return 0;
}

/* Close the stream, keeping the pending exception.  -1. */
static int close_keeping(mc_conn *c) {
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    mc_conn_close_socket(c);
    PyErr_Restore(et, ev, tb);
    return -1;
}

/* str(exc) (or its `attr` attribute when it is a str) into buf. */
static void exc_text(PyObject *exc, const char *attr, char *buf, size_t cap) {
    buf[0] = 0;
    PyObject *s = NULL;
    if (exc && attr) {
        s = PyObject_GetAttrString(exc, attr);
        if (!s || !PyUnicode_Check(s) || PyUnicode_GET_LENGTH(s) == 0) {
            PyErr_Clear();
            Py_CLEAR(s);
        }
    }
    if (!s && exc) s = PyObject_Str(exc);
    const char *u = s ? PyUnicode_AsUTF8(s) : NULL;
    if (!u) PyErr_Clear();
    snprintf(buf, cap, "%s", u && *u ? u : "(no reason given)");
    Py_XDECREF(s);
}

/* Replace the pending ssl exception by OperationalError(errnum, prefix + its text), with
   the ssl exception as __cause__.  NULL. */
static PyObject *reraise_as(mc_conn *c, int errnum, const char *prefix, const char *attr) {
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyErr_NormalizeException(&et, &ev, &tb);
    char text[600];
    exc_text(ev, attr, text, sizeof(text));
    mc_raise(c->st->OperationalError, errnum, "%s%s", prefix, text);
    if (ev) {
        PyObject *nt, *nv, *ntb;
        PyErr_Fetch(&nt, &nv, &ntb);
        PyErr_NormalizeException(&nt, &nv, &ntb);
        if (nv) PyException_SetCause(nv, Py_NewRef(ev));
        PyErr_Restore(nt, nv, ntb);
    }
    Py_XDECREF(et);
    Py_XDECREF(ev);
    Py_XDECREF(tb);
    return NULL;
}

/* The session for `ctx` (an ssl.SSLContext), for the server `host` (SNI and the name
   check_hostname verifies; Python sends no SNI for an IP address and checks it as one);
   `mode` is the ssl_mode the context amounts to.  The engine's stream continues inside
   it (the handshake is mc_engine_tls_handshake).  0, or -1 with the exception (2026 when
   the context refuses to make a client session) and the stream closed. */
int mc_pytls_start(mc_conn *c, PyObject *ctx, const char *host, int mode) {
    mc_state *st = c->st;
    if (load_ssl(st) < 0) return close_keeping(c);
    PyObject *in = PyObject_CallNoArgs(st->ssl_MemoryBIO);
    PyObject *out = in ? PyObject_CallNoArgs(st->ssl_MemoryBIO) : NULL;
    if (!out) { Py_XDECREF(in); return close_keeping(c); }
    PyObject *kw = Py_BuildValue("{s:O,s:s}", "server_side", Py_False, "server_hostname",
                                 host && *host ? host : NULL);
    PyObject *args = kw ? PyTuple_Pack(2, in, out) : NULL;
    PyObject *wrap = args ? PyObject_GetAttrString(ctx, "wrap_bio") : NULL;
    PyObject *obj = wrap ? PyObject_Call(wrap, args, kw) : NULL;
    Py_XDECREF(wrap);
    Py_XDECREF(args);
    Py_XDECREF(kw);
    if (!obj) {
        Py_DECREF(in);
        Py_DECREF(out);
        if (PyErr_ExceptionMatches(PyExc_ValueError) || PyErr_ExceptionMatches(st->ssl_Error))
            reraise_as(c, CR_SSL_CONNECTION_ERROR,
                       "SSL connection error: the ssl.SSLContext cannot make a client "
                       "session: ", NULL);
        return close_keeping(c);
    }
    memset(&c->tls, 0, sizeof(c->tls));
    c->tls.mode = mode;
    c->pytls = obj;
    c->pytls_in = in;
    c->pytls_out = out;
    c->tls_handshaking = 1;
    c->tin.len = 0;
    c->wout.len = 0;
    return 0;
}

/* Advance the handshake: 0 done, MC_NEED (write mc_engine_wire_out()'s bytes, feed the
   server's), -1 with OperationalError 2026 (or the context's callback's exception) and
   the stream closed. */
int mc_pytls_handshake(mc_conn *c) {
    mc_state *st = c->st;
    PyObject *r = PyObject_CallMethod(c->pytls, "do_handshake", NULL);
    if (r) {
        Py_DECREF(r);
        c->tls_handshaking = 0;
        return 0;
    }
    if (PyErr_ExceptionMatches(st->ssl_WantRead)) {
        PyErr_Clear();
        return MC_NEED;
    }
    if (PyErr_ExceptionMatches(st->ssl_CertVerify))
        reraise_as(c, CR_SSL_CONNECTION_ERROR,
                   "SSL connection error: certificate verify failed: ", "verify_message");
    else if (PyErr_ExceptionMatches(st->ssl_Error))
        reraise_as(c, CR_SSL_CONNECTION_ERROR, "SSL connection error: TLS handshake failed: ",
                   NULL);
    return close_keeping(c);
}

/* After the handshake: the peer certificate's SHA-256 (the zero-configuration TLS proof
   hashes it, MDEV-31855) and how it was verified: by the context (the chain, and the host
   name with check_hostname) when its mode verifies.  0, or -1 (2026: a verifying mode
   without a certificate from the server) with the stream closed. */
int mc_pytls_done(mc_conn *c) {
    PyObject *der = PyObject_CallMethod(c->pytls, "getpeercert", "O", Py_True);
    if (!der) return close_keeping(c);
    if (PyBytes_Check(der) && PyBytes_GET_SIZE(der) > 0) {
        unsigned int fl = 0;
        c->tls.have_fp = EVP_Digest(PyBytes_AS_STRING(der), (size_t)PyBytes_GET_SIZE(der),
                                    c->tls.fp, &fl, EVP_sha256(), NULL) == 1 && fl == 32;
    }
    int have_cert = PyBytes_Check(der) && PyBytes_GET_SIZE(der) > 0;
    Py_DECREF(der);
    if (c->tls.mode >= MC_SSL_VERIFY_CA) {
        if (!have_cert) {
            mc_raise(c->st->OperationalError, CR_SSL_CONNECTION_ERROR,
                     "SSL connection error: the server presented no certificate to verify");
            return close_keeping(c);
        }
        c->tls.verified_by = "ca";
    }
    return 0;
}

/* The transport's n record bytes go into the session's incoming BIO.  0, or -1
   (MemoryError) with the stream closed. */
int mc_pytls_feed(mc_conn *c, const unsigned char *data, size_t n) {
    if (n == 0) return 0;
    PyObject *mv = PyMemoryView_FromMemory((char *)data, (Py_ssize_t)n, PyBUF_READ);
    PyObject *r = mv ? PyObject_CallMethod(c->pytls_in, "write", "O", mv) : NULL;
    Py_XDECREF(mv);
    if (!r) return close_keeping(c);
    Py_DECREF(r);
    return 0;
}

/* Decrypt into dst (room bytes): the count (> 0), 0 when a complete record is needed,
   MC_PYTLS_EOF at the server's close_notify, -1 (a bad record: CR_SERVER_LOST with the
   reason) with the stream closed. */
int mc_pytls_read(mc_conn *c, unsigned char *dst, size_t room) {
    mc_state *st = c->st;
    Py_ssize_t want = room > INT32_MAX ? INT32_MAX : (Py_ssize_t)room;
    PyObject *mv = PyMemoryView_FromMemory((char *)dst, want, PyBUF_WRITE);
    PyObject *r = mv ? PyObject_CallMethod(c->pytls, "read", "nO", want, mv) : NULL;
    Py_XDECREF(mv);
    if (r) {
        Py_ssize_t k = PyLong_AsSsize_t(r);
        Py_DECREF(r);
        if (k < 0 || k > want) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_SystemError, "SSLObject.read gave a bad count");
            return close_keeping(c);
        }
        if (k == 0) return MC_PYTLS_EOF;   /* read() gives 0 after a close_notify */
        return (int)k;
    }
    if (PyErr_ExceptionMatches(st->ssl_WantRead)) { PyErr_Clear(); return 0; }
    if (PyErr_ExceptionMatches(st->ssl_ZeroReturn)) { PyErr_Clear(); return MC_PYTLS_EOF; }
    if (PyErr_ExceptionMatches(st->ssl_Error)) {
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        PyErr_NormalizeException(&et, &ev, &tb);
        char text[600];
        exc_text(ev, NULL, text, sizeof(text));
        Py_XDECREF(et);
        Py_XDECREF(ev);
        Py_XDECREF(tb);
        mc_conn_fatal(c, st->OperationalError, CR_SERVER_LOST,
                      "Lost connection to server %s (TLS error: bad record: %s)", LOST_AT(c),
                      text);
        return -1;
    }
    return close_keeping(c);
}

/* Encrypt n bytes of src into the outgoing BIO: the count taken, or -1 with the stream
   closed (CR_SERVER_LOST). */
int mc_pytls_encrypt(mc_conn *c, const unsigned char *src, size_t n) {
    PyObject *mv = PyMemoryView_FromMemory((char *)src, (Py_ssize_t)n, PyBUF_READ);
    PyObject *r = mv ? PyObject_CallMethod(c->pytls, "write", "O", mv) : NULL;
    Py_XDECREF(mv);
    if (!r) {
        if (!PyErr_ExceptionMatches(c->st->ssl_Error)) return close_keeping(c);
        PyObject *et, *ev, *tb;
        PyErr_Fetch(&et, &ev, &tb);
        PyErr_NormalizeException(&et, &ev, &tb);
        char text[600];
        exc_text(ev, NULL, text, sizeof(text));
        Py_XDECREF(et);
        Py_XDECREF(ev);
        Py_XDECREF(tb);
        mc_conn_fatal(c, c->st->OperationalError, CR_SERVER_LOST,
                      "Lost connection to server %s (TLS error: cannot encrypt: %s)",
                      LOST_AT(c), text);
        return -1;
    }
    Py_ssize_t k = PyLong_AsSsize_t(r);
    Py_DECREF(r);
    if (k <= 0 || (size_t)k > n) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_SystemError, "SSLObject.write gave a bad count");
        return close_keeping(c);
    }
    return (int)k;
}

/* Append the records waiting in the outgoing BIO to w.  0, or -1 with the stream closed. */
int mc_pytls_take_out(mc_conn *c, mc_writer *w) {
    PyObject *b = PyObject_CallMethod(c->pytls_out, "read", NULL);
    if (!b) return close_keeping(c);
    if (!PyBytes_Check(b)) {
        Py_DECREF(b);
        PyErr_SetString(PyExc_SystemError, "MemoryBIO.read did not give bytes");
        return close_keeping(c);
    }
    int r = mc_writer_put(w, PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b));
    Py_DECREF(b);
    if (r < 0) return close_keeping(c);
    return 0;
}

/* Records made and not taken yet (the handshake's)?  1 or 0 (an error counts as 1: the
   flush that follows reports it). */
int mc_pytls_pending_out(mc_conn *c) {
    PyObject *p = PyObject_GetAttrString(c->pytls_out, "pending");
    if (!p) { PyErr_Clear(); return 1; }
    long v = PyLong_AsLong(p);
    Py_DECREF(p);
    if (v == -1 && PyErr_Occurred()) { PyErr_Clear(); return 1; }
    return v > 0;
}

/* Drop the session (no close_notify: the stream is going away).  No exception is set. */
void mc_pytls_free(mc_conn *c) {
    Py_CLEAR(c->pytls);
    Py_CLEAR(c->pytls_in);
    Py_CLEAR(c->pytls_out);
}

/* tls_info for a Python session: {'version', 'cipher', 'verified', 'verified_by'} as
   mc_tls_info (Python's SSLObject.version() and cipher()[0]).  New reference or NULL. */
PyObject *mc_pytls_info(mc_conn *c) {
    PyObject *v = PyObject_CallMethod(c->pytls, "version", NULL);
    if (!v) return NULL;
    PyObject *ci = PyObject_CallMethod(c->pytls, "cipher", NULL);
    if (!ci) { Py_DECREF(v); return NULL; }
    const char *version = PyUnicode_Check(v) ? PyUnicode_AsUTF8(v) : NULL;
    const char *cipher = NULL;
    if (PyTuple_Check(ci) && PyTuple_GET_SIZE(ci) > 0 && PyUnicode_Check(PyTuple_GET_ITEM(ci, 0)))
        cipher = PyUnicode_AsUTF8(PyTuple_GET_ITEM(ci, 0));
    PyObject *d = PyErr_Occurred() ? NULL : mc_tls_info_dict(version, cipher, &c->tls);
    Py_DECREF(v);
    Py_DECREF(ci);
    return d;
}
