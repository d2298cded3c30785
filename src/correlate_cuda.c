/* The correlator's CUDA engine, host side (see correlate_internal.h): the reference on the device,
 * host batches streamed through two pinned slots so that one piece's upload overlaps the other's
 * kernels, the resident bank, and GL textures through the CUDA-GL bridge. With several devices
 * (params.cuda_devices) the images are split in contiguous shares, one per device, each device
 * streaming or holding its share; every image's coefficient comes from one device's kernels, so
 * the results are those of one device. The kernels are
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

/* One device's share: its streams, slots, reference, part of the bank and coefficients. */
typedef struct correlate_dev {
    int device, sms;
    cudaStream_t streams[2];
    cudaEvent_t slot_free[2];
    cudaEvent_t ev[2][4];    /* per stream: upload start, upload end, kernel end, download end */
    cudaEvent_t run_start;
    uint8_t *d_reference;
    uint8_t *d_bank;
    size_t d_bank_capacity;  /* images */
    int bank_first, bank_n;  /* the bank's images this device holds */
    uint8_t *d_slots[2];     /* streaming: batch images each */
    uint8_t *h_slots[2];     /* pinned */
    unsigned long long *d_partial[2];
    size_t partial_capacity[2]; /* entries */
    unsigned long long *d_bank_partial;
    size_t bank_partial_capacity;
    double *d_r;
    double *h_r;             /* pinned */
    size_t r_capacity;
    /* the last run: this device's images [first, first + n), its pieces and their summed times */
    int first, n, pieces;
    double up, kernel, down, total;
} correlate_dev;

struct glcv_correlate_cuda {
    int with_gl;             /* dev[0] is the current GL context's device */
    int n_dev;
    correlate_dev dev[GLCV_CORRELATE_MAX_DEVICES];
    int bank_n;
    glcv_cuda_bridge *bridge; /* on dev[0] */
    cudaTextureObject_t *objects; /* a piece's textures' objects (map_many), batch of them */
};

#define CUDA_TRY(call, what) GLCV_CUDA_TRY(&c->p.logger, call, what)

static void dev_free(correlate_dev *d)
{
    for (int s = 0; s < 2; s++) {
        if (d->streams[s])
            cudaStreamDestroy(d->streams[s]);
        if (d->slot_free[s])
            cudaEventDestroy(d->slot_free[s]);
        for (int e = 0; e < 4; e++)
            if (d->ev[s][e])
                cudaEventDestroy(d->ev[s][e]);
        cudaFree(d->d_slots[s]);
        cudaFree(d->d_partial[s]);
        if (d->h_slots[s])
            cudaFreeHost(d->h_slots[s]);
    }
    if (d->run_start)
        cudaEventDestroy(d->run_start);
    cudaFree(d->d_reference);
    cudaFree(d->d_bank);
    cudaFree(d->d_bank_partial);
    cudaFree(d->d_r);
    if (d->h_r)
        cudaFreeHost(d->h_r);
}

void glcv_correlate_cuda_destroy(glcv_correlate *c)
{
    glcv_correlate_cuda *g = c->cuda;
    if (!g)
        return;
    /* The bridge first: it waits on the last stream it mapped on, one of dev[0]'s. */
    if (g->bridge && cudaSetDevice(g->dev[0].device) == cudaSuccess)
        glcv_cuda_bridge_destroy(&g->bridge);
    for (int d = 0; d < g->n_dev; d++)
        if (cudaSetDevice(g->dev[d].device) == cudaSuccess)
            dev_free(&g->dev[d]);
    if (g->bridge)
        glcv_cuda_bridge_destroy(&g->bridge);
    (void)cudaGetLastError();
    free(g->objects);
    free(g);
    c->cuda = NULL;
}

glcv_status glcv_correlate_cuda_create(glcv_correlate *c, const glcv_cuda_device *device)
{
    int first = device->device;
    int count = c->p.cuda_devices < 0 ? device->count - first : c->p.cuda_devices;
    if (count < 1 || first + count > device->count || count > GLCV_CORRELATE_MAX_DEVICES)
        return glcv_fail(&c->p.logger, GLCV_ERROR_UNSUPPORTED,
                         "correlate: %d CUDA device%s from device %d asked for, %d present", count,
                         count == 1 ? "" : "s", first, device->count);
    glcv_correlate_cuda *g = c->cuda = calloc(1, sizeof *c->cuda);
    if (!g)
        return GLCV_ERROR_OUT_OF_MEMORY;
    g->with_gl = device->with_gl;
    c->p.cuda_devices = count;
    size_t slot = (size_t)c->p.batch * c->padded;
    for (int i = 0; i < count; i++) {
        correlate_dev *d = &g->dev[i];
        d->device = first + i;
        g->n_dev = i + 1; /* destroy frees what was made */
        CUDA_TRY(cudaSetDevice(d->device), "correlate: cudaSetDevice");
        CUDA_TRY(cudaDeviceGetAttribute(&d->sms, cudaDevAttrMultiProcessorCount, d->device), "correlate: device");
        for (int s = 0; s < 2; s++) {
            glcv_status st = glcv_cuda_stream_create(&d->streams[s], &c->p.logger, "correlate: stream");
            if (st != GLCV_OK)
                return st;
            CUDA_TRY(cudaEventCreateWithFlags(&d->slot_free[s], cudaEventDisableTiming), "correlate: event");
            for (int e = 0; e < 4; e++)
                CUDA_TRY(cudaEventCreate(&d->ev[s][e]), "correlate: event");
            CUDA_TRY(cudaMalloc((void **)&d->d_slots[s], slot), "correlate: device slots");
            CUDA_TRY(cudaMemset(d->d_slots[s], 0, slot), "correlate: device slots"); /* zero padding */
            CUDA_TRY(cudaHostAlloc((void **)&d->h_slots[s], slot, cudaHostAllocDefault), "correlate: pinned slots");
            memset(d->h_slots[s], 0, slot);
        }
        CUDA_TRY(cudaEventCreate(&d->run_start), "correlate: event");
        CUDA_TRY(cudaMalloc((void **)&d->d_reference, c->padded), "correlate: reference");
    }
    return GLCV_OK;
}

glcv_status glcv_correlate_cuda_set_reference(glcv_correlate *c)
{
    glcv_correlate_cuda *g = c->cuda;
    for (int i = 0; i < g->n_dev; i++) {
        CUDA_TRY(cudaSetDevice(g->dev[i].device), "correlate: cudaSetDevice");
        CUDA_TRY(cudaMemcpy(g->dev[i].d_reference, c->reference, c->padded, cudaMemcpyHostToDevice),
                 "correlate: reference");
    }
    return GLCV_OK;
}

/* Device i's share of n images: [n i / devices, n (i + 1) / devices). */
static int share_begin(int n, int i, int devices)
{
    return (int)((long long)n * i / devices);
}

static glcv_status ensure_r(glcv_correlate *c, correlate_dev *d, size_t n)
{
    if (n <= d->r_capacity)
        return GLCV_OK;
    cudaFree(d->d_r);
    if (d->h_r)
        cudaFreeHost(d->h_r);
    d->d_r = NULL;
    d->h_r = NULL;
    d->r_capacity = 0;
    CUDA_TRY(cudaMalloc((void **)&d->d_r, n * sizeof(double)), "correlate: coefficients");
    CUDA_TRY(cudaHostAlloc((void **)&d->h_r, n * sizeof(double), cudaHostAllocDefault), "correlate: coefficients");
    d->r_capacity = n;
    return GLCV_OK;
}

/* Slices per image: enough blocks for every multiprocessor when there are few images, each slice
 * at least 256 words of 16 bytes. */
static int slices_for(const glcv_correlate *c, const correlate_dev *d, int n)
{
    int target = 4 * (d->sms > 0 ? d->sms : 1);
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

/* Queues the kernels for n images at `bank` (on device d) on `stream`; coefficients to d_r. */
static glcv_status queue_kernels(glcv_correlate *c, const correlate_dev *d, const uint8_t *bank, int n, double *d_r,
                                 unsigned long long *partial, cudaStream_t stream)
{
    int slices = slices_for(c, d, n);
    glcv_cuda_correlate_params kp = {bank, c->padded, n, d->d_reference, c->padded, slices, partial,
                                     (long long)c->samples, c->ref_sum, c->ref_sum_sq, d_r, c->images_per_block};
    CUDA_TRY((cudaError_t)glcv_cuda_correlate(kp, stream), "correlate: kernel");
    if (slices > 1) {
        glcv_cuda_correlate_finish_params fp = {partial, n, slices, (long long)c->samples, c->ref_sum,
                                                c->ref_sum_sq, d_r};
        CUDA_TRY((cudaError_t)glcv_cuda_correlate_finish(fp, stream), "correlate: finish kernel");
    }
    return GLCV_OK;
}

typedef struct pack_loop {
    const glcv_correlate *c;
    const glcv_image *images;
    uint8_t *slot;
} pack_loop;

static void pack_range(void *user, int begin, int end)
{
    const pack_loop *l = user;
    for (int i = begin; i < end; i++)
        glcv_correlate_pack(l->c, &l->images[i], l->slot + (size_t)i * l->c->padded);
}

/* Packs `count` host images into a pinned slot: a host copy, on the cores it pays to use. */
static void pack_slot(const glcv_correlate *c, const glcv_image *images, int count, uint8_t *slot)
{
    pack_loop l = {c, images, slot};
    glcv_parallel_for(count, c->p.threads, pack_range, &l);
}

/* The source of streamed images: host images, or textures through the bridge (device 0 only). */
typedef struct stream_source {
    const glcv_image *images;
    const unsigned int *textures;
} stream_source;

/* A piece's textures into device 0's slot s: in one hand-over when they can go in place, else one
 * by one through the bridge's copy. */
static glcv_status pack_textures(glcv_correlate *c, const unsigned int *textures, int count, int s)
{
    glcv_correlate_cuda *g = c->cuda;
    correlate_dev *d = &g->dev[0];
    cudaStream_t stream = d->streams[s];
    glcv_status st = glcv_cuda_bridge_map_many(g->bridge, textures, count, stream, g->objects);
    if (st != GLCV_OK && st != GLCV_ERROR_UNSUPPORTED)
        return st;
    if (st == GLCV_OK) {
        for (int i = 0; i < count; i++) {
            glcv_cuda_correlate_pack_params pp = {NULL, 0, (unsigned long long)g->objects[i], c->p.width, c->p.height,
                                                  c->channels, d->d_slots[s] + (size_t)i * c->padded};
            cudaError_t err = (cudaError_t)glcv_cuda_correlate_pack(pp, stream);
            if (err != cudaSuccess) {
                (void)glcv_cuda_bridge_unmap(g->bridge, stream);
                return glcv_cuda_fail(&c->p.logger, err, "correlate: pack kernel");
            }
        }
        return glcv_cuda_bridge_unmap(g->bridge, stream);
    }
    for (int i = 0; i < count; i++) {
        glcv_cuda_frame frame;
        glcv_status bst = glcv_cuda_bridge_map_frame(g->bridge, textures[i], 0, stream, &frame);
        if (bst != GLCV_OK)
            return bst;
        glcv_cuda_correlate_pack_params pp = {frame.rgba, frame.rgba_pitch, 0, c->p.width, c->p.height, c->channels,
                                              d->d_slots[s] + (size_t)i * c->padded};
        cudaError_t err = (cudaError_t)glcv_cuda_correlate_pack(pp, stream);
        bst = glcv_cuda_bridge_unmap(g->bridge, stream);
        if (err != cudaSuccess)
            return glcv_cuda_fail(&c->p.logger, err, "correlate: pack kernel");
        if (bst != GLCV_OK)
            return bst;
    }
    return GLCV_OK;
}

/* Adds the times of device d's piece on slot s (done) to its sums. */
static void add_piece_times(correlate_dev *d, int s)
{
    d->up += glcv_cuda_elapsed_ms(d->ev[s][0], d->ev[s][1]);
    d->kernel += glcv_cuda_elapsed_ms(d->ev[s][1], d->ev[s][2]);
    d->down += glcv_cuda_elapsed_ms(d->ev[s][2], d->ev[s][3]);
}

/* The last run's times: upload, kernel and download summed over each device's pieces, the
 * largest over the devices (they run side by side), and the longest device's total. */
static void publish_times(glcv_correlate *c, int devices, int upload)
{
    glcv_correlate_cuda *g = c->cuda;
    glcv_timing t[4] = {{"upload", 0.0, 0, GLCV_CLOCK_GPU}, {"kernel", 0.0, 0, GLCV_CLOCK_GPU},
                        {"download", 0.0, 0, GLCV_CLOCK_GPU}, {"total", 0.0, 1, GLCV_CLOCK_GPU}};
    for (int i = 0; i < devices; i++) {
        const correlate_dev *d = &g->dev[i];
        t[0].ms = d->up > t[0].ms ? d->up : t[0].ms;
        t[1].ms = d->kernel > t[1].ms ? d->kernel : t[1].ms;
        t[2].ms = d->down > t[2].ms ? d->down : t[2].ms;
        t[3].ms = d->total > t[3].ms ? d->total : t[3].ms;
        t[0].count = upload && d->pieces > t[0].count ? d->pieces : t[0].count;
        t[1].count = d->pieces > t[1].count ? d->pieces : t[1].count;
        t[2].count = t[1].count;
    }
    memcpy(c->timings, t, sizeof t);
    c->n_timings = 4;
}

/* Queues piece k of device i's share on its stream k % 2: pack and upload (or hand the textures
 * over), kernels, download of its coefficients; one piece's upload overlaps the other's kernels. */
static glcv_status queue_piece(glcv_correlate *c, stream_source src, int i, int k)
{
    correlate_dev *d = &c->cuda->dev[i];
    int batch = c->p.batch, s = k % 2, local = k * batch;
    int count = d->n - local < batch ? d->n - local : batch;
    cudaStream_t stream = d->streams[s];
    CUDA_TRY(cudaSetDevice(d->device), "correlate: cudaSetDevice");
    if (k >= 2) {
        /* the slot's last piece must be done before its pinned memory is reused */
        CUDA_TRY(cudaEventSynchronize(d->ev[s][3]), "correlate: wait");
        add_piece_times(d, s);
    }
    if (k == 0)
        CUDA_TRY(cudaEventRecord(d->run_start, stream), "correlate: event");
    if (k == 1)
        CUDA_TRY(cudaStreamWaitEvent(stream, d->run_start, 0), "correlate: stream order");
    if (src.images)
        pack_slot(c, src.images + d->first + local, count, d->h_slots[s]);
    CUDA_TRY(cudaEventRecord(d->ev[s][0], stream), "correlate: event");
    if (src.images) {
        CUDA_TRY(cudaMemcpyAsync(d->d_slots[s], d->h_slots[s], (size_t)count * c->padded, cudaMemcpyHostToDevice,
                                 stream),
                 "correlate: upload");
    } else {
        glcv_status st = pack_textures(c, src.textures + d->first + local, count, s);
        if (st != GLCV_OK)
            return st;
    }
    CUDA_TRY(cudaEventRecord(d->ev[s][1], stream), "correlate: event");
    glcv_status st = queue_kernels(c, d, d->d_slots[s], count, d->d_r + local, d->d_partial[s], stream);
    if (st != GLCV_OK)
        return st;
    CUDA_TRY(cudaEventRecord(d->ev[s][2], stream), "correlate: event");
    CUDA_TRY(cudaMemcpyAsync(d->h_r + local, d->d_r + local, (size_t)count * sizeof(double), cudaMemcpyDeviceToHost,
                             stream),
             "correlate: download");
    CUDA_TRY(cudaEventRecord(d->ev[s][3], stream), "correlate: event");
    return GLCV_OK;
}

/* Streams n images through `devices` devices, each its share through its two slots, the devices'
 * pieces queued in turn so that they work side by side. */
static glcv_status cuda_stream(glcv_correlate *c, stream_source src, int n, int devices, double *r)
{
    glcv_correlate_cuda *g = c->cuda;
    int batch = c->p.batch, rounds = 0;
    for (int i = 0; i < devices; i++) {
        correlate_dev *d = &g->dev[i];
        d->first = share_begin(n, i, devices);
        d->n = share_begin(n, i + 1, devices) - d->first;
        d->pieces = (d->n + batch - 1) / batch;
        d->up = d->kernel = d->down = d->total = 0.0;
        rounds = d->pieces > rounds ? d->pieces : rounds;
        CUDA_TRY(cudaSetDevice(d->device), "correlate: cudaSetDevice");
        glcv_status st = ensure_r(c, d, (size_t)(d->n > 0 ? d->n : 1));
        int slices_max = slices_for(c, d, 1);
        for (int s = 0; s < 2 && st == GLCV_OK; s++)
            st = ensure_partial(c, &d->d_partial[s], &d->partial_capacity[s], (size_t)batch * (size_t)slices_max * 3);
        if (st != GLCV_OK)
            return st;
    }
    for (int k = 0; k < rounds; k++)
        for (int i = 0; i < devices; i++) {
            if (k >= g->dev[i].pieces)
                continue;
            glcv_status st = queue_piece(c, src, i, k);
            if (st != GLCV_OK)
                return st;
        }
    for (int i = 0; i < devices; i++) {
        correlate_dev *d = &g->dev[i];
        if (d->pieces == 0)
            continue;
        CUDA_TRY(cudaSetDevice(d->device), "correlate: cudaSetDevice");
        for (int s = 0; s < 2 && s < d->pieces; s++) {
            CUDA_TRY(cudaStreamSynchronize(d->streams[s]), "correlate: wait");
            add_piece_times(d, s);
        }
        d->total = glcv_cuda_elapsed_ms(d->run_start, d->ev[(d->pieces - 1) % 2][3]);
        memcpy(r + d->first, d->h_r, (size_t)d->n * sizeof(double));
    }
    publish_times(c, devices, 1);
    return GLCV_OK;
}

glcv_status glcv_correlate_cuda_bank_load(glcv_correlate *c, const glcv_image *images, int n)
{
    glcv_correlate_cuda *g = c->cuda;
    int batch = c->p.batch;
    g->bank_n = 0;
    for (int i = 0; i < g->n_dev; i++) {
        correlate_dev *d = &g->dev[i];
        d->bank_first = share_begin(n, i, g->n_dev);
        d->bank_n = share_begin(n, i + 1, g->n_dev) - d->bank_first;
        CUDA_TRY(cudaSetDevice(d->device), "correlate: cudaSetDevice");
        if ((size_t)d->bank_n > d->d_bank_capacity) {
            cudaFree(d->d_bank);
            d->d_bank = NULL;
            d->d_bank_capacity = 0;
            CUDA_TRY(cudaMalloc((void **)&d->d_bank, (size_t)d->bank_n * c->padded), "correlate: image bank");
            d->d_bank_capacity = (size_t)d->bank_n;
        }
        /* the devices' uploads overlap: the next device's share is packed while this one copies */
        for (int first = 0, k = 0; first < d->bank_n; first += batch, k++) {
            int s = k % 2, count = d->bank_n - first < batch ? d->bank_n - first : batch;
            if (k >= 2)
                CUDA_TRY(cudaEventSynchronize(d->slot_free[s]), "correlate: wait");
            pack_slot(c, images + d->bank_first + first, count, d->h_slots[s]);
            CUDA_TRY(cudaMemcpyAsync(d->d_bank + (size_t)first * c->padded, d->h_slots[s], (size_t)count * c->padded,
                                     cudaMemcpyHostToDevice, d->streams[s]),
                     "correlate: bank upload");
            CUDA_TRY(cudaEventRecord(d->slot_free[s], d->streams[s]), "correlate: event");
        }
    }
    for (int i = 0; i < g->n_dev; i++) {
        CUDA_TRY(cudaSetDevice(g->dev[i].device), "correlate: cudaSetDevice");
        for (int s = 0; s < 2; s++)
            CUDA_TRY(cudaStreamSynchronize(g->dev[i].streams[s]), "correlate: bank upload");
    }
    g->bank_n = n;
    return GLCV_OK;
}

glcv_status glcv_correlate_cuda_bank_run(glcv_correlate *c, double *r)
{
    glcv_correlate_cuda *g = c->cuda;
    for (int i = 0; i < g->n_dev; i++) {
        correlate_dev *d = &g->dev[i];
        d->pieces = d->bank_n > 0;
        d->up = d->kernel = d->down = d->total = 0.0;
        if (d->bank_n == 0)
            continue;
        CUDA_TRY(cudaSetDevice(d->device), "correlate: cudaSetDevice");
        glcv_status st = ensure_r(c, d, (size_t)d->bank_n);
        if (st == GLCV_OK)
            st = ensure_partial(c, &d->d_bank_partial, &d->bank_partial_capacity,
                                (size_t)d->bank_n * (size_t)slices_for(c, d, d->bank_n) * 3);
        if (st != GLCV_OK)
            return st;
        cudaStream_t stream = d->streams[0];
        CUDA_TRY(cudaEventRecord(d->ev[0][1], stream), "correlate: event");
        st = queue_kernels(c, d, d->d_bank, d->bank_n, d->d_r, d->d_bank_partial, stream);
        if (st != GLCV_OK)
            return st;
        CUDA_TRY(cudaEventRecord(d->ev[0][2], stream), "correlate: event");
        CUDA_TRY(cudaMemcpyAsync(d->h_r, d->d_r, (size_t)d->bank_n * sizeof(double), cudaMemcpyDeviceToHost, stream),
                 "correlate: download");
        CUDA_TRY(cudaEventRecord(d->ev[0][3], stream), "correlate: event");
    }
    for (int i = 0; i < g->n_dev; i++) {
        correlate_dev *d = &g->dev[i];
        if (d->bank_n == 0)
            continue;
        CUDA_TRY(cudaSetDevice(d->device), "correlate: cudaSetDevice");
        CUDA_TRY(cudaStreamSynchronize(d->streams[0]), "correlate: wait");
        memcpy(r + d->bank_first, d->h_r, (size_t)d->bank_n * sizeof(double));
        d->kernel = glcv_cuda_elapsed_ms(d->ev[0][1], d->ev[0][2]);
        d->down = glcv_cuda_elapsed_ms(d->ev[0][2], d->ev[0][3]);
        d->total = d->kernel + d->down;
    }
    publish_times(c, g->n_dev, 0);
    return GLCV_OK;
}

glcv_status glcv_correlate_cuda_images(glcv_correlate *c, const glcv_image *images, int n, double *r)
{
    stream_source src = {images, NULL};
    return cuda_stream(c, src, n, c->cuda->n_dev, r);
}

glcv_status glcv_correlate_cuda_textures(glcv_correlate *c, const unsigned int *textures, int n, double *r)
{
    glcv_correlate_cuda *g = c->cuda;
    if (!g->with_gl)
        return GLCV_ERROR_UNSUPPORTED;
    CUDA_TRY(cudaSetDevice(g->dev[0].device), "correlate: cudaSetDevice");
    if (!g->bridge) {
        glcv_status st = glcv_cuda_bridge_create_for_textures(c->p.width, c->p.height, &c->p.logger, &g->bridge);
        if (st != GLCV_OK)
            return st;
    }
    if (!g->objects && !(g->objects = calloc((size_t)c->p.batch, sizeof *g->objects)))
        return GLCV_ERROR_OUT_OF_MEMORY;
    stream_source src = {NULL, textures};
    return cuda_stream(c, src, n, 1, r); /* the textures live on the GL context's device */
}

glcv_status glcv_correlate_cuda_forget_texture(glcv_correlate *c, unsigned int texture)
{
    glcv_correlate_cuda *g = c->cuda;
    if (!g || !g->bridge)
        return GLCV_OK;
    cudaSetDevice(g->dev[0].device);
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
