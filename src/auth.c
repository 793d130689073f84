/* Authentication plugins.  Crypto comes from OpenSSL's libcrypto.
 *
 * mysql_native_password (Protocol docs, "Native Authentication"):
 *   response = SHA1(password) XOR SHA1(scramble[0:20] + SHA1(SHA1(password)))
 */
#include "mysqlc.h"
#include <openssl/evp.h>

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
