/* The C boundary of the template-matching kernels (cuda/match.cu), shared with their host side
 * (src/match_cuda.c, which owns the memory, streams and events): one params struct per kernel,
 * passed by value, and an extern "C" launcher that queues it on a stream and returns a
 * cudaError_t (as int; 0 = cudaSuccess). Pointers in the params are device pointers unless a
 * field says otherwise. */
#ifndef GLCV_MATCH_KERNELS_H
#define GLCV_MATCH_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Words of the constant-memory pool that holds templates (56 KiB per device). */
#define GLCV_CUDA_MATCH_CONST_WORDS 14336

/* Device planes: `channels` planes of `height` rows of `pitch` bytes, plane c at
 * planes + c * plane_size. The matching kernel reads up to 15 bytes past a row's last pixel and
 * whole 256-byte tiles: pitch >= round_up(width, 256) + 256, a multiple of 256. */
static inline size_t glcv_cuda_match_pitch(int width)
{
    return (((size_t)width + 255) & ~(size_t)255) + 256;
}

/* Interleaved pixels (any glcv_pixel_format layout) to planes: rows [row_begin, row_end). Gray from
 * colour is (77 R + 150 G + 29 B + 128) >> 8, colour from gray replicates, a missing alpha is 255
 * (glcv_image_convert's rules). */
typedef struct glcv_cuda_planes_params {
    const uint8_t *src;
    size_t src_pitch;
    unsigned long long src_texture; /* nonzero: a cudaTextureObject_t of uchar4 elements (RGBA,
                                       alpha read as 255) read instead of src */
    int src_bpp;              /* bytes per pixel: 1, 3 or 4 */
    int src_r, src_g, src_b;  /* byte offsets of the channels in a pixel (all 0 for gray) */
    int src_a;                /* byte offset of alpha, or -1 */
    int src_gray;             /* nonzero: the source is gray */
    uint8_t *planes;
    size_t pitch, plane_size;
    int channels;             /* 1 (gray), 3 (R, G, B) or 4 (R, G, B, A) */
    int width;
    int row_begin, row_end;
} glcv_cuda_planes_params;

int glcv_cuda_match_planes(glcv_cuda_planes_params p, cudaStream_t stream);

/* Template words: for channel c, template row r and 4-byte group g (columns 4g..4g+3, little
 * endian), word (c * th + r) * groups + g; bytes past the template's width and masked pixels are 0.
 * The mask words follow the template words (0xFF where a pixel is used). */
typedef struct glcv_cuda_match_params {
    const uint8_t *planes;
    size_t pitch, plane_size;
    int width, height, channels;
    int tw, th, groups;        /* template size; groups = ceil(tw / 4) */
    int metric;                /* glcv_match_metric: 1 SAD, 2 SSD, 3 LINF, 4 ZNCC */
    int masked;                /* nonzero: a mask, or tw % 4 != 0 (the mask words are used) */
    int wide;                  /* nonzero: 64-bit sums (SAD/SSD scores in uint64; ZNCC count above
                                  GLCV_MATCH_ZNCC_NARROW_MAX) */
    int const_offset;          /* >= 0: the words start at this word of the constant pool; -1: `words` */
    const uint32_t *words;     /* device memory, when const_offset < 0 */
    int x0, y0, x1, y1;        /* positions evaluated: [x0, x1) x [y0, y1) */
    int row_begin, row_end;    /* map rows this launch writes (every column; worst value outside) */
    void *map;                 /* scores: uint32 (SAD, SSD, LINF), uint64 (wide SAD, SSD), float (ZNCC) */
    size_t map_pitch;          /* elements per map row */
    /* ZNCC */
    long long count;           /* used pixels per channel */
    long long t_sum[4];        /* template sums per channel */
    double t_var;              /* sum_c count * sum_sq_c - sum_c^2 */
} glcv_cuda_match_params;

int glcv_cuda_match(glcv_cuda_match_params p, cudaStream_t stream);

/* Copies n template words to the current device's constant pool at word `offset` (stream-ordered;
 * `words` is host memory, pinned for the copy to be asynchronous). */
int glcv_cuda_match_const_upload(int offset, const uint32_t *words, int n, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
