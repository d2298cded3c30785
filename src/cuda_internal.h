/* The CUDA utility (private): the one device-pick rule of glcv/cuda.h, the engine choice every
 * CUDA module makes at creation, the mapping of CUDA errors to statuses, and small stream and
 * event helpers. Every CUDA module's host code uses it; it includes no module header.
 *
 * glcv_cuda_choose exists in every build (without CUDA it reports the CUDA engine unavailable);
 * the rest exists only when glcv is built with CUDA. */
#ifndef GLCV_CUDA_INTERNAL_H
#define GLCV_CUDA_INTERNAL_H

#include <glcv/cuda.h>

#include <stddef.h>

/* The device a module runs on. */
typedef struct glcv_cuda_device {
    int device;  /* CUDA device index */
    int with_gl; /* the current GL context is on this device: textures go to CUDA through the
                    bridge; 0: texture inputs are read back in GL and uploaded */
    int count;   /* CUDA devices present */
} glcv_cuda_device;

/* Picks the device by the rule of glcv/cuda.h from `requested` (params.cuda_device).
 * UNSUPPORTED with the reason in `why` when the CUDA engine is unavailable. */
glcv_status glcv_cuda_pick(int requested, glcv_cuda_device *out, char *why, size_t why_size);

/* The engine of a module that has a CUDA and a CPU engine, from params.engine: DEFAULT/AUTO is
 * CUDA when glcv_cuda_pick finds a device, else CPU (logged at INFO, naming `module`); CUDA
 * without a device is UNSUPPORTED; CPU is CPU; FRAGMENT, COMPUTE and unknown values are
 * INVALID_ARGUMENT. *engine gets CUDA or CPU; *device is filled when it is CUDA. */
glcv_status glcv_cuda_choose(const char *module, glcv_engine_mode requested, int cuda_device,
                             const glcv_logger *logger, glcv_engine_mode *engine, glcv_cuda_device *device);

/* Device memory in use on `device` (total - free, from cudaMemGetInfo), in bytes: for the soak
 * benchmark's curves. UNSUPPORTED without CUDA or the device. */
glcv_status glcv_cuda_memory_used(int device, size_t *used);

#if GLCV_HAVE_CUDA
#include <cuda_runtime_api.h>

/* Logs "<what>: CUDA error N (name: text)" and returns the status for it: OUT_OF_MEMORY for
 * cudaErrorMemoryAllocation, else GLCV_ERROR_CUDA. Clears CUDA's last error. */
glcv_status glcv_cuda_fail(const glcv_logger *logger, cudaError_t err, const char *what);

/* Returns from the calling function with glcv_cuda_fail's status when `call` fails. */
#define GLCV_CUDA_TRY(logger, call, what)                                                                        \
    do {                                                                                                       \
        cudaError_t glcv_err_ = (call);                                                                        \
        if (glcv_err_ != cudaSuccess)                                                                          \
            return glcv_cuda_fail((logger), glcv_err_, (what));                                                \
    } while (0)

/* A non-blocking stream (it does not synchronise with the legacy default stream). */
glcv_status glcv_cuda_stream_create(cudaStream_t *stream, const glcv_logger *logger, const char *what);

/* Milliseconds between two recorded events, 0 when CUDA cannot tell (the error is cleared). */
double glcv_cuda_elapsed_ms(cudaEvent_t start, cudaEvent_t end);
#endif

#endif
