/* glcv core: the vocabulary every module shares - status codes, logging, engines, rectangles,
 * host images, timings - and the rules every function follows.
 *
 * Thread safety: everything declared here may be called from any thread.
 *
 * Lifetimes: every object is an opaque handle made by glcv_X_create(params, &out) (a status;
 * *out is NULL on failure) and released by glcv_X_destroy(&handle), which accepts NULL and
 * &NULL and sets the handle to NULL. glcv_image is the one exception, because it is a plain
 * struct the caller owns rather than an object: glcv_image_alloc and glcv_image_load fill it
 * with pixels, glcv_image_free releases them.
 *
 * Arguments: a NULL object is INVALID_ARGUMENT (not logged: there is no logger to log it to);
 * every other refused argument - a NULL pointer, a size or count out of range, a NaN or infinite
 * real, an unknown enum value, an image whose stride is below a row or whose last row lies beyond
 * the address space - is INVALID_ARGUMENT, logged naming the argument through the object's logger
 * (or the `logger` argument; functions with neither log nothing). Sizes are multiplied in 64 bits.
 * An argument refused leaves the object as it was. Out-pointers: *out of a create is NULL on any
 * error; other outputs hold nothing to rely on after an error unless the function says what they
 * hold.
 *
 * The GL rules, for every function that takes a GL texture name, returns one, or runs on a GL
 * engine (the segmenter's FRAGMENT and COMPUTE engines, texture inputs of the CUDA modules):
 *  1. It works in the GL context current on the calling thread. An object that uses GL is
 *     used only while the context it was created in is current (or a context sharing its
 *     objects). Without a current context such a function returns GLCV_ERROR_NO_CONTEXT.
 *  2. It leaves the host's GL state as it found it: the texture (2D, 2D array and buffer) and
 *     sampler bindings of the units it uses (0..7) and the active unit, the draw and read
 *     framebuffers, the pixel pack and unpack, copy read and write and texture buffer bindings,
 *     the program, the vertex array, the image units 0..7, the shader storage buffer
 *     bindings 0..7 (general and indexed), the viewport, the
 *     pixel-store parameters, and the enables it turns off for its passes (blending, depth,
 *     stencil, scissor, culling and the other per-fragment tests, colour masks, polygon mode).
 *     What changes is the content of textures and buffers glcv owns. GL errors the host left
 *     pending before the call are cleared (GL cannot tell them apart from glcv's own).
 *  3. Texture names the caller passes in stay the caller's: glcv reads them (never writes or
 *     deletes them) during the call; a name glcv returns stays valid until the object that
 *     returned it is destroyed, and the caller must not delete or modify it.
 */
#ifndef GLCV_CORE_H
#define GLCV_CORE_H

#include <stddef.h>
#include <stdint.h>

#include <glcv/config.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(GLCV_BUILDING) && defined(__GNUC__)
#define GLCV_API __attribute__((visibility("default")))
#else
#define GLCV_API
#endif

/* Every fallible call returns a status. The logger (if any) receives the details.
 * "Whose fault" says who must act. */
typedef enum glcv_status {
    GLCV_OK = 0,
    /* Caller: a NULL pointer, a size < 1, a NaN/inf or out-of-range parameter, an unknown enum. */
    GLCV_ERROR_INVALID_ARGUMENT = 1,
    /* Caller: an image or texture whose size differs from the object's size. */
    GLCV_ERROR_SIZE_MISMATCH = 2,
    /* Caller: a call out of order (e.g. segmenting before a background was set). */
    GLCV_ERROR_STATE = 3,
    /* Environment: no OpenGL context is current, or none could be created. */
    GLCV_ERROR_NO_CONTEXT = 4,
    /* Environment: what the call needs is missing from this build, driver, device or processor
     * (a GL version, extension or texture format; CUDA; a CUDA device; an instruction set). */
    GLCV_ERROR_UNSUPPORTED = 5,
    /* GPU/driver: a GL error, a shader that failed to compile, an incomplete framebuffer. */
    GLCV_ERROR_GL = 6,
    /* Environment: memory could not be allocated. */
    GLCV_ERROR_OUT_OF_MEMORY = 7,
    /* Environment: a file could not be opened, read or written. */
    GLCV_ERROR_IO = 8,
    /* Caller's data: a file exists but cannot be decoded (corrupt or unknown format). */
    GLCV_ERROR_CORRUPT_DATA = 9,
    /* GPU/driver: a CUDA call failed (the logger names the call and CUDA's error). */
    GLCV_ERROR_CUDA = 10,
    /* Caller's data or settings: an input above a resource limit the caller can raise (the logger
     * names the input, the limit and the call that sets it), e.g. an image file whose header
     * claims more pixels than glcv_image_max_pixels. */
    GLCV_ERROR_LIMIT = 11
} glcv_status;

/* A short constant English text for a status ("invalid argument"); never NULL. */
GLCV_API const char *glcv_status_string(glcv_status status);

typedef enum glcv_log_level {
    GLCV_LOG_ERROR = 1,
    GLCV_LOG_WARN = 2,
    GLCV_LOG_INFO = 3,
    GLCV_LOG_DEBUG = 4
} glcv_log_level;

/* A log callback: `message` is valid only during the call and has no trailing newline.
 * It may be called from any thread that calls into the object that owns the logger. */
typedef void (*glcv_log_fn)(void *user, glcv_log_level level, const char *message);

/* A logger: fn == NULL means silent (the default). Messages above `max_level` are dropped;
 * max_level 0 means GLCV_LOG_INFO. The library prints nothing except through a logger. */
typedef struct glcv_logger {
    glcv_log_fn fn;
    void *user;
    glcv_log_level max_level;
} glcv_logger;

/* A ready-made log function that writes "glcv: <level>: <message>" to stderr; `user` unused.
 * For tools and tests: the library itself never installs it. */
GLCV_API void glcv_log_stderr(void *user, glcv_log_level level, const char *message);

/* Where a module runs: one enum for every module. Each module's header says which engines it
 * has and what AUTO picks there; asking a module for an engine it does not have is
 * GLCV_ERROR_INVALID_ARGUMENT, asking for one it has but this machine cannot run is
 * GLCV_ERROR_UNSUPPORTED. A module's get_params reports the engine in use (never AUTO).
 * 0 (DEFAULT) is AUTO. */
typedef enum glcv_engine_mode {
    GLCV_ENGINE_DEFAULT = 0,
    /* The module's fastest engine this machine can run (see the module's header). */
    GLCV_ENGINE_AUTO = 1,
    /* Fragment-shader render-to-texture passes on FBOs in the current GL context (GL 3.3 core). */
    GLCV_ENGINE_FRAGMENT = 2,
    /* The same GLSL as compute shaders with image stores (GL 4.3). */
    GLCV_ENGINE_COMPUTE = 3,
    /* The CPU implementation in C: the fallback and the tests' oracle. No GL needed, except for
     * texture-ID inputs and outputs. */
    GLCV_ENGINE_CPU = 4,
    /* CUDA kernels on a CUDA device (glcv/cuda.h says which device a module uses). */
    GLCV_ENGINE_CUDA = 5
} glcv_engine_mode;

/* "auto", "fragment", "compute", "cpu", "cuda" ("auto" for DEFAULT); "?" for unknown values. */
GLCV_API const char *glcv_engine_mode_string(glcv_engine_mode mode);
/* Parses the names above; returns GLCV_ERROR_INVALID_ARGUMENT for anything else. */
GLCV_API glcv_status glcv_engine_mode_parse(const char *name, glcv_engine_mode *out);

/* A rectangle in pixels: x, y of its top-left pixel (row 0 is the top row), width and height. */
typedef struct glcv_rect {
    int x, y, width, height;
} glcv_rect;

/* Pixel layouts of host images: 8 bits per channel, channels in the order named.
 * 0 (DEFAULT) is never the format of an image: where an argument or a params field takes a
 * format, DEFAULT means the default that argument or field documents. */
typedef enum glcv_pixel_format {
    GLCV_PIXEL_DEFAULT = 0,
    GLCV_PIXEL_GRAY8 = 1,
    GLCV_PIXEL_RGB8 = 2,
    GLCV_PIXEL_RGBA8 = 3,
    GLCV_PIXEL_BGR8 = 4,
    GLCV_PIXEL_BGRA8 = 5
} glcv_pixel_format;

/* Bytes per pixel of a format (0 for DEFAULT or invalid values). */
GLCV_API int glcv_pixel_format_size(glcv_pixel_format format);

/* A host image: row 0 is the top row; `stride` is the distance in bytes between the starts of
 * two rows (>= width * bytes per pixel; 0 means tightly packed). The memory belongs to whoever
 * filled the struct: functions that take a `const glcv_image *` only read it during the call. */
typedef struct glcv_image {
    uint8_t *data;
    int width;
    int height;
    size_t stride;
    glcv_pixel_format format;
} glcv_image;

/* Which clock measured a time. */
typedef enum glcv_clock {
    GLCV_CLOCK_GPU = 1, /* on the device: GL timer queries or CUDA events */
    GLCV_CLOCK_HOST = 2 /* wall time on the host (CPU engines, or a whole call) */
} glcv_clock;

/* The time of one kind of work in the last frame or call (the modules' *_timings functions). */
typedef struct glcv_timing {
    const char *name;  /* static string, e.g. "threshold", "mrf", "kernel", "match" */
    double ms;         /* milliseconds, summed over `count`, measured on `clock` */
    int count;         /* how many passes, launches or runs were summed */
    glcv_clock clock;
} glcv_timing;

#ifdef __cplusplus
}
#endif
#endif
