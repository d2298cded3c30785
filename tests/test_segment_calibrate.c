/* Learning and calibration: the CALIBRATED preset learns the per-pixel median and measures Odc,
 * Ts, B1, B2 and the per-pixel noise factors from the learned frames, as the documented rule says
 * (checked against a computation of its own here), identically on every engine; explicit values
 * are kept; the PAPER preset learns the mean and keeps the paper's values; on a scene whose
 * background moves by itself (water, foliage, flicker) the thresholds rise only there: objects
 * are found, ripples are not. The argument is the engine under test (default cpu). */
#include "testutil.h"

#include "segment_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define W 96
#define H 72
#define N_FRAMES 12

static glcv_image frames[N_FRAMES];

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static glcv_segment *make(glcv_engine_mode mode, glcv_segment_params p, int w, int h)
{
    glcv_segment *s = NULL;
    p.width = w;
    p.height = h;
    p.engine = mode;
    p.logger = test_logger();
    CHECK_OK(glcv_segment_create(&p, &s));
    if (s)
        test_segment_on_path(s, mode, 0); /* the engine under test, not a fallback */
    return s;
}

/* Learns from frames[0..n-1] and returns the resolved parameters. */
static glcv_segment *learned(glcv_engine_mode mode, glcv_segment_params p, int n, glcv_segment_params *out)
{
    glcv_segment *s = make(mode, p, W, H);
    if (!s)
        return NULL;
    CHECK_OK(glcv_segment_learn_begin(s));
    for (int i = 0; i < n; i++)
        CHECK_OK(glcv_segment_learn_add(s, &frames[i]));
    CHECK_OK(glcv_segment_learn_end(s));
    CHECK_OK(glcv_segment_get_params(s, out));
    return s;
}

static glcv_status frame_source(void *user, int index, glcv_image *frame)
{
    *frame = ((glcv_image *)user)[index];
    return GLCV_OK;
}

/* How many bytes of the segmenter's background differ from `want` (RGB8). */
static int background_differences(glcv_segment *s, const glcv_image *want, const char *what)
{
    glcv_image bg = {0};
    CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_RGB8, &bg));
    CHECK_OK(glcv_segment_read_background(s, &bg));
    int bad = 0;
    for (int i = 0; i < W * H * 3 && bg.data; i++) {
        if (bg.data[i] != want->data[i] && bad++ < 3)
            printf("  %s: background byte %d is %d, expected %d\n", what, i, bg.data[i], want->data[i]);
    }
    glcv_image_free(&bg);
    return bad;
}

/* The rule of glcv_segment_calibrate_end computed here from D^2 of each frame against
 * `background` (window sums from a PAPER segmenter without adaptation): g and the noise factors. */
static double expected_calibration(const glcv_image *background, const glcv_image *fr, int n, float *k)
{
    glcv_segment *ref = make(GLCV_ENGINE_CPU, (glcv_segment_params){.preset = GLCV_SEGMENT_PAPER}, W, H);
    double *d2 = malloc(sizeof(double) * W * H * (size_t)n), *med = malloc(sizeof(double) * W * H);
    int32_t *fore = malloc(sizeof(int32_t) * W * H * 3);
    if (!ref || !d2 || !med || !fore) {
        CHECK(0, "out of memory");
        return 0;
    }
    CHECK_OK(glcv_segment_set_background(ref, background));
    for (int t = 0; t < n; t++) {
        CHECK_OK(glcv_segment_frame(ref, &fr[t], 1));
        CHECK_OK(glcv_segment_read_qualifiers(ref, fore, fore + W * H, fore + 2 * W * H));
        for (int i = 0; i < W * H; i++)
            d2[(size_t)i * n + t] = glcv_segment_d2(fore[i], fore[W * H + i], fore[2 * W * H + i], 100000.0);
    }
    double sorted[N_FRAMES];
    for (int i = 0; i < W * H; i++) {
        memcpy(sorted, d2 + (size_t)i * n, sizeof(double) * (size_t)n);
        qsort(sorted, (size_t)n, sizeof(double), compare_double);
        med[i] = sorted[(n - 1) / 2];
    }
    double *by_rank = malloc(sizeof(double) * W * H);
    memcpy(by_rank, med, sizeof(double) * W * H);
    qsort(by_rank, W * H, sizeof(double), compare_double);
    double g = fmax(by_rank[(int)(0.25 * (W * H - 1))], 1.0);
    for (int i = 0; i < W * H; i++) /* the median, at most 30 g, over 2.5 g */
        k[i] = (float)fmax(fmin(med[i], 30.0 * g) / (2.5 * g), 1.0);
    free(by_rank);
    free(d2);
    free(med);
    free(fore);
    glcv_segment_destroy(&ref);
    return g;
}

/* Default preset: median background, then the calibration; against the rule computed here. */
static void test_calibrated(glcv_engine_mode mode, const char *name)
{
    glcv_image median = {0};
    CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_RGB8, &median));
    CHECK_OK(glcv_image_median(N_FRAMES, frame_source, frames, NULL, &median));

    glcv_segment_params p;
    glcv_segment *s = learned(mode, (glcv_segment_params){0}, N_FRAMES, &p);
    if (!s)
        return;
    CHECK(background_differences(s, &median, "learned median") == 0,
          "%s: the learned background is not the per-pixel median of the frames", name);

    static float want_k[W * H], got_k[W * H];
    double g = expected_calibration(&median, frames, N_FRAMES, want_k);
    /* D^2 is kept quantised to 1/2048 of an octave (0.034 %) */
    CHECK(p.odc == 100000.0f, "%s: calibrated Odc %g, expected 100000", name, (double)p.odc);
    CHECK(fabs(p.ts - 60.0 * g) <= 1e-3 * 60.0 * g, "%s: Ts %g, expected 60 g = %g", name, (double)p.ts, 60.0 * g);
    CHECK(p.b1 == p.b2 && fabs(p.b1 - 10.0 * g) <= 1e-3 * 10.0 * g, "%s: B1 %g B2 %g, expected 10 g = %g", name,
          (double)p.b1, (double)p.b2, 10.0 * g);
    CHECK(p.adapt_rate == 0.01f, "%s: adapt_rate %g, expected 0.01", name, (double)p.adapt_rate);
    CHECK_OK(glcv_segment_read_noise(s, got_k));
    int bad = 0, raised = 0;
    for (int i = 0; i < W * H; i++) {
        raised += got_k[i] > 1.0f;
        if (fabsf(got_k[i] - want_k[i]) > 2e-3f * want_k[i] && bad++ < 3)
            printf("  %s: noise factor at (%d, %d) %g, expected %g\n", name, i % W, i / W, (double)got_k[i],
                   (double)want_k[i]);
    }
    CHECK(bad == 0, "%s: %d noise factors differ from the rule", name, bad);
    printf("%s: learned median and calibrated: g %.2f Ts %g B %g; %d of %d noise factors above 1\n", name, g,
           (double)p.ts, (double)p.b1, raised, W * H);

    /* The explicit calls measure the same from the same frames: the same g and values. */
    float g_out = 0;
    CHECK_OK(glcv_segment_calibrate_begin(s));
    for (int i = 0; i < N_FRAMES; i++)
        CHECK_OK(glcv_segment_calibrate_add(s, &frames[i]));
    CHECK_OK(glcv_segment_calibrate_end(s, &g_out));
    CHECK(fabs(g_out - g) <= 1e-3 * g, "%s: calibrate_end g %g, expected %g", name, (double)g_out, g);
    glcv_segment_params again;
    CHECK_OK(glcv_segment_get_params(s, &again));
    CHECK(again.ts == p.ts && again.b1 == p.b1 && again.b2 == p.b2 && again.odc == p.odc,
          "%s: calibrating on the learned frames gave Ts %g B %g, learning gave Ts %g B %g", name, (double)again.ts,
          (double)again.b1, (double)p.ts, (double)p.b1);
    glcv_segment_destroy(&s);

    /* The CPU engine learns and calibrates to exactly the same (exact window sums, the same host
     * computation on every engine). */
    if (mode != GLCV_ENGINE_CPU) {
        glcv_segment_params q;
        glcv_segment *c = learned(GLCV_ENGINE_CPU, (glcv_segment_params){0}, N_FRAMES, &q);
        s = learned(mode, (glcv_segment_params){0}, N_FRAMES, &p);
        static float cpu_k[W * H];
        if (c && s) {
            CHECK(p.ts == q.ts && p.b1 == q.b1 && p.b2 == q.b2, "%s Ts %g B %g vs cpu Ts %g B %g", name,
                  (double)p.ts, (double)p.b1, (double)q.ts, (double)q.b1);
            CHECK_OK(glcv_segment_read_noise(s, got_k));
            CHECK_OK(glcv_segment_read_noise(c, cpu_k));
            CHECK(memcmp(got_k, cpu_k, sizeof got_k) == 0, "%s: noise factors differ from the CPU engine's", name);
            /* and segments alike with them (the threshold pass divides D^2 by the factor in
             * float: a pixel whose threshold lies within rounding of an integer may differ) */
            glcv_image mg = {0}, mc = {0};
            CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_GRAY8, &mg));
            CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_GRAY8, &mc));
            int differ = 0, on = 0;
            for (int t = 0; t < N_FRAMES && mg.data && mc.data; t++) {
                CHECK_OK(glcv_segment_frame(s, &frames[t], 1));
                CHECK_OK(glcv_segment_frame(c, &frames[t], 1));
                CHECK_OK(glcv_segment_read_mask(s, &mg));
                CHECK_OK(glcv_segment_read_mask(c, &mc));
                for (int i = 0; i < W * H; i++) {
                    on += mc.data[i] != 0;
                    if (mg.data[i] != mc.data[i] && differ++ < 3)
                        printf("  %s: frame %d mask at (%d, %d) %d, cpu %d\n", name, t, i % W, i / W, mg.data[i],
                               mc.data[i]);
                }
            }
            CHECK(differ * 1000 <= W * H * N_FRAMES, "%s: %d mask pixels differ from the CPU engine's", name, differ);
            CHECK(on > 0, "%s: the comparison segmented nothing", name);
            printf("%s: %d of %d mask pixels differ from the CPU engine (%d foreground)\n", name, differ,
                   W * H * N_FRAMES, on);
            glcv_image_free(&mg);
            glcv_image_free(&mc);
        }
        glcv_segment_destroy(&s);
        glcv_segment_destroy(&c);
    }
    glcv_image_free(&median);
}

/* Explicit values, fixed_parameters and the PAPER preset. */
static void test_explicit_and_presets(glcv_engine_mode mode, const char *name)
{
    glcv_segment_params p;
    glcv_segment *s = learned(mode, (glcv_segment_params){.ts = 500, .odc = 7000}, N_FRAMES, &p);
    CHECK(p.ts == 500.0f && p.odc == 7000.0f, "%s: explicit Ts %g / Odc %g were not kept", name, (double)p.ts,
          (double)p.odc);
    CHECK(p.b1 == p.b2 && p.b1 != 500.0f, "%s: B1/B2 not calibrated: %g %g", name, (double)p.b1, (double)p.b2);
    CHECK_OK(glcv_segment_set_b2(s, 321));
    CHECK_OK(glcv_segment_calibrate_begin(s));
    CHECK_OK(glcv_segment_calibrate_add(s, &frames[3]));
    CHECK_OK(glcv_segment_calibrate_end(s, NULL));
    CHECK_OK(glcv_segment_get_params(s, &p));
    CHECK(p.b2 == 321.0f && p.ts == 500.0f, "%s: a setter's value was recalibrated: B2 %g Ts %g", name,
          (double)p.b2, (double)p.ts);
    glcv_segment_destroy(&s);

    /* fixed_parameters: the median is learned, nothing calibrated. */
    static float k[W * H];
    s = learned(mode, (glcv_segment_params){.fixed_parameters = 1}, 5, &p);
    CHECK(p.ts == 3000.0f && p.odc == 100000.0f && p.b1 == 500.0f && p.b2 == 500.0f,
          "%s: fixed parameters changed: Ts %g Odc %g B1 %g B2 %g", name, (double)p.ts, (double)p.odc, (double)p.b1,
          (double)p.b2);
    CHECK_OK(glcv_segment_read_noise(s, k));
    int ones = 0;
    for (int i = 0; i < W * H; i++)
        ones += k[i] == 1.0f;
    CHECK(ones == W * H, "%s: %d noise factors are not 1 without a calibration", name, W * H - ones);
    glcv_segment_destroy(&s);

    /* PAPER: the rounded mean of the frames, the paper's values, no adaptation. */
    s = learned(mode, (glcv_segment_params){.preset = GLCV_SEGMENT_PAPER}, 3, &p);
    CHECK(p.ts == 310.0f && p.odc == 5800.0f && p.b1 == 2.0f && p.b2 == 200.0f && p.adapt_rate == 0.0f,
          "%s: paper preset after learning: Ts %g Odc %g B1 %g B2 %g rate %g", name, (double)p.ts, (double)p.odc,
          (double)p.b1, (double)p.b2, (double)p.adapt_rate);
    glcv_image mean = {0};
    CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_RGB8, &mean));
    for (int i = 0; i < W * H * 3 && mean.data; i++)
        mean.data[i] = (uint8_t)floor((frames[0].data[i] + frames[1].data[i] + frames[2].data[i]) / 3.0 + 0.5);
    CHECK(background_differences(s, &mean, "paper mean") == 0, "%s: the paper preset did not learn the mean", name);
    glcv_image_free(&mean);
    glcv_segment_destroy(&s);
}

/* A background that moves by itself: after learning, objects are found and the water, foliage
 * and flicker are not; without the per-pixel factors (the paper's values) they are. */
static void test_dynamic_scene(glcv_engine_mode mode, const char *name)
{
    enum { DW = 160, DH = 120, LEARN = 40, RUN = 40 };
    glcv_synth *synth = NULL;
    CHECK_OK(glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = DW, .height = DH, .frames = LEARN + RUN,
                                                  .scene = GLCV_SYNTH_DYNAMIC),
                               &synth));
    glcv_image frame = {0}, truth = {0}, region = {0}, mask = {0};
    CHECK_OK(glcv_image_alloc(DW, DH, GLCV_PIXEL_RGB8, &frame));
    CHECK_OK(glcv_image_alloc(DW, DH, GLCV_PIXEL_GRAY8, &truth));
    CHECK_OK(glcv_image_alloc(DW, DH, GLCV_PIXEL_GRAY8, &region));
    CHECK_OK(glcv_image_alloc(DW, DH, GLCV_PIXEL_GRAY8, &mask));
    if (!synth || !mask.data)
        return;
    CHECK_OK(glcv_synth_dynamic_region(synth, &region));
    static const glcv_segment_preset presets[2] = {GLCV_SEGMENT_CALIBRATED, GLCV_SEGMENT_PAPER};
    double fpr[2] = {0}, recall[2] = {0};
    for (int v = 0; v < 2; v++) {
        glcv_segment *s = make(mode, (glcv_segment_params){.preset = presets[v]}, DW, DH);
        if (!s)
            continue;
        CHECK_OK(glcv_segment_learn_begin(s));
        for (int t = 0; t < LEARN; t++) {
            CHECK_OK(glcv_synth_frame(synth, t, &frame, NULL));
            CHECK_OK(glcv_segment_learn_add(s, &frame));
        }
        CHECK_OK(glcv_segment_learn_end(s));
        static float k[DW * DH];
        static double k_of[2][DW * DH]; /* the noise factors of the still and the moving background */
        CHECK_OK(glcv_segment_read_noise(s, k));
        int n_of[2] = {0, 0}, empty_frames = 0;
        for (int i = 0; i < DW * DH; i++) {
            int moving = region.data[i] != 0;
            k_of[moving][n_of[moving]++] = k[i];
        }
        qsort(k_of[0], (size_t)n_of[0], sizeof(double), compare_double);
        qsort(k_of[1], (size_t)n_of[1], sizeof(double), compare_double);
        double k_still = k_of[0][n_of[0] / 2], k_moving = k_of[1][n_of[1] / 2];
        uint64_t tp = 0, fn = 0, fp_moving = 0, bg_moving = 0;
        for (int t = LEARN; t < LEARN + RUN; t++) {
            CHECK_OK(glcv_synth_frame(synth, t, &frame, &truth));
            CHECK_OK(glcv_segment_frame(s, &frame, 1));
            CHECK_OK(glcv_segment_read_mask(s, &mask));
            int on = 0;
            for (int i = 0; i < DW * DH; i++) {
                int fg = mask.data[i] >= 128, object = truth.data[i] >= 128;
                on += fg;
                if (object && !region.data[i])
                    tp += fg, fn += !fg;
                if (!object && region.data[i])
                    fp_moving += fg, bg_moving++;
            }
            empty_frames += on == 0;
        }
        recall[v] = (double)tp / (double)(tp + fn);
        fpr[v] = (double)fp_moving / (double)bg_moving;
        printf("%s %s: median noise factor %.2f in the moving background, %.2f elsewhere; objects outside it found "
               "%.3f; moving background reported %.4f; empty masks %d\n",
               name, v == 0 ? "calibrated" : "paper", k_moving, k_still, recall[v], fpr[v], empty_frames);
        if (v == 0) {
            CHECK(k_moving > 3.0 && k_still < 1.2,
                  "%s: median noise factors %.2f (moving background) and %.2f (still): they should rise only where "
                  "the background moves",
                  name, k_moving, k_still);
            CHECK(empty_frames == 0, "%s: %d empty masks while objects move", name, empty_frames);
            CHECK(recall[0] >= 0.85, "%s: only %.3f of the object pixels outside the moving background found", name,
                  recall[0]);
            CHECK(fpr[0] <= 0.01, "%s: %.4f of the moving background reported as foreground", name, fpr[0]);
        }
        glcv_segment_destroy(&s);
    }
    CHECK(fpr[1] > 10 * fpr[0], "%s: the paper's values report %.4f of the moving background, calibrated %.4f: the "
                                "scene does not test what it should",
          name, fpr[1], fpr[0]);
    glcv_image_free(&frame);
    glcv_image_free(&truth);
    glcv_image_free(&region);
    glcv_image_free(&mask);
    glcv_synth_destroy(&synth);
}

/* The noise model's step (segment_internal.h), computed here on its own from the CPU engine's
 * levels before and after a frame: the frame's window sums against the background, D^2, the
 * mask's 3 x 3 neighbourhood, the level's table row. Returns the pixels whose level or factor
 * differ. */
static int model_step_differences(glcv_segment *c, const uint8_t *before, const glcv_image *frame,
                                  const uint8_t *background, const uint8_t *mask, const float *k)
{
    glcv_segment_params p;
    CHECK_OK(glcv_segment_get_params(c, &p));
    int bad = 0;
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            int64_t ff = 0, bb = 0, fb = 0, near = 0;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int xx = x + dx, yy = y + dy;
                    if (xx < 0 || yy < 0 || xx >= W || yy >= H)
                        continue;
                    near |= mask[yy * W + xx] != 0;
                    for (int ch = 0; ch < 3; ch++) {
                        int f = frame->data[(yy * W + xx) * 3 + ch], b = background[(yy * W + xx) * 3 + ch];
                        ff += f * f, bb += b * b, fb += f * b;
                    }
                }
            /* D^2: the smallest eigenvalue of [[ff + O, fb + O], [fb + O, bb + O]] */
            double o = p.odc, a = (double)ff + o, d = (double)bb + o, e = (double)fb + o;
            double d2 = 0.5 * (a + d - sqrt((a - d) * (a - d) + 4 * e * e));
            int i = y * W + x, l = before[i];
            const float *row = c->noise_table[l];
            if (!near && d2 > row[0] * (1 + 1e-9) && d2 <= (double)p.ts * row[1] * (1 - 1e-9) && l < 255)
                l++;
            else if (!near && d2 < row[0] * (1 - 1e-9) && l > 0)
                l--;
            else if (!near && (fabs(d2 - row[0]) <= 1e-9 * row[0] || fabs(d2 - p.ts * row[1]) <= 1e-9 * d2))
                l = c->cpu.noise_level[i]; /* within rounding of a boundary: either way */
            if ((c->cpu.noise_level[i] != l || k[i] != c->noise_table[l][1]) && bad++ < 3)
                printf("  noise model at (%d, %d): level %d -> %d, factor %g (expected level %d, factor %g; D^2 %g, "
                       "level's D^2 %g)\n",
                       x, y, before[i], c->cpu.noise_level[i], (double)k[i], l, (double)c->noise_table[l][1], d2,
                       (double)row[0]);
        }
    }
    return bad;
}

/* The noise model follows the scene: learned on a quiet scene, then shown the same scene with four
 * times the sensor noise, the factors rise and less of the noise comes out as foreground; shown the
 * quiet scene again, they come back down. With adaptation off they stay as calibrated. The CPU
 * engine's step against this file's own computation; the engine under test against the CPU's. */
static void test_noise_model(glcv_engine_mode mode, const char *name)
{
    enum { NOISY = 160, QUIET = 160 };
    glcv_synth *loud = NULL;
    CHECK_OK(glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = W, .height = H, .frames = NOISY, .noise_sigma = 12,
                                                  .illumination_gain = 1),
                               &loud));
    glcv_synth *quiet = NULL;
    CHECK_OK(glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = W, .height = H, .frames = QUIET, .noise_sigma = 3,
                                                  .illumination_gain = 1),
                               &quiet));
    glcv_segment_params p;
    glcv_segment *c = learned(GLCV_ENGINE_CPU, (glcv_segment_params){0}, N_FRAMES, &p);
    glcv_segment *g = mode != GLCV_ENGINE_CPU ? learned(mode, (glcv_segment_params){0}, N_FRAMES, &p) : NULL;
    glcv_segment *fixed = learned(GLCV_ENGINE_CPU, (glcv_segment_params){0}, N_FRAMES, &p);
    glcv_image frame = {0}, truth = {0}, mask = {0}, fixed_mask = {0}, bg = {0};
    CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_RGB8, &frame));
    CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_GRAY8, &truth));
    CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_GRAY8, &mask));
    CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_GRAY8, &fixed_mask));
    CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_RGB8, &bg));
    if (!loud || !quiet || !c || !fixed || (mode != GLCV_ENGINE_CPU && !g) || !bg.data)
        return;
    CHECK_OK(glcv_segment_set_adapt_rate(fixed, 0)); /* no adaptation: the factors stay as calibrated */
    static float k[W * H], kg[W * H], k0[W * H];
    static uint8_t before[W * H];
    CHECK_OK(glcv_segment_read_noise(c, k0));
    double fp_first = 0, fp_last = 0, fixed_last = 0, median_loud = 0, median_quiet = 0;
    int step_bad = 0, engine_bad = 0, moved = 0;
    for (int t = 0; t < NOISY + QUIET; t++) {
        int noisy = t < NOISY;
        CHECK_OK(glcv_synth_frame(noisy ? loud : quiet, noisy ? t : t - NOISY, &frame, &truth));
        CHECK_OK(glcv_segment_read_background(c, &bg));
        memcpy(before, c->cpu.noise_level, sizeof before);
        CHECK_OK(glcv_segment_frame(c, &frame, 1));
        CHECK_OK(glcv_segment_frame(fixed, &frame, 1));
        CHECK_OK(glcv_segment_read_mask(c, &mask));
        CHECK_OK(glcv_segment_read_mask(fixed, &fixed_mask));
        CHECK_OK(glcv_segment_read_noise(c, k));
        step_bad += model_step_differences(c, before, &frame, bg.data, mask.data, k);
        for (int i = 0; i < W * H; i++)
            moved += c->cpu.noise_level[i] != before[i];
        if (g) {
            CHECK_OK(glcv_segment_frame(g, &frame, 1));
            CHECK_OK(glcv_segment_read_noise(g, kg));
            int differ = 0;
            for (int i = 0; i < W * H; i++)
                differ += kg[i] != k[i];
            engine_bad = differ > engine_bad ? differ : engine_bad;
        }
        double fp = 0, fixed_fp = 0, bg_pixels = 0;
        for (int i = 0; i < W * H; i++) {
            if (truth.data[i] >= 128)
                continue;
            bg_pixels++;
            fp += mask.data[i] != 0;
            fixed_fp += fixed_mask.data[i] != 0;
        }
        if (t < 10)
            fp_first += fp / bg_pixels / 10;
        if (t >= NOISY - 10 && t < NOISY) {
            fp_last += fp / bg_pixels / 10;
            fixed_last += fixed_fp / bg_pixels / 10;
        }
        if (t == NOISY - 1 || t == NOISY + QUIET - 1) {
            static double sorted[W * H];
            for (int i = 0; i < W * H; i++)
                sorted[i] = k[i];
            qsort(sorted, W * H, sizeof *sorted, compare_double);
            *(noisy ? &median_loud : &median_quiet) = sorted[W * H / 2];
        }
    }
    static float kf[W * H];
    CHECK_OK(glcv_segment_read_noise(fixed, kf));
    printf("%s: noise model: median factor %.2f after %d frames with 4x the noise, %.2f after %d quiet ones; noise "
           "reported as foreground %.4f in the first 10 noisy frames, %.4f in the last 10 (%.4f without the model); "
           "%d level steps; %d step(s) differ from this test's computation; at most %d of %d factors differ from the "
           "CPU engine's\n",
           name, median_loud, NOISY, median_quiet, QUIET, fp_first, fp_last, fixed_last, moved, step_bad, engine_bad,
           W * H);
    CHECK(step_bad == 0, "%s: %d noise model steps differ from this test's computation", name, step_bad);
    CHECK(median_loud >= 3.0, "%s: the median noise factor reached only %.2f in a scene four times as noisy", name,
          median_loud);
    CHECK(median_quiet <= 1.5, "%s: the median noise factor stayed at %.2f once the scene was quiet again", name,
          median_quiet);
    CHECK(fp_last < fp_first && fp_last * 2 <= fixed_last,
          "%s: noise reported as foreground %.4f at first, %.4f at the end (%.4f without the model)", name, fp_first,
          fp_last, fixed_last);
    CHECK(memcmp(kf, k0, sizeof kf) == 0, "%s: without adaptation the noise factors changed", name);
    /* the GL engines divide D^2 in float: a pixel within rounding of a boundary may step otherwise */
    CHECK(engine_bad * 1000 <= W * H, "%s: %d noise factors differ from the CPU engine's", name, engine_bad);
    glcv_segment_destroy(&c);
    glcv_segment_destroy(&g);
    glcv_segment_destroy(&fixed);
    glcv_image_free(&frame);
    glcv_image_free(&truth);
    glcv_image_free(&mask);
    glcv_image_free(&fixed_mask);
    glcv_image_free(&bg);
    glcv_synth_destroy(&loud);
    glcv_synth_destroy(&quiet);
}

/* The begin/add/end rule (glcv_segment_learn_begin): an end with no frame is STATE and ends the
 * learning or calibration, the background, adapted background, parameters, noise factors and
 * temporal prior as they were; a refused add leaves learning open with the frames before it. Two
 * segmenters see the same frames; one of them also goes through a refused frame while learning,
 * then an abandoned learning and an abandoned calibration: the masks, backgrounds, parameters and
 * noise factors of both stay equal. Both presets; PAPER with adaptation, whose background the GL
 * engines keep in float textures that learning uses for its sums. */
static void test_learn_rule(glcv_engine_mode mode, const char *name)
{
    static const glcv_segment_params presets[] = {{.preset = GLCV_SEGMENT_CALIBRATED},
                                                  {.preset = GLCV_SEGMENT_PAPER, .adapt_rate = 0.05f}};
    static float k[2][W * H];
    glcv_image wide = {0}, mask[2] = {{0}, {0}}, bg[2] = {{0}, {0}};
    CHECK_OK(glcv_image_alloc(W + 1, H, GLCV_PIXEL_RGB8, &wide));
    for (int t = 0; t < 2; t++) {
        CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_GRAY8, &mask[t]));
        CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_RGB8, &bg[t]));
    }
    for (size_t c = 0; c < sizeof presets / sizeof presets[0]; c++) {
        const char *preset = c == 0 ? "calibrated" : "paper";
        glcv_segment *twin[2] = {make(mode, presets[c], W, H), make(mode, presets[c], W, H)};
        if (!twin[0] || !twin[1]) {
            glcv_segment_destroy(&twin[0]);
            glcv_segment_destroy(&twin[1]);
            continue;
        }
        for (int t = 0; t < 2; t++) {
            glcv_segment *s = twin[t];
            CHECK_OK(glcv_segment_learn_begin(s));
            for (int i = 0; i < 4; i++) {
                if (t == 1 && i == 2) { /* refused: learning goes on with the next frame */
                    CHECK_STATUS(glcv_segment_learn_add(s, &wide), GLCV_ERROR_SIZE_MISMATCH);
                    CHECK_STATUS(glcv_segment_frame(s, &frames[i], 1), GLCV_ERROR_STATE);
                }
                CHECK_OK(glcv_segment_learn_add(s, &frames[i]));
            }
            CHECK_OK(glcv_segment_learn_end(s));
        }
        for (int i = 4; i < N_FRAMES; i++) {
            if (i == 7) { /* twin 1: learning and calibration abandoned */
                glcv_segment *s = twin[1];
                CHECK_OK(glcv_segment_learn_begin(s));
                CHECK_STATUS(glcv_segment_learn_add(s, &wide), GLCV_ERROR_SIZE_MISMATCH);
                CHECK_STATUS(glcv_segment_learn_end(s), GLCV_ERROR_STATE);
                CHECK_STATUS(glcv_segment_learn_end(s), GLCV_ERROR_STATE); /* over: nothing open */
                CHECK_STATUS(glcv_segment_learn_add(s, &frames[i]), GLCV_ERROR_STATE);
                CHECK_OK(glcv_segment_calibrate_begin(s));
                CHECK_OK(glcv_segment_calibrate_begin(s)); /* again: starts again */
                CHECK_STATUS(glcv_segment_calibrate_end(s, NULL), GLCV_ERROR_STATE);
                CHECK_STATUS(glcv_segment_calibrate_add(s, &frames[i]), GLCV_ERROR_STATE);
            }
            for (int t = 0; t < 2; t++) {
                CHECK_OK(glcv_segment_frame(twin[t], &frames[i], 1));
                CHECK_OK(glcv_segment_read_mask(twin[t], &mask[t]));
            }
            int bad = 0, first = -1;
            for (int p = 0; p < W * H && mask[0].data && mask[1].data; p++)
                if (mask[0].data[p] != mask[1].data[p] && bad++ == 0)
                    first = p;
            CHECK(bad == 0, "%s %s: frame %d: %d mask pixels differ after an abandoned learning, first at (%d, %d)",
                  name, preset, i, bad, first % W, first / W);
        }
        glcv_segment_params p[2];
        for (int t = 0; t < 2; t++) {
            CHECK_OK(glcv_segment_get_params(twin[t], &p[t]));
            CHECK_OK(glcv_segment_read_background(twin[t], &bg[t]));
            CHECK_OK(glcv_segment_read_noise(twin[t], k[t]));
        }
        CHECK(p[0].ts == p[1].ts && p[0].odc == p[1].odc && p[0].b1 == p[1].b1 && p[0].b2 == p[1].b2,
              "%s %s: after an abandoned learning and calibration Ts %g Odc %g B1 %g B2 %g, expected %g %g %g %g",
              name, preset, (double)p[1].ts, (double)p[1].odc, (double)p[1].b1, (double)p[1].b2, (double)p[0].ts,
              (double)p[0].odc, (double)p[0].b1, (double)p[0].b2);
        CHECK(background_differences(twin[1], &bg[0], "twin") == 0,
              "%s %s: the background changed through an abandoned learning", name, preset);
        CHECK(memcmp(k[0], k[1], sizeof k[0]) == 0, "%s %s: the noise factors changed through an abandoned learning",
              name, preset);
        glcv_segment_destroy(&twin[0]);
        glcv_segment_destroy(&twin[1]);
    }
    glcv_image_free(&wide);
    for (int t = 0; t < 2; t++) {
        glcv_image_free(&mask[t]);
        glcv_image_free(&bg[t]);
    }
}

static void test_errors(glcv_engine_mode mode)
{
    glcv_segment *s = make(mode, (glcv_segment_params){0}, W, H);
    CHECK_STATUS(glcv_segment_calibrate_begin(s), GLCV_ERROR_STATE); /* no background */
    CHECK_STATUS(glcv_segment_calibrate_add(s, &frames[0]), GLCV_ERROR_STATE);
    CHECK_STATUS(glcv_segment_calibrate_end(s, NULL), GLCV_ERROR_STATE);
    CHECK_OK(glcv_segment_set_background(s, &frames[0]));
    CHECK_OK(glcv_segment_calibrate_begin(s));
    CHECK_STATUS(glcv_segment_calibrate_end(s, NULL), GLCV_ERROR_STATE); /* no frame */
    CHECK_STATUS(glcv_segment_calibrate_add(s, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_read_noise(s, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_segment_destroy(&s);
    CHECK_STATUS(glcv_segment_calibrate_begin(NULL), GLCV_ERROR_INVALID_ARGUMENT);
    float k = 0;
    CHECK_STATUS(glcv_segment_read_noise(NULL, &k), GLCV_ERROR_INVALID_ARGUMENT);
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "cpu";
    glcv_engine_mode mode;
    if (glcv_engine_mode_parse(name, &mode) != GLCV_OK)
        return 2;
    glcv_context *ctx = NULL;
    if (mode != GLCV_ENGINE_CPU)
        ctx = test_context_or_skip(mode == GLCV_ENGINE_COMPUTE ? 43 : 33);

    glcv_synth *synth = NULL;
    CHECK_OK(glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = W, .height = H, .frames = N_FRAMES, .noise_sigma = 3),
                               &synth));
    for (int i = 0; i < N_FRAMES; i++) {
        CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_RGB8, &frames[i]));
        CHECK_OK(glcv_synth_frame(synth, i, &frames[i], NULL));
    }
    test_calibrated(mode, name);
    test_explicit_and_presets(mode, name);
    test_dynamic_scene(mode, name);
    test_noise_model(mode, name);
    test_errors(mode);
    test_learn_rule(mode, name);

    for (int i = 0; i < N_FRAMES; i++)
        glcv_image_free(&frames[i]);
    glcv_synth_destroy(&synth);
    glcv_context_destroy(&ctx);
    return test_finish("test_segment_calibrate");
}
