/* The C boundary of the correlator's kernels (cuda/correlate.cu), shared with its host side
 * (src/correlate_cuda.c): one params struct per kernel, passed by value, and an extern "C"
 * launcher that queues it on a stream and returns a cudaError_t (as int; 0 = cudaSuccess).
 * Pointers in the params are device pointers unless a field says otherwise. */
#ifndef GLCV_CORRELATE_KERNELS_H
#define GLCV_CORRELATE_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Threads per block of the correlation kernel. */
#define GLCV_CUDA_CORRELATE_THREADS 256

/* The sums of N images against one reference: per image sum y, sum y^2 and sum x*y over `bytes`
 * bytes (a multiple of 16; zero padding adds nothing), read in 16-byte loads. Each image is split
 * into `blocks_per_image` slices of whole 16-byte words; slice sums go to partial[(i *
 * blocks_per_image + b) * 3 + {0, 1, 2}]. With blocks_per_image == 1 the kernel also finishes:
 * r[i] from the sums (see finish). */
typedef struct glcv_cuda_correlate_params {
    const uint8_t *bank;        /* n images, image i at bank + i * image_pitch (16-byte aligned) */
    size_t image_pitch;         /* bytes, a multiple of 16 */
    int n;
    const uint8_t *reference;   /* `bytes` bytes */
    size_t bytes;               /* padded size, a multiple of 16 */
    int blocks_per_image;
    unsigned long long *partial;
    /* finishing (blocks_per_image == 1) */
    long long count;            /* samples per image (width * height * channels) */
    long long ref_sum, ref_sum_sq;
    double *r;                  /* n coefficients */
    /* images per block sharing each reference load when blocks_per_image == 1: 1, 2 or 4; 0 = the
     * launcher's choice */
    int images_per_block;
} glcv_cuda_correlate_params;

int glcv_cuda_correlate(glcv_cuda_correlate_params p, cudaStream_t stream);

/* Adds the slice sums of each image (blocks_per_image > 1) and writes r. */
typedef struct glcv_cuda_correlate_finish_params {
    const unsigned long long *partial;
    int n, blocks_per_image;
    long long count, ref_sum, ref_sum_sq;
    double *r;
} glcv_cuda_correlate_finish_params;

int glcv_cuda_correlate_finish(glcv_cuda_correlate_finish_params p, cudaStream_t stream);

/* RGBA8 rows (a texture handed over by the CUDA-GL bridge) to packed samples: GRAY8 ((77 R + 150 G
 * + 29 B + 128) >> 8) or RGB8, width * channels bytes per row, rows one after the other. */
typedef struct glcv_cuda_correlate_pack_params {
    const uint8_t *rgba;
    size_t rgba_pitch;
    unsigned long long texture; /* nonzero: a cudaTextureObject_t of uchar4 elements read instead of rgba */
    int width, height;
    int channels;               /* 1 or 3 */
    uint8_t *dst;
} glcv_cuda_correlate_pack_params;

int glcv_cuda_correlate_pack(glcv_cuda_correlate_pack_params p, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
