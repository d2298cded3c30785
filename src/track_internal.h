/* Private hooks of the tracker for benchmarks and tests (not part of the public API). */
#ifndef GLCV_TRACK_INTERNAL_H
#define GLCV_TRACK_INTERNAL_H

#include <glcv/track.h>

/* CUDA engine: blocks per object (1, 2, 4, 8, 16; more than 1 needs a device of compute
 * capability 9.0, whose thread-block clusters they form); 0 = automatic. UNSUPPORTED with the
 * CPU engine or a block count the device cannot run. */
glcv_status glcv_track_set_cuda_cluster(glcv_track *track, int blocks);
/* The cluster size the CUDA engine's last frame used (0 with the CPU engine). */
int glcv_track_cuda_cluster_used(glcv_track *track);

/* CUDA engine, benchmarks: the first n objects (their ids must be 0..n-1) will start every run
 * from windows[i], with a fresh state. Needs a host frame tracked before (its pixels stay on
 * the device). Errors: UNSUPPORTED (CPU engine), STATE, GL (CUDA). */
glcv_status glcv_track_bench_prepare(glcv_track *track, const glcv_track_rect *windows, int n);
/* Queues `runs` frames of the kernels alone - the HSV/bin conversion of that frame (without a
 * mask) when `hsv` is nonzero, then the tracking of the prepared objects - between two CUDA
 * events and returns the GPU time per frame in milliseconds. */
glcv_status glcv_track_bench_time(glcv_track *track, int hsv, int runs, double *ms_per_frame);

/* The texture inputs of the CUDA engine (all 0 with the CPU engine or before its first
 * texture frame). */
typedef struct glcv_track_texture_stats {
    int direct;          /* the last texture frame was read through registered textures */
    int registered;      /* caller textures registered with CUDA now */
    int registrations;   /* registrations made, in all (a re-specified texture is registered again) */
    int refused;         /* registrations CUDA refused or arrays of an unexpected format, in all */
    int texture_objects; /* CUDA texture objects built, in all (again when a mapped array changes) */
} glcv_track_texture_stats;

glcv_status glcv_track_texture_stats_get(glcv_track *track, glcv_track_texture_stats *out);

#endif
