/* delta_bench: the frame-delta codec (glcv/delta.h) per frame, for each engine: the whole encode
 * call from a host frame to the packet in host memory (upload, difference, count read back,
 * compaction, the payload read back), on synthetic video where a set fraction of the bytes
 * changes by more than the threshold each frame (the rest moves by less: sensor noise), and for
 * keyframes; the packet's size per layout; the decoder's time per packet (checksum, checks,
 * apply); with --zstd LEVEL the size after glcv_delta_compress and its time; the GPU passes'
 * times. Beside the paper's figure (Polito 2021: 43 ms a 1080p frame on a Jetson Nano) and
 * bench/delta_peer.py (numpy and OpenCV doing the same difference and compaction on the CPU).
 *
 *   delta_bench [--sizes 1920x1080,...] [--engines cpu,fragment,compute] [--changed 0.001,0.01,0.1]
 *               [--frames N] [--threshold T] [--zstd LEVEL]
 *
 * Times: medians over N frames (default 60) after 5 frames of warm-up; encoding wall-clock around
 * the encode call (it returns with the packet in host memory, so the GPU's work is included),
 * decoding around glcv_delta_decode of the same packets in order. Input "mapped": each frame is
 * written into the encoder's memory (glcv_delta_map_frame, as a decoder or camera would write it)
 * and encoded with glcv_delta_encode_mapped; "host": a frame in the caller's memory
 * (glcv_delta_encode, which copies it first). */
#define _POSIX_C_SOURCE 200809L
#include <glcv/glcv.h>

#include "benchutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST 8

typedef struct options {
    int sizes[MAX_LIST][2];
    int n_sizes;
    glcv_engine_mode engines[3];
    int n_engines;
    double changed[MAX_LIST];
    int n_changed;
    int frames;
    int threshold;
    int zstd; /* 0: no compression column */
    int inputs; /* 1 mapped, 2 host, 3 both */
} options;

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* The next frame: a fraction `changed` of the scene's bytes (at random places) moves by more than
 * the threshold, for good; the frame is the scene plus noise of at most threshold / 2 a byte,
 * which on its own never adds up to a change (the error feedback's reference stays within it). */
static void next_frame(uint8_t *scene, uint8_t *f, size_t n, double changed, int threshold, uint64_t *rng)
{
    uint64_t cut = (uint64_t)(changed * 4294967296.0);
    int noise = threshold / 2;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rnd(rng);
        int v = scene[i];
        if ((r & 0xFFFFFFFFu) < cut) {
            v += (v < 128 ? 1 : -1) * (threshold + 1 + (int)((r >> 32) % 60));
            scene[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            v = scene[i];
        }
        if (noise > 0)
            v += (int)((r >> 40) % (uint64_t)(2 * noise + 1)) - noise;
        f[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
    }
}

typedef struct result {
    double ms;        /* median of the whole call */
    double decode_ms; /* median of glcv_delta_decode */
    double bytes;     /* mean packet bytes */
    double zstd_bytes, zstd_ms; /* with --zstd: mean packet bytes, median ms of glcv_delta_compress */
    double gpu_ms[8]; /* per pass (GL engines) */
    const char *pass[8];
    int n_pass;
    int ok;
} result;

static result measure(glcv_engine_mode engine, int w, int h, double changed, int key, const options *o,
                      glcv_delta_layout layout, int mapped)
{
    result r = {0};
    glcv_delta *d = NULL;
    /* timer queries cost time of their own: the wall clock is measured without them, the passes
     * on a second encoder afterwards */
    glcv_delta_params p = GLCV_DELTA_PARAMS(.width = w, .height = h, .threshold = o->threshold, .layout = layout,
                                            .keyframe_interval = -1, .engine = engine);
    if (glcv_delta_create(&p, &d) != GLCV_OK)
        return r;
    size_t n = (size_t)w * h * 3;
    uint8_t *f = malloc(n), *scene = malloc(n);
    double *ms = malloc(sizeof(double) * (size_t)o->frames), *dms = malloc(sizeof(double) * (size_t)o->frames),
           *zms = malloc(sizeof(double) * (size_t)o->frames);
    size_t zcap = glcv_delta_compress_bound(n + GLCV_DELTA_HEADER_BYTES);
    uint8_t *zbuf = o->zstd ? malloc(zcap) : NULL;
    glcv_delta_decoder *dec = NULL;
    glcv_delta_decoder_create(&GLCV_DELTA_DECODER_PARAMS(.max_bytes = n), &dec);
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i++)
        f[i] = scene[i] = (uint8_t)(40 + (rnd(&rng) % 160));
    glcv_image im = {f, w, h, 0, GLCV_PIXEL_RGB8};
    const uint8_t *packet = NULL;
    size_t bytes = 0;
    double sum_bytes = 0, sum_zstd = 0;
    int got = 0, ok = dec && glcv_delta_encode(d, &im, NULL, 0, &packet, &bytes) == GLCV_OK; /* the first keyframe */
    ok = ok && glcv_delta_decode(dec, packet, bytes) == GLCV_OK;
    for (int k = 0; ok && k < 5 + o->frames; k++) {
        next_frame(scene, f, n, changed, o->threshold, &rng);
        glcv_image m;
        if (mapped && (ok = glcv_delta_map_frame(d, &m) == GLCV_OK))
            memcpy(m.data, f, n); /* the frame arrives there (not timed) */
        double t0 = bench_now_ms();
        int flags = key ? GLCV_DELTA_FORCE_KEY : 0;
        ok = ok && (mapped ? glcv_delta_encode_mapped(d, NULL, flags, &packet, &bytes)
                           : glcv_delta_encode(d, &im, NULL, flags, &packet, &bytes)) == GLCV_OK;
        double t1 = bench_now_ms();
        ok = ok && glcv_delta_decode(dec, packet, bytes) == GLCV_OK;
        double t2 = bench_now_ms();
        size_t zbytes = 0;
        ok = ok && (!zbuf || glcv_delta_compress(packet, bytes, o->zstd, zbuf, zcap, &zbytes, NULL) == GLCV_OK);
        double t3 = bench_now_ms();
        if (ok && k >= 5) {
            ms[got] = t1 - t0;
            dms[got] = t2 - t1;
            zms[got++] = t3 - t2;
            sum_bytes += (double)bytes;
            sum_zstd += (double)zbytes;
        }
    }
    if (ok && got > 0) {
        r.ms = bench_median(ms, got);
        r.decode_ms = bench_median(dms, got);
        r.zstd_ms = bench_median(zms, got);
        r.bytes = sum_bytes / got;
        r.zstd_bytes = sum_zstd / got;
        glcv_timing t[8];
        int count = 0;
        glcv_delta_destroy(&d);
        p.timing = 1;
        if (glcv_delta_create(&p, &d) == GLCV_OK)
            for (int k = 0; k < 4; k++) {
                next_frame(scene, f, n, changed, o->threshold, &rng);
                glcv_delta_encode(d, &im, NULL, key || k == 0 ? GLCV_DELTA_FORCE_KEY : 0, &packet, &bytes);
            }
        if (d && glcv_delta_timings(d, t, 8, &count, 1) == GLCV_OK)
            for (int i = 0; i < count && i < 8; i++) {
                r.pass[i] = t[i].name;
                r.gpu_ms[i] = t[i].ms;
                r.n_pass = i + 1;
            }
        r.ok = 1;
    }
    free(f);
    free(scene);
    free(ms);
    free(dms);
    free(zms);
    free(zbuf);
    glcv_delta_decoder_destroy(&dec);
    glcv_delta_destroy(&d);
    return r;
}

static int parse_list(const char *s, options *o, int what)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && n < MAX_LIST; t = strtok_r(NULL, ",", &save)) {
        if (what == 0) {
            if (sscanf(t, "%dx%d", &o->sizes[n][0], &o->sizes[n][1]) != 2 || o->sizes[n][0] < 1 || o->sizes[n][1] < 1)
                return 0;
        } else if (what == 1) {
            if (n == 3 || glcv_engine_mode_parse(t, &o->engines[n]) != GLCV_OK)
                return 0;
        } else if ((o->changed[n] = atof(t)) <= 0 || o->changed[n] > 1) {
            return 0;
        }
        n++;
    }
    if (what == 0)
        o->n_sizes = n;
    else if (what == 1)
        o->n_engines = n;
    else
        o->n_changed = n;
    return n > 0;
}

int main(int argc, char **argv)
{
    options o = {.frames = 60, .threshold = 8, .inputs = 3};
    parse_list("1920x1080", &o, 0);
    parse_list("cpu,fragment,compute", &o, 1);
    parse_list("0.001,0.01,0.1", &o, 2);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = v != NULL;
        if (ok && strcmp(a, "--sizes") == 0)
            ok = parse_list(v, &o, 0);
        else if (ok && strcmp(a, "--engines") == 0)
            ok = parse_list(v, &o, 1);
        else if (ok && strcmp(a, "--changed") == 0)
            ok = parse_list(v, &o, 2);
        else if (ok && strcmp(a, "--frames") == 0)
            ok = (o.frames = atoi(v)) >= 1;
        else if (ok && strcmp(a, "--threshold") == 0)
            ok = (o.threshold = atoi(v)) >= 1 && o.threshold <= 255;
        else if (ok && strcmp(a, "--input") == 0)
            ok = (o.inputs = strcmp(v, "mapped") == 0 ? 1 : strcmp(v, "host") == 0 ? 2 : strcmp(v, "both") == 0 ? 3 : 0);
        else if (ok && strcmp(a, "--zstd") == 0)
            ok = (o.zstd = atoi(v)) >= 1 && o.zstd <= 19 && glcv_delta_can_compress();
        else
            ok = 0;
        if (!ok) {
            fprintf(stderr, "usage: delta_bench [--sizes WxH,...] [--engines cpu,fragment,compute] "
                            "[--changed F,...] [--frames N] [--threshold T] [--input mapped|host|both]\n"
                            "                   [--zstd LEVEL]\n"
                            "(--zstd needs a build with Zstandard)\n");
            return 2;
        }
        i++;
    }
    glcv_context *ctx = NULL;
    glcv_context_params cp = GLCV_CONTEXT_PARAMS(.min_gl_version = 33);
    if (glcv_context_create(&cp, &ctx) != GLCV_OK)
        fprintf(stderr, "delta_bench: no OpenGL context: the CPU engine only\n");
    printf("# delta_bench on %s; RGB frames, threshold %d, medians of %d frames; the paper: 43 ms a 1080p frame "
           "(Jetson Nano)\n",
           ctx ? glcv_context_describe(ctx) : "the CPU", o.threshold, o.frames);
    printf("| size | engine | input | changed | layout | encode ms | packet bytes | of raw | decode ms |%s GPU passes "
           "(ms) |\n",
           o.zstd ? " zstd bytes | zstd ms |" : "");
    printf("|---|---|---|---:|---|---:|---:|---:|---:|%s---|\n", o.zstd ? "---:|---:|" : "");
    int failures = 0;
    for (int si = 0; si < o.n_sizes; si++) {
        int w = o.sizes[si][0], h = o.sizes[si][1];
        for (int ei = 0; ei < o.n_engines; ei++) {
            glcv_engine_mode e = o.engines[ei];
            if (!ctx && e != GLCV_ENGINE_CPU)
                continue;
            for (int mapped = 1; mapped >= 0; mapped--) {
                if (!(o.inputs & (mapped ? 1 : 2)))
                    continue;
                for (int ci = 0; ci <= o.n_changed; ci++) {
                    int key = ci == o.n_changed;
                    double changed = key ? 0.01 : o.changed[ci];
                    for (int li = 0; li < (key ? 1 : 3); li++) {
                        static const glcv_delta_layout layouts[3] = {GLCV_DELTA_LAYOUT_DEFAULT, GLCV_DELTA_INDICES,
                                                                     GLCV_DELTA_BITMAP};
                        static const char *const names[3] = {"default", "indices", "bitmap"};
                        result r = measure(e, w, h, changed, key, &o, layouts[li], mapped);
                        const char *input = mapped ? "mapped" : "host";
                        if (!r.ok) {
                            printf("| %dx%d | %s | %s | %s | %s | failed |\n", w, h, glcv_engine_mode_string(e), input,
                                   key ? "key" : "", names[li]);
                            failures++;
                            continue;
                        }
                        char passes[256] = "";
                        for (int k = 0; k < r.n_pass; k++)
                            snprintf(passes + strlen(passes), sizeof passes - strlen(passes), "%s%s %.3f",
                                     k ? ", " : "", r.pass[k], r.gpu_ms[k]);
                        char frac[32];
                        snprintf(frac, sizeof frac, key ? "key" : "%.1f%%", changed * 100);
                        char z[64] = "";
                        if (o.zstd)
                            snprintf(z, sizeof z, " %.0f | %.3f |", r.zstd_bytes, r.zstd_ms);
                        printf("| %dx%d | %s | %s | %s | %s | %.3f | %.0f | %.4f | %.3f |%s %s |\n", w, h,
                               glcv_engine_mode_string(e), input, frac, key ? "raw" : names[li], r.ms, r.bytes,
                               r.bytes / ((double)w * h * 3), r.decode_ms, z, passes);
                        fflush(stdout);
                    }
                }
            }
        }
    }
    glcv_context_destroy(&ctx);
    return failures ? 1 : 0;
}
