/* The tracker's CPU implementation: the CPU engine and the tests' oracle. It runs the shared
 * arithmetic of track_math.h over a bin image (one uint16 bin index per pixel, row-major,
 * `width` per row), exactly as the CUDA kernels do: integer moment sums, the same
 * double-precision window updates and the same fixed-order Bhattacharyya reduction. */
#ifndef GLCV_TRACK_CPU_H
#define GLCV_TRACK_CPU_H

#include <glcv/core.h>

#include "track_math.h"

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
 * rows of `mask_stride` bytes, nonzero = counts; NULL = all). */
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

#endif
