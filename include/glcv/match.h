/* glcv template matching: a template slid over an image, one score per position (Mendez, Lorenzo
 * and Castrillon, "Comparative performance of GPU, SIMD and OpenMP systems for raw template
 * matching in computer vision", 2010).
 *
 * Positions are anchored at the template's upper-left corner, as in the paper: the score at (x, y)
 * compares template pixel (i, j) with image pixel (x + i, y + j), for 0 <= x <= W - w and
 * 0 <= y <= H - h (W x H the image, w x h the template). The score map has the image's size; the
 * band on the right (w - 1 columns) and at the bottom (h - 1 rows), and every position outside the
 * region of interest, hold the metric's worst value. A match's centre is (x + w/2, y + h/2)
 * (integer division), the paper's offset.
 *
 * Metrics, with the sums over the template's pixels (those its mask keeps) and its channels:
 *   SAD   sum |I - T|                                   exact integer; smaller is better
 *   SSD   sum (I - T)^2                                 exact integer; smaller is better
 *   LINF  max |I - T|                                   exact integer 0..255; smaller is better
 *   ZNCC  sum_c sum (I - mean_c(I)) (T - mean_c(T)) / sqrt(sum_c sum (I - mean_c(I))^2 *
 *                                                       sum_c sum (T - mean_c(T))^2)
 *         zero-mean normalised cross-correlation (the sliding Pearson coefficient, with the means
 *         taken per channel, as OpenCV's TM_CCOEFF_NORMED); -1..1, larger is better; 0 where the
 *         window or the template has no variance. The sums are exact integers; only the final
 *         square root and division round (double precision, stored as float).
 * Multi-channel images add the channels' results (LINF takes the maximum over them). Every engine
 * gives the same scores: integer metrics bit for bit, ZNCC to within 1e-5 (in practice the same
 * floats).
 *
 * Engines: CUDA (template in constant memory, shared-memory tiles, byte-SIMD absolute differences,
 * uploads on pinned memory overlapped with the kernels on several streams, the image split across
 * several GPUs on request) and CPU (SSE4.1 mpsadbw / AVX2 vmpsadbw for SAD, AVX2 for the other
 * metrics, chosen at run time; rows shared by threads; a portable C path). Without a CUDA device the
 * AUTO engine uses the CPU and logs it once.
 *
 * Thread safety: every function that takes a glcv_match locks its mutex, so one object may be
 * shared between threads. Texture inputs and the map texture follow the GL rules of glcv/core.h.
 */
#ifndef GLCV_MATCH_H
#define GLCV_MATCH_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct glcv_match glcv_match;

/* The similarity measure. 0 (DEFAULT) is SAD. */
typedef enum glcv_match_metric {
    GLCV_MATCH_METRIC_DEFAULT = 0,
    GLCV_MATCH_SAD = 1,  /* sum of absolute differences (L1) */
    GLCV_MATCH_SSD = 2,  /* sum of squared differences (L2 squared) */
    GLCV_MATCH_LINF = 3, /* largest absolute difference (L-infinity) */
    GLCV_MATCH_ZNCC = 4  /* zero-mean normalised cross-correlation */
} glcv_match_metric;

/* "sad", "ssd", "linf", "zncc" ("sad" for DEFAULT); "?" for unknown values. */
GLCV_API const char *glcv_match_metric_string(glcv_match_metric metric);
/* Parses the names above; INVALID_ARGUMENT for anything else. */
GLCV_API glcv_status glcv_match_metric_parse(const char *name, glcv_match_metric *out);

/* The CPU engine's instruction set. 0 (DEFAULT) is the best one the processor has. Asking for one
 * the processor lacks is UNSUPPORTED at creation. */
typedef enum glcv_match_simd {
    GLCV_MATCH_SIMD_DEFAULT = 0,
    GLCV_MATCH_SIMD_NONE = 1,  /* portable C */
    GLCV_MATCH_SIMD_SSE41 = 2, /* mpsadbw for SAD; the other metrics use portable C */
    GLCV_MATCH_SIMD_AVX2 = 3   /* vmpsadbw for SAD; AVX2 for SSD, LINF and ZNCC */
} glcv_match_simd;

/* "none", "sse4.1", "avx2" ("default" for DEFAULT); "?" for unknown values. */
GLCV_API const char *glcv_match_simd_string(glcv_match_simd simd);

/* Zero fields mean defaults. */
typedef struct glcv_match_params {
    int width;  /* image width, required, 1..16384 */
    int height; /* image height, required, 1..16384 */
    /* The channels matched: GRAY8 (default, 1 channel), RGB8 or BGR8 (3), RGBA8 or BGRA8 (4,
     * alpha included). Images and templates of any format are converted to it (colour to gray:
     * (77 R + 150 G + 29 B + 128) >> 8; gray to colour replicates; alpha is 255 where the source
     * has none). */
    glcv_pixel_format format;
    glcv_match_metric metric; /* default SAD; glcv_match_set_metric changes it */
    /* Engines: CUDA, CPU; AUTO (the default) is CUDA when a device can be used, else the CPU
     * (logged once). FRAGMENT and COMPUTE are INVALID_ARGUMENT. */
    glcv_engine_mode engine;
    /* Best-k suppression: a position closer than this to a better hit in both x and y
     * (|dx| < d and |dy| < d) is not reported. Default: half the template's smaller side,
     * rounded up; 1 reports neighbouring positions too. 1..16384. */
    int nms_distance;
    int threads;          /* CPU engine: the most threads; default 0 = OpenMP's default (every core,
                             or OMP_NUM_THREADS); a match uses fewer when it is too short to give
                             each half a millisecond. The library's own threads, which wait
                             without spinning: the application's OpenMP settings are left alone.
                             0..4096 */
    glcv_match_simd simd; /* CPU engine: instruction set; default the best available */
    int cuda_device;      /* CUDA engine: the first device when the current GL context is not on
                             one (glcv/cuda.h); default 0; >= 0 */
    /* CUDA engine: the number of devices the image is split across (bands of rows, one per
     * device, devices cuda_device, cuda_device + 1, ...); default 1; -1 = every device from
     * cuda_device on. More than are present is UNSUPPORTED. */
    int cuda_devices;
    /* CUDA engine: pieces (bands of rows) per device, each uploaded, matched and read back on its
     * own stream so that transfers overlap the kernels; default 0 = 1 for images up to 1
     * megapixel, 4 above; 1..64. */
    int cuda_chunks;
    glcv_logger logger;
} glcv_match_params;

#define GLCV_MATCH_PARAMS(...) ((glcv_match_params){__VA_ARGS__})

/* One match: the template's top-left corner, its centre (x + w/2, y + h/2) and the score. */
typedef struct glcv_match_hit {
    int x, y;
    int cx, cy;
    double score;
} glcv_match_hit;

/* Creates a matcher for images of one size. Needs no GL context.
 * Errors: INVALID_ARGUMENT (NULL, size out of range, unknown enum or format, an engine the matcher
 * does not have), UNSUPPORTED (CUDA requested without a device or without CUDA support in this
 * build; more devices than present; a SIMD level the processor lacks), OUT_OF_MEMORY, CUDA.
 * *out is NULL on error. */
GLCV_API glcv_status glcv_match_create(const glcv_match_params *params, glcv_match **out);

/* Destroys the object (its map texture too when a GL context is current). Accepts NULL and &NULL;
 * sets *match to NULL. */
GLCV_API void glcv_match_destroy(glcv_match **match);

/* The resolved parameters: defaults filled in (nms_distance 0 until a template is set), `engine`
 * the one in use (CUDA or CPU), `simd` the level the CPU engine uses, `cuda_devices` and
 * `cuda_chunks` as used. Errors: INVALID_ARGUMENT. */
GLCV_API glcv_status glcv_match_get_params(glcv_match *match, glcv_match_params *out);

/* Changes the metric for the following matches (the template is kept). Errors: INVALID_ARGUMENT. */
GLCV_API glcv_status glcv_match_set_metric(glcv_match *match, glcv_match_metric metric);

/* Sets the template (any pixel format, 1x1 up to the image's size, any stride) and an optional
 * mask (NULL = every pixel counts; else GRAY8 of the template's size: a pixel counts where the mask
 * is nonzero, as OpenCV's 8-bit masks). Both are copied. Forgets the last score map.
 * Errors: INVALID_ARGUMENT (bad image, template larger than the image, a mask that is not GRAY8 or
 * keeps no pixel), SIZE_MISMATCH (mask size), OUT_OF_MEMORY, CUDA. */
GLCV_API glcv_status glcv_match_set_template(glcv_match *match, const glcv_image *templ, const glcv_image *mask);

/* Sets the template from the caller's GL_TEXTURE_2D of width x height (level 0, a colour format with
 * values 0..1, scaled by 255 and rounded; read, never modified), in the current GL context.
 * Errors: those of glcv_match_set_template, NO_CONTEXT, GL. */
GLCV_API glcv_status glcv_match_set_template_texture(glcv_match *match, unsigned int texture, int width, int height,
                                                     const glcv_image *mask);

/* Restricts the search to a region of the image: a position counts when the template placed there
 * lies entirely inside `roi`. NULL = the whole image (the default). The region is clipped to the
 * image; one smaller than the template leaves no position (best returns none).
 * Errors: INVALID_ARGUMENT (width or height < 1). */
GLCV_API glcv_status glcv_match_set_roi(glcv_match *match, const glcv_rect *roi);

/* Matches the template against an image of the object's size (any pixel format and stride) and
 * keeps the score map. Returns when the map is in host memory.
 * Errors: INVALID_ARGUMENT, SIZE_MISMATCH, STATE (no template), OUT_OF_MEMORY, CUDA. */
GLCV_API glcv_status glcv_match_image(glcv_match *match, const glcv_image *image);

/* Matches against the caller's GL_TEXTURE_2D of the object's size, read in the current context
 * (as for glcv_match_set_template_texture). With the CUDA engine on the GL context's device, a
 * GL_RGBA8 texture is registered with CUDA on first use and the registration kept (by name, size
 * and internal format, checked every call); each call maps it and the kernels read it in place
 * (other formats are copied by GL into a buffer of the matcher's). Before deleting or
 * re-specifying a texture given here, call glcv_match_forget_texture (or destroy the matcher), as
 * for the tracker (glcv/track.h). Errors: those of glcv_match_image, NO_CONTEXT. */
GLCV_API glcv_status glcv_match_image_texture(glcv_match *match, unsigned int texture);

/* Drops the CUDA registration of a texture given to glcv_match_image_texture, if there is one,
 * once the work queued on it is done; needs the GL context current when there is one. Nothing to
 * do (GLCV_OK) for a texture never registered or with the CPU engine. Errors: INVALID_ARGUMENT,
 * CUDA. */
GLCV_API glcv_status glcv_match_forget_texture(glcv_match *match, unsigned int texture);

/* Zero-copy input: returns in `out` an image of the object's size and format (stride width *
 * channels) whose pixels lie in pinned memory that the GPU copies from directly (plain memory with
 * the CPU engine). Fill it, then call glcv_match_image_mapped. Valid until the object is destroyed;
 * its content is the caller's between the two calls. Errors: INVALID_ARGUMENT, OUT_OF_MEMORY. */
GLCV_API glcv_status glcv_match_map_image(glcv_match *match, glcv_image *out);

/* Matches the image written into the memory of glcv_match_map_image (as glcv_match_image).
 * Errors: STATE (no map_image before, or no template), and those of glcv_match_image. */
GLCV_API glcv_status glcv_match_image_mapped(glcv_match *match);

/* Copies the last score map (width x height doubles, row-major; `stride` = doubles between rows,
 * 0 = width) into caller's memory. SAD, SSD and LINF give their exact integers, ZNCC its
 * coefficient; positions not evaluated (the border band, outside the ROI) hold +HUGE_VAL for the
 * distances and -HUGE_VAL for ZNCC. The buffer holds (height - 1) * stride + width doubles.
 * Errors: INVALID_ARGUMENT (NULL, a stride below the width), STATE (nothing matched yet). */
GLCV_API glcv_status glcv_match_read_scores(glcv_match *match, double *out, size_t stride);

/* The last score map scaled for display (width x height floats, `stride` as above): 1 at the best
 * evaluated score, 0 at the worst, linear in between (all 1 when every evaluated score is equal);
 * 0 where nothing was evaluated. Errors: as for read_scores. */
GLCV_API glcv_status glcv_match_read_normalized(glcv_match *match, float *out, size_t stride);

/* The normalised map (as glcv_match_read_normalized) in a GL_TEXTURE_2D, GL_R32F, width x height,
 * row order as the image, made in the current context on first use and refreshed by each call
 * (called with another context current, it makes a new one there and leaves the old one alone).
 * Owned by the matcher: valid until it is destroyed (GL rules: glcv/core.h). Returns 0 on error
 * (logged): no context, nothing matched yet. */
GLCV_API unsigned int glcv_match_map_texture(glcv_match *match);

/* The k best positions of the last map, best first (ties: the smaller y, then the smaller x), each
 * at least nms_distance away from every better one reported (see the params). Writes up to k hits
 * and their number to *count (fewer when fewer positions were evaluated).
 * Errors: INVALID_ARGUMENT (NULL, k < 1), STATE (nothing matched yet), OUT_OF_MEMORY. */
GLCV_API glcv_status glcv_match_best(glcv_match *match, int k, glcv_match_hit *hits, int *count);

/* Times of the last match, in ms: with the CUDA engine "upload", "kernel" and "download" (CUDA
 * events on the first device, summed over its pieces; with several pieces they overlap) and
 * "total" (upload start to download end), all GLCV_CLOCK_GPU; with the CPU engine "convert" (copy
 * into the padded planes) and "match", GLCV_CLOCK_HOST. Writes up to `capacity` entries and their
 * number to *count.
 * Errors: INVALID_ARGUMENT. */
GLCV_API glcv_status glcv_match_timings(glcv_match *match, glcv_timing *out, int capacity, int *count);

#ifdef __cplusplus
}
#endif
#endif
