/* The segmenter (private): the object shared by its files, and what each of them offers the
 * others.
 *   segment.c        the object: parameters, validation, inputs and outputs, dispatch to an engine
 *   segment_learn.c  learning the background and calibrating the parameters from the data
 *   segment_gl.c     the GL passes (shaders/segment_*.glsl) on the engine, FRAGMENT or COMPUTE
 *   segment_batch.c  several streams in one object: texture arrays, one pass for all of them
 *   segment_cpu.c    the CPU implementation: the CPU engine and the tests' oracle
 * Every function here is called with the object's mutex held. The gl functions save and
 * restore the host's GL state themselves (glcv_engine_begin/end nest), except those that take a
 * GL input: they run between the begin and end of the call that brought the input. */
#ifndef GLCV_SEGMENT_INTERNAL_H
#define GLCV_SEGMENT_INTERNAL_H

#include <glcv/segment.h>

#include "engine.h"

#include <pthread.h>

#define GLCV_SEGMENT_MAX_RULE_VALUE 1e9 /* Ts, Odc and B: see segment.c */
#define GLCV_SEGMENT_CALIB_KEEP 16      /* learned frames kept for the median and the calibration */
#define GLCV_SEGMENT_CALIB_SAMPLES 32   /* D^2 samples per pixel a calibration keeps */
/* The calibration's constants (segment_learn.c; measured in docs/QUALITY.md). */
#define GLCV_SEGMENT_CALIB_ODC 100000.0f /* Odc: dark objects need it well above Ts */
#define GLCV_SEGMENT_CALIB_TS 60.0       /* Ts = 60 g */
#define GLCV_SEGMENT_CALIB_CAP 20.0      /* 20 g: the most D^2 / k the rule still takes for noise at an edge */
/* B1 = B2 = (Ts - cap) / 4 = 10 g (Ts / B = 6). A pixel on a straight edge of the foreground has
 * M = 8 and the threshold Ts - 4 B: this B makes it the cap, so the foreground keeps an edge pixel
 * only where D^2 / k exceeds what the calibration still counts as noise. With a stronger B
 * (Ts - 4 B close to 0) only pixels that match the background almost exactly are released, and
 * what a moving object leaves behind stays in the mask wherever the scene is a little noisier
 * than at calibration (compression around moving objects, soft shadows): the mask trails behind
 * walking people. */
#define GLCV_SEGMENT_CALIB_B ((GLCV_SEGMENT_CALIB_TS - GLCV_SEGMENT_CALIB_CAP) / 4.0)

/* Parameters given explicitly (in the params or through a setter): never calibrated. */
enum { GLCV_SEGMENT_EXPLICIT_TS = 1, GLCV_SEGMENT_EXPLICIT_ODC = 2, GLCV_SEGMENT_EXPLICIT_B1 = 4,
       GLCV_SEGMENT_EXPLICIT_B2 = 8 };

/* The subsets (x mod 2, y mod 2) in the paper's names: s = (x & 1) + 2 * (y & 1). */
enum { GLCV_SUBSET_K, GLCV_SUBSET_L, GLCV_SUBSET_M, GLCV_SUBSET_N };

/* The noise model: each pixel's noise factor follows the scene (segment_learn.c sets it up at a
 * calibration; segment_cpu.c and shaders/segment_threshold.glsl, SEGMENT_NOISE, run it after each
 * frame while the background adapts). Each pixel has a level L (0..255): its background D^2 is
 * about g 2^((L - 96) / 32), g the calibration's noise level, and its factor is the calibration's
 * rule applied to that D^2: k = max(1, min(D^2, 30 g) / 2.5 g). L starts at the level of the
 * pixel's calibration median. After a frame, where the mask is background on the pixel and its 8
 * neighbours, L steps once (1/32 octave) towards the frame's D^2 (Odc included, not divided by k):
 * up when D^2 exceeds the level's value but not the pixel's own threshold Ts k (what the rule
 * alone would call a change is no sample of noise), down when it is below. A running median of
 * the background's D^2, then, that follows a background whose noise changes. Table row L: the
 * level's D^2 and its k as single-precision values (the same bytes for every engine), 0, 0. */
#define GLCV_SEGMENT_NOISE_LEVELS 256
#define GLCV_SEGMENT_NOISE_LEVEL_ZERO 96 /* the level of D^2 = g */
#define GLCV_SEGMENT_NOISE_STEPS 32      /* levels per octave */

/* ---- the CPU implementation (segment_cpu.c) --------------------------------------------------------
 * The same decisions as the GL passes, in C, in double precision. Images are packed RGB (3 bytes
 * per pixel, row-major, no padding). */

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
    float *noise;          /* per-pixel noise factors k >= 1 (D^2 is divided by them); NULL: 1 */
    uint8_t *noise_level;  /* the noise model's level of each pixel (glcv_segment_cpu_noise_update); NULL: none */
    const float (*noise_table)[4]; /* its table (GLCV_SEGMENT_NOISE_LEVELS rows) */
} glcv_segment_cpu;

glcv_status glcv_segment_cpu_init(glcv_segment_cpu *cpu, int width, int height);
void glcv_segment_cpu_free(glcv_segment_cpu *cpu);

/* Sets the background (packed RGB) and clears the mask. */
void glcv_segment_cpu_set_background(glcv_segment_cpu *cpu, const uint8_t *rgb);

/* Learning: mean of the added frames, rounded half up; end sets it as the background. */
glcv_status glcv_segment_cpu_learn_begin(glcv_segment_cpu *cpu);
void glcv_segment_cpu_learn_add(glcv_segment_cpu *cpu, const uint8_t *rgb);
void glcv_segment_cpu_learn_end(glcv_segment_cpu *cpu);
/* Drops the sums of a learning that ends without a frame; the background stays as it was. */
void glcv_segment_cpu_learn_cancel(glcv_segment_cpu *cpu);

/* Window sums and both thresholds for a frame (packed RGB). */
void glcv_segment_cpu_thresholds(glcv_segment_cpu *cpu, const uint8_t *frame, const glcv_segment_values *v);

/* One MRF iteration: updates the subsets order[0..3] in turn with the thresholds of `set`
 * (0 = B1, 1 = B2). */
void glcv_segment_cpu_iterate(glcv_segment_cpu *cpu, const int order[4], int set);

/* Background adaptation where the mask is background: bg_f = bg_f + rate * (frame - bg_f) in
 * float, then background = round(bg_f). */
glcv_status glcv_segment_cpu_adapt(glcv_segment_cpu *cpu, const uint8_t *frame, float rate);

/* The noise model's step after a frame: the mask is the frame's, the window sums those its
 * thresholds used (before the background adapts); updates noise_level and noise. */
void glcv_segment_cpu_noise_update(glcv_segment_cpu *cpu, double ts, double odc);

/* D^2: the smallest eigenvalue of [[fore + Odc, cross + Odc], [cross + Odc, back + Odc]],
 * evaluated without cancellation (see segment_cpu.c). */
double glcv_segment_d2(int32_t fore, int32_t back, int32_t cross, double odc);

/* The decision rule for one pixel: the smallest integer M (0..13, 13 = never) with
 * d2 > ts + b * (12 - 2M). */
int glcv_segment_rule(double d2, double ts, double b);

/* The rule with d2 the smallest eigenvalue with darkness compensation (noise factor 1). */
int glcv_segment_m_min(int32_t fore, int32_t back, int32_t cross, double ts, double odc, double b);

/* ---- the object ------------------------------------------------------------------------------------ */

struct glcv_segment {
    pthread_mutex_t lock;
    glcv_segment_params p; /* resolved; p.engine is the engine in use */
    int width, height, sub_w, sub_h;
    uint64_t rng;
    int have_background, have_frame, learning, learn_count;
    unsigned explicit_values; /* GLCV_SEGMENT_EXPLICIT_* */
    int mapped_slot;          /* GL: staging slot handed out by glcv_segment_map_frame, or -1 */
    glcv_pixel_format mapped_format;
    uint8_t *mapped_host;     /* CPU: the memory handed out by glcv_segment_map_frame */
    uint8_t *rgb;             /* scratch: a frame as packed RGB (w * h * 3 bytes) */

    /* GL engine (segment_gl.c); engine is NULL with the CPU engine */
    glcv_engine *engine;
    glcv_program *threshold, *mrf, *merge, *learn_add, *learn_end, *adapt_init, *adapt, *copy, *qualifiers;
    glcv_program *threshold_packed, *noise_step;
    glcv_tex frames[2];       /* host frames are uploaded here, alternately, so that the upload of a
                                 frame does not wait for the passes still reading the last one */
    int frame_index;
    glcv_tex background;      /* RGBA8, integers 0..255 */
    glcv_tex background_f[2]; /* RGBA32F: learning sums, and the adapted background */
    int bgf_current, bgf_valid;
    int bgf_valid_before_learn; /* bgf_valid when learning began (glcv_segment_gl_learn_cancel) */
    glcv_tex thresholds[4];   /* RG8UI per subset: thresholds with B1, B2 */
    glcv_tex masks[4];        /* R8 per subset, 0/1 (multi-pass path) */
    /* Tiled compute path (segment_tile.glsl), per subset: */
    int tile_iterations;      /* iterations per tiled dispatch (0 = the multi-pass path) */
    int tile_rows;            /* subset rows per work group of the tiled path, halo included */
    int words_w;              /* ceil(sub_w / 4) */
    int bits_w;               /* ceil(sub_w / 32) */
    glcv_tex thr_words[4];    /* R32UI, four pixels a word: B1 threshold << 4 | B2 threshold per byte */
    glcv_tex mask_bits[2][4]; /* R32UI, 32 pixels a word, one bit each; ping-pong between dispatches */
    int mask_set;             /* the set holding the current mask */
    glcv_tex mask;            /* R8 full resolution, 0/255 */
    GLuint last_input;        /* texture the last frame was read from */

    /* Per-pixel noise factors k >= 1 (segment_learn.c): host copy (NULL until a calibration
     * measured them: 1 everywhere) and, for the GL engines, an R32F texture the threshold pass
     * reads (all 1 until then). */
    float *noise;
    float noise_table[GLCV_SEGMENT_NOISE_LEVELS][4]; /* the noise model's (see above) */
    /* GL engines: the noise model's levels (R8UI, the current one of the pair), its table
     * (RGBA32F, 256 x 1 a stream), and whether it runs (a calibration uploaded it). */
    glcv_tex noise_level[2], noise_levels;
    int level_current, noise_model;

    /* Calibration (segment_learn.c): per pixel up to GLCV_SEGMENT_CALIB_SAMPLES values of D^2
     * (quantised, see there) of evenly spaced frames (every calib_sample_stride-th offered) and,
     * while learning, up to GLCV_SEGMENT_CALIB_KEEP learned frames, evenly spaced (every
     * calib_stride-th). */
    int calibrating;
    float odc_before_calib; /* Odc when calibrate_begin set it: restored by an end with no frame */
    uint16_t *calib_d2;  /* calib_samples values per pixel, pixel-major */
    int calib_samples, calib_sample_stride;
    int calib_frames;    /* frames offered */
    int calib_kept, calib_stride;
    glcv_tex calib_tex[GLCV_SEGMENT_CALIB_KEEP]; /* GL engines */
    uint8_t *calib_rgb[GLCV_SEGMENT_CALIB_KEEP]; /* CPU engine, packed RGB */
    int32_t *calib_sums;                         /* fore, back, cross of one frame */

    /* CPU engine */
    glcv_segment_cpu cpu;
    GLuint cpu_mask_texture; /* made on demand by glcv_segment_mask_texture */
    glcv_gl_token cpu_mask_context; /* the context it was made in: another never sees the name */
    int cpu_mask_dirty;

    /* Several streams (params.streams > 1; segment_batch.c). The GL engines keep every texture
     * above as an array of `layers` layers, one per stream (layers is 0 for one stream: plain 2D
     * textures), and run each pass once for all layers. Per stream, a one-stream CPU-engine
     * segmenter in sub[] learns and calibrates (GL engines: from learn_begin to learn_end only)
     * or, with the CPU engine, does all the work. */
    int layers;
    glcv_segment **sub;
    float (*rules)[4];    /* GL engines: each stream's Ts, Odc, B1, B2 */
    int rules_dirty;      /* rules_tex is behind `rules` */
    glcv_tex rules_tex;   /* RGBA32F array, one texel per layer */
    glcv_tex noise_tex;    /* R32F: the noise factors the threshold pass reads (an array: every stream's) */
    uint8_t *mask_copy;    /* CPU engine: every stream's mask for glcv_segment_map_masks */
    int host_masks;        /* compute, tiled, width % 4 == 0, GL 4.4: the kernel writes the masks
                              into download memory itself (segment_tile.glsl, SEGMENT_HOST_MASK) */
    int mask_slot;         /* that download slot of the last set, or -1 */
};

/* segment.c: the parameters the rule uses now; the next subset order (one of the 24, uniformly:
 * eq. 15, from the PCG32 stream both engines share); a frame brought to where the engine reads
 * it - packed RGB in s->rgb for the CPU engine, for GL the next frame texture for a host image or
 * else the caller's texture after validation (*gl_input; between engine begin and end). */
glcv_segment_values glcv_segment_rule_values(const glcv_segment *s);
void glcv_segment_draw_order(glcv_segment *s, int order[4]);
glcv_status glcv_segment_take_input(glcv_segment *s, const glcv_image *image, unsigned int texture,
                                    GLuint *gl_input);
/* glcv_segment_frame with the object's lock held (one stream). */
glcv_status glcv_segment_frame_locked(glcv_segment *s, const glcv_image *frame, int wait);
/* Checks a host frame: a valid colour image of the segmenter's size. */
glcv_status glcv_segment_check_image(glcv_segment *s, const glcv_image *image, const char *what);
/* Makes a checked host image or (img NULL) a caller's texture the background; clears the mask. */
glcv_status glcv_segment_use_background(glcv_segment *s, const glcv_image *img, unsigned int texture);
/* INVALID_ARGUMENT for a missing input of `what`: a NULL image, or (texture nonzero) texture 0. */
glcv_status glcv_segment_no_input(glcv_segment *s, const char *what, int texture);

/* segment.c: writes a plane of bytes (multiplied by `scale`: 255 for a 0/1 mask) into a GRAY8,
 * RGB8 or RGBA8 image. check_output: an image read-backs can fill (GRAY8 only if allow_gray), and
 * the state they read (`have`, else STATE with `missing`); errors logged as `what`. */
void glcv_segment_write_plane(const uint8_t *plane, int scale, glcv_image *out);
glcv_status glcv_segment_check_output(glcv_segment *s, const glcv_image *out, int allow_gray, int have,
                                      const char *what, const char *missing);
/* STATE (logged as `what`) while learning or before a background. */
glcv_status glcv_segment_ready(glcv_segment *s, const char *what);
/* segment_learn.c: ends learning without a new background (an end with no frame): what begin
 * started is dropped, and the background, parameters and noise factors stay as they were. */
void glcv_segment_learn_cancel(glcv_segment *s);
/* INVALID_ARGUMENT for a one-stream call on an object of several streams (logged). */
glcv_status glcv_segment_one_stream(glcv_segment *s, const char *what);

/* segment_batch.c: several streams (s->p.streams > 1). */
glcv_status glcv_segment_batch_create(glcv_segment *s);
void glcv_segment_batch_destroy(glcv_segment *s);
glcv_status glcv_segment_batch_learn_begin(glcv_segment *s);
glcv_status glcv_segment_batch_learn_end(glcv_segment *s);
/* Ends every stream's learning without a new background (glcv_segment_learn_cancel). */
void glcv_segment_batch_learn_cancel(glcv_segment *s);
/* After a setter: the settings to every stream's segmenter and rules (`seed`: the seed changed). */
glcv_status glcv_segment_batch_changed(glcv_segment *s, int seed);
glcv_status glcv_segment_batch_reset(glcv_segment *s);

/* ---- the GL engine (segment_gl.c) --------------------------------------------------------------- */

/* Creates s->engine in the current context (mode s->p.engine), the programs and the textures;
 * s->p.engine becomes the mode in use. */
glcv_status glcv_segment_gl_create(glcv_segment *s);
/* Deletes the textures and the engine (the context must be current, else only frees memory). */
void glcv_segment_gl_destroy(glcv_segment *s);
/* Clears the temporal prior (every subset mask and the full mask). */
glcv_status glcv_segment_gl_clear_masks(glcv_segment *s);
/* The frame texture the next host frame goes to. */
const glcv_tex *glcv_segment_gl_next_frame(glcv_segment *s);
/* The whole frame: thresholds, B1 iteration, `iterations` B2 iterations, merge, adaptation. */
glcv_status glcv_segment_gl_run(glcv_segment *s, GLuint input);
/* The end of a frame's call, between engine begin and end, which it ends: when `st` (bringing the
 * input) is OK the passes over `input`, then glFinish (wait) or glFlush. */
glcv_status glcv_segment_gl_frame(glcv_segment *s, glcv_status st, GLuint input, int wait);
/* Copies a texture into one of the segmenter's RGBA8 textures (exact for 8-bit inputs). */
glcv_status glcv_segment_gl_copy(glcv_segment *s, GLuint source, const glcv_tex *target);
/* Uploads the per-pixel noise factors (width * height floats, per layer; NULL: all 1). */
glcv_status glcv_segment_gl_set_noise(glcv_segment *s, const float *noise);
/* Uploads layer `layer`'s noise model (each pixel's level, the table) and runs it from the next
 * frame on (segment_internal.h). Between engine begin and end. */
glcv_status glcv_segment_gl_set_model(glcv_segment *s, int layer, const uint8_t *level,
                                      const float (*table)[4]);
/* Reads the noise factors in use (w * h floats per layer, layer after layer). */
glcv_status glcv_segment_gl_read_noise(glcv_segment *s, float *k);
/* Several streams: sets layer `layer`'s background (packed RGB), noise factors (w * h floats) and
 * rules (Ts, Odc, B1, B2), between engine begin and end; uploads the rules when they changed;
 * uploads a staged set of frames (every layer) into the next frame array. */
glcv_status glcv_segment_gl_set_layer(glcv_segment *s, int layer, const uint8_t *rgb, const float *noise,
                                      const float rule[4]);
glcv_status glcv_segment_gl_upload_rules(glcv_segment *s);
glcv_status glcv_segment_gl_upload_set(glcv_segment *s, int slot, glcv_pixel_format format);
/* As upload_set, for a caller's frames array (checked: glcv_gl_check_frames; its first `streams`
 * layers), copied on the GPU. */
glcv_status glcv_segment_gl_take_texture(glcv_segment *s, GLuint texture);
/* Reads the masks of every layer (layer after layer, w * h bytes each, 0/255); the memory is the
 * engine's, valid until its next download. */
glcv_status glcv_segment_gl_read_masks(glcv_segment *s, const uint8_t **masks);
/* Learning the mean: begin clears the sum, add adds a frame, end writes the background; cancel
 * (learning ended with no frame) goes back to the adapted background begin left alone. */
glcv_status glcv_segment_gl_learn_begin(glcv_segment *s);
glcv_status glcv_segment_gl_learn_add(glcv_segment *s, GLuint input);
glcv_status glcv_segment_gl_learn_end(glcv_segment *s);
void glcv_segment_gl_learn_cancel(glcv_segment *s);
/* The window sums of `input` against the background (each w * h int32; any may be NULL). */
glcv_status glcv_segment_gl_qualifiers(glcv_segment *s, GLuint input, int32_t *fore, int32_t *back,
                                       int32_t *cross);
/* Reads the mask (0/255 bytes, `row_bytes` apart), the background (packed RGB) and the thresholds
 * of the last frame (w * h bytes each, either may be NULL). */
glcv_status glcv_segment_gl_read_mask(glcv_segment *s, uint8_t *dst, size_t row_bytes);
glcv_status glcv_segment_gl_read_background(glcv_segment *s, uint8_t *rgb);
glcv_status glcv_segment_gl_read_thresholds(glcv_segment *s, uint8_t *m_min_b1, uint8_t *m_min_b2);

/* ---- for tests and benchmarks ------------------------------------------------------------------- */

/* COMPUTE mode: runs the MRF with one dispatch per substep instead of the tiled kernel, from the
 * next frame on (the temporal prior is cleared). UNSUPPORTED with other engines. Takes the
 * object's mutex. */
glcv_status glcv_segment_use_multipass(glcv_segment *s);
/* Nonzero when COMPUTE mode runs the tiled MRF kernel. Takes the object's mutex. */
int glcv_segment_tiled(glcv_segment *s);
/* Nonzero when the tiled kernel writes the masks of several streams to the host itself. */
int glcv_segment_masks_to_host(glcv_segment *s);

#endif
