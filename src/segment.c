/* The segmenter object: parameters, the subset-order PRNG, and the frame pipeline on the GPU
 * engine (shaders/segment_*.glsl) or on the CPU (segment_cpu.c). */
#include <glcv/context.h>
#include <glcv/image.h>
#include <glcv/segment.h>

#include "engine.h"
#include "internal.h"
#include "segment_cpu.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_TS 310.0f
#define DEFAULT_ODC 5800.0f
#define DEFAULT_B1 2.0f
#define DEFAULT_B2 200.0f
#define DEFAULT_ITERATIONS 8
#define DEFAULT_SEED 0x5EEDu
#define MAX_ITERATIONS 1000

enum { SUB_K, SUB_L, SUB_M, SUB_N };

#define CALIB_KEEP 16
#define CALIB_BINS 768       /* log2(1 + D^2) in 1/24 steps up to 2^32 */
#define CALIB_ODC 100000.0f
#define CALIB_TS_PER_G 100.0
#define CALIB_B_PER_G 23.0
enum { EXPLICIT_TS = 1, EXPLICIT_ODC = 2, EXPLICIT_B1 = 4, EXPLICIT_B2 = 8 };

struct glcv_segment {
    pthread_mutex_t lock;
    glcv_segment_params p; /* resolved; p.engine is the engine in use */
    int width, height, sub_w, sub_h;
    uint64_t rng;
    int have_background, have_frame, learning, learn_count;

    /* GPU engine */
    glcv_engine *engine;
    glcv_program *threshold, *mrf, *merge, *learn_add, *learn_end, *adapt_init, *adapt, *copy, *qualifiers;
    glcv_tex frames[2];      /* host frames are uploaded here, alternately, so that the upload of
                                a frame does not wait for the passes still reading the last one */
    int frame_index;
    int mapped_slot;         /* staging slot handed out by glcv_segment_map_frame, or -1 */
    glcv_pixel_format mapped_format;
    uint8_t *mapped_host;    /* CPU engine: the memory handed out by glcv_segment_map_frame */
    glcv_tex background;     /* RGBA8, integers 0..255 */
    glcv_tex background_f[2];/* RGBA32F: learning sums, and the adapted background */
    int bgf_current, bgf_valid;
    glcv_tex thresholds[4];  /* RG8UI per subset: thresholds with B1, B2 */
    glcv_tex masks[4];       /* R8 per subset, 0/1 (multi-pass path) */
    /* Tiled compute path (segment_tile.glsl), per subset: */
    int tile_iterations;     /* iterations per tiled dispatch (0 = the multi-pass path) */
    int tile_rows;           /* subset rows per work group of the tiled path, halo included */
    int words_w;             /* ceil(sub_w / 4) */
    int bits_w;              /* ceil(sub_w / 32) */
    glcv_tex thr_words[4];   /* R32UI, four pixels a word: B1 threshold << 4 | B2 threshold per byte */
    glcv_tex mask_bits[2][4];/* R32UI, 32 pixels a word, one bit each; ping-pong between dispatches */
    int mask_set;            /* the set holding the current mask */
    glcv_program *threshold_packed;
    glcv_tex mask;           /* R8 full resolution, 0/255 */
    GLuint last_input;       /* texture the last frame was read from */

    /* Calibration: a histogram of log2(1 + D^2) and, while learning, up to CALIB_KEEP learned
     * frames, evenly spaced (every calib_stride-th). */
    unsigned explicit_values;          /* EXPLICIT_* bits: never calibrated */
    int calibrating;
    uint64_t calib_hist[CALIB_BINS];
    int calib_frames;
    int calib_kept, calib_stride;
    glcv_tex calib_tex[CALIB_KEEP];    /* GPU engines */
    uint8_t *calib_rgb[CALIB_KEEP];    /* CPU engine, packed RGB */
    int32_t *calib_sums;               /* fore, back, cross of one frame */

    /* CPU engine */
    glcv_segment_cpu cpu;
    uint8_t *rgb;            /* scratch: a frame as packed RGB */
    GLuint cpu_mask_texture; /* made on demand by glcv_segment_mask_texture */
    int cpu_mask_dirty;
};

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

/* One of the 24 orders of the subsets k, l, m, n, uniformly (eq. 15). */
static void draw_order(glcv_segment *s, int order[4])
{
    uint32_t r;
    do {
        r = pcg32(&s->rng);
    } while (r >= 4294967280u); /* 4294967280 = 24 * 178956970: no modulo bias */
    int index = (int)(r % 24u);
    int items[4] = {SUB_K, SUB_L, SUB_M, SUB_N};
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

/* Ts, Odc and B up to 1e9: far beyond any useful value (window sums are below 2^21), and small
 * enough that the GPU's float arithmetic neither overflows nor loses the decision. */
#define MAX_RULE_VALUE 1e9

static glcv_status check_ts(const glcv_logger *lg, double v)
{
    if (!glcv_finite(v) || v < 0 || v > MAX_RULE_VALUE)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "Ts must be in 0..1e9 (got %g)", v);
    return GLCV_OK;
}

static glcv_status check_odc(const glcv_logger *lg, double v)
{
    if (!glcv_finite(v) || v < 0 || v > MAX_RULE_VALUE)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "Odc must be in 0..1e9 (got %g)", v);
    return GLCV_OK;
}

static glcv_status check_b(const glcv_logger *lg, const char *name, double v)
{
    if (!glcv_finite(v) || v <= 0 || v > MAX_RULE_VALUE)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "%s must be > 0 and <= 1e9 (got %g)", name, v);
    return GLCV_OK;
}

static glcv_status check_iterations(const glcv_logger *lg, int v)
{
    if (v < 0 || v > MAX_ITERATIONS)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "iterations must be 0..%d (got %d)", MAX_ITERATIONS, v);
    return GLCV_OK;
}

static glcv_status check_rate(const glcv_logger *lg, double v)
{
    if (!glcv_finite(v) || v < 0 || v > 1)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "adapt_rate must be in 0..1 (got %g)", v);
    return GLCV_OK;
}

/* Fills defaults and validates. */
static glcv_status resolve_params(const glcv_segment_params *in, glcv_segment_params *p)
{
    *p = *in;
    const glcv_logger *lg = &in->logger;
    if (p->width < 1 || p->height < 1)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "size %dx%d: width and height must be >= 1", p->width,
                         p->height);
    if (p->width > 65536 || p->height > 65536)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "size %dx%d is too large", p->width, p->height);
    if (p->ts == 0)
        p->ts = DEFAULT_TS;
    if (p->odc == 0)
        p->odc = DEFAULT_ODC;
    if (p->b1 == 0)
        p->b1 = DEFAULT_B1;
    if (p->b2 == 0)
        p->b2 = DEFAULT_B2;
    if (p->iterations == 0)
        p->iterations = DEFAULT_ITERATIONS;
    if (p->seed == 0)
        p->seed = DEFAULT_SEED;
    if (p->engine == GLCV_ENGINE_DEFAULT)
        p->engine = GLCV_ENGINE_AUTO;
    glcv_status st;
    if ((st = check_ts(lg, p->ts)) || (st = check_odc(lg, p->odc)) || (st = check_b(lg, "B1", p->b1)) ||
        (st = check_b(lg, "B2", p->b2)) || (st = check_iterations(lg, p->iterations)) ||
        (st = check_rate(lg, p->adapt_rate)))
        return st;
    if (p->engine < GLCV_ENGINE_AUTO || p->engine > GLCV_ENGINE_CPU)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "unknown engine mode %d", (int)p->engine);
    return GLCV_OK;
}

static glcv_segment_values rule_values(const glcv_segment *s)
{
    glcv_segment_values v = {s->p.ts, s->p.odc, {s->p.b1, s->p.b2}};
    return v;
}

/* ---- GPU setup ----------------------------------------------------------------------------- */

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
    glcv_engine *e = s->engine;
    glcv_status st;
    if ((st = glcv_engine_program(e, "segment_threshold", threshold_files, 1, NULL, rg8ui4, 4, &s->threshold)) ||
        (st = glcv_engine_program(e, "segment_mrf", mrf_files, 1, NULL, &r8, 1, &s->mrf)) ||
        (st = glcv_engine_program(e, "segment_merge", merge_files, 1, NULL, &r8, 1, &s->merge)) ||
        (st = glcv_engine_program(e, "segment_learn_add", bg_files, 1, "#define SEGMENT_LEARN_ADD 1\n", &f32, 1,
                                  &s->learn_add)) ||
        (st = glcv_engine_program(e, "segment_learn_end", bg_files, 1, "#define SEGMENT_LEARN_END 1\n", rgba8_f32,
                                  2, &s->learn_end)) ||
        (st = glcv_engine_program(e, "segment_adapt_init", bg_files, 1, "#define SEGMENT_ADAPT_INIT 1\n", &f32, 1,
                                  &s->adapt_init)) ||
        (st = glcv_engine_program(e, "segment_adapt", bg_files, 1, "#define SEGMENT_ADAPT 1\n", f32_rgba8, 2,
                                  &s->adapt)) ||
        (st = glcv_engine_program(e, "engine_copy", copy_files, 1, NULL, &rgba8, 1, &s->copy)) ||
        (st = glcv_engine_program(e, "segment_qualifiers", threshold_files, 1, "#define SEGMENT_QUALIFIERS 1\n",
                                  &i32, 1, &s->qualifiers)))
        return st;
    if (s->tile_iterations &&
        (st = glcv_engine_program(e, "segment_threshold_packed", threshold_files, 1,
                                  "#define SEGMENT_PACKED 1\n#define GLCV_TILED 1\n#define GLCV_LOCAL_X 16\n"
                                  "#define GLCV_LOCAL_Y 8\n",
                                  r32ui4, 4, &s->threshold_packed)))
        return st;
    return GLCV_OK;
}

static glcv_status gpu_textures(glcv_segment *s)
{
    glcv_engine *e = s->engine;
    glcv_status st;
    if ((st = glcv_engine_tex_create(e, &s->frames[0], s->width, s->height, GLCV_FORMAT_RGBA8)) ||
        (st = glcv_engine_tex_create(e, &s->frames[1], s->width, s->height, GLCV_FORMAT_RGBA8)) ||
        (st = glcv_engine_tex_create(e, &s->background, s->width, s->height, GLCV_FORMAT_RGBA8)) ||
        (st = glcv_engine_tex_create(e, &s->mask, s->width, s->height, GLCV_FORMAT_R8)))
        return st;
    for (int i = 0; i < 4; i++) {
        if ((st = glcv_engine_tex_create(e, &s->thresholds[i], s->sub_w, s->sub_h, GLCV_FORMAT_RG8UI)) ||
            (st = glcv_engine_tex_create(e, &s->masks[i], s->sub_w, s->sub_h, GLCV_FORMAT_R8)))
            return st;
        if (s->tile_iterations &&
            ((st = glcv_engine_tex_create(e, &s->thr_words[i], s->words_w, s->sub_h, GLCV_FORMAT_R32UI)) ||
             (st = glcv_engine_tex_create(e, &s->mask_bits[0][i], s->bits_w, s->sub_h, GLCV_FORMAT_R32UI)) ||
             (st = glcv_engine_tex_create(e, &s->mask_bits[1][i], s->bits_w, s->sub_h, GLCV_FORMAT_R32UI))))
            return st;
    }
    return GLCV_OK;
}

/* The float background textures are only needed for learning and adaptation. */
static glcv_status gpu_float_textures(glcv_segment *s)
{
    for (int i = 0; i < 2; i++) {
        if (!s->background_f[i].id) {
            glcv_status st = glcv_engine_tex_create(s->engine, &s->background_f[i], s->width, s->height,
                                                    GLCV_FORMAT_RGBA32F);
            if (st != GLCV_OK)
                return st;
        }
    }
    return GLCV_OK;
}

static void gpu_release(glcv_segment *s)
{
    if (!s->engine)
        return;
    glcv_engine *e = s->engine;
    glcv_engine_tex_destroy(e, &s->frames[0]);
    glcv_engine_tex_destroy(e, &s->frames[1]);
    glcv_engine_tex_destroy(e, &s->background);
    glcv_engine_tex_destroy(e, &s->background_f[0]);
    glcv_engine_tex_destroy(e, &s->background_f[1]);
    glcv_engine_tex_destroy(e, &s->mask);
    for (int i = 0; i < CALIB_KEEP; i++)
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

/* ---- passes -------------------------------------------------------------------------------- */

static glcv_pass make_pass(glcv_program *prog, const char *label, int w, int h)
{
    glcv_pass p;
    memset(&p, 0, sizeof p);
    p.program = prog;
    p.label = label;
    p.width = w;
    p.height = h;
    return p;
}

static void add_input(glcv_pass *p, const char *name, GLuint tex, glcv_sampling sampling)
{
    p->inputs[p->n_inputs++] = (glcv_pass_input){name, tex, sampling};
}

static void add_output(glcv_pass *p, const glcv_tex *t)
{
    p->outputs[p->n_outputs++] = t;
}

static void add_uniform_i(glcv_pass *p, const char *name, glcv_uniform_type type, int a, int b)
{
    glcv_uniform *u = &p->uniforms[p->n_uniforms++];
    memset(u, 0, sizeof *u);
    u->name = name;
    u->type = type;
    u->i[0] = a;
    u->i[1] = b;
}

static void add_uniform_f(glcv_pass *p, const char *name, glcv_uniform_type type, const float *v)
{
    glcv_uniform *u = &p->uniforms[p->n_uniforms++];
    memset(u, 0, sizeof *u);
    u->name = name;
    u->type = type;
    memcpy(u->f, v, sizeof(float) * (type == GLCV_U_4F ? 4 : type == GLCV_U_2F ? 2 : 1));
}

static glcv_status clear_masks(glcv_segment *s)
{
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
             "#define TILE_Y %d\n#define HALO_Y %d\n",
             4 * s->tile_rows, tile_height(s, k), 2 * k);
    return glcv_engine_program(s->engine, key, files, 1, defines, outputs, 5, out);
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
            draw_order(s, &orders[4 * i]);
        glcv_tex *in = s->mask_bits[s->mask_set], *out = s->mask_bits[1 - s->mask_set];
        glcv_pass p = make_pass(prog, "mrf", s->bits_w, s->sub_h);
        p.groups_x = (s->sub_w + TILE_X - 1) / TILE_X;
        p.groups_y = (s->sub_h + tile_height(s, k) - 1) / tile_height(s, k);
        static const char *const thr_names[4] = {"thr_k", "thr_l", "thr_m", "thr_n"};
        static const char *const prior_names[4] = {"prior_k", "prior_l", "prior_m", "prior_n"};
        for (int i = 0; i < 4; i++)
            add_input(&p, thr_names[i], s->thr_words[i].id, GLCV_SAMPLE_NEAREST);
        for (int i = 0; i < 4; i++)
            add_input(&p, prior_names[i], in[i].id, GLCV_SAMPLE_NEAREST);
        for (int i = 0; i < 4; i++)
            add_output(&p, &out[i]);
        add_output(&p, &s->mask);
        add_uniform_i(&p, "thr_size", GLCV_U_2I, s->words_w, s->sub_h);
        add_uniform_i(&p, "bits_size", GLCV_U_2I, s->bits_w, s->sub_h);
        add_uniform_i(&p, "image_size", GLCV_U_2I, s->width, s->height);
        add_uniform_i(&p, "iterations", GLCV_U_1I, k, 0);
        add_uniform_i(&p, "first_is_b1", GLCV_U_1I, done == 0, 0);
        add_uniform_i(&p, "write_full", GLCV_U_1I, done + k == total, 0);
        glcv_uniform *u = &p.uniforms[p.n_uniforms++];
        memset(u, 0, sizeof *u);
        u->name = "orders";
        u->type = GLCV_U_4IV;
        u->array = orders;
        u->count = k;
        if ((st = glcv_engine_run(s->engine, &p)) != GLCV_OK)
            return st;
        s->mask_set = 1 - s->mask_set;
        done += k;
    }
    return GLCV_OK;
}

/* The whole frame: thresholds, B1 iteration, `iterations` B2 iterations, merge, adaptation. */
static glcv_status gpu_segment(glcv_segment *s, GLuint input)
{
    glcv_engine *e = s->engine;
    glcv_status st;
    float rule[4] = {s->p.ts, s->p.odc, s->p.b1, s->p.b2};
    float texel[2] = {1.0f / (float)s->sub_w, 1.0f / (float)s->sub_h};

    glcv_pass t = s->tile_iterations ? make_pass(s->threshold_packed, "threshold", s->words_w, s->sub_h)
                                     : make_pass(s->threshold, "threshold", s->sub_w, s->sub_h);
    add_input(&t, "frame", input, GLCV_SAMPLE_NEAREST);
    add_input(&t, "background", s->background.id, GLCV_SAMPLE_NEAREST);
    for (int i = 0; i < 4; i++)
        add_output(&t, s->tile_iterations ? &s->thr_words[i] : &s->thresholds[i]);
    add_uniform_i(&t, "image_size", GLCV_U_2I, s->width, s->height);
    add_uniform_f(&t, "rule", GLCV_U_4F, rule);
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
            draw_order(s, order);
            for (int k = 0; k < 4; k++) {
                int sub = order[k], a = sub & 1, b = sub >> 1;
                glcv_pass m = make_pass(s->mrf, "mrf", s->sub_w, s->sub_h);
                add_input(&m, "thresholds", s->thresholds[sub].id, GLCV_SAMPLE_NEAREST);
                add_input(&m, "h_mask", masks[(1 - a) + 2 * b].id, GLCV_SAMPLE_LINEAR_ZERO);
                add_input(&m, "v_mask", masks[a + 2 * (1 - b)].id, GLCV_SAMPLE_LINEAR_ZERO);
                add_input(&m, "d_mask", masks[(1 - a) + 2 * (1 - b)].id, GLCV_SAMPLE_LINEAR_ZERO);
                add_output(&m, &masks[sub]);
                add_uniform_i(&m, "subset", GLCV_U_2I, a, b);
                add_uniform_i(&m, "param_set", GLCV_U_1I, it == 0 ? 0 : 1, 0);
                add_uniform_f(&m, "texel", GLCV_U_2F, texel);
                if ((st = glcv_engine_run(e, &m)) != GLCV_OK)
                    return st;
            }
        }

        glcv_pass g = make_pass(s->merge, "merge", s->width, s->height);
        add_input(&g, "mask_k", masks[SUB_K].id, GLCV_SAMPLE_NEAREST);
        add_input(&g, "mask_l", masks[SUB_L].id, GLCV_SAMPLE_NEAREST);
        add_input(&g, "mask_m", masks[SUB_M].id, GLCV_SAMPLE_NEAREST);
        add_input(&g, "mask_n", masks[SUB_N].id, GLCV_SAMPLE_NEAREST);
        add_output(&g, &s->mask);
        if ((st = glcv_engine_run(e, &g)) != GLCV_OK)
            return st;
    }

    if (s->p.adapt_rate > 0) {
        if ((st = gpu_float_textures(s)) != GLCV_OK)
            return st;
        if (!s->bgf_valid) {
            glcv_pass i = make_pass(s->adapt_init, "adapt", s->width, s->height);
            add_input(&i, "background", s->background.id, GLCV_SAMPLE_NEAREST);
            add_output(&i, &s->background_f[s->bgf_current]);
            if ((st = glcv_engine_run(e, &i)) != GLCV_OK)
                return st;
            s->bgf_valid = 1;
        }
        int next = 1 - s->bgf_current;
        glcv_pass a = make_pass(s->adapt, "adapt", s->width, s->height);
        add_input(&a, "background_f", s->background_f[s->bgf_current].id, GLCV_SAMPLE_NEAREST);
        add_input(&a, "frame", input, GLCV_SAMPLE_NEAREST);
        add_input(&a, "mask", s->mask.id, GLCV_SAMPLE_NEAREST);
        add_output(&a, &s->background_f[next]);
        add_output(&a, &s->background);
        add_uniform_f(&a, "rate", GLCV_U_1F, &s->p.adapt_rate);
        if ((st = glcv_engine_run(e, &a)) != GLCV_OK)
            return st;
        s->bgf_current = next;
    }
    glcv_engine_sync_writes(e);
    return GLCV_OK;
}

/* Copies a caller's texture into the background (exact for 8-bit inputs). */
static glcv_status gpu_copy_background(glcv_segment *s, GLuint texture)
{
    glcv_pass c = make_pass(s->copy, "copy", s->width, s->height);
    add_input(&c, "source", texture, GLCV_SAMPLE_NEAREST);
    add_output(&c, &s->background);
    glcv_status st = glcv_engine_run(s->engine, &c);
    glcv_engine_sync_writes(s->engine);
    return st;
}

static glcv_status gpu_learn_add(glcv_segment *s, GLuint input)
{
    int next = 1 - s->bgf_current;
    glcv_pass a = make_pass(s->learn_add, "learn", s->width, s->height);
    add_input(&a, "sum", s->background_f[s->bgf_current].id, GLCV_SAMPLE_NEAREST);
    add_input(&a, "frame", input, GLCV_SAMPLE_NEAREST);
    add_output(&a, &s->background_f[next]);
    glcv_status st = glcv_engine_run(s->engine, &a);
    s->bgf_current = next;
    return st;
}

static glcv_status gpu_learn_end(glcv_segment *s)
{
    int next = 1 - s->bgf_current;
    glcv_pass a = make_pass(s->learn_end, "learn", s->width, s->height);
    add_input(&a, "sum", s->background_f[s->bgf_current].id, GLCV_SAMPLE_NEAREST);
    add_output(&a, &s->background);
    add_output(&a, &s->background_f[next]);
    add_uniform_i(&a, "count", GLCV_U_1I, s->learn_count, 0);
    glcv_status st = glcv_engine_run(s->engine, &a);
    s->bgf_current = next;
    s->bgf_valid = 1;
    glcv_engine_sync_writes(s->engine);
    return st;
}

static glcv_status gpu_clear_float(glcv_segment *s, int index)
{
    GLuint fbo = 0;
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_DRAW_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, s->background_f[index].id, 0);
    GLenum buf = GL_COLOR_ATTACHMENT0;
    glDrawBuffers(1, &buf);
    static const GLfloat zero[4] = {0, 0, 0, 0};
    glClearBufferfv(GL_COLOR, 0, zero);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &fbo);
    return glGetError() == GL_NO_ERROR ? GLCV_OK : GLCV_ERROR_GL;
}

/* ---- create / destroy ---------------------------------------------------------------------- */

glcv_status glcv_segment_create(const glcv_segment_params *params, glcv_segment **out)
{
    if (!out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (!params)
        return GLCV_ERROR_INVALID_ARGUMENT;
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
    s->p = p;
    s->explicit_values = (params->ts != 0 ? EXPLICIT_TS : 0) | (params->odc != 0 ? EXPLICIT_ODC : 0) |
                         (params->b1 != 0 ? EXPLICIT_B1 : 0) | (params->b2 != 0 ? EXPLICIT_B2 : 0);
    s->width = p.width;
    s->height = p.height;
    s->sub_w = (p.width + 1) / 2;
    s->sub_h = (p.height + 1) / 2;
    s->words_w = (s->sub_w + 3) / 4;
    s->bits_w = (s->sub_w + 31) / 32;
    seed_rng(s, p.seed);

    if (p.engine == GLCV_ENGINE_AUTO && !glcv_gl_context_current()) {
        glcv_logf(lg, GLCV_LOG_INFO, "segment: no GL context is current: using the CPU engine");
        s->p.engine = GLCV_ENGINE_CPU;
    }
    if (s->p.engine == GLCV_ENGINE_CPU) {
        st = glcv_segment_cpu_init(&s->cpu, s->width, s->height);
        if (st != GLCV_OK)
            goto fail;
    } else {
        st = glcv_engine_create(s->p.engine, p.timing, lg, &s->engine);
        if (st != GLCV_OK)
            goto fail;
        s->p.engine = glcv_engine_mode_of(s->engine);
        if (s->p.engine == GLCV_ENGINE_COMPUTE) {
            /* GLCV_SEGMENT_MULTIPASS=1 keeps one dispatch per substep (benchmarks, tests). */
            const char *multipass = getenv("GLCV_SEGMENT_MULTIPASS");
            if (!multipass || strcmp(multipass, "1") != 0)
                /* Tall images: 512 invocations (less halo per interior row); small ones: 256
                 * (more work groups to spread over the GPU). */
                s->tile_iterations = tile_capacity(s->sub_h >= 400 ? 512 : 256, &s->tile_rows);
            glcv_logf(lg, GLCV_LOG_DEBUG, "segment: compute MRF %s (%d iterations per dispatch)",
                      s->tile_iterations ? "tiled" : "one dispatch per substep", s->tile_iterations);
        }
        glcv_engine_begin(s->engine);
        st = gpu_programs(s);
        if (st == GLCV_OK)
            st = gpu_textures(s);
        glcv_engine_end(s->engine);
        if (st != GLCV_OK)
            goto fail;
    }
    s->rgb = malloc((size_t)s->width * (size_t)s->height * 3);
    if (!s->rgb) {
        st = GLCV_ERROR_OUT_OF_MEMORY;
        goto fail;
    }
    glcv_logf(lg, GLCV_LOG_DEBUG, "segment: %dx%d, engine %s", s->width, s->height,
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
    if (s->engine) {
        if (glcv_gl_context_current())
            gpu_release(s);
        else
            glcv_engine_destroy(&s->engine);
    }
    if (s->cpu_mask_texture && glcv_gl_context_current())
        glDeleteTextures(1, &s->cpu_mask_texture);
    glcv_segment_cpu_free(&s->cpu);
    for (int i = 0; i < CALIB_KEEP; i++)
        free(s->calib_rgb[i]);
    free(s->calib_sums);
    free(s->rgb);
    free(s->mapped_host);
    pthread_mutex_destroy(&s->lock);
    free(s);
    *seg = NULL;
}

/* ---- parameters ---------------------------------------------------------------------------- */

glcv_status glcv_segment_get_params(glcv_segment *s, glcv_segment_params *out)
{
    if (!s || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    *out = s->p;
    pthread_mutex_unlock(&s->lock);
    return GLCV_OK;
}

#define SETTER(fn, type, field, check, explicit_bit)                                                                          \
    glcv_status fn(glcv_segment *s, type v)                                                                     \
    {                                                                                                           \
        if (!s)                                                                                                 \
            return GLCV_ERROR_INVALID_ARGUMENT;                                                                 \
        pthread_mutex_lock(&s->lock);                                                                           \
        glcv_status st = check;                                                                                 \
        if (st == GLCV_OK) {                                                                                    \
            s->p.field = v;                                                                                     \
            s->explicit_values |= explicit_bit;                                                                 \
        }                                                                                                       \
        pthread_mutex_unlock(&s->lock);                                                                         \
        return st;                                                                                              \
    }

SETTER(glcv_segment_set_ts, float, ts, check_ts(&s->p.logger, v), EXPLICIT_TS)
SETTER(glcv_segment_set_odc, float, odc, check_odc(&s->p.logger, v), EXPLICIT_ODC)
SETTER(glcv_segment_set_b1, float, b1, check_b(&s->p.logger, "B1", v), EXPLICIT_B1)
SETTER(glcv_segment_set_b2, float, b2, check_b(&s->p.logger, "B2", v), EXPLICIT_B2)
SETTER(glcv_segment_set_iterations, int, iterations, check_iterations(&s->p.logger, v), 0)
SETTER(glcv_segment_set_adapt_rate, float, adapt_rate, check_rate(&s->p.logger, v), 0)

glcv_status glcv_segment_set_seed(glcv_segment *s, uint64_t seed)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    s->p.seed = seed ? seed : DEFAULT_SEED;
    seed_rng(s, s->p.seed);
    pthread_mutex_unlock(&s->lock);
    return GLCV_OK;
}

/* ---- inputs -------------------------------------------------------------------------------- */

static glcv_status check_image(glcv_segment *s, const glcv_image *img, const char *what)
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
    return glcv_texture_read_rgb(texture, s->width, s->height, s->rgb, &s->p.logger);
}

static glcv_status gpu_check_texture(glcv_segment *s, unsigned int texture)
{
    if (!texture)
        return glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "texture 0 is not a texture");
    return glcv_engine_check_input(s->engine, texture, s->width, s->height);
}

/* The frame texture the next host frame goes to. */
static const glcv_tex *next_frame_texture(glcv_segment *s)
{
    s->frame_index = 1 - s->frame_index;
    return &s->frames[s->frame_index];
}

static glcv_status calib_keep(glcv_segment *s, int index, GLuint texture);
static glcv_status calib_learned(glcv_segment *s);

/* Sets the background from an image or a texture (exactly one of them). */
static glcv_status set_background(glcv_segment *s, const glcv_image *img, unsigned int texture)
{
    glcv_status st = img ? check_image(s, img, "background") : GLCV_OK;
    if (st != GLCV_OK)
        return st;
    if (s->learning)
        return glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "background: learning is in progress");
    if (!s->engine) {
        if (img)
            glcv_segment_cpu_to_rgb(img, s->rgb);
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
                st = gpu_copy_background(s, texture);
        }
        glcv_engine_end(s->engine);
        if (st != GLCV_OK)
            return st;
        s->bgf_valid = 0;
        if ((st = clear_masks(s)) != GLCV_OK)
            return st;
    }
    s->have_background = 1;
    return GLCV_OK;
}

glcv_status glcv_segment_set_background(glcv_segment *s, const glcv_image *background)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st = background ? set_background(s, background, 0)
                                : glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "background: NULL image");
    pthread_mutex_unlock(&s->lock);
    return st;
}

glcv_status glcv_segment_set_background_texture(glcv_segment *s, unsigned int texture)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st = texture ? set_background(s, NULL, texture)
                             : glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "background: texture 0");
    pthread_mutex_unlock(&s->lock);
    return st;
}

glcv_status glcv_segment_learn_begin(glcv_segment *s)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st = GLCV_OK;
    if (!s->engine) {
        st = glcv_segment_cpu_learn_begin(&s->cpu);
    } else {
        glcv_engine_begin(s->engine);
        st = gpu_float_textures(s);
        if (st == GLCV_OK)
            st = gpu_clear_float(s, s->bgf_current);
        glcv_engine_end(s->engine);
        s->bgf_valid = 0;
    }
    if (st == GLCV_OK) {
        s->learning = 1;
        s->learn_count = 0;
        s->calib_kept = 0;
        s->calib_stride = 1;
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

/* Brings an input -- a host image, or a caller's texture -- to where the engine reads it: packed
 * RGB in s->rgb for the CPU engine; for GPU engines (between engine begin and end) the next
 * frame texture for a host image, else the caller's texture after validation (*gpu_input). */
static glcv_status take_input(glcv_segment *s, const glcv_image *img, unsigned int texture, GLuint *gpu_input)
{
    if (!s->engine) {
        if (!img)
            return cpu_texture_rgb(s, texture);
        glcv_segment_cpu_to_rgb(img, s->rgb);
        return GLCV_OK;
    }
    if (img) {
        const glcv_tex *t = next_frame_texture(s);
        *gpu_input = t->id;
        return glcv_engine_upload(s->engine, t, img);
    }
    *gpu_input = texture;
    return gpu_check_texture(s, texture);
}

static glcv_status learn_add(glcv_segment *s, const glcv_image *img, unsigned int texture)
{
    if (!s->learning)
        return glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "learn_add without learn_begin");
    glcv_status st = img ? check_image(s, img, "learning frame") : GLCV_OK;
    if (st != GLCV_OK)
        return st;
    if (!s->engine) {
        if ((st = take_input(s, img, texture, NULL)) != GLCV_OK)
            return st;
        glcv_segment_cpu_learn_add(&s->cpu, s->rgb);
        if (!s->p.fixed_parameters && (st = calib_keep(s, s->learn_count, 0)) != GLCV_OK)
            return st;
    } else {
        glcv_engine_begin(s->engine);
        st = take_input(s, img, texture, &texture);
        if (st == GLCV_OK)
            st = gpu_learn_add(s, texture);
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
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st = frame ? learn_add(s, frame, 0)
                           : glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "learn_add: NULL image");
    pthread_mutex_unlock(&s->lock);
    return st;
}

glcv_status glcv_segment_learn_add_texture(glcv_segment *s, unsigned int texture)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st = GLCV_OK;
    if (!s->learning)
        st = glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "learn_add without learn_begin");
    else if (!texture)
        st = glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "learn_add: texture 0");
    else
        st = learn_add(s, NULL, texture);
    pthread_mutex_unlock(&s->lock);
    return st;
}

glcv_status glcv_segment_learn_end(glcv_segment *s)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st = GLCV_OK;
    if (!s->learning || s->learn_count == 0) {
        st = glcv_fail(&s->p.logger, GLCV_ERROR_STATE,
                       s->learning ? "learn_end: no frame was added" : "learn_end without learn_begin");
    } else if (!s->engine) {
        glcv_segment_cpu_learn_end(&s->cpu);
        s->cpu_mask_dirty = 1;
    } else {
        glcv_engine_begin(s->engine);
        st = gpu_learn_end(s);
        glcv_engine_end(s->engine);
        if (st == GLCV_OK)
            st = clear_masks(s);
    }
    if (st == GLCV_OK) {
        s->learning = 0;
        s->have_background = 1;
        st = calib_learned(s);
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

/* ---- segmentation -------------------------------------------------------------------------- */

static void cpu_segment(glcv_segment *s)
{
    glcv_segment_values v = rule_values(s);
    glcv_segment_cpu_thresholds(&s->cpu, s->rgb, &v);
    for (int it = 0; it <= s->p.iterations; it++) {
        int order[4];
        draw_order(s, order);
        glcv_segment_cpu_iterate(&s->cpu, order, it == 0 ? 0 : 1);
    }
    s->cpu_mask_dirty = 1;
}

/* Segments a host image, a caller's texture, or (both NULL/0) the mapped staging frame. */
static glcv_status segment_frame(glcv_segment *s, const glcv_image *img, unsigned int texture, int wait)
{
    const glcv_logger *lg = &s->p.logger;
    int mapped = !img && !texture;
    glcv_image mapped_image = {s->mapped_host, s->width, s->height, 0, s->mapped_format};
    if (mapped && !s->engine)
        img = &mapped_image;
    glcv_status st = img ? check_image(s, img, "frame") : GLCV_OK;
    if (st != GLCV_OK)
        return st;
    if (s->learning)
        return glcv_fail(lg, GLCV_ERROR_STATE, "frame: background learning is in progress (call learn_end)");
    if (!s->have_background)
        return glcv_fail(lg, GLCV_ERROR_STATE, "frame: no background yet (set or learn one first)");
    if (!s->engine) {
        if ((st = take_input(s, img, texture, NULL)) != GLCV_OK)
            return st;
        cpu_segment(s);
        if (s->p.adapt_rate > 0 && (st = glcv_segment_cpu_adapt(&s->cpu, s->rgb, s->p.adapt_rate)) != GLCV_OK)
            return st;
    } else {
        glcv_engine_begin(s->engine);
        if (mapped) {
            const glcv_tex *t = next_frame_texture(s);
            st = glcv_engine_upload_staged(s->engine, t, s->mapped_slot, s->mapped_format, s->width, s->height);
            texture = t->id;
        } else {
            st = take_input(s, img, texture, &texture);
        }
        if (st == GLCV_OK) {
            glcv_engine_frame_begin(s->engine);
            st = gpu_segment(s, texture);
            glcv_engine_frame_end(s->engine);
        }
        glcv_engine_end(s->engine);
        if (st != GLCV_OK)
            return st;
        if (wait)
            glFinish();
        else
            glFlush();
        s->last_input = texture;
    }
    s->have_frame = 1;
    return GLCV_OK;
}

glcv_status glcv_segment_frame(glcv_segment *s, const glcv_image *frame, int wait)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st = frame ? segment_frame(s, frame, 0, wait)
                           : glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "frame: NULL image");
    pthread_mutex_unlock(&s->lock);
    return st;
}

glcv_status glcv_segment_map_frame(glcv_segment *s, glcv_pixel_format format, glcv_image *out)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (out)
        memset(out, 0, sizeof *out);
    pthread_mutex_lock(&s->lock);
    glcv_status st = GLCV_OK;
    int bpp = glcv_pixel_format_size(format);
    size_t bytes = (size_t)s->width * (size_t)s->height * (size_t)bpp;
    void *ptr = NULL;
    if (!out || (format != GLCV_PIXEL_RGB8 && format != GLCV_PIXEL_RGBA8 && format != GLCV_PIXEL_BGR8 &&
                 format != GLCV_PIXEL_BGRA8)) {
        st = glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "map_frame: NULL image or not a colour format");
    } else if (!s->engine) {
        free(s->mapped_host);
        s->mapped_host = ptr = malloc(bytes);
        if (!ptr)
            st = GLCV_ERROR_OUT_OF_MEMORY;
    } else {
        glcv_engine_begin(s->engine);
        st = glcv_engine_stage(s->engine, bytes, &ptr, &s->mapped_slot);
        glcv_engine_end(s->engine);
    }
    if (st == GLCV_OK) {
        s->mapped_format = format;
        *out = (glcv_image){ptr, s->width, s->height, (size_t)s->width * (size_t)bpp, format};
    } else {
        s->mapped_slot = -1;
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

glcv_status glcv_segment_frame_mapped(glcv_segment *s, int wait)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st;
    if (s->engine ? s->mapped_slot < 0 : !s->mapped_host)
        st = glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "frame_mapped without map_frame");
    else
        st = segment_frame(s, NULL, 0, wait);
    s->mapped_slot = -1;
    free(s->mapped_host);
    s->mapped_host = NULL;
    pthread_mutex_unlock(&s->lock);
    return st;
}

glcv_status glcv_segment_frame_texture(glcv_segment *s, unsigned int texture, int wait)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st = texture ? segment_frame(s, NULL, texture, wait)
                             : glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "frame: texture 0");
    pthread_mutex_unlock(&s->lock);
    return st;
}

glcv_status glcv_segment_reset(glcv_segment *s)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st = GLCV_OK;
    if (!s->engine) {
        memset(s->cpu.mask, 0, (size_t)s->width * (size_t)s->height);
        s->cpu_mask_dirty = 1;
    } else {
        st = clear_masks(s);
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

/* ---- outputs ------------------------------------------------------------------------------- */

/* The CPU engine's mask as a texture, uploaded when it changed. */
static unsigned int cpu_mask_texture(glcv_segment *s)
{
    const glcv_logger *lg = &s->p.logger;
    if (!glcv_gl_context_current()) {
        glcv_logf(lg, GLCV_LOG_ERROR, "mask_texture: the CPU engine needs a current GL context to make a texture");
        return 0;
    }
    size_t n = (size_t)s->width * (size_t)s->height;
    if (!s->cpu_mask_texture || s->cpu_mask_dirty) {
        uint8_t *bytes = malloc(n);
        if (!bytes)
            return 0;
        for (size_t i = 0; i < n; i++)
            bytes[i] = s->cpu.mask[i] ? 255 : 0;
        glcv_glstate *state = glcv_glstate_new();
        if (!state) {
            free(bytes);
            return 0;
        }
        glcv_glstate_save(state, 0);
        while (glGetError() != GL_NO_ERROR) {
        }
        int fresh = !s->cpu_mask_texture;
        if (fresh)
            glGenTextures(1, &s->cpu_mask_texture);
        glBindTexture(GL_TEXTURE_2D, s->cpu_mask_texture);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
        glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
        glPixelStorei(GL_UNPACK_SKIP_PIXELS, 0);
        glPixelStorei(GL_UNPACK_SKIP_ROWS, 0);
        if (fresh) {
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
            glTexImage2D(GL_TEXTURE_2D, 0, GL_R8, s->width, s->height, 0, GL_RED, GL_UNSIGNED_BYTE, bytes);
        } else {
            glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, s->width, s->height, GL_RED, GL_UNSIGNED_BYTE, bytes);
        }
        GLenum err = glGetError();
        glcv_glstate_restore(state);
        glcv_glstate_free(state);
        free(bytes);
        if (err != GL_NO_ERROR) {
            glcv_logf(lg, GLCV_LOG_ERROR, "mask_texture: upload failed (GL error 0x%04x)", err);
            return 0;
        }
        s->cpu_mask_dirty = 0;
    }
    return s->cpu_mask_texture;
}

unsigned int glcv_segment_mask_texture(glcv_segment *s)
{
    if (!s)
        return 0;
    pthread_mutex_lock(&s->lock);
    unsigned int id = s->engine ? s->mask.id : cpu_mask_texture(s);
    pthread_mutex_unlock(&s->lock);
    return id;
}

unsigned int glcv_segment_background_texture(glcv_segment *s)
{
    if (!s)
        return 0;
    pthread_mutex_lock(&s->lock);
    unsigned int id = s->engine && s->have_background ? s->background.id : 0;
    pthread_mutex_unlock(&s->lock);
    return id;
}

/* Writes a 0/1 or 0/255 plane into any host format with stride. */
static void write_plane(const uint8_t *plane, int scale, glcv_image *out)
{
    int bpp = glcv_pixel_format_size(out->format);
    size_t stride = glcv_image_stride(out);
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

static glcv_status check_output(glcv_segment *s, const glcv_image *out, int allow_gray, const char *what)
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
    return GLCV_OK;
}

glcv_status glcv_segment_read_mask(glcv_segment *s, glcv_image *out)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st = check_output(s, out, 1, "read_mask");
    if (st == GLCV_OK && !s->have_frame)
        st = glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "read_mask: no frame has been segmented");
    if (st == GLCV_OK) {
        if (!s->engine) {
            write_plane(s->cpu.mask, 255, out);
        } else {
            /* GRAY8 is read straight into the caller's rows; other formats through the RGB scratch,
             * which holds w*h*3 bytes: room for one plane. */
            int direct = out->format == GLCV_PIXEL_GRAY8;
            size_t row = direct ? glcv_image_stride(out) : (size_t)s->width;
            glcv_engine_begin(s->engine);
            st = glcv_engine_read(s->engine, s->mask.id, s->width, s->height, GL_RED, GL_UNSIGNED_BYTE,
                                  direct ? out->data : s->rgb, row);
            glcv_engine_end(s->engine);
            if (st == GLCV_OK && !direct)
                write_plane(s->rgb, 1, out);
        }
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

glcv_status glcv_segment_read_background(glcv_segment *s, glcv_image *out)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st = check_output(s, out, 0, "read_background");
    if (st == GLCV_OK && !s->have_background)
        st = glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "read_background: no background is set");
    if (st == GLCV_OK) {
        const uint8_t *rgb = s->cpu.background;
        if (s->engine) {
            glcv_engine_begin(s->engine);
            st = glcv_engine_read(s->engine, s->background.id, s->width, s->height, GL_RGB, GL_UNSIGNED_BYTE, s->rgb,
                                  (size_t)s->width * 3);
            glcv_engine_end(s->engine);
            rgb = s->rgb;
        }
        if (st == GLCV_OK) {
            glcv_image src = {(uint8_t *)rgb, s->width, s->height, 0, GLCV_PIXEL_RGB8};
            st = glcv_image_convert(&src, out);
        }
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

/* Runs the qualifier pass on the last frame's input and reads fore/back/cross. */
static glcv_status gpu_qualifiers(glcv_segment *s, GLuint input, int32_t *fore, int32_t *back, int32_t *cross)
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
        glcv_pass p = make_pass(s->qualifiers, "qualifiers", s->width, s->height);
        add_input(&p, "frame", input, GLCV_SAMPLE_NEAREST);
        add_input(&p, "background", s->background.id, GLCV_SAMPLE_NEAREST);
        add_output(&p, &out);
        add_uniform_i(&p, "image_size", GLCV_U_2I, s->width, s->height);
        add_uniform_f(&p, "rule", GLCV_U_4F, rule);
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

/* ---- calibration ---------------------------------------------------------------------------- */

/* Starts a calibration: Odc first (D^2 depends on it), an empty histogram. */
static void calib_start(glcv_segment *s)
{
    if (!(s->explicit_values & EXPLICIT_ODC))
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
        glcv_segment_values v = rule_values(s);
        glcv_segment_cpu_thresholds(&s->cpu, rgb, &v);
        fore = s->cpu.fore, back = s->cpu.back, cross = s->cpu.cross;
    } else {
        if (!s->calib_sums && !(s->calib_sums = malloc(3 * n * sizeof(int32_t))))
            return GLCV_ERROR_OUT_OF_MEMORY;
        fore = s->calib_sums, back = s->calib_sums + n, cross = s->calib_sums + 2 * n;
        glcv_status st = gpu_qualifiers(s, texture, s->calib_sums, s->calib_sums + n, s->calib_sums + 2 * n);
        if (st != GLCV_OK)
            return st;
    }
    for (size_t i = 0; i < n; i++) {
        double d2 = glcv_segment_d2(fore[i], back[i], cross[i], s->p.odc);
        int bin = (int)(log2(1.0 + d2) * 24.0);
        s->calib_hist[bin < 0 ? 0 : bin >= CALIB_BINS ? CALIB_BINS - 1 : bin]++;
    }
    s->calib_frames++;
    return GLCV_OK;
}

/* g = the median of D^2 from the histogram; sets what was not given explicitly. */
static void calib_apply(glcv_segment *s, float *g_out)
{
    uint64_t total = 0, seen = 0;
    for (int i = 0; i < CALIB_BINS; i++)
        total += s->calib_hist[i];
    int bin = 0;
    while (bin < CALIB_BINS - 1 && (seen + s->calib_hist[bin]) * 2 < total)
        seen += s->calib_hist[bin++];
    double g = exp2((bin + 0.5) / 24.0) - 1.0;
    if (g < 1.0)
        g = 1.0;
    double ts = fmin(CALIB_TS_PER_G * g, MAX_RULE_VALUE), b = fmin(CALIB_B_PER_G * g, MAX_RULE_VALUE);
    if (!(s->explicit_values & EXPLICIT_TS))
        s->p.ts = (float)ts;
    if (!(s->explicit_values & EXPLICIT_B1))
        s->p.b1 = (float)b;
    if (!(s->explicit_values & EXPLICIT_B2))
        s->p.b2 = (float)b;
    glcv_logf(&s->p.logger, GLCV_LOG_INFO,
              "segment: calibrated on %d frames: median D^2 %.1f -> Ts %g, Odc %g, B1 %g, B2 %g%s", s->calib_frames,
              g, (double)s->p.ts, (double)s->p.odc, (double)s->p.b1, (double)s->p.b2,
              s->explicit_values ? " (explicit values kept)" : "");
    if (g_out)
        *g_out = (float)g;
}

/* While learning: keeps every calib_stride-th frame, at most CALIB_KEEP, halving when full. */
static glcv_status calib_keep(glcv_segment *s, int index, GLuint texture)
{
    if (index % s->calib_stride != 0)
        return GLCV_OK;
    if (s->calib_kept == CALIB_KEEP) {
        for (int i = 1; i < CALIB_KEEP / 2; i++) { /* keep the even ones: swap storage */
            glcv_tex t = s->calib_tex[i];
            s->calib_tex[i] = s->calib_tex[2 * i];
            s->calib_tex[2 * i] = t;
            uint8_t *r = s->calib_rgb[i];
            s->calib_rgb[i] = s->calib_rgb[2 * i];
            s->calib_rgb[2 * i] = r;
        }
        s->calib_kept = CALIB_KEEP / 2;
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
        if (st == GLCV_OK) {
            glcv_pass c = make_pass(s->copy, "copy", s->width, s->height);
            add_input(&c, "source", texture, GLCV_SAMPLE_NEAREST);
            add_output(&c, &s->calib_tex[k]);
            st = glcv_engine_run(s->engine, &c);
        }
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

glcv_status glcv_segment_calibrate_begin(glcv_segment *s)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st = GLCV_OK;
    if (!s->have_background || s->learning)
        st = glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "calibrate_begin: set or learn a background first");
    else {
        calib_start(s);
        s->calibrating = 1;
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

static glcv_status calibrate_add(glcv_segment *s, const glcv_image *img, unsigned int texture)
{
    if (!s->calibrating)
        return glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "calibrate_add without calibrate_begin");
    glcv_status st = img ? check_image(s, img, "calibration frame") : GLCV_OK;
    if (st != GLCV_OK)
        return st;
    if (!s->engine)
        return (st = take_input(s, img, texture, NULL)) == GLCV_OK ? calib_accumulate(s, s->rgb, 0) : st;
    glcv_engine_begin(s->engine);
    st = take_input(s, img, texture, &texture);
    glcv_engine_end(s->engine);
    return st == GLCV_OK ? calib_accumulate(s, NULL, texture) : st;
}

glcv_status glcv_segment_calibrate_add(glcv_segment *s, const glcv_image *frame)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st = frame ? calibrate_add(s, frame, 0)
                           : glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "calibrate_add: NULL image");
    pthread_mutex_unlock(&s->lock);
    return st;
}

glcv_status glcv_segment_calibrate_add_texture(glcv_segment *s, unsigned int texture)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st = texture ? calibrate_add(s, NULL, texture)
                             : glcv_fail(&s->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "calibrate_add: texture 0");
    pthread_mutex_unlock(&s->lock);
    return st;
}

glcv_status glcv_segment_calibrate_end(glcv_segment *s, float *g_out)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st = GLCV_OK;
    if (!s->calibrating || s->calib_frames == 0)
        st = glcv_fail(&s->p.logger, GLCV_ERROR_STATE,
                       s->calibrating ? "calibrate_end: no frame was added" : "calibrate_end without calibrate_begin");
    else
        calib_apply(s, g_out);
    s->calibrating = 0;
    pthread_mutex_unlock(&s->lock);
    return st;
}

glcv_status glcv_segment_read_qualifiers(glcv_segment *s, int32_t *fore, int32_t *back, int32_t *cross)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st = GLCV_OK;
    size_t n = (size_t)s->width * (size_t)s->height;
    if (!s->have_frame) {
        st = glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "read_qualifiers: no frame has been segmented");
    } else if (!s->engine) {
        if (fore)
            memcpy(fore, s->cpu.fore, n * sizeof(int32_t));
        if (back)
            memcpy(back, s->cpu.back, n * sizeof(int32_t));
        if (cross)
            memcpy(cross, s->cpu.cross, n * sizeof(int32_t));
    } else {
        st = gpu_qualifiers(s, s->last_input, fore, back, cross);
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

glcv_status glcv_segment_read_thresholds(glcv_segment *s, uint8_t *m_min_b1, uint8_t *m_min_b2)
{
    if (!s)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    glcv_status st = GLCV_OK;
    size_t n = (size_t)s->width * (size_t)s->height;
    if (!s->have_frame) {
        st = glcv_fail(&s->p.logger, GLCV_ERROR_STATE, "read_thresholds: no frame has been segmented");
    } else if (!s->engine) {
        if (m_min_b1)
            memcpy(m_min_b1, s->cpu.m_min[0], n);
        if (m_min_b2)
            memcpy(m_min_b2, s->cpu.m_min[1], n);
    } else {
        size_t sub = (size_t)s->words_w * 4 * (size_t)s->sub_h;
        uint8_t *buf = malloc(sub * 2);
        if (!buf) {
            st = GLCV_ERROR_OUT_OF_MEMORY;
        } else {
            glcv_engine_begin(s->engine);
            for (int k = 0; k < 4 && st == GLCV_OK; k++) {
                /* Multi-pass: RG8UI (B1, B2) per pixel. Tiled: R32UI words, per byte B1 << 4 | B2. */
                if (s->tile_iterations)
                    st = glcv_engine_read(s->engine, s->thr_words[k].id, s->words_w, s->sub_h, GL_RED_INTEGER,
                                          GL_UNSIGNED_INT, buf, (size_t)s->words_w * 4);
                else
                    st = glcv_engine_read(s->engine, s->thresholds[k].id, s->sub_w, s->sub_h, GL_RG_INTEGER,
                                          GL_UNSIGNED_BYTE, buf, (size_t)s->sub_w * 2);
                if (st != GLCV_OK)
                    break;
                for (int y = k >> 1; y < s->height; y += 2) {
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
        }
    }
    pthread_mutex_unlock(&s->lock);
    return st;
}

glcv_status glcv_segment_timings(glcv_segment *s, glcv_pass_timing *out, int capacity, int *count, int wait)
{
    if (!s || !count || (capacity > 0 && !out) || capacity < 0)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&s->lock);
    *count = s->engine ? glcv_engine_timings(s->engine, out, capacity, wait) : 0;
    pthread_mutex_unlock(&s->lock);
    return GLCV_OK;
}
