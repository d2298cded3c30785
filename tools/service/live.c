/* The live view's streams; see live.h.
 *
 * The set's thread only composes the watched camera's picture (frame and mask, RGBA) into the
 * stream's `next` buffer; the stream's own thread (started with its hub, on the first viewer)
 * takes it, encodes it and publishes the packets, so that the set never waits for the encoder. A
 * picture the encoder has not taken when the next comes is replaced (the view skips a frame; the
 * camera's processing does not slow down). One mutex per stream guards `next`, the hub pointer
 * and the frames' ring; the encoder itself is the thread's alone (hub_publish wants one thread, in
 * the stream's order). */
#define _GNU_SOURCE

#include "live.h"

#include "service.h"
#include "stream_hub.h"
#include "stream_net.h"

#include <glcv/delta.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
    RING = 64,          /* frames whose camera index a viewer can still learn */
    MAX_BOXES = 64,     /* boxes of one frame kept for the viewers */
    DEFAULT_THRESHOLD = 8,
    DEFAULT_KEYFRAMES = 100,
    DEFAULT_VIEWERS = 8,
    DEFAULT_FPS = 30,
    QUEUE_FRAMES = 4    /* a viewer's byte budget: this many whole pictures */
};

static const double HANDSHAKE_S = 10, STALL_S = 10, DRAIN_S = 1;
static const double IDLE_S = 30; /* a hub without viewers this long stops, with its thread */

struct svc_live_stream {
    atomic_int refs;
    char *camera;
    svc_live_params p;
    uint8_t *token;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int closed, stop;
    stream_hub *hub;
    pthread_t thread;
    int thread_started;
    /* the picture waiting for the encoder (under the lock) */
    uint8_t *next;
    size_t next_capacity;
    int next_width, next_height, has_next;
    int64_t next_index;
    long skipped;
    double handed_at; /* when the set last handed a picture over (net_now) */
    double idle_since; /* when its hub was last seen without viewers (0: it had some) */
    int hint_width, hint_height; /* the camera's frame size, once known (svc_live_size) */
    /* the encoder thread's */
    glcv_delta *enc;
    int width, height;
    uint8_t *rgba;
    size_t rgba_capacity;
    uint64_t encoded; /* packets of frames made (the next frame's packet number; under the lock) */
    struct {
        uint64_t frame;
        int64_t index;
    } ring[RING];
    int64_t boxes_index; /* the camera frame of `boxes` (-1: none yet) */
    uint64_t boxes_seq;  /* bumped by each svc_live_boxes */
    svc_live_box boxes[MAX_BOXES];
    int n_boxes;
};

static void *encoder_main(void *arg);

static void hub_log(void *user, int level, const char *line)
{
    const svc_live_stream *s = user;
    svc_log(&s->p.logger, level == STREAM_LOG_ERROR ? GLCV_LOG_ERROR : level == STREAM_LOG_WARN ? GLCV_LOG_WARN
                                                                                               : GLCV_LOG_INFO,
            "live view of '%s': %s", s->camera, line);
}

svc_live_stream *svc_live_stream_new(const svc_live_params *params, const char *camera)
{
    svc_live_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->p = *params;
    s->camera = strdup(camera);
    if (params->token && params->token_bytes > 0) {
        s->token = malloc(params->token_bytes);
        if (s->token)
            memcpy(s->token, params->token, params->token_bytes);
    }
    if (!s->camera || (params->token && params->token_bytes > 0 && !s->token)) {
        free(s->camera);
        free(s->token);
        free(s);
        return NULL;
    }
    s->p.token = s->token;
    if (s->p.threshold <= 0)
        s->p.threshold = DEFAULT_THRESHOLD;
    if (s->p.keyframe_interval <= 0)
        s->p.keyframe_interval = DEFAULT_KEYFRAMES;
    if (s->p.max_viewers <= 0)
        s->p.max_viewers = DEFAULT_VIEWERS;
    if (s->p.max_fps <= 0)
        s->p.max_fps = DEFAULT_FPS;
    atomic_init(&s->refs, 1);
    s->boxes_index = -1;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->wake, NULL);
    return s;
}

svc_live_stream *svc_live_stream_ref(svc_live_stream *s)
{
    atomic_fetch_add(&s->refs, 1);
    return s;
}

/* Stops the hub and the encoder thread: its viewers get END. `closing`: for good (the camera is
 * gone); otherwise a viewer may come again and start them anew. */
static void stop_hub(svc_live_stream *s, int closing)
{
    pthread_mutex_lock(&s->lock);
    if (closing)
        s->closed = 1;
    s->stop = 1;
    pthread_cond_signal(&s->wake);
    int joined = s->thread_started;
    s->thread_started = 0;
    pthread_mutex_unlock(&s->lock);
    if (joined)
        pthread_join(s->thread, NULL); /* no packet after this */
    pthread_mutex_lock(&s->lock);
    glcv_delta_destroy(&s->enc); /* the thread's, and it is gone: the next viewer starts at a keyframe */
    s->width = s->height = 0;
    stream_hub *hub = s->hub;
    s->hub = NULL;
    s->has_next = 0;
    s->idle_since = 0;
    s->stop = 0;
    uint64_t frames = s->encoded;
    pthread_mutex_unlock(&s->lock);
    hub_finish(&hub, STREAM_END_FINISHED, frames, closing ? DRAIN_S : 0, NULL);
}

void svc_live_stream_close(svc_live_stream *s)
{
    if (s)
        stop_hub(s, 1);
}

void svc_live_stream_unref(svc_live_stream **sp)
{
    svc_live_stream *s = sp ? *sp : NULL;
    if (sp)
        *sp = NULL;
    if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
        return;
    svc_live_stream_close(s);
    glcv_delta_destroy(&s->enc);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->wake);
    free(s->next);
    if (s->token)
        memset(s->token, 0, s->p.token_bytes);
    free(s->token);
    free(s->rgba);
    free(s->camera);
    free(s);
}

int svc_live_attach(svc_live_stream *s, int fd, const char *peer, char *error, size_t size)
{
    pthread_mutex_lock(&s->lock);
    if (s->closed) {
        pthread_mutex_unlock(&s->lock);
        close(fd);
        return svc_fail(error, size, "camera '%s' is gone", s->camera);
    }
    if (!s->hub) {
        /* a viewer's budget: QUEUE_FRAMES whole pictures (a keyframe is one), of the size to come */
        size_t picture = (size_t)(s->hint_width > 0 ? s->hint_width : 1920) *
                         (size_t)(s->hint_height > 0 ? s->hint_height : 1080) * 4;
        stream_hub_params hp = {.listener = -1,
                                .token = s->p.token,
                                .token_bytes = s->p.token ? s->p.token_bytes : 0,
                                .queue_bytes = QUEUE_FRAMES * (picture + 64),
                                .max_viewers = s->p.max_viewers,
                                .handshake_s = HANDSHAKE_S,
                                .stall_s = STALL_S,
                                .name = "viewer",
                                .log = hub_log,
                                .log_user = s};
        if (hub_start(&hp, &s->hub) != 0) {
            pthread_mutex_unlock(&s->lock);
            close(fd);
            return svc_fail(error, size, "cannot start the live view of camera '%s'", s->camera);
        }
        s->thread_started = pthread_create(&s->thread, NULL, encoder_main, s) == 0;
        if (!s->thread_started) {
            hub_finish(&s->hub, STREAM_END_FAILED, 0, 0, NULL);
            pthread_mutex_unlock(&s->lock);
            close(fd);
            return svc_fail(error, size, "cannot start the live view's thread of camera '%s'", s->camera);
        }
    }
    int rc = hub_adopt(s->hub, fd, peer);
    pthread_mutex_unlock(&s->lock);
    return rc == 0 ? 0 : svc_fail(error, size, "the live view of camera '%s' cannot take a viewer", s->camera);
}

void svc_live_size(svc_live_stream *s, int width, int height)
{
    pthread_mutex_lock(&s->lock);
    s->hint_width = width;
    s->hint_height = height;
    pthread_mutex_unlock(&s->lock);
}

int svc_live_watched(svc_live_stream *s)
{
    pthread_mutex_lock(&s->lock);
    int watched = s->hub && hub_viewers(s->hub) > 0;
    pthread_mutex_unlock(&s->lock);
    return watched;
}

int svc_live_wanted(svc_live_stream *s)
{
    pthread_mutex_lock(&s->lock);
    double now = net_now();
    int viewers = s->hub ? hub_viewers(s->hub) : 0, idle = 0;
    if (s->hub && viewers == 0 && !s->closed) {
        if (s->idle_since == 0)
            s->idle_since = now;
        idle = now - s->idle_since > IDLE_S;
    } else {
        s->idle_since = 0;
    }
    int wanted = viewers > 0 && now - s->handed_at >= 1.0 / s->p.max_fps;
    pthread_mutex_unlock(&s->lock);
    if (idle) /* nobody came back: its threads stop until a viewer comes */
        stop_hub(s, 0);
    return wanted;
}

/* Publishes one packet of the encoder's to the hub. 0, or -1 (logged). */
static int publish(svc_live_stream *s, const uint8_t *data, size_t bytes)
{
    glcv_delta_header h;
    stream_packet *p = stream_packet_new(bytes);
    if (!p || glcv_delta_header_parse(data, bytes, &h, NULL) != GLCV_OK) {
        svc_log(&s->p.logger, GLCV_LOG_ERROR, "live view of '%s': %s", s->camera,
                p ? "the encoder wrote a packet that does not parse" : "out of memory");
        stream_packet_unref(&p);
        return -1;
    }
    memcpy(p->data, data, bytes);
    p->frame = h.frame;
    p->key = h.key;
    p->snapshot = h.snapshot;
    hub_publish(s->hub, p);
    stream_packet_unref(&p);
    return 0;
}

/* The picture: R, G, B of the frame and the mask in A. */
static void compose(uint8_t *out, const glcv_image *frame, const glcv_image *mask)
{
    int bpp = glcv_pixel_format_size(frame->format);
    size_t fstride = frame->stride ? frame->stride : (size_t)frame->width * (size_t)bpp;
    size_t mstride = mask && mask->stride ? mask->stride : (size_t)frame->width;
    for (int y = 0; y < frame->height; y++) {
        const uint8_t *f = frame->data + (size_t)y * fstride;
        const uint8_t *m = mask && mask->data ? mask->data + (size_t)y * mstride : NULL;
        uint8_t *o = out + (size_t)y * (size_t)frame->width * 4;
        for (int x = 0; x < frame->width; x++, f += bpp, o += 4) {
            if (bpp >= 3) {
                o[0] = f[0];
                o[1] = f[1];
                o[2] = f[2];
            } else {
                o[0] = o[1] = o[2] = f[0];
            }
            o[3] = m && m[x] ? 255 : 0;
        }
    }
}

void svc_live_frame(svc_live_stream *s, const glcv_image *frame, const glcv_image *mask, int64_t index)
{
    pthread_mutex_lock(&s->lock);
    if (s->closed || !s->hub || hub_viewers(s->hub) == 0 || !frame->data) {
        pthread_mutex_unlock(&s->lock);
        return;
    }
    size_t bytes = (size_t)frame->width * (size_t)frame->height * 4;
    if (bytes > s->next_capacity) {
        uint8_t *grown = realloc(s->next, bytes);
        if (!grown) {
            pthread_mutex_unlock(&s->lock);
            return; /* out of memory: this frame is not shown */
        }
        s->next = grown;
        s->next_capacity = bytes;
    }
    s->skipped += s->has_next; /* the encoder did not take the last one: replaced */
    compose(s->next, frame, mask);
    s->next_width = frame->width;
    s->next_height = frame->height;
    s->next_index = index;
    s->has_next = 1;
    s->handed_at = net_now();
    pthread_cond_signal(&s->wake);
    pthread_mutex_unlock(&s->lock);
}

/* Encodes one picture (s->rgba) and publishes its packet, and a snapshot when viewers wait for one.
 * The encoder thread's; called without the lock. */
static void encode_picture(svc_live_stream *s, int64_t index)
{
    glcv_status st = GLCV_OK;
    if (!s->enc) { /* the first picture, or one of a new size: a new encoder, whose first packet is a keyframe */
        glcv_delta_params dp = GLCV_DELTA_PARAMS(.width = s->width, .height = s->height, .format = GLCV_PIXEL_RGBA8,
                                                 .threshold = s->p.threshold,
                                                 .keyframe_interval = s->p.keyframe_interval,
                                                 .engine = GLCV_ENGINE_CPU, .logger = s->p.logger);
        st = glcv_delta_create(&dp, &s->enc);
    }
    const uint8_t *packet = NULL;
    size_t bytes = 0;
    if (st == GLCV_OK) {
        glcv_image pic = {s->rgba, s->width, s->height, 0, GLCV_PIXEL_RGBA8};
        st = glcv_delta_encode(s->enc, &pic, NULL, 0, &packet, &bytes);
    }
    if (st != GLCV_OK) {
        svc_log(&s->p.logger, GLCV_LOG_ERROR, "live view of '%s': cannot encode frame %lld: %s", s->camera,
                (long long)index, glcv_status_string(st));
        glcv_delta_destroy(&s->enc);
        return;
    }
    glcv_delta_header h;
    if (glcv_delta_header_parse(packet, bytes, &h, NULL) == GLCV_OK) {
        pthread_mutex_lock(&s->lock); /* the ring is read by the HTTP thread */
        s->ring[s->encoded % RING].frame = h.frame;
        s->ring[s->encoded % RING].index = index;
        s->encoded++;
        pthread_mutex_unlock(&s->lock);
    }
    if (publish(s, packet, bytes) == 0 && hub_snapshot_wanted(s->hub) &&
        glcv_delta_snapshot(s->enc, &packet, &bytes) == GLCV_OK)
        publish(s, packet, bytes);
}

static void *encoder_main(void *arg)
{
    svc_live_stream *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->has_next && !s->stop)
            pthread_cond_wait(&s->wake, &s->lock);
        if (s->stop)
            break;
        /* take the picture: swap the buffers */
        uint8_t *taken = s->next;
        size_t capacity = s->next_capacity;
        s->next = s->rgba;
        s->next_capacity = s->rgba_capacity;
        s->rgba = taken;
        s->rgba_capacity = capacity;
        s->has_next = 0;
        if (s->next_width != s->width || s->next_height != s->height) {
            s->width = s->next_width;
            s->height = s->next_height;
            glcv_delta_destroy(&s->enc);
        }
        int64_t index = s->next_index;
        pthread_mutex_unlock(&s->lock);
        encode_picture(s, index);
        pthread_mutex_lock(&s->lock);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

void svc_live_boxes(svc_live_stream *s, int64_t index, const svc_live_box *boxes, int count)
{
    pthread_mutex_lock(&s->lock);
    s->n_boxes = count < MAX_BOXES ? count : MAX_BOXES;
    if (s->n_boxes > 0)
        memcpy(s->boxes, boxes, (size_t)s->n_boxes * sizeof *boxes);
    s->boxes_index = index;
    s->boxes_seq++;
    pthread_mutex_unlock(&s->lock);
}

/* A JSON string of the camera's id (ids are names: letters, digits, '-', '_', '.'; escaped all the same). */
static void json_text(svc_text *out, const char *text)
{
    svc_text_printf(out, "\"");
    for (const char *c = text; *c; c++) {
        if (*c == '"' || *c == '\\')
            svc_text_printf(out, "\\%c", *c);
        else if ((unsigned char)*c < 0x20)
            svc_text_printf(out, "\\u%04x", (unsigned)(unsigned char)*c);
        else
            svc_text_printf(out, "%c", *c);
    }
    svc_text_printf(out, "\"");
}

int svc_live_info(svc_live_stream *s, uint64_t *cursor, uint64_t *boxes_cursor, svc_text *out)
{
    pthread_mutex_lock(&s->lock);
    uint64_t from = *cursor;
    if (s->encoded > RING && from < s->encoded - RING)
        from = s->encoded - RING;
    if (from > s->encoded) /* a stream that started again: its frames from the start */
        from = 0;
    int boxes = s->boxes_seq != *boxes_cursor && s->boxes_index >= 0;
    if (from == s->encoded && !boxes) {
        pthread_mutex_unlock(&s->lock);
        return 0;
    }
    svc_text_printf(out, "{\"camera\":");
    json_text(out, s->camera);
    svc_text_printf(out, ",\"frames\":[");
    for (uint64_t f = from; f < s->encoded; f++)
        svc_text_printf(out, "%s[%llu,%lld]", f > from ? "," : "", (unsigned long long)s->ring[f % RING].frame,
                        (long long)s->ring[f % RING].index);
    svc_text_printf(out, "]");
    if (boxes) {
        svc_text_printf(out, ",\"boxes\":{\"index\":%lld,\"objects\":[", (long long)s->boxes_index);
        for (int i = 0; i < s->n_boxes; i++)
            svc_text_printf(out, "%s[%lld,%d,%d,%d,%d]", i ? "," : "", (long long)s->boxes[i].id, s->boxes[i].x,
                            s->boxes[i].y, s->boxes[i].width, s->boxes[i].height);
        svc_text_printf(out, "]}");
    }
    svc_text_printf(out, "}");
    *cursor = s->encoded;
    *boxes_cursor = s->boxes_seq;
    pthread_mutex_unlock(&s->lock);
    return 1;
}
