/* The engine's session layer: Protocol::HandshakeV10, the SSLRequest and
 * HandshakeResponse41, capability negotiation (MariaDB's extended capabilities too), and
 * every authentication exchange: mysql_native_password, caching_sha2_password (fast and
 * full paths, RSA), sha256_password, mysql_clear_password, plugins given in Python
 * (client_ed25519), AuthSwitchRequest and AuthMoreData; COM_CHANGE_USER.  The TLS upgrade
 * itself is the transport's (mc_start_tls). */
#include "conn_internal.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>
#include <math.h>
#include <openssl/err.h>
#include <openssl/evp.h>


/* ---------------------------------------------------------------- authentication */


/* TLS is up, or the transport is a unix socket (set by the transport); TLS whose
   certificate still awaits the password proof is not yet a secure channel for the clear
   password. */
int mc_secure_transport(mc_conn *c) {
    if (!c->secure) return 0;
    if (!MC_TLS_ON(c)) return 1;              /* a unix socket */
    if (c->tls.deferred) return 0;            /* the certificate awaits the password proof */
    /* TLS: a verified peer, or TLS the user asked for (REQUIRED or stricter), as before
       TLS became the default.  Under the default PREFERRED an unverified certificate may
       be anybody's: no password is sent in clear through it (a man in the middle that
       offers TLS would otherwise get it by asking for clear text or full authentication) */
    return c->tls.verified_by != NULL || c->tls.mode >= MC_SSL_REQUIRED;
}

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
    if (!enc) { mc_conn_close_socket(c); return -1; }
    int r = mc_writer_put(out, PyBytes_AS_STRING(enc), (size_t)PyBytes_GET_SIZE(enc));
    Py_DECREF(enc);
    return r;
}

static int no_secure_path(mc_conn *c, const char *plugin) {
    mc_conn_fatal(c, c->st->OperationalError, CR_AUTH_PLUGIN_ERR,
               "Authentication plugin '%s' reported error: Authentication requires secure "
               "connection (use TLS, a unix socket, server_public_key=..., or allow "
               "get_server_public_key=True)", plugin);
    return -1;
}

/* Python plugins.  c->auth_plugins maps a plugin name to callable(password: bytes,
   data: bytes) where data is the server's challenge as sent (the AuthSwitchRequest's
   plugin data).  It returns either
     - bytes: the whole answer (a one-round plugin), or
     - an exchange object with
         response: bytes            the first answer;
         more(data: bytes) -> bytes  the answer to each later server packet of the
                                     exchange (AuthMoreData without its 0x01, or a packet
                                     MariaDB sent unprefixed), optional;
         password_hash() -> bytes    optional: Connector/C's hash_password_bin, the value
                                     the zero-configuration TLS proof hashes (MDEV-31855).
   The callable may carry hashes_password = True to say its exchanges offer
   password_hash(): then it may run over TLS whose certificate awaits that proof.  An
   exception from the plugin ends the connection and propagates as it is.  py_plugin_put
   takes (steals) `res` and frames it into out. */
static int py_plugin_put(mc_conn *c, auth_state *a, PyObject *res, mc_writer *out) {
    if (!PyBytes_Check(res)) {
        Py_DECREF(res);
        mc_conn_fatal(c, c->st->OperationalError, CR_AUTH_PLUGIN_ERR,
                   "authentication plugin '%s' returned a non-bytes response", a->plugin);
        return -1;
    }
    out->len = 0;
    int r = mc_writer_put(out, PyBytes_AS_STRING(res), (size_t)PyBytes_GET_SIZE(res));
    Py_DECREF(res);
    return r;
}

/* A later server packet of a Python plugin's exchange: 1 with the answer in out, 0 when the
   plugin has no later rounds, -1 on error. */
static int py_plugin_more(mc_conn *c, auth_state *a, const unsigned char *d, size_t n,
                          mc_writer *out) {
    if (!a->pyx) return 0;
    PyObject *more = PyObject_GetAttrString(a->pyx, "more");
    if (!more) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) { mc_conn_close_socket(c); return -1; }
        PyErr_Clear();
        return 0;
    }
    PyObject *res = PyObject_CallFunction(more, "y#", (const char *)d, (Py_ssize_t)n);
    Py_DECREF(more);
    if (!res) { mc_conn_close_socket(c); return -1; }
    return py_plugin_put(c, a, res, out) < 0 ? -1 : 1;
}

/* Can the plugin prove the server's certificate by the password (zero-configuration TLS)? */
static int plugin_proves(mc_conn *c, const char *pl) {
    if (!strcmp(pl, "mysql_native_password")) return 1;
    PyObject *fn = c->auth_plugins ? PyDict_GetItemString(c->auth_plugins, pl) : NULL;
    if (!fn) return 0;
    PyObject *v = PyObject_GetAttrString(fn, "hashes_password");
    if (!v) { PyErr_Clear(); return 0; }
    int t = PyObject_IsTrue(v);
    Py_DECREF(v);
    if (t < 0) { PyErr_Clear(); return 0; }
    return t;
}

/* While the certificate awaits the proof, every plugin must be able to give it and the
   password must not be empty (Connector/C: password_and_hashing).  0 or -1 (closed). */
static int check_plugin_can_prove(mc_conn *c, const char *pl, span pw) {
    if (!c->tls.deferred) return 0;
    const char *why = pw.len == 0 ? "an empty password cannot prove it" :
                      !plugin_proves(c, pl) ? "the authentication plugin cannot prove it" : NULL;
    if (!why) return 0;
    mc_conn_fatal(c, c->st->OperationalError, CR_SSL_CONNECTION_ERROR,
                  "SSL connection error: certificate verify failed: %s (TLS certificate could "
                  "not be verified: %s, plugin '%s'; give ssl_ca or ssl_fingerprint)",
                  c->tls.reason, why, pl);
    return -1;
}

/* The first response for a.plugin (after the handshake or an AuthSwitchRequest), into out. */
int mc_auth_first(mc_conn *c, auth_state *a, span pw, mc_writer *out) {
    const char *pl = a->plugin;
    out->len = 0;
    if (!strcmp(pl, "mysql_native_password")) {
        unsigned char r[20];
        if (pw.len == 0) return 0;
        if (a->nonce_len < 20) { mc_conn_malformed(c, "authentication nonce shorter than 20 bytes"); return -1; }
        if (mc_auth_native(pw.data, pw.len, a->nonce, 20, r) < 0) return -1;
        return mc_writer_put(out, r, 20);
    }
    if (!strcmp(pl, "caching_sha2_password")) {
        unsigned char r[32];
        if (pw.len == 0) return 0;
        if (a->nonce_len < 20) { mc_conn_malformed(c, "authentication nonce shorter than 20 bytes"); return -1; }
        if (mc_auth_caching_sha2(pw.data, pw.len, a->nonce, 20, r) < 0) return -1;
        return mc_writer_put(out, r, 32);
    }
    if (!strcmp(pl, "sha256_password")) {
        if (pw.len == 0) return mc_writer_u8(out, 0);
        if (mc_secure_transport(c)) return put_clear_password(out, pw);
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
        if (!mc_secure_transport(c) && !c->allow_cleartext) {
            mc_conn_fatal(c, c->st->OperationalError, CR_AUTH_PLUGIN_CANNOT_LOAD,
                       "Authentication plugin 'mysql_clear_password' refused: it would send the "
                       "password in clear text over an unencrypted connection (use TLS or a unix "
                       "socket, or pass enable_cleartext_plugin=True)");
            return -1;
        }
        return put_clear_password(out, pw);
    }
    /* plugins implemented in Python (client_ed25519, parsec), registered by the DB-API
       layer: the contract is in the "Python plugins" comment above */
    PyObject *fn = c->auth_plugins ? PyDict_GetItemString(c->auth_plugins, pl) : NULL;
    if (fn) {
        Py_CLEAR(a->pyx);
        PyObject *res = PyObject_CallFunction(fn, "y#y#", (const char *)pw.data, (Py_ssize_t)pw.len,
                                              (const char *)a->nonce, (Py_ssize_t)a->nonce_raw_len);
        if (!res) { mc_conn_close_socket(c); return -1; }
        if (PyBytes_Check(res)) return py_plugin_put(c, a, res, out);
        a->pyx = res;   /* an exchange object: its `response` now, `more()` later */
        PyObject *first = PyObject_GetAttrString(res, "response");
        if (!first) { mc_conn_close_socket(c); return -1; }
        return py_plugin_put(c, a, first, out);
    }
    mc_conn_fatal(c, c->st->OperationalError, CR_AUTH_PLUGIN_CANNOT_LOAD,
               "Authentication plugin '%s' cannot be loaded: not supported by mysqlc", pl);
    return -1;
}

/* AuthMoreData (0x01 + data).  Returns 1 with a response in out, 0 when nothing is to be
   sent (keep reading), -1 on error. */
static int auth_more(mc_conn *c, auth_state *a, span pw, const unsigned char *d, size_t n,
                     mc_writer *out) {
    out->len = 0;
    if (a->pyx) {
        int m = py_plugin_more(c, a, d, n, out);
        if (m != 0) return m;
    }
    int is_pem = n > 10 && !memcmp(d, "-----BEGIN", 10);
    if (a->pubkey_requested && is_pem) {
        a->pubkey_requested = 0;
        if (put_rsa_password(c, a, pw, d, n, out) < 0) return -1;
        return 1;
    }
    if (!strcmp(a->plugin, "caching_sha2_password") && n == 1) {
        if (d[0] == 3) return 0;   /* fast authentication succeeded; OK follows */
        if (d[0] == 4) {           /* full authentication */
            if (mc_secure_transport(c)) {
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
    mc_conn_malformed(c, "unexpected AuthMoreData from the server");
    return -1;
}


int mc_put_attrs(mc_writer *w, PyObject *attrs) {
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

const char *mc_ssl_mode_name(int m) {
    static const char *names[] = {"DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY"};
    return (m >= 0 && m <= 4) ? names[m] : "?";
}

/* One packet of the authentication exchange after the HandshakeResponse41 or
   COM_CHANGE_USER: OK, ERR, AuthSwitchRequest (0xFE) or AuthMoreData (0x01).  A response
   is framed into c->out.  0 with the OK parsed (done), 1 to read the next packet, -1 with
   the exception (ERR: the server's error, the connection left open for the caller to
   decide; anything malformed: the connection closed). */
static int auth_packet(mc_conn *c, auth_state *a, span password, mc_writer *authout,
                       const unsigned char *p, size_t n) {
    mc_reader r;
    if (++a->rounds > 16) { mc_conn_malformed(c, "too many authentication round trips"); return -1; }
    if (n == 0) { mc_conn_malformed(c, "empty authentication reply"); return -1; }
    if (p[0] == 0x00) return mc_parse_ok(c, p, n);
    if (p[0] == 0xFF) {
        mc_raise_err_packet(c, p, n);
        return -1;
    }
    if (p[0] == 0xFE) {
        if (n == 1) {   /* old AuthSwitchRequest: mysql_old_password */
            mc_conn_fatal(c, c->st->OperationalError, CR_AUTH_PLUGIN_CANNOT_LOAD,
                          "Server requested the insecure pre-4.1 password authentication");
            return -1;
        }
        const unsigned char *pn, *data;
        size_t pn_n, data_n;
        mc_reader_init(&r, p + 1, n - 1);
        if (mc_reader_nulstr(&r, &pn, &pn_n) < 0) { mc_conn_malformed(c, "bad AuthSwitchRequest"); return -1; }
        data = r.p;
        size_t raw_n = mc_reader_left(&r);
        data_n = raw_n;
        while (data_n > 0 && data[data_n - 1] == 0) data_n--;
        if (pn_n == 0 || pn_n >= sizeof(a->plugin)) { mc_conn_malformed(c, "bad plugin name"); return -1; }
        memcpy(a->plugin, pn, pn_n);
        a->plugin[pn_n] = 0;
        if (raw_n > sizeof(a->nonce)) raw_n = sizeof(a->nonce);
        if (data_n > raw_n) data_n = raw_n;
        memcpy(a->nonce, data, raw_n);
        a->nonce_len = data_n;
        a->nonce_raw_len = raw_n;
        a->pubkey_requested = 0;
        Py_CLEAR(a->pyx);
        /* the plugins that take a new 20-byte scramble replace Connector/C's scramble_buff */
        if ((!strcmp(a->plugin, "mysql_native_password") || !strcmp(a->plugin, "caching_sha2_password")) &&
            data_n >= 20)
            memcpy(a->scramble20, a->nonce, 20);
        if (check_plugin_can_prove(c, a->plugin, password) < 0) return -1;
        if (mc_auth_first(c, a, password, authout) < 0) return -1;
        if (mc_conn_send(c, authout->buf, authout->len, NULL, 0) < 0) return -1;
        return 1;
    }
    if (p[0] == 0x01) {
        int m = auth_more(c, a, password, p + 1, n - 1, authout);
        if (m < 0) return -1;
        if (m == 1 && mc_conn_send(c, authout->buf, authout->len, NULL, 0) < 0) return -1;
        return 1;
    }
    /* MariaDB prefixes a plugin's packet with 0x01 only when it begins with 0x00, 0x01,
       0xFE or 0xFF (server_mpvio_write_packet): parsec's ext-salt comes as it is */
    if (a->pyx) {
        int m = py_plugin_more(c, a, p, n, authout);
        if (m < 0) return -1;
        if (m == 1) {
            if (mc_conn_send(c, authout->buf, authout->len, NULL, 0) < 0) return -1;
            return 1;
        }
    }
    mc_conn_malformed(c, "unexpected authentication reply");
    return -1;
}

/* The authentication exchange (auth_packet) until OK: 0, MC_NEED (no transport; call
   again after feeding), or -1 as auth_packet. */
int mc_auth_exchange(mc_conn *c, auth_state *a, span password, mc_writer *authout) {
    const unsigned char *p;
    size_t n;
    for (;;) {
        int r = mc_read_packet(c, &p, &n);
        if (r < 0) return r;
        r = auth_packet(c, a, password, authout, p, n);
        if (r <= 0) return r;
    }
}

/* HS_GREETING: the server's first packet (Protocol::HandshakeV10, or an ERR such as too
   many connections), capabilities, and then the SSLRequest (returns MC_HS_TLS) or the
   HandshakeResponse41 (continues with HS_AUTH). */
static int hs_response(mc_conn *c, mc_handshake *h);

static int hs_greeting(mc_conn *c, mc_handshake *h) {
    const unsigned char *p;
    size_t n;
    mc_reader r;
    const connect_opts *o = h->o;
    auth_state *ap = &h->a;
    memset(&c->tls, 0, sizeof(c->tls));
    /* libmysqlclient's words for a greeting that never comes */
    c->lost_at = "at 'reading initial communication packet'";
    int got = mc_read_packet(c, &p, &n);
    c->lost_at = NULL;
    if (got < 0) return got;
    if (n == 0) { mc_conn_malformed(c, "empty handshake"); return -1; }
    if (p[0] == 0xFF) {    /* e.g. too many connections, host blocked */
        mc_raise_err_packet(c, p, n);
        mc_conn_close_socket(c);
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
        mc_conn_fatal(c, c->st->OperationalError, CR_SERVER_HANDSHAKE_ERR,
                   "Unsupported handshake protocol version %d (expected 10)", (int)proto);
        return -1;
    }
    if (mc_reader_nulstr(&r, &ver, &ver_n) < 0 || mc_reader_u32(&r, &thread_id) < 0 ||
        mc_reader_bytes(&r, 8, &part1) < 0 || mc_reader_u8(&r, &filler) < 0 ||
        mc_reader_u16(&r, &cap_lo) < 0) {
        mc_conn_malformed(c, "short handshake");
        return -1;
    }
    uint32_t caps = cap_lo;
    uint32_t srv_ext = 0;
    if (mc_reader_left(&r) > 0) {
        const unsigned char *reserved;
        if (mc_reader_u8(&r, &charset) < 0 || mc_reader_u16(&r, &status) < 0 ||
            mc_reader_u16(&r, &cap_hi) < 0 || mc_reader_u8(&r, &authlen) < 0 ||
            mc_reader_bytes(&r, 10, &reserved) < 0) {
            mc_conn_malformed(c, "short handshake");
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
    c->abandon_called = 0;   /* a new stream: on_abandon may be called again */
    c->server_caps = caps;
    c->server_collation = charset;
    c->server_status = status;
    Py_XSETREF(c->server_version, PyUnicode_DecodeUTF8((const char *)ver, (Py_ssize_t)ver_n, "replace"));
    if (!c->server_version) return -1;
    if (!(caps & CLIENT_PROTOCOL_41)) {
        mc_conn_fatal(c, c->st->OperationalError, CR_SERVER_HANDSHAKE_ERR,
                   "Server does not support the 4.1 protocol (CLIENT_PROTOCOL_41)");
        return -1;
    }
    memcpy(ap->nonce, part1, 8);
    ap->nonce_len = 8;
    if (part2_n) {
        if (part2_n > sizeof(ap->nonce) - 8) part2_n = sizeof(ap->nonce) - 8;
        memcpy(ap->nonce + 8, part2, part2_n);
        ap->nonce_len += part2_n;
    }
    ap->nonce_raw_len = ap->nonce_len;
    memset(ap->scramble20, 0, sizeof(ap->scramble20));
    memcpy(ap->scramble20, ap->nonce, ap->nonce_len < 20 ? ap->nonce_len : 20);
    strcpy(ap->plugin, "mysql_native_password");
    if (plugin && plugin_n > 0 && plugin_n < sizeof(ap->plugin)) {
        char srv[64];
        memcpy(srv, plugin, plugin_n);
        srv[plugin_n] = 0;
        /* answer with the server's default plugin when we implement it in C */
        if (plugin_known(srv) && strcmp(srv, "mysql_clear_password") != 0) strcpy(ap->plugin, srv);
    }
    /* COM_CHANGE_USER answers the handshake's scramble with the same first plugin */
    memcpy(c->scramble, ap->nonce, ap->nonce_len);
    c->scramble_len = ap->nonce_len;
    memcpy(c->first_plugin, ap->plugin, sizeof(ap->plugin));
    c->handshake_collation = (uint8_t)(o->collation & 0xFF);
    Py_XSETREF(c->connect_attrs, o->attrs ? Py_NewRef(o->attrs) : NULL);

    uint32_t want = CLIENT_LONG_PASSWORD | CLIENT_LONG_FLAG | CLIENT_PROTOCOL_41 |
                    CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH |
                    CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | CLIENT_TRANSACTIONS |
                    CLIENT_MULTI_RESULTS | CLIENT_PS_MULTI_RESULTS | CLIENT_DEPRECATE_EOF |
                    (o->extra_flags & (CLIENT_FOUND_ROWS | CLIENT_MULTI_STATEMENTS |
                                       CLIENT_IGNORE_SPACE | CLIENT_INTERACTIVE |
                                       CLIENT_NO_SCHEMA | CLIENT_ODBC | CLIENT_LOCAL_FILES));
    if (h->database.data) want |= CLIENT_CONNECT_WITH_DB;
    if (o->want_compress) want |= CLIENT_COMPRESS;
    if (o->attrs) want |= CLIENT_CONNECT_ATTRS;
    /* session state changes in OK packets (MySQL 5.7+, MariaDB 10.2+); query attributes
       in COM_QUERY / COM_STMT_EXECUTE (MySQL 8.0.23+): taken whenever offered (the
       first unless connect(session_track=False)) */
    if (!o->no_session_track) want |= CLIENT_SESSION_TRACK;
    want |= CLIENT_QUERY_ATTRIBUTES;
    uint32_t flags = want & caps;
    {   /* the session starts in the database of the handshake */
        PyObject *db = h->database.data ? PyUnicode_DecodeUTF8(
            (const char *)h->database.data, (Py_ssize_t)h->database.len, "replace") : NULL;
        if (h->database.data && !db) return -1;
        mc_track_reset(c, db);
        Py_XDECREF(db);
    }

    /* TLS: never send credentials in the clear when TLS is required */
    int use_tls = 0;
    if (o->tls.mode >= MC_SSL_REQUIRED) {
        if (!(caps & CLIENT_SSL)) {
            mc_conn_fatal(c, c->st->OperationalError, CR_SSL_CONNECTION_ERROR,
                       "SSL connection error: the server does not support TLS, but "
                       "ssl_mode=%s requires it", mc_ssl_mode_name(o->tls.mode));
            return -1;
        }
        use_tls = 1;
    } else if (o->tls.mode == MC_SSL_PREFERRED && (caps & CLIENT_SSL) && !c->secure) {
        use_tls = 1;
    }
    memset(h->zeros, 0, sizeof(h->zeros));
    /* MariaDB extended capabilities go in the last 4 filler bytes, of the SSLRequest too
       (the server takes them from the first packet it reads) */
    c->ext_caps = srv_ext & (MARIADB_CLIENT_STMT_BULK_OPERATIONS | MARIADB_CLIENT_CACHE_METADATA);
    h->zeros[19] = (unsigned char)c->ext_caps;
    h->zeros[20] = (unsigned char)(c->ext_caps >> 8);
    h->zeros[21] = (unsigned char)(c->ext_caps >> 16);
    h->zeros[22] = (unsigned char)(c->ext_caps >> 24);
    if (use_tls) {
        mc_writer *w = &c->wbuf;
        flags |= CLIENT_SSL;
        w->len = 0;
        if (mc_writer_u32(w, flags) < 0 || mc_writer_u32(w, 0x01000000u) < 0 ||
            mc_writer_u8(w, (uint8_t)(o->collation & 0xFF)) < 0 || mc_writer_put(w, h->zeros, 23) < 0)
            return -1;
        if (mc_conn_send(c, w->buf, w->len, NULL, 0) < 0) return -1;   /* SSLRequest */
        c->client_flag = flags;
        h->step = HS_TLS;
        return MC_HS_TLS;
    }
    c->client_flag = flags;
    return hs_response(c, h);
}

/* The HandshakeResponse41 (after the greeting, or after the TLS upgrade), framed into
   c->out; the exchange continues with HS_AUTH.  0 or -1. */
static int hs_response(mc_conn *c, mc_handshake *h) {
    const connect_opts *o = h->o;
    uint32_t flags = c->client_flag;
    mc_writer *w = &c->wbuf;
    if (check_plugin_can_prove(c, h->a.plugin, h->password) < 0) return -1;
    if (mc_auth_first(c, &h->a, h->password, &h->authout) < 0) return -1;
    w->len = 0;
    if (mc_writer_u32(w, flags) < 0 || mc_writer_u32(w, 0x01000000u) < 0 ||
        mc_writer_u8(w, (uint8_t)(o->collation & 0xFF)) < 0 || mc_writer_put(w, h->zeros, 23) < 0 ||
        mc_writer_put(w, h->user.data, h->user.len) < 0 || mc_writer_u8(w, 0) < 0)
        return -1;
    if (flags & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA) {
        if (mc_writer_lenenc_str(w, h->authout.buf, h->authout.len) < 0) return -1;
    } else {
        if (h->authout.len > 255) { mc_conn_malformed(c, "authentication response too long"); return -1; }
        if (mc_writer_u8(w, (uint8_t)h->authout.len) < 0 ||
            mc_writer_put(w, h->authout.buf, h->authout.len) < 0)
            return -1;
    }
    if (flags & CLIENT_CONNECT_WITH_DB) {
        if (mc_writer_put(w, h->database.data, h->database.len) < 0 || mc_writer_u8(w, 0) < 0)
            return -1;
    }
    if (flags & CLIENT_PLUGIN_AUTH) {
        if (mc_writer_put(w, h->a.plugin, strlen(h->a.plugin)) < 0 || mc_writer_u8(w, 0) < 0)
            return -1;
    }
    if ((flags & CLIENT_CONNECT_ATTRS) && o->attrs) {
        if (mc_put_attrs(w, o->attrs) < 0) return -1;
    }
    int r = mc_conn_send(c, w->buf, w->len, NULL, 0);
    memset(w->buf, 0, w->len);   /* it held the password's proof */
    if (r < 0) return -1;
    h->step = HS_AUTH;
    return 0;
}

int mc_handshake_init(mc_handshake *h, span user, span password, span database,
                      const connect_opts *o) {
    memset(h, 0, sizeof(*h));
    h->step = HS_GREETING;
    h->user = user;
    h->password = password;
    h->database = database;
    h->o = o;
    return mc_writer_init(&h->authout, 64);
}

void mc_handshake_clear(mc_handshake *h) {
    Py_CLEAR(h->a.pyx);
    if (h->authout.buf) memset(h->authout.buf, 0, h->authout.cap);
    mc_writer_free(&h->authout);
    memset(&h->a, 0, sizeof(h->a));
}

/* Connector/C's hash_password_bin for the plugin that logged in: 1 with the hash in out
   (*len bytes), 0 when it has none, -1 with an exception. */
static int password_hash_bin(mc_conn *c, auth_state *a, span pw, unsigned char *out, size_t *len) {
    if (pw.len == 0) return 0;
    if (!strcmp(a->plugin, "mysql_native_password")) {   /* SHA1(SHA1(password)) */
        unsigned char h1[20];
        unsigned int l1 = 0, l2 = 0;
        if (EVP_Digest(pw.data, pw.len, h1, &l1, EVP_sha1(), NULL) != 1 ||
            EVP_Digest(h1, 20, out, &l2, EVP_sha1(), NULL) != 1) {
            ERR_clear_error();
            return 0;
        }
        memset(h1, 0, sizeof(h1));
        *len = 20;
        return 1;
    }
    if (!a->pyx) return 0;
    PyObject *fn = PyObject_GetAttrString(a->pyx, "password_hash");
    if (!fn) { PyErr_Clear(); return 0; }
    PyObject *res = PyObject_CallNoArgs(fn);
    Py_DECREF(fn);
    if (!res) return -1;
    int r = 0;
    if (PyBytes_Check(res) && PyBytes_GET_SIZE(res) > 0 && (size_t)PyBytes_GET_SIZE(res) <= *len) {
        *len = (size_t)PyBytes_GET_SIZE(res);
        memcpy(out, PyBytes_AS_STRING(res), *len);
        r = 1;
    } else if (res != Py_None) {
        PyErr_Format(PyExc_TypeError, "authentication plugin '%s': password_hash() must return "
                     "bytes (1..%zu) or None", a->plugin, *len);
        r = -1;
    }
    Py_DECREF(res);
    return r;
}

/* Zero-configuration TLS (MariaDB 11.4+, MDEV-31855): over TLS the server's final OK may
   carry, as its info, 0x01 + hex(SHA256(hash_password_bin || scramble20 ||
   SHA256(certificate DER))) (Connector/C 3.4, my_auth.c run_plugin_auth).  A match proves
   that the peer knows the account's password hash and uses this certificate: verified by
   'password'.  A certificate awaiting the proof (VERIFY_CA / VERIFY_IDENTITY without a CA)
   fails without a matching proof; otherwise no proof leaves the connection unverified.
   The proof is removed from the info (also when a CA or ssl_fingerprint verified).  0, or -1 with the connection closed. */
static int tls_password_proof(mc_conn *c, mc_handshake *h) {
    const char *hexsig = NULL;
    Py_ssize_t hexlen = 0;
    PyObject *info = c->info ? Py_NewRef(c->info) : NULL;
    if (info) {
        const char *s = PyUnicode_AsUTF8AndSize(info, &hexlen);
        if (!s) { Py_DECREF(info); mc_conn_close_socket(c); return -1; }
        if (hexlen > 0 && s[0] == '\x01') {
            hexsig = s + 1;
            hexlen--;
            Py_CLEAR(c->info);   /* no need to show the caller the proof */
        }
    }
    int match = 0;
    if (c->tls.verified_by) {   /* already verified (CA, fingerprint): only strip the proof */
        Py_XDECREF(info);
        return 0;
    }
    if (hexsig && c->tls.have_fp) {
        unsigned char hb[1024], digest[32];
        size_t hl = sizeof(hb);
        int have = password_hash_bin(c, &h->a, h->password, hb, &hl);
        if (have < 0) { Py_XDECREF(info); mc_conn_close_socket(c); return -1; }
        if (have) {
            EVP_MD_CTX *md = EVP_MD_CTX_new();
            unsigned int dl = 0;
            int ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 &&
                     EVP_DigestUpdate(md, hb, hl) == 1 &&
                     EVP_DigestUpdate(md, h->a.scramble20, 20) == 1 &&
                     EVP_DigestUpdate(md, c->tls.fp, 32) == 1 &&
                     EVP_DigestFinal_ex(md, digest, &dl) == 1 && dl == 32;
            EVP_MD_CTX_free(md);
            memset(hb, 0, sizeof(hb));
            if (!ok) ERR_clear_error();
            if (ok && hexlen == 64) {
                static const char hx[] = "0123456789ABCDEF";
                match = 1;
                for (int i = 0; i < 32 && match; i++) {
                    char hi = hexsig[2 * i], lo = hexsig[2 * i + 1];
                    if (hi >= 'a' && hi <= 'f') hi -= 32;
                    if (lo >= 'a' && lo <= 'f') lo -= 32;
                    if (hi != hx[digest[i] >> 4] || lo != hx[digest[i] & 15]) match = 0;
                }
            }
        }
    }
    Py_XDECREF(info);
    if (match) {
        c->tls.verified_by = "password";
        c->tls.deferred = 0;
        return 0;
    }
    if (!c->tls.deferred) return 0;   /* PREFERRED / REQUIRED: encrypted, unverified */
    if (hexsig)
        mc_conn_fatal(c, c->st->OperationalError, CR_SSL_CONNECTION_ERROR,
                      "SSL connection error: TLS certificate could not be verified: %s",
                       "the server's proof of the password does not match the certificate "
                      "(possible man in the middle)");
    else
        mc_conn_fatal(c, c->st->OperationalError, CR_SSL_CONNECTION_ERROR,
                      "SSL connection error: certificate verify failed: %s (TLS certificate "
                      "could not be verified: the server sent no proof of the password, which "
                      "MariaDB 11.4+ sends for password-based plugins; give ssl_ca or "
                      "ssl_fingerprint)", c->tls.reason);
    return -1;
}

/* Advance the connection phase as far as the received bytes allow.  Returns 0 when
   authenticated (c is ready for commands), MC_HS_TLS when the transport must upgrade to
   TLS now (the SSLRequest is in c->out: write it, run the TLS handshake, call again),
   MC_NEED (no transport: feed more bytes, call again), or -1 with the exception and the
   connection closed. */
int mc_handshake_step(mc_conn *c, mc_handshake *h) {
    int r;
    switch (h->step) {
    case HS_GREETING:
        c->seq = 0;
        r = hs_greeting(c, h);
        if (r != 0) return r;
        break;
    case HS_TLS:
        if (hs_response(c, h) < 0) return -1;
        break;
    case HS_AUTH:
        break;
    default:
        return 0;
    }
    r = mc_auth_exchange(c, &h->a, h->password, &h->authout);
    if (r == MC_NEED) return r;
    if (r < 0) {
        mc_conn_close_socket(c);   /* a refused login ends the connection */
        return -1;
    }
    if (MC_TLS_ON(c) && tls_password_proof(c, h) < 0) return -1;
    Py_XSETREF(c->auth_plugin_name, PyUnicode_FromString(h->a.plugin));
    if (!c->auth_plugin_name) return -1;
    c->state = ST_IDLE;
    h->step = HS_DONE;
    if (c->client_flag & CLIENT_COMPRESS) {
        c->compress = 1;   /* everything after the handshake is framed */
        c->cseq = 0;
        if (c->rpos != c->rend) { mc_conn_malformed(c, "unexpected bytes after authentication"); return -1; }
    }
    return 0;
}

#define COM_CHANGE_USER 0x11

/* COM_CHANGE_USER: logs in again as `user` (no NUL; `password` any bytes) on this
   connection with the whole authentication exchange of the handshake; `database` with
   data NULL for none (no NUL).  The first answer uses the handshake's scramble and plugin,
   and the server may switch to any plugin the handshake supports (C ones and the
   auth_plugins dict).  The handshake's collation and connection attributes are sent
   again.  The server resets the session: prepared statements (and the metadata cached
   for them) are gone, session variables return to their defaults.  0, or -1 with the
   server's error (e.g. OperationalError 1045) when the login is refused; MariaDB then
   keeps the previous session and the connection stays usable.  A malformed exchange
   closes the connection.  (The method change_user(): conn.c.) */
int mc_change_user(mc_conn *c, span su, span sp, span sd) {
    int ret = -1;
    mc_writer authout = {0}, w = {0};
    auth_state a;
    memset(&a, 0, sizeof(a));
    if (mc_check_idle(c) < 0) goto done;
    memcpy(a.plugin, c->first_plugin, sizeof(a.plugin));
    a.plugin[sizeof(a.plugin) - 1] = 0;
    if (!a.plugin[0]) strcpy(a.plugin, "mysql_native_password");
    memcpy(a.nonce, c->scramble, c->scramble_len);
    a.nonce_len = a.nonce_raw_len = c->scramble_len;
    if (mc_writer_init(&authout, 64) < 0 || mc_writer_init(&w, 256) < 0) goto done;
    if (mc_auth_first(c, &a, sp, &authout) < 0) goto done;
    /* COM_CHANGE_USER: user NUL, auth response (1-byte length with
       CLIENT_SECURE_CONNECTION), database NUL, character set, plugin name, attributes */
    if (mc_writer_put(&w, su.data, su.len) < 0 || mc_writer_u8(&w, 0) < 0) goto done;
    if (c->client_flag & CLIENT_SECURE_CONNECTION) {
        if (authout.len > 255) { mc_conn_malformed(c, "authentication response too long"); goto done; }
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
        mc_put_attrs(&w, c->connect_attrs) < 0)
        goto done;
    mc_clear_result(c);
    if (mc_conn_command(c, COM_CHANGE_USER, w.buf, w.len) < 0) goto done;
    /* whatever the outcome, the server has dropped this session's prepared statements
       when it accepted the command */
    if (c->meta_cache) PyDict_Clear(c->meta_cache);
    {   /* a new session: nothing tracked but its database */
        PyObject *db = sd.data ? PyUnicode_DecodeUTF8((const char *)sd.data, (Py_ssize_t)sd.len,
                                                      "replace") : NULL;
        if (sd.data && !db) goto done;
        mc_track_reset(c, db);
        Py_XDECREF(db);
    }
    if (mc_auth_exchange(c, &a, sp, &authout) < 0) {
        mc_track_reset(c, NULL);   /* MariaDB may keep the old session: unknown */
        goto done;
    }
    Py_XSETREF(c->auth_plugin_name, PyUnicode_FromString(a.plugin));
    if (!c->auth_plugin_name) goto done;
    c->state = ST_IDLE;
    ret = 0;
done:
    Py_CLEAR(a.pyx);
    if (authout.buf) memset(authout.buf, 0, authout.cap);
    if (w.buf) memset(w.buf, 0, w.cap);
    mc_writer_free(&authout);
    mc_writer_free(&w);
    return ret;
}
