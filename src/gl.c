/* GL helpers (see gl.h): errors, the state every call saves and restores, and the texture
 * helpers. */
#include "gl.h"

#include "core_internal.h"

#include <glcv/context.h>

#include <stdlib.h>
#include <string.h>

/* ---- errors --------------------------------------------------------------------------------------- */

static const char *error_name(GLenum e)
{
    switch (e) {
    case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
    case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
    case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
    case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
    case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
    default: return "GL error";
    }
}

glcv_status glcv_gl_check(const glcv_logger *lg, const char *what)
{
    glcv_status st = GLCV_OK;
    for (int i = 0; i < 8; i++) {
        GLenum e = glGetError();
        if (e == GL_NO_ERROR)
            break;
        glcv_logf(lg, GLCV_LOG_ERROR, "%s: %s (0x%04x)", what, error_name(e), e);
        st = e == GL_OUT_OF_MEMORY ? GLCV_ERROR_OUT_OF_MEMORY : GLCV_ERROR_GL;
    }
    return st;
}

void glcv_gl_clear_errors(void)
{
    for (int i = 0; i < 8 && glGetError() != GL_NO_ERROR; i++) {
    }
}

/* ---- state ------------------------------------------------------------------------------------------ */

#define STATE_UNITS GLCV_GL_STATE_UNITS
#define STATE_IMAGES GLCV_GL_STATE_IMAGES
#define STATE_DRAW_BUFFERS 4

/* Capabilities switched off during passes (indexed ones are handled separately). */
static const GLenum caps[] = {
    GL_DEPTH_TEST,       GL_STENCIL_TEST,      GL_CULL_FACE,        GL_RASTERIZER_DISCARD,
    GL_FRAMEBUFFER_SRGB, GL_COLOR_LOGIC_OP,    GL_SAMPLE_MASK,      GL_SAMPLE_ALPHA_TO_COVERAGE,
    GL_SAMPLE_COVERAGE,  GL_POLYGON_OFFSET_FILL, GL_MULTISAMPLE,    GL_DITHER,
    GL_CLIP_DISTANCE0,   GL_CLIP_DISTANCE1,    GL_CLIP_DISTANCE2,   GL_CLIP_DISTANCE3,
    GL_CLIP_DISTANCE4,   GL_CLIP_DISTANCE5,    GL_CLIP_DISTANCE6,   GL_CLIP_DISTANCE7,
};
#define N_CAPS (sizeof caps / sizeof caps[0])

static const GLenum unpack_names[] = {GL_UNPACK_ALIGNMENT,  GL_UNPACK_ROW_LENGTH,  GL_UNPACK_SKIP_PIXELS,
                                      GL_UNPACK_SKIP_ROWS,  GL_UNPACK_IMAGE_HEIGHT, GL_UNPACK_SKIP_IMAGES,
                                      GL_UNPACK_SWAP_BYTES, GL_UNPACK_LSB_FIRST};
static const GLenum pack_names[] = {GL_PACK_ALIGNMENT,  GL_PACK_ROW_LENGTH,  GL_PACK_SKIP_PIXELS,
                                    GL_PACK_SKIP_ROWS,  GL_PACK_IMAGE_HEIGHT, GL_PACK_SKIP_IMAGES,
                                    GL_PACK_SWAP_BYTES, GL_PACK_LSB_FIRST};
#define N_STORE (sizeof unpack_names / sizeof unpack_names[0])

struct glcv_glstate {
    int images;
    GLint program, vao, draw_fbo, read_fbo, viewport[4], active_texture;
    GLint texture[STATE_UNITS], texture_array[STATE_UNITS], texture_buffer[STATE_UNITS], sampler[STATE_UNITS];
    GLint unpack_buffer, pack_buffer, copy_read_buffer, copy_write_buffer, texture_buffer_binding;
    GLint unpack[N_STORE], pack[N_STORE];
    GLboolean cap[N_CAPS];
    GLboolean blend[STATE_DRAW_BUFFERS], scissor;
    GLboolean color_mask[STATE_DRAW_BUFFERS][4];
    GLint polygon_mode[2];
    GLint image_name[STATE_IMAGES], image_level[STATE_IMAGES], image_layer[STATE_IMAGES];
    GLint image_access[STATE_IMAGES], image_format[STATE_IMAGES];
    GLboolean image_layered[STATE_IMAGES];
    GLint storage_buffer, indirect_buffer, storage_name[GLCV_GL_STATE_STORAGE];
    GLint64 storage_start[GLCV_GL_STATE_STORAGE], storage_size[GLCV_GL_STATE_STORAGE];
};

glcv_glstate *glcv_glstate_new(void)
{
    return calloc(1, sizeof(glcv_glstate));
}

void glcv_glstate_free(glcv_glstate *state)
{
    free(state);
}

void glcv_glstate_save(glcv_glstate *s, int images)
{
    s->images = images;
    glGetIntegerv(GL_CURRENT_PROGRAM, &s->program);
    glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &s->vao);
    glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &s->draw_fbo);
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &s->read_fbo);
    glGetIntegerv(GL_VIEWPORT, s->viewport);
    glGetIntegerv(GL_ACTIVE_TEXTURE, &s->active_texture);
    for (int u = 0; u < STATE_UNITS; u++) {
        glActiveTexture(GL_TEXTURE0 + u);
        glGetIntegerv(GL_TEXTURE_BINDING_2D, &s->texture[u]);
        glGetIntegerv(GL_TEXTURE_BINDING_2D_ARRAY, &s->texture_array[u]);
        glGetIntegerv(GL_TEXTURE_BINDING_BUFFER, &s->texture_buffer[u]);
        glGetIntegerv(GL_SAMPLER_BINDING, &s->sampler[u]);
    }
    glGetIntegerv(GL_PIXEL_UNPACK_BUFFER_BINDING, &s->unpack_buffer);
    glGetIntegerv(GL_PIXEL_PACK_BUFFER_BINDING, &s->pack_buffer);
    glGetIntegerv(GL_COPY_READ_BUFFER_BINDING, &s->copy_read_buffer);
    glGetIntegerv(GL_COPY_WRITE_BUFFER_BINDING, &s->copy_write_buffer);
    glGetIntegerv(GL_TEXTURE_BUFFER_BINDING, &s->texture_buffer_binding);
    for (size_t i = 0; i < N_STORE; i++) {
        glGetIntegerv(unpack_names[i], &s->unpack[i]);
        glGetIntegerv(pack_names[i], &s->pack[i]);
    }
    for (size_t i = 0; i < N_CAPS; i++)
        s->cap[i] = glIsEnabled(caps[i]);
    for (int i = 0; i < STATE_DRAW_BUFFERS; i++) {
        s->blend[i] = glIsEnabledi(GL_BLEND, i);
        glGetBooleani_v(GL_COLOR_WRITEMASK, i, s->color_mask[i]);
    }
    s->scissor = glIsEnabled(GL_SCISSOR_TEST);
    s->polygon_mode[0] = s->polygon_mode[1] = GL_FILL;
    glGetIntegerv(GL_POLYGON_MODE, s->polygon_mode);
    if (images) {
        glGetIntegerv(GL_SHADER_STORAGE_BUFFER_BINDING, &s->storage_buffer);
        glGetIntegerv(GL_DISPATCH_INDIRECT_BUFFER_BINDING, &s->indirect_buffer);
        for (int i = 0; i < GLCV_GL_STATE_STORAGE; i++) {
            glGetIntegeri_v(GL_SHADER_STORAGE_BUFFER_BINDING, (GLuint)i, &s->storage_name[i]);
            glGetInteger64i_v(GL_SHADER_STORAGE_BUFFER_START, (GLuint)i, &s->storage_start[i]);
            glGetInteger64i_v(GL_SHADER_STORAGE_BUFFER_SIZE, (GLuint)i, &s->storage_size[i]);
        }
        for (int i = 0; i < STATE_IMAGES; i++) {
            glGetIntegeri_v(GL_IMAGE_BINDING_NAME, i, &s->image_name[i]);
            glGetIntegeri_v(GL_IMAGE_BINDING_LEVEL, i, &s->image_level[i]);
            glGetBooleani_v(GL_IMAGE_BINDING_LAYERED, i, &s->image_layered[i]);
            glGetIntegeri_v(GL_IMAGE_BINDING_LAYER, i, &s->image_layer[i]);
            glGetIntegeri_v(GL_IMAGE_BINDING_ACCESS, i, &s->image_access[i]);
            glGetIntegeri_v(GL_IMAGE_BINDING_FORMAT, i, &s->image_format[i]);
        }
    }

    /* What passes need. */
    for (size_t i = 0; i < N_CAPS; i++)
        if (s->cap[i])
            glDisable(caps[i]);
    for (int i = 0; i < STATE_DRAW_BUFFERS; i++) {
        if (s->blend[i])
            glDisablei(GL_BLEND, i);
        glColorMaski(i, GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
    }
    if (s->scissor)
        glDisable(GL_SCISSOR_TEST);
    if (s->polygon_mode[0] != GL_FILL)
        glPolygonMode(GL_FRONT_AND_BACK, GL_FILL);
    if (s->unpack_buffer)
        glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    if (s->pack_buffer)
        glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    glActiveTexture(GL_TEXTURE0);
}

void glcv_glstate_restore(const glcv_glstate *s)
{
    glUseProgram((GLuint)s->program);
    glBindVertexArray((GLuint)s->vao);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, (GLuint)s->draw_fbo);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, (GLuint)s->read_fbo);
    glViewport(s->viewport[0], s->viewport[1], s->viewport[2], s->viewport[3]);
    for (int u = 0; u < STATE_UNITS; u++) {
        glActiveTexture(GL_TEXTURE0 + u);
        glBindTexture(GL_TEXTURE_2D, (GLuint)s->texture[u]);
        glBindTexture(GL_TEXTURE_2D_ARRAY, (GLuint)s->texture_array[u]);
        glBindTexture(GL_TEXTURE_BUFFER, (GLuint)s->texture_buffer[u]);
        glBindSampler((GLuint)u, (GLuint)s->sampler[u]);
    }
    glActiveTexture((GLenum)s->active_texture);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, (GLuint)s->unpack_buffer);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, (GLuint)s->pack_buffer);
    glBindBuffer(GL_COPY_READ_BUFFER, (GLuint)s->copy_read_buffer);
    glBindBuffer(GL_COPY_WRITE_BUFFER, (GLuint)s->copy_write_buffer);
    glBindBuffer(GL_TEXTURE_BUFFER, (GLuint)s->texture_buffer_binding);
    for (size_t i = 0; i < N_STORE; i++) {
        glPixelStorei(unpack_names[i], s->unpack[i]);
        glPixelStorei(pack_names[i], s->pack[i]);
    }
    for (size_t i = 0; i < N_CAPS; i++)
        if (s->cap[i])
            glEnable(caps[i]);
    for (int i = 0; i < STATE_DRAW_BUFFERS; i++) {
        if (s->blend[i])
            glEnablei(GL_BLEND, i);
        glColorMaski(i, s->color_mask[i][0], s->color_mask[i][1], s->color_mask[i][2], s->color_mask[i][3]);
    }
    if (s->scissor)
        glEnable(GL_SCISSOR_TEST);
    if (s->polygon_mode[0] != GL_FILL)
        glPolygonMode(GL_FRONT_AND_BACK, (GLenum)s->polygon_mode[0]);
    if (s->images) {
        for (int i = 0; i < STATE_IMAGES; i++) {
            if (s->image_name[i])
                glBindImageTexture(i, (GLuint)s->image_name[i], s->image_level[i], s->image_layered[i],
                                   s->image_layer[i], (GLenum)s->image_access[i], (GLenum)s->image_format[i]);
            else
                glBindImageTexture(i, 0, 0, GL_FALSE, 0, GL_READ_ONLY, GL_R8);
        }
        for (int i = 0; i < GLCV_GL_STATE_STORAGE; i++) {
            if (s->storage_name[i] && s->storage_size[i] > 0)
                glBindBufferRange(GL_SHADER_STORAGE_BUFFER, (GLuint)i, (GLuint)s->storage_name[i],
                                  (GLintptr)s->storage_start[i], (GLsizeiptr)s->storage_size[i]);
            else
                glBindBufferBase(GL_SHADER_STORAGE_BUFFER, (GLuint)i, (GLuint)s->storage_name[i]);
        }
        glBindBuffer(GL_SHADER_STORAGE_BUFFER, (GLuint)s->storage_buffer);
        glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, (GLuint)s->indirect_buffer);
    }
}

/* ---- textures ---------------------------------------------------------------------------------------- */

/* glcv_gl_check_input for a GL_TEXTURE_2D (layers 0) or a GL_TEXTURE_2D_ARRAY of `layers` layers
 * (`at_least`: of `layers` or more). */
static glcv_status check_input(GLuint texture, int width, int height, int layers, int at_least, GLint *internal_out,
                               const glcv_logger *lg)
{
    const GLenum target = layers ? GL_TEXTURE_2D_ARRAY : GL_TEXTURE_2D;
    const char *target_name = layers ? "GL_TEXTURE_2D_ARRAY" : "GL_TEXTURE_2D";
    if (!texture || !glIsTexture(texture))
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "texture %u is not a texture name", texture);
    glcv_gl_clear_errors();
    glBindTexture(target, texture);
    if (glGetError() != GL_NO_ERROR)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "texture %u is not a %s", texture, target_name);
    GLint w = 0, h = 0, d = 0, internal = 0, red_type = 0, base = 0;
    glGetTexLevelParameteriv(target, 0, GL_TEXTURE_WIDTH, &w);
    glGetTexLevelParameteriv(target, 0, GL_TEXTURE_HEIGHT, &h);
    glGetTexLevelParameteriv(target, 0, GL_TEXTURE_DEPTH, &d);
    glGetTexLevelParameteriv(target, 0, GL_TEXTURE_INTERNAL_FORMAT, &internal);
    glGetTexLevelParameteriv(target, 0, GL_TEXTURE_RED_TYPE, &red_type);
    glGetTexParameteriv(target, GL_TEXTURE_BASE_LEVEL, &base);
    if (w == 0 || h == 0 || d == 0)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "texture %u has no level 0 image", texture);
    if (layers && (at_least ? d < layers : d != layers))
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "texture %u has %d layers, expected %s%d (one per stream)",
                         texture, d, at_least ? "at least " : "", layers);
    if (w != width || h != height)
        return glcv_fail(lg, GLCV_ERROR_SIZE_MISMATCH, "texture %u is %dx%d, expected %dx%d", texture, w, h, width,
                         height);
    if (red_type != GL_UNSIGNED_NORMALIZED && red_type != GL_FLOAT)
        return glcv_fail(lg, GLCV_ERROR_UNSUPPORTED,
                         "texture %u: format 0x%04x is not a normalised or float colour format", texture, internal);
    if (internal == GL_SRGB8 || internal == GL_SRGB8_ALPHA8)
        return glcv_fail(lg, GLCV_ERROR_UNSUPPORTED,
                         "texture %u is sRGB: sampling would linearise it; use GL_RGBA8 or a GL_RGBA8 view", texture);
    if (base != 0)
        return glcv_fail(lg, GLCV_ERROR_UNSUPPORTED, "texture %u: GL_TEXTURE_BASE_LEVEL must be 0", texture);
    if (internal_out)
        *internal_out = internal;
    return glcv_gl_check(lg, "texture check");
}

glcv_status glcv_gl_check_input(GLuint texture, int width, int height, const glcv_logger *lg)
{
    return check_input(texture, width, height, 0, 0, NULL, lg);
}

glcv_status glcv_gl_check_input_layers(GLuint texture, int width, int height, int layers, GLint *internal,
                                       const glcv_logger *lg)
{
    if (layers < 1)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "texture %u: %d layers expected", texture, layers);
    return check_input(texture, width, height, layers, 0, internal, lg);
}

glcv_status glcv_gl_check_frames(GLuint texture, int width, int height, int layers, const glcv_logger *lg)
{
    if (layers < 1)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "texture %u: %d layers expected", texture, layers);
    GLint internal = 0;
    glcv_status st = check_input(texture, width, height, layers, 1, &internal, lg);
    /* Exactly 8 bits a channel: the bytes read from it are the pixels, as from a host image. */
    if (st == GLCV_OK && internal != GL_RGBA8 && internal != GL_RGB8)
        st = glcv_fail(lg, GLCV_ERROR_UNSUPPORTED, "texture %u: internal format 0x%04x; frames are GL_RGBA8 or GL_RGB8",
                       texture, internal);
    return st;
}

/* Attaches level 0 of `texture` (layer < 0: a GL_TEXTURE_2D; else that layer of an array) to the
 * bound read framebuffer's colour attachment 0; texture 0 detaches. */
static void attach_read(GLuint texture, int layer)
{
    if (layer < 0)
        glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, texture, 0);
    else
        glFramebufferTextureLayer(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, texture, 0, layer);
}

/* glcv_gl_read_pixels of a GL_TEXTURE_2D (layer < 0) or of one layer of an array texture. */
static glcv_status read_pixels(GLuint fbo, GLuint texture, int layer, int width, int height, GLenum format,
                               GLenum type, void *dst, size_t row_bytes, const glcv_logger *lg)
{
    glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
    attach_read(texture, layer);
    glReadBuffer(GL_COLOR_ATTACHMENT0);
    GLenum status = glCheckFramebufferStatus(GL_READ_FRAMEBUFFER);
    if (status != GL_FRAMEBUFFER_COMPLETE) {
        attach_read(0, layer);
        return glcv_fail(lg, GLCV_ERROR_GL, "read-back: framebuffer incomplete (0x%04x)", status);
    }
    size_t px = 0;
    switch (format) {
    case GL_RED:
    case GL_RED_INTEGER: px = 1; break;
    case GL_RG_INTEGER: px = 2; break;
    case GL_RGB:
    case GL_BGR: px = 3; break;
    default: px = 4; break;
    }
    if (type == GL_FLOAT || type == GL_INT || type == GL_UNSIGNED_INT)
        px *= 4;
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glPixelStorei(GL_PACK_ROW_LENGTH, (GLint)(row_bytes / px));
    glPixelStorei(GL_PACK_SKIP_PIXELS, 0);
    glPixelStorei(GL_PACK_SKIP_ROWS, 0);
    glPixelStorei(GL_PACK_SWAP_BYTES, GL_FALSE);
    glPixelStorei(GL_PACK_LSB_FIRST, GL_FALSE);
    glReadPixels(0, 0, width, height, format, type, dst);
    attach_read(0, layer);
    return glcv_gl_check(lg, "read-back");
}

glcv_status glcv_gl_read_pixels(GLuint fbo, GLuint texture, int width, int height, GLenum format, GLenum type,
                                void *dst, size_t row_bytes, const glcv_logger *lg)
{
    return read_pixels(fbo, texture, -1, width, height, format, type, dst, row_bytes, lg);
}

glcv_status glcv_gl_read_pixels_layer(GLuint fbo, GLuint texture, int layer, int width, int height, GLenum format,
                                      GLenum type, void *dst, size_t row_bytes, const glcv_logger *lg)
{
    return read_pixels(fbo, texture, layer, width, height, format, type, dst, row_bytes, lg);
}

/* The bytes of a GL_TEXTURE_2D (layers 0), of layer `layer` of an array of `layers`, or (frames) of
 * layers 0..layers-1 of a frames array (glcv_gl_check_frames) one after the other, in `format`
 * (GL_RED, GL_RGB, GL_BGR, GL_RGBA or GL_BGRA). */
static glcv_status read_bytes(GLuint texture, int layers, int layer, int frames, int width, int height, GLenum format,
                              uint8_t *dst, const glcv_logger *lg)
{
    if (!glcv_gl_context_current())
        return glcv_fail(lg, GLCV_ERROR_NO_CONTEXT, "reading texture %u needs a current GL context", texture);
    glcv_glstate *state = glcv_glstate_new();
    if (!state)
        return GLCV_ERROR_OUT_OF_MEMORY;
    glcv_gl_clear_errors();
    glcv_glstate_save(state, 0);
    glcv_status st = frames ? glcv_gl_check_frames(texture, width, height, layers, lg)
                            : check_input(texture, width, height, layers, 0, NULL, lg);
    if (st == GLCV_OK) {
        GLuint fbo = 0;
        glGenFramebuffers(1, &fbo);
        size_t px = format == GL_RED ? 1 : format == GL_RGB || format == GL_BGR ? 3 : 4;
        size_t row = (size_t)width * px;
        if (frames) {
            for (int i = 0; i < layers && st == GLCV_OK; i++)
                st = read_pixels(fbo, texture, i, width, height, format, GL_UNSIGNED_BYTE,
                                 dst + row * (size_t)height * (size_t)i, row, lg);
        } else {
            st = read_pixels(fbo, texture, layers ? layer : -1, width, height, format, GL_UNSIGNED_BYTE, dst, row, lg);
        }
        glDeleteFramebuffers(1, &fbo);
    }
    glcv_glstate_restore(state);
    glcv_glstate_free(state);
    return st;
}

glcv_status glcv_gl_read_rgb(GLuint texture, int width, int height, uint8_t *rgb, const glcv_logger *lg)
{
    return read_bytes(texture, 0, 0, 0, width, height, GL_RGB, rgb, lg);
}

glcv_status glcv_gl_read_bytes(GLuint texture, int width, int height, GLenum format, uint8_t *dst,
                               const glcv_logger *lg)
{
    return read_bytes(texture, 0, 0, 0, width, height, format, dst, lg);
}

glcv_status glcv_gl_read_rgb_layer(GLuint texture, int layers, int layer, int width, int height, uint8_t *rgb,
                                   const glcv_logger *lg)
{
    if (layers < 1 || layer < 0 || layer >= layers)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "texture %u: layer %d of %d", texture, layer, layers);
    return read_bytes(texture, layers, layer, 0, width, height, GL_RGB, rgb, lg);
}

glcv_status glcv_gl_read_frames(GLuint texture, int layers, int width, int height, glcv_pixel_format format,
                                glcv_image **frames, const glcv_logger *lg)
{
    const int rgba = format == GLCV_PIXEL_RGBA8;
    size_t n = layers > 0 ? (size_t)layers : 0, frame = (size_t)width * (size_t)height * (rgba ? 4 : 3);
    *frames = NULL;
    glcv_image *set = malloc(n * sizeof *set + n * frame);
    if (!set)
        return glcv_fail(lg, GLCV_ERROR_OUT_OF_MEMORY, "reading texture %u: no memory for %d frames", texture, layers);
    uint8_t *px = (uint8_t *)(set + n);
    glcv_status st = read_bytes(texture, layers, 0, 1, width, height, rgba ? GL_RGBA : GL_RGB, px, lg);
    if (st != GLCV_OK) {
        free(set);
        return st;
    }
    for (size_t i = 0; i < n; i++)
        set[i] = (glcv_image){px + frame * i, width, height, 0, rgba ? GLCV_PIXEL_RGBA8 : GLCV_PIXEL_RGB8};
    *frames = set;
    return GLCV_OK;
}

glcv_status glcv_gl_upload_texture(GLuint *texture, int width, int height, GLenum internal, GLenum format,
                                   GLenum type, const void *data, const glcv_logger *lg)
{
    if (!glcv_gl_context_current())
        return glcv_fail(lg, GLCV_ERROR_NO_CONTEXT, "making a texture needs a current GL context");
    glcv_glstate *state = glcv_glstate_new();
    if (!state)
        return GLCV_ERROR_OUT_OF_MEMORY;
    glcv_gl_clear_errors();
    glcv_glstate_save(state, 0);
    GLuint tex = *texture;
    int fresh = tex == 0 || !glIsTexture(tex);
    if (fresh)
        glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glPixelStorei(GL_UNPACK_SKIP_PIXELS, 0);
    glPixelStorei(GL_UNPACK_SKIP_ROWS, 0);
    if (fresh) {
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
        glTexImage2D(GL_TEXTURE_2D, 0, (GLint)internal, width, height, 0, format, type, data);
    } else {
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, width, height, format, type, data);
    }
    glcv_status st = glcv_gl_check(lg, "texture upload");
    glcv_glstate_restore(state);
    glcv_glstate_free(state);
    if (st != GLCV_OK && fresh) {
        glDeleteTextures(1, &tex);
        tex = 0;
    }
    *texture = tex;
    return st;
}
