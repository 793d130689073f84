/* TLS with OpenSSL: context set-up from the connection's ssl options, and the client
 * session (over memory BIOs: the engine carries its bytes, whatever the transport) for
 * the handshake after the MySQL SSLRequest packet (Protocol::SSLRequest).
 *
 * Verification follows MySQL's ssl_mode names:
 *   REQUIRED         encrypt, no certificate check
 *   VERIFY_CA        the chain must verify against ssl_ca / ssl_capath (or the
 *                    system's default trust store when neither is given)
 *   VERIFY_IDENTITY  VERIFY_CA plus the certificate must name the host (DNS name
 *                    or IP address, X509_check_host / X509_check_ip rules)
 * Failures raise OperationalError(2026, "SSL connection error: <OpenSSL's reason>").
 *
 * Two more ways to verify (MariaDB Connector/C 3.4's rules, ma_tls.c / my_auth.c):
 *   ssl_fingerprint  the SHA-256 digest of the peer certificate must be one of the given
 *                    ones; checked right after the handshake, before any credential is
 *                    sent; the chain and the host name are then not checked
 *   password proof   VERIFY_CA / VERIFY_IDENTITY without ssl_ca / ssl_capath: when the
 *                    chain is not trusted (self-signed, unknown issuer) the failure is
 *                    deferred (mc_tls_status.deferred) and session.c checks, after the
 *                    login, the hash MariaDB 11.4+ puts in the final OK (MDEV-31855);
 *                    expired or otherwise invalid certificates still fail here.
 */
#include "mysqlc.h"
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <arpa/inet.h>

/* Append OpenSSL's queued error reasons to buf (emptying the queue). */
void mc_tls_errors(char *buf, size_t cap) {
    unsigned long e;
    size_t used = strlen(buf);
    while ((e = ERR_get_error()) != 0) {
        char one[256];
        ERR_error_string_n(e, one, sizeof(one));
        if (used + 3 < cap) {
            int n = snprintf(buf + used, cap - used, "%s%s", used ? "; " : "", one);
            if (n > 0) used += (size_t)n;
            if (used >= cap) used = cap - 1;
        }
    }
}

static PyObject *tls_error(mc_state *st, const char *what) {
    char buf[1024];
    snprintf(buf, sizeof(buf), "%s", what);
    mc_tls_errors(buf, sizeof(buf));
    return mc_raise(st->OperationalError, CR_SSL_CONNECTION_ERROR, "SSL connection error: %s", buf);
}

SSL_CTX *mc_tls_context(mc_state *st, const mc_tls_opts *o) {
    ERR_clear_error();
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (!ctx) { tls_error(st, "cannot create an SSL context"); return NULL; }
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (SSL_CTX_set_min_proto_version(ctx, o->min_version ? o->min_version : TLS1_2_VERSION) != 1 ||
        (o->max_version && SSL_CTX_set_max_proto_version(ctx, o->max_version) != 1)) {
        tls_error(st, "unsupported TLS version bounds");
        goto error;
    }
    if (o->cipher && *o->cipher) {
        /* TLS 1.2 cipher list; TLS 1.3 suites are accepted in the same string */
        int ok12 = SSL_CTX_set_cipher_list(ctx, o->cipher);
        int ok13 = SSL_CTX_set_ciphersuites(ctx, o->cipher);
        ERR_clear_error();
        if (!ok12 && !ok13) {
            mc_raise(st->OperationalError, CR_SSL_CONNECTION_ERROR,
                     "SSL connection error: no usable cipher in '%s'", o->cipher);
            goto error;
        }
    }
    if (o->mode >= MC_SSL_VERIFY_CA) {
        if (o->ca || o->capath) {
            if (SSL_CTX_load_verify_locations(ctx, o->ca, o->capath) != 1) {
                char what[512];
                snprintf(what, sizeof(what), "cannot load CA certificates from '%s'",
                         o->ca ? o->ca : o->capath);
                tls_error(st, what);
                goto error;
            }
        } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
            tls_error(st, "cannot load the system's CA certificates");
            goto error;
        }
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    } else {
        SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
    }
    if (o->cert) {
        if (SSL_CTX_use_certificate_chain_file(ctx, o->cert) != 1) {
            char what[512];
            snprintf(what, sizeof(what), "cannot load the client certificate '%s'", o->cert);
            tls_error(st, what);
            goto error;
        }
        const char *key = o->key ? o->key : o->cert;
        if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
            char what[512];
            snprintf(what, sizeof(what), "cannot load the client key '%s'", key);
            tls_error(st, what);
            goto error;
        }
        if (SSL_CTX_check_private_key(ctx) != 1) {
            tls_error(st, "the client key does not match the client certificate");
            goto error;
        }
    } else if (o->key) {
        mc_raise(st->OperationalError, CR_SSL_CONNECTION_ERROR,
                 "SSL connection error: ssl key given without a certificate");
        goto error;
    }
    return ctx;
error:
    SSL_CTX_free(ctx);
    return NULL;
}

enum { POLICY_STRICT = 0, POLICY_DEFER, POLICY_FINGERPRINT };

/* Chain errors that only say no trusted CA vouches for the certificate. */
static int trust_error(int err) {
    return err == X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT ||
           err == X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN ||
           err == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY ||
           err == X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT ||
           err == X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE ||
           err == X509_V_ERR_CERT_UNTRUSTED;
}

static int verify_cb(int ok, X509_STORE_CTX *x) {
    if (ok) return 1;
    SSL *ssl = X509_STORE_CTX_get_ex_data(x, SSL_get_ex_data_X509_STORE_CTX_idx());
    mc_tls_status *s = ssl ? SSL_get_app_data(ssl) : NULL;
    if (!s) return 0;
    int err = X509_STORE_CTX_get_error(x);
    if (s->policy == POLICY_FINGERPRINT) return 1;   /* the pin decides after the handshake */
    if (s->policy == POLICY_DEFER) {
        if (trust_error(err)) {
            if (!s->deferred)
                snprintf(s->reason, sizeof(s->reason), "%s", X509_verify_cert_error_string(err));
            s->deferred = 1;
            return 1;
        }
        /* Connector/C checks no host name on a certificate the proof is to verify: the
           proof binds this very certificate to the account's password */
        if (s->deferred && (err == X509_V_ERR_HOSTNAME_MISMATCH || err == X509_V_ERR_IP_ADDRESS_MISMATCH))
            return 1;
    }
    return 0;
}

static void hex_fp(const unsigned char *fp, char *out) {
    static const char hx[] = "0123456789ABCDEF";
    for (int i = 0; i < 32; i++) {
        out[i * 3] = hx[fp[i] >> 4];
        out[i * 3 + 1] = hx[fp[i] & 15];
        out[i * 3 + 2] = i == 31 ? 0 : ':';
    }
}

/* A TLS client session over memory BIOs for the engine (framing.c feeds the server's
   bytes into its read BIO and takes what it writes from its write BIO, whatever the
   transport).  SNI is the host name (not for an IP address); VERIFY_IDENTITY checks the
   certificate's name or IP; with ssl_fingerprint, or VERIFY_* without a CA, the verify
   callback records into `out` instead of failing (see the top of this file).  `out` must
   outlive the handshake.  SSL* or NULL with an exception set. */
SSL *mc_tls_session(mc_state *st, SSL_CTX *ctx, const char *host, const mc_tls_opts *o,
                    mc_tls_status *out) {
    ERR_clear_error();
    memset(out, 0, sizeof(*out));
    out->mode = o->mode;
    SSL *ssl = SSL_new(ctx);
    if (!ssl) { tls_error(st, "cannot create an SSL session"); return NULL; }
    BIO *rbio = BIO_new(BIO_s_mem()), *wbio = BIO_new(BIO_s_mem());
    if (!rbio || !wbio) {
        BIO_free(rbio);
        BIO_free(wbio);
        tls_error(st, "cannot create the TLS buffers");
        goto error;
    }
    BIO_set_mem_eof_return(rbio, -1);   /* empty: "retry" (want read), not end of file */
    SSL_set_bio(ssl, rbio, wbio);       /* the session owns them now */
    SSL_set_connect_state(ssl);
    if (o->n_fingerprints) {
        out->policy = POLICY_FINGERPRINT;
        SSL_set_verify(ssl, SSL_VERIFY_PEER, verify_cb);
    } else if (o->mode >= MC_SSL_VERIFY_CA && !o->ca && !o->capath) {
        out->policy = POLICY_DEFER;
        SSL_set_verify(ssl, SSL_VERIFY_PEER, verify_cb);
    }
    SSL_set_app_data(ssl, out);
    unsigned char addr[16];
    int is_ip = host && (inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1);
    if (host && *host && !is_ip)
        SSL_set_tlsext_host_name(ssl, host);   /* SNI */
    if (o->mode >= MC_SSL_VERIFY_IDENTITY && !o->n_fingerprints) {
        if (!host || !*host) {
            mc_raise(st->OperationalError, CR_SSL_CONNECTION_ERROR,
                     "SSL connection error: VERIFY_IDENTITY needs a host name");
            goto error;
        }
        X509_VERIFY_PARAM *param = SSL_get0_param(ssl);
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(param, host)
                       : X509_VERIFY_PARAM_set1_host(param, host, 0);
        if (ok != 1) { tls_error(st, "cannot set the host name to verify"); goto error; }
    }
    return ssl;
error:
    SSL_set_app_data(ssl, NULL);
    SSL_free(ssl);
    return NULL;
}

/* After the TLS handshake succeeded: the peer certificate's SHA-256 fingerprint, the
   ssl_fingerprint check (before any credential is sent), and how the certificate was
   verified.  0, or -1 with OperationalError 2026 (the caller closes the stream). */
int mc_tls_session_done(mc_state *st, SSL *ssl, const mc_tls_opts *o, mc_tls_status *out) {
    X509 *cert = SSL_get_peer_certificate(ssl);
    unsigned int fl = 0;
    if (cert) {
        out->have_fp = X509_digest(cert, EVP_sha256(), out->fp, &fl) == 1 && fl == 32;
        X509_free(cert);
    }
    ERR_clear_error();
    out->policy = POLICY_STRICT;
    SSL_set_app_data(ssl, NULL);
    if (o->n_fingerprints) {
        int match = 0;
        for (size_t i = 0; out->have_fp && i < o->n_fingerprints; i++)
            if (!memcmp(o->fingerprints + 32 * i, out->fp, 32)) match = 1;
        if (!match) {
            char hx[97] = "(none)";
            if (out->have_fp) hex_fp(out->fp, hx);
            mc_raise(st->OperationalError, CR_SSL_CONNECTION_ERROR,
                     "SSL connection error: the server certificate's SHA-256 fingerprint "
                     "%s matches none of ssl_fingerprint", hx);
            return -1;
        }
        out->verified_by = "fingerprint";
    } else if (o->mode >= MC_SSL_VERIFY_CA && !out->deferred) {
        out->verified_by = "ca";
    }
    return 0;
}

/* The exception for a failed TLS handshake (SSL_connect gave `err`): the certificate's
   verification error when there is one, else OpenSSL's reasons.  NULL. */
PyObject *mc_tls_handshake_error(mc_state *st, SSL *ssl, int err) {
    long vr = SSL_get_verify_result(ssl);
    if (vr != X509_V_OK) {
        ERR_clear_error();
        return mc_raise(st->OperationalError, CR_SSL_CONNECTION_ERROR,
                        "SSL connection error: certificate verify failed: %s",
                        X509_verify_cert_error_string(vr));
    }
    if (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0)
        return mc_raise(st->OperationalError, CR_SSL_CONNECTION_ERROR,
                        "SSL connection error: the server closed the connection");
    return tls_error(st, "TLS handshake failed");
}

/* The TLS state of an established session, for the Python layer's tls_info(): None without
 * TLS (ssl NULL), else a dict
 *   version      SSL_get_version(), e.g. 'TLSv1.3'
 *   cipher       SSL_get_cipher_name(), e.g. 'TLS_AES_256_GCM_SHA384'
 *   verified     the server's certificate was verified (by one of the ways below)
 *   verified_by  'ca' (the chain, VERIFY_CA), 'ca+hostname' (the chain and the host name,
 *                VERIFY_IDENTITY), 'fingerprint' (ssl_fingerprint), 'password' (MariaDB
 *                11.4+'s proof in the final OK, MDEV-31855), or None (encrypted, unverified)
 * New reference, or NULL with an exception. */
PyObject *mc_tls_info(SSL *ssl, const mc_tls_status *st) {
    if (!ssl) Py_RETURN_NONE;
    return mc_tls_info_dict(SSL_get_version(ssl), SSL_get_cipher_name(ssl), st);
}

/* The dict of mc_tls_info() from the session's protocol version and cipher names (either
   TLS implementation: tls_py.c gives Python's SSLObject.version() / cipher()). */
PyObject *mc_tls_info_dict(const char *version, const char *cipher, const mc_tls_status *st) {
    const char *by = st->verified_by;
    if (by && !strcmp(by, "ca") && st->mode >= MC_SSL_VERIFY_IDENTITY) by = "ca+hostname";
    PyObject *vb = by ? PyUnicode_FromString(by) : Py_NewRef(Py_None);
    if (!vb) return NULL;
    return Py_BuildValue("{s:s,s:s,s:O,s:N}", "version", version ? version : "",
                         "cipher", cipher ? cipher : "",
                         "verified", by ? Py_True : Py_False, "verified_by", vb);
}
