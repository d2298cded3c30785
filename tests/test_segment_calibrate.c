/* Calibration of Ts, Odc, B1, B2 from the measured D^2 of frames: after learning a background,
 * through the explicit calibrate calls, explicit values kept, the same on every engine. */
#include "testutil.h"

#include "segment_internal.h"

#include <math.h>
#include <string.h>

#define W 96
#define H 72

static glcv_synth *synth;
static glcv_image frames[12];

/* Learns from frames 0..n-1 and returns the resolved parameters. */
static glcv_segment *learned(glcv_engine_mode mode, glcv_segment_params p, int n, glcv_segment_params *out)
{
    glcv_segment *s = NULL;
    p.width = W;
    p.height = H;
    p.engine = mode;
    p.logger = test_logger();
    CHECK_OK(glcv_segment_create(&p, &s));
    if (!s)
        return NULL;
    test_segment_on_path(s, mode, 0); /* the engine under test, not a fallback */
    CHECK_OK(glcv_segment_learn_begin(s));
    for (int i = 0; i < n; i++)
        CHECK_OK(glcv_segment_learn_add(s, &frames[i]));
    CHECK_OK(glcv_segment_learn_end(s));
    CHECK_OK(glcv_segment_get_params(s, out));
    return s;
}

/* The median of D^2 over the frames' pixels against the segmenter's background, computed here
 * from the segmenter's window sums (exact integers on every engine) with the given Odc. */
static double median_d2(glcv_segment *s, int n, double odc)
{
    static double d2[W * H * 12];
    int32_t fore[W * H], back[W * H], cross[W * H];
    size_t k = 0;
    for (int i = 0; i < n; i++) {
        CHECK_OK(glcv_segment_frame(s, &frames[i], 1));
        CHECK_OK(glcv_segment_read_qualifiers(s, fore, back, cross));
        for (int j = 0; j < W * H; j++)
            d2[k++] = glcv_segment_d2(fore[j], back[j], cross[j], odc);
    }
    /* insertion-free: a simple selection by sorting a copy */
    for (size_t i = 1; i < k; i++) {
        double x = d2[i];
        size_t j = i;
        while (j > 0 && d2[j - 1] > x) {
            d2[j] = d2[j - 1];
            j--;
        }
        d2[j] = x;
    }
    return d2[k / 2];
}

int main(int argc, char **argv)
{
    const char *mode_name = argc > 1 ? argv[1] : "cpu";
    glcv_engine_mode mode;
    if (glcv_engine_mode_parse(mode_name, &mode) != GLCV_OK)
        return 2;
    glcv_context *ctx = NULL;
    if (mode != GLCV_ENGINE_CPU)
        ctx = test_context_or_skip(mode == GLCV_ENGINE_COMPUTE ? 43 : 33);

    CHECK_OK(glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = W, .height = H, .frames = 12, .noise_sigma = 3), &synth));
    for (int i = 0; i < 12; i++) {
        CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_RGB8, &frames[i]));
        CHECK_OK(glcv_synth_frame(synth, i, &frames[i], NULL));
    }

    /* Default: calibrated after learning. */
    glcv_segment_params p;
    glcv_segment *s = learned(mode, (glcv_segment_params){0}, 12, &p);
    CHECK(p.odc == 100000.0f, "calibrated Odc %g, expected 100000", (double)p.odc);
    CHECK(p.ts != 310.0f && p.b1 == p.b2 && p.b2 != 200.0f, "not calibrated: Ts %g B1 %g B2 %g", (double)p.ts,
          (double)p.b1, (double)p.b2);
    double g = p.ts / 100.0;
    CHECK(fabs(p.b1 - 23.0 * g) <= 1e-3 * p.b1, "B %g is not 23/100 of Ts %g", (double)p.b1, (double)p.ts);
    printf("%s: learned and calibrated: Ts %g Odc %g B1 %g B2 %g\n", mode_name, (double)p.ts, (double)p.odc,
           (double)p.b1, (double)p.b2);

    /* The explicit calls measure the same thing: g within the histogram's resolution (3 %) of
     * the exact median over the same frames. */
    float g_out = 0;
    CHECK_OK(glcv_segment_calibrate_begin(s));
    for (int i = 0; i < 12; i++)
        CHECK_OK(glcv_segment_calibrate_add(s, &frames[i]));
    CHECK_OK(glcv_segment_calibrate_end(s, &g_out));
    double exact = median_d2(s, 12, 100000.0);
    CHECK(fabs(g_out - fmax(exact, 1.0)) <= 0.03 * fmax(exact, 1.0), "g %g, exact median %g", (double)g_out, exact);
    printf("%s: calibrate: g %g, exact median of D^2 %g\n", mode_name, (double)g_out, exact);
    /* The same frames as the learning: the same histogram, so the same g and the same values,
     * Ts = 100 g and B = 23 g. */
    glcv_segment_params again;
    CHECK_OK(glcv_segment_get_params(s, &again));
    CHECK(again.ts == p.ts && again.b1 == p.b1 && again.b2 == p.b2 && again.odc == p.odc,
          "calibrating on the learned frames gave Ts %g B1 %g B2 %g Odc %g, learning gave Ts %g B1 %g B2 %g Odc %g",
          (double)again.ts, (double)again.b1, (double)again.b2, (double)again.odc, (double)p.ts, (double)p.b1,
          (double)p.b2, (double)p.odc);
    CHECK(fabs(again.ts - 100.0 * g_out) <= 1e-5 * again.ts, "Ts %g is not 100 g (g %g)", (double)again.ts,
          (double)g_out);
    glcv_segment_destroy(&s);

    /* Explicit values are kept, the others calibrated. */
    s = learned(mode, (glcv_segment_params){.ts = 500, .odc = 7000}, 12, &p);
    CHECK(p.ts == 500.0f && p.odc == 7000.0f, "explicit Ts %g / Odc %g were not kept", (double)p.ts, (double)p.odc);
    CHECK(p.b1 != 2.0f && p.b2 != 200.0f, "B1/B2 not calibrated: %g %g", (double)p.b1, (double)p.b2);
    /* B from the median D^2 with the explicit Odc (7000), within the histogram's resolution. */
    double exact_7000 = fmax(median_d2(s, 12, 7000.0), 1.0);
    CHECK(p.b1 == p.b2 && fabs(p.b1 - 23.0 * exact_7000) <= 0.03 * 23.0 * exact_7000,
          "B1 %g B2 %g, expected both 23 x the median D^2 with Odc 7000 (%g)", (double)p.b1, (double)p.b2,
          exact_7000);
    CHECK_OK(glcv_segment_set_b2(s, 321));
    CHECK_OK(glcv_segment_calibrate_begin(s));
    CHECK_OK(glcv_segment_calibrate_add(s, &frames[3]));
    CHECK_OK(glcv_segment_calibrate_end(s, NULL));
    CHECK_OK(glcv_segment_get_params(s, &p));
    CHECK(p.b2 == 321.0f && p.ts == 500.0f, "a setter's value was recalibrated: B2 %g Ts %g", (double)p.b2,
          (double)p.ts);
    glcv_segment_destroy(&s);

    /* fixed_parameters: the paper's defaults stay. */
    s = learned(mode, (glcv_segment_params){.fixed_parameters = 1}, 5, &p);
    CHECK(p.ts == 310.0f && p.odc == 5800.0f && p.b1 == 2.0f && p.b2 == 200.0f,
          "fixed parameters changed: Ts %g Odc %g B1 %g B2 %g", (double)p.ts, (double)p.odc, (double)p.b1,
          (double)p.b2);
    glcv_segment_destroy(&s);

    /* The CPU engine calibrates to the same values (exact window sums on every engine). */
    if (mode != GLCV_ENGINE_CPU) {
        glcv_segment_params q;
        s = learned(mode, (glcv_segment_params){0}, 12, &p);
        glcv_segment *c = learned(GLCV_ENGINE_CPU, (glcv_segment_params){0}, 12, &q);
        CHECK(p.ts == q.ts && p.b1 == q.b1 && p.b2 == q.b2, "%s Ts %g B %g vs cpu Ts %g B %g", mode_name,
              (double)p.ts, (double)p.b1, (double)q.ts, (double)q.b1);
        glcv_segment_destroy(&s);
        glcv_segment_destroy(&c);
    }

    /* Errors. */
    s = NULL;
    CHECK_OK(glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = W, .height = H, .engine = mode), &s));
    if (s)
        test_segment_on_path(s, mode, 0);
    CHECK_STATUS(glcv_segment_calibrate_begin(s), GLCV_ERROR_STATE); /* no background */
    CHECK_STATUS(glcv_segment_calibrate_add(s, &frames[0]), GLCV_ERROR_STATE);
    CHECK_STATUS(glcv_segment_calibrate_end(s, NULL), GLCV_ERROR_STATE);
    CHECK_OK(glcv_segment_set_background(s, &frames[0]));
    CHECK_OK(glcv_segment_calibrate_begin(s));
    CHECK_STATUS(glcv_segment_calibrate_end(s, NULL), GLCV_ERROR_STATE); /* no frame */
    CHECK_STATUS(glcv_segment_calibrate_add(s, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_segment_destroy(&s);
    CHECK_STATUS(glcv_segment_calibrate_begin(NULL), GLCV_ERROR_INVALID_ARGUMENT);

    for (int i = 0; i < 12; i++)
        glcv_image_free(&frames[i]);
    glcv_synth_destroy(&synth);
    glcv_context_destroy(&ctx);
    return test_finish("test_segment_calibrate");
}
