/* The cryptography of 'glcv stream', from OpenSSL's libcrypto: HMAC-SHA256 (the token handshake's
 * MACs), a comparison whose time does not depend on where two MACs differ, wiping secrets, and
 * random nonces. A thin layer so that the protocol's code names what it needs once; no state of
 * its own, any thread. Tested against the RFC 4231 vectors (tests/test_stream_proto.c). */
#ifndef GLCV_TOOLS_STREAM_CRYPTO_H
#define GLCV_TOOLS_STREAM_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

enum { STREAM_SHA256_BYTES = 32 };

/* HMAC-SHA256 of the concatenation of `count` parts (parts[i] of sizes[i] bytes) under `key`
 * (1 byte or more; a key longer than a block is hashed first, as RFC 2104 says). 0, or -1 when
 * libcrypto fails (out of memory, no SHA-256 provider): `mac` is then all zeros and must not be
 * used, neither sent nor compared. */
int stream_hmac_sha256(const uint8_t *key, size_t key_bytes, const void *const *parts, const size_t *sizes, int count,
                       uint8_t mac[STREAM_SHA256_BYTES]);

/* 1 when the `bytes` bytes at a and b are equal, else 0; the time does not depend on where they
 * differ (CRYPTO_memcmp). */
int stream_equal_secret(const void *a, const void *b, size_t bytes);

/* Overwrites `bytes` bytes with zeros in a way the compiler does not remove (OPENSSL_cleanse). */
void stream_wipe(void *data, size_t bytes);

/* Fills `bytes` bytes with cryptographically strong random bytes (RAND_bytes, seeded by the
 * kernel). 0, or -1 when the generator cannot give them. */
int stream_random(void *data, size_t bytes);

#endif
