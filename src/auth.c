/* Authentication plugins.  Crypto comes from OpenSSL's libcrypto.
 *
 * mysql_native_password (Protocol docs, "Native Authentication"):
 *   response = SHA1(password) XOR SHA1(scramble[0:20] + SHA1(SHA1(password)))
 */
#define OPENSSL_API_COMPAT 0x10100000L  /* RSA_* for PKCS#1 "RSA PUBLIC KEY" PEM */
#include "mysqlc.h"
#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

static int sha1_parts(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen,
                      unsigned char out[20]) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned int olen = 0;
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha1(), NULL) == 1 &&
             EVP_DigestUpdate(ctx, a, alen) == 1 &&
             (blen == 0 || EVP_DigestUpdate(ctx, b, blen) == 1) &&
             EVP_DigestFinal_ex(ctx, out, &olen) == 1 && olen == 20;
    EVP_MD_CTX_free(ctx);
    if (!ok) {
        PyErr_SetString(PyExc_RuntimeError, "mysqlc: OpenSSL SHA1 failed");
        return -1;
    }
    return 0;
}

int mc_auth_native(const unsigned char *pw, size_t pwlen,
                   const unsigned char *scramble, size_t scrlen, unsigned char out[20]) {
    unsigned char h1[20], h2[20], h3[20];
    if (scrlen > 20) scrlen = 20;   /* the nonce is 20 bytes; a trailing NUL is not part of it */
    if (sha1_parts(pw, pwlen, NULL, 0, h1) < 0) return -1;
    if (sha1_parts(h1, 20, NULL, 0, h2) < 0) return -1;
    if (sha1_parts(scramble, scrlen, h2, 20, h3) < 0) return -1;
    for (int i = 0; i < 20; i++) out[i] = h1[i] ^ h3[i];
    return 0;
}

/* caching_sha2_password (MySQL 8 "SHA-2 Pluggable Authentication"), fast path:
 *   response = SHA256(password) XOR SHA256(SHA256(SHA256(password)) + nonce)
 */
static int sha256_parts(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen,
                        unsigned char out[32]) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned int olen = 0;
    int ok = ctx && EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) == 1 &&
             EVP_DigestUpdate(ctx, a, alen) == 1 &&
             (blen == 0 || EVP_DigestUpdate(ctx, b, blen) == 1) &&
             EVP_DigestFinal_ex(ctx, out, &olen) == 1 && olen == 32;
    EVP_MD_CTX_free(ctx);
    if (!ok) {
        PyErr_SetString(PyExc_RuntimeError, "mysqlc: OpenSSL SHA256 failed");
        return -1;
    }
    return 0;
}

int mc_auth_caching_sha2(const unsigned char *pw, size_t pwlen,
                         const unsigned char *nonce, size_t nlen, unsigned char out[32]) {
    unsigned char m1[32], m2[32], m3[32];
    if (nlen > 20) nlen = 20;
    if (sha256_parts(pw, pwlen, NULL, 0, m1) < 0) return -1;
    if (sha256_parts(m1, 32, NULL, 0, m2) < 0) return -1;
    if (sha256_parts(m2, 32, nonce, nlen, m3) < 0) return -1;
    for (int i = 0; i < 32; i++) out[i] = m1[i] ^ m3[i];
    return 0;
}

PyObject *mc_auth_rsa_encrypt(mc_state *st, const unsigned char *pem, size_t pemlen,
                              const unsigned char *pw, size_t pwlen,
                              const unsigned char *nonce, size_t nlen) {
    PyObject *ret = NULL;
    EVP_PKEY *pkey = NULL;
    EVP_PKEY_CTX *pctx = NULL;
    unsigned char *plain = NULL, *enc = NULL;
    size_t enclen = 0;
    ERR_clear_error();
    BIO *bio = BIO_new_mem_buf(pem, (int)pemlen);
    if (!bio) { PyErr_NoMemory(); return NULL; }
    pkey = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
    if (!pkey) {
        /* "BEGIN RSA PUBLIC KEY" (PKCS#1) form */
        (void)BIO_reset(bio);
        ERR_clear_error();
        RSA *rsa = PEM_read_bio_RSAPublicKey(bio, NULL, NULL, NULL);
        if (rsa) {
            pkey = EVP_PKEY_new();
            if (pkey && EVP_PKEY_assign_RSA(pkey, rsa) != 1) {
                EVP_PKEY_free(pkey);
                pkey = NULL;
                RSA_free(rsa);
            }
        }
    }
    BIO_free(bio);
    if (!pkey) {
        char buf[512] = "";
        mc_tls_errors(buf, sizeof(buf));
        return mc_raise(st->OperationalError, CR_AUTH_PLUGIN_ERR,
                        "cannot read the server's RSA public key: %s", buf);
    }
    plain = PyMem_Malloc(pwlen + 1);
    if (!plain) { PyErr_NoMemory(); goto done; }
    memcpy(plain, pw, pwlen);
    plain[pwlen] = 0;
    if (nlen) for (size_t i = 0; i <= pwlen; i++) plain[i] ^= nonce[i % nlen];
    pctx = EVP_PKEY_CTX_new(pkey, NULL);
    if (!pctx || EVP_PKEY_encrypt_init(pctx) != 1 ||
        EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_OAEP_PADDING) != 1 ||
        EVP_PKEY_encrypt(pctx, NULL, &enclen, plain, pwlen + 1) != 1) {
        char buf[512] = "";
        mc_tls_errors(buf, sizeof(buf));
        mc_raise(st->OperationalError, CR_AUTH_PLUGIN_ERR,
                 "RSA encryption of the password failed (password too long for the key?): %s", buf);
        goto done;
    }
    enc = PyMem_Malloc(enclen);
    if (!enc) { PyErr_NoMemory(); goto done; }
    if (EVP_PKEY_encrypt(pctx, enc, &enclen, plain, pwlen + 1) != 1) {
        char buf[512] = "";
        mc_tls_errors(buf, sizeof(buf));
        mc_raise(st->OperationalError, CR_AUTH_PLUGIN_ERR, "RSA encryption failed: %s", buf);
        goto done;
    }
    ret = PyBytes_FromStringAndSize((const char *)enc, (Py_ssize_t)enclen);
done:
    if (plain) { memset(plain, 0, pwlen + 1); PyMem_Free(plain); }
    PyMem_Free(enc);
    EVP_PKEY_CTX_free(pctx);
    EVP_PKEY_free(pkey);
    return ret;
}
