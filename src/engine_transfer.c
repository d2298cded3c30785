/* The GL engine's transfers: the pinned staging ring for uploads and buffer copies, read-backs
 * through a pixel-pack buffer, and the ring of overlapped downloads. See engine.h. */
#include "engine_internal.h"

#include "core_internal.h"
#include "gl.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

GLenum glcv_engine_pixel_gl_format(glcv_pixel_format f)
{
    switch (f) {
    case GLCV_PIXEL_RGB8: return GL_RGB;
    case GLCV_PIXEL_RGBA8: return GL_RGBA;
    case GLCV_PIXEL_BGR8: return GL_BGR;
    case GLCV_PIXEL_BGRA8: return GL_BGRA;
    default: return 0;
    }
}

/* Waits for a fence (the GPU finishing with a staging slot), flushing once. */
void glcv_engine_wait_fence(GLsync *fence)
{
    if (!*fence)
        return;
    GLbitfield flags = GL_SYNC_FLUSH_COMMANDS_BIT;
    while (glClientWaitSync(*fence, flags, 1000000000ull) == GL_TIMEOUT_EXPIRED)
        flags = 0;
    glDeleteSync(*fence);
    *fence = NULL;
}

static void stage_release(stage_ring *r)
{
    for (int i = 0; i < STAGE_SLOTS; i++) {
        if (r->fences[i])
            glDeleteSync(r->fences[i]);
        r->fences[i] = NULL;
        if (r->buffers[i]) {
            glBindBuffer(GL_PIXEL_UNPACK_BUFFER, r->buffers[i]);
            if (r->maps[i] || !r->persistent) {
                GLint mapped = 0;
                glGetBufferParameteriv(GL_PIXEL_UNPACK_BUFFER, GL_BUFFER_MAPPED, &mapped);
                if (mapped)
                    glUnmapBuffer(GL_PIXEL_UNPACK_BUFFER);
            }
            glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
        }
        r->maps[i] = NULL;
    }
    glDeleteBuffers(STAGE_SLOTS, r->buffers);
    memset(r->buffers, 0, sizeof r->buffers);
    r->size = 0;
}

glcv_status glcv_engine_stage(glcv_engine *e, size_t bytes, void **ptr, int *slot)
{
    stage_ring *r = &e->up;
    *ptr = NULL;
    if (bytes > r->size) {
        stage_release(r);
        r->persistent = e->gl_version >= 44;
        glGenBuffers(STAGE_SLOTS, r->buffers);
        for (int i = 0; i < STAGE_SLOTS; i++) {
            glBindBuffer(GL_PIXEL_UNPACK_BUFFER, r->buffers[i]);
            if (r->persistent) {
                const GLbitfield flags = GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
                glBufferStorage(GL_PIXEL_UNPACK_BUFFER, (GLsizeiptr)bytes, NULL, flags);
                r->maps[i] = glMapBufferRange(GL_PIXEL_UNPACK_BUFFER, 0, (GLsizeiptr)bytes, flags);
                if (!r->maps[i])
                    break;
            } else {
                glBufferData(GL_PIXEL_UNPACK_BUFFER, (GLsizeiptr)bytes, NULL, GL_STREAM_DRAW);
            }
        }
        glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
        glcv_status st = glcv_gl_check(&e->logger, "upload staging buffers");
        if (st != GLCV_OK || (r->persistent && !r->maps[STAGE_SLOTS - 1])) {
            stage_release(r);
            return st != GLCV_OK ? st : glcv_fail(&e->logger, GLCV_ERROR_GL, "staging buffer mapping failed");
        }
        r->size = bytes;
        r->next = 0;
    }
    int i = r->next;
    r->next = (i + 1) % STAGE_SLOTS;
    glcv_engine_wait_fence(&r->fences[i]);
    if (r->persistent) {
        *ptr = r->maps[i];
    } else {
        glBindBuffer(GL_PIXEL_UNPACK_BUFFER, r->buffers[i]);
        GLint mapped = 0;
        glGetBufferParameteriv(GL_PIXEL_UNPACK_BUFFER, GL_BUFFER_MAPPED, &mapped);
        if (mapped)
            glUnmapBuffer(GL_PIXEL_UNPACK_BUFFER);
        *ptr = glMapBufferRange(GL_PIXEL_UNPACK_BUFFER, 0, (GLsizeiptr)r->size,
                                GL_MAP_WRITE_BIT | GL_MAP_INVALIDATE_BUFFER_BIT);
        glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
        if (!*ptr)
            return glcv_fail(&e->logger, GLCV_ERROR_GL, "staging buffer mapping failed");
    }
    *slot = i;
    return GLCV_OK;
}

/* Tightly packed rows and layers, bytes as they are: for packs into buffers, and unpacks. */
static void pack_defaults(void)
{
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glPixelStorei(GL_PACK_ROW_LENGTH, 0);
    glPixelStorei(GL_PACK_SKIP_PIXELS, 0);
    glPixelStorei(GL_PACK_SKIP_ROWS, 0);
    glPixelStorei(GL_PACK_SWAP_BYTES, GL_FALSE);
    glPixelStorei(GL_PACK_LSB_FIRST, GL_FALSE);
    glPixelStorei(GL_PACK_IMAGE_HEIGHT, 0);
    glPixelStorei(GL_PACK_SKIP_IMAGES, 0);
}

static void unpack_defaults(void)
{
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glPixelStorei(GL_UNPACK_SKIP_PIXELS, 0);
    glPixelStorei(GL_UNPACK_SKIP_ROWS, 0);
    glPixelStorei(GL_UNPACK_SWAP_BYTES, GL_FALSE);
    glPixelStorei(GL_UNPACK_LSB_FIRST, GL_FALSE);
    glPixelStorei(GL_UNPACK_IMAGE_HEIGHT, 0);
    glPixelStorei(GL_UNPACK_SKIP_IMAGES, 0);
}

glcv_status glcv_engine_upload_staged(glcv_engine *e, const glcv_tex *tex, int slot, glcv_pixel_format format,
                                      int width, int height)
{
    stage_ring *r = &e->up;
    GLenum gl_format = glcv_engine_pixel_gl_format(format);
    if (!gl_format || slot < 0 || slot >= STAGE_SLOTS || !r->buffers[slot])
        return glcv_fail(&e->logger, GLCV_ERROR_INVALID_ARGUMENT, "upload: bad staging slot or format");
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, r->buffers[slot]);
    if (!r->persistent)
        glUnmapBuffer(GL_PIXEL_UNPACK_BUFFER);
    unpack_defaults();
    glActiveTexture(GL_TEXTURE0);
    if (tex->layers) {
        glBindTexture(GL_TEXTURE_2D_ARRAY, tex->id);
        glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, 0, 0, width, height, tex->layers, gl_format, GL_UNSIGNED_BYTE,
                        (const void *)0);
    } else {
        glBindTexture(GL_TEXTURE_2D, tex->id);
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, gl_format, GL_UNSIGNED_BYTE, (const void *)0);
    }
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    if (r->fences[slot])
        glDeleteSync(r->fences[slot]);
    r->fences[slot] = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    return glcv_gl_check(&e->logger, "upload");
}

glcv_status glcv_engine_upload_staged_texels(glcv_engine *e, const glcv_tex *tex, int slot, GLenum gl_format,
                                             GLenum gl_type)
{
    stage_ring *r = &e->up;
    if (slot < 0 || slot >= STAGE_SLOTS || !r->buffers[slot] || !tex->id || tex->layers || tex->buffer)
        return glcv_fail(&e->logger, GLCV_ERROR_INVALID_ARGUMENT, "upload: bad staging slot or texture");
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, r->buffers[slot]);
    if (!r->persistent)
        glUnmapBuffer(GL_PIXEL_UNPACK_BUFFER);
    unpack_defaults();
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, tex->id);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, tex->width, tex->height, gl_format, gl_type, (const void *)0);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    glcv_engine_stage_fence(e, slot);
    return glcv_gl_check(&e->logger, "upload");
}

glcv_status glcv_engine_copy_staged(glcv_engine *e, int slot, const glcv_tex *dst, size_t bytes)
{
    stage_ring *r = &e->up;
    if (slot < 0 || slot >= STAGE_SLOTS || !r->buffers[slot] || !dst->buffer || bytes > r->size ||
        bytes > dst->bytes)
        return glcv_fail(&e->logger, GLCV_ERROR_INVALID_ARGUMENT, "copy: bad staging slot or size");
    glBindBuffer(GL_COPY_READ_BUFFER, r->buffers[slot]);
    if (!r->persistent)
        glUnmapBuffer(GL_COPY_READ_BUFFER);
    glBindBuffer(GL_COPY_WRITE_BUFFER, dst->buffer);
    glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, (GLsizeiptr)bytes);
    glBindBuffer(GL_COPY_READ_BUFFER, 0);
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    glcv_engine_stage_fence(e, slot);
    return glcv_gl_check(&e->logger, "copy");
}

GLuint glcv_engine_stage_buffer(glcv_engine *e, int slot)
{
    stage_ring *r = &e->up;
    return slot >= 0 && slot < STAGE_SLOTS && r->persistent ? r->buffers[slot] : 0;
}

void glcv_engine_stage_fence(glcv_engine *e, int slot)
{
    stage_ring *r = &e->up;
    if (slot < 0 || slot >= STAGE_SLOTS)
        return;
    if (r->fences[slot])
        glDeleteSync(r->fences[slot]);
    r->fences[slot] = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
}

glcv_status glcv_engine_upload(glcv_engine *e, const glcv_tex *tex, const glcv_image *img)
{
    if (!glcv_engine_pixel_gl_format(img->format))
        return glcv_fail(&e->logger, GLCV_ERROR_INVALID_ARGUMENT, "upload: a colour image is needed");
    size_t row = (size_t)img->width * (size_t)glcv_pixel_format_size(img->format);
    size_t stride = img->stride ? img->stride : row;
    void *ptr = NULL;
    int slot = 0;
    glcv_status st = glcv_engine_stage(e, row * (size_t)img->height, &ptr, &slot);
    if (st != GLCV_OK)
        return st;
    if (stride == row) {
        memcpy(ptr, img->data, row * (size_t)img->height);
    } else {
        for (int y = 0; y < img->height; y++)
            memcpy((uint8_t *)ptr + row * (size_t)y, img->data + stride * (size_t)y, row);
    }
    return glcv_engine_upload_staged(e, tex, slot, img->format, img->width, img->height);
}

glcv_status glcv_engine_upload_layers(glcv_engine *e, const glcv_tex *tex, int first, int count, GLenum gl_format,
                                     GLenum gl_type, const void *data)
{
    int layers = tex->layers ? tex->layers : 1;
    if (!tex->id || tex->buffer || first < 0 || count < 1 || first + count > layers || !data)
        return glcv_fail(&e->logger, GLCV_ERROR_INVALID_ARGUMENT, "upload: bad texture, layers or data");
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    unpack_defaults();
    glActiveTexture(GL_TEXTURE0);
    if (tex->layers) {
        glBindTexture(GL_TEXTURE_2D_ARRAY, tex->id);
        glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, 0, first, tex->width, tex->height, count, gl_format, gl_type, data);
    } else {
        glBindTexture(GL_TEXTURE_2D, tex->id);
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, tex->width, tex->height, gl_format, gl_type, data);
    }
    return glcv_gl_check(&e->logger, "upload");
}

/* Bytes per pixel of the formats frames are packed in. */
static size_t pack_pixel_bytes(GLenum gl_format)
{
    return gl_format == GL_RED ? 1 : gl_format == GL_RGB || gl_format == GL_BGR ? 3 : 4;
}

/* The source channel of each of a pixel's bytes in `gl_format`, and how many there are (0: a format
 * the packing pass does not write). */
static int pack_order(GLenum gl_format, int order[4])
{
    static const int rgba[4] = {0, 1, 2, 3}, bgra[4] = {2, 1, 0, 3};
    int n = gl_format == GL_RED ? 1 : gl_format == GL_RGB || gl_format == GL_BGR ? 3
                                  : gl_format == GL_RGBA || gl_format == GL_BGRA ? 4 : 0;
    memcpy(order, gl_format == GL_BGR || gl_format == GL_BGRA ? bgra : rgba, sizeof rgba);
    return n;
}

/* Compute engines: the bytes written by a pass (shaders/engine_pack.glsl), a word an invocation,
 * instead of glGetTextureSubImage, whose conversion to packed RGB the driver does far slower than
 * the GPU's copy rate (1080p sets: about 35 ms for 130 layers on an H100, measured). Returns
 * UNSUPPORTED, logging nothing, where the pass cannot (a format it does not write, or more bytes
 * than a storage block holds): the caller then reads as before. */
static glcv_status pack_pass(glcv_engine *e, GLuint texture, int layers, int width, int height, GLenum gl_format,
                             GLuint buffer, size_t bytes)
{
    enum { WORDS_PER_GROUP = 256, MAX_GROUPS_X = 65535 };
    int order[4];
    int channels = pack_order(gl_format, order);
    if (e->mode != GLCV_ENGINE_COMPUTE || !channels)
        return GLCV_ERROR_UNSUPPORTED;
    GLint64 max_bytes = 0;
    glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &max_bytes);
    size_t words = (bytes + 3) / 4;
    if (words > (size_t)INT_MAX / 4 || (GLint64)(words * 4) > max_bytes)
        return GLCV_ERROR_UNSUPPORTED;
    static const char *const files[] = {"engine_pack.glsl"};
    char defines[96];
    snprintf(defines, sizeof defines, "#define GLCV_TILED 1\n#define GLCV_LOCAL_X %d\n#define GLCV_LOCAL_Y 1\n",
             WORDS_PER_GROUP);
    glcv_program *prog = NULL;
    glcv_status st = glcv_engine_program(e, "engine pack", files, 1, defines, NULL, 0, &prog);
    if (st != GLCV_OK)
        return st;
    const glcv_tex src = {.id = texture, .width = width, .height = height, .layers = layers};
    glcv_pass p = glcv_pass_make(prog, "pack", 1, 1);
    glcv_pass_add_input_tex(&p, "u_src", &src, GLCV_SAMPLE_NEAREST);
    glcv_pass_add_uniform_i(&p, "u_size", GLCV_U_2I, width, height);
    glcv_pass_add_uniform_i(&p, "u_layers", GLCV_U_1I, layers, 0);
    glcv_pass_add_uniform_i(&p, "u_channels", GLCV_U_1I, channels, 0);
    glcv_pass_add_uniform_4iv(&p, "u_order", order, 1);
    glcv_pass_add_uniform_i(&p, "u_words", GLCV_U_1I, (int)words, 0);
    glcv_pass_add_storage(&p, 0, buffer);
    long groups = (long)((words + WORDS_PER_GROUP - 1) / WORDS_PER_GROUP);
    p.groups_x = (int)(groups < MAX_GROUPS_X ? groups : MAX_GROUPS_X);
    p.groups_y = (int)((groups + p.groups_x - 1) / p.groups_x);
    st = glcv_engine_run(e, &p);
    glcv_engine_sync_writes(e); /* read next by a pass (storage, a buffer texture) or a buffer copy */
    return st;
}

glcv_status glcv_engine_pack_layers(glcv_engine *e, GLuint texture, int layers, int width, int height,
                                    GLenum gl_format, GLuint buffer, size_t bytes)
{
    size_t row = (size_t)width * pack_pixel_bytes(gl_format), layer_bytes = row * (size_t)height;
    if (layers < 1 || !buffer || layer_bytes * (size_t)layers > bytes)
        return glcv_fail(&e->logger, GLCV_ERROR_INVALID_ARGUMENT, "packing %d layers: bad buffer or size", layers);
    glcv_status st = pack_pass(e, texture, layers, width, height, gl_format, buffer, layer_bytes * (size_t)layers);
    if (st != GLCV_ERROR_UNSUPPORTED)
        return st;
    st = GLCV_OK;
    glBindBuffer(GL_PIXEL_PACK_BUFFER, buffer);
    pack_defaults();
    if (e->gl_version >= 45) {
        /* As many layers per call as a GLsizei of bytes holds (all of them, but for sets of GiBs). */
        int per_call = layer_bytes * (size_t)layers <= INT_MAX ? layers : (int)(INT_MAX / layer_bytes);
        for (int l = 0; l < layers; l += per_call) {
            int n = layers - l < per_call ? layers - l : per_call;
            glGetTextureSubImage(texture, 0, 0, 0, l, width, height, n, gl_format, GL_UNSIGNED_BYTE,
                                 (GLsizei)(layer_bytes * (size_t)n), (void *)(layer_bytes * (size_t)l));
        }
        st = glcv_gl_check(&e->logger, "packing texture layers");
    } else {
        /* GL 3.3: no call reads some layers of an array; each one through a framebuffer */
        if (!e->read_fbo)
            glGenFramebuffers(1, &e->read_fbo);
        for (int l = 0; l < layers && st == GLCV_OK; l++)
            st = glcv_gl_read_pixels_layer(e->read_fbo, texture, l, width, height, gl_format, GL_UNSIGNED_BYTE,
                                           (void *)(layer_bytes * (size_t)l), row, &e->logger);
    }
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    return st;
}

glcv_status glcv_engine_copy_layers(glcv_engine *e, GLuint texture, const glcv_tex *dst)
{
    if (!dst->id || dst->buffer || dst->format != GLCV_FORMAT_RGBA8)
        return glcv_fail(&e->logger, GLCV_ERROR_INVALID_ARGUMENT, "copying layers: bad target texture");
    static const char *const files[] = {"engine_copy.glsl"};
    const glcv_format rgba8 = GLCV_FORMAT_RGBA8;
    glcv_program *prog = NULL;
    glcv_status st = glcv_engine_program(
        e, dst->layers ? "engine copy layers" : "engine copy layer 0", files, 1,
        dst->layers ? "#define GLCV_COPY_FROM_ARRAY 1\n#define GLCV_LAYERED 1\n" : "#define GLCV_COPY_FROM_ARRAY 1\n",
        &rgba8, 1, &prog);
    if (st != GLCV_OK)
        return st;
    /* the caller's array (a spare layer or more past dst's are not read), or its layer 0 for a 2D target */
    const glcv_tex src = {.id = texture, .width = dst->width, .height = dst->height, .layers = 1};
    glcv_pass p = glcv_pass_make(prog, "copy", dst->width, dst->height);
    glcv_pass_add_input_tex(&p, "source", &src, GLCV_SAMPLE_NEAREST);
    glcv_pass_add_output(&p, dst);
    st = glcv_engine_run(e, &p);
    glcv_engine_sync_writes(e);
    return st;
}

/* Copies `height` rows of `row` bytes at a pitch of `pitch`, leaving the bytes between rows
 * (the caller's padding) untouched. */
static void copy_rows(void *dst, const void *src, size_t pitch, size_t row, int height)
{
    if (pitch == row) {
        memcpy(dst, src, row * (size_t)height);
        return;
    }
    for (int y = 0; y < height; y++)
        memcpy((uint8_t *)dst + pitch * (size_t)y, (const uint8_t *)src + pitch * (size_t)y, row);
}

/* Reads through a pixel-pack buffer: with GL 4.4 one persistently mapped in cached client memory,
 * waited on with a fence; otherwise mapped for reading after the copy. */
glcv_status glcv_engine_read(glcv_engine *e, GLuint texture, int width, int height, GLenum gl_format,
                             GLenum gl_type, void *dst, size_t row_bytes)
{
    if (!e->read_fbo)
        glGenFramebuffers(1, &e->read_fbo);
    /* The last row need not extend to row_bytes: the caller's buffer may end right after it. */
    size_t px_bytes = gl_type == GL_UNSIGNED_BYTE ? 1 : 4;
    size_t last_row = (size_t)width * px_bytes *
                      (gl_format == GL_RED || gl_format == GL_RED_INTEGER ? 1
                       : gl_format == GL_RG_INTEGER                       ? 2
                       : gl_format == GL_RGB                              ? 3
                                                                          : 4);
    size_t bytes = row_bytes * (size_t)(height - 1) + last_row;
    int persistent = e->gl_version >= 44;
    if (bytes > e->down_size) {
        if (e->down_buffer) {
            glBindBuffer(GL_PIXEL_PACK_BUFFER, e->down_buffer);
            if (e->down_map)
                glUnmapBuffer(GL_PIXEL_PACK_BUFFER);
            glDeleteBuffers(1, &e->down_buffer);
        }
        e->down_map = NULL;
        e->down_size = 0;
        glGenBuffers(1, &e->down_buffer);
        glBindBuffer(GL_PIXEL_PACK_BUFFER, e->down_buffer);
        if (persistent) {
            const GLbitfield flags = GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
            glBufferStorage(GL_PIXEL_PACK_BUFFER, (GLsizeiptr)bytes, NULL, flags | GL_CLIENT_STORAGE_BIT);
            e->down_map = glMapBufferRange(GL_PIXEL_PACK_BUFFER, 0, (GLsizeiptr)bytes, flags);
        } else {
            glBufferData(GL_PIXEL_PACK_BUFFER, (GLsizeiptr)bytes, NULL, GL_STREAM_READ);
        }
        glcv_status st = glcv_gl_check(&e->logger, "read-back buffer");
        if (st != GLCV_OK || (persistent && !e->down_map)) {
            glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
            glDeleteBuffers(1, &e->down_buffer);
            e->down_buffer = 0;
            e->down_map = NULL;
            return st != GLCV_OK ? st : glcv_fail(&e->logger, GLCV_ERROR_GL, "read-back buffer mapping failed");
        }
        e->down_size = bytes;
    }
    glBindBuffer(GL_PIXEL_PACK_BUFFER, e->down_buffer);
    glcv_status st = glcv_gl_read_pixels(e->read_fbo, texture, width, height, gl_format, gl_type, (void *)0,
                                         row_bytes, &e->logger);
    if (st == GLCV_OK) {
        if (e->down_map) {
            GLsync fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
            glcv_engine_wait_fence(&fence);
            copy_rows(dst, e->down_map, row_bytes, last_row, height);
        } else {
            const void *p = glMapBufferRange(GL_PIXEL_PACK_BUFFER, 0, (GLsizeiptr)bytes, GL_MAP_READ_BIT);
            if (p) {
                copy_rows(dst, p, row_bytes, last_row, height);
                glUnmapBuffer(GL_PIXEL_PACK_BUFFER);
            } else {
                st = glcv_fail(&e->logger, GLCV_ERROR_GL, "read-back buffer mapping failed");
            }
        }
    }
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    return st;
}

static void download_release(glcv_engine *e)
{
    for (int i = 0; i < GLCV_ENGINE_DOWNLOAD_SLOTS; i++) {
        if (e->dl_fences[i])
            glDeleteSync(e->dl_fences[i]);
        e->dl_fences[i] = NULL;
        if (e->dl_buffers[i] && e->dl_maps[i]) {
            glBindBuffer(GL_PIXEL_PACK_BUFFER, e->dl_buffers[i]);
            glUnmapBuffer(GL_PIXEL_PACK_BUFFER);
        }
        e->dl_maps[i] = NULL;
    }
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    glDeleteBuffers(GLCV_ENGINE_DOWNLOAD_SLOTS, e->dl_buffers);
    memset(e->dl_buffers, 0, sizeof e->dl_buffers);
    e->dl_size = 0;
}

/* The download ring with slots of at least `bytes`. */
static glcv_status download_ring(glcv_engine *e, size_t bytes)
{
    int persistent = e->gl_version >= 44;
    if (bytes > e->dl_size) {
        download_release(e);
        glGenBuffers(GLCV_ENGINE_DOWNLOAD_SLOTS, e->dl_buffers);
        for (int i = 0; i < GLCV_ENGINE_DOWNLOAD_SLOTS; i++) {
            glBindBuffer(GL_PIXEL_PACK_BUFFER, e->dl_buffers[i]);
            if (persistent) {
                const GLbitfield flags = GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
                glBufferStorage(GL_PIXEL_PACK_BUFFER, (GLsizeiptr)bytes, NULL, flags | GL_CLIENT_STORAGE_BIT);
                e->dl_maps[i] = glMapBufferRange(GL_PIXEL_PACK_BUFFER, 0, (GLsizeiptr)bytes, flags);
                if (!e->dl_maps[i])
                    break;
            } else {
                glBufferData(GL_PIXEL_PACK_BUFFER, (GLsizeiptr)bytes, NULL, GL_STREAM_READ);
            }
        }
        glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
        glcv_status st = glcv_gl_check(&e->logger, "download buffers");
        if (st != GLCV_OK || (persistent && !e->dl_maps[GLCV_ENGINE_DOWNLOAD_SLOTS - 1])) {
            download_release(e);
            return st != GLCV_OK ? st : glcv_fail(&e->logger, GLCV_ERROR_GL, "download buffer mapping failed");
        }
        e->dl_size = bytes;
        e->dl_next = 0;
    }
    return GLCV_OK;
}

glcv_status glcv_engine_download(glcv_engine *e, const glcv_tex *tex, GLenum gl_format, GLenum gl_type, size_t bytes,
                                 int *slot)
{
    int persistent = e->gl_version >= 44;
    glcv_engine_sync_writes(e);
    glcv_status st = download_ring(e, bytes);
    if (st != GLCV_OK)
        return st;
    int i = e->dl_next;
    e->dl_next = (i + 1) % GLCV_ENGINE_DOWNLOAD_SLOTS;
    if (e->dl_fences[i]) {
        glDeleteSync(e->dl_fences[i]);
        e->dl_fences[i] = NULL;
    }
    glBindBuffer(GL_PIXEL_PACK_BUFFER, e->dl_buffers[i]);
    if (!persistent && e->dl_maps[i]) {
        glUnmapBuffer(GL_PIXEL_PACK_BUFFER);
        e->dl_maps[i] = NULL;
    }
    pack_defaults();
    GLenum target = tex->layers ? GL_TEXTURE_2D_ARRAY : GL_TEXTURE_2D;
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(target, tex->id);
    glGetTexImage(target, 0, gl_format, gl_type, (void *)0);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    e->dl_fences[i] = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    glFlush();
    *slot = i;
    return glcv_gl_check(&e->logger, "download");
}

glcv_status glcv_engine_download_reserve(glcv_engine *e, size_t bytes, int *slot)
{
    glcv_status st = download_ring(e, bytes);
    if (st != GLCV_OK)
        return st;
    int i = e->dl_next;
    e->dl_next = (i + 1) % GLCV_ENGINE_DOWNLOAD_SLOTS;
    /* the slot's last download must be done before the passes write it again */
    glcv_engine_wait_fence(&e->dl_fences[i]);
    if (e->gl_version < 44 && e->dl_maps[i]) { /* mapped by its last wait: GPU copies into it would fail */
        glBindBuffer(GL_PIXEL_PACK_BUFFER, e->dl_buffers[i]);
        glUnmapBuffer(GL_PIXEL_PACK_BUFFER);
        glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
        e->dl_maps[i] = NULL;
    }
    *slot = i;
    return GLCV_OK;
}

void glcv_engine_download_fence(glcv_engine *e, int slot)
{
    if (slot < 0 || slot >= GLCV_ENGINE_DOWNLOAD_SLOTS)
        return;
    if (e->dl_fences[slot])
        glDeleteSync(e->dl_fences[slot]);
    glMemoryBarrier(GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT);
    e->dl_fences[slot] = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    glFlush();
}

GLuint glcv_engine_download_buffer(glcv_engine *e, int slot)
{
    return slot >= 0 && slot < GLCV_ENGINE_DOWNLOAD_SLOTS ? e->dl_buffers[slot] : 0;
}

glcv_status glcv_engine_download_wait(glcv_engine *e, int slot, const void **ptr)
{
    *ptr = NULL;
    if (slot < 0 || slot >= GLCV_ENGINE_DOWNLOAD_SLOTS || !e->dl_buffers[slot])
        return glcv_fail(&e->logger, GLCV_ERROR_INVALID_ARGUMENT, "download: bad slot");
    glcv_engine_wait_fence(&e->dl_fences[slot]);
    if (!e->dl_maps[slot]) {
        glBindBuffer(GL_PIXEL_PACK_BUFFER, e->dl_buffers[slot]);
        e->dl_maps[slot] = glMapBufferRange(GL_PIXEL_PACK_BUFFER, 0, (GLsizeiptr)e->dl_size, GL_MAP_READ_BIT);
        glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
        if (!e->dl_maps[slot])
            return glcv_fail(&e->logger, GLCV_ERROR_GL, "download buffer mapping failed");
    }
    *ptr = e->dl_maps[slot];
    return GLCV_OK;
}

void glcv_engine_transfers_release(glcv_engine *e)
{
    stage_release(&e->up);
    download_release(e);
    if (e->down_buffer) {
        glBindBuffer(GL_PIXEL_PACK_BUFFER, e->down_buffer);
        if (e->down_map)
            glUnmapBuffer(GL_PIXEL_PACK_BUFFER);
        glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
        glDeleteBuffers(1, &e->down_buffer);
    }
    e->down_buffer = 0;
    e->down_map = NULL;
    e->down_size = 0;
}
