/* The CUDA-GL interop bridge (see cuda_bridge.h). */
#include "cuda_bridge.h"

#include "internal.h"

#include <glcv/context.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GLCV_HAVE_CUDA
/* epoxy first: cuda_gl_interop.h includes the system GL header, which epoxy's guards stop. */
#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include <cuda_gl_interop.h>
#include <cuda_runtime_api.h>

glcv_status glcv_cuda_fail(const glcv_logger *logger, cudaError_t err, const char *what)
{
    return glcv_fail(logger, GLCV_ERROR_GL, "%s: CUDA error %d (%s: %s)", what, (int)err, cudaGetErrorName(err),
                     cudaGetErrorString(err));
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

void glcv_cuda_bridge_query(glcv_cuda_info *out)
{
    memset(out, 0, sizeof *out);
    out->built = 1;
    out->gl_device = -1;
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        snprintf(out->text, sizeof out->text, "CUDA: no usable driver or device (%s)", cudaGetErrorName(err));
        return;
    }
    out->devices = count;
    if (count == 0) {
        snprintf(out->text, sizeof out->text, "CUDA: no device");
        return;
    }
    struct cudaDeviceProp prop;
    char name[96] = "?";
    if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
        snprintf(name, sizeof name, "%.64s, compute %d.%d", prop.name, prop.major, prop.minor);
    if (!glcv_gl_context_current()) {
        snprintf(out->text, sizeof out->text, "CUDA: %d device%s (0: %s); no GL context is current", count,
                 count == 1 ? "" : "s", name);
        return;
    }
    char why[160] = "";
    out->gl_device = gl_cuda_device(why, sizeof why);
    int egl = egl_cuda_device();
    if (out->gl_device < 0)
        snprintf(out->text, sizeof out->text, "CUDA: %d device%s (0: %s); %s", count, count == 1 ? "" : "s", name,
                 why);
    else
        snprintf(out->text, sizeof out->text,
                 "CUDA: %d device%s (0: %s); the GL context is on CUDA device %d (EGL_CUDA_DEVICE_NV: %d)", count,
                 count == 1 ? "" : "s", name, out->gl_device, egl);
}

glcv_status glcv_cuda_bridge_pick_device(int fallback, int *device, int *with_gl, char *why, size_t why_size)
{
    *device = -1;
    *with_gl = 0;
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        (void)cudaGetLastError();
        snprintf(why, why_size, "no CUDA device (%s)", err != cudaSuccess ? cudaGetErrorName(err) : "none found");
        return GLCV_ERROR_UNSUPPORTED;
    }
    if (glcv_gl_context_current()) {
        int d = gl_cuda_device(why, why_size);
        if (d < 0)
            return GLCV_ERROR_UNSUPPORTED;
        *device = d;
        *with_gl = 1;
        return GLCV_OK;
    }
    if (fallback < 0 || fallback >= count) {
        snprintf(why, why_size, "CUDA device %d does not exist (%d device%s)", fallback, count, count == 1 ? "" : "s");
        return GLCV_ERROR_UNSUPPORTED;
    }
    *device = fallback;
    return GLCV_OK;
}

/* ---- the pixel-buffer bridge ----------------------------------------------------------------- */

struct glcv_cuda_bridge {
    glcv_logger logger;
    int width, height;
    GLuint pbo, fbo;
    size_t rgba_bytes, mask_offset, bytes;
    struct cudaGraphicsResource *resource;
    int mapped;
    int no_flush; /* benchmarks only: leave the copies unflushed before the map */
};

static glcv_status drain_gl(const glcv_logger *lg, const char *what)
{
    GLenum e = glGetError(), first = e;
    while (e != GL_NO_ERROR)
        e = glGetError();
    if (first != GL_NO_ERROR)
        return glcv_fail(lg, GLCV_ERROR_GL, "%s: GL error 0x%04x", what, (unsigned)first);
    return GLCV_OK;
}

glcv_status glcv_cuda_bridge_create(int width, int height, const glcv_logger *logger, glcv_cuda_bridge **out)
{
    *out = NULL;
    if (!glcv_gl_context_current())
        return glcv_fail(logger, GLCV_ERROR_NO_CONTEXT, "cuda bridge: no GL context is current");
    glcv_cuda_bridge *b = calloc(1, sizeof *b);
    if (!b)
        return GLCV_ERROR_OUT_OF_MEMORY;
    if (logger)
        b->logger = *logger;
    b->width = width;
    b->height = height;
    b->rgba_bytes = (size_t)width * (size_t)height * 4;
    b->mask_offset = (b->rgba_bytes + 255) & ~(size_t)255;
    b->bytes = b->mask_offset + (size_t)width * (size_t)height;

    while (glGetError() != GL_NO_ERROR) {
    }
    GLint old_pack = 0;
    glGetIntegerv(GL_PIXEL_PACK_BUFFER_BINDING, &old_pack);
    glGenBuffers(1, &b->pbo);
    glGenFramebuffers(1, &b->fbo);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, b->pbo);
    /* Immutable storage with no client access keeps the buffer in video memory (a mutable
     * pixel-pack buffer may be placed in system memory for read-back). */
    if (epoxy_gl_version() >= 44 || epoxy_has_gl_extension("GL_ARB_buffer_storage"))
        glBufferStorage(GL_PIXEL_PACK_BUFFER, (GLsizeiptr)b->bytes, NULL, 0);
    else
        glBufferData(GL_PIXEL_PACK_BUFFER, (GLsizeiptr)b->bytes, NULL, GL_DYNAMIC_COPY);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, (GLuint)old_pack);
    glcv_status st = drain_gl(&b->logger, "cuda bridge: pixel buffer");
    if (st == GLCV_OK) {
        cudaError_t err = cudaGraphicsGLRegisterBuffer(&b->resource, b->pbo, cudaGraphicsRegisterFlagsReadOnly);
        if (err != cudaSuccess) {
            b->resource = NULL;
            st = glcv_cuda_fail(&b->logger, err, "cuda bridge: cudaGraphicsGLRegisterBuffer");
        }
    }
    if (st != GLCV_OK) {
        glcv_cuda_bridge_destroy(&b);
        return st;
    }
    glcv_logf(&b->logger, GLCV_LOG_DEBUG, "cuda bridge: %dx%d, pixel buffer of %zu bytes registered", width, height,
              b->bytes);
    *out = b;
    return GLCV_OK;
}

void glcv_cuda_bridge_destroy(glcv_cuda_bridge **bridge)
{
    if (!bridge || !*bridge)
        return;
    glcv_cuda_bridge *b = *bridge;
    if (b->mapped && b->resource)
        (void)cudaGraphicsUnmapResources(1, &b->resource, 0);
    if (b->resource) {
        cudaError_t err = cudaGraphicsUnregisterResource(b->resource);
        if (err != cudaSuccess)
            glcv_cuda_fail(&b->logger, err, "cuda bridge: cudaGraphicsUnregisterResource");
    }
    if (glcv_gl_context_current()) {
        if (b->fbo)
            glDeleteFramebuffers(1, &b->fbo);
        if (b->pbo)
            glDeleteBuffers(1, &b->pbo);
    }
    free(b);
    *bridge = NULL;
}

/* Checks a caller's texture: a GL_TEXTURE_2D of the bridge's size (its level 0). */
static glcv_status check_texture(glcv_cuda_bridge *b, GLuint texture, const char *what)
{
    if (!texture || !glIsTexture(texture))
        return glcv_fail(&b->logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: %u is not a texture", what, texture);
    GLint bound = 0, w = 0, h = 0;
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &bound);
    glBindTexture(GL_TEXTURE_2D, texture);
    glcv_status st = drain_gl(&b->logger, what);
    if (st != GLCV_OK) {
        glBindTexture(GL_TEXTURE_2D, (GLuint)bound);
        return glcv_fail(&b->logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: texture %u is not a GL_TEXTURE_2D", what,
                         texture);
    }
    glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_WIDTH, &w);
    glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_HEIGHT, &h);
    glBindTexture(GL_TEXTURE_2D, (GLuint)bound);
    if (w != b->width || h != b->height)
        return glcv_fail(&b->logger, GLCV_ERROR_SIZE_MISMATCH, "%s: texture %u is %dx%d, expected %dx%d", what,
                         texture, (int)w, (int)h, b->width, b->height);
    return GLCV_OK;
}

static const GLenum pack_names[] = {GL_PACK_ALIGNMENT, GL_PACK_ROW_LENGTH, GL_PACK_SKIP_PIXELS, GL_PACK_SKIP_ROWS,
                                    GL_PACK_SWAP_BYTES, GL_PACK_LSB_FIRST};
#define N_PACK (sizeof pack_names / sizeof pack_names[0])

/* Reads one texture's level 0 into the bound pixel-pack buffer at `offset`. glGetTexImage, not
 * glReadPixels through a framebuffer: measured on an H200 (driver 580), glReadPixels into the
 * CUDA-registered buffer took about 440 ms a frame, glGetTexImage 0.7 ms. */
static glcv_status read_into_buffer(glcv_cuda_bridge *b, GLuint texture, GLenum format, size_t offset,
                                    const char *what)
{
    GLint bound = 0;
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &bound);
    glBindTexture(GL_TEXTURE_2D, texture);
    glGetTexImage(GL_TEXTURE_2D, 0, format, GL_UNSIGNED_BYTE, (void *)(uintptr_t)offset);
    glBindTexture(GL_TEXTURE_2D, (GLuint)bound);
    return drain_gl(&b->logger, what);
}

glcv_status glcv_cuda_bridge_map_frame(glcv_cuda_bridge *b, unsigned int frame, unsigned int mask,
                                       cudaStream_t stream, glcv_cuda_frame *out)
{
    if (!b || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (b->mapped)
        return glcv_fail(&b->logger, GLCV_ERROR_STATE, "cuda bridge: the buffer is still mapped");
    while (glGetError() != GL_NO_ERROR) {
    }
    glcv_status st = check_texture(b, frame, "track frame texture");
    if (st == GLCV_OK && mask)
        st = check_texture(b, mask, "track mask texture");
    if (st != GLCV_OK)
        return st;

    /* save what is touched */
    GLint read_fbo = 0, pack_buffer = 0, pack[N_PACK];
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &read_fbo);
    glGetIntegerv(GL_PIXEL_PACK_BUFFER_BINDING, &pack_buffer);
    for (size_t i = 0; i < N_PACK; i++)
        glGetIntegerv(pack_names[i], &pack[i]);

    glBindFramebuffer(GL_READ_FRAMEBUFFER, b->fbo);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, b->pbo);
    for (size_t i = 0; i < N_PACK; i++)
        glPixelStorei(pack_names[i], pack_names[i] == GL_PACK_ALIGNMENT ? 1 : 0);
    st = read_into_buffer(b, frame, GL_RGBA, 0, "track frame texture");
    if (st == GLCV_OK && mask)
        st = read_into_buffer(b, mask, GL_RED, b->mask_offset, "track mask texture");

    for (size_t i = 0; i < N_PACK; i++)
        glPixelStorei(pack_names[i], pack[i]);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, (GLuint)pack_buffer);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, (GLuint)read_fbo);
    if (st != GLCV_OK)
        return st;

    /* The copies must reach the GPU before CUDA waits for them: the map orders the stream after
     * GL's commands but need not submit GL's pending command buffer, and an unflushed copy can
     * leave the stream waiting until the driver flushes on its own (interop_bench's pbo-noflush
     * row measures what that costs). */
    if (!b->no_flush)
        glFlush();
    cudaError_t err = cudaGraphicsMapResources(1, &b->resource, stream);
    if (err != cudaSuccess)
        return glcv_cuda_fail(&b->logger, err, "cuda bridge: cudaGraphicsMapResources");
    b->mapped = 1;
    void *ptr = NULL;
    size_t size = 0;
    err = cudaGraphicsResourceGetMappedPointer(&ptr, &size, b->resource);
    if (err != cudaSuccess || size < b->bytes) {
        glcv_cuda_bridge_unmap(b, stream);
        if (err != cudaSuccess)
            return glcv_cuda_fail(&b->logger, err, "cuda bridge: cudaGraphicsResourceGetMappedPointer");
        return glcv_fail(&b->logger, GLCV_ERROR_GL, "cuda bridge: mapped %zu bytes, expected %zu", size, b->bytes);
    }
    out->rgba = (const uint8_t *)ptr;
    out->rgba_pitch = (size_t)b->width * 4;
    out->mask = mask ? (const uint8_t *)ptr + b->mask_offset : NULL;
    out->mask_pitch = (size_t)b->width;
    return GLCV_OK;
}

glcv_status glcv_cuda_bridge_unmap(glcv_cuda_bridge *b, cudaStream_t stream)
{
    if (!b || !b->mapped)
        return GLCV_OK;
    b->mapped = 0;
    cudaError_t err = cudaGraphicsUnmapResources(1, &b->resource, stream);
    if (err != cudaSuccess)
        return glcv_cuda_fail(&b->logger, err, "cuda bridge: cudaGraphicsUnmapResources");
    return GLCV_OK;
}

void glcv_cuda_bridge_set_flush(glcv_cuda_bridge *b, int flush)
{
    if (b)
        b->no_flush = !flush;
}

/* ---- registered textures ------------------------------------------------------------------ */

glcv_status glcv_cuda_image_register(glcv_cuda_image *image, unsigned int texture, int write_discard,
                                     const glcv_logger *logger)
{
    if (!image || !texture)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "cuda image: no texture");
    if (!glcv_gl_context_current())
        return glcv_fail(logger, GLCV_ERROR_NO_CONTEXT, "cuda image: no GL context is current");
    memset(image, 0, sizeof *image);
    GLint bound = 0, w = 0, h = 0;
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &bound);
    glBindTexture(GL_TEXTURE_2D, texture);
    glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_WIDTH, &w);
    glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_HEIGHT, &h);
    glBindTexture(GL_TEXTURE_2D, (GLuint)bound);
    glcv_status st = drain_gl(logger, "cuda image: texture query");
    if (st != GLCV_OK)
        return st;
    unsigned flags = write_discard ? cudaGraphicsRegisterFlagsWriteDiscard : cudaGraphicsRegisterFlagsReadOnly;
    cudaError_t err = cudaGraphicsGLRegisterImage(&image->resource, texture, GL_TEXTURE_2D, flags);
    if (err != cudaSuccess) {
        image->resource = NULL;
        return glcv_cuda_fail(logger, err, "cuda image: cudaGraphicsGLRegisterImage");
    }
    image->texture = texture;
    image->width = (int)w;
    image->height = (int)h;
    image->write_discard = write_discard != 0;
    return GLCV_OK;
}

glcv_status glcv_cuda_image_unregister(glcv_cuda_image *image, const glcv_logger *logger)
{
    if (!image || !image->resource)
        return GLCV_OK;
    cudaError_t err = cudaGraphicsUnregisterResource(image->resource);
    image->resource = NULL;
    image->array = NULL;
    if (err != cudaSuccess)
        return glcv_cuda_fail(logger, err, "cuda image: cudaGraphicsUnregisterResource");
    return GLCV_OK;
}

enum { MAX_MAPPED = 16 };

glcv_status glcv_cuda_images_map(glcv_cuda_image *const *images, int n, cudaStream_t stream,
                                 const glcv_logger *logger)
{
    struct cudaGraphicsResource *res[MAX_MAPPED];
    if (n < 1 || n > MAX_MAPPED)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "cuda image: %d images to map (1..%d)", n, MAX_MAPPED);
    for (int i = 0; i < n; i++) {
        if (!images[i] || !images[i]->resource)
            return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "cuda image: image %d is not registered", i);
        res[i] = images[i]->resource;
    }
    /* GL's writes to the textures must be submitted before CUDA waits for them (see map_frame) */
    if (glcv_gl_context_current())
        glFlush();
    cudaError_t err = cudaGraphicsMapResources(n, res, stream);
    if (err != cudaSuccess)
        return glcv_cuda_fail(logger, err, "cuda image: cudaGraphicsMapResources");
    for (int i = 0; i < n; i++) {
        cudaArray_t array = NULL;
        err = cudaGraphicsSubResourceGetMappedArray(&array, res[i], 0, 0);
        struct cudaChannelFormatDesc desc;
        struct cudaExtent extent;
        unsigned int flags = 0;
        if (err == cudaSuccess)
            err = cudaArrayGetInfo(&desc, &extent, &flags, array);
        if (err != cudaSuccess) {
            (void)cudaGraphicsUnmapResources(n, res, stream);
            return glcv_cuda_fail(logger, err, "cuda image: the mapped array");
        }
        int channels = (desc.x > 0) + (desc.y > 0) + (desc.z > 0) + (desc.w > 0);
        if ((int)extent.width != images[i]->width || (int)extent.height != images[i]->height || desc.x != 8 ||
            (channels != 1 && channels != 4)) {
            (void)cudaGraphicsUnmapResources(n, res, stream);
            return glcv_fail(logger, GLCV_ERROR_UNSUPPORTED,
                             "cuda image: texture %u maps to a %zux%zu array of %d channel(s) of %d bits, expected "
                             "%dx%d of 1 or 4 8-bit channels",
                             images[i]->texture, extent.width, extent.height, channels, desc.x, images[i]->width,
                             images[i]->height);
        }
        images[i]->array = array;
    }
    return GLCV_OK;
}

glcv_status glcv_cuda_images_unmap(glcv_cuda_image *const *images, int n, cudaStream_t stream,
                                   const glcv_logger *logger)
{
    struct cudaGraphicsResource *res[MAX_MAPPED];
    if (n < 1 || n > MAX_MAPPED)
        return GLCV_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < n; i++) {
        res[i] = images[i]->resource;
        images[i]->array = NULL;
    }
    cudaError_t err = cudaGraphicsUnmapResources(n, res, stream);
    if (err != cudaSuccess)
        return glcv_cuda_fail(logger, err, "cuda image: cudaGraphicsUnmapResources");
    return GLCV_OK;
}

#else /* no CUDA in this build */

void glcv_cuda_bridge_query(glcv_cuda_info *out)
{
    memset(out, 0, sizeof *out);
    out->gl_device = -1;
    snprintf(out->text, sizeof out->text, "CUDA: not built (no CUDA compiler was found at configure time)");
}

glcv_status glcv_cuda_bridge_pick_device(int fallback, int *device, int *with_gl, char *why, size_t why_size)
{
    (void)fallback;
    *device = -1;
    *with_gl = 0;
    snprintf(why, why_size, "glcv was built without CUDA");
    return GLCV_ERROR_UNSUPPORTED;
}

#endif
