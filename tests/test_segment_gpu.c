/* Segmenter: a GPU engine (fragment or compute, argv[1]; default fragment; "compute multipass"
 * runs the MRF one dispatch per substep instead of the tiled kernel) against the CPU engine,
 * which is the oracle. Both get the same parameters, seed and frames; compared are the
 * window sums (exactly), the integer thresholds (exactly, except where the threshold lies
 * within rounding of an integer), the masks, the learned and adapted backgrounds, texture
 * inputs and outputs, read-back layouts, BGR input, timings and engine selection. */
#include "testutil.h"

#include "segment_internal.h"

#include <epoxy/gl.h>
#include <math.h>
#include <string.h>

static glcv_engine_mode g_mode = GLCV_ENGINE_FRAGMENT;
static int g_multipass; /* COMPUTE: one dispatch per MRF substep */
static glcv_logger g_log;

/* ---- images ----------------------------------------------------------------------------- */

static int clamp255(int v)
{
    return v < 0 ? 0 : v > 255 ? 255 : v;
}

static int rand_range(uint64_t *rng, int lo, int hi)
{
    return lo + (int)(test_rand(rng) % (uint64_t)(hi - lo + 1));
}

/* Uniform noise 0..255 (RGB8, packed). */
static void fill_noise(glcv_image *im, uint64_t *rng)
{
    size_t n = (size_t)im->width * im->height * 3;
    for (size_t i = 0; i < n; i++)
        im->data[i] = (uint8_t)(test_rand(rng) & 255);
}

/* A textured background: gradients plus per-pixel texture (RGB8, packed). */
static void fill_background(glcv_image *im, uint64_t *rng)
{
    int w = im->width, h = im->height;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = im->data + ((size_t)y * w + x) * 3;
            p[0] = (uint8_t)clamp255(40 + x * 150 / (w > 1 ? w - 1 : 1) + rand_range(rng, 0, 50));
            p[1] = (uint8_t)clamp255(60 + y * 120 / (h > 1 ? h - 1 : 1) + rand_range(rng, 0, 50));
            p[2] = (uint8_t)clamp255(90 + ((x / 4 + y / 4) % 2) * 60 + rand_range(rng, 0, 40));
        }
}

/* A frame: the background plus uniform noise in [-noise, noise] and `objects` rectangles of a
 * random colour, so that window statistics land near the thresholds as well as far away. */
static void fill_frame(glcv_image *fg, const glcv_image *bg, uint64_t *rng, int noise, int objects)
{
    int w = fg->width, h = fg->height;
    for (size_t i = 0; i < (size_t)w * h * 3; i++)
        fg->data[i] = (uint8_t)clamp255(bg->data[i] + (noise ? rand_range(rng, -noise, noise) : 0));
    for (int o = 0; o < objects; o++) {
        int ow = 1 + rand_range(rng, 0, w / 3), oh = 1 + rand_range(rng, 0, h / 3);
        int ox = rand_range(rng, 0, w - 1), oy = rand_range(rng, 0, h - 1);
        int col[3] = {rand_range(rng, 0, 255), rand_range(rng, 0, 255), rand_range(rng, 0, 255)};
        for (int y = oy; y < oy + oh && y < h; y++)
            for (int x = ox; x < ox + ow && x < w; x++)
                for (int c = 0; c < 3; c++)
                    fg->data[((size_t)y * w + x) * 3 + c] = (uint8_t)clamp255(col[c] + rand_range(rng, -8, 8));
    }
}

/* ---- segmenters ------------------------------------------------------------------------- */

typedef struct seg_cfg {
    float ts, odc, b1, b2;
    int iterations;
    uint64_t seed;
    float adapt_rate;
    int timing;
} seg_cfg;

static seg_cfg cfg_default(void)
{
    seg_cfg c = {310.0f, 5800.0f, 2.0f, 200.0f, 8, 0x5EED, 0.0f, 0};
    return c;
}

/* Creates a segmenter; values that params cannot express (zeros) go through the setters. */
static glcv_segment *make_seg(int w, int h, glcv_engine_mode mode, const seg_cfg *c)
{
    glcv_segment_params p = {0};
    p.width = w;
    p.height = h;
    p.engine = mode;
    p.logger = g_log;
    p.preset = GLCV_SEGMENT_PAPER; /* the values given, nothing calibrated or adapted unless asked */
    p.ts = c->ts;
    p.odc = c->odc;
    p.b1 = c->b1;
    p.b2 = c->b2;
    p.iterations = c->iterations;
    p.seed = c->seed;
    p.adapt_rate = c->adapt_rate;
    p.timing = c->timing;
    glcv_segment *seg = NULL;
    glcv_status st = glcv_segment_create(&p, &seg);
    CHECK(st == GLCV_OK, "create %dx%d engine %s: %s", w, h, glcv_engine_mode_string(mode), glcv_status_string(st));
    if (st != GLCV_OK)
        return NULL;
    if (c->ts == 0.0f)
        CHECK_OK(glcv_segment_set_ts(seg, 0.0f));
    if (c->odc == 0.0f)
        CHECK_OK(glcv_segment_set_odc(seg, 0.0f));
    if (c->iterations == 0)
        CHECK_OK(glcv_segment_set_iterations(seg, 0));
    glcv_segment_params g;
    CHECK_OK(glcv_segment_get_params(seg, &g));
    CHECK(g.ts == c->ts && g.odc == c->odc && g.b1 == c->b1 && g.b2 == c->b2 && g.iterations == c->iterations,
          "resolved params differ from the requested ones (ts %g/%g odc %g/%g it %d/%d)", g.ts, c->ts, g.odc, c->odc,
          g.iterations, c->iterations);
    if (mode == GLCV_ENGINE_COMPUTE && g_multipass)
        CHECK_OK(glcv_segment_use_multipass(seg));
    /* The engine (and in compute mode the MRF kernel) this run is about, not a fallback. */
    if (mode != GLCV_ENGINE_AUTO)
        test_segment_on_path(seg, mode, g_multipass);
    return seg;
}

/* Reads a mask as packed GRAY8 into `out` (w*h bytes). */
static int read_mask_gray(glcv_segment *seg, int w, int h, uint8_t *out)
{
    glcv_image m = {out, w, h, 0, GLCV_PIXEL_GRAY8};
    glcv_status st = glcv_segment_read_mask(seg, &m);
    CHECK(st == GLCV_OK, "read_mask: %s", glcv_status_string(st));
    return st == GLCV_OK;
}

/* A GPU segmenter and its CPU twin, fed the same frames. */
typedef struct pair {
    glcv_segment *gpu, *cpu;
    int w, h;
    char label[96];
    int tolerated; /* threshold differences accepted as rounding cases so far (all frames) */
    int frames;
} pair;

static int pair_open(pair *pr, const char *label, int w, int h, const seg_cfg *c)
{
    memset(pr, 0, sizeof *pr);
    snprintf(pr->label, sizeof pr->label, "%s", label);
    pr->w = w;
    pr->h = h;
    pr->gpu = make_seg(w, h, g_mode, c);
    pr->cpu = make_seg(w, h, GLCV_ENGINE_CPU, c);
    return pr->gpu && pr->cpu;
}

static void pair_close(pair *pr)
{
    glcv_segment_destroy(&pr->gpu);
    glcv_segment_destroy(&pr->cpu);
}

static void pair_background(pair *pr, const glcv_image *bg)
{
    CHECK_OK(glcv_segment_set_background(pr->gpu, bg));
    CHECK_OK(glcv_segment_set_background(pr->cpu, bg));
}

/* Compares the last frame of both engines. bg and fg (packed RGB8) enable the independent
 * check of the CPU window sums; mask_fraction is the share of pixels that must agree. */
static void pair_compare(pair *pr, int frame, const glcv_image *bg, const glcv_image *fg, double mask_fraction,
                         int compare_sums)
{
    const int w = pr->w, h = pr->h;
    const size_t n = (size_t)w * h;
    int32_t *q[2][3];
    uint8_t *t[2][2], *m[2];
    for (int e = 0; e < 2; e++) {
        for (int k = 0; k < 3; k++)
            q[e][k] = malloc(n * sizeof(int32_t));
        t[e][0] = malloc(n);
        t[e][1] = malloc(n);
        m[e] = malloc(n);
    }
    glcv_segment *segs[2] = {pr->gpu, pr->cpu};
    glcv_segment_params prm;
    CHECK_OK(glcv_segment_get_params(pr->cpu, &prm));
    int ok = 1;
    for (int e = 0; e < 2; e++) {
        if (compare_sums) {
            glcv_status st = glcv_segment_read_qualifiers(segs[e], q[e][0], q[e][1], q[e][2]);
            CHECK(st == GLCV_OK, "%s frame %d: read_qualifiers (%s): %s", pr->label, frame, e ? "cpu" : "gpu",
                  glcv_status_string(st));
            ok &= st == GLCV_OK;
            st = glcv_segment_read_thresholds(segs[e], t[e][0], t[e][1]);
            CHECK(st == GLCV_OK, "%s frame %d: read_thresholds (%s): %s", pr->label, frame, e ? "cpu" : "gpu",
                  glcv_status_string(st));
            ok &= st == GLCV_OK;
        }
        ok &= read_mask_gray(segs[e], w, h, m[e]);
    }
    if (!ok)
        goto done;

    int tolerated_now = 0;
    if (compare_sums) {
        /* (a) window sums: exact. */
        int bad = 0;
        static const char *qn[3] = {"fore", "back", "cross"};
        for (size_t i = 0; i < n; i++)
            for (int k = 0; k < 3; k++)
                if (q[0][k][i] != q[1][k][i] && bad++ < 5)
                    fprintf(stderr, "%s frame %d (%d, %d): %s gpu %d cpu %d (diff %d)\n", pr->label, frame,
                            (int)(i % w), (int)(i / w), qn[k], q[0][k][i], q[1][k][i], q[0][k][i] - q[1][k][i]);
        CHECK(bad == 0, "%s frame %d: %d window sums differ between GPU and CPU", pr->label, frame, bad);

        /* The CPU's sums against a direct computation. */
        if (bg && fg) {
            int badc = 0;
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    int32_t s[3];
                    size_t i = (size_t)y * w + x;
                    test_window_sums(fg->data, bg->data, w, h, x, y, s);
                    if ((s[0] != q[1][0][i] || s[1] != q[1][1][i] || s[2] != q[1][2][i]) && badc++ < 5)
                        fprintf(stderr, "%s frame %d (%d, %d): cpu sums %d/%d/%d, direct %d/%d/%d\n", pr->label,
                                frame, x, y, q[1][0][i], q[1][1][i], q[1][2][i], s[0], s[1], s[2]);
                }
            CHECK(badc == 0, "%s frame %d: %d CPU window sums differ from the direct computation", pr->label, frame,
                  badc);
        }

        /* (b) thresholds: equal, except where x = (Ts + 12B - D^2) / (2B) lies within rounding
         * of an integer k, where k and k + 1 are both right. "Within rounding": 1e-3, widened
         * by 4 float32 ulps of the terms compared (Ts + 12B and D^2, over 2B), which only
         * matters for large Ts with small B. */
        int badt = 0, near_strict = 0, near_float = 0;
        double worst = 0.0;
        for (int s = 0; s < 2; s++) {
            double b = s == 0 ? prm.b1 : prm.b2;
            for (size_t i = 0; i < n; i++) {
                int tg = t[0][s][i], tc = t[1][s][i];
                if (tg == tc)
                    continue;
                double x = test_decision_x(q[1][0][i], q[1][1][i], q[1][2][i], prm.ts, prm.odc, b);
                double k = nearbyint(x);
                double frac = fabs(x - k);
                double d2 = prm.ts + 12.0 * b - 2.0 * b * x;
                double band = 1e-3 + ldexp((prm.ts + 12.0 * b + fabs(d2)) / (2.0 * b), -22);
                int lo = tg < tc ? tg : tc, hi = tg < tc ? tc : tg;
                int adjacent = hi == lo + 1 && lo == (int)k;
                if (adjacent && frac < 1e-3) {
                    near_strict++;
                } else if (adjacent && frac < band) {
                    near_float++;
                    if (frac > worst)
                        worst = frac;
                } else if (badt++ < 5) {
                    fprintf(stderr,
                            "%s frame %d (%d, %d): m_min(B%d) gpu %d cpu %d; fore %d back %d cross %d, x = %.6f "
                            "(%.2g from an integer, band %.2g)\n",
                            pr->label, frame, (int)(i % w), (int)(i / w), s + 1, tg, tc, q[1][0][i], q[1][1][i],
                            q[1][2][i], x, frac, band);
                }
            }
        }
        CHECK(badt == 0, "%s frame %d: %d thresholds differ away from a rounding boundary", pr->label, frame, badt);
        if (near_strict || near_float)
            printf("  %s frame %d: %d threshold(s) differ within 1e-3 of a boundary, %d within float32 rounding "
                   "beyond that (worst %.3g)\n",
                   pr->label, frame, near_strict, near_float, worst);
        CHECK(near_strict + near_float <= 3 + (int)(n / 1000),
              "%s frame %d: %d rounding-boundary threshold differences, more than expected", pr->label, frame,
              near_strict + near_float);
        tolerated_now = near_strict + near_float;
    }
    pr->tolerated += tolerated_now;

    /* (c) masks: a differing threshold may flip its pixel and, through M, its neighbours and
     * the following frames; otherwise the masks must agree on mask_fraction of the pixels. */
    {
        int bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += m[0][i] != m[1][i];
        int allowed = (int)floor((double)n * (1.0 - mask_fraction) + 1e-9) + 9 * pr->tolerated;
        if (bad > allowed) {
            int shown = 0;
            for (size_t i = 0; i < n && shown < 8; i++)
                if (m[0][i] != m[1][i]) {
                    shown++;
                    fprintf(stderr, "%s frame %d (%d, %d): mask gpu %d cpu %d", pr->label, frame, (int)(i % w),
                            (int)(i / w), m[0][i], m[1][i]);
                    if (compare_sums)
                        fprintf(stderr, " (m_min B1 %d/%d, B2 %d/%d)", t[0][0][i], t[1][0][i], t[0][1][i],
                                t[1][1][i]);
                    fputc('\n', stderr);
                }
        }
        CHECK(bad <= allowed, "%s frame %d: masks differ at %d of %zu pixels (%.4f %%), allowed %d", pr->label, frame,
              bad, n, 100.0 * bad / (double)n, allowed);
    }
done:
    for (int e = 0; e < 2; e++) {
        for (int k = 0; k < 3; k++)
            free(q[e][k]);
        free(t[e][0]);
        free(t[e][1]);
        free(m[e]);
    }
}

static void pair_frame(pair *pr, const glcv_image *bg, const glcv_image *fg, double mask_fraction)
{
    glcv_status sg = glcv_segment_frame(pr->gpu, fg, 1);
    glcv_status sc = glcv_segment_frame(pr->cpu, fg, 1);
    CHECK(sg == GLCV_OK && sc == GLCV_OK, "%s frame %d: gpu %s, cpu %s", pr->label, pr->frames,
          glcv_status_string(sg), glcv_status_string(sc));
    if (sg == GLCV_OK && sc == GLCV_OK)
        pair_compare(pr, pr->frames, bg, fg, mask_fraction, 1);
    pr->frames++;
}

/* ---- cases ------------------------------------------------------------------------------ */

static void case_random_noise(void)
{
    const int w = 64, h = 48;
    uint64_t rng = 101;
    seg_cfg c = cfg_default();
    pair pr;
    if (pair_open(&pr, "noise 64x48", w, h, &c)) {
        glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), fg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
        fill_noise(&bg, &rng);
        pair_background(&pr, &bg);
        for (int f = 0; f < 3; f++) {
            fill_noise(&fg, &rng);
            pair_frame(&pr, &bg, &fg, 0.9999);
        }
        test_image_release(&bg);
        test_image_release(&fg);
    }
    pair_close(&pr);
}

/* Parameters across their ranges, iterations 0, 1 and 8, several seeds. */
static void case_params(void)
{
    const int w = 64, h = 48;
    uint64_t rng = 202;
    static const int its[] = {0, 1, 8, 0, 1, 8, 3};
    for (int k = 0; k < 7; k++) {
        seg_cfg c = cfg_default();
        c.iterations = its[k];
        c.ts = (float)rand_range(&rng, 50, 2000) + (k % 2 ? 0.5f : 0.0f);
        c.odc = k == 1 ? 0.0f : (float)rand_range(&rng, 0, 30000);
        c.b1 = 1.0f + (float)rand_range(&rng, 0, 8) * 0.25f;
        c.b2 = (float)rand_range(&rng, 50, 700);
        c.seed = test_rand(&rng) | 1;
        char label[96];
        snprintf(label, sizeof label, "params[%d] ts %g odc %g b1 %g b2 %g it %d", k, c.ts, c.odc, c.b1, c.b2,
                 c.iterations);
        pair pr;
        if (pair_open(&pr, label, w, h, &c)) {
            glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), fg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
            fill_background(&bg, &rng);
            pair_background(&pr, &bg);
            for (int f = 0; f < 4; f++) {
                if (f == 2) { /* both restart their subset orders from a new seed */
                    uint64_t seed = test_rand(&rng);
                    CHECK_OK(glcv_segment_set_seed(pr.gpu, seed));
                    CHECK_OK(glcv_segment_set_seed(pr.cpu, seed));
                }
                if (f == 3 && k % 2) {
                    CHECK_OK(glcv_segment_reset(pr.gpu));
                    CHECK_OK(glcv_segment_reset(pr.cpu));
                }
                fill_frame(&fg, &bg, &rng, 4 + 5 * f, 3);
                pair_frame(&pr, &bg, &fg, 0.9999);
            }
            test_image_release(&bg);
            test_image_release(&fg);
        }
        pair_close(&pr);
    }
}

static void case_sizes(void)
{
    static const int sizes[][2] = {{1, 1}, {2, 2}, {3, 5}, {33, 17}};
    uint64_t rng = 303;
    for (int s = 0; s < 4; s++) {
        const int w = sizes[s][0], h = sizes[s][1];
        char label[64];
        snprintf(label, sizeof label, "size %dx%d", w, h);
        seg_cfg c = cfg_default();
        pair pr;
        if (pair_open(&pr, label, w, h, &c)) {
            glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), fg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
            fill_noise(&bg, &rng);
            pair_background(&pr, &bg);
            for (int f = 0; f < 3; f++) {
                if (f == 0)
                    fill_noise(&fg, &rng);
                else
                    fill_frame(&fg, &bg, &rng, 10, 1);
                pair_frame(&pr, &bg, &fg, 0.9999);
            }
            test_image_release(&bg);
            test_image_release(&fg);
        }
        pair_close(&pr);
    }
}

/* Valid but extreme parameters (the limits are 0..1e9 for Ts and Odc, (0, 1e9] for B): a huge
 * Odc (towards the paper's Odc -> infinity limit, D^2 -> |f - b|^2 / 2), a huge Ts, tiny and
 * huge B. The engines must agree; values beyond the limits are refused by both alike. */
static void case_extreme_params(void)
{
    const int w = 40, h = 30;
    static const float odcs[] = {1e6f, 1e9f, 1e20f, 5800.0f, 5800.0f, 5800.0f, 0.0f};
    static const float tss[] = {310.0f, 1e9f};
    static const float bs[][2] = {{2, 200}, {2, 200}, {2, 200}, {1e-30f, 1e9f}, {1e9f, 1e-30f}, {1e-3f, 1e6f},
                                  {0.5f, 3e8f}};
    uint64_t rng = 1010;
    glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), fg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
    fill_background(&bg, &rng);
    fill_frame(&fg, &bg, &rng, 20, 3);
    for (int k = 0; k < 7; k++)
        for (int t = 0; t < 2; t++) {
            seg_cfg c = cfg_default();
            c.odc = odcs[k];
            c.ts = tss[t];
            c.b1 = bs[k][0];
            c.b2 = bs[k][1];
            char label[96];
            snprintf(label, sizeof label, "extreme odc %g ts %g b1 %g b2 %g", c.odc, c.ts, c.b1, c.b2);
            /* A documented upper limit would be a valid answer too: both engines refusing the
             * value alike is accepted; anything else must agree. */
            glcv_segment_params p = {0};
            p.width = w;
            p.height = h;
            p.preset = GLCV_SEGMENT_PAPER;
            p.odc = c.odc;
            p.ts = c.ts;
            p.b1 = c.b1;
            p.b2 = c.b2;
            glcv_status st[2];
            for (int e = 0; e < 2; e++) {
                glcv_segment *probe = NULL;
                p.engine = e ? GLCV_ENGINE_CPU : g_mode;
                st[e] = glcv_segment_create(&p, &probe);
                glcv_segment_destroy(&probe);
            }
            CHECK(st[0] == st[1], "%s: create gives '%s' on the GPU and '%s' on the CPU", label,
                  glcv_status_string(st[0]), glcv_status_string(st[1]));
            if (st[0] == GLCV_ERROR_INVALID_ARGUMENT && st[1] == st[0]) {
                printf("  note: %s is refused by both engines\n", label);
                continue;
            }
            pair pr;
            if (pair_open(&pr, label, w, h, &c)) {
                pair_background(&pr, &bg);
                pair_frame(&pr, &bg, &fg, 0.9999);
            }
            pair_close(&pr);
        }
    test_image_release(&bg);
    test_image_release(&fg);
}

/* Several GPU segmenters of different sizes in one context, interleaved frame by frame, one
 * destroyed and another created in between (recycled GL names): each still matches its CPU
 * twin. */
static void case_interleaved(void)
{
    static const int sizes[3][2] = {{33, 17}, {64, 48}, {50, 30}};
    uint64_t rng = 1111;
    glcv_image bg[3], fg[3];
    pair pr[3];
    int open[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
        bg[i] = test_image_make(sizes[i][0], sizes[i][1], GLCV_PIXEL_RGB8, 0);
        fg[i] = test_image_make(sizes[i][0], sizes[i][1], GLCV_PIXEL_RGB8, 0);
        fill_background(&bg[i], &rng);
    }
    for (int i = 0; i < 2; i++) {
        seg_cfg c = cfg_default();
        c.seed = 100 + (uint64_t)i;
        char label[64];
        snprintf(label, sizeof label, "interleaved %dx%d", sizes[i][0], sizes[i][1]);
        open[i] = pair_open(&pr[i], label, sizes[i][0], sizes[i][1], &c);
        if (open[i])
            pair_background(&pr[i], &bg[i]);
    }
    for (int f = 0; f < 6; f++) {
        if (f == 3) { /* replace the first by a third one */
            pair_close(&pr[0]);
            open[0] = 0;
            seg_cfg c = cfg_default();
            c.ts = 500.0f;
            c.iterations = 3;
            open[2] = pair_open(&pr[2], "interleaved 50x30", sizes[2][0], sizes[2][1], &c);
            if (open[2])
                pair_background(&pr[2], &bg[2]);
        }
        for (int i = 0; i < 3; i++) {
            if (!open[i])
                continue;
            fill_frame(&fg[i], &bg[i], &rng, 6, 2);
            pair_frame(&pr[i], &bg[i], &fg[i], 0.9999);
        }
    }
    for (int i = 0; i < 3; i++) {
        if (open[i])
            pair_close(&pr[i]);
        test_image_release(&bg[i]);
        test_image_release(&fg[i]);
    }
}

/* Many MRF iterations (several GPU dispatches of iterations each, where the engine groups
 * them) on an image of several 64-pixel tiles that is not a multiple of the tile size. */
static void case_many_iterations(void)
{
    const int w = 150, h = 130;
    static const int its[] = {16, 40};
    uint64_t rng = 1212;
    for (int k = 0; k < 2; k++) {
        seg_cfg c = cfg_default();
        c.iterations = its[k];
        c.ts = 600.0f;
        c.b2 = 80.0f;
        char label[64];
        snprintf(label, sizeof label, "%dx%d, %d iterations", w, h, its[k]);
        pair pr;
        if (pair_open(&pr, label, w, h, &c)) {
            glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), fg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
            fill_background(&bg, &rng);
            pair_background(&pr, &bg);
            for (int f = 0; f < 2; f++) {
                fill_frame(&fg, &bg, &rng, 9, 6);
                pair_frame(&pr, &bg, &fg, 0.9999);
            }
            test_image_release(&bg);
            test_image_release(&fg);
        }
        pair_close(&pr);
    }
}

/* The synthetic scene; frames carry the temporal prior. Frames with objects must give masks
 * that find at least 90 % of the object pixels, with at most 1.5 mask pixels per object pixel
 * (shadows and the 3x3 windows widen the objects a little). */
static void case_synth(int w, int h, int frames)
{
    glcv_synth *syn = NULL;
    glcv_synth_params sp = {0};
    sp.width = w;
    sp.height = h;
    sp.frames = frames;
    sp.seed = 7;
    CHECK_OK(glcv_synth_create(&sp, &syn));
    if (!syn)
        return;
    char label[64];
    snprintf(label, sizeof label, "synth %dx%d", w, h);
    seg_cfg c = cfg_default();
    pair pr;
    if (pair_open(&pr, label, w, h, &c)) {
        glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), fg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
        glcv_image truth = test_image_make(w, h, GLCV_PIXEL_GRAY8, 0);
        uint8_t *mask = malloc((size_t)w * h);
        CHECK_OK(glcv_synth_background(syn, &bg));
        pair_background(&pr, &bg);
        for (int f = 0; f < frames; f++) {
            CHECK_OK(glcv_synth_frame(syn, f, &fg, &truth));
            pair_frame(&pr, &bg, &fg, 0.9999);
            int objects = test_count_nonzero(truth.data, (size_t)w * h);
            for (int e = 0; e < 2 && objects > 0; e++) {
                if (!read_mask_gray(e ? pr.cpu : pr.gpu, w, h, mask))
                    continue;
                int hit = 0;
                for (size_t i = 0; i < (size_t)w * h; i++)
                    hit += mask[i] && truth.data[i];
                int on = test_count_nonzero(mask, (size_t)w * h);
                CHECK(hit * 10 >= objects * 9, "%s frame %d (%s): objects cover %d pixels, the mask finds %d (< 90 %%)",
                      label, f, e ? "cpu" : "gpu", objects, hit);
                CHECK(on * 2 <= objects * 3, "%s frame %d (%s): %d mask pixels for %d object pixels (> 150 %%)", label,
                      f, e ? "cpu" : "gpu", on, objects);
                if (e == 0)
                    printf("  %s frame %d: %d object pixels, %.1f %% found, %d mask pixels\n", label, f, objects,
                           100.0 * hit / objects, on);
            }
        }
        free(mask);
        test_image_release(&bg);
        test_image_release(&fg);
        test_image_release(&truth);
    }
    pair_close(&pr);
    glcv_synth_destroy(&syn);
}

/* Background learned from 5 frames: GPU == CPU == the rounded mean; then segmenting agrees. */
static void case_learn(void)
{
    const int w = 160, h = 120, nlearn = 5, frames = 8;
    glcv_synth *syn = NULL;
    glcv_synth_params sp = {0};
    sp.width = w;
    sp.height = h;
    sp.frames = frames;
    sp.seed = 11;
    CHECK_OK(glcv_synth_create(&sp, &syn));
    if (!syn)
        return;
    seg_cfg c = cfg_default();
    pair pr;
    if (pair_open(&pr, "learned 160x120", w, h, &c)) {
        glcv_image fr = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
        size_t n3 = (size_t)w * h * 3;
        int *sum = calloc(n3, sizeof(int));
        CHECK_OK(glcv_segment_learn_begin(pr.gpu));
        CHECK_OK(glcv_segment_learn_begin(pr.cpu));
        for (int f = 0; f < nlearn; f++) {
            CHECK_OK(glcv_synth_frame(syn, f, &fr, NULL));
            for (size_t i = 0; i < n3; i++)
                sum[i] += fr.data[i];
            CHECK_OK(glcv_segment_learn_add(pr.gpu, &fr));
            CHECK_OK(glcv_segment_learn_add(pr.cpu, &fr));
            if (f == 1) {
                CHECK_STATUS(glcv_segment_frame(pr.gpu, &fr, 1), GLCV_ERROR_STATE);
                CHECK_STATUS(glcv_segment_frame(pr.cpu, &fr, 1), GLCV_ERROR_STATE);
            }
        }
        CHECK_OK(glcv_segment_learn_end(pr.gpu));
        CHECK_OK(glcv_segment_learn_end(pr.cpu));
        glcv_image bgg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), bgc = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
        CHECK_OK(glcv_segment_read_background(pr.gpu, &bgg));
        CHECK_OK(glcv_segment_read_background(pr.cpu, &bgc));
        int bad = 0, badmean = 0;
        for (size_t i = 0; i < n3; i++) {
            int mean = (2 * sum[i] + nlearn) / (2 * nlearn); /* nearest; sum / 5 is never a tie */
            if (bgg.data[i] != bgc.data[i] && bad++ < 5)
                fprintf(stderr, "learned background (%d, %d) channel %d: gpu %d cpu %d\n", (int)(i / 3 % w),
                        (int)(i / 3 / w), (int)(i % 3), bgg.data[i], bgc.data[i]);
            if (bgc.data[i] != mean && badmean++ < 5)
                fprintf(stderr, "learned background (%d, %d) channel %d: cpu %d, mean of %d frames %d (sum %d)\n",
                        (int)(i / 3 % w), (int)(i / 3 / w), (int)(i % 3), bgc.data[i], nlearn, mean, sum[i]);
        }
        CHECK(bad == 0, "learned background: %d channel values differ between GPU and CPU", bad);
        CHECK(badmean == 0, "learned background: %d CPU values differ from the rounded mean", badmean);
        for (int f = nlearn; f < frames; f++) {
            CHECK_OK(glcv_synth_frame(syn, f, &fr, NULL));
            pair_frame(&pr, &bgc, &fr, 0.9999);
        }
        free(sum);
        test_image_release(&fr);
        test_image_release(&bgg);
        test_image_release(&bgc);
    }
    pair_close(&pr);
    glcv_synth_destroy(&syn);
}

/* Means that fall on .5 (2 frames) and .25/.5/.75 (4 frames): the engines round alike. */
static void case_learn_ties(void)
{
    const int w = 37, h = 21;
    const size_t n3 = (size_t)w * h * 3;
    uint64_t rng = 909;
    seg_cfg c = cfg_default();
    for (int nf = 2; nf <= 4; nf += 2) {
        char label[64];
        snprintf(label, sizeof label, "learned mean of %d frames", nf);
        pair pr;
        if (pair_open(&pr, label, w, h, &c)) {
            glcv_image fr = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
            CHECK_OK(glcv_segment_learn_begin(pr.gpu));
            CHECK_OK(glcv_segment_learn_begin(pr.cpu));
            for (int f = 0; f < nf; f++) {
                fill_noise(&fr, &rng);
                CHECK_OK(glcv_segment_learn_add(pr.gpu, &fr));
                CHECK_OK(glcv_segment_learn_add(pr.cpu, &fr));
            }
            CHECK_OK(glcv_segment_learn_end(pr.gpu));
            CHECK_OK(glcv_segment_learn_end(pr.cpu));
            glcv_image bgg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), bgc = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
            CHECK_OK(glcv_segment_read_background(pr.gpu, &bgg));
            CHECK_OK(glcv_segment_read_background(pr.cpu, &bgc));
            int bad = 0;
            for (size_t i = 0; i < n3; i++)
                if (bgg.data[i] != bgc.data[i] && bad++ < 5)
                    fprintf(stderr, "%s (%d, %d) channel %d: gpu %d cpu %d\n", label, (int)(i / 3 % w),
                            (int)(i / 3 / w), (int)(i % 3), bgg.data[i], bgc.data[i]);
            CHECK(bad == 0, "%s: %d of %zu values differ between GPU and CPU", label, bad, n3);
            test_image_release(&fr);
            test_image_release(&bgg);
            test_image_release(&bgc);
        }
        pair_close(&pr);
    }
}

/* Background adaptation (rate 0.05) over 8 frames: backgrounds within +-1 and masks agree on
 * 99.9 %; the window sums are not compared, as the backgrounds may differ by rounding. */
static void case_adapt(void)
{
    const int w = 160, h = 120, frames = 8;
    glcv_synth *syn = NULL;
    glcv_synth_params sp = {0};
    sp.width = w;
    sp.height = h;
    sp.frames = frames;
    sp.seed = 5;
    sp.illumination_gain = 0.8f;
    CHECK_OK(glcv_synth_create(&sp, &syn));
    if (!syn)
        return;
    seg_cfg c = cfg_default();
    c.adapt_rate = 0.05f;
    pair pr;
    if (pair_open(&pr, "adapt 160x120", w, h, &c)) {
        size_t n3 = (size_t)w * h * 3;
        glcv_image bg0 = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), fr = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
        glcv_image bgg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), bgc = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
        CHECK_OK(glcv_synth_background(syn, &bg0));
        pair_background(&pr, &bg0);
        for (int f = 0; f < frames; f++) {
            CHECK_OK(glcv_synth_frame(syn, f, &fr, NULL));
            CHECK_OK(glcv_segment_frame(pr.gpu, &fr, 1));
            CHECK_OK(glcv_segment_frame(pr.cpu, &fr, 1));
            pair_compare(&pr, f, NULL, NULL, 0.999, 0);
            CHECK_OK(glcv_segment_read_background(pr.gpu, &bgg));
            CHECK_OK(glcv_segment_read_background(pr.cpu, &bgc));
            int off = 0, worst = 0;
            for (size_t i = 0; i < n3; i++) {
                int d = abs(bgg.data[i] - bgc.data[i]);
                if (d > 1) {
                    if (off < 5)
                        fprintf(stderr, "adapt frame %d background (%d, %d) channel %d: gpu %d cpu %d\n", f,
                                (int)(i / 3 % w), (int)(i / 3 / w), (int)(i % 3), bgg.data[i], bgc.data[i]);
                    off++;
                }
                if (d > worst)
                    worst = d;
            }
            CHECK(off <= (int)(n3 / 1000),
                  "adapt frame %d: %d of %zu background values differ by more than 1 (worst %d)", f, off, n3, worst);
        }
        int moved_g = 0, moved_c = 0;
        for (size_t i = 0; i < n3; i++) {
            moved_g += bgg.data[i] != bg0.data[i];
            moved_c += bgc.data[i] != bg0.data[i];
        }
        printf("  adapt: after %d frames %d (gpu) / %d (cpu) of %zu background values moved\n", frames, moved_g,
               moved_c, n3);
        CHECK(moved_c > (int)(n3 / 10) && moved_g > (int)(n3 / 10),
              "adaptation barely moved the background (gpu %d, cpu %d of %zu values)", moved_g, moved_c, n3);
        test_image_release(&bg0);
        test_image_release(&fr);
        test_image_release(&bgg);
        test_image_release(&bgc);
    }
    pair_close(&pr);
    glcv_synth_destroy(&syn);
}

/* ---- textures --------------------------------------------------------------------------- */

/* Uploads a packed RGB8 image into a new GL_TEXTURE_2D of the given internal format. With
 * default_params the texture keeps GL's default (mipmapped) filter, so only level 0 exists. */
static GLuint upload_texture(const glcv_image *rgb, GLenum internal, int default_params)
{
    const int w = rgb->width, h = rgb->height;
    size_t n = (size_t)w * h;
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    if (internal == GL_RGBA8) {
        uint8_t *px = malloc(n * 4);
        for (size_t i = 0; i < n; i++) {
            memcpy(px + i * 4, rgb->data + i * 3, 3);
            px[i * 4 + 3] = 255;
        }
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, px);
        free(px);
    } else if (internal == GL_RGBA32F) {
        float *px = malloc(n * 4 * sizeof(float));
        for (size_t i = 0; i < n; i++) {
            for (int c = 0; c < 3; c++)
                px[i * 4 + c] = (float)rgb->data[i * 3 + c] / 255.0f;
            px[i * 4 + 3] = 1.0f;
        }
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA32F, w, h, 0, GL_RGBA, GL_FLOAT, px);
        free(px);
    } else {
        glTexImage2D(GL_TEXTURE_2D, 0, (GLint)internal, w, h, 0, GL_RGB, GL_UNSIGNED_BYTE, rgb->data);
    }
    if (!default_params) {
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    }
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glBindTexture(GL_TEXTURE_2D, 0);
    GLenum err = glGetError();
    CHECK(err == GL_NO_ERROR, "uploading a %dx%d test texture (format 0x%x): GL error 0x%x", w, h, internal, err);
    return tex;
}

/* Reads level 0 of a texture as RGBA8 (pack alignment 1). */
static void texture_rgba(GLuint tex, uint8_t *out)
{
    glBindTexture(GL_TEXTURE_2D, tex);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glGetTexImage(GL_TEXTURE_2D, 0, GL_RGBA, GL_UNSIGNED_BYTE, out);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glBindTexture(GL_TEXTURE_2D, 0);
}

static int masks_equal(glcv_segment *a, glcv_segment *b, int w, int h, const char *what, int frame)
{
    size_t n = (size_t)w * h;
    uint8_t *ma = malloc(n), *mb = malloc(n);
    int bad = 0;
    if (read_mask_gray(a, w, h, ma) && read_mask_gray(b, w, h, mb)) {
        for (size_t i = 0; i < n; i++)
            if (ma[i] != mb[i] && bad++ < 5)
                fprintf(stderr, "%s frame %d (%d, %d): %d vs %d\n", what, frame, (int)(i % w), (int)(i / w), ma[i],
                        mb[i]);
        CHECK(bad == 0, "%s frame %d: masks differ at %d pixels", what, frame, bad);
    } else {
        bad = -1;
    }
    free(ma);
    free(mb);
    return bad == 0;
}

static int sums_equal(glcv_segment *a, glcv_segment *b, int w, int h, const char *what, int frame)
{
    size_t n = (size_t)w * h;
    int32_t *qa = malloc(n * 12), *qb = malloc(n * 12);
    int bad = 0;
    CHECK_OK(glcv_segment_read_qualifiers(a, qa, qa + n, qa + 2 * n));
    CHECK_OK(glcv_segment_read_qualifiers(b, qb, qb + n, qb + 2 * n));
    for (size_t i = 0; i < 3 * n; i++)
        if (qa[i] != qb[i] && bad++ < 5)
            fprintf(stderr, "%s frame %d (%d, %d): %s %d vs %d\n", what, frame, (int)(i % n % w), (int)(i % n / w),
                    i < n ? "fore" : i < 2 * n ? "back" : "cross", qa[i], qb[i]);
    CHECK(bad == 0, "%s frame %d: %d window sums differ", what, frame, bad);
    free(qa);
    free(qb);
    return bad == 0;
}

/* Caller's textures as input (RGBA8 with default filters, RGB8, RGBA32F) must give what the
 * same pixels give from host memory, on the GPU engine and on the CPU engine. */
static void case_texture_inputs(void)
{
    const int w = 61, h = 47, frames = 3;
    uint64_t rng = 404;
    glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
    glcv_image fg[3];
    fill_background(&bg, &rng);
    for (int f = 0; f < frames; f++) {
        fg[f] = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
        fill_frame(&fg[f], &bg, &rng, 6, 3);
    }
    static const GLenum formats[] = {GL_RGBA8, GL_RGB8, GL_RGBA32F};
    static const char *names[] = {"RGBA8 (default filters)", "RGB8", "RGBA32F"};
    glcv_engine_mode modes[2] = {g_mode, GLCV_ENGINE_CPU};
    seg_cfg c = cfg_default();
    for (int fi = 0; fi < 3; fi++) {
        GLuint tbg = upload_texture(&bg, formats[fi], fi == 0);
        GLuint tfg[3];
        for (int f = 0; f < frames; f++)
            tfg[f] = upload_texture(&fg[f], formats[fi], fi == 0);
        uint8_t *before = malloc((size_t)w * h * 4), *after = malloc((size_t)w * h * 4);
        texture_rgba(tfg[0], before);
        for (int e = 0; e < 2; e++) {
            char what[96];
            snprintf(what, sizeof what, "%s texture input, %s engine", names[fi], glcv_engine_mode_string(modes[e]));
            glcv_segment *host = make_seg(w, h, modes[e], &c), *tex = make_seg(w, h, modes[e], &c);
            if (host && tex) {
                CHECK_OK(glcv_segment_set_background(host, &bg));
                CHECK_OK(glcv_segment_set_background_texture(tex, tbg));
                for (int f = 0; f < frames; f++) {
                    CHECK_OK(glcv_segment_frame(host, &fg[f], 1));
                    CHECK_OK(glcv_segment_frame_texture(tex, tfg[f], 1));
                    sums_equal(host, tex, w, h, what, f);
                    masks_equal(host, tex, w, h, what, f);
                }
                /* The background read back from a texture input equals the host one. */
                glcv_image b1 = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), b2 = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
                CHECK_OK(glcv_segment_read_background(tex, &b2));
                CHECK(memcmp(b2.data, bg.data, (size_t)w * h * 3) == 0, "%s: background read back differs", what);
                /* Learning from textures equals learning from host frames. */
                CHECK_OK(glcv_segment_learn_begin(host));
                CHECK_OK(glcv_segment_learn_begin(tex));
                for (int f = 0; f < frames; f++) {
                    CHECK_OK(glcv_segment_learn_add(host, &fg[f]));
                    CHECK_OK(glcv_segment_learn_add_texture(tex, tfg[f]));
                }
                CHECK_OK(glcv_segment_learn_end(host));
                CHECK_OK(glcv_segment_learn_end(tex));
                CHECK_OK(glcv_segment_read_background(host, &b1));
                CHECK_OK(glcv_segment_read_background(tex, &b2));
                int bad = 0;
                for (size_t i = 0; i < (size_t)w * h * 3; i++)
                    if (b1.data[i] != b2.data[i] && bad++ < 5)
                        fprintf(stderr, "%s learned background (%d, %d) channel %d: host %d texture %d\n", what,
                                (int)(i / 3 % w), (int)(i / 3 / w), (int)(i % 3), b1.data[i], b2.data[i]);
                CHECK(bad == 0, "%s: learned backgrounds differ at %d values", what, bad);
                CHECK_OK(glcv_segment_frame(host, &fg[0], 1));
                CHECK_OK(glcv_segment_frame_texture(tex, tfg[0], 1));
                masks_equal(host, tex, w, h, what, 99);
                test_image_release(&b1);
                test_image_release(&b2);
            }
            glcv_segment_destroy(&host);
            glcv_segment_destroy(&tex);
        }
        /* The caller's texture is read, never modified (content and filter state). */
        texture_rgba(tfg[0], after);
        CHECK(memcmp(before, after, (size_t)w * h * 4) == 0, "%s: the input texture's content changed", names[fi]);
        GLint minf = 0;
        glBindTexture(GL_TEXTURE_2D, tfg[0]);
        glGetTexParameteriv(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, &minf);
        glBindTexture(GL_TEXTURE_2D, 0);
        CHECK(minf == (fi == 0 ? GL_NEAREST_MIPMAP_LINEAR : GL_NEAREST),
              "%s: the input texture's min filter changed to 0x%x", names[fi], minf);
        free(before);
        free(after);
        glDeleteTextures(1, &tbg);
        glDeleteTextures(frames, tfg);
    }

    /* Texture errors. */
    glcv_segment *seg = make_seg(w, h, g_mode, &c);
    if (seg) {
        GLuint small = 0, t3d = 0, good = 0;
        glcv_image sm = test_image_make(w - 1, h, GLCV_PIXEL_RGB8, 0);
        small = upload_texture(&sm, GL_RGBA8, 0);
        good = upload_texture(&bg, GL_RGBA8, 0);
        glGenTextures(1, &t3d);
        glBindTexture(GL_TEXTURE_3D, t3d);
        glTexImage3D(GL_TEXTURE_3D, 0, GL_RGBA8, w, h, 2, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
        glBindTexture(GL_TEXTURE_3D, 0);
        CHECK_STATUS(glcv_segment_set_background_texture(seg, 0), GLCV_ERROR_INVALID_ARGUMENT);
        CHECK_STATUS(glcv_segment_set_background_texture(seg, small), GLCV_ERROR_SIZE_MISMATCH);
        CHECK_STATUS(glcv_segment_set_background_texture(seg, 0x7ffff123u), GLCV_ERROR_INVALID_ARGUMENT);
        CHECK_STATUS(glcv_segment_set_background_texture(seg, t3d), GLCV_ERROR_INVALID_ARGUMENT);
        /* Not a colour format with values in 0..1: an integer and a depth texture. */
        GLuint tint = test_texture_make(GL_RGBA8UI, GL_RGBA_INTEGER, w, h, NULL), tdepth = 0;
        glGenTextures(1, &tdepth);
        glBindTexture(GL_TEXTURE_2D, tdepth);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_DEPTH_COMPONENT24, w, h, 0, GL_DEPTH_COMPONENT, GL_UNSIGNED_INT, NULL);
        glBindTexture(GL_TEXTURE_2D, 0);
        CHECK_STATUS(glcv_segment_set_background_texture(seg, tint), GLCV_ERROR_UNSUPPORTED);
        CHECK_STATUS(glcv_segment_set_background_texture(seg, tdepth), GLCV_ERROR_UNSUPPORTED);
        glDeleteTextures(1, &tint);
        glDeleteTextures(1, &tdepth);
        CHECK_STATUS(glcv_segment_frame_texture(seg, good, 1), GLCV_ERROR_STATE); /* no background yet */
        CHECK_OK(glcv_segment_set_background(seg, &bg));
        CHECK_STATUS(glcv_segment_frame_texture(seg, 0, 1), GLCV_ERROR_INVALID_ARGUMENT);
        CHECK_STATUS(glcv_segment_frame_texture(seg, small, 1), GLCV_ERROR_SIZE_MISMATCH);
        CHECK_STATUS(glcv_segment_frame_texture(seg, 0x7ffff123u, 1), GLCV_ERROR_INVALID_ARGUMENT);
        CHECK_STATUS(glcv_segment_learn_add_texture(seg, good), GLCV_ERROR_STATE); /* not learning */
        CHECK_OK(glcv_segment_learn_begin(seg));
        CHECK_STATUS(glcv_segment_learn_add_texture(seg, small), GLCV_ERROR_SIZE_MISMATCH);
        CHECK_STATUS(glcv_segment_learn_end(seg), GLCV_ERROR_STATE);
        while (glGetError() != GL_NO_ERROR) {
        }
        glDeleteTextures(1, &small);
        glDeleteTextures(1, &good);
        glDeleteTextures(1, &t3d);
        test_image_release(&sm);
    }
    glcv_segment_destroy(&seg);

    test_image_release(&bg);
    for (int f = 0; f < frames; f++)
        test_image_release(&fg[f]);
}

/* The mask texture (GPU and CPU engines) and read_mask in every layout, padded rows, no wait. */
static void case_outputs(void)
{
    const int w = 53, h = 29;
    uint64_t rng = 505;
    glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), fg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
    fill_background(&bg, &rng);
    fill_frame(&fg, &bg, &rng, 3, 4);
    seg_cfg c = cfg_default();
    glcv_engine_mode modes[2] = {g_mode, GLCV_ENGINE_CPU};
    size_t n = (size_t)w * h;
    uint8_t *ref = malloc(n), *tex = malloc(n);
    for (int e = 0; e < 2; e++) {
        const char *en = glcv_engine_mode_string(modes[e]);
        glcv_segment *seg = make_seg(w, h, modes[e], &c);
        if (!seg)
            continue;
        CHECK_OK(glcv_segment_set_background(seg, &bg));
        CHECK_OK(glcv_segment_frame(seg, &fg, 0)); /* no wait: read_mask must still see this frame */
        if (!read_mask_gray(seg, w, h, ref)) {
            glcv_segment_destroy(&seg);
            continue;
        }
        int on = test_count_nonzero(ref, n);
        CHECK(on > 0 && on < (int)n, "%s: the output test needs a mixed mask (%d of %zu on)", en, on, n);
        int odd = 0;
        for (size_t i = 0; i < n; i++)
            if (ref[i] != 0 && ref[i] != 255 && odd++ < 5)
                fprintf(stderr, "%s: mask value %d at (%d, %d)\n", en, ref[i], (int)(i % w), (int)(i / w));
        CHECK(odd == 0, "%s: %d mask values are neither 0 nor 255", en, odd);

        /* Mask texture: GL_R8, the right size, the same content as read_mask. */
        GLuint mt = glcv_segment_mask_texture(seg);
        CHECK(mt != 0, "%s: mask_texture returned 0", en);
        if (mt) {
            GLint tw = 0, th = 0, fmt = 0;
            glBindTexture(GL_TEXTURE_2D, mt);
            glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_WIDTH, &tw);
            glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_HEIGHT, &th);
            glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_INTERNAL_FORMAT, &fmt);
            CHECK(tw == w && th == h, "%s: mask texture %dx%d, expected %dx%d", en, tw, th, w, h);
            CHECK(fmt == GL_R8, "%s: mask texture format 0x%x, expected GL_R8 (0x%x)", en, fmt, GL_R8);
            glPixelStorei(GL_PACK_ALIGNMENT, 1);
            memset(tex, 0x55, n);
            glGetTexImage(GL_TEXTURE_2D, 0, GL_RED, GL_UNSIGNED_BYTE, tex);
            glPixelStorei(GL_PACK_ALIGNMENT, 4);
            glBindTexture(GL_TEXTURE_2D, 0);
            int bad = 0;
            for (size_t i = 0; i < n; i++)
                if (tex[i] != ref[i] && bad++ < 5)
                    fprintf(stderr, "%s mask texture (%d, %d): %d, read_mask %d\n", en, (int)(i % w), (int)(i / w),
                            tex[i], ref[i]);
            CHECK(bad == 0, "%s: mask texture differs from read_mask at %d pixels", en, bad);
            CHECK(glcv_segment_mask_texture(seg) == mt, "%s: mask_texture changed between calls", en);

            /* After the next frame (no wait) the texture holds the new mask. */
            CHECK_OK(glcv_segment_frame(seg, &bg, 0));
            GLuint mt2 = glcv_segment_mask_texture(seg);
            glBindTexture(GL_TEXTURE_2D, mt2);
            glPixelStorei(GL_PACK_ALIGNMENT, 1);
            glGetTexImage(GL_TEXTURE_2D, 0, GL_RED, GL_UNSIGNED_BYTE, tex);
            glPixelStorei(GL_PACK_ALIGNMENT, 4);
            glBindTexture(GL_TEXTURE_2D, 0);
            read_mask_gray(seg, w, h, ref);
            CHECK(memcmp(tex, ref, n) == 0, "%s: mask texture after the second frame differs from read_mask", en);
            CHECK_OK(glcv_segment_frame(seg, &fg, 1));
            read_mask_gray(seg, w, h, ref);
        }

        /* read_mask layouts with padded rows: gray replicated, alpha 255, padding untouched. */
        glcv_pixel_format fmts[3] = {GLCV_PIXEL_GRAY8, GLCV_PIXEL_RGB8, GLCV_PIXEL_RGBA8};
        for (int k = 0; k < 3; k++) {
            int bpp = glcv_pixel_format_size(fmts[k]);
            size_t stride = (size_t)w * bpp + 3 + (size_t)k;
            glcv_image im = test_image_make(w, h, fmts[k], stride);
            memset(im.data, 0xAB, stride * h);
            CHECK_OK(glcv_segment_read_mask(seg, &im));
            int bad = 0;
            for (int y = 0; y < h; y++) {
                const uint8_t *row = im.data + (size_t)y * stride;
                for (int x = 0; x < w; x++) {
                    uint8_t g = ref[(size_t)y * w + x];
                    const uint8_t *p = row + (size_t)x * bpp;
                    int okp = p[0] == g && (bpp < 3 || (p[1] == g && p[2] == g)) && (bpp < 4 || p[3] == 255);
                    if (!okp && bad++ < 5)
                        fprintf(stderr, "%s read_mask %d bpp (%d, %d): %d %d %d %d, expected gray %d\n", en, bpp, x, y,
                                p[0], bpp > 1 ? p[1] : -1, bpp > 2 ? p[2] : -1, bpp > 3 ? p[3] : -1, g);
                }
                for (size_t b = (size_t)w * bpp; b < stride; b++)
                    if (row[b] != 0xAB && bad++ < 5)
                        fprintf(stderr, "%s read_mask %d bpp: padding byte %zu of row %d is 0x%02x\n", en, bpp, b, y,
                                row[b]);
            }
            CHECK(bad == 0, "%s: read_mask with %d bytes per pixel and stride %zu: %d problems", en, bpp, stride, bad);
            test_image_release(&im);
        }
        glcv_segment_destroy(&seg);
    }
    free(ref);
    free(tex);
    test_image_release(&bg);
    test_image_release(&fg);
}

/* BGR8 / BGRA8 inputs (padded rows) equal RGB8 inputs with the channels swapped. */
static void case_bgr(void)
{
    const int w = 47, h = 31;
    uint64_t rng = 606;
    glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), fg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
    fill_background(&bg, &rng);
    fill_frame(&fg, &bg, &rng, 8, 3);
    glcv_image bgr = test_image_make(w, h, GLCV_PIXEL_BGR8, (size_t)w * 3 + 1);
    glcv_image bgra = test_image_make(w, h, GLCV_PIXEL_BGRA8, (size_t)w * 4 + 8);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const uint8_t *b = bg.data + ((size_t)y * w + x) * 3, *f = fg.data + ((size_t)y * w + x) * 3;
            uint8_t *o = bgr.data + (size_t)y * bgr.stride + (size_t)x * 3;
            uint8_t *oa = bgra.data + (size_t)y * bgra.stride + (size_t)x * 4;
            o[0] = b[2], o[1] = b[1], o[2] = b[0];
            oa[0] = f[2], oa[1] = f[1], oa[2] = f[0], oa[3] = 17; /* alpha is ignored */
        }
    seg_cfg c = cfg_default();
    glcv_segment *a = make_seg(w, h, g_mode, &c), *b = make_seg(w, h, g_mode, &c);
    if (a && b) {
        CHECK_OK(glcv_segment_set_background(a, &bg));
        CHECK_OK(glcv_segment_set_background(b, &bgr));
        CHECK_OK(glcv_segment_frame(a, &fg, 1));
        CHECK_OK(glcv_segment_frame(b, &bgra, 1));
        sums_equal(a, b, w, h, "BGR background + BGRA frame vs RGB", 0);
        masks_equal(a, b, w, h, "BGR background + BGRA frame vs RGB", 0);
        glcv_image back = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
        CHECK_OK(glcv_segment_read_background(b, &back));
        CHECK(memcmp(back.data, bg.data, (size_t)w * h * 3) == 0, "background from BGR8 reads back swapped wrongly");
        test_image_release(&back);
    }
    glcv_segment_destroy(&a);
    glcv_segment_destroy(&b);
    test_image_release(&bg);
    test_image_release(&fg);
    test_image_release(&bgr);
    test_image_release(&bgra);
}

/* Per-pass GPU times after a few frames. */
static void case_timings(void)
{
    const int w = 64, h = 48;
    uint64_t rng = 707;
    seg_cfg c = cfg_default();
    c.timing = 1;
    glcv_segment *seg = make_seg(w, h, g_mode, &c);
    if (!seg)
        return;
    glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), fg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
    fill_background(&bg, &rng);
    CHECK_OK(glcv_segment_set_background(seg, &bg));
    for (int f = 0; f < 4; f++) {
        fill_frame(&fg, &bg, &rng, 5, 2);
        CHECK_OK(glcv_segment_frame(seg, &fg, f == 3));
    }
    GLint bits = 0;
    glGetQueryiv(GL_TIME_ELAPSED, GL_QUERY_COUNTER_BITS, &bits);
    glcv_timing tm[16];
    memset(tm, 0, sizeof tm);
    int count = -1;
    CHECK_OK(glcv_segment_timings(seg, tm, 16, &count, 1));
    /* The passes of a frame: the thresholds, the MRF (1 + iterations, four subsets each: one pass
     * per subset, or in the tiled compute kernel up to tile_iterations per dispatch, the merge
     * included) and the merge. */
    const int tiled = glcv_segment_tiled(seg), substeps = 4 * (1 + c.iterations);
    const int mrf = tiled ? (1 + c.iterations + seg->tile_iterations - 1) / seg->tile_iterations : substeps;
    const char *const names[3] = {"threshold", "mrf", "merge"};
    const int passes[3] = {1, mrf, 1}, expected = tiled ? 2 : 3;
    if (bits == 0) {
        printf("note: GL_TIME_ELAPSED has 0 counter bits here; timings returned %d entries\n", count);
    } else {
        CHECK(count > 0 && count <= 16, "timings after 4 frames: count %d, expected 1..16", count);
        CHECK(count == expected, "timings after 4 frames: %d entries, expected %d (%s)", count, expected,
              tiled ? "threshold, tiled mrf" : "threshold, mrf, merge");
        for (int i = 0; i < count && i < expected; i++)
            CHECK(tm[i].name && strcmp(tm[i].name, names[i]) == 0 && tm[i].count == passes[i],
                  "timing %d: '%s' of %d passes, expected '%s' of %d", i, tm[i].name ? tm[i].name : "?", tm[i].count,
                  names[i], passes[i]);
    }
    for (int i = 0; i < count && i < 16; i++) {
        CHECK(tm[i].name && tm[i].name[0], "timing %d has no name", i);
        CHECK(tm[i].ms >= 0.0 && isfinite(tm[i].ms), "timing %d (%s): %g ms", i, tm[i].name ? tm[i].name : "?",
              tm[i].ms);
        CHECK(tm[i].count >= 1, "timing %d (%s): %d passes", i, tm[i].name ? tm[i].name : "?", tm[i].count);
        printf("  timing %-10s %8.3f ms, %d passes\n", tm[i].name ? tm[i].name : "?", tm[i].ms, tm[i].count);
    }
    /* A capacity below the count: nothing beyond it is written. */
    glcv_timing small[4];
    for (int i = 0; i < 4; i++) {
        small[i].name = "sentinel";
        small[i].ms = -7.0;
        small[i].count = -7;
    }
    int c2 = -1;
    CHECK_OK(glcv_segment_timings(seg, small, 1, &c2, 1));
    CHECK(c2 == (count < 1 ? count : 1), "timings with capacity 1: count %d, expected %d", c2, count < 1 ? count : 1);
    if (c2 == 1 && count >= 1)
        CHECK(small[0].name && tm[0].name && strcmp(small[0].name, tm[0].name) == 0 && small[0].count == tm[0].count,
              "timings with capacity 1: entry 0 is '%s' of %d passes, expected '%s' of %d",
              small[0].name ? small[0].name : "?", small[0].count, tm[0].name ? tm[0].name : "?", tm[0].count);
    for (int i = 1; i < 4; i++)
        CHECK(small[i].ms == -7.0 && small[i].count == -7 && strcmp(small[i].name, "sentinel") == 0,
              "timings with capacity 1 wrote entry %d", i);
    CHECK_STATUS(glcv_segment_timings(seg, tm, 16, NULL, 1), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_segment_destroy(&seg);
    test_image_release(&bg);
    test_image_release(&fg);
}

/* AUTO with a context picks a GPU engine; sizes above GL_MAX_TEXTURE_SIZE are unsupported;
 * GPU objects keep the call-order rules. */
static void case_engine_misc(void)
{
    const int w = 40, h = 30;
    uint64_t rng = 808;
    seg_cfg c = cfg_default();
    glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), fg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
    fill_background(&bg, &rng);
    fill_frame(&fg, &bg, &rng, 4, 2);

    glcv_segment *a = make_seg(w, h, GLCV_ENGINE_AUTO, &c), *cpu = make_seg(w, h, GLCV_ENGINE_CPU, &c);
    if (a && cpu) {
        glcv_segment_params g;
        CHECK_OK(glcv_segment_get_params(a, &g));
        CHECK(g.engine == GLCV_ENGINE_FRAGMENT || g.engine == GLCV_ENGINE_COMPUTE,
              "AUTO in a GL context resolved to %s", glcv_engine_mode_string(g.engine));
        printf("  AUTO chose %s\n", glcv_engine_mode_string(g.engine));
        CHECK_OK(glcv_segment_set_background(a, &bg));
        CHECK_OK(glcv_segment_set_background(cpu, &bg));
        CHECK_OK(glcv_segment_frame(a, &fg, 1));
        CHECK_OK(glcv_segment_frame(cpu, &fg, 1));
        masks_equal(a, cpu, w, h, "AUTO vs CPU", 0);
    }
    glcv_segment_destroy(&a);
    glcv_segment_destroy(&cpu);

    GLint maxsz = 0;
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &maxsz);
    if (maxsz > 0 && maxsz < (1 << 30)) {
        glcv_segment_params p = {0};
        p.width = maxsz + 1;
        p.height = 1;
        p.engine = g_mode;
        glcv_segment *big = (glcv_segment *)(void *)&maxsz;
        CHECK_STATUS(glcv_segment_create(&p, &big), GLCV_ERROR_UNSUPPORTED);
        CHECK(big == NULL, "failed create left *out non-NULL");
        p.width = 1;
        p.height = maxsz + 1;
        big = (glcv_segment *)(void *)&maxsz;
        CHECK_STATUS(glcv_segment_create(&p, &big), GLCV_ERROR_UNSUPPORTED);
        CHECK(big == NULL, "failed create left *out non-NULL");
    }

    glcv_segment *s = make_seg(w, h, g_mode, &c);
    if (s) {
        glcv_image m = test_image_make(w, h, GLCV_PIXEL_GRAY8, 0);
        CHECK_STATUS(glcv_segment_frame(s, &fg, 1), GLCV_ERROR_STATE);
        CHECK_STATUS(glcv_segment_read_mask(s, &m), GLCV_ERROR_STATE);
        CHECK_OK(glcv_segment_set_background(s, &bg));
        CHECK_OK(glcv_segment_learn_begin(s));
        CHECK_OK(glcv_segment_learn_add(s, &fg));
        CHECK_STATUS(glcv_segment_frame(s, &fg, 1), GLCV_ERROR_STATE);
        CHECK_OK(glcv_segment_learn_end(s));
        CHECK_OK(glcv_segment_frame(s, &fg, 1));
        CHECK_OK(glcv_segment_read_mask(s, &m));
        test_image_release(&m);
    }
    glcv_segment_destroy(&s);
    test_image_release(&bg);
    test_image_release(&fg);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "fragment";
    g_multipass = argc > 2 && strcmp(argv[2], "multipass") == 0;
    if (strcmp(mode, "fragment") == 0 && argc <= 2) {
        g_mode = GLCV_ENGINE_FRAGMENT;
    } else if (strcmp(mode, "compute") == 0 && (argc <= 2 || g_multipass)) {
        g_mode = GLCV_ENGINE_COMPUTE;
    } else {
        fprintf(stderr, "usage: %s [fragment | compute [multipass]]\n", argv[0]);
        return 2;
    }
    glcv_context *ctx = test_context_or_skip(g_mode == GLCV_ENGINE_COMPUTE ? 43 : 33);
    g_log = test_logger();
    printf("engine: %s%s\n", mode, g_multipass ? ", one dispatch per MRF substep" : "");

    case_random_noise();
    case_params();
    case_sizes();
    case_extreme_params();
    case_interleaved();
    case_many_iterations();
    case_synth(160, 120, 6);
    case_synth(641, 479, 2);
    case_learn();
    case_learn_ties();
    case_adapt();
    case_texture_inputs();
    case_outputs();
    case_bgr();
    case_timings();
    case_engine_misc();

    GLenum err = glGetError();
    CHECK(err == GL_NO_ERROR, "GL error 0x%x pending at the end", err);
    glcv_context_destroy(&ctx);
    char name[64];
    snprintf(name, sizeof name, "test_segment_gpu (%s%s)", mode, g_multipass ? " multipass" : "");
    return test_finish(name);
}
