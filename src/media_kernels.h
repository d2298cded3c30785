/* The C boundary of the media service's kernel (cuda/media.cu), shared with its host side
 * (src/media_cuda.c): one params struct, passed by value, and an extern "C" launcher that queues
 * the kernel on a stream and returns a cudaError_t (as int; 0 = cudaSuccess). */
#ifndef GLCV_MEDIA_KERNELS_H
#define GLCV_MEDIA_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "media_yuv.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One layer of a texture set: where its frame is (device addresses: NVDEC's planes, or pinned
 * host memory mapped into the device's address space) and the surface of its layer. */
typedef struct glcv_cuda_media_layer {
    cudaSurfaceObject_t surface; /* the layer's array, RGBA8 */
    int rgb_bytes;               /* 0: 4:2:0 planes; 3 or 4: RGB8 / RGBA8 pixels at `rgb` */
    glcv_yuv_planes planes;
    const uint8_t *rgb;
    size_t rgb_pitch;
    glcv_yuv_coeffs coeffs;
} glcv_cuda_media_layer;

/* Converts `count` layers (descriptors in device memory) of width x height pixels each into their
 * surfaces (alpha 255), grid z = the layer: media_yuv.h's definition, bit for bit. */
typedef struct glcv_cuda_media_convert_params {
    const glcv_cuda_media_layer *layers;
    int count;
    int width, height;
} glcv_cuda_media_convert_params;

int glcv_cuda_media_convert(glcv_cuda_media_convert_params p, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
