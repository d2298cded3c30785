/* segment_bench: the segmenter's timings in the columns of Griesser's Table 2, per engine mode
 * and image size, a per-pass breakdown from GPU timer queries set against measured floors, and
 * (optionally) OpenCV's MOG2/KNN on the same frames through bench/peers_bgsub.py.
 *
 *   segment_bench [--sizes 640x480,1920x1080] [--modes fragment,compute,cpu]
 *                 [--iterations 0,1,2,4,6,8,10] [--frames 1000] [--csv FILE] [--peers DIR]
 *                 [--multipass]
 *
 * Columns (ms per frame): T1000 = --frames segmentations of a frame already on the GPU, queued
 * without waiting, divided by their number; T1000+up = the same with each frame uploaded from
 * pinned memory (glcv_segment_map_frame: the producer writes frames there, so the upload is a DMA
 * that overlaps the passes of the frame before); T1 = one frame on the GPU waited for;
 * T1+up = one frame uploaded from pinned memory, waited for; T1+up+dn = the same plus reading the
 * mask back; T1+up(copy) = one frame from ordinary host memory (glcv_segment_frame, which copies
 * it into pinned memory first); T1000+upRGB = T1000+up with 3 bytes per pixel instead of 4. The
 * CPU engine has no upload: its columns are the same call. --multipass: compute mode runs the MRF
 * with one dispatch per substep instead of the tiled kernel (for comparisons). */
#define _POSIX_C_SOURCE 200809L
#include <glcv/glcv.h>

#include "benchutil.h"
#include "core_internal.h"
#include "engine.h"
#include "segment_internal.h"

#include <epoxy/gl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST 16

typedef struct options {
    int sizes[MAX_LIST][2];
    int n_sizes;
    glcv_engine_mode modes[4];
    int n_modes;
    int iterations[MAX_LIST];
    int n_iterations;
    int frames;
    const char *csv;
    const char *peers_dir;
    int multipass;
} options;

typedef struct frames {
    int width, height, count;
    glcv_image background;
    glcv_image images[8];
    GLuint texture; /* frame 0 on the GPU */
} frames;

static int parse_list(const char *s, int *out, int cap)
{
    int n = 0;
    while (*s && n < cap) {
        char *end;
        out[n++] = (int)strtol(s, &end, 10);
        if (*end != ',' && *end != '\0')
            return -1;
        s = *end ? end + 1 : end;
    }
    return n;
}

static int parse_options(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->sizes[0][0] = 640, o->sizes[0][1] = 480;
    o->sizes[1][0] = 1920, o->sizes[1][1] = 1080;
    o->n_sizes = 2;
    o->modes[0] = GLCV_ENGINE_FRAGMENT, o->modes[1] = GLCV_ENGINE_COMPUTE, o->modes[2] = GLCV_ENGINE_CPU;
    o->n_modes = 3;
    static const int its[] = {0, 1, 2, 4, 6, 8, 10};
    memcpy(o->iterations, its, sizeof its);
    o->n_iterations = 7;
    o->frames = 1000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--sizes") && v) {
            o->n_sizes = 0;
            for (const char *s = v; *s && o->n_sizes < MAX_LIST;) {
                int w, h, k = 0;
                if (sscanf(s, "%dx%d%n", &w, &h, &k) != 2 || w < 1 || h < 1)
                    return -1;
                o->sizes[o->n_sizes][0] = w, o->sizes[o->n_sizes][1] = h, o->n_sizes++;
                s += k;
                if (*s == ',')
                    s++;
            }
            i++;
        } else if (!strcmp(a, "--modes") && v) {
            o->n_modes = 0;
            char buf[128];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *t = strtok(buf, ","); t && o->n_modes < 4; t = strtok(NULL, ","))
                if (glcv_engine_mode_parse(t, &o->modes[o->n_modes++]) != GLCV_OK)
                    return -1;
            i++;
        } else if (!strcmp(a, "--iterations") && v) {
            if ((o->n_iterations = parse_list(v, o->iterations, MAX_LIST)) < 1)
                return -1;
            i++;
        } else if (!strcmp(a, "--frames") && v) {
            o->frames = atoi(v);
            i++;
        } else if (!strcmp(a, "--csv") && v) {
            o->csv = v;
            i++;
        } else if (!strcmp(a, "--peers") && v) {
            o->peers_dir = v;
            i++;
        } else if (!strcmp(a, "--multipass")) {
            o->multipass = 1;
        } else {
            return -1;
        }
    }
    return o->frames >= 1 ? 0 : -1;
}

static int make_frames(frames *f, int w, int h)
{
    memset(f, 0, sizeof *f);
    f->width = w, f->height = h, f->count = 8;
    glcv_synth *synth = NULL;
    if (glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = w, .height = h, .frames = 8), &synth) ||
        glcv_image_alloc(w, h, GLCV_PIXEL_RGBA8, &f->background) || glcv_synth_background(synth, &f->background))
        return -1;
    for (int i = 0; i < f->count; i++)
        if (glcv_image_alloc(w, h, GLCV_PIXEL_RGBA8, &f->images[i]) ||
            glcv_synth_frame(synth, i, &f->images[i], NULL))
            return -1;
    glcv_synth_destroy(&synth);
    glGenTextures(1, &f->texture);
    glBindTexture(GL_TEXTURE_2D, f->texture);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, f->images[4].data);
    glBindTexture(GL_TEXTURE_2D, 0);
    return 0;
}

static void free_frames(frames *f)
{
    glcv_image_free(&f->background);
    for (int i = 0; i < f->count; i++)
        glcv_image_free(&f->images[i]);
    if (f->texture)
        glDeleteTextures(1, &f->texture);
}

typedef struct row {
    int width, height, iterations;
    glcv_engine_mode mode;
    double t1000, t1000_up, t1000_up_rgb, t1, t1_up, t1_updn, t1_copy;
} row;

static int g_multipass; /* --multipass */

static glcv_segment *make_segmenter(const frames *f, glcv_engine_mode mode, int iterations, int timing)
{
    glcv_segment *seg = NULL;
    glcv_segment_params p = {.width = f->width, .height = f->height, .engine = mode, .timing = timing,
                             .logger = {glcv_log_stderr, NULL, GLCV_LOG_WARN}};
    if (glcv_segment_create(&p, &seg) != GLCV_OK)
        return NULL;
    if (g_multipass && mode == GLCV_ENGINE_COMPUTE && glcv_segment_use_multipass(seg) != GLCV_OK) {
        glcv_segment_destroy(&seg);
        return NULL;
    }
    glcv_segment_set_iterations(seg, iterations);
    glcv_segment_set_background(seg, &f->background);
    /* Calibrated, as learning leaves it: noise factors, and the noise model after each frame. */
    glcv_segment_calibrate_begin(seg);
    for (int i = 0; i < 4; i++)
        glcv_segment_calibrate_add(seg, &f->images[i]);
    glcv_segment_calibrate_end(seg, NULL);
    /* Warm-up: programs, caches, the temporal prior. */
    for (int i = 0; i < 3; i++)
        glcv_segment_frame(seg, &f->images[i], 1);
    return seg;
}

/* T1000+up: ms per frame of n frames of `src` (RGBA8 or RGB8, packed like the mapped frames)
 * written into the staging ring (glcv_segment_map_frame) and queued without waiting. */
static double time_mapped(glcv_segment *seg, const glcv_image *src, int n, int gpu)
{
    /* The staging ring has a few slots: fill each once, then they all hold valid frames. */
    for (int i = 0; i < 4; i++) {
        glcv_image m;
        glcv_segment_map_frame(seg, src->format, &m);
        memcpy(m.data, src->data, m.stride * (size_t)m.height);
        glcv_segment_frame_mapped(seg, 1);
    }
    glFinish();
    double t0 = glcv_now();
    for (int i = 0; i < n; i++) {
        glcv_image m;
        glcv_segment_map_frame(seg, src->format, &m);
        if (!gpu)
            memcpy(m.data, src->data, m.stride * (size_t)m.height);
        glcv_segment_frame_mapped(seg, 0);
    }
    glFinish();
    return (glcv_now() - t0) * 1e3 / n;
}

static int measure(const frames *f, glcv_engine_mode mode, int iterations, int n_pipelined, row *r)
{
    glcv_segment *seg = make_segmenter(f, mode, iterations, 0);
    if (!seg)
        return -1;
    /* Let the GPU reach its working clocks: 0.3 s of this configuration before measuring. */
    if (mode != GLCV_ENGINE_CPU) {
        double t_end = glcv_now() + 0.3;
        while (glcv_now() < t_end) {
            for (int i = 0; i < 20; i++)
                glcv_segment_frame_texture(seg, f->texture, 0);
            glFinish();
        }
    }
    memset(r, 0, sizeof *r);
    r->width = f->width, r->height = f->height, r->iterations = iterations, r->mode = mode;
    int gpu = mode != GLCV_ENGINE_CPU;
    glcv_image mask = {0};
    glcv_image_alloc(f->width, f->height, GLCV_PIXEL_GRAY8, &mask);
    int reps = gpu ? 30 : 5;
    double t[64];

    /* T1000: many frames in flight (on the CPU engine: as many as the time allows). */
    int n = gpu ? n_pipelined : (n_pipelined < 10 ? n_pipelined : 10);
    glFinish();
    double t0 = glcv_now();
    for (int i = 0; i < n; i++) {
        if (gpu)
            glcv_segment_frame_texture(seg, f->texture, 0);
        else
            glcv_segment_frame(seg, &f->images[4], 0);
    }
    glFinish();
    r->t1000 = (glcv_now() - t0) * 1e3 / n;

    r->t1000_up = time_mapped(seg, &f->images[4], n, gpu);

    /* The same with three bytes per pixel: a quarter less to move, converted by the GL. */
    glcv_image rgb = {0};
    glcv_image_alloc(f->width, f->height, GLCV_PIXEL_RGB8, &rgb);
    glcv_image_convert(&f->images[4], &rgb);
    r->t1000_up_rgb = time_mapped(seg, &rgb, n, gpu);
    glcv_image_free(&rgb);

    for (int k = 0; k < reps; k++) {
        glFinish();
        t0 = glcv_now();
        if (gpu)
            glcv_segment_frame_texture(seg, f->texture, 1);
        else
            glcv_segment_frame(seg, &f->images[4], 1);
        t[k] = (glcv_now() - t0) * 1e3;
    }
    r->t1 = bench_median(t, reps);
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < reps; k++) {
            glcv_image m;
            glFinish();
            glcv_segment_map_frame(seg, GLCV_PIXEL_RGBA8, &m);
            if (!gpu)
                memcpy(m.data, f->images[4].data, m.stride * (size_t)m.height);
            t0 = glcv_now();
            glcv_segment_frame_mapped(seg, pass == 0);
            if (pass == 1)
                glcv_segment_read_mask(seg, &mask);
            t[k] = (glcv_now() - t0) * 1e3;
        }
        if (pass == 0)
            r->t1_up = bench_median(t, reps);
        else
            r->t1_updn = bench_median(t, reps);
    }
    for (int k = 0; k < reps; k++) {
        glFinish();
        t0 = glcv_now();
        glcv_segment_frame(seg, &f->images[k % f->count], 1);
        t[k] = (glcv_now() - t0) * 1e3;
    }
    r->t1_copy = bench_median(t, reps);
    glcv_image_free(&mask);
    glcv_segment_destroy(&seg);
    return 0;
}

/* ---- floors --------------------------------------------------------------------------------- */

typedef struct floors {
    double fill_gpix;      /* fragment passes: Gpixel/s of a trivial pass */
    double bandwidth_gbs;  /* compute: GB/s of a large copy (read + write) */
    double dispatch_us;    /* compute: time per dependent dispatch of a tiny pass */
    double upload_gbs;     /* glTexSubImage2D from a persistently mapped buffer */
} floors;

static double time_runs(glcv_engine *e, const glcv_pass *p, int n)
{
    glcv_engine_run(e, p);
    glFinish();
    double t0 = glcv_now();
    for (int i = 0; i < n; i++)
        glcv_engine_run(e, p);
    glFinish();
    return (glcv_now() - t0) / n;
}

static void measure_floors(floors *fl)
{
    static const char *const copy_files[] = {"engine_copy.glsl"};
    const glcv_format rgba8 = GLCV_FORMAT_RGBA8;
    glcv_engine_mode modes[2] = {GLCV_ENGINE_FRAGMENT, GLCV_ENGINE_COMPUTE};
    memset(fl, 0, sizeof *fl);
    for (int m = 0; m < 2; m++) {
        glcv_engine *e = NULL;
        if (glcv_engine_create(modes[m], 0, NULL, &e) != GLCV_OK)
            continue;
        glcv_engine_begin(e);
        glcv_program *prog = NULL;
        glcv_tex a = {0}, b = {0};
        int big = m == 0 ? 640 : 4096, bigh = m == 0 ? 480 : 4096;
        if (glcv_engine_program(e, "copy", copy_files, 1, NULL, &rgba8, 1, &prog) == GLCV_OK &&
            glcv_engine_tex_create(e, &a, big, bigh, rgba8) == GLCV_OK &&
            glcv_engine_tex_create(e, &b, big, bigh, rgba8) == GLCV_OK) {
            glcv_pass p = {.program = prog, .label = "copy", .width = big, .height = bigh, .n_inputs = 1,
                           .n_outputs = 1};
            p.inputs[0] = (glcv_pass_input){"source", a.id, GLCV_SAMPLE_NEAREST, GL_TEXTURE_2D};
            p.outputs[0] = &b;
            double s = time_runs(e, &p, 50);
            if (m == 0) {
                fl->fill_gpix = (double)big * bigh / s * 1e-9;
            } else {
                fl->bandwidth_gbs = (double)big * bigh * 8 / s * 1e-9;
                p.width = p.height = 1;
                fl->dispatch_us = time_runs(e, &p, 2000) * 1e6;
            }
        }
        glcv_engine_tex_destroy(e, &a);
        glcv_engine_tex_destroy(e, &b);
        glcv_engine_end(e);
        glcv_engine_destroy(&e);
    }
    /* Upload bandwidth from pinned (persistently mapped) memory, 1920x1080 RGBA8. */
    if (epoxy_gl_version() >= 44 || epoxy_has_gl_extension("GL_ARB_buffer_storage")) {
        const int w = 1920, h = 1080;
        size_t bytes = (size_t)w * h * 4;
        GLuint buf = 0, tex = 0;
        glGenBuffers(1, &buf);
        glBindBuffer(GL_PIXEL_UNPACK_BUFFER, buf);
        glBufferStorage(GL_PIXEL_UNPACK_BUFFER, (GLsizeiptr)bytes, NULL,
                        GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT);
        void *ptr = glMapBufferRange(GL_PIXEL_UNPACK_BUFFER, 0, (GLsizeiptr)bytes,
                                     GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT);
        if (ptr)
            memset(ptr, 0x5a, bytes);
        glGenTextures(1, &tex);
        glBindTexture(GL_TEXTURE_2D, tex);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
        glFinish();
        double t0 = glcv_now();
        for (int i = 0; i < 50; i++)
            glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
        glFinish();
        fl->upload_gbs = (double)bytes * 50 / (glcv_now() - t0) * 1e-9;
        glUnmapBuffer(GL_PIXEL_UNPACK_BUFFER);
        glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
        glDeleteBuffers(1, &buf);
        glDeleteTextures(1, &tex);
    }
}

/* Work of each pass kind per frame: invocations (fragments or threads) and bytes moved at least
 * once (inputs read once, outputs written once). */
static void pass_work(const char *name, int passes, int w, int h, int iterations, double *items, double *bytes)
{
    double px = (double)w * h, sub = (double)((w + 1) / 2) * ((h + 1) / 2);
    double substeps = 4.0 * (iterations + 1);
    *items = *bytes = 0;
    if (!strcmp(name, "threshold")) {
        *items = sub;
        *bytes = px * 4 * 2 + sub * 2 * 4; /* frame + background RGBA8, four RG8UI subsets */
    } else if (!strcmp(name, "mrf") && passes == (int)substeps) {
        *items = sub * substeps;           /* one pass per substep */
        *bytes = substeps * sub * (3 + 2 + 1); /* three masks + thresholds in, one mask out */
    } else if (!strcmp(name, "mrf")) {
        *items = sub * substeps;           /* tiled: all substeps of up to 10 iterations per pass */
        *bytes = passes * sub * 4 * (2 + 1 + 1) + px; /* thresholds, masks in and out, full mask */
    } else if (!strcmp(name, "merge")) {
        *items = px;
        *bytes = px * 2;
    }
}

static void per_pass_table(const frames *f, glcv_engine_mode mode, int iterations, const floors *fl, FILE *csv)
{
    glcv_segment *seg = make_segmenter(f, mode, iterations, 1);
    if (!seg)
        return;
    /* Working clocks first (the CPU rows before leave the GPU idle for seconds). */
    double t_end = glcv_now() + 0.3;
    while (glcv_now() < t_end) {
        for (int i = 0; i < 20; i++)
            glcv_segment_frame_texture(seg, f->texture, 0);
        glFinish();
    }
    /* Frames waited for one by one: queued frames would overlap and inflate each timer query. */
    for (int i = 0; i < 20; i++)
        glcv_segment_frame_texture(seg, f->texture, 1);
    glcv_timing t[16];
    int n = 0;
    glcv_segment_timings(seg, t, 16, &n, 1);
    printf("\nper pass: %dx%d, %s, %d iterations (GPU timer queries, last of 20 frames waited for)\n", f->width, f->height,
           glcv_engine_mode_string(mode), iterations);
    printf("  %-10s %6s %10s %12s %10s %10s %8s\n", "pass", "passes", "gpu ms", "invocations", "MB", "floor ms",
           "x floor");
    double total = 0;
    for (int i = 0; i < n; i++) {
        double items, bytes;
        pass_work(t[i].name, t[i].count, f->width, f->height, iterations, &items, &bytes);
        double floor_ms = 0;
        if (mode == GLCV_ENGINE_FRAGMENT && fl->fill_gpix > 0)
            floor_ms = items / (fl->fill_gpix * 1e9) * 1e3;
        else if (mode == GLCV_ENGINE_COMPUTE && fl->bandwidth_gbs > 0)
            floor_ms = bytes / (fl->bandwidth_gbs * 1e9) * 1e3 + t[i].count * fl->dispatch_us * 1e-3;
        total += t[i].ms;
        printf("  %-10s %6d %10.4f %12.0f %10.3f %10.4f %8.1f\n", t[i].name, t[i].count, t[i].ms, items,
               bytes / 1e6, floor_ms, floor_ms > 0 ? t[i].ms / floor_ms : 0);
        if (csv)
            fprintf(csv, "pass,%d,%d,%s,%d,%s,%d,%.5f,%.0f,%.0f,%.5f\n", f->width, f->height,
                    glcv_engine_mode_string(mode), iterations, t[i].name, t[i].count, t[i].ms, items, bytes,
                    floor_ms);
    }
    printf("  %-10s %6s %10.4f\n", "total", "", total);
    glcv_segment_destroy(&seg);
}

/* Writes the frames as PNG and runs the OpenCV peers on them. */
static void run_peers(const frames *f, const char *dir, FILE *csv)
{
    char path[1400];
    snprintf(path, sizeof path, "mkdir -p '%s'", dir);
    if (system(path) != 0)
        return;
    snprintf(path, sizeof path, "%s/background.png", dir);
    glcv_image_save_png(path, &f->background, NULL);
    for (int i = 0; i < f->count; i++) {
        snprintf(path, sizeof path, "%s/frame_%04d.png", dir, i);
        glcv_image_save_png(path, &f->images[i], NULL);
    }
    char cmd[3000];
    snprintf(cmd, sizeof cmd, "python3 \"$(dirname '%s')/peers_bgsub.py\" '%s' 2>&1", __FILE__, dir);
    const char *script = getenv("GLCV_PEERS_SCRIPT");
    if (script)
        snprintf(cmd, sizeof cmd, "python3 '%s' '%s' 2>&1", script, dir);
    FILE *p = popen(cmd, "r");
    if (!p)
        return;
    char line[512];
    while (fgets(line, sizeof line, p)) {
        printf("  peers: %s", line);
        double ms;
        char name[64];
        if (csv && sscanf(line, "%63s %lf ms", name, &ms) == 2)
            fprintf(csv, "peer,%d,%d,%s,,%.4f\n", f->width, f->height, name, ms);
    }
    pclose(p);
}

int main(int argc, char **argv)
{
    options o;
    if (parse_options(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: segment_bench [--sizes WxH,...] [--modes fragment,compute,cpu] "
                        "[--iterations 0,1,...] [--frames N] [--csv FILE] [--peers DIR] [--multipass]\n");
        return 2;
    }
    g_multipass = o.multipass;
    glcv_context *ctx = NULL;
    if (glcv_context_create(NULL, &ctx) != GLCV_OK) {
        fprintf(stderr, "segment_bench: no OpenGL context\n");
        return 1;
    }
    printf("segment_bench on %s\n", glcv_context_describe(ctx));
    FILE *csv = o.csv ? fopen(o.csv, "w") : NULL;
    if (csv)
        fprintf(csv, "# frame rows: kind,width,height,mode,iterations,t1000,t1000_up,t1,t1_up,t1_updn,t1_copy,"
                     "t1000_up_rgb (ms)\n"
                     "# pass rows: kind,width,height,mode,iterations,pass,passes,gpu_ms,invocations,bytes,floor_ms\n"
                     "# floors row: kind,,,,,fill_gpix,bandwidth_gbs,dispatch_us,upload_gbs\n");
    floors fl;
    measure_floors(&fl);
    printf("floors: fragment fill %.2f Gpixel/s (640x480 copy pass), compute copy %.1f GB/s (4096x4096 RGBA8), "
           "dependent dispatch %.2f us, upload from pinned memory %.1f GB/s (1920x1080 RGBA8)\n",
           fl.fill_gpix, fl.bandwidth_gbs, fl.dispatch_us, fl.upload_gbs);
    if (csv)
        fprintf(csv, "floors,,,,,%.3f,%.3f,%.3f,%.3f\n", fl.fill_gpix, fl.bandwidth_gbs, fl.dispatch_us,
                fl.upload_gbs);

    for (int si = 0; si < o.n_sizes; si++) {
        frames f;
        if (make_frames(&f, o.sizes[si][0], o.sizes[si][1]) != 0) {
            fprintf(stderr, "segment_bench: cannot make frames\n");
            return 1;
        }
        printf("\n%dx%d: ms per frame (paper, GeForce 6800GT, 640x480, 8 iterations: T1000 4.38, T1 4.82, "
               "T1+up 6.6, T1+up+dn 7.9)\n",
               f.width, f.height);
        printf("  %-9s %5s %10s %10s %12s %10s %10s %10s %12s\n", "mode", "iter", "T1000", "T1000+up",
               "T1000+upRGB", "T1", "T1+up", "T1+up+dn", "T1+up(copy)");
        for (int mi = 0; mi < o.n_modes; mi++) {
            for (int ii = 0; ii < o.n_iterations; ii++) {
                row r;
                if (measure(&f, o.modes[mi], o.iterations[ii], o.frames, &r) != 0) {
                    printf("  %-9s: not available here\n", glcv_engine_mode_string(o.modes[mi]));
                    break;
                }
                printf("  %-9s %5d %10.4f %10.4f %12.4f %10.4f %10.4f %10.4f %12.4f\n",
                       glcv_engine_mode_string(r.mode), r.iterations, r.t1000, r.t1000_up, r.t1000_up_rgb, r.t1,
                       r.t1_up, r.t1_updn, r.t1_copy);
                fflush(stdout);
                if (csv)
                    fprintf(csv, "frame,%d,%d,%s,%d,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f,%.5f\n", r.width, r.height,
                            glcv_engine_mode_string(r.mode), r.iterations, r.t1000, r.t1000_up, r.t1, r.t1_up,
                            r.t1_updn, r.t1_copy, r.t1000_up_rgb);
            }
        }
        for (int mi = 0; mi < o.n_modes; mi++)
            if (o.modes[mi] != GLCV_ENGINE_CPU)
                per_pass_table(&f, o.modes[mi], 8, &fl, csv);
        if (o.peers_dir) {
            char dir[512];
            snprintf(dir, sizeof dir, "%.400s/%dx%d", o.peers_dir, f.width, f.height);
            printf("\npeers on the same frames (%s):\n", dir);
            run_peers(&f, dir, csv);
        }
        free_frames(&f);
    }
    if (csv)
        fclose(csv);
    glcv_context_destroy(&ctx);
    return 0;
}
