/* The messages of 'glcv stream' around the frame-delta packets: the handshake (HELLO, JOIN,
 * WELCOME), the viewer's requests and the server's END, byte by byte as docs/STREAM.md ("The
 * stream protocol") describes them. Building and parsing are pure functions of their bytes - no
 * sockets, no clocks, no allocation - so that the fuzz target tests/fuzz/fuzz_stream_handshake.c
 * drives them directly. The nonces come from the caller.
 *
 * A connection: the server sends HELLO (its nonce, whether it wants a token); the viewer answers
 * JOIN (its nonce and, with a token, its MAC); the server answers WELCOME (a status and, with a
 * token, its own MAC) and, when it accepted, delta packets and at last END; the viewer may send
 * requests (a keyframe, bye) at any time after WELCOME. MACs are HMAC-SHA256 under the shared
 * token of a role label and both nonces, so each side proves it holds the token without sending
 * it, and neither side's MAC serves as the other's. */
#ifndef GLCV_TOOLS_STREAM_PROTO_H
#define GLCV_TOOLS_STREAM_PROTO_H

#include <stddef.h>
#include <stdint.h>

enum {
    STREAM_VERSION = 1,
    STREAM_NONCE_BYTES = 32,
    STREAM_MAC_BYTES = 32,
    STREAM_HELLO_BYTES = 48,
    STREAM_JOIN_BYTES = 80,
    STREAM_WELCOME_BYTES = 48,
    STREAM_REQUEST_BYTES = 16,
    STREAM_END_BYTES = 64, /* as long as a packet header: the viewer reads 64 bytes, then decides */
    STREAM_MAGIC_BYTES = 8,
    STREAM_TOKEN_MIN_BYTES = 16,
    STREAM_TOKEN_MAX_BYTES = 4096,
    STREAM_WHY_BYTES = 160 /* room for the explanations below */
};

/* The magics (8 bytes on the wire, no terminator). */
#define STREAM_HELLO_MAGIC "GLCVHELO"
#define STREAM_JOIN_MAGIC "GLCVJOIN"
#define STREAM_WELCOME_MAGIC "GLCVWLCM"
#define STREAM_REQUEST_MAGIC "GLCVVREQ"
#define STREAM_END_MAGIC "GLCVSEND"
#define STREAM_PACKET_MAGIC "GLCVDLTA" /* a delta packet's header (glcv/delta.h) */

/* WELCOME's status. */
typedef enum stream_status {
    STREAM_ACCEPTED = 0,
    STREAM_TOKEN_REQUIRED = 1, /* the server wants a token and the viewer sent no MAC */
    STREAM_TOKEN_WRONG = 2,    /* the viewer's MAC is not the token's */
    STREAM_VERSION_UNSUPPORTED = 3,
    STREAM_SERVER_FULL = 4,
    STREAM_MALFORMED = 5, /* a JOIN with unknown flags or nonzero reserved bytes */
    STREAM_STATUS_COUNT
} stream_status;

/* A request's type (viewer to server). */
typedef enum stream_request_type {
    STREAM_REQUEST_KEYFRAME = 1, /* the viewer lost the stream: send a keyframe */
    STREAM_REQUEST_BYE = 2       /* the viewer leaves; the server closes the connection */
} stream_request_type;

/* END's reason. */
typedef enum stream_end_reason {
    STREAM_END_FINISHED = 0,    /* the source ended or the server served its --max-frames */
    STREAM_END_INTERRUPTED = 1, /* the server was stopped (Ctrl-C) */
    STREAM_END_FAILED = 2,      /* the server stopped on an error */
    STREAM_END_REASON_COUNT
} stream_end_reason;

/* Which side a MAC proves. */
typedef enum stream_role { STREAM_ROLE_VIEWER = 0, STREAM_ROLE_SERVER = 1 } stream_role;

/* "accepted", "token required", ...; "?" for unknown values. */
const char *stream_status_string(int status);
const char *stream_end_reason_string(int reason);

/* HMAC-SHA256(token, label(role) || server nonce || viewer nonce); labels "glcv-stream-1 viewer",
 * "glcv-stream-1 server". 0, or -1 when libcrypto fails (then `mac` must not be used). */
int stream_mac(const uint8_t *token, size_t token_bytes, stream_role role, const uint8_t nonce_server[STREAM_NONCE_BYTES],
               const uint8_t nonce_viewer[STREAM_NONCE_BYTES], uint8_t mac[STREAM_MAC_BYTES]);

/* ---- the server's side ---------------------------------------------------------------------- */

/* HELLO: the server's nonce, and whether it wants a token. */
void stream_hello_write(uint8_t out[STREAM_HELLO_BYTES], int token_required,
                        const uint8_t nonce_server[STREAM_NONCE_BYTES]);

/* Whether the `bytes` bytes received so far (fewer than a whole JOIN) can still start one: a
 * connection whose first bytes already differ from the magic is dropped at once. */
int stream_join_prefix_ok(const uint8_t *data, size_t bytes);

/* The server's answer to `bytes` bytes received as JOIN: checks the message and the viewer's MAC
 * (token NULL: the server takes no token, and ignores a MAC), writes WELCOME into `welcome` (with
 * the server's MAC when accepted with a token) and returns its status. Returns -1 when the bytes
 * are no JOIN at all (too short, another magic), or libcrypto failed: nothing to answer, drop the
 * connection. `full`:
 * the server has no room for another viewer (SERVER_FULL, after the token was checked). *why
 * gets the reason of a rejection for the server's log. */
int stream_server_answer(const uint8_t *join, size_t bytes, const uint8_t *token, size_t token_bytes,
                         const uint8_t nonce_server[STREAM_NONCE_BYTES], int full,
                         uint8_t welcome[STREAM_WELCOME_BYTES], char why[STREAM_WHY_BYTES]);

/* END, after the last packet. */
void stream_end_write(uint8_t out[STREAM_END_BYTES], stream_end_reason reason, uint64_t frames);

/* A viewer's request: 0 and *type, or -1 (not a request: a protocol violation; *why says how). */
int stream_request_parse(const uint8_t *data, size_t bytes, int *type, char why[STREAM_WHY_BYTES]);

/* ---- the viewer's side ---------------------------------------------------------------------- */

/* The viewer's answer to `bytes` bytes received as HELLO: checks it, and writes JOIN into `join`
 * (with the viewer's MAC when it has a token) and the server's nonce into `nonce_server`. Returns
 * 0, or -1 with *why: not a glcv stream server, another protocol version, a server that takes no
 * token while this viewer has one (it could not prove it holds the token: the viewer refuses it),
 * or libcrypto failed; or one that wants a token this viewer lacks (JOIN is still written, without
 * a MAC, so that the server can say so: the return value is then 1). */
int stream_viewer_join(const uint8_t *hello, size_t bytes, const uint8_t *token, size_t token_bytes,
                       const uint8_t nonce_viewer[STREAM_NONCE_BYTES], uint8_t join[STREAM_JOIN_BYTES],
                       uint8_t nonce_server[STREAM_NONCE_BYTES], char why[STREAM_WHY_BYTES]);

/* The viewer's check of `bytes` bytes received as WELCOME: 0 when the server accepted it and, with
 * a token, proved it holds the token; else -1 with *why (the server's status, a wrong server MAC,
 * not a WELCOME). */
int stream_viewer_check_welcome(const uint8_t *welcome, size_t bytes, const uint8_t *token, size_t token_bytes,
                                const uint8_t nonce_server[STREAM_NONCE_BYTES],
                                const uint8_t nonce_viewer[STREAM_NONCE_BYTES], char why[STREAM_WHY_BYTES]);

/* A request (KEYFRAME or BYE). */
void stream_request_write(uint8_t out[STREAM_REQUEST_BYTES], stream_request_type type);

/* Whether 64 bytes of the stream are END (1), or not (0: a packet header, or garbage). */
int stream_is_end(const uint8_t *data, size_t bytes);

/* END: 0 with its reason and the frames the server encoded, or -1 with *why. */
int stream_end_parse(const uint8_t *data, size_t bytes, int *reason, uint64_t *frames, char why[STREAM_WHY_BYTES]);

/* ---- the token -------------------------------------------------------------------------------- */

/* The token of a token file's `bytes` bytes: trailing whitespace (space, tab, CR, LF, vertical
 * tab, form feed) stripped. Returns its length, which the caller checks against
 * STREAM_TOKEN_MIN_BYTES..STREAM_TOKEN_MAX_BYTES. */
size_t stream_token_trim(const uint8_t *data, size_t bytes);

#endif
