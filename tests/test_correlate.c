/* Pearson correlation, CPU engine: the API's validation; coefficients against a double-precision
 * two-pass reference (tolerance 1e-6) on random gray and RGB images of many sizes, 1x1 and odd ones
 * included; r = 1 for an image against itself, -1 against its negative, 0 without variance; the
 * paper's one-pass float formula loses the sums' low bits at 320x240 while glcv does not; host
 * batches of mixed formats and strides, the resident bank, image files; AVX2 and portable C give
 * the same doubles. Needs neither GL nor CUDA. */
#define _POSIX_C_SOURCE 200809L

#include "testutil.h"

#include "correlate_internal.h"

#include <glcv/correlate.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const double tolerance = 1e-6;

/* r by its definition: means first, then the centred sums, in double. */
static double reference_r(const uint8_t *x, const uint8_t *y, size_t n)
{
    double mx = 0, my = 0;
    for (size_t i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= (double)n;
    my /= (double)n;
    double sxy = 0, sxx = 0, syy = 0;
    int flat_x = 1, flat_y = 1;
    for (size_t i = 0; i < n; i++) {
        double a = x[i] - mx, b = y[i] - my;
        sxy += a * b;
        sxx += a * a;
        syy += b * b;
        flat_x = flat_x && x[i] == x[0];
        flat_y = flat_y && y[i] == y[0];
    }
    if (flat_x || flat_y)
        return 0.0;
    return sxy / sqrt(sxx * syy);
}

/* The paper's kernel arithmetic: one pass, float sums. */
static double paper_float_r(const uint8_t *x, const uint8_t *y, size_t n)
{
    float sum1 = 0, sqr1 = 0, sum2 = 0, sqr2 = 0, prod = 0;
    for (size_t i = 0; i < n; i++) {
        float v1 = x[i], v2 = y[i];
        sum1 += v1;
        sqr1 += v1 * v1;
        sum2 += v2;
        sqr2 += v2 * v2;
        prod += v1 * v2;
    }
    float count = (float)n;
    float var1 = count * sqr1 - sum1 * sum1, var2 = count * sqr2 - sum2 * sum2, cov = count * prod - sum1 * sum2;
    float energy = var1 * var2;
    return energy > 0 ? cov / sqrtf(energy) : 0.0;
}

static glcv_image make(int w, int h, glcv_pixel_format f, int pad)
{
    glcv_image img = {0};
    img.width = w;
    img.height = h;
    img.format = f;
    img.stride = (size_t)w * (size_t)glcv_pixel_format_size(f) + (size_t)pad;
    img.data = calloc((size_t)h, img.stride);
    return img;
}

/* Packed samples of an image in the working format (for the reference computation). */
static uint8_t *samples_of(const glcv_image *img, glcv_pixel_format f)
{
    glcv_image out = make(img->width, img->height, f, 0);
    CHECK_OK(glcv_image_convert(img, &out));
    return out.data;
}

/* y = a * x + b + noise, clamped: correlated images of every strength and sign. */
static void related(const glcv_image *x, glcv_image *y, double a, double b, int noise, uint64_t *rng)
{
    size_t row = (size_t)x->width * (size_t)glcv_pixel_format_size(x->format);
    for (int j = 0; j < x->height; j++)
        for (size_t i = 0; i < row; i++) {
            double v = a * x->data[(size_t)j * x->stride + i] + b;
            if (noise)
                v += (double)(test_rand(rng) % (uint64_t)(2 * noise + 1)) - noise;
            y->data[(size_t)j * y->stride + i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : lround(v));
        }
}

static void randomize(glcv_image *img, uint64_t *rng, int lo, int hi)
{
    size_t row = (size_t)img->width * (size_t)glcv_pixel_format_size(img->format);
    for (int j = 0; j < img->height; j++)
        for (size_t i = 0; i < row; i++)
            img->data[(size_t)j * img->stride + i] = (uint8_t)(lo + (int)(test_rand(rng) % (uint64_t)(hi - lo + 1)));
}

static glcv_correlate *make_correlator(int w, int h, glcv_pixel_format f, int no_simd)
{
    glcv_correlate_params p = GLCV_CORRELATE_PARAMS(.width = w, .height = h, .format = f,
                                                    .engine = GLCV_ENGINE_CPU, .no_simd = no_simd,
                                                    .logger = test_logger());
    glcv_correlate *c = NULL;
    CHECK_OK(glcv_correlate_create(&p, &c));
    if (c) { /* the sums asked for: AVX2 unless no_simd, where this processor has AVX2 */
        glcv_correlate_params got;
        CHECK_OK(glcv_correlate_get_params(c, &got));
        int want = no_simd || !glcv_correlate_cpu_avx2();
        CHECK(got.no_simd == want, "no_simd %d asked: the CPU engine runs %s sums", no_simd,
              got.no_simd ? "portable" : "AVX2");
    }
    return c;
}

static void test_api(void)
{
    glcv_correlate *c = NULL;
    CHECK_STATUS(glcv_correlate_create(NULL, &c), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_correlate_params p = GLCV_CORRELATE_PARAMS(.width = 0, .height = 4);
    CHECK_STATUS(glcv_correlate_create(&p, &c), GLCV_ERROR_INVALID_ARGUMENT);
    p = GLCV_CORRELATE_PARAMS(.width = 4, .height = 4, .format = GLCV_PIXEL_RGBA8);
    CHECK_STATUS(glcv_correlate_create(&p, &c), GLCV_ERROR_INVALID_ARGUMENT);
    p = GLCV_CORRELATE_PARAMS(.width = 4, .height = 4, .engine = (glcv_engine_mode)9);
    CHECK_STATUS(glcv_correlate_create(&p, &c), GLCV_ERROR_INVALID_ARGUMENT);
    p = GLCV_CORRELATE_PARAMS(.width = 4, .height = 4, .batch = -1);
    CHECK_STATUS(glcv_correlate_create(&p, &c), GLCV_ERROR_INVALID_ARGUMENT);
    p = GLCV_CORRELATE_PARAMS(.width = 4, .height = 4, .cuda_devices = -2);
    CHECK_STATUS(glcv_correlate_create(&p, &c), GLCV_ERROR_INVALID_ARGUMENT);
    p = GLCV_CORRELATE_PARAMS(.width = 4, .height = 4, .cuda_devices = 17);
    CHECK_STATUS(glcv_correlate_create(&p, &c), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(c == NULL, "out set on error");
    glcv_correlate_destroy(NULL);
    glcv_correlate_destroy(&c);

    c = make_correlator(8, 6, GLCV_PIXEL_GRAY8, 0);
    if (!c)
        return;
    glcv_correlate_params got;
    CHECK_OK(glcv_correlate_get_params(c, &got));
    CHECK(got.engine == GLCV_ENGINE_CPU && got.format == GLCV_PIXEL_GRAY8 && got.batch == 256 && got.cuda_devices == 0,
          "resolved: engine %d format %d batch %d cuda_devices %d", got.engine, got.format, got.batch,
          got.cuda_devices);
    glcv_image a = make(8, 6, GLCV_PIXEL_GRAY8, 0), wrong = make(8, 5, GLCV_PIXEL_GRAY8, 0);
    double r[2];
    CHECK_STATUS(glcv_correlate_images(c, &a, 1, r), GLCV_ERROR_STATE);
    CHECK_STATUS(glcv_correlate_set_reference(c, &wrong), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_STATUS(glcv_correlate_set_reference(c, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_OK(glcv_correlate_set_reference(c, &a));
    CHECK_STATUS(glcv_correlate_images(c, &a, 0, r), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_correlate_images(c, &wrong, 1, r), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_STATUS(glcv_correlate_bank_run(c, r), GLCV_ERROR_STATE);
    CHECK(glcv_correlate_bank_size(c) == 0, "empty bank");
    CHECK(glcv_correlate_bank_size(NULL) == -1, "bank size of NULL");
    const char *missing[] = {"/nonexistent/glcv/none.png"};
    CHECK_STATUS(glcv_correlate_files(c, missing, 1, r), GLCV_ERROR_IO);
    /* flat reference and flat image: 0 */
    CHECK_OK(glcv_correlate_images(c, &a, 1, r));
    CHECK(r[0] == 0.0, "flat images: r = %g", r[0]);
    glcv_engine_mode e;
    CHECK_OK(glcv_engine_mode_parse("cpu", &e));
    CHECK(e == GLCV_ENGINE_CPU, "parse cpu");
    CHECK_STATUS(glcv_engine_mode_parse("fast", &e), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_timing t[4];
    int nt = 0;
    CHECK_OK(glcv_correlate_timings(c, t, 4, &nt));
    CHECK(nt == 1 && strcmp(t[0].name, "correlate") == 0, "CPU timings: %d", nt);
    /* The CUDA kernel's images-per-block switch (private) refuses the CPU engine and other counts. */
    CHECK_STATUS(glcv_correlate_set_images_per_block(c, 2), GLCV_ERROR_UNSUPPORTED);
    CHECK_STATUS(glcv_correlate_set_images_per_block(c, 3), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_correlate_set_images_per_block(NULL, 0), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_correlate_destroy(&c);
    CHECK(c == NULL, "destroy sets NULL");
    free(a.data);
    free(wrong.data);
}

/* Random images of many sizes and strengths of correlation, every path, both SIMD settings. */
static void test_against_reference(void)
{
    static const int sizes[][2] = {{1, 1}, {2, 1}, {1, 7}, {3, 3}, {17, 5}, {31, 33}, {64, 48}, {101, 7}, {320, 240}};
    static const glcv_pixel_format formats[] = {GLCV_PIXEL_GRAY8, GLCV_PIXEL_RGB8};
    uint64_t rng = 2024;
    int cases = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (size_t f = 0; f < 2; f++) {
            int w = sizes[s][0], h = sizes[s][1];
            glcv_pixel_format fmt = formats[f];
            enum { N = 9 };
            glcv_image ref = make(w, h, fmt, 3), imgs[N];
            randomize(&ref, &rng, 0, 255);
            /* inputs in other formats and strides: the correlator converts them */
            for (int i = 0; i < N; i++) {
                glcv_pixel_format in = i % 3 == 1 ? (fmt == GLCV_PIXEL_GRAY8 ? GLCV_PIXEL_GRAY8 : GLCV_PIXEL_BGR8)
                                                  : fmt;
                glcv_image tmp = make(w, h, fmt, i);
                static const double slopes[N] = {1, -1, 0.5, -0.3, 0, 2, 1, 0.9, -0.05};
                related(&ref, &tmp, slopes[i], i == 4 ? 77 : 128.0 * (slopes[i] < 0), 10 * (i % 4), &rng);
                if (i == 8)
                    randomize(&tmp, &rng, 0, 255); /* unrelated */
                imgs[i] = make(w, h, in, 5);
                CHECK_OK(glcv_image_convert(&tmp, &imgs[i]));
                free(tmp.data);
            }
            uint8_t *x = samples_of(&ref, fmt);
            size_t n = (size_t)w * (size_t)h * (size_t)(fmt == GLCV_PIXEL_RGB8 ? 3 : 1);
            double want[N], got[2][N], bank[N];
            for (int i = 0; i < N; i++) {
                uint8_t *y = samples_of(&imgs[i], fmt);
                want[i] = reference_r(x, y, n);
                free(y);
            }
            for (int simd = 0; simd < 2; simd++) {
                glcv_correlate *c = make_correlator(w, h, fmt, simd);
                if (!c)
                    continue;
                CHECK_OK(glcv_correlate_set_reference(c, &ref));
                CHECK_OK(glcv_correlate_images(c, imgs, N, got[simd]));
                CHECK_OK(glcv_correlate_bank_load(c, imgs, N));
                CHECK(glcv_correlate_bank_size(c) == N, "bank size %d", glcv_correlate_bank_size(c));
                CHECK_OK(glcv_correlate_bank_run(c, bank));
                for (int i = 0; i < N; i++) {
                    CHECK(fabs(got[simd][i] - want[i]) <= tolerance, "%dx%d %s image %d (%s): r %.12f, want %.12f", w,
                          h, fmt == GLCV_PIXEL_RGB8 ? "RGB" : "gray", i, simd ? "portable" : "simd", got[simd][i],
                          want[i]);
                    CHECK(bank[i] == got[simd][i], "%dx%d image %d: bank r %.17g, batch r %.17g", w, h, i, bank[i],
                          got[simd][i]);
                }
                glcv_correlate_destroy(&c);
            }
            for (int i = 0; i < N; i++)
                CHECK(got[0][i] == got[1][i], "%dx%d image %d: AVX2 r %.17g, portable r %.17g", w, h, i, got[0][i],
                      got[1][i]);
            cases++;
            free(x);
            free(ref.data);
            for (int i = 0; i < N; i++)
                free(imgs[i].data);
        }
    }
    printf("reference cases: %d sizes x formats, 9 images each\n", cases);
}

/* The paper's size: self = 1, negative = -1, constant = 0; the one-pass float formula is off where
 * glcv is exact. */
static void test_properties(void)
{
    uint64_t rng = 77;
    int w = 320, h = 240;
    glcv_image x = make(w, h, GLCV_PIXEL_GRAY8, 0), imgs[4];
    /* a bright, low-contrast reference: the sums are large, the variances small */
    randomize(&x, &rng, 200, 206);
    for (int i = 0; i < 4; i++)
        imgs[i] = make(w, h, GLCV_PIXEL_GRAY8, 0);
    memcpy(imgs[0].data, x.data, (size_t)w * h);
    for (int i = 0; i < w * h; i++)
        imgs[1].data[i] = (uint8_t)(255 - x.data[i]);
    memset(imgs[2].data, 123, (size_t)w * h);
    related(&x, &imgs[3], 1.0, 0.0, 3, &rng);
    glcv_correlate *c = make_correlator(w, h, GLCV_PIXEL_GRAY8, 0);
    if (!c)
        return;
    CHECK_OK(glcv_correlate_set_reference(c, &x));
    double r[4];
    CHECK_OK(glcv_correlate_images(c, imgs, 4, r));
    CHECK(r[0] == 1.0, "self: r = %.17g", r[0]);
    CHECK(r[1] == -1.0, "negative: r = %.17g", r[1]);
    CHECK(r[2] == 0.0, "constant image: r = %.17g", r[2]);
    double want = reference_r(x.data, imgs[3].data, (size_t)w * h);
    double paper = paper_float_r(x.data, imgs[3].data, (size_t)w * h);
    CHECK(fabs(r[3] - want) <= tolerance, "noisy copy: r %.12f, want %.12f", r[3], want);
    printf("320x240 noisy copy: reference r %.9f, glcv %.9f, paper's float one-pass %.9f\n", want, r[3], paper);
    CHECK(fabs(paper - want) > 1e-3, "the float formula was expected to lose precision here (got %.9f, want %.9f)",
          paper, want);
    glcv_correlate_destroy(&c);
    free(x.data);
    for (int i = 0; i < 4; i++)
        free(imgs[i].data);
}

/* Image files: PNGs written to a temporary folder, read back by glcv_correlate_files. */
static void test_files(void)
{
    char dir[] = "/tmp/glcv_correlate_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECK(0, "mkdtemp failed");
        return;
    }
    uint64_t rng = 5;
    int w = 37, h = 23;
    enum { N = 70 }; /* more than one loading chunk */
    glcv_image ref = make(w, h, GLCV_PIXEL_RGB8, 0), imgs[N];
    randomize(&ref, &rng, 0, 255);
    char *paths[N];
    for (int i = 0; i < N; i++) {
        imgs[i] = make(w, h, GLCV_PIXEL_RGB8, 0);
        related(&ref, &imgs[i], (i % 5) - 2.0, 128, i % 7, &rng);
        paths[i] = malloc(64);
        snprintf(paths[i], 64, "%s/img%03d.png", dir, i);
        CHECK_OK(glcv_image_save_png(paths[i], &imgs[i], NULL));
    }
    glcv_correlate *c = make_correlator(w, h, GLCV_PIXEL_GRAY8, 0);
    if (c) {
        double from_files[N], from_memory[N];
        CHECK_OK(glcv_correlate_set_reference(c, &ref));
        CHECK_OK(glcv_correlate_files(c, (const char *const *)paths, N, from_files));
        CHECK_OK(glcv_correlate_images(c, imgs, N, from_memory));
        int same = 1;
        for (int i = 0; i < N; i++)
            same = same && from_files[i] == from_memory[i];
        CHECK(same, "files and memory differ");
        glcv_correlate_destroy(&c);
    }
    for (int i = 0; i < N; i++) {
        unlink(paths[i]);
        free(paths[i]);
        free(imgs[i].data);
    }
    rmdir(dir);
    free(ref.data);
}

int main(void)
{
    if (glcv_correlate_cpu_avx2())
        printf("AVX2 sums: yes\n");
    else
        printf("AVX2 sums: no, this processor lacks AVX2 (the AVX2 and portable results are both portable)\n");
    test_api();
    test_against_reference();
    test_properties();
    test_files();
    return test_finish("test_correlate");
}
