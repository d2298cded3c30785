/* The media service's one definition of 8-bit 4:2:0 YUV to RGB (private), shared by the CPU path
 * (src/media.c, frames decoded by libavcodec on the CPU) and the GPU path (cuda/media.cu, frames
 * decoded by NVDEC), so that a video decodes to the same RGB bits on both: H.264 and HEVC
 * decoding is exact, and this conversion is integer arithmetic that C and CUDA evaluate alike.
 *
 * Plain C, also valid CUDA C++ (functions are static inline, plus __host__ __device__ under nvcc).
 *
 * Chroma: 4:2:0 with H.264/HEVC's default siting (chroma_sample_loc_type 0): chroma samples sit
 * on the even luma columns and halfway between two luma rows. Each pixel's chroma is the bilinear
 * mix of its two nearest chroma columns (weights 1, 0 on even columns, 1/2, 1/2 on odd ones) and
 * its two nearest chroma rows (3/4, 1/4), samples clamped at the edges; the mix is kept at 8 times
 * the sample scale (no rounding before the matrix).
 * Matrix: BT.601, BT.709 or BT.2020 (non-constant luminance), limited range (Y 16..235, C 16..240)
 * or full range; the result is rounded to the nearest integer and clamped to 0..255.
 *   R = Y' + 2 (1 - Kr) Cr',  B = Y' + 2 (1 - Kb) Cb',
 *   G = Y' - 2 Kb (1 - Kb) / Kg Cb' - 2 Kr (1 - Kr) / Kg Cr'
 * with Y' = (Y - 16) 255/219 and C' = (C - 128) 255/224 in limited range (Y' = Y, C' = C - 128 in
 * full range), in fixed point with 14 fraction bits (coefficients rounded to the nearest 1/16384). */
#ifndef GLCV_MEDIA_YUV_H
#define GLCV_MEDIA_YUV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define GLCV_YUV static __host__ __device__ __forceinline__
#else
#define GLCV_YUV static inline
#endif

/* The colour matrices (the numbers are ours, not a standard's codes). */
enum { GLCV_YUV_BT601 = 0, GLCV_YUV_BT709 = 1, GLCV_YUV_BT2020 = 2, GLCV_YUV_MATRICES = 3 };

/* The fixed-point coefficients of one matrix and range. */
typedef struct glcv_yuv_coeffs {
    int32_t y_offset; /* 16 (limited) or 0 (full) */
    int32_t cy;       /* Y scale: 255/219 or 1, x 2^14 */
    int32_t rv, gu, gv, bu; /* chroma coefficients x 2^14 (gu, gv: subtracted) */
} glcv_yuv_coeffs;

/* Coefficients per matrix for limited [0] and full [1] range: round(x * 16384) of the formulas
 * above with (Kr, Kb) = (0.299, 0.114), (0.2126, 0.0722), (0.2627, 0.0593). */
#define GLCV_YUV_COEFFS_INIT                                                                         \
    {                                                                                               \
        {{16, 19077, 26149, 6419, 13320, 33050}, {0, 16384, 22970, 5638, 11700, 29032}},            \
        {{16, 19077, 29372, 3494, 8731, 34610}, {0, 16384, 25802, 3069, 7670, 30402}},              \
        {{16, 19077, 27503, 3069, 10657, 35091}, {0, 16384, 24160, 2696, 9361, 30825}},             \
    }

GLCV_YUV uint8_t glcv_yuv_clamp(int32_t v)
{
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

/* One pixel from its luma and its chroma mixes at 8 times the sample scale (0..2040). */
GLCV_YUV void glcv_yuv_pixel(const glcv_yuv_coeffs *c, int32_t y, int32_t u8, int32_t v8, uint8_t *r, uint8_t *g,
                             uint8_t *b)
{
    /* luma x 8 to share the chroma's scale; the sum stays below 2^31 (|terms| < 2^26) */
    int32_t yy = c->cy * (y - c->y_offset) * 8;
    int32_t du = u8 - 1024, dv = v8 - 1024;
    const int32_t half = 1 << 16, shift = 17; /* 14 fraction bits + 3 for the chroma's 8 */
    int32_t rr = yy + c->rv * dv + half;
    int32_t gg = yy - c->gu * du - c->gv * dv + half;
    int32_t bb = yy + c->bu * du + half;
    /* negative sums clamp to 0 before the shift, so the shift never sees a negative number */
    *r = glcv_yuv_clamp(rr < 0 ? 0 : rr >> shift);
    *g = glcv_yuv_clamp(gg < 0 ? 0 : gg >> shift);
    *b = glcv_yuv_clamp(bb < 0 ? 0 : bb >> shift);
}

/* The chroma samples pixel (x, y) mixes, in a plane of cw x ch samples: columns i0 and i1, rows j0
 * (the nearer, weight 3/4) and j1 (1/4), clamped at the edges. */
typedef struct glcv_yuv_taps {
    int i0, i1, j0, j1;
} glcv_yuv_taps;

GLCV_YUV glcv_yuv_taps glcv_yuv_chroma_taps(int cw, int ch, int x, int y)
{
    glcv_yuv_taps t;
    int k = y >> 1;
    t.i0 = x >> 1;
    t.i1 = (x & 1) ? ((x >> 1) + 1 < cw ? (x >> 1) + 1 : cw - 1) : t.i0;
    t.j0 = k;
    t.j1 = (y & 1) ? (k + 1 < ch ? k + 1 : ch - 1) : (k > 0 ? k - 1 : 0);
    return t;
}

/* The mix of the four samples (near row: n0, n1; far row: f0, f1): two columns at 1/2 each (an
 * even x takes its own column twice), two rows at 3/4 and 1/4; the weights add up to 8. */
GLCV_YUV int32_t glcv_yuv_mix(int32_t n0, int32_t n1, int32_t f0, int32_t f1)
{
    return 3 * (n0 + n1) + (f0 + f1);
}

/* The chroma mix of pixel (x, y) from a plane of cw x ch samples: sample (i, j) at
 * plane[j * pitch + i * step] (step 1 for a planar U or V plane, 2 for NV12's interleaved UV). */
GLCV_YUV int32_t glcv_yuv_chroma(const uint8_t *plane, size_t pitch, int step, int cw, int ch, int x, int y)
{
    glcv_yuv_taps t = glcv_yuv_chroma_taps(cw, ch, x, y);
    const uint8_t *r0 = plane + (size_t)t.j0 * pitch, *r1 = plane + (size_t)t.j1 * pitch;
    return glcv_yuv_mix(r0[t.i0 * step], r0[t.i1 * step], r1[t.i0 * step], r1[t.i1 * step]);
}

/* A 4:2:0 picture's planes: luma `y` (rows of y_pitch bytes), chroma `u` and `v` (planar, step 1)
 * or interleaved (NV12: u = the UV plane, v = u + 1, step 2), cw = (width + 1) / 2 and
 * ch = (height + 1) / 2 samples, rows of u_pitch and v_pitch bytes. */
typedef struct glcv_yuv_planes {
    const uint8_t *y, *u, *v;
    size_t y_pitch, u_pitch, v_pitch;
    int c_step;
    int width, height;
} glcv_yuv_planes;

/* Pixel (x, y) of a picture as R, G, B. */
GLCV_YUV void glcv_yuv_at(const glcv_yuv_coeffs *c, const glcv_yuv_planes *p, int x, int y, uint8_t *r, uint8_t *g,
                          uint8_t *b)
{
    int cw = (p->width + 1) >> 1, ch = (p->height + 1) >> 1;
    int32_t u8 = glcv_yuv_chroma(p->u, p->u_pitch, p->c_step, cw, ch, x, y);
    int32_t v8 = glcv_yuv_chroma(p->v, p->v_pitch, p->c_step, cw, ch, x, y);
    glcv_yuv_pixel(c, p->y[(size_t)y * p->y_pitch + (size_t)x], u8, v8, r, g, b);
}

#endif
