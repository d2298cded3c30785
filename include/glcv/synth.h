/* glcv synthetic scene: a deterministic test sequence with known ground truth.
 *
 * A textured background (smooth colour gradients and a checker of soft tiles), moving
 * objects (coloured discs and boxes, and dark objects), per-frame Gaussian sensor noise, and a
 * global illumination change (brightness ramps to `illumination_gain` over the sequence).
 * The same parameters always give the same frames, on every machine.
 *
 * Thread safety: a glcv_synth object is used by one thread at a time; different objects are
 * independent. No GL is used.
 */
#ifndef GLCV_SYNTH_H
#define GLCV_SYNTH_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct glcv_synth glcv_synth;

typedef struct glcv_synth_params {
    int width;               /* default 320 */
    int height;              /* default 240 */
    int frames;              /* length of the sequence; default 60 */
    int objects;             /* moving objects, 1..16; default 4 (at least one dark) */
    float noise_sigma;       /* sensor noise standard deviation in grey levels; default 2.0; <0 = none */
    float illumination_gain; /* brightness factor reached at the last frame; default 0.85; must be > 0 */
    uint32_t seed;           /* 0 = default seed 1 */
} glcv_synth_params;

#define GLCV_SYNTH_PARAMS(...) ((glcv_synth_params){__VA_ARGS__})

/* Creates a generator. Errors: INVALID_ARGUMENT (NULL, negative sizes, NaN, gain <= 0, objects
 * out of range), OUT_OF_MEMORY. *out is NULL on error. */
GLCV_API glcv_status glcv_synth_create(const glcv_synth_params *params, glcv_synth **out);
/* Destroys a generator; accepts NULL and &NULL; sets *synth to NULL. */
GLCV_API void glcv_synth_destroy(glcv_synth **synth);
/* The resolved parameters (defaults filled in). */
GLCV_API void glcv_synth_get_params(const glcv_synth *synth, glcv_synth_params *out);

/* Renders the clean background (no objects, no noise, illumination of frame 0) into `out`,
 * an RGB8 or RGBA8 image of the generator's size. Errors: INVALID_ARGUMENT, SIZE_MISMATCH. */
GLCV_API glcv_status glcv_synth_background(const glcv_synth *synth, glcv_image *out);

/* Renders frame `index` (0 <= index < frames) into `frame` (RGB8 or RGBA8, generator's size),
 * and, if `truth` is not NULL, the ground-truth object mask into it (GRAY8: 255 object, 0
 * background). Frames can be rendered in any order. Errors: INVALID_ARGUMENT, SIZE_MISMATCH. */
GLCV_API glcv_status glcv_synth_frame(const glcv_synth *synth, int index, glcv_image *frame, glcv_image *truth);

#ifdef __cplusplus
}
#endif
#endif
