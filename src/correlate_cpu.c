/* The correlator's CPU implementation: exact integer sums of y, y^2 and x*y per image (AVX2 where
 * the processor has it, else portable C), the images shared by threads (glcv_parallel_for), and r
 * from the sums. The CPU
 * engine and the tests' oracle. */
#include "correlate_internal.h"

#include "core_internal.h"

#include <glcv/image.h>

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CORRELATE_X86 1
#else
#define CORRELATE_X86 0
#endif

#if defined(__SIZEOF_INT128__)
typedef __int128 wide_int;
#else
typedef long double wide_int;
#endif

/* The sums of one image against the reference. */
typedef struct sums {
    uint64_t y, yy, xy;
} sums;

int glcv_correlate_cpu_avx2(void)
{
#if CORRELATE_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}

/* ---- the coefficient ------------------------------------------------------------------------- */

/* r from exact sums; cuda/correlate.cu computes it with the same operations. */
static double pearson(int64_t n, int64_t sx, int64_t sxx, sums s)
{
    wide_int num = (wide_int)n * (wide_int)s.xy - (wide_int)sx * (wide_int)s.y;
    wide_int vx = (wide_int)n * (wide_int)sxx - (wide_int)sx * (wide_int)sx;
    wide_int vy = (wide_int)n * (wide_int)s.yy - (wide_int)s.y * (wide_int)s.y;
    if (vx <= 0 || vy <= 0)
        return 0.0;
    double r = (double)num / sqrt((double)vx * (double)vy);
    return r > 1.0 ? 1.0 : r < -1.0 ? -1.0 : r;
}

/* ---- CPU sums ------------------------------------------------------------------------------- */

static void sums_portable(const uint8_t *y, const uint8_t *x, size_t n, sums *s)
{
    uint64_t sy = 0, syy = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = y[i];
        sy += v;
        syy += v * v;
        sxy += v * x[i];
    }
    s->y += sy;
    s->yy += syy;
    s->xy += sxy;
}

#if CORRELATE_X86
/* 32 samples a step: psadbw sums y into 64-bit lanes, pmaddwd gives y*y and x*y in 32-bit lanes
 * (each lane gains at most 4 * 65025 a step), added into 64 bits every 4096 steps. */
__attribute__((target("avx2"))) static void sums_avx2(const uint8_t *y, const uint8_t *x, size_t n, sums *s)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i acc_y = zero, acc_yy64 = zero, acc_xy64 = zero;
    size_t i = 0;
    while (i + 32 <= n) {
        __m256i acc_yy = zero, acc_xy = zero;
        size_t end = i + 32 * 4096 < n ? i + 32 * 4096 : n;
        for (; i + 32 <= end; i += 32) {
            __m256i vy = _mm256_loadu_si256((const __m256i *)(y + i));
            __m256i vx = _mm256_loadu_si256((const __m256i *)(x + i));
            acc_y = _mm256_add_epi64(acc_y, _mm256_sad_epu8(vy, zero));
            __m256i ylo = _mm256_unpacklo_epi8(vy, zero), yhi = _mm256_unpackhi_epi8(vy, zero);
            __m256i xlo = _mm256_unpacklo_epi8(vx, zero), xhi = _mm256_unpackhi_epi8(vx, zero);
            acc_yy =
                _mm256_add_epi32(acc_yy, _mm256_add_epi32(_mm256_madd_epi16(ylo, ylo), _mm256_madd_epi16(yhi, yhi)));
            acc_xy =
                _mm256_add_epi32(acc_xy, _mm256_add_epi32(_mm256_madd_epi16(ylo, xlo), _mm256_madd_epi16(yhi, xhi)));
        }
        acc_yy64 = _mm256_add_epi64(acc_yy64, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(acc_yy)));
        acc_yy64 = _mm256_add_epi64(acc_yy64, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(acc_yy, 1)));
        acc_xy64 = _mm256_add_epi64(acc_xy64, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(acc_xy)));
        acc_xy64 = _mm256_add_epi64(acc_xy64, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(acc_xy, 1)));
    }
    uint64_t t[4];
    _mm256_storeu_si256((__m256i *)t, acc_y);
    s->y += t[0] + t[1] + t[2] + t[3];
    _mm256_storeu_si256((__m256i *)t, acc_yy64);
    s->yy += t[0] + t[1] + t[2] + t[3];
    _mm256_storeu_si256((__m256i *)t, acc_xy64);
    s->xy += t[0] + t[1] + t[2] + t[3];
    if (i < n)
        sums_portable(y + i, x + i, n - i, s);
}
#endif

static void image_sums(const glcv_correlate *c, const uint8_t *y, const uint8_t *x, size_t n, sums *s)
{
#if CORRELATE_X86
    if (c->avx2) {
        sums_avx2(y, x, n, s);
        return;
    }
#endif
    sums_portable(y, x, n, s);
}

/* Sums of a host image of any format against the reference, row by row (a row is converted into
 * `row` when its format is not the working one). */
static void host_image_sums(const glcv_correlate *c, const glcv_image *img, uint8_t *row, sums *s)
{
    size_t row_samples = (size_t)c->p.width * (size_t)c->channels, stride = glcv_image_stride(img);
    memset(s, 0, sizeof *s);
    for (int y = 0; y < img->height; y++) {
        const uint8_t *src = img->data + (size_t)y * stride;
        if (img->format != c->p.format) {
            glcv_image in = {(uint8_t *)src, img->width, 1, stride, img->format};
            glcv_image out = {row, img->width, 1, row_samples, c->p.format};
            glcv_image_convert(&in, &out);
            src = row;
        }
        image_sums(c, src, c->reference + (size_t)y * row_samples, row_samples, s);
    }
}

void glcv_correlate_pack(const glcv_correlate *c, const glcv_image *img, uint8_t *dst)
{
    glcv_image out = {dst, c->p.width, c->p.height, (size_t)c->p.width * (size_t)c->channels, c->p.format};
    glcv_image_convert(img, &out);
}

/* ---- the engine ---------------------------------------------------------------------------- */

/* A loop over host images or the bank, for glcv_parallel_for. */
typedef struct correlate_loop {
    glcv_correlate *c;
    const glcv_image *images; /* NULL: the bank */
    double *r;
    atomic_int failed;
} correlate_loop;

static void images_range(void *user, int begin, int end)
{
    correlate_loop *l = user;
    glcv_correlate *c = l->c;
    uint8_t *row = malloc((size_t)c->p.width * (size_t)c->channels); /* a row in the reference's format */
    if (!row) {
        atomic_store(&l->failed, 1);
        return;
    }
    for (int i = begin; i < end; i++) {
        sums s;
        host_image_sums(c, &l->images[i], row, &s);
        l->r[i] = pearson((int64_t)c->samples, c->ref_sum, c->ref_sum_sq, s);
    }
    free(row);
}

static void bank_range(void *user, int begin, int end)
{
    correlate_loop *l = user;
    glcv_correlate *c = l->c;
    for (int i = begin; i < end; i++) {
        sums s = {0, 0, 0};
        image_sums(c, c->bank + (size_t)i * c->samples, c->reference, c->samples, &s);
        l->r[i] = pearson((int64_t)c->samples, c->ref_sum, c->ref_sum_sq, s);
    }
}

glcv_status glcv_correlate_cpu_images(glcv_correlate *c, const glcv_image *images, int n, double *r)
{
    double t0 = glcv_now();
    correlate_loop l = {c, images, r, 0};
    glcv_parallel_for(n, c->p.threads, images_range, &l);
    if (atomic_load(&l.failed))
        return glcv_fail(&c->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "correlate: out of memory");
    glcv_timing t = {"correlate", 1e3 * (glcv_now() - t0), 1, GLCV_CLOCK_HOST};
    c->timings[0] = t;
    c->n_timings = 1;
    return GLCV_OK;
}

void glcv_correlate_cpu_bank(glcv_correlate *c, double *r)
{
    double t0 = glcv_now();
    correlate_loop l = {c, NULL, r, 0};
    glcv_parallel_for(c->bank_n, c->p.threads, bank_range, &l);
    glcv_timing t = {"correlate", 1e3 * (glcv_now() - t0), 1, GLCV_CLOCK_HOST};
    c->timings[0] = t;
    c->n_timings = 1;
}
