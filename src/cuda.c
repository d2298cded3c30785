/* CUDA as glcv sees it (glcv/cuda.h) and the CUDA utility every CUDA module uses
 * (cuda_internal.h): one device-pick rule, one engine choice, one error mapping. */
#include "cuda_internal.h"

#include "core_internal.h"

#include <glcv/context.h>

#include <stdio.h>
#include <string.h>

#if GLCV_HAVE_CUDA
/* epoxy first: cuda_gl_interop.h includes the system GL header, which epoxy's guards stop. */
#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include <cuda_gl_interop.h>
#include <cuda_runtime_api.h>

glcv_status glcv_cuda_fail(const glcv_logger *logger, cudaError_t err, const char *what)
{
    (void)cudaGetLastError();
    glcv_status st = err == cudaErrorMemoryAllocation ? GLCV_ERROR_OUT_OF_MEMORY : GLCV_ERROR_CUDA;
    return glcv_fail(logger, st, "%s: CUDA error %d (%s: %s)", what, (int)err, cudaGetErrorName(err),
                     cudaGetErrorString(err));
}

glcv_status glcv_cuda_stream_create(cudaStream_t *stream, const glcv_logger *logger, const char *what)
{
    GLCV_CUDA_TRY(logger, cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking), what);
    return GLCV_OK;
}

double glcv_cuda_elapsed_ms(cudaEvent_t start, cudaEvent_t end)
{
    float ms = 0.0f;
    if (cudaEventElapsedTime(&ms, start, end) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0.0;
    }
    return (double)ms;
}

/* The CUDA device of the current GL context, or -1 (the reason in why). */
static int gl_cuda_device(char *why, size_t why_size)
{
    unsigned int count = 0;
    int devices[8];
    cudaError_t err = cudaGLGetDevices(&count, devices, 8, cudaGLDeviceListAll);
    if (err != cudaSuccess || count == 0) {
        snprintf(why, why_size, "the current GL context is not on a CUDA device (cudaGLGetDevices: %s)",
                 cudaGetErrorName(err));
        (void)cudaGetLastError();
        return -1;
    }
    return devices[0];
}

/* EGL_CUDA_DEVICE_NV of the current EGL context's device, or -1. */
static int egl_cuda_device(void)
{
    if (eglGetCurrentContext() == EGL_NO_CONTEXT)
        return -1;
    EGLDisplay dpy = eglGetCurrentDisplay();
    const char *client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (dpy == EGL_NO_DISPLAY || !client ||
        (!strstr(client, "EGL_EXT_device_query") && !strstr(client, "EGL_EXT_device_base")))
        return -1;
    EGLAttrib dev = 0;
    if (!eglQueryDisplayAttribEXT(dpy, EGL_DEVICE_EXT, &dev) || !dev) {
        (void)eglGetError();
        return -1;
    }
    const char *exts = eglQueryDeviceStringEXT((EGLDeviceEXT)dev, EGL_EXTENSIONS);
    EGLAttrib cuda = -1;
    if (!exts || !strstr(exts, "EGL_NV_device_cuda") ||
        !eglQueryDeviceAttribEXT((EGLDeviceEXT)dev, EGL_CUDA_DEVICE_NV, &cuda)) {
        (void)eglGetError();
        return -1;
    }
    return (int)cuda;
}

/* The number of CUDA devices, or -1 with the reason in why. */
static int device_count(char *why, size_t why_size)
{
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(why, why_size, "no usable CUDA driver or device (%s)", cudaGetErrorName(err));
        return -1;
    }
    if (count == 0)
        snprintf(why, why_size, "no CUDA device");
    return count;
}

glcv_status glcv_cuda_pick(int requested, glcv_cuda_device *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof *out);
    out->device = -1;
    int count = device_count(why, why_size);
    if (count <= 0)
        return GLCV_ERROR_UNSUPPORTED;
    out->count = count;
    if (glcv_gl_context_current()) {
        char gl_why[160] = "";
        int d = gl_cuda_device(gl_why, sizeof gl_why);
        if (d >= 0) {
            out->device = d;
            out->with_gl = 1;
            return GLCV_OK;
        }
    }
    if (requested < 0 || requested >= count) {
        snprintf(why, why_size, "CUDA device %d does not exist (%d device%s)", requested, count,
                 count == 1 ? "" : "s");
        return GLCV_ERROR_UNSUPPORTED;
    }
    out->device = requested;
    return GLCV_OK;
}

glcv_status glcv_cuda_query(glcv_cuda_info *out)
{
    if (!out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->built = 1;
    out->gl_device = -1;
    char why[160] = "";
    int count = device_count(why, sizeof why);
    if (count <= 0) {
        snprintf(out->text, sizeof out->text, "CUDA: %s", why);
        return GLCV_OK;
    }
    out->devices = count;
    struct cudaDeviceProp prop;
    char name[96] = "?";
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
        snprintf(name, sizeof name, "%.64s, compute %d.%d", prop.name, prop.major, prop.minor);
    else
        (void)cudaGetLastError();
    const char *s = count == 1 ? "" : "s";
    if (!glcv_gl_context_current()) {
        snprintf(out->text, sizeof out->text, "CUDA: %d device%s (0: %s); no GL context is current", count, s, name);
        return GLCV_OK;
    }
    out->gl_device = gl_cuda_device(why, sizeof why);
    if (out->gl_device < 0)
        snprintf(out->text, sizeof out->text, "CUDA: %d device%s (0: %s); %.120s", count, s, name, why);
    else
        snprintf(out->text, sizeof out->text,
                 "CUDA: %d device%s (0: %s); the GL context is on CUDA device %d (EGL_CUDA_DEVICE_NV: %d)", count, s,
                 name, out->gl_device, egl_cuda_device());
    return GLCV_OK;
}

glcv_status glcv_cuda_memory_used(int device, size_t *used)
{
    size_t free_bytes = 0, total = 0;
    *used = 0;
    if (cudaSetDevice(device) != cudaSuccess || cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
        (void)cudaGetLastError();
        return GLCV_ERROR_UNSUPPORTED;
    }
    *used = total - free_bytes;
    return GLCV_OK;
}

#else /* built without CUDA: the engine is never available */

glcv_status glcv_cuda_memory_used(int device, size_t *used)
{
    (void)device;
    *used = 0;
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_cuda_pick(int requested, glcv_cuda_device *out, char *why, size_t why_size)
{
    (void)requested;
    memset(out, 0, sizeof *out);
    out->device = -1;
    snprintf(why, why_size, "glcv was built without CUDA");
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_cuda_query(glcv_cuda_info *out)
{
    if (!out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    out->gl_device = -1;
    snprintf(out->text, sizeof out->text, "CUDA: not built (no CUDA compiler was found at configure time)");
    return GLCV_OK;
}

#endif

int glcv_cuda_available(int cuda_device)
{
    glcv_cuda_device d;
    char why[192];
    return glcv_cuda_pick(cuda_device, &d, why, sizeof why) == GLCV_OK;
}

glcv_status glcv_cuda_choose(const char *module, glcv_engine_mode requested, int cuda_device,
                             const glcv_logger *logger, glcv_engine_mode *engine, glcv_cuda_device *device)
{
    memset(device, 0, sizeof *device);
    device->device = -1;
    switch (requested) {
    case GLCV_ENGINE_CPU: *engine = GLCV_ENGINE_CPU; return GLCV_OK;
    case GLCV_ENGINE_DEFAULT:
    case GLCV_ENGINE_AUTO:
    case GLCV_ENGINE_CUDA: break;
    default:
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: no %s engine (it has cuda and cpu)", module,
                         glcv_engine_mode_string(requested));
    }
    char why[192] = "";
    glcv_status st = glcv_cuda_pick(cuda_device, device, why, sizeof why);
    if (st == GLCV_OK) {
        *engine = GLCV_ENGINE_CUDA;
        glcv_logf(logger, GLCV_LOG_DEBUG, "%s: CUDA engine on device %d%s", module, device->device,
                  device->with_gl ? " (the GL context's)" : "");
        return GLCV_OK;
    }
    if (requested == GLCV_ENGINE_CUDA)
        return glcv_fail(logger, GLCV_ERROR_UNSUPPORTED, "%s: the CUDA engine is not available: %s", module, why);
    glcv_logf(logger, GLCV_LOG_INFO, "%s: %s: using the CPU engine", module, why);
    *engine = GLCV_ENGINE_CPU;
    return GLCV_OK;
}
