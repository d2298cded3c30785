/* The segmenter's CPU implementation: the same decisions as the GPU passes, in C, in double
 * precision. It is the CPU engine and the tests' oracle. Images here are packed RGB
 * (3 bytes per pixel, row-major, no padding). Subsets: s = (x & 1) + 2 * (y & 1), i.e.
 * 0 = k, 1 = l, 2 = m, 3 = n in the paper's names. */
#ifndef GLCV_SEGMENT_CPU_H
#define GLCV_SEGMENT_CPU_H

#include <glcv/core.h>

/* The numbers the decision rule needs, resolved. b[0] = B1, b[1] = B2. */
typedef struct glcv_segment_values {
    double ts, odc, b[2];
} glcv_segment_values;

typedef struct glcv_segment_cpu {
    int width, height;
    uint8_t *background;   /* RGB, the background the rule uses (integers 0..255) */
    float *background_f;   /* RGB, adapted background before rounding; NULL until adaptation runs */
    double *learn_sum;     /* RGB sums while learning; NULL otherwise */
    int learn_count;
    int32_t *fore, *back, *cross; /* window sums of the last frame */
    uint8_t *m_min[2];     /* thresholds for B1 and B2 (0..13, 13 = never) */
    uint8_t *mask;         /* 0/1 per pixel: the current mask and the temporal prior */
} glcv_segment_cpu;

glcv_status glcv_segment_cpu_init(glcv_segment_cpu *cpu, int width, int height);
void glcv_segment_cpu_free(glcv_segment_cpu *cpu);

/* Converts a host image (RGB8, RGBA8, BGR8, BGRA8; any stride) to packed RGB. */
void glcv_segment_cpu_to_rgb(const glcv_image *image, uint8_t *rgb);

/* Sets the background (packed RGB) and clears the mask. */
void glcv_segment_cpu_set_background(glcv_segment_cpu *cpu, const uint8_t *rgb);

/* Learning: mean of the added frames, rounded half up; end sets it as the background. */
glcv_status glcv_segment_cpu_learn_begin(glcv_segment_cpu *cpu);
void glcv_segment_cpu_learn_add(glcv_segment_cpu *cpu, const uint8_t *rgb);
void glcv_segment_cpu_learn_end(glcv_segment_cpu *cpu);

/* Window sums and both thresholds for a frame (packed RGB). */
void glcv_segment_cpu_thresholds(glcv_segment_cpu *cpu, const uint8_t *frame, const glcv_segment_values *v);

/* One MRF iteration: updates the subsets order[0..3] in turn with the thresholds of `set`
 * (0 = B1, 1 = B2). */
void glcv_segment_cpu_iterate(glcv_segment_cpu *cpu, const int order[4], int set);

/* Background adaptation where the mask is background: bg_f = bg_f + rate * (frame - bg_f) in
 * float, then background = round(bg_f). */
glcv_status glcv_segment_cpu_adapt(glcv_segment_cpu *cpu, const uint8_t *frame, float rate);

/* D^2: the smallest eigenvalue of [[fore + Odc, cross + Odc], [cross + Odc, back + Odc]],
 * evaluated without cancellation (see segment_cpu.c). */
double glcv_segment_d2(int32_t fore, int32_t back, int32_t cross, double odc);

/* The decision rule for one pixel: the smallest integer M (0..13, 13 = never) with
 * D^2 > ts + b * (12 - 2M), D^2 being the smallest eigenvalue with darkness compensation. */
int glcv_segment_m_min(int32_t fore, int32_t back, int32_t cross, double ts, double odc, double b);

#endif
