/* The C boundary of the tracker's kernels (cuda/track.cu), shared with its host side
 * (src/track_cuda.c): every kernel has one params struct, passed by value, and an extern "C"
 * launcher that queues it on a stream and returns a cudaError_t (as int; 0 = cudaSuccess).
 * Pointers in the params are device pointers unless a field says otherwise. */
#ifndef GLCV_TRACK_KERNELS_H
#define GLCV_TRACK_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "track_dcf_math.h"
#include "track_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads per block of the tracking kernel. */
#define GLCV_CUDA_TRACK_THREADS 512

/* The bin images of `streams` frames in one launch (grid z = stream): HSV (cv::cvtColor's integer
 * arithmetic), limits, mask and bins (track_math.h's glcv_tm_bin) for every pixel; columns from
 * width up to the padded row length (bins_pitch, a multiple of 8) get c.nbins. Stream z's rows
 * come z * config.height rows after stream 0's, in the bin image and in pitched frames and
 * masks. The frame and the mask are read from pitched memory or from texture objects (element
 * reads, point filtering, unnormalised coordinates, clamp: pixel x, y is element x, y, the same
 * bytes): one for a single stream, or one per stream (the layers of an array texture). */
typedef struct glcv_cuda_bins_params {
    const uint8_t *pixels;         /* RGB8/BGR8 (channels 3) or RGBA8/BGRA8 (channels 4); NULL
                                      when pixels_texture is given */
    size_t pitch;                  /* bytes per row */
    int channels;                  /* 3 or 4 (4 with pixels_texture) */
    int bgr;                       /* nonzero: blue first */
    cudaTextureObject_t pixels_texture; /* nonzero: the frame, uchar4 elements (RGBA, or BGRA) */
    const cudaTextureObject_t *pixels_layers; /* or, not NULL: `streams` texture objects as that,
                                                 stream z's frame in pixels_layers[z] */
    const uint8_t *mask;           /* R8; NULL (and no mask_texture) = every pixel counts */
    size_t mask_pitch;
    cudaTextureObject_t mask_texture; /* nonzero: the mask, uchar elements (mask_texture_channels
                                         1) or uchar4 (4: the first channel is the mask) */
    const cudaTextureObject_t *mask_layers; /* not NULL: `streams` mask texture objects */
    int mask_texture_channels;
    int mask_min;                  /* a pixel counts where mask >= mask_min (1: host masks, nonzero;
                                      128: texture masks, red > 0.5) */
    const glcv_tm_tables *tables;
    glcv_tm_config config;
    uint16_t *bins;
    size_t bins_pitch;             /* elements per row, a multiple of 8 */
    int streams;                   /* frames converted, 1..65535 */
} glcv_cuda_bins_params;

int glcv_cuda_track_bins(glcv_cuda_bins_params p, cudaStream_t stream);

/* Tracks n objects in one launch: one block, or one thread-block cluster of `cluster` blocks,
 * per object; the mean-shift loop, the sizing, the window histogram and the lost logic all run
 * on the device (track_math.h), and each object's state is updated in place. Each object reads
 * the bin image of its stream (glcv_tm_object.stream). */
typedef struct glcv_cuda_track_params {
    const uint16_t *bins;          /* the bin images, stream after stream */
    size_t bins_pitch;             /* elements per row, a multiple of 8; rows 16-byte aligned */
    size_t stream_stride;          /* elements from one stream's bin image to the next's */
    glcv_tm_config config;
    const int *ids;                /* n object ids */
    int n;
    glcv_tm_object *objects;       /* indexed by id: read at the start, updated at the end */
    const glcv_tm_object *initial; /* NULL, or n states (ids order) to start from instead of
                                      objects[id] (benchmarks: the same windows every run) */
    glcv_tm_object *states;        /* NULL, or n entries (ids order) that get the new states */
    const uint8_t *luts;           /* id * lut_stride: nbins + 1 back-projection values */
    int lut_stride;
    const double *sqrt_models;     /* id * nbins: sqrt of the model */
    const double *model_sums;      /* indexed by id */
    glcv_tm_result *results;       /* n results, in ids order */
} glcv_cuda_track_params;

int glcv_cuda_track_objects(glcv_cuda_track_params p, int cluster, cudaStream_t stream);

/* Dynamic shared memory the tracking kernel needs for this config. */
size_t glcv_cuda_track_shared_bytes(const glcv_tm_config *config);

/* The largest cluster (blocks per object: 1, 2, 4, 8 or 16) the current device can run the
 * tracking kernel with, for this config; 1 below compute capability 9.0. */
int glcv_cuda_track_max_cluster(const glcv_tm_config *config);

/* ---- the correlation-filter method (cuda/track_dcf.cu) --------------------------------------------- */

/* Threads per block of the DCF kernel (one block per object). */
#define GLCV_CUDA_DCF_THREADS 512

/* One object's working memory on the device (glcv_cuda_track_dcf_scratch_bytes() each). */
typedef struct glcv_cuda_dcf_scratch glcv_cuda_dcf_scratch;

/* Runs n objects' frames in one launch, one block or one cluster of blocks per object, with
 * track_dcf_math.h's arithmetic in the CPU implementation's order (track_dcf.c): each object's
 * state is updated in place and its result written. The frames are read from pitched memory
 * (streams stacked: stream z's row y at row z * height + y) or from texture objects (uchar4
 * elements, RGBA: one for a single stream, or one per stream). */
typedef struct glcv_cuda_dcf_params {
    const uint8_t *pixels;         /* RGB8/BGR8 (channels 3) or RGBA8/BGRA8 (channels 4); NULL with textures */
    size_t pitch;                  /* bytes per row */
    int channels;                  /* 3 or 4 */
    int bgr;                       /* nonzero: blue first */
    cudaTextureObject_t pixels_texture; /* nonzero: the frame of every object */
    const cudaTextureObject_t *pixels_layers; /* or, not NULL: stream z's frame in pixels_layers[z] */
    int width, height;
    const int *ids;                /* n object ids */
    int n;
    const int *streams;            /* indexed by id: the object's stream */
    struct glcv_track_dcf *objects; /* indexed by id */
    glcv_cuda_dcf_scratch *scratch; /* indexed by id */
    const glcv_track_dcf_tables *tables;
    glcv_track_dcf_result *results; /* n results, in ids order */
    int blocks;                    /* which kernel runs: 2 (two blocks a multiprocessor) when n exceeds
                                    * the multiprocessors and glcv_cuda_track_dcf_two_fit(), else 1 */
    int cluster;                   /* blocks per object with blocks 1: 1, 2, 4, 8 or 16 (a thread-block
                                    * cluster, up to glcv_cuda_track_dcf_max_cluster()) */
} glcv_cuda_dcf_params;

int glcv_cuda_track_dcf(glcv_cuda_dcf_params p, cudaStream_t stream);
/* Whether two blocks of the register-capped kernel fit on a multiprocessor of the current device. */
int glcv_cuda_track_dcf_two_fit(void);
/* The largest cluster of blocks one object can use on the current device (1 below compute 9.0). */
int glcv_cuda_track_dcf_max_cluster(void);
size_t glcv_cuda_track_dcf_scratch_bytes(void);

#ifdef __cplusplus
}
#endif
#endif
