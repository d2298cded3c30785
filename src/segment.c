/* The segmenter object: parameters, the subset-order PRNG, validation, inputs and outputs, and
 * the dispatch of each frame to its engine - the GL passes (segment_gl.c) or the CPU
 * implementation (segment_cpu.c). Learning and calibration: segment_learn.c.
 * Why one file of about 800 lines: every public call takes the object's lock, checks its inputs and
 * picks the engine here; split, the locking and checking rules would be spread over files. */
#include "segment_internal.h"

#include "core_internal.h"

#include <glcv/context.h>
#include <glcv/image.h>

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The paper's values (GLCV_SEGMENT_PAPER). */
#define PAPER_TS 310.0f
#define PAPER_ODC 5800.0f
#define PAPER_B1 2.0f
#define PAPER_B2 200.0f
/* GLCV_SEGMENT_CALIBRATED before a calibration: the calibration's values at a moderate noise
 * level, and adaptation. */
#define CALIBRATED_NOISE 50.0
#define CALIBRATED_ADAPT_RATE 0.01f
#define DEFAULT_ITERATIONS 8
#define DEFAULT_SEED 0x5EEDu
#define MAX_ITERATIONS 1000
#define MAX_STREAMS 2048

/* ---- PRNG: PCG32 (O'Neill), the subset orders of both engines ---------------------------- */

static uint32_t pcg32(uint64_t *state)
{
    uint64_t old = *state;
    *state = old * 6364136223846793005ull + 1442695040888963407ull;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((32u - rot) & 31u));
}

static void seed_rng(glcv_segment *s, uint64_t seed)
{
    s->rng = 0;
    pcg32(&s->rng);
    s->rng += seed;
    pcg32(&s->rng);
}

void glcv_segment_draw_order(glcv_segment *s, int order[4])
{
    uint32_t r;
    do {
        r = pcg32(&s->rng);
    } while (r >= 4294967280u); /* 4294967280 = 24 * 178956970: no modulo bias */
    int index = (int)(r % 24u);
    int items[4] = {GLCV_SUBSET_K, GLCV_SUBSET_L, GLCV_SUBSET_M, GLCV_SUBSET_N};
    int left = 4;
    static const int fact[4] = {6, 2, 1, 1};
    for (int i = 0; i < 4; i++) {
        int k = index / fact[i];
        index %= fact[i];
        order[i] = items[k];
        for (int j = k; j < left - 1; j++)
            items[j] = items[j + 1];
        left--;
    }
}

/* ---- parameters ---------------------------------------------------------------------------- */

/* Ts, Odc and B up to GLCV_SEGMENT_MAX_RULE_VALUE (1e9): far beyond any useful value (window sums
 * are below 2^21), and small enough that the GPU's float arithmetic neither overflows nor loses
 * the decision. */
#define MAX_RULE_VALUE GLCV_SEGMENT_MAX_RULE_VALUE

static glcv_status check_ts(const glcv_logger *lg, double v)
{
    return glcv_check_range(lg, "segment", "Ts", v, 0, MAX_RULE_VALUE);
}

static glcv_status check_odc(const glcv_logger *lg, double v)
{
    return glcv_check_range(lg, "segment", "Odc", v, 0, MAX_RULE_VALUE);
}

static glcv_status check_b(const glcv_logger *lg, const char *name, double v)
{
    if (!glcv_finite(v) || v <= 0 || v > MAX_RULE_VALUE)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "%s must be > 0 and <= 1e9 (got %g)", name, v);
    return GLCV_OK;
}

static glcv_status check_iterations(const glcv_logger *lg, int v)
{
    return glcv_check_range(lg, "segment", "iterations", v, 0, MAX_ITERATIONS);
}

static glcv_status check_rate(const glcv_logger *lg, double v)
{
    return glcv_check_range(lg, "segment", "adapt_rate", v, 0, 1);
}

/* Fills defaults and validates. */
static glcv_status resolve_params(const glcv_segment_params *in, glcv_segment_params *p)
{
    *p = *in;
    const glcv_logger *lg = &in->logger;
    glcv_status st = glcv_check_size(lg, "segment", p->width, p->height, 65536);
    if (st != GLCV_OK)
        return st;
    GLCV_DEFAULT(p->preset, GLCV_SEGMENT_CALIBRATED);
    if (p->preset != GLCV_SEGMENT_CALIBRATED && p->preset != GLCV_SEGMENT_PAPER)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "segment: unknown preset %d", (int)p->preset);
    if (p->preset == GLCV_SEGMENT_PAPER) {
        GLCV_DEFAULT(p->ts, PAPER_TS);
        GLCV_DEFAULT(p->odc, PAPER_ODC);
        GLCV_DEFAULT(p->b1, PAPER_B1);
        GLCV_DEFAULT(p->b2, PAPER_B2);
    } else {
        GLCV_DEFAULT(p->ts, (float)(GLCV_SEGMENT_CALIB_TS * CALIBRATED_NOISE));
        GLCV_DEFAULT(p->odc, GLCV_SEGMENT_CALIB_ODC);
        GLCV_DEFAULT(p->b1, (float)(GLCV_SEGMENT_CALIB_B * CALIBRATED_NOISE));
        GLCV_DEFAULT(p->b2, (float)(GLCV_SEGMENT_CALIB_B * CALIBRATED_NOISE));
        GLCV_DEFAULT(p->adapt_rate, CALIBRATED_ADAPT_RATE);
    }
    GLCV_DEFAULT(p->iterations, DEFAULT_ITERATIONS);
    GLCV_DEFAULT(p->seed, DEFAULT_SEED);
    GLCV_DEFAULT(p->engine, GLCV_ENGINE_AUTO);
    GLCV_DEFAULT(p->streams, 1);
    if (p->streams < 1 || p->streams > MAX_STREAMS)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "segment: streams %d outside 1..%d", p->streams,
                         MAX_STREAMS);
    if ((st = check_ts(lg, p->ts)) || (st = check_odc(lg, p->odc)) || (st = check_b(lg, "B1", p->b1)) ||
        (st = check_b(lg, "B2", p->b2)) || (st = check_iterations(lg, p->iterations)) ||
        (st = check_rate(lg, p->adapt_rate)))
        return st;
    if (p->engine < GLCV_ENGINE_AUTO || p->engine > GLCV_ENGINE_CPU)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "unknown engine mode %d", (int)p->engine);
    return GLCV_OK;
}

glcv_segment_values glcv_segment_rule_values(const glcv_segment *s)
{
    glcv_segment_values v = {s->p.ts, s->p.odc, {s->p.b1, s->p.b2}};
    return v;
}

/* ---- create / destroy ---------------------------------------------------------------------- */

glcv_status glcv_segment_create(const glcv_segment_params *params, glcv_segment **out)
{
    GLCV_CREATE_BEGIN(params, out);
    glcv_segment_params p;
    glcv_status st = resolve_params(params, &p);
    if (st != GLCV_OK)
        return st;
    const glcv_logger *lg = &params->logger;

    glcv_segment *s = calloc(1, sizeof *s);
    if (!s)
        return GLCV_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&s->lock, NULL);
    s->mapped_slot = -1;
    s->mask_slot = -1;
    s->p = p;
    s->explicit_values = (params->ts != 0 ? GLCV_SEGMENT_EXPLICIT_TS : 0) |
                         (params->odc != 0 ? GLCV_SEGMENT_EXPLICIT_ODC : 0) |
                         (params->b1 != 0 ? GLCV_SEGMENT_EXPLICIT_B1 : 0) |
                         (params->b2 != 0 ? GLCV_SEGMENT_EXPLICIT_B2 : 0);
    s->width = p.width;
    s->height = p.height;
    s->sub_w = (p.width + 1) / 2;
    s->sub_h = (p.height + 1) / 2;
    s->words_w = (s->sub_w + 3) / 4;
    s->bits_w = (s->sub_w + 31) / 32;
    s->layers = p.streams > 1 ? p.streams : 0;
    seed_rng(s, p.seed);

    if (p.engine == GLCV_ENGINE_AUTO && !glcv_gl_context_current()) {
        glcv_logf(lg, GLCV_LOG_INFO, "segment: no GL context is current: using the CPU engine");
        s->p.engine = GLCV_ENGINE_CPU;
    }
    if (s->p.engine == GLCV_ENGINE_CPU) {
        s->layers = 0; /* the streams' own CPU segmenters do the work */
        st = p.streams > 1 ? GLCV_OK : glcv_segment_cpu_init(&s->cpu, s->width, s->height);
        if (st != GLCV_OK)
            goto fail;
    } else {
        st = glcv_segment_gl_create(s);
        if (st != GLCV_OK)
            goto fail;
    }
    s->rgb = malloc((size_t)s->width * (size_t)s->height * 3);
    if (!s->rgb) {
        st = GLCV_ERROR_OUT_OF_MEMORY;
        goto fail;
    }
    if (p.streams > 1 && (st = glcv_segment_batch_create(s)) != GLCV_OK)
        goto fail;
    glcv_logf(lg, GLCV_LOG_DEBUG, "segment: %dx%d, %d stream(s), engine %s", s->width, s->height, p.streams,
              glcv_engine_mode_string(s->p.engine));
    *out = s;
    return GLCV_OK;
fail:
    glcv_segment_destroy(&s);
    return st;
}

void glcv_segment_destroy(glcv_segment **seg)
{
    glcv_segment *s = seg ? *seg : NULL;
    if (!s)
        return;
    glcv_segment_batch_destroy(s);
    glcv_segment_gl_destroy(s);
    if (s->cpu_mask_texture && glcv_gl_token_current(s->cpu_mask_context))
        glDeleteTextures(1, &s->cpu_mask_texture);
    glcv_segment_cpu_free(&s->cpu);
    for (int i = 0; i < GLCV_SEGMENT_CALIB_KEEP; i++)
        free(s->calib_rgb[i]);
    free(s->calib_sums);
    free(s->calib_d2);
    free(s->noise);
    free(s->rgb);
    free(s->mapped_host);
    pthread_mutex_destroy(&s->lock);
    free(s);
    *seg = NULL;
}

/* ---- parameters ---------------------------------------------------------------------------- */

glcv_status glcv_segment_get_params(glcv_segment *s, glcv_segment_params *out)
{
    GLCV_LOCKED_COPY(s, p, out);
}

/* Sets `*field` to `v` when `st` (the check of v) is OK; a parameter the caller sets is explicit
 * (calibration keeps it). */
static glcv_status set_checked(glcv_segment *s, glcv_status st, float *field, float v, int explicit_bit)
{
    if (st == GLCV_OK) {
        *field = v;
        s->explicit_values |= explicit_bit;
        if (s->p.streams > 1)
            st = glcv_segment_batch_changed(s, 0);
    }
    return st;
}

#define SETTER(fn, type, field, check, explicit_bit)                                                          \
    glcv_status fn(glcv_segment *s, type v)                                                                   \
    {                                                                                                         \
        GLCV_LOCKED_CALL(s, set_checked(s, check, &s->p.field, v, explicit_bit));                             \
    }

SETTER(glcv_segment_set_ts, float, ts, check_ts(&s->p.logger, v), GLCV_SEGMENT_EXPLICIT_TS)
SETTER(glcv_segment_set_odc, float, odc, check_odc(&s->p.logger, v), GLCV_SEGMENT_EXPLICIT_ODC)
SETTER(glcv_segment_set_b1, float, b1, check_b(&s->p.logger, "B1", v), GLCV_SEGMENT_EXPLICIT_B1)
SETTER(glcv_segment_set_b2, float, b2, check_b(&s->p.logger, "B2", v), GLCV_SEGMENT_EXPLICIT_B2)
SETTER(glcv_segment_set_adapt_rate, float, adapt_rate, check_rate(&s->p.logger, v), 0)

static glcv_status set_iterations(glcv_segment *s, int v)
{
    glcv_status st = check_iterations(&s->p.logger, v);
    if (st == GLCV_OK) {
        s->p.iterations = v;
        if (s->p.streams > 1)
            st = glcv_segment_batch_changed(s, 0);
    }
    return st;
}

glcv_status glcv_segment_set_iterations(glcv_segment *s, int iterations)
{
    GLCV_LOCKED_CALL(s, set_iterations(s, iterations));
}

static glcv_status set_seed(glcv_segment *s, uint64_t seed)
{
    s->p.seed = seed ? seed : DEFAULT_SEED;
    seed_rng(s, s->p.seed);
    return s->p.streams > 1 ? glcv_segment_batch_changed(s, 1) : GLCV_OK;
}

glcv_status glcv_segment_set_seed(glcv_segment *s, uint64_t seed)
{
    GLCV_LOCKED_CALL(s, set_seed(s, seed));
}

/* ---- inputs -------------------------------------------------------------------------------- */

glcv_status glcv_segment_ready(glcv_segment *s, const char *what)
{
    if (s->learning)
        return glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "%s: background learning is in progress (call learn_end)",
                         what);
    if (!s->have_background)
        return glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "%s: no background yet (set or learn one first)", what);
    return GLCV_OK;
}

glcv_status glcv_segment_one_stream(glcv_segment *s, const char *what)
{
    if (s->p.streams == 1)
        return GLCV_OK;
    return glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT,
                     "%s: the segmenter has %d streams; use the functions for several streams", what, s->p.streams);
}

glcv_status glcv_segment_check_image(glcv_segment *s, const glcv_image *img, const char *what)
{
    const glcv_logger *lg = &s->p.logger;
    if (glcv_image_check(img) != GLCV_OK)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "%s: not a valid image (NULL data, size or stride)", what);
    if (img->format == GLCV_PIXEL_GRAY8)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "%s: a colour image (RGB, RGBA, BGR, BGRA) is needed", what);
    if (img->width != s->width || img->height != s->height)
        return glcv_fail(lg, GLCV_ERROR_SIZE_MISMATCH, "%s is %dx%d, the segmenter is %dx%d", what, img->width,
                         img->height, s->width, s->height);
    return GLCV_OK;
}

/* Brings a caller's texture to packed RGB for the CPU engine. */
static glcv_status cpu_texture_rgb(glcv_segment *s, unsigned int texture)
{
    if (!texture)
        return glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "texture 0 is not a texture");
    return glcv_gl_read_rgb(texture, s->width, s->height, s->rgb, &s->p.logger);
}

static glcv_status gpu_check_texture(glcv_segment *s, unsigned int texture)
{
    if (!texture)
        return glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "texture 0 is not a texture");
    return glcv_engine_check_input(s->engine, texture, s->width, s->height);
}

/* Packed RGB in s->rgb from a host colour image. */
static void host_rgb(glcv_segment *s, const glcv_image *img)
{
    glcv_image rgb = {s->rgb, s->width, s->height, 0, GLCV_PIXEL_RGB8};
    glcv_image_convert(img, &rgb);
}

/* Sets the background from an image or a texture (exactly one of them). */
static glcv_status set_background(glcv_segment *s, const glcv_image *img, unsigned int texture)
{
    glcv_status st = glcv_segment_one_stream(s, "set_background");
    if (st == GLCV_OK && img)
        st = glcv_segment_check_image(s, img, "background");
    if (st != GLCV_OK)
        return st;
    if (s->learning)
        return glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "background: learning is in progress");
    return glcv_segment_use_background(s, img, texture);
}

glcv_status glcv_segment_use_background(glcv_segment *s, const glcv_image *img, unsigned int texture)
{
    glcv_status st;
    if (!s->engine) {
        if (img)
            host_rgb(s, img);
        else if ((st = cpu_texture_rgb(s, texture)) != GLCV_OK)
            return st;
        glcv_segment_cpu_set_background(&s->cpu, s->rgb);
        s->cpu_mask_dirty = 1;
    } else {
        glcv_engine_begin(s->engine);
        if (img) {
            st = glcv_engine_upload(s->engine, &s->background, img);
        } else {
            st = gpu_check_texture(s, texture);
            if (st == GLCV_OK)
                st = glcv_segment_gl_copy(s, texture, &s->background);
        }
        glcv_engine_end(s->engine);
        if (st != GLCV_OK)
            return st;
        s->bgf_valid = 0;
        if ((st = glcv_segment_gl_clear_masks(s)) != GLCV_OK)
            return st;
    }
    s->have_background = 1;
    return GLCV_OK;
}

glcv_status glcv_segment_set_background(glcv_segment *s, const glcv_image *background)
{
    GLCV_LOCKED_GL_CALL(s, "segment: set_background", background ? set_background(s, background, 0) : glcv_segment_no_input(s, "background", 0));
}

glcv_status glcv_segment_set_background_texture(glcv_segment *s, unsigned int texture)
{
    GLCV_LOCKED_GL_CALL(s, "segment: set_background_texture", texture ? set_background(s, NULL, texture) : glcv_segment_no_input(s, "background", 1));
}

glcv_status glcv_segment_no_input(glcv_segment *s, const char *what, int texture)
{
    return glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: %s", what, texture ? "texture 0" : "NULL image");
}

glcv_status glcv_segment_take_input(glcv_segment *s, const glcv_image *img, unsigned int texture, GLuint *gpu_input)
{
    if (!s->engine) {
        if (!img)
            return cpu_texture_rgb(s, texture);
        host_rgb(s, img);
        return GLCV_OK;
    }
    if (img) {
        const glcv_tex *t = glcv_segment_gl_next_frame(s);
        *gpu_input = t->id;
        return glcv_engine_upload(s->engine, t, img);
    }
    *gpu_input = texture;
    return gpu_check_texture(s, texture);
}

/* ---- segmentation -------------------------------------------------------------------------- */

static void cpu_segment(glcv_segment *s)
{
    glcv_segment_values v = glcv_segment_rule_values(s);
    glcv_segment_cpu_thresholds(&s->cpu, s->rgb, &v);
    for (int it = 0; it <= s->p.iterations; it++) {
        int order[4];
        glcv_segment_draw_order(s, order);
        glcv_segment_cpu_iterate(&s->cpu, order, it == 0 ? 0 : 1);
    }
    s->cpu_mask_dirty = 1;
}

/* Segments a host image, a caller's texture, or (both NULL/0) the mapped staging frame. */
static glcv_status segment_frame(glcv_segment *s, const glcv_image *img, unsigned int texture, int wait)
{
    int mapped = !img && !texture;
    glcv_image mapped_image = {s->mapped_host, s->width, s->height, 0, s->mapped_format};
    if (mapped && !s->engine)
        img = &mapped_image;
    glcv_status st = glcv_segment_one_stream(s, "frame");
    if (st == GLCV_OK && img)
        st = glcv_segment_check_image(s, img, "frame");
    if (st != GLCV_OK || (st = glcv_segment_ready(s, "frame")) != GLCV_OK)
        return st;
    if (!s->engine) {
        if ((st = glcv_segment_take_input(s, img, texture, NULL)) != GLCV_OK)
            return st;
        cpu_segment(s);
        if (s->p.adapt_rate > 0) {
            glcv_segment_values v = glcv_segment_rule_values(s);
            glcv_segment_cpu_noise_update(&s->cpu, v.ts, v.odc);
            if ((st = glcv_segment_cpu_adapt(&s->cpu, s->rgb, s->p.adapt_rate)) != GLCV_OK)
                return st;
        }
    } else {
        glcv_engine_begin(s->engine);
        if (mapped) {
            const glcv_tex *t = glcv_segment_gl_next_frame(s);
            st = glcv_engine_upload_staged(s->engine, t, s->mapped_slot, s->mapped_format, s->width, s->height);
            texture = t->id;
        } else {
            st = glcv_segment_take_input(s, img, texture, &texture);
        }
        if ((st = glcv_segment_gl_frame(s, st, texture, wait)) != GLCV_OK)
            return st;
        s->last_input = texture;
    }
    s->have_frame = 1;
    return GLCV_OK;
}

glcv_status glcv_segment_frame_locked(glcv_segment *s, const glcv_image *frame, int wait)
{
    return segment_frame(s, frame, 0, wait);
}

glcv_status glcv_segment_frame(glcv_segment *s, const glcv_image *frame, int wait)
{
    GLCV_LOCKED_GL_CALL(s, "segment: frame", frame ? segment_frame(s, frame, 0, wait) : glcv_segment_no_input(s, "frame", 0));
}

/* Pinned memory (plain memory for the CPU engine) for `count` frames, one after the other. */
static glcv_status map_frames(glcv_segment *s, glcv_pixel_format format, glcv_image *out, int count,
                              const char *what)
{
    if (out && count == s->p.streams)
        memset(out, 0, sizeof *out * (size_t)count);
    glcv_status st = GLCV_OK;
    int bpp = glcv_pixel_format_size(format);
    size_t bytes = (size_t)s->width * (size_t)s->height * (size_t)bpp;
    void *ptr = NULL;
    if (!out || (format != GLCV_PIXEL_RGB8 && format != GLCV_PIXEL_RGBA8 && format != GLCV_PIXEL_BGR8 &&
                 format != GLCV_PIXEL_BGRA8)) {
        st = glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: NULL image or not a colour format", what);
    } else if (count != s->p.streams) {
        st = glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: %d images for %d stream(s)", what, count,
                       s->p.streams);
    } else if (!s->engine) {
        free(s->mapped_host);
        s->mapped_host = ptr = malloc(bytes * (size_t)count);
        if (!ptr)
            st = GLCV_ERROR_OUT_OF_MEMORY;
    } else {
        glcv_engine_begin(s->engine);
        st = glcv_engine_stage(s->engine, bytes * (size_t)count, &ptr, &s->mapped_slot);
        glcv_engine_end(s->engine);
    }
    if (st == GLCV_OK) {
        s->mapped_format = format;
        for (int i = 0; i < count; i++)
            out[i] = (glcv_image){(uint8_t *)ptr + bytes * (size_t)i, s->width, s->height,
                                  (size_t)s->width * (size_t)bpp, format};
    } else {
        s->mapped_slot = -1;
    }
    return st;
}

glcv_status glcv_segment_map_frame(glcv_segment *s, glcv_pixel_format format, glcv_image *out)
{
    GLCV_LOCKED_GL_CALL(s, "segment: map_frame", s->p.streams > 1 ? glcv_segment_one_stream(s, "map_frame") : map_frames(s, format, out, 1, "map_frame"));
}

glcv_status glcv_segment_map_frames(glcv_segment *s, glcv_pixel_format format, glcv_image *out, int count)
{
    GLCV_LOCKED_GL_CALL(s, "segment: map_frames", map_frames(s, format, out, count, "map_frames"));
}

static glcv_status frame_mapped(glcv_segment *s, int wait)
{
    glcv_status st;
    if (s->p.streams > 1)
        return glcv_segment_one_stream(s, "frame_mapped");
    if (s->engine ? s->mapped_slot < 0 : !s->mapped_host)
        st = glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "frame_mapped without map_frame");
    else
        st = segment_frame(s, NULL, 0, wait);
    s->mapped_slot = -1;
    free(s->mapped_host);
    s->mapped_host = NULL;
    return st;
}

glcv_status glcv_segment_frame_mapped(glcv_segment *s, int wait)
{
    GLCV_LOCKED_GL_CALL(s, "segment: frame_mapped", frame_mapped(s, wait));
}

glcv_status glcv_segment_frame_texture(glcv_segment *s, unsigned int texture, int wait)
{
    GLCV_LOCKED_GL_CALL(s, "segment: frame_texture", texture ? segment_frame(s, NULL, texture, wait) : glcv_segment_no_input(s, "frame", 1));
}

static glcv_status reset(glcv_segment *s)
{
    if (s->p.streams > 1)
        return glcv_segment_batch_reset(s);
    if (s->engine)
        return glcv_segment_gl_clear_masks(s);
    memset(s->cpu.mask, 0, (size_t)s->width * (size_t)s->height);
    s->cpu_mask_dirty = 1;
    return GLCV_OK;
}

glcv_status glcv_segment_reset(glcv_segment *s)
{
    GLCV_LOCKED_GL_CALL(s, "segment: reset", reset(s));
}

/* ---- outputs ------------------------------------------------------------------------------- */

/* The CPU engine's mask as a texture, uploaded when it changed. */
static unsigned int cpu_mask_texture(glcv_segment *s)
{
    /* A texture made in another context (or a destroyed one) is not touched: its name may be
     * another texture here. A new one is made in the current context. */
    if (s->cpu_mask_texture && !glcv_gl_token_current(s->cpu_mask_context))
        s->cpu_mask_texture = 0;
    if (s->cpu_mask_texture && !s->cpu_mask_dirty)
        return s->cpu_mask_texture;
    size_t n = (size_t)s->width * (size_t)s->height;
    uint8_t *bytes = malloc(n);
    if (!bytes) {
        glcv_fail(&s->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "mask_texture: out of memory");
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        bytes[i] = s->cpu.mask[i] ? 255 : 0;
    glcv_status st = glcv_gl_upload_texture(&s->cpu_mask_texture, s->width, s->height, GL_R8, GL_RED,
                                            GL_UNSIGNED_BYTE, bytes, &s->p.logger);
    free(bytes);
    if (st != GLCV_OK)
        return 0;
    s->cpu_mask_context = glcv_gl_current_token();
    s->cpu_mask_dirty = 0;
    return s->cpu_mask_texture;
}

unsigned int glcv_segment_mask_texture(glcv_segment *s)
{
    if (!s)
        return 0;
    pthread_mutex_lock(&s->lock);
    unsigned int id = 0;
    if (s->engine)
        id = glcv_engine_check_context(s->engine, "segment: mask_texture") == GLCV_OK ? s->mask.id : 0;
    else if (s->p.streams == 1)
        id = cpu_mask_texture(s);
    if (!id && !s->engine && s->p.streams > 1)
        glcv_logf(&s->p.logger, GLCV_LOG_ERROR, "mask_texture: several streams on the CPU engine have no texture");
    pthread_mutex_unlock(&s->lock);
    return id;
}

unsigned int glcv_segment_background_texture(glcv_segment *s)
{
    if (!s)
        return 0;
    pthread_mutex_lock(&s->lock);
    unsigned int id = s->engine && s->have_background &&
                              glcv_engine_check_context(s->engine, "segment: background_texture") == GLCV_OK
                          ? s->background.id
                          : 0;
    pthread_mutex_unlock(&s->lock);
    return id;
}

/* Writes a 0/1 or 0/255 plane into any host format with stride. */
void glcv_segment_write_plane(const uint8_t *plane, int scale, glcv_image *out)
{
    int bpp = glcv_pixel_format_size(out->format);
    size_t stride = glcv_image_stride(out);
    if (bpp == 1 && scale == 1) {
        for (int y = 0; y < out->height; y++)
            memcpy(out->data + (size_t)y * stride, plane + (size_t)y * (size_t)out->width, (size_t)out->width);
        return;
    }
    for (int y = 0; y < out->height; y++) {
        uint8_t *d = out->data + (size_t)y * stride;
        const uint8_t *p = plane + (size_t)y * (size_t)out->width;
        for (int x = 0; x < out->width; x++, d += bpp) {
            uint8_t v = (uint8_t)(p[x] * scale);
            d[0] = v;
            if (bpp >= 3)
                d[1] = d[2] = v;
            if (bpp == 4)
                d[3] = 255;
        }
    }
}

/* An output image the read-back functions can fill, and the state they read (`have`, else the
 * STATE error `missing`). */
glcv_status glcv_segment_check_output(glcv_segment *s, const glcv_image *out, int allow_gray, int have,
                                     const char *what, const char *missing)
{
    const glcv_logger *lg = &s->p.logger;
    if (!out || glcv_image_check(out) != GLCV_OK)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "%s: not a valid image", what);
    if (out->format == GLCV_PIXEL_BGR8 || out->format == GLCV_PIXEL_BGRA8 ||
        (!allow_gray && out->format == GLCV_PIXEL_GRAY8))
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "%s: unsupported output format", what);
    if (out->width != s->width || out->height != s->height)
        return glcv_fail(lg, GLCV_ERROR_SIZE_MISMATCH, "%s: output is %dx%d, the segmenter is %dx%d", what,
                         out->width, out->height, s->width, s->height);
    if (!have)
        return glcv_fail(lg, GLCV_ERROR_STATE, "%s: %s", what, missing);
    return GLCV_OK;
}

static glcv_status read_mask_locked(glcv_segment *s, glcv_image *out)
{
    if (!s->engine) {
        glcv_segment_write_plane(s->cpu.mask, 255, out);
        return GLCV_OK;
    }
    /* GRAY8 is read straight into the caller's rows; other formats through the RGB scratch, which
     * holds w*h*3 bytes: room for one plane. */
    int direct = out->format == GLCV_PIXEL_GRAY8;
    size_t row = direct ? glcv_image_stride(out) : (size_t)s->width;
    glcv_status st = glcv_segment_gl_read_mask(s, direct ? out->data : s->rgb, row);
    if (st == GLCV_OK && !direct)
        glcv_segment_write_plane(s->rgb, 1, out);
    return st;
}

static glcv_status read_background_locked(glcv_segment *s, glcv_image *out)
{
    const uint8_t *rgb = s->cpu.background;
    if (s->engine) {
        glcv_status st = glcv_segment_gl_read_background(s, s->rgb);
        if (st != GLCV_OK)
            return st;
        rgb = s->rgb;
    }
    glcv_image src = {(uint8_t *)rgb, s->width, s->height, 0, GLCV_PIXEL_RGB8};
    return glcv_image_convert(&src, out);
}

/* The mask (mask = 1) or the background, into the caller's image. */
static glcv_status read_output(glcv_segment *s, glcv_image *out, int mask)
{
    glcv_status st = glcv_segment_one_stream(s, mask ? "read_mask" : "read_background");
    if (st != GLCV_OK)
        return st;
    st = mask ? glcv_segment_check_output(s, out, 1, s->have_frame, "read_mask", "no frame has been segmented")
                          : glcv_segment_check_output(s, out, 0, s->have_background, "read_background", "no background is set");
    if (st == GLCV_OK)
        st = mask ? read_mask_locked(s, out) : read_background_locked(s, out);
    return st;
}

glcv_status glcv_segment_read_mask(glcv_segment *s, glcv_image *out)
{
    GLCV_LOCKED_GL_CALL(s, "segment: read_mask", read_output(s, out, 1));
}

glcv_status glcv_segment_read_background(glcv_segment *s, glcv_image *out)
{
    GLCV_LOCKED_GL_CALL(s, "segment: read_background", read_output(s, out, 0));
}

static void copy_if(void *dst, const void *src, size_t bytes)
{
    if (dst)
        memcpy(dst, src, bytes);
}

/* The last frame's per-pixel values: the qualifiers (qualifiers = 1; a, b, c are fore, back,
 * cross) or the thresholds (a, b are m_min for B1 and B2). A NULL destination is skipped. */
static glcv_status read_planes(glcv_segment *s, int qualifiers, void *a, void *b, void *c)
{
    glcv_status st = glcv_segment_one_stream(s, qualifiers ? "read_qualifiers" : "read_thresholds");
    size_t n = (size_t)s->width * (size_t)s->height;
    if (st != GLCV_OK) {
    } else if (!s->have_frame) {
        st = glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "%s: no frame has been segmented",
                       qualifiers ? "read_qualifiers" : "read_thresholds");
    } else if (s->engine) {
        st = qualifiers ? glcv_segment_gl_qualifiers(s, s->last_input, a, b, c)
                        : glcv_segment_gl_read_thresholds(s, a, b);
    } else if (qualifiers) {
        copy_if(a, s->cpu.fore, n * sizeof(int32_t));
        copy_if(b, s->cpu.back, n * sizeof(int32_t));
        copy_if(c, s->cpu.cross, n * sizeof(int32_t));
    } else {
        copy_if(a, s->cpu.m_min[0], n);
        copy_if(b, s->cpu.m_min[1], n);
    }
    return st;
}

glcv_status glcv_segment_read_qualifiers(glcv_segment *s, int32_t *fore, int32_t *back, int32_t *cross)
{
    GLCV_LOCKED_GL_CALL(s, "segment: read_qualifiers", read_planes(s, 1, fore, back, cross));
}

glcv_status glcv_segment_read_thresholds(glcv_segment *s, uint8_t *m_min_b1, uint8_t *m_min_b2)
{
    GLCV_LOCKED_GL_CALL(s, "segment: read_thresholds", read_planes(s, 0, m_min_b1, m_min_b2, NULL));
}

static glcv_status read_noise(glcv_segment *s, float *k)
{
    size_t n = (size_t)s->width * (size_t)s->height;
    if (s->engine && s->noise_model) /* the model changes them on the GPU */
        return glcv_segment_gl_read_noise(s, k);
    if (s->p.streams > 1 && !s->engine) { /* each stream's CPU segmenter has its own */
        glcv_status st = GLCV_OK;
        for (int i = 0; i < s->p.streams && st == GLCV_OK; i++)
            st = glcv_segment_read_noise(s->sub[i], k + n * (size_t)i);
        return st;
    }
    for (size_t i = 0; i < n * (size_t)s->p.streams; i++)
        k[i] = s->noise ? s->noise[i] : 1.0f;
    return GLCV_OK;
}

glcv_status glcv_segment_read_noise(glcv_segment *s, float *k)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (!k)
        return glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "read_noise: NULL k");
    GLCV_LOCKED_GL_CALL(s, "segment: read_noise", read_noise(s, k));
}

static glcv_status timings(glcv_segment *s, glcv_timing *out, int capacity, int *count, int wait)
{
    glcv_status st = glcv_check_timings_args(&s->p.logger, "segment", out, capacity, count);
    if (st != GLCV_OK)
        return st;
    *count = s->engine ? glcv_engine_timings(s->engine, out, capacity, wait) : 0;
    return GLCV_OK;
}

glcv_status glcv_segment_timings(glcv_segment *s, glcv_timing *out, int capacity, int *count, int wait)
{
    GLCV_LOCKED_GL_CALL(s, "segment: timings", timings(s, out, capacity, count, wait));
}
