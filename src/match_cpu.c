/* Template matching on the CPU: portable C, SSE4.1 and AVX2 kernels behind a run-time dispatch,
 * the rows of positions shared by threads (Mendez et al. 2010, sections 3 and 5; glcv_parallel_for).
 *
 * SAD follows the paper's arrangement with (v)mpsadbw: one instruction gives the SADs of a 4-byte
 * template group at 8 consecutive positions per 128-bit lane. Positions go in blocks of 32 (AVX2)
 * or 16 (SSE4.1); for template columns c..c+7, two unaligned loads at x + c and x + c + 8 feed four
 * (v)mpsadbw (template groups c..c+3 and c+4..c+7, selected by the immediate). Columns left over
 * (widths not a multiple of 4, masked pixels) take one load, one byte absolute difference and a
 * widening add each. Partial sums stay in 16 bits for at most 257 pixels (257 * 255 < 65536) and
 * are then added to 32-bit totals. Unaligned loads cost nothing extra on current processors, so
 * the paper's register shuffles that avoid them are not needed.
 *
 * SSD and ZNCC widen bytes to 16 bits and pair two template columns per pmaddwd, LINF keeps a byte
 * maximum. Sums that could exceed 32 bits (very large templates) go through the portable path in
 * 64 bits; the results are the same integers either way. */
#include "match_internal.h"

#include "core_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MATCH_X86 1
#define TARGET_AVX2 __attribute__((target("avx2")))
#define TARGET_SSE41 __attribute__((target("sse4.1")))
#else
#define MATCH_X86 0
#endif

#if defined(__SIZEOF_INT128__)
typedef __int128 wide_int;
#else
typedef long double wide_int; /* not exact beyond 64 bits; only very large templates get there */
#endif

/* 16-bit partial sums hold at most this many absolute differences of 255. */
#define SAD16_PIXELS 257

/* ---- run-time dispatch ------------------------------------------------------------------- */

glcv_match_isa glcv_match_cpu_best_isa(void)
{
#if MATCH_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        return GLCV_MATCH_ISA_AVX2;
    if (__builtin_cpu_supports("sse4.1"))
        return GLCV_MATCH_ISA_SSE41;
#endif
    return GLCV_MATCH_ISA_PORTABLE;
}

glcv_match_store glcv_match_store_for(glcv_match_metric metric, int64_t count, int channels)
{
    if (metric == GLCV_MATCH_ZNCC)
        return GLCV_MATCH_STORE_F32;
    if (metric == GLCV_MATCH_LINF)
        return GLCV_MATCH_STORE_U32;
    uint64_t per = metric == GLCV_MATCH_SSD ? 65025u : 255u;
    return (uint64_t)count * (uint64_t)channels * per > UINT32_MAX ? GLCV_MATCH_STORE_U64 : GLCV_MATCH_STORE_U32;
}

/* ---- planes and templates ------------------------------------------------------------------ */

glcv_status glcv_match_planes_alloc(glcv_match_planes *planes, int width, int height, int channels)
{
    memset(planes, 0, sizeof *planes);
    size_t pitch = ((size_t)width + GLCV_MATCH_ROW_PAD + 63) & ~(size_t)63;
    size_t plane_size = pitch * (size_t)height;
    size_t bytes = plane_size * (size_t)channels + 64;
    bytes = (bytes + 63) & ~(size_t)63;
    planes->data = aligned_alloc(64, bytes);
    if (!planes->data)
        return GLCV_ERROR_OUT_OF_MEMORY;
    memset(planes->data, 0, bytes);
    planes->width = width;
    planes->height = height;
    planes->channels = channels;
    planes->pitch = pitch;
    planes->plane_size = plane_size;
    return GLCV_OK;
}

void glcv_match_planes_free(glcv_match_planes *planes)
{
    free(planes->data);
    memset(planes, 0, sizeof *planes);
}

void glcv_match_planes_fill(glcv_match_planes *planes, const uint8_t *pixels, size_t stride)
{
    int w = planes->width, h = planes->height, n = planes->channels;
    for (int y = 0; y < h; y++) {
        const uint8_t *src = pixels + (size_t)y * stride;
        uint8_t *dst = planes->data + (size_t)y * planes->pitch;
        if (n == 1) {
            memcpy(dst, src, (size_t)w);
            continue;
        }
        for (int c = 0; c < n; c++) {
            uint8_t *d = dst + (size_t)c * planes->plane_size;
            const uint8_t *s = src + c;
            for (int x = 0; x < w; x++)
                d[x] = s[(size_t)x * (size_t)n];
        }
    }
}

glcv_status glcv_match_tmpl_init(glcv_match_tmpl *t, const uint8_t *pixels, size_t stride, int width, int height,
                                 int channels, const uint8_t *mask, size_t mask_stride)
{
    memset(t, 0, sizeof *t);
    size_t area = (size_t)width * (size_t)height;
    t->width = width;
    t->height = height;
    t->channels = channels;
    t->pixels = malloc(area * (size_t)channels);
    t->cols = malloc(area * sizeof *t->cols);
    t->ncols = malloc((size_t)height * sizeof *t->ncols);
    if (mask)
        t->mask = malloc(area);
    if (!t->pixels || !t->cols || !t->ncols || (mask && !t->mask)) {
        glcv_match_tmpl_free(t);
        return GLCV_ERROR_OUT_OF_MEMORY;
    }
    for (int r = 0; r < height; r++) {
        const uint8_t *src = pixels + (size_t)r * stride;
        const uint8_t *m = mask ? mask + (size_t)r * mask_stride : NULL;
        int n = 0;
        for (int i = 0; i < width; i++) {
            int used = !m || m[i] != 0;
            if (t->mask)
                t->mask[(size_t)r * (size_t)width + (size_t)i] = (uint8_t)used;
            if (used)
                t->cols[(size_t)r * (size_t)width + (size_t)n++] = i;
            for (int c = 0; c < channels; c++) {
                uint8_t v = src[(size_t)i * (size_t)channels + (size_t)c];
                t->pixels[(size_t)c * area + (size_t)r * (size_t)width + (size_t)i] = v;
                if (used) {
                    t->sum[c] += v;
                    t->sum_sq[c] += (int64_t)v * v;
                }
            }
        }
        t->ncols[r] = n;
        t->count += n;
    }
    if (t->count == 0) {
        glcv_match_tmpl_free(t);
        return GLCV_ERROR_INVALID_ARGUMENT;
    }
    wide_int var = 0;
    for (int c = 0; c < channels; c++)
        var += (wide_int)t->count * t->sum_sq[c] - (wide_int)t->sum[c] * t->sum[c];
    t->var = (double)var;
    return GLCV_OK;
}

void glcv_match_tmpl_free(glcv_match_tmpl *t)
{
    free(t->pixels);
    free(t->mask);
    free(t->cols);
    free(t->ncols);
    memset(t, 0, sizeof *t);
}

void glcv_match_map_fill_worst(glcv_match_map *map)
{
    size_t n = (size_t)map->width * (size_t)map->height;
    switch (map->store) {
    case GLCV_MATCH_STORE_U32: memset(map->data, 0xFF, n * sizeof(uint32_t)); break;
    case GLCV_MATCH_STORE_U64: memset(map->data, 0xFF, n * sizeof(uint64_t)); break;
    case GLCV_MATCH_STORE_F32: {
        float *f = map->data;
        for (size_t i = 0; i < n; i++)
            f[i] = -FLT_MAX;
        break;
    }
    }
}

float glcv_match_zncc_value(double num, double var_i, double var_t)
{
    if (!(var_i > 0.0) || !(var_t > 0.0))
        return 0.0f;
    double r = num / sqrt(var_i * var_t);
    if (r > 1.0)
        r = 1.0;
    if (r < -1.0)
        r = -1.0;
    return (float)r;
}

/* ---- one run -------------------------------------------------------------------------------- */

/* A SIMD operation on one template row of one channel: `offset` is the byte distance from the
 * image pixel under the template's top-left corner to the first image byte it reads. */
typedef struct sad_op {
    ptrdiff_t offset;
    uint64_t bytes; /* template bytes: 8 (pair), 4 (group) or 1 (column) */
    int flush;      /* add the 16-bit partial sums to the totals after this op */
} sad_op;

/* Two used template columns (or one, with offset_b < 0) of one row and channel. */
typedef struct pair_op {
    ptrdiff_t offset_a, offset_b;
    int t_a, t_b;
} pair_op;

typedef struct run_ctx {
    const glcv_match_planes *planes;
    const glcv_match_tmpl *t;
    glcv_match_metric metric;
    glcv_match_region region;
    glcv_match_map *map;
    /* SAD ops, in the order pairs, groups, columns */
    sad_op *sad;
    int n_pair, n_group, n_col;
    /* column ops per channel (SSD, LINF, ZNCC): pairs[c * per_channel ... + count[c]] */
    pair_op *pairs;
    int pairs_per_channel;
    int *pair_count;
} run_ctx;

static const uint8_t *plane_row(const glcv_match_planes *p, int c, int y)
{
    return p->data + (size_t)c * p->plane_size + (size_t)y * p->pitch;
}

static const uint8_t *tmpl_row(const glcv_match_tmpl *t, int c, int r)
{
    return t->pixels + ((size_t)c * (size_t)t->height + (size_t)r) * (size_t)t->width;
}

/* ---- portable C ----------------------------------------------------------------------------- */

static void store_distance(const run_ctx *ctx, int x, int y, uint64_t v)
{
    size_t i = (size_t)y * (size_t)ctx->map->width + (size_t)x;
    if (ctx->map->store == GLCV_MATCH_STORE_U64)
        ((uint64_t *)ctx->map->data)[i] = v;
    else
        ((uint32_t *)ctx->map->data)[i] = (uint32_t)v;
}

static void row_distance_portable(const run_ctx *ctx, int y)
{
    const glcv_match_tmpl *t = ctx->t;
    const glcv_match_planes *p = ctx->planes;
    for (int x = ctx->region.x0; x < ctx->region.x1; x++) {
        uint64_t sum = 0;
        int worst = 0;
        for (int c = 0; c < t->channels; c++) {
            for (int r = 0; r < t->height; r++) {
                const uint8_t *img = plane_row(p, c, y + r) + x;
                const uint8_t *tr = tmpl_row(t, c, r);
                const int *cols = t->cols + (size_t)r * (size_t)t->width;
                int n = t->ncols[r];
                uint64_t row = 0;
                switch (ctx->metric) {
                case GLCV_MATCH_SSD:
                    for (int k = 0; k < n; k++) {
                        int d = img[cols[k]] - tr[cols[k]];
                        row += (uint64_t)(d * d);
                    }
                    break;
                case GLCV_MATCH_LINF:
                    for (int k = 0; k < n; k++) {
                        int d = abs(img[cols[k]] - tr[cols[k]]);
                        if (d > worst)
                            worst = d;
                    }
                    break;
                default:
                    for (int k = 0; k < n; k++)
                        row += (uint64_t)abs(img[cols[k]] - tr[cols[k]]);
                    break;
                }
                sum += row;
            }
        }
        store_distance(ctx, x, y, ctx->metric == GLCV_MATCH_LINF ? (uint64_t)worst : sum);
    }
}

static void row_zncc_portable(const run_ctx *ctx, int y)
{
    const glcv_match_tmpl *t = ctx->t;
    const glcv_match_planes *p = ctx->planes;
    float *out = (float *)ctx->map->data + (size_t)y * (size_t)ctx->map->width;
    for (int x = ctx->region.x0; x < ctx->region.x1; x++) {
        wide_int num = 0, var = 0;
        for (int c = 0; c < t->channels; c++) {
            uint64_t s_it = 0, s_i = 0, s_ii = 0;
            for (int r = 0; r < t->height; r++) {
                const uint8_t *img = plane_row(p, c, y + r) + x;
                const uint8_t *tr = tmpl_row(t, c, r);
                const int *cols = t->cols + (size_t)r * (size_t)t->width;
                for (int k = 0; k < t->ncols[r]; k++) {
                    unsigned v = img[cols[k]];
                    s_it += (uint64_t)(v * tr[cols[k]]);
                    s_i += v;
                    s_ii += (uint64_t)(v * v);
                }
            }
            num += (wide_int)t->count * (wide_int)s_it - (wide_int)s_i * (wide_int)t->sum[c];
            var += (wide_int)t->count * (wide_int)s_ii - (wide_int)s_i * (wide_int)s_i;
        }
        out[x] = glcv_match_zncc_value((double)num, (double)var, t->var);
    }
}

/* ---- SSE4.1 --------------------------------------------------------------------------------- */

#if MATCH_X86

TARGET_SSE41 static void sad_store_sse41(const run_ctx *ctx, int x, int y, __m128i t0, __m128i t1, __m128i t2,
                                         __m128i t3)
{
    uint32_t *out = (uint32_t *)ctx->map->data + (size_t)y * (size_t)ctx->map->width + (size_t)x;
    int n = ctx->region.x1 - x;
    if (n >= 16) {
        _mm_storeu_si128((__m128i *)out, t0);
        _mm_storeu_si128((__m128i *)(out + 4), t1);
        _mm_storeu_si128((__m128i *)(out + 8), t2);
        _mm_storeu_si128((__m128i *)(out + 12), t3);
        return;
    }
    uint32_t tmp[16];
    _mm_storeu_si128((__m128i *)tmp, t0);
    _mm_storeu_si128((__m128i *)(tmp + 4), t1);
    _mm_storeu_si128((__m128i *)(tmp + 8), t2);
    _mm_storeu_si128((__m128i *)(tmp + 12), t3);
    memcpy(out, tmp, (size_t)n * sizeof *out);
}

/* SAD of 16 positions per step: acc0 holds positions 0-7, acc1 8-15 (16-bit partial sums). */
TARGET_SSE41 static void row_sad_sse41(const run_ctx *ctx, int y)
{
    const uint8_t *base = plane_row(ctx->planes, 0, y);
    const sad_op *pairs = ctx->sad, *groups = pairs + ctx->n_pair, *cols = groups + ctx->n_group;
    const __m128i zero = _mm_setzero_si128();
    for (int x = ctx->region.x0; x < ctx->region.x1; x += 16) {
        const uint8_t *at = base + x;
        __m128i acc0 = zero, acc1 = zero, t0 = zero, t1 = zero, t2 = zero, t3 = zero;
#define SAD_FLUSH_SSE41()                                                                                         \
    do {                                                                                                          \
        t0 = _mm_add_epi32(t0, _mm_cvtepu16_epi32(acc0));                                                        \
        t1 = _mm_add_epi32(t1, _mm_cvtepu16_epi32(_mm_srli_si128(acc0, 8)));                                     \
        t2 = _mm_add_epi32(t2, _mm_cvtepu16_epi32(acc1));                                                        \
        t3 = _mm_add_epi32(t3, _mm_cvtepu16_epi32(_mm_srli_si128(acc1, 8)));                                     \
        acc0 = acc1 = zero;                                                                                       \
    } while (0)
        for (int i = 0; i < ctx->n_pair; i++) {
            const uint8_t *p = at + pairs[i].offset;
            __m128i tb = _mm_set1_epi64x((long long)pairs[i].bytes);
            __m128i l0 = _mm_loadu_si128((const __m128i *)p);
            __m128i l1 = _mm_loadu_si128((const __m128i *)(p + 8));
            acc0 = _mm_add_epi16(acc0, _mm_mpsadbw_epu8(l0, tb, 0));
            acc0 = _mm_add_epi16(acc0, _mm_mpsadbw_epu8(l0, tb, 5));
            acc1 = _mm_add_epi16(acc1, _mm_mpsadbw_epu8(l1, tb, 0));
            acc1 = _mm_add_epi16(acc1, _mm_mpsadbw_epu8(l1, tb, 5));
            if (pairs[i].flush)
                SAD_FLUSH_SSE41();
        }
        for (int i = 0; i < ctx->n_group; i++) {
            const uint8_t *p = at + groups[i].offset;
            __m128i tb = _mm_set1_epi32((int)(uint32_t)groups[i].bytes);
            acc0 = _mm_add_epi16(acc0, _mm_mpsadbw_epu8(_mm_loadu_si128((const __m128i *)p), tb, 0));
            acc1 = _mm_add_epi16(acc1, _mm_mpsadbw_epu8(_mm_loadu_si128((const __m128i *)(p + 8)), tb, 0));
            if (groups[i].flush)
                SAD_FLUSH_SSE41();
        }
        for (int i = 0; i < ctx->n_col; i++) {
            __m128i l = _mm_loadu_si128((const __m128i *)(at + cols[i].offset));
            __m128i tb = _mm_set1_epi8((char)cols[i].bytes);
            __m128i ad = _mm_or_si128(_mm_subs_epu8(l, tb), _mm_subs_epu8(tb, l));
            acc0 = _mm_add_epi16(acc0, _mm_unpacklo_epi8(ad, zero));
            acc1 = _mm_add_epi16(acc1, _mm_unpackhi_epi8(ad, zero));
            if (cols[i].flush)
                SAD_FLUSH_SSE41();
        }
#undef SAD_FLUSH_SSE41
        sad_store_sse41(ctx, x, y, t0, t1, t2, t3);
    }
}

/* ---- AVX2 ----------------------------------------------------------------------------------- */

TARGET_AVX2 static void store_u32x32_avx2(const run_ctx *ctx, int x, int y, __m256i v0, __m256i v1, __m256i v2,
                                          __m256i v3, int block)
{
    uint32_t *out = (uint32_t *)ctx->map->data + (size_t)y * (size_t)ctx->map->width + (size_t)x;
    int n = ctx->region.x1 - x;
    uint32_t tmp[32];
    uint32_t *dst = n >= block ? out : tmp;
    _mm256_storeu_si256((__m256i *)dst, v0);
    _mm256_storeu_si256((__m256i *)(dst + 8), v1);
    if (block > 16) {
        _mm256_storeu_si256((__m256i *)(dst + 16), v2);
        _mm256_storeu_si256((__m256i *)(dst + 24), v3);
    }
    if (dst == tmp)
        memcpy(out, tmp, (size_t)n * sizeof *out);
}

/* SAD of 32 positions per step. A 256-bit load at x + c gives lane 0 = bytes x+c.., lane 1 =
 * x+c+16..: vmpsadbw yields positions 0-7 and 16-23 (acc0); the load at x + c + 8 yields 8-15 and
 * 24-31 (acc1). */
TARGET_AVX2 static void row_sad_avx2(const run_ctx *ctx, int y)
{
    const uint8_t *base = plane_row(ctx->planes, 0, y);
    const sad_op *pairs = ctx->sad, *groups = pairs + ctx->n_pair, *cols = groups + ctx->n_group;
    const __m256i zero = _mm256_setzero_si256();
    for (int x = ctx->region.x0; x < ctx->region.x1; x += 32) {
        const uint8_t *at = base + x;
        __m256i acc0 = zero, acc1 = zero, t0 = zero, t1 = zero, t2 = zero, t3 = zero;
#define SAD_FLUSH_AVX2()                                                                                          \
    do {                                                                                                          \
        t0 = _mm256_add_epi32(t0, _mm256_cvtepu16_epi32(_mm256_castsi256_si128(acc0)));                           \
        t1 = _mm256_add_epi32(t1, _mm256_cvtepu16_epi32(_mm256_castsi256_si128(acc1)));                           \
        t2 = _mm256_add_epi32(t2, _mm256_cvtepu16_epi32(_mm256_extracti128_si256(acc0, 1)));                      \
        t3 = _mm256_add_epi32(t3, _mm256_cvtepu16_epi32(_mm256_extracti128_si256(acc1, 1)));                      \
        acc0 = acc1 = zero;                                                                                       \
    } while (0)
        for (int i = 0; i < ctx->n_pair; i++) {
            const uint8_t *p = at + pairs[i].offset;
            __m256i tb = _mm256_set1_epi64x((long long)pairs[i].bytes);
            __m256i l0 = _mm256_loadu_si256((const __m256i *)p);
            __m256i l1 = _mm256_loadu_si256((const __m256i *)(p + 8));
            acc0 = _mm256_add_epi16(acc0, _mm256_mpsadbw_epu8(l0, tb, 0));
            acc0 = _mm256_add_epi16(acc0, _mm256_mpsadbw_epu8(l0, tb, 45));
            acc1 = _mm256_add_epi16(acc1, _mm256_mpsadbw_epu8(l1, tb, 0));
            acc1 = _mm256_add_epi16(acc1, _mm256_mpsadbw_epu8(l1, tb, 45));
            if (pairs[i].flush)
                SAD_FLUSH_AVX2();
        }
        for (int i = 0; i < ctx->n_group; i++) {
            const uint8_t *p = at + groups[i].offset;
            __m256i tb = _mm256_set1_epi32((int)(uint32_t)groups[i].bytes);
            acc0 = _mm256_add_epi16(acc0, _mm256_mpsadbw_epu8(_mm256_loadu_si256((const __m256i *)p), tb, 0));
            acc1 = _mm256_add_epi16(acc1, _mm256_mpsadbw_epu8(_mm256_loadu_si256((const __m256i *)(p + 8)), tb, 0));
            if (groups[i].flush)
                SAD_FLUSH_AVX2();
        }
        for (int i = 0; i < ctx->n_col; i++) {
            __m256i l = _mm256_loadu_si256((const __m256i *)(at + cols[i].offset));
            __m256i tb = _mm256_set1_epi8((char)cols[i].bytes);
            __m256i ad = _mm256_or_si256(_mm256_subs_epu8(l, tb), _mm256_subs_epu8(tb, l));
            acc0 = _mm256_add_epi16(acc0, _mm256_unpacklo_epi8(ad, zero));
            acc1 = _mm256_add_epi16(acc1, _mm256_unpackhi_epi8(ad, zero));
            if (cols[i].flush)
                SAD_FLUSH_AVX2();
        }
#undef SAD_FLUSH_AVX2
        store_u32x32_avx2(ctx, x, y, t0, t1, t2, t3, 32);
    }
}

/* SSD of 16 positions per step: bytes widened to 16 bits (lane 0 = positions 0-7, lane 1 = 8-15),
 * two template columns interleaved per 32-bit slot so that pmaddwd adds their squares for the same
 * position: `lo` holds positions 0-3 and 8-11, `hi` 4-7 and 12-15. */
TARGET_AVX2 static void row_ssd_avx2(const run_ctx *ctx, int y)
{
    const glcv_match_tmpl *t = ctx->t;
    const __m256i zero = _mm256_setzero_si256();
    for (int x = ctx->region.x0; x < ctx->region.x1; x += 16) {
        __m256i lo = zero, hi = zero;
        for (int c = 0; c < t->channels; c++) {
            const uint8_t *at = plane_row(ctx->planes, c, y) + x;
            const pair_op *ops = ctx->pairs + (size_t)c * (size_t)ctx->pairs_per_channel;
            for (int i = 0; i < ctx->pair_count[c]; i++) {
                __m256i a = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(at + ops[i].offset_a)));
                __m256i da = _mm256_abs_epi16(_mm256_sub_epi16(a, _mm256_set1_epi16((short)ops[i].t_a)));
                __m256i db = zero;
                if (ops[i].offset_b >= 0) {
                    __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(at + ops[i].offset_b)));
                    db = _mm256_abs_epi16(_mm256_sub_epi16(b, _mm256_set1_epi16((short)ops[i].t_b)));
                }
                __m256i l = _mm256_unpacklo_epi16(da, db), h = _mm256_unpackhi_epi16(da, db);
                lo = _mm256_add_epi32(lo, _mm256_madd_epi16(l, l));
                hi = _mm256_add_epi32(hi, _mm256_madd_epi16(h, h));
            }
        }
        __m256i v0 = _mm256_permute2x128_si256(lo, hi, 0x20), v1 = _mm256_permute2x128_si256(lo, hi, 0x31);
        store_u32x32_avx2(ctx, x, y, v0, v1, zero, zero, 16);
    }
}

/* LINF of 32 positions per step: a byte maximum of the absolute differences. */
TARGET_AVX2 static void row_linf_avx2(const run_ctx *ctx, int y)
{
    const glcv_match_tmpl *t = ctx->t;
    const __m256i zero = _mm256_setzero_si256();
    for (int x = ctx->region.x0; x < ctx->region.x1; x += 32) {
        __m256i worst = zero;
        for (int c = 0; c < t->channels; c++) {
            const uint8_t *at = plane_row(ctx->planes, c, y) + x;
            const pair_op *ops = ctx->pairs + (size_t)c * (size_t)ctx->pairs_per_channel;
            for (int i = 0; i < ctx->pair_count[c]; i++) {
                __m256i l = _mm256_loadu_si256((const __m256i *)(at + ops[i].offset_a));
                __m256i tb = _mm256_set1_epi8((char)ops[i].t_a);
                worst = _mm256_max_epu8(worst, _mm256_or_si256(_mm256_subs_epu8(l, tb), _mm256_subs_epu8(tb, l)));
                if (ops[i].offset_b >= 0) {
                    l = _mm256_loadu_si256((const __m256i *)(at + ops[i].offset_b));
                    tb = _mm256_set1_epi8((char)ops[i].t_b);
                    worst = _mm256_max_epu8(worst, _mm256_or_si256(_mm256_subs_epu8(l, tb), _mm256_subs_epu8(tb, l)));
                }
            }
        }
        __m128i w0 = _mm256_castsi256_si128(worst), w1 = _mm256_extracti128_si256(worst, 1);
        store_u32x32_avx2(ctx, x, y, _mm256_cvtepu8_epi32(w0), _mm256_cvtepu8_epi32(_mm_srli_si128(w0, 8)),
                          _mm256_cvtepu8_epi32(w1), _mm256_cvtepu8_epi32(_mm_srli_si128(w1, 8)), 32);
    }
}

/* ZNCC of 16 positions per step: per channel, the sums of I*T, I and I*I in 32 bits (exact while
 * count <= GLCV_MATCH_ZNCC_NARROW_MAX), two template columns per pmaddwd as for SSD; then the
 * channel's terms in 64 bits. */
TARGET_AVX2 static void row_zncc_avx2(const run_ctx *ctx, int y)
{
    const glcv_match_tmpl *t = ctx->t;
    const __m256i zero = _mm256_setzero_si256(), ones = _mm256_set1_epi16(1);
    float *out = (float *)ctx->map->data + (size_t)y * (size_t)ctx->map->width;
    for (int x = ctx->region.x0; x < ctx->region.x1; x += 16) {
        int64_t num[16] = {0}, var[16] = {0};
        for (int c = 0; c < t->channels; c++) {
            const uint8_t *at = plane_row(ctx->planes, c, y) + x;
            const pair_op *ops = ctx->pairs + (size_t)c * (size_t)ctx->pairs_per_channel;
            __m256i it_lo = zero, it_hi = zero, i_lo = zero, i_hi = zero, ii_lo = zero, ii_hi = zero;
            for (int i = 0; i < ctx->pair_count[c]; i++) {
                __m256i a = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(at + ops[i].offset_a)));
                __m256i b = zero;
                if (ops[i].offset_b >= 0)
                    b = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(at + ops[i].offset_b)));
                __m256i tp = _mm256_set1_epi32(ops[i].t_a | ops[i].t_b << 16);
                __m256i l = _mm256_unpacklo_epi16(a, b), h = _mm256_unpackhi_epi16(a, b);
                it_lo = _mm256_add_epi32(it_lo, _mm256_madd_epi16(l, tp));
                it_hi = _mm256_add_epi32(it_hi, _mm256_madd_epi16(h, tp));
                i_lo = _mm256_add_epi32(i_lo, _mm256_madd_epi16(l, ones));
                i_hi = _mm256_add_epi32(i_hi, _mm256_madd_epi16(h, ones));
                ii_lo = _mm256_add_epi32(ii_lo, _mm256_madd_epi16(l, l));
                ii_hi = _mm256_add_epi32(ii_hi, _mm256_madd_epi16(h, h));
            }
            uint32_t s_it[16], s_i[16], s_ii[16];
            _mm256_storeu_si256((__m256i *)s_it, _mm256_permute2x128_si256(it_lo, it_hi, 0x20));
            _mm256_storeu_si256((__m256i *)(s_it + 8), _mm256_permute2x128_si256(it_lo, it_hi, 0x31));
            _mm256_storeu_si256((__m256i *)s_i, _mm256_permute2x128_si256(i_lo, i_hi, 0x20));
            _mm256_storeu_si256((__m256i *)(s_i + 8), _mm256_permute2x128_si256(i_lo, i_hi, 0x31));
            _mm256_storeu_si256((__m256i *)s_ii, _mm256_permute2x128_si256(ii_lo, ii_hi, 0x20));
            _mm256_storeu_si256((__m256i *)(s_ii + 8), _mm256_permute2x128_si256(ii_lo, ii_hi, 0x31));
            int64_t n = t->count, st = t->sum[c];
            for (int j = 0; j < 16; j++) {
                num[j] += n * (int64_t)s_it[j] - (int64_t)s_i[j] * st;
                var[j] += n * (int64_t)s_ii[j] - (int64_t)s_i[j] * (int64_t)s_i[j];
            }
        }
        int n = ctx->region.x1 - x < 16 ? ctx->region.x1 - x : 16;
        for (int j = 0; j < n; j++)
            out[x + j] = glcv_match_zncc_value((double)num[j], (double)var[j], t->var);
    }
}

#endif /* MATCH_X86 */

/* ---- op lists ------------------------------------------------------------------------------- */

static uint64_t load_bytes(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

/* SAD ops: runs of used columns are cut into 8-pixel pairs of groups, 4-pixel groups and single
 * columns; the flush flags keep every 16-bit partial sum below SAD16_PIXELS pixels. */
static int build_sad_ops(run_ctx *ctx)
{
    const glcv_match_tmpl *t = ctx->t;
    size_t cap = (size_t)t->channels * (size_t)t->height * (size_t)t->width;
    sad_op *all = malloc(cap * sizeof *all);
    if (!all)
        return 0;
    /* three passes over the template, one per op kind, so that ops of a kind are contiguous */
    int n[3] = {0, 0, 0};
    size_t k = 0;
    int pending = 0; /* pixels in the partial sums since the last flush */
    for (int kind = 0; kind < 3; kind++) {
        for (int c = 0; c < t->channels; c++) {
            for (int r = 0; r < t->height; r++) {
                const uint8_t *tr = tmpl_row(t, c, r);
                const uint8_t *m = t->mask ? t->mask + (size_t)r * (size_t)t->width : NULL;
                int i = 0;
                while (i < t->width) {
                    if (m && !m[i]) {
                        i++;
                        continue;
                    }
                    int run = 1;
                    while (i + run < t->width && (!m || m[i + run]))
                        run++;
                    int pos = i;
                    while (pos < i + run) {
                        int left = i + run - pos, size = left >= 8 ? 8 : left >= 4 ? 4 : 1;
                        int op_kind = size == 8 ? 0 : size == 4 ? 1 : 2;
                        if (op_kind == kind) {
                            if (pending + size > SAD16_PIXELS && k > 0) {
                                all[k - 1].flush = 1;
                                pending = 0;
                            }
                            all[k].offset = (ptrdiff_t)((size_t)c * ctx->planes->plane_size +
                                                        (size_t)r * ctx->planes->pitch + (size_t)pos);
                            all[k].bytes = load_bytes(tr + pos, size);
                            all[k].flush = 0;
                            k++;
                            n[kind]++;
                            pending += size;
                        }
                        pos += size;
                    }
                    i += run;
                }
            }
        }
    }
    if (k > 0)
        all[k - 1].flush = 1;
    ctx->sad = all;
    ctx->n_pair = n[0];
    ctx->n_group = n[1];
    ctx->n_col = n[2];
    return 1;
}

/* Column ops: the used columns of every row, two by two. */
static int build_pair_ops(run_ctx *ctx)
{
    const glcv_match_tmpl *t = ctx->t;
    int per = (int)((t->count + 1) / 2 + t->height);
    ctx->pairs = malloc((size_t)per * (size_t)t->channels * sizeof *ctx->pairs);
    ctx->pair_count = calloc((size_t)t->channels, sizeof *ctx->pair_count);
    if (!ctx->pairs || !ctx->pair_count)
        return 0;
    ctx->pairs_per_channel = per;
    for (int c = 0; c < t->channels; c++) {
        pair_op *ops = ctx->pairs + (size_t)c * (size_t)per;
        int n = 0;
        int have = 0;
        for (int r = 0; r < t->height; r++) {
            const uint8_t *tr = tmpl_row(t, c, r);
            const int *cols = t->cols + (size_t)r * (size_t)t->width;
            for (int k = 0; k < t->ncols[r]; k++) {
                ptrdiff_t offset = (ptrdiff_t)((size_t)r * ctx->planes->pitch + (size_t)cols[k]);
                if (!have) {
                    ops[n].offset_a = offset;
                    ops[n].t_a = tr[cols[k]];
                    ops[n].offset_b = -1;
                    ops[n].t_b = 0;
                    have = 1;
                } else {
                    ops[n].offset_b = offset;
                    ops[n].t_b = tr[cols[k]];
                    n++;
                    have = 0;
                }
            }
        }
        if (have)
            n++;
        ctx->pair_count[c] = n;
    }
    return 1;
}

typedef void (*row_fn)(const run_ctx *ctx, int y);

/* The rows of a run, for glcv_parallel_for. */
typedef struct run_rows {
    const run_ctx *ctx;
    row_fn fn;
} run_rows;

static void run_range(void *user, int begin, int end)
{
    const run_rows *r = user;
    for (int i = begin; i < end; i++)
        r->fn(r->ctx, r->ctx->region.y0 + i);
}

void glcv_match_cpu_run(const glcv_match_planes *planes, const glcv_match_tmpl *t, glcv_match_metric metric,
                        glcv_match_region region, glcv_match_map *map, glcv_match_isa isa, int threads)
{
    if (region.x1 <= region.x0 || region.y1 <= region.y0)
        return;
    run_ctx ctx = {planes, t, metric, region, map, NULL, 0, 0, 0, NULL, 0, NULL};
    row_fn fn = metric == GLCV_MATCH_ZNCC ? row_zncc_portable : row_distance_portable;
#if MATCH_X86
    int narrow = map->store != GLCV_MATCH_STORE_U64 &&
                 (metric != GLCV_MATCH_ZNCC || t->count <= GLCV_MATCH_ZNCC_NARROW_MAX);
    if (narrow && isa >= GLCV_MATCH_ISA_SSE41 && metric == GLCV_MATCH_SAD) {
        if (build_sad_ops(&ctx))
            fn = isa == GLCV_MATCH_ISA_AVX2 ? row_sad_avx2 : row_sad_sse41;
    } else if (narrow && isa == GLCV_MATCH_ISA_AVX2) {
        if (build_pair_ops(&ctx))
            fn = metric == GLCV_MATCH_SSD ? row_ssd_avx2 : metric == GLCV_MATCH_LINF ? row_linf_avx2 : row_zncc_avx2;
    }
#else
    (void)isa;
#endif
    /* Rows in small chunks taken in turn rather than the paper's static halves, on as many threads
     * as the work pays for: on a shared machine a thread that loses its core for a while then
     * delays only its current chunk, and a short match runs on the calling thread alone. */
    run_rows rows = {&ctx, fn};
    glcv_parallel_for(region.y1 - region.y0, threads, run_range, &rows);
    free(ctx.sad);
    free(ctx.pairs);
    free(ctx.pair_count);
}
