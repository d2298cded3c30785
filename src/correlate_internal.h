/* The correlator (private): the object shared by its files, and what each offers the others.
 *   correlate.c       the object: parameters, reference, validation, files and textures, dispatch
 *   correlate_cpu.c   the CPU implementation (OpenMP over the images, AVX2 sums with a portable C
 *                     path): the CPU engine and the tests' oracle
 *   correlate_cuda.c  the CUDA engine's host side; its kernels are cuda/correlate.cu
 *                     (correlate_kernels.h)
 * Every function here is called with the object's mutex held. */
#ifndef GLCV_CORRELATE_INTERNAL_H
#define GLCV_CORRELATE_INTERNAL_H

#include <glcv/correlate.h>

#include "cuda_internal.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct glcv_correlate_cuda glcv_correlate_cuda; /* the CUDA engine's state (correlate_cuda.c) */

#define GLCV_CORRELATE_MAX_DEVICES 16 /* CUDA devices one correlator splits over */

struct glcv_correlate {
    pthread_mutex_t lock;
    glcv_correlate_params p; /* resolved */
    int channels;
    int avx2;                /* the CPU engine's sums use AVX2 */
    size_t samples;          /* w * h * channels */
    size_t padded;           /* samples rounded up to 16 bytes (the CUDA layout) */
    uint8_t *reference;      /* packed samples, zero padded to `padded` */
    int have_reference;
    int64_t ref_sum, ref_sum_sq;
    uint8_t *bank;           /* CPU engine: bank_n images of `samples` bytes */
    int bank_n;
    glcv_timing timings[4];
    int n_timings;
    glcv_correlate_cuda *cuda; /* the CUDA engine, NULL with the CPU engine */
    int images_per_block;      /* glcv_correlate_set_images_per_block; 0 = the kernel launcher's choice */
};

/* ---- the CPU implementation (correlate_cpu.c) ------------------------------------------------------ */

/* Nonzero when this processor runs the AVX2 sums. */
int glcv_correlate_cpu_avx2(void);
/* Copies a host image of any format into packed samples of the working format. */
void glcv_correlate_pack(const glcv_correlate *c, const glcv_image *image, uint8_t *dst);
/* r of n host images (any format) against the reference; times in c->timings. */
glcv_status glcv_correlate_cpu_images(glcv_correlate *c, const glcv_image *images, int n, double *r);
/* r of the resident bank (c->bank) against the reference; times in c->timings. */
void glcv_correlate_cpu_bank(glcv_correlate *c, double *r);

/* ---- the CUDA engine (correlate_cuda.c; without CUDA in the build each returns UNSUPPORTED) ------ */

glcv_status glcv_correlate_cuda_create(glcv_correlate *c, const glcv_cuda_device *device);
void glcv_correlate_cuda_destroy(glcv_correlate *c);
/* Copies c->reference to the device. */
glcv_status glcv_correlate_cuda_set_reference(glcv_correlate *c);
/* Streams n host images through the device in pieces of params.batch; times in c->timings. */
glcv_status glcv_correlate_cuda_images(glcv_correlate *c, const glcv_image *images, int n, double *r);
/* Streams n GL textures through the CUDA-GL bridge when the engine is on the current GL context's
 * device; UNSUPPORTED (not logged) otherwise: the caller reads them back. */
glcv_status glcv_correlate_cuda_textures(glcv_correlate *c, const unsigned int *textures, int n, double *r);
/* Drops the bridge's registration of `texture` (OK when there is none, or no bridge). */
glcv_status glcv_correlate_cuda_forget_texture(glcv_correlate *c, unsigned int texture);
/* Tests: whether the last hand-over went in place (1) or through the pixel buffer (0), and how many
 * textures are registered; -1 and 0 without a bridge. */
void glcv_correlate_texture_stats(glcv_correlate *c, int *direct, int *registered);
/* The resident bank in device memory, and its coefficients against the reference. */
glcv_status glcv_correlate_cuda_bank_load(glcv_correlate *c, const glcv_image *images, int n);
glcv_status glcv_correlate_cuda_bank_run(glcv_correlate *c, double *r);

/* ---- for tests and benchmarks ------------------------------------------------------------------- */

/* CUDA engine: the correlation kernel runs k images per block (1, 2 or 4) wherever an image is not
 * split into slices, instead of the launcher's choice; k = 0 restores the choice. UNSUPPORTED with
 * the CPU engine, INVALID_ARGUMENT for another k. Takes the object's mutex. */
glcv_status glcv_correlate_set_images_per_block(glcv_correlate *c, int k);

#endif
