/* TLS with OpenSSL: context set-up from the connection's ssl options and the client
 * handshake after the MySQL SSLRequest packet (Protocol::SSLRequest).
 *
 * Verification follows MySQL's ssl_mode names:
 *   REQUIRED         encrypt, no certificate check
 *   VERIFY_CA        the chain must verify against ssl_ca / ssl_capath (or the
 *                    system's default trust store when neither is given)
 *   VERIFY_IDENTITY  VERIFY_CA plus the certificate must name the host (DNS name
 *                    or IP address, X509_check_host / X509_check_ip rules)
 * Failures raise OperationalError(2026, "SSL connection error: <OpenSSL's reason>").
 */
#include "mysqlc.h"
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <arpa/inet.h>
#include <stdint.h>
#include <errno.h>
#include <poll.h>
#include <math.h>
#include <time.h>

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

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run the TLS client handshake on the (non-blocking) socket fd.  Returns SSL* or NULL
   with an exception set. */
SSL *mc_tls_handshake(mc_state *st, SSL_CTX *ctx, int fd, const char *host,
                      const mc_tls_opts *o, double timeout) {
    ERR_clear_error();
    SSL *ssl = SSL_new(ctx);
    if (!ssl) { tls_error(st, "cannot create an SSL session"); return NULL; }
    if (SSL_set_fd(ssl, fd) != 1) { tls_error(st, "SSL_set_fd failed"); goto error; }
    unsigned char addr[16];
    int is_ip = host && (inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1);
    if (host && *host && !is_ip)
        SSL_set_tlsext_host_name(ssl, host);   /* SNI */
    if (o->mode >= MC_SSL_VERIFY_IDENTITY) {
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
    /* what this handshake verifies, for mc_tls_info() (no other user of the app data) */
    SSL_set_app_data(ssl, (void *)(intptr_t)o->mode);
    double deadline = timeout >= 0 ? now_s() + timeout : -1;
    int rc, err = 0, sys_errno = 0, timed_out = 0;
    Py_BEGIN_ALLOW_THREADS
    for (;;) {
        rc = SSL_connect(ssl);
        if (rc == 1) break;
        err = SSL_get_error(ssl, rc);
        if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
            struct pollfd pfd = {fd, (short)(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), 0};
            double left = deadline < 0 ? -1 : deadline - now_s();
            if (deadline >= 0 && left <= 0) { timed_out = 1; break; }
            int pr = poll(&pfd, 1, left < 0 ? -1 : (int)ceil(left * 1000));
            if (pr == 0) { timed_out = 1; break; }
            if (pr < 0 && errno != EINTR) { sys_errno = errno; break; }
            continue;
        }
        if (err == SSL_ERROR_SYSCALL) sys_errno = errno;
        break;
    }
    Py_END_ALLOW_THREADS
    if (rc == 1) return ssl;
    if (timed_out) {
        mc_raise(st->OperationalError, CR_SSL_CONNECTION_ERROR,
                 "SSL connection error: TLS handshake timed out");
        goto error;
    }
    long vr = SSL_get_verify_result(ssl);
    if (vr != X509_V_OK) {
        ERR_clear_error();
        mc_raise(st->OperationalError, CR_SSL_CONNECTION_ERROR,
                 "SSL connection error: certificate verify failed: %s",
                 X509_verify_cert_error_string(vr));
        goto error;
    }
    if (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) {
        mc_raise(st->OperationalError, CR_SSL_CONNECTION_ERROR,
                 "SSL connection error: %s", sys_errno ? strerror(sys_errno)
                                                       : "the server closed the connection");
        goto error;
    }
    tls_error(st, "TLS handshake failed");
error:
    SSL_free(ssl);
    return NULL;
}

/* The TLS state of an established session, for the Python layer's tls_info(): None without
 * TLS (ssl NULL), else a dict
 *   version   SSL_get_version(), e.g. 'TLSv1.3'
 *   cipher    SSL_get_cipher_name(), e.g. 'TLS_AES_256_GCM_SHA384'
 *   verified  the handshake required the certificate chain to verify (VERIFY_CA or
 *             stricter) and it did (SSL_get_verify_result() == X509_V_OK)
 *   hostname  it also required the certificate to name the host (VERIFY_IDENTITY)
 * New reference, or NULL with an exception. */
PyObject *mc_tls_info(SSL *ssl) {
    if (!ssl) Py_RETURN_NONE;
    int mode = (int)(intptr_t)SSL_get_app_data(ssl);
    int verified = mode >= MC_SSL_VERIFY_CA && (SSL_get_verify_mode(ssl) & SSL_VERIFY_PEER) &&
                   SSL_get_verify_result(ssl) == X509_V_OK;
    const char *version = SSL_get_version(ssl);
    const char *cipher = SSL_get_cipher_name(ssl);
    return Py_BuildValue("{s:s,s:s,s:O,s:O}", "version", version ? version : "",
                         "cipher", cipher ? cipher : "",
                         "verified", verified ? Py_True : Py_False,
                         "hostname", (verified && mode >= MC_SSL_VERIFY_IDENTITY) ? Py_True
                                                                                 : Py_False);
}
