/* The messages of 'glcv stream'; see stream_proto.h and docs/STREAM.md. Integers are
 * little-endian, as in the packets' headers. */
#include "stream_proto.h"

#include "stream_crypto.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { FLAG_TOKEN = 1 }; /* HELLO: the server wants a token; JOIN: a MAC follows */

static const char label_viewer[] = "glcv-stream-1 viewer";
static const char label_server[] = "glcv-stream-1 server";

static void put16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static unsigned get16(const uint8_t *p)
{
    return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static int says(char why[STREAM_WHY_BYTES], const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, STREAM_WHY_BYTES, fmt, ap);
    va_end(ap);
    return -1;
}

static int zeros(const uint8_t *p, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        if (p[i])
            return 0;
    return 1;
}

/* The 16 bytes every handshake message starts with: magic, version, flags or status, 4 reserved. */
static void write_head(uint8_t *out, const char *magic, unsigned word)
{
    memcpy(out, magic, STREAM_MAGIC_BYTES);
    put16(out + 8, STREAM_VERSION);
    put16(out + 10, word);
    put32(out + 12, 0);
}

const char *stream_status_string(int status)
{
    static const char *const names[STREAM_STATUS_COUNT] = {
        [STREAM_ACCEPTED] = "accepted",
        [STREAM_TOKEN_REQUIRED] = "the server requires a token",
        [STREAM_TOKEN_WRONG] = "wrong token",
        [STREAM_VERSION_UNSUPPORTED] = "unsupported protocol version",
        [STREAM_SERVER_FULL] = "the server has no room for another viewer",
        [STREAM_MALFORMED] = "malformed greeting",
    };
    return status >= 0 && status < STREAM_STATUS_COUNT ? names[status] : "?";
}

const char *stream_end_reason_string(int reason)
{
    static const char *const names[STREAM_END_REASON_COUNT] = {
        [STREAM_END_FINISHED] = "the stream ended",
        [STREAM_END_INTERRUPTED] = "the server was stopped",
        [STREAM_END_FAILED] = "the server failed",
    };
    return reason >= 0 && reason < STREAM_END_REASON_COUNT ? names[reason] : "?";
}

int stream_mac(const uint8_t *token, size_t token_bytes, stream_role role, const uint8_t nonce_server[STREAM_NONCE_BYTES],
               const uint8_t nonce_viewer[STREAM_NONCE_BYTES], uint8_t mac[STREAM_MAC_BYTES])
{
    const char *label = role == STREAM_ROLE_SERVER ? label_server : label_viewer;
    const void *parts[3] = {label, nonce_server, nonce_viewer};
    const size_t sizes[3] = {strlen(label), STREAM_NONCE_BYTES, STREAM_NONCE_BYTES};
    return stream_hmac_sha256(token, token_bytes, parts, sizes, 3, mac);
}

/* ---- the server's side ---------------------------------------------------------------------- */

void stream_hello_write(uint8_t out[STREAM_HELLO_BYTES], int token_required,
                        const uint8_t nonce_server[STREAM_NONCE_BYTES])
{
    write_head(out, STREAM_HELLO_MAGIC, token_required ? FLAG_TOKEN : 0);
    memcpy(out + 16, nonce_server, STREAM_NONCE_BYTES);
}

int stream_join_prefix_ok(const uint8_t *data, size_t bytes)
{
    size_t n = bytes < STREAM_MAGIC_BYTES ? bytes : STREAM_MAGIC_BYTES;
    return memcmp(data, STREAM_JOIN_MAGIC, n) == 0;
}

static void write_welcome(uint8_t welcome[STREAM_WELCOME_BYTES], stream_status status, const uint8_t *mac)
{
    write_head(welcome, STREAM_WELCOME_MAGIC, (unsigned)status);
    if (mac)
        memcpy(welcome + 16, mac, STREAM_MAC_BYTES);
    else
        memset(welcome + 16, 0, STREAM_MAC_BYTES);
}

int stream_server_answer(const uint8_t *join, size_t bytes, const uint8_t *token, size_t token_bytes,
                         const uint8_t nonce_server[STREAM_NONCE_BYTES], int full,
                         uint8_t welcome[STREAM_WELCOME_BYTES], char why[STREAM_WHY_BYTES])
{
    why[0] = '\0';
    if (bytes < STREAM_JOIN_BYTES || memcmp(join, STREAM_JOIN_MAGIC, STREAM_MAGIC_BYTES) != 0)
        return says(why, "not a glcv stream viewer's greeting");
    stream_status status = STREAM_ACCEPTED;
    unsigned version = get16(join + 8), flags = get16(join + 10);
    const uint8_t *nonce_viewer = join + 16, *mac = join + 48;
    uint8_t expected[STREAM_MAC_BYTES];
    if (version != STREAM_VERSION) {
        status = STREAM_VERSION_UNSUPPORTED;
        snprintf(why, STREAM_WHY_BYTES, "protocol version %u (this server speaks %d)", version, STREAM_VERSION);
    } else if ((flags & ~(unsigned)FLAG_TOKEN) || get32(join + 12) != 0 ||
               (!(flags & FLAG_TOKEN) && !zeros(mac, STREAM_MAC_BYTES))) {
        status = STREAM_MALFORMED;
        snprintf(why, STREAM_WHY_BYTES, "malformed greeting (flags 0x%04x, reserved bytes not zero)", flags);
    } else if (token && !(flags & FLAG_TOKEN)) {
        status = STREAM_TOKEN_REQUIRED;
        snprintf(why, STREAM_WHY_BYTES, "no token (this server requires one)");
    } else if (token) {
        if (stream_mac(token, token_bytes, STREAM_ROLE_VIEWER, nonce_server, nonce_viewer, expected) != 0)
            return says(why, "cannot compute a MAC (libcrypto failed)");
        if (!stream_equal_secret(expected, mac, STREAM_MAC_BYTES)) {
            status = STREAM_TOKEN_WRONG;
            snprintf(why, STREAM_WHY_BYTES, "wrong token");
        }
    }
    if (status == STREAM_ACCEPTED && full) {
        status = STREAM_SERVER_FULL;
        snprintf(why, STREAM_WHY_BYTES, "no room for another viewer");
    }
    if (status == STREAM_ACCEPTED && token) {
        if (stream_mac(token, token_bytes, STREAM_ROLE_SERVER, nonce_server, nonce_viewer, expected) != 0)
            return says(why, "cannot compute a MAC (libcrypto failed)");
        write_welcome(welcome, status, expected);
    } else {
        write_welcome(welcome, status, NULL);
    }
    stream_wipe(expected, sizeof expected);
    return (int)status;
}

void stream_end_write(uint8_t out[STREAM_END_BYTES], stream_end_reason reason, uint64_t frames)
{
    memset(out, 0, STREAM_END_BYTES);
    write_head(out, STREAM_END_MAGIC, (unsigned)reason);
    put64(out + 16, frames);
}

int stream_request_parse(const uint8_t *data, size_t bytes, int *type, char why[STREAM_WHY_BYTES])
{
    why[0] = '\0';
    if (bytes < STREAM_REQUEST_BYTES || memcmp(data, STREAM_REQUEST_MAGIC, STREAM_MAGIC_BYTES) != 0)
        return says(why, "sent something that is not a request");
    uint32_t t = get32(data + 8);
    if (t != STREAM_REQUEST_KEYFRAME && t != STREAM_REQUEST_BYE)
        return says(why, "sent a request of unknown type %u", (unsigned)t);
    if (get32(data + 12) != 0)
        return says(why, "sent a request with nonzero reserved bytes");
    *type = (int)t;
    return 0;
}

/* ---- the viewer's side ---------------------------------------------------------------------- */

int stream_viewer_join(const uint8_t *hello, size_t bytes, const uint8_t *token, size_t token_bytes,
                       const uint8_t nonce_viewer[STREAM_NONCE_BYTES], uint8_t join[STREAM_JOIN_BYTES],
                       uint8_t nonce_server[STREAM_NONCE_BYTES], char why[STREAM_WHY_BYTES])
{
    why[0] = '\0';
    if (bytes < STREAM_HELLO_BYTES || memcmp(hello, STREAM_HELLO_MAGIC, STREAM_MAGIC_BYTES) != 0)
        return says(why, "not a glcv stream server (its first bytes are no greeting)");
    unsigned version = get16(hello + 8), flags = get16(hello + 10);
    if (version != STREAM_VERSION)
        return says(why, "the server speaks protocol version %u, this viewer %d", version, STREAM_VERSION);
    if ((flags & ~(unsigned)FLAG_TOKEN) || get32(hello + 12) != 0)
        return says(why, "the server's greeting is malformed (flags 0x%04x, reserved bytes not zero)", flags);
    int wants_token = (flags & FLAG_TOKEN) != 0;
    if (token && !wants_token)
        return says(why, "the server takes no token, so it cannot prove it holds yours: refused (leave --token "
                         "out to connect to it anyway)");
    memcpy(nonce_server, hello + 16, STREAM_NONCE_BYTES);
    write_head(join, STREAM_JOIN_MAGIC, token ? FLAG_TOKEN : 0);
    memcpy(join + 16, nonce_viewer, STREAM_NONCE_BYTES);
    if (!token)
        memset(join + 48, 0, STREAM_MAC_BYTES);
    else if (stream_mac(token, token_bytes, STREAM_ROLE_VIEWER, nonce_server, nonce_viewer, join + 48) != 0)
        return says(why, "cannot compute a MAC (libcrypto failed)");
    if (wants_token && !token) {
        says(why, "the server requires a token: give --token FILE");
        return 1;
    }
    return 0;
}

int stream_viewer_check_welcome(const uint8_t *welcome, size_t bytes, const uint8_t *token, size_t token_bytes,
                                const uint8_t nonce_server[STREAM_NONCE_BYTES],
                                const uint8_t nonce_viewer[STREAM_NONCE_BYTES], char why[STREAM_WHY_BYTES])
{
    why[0] = '\0';
    if (bytes < STREAM_WELCOME_BYTES || memcmp(welcome, STREAM_WELCOME_MAGIC, STREAM_MAGIC_BYTES) != 0)
        return says(why, "the server's answer to the greeting is malformed");
    unsigned version = get16(welcome + 8), status = get16(welcome + 10);
    if (version != STREAM_VERSION)
        return says(why, "the server answered in protocol version %u, this viewer speaks %d", version,
                    STREAM_VERSION);
    if (get32(welcome + 12) != 0)
        return says(why, "the server's answer has nonzero reserved bytes");
    if (status != STREAM_ACCEPTED)
        return says(why, "the server refused: %s", stream_status_string((int)status));
    if (!token)
        return zeros(welcome + 16, STREAM_MAC_BYTES) ? 0 : says(why, "the server's answer is malformed (a MAC "
                                                                     "where none was asked for)");
    uint8_t expected[STREAM_MAC_BYTES];
    if (stream_mac(token, token_bytes, STREAM_ROLE_SERVER, nonce_server, nonce_viewer, expected) != 0)
        return says(why, "cannot compute a MAC (libcrypto failed)");
    int ok = stream_equal_secret(expected, welcome + 16, STREAM_MAC_BYTES);
    stream_wipe(expected, sizeof expected);
    return ok ? 0 : says(why, "the server could not prove it holds the token (wrong MAC): refused");
}

void stream_request_write(uint8_t out[STREAM_REQUEST_BYTES], stream_request_type type)
{
    memcpy(out, STREAM_REQUEST_MAGIC, STREAM_MAGIC_BYTES);
    put32(out + 8, (uint32_t)type);
    put32(out + 12, 0);
}

int stream_is_end(const uint8_t *data, size_t bytes)
{
    return bytes >= STREAM_MAGIC_BYTES && memcmp(data, STREAM_END_MAGIC, STREAM_MAGIC_BYTES) == 0;
}

int stream_end_parse(const uint8_t *data, size_t bytes, int *reason, uint64_t *frames, char why[STREAM_WHY_BYTES])
{
    why[0] = '\0';
    if (bytes < STREAM_END_BYTES || !stream_is_end(data, bytes))
        return says(why, "not the end of a stream");
    unsigned version = get16(data + 8), r = get16(data + 10);
    if (version != STREAM_VERSION || r >= STREAM_END_REASON_COUNT || get32(data + 12) != 0 ||
        !zeros(data + 24, STREAM_END_BYTES - 24))
        return says(why, "a malformed end of stream (version %u, reason %u)", version, r);
    *reason = (int)r;
    *frames = get64(data + 16);
    return 0;
}

/* ---- the token -------------------------------------------------------------------------------- */

size_t stream_token_trim(const uint8_t *data, size_t bytes)
{
    while (bytes > 0 && (data[bytes - 1] == ' ' || data[bytes - 1] == '\t' || data[bytes - 1] == '\r' ||
                         data[bytes - 1] == '\n' || data[bytes - 1] == '\v' || data[bytes - 1] == '\f'))
        bytes--;
    return bytes;
}
