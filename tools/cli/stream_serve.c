/* glcv stream serve: a source's frames, encoded as frame deltas, to any number of viewers.
 *
 * Four threads, each stage's work outside the one lock, bounded queues between them:
 *   capture   reads the source (paced at its frame rate unless --fast) into FRAME_SLOTS frames;
 *   encode    owns the GL context, the segmenter and the encoder (stream_encode.h): encodes each
 *             frame, then makes one snapshot keyframe for the viewers that wait for one;
 *   publish   compresses each packet once (Zstandard, where it pays) and queues it for the
 *             viewers (stream_hub.h);
 *   network   the hub's: handshakes, requests, writing every viewer's queue.
 * A full queue makes the stage before it wait, so a source read in every-frame mode is paced by
 * the slowest stage; a camera drops frames instead (glcv/media.h); a slow viewer falls behind
 * alone (its queue has a byte budget). */
#define _GNU_SOURCE

#include "stream.h"

#include "stream_encode.h"
#include "stream_hub.h"
#include "stream_net.h"

#include <glcv/delta.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    FRAME_SLOTS = 3,
    ITEM_SLOTS = 4,
    MIN_QUEUE_BYTES = 8 << 20,
    BACKLOG = 64,
    DRAIN_S = 10,
    STALL_S = 60
};

typedef struct frame_slot {
    glcv_image image;
    double capture_time;
} frame_slot;

typedef struct serve_run {
    const stream_serve_options *o;
    glcv_logger logger;
    glcv_media *media;
    int width, height;
    double rate; /* frames per second the source is paced at; 0: not paced */
    stream_hub *hub;
    FILE *trace;

    pthread_mutex_t lock;
    pthread_cond_t changed;
    frame_slot frames[FRAME_SLOTS];
    int64_t captured, encoded; /* frames read into the slots, frames taken out */
    int capture_done;
    stream_packet *items[ITEM_SLOTS]; /* packets on their way from the encoder to the viewers */
    int64_t produced, published;
    int encode_done;
    int encoder_state; /* 0 starting, 1 ready, -1 failed */
    atomic_int stop;   /* a stage failed: every stage stops */
    int failed;
    stream_encoder *enc; /* owned by the encode thread */
    size_t frame_bytes;
    char engine_text[320];
    const char *format_name;

    /* counters (each written by one stage) */
    double *encode_ms, *compress_ms; /* per frame, for the first `timed` frames */
    size_t timed;
    int64_t keyframes, snapshot_packets, compressed;
    uint64_t payload_raw, payload_sent; /* packets before and after compression */
} serve_run;

/* ---- the frame and item queues ----------------------------------------------------------------- */

static int stopping(serve_run *r)
{
    return atomic_load(&r->stop) != 0;
}

static void fail(serve_run *r)
{
    pthread_mutex_lock(&r->lock);
    r->failed = 1;
    atomic_store(&r->stop, 1);
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
}

/* Waits on the condition for at most 100 ms (so Ctrl-C is seen). Under the lock. */
static void wait_a_little(serve_run *r)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 100000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&r->changed, &r->lock, &ts);
}

static void sleep_until(double when)
{
    for (;;) {
        double left = when - net_now();
        if (left <= 0 || cli_interrupted())
            return;
        if (left > 0.1)
            left = 0.1;
        struct timespec ts = {0, (long)(left * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* ---- capture ---------------------------------------------------------------------------------- */

static void *capture_main(void *arg)
{
    serve_run *r = arg;
    const stream_serve_options *o = r->o;
    double start = 0;
    int64_t first_index = -1;
    for (int64_t k = 0; o->src.max_frames <= 0 || k < o->src.max_frames; k++) {
        pthread_mutex_lock(&r->lock);
        while (r->captured - r->encoded >= FRAME_SLOTS && !stopping(r))
            wait_a_little(r);
        pthread_mutex_unlock(&r->lock);
        if (stopping(r))
            break;
        frame_slot *slot = &r->frames[k % FRAME_SLOTS];
        int64_t index = 0;
        int end = 0;
        glcv_status st = cli_source_read(r->media, &slot->image, &r->stop, &index, &end);
        if (st != GLCV_OK) {
            cli_lib_error("the input stopped", st);
            fail(r);
            break;
        }
        if (end)
            break;
        if (r->rate > 0) { /* paced: frame k at start + (index - first) / rate */
            if (first_index < 0) {
                first_index = index;
                start = net_now();
            }
            sleep_until(start + (double)(index - first_index) / r->rate);
        }
        slot->capture_time = net_now();
        pthread_mutex_lock(&r->lock);
        r->captured++;
        pthread_cond_broadcast(&r->changed);
        pthread_mutex_unlock(&r->lock);
    }
    pthread_mutex_lock(&r->lock);
    r->capture_done = 1;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/* ---- encode ----------------------------------------------------------------------------------- */

/* Hands a packet to the publish stage (waits for room). 0, or -1 when stopping. */
static int hand_over(serve_run *r, const uint8_t *data, size_t bytes, double capture_time)
{
    stream_packet *p = stream_packet_new(bytes);
    glcv_delta_header h;
    if (!p || glcv_delta_header_parse(data, bytes, &h, &r->logger) != GLCV_OK) {
        if (!p)
            cli_out_of_memory();
        else
            cli_error("the encoder wrote a packet that does not parse");
        stream_packet_unref(&p);
        fail(r);
        return -1;
    }
    memcpy(p->data, data, bytes);
    p->frame = h.frame;
    p->key = h.key;
    p->snapshot = h.snapshot;
    p->capture_time = capture_time;
    pthread_mutex_lock(&r->lock);
    while (r->produced - r->published >= ITEM_SLOTS && !stopping(r))
        wait_a_little(r);
    if (stopping(r)) {
        pthread_mutex_unlock(&r->lock);
        stream_packet_unref(&p);
        return -1;
    }
    r->items[r->produced % ITEM_SLOTS] = p;
    r->produced++;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    return 0;
}

/* After a frame: one snapshot for every viewer waiting for one. */
static int serve_snapshots(serve_run *r, double capture_time)
{
    if (!hub_snapshot_wanted(r->hub))
        return 0;
    const uint8_t *packet = NULL;
    size_t bytes = 0;
    if (stream_encoder_snapshot(r->enc, &packet, &bytes) != CLI_OK) {
        fail(r);
        return -1;
    }
    r->snapshot_packets++;
    return hand_over(r, packet, bytes, capture_time);
}

static void *encode_main(void *arg)
{
    serve_run *r = arg;
    const stream_serve_options *o = r->o;
    stream_encoder_params ep = {.width = r->width, .height = r->height, .filter = o->filter,
                                .threshold = o->threshold, .keyframe_interval = o->keyframe_interval,
                                .learn = o->learn, .seg = &o->seg, .args = o->args, .quiet = o->quiet,
                                .logger = r->logger};
    int rc = stream_encoder_create(&ep, &r->enc);
    pthread_mutex_lock(&r->lock);
    r->encoder_state = rc == CLI_OK ? 1 : -1;
    if (rc == CLI_OK) {
        r->frame_bytes = stream_encoder_frame_bytes(r->enc);
        r->format_name = stream_encoder_format_name(r->enc);
        snprintf(r->engine_text, sizeof r->engine_text, "%s", stream_encoder_describe(r->enc));
    }
    pthread_cond_broadcast(&r->changed);
    /* Waits for the frames (or the end) until the main thread says go (capture starts). */
    while (rc == CLI_OK) {
        while (r->encoded == r->captured && !r->capture_done && !stopping(r))
            wait_a_little(r);
        if (stopping(r) || r->encoded == r->captured)
            break;
        frame_slot *slot = &r->frames[r->encoded % FRAME_SLOTS];
        pthread_mutex_unlock(&r->lock);
        const uint8_t *packet = NULL;
        size_t bytes = 0;
        double ms = 0;
        int64_t k = r->encoded;
        rc = stream_encoder_frame(r->enc, &slot->image, &packet, &bytes, &ms);
        double capture_time = slot->capture_time;
        if (rc == CLI_OK) {
            if ((size_t)k < r->timed)
                r->encode_ms[k] = ms;
            glcv_delta_header h;
            if (glcv_delta_header_parse(packet, bytes, &h, NULL) == GLCV_OK && h.key)
                r->keyframes++;
            int key = h.key;
            if (hand_over(r, packet, bytes, capture_time) != 0 || (!key && serve_snapshots(r, capture_time)))
                rc = CLI_FAIL;
        } else {
            fail(r);
        }
        pthread_mutex_lock(&r->lock);
        r->encoded++;
        pthread_cond_broadcast(&r->changed);
    }
    r->encode_done = 1;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    stream_encoder_destroy(&r->enc);
    return NULL;
}

/* ---- publish ---------------------------------------------------------------------------------- */

/* The packet as the viewers get it: compressed when that makes it smaller. */
static stream_packet *compressed(serve_run *r, stream_packet *p, int64_t k)
{
    size_t bound = glcv_delta_compress_bound(p->bytes);
    stream_packet *c = stream_packet_new(bound);
    if (!c)
        return stream_packet_ref(p);
    double t0 = cli_now();
    size_t bytes = 0;
    glcv_status st = glcv_delta_compress(p->data, p->bytes, r->o->compress, c->data, bound, &bytes, &r->logger);
    if (k >= 0 && (size_t)k < r->timed)
        r->compress_ms[k] = 1e3 * (cli_now() - t0);
    if (st != GLCV_OK || bytes >= p->bytes) {
        if (st != GLCV_OK)
            cli_warning("frame %" PRIu64 ": compression failed (%s): sent as it is", p->frame,
                        glcv_status_string(st));
        stream_packet_unref(&c);
        return stream_packet_ref(p);
    }
    c->bytes = bytes;
    c->frame = p->frame;
    c->key = p->key;
    c->snapshot = p->snapshot;
    c->capture_time = p->capture_time;
    r->compressed++;
    return c;
}

static void *publish_main(void *arg)
{
    serve_run *r = arg;
    int64_t frame_packets = 0;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (r->published == r->produced && !r->encode_done)
            wait_a_little(r);
        if (r->published == r->produced)
            break;
        stream_packet *it = r->items[r->published % ITEM_SLOTS];
        pthread_mutex_unlock(&r->lock);
        int64_t k = it->snapshot ? -1 : frame_packets++;
        stream_packet *p = r->o->compress > 0 ? compressed(r, it, k) : stream_packet_ref(it);
        r->payload_raw += it->bytes;
        r->payload_sent += p->bytes;
        hub_publish(r->hub, p);
        if (r->trace && !p->snapshot)
            fprintf(r->trace, "%" PRIu64 " %.6f %.6f %zu %d\n", p->frame, p->capture_time, net_now(), p->bytes,
                    p->key);
        stream_packet_unref(&p);
        stream_packet_unref(&it);
        pthread_mutex_lock(&r->lock);
        r->published++;
        pthread_cond_broadcast(&r->changed);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/* ---- set-up and summary ----------------------------------------------------------------------- */

/* The media source, opened for serving: every frame in order (but cameras and lavfi graphs, which
 * run live), paced at its rate unless --fast. */
static int open_source(serve_run *r)
{
    const stream_serve_options *o = r->o;
    glcv_media_params p = cli_source_media_params(&o->src, o->source_kind, GLCV_PIXEL_RGB8, 0, &r->logger);
    if (o->location)
        p.location = o->location;
    int live = o->source_kind == CLI_SOURCE_CAMERA || o->source_kind == CLI_SOURCE_LAVFI;
    if (o->src.mode < 0 && !live)
        p.mode = GLCV_MEDIA_EVERY_FRAME;
    if (o->source_kind == CLI_SOURCE_SYNTHETIC) {
        p.synth = GLCV_SYNTH_PARAMS(.width = o->src.size.width, .height = o->src.size.height, .frames = 300);
        if (o->src.loop < 0)
            p.loop = 1; /* a live scene: it plays until stopped */
    }
    int rc = cli_source_open(&p, &r->media);
    if (rc != CLI_OK)
        return rc;
#if GLCV_HAVE_FFMPEG
    glcv_media_params got;
    glcv_media_get_params(r->media, &got);
    r->width = got.width;
    r->height = got.height;
    r->rate = 0;
    if (!o->fast && got.mode == GLCV_MEDIA_EVERY_FRAME)
        r->rate = got.frame_rate > 0 ? got.frame_rate : 25.0;
    if (!o->quiet)
        fprintf(stderr, "glcv: input %s%s\n", glcv_media_describe(r->media),
                r->rate > 0 ? "" : o->fast ? " (as fast as it encodes)" : "");
    return CLI_OK;
#else
    return CLI_FAIL; /* without FFmpeg no source opens (cli_source_open said so) */
#endif
}

static double peak_rss_mib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = strtod(line + 6, NULL);
    if (f)
        fclose(f);
    return kib / 1024.0;
}

static void print_summary(serve_run *r, const stream_hub_stats *hs, int64_t frames, int interrupted)
{
    const stream_serve_options *o = r->o;
    uint64_t raw = (uint64_t)frames * r->frame_bytes;
    printf("frames %" PRId64 " served (%" PRId64 " keyframes, %" PRId64 " snapshots), %dx%d %s, %zu bytes a "
           "frame, threshold %d, filter %s%s\n",
           frames, r->keyframes, r->snapshot_packets, r->width, r->height, r->format_name ? r->format_name : "?",
           r->frame_bytes, o->threshold < 0 ? 0 : o->threshold, stream_filter_names[o->filter],
           interrupted ? " (interrupted)" : "");
    printf("packets: %" PRIu64 " bytes for %" PRIu64 " bytes of frames (ratio %.2f)", r->payload_sent, raw,
           r->payload_sent ? (double)raw / (double)r->payload_sent : 0.0);
    if (o->compress > 0)
        printf("; Zstandard level %d: %" PRId64 " packets compressed, %" PRIu64 " bytes before", o->compress,
               r->compressed, r->payload_raw);
    printf("\n");
    size_t n = (size_t)frames < r->timed ? (size_t)frames : r->timed;
    if (n > 0) {
        double enc_mean = 0, comp_mean = 0;
        for (size_t k = 0; k < n; k++) {
            enc_mean += r->encode_ms[k];
            comp_mean += r->compress_ms[k];
        }
        enc_mean /= (double)n;
        comp_mean /= (double)n;
        double enc_median = cli_median(r->encode_ms, n);
        printf("encode: %.3f ms per frame (median; mean %.3f)", enc_median, enc_mean);
        if (o->compress > 0)
            printf(", compress %.3f ms per frame (median; mean %.3f)", cli_median(r->compress_ms, n), comp_mean);
        printf("; %s\n", r->engine_text);
    }
    printf("viewers: %d connections, %d joined, %d rejected; %" PRId64 " snapshots sent, %" PRId64
           " fell behind, %" PRId64 " keyframe requests; %" PRIu64 " bytes sent\n",
           hs->connections, hs->joined, hs->rejected, hs->snapshots, hs->fell_behind, hs->keyframe_requests,
           hs->bytes_sent);
    printf("memory: peak RSS %.1f MiB, peak queued for viewers %.2f MiB (budget %.2f MiB a viewer)\n",
           peak_rss_mib(), (double)hs->peak_queued / 1048576.0, (double)r->o->queue_bytes / 1048576.0);
}

static int start_thread(pthread_t *t, void *(*fn)(void *), serve_run *r, int *started)
{
    if (pthread_create(t, NULL, fn, r) != 0) {
        cli_error("cannot start a thread");
        return CLI_FAIL;
    }
    *started = 1;
    return CLI_OK;
}

int stream_serve(const stream_serve_options *opt)
{
    stream_serve_options o = *opt;
    serve_run r = {.o = &o, .logger = cli_logger(o.verbose)};
    atomic_init(&r.stop, 0);
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.changed, NULL);
    int rc = open_source(&r);
    /* Times of the first frames (of all of them, up to a million), for the summary. */
    r.timed = o.src.max_frames > 0 && o.src.max_frames < (1 << 20) ? (size_t)o.src.max_frames : 1 << 20;
    glcv_status st = GLCV_OK;
    for (int s = 0; rc == CLI_OK && s < FRAME_SLOTS; s++)
        if ((st = glcv_image_alloc(r.width, r.height, GLCV_PIXEL_RGB8, &r.frames[s].image)) != GLCV_OK)
            rc = cli_lib_error("frame", st);
    if (rc == CLI_OK) {
        r.encode_ms = calloc(r.timed, sizeof *r.encode_ms);
        r.compress_ms = calloc(r.timed, sizeof *r.compress_ms);
        if (!r.encode_ms || !r.compress_ms)
            rc = cli_out_of_memory();
    }
    if (rc == CLI_OK && o.trace && !(r.trace = fopen(o.trace, "w"))) {
        cli_error("%s: cannot write: %s", o.trace, strerror(errno));
        rc = CLI_FAIL;
    }
    int listener = -1, port = 0;
    char why[NET_TEXT_BYTES];
    if (rc == CLI_OK && net_listen(o.bind, o.port, BACKLOG, &listener, &port, why) != 0) {
        cli_error("%s", why);
        rc = CLI_FAIL;
    }
    /* The encoder is made on its own thread, which keeps its GL context. */
    pthread_t capture_thread, encode_thread, publish_thread;
    int capture_started = 0, encode_started = 0, publish_started = 0;
    cli_interrupt_catch();
    if (rc == CLI_OK)
        rc = start_thread(&encode_thread, encode_main, &r, &encode_started);
    pthread_mutex_lock(&r.lock);
    while (rc == CLI_OK && r.encoder_state == 0)
        pthread_cond_wait(&r.changed, &r.lock);
    if (rc == CLI_OK && r.encoder_state < 0)
        rc = CLI_FAIL;
    pthread_mutex_unlock(&r.lock);
    if (rc == CLI_OK) {
        if (o.queue_bytes == 0) {
            size_t keyframe = r.frame_bytes + GLCV_DELTA_HEADER_BYTES;
            o.queue_bytes = 2 * keyframe > MIN_QUEUE_BYTES ? 2 * keyframe : MIN_QUEUE_BYTES;
        }
        stream_hub_params hp = {.listener = listener, .token = o.token, .token_bytes = o.token_bytes,
                                .queue_bytes = o.queue_bytes, .max_viewers = o.max_viewers,
                                .handshake_s = o.handshake_s, .stall_s = STALL_S};
        listener = -1; /* the hub's now */
        rc = hub_start(&hp, &r.hub) == 0 ? CLI_OK : CLI_FAIL;
    }
    if (rc == CLI_OK) {
        fprintf(stderr, "glcv: listening on %s port %d%s\n", o.bind, port,
                o.token ? " (viewers must prove they hold the token)" : "");
        if (o.wait > 0) {
            fprintf(stderr, "glcv: waiting for %d viewer%s before reading the input\n", o.wait, o.wait == 1 ? "" : "s");
            hub_wait_for_viewers(r.hub, o.wait, cli_interrupted);
        }
        rc = start_thread(&publish_thread, publish_main, &r, &publish_started);
    }
    if (rc == CLI_OK)
        rc = start_thread(&capture_thread, capture_main, &r, &capture_started);
    if (rc != CLI_OK)
        fail(&r);
    if (capture_started)
        pthread_join(capture_thread, NULL);
    else {
        pthread_mutex_lock(&r.lock);
        r.capture_done = 1;
        pthread_cond_broadcast(&r.changed);
        pthread_mutex_unlock(&r.lock);
    }
    if (encode_started)
        pthread_join(encode_thread, NULL);
    if (publish_started)
        pthread_join(publish_thread, NULL);
    if (listener >= 0)
        close(listener);
    int interrupted = cli_interrupted();
    cli_interrupt_release();
    if (r.failed && rc == CLI_OK)
        rc = CLI_FAIL;
    stream_hub_stats hs = {0};
    stream_end_reason reason = rc != CLI_OK ? STREAM_END_FAILED : interrupted ? STREAM_END_INTERRUPTED
                                                                              : STREAM_END_FINISHED;
    int64_t frames = r.encoded;
    if (r.hub)
        hub_finish(&r.hub, reason, (uint64_t)frames, DRAIN_S, &hs);
    if (r.encoder_state > 0)
        print_summary(&r, &hs, frames, interrupted);
    if (r.trace && fclose(r.trace) != 0 && rc == CLI_OK) {
        cli_error("%s: cannot write: %s", o.trace, strerror(errno));
        rc = CLI_FAIL;
    }
    for (int s = 0; s < FRAME_SLOTS; s++)
        glcv_image_free(&r.frames[s].image);
    free(r.encode_ms);
    free(r.compress_ms);
    cli_source_close(&r.media);
    pthread_cond_destroy(&r.changed);
    pthread_mutex_destroy(&r.lock);
    if (rc == CLI_OK && interrupted) {
        cli_warning("interrupted: served %" PRId64 " frames", frames);
        rc = CLI_INTERRUPTED;
    }
    return rc;
}
