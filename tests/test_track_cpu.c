/* The tracker on its CPU engine (no GL, no CUDA): OpenCV's HSV, exact moments of known blobs,
 * cv::CamShift's box, moving and many objects, lost and recovered objects, the paper's window,
 * histogram files, and the API's validation. */
#define _GNU_SOURCE
#include "testutil.h"
#include "test_track_scene.h"
#include "track_internal.h"

#include <glcv/glcv.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* RGB and cv::cvtColor(COLOR_RGB2HSV)'s H, S, V, computed with OpenCV 4.6 (the implementation
 * was also checked against OpenCV on all 2^24 colours: identical). */
static const int hsv_reference[][6] = {
    {139, 74, 229, 133, 173, 229}, {241, 169, 65, 18, 186, 241}, {6, 160, 149, 88, 245, 160},
    {106, 38, 175, 135, 200, 175}, {188, 205, 175, 47, 37, 205},  {229, 98, 249, 146, 155, 249},
    {10, 148, 95, 78, 238, 148},   {86, 147, 198, 104, 144, 198}, {66, 39, 106, 132, 161, 106},
    {213, 171, 45, 22, 201, 213},  {167, 57, 69, 177, 168, 167},  {81, 55, 14, 18, 211, 81},
    {153, 178, 215, 108, 74, 215}, {76, 52, 39, 11, 124, 76},     {250, 72, 215, 156, 182, 250},
    {50, 161, 223, 101, 198, 223}, {112, 172, 161, 85, 89, 172},  {233, 38, 17, 3, 236, 233},
    {89, 1, 221, 132, 254, 221},   {6, 242, 127, 75, 249, 242},   {143, 6, 60, 168, 244, 143},
    {210, 94, 25, 11, 225, 210},   {166, 33, 249, 138, 221, 249}, {189, 12, 204, 148, 240, 204},
    {33, 57, 124, 112, 187, 124},  {30, 199, 149, 81, 217, 199},  {202, 119, 72, 11, 164, 202},
    {220, 3, 209, 152, 252, 220},  {122, 136, 147, 103, 43, 147}, {77, 133, 82, 63, 107, 133},
    {115, 87, 162, 131, 118, 162}, {230, 70, 71, 0, 177, 230},    {240, 62, 47, 2, 205, 240},
    {184, 31, 34, 179, 212, 184},  {63, 65, 146, 119, 145, 146},  {197, 142, 253, 135, 112, 253},
    {81, 133, 240, 110, 169, 240}, {113, 30, 247, 131, 224, 247}, {103, 122, 31, 36, 190, 122},
    {19, 42, 129, 114, 217, 129},  {255, 0, 0, 0, 255, 255},      {0, 255, 0, 60, 255, 255},
    {0, 0, 255, 120, 255, 255},    {255, 255, 0, 30, 255, 255},   {0, 255, 255, 90, 255, 255},
    {255, 0, 255, 150, 255, 255},  {128, 128, 128, 0, 0, 128},    {0, 0, 0, 0, 0, 0},
    {255, 255, 255, 0, 0, 255},    {1, 0, 0, 0, 255, 1},          {0, 1, 1, 90, 255, 1},
    {200, 10, 11, 0, 242, 200},    {10, 200, 11, 60, 242, 200},   {254, 255, 255, 90, 1, 255},
    {3, 2, 1, 15, 170, 3},         {17, 250, 128, 74, 238, 250},
};

static glcv_track_params cpu_params(int w, int h)
{
    glcv_track_params p = GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = w, .height = h, .engine = GLCV_ENGINE_CPU,
                                            .logger = test_logger());
    return p;
}

/* A tracker on the CPU engine; NULL, the failure recorded, when it cannot be made. */
static glcv_track *cpu_tracker(int w, int h)
{
    glcv_track_params p = cpu_params(w, h);
    glcv_track *tr = NULL;
    CHECK_OK(glcv_track_create(&p, &tr));
    return tr;
}

static void test_hsv(void)
{
    glcv_tm_tables t;
    glcv_track_cpu_tables(&t, 60, 1);
    for (size_t i = 0; i < sizeof hsv_reference / sizeof hsv_reference[0]; i++) {
        const int *r = hsv_reference[i];
        uint32_t v = glcv_tm_hsv(&t, r[0], r[1], r[2]);
        int h = (int)(v & 255), s = (int)(v >> 8 & 255), val = (int)(v >> 16);
        CHECK(h == r[3] && s == r[4] && val == r[5], "RGB %d,%d,%d: HSV %d,%d,%d, OpenCV %d,%d,%d", r[0], r[1], r[2],
              h, s, val, r[3], r[4], r[5]);
    }
    /* cv::calcHist's bins: 60 bins over 0..179 are 3 hues wide; hues >= 180 are outside */
    CHECK(t.hue_bin[0] == 0 && t.hue_bin[2] == 0 && t.hue_bin[3] == 1 && t.hue_bin[179] == 59 &&
              t.hue_bin[180] == -1,
          "hue bins %d %d %d %d %d", t.hue_bin[0], t.hue_bin[2], t.hue_bin[3], t.hue_bin[179], t.hue_bin[180]);
    glcv_track_cpu_tables(&t, 16, 8);
    CHECK(t.hue_bin[11] == 0 && t.hue_bin[12] == 1 && t.sat_bin[31] == 0 && t.sat_bin[32] == 1 &&
              t.sat_bin[255] == 7,
          "16 x 8 bins: %d %d %d %d %d", t.hue_bin[11], t.hue_bin[12], t.sat_bin[31], t.sat_bin[32], t.sat_bin[255]);
}

/* Brute-force moments of a blob's back-projection (255 inside) in window r, relative to r. */
static void blob_moments(const scene_blob *b, glcv_rect r, double m[6])
{
    memset(m, 0, 6 * sizeof m[0]);
    for (int y = 0; y < r.height; y++)
        for (int x = 0; x < r.width; x++)
            if (scene_inside(b, r.x + x, r.y + y)) {
                m[0] += 255;
                m[1] += 255.0 * x;
                m[2] += 255.0 * y;
                m[3] += 255.0 * x * y;
                m[4] += 255.0 * x * x;
                m[5] += 255.0 * y * y;
            }
}

static int add_from_frame(glcv_track *tr, const glcv_image *frame, glcv_rect roi)
{
    glcv_track_hist *h = malloc(sizeof *h);
    int id = -1;
    CHECK(h != NULL, "out of memory");
    if (!h)
        return -1;
    CHECK_OK(glcv_track_hist_compute(tr, frame, NULL, roi, h));
    CHECK_OK(glcv_track_add(tr, h, roi, &id));
    free(h);
    return id;
}

static void test_exact_moments(void)
{
    const int w = 160, h = 120;
    glcv_image frame;
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &frame));
    /* a 20 x 40 red rectangle: columns 40..59, rows 30..69 */
    scene_blob blob = {50, 50, 10, 20, 0, 1, 255, 0, 0};
    scene_draw(&frame, &blob, 1, 1);
    glcv_track *tr = cpu_tracker(w, h);
    glcv_track_hist *hist = calloc(1, sizeof *hist);
    CHECK_OK(glcv_track_hist_compute(tr, &frame, NULL, (glcv_rect){40, 30, 20, 40}, hist));
    /* only the red bin is set: the grey background has no saturation */
    int nonzero = 0;
    for (int b = 0; b < 60; b++)
        nonzero += hist->value[b] != 0;
    CHECK(nonzero == 1 && hist->value[0] == 255.0f, "histogram: %d bins set, bin 0 = %g", nonzero,
          (double)hist->value[0]);
    int id = -1;
    CHECK_OK(glcv_track_add(tr, hist, (glcv_rect){35, 25, 30, 50}, &id));
    CHECK_OK(glcv_track_frame(tr, &frame, NULL));
    glcv_track_result r;
    int count = 0;
    CHECK_OK(glcv_track_results(tr, &r, 1, &count));
    CHECK(count == 1 && r.id == id, "results: %d, id %d", count, r.id);
    /* centred already: one iteration, then the window grown by 10 a side */
    CHECK(r.iterations == 1, "iterations %d", r.iterations);
    CHECK(r.measured.x == 25 && r.measured.y == 15 && r.measured.width == 50 && r.measured.height == 70,
          "measured window %d,%d %dx%d", r.measured.x, r.measured.y, r.measured.width, r.measured.height);
    double m[6];
    blob_moments(&blob, r.measured, m);
    double got[6] = {r.m00, r.m10, r.m01, r.m11, r.m20, r.m02};
    for (int i = 0; i < 6; i++)
        CHECK(got[i] == m[i], "moment %d: %.17g, exact %.17g", i, got[i], m[i]);
    /* cv::CamShift's box: axes 4 sqrt(variance) of a uniform 20 x 40 block, major axis vertical */
    double minor = 4.0 * sqrt((20.0 * 20.0 - 1.0) / 12.0), major = 4.0 * sqrt((40.0 * 40.0 - 1.0) / 12.0);
    CHECK(fabs(r.width - minor) < 1e-4 && fabs(r.height - major) < 1e-4, "box %g x %g, expected %g x %g",
          (double)r.width, (double)r.height, minor, major);
    CHECK(fabs(r.angle) < 1e-4 || fabs(r.angle - 180) < 1e-4, "angle %g, expected 0", (double)r.angle);
    CHECK(fabs(r.cx - 50) <= 1 && fabs(r.cy - 50) <= 1, "centre %g,%g", (double)r.cx, (double)r.cy);
    CHECK(r.lost == 0 && r.distance < 0.05, "lost %u, distance %g", r.lost, r.distance);
    free(hist);
    glcv_track_destroy(&tr);
    glcv_image_free(&frame);
}

/* An ellipse turned by 30 degrees: cv::CamShift's angle is that of the major axis from the
 * vertical, (90 + theta) in OpenCV's convention. */
static void test_rotated_box(void)
{
    const int w = 200, h = 200;
    glcv_image frame;
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &frame));
    for (int k = 0; k < 3; k++) {
        double angle = 30.0 + 50.0 * k; /* of the rx (major) axis from the x axis */
        scene_blob blob = {100, 100, 40, 15, angle, 0, 0, 0, 255};
        scene_draw(&frame, &blob, 1, 2);
        glcv_track *tr = cpu_tracker(w, h);
        add_from_frame(tr, &frame, (glcv_rect){60, 60, 80, 80});
        for (int f = 0; f < 3; f++)
            CHECK_OK(glcv_track_frame(tr, &frame, NULL));
        glcv_track_result r;
        int count = 0;
        CHECK_OK(glcv_track_results(tr, &r, 1, &count));
        /* OpenCV's angle: 90 when the major axis is horizontal; the image's y axis points down,
         * so an axis turned by `angle` from x reads 90 + angle (mod 180) */
        double expect = fmod(90.0 + angle, 180.0);
        double diff = fabs(r.angle - expect);
        diff = diff > 90 ? 180 - diff : diff;
        CHECK(diff < 1.5, "ellipse at %g degrees: box angle %g, expected %g", angle, (double)r.angle, expect);
        CHECK(fabs(r.height - 80) < 4 && fabs(r.width - 30) < 3, "ellipse 80 x 30: box %g x %g", (double)r.height,
              (double)r.width);
        CHECK(fabs(r.cx - 100) <= 1.5 && fabs(r.cy - 100) <= 1.5, "centre %g,%g", (double)r.cx, (double)r.cy);
        glcv_track_destroy(&tr);
    }
    glcv_image_free(&frame);
}

static void test_moving(void)
{
    const int w = 320, h = 240;
    glcv_image frame, bgr;
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &frame));
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_BGRA8, &bgr));
    glcv_track *tr = NULL, *tr_bgr = NULL;
    glcv_track_params p = cpu_params(w, h);
    CHECK_OK(glcv_track_create(&p, &tr));
    CHECK_OK(glcv_track_create(&p, &tr_bgr));
    double max_err = 0;
    for (int f = 0; f < 40; f++) {
        scene_blob blob = {60 + 4.0 * f, 80 + 2.5 * f, 14, 18, 10.0 * f, 0, 40, 200, 90};
        scene_draw(&frame, &blob, 1, (uint32_t)f);
        CHECK_OK(glcv_image_convert(&frame, &bgr));
        if (f == 0) {
            add_from_frame(tr, &frame, (glcv_rect){46, 62, 28, 36});
            add_from_frame(tr_bgr, &bgr, (glcv_rect){46, 62, 28, 36});
        }
        CHECK_OK(glcv_track_frame(tr, &frame, NULL));
        CHECK_OK(glcv_track_frame(tr_bgr, &bgr, NULL));
        glcv_track_result r, rb;
        int n = 0, nb = 0;
        CHECK_OK(glcv_track_results(tr, &r, 1, &n));
        CHECK_OK(glcv_track_results(tr_bgr, &rb, 1, &nb));
        double err = hypot(r.cx - blob.cx, r.cy - blob.cy);
        max_err = err > max_err ? err : max_err;
        CHECK(err < 2.0 && r.lost == 0, "frame %d: centre %g,%g, blob at %g,%g (error %.2f), lost %u", f,
              (double)r.cx, (double)r.cy, blob.cx, blob.cy, err, r.lost);
        CHECK(memcmp(&r, &rb, sizeof r) == 0, "frame %d: RGB8 and BGRA8 input differ", f);
    }
    printf("moving blob: 40 frames, largest centre error %.2f px\n", max_err);
    glcv_track_destroy(&tr);
    glcv_track_destroy(&tr_bgr);
    glcv_image_free(&frame);
    glcv_image_free(&bgr);
}

/* ADAPTIVE mode: a solid rectangle's box is its extent (sqrt(12 var)); a size change is followed
 * at a guarded rate; the filter learns a constant velocity, so the window is already on the
 * object when it arrives; behind an occluder the box coasts on and the object is found again. */
static void test_adaptive(void)
{
    const int w = 320, h = 240;
    glcv_image frame;
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &frame));
    glcv_track_params p = cpu_params(w, h);
    p.window = GLCV_TRACK_WINDOW_ADAPTIVE;
    glcv_track *tr = NULL;
    CHECK_OK(glcv_track_create(&p, &tr));
    glcv_track_result r;
    int n = 0;
    double cx = 0;
    for (int f = 0; f < 60; f++) {
        /* 20 x 40 pixels moving 4 px a frame right; 30 x 60 from frame 30 (closer); hidden in 44..47 */
        cx = 40.0 + 4.0 * f;
        scene_blob blob = {cx, 120, f < 30 ? 10 : 15, f < 30 ? 20 : 30, 0, 1, 40, 200, 90};
        scene_draw(&frame, &blob, f >= 44 && f < 48 ? 0 : 1, (uint32_t)f);
        if (f == 0)
            add_from_frame(tr, &frame, (glcv_rect){30, 100, 20, 40});
        CHECK_OK(glcv_track_frame(tr, &frame, NULL));
        CHECK_OK(glcv_track_results(tr, &r, 1, &n));
        CHECK(r.angle == 0 && r.bbox.width >= 1, "frame %d: angle %g bbox %dx%d", f, (double)r.angle, r.bbox.width,
              r.bbox.height);
        if (f == 29) {
            CHECK(fabs(r.width - 20) < 1.0 && fabs(r.height - 40) < 1.0, "frame 29: box %g x %g, the object 20 x 40",
                  (double)r.width, (double)r.height);
            CHECK(fabs(r.cx - cx) < 1.5 && fabs(r.cy - 120) < 1.0, "frame 29: centre %g,%g, the object's %g,120",
                  (double)r.cx, (double)r.cy, cx);
            /* the next window is centred where the object will be */
            double next = r.window.x + r.window.width * 0.5;
            CHECK(fabs(next - (cx + 4.0)) < 1.5, "frame 29: next window centred at x %g, the object will be at %g", next,
                  cx + 4.0);
        }
        if (f == 30 || f == 31)
            CHECK(r.width < 20 * 1.13 + 0.5, "frame %d: width %g grew by more than 1/8 in a frame", f, (double)r.width);
        if (f == 43)
            CHECK(fabs(r.width - 30) < 1.5 && fabs(r.height - 60) < 3.0, "frame 43: box %g x %g, the object 30 x 60",
                  (double)r.width, (double)r.height);
        if (f >= 44 && f < 48) {
            CHECK(r.lost != 0, "frame %d: the object is hidden, not lost", f);
            CHECK(r.cx > cx - 4.0 * (f - 43) + 2.0, "frame %d: the box stopped at %g (hidden since x %g)", f,
                  (double)r.cx, cx - 4.0 * (f - 43));
        }
        if (f == 59)
            CHECK(!r.lost && fabs(r.cx - cx) < 2.0, "frame 59: centre %g lost %u, the object at %g", (double)r.cx, r.lost,
                  cx);
    }
    glcv_track_destroy(&tr);
    glcv_image_free(&frame);
}

/* 80 objects on one frame, each moving its own way; blobs of six hues, windows apart. */
static void test_many(void)
{
    enum { N = 80, COLS = 10 };
    const int w = 800, h = 640;
    static const uint8_t colours[6][3] = {{255, 40, 40}, {40, 220, 40}, {40, 60, 255},
                                          {230, 220, 30}, {30, 210, 220}, {220, 40, 220}};
    glcv_image frame;
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &frame));
    scene_blob blobs[N];
    glcv_track_params p = cpu_params(w, h);
    p.max_objects = 100;
    glcv_track *tr = NULL;
    CHECK_OK(glcv_track_create(&p, &tr));
    int worst = 0;
    for (int f = 0; f < 12; f++) {
        for (int k = 0; k < N; k++) {
            double dx = ((k * 7) % 5 - 2) * 1.0, dy = ((k * 3) % 5 - 2) * 1.0;
            const uint8_t *c = colours[k % 6];
            blobs[k] = (scene_blob){40 + 80.0 * (k % COLS) + dx * f, 40 + 80.0 * (k / COLS) + dy * f, 12, 9,
                                    (double)(k * 17 % 180), 0, c[0], c[1], c[2]};
        }
        scene_draw(&frame, blobs, N, (uint32_t)f);
        if (f == 0)
            for (int k = 0; k < N; k++) {
                int id = add_from_frame(tr, &frame,
                                        (glcv_rect){(int)blobs[k].cx - 14, (int)blobs[k].cy - 14, 28, 28});
                CHECK(id == k, "object %d got id %d", k, id);
            }
        CHECK_OK(glcv_track_frame(tr, &frame, NULL));
        glcv_track_result r[N];
        int n = 0;
        CHECK_OK(glcv_track_results(tr, r, N, &n));
        CHECK(n == N, "%d results", n);
        for (int k = 0; k < n && k < N; k++) {
            double err = hypot(r[k].cx - blobs[k].cx, r[k].cy - blobs[k].cy);
            if (err >= 2.0 || r[k].lost)
                worst++;
            CHECK(err < 2.0 && r[k].lost == 0, "frame %d object %d: error %.2f px, lost %u", f, k, err, r[k].lost);
        }
    }
    printf("80 objects: 12 frames, %d misses\n", worst);
    /* max_objects */
    glcv_track_hist *hist = calloc(1, sizeof *hist);
    CHECK_OK(glcv_track_get_hist(tr, 0, hist));
    int id = -1;
    for (int k = N; k < 100; k++)
        CHECK_OK(glcv_track_add(tr, hist, (glcv_rect){0, 0, 10, 10}, &id));
    CHECK_STATUS(glcv_track_add(tr, hist, (glcv_rect){0, 0, 10, 10}, &id), GLCV_ERROR_STATE);
    CHECK_OK(glcv_track_remove(tr, 42));
    CHECK_OK(glcv_track_add(tr, hist, (glcv_rect){0, 0, 10, 10}, &id));
    CHECK(id == 42, "the freed id 42 is given again (got %d)", id);
    free(hist);
    glcv_track_destroy(&tr);
    glcv_image_free(&frame);
}

/* A blob that vanishes is lost (no mass); when it comes back elsewhere, the whole-frame search
 * finds it. */
static void test_lost_recovered(void)
{
    const int w = 320, h = 240;
    glcv_image frame;
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &frame));
    glcv_track_params p = cpu_params(w, h);
    glcv_track *tr = NULL;
    CHECK_OK(glcv_track_create(&p, &tr));
    int lost_seen = 0, recovered_at = -1;
    for (int f = 0; f < 30; f++) {
        scene_blob blob = {80, 80, 15, 15, 0, 0, 250, 120, 20};
        if (f >= 10 && f < 15)
            blob.rx = 0; /* gone */
        if (f >= 15)
            blob.cx = 240, blob.cy = 170; /* back, far away */
        scene_draw(&frame, &blob, 1, (uint32_t)f);
        if (f == 0)
            add_from_frame(tr, &frame, (glcv_rect){65, 65, 30, 30});
        CHECK_OK(glcv_track_frame(tr, &frame, NULL));
        glcv_track_result r;
        int n = 0;
        CHECK_OK(glcv_track_results(tr, &r, 1, &n));
        if (f < 10)
            CHECK(r.lost == 0, "frame %d: lost %u before the blob vanished", f, r.lost);
        if (f >= 10 && f < 15) {
            CHECK(r.lost & GLCV_TRACK_LOST_MASS, "frame %d: the blob is gone but not lost (m00 %g)", f, r.m00);
            lost_seen++;
        }
        if (f >= 15 && recovered_at < 0 && r.lost == 0 && hypot(r.cx - 240, r.cy - 170) < 3)
            recovered_at = f;
        if (f == 10 || f == 12)
            CHECK(r.window.width < w, "frame %d: lost for %d frames, the next window is already the frame", f,
                  f - 9);
        if (f == 13)
            CHECK(r.window.width == w && r.window.height == h, "frame 13: lost 4 frames, the next window is %dx%d, "
                                                               "not the frame", r.window.width, r.window.height);
    }
    CHECK(lost_seen == 5, "lost in %d of the 5 frames without the blob", lost_seen);
    CHECK(recovered_at >= 15 && recovered_at <= 18, "recovered at frame %d (the blob is back at frame 15)",
          recovered_at);
    printf("lost at frame 10, recovered at frame %d\n", recovered_at);
    glcv_track_destroy(&tr);

    /* With RECOVERY_NONE a lost object keeps its own window (cv::CamShift grows it by 20 pixels
     * a frame while it holds nothing) instead of searching the whole frame. */
    p.recovery = GLCV_TRACK_RECOVERY_NONE;
    CHECK_OK(glcv_track_create(&p, &tr));
    glcv_track_result r;
    int n = 0;
    for (int f = 0; f < 12; f++) {
        scene_blob blob = {80, 80, 15, 15, 0, 0, 250, 120, 20};
        if (f >= 10)
            blob.cx = 240, blob.cy = 170;
        scene_draw(&frame, &blob, 1, (uint32_t)f);
        if (f == 0)
            add_from_frame(tr, &frame, (glcv_rect){65, 65, 30, 30});
        CHECK_OK(glcv_track_frame(tr, &frame, NULL));
        CHECK_OK(glcv_track_results(tr, &r, 1, &n));
        if (f == 10)
            CHECK(r.lost != 0 && r.window.width < 100, "no recovery: lost %u, next window %dx%d", r.lost,
                  r.window.width, r.window.height);
    }
    glcv_track_destroy(&tr);

    /* The histogram criterion: the model is mostly orange with a little red; a red blob alone
     * back-projects to some mass, but its histogram is far from the model's. */
    p = cpu_params(w, h);
    CHECK_OK(glcv_track_create(&p, &tr));
    scene_blob two[2] = {{80, 80, 15, 15, 0, 0, 250, 120, 20}, {80, 80, 15, 15, 0, 0, 250, 40, 20}};
    glcv_track_hist *hist = calloc(2, sizeof *hist);
    scene_draw(&frame, &two[0], 1, 0);
    CHECK_OK(glcv_track_hist_compute(tr, &frame, NULL, (glcv_rect){65, 65, 30, 30}, &hist[0]));
    scene_draw(&frame, &two[1], 1, 0);
    CHECK_OK(glcv_track_hist_compute(tr, &frame, NULL, (glcv_rect){65, 65, 30, 30}, &hist[1]));
    for (int b = 0; b < 60; b++)
        hist[0].value[b] += hist[1].value[b] * (40.0f / 255.0f);
    int id = -1;
    CHECK_OK(glcv_track_add(tr, &hist[0], (glcv_rect){65, 65, 30, 30}, &id));
    CHECK_OK(glcv_track_frame(tr, &frame, NULL));
    CHECK_OK(glcv_track_results(tr, &r, 1, &n));
    double expect = sqrt(1.0 - sqrt(40.0 / 295.0)); /* 0.795 > 0.7 */
    CHECK(fabs(r.distance - expect) < 1e-6 && r.m00 > 0 && r.lost == GLCV_TRACK_LOST_HISTOGRAM,
          "other colour: distance %g (expected %g), m00 %g, lost %u", r.distance, expect, r.m00, r.lost);
    free(hist);
    glcv_track_destroy(&tr);
    glcv_image_free(&frame);
}

static void test_mask_and_limits(void)
{
    const int w = 160, h = 120;
    glcv_image frame, mask;
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &frame));
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_GRAY8, &mask));
    scene_blob blobs[2] = {{50, 60, 12, 12, 0, 0, 30, 30, 240}, {110, 60, 12, 12, 0, 0, 30, 30, 240}};
    scene_draw(&frame, blobs, 2, 3);
    /* the mask keeps the right blob only */
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            mask.data[(size_t)y * (size_t)w + (size_t)x] = x >= 80 ? 255 : 0;
    glcv_track_params p = cpu_params(w, h);
    glcv_track *tr = NULL;
    CHECK_OK(glcv_track_create(&p, &tr));
    glcv_track_hist *hist = calloc(1, sizeof *hist);
    CHECK_OK(glcv_track_hist_compute(tr, &frame, &mask, (glcv_rect){0, 0, w, h}, hist));
    int id = -1;
    CHECK_OK(glcv_track_add(tr, hist, (glcv_rect){0, 0, w, h}, &id));
    CHECK_OK(glcv_track_frame(tr, &frame, &mask));
    glcv_track_result r;
    int n = 0;
    CHECK_OK(glcv_track_results(tr, &r, 1, &n));
    CHECK(fabs(r.cx - 110) <= 1.5 && fabs(r.cy - 60) <= 1.5, "with the mask: centre %g,%g, expected 110,60",
          (double)r.cx, (double)r.cy);
    /* without it, the two blobs pull the centre between them */
    CHECK_OK(glcv_track_set_window(tr, id, (glcv_rect){0, 0, w, h}));
    CHECK_OK(glcv_track_frame(tr, &frame, NULL));
    CHECK_OK(glcv_track_results(tr, &r, 1, &n));
    CHECK(fabs(r.cx - 80) <= 3, "without the mask: centre x %g, expected about 80", (double)r.cx);
    /* limits: with v_min above the blobs' value, nothing counts */
    CHECK_OK(glcv_track_set_limits(tr, 30, 250, 255));
    CHECK_OK(glcv_track_set_window(tr, id, (glcv_rect){90, 40, 40, 40}));
    CHECK_OK(glcv_track_frame(tr, &frame, NULL));
    CHECK_OK(glcv_track_results(tr, &r, 1, &n));
    CHECK(r.m00 == 0 && (r.lost & GLCV_TRACK_LOST_MASS), "v_min 250: m00 %g, lost %u", r.m00, r.lost);
    CHECK_STATUS(glcv_track_set_limits(tr, 0, 200, 100), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_track_set_limits(tr, 256, 0, 255), GLCV_ERROR_INVALID_ARGUMENT);
    free(hist);
    glcv_track_destroy(&tr);

    /* hue x saturation: two blobs of one hue, different saturations, told apart */
    p.sat_bins = 8;
    CHECK_OK(glcv_track_create(&p, &tr));
    scene_blob pale[2] = {{50, 60, 12, 12, 0, 0, 240, 40, 40}, {110, 60, 12, 12, 0, 0, 240, 160, 160}};
    scene_draw(&frame, pale, 2, 4);
    hist = calloc(1, sizeof *hist);
    CHECK_OK(glcv_track_hist_compute(tr, &frame, NULL, (glcv_rect){98, 48, 24, 24}, hist));
    CHECK(hist->sat_bins == 8 && hist->hue_bins == 60, "2-D histogram bins %d x %d", hist->hue_bins, hist->sat_bins);
    CHECK_OK(glcv_track_add(tr, hist, (glcv_rect){0, 0, w, h}, &id));
    CHECK_OK(glcv_track_frame(tr, &frame, NULL));
    CHECK_OK(glcv_track_results(tr, &r, 1, &n));
    CHECK(fabs(r.cx - 110) <= 1.5, "2-D histogram: centre x %g, expected 110", (double)r.cx);
    free(hist);
    glcv_track_destroy(&tr);
    glcv_image_free(&frame);
    glcv_image_free(&mask);
}

/* PAPER mode: width = 2 sqrt(M00 / 255), height = 1.2 width; and the minimum window. */
static void test_paper_window(void)
{
    const int w = 240, h = 200;
    glcv_image frame;
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &frame));
    scene_blob blob = {120, 100, 15, 15, 0, 1, 255, 0, 0}; /* a 30 x 30 square: M00 = 255 * 900 */
    scene_draw(&frame, &blob, 1, 5);
    glcv_track_params p = cpu_params(w, h);
    p.window = GLCV_TRACK_WINDOW_PAPER;
    glcv_track *tr = NULL;
    CHECK_OK(glcv_track_create(&p, &tr));
    add_from_frame(tr, &frame, (glcv_rect){100, 80, 40, 40});
    glcv_track_result r;
    int n = 0;
    for (int f = 0; f < 4; f++)
        CHECK_OK(glcv_track_frame(tr, &frame, NULL));
    CHECK_OK(glcv_track_results(tr, &r, 1, &n));
    /* the window 2 * 30 = 60 wide and 72 high holds the whole square */
    CHECK(r.window.width == 60 && r.window.height == 72, "paper window %dx%d, expected 60x72", r.window.width,
          r.window.height);
    CHECK(fabs(r.width - 60) < 1e-3 && fabs(r.height - 72) < 1e-3, "paper box %g x %g", (double)r.width,
          (double)r.height);
    CHECK(fabs(r.cx - 120) < 1e-3 && fabs(r.cy - 100) < 1e-3 && r.angle == 0, "paper centre %g,%g angle %g",
          (double)r.cx, (double)r.cy, (double)r.angle);
    glcv_track_destroy(&tr);

    /* a blob of 2 x 2 pixels: the window shrinks below 20 pixels and is reset to 200 wide */
    p.window = GLCV_TRACK_WINDOW_OPENCV;
    p.lost_criteria = GLCV_TRACK_LOST_ITERATIONS;
    CHECK_OK(glcv_track_create(&p, &tr));
    blob = (scene_blob){120, 100, 1, 1, 0, 1, 255, 0, 0};
    scene_blob big = {120, 100, 10, 10, 0, 1, 255, 0, 0};
    scene_draw(&frame, &big, 1, 5);
    add_from_frame(tr, &frame, (glcv_rect){110, 90, 20, 20});
    scene_draw(&frame, &blob, 1, 5);
    CHECK_OK(glcv_track_frame(tr, &frame, NULL));
    CHECK_OK(glcv_track_results(tr, &r, 1, &n));
    CHECK(r.window.width == 200, "a tiny window is reset to 200 wide (got %dx%d)", r.window.width, r.window.height);
    glcv_track_destroy(&tr);
    glcv_image_free(&frame);
}

static void test_hist_files(void)
{
    char dir[] = "/tmp/glcv_track_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    char path[256], bad[256];
    snprintf(path, sizeof path, "%s/model.hist", dir);
    snprintf(bad, sizeof bad, "%s/bad.hist", dir);
    glcv_track_hist *h = calloc(3, sizeof *h), *back = calloc(4, sizeof *back);
    for (int k = 0; k < 2; k++) {
        h[k].hue_bins = k ? 30 : 60;
        h[k].sat_bins = k ? 4 : 1;
        for (int b = 0; b < h[k].hue_bins * h[k].sat_bins; b++)
            h[k].value[b] = (float)((b * 37 + k * 11) % 256) * (b % 3 ? 1.0f : 0.3333f);
    }
    CHECK_OK(glcv_track_hist_save(path, h, 2, NULL));
    int n = 0;
    CHECK_OK(glcv_track_hist_load(path, back, 4, &n, NULL));
    CHECK(n == 2, "loaded %d histograms", n);
    for (int k = 0; k < 2 && k < n; k++) {
        CHECK(back[k].hue_bins == h[k].hue_bins && back[k].sat_bins == h[k].sat_bins, "bins differ");
        CHECK(memcmp(back[k].value, h[k].value, sizeof(float) * (size_t)(h[k].hue_bins * h[k].sat_bins)) == 0,
              "histogram %d: values differ after a round trip", k);
    }
    double d = -1;
    CHECK_OK(glcv_track_hist_distance(&h[0], &back[0], &d));
    CHECK(d < 1e-6, "distance to itself %g", d);
    memset(&h[2], 0, sizeof h[2]);
    h[2].hue_bins = 60;
    h[2].sat_bins = 1;
    h[2].value[59] = 255;
    h[0].value[59] = 0;
    CHECK_OK(glcv_track_hist_distance(&h[0], &h[2], &d));
    CHECK(fabs(d - 1) < 1e-9, "disjoint histograms: distance %g", d);
    CHECK_STATUS(glcv_track_hist_distance(&h[0], &h[1], &d), GLCV_ERROR_INVALID_ARGUMENT);

    static const char *const corrupt[] = {
        "not a histogram\n",
        "glcv-track-hist 2\nhist 2 1\n1 2\n",
        "glcv-track-hist 1\nhist 0 1\n",
        "glcv-track-hist 1\nhist 3 1\n1 2\n",
        "glcv-track-hist 1\nhist 2 1\n1 256\n",
        "glcv-track-hist 1\nhist 2 1\n1 x\n",
        "glcv-track-hist 1\n# nothing\n",
    };
    for (size_t i = 0; i < sizeof corrupt / sizeof corrupt[0]; i++) {
        FILE *f = fopen(bad, "w");
        fputs(corrupt[i], f);
        fclose(f);
        CHECK_STATUS(glcv_track_hist_load(bad, back, 4, &n, NULL), GLCV_ERROR_CORRUPT_DATA);
    }
    FILE *f = fopen(bad, "w");
    fputs("glcv-track-hist 1 # comment\nhist 2 1 # two bins\n 1.5\n\t255 # end\n", f);
    fclose(f);
    CHECK_OK(glcv_track_hist_load(bad, back, 4, &n, NULL));
    CHECK(n == 1 && back[0].value[0] == 1.5f && back[0].value[1] == 255.0f, "comments: %d, %g %g", n,
          (double)back[0].value[0], (double)back[0].value[1]);
    CHECK_STATUS(glcv_track_hist_load("/nonexistent/x.hist", back, 4, &n, NULL), GLCV_ERROR_IO);
    /* a folder: an input/output error that says so, not "not a histogram file" */
    capture cap;
    glcv_logger lg = capture_logger(&cap);
    CHECK_STATUS(glcv_track_hist_load(dir, back, 4, &n, &lg), GLCV_ERROR_IO);
    CHECK(cap.count > 0 && strstr(cap.last, "is a folder"), "a folder as histogram file: '%s'", cap.last);
    CHECK_STATUS(glcv_track_hist_save("/nonexistent/x.hist", h, 1, NULL), GLCV_ERROR_IO);
    remove(path);
    remove(bad);
    rmdir(dir);
    free(h);
    free(back);
}

static void test_api(void)
{
    glcv_track *tr = (glcv_track *)1;
    CHECK_STATUS(glcv_track_create(NULL, &tr), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(tr == NULL, "*out is NULL on error");
    glcv_track_params p = GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = 0, .height = 10);
    CHECK_STATUS(glcv_track_create(&p, &tr), GLCV_ERROR_INVALID_ARGUMENT);
    p = cpu_params(16385, 10);
    CHECK_STATUS(glcv_track_create(&p, &tr), GLCV_ERROR_INVALID_ARGUMENT);
    p = cpu_params(64, 48);
    p.hue_bins = 181;
    CHECK_STATUS(glcv_track_create(&p, &tr), GLCV_ERROR_INVALID_ARGUMENT);
    p.hue_bins = 180;
    p.sat_bins = 32;
    CHECK_STATUS(glcv_track_create(&p, &tr), GLCV_ERROR_INVALID_ARGUMENT);
    p = cpu_params(64, 48);
    p.epsilon = NAN;
    CHECK_STATUS(glcv_track_create(&p, &tr), GLCV_ERROR_INVALID_ARGUMENT);
    p = cpu_params(64, 48);
    p.lost_criteria = 16;
    CHECK_STATUS(glcv_track_create(&p, &tr), GLCV_ERROR_INVALID_ARGUMENT);
    p = cpu_params(64, 48);
    p.max_objects = GLCV_TRACK_MAX_OBJECTS + 1;
    CHECK_STATUS(glcv_track_create(&p, &tr), GLCV_ERROR_INVALID_ARGUMENT);
    /* rectangles far outside any frame: refused before any sum of them can overflow an int */
    p = cpu_params(64, 48);
    CHECK_OK(glcv_track_create(&p, &tr));
    if (tr) {
        glcv_image f;
        CHECK_OK(glcv_image_alloc(64, 48, GLCV_PIXEL_RGB8, &f));
        memset(f.data, 90, f.stride * 48);
        glcv_track_hist *h = calloc(1, sizeof *h);
        int id = -1;
        CHECK_OK(glcv_track_hist_compute(tr, &f, NULL, (glcv_rect){0, 0, 8, 8}, h));
        static const glcv_rect far[] = {{INT_MAX - 10, 0, 100, 10}, {0, INT_MAX - 1, 10, 10}, {-INT_MAX, 0, 10, 10},
                                        {0, 0, INT_MAX, 10}, {5, 5, 10, INT_MAX}, {1 << 25, 0, 10, 10}};
        for (size_t i = 0; i < sizeof far / sizeof far[0]; i++) {
            CHECK_STATUS(glcv_track_add(tr, h, far[i], &id), GLCV_ERROR_INVALID_ARGUMENT);
            CHECK_STATUS(glcv_track_hist_compute(tr, &f, NULL, far[i], h), GLCV_ERROR_INVALID_ARGUMENT);
            CHECK_STATUS(glcv_track_hist_weight_background(tr, &f, far[i], h), GLCV_ERROR_INVALID_ARGUMENT);
        }
        CHECK_OK(glcv_track_hist_compute(tr, &f, NULL, (glcv_rect){0, 0, 8, 8}, h));
        CHECK_OK(glcv_track_add(tr, h, (glcv_rect){-100, -100, 300, 300}, &id)); /* partly outside: fine */
        for (size_t i = 0; i < sizeof far / sizeof far[0]; i++)
            CHECK_STATUS(glcv_track_set_window(tr, id, far[i]), GLCV_ERROR_INVALID_ARGUMENT);
        CHECK_OK(glcv_track_frame(tr, &f, NULL));
        /* boxes whose corners lie beyond an int's range, or are not numbers */
        glcv_rect b = glcv_track_box_bounds(3e9f, 10.0f, 20.0f, 20.0f, 30.0f, 64, 48);
        CHECK(b.width == 0 && b.height == 0, "a box at x 3e9: %d,%d %dx%d", b.x, b.y, b.width, b.height);
        b = glcv_track_box_bounds(-3e9f, -3e9f, 7e9f, 7e9f, 0.0f, 64, 48);
        CHECK(b.x == 0 && b.y == 0 && b.width == 64 && b.height == 48, "a box over the frame: %d,%d %dx%d", b.x, b.y,
              b.width, b.height);
        b = glcv_track_box_bounds(NAN, 10.0f, 20.0f, 20.0f, 0.0f, 64, 48);
        CHECK(b.width == 0 && b.height == 0, "a NaN box: %dx%d", b.width, b.height);
        b = glcv_track_box_bounds(10.0f, 10.0f, 4.0f, 4.0f, INFINITY, 64, 48);
        CHECK(b.width == 0 && b.height == 0, "an infinite angle: %dx%d", b.width, b.height);
        free(h);
        glcv_image_free(&f);
        glcv_track_destroy(&tr);
    }
    p = cpu_params(64, 48);
    p.cuda_devices = -2;
    CHECK_STATUS(glcv_track_create(&p, &tr), GLCV_ERROR_INVALID_ARGUMENT);
    p.cuda_devices = 17;
    CHECK_STATUS(glcv_track_create(&p, &tr), GLCV_ERROR_INVALID_ARGUMENT);
    p = cpu_params(64, 48);
    p.engine = (glcv_engine_mode)9;
    CHECK_STATUS(glcv_track_create(&p, &tr), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_track_destroy(NULL);
    glcv_track_destroy(&tr);

    p = GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = 64, .height = 48, .engine = GLCV_ENGINE_CPU);
    CHECK_OK(glcv_track_create(&p, &tr));
    glcv_track_params got;
    CHECK_OK(glcv_track_get_params(tr, &got));
    CHECK(got.max_objects == 64 && got.hue_bins == 60 && got.sat_bins == 1 && got.epsilon == 1.0f &&
              got.max_iterations == 10 && got.window == GLCV_TRACK_WINDOW_OPENCV && got.aspect == 1.2f &&
              got.engine == GLCV_ENGINE_CPU && got.recovery == GLCV_TRACK_RECOVERY_FRAME &&
              got.lost_criteria == (GLCV_TRACK_LOST_MASS | GLCV_TRACK_LOST_HISTOGRAM | GLCV_TRACK_LOST_PEAK),
          "defaults: %d objects, %d x %d bins, eps %g, %d iterations, window %d, engine %d", got.max_objects,
          got.hue_bins, got.sat_bins, (double)got.epsilon, got.max_iterations, (int)got.window, (int)got.engine);
    glcv_track_result r;
    int n = 0;
    CHECK_STATUS(glcv_track_results(tr, &r, 1, &n), GLCV_ERROR_STATE);
    glcv_image frame, gray, small;
    CHECK_OK(glcv_image_alloc(64, 48, GLCV_PIXEL_RGBA8, &frame));
    CHECK_OK(glcv_image_alloc(64, 48, GLCV_PIXEL_GRAY8, &gray));
    CHECK_OK(glcv_image_alloc(32, 48, GLCV_PIXEL_RGB8, &small));
    CHECK_STATUS(glcv_track_frame(tr, &gray, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_track_frame(tr, &small, NULL), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_STATUS(glcv_track_frame(tr, &frame, &frame), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_track_frame(tr, NULL, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    /* no objects: a frame is fine and gives no results */
    CHECK_OK(glcv_track_frame(tr, &frame, &gray));
    CHECK_OK(glcv_track_results(tr, &r, 1, &n));
    CHECK(n == 0, "%d results without objects", n);
    glcv_track_hist *h = calloc(1, sizeof *h);
    CHECK_STATUS(glcv_track_hist_compute(tr, &frame, NULL, (glcv_rect){70, 0, 5, 5}, h),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_OK(glcv_track_hist_compute(tr, &frame, NULL, (glcv_rect){-5, -5, 20, 20}, h));
    int id = -1;
    CHECK_STATUS(glcv_track_add(tr, h, (glcv_rect){0, 0, 0, 5}, &id), GLCV_ERROR_INVALID_ARGUMENT);
    h->sat_bins = 2;
    CHECK_STATUS(glcv_track_add(tr, h, (glcv_rect){0, 0, 5, 5}, &id), GLCV_ERROR_INVALID_ARGUMENT);
    h->sat_bins = 1;
    h->value[3] = 300;
    CHECK_STATUS(glcv_track_add(tr, h, (glcv_rect){0, 0, 5, 5}, &id), GLCV_ERROR_INVALID_ARGUMENT);
    h->value[3] = 0;
    CHECK_OK(glcv_track_add(tr, h, (glcv_rect){-20, -20, 5, 5}, &id)); /* outside: tracked anyway */
    CHECK_OK(glcv_track_frame(tr, &frame, NULL));
    CHECK_OK(glcv_track_results(tr, &r, 1, &n));
    CHECK(n == 1 && r.id == id && r.m00 == 0 && (r.lost & GLCV_TRACK_LOST_MASS), "an empty frame: lost %u", r.lost);
    CHECK_STATUS(glcv_track_remove(tr, 5), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_track_set_window(tr, 5, (glcv_rect){0, 0, 5, 5}), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_track_get_hist(tr, -1, h), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_engine_mode e;
    CHECK_OK(glcv_engine_mode_parse("cuda", &e));
    CHECK(e == GLCV_ENGINE_CUDA && strcmp(glcv_engine_mode_string(e), "cuda") == 0, "engine names");
    CHECK_STATUS(glcv_engine_mode_parse("gpu", &e), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_cuda_info info;
    CHECK_OK(glcv_cuda_query(&info));
    printf("%s\n", info.text);
    /* corners of a rotated box, as cv::RotatedRect::points */
    float px[4], py[4];
    glcv_track_box_points(10, 20, 4, 6, 0, px, py);
    static const float want_x[4] = {8, 8, 12, 12}, want_y[4] = {23, 17, 17, 23};
    for (int i = 0; i < 4; i++)
        CHECK(px[i] == want_x[i] && py[i] == want_y[i], "corner %d of an upright box: %g,%g, expected %g,%g", i,
              (double)px[i], (double)py[i], (double)want_x[i], (double)want_y[i]);
    glcv_track_box_points(10, 20, 4, 6, 90, px, py); /* turned a quarter: the sides swap */
    for (int i = 0; i < 4; i++)
        CHECK(fabs(fabs(px[i] - 10) - 3) < 1e-5 && fabs(fabs(py[i] - 20) - 2) < 1e-5,
              "corner %d of a box turned by 90 degrees: %g,%g", i, (double)px[i], (double)py[i]);
    for (float angle = 0; angle < 180; angle += 17) {
        glcv_track_box_points(30.5f, 25.25f, 7, 13, angle, px, py);
        float x0 = px[0], x1 = px[0], y0 = py[0], y1 = py[0];
        for (int i = 1; i < 4; i++) {
            x0 = fminf(x0, px[i]);
            x1 = fmaxf(x1, px[i]);
            y0 = fminf(y0, py[i]);
            y1 = fmaxf(y1, py[i]);
        }
        /* centred, sides 7 and 13 long, right angles */
        CHECK(fabsf(px[0] + px[2] - 61) < 1e-4f && fabsf(py[1] + py[3] - 50.5f) < 1e-4f, "angle %g: not centred",
              (double)angle);
        CHECK(fabs(hypot(px[1] - px[0], py[1] - py[0]) - 13) < 1e-4 &&
                  fabs(hypot(px[2] - px[1], py[2] - py[1]) - 7) < 1e-4,
              "angle %g: sides %g, %g", (double)angle, hypot(px[1] - px[0], py[1] - py[0]),
              hypot(px[2] - px[1], py[2] - py[1]));
        glcv_rect bounds = glcv_track_box_bounds(30.5f, 25.25f, 7, 13, angle, 64, 48);
        CHECK(bounds.x == (int)floorf(x0) && bounds.y == (int)floorf(y0) &&
                  bounds.x + bounds.width == (int)ceilf(x1) + 1 && bounds.y + bounds.height == (int)ceilf(y1) + 1,
              "angle %g: bounds %d,%d %dx%d around corners %g..%g, %g..%g", (double)angle, bounds.x, bounds.y,
              bounds.width, bounds.height, (double)x0, (double)x1, (double)y0, (double)y1);
    }
    /* bounds of a rotated box */
    glcv_rect b = glcv_track_box_bounds(10, 10, 4, 8, 0, 64, 48);
    CHECK(b.x == 8 && b.y == 6 && b.width == 5 && b.height == 9, "bounds %d,%d %dx%d", b.x, b.y, b.width, b.height);
    b = glcv_track_box_bounds(1, 1, 10, 10, 45, 64, 48);
    CHECK(b.x == 0 && b.y == 0 && b.width == 10 && b.height == 10, "clipped bounds %d,%d %dx%d", b.x, b.y, b.width,
          b.height);
    free(h);
    glcv_image_free(&frame);
    glcv_image_free(&gray);
    glcv_image_free(&small);
    glcv_track_destroy(&tr);
    CHECK(tr == NULL, "destroy sets NULL");
}

int main(void)
{
    test_hsv();
    test_exact_moments();
    test_rotated_box();
    test_moving();
    test_many();
    test_lost_recovered();
    test_mask_and_limits();
    test_paper_window();
    test_adaptive();
    test_hist_files();
    test_api();
    return test_finish("test_track_cpu");
}
