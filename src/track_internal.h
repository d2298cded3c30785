/* The tracker (private): what its files offer each other, and hooks for tests and benchmarks.
 *   track.c       the object: parameters, objects, validation, dispatch to an engine, results
 *   track_hist.c  model histograms: from frames, distances, files
 *   track_cpu.c   CAMSHIFT's CPU implementation: the CPU engine and the tests' oracle
 *   track_dcf.c   DCF's CPU implementation (one object's frame; track.c spreads the objects)
 *   track_cuda.c  the CUDA engine's host side; its kernels are cuda/track.cu and
 *                 cuda/track_dcf.cu (track_kernels.h)
 *   track_math.h  CAMSHIFT's per-pixel and per-window arithmetic both engines share, bit for bit
 *   track_dcf_math.h  DCF's state and arithmetic both engines share
 * The object's functions are called with its mutex held. */
#ifndef GLCV_TRACK_INTERNAL_H
#define GLCV_TRACK_INTERNAL_H

#include <glcv/track.h>

#include <stdio.h>

#include "track_dcf_math.h"
#include "track_math.h"

/* Checks a histogram: bins in range, every value finite and in 0..255 (track_hist.c).
 * Errors: INVALID_ARGUMENT, logged. */
glcv_status glcv_track_hist_check(const glcv_logger *logger, const glcv_track_hist *hist);
/* glcv_track_hist_load's parsing, from an open stream (`path` names it in messages). */
glcv_status glcv_track_hist_read(FILE *f, const char *path, glcv_track_hist *hists, int capacity, int *count,
                                 const glcv_logger *lg);

/* ---- the CPU implementation (track_cpu.c) -----------------------------------------------------------
 * It runs the shared arithmetic of track_math.h over a bin image (one uint16 bin index per pixel,
 * row-major, `width` per row), exactly as the CUDA kernels do: integer moment sums, the same
 * double-precision window updates and the same fixed-order Bhattacharyya reduction. */

/* An object's model as the engines use it. */
typedef struct glcv_track_model {
    const uint8_t *lut;       /* nbins + 1 entries: back-projection per bin; lut[nbins] = 0 */
    const double *sqrt_model; /* nbins entries: sqrt(value) */
    double model_sum;         /* sum of the values, in bin order */
} glcv_track_model;

/* cv::cvtColor's HSV tables and cv::calcHist's bin tables for these bins. */
void glcv_track_cpu_tables(glcv_tm_tables *t, int hue_bins, int sat_bins);

/* The model's look-up table (cvRound of each value, saturated to 0..255; lut[nbins] = 0),
 * square roots and sum. */
void glcv_track_cpu_model(const float *value, int nbins, uint8_t *lut, double *sqrt_model, double *model_sum);

/* Histogram values from bin counts: cv::normalize(NORM_MINMAX, 0..255) of the counts as floats. */
void glcv_track_cpu_normalize(const uint32_t *counts, int nbins, float *value);

/* The bin image of a host frame (RGB8, RGBA8, BGR8, BGRA8; any stride) and optional mask (GRAY8
 * rows of `mask_stride` bytes, nonzero = counts; NULL = all). A tracker of several streams keeps
 * one bin image per stream, one after another; an object is tracked on its stream's. */
void glcv_track_cpu_bins(const glcv_tm_tables *t, const glcv_tm_config *c, const glcv_image *frame,
                         const uint8_t *mask, size_t mask_stride, uint16_t *bins);

/* The same from packed RGB and an optional packed 0/1 mask (texture inputs read back). */
void glcv_track_cpu_bins_rgb(const glcv_tm_tables *t, const glcv_tm_config *c, const uint8_t *rgb,
                             const uint8_t *mask, uint16_t *bins);

/* Exact moments of the back-projection in rectangle r (inside the frame), relative to r. */
void glcv_track_cpu_moments(const uint16_t *bins, int width, const uint8_t *lut, glcv_tm_rect r,
                            uint64_t m[GLCV_TM_MOMENTS]);

/* Bin counts of the counted pixels in r (counts has nbins entries, zeroed here). */
void glcv_track_cpu_counts(const uint16_t *bins, int width, int nbins, glcv_tm_rect r, uint32_t *counts);

/* The Bhattacharyya distance of a window's counts to a model, with the CUDA kernels' fixed
 * reduction order (GLCV_TM_DIST_LANES lanes, bins b = lane + k * lanes in increasing k, then a
 * halving tree). */
double glcv_track_cpu_distance(const glcv_track_model *model, const uint32_t *counts, int nbins);

/* One object's frame: mean shift, sizing, distance, lost state and next window. `counts`
 * is scratch of nbins entries. */
void glcv_track_cpu_object(const uint16_t *bins, const glcv_tm_config *c, const glcv_track_model *model,
                           glcv_tm_object *object, glcv_tm_result *result, uint32_t *counts);

/* ---- the correlation-filter method (track_dcf.c) ---------------------------------------------------
 * One object's translation and scale filters and colour model, and its frame step on the CPU. */

typedef struct glcv_track_dcf glcv_track_dcf;
typedef struct glcv_track_dcf_scratch glcv_track_dcf_scratch; /* a thread's working memory */

/* An object (about 460 KB). Errors: OUT_OF_MEMORY. */
glcv_status glcv_track_dcf_create(glcv_track_dcf **out);
void glcv_track_dcf_destroy(glcv_track_dcf **d);
/* The trigonometric tables both engines use. */
void glcv_track_dcf_tables_init(glcv_track_dcf_tables *t);
/* NULL when out of memory. */
glcv_track_dcf_scratch *glcv_track_dcf_scratch_create(void);
void glcv_track_dcf_scratch_destroy(glcv_track_dcf_scratch *s);
/* (Re)starts the object at the box of centre cx, cy and size w x h in frames of frame_w x
 * frame_h: the next frame teaches it its models. */
void glcv_track_dcf_start(glcv_track_dcf *d, double cx, double cy, double w, double h, int frame_w, int frame_h);
/* One frame (RGB8, RGBA8, BGR8 or BGRA8): learns (the first frame after a start) or tracks. */
void glcv_track_dcf_frame(glcv_track_dcf *d, const glcv_image *frame, glcv_track_dcf_scratch *s,
                          glcv_track_dcf_result *out);

/* ---- the CUDA engine (track_cuda.c; without CUDA in the build, create returns UNSUPPORTED) -------
 * Device memory, uploads, the bridge for texture inputs (registered textures read through texture
 * objects, or its pixel buffer), and the launches of cuda/track.cu. */

/* The texture inputs of the CUDA engine (all 0 with the CPU engine or before its first
 * texture frame). Array textures (glcv_track_frames_texture) count once each, as 2D ones do;
 * their texture objects count once per layer. */
typedef struct glcv_track_texture_stats {
    int direct;          /* the last texture frame (set) was read through registered textures */
    int registered;      /* caller textures registered with CUDA now */
    int registrations;   /* registrations made, in all (a re-specified texture is registered again) */
    int refused;         /* registrations CUDA refused or arrays of an unexpected format, in all */
    int texture_objects; /* CUDA texture objects built, in all (again when a mapped array changes) */
} glcv_track_texture_stats;


typedef struct glcv_track_cuda glcv_track_cuda;

#define GLCV_TRACK_MAX_DEVICES 16 /* CUDA devices one tracker spreads its objects over */

/* Creates the engine on `device` for sets of `streams` frames of c->width x c->height and up to
 * max_objects objects of c->nbins bins; with `dcf`, the correlation-filter method's (its frames
 * run cuda/track_dcf.cu instead of the bin and tracking kernels). Errors: UNSUPPORTED (device
 * unusable, or no CUDA in this build), OUT_OF_MEMORY, CUDA. */
glcv_status glcv_track_cuda_create(int device, const glcv_tm_config *c, const glcv_tm_tables *tables,
                                   int max_objects, int streams, int dcf, const glcv_logger *logger,
                                   glcv_track_cuda **out);
/* DCF: uploads object `id`'s state (glcv_track_dcf_start's) and stream, ordered before the next
 * frame. */
glcv_status glcv_track_cuda_dcf_set(glcv_track_cuda *cuda, int id, int stream, const glcv_track_dcf *object);
/* DCF: waits for the last frame and copies its n results (the queued list's order). */
glcv_status glcv_track_cuda_dcf_results(glcv_track_cuda *cuda, glcv_track_dcf_result *out, int n);
/* Frees everything (GL objects of the bridge too: their context should be current). */
void glcv_track_cuda_destroy(glcv_track_cuda **cuda);

/* Uploads an object's model (lut: nbins + 1 bytes; sqrt_model: nbins doubles) and/or state
 * (either may be NULL), ordered before the next frame. */
glcv_status glcv_track_cuda_set_object(glcv_track_cuda *cuda, int id, const glcv_tm_object *object,
                                       const uint8_t *lut, const double *sqrt_model, double model_sum);

/* Tracks objects ids[0..n-1], each in its stream's frame: host frames (count of them, checked:
 * one pixel format; masks NULL or count GRAY8 images), or GL textures - a GL_TEXTURE_2D frame
 * (and mask), or with `layered` GL_TEXTURE_2D_ARRAY frames (and masks) of the engine's streams.
 * Queued; results come with glcv_track_cuda_results. Host frames are copied into the engine's
 * pinned staging memory, or with `staged` (another device's engine that staged this same set
 * just before) uploaded from that engine's: one host copy for every device. */
glcv_status glcv_track_cuda_frames(glcv_track_cuda *cuda, const glcv_tm_config *c, const glcv_image *frames,
                                   const glcv_image *masks, int count, const glcv_track_cuda *staged, const int *ids,
                                   int n);
/* Waits until the engine's last upload from staging memory (its own or another's) is done. */
glcv_status glcv_track_cuda_wait_upload(glcv_track_cuda *cuda);
glcv_status glcv_track_cuda_frame_texture(glcv_track_cuda *cuda, const glcv_tm_config *c, unsigned int frame,
                                          unsigned int mask, int layered, const int *ids, int n);

/* Drops the registration of a texture given to glcv_track_cuda_frame_texture (no-op when it has
 * none), after the queued work is done. */
glcv_status glcv_track_cuda_forget_texture(glcv_track_cuda *cuda, unsigned int texture);
void glcv_track_cuda_texture_stats(const glcv_track_cuda *cuda, glcv_track_texture_stats *out);

/* Waits for the last frame and copies its n results (in ids order) and the objects' states. */
glcv_status glcv_track_cuda_results(glcv_track_cuda *cuda, glcv_tm_result *results, glcv_tm_object *objects,
                                    const int *ids, int n);

/* Blocks per object (1, 2, 4, 8 or 16; clusters need compute capability 9.0); 0 = automatic
 * (CAMSHIFT: from the windows' sizes; DCF: from the number of objects). For benchmarks and tests. */
void glcv_track_cuda_set_cluster(glcv_track_cuda *cuda, int blocks);
/* The cluster size the last frame used. */
int glcv_track_cuda_cluster(const glcv_track_cuda *cuda);
/* DCF: the blocks a multiprocessor ran in the last launch (1 or 2; 0 before one). */
int glcv_track_cuda_dcf_blocks(const glcv_track_cuda *cuda);

/* Benchmarks: objects ids[0..n-1] (consecutive ids) start every run from `windows` (fresh
 * state, stream 0); bench_time then queues `runs` frames of kernels only - the bin conversion of
 * the last host frame set on the device when `hsv`, and the tracking - between two CUDA events,
 * and returns the GPU time per frame. */
glcv_status glcv_track_cuda_bench_prepare(glcv_track_cuda *cuda, const glcv_tm_rect *windows, const int *ids,
                                          int n);
glcv_status glcv_track_cuda_bench_time(glcv_track_cuda *cuda, const glcv_tm_config *c, int hsv, int runs,
                                       double *ms_per_frame);

/* ---- hooks for tests and benchmarks (track.c) --------------------------------------------------- */

/* CUDA engine: blocks per object (1, 2, 4, 8, 16; more than 1 needs a device of compute
 * capability 9.0, whose thread-block clusters they form); 0 = automatic. UNSUPPORTED with the
 * CPU engine or a block count the device cannot run. */
glcv_status glcv_track_set_cuda_cluster(glcv_track *track, int blocks);
/* The cluster size the CUDA engine's last frame used (0 with the CPU engine). */
int glcv_track_cuda_cluster_used(glcv_track *track);
/* DCF on the CUDA engine: the blocks a multiprocessor ran in the last frame's launch (1, or 2 for
 * sets of more objects than the device has multiprocessors); 0 with the CPU engine. */
int glcv_track_dcf_blocks_used(glcv_track *track);

/* CUDA engine, benchmarks: the first n objects (their ids must be 0..n-1) will start every run
 * from windows[i], with a fresh state. Needs a host frame tracked before (its pixels stay on
 * the device). Errors: UNSUPPORTED (CPU engine), STATE, CUDA. */
glcv_status glcv_track_bench_prepare(glcv_track *track, const glcv_rect *windows, int n);
/* Queues `runs` frames of the kernels alone - the HSV/bin conversion of that frame (without a
 * mask) when `hsv` is nonzero, then the tracking of the prepared objects - between two CUDA
 * events and returns the GPU time per frame in milliseconds. */
glcv_status glcv_track_bench_time(glcv_track *track, int hsv, int runs, double *ms_per_frame);

/* What the CUDA engine's texture inputs did (all 0 with the CPU engine). */
glcv_status glcv_track_texture_stats_get(glcv_track *track, glcv_track_texture_stats *out);

#endif
