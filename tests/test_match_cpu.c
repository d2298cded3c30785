/* Template matching, CPU engine: the API's validation, and every score map against brute-force
 * loops (the definitions in include/glcv/match.h, written out plainly) on random images and
 * templates of many sizes - 1x1, odd sizes, rows, columns, the template as large as the image -,
 * every metric, gray, RGB and RGBA, masks, regions of interest, the border band, and every SIMD
 * level this processor has (portable C, SSE4.1, AVX2), with 1 and 2 threads. Integer metrics must
 * agree exactly, ZNCC within 1e-5 (the reference computes it in double from means; the library
 * from exact integer sums). Also best-k against a plain greedy suppression, 64-bit scores, and a
 * planted template found at its place. Needs neither GL nor CUDA. */
#include "testutil.h"

#include <glcv/match.h>

#include <float.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double zncc_tolerance = 1e-5;

/* ---- brute force ------------------------------------------------------------------------------- */

/* Scores of every position, +-HUGE_VAL where none is evaluated. `img` and `tpl` are already in the
 * working format (channels interleaved); `mask` may be NULL. */
static void reference(const glcv_image *img, const glcv_image *tpl, const glcv_image *mask, int channels,
                      glcv_match_metric metric, const glcv_rect *roi, double *out)
{
    int W = img->width, H = img->height, w = tpl->width, h = tpl->height;
    int distance = metric != GLCV_MATCH_ZNCC;
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            double *o = out + (size_t)y * (size_t)W + (size_t)x;
            int inside = x + w <= W && y + h <= H;
            if (roi)
                inside = inside && x >= roi->x && y >= roi->y && x + w <= roi->x + roi->width &&
                         y + h <= roi->y + roi->height;
            if (!inside) {
                *o = distance ? HUGE_VAL : -HUGE_VAL;
                continue;
            }
            uint64_t sum = 0;
            int worst = 0;
            double mean_i[4] = {0}, mean_t[4] = {0};
            int64_t n = 0;
            int64_t si[4] = {0}, sii[4] = {0}, st[4] = {0}, stt[4] = {0};
            for (int j = 0; j < h; j++) {
                for (int i = 0; i < w; i++) {
                    if (mask && mask->data[(size_t)j * glcv_image_stride(mask) + (size_t)i] == 0)
                        continue;
                    n++;
                    for (int c = 0; c < channels; c++) {
                        int a = img->data[(size_t)(y + j) * glcv_image_stride(img) + (size_t)(x + i) * channels + c];
                        int b = tpl->data[(size_t)j * glcv_image_stride(tpl) + (size_t)i * channels + c];
                        int d = abs(a - b);
                        if (metric == GLCV_MATCH_SAD)
                            sum += (uint64_t)d;
                        else if (metric == GLCV_MATCH_SSD)
                            sum += (uint64_t)d * (uint64_t)d;
                        else if (d > worst)
                            worst = d;
                        si[c] += a;
                        sii[c] += a * a;
                        st[c] += b;
                        stt[c] += b * b;
                    }
                }
            }
            if (metric == GLCV_MATCH_SAD || metric == GLCV_MATCH_SSD) {
                *o = (double)sum;
                continue;
            }
            if (metric == GLCV_MATCH_LINF) {
                *o = worst;
                continue;
            }
            /* ZNCC from its definition: means per channel, then the centred sums, in double */
            int flat_i = 1, flat_t = 1;
            for (int c = 0; c < channels; c++) {
                mean_i[c] = (double)si[c] / (double)n;
                mean_t[c] = (double)st[c] / (double)n;
                flat_i = flat_i && n * sii[c] == si[c] * si[c];
                flat_t = flat_t && n * stt[c] == st[c] * st[c];
            }
            if (flat_i || flat_t) {
                *o = 0.0;
                continue;
            }
            double num = 0, vi = 0, vt = 0;
            for (int j = 0; j < h; j++)
                for (int i = 0; i < w; i++) {
                    if (mask && mask->data[(size_t)j * glcv_image_stride(mask) + (size_t)i] == 0)
                        continue;
                    for (int c = 0; c < channels; c++) {
                        double a =
                            img->data[(size_t)(y + j) * glcv_image_stride(img) + (size_t)(x + i) * channels + c] -
                            mean_i[c];
                        double b = tpl->data[(size_t)j * glcv_image_stride(tpl) + (size_t)i * channels + c] - mean_t[c];
                        num += a * b;
                        vi += a * a;
                        vt += b * b;
                    }
                }
            *o = num / sqrt(vi * vt);
        }
    }
}

/* Greedy suppression over all evaluated positions sorted best first (ties: lower index). */
typedef struct ranked {
    double score;
    int index;
} ranked;

static int g_distance_sort;

static int compare_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->score != y->score)
        return g_distance_sort ? (x->score < y->score ? -1 : 1) : (x->score > y->score ? -1 : 1);
    return x->index - y->index;
}

static int reference_best(const double *scores, int W, int H, int distance, int k, int d, glcv_match_hit *out)
{
    ranked *all = malloc((size_t)W * (size_t)H * sizeof *all);
    int n = 0, found = 0;
    for (int i = 0; i < W * H; i++)
        if (isfinite(scores[i]))
            all[n++] = (ranked){scores[i], i};
    g_distance_sort = distance;
    qsort(all, (size_t)n, sizeof *all, compare_ranked);
    for (int i = 0; i < n && found < k; i++) {
        int x = all[i].index % W, y = all[i].index / W, keep = 1;
        for (int j = 0; j < found && keep; j++)
            keep = abs(out[j].x - x) >= d || abs(out[j].y - y) >= d;
        if (keep)
            out[found++] = (glcv_match_hit){x, y, 0, 0, all[i].score};
    }
    free(all);
    return found;
}

/* ---- utilities ------------------------------------------------------------------------------- */

static void fill_random(glcv_image *img, uint64_t *rng, int levels)
{
    size_t stride = glcv_image_stride(img), row = (size_t)img->width * (size_t)glcv_pixel_format_size(img->format);
    for (int y = 0; y < img->height; y++)
        for (size_t i = 0; i < row; i++)
            img->data[(size_t)y * stride + i] = (uint8_t)(levels >= 256 ? test_rand(rng) >> 56
                                                                          : (test_rand(rng) >> 40) % (uint64_t)levels);
}

/* An image with a padded stride, so that strides are exercised too. */
static glcv_image make_image(int w, int h, glcv_pixel_format f, int pad)
{
    glcv_image img = {0};
    size_t stride = (size_t)w * (size_t)glcv_pixel_format_size(f) + (size_t)pad;
    img.data = calloc((size_t)h, stride);
    img.width = w;
    img.height = h;
    img.stride = stride;
    img.format = f;
    return img;
}

static void free_image(glcv_image *img)
{
    free(img->data);
    memset(img, 0, sizeof *img);
}

/* A random image and template of format `f` (packed rows), pixel values 0..levels-1, drawn from
 * the random numbers of `seed`. */
static void random_inputs(glcv_image *img, glcv_image *tpl, int W, int H, int w, int h, glcv_pixel_format f,
                          int levels, uint64_t seed)
{
    uint64_t rng = seed;
    *img = make_image(W, H, f, 0);
    *tpl = make_image(w, h, f, 0);
    fill_random(img, &rng, levels);
    fill_random(tpl, &rng, levels);
}

static glcv_image converted(const glcv_image *src, glcv_pixel_format f)
{
    glcv_image out = make_image(src->width, src->height, f, 0);
    CHECK_OK(glcv_image_convert(src, &out));
    return out;
}

static int channels_of(glcv_pixel_format f)
{
    return f == GLCV_PIXEL_GRAY8 ? 1 : f == GLCV_PIXEL_RGB8 || f == GLCV_PIXEL_BGR8 ? 3 : 4;
}

/* Compares a map with the reference; prints the first differences. Returns the number of them. */
static int compare_maps(const char *what, const double *got, const double *want, int W, int H, int zncc)
{
    int bad = 0;
    for (int i = 0; i < W * H; i++) {
        double a = got[i], b = want[i];
        int ok = zncc ? (isinf(a) || isinf(b) ? a == b : fabs(a - b) <= zncc_tolerance) : a == b;
        if (!ok) {
            if (bad < 3)
                fprintf(stderr, "%s: (%d, %d): got %.9g, want %.9g\n", what, i % W, i / W, a, b);
            bad++;
        }
    }
    CHECK(bad == 0, "%s: %d of %d positions differ", what, bad, W * H);
    return bad;
}

static const glcv_match_simd all_simd[] = {GLCV_MATCH_SIMD_NONE, GLCV_MATCH_SIMD_SSE41, GLCV_MATCH_SIMD_AVX2};

static int simd_available(glcv_match_simd simd)
{
    glcv_match *m = NULL;
    glcv_match_params p = GLCV_MATCH_PARAMS(.width = 8, .height = 8, .engine = GLCV_ENGINE_CPU, .simd = simd);
    glcv_status st = glcv_match_create(&p, &m);
    glcv_match_destroy(&m);
    return st == GLCV_OK;
}

/* A matcher made from `p` that has been given the template (and mask, ROI: NULL for none) and has
 * matched `img`; NULL, the failure recorded, when it cannot be made. */
static glcv_match *matched(const glcv_match_params *p, const glcv_image *tpl, const glcv_image *mask,
                           const glcv_rect *roi, const glcv_image *img)
{
    glcv_match *m = NULL;
    CHECK_OK(glcv_match_create(p, &m));
    if (!m)
        return NULL;
    CHECK_OK(glcv_match_set_template(m, tpl, mask));
    if (roi)
        CHECK_OK(glcv_match_set_roi(m, roi));
    CHECK_OK(glcv_match_image(m, img));
    return m;
}

/* Matches `img` with a matcher made from `p` (template, mask, ROI as in `matched`) and compares its
 * score map with `want` (`got`: room for the map). */
static void check_scores(const char *what, const glcv_match_params *p, const glcv_image *tpl, const glcv_image *mask,
                         const glcv_rect *roi, const glcv_image *img, const double *want, double *got)
{
    glcv_match *m = matched(p, tpl, mask, roi, img);
    if (!m)
        return;
    CHECK_OK(glcv_match_read_scores(m, got, 0));
    compare_maps(what, got, want, p->width, p->height, p->metric == GLCV_MATCH_ZNCC);
    glcv_match_destroy(&m);
}

/* One case: a random image and template (and mask, ROI), every metric, every SIMD level. */
typedef struct match_case {
    int W, H, w, h;
    glcv_pixel_format input;   /* format of the image and template given */
    glcv_pixel_format working; /* the matcher's format */
    int masked;
    int roi;
    int levels; /* pixel values 0..levels-1 (few levels: ties and flat windows) */
    int threads;
} match_case;

static void run_case(const match_case *mc, uint64_t *rng)
{
    int W = mc->W, H = mc->H, w = mc->w, h = mc->h;
    glcv_image img = make_image(W, H, mc->input, 3), tpl = make_image(w, h, mc->input, 1);
    glcv_image mask = make_image(w, h, GLCV_PIXEL_GRAY8, 2);
    fill_random(&img, rng, mc->levels);
    fill_random(&tpl, rng, mc->levels);
    fill_random(&mask, rng, 256);
    int kept = 0;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            uint8_t *v = &mask.data[(size_t)j * mask.stride + (size_t)i];
            *v = *v < 80 ? 0 : *v; /* about 70 % kept */
            kept += *v != 0;
        }
    if (!kept)
        mask.data[0] = 1;
    glcv_rect roi = {(int)(test_rand(rng) % (uint64_t)W) - W / 4, (int)(test_rand(rng) % (uint64_t)H) - H / 4,
                           w + (int)(test_rand(rng) % (uint64_t)W), h + (int)(test_rand(rng) % (uint64_t)H)};
    /* the reference sees the ROI clipped to the image, as the library clips it */
    glcv_rect clipped = roi;
    if (clipped.x < 0) {
        clipped.width += clipped.x;
        clipped.x = 0;
    }
    if (clipped.y < 0) {
        clipped.height += clipped.y;
        clipped.y = 0;
    }
    glcv_image img_w = converted(&img, mc->working), tpl_w = converted(&tpl, mc->working);
    double *want = malloc((size_t)W * (size_t)H * sizeof *want);
    double *got = malloc((size_t)W * (size_t)H * sizeof *got);
    for (int metric = GLCV_MATCH_SAD; metric <= GLCV_MATCH_ZNCC; metric++) {
        reference(&img_w, &tpl_w, mc->masked ? &mask : NULL, channels_of(mc->working), (glcv_match_metric)metric,
                  mc->roi ? &clipped : NULL, want);
        for (size_t s = 0; s < sizeof all_simd / sizeof all_simd[0]; s++) {
            if (!simd_available(all_simd[s]))
                continue;
            glcv_match_params p = GLCV_MATCH_PARAMS(.width = W, .height = H, .format = mc->working,
                                                    .metric = (glcv_match_metric)metric,
                                                    .engine = GLCV_ENGINE_CPU, .simd = all_simd[s],
                                                    .threads = mc->threads, .logger = test_logger());
            char what[160];
            snprintf(what, sizeof what, "%dx%d in %dx%d, %s, in %d ch, working %d ch%s%s, %s, %d threads", w, h, W, H,
                     glcv_match_metric_string((glcv_match_metric)metric), channels_of(mc->input),
                     channels_of(mc->working), mc->masked ? ", mask" : "", mc->roi ? ", roi" : "",
                     glcv_match_simd_string(all_simd[s]), mc->threads);
            check_scores(what, &p, &tpl, mc->masked ? &mask : NULL, mc->roi ? &roi : NULL, &img, want, got);
        }
    }
    free(want);
    free(got);
    free_image(&img);
    free_image(&tpl);
    free_image(&mask);
    free_image(&img_w);
    free_image(&tpl_w);
}

/* ---- the tests -------------------------------------------------------------------------------- */

static void test_api(void)
{
    glcv_match *m = NULL;
    glcv_logger quiet = {0};
    CHECK_STATUS(glcv_match_create(NULL, &m), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_match_params p = GLCV_MATCH_PARAMS(.width = 0, .height = 10, .engine = GLCV_ENGINE_CPU);
    CHECK_STATUS(glcv_match_create(&p, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_match_create(&p, &m), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(m == NULL, "out set on error");
    p = GLCV_MATCH_PARAMS(.width = 16385, .height = 10, .engine = GLCV_ENGINE_CPU);
    CHECK_STATUS(glcv_match_create(&p, &m), GLCV_ERROR_INVALID_ARGUMENT);
    p = GLCV_MATCH_PARAMS(.width = 10, .height = 10, .metric = (glcv_match_metric)9, .logger = quiet);
    CHECK_STATUS(glcv_match_create(&p, &m), GLCV_ERROR_INVALID_ARGUMENT);
    p = GLCV_MATCH_PARAMS(.width = 10, .height = 10, .engine = (glcv_engine_mode)7);
    CHECK_STATUS(glcv_match_create(&p, &m), GLCV_ERROR_INVALID_ARGUMENT);
    p = GLCV_MATCH_PARAMS(.width = 10, .height = 10, .format = (glcv_pixel_format)42);
    CHECK_STATUS(glcv_match_create(&p, &m), GLCV_ERROR_INVALID_ARGUMENT);
    p = GLCV_MATCH_PARAMS(.width = 10, .height = 10, .cuda_chunks = 65);
    CHECK_STATUS(glcv_match_create(&p, &m), GLCV_ERROR_INVALID_ARGUMENT);
    p = GLCV_MATCH_PARAMS(.width = 10, .height = 10, .nms_distance = -3);
    CHECK_STATUS(glcv_match_create(&p, &m), GLCV_ERROR_INVALID_ARGUMENT);

    glcv_match_destroy(NULL);
    glcv_match_destroy(&m);

    p = GLCV_MATCH_PARAMS(.width = 20, .height = 10, .engine = GLCV_ENGINE_CPU, .logger = test_logger());
    CHECK_OK(glcv_match_create(&p, &m));
    if (!m)
        return;
    glcv_match_params got;
    CHECK_OK(glcv_match_get_params(m, &got));
    CHECK(got.engine == GLCV_ENGINE_CPU && got.metric == GLCV_MATCH_SAD && got.format == GLCV_PIXEL_GRAY8,
          "resolved params: engine %d metric %d format %d", got.engine, got.metric, got.format);
    CHECK(got.simd != GLCV_MATCH_SIMD_DEFAULT, "resolved simd %d", got.simd);
    printf("CPU engine SIMD level: %s\n", glcv_match_simd_string(got.simd));

    glcv_image img = make_image(20, 10, GLCV_PIXEL_GRAY8, 0), big = make_image(21, 4, GLCV_PIXEL_GRAY8, 0);
    glcv_image tpl = make_image(4, 3, GLCV_PIXEL_GRAY8, 0), mask = make_image(4, 3, GLCV_PIXEL_GRAY8, 0);
    glcv_image mask_rgb = make_image(4, 3, GLCV_PIXEL_RGB8, 0), mask_small = make_image(3, 3, GLCV_PIXEL_GRAY8, 0);
    double scores[200];
    glcv_match_hit hits[4];
    int count = -1;
    CHECK_STATUS(glcv_match_image(m, &img), GLCV_ERROR_STATE);
    CHECK_STATUS(glcv_match_read_scores(m, scores, 0), GLCV_ERROR_STATE);
    CHECK_STATUS(glcv_match_best(m, 1, hits, &count), GLCV_ERROR_STATE);
    CHECK_STATUS(glcv_match_image_mapped(m), GLCV_ERROR_STATE);
    CHECK_STATUS(glcv_match_set_template(m, NULL, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_match_set_template(m, &big, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_match_set_template(m, &tpl, &mask), GLCV_ERROR_INVALID_ARGUMENT); /* keeps nothing */
    CHECK_STATUS(glcv_match_set_template(m, &tpl, &mask_rgb), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_match_set_template(m, &tpl, &mask_small), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_STATUS(glcv_match_set_roi(m, &(glcv_rect){0, 0, 0, 5}), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_match_set_metric(m, (glcv_match_metric)11), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_OK(glcv_match_set_template(m, &tpl, NULL));
    CHECK_OK(glcv_match_get_params(m, &got));
    CHECK(got.nms_distance == 2, "default suppression distance %d, want 2 (half of 3, rounded up)", got.nms_distance);
    CHECK_STATUS(glcv_match_image(m, &big), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_OK(glcv_match_image(m, &img));
    CHECK_STATUS(glcv_match_best(m, 0, hits, &count), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_OK(glcv_match_best(m, 4, hits, &count));
    CHECK(count == 4, "best: %d hits", count);
    /* a ROI smaller than the template: no position, no hit */
    CHECK_OK(glcv_match_set_roi(m, &(glcv_rect){5, 5, 3, 3}));
    CHECK_OK(glcv_match_image(m, &img));
    CHECK_OK(glcv_match_best(m, 4, hits, &count));
    CHECK(count == 0, "best with an empty region: %d hits", count);
    CHECK_OK(glcv_match_read_scores(m, scores, 0));
    CHECK(scores[0] == HUGE_VAL, "unevaluated score %g", scores[0]);
    /* a ROI outside the image is clipped to nothing */
    CHECK_OK(glcv_match_set_roi(m, &(glcv_rect){-50, -50, 10, 10}));
    CHECK_OK(glcv_match_image(m, &img));
    CHECK_OK(glcv_match_best(m, 1, hits, &count));
    CHECK(count == 0, "best with a ROI outside: %d hits", count);
    CHECK_OK(glcv_match_set_roi(m, NULL));
    glcv_timing t[4];
    int nt = 0;
    CHECK_OK(glcv_match_timings(m, t, 4, &nt));
    CHECK(nt == 2, "CPU timings: %d entries", nt);
    CHECK(glcv_match_map_texture(m) == 0 || glcv_gl_context_current(), "map texture without GL");

    /* zero-copy input */
    glcv_image mapped;
    CHECK_OK(glcv_match_map_image(m, &mapped));
    CHECK(mapped.width == 20 && mapped.height == 10 && mapped.format == GLCV_PIXEL_GRAY8 && mapped.data,
          "mapped image %dx%d format %d", mapped.width, mapped.height, mapped.format);
    if (mapped.data) {
        memset(mapped.data, 7, mapped.stride * 10);
        CHECK_OK(glcv_match_image_mapped(m));
        CHECK_OK(glcv_match_best(m, 1, hits, &count));
        CHECK(count == 1 && hits[0].score == 7 * 12, "mapped: SAD %g", count ? hits[0].score : -1.0);
    }

    glcv_match_metric metric;
    glcv_engine_mode engine;
    CHECK_OK(glcv_match_metric_parse("zncc", &metric));
    CHECK(metric == GLCV_MATCH_ZNCC, "parse zncc");
    CHECK_STATUS(glcv_match_metric_parse("sadd", &metric), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_OK(glcv_engine_mode_parse("cuda", &engine));
    CHECK(engine == GLCV_ENGINE_CUDA, "parse cuda");
    CHECK_STATUS(glcv_engine_mode_parse("gpu", &engine), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(strcmp(glcv_match_metric_string(GLCV_MATCH_LINF), "linf") == 0, "linf name");
    CHECK(strcmp(glcv_engine_mode_string(GLCV_ENGINE_DEFAULT), "auto") == 0, "auto name");

    glcv_match_destroy(&m);
    CHECK(m == NULL, "destroy sets NULL");
    free_image(&img);
    free_image(&big);
    free_image(&tpl);
    free_image(&mask);
    free_image(&mask_rgb);
    free_image(&mask_small);
}

static void test_random_cases(void)
{
    uint64_t rng = 12345;
    static const int sizes[][4] = {
        {1, 1, 1, 1},     {7, 5, 1, 1},    {9, 4, 9, 4},     {40, 3, 5, 3},    {3, 40, 3, 7},  {33, 17, 4, 4},
        {64, 20, 8, 8},   {70, 31, 13, 6}, {61, 47, 16, 16}, {97, 41, 31, 9},  {50, 50, 32, 32}, {45, 38, 1, 17},
        {81, 23, 24, 11}, {37, 29, 37, 1}, {120, 9, 40, 5},  {130, 40, 67, 3}, {48, 34, 12, 12}};
    static const glcv_pixel_format pairs[][2] = {{GLCV_PIXEL_GRAY8, GLCV_PIXEL_GRAY8},
                                                 {GLCV_PIXEL_RGB8, GLCV_PIXEL_RGB8},
                                                 {GLCV_PIXEL_RGBA8, GLCV_PIXEL_RGBA8},
                                                 {GLCV_PIXEL_BGR8, GLCV_PIXEL_RGB8},
                                                 {GLCV_PIXEL_RGB8, GLCV_PIXEL_GRAY8}};
    int n = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (int variant = 0; variant < 4; variant++) {
            match_case mc = {sizes[s][0], sizes[s][1], sizes[s][2], sizes[s][3], GLCV_PIXEL_GRAY8, GLCV_PIXEL_GRAY8,
                             variant & 1, variant >> 1 & 1, 256, 1 + (int)(s % 2)};
            const glcv_pixel_format *f = pairs[(s + (size_t)variant) % (sizeof pairs / sizeof pairs[0])];
            mc.input = f[0];
            mc.working = f[1];
            if (s % 3 == 2)
                mc.levels = 3; /* flat windows, ties */
            run_case(&mc, &rng);
            n++;
        }
    }
    printf("random cases: %d (x 4 metrics x SIMD levels)\n", n);
}

/* The paper's sizes on a 640x480 image: every SIMD level gives the portable path's maps. */
static void test_paper_sizes(void)
{
    uint64_t rng = 99;
    glcv_image img = make_image(640, 480, GLCV_PIXEL_GRAY8, 0);
    fill_random(&img, &rng, 256);
    double *ref = malloc(640 * 480 * sizeof *ref), *got = malloc(640 * 480 * sizeof *got);
    static const int masks[] = {4, 8, 12, 16, 24, 32, 5};
    for (size_t k = 0; k < sizeof masks / sizeof masks[0]; k++) {
        int s = masks[k];
        glcv_image tpl = make_image(s, s, GLCV_PIXEL_GRAY8, 0);
        fill_random(&tpl, &rng, 256);
        for (int metric = GLCV_MATCH_SAD; metric <= GLCV_MATCH_ZNCC; metric++) {
            for (size_t v = 0; v < sizeof all_simd / sizeof all_simd[0]; v++) {
                if (!simd_available(all_simd[v]))
                    continue;
                glcv_match_params p = GLCV_MATCH_PARAMS(.width = 640, .height = 480,
                                                        .metric = (glcv_match_metric)metric,
                                                        .engine = GLCV_ENGINE_CPU, .simd = all_simd[v],
                                                        .logger = test_logger());
                glcv_match *m = matched(&p, &tpl, NULL, NULL, &img);
                if (!m)
                    continue;
                CHECK_OK(glcv_match_read_scores(m, v == 0 ? ref : got, 0));
                if (v > 0) {
                    char what[96];
                    snprintf(what, sizeof what, "640x480 %dx%d %s: %s vs none", s, s,
                             glcv_match_metric_string((glcv_match_metric)metric), glcv_match_simd_string(all_simd[v]));
                    /* the same integers (ZNCC: the same sums, hence the same floats) */
                    compare_maps(what, got, ref, 640, 480, 0);
                }
                glcv_match_destroy(&m);
            }
        }
        free_image(&tpl);
    }
    free(ref);
    free(got);
    free_image(&img);
}

/* A template cut out of the image is found where it was cut, with score 0 (distances) or 1. */
static void test_planted(void)
{
    uint64_t rng = 7;
    glcv_image img = make_image(200, 150, GLCV_PIXEL_RGB8, 0);
    fill_random(&img, &rng, 256);
    int px = 123, py = 77, w = 21, h = 14;
    glcv_image tpl = make_image(w, h, GLCV_PIXEL_RGB8, 0);
    for (int y = 0; y < h; y++)
        memcpy(tpl.data + (size_t)y * tpl.stride, img.data + (size_t)(py + y) * img.stride + (size_t)px * 3,
               (size_t)w * 3);
    for (int metric = GLCV_MATCH_SAD; metric <= GLCV_MATCH_ZNCC; metric++) {
        glcv_match_params p = GLCV_MATCH_PARAMS(.width = 200, .height = 150, .format = GLCV_PIXEL_RGB8,
                                                .metric = (glcv_match_metric)metric, .engine = GLCV_ENGINE_CPU,
                                                .logger = test_logger());
        glcv_match *m = matched(&p, &tpl, NULL, NULL, &img);
        if (!m)
            continue;
        glcv_match_hit hit;
        int count = 0;
        CHECK_OK(glcv_match_best(m, 1, &hit, &count));
        double want = metric == GLCV_MATCH_ZNCC ? 1.0 : 0.0;
        CHECK(count == 1 && hit.x == px && hit.y == py && fabs(hit.score - want) < 1e-6 && hit.cx == px + w / 2 &&
                  hit.cy == py + h / 2,
              "%s: best (%d, %d) centre (%d, %d) score %g, want (%d, %d) score %g",
              glcv_match_metric_string((glcv_match_metric)metric), hit.x, hit.y, hit.cx, hit.cy, hit.score, px, py,
              want);
        glcv_match_destroy(&m);
    }
    free_image(&img);
    free_image(&tpl);
}

/* Best-k with suppression against the plain greedy reference, on maps with many ties. */
static void test_best_k(void)
{
    glcv_image img, tpl;
    random_inputs(&img, &tpl, 90, 70, 9, 6, GLCV_PIXEL_GRAY8, 4, 4242);
    double *scores = malloc(90 * 70 * sizeof *scores);
    static const int ks[] = {1, 2, 5, 20, 200};
    static const int ds[] = {0, 1, 3, 7};
    for (int metric = GLCV_MATCH_SAD; metric <= GLCV_MATCH_ZNCC; metric++) {
        for (size_t di = 0; di < sizeof ds / sizeof ds[0]; di++) {
            glcv_match_params p = GLCV_MATCH_PARAMS(.width = 90, .height = 70, .metric = (glcv_match_metric)metric,
                                                    .engine = GLCV_ENGINE_CPU, .nms_distance = ds[di],
                                                    .logger = test_logger());
            glcv_match *m = matched(&p, &tpl, NULL, &(glcv_rect){3, 2, 80, 60}, &img);
            if (!m)
                continue;
            CHECK_OK(glcv_match_read_scores(m, scores, 0));
            int d = ds[di] ? ds[di] : 3; /* default: half of 6, rounded up */
            for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
                glcv_match_hit got[200], want[200];
                int n_got = -1;
                CHECK_OK(glcv_match_best(m, ks[ki], got, &n_got));
                int n_want = reference_best(scores, 90, 70, metric != GLCV_MATCH_ZNCC, ks[ki], d, want);
                int same = n_got == n_want;
                for (int i = 0; i < n_want && same; i++)
                    same = got[i].x == want[i].x && got[i].y == want[i].y && got[i].score == want[i].score &&
                           got[i].cx == got[i].x + 4 && got[i].cy == got[i].y + 3;
                CHECK(same, "best %d, %s, distance %d: %d hits (want %d), first (%d, %d) want (%d, %d)", ks[ki],
                      glcv_match_metric_string((glcv_match_metric)metric), d, n_got, n_want, n_got ? got[0].x : -1,
                      n_got ? got[0].y : -1, n_want ? want[0].x : -1, n_want ? want[0].y : -1);
            }
            glcv_match_destroy(&m);
        }
    }
    free(scores);
    free_image(&img);
    free_image(&tpl);
}

/* Scores beyond 32 bits: SSD and ZNCC of a 260x260 template, SAD of a 2100x2050 RGBA one. */
static void test_wide(void)
{
    {
        glcv_image img, tpl;
        random_inputs(&img, &tpl, 270, 266, 260, 260, GLCV_PIXEL_GRAY8, 256, 555);
        double *want = malloc(270 * 266 * sizeof *want), *got = malloc(270 * 266 * sizeof *got);
        static const glcv_match_metric metrics[] = {GLCV_MATCH_SSD, GLCV_MATCH_ZNCC, GLCV_MATCH_SAD};
        for (size_t i = 0; i < 3; i++) {
            reference(&img, &tpl, NULL, 1, metrics[i], NULL, want);
            glcv_match_params p = GLCV_MATCH_PARAMS(.width = 270, .height = 266, .metric = metrics[i],
                                                    .engine = GLCV_ENGINE_CPU, .logger = test_logger());
            check_scores(metrics[i] == GLCV_MATCH_SSD ? "260x260 SSD (64-bit)" : "260x260 ZNCC/SAD", &p, &tpl, NULL,
                         NULL, &img, want, got);
        }
        free(want);
        free(got);
        free_image(&img);
        free_image(&tpl);
    }
    {
        int w = 2100, h = 2050;
        glcv_image img = make_image(w, h, GLCV_PIXEL_RGBA8, 0), tpl = make_image(w, h, GLCV_PIXEL_RGBA8, 0);
        memset(img.data, 255, img.stride * (size_t)h);
        tpl.data[0] = 17;
        glcv_match_params p = GLCV_MATCH_PARAMS(.width = w, .height = h, .format = GLCV_PIXEL_RGBA8,
                                                .engine = GLCV_ENGINE_CPU, .logger = test_logger());
        glcv_match *m = matched(&p, &tpl, NULL, NULL, &img);
        if (m) {
            glcv_match_hit hit;
            int count = 0;
            CHECK_OK(glcv_match_best(m, 1, &hit, &count));
            double want = (double)w * h * 4 * 255 - 17;
            CHECK(count == 1 && hit.x == 0 && hit.y == 0 && hit.score == want, "SAD beyond 32 bits: %.0f, want %.0f",
                  hit.score, want);
            glcv_match_destroy(&m);
        }
        free_image(&img);
        free_image(&tpl);
    }
}

/* The normalised map: 1 at the best score, 0 at the worst and outside. */
static void test_normalized(void)
{
    glcv_image img, tpl;
    random_inputs(&img, &tpl, 30, 20, 5, 4, GLCV_PIXEL_GRAY8, 256, 31);
    glcv_match_params p = GLCV_MATCH_PARAMS(.width = 30, .height = 20, .engine = GLCV_ENGINE_CPU,
                                            .logger = test_logger());
    glcv_match *m = matched(&p, &tpl, NULL, NULL, &img);
    if (!m)
        return;
    double scores[600];
    float norm[600];
    /* a stride below the width would overlap the rows and write past the buffer: refused, and
     * nothing written (the guard words after a 29-wide map's last row stay) */
    double guard[29 * 20 + 40];
    for (int i = 0; i < 29 * 20 + 40; i++)
        guard[i] = -7.0;
    CHECK_STATUS(glcv_match_read_scores(m, guard, 29), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_match_read_normalized(m, norm, 1), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_match_read_scores(m, guard, SIZE_MAX / 4), GLCV_ERROR_INVALID_ARGUMENT);
    int touched = 0;
    for (int i = 0; i < 29 * 20 + 40; i++)
        touched += guard[i] != -7.0;
    CHECK(touched == 0, "a refused read wrote %d doubles", touched);
    /* a wider stride: each row where it belongs, the gaps left alone */
    double wide[32 * 20];
    for (int i = 0; i < 32 * 20; i++)
        wide[i] = -7.0;
    CHECK_OK(glcv_match_read_scores(m, wide, 32));
    CHECK_OK(glcv_match_read_scores(m, scores, 0));
    CHECK_OK(glcv_match_read_normalized(m, norm, 0));
    int misplaced = 0;
    for (int y = 0; y < 20; y++)
        for (int x = 0; x < 32; x++)
            misplaced += x < 30 ? memcmp(&wide[y * 32 + x], &scores[y * 30 + x], sizeof(double)) != 0
                                : wide[y * 32 + x] != -7.0;
    CHECK(misplaced == 0, "stride 32: %d values misplaced", misplaced);
    double lo = HUGE_VAL, hi = -HUGE_VAL;
    for (int i = 0; i < 600; i++)
        if (isfinite(scores[i])) {
            lo = fmin(lo, scores[i]);
            hi = fmax(hi, scores[i]);
        }
    int bad = 0;
    for (int i = 0; i < 600; i++) {
        double want = isfinite(scores[i]) ? (hi - scores[i]) / (hi - lo) : 0.0;
        bad += fabs(norm[i] - want) > 1e-6;
    }
    CHECK(bad == 0, "normalised map: %d values differ", bad);
    glcv_match_destroy(&m);
    free_image(&img);
    free_image(&tpl);
}

int main(void)
{
    test_api();
    test_random_cases();
    test_paper_sizes();
    test_planted();
    test_best_k();
    test_wide();
    test_normalized();
    return test_finish("test_match_cpu");
}
