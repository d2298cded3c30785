/* Background subtraction: the rule against values worked out by hand, argument checks, and every
 * GL variant (fragment or compute as argv[1] says; single pass and the chain; gray, packed gray
 * and colour; RGB, BGR, RGBA and GRAY frames; one and several streams; learned or not;
 * downloads and mapped frames) against the CPU engine, bit for bit, on random and structured
 * frames. */
#include "testutil.h"

#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include <math.h>
#include <string.h>

#define W 36
#define H 20
#define SETS 7

static glcv_logger lg;

/* ---- frames ---------------------------------------------------------------------------------- */

/* Frame t of stream s: a noisy background with a bright square moving to the right and, in
 * random mode, noise everywhere. */
static void make_frame(glcv_image *im, int s, int t, int random_mode, uint64_t *rng)
{
    int bpp = glcv_pixel_format_size(im->format);
    size_t stride = im->stride ? im->stride : (size_t)im->width * (size_t)bpp;
    for (int y = 0; y < im->height; y++)
        for (int x = 0; x < im->width; x++) {
            uint8_t *px = im->data + stride * (size_t)y + (size_t)x * (size_t)bpp;
            for (int k = 0; k < bpp; k++) {
                int v;
                if (random_mode) {
                    v = (int)(test_rand(rng) % 256);
                } else {
                    v = 60 + 3 * k + 20 * s + (x * 5 + y * 3) % 40 + (int)(test_rand(rng) % 9) - 4;
                    int sx = 2 + 4 * t + s, sy = 5;
                    if (x >= sx && x < sx + 8 && y >= sy && y < sy + 8)
                        v = 200 + 10 * k + (int)(test_rand(rng) % 7);
                }
                px[k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
}

/* ---- the rule by hand ------------------------------------------------------------------------ */

static void check_rule_by_hand(void)
{
    glcv_bgsub *b = NULL;
    glcv_bgsub_params p = GLCV_BGSUB_PARAMS(.width = 1, .height = 1, .format = GLCV_PIXEL_GRAY8,
                                            .engine = GLCV_ENGINE_CPU, .logger = lg);
    CHECK_OK(glcv_bgsub_create(&p, &b));
    if (!b)
        return;
    /* Frames 100, 110, 104, 160, 101: B starts at 100 (T 20). */
    const uint8_t seq[] = {100, 110, 104, 160, 101};
    double bgf = 100, thf = 20;
    for (int t = 0; t < 5; t++) {
        uint8_t v = seq[t], m = 0;
        glcv_image f = {&v, 1, 1, 0, GLCV_PIXEL_GRAY8}, mask = {&m, 1, 1, 0, GLCV_PIXEL_GRAY8};
        CHECK_OK(glcv_bgsub_frames(b, &f, 1, 1));
        CHECK_OK(glcv_bgsub_read_masks(b, 0, &mask, 1));
        uint16_t bg = 0, th = 0;
        CHECK_OK(glcv_bgsub_read_state(b, 0, &bg, &th));
        /* By hand: foreground where |I - B| > T; B and T adapt (alpha 0.92, c 3, floor 20)
         * where neither moving (|I - I1| > T and |I - I2| > T) nor foreground. */
        int fg = fabs(v - bgf) > thf;
        int moving = t >= 2 && abs(v - seq[t - 1]) > thf && abs(v - seq[t - 2]) > thf;
        if (!fg && !moving) {
            double nb = 0.92 * bgf + 0.08 * v;
            double nt = 0.92 * thf + 0.08 * 3 * fabs(v - bgf);
            bgf = nb;
            thf = nt < 20 ? 20 : nt;
        }
        CHECK((m == 255) == fg, "frame %d (%d): mask %d, by hand %d (B %.3f T %.3f)", t, v, m, fg, bgf, thf);
        CHECK(fabs(bg / 256.0 - bgf) < 2.0 / 256, "frame %d: B %.4f, by hand %.4f", t, bg / 256.0, bgf);
        CHECK(fabs(th / 256.0 - thf) < 2.0 / 256, "frame %d: T %.4f, by hand %.4f", t, th / 256.0, thf);
    }
    /* Frame 3 (160) is foreground and B did not move towards it. */
    glcv_bgsub_destroy(&b);

    /* A change of the scene (100, then 200 for good) is foreground until the counter reaches
     * absorb (3): then B and T adapt again. */
    p.absorb = 3;
    CHECK_OK(glcv_bgsub_create(&p, &b));
    uint16_t last_bg = 0;
    for (int t = 0; t < 8 && b; t++) {
        uint8_t v = t == 0 ? 100 : 200, m = 0;
        glcv_image f = {&v, 1, 1, 0, GLCV_PIXEL_GRAY8}, mask = {&m, 1, 1, 0, GLCV_PIXEL_GRAY8};
        CHECK_OK(glcv_bgsub_frames(b, &f, 1, 1));
        CHECK_OK(glcv_bgsub_read_masks(b, 0, &mask, 1));
        uint16_t bg = 0;
        CHECK_OK(glcv_bgsub_read_state(b, 0, &bg, NULL));
        if (t >= 1 && t <= 2)
            CHECK(m == 255 && bg == 100 * 256, "frame %d: mask %d B %u: held while counting", t, m, bg);
        if (t == 3)
            CHECK(m == 255 && bg > 100 * 256, "frame %d: mask %d B %u: the count reached absorb, B adapts", t, m, bg);
        if (t > 3)
            CHECK(bg > last_bg, "frame %d: B %u did not go on towards 200 (was %u)", t, bg, last_bg);
        last_bg = bg;
    }
    glcv_bgsub_destroy(&b);
    p.absorb = 0;

    /* Frame differences: 100, 130, 131 -> DIFF2 masks 0, 1, 0; DIFF3 0, 0, 0; 100, 130, 170 ->
     * DIFF3 1 on the third. */
    const uint8_t d[2][3] = {{100, 130, 131}, {100, 130, 170}};
    const int want2[2][3] = {{0, 1, 0}, {0, 1, 1}}, want3[2][3] = {{0, 0, 0}, {0, 0, 1}};
    for (int m = 0; m < 2; m++)
        for (int k = 0; k < 2; k++) {
            p.method = m ? GLCV_BGSUB_DIFF3 : GLCV_BGSUB_DIFF2;
            CHECK_OK(glcv_bgsub_create(&p, &b));
            for (int t = 0; t < 3 && b; t++) {
                uint8_t v = d[k][t], out = 0;
                glcv_image f = {&v, 1, 1, 0, GLCV_PIXEL_GRAY8}, mask = {&out, 1, 1, 0, GLCV_PIXEL_GRAY8};
                CHECK_OK(glcv_bgsub_frames(b, &f, 1, 1));
                CHECK_OK(glcv_bgsub_read_masks(b, 0, &mask, 1));
                int want = (m ? want3 : want2)[k][t];
                CHECK((out == 255) == want, "%s sequence %d frame %d: mask %d, expected %d",
                      glcv_bgsub_method_string(p.method), k, t, out, want);
            }
            glcv_bgsub_destroy(&b);
        }
}

/* ---- arguments ------------------------------------------------------------------------------- */

static void check_arguments(void)
{
    glcv_bgsub *b = (glcv_bgsub *)1;
    glcv_bgsub_params p = GLCV_BGSUB_PARAMS(.width = 8, .height = 4, .engine = GLCV_ENGINE_CPU, .logger = lg);
    CHECK_STATUS(glcv_bgsub_create(NULL, &b), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(b == NULL, "out not cleared on error");
    CHECK_STATUS(glcv_bgsub_create(&p, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_bgsub_params bad = p;
    bad.alpha = NAN;
    CHECK_STATUS(glcv_bgsub_create(&bad, &b), GLCV_ERROR_INVALID_ARGUMENT);
    bad = p;
    bad.alpha = 1.0f;
    CHECK_STATUS(glcv_bgsub_create(&bad, &b), GLCV_ERROR_INVALID_ARGUMENT);
    bad = p;
    bad.c = -1;
    CHECK_STATUS(glcv_bgsub_create(&bad, &b), GLCV_ERROR_INVALID_ARGUMENT);
    bad = p;
    bad.min_threshold = 300;
    CHECK_STATUS(glcv_bgsub_create(&bad, &b), GLCV_ERROR_INVALID_ARGUMENT);
    bad = p;
    bad.streams = 5000;
    CHECK_STATUS(glcv_bgsub_create(&bad, &b), GLCV_ERROR_INVALID_ARGUMENT);
    bad = p;
    bad.packed = 1; /* colour frames cannot be packed */
    CHECK_STATUS(glcv_bgsub_create(&bad, &b), GLCV_ERROR_INVALID_ARGUMENT);
    bad = p;
    bad.absorb = 256;
    CHECK_STATUS(glcv_bgsub_create(&bad, &b), GLCV_ERROR_INVALID_ARGUMENT);
    bad = p;
    bad.vote = 10;
    CHECK_STATUS(glcv_bgsub_create(&bad, &b), GLCV_ERROR_INVALID_ARGUMENT);
    bad = p;
    bad.upload = (glcv_bgsub_upload)7;
    CHECK_STATUS(glcv_bgsub_create(&bad, &b), GLCV_ERROR_INVALID_ARGUMENT);
    bad = p;
    bad.method = (glcv_bgsub_method)9;
    CHECK_STATUS(glcv_bgsub_create(&bad, &b), GLCV_ERROR_INVALID_ARGUMENT);
    bad = p;
    bad.engine = GLCV_ENGINE_CUDA;
    CHECK_STATUS(glcv_bgsub_create(&bad, &b), GLCV_ERROR_INVALID_ARGUMENT);
    bad = p;
    bad.width = 0;
    CHECK_STATUS(glcv_bgsub_create(&bad, &b), GLCV_ERROR_INVALID_ARGUMENT);

    p.streams = 2;
    CHECK_OK(glcv_bgsub_create(&p, &b));
    glcv_bgsub_params got;
    CHECK_OK(glcv_bgsub_get_params(b, &got));
    CHECK(got.alpha == 0.92f && got.c == 3.0f && got.min_threshold == 20.0f && got.method == GLCV_BGSUB_VSAM &&
              got.format == GLCV_PIXEL_RGB8 && got.passes == GLCV_BGSUB_SINGLE_PASS && got.packed == -1 &&
              got.engine == GLCV_ENGINE_CPU,
          "defaults: alpha %g c %g floor %g method %d format %d passes %d packed %d engine %d", got.alpha, got.c,
          got.min_threshold, got.method, got.format, got.passes, got.packed, got.engine);
    glcv_image f[2] = {test_image_make(8, 4, GLCV_PIXEL_RGB8, 0), test_image_make(8, 4, GLCV_PIXEL_RGB8, 0)};
    glcv_image small = test_image_make(7, 4, GLCV_PIXEL_RGB8, 0);
    glcv_image m[2] = {test_image_make(8, 4, GLCV_PIXEL_GRAY8, 0), test_image_make(8, 4, GLCV_PIXEL_GRAY8, 0)};
    CHECK_STATUS(glcv_bgsub_read_masks(b, 0, m, 2), GLCV_ERROR_STATE);
    CHECK_STATUS(glcv_bgsub_frames(b, f, 1, 1), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_bgsub_frames(b, NULL, 2, 1), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_image mixed[2] = {f[0], small};
    CHECK_STATUS(glcv_bgsub_frames(b, mixed, 2, 1), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_STATUS(glcv_bgsub_frames_mapped(b, 1), GLCV_ERROR_STATE);
    CHECK_STATUS(glcv_bgsub_learn_add(b, f, 2), GLCV_ERROR_STATE);
    CHECK_STATUS(glcv_bgsub_learn_end(b), GLCV_ERROR_STATE);
    CHECK_OK(glcv_bgsub_learn_begin(b));
    CHECK_STATUS(glcv_bgsub_frames(b, f, 2, 1), GLCV_ERROR_STATE);
    CHECK_OK(glcv_bgsub_learn_add(b, f, 2));
    CHECK_OK(glcv_bgsub_learn_end(b));
    CHECK_OK(glcv_bgsub_frames(b, f, 2, 1));
    CHECK_STATUS(glcv_bgsub_read_masks(b, 1, m, 2), GLCV_ERROR_STATE);
    CHECK_STATUS(glcv_bgsub_read_masks(b, 3, m, 2), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_image wrong[2] = {f[0], f[1]};
    CHECK_STATUS(glcv_bgsub_read_masks(b, 0, wrong, 2), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_bgsub_read_state(b, 2, NULL, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(glcv_bgsub_mask_texture(b) == 0, "the CPU engine has no mask texture");
    glcv_bgsub_method meth;
    CHECK_OK(glcv_bgsub_method_parse("diff3", &meth));
    CHECK(meth == GLCV_BGSUB_DIFF3, "parse diff3 gave %d", meth);
    CHECK_STATUS(glcv_bgsub_method_parse("mog2", &meth), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_bgsub_destroy(&b);
    CHECK(b == NULL, "destroy did not clear the handle");
    glcv_bgsub_destroy(&b);
    glcv_bgsub_destroy(NULL);
    for (int i = 0; i < 2; i++) {
        test_image_release(&f[i]);
        test_image_release(&m[i]);
    }
    test_image_release(&small);
}

/* ---- GL against CPU ---------------------------------------------------------------------------- */

typedef struct variant {
    glcv_bgsub_method method;
    glcv_pixel_format format;
    int gray, packed, streams, learn, download, mapped;
    glcv_bgsub_passes passes;
    int width;
    int absorb, vote;
    glcv_bgsub_upload upload;
    int height; /* 0: H */
} variant;

static int compare_masks(const char *what, int set, int stream, const glcv_image *a, const glcv_image *b)
{
    int bad = 0, first = -1;
    for (int i = 0; i < a->width * a->height; i++)
        if (a->data[i] != b->data[i]) {
            if (first < 0)
                first = i;
            bad++;
        }
    CHECK(bad == 0, "%s: set %d stream %d: %d mask pixels differ, first at (%d, %d): GL %d CPU %d", what, set, stream,
          bad, first % a->width, first / a->width, a->data[first], b->data[first]);
    return bad == 0;
}

/* The learning rule (glcv/bgsub.h): an end with no set is STATE and ends learning, B, T, counters
 * and history untouched; a refused add leaves learning open with the sets before it. Two objects
 * go through the same sets; one of them also has a learning that ends with no set (after a
 * refused add) and one whose refused add it goes on from: their masks and states stay equal. */
static void check_learn_rule(glcv_engine_mode engine)
{
    const char *name = glcv_engine_mode_string(engine);
    glcv_bgsub_params p = GLCV_BGSUB_PARAMS(.width = W, .height = H, .streams = 2, .engine = engine, .logger = lg);
    glcv_bgsub *twin[2] = {NULL, NULL};
    CHECK_OK(glcv_bgsub_create(&p, &twin[0]));
    CHECK_OK(glcv_bgsub_create(&p, &twin[1]));
    glcv_image f[2] = {test_image_make(W, H, GLCV_PIXEL_RGB8, 0), test_image_make(W, H, GLCV_PIXEL_RGB8, 0)};
    glcv_image small[2] = {test_image_make(W - 1, H, GLCV_PIXEL_RGB8, 0),
                           test_image_make(W - 1, H, GLCV_PIXEL_RGB8, 0)};
    glcv_image m[2][2];
    for (int k = 0; k < 2; k++)
        for (int s = 0; s < 2; s++)
            m[k][s] = test_image_make(W, H, GLCV_PIXEL_GRAY8, 0);
    size_t n = (size_t)W * H * 3;
    uint16_t *state[2][2];
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 2; j++)
            state[k][j] = calloc(n, sizeof(uint16_t));
    if (!twin[0] || !twin[1])
        goto done;
    for (int t = 0; t < 12; t++) {
        uint64_t rng = 77 + (uint64_t)t;
        for (int s = 0; s < 2; s++)
            make_frame(&f[s], s, t < 4 ? -3 : t - 4, 0, &rng);
        for (int k = 0; k < 2; k++) {
            glcv_bgsub *b = twin[k];
            if (t == 0)
                CHECK_OK(glcv_bgsub_learn_begin(b));
            if (t < 4) {
                /* twin 1: a refused set in the middle; learning goes on with the next one */
                if (k == 1 && t == 2)
                    CHECK_STATUS(glcv_bgsub_learn_add(b, small, 2), GLCV_ERROR_SIZE_MISMATCH);
                CHECK_OK(glcv_bgsub_learn_add(b, f, 2));
                if (t == 3)
                    CHECK_OK(glcv_bgsub_learn_end(b));
                continue;
            }
            if (k == 1 && t == 7) { /* abandoned: a refused set, then an end with none */
                CHECK_OK(glcv_bgsub_learn_begin(b));
                CHECK_STATUS(glcv_bgsub_learn_add(b, f, 1), GLCV_ERROR_INVALID_ARGUMENT);
                CHECK_STATUS(glcv_bgsub_learn_end(b), GLCV_ERROR_STATE);
                CHECK_STATUS(glcv_bgsub_learn_end(b), GLCV_ERROR_STATE); /* over: no learning open */
                CHECK_STATUS(glcv_bgsub_learn_add(b, f, 2), GLCV_ERROR_STATE);
            }
            CHECK_OK(glcv_bgsub_frames(b, f, 2, 1));
            CHECK_OK(glcv_bgsub_read_masks(b, 0, m[k], 2));
        }
        for (int s = 0; t >= 4 && s < 2; s++) {
            int bad = 0, first = -1;
            for (int i = 0; i < W * H; i++)
                if (m[1][s].data[i] != m[0][s].data[i] && bad++ == 0)
                    first = i;
            CHECK(bad == 0, "%s learning rule: set %d stream %d: %d mask pixels differ after an abandoned learning, "
                  "first at (%d, %d): %d, expected %d", name, t, s, bad, first % W, first / W,
                  first < 0 ? 0 : m[1][s].data[first], first < 0 ? 0 : m[0][s].data[first]);
        }
    }
    for (int s = 0; s < 2; s++) {
        for (int k = 0; k < 2; k++)
            CHECK_OK(glcv_bgsub_read_state(twin[k], s, state[k][0], state[k][1]));
        int bad = 0;
        for (size_t i = 0; i < n && state[0][0] && state[1][1]; i++)
            bad += state[0][0][i] != state[1][0][i] || state[0][1][i] != state[1][1][i];
        CHECK(bad == 0, "%s learning rule: stream %d: B or T differs at %d values after an abandoned learning", name,
              s, bad);
    }
done:
    for (int k = 0; k < 2; k++) {
        glcv_bgsub_destroy(&twin[k]);
        for (int s = 0; s < 2; s++) {
            test_image_release(&m[k][s]);
            free(state[k][s]);
        }
        test_image_release(&f[k]);
        test_image_release(&small[k]);
    }
}

/* The call-order errors the header gives, on every engine alike: masks of an older set without
 * params.download, and frames_mapped when a set was processed since map_frames. */
static void check_call_order(glcv_engine_mode engine)
{
    const char *name = glcv_engine_mode_string(engine);
    glcv_image f[2] = {test_image_make(W, H, GLCV_PIXEL_RGB8, 0), test_image_make(W, H, GLCV_PIXEL_RGB8, 0)};
    glcv_image m[2] = {test_image_make(W, H, GLCV_PIXEL_GRAY8, 0), test_image_make(W, H, GLCV_PIXEL_GRAY8, 0)};
    glcv_image staged[2];
    for (int download = 0; download < 2; download++) {
        glcv_bgsub *b = NULL;
        CHECK_OK(glcv_bgsub_create(&GLCV_BGSUB_PARAMS(.width = W, .height = H, .streams = 2, .engine = engine,
                                                      .download = download, .logger = lg),
                                   &b));
        if (!b)
            continue;
        for (int t = 0; t < 4; t++) {
            uint64_t rng = 5 + (uint64_t)t;
            for (int s = 0; s < 2; s++)
                make_frame(&f[s], s, t, 0, &rng);
            CHECK_OK(glcv_bgsub_frames(b, f, 2, 1));
            CHECK_OK(glcv_bgsub_read_masks(b, 0, m, 2)); /* a GL engine then holds this set's masks */
        }
        for (int age = 1; age <= 2; age++) {
            glcv_status want = download ? GLCV_OK : GLCV_ERROR_STATE;
            glcv_status got = glcv_bgsub_read_masks(b, age, m, 2);
            CHECK(got == want, "%s download %d: read_masks age %d: '%s', expected '%s'", name, download, age,
                  glcv_status_string(got), glcv_status_string(want));
            got = glcv_bgsub_map_masks(b, age, staged, 2);
            CHECK(got == want, "%s download %d: map_masks age %d: '%s', expected '%s'", name, download, age,
                  glcv_status_string(got), glcv_status_string(want));
        }
        /* a set processed between map_frames and frames_mapped: the mapping is gone */
        CHECK_OK(glcv_bgsub_map_frames(b, staged, 2));
        CHECK_OK(glcv_bgsub_frames(b, f, 2, 1));
        glcv_status got = glcv_bgsub_frames_mapped(b, 1);
        CHECK(got == GLCV_ERROR_STATE, "%s: frames_mapped after map_frames and frames: '%s', expected '%s'", name,
              glcv_status_string(got), glcv_status_string(GLCV_ERROR_STATE));
        CHECK_OK(glcv_bgsub_map_frames(b, staged, 2));
        for (int s = 0; s < 2; s++)
            glcv_image_convert(&f[s], &staged[s]);
        CHECK_OK(glcv_bgsub_frames_mapped(b, 1));
        got = glcv_bgsub_frames_mapped(b, 1);
        CHECK(got == GLCV_ERROR_STATE, "%s: frames_mapped twice: '%s', expected '%s'", name, glcv_status_string(got),
              glcv_status_string(GLCV_ERROR_STATE));
        glcv_bgsub_destroy(&b);
    }
    for (int s = 0; s < 2; s++) {
        test_image_release(&f[s]);
        test_image_release(&m[s]);
    }
}

static void run_variant(glcv_engine_mode engine, const variant *v, int random_mode)
{
    static const char *const uploads[] = {"default", "copy", "stream", "stream-blocks", "stream-fused"};
    const int h = v->height ? v->height : H;
    char what[240];
    snprintf(what, sizeof what, "%s %s %s format %d%s streams %d%s%s%s%s %s %dx%d absorb %d vote %d upload %s",
             glcv_engine_mode_string(engine),
             glcv_bgsub_method_string(v->method), v->gray ? "gray" : "colour", (int)v->format,
             v->packed == 1 ? " packed" : "", v->streams, v->learn ? " learned" : "", v->download ? " download" : "",
             v->mapped ? " mapped" : "", v->passes == GLCV_BGSUB_MULTI_PASS ? " multi-pass" : "",
             random_mode ? "random" : "structured", v->width, h, v->absorb, v->vote, uploads[v->upload]);
    glcv_bgsub_params p = GLCV_BGSUB_PARAMS(.width = v->width, .height = h, .streams = v->streams,
                                            .method = v->method, .format = v->format, .gray = v->gray,
                                            .packed = v->packed, .passes = v->passes, .download = v->download,
                                            .absorb = v->absorb, .vote = v->vote, .upload = v->upload, .logger = lg);
    glcv_bgsub *gpu = NULL, *cpu = NULL;
    p.engine = engine;
    CHECK_OK(glcv_bgsub_create(&p, &gpu));
    p.engine = GLCV_ENGINE_CPU;
    CHECK_OK(glcv_bgsub_create(&p, &cpu));
    if (!gpu || !cpu) {
        glcv_bgsub_destroy(&gpu);
        glcv_bgsub_destroy(&cpu);
        return;
    }
    glcv_bgsub_params got;
    glcv_bgsub_get_params(gpu, &got);
    CHECK(got.engine == engine, "%s: engine in use %s", what, glcv_engine_mode_string(got.engine));
    int want_packed = v->packed ? v->packed : v->format == GLCV_PIXEL_GRAY8 && v->width % 4 == 0 ? 1 : -1;
    CHECK(got.packed == want_packed, "%s: packed %d, expected %d", what, got.packed, want_packed);
    /* The default: packed gray streamed a word per store, one pixel per texel with whole quads
     * fused (single pass), the copy otherwise and without compute and GL 4.4. */
    int can_stream = engine == GLCV_ENGINE_COMPUTE && epoxy_gl_version() >= 44;
    int chain = v->passes == GLCV_BGSUB_MULTI_PASS && v->method == GLCV_BGSUB_VSAM;
    glcv_bgsub_upload want_upload = v->upload                                   ? v->upload
                                    : !can_stream                               ? GLCV_BGSUB_UPLOAD_COPY
                                    : want_packed == 1                          ? GLCV_BGSUB_UPLOAD_STREAM
                                    : v->width % 4 == 0 && !chain               ? GLCV_BGSUB_UPLOAD_STREAM_FUSED
                                                                                : GLCV_BGSUB_UPLOAD_COPY;
    /* Blocks need one pixel per texel and whole quads; otherwise the word-per-store stream runs. */
    if (want_upload >= GLCV_BGSUB_UPLOAD_STREAM_BLOCKS && (want_packed == 1 || v->width % 4 != 0))
        want_upload = GLCV_BGSUB_UPLOAD_STREAM;
    /* Blocks need the single pass (the chain's passes work on textures): a word per store. */
    if (want_upload >= GLCV_BGSUB_UPLOAD_STREAM_BLOCKS && chain)
        want_upload = GLCV_BGSUB_UPLOAD_STREAM;
    CHECK(got.upload == want_upload, "%s: upload %d, expected %d", what, got.upload, want_upload);
    enum { MAXS = 3 };
    glcv_image frames[MAXS], mg[MAXS], mc[MAXS];
    for (int s = 0; s < v->streams; s++) {
        /* A stride with padding for the host path. */
        int bpp = glcv_pixel_format_size(v->format);
        frames[s] = test_image_make(v->width, h, v->format, (size_t)(v->width * bpp + 5));
        mg[s] = test_image_make(v->width, h, GLCV_PIXEL_GRAY8, 0);
        mc[s] = test_image_make(v->width, h, GLCV_PIXEL_GRAY8, 0);
    }
    uint64_t rng = 0x1234567ull + (uint64_t)random_mode;
    if (v->learn) {
        CHECK_OK(glcv_bgsub_learn_begin(gpu));
        CHECK_OK(glcv_bgsub_learn_begin(cpu));
        for (int t = 0; t < 5; t++) {
            for (int s = 0; s < v->streams; s++)
                make_frame(&frames[s], s, -3, random_mode, &rng);
            CHECK_OK(glcv_bgsub_learn_add(gpu, frames, v->streams));
            CHECK_OK(glcv_bgsub_learn_add(cpu, frames, v->streams));
        }
        CHECK_OK(glcv_bgsub_learn_end(gpu));
        CHECK_OK(glcv_bgsub_learn_end(cpu));
    }
    int ok = 1;
    for (int t = 0; t < SETS && ok; t++) {
        for (int s = 0; s < v->streams; s++)
            make_frame(&frames[s], s, t, random_mode, &rng);
        if (v->mapped) {
            glcv_image staged[MAXS];
            CHECK_OK(glcv_bgsub_map_frames(gpu, staged, v->streams));
            for (int s = 0; s < v->streams; s++)
                glcv_image_convert(&frames[s], &staged[s]);
            CHECK_OK(glcv_bgsub_frames_mapped(gpu, 0));
        } else {
            CHECK_OK(glcv_bgsub_frames(gpu, frames, v->streams, 0));
        }
        CHECK_OK(glcv_bgsub_frames(cpu, frames, v->streams, 1));
        /* With downloads, read the set before (as a pipelined caller does) and this one at the end. */
        int age = v->download && t > 0 ? 1 : 0;
        if (age == 0 || t == SETS - 1) {
            CHECK_OK(glcv_bgsub_read_masks(gpu, 0, mg, v->streams));
            CHECK_OK(glcv_bgsub_read_masks(cpu, 0, mc, v->streams));
            for (int s = 0; s < v->streams; s++)
                ok &= compare_masks(what, t, s, &mg[s], &mc[s]);
        }
        if (age == 1) {
            CHECK_OK(glcv_bgsub_read_masks(gpu, 1, mg, v->streams));
            CHECK_OK(glcv_bgsub_read_masks(cpu, 1, mc, v->streams));
            for (int s = 0; s < v->streams; s++)
                ok &= compare_masks(what, t - 1, s, &mg[s], &mc[s]);
        }
    }
    /* Masks without a copy: the same as those read. */
    glcv_image mapped[MAXS];
    CHECK_OK(glcv_bgsub_map_masks(gpu, 0, mapped, v->streams));
    CHECK_OK(glcv_bgsub_read_masks(gpu, 0, mg, v->streams));
    for (int s = 0; s < v->streams; s++)
        ok &= compare_masks("map_masks", SETS - 1, s, &mapped[s], &mg[s]);
    /* The structured scene has foreground: a test that compares empty masks proves nothing. */
    if (!random_mode) {
        int fg = test_count_nonzero(mc[0].data, (size_t)v->width * h);
        CHECK(fg > 10 && fg < v->width * h / 2, "%s: %d foreground pixels in the last mask", what, fg);
    }
    if (v->method == GLCV_BGSUB_VSAM || v->learn) {
        size_t n = (size_t)v->width * h * (v->gray || v->format == GLCV_PIXEL_GRAY8 ? 1 : 3);
        uint16_t *bg[2] = {malloc(n * 2), malloc(n * 2)}, *th[2] = {malloc(n * 2), malloc(n * 2)};
        for (int s = 0; s < v->streams; s++) {
            CHECK_OK(glcv_bgsub_read_state(gpu, s, bg[0], th[0]));
            CHECK_OK(glcv_bgsub_read_state(cpu, s, bg[1], th[1]));
            size_t bad = 0, first = 0;
            for (size_t i = 0; i < n; i++)
                if (bg[0][i] != bg[1][i] || th[0][i] != th[1][i]) {
                    if (!bad)
                        first = i;
                    bad++;
                }
            CHECK(bad == 0, "%s: stream %d: %zu state values differ, first value %zu: GL B %u T %u, CPU B %u T %u",
                  what, s, bad, first, bg[0][first], th[0][first], bg[1][first], th[1][first]);
        }
        for (int i = 0; i < 2; i++) {
            free(bg[i]);
            free(th[i]);
        }
    }
    /* One set more, its masks first asked for as the texture (which the fused upload makes then). */
    for (int s = 0; s < v->streams; s++)
        make_frame(&frames[s], s, SETS, random_mode, &rng);
    CHECK_OK(glcv_bgsub_frames(gpu, frames, v->streams, 0));
    CHECK_OK(glcv_bgsub_frames(cpu, frames, v->streams, 1));
    CHECK_OK(glcv_bgsub_read_masks(cpu, 0, mc, v->streams));
    unsigned tex = glcv_bgsub_mask_texture(gpu);
    CHECK(tex != 0, "%s: no mask texture", what);
    if (tex) {
        size_t layer = (size_t)v->width * (size_t)h;
        uint8_t *all = malloc(layer * (size_t)v->streams);
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        glBindTexture(GL_TEXTURE_2D_ARRAY, tex);
        glGetTexImage(GL_TEXTURE_2D_ARRAY, 0, got.packed == 1 ? GL_RGBA : GL_RED, GL_UNSIGNED_BYTE, all);
        glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
        for (int s = 0; s < v->streams; s++) {
            glcv_image t = {all + layer * (size_t)s, v->width, h, 0, GLCV_PIXEL_GRAY8};
            compare_masks("mask texture", SETS, s, &t, &mc[s]);
        }
        free(all);
    }
    for (int s = 0; s < v->streams; s++) {
        test_image_release(&frames[s]);
        test_image_release(&mg[s]);
        test_image_release(&mc[s]);
    }
    glcv_bgsub_destroy(&gpu);
    glcv_bgsub_destroy(&cpu);
}

/* Without a current context, every call that needs GL says NO_CONTEXT (and calls nothing). */
static void check_no_context(glcv_context *ctx, glcv_engine_mode engine)
{
    glcv_bgsub_params p = GLCV_BGSUB_PARAMS(.width = 8, .height = 4, .engine = engine, .logger = lg);
    glcv_bgsub *b = NULL;
    CHECK_OK(glcv_bgsub_create(&p, &b));
    if (!b)
        return;
    glcv_image f = test_image_make(8, 4, GLCV_PIXEL_RGB8, 0), m = test_image_make(8, 4, GLCV_PIXEL_GRAY8, 0);
    glcv_image mapped;
    uint16_t state[8 * 4 * 3];
    CHECK_OK(glcv_bgsub_frames(b, &f, 1, 1));
    EGLDisplay dpy = eglGetCurrentDisplay();
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    CHECK(!glcv_gl_context_current(), "the context is still current");
    CHECK_STATUS(glcv_bgsub_frames(b, &f, 1, 1), GLCV_ERROR_NO_CONTEXT);
    CHECK_STATUS(glcv_bgsub_map_frames(b, &mapped, 1), GLCV_ERROR_NO_CONTEXT);
    CHECK_STATUS(glcv_bgsub_read_masks(b, 0, &m, 1), GLCV_ERROR_NO_CONTEXT);
    CHECK_STATUS(glcv_bgsub_map_masks(b, 0, &mapped, 1), GLCV_ERROR_NO_CONTEXT);
    CHECK_STATUS(glcv_bgsub_read_state(b, 0, state, state), GLCV_ERROR_NO_CONTEXT);
    CHECK_OK(glcv_context_make_current(ctx));
    CHECK_OK(glcv_bgsub_read_masks(b, 0, &m, 1));
    glcv_bgsub_destroy(&b);
    test_image_release(&f);
    test_image_release(&m);
}

static void check_gl(glcv_engine_mode engine)
{
    const variant base = {GLCV_BGSUB_VSAM, GLCV_PIXEL_RGB8, 0, 0, 1, 0, 0, 0, GLCV_BGSUB_SINGLE_PASS, W, 0, 0,
                          GLCV_BGSUB_UPLOAD_DEFAULT, 0};
    variant list[80];
    int n = 0;
    for (int m = GLCV_BGSUB_VSAM; m <= GLCV_BGSUB_DIFF3; m++) {
        variant v = base;
        v.method = (glcv_bgsub_method)m;
        list[n++] = v; /* colour RGB */
        v.format = GLCV_PIXEL_GRAY8;
        list[n++] = v; /* gray, packed by default (W % 4 == 0) */
        v.packed = -1;
        list[n++] = v; /* gray, one pixel per texel */
    }
    variant v = base;
    v.format = GLCV_PIXEL_BGR8;
    v.streams = 3;
    list[n++] = v;
    v.format = GLCV_PIXEL_RGBA8;
    v.gray = 1;
    v.streams = 2;
    list[n++] = v; /* luma of colour frames */
    v = base;
    v.passes = GLCV_BGSUB_MULTI_PASS;
    list[n++] = v;
    v.format = GLCV_PIXEL_GRAY8;
    v.streams = 2;
    list[n++] = v; /* chain, packed */
    v = base;
    v.learn = 1;
    v.streams = 2;
    list[n++] = v;
    v.method = GLCV_BGSUB_DIFF2;
    v.format = GLCV_PIXEL_GRAY8;
    list[n++] = v;
    v = base;
    v.download = 1;
    v.mapped = 1;
    v.streams = 3;
    list[n++] = v;
    v.format = GLCV_PIXEL_GRAY8;
    list[n++] = v;
    /* A short absorb count, so that the counters decide within the test's sets; and the vote
     * off and at its extremes. */
    v = base;
    v.absorb = 2;
    list[n++] = v;
    v.passes = GLCV_BGSUB_MULTI_PASS;
    list[n++] = v;
    v.format = GLCV_PIXEL_GRAY8;
    list[n++] = v;
    v.passes = GLCV_BGSUB_SINGLE_PASS;
    v.vote = 1;
    list[n++] = v;
    v.vote = 9;
    v.format = GLCV_PIXEL_BGRA8;
    list[n++] = v;
    v.vote = -1;
    v.method = GLCV_BGSUB_DIFF3;
    list[n++] = v;
    v = base;
    v.width = 33; /* odd width: gray cannot pack */
    v.format = GLCV_PIXEL_GRAY8;
    list[n++] = v;
    if (engine == GLCV_ENGINE_COMPUTE && epoxy_gl_version() >= 44) {
        /* The first pass reads the frames from the staging memory (and the vote writes the masks
         * to the download memory). */
        v = base;
        v.upload = GLCV_BGSUB_UPLOAD_STREAM;
        v.streams = 2;
        v.absorb = 2;
        list[n++] = v;
        v.download = 1;
        v.mapped = 1;
        list[n++] = v;
        v.format = GLCV_PIXEL_GRAY8;
        list[n++] = v;
        v.passes = GLCV_BGSUB_MULTI_PASS;
        list[n++] = v;
        v.method = GLCV_BGSUB_DIFF2;
        v.format = GLCV_PIXEL_BGR8;
        v.width = 33;
        list[n++] = v;
        /* In blocks of 64 quads: colour of 3 and 4 bytes, luma of colour, unpacked gray; blocks
         * that straddle layers and a set that ends inside a block and inside a 16-byte word
         * (36 x 13 x 3: 351 quads, 1053 words); the chain, the frame differences, the vote's
         * extremes; and the fallbacks to a word per store (odd width, packed gray). */
        /* The copy, asked for where the default streams: colour with downloads, learned. */
        v = base;
        v.upload = GLCV_BGSUB_UPLOAD_COPY;
        v.streams = 3;
        v.download = 1;
        v.mapped = 1;
        list[n++] = v;
        v.learn = 1;
        v.format = GLCV_PIXEL_BGRA8;
        list[n++] = v;
        v = base;
        v.upload = GLCV_BGSUB_UPLOAD_STREAM_BLOCKS;
        v.absorb = 2;
        list[n++] = v;
        v.streams = 3;
        v.height = 13;
        v.download = 1;
        v.mapped = 1;
        list[n++] = v;
        v.format = GLCV_PIXEL_BGR8;
        v.learn = 1;
        list[n++] = v;
        v.height = 0;
        v.learn = 0;
        v.streams = 2;
        v.format = GLCV_PIXEL_BGRA8;
        list[n++] = v;
        v.format = GLCV_PIXEL_RGB8;
        v.gray = 1;
        list[n++] = v;
        v.gray = 0;
        v.format = GLCV_PIXEL_GRAY8;
        v.packed = -1;
        list[n++] = v;
        v.format = GLCV_PIXEL_RGB8;
        v.packed = 0;
        v.passes = GLCV_BGSUB_MULTI_PASS;
        list[n++] = v;
        v.passes = GLCV_BGSUB_SINGLE_PASS;
        v.method = GLCV_BGSUB_DIFF2;
        list[n++] = v;
        v.method = GLCV_BGSUB_DIFF3;
        v.download = 0;
        v.mapped = 0;
        list[n++] = v;
        v.method = GLCV_BGSUB_VSAM;
        v.download = 1;
        v.vote = -1;
        list[n++] = v;
        v.vote = 1;
        list[n++] = v;
        v.vote = 9;
        v.format = GLCV_PIXEL_BGR8;
        list[n++] = v;
        v.vote = 0;
        v.width = 33; /* falls back */
        list[n++] = v;
        v.width = W;
        v.format = GLCV_PIXEL_GRAY8; /* packed: falls back */
        list[n++] = v;
        /* Fused: the vote of a set in the next set's dispatch, read one set behind (downloads) or
         * made when asked for (the newest set, the texture); learned; the frame differences; and
         * the fallbacks (chain, odd width, packed gray). */
        v = base;
        v.upload = GLCV_BGSUB_UPLOAD_STREAM_FUSED;
        v.absorb = 2;
        list[n++] = v;
        v.streams = 3;
        v.height = 13;
        v.download = 1;
        v.mapped = 1;
        list[n++] = v;
        v.format = GLCV_PIXEL_BGRA8;
        v.learn = 1;
        list[n++] = v;
        v.height = 0;
        v.learn = 0;
        v.streams = 2;
        v.format = GLCV_PIXEL_RGB8;
        v.gray = 1;
        list[n++] = v;
        v.gray = 0;
        v.method = GLCV_BGSUB_DIFF2;
        list[n++] = v;
        v.learn = 1; /* learned thresholds of the frame differences, from the state buffer */
        v.gray = 1;
        list[n++] = v;
        v.gray = 0;
        list[n++] = v;
        v.learn = 0;
        v.method = GLCV_BGSUB_DIFF3;
        v.vote = -1;
        list[n++] = v;
        v.method = GLCV_BGSUB_VSAM;
        v.vote = 9;
        v.download = 0;
        list[n++] = v;
        v.vote = 0;
        v.download = 1;
        v.passes = GLCV_BGSUB_MULTI_PASS; /* falls back to a word per store */
        list[n++] = v;
        v.passes = GLCV_BGSUB_SINGLE_PASS;
        v.width = 33; /* falls back to a word per store */
        list[n++] = v;
        v.width = W;
        v.format = GLCV_PIXEL_GRAY8; /* packed: likewise */
        list[n++] = v;
    } else {
        glcv_bgsub *b = NULL;
        glcv_bgsub_params p = GLCV_BGSUB_PARAMS(.width = 8, .height = 8, .engine = engine,
                                                .upload = GLCV_BGSUB_UPLOAD_STREAM, .logger = lg);
        CHECK_STATUS(glcv_bgsub_create(&p, &b), GLCV_ERROR_UNSUPPORTED);
        p.upload = GLCV_BGSUB_UPLOAD_STREAM_BLOCKS;
        CHECK_STATUS(glcv_bgsub_create(&p, &b), GLCV_ERROR_UNSUPPORTED);
        p.upload = GLCV_BGSUB_UPLOAD_STREAM_FUSED;
        CHECK_STATUS(glcv_bgsub_create(&p, &b), GLCV_ERROR_UNSUPPORTED);
    }
    for (int i = 0; i < n; i++)
        for (int r = 0; r < 2; r++)
            run_variant(engine, &list[i], r);
}

int main(int argc, char **argv)
{
    lg = test_logger();
    glcv_engine_mode engine = GLCV_ENGINE_FRAGMENT;
    if (argc > 1 && glcv_engine_mode_parse(argv[1], &engine) != GLCV_OK) {
        fprintf(stderr, "usage: test_bgsub [fragment|compute]\n");
        return 2;
    }
    check_rule_by_hand();
    check_arguments();
    check_learn_rule(GLCV_ENGINE_CPU);
    check_call_order(GLCV_ENGINE_CPU);
    glcv_context *ctx = test_context_or_skip(engine == GLCV_ENGINE_COMPUTE ? 43 : 33);
    check_learn_rule(engine);
    check_call_order(engine);
    check_gl(engine);
    check_no_context(ctx, engine);
    glcv_context_destroy(&ctx);
    return test_finish("test_bgsub");
}
