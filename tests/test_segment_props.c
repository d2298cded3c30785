/* Segmenter: the paper's properties through the public API, for one engine (argv[1]: cpu,
 * fragment or compute; default fragment). Identity gives no change; a global illumination
 * change gives almost none with a small darkness offset; darkness compensation finds a dark
 * object that pure colinearity misses; the MRF removes isolated weak detections; any image
 * size works; the temporal prior carries a mask to the next frame until reset or a new
 * background. Every mask is also checked against the MRF's own fixed-point rule. */
#include "testutil.h"

#include <math.h>
#include <string.h>

static glcv_engine_mode g_mode = GLCV_ENGINE_FRAGMENT;
static glcv_logger g_log;

static int rand_range(uint64_t *rng, int lo, int hi)
{
    return lo + (int)(test_rand(rng) % (uint64_t)(hi - lo + 1));
}

/* Independent random channels in lo..hi: a textured background. */
static void fill_texture(glcv_image *im, uint64_t *rng, int lo, int hi)
{
    for (size_t i = 0; i < (size_t)im->width * im->height * 3; i++)
        im->data[i] = (uint8_t)rand_range(rng, lo, hi);
}

static void fill_rect(glcv_image *im, int x0, int y0, int rw, int rh, const int rgb[3])
{
    for (int y = y0; y < y0 + rh && y < im->height; y++)
        for (int x = x0; x < x0 + rw && x < im->width; x++)
            for (int c = 0; c < 3; c++)
                im->data[((size_t)y * im->width + x) * 3 + c] = (uint8_t)rgb[c];
}

static glcv_segment *make_seg(int w, int h)
{
    glcv_segment_params p = {0};
    p.width = w;
    p.height = h;
    p.engine = g_mode;
    p.logger = g_log;
    p.preset = GLCV_SEGMENT_PAPER; /* the paper's properties, with its values */
    glcv_segment *seg = NULL;
    glcv_status st = glcv_segment_create(&p, &seg);
    CHECK(st == GLCV_OK, "create %dx%d (%s): %s", w, h, glcv_engine_mode_string(g_mode), glcv_status_string(st));
    if (seg) /* the properties hold for the engine under test, not a fallback */
        test_segment_on_path(seg, g_mode, 0);
    return seg;
}

/* Foreground pixels none of whose 8 neighbours is foreground. */
static int count_isolated(const uint8_t *m, int w, int h)
{
    int k = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            if (!m[(size_t)y * w + x])
                continue;
            int nb = 0;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int xx = x + dx, yy = y + dy;
                    if ((dx || dy) && xx >= 0 && yy >= 0 && xx < w && yy < h)
                        nb += m[(size_t)yy * w + xx] != 0;
                }
            k += nb == 0;
        }
    return k;
}

/* The subset updated last in the last iteration saw its neighbours in their final state, so
 * for at least one of the four subsets every pixel obeys mask == (M >= m_min), with M from
 * the final mask (neighbours outside the image unchanged) and m_min of the last iteration's
 * parameter set (B2 when iterations >= 1, else B1). */
static void check_fixed_point(glcv_segment *seg, const uint8_t *mask, int w, int h, const char *label)
{
    size_t n = (size_t)w * h;
    uint8_t *t1 = malloc(n), *t2 = malloc(n);
    glcv_segment_params p;
    if (glcv_segment_get_params(seg, &p) != GLCV_OK || glcv_segment_read_thresholds(seg, t1, t2) != GLCV_OK) {
        CHECK(0, "%s: could not read the parameters or thresholds", label);
        free(t1);
        free(t2);
        return;
    }
    const uint8_t *t = p.iterations > 0 ? t2 : t1;
    int consistent = 0;
    int first_bad[4][3];
    for (int s = 0; s < 4; s++) {
        int bad = 0;
        first_bad[s][0] = -1;
        for (int y = s >> 1; y < h; y += 2)
            for (int x = s & 1; x < w; x += 2) {
                int m = 0;
                for (int dy = -1; dy <= 1; dy++)
                    for (int dx = -1; dx <= 1; dx++) {
                        int xx = x + dx, yy = y + dy;
                        if ((dx || dy) && xx >= 0 && yy >= 0 && xx < w && yy < h && mask[(size_t)yy * w + xx])
                            m += (dx == 0 || dy == 0) ? 2 : 1;
                    }
                int want = m >= t[(size_t)y * w + x];
                if (want != (mask[(size_t)y * w + x] != 0) && !bad++) {
                    first_bad[s][0] = x;
                    first_bad[s][1] = y;
                    first_bad[s][2] = m;
                }
            }
        if (!bad)
            consistent = 1;
    }
    if (!consistent)
        for (int s = 0; s < 4; s++)
            fprintf(stderr, "%s: subset %d first breaks the rule at (%d, %d): M %d, m_min %d, mask %d\n", label, s,
                    first_bad[s][0], first_bad[s][1], first_bad[s][2],
                    t[(size_t)first_bad[s][1] * w + first_bad[s][0]],
                    mask[(size_t)first_bad[s][1] * w + first_bad[s][0]]);
    CHECK(consistent, "%s: no subset is a fixed point of mask == (M >= m_min); the MRF update is inconsistent", label);
    free(t1);
    free(t2);
}

/* Segments one frame and reads the mask (GRAY8 0/255). Returns 0 on failure. */
static int run(glcv_segment *seg, const glcv_image *fg, uint8_t *mask, const char *label)
{
    glcv_status st = glcv_segment_frame(seg, fg, 1);
    CHECK(st == GLCV_OK, "%s: frame: %s", label, glcv_status_string(st));
    if (st != GLCV_OK)
        return 0;
    glcv_image m = {mask, fg->width, fg->height, 0, GLCV_PIXEL_GRAY8};
    st = glcv_segment_read_mask(seg, &m);
    CHECK(st == GLCV_OK, "%s: read_mask: %s", label, glcv_status_string(st));
    if (st != GLCV_OK)
        return 0;
    check_fixed_point(seg, mask, fg->width, fg->height, label);
    return 1;
}

static void print_first_on(const uint8_t *mask, int w, int h, const char *label)
{
    int shown = 0;
    for (int i = 0; i < w * h && shown < 5; i++)
        if (mask[i]) {
            fprintf(stderr, "%s: foreground at (%d, %d)\n", label, i % w, i / w);
            shown++;
        }
}

/* ---- frame == background ------------------------------------------------------------------ */

static void prop_identity(void)
{
    const int w = 64, h = 48;
    uint64_t rng = 1;
    glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
    fill_texture(&bg, &rng, 0, 255);
    uint8_t *mask = malloc((size_t)w * h);
    struct {
        float ts, odc, b1, b2;
        int iterations;
    } sets[] = {{310, 5800, 2, 200, 8}, {0, 0, 2, 200, 8}, {50, 30000, 1, 50, 1}, {0, 100, 3, 700, 0},
                {2000, 0, 0.5f, 20, 3}};
    for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
        char label[96];
        snprintf(label, sizeof label, "identity ts %g odc %g b1 %g b2 %g it %d", sets[k].ts, sets[k].odc, sets[k].b1,
                 sets[k].b2, sets[k].iterations);
        glcv_segment *seg = make_seg(w, h);
        if (!seg)
            continue;
        CHECK_OK(glcv_segment_set_ts(seg, sets[k].ts));
        CHECK_OK(glcv_segment_set_odc(seg, sets[k].odc));
        CHECK_OK(glcv_segment_set_b1(seg, sets[k].b1));
        CHECK_OK(glcv_segment_set_b2(seg, sets[k].b2));
        CHECK_OK(glcv_segment_set_iterations(seg, sets[k].iterations));
        CHECK_OK(glcv_segment_set_background(seg, &bg));
        for (int f = 0; f < 2; f++) {
            if (!run(seg, &bg, mask, label))
                break;
            int on = test_count_nonzero(mask, (size_t)w * h);
            if (on)
                print_first_on(mask, w, h, label);
            CHECK(on == 0, "%s frame %d: %d foreground pixels, expected none", label, f, on);
        }
        /* Equal windows: fore == back == cross everywhere. */
        size_t n = (size_t)w * h;
        int32_t *q = malloc(n * 12);
        CHECK_OK(glcv_segment_read_qualifiers(seg, q, q + n, q + 2 * n));
        int bad = 0;
        for (size_t i = 0; i < n; i++)
            if ((q[i] != q[n + i] || q[i] != q[2 * n + i]) && bad++ < 3)
                fprintf(stderr, "%s (%d, %d): fore %d back %d cross %d\n", label, (int)(i % w), (int)(i / w), q[i],
                        q[n + i], q[2 * n + i]);
        CHECK(bad == 0, "%s: %d pixels with unequal window sums for equal images", label, bad);
        free(q);
        glcv_segment_destroy(&seg);
    }
    free(mask);
    test_image_release(&bg);
}

/* ---- illumination change ------------------------------------------------------------------ */

/* f = round(k b) is colinear with b up to rounding, so with a small Odc almost nothing
 * changes. Darkness compensation appends sqrt(Odc) to both vectors; that component is not
 * scaled by k, so it breaks the colinearity: for a window of energy S >> Odc,
 * D^2 ~ Odc (1 - k)^2 / (1 + k^2), i.e. 682 for k = 0.6 and 314 for k = 1.4 at the default
 * Odc 5800. Darkness compensation trades illumination invariance for sensitivity to dark
 * objects, so the default reports at least as much change, and for k = 0.6 far more. */
static void prop_illumination(void)
{
    const int w = 64, h = 48;
    const size_t n = (size_t)w * h;
    uint64_t rng = 2;
    glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), fg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
    fill_texture(&bg, &rng, 20, 180);
    uint8_t *mask = malloc(n);
    const double ks[2] = {0.6, 1.4};
    for (int ki = 0; ki < 2; ki++) {
        for (size_t i = 0; i < n * 3; i++)
            fg.data[i] = (uint8_t)floor(ks[ki] * bg.data[i] + 0.5); /* 1.4 * 180 = 252: nothing clips */
        const float odcs[3] = {0.0f, 100.0f, 5800.0f};
        int on[3] = {0, 0, 0};
        for (int oi = 0; oi < 3; oi++) {
            char label[80];
            snprintf(label, sizeof label, "illumination k %.1f odc %g", ks[ki], odcs[oi]);
            glcv_segment *seg = make_seg(w, h);
            if (!seg)
                continue;
            CHECK_OK(glcv_segment_set_odc(seg, odcs[oi]));
            CHECK_OK(glcv_segment_set_background(seg, &bg));
            if (run(seg, &fg, mask, label))
                on[oi] = test_count_nonzero(mask, n);
            printf("  %s: %d of %zu pixels changed (%.2f %%)\n", label, on[oi], n, 100.0 * on[oi] / (double)n);
            if (oi < 2) {
                if (on[oi] * 200 >= (int)n)
                    print_first_on(mask, w, h, label);
                CHECK(on[oi] * 200 < (int)n, "%s: %d of %zu pixels changed, expected < 0.5 %%", label, on[oi], n);
            }
            glcv_segment_destroy(&seg);
        }
        CHECK(on[2] >= on[0], "k %.1f: default Odc reports %d changed pixels, Odc 0 %d: expected at least as many",
              ks[ki], on[2], on[0]);
        if (ki == 0)
            CHECK(on[2] > on[0] && on[2] * 2 > (int)n,
                  "k 0.6: default Odc reports %d changed pixels (Odc 0: %d); expected most of the %zu", on[2], on[0],
                  n);
    }
    free(mask);
    test_image_release(&bg);
    test_image_release(&fg);
}

/* ---- darkness compensation ---------------------------------------------------------------- */

/* A dark object (10, 10, 12) on a bright textured background. Black is a low-intensity
 * version of any colour, so without Odc a window that lies wholly on the object is nearly
 * colinear with the background window (D^2 ~ 60 < Ts) and is missed; with Odc 5800 the extra
 * component separates them (D^2 ~ 5000). Windows on the object's edge mix unchanged
 * background pixels into the vectors, which breaks the colinearity whatever Odc is, so the
 * "missed" count uses the object's interior (pixels whose 3x3 window is all object). */
static void prop_dark_object(void)
{
    const int w = 96, h = 72, ox = 37, oy = 23, os = 20;
    const size_t n = (size_t)w * h;
    uint64_t rng = 3;
    glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), fg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
    fill_texture(&bg, &rng, 170, 250);
    memcpy(fg.data, bg.data, n * 3);
    for (int y = oy; y < oy + os; y++)
        for (int x = ox; x < ox + os; x++) {
            uint8_t *p = fg.data + ((size_t)y * w + x) * 3;
            p[0] = (uint8_t)(10 + (x + y) % 2);
            p[1] = (uint8_t)(10 + (x * 3 + y) % 2);
            p[2] = 12;
        }
    uint8_t *mask = malloc(n);
    const float odcs[2] = {5800.0f, 0.0f};
    for (int oi = 0; oi < 2; oi++) {
        char label[64];
        snprintf(label, sizeof label, "dark object odc %g", odcs[oi]);
        glcv_segment *seg = make_seg(w, h);
        if (!seg)
            continue;
        CHECK_OK(glcv_segment_set_odc(seg, odcs[oi]));
        CHECK_OK(glcv_segment_set_background(seg, &bg));
        if (run(seg, &fg, mask, label)) {
            int all = 0, inner = 0, outside = 0;
            for (int y = 0; y < h; y++)
                for (int x = 0; x < w; x++) {
                    int on = mask[(size_t)y * w + x] != 0;
                    int in = x >= ox && x < ox + os && y >= oy && y < oy + os;
                    int deep = x > ox && x < ox + os - 1 && y > oy && y < oy + os - 1;
                    all += on && in;
                    inner += on && deep;
                    outside += on && !(x >= ox - 1 && x <= ox + os && y >= oy - 1 && y <= oy + os);
                }
            int ninner = (os - 2) * (os - 2);
            printf("  %s: %d of %d object pixels found (%d of %d interior), %d beyond its 1-px rim\n", label, all,
                   os * os, inner, ninner, outside);
            if (oi == 0)
                CHECK(all * 10 >= os * os * 9, "%s: %d of %d object pixels found, expected >= 90 %%", label, all,
                      os * os);
            else
                CHECK(inner * 10 <= ninner, "%s: %d of %d interior object pixels found, expected <= 10 %%", label,
                      inner, ninner);
            CHECK(outside == 0, "%s: %d foreground pixels away from the object", label, outside);
        }
        glcv_segment_destroy(&seg);
    }
    free(mask);
    test_image_release(&bg);
    test_image_release(&fg);
}

/* ---- isolated outliers -------------------------------------------------------------------- */

/* Sites on a jittered 14 px grid (0.5 % of the pixels, none within 6 px of another) on a
 * textured background, of two kinds:
 *  - strong single-pixel outliers (each channel moved to its far end, 0 or 255). The 3x3
 *    window statistic spreads one pixel over the 9 windows that contain it, all with D^2 far
 *    above Ts + 12 B2, so a single outlier never gives an isolated foreground pixel: it gives
 *    a compact 3x3 blob that the MRF keeps (detected at every iteration count);
 *  - weak rings: the 8 neighbours of the site shifted by (+7, -7, 0). Window sums add up so
 *    that D^2 ~ 392 at the site, ~245 at its 4-neighbours and ~147 at its diagonal ones: with
 *    B1 = 2 only the site passes (Ts + 12 B1 = 334), so the first iteration leaves isolated
 *    foreground pixels; with B2 = 200 an isolated pixel needs D^2 > Ts + 12 B2 = 2710, so
 *    the B2 iterations remove them.
 * The rings are what makes "iterations remove isolated detections" testable at all. */
static void prop_isolated(void)
{
    const int w = 160, h = 120, step = 14;
    const size_t n = (size_t)w * h;
    uint64_t rng = 4;
    glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), fg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
    fill_texture(&bg, &rng, 20, 235);
    memcpy(fg.data, bg.data, n * 3);
    int sx[128], sy[128], kind[128], nsites = 0;
    for (int gy = 0; gy + step <= h; gy += step)
        for (int gx = 0; gx + step <= w; gx += step) {
            int x = gx + rand_range(&rng, 3, 10), y = gy + rand_range(&rng, 3, 10);
            int k = ((gx + gy) / step) % 2;
            if (nsites >= 128)
                break;
            sx[nsites] = x;
            sy[nsites] = y;
            kind[nsites] = k;
            nsites++;
            if (k == 0) {
                uint8_t *p = fg.data + ((size_t)y * w + x) * 3;
                for (int c = 0; c < 3; c++)
                    p[c] = p[c] < 128 ? 255 : 0; /* the far end of each channel */
            } else {
                for (int dy = -1; dy <= 1; dy++)
                    for (int dx = -1; dx <= 1; dx++) {
                        if (!dx && !dy)
                            continue;
                        uint8_t *p = fg.data + ((size_t)(y + dy) * w + x + dx) * 3;
                        p[0] = (uint8_t)(p[0] + 7); /* texture is 20..235: no wrap */
                        p[1] = (uint8_t)(p[1] - 7);
                    }
            }
        }
    uint8_t *mask = malloc(n);
    const int its[3] = {0, 2, 8};
    int iso[3] = {-1, -1, -1};
    for (int r = 0; r < 3; r++) {
        char label[64];
        snprintf(label, sizeof label, "isolated outliers, iterations %d", its[r]);
        glcv_segment *seg = make_seg(w, h);
        if (!seg)
            continue;
        CHECK_OK(glcv_segment_set_iterations(seg, its[r]));
        CHECK_OK(glcv_segment_set_background(seg, &bg));
        if (run(seg, &fg, mask, label)) {
            iso[r] = count_isolated(mask, w, h);
            int strong_found = 0, rings_found = 0, nstrong = 0, nrings = 0;
            for (int s = 0; s < nsites; s++) {
                int on = mask[(size_t)sy[s] * w + sx[s]] != 0;
                if (kind[s] == 0) {
                    nstrong++;
                    strong_found += on;
                } else {
                    nrings++;
                    rings_found += on;
                }
            }
            printf("  %s: %d foreground, %d isolated; strong outliers found %d/%d, weak ring centres %d/%d\n",
                   label, test_count_nonzero(mask, n), iso[r], strong_found, nstrong, rings_found, nrings);
            CHECK(strong_found == nstrong, "%s: only %d of %d strong outliers are foreground", label, strong_found,
                  nstrong);
            if (r == 0)
                CHECK(rings_found > nrings / 2, "%s: only %d of %d weak ring centres are foreground", label,
                      rings_found, nrings);
            else
                CHECK(rings_found == 0, "%s: %d weak ring centres survive the B2 iterations", label, rings_found);
        }
        glcv_segment_destroy(&seg);
    }
    CHECK(iso[0] > 0, "iterations 0 gave %d isolated foreground pixels: the test needs some", iso[0]);
    CHECK(iso[1] <= iso[0] && iso[2] <= iso[1], "isolated foreground pixels not non-increasing: %d, %d, %d", iso[0],
          iso[1], iso[2]);
    CHECK(iso[2] == 0, "iterations 8 left %d isolated foreground pixels", iso[2]);
    free(mask);
    test_image_release(&bg);
    test_image_release(&fg);
}

/* ---- odd sizes ---------------------------------------------------------------------------- */

static void prop_sizes(void)
{
    static const int sizes[][2] = {{1, 1}, {33, 17}, {641, 479}, {2, 1}, {1, 3}};
    uint64_t rng = 5;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const int w = sizes[s][0], h = sizes[s][1];
        const size_t n = (size_t)w * h;
        char label[64];
        snprintf(label, sizeof label, "size %dx%d", w, h);
        glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), fg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
        fill_texture(&bg, &rng, 60, 140);
        memcpy(fg.data, bg.data, n * 3);
        /* A big object: the middle half of the image (all of it for tiny sizes). */
        int ow = w >= 4 ? w / 2 : w, oh = h >= 4 ? h / 2 : h, ox = (w - ow) / 2, oy = (h - oh) / 2;
        const int red[3] = {250, 10, 20};
        fill_rect(&fg, ox, oy, ow, oh, red);
        uint8_t *mask = malloc(n);
        glcv_segment *seg = make_seg(w, h);
        if (seg) {
            CHECK_OK(glcv_segment_set_background(seg, &bg));
            if (run(seg, &bg, mask, label)) {
                int on = test_count_nonzero(mask, n);
                CHECK(on == 0, "%s: frame == background gave %d foreground pixels", label, on);
            }
            if (run(seg, &fg, mask, label)) {
                int found = 0;
                for (int y = oy; y < oy + oh; y++)
                    for (int x = ox; x < ox + ow; x++)
                        found += mask[(size_t)y * w + x] != 0;
                CHECK(found * 10 >= ow * oh * 9, "%s: the %dx%d object: %d pixels found, expected >= 90 %%", label,
                      ow, oh, found);
            }
            if (run(seg, &bg, mask, label)) {
                /* Back to the background. With the default Ts the first (B1) iteration switches
                 * off every pixel with D^2 = 0 < Ts - 12 B1 whatever its neighbours, so the
                 * prior does not keep the object. */
                int on = test_count_nonzero(mask, n);
                CHECK(on == 0, "%s: %d pixels stay foreground after the object left", label, on);
            }
        }
        glcv_segment_destroy(&seg);
        free(mask);
        test_image_release(&bg);
        test_image_release(&fg);
    }
}

/* ---- temporal prior ----------------------------------------------------------------------- */

/* With Ts = 0 and a frame equal to the background (D^2 = 0), a pixel is changed iff
 * 0 > B (12 - 2M), i.e. M > 6, for any B: the interior of a mask carried over from the
 * previous frame stays, while nothing new can appear from an empty prior. */
static void prop_temporal(void)
{
    const int w = 96, h = 72, ox = 28, oy = 16, os = 40;
    const size_t n = (size_t)w * h;
    uint64_t rng = 6;
    glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), fa = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
    fill_texture(&bg, &rng, 40, 200);
    memcpy(fa.data, bg.data, n * 3);
    const int col[3] = {240, 30, 200};
    fill_rect(&fa, ox, oy, os, os, col);
    uint8_t *mask = malloc(n);
    for (int variant = 0; variant < 2; variant++) {
        const char *how = variant == 0 ? "reset" : "set_background";
        char label[64];
        snprintf(label, sizeof label, "temporal prior (%s)", how);
        glcv_segment *seg = make_seg(w, h);
        if (!seg)
            continue;
        CHECK_OK(glcv_segment_set_ts(seg, 0.0f));
        CHECK_OK(glcv_segment_set_background(seg, &bg));
        if (run(seg, &fa, mask, label)) {
            int found = 0;
            for (int y = oy; y < oy + os; y++)
                for (int x = ox; x < ox + os; x++)
                    found += mask[(size_t)y * w + x] != 0;
            CHECK(found * 10 >= os * os * 9, "%s: frame A finds %d of %d object pixels, expected >= 90 %%", label,
                  found, os * os);
        }
        if (run(seg, &bg, mask, label)) {
            int on = test_count_nonzero(mask, n), inside = 0;
            for (int y = oy; y < oy + os; y++)
                for (int x = ox; x < ox + os; x++)
                    inside += mask[(size_t)y * w + x] != 0;
            printf("  %s: frame B == background keeps %d pixels (%d inside the object)\n", label, on, inside);
            CHECK(inside * 4 >= os * os, "%s: the prior kept only %d of %d object pixels", label, inside, os * os);
            CHECK(on - inside <= 4 * (os + 2), "%s: %d pixels outside the object, the prior grew", label, on - inside);
        }
        if (variant == 0)
            CHECK_OK(glcv_segment_reset(seg));
        else
            CHECK_OK(glcv_segment_set_background(seg, &bg));
        if (run(seg, &bg, mask, label)) {
            int on = test_count_nonzero(mask, n);
            if (on)
                print_first_on(mask, w, h, label);
            CHECK(on == 0, "%s: after %s, frame B gives %d foreground pixels, expected none", label, how, on);
        }
        glcv_segment_destroy(&seg);
    }
    free(mask);
    test_image_release(&bg);
    test_image_release(&fa);
}

/* ---- background adaptation and learning --------------------------------------------------- */

/* bg = (1 - rate) bg + rate frame where the mask says background, and nowhere else: with
 * rate 1 the new background is the frame exactly there and the old background under the
 * mask; with rate 0.5 it is the mean, rounded either way. Learning one frame gives that frame;
 * learning two frames whose sums are even gives their exact mean. */
static void prop_adapt_learn(void)
{
    const int w = 64, h = 48, ox = 20, oy = 14, os = 16;
    const size_t n = (size_t)w * h;
    uint64_t rng = 7;
    glcv_image bg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), fg = test_image_make(w, h, GLCV_PIXEL_RGB8, 0), got = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
    fill_texture(&bg, &rng, 40, 200);
    for (size_t i = 0; i < n * 3; i++)
        fg.data[i] = (uint8_t)(bg.data[i] + 6); /* a small global change: no detection */
    const int col[3] = {250, 250, 5};
    fill_rect(&fg, ox, oy, os, os, col);
    uint8_t *mask = malloc(n);
    const float rates[2] = {1.0f, 0.5f};
    for (int ri = 0; ri < 2; ri++) {
        char label[64];
        snprintf(label, sizeof label, "adaptation rate %g", rates[ri]);
        glcv_segment *seg = make_seg(w, h);
        if (!seg)
            continue;
        CHECK_OK(glcv_segment_set_adapt_rate(seg, rates[ri]));
        CHECK_OK(glcv_segment_set_background(seg, &bg));
        if (run(seg, &fg, mask, label) && glcv_segment_read_background(seg, &got) == GLCV_OK) {
            int on = 0, off = 0, bad = 0;
            for (size_t i = 0; i < n; i++) {
                on += mask[i] != 0;
                for (int c = 0; c < 3; c++) {
                    int b = bg.data[i * 3 + c], f = fg.data[i * 3 + c], g = got.data[i * 3 + c];
                    int ok;
                    if (mask[i])
                        ok = g == b;
                    else if (ri == 0)
                        ok = g == f;
                    else
                        ok = 2 * g == b + f || 2 * g == b + f - 1 || 2 * g == b + f + 1;
                    if (!ok && bad++ < 5)
                        fprintf(stderr, "%s (%d, %d) channel %d: background %d -> %d, frame %d, mask %d\n", label,
                                (int)(i % w), (int)(i / w), c, b, g, f, mask[i]);
                }
                off += !mask[i];
            }
            CHECK(on >= os * os && off > (int)n / 2,
                  "%s: the test needs the object found and most pixels background (%d on)", label, on);
            CHECK(bad == 0, "%s: %d background values break the update rule", label, bad);
        }
        glcv_segment_destroy(&seg);
    }

    glcv_segment *seg = make_seg(w, h);
    if (seg) {
        CHECK_OK(glcv_segment_learn_begin(seg));
        CHECK_OK(glcv_segment_learn_add(seg, &fg));
        CHECK_OK(glcv_segment_learn_end(seg));
        CHECK_OK(glcv_segment_read_background(seg, &got));
        CHECK(memcmp(got.data, fg.data, n * 3) == 0, "learning one frame did not give that frame");
        glcv_image even = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
        for (size_t i = 0; i < n * 3; i++)
            even.data[i] = (uint8_t)(bg.data[i] + (i % 3 ? 40 : 14)); /* even differences: even sums */
        CHECK_OK(glcv_segment_learn_begin(seg));
        CHECK_OK(glcv_segment_learn_add(seg, &bg));
        CHECK_OK(glcv_segment_learn_add(seg, &even));
        CHECK_OK(glcv_segment_learn_end(seg));
        CHECK_OK(glcv_segment_read_background(seg, &got));
        int bad = 0;
        for (size_t i = 0; i < n * 3; i++) {
            int want = (bg.data[i] + even.data[i]) / 2;
            if (got.data[i] != want && bad++ < 5)
                fprintf(stderr, "learned mean of 2 at (%d, %d) channel %d: %d, expected %d\n", (int)(i / 3 % w),
                        (int)(i / 3 / w), (int)(i % 3), got.data[i], want);
        }
        CHECK(bad == 0, "learning two frames: %d values differ from their exact mean", bad);
        test_image_release(&even);
    }
    glcv_segment_destroy(&seg);
    free(mask);
    test_image_release(&bg);
    test_image_release(&fg);
    test_image_release(&got);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "fragment";
    glcv_context *ctx = NULL;
    if (strcmp(mode, "cpu") == 0) {
        g_mode = GLCV_ENGINE_CPU; /* no GL needed */
    } else if (strcmp(mode, "fragment") == 0) {
        g_mode = GLCV_ENGINE_FRAGMENT;
        ctx = test_context_or_skip(33);
    } else if (strcmp(mode, "compute") == 0) {
        g_mode = GLCV_ENGINE_COMPUTE;
        ctx = test_context_or_skip(43);
    } else {
        fprintf(stderr, "usage: %s [cpu|fragment|compute]\n", argv[0]);
        return 2;
    }
    g_log = test_logger();
    printf("engine: %s\n", mode);

    prop_identity();
    prop_illumination();
    prop_dark_object();
    prop_isolated();
    prop_sizes();
    prop_temporal();
    prop_adapt_learn();

    glcv_context_destroy(&ctx);
    char name[64];
    snprintf(name, sizeof name, "test_segment_props (%s)", mode);
    return test_finish(name);
}
