/* The segmenter's background learning (the mean of N frames) and the calibration of its
 * parameters from the data (see glcv_segment_calibrate_end in glcv/segment.h). */
#include "segment_internal.h"

#include "core_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CALIB_ODC 100000.0f
#define CALIB_TS_PER_G 100.0
#define CALIB_B_PER_G 23.0

/* ---- calibration ---------------------------------------------------------------------------- */

/* Starts a calibration: Odc first (D^2 depends on it), an empty histogram. */
static void calib_start(glcv_segment *s)
{
    if (!(s->explicit_values & GLCV_SEGMENT_EXPLICIT_ODC))
        s->p.odc = CALIB_ODC;
    memset(s->calib_hist, 0, sizeof s->calib_hist);
    s->calib_frames = 0;
}

/* Adds the D^2 of every pixel of one frame (packed RGB for the CPU engine, else a texture). */
static glcv_status calib_accumulate(glcv_segment *s, const uint8_t *rgb, GLuint texture)
{
    size_t n = (size_t)s->width * (size_t)s->height;
    const int32_t *fore, *back, *cross;
    if (!s->engine) {
        glcv_segment_values v = glcv_segment_rule(s);
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
    for (size_t i = 0; i < n; i++) {
        double d2 = glcv_segment_d2(fore[i], back[i], cross[i], s->p.odc);
        int bin = (int)(log2(1.0 + d2) * 24.0);
        s->calib_hist[bin < 0 ? 0 : bin >= GLCV_SEGMENT_CALIB_BINS ? GLCV_SEGMENT_CALIB_BINS - 1 : bin]++;
    }
    s->calib_frames++;
    return GLCV_OK;
}

/* g = the median of D^2 from the histogram; sets what was not given explicitly. */
static void calib_apply(glcv_segment *s, float *g_out)
{
    uint64_t total = 0, seen = 0;
    for (int i = 0; i < GLCV_SEGMENT_CALIB_BINS; i++)
        total += s->calib_hist[i];
    int bin = 0;
    while (bin < GLCV_SEGMENT_CALIB_BINS - 1 && (seen + s->calib_hist[bin]) * 2 < total)
        seen += s->calib_hist[bin++];
    double g = exp2((bin + 0.5) / 24.0) - 1.0;
    if (g < 1.0)
        g = 1.0;
    double ts = fmin(CALIB_TS_PER_G * g, GLCV_SEGMENT_MAX_RULE_VALUE), b = fmin(CALIB_B_PER_G * g, GLCV_SEGMENT_MAX_RULE_VALUE);
    if (!(s->explicit_values & GLCV_SEGMENT_EXPLICIT_TS))
        s->p.ts = (float)ts;
    if (!(s->explicit_values & GLCV_SEGMENT_EXPLICIT_B1))
        s->p.b1 = (float)b;
    if (!(s->explicit_values & GLCV_SEGMENT_EXPLICIT_B2))
        s->p.b2 = (float)b;
    glcv_logf(&s->p.logger, GLCV_LOG_INFO,
              "segment: calibrated on %d frames: median D^2 %.1f -> Ts %g, Odc %g, B1 %g, B2 %g%s", s->calib_frames,
              g, (double)s->p.ts, (double)s->p.odc, (double)s->p.b1, (double)s->p.b2,
              s->explicit_values ? " (explicit values kept)" : "");
    if (g_out)
        *g_out = (float)g;
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

/* After learning: calibrates on the kept frames. */
static glcv_status calib_learned(glcv_segment *s)
{
    if (s->p.fixed_parameters || s->calib_kept == 0)
        return GLCV_OK;
    if (s->engine)
        glcv_engine_sync_writes(s->engine);
    calib_start(s);
    for (int k = 0; k < s->calib_kept; k++) {
        glcv_status st = calib_accumulate(s, s->calib_rgb[k], s->calib_tex[k].id);
        if (st != GLCV_OK)
            return st;
    }
    calib_apply(s, NULL);
    return GLCV_OK;
}

/* ---- learning -------------------------------------------------------------------------------------- */

static glcv_status learn_begin(glcv_segment *s)
{
    glcv_status st = s->engine ? glcv_segment_gl_learn_begin(s) : glcv_segment_cpu_learn_begin(&s->cpu);
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
    GLCV_LOCKED_CALL(s, learn_begin(s));
}

static glcv_status learn_add(glcv_segment *s, const glcv_image *img, unsigned int texture)
{
    if (!s->learning)
        return glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "learn_add without learn_begin");
    glcv_status st = img ? glcv_segment_check_image(s, img, "learning frame") : GLCV_OK;
    if (st != GLCV_OK)
        return st;
    if (!s->engine) {
        if ((st = glcv_segment_take_input(s, img, texture, NULL)) != GLCV_OK)
            return st;
        glcv_segment_cpu_learn_add(&s->cpu, s->rgb);
        if (!s->p.fixed_parameters && (st = calib_keep(s, s->learn_count, 0)) != GLCV_OK)
            return st;
    } else {
        glcv_engine_begin(s->engine);
        st = glcv_segment_take_input(s, img, texture, &texture);
        if (st == GLCV_OK)
            st = glcv_segment_gl_learn_add(s, texture);
        if (st == GLCV_OK && !s->p.fixed_parameters)
            st = calib_keep(s, s->learn_count, texture);
        glcv_engine_end(s->engine);
        if (st != GLCV_OK)
            return st;
    }
    s->learn_count++;
    return GLCV_OK;
}

glcv_status glcv_segment_learn_add(glcv_segment *s, const glcv_image *frame)
{
    GLCV_LOCKED_CALL(s, frame ? learn_add(s, frame, 0) : glcv_segment_no_input(s, "learn_add", 0));
}

glcv_status glcv_segment_learn_add_texture(glcv_segment *s, unsigned int texture)
{
    /* learn_add reports a missing learn_begin before a missing texture */
    GLCV_LOCKED_CALL(s, texture || !s->learning ? learn_add(s, NULL, texture)
                                                : glcv_segment_no_input(s, "learn_add", 1));
}

static glcv_status learn_end(glcv_segment *s)
{
    glcv_status st = GLCV_OK;
    if (!s->learning || s->learn_count == 0) {
        st = glcv_fail(&s->p.logger, GLCV_ERROR_STATE,
                       s->learning ? "learn_end: no frame was added" : "learn_end without learn_begin");
    } else if (!s->engine) {
        glcv_segment_cpu_learn_end(&s->cpu);
        s->cpu_mask_dirty = 1;
    } else {
        st = glcv_segment_gl_learn_end(s);
        if (st == GLCV_OK)
            st = glcv_segment_gl_clear_masks(s);
    }
    if (st == GLCV_OK) {
        s->learning = 0;
        s->have_background = 1;
        st = calib_learned(s);
    }
    return st;
}

glcv_status glcv_segment_learn_end(glcv_segment *s)
{
    GLCV_LOCKED_CALL(s, learn_end(s));
}

/* ---- calibration on any frames -------------------------------------------------------------- */

static glcv_status calibrate_begin(glcv_segment *s)
{
    if (!s->have_background || s->learning)
        return glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "calibrate_begin: set or learn a background first");
    calib_start(s);
    s->calibrating = 1;
    return GLCV_OK;
}

glcv_status glcv_segment_calibrate_begin(glcv_segment *s)
{
    GLCV_LOCKED_CALL(s, calibrate_begin(s));
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
    GLCV_LOCKED_CALL(s, frame ? calibrate_add(s, frame, 0) : glcv_segment_no_input(s, "calibrate_add", 0));
}

glcv_status glcv_segment_calibrate_add_texture(glcv_segment *s, unsigned int texture)
{
    GLCV_LOCKED_CALL(s, texture ? calibrate_add(s, NULL, texture) : glcv_segment_no_input(s, "calibrate_add", 1));
}

static glcv_status calibrate_end(glcv_segment *s, float *g_out)
{
    glcv_status st = GLCV_OK;
    if (!s->calibrating || s->calib_frames == 0)
        st = glcv_fail(&s->p.logger, GLCV_ERROR_STATE,
                       s->calibrating ? "calibrate_end: no frame was added" : "calibrate_end without calibrate_begin");
    else
        calib_apply(s, g_out);
    s->calibrating = 0;
    return st;
}

glcv_status glcv_segment_calibrate_end(glcv_segment *s, float *g_out)
{
    GLCV_LOCKED_CALL(s, calibrate_end(s, g_out));
}

