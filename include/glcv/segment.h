/* glcv segmenter: colinearity + darkness compensation + MRF foreground/background
 * segmentation (Griesser, ETH Zurich 2005, after Mester, Aach and Duembgen 2001).
 *
 * Per pixel, over its 3x3 window (colours 0..255, window pixels outside the image count as 0):
 *   fore = sum f.f, back = sum b.b, cross = sum f.b     (RGB dot products; exact integers)
 *   D^2  = smallest eigenvalue of [[fore+Odc, cross+Odc], [cross+Odc, back+Odc]]
 *   M    = 2 * (changed 4-neighbours) + (changed diagonal neighbours), 0..12
 *   changed  <=>  D^2 > Ts + B * (12 - 2M)
 * B is B1 for the first MRF iteration of a frame (starting from the previous frame's mask) and
 * B2 for the `iterations` that follow. Each iteration updates the four pixel subsets
 * (x mod 2, y mod 2) one after the other in an order drawn from a seeded PRNG.
 *
 * Engines: FRAGMENT and COMPUTE (GL passes in the current context) and CPU (the same decisions
 * in double precision; also the tests' oracle). AUTO (the default) times one probe pass both
 * ways on the first use of a renderer and keeps the faster (FRAGMENT below GL 4.3), and is CPU
 * when no GL context is current (logged). CUDA is INVALID_ARGUMENT. With the same seed,
 * parameters and frames, every engine draws the same subset orders and gives the same masks
 * (pixels whose threshold lies within float rounding of an integer may differ; measured rates
 * are in docs/QUALITY.md).
 *
 * Thread safety: every function locks the object's mutex, so one object may be shared between
 * threads. Every function that uses GL follows the GL rules of glcv/core.h.
 */
#ifndef GLCV_SEGMENT_H
#define GLCV_SEGMENT_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct glcv_segment glcv_segment;

/* What the parameters left at zero are, and how a background is learned
 * (glcv_segment_params.preset). 0 (DEFAULT) is CALIBRATED. */
typedef enum glcv_segment_preset {
    GLCV_SEGMENT_PRESET_DEFAULT = 0,
    /* Measured on the scene. Learning (glcv_segment_learn_*) takes the per-pixel median of up to
     * 16 evenly spaced learned frames, so people who pass while it learns leave no ghost, and
     * learn_end calibrates Odc, Ts, B1, B2 and the per-pixel noise factors on those frames (see
     * glcv_segment_calibrate_end); the background adapts (adapt_rate 0.01). Until a calibration
     * ran (a background given with set_background), the values are those the calibration gives
     * for moderate camera noise (g = 50): Ts 3000, Odc 100000, B1 = B2 = 500. */
    GLCV_SEGMENT_CALIBRATED = 1,
    /* The paper's fixed values: Ts 310, Odc 5800, B1 2, B2 200; learning takes the mean of the
     * learned frames and does not calibrate; no adaptation. On real video they find far too
     * much (docs/QUALITY.md); for comparisons with the paper. */
    GLCV_SEGMENT_PAPER = 2
} glcv_segment_preset;

/* Zero fields mean defaults. Because zero means "default" here, the values Ts = 0, Odc = 0,
 * iterations = 0 and adapt_rate = 0 (all valid) are set with the setters after creation. */
typedef struct glcv_segment_params {
    int width;  /* required, >= 1 */
    int height; /* required, >= 1 */
    float ts;   /* static threshold Ts; default per preset (3000 / 310); 0..1e9 */
    float odc;  /* darkness offset Odc; default per preset (100000 / 5800); 0..1e9 */
    float b1;   /* compactness of the first iteration; default per preset (500 / 2); > 0, <= 1e9 */
    float b2;   /* compactness of the later iterations; default per preset (500 / 200); > 0, <= 1e9 */
    int iterations; /* MRF iterations with B2 after the B1 iteration; default 8; 0..1000 */
    uint64_t seed;  /* PRNG seed of the subset orders; 0 = default 0x5EED */
    glcv_engine_mode engine; /* default AUTO; FRAGMENT, COMPUTE or CPU (CUDA: INVALID_ARGUMENT) */
    /* VSAM-style background adaptation where the mask says background:
     * bg = (1 - rate) * bg + rate * frame after each frame; 0 < rate <= 1. Default per preset:
     * 0.01 (CALIBRATED), off (PAPER); glcv_segment_set_adapt_rate(seg, 0) turns it off. */
    float adapt_rate;
    int timing; /* nonzero: GPU timer queries per pass (glcv_segment_timings); default off */
    /* Nonzero: glcv_segment_learn_end keeps the parameters as they are instead of calibrating
     * the ones not given explicitly (see glcv_segment_calibrate_end). Default 0: calibrate
     * (CALIBRATED preset; PAPER never calibrates by itself). */
    int fixed_parameters;
    glcv_logger logger;
    glcv_segment_preset preset; /* default CALIBRATED */
    /* Streams of this size segmented together (cameras, say): 0 or 1 = one; up to 2048. With
     * several, the GL engines hold each stream in one layer of texture arrays and run every pass
     * once for all of them; the CPU engine runs one CPU segmenter per stream. Frames, masks,
     * backgrounds and learning then go through the *_frames / *_masks / *_backgrounds functions
     * below (one image per stream); the one-stream functions that take or give images or
     * textures are INVALID_ARGUMENT, except learn_begin/learn_end, the setters, reset and
     * timings, which act on every stream. Each stream's result is the one its frames alone would
     * give a one-stream segmenter with the same parameters (same seed). */
    int streams;
} glcv_segment_params;

#define GLCV_SEGMENT_PARAMS(...) ((glcv_segment_params){__VA_ARGS__})

/* Creates a segmenter. GPU engines need a current GL context (3.3 core; compute needs 4.3);
 * AUTO without a context falls back to the CPU engine and logs it.
 * Errors: INVALID_ARGUMENT (NULL, size < 1, NaN or out-of-range parameter), NO_CONTEXT
 * (FRAGMENT/COMPUTE requested without a current context), UNSUPPORTED (GL too old, size above
 * GL_MAX_TEXTURE_SIZE), GL (shader or framebuffer failure), OUT_OF_MEMORY. *out is NULL on error. */
GLCV_API glcv_status glcv_segment_create(const glcv_segment_params *params, glcv_segment **out);

/* Destroys the object and its GL objects (its context must be current, or the GL objects are
 * left to die with the context). Accepts NULL and &NULL; sets *seg to NULL. */
GLCV_API void glcv_segment_destroy(glcv_segment **seg);

/* The resolved parameters (defaults filled in, current values of every setter; `engine` is the
 * engine actually in use: FRAGMENT, COMPUTE or CPU). Errors: INVALID_ARGUMENT. */
GLCV_API glcv_status glcv_segment_get_params(glcv_segment *seg, glcv_segment_params *out);

/* Setters: validated like the params fields (INVALID_ARGUMENT leaves the value unchanged).
 * They take effect from the next frame. */
GLCV_API glcv_status glcv_segment_set_ts(glcv_segment *seg, float ts);
GLCV_API glcv_status glcv_segment_set_odc(glcv_segment *seg, float odc);
GLCV_API glcv_status glcv_segment_set_b1(glcv_segment *seg, float b1);
GLCV_API glcv_status glcv_segment_set_b2(glcv_segment *seg, float b2);
GLCV_API glcv_status glcv_segment_set_iterations(glcv_segment *seg, int iterations);
GLCV_API glcv_status glcv_segment_set_adapt_rate(glcv_segment *seg, float rate);
/* Restarts the subset-order PRNG from `seed` (0 = default). */
GLCV_API glcv_status glcv_segment_set_seed(glcv_segment *seg, uint64_t seed);

/* Sets the background from host pixels (RGB8, RGBA8, BGR8 or BGRA8, any stride) and clears the
 * temporal prior. Errors: INVALID_ARGUMENT (bad image or GRAY8), SIZE_MISMATCH, GL. */
GLCV_API glcv_status glcv_segment_set_background(glcv_segment *seg, const glcv_image *background);

/* Sets the background from the caller's GL_TEXTURE_2D (level 0 of a colour format with values
 * in 0..1, scaled by 255 and rounded; row 0 of the texture is row 0 of the image). The texture
 * is copied: the caller keeps it and may change or delete it afterwards. Never modified.
 * Errors: INVALID_ARGUMENT (0 or not a 2D texture), SIZE_MISMATCH, UNSUPPORTED (format), GL,
 * NO_CONTEXT (CPU engine without a current context). */
GLCV_API glcv_status glcv_segment_set_background_texture(glcv_segment *seg, unsigned int texture);

/* Learns the background from N frames: begin, add N >= 1 frames (host or texture), end.
 * CALIBRATED preset: the per-pixel, per-channel median (glcv_image_median) of up to 16 of the
 * frames, evenly spaced (all of them up to 16, else every k-th), then learn_end calibrates the
 * parameters not given explicitly (see glcv_segment_calibrate_end) unless fixed_parameters is
 * set. PAPER preset: the per-channel mean of all N frames, rounded to the nearest integer.
 * Segmenting in between is STATE.
 * The rule of every begin/add/end pair of glcv (learning and calibration here, learning in
 * glcv/bgsub.h): begin starts, or starts again, dropping the frames added so far. An add that fails
 * leaves learning open with the frames added before it: add more or end. End ends learning
 * whatever it returns (except NO_CONTEXT, which changes nothing): with no frame added it returns
 * STATE and the background, parameters, noise factors and temporal prior stay as they were before
 * begin; an end that fails (OUT_OF_MEMORY, GL) leaves no learning open either. So begin followed
 * by end abandons a learning. Errors as for set_background; STATE for add/end without begin, or
 * end after no frame. */
GLCV_API glcv_status glcv_segment_learn_begin(glcv_segment *seg);
GLCV_API glcv_status glcv_segment_learn_add(glcv_segment *seg, const glcv_image *frame);
GLCV_API glcv_status glcv_segment_learn_add_texture(glcv_segment *seg, unsigned int texture);
GLCV_API glcv_status glcv_segment_learn_end(glcv_segment *seg);

/* Calibration from the data. Mester showed that under "no change" D^2 scales with the sensor
 * noise; measured on real video its spread is wider than his chi-square model and differs from
 * pixel to pixel (water, leaves, flicker, compression), so glcv measures D^2 of every pixel in
 * frames of the scene (up to 32, evenly spaced) against the current background, with
 * Odc = 100000 (set first unless explicit), and derives:
 *   g     the scene's noise level: the 25th percentile over the pixels of each pixel's median
 *         D^2, i.e. the level of the still parts of the scene, even where water or leaves cover
 *         most of it (objects passing a pixel in fewer than half of the frames do not move its
 *         median);
 *   k(x)  each pixel's noise factor: the median of its D^2 samples, at most 30 g, over 2.5 g, and
 *         at least 1 (so at most 12). The median, not the mean: rippling water, still most of the
 *         time and flashing now and then, keeps a low factor (the MRF removes lone flashes), while
 *         leaves that move all the time get a high one; objects passing during the calibration do
 *         not move it;
 *   Ts = 60 g, B1 = B2 = 10 g (g at least 1) for the parameters not given explicitly (non-zero
 *         in the params, or through a setter). With this B a pixel on a straight edge of the
 *         foreground (M = 8, threshold Ts - 4 B = 20 g) stays changed only while D^2 / k(x) is
 *         above 20 g (about ten times the noise of the still parts), so the mask does not trail
 *         behind moving objects where the scene is noisier than at calibration.
 * From then on the rule compares D^2 / k(x) with Ts + B (12 - 2M): thresholds rise only where the
 * scene moves by itself. While the background adapts (adapt_rate > 0), k(x) then follows the
 * scene: each pixel keeps a running median of its background D^2 on a grid of 1/32 octave,
 * started at its calibration median; after a frame in which the pixel and its 8 neighbours are
 * background, it moves one step towards the frame's D^2 (up only while D^2 is below the pixel's
 * own threshold Ts k(x): a change is no sample of noise), and k(x) is the rule above applied to
 * it. A background that starts to move gets higher factors within a few seconds, one that becomes
 * still gets them lower again; all engines compute the same levels. The constants were chosen on CDnet highway and synthetic scenes (water,
 * foliage in gusts, flicker, a shaking camera, objects that stop and go): docs/QUALITY.md. glcv_segment_learn_end
 * calibrates by itself (CALIBRATED preset, unless params.fixed_parameters is set).
 * begin, add frames (host or texture), end, with the rule of glcv_segment_learn_begin: end with no
 * frame added is STATE and leaves every parameter (Odc included) as it was before begin.
 * Errors: STATE (no background, or learning, or add/end without begin, or end with no frame),
 * OUT_OF_MEMORY (64 bytes per pixel while calibrating), and those of glcv_segment_frame. *g_out
 * (may be NULL) receives g. */
GLCV_API glcv_status glcv_segment_calibrate_begin(glcv_segment *seg);
GLCV_API glcv_status glcv_segment_calibrate_add(glcv_segment *seg, const glcv_image *frame);
GLCV_API glcv_status glcv_segment_calibrate_add_texture(glcv_segment *seg, unsigned int texture);
GLCV_API glcv_status glcv_segment_calibrate_end(glcv_segment *seg, float *g_out);

/* Segments one frame (host pixels as for set_background). With `wait` nonzero the call returns
 * when the GPU has finished; otherwise the passes are queued (glFlush) and the mask texture is
 * ready for any later GL command in this context. Errors: INVALID_ARGUMENT, SIZE_MISMATCH,
 * STATE (no background yet, or learning), GL. */
GLCV_API glcv_status glcv_segment_frame(glcv_segment *seg, const glcv_image *frame, int wait);

/* Zero-copy input: returns in `out` an image of the segmenter's size whose pixels lie in pinned
 * upload memory that the GPU copies from directly (plain host memory with the CPU engine). Fill
 * it (any order of rows; `out->stride` is width * bytes per pixel), then call
 * glcv_segment_frame_mapped. `format`: RGBA8 or BGRA8 (the GPU's fast path), RGB8 or BGR8.
 * The memory is valid until glcv_segment_frame_mapped returns. This saves the copy that
 * glcv_segment_frame makes of the caller's pixels, so the upload of one frame overlaps the
 * passes of the one before. Errors: INVALID_ARGUMENT, GL, OUT_OF_MEMORY. */
GLCV_API glcv_status glcv_segment_map_frame(glcv_segment *seg, glcv_pixel_format format, glcv_image *out);

/* Segments the frame written into the memory of glcv_segment_map_frame (as glcv_segment_frame).
 * Errors: STATE (no map_frame before), and those of glcv_segment_frame. */
GLCV_API glcv_status glcv_segment_frame_mapped(glcv_segment *seg, int wait);

/* Segments the caller's GL_TEXTURE_2D (as for set_background_texture; read, never modified). */
GLCV_API glcv_status glcv_segment_frame_texture(glcv_segment *seg, unsigned int texture, int wait);

/* The mask as a GL_TEXTURE_2D, GL_R8, width x height, 1.0 (255) = foreground, 0 = background,
 * row order as the input. Owned by the segmenter: valid until it is destroyed; its content
 * changes with each frame. Do not delete or modify it. With the CPU engine the texture is made
 * and filled on demand in the current context (one made in another context is left alone and a new
 * one made). Returns 0 on error (logged): no context, or with the GL engines not the context the
 * segmenter was made in. */
GLCV_API unsigned int glcv_segment_mask_texture(glcv_segment *seg);

/* The background the rule uses as a GL_TEXTURE_2D, GL_RGBA8, width x height (for display).
 * Owned by the segmenter, valid until it is destroyed. GPU engines only: returns 0 with the CPU
 * engine, before a background is set, or when the segmenter's context is not current (logged). */
GLCV_API unsigned int glcv_segment_background_texture(glcv_segment *seg);

/* Reads the last mask into `out` (GRAY8, RGB8 or RGBA8, the object's size, caller's memory,
 * any stride): 255 foreground, 0 background (alpha 255). Waits for the GPU.
 * Errors: INVALID_ARGUMENT, SIZE_MISMATCH, STATE (no frame segmented yet), GL. */
GLCV_API glcv_status glcv_segment_read_mask(glcv_segment *seg, glcv_image *out);

/* Diagnostics of the last frame: the exact window sums fore, back, cross (each width*height
 * int32 values, row-major; any pointer may be NULL) and the integer thresholds: the smallest
 * M that switches a pixel on with B1 and with B2 (0..13, 13 = never). Waits for the GPU.
 * Errors: INVALID_ARGUMENT, STATE (no frame yet), GL, OUT_OF_MEMORY. */
GLCV_API glcv_status glcv_segment_read_qualifiers(glcv_segment *seg, int32_t *fore, int32_t *back, int32_t *cross);
GLCV_API glcv_status glcv_segment_read_thresholds(glcv_segment *seg, uint8_t *m_min_b1, uint8_t *m_min_b2);

/* Reads the current background into `out` (RGB8 or RGBA8, the object's size). Errors as for
 * read_mask; STATE when no background is set. */
GLCV_API glcv_status glcv_segment_read_background(glcv_segment *seg, glcv_image *out);

/* The per-pixel noise factors k(x) >= 1 in use (width * height floats, row-major, into the
 * caller's memory): those of the last calibration, as the noise model has moved them since (see
 * glcv_segment_calibrate_end); all 1 before any calibration. Errors: INVALID_ARGUMENT (NULL). */
GLCV_API glcv_status glcv_segment_read_noise(glcv_segment *seg, float *k);

/* Forgets the temporal prior: the next frame starts from an all-background mask. */
GLCV_API glcv_status glcv_segment_reset(glcv_segment *seg);

/* Per-pass GPU times (GLCV_CLOCK_GPU) of the most recent frame whose timer queries are complete
 * (params.timing must be set). Writes up to `capacity` entries and their count to *count (0 before results
 * arrive or with the CPU engine). With `wait` nonzero, waits for the last frame's results.
 * Errors: INVALID_ARGUMENT (NULL count, capacity < 0, NULL out with capacity > 0), NO_CONTEXT
 * (GL engines: the segmenter's context is not current; *count is then unchanged). */
GLCV_API glcv_status glcv_segment_timings(glcv_segment *seg, glcv_timing *out, int capacity, int *count,
                                          int wait);

/* ---- Several streams (params.streams > 1) ---------------------------------------------------------
 * `count` must be the object's stream count; image i belongs to stream i. */

/* Segments one frame of every stream (host pixels as for set_background; any mix of formats and
 * strides). The GL engines copy them into one staging block and upload it in one transfer.
 * `wait` as for glcv_segment_frame. Errors: those of glcv_segment_frame, and INVALID_ARGUMENT for
 * a count other than the stream count. */
GLCV_API glcv_status glcv_segment_frames(glcv_segment *seg, const glcv_image *frames, int count, int wait);

/* Zero-copy input for every stream: out[i] receives stream i's image in one pinned block
 * (formats as glcv_segment_map_frame); fill them, then call glcv_segment_frames_mapped. */
GLCV_API glcv_status glcv_segment_map_frames(glcv_segment *seg, glcv_pixel_format format, glcv_image *out, int count);
GLCV_API glcv_status glcv_segment_frames_mapped(glcv_segment *seg, int wait);

/* Segments one frame of every stream already on the GPU (frames decoded by CUDA into a texture
 * array, say); works with one stream too. `texture` is a GL_TEXTURE_2D_ARRAY of the current
 * context with at least `streams` layers, layer i holding stream i's frame (further layers are not
 * read); level 0 of the segmenter's size, internal format GL_RGBA8 or GL_RGB8 (alpha unused); row 0
 * of a layer is row 0 of the frame, as in a glcv_image (the order in which glTexSubImage3D takes a
 * host image's rows). Masks, backgrounds and everything else are then bit for bit what
 * glcv_segment_frames gives for the same pixels as host images. The GL engines copy the layers
 * within GPU memory into their frame array (a pass: the colours, alpha 1, as a host set is
 * uploaded), and run as for host frames; no pixel crosses the bus. The CPU engine reads them back first (with a GL
 * context current). The texture is read, never modified; the copy is queued before the call
 * returns, so later GL commands, and CUDA through its map, may write it at once. `wait` as for
 * glcv_segment_frame; the host's GL state is restored. Thread safety: the object's lock; the GL
 * rules of glcv/core.h (the texture is a name of the context current on the calling thread).
 * Errors: INVALID_ARGUMENT (0, not a texture, not a 2D array, no level 0, fewer layers than
 * streams), SIZE_MISMATCH, UNSUPPORTED (another internal format, base level not 0), STATE (no
 * background yet, or learning), NO_CONTEXT (none current; GL engines: the segmenter's context not
 * current), GL, OUT_OF_MEMORY (CPU engine). */
GLCV_API glcv_status glcv_segment_frames_texture(glcv_segment *seg, unsigned int texture, int wait);

/* Reads the last masks of every stream (as glcv_segment_read_mask: one download for all). */
GLCV_API glcv_status glcv_segment_read_masks(glcv_segment *seg, glcv_image *out, int count);

/* The last masks of every stream without a copy: out[i] (GRAY8, 255 foreground, 0 background,
 * stride = width) points into memory of the segmenter (the GL engines' download memory), valid
 * until the next call on the object; read it, do not write or free it. Errors: INVALID_ARGUMENT
 * (NULL, a count other than the stream count), STATE (no frame yet), GL. */
GLCV_API glcv_status glcv_segment_map_masks(glcv_segment *seg, glcv_image *out, int count);

/* Sets every stream's background (as glcv_segment_set_background: each stream keeps its noise
 * factors and rule values). */
GLCV_API glcv_status glcv_segment_set_backgrounds(glcv_segment *seg, const glcv_image *backgrounds, int count);

/* Adds one learned frame of every stream, between glcv_segment_learn_begin and learn_end;
 * learn_end learns and calibrates each stream from its own frames (as one-stream learning does),
 * so each stream gets its own background, noise factors and rule values. Learning keeps up to
 * 16 frames of each stream in host memory (3 bytes a pixel each). */
GLCV_API glcv_status glcv_segment_learn_add_frames(glcv_segment *seg, const glcv_image *frames, int count);

/* Adds one learned frame of stream `stream` alone (0..streams-1), between learn_begin and
 * learn_end, for streams whose frames do not come together (cameras that start late, sources of
 * different lengths); each stream learns from the frames given to it, as with learn_add_frames.
 * learn_end needs at least one for every stream: else it returns STATE, and learning ends with
 * every stream's background, parameters and noise as they were before begin. Errors: INVALID_ARGUMENT (a stream out of
 * range, a bad image), SIZE_MISMATCH, STATE (not learning). */
GLCV_API glcv_status glcv_segment_learn_add_stream(glcv_segment *seg, int stream, const glcv_image *frame);

/* Reads every stream's background (as glcv_segment_read_background: RGB8 or RGBA8; one download
 * for all). Errors as for read_background, and INVALID_ARGUMENT for a count other than the stream
 * count. */
GLCV_API glcv_status glcv_segment_read_backgrounds(glcv_segment *seg, glcv_image *out, int count);

/* Stream `stream`'s resolved parameters: those of glcv_segment_get_params with the stream's own
 * Ts, Odc, B1 and B2 (each stream calibrates on its own frames). Errors: INVALID_ARGUMENT (NULL,
 * stream outside 0..streams-1). */
GLCV_API glcv_status glcv_segment_get_stream_params(glcv_segment *seg, int stream, glcv_segment_params *out);

/* With several streams, glcv_segment_mask_texture and glcv_segment_background_texture return
 * GL_TEXTURE_2D_ARRAY textures (layer i = stream i; GL engines only), and glcv_segment_read_noise
 * writes streams * width * height factors, stream after stream. */

/* ---- Scoring masks against ground truth ------------------------------------------------------
 * Plain host computation: no GL, no object; may be called from any thread on different scores. */

/* How a ground-truth mask labels its pixels. 0 (DEFAULT) is BINARY. */
typedef enum glcv_truth_labels {
    GLCV_TRUTH_DEFAULT = 0,
    /* >= 128 foreground, < 128 background (glcv_synth_frame's truth, hand-made masks). */
    GLCV_TRUTH_BINARY = 1,
    /* The CDnet 2014 change-detection benchmark's ground truth: 255 foreground; 0 (static) and 50
     * (hard shadow) background; 85 (outside the region of interest) and 170 (unknown motion) not
     * scored. Other values are not scored either; they are counted in `unknown`. */
    GLCV_TRUTH_CDNET = 2
} glcv_truth_labels;

/* Pixel counts of masks against ground truth, summed over any number of frames: start from a
 * zeroed struct and add each frame with glcv_segment_score_add. */
typedef struct glcv_segment_score {
    uint64_t tp; /* foreground in the mask and in the truth */
    uint64_t fp; /* foreground in the mask, background in the truth */
    uint64_t fn; /* background in the mask, foreground in the truth */
    uint64_t tn; /* background in both */
    uint64_t unknown; /* GLCV_TRUTH_CDNET: truth pixels (in the region) with a value that is no label */
} glcv_segment_score;

/* Adds one frame's mask against its ground truth to `score`. `mask` is GRAY8 with values >= 128
 * foreground (glcv_segment_read_mask writes 255 and 0); `truth` is GRAY8 labelled as `labels`
 * says; `roi` (may be NULL: every pixel) is GRAY8 and only its nonzero pixels are scored. All
 * three have the same size; any stride. Errors: INVALID_ARGUMENT (NULL score, an invalid image,
 * one that is not GRAY8, an unknown `labels`), SIZE_MISMATCH. On error `score` is unchanged. */
GLCV_API glcv_status glcv_segment_score_add(glcv_segment_score *score, const glcv_image *mask, const glcv_image *truth,
                                            const glcv_image *roi, glcv_truth_labels labels);

/* The metrics of a score, as the CDnet 2014 benchmark defines them. A ratio with nothing to count
 * (a zero denominator) is 1 for recall, precision and specificity and 0 for FPR, FNR and PWC; F
 * is 0 when precision + recall is 0. */
typedef struct glcv_segment_metrics {
    double recall;      /* TP / (TP + FN) */
    double precision;   /* TP / (TP + FP) */
    double f;           /* F-measure: 2 precision recall / (precision + recall) */
    double specificity; /* TN / (TN + FP) */
    double fpr;         /* false positive rate: FP / (FP + TN) */
    double fnr;         /* false negative rate: FN / (TP + FN) */
    double pwc;         /* percentage of wrong classifications: 100 (FN + FP) / (TP + FN + FP + TN) */
} glcv_segment_metrics;

/* Computes the metrics of `score` into *out. Errors: INVALID_ARGUMENT (NULL). */
GLCV_API glcv_status glcv_segment_score_metrics(const glcv_segment_score *score, glcv_segment_metrics *out);

#ifdef __cplusplus
}
#endif
#endif
