/* glcv correlation: Pearson's product-moment correlation coefficient (PMCC) of one reference image
 * against N images of the same size (Temizel et al., GPU Gems, chapter 34, "Cross correlation").
 *
 * For a reference x and an image y, the samples are all w * h * channels values (the channels
 * pooled, in the format's order), n of them:
 *   r = (n Sxy - Sx Sy) / sqrt((n Sxx - Sx^2) (n Syy - Sy^2))      in [-1, 1]
 * with the sums Sx = sum x, Sxx = sum x^2, Sy, Syy, Sxy = sum x y. The sums are exact integers
 * (64 bits; the products in 128), so r is exact up to the final square root and division, which
 * round once each in double precision: the paper's one-pass formula in float loses the low bits of
 * these sums at 320x240 and gives wrong coefficients; this one does not. r is 0 when the reference
 * or the image has no variance (every sample equal). Every engine gives the same coefficients.
 *
 * Engines: CUDA (the bank of images resident on the GPU and read once with 16-byte loads, the
 * reference kept in the read-only cache and L2; host batches stream through pinned memory with
 * the uploads overlapping the kernels) and CPU (the images shared by threads, AVX2 sums). Without a CUDA
 * device the AUTO engine uses the CPU and logs it once.
 *
 * Thread safety: every function that takes a glcv_correlate locks its mutex, so one object may
 * be shared between threads. Texture inputs follow the GL rules of glcv/core.h.
 */
#ifndef GLCV_CORRELATE_H
#define GLCV_CORRELATE_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct glcv_correlate glcv_correlate;

/* Zero fields mean defaults. */
typedef struct glcv_correlate_params {
    int width;  /* image width, required, 1..16384 */
    int height; /* image height, required, 1..16384 */
    /* The samples correlated: GRAY8 (default; w * h samples) or RGB8 (w * h * 3). Inputs of any
     * format are converted to it (colour to gray: (77 R + 150 G + 29 B + 128) >> 8; BGR is
     * reordered to RGB; alpha is dropped). */
    glcv_pixel_format format;
    /* Engines: CUDA, CPU; AUTO (the default) is CUDA when a device can be used, else the CPU
     * (logged once). FRAGMENT and COMPUTE are INVALID_ARGUMENT. */
    glcv_engine_mode engine;
    int threads;     /* CPU engine: the most threads, as glcv_match_params.threads; default 0 = OpenMP's
                        default (every core, or OMP_NUM_THREADS); 0..4096 */
    int no_simd;     /* CPU engine: nonzero = portable C only (for comparisons); default 0 = AVX2
                        where the processor has it */
    int cuda_device; /* CUDA engine: the (first) device when the current GL context is not on
                        one (glcv/cuda.h); default 0; >= 0 */
    /* CUDA engine: the number of devices the images are split across (contiguous shares, one per
     * device: devices cuda_device, cuda_device + 1, ...; each streams, or holds in its memory,
     * its share of a batch or of the resident bank); default 1; -1 = every device from
     * cuda_device on; at most 16. More than are present is UNSUPPORTED. Textures are correlated
     * on the first device only (they live on the GL context's device). The coefficients do not
     * depend on the number of devices. */
    int cuda_devices;
    int batch;       /* CUDA engine: images per piece when a host batch streams through the GPU;
                        default 0 = 256; 1..65536 */
    glcv_logger logger;
} glcv_correlate_params;

#define GLCV_CORRELATE_PARAMS(...) ((glcv_correlate_params){__VA_ARGS__})

/* Creates a correlator for images of one size. Needs no GL context.
 * Errors: INVALID_ARGUMENT (NULL, size out of range, unknown format, an engine the correlator does
 * not have), UNSUPPORTED (CUDA requested without a device or without CUDA support in this build),
 * OUT_OF_MEMORY, CUDA. *out is NULL on error. */
GLCV_API glcv_status glcv_correlate_create(const glcv_correlate_params *params, glcv_correlate **out);

/* Destroys the object. Accepts NULL and &NULL; sets *correlate to NULL. */
GLCV_API void glcv_correlate_destroy(glcv_correlate **correlate);

/* The resolved parameters (`engine` is CUDA or CPU, `no_simd` 1 when the CPU engine runs portable
 * C). Errors: INVALID_ARGUMENT. */
GLCV_API glcv_status glcv_correlate_get_params(glcv_correlate *correlate, glcv_correlate_params *out);

/* Sets the reference (any pixel format and stride, the object's size; copied).
 * Errors: INVALID_ARGUMENT, SIZE_MISMATCH, OUT_OF_MEMORY, CUDA. */
GLCV_API glcv_status glcv_correlate_set_reference(glcv_correlate *correlate, const glcv_image *reference);

/* Sets the reference from the caller's GL_TEXTURE_2D of the object's size (level 0, a colour
 * format with values 0..1, scaled by 255 and rounded; read, never modified), in the current GL
 * context. Errors: those of set_reference, NO_CONTEXT. */
GLCV_API glcv_status glcv_correlate_set_reference_texture(glcv_correlate *correlate, unsigned int texture);

/* Correlates n >= 1 host images (any format and stride, the object's size) with the reference and
 * writes their n coefficients to r. With the CUDA engine they stream through the GPU in pieces of
 * `batch` images, uploads overlapping the kernels. Errors: INVALID_ARGUMENT (NULL, n < 1, a bad
 * image), SIZE_MISMATCH, STATE (no reference), OUT_OF_MEMORY, CUDA. */
GLCV_API glcv_status glcv_correlate_images(glcv_correlate *correlate, const glcv_image *images, int n, double *r);

/* Correlates n image files (read with glcv_image_load and converted; each must have the object's
 * size), loading them one piece at a time. Errors: those of correlate_images (also a NULL or empty
 * paths[i], before any file is read), IO and CORRUPT_DATA (a file that cannot be read; the logger
 * names it). */
GLCV_API glcv_status glcv_correlate_files(glcv_correlate *correlate, const char *const *paths, int n, double *r);

/* Correlates n of the caller's GL_TEXTURE_2Ds (as for set_reference_texture). With the CUDA engine
 * on the GL context's device, GL_RGBA8 textures are registered with CUDA on first use (the
 * registrations kept, by name, size and format, up to 4096) and each piece of `batch` of them is
 * handed over in one map and read in place; other formats go through a GPU-side copy one by one.
 * Otherwise they are read back to host memory. Before deleting or re-specifying a texture given
 * here, call glcv_correlate_forget_texture (or destroy the object), as for the tracker
 * (glcv/track.h). Errors: those of correlate_images, NO_CONTEXT. */
GLCV_API glcv_status glcv_correlate_textures(glcv_correlate *correlate, const unsigned int *textures, int n, double *r);

/* Drops the CUDA registration of a texture given to glcv_correlate_textures, if there is one,
 * once the work queued on it is done; needs the GL context current when there is one. GLCV_OK for
 * a texture never registered or with the CPU engine. Errors: INVALID_ARGUMENT, CUDA. */
GLCV_API glcv_status glcv_correlate_forget_texture(glcv_correlate *correlate, unsigned int texture);

/* The image bank, resident: copies n >= 1 host images into the engine's memory (GPU memory with
 * CUDA) once, replacing the last bank; glcv_correlate_bank_run then correlates them with the
 * current reference as often as needed, without copying them again.
 * Errors: as for correlate_images (the reference may be set later). */
GLCV_API glcv_status glcv_correlate_bank_load(glcv_correlate *correlate, const glcv_image *images, int n);

/* Correlates the resident bank with the reference: writes bank-size coefficients to r.
 * Errors: INVALID_ARGUMENT, STATE (no bank or no reference), CUDA. */
GLCV_API glcv_status glcv_correlate_bank_run(glcv_correlate *correlate, double *r);

/* The number of images in the resident bank (0 when none); -1 on a NULL argument. */
GLCV_API int glcv_correlate_bank_size(glcv_correlate *correlate);

/* Times of the last call that correlated, in ms: CUDA "upload", "kernel", "download" (CUDA events,
 * summed over the pieces; they overlap when streaming) and "total" (first upload to last
 * download), GLCV_CLOCK_GPU, each the largest over the devices when there are several (they
 * work side by side); CPU "correlate" (wall time, GLCV_CLOCK_HOST). Writes up to `capacity` entries and their number to
 * *count. Errors: INVALID_ARGUMENT. */
GLCV_API glcv_status glcv_correlate_timings(glcv_correlate *correlate, glcv_timing *out, int capacity,
                                           int *count);

#ifdef __cplusplus
}
#endif
#endif
