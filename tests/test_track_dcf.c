/* The correlation-filter method (DCF) of the tracker.
 *   test_track_dcf [cpu]: on the CPU engine, the box it finds on the tracking scenes of glcv_synth
 *       (scale change, occlusion, illumination, a similar distractor, fast motion) against their
 *       true boxes; a tracker of several streams against one tracker per stream; pixel formats;
 *       the parameters and the API rules of the method.
 *   test_track_dcf cuda: the CUDA engine against the CPU one on every scene, with an object's
 *       frame on 1 to 16 blocks (a cluster), on a set of streams, and on a set of more objects
 *       than the device has multiprocessors, frame by frame: box coordinates within
 *       DCF_TOLERANCE pixels and the same lost decisions (the largest difference is printed);
 *       its boxes against the truth (77 without a CUDA device).
 *   test_track_dcf gl: the same frames as GL textures and texture arrays give the host frames'
 *       results on the CPU engine (77 without a GL context); gl_cuda: on the CUDA engine through
 *       the CUDA-GL bridge, against the CPU engine's host results (77 without GL on a CUDA
 *       device). */
#include "testutil.h"
#include "track_internal.h"

#include <glcv/context.h>
#include <glcv/image.h>
#include <glcv/synth.h>
#include <glcv/track.h>

#include <epoxy/gl.h>

#include <math.h>
#include <string.h>

#define W 320
#define H 240
#define FRAMES 120
/* CUDA against the CPU: the engines run one arithmetic (track_dcf_math.h) but for the rounding of
 * pow() in the scale update; a box coordinate may differ by this many pixels. */
#define DCF_TOLERANCE 0.01

static const char *const scene_names[] = {"", "scale", "occlusion", "illumination", "distractor", "fast"};

typedef struct scene {
    glcv_image frames[FRAMES];
    double truth[FRAMES][4]; /* x, y, w, h */
} scene;

static void scene_make(glcv_synth_track kind, scene *s)
{
    glcv_synth *synth = NULL;
    CHECK_OK(glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = W, .height = H, .frames = FRAMES, .track = kind), &synth));
    for (int i = 0; i < FRAMES; i++) {
        CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_RGB8, &s->frames[i]));
        CHECK_OK(glcv_synth_frame(synth, i, &s->frames[i], NULL));
        CHECK_OK(glcv_synth_track_box(synth, i, s->truth[i]));
    }
    glcv_synth_destroy(&synth);
}

static void scene_free(scene *s)
{
    for (int i = 0; i < FRAMES; i++)
        glcv_image_free(&s->frames[i]);
}

static glcv_rect first_box(const scene *s)
{
    const double *b = s->truth[0];
    return (glcv_rect){(int)lrint(b[0]), (int)lrint(b[1]), (int)lrint(b[2]), (int)lrint(b[3])};
}

static double iou(const glcv_track_result *r, const double *t)
{
    double x0 = r->cx - 0.5 * r->width, y0 = r->cy - 0.5 * r->height;
    double ix = fmin(x0 + r->width, t[0] + t[2]) - fmax(x0, t[0]);
    double iy = fmin(y0 + r->height, t[1] + t[3]) - fmax(y0, t[1]);
    double inter = ix > 0 && iy > 0 ? ix * iy : 0.0;
    double uni = (double)r->width * r->height + t[2] * t[3] - inter;
    return uni > 0 ? inter / uni : 0.0;
}

static glcv_engine_mode g_engine = GLCV_ENGINE_CPU; /* the engine the helpers' trackers use */
static int g_cluster;      /* CUDA: blocks per object track_from asks for (0: the engine's choice) */
static int g_cluster_used; /* CUDA: the blocks per object of track_from's last frame */

/* max_objects 0: the default. */
static glcv_track *dcf_tracker_max(int streams, int max_objects)
{
    glcv_track *t = NULL;
    CHECK_OK(glcv_track_create(&GLCV_TRACK_PARAMS(.width = W, .height = H, .streams = streams,
                                                  .method = GLCV_TRACK_METHOD_DCF, .engine = g_engine,
                                                  .max_objects = max_objects),
                               &t));
    glcv_track_params p;
    if (t && glcv_track_get_params(t, &p) == GLCV_OK)
        CHECK(p.engine == g_engine, "the tracker runs on engine %d, not %d", (int)p.engine, (int)g_engine);
    return t;
}

static glcv_track *dcf_tracker(int streams)
{
    return dcf_tracker_max(streams, 0);
}

/* Tracks an object of a scene from `box` (in frames converted to `format`); writes every frame's
 * result. */
static void track_from(const scene *s, glcv_rect box, glcv_pixel_format format, glcv_track_result *out)
{
    glcv_track *t = dcf_tracker(1);
    if (!t)
        return;
    if (g_engine == GLCV_ENGINE_CUDA && g_cluster)
        CHECK_OK(glcv_track_set_cuda_cluster(t, g_cluster));
    int id = -1, count = 0;
    CHECK_OK(glcv_track_add(t, NULL, box, &id));
    glcv_image conv = {0};
    CHECK_OK(glcv_image_alloc(W, H, format, &conv));
    for (int i = 0; i < FRAMES; i++) {
        const glcv_image *f = &s->frames[i];
        if (format != GLCV_PIXEL_RGB8) {
            CHECK_OK(glcv_image_convert(f, &conv));
            f = &conv;
        }
        CHECK_OK(glcv_track_frame(t, f, NULL));
        CHECK_OK(glcv_track_results(t, &out[i], 1, &count));
        CHECK(count == 1, "frame %d: %d results", i, count);
    }
    g_cluster_used = glcv_track_cuda_cluster_used(t);
    glcv_image_free(&conv);
    glcv_track_destroy(&t);
}

/* The same from the scene's first true box. */
static void track_scene(const scene *s, glcv_pixel_format format, glcv_track_result *out)
{
    track_from(s, first_box(s), format, out);
}

/* The box on each scene: the mean IoU with the truth, the first frame's box, the lost frames
 * where the target hides (occlusion) and the boxes after it comes out. */
static void quality(void)
{
    static scene s;
    static glcv_track_result r[FRAMES];
    for (int k = GLCV_SYNTH_TRACK_SCALE; k <= GLCV_SYNTH_TRACK_FAST; k++) {
        scene_make((glcv_synth_track)k, &s);
        track_scene(&s, GLCV_PIXEL_RGB8, r);
        glcv_rect b = first_box(&s);
        CHECK(r[0].cx == (float)(b.x + 0.5 * b.width) && r[0].cy == (float)(b.y + 0.5 * b.height) &&
                  r[0].width == (float)b.width && r[0].height == (float)b.height && r[0].peak == 0 && !r[0].lost,
              "%s: frame 0 gives %g,%g %gx%g peak %g lost %u, not the box it starts from", scene_names[k], r[0].cx,
              r[0].cy, r[0].width, r[0].height, r[0].peak, r[0].lost);
        double sum = 0, tail = 0, worst = 1;
        int lost = 0, worst_at = 0;
        for (int i = 0; i < FRAMES; i++) {
            double v = iou(&r[i], s.truth[i]);
            sum += v;
            tail += i >= FRAMES - 20 ? v : 0;
            lost += r[i].lost != 0;
            if (v < worst) {
                worst = v;
                worst_at = i;
            }
            CHECK(r[i].iterations == 0 && r[i].distance == -1 && (r[i].lost & ~(unsigned)GLCV_TRACK_LOST_PEAK) == 0,
                  "%s frame %d: iterations %d distance %g lost %u", scene_names[k], i, r[i].iterations,
                  r[i].distance, r[i].lost);
        }
        printf("%-13s mean IoU %.3f, last 20 frames %.3f, lowest %.3f (frame %d), lost in %d frames\n",
               scene_names[k], sum / FRAMES, tail / 20, worst, worst_at, lost);
        CHECK(sum / FRAMES >= 0.7, "%s: mean IoU %.3f, below 0.7", scene_names[k], sum / FRAMES);
        CHECK(tail / 20 >= 0.6, "%s: mean IoU %.3f over the last 20 frames, below 0.6", scene_names[k], tail / 20);
        if (k == GLCV_SYNTH_TRACK_OCCLUSION)
            CHECK(lost >= 5, "occlusion: lost in %d frames while hidden behind the pole, expected 5 or more", lost);
        else
            CHECK(lost == 0, "%s: lost in %d frames, expected none", scene_names[k], lost);
        scene_free(&s);
    }
}

static int same_result(const glcv_track_result *a, const glcv_track_result *b)
{
    return a->cx == b->cx && a->cy == b->cy && a->width == b->width && a->height == b->height &&
           a->lost == b->lost && a->peak == b->peak && memcmp(&a->window, &b->window, sizeof a->window) == 0;
}

static double g_largest; /* the largest box difference close_result saw */

/* The same lost decision, and box coordinates within DCF_TOLERANCE pixels (CUDA against the CPU;
 * the CPU engine against itself: exactly the same). */
static int close_result(const glcv_track_result *a, const glcv_track_result *b)
{
    if (g_engine == GLCV_ENGINE_CPU)
        return same_result(a, b);
    double d = fmax(fmax(fabs(a->cx - b->cx), fabs(a->cy - b->cy)), fmax(fabs(a->width - b->width),
                                                                       fabs(a->height - b->height)));
    g_largest = fmax(g_largest, d);
    return a->lost == b->lost && d <= DCF_TOLERANCE;
}

/* The frames of a set of three streams: the occlusion, fast and scale scenes. */
static void three_scenes(scene set[3])
{
    const glcv_synth_track kinds[3] = {GLCV_SYNTH_TRACK_OCCLUSION, GLCV_SYNTH_TRACK_FAST, GLCV_SYNTH_TRACK_SCALE};
    for (int k = 0; k < 3; k++)
        scene_make(kinds[k], &set[k]);
}

/* The CUDA engine against the CPU one, frame by frame, on every scene and on a set of three
 * streams; its boxes against the truth. */
static void cuda_against_cpu(void)
{
    static scene s;
    static glcv_track_result cpu[FRAMES], gpu[FRAMES];
    for (int k = GLCV_SYNTH_TRACK_SCALE; k <= GLCV_SYNTH_TRACK_FAST; k++) {
        scene_make((glcv_synth_track)k, &s);
        g_engine = GLCV_ENGINE_CPU;
        track_scene(&s, GLCV_PIXEL_RGB8, cpu);
        g_engine = GLCV_ENGINE_CUDA;
        track_scene(&s, k % 2 ? GLCV_PIXEL_BGRA8 : GLCV_PIXEL_RGB8, gpu); /* both pixel formats */
        double before = g_largest, sum = 0;
        int bad = 0, lost = 0;
        g_largest = 0;
        for (int i = 0; i < FRAMES; i++) {
            sum += iou(&gpu[i], s.truth[i]);
            lost += gpu[i].lost != 0;
            if (!close_result(&gpu[i], &cpu[i]) && bad++ < 3)
                CHECK(0, "%s frame %d: CUDA %g,%g %gx%g lost %u, CPU %g,%g %gx%g lost %u", scene_names[k], i, gpu[i].cx,
                      gpu[i].cy, gpu[i].width, gpu[i].height, gpu[i].lost, cpu[i].cx, cpu[i].cy, cpu[i].width,
                      cpu[i].height, cpu[i].lost);
        }
        printf("%-13s CUDA: mean IoU %.3f, lost in %d frames; largest difference from the CPU %.3g px, %d frames "
               "beyond %g\n",
               scene_names[k], sum / FRAMES, lost, g_largest, bad, DCF_TOLERANCE);
        CHECK(sum / FRAMES >= 0.7, "%s: CUDA mean IoU %.3f, below 0.7", scene_names[k], sum / FRAMES);
        g_largest = fmax(before, g_largest);
        if (k == GLCV_SYNTH_TRACK_SCALE) {
            /* Large boxes: windows wider than the frame (taps clamped at its edges on both sides)
             * and scale samples of more than half of it. The same boxes as the CPU's, whatever they
             * track. */
            static const glcv_rect big[2] = {{90, 70, 140, 100}, {80, 60, 160, 120}};
            for (int b = 0; b < 2; b++) {
                g_engine = GLCV_ENGINE_CPU;
                track_from(&s, big[b], GLCV_PIXEL_RGB8, cpu);
                g_engine = GLCV_ENGINE_CUDA;
                track_from(&s, big[b], GLCV_PIXEL_BGRA8, gpu);
                int differ = 0;
                for (int i = 0; i < FRAMES; i++)
                    if (!close_result(&gpu[i], &cpu[i]) && differ++ < 3)
                        CHECK(0, "box %dx%d, frame %d: CUDA %g,%g %gx%g lost %u, CPU %g,%g %gx%g lost %u", big[b].width,
                              big[b].height, i, gpu[i].cx, gpu[i].cy, gpu[i].width, gpu[i].height, gpu[i].lost,
                              cpu[i].cx, cpu[i].cy, cpu[i].width, cpu[i].height, cpu[i].lost);
                printf("box %dx%d on %s: largest difference from the CPU %.3g px, %d frames beyond %g\n",
                       big[b].width, big[b].height, scene_names[k], g_largest, differ, DCF_TOLERANCE);
            }
        }
        scene_free(&s);
    }
    /* a set of three streams, an object in stream 0 and two in stream 2 */
    static scene set[3];
    three_scenes(set);
    glcv_track *t[2] = {NULL, NULL};
    for (int e = 0; e < 2; e++) {
        g_engine = e ? GLCV_ENGINE_CUDA : GLCV_ENGINE_CPU;
        t[e] = dcf_tracker(3);
        int id = -1;
        CHECK_OK(glcv_track_add_to_stream(t[e], 0, NULL, first_box(&set[0]), &id));
        CHECK_OK(glcv_track_add_to_stream(t[e], 2, NULL, first_box(&set[2]), &id));
        CHECK_OK(glcv_track_add_to_stream(t[e], 2, NULL, first_box(&set[1]), &id));
    }
    int bad = 0;
    for (int i = 0; i < FRAMES && t[0] && t[1]; i++) {
        glcv_image frames[3] = {set[0].frames[i], set[1].frames[i], set[2].frames[i]};
        glcv_track_result r[2][3];
        int count[2] = {0, 0};
        for (int e = 0; e < 2; e++) {
            CHECK_OK(glcv_track_frames(t[e], frames, NULL, 3));
            CHECK_OK(glcv_track_results(t[e], r[e], 3, &count[e]));
        }
        CHECK(count[0] == 3 && count[1] == 3, "set %d: %d and %d results", i, count[0], count[1]);
        for (int k = 0; k < 3; k++)
            if ((!close_result(&r[1][k], &r[0][k]) || r[1][k].stream != r[0][k].stream) && bad++ < 3)
                CHECK(0, "set %d object %d: CUDA %g,%g, CPU %g,%g", i, k, r[1][k].cx, r[1][k].cy, r[0][k].cx,
                      r[0][k].cy);
    }
    printf("set of 3 streams: largest difference from the CPU %.3g px, %d results beyond %g\n", g_largest, bad,
           DCF_TOLERANCE);
    CHECK(glcv_track_dcf_blocks_used(t[1]) == 1, "set of 3 objects: the kernel ran %d blocks a multiprocessor, not 1",
          glcv_track_dcf_blocks_used(t[1]));
    for (int e = 0; e < 2; e++)
        glcv_track_destroy(&t[e]);
    for (int k = 0; k < 3; k++)
        scene_free(&set[k]);
}

/* The compute capability's major number in glcv_cuda_info's text ("compute 9.0"), 0 if absent. */
static int compute_major(const glcv_cuda_info *info, int *minor)
{
    const char *cc = strstr(info->text, "compute ");
    int major = 0;
    *minor = 0;
    if (cc)
        (void)sscanf(cc + 8, "%d.%d", &major, minor);
    return major;
}

/* One object's frame dealt to a thread-block cluster (compute capability 9.0): on the occlusion
 * scene (lost while hidden, found again) and with a box larger than half the frame, the engine's
 * choice and every size from 1 to 16 blocks give the CPU engine's boxes and lost decisions. The
 * engine's choice for a lone object is a cluster where the device has them; a size the device cannot
 * run falls back to the largest it can (16 blocks need 16 multiprocessors in one processing
 * cluster). */
static void clusters(const glcv_cuda_info *info)
{
    static scene s;
    static glcv_track_result cpu[2][FRAMES], gpu[FRAMES];
    static const glcv_rect big = {80, 60, 160, 120};
    int minor = 0;
    const int major = compute_major(info, &minor);
    scene_make(GLCV_SYNTH_TRACK_OCCLUSION, &s);
    g_engine = GLCV_ENGINE_CPU;
    track_scene(&s, GLCV_PIXEL_RGB8, cpu[0]);
    track_from(&s, big, GLCV_PIXEL_RGB8, cpu[1]);
    g_engine = GLCV_ENGINE_CUDA;
    double before = g_largest;
    for (int size = 0; size <= 16; size = size ? size * 2 : 1) {
        for (int b = 0; b < 2; b++) {
            g_cluster = size;
            g_largest = 0;
            if (b)
                track_from(&s, big, GLCV_PIXEL_BGRA8, gpu);
            else
                track_scene(&s, GLCV_PIXEL_RGB8, gpu);
            int bad = 0;
            for (int i = 0; i < FRAMES; i++)
                if (!close_result(&gpu[i], &cpu[b][i]) && bad++ < 3)
                    CHECK(0, "%d blocks asked, %d used, %s, frame %d: CUDA %g,%g %gx%g lost %u, CPU %g,%g %gx%g lost %u",
                          size, g_cluster_used, b ? "large box" : "occlusion", i, gpu[i].cx, gpu[i].cy, gpu[i].width,
                          gpu[i].height, gpu[i].lost, cpu[b][i].cx, cpu[b][i].cy, cpu[b][i].width, cpu[b][i].height,
                          cpu[b][i].lost);
            printf("%2d blocks asked, %2d used (compute %d.%d), %s: largest difference from the CPU %.3g px, %d frames "
                   "beyond %g\n",
                   size, g_cluster_used, major, minor, b ? "large box" : "occlusion", g_largest, bad, DCF_TOLERANCE);
            before = fmax(before, g_largest);
            if (major < 9)
                CHECK(g_cluster_used == 1, "compute %d.%d: %d blocks an object, expected 1", major, minor,
                      g_cluster_used);
            else if (size == 0)
                CHECK(g_cluster_used >= 8, "a lone object on compute %d.%d: %d blocks, expected a cluster of 8 or more",
                      major, minor, g_cluster_used);
            else
                CHECK(g_cluster_used == size || (size == 16 && g_cluster_used == 8),
                      "compute %d.%d: %d blocks an object asked, %d used", major, minor, size, g_cluster_used);
        }
    }
    g_cluster = 0;
    g_largest = before;
    scene_free(&s);
}

/* More objects than a device has multiprocessors, so that the kernel capped at 64 registers a thread
 * runs two a multiprocessor (where two fit: compute capability 8.0 and later): every object's box
 * against the CPU engine's, frame by frame. The objects cover the three frames in a grid of boxes
 * of several sizes, most of them on the textured background. */
static void many_objects(const glcv_cuda_info *info)
{
    enum { N = 400, SET_FRAMES = 10 };
    static scene set[3];
    three_scenes(set);
    glcv_track *t[2] = {NULL, NULL};
    for (int e = 0; e < 2; e++) {
        g_engine = e ? GLCV_ENGINE_CUDA : GLCV_ENGINE_CPU;
        t[e] = dcf_tracker_max(3, N);
        for (int i = 0; i < N && t[e]; i++) {
            int cell = i / 3;
            glcv_rect box = {8 + (cell % 20) * 15, 8 + (cell / 20) * 32, 20 + (i % 5) * 6, 24 + (i % 7) * 5};
            int id = -1;
            CHECK_OK(glcv_track_add_to_stream(t[e], i % 3, NULL, box, &id));
        }
    }
    static glcv_track_result r[2][N];
    int bad = 0, found = 0;
    double before = g_largest;
    g_largest = 0;
    for (int i = 0; i < SET_FRAMES && t[0] && t[1]; i++) {
        glcv_image frames[3] = {set[0].frames[i], set[1].frames[i], set[2].frames[i]};
        int count[2] = {0, 0};
        for (int e = 0; e < 2; e++) {
            CHECK_OK(glcv_track_frames(t[e], frames, NULL, 3));
            CHECK_OK(glcv_track_results(t[e], r[e], N, &count[e]));
        }
        CHECK(count[0] == N && count[1] == N, "set %d: %d and %d results", i, count[0], count[1]);
        for (int k = 0; k < count[0] && k < count[1]; k++) {
            found += !r[1][k].lost;
            if ((!close_result(&r[1][k], &r[0][k]) || r[1][k].stream != r[0][k].stream) && bad++ < 3)
                CHECK(0, "set %d object %d: CUDA %g,%g %gx%g lost %u, CPU %g,%g %gx%g lost %u", i, k, r[1][k].cx,
                      r[1][k].cy, r[1][k].width, r[1][k].height, r[1][k].lost, r[0][k].cx, r[0][k].cy,
                      r[0][k].width, r[0][k].height, r[0][k].lost);
        }
    }
    int minor = 0;
    const int major = compute_major(info, &minor);
    const int blocks = glcv_track_dcf_blocks_used(t[1]), expected = major >= 8 ? 2 : 1;
    printf("%d objects in 3 streams (compute %d.%d): %d blocks a multiprocessor; largest difference from the CPU "
           "%.3g px, %d results beyond %g; %d found\n",
           N, major, minor, blocks, g_largest, bad, DCF_TOLERANCE, found);
    CHECK(blocks == expected, "%d objects on compute %d.%d: the kernel ran %d blocks a multiprocessor, not %d", N,
          major, minor, blocks, expected);
    CHECK(found > N * SET_FRAMES / 2, "only %d of %d results found", found, N * SET_FRAMES);
    g_largest = fmax(before, g_largest);
    for (int e = 0; e < 2; e++)
        glcv_track_destroy(&t[e]);
    for (int k = 0; k < 3; k++)
        scene_free(&set[k]);
}

/* A tracker of three streams (an object in stream 0, two in stream 2, none in stream 1) against a
 * tracker per object; and BGRA8 frames against RGB8 ones. */
static void streams_and_formats(void)
{
    static scene s[3];
    static glcv_track_result alone[4][FRAMES], bgra[FRAMES];
    const glcv_synth_track kinds[3] = {GLCV_SYNTH_TRACK_SCALE, GLCV_SYNTH_TRACK_FAST, GLCV_SYNTH_TRACK_DISTRACTOR};
    for (int k = 0; k < 3; k++) {
        scene_make(kinds[k], &s[k]);
        track_scene(&s[k], GLCV_PIXEL_RGB8, alone[k]);
    }
    track_from(&s[2], first_box(&s[1]), GLCV_PIXEL_RGB8, alone[3]); /* fast's first box on distractor */
    track_scene(&s[1], GLCV_PIXEL_BGRA8, bgra);
    for (int i = 0; i < FRAMES; i++)
        CHECK(same_result(&bgra[i], &alone[1][i]), "frame %d: BGRA8 frames give %g,%g %gx%g, RGB8 %g,%g %gx%g", i,
              bgra[i].cx, bgra[i].cy, bgra[i].width, bgra[i].height, alone[1][i].cx, alone[1][i].cy,
              alone[1][i].width, alone[1][i].height);

    glcv_track *t = dcf_tracker(3);
    int ids[3] = {-1, -1, -1};
    CHECK_OK(glcv_track_add_to_stream(t, 0, NULL, first_box(&s[0]), &ids[0]));
    CHECK_OK(glcv_track_add_to_stream(t, 2, NULL, first_box(&s[2]), &ids[1]));
    CHECK_OK(glcv_track_add_to_stream(t, 2, NULL, first_box(&s[1]), &ids[2]));
    for (int i = 0; i < FRAMES; i++) {
        glcv_image set[3] = {s[0].frames[i], s[1].frames[i], s[2].frames[i]};
        glcv_track_result r[3];
        int count = 0;
        CHECK_OK(glcv_track_frames(t, set, NULL, 3));
        CHECK_OK(glcv_track_results(t, r, 3, &count));
        CHECK(count == 3, "set %d: %d results", i, count);
        CHECK(r[0].stream == 0 && r[1].stream == 2 && r[2].stream == 2 && same_result(&r[0], &alone[0][i]) &&
                  same_result(&r[1], &alone[2][i]) && same_result(&r[2], &alone[3][i]),
              "set %d: the set's objects give %g,%g %g,%g %g,%g, alone %g,%g %g,%g %g,%g", i, r[0].cx, r[0].cy,
              r[1].cx, r[1].cy, r[2].cx, r[2].cy, alone[0][i].cx, alone[0][i].cy, alone[2][i].cx, alone[2][i].cy,
              alone[3][i].cx, alone[3][i].cy);
    }
    glcv_track_destroy(&t);
    for (int k = 0; k < 3; k++)
        scene_free(&s[k]);
}

/* Parameters and the API rules of the method. */
static void api(void)
{
    glcv_track *t = dcf_tracker(1);
    glcv_track_params p;
    CHECK_OK(glcv_track_get_params(t, &p));
    CHECK(p.method == GLCV_TRACK_METHOD_DCF && p.engine == GLCV_ENGINE_CPU &&
              p.lost_criteria == (GLCV_TRACK_LOST_MASS | GLCV_TRACK_LOST_HISTOGRAM | GLCV_TRACK_LOST_PEAK),
          "resolved: method %d engine %d lost_criteria 0x%x", (int)p.method, (int)p.engine, p.lost_criteria);
    glcv_track_destroy(&t);

    const int cuda = glcv_cuda_available(0);
    CHECK_OK(glcv_track_create(&GLCV_TRACK_PARAMS(.width = W, .height = H, .method = GLCV_TRACK_METHOD_DCF), &t));
    CHECK_OK(glcv_track_get_params(t, &p));
    CHECK(p.engine == (cuda ? GLCV_ENGINE_CUDA : GLCV_ENGINE_CPU), "DCF with AUTO: engine %d, expected %s",
          (int)p.engine, cuda ? "CUDA" : "the CPU");
    glcv_track_destroy(&t);
    if (!cuda) {
        CHECK_STATUS(glcv_track_create(&GLCV_TRACK_PARAMS(.width = W, .height = H, .method = GLCV_TRACK_METHOD_DCF,
                                                          .engine = GLCV_ENGINE_CUDA),
                                       &t),
                     GLCV_ERROR_UNSUPPORTED);
        CHECK(!t, "a refused tracker is returned");
    }
    CHECK_STATUS(glcv_track_create(&GLCV_TRACK_PARAMS(.width = W, .height = H, .method = GLCV_TRACK_METHOD_DCF,
                                                      .engine = GLCV_ENGINE_FRAGMENT),
                                   &t),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_track_create(&GLCV_TRACK_PARAMS(.width = W, .height = H, .method = (glcv_track_method)3), &t),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_OK(glcv_track_create(&GLCV_TRACK_PARAMS(.width = W, .height = H), &t));
    CHECK_OK(glcv_track_get_params(t, &p));
    CHECK(p.method == GLCV_TRACK_METHOD_DCF, "the default method is %d, expected DCF", (int)p.method);
    glcv_track_destroy(&t);

    /* CAMSHIFT still needs its histogram; DCF takes none */
    int id = -1;
    CHECK_OK(glcv_track_create(&GLCV_TRACK_PARAMS(.width = W, .height = H, .method = GLCV_TRACK_METHOD_CAMSHIFT,
                                                  .engine = GLCV_ENGINE_CPU),
                               &t));
    CHECK_STATUS(glcv_track_add(t, NULL, (glcv_rect){10, 10, 20, 20}, &id), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_track_destroy(&t);

    /* set_window restarts the object there: the next frame's box is that window */
    static scene s;
    scene_make(GLCV_SYNTH_TRACK_SCALE, &s);
    t = dcf_tracker(1);
    CHECK_OK(glcv_track_add(t, NULL, first_box(&s), &id));
    for (int i = 0; i < 3; i++)
        CHECK_OK(glcv_track_frame(t, &s.frames[i], NULL));
    CHECK_OK(glcv_track_set_window(t, id, (glcv_rect){100, 80, 30, 60}));
    CHECK_OK(glcv_track_frame(t, &s.frames[3], NULL));
    glcv_track_result r;
    int count = 0;
    CHECK_OK(glcv_track_results(t, &r, 1, &count));
    CHECK(count == 1 && r.cx == 115.0f && r.cy == 110.0f && r.width == 30.0f && r.height == 60.0f && r.peak == 0,
          "after set_window: %g,%g %gx%g peak %g, expected the window 115,110 30x60 learned from", r.cx, r.cy,
          r.width, r.height, r.peak);
    /* a removed object's slot given to a new one starts afresh */
    CHECK_OK(glcv_track_remove(t, id));
    CHECK_OK(glcv_track_add(t, NULL, (glcv_rect){-10, -10, 40, 40}, &id)); /* clipped to the frame */
    CHECK_OK(glcv_track_frame(t, &s.frames[4], NULL));
    CHECK_OK(glcv_track_results(t, &r, 1, &count));
    CHECK(count == 1 && r.cx == 15.0f && r.cy == 15.0f && r.width == 30.0f && r.height == 30.0f,
          "a box half outside starts from its part inside (15,15 30x30), got %g,%g %gx%g", r.cx, r.cy, r.width,
          r.height);
    /* on frames of noise, with nothing to follow, the centre stays inside the frame */
    const int nw = 64, nh = 48;
    glcv_track *noise = NULL;
    CHECK_OK(glcv_track_create(&GLCV_TRACK_PARAMS(.width = nw, .height = nh, .method = GLCV_TRACK_METHOD_DCF,
                                                  .engine = g_engine),
                               &noise));
    glcv_image f = {0};
    CHECK_OK(glcv_image_alloc(nw, nh, GLCV_PIXEL_RGB8, &f));
    CHECK_OK(glcv_track_add(noise, NULL, (glcv_rect){0, 0, nw, nh}, &id));
    uint32_t seed = 1;
    for (int i = 0; i < 8 && f.data; i++) {
        for (size_t k = 0; k < (size_t)nw * nh * 3; k++) {
            seed = seed * 1664525u + 1013904223u;
            f.data[k] = (uint8_t)(seed >> 24);
        }
        CHECK_OK(glcv_track_frame(noise, &f, NULL));
        CHECK_OK(glcv_track_results(noise, &r, 1, &count));
        CHECK(r.cx >= 0 && r.cx <= nw && r.cy >= 0 && r.cy <= nh,
              "noise frame %d: centre %g,%g outside the %dx%d frame", i, r.cx, r.cy, nw, nh);
    }
    glcv_image_free(&f);
    glcv_track_destroy(&noise);
    int none = -2;
    CHECK_STATUS(glcv_track_add(t, NULL, (glcv_rect){W, 0, 10, 10}, &none), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(none == -1, "a refused object got id %d", none);
    CHECK_STATUS(glcv_track_set_window(t, id, (glcv_rect){-20, 5, 20, 10}), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_track_destroy(&t);
    scene_free(&s);
}

/* Texture inputs: a GL_TEXTURE_2D frame and a texture array of two streams give the results of the
 * host frames. */
static int textures(int on_cuda)
{
    glcv_context *ctx = test_context_or_skip(33);
    if (on_cuda) {
        glcv_cuda_info info;
        test_cuda_gl_or_skip(&ctx, &info);
    }
    static scene s[2];
    static glcv_track_result host[2][FRAMES];
    scene_make(GLCV_SYNTH_TRACK_SCALE, &s[0]);
    scene_make(GLCV_SYNTH_TRACK_FAST, &s[1]);
    g_engine = GLCV_ENGINE_CPU; /* the oracle: host frames on the CPU engine */
    for (int k = 0; k < 2; k++)
        track_scene(&s[k], GLCV_PIXEL_RGB8, host[k]);
    g_engine = on_cuda ? GLCV_ENGINE_CUDA : GLCV_ENGINE_CPU;
    GLuint tex = 0, arr = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, W, H, 0, GL_RGB, GL_UNSIGNED_BYTE, NULL);
    glGenTextures(1, &arr);
    glBindTexture(GL_TEXTURE_2D_ARRAY, arr);
    glTexImage3D(GL_TEXTURE_2D_ARRAY, 0, GL_RGBA8, W, H, 2, 0, GL_RGB, GL_UNSIGNED_BYTE, NULL);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glcv_track *one = dcf_tracker(1), *two = dcf_tracker(2);
    int id = -1;
    CHECK_OK(glcv_track_add(one, NULL, first_box(&s[0]), &id));
    CHECK_OK(glcv_track_add_to_stream(two, 0, NULL, first_box(&s[0]), &id));
    CHECK_OK(glcv_track_add_to_stream(two, 1, NULL, first_box(&s[1]), &id));
    int mismatches = 0;
    for (int i = 0; i < FRAMES; i++) {
        glBindTexture(GL_TEXTURE_2D, tex);
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, W, H, GL_RGB, GL_UNSIGNED_BYTE, s[0].frames[i].data);
        glBindTexture(GL_TEXTURE_2D_ARRAY, arr);
        for (int k = 0; k < 2; k++)
            glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, 0, k, W, H, 1, GL_RGB, GL_UNSIGNED_BYTE, s[k].frames[i].data);
        glcv_track_result a, b[2];
        int count = 0;
        CHECK_OK(glcv_track_frame_texture(one, tex, 0));
        CHECK_OK(glcv_track_results(one, &a, 1, &count));
        CHECK_OK(glcv_track_frames_texture(two, arr, 0));
        CHECK_OK(glcv_track_results(two, b, 2, &count));
        int ok = close_result(&a, &host[0][i]) && close_result(&b[0], &host[0][i]) &&
                 close_result(&b[1], &host[1][i]);
        if (!ok && mismatches++ < 5)
            CHECK(ok, "frame %d: textures give %g,%g / %g,%g %g,%g, host frames %g,%g / %g,%g", i, a.cx, a.cy, b[0].cx,
                  b[0].cy, b[1].cx, b[1].cy, host[0][i].cx, host[0][i].cy, host[1][i].cx, host[1][i].cy);
    }
    CHECK(mismatches == 0, "%d frames differ between textures and host frames", mismatches);
    if (on_cuda)
        printf("textures on CUDA: largest difference from the CPU's host frames %.3g px\n", g_largest);
    CHECK(glGetError() == GL_NO_ERROR, "a GL error");
    glcv_track_destroy(&one);
    glcv_track_destroy(&two);
    glDeleteTextures(1, &tex);
    glDeleteTextures(1, &arr);
    for (int k = 0; k < 2; k++)
        scene_free(&s[k]);
    glcv_context_destroy(&ctx);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "cpu";
    if (strcmp(mode, "gl") == 0 || strcmp(mode, "gl_cuda") == 0) {
        textures(strcmp(mode, "gl_cuda") == 0);
    } else if (strcmp(mode, "cuda") == 0) {
        glcv_cuda_info info;
        test_cuda_or_skip(&info);
        cuda_against_cpu();
        clusters(&info);
        many_objects(&info);
    } else if (strcmp(mode, "cpu") == 0) {
        api();
        quality();
        streams_and_formats();
    } else {
        fprintf(stderr, "usage: %s [cpu | cuda | gl | gl_cuda]\n", argv[0]);
        return 2;
    }
    if (test_failures)
        fprintf(stderr, "%d check(s) failed\n", test_failures);
    return test_failures ? 1 : 0;
}
