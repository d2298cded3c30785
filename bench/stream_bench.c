/* stream_bench: the frame-delta codec of 'glcv stream' on a 1080p synthetic scene and on a video
 * file - bytes per frame against the raw frame and against Zstandard of the raw frame, PSNR of
 * the pictures a viewer reconstructs, and the time per frame of encoding (on --engine), of
 * compressing the packet and of decoding it. Prints a markdown table row per source.
 * bench/stream_bench.sh runs it and then measures the tool itself on loopback (latency, 8 viewers).
 *
 * usage: stream_bench [--engine auto|fragment|compute|cpu] [--frames N] [--size WxH]
 *                     [--threshold T] [--compress LEVEL] [--header] [VIDEO]
 *        stream_bench --write-video FILE [--frames N] [--size WxH]
 *
 * --write-video writes N frames of the synthetic scene as uncompressed RGB video (AVI container)
 * at 30 fps and exits: a source for the tool that decodes as fast as memory copies, where rendering
 * the scene live or decoding PNG files would not keep up with 1080p at 30 fps.
 *
 * The synthetic scene (glcv/synth.h: textured background, moving objects, sensor noise, a slow
 * change of light) is rendered before each frame is timed; a video is decoded by glcv's media
 * input (FFmpeg), every frame in order. "zstd raw" compresses each whole frame at the same level
 * (a keyframe packet through glcv_delta_compress: what sending every frame whole and compressed
 * would cost). Times are medians over the frames, wall clock, after a warm-up of 3 frames; the
 * GL engines' encode includes the upload and the read-back of the records (the call returns the
 * packet). */
#define _POSIX_C_SOURCE 200809L

#include <glcv/delta.h>
#include <glcv/glcv.h>
#include <glcv/media.h>

#include "benchutil.h"

#if GLCV_HAVE_FFMPEG
#include "video_file.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WARMUP = 3 };

typedef struct options {
    glcv_engine_mode engine;
    int frames, width, height, threshold, level, header;
    const char *video, *write_video;
} options;

typedef struct source {
    glcv_synth *synth;
    glcv_media *media;
    int index;
} source;

static int next_frame(source *s, glcv_image *frame)
{
    if (s->synth)
        return glcv_synth_frame(s->synth, s->index++, frame, NULL) == GLCV_OK;
#if !GLCV_HAVE_FFMPEG
    return 0;
#else
    glcv_image view;
    glcv_media_frame_info info = {0};
    if (glcv_media_read(s->media, &view, &info, -1) != GLCV_OK || info.end_of_stream)
        return 0;
    return glcv_image_convert(&view, frame) == GLCV_OK;
#endif
}

#if GLCV_HAVE_FFMPEG
static void fill_synthetic(void *user, int index, glcv_image *rgb)
{
    glcv_synth_frame(user, index, rgb, NULL);
}
#endif

/* --write-video: the synthetic scene as raw RGB video. */
static int write_video(const options *o)
{
#if GLCV_HAVE_FFMPEG
    glcv_synth *synth = NULL;
    if (glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = o->width, .height = o->height, .frames = o->frames), &synth) !=
        GLCV_OK)
        return 1;
    int rc = test_video_encode(o->write_video, "avi", AV_CODEC_ID_RAWVIDEO, AV_PIX_FMT_BGR24, o->width, o->height,
                               o->frames, 30, fill_synthetic, synth) != 0;
    glcv_synth_destroy(&synth);
    return rc;
#else
    (void)o;
    fprintf(stderr, "stream_bench: built without FFmpeg: no video\n");
    return 1;
#endif
}

static double psnr(const glcv_image *a, const glcv_image *b)
{
    size_t n = (size_t)a->width * (size_t)a->height * 3;
    double se = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)a->data[i] - (double)b->data[i];
        se += d * d;
    }
    return se == 0 ? 99.0 : 10.0 * log10(255.0 * 255.0 * (double)n / se);
}

/* Compressed size of a packet (its own size when compression does not pay). */
static size_t compress_size(const uint8_t *packet, size_t bytes, int level, uint8_t **buf, size_t *cap, double *ms)
{
    size_t bound = glcv_delta_compress_bound(bytes), out = bytes;
    if (bound > *cap) {
        free(*buf);
        *buf = malloc(bound);
        *cap = *buf ? bound : 0;
    }
    double t0 = bench_now_ms();
    if (*buf && glcv_delta_compress(packet, bytes, level, *buf, bound, &out, NULL) != GLCV_OK)
        out = bytes;
    if (ms)
        *ms = bench_now_ms() - t0;
    return out;
}

static int run(const options *o, const char *name, source *s, int width, int height)
{
    glcv_delta *enc = NULL, *key = NULL;
    glcv_delta_decoder *dec = NULL;
    glcv_image frame = {0};
    glcv_logger lg = {glcv_log_stderr, NULL, GLCV_LOG_WARN};
    int threshold = o->threshold == 0 ? GLCV_DELTA_LOSSLESS : o->threshold;
    glcv_delta_params ep = GLCV_DELTA_PARAMS(.width = width, .height = height, .threshold = threshold,
                                             .engine = o->engine, .logger = lg);
    glcv_status st = glcv_delta_create(&ep, &enc);
    if (st == GLCV_ERROR_UNSUPPORTED && o->engine == GLCV_ENGINE_AUTO) {
        fprintf(stderr, "stream_bench: %s: the GL engines cannot run here: the CPU engine\n", name);
        ep.engine = GLCV_ENGINE_CPU;
        st = glcv_delta_create(&ep, &enc);
    }
    if (st != GLCV_OK ||
        glcv_delta_create(&GLCV_DELTA_PARAMS(.width = width, .height = height, .keyframe_interval = 1,
                                             .engine = GLCV_ENGINE_CPU, .logger = lg),
                          &key) != GLCV_OK ||
        glcv_delta_decoder_create(&GLCV_DELTA_DECODER_PARAMS(.max_bytes = (size_t)1 << 30, .logger = lg), &dec) !=
            GLCV_OK ||
        glcv_image_alloc(width, height, GLCV_PIXEL_RGB8, &frame) != GLCV_OK) {
        fprintf(stderr, "stream_bench: %s: cannot create the encoder or decoder\n", name);
        return 1;
    }
    glcv_delta_params got;
    glcv_delta_get_params(enc, &got);
    double *enc_ms = calloc((size_t)o->frames, sizeof *enc_ms), *comp_ms = calloc((size_t)o->frames, sizeof *comp_ms);
    double *dec_ms = calloc((size_t)o->frames, sizeof *dec_ms);
    uint8_t *buf = NULL;
    size_t cap = 0;
    double bytes = 0, zstd_raw = 0, psnr_sum = 0, psnr_min = 1e9;
    int frames = 0, timed = 0, keyframes = 0, rc = 0;
    while (frames < o->frames && next_frame(s, &frame)) {
        const uint8_t *packet = NULL;
        size_t n = 0;
        double t0 = bench_now_ms();
        if (glcv_delta_encode(enc, &frame, NULL, 0, &packet, &n) != GLCV_OK) {
            rc = 1;
            break;
        }
        double t1 = bench_now_ms(), cms = 0;
        glcv_delta_header h;
        glcv_delta_header_parse(packet, n, &h, NULL);
        keyframes += h.key;
        size_t c = o->level > 0 ? compress_size(packet, n, o->level, &buf, &cap, &cms) : n;
        const uint8_t *sent = c < n ? buf : packet;
        double t2 = bench_now_ms();
        if (glcv_delta_decode(dec, sent, c) != GLCV_OK) {
            fprintf(stderr, "stream_bench: %s: frame %d does not decode\n", name, frames);
            rc = 1;
            break;
        }
        double t3 = bench_now_ms();
        glcv_image picture;
        glcv_delta_decoder_picture(dec, &picture, NULL);
        double p = psnr(&frame, &picture);
        psnr_sum += p;
        psnr_min = p < psnr_min ? p : psnr_min;
        const uint8_t *kp = NULL;
        size_t kn = 0;
        if (glcv_delta_encode(key, &frame, NULL, 0, &kp, &kn) == GLCV_OK)
            zstd_raw += (double)(o->level > 0 ? compress_size(kp, kn, o->level, &buf, &cap, NULL) : kn);
        bytes += (double)c;
        if (frames >= WARMUP) {
            enc_ms[timed] = t1 - t0;
            comp_ms[timed] = cms;
            dec_ms[timed] = t3 - t2;
            timed++;
        }
        frames++;
    }
    if (rc == 0 && frames > 0) {
        double raw = (double)width * height * 3;
        printf("| %s | %dx%d | %d | %s | %d | %.0f | %.0f (%.1fx) | %.0f (%.1fx) | %.2f / %.2f | %.2f | %.2f | %.2f |\n",
               name, width, height, frames, glcv_engine_mode_string(got.engine), keyframes, raw, bytes / frames,
               raw * frames / bytes, zstd_raw / frames, raw * frames / zstd_raw, psnr_sum / frames, psnr_min,
               bench_median(enc_ms, timed), bench_median(comp_ms, timed), bench_median(dec_ms, timed));
    }
    free(enc_ms);
    free(comp_ms);
    free(dec_ms);
    free(buf);
    glcv_image_free(&frame);
    glcv_delta_destroy(&enc);
    glcv_delta_destroy(&key);
    glcv_delta_decoder_destroy(&dec);
    return rc;
}

int main(int argc, char **argv)
{
    options o = {.engine = GLCV_ENGINE_AUTO, .frames = 120, .width = 1920, .height = 1080, .threshold = 8,
                 .level = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (strcmp(a, "--engine") == 0 && more) {
            if (glcv_engine_mode_parse(argv[++i], &o.engine) != GLCV_OK) {
                fprintf(stderr, "stream_bench: unknown engine %s\n", argv[i]);
                return 2;
            }
        } else if (strcmp(a, "--frames") == 0 && more) {
            o.frames = atoi(argv[++i]);
        } else if (strcmp(a, "--size") == 0 && more) {
            if (sscanf(argv[++i], "%dx%d", &o.width, &o.height) != 2)
                return 2;
        } else if (strcmp(a, "--threshold") == 0 && more) {
            o.threshold = atoi(argv[++i]);
        } else if (strcmp(a, "--compress") == 0 && more) {
            o.level = strcmp(argv[++i], "off") == 0 ? 0 : atoi(argv[i]);
        } else if (strcmp(a, "--write-video") == 0 && more) {
            o.write_video = argv[++i];
        } else if (strcmp(a, "--header") == 0) {
            o.header = 1;
        } else if (a[0] != '-') {
            o.video = a;
        } else {
            fprintf(stderr, "usage: stream_bench [--engine E] [--frames N] [--size WxH] [--threshold T] "
                            "[--compress LEVEL|off] [--header] [VIDEO]\n");
            return 2;
        }
    }
    if (o.frames < WARMUP + 1)
        o.frames = WARMUP + 1;
    if (o.write_video)
        return write_video(&o);
    if (o.level > 0 && !glcv_delta_can_compress()) {
        fprintf(stderr, "stream_bench: built without Zstandard: no compression\n");
        o.level = 0;
    }
    glcv_context *ctx = NULL;
    if (o.engine != GLCV_ENGINE_CPU && glcv_context_create(NULL, &ctx) != GLCV_OK) {
        if (o.engine != GLCV_ENGINE_AUTO) {
            fprintf(stderr, "stream_bench: no OpenGL context for engine %s\n", glcv_engine_mode_string(o.engine));
            return 1;
        }
        fprintf(stderr, "stream_bench: no OpenGL context: the CPU engine\n");
    }
    if (ctx)
        fprintf(stderr, "stream_bench: %s\n", glcv_context_describe(ctx));
    if (o.header) {
        printf("threshold %d, Zstandard level %d%s\n\n", o.threshold, o.level, o.level ? "" : " (off)");
        printf("| source | size | frames | engine | keyframes | raw B/frame | sent B/frame | zstd raw B/frame | "
               "PSNR dB mean / min | encode ms | compress ms | decode ms |\n");
        printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    }
    int rc = 0;
    source s = {0};
    if (glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = o.width, .height = o.height, .frames = o.frames), &s.synth) ==
        GLCV_OK)
        rc |= run(&o, "synthetic", &s, o.width, o.height);
    glcv_synth_destroy(&s.synth);
#if !GLCV_HAVE_FFMPEG
    if (o.video) {
        fprintf(stderr, "stream_bench: built without FFmpeg: no video\n");
        rc = 1;
    }
#else
    if (o.video) {
        source v = {0};
        glcv_media_params mp = GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = o.video,
                                                 .mode = GLCV_MEDIA_EVERY_FRAME);
        if (glcv_media_create(&mp, &v.media) != GLCV_OK) {
            fprintf(stderr, "stream_bench: cannot open %s\n", o.video);
            rc = 1;
        } else {
            glcv_media_params got;
            glcv_media_get_params(v.media, &got);
            const char *slash = strrchr(o.video, '/');
            rc |= run(&o, slash ? slash + 1 : o.video, &v, got.width, got.height);
            glcv_media_destroy(&v.media);
        }
    }
#endif
    glcv_context_destroy(&ctx);
    return rc;
}
