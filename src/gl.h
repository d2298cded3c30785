/* GL helpers (private service): error checks, the save and restore of GL state behind the GL
 * rules of glcv/core.h, and the texture helpers every module uses to take a caller's texture or
 * to hand one out - validation, read-back to host memory, upload from host memory. Every
 * function needs a current GL context. Includes no module header. */
#ifndef GLCV_GL_H
#define GLCV_GL_H

#include <epoxy/gl.h>

#include <glcv/core.h>

#include <stddef.h>
#include <stdint.h>

/* ---- which context: objects made in one must never touch another, or a destroyed one ---------- */

/* The current context (EGL, else GLX) of this thread, and for contexts glcv_context_create made,
 * a serial number that a later context at the same address does not share; ctx NULL when none is
 * current. Implemented in context.c. */
typedef struct glcv_gl_token {
    const void *ctx;
    uint64_t serial; /* 0 for a host application's context */
} glcv_gl_token;
glcv_gl_token glcv_gl_current_token(void);
/* Nonzero when `t` (taken when an object was made) is the current context. */
int glcv_gl_token_current(glcv_gl_token t);

/* Fault injection, for the tests only (not part of the API): the next `count` calls that glcv
 * makes of the EGL function `call` ("eglInitialize", "eglCreateContext", "eglMakeCurrent",
 * "eglCreatePbufferSurface") fail as the driver would, with `egl_error` (0: EGL_BAD_ALLOC), without
 * calling it; each call has its own count. NULL or an unknown name stops every injection, count 0
 * that call's. Process-wide; thread-safe. */
void glcv_egl_fail_next(const char *call, int count, int egl_error);

/* Logs every pending GL error as "<what>: <name> (0x....)" and returns GLCV_ERROR_GL
 * (GLCV_ERROR_OUT_OF_MEMORY for GL_OUT_OF_MEMORY); GLCV_OK when there was none. */
glcv_status glcv_gl_check(const glcv_logger *logger, const char *what);

/* Clears errors the host left pending, so that glcv's own are attributed correctly. */
void glcv_gl_clear_errors(void);

/* ---- state: what glcv touches, saved before and restored after ------------------------------- */

/* Texture and sampler units saved and restored (the engine binds at most this many inputs). */
#define GLCV_GL_STATE_UNITS 8
/* Image units saved and restored (the engine binds at most this many outputs). */
#define GLCV_GL_STATE_IMAGES 8
/* Shader storage buffer binding points saved and restored (with the images, GL 4.3). */
#define GLCV_GL_STATE_STORAGE 8

typedef struct glcv_glstate glcv_glstate;
glcv_glstate *glcv_glstate_new(void);
void glcv_glstate_free(glcv_glstate *state);
/* Saves what glcv touches and sets the defaults passes need (no blending, depth, stencil, scissor
 * or other per-fragment tests; fill mode; no pixel buffers bound; unit 0 active); `images`
 * nonzero also saves the image-unit bindings (GL 4.2+). */
void glcv_glstate_save(glcv_glstate *state, int images);
void glcv_glstate_restore(const glcv_glstate *state);

/* ---- textures ----------------------------------------------------------------------------------- */

/* Validates a caller's texture as an input: a GL_TEXTURE_2D whose level 0 is width x height,
 * with a normalised or float colour format (not sRGB) and base level 0. Binds it on the active
 * unit: call it with the state saved. Errors: INVALID_ARGUMENT (0, not a texture or not 2D, no
 * level 0), SIZE_MISMATCH, UNSUPPORTED (format), GL. */
glcv_status glcv_gl_check_input(GLuint texture, int width, int height, const glcv_logger *logger);

/* As glcv_gl_check_input, for a GL_TEXTURE_2D_ARRAY whose level 0 has exactly `layers` layers of
 * width x height (a batch of streams, one layer each); its internal format goes to *internal
 * when internal is not NULL. Binds it on the active unit: call it with the state saved.
 * Errors: INVALID_ARGUMENT (0, not a texture or not an array, no level 0, another number of
 * layers), SIZE_MISMATCH, UNSUPPORTED (format), GL. */
glcv_status glcv_gl_check_input_layers(GLuint texture, int width, int height, int layers, GLint *internal,
                                       const glcv_logger *logger);

/* A caller's frames array (the modules' *_frames_texture input): a
 * GL_TEXTURE_2D_ARRAY of at least `layers` layers (layer i is stream i; the others are not read)
 * whose level 0 is width x height, GL_RGBA8 or GL_RGB8. Binds it on the active unit: call it with
 * the state saved. Errors: INVALID_ARGUMENT (0, not a texture or not an array, no level 0, fewer
 * layers), SIZE_MISMATCH, UNSUPPORTED (another format, base level), GL. */
glcv_status glcv_gl_check_frames(GLuint texture, int width, int height, int layers, const glcv_logger *logger);

/* Reads level 0 of `texture` through the framebuffer `fbo` (bound as the read framebuffer and
 * left bound) with glReadPixels: `format`/`type` as for glReadPixels, `row_bytes` between rows
 * at `dst` (an offset when a pixel-pack buffer is bound). Call it with the state saved. */
glcv_status glcv_gl_read_pixels(GLuint fbo, GLuint texture, int width, int height, GLenum format, GLenum type,
                                void *dst, size_t row_bytes, const glcv_logger *logger);
/* As glcv_gl_read_pixels, for layer `layer` of a GL_TEXTURE_2D_ARRAY. */
glcv_status glcv_gl_read_pixels_layer(GLuint fbo, GLuint texture, int layer, int width, int height, GLenum format,
                                      GLenum type, void *dst, size_t row_bytes, const glcv_logger *logger);

/* Reads a caller's texture (checked as glcv_gl_check_input) into packed RGB8 host memory
 * (width * height * 3 bytes; values 0..1 scaled by 255 and rounded). Saves and restores the
 * state itself. Errors: NO_CONTEXT, those of glcv_gl_check_input. */
glcv_status glcv_gl_read_rgb(GLuint texture, int width, int height, uint8_t *rgb, const glcv_logger *logger);

/* As glcv_gl_read_rgb, for layer `layer` of a caller's GL_TEXTURE_2D_ARRAY of `layers` layers
 * (checked as glcv_gl_check_input_layers). Errors: as glcv_gl_read_rgb, and INVALID_ARGUMENT for
 * a layer outside 0..layers-1. */
glcv_status glcv_gl_read_rgb_layer(GLuint texture, int layers, int layer, int width, int height, uint8_t *rgb,
                                   const glcv_logger *logger);

/* Reads layers 0..layers-1 of a caller's frames array (checked as glcv_gl_check_frames) into host
 * memory: *frames becomes `layers` images in `format` (RGB8, or RGBA8 with alpha 255 from GL_RGB8),
 * tightly packed, row 0 first as the texture holds it, in one block with their pixels (free it;
 * NULL on failure). Saves and restores the state itself. Errors: NO_CONTEXT, OUT_OF_MEMORY, those
 * of glcv_gl_check_frames. */
glcv_status glcv_gl_read_frames(GLuint texture, int layers, int width, int height, glcv_pixel_format format,
                                glcv_image **frames, const glcv_logger *logger);

/* As glcv_gl_read_rgb, in `format` (GL_RED, GL_RGB, GL_BGR, GL_RGBA or GL_BGRA; a channel the
 * texture lacks reads as 0, alpha as 255): width * height * (1, 3 or 4) bytes at `dst`. */
glcv_status glcv_gl_read_bytes(GLuint texture, int width, int height, GLenum format, uint8_t *dst,
                               const glcv_logger *logger);

/* Makes *texture a GL_TEXTURE_2D of width x height and `internal` format holding `data` (format
 * and type as for glTexImage2D, rows tightly packed): created when *texture is 0 or no longer
 * a texture (nearest filtering, clamp to edge, one level), else updated in place. Saves and
 * restores the state itself. On failure a texture it created is deleted (*texture is 0); one
 * that existed is kept.
 * Errors: NO_CONTEXT, GL, OUT_OF_MEMORY. */
glcv_status glcv_gl_upload_texture(GLuint *texture, int width, int height, GLenum internal, GLenum format,
                                   GLenum type, const void *data, const glcv_logger *logger);

#endif
