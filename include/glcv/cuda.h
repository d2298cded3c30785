/* glcv and CUDA: whether this build and this machine can run the CUDA engine, and which device
 * a module uses.
 *
 * The modules with a CUDA engine (glcv/track.h, glcv/match.h, glcv/correlate.h) pick their
 * device by one rule, at creation:
 *  1. With a GL context current on a CUDA device (EGL_CUDA_DEVICE_NV, found with
 *     cudaGLGetDevices), that device. GL textures then go to CUDA on the GPU (CUDA-GL interop).
 *  2. Otherwise (no context, or a context on another renderer such as Mesa), the device the
 *     params name (`cuda_device`, default 0). Texture inputs are then read back to host memory
 *     in the current GL context and uploaded.
 *  3. No CUDA in this build, no driver, no device, or a named device that does not exist: the
 *     CUDA engine is unavailable. AUTO then uses the CPU engine (logged once, at INFO);
 *     asking for CUDA explicitly is GLCV_ERROR_UNSUPPORTED.
 *
 * Thread safety: may be called from any thread. Uses the GL context current on the calling
 * thread (if any) only to ask which device it is on; no GL state changes.
 */
#ifndef GLCV_CUDA_H
#define GLCV_CUDA_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* CUDA as glcv sees it from the calling thread. */
typedef struct glcv_cuda_info {
    int built;     /* nonzero when glcv was built with CUDA */
    int devices;   /* CUDA devices (0 when none, or when the driver could not be loaded) */
    int gl_device; /* the current GL context's CUDA device (rule 1 above), or -1 */
    char text[256]; /* one line describing all of it */
} glcv_cuda_info;

/* Fills *out. Never fails for lack of CUDA (that is what it reports). Errors: INVALID_ARGUMENT
 * (NULL). */
GLCV_API glcv_status glcv_cuda_query(glcv_cuda_info *out);

/* Nonzero when a module created now on the calling thread with the CUDA engine and
 * `cuda_device` would get a device (the rule above); the same answer glcv_X_create gives. */
GLCV_API int glcv_cuda_available(int cuda_device);

#ifdef __cplusplus
}
#endif
#endif
