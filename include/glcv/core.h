/* glcv core: status codes, logging, engine modes, host images.
 *
 * Thread safety: everything declared here may be called from any thread.
 * The GL rule for every glcv object: an object that uses OpenGL is used only while the
 * GL context it was created in is current on the calling thread.
 */
#ifndef GLCV_CORE_H
#define GLCV_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(GLCV_BUILDING) && defined(__GNUC__)
#define GLCV_API __attribute__((visibility("default")))
#else
#define GLCV_API
#endif

#define GLCV_VERSION_MAJOR 0
#define GLCV_VERSION_MINOR 1
#define GLCV_VERSION_PATCH 0

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
    /* Environment: the GL version, an extension or a texture format needed is missing. */
    GLCV_ERROR_UNSUPPORTED = 5,
    /* GPU/driver: a GL error, a shader that failed to compile, an incomplete framebuffer. */
    GLCV_ERROR_GL = 6,
    /* Environment: memory could not be allocated. */
    GLCV_ERROR_OUT_OF_MEMORY = 7,
    /* Environment: a file could not be opened, read or written. */
    GLCV_ERROR_IO = 8,
    /* Caller's data: a file exists but cannot be decoded (corrupt or unknown format). */
    GLCV_ERROR_CORRUPT_DATA = 9
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

/* Where a module runs. 0 (DEFAULT) is AUTO. */
typedef enum glcv_engine_mode {
    GLCV_ENGINE_DEFAULT = 0,
    /* Needs a current GL context (else falls back to CPU, logged): on first use the engine times
     * one small pass as a fragment pass and as a compute pass and keeps the faster; fragment
     * where compute shaders are unavailable (GL < 4.3). The result is cached per renderer. */
    GLCV_ENGINE_AUTO = 1,
    /* Fragment-shader render-to-texture passes on FBOs (GL 3.3 core). */
    GLCV_ENGINE_FRAGMENT = 2,
    /* The same GLSL as compute shaders with image stores (GL 4.3). */
    GLCV_ENGINE_COMPUTE = 3,
    /* The CPU implementation in C: no GL needed, except for texture-ID inputs and outputs. */
    GLCV_ENGINE_CPU = 4
} glcv_engine_mode;

/* "auto", "fragment", "compute", "cpu" ("auto" for DEFAULT); "?" for unknown values. */
GLCV_API const char *glcv_engine_mode_string(glcv_engine_mode mode);
/* Parses the names above; returns GLCV_ERROR_INVALID_ARGUMENT for anything else. */
GLCV_API glcv_status glcv_engine_mode_parse(const char *name, glcv_engine_mode *out);

/* Pixel layouts of host images: 8 bits per channel, channels in the order named. */
typedef enum glcv_pixel_format {
    GLCV_PIXEL_UNKNOWN = 0,
    GLCV_PIXEL_GRAY8 = 1,
    GLCV_PIXEL_RGB8 = 2,
    GLCV_PIXEL_RGBA8 = 3,
    GLCV_PIXEL_BGR8 = 4,
    GLCV_PIXEL_BGRA8 = 5
} glcv_pixel_format;

/* Bytes per pixel of a format (0 for UNKNOWN or invalid values). */
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

/* GPU time of one kind of pass in one frame, from GL timer queries. */
typedef struct glcv_pass_timing {
    const char *name; /* static string, e.g. "threshold", "mrf", "merge" */
    double gpu_ms;    /* summed over the passes of that kind */
    int passes;       /* how many passes of that kind ran */
} glcv_pass_timing;

#ifdef __cplusplus
}
#endif
#endif
