/* The tracker's CUDA engine, host side (track_cuda.c): device memory, uploads, the bridge for
 * texture inputs (registered textures read through texture objects, or its pixel buffer), and
 * the launches of cuda/track.cu. Built only with CUDA (GLCV_HAVE_CUDA).
 * Calls are serialised by the tracker's mutex. */
#ifndef GLCV_TRACK_CUDA_H
#define GLCV_TRACK_CUDA_H

#include <glcv/core.h>

#include "track_math.h"

typedef struct glcv_track_cuda glcv_track_cuda;

/* Creates the engine on `device` for frames of c->width x c->height and up to max_objects
 * objects of c->nbins bins. Errors: UNSUPPORTED (device unusable), OUT_OF_MEMORY, GL (CUDA). */
glcv_status glcv_track_cuda_create(int device, const glcv_tm_config *c, const glcv_tm_tables *tables,
                                   int max_objects, const glcv_logger *logger, glcv_track_cuda **out);
/* Frees everything (GL objects of the bridge too: their context should be current). */
void glcv_track_cuda_destroy(glcv_track_cuda **cuda);

/* Uploads an object's model (lut: nbins + 1 bytes; sqrt_model: nbins doubles) and/or state
 * (either may be NULL), ordered before the next frame. */
glcv_status glcv_track_cuda_set_object(glcv_track_cuda *cuda, int id, const glcv_tm_object *object,
                                       const uint8_t *lut, const double *sqrt_model, double model_sum);

/* Tracks objects ids[0..n-1] in a host frame / GL textures (mask optional). Queued; results
 * come with glcv_track_cuda_results. */
glcv_status glcv_track_cuda_frame(glcv_track_cuda *cuda, const glcv_tm_config *c, const glcv_image *frame,
                                  const glcv_image *mask, const int *ids, int n);
glcv_status glcv_track_cuda_frame_texture(glcv_track_cuda *cuda, const glcv_tm_config *c, unsigned int frame,
                                          unsigned int mask, const int *ids, int n);

/* Drops the registration of a texture given to glcv_track_cuda_frame_texture (no-op when it has
 * none), after the queued work is done. */
glcv_status glcv_track_cuda_forget_texture(glcv_track_cuda *cuda, unsigned int texture);
struct glcv_track_texture_stats;
void glcv_track_cuda_texture_stats(const glcv_track_cuda *cuda, struct glcv_track_texture_stats *out);

/* Waits for the last frame and copies its n results (in ids order) and the objects' states. */
glcv_status glcv_track_cuda_results(glcv_track_cuda *cuda, glcv_tm_result *results, glcv_tm_object *objects,
                                    const int *ids, int n);

/* Blocks per object (1, 2, 4, 8 or 16; clusters need compute capability 9.0); 0 = automatic
 * from the windows' sizes. For benchmarks and tests. */
void glcv_track_cuda_set_cluster(glcv_track_cuda *cuda, int blocks);
/* The cluster size the last frame used. */
int glcv_track_cuda_cluster(const glcv_track_cuda *cuda);

/* Benchmarks: objects ids[0..n-1] (consecutive ids) start every run from `windows` (fresh
 * state); bench_time then queues `runs` frames of kernels only - the bin conversion of the last
 * host frame on the device when `hsv`, and the tracking - between two CUDA events, and returns
 * the GPU time per frame. */
glcv_status glcv_track_cuda_bench_prepare(glcv_track_cuda *cuda, const glcv_tm_rect *windows, const int *ids,
                                          int n);
glcv_status glcv_track_cuda_bench_time(glcv_track_cuda *cuda, const glcv_tm_config *c, int hsv, int runs,
                                       double *ms_per_frame);

#endif
