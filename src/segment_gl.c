/* The segmenter's GL passes (shaders/segment_*.glsl) on the engine, FRAGMENT or COMPUTE: the fused
 * threshold pass into four quarter-resolution subset textures, the MRF substeps with the bilinear
 * neighbourhood trick (or, in COMPUTE mode, the tiled bit-sliced kernel of segment_tile.glsl), the
 * merge, learning and adaptation of the background, and the read-backs. See segment_internal.h. */
#include "segment_internal.h"

#include "core_internal.h"

#include <glcv/context.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- setup ------------------------------------------------------------------------------------------ */

/* A program of the segmenter: layered (one layer per stream) when it has several streams. */
static glcv_status program(glcv_segment *s, const char *key, const char *const *files, int n_files,
                           const char *defines, const glcv_format *outputs, int n_outputs, glcv_program **out)
{
    char text[512];
    snprintf(text, sizeof text, "%s%s", s->layers ? "#define GLCV_LAYERED 1\n" : "", defines ? defines : "");
    return glcv_engine_program(s->engine, key, files, n_files, text, outputs, n_outputs, out);
}

/* An input of a pass of the segmenter: a texture array when it has several streams. */
static void add_in(const glcv_segment *s, glcv_pass *p, const char *name, GLuint texture, glcv_sampling sampling)
{
    glcv_pass_add_input(p, name, texture, sampling);
    if (s->layers)
        p->inputs[p->n_inputs - 1].target = GL_TEXTURE_2D_ARRAY;
}

/* The per-pixel noise factors the threshold pass reads. */
static GLuint noise_id(const glcv_segment *s)
{
    return s->noise_tex.id;
}

static glcv_status gpu_programs(glcv_segment *s)
{
    static const char *const threshold_files[] = {"segment_threshold.glsl"};
    static const char *const mrf_files[] = {"segment_mrf.glsl"};
    static const char *const merge_files[] = {"segment_merge.glsl"};
    static const char *const bg_files[] = {"segment_background.glsl"};
    static const char *const copy_files[] = {"engine_copy.glsl"};
    const glcv_format rg8ui4[4] = {GLCV_FORMAT_RG8UI, GLCV_FORMAT_RG8UI, GLCV_FORMAT_RG8UI, GLCV_FORMAT_RG8UI};
    const glcv_format r32ui4[4] = {GLCV_FORMAT_R32UI, GLCV_FORMAT_R32UI, GLCV_FORMAT_R32UI, GLCV_FORMAT_R32UI};
    const glcv_format r8 = GLCV_FORMAT_R8, rgba8 = GLCV_FORMAT_RGBA8, f32 = GLCV_FORMAT_RGBA32F,
                      i32 = GLCV_FORMAT_RGBA32I;
    const glcv_format f32_rgba8[2] = {GLCV_FORMAT_RGBA32F, GLCV_FORMAT_RGBA8};
    const glcv_format rgba8_f32[2] = {GLCV_FORMAT_RGBA8, GLCV_FORMAT_RGBA32F};
    glcv_status st;
    const glcv_format r8ui_f32[2] = {GLCV_FORMAT_R8UI, GLCV_FORMAT_R32F};
    if ((st = program(s, "segment_threshold", threshold_files, 1, NULL, rg8ui4, 4, &s->threshold)) ||
        (st = program(s, "segment_noise", threshold_files, 1, "#define SEGMENT_NOISE 1\n", r8ui_f32, 2,
                      &s->noise_step)) ||
        (st = program(s, "segment_mrf", mrf_files, 1, NULL, &r8, 1, &s->mrf)) ||
        (st = program(s, "segment_merge", merge_files, 1, NULL, &r8, 1, &s->merge)) ||
        (st = program(s, "segment_adapt_init", bg_files, 1, "#define SEGMENT_ADAPT_INIT 1\n", &f32, 1,
                      &s->adapt_init)) ||
        (st = program(s, "segment_adapt", bg_files, 1, "#define SEGMENT_ADAPT 1\n", f32_rgba8, 2, &s->adapt)))
        return st;
    /* One stream only: learning on the GPU, a caller's texture as background, diagnostics. With
     * several, each stream's CPU segmenter learns (segment_batch.c). */
    if (!s->layers &&
        ((st = program(s, "segment_learn_add", bg_files, 1, "#define SEGMENT_LEARN_ADD 1\n", &f32, 1,
                       &s->learn_add)) ||
         (st = program(s, "segment_learn_end", bg_files, 1, "#define SEGMENT_LEARN_END 1\n", rgba8_f32, 2,
                       &s->learn_end)) ||
         (st = program(s, "engine_copy", copy_files, 1, NULL, &rgba8, 1, &s->copy)) ||
         (st = program(s, "segment_qualifiers", threshold_files, 1, "#define SEGMENT_QUALIFIERS 1\n", &i32, 1,
                       &s->qualifiers))))
        return st;
    if (s->tile_iterations &&
        (st = program(s, "segment_threshold_packed", threshold_files, 1,
                                  "#define SEGMENT_PACKED 1\n#define GLCV_TILED 1\n#define GLCV_LOCAL_X 16\n"
                                  "#define GLCV_LOCAL_Y 8\n",
                                  r32ui4, 4, &s->threshold_packed)))
        return st;
    return GLCV_OK;
}

/* A texture of the segmenter: an array of one layer per stream when it has several. */
static glcv_status texture(glcv_segment *s, glcv_tex *tex, int width, int height, glcv_format format)
{
    return glcv_engine_tex_create_layers(s->engine, tex, width, height, s->layers, format);
}

static glcv_status gpu_textures(glcv_segment *s)
{
    glcv_status st;
    if ((st = texture(s, &s->frames[0], s->width, s->height, GLCV_FORMAT_RGBA8)) ||
        (st = texture(s, &s->frames[1], s->width, s->height, GLCV_FORMAT_RGBA8)) ||
        (st = texture(s, &s->background, s->width, s->height, GLCV_FORMAT_RGBA8)) ||
        (st = texture(s, &s->mask, s->width, s->height, GLCV_FORMAT_R8)))
        return st;
    if ((st = texture(s, &s->noise_tex, s->width, s->height, GLCV_FORMAT_R32F)) ||
        (st = texture(s, &s->noise_level[0], s->width, s->height, GLCV_FORMAT_R8UI)) ||
        (st = texture(s, &s->noise_level[1], s->width, s->height, GLCV_FORMAT_R8UI)) ||
        (st = texture(s, &s->noise_levels, GLCV_SEGMENT_NOISE_LEVELS, 1, GLCV_FORMAT_RGBA32F)))
        return st;
    if (s->layers && (st = texture(s, &s->rules_tex, 1, 1, GLCV_FORMAT_RGBA32F)))
        return st;
    for (int i = 0; i < 4; i++) {
        if ((st = texture(s, &s->thresholds[i], s->sub_w, s->sub_h, GLCV_FORMAT_RG8UI)) ||
            (st = texture(s, &s->masks[i], s->sub_w, s->sub_h, GLCV_FORMAT_R8)))
            return st;
        if (s->tile_iterations &&
            ((st = texture(s, &s->thr_words[i], s->words_w, s->sub_h, GLCV_FORMAT_R32UI)) ||
             (st = texture(s, &s->mask_bits[0][i], s->bits_w, s->sub_h, GLCV_FORMAT_R32UI)) ||
             (st = texture(s, &s->mask_bits[1][i], s->bits_w, s->sub_h, GLCV_FORMAT_R32UI))))
            return st;
    }
    return GLCV_OK;
}

/* The float background textures are only needed for learning and adaptation. */
static glcv_status float_textures(glcv_segment *s)
{
    for (int i = 0; i < 2; i++) {
        if (!s->background_f[i].id) {
            glcv_status st = texture(s, &s->background_f[i], s->width, s->height, GLCV_FORMAT_RGBA32F);
            if (st != GLCV_OK)
                return st;
        }
    }
    return GLCV_OK;
}

void glcv_segment_gl_destroy(glcv_segment *s)
{
    if (!s->engine)
        return;
    if (!glcv_engine_context_current(s->engine)) { /* its GL objects are its context's (logged) */
        glcv_engine_destroy(&s->engine);
        return;
    }
    glcv_engine *e = s->engine;
    glcv_engine_tex_destroy(e, &s->frames[0]);
    glcv_engine_tex_destroy(e, &s->frames[1]);
    glcv_engine_tex_destroy(e, &s->background);
    glcv_engine_tex_destroy(e, &s->background_f[0]);
    glcv_engine_tex_destroy(e, &s->background_f[1]);
    glcv_engine_tex_destroy(e, &s->mask);
    glcv_engine_tex_destroy(e, &s->noise_tex);
    glcv_engine_tex_destroy(e, &s->noise_level[0]);
    glcv_engine_tex_destroy(e, &s->noise_level[1]);
    glcv_engine_tex_destroy(e, &s->noise_levels);
    glcv_engine_tex_destroy(e, &s->rules_tex);
    for (int i = 0; i < GLCV_SEGMENT_CALIB_KEEP; i++)
        glcv_engine_tex_destroy(e, &s->calib_tex[i]);
    for (int i = 0; i < 4; i++) {
        glcv_engine_tex_destroy(e, &s->thresholds[i]);
        glcv_engine_tex_destroy(e, &s->masks[i]);
        glcv_engine_tex_destroy(e, &s->thr_words[i]);
        glcv_engine_tex_destroy(e, &s->mask_bits[0][i]);
        glcv_engine_tex_destroy(e, &s->mask_bits[1][i]);
    }
    glcv_engine_destroy(&s->engine);
}

glcv_status glcv_segment_gl_clear_masks(glcv_segment *s)
{
    s->mask_slot = -1; /* the masks are in the cleared texture now */
    glcv_engine_begin(s->engine);
    glcv_status st = glcv_engine_clear(s->engine, &s->mask);
    for (int i = 0; i < 4 && st == GLCV_OK; i++) {
        if ((st = glcv_engine_clear(s->engine, &s->masks[i])) == GLCV_OK &&
            (st = glcv_engine_clear(s->engine, &s->mask_bits[0][i])) == GLCV_OK)
            st = glcv_engine_clear(s->engine, &s->mask_bits[1][i]);
    }
    glcv_engine_end(s->engine);
    return st;
}

const glcv_tex *glcv_segment_gl_next_frame(glcv_segment *s)
{
    s->frame_index = 1 - s->frame_index;
    return &s->frames[s->frame_index];
}

/* ---- passes ------------------------------------------------------------------------------------------ */

#define TILE_X 64          /* subset pixels per work group across, in segment_tile.glsl */
#define TILE_MAX_ITERATIONS 16

/* Shared memory of a work group of segment_tile.glsl with `rows` rows: per subset a mask of
 * (rows + 2) x 6 words (zero padding around 4 words a row). Thresholds live in registers. */
static long tile_shared_bytes(int rows)
{
    return 4L * 4 * (rows + 2) * 6;
}

/* The work group of segment_tile.glsl: `threads` invocations, one word of four per invocation,
 * so threads / 4 rows. Returns how many iterations one dispatch may run (a halo of 2 rows per
 * iteration above and below, keeping at least 16 interior rows), 0 if the tiled path cannot
 * run here. */
static int tile_capacity(int threads, int *rows)
{
    GLint shared = 0, invocations = 0;
    glGetIntegerv(GL_MAX_COMPUTE_SHARED_MEMORY_SIZE, &shared);
    glGetIntegerv(GL_MAX_COMPUTE_WORK_GROUP_INVOCATIONS, &invocations);
    if (invocations < threads || tile_shared_bytes(threads / 4) > shared)
        return 0;
    *rows = threads / 4;
    int k = (*rows - 16) / 4;
    return k < 1 ? 0 : k > TILE_MAX_ITERATIONS ? TILE_MAX_ITERATIONS : k;
}

/* Interior rows of a work group running k iterations: the rest of tile_rows is halo. */
static int tile_height(const glcv_segment *s, int k)
{
    return s->tile_rows - 4 * k;
}

static glcv_status tile_program(glcv_segment *s, int k, glcv_program **out)
{
    static const char *const files[] = {"segment_tile.glsl"};
    const glcv_format outputs[5] = {GLCV_FORMAT_R32UI, GLCV_FORMAT_R32UI, GLCV_FORMAT_R32UI, GLCV_FORMAT_R32UI,
                                    GLCV_FORMAT_R8};
    char key[64], defines[256];
    snprintf(key, sizeof key, "segment_tile_%d_%d", s->tile_rows, 2 * k);
    snprintf(defines, sizeof defines,
             "#define GLCV_TILED 1\n#define GLCV_LOCAL_X %d\n#define GLCV_LOCAL_Y 1\n"
             "#define TILE_Y %d\n#define HALO_Y %d\n%s",
             4 * s->tile_rows, tile_height(s, k), 2 * k, s->host_masks ? "#define SEGMENT_HOST_MASK 1\n" : "");
    return program(s, key, files, 1, defines, outputs, 5, out);
}

/* The MRF iterations of a frame in dispatches of up to tile_iterations iterations each; the
 * subset masks ping-pong between the two sets, the last dispatch also writes the full mask. */
static glcv_status gpu_mrf_tiled(glcv_segment *s)
{
    int total = s->p.iterations + 1, done = 0;
    int orders[TILE_MAX_ITERATIONS * 4];
    while (done < total) {
        int k = total - done < s->tile_iterations ? total - done : s->tile_iterations;
        glcv_program *prog = NULL;
        glcv_status st = tile_program(s, k, &prog);
        if (st != GLCV_OK)
            return st;
        for (int i = 0; i < k; i++)
            glcv_segment_draw_order(s, &orders[4 * i]);
        glcv_tex *in = s->mask_bits[s->mask_set], *out = s->mask_bits[1 - s->mask_set];
        glcv_pass p = glcv_pass_make(prog, "mrf", s->bits_w, s->sub_h);
        p.groups_x = (s->sub_w + TILE_X - 1) / TILE_X;
        p.groups_y = (s->sub_h + tile_height(s, k) - 1) / tile_height(s, k);
        static const char *const thr_names[4] = {"thr_k", "thr_l", "thr_m", "thr_n"};
        static const char *const prior_names[4] = {"prior_k", "prior_l", "prior_m", "prior_n"};
        for (int i = 0; i < 4; i++)
            add_in(s, &p, thr_names[i], s->thr_words[i].id, GLCV_SAMPLE_NEAREST);
        for (int i = 0; i < 4; i++)
            add_in(s, &p, prior_names[i], in[i].id, GLCV_SAMPLE_NEAREST);
        for (int i = 0; i < 4; i++)
            glcv_pass_add_output(&p, &out[i]);
        glcv_pass_add_output(&p, &s->mask);
        glcv_pass_add_uniform_i(&p, "thr_size", GLCV_U_2I, s->words_w, s->sub_h);
        glcv_pass_add_uniform_i(&p, "bits_size", GLCV_U_2I, s->bits_w, s->sub_h);
        glcv_pass_add_uniform_i(&p, "image_size", GLCV_U_2I, s->width, s->height);
        glcv_pass_add_uniform_i(&p, "iterations", GLCV_U_1I, k, 0);
        glcv_pass_add_uniform_i(&p, "first_is_b1", GLCV_U_1I, done == 0, 0);
        glcv_pass_add_uniform_i(&p, "write_full", GLCV_U_1I, done + k == total, 0);
        glcv_pass_add_uniform_4iv(&p, "orders", orders, k);
        int slot = -1;
        if (s->host_masks && done + k == total) {
            size_t bytes = (size_t)s->width * (size_t)s->height * (size_t)s->layers;
            if ((st = glcv_engine_download_reserve(s->engine, bytes, &slot)) != GLCV_OK)
                return st;
            glcv_pass_add_storage(&p, 2, glcv_engine_download_buffer(s->engine, slot));
        }
        if ((st = glcv_engine_run(s->engine, &p)) != GLCV_OK)
            return st;
        if (slot >= 0) {
            glcv_engine_download_fence(s->engine, slot);
            s->mask_slot = slot;
        }
        s->mask_set = 1 - s->mask_set;
        done += k;
    }
    return GLCV_OK;
}

glcv_status glcv_segment_gl_run(glcv_segment *s, GLuint input)
{
    glcv_engine *e = s->engine;
    glcv_status st;
    float rule[4] = {s->p.ts, s->p.odc, s->p.b1, s->p.b2};
    float texel[2] = {1.0f / (float)s->sub_w, 1.0f / (float)s->sub_h};

    glcv_pass t = s->tile_iterations ? glcv_pass_make(s->threshold_packed, "threshold", s->words_w, s->sub_h)
                                     : glcv_pass_make(s->threshold, "threshold", s->sub_w, s->sub_h);
    add_in(s, &t, "frame", input, GLCV_SAMPLE_NEAREST);
    add_in(s, &t, "background", s->background.id, GLCV_SAMPLE_NEAREST);
    add_in(s, &t, "noise", noise_id(s), GLCV_SAMPLE_NEAREST);
    if (s->layers)
        add_in(s, &t, "rules", s->rules_tex.id, GLCV_SAMPLE_NEAREST);
    for (int i = 0; i < 4; i++)
        glcv_pass_add_output(&t, s->tile_iterations ? &s->thr_words[i] : &s->thresholds[i]);
    glcv_pass_add_uniform_i(&t, "image_size", GLCV_U_2I, s->width, s->height);
    if (!s->layers)
        glcv_pass_add_uniform_f(&t, "rule", GLCV_U_4F, rule);
    if (s->tile_iterations) { /* one block per invocation, 16 x 8 blocks per work group */
        t.groups_x = (s->sub_w + 15) / 16;
        t.groups_y = (s->sub_h + 7) / 8;
    }
    if ((st = glcv_engine_run(e, &t)) != GLCV_OK)
        return st;

    if (s->tile_iterations) {
        if ((st = gpu_mrf_tiled(s)) != GLCV_OK)
            return st;
    } else {
        glcv_tex *masks = s->masks;
        for (int it = 0; it <= s->p.iterations; it++) {
            int order[4];
            glcv_segment_draw_order(s, order);
            for (int k = 0; k < 4; k++) {
                int sub = order[k], a = sub & 1, b = sub >> 1;
                glcv_pass m = glcv_pass_make(s->mrf, "mrf", s->sub_w, s->sub_h);
                add_in(s, &m, "thresholds", s->thresholds[sub].id, GLCV_SAMPLE_NEAREST);
                add_in(s, &m, "h_mask", masks[(1 - a) + 2 * b].id, GLCV_SAMPLE_LINEAR_ZERO);
                add_in(s, &m, "v_mask", masks[a + 2 * (1 - b)].id, GLCV_SAMPLE_LINEAR_ZERO);
                add_in(s, &m, "d_mask", masks[(1 - a) + 2 * (1 - b)].id, GLCV_SAMPLE_LINEAR_ZERO);
                glcv_pass_add_output(&m, &masks[sub]);
                glcv_pass_add_uniform_i(&m, "subset", GLCV_U_2I, a, b);
                glcv_pass_add_uniform_i(&m, "param_set", GLCV_U_1I, it == 0 ? 0 : 1, 0);
                glcv_pass_add_uniform_f(&m, "texel", GLCV_U_2F, texel);
                if ((st = glcv_engine_run(e, &m)) != GLCV_OK)
                    return st;
            }
        }

        glcv_pass g = glcv_pass_make(s->merge, "merge", s->width, s->height);
        add_in(s, &g, "mask_k", masks[GLCV_SUBSET_K].id, GLCV_SAMPLE_NEAREST);
        add_in(s, &g, "mask_l", masks[GLCV_SUBSET_L].id, GLCV_SAMPLE_NEAREST);
        add_in(s, &g, "mask_m", masks[GLCV_SUBSET_M].id, GLCV_SAMPLE_NEAREST);
        add_in(s, &g, "mask_n", masks[GLCV_SUBSET_N].id, GLCV_SAMPLE_NEAREST);
        glcv_pass_add_output(&g, &s->mask);
        if ((st = glcv_engine_run(e, &g)) != GLCV_OK)
            return st;
    }

    if (s->p.adapt_rate > 0 && s->noise_model) { /* before the background adapts: the sums the thresholds used */
        int next = 1 - s->level_current;
        glcv_pass n = s->p.engine == GLCV_ENGINE_COMPUTE /* an invocation per 2 x 2 block */
                          ? glcv_pass_make(s->noise_step, "noise", s->sub_w, s->sub_h)
                          : glcv_pass_make(s->noise_step, "noise", s->width, s->height);
        add_in(s, &n, "frame", input, GLCV_SAMPLE_NEAREST);
        add_in(s, &n, "background", s->background.id, GLCV_SAMPLE_NEAREST);
        add_in(s, &n, "level", s->noise_level[s->level_current].id, GLCV_SAMPLE_NEAREST);
        add_in(s, &n, "mask", s->mask.id, GLCV_SAMPLE_NEAREST);
        add_in(s, &n, "levels", s->noise_levels.id, GLCV_SAMPLE_NEAREST);
        if (s->layers)
            add_in(s, &n, "rules", s->rules_tex.id, GLCV_SAMPLE_NEAREST);
        glcv_pass_add_output(&n, &s->noise_level[next]);
        glcv_pass_add_output(&n, &s->noise_tex);
        glcv_pass_add_uniform_i(&n, "image_size", GLCV_U_2I, s->width, s->height);
        if (!s->layers)
            glcv_pass_add_uniform_f(&n, "rule", GLCV_U_4F, rule);
        if ((st = glcv_engine_run(e, &n)) != GLCV_OK)
            return st;
        s->level_current = next;
    }
    if (s->p.adapt_rate > 0) {
        if ((st = float_textures(s)) != GLCV_OK)
            return st;
        if (!s->bgf_valid) {
            glcv_pass i = glcv_pass_make(s->adapt_init, "adapt", s->width, s->height);
            add_in(s, &i, "background", s->background.id, GLCV_SAMPLE_NEAREST);
            glcv_pass_add_output(&i, &s->background_f[s->bgf_current]);
            if ((st = glcv_engine_run(e, &i)) != GLCV_OK)
                return st;
            s->bgf_valid = 1;
        }
        int next = 1 - s->bgf_current;
        glcv_pass a = glcv_pass_make(s->adapt, "adapt", s->width, s->height);
        add_in(s, &a, "background_f", s->background_f[s->bgf_current].id, GLCV_SAMPLE_NEAREST);
        add_in(s, &a, "frame", input, GLCV_SAMPLE_NEAREST);
        add_in(s, &a, "mask", s->mask.id, GLCV_SAMPLE_NEAREST);
        glcv_pass_add_output(&a, &s->background_f[next]);
        glcv_pass_add_output(&a, &s->background);
        glcv_pass_add_uniform_f(&a, "rate", GLCV_U_1F, &s->p.adapt_rate);
        if ((st = glcv_engine_run(e, &a)) != GLCV_OK)
            return st;
        s->bgf_current = next;
    }
    glcv_engine_sync_writes(e);
    return GLCV_OK;
}


glcv_status glcv_segment_gl_frame(glcv_segment *s, glcv_status st, GLuint input, int wait)
{
    if (st == GLCV_OK) {
        glcv_engine_frame_begin(s->engine);
        st = glcv_segment_gl_run(s, input);
        glcv_engine_frame_end(s->engine);
    }
    glcv_engine_end(s->engine);
    if (st != GLCV_OK)
        return st;
    if (wait)
        glFinish();
    else
        glFlush();
    return GLCV_OK;
}

glcv_status glcv_segment_gl_create(glcv_segment *s)
{
    glcv_status st = glcv_engine_create(s->p.engine, s->p.timing, &s->p.logger, &s->engine);
    if (st != GLCV_OK)
        return st;
    s->p.engine = glcv_engine_mode_of(s->engine);
    if (s->p.engine == GLCV_ENGINE_COMPUTE) {
        /* Tall images: 512 invocations (less halo per interior row); small ones: 256 (more work
         * groups to spread over the GPU). */
        s->tile_iterations = tile_capacity(s->sub_h >= 400 ? 512 : 256, &s->tile_rows);
        glcv_logf(&s->p.logger, GLCV_LOG_DEBUG, "segment: compute MRF %s (%d iterations per dispatch)",
                  s->tile_iterations ? "tiled" : "one dispatch per substep", s->tile_iterations);
        s->host_masks = s->layers && s->tile_iterations && s->width % 4 == 0 && epoxy_gl_version() >= 44;
    }
    glcv_engine_begin(s->engine);
    st = gpu_programs(s);
    if (st == GLCV_OK)
        st = gpu_textures(s);
    glcv_engine_end(s->engine);
    if (st == GLCV_OK)
        st = glcv_segment_gl_set_noise(s, NULL);
    return st;
}

glcv_status glcv_segment_gl_set_noise(glcv_segment *s, const float *noise)
{
    size_t n = (size_t)s->width * (size_t)s->height * (size_t)(s->layers ? s->layers : 1);
    float *ones = NULL;
    if (!noise) {
        if (!(ones = malloc(n * sizeof *ones)))
            return GLCV_ERROR_OUT_OF_MEMORY;
        for (size_t i = 0; i < n; i++)
            ones[i] = 1.0f;
    }
    glcv_engine_begin(s->engine);
    glcv_status st = glcv_engine_upload_layers(s->engine, &s->noise_tex, 0, s->layers ? s->layers : 1, GL_RED,
                                               GL_FLOAT, noise ? noise : ones);
    glcv_engine_end(s->engine);
    free(ones);
    return st;
}

glcv_status glcv_segment_gl_set_model(glcv_segment *s, int layer, const uint8_t *level, const float (*table)[4])
{
    glcv_status st = glcv_engine_upload_layers(s->engine, &s->noise_level[s->level_current], layer, 1,
                                               GL_RED_INTEGER, GL_UNSIGNED_BYTE, level);
    if (st == GLCV_OK)
        st = glcv_engine_upload_layers(s->engine, &s->noise_levels, layer, 1, GL_RGBA, GL_FLOAT, table);
    return st;
}

glcv_status glcv_segment_gl_read_noise(glcv_segment *s, float *k)
{
    size_t n = (size_t)s->width * (size_t)s->height * (size_t)(s->layers ? s->layers : 1);
    const void *data = NULL;
    int slot = -1;
    glcv_engine_begin(s->engine);
    glcv_status st = glcv_engine_download(s->engine, &s->noise_tex, GL_RED, GL_FLOAT, n * sizeof *k, &slot);
    if (st == GLCV_OK && (st = glcv_engine_download_wait(s->engine, slot, &data)) == GLCV_OK)
        memcpy(k, data, n * sizeof *k);
    glcv_engine_end(s->engine);
    return st;
}

/* ---- several streams ------------------------------------------------------------------------------------ */

glcv_status glcv_segment_gl_set_layer(glcv_segment *s, int layer, const uint8_t *rgb, const float *noise,
                                      const float rule[4])
{
    glcv_engine *e = s->engine;
    glcv_status st = glcv_engine_upload_layers(e, &s->background, layer, 1, GL_RGB, GL_UNSIGNED_BYTE, rgb);
    if (st == GLCV_OK)
        st = glcv_engine_upload_layers(e, &s->noise_tex, layer, 1, GL_RED, GL_FLOAT, noise);
    memcpy(s->rules[layer], rule, sizeof s->rules[layer]);
    s->rules_dirty = 1;
    return st;
}

glcv_status glcv_segment_gl_upload_rules(glcv_segment *s)
{
    if (!s->rules_dirty)
        return GLCV_OK;
    glcv_status st = glcv_engine_upload_layers(s->engine, &s->rules_tex, 0, s->layers, GL_RGBA, GL_FLOAT, s->rules);
    s->rules_dirty = st != GLCV_OK;
    return st;
}

glcv_status glcv_segment_gl_upload_set(glcv_segment *s, int slot, glcv_pixel_format format)
{
    const glcv_tex *t = glcv_segment_gl_next_frame(s);
    s->last_input = t->id;
    return glcv_engine_upload_staged(s->engine, t, slot, format, s->width, s->height);
}

glcv_status glcv_segment_gl_take_texture(glcv_segment *s, GLuint texture)
{
    glcv_status st = glcv_gl_check_frames(texture, s->width, s->height, s->p.streams, &s->p.logger);
    if (st != GLCV_OK)
        return st;
    const glcv_tex *t = glcv_segment_gl_next_frame(s);
    s->last_input = t->id;
    /* the colours, alpha 1, as after the upload of a host set (staged as packed RGB) */
    return glcv_engine_copy_layers(s->engine, texture, t);
}

glcv_status glcv_segment_gl_read_masks(glcv_segment *s, const uint8_t **masks)
{
    size_t bytes = (size_t)s->width * (size_t)s->height * (size_t)s->layers;
    int slot = s->mask_slot;
    glcv_engine_begin(s->engine);
    glcv_status st = slot >= 0 ? GLCV_OK /* the kernel wrote them there */
                               : glcv_engine_download(s->engine, &s->mask, GL_RED, GL_UNSIGNED_BYTE, bytes, &slot);
    if (st == GLCV_OK)
        st = glcv_engine_download_wait(s->engine, slot, (const void **)masks);
    glcv_engine_end(s->engine);
    return st;
}

glcv_status glcv_segment_gl_copy(glcv_segment *s, GLuint source, const glcv_tex *target)
{
    glcv_pass c = glcv_pass_make(s->copy, "copy", s->width, s->height);
    add_in(s, &c, "source", source, GLCV_SAMPLE_NEAREST);
    glcv_pass_add_output(&c, target);
    glcv_engine_begin(s->engine);
    glcv_status st = glcv_engine_run(s->engine, &c);
    glcv_engine_sync_writes(s->engine);
    glcv_engine_end(s->engine);
    return st;
}

/* ---- learning ------------------------------------------------------------------------------------------ */

glcv_status glcv_segment_gl_learn_begin(glcv_segment *s)
{
    /* The sums start in the other texture of the pair: the adapted background stays where it is
     * until a frame is added, so that learning ended with no frame leaves it as it was. */
    glcv_engine_begin(s->engine);
    glcv_status st = float_textures(s);
    if (st == GLCV_OK)
        st = glcv_engine_clear(s->engine, &s->background_f[1 - s->bgf_current]);
    glcv_engine_end(s->engine);
    if (st == GLCV_OK) {
        s->bgf_valid_before_learn = s->bgf_valid;
        s->bgf_current = 1 - s->bgf_current;
        s->bgf_valid = 0;
    }
    return st;
}

void glcv_segment_gl_learn_cancel(glcv_segment *s)
{
    /* After frames were added (a begin again while learning), the pair holds sums: the adapted
     * background is made again from the 8-bit one. */
    s->bgf_current = 1 - s->bgf_current;
    s->bgf_valid = s->learn_count == 0 ? s->bgf_valid_before_learn : 0;
}

glcv_status glcv_segment_gl_learn_add(glcv_segment *s, GLuint input)
{
    int next = 1 - s->bgf_current;
    glcv_pass a = glcv_pass_make(s->learn_add, "learn", s->width, s->height);
    add_in(s, &a, "sum", s->background_f[s->bgf_current].id, GLCV_SAMPLE_NEAREST);
    add_in(s, &a, "frame", input, GLCV_SAMPLE_NEAREST);
    glcv_pass_add_output(&a, &s->background_f[next]);
    glcv_status st = glcv_engine_run(s->engine, &a);
    s->bgf_current = next;
    return st;
}


glcv_status glcv_segment_gl_learn_end(glcv_segment *s)
{
    int next = 1 - s->bgf_current;
    glcv_pass a = glcv_pass_make(s->learn_end, "learn", s->width, s->height);
    add_in(s, &a, "sum", s->background_f[s->bgf_current].id, GLCV_SAMPLE_NEAREST);
    glcv_pass_add_output(&a, &s->background);
    glcv_pass_add_output(&a, &s->background_f[next]);
    glcv_pass_add_uniform_i(&a, "count", GLCV_U_1I, s->learn_count, 0);
    glcv_engine_begin(s->engine);
    glcv_status st = glcv_engine_run(s->engine, &a);
    glcv_engine_sync_writes(s->engine);
    glcv_engine_end(s->engine);
    s->bgf_current = next;
    s->bgf_valid = 1;
    return st;
}


/* ---- read-backs ---------------------------------------------------------------------------------------- */

glcv_status glcv_segment_gl_qualifiers(glcv_segment *s, GLuint input, int32_t *fore, int32_t *back,
                                       int32_t *cross)
{
    size_t n = (size_t)s->width * (size_t)s->height;
    int32_t *q = malloc(n * 4 * sizeof(int32_t));
    if (!q)
        return GLCV_ERROR_OUT_OF_MEMORY;
    glcv_tex out = {0};
    glcv_engine_begin(s->engine);
    glcv_status st = glcv_engine_tex_create(s->engine, &out, s->width, s->height, GLCV_FORMAT_RGBA32I);
    if (st == GLCV_OK) {
        float rule[4] = {s->p.ts, s->p.odc, s->p.b1, s->p.b2};
        glcv_pass p = glcv_pass_make(s->qualifiers, "qualifiers", s->width, s->height);
        add_in(s, &p, "frame", input, GLCV_SAMPLE_NEAREST);
        add_in(s, &p, "background", s->background.id, GLCV_SAMPLE_NEAREST);
        glcv_pass_add_output(&p, &out);
        glcv_pass_add_uniform_i(&p, "image_size", GLCV_U_2I, s->width, s->height);
        glcv_pass_add_uniform_f(&p, "rule", GLCV_U_4F, rule);
        st = glcv_engine_run(s->engine, &p);
        glcv_engine_sync_writes(s->engine);
        if (st == GLCV_OK)
            st = glcv_engine_read(s->engine, out.id, s->width, s->height, GL_RGBA_INTEGER, GL_INT, q,
                                  (size_t)s->width * 16);
        glcv_engine_tex_destroy(s->engine, &out);
    }
    glcv_engine_end(s->engine);
    if (st == GLCV_OK) {
        for (size_t i = 0; i < n; i++) {
            if (fore)
                fore[i] = q[4 * i];
            if (back)
                back[i] = q[4 * i + 1];
            if (cross)
                cross[i] = q[4 * i + 2];
        }
    }
    free(q);
    return st;
}

glcv_status glcv_segment_gl_read_mask(glcv_segment *s, uint8_t *dst, size_t row_bytes)
{
    glcv_engine_begin(s->engine);
    glcv_status st =
        glcv_engine_read(s->engine, s->mask.id, s->width, s->height, GL_RED, GL_UNSIGNED_BYTE, dst, row_bytes);
    glcv_engine_end(s->engine);
    return st;
}

glcv_status glcv_segment_gl_read_background(glcv_segment *s, uint8_t *rgb)
{
    glcv_engine_begin(s->engine);
    glcv_status st = glcv_engine_read(s->engine, s->background.id, s->width, s->height, GL_RGB, GL_UNSIGNED_BYTE,
                                      rgb, (size_t)s->width * 3);
    glcv_engine_end(s->engine);
    return st;
}

glcv_status glcv_segment_gl_read_thresholds(glcv_segment *s, uint8_t *m_min_b1, uint8_t *m_min_b2)
{
    size_t sub = (size_t)s->words_w * 4 * (size_t)s->sub_h;
    uint8_t *buf = malloc(sub * 2);
    if (!buf)
        return GLCV_ERROR_OUT_OF_MEMORY;
    glcv_status st = GLCV_OK;
    glcv_engine_begin(s->engine);
    for (int k = 0; k < 4 && st == GLCV_OK; k++) {
        /* Multi-pass: RG8UI (B1, B2) per pixel. Tiled: R32UI words, per byte B1 << 4 | B2. */
        if (s->tile_iterations)
            st = glcv_engine_read(s->engine, s->thr_words[k].id, s->words_w, s->sub_h, GL_RED_INTEGER,
                                  GL_UNSIGNED_INT, buf, (size_t)s->words_w * 4);
        else
            st = glcv_engine_read(s->engine, s->thresholds[k].id, s->sub_w, s->sub_h, GL_RG_INTEGER,
                                  GL_UNSIGNED_BYTE, buf, (size_t)s->sub_w * 2);
        for (int y = k >> 1; st == GLCV_OK && y < s->height; y += 2) {
            for (int x = k & 1; x < s->width; x += 2) {
                size_t sx = (size_t)(x >> 1), sy = (size_t)(y >> 1);
                uint8_t t1, t2;
                if (s->tile_iterations) {
                    uint8_t packed = buf[sy * (size_t)s->words_w * 4 + sx]; /* little-endian bytes */
                    t1 = (uint8_t)(packed >> 4);
                    t2 = (uint8_t)(packed & 15);
                } else {
                    t1 = buf[2 * (sy * (size_t)s->sub_w + sx)];
                    t2 = buf[2 * (sy * (size_t)s->sub_w + sx) + 1];
                }
                size_t i = (size_t)y * (size_t)s->width + (size_t)x;
                if (m_min_b1)
                    m_min_b1[i] = t1;
                if (m_min_b2)
                    m_min_b2[i] = t2;
            }
        }
    }
    glcv_engine_end(s->engine);
    free(buf);
    return st;
}

/* ---- for tests and benchmarks ----------------------------------------------------------------------- */

static glcv_status use_multipass(glcv_segment *s)
{
    if (s->p.engine != GLCV_ENGINE_COMPUTE)
        return glcv_fail(&s->p.logger, GLCV_ERROR_UNSUPPORTED, "segment: the multi-pass switch is for COMPUTE mode");
    if (!s->tile_iterations)
        return GLCV_OK;
    s->tile_iterations = 0;
    s->host_masks = 0;
    return glcv_segment_gl_clear_masks(s);
}

glcv_status glcv_segment_use_multipass(glcv_segment *s)
{
    GLCV_LOCKED_CALL(s, use_multipass(s));
}

int glcv_segment_masks_to_host(glcv_segment *s)
{
    if (!s)
        return 0;
    pthread_mutex_lock(&s->lock);
    int on = s->host_masks;
    pthread_mutex_unlock(&s->lock);
    return on;
}

int glcv_segment_tiled(glcv_segment *s)
{
    if (!s)
        return 0;
    pthread_mutex_lock(&s->lock);
    int tiled = s->tile_iterations > 0;
    pthread_mutex_unlock(&s->lock);
    return tiled;
}
