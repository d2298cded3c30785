/* Fuzz target: the parsing of the messages of 'glcv stream' (tools/stream/stream_proto.h) on any
 * bytes - the server's view of a greeting as it arrives and its answer, with and without a token,
 * full or not; the viewer's view of HELLO, WELCOME and END; a server's view of requests. Checks
 * the properties the handshake rests on: nothing is accepted with a token unless the bytes carry
 * the token's MAC; an answer always is a well-formed WELCOME the viewer reads back to the same
 * status; a JOIN the viewer writes is one the server parses. Any input; abort() on a violation.
 * libFuzzer drives it (clang -fsanitize=fuzzer); ctest replays its corpus with fuzz_replay_main.c. */
#include "fuzz_replay.h"
#include "stream_proto.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t token[] = "fuzz-token-0123456789";
enum { TOKEN_BYTES = sizeof token - 1 };

static void require(int condition)
{
    if (!condition)
        abort();
}

static void server_side(const uint8_t *data, size_t size, const uint8_t *nonce_s)
{
    /* The bytes as they arrive: once a prefix is refused, every longer one is too. */
    int refused = 0;
    for (size_t n = 1; n <= size && n <= STREAM_JOIN_BYTES; n++) {
        int ok = stream_join_prefix_ok(data, n);
        require(!(refused && ok));
        refused = !ok;
    }
    for (int with_token = 0; with_token < 2; with_token++)
        for (int full = 0; full < 2; full++) {
            uint8_t welcome[STREAM_WELCOME_BYTES];
            char why[STREAM_WHY_BYTES];
            const uint8_t *t = with_token ? token : NULL;
            int status = stream_server_answer(data, size, t, TOKEN_BYTES, nonce_s, full, welcome, why);
            require(status >= -1 && status < STREAM_STATUS_COUNT);
            require(strlen(why) < STREAM_WHY_BYTES);
            if (status == -1) {
                require(refused || size < STREAM_JOIN_BYTES);
                continue;
            }
            require(size >= STREAM_JOIN_BYTES && !refused);
            require(status != STREAM_ACCEPTED || !full);
            if (status == STREAM_ACCEPTED && t) {
                uint8_t mac[STREAM_MAC_BYTES];
                require(stream_mac(t, TOKEN_BYTES, STREAM_ROLE_VIEWER, nonce_s, data + 16, mac) == 0);
                require(memcmp(mac, data + 48, STREAM_MAC_BYTES) == 0);
            }
            /* The answer reads back as what it says, for a viewer with the same token. */
            char why2[STREAM_WHY_BYTES];
            int rc = stream_viewer_check_welcome(welcome, sizeof welcome, t, TOKEN_BYTES, nonce_s, data + 16, why2);
            require((rc == 0) == (status == STREAM_ACCEPTED));
        }
}

static void viewer_side(const uint8_t *data, size_t size, const uint8_t *nonce_v)
{
    for (int with_token = 0; with_token < 2; with_token++) {
        const uint8_t *t = with_token ? token : NULL;
        uint8_t join[STREAM_JOIN_BYTES], nonce_s[STREAM_NONCE_BYTES], welcome[STREAM_WELCOME_BYTES];
        char why[STREAM_WHY_BYTES];
        int rc = stream_viewer_join(data, size, t, TOKEN_BYTES, nonce_v, join, nonce_s, why);
        require(rc >= -1 && rc <= 1);
        if (rc >= 0) {
            /* A server holding the same token (if the HELLO asked for one) accepts the JOIN. */
            int wants = (data[10] & 1) != 0;
            int status = stream_server_answer(join, sizeof join, wants ? token : NULL, TOKEN_BYTES, nonce_s, 0,
                                              welcome, why);
            require(status == (rc == 1 ? STREAM_TOKEN_REQUIRED : STREAM_ACCEPTED));
        }
        rc = stream_viewer_check_welcome(data, size, t, TOKEN_BYTES, nonce_v, nonce_v, why);
        require(rc == 0 || rc == -1);
        if (rc == 0 && t) {
            uint8_t mac[STREAM_MAC_BYTES];
            require(stream_mac(t, TOKEN_BYTES, STREAM_ROLE_SERVER, nonce_v, nonce_v, mac) == 0);
            require(memcmp(mac, data + 16, STREAM_MAC_BYTES) == 0);
        }
    }
    int reason = -1, type = 0;
    uint64_t frames = 0;
    char why[STREAM_WHY_BYTES];
    if (stream_end_parse(data, size, &reason, &frames, why) == 0)
        require(reason >= 0 && reason < STREAM_END_REASON_COUNT && stream_is_end(data, size));
    if (stream_request_parse(data, size, &type, why) == 0)
        require(type == STREAM_REQUEST_KEYFRAME || type == STREAM_REQUEST_BYE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t nonce_s[STREAM_NONCE_BYTES], nonce_v[STREAM_NONCE_BYTES];
    for (int i = 0; i < STREAM_NONCE_BYTES; i++) {
        nonce_s[i] = (uint8_t)i;
        nonce_v[i] = (uint8_t)(32 + i);
    }
    /* Copied, so that a read past `size` is caught by the sanitizers. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    server_side(copy, size, nonce_s);
    viewer_side(copy, size, nonce_v);
    free(copy);
    return 0;
}

/* The replay driver's hooks: the corpus is all this target needs, and it expects nothing more of
 * the runs than that none aborted. */
int fuzz_replay_seeds(void (*add)(const uint8_t *data, size_t size))
{
    (void)add;
    return 0;
}

int fuzz_replay_check(void)
{
    return 0;
}
