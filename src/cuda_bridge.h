/* The CUDA-GL interop bridge (private): which CUDA device shares the GL context's GPU, and the
 * hand-over of the engine's (or a caller's) textures to CUDA kernels.
 *
 * The lifecycle follows the usual rules: a GL object shared with CUDA is registered once per
 * allocation with the narrowest flag (read-only for inputs, write-discard for outputs), all of
 * a frame's resources are mapped in one call and unmapped on the same stream, the mapped
 * array's format and size are checked, and a registration is removed before its GL object is
 * deleted.
 *
 * Two hand-overs of a frame texture (RGBA) and an optional mask texture (red channel):
 *
 * - registered textures (glcv_cuda_bridge_map_textures, the tracker's): a caller's texture is
 *   registered with CUDA (cudaGraphicsGLRegisterImage, read-only) on first use and the
 *   registration is kept, keyed by the texture's name and its level-0 size and internal format
 *   (glGetTexLevelParameteriv, queried every frame: a texture re-specified with another size
 *   or format is registered again). Per frame GL is flushed, the frame's textures are mapped
 *   in one cudaGraphicsMapResources call and their level-0 arrays are read through texture
 *   objects (element reads, no filtering, unnormalised coordinates, clamp), which are kept
 *   while the mapped array and its descriptor (cudaArrayGetInfo) stay the same and rebuilt
 *   when they change. Only GL_RGBA8 frames (uchar4) and GL_R8 or GL_RGBA8 masks (uchar /
 *   uchar4, red) go this way; any other format, a registration CUDA refuses, or a failed map
 *   falls back to the pixel buffer below. A registered texture must be forgotten
 *   (glcv_cuda_bridge_forget) before it is deleted (a new texture given the old name could
 *   otherwise be read through the old registration) or re-specified (glTexImage2D of a
 *   registered texture fails with GL_INVALID_OPERATION on NVIDIA's driver, 580).
 * - registered texture arrays (glcv_cuda_bridge_map_layers, the tracker's sets of streams): the
 *   same for GL_TEXTURE_2D_ARRAY textures of the bridge's `layers` layers (layer i = stream i): a
 *   GL_RGBA8 frames array and a GL_R8 or GL_RGBA8 masks array are registered once each
 *   (glcv_cuda_image_register_layers, kept by name and internal format, checked every set with
 *   glcv_gl_check_input_layers), both are mapped in one glcv_cuda_images_map call per set, and
 *   each layer is read through its own texture object; the objects are built once and kept
 *   while CUDA maps the layers to the same arrays, and their handles sit in device memory for
 *   the kernels. Other formats, or arrays CUDA refuses, go through the pixel buffer, every
 *   layer one after another.
 * - the pixel buffer (glcv_cuda_bridge_map_frame; correlate and match, and the fallback): GL
 *   copies the frame (as RGBA8) and the mask (as R8) into one pixel-buffer object owned by the
 *   bridge (glGetTexImage into a PIXEL_PACK buffer, on the GPU; immutable storage, so video
 *   memory), GL's commands are flushed (glFlush: without it the map waits until the driver
 *   submits them on its own), and the buffer, registered once, is mapped as plain device
 *   memory. No caller texture is registered, so they may be deleted at any time.
 *
 * bench/interop_bench.c measures both against registering per frame and GL external memory
 * objects shared with CUDA.
 *
 * Every function that touches GL needs the context current that the bridge was created in.
 * Built only with CUDA (src/cuda_bridge.c, cuda/cuda_bridge.cu). */
#ifndef GLCV_CUDA_BRIDGE_H
#define GLCV_CUDA_BRIDGE_H

#include "cuda_internal.h"

#include <cuda_runtime_api.h>

typedef struct glcv_cuda_bridge glcv_cuda_bridge;

/* A frame (or a set of layers) handed to CUDA, valid until unmap: device pointers into the
 * mapped buffer, or (the registered-texture paths) texture objects over the mapped arrays, with
 * the pointers NULL. */
typedef struct glcv_cuda_frame {
    const uint8_t *rgba; /* width x height RGBA8, rows of `rgba_pitch` bytes; layers: one after
                            another, layer l's row y at row l * height + y */
    size_t rgba_pitch;
    const uint8_t *mask; /* width x height R8 (0..255) (per layer, as rgba), or NULL */
    size_t mask_pitch;
    cudaTextureObject_t rgba_texture; /* nonzero: the frame, uchar4 elements (rgba is NULL) */
    cudaTextureObject_t mask_texture; /* nonzero: the mask (mask is NULL) */
    const cudaTextureObject_t *rgba_layers; /* map_layers: not NULL: `layers` texture objects in
                                               device memory, layer l's frame in [l] */
    const cudaTextureObject_t *mask_layers; /* map_layers: the masks' texture objects, or NULL */
    int mask_channels;                /* of mask_texture / mask_layers: 1 (uchar) or 4 (uchar4, red = x) */
} glcv_cuda_frame;

/* What the registered-texture paths did (tests and benchmarks); an array texture counts as one
 * texture, its texture objects one per layer. */
typedef struct glcv_cuda_bridge_stats {
    int direct;          /* the last map read registered textures (0: the pixel buffer) */
    int registered;      /* textures registered now */
    int registrations;   /* cudaGraphicsGLRegisterImage calls that succeeded, in all */
    int refused;         /* registrations refused or arrays of an unexpected format, in all */
    int texture_objects; /* texture objects built, in all */
} glcv_cuda_bridge_stats;

/* Creates the bridge's pixel buffer for frames of width x height (and a mask) in the current
 * GL context and registers it with CUDA (read-only). Errors: NO_CONTEXT, GL, CUDA, OUT_OF_MEMORY. */
glcv_status glcv_cuda_bridge_create(int width, int height, const glcv_logger *logger, glcv_cuda_bridge **out);
/* As glcv_cuda_bridge_create, for glcv_cuda_bridge_map_textures: the pixel buffer is made (and
 * registered) only when a frame needs the fallback. */
glcv_status glcv_cuda_bridge_create_for_textures(int width, int height, const glcv_logger *logger,
                                                 glcv_cuda_bridge **out);
/* As glcv_cuda_bridge_create_for_textures, for glcv_cuda_bridge_map_layers with arrays of
 * `layers` layers (>= 1; the pixel buffer, when needed, holds that many frames and masks). */
glcv_status glcv_cuda_bridge_create_for_layers(int width, int height, int layers, const glcv_logger *logger,
                                               glcv_cuda_bridge **out);
/* Unregisters everything (its pixel buffer and the caller's textures it registered), then
 * deletes its GL objects (the context should be current). Accepts &NULL. */
void glcv_cuda_bridge_destroy(glcv_cuda_bridge **bridge);

/* Reads texture `frame` (a colour GL_TEXTURE_2D of the bridge's size) and, when `mask` is not 0,
 * texture `mask` into the pixel buffer (GL commands; the GL state touched is restored), maps
 * it on `stream` and returns the device pointers. CUDA work queued on `stream` after this sees
 * the pixels. Errors: INVALID_ARGUMENT, SIZE_MISMATCH, UNSUPPORTED (a format that cannot be
 * attached to a framebuffer), STATE (already mapped), GL, CUDA. */
glcv_status glcv_cuda_bridge_map_frame(glcv_cuda_bridge *bridge, unsigned int frame, unsigned int mask,
                                       cudaStream_t stream, glcv_cuda_frame *out);
/* As glcv_cuda_bridge_map_frame, through registered textures where their formats allow it (see
 * the top of this file): out gets texture objects then, else the pixel buffer's pointers. The
 * same errors; a registration CUDA refuses is not one (the pixel buffer is used). */
glcv_status glcv_cuda_bridge_map_textures(glcv_cuda_bridge *bridge, unsigned int frame, unsigned int mask,
                                          cudaStream_t stream, glcv_cuda_frame *out);
/* As glcv_cuda_bridge_map_textures, for GL_TEXTURE_2D_ARRAY textures of the bridge's layers:
 * `frames` (colour) and `masks` (0 = none), both checked with glcv_gl_check_input_layers. out gets
 * per-layer texture objects (rgba_layers, mask_layers) or the pixel buffer's pointers (every layer
 * one after another). CUDA work queued on `stream` after this sees the pixels. Errors:
 * INVALID_ARGUMENT (not an array texture, another number of layers), SIZE_MISMATCH, UNSUPPORTED
 * (format), STATE (already mapped), OUT_OF_MEMORY, GL, CUDA; a registration CUDA refuses is not
 * one (the pixel buffer is used). */
glcv_status glcv_cuda_bridge_map_layers(glcv_cuda_bridge *bridge, unsigned int frames, unsigned int masks,
                                        cudaStream_t stream, glcv_cuda_frame *out);
/* A batch of `n` colour GL_TEXTURE_2Ds of the bridge's size (a correlator's images) in one hand-over:
 * each registered on first use (kept as map_textures keeps them; the cache grows to the batch, at
 * most 4096), all mapped in one cudaGraphicsMapResources call on `stream`, objects[i] the texture
 * object (uchar4 elements) of textures[i]; unmap as for the others. UNSUPPORTED (nothing mapped,
 * nothing logged as an error) when one of them is not GL_RGBA8, CUDA refuses one, or the batch is
 * above 4096: then the caller hands them over one by one (map_frame). Errors: INVALID_ARGUMENT
 * (NULL, n < 1, not a texture), SIZE_MISMATCH, STATE (already mapped), OUT_OF_MEMORY, GL, CUDA. */
glcv_status glcv_cuda_bridge_map_many(glcv_cuda_bridge *bridge, const unsigned int *textures, int n,
                                      cudaStream_t stream, cudaTextureObject_t *objects);
/* Drops the registration (and texture objects) of `texture`, if there is one, after the work
 * queued on the last map's stream is done; call it before deleting or re-specifying a texture
 * that was given to glcv_cuda_bridge_map_textures or glcv_cuda_bridge_map_layers. STATE while
 * mapped. */
glcv_status glcv_cuda_bridge_forget(glcv_cuda_bridge *bridge, unsigned int texture);
void glcv_cuda_bridge_get_stats(const glcv_cuda_bridge *bridge, glcv_cuda_bridge_stats *out);
/* Unmaps on `stream`: GL commands issued afterwards run after the CUDA work queued before. */
glcv_status glcv_cuda_bridge_unmap(glcv_cuda_bridge *bridge, cudaStream_t stream);
/* map_frame flushes GL (glFlush) between its copies and the map; 0 turns that off, to measure
 * what an unflushed hand-over costs (benchmarks only). */
void glcv_cuda_bridge_set_flush(glcv_cuda_bridge *bridge, int flush);

/* ---- registered textures (the direct image path, for tests and benchmarks) ---------------- */

typedef struct glcv_cuda_image {
    unsigned int texture;
    int width, height;
    int layers;                         /* 0: a GL_TEXTURE_2D; else a GL_TEXTURE_2D_ARRAY's layers */
    int write_discard;                  /* registered write-discard (else read-only) */
    struct cudaGraphicsResource *resource;
    cudaArray_t array;                  /* while mapped (an array texture: its layer 0) */
    cudaArray_t *layer_arrays;          /* an array texture, while mapped: each layer's array */
} glcv_cuda_image;

/* `write_discard` of the registrations below: 0 read-only, 1 write-discard (outputs written by
 * copies into the mapped arrays), GLCV_CUDA_IMAGE_SURFACE write-discard with surface writes allowed
 * (kernels write the mapped arrays through surface objects). */
#define GLCV_CUDA_IMAGE_SURFACE 2

/* Registers a GL_TEXTURE_2D once (read-only, or write-discard for outputs). The texture must
 * not be deleted before glcv_cuda_image_unregister. Errors: INVALID_ARGUMENT, NO_CONTEXT, GL,
 * CUDA. */
glcv_status glcv_cuda_image_register(glcv_cuda_image *image, unsigned int texture, int write_discard,
                                     const glcv_logger *logger);
/* The same for a GL_TEXTURE_2D_ARRAY (every layer: one registration, one map per frame set for
 * all of them - a batch of streams handed over at once); mapping fills layer_arrays. */
glcv_status glcv_cuda_image_register_layers(glcv_cuda_image *image, unsigned int texture, int write_discard,
                                            const glcv_logger *logger);
glcv_status glcv_cuda_image_unregister(glcv_cuda_image *image, const glcv_logger *logger);
/* Flushes GL (so that its writes reach the GPU), maps n registered images in one call on
 * `stream`, fetches each one's level-0 array and checks
 * its size against the texture's (and that it holds 1 or 4 8-bit channels). */
glcv_status glcv_cuda_images_map(glcv_cuda_image *const *images, int n, cudaStream_t stream,
                                 const glcv_logger *logger);
glcv_status glcv_cuda_images_unmap(glcv_cuda_image *const *images, int n, cudaStream_t stream,
                                   const glcv_logger *logger);
/* A texture object over a mapped array as the bridge's paths read them: elements as stored, point
 * sampling, unnormalised coordinates, clamped addresses (pixel x, y is element x, y). */
cudaError_t glcv_cuda_texture_object(cudaArray_t array, cudaTextureObject_t *out);

/* ---- kernels of cuda/cuda_bridge.cu: checks and benchmarks of hand-overs --------------------- */

#ifdef __cplusplus
extern "C" {
#endif

/* Adds every byte of a width_bytes x height region of linear memory to *out. */
typedef struct glcv_cuda_sum_linear_params {
    const uint8_t *data;
    size_t pitch;
    int width_bytes;
    int height;
    unsigned long long *out;
} glcv_cuda_sum_linear_params;

int glcv_cuda_sum_linear(glcv_cuda_sum_linear_params p, cudaStream_t stream);

/* Adds every channel byte of a width x height texture (element type uchar4 when channels is 4,
 * uchar when 1; read as elements, no filtering) to *out. */
typedef struct glcv_cuda_sum_texture_params {
    cudaTextureObject_t texture;
    int width, height;
    int channels;
    unsigned long long *out;
} glcv_cuda_sum_texture_params;

int glcv_cuda_sum_texture(glcv_cuda_sum_texture_params p, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
