/* A fake 'glcv stream serve' for tests/test_stream.sh: it listens on 127.0.0.1 (a free port,
 * printed as "port N" on stdout), takes one viewer, and plays one scenario of a server that breaks
 * the protocol or the stream, with packets of a real encoder (CPU engine, 64x48 synthetic frames)
 * where it needs valid ones.
 *
 * usage: stream_fake_server SCENARIO [TOKEN_FILE]
 *   stall            accepts and sends nothing
 *   bad-hello        a greeting with another magic
 *   bad-version      a greeting of protocol version 2
 *   bad-mac          (TOKEN_FILE) accepts the viewer but proves a wrong token
 *   garbage          after the handshake, 64 bytes that are neither a packet nor END
 *   truncated-header a keyframe, then 20 bytes of a header, then closes
 *   truncated        a keyframe, then half of the next packet, then closes
 *   no-end           a keyframe and two deltas, then closes without END
 *   corrupt          a keyframe, then a delta with one payload byte changed (its checksum fails)
 *   bad-header       a keyframe, then a header with a field out of range
 *   oversized        a header of a 16384x16384 RGBA keyframe (1 GiB), and nothing after it
 *   gap              keyframe 0, deltas 1, 3 (2 is missing); waits for the viewer's keyframe request,
 *                    then a snapshot of frame 3, delta 4, END: the viewer resyncs
 *   delta-first      delta 1 before any keyframe; waits for the request, then a keyframe, END
 *   bad-end          a keyframe, then END with reserved bytes set
 *   stall-hello      sends its greeting (HELLO), then nothing, until the viewer leaves (30 s at most)
 *   stall-welcome    completes the handshake, then sends nothing, until the viewer leaves
 *   stall-payload    a keyframe, then half of the next packet, then nothing, until the viewer leaves
 * Exit status: 0 when the scenario was played (and the viewer asked for a keyframe where one is
 * expected), 1 otherwise. */
#define _POSIX_C_SOURCE 200809L

#include "delta_internal.h"
#include "stream_crypto.h"
#include "stream_net.h"
#include "stream_proto.h"

#include <glcv/glcv.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { W = 64, H = 48, FRAMES = 6 };

static int fd = -1;

static int die(const char *what)
{
    fprintf(stderr, "stream_fake_server: %s\n", what);
    return 1;
}

static int send_bytes(const void *data, size_t bytes)
{
    return net_write_exact(fd, data, bytes, net_now() + 10, NULL, NULL) == NET_OK ? 0 : -1;
}

/* The packets of frames 0..FRAMES-1 of a synthetic scene, and a snapshot after frame 3. */
typedef struct packets {
    uint8_t *data[FRAMES];
    size_t bytes[FRAMES];
    uint8_t *snapshot3;
    size_t snapshot3_bytes;
} packets;

static int make_packets(packets *out)
{
    glcv_synth *synth = NULL;
    glcv_delta *delta = NULL;
    glcv_image frame = {0};
    int rc = glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = W, .height = H, .frames = FRAMES), &synth) != GLCV_OK ||
             glcv_delta_create(&GLCV_DELTA_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_CPU), &delta) !=
                 GLCV_OK ||
             glcv_image_alloc(W, H, GLCV_PIXEL_RGB8, &frame) != GLCV_OK;
    for (int k = 0; k < FRAMES && rc == 0; k++) {
        const uint8_t *p = NULL;
        size_t n = 0;
        rc = glcv_synth_frame(synth, k, &frame, NULL) != GLCV_OK ||
             glcv_delta_encode(delta, &frame, NULL, 0, &p, &n) != GLCV_OK || !(out->data[k] = malloc(n));
        if (rc == 0) {
            memcpy(out->data[k], p, n);
            out->bytes[k] = n;
        }
        if (rc == 0 && k == 3) {
            rc = glcv_delta_snapshot(delta, &p, &n) != GLCV_OK || !(out->snapshot3 = malloc(n));
            if (rc == 0) {
                memcpy(out->snapshot3, p, n);
                out->snapshot3_bytes = n;
            }
        }
    }
    glcv_delta_destroy(&delta);
    glcv_synth_destroy(&synth);
    glcv_image_free(&frame);
    return rc;
}

/* Sends nothing more but keeps the connection open until the viewer closes it (or 30 s pass):
 * a server that hangs without going away. */
static int stall(void)
{
    uint8_t drain[256];
    size_t got = 0;
    net_result r;
    do
        r = net_read_exact(fd, drain, sizeof drain, net_now() + 30, NULL, &got, NULL);
    while (r == NET_OK);
    printf("stalled until the viewer left: %s\n", r == NET_TIMEOUT ? "no, it was still there after 30 s" : "yes");
    fflush(stdout);
    return r == NET_TIMEOUT;
}

/* The server's side of the handshake, honest but for `scenario`. */
static int handshake(const char *scenario, const uint8_t *token, size_t token_bytes)
{
    uint8_t nonce[STREAM_NONCE_BYTES], hello[STREAM_HELLO_BYTES], join[STREAM_JOIN_BYTES];
    uint8_t welcome[STREAM_WELCOME_BYTES];
    char why[STREAM_WHY_BYTES];
    if (stream_random(nonce, sizeof nonce) != 0)
        return die("no random bytes");
    stream_hello_write(hello, token != NULL, nonce);
    if (strcmp(scenario, "bad-hello") == 0)
        memcpy(hello, "GLCVHELL", 8);
    if (strcmp(scenario, "bad-version") == 0)
        hello[8] = 2;
    if (send_bytes(hello, sizeof hello) != 0)
        return die("cannot send HELLO");
    if (strcmp(scenario, "bad-hello") == 0 || strcmp(scenario, "bad-version") == 0)
        return 1; /* the viewer hangs up */
    if (strcmp(scenario, "stall-hello") == 0)
        return stall() ? 1 : 2; /* 2: played, nothing more to do */
    if (net_read_exact(fd, join, sizeof join, net_now() + 10, NULL, NULL, NULL) != NET_OK)
        return die("no JOIN");
    int status = stream_server_answer(join, sizeof join, token, token_bytes, nonce, 0, welcome, why);
    if (status != STREAM_ACCEPTED) {
        fprintf(stderr, "stream_fake_server: JOIN refused: %s\n", why);
        return 1;
    }
    if (strcmp(scenario, "bad-mac") == 0)
        welcome[16] ^= 1;
    if (send_bytes(welcome, sizeof welcome) != 0)
        return die("cannot send WELCOME");
    if (strcmp(scenario, "stall-welcome") == 0)
        return stall() ? 1 : 2;
    return 0;
}

/* Waits for the viewer's KEYFRAME request. */
static int expect_keyframe_request(void)
{
    uint8_t r[STREAM_REQUEST_BYTES];
    char why[STREAM_WHY_BYTES];
    int type = 0;
    if (net_read_exact(fd, r, sizeof r, net_now() + 10, NULL, NULL, NULL) != NET_OK)
        return die("the viewer did not ask for a keyframe");
    if (stream_request_parse(r, sizeof r, &type, why) != 0 || type != STREAM_REQUEST_KEYFRAME)
        return die("the viewer sent something other than a keyframe request");
    printf("keyframe requested\n");
    fflush(stdout);
    return 0;
}

static int send_end(int corrupt)
{
    uint8_t end[STREAM_END_BYTES];
    stream_end_write(end, STREAM_END_FINISHED, FRAMES);
    if (corrupt)
        end[40] = 7;
    return send_bytes(end, sizeof end);
}

/* The rest of a header's fields as they are, and a sealed packet of it. */
static int send_header(glcv_delta_header h)
{
    uint8_t head[GLCV_DELTA_HEADER_BYTES];
    glcv_delta_header_write(&h, head);
    glcv_delta_packet_seal(head, sizeof head);
    return send_bytes(head, sizeof head);
}

static int play(const char *scenario, const packets *p)
{
    if (strcmp(scenario, "garbage") == 0) {
        uint8_t junk[64];
        for (int i = 0; i < 64; i++)
            junk[i] = (uint8_t)(i * 37 + 11);
        return send_bytes(junk, sizeof junk);
    }
    if (strcmp(scenario, "oversized") == 0) {
        glcv_delta_header h = {.version = GLCV_DELTA_VERSION, .frame = 0, .width = 16384, .height = 16384,
                               .format = GLCV_PIXEL_RGBA8, .key = 1, .layout = GLCV_DELTA_RAW,
                               .compression = GLCV_DELTA_UNCOMPRESSED, .threshold = 8,
                               .records = 16384u * 16384u * 4u, .payload_bytes = 16384u * 16384u * 4u,
                               .raw_bytes = 16384u * 16384u * 4u};
        if (send_header(h) != 0)
            return 1;
        sleep(3); /* the viewer must not wait for the gigabyte */
        return 0;
    }
    if (strcmp(scenario, "delta-first") == 0) {
        if (send_bytes(p->data[1], p->bytes[1]) != 0 || expect_keyframe_request() != 0)
            return 1;
        return send_bytes(p->snapshot3, p->snapshot3_bytes) || send_bytes(p->data[4], p->bytes[4]) || send_end(0);
    }
    if (send_bytes(p->data[0], p->bytes[0]) != 0)
        return die("cannot send the keyframe");
    if (strcmp(scenario, "truncated-header") == 0)
        return send_bytes(p->data[1], 20);
    if (strcmp(scenario, "truncated") == 0)
        return send_bytes(p->data[1], p->bytes[1] / 2);
    if (strcmp(scenario, "stall-payload") == 0)
        return send_bytes(p->data[1], p->bytes[1] / 2) || stall();
    if (strcmp(scenario, "no-end") == 0)
        return send_bytes(p->data[1], p->bytes[1]) || send_bytes(p->data[2], p->bytes[2]);
    if (strcmp(scenario, "bad-end") == 0)
        return send_end(1);
    if (strcmp(scenario, "corrupt") == 0) {
        uint8_t *copy = malloc(p->bytes[1]);
        if (!copy)
            return 1;
        memcpy(copy, p->data[1], p->bytes[1]);
        copy[p->bytes[1] - 1] ^= 0x40;
        int rc = send_bytes(copy, p->bytes[1]);
        free(copy);
        sleep(1);
        return rc;
    }
    if (strcmp(scenario, "bad-header") == 0) {
        uint8_t copy[GLCV_DELTA_HEADER_BYTES];
        memcpy(copy, p->data[1], sizeof copy);
        copy[8] = 99; /* the version */
        glcv_delta_packet_seal(copy, sizeof copy);
        return send_bytes(copy, sizeof copy);
    }
    if (strcmp(scenario, "gap") == 0) {
        if (send_bytes(p->data[1], p->bytes[1]) || send_bytes(p->data[3], p->bytes[3]) ||
            expect_keyframe_request() != 0)
            return 1;
        return send_bytes(p->snapshot3, p->snapshot3_bytes) || send_bytes(p->data[4], p->bytes[4]) || send_end(0);
    }
    fprintf(stderr, "stream_fake_server: unknown scenario '%s'\n", scenario);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return die("usage: stream_fake_server SCENARIO [TOKEN_FILE]");
    const char *scenario = argv[1];
    uint8_t token[STREAM_TOKEN_MAX_BYTES + 1];
    size_t token_bytes = 0;
    if (argc > 2) {
        FILE *f = fopen(argv[2], "rb");
        if (!f)
            return die("cannot read the token file");
        token_bytes = stream_token_trim(token, fread(token, 1, sizeof token, f));
        fclose(f);
    }
    packets p = {0};
    if (make_packets(&p) != 0)
        return die("cannot make the packets");
    int listener = -1, port = 0;
    char why[NET_TEXT_BYTES];
    if (net_listen("127.0.0.1", 0, 4, &listener, &port, why) != 0)
        return die(why);
    net_set_nonblocking(listener, 1);
    printf("port %d\n", port);
    fflush(stdout);
    char peer[NET_ADDRESS_BYTES];
    for (int tries = 0; fd < 0 && tries < 300; tries++) {
        fd = net_accept(listener, peer);
        if (fd < 0)
            nanosleep(&(struct timespec){0, 100000000L}, NULL);
    }
    close(listener);
    if (fd < 0)
        return die("no viewer came");
    net_set_nonblocking(fd, 0);
    int rc = 0;
    if (strcmp(scenario, "stall") == 0)
        sleep(5);
    else if ((rc = handshake(scenario, argc > 2 ? token : NULL, token_bytes)) == 0)
        rc = play(scenario, &p);
    else if (rc == 2) /* the scenario ended in the handshake, as planned */
        rc = 0;
    /* Gives the viewer time to read what was sent before the connection goes. */
    shutdown(fd, SHUT_WR);
    uint8_t drain[256];
    while (net_read_exact(fd, drain, sizeof drain, net_now() + 3, NULL, NULL, NULL) == NET_OK)
        ;
    close(fd);
    for (int k = 0; k < FRAMES; k++)
        free(p.data[k]);
    free(p.snapshot3);
    if (strcmp(scenario, "bad-hello") == 0 || strcmp(scenario, "bad-version") == 0)
        rc = 0;
    return rc;
}
