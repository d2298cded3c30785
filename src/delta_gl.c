/* Frame-delta coding, the GL engines (shaders/delta.glsl): the steps of src/delta_internal.h.
 *
 * COMPUTE: the frame, the reference, the mask, the bitmap and the records are storage buffers. A
 * frame is uploaded by a buffer copy from the staging memory (in the stream's format straight
 * into `cur`, else into `in` and converted by a pass); the diff pass writes the bitmap and the
 * changed bytes of every work group of 256 bitmap words; one work group scans those counts into
 * offsets and the total k and chooses the layout as src/delta.c does; the records pass writes each
 * group's indices at its offset and its deltas (packed through shared memory) into a slot of its
 * own, and moves the reference on; an assemble pass, as many work groups as the payload needs
 * (read by the GPU from the scan's words: an indirect dispatch), writes the payload - the bitmap
 * and k deltas, or 4 k indices and k deltas - into the packet's memory, with k, the layout and the
 * payload's size where the header goes. All of it is one submission and one wait; the count step
 * does it, the records step checks that the encoder chose the same layout. Without GL 4.4 the
 * packet is assembled in the GPU's memory and read back in two steps (its size, then the bytes).
 *
 * FRAGMENT (GL 3.3): the same words in R32UI textures DELTA_WIDTH wide, and for the compaction a
 * HistoPyramid over the bitmap's bit counts with a fan-in of 4 (its levels in two atlases, odd and
 * even, so that no pass reads the texture it writes), 4 records a fragment, each found by a
 * descent from the top, and the reference in two textures written in turn. */
#include "delta_internal.h"

#include "core_internal.h"

#include <glcv/context.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIDTH 4096      /* words a row of the fragment engine's textures (DELTA_WIDTH) */
#define GROUP_WORDS 256 /* bitmap words of a compute work group (8192 bytes of frame) */
#define MAX_LEVELS 15   /* pyramid levels above the bitmap (4^15 bitmap words is enough) */

enum { STAGE_CONVERT = 1, STAGE_MASK, STAGE_DIFF, STAGE_ASSEMBLE, STAGE_REDUCE, STAGE_COMPACT, STAGE_UPDATE };
/* The words after the groups' counts (shaders/delta.glsl): k, the assemble pass's work groups (3
 * words), the layout, the payload's bytes, the groups done. */
enum { AFTER_K = 0, AFTER_GROUPS = 1, AFTER_DONE = 6, AFTER_WORDS = 7 };

struct glcv_delta_gl {
    int compute;
    size_t words;  /* frame words, rounded up to whole bitmap words (8 words) */
    size_t bwords; /* bitmap words: ceil(n / 32) */
    size_t in_bytes;
    /* both engines */
    glcv_tex cur, ref[2], in, mask, bitmap;
    int ref_cur;
    int masked;      /* the loaded frame has a mask */
    const uint8_t *host_frame; /* the loaded host frame when in the stream's format, else NULL */
    size_t host_stride;
    uint32_t count;  /* k of the last count */
    /* compute: the payload of the last count, assembled by the GPU (its layout and bytes) */
    glcv_delta_layout layout;
    uint32_t payload;
    glcv_tex counts, deltas, indices;
    glcv_tex staged;   /* the staging slot of a mapped frame, read by the passes in place of cur
                          (buffer only; 0 when the frame is in cur) */
    int staged_slot;
    /* compute with GL 4.4: the packets' memory (a header and a whole frame), persistently mapped
       for reading and writing; the GPU writes payloads into it, the host the header. Without GL
       4.4, `assembled` in the GPU's memory takes the GPU's packets (read back). */
    GLuint packet_buffer;
    glcv_tex assembled;
    uint8_t *packet_map;
    size_t packet_size;
    int groups;
    /* fragment */
    glcv_tex atlas[2], rec_deltas, rec_indices;
    int levels;                /* top level (>= 1) */
    int level_row[MAX_LEVELS + 1];
    int level_size[MAX_LEVELS + 1];
    int rows_rec;              /* rows of the records' textures */
};

static int rows_of(size_t words)
{
    return (int)((words + WIDTH - 1) / WIDTH);
}

/* ---- programs ----------------------------------------------------------------------------------- */

static glcv_status program(glcv_delta *d, int stage, const char *extra, const glcv_format *outs, int n_outs,
                           glcv_program **out)
{
    static const char *const files[] = {"delta.glsl"};
    char defines[512], key[128];
    int gray = d->p.format == GLCV_PIXEL_GRAY8;
    int bgr = d->p.format == GLCV_PIXEL_BGR8 || d->p.format == GLCV_PIXEL_BGRA8;
    snprintf(defines, sizeof defines, "#define DELTA_STAGE %d\n#define DELTA_BPP %d\n#define DELTA_WIDTH %d\n%s%s%s%s",
             stage, d->bpp, WIDTH, gray ? "#define DELTA_GRAY 1\n" : "", bgr ? "#define DELTA_BGR 1\n" : "",
             d->gl->compute ? "#define GLCV_TILED 1\n#define GLCV_LOCAL_Y 1\n" : "", extra);
    if (d->gl->compute)
        snprintf(defines + strlen(defines), sizeof defines - strlen(defines), "#define GLCV_LOCAL_X %d\n", GROUP_WORDS);
    snprintf(key, sizeof key, "delta %d %d %d %s", stage, (int)d->p.format, d->gl->compute, extra);
    for (char *c = key; *c; c++)
        if (*c == '\n')
            *c = ' ';
    return glcv_engine_program(d->engine, key, files, 1, defines, outs, n_outs, out);
}

/* A pass of `stage` (and its extra defines), sized for fragment mode over `rows` rows of words. */
static glcv_status make(glcv_delta *d, int stage, const char *extra, int rows, const glcv_format *outs, int n_outs,
                        glcv_pass *p)
{
    glcv_program *prog = NULL;
    glcv_status st = program(d, stage, extra, outs, n_outs, &prog);
    static const char *const labels[] = {"", "convert", "mask", "diff", "assemble", "pyramid", "compact", "update"};
    if (st == GLCV_OK)
        *p = glcv_pass_make(prog, labels[stage], WIDTH, rows > 0 ? rows : 1);
    return st;
}

static void common_uniforms(glcv_delta *d, glcv_pass *p)
{
    glcv_pass_add_uniform_i(p, "u_bytes", GLCV_U_1I, (int)d->n, 0);
    glcv_pass_add_uniform_i(p, "u_pixels", GLCV_U_1I, d->p.width * d->p.height, 0);
    glcv_pass_add_uniform_i(p, "u_width", GLCV_U_1I, d->p.width, 0);
    glcv_pass_add_uniform_i(p, "u_threshold", GLCV_U_1I, d->threshold, 0);
}

/* Compute: a grid of `groups` work groups (at most 65535 a row). */
static void grid(glcv_pass *p, long groups, int words)
{
    p->groups_x = (int)(groups < 65535 ? groups : 65535);
    p->groups_y = (int)((groups + p->groups_x - 1) / p->groups_x);
    glcv_pass_add_uniform_i(p, "u_words", GLCV_U_1I, words, 0);
}

/* Compute: the buffer the GPU assembles packets in. */
static GLuint packet_target(const struct glcv_delta_gl *g)
{
    return g->packet_buffer ? g->packet_buffer : g->assembled.buffer;
}

/* Compute: the storage the passes use, all of it bound (each program declares only what it uses,
 * binding 0..7 as in shaders/delta.glsl; binding 7 is the host frame, or the packet for the scan
 * and assemble passes). */
static void bind_storage(glcv_delta *d, glcv_pass *p, int packet)
{
    struct glcv_delta_gl *g = d->gl;
    const glcv_tex *all[7] = {g->staged.buffer ? &g->staged : &g->cur, &g->ref[0], &g->mask, &g->bitmap, &g->counts,
                              &g->deltas, &g->indices};
    for (int i = 0; i < 7; i++)
        glcv_pass_add_storage(p, i, all[i]->buffer);
    glcv_pass_add_storage(p, 7, packet ? packet_target(g) : g->in.buffer);
}

/* ---- create / destroy --------------------------------------------------------------------------- */

/* Unmaps and deletes the packets' memory (compute). */
static void release_packet(struct glcv_delta_gl *g)
{
    if (g->packet_buffer) {
        glBindBuffer(GL_COPY_WRITE_BUFFER, g->packet_buffer);
        if (g->packet_map)
            glUnmapBuffer(GL_COPY_WRITE_BUFFER);
        glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
        glDeleteBuffers(1, &g->packet_buffer);
    }
    g->packet_buffer = 0;
    g->packet_map = NULL;
    g->packet_size = 0;
}

/* Zeroes buffer `t` (compute). */
static glcv_status clear_words(glcv_delta *d, const glcv_tex *t)
{
    glBindBuffer(GL_COPY_WRITE_BUFFER, t->buffer);
    glClearBufferData(GL_COPY_WRITE_BUFFER, GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT, NULL);
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    return glcv_gl_check(&d->p.logger, "delta: clear");
}

/* The packets' memory (compute, GL 4.4): `bytes`, persistently mapped. */
static glcv_status create_packet(glcv_delta *d, size_t bytes)
{
    struct glcv_delta_gl *g = d->gl;
    const GLbitfield flags = GL_MAP_READ_BIT | GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
    glGenBuffers(1, &g->packet_buffer);
    glBindBuffer(GL_COPY_WRITE_BUFFER, g->packet_buffer);
    glBufferStorage(GL_COPY_WRITE_BUFFER, (GLsizeiptr)bytes, NULL, flags | GL_CLIENT_STORAGE_BIT);
    g->packet_map = glMapBufferRange(GL_COPY_WRITE_BUFFER, 0, (GLsizeiptr)bytes, flags);
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    glcv_status st = glcv_gl_check(&d->p.logger, "delta: packet memory");
    if (st == GLCV_OK && !g->packet_map)
        st = glcv_fail(&d->p.logger, GLCV_ERROR_GL, "delta: the packet memory could not be mapped");
    if (st == GLCV_OK)
        g->packet_size = bytes;
    else
        release_packet(g);
    return st;
}

static glcv_status words_tex(glcv_delta *d, glcv_tex *t, size_t words, glcv_format f)
{
    if (d->gl->compute)
        return glcv_engine_storage_create(d->engine, t, words * 4);
    return glcv_engine_tex_create(d->engine, t, WIDTH, rows_of(words), f);
}

/* The pyramid's levels above the bitmap: sizes and rows in their atlas (odd levels in A, even in B). */
static glcv_status plan_levels(glcv_delta *d)
{
    struct glcv_delta_gl *g = d->gl;
    size_t below = g->bwords;
    int rows[2] = {0, 0}, l = 0;
    do {
        if (++l > MAX_LEVELS)
            return glcv_fail(&d->p.logger, GLCV_ERROR_UNSUPPORTED, "delta: the frame is too large for the pyramid");
        size_t size = (below + 3) / 4;
        g->level_size[l] = (int)size;
        g->level_row[l] = rows[l & 1];
        rows[l & 1] += rows_of(size);
        below = size;
    } while (below > 1);
    g->levels = l;
    glcv_status st = glcv_engine_tex_create(d->engine, &g->atlas[0], WIDTH, rows[1] > 0 ? rows[1] : 1,
                                            GLCV_FORMAT_R32UI);
    if (st == GLCV_OK)
        st = glcv_engine_tex_create(d->engine, &g->atlas[1], WIDTH, rows[0] > 0 ? rows[0] : 1, GLCV_FORMAT_R32UI);
    return st;
}

static glcv_status create_objects(glcv_delta *d)
{
    struct glcv_delta_gl *g = d->gl;
    size_t pixels = (size_t)d->p.width * (size_t)d->p.height;
    g->bwords = (d->n + 31) / 32;
    g->words = g->bwords * 8;
    g->in_bytes = pixels * 4;
    glcv_status st = words_tex(d, &g->cur, g->words, GLCV_FORMAT_R32UI);
    for (int i = 0; i < (g->compute ? 1 : 2) && st == GLCV_OK; i++) /* fragment: written in turn */
        st = words_tex(d, &g->ref[i], g->words, GLCV_FORMAT_R32UI);
    if (st == GLCV_OK)
        st = words_tex(d, &g->in, (g->in_bytes + 3) / 4, GLCV_FORMAT_R32UI);
    if (st == GLCV_OK)
        st = words_tex(d, &g->mask, (pixels + 3) / 4, GLCV_FORMAT_R32UI);
    if (st == GLCV_OK)
        st = words_tex(d, &g->bitmap, g->bwords, GLCV_FORMAT_R32UI);
    if (st != GLCV_OK)
        return st;
    if (g->compute) {
        g->groups = (int)((g->bwords + GROUP_WORDS - 1) / GROUP_WORDS);
        size_t packet = GLCV_DELTA_HEADER_BYTES + ((d->n + 3) & ~(size_t)3);
        if ((st = glcv_engine_storage_create(d->engine, &g->counts, ((size_t)g->groups + AFTER_WORDS) * 4)) == GLCV_OK &&
            (st = clear_words(d, &g->counts)) == GLCV_OK && /* no group done */
            (st = glcv_engine_storage_create(d->engine, &g->deltas, (size_t)g->groups * GROUP_WORDS * 32)) == GLCV_OK &&
            (st = glcv_engine_storage_create(d->engine, &g->indices, (size_t)g->groups * GROUP_WORDS * 32 * 4)) ==
                GLCV_OK)
            st = epoxy_gl_version() >= 44 ? create_packet(d, packet)
                                          : glcv_engine_storage_create(d->engine, &g->assembled, packet);
        return st;
    }
    /* records: 4 a texel */
    g->rows_rec = rows_of((d->n + 3) / 4);
    if ((st = glcv_engine_tex_create(d->engine, &g->rec_deltas, WIDTH, g->rows_rec, GLCV_FORMAT_R32UI)) == GLCV_OK &&
        (st = glcv_engine_tex_create(d->engine, &g->rec_indices, WIDTH, g->rows_rec, GLCV_FORMAT_RGBA32UI)) == GLCV_OK)
        st = plan_levels(d);
    return st;
}

glcv_status glcv_delta_gl_create(glcv_delta *d)
{
    glcv_status st = glcv_engine_create(d->p.engine, d->p.timing, &d->p.logger, &d->engine);
    if (st != GLCV_OK)
        return st;
    d->p.engine = glcv_engine_mode_of(d->engine);
    d->gl = calloc(1, sizeof *d->gl);
    if (!d->gl)
        return GLCV_ERROR_OUT_OF_MEMORY;
    d->gl->compute = d->p.engine == GLCV_ENGINE_COMPUTE;
    if (!d->gl->compute) {
        GLint max = 0;
        glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max);
        if ((size_t)rows_of(d->n) > (size_t)max)
            return glcv_fail(&d->p.logger, GLCV_ERROR_UNSUPPORTED,
                             "delta: a frame of %zu bytes needs %d rows of %d words, above GL_MAX_TEXTURE_SIZE %d",
                             d->n, rows_of(d->n), WIDTH, (int)max);
    }
    glcv_engine_begin(d->engine);
    st = create_objects(d);
    glcv_engine_end(d->engine);
    return st;
}

void glcv_delta_gl_destroy(glcv_delta *d)
{
    struct glcv_delta_gl *g = d->gl;
    if (g && d->engine && glcv_engine_context_current(d->engine)) {
        glcv_engine_begin(d->engine);
        glcv_tex *all[] = {&g->cur,      &g->ref[0],      &g->ref[1],       &g->in,        &g->mask,
                           &g->bitmap,   &g->counts,      &g->deltas,       &g->indices,   &g->assembled,
                           &g->atlas[0], &g->atlas[1],    &g->rec_deltas,   &g->rec_indices};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
            glcv_engine_tex_destroy(d->engine, all[i]);
        release_packet(g);
        glcv_engine_end(d->engine);
    }
    free(g);
    d->gl = NULL;
    glcv_engine_destroy(&d->engine);
}

/* ---- the steps ---------------------------------------------------------------------------------- */

/* Host bytes (an image's rows, tightly packed) into engine words `t`, through the staging memory. */
static glcv_status upload_image(glcv_delta *d, const glcv_image *im, const glcv_tex *t)
{
    size_t row = (size_t)im->width * (size_t)glcv_pixel_format_size(im->format);
    size_t stride = im->stride ? im->stride : row, bytes = row * (size_t)im->height;
    size_t staged = d->gl->compute ? (bytes + 3) & ~(size_t)3 : (size_t)t->width * (size_t)t->height * 4;
    void *ptr = NULL;
    int slot = 0;
    glcv_status st = glcv_engine_stage(d->engine, staged, &ptr, &slot);
    if (st != GLCV_OK)
        return st;
    if (stride == row) {
        memcpy(ptr, im->data, bytes);
    } else {
        for (int y = 0; y < im->height; y++)
            memcpy((uint8_t *)ptr + row * (size_t)y, im->data + stride * (size_t)y, row);
    }
    memset((uint8_t *)ptr + bytes, 0, staged - bytes > 16 ? 16 : staged - bytes); /* a whole last word */
    if (d->gl->compute)
        return glcv_engine_copy_staged(d->engine, slot, t, staged);
    return glcv_engine_upload_staged_texels(d->engine, t, slot, GL_RED_INTEGER, GL_UNSIGNED_INT);
}

/* A convert pass (the frame into the stream's format) or a mask pass (a mask texture into a byte
 * per pixel): `tex` is the caller's texture, 0 for the host frame in `in`. */
static glcv_status run_word_pass(glcv_delta *d, int stage, unsigned int tex, glcv_pixel_format in_format)
{
    struct glcv_delta_gl *g = d->gl;
    char extra[96] = "";
    if (stage == STAGE_CONVERT && tex)
        snprintf(extra, sizeof extra, "#define DELTA_IN_TEXTURE 1\n");
    else if (stage == STAGE_CONVERT)
        snprintf(extra, sizeof extra, "#define DELTA_IN_BPP %d\n%s", glcv_pixel_format_size(in_format),
                 in_format == GLCV_PIXEL_BGR8 || in_format == GLCV_PIXEL_BGRA8 ? "#define DELTA_IN_BGR 1\n" : "");
    const glcv_tex *out = stage == STAGE_CONVERT ? &g->cur : &g->mask;
    size_t words = stage == STAGE_CONVERT ? g->words : ((size_t)d->p.width * (size_t)d->p.height + 3) / 4;
    const glcv_format f = GLCV_FORMAT_R32UI;
    glcv_pass p;
    glcv_status st = make(d, stage, extra, rows_of(words), &f, g->compute ? 0 : 1, &p);
    if (st != GLCV_OK)
        return st;
    if (tex)
        glcv_pass_add_input(&p, stage == STAGE_CONVERT ? "u_frame" : "u_mask_frame", tex, GLCV_SAMPLE_NEAREST);
    else if (!g->compute)
        glcv_pass_add_input_tex(&p, "u_in", &g->in, GLCV_SAMPLE_NEAREST);
    common_uniforms(d, &p);
    if (g->compute) {
        bind_storage(d, &p, 0);
        grid(&p, (long)((words + GROUP_WORDS - 1) / GROUP_WORDS), (int)words);
    } else {
        glcv_pass_add_output(&p, out);
    }
    return glcv_engine_run(d->engine, &p);
}

/* The words of the loaded frame: its staging slot (a mapped frame, compute) or cur. */
static const glcv_tex *frame_words(const struct glcv_delta_gl *g)
{
    return g->staged.buffer ? &g->staged : &g->cur;
}

/* After the frame's last pass: the staging slot of a mapped frame may be written again. */
static void release_staged(glcv_delta *d)
{
    struct glcv_delta_gl *g = d->gl;
    if (g->staged.buffer)
        glcv_engine_stage_fence(d->engine, g->staged_slot);
    g->staged = (glcv_tex){0};
}

/* Staging memory for a whole texture or buffer of frame words (fragment: the cur texture's rows). */
static size_t staged_frame_bytes(const glcv_delta *d)
{
    return d->gl->compute ? (d->n + 3) & ~(size_t)3 : (size_t)WIDTH * (size_t)rows_of(d->gl->words) * 4;
}

glcv_status glcv_delta_gl_map(glcv_delta *d, uint8_t **ptr, int *slot)
{
    void *p = NULL;
    glcv_engine_begin(d->engine);
    glcv_status st = glcv_engine_stage(d->engine, staged_frame_bytes(d), &p, slot);
    glcv_engine_end(d->engine);
    *ptr = p;
    return st;
}

glcv_status glcv_delta_gl_load(glcv_delta *d, const glcv_image *frame, unsigned int frame_tex, const glcv_image *mask,
                               unsigned int mask_tex)
{
    struct glcv_delta_gl *g = d->gl;
    glcv_engine_begin(d->engine);
    glcv_engine_frame_begin(d->engine);
    glcv_status st = GLCV_OK;
    g->host_frame = NULL;
    g->masked = mask || mask_tex;
    if (frame_tex || mask_tex) {
        if (frame_tex)
            st = glcv_engine_check_input(d->engine, frame_tex, d->p.width, d->p.height);
        if (st == GLCV_OK && mask_tex)
            st = glcv_engine_check_input(d->engine, mask_tex, d->p.width, d->p.height);
    }
    g->staged = (glcv_tex){0};
    GLuint staged = frame && frame->data == d->mapped && g->compute ? glcv_engine_stage_buffer(d->engine, d->mapped_slot)
                                                                    : 0;
    if (st == GLCV_OK && staged) {
        /* compute: the passes read the frame where map_frame's caller wrote it (pinned memory,
         * persistently mapped), with no copy */
        g->staged = (glcv_tex){.buffer = staged, .bytes = staged_frame_bytes(d)};
        g->staged_slot = d->mapped_slot;
    } else if (st == GLCV_OK && frame && frame->data == d->mapped) {
        /* the frame is in the staging slot of map_frame: one copy on the GPU's side */
        st = g->compute ? glcv_engine_copy_staged(d->engine, d->mapped_slot, &g->cur, staged_frame_bytes(d))
                        : glcv_engine_upload_staged_texels(d->engine, &g->cur, d->mapped_slot, GL_RED_INTEGER,
                                                           GL_UNSIGNED_INT);
    } else if (st == GLCV_OK && frame) {
        if (frame->format == d->p.format) {
            g->host_frame = frame->data;
            g->host_stride = frame->stride ? frame->stride : (size_t)d->p.width * (size_t)d->bpp;
            st = upload_image(d, frame, &g->cur);
        } else if ((st = upload_image(d, frame, &g->in)) == GLCV_OK) {
            st = run_word_pass(d, STAGE_CONVERT, 0, frame->format);
        }
    } else if (st == GLCV_OK) {
        st = run_word_pass(d, STAGE_CONVERT, frame_tex, GLCV_PIXEL_DEFAULT);
    }
    if (st == GLCV_OK && mask)
        st = upload_image(d, mask, &g->mask);
    else if (st == GLCV_OK && mask_tex)
        st = run_word_pass(d, STAGE_MASK, mask_tex, GLCV_PIXEL_DEFAULT);
    if (st != GLCV_OK) {
        release_staged(d);
        glcv_engine_frame_end(d->engine);
    }
    glcv_engine_end(d->engine);
    return st;
}

/* The levels' first rows as the shader's u_rows (16 ints). */
static void rows_uniform(const struct glcv_delta_gl *g, int rows[16])
{
    memset(rows, 0, 16 * sizeof *rows);
    for (int l = 1; l <= g->levels; l++)
        rows[l] = g->level_row[l];
}

/* Fragment mode: reads width x height texels of texture `id` (rows of row_bytes) into `dst`.
 * Mesa's llvmpipe (22.3) was seen reading a texture that a pass had just rendered as it was before
 * the pass (a keyframe's frame, after passes with timer queries, in a process that also read
 * textures through framebuffers of its own), now and then; after glFinish, never. The read waits
 * for the GPU anyway. */
static glcv_status read_texture(glcv_delta *d, GLuint id, int width, int height, GLenum format, void *dst,
                                size_t row_bytes)
{
    glFinish();
    return glcv_engine_read(d->engine, id, width, height, format, GL_UNSIGNED_INT, dst, row_bytes);
}

static int in_packet(const struct glcv_delta_gl *g, const uint8_t *p, size_t bytes)
{
    return g->packet_map && p >= g->packet_map && bytes <= g->packet_size &&
           (size_t)(p - g->packet_map) <= g->packet_size - bytes;
}

/* A part of a read-back: `bytes` bytes at `offset` of the buffer of `src`, into `out`. */
typedef struct part {
    const glcv_tex *src;
    size_t offset, bytes;
    uint8_t *out;
} part;

/* Compute mode: reads the parts with GPU copies - into the packet's own memory where they lie
 * there (no copy on the host), else into a persistently mapped download buffer - then one fence
 * and one wait. */
static glcv_status fetch(glcv_delta *d, const part *parts, int n)
{
    struct glcv_delta_gl *g = d->gl;
    size_t total = 0;
    int direct = 1;
    for (int i = 0; i < n; i++) {
        total += parts[i].bytes;
        direct = direct && in_packet(g, parts[i].out, parts[i].bytes);
    }
    if (total == 0)
        return GLCV_OK;
    glcv_engine_sync_writes(d->engine);
    int slot = -1;
    glcv_status st = direct ? GLCV_OK : glcv_engine_download_reserve(d->engine, total, &slot);
    if (st != GLCV_OK)
        return st;
    glBindBuffer(GL_COPY_WRITE_BUFFER, direct ? g->packet_buffer : glcv_engine_download_buffer(d->engine, slot));
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        if (parts[i].bytes) {
            glBindBuffer(GL_COPY_READ_BUFFER, parts[i].src->buffer);
            glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, (GLintptr)parts[i].offset,
                                (GLintptr)(direct ? (size_t)(parts[i].out - g->packet_map) : at),
                                (GLsizeiptr)parts[i].bytes);
        }
        at += parts[i].bytes;
    }
    glBindBuffer(GL_COPY_READ_BUFFER, 0);
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    if (direct) {
        GLsync fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
        glcv_engine_wait_fence(&fence);
        return glcv_gl_check(&d->p.logger, "delta: read-back");
    }
    glcv_engine_download_fence(d->engine, slot);
    const void *ptr = NULL;
    if ((st = glcv_engine_download_wait(d->engine, slot, &ptr)) != GLCV_OK)
        return st;
    at = 0;
    for (int i = 0; i < n; i++) {
        memcpy(parts[i].out, (const uint8_t *)ptr + at, parts[i].bytes);
        at += parts[i].bytes;
    }
    return GLCV_OK;
}

/* Reads `bytes` bytes of engine words `t` (from its start) into `out`. */
static glcv_status read_words(glcv_delta *d, const glcv_tex *t, size_t bytes, uint8_t *out)
{
    if (bytes == 0)
        return GLCV_OK;
    if (d->gl->compute)
        return fetch(d, &(part){t, 0, bytes, out}, 1);
    size_t texel = t->format == GLCV_FORMAT_RGBA32UI ? 16 : 4, row = (size_t)WIDTH * texel;
    int rows = (int)((bytes + row - 1) / row);
    uint8_t *tmp = malloc(row * (size_t)rows);
    if (!tmp)
        return GLCV_ERROR_OUT_OF_MEMORY;
    glcv_status st = read_texture(d, t->id, WIDTH, rows, texel == 16 ? GL_RGBA_INTEGER : GL_RED_INTEGER, tmp, row);
    if (st == GLCV_OK)
        memcpy(out, tmp, bytes);
    free(tmp);
    return st;
}

/* Compute, after the load: the diff pass (the bitmap, each group's records in its slot, the
 * reference moved on; its last group the offsets, k, the layout, the payload's size) and the
 * assemble pass (the payload in the packet, as many work groups as it needs: read by the GPU from
 * the diff's words); then one wait, and k, the layout and the payload's size read where the header
 * will be. */
static glcv_status diff_and_assemble(glcv_delta *d, uint32_t *k)
{
    struct glcv_delta_gl *g = d->gl;
    glcv_pass p;
    glcv_status st = make(d, STAGE_DIFF, g->masked ? "#define DELTA_MASK 1\n" : "", 1, NULL, 0, &p);
    if (st == GLCV_OK) {
        bind_storage(d, &p, 1);
        common_uniforms(d, &p);
        grid(&p, g->groups, (int)g->bwords);
        glcv_pass_add_uniform_i(&p, "u_groups", GLCV_U_1I, g->groups, 0);
        glcv_pass_add_uniform_i(&p, "u_layout", GLCV_U_1I, d->p.layout, 0);
        st = glcv_engine_run(d->engine, &p);
    }
    if (st == GLCV_OK && (st = make(d, STAGE_ASSEMBLE, "", 1, NULL, 0, &p)) == GLCV_OK) {
        bind_storage(d, &p, 1);
        common_uniforms(d, &p);
        glcv_pass_add_uniform_i(&p, "u_groups", GLCV_U_1I, g->groups, 0);
        p.indirect = g->counts.buffer;
        p.indirect_offset = ((size_t)g->groups + AFTER_GROUPS) * 4;
        st = glcv_engine_run(d->engine, &p);
    }
    uint32_t result[3] = {0, 0, 0}; /* k, layout, payload bytes */
    if (st == GLCV_OK && g->packet_map) {
        glMemoryBarrier(GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT); /* the shaders' writes, for the host */
        GLsync fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
        glcv_engine_wait_fence(&fence);
        memcpy(result, g->packet_map, sizeof result);
        st = glcv_gl_check(&d->p.logger, "delta: assemble");
    } else if (st == GLCV_OK) {
        st = fetch(d, &(part){&g->assembled, 0, sizeof result, (uint8_t *)result}, 1);
    }
    if (st != GLCV_OK)
        return st;
    glcv_delta_layout layout = (glcv_delta_layout)result[1];
    size_t want = layout == GLCV_DELTA_RAW ? 0 : glcv_delta_layout_bytes(layout, d->n, result[0]);
    if (layout < GLCV_DELTA_RAW || layout > GLCV_DELTA_BITMAP || result[2] != want)
        return glcv_fail(&d->p.logger, GLCV_ERROR_GL, "delta: the GPU assembled %u bytes in layout %u for %u records",
                         result[2], result[1], result[0]);
    g->layout = layout;
    g->payload = result[2];
    *k = result[0];
    return GLCV_OK;
}

glcv_status glcv_delta_gl_count(glcv_delta *d, uint32_t *k)
{
    struct glcv_delta_gl *g = d->gl;
    glcv_engine_begin(d->engine);
    const glcv_format f = GLCV_FORMAT_R32UI;
    uint32_t total = 0;
    glcv_status st = GLCV_OK;
    if (g->compute) {
        st = diff_and_assemble(d, &total);
    } else {
        glcv_pass p;
        if ((st = make(d, STAGE_DIFF, g->masked ? "#define DELTA_MASK 1\n" : "", rows_of(g->bwords), &f, 1, &p)) ==
            GLCV_OK) {
            common_uniforms(d, &p);
            glcv_pass_add_input_tex(&p, "u_cur", &g->cur, GLCV_SAMPLE_NEAREST);
            glcv_pass_add_input_tex(&p, "u_ref", &g->ref[g->ref_cur], GLCV_SAMPLE_NEAREST);
            glcv_pass_add_input_tex(&p, "u_mask", &g->mask, GLCV_SAMPLE_NEAREST);
            glcv_pass_add_output(&p, &g->bitmap);
            st = glcv_engine_run(d->engine, &p);
        }
        /* the pyramid, level by level */
        int rows[16];
        rows_uniform(g, rows);
        for (int l = 1; l <= g->levels && st == GLCV_OK; l++) {
            glcv_pass r;
            if ((st = make(d, STAGE_REDUCE, "", rows_of((size_t)g->level_size[l]), &f, 1, &r)) != GLCV_OK)
                break;
            r.y = g->level_row[l];
            glcv_pass_add_input_tex(&r, "u_bitmap", &g->bitmap, GLCV_SAMPLE_NEAREST);
            if (l >= 2)
                glcv_pass_add_input_tex(&r, (l - 1) & 1 ? "u_atlas_a" : "u_atlas_b", &g->atlas[(l - 1) & 1 ? 0 : 1],
                                        GLCV_SAMPLE_NEAREST);
            common_uniforms(d, &r);
            glcv_pass_add_uniform_i(&r, "u_level", GLCV_U_1I, l, 0);
            glcv_pass_add_uniform_i(&r, "u_below", GLCV_U_1I, l == 1 ? (int)g->bwords : g->level_size[l - 1], 0);
            glcv_pass_add_uniform_4iv(&r, "u_rows", rows, 4);
            glcv_pass_add_output(&r, &g->atlas[l & 1 ? 0 : 1]);
            st = glcv_engine_run(d->engine, &r);
        }
        int top = g->levels, row = g->level_row[top];
        uint32_t *column = st == GLCV_OK ? malloc(((size_t)row + 1) * 4) : NULL;
        if (st == GLCV_OK && !column)
            st = GLCV_ERROR_OUT_OF_MEMORY;
        if (st == GLCV_OK)
            st = read_texture(d, g->atlas[top & 1 ? 0 : 1].id, 1, row + 1, GL_RED_INTEGER, column, 4);
        if (st == GLCV_OK)
            total = column[row];
        free(column);
    }
    if (st == GLCV_OK && total > d->n)
        st = glcv_fail(&d->p.logger, GLCV_ERROR_GL, "delta: the GPU counted %u changed bytes of %zu", total, d->n);
    if (st == GLCV_OK) {
        g->count = *k = total;
    } else {
        release_staged(d);
        glcv_engine_frame_end(d->engine);
    }
    glcv_engine_end(d->engine);
    return st;
}

/* Fragment: the next reference (the changed bytes, or every byte), written into the other texture. */
static glcv_status update_reference(glcv_delta *d, int all)
{
    struct glcv_delta_gl *g = d->gl;
    const glcv_format f = GLCV_FORMAT_R32UI;
    glcv_pass p;
    glcv_status st = make(d, STAGE_UPDATE, "", rows_of(g->words), &f, 1, &p);
    if (st != GLCV_OK)
        return st;
    glcv_pass_add_input_tex(&p, "u_cur", &g->cur, GLCV_SAMPLE_NEAREST);
    glcv_pass_add_input_tex(&p, "u_ref", &g->ref[g->ref_cur], GLCV_SAMPLE_NEAREST);
    glcv_pass_add_input_tex(&p, "u_bitmap", &g->bitmap, GLCV_SAMPLE_NEAREST);
    common_uniforms(d, &p);
    glcv_pass_add_uniform_i(&p, "u_all", GLCV_U_1I, all, 0);
    glcv_pass_add_output(&p, &g->ref[1 - g->ref_cur]);
    if ((st = glcv_engine_run(d->engine, &p)) == GLCV_OK)
        g->ref_cur = 1 - g->ref_cur;
    return st;
}

glcv_status glcv_delta_gl_records(glcv_delta *d, glcv_delta_layout layout, uint32_t k, uint8_t *out)
{
    struct glcv_delta_gl *g = d->gl;
    if (k != g->count)
        return glcv_fail(&d->p.logger, GLCV_ERROR_STATE, "delta: records of %u bytes after a count of %u", k, g->count);
    int indices = layout == GLCV_DELTA_INDICES;
    size_t lead = indices ? (size_t)k * 4 : (d->n + 7) / 8; /* the payload before the deltas */
    glcv_engine_begin(d->engine);
    glcv_status st = GLCV_OK;
    if (g->compute) {
        /* the count assembled the payload already */
        size_t bytes = glcv_delta_layout_bytes(layout, d->n, k);
        if (layout != g->layout || bytes != g->payload)
            st = glcv_fail(&d->p.logger, GLCV_ERROR_STATE, "delta: records in layout %d, the GPU assembled layout %d",
                           (int)layout, (int)g->layout);
        else if (!g->packet_map)
            st = fetch(d, &(part){&g->assembled, GLCV_DELTA_HEADER_BYTES, bytes, out}, 1);
        else if (out != g->packet_map + GLCV_DELTA_HEADER_BYTES)
            memcpy(out, g->packet_map + GLCV_DELTA_HEADER_BYTES, bytes);
        release_staged(d);
    } else {
        if (k > 0) {
            const glcv_format f[2] = {GLCV_FORMAT_R32UI, GLCV_FORMAT_RGBA32UI};
            int rows[16];
            rows_uniform(g, rows);
            glcv_pass p;
            if ((st = make(d, STAGE_COMPACT, "", rows_of(((size_t)k + 3) / 4), f, 2, &p)) == GLCV_OK) {
                glcv_pass_add_input_tex(&p, "u_cur", &g->cur, GLCV_SAMPLE_NEAREST);
                glcv_pass_add_input_tex(&p, "u_ref", &g->ref[g->ref_cur], GLCV_SAMPLE_NEAREST);
                glcv_pass_add_input_tex(&p, "u_bitmap", &g->bitmap, GLCV_SAMPLE_NEAREST);
                glcv_pass_add_input_tex(&p, "u_atlas_a", &g->atlas[0], GLCV_SAMPLE_NEAREST);
                glcv_pass_add_input_tex(&p, "u_atlas_b", &g->atlas[1], GLCV_SAMPLE_NEAREST);
                common_uniforms(d, &p);
                glcv_pass_add_uniform_i(&p, "u_levels", GLCV_U_1I, g->levels, 0);
                glcv_pass_add_uniform_i(&p, "u_count", GLCV_U_1I, (int)k, 0);
                glcv_pass_add_uniform_4iv(&p, "u_rows", rows, 4);
                glcv_pass_add_output(&p, &g->rec_deltas);
                glcv_pass_add_output(&p, &g->rec_indices);
                st = glcv_engine_run(d->engine, &p);
            }
        }
        if (st == GLCV_OK && k > 0)
            st = update_reference(d, 0);
        if (st == GLCV_OK)
            st = read_words(d, indices ? &g->rec_indices : &g->bitmap, lead, out);
        if (st == GLCV_OK)
            st = read_words(d, &g->rec_deltas, k, out + lead);
    }
    glcv_engine_frame_end(d->engine);
    glcv_engine_end(d->engine);
    return st;
}

/* The loaded frame's bytes: from the caller's memory when it is in the stream's format. */
static glcv_status frame_bytes(glcv_delta *d, uint8_t *out)
{
    struct glcv_delta_gl *g = d->gl;
    if (!g->host_frame)
        return read_words(d, frame_words(g), d->n, out);
    size_t row = (size_t)d->p.width * (size_t)d->bpp;
    for (int y = 0; y < d->p.height; y++)
        memcpy(out + row * (size_t)y, g->host_frame + g->host_stride * (size_t)y, row);
    return GLCV_OK;
}

glcv_status glcv_delta_gl_key(glcv_delta *d, uint8_t *out)
{
    struct glcv_delta_gl *g = d->gl;
    glcv_engine_begin(d->engine);
    glcv_status st = GLCV_OK;
    if (g->compute) {
        glcv_engine_sync_writes(d->engine); /* the convert pass's words, for the copy and the read */
        glBindBuffer(GL_COPY_READ_BUFFER, frame_words(g)->buffer);
        glBindBuffer(GL_COPY_WRITE_BUFFER, g->ref[0].buffer);
        glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, (GLsizeiptr)frame_words(g)->bytes);
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
        glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
        st = glcv_gl_check(&d->p.logger, "delta: keyframe");
    } else {
        st = update_reference(d, 1);
    }
    if (st == GLCV_OK)
        st = frame_bytes(d, out);
    g->host_frame = NULL; /* the caller's memory is not ours after the call */
    release_staged(d);
    glcv_engine_frame_end(d->engine);
    glcv_engine_end(d->engine);
    return st;
}

glcv_status glcv_delta_gl_packet(glcv_delta *d, size_t bytes, uint8_t **ptr)
{
    struct glcv_delta_gl *g = d->gl;
    *ptr = g->packet_map && bytes <= g->packet_size ? g->packet_map : NULL; /* else the host's, filled by reads */
    return GLCV_OK;
}

glcv_status glcv_delta_gl_reference(glcv_delta *d, uint8_t *out)
{
    glcv_engine_begin(d->engine);
    glcv_engine_sync_writes(d->engine);
    glcv_status st = read_words(d, &d->gl->ref[d->gl->ref_cur], d->n, out);
    glcv_engine_end(d->engine);
    return st;
}
