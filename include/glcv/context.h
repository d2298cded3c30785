/* glcv context helpers: a headless OpenGL context for callers that have none.
 *
 * The library never owns windows. Modules run in whatever GL context is current; these helpers
 * make one when there is none: EGL's device platform (preferring an NVIDIA device that exposes
 * EGL_NV_device_cuda, optionally a given CUDA device, else the first device that initialises,
 * e.g. Mesa's software device), with the surfaceless platform as a fallback. Core profile
 * 4.6, then 4.5, 4.3 and 3.3 are tried in that order.
 *
 * Thread safety: glcv_context_create makes the new context current on the calling thread.
 * A context is current on at most one thread at a time (EGL's rule).
 */
#ifndef GLCV_CONTEXT_H
#define GLCV_CONTEXT_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct glcv_context glcv_context;

typedef struct glcv_context_params {
    /* Nonzero: prefer the EGL device whose EGL_CUDA_DEVICE_NV equals `cuda_device`. Default 0:
     * prefer any device with EGL_NV_device_cuda. */
    int match_cuda_device;
    int cuda_device;
    /* Nonzero: skip the device platform and use the surfaceless platform only. */
    int surfaceless_only;
    /* Oldest GL version accepted as major*10+minor (e.g. 43); 0 = 33; 33 or 40..99; other values
     * (negative, 1..32, 34..39, 100 and above) are INVALID_ARGUMENT; above 46 is NO_CONTEXT. */
    int min_gl_version;
    glcv_logger logger;
} glcv_context_params;

#define GLCV_CONTEXT_PARAMS(...) ((glcv_context_params){__VA_ARGS__})

/* Creates a headless GL context and makes it current on the calling thread.
 * `params` may be NULL (all defaults). Errors: INVALID_ARGUMENT (NULL out, a min_gl_version that
 * is not a GL version, see above), NO_CONTEXT (no EGL display/device could give a GL context of the minimum
 * version), OUT_OF_MEMORY. *out is NULL on error. Objects made while it is current must be
 * destroyed, or used no more, once it is destroyed: their calls then return NO_CONTEXT. */
GLCV_API glcv_status glcv_context_create(const glcv_context_params *params, glcv_context **out);

/* Releases and destroys the context (on the thread where it is current, if it is); accepts NULL
 * and &NULL; sets *ctx to NULL. */
GLCV_API void glcv_context_destroy(glcv_context **ctx);

/* Makes the context current on the calling thread. Errors: INVALID_ARGUMENT (NULL, not logged),
 * NO_CONTEXT (EGL refused, e.g. the context is current on another thread; logged). */
GLCV_API glcv_status glcv_context_make_current(glcv_context *ctx);

/* Describes the context: "<GL_RENDERER> | <GL_VERSION> | <EGL platform>"; static storage in the
 * object, valid until it is destroyed; "no context" for NULL. */
GLCV_API const char *glcv_context_describe(const glcv_context *ctx);

/* The CUDA device of the context's EGL device (EGL_CUDA_DEVICE_NV), or -1 if it has none. */
GLCV_API int glcv_context_cuda_device(const glcv_context *ctx);

/* Nonzero when some OpenGL context (EGL or GLX, e.g. a GLFW window's) is current on the
 * calling thread. Safe to call at any time: it never loads a GL library itself. */
GLCV_API int glcv_gl_context_current(void);

#ifdef __cplusplus
}
#endif
#endif
