/* The matcher (private): the object shared by its files, and what each offers the others.
 *   match.c       the object: parameters, template, region, validation, dispatch, results
 *   match_cpu.c   the CPU implementation (portable C, SSE4.1 and AVX2 kernels chosen at run
 *                 time, OpenMP over the rows of positions): the CPU engine and the tests' oracle
 *   match_cuda.c  the CUDA engine's host side; its kernels are cuda/match.cu (match_kernels.h)
 * Images and templates are held in planar channels by both engines. Every function here is
 * called with the object's mutex held. */
#ifndef GLCV_MATCH_INTERNAL_H
#define GLCV_MATCH_INTERNAL_H

#include <glcv/match.h>

#include "cuda_internal.h"
#include "gl.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#define GLCV_MATCH_MAX_SIZE 16384  /* largest image side */
#define GLCV_MATCH_MAX_CHUNKS 64   /* CUDA pieces per device */
#define GLCV_MATCH_MAX_DEVICES 16  /* CUDA devices one matcher splits over */

/* Bytes of readable padding after the last pixel of every plane row: the SIMD kernels read up to
 * 40 bytes past the last position's template row. */
#define GLCV_MATCH_ROW_PAD 64

/* How a score map stores its values. */
typedef enum glcv_match_store {
    GLCV_MATCH_STORE_U32 = 0, /* SAD, SSD, LINF whose largest sum fits 32 bits; worst = UINT32_MAX */
    GLCV_MATCH_STORE_U64 = 1, /* SAD, SSD of templates too large for 32 bits; worst = UINT64_MAX */
    GLCV_MATCH_STORE_F32 = 2  /* ZNCC; worst = -FLT_MAX */
} glcv_match_store;

/* Image planes: `channels` planes of `height` rows of `pitch` bytes (pitch >= width +
 * GLCV_MATCH_ROW_PAD, a multiple of 64), plane c at data + c * plane_size. */
typedef struct glcv_match_planes {
    int width, height, channels;
    size_t pitch, plane_size;
    uint8_t *data; /* 64-byte aligned */
} glcv_match_planes;

/* A template prepared for matching: planar pixels, the mask, and the sums ZNCC needs. */
typedef struct glcv_match_tmpl {
    int width, height, channels;
    uint8_t *pixels;    /* channels planes of width * height */
    uint8_t *mask;      /* width * height, 1 = used, 0 = excluded; NULL = every pixel used */
    int64_t count;      /* used pixels (per channel) */
    int64_t sum[4];     /* per channel: sum of the used pixels */
    int64_t sum_sq[4];  /* per channel: sum of their squares */
    /* ZNCC: sum over channels of count * sum_sq - sum^2 (>= 0), as a double; exact up to 2^53,
     * which covers every template up to 16384 x 16384 x 4 to within one rounding. */
    double var;
    /* The used columns of each template row (for the column kernels): cols[r * width + k] for
     * k < ncols[r]. */
    int *cols;
    int *ncols;
} glcv_match_tmpl;

/* A score map: width x height values of `store` type, row-major, no padding. */
typedef struct glcv_match_map {
    int width, height;
    glcv_match_store store;
    void *data;
} glcv_match_map;

/* The instruction set a CPU run uses. */
typedef enum glcv_match_isa {
    GLCV_MATCH_ISA_PORTABLE = 0,
    GLCV_MATCH_ISA_SSE41 = 1,
    GLCV_MATCH_ISA_AVX2 = 2
} glcv_match_isa;

/* The best instruction set this processor runs. */
glcv_match_isa glcv_match_cpu_best_isa(void);

/* How a metric stores its scores for a template of `count` used pixels and `channels` channels. */
glcv_match_store glcv_match_store_for(glcv_match_metric metric, int64_t count, int channels);

/* ZNCC accumulates 32-bit sums per channel while count <= this (count * 65025 < 2^32). */
#define GLCV_MATCH_ZNCC_NARROW_MAX 66051

/* Allocates / frees planes (zeroed, so the padding reads as 0). */
glcv_status glcv_match_planes_alloc(glcv_match_planes *planes, int width, int height, int channels);
void glcv_match_planes_free(glcv_match_planes *planes);

/* Fills planes from interleaved pixels of `channels` bytes per pixel (rows `stride` bytes apart). */
void glcv_match_planes_fill(glcv_match_planes *planes, const uint8_t *pixels, size_t stride);

/* Prepares a template from interleaved pixels (`channels` bytes per pixel) and an optional mask
 * (nonzero = used; `mask_stride` bytes per row). INVALID_ARGUMENT when the mask keeps no pixel. */
glcv_status glcv_match_tmpl_init(glcv_match_tmpl *t, const uint8_t *pixels, size_t stride, int width, int height,
                                 int channels, const uint8_t *mask, size_t mask_stride);
void glcv_match_tmpl_free(glcv_match_tmpl *t);

/* The metric's worst value in a store. */
void glcv_match_map_fill_worst(glcv_match_map *map);

/* Positions [x0, x1) x [y0, y1) (top-left corners, x1 <= W - w + 1, y1 <= H - h + 1). */
typedef struct glcv_match_region {
    int x0, y0, x1, y1;
} glcv_match_region;

/* Matches the template over a region of the planes and writes those positions of `map` (the rest
 * of the map is left as it is). `threads` 0 = OpenMP's default. */
void glcv_match_cpu_run(const glcv_match_planes *planes, const glcv_match_tmpl *t, glcv_match_metric metric,
                        glcv_match_region region, glcv_match_map *map, glcv_match_isa isa, int threads);

/* The ZNCC coefficient from exact sums (shared with the CUDA path's definition):
 * num = sum_c (n * sIT_c - sI_c * sT_c), var_i = sum_c (n * sII_c - sI_c^2), var_t from the template:
 * r = num / sqrt(var_i * var_t), 0 when either variance is 0, clamped to [-1, 1]. */
float glcv_match_zncc_value(double num, double var_i, double var_t);

/* ---- the object ---------------------------------------------------------------------------------- */

typedef struct glcv_match_cuda glcv_match_cuda; /* the CUDA engine's state (match_cuda.c) */

struct glcv_match {
    pthread_mutex_t lock;
    glcv_match_params p; /* resolved; p.engine is CUDA or CPU */
    int channels;
    glcv_match_isa isa;

    glcv_match_tmpl tmpl;
    int have_template;
    glcv_rect roi;
    int have_roi;

    glcv_match_map map;       /* host scores (pinned with the CUDA engine) */
    int have_map;
    glcv_match_region region; /* positions evaluated by the last match */

    glcv_match_planes planes; /* CPU engine */
    glcv_image scratch;       /* an input converted to the working format */
    uint8_t *mapped;          /* glcv_match_map_image memory (pinned with CUDA) */
    int mapped_pending;

    glcv_timing timings[4];
    int n_timings;

    unsigned int map_texture;
    glcv_gl_token map_context; /* the context map_texture was made in: another never sees the name */
    int nms_auto; /* nms_distance follows the template's size */

    glcv_match_cuda *cuda; /* the CUDA engine, NULL with the CPU engine */
};

/* ---- the CUDA engine (match_cuda.c; without CUDA in the build each returns UNSUPPORTED) ---------- */

/* Starts the CUDA engine on `device` and the devices after it (m->p.cuda_devices of them, -1 =
 * every one from `device` on), in pieces of m->p.cuda_chunks rows, and allocates m->map.data and
 * m->mapped in pinned memory; sets m->cuda, m->p.cuda_device and m->p.cuda_devices.
 * UNSUPPORTED (logged) when the devices asked for are not there. */
glcv_status glcv_match_cuda_create(glcv_match *m, const glcv_cuda_device *device);
/* Frees the engine, m->map.data and m->mapped. */
void glcv_match_cuda_destroy(glcv_match *m);
/* Puts m->tmpl on every device (constant memory when the pool has room). */
glcv_status glcv_match_cuda_set_template(glcv_match *m);
/* Matches host pixels of any format (`in_staging`: they are m->mapped) into m->map; times in
 * m->timings. */
glcv_status glcv_match_cuda_image(glcv_match *m, const glcv_image *image, int in_staging);
/* Matches a GL texture through the CUDA-GL bridge on the engine's first device, when that is the
 * current GL context's device; UNSUPPORTED (not logged) otherwise: the caller reads it back. */
glcv_status glcv_match_cuda_texture(glcv_match *m, unsigned int texture);
/* Drops the bridge's registration of `texture` (OK when there is none, or no bridge). */
glcv_status glcv_match_cuda_forget_texture(glcv_match *m, unsigned int texture);
/* Tests: whether the last texture went in place (1) or through the pixel buffer (0), and how many
 * textures are registered; -1 and 0 without a bridge. */
void glcv_match_texture_stats(glcv_match *m, int *direct, int *registered);

#endif
