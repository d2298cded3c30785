/* Several streams in one segmenter (params.streams > 1): the GL engines hold every stream in one
 * layer of the texture arrays of segment_gl.c and run each pass once for all of them; each
 * stream learns and calibrates in a one-stream CPU-engine segmenter of its own (the same
 * learning and calibration as alone), whose background, noise factors and rule values then go
 * into its layer. With the CPU engine those segmenters do all the work. */
#include "segment_internal.h"

#include "core_internal.h"

#include <glcv/image.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---- the streams' own segmenters ----------------------------------------------------------- */

/* Brings a stream's segmenter to the batch's settings: iterations, adaptation and the rule
 * values given explicitly (the others stay its own, calibrated or default). */
static glcv_status sub_settings(glcv_segment *s, glcv_segment *sub)
{
    const glcv_segment_params *p = &s->p;
    unsigned x = s->explicit_values;
    glcv_status st = GLCV_OK;
    if ((st = glcv_segment_set_iterations(sub, p->iterations)) || (st = glcv_segment_set_adapt_rate(sub, p->adapt_rate)) ||
        ((x & GLCV_SEGMENT_EXPLICIT_TS) && (st = glcv_segment_set_ts(sub, p->ts))) ||
        ((x & GLCV_SEGMENT_EXPLICIT_ODC) && (st = glcv_segment_set_odc(sub, p->odc))) ||
        ((x & GLCV_SEGMENT_EXPLICIT_B1) && (st = glcv_segment_set_b1(sub, p->b1))) ||
        ((x & GLCV_SEGMENT_EXPLICIT_B2) && (st = glcv_segment_set_b2(sub, p->b2))))
        return st;
    return GLCV_OK;
}

static void free_subs(glcv_segment *s)
{
    if (!s->sub)
        return;
    for (int i = 0; i < s->p.streams; i++)
        glcv_segment_destroy(&s->sub[i]);
    free(s->sub);
    s->sub = NULL;
}

static glcv_status make_subs(glcv_segment *s)
{
    if (s->sub)
        return GLCV_OK;
    if (!(s->sub = calloc((size_t)s->p.streams, sizeof *s->sub)))
        return glcv_fail(&s->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "segment: no memory for %d streams", s->p.streams);
    glcv_segment_params p = {.width = s->width, .height = s->height, .seed = s->p.seed, .engine = GLCV_ENGINE_CPU,
                             .fixed_parameters = s->p.fixed_parameters, .logger = s->p.logger,
                             .preset = s->p.preset};
    glcv_status st = GLCV_OK;
    for (int i = 0; i < s->p.streams && st == GLCV_OK; i++) {
        if ((st = glcv_segment_create(&p, &s->sub[i])) == GLCV_OK)
            st = sub_settings(s, s->sub[i]);
    }
    if (st != GLCV_OK)
        free_subs(s);
    return st;
}

glcv_status glcv_segment_batch_create(glcv_segment *s)
{
    if (!s->engine)
        return make_subs(s);
    if (!(s->rules = calloc((size_t)s->layers, sizeof *s->rules)))
        return GLCV_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < s->layers; i++) {
        float r[4] = {s->p.ts, s->p.odc, s->p.b1, s->p.b2};
        memcpy(s->rules[i], r, sizeof r);
    }
    s->rules_dirty = 1;
    return GLCV_OK;
}

void glcv_segment_batch_destroy(glcv_segment *s)
{
    free_subs(s);
    free(s->rules);
    s->rules = NULL;
    free(s->mask_copy);
    s->mask_copy = NULL;
}

glcv_status glcv_segment_batch_changed(glcv_segment *s, int seed)
{
    glcv_status st = GLCV_OK;
    for (int i = 0; s->sub && i < s->p.streams && st == GLCV_OK; i++) {
        st = sub_settings(s, s->sub[i]);
        if (st == GLCV_OK && seed)
            st = glcv_segment_set_seed(s->sub[i], s->p.seed);
    }
    unsigned x = s->explicit_values;
    for (int i = 0; s->rules && i < s->layers; i++) {
        float *r = s->rules[i];
        if (x & GLCV_SEGMENT_EXPLICIT_TS)
            r[0] = s->p.ts;
        if (x & GLCV_SEGMENT_EXPLICIT_ODC)
            r[1] = s->p.odc;
        if (x & GLCV_SEGMENT_EXPLICIT_B1)
            r[2] = s->p.b1;
        if (x & GLCV_SEGMENT_EXPLICIT_B2)
            r[3] = s->p.b2;
        s->rules_dirty = 1;
    }
    return st;
}

glcv_status glcv_segment_batch_reset(glcv_segment *s)
{
    if (s->engine)
        return glcv_segment_gl_clear_masks(s);
    glcv_status st = GLCV_OK;
    for (int i = 0; i < s->p.streams && st == GLCV_OK; i++)
        st = glcv_segment_reset(s->sub[i]);
    return st;
}

/* ---- learning ------------------------------------------------------------------------------ */

glcv_status glcv_segment_batch_learn_begin(glcv_segment *s)
{
    glcv_status st = make_subs(s);
    for (int i = 0; i < s->p.streams && st == GLCV_OK; i++)
        st = glcv_segment_learn_begin(s->sub[i]);
    return st;
}

static glcv_status check_count(glcv_segment *s, const void *images, int count, const char *what)
{
    if (!images)
        return glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: NULL images", what);
    if (count != s->p.streams)
        return glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: %d images for %d stream(s)", what, count,
                         s->p.streams);
    return GLCV_OK;
}

/* Every image of a set: a colour image of the segmenter's size. */
static glcv_status check_set(glcv_segment *s, const glcv_image *images, int count, const char *what)
{
    glcv_status st = check_count(s, images, count, what);
    for (int i = 0; i < count && st == GLCV_OK; i++)
        st = glcv_segment_check_image(s, &images[i], what);
    return st;
}

static glcv_status learn_add_frames(glcv_segment *s, const glcv_image *frames, int count)
{
    glcv_status st = check_set(s, frames, count, "learn_add_frames");
    if (st != GLCV_OK)
        return st;
    if (!s->learning || !s->sub)
        return glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "learn_add_frames without learn_begin");
    for (int i = 0; i < count && st == GLCV_OK; i++)
        st = glcv_segment_learn_add(s->sub[i], &frames[i]);
    if (st == GLCV_OK)
        s->learn_count++;
    return st;
}

glcv_status glcv_segment_learn_add_frames(glcv_segment *s, const glcv_image *frames, int count)
{
    if (s && s->p.streams == 1 && count == 1 && frames)
        return glcv_segment_learn_add(s, frames);
    GLCV_LOCKED_GL_CALL(s, "segment: learn_add_frames", learn_add_frames(s, frames, count));
}

static glcv_status learn_add_stream(glcv_segment *s, int stream, const glcv_image *frame)
{
    if (stream < 0 || stream >= s->p.streams)
        return glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "learn_add_stream: stream %d of %d", stream,
                         s->p.streams);
    glcv_status st = glcv_segment_check_image(s, frame, "learn_add_stream");
    if (st != GLCV_OK)
        return st;
    if (!s->learning || !s->sub)
        return glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "learn_add_stream without learn_begin");
    st = glcv_segment_learn_add(s->sub[stream], frame);
    if (st == GLCV_OK)
        s->learn_count++;
    return st;
}

glcv_status glcv_segment_learn_add_stream(glcv_segment *s, int stream, const glcv_image *frame)
{
    if (s && s->p.streams == 1 && stream == 0)
        return glcv_segment_learn_add(s, frame);
    GLCV_LOCKED_GL_CALL(s, "segment: learn_add_stream", learn_add_stream(s, stream, frame));
}

/* Each stream's learned state into its layer (GL engines), and every stream's noise factors into
 * s->noise (for glcv_segment_read_noise). */
static glcv_status take_learned(glcv_segment *s)
{
    size_t n = (size_t)s->width * (size_t)s->height;
    if (!s->noise && !(s->noise = malloc(n * (size_t)s->p.streams * sizeof *s->noise)))
        return GLCV_ERROR_OUT_OF_MEMORY;
    glcv_status st = GLCV_OK;
    int models = 0; /* streams with a noise model (calibrated): all or none run it (GL engines) */
    if (s->engine)
        glcv_engine_begin(s->engine);
    for (int i = 0; i < s->p.streams && st == GLCV_OK; i++) {
        float *k = s->noise + n * (size_t)i;
        glcv_segment_params q;
        glcv_image rgb = {s->rgb, s->width, s->height, 0, GLCV_PIXEL_RGB8};
        if ((st = glcv_segment_read_noise(s->sub[i], k)) || !s->engine)
            continue;
        if ((st = glcv_segment_read_background(s->sub[i], &rgb)) || (st = glcv_segment_get_params(s->sub[i], &q)))
            break;
        float rule[4] = {q.ts, q.odc, q.b1, q.b2};
        st = glcv_segment_gl_set_layer(s, i, s->rgb, k, rule);
        const glcv_segment *sub = s->sub[i];
        if (st == GLCV_OK && sub->cpu.noise_level) {
            st = glcv_segment_gl_set_model(s, i, sub->cpu.noise_level, (const float(*)[4])sub->noise_table);
            models++;
        }
    }
    if (s->engine)
        glcv_engine_end(s->engine);
    s->noise_model = st == GLCV_OK && models == s->p.streams;
    return st;
}

void glcv_segment_batch_learn_cancel(glcv_segment *s)
{
    for (int i = 0; s->sub && i < s->p.streams; i++)
        glcv_segment_learn_cancel(s->sub[i]);
    if (s->engine)
        free_subs(s); /* made for this learning: the layers hold the streams' state */
}

typedef struct learn_end_job {
    glcv_segment *s;
    atomic_int failed;
    glcv_status st; /* the first failure's, written by the thread that set `failed` */
} learn_end_job;

/* Streams [begin, end) end their learning (each its own CPU segmenter: median and calibration);
 * after a failure the others' learning ends too, without learning. */
static void learn_end_streams(void *user, int begin, int end)
{
    learn_end_job *job = user;
    for (int i = begin; i < end; i++) {
        if (atomic_load(&job->failed)) {
            glcv_segment_learn_cancel(job->s->sub[i]);
            continue;
        }
        glcv_status st = glcv_segment_learn_end(job->s->sub[i]);
        if (st != GLCV_OK && atomic_exchange(&job->failed, 1) == 0)
            job->st = st;
    }
}

glcv_status glcv_segment_batch_learn_end(glcv_segment *s)
{
    /* the streams on several threads: learning a stream (its median, its calibration) is its own work */
    learn_end_job job = {.s = s, .st = GLCV_OK};
    atomic_init(&job.failed, 0);
    glcv_parallel_for(s->p.streams, 0, learn_end_streams, &job);
    glcv_status st = atomic_load(&job.failed) ? job.st : GLCV_OK;
    if (st == GLCV_OK)
        st = take_learned(s);
    if (st == GLCV_OK && s->engine) {
        s->bgf_valid = 0;
        st = glcv_segment_gl_clear_masks(s);
    }
    if (s->engine)
        free_subs(s); /* the layers hold what they learned */
    return st;
}

/* ---- backgrounds and frames ---------------------------------------------------------------- */

static glcv_status set_backgrounds(glcv_segment *s, const glcv_image *images, int count)
{
    glcv_status st = check_set(s, images, count, "set_backgrounds");
    if (st != GLCV_OK)
        return st;
    if (s->learning)
        return glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "set_backgrounds: learning is in progress");
    if (!s->engine) {
        for (int i = 0; i < count && st == GLCV_OK; i++)
            st = glcv_segment_set_background(s->sub[i], &images[i]);
    } else {
        glcv_image rgb = {s->rgb, s->width, s->height, 0, GLCV_PIXEL_RGB8};
        glcv_engine_begin(s->engine);
        for (int i = 0; i < count && st == GLCV_OK; i++) {
            if ((st = glcv_image_convert(&images[i], &rgb)) == GLCV_OK)
                st = glcv_engine_upload_layers(s->engine, &s->background, i, 1, GL_RGB, GL_UNSIGNED_BYTE, s->rgb);
        }
        glcv_engine_end(s->engine);
        s->bgf_valid = 0;
        if (st == GLCV_OK)
            st = glcv_segment_gl_clear_masks(s);
    }
    if (st == GLCV_OK)
        s->have_background = 1;
    return st;
}

glcv_status glcv_segment_set_backgrounds(glcv_segment *s, const glcv_image *backgrounds, int count)
{
    if (s && s->p.streams == 1 && count == 1 && backgrounds)
        return glcv_segment_set_background(s, backgrounds);
    GLCV_LOCKED_GL_CALL(s, "segment: set_backgrounds", set_backgrounds(s, backgrounds, count));
}

/* The GL passes over a set: host frames in staging slot `slot`, or (slot < 0) a caller's frames
 * array `texture`. */
static glcv_status run_set(glcv_segment *s, int slot, glcv_pixel_format format, GLuint texture, int wait)
{
    glcv_engine_begin(s->engine);
    glcv_status st =
        slot >= 0 ? glcv_segment_gl_upload_set(s, slot, format) : glcv_segment_gl_take_texture(s, texture);
    if (st == GLCV_OK)
        st = glcv_segment_gl_upload_rules(s);
    if ((st = glcv_segment_gl_frame(s, st, s->last_input, wait)) == GLCV_OK)
        s->have_frame = 1;
    return st;
}

static glcv_status frames_cpu(glcv_segment *s, const glcv_image *frames)
{
    glcv_status st = GLCV_OK;
    for (int i = 0; i < s->p.streams && st == GLCV_OK; i++)
        st = glcv_segment_frame(s->sub[i], &frames[i], 0);
    if (st == GLCV_OK)
        s->have_frame = 1;
    return st;
}

static glcv_status segment_frames(glcv_segment *s, const glcv_image *frames, int count, int wait)
{
    glcv_status st = check_set(s, frames, count, "frames");
    if (st == GLCV_OK)
        st = glcv_segment_ready(s, "frames");
    if (st != GLCV_OK)
        return st;
    if (!s->engine)
        return frames_cpu(s, frames);
    /* one staging block for the set, packed RGB (three bytes a pixel cross the bus) */
    size_t bytes = (size_t)s->width * (size_t)s->height * 3;
    void *ptr = NULL;
    int slot = 0;
    glcv_engine_begin(s->engine);
    st = glcv_engine_stage(s->engine, bytes * (size_t)count, &ptr, &slot);
    glcv_engine_end(s->engine);
    for (int i = 0; i < count && st == GLCV_OK; i++) {
        glcv_image dst = {(uint8_t *)ptr + bytes * (size_t)i, s->width, s->height, 0, GLCV_PIXEL_RGB8};
        st = glcv_image_convert(&frames[i], &dst);
    }
    return st == GLCV_OK ? run_set(s, slot, GLCV_PIXEL_RGB8, 0, wait) : st;
}

glcv_status glcv_segment_frames(glcv_segment *s, const glcv_image *frames, int count, int wait)
{
    if (s && s->p.streams == 1 && count == 1 && frames)
        return glcv_segment_frame(s, frames, wait);
    GLCV_LOCKED_GL_CALL(s, "segment: frames", segment_frames(s, frames, count, wait));
}

static glcv_status frames_mapped(glcv_segment *s, int wait)
{
    glcv_status st = glcv_segment_ready(s, "frames_mapped");
    if (st == GLCV_OK && (s->engine ? s->mapped_slot < 0 : !s->mapped_host))
        st = glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "frames_mapped without map_frames");
    if (st == GLCV_OK && s->engine) {
        st = run_set(s, s->mapped_slot, s->mapped_format, 0, wait);
    } else if (st == GLCV_OK) {
        glcv_image *set = malloc(sizeof *set * (size_t)s->p.streams);
        size_t bytes = (size_t)s->width * (size_t)s->height * (size_t)glcv_pixel_format_size(s->mapped_format);
        if (!set)
            return GLCV_ERROR_OUT_OF_MEMORY;
        for (int i = 0; i < s->p.streams; i++)
            set[i] = (glcv_image){s->mapped_host + bytes * (size_t)i, s->width, s->height, 0, s->mapped_format};
        st = frames_cpu(s, set);
        free(set);
    }
    s->mapped_slot = -1;
    free(s->mapped_host);
    s->mapped_host = NULL;
    return st;
}

glcv_status glcv_segment_frames_mapped(glcv_segment *s, int wait)
{
    if (s && s->p.streams == 1)
        return glcv_segment_frame_mapped(s, wait);
    GLCV_LOCKED_GL_CALL(s, "segment: frames_mapped", frames_mapped(s, wait));
}

/* A set already on the GPU: the GL engines copy it on the GPU into the next frame array as a host
 * set is uploaded (packed RGB); the CPU engine reads it back into host frames. */
static glcv_status frames_texture(glcv_segment *s, unsigned int texture, int wait)
{
    if (!texture)
        return glcv_segment_no_input(s, "frames_texture", 1);
    glcv_status st = glcv_segment_ready(s, "frames_texture");
    if (st != GLCV_OK)
        return st;
    if (s->engine)
        return run_set(s, -1, GLCV_PIXEL_RGB8, texture, wait);
    const int n = s->p.streams;
    glcv_image *set = NULL;
    if ((st = glcv_gl_read_frames(texture, n, s->width, s->height, GLCV_PIXEL_RGB8, &set, &s->p.logger)) == GLCV_OK)
        st = n > 1 ? frames_cpu(s, set) : glcv_segment_frame_locked(s, set, wait);
    free(set);
    return st;
}

glcv_status glcv_segment_frames_texture(glcv_segment *s, unsigned int texture, int wait)
{
    GLCV_LOCKED_GL_CALL(s, "segment: frames_texture", frames_texture(s, texture, wait));
}

static glcv_status read_masks(glcv_segment *s, glcv_image *out, int count)
{
    glcv_status st = check_count(s, out, count, "read_masks");
    for (int i = 0; i < count && st == GLCV_OK; i++)
        st = glcv_segment_check_output(s, &out[i], 1, s->have_frame, "read_masks", "no frame has been segmented");
    if (st != GLCV_OK)
        return st;
    if (!s->engine) {
        for (int i = 0; i < count && st == GLCV_OK; i++)
            st = glcv_segment_read_mask(s->sub[i], &out[i]);
        return st;
    }
    const uint8_t *masks = NULL;
    if ((st = glcv_segment_gl_read_masks(s, &masks)) != GLCV_OK)
        return st;
    size_t n = (size_t)s->width * (size_t)s->height;
    for (int i = 0; i < count; i++)
        glcv_segment_write_plane(masks + n * (size_t)i, 1, &out[i]);
    return GLCV_OK;
}

static glcv_status map_masks(glcv_segment *s, glcv_image *out, int count)
{
    glcv_status st = check_count(s, out, count, "map_masks");
    if (st == GLCV_OK && !s->have_frame)
        st = glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "map_masks: no frame has been segmented");
    if (st != GLCV_OK)
        return st;
    size_t n = (size_t)s->width * (size_t)s->height;
    const uint8_t *masks = NULL;
    if (s->engine) {
        st = glcv_segment_gl_read_masks(s, &masks);
    } else {
        if (!s->mask_copy && !(s->mask_copy = malloc(n * (size_t)count)))
            return GLCV_ERROR_OUT_OF_MEMORY;
        for (int i = 0; i < count && st == GLCV_OK; i++) {
            glcv_image m = {s->mask_copy + n * (size_t)i, s->width, s->height, 0, GLCV_PIXEL_GRAY8};
            st = glcv_segment_read_mask(s->sub[i], &m);
        }
        masks = s->mask_copy;
    }
    for (int i = 0; i < count && st == GLCV_OK; i++)
        out[i] = (glcv_image){(uint8_t *)masks + n * (size_t)i, s->width, s->height, (size_t)s->width,
                              GLCV_PIXEL_GRAY8};
    return st;
}

glcv_status glcv_segment_map_masks(glcv_segment *s, glcv_image *out, int count)
{
    GLCV_LOCKED_GL_CALL(s, "segment: map_masks", map_masks(s, out, count));
}

glcv_status glcv_segment_read_masks(glcv_segment *s, glcv_image *out, int count)
{
    if (s && s->p.streams == 1 && count == 1 && out)
        return glcv_segment_read_mask(s, out);
    GLCV_LOCKED_GL_CALL(s, "segment: read_masks", read_masks(s, out, count));
}

static glcv_status read_backgrounds(glcv_segment *s, glcv_image *out, int count)
{
    glcv_status st = check_count(s, out, count, "read_backgrounds");
    for (int i = 0; i < count && st == GLCV_OK; i++)
        st = glcv_segment_check_output(s, &out[i], 0, s->have_background, "read_backgrounds", "no background is set");
    if (st != GLCV_OK)
        return st;
    if (!s->engine) {
        for (int i = 0; i < count && st == GLCV_OK; i++)
            st = glcv_segment_read_background(s->sub[i], &out[i]);
        return st;
    }
    size_t n = (size_t)s->width * (size_t)s->height * 3;
    const uint8_t *rgb = NULL;
    int slot = 0;
    glcv_engine_begin(s->engine);
    st = glcv_engine_download(s->engine, &s->background, GL_RGB, GL_UNSIGNED_BYTE, n * (size_t)count, &slot);
    if (st == GLCV_OK)
        st = glcv_engine_download_wait(s->engine, slot, (const void **)&rgb);
    glcv_engine_end(s->engine);
    s->mask_slot = -1; /* the download memory may have been made anew: the masks from their texture */
    for (int i = 0; i < count && st == GLCV_OK; i++) {
        glcv_image src = {(uint8_t *)rgb + n * (size_t)i, s->width, s->height, 0, GLCV_PIXEL_RGB8};
        st = glcv_image_convert(&src, &out[i]);
    }
    return st;
}

glcv_status glcv_segment_read_backgrounds(glcv_segment *s, glcv_image *out, int count)
{
    if (s && s->p.streams == 1 && count == 1 && out)
        return glcv_segment_read_background(s, out);
    GLCV_LOCKED_GL_CALL(s, "segment: read_backgrounds", read_backgrounds(s, out, count));
}

static glcv_status stream_params(glcv_segment *s, int stream, glcv_segment_params *out)
{
    if (stream < 0 || stream >= s->p.streams)
        return glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "get_stream_params: stream %d outside 0..%d",
                         stream, s->p.streams - 1);
    *out = s->p;
    if (s->rules) {
        out->ts = s->rules[stream][0];
        out->odc = s->rules[stream][1];
        out->b1 = s->rules[stream][2];
        out->b2 = s->rules[stream][3];
    } else if (s->sub) {
        glcv_segment_params q;
        glcv_status st = glcv_segment_get_params(s->sub[stream], &q);
        if (st != GLCV_OK)
            return st;
        out->ts = q.ts;
        out->odc = q.odc;
        out->b1 = q.b1;
        out->b2 = q.b2;
    }
    return GLCV_OK;
}

glcv_status glcv_segment_get_stream_params(glcv_segment *s, int stream, glcv_segment_params *out)
{
    if (!out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    GLCV_LOCKED_CALL(s, stream_params(s, stream, out));
}
