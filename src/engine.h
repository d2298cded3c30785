/* The GL engine (private): programs from shaders/, textures, and one pass primitive that runs
 * the same GLSL as a fragment pass (FBO render-to-texture) or a compute pass (image stores).
 *
 * A pass's shader source defines `void glcv_pass(ivec2 pos)` that computes the output texel at
 * `pos` (absolute texel coordinates of the outputs) and writes output i with
 * `glcv_store<i>(value)` (vec4 for normalised/float formats, uvec4 for integer formats).
 * The engine prepends `#version`, the defines, the output declarations and a main().
 * Uniform `ivec4 glcv_region` (x, y, w, h of the output region) is always declared.
 * Compute programs may define GLCV_LOCAL_X/GLCV_LOCAL_Y (work group size, default 16 x 8) and
 * GLCV_TILED (work-group-level code: see glcv_pass.groups_x) in their defines.
 *
 * Layered programs (their defines contain "#define GLCV_LAYERED") run once per layer of their
 * outputs, which are texture arrays, all layers in one draw (instanced, the layer chosen by a
 * geometry shader) or one dispatch (the layer is the z of the grid); `int glcv_layer` is the
 * layer being computed and glcv_store<i> writes to it. Their inputs are sampler2DArray.
 * A shader that runs both ways declares its samplers glcv_sampler2D / glcv_usampler2D, fetches
 * at glcv_at(ivec2 p), samples at glcv_uv(vec2 c) and stores images at glcv_at(p): arrays and
 * the current layer when layered, plain 2D otherwise.
 *
 * Every call needs the engine's GL context current. Not thread-safe by itself: the module that
 * owns an engine serialises calls. */
#ifndef GLCV_ENGINE_H
#define GLCV_ENGINE_H

#include <epoxy/gl.h>

#include <glcv/core.h>

#include "gl.h"

#define GLCV_MAX_INPUTS GLCV_GL_STATE_UNITS /* units the state save covers */
#define GLCV_MAX_OUTPUTS GLCV_GL_STATE_IMAGES
#define GLCV_MAX_UNIFORMS 12

typedef struct glcv_engine glcv_engine;
typedef struct glcv_program glcv_program;

/* Texture formats the engine creates and renders/stores to. */
typedef enum glcv_format {
    GLCV_FORMAT_R8 = 0,   /* unorm, image format r8 */
    GLCV_FORMAT_RG8UI,    /* unsigned integer, rg8ui */
    GLCV_FORMAT_RGBA8,    /* unorm, rgba8 */
    GLCV_FORMAT_RGBA32F,  /* float, rgba32f */
    GLCV_FORMAT_RGBA32I,  /* signed integer, rgba32i */
    GLCV_FORMAT_R32UI,    /* unsigned integer, r32ui */
    GLCV_FORMAT_R16UI,    /* unsigned integer, r16ui */
    GLCV_FORMAT_RGBA16UI, /* unsigned integer, rgba16ui */
    GLCV_FORMAT_R8UI,     /* unsigned integer, r8ui */
    GLCV_FORMAT_RGBA8UI,  /* unsigned integer, rgba8ui */
    GLCV_FORMAT_R32F,     /* float, r32f */
    GLCV_FORMAT_RGBA32UI, /* unsigned integer, rgba32ui */
    GLCV_FORMAT_COUNT
} glcv_format;

/* A texture the engine made: GL_TEXTURE_2D when `layers` is 0, else GL_TEXTURE_2D_ARRAY with
 * that many layers (one per stream of a batch); or, when `buffer` is set, a GL_TEXTURE_BUFFER of
 * R32UI words over that device buffer of `bytes` (glcv_engine_buffer_create), or with `id` 0 the
 * buffer alone (glcv_engine_storage_create). */
typedef struct glcv_tex {
    GLuint id;
    int width, height;
    int layers;
    glcv_format format;
    GLuint buffer;
    size_t bytes;
} glcv_tex;

/* How a pass samples an input (a sampler object: the texture's own state is never changed). */
typedef enum glcv_sampling {
    GLCV_SAMPLE_NEAREST = 0,      /* nearest, clamp to edge (for texelFetch) */
    GLCV_SAMPLE_LINEAR_ZERO,      /* bilinear, clamp to a zero border (the neighbourhood trick) */
    GLCV_SAMPLE_COUNT
} glcv_sampling;

typedef struct glcv_pass_input {
    const char *name; /* sampler uniform name */
    GLuint texture;
    glcv_sampling sampling;
    GLenum target; /* GL_TEXTURE_2D, or GL_TEXTURE_2D_ARRAY for a layered input */
} glcv_pass_input;

typedef enum glcv_uniform_type {
    GLCV_U_1F = 1, GLCV_U_2F, GLCV_U_4F, GLCV_U_1I, GLCV_U_2I, GLCV_U_4I,
    GLCV_U_4IV /* an ivec4 array: `array` holds 4 * `count` ints */
} glcv_uniform_type;

typedef struct glcv_uniform {
    const char *name;
    glcv_uniform_type type;
    float f[4];
    int i[4];
    const int *array;
    int count;
} glcv_uniform;

/* An image a pass writes besides its outputs (a buffer texture, say), declared by the shader
 * itself as `layout(<format>) uniform writeonly <type> <name>`. GL 4.2. */
typedef struct glcv_pass_image {
    const char *name;
    GLuint texture;
    GLenum format; /* internal format, e.g. GL_R32UI */
} glcv_pass_image;
#define GLCV_MAX_IMAGES 2
#define GLCV_MAX_STORAGE GLCV_GL_STATE_STORAGE /* storage buffer binding points 0..7 (GL 4.3) */

typedef struct glcv_pass {
    glcv_program *program;
    const char *label;         /* timing name (static string) */
    int x, y, width, height;   /* output region */
    glcv_pass_input inputs[GLCV_MAX_INPUTS];
    int n_inputs;
    const glcv_tex *outputs[GLCV_MAX_OUTPUTS];
    int n_outputs;
    glcv_uniform uniforms[GLCV_MAX_UNIFORMS];
    int n_uniforms;
    glcv_pass_image images[GLCV_MAX_IMAGES];
    int n_images;
    GLuint storage[GLCV_MAX_STORAGE]; /* buffers on storage binding points 0..7 (0: none) */
    /* Compute programs built with GLCV_TILED: the number of work groups; glcv_pass() is called
     * once per invocation with the work group's coordinates. */
    int groups_x, groups_y;
    /* Compute, not layered: a nonzero `indirect` buffer holds the work groups (three uints at
     * `indirect_offset`, a multiple of 4) written by an earlier pass; they replace groups_x/y. */
    GLuint indirect;
    size_t indirect_offset;
} glcv_pass;

/* Building a pass: a zeroed pass of `program` over width x height (timed as `label`), then its
 * inputs, outputs and uniforms in the order the program declares them. The pass keeps the
 * pointers it is given (names, output textures, uniform arrays): they must outlive the run. */
glcv_pass glcv_pass_make(glcv_program *program, const char *label, int width, int height);
void glcv_pass_add_input(glcv_pass *pass, const char *name, GLuint texture, glcv_sampling sampling);
/* An engine texture as input: a texture array is bound as one (sampler2DArray), a buffer texture
 * as one (usamplerBuffer). */
void glcv_pass_add_input_tex(glcv_pass *pass, const char *name, const glcv_tex *texture, glcv_sampling sampling);
/* An image the pass writes (bound on the image unit after its outputs). */
void glcv_pass_add_image(glcv_pass *pass, const char *name, GLuint texture, GLenum format);
/* A buffer the shader declares as `layout(std430, binding = <binding>) buffer ...` (0..7). */
void glcv_pass_add_storage(glcv_pass *pass, int binding, GLuint buffer);
void glcv_pass_add_output(glcv_pass *pass, const glcv_tex *texture);
/* GLCV_U_1I, 2I or 4I: up to four ints (the unused ones 0). */
void glcv_pass_add_uniform_i(glcv_pass *pass, const char *name, glcv_uniform_type type, int a, int b);
/* GLCV_U_1F, 2F or 4F: 1, 2 or 4 floats from `v`. */
void glcv_pass_add_uniform_f(glcv_pass *pass, const char *name, glcv_uniform_type type, const float *v);
/* GLCV_U_4IV: `count` ivec4s from `array` (4 * count ints). */
void glcv_pass_add_uniform_4iv(glcv_pass *pass, const char *name, const int *array, int count);

/* Creates an engine in the current context. `mode` AUTO/DEFAULT picks per renderer (timed once
 * per process and renderer, cached); FRAGMENT needs GL 3.3, COMPUTE 4.3. */
glcv_status glcv_engine_create(glcv_engine_mode mode, int timing, const glcv_logger *logger, glcv_engine **out);
/* Frees the engine; deletes its GL objects when the context it was made in is current, else
 * leaves them to that context (logged as a warning: destroyed with it, or leaked when it lives on)
 * and makes no GL call. */
void glcv_engine_destroy(glcv_engine **engine);

/* Whether the context the engine was made in is current on this thread (not destroyed, not
 * another context). A module checks it before any GL work with its objects: GLCV_OK, or
 * NO_CONTEXT logged as "<what>: the OpenGL context ... is not current". */
int glcv_engine_context_current(const glcv_engine *e);
glcv_status glcv_engine_check_context(const glcv_engine *e, const char *what);

/* A module's public call on object OBJ (with the field `engine`, NULL for the CPU engine): NULL
 * is INVALID_ARGUMENT; under the object's lock, the engine's context is checked before CALL runs. */
#define GLCV_LOCKED_GL_CALL(OBJ, WHAT, CALL)                                                                  \
    do {                                                                                                      \
        if (!(OBJ))                                                                                           \
            return GLCV_ERROR_INVALID_ARGUMENT;                                                               \
        pthread_mutex_lock(&(OBJ)->lock);                                                                     \
        glcv_status locked_status_ = (OBJ)->engine ? glcv_engine_check_context((OBJ)->engine, (WHAT)) : GLCV_OK; \
        if (locked_status_ == GLCV_OK)                                                                        \
            locked_status_ = (CALL);                                                                          \
        pthread_mutex_unlock(&(OBJ)->lock);                                                                   \
        return locked_status_;                                                                                \
    } while (0)
glcv_engine_mode glcv_engine_mode_of(const glcv_engine *engine);
const glcv_logger *glcv_engine_logger(const glcv_engine *engine);

/* Compiles (once; cached by key) a program from shader files (names in shaders/, concatenated
 * in order), `defines` (text inserted after the #version line, may be NULL) and the output
 * formats (1..GLCV_MAX_OUTPUTS; none for a compute program that writes only storage buffers).
 * The program lives until the engine is destroyed. */
glcv_status glcv_engine_program(glcv_engine *engine, const char *key, const char *const *files, int n_files,
                                const char *defines, const glcv_format *outputs, int n_outputs,
                                glcv_program **out);

/* Texture creation, validated (GL errors; renderable and storable in the engine's mode). */
glcv_status glcv_engine_tex_create(glcv_engine *engine, glcv_tex *tex, int width, int height, glcv_format format);
/* A texture array of `layers` >= 1 layers (UNSUPPORTED above GL_MAX_ARRAY_TEXTURE_LAYERS). */
glcv_status glcv_engine_tex_create_layers(glcv_engine *engine, glcv_tex *tex, int width, int height, int layers,
                                          glcv_format format);
void glcv_engine_tex_destroy(glcv_engine *engine, glcv_tex *tex);
/* Sets every texel of an engine texture to zero. Between begin and end. */
glcv_status glcv_engine_clear(glcv_engine *engine, const glcv_tex *tex);

/* A device buffer of `bytes` (rounded up to whole words; its contents undefined) and its R32UI
 * buffer texture. UNSUPPORTED above GL_MAX_TEXTURE_BUFFER_SIZE words. Destroyed with
 * glcv_engine_tex_destroy. */
glcv_status glcv_engine_buffer_create(glcv_engine *engine, glcv_tex *tex, size_t bytes);
/* The same without the texture (id 0): a buffer that passes use as storage only (compute).
 * UNSUPPORTED above GL_MAX_SHADER_STORAGE_BLOCK_SIZE. */
glcv_status glcv_engine_storage_create(glcv_engine *engine, glcv_tex *tex, size_t bytes);

/* Begin/end of a module call: saves the host's GL state, sets what passes need; end restores
 * it. Calls nest (only the outermost saves/restores). */
void glcv_engine_begin(glcv_engine *engine);
void glcv_engine_end(glcv_engine *engine);

/* Runs one pass. Between begin and end. */
glcv_status glcv_engine_run(glcv_engine *engine, const glcv_pass *pass);

/* Makes image-store writes visible to texture fetches, framebuffer reads and transfers
 * (compute mode; no-op in fragment mode). Call before reading outputs outside passes. */
void glcv_engine_sync_writes(glcv_engine *engine);

/* Pinned staging memory for uploads: returns memory for `bytes` in slot *slot of a small ring,
 * after waiting until the GPU has finished copying what that slot held before. Between begin
 * and end (the memory stays valid after end, until the slot comes round again). */
glcv_status glcv_engine_stage(glcv_engine *engine, size_t bytes, void **ptr, int *slot);

/* The GL format of the bytes of a colour pixel format (GL_RGB, GL_RGBA, GL_BGR, GL_BGRA); 0 for
 * GRAY8 and unknown values. */
GLenum glcv_engine_pixel_gl_format(glcv_pixel_format format);

/* Frames already on the GPU, without a trip through host memory. pack_layers writes layers
 * 0..layers-1 of level 0 (width x height) of a GL_TEXTURE_2D_ARRAY - a caller's frames (checked
 * with glcv_gl_check_frames) or an engine texture, 8 bits a channel - into `buffer` (of `bytes`)
 * from offset 0, as `gl_format` (GL_RED, GL_RGB, GL_BGR, GL_RGBA, GL_BGRA)/GL_UNSIGNED_BYTE for
 * glGetTexImage, rows tightly packed, layer after layer: the bytes a host image set of those pixels
 * has. Compute engines write them with a pass (shaders/engine_pack.glsl); fragment engines with
 * glGetTextureSubImage (GL 4.5) or glReadPixels of each layer through a framebuffer (older GL; the
 * format must be colour-renderable). copy_layers puts the colours of such an array into engine
 * texture `dst` (RGBA8: every layer of an array, or a 2D texture from layer 0), alpha 1, with a
 * pass on the GPU. Between begin and end. */
glcv_status glcv_engine_pack_layers(glcv_engine *engine, GLuint texture, int layers, int width, int height,
                                    GLenum gl_format, GLuint buffer, size_t bytes);
glcv_status glcv_engine_copy_layers(glcv_engine *engine, GLuint texture, const glcv_tex *dst);

/* Copies a staged, tightly packed colour image (RGB8, RGBA8, BGR8, BGRA8) into a texture on the
 * GPU side (DMA from pinned memory); into every layer of a texture array, the layers' images one
 * after the other in the slot. Between begin and end. */
glcv_status glcv_engine_upload_staged(glcv_engine *engine, const glcv_tex *tex, int slot, glcv_pixel_format format,
                                      int width, int height);

/* Copies a staged texture's worth of texels (`gl_format`/`gl_type` as for glTexSubImage2D, rows
 * tightly packed, tex->width x tex->height) into 2D texture `tex`. Between begin and end. */
glcv_status glcv_engine_upload_staged_texels(glcv_engine *engine, const glcv_tex *tex, int slot, GLenum gl_format,
                                             GLenum gl_type);

/* Copies staging slot `slot` (its first `bytes`) into the device buffer of `dst` (a buffer copy:
 * the copy engine, overlapped with passes that do not use `dst`). Between begin and end. */
glcv_status glcv_engine_copy_staged(glcv_engine *engine, int slot, const glcv_tex *dst, size_t bytes);

/* Passes that read the staging memory itself (glcv_engine_stage_buffer): the fence that says the
 * GPU is done with slot `slot`, to set after the last pass that reads it. Between begin and end. */
void glcv_engine_stage_fence(glcv_engine *engine, int slot);
/* The buffer of staging slot `slot` (persistent mapping, GL 4.4, only: 0 otherwise). */
GLuint glcv_engine_stage_buffer(glcv_engine *engine, int slot);

/* Uploads host pixels (any glcv_pixel_format but GRAY8, any stride) into an RGBA8 texture of
 * the same size through the staging ring. Between begin and end. */
glcv_status glcv_engine_upload(glcv_engine *engine, const glcv_tex *tex, const glcv_image *image);

/* Uploads client memory (`gl_format`/`gl_type` as for glTexSubImage3D, rows tightly packed,
 * layers one after the other) into layers first..first+count-1 of an engine texture array
 * (first 0, count 1 for a 2D texture). Small data (parameters, factors): it is not staged.
 * Between begin and end. */
glcv_status glcv_engine_upload_layers(glcv_engine *engine, const glcv_tex *tex, int first, int count,
                                     GLenum gl_format, GLenum gl_type, const void *data);

/* Reads a texture's level 0 into host memory: `gl_format`/`gl_type` as for glReadPixels,
 * rows tightly packed with `row_bytes` per row. Between begin and end. */
glcv_status glcv_engine_read(glcv_engine *engine, GLuint texture, int width, int height, GLenum gl_format,
                             GLenum gl_type, void *dst, size_t row_bytes);

/* Downloads, overlapped with later work: queues a copy of every layer of an engine texture
 * (`gl_format`/`gl_type` as for glGetTexImage, rows tightly packed, layers one after the other)
 * into slot *slot of a small ring of pixel-pack buffers and returns at once. download_wait
 * waits for the copy of that slot and returns its memory, valid until the slot comes round
 * again (GLCV_ENGINE_DOWNLOAD_SLOTS downloads later). Between begin and end. */
#define GLCV_ENGINE_DOWNLOAD_SLOTS 3
glcv_status glcv_engine_download(glcv_engine *engine, const glcv_tex *tex, GLenum gl_format, GLenum gl_type,
                                 size_t bytes, int *slot);
glcv_status glcv_engine_download_wait(glcv_engine *engine, int slot, const void **ptr);
/* Downloads that passes write themselves: reserves the next slot (of at least `bytes`) and
 * returns it (its buffer: glcv_engine_download_buffer); after the passes that write it,
 * download_fence, then download_wait as above. */
glcv_status glcv_engine_download_reserve(glcv_engine *engine, size_t bytes, int *slot);
void glcv_engine_download_fence(glcv_engine *engine, int slot);
/* The buffer of download slot `slot` (for passes that write it as storage). */
GLuint glcv_engine_download_buffer(glcv_engine *engine, int slot);

/* Waits for a fence (the GPU finishing what came before it), flushing once, and deletes it (*fence
 * becomes NULL; NULL is a no-op). */
void glcv_engine_wait_fence(GLsync *fence);

/* Validates a caller's texture as a pass input: a GL_TEXTURE_2D of the given size with a colour
 * format. */
glcv_status glcv_engine_check_input(glcv_engine *engine, GLuint texture, int width, int height);

/* Timing frames: passes run between frame_begin and frame_end are timed (if timing is on). */
void glcv_engine_frame_begin(glcv_engine *engine);
void glcv_engine_frame_end(glcv_engine *engine);
/* Per-label GPU times of the newest completed frame. */
int glcv_engine_timings(glcv_engine *engine, glcv_timing *out, int capacity, int wait);

#endif
