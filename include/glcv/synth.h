/* glcv synthetic scene: a deterministic test sequence with known ground truth.
 *
 * A textured background (smooth colour gradients and a checker of soft tiles), moving
 * objects (coloured discs and boxes, and dark objects), per-frame Gaussian sensor noise, and a
 * global illumination change (brightness ramps to `illumination_gain` over the sequence).
 * The DYNAMIC scene adds three parts of the background that move by themselves, as water, trees
 * and lamps do in real video: rippling water with glints (the lower half), foliage swaying by a few
 * pixels (upper right) and two patches whose brightness flickers from frame to frame (upper
 * left). They are background: the ground truth holds the objects only, and
 * glcv_synth_dynamic_region says where they are.
 * Tracking scenes (params.track) replace the moving objects with one target - a figure with a
 * head, a striped shirt and trousers - whose box in every frame is known (glcv_synth_track_box),
 * in one of five situations trackers are judged on: its size changing, hidden behind a pole, under
 * changing and uneven light, passing a figure that looks the same, and moving fast.
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

/* Which background (glcv_synth_params.scene). 0 (DEFAULT) is STATIC. */
typedef enum glcv_synth_scene {
    GLCV_SYNTH_SCENE_DEFAULT = 0,
    GLCV_SYNTH_STATIC = 1, /* a still background */
    GLCV_SYNTH_DYNAMIC = 2 /* with water, swaying foliage and flickering patches (see above) */
} glcv_synth_scene;

/* Challenges (glcv_synth_params.challenges), bits; not with a tracking scene. */
typedef enum glcv_synth_challenge {
    GLCV_SYNTH_GUSTS = 1,   /* DYNAMIC scene: the foliage sways in gusts - mostly calm, at times up to
                               about 3x its swing - from a random envelope of the seed */
    GLCV_SYNTH_JITTER = 2,  /* the camera shakes: each frame but the first shows the scene (background,
                               objects and their truth) moved by a random whole number of pixels,
                               -2..2 in x and in y */
    GLCV_SYNTH_STOP_GO = 4  /* every object moves for 18-40 frames, then stands still for 12-40
                               (its own random cycle), and is in the ground truth while still */
} glcv_synth_challenge;
#define GLCV_SYNTH_CHALLENGES (GLCV_SYNTH_GUSTS | GLCV_SYNTH_JITTER | GLCV_SYNTH_STOP_GO)

/* A tracking scene (glcv_synth_params.track). 0 (DEFAULT) is none: the moving objects. */
typedef enum glcv_synth_track {
    GLCV_SYNTH_TRACK_DEFAULT = 0,
    GLCV_SYNTH_TRACK_SCALE = 1,        /* it walks across while its size goes 0.7 -> 1.6 -> 0.7 */
    GLCV_SYNTH_TRACK_OCCLUSION = 2,    /* it walks behind a pole wider than itself */
    GLCV_SYNTH_TRACK_ILLUMINATION = 3, /* the light swings +-45 % and a shadow halves it */
    GLCV_SYNTH_TRACK_DISTRACTOR = 4,   /* a figure that looks the same passes just below it */
    GLCV_SYNTH_TRACK_FAST = 5          /* it darts between random points, 11 px a frame at 320x240 */
} glcv_synth_track;

typedef struct glcv_synth_params {
    int width;               /* default 320; 1..16384 */
    int height;              /* default 240; 1..16384 */
    int frames;              /* length of the sequence; default 60; >= 1 */
    int objects;             /* moving objects, 1..16; default 4 (at least one dark) */
    float noise_sigma;       /* sensor noise standard deviation in grey levels; default 2.0; <0 = none;
                                finite, at most 255 */
    float illumination_gain; /* brightness factor reached at the last frame; default 0.85; > 0 and
                                at most 16 */
    uint32_t seed;           /* 0 = default seed 1 */
    glcv_synth_scene scene;  /* default STATIC */
    glcv_synth_track track;  /* a tracking scene instead of the moving objects (`objects` is then
                                not used); default none */
    unsigned int challenges; /* glcv_synth_challenge bits; default 0 (none); GUSTS needs the DYNAMIC
                                scene, none goes with a tracking scene */
} glcv_synth_params;

#define GLCV_SYNTH_PARAMS(...) ((glcv_synth_params){__VA_ARGS__})

/* Creates a generator. Errors: INVALID_ARGUMENT (NULL, a field outside its range above, NaN or
 * inf, an unknown scene or challenge bit, GUSTS without DYNAMIC, challenges with a tracking
 * scene), OUT_OF_MEMORY. *out is NULL on error. Not logged (no logger). */
GLCV_API glcv_status glcv_synth_create(const glcv_synth_params *params, glcv_synth **out);
/* Destroys a generator; accepts NULL and &NULL; sets *synth to NULL. */
GLCV_API void glcv_synth_destroy(glcv_synth **synth);
/* The resolved parameters (defaults filled in); all zero for a NULL synth; nothing for a NULL out. */
GLCV_API void glcv_synth_get_params(const glcv_synth *synth, glcv_synth_params *out);

/* Renders the clean background (no objects, no noise, illumination of frame 0; the DYNAMIC
 * scene's moving parts at rest: calm water, foliage in its middle position, patches at their mean
 * brightness) into `out`, an RGB8 or RGBA8 image of the generator's size.
 * Errors: INVALID_ARGUMENT, SIZE_MISMATCH. */
GLCV_API glcv_status glcv_synth_background(const glcv_synth *synth, glcv_image *out);

/* Renders frame `index` (0 <= index < frames) into `frame` (RGB8 or RGBA8, generator's size),
 * and, if `truth` is not NULL, the ground-truth object mask into it (GRAY8: 255 object, 0
 * background). Frames can be rendered in any order. Errors: INVALID_ARGUMENT, SIZE_MISMATCH. */
GLCV_API glcv_status glcv_synth_frame(const glcv_synth *synth, int index, glcv_image *frame, glcv_image *truth);

/* Tracking scenes: the target's box in frame `index` (0 <= index < frames): box[0], box[1] its
 * top-left corner, box[2], box[3] its width and height, in pixels (the whole figure, also where
 * something hides it). The ground-truth mask of glcv_synth_frame holds the target's visible
 * pixels. Errors: INVALID_ARGUMENT (NULL, no tracking scene, index out of range). */
GLCV_API glcv_status glcv_synth_track_box(const glcv_synth *synth, int index, double box[4]);

/* Writes into `out` (GRAY8, the generator's size) 255 where the background moves by itself (the
 * DYNAMIC scene's water, foliage and flickering patches, one pixel of margin included, and with
 * JITTER the 2 pixels the camera may move them) and 0 elsewhere; all 0 for the STATIC scene. (With
 * JITTER every edge of the scene moves: the region does not say so.) Errors: INVALID_ARGUMENT, SIZE_MISMATCH. */
GLCV_API glcv_status glcv_synth_dynamic_region(const glcv_synth *synth, glcv_image *out);

#ifdef __cplusplus
}
#endif
#endif
