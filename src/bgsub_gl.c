/* Background subtraction's GL passes (shaders/bgsub.glsl) on the engine, FRAGMENT or COMPUTE: every
 * stream a layer of texture arrays; the frame ring is four buffers rotated by index; B and T are
 * two pairs of arrays written in turn. The streamed passes in blocks keep B, T, the counter and
 * the decisions in buffers instead, in the order of the quads (see quad layout below). See
 * bgsub_internal.h. */
#include "bgsub_internal.h"

#include "core_internal.h"

#include <glcv/context.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void note_download(glcv_bgsub *b, int slot, long set);

/* A download slot for masks that a pass writes itself, as words (four mask bytes at a time). */
static glcv_status reserve_mask_words(glcv_bgsub *b, int *slot, GLuint *buffer)
{
    size_t bytes = (size_t)b->p.width * (size_t)b->p.height * (size_t)b->p.streams;
    glcv_status st = glcv_engine_download_reserve(b->engine, (bytes + 3) & ~(size_t)3, slot);
    *buffer = st == GLCV_OK ? glcv_engine_download_buffer(b->engine, *slot) : 0;
    return st;
}

/* The formats: one value per pixel (or four packed gray ones per texel). */
static glcv_format one_per_pixel(const glcv_bgsub *b)
{
    return b->packed ? GLCV_FORMAT_RGBA8UI : GLCV_FORMAT_R8UI;
}

static glcv_format state_format(const glcv_bgsub *b)
{
    return b->lanes == 1 && !b->packed ? GLCV_FORMAT_R16UI : GLCV_FORMAT_RGBA16UI;
}

static glcv_status program(glcv_bgsub *b, const char *defines, int stage, const char *extra, const glcv_format *outs,
                           int n_outs, glcv_program **out)
{
    static const char *const files[] = {"bgsub.glsl"};
    char all[640], key[96];
    snprintf(all, sizeof all, "%s#define BGSUB_STAGE %d\n%s", defines, stage, extra);
    snprintf(key, sizeof key, "bgsub %d %d %d %d %d %d %d %d", (int)b->rule.method, b->bpp, b->lanes, b->packed,
             (int)b->p.format, stage, (int)b->p.upload, b->p.download);
    return glcv_engine_program(b->engine, key, files, 1, all, outs, n_outs, out);
}

static glcv_status programs(glcv_bgsub *b)
{
    /* Layered (a layer per stream) but for the decide pass in blocks, which works on the quads of
     * the whole set in buffers and has no output texture. */
    char defines[320], flat[256];
    snprintf(flat, sizeof flat, "#define BGSUB_METHOD %d\n#define BGSUB_BPP %d\n#define BGSUB_LANES %d\n%s%s",
             (int)b->rule.method, b->packed ? 1 : b->bpp, b->lanes,
             b->p.format == GLCV_PIXEL_BGR8 || b->p.format == GLCV_PIXEL_BGRA8 ? "#define BGSUB_BGR 1\n" : "",
             b->packed ? "#define BGSUB_PACKED 1\n" : "");
    snprintf(defines, sizeof defines, "#define GLCV_LAYERED 1\n%s", flat);
    const glcv_format one = one_per_pixel(b), st_f = state_format(b);
    const glcv_format mask_f = b->packed ? GLCV_FORMAT_RGBA8 : GLCV_FORMAT_R8;
    const glcv_format update_out[4] = {one, st_f, st_f, one};
    /* the pass that reads the staging memory: a word per store, or blocks of 64 quads */
    const char *ring = b->blocks   ? "#define BGSUB_BLOCKS 1\n#define GLCV_TILED 1\n#define GLCV_LOCAL_X 64\n"
                                     "#define GLCV_LOCAL_Y 1\n"
                       : b->stream ? "#define BGSUB_WRITE_RING 1\n"
                                   : "";
    char vote[64];
    snprintf(vote, sizeof vote, "%s%s", b->blocks ? "#define BGSUB_BLOCKS 1\n" : "",
             b->stream && b->p.download ? "#define BGSUB_WRITE_MASK 1\n" : "");
    int vsam = b->rule.method == GLCV_BGSUB_VSAM;
    /* fused: the decisions' program also votes the set before, into the download memory */
    char fused[320];
    snprintf(fused, sizeof fused, "%s#define BGSUB_FUSED 1\n%s", ring,
             b->p.download ? "#define BGSUB_WRITE_MASK 1\n" : "");
    glcv_status st;
    if (b->blocks) {
        if ((st = program(b, flat, 0, b->fused ? fused : ring, NULL, 0, &b->update)) != GLCV_OK)
            return st;
    } else if (vsam && b->p.passes == GLCV_BGSUB_MULTI_PASS) {
        const glcv_format chain_out[5] = {one, one, one, st_f, st_f};
        for (int i = 0; i < 5; i++)
            if ((st = program(b, defines, i + 1, i == 0 ? ring : "", &chain_out[i], 1, &b->chain[i])) != GLCV_OK)
                return st;
    } else if ((st = program(b, defines, 0, ring, update_out, vsam ? 4 : 1, &b->update)) != GLCV_OK) {
        return st;
    }
    return program(b, defines, 6, vote, &mask_f, 1, &b->vote);
}

/* The width of the arrays in texels: packed gray holds 4 pixels per texel. */
static int texel_width(const glcv_bgsub *b)
{
    return b->packed ? b->p.width / 4 : b->p.width;
}

static size_t set_bytes(const glcv_bgsub *b)
{
    return (size_t)b->p.width * (size_t)b->p.height * (size_t)b->bpp * (size_t)b->p.streams;
}

/* A set's bytes rounded up to 16: streamed passes read and write whole words, in blocks 16 bytes
 * at a time. */
static size_t set_bytes_padded(const glcv_bgsub *b)
{
    return (set_bytes(b) + 15) & ~(size_t)15;
}

/* ---- the quad layout of the passes in blocks --------------------------------------------------------
 * Per quad (four pixels side by side; quads in the order of the pixels, layer after layer) STATE
 * 16-bit values: colour: B of its pixels 0..3 (r, g, b, the counter), then T of its pixels (r, g,
 * b, 0); luma: B0..B3, T0..T3, the four counters as bytes (two values), 6 values of 0. The
 * decisions: a byte a pixel. shaders/bgsub.glsl (quad_state) reads the same layout. */
static int quad_values(const glcv_bgsub *b)
{
    return b->lanes == 3 ? 32 : 16;
}

static size_t set_quads(const glcv_bgsub *b)
{
    return (size_t)b->p.width / 4 * (size_t)b->p.height * (size_t)b->p.streams;
}

/* B and T (host layout: `lanes` values a pixel) of the quads first..first+count-1 into the quad
 * layout, the counters 0; and back (counters dropped). */
static void to_quads(const glcv_bgsub *b, const uint16_t *bg, const uint16_t *th, size_t first, size_t count,
                     uint16_t *out)
{
    int lanes = b->lanes, per = quad_values(b);
    memset(out, 0, count * (size_t)per * sizeof *out);
    for (size_t q = 0; q < count; q++) {
        uint16_t *o = out + q * (size_t)per;
        size_t px = (first + q) * 4;
        for (int k = 0; k < 4; k++)
            for (int l = 0; l < lanes; l++) {
                size_t src = (px + (size_t)k) * (size_t)lanes + (size_t)l;
                o[lanes == 3 ? 4 * k + l : k] = bg[src];
                o[lanes == 3 ? 16 + 4 * k + l : 4 + k] = th[src];
            }
    }
}

static void from_quads(const glcv_bgsub *b, const uint16_t *in, size_t count, uint16_t *bg, uint16_t *th)
{
    int lanes = b->lanes, per = quad_values(b);
    for (size_t q = 0; q < count; q++) {
        const uint16_t *s = in + q * (size_t)per;
        for (int k = 0; k < 4; k++)
            for (int l = 0; l < lanes; l++) {
                size_t dst = (q * 4 + (size_t)k) * (size_t)lanes + (size_t)l;
                if (bg)
                    bg[dst] = s[lanes == 3 ? 4 * k + l : k];
                if (th)
                    th[dst] = s[lanes == 3 ? 16 + 4 * k + l : 4 + k];
            }
    }
}

static glcv_status textures(glcv_bgsub *b)
{
    glcv_engine *e = b->engine;
    int w = texel_width(b), h = b->p.height, n = b->p.streams;
    glcv_status st;
    for (int i = 0; i < GLCV_BGSUB_GL_RING; i++)
        if ((st = glcv_engine_buffer_create(e, &b->ring[i], set_bytes_padded(b))) != GLCV_OK)
            return st;
    glcv_format mask_f = b->packed ? GLCV_FORMAT_RGBA8 : GLCV_FORMAT_R8;
    if (b->blocks) {
        size_t state = set_quads(b) * (size_t)quad_values(b) * sizeof(uint16_t), raw = set_quads(b) * 4;
        for (int i = 0; i < 2 && st == GLCV_OK; i++)
            st = glcv_engine_storage_create(e, &b->state[i], state);
        if (st == GLCV_OK)
            st = glcv_engine_storage_create(e, &b->raw, raw);
        if (st == GLCV_OK && b->fused)
            st = glcv_engine_storage_create(e, &b->raw_prev, raw);
        for (int i = 0; i < 2 && st == GLCV_OK; i++)
            st = glcv_engine_tex_create_layers(e, &b->mask[i], w, h, n, mask_f);
        return st;
    }
    for (int i = 0; i < 2; i++)
        if ((st = glcv_engine_tex_create_layers(e, &b->bg[i], w, h, n, state_format(b))) != GLCV_OK ||
            (st = glcv_engine_tex_create_layers(e, &b->th[i], w, h, n, state_format(b))) != GLCV_OK ||
            (st = glcv_engine_tex_create_layers(e, &b->count[i], w, h, n, one_per_pixel(b))) != GLCV_OK)
            return st;
    if ((st = glcv_engine_tex_create_layers(e, &b->raw, w, h, n, one_per_pixel(b))) ||
        (st = glcv_engine_tex_create_layers(e, &b->mask[0], w, h, n, mask_f)) ||
        (st = glcv_engine_tex_create_layers(e, &b->mask[1], w, h, n, mask_f)))
        return st;
    if (b->chain[0] && (st = glcv_engine_tex_create_layers(e, &b->moving, w, h, n, one_per_pixel(b))) != GLCV_OK)
        return st;
    return GLCV_OK;
}

glcv_status glcv_bgsub_gl_create(glcv_bgsub *b)
{
    glcv_status st = glcv_engine_create(b->p.engine, b->p.timing, &b->p.logger, &b->engine);
    if (st != GLCV_OK)
        return st;
    b->p.engine = glcv_engine_mode_of(b->engine);
    /* Streaming needs image stores (compute) and persistently mapped staging memory (GL 4.4). */
    int can_stream = b->p.engine == GLCV_ENGINE_COMPUTE && epoxy_gl_version() >= 44;
    GLint64 max_block = 0;
    if (can_stream)
        glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &max_block);
    int fits = (GLint64)set_bytes_padded(b) <= max_block; /* a set in one storage block */
    /* Measured on the H100 (docs/PERFORMANCE.md), with I/O at every size from 160x120 to 720x576:
     * packed gray frames streamed a word per store, frames of one pixel per texel streamed in
     * blocks and fused with the vote of the set before (1.5-3x the cameras of the copy); the copy
     * where neither applies (for RGB the word-per-store stream loses to it). */
    if (b->p.upload == GLCV_BGSUB_UPLOAD_DEFAULT) {
        int chain = b->p.passes == GLCV_BGSUB_MULTI_PASS && b->rule.method == GLCV_BGSUB_VSAM;
        b->p.upload = !can_stream || !fits                 ? GLCV_BGSUB_UPLOAD_COPY
                      : b->packed                          ? GLCV_BGSUB_UPLOAD_STREAM
                      : b->p.width % 4 == 0 && !chain      ? GLCV_BGSUB_UPLOAD_STREAM_FUSED
                                                           : GLCV_BGSUB_UPLOAD_COPY;
    }
    int streamed = b->p.upload >= GLCV_BGSUB_UPLOAD_STREAM;
    if (streamed && !can_stream)
        return glcv_fail(&b->p.logger, GLCV_ERROR_UNSUPPORTED,
                         "bgsub: streamed uploads need the compute engine and OpenGL 4.4");
    if (streamed) {
        if (!fits)
            return glcv_fail(&b->p.logger, GLCV_ERROR_UNSUPPORTED,
                             "bgsub: a set of %zu bytes is above this GL's GL_MAX_SHADER_STORAGE_BLOCK_SIZE (%lld) "
                             "for streamed uploads",
                             set_bytes_padded(b), (long long)max_block);
    }
    /* Blocks of quads need quads: rows of whole quads, one pixel per texel. Packed gray texels
     * are whole words already, which the word-per-store stream reads side by side. */
    int in_blocks = b->p.upload == GLCV_BGSUB_UPLOAD_STREAM_BLOCKS || b->p.upload == GLCV_BGSUB_UPLOAD_STREAM_FUSED;
    if (in_blocks && (b->packed || b->p.width % 4 != 0)) {
        glcv_logf(&b->p.logger, GLCV_LOG_DEBUG, "bgsub: %s: streamed a word per store instead of in blocks",
                  b->packed ? "packed gray" : "width not a multiple of 4");
        b->p.upload = GLCV_BGSUB_UPLOAD_STREAM;
    }
    /* The chain has passes between the decisions and the vote, on textures: a word per store.
     * So too when the state of the set (in blocks: one buffer) is above a storage block. */
    size_t state_bytes = (size_t)b->p.width / 4 * (size_t)b->p.height * (size_t)b->p.streams * 32 * sizeof(uint16_t);
    if (b->p.upload >= GLCV_BGSUB_UPLOAD_STREAM_BLOCKS &&
        ((b->p.passes == GLCV_BGSUB_MULTI_PASS && b->rule.method == GLCV_BGSUB_VSAM) ||
         (GLint64)state_bytes > max_block)) {
        glcv_logf(&b->p.logger, GLCV_LOG_DEBUG, "bgsub: %s: streamed a word per store instead of in blocks",
                  (GLint64)state_bytes > max_block ? "the state is above GL_MAX_SHADER_STORAGE_BLOCK_SIZE"
                                                   : "the chain of passes");
        b->p.upload = GLCV_BGSUB_UPLOAD_STREAM;
    }
    b->stream = b->p.upload >= GLCV_BGSUB_UPLOAD_STREAM;
    b->blocks = b->p.upload >= GLCV_BGSUB_UPLOAD_STREAM_BLOCKS;
    b->fused = b->p.upload == GLCV_BGSUB_UPLOAD_STREAM_FUSED;
    glcv_engine_begin(b->engine);
    st = programs(b);
    if (st == GLCV_OK)
        st = textures(b);
    glcv_engine_end(b->engine);
    return st;
}

void glcv_bgsub_gl_destroy(glcv_bgsub *b)
{
    if (!b->engine)
        return;
    if (glcv_engine_context_current(b->engine)) {
        glcv_engine_begin(b->engine);
        glcv_tex *all[] = {&b->ring[0], &b->ring[1], &b->ring[2],    &b->ring[3], &b->bg[0],    &b->bg[1],
                           &b->th[0],   &b->th[1],   &b->count[0],   &b->count[1], &b->raw,     &b->moving,
                           &b->mask[0], &b->mask[1], &b->raw_prev,   &b->state[0], &b->state[1], &b->luma,
                           &b->stage_dev};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            glcv_engine_tex_destroy(b->engine, all[i]);
        glcv_engine_end(b->engine);
    }
    glcv_engine_destroy(&b->engine);
}

glcv_status glcv_bgsub_gl_stage(glcv_bgsub *b, void **ptr, int *slot)
{
    glcv_engine_begin(b->engine);
    glcv_status st = glcv_engine_stage(b->engine, set_bytes_padded(b), ptr, slot);
    glcv_engine_end(b->engine);
    return st;
}

/* GRAY8 frames from a caller's colour frames: their luma into b->luma (shaders/bgsub_luma.glsl),
 * the program and the array made on first use. */
static glcv_status luma_pass(glcv_bgsub *b, GLuint texture)
{
    static const char *const files[] = {"bgsub_luma.glsl"};
    const glcv_format r8 = GLCV_FORMAT_R8;
    glcv_program *prog = NULL;
    glcv_status st = glcv_engine_program(b->engine, "bgsub luma", files, 1, "#define GLCV_LAYERED 1\n", &r8, 1, &prog);
    if (st == GLCV_OK && !b->luma.id)
        st = glcv_engine_tex_create_layers(b->engine, &b->luma, b->p.width, b->p.height, b->p.streams, r8);
    if (st != GLCV_OK)
        return st;
    /* the caller's array as an input of the layered pass (its layers past `streams` are not read) */
    const glcv_tex frames = {.id = texture, .width = b->p.width, .height = b->p.height, .layers = b->p.streams};
    glcv_pass p = glcv_pass_make(prog, "luma", b->p.width, b->p.height);
    glcv_pass_add_input_tex(&p, "u_frames", &frames, GLCV_SAMPLE_NEAREST);
    glcv_pass_add_output(&p, &b->luma);
    st = glcv_engine_run(b->engine, &p);
    glcv_engine_sync_writes(b->engine);
    return st;
}

glcv_status glcv_bgsub_gl_take_texture(glcv_bgsub *b, GLuint texture)
{
    glcv_engine *e = b->engine;
    const int w = b->p.width, h = b->p.height, n = b->p.streams;
    const int gray = b->p.format == GLCV_PIXEL_GRAY8;
    /* Where a host set would be: the streamed passes read it from a buffer (as from the staging
     * memory) and write it into the ring; the others read it in the ring, where the copy puts it. */
    const glcv_tex *dst = b->stream ? &b->stage_dev : &b->ring[(b->ring_cur + 1) % GLCV_BGSUB_GL_RING];
    glcv_engine_begin(e);
    glcv_status st = glcv_gl_check_frames(texture, w, h, n, &b->p.logger);
    if (st == GLCV_OK && b->stream && !b->stage_dev.buffer)
        st = glcv_engine_storage_create(e, &b->stage_dev, set_bytes_padded(b));
    if (st == GLCV_OK && gray)
        st = luma_pass(b, texture);
    if (st == GLCV_OK)
        st = glcv_engine_pack_layers(e, gray ? b->luma.id : texture, n, w, h,
                                     gray ? GL_RED : glcv_engine_pixel_gl_format(b->p.format), dst->buffer, dst->bytes);
    glcv_engine_end(e);
    return st;
}

static void add_rule_uniforms(const glcv_bgsub *b, glcv_pass *p, int history, int init)
{
    glcv_pass_add_uniform_i(p, "u_history", GLCV_U_1I, history, 0);
    glcv_pass_add_uniform_i(p, "u_init", GLCV_U_1I, init, 0);
    glcv_pass_add_uniform_i(p, "u_learned", GLCV_U_1I, b->initialised, 0);
    glcv_pass_add_uniform_i(p, "u_a", GLCV_U_1I, (int)b->rule.a, 0);
    glcv_pass_add_uniform_i(p, "u_c", GLCV_U_1I, (int)b->rule.c, 0);
    glcv_pass_add_uniform_i(p, "u_f", GLCV_U_1I, (int)b->rule.f, 0);
    glcv_pass_add_uniform_i(p, "u_k", GLCV_U_1I, b->rule.k, 0);
    glcv_pass_add_uniform_i(p, "u_vote", GLCV_U_1I, b->rule.vote, 0);
    glcv_pass_add_uniform_i(p, "u_layers", GLCV_U_1I, b->p.streams, 0);
}

/* The work groups of the streamed pass in blocks (shaders/bgsub.glsl, BGSUB_BLOCKS): one per 64
 * quads of the set (fused: two, one deciding, one voting the set before), counted through the set
 * in memory order whatever their layer, in a grid of at most 65535 columns; the few groups past
 * the set's last block do nothing. */
static void block_grid(const glcv_bgsub *b, glcv_pass *p)
{
    long quads = (long)set_quads(b);
    long groups = (quads + 63) / 64 * (b->fused ? 2 : 1);
    p->groups_x = (int)(groups < 65535 ? groups : 65535);
    p->groups_y = (int)((groups + p->groups_x - 1) / p->groups_x);
    glcv_pass_add_uniform_i(p, "u_quads", GLCV_U_1I, (int)quads, 0);
}

/* A pass of `program` over every stream with the frames and the current state as inputs. The
 * first pass of a streamed set reads the frames from staging buffer `stage_buf` and writes them
 * into the ring. */
static glcv_pass make_pass(glcv_bgsub *b, glcv_program *program, const char *label, int cur, int history, int init,
                           GLuint stage_buf)
{
    glcv_pass p = glcv_pass_make(program, label, texel_width(b), b->p.height);
    glcv_pass_add_input_tex(&p, "u_cur", &b->ring[cur], GLCV_SAMPLE_NEAREST);
    if (stage_buf) {
        glcv_pass_add_storage(&p, 0, stage_buf);
        glcv_pass_add_storage(&p, 1, b->ring[cur].buffer);
    }
    glcv_pass_add_input_tex(&p, "u_p1", &b->ring[(cur + GLCV_BGSUB_GL_RING - 1) % GLCV_BGSUB_GL_RING],
                            GLCV_SAMPLE_NEAREST);
    glcv_pass_add_input_tex(&p, "u_p2", &b->ring[(cur + GLCV_BGSUB_GL_RING - 2) % GLCV_BGSUB_GL_RING],
                            GLCV_SAMPLE_NEAREST);
    if (b->blocks) {
        glcv_pass_add_storage(&p, 3, b->state[b->state_cur].buffer);
        glcv_pass_add_storage(&p, 4, b->state[1 - b->state_cur].buffer);
        glcv_pass_add_storage(&p, 5, b->raw.buffer);
    } else {
        glcv_pass_add_input_tex(&p, "u_bg", &b->bg[b->state_cur], GLCV_SAMPLE_NEAREST);
        glcv_pass_add_input_tex(&p, "u_th", &b->th[b->state_cur], GLCV_SAMPLE_NEAREST);
        glcv_pass_add_input_tex(&p, "u_count", &b->count[b->state_cur], GLCV_SAMPLE_NEAREST);
    }
    if (b->chain[0]) {
        glcv_pass_add_input_tex(&p, "u_moving", &b->moving, GLCV_SAMPLE_NEAREST);
        glcv_pass_add_input_tex(&p, "u_raw", &b->raw, GLCV_SAMPLE_NEAREST);
    }
    add_rule_uniforms(b, &p, history, init);
    if (stage_buf && b->blocks)
        block_grid(b, &p);
    return p;
}

/* The vote of the decisions in `raw` into `mask` (and download buffer `mask_out`, if any). */
static glcv_status run_vote(glcv_bgsub *b, const glcv_tex *raw, const glcv_tex *mask, GLuint mask_out, int history,
                            int init)
{
    /* in blocks: a quad per invocation */
    glcv_pass v = glcv_pass_make(b->vote, "vote", b->blocks ? b->p.width / 4 : texel_width(b), b->p.height);
    if (b->blocks)
        glcv_pass_add_storage(&v, 6, raw->buffer);
    else
        glcv_pass_add_input_tex(&v, "u_raw", raw, GLCV_SAMPLE_NEAREST);
    if (mask_out)
        glcv_pass_add_storage(&v, 2, mask_out);
    add_rule_uniforms(b, &v, history, init);
    glcv_pass_add_output(&v, mask);
    return glcv_engine_run(b->engine, &v);
}

/* The passes of the newest set; fused, with `vote_prev` the vote of the set before in the same
 * dispatch (its masks into `mask_out`), else the vote of this set after (into `mask_out`). */
static glcv_status run_passes(glcv_bgsub *b, int cur, int history, int init, GLuint stage_buf, GLuint mask_out,
                              int vote_prev)
{
    glcv_engine *e = b->engine;
    int next = 1 - b->state_cur;
    int vsam = b->rule.method == GLCV_BGSUB_VSAM;
    glcv_status st = GLCV_OK;
    if (b->blocks) {
        glcv_pass p = make_pass(b, b->update, "decide", cur, history, init, stage_buf);
        if (b->fused) {
            glcv_pass_add_storage(&p, 6, b->raw_prev.buffer);
            glcv_pass_add_uniform_i(&p, "u_vote_prev", GLCV_U_1I, vote_prev, 0);
            if (mask_out)
                glcv_pass_add_storage(&p, 2, mask_out);
        }
        st = glcv_engine_run(e, &p);
    } else if (!b->chain[0]) {
        glcv_pass p = make_pass(b, b->update, "decide", cur, history, init, stage_buf);
        glcv_pass_add_output(&p, &b->raw);
        if (vsam) {
            glcv_pass_add_output(&p, &b->bg[next]);
            glcv_pass_add_output(&p, &b->th[next]);
            glcv_pass_add_output(&p, &b->count[next]);
        }
        st = glcv_engine_run(e, &p);
    } else {
        static const char *const labels[5] = {"moving", "foreground", "count", "background", "threshold"};
        const glcv_tex *outs[5] = {&b->moving, &b->raw, &b->count[next], &b->bg[next], &b->th[next]};
        for (int i = 0; i < 5 && st == GLCV_OK; i++) {
            glcv_pass p = make_pass(b, b->chain[i], labels[i], cur, history, init, i == 0 ? stage_buf : 0);
            glcv_pass_add_output(&p, outs[i]);
            st = glcv_engine_run(e, &p);
        }
    }
    if (st == GLCV_OK && !b->fused)
        st = run_vote(b, &b->raw, &b->mask[b->total % 2], mask_out, history, init);
    if (st == GLCV_OK && vsam)
        b->state_cur = next;
    return st;
}

glcv_status glcv_bgsub_gl_run(glcv_bgsub *b, int slot, int wait)
{
    glcv_engine *e = b->engine;
    int cur = (b->ring_cur + 1) % GLCV_BGSUB_GL_RING;
    int history = b->sets >= 2 ? 2 : (int)b->sets;
    int init = b->rule.method == GLCV_BGSUB_VSAM && !b->initialised;
    size_t mask_bytes = (size_t)b->p.width * (size_t)b->p.height * (size_t)b->p.streams;
    /* Fused: this set's dispatch votes the set before into the download memory, unless its masks
     * were made already. Without params.download only the newest set's masks can be asked for
     * (they are made then): nothing to vote. */
    int vote_prev = b->fused && b->p.download && b->made < b->total;
    long dl_set = b->fused ? b->total - 1 : b->total; /* the set whose masks the download holds */
    glcv_engine_begin(e);
    glcv_engine_frame_begin(e);
    glcv_status st = GLCV_OK;
    GLuint stage_buf = 0, mask_out = 0;
    int dl = -1;
    if (b->stream) {
        stage_buf = slot >= 0 ? glcv_engine_stage_buffer(e, slot) : b->stage_dev.buffer;
        if (!stage_buf)
            st = glcv_fail(&b->p.logger, GLCV_ERROR_GL, "bgsub: no persistently mapped staging memory");
        if (st == GLCV_OK && b->p.download && (!b->fused || vote_prev))
            st = reserve_mask_words(b, &dl, &mask_out);
    } else if (slot >= 0) {
        st = glcv_engine_copy_staged(e, slot, &b->ring[cur], set_bytes(b));
    }
    if (st == GLCV_OK) {
        if (b->fused) {
            glcv_tex t = b->raw; /* the set before's decisions become raw_prev */
            b->raw = b->raw_prev;
            b->raw_prev = t;
        }
        st = run_passes(b, cur, history, init, stage_buf, mask_out, vote_prev);
    }
    if (b->stream)
        glcv_engine_stage_fence(e, slot);
    if (st == GLCV_OK && b->p.download) {
        if (b->stream) {
            if (dl >= 0)
                glcv_engine_download_fence(e, dl);
        } else {
            st = glcv_engine_download(e, &b->mask[b->total % 2], b->packed ? GL_RGBA : GL_RED, GL_UNSIGNED_BYTE,
                                      mask_bytes, &dl);
        }
        if (st == GLCV_OK && dl >= 0)
            note_download(b, dl, dl_set);
    }
    glcv_engine_frame_end(e);
    if (st == GLCV_OK) {
        glcv_engine_sync_writes(e);
        if (wait)
            glFinish();
        else
            glFlush();
        b->ring_cur = cur;
        if (init)
            b->initialised = 1;
        b->made = !b->fused ? b->total + 1 : vote_prev ? b->total : b->made;
    }
    glcv_engine_end(e);
    return st;
}

glcv_status glcv_bgsub_gl_vote_newest(glcv_bgsub *b)
{
    if (!b->fused || b->made >= b->total)
        return GLCV_OK;
    glcv_engine_begin(b->engine);
    GLuint mask_out = 0;
    int dl = -1;
    glcv_status st = b->p.download ? reserve_mask_words(b, &dl, &mask_out) : GLCV_OK;
    if (st == GLCV_OK)
        st = run_vote(b, &b->raw, &b->mask[(b->total - 1) % 2], mask_out, 0, 0);
    if (st == GLCV_OK && dl >= 0) {
        glcv_engine_download_fence(b->engine, dl);
        note_download(b, dl, b->total - 1);
    }
    if (st == GLCV_OK) {
        glcv_engine_sync_writes(b->engine);
        glFlush();
        b->made = b->total;
    }
    glcv_engine_end(b->engine);
    return st;
}

/* In blocks: B and T into the state buffer in its quad layout (counters 0), or the values of one
 * stream's quads back. */
static glcv_status set_state_quads(glcv_bgsub *b, const uint16_t *bg, const uint16_t *th)
{
    size_t quads = set_quads(b), bytes = quads * (size_t)quad_values(b) * sizeof(uint16_t);
    uint16_t *tmp = malloc(bytes);
    if (!tmp)
        return GLCV_ERROR_OUT_OF_MEMORY;
    to_quads(b, bg, th, 0, quads, tmp);
    glcv_engine_begin(b->engine);
    glBindBuffer(GL_COPY_WRITE_BUFFER, b->state[b->state_cur].buffer);
    glBufferSubData(GL_COPY_WRITE_BUFFER, 0, (GLsizeiptr)bytes, tmp);
    glcv_status st = glcv_gl_check(&b->p.logger, "bgsub: setting the background");
    glcv_engine_end(b->engine);
    free(tmp);
    return st;
}

static glcv_status read_state_quads(glcv_bgsub *b, int stream, uint16_t *bg, uint16_t *th)
{
    size_t quads = set_quads(b) / (size_t)b->p.streams, per = (size_t)quad_values(b) * sizeof(uint16_t);
    uint16_t *tmp = malloc(quads * per);
    if (!tmp)
        return GLCV_ERROR_OUT_OF_MEMORY;
    glcv_engine_begin(b->engine);
    glcv_engine_sync_writes(b->engine);
    glBindBuffer(GL_COPY_READ_BUFFER, b->state[b->state_cur].buffer);
    glGetBufferSubData(GL_COPY_READ_BUFFER, (GLintptr)(quads * per * (size_t)stream), (GLsizeiptr)(quads * per), tmp);
    glcv_status st = glcv_gl_check(&b->p.logger, "bgsub: reading the state");
    glcv_engine_end(b->engine);
    if (st == GLCV_OK)
        from_quads(b, tmp, quads, bg, th);
    free(tmp);
    return st;
}

glcv_status glcv_bgsub_gl_set_state(glcv_bgsub *b, const uint16_t *bg, const uint16_t *th)
{
    if (b->blocks)
        return set_state_quads(b, bg, th);
    /* Host values are `lanes` per pixel; the arrays hold 1 (R16UI), or 4 per texel (RGBA16UI:
     * colour with a fourth value, or four packed gray pixels, which are the same values in the
     * same order). The counters start at 0. */
    int padded = b->lanes == 3;
    size_t px = (size_t)b->p.width * (size_t)b->p.height * (size_t)b->p.streams;
    uint16_t *tmp = NULL;
    if (padded) {
        tmp = malloc(px * 4 * sizeof *tmp);
        if (!tmp)
            return GLCV_ERROR_OUT_OF_MEMORY;
    }
    glcv_engine_begin(b->engine);
    GLenum fmt = b->lanes == 1 && !b->packed ? GL_RED_INTEGER : GL_RGBA_INTEGER;
    glcv_status st = glcv_engine_clear(b->engine, &b->count[b->state_cur]);
    for (int k = 0; k < 2 && st == GLCV_OK; k++) {
        const uint16_t *src = k ? th : bg;
        const glcv_tex *t = k ? &b->th[b->state_cur] : &b->bg[b->state_cur];
        if (padded) {
            for (size_t i = 0; i < px; i++) {
                memcpy(tmp + 4 * i, src + 3 * i, 3 * sizeof *tmp);
                tmp[4 * i + 3] = 0;
            }
            src = tmp;
        }
        glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
        glActiveTexture(GL_TEXTURE0);
        glBindTexture(GL_TEXTURE_2D_ARRAY, t->id);
        glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, 0, 0, t->width, t->height, t->layers, fmt, GL_UNSIGNED_SHORT, src);
        st = glcv_gl_check(&b->p.logger, "bgsub: setting the background");
    }
    glcv_engine_end(b->engine);
    free(tmp);
    return st;
}

glcv_status glcv_bgsub_gl_read_state(glcv_bgsub *b, int stream, uint16_t *bg, uint16_t *th)
{
    if (b->blocks)
        return read_state_quads(b, stream, bg, th);
    size_t px = (size_t)b->p.width * (size_t)b->p.height;
    size_t per_texel = b->lanes == 1 && !b->packed ? 1 : 4;
    size_t layer_values = (size_t)texel_width(b) * (size_t)b->p.height * per_texel;
    uint16_t *all = malloc(layer_values * (size_t)b->p.streams * sizeof *all);
    if (!all)
        return GLCV_ERROR_OUT_OF_MEMORY;
    glcv_engine_begin(b->engine);
    glcv_engine_sync_writes(b->engine);
    GLenum fmt = per_texel == 1 ? GL_RED_INTEGER : GL_RGBA_INTEGER;
    glcv_status st = GLCV_OK;
    for (int k = 0; k < 2 && st == GLCV_OK; k++) {
        uint16_t *dst = k ? th : bg;
        if (!dst)
            continue;
        const glcv_tex *t = k ? &b->th[b->state_cur] : &b->bg[b->state_cur];
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        glActiveTexture(GL_TEXTURE0);
        glBindTexture(GL_TEXTURE_2D_ARRAY, t->id);
        glGetTexImage(GL_TEXTURE_2D_ARRAY, 0, fmt, GL_UNSIGNED_SHORT, all);
        st = glcv_gl_check(&b->p.logger, "bgsub: reading the state");
        const uint16_t *src = all + layer_values * (size_t)stream;
        if (b->lanes == 3) {
            for (size_t i = 0; i < px; i++)
                memcpy(dst + 3 * i, src + 4 * i, 3 * sizeof *dst);
        } else {
            memcpy(dst, src, px * sizeof *dst);
        }
    }
    glcv_engine_end(b->engine);
    free(all);
    return st;
}

static void note_download(glcv_bgsub *b, int slot, long set)
{
    int i = b->dl_next;
    b->dl_next = (i + 1) % GLCV_ENGINE_DOWNLOAD_SLOTS;
    b->dl_slot[i] = slot;
    b->dl_set[i] = set;
}

glcv_status glcv_bgsub_gl_masks(glcv_bgsub *b, long set, const uint8_t **masks)
{
    glcv_engine_begin(b->engine);
    glcv_status st = set == b->total - 1 ? glcv_bgsub_gl_vote_newest(b) : GLCV_OK;
    int found = -1;
    for (int i = 0; i < GLCV_ENGINE_DOWNLOAD_SLOTS; i++)
        if (b->dl_set[i] == set)
            found = i;
    if (st != GLCV_OK) {
        /* the vote failed: nothing to read */
    } else if (found < 0 && set == b->total - 1) {
        /* Not downloaded yet: now (also the way without params.download). */
        int slot = 0;
        st = glcv_engine_download(b->engine, &b->mask[set % 2], b->packed ? GL_RGBA : GL_RED, GL_UNSIGNED_BYTE,
                                  (size_t)b->p.width * (size_t)b->p.height * (size_t)b->p.streams, &slot);
        if (st == GLCV_OK) {
            note_download(b, slot, set);
            found = (b->dl_next + GLCV_ENGINE_DOWNLOAD_SLOTS - 1) % GLCV_ENGINE_DOWNLOAD_SLOTS;
        }
    } else if (found < 0) {
        st = glcv_fail(&b->p.logger, GLCV_ERROR_STATE, "bgsub: the masks of that set are no longer kept");
    }
    if (st == GLCV_OK) {
        const void *ptr = NULL;
        st = glcv_engine_download_wait(b->engine, b->dl_slot[found], &ptr);
        *masks = ptr;
    }
    glcv_engine_end(b->engine);
    return st;
}
