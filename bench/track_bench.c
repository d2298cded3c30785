/* track_bench: CAMSHIFT per-frame times at 1920x1080 - the CUDA engine's kernels on a frame
 * already on the GPU (with and without the HSV/bin conversion, 1 and 64 objects, windows of
 * 200x200, 400x400 and 1080x720, every cluster size for one object), the whole call from host
 * pixels and from a GL texture, and the CPU implementation - beside Perry's figures.
 *
 * usage: track_bench [--runs N] [--csv FILE] [--quick]
 *
 * The texture rows go through glcv_track_frame_texture (the CUDA bridge: GL copy, flush, buffer
 * map), for an RGBA8 frame texture alone and with an R8 mask texture.
 *
 * Kernel times are CUDA-event times over N frames queued back to back (every frame starts from the
 * same windows, so each runs the same iterations), divided by N. The objects' blobs sit 6 pixels
 * off their windows' centres, so the mean shift iterates before it converges. Without a CUDA
 * device only the CPU rows are measured. */
#define _POSIX_C_SOURCE 200809L

#include <glcv/glcv.h>

#include "benchutil.h"
#include "track_internal.h"

#include <epoxy/gl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W = 1920, H = 1080, MAX_OBJ = 64 };

/* An 8 x 8 grid of coloured discs on a grey, lightly textured background. */
static void make_frame(glcv_image *img)
{
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uint8_t *p = img->data + ((size_t)y * W + (size_t)x) * 4;
            uint8_t g = (uint8_t)(100 + ((x / 16 + y / 16) & 1) * 30 + ((x * 7 + y * 13) & 7));
            p[0] = p[1] = p[2] = g;
            p[3] = 255;
        }
    for (int k = 0; k < MAX_OBJ; k++) {
        int cx = 120 + (k % 8) * 240 + 6, cy = 68 + (k / 8) * 135 + 6;
        uint8_t r = (uint8_t)(200 + (k % 3) * 20), gg = (uint8_t)(40 + (k % 5) * 30), b = (uint8_t)(30 + (k % 7) * 20);
        for (int y = cy - 40; y <= cy + 40; y++)
            for (int x = cx - 40; x <= cx + 40; x++)
                if (x >= 0 && y >= 0 && x < W && y < H && (x - cx) * (x - cx) + (y - cy) * (y - cy) <= 1600) {
                    uint8_t *p = img->data + ((size_t)y * W + (size_t)x) * 4;
                    p[0] = r;
                    p[1] = gg;
                    p[2] = b;
                }
    }
}

/* Object k's window: centred 6 pixels off its blob (clipped to the frame). */
static glcv_rect window_of(int k, int n, int ww, int wh)
{
    (void)n;
    int cx = 120 + (k % 8) * 240, cy = 68 + (k / 8) * 135;
    int x = cx - ww / 2, y = cy - wh / 2;
    x = x < 0 ? 0 : x + ww > W ? W - ww : x;
    y = y < 0 ? 0 : y + wh > H ? H - wh : y;
    return (glcv_rect){x, y, ww, wh};
}

static unsigned int upload_texture(const glcv_image *img)
{
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, img->width, img->height, 0, GL_RGBA, GL_UNSIGNED_BYTE, img->data);
    glBindTexture(GL_TEXTURE_2D, 0);
    return tex;
}

static glcv_track *make_tracker(glcv_engine_mode engine, const glcv_image *frame, int n, int ww, int wh)
{
    glcv_track_params p = GLCV_TRACK_PARAMS(.width = W, .height = H, .max_objects = MAX_OBJ, .engine = engine,
                                            .logger = {glcv_log_stderr, NULL, GLCV_LOG_WARN});
    glcv_track *tr = NULL;
    if (glcv_track_create(&p, &tr) != GLCV_OK)
        return NULL;
    glcv_track_hist *h = calloc(1, sizeof *h);
    for (int k = 0; k < n && h; k++) {
        int cx = 120 + (k % 8) * 240 + 6, cy = 68 + (k / 8) * 135 + 6, id = -1;
        glcv_track_hist_compute(tr, frame, NULL, (glcv_rect){cx - 30, cy - 30, 60, 60}, h);
        glcv_track_add(tr, h, window_of(k, n, ww, wh), &id);
    }
    free(h);
    return tr;
}

typedef struct row {
    char what[64];
    int objects;
    char window[16];
    int hsv;
    int cluster;
    double ms;
} row;

static row g_rows[128];
static int g_n_rows;

static void record(const char *what, int objects, int ww, int wh, int hsv, int cluster, double ms)
{
    if (g_n_rows == 128)
        return;
    row *r = &g_rows[g_n_rows++];
    snprintf(r->what, sizeof r->what, "%s", what);
    r->objects = objects;
    snprintf(r->window, sizeof r->window, "%dx%d", ww, wh);
    r->hsv = hsv;
    r->cluster = cluster;
    r->ms = ms;
    printf("%-34s %3d objects  window %-9s  %-9s  cluster %2d  %9.4f ms\n", what, objects, r->window,
           hsv < 0 ? "" : hsv ? "with HSV" : "no HSV", cluster, ms);
    fflush(stdout);
}

/* CUDA kernels on a frame on the device. */
static void cuda_kernels(const glcv_image *frame, int runs, int quick)
{
    static const int windows[3][2] = {{200, 200}, {400, 400}, {1080, 720}};
    static const int object_counts[2] = {1, 64};
    for (int o = 0; o < 2; o++) {
        for (int wi = 0; wi < 3; wi++) {
            int n = object_counts[o], ww = windows[wi][0], wh = windows[wi][1];
            glcv_track *tr = make_tracker(GLCV_ENGINE_CUDA, frame, n, ww, wh);
            if (!tr)
                return;
            glcv_rect win[MAX_OBJ];
            for (int k = 0; k < n; k++)
                win[k] = window_of(k, n, ww, wh);
            glcv_track_frame(tr, frame, NULL);
            int count = 0;
            glcv_track_result res[MAX_OBJ];
            glcv_track_results(tr, res, MAX_OBJ, &count);
            if (glcv_track_bench_prepare(tr, win, n) != GLCV_OK) {
                glcv_track_destroy(&tr);
                return;
            }
            static const int clusters[6] = {0, 1, 2, 4, 8, 16};
            int n_clusters = n == 1 && !quick ? 6 : 1;
            for (int ci = 0; ci < n_clusters; ci++) {
                if (glcv_track_set_cuda_cluster(tr, clusters[ci]) != GLCV_OK)
                    continue;
                for (int hsv = 1; hsv >= 0; hsv--) {
                    double ms = 0;
                    glcv_track_bench_time(tr, hsv, 10, &ms); /* warm-up */
                    if (glcv_track_bench_time(tr, hsv, runs, &ms) != GLCV_OK)
                        continue;
                    int used = glcv_track_cuda_cluster_used(tr);
                    if (clusters[ci] && used != clusters[ci])
                        continue; /* the device cannot run this cluster size */
                    record(clusters[ci] ? "cuda kernels" : "cuda kernels (automatic cluster)", n, ww, wh, hsv,
                           used, ms);
                }
            }
            glcv_track_destroy(&tr);
        }
    }
}

/* The whole call from host pixels (upload + kernels + results), median wall time. */
static void whole_calls(glcv_engine_mode engine, const char *what, const glcv_image *frame, int n, int ww, int wh,
                        int runs)
{
    glcv_track *tr = make_tracker(engine, frame, n, ww, wh);
    if (!tr)
        return;
    double *t = calloc((size_t)runs, sizeof *t);
    glcv_track_result res[MAX_OBJ];
    for (int r = -3; r < runs && t; r++) {
        for (int k = 0; k < n; k++)
            glcv_track_set_window(tr, k, window_of(k, n, ww, wh));
        int count = 0;
        double t0 = bench_now_ms();
        glcv_track_frame(tr, frame, NULL);
        glcv_track_results(tr, res, MAX_OBJ, &count);
        if (r >= 0)
            t[r] = bench_now_ms() - t0;
    }
    if (t) {
        record(what, n, ww, wh, -1, 0, bench_median(t, runs));
    }
    free(t);
    glcv_track_destroy(&tr);
}

/* The whole call from a GL texture (an RGBA8 frame and, with_mask, an R8 mask of ones): the
 * hand-over through the CUDA bridge + kernels + results, median wall time. A run over 1 s ends
 * the row early (said so), so a pathological hand-over cannot eat the whole benchmark. */
static void texture_calls(const glcv_image *frame, int with_mask, int runs)
{
    glcv_track *tr = make_tracker(GLCV_ENGINE_CUDA, frame, 1, 1080, 720);
    unsigned int tex = upload_texture(frame), mask = 0;
    if (with_mask) {
        uint8_t *ones = malloc((size_t)W * H);
        if (ones) {
            memset(ones, 255, (size_t)W * H);
            glGenTextures(1, &mask);
            glBindTexture(GL_TEXTURE_2D, mask);
            glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
            glTexImage2D(GL_TEXTURE_2D, 0, GL_R8, W, H, 0, GL_RED, GL_UNSIGNED_BYTE, ones);
            glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
            glBindTexture(GL_TEXTURE_2D, 0);
            free(ones);
        }
    }
    glFinish();
    double *t = calloc((size_t)runs, sizeof *t);
    int done = 0;
    if (tr && tex && (mask || !with_mask) && t) {
        glcv_track_result res[1];
        for (int r = -3; r < runs; r++) {
            glcv_track_set_window(tr, 0, window_of(0, 1, 1080, 720));
            int count = 0;
            double t0 = bench_now_ms();
            glcv_status st = glcv_track_frame_texture(tr, tex, mask);
            if (st == GLCV_OK)
                st = glcv_track_results(tr, res, 1, &count);
            double dt = bench_now_ms() - t0;
            if (st != GLCV_OK) {
                printf("texture row: call failed: %s\n", glcv_status_string(st));
                break;
            }
            if (r == -3)
                printf("texture row%s: first call %.3f ms (creates the bridge)\n", with_mask ? " with mask" : "",
                       dt);
            if (r >= 0)
                t[done++] = dt;
            if (dt > 1000) {
                printf("texture row%s: a call took %.0f ms (> 1 s): row ended after %d runs\n",
                       with_mask ? " with mask" : "", dt, done);
                break;
            }
        }
    }
    if (done > 0)
        record(with_mask ? "cuda: frame + mask from GL textures" : "cuda: frame from GL texture + results", 1, 1080,
               720, -1, 0, bench_median(t, done));
    free(t);
    glcv_track_destroy(&tr);
    glDeleteTextures(1, &tex);
    if (mask)
        glDeleteTextures(1, &mask);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* a pipe (tee) would otherwise hold everything until exit */
    int runs = 200, quick = 0;
    const char *csv = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
            csv = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else {
            fprintf(stderr, "usage: track_bench [--runs N] [--csv FILE] [--quick]\n");
            return 2;
        }
    }
    if (runs < 1)
        runs = 1;
    glcv_image frame;
    if (glcv_image_alloc(W, H, GLCV_PIXEL_RGBA8, &frame) != GLCV_OK)
        return 1;
    make_frame(&frame);
    glcv_cuda_info info;
    glcv_cuda_query(&info);
    printf("track_bench: %dx%d RGBA8, %d runs per row; %s\n", W, H, runs, info.text);
    printf("Perry 2016 (GTX 970, dynamic parallelism), 1080x720 window: 0.97 ms per frame for one object "
           "(0.57 ms HSV with the upload + 0.40 ms convergence), 1.4 ms for two; CPU 22.3 ms.\n");
    if (info.devices > 0) {
        cuda_kernels(&frame, runs, quick);
        whole_calls(GLCV_ENGINE_CUDA, "cuda: frame from host + results", &frame, 1, 1080, 720, runs / 4 + 1);
        whole_calls(GLCV_ENGINE_CUDA, "cuda: frame from host + results", &frame, 64, 200, 200, runs / 4 + 1);

        /* from a GL texture, when the GL context is on the CUDA device */
        glcv_context *ctx = NULL;
        glcv_context_params cp = GLCV_CONTEXT_PARAMS(.min_gl_version = 33);
        if (glcv_context_create(&cp, &ctx) == GLCV_OK) {
            glcv_cuda_query(&info);
            if (info.gl_device >= 0) {
                texture_calls(&frame, 0, runs / 4 + 1);
                texture_calls(&frame, 1, runs / 4 + 1);
            } else {
                printf("(the GL context is not on a CUDA device: no texture-input row)\n");
            }
            glcv_context_destroy(&ctx);
        }
    } else {
        printf("no CUDA device: CPU rows only\n");
    }
    whole_calls(GLCV_ENGINE_CPU, "cpu: frame + results", &frame, 1, 200, 200, quick ? 3 : 10);
    whole_calls(GLCV_ENGINE_CPU, "cpu: frame + results", &frame, 1, 1080, 720, quick ? 3 : 10);
    if (!quick)
        whole_calls(GLCV_ENGINE_CPU, "cpu: frame + results", &frame, 64, 200, 200, 5);
    if (csv) {
        FILE *f = fopen(csv, "w");
        if (f) {
            fprintf(f, "what,objects,window,hsv,cluster,ms\n");
            for (int i = 0; i < g_n_rows; i++)
                fprintf(f, "%s,%d,%s,%d,%d,%.5f\n", g_rows[i].what, g_rows[i].objects, g_rows[i].window,
                        g_rows[i].hsv, g_rows[i].cluster, g_rows[i].ms);
            fclose(f);
        }
    }
    glcv_image_free(&frame);
    return 0;
}
