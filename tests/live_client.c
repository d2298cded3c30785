/* A viewer of the live view of 'glcv serve' without a browser: a libwebsockets client of
 * /live/CAMERA that speaks the stream protocol (stream_proto.h) in binary messages, decodes every
 * packet with glcv's delta decoder and reads the text messages that map packet frames to camera
 * frames. With --frames and --masks it checks pictures against the source: R, G, B within the
 * threshold of FRAMES/frame_IIII.png and A equal to MASKS/frame_IIIIII_mask.png, for the camera
 * frame I of the picture (and, with --mean, their mean difference at most M: a lossy source's
 * frames are compared so). Used by test_serve.sh (live) and as the viewer of bench runs.
 *
 * usage: live_client HOST PORT CAMERA [--token T] [--seconds S] [--frames DIR --masks DIR]
 *                    [--threshold T] [--mean M] [--checks N]
 * Prints one summary line ("live_client: N pictures in S s (P/s), B bytes, K checked, max diff D");
 * exit 0, or 1 on a failure (refused, a corrupt packet, a picture off the source, too few
 * pictures). */
#include "stream_crypto.h"
#include "stream_proto.h"

#include <glcv/glcv.h>

#include <cjson/cJSON.h>
#include <libwebsockets.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAP = 4096, MAX_OUT = 128, MAX_HELD = 16 };

typedef struct client {
    const char *camera, *token, *frames, *masks;
    int threshold, checks_wanted;
    int phase; /* 0 HELLO, 1 WELCOME, 2 packets, 3 ended */
    uint8_t *buf;
    size_t len, cap;
    uint8_t nonce_viewer[STREAM_NONCE_BYTES], nonce_server[STREAM_NONCE_BYTES];
    uint8_t out[LWS_PRE + MAX_OUT];
    size_t out_len;
    glcv_delta_decoder *dec;
    int64_t index_of[MAP]; /* packet frame % MAP -> camera frame (-1: unknown) */
    uint64_t frame_of[MAP];
    long pictures, checked, requests;
    glcv_image held[MAX_HELD]; /* pictures kept for the check at the end (the masks are written by then) */
    int64_t held_index[MAX_HELD];
    int n_held;
    uint64_t bytes;
    int max_diff, failed, done;
    double mean_limit, max_mean; /* --mean: the mean difference allowed; the largest seen */
    char why[256];
} client;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void fail(client *c, const char *why)
{
    if (!c->failed)
        snprintf(c->why, sizeof c->why, "%s", why);
    c->failed = 1;
    c->done = 1;
}

static void send_bytes(struct lws *wsi, client *c, const uint8_t *data, size_t n)
{
    memcpy(c->out + LWS_PRE, data, n);
    c->out_len = n;
    lws_callback_on_writable(wsi);
}

/* Keeps a copy of the picture whose camera frame is known, for check_picture. */
static void hold_picture(client *c, const glcv_image *pic, uint64_t frame)
{
    int64_t index = c->index_of[frame % MAP];
    if (c->frame_of[frame % MAP] != frame || index < 0 || c->n_held == MAX_HELD)
        return; /* its camera frame not known yet */
    glcv_image *h = &c->held[c->n_held];
    if (glcv_image_alloc(pic->width, pic->height, GLCV_PIXEL_RGBA8, h) != GLCV_OK)
        return;
    for (int y = 0; y < pic->height; y++)
        memcpy(h->data + (size_t)y * (h->stride ? h->stride : (size_t)h->width * 4),
               pic->data + (size_t)y * (size_t)pic->width * 4, (size_t)pic->width * 4);
    c->held_index[c->n_held++] = index;
}

/* A held picture against the source frame and mask of its camera frame. */
static void check_picture(client *c, const glcv_image *pic, int64_t index)
{
    char fp[4096], mp[4096];
    snprintf(fp, sizeof fp, "%s/frame_%04lld.png", c->frames, (long long)index);
    snprintf(mp, sizeof mp, "%s/frame_%06lld_mask.png", c->masks, (long long)index);
    glcv_image f = {0}, m = {0};
    if (glcv_image_load(fp, GLCV_PIXEL_RGB8, NULL, &f) != GLCV_OK ||
        glcv_image_load(mp, GLCV_PIXEL_GRAY8, NULL, &m) != GLCV_OK) {
        glcv_image_free(&f);
        glcv_image_free(&m);
        return; /* no mask for it (the camera's learning frames): another picture will do */
    }
    int diff = 0, mask_off = 0, wx = 0, wy = 0;
    double sum = 0;
    if (f.width != pic->width || f.height != pic->height || m.width != pic->width || m.height != pic->height) {
        fail(c, "a picture of another size than the source");
    } else {
        for (int y = 0; y < pic->height; y++)
            for (int x = 0; x < pic->width; x++) {
                const uint8_t *p = pic->data + (size_t)y * (pic->stride ? pic->stride : (size_t)pic->width * 4) + (size_t)x * 4;
                const uint8_t *q = f.data + (size_t)y * (f.stride ? f.stride : (size_t)f.width * 3) + (size_t)x * 3;
                for (int k = 0; k < 3; k++) {
                    int d = abs(p[k] - q[k]);
                    sum += d;
                    if (d > diff) {
                        diff = d;
                        wx = x;
                        wy = y;
                    }
                }
                mask_off += (p[3] != 0) != (m.data[(size_t)y * (m.stride ? m.stride : (size_t)m.width) + x] != 0);
            }
    }
    double mean = sum / (3.0 * pic->width * pic->height);
    if (diff > c->max_diff)
        c->max_diff = diff;
    if (mean > c->max_mean)
        c->max_mean = mean;
    c->checked++;
    if (diff > c->threshold || mean > c->mean_limit || mask_off) {
        char why[256];
        snprintf(why, sizeof why,
                 "camera frame %lld: colour off by %d at (%d, %d) (threshold %d), by %.2f on average (limit %.2f), %d "
                 "mask pixels differ",
                 (long long)index, diff, wx, wy, c->threshold, mean, c->mean_limit, mask_off);
        fail(c, why);
    }
    glcv_image_free(&f);
    glcv_image_free(&m);
}

/* The bytes received so far, through the protocol. */
static void consume(struct lws *wsi, client *c)
{
    char why[STREAM_WHY_BYTES];
    for (;;) {
        if (c->phase == 0 && c->len >= STREAM_HELLO_BYTES) {
            uint8_t join[STREAM_JOIN_BYTES];
            if (stream_random(c->nonce_viewer, sizeof c->nonce_viewer) != 0 ||
                stream_viewer_join(c->buf, STREAM_HELLO_BYTES, (const uint8_t *)c->token, c->token ? strlen(c->token) : 0,
                                   c->nonce_viewer, join, c->nonce_server, why) < 0)
                return fail(c, why);
            send_bytes(wsi, c, join, sizeof join);
            memmove(c->buf, c->buf + STREAM_HELLO_BYTES, c->len -= STREAM_HELLO_BYTES);
            c->phase = 1;
        } else if (c->phase == 1 && c->len >= STREAM_WELCOME_BYTES) {
            if (stream_viewer_check_welcome(c->buf, STREAM_WELCOME_BYTES, (const uint8_t *)c->token,
                                            c->token ? strlen(c->token) : 0, c->nonce_server, c->nonce_viewer, why) != 0)
                return fail(c, why);
            memmove(c->buf, c->buf + STREAM_WELCOME_BYTES, c->len -= STREAM_WELCOME_BYTES);
            c->phase = 2;
        } else if (c->phase == 2 && c->len >= 64) {
            if (stream_is_end(c->buf, 64)) {
                c->phase = 3;
                c->done = 1;
                return;
            }
            glcv_delta_header h;
            if (glcv_delta_header_parse(c->buf, 64, &h, NULL) != GLCV_OK)
                return fail(c, "a malformed packet header");
            size_t n = 64 + (size_t)h.payload_bytes;
            if (c->len < n)
                return;
            glcv_status st = glcv_delta_decode(c->dec, c->buf, n);
            if (st == GLCV_ERROR_STATE && !c->requests++) {
                uint8_t req[STREAM_REQUEST_BYTES];
                stream_request_write(req, STREAM_REQUEST_KEYFRAME);
                send_bytes(wsi, c, req, sizeof req);
            } else if (st != GLCV_OK && st != GLCV_ERROR_STATE) {
                return fail(c, glcv_status_string(st));
            } else if (st == GLCV_OK) {
                c->requests = 0;
                c->pictures++;
                glcv_image pic;
                uint64_t frame;
                if (c->frames && c->n_held < c->checks_wanted + 4 && c->pictures % 10 == 0 &&
                    glcv_delta_decoder_picture(c->dec, &pic, &frame) == GLCV_OK)
                    hold_picture(c, &pic, frame);
            }
            memmove(c->buf, c->buf + n, c->len -= n);
        } else {
            return;
        }
    }
}

static void frames_info(client *c, const char *text, size_t n)
{
    cJSON *o = cJSON_ParseWithLength(text, n);
    const cJSON *frames = cJSON_GetObjectItem(o, "frames"), *pair;
    cJSON_ArrayForEach(pair, frames)
    {
        uint64_t f = (uint64_t)cJSON_GetArrayItem(pair, 0)->valuedouble;
        c->frame_of[f % MAP] = f;
        c->index_of[f % MAP] = (int64_t)cJSON_GetArrayItem(pair, 1)->valuedouble;
    }
    cJSON_Delete(o);
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    (void)user;
    client *c = lws_context_user(lws_get_context(wsi));
    switch (reason) {
    case LWS_CALLBACK_CLIENT_RECEIVE:
        if (!lws_frame_is_binary(wsi)) {
            frames_info(c, in, len);
            return 0;
        }
        c->bytes += len;
        if (c->len + len > c->cap) {
            size_t cap = 2 * (c->len + len);
            uint8_t *b = realloc(c->buf, cap);
            if (!b) {
                fail(c, "out of memory");
                return -1;
            }
            c->buf = b;
            c->cap = cap;
        }
        memcpy(c->buf + c->len, in, len);
        c->len += len;
        consume(wsi, c);
        return c->failed ? -1 : 0;
    case LWS_CALLBACK_CLIENT_WRITEABLE:
        if (c->out_len && lws_write(wsi, c->out + LWS_PRE, c->out_len, LWS_WRITE_BINARY) != (int)c->out_len)
            return -1;
        c->out_len = 0;
        return 0;
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        fail(c, in ? (const char *)in : "cannot connect");
        return 0;
    case LWS_CALLBACK_CLIENT_CLOSED:
        if (c->phase < 2)
            fail(c, "the service closed the connection during the handshake");
        c->done = 1;
        return 0;
    default:
        return 0;
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: live_client HOST PORT CAMERA [--token T] [--seconds S] [--frames DIR --masks DIR] "
                        "[--threshold T] [--checks N]\n");
        return 2;
    }
    client c = {.camera = argv[3], .threshold = 8, .checks_wanted = 3, .mean_limit = 255};
    double seconds = 5;
    for (int i = 4; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--token"))
            c.token = argv[i + 1];
        else if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--frames"))
            c.frames = argv[i + 1];
        else if (!strcmp(argv[i], "--masks"))
            c.masks = argv[i + 1];
        else if (!strcmp(argv[i], "--threshold"))
            c.threshold = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--mean"))
            c.mean_limit = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--checks"))
            c.checks_wanted = atoi(argv[i + 1]);
    }
    if (c.frames && !c.masks) {
        fprintf(stderr, "live_client: --frames needs --masks\n");
        return 2;
    }
    for (int i = 0; i < MAP; i++)
        c.index_of[i] = -1;
    if (glcv_delta_decoder_create(&GLCV_DELTA_DECODER_PARAMS(0), &c.dec) != GLCV_OK)
        return 1;
    lws_set_log_level(LLL_ERR, NULL);
    static const struct lws_protocols protocols[] = {{"glcv-stream-1", callback, 0, 65536, 0, NULL, 0},
                                                     {NULL, NULL, 0, 0, 0, NULL, 0}};
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.protocols = protocols;
    info.user = &c;
    struct lws_context *ctx = lws_create_context(&info);
    char path[512];
    snprintf(path, sizeof path, "/live/%s", c.camera);
    struct lws_client_connect_info ci;
    memset(&ci, 0, sizeof ci);
    ci.context = ctx;
    ci.address = argv[1];
    ci.port = atoi(argv[2]);
    ci.path = path;
    ci.host = argv[1];
    ci.origin = argv[1];
    ci.protocol = "glcv-stream-1";
    double start = now_s();
    if (!ctx || !lws_client_connect_via_info(&ci))
        fail(&c, "cannot start the connection");
    while (!c.done && now_s() - start < seconds)
        if (lws_service(ctx, 50) < 0)
            break;
    double took = now_s() - start;
    lws_context_destroy(ctx);
    for (int i = 0; i < c.n_held; i++) {
        if (c.checked < c.checks_wanted && !c.failed)
            check_picture(&c, &c.held[i], c.held_index[i]);
        glcv_image_free(&c.held[i]);
    }
    if (!c.failed && c.pictures < 10)
        fail(&c, "fewer than 10 pictures");
    if (!c.failed && c.frames && c.checked < c.checks_wanted)
        fail(&c, "no picture could be checked against the source");
    printf("live_client: %ld pictures in %.1f s (%.1f/s), %llu bytes, %ld checked, max diff %d, mean diff %.2f at most%s%s\n",
           c.pictures, took, c.pictures / took, (unsigned long long)c.bytes, c.checked, c.max_diff, c.max_mean,
           c.failed ? ": FAILED: " : "", c.failed ? c.why : "");
    glcv_delta_decoder_destroy(&c.dec);
    free(c.buf);
    return c.failed ? 1 : 0;
}
