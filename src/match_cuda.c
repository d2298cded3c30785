/* The matcher's CUDA engine, host side (see match_internal.h): the image split into bands of rows
 * over one or more devices, each band uploaded, converted to planes, matched and read back in
 * pieces on their own streams so that transfers overlap the kernels; templates in a constant-memory
 * pool shared by the process's matchers; GL textures through the CUDA-GL bridge. The kernels are
 * cuda/match.cu, behind match_kernels.h. */
#include "match_internal.h"

#include "core_internal.h"

#include <glcv/image.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if GLCV_HAVE_CUDA
#include "cuda_bridge.h"
#include "match_kernels.h"

#include <cuda_runtime_api.h>

/* One device's share: map rows [row_begin, row_end), its memory, and the pieces in flight. */
typedef struct match_device {
    int device;
    int row_begin, row_end;
    cudaStream_t streams[GLCV_MATCH_MAX_CHUNKS];
    cudaEvent_t converted[GLCV_MATCH_MAX_CHUNKS]; /* planes ready up to the piece's last row */
    cudaEvent_t ev[GLCV_MATCH_MAX_CHUNKS][4];     /* timing (first device): upload start, upload end, kernel end, download end */
    uint8_t *raw;                      /* interleaved input rows, raw_pitch bytes per row */
    size_t raw_pitch;
    uint8_t *planes;                   /* the image's planes */
    void *map;                         /* map_pitch elements per row, 8 bytes an element at most */
    uint32_t *words;                   /* template words in global memory when the pool is full */
    int const_offset;                  /* word offset in the constant pool, or -1 */
    int const_slots;
} match_device;

struct glcv_match_cuda {
    match_device dev[GLCV_MATCH_MAX_DEVICES];
    int n_dev;
    int chunks;
    int with_gl;          /* device 0 is the current GL context's device: textures go through the bridge */
    size_t map_pitch;     /* elements */
    uint8_t *staging;     /* pinned: host input rows */
    uint32_t *host_words; /* pinned: template and mask words */
    glcv_cuda_bridge *bridge;
};

#define POOL_SLOT_WORDS 256
#define POOL_SLOTS (GLCV_CUDA_MATCH_CONST_WORDS / POOL_SLOT_WORDS)

/* The constant pool of each device is shared by every matcher of the process: slots of 256 words,
 * handed out first fit. */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t pool_used[GLCV_MATCH_MAX_DEVICES];

static int pool_alloc(int device, int words)
{
    int need = (words + POOL_SLOT_WORDS - 1) / POOL_SLOT_WORDS;
    int found = -1;
    if (device < 0 || device >= GLCV_MATCH_MAX_DEVICES || need > POOL_SLOTS)
        return -1;
    pthread_mutex_lock(&pool_lock);
    for (int s = 0; s + need <= POOL_SLOTS && found < 0; s++) {
        int free_run = 1;
        for (int i = 0; i < need && free_run; i++)
            free_run = !(pool_used[device] >> (s + i) & 1u);
        if (free_run) {
            for (int i = 0; i < need; i++)
                pool_used[device] |= (uint64_t)1 << (s + i);
            found = s;
        }
    }
    pthread_mutex_unlock(&pool_lock);
    return found;
}

static void pool_free(int device, int slot, int slots)
{
    if (slot < 0 || device < 0 || device >= GLCV_MATCH_MAX_DEVICES)
        return;
    pthread_mutex_lock(&pool_lock);
    for (int i = 0; i < slots; i++)
        pool_used[device] &= ~((uint64_t)1 << (slot + i));
    pthread_mutex_unlock(&pool_lock);
}

#define CUDA_TRY(call, what) GLCV_CUDA_TRY(&m->p.logger, call, what)

static size_t store_bytes(glcv_match_store store)
{
    return store == GLCV_MATCH_STORE_U64 ? 8 : 4;
}

static void cuda_release_template(glcv_match *m)
{
    glcv_match_cuda *c = m->cuda;
    for (int d = 0; d < c->n_dev; d++) {
        match_device *dv = &c->dev[d];
        if (cudaSetDevice(dv->device) != cudaSuccess)
            continue;
        if (dv->words)
            cudaFree(dv->words);
        dv->words = NULL;
        pool_free(dv->device, dv->const_offset < 0 ? -1 : dv->const_offset / POOL_SLOT_WORDS, dv->const_slots);
        dv->const_offset = -1;
        dv->const_slots = 0;
    }
}

void glcv_match_cuda_destroy(glcv_match *m)
{
    glcv_match_cuda *c = m->cuda;
    if (!c)
        return;
    /* The bridge first: it waits on the last stream it mapped on, one of the streams below. */
    if (c->bridge && c->n_dev > 0 && cudaSetDevice(c->dev[0].device) == cudaSuccess)
        glcv_cuda_bridge_destroy(&c->bridge);
    cuda_release_template(m);
    for (int d = 0; d < c->n_dev; d++) {
        match_device *dv = &c->dev[d];
        if (cudaSetDevice(dv->device) != cudaSuccess)
            continue;
        for (int k = 0; k < c->chunks; k++) {
            if (dv->streams[k])
                cudaStreamDestroy(dv->streams[k]);
            if (dv->converted[k])
                cudaEventDestroy(dv->converted[k]);
            for (int e = 0; e < 4; e++)
                if (dv->ev[k][e])
                    cudaEventDestroy(dv->ev[k][e]);
        }
        cudaFree(dv->raw);
        cudaFree(dv->planes);
        cudaFree(dv->map);
    }
    if (c->bridge)
        glcv_cuda_bridge_destroy(&c->bridge);
    if (c->staging)
        cudaFreeHost(c->staging);
    if (c->host_words)
        cudaFreeHost(c->host_words);
    if (m->map.data)
        cudaFreeHost(m->map.data);
    (void)cudaGetLastError();
    m->map.data = NULL;
    m->mapped = NULL;
    free(c);
    m->cuda = NULL;
}

glcv_status glcv_match_cuda_create(glcv_match *m, const glcv_cuda_device *device)
{
    int first = device->device;
    int count = m->p.cuda_devices < 0 ? device->count - first : m->p.cuda_devices;
    if (count < 1 || first + count > device->count || count > GLCV_MATCH_MAX_DEVICES)
        return glcv_fail(&m->p.logger, GLCV_ERROR_UNSUPPORTED,
                         "match: %d CUDA device%s from device %d asked for, %d present", count,
                         count == 1 ? "" : "s", first, device->count);
    m->cuda = calloc(1, sizeof *m->cuda);
    if (!m->cuda)
        return GLCV_ERROR_OUT_OF_MEMORY;
    glcv_match_cuda *c = m->cuda;
    c->with_gl = device->with_gl;
    m->p.cuda_device = first;
    m->p.cuda_devices = count;
    int w = m->p.width, h = m->p.height;
    c->n_dev = count;
    c->chunks = m->p.cuda_chunks < h ? m->p.cuda_chunks : h;
    c->map_pitch = (((size_t)w + 63) & ~(size_t)63);
    CUDA_TRY(cudaHostAlloc((void **)&m->map.data, (size_t)w * (size_t)h * 8, cudaHostAllocPortable),
             "match: pinned map");
    CUDA_TRY(cudaHostAlloc((void **)&c->staging, (size_t)w * (size_t)h * 4, cudaHostAllocPortable),
             "match: pinned staging");
    m->mapped = c->staging;
    for (int d = 0; d < count; d++) {
        match_device *dv = &c->dev[d];
        dv->device = first + d;
        dv->const_offset = -1;
        dv->row_begin = (int)((int64_t)h * d / count);
        dv->row_end = (int)((int64_t)h * (d + 1) / count);
        CUDA_TRY(cudaSetDevice(dv->device), "match: cudaSetDevice");
        for (int k = 0; k < c->chunks; k++) {
            glcv_status st = glcv_cuda_stream_create(&dv->streams[k], &m->p.logger, "match: stream");
            if (st != GLCV_OK)
                return st;
            CUDA_TRY(cudaEventCreateWithFlags(&dv->converted[k], cudaEventDisableTiming), "match: event");
            for (int e = 0; e < 4; e++)
                CUDA_TRY(cudaEventCreate(&dv->ev[k][e]), "match: event");
        }
        dv->raw_pitch = ((size_t)w * 4 + 255) & ~(size_t)255;
        size_t pitch = glcv_cuda_match_pitch(w);
        CUDA_TRY(cudaMalloc((void **)&dv->raw, dv->raw_pitch * (size_t)h), "match: input rows");
        CUDA_TRY(cudaMalloc((void **)&dv->planes, pitch * (size_t)h * (size_t)m->channels), "match: planes");
        CUDA_TRY(cudaMemset(dv->planes, 0, pitch * (size_t)h * (size_t)m->channels), "match: planes");
        CUDA_TRY(cudaMalloc(&dv->map, c->map_pitch * (size_t)h * 8), "match: score map");
    }
    return GLCV_OK;
}

/* Template words (see match_kernels.h) into pinned memory, then into each device's constant pool
 * (or global memory when the pool is full). */
glcv_status glcv_match_cuda_set_template(glcv_match *m)
{
    glcv_match_cuda *c = m->cuda;
    const glcv_match_tmpl *t = &m->tmpl;
    int groups = (t->width + 3) / 4;
    size_t per = (size_t)t->channels * (size_t)t->height * (size_t)groups;
    size_t n = 2 * per;
    cuda_release_template(m);
    if (c->host_words)
        cudaFreeHost(c->host_words);
    c->host_words = NULL;
    CUDA_TRY(cudaHostAlloc((void **)&c->host_words, n * sizeof(uint32_t), cudaHostAllocPortable),
             "match: template words");
    uint32_t *tw = c->host_words, *mw = c->host_words + per;
    memset(tw, 0, n * sizeof(uint32_t));
    for (int ch = 0; ch < t->channels; ch++) {
        for (int r = 0; r < t->height; r++) {
            const uint8_t *src = t->pixels + ((size_t)ch * (size_t)t->height + (size_t)r) * (size_t)t->width;
            const uint8_t *mk = t->mask ? t->mask + (size_t)r * (size_t)t->width : NULL;
            size_t base = ((size_t)ch * (size_t)t->height + (size_t)r) * (size_t)groups;
            for (int i = 0; i < t->width; i++) {
                if (mk && !mk[i])
                    continue;
                tw[base + (size_t)(i / 4)] |= (uint32_t)src[i] << (8 * (i % 4));
                mw[base + (size_t)(i / 4)] |= 0xFFu << (8 * (i % 4));
            }
        }
    }
    for (int d = 0; d < c->n_dev; d++) {
        match_device *dv = &c->dev[d];
        CUDA_TRY(cudaSetDevice(dv->device), "match: cudaSetDevice");
        int slot = n <= (size_t)GLCV_CUDA_MATCH_CONST_WORDS ? pool_alloc(dv->device, (int)n) : -1;
        if (slot >= 0) {
            dv->const_offset = slot * POOL_SLOT_WORDS;
            dv->const_slots = ((int)n + POOL_SLOT_WORDS - 1) / POOL_SLOT_WORDS;
            CUDA_TRY((cudaError_t)glcv_cuda_match_const_upload(dv->const_offset, tw, (int)n, dv->streams[0]),
                     "match: template to constant memory");
        } else {
            CUDA_TRY(cudaMalloc((void **)&dv->words, n * sizeof(uint32_t)), "match: template words");
            CUDA_TRY(cudaMemcpyAsync(dv->words, tw, n * sizeof(uint32_t), cudaMemcpyHostToDevice, dv->streams[0]),
                     "match: template words");
        }
        CUDA_TRY(cudaStreamSynchronize(dv->streams[0]), "match: template upload");
    }
    glcv_logf(&m->p.logger, GLCV_LOG_DEBUG, "match: template %dx%d in %s memory", t->width, t->height,
              c->dev[0].const_offset >= 0 ? "constant" : "global");
    return GLCV_OK;
}

/* Where a match's input comes from. */
typedef struct cuda_source {
    const uint8_t *host;   /* host rows (the caller's or the staging memory), or NULL */
    size_t stride;
    int in_staging;        /* host rows already in pinned staging memory */
    const uint8_t *device; /* device rows on the first device (the bridge), or NULL */
    size_t device_pitch;
    glcv_pixel_format format;
    unsigned long long texture; /* a texture object on the first device (the bridge's registered
                                   texture, RGBA8), or 0 */
} cuda_source;

static void layout_params(glcv_pixel_format f, glcv_cuda_planes_params *pp)
{
    pp->src_bpp = glcv_pixel_format_size(f);
    pp->src_gray = f == GLCV_PIXEL_GRAY8;
    pp->src_r = pp->src_g = pp->src_b = 0;
    pp->src_a = -1;
    switch (f) {
    case GLCV_PIXEL_RGB8: pp->src_g = 1, pp->src_b = 2; break;
    case GLCV_PIXEL_RGBA8: pp->src_g = 1, pp->src_b = 2, pp->src_a = 3; break;
    case GLCV_PIXEL_BGR8: pp->src_r = 2, pp->src_g = 1; break;
    case GLCV_PIXEL_BGRA8: pp->src_r = 2, pp->src_g = 1, pp->src_a = 3; break;
    default: break;
    }
}

static glcv_status cuda_run(glcv_match *m, const cuda_source *src)
{
    glcv_match_cuda *c = m->cuda;
    const glcv_match_tmpl *t = &m->tmpl;
    int w = m->p.width, h = m->p.height;
    size_t pitch = glcv_cuda_match_pitch(w);
    int bpp = glcv_pixel_format_size(src->format);
    size_t row_bytes = (size_t)w * (size_t)bpp;
    size_t elem = store_bytes(m->map.store);
    int direct = src->format == GLCV_PIXEL_GRAY8 && m->channels == 1; /* rows go straight into the plane */
    int on_device = src->device || src->texture; /* the frame is on the first device already */
    int n_dev = on_device ? 1 : c->n_dev;
    int chunks = on_device ? 1 : c->chunks;

    glcv_cuda_match_params kp;
    memset(&kp, 0, sizeof kp);
    kp.pitch = pitch;
    kp.plane_size = pitch * (size_t)h;
    kp.width = w;
    kp.height = h;
    kp.channels = m->channels;
    kp.tw = t->width;
    kp.th = t->height;
    kp.groups = (t->width + 3) / 4;
    kp.metric = (int)m->p.metric;
    kp.masked = t->mask != NULL || t->width % 4 != 0;
    kp.wide = m->map.store == GLCV_MATCH_STORE_U64 ||
              (m->p.metric == GLCV_MATCH_ZNCC && t->count > GLCV_MATCH_ZNCC_NARROW_MAX);
    kp.x0 = m->region.x0;
    kp.y0 = m->region.y0;
    kp.x1 = m->region.x1;
    kp.y1 = m->region.y1;
    kp.map_pitch = c->map_pitch;
    kp.count = t->count;
    for (int ch = 0; ch < 4; ch++)
        kp.t_sum[ch] = t->sum[ch];
    kp.t_var = t->var;

    for (int k = 0; k < chunks; k++) {
        for (int d = 0; d < n_dev; d++) {
            match_device *dv = &c->dev[d];
            int rb = on_device ? 0 : dv->row_begin, re = on_device ? h : dv->row_end;
            int span = re - rb;
            int cb = rb + (int)((int64_t)span * k / chunks), ce = rb + (int)((int64_t)span * (k + 1) / chunks);
            /* input rows this piece adds: up to its last position row + th - 1 */
            int prev_end = k == 0 ? cb : rb + (int)((int64_t)span * k / chunks) + t->height - 1;
            if (prev_end > h)
                prev_end = h;
            int ub = k == 0 ? cb : prev_end, ue = ce + t->height - 1;
            if (ue > h)
                ue = h;
            if (ub > ue)
                ub = ue;
            cudaStream_t s = dv->streams[k];
            CUDA_TRY(cudaSetDevice(dv->device), "match: cudaSetDevice");
            if (d == 0)
                CUDA_TRY(cudaEventRecord(dv->ev[k][0], s), "match: event");
            if (ue > ub && !on_device) {
                const uint8_t *rows = src->host + (size_t)ub * src->stride;
                size_t rows_stride = src->stride;
                if (!src->in_staging) {
                    uint8_t *dst = c->staging + (size_t)ub * row_bytes;
                    for (int y = ub; y < ue; y++)
                        memcpy(dst + (size_t)(y - ub) * row_bytes, src->host + (size_t)y * src->stride, row_bytes);
                    rows = dst;
                    rows_stride = row_bytes;
                }
                uint8_t *to = direct ? dv->planes + (size_t)ub * pitch : dv->raw + (size_t)ub * dv->raw_pitch;
                CUDA_TRY(cudaMemcpy2DAsync(to, direct ? pitch : dv->raw_pitch, rows, rows_stride, row_bytes,
                                           (size_t)(ue - ub), cudaMemcpyHostToDevice, s),
                         "match: upload");
            }
            if (d == 0)
                CUDA_TRY(cudaEventRecord(dv->ev[k][1], s), "match: event");
            if (ue > ub && (!direct || on_device)) {
                glcv_cuda_planes_params pp;
                memset(&pp, 0, sizeof pp);
                layout_params(src->format, &pp);
                if (on_device)
                    pp.src_a = -1; /* as the host path's texture read-back: alpha 255 */
                pp.src = on_device ? src->device : dv->raw;
                pp.src_pitch = on_device ? src->device_pitch : dv->raw_pitch;
                pp.src_texture = src->texture;
                pp.planes = dv->planes;
                pp.pitch = pitch;
                pp.plane_size = kp.plane_size;
                pp.channels = m->channels;
                pp.width = w;
                pp.row_begin = ub;
                pp.row_end = ue;
                CUDA_TRY((cudaError_t)glcv_cuda_match_planes(pp, s), "match: planes kernel");
            }
            /* The piece's first th - 1 input rows come from earlier pieces, several of them when pieces
             * are shorter than the template: wait before recording, so that converted[k] also covers
             * every earlier piece. */
            if (k > 0)
                CUDA_TRY(cudaStreamWaitEvent(s, dv->converted[k - 1], 0), "match: stream order");
            CUDA_TRY(cudaEventRecord(dv->converted[k], s), "match: event");
            kp.planes = dv->planes;
            kp.map = dv->map;
            kp.row_begin = cb;
            kp.row_end = ce;
            kp.const_offset = dv->const_offset;
            kp.words = dv->words;
            CUDA_TRY((cudaError_t)glcv_cuda_match(kp, s), "match: kernel");
            if (d == 0)
                CUDA_TRY(cudaEventRecord(dv->ev[k][2], s), "match: event");
            if (ce > cb)
                CUDA_TRY(cudaMemcpy2DAsync((uint8_t *)m->map.data + (size_t)cb * (size_t)w * elem, (size_t)w * elem,
                                           (uint8_t *)dv->map + (size_t)cb * c->map_pitch * elem, c->map_pitch * elem,
                                           (size_t)w * elem, (size_t)(ce - cb), cudaMemcpyDeviceToHost, s),
                         "match: download");
            if (d == 0)
                CUDA_TRY(cudaEventRecord(dv->ev[k][3], s), "match: event");
        }
    }
    for (int d = 0; d < n_dev; d++) {
        CUDA_TRY(cudaSetDevice(c->dev[d].device), "match: cudaSetDevice");
        for (int k = 0; k < chunks; k++)
            CUDA_TRY(cudaStreamSynchronize(c->dev[d].streams[k]), "match: wait");
    }
    CUDA_TRY(cudaSetDevice(c->dev[0].device), "match: cudaSetDevice");
    double up = 0, kernel = 0, down = 0, total = 0;
    for (int k = 0; k < chunks; k++) {
        up += glcv_cuda_elapsed_ms(c->dev[0].ev[k][0], c->dev[0].ev[k][1]);
        kernel += glcv_cuda_elapsed_ms(c->dev[0].ev[k][1], c->dev[0].ev[k][2]);
        down += glcv_cuda_elapsed_ms(c->dev[0].ev[k][2], c->dev[0].ev[k][3]);
        double end = glcv_cuda_elapsed_ms(c->dev[0].ev[0][0], c->dev[0].ev[k][3]);
        if (end > total)
            total = end;
    }
    glcv_timing tm[4] = {{"upload", up, chunks, GLCV_CLOCK_GPU}, {"kernel", kernel, chunks, GLCV_CLOCK_GPU}, {"download", down, chunks, GLCV_CLOCK_GPU},
                              {"total", total, 1, GLCV_CLOCK_GPU}};
    memcpy(m->timings, tm, sizeof tm);
    m->n_timings = 4;
    return GLCV_OK;
}

glcv_status glcv_match_cuda_image(glcv_match *m, const glcv_image *image, int in_staging)
{
    cuda_source src = {image->data, glcv_image_stride(image), in_staging, NULL, 0, image->format, 0};
    return cuda_run(m, &src);
}

glcv_status glcv_match_cuda_texture(glcv_match *m, unsigned int texture)
{
    glcv_match_cuda *c = m->cuda;
    if (!c->with_gl)
        return GLCV_ERROR_UNSUPPORTED;
    /* through the bridge: an RGBA8 texture registered once and mapped, read in place through a
     * texture object; other formats copied by GL into a buffer that CUDA maps on device 0 */
    glcv_status st = GLCV_OK;
    if (!c->bridge)
        st = glcv_cuda_bridge_create_for_textures(m->p.width, m->p.height, &m->p.logger, &c->bridge);
    glcv_cuda_frame frame;
    if (st == GLCV_OK && (st = glcv_cuda_bridge_map_textures(c->bridge, texture, 0, c->dev[0].streams[0], &frame)) ==
                             GLCV_OK) {
        cuda_source src = {NULL, 0, 0, frame.rgba, frame.rgba_pitch, GLCV_PIXEL_RGBA8,
                           (unsigned long long)frame.rgba_texture};
        st = cuda_run(m, &src);
        glcv_status un = glcv_cuda_bridge_unmap(c->bridge, c->dev[0].streams[0]);
        st = st != GLCV_OK ? st : un;
    }
    return st;
}

glcv_status glcv_match_cuda_forget_texture(glcv_match *m, unsigned int texture)
{
    glcv_match_cuda *c = m->cuda;
    if (!c || !c->bridge)
        return GLCV_OK;
    cudaSetDevice(c->dev[0].device);
    return glcv_cuda_bridge_forget(c->bridge, texture);
}

void glcv_match_texture_stats(glcv_match *m, int *direct, int *registered)
{
    glcv_cuda_bridge_stats s = {0};
    *direct = -1;
    *registered = 0;
    if (!m->cuda || !m->cuda->bridge)
        return;
    glcv_cuda_bridge_get_stats(m->cuda->bridge, &s);
    *direct = s.direct;
    *registered = s.registered;
}

#else /* built without CUDA: glcv_cuda_choose never picks this engine */

glcv_status glcv_match_cuda_create(glcv_match *m, const glcv_cuda_device *device)
{
    (void)device;
    return glcv_fail(&m->p.logger, GLCV_ERROR_UNSUPPORTED, "match: glcv was built without CUDA");
}

void glcv_match_cuda_destroy(glcv_match *m)
{
    (void)m;
}

glcv_status glcv_match_cuda_set_template(glcv_match *m)
{
    (void)m;
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_match_cuda_image(glcv_match *m, const glcv_image *image, int in_staging)
{
    (void)m, (void)image, (void)in_staging;
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_match_cuda_texture(glcv_match *m, unsigned int texture)
{
    (void)m, (void)texture;
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_match_cuda_forget_texture(glcv_match *m, unsigned int texture)
{
    (void)m, (void)texture;
    return GLCV_OK;
}

void glcv_match_texture_stats(glcv_match *m, int *direct, int *registered)
{
    (void)m;
    *direct = -1;
    *registered = 0;
}

#endif
