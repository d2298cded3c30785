/* The GPU side of a texture set (glcv_media_set): the set's GL texture array registered with CUDA
 * once (surface writes), and per set one map, one launch of cuda/media.cu over every new layer, one
 * unmap - the hand-over of the whole set costs one synchronisation between GL and CUDA. Frames the
 * CPU decoded (pinned host memory) are first copied to the GPU by DMA, one copy a frame, into a
 * staging buffer the kernel reads; NVDEC's frames are read where they are.
 *
 * Ordering with the decoders: FFmpeg's NVDEC frames are mapped decoder surfaces, made ready on the
 * legacy default stream of the CUDA primary context that glcv shares; this file's stream is a
 * blocking one (cudaStreamCreate, not glcv_cuda_stream_create's non-blocking kind), so that the
 * launch waits for that work. The call returns once the launch is queued, with an event recorded
 * after it: the caller's GL passes over the set are issued while the kernel runs, and the frames'
 * memory (NVDEC surfaces and pinned host slots) goes back to the decoders only after
 * glcv_media_cuda_wait, which the set calls before it reads, reopens or closes a source. */
#include "core_internal.h"
#include "cuda_bridge.h"
#include "cuda_internal.h"
#include "gl.h"
#include "media_internal.h"
#include "media_kernels.h"

#include <stdlib.h>
#include <string.h>

struct glcv_media_cuda {
    glcv_logger logger;
    int device;
    int width, height, layers;
    glcv_cuda_image image;           /* the texture array, registered for surface writes */
    cudaArray_t *arrays;             /* per layer: the array its surface was made for */
    cudaSurfaceObject_t *surfaces;   /* per layer */
    glcv_cuda_media_layer *host;     /* the descriptors of a launch (pinned) */
    glcv_cuda_media_layer *dev;      /* ... in device memory */
    uint8_t *staging;      /* device copies of host pictures, one picture's bytes a layer; lazily */
    int staging_failed;    /* no memory for it: host pictures are read in place */
    cudaStream_t stream;
    cudaEvent_t converted; /* recorded after each conversion */
    int pending;           /* a conversion may still read its pictures */
    void *context; /* the primary context (CUcontext) the runtime uses on `device` */
};

void *glcv_media_cuda_context(const glcv_media_cuda *c)
{
    return c ? c->context : NULL;
}

/* The CUcontext current on this thread, through the driver's entry point (glcv links the runtime
 * only). */
static void *current_context(void)
{
    typedef int (*get_current_fn)(void **);
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult found;
    void *ctx = NULL;
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess || !fn || ((get_current_fn)fn)(&ctx) != 0) {
        (void)cudaGetLastError();
        return NULL;
    }
    return ctx;
}

void *glcv_media_cuda_host_alloc(size_t bytes, void *cuda)
{
    const glcv_media_cuda *c = cuda;
    void *ptr = NULL;
    if (cudaSetDevice(c->device) != cudaSuccess ||
        cudaHostAlloc(&ptr, bytes, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    memset(ptr, 0, bytes);
    return ptr;
}

void glcv_media_cuda_host_free(void *ptr, void *cuda)
{
    (void)cuda;
    if (ptr)
        (void)cudaFreeHost(ptr);
}

void glcv_media_cuda_destroy(glcv_media_cuda **cuda)
{
    glcv_media_cuda *c = cuda ? *cuda : NULL;
    if (!c)
        return;
    (void)cudaSetDevice(c->device);
    if (c->stream)
        (void)cudaStreamSynchronize(c->stream);
    for (int l = 0; c->surfaces && l < c->layers; l++)
        if (c->surfaces[l])
            (void)cudaDestroySurfaceObject(c->surfaces[l]);
    glcv_cuda_image_unregister(&c->image, &c->logger);
    if (c->converted)
        (void)cudaEventDestroy(c->converted);
    if (c->stream)
        (void)cudaStreamDestroy(c->stream);
    (void)cudaFreeHost(c->host);
    (void)cudaFree(c->dev);
    (void)cudaFree(c->staging);
    (void)cudaGetLastError();
    free(c->arrays);
    free(c->surfaces);
    free(c);
    *cuda = NULL;
}

glcv_status glcv_media_cuda_create(unsigned int texture, int width, int height, int layers, int cuda_device,
                                   const glcv_logger *logger, glcv_media_cuda **out)
{
    *out = NULL;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || cuda_device >= count) {
        (void)cudaGetLastError();
        glcv_logf(logger, GLCV_LOG_DEBUG, "media set: no CUDA device %d", cuda_device);
        return GLCV_ERROR_UNSUPPORTED;
    }
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, cuda_device) != cudaSuccess || !prop.unifiedAddressing) {
        (void)cudaGetLastError();
        glcv_logf(logger, GLCV_LOG_DEBUG, "media set: CUDA device %d has no unified addressing", cuda_device);
        return GLCV_ERROR_UNSUPPORTED;
    }
    glcv_media_cuda *c = calloc(1, sizeof *c);
    if (!c)
        return glcv_fail(logger, GLCV_ERROR_OUT_OF_MEMORY, "media set: out of memory");
    if (logger)
        c->logger = *logger;
    c->device = cuda_device;
    c->width = width;
    c->height = height;
    c->layers = layers;
    glcv_status st = GLCV_OK;
    c->arrays = calloc((size_t)layers, sizeof *c->arrays);
    c->surfaces = calloc((size_t)layers, sizeof *c->surfaces);
    if (!c->arrays || !c->surfaces)
        st = glcv_fail(logger, GLCV_ERROR_OUT_OF_MEMORY, "media set: out of memory");
    /* cudaFree(NULL) makes the runtime set up the device's primary context, current from here */
    if (st == GLCV_OK && (cudaSetDevice(cuda_device) != cudaSuccess || cudaFree(NULL) != cudaSuccess))
        st = glcv_cuda_fail(logger, cudaGetLastError(), "media set: cudaSetDevice");
    if (st == GLCV_OK)
        c->context = current_context();
    size_t desc_bytes = sizeof(glcv_cuda_media_layer) * (size_t)layers;
    if (st == GLCV_OK && cudaHostAlloc((void **)&c->host, desc_bytes, cudaHostAllocDefault) != cudaSuccess)
        st = glcv_cuda_fail(logger, cudaGetLastError(), "media set: cudaHostAlloc");
    if (st == GLCV_OK && cudaMalloc((void **)&c->dev, desc_bytes) != cudaSuccess)
        st = glcv_cuda_fail(logger, cudaGetLastError(), "media set: cudaMalloc");
    if (st == GLCV_OK && cudaStreamCreate(&c->stream) != cudaSuccess)
        st = glcv_cuda_fail(logger, cudaGetLastError(), "media set: cudaStreamCreate");
    if (st == GLCV_OK && cudaEventCreateWithFlags(&c->converted, cudaEventDisableTiming) != cudaSuccess)
        st = glcv_cuda_fail(logger, cudaGetLastError(), "media set: cudaEventCreate");
    if (st == GLCV_OK)
        st = glcv_cuda_image_register_layers(&c->image, texture, GLCV_CUDA_IMAGE_SURFACE, logger);
    if (st != GLCV_OK) {
        glcv_media_cuda_destroy(&c);
        return st;
    }
    *out = c;
    return GLCV_OK;
}

/* The surface of layer l over the array CUDA mapped it to (kept while the array stays the same). */
static glcv_status layer_surface(glcv_media_cuda *c, int l)
{
    cudaArray_t array = c->image.layer_arrays[l];
    if (c->surfaces[l] && c->arrays[l] == array)
        return GLCV_OK;
    if (c->surfaces[l])
        (void)cudaDestroySurfaceObject(c->surfaces[l]);
    c->surfaces[l] = 0;
    struct cudaResourceDesc rd;
    memset(&rd, 0, sizeof rd);
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = array;
    GLCV_CUDA_TRY(&c->logger, cudaCreateSurfaceObject(&c->surfaces[l], &rd), "media set: cudaCreateSurfaceObject");
    c->arrays[l] = array;
    return GLCV_OK;
}

glcv_status glcv_media_cuda_wait(glcv_media_cuda *c)
{
    if (!c || !c->pending)
        return GLCV_OK;
    c->pending = 0;
    GLCV_CUDA_TRY(&c->logger, cudaSetDevice(c->device), "media set: cudaSetDevice");
    GLCV_CUDA_TRY(&c->logger, cudaEventSynchronize(c->converted), "media set: the conversion");
    return GLCV_OK;
}

/* A host picture's planes as a CPU decoder leaves them in its slot: Y, U, V back to back, rows
 * without padding, the set's size. Returns its bytes, or 0 for any other layout. */
static size_t packed_bytes(const glcv_media_cuda *c, const glcv_media_picture *pic)
{
    const glcv_yuv_planes *p = &pic->planes;
    size_t w = (size_t)c->width, h = (size_t)c->height, cw = (w + 1) / 2, ch = (h + 1) / 2;
    if (pic->kind != GLCV_PICTURE_YUV420 || pic->device || p->width != c->width || p->height != c->height ||
        p->c_step != 1 || p->y_pitch != w || p->u_pitch != cw || p->v_pitch != cw || p->u != p->y + w * h ||
        p->v != p->u + cw * ch)
        return 0;
    return w * h + 2 * cw * ch;
}

/* A host picture (pinned memory) copied by DMA into layer l's place in the staging buffer, *planes
 * pointed at the copy: the kernel then reads device memory, where reading the host memory in place
 * makes a bus request of every load. Leaves *planes alone (read in place) when the picture is laid
 * out otherwise or there is no memory for the buffer. */
static glcv_status stage_picture(glcv_media_cuda *c, int l, const glcv_media_picture *pic, glcv_yuv_planes *planes)
{
    size_t bytes = packed_bytes(c, pic);
    if (bytes == 0 || c->staging_failed)
        return GLCV_OK;
    if (!c->staging && cudaMalloc((void **)&c->staging, bytes * (size_t)c->layers) != cudaSuccess) {
        (void)cudaGetLastError();
        c->staging = NULL;
        c->staging_failed = 1;
        glcv_logf(&c->logger, GLCV_LOG_DEBUG, "media set: no device memory to stage host frames: read in place");
        return GLCV_OK;
    }
    uint8_t *dst = c->staging + bytes * (size_t)l;
    GLCV_CUDA_TRY(&c->logger, cudaMemcpyAsync(dst, pic->planes.y, bytes, cudaMemcpyHostToDevice, c->stream),
                  "media set: copying a frame to the GPU");
    size_t luma = (size_t)c->width * (size_t)c->height, chroma = (bytes - luma) / 2;
    planes->y = dst;
    planes->u = dst + luma;
    planes->v = dst + luma + chroma;
    return GLCV_OK;
}

glcv_status glcv_media_cuda_convert(glcv_media_cuda *c, const glcv_media_cuda_layer *layers, int n)
{
    if (n < 1)
        return GLCV_OK;
    glcv_status st = glcv_media_cuda_wait(c); /* the descriptors' pinned copy is reused below */
    if (st != GLCV_OK)
        return st;
    GLCV_CUDA_TRY(&c->logger, cudaSetDevice(c->device), "media set: cudaSetDevice");
    glcv_cuda_image *img = &c->image;
    if ((st = glcv_cuda_images_map(&img, 1, c->stream, &c->logger)) != GLCV_OK)
        return st;
    for (int i = 0; i < n && st == GLCV_OK; i++) {
        const glcv_media_cuda_layer *in = &layers[i];
        st = layer_surface(c, in->layer);
        if (st != GLCV_OK)
            break;
        glcv_cuda_media_layer *d = &c->host[i];
        memset(d, 0, sizeof *d);
        d->surface = c->surfaces[in->layer];
        const glcv_media_picture *pic = &in->picture;
        if (pic->kind == GLCV_PICTURE_YUV420) {
            d->planes = pic->planes;
            d->coeffs = *glcv_media_yuv_coeffs(pic->matrix, pic->full_range);
            st = stage_picture(c, in->layer, pic, &d->planes);
        } else {
            d->rgb_bytes = 3; /* the set's sources deliver RGB8 */
            d->rgb = pic->rgb;
            d->rgb_pitch = pic->stride;
        }
    }
    cudaError_t err = cudaSuccess;
    if (st == GLCV_OK) {
        err = cudaMemcpyAsync(c->dev, c->host, sizeof(glcv_cuda_media_layer) * (size_t)n, cudaMemcpyHostToDevice,
                              c->stream);
        if (err == cudaSuccess)
            err = (cudaError_t)glcv_cuda_media_convert(
                (glcv_cuda_media_convert_params){.layers = c->dev, .count = n, .width = c->width, .height = c->height},
                c->stream);
        if (err != cudaSuccess)
            st = glcv_cuda_fail(&c->logger, err, "media set: the conversion kernel");
    }
    glcv_status unmapped = glcv_cuda_images_unmap(&img, 1, c->stream, &c->logger);
    if (st == GLCV_OK)
        st = unmapped;
    /* the frames' memory stays with the set until glcv_media_cuda_wait has seen this event */
    err = cudaEventRecord(c->converted, c->stream);
    if (err == cudaSuccess)
        c->pending = 1;
    else if (st == GLCV_OK)
        st = glcv_cuda_fail(&c->logger, err, "media set: cudaEventRecord");
    if (err != cudaSuccess)
        (void)cudaStreamSynchronize(c->stream); /* no event to wait for: nothing may stay pending */
    return st;
}
