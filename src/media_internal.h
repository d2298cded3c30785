/* The media service, private: what glcv_media_set (src/media_set.c) needs of a glcv_media
 * (src/media.c) beyond the public API - frames as the decoder made them (4:2:0 planes in host or
 * GPU memory) instead of RGB, slot memory from the set (pinned, so the GPU reads it), one decoder
 * thread - and the set's GPU conversion (src/media_cuda.c, cuda/media.cu). No FFmpeg type appears
 * here: src/media.c stays the only file that includes FFmpeg. */
#ifndef GLCV_MEDIA_INTERNAL_H
#define GLCV_MEDIA_INTERNAL_H

#include <glcv/media.h>

#include "media_yuv.h"

/* A decoded frame as the capture thread left it. */
typedef enum glcv_media_picture_kind {
    GLCV_PICTURE_RGB = 0,    /* converted on the CPU (formats the shared definition does not cover,
                                or scaled): `rgb`, the object's format, rows of `stride` bytes */
    GLCV_PICTURE_YUV420 = 1  /* 8-bit 4:2:0 at the object's size: `planes`, `matrix`, `full_range` */
} glcv_media_picture_kind;

typedef struct glcv_media_picture {
    glcv_media_picture_kind kind;
    int device;              /* the planes are CUDA device memory (NVDEC); else host memory */
    glcv_yuv_planes planes;  /* YUV420 */
    int matrix;              /* GLCV_YUV_BT601 / 709 / 2020 */
    int full_range;
    const uint8_t *rgb;      /* RGB */
    size_t stride;
} glcv_media_picture;

/* What a set asks of one of its sources. */
typedef struct glcv_media_options {
    int pictures; /* deliver pictures (glcv_media_read_picture) instead of RGB frames */
    /* With params.decoder DEFAULT: decode on NVDEC (params.cuda_device) when it takes the stream
     * (8-bit 4:2:0 H.264 or HEVC and a device with the driver), else on the CPU, silently. */
    int nvdec_auto;
    /* NVDEC's CUDA context: the primary context of params.cuda_device as the CUDA runtime made it
     * (glcv_media_cuda_context), so that glcv's kernels read the frames in place. NULL: FFmpeg
     * takes the primary context itself (which it refuses when the runtime made it first, with other
     * scheduling flags; NVDEC is then unavailable to this object). */
    void *cuda_context;
    /* Slot memory (NULL: posix_memalign / free): the set's pinned memory, which the GPU reads in
     * place. `alloc` returns page-aligned memory or NULL. */
    void *(*alloc)(size_t bytes, void *user);
    void (*release)(void *ptr, void *user);
    void *alloc_user;
} glcv_media_options;

/* glcv_media_create with options (NULL: none). */
glcv_status glcv_media_create_with(const glcv_media_params *params, const glcv_media_options *options,
                                   glcv_media **out);

/* glcv_media_read for objects made with options.pictures: the frame as a picture, valid (the planes
 * included, in GPU memory too) until the next read or destroy. Same statuses and info. */
glcv_status glcv_media_read_picture(glcv_media *media, glcv_media_picture *picture, glcv_media_frame_info *info,
                                    int timeout_ms);

/* Whether the object decodes on NVDEC (the hardware decoder was set up at open). */
int glcv_media_uses_nvdec(const glcv_media *media);

/* Whether a read would return at once: a frame is waiting, or the source has stopped. */
int glcv_media_ready(glcv_media *media);

/* The coefficients of a matrix and range (the definition's table). */
const glcv_yuv_coeffs *glcv_media_yuv_coeffs(int matrix, int full_range);

/* Converts a picture in host memory to RGB8 or RGBA8 (alpha 255) at `dst` (width x height of the
 * picture, rows of dst_stride bytes): the CPU side of the one definition. */
void glcv_media_picture_to_rgb(const glcv_media_picture *picture, glcv_pixel_format format, uint8_t *dst,
                               size_t dst_stride);

/* ---- The GPU conversion of a texture set (src/media_cuda.c; built with CUDA) ------------------- */

typedef struct glcv_media_cuda glcv_media_cuda;

/* One layer's source: a picture (device planes, or host planes / RGB in memory registered with
 * CUDA: the kernel reads them through their device address). */
typedef struct glcv_media_cuda_layer {
    int layer;
    glcv_media_picture picture;
} glcv_media_cuda_layer;

/* Registers `texture` (a GL_TEXTURE_2D_ARRAY RGBA8 of width x height x layers, in the current
 * context) with CUDA on `cuda_device` for writing. Errors: UNSUPPORTED (no CUDA device), CUDA,
 * OUT_OF_MEMORY. */
glcv_status glcv_media_cuda_create(unsigned int texture, int width, int height, int layers, int cuda_device,
                                   const glcv_logger *logger, glcv_media_cuda **out);
void glcv_media_cuda_destroy(glcv_media_cuda **cuda);
/* The CUDA runtime's primary context of the set's device (a CUcontext), for options.cuda_context. */
void *glcv_media_cuda_context(const glcv_media_cuda *cuda);
/* Page-locked host memory the GPU reads in place (the set's slot allocator), and its release. */
void *glcv_media_cuda_host_alloc(size_t bytes, void *cuda);
void glcv_media_cuda_host_free(void *ptr, void *cuda);
/* Writes the n layers into the texture: one map of the texture, one launch, one unmap. Returns once
 * the work is queued: GL commands issued afterwards see the frames (the unmap orders them), but the
 * pictures' memory is read until glcv_media_cuda_wait returns; keep it until then. Errors: CUDA, GL. */
glcv_status glcv_media_cuda_convert(glcv_media_cuda *cuda, const glcv_media_cuda_layer *layers, int n);
/* Waits until the last conversion has read its pictures (at once when none is pending; NULL: OK).
 * Errors: CUDA (the conversion failed). */
glcv_status glcv_media_cuda_wait(glcv_media_cuda *cuda);

#endif
