/* The correlator's CUDA engine, host side (see correlate_internal.h): the reference on the device,
 * host batches streamed through two pinned slots so that one piece's upload overlaps the other's
 * kernels, the resident bank, and GL textures through the CUDA-GL bridge. The kernels are
 * cuda/correlate.cu, behind correlate_kernels.h. */
#include "correlate_internal.h"

#include "core_internal.h"

#include <glcv/image.h>

#include <stdlib.h>
#include <string.h>

#if GLCV_HAVE_CUDA
#include "correlate_kernels.h"
#include "cuda_bridge.h"

#include <cuda_runtime_api.h>

struct glcv_correlate_cuda {
    int device, with_gl, sms;
    cudaStream_t streams[2];
    cudaEvent_t slot_free[2];
    cudaEvent_t ev[2][4];    /* per stream: upload start, upload end, kernel end, download end */
    cudaEvent_t run_start, run_end;
    uint8_t *d_reference;
    uint8_t *d_bank;
    size_t d_bank_capacity;  /* images */
    int d_bank_n;
    uint8_t *d_slots[2];     /* streaming: batch images each */
    uint8_t *h_slots[2];     /* pinned */
    unsigned long long *d_partial[2];
    size_t partial_capacity[2]; /* entries */
    unsigned long long *d_bank_partial;
    size_t bank_partial_capacity;
    double *d_r;
    double *h_r;             /* pinned */
    size_t r_capacity;
    glcv_cuda_bridge *bridge;
    cudaTextureObject_t *objects; /* a piece's textures' objects (map_many), batch of them */
};

#define CUDA_TRY(call, what) GLCV_CUDA_TRY(&c->p.logger, call, what)

void glcv_correlate_cuda_destroy(glcv_correlate *c)
{
    glcv_correlate_cuda *g = c->cuda;
    if (!g)
        return;
    if (cudaSetDevice(g->device) == cudaSuccess) {
        /* The bridge first: it waits on the last stream it mapped on, one of the streams below. */
        if (g->bridge)
            glcv_cuda_bridge_destroy(&g->bridge);
        for (int s = 0; s < 2; s++) {
            if (g->streams[s])
                cudaStreamDestroy(g->streams[s]);
            if (g->slot_free[s])
                cudaEventDestroy(g->slot_free[s]);
            for (int e = 0; e < 4; e++)
                if (g->ev[s][e])
                    cudaEventDestroy(g->ev[s][e]);
            cudaFree(g->d_slots[s]);
            cudaFree(g->d_partial[s]);
            if (g->h_slots[s])
                cudaFreeHost(g->h_slots[s]);
        }
        if (g->run_start)
            cudaEventDestroy(g->run_start);
        if (g->run_end)
            cudaEventDestroy(g->run_end);
        cudaFree(g->d_reference);
        cudaFree(g->d_bank);
        cudaFree(g->d_bank_partial);
        cudaFree(g->d_r);
        if (g->h_r)
            cudaFreeHost(g->h_r);
    }
    if (g->bridge)
        glcv_cuda_bridge_destroy(&g->bridge);
    (void)cudaGetLastError();
    free(g->objects);
    free(g);
    c->cuda = NULL;
}

glcv_status glcv_correlate_cuda_create(glcv_correlate *c, const glcv_cuda_device *device)
{
    glcv_correlate_cuda *g = c->cuda = calloc(1, sizeof *c->cuda);
    if (!g)
        return GLCV_ERROR_OUT_OF_MEMORY;
    g->device = device->device;
    g->with_gl = device->with_gl;
    size_t slot = (size_t)c->p.batch * c->padded;
    CUDA_TRY(cudaSetDevice(g->device), "correlate: cudaSetDevice");
    CUDA_TRY(cudaDeviceGetAttribute(&g->sms, cudaDevAttrMultiProcessorCount, g->device), "correlate: device");
    for (int s = 0; s < 2; s++) {
        glcv_status st = glcv_cuda_stream_create(&g->streams[s], &c->p.logger, "correlate: stream");
        if (st != GLCV_OK)
            return st;
        CUDA_TRY(cudaEventCreateWithFlags(&g->slot_free[s], cudaEventDisableTiming), "correlate: event");
        for (int e = 0; e < 4; e++)
            CUDA_TRY(cudaEventCreate(&g->ev[s][e]), "correlate: event");
        CUDA_TRY(cudaMalloc((void **)&g->d_slots[s], slot), "correlate: device slots");
        CUDA_TRY(cudaMemset(g->d_slots[s], 0, slot), "correlate: device slots"); /* zero padding */
        CUDA_TRY(cudaHostAlloc((void **)&g->h_slots[s], slot, cudaHostAllocDefault), "correlate: pinned slots");
        memset(g->h_slots[s], 0, slot);
    }
    CUDA_TRY(cudaEventCreate(&g->run_start), "correlate: event");
    CUDA_TRY(cudaEventCreate(&g->run_end), "correlate: event");
    CUDA_TRY(cudaMalloc((void **)&g->d_reference, c->padded), "correlate: reference");
    return GLCV_OK;
}

glcv_status glcv_correlate_cuda_set_reference(glcv_correlate *c)
{
    glcv_correlate_cuda *g = c->cuda;
    CUDA_TRY(cudaSetDevice(g->device), "correlate: cudaSetDevice");
    CUDA_TRY(cudaMemcpy(g->d_reference, c->reference, c->padded, cudaMemcpyHostToDevice), "correlate: reference");
    return GLCV_OK;
}

static glcv_status ensure_r(glcv_correlate *c, size_t n)
{
    glcv_correlate_cuda *g = c->cuda;
    if (n <= g->r_capacity)
        return GLCV_OK;
    cudaFree(g->d_r);
    if (g->h_r)
        cudaFreeHost(g->h_r);
    g->d_r = NULL;
    g->h_r = NULL;
    g->r_capacity = 0;
    CUDA_TRY(cudaMalloc((void **)&g->d_r, n * sizeof(double)), "correlate: coefficients");
    CUDA_TRY(cudaHostAlloc((void **)&g->h_r, n * sizeof(double), cudaHostAllocDefault), "correlate: coefficients");
    g->r_capacity = n;
    return GLCV_OK;
}

/* Slices per image: enough blocks for every multiprocessor when there are few images, each slice
 * at least 256 words of 16 bytes. */
static int slices_for(const glcv_correlate *c, int n)
{
    glcv_correlate_cuda *g = c->cuda;
    int target = 4 * (g->sms > 0 ? g->sms : 1);
    if (n >= target)
        return 1;
    size_t words = c->padded / 16;
    int per = (target + n - 1) / n;
    size_t max_slices = words / 256 > 0 ? words / 256 : 1;
    if ((size_t)per > max_slices)
        per = (int)max_slices;
    return per > 65535 ? 65535 : per < 1 ? 1 : per;
}

static glcv_status ensure_partial(glcv_correlate *c, unsigned long long **buf, size_t *capacity, size_t need)
{
    if (need <= *capacity)
        return GLCV_OK;
    cudaFree(*buf);
    *buf = NULL;
    *capacity = 0;
    CUDA_TRY(cudaMalloc((void **)buf, need * sizeof(unsigned long long)), "correlate: partial sums");
    *capacity = need;
    return GLCV_OK;
}

/* Queues the kernels for n images at `bank` (device) on `stream`; coefficients to d_r. */
static glcv_status queue_kernels(glcv_correlate *c, const uint8_t *bank, int n, double *d_r,
                                 unsigned long long *partial, cudaStream_t stream)
{
    glcv_correlate_cuda *g = c->cuda;
    int slices = slices_for(c, n);
    glcv_cuda_correlate_params kp = {bank, c->padded, n, g->d_reference, c->padded, slices, partial,
                                     (long long)c->samples, c->ref_sum, c->ref_sum_sq, d_r, c->images_per_block};
    CUDA_TRY((cudaError_t)glcv_cuda_correlate(kp, stream), "correlate: kernel");
    if (slices > 1) {
        glcv_cuda_correlate_finish_params fp = {partial, n, slices, (long long)c->samples, c->ref_sum,
                                                c->ref_sum_sq, d_r};
        CUDA_TRY((cudaError_t)glcv_cuda_correlate_finish(fp, stream), "correlate: finish kernel");
    }
    return GLCV_OK;
}

/* Packs `count` host images into a pinned slot: a host copy, on every core. */
static void pack_slot(const glcv_correlate *c, const glcv_image *images, int count, uint8_t *slot)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(glcv_correlate_threads(c))
#endif
    for (int i = 0; i < count; i++)
        glcv_correlate_pack(c, &images[i], slot + (size_t)i * c->padded);
}

/* The source of streamed images: host images, or textures through the bridge. */
typedef struct stream_source {
    const glcv_image *images;
    const unsigned int *textures;
} stream_source;

/* Streams n images through the two slots: piece k on stream k % 2 (pack into pinned memory, upload,
 * kernels, download of its coefficients), so that one piece's upload overlaps the other's kernels. */
static glcv_status cuda_stream(glcv_correlate *c, stream_source src, int n, double *r)
{
    glcv_correlate_cuda *g = c->cuda;
    CUDA_TRY(cudaSetDevice(g->device), "correlate: cudaSetDevice");
    glcv_status st = ensure_r(c, (size_t)n);
    int batch = c->p.batch;
    int slices_max = slices_for(c, 1);
    for (int s = 0; s < 2 && st == GLCV_OK; s++)
        st = ensure_partial(c, &g->d_partial[s], &g->partial_capacity[s], (size_t)batch * (size_t)slices_max * 3);
    if (st != GLCV_OK)
        return st;
    double up = 0, kernel = 0, down = 0;
    CUDA_TRY(cudaEventRecord(g->run_start, g->streams[0]), "correlate: event");
    for (int first = 0, k = 0; first < n; first += batch, k++) {
        int s = k % 2, count = n - first < batch ? n - first : batch;
        cudaStream_t stream = g->streams[s];
        if (k >= 2) {
            /* the slot's last piece must be done before its pinned memory is reused (then its
             * timings can be read) */
            CUDA_TRY(cudaEventSynchronize(g->ev[s][3]), "correlate: wait");
            up += glcv_cuda_elapsed_ms(g->ev[s][0], g->ev[s][1]);
            kernel += glcv_cuda_elapsed_ms(g->ev[s][1], g->ev[s][2]);
            down += glcv_cuda_elapsed_ms(g->ev[s][2], g->ev[s][3]);
        }
        if (k == 1)
            CUDA_TRY(cudaStreamWaitEvent(stream, g->run_start, 0), "correlate: stream order");
        if (src.images) {
            pack_slot(c, src.images + first, count, g->h_slots[s]);
            CUDA_TRY(cudaEventRecord(g->ev[s][0], stream), "correlate: event");
            CUDA_TRY(cudaMemcpyAsync(g->d_slots[s], g->h_slots[s], (size_t)count * c->padded, cudaMemcpyHostToDevice,
                                     stream),
                     "correlate: upload");
        } else {
            CUDA_TRY(cudaEventRecord(g->ev[s][0], stream), "correlate: event");
            /* the piece's textures in one hand-over when they can go in place, else one by one */
            glcv_status many = glcv_cuda_bridge_map_many(g->bridge, src.textures + first, count, stream, g->objects);
            if (many != GLCV_OK && many != GLCV_ERROR_UNSUPPORTED)
                return many;
            for (int i = 0; i < count && many == GLCV_OK; i++) {
                glcv_cuda_correlate_pack_params pp = {NULL, 0, (unsigned long long)g->objects[i], c->p.width,
                                                      c->p.height, c->channels, g->d_slots[s] + (size_t)i * c->padded};
                cudaError_t err = (cudaError_t)glcv_cuda_correlate_pack(pp, stream);
                if (err != cudaSuccess) {
                    (void)glcv_cuda_bridge_unmap(g->bridge, stream);
                    return glcv_cuda_fail(&c->p.logger, err, "correlate: pack kernel");
                }
            }
            if (many == GLCV_OK && (st = glcv_cuda_bridge_unmap(g->bridge, stream)) != GLCV_OK)
                return st;
            for (int i = 0; i < count && many != GLCV_OK; i++) {
                glcv_cuda_frame frame;
                glcv_status bst = glcv_cuda_bridge_map_frame(g->bridge, src.textures[first + i], 0, stream, &frame);
                if (bst != GLCV_OK)
                    return bst;
                glcv_cuda_correlate_pack_params pp = {frame.rgba, frame.rgba_pitch, 0, c->p.width, c->p.height,
                                                      c->channels, g->d_slots[s] + (size_t)i * c->padded};
                cudaError_t err = (cudaError_t)glcv_cuda_correlate_pack(pp, stream);
                bst = glcv_cuda_bridge_unmap(g->bridge, stream);
                if (err != cudaSuccess)
                    return glcv_cuda_fail(&c->p.logger, err, "correlate: pack kernel");
                if (bst != GLCV_OK)
                    return bst;
            }
        }
        CUDA_TRY(cudaEventRecord(g->ev[s][1], stream), "correlate: event");
        st = queue_kernels(c, g->d_slots[s], count, g->d_r + first, g->d_partial[s], stream);
        if (st != GLCV_OK)
            return st;
        CUDA_TRY(cudaEventRecord(g->ev[s][2], stream), "correlate: event");
        CUDA_TRY(cudaMemcpyAsync(g->h_r + first, g->d_r + first, (size_t)count * sizeof(double),
                                 cudaMemcpyDeviceToHost, stream),
                 "correlate: download");
        CUDA_TRY(cudaEventRecord(g->ev[s][3], stream), "correlate: event");
    }
    int pieces = (n + batch - 1) / batch;
    for (int s = 0; s < 2 && s < pieces; s++) {
        CUDA_TRY(cudaStreamSynchronize(g->streams[s]), "correlate: wait");
        up += glcv_cuda_elapsed_ms(g->ev[s][0], g->ev[s][1]);
        kernel += glcv_cuda_elapsed_ms(g->ev[s][1], g->ev[s][2]);
        down += glcv_cuda_elapsed_ms(g->ev[s][2], g->ev[s][3]);
    }
    int last = (pieces - 1) % 2;
    double total = glcv_cuda_elapsed_ms(g->run_start, g->ev[last][3]);
    memcpy(r, g->h_r, (size_t)n * sizeof(double));
    glcv_timing t[4] = {{"upload", up, pieces, GLCV_CLOCK_GPU}, {"kernel", kernel, pieces, GLCV_CLOCK_GPU}, {"download", down, pieces, GLCV_CLOCK_GPU},
                             {"total", total, 1, GLCV_CLOCK_GPU}};
    memcpy(c->timings, t, sizeof t);
    c->n_timings = 4;
    return GLCV_OK;
}

glcv_status glcv_correlate_cuda_bank_load(glcv_correlate *c, const glcv_image *images, int n)
{
    glcv_correlate_cuda *g = c->cuda;
    CUDA_TRY(cudaSetDevice(g->device), "correlate: cudaSetDevice");
    if ((size_t)n > g->d_bank_capacity) {
        cudaFree(g->d_bank);
        g->d_bank = NULL;
        g->d_bank_capacity = 0;
        CUDA_TRY(cudaMalloc((void **)&g->d_bank, (size_t)n * c->padded), "correlate: image bank");
        g->d_bank_capacity = (size_t)n;
    }
    int batch = c->p.batch;
    for (int first = 0, k = 0; first < n; first += batch, k++) {
        int s = k % 2, count = n - first < batch ? n - first : batch;
        if (k >= 2)
            CUDA_TRY(cudaEventSynchronize(g->slot_free[s]), "correlate: wait");
        pack_slot(c, images + first, count, g->h_slots[s]);
        CUDA_TRY(cudaMemcpyAsync(g->d_bank + (size_t)first * c->padded, g->h_slots[s], (size_t)count * c->padded,
                                 cudaMemcpyHostToDevice, g->streams[s]),
                 "correlate: bank upload");
        CUDA_TRY(cudaEventRecord(g->slot_free[s], g->streams[s]), "correlate: event");
    }
    for (int s = 0; s < 2; s++)
        CUDA_TRY(cudaStreamSynchronize(g->streams[s]), "correlate: bank upload");
    g->d_bank_n = n;
    return GLCV_OK;
}

glcv_status glcv_correlate_cuda_bank_run(glcv_correlate *c, double *r)
{
    glcv_correlate_cuda *g = c->cuda;
    int n = g->d_bank_n;
    CUDA_TRY(cudaSetDevice(g->device), "correlate: cudaSetDevice");
    glcv_status st = ensure_r(c, (size_t)n);
    if (st == GLCV_OK)
        st = ensure_partial(c, &g->d_bank_partial, &g->bank_partial_capacity,
                            (size_t)n * (size_t)slices_for(c, n) * 3);
    if (st != GLCV_OK)
        return st;
    cudaStream_t stream = g->streams[0];
    CUDA_TRY(cudaEventRecord(g->ev[0][1], stream), "correlate: event");
    st = queue_kernels(c, g->d_bank, n, g->d_r, g->d_bank_partial, stream);
    if (st != GLCV_OK)
        return st;
    CUDA_TRY(cudaEventRecord(g->ev[0][2], stream), "correlate: event");
    CUDA_TRY(cudaMemcpyAsync(g->h_r, g->d_r, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost, stream),
             "correlate: download");
    CUDA_TRY(cudaEventRecord(g->ev[0][3], stream), "correlate: event");
    CUDA_TRY(cudaStreamSynchronize(stream), "correlate: wait");
    memcpy(r, g->h_r, (size_t)n * sizeof(double));
    double kernel = glcv_cuda_elapsed_ms(g->ev[0][1], g->ev[0][2]), down = glcv_cuda_elapsed_ms(g->ev[0][2], g->ev[0][3]);
    glcv_timing t[4] = {{"upload", 0.0, 0, GLCV_CLOCK_GPU}, {"kernel", kernel, 1, GLCV_CLOCK_GPU}, {"download", down, 1, GLCV_CLOCK_GPU},
                             {"total", kernel + down, 1, GLCV_CLOCK_GPU}};
    memcpy(c->timings, t, sizeof t);
    c->n_timings = 4;
    return GLCV_OK;
}

glcv_status glcv_correlate_cuda_images(glcv_correlate *c, const glcv_image *images, int n, double *r)
{
    stream_source src = {images, NULL};
    return cuda_stream(c, src, n, r);
}

glcv_status glcv_correlate_cuda_textures(glcv_correlate *c, const unsigned int *textures, int n, double *r)
{
    glcv_correlate_cuda *g = c->cuda;
    if (!g->with_gl)
        return GLCV_ERROR_UNSUPPORTED;
    if (!g->bridge) {
        glcv_status st = glcv_cuda_bridge_create_for_textures(c->p.width, c->p.height, &c->p.logger, &g->bridge);
        if (st != GLCV_OK)
            return st;
    }
    if (!g->objects && !(g->objects = calloc((size_t)c->p.batch, sizeof *g->objects)))
        return GLCV_ERROR_OUT_OF_MEMORY;
    stream_source src = {NULL, textures};
    return cuda_stream(c, src, n, r);
}

glcv_status glcv_correlate_cuda_forget_texture(glcv_correlate *c, unsigned int texture)
{
    glcv_correlate_cuda *g = c->cuda;
    if (!g || !g->bridge)
        return GLCV_OK;
    cudaSetDevice(g->device);
    return glcv_cuda_bridge_forget(g->bridge, texture);
}

void glcv_correlate_texture_stats(glcv_correlate *c, int *direct, int *registered)
{
    glcv_cuda_bridge_stats s = {0};
    *direct = -1;
    *registered = 0;
    if (!c->cuda || !c->cuda->bridge)
        return;
    glcv_cuda_bridge_get_stats(c->cuda->bridge, &s);
    *direct = s.direct;
    *registered = s.registered;
}

#else /* built without CUDA: glcv_cuda_choose never picks this engine */

glcv_status glcv_correlate_cuda_create(glcv_correlate *c, const glcv_cuda_device *device)
{
    (void)device;
    return glcv_fail(&c->p.logger, GLCV_ERROR_UNSUPPORTED, "correlate: glcv was built without CUDA");
}

void glcv_correlate_cuda_destroy(glcv_correlate *c)
{
    (void)c;
}

glcv_status glcv_correlate_cuda_set_reference(glcv_correlate *c)
{
    (void)c;
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_correlate_cuda_images(glcv_correlate *c, const glcv_image *images, int n, double *r)
{
    (void)c, (void)images, (void)n, (void)r;
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_correlate_cuda_textures(glcv_correlate *c, const unsigned int *textures, int n, double *r)
{
    (void)c, (void)textures, (void)n, (void)r;
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_correlate_cuda_bank_load(glcv_correlate *c, const glcv_image *images, int n)
{
    (void)c, (void)images, (void)n;
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_correlate_cuda_bank_run(glcv_correlate *c, double *r)
{
    (void)c, (void)r;
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_correlate_cuda_forget_texture(glcv_correlate *c, unsigned int texture)
{
    (void)c, (void)texture;
    return GLCV_OK;
}

void glcv_correlate_texture_stats(glcv_correlate *c, int *direct, int *registered)
{
    (void)c;
    *direct = -1;
    *registered = 0;
}

#endif
