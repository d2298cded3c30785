/* track_bench: the tracker's per-frame times. DCF (--dcf, the default method): the whole call, host
 * frame or GL texture to results, for 1 and 64 objects in 1920x1080 and for 1,000 objects over 64
 * cameras of 640x480 (a set: host images, or texture arrays with one hand-over), on CUDA and on
 * the CPU engine (all its threads); the mean of the frames (objects learn on every second one).
 * CAMSHIFT (without --dcf): per-frame times at 1920x1080 - the CUDA engine's kernels on a frame
 * already on the GPU (with and without the HSV/bin conversion, 1 and 64 objects, windows of
 * 200x200, 400x400 and 1080x720, every cluster size unless --quick), the whole call from host
 * pixels and from a GL texture, and the CPU implementation - beside Perry's figures; then many
 * cameras: S streams of 640x480 (default 64) with one object each (a 100x100 window), as one
 * tracker of S streams fed texture arrays (glcv_track_frames_texture: frames and masks, one
 * hand-over per set) against S trackers of one stream fed 2D textures (glcv_track_frame_texture:
 * S hand-overs per set), in the same run: ms per set and per stream, medians of many sets after
 * warm-up, each set's results waited for.
 *
 * usage: track_bench [--dcf] [--runs N] [--streams S] [--csv FILE] [--quick] [--window opencv|paper|adaptive]
 *
 * The texture rows go through glcv_track_frame_texture (the CUDA bridge: registered textures read
 * in place), for an RGBA8 frame texture alone and with an R8 mask texture.
 *
 * Kernel times are CUDA-event times over N frames queued back to back (every frame starts from the
 * same windows, so each runs the same iterations), divided by N. The objects' blobs sit 6 pixels
 * off their windows' centres, so the mean shift iterates before it converges. Without a CUDA
 * device only the CPU rows are measured, and the many-camera comparison runs on the CPU engine
 * (a few sets: it checks the code path, its times are not the point). */
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
/* The many-camera comparison: VGA cameras, one object each. */
enum { CAM_W = 640, CAM_H = 480, CAM_WINDOW = 100 };

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

static glcv_track_window g_window = GLCV_TRACK_WINDOW_OPENCV; /* --window */
static int g_devices = 1; /* the trackers' cuda_devices */

static glcv_track *make_tracker(glcv_engine_mode engine, const glcv_image *frame, int n, int ww, int wh)
{
    glcv_track_params p = GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = W, .height = H,
                                            .max_objects = MAX_OBJ, .engine = engine, .window = g_window,
                                            .cuda_devices = engine == GLCV_ENGINE_CPU ? 0 : g_devices,
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
            int n_clusters = !quick ? 6 : 1;
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

/* ---- many cameras: one tracker of S streams and one hand-over per set, against S trackers ------ */

/* Camera s's frame (RGBA8, CAM_W x CAM_H): a grey textured background and a coloured disc of
 * radius 30 whose place and colour depend on s. */
static void make_camera_frame(glcv_image *img, int s)
{
    int cx = 100 + (s * 37) % (CAM_W - 200), cy = 100 + (s * 53) % (CAM_H - 200);
    uint8_t r = (uint8_t)(200 + (s % 3) * 20), g = (uint8_t)(40 + (s % 5) * 30), b = (uint8_t)(30 + (s % 7) * 20);
    for (int y = 0; y < CAM_H; y++)
        for (int x = 0; x < CAM_W; x++) {
            uint8_t *p = img->data + ((size_t)y * CAM_W + (size_t)x) * 4;
            if ((x - cx) * (x - cx) + (y - cy) * (y - cy) <= 900) {
                p[0] = r, p[1] = g, p[2] = b;
            } else {
                p[0] = p[1] = p[2] = (uint8_t)(90 + ((x / 16 + y / 16 + s) & 1) * 40 + ((x * 7 + y * 13 + s) & 7));
            }
            p[3] = 255;
        }
}

/* Camera s's object window: 100 x 100, centred 6 pixels off its disc. */
static glcv_rect camera_window(int s)
{
    int cx = 100 + (s * 37) % (CAM_W - 200) - 6, cy = 100 + (s * 53) % (CAM_H - 200) - 6;
    return (glcv_rect){cx - CAM_WINDOW / 2, cy - CAM_WINDOW / 2, CAM_WINDOW, CAM_WINDOW};
}

/* A tracker of `streams` streams (1: a camera's own) with camera first..first+count-1's objects. */
static glcv_track *camera_tracker(glcv_engine_mode engine, int streams, const glcv_image *frames, int first,
                                  int count)
{
    glcv_track_params p = GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = CAM_W, .height = CAM_H,
                                            .streams = streams,
                                            .max_objects = count, .engine = engine, .window = g_window,
                                            .logger = {glcv_log_stderr, NULL, GLCV_LOG_WARN});
    glcv_track *tr = NULL;
    if (glcv_track_create(&p, &tr) != GLCV_OK)
        return NULL;
    glcv_track_hist *h = calloc(1, sizeof *h);
    glcv_status st = h ? GLCV_OK : GLCV_ERROR_OUT_OF_MEMORY;
    for (int k = 0; k < count && st == GLCV_OK; k++) {
        int s = first + k, id = -1;
        glcv_rect w = camera_window(s);
        glcv_rect disc = {w.x + 26, w.y + 26, 60, 60};
        st = glcv_track_hist_compute(tr, &frames[s], NULL, disc, h);
        if (st == GLCV_OK)
            st = glcv_track_add_to_stream(tr, streams > 1 ? s : 0, h, w, &id);
    }
    free(h);
    if (st != GLCV_OK)
        glcv_track_destroy(&tr);
    return tr;
}

/* Every object of a tracker back at its first window (the same work every set). */
static void camera_reset(glcv_track *tr, int first, int count)
{
    for (int k = 0; k < count; k++)
        glcv_track_set_window(tr, k, camera_window(first + k));
}

static GLuint camera_texture(GLenum target, GLenum internal, GLenum format, int layers, const uint8_t *const *px)
{
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(target, tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    if (target == GL_TEXTURE_2D) {
        glTexImage2D(target, 0, (GLint)internal, CAM_W, CAM_H, 0, format, GL_UNSIGNED_BYTE, px[0]);
    } else {
        glTexImage3D(target, 0, (GLint)internal, CAM_W, CAM_H, layers, 0, format, GL_UNSIGNED_BYTE, NULL);
        for (int l = 0; l < layers; l++)
            glTexSubImage3D(target, 0, 0, 0, l, CAM_W, CAM_H, 1, format, GL_UNSIGNED_BYTE, px[l]);
    }
    glTexParameteri(target, GL_TEXTURE_MAX_LEVEL, 0);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glBindTexture(target, 0);
    return tex;
}

/* The comparison on `engine` (a GL context current): `sets` timed sets after `warm` untimed ones. */
static void camera_sets(glcv_engine_mode engine, int streams, int sets, int warm)
{
    const char *name = glcv_engine_mode_string(engine);
    glcv_image *frames = calloc((size_t)streams, sizeof *frames);
    const uint8_t **px = calloc((size_t)streams, sizeof *px), **mpx = calloc((size_t)streams, sizeof *mpx);
    uint8_t *ones = malloc((size_t)CAM_W * CAM_H);
    glcv_track **singles = calloc((size_t)streams, sizeof *singles);
    GLuint *tex = calloc((size_t)streams, sizeof *tex), *mask = calloc((size_t)streams, sizeof *mask);
    glcv_track_result *res = calloc((size_t)streams, sizeof *res);
    double *t_set = calloc((size_t)sets, sizeof *t_set), *t_single = calloc((size_t)sets, sizeof *t_single);
    glcv_track *batched = NULL;
    GLuint frames_array = 0, masks_array = 0;
    int made = 0;
    if (!frames || !px || !mpx || !ones || !singles || !tex || !mask || !res || !t_set || !t_single)
        goto done;
    memset(ones, 255, (size_t)CAM_W * CAM_H);
    for (; made < streams; made++) {
        if (glcv_image_alloc(CAM_W, CAM_H, GLCV_PIXEL_RGBA8, &frames[made]) != GLCV_OK)
            goto done;
        make_camera_frame(&frames[made], made);
        px[made] = frames[made].data;
        mpx[made] = ones;
    }
    frames_array = camera_texture(GL_TEXTURE_2D_ARRAY, GL_RGBA8, GL_RGBA, streams, px);
    masks_array = camera_texture(GL_TEXTURE_2D_ARRAY, GL_R8, GL_RED, streams, mpx);
    batched = camera_tracker(engine, streams, frames, 0, streams);
    for (int s = 0; s < streams; s++) {
        tex[s] = camera_texture(GL_TEXTURE_2D, GL_RGBA8, GL_RGBA, 1, &px[s]);
        mask[s] = camera_texture(GL_TEXTURE_2D, GL_R8, GL_RED, 1, &mpx[s]);
        singles[s] = camera_tracker(engine, 1, frames, s, 1);
        if (!singles[s])
            goto done;
    }
    glFinish();
    if (!batched)
        goto done;
    int lost = 0, lost_single = 0;
    for (int r = -warm; r < sets; r++) {
        int count = 0;
        camera_reset(batched, 0, streams);
        double t0 = bench_now_ms();
        glcv_status st = glcv_track_frames_texture(batched, frames_array, masks_array);
        if (st == GLCV_OK)
            st = glcv_track_results(batched, res, streams, &count);
        double dt = bench_now_ms() - t0;
        for (int s = 0; s < streams; s++)
            camera_reset(singles[s], s, 1);
        double t1 = bench_now_ms();
        for (int s = 0; s < streams && st == GLCV_OK; s++)
            st = glcv_track_frame_texture(singles[s], tex[s], mask[s]);
        for (int s = 0; s < streams && st == GLCV_OK; s++) {
            glcv_track_result one;
            int n = 0;
            st = glcv_track_results(singles[s], &one, 1, &n);
            lost_single += r == sets - 1 && one.lost;
        }
        double dt_single = bench_now_ms() - t1;
        if (st != GLCV_OK) {
            printf("cameras (%s): a call failed: %s\n", name, glcv_status_string(st));
            goto done;
        }
        if (r >= 0) {
            t_set[r] = dt;
            t_single[r] = dt_single;
        }
        for (int k = 0; r == sets - 1 && k < count; k++)
            lost += res[k].lost != 0;
    }
    glcv_track_texture_stats ts;
    glcv_track_texture_stats_get(batched, &ts);
    double ms = bench_median(t_set, sets), ms_single = bench_median(t_single, sets);
    char what[64];
    snprintf(what, sizeof what, "%s: %d cameras, texture arrays", name, streams);
    record(what, streams, CAM_WINDOW, CAM_WINDOW, -1, 0, ms);
    printf("    %.4f ms per stream; one call per set (%s); %d of %d objects lost\n", ms / streams,
           engine != GLCV_ENGINE_CUDA ? "layers read back through GL"
           : ts.direct                ? "one hand-over, the arrays read in place"
                                      : "one hand-over, through the pixel buffer",
           lost, streams);
    snprintf(what, sizeof what, "%s: %d cameras, 2D textures", name, streams);
    record(what, streams, CAM_WINDOW, CAM_WINDOW, -1, 0, ms_single);
    printf("    %.4f ms per stream; %d trackers, %d calls per set%s; %d of %d objects lost; the arrays are %.1fx "
           "faster\n",
           ms_single / streams, streams, streams, engine == GLCV_ENGINE_CUDA ? " (as many hand-overs)" : "",
           lost_single, streams, ms > 0 ? ms_single / ms : 0.0);
done:
    if (made < streams || !batched)
        printf("cameras (%s): the trackers or frames could not be made\n", name);
    for (int s = 0; singles && s < streams; s++) {
        glcv_track_forget_texture(singles[s], tex[s]);
        glcv_track_forget_texture(singles[s], mask[s]);
        glcv_track_destroy(&singles[s]);
    }
    if (batched) {
        glcv_track_forget_texture(batched, frames_array);
        glcv_track_forget_texture(batched, masks_array);
        glcv_track_destroy(&batched);
    }
    for (int s = 0; tex && s < streams; s++) {
        glDeleteTextures(1, &tex[s]);
        glDeleteTextures(1, &mask[s]);
    }
    glDeleteTextures(1, &frames_array);
    glDeleteTextures(1, &masks_array);
    for (int s = 0; s < made; s++)
        glcv_image_free(&frames[s]);
    free(frames);
    free(px);
    free(mpx);
    free(ones);
    free(singles);
    free(tex);
    free(mask);
    free(res);
    free(t_set);
    free(t_single);
}

/* ---- DCF ---------------------------------------------------------------------------------------- */

/* A DCF tracker of `streams` frames of w x h with `n` objects: object k in stream k % streams, an
 * 80 x 80 box (1080p: around disc k % 64; cameras: around the camera's disc, then on its
 * background, each object its own box). */
static glcv_track *dcf_tracker(glcv_engine_mode engine, int w, int h, int streams, int n)
{
    glcv_track_params p = GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_DCF, .width = w, .height = h,
                                            .streams = streams, .max_objects = n, .engine = engine,
                                            .logger = {glcv_log_stderr, NULL, GLCV_LOG_WARN});
    glcv_track *tr = NULL;
    if (glcv_track_create(&p, &tr) != GLCV_OK)
        return NULL;
    for (int k = 0; k < n; k++) {
        int id = -1, s = k % streams, j = k / streams;
        glcv_rect box;
        if (w == W) {
            box = (glcv_rect){120 + (k % 64 % 8) * 240 + 6 - 40, 68 + (k % 64 / 8) * 135 + 6 - 40, 80, 80};
        } else {
            int cx = 100 + (s * 37) % (CAM_W - 200), cy = 100 + (s * 53) % (CAM_H - 200);
            box = (glcv_rect){(cx - 40 + j * 97) % (CAM_W - 80), (cy - 40 + j * 61) % (CAM_H - 80), 80, 80};
        }
        if (glcv_track_add_to_stream(tr, s, NULL, box, &id) != GLCV_OK) {
            glcv_track_destroy(&tr);
            return NULL;
        }
    }
    return tr;
}

/* The mean whole call (frames or texture arrays in, results out) over `runs` frames after 3 that
 * learn and warm up; the objects keep tracking the same frames. CUDA: `cluster` blocks an object
 * (0: the engine's choice); a size the device cannot run is left out. */
static void dcf_row(const char *what, glcv_engine_mode engine, const glcv_image *frames, int streams, unsigned int tex,
                    int n, int runs, int cluster)
{
    glcv_track *tr = dcf_tracker(engine, frames[0].width, frames[0].height, streams, n);
    if (tr && cluster && glcv_track_set_cuda_cluster(tr, cluster) != GLCV_OK)
        glcv_track_destroy(&tr);
    glcv_track_result *res = calloc((size_t)n, sizeof *res);
    double *t = calloc((size_t)runs, sizeof *t);
    int done = 0, lost = 0;
    for (int r = -3; r < runs && tr && res && t; r++) {
        int count = 0;
        double t0 = bench_now_ms();
        glcv_status st = tex ? streams > 1 ? glcv_track_frames_texture(tr, tex, 0) : glcv_track_frame_texture(tr, tex, 0)
                             : glcv_track_frames(tr, frames, NULL, streams);
        if (st == GLCV_OK)
            st = glcv_track_results(tr, res, n, &count);
        double dt = bench_now_ms() - t0;
        if (st != GLCV_OK) {
            printf("%s: a call failed: %s\n", what, glcv_status_string(st));
            break;
        }
        if (r >= 0)
            t[done++] = dt;
        for (int k = 0; r == runs - 1 && k < count; k++)
            lost += res[k].lost != 0;
    }
    if (done > 0) {
        /* the mean: an object learns on every second frame, so a lone object's frames alternate */
        double sum = 0, slowest = 0;
        for (int i = 0; i < done; i++) {
            sum += t[i];
            slowest = t[i] > slowest ? t[i] : slowest;
        }
        const double mean = sum / done, median = bench_median(t, done);
        const int used = glcv_track_cuda_cluster_used(tr);
        if (cluster && used != cluster) {
            printf("    (%d blocks an object asked, %d run: left out)\n", cluster, used);
        } else {
            record(what, n, 80, 80, -1, used, mean);
            printf("    mean %.4f ms (median %.4f, slowest %.4f); %.4f ms per object; %d of %d objects lost at the last "
                   "frame\n",
                   mean, median, slowest, mean / n, lost, n);
        }
    }
    free(t);
    free(res);
    glcv_track_destroy(&tr);
}

static void dcf_rows(const glcv_image *frame, int runs, int quick)
{
    glcv_cuda_info info;
    glcv_cuda_query(&info);
    const int cams = 64, many = 1000;
    glcv_image *cam = calloc(cams, sizeof *cam);
    const uint8_t **px = calloc(cams, sizeof *px);
    for (int s = 0; cam && px && s < cams; s++) {
        if (glcv_image_alloc(CAM_W, CAM_H, GLCV_PIXEL_RGBA8, &cam[s]) != GLCV_OK)
            return;
        make_camera_frame(&cam[s], s);
        px[s] = cam[s].data;
    }
    if (!cam || !px)
        return;
    printf("DCF: 80x80 boxes; 1920x1080 frames; %d cameras of %dx%d, objects spread over them\n", cams, CAM_W, CAM_H);
    if (info.devices > 0) {
        dcf_row("dcf cuda: 1080p host frame", GLCV_ENGINE_CUDA, frame, 1, 0, 1, runs, 0);
        dcf_row("dcf cuda: 1080p host frame", GLCV_ENGINE_CUDA, frame, 1, 0, 64, runs, 0);
        dcf_row("dcf cuda: 64 cameras, host set", GLCV_ENGINE_CUDA, cam, cams, 0, 64, runs, 0);
        dcf_row("dcf cuda: 64 cameras, host set", GLCV_ENGINE_CUDA, cam, cams, 0, many, runs, 0);
    }
    glcv_context *ctx = NULL;
    glcv_context_params cp = GLCV_CONTEXT_PARAMS(.min_gl_version = 33);
    if (info.devices > 0 && glcv_context_create(&cp, &ctx) == GLCV_OK) {
        glcv_cuda_query(&info);
        if (info.gl_device >= 0) {
            unsigned int tex = upload_texture(frame);
            unsigned int arr = camera_texture(GL_TEXTURE_2D_ARRAY, GL_RGBA8, GL_RGBA, cams, px);
            glFinish();
            dcf_row("dcf cuda: 1080p GL texture", GLCV_ENGINE_CUDA, frame, 1, tex, 1, runs, 0);
            dcf_row("dcf cuda: 64 cameras, texture array", GLCV_ENGINE_CUDA, cam, cams, arr, 64, runs, 0);
            dcf_row("dcf cuda: 64 cameras, texture array", GLCV_ENGINE_CUDA, cam, cams, arr, many, runs, 0);
            /* every cluster size for one object, and 1 and 2 blocks for 64 */
            for (int c = 1; !quick && c <= 16; c *= 2)
                dcf_row("dcf cuda: 1080p GL texture", GLCV_ENGINE_CUDA, frame, 1, tex, 1, runs, c);
            for (int c = 1; !quick && c <= 2; c *= 2)
                dcf_row("dcf cuda: 64 cameras, texture array", GLCV_ENGINE_CUDA, cam, cams, arr, 64, runs, c);
            glDeleteTextures(1, &tex);
            glDeleteTextures(1, &arr);
        }
        glcv_context_destroy(&ctx);
    }
    dcf_row("dcf cpu: 1080p host frame", GLCV_ENGINE_CPU, frame, 1, 0, 1, quick ? 5 : 30, 0);
    dcf_row("dcf cpu: 1080p host frame", GLCV_ENGINE_CPU, frame, 1, 0, 64, quick ? 2 : 5, 0);
    if (!quick)
        dcf_row("dcf cpu: 64 cameras, host set", GLCV_ENGINE_CPU, cam, cams, 0, many, 2, 0);
    for (int s = 0; s < cams; s++)
        glcv_image_free(&cam[s]);
    free(cam);
    free(px);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* a pipe (tee) would otherwise hold everything until exit */
    int runs = 200, quick = 0, streams = 64, dcf = 0;
    const char *csv = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (strcmp(argv[i], "--streams") == 0 && i + 1 < argc)
            streams = atoi(argv[++i]);
        else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
            csv = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--dcf") == 0)
            dcf = 1;
        else if (strcmp(argv[i], "--window") == 0 && i + 1 < argc && !strcmp(argv[i + 1], "opencv"))
            g_window = GLCV_TRACK_WINDOW_OPENCV, i++;
        else if (strcmp(argv[i], "--window") == 0 && i + 1 < argc && !strcmp(argv[i + 1], "paper"))
            g_window = GLCV_TRACK_WINDOW_PAPER, i++;
        else if (strcmp(argv[i], "--window") == 0 && i + 1 < argc && !strcmp(argv[i + 1], "adaptive"))
            g_window = GLCV_TRACK_WINDOW_ADAPTIVE, i++;
        else {
            fprintf(stderr, "usage: track_bench [--dcf] [--runs N] [--streams S] [--csv FILE] [--quick] "
                            "[--window opencv|paper|adaptive]\n");
            return 2;
        }
    }
    if (streams < 1 || streams > GLCV_TRACK_MAX_OBJECTS) {
        fprintf(stderr, "track_bench: --streams takes 1..%d (one object each)\n", GLCV_TRACK_MAX_OBJECTS);
        return 2;
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
    if (dcf) {
        dcf_rows(&frame, runs, quick);
        goto out;
    }
    printf("Perry 2016 (GTX 970, dynamic parallelism), 1080x720 window: 0.97 ms per frame for one object "
           "(0.57 ms HSV with the upload + 0.40 ms convergence), 1.4 ms for two; CPU 22.3 ms.\n");
    if (info.devices > 0) {
        cuda_kernels(&frame, runs, quick);
        whole_calls(GLCV_ENGINE_CUDA, "cuda: frame from host + results", &frame, 1, 1080, 720, runs / 4 + 1);
        whole_calls(GLCV_ENGINE_CUDA, "cuda: frame from host + results", &frame, 64, 200, 200, runs / 4 + 1);
        if (info.devices > 1) {
            /* the objects spread over the devices (id % devices), each device given the frame */
            printf("objects spread over 1..%d devices, frame from host + results (wall time):\n", info.devices);
            for (int d = 1; d <= info.devices; d++) {
                char what[64];
                g_devices = d;
                snprintf(what, sizeof what, "cuda: %d device%s, host frame + results", d, d == 1 ? "" : "s");
                whole_calls(GLCV_ENGINE_CUDA, what, &frame, 64, 1080, 720, runs / 4 + 1);
                whole_calls(GLCV_ENGINE_CUDA, what, &frame, 64, 400, 400, runs / 4 + 1);
            }
            g_devices = 1;
        }
    } else {
        printf("no CUDA device: the CUDA rows, and the many-camera comparison on CUDA, are skipped\n");
    }
    /* from GL textures: when the GL context is on the CUDA device, CUDA's texture rows and the
     * many-camera comparison; the comparison on the CPU engine in any case (a few sets) */
    glcv_context *ctx = NULL;
    glcv_context_params cp = GLCV_CONTEXT_PARAMS(.min_gl_version = 33);
    if (glcv_context_create(&cp, &ctx) == GLCV_OK) {
        glcv_cuda_query(&info);
        if (info.devices > 0 && info.gl_device >= 0) {
            texture_calls(&frame, 0, runs / 4 + 1);
            texture_calls(&frame, 1, runs / 4 + 1);
            printf("%d cameras of %dx%d, one object each (window %dx%d), frames and masks from GL textures, "
                   "results waited for every set:\n",
                   streams, CAM_W, CAM_H, CAM_WINDOW, CAM_WINDOW);
            camera_sets(GLCV_ENGINE_CUDA, streams, quick ? 20 : runs, 5);
        } else if (info.devices > 0) {
            printf("(the GL context is not on a CUDA device: no texture-input rows)\n");
        }
        printf("%d cameras of %dx%d on the CPU engine (layers read back through GL), for reference:\n", streams,
               CAM_W, CAM_H);
        camera_sets(GLCV_ENGINE_CPU, streams, quick ? 1 : 3, 1);
        glcv_context_destroy(&ctx);
    } else {
        printf("no GL context: no texture-input rows\n");
    }
    whole_calls(GLCV_ENGINE_CPU, "cpu: frame + results", &frame, 1, 200, 200, quick ? 3 : 10);
    whole_calls(GLCV_ENGINE_CPU, "cpu: frame + results", &frame, 1, 1080, 720, quick ? 3 : 10);
    if (!quick)
        whole_calls(GLCV_ENGINE_CPU, "cpu: frame + results", &frame, 64, 200, 200, 5);
out:
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
