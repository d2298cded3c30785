/* The cryptography of 'glcv stream', from OpenSSL's libcrypto; see stream_crypto.h. */
#include "stream_crypto.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <limits.h>
#include <string.h>

int stream_hmac_sha256(const uint8_t *key, size_t key_bytes, const void *const *parts, const size_t *sizes, int count,
                       uint8_t mac[STREAM_SHA256_BYTES])
{
    /* Fetched per call: a handshake computes two MACs, and this keeps the function free of state
     * (OpenSSL caches the fetch itself). */
    EVP_MAC *hmac = key && key_bytes > 0 ? EVP_MAC_fetch(NULL, "HMAC", NULL) : NULL;
    EVP_MAC_CTX *ctx = hmac ? EVP_MAC_CTX_new(hmac) : NULL;
    char digest[] = "SHA256";
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                           OSSL_PARAM_construct_end()};
    int ok = ctx && EVP_MAC_init(ctx, key, key_bytes, params) == 1;
    for (int i = 0; ok && i < count; i++)
        ok = EVP_MAC_update(ctx, parts[i], sizes[i]) == 1;
    size_t written = 0;
    ok = ok && EVP_MAC_final(ctx, mac, &written, STREAM_SHA256_BYTES) == 1 && written == STREAM_SHA256_BYTES;
    EVP_MAC_CTX_free(ctx);
    EVP_MAC_free(hmac);
    if (!ok)
        memset(mac, 0, STREAM_SHA256_BYTES);
    return ok ? 0 : -1;
}

int stream_equal_secret(const void *a, const void *b, size_t bytes)
{
    return CRYPTO_memcmp(a, b, bytes) == 0;
}

void stream_wipe(void *data, size_t bytes)
{
    OPENSSL_cleanse(data, bytes);
}

int stream_random(void *data, size_t bytes)
{
    uint8_t *p = data;
    while (bytes > 0) { /* RAND_bytes takes an int */
        int n = bytes > INT_MAX ? INT_MAX : (int)bytes;
        if (RAND_bytes(p, n) != 1)
            return -1;
        p += n;
        bytes -= (size_t)n;
    }
    return 0;
}
