/* Saving and restoring every piece of GL state the engine touches, so that a host
 * application's state survives a call into glcv (texture-ID integration). */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#define STATE_UNITS GLCV_MAX_INPUTS
#define STATE_IMAGES GLCV_MAX_OUTPUTS
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
    GLint texture[STATE_UNITS], sampler[STATE_UNITS];
    GLint unpack_buffer, pack_buffer;
    GLint unpack[N_STORE], pack[N_STORE];
    GLboolean cap[N_CAPS];
    GLboolean blend[STATE_DRAW_BUFFERS], scissor;
    GLboolean color_mask[STATE_DRAW_BUFFERS][4];
    GLint polygon_mode[2];
    GLint image_name[STATE_IMAGES], image_level[STATE_IMAGES], image_layer[STATE_IMAGES];
    GLint image_access[STATE_IMAGES], image_format[STATE_IMAGES];
    GLboolean image_layered[STATE_IMAGES];
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
        glGetIntegerv(GL_SAMPLER_BINDING, &s->sampler[u]);
    }
    glGetIntegerv(GL_PIXEL_UNPACK_BUFFER_BINDING, &s->unpack_buffer);
    glGetIntegerv(GL_PIXEL_PACK_BUFFER_BINDING, &s->pack_buffer);
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
        glBindSampler((GLuint)u, (GLuint)s->sampler[u]);
    }
    glActiveTexture((GLenum)s->active_texture);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, (GLuint)s->unpack_buffer);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, (GLuint)s->pack_buffer);
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
    }
}
