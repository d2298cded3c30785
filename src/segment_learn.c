/* The segmenter's background learning (the mean of N frames) and the calibration of its
 * parameters from the data (see glcv_segment_calibrate_end in glcv/segment.h). */
#include "segment_internal.h"

#include "core_internal.h"

#include <glcv/image.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The calibration's constants besides those in segment_internal.h (see calib_apply). */
#define CALIB_QUANTILE 0.25 /* g: this quantile of the per-pixel medians of D^2 */
/* k(x) = min(med(x), CALIB_MEDIAN_CAP g) / (CALIB_MEDIAN_SCALE g), at least 1 (see calib_apply). */
#define CALIB_MEDIAN_SCALE 2.5
#define CALIB_MEDIAN_CAP 30.0
/* g is at least the D^2 of 8-bit rounding and slight sensor noise (about one grey level per
 * channel). Compressed video, whose static blocks repeat exactly, measures less where nothing
 * moves, yet changes by a few grey levels around anything that moves. */
#define CALIB_MIN_NOISE 16.0

/* ---- calibration ---------------------------------------------------------------------------- */

/* D^2 samples are kept as q = round(2048 log2(1 + D^2)), 16 bits (D^2 up to 2^32, steps of
 * 0.03 %): 64 bytes per pixel for GLCV_SEGMENT_CALIB_SAMPLES samples. */
static uint16_t quantise(double d2)
{
    double q = floor(2048.0 * log2(1.0 + d2) + 0.5);
    return (uint16_t)(q < 0 ? 0 : q > 65535 ? 65535 : q);
}

static double dequantise(uint16_t q)
{
    return exp2((double)q / 2048.0) - 1.0;
}

/* Starts a calibration: Odc first (D^2 depends on it), no samples. Changes nothing when it fails. */
static glcv_status calib_start(glcv_segment *s)
{
    size_t n = (size_t)s->width * (size_t)s->height;
    if (!s->calib_d2 && !(s->calib_d2 = malloc(n * GLCV_SEGMENT_CALIB_SAMPLES * sizeof *s->calib_d2)))
        return glcv_fail(&s->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "segment: no memory for the calibration");
    if (!(s->explicit_values & GLCV_SEGMENT_EXPLICIT_ODC))
        s->p.odc = GLCV_SEGMENT_CALIB_ODC;
    s->calib_samples = 0;
    s->calib_sample_stride = 1;
    s->calib_frames = 0;
    return GLCV_OK;
}

/* Keeps D^2 of every pixel of one frame (packed RGB for the CPU engine, else a texture) as the
 * next sample, if the frame is one of every calib_sample_stride-th; when the samples are full,
 * every other one is dropped and the stride doubles, so they stay evenly spaced. D^2 comes from
 * the exact window sums, computed on the host for every engine: the calibration is the same. */
static glcv_status calib_accumulate(glcv_segment *s, const uint8_t *rgb, GLuint texture)
{
    size_t n = (size_t)s->width * (size_t)s->height;
    int offered = s->calib_frames++;
    if (offered % s->calib_sample_stride != 0)
        return GLCV_OK;
    if (s->calib_samples == GLCV_SEGMENT_CALIB_SAMPLES) {
        for (size_t i = 0; i < n; i++) {
            uint16_t *d = s->calib_d2 + i * GLCV_SEGMENT_CALIB_SAMPLES;
            for (int j = 0; j < GLCV_SEGMENT_CALIB_SAMPLES / 2; j++)
                d[j] = d[2 * j];
        }
        s->calib_samples = GLCV_SEGMENT_CALIB_SAMPLES / 2;
        s->calib_sample_stride *= 2;
        if (offered % s->calib_sample_stride != 0)
            return GLCV_OK;
    }
    const int32_t *fore, *back, *cross;
    if (!s->engine) {
        glcv_segment_values v = glcv_segment_rule_values(s);
        glcv_segment_cpu_thresholds(&s->cpu, rgb, &v);
        fore = s->cpu.fore, back = s->cpu.back, cross = s->cpu.cross;
    } else {
        if (!s->calib_sums && !(s->calib_sums = malloc(3 * n * sizeof(int32_t))))
            return GLCV_ERROR_OUT_OF_MEMORY;
        fore = s->calib_sums, back = s->calib_sums + n, cross = s->calib_sums + 2 * n;
        glcv_status st = glcv_segment_gl_qualifiers(s, texture, s->calib_sums, s->calib_sums + n, s->calib_sums + 2 * n);
        if (st != GLCV_OK)
            return st;
    }
    int j = s->calib_samples++;
    for (size_t i = 0; i < n; i++)
        s->calib_d2[i * GLCV_SEGMENT_CALIB_SAMPLES + (size_t)j] = quantise(glcv_segment_d2(fore[i], back[i], cross[i], s->p.odc));
    return GLCV_OK;
}

/* The lower median of m <= GLCV_SEGMENT_CALIB_SAMPLES samples (sorted in a copy). */
static uint16_t median_of(const uint16_t *d, int m)
{
    uint16_t v[GLCV_SEGMENT_CALIB_SAMPLES];
    for (int i = 0; i < m; i++) { /* insertion sort: m is small */
        uint16_t x = d[i];
        int j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
    return v[(m - 1) / 2];
}

/* The calibration from the samples:
 *   med(x)  the median of D^2 at pixel x over the frames (robust to objects that cover x in fewer
 *           than half of them);
 *   g       the scene's noise level: a low quantile of med over the pixels, i.e. the level of the
 *           still parts of the scene, even when water or leaves cover most of it;
 *   k(x)    = max(1, min(med(x), 30 g) / (2.5 g)): 1 where the scene is about as quiet as its still
 *           parts, larger where it moves by itself all the time (leaves, flicker, compression noise
 *           at edges), at most 12.
 * The median, not the mean, sets k: rippling water is still most of the time and flashes now and
 * then, and its mean is lifted by the flashes until the thresholds there rise above the objects
 * that cross it (a mean of D^2 capped at 20 g over 2 g, the rule before this one: recall 0.59 on
 * the synthetic dynamic scene against 0.93); the MRF's neighbourhood prior already removes flashes
 * that stand alone. Foliage that moves all the time has a high median and keeps its high factor.
 * The cap keeps a pixel that an object covered in most calibration frames from a factor that
 * would hide every later object there. Measured in docs/QUALITY.md.
 * The rule then compares D^2 / k(x) with Ts + B (12 - 2M), Ts = T g and B1 = B2 = Bc g (those not
 * given explicitly). */
static glcv_status calib_apply(glcv_segment *s, float *g_out)
{
    size_t n = (size_t)s->width * (size_t)s->height;
    int m = s->calib_samples;
    uint32_t *hist = calloc(65536, sizeof *hist);
    double *value = malloc(65536 * sizeof *value); /* dequantised samples */
    float *noise = s->noise ? s->noise : malloc(n * sizeof *noise);
    if (!hist || !value || !noise) {
        free(hist);
        free(value);
        if (noise != s->noise)
            free(noise);
        return glcv_fail(&s->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "segment: no memory for the calibration");
    }
    s->noise = noise;
    for (int q = 0; q < 65536; q++)
        value[q] = dequantise((uint16_t)q);
    /* each pixel's quantised median, kept in `noise` (exact in a float) until k replaces it */
    for (size_t i = 0; i < n; i++) {
        uint16_t q = median_of(s->calib_d2 + i * GLCV_SEGMENT_CALIB_SAMPLES, m);
        noise[i] = (float)q;
        hist[q]++;
    }
    uint64_t rank = (uint64_t)(CALIB_QUANTILE * (double)(n - 1)), seen = 0;
    int gq = 0;
    while (gq < 65535 && seen + hist[gq] <= rank)
        seen += hist[gq++];
    double g = fmax(value[gq], CALIB_MIN_NOISE), cap = CALIB_MEDIAN_CAP * g;
    uint8_t *level = s->cpu.noise_level ? s->cpu.noise_level : malloc(n);
    if (!level) {
        free(hist);
        free(value);
        return glcv_fail(&s->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "segment: no memory for the calibration");
    }
    s->cpu.noise_level = level;
    for (int i = 0; i < GLCV_SEGMENT_NOISE_LEVELS; i++) {
        double d2 = g * exp2((double)(i - GLCV_SEGMENT_NOISE_LEVEL_ZERO) / GLCV_SEGMENT_NOISE_STEPS);
        s->noise_table[i][0] = (float)d2;
        s->noise_table[i][1] = (float)fmax(fmin(d2, cap) / (CALIB_MEDIAN_SCALE * g), 1.0);
        s->noise_table[i][2] = s->noise_table[i][3] = 0.0f;
    }
    s->cpu.noise_table = (const float(*)[4])s->noise_table;
    for (size_t i = 0; i < n; i++) {
        double med = value[(uint16_t)noise[i]];
        noise[i] = (float)fmax(fmin(med, cap) / (CALIB_MEDIAN_SCALE * g), 1.0);
        double l = med > 0 ? floor(GLCV_SEGMENT_NOISE_LEVEL_ZERO + GLCV_SEGMENT_NOISE_STEPS * log2(med / g) + 0.5) : 0;
        level[i] = (uint8_t)(l < 0 ? 0 : l > GLCV_SEGMENT_NOISE_LEVELS - 1 ? GLCV_SEGMENT_NOISE_LEVELS - 1 : l);
    }
    free(hist);
    free(value);
    double ts = fmin(GLCV_SEGMENT_CALIB_TS * g, GLCV_SEGMENT_MAX_RULE_VALUE), b = fmin(GLCV_SEGMENT_CALIB_B * g, GLCV_SEGMENT_MAX_RULE_VALUE);
    if (!(s->explicit_values & GLCV_SEGMENT_EXPLICIT_TS))
        s->p.ts = (float)ts;
    if (!(s->explicit_values & GLCV_SEGMENT_EXPLICIT_B1))
        s->p.b1 = (float)b;
    if (!(s->explicit_values & GLCV_SEGMENT_EXPLICIT_B2))
        s->p.b2 = (float)b;
    glcv_status st = GLCV_OK;
    if (s->engine && (st = glcv_segment_gl_set_noise(s, noise)) == GLCV_OK) {
        glcv_engine_begin(s->engine);
        st = glcv_segment_gl_set_model(s, 0, level, (const float(*)[4])s->noise_table);
        glcv_engine_end(s->engine);
        s->noise_model = st == GLCV_OK;
    } else if (!s->engine) {
        s->cpu.noise = noise;
    }
    glcv_logf(&s->p.logger, GLCV_LOG_INFO,
              "segment: calibrated on %d frames (%d samples): noise level g %.1f -> Ts %g, Odc %g, B1 %g, B2 %g%s",
              s->calib_frames, m, g, (double)s->p.ts, (double)s->p.odc, (double)s->p.b1, (double)s->p.b2,
              s->explicit_values ? " (explicit values kept)" : "");
    if (g_out)
        *g_out = (float)g;
    return st;
}

/* While learning: keeps every calib_stride-th frame (`texture` the GL input, else s->rgb), at most
 * GLCV_SEGMENT_CALIB_KEEP, halving when full. */
static glcv_status calib_keep(glcv_segment *s, int index, GLuint texture)
{
    if (index % s->calib_stride != 0)
        return GLCV_OK;
    if (s->calib_kept == GLCV_SEGMENT_CALIB_KEEP) {
        for (int i = 1; i < GLCV_SEGMENT_CALIB_KEEP / 2; i++) { /* keep the even ones: swap storage */
            glcv_tex t = s->calib_tex[i];
            s->calib_tex[i] = s->calib_tex[2 * i];
            s->calib_tex[2 * i] = t;
            uint8_t *r = s->calib_rgb[i];
            s->calib_rgb[i] = s->calib_rgb[2 * i];
            s->calib_rgb[2 * i] = r;
        }
        s->calib_kept = GLCV_SEGMENT_CALIB_KEEP / 2;
        s->calib_stride *= 2;
        if (index % s->calib_stride != 0)
            return GLCV_OK;
    }
    int k = s->calib_kept;
    if (!s->engine) {
        size_t bytes = (size_t)s->width * (size_t)s->height * 3;
        if (!s->calib_rgb[k] && !(s->calib_rgb[k] = malloc(bytes)))
            return GLCV_ERROR_OUT_OF_MEMORY;
        memcpy(s->calib_rgb[k], s->rgb, bytes);
    } else {
        glcv_status st = GLCV_OK;
        if (!s->calib_tex[k].id)
            st = glcv_engine_tex_create(s->engine, &s->calib_tex[k], s->width, s->height, GLCV_FORMAT_RGBA8);
        if (st == GLCV_OK)
            st = glcv_segment_gl_copy(s, texture, &s->calib_tex[k]);
        if (st != GLCV_OK)
            return st;
    }
    s->calib_kept++;
    return GLCV_OK;
}

/* glcv_image_median's source over the kept frames: packed RGB (CPU engine) or the texture read
 * back into the scratch buffer (w * h * 4 bytes). */
typedef struct kept_source {
    glcv_segment *s;
    uint8_t *scratch;
} kept_source;

static glcv_status kept_frame(void *user, int index, glcv_image *frame)
{
    kept_source *k = user;
    glcv_segment *s = k->s;
    if (!s->engine) {
        *frame = (glcv_image){s->calib_rgb[index], s->width, s->height, 0, GLCV_PIXEL_RGB8};
        return GLCV_OK;
    }
    glcv_engine_begin(s->engine);
    glcv_status st = glcv_engine_read(s->engine, s->calib_tex[index].id, s->width, s->height, GL_RGBA,
                                      GL_UNSIGNED_BYTE, k->scratch, (size_t)s->width * 4);
    glcv_engine_end(s->engine);
    *frame = (glcv_image){k->scratch, s->width, s->height, 0, GLCV_PIXEL_RGBA8};
    return st;
}

/* CALIBRATED preset: the background is the per-pixel median of the kept frames. */
static glcv_status learn_median(glcv_segment *s)
{
    kept_source src = {s, NULL};
    if (s->engine) {
        glcv_engine_sync_writes(s->engine);
        if (!(src.scratch = malloc((size_t)s->width * (size_t)s->height * 4)))
            return glcv_fail(&s->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "segment: no memory for the median");
    }
    glcv_image median = {s->rgb, s->width, s->height, 0, GLCV_PIXEL_RGB8};
    glcv_status st = glcv_image_median(s->calib_kept, kept_frame, &src, &s->p.logger, &median);
    free(src.scratch);
    return st == GLCV_OK ? glcv_segment_use_background(s, &median, 0) : st;
}

/* After learning: calibrates on the kept frames. */
static glcv_status calib_learned(glcv_segment *s)
{
    if (s->p.preset != GLCV_SEGMENT_CALIBRATED || s->p.fixed_parameters || s->calib_kept == 0)
        return GLCV_OK;
    if (s->engine)
        glcv_engine_sync_writes(s->engine);
    glcv_status st = calib_start(s);
    for (int k = 0; k < s->calib_kept && st == GLCV_OK; k++)
        st = calib_accumulate(s, s->calib_rgb[k], s->calib_tex[k].id);
    return st == GLCV_OK ? calib_apply(s, NULL) : st;
}

/* ---- learning -------------------------------------------------------------------------------------- */

/* The mean of the frames (PAPER preset) accumulates as they come; the median (CALIBRATED) is taken
 * at the end from the kept frames. */
static int learns_mean(const glcv_segment *s)
{
    return s->p.preset == GLCV_SEGMENT_PAPER;
}

void glcv_segment_learn_cancel(glcv_segment *s)
{
    if (!s->learning)
        return;
    if (s->p.streams > 1)
        glcv_segment_batch_learn_cancel(s);
    else if (learns_mean(s) && s->engine)
        glcv_segment_gl_learn_cancel(s);
    else if (learns_mean(s))
        glcv_segment_cpu_learn_cancel(&s->cpu);
    s->learning = 0;
    s->learn_count = 0;
    s->calib_kept = 0;
}

static glcv_status learn_begin(glcv_segment *s)
{
    glcv_status st = GLCV_OK;
    glcv_segment_learn_cancel(s); /* a begin while learning starts again */
    if (s->p.streams > 1)
        st = glcv_segment_batch_learn_begin(s);
    else if (learns_mean(s))
        st = s->engine ? glcv_segment_gl_learn_begin(s) : glcv_segment_cpu_learn_begin(&s->cpu);
    if (st == GLCV_OK) {
        s->learning = 1;
        s->learn_count = 0;
        s->calib_kept = 0;
        s->calib_stride = 1;
    }
    return st;
}

glcv_status glcv_segment_learn_begin(glcv_segment *s)
{
    GLCV_LOCKED_GL_CALL(s, "segment: learn_begin", learn_begin(s));
}

static glcv_status learn_add(glcv_segment *s, const glcv_image *img, unsigned int texture)
{
    glcv_status st = glcv_segment_one_stream(s, "learn_add");
    if (st != GLCV_OK)
        return st;
    if (!s->learning)
        return glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "learn_add without learn_begin");
    if (img && (st = glcv_segment_check_image(s, img, "learning frame")) != GLCV_OK)
        return st;
    if (!s->engine) {
        if ((st = glcv_segment_take_input(s, img, texture, NULL)) != GLCV_OK)
            return st;
        if (learns_mean(s))
            glcv_segment_cpu_learn_add(&s->cpu, s->rgb);
        else if ((st = calib_keep(s, s->learn_count, 0)) != GLCV_OK)
            return st;
    } else {
        glcv_engine_begin(s->engine);
        st = glcv_segment_take_input(s, img, texture, &texture);
        if (st == GLCV_OK)
            st = learns_mean(s) ? glcv_segment_gl_learn_add(s, texture) : calib_keep(s, s->learn_count, texture);
        glcv_engine_end(s->engine);
        if (st != GLCV_OK)
            return st;
    }
    s->learn_count++;
    return GLCV_OK;
}

glcv_status glcv_segment_learn_add(glcv_segment *s, const glcv_image *frame)
{
    GLCV_LOCKED_GL_CALL(s, "segment: learn_add", frame ? learn_add(s, frame, 0) : glcv_segment_no_input(s, "learn_add", 0));
}

glcv_status glcv_segment_learn_add_texture(glcv_segment *s, unsigned int texture)
{
    /* learn_add reports a missing learn_begin before a missing texture */
    GLCV_LOCKED_GL_CALL(s, "segment: learn_add_texture", texture || !s->learning ? learn_add(s, NULL, texture)
                                                : glcv_segment_no_input(s, "learn_add", 1));
}

/* Ends learning whatever happens (see glcv_segment_learn_end). */
static glcv_status learn_end(glcv_segment *s)
{
    glcv_status st = GLCV_OK;
    if (!s->learning)
        return glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "learn_end without learn_begin");
    if (s->learn_count == 0) {
        glcv_segment_learn_cancel(s);
        return glcv_fail(&s->p.logger, GLCV_ERROR_STATE,
                         "learn_end: no frame was added (learning ended; the background is unchanged)");
    }
    for (int i = 0; s->p.streams > 1 && s->sub && i < s->p.streams; i++)
        if (s->sub[i]->learn_count == 0) { /* frames given one stream at a time, none to this one */
            glcv_segment_batch_learn_cancel(s);
            s->learning = 0;
            return glcv_fail(&s->p.logger, GLCV_ERROR_STATE,
                             "learn_end: stream %d has no frame (learning ended; the backgrounds are unchanged)", i);
        }
    if (s->p.streams > 1) {
        st = glcv_segment_batch_learn_end(s);
        s->learning = 0; /* the streams' learning is over either way */
        s->have_background = st == GLCV_OK;
        return st;
    } else if (!learns_mean(s)) {
        st = learn_median(s);
    } else if (!s->engine) {
        glcv_segment_cpu_learn_end(&s->cpu);
        s->cpu_mask_dirty = 1;
    } else {
        st = glcv_segment_gl_learn_end(s);
        if (st == GLCV_OK)
            st = glcv_segment_gl_clear_masks(s);
    }
    s->learning = 0;
    if (st != GLCV_OK)
        return st;
    s->have_background = 1;
    return calib_learned(s);
}

glcv_status glcv_segment_learn_end(glcv_segment *s)
{
    GLCV_LOCKED_GL_CALL(s, "segment: learn_end", learn_end(s));
}

/* ---- calibration on any frames -------------------------------------------------------------- */

static glcv_status calibrate_begin(glcv_segment *s)
{
    if (s->p.streams > 1)
        return glcv_segment_one_stream(s, "calibrate_begin");
    if (!s->have_background || s->learning)
        return glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "calibrate_begin: set or learn a background first");
    if (s->calibrating && !(s->explicit_values & GLCV_SEGMENT_EXPLICIT_ODC)) /* begin again */
        s->p.odc = s->odc_before_calib;
    float odc = s->p.odc;
    glcv_status st = calib_start(s);
    s->calibrating = st == GLCV_OK;
    if (st == GLCV_OK)
        s->odc_before_calib = odc;
    return st;
}

glcv_status glcv_segment_calibrate_begin(glcv_segment *s)
{
    GLCV_LOCKED_GL_CALL(s, "segment: calibrate_begin", calibrate_begin(s));
}

static glcv_status calibrate_add(glcv_segment *s, const glcv_image *img, unsigned int texture)
{
    if (!s->calibrating)
        return glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "calibrate_add without calibrate_begin");
    glcv_status st = img ? glcv_segment_check_image(s, img, "calibration frame") : GLCV_OK;
    if (st != GLCV_OK)
        return st;
    if (!s->engine)
        return (st = glcv_segment_take_input(s, img, texture, NULL)) == GLCV_OK ? calib_accumulate(s, s->rgb, 0) : st;
    glcv_engine_begin(s->engine);
    st = glcv_segment_take_input(s, img, texture, &texture);
    glcv_engine_end(s->engine);
    return st == GLCV_OK ? calib_accumulate(s, NULL, texture) : st;
}

glcv_status glcv_segment_calibrate_add(glcv_segment *s, const glcv_image *frame)
{
    GLCV_LOCKED_GL_CALL(s, "segment: calibrate_add", frame ? calibrate_add(s, frame, 0) : glcv_segment_no_input(s, "calibrate_add", 0));
}

glcv_status glcv_segment_calibrate_add_texture(glcv_segment *s, unsigned int texture)
{
    GLCV_LOCKED_GL_CALL(s, "segment: calibrate_add_texture", texture ? calibrate_add(s, NULL, texture) : glcv_segment_no_input(s, "calibrate_add", 1));
}

static glcv_status calibrate_end(glcv_segment *s, float *g_out)
{
    glcv_status st = GLCV_OK;
    if (!s->calibrating)
        return glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "calibrate_end without calibrate_begin");
    if (s->calib_frames == 0) {
        if (!(s->explicit_values & GLCV_SEGMENT_EXPLICIT_ODC))
            s->p.odc = s->odc_before_calib; /* calibrate_begin set it for D^2 */
        st = glcv_fail(&s->p.logger, GLCV_ERROR_STATE,
                       "calibrate_end: no frame was added (calibration ended; the parameters are unchanged)");
    } else {
        st = calib_apply(s, g_out);
    }
    s->calibrating = 0;
    return st;
}

glcv_status glcv_segment_calibrate_end(glcv_segment *s, float *g_out)
{
    GLCV_LOCKED_GL_CALL(s, "segment: calibrate_end", calibrate_end(s, g_out));
}

