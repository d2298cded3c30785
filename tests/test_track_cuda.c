/* The CUDA engine against the CPU implementation: the same frames, objects and parameters give
 * identical results - exact moments, windows, boxes, iteration counts, lost flags and
 * distances (tolerance: none; every field of every result is compared bit for bit) - for many
 * objects, every window mode, 1-D and 2-D histograms, masks, lost objects searching the whole
 * frame, and every cluster size. Exits 77 (skipped) without a CUDA device. */
#include "testutil.h"
#include "test_track_scene.h"
#include "track_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct sequence {
    const char *name;
    int width, height, objects, frames;
    glcv_track_window window;
    int sat_bins;
    int masked;
    int cluster; /* 0 = automatic */
    double speed;
    int vanish;  /* objects vanish for frames 4..6 and come back elsewhere */
    int big;     /* windows of 1080 x 720 */
} sequence;

static int g_differences;

static void blob_at(const sequence *s, int k, int f, scene_blob *b)
{
    static const uint8_t colours[7][3] = {{250, 50, 40},  {40, 220, 60},  {50, 70, 250}, {235, 215, 30},
                                          {30, 210, 225}, {220, 40, 225}, {250, 140, 30}};
    int cols = (int)ceil(sqrt((double)s->objects * s->width / s->height));
    int rows = (s->objects + cols - 1) / cols;
    double cw = (double)s->width / cols, chh = (double)s->height / rows;
    double phase = k * 0.7;
    const uint8_t *c = colours[k % 7];
    b->cx = cw * (k % cols + 0.5) + s->speed * f * cos(phase);
    b->cy = chh * (k / cols + 0.5) + s->speed * f * sin(phase);
    b->rx = s->big ? 300 : cw * 0.22;
    b->ry = s->big ? 200 : chh * 0.18;
    b->angle = 13.0 * k + 5.0 * f;
    b->rect = k % 3 == 0;
    b->r = c[0];
    b->g = (uint8_t)(c[1] + (k / 7) % 3 * 8);
    b->b = c[2];
    if (s->vanish && f >= 4 && f <= 6)
        b->rx = 0;
    if (s->vanish && f > 6) {
        b->cx = s->width - b->cx;
        b->cy = s->height - b->cy;
    }
}

/* Adds coloured clutter so that windows see mixed histograms. */
static void clutter(glcv_image *img, int f, uint64_t seed)
{
    uint64_t st = seed + (uint64_t)f * 7919u;
    for (int i = 0; i < img->width * img->height / 40; i++) {
        uint64_t r = test_rand(&st);
        int x = (int)(r % (uint64_t)img->width), y = (int)((r >> 20) % (uint64_t)img->height);
        uint8_t *px = img->data + ((size_t)y * (size_t)img->width + (size_t)x) * 3;
        px[0] = (uint8_t)(r >> 40);
        px[1] = (uint8_t)(r >> 48);
        px[2] = (uint8_t)(r >> 56);
    }
}

static int g_cuda_devices = 1; /* the CUDA tracker's cuda_devices */

static void run(const sequence *s)
{
    glcv_image frame, mask;
    CHECK_OK(glcv_image_alloc(s->width, s->height, GLCV_PIXEL_RGB8, &frame));
    CHECK_OK(glcv_image_alloc(s->width, s->height, GLCV_PIXEL_GRAY8, &mask));
    glcv_track_params p = GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = s->width, .height = s->height, .max_objects = s->objects,
                                            .sat_bins = s->sat_bins, .window = s->window,
                                            .lost_criteria = GLCV_TRACK_LOST_MASS | GLCV_TRACK_LOST_HISTOGRAM |
                                                             GLCV_TRACK_LOST_ITERATIONS,
                                            .engine = GLCV_ENGINE_CPU, .logger = test_logger());
    glcv_track *cpu = NULL, *gpu = NULL;
    CHECK_OK(glcv_track_create(&p, &cpu));
    p.engine = GLCV_ENGINE_CUDA;
    p.cuda_devices = g_cuda_devices;
    CHECK_OK(glcv_track_create(&p, &gpu));
    if (!cpu || !gpu) {
        glcv_track_destroy(&cpu);
        return;
    }
    if (s->cluster)
        CHECK_OK(glcv_track_set_cuda_cluster(gpu, s->cluster));
    scene_blob *blobs = calloc((size_t)s->objects, sizeof *blobs);
    glcv_track_result *a = calloc((size_t)s->objects, sizeof *a), *b = calloc((size_t)s->objects, sizeof *b);
    glcv_track_hist *h = calloc(1, sizeof *h);
    int differences = 0, lost = 0, iterations = 0;
    for (int f = 0; f < s->frames; f++) {
        for (int k = 0; k < s->objects; k++)
            blob_at(s, k, f, &blobs[k]);
        scene_draw(&frame, blobs, s->objects, (uint32_t)f);
        clutter(&frame, f, 12345);
        for (int y = 0; y < s->height; y++)
            for (int x = 0; x < s->width; x++)
                mask.data[(size_t)y * (size_t)s->width + (size_t)x] = (x / 16 + y / 16 + f) % 5 ? 255 : 0;
        const glcv_image *m = s->masked ? &mask : NULL;
        if (f == 0) {
            for (int k = 0; k < s->objects; k++) {
                glcv_rect roi = {(int)(blobs[k].cx - blobs[k].rx), (int)(blobs[k].cy - blobs[k].ry),
                                       (int)(2 * blobs[k].rx) + 1, (int)(2 * blobs[k].ry) + 1};
                int id1 = -1, id2 = -1;
                CHECK_OK(glcv_track_hist_compute(cpu, &frame, m, roi, h));
                CHECK_OK(glcv_track_add(cpu, h, roi, &id1));
                CHECK_OK(glcv_track_add(gpu, h, roi, &id2));
            }
        }
        CHECK_OK(glcv_track_frame(cpu, &frame, m));
        CHECK_OK(glcv_track_frame(gpu, &frame, m));
        int na = 0, nb = 0;
        CHECK_OK(glcv_track_results(cpu, a, s->objects, &na));
        CHECK_OK(glcv_track_results(gpu, b, s->objects, &nb));
        CHECK(na == s->objects && nb == s->objects, "%s: %d and %d results", s->name, na, nb);
        for (int k = 0; k < na && k < nb; k++) {
            lost += a[k].lost != 0;
            iterations += a[k].iterations;
            if (memcmp(&a[k], &b[k], sizeof a[k]) == 0)
                continue;
            if (differences++ < 5)
                CHECK(0,
                      "%s frame %d object %d: CPU m00 %.17g m10 %.17g window %d,%d %dx%d it %d lost %u d %.17g | "
                      "CUDA m00 %.17g m10 %.17g window %d,%d %dx%d it %d lost %u d %.17g",
                      s->name, f, k, a[k].m00, a[k].m10, a[k].window.x, a[k].window.y, a[k].window.width,
                      a[k].window.height, a[k].iterations, a[k].lost, a[k].distance, b[k].m00, b[k].m10,
                      b[k].window.x, b[k].window.y, b[k].window.width, b[k].window.height, b[k].iterations,
                      b[k].lost, b[k].distance);
        }
    }
    g_differences += differences;
    printf("%-28s %2d frames x %3d objects, cluster %2d, %d device%s: %d differing results (%d lost, %d "
           "iterations)\n",
           s->name, s->frames, s->objects, glcv_track_cuda_cluster_used(gpu), g_cuda_devices,
           g_cuda_devices == 1 ? "" : "s", differences, lost, iterations);
    CHECK(differences == 0, "%s: %d results differ between CUDA and the CPU", s->name, differences);
    free(blobs);
    free(a);
    free(b);
    free(h);
    glcv_track_destroy(&cpu);
    glcv_track_destroy(&gpu);
    glcv_image_free(&frame);
    glcv_image_free(&mask);
}

int main(void)
{
    glcv_cuda_info info;
    test_cuda_or_skip(&info);
    const sequence seqs[] = {
        {"64 objects, opencv", 640, 480, 64, 10, GLCV_TRACK_WINDOW_OPENCV, 1, 0, 0, 2.0, 0, 0},
        {"64 objects, masked", 640, 480, 64, 10, GLCV_TRACK_WINDOW_OPENCV, 1, 1, 0, 2.0, 0, 0},
        {"64 objects, paper, 2-D", 640, 480, 64, 10, GLCV_TRACK_WINDOW_PAPER, 8, 0, 0, 2.0, 0, 0},
        {"vanish and recover", 480, 360, 8, 14, GLCV_TRACK_WINDOW_OPENCV, 1, 0, 0, 1.0, 1, 0},
        {"fast motion", 640, 480, 16, 10, GLCV_TRACK_WINDOW_OPENCV, 1, 0, 0, 9.0, 0, 0},
        {"1 object 1080p, big window", 1920, 1080, 1, 6, GLCV_TRACK_WINDOW_OPENCV, 1, 0, 0, 4.0, 0, 1},
        {"odd size", 333, 211, 5, 8, GLCV_TRACK_WINDOW_OPENCV, 4, 1, 0, 3.0, 1, 0},
        {"cluster 16, 1080p", 1920, 1080, 1, 4, GLCV_TRACK_WINDOW_PAPER, 1, 0, 16, 4.0, 0, 1},
        {"64 objects, adaptive, masked", 640, 480, 64, 10, GLCV_TRACK_WINDOW_ADAPTIVE, 1, 1, 0, 2.0, 0, 0},
        {"vanish and recover, adaptive", 480, 360, 8, 14, GLCV_TRACK_WINDOW_ADAPTIVE, 1, 0, 0, 1.0, 1, 0},
        {"fast motion, adaptive, 2-D", 640, 480, 16, 10, GLCV_TRACK_WINDOW_ADAPTIVE, 8, 0, 0, 9.0, 0, 0},
        {"1 object 1080p, adaptive", 1920, 1080, 1, 6, GLCV_TRACK_WINDOW_ADAPTIVE, 1, 0, 0, 4.0, 0, 1},
    };
    for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++)
        run(&seqs[i]);
    /* every cluster size on one sequence */
    static const int clusters[] = {1, 2, 4, 8, 16};
    for (size_t i = 0; i < sizeof clusters / sizeof clusters[0]; i++) {
        char name[32];
        snprintf(name, sizeof name, "cluster %d", clusters[i]);
        sequence s = {name, 640, 480, 20, 6, GLCV_TRACK_WINDOW_OPENCV, 1, 1, clusters[i], 3.0, 1, 0};
        run(&s);
    }
    if (info.devices > 1) {
        /* the objects spread over every device (the 1-object sequences leave devices idle) */
        g_cuda_devices = info.devices;
        for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++)
            if (i == 1 || i == 3 || i == 5 || i == 6 || i == 8 || i == 9)
                run(&seqs[i]);
    } else {
        printf("one CUDA device: the spread over devices is not run\n");
    }
    glcv_track_params p = GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = 64, .height = 48, .engine = GLCV_ENGINE_CUDA,
                                            .cuda_devices = info.devices + 1, .logger = test_logger());
    glcv_track *t = NULL;
    CHECK(glcv_track_create(&p, &t) == GLCV_ERROR_UNSUPPORTED && !t, "%d devices of %d: not UNSUPPORTED",
          info.devices + 1, info.devices);
    printf("%d differing results in all\n", g_differences);
    return test_finish("test_track_cuda");
}
