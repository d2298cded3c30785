/* SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the token handshake of 'glcv stream'.
 * Plain C, no state outside the structs; any thread may use its own contexts. Tested against the
 * FIPS 180-4 examples and the RFC 4231 vectors (tests/test_stream_proto.c). */
#ifndef GLCV_TOOLS_SHA256_H
#define GLCV_TOOLS_SHA256_H

#include <stddef.h>
#include <stdint.h>

enum { SHA256_BYTES = 32, SHA256_BLOCK_BYTES = 64 };

typedef struct sha256 {
    uint32_t h[8];
    uint64_t length; /* bytes hashed so far */
    uint8_t block[SHA256_BLOCK_BYTES];
    size_t used; /* bytes of `block` filled */
} sha256;

void sha256_init(sha256 *s);
void sha256_update(sha256 *s, const void *data, size_t bytes);
/* Writes the digest and wipes the context. */
void sha256_final(sha256 *s, uint8_t digest[SHA256_BYTES]);

/* SHA-256 of one buffer. */
void sha256_of(const void *data, size_t bytes, uint8_t digest[SHA256_BYTES]);

/* HMAC-SHA256 of the concatenation of `count` parts (parts[i] of sizes[i] bytes) under `key`
 * (any length: a key longer than a block is hashed first, as RFC 2104 says). */
void hmac_sha256(const uint8_t *key, size_t key_bytes, const void *const *parts, const size_t *sizes, int count,
                 uint8_t mac[SHA256_BYTES]);

/* 1 when the `bytes` bytes at a and b are equal, else 0; the time does not depend on where they
 * differ. */
int equal_in_constant_time(const uint8_t *a, const uint8_t *b, size_t bytes);

/* Overwrites `bytes` bytes with zeros in a way the compiler does not remove. */
void wipe(void *data, size_t bytes);

#endif
