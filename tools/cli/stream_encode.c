/* The encode stage of 'glcv stream serve'; see stream_encode.h. */
#include "stream_encode.h"

#include <glcv/delta.h>

#include <epoxy/gl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const stream_filter_names[] = {"none", "gray", "segment", NULL};

struct stream_encoder {
    stream_encoder_params p;
    glcv_context *ctx;
    glcv_segment *seg;  /* segment only */
    glcv_delta *delta;
    glcv_delta_params resolved;
    glcv_engine_mode seg_engine;
    int64_t frames;         /* encoded */
    int learned;            /* segment: the background is learned */
    unsigned int frame_tex; /* the frame's texture, when segmenter and encoder both run on GL */
    /* segment on GL: the frame sent (the frame where the mask is 1, the background elsewhere) and
     * the pass that composes it */
    unsigned int sent_tex, sent_fbo, compose_program, compose_vao;
    glcv_image mask, background, sent; /* the same on the host path */
    char describe[320];
};

/* The frame the 'segment' filter sends, per pixel: the frame where the segmenter's mask is 1, its
 * background where the mask is 0. Sending it instead of the frame with the mask (which would keep
 * the viewers' picture where the mask is 0) makes a pixel an object has left show the background
 * again at once, not at the next keyframe: else every object leaves a trail of copies of itself.
 * The values are copied, not filtered (texelFetch), so the GL path sends the host path's bytes. */
static const char compose_vs[] = "#version 330 core\n"
                                 "void main() {\n"
                                 "    /* one triangle that covers the viewport */\n"
                                 "    vec2 c = vec2(float((gl_VertexID & 1) << 2), float((gl_VertexID & 2) << 1));\n"
                                 "    gl_Position = vec4(c - 1.0, 0.0, 1.0);\n"
                                 "}\n";
static const char compose_fs[] = "#version 330 core\n"
                                 "uniform sampler2D u_frame;\n"
                                 "uniform sampler2D u_mask;\n"
                                 "uniform sampler2D u_background;\n"
                                 "out vec4 o_color;\n"
                                 "void main() {\n"
                                 "    ivec2 p = ivec2(gl_FragCoord.xy);\n"
                                 "    bool moving = texelFetch(u_mask, p, 0).r > 0.5;\n"
                                 "    vec3 c = moving ? texelFetch(u_frame, p, 0).rgb : texelFetch(u_background, p, 0).rgb;\n"
                                 "    o_color = vec4(c, 1.0);\n"
                                 "}\n";

static int on_gl(glcv_engine_mode engine)
{
    return engine == GLCV_ENGINE_FRAGMENT || engine == GLCV_ENGINE_COMPUTE;
}

/* The encoder, on `engine`; auto falls back to the CPU engine where the GL engines cannot run. */
static int create_delta(stream_encoder *e, glcv_engine_mode engine)
{
    const stream_encoder_params *p = &e->p;
    glcv_delta_params dp = GLCV_DELTA_PARAMS(.width = p->width, .height = p->height,
                                             .format = p->filter == STREAM_FILTER_GRAY ? GLCV_PIXEL_GRAY8
                                                                                       : GLCV_PIXEL_RGB8,
                                             .threshold = p->threshold, .keyframe_interval = p->keyframe_interval,
                                             .engine = engine, .logger = p->logger);
    /* auto on a context: the GL engines if they can run there (the library says why not only
     * with --verbose), else the CPU engine */
    int fallback = engine == GLCV_ENGINE_AUTO && e->ctx;
    if (fallback && p->logger.max_level < GLCV_LOG_DEBUG)
        dp.logger = (glcv_logger){0};
    glcv_status st = glcv_delta_create(&dp, &e->delta);
    if (st != GLCV_OK && fallback && (st == GLCV_ERROR_UNSUPPORTED || st == GLCV_ERROR_GL)) {
        cli_warning("the encoder cannot run on this OpenGL context (%s): using its CPU engine",
                    glcv_status_string(st));
        dp.engine = GLCV_ENGINE_CPU;
        dp.logger = p->logger;
        st = glcv_delta_create(&dp, &e->delta);
    }
    if (st == GLCV_OK)
        st = glcv_delta_get_params(e->delta, &e->resolved);
    return st == GLCV_OK ? CLI_OK : cli_lib_error("cannot create the encoder", st);
}

/* CLI_OK, or the error after GL calls that did `what`. */
static int gl_done(const char *what)
{
    GLenum err = glGetError();
    if (err == GL_NO_ERROR)
        return CLI_OK;
    cli_error("cannot %s (GL error 0x%04x)", what, err);
    return CLI_FAIL;
}

/* A texture of the frame's size, nearest filtering, no pixels yet. */
static GLuint frame_sized_texture(const stream_encoder *e, GLint internal, GLenum format)
{
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexImage2D(GL_TEXTURE_2D, 0, internal, e->p.width, e->p.height, 0, format, GL_UNSIGNED_BYTE, NULL);
    glBindTexture(GL_TEXTURE_2D, 0);
    return tex;
}

/* The frame's texture (RGB8, the frame's size). */
static int create_frame_texture(stream_encoder *e)
{
    e->frame_tex = frame_sized_texture(e, GL_RGB8, GL_RGB);
    return gl_done("create the frame's texture");
}

static int upload(stream_encoder *e, const glcv_image *frame)
{
    glBindTexture(GL_TEXTURE_2D, e->frame_tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, (GLint)(glcv_image_stride(frame) / 3));
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, frame->width, frame->height, GL_RGB, GL_UNSIGNED_BYTE, frame->data);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glBindTexture(GL_TEXTURE_2D, 0);
    return gl_done("upload the frame");
}

/* A shader of the compose pass, or 0 after printing why. */
static GLuint compile_shader(GLenum type, const char *source)
{
    GLuint shader = glCreateShader(type);
    glShaderSource(shader, 1, &source, NULL);
    glCompileShader(shader);
    GLint ok = 0;
    glGetShaderiv(shader, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[512] = "";
        glGetShaderInfoLog(shader, sizeof log, NULL, log);
        cli_error("the segment filter's compose pass does not compile: %s", log);
        glDeleteShader(shader);
        return 0;
    }
    return shader;
}

/* The compose pass of the GL path: its program, an empty vertex array (core profiles draw with
 * one bound) and the sent frame's texture (RGBA8: colour-renderable everywhere) in a framebuffer. */
static int create_compose_pass(stream_encoder *e)
{
    GLuint vs = compile_shader(GL_VERTEX_SHADER, compose_vs), fs = vs ? compile_shader(GL_FRAGMENT_SHADER, compose_fs) : 0;
    if (!vs || !fs) {
        glDeleteShader(vs);
        return CLI_FAIL;
    }
    e->compose_program = glCreateProgram();
    glAttachShader(e->compose_program, vs);
    glAttachShader(e->compose_program, fs);
    glLinkProgram(e->compose_program);
    glDeleteShader(vs);
    glDeleteShader(fs);
    GLint ok = 0;
    glGetProgramiv(e->compose_program, GL_LINK_STATUS, &ok);
    if (!ok) {
        cli_error("the segment filter's compose pass does not link");
        return CLI_FAIL;
    }
    glUseProgram(e->compose_program);
    glUniform1i(glGetUniformLocation(e->compose_program, "u_frame"), 0);
    glUniform1i(glGetUniformLocation(e->compose_program, "u_mask"), 1);
    glUniform1i(glGetUniformLocation(e->compose_program, "u_background"), 2);
    glUseProgram(0);
    glGenVertexArrays(1, &e->compose_vao);
    e->sent_tex = frame_sized_texture(e, GL_RGBA8, GL_RGBA);
    glGenFramebuffers(1, &e->sent_fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, e->sent_fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, e->sent_tex, 0);
    GLenum complete = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    if (complete != GL_FRAMEBUFFER_COMPLETE) {
        cli_error("the segment filter's framebuffer is incomplete (0x%04x)", complete);
        return CLI_FAIL;
    }
    return gl_done("create the segment filter's compose pass");
}

/* GL path: sent_tex = the frame where the mask is 1, the background where it is 0. */
static int compose_gl(stream_encoder *e)
{
    unsigned int mask = glcv_segment_mask_texture(e->seg), background = glcv_segment_background_texture(e->seg);
    if (!mask || !background) {
        cli_error("the segmenter gave no %s texture", mask ? "background" : "mask");
        return CLI_FAIL;
    }
    glBindFramebuffer(GL_FRAMEBUFFER, e->sent_fbo);
    glViewport(0, 0, e->p.width, e->p.height);
    glDisable(GL_BLEND);
    glDisable(GL_DEPTH_TEST);
    glDisable(GL_SCISSOR_TEST);
    glUseProgram(e->compose_program);
    const unsigned int textures[3] = {e->frame_tex, mask, background};
    for (int i = 0; i < 3; i++) {
        glActiveTexture(GL_TEXTURE0 + (GLenum)i);
        glBindTexture(GL_TEXTURE_2D, textures[i]);
    }
    glBindVertexArray(e->compose_vao);
    glDrawArrays(GL_TRIANGLES, 0, 3);
    glBindVertexArray(0);
    for (int i = 2; i >= 0; i--) {
        glActiveTexture(GL_TEXTURE0 + (GLenum)i);
        glBindTexture(GL_TEXTURE_2D, 0);
    }
    glUseProgram(0);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    return gl_done("compose the segment filter's frame");
}

/* Host path: e->sent = the frame where e->mask is nonzero, e->background elsewhere. */
static void compose_host(stream_encoder *e, const glcv_image *frame)
{
    size_t frame_stride = glcv_image_stride(frame), mask_stride = glcv_image_stride(&e->mask);
    size_t bg_stride = glcv_image_stride(&e->background), sent_stride = glcv_image_stride(&e->sent);
    for (int y = 0; y < e->p.height; y++) {
        const uint8_t *f = frame->data + (size_t)y * frame_stride, *m = e->mask.data + (size_t)y * mask_stride;
        const uint8_t *b = e->background.data + (size_t)y * bg_stride;
        uint8_t *out = e->sent.data + (size_t)y * sent_stride;
        for (int x = 0; x < e->p.width; x++)
            memcpy(out + 3 * x, (m[x] ? f : b) + 3 * x, 3);
    }
}

int stream_encoder_create(const stream_encoder_params *params, stream_encoder **out)
{
    *out = NULL;
    stream_encoder *e = calloc(1, sizeof *e);
    if (!e)
        return cli_out_of_memory();
    e->p = *params;
    *out = e;
    glcv_engine_mode engine = params->seg->engine;
    int rc = cli_context_for_engine(&engine, &e->p.logger, &e->ctx);
    glcv_segment_params sp;
    if (rc == CLI_OK && params->filter == STREAM_FILTER_SEGMENT) {
        rc = cli_segmenter_make(params->seg, params->args, params->width, params->height, 1, 0, engine, &e->p.logger,
                                &e->seg, &sp);
        e->seg_engine = sp.engine;
        glcv_status st = rc == CLI_OK ? glcv_segment_learn_begin(e->seg) : GLCV_OK;
        if (st != GLCV_OK)
            rc = cli_lib_error("cannot start learning the background", st);
    }
    if (rc == CLI_OK)
        rc = create_delta(e, engine);
    if (rc == CLI_OK && e->seg && on_gl(e->seg_engine) && on_gl(e->resolved.engine))
        rc = create_frame_texture(e);
    if (rc == CLI_OK && e->frame_tex)
        rc = create_compose_pass(e);
    if (rc == CLI_OK && !on_gl(e->resolved.engine) && !(e->seg && on_gl(e->seg_engine)))
        glcv_context_destroy(&e->ctx); /* nothing runs on it: its memory back */
    if (rc == CLI_OK && e->seg && !e->frame_tex) {
        glcv_status st = glcv_image_alloc(params->width, params->height, GLCV_PIXEL_GRAY8, &e->mask);
        if (st == GLCV_OK)
            st = glcv_image_alloc(params->width, params->height, GLCV_PIXEL_RGB8, &e->background);
        if (st == GLCV_OK)
            st = glcv_image_alloc(params->width, params->height, GLCV_PIXEL_RGB8, &e->sent);
        if (st != GLCV_OK)
            rc = cli_lib_error("the segment filter's images", st);
    }
    if (rc != CLI_OK) {
        stream_encoder_destroy(out);
        return rc;
    }
    int n = snprintf(e->describe, sizeof e->describe, "engine %s", glcv_engine_mode_string(e->resolved.engine));
    if (e->seg)
        n += snprintf(e->describe + n, sizeof e->describe - (size_t)n, ", segmenter %s%s",
                      glcv_engine_mode_string(e->seg_engine), e->frame_tex ? " (frames as textures)" : "");
    snprintf(e->describe + n, sizeof e->describe - (size_t)n, " on %s",
             e->ctx && (on_gl(e->resolved.engine) || on_gl(e->seg_engine)) ? glcv_context_describe(e->ctx) : "CPU");
    if (!params->quiet) {
        fprintf(stderr, "glcv: %s\n", e->describe);
        if (e->seg)
            fprintf(stderr, "glcv: learning the background from the first %d frame%s (sent whole meanwhile)\n",
                    params->learn, params->learn == 1 ? "" : "s");
    }
    return CLI_OK;
}

/* segment: learns from the frame, or segments it; *use_mask says whether the encoder takes the mask. */
static int segment(stream_encoder *e, const glcv_image *frame, int *use_mask)
{
    glcv_status st = GLCV_OK;
    *use_mask = e->learned;
    if (!e->learned) {
        st = e->frame_tex ? glcv_segment_learn_add_texture(e->seg, e->frame_tex) : glcv_segment_learn_add(e->seg, frame);
        if (st != GLCV_OK)
            return cli_lib_error("cannot learn the background", st);
        if (e->frames + 1 < e->p.learn)
            return CLI_OK;
        glcv_segment_params resolved;
        int rc = cli_segmenter_learn_end(e->seg, e->p.learn, !e->p.quiet, 0, 1, &resolved);
        e->learned = rc == CLI_OK;
        return rc;
    }
    st = e->frame_tex ? glcv_segment_frame_texture(e->seg, e->frame_tex, 0) : glcv_segment_frame(e->seg, frame, 1);
    if (st == GLCV_OK && !e->frame_tex)
        st = glcv_segment_read_mask(e->seg, &e->mask);
    /* the background as the segmenter has it after this frame (it adapts where the mask is 0) */
    if (st == GLCV_OK && !e->frame_tex)
        st = glcv_segment_read_background(e->seg, &e->background);
    if (st != GLCV_OK)
        return cli_lib_error("segmentation", st);
    if (e->frame_tex)
        return compose_gl(e);
    compose_host(e, frame);
    return CLI_OK;
}

int stream_encoder_frame(stream_encoder *e, const glcv_image *frame, const uint8_t **packet, size_t *bytes, double *ms)
{
    double t0 = cli_now();
    int use_mask = 0, rc = CLI_OK;
    if (e->frame_tex)
        rc = upload(e, frame);
    if (rc == CLI_OK && e->seg)
        rc = segment(e, frame, &use_mask);
    if (rc != CLI_OK)
        return rc;
    /* segment, once learned: the composed frame, whole (see compose_fs) */
    glcv_status st = e->frame_tex ? glcv_delta_encode_texture(e->delta, use_mask ? e->sent_tex : e->frame_tex, 0, 0,
                                                              packet, bytes)
                                  : glcv_delta_encode(e->delta, use_mask ? &e->sent : frame, NULL, 0, packet, bytes);
    *ms = 1e3 * (cli_now() - t0);
    if (st != GLCV_OK) {
        char what[64];
        snprintf(what, sizeof what, "cannot encode frame %lld", (long long)e->frames);
        return cli_lib_error(what, st);
    }
    e->frames++;
    return CLI_OK;
}

int stream_encoder_snapshot(stream_encoder *e, const uint8_t **packet, size_t *bytes)
{
    glcv_status st = glcv_delta_snapshot(e->delta, packet, bytes);
    return st == GLCV_OK ? CLI_OK : cli_lib_error("cannot make a snapshot keyframe", st);
}

size_t stream_encoder_frame_bytes(const stream_encoder *e)
{
    return (size_t)e->p.width * (size_t)e->p.height * (size_t)glcv_pixel_format_size(e->resolved.format);
}

const char *stream_encoder_format_name(const stream_encoder *e)
{
    return e->resolved.format == GLCV_PIXEL_GRAY8 ? "gray8" : "rgb8";
}

const char *stream_encoder_describe(const stream_encoder *e)
{
    return e->describe;
}

void stream_encoder_destroy(stream_encoder **ep)
{
    stream_encoder *e = ep ? *ep : NULL;
    if (!e)
        return;
    glcv_delta_destroy(&e->delta);
    glcv_segment_destroy(&e->seg);
    if (e->frame_tex)
        glDeleteTextures(1, &e->frame_tex);
    if (e->sent_fbo)
        glDeleteFramebuffers(1, &e->sent_fbo);
    if (e->sent_tex)
        glDeleteTextures(1, &e->sent_tex);
    if (e->compose_vao)
        glDeleteVertexArrays(1, &e->compose_vao);
    if (e->compose_program)
        glDeleteProgram(e->compose_program);
    glcv_image_free(&e->mask);
    glcv_image_free(&e->background);
    glcv_image_free(&e->sent);
    glcv_context_destroy(&e->ctx);
    free(e);
    *ep = NULL;
}
