/* The matcher object: parameters, template, region of interest, the score map and its best
 * positions; the CPU engine (match_cpu.c) and the CUDA engine (kernels in cuda/match.cu; device
 * memory, streams, events and the split across devices here). */
#include <glcv/context.h>
#include <glcv/image.h>
#include <glcv/match.h>

#include "engine.h"
#include "internal.h"
#include "match_cpu.h"

#ifdef GLCV_HAVE_CUDA
#include "cuda_bridge.h"
#include "match_kernels.h"

#include <cuda_runtime_api.h>
#endif

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZE 16384
#define MAX_CHUNKS 64
#define MAX_DEVICES 16
#define MAX_TIMINGS 4

#ifdef GLCV_HAVE_CUDA
/* One device's share: map rows [row_begin, row_end), its memory, and the pieces in flight. */
typedef struct match_device {
    int device;
    int row_begin, row_end;
    cudaStream_t streams[MAX_CHUNKS];
    cudaEvent_t converted[MAX_CHUNKS]; /* planes ready up to the piece's last row */
    cudaEvent_t ev[MAX_CHUNKS][4];     /* timing (first device): upload start, upload end, kernel end, download end */
    uint8_t *raw;                      /* interleaved input rows, raw_pitch bytes per row */
    size_t raw_pitch;
    uint8_t *planes;                   /* the image's planes */
    void *map;                         /* map_pitch elements per row, 8 bytes an element at most */
    uint32_t *words;                   /* template words in global memory when the pool is full */
    int const_offset;                  /* word offset in the constant pool, or -1 */
    int const_slots;
} match_device;
#endif

struct glcv_match {
    pthread_mutex_t lock;
    glcv_match_params p; /* resolved; p.engine is CUDA or CPU */
    int channels;
    glcv_match_isa isa;

    glcv_match_tmpl tmpl;
    int have_template;
    glcv_match_rect roi;
    int have_roi;

    glcv_match_map map;       /* host scores (pinned with the CUDA engine) */
    size_t map_capacity;      /* bytes */
    int have_map;
    glcv_match_region region; /* positions evaluated by the last match */

    glcv_match_planes planes; /* CPU engine */
    glcv_image scratch;       /* an input converted to the working format */
    uint8_t *mapped;          /* glcv_match_map_image memory (pinned with CUDA) */
    int mapped_pending;

    glcv_pass_timing timings[MAX_TIMINGS];
    int n_timings;

    unsigned int map_texture;
    int nms_auto; /* nms_distance follows the template's size */

#ifdef GLCV_HAVE_CUDA
    match_device dev[MAX_DEVICES];
    int n_dev;
    int chunks;
    int with_gl;              /* device 0 is the current GL context's device: textures go through the bridge */
    size_t map_pitch;         /* elements */
    uint8_t *staging;         /* pinned: host input rows */
    uint32_t *host_words;     /* pinned: template and mask words */
    glcv_cuda_bridge *bridge;
#endif
};

/* ---- names ------------------------------------------------------------------------------------ */

const char *glcv_match_metric_string(glcv_match_metric metric)
{
    switch (metric) {
    case GLCV_MATCH_METRIC_DEFAULT:
    case GLCV_MATCH_SAD: return "sad";
    case GLCV_MATCH_SSD: return "ssd";
    case GLCV_MATCH_LINF: return "linf";
    case GLCV_MATCH_ZNCC: return "zncc";
    }
    return "?";
}

glcv_status glcv_match_metric_parse(const char *name, glcv_match_metric *out)
{
    static const glcv_match_metric all[] = {GLCV_MATCH_SAD, GLCV_MATCH_SSD, GLCV_MATCH_LINF, GLCV_MATCH_ZNCC};
    if (!name || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(name, glcv_match_metric_string(all[i])) == 0) {
            *out = all[i];
            return GLCV_OK;
        }
    }
    return GLCV_ERROR_INVALID_ARGUMENT;
}

const char *glcv_match_engine_string(glcv_match_engine engine)
{
    switch (engine) {
    case GLCV_MATCH_ENGINE_DEFAULT:
    case GLCV_MATCH_ENGINE_AUTO: return "auto";
    case GLCV_MATCH_ENGINE_CUDA: return "cuda";
    case GLCV_MATCH_ENGINE_CPU: return "cpu";
    }
    return "?";
}

glcv_status glcv_match_engine_parse(const char *name, glcv_match_engine *out)
{
    static const glcv_match_engine all[] = {GLCV_MATCH_ENGINE_AUTO, GLCV_MATCH_ENGINE_CUDA, GLCV_MATCH_ENGINE_CPU};
    if (!name || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(name, glcv_match_engine_string(all[i])) == 0) {
            *out = all[i];
            return GLCV_OK;
        }
    }
    return GLCV_ERROR_INVALID_ARGUMENT;
}

const char *glcv_match_simd_string(glcv_match_simd simd)
{
    switch (simd) {
    case GLCV_MATCH_SIMD_DEFAULT: return "default";
    case GLCV_MATCH_SIMD_NONE: return "none";
    case GLCV_MATCH_SIMD_SSE41: return "sse4.1";
    case GLCV_MATCH_SIMD_AVX2: return "avx2";
    }
    return "?";
}

static glcv_match_simd simd_of_isa(glcv_match_isa isa)
{
    return isa == GLCV_MATCH_ISA_AVX2    ? GLCV_MATCH_SIMD_AVX2
           : isa == GLCV_MATCH_ISA_SSE41 ? GLCV_MATCH_SIMD_SSE41
                                         : GLCV_MATCH_SIMD_NONE;
}

static int format_channels(glcv_pixel_format format)
{
    switch (format) {
    case GLCV_PIXEL_GRAY8: return 1;
    case GLCV_PIXEL_RGB8:
    case GLCV_PIXEL_BGR8: return 3;
    case GLCV_PIXEL_RGBA8:
    case GLCV_PIXEL_BGRA8: return 4;
    case GLCV_PIXEL_UNKNOWN: break;
    }
    return 0;
}

/* ---- CUDA engine ------------------------------------------------------------------------------ */

#ifdef GLCV_HAVE_CUDA

#define POOL_SLOT_WORDS 256
#define POOL_SLOTS (GLCV_CUDA_MATCH_CONST_WORDS / POOL_SLOT_WORDS)

/* The constant pool of each device is shared by every matcher of the process: slots of 256 words,
 * handed out first fit. */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t pool_used[MAX_DEVICES];

static int pool_alloc(int device, int words)
{
    int need = (words + POOL_SLOT_WORDS - 1) / POOL_SLOT_WORDS;
    int found = -1;
    if (device < 0 || device >= MAX_DEVICES || need > POOL_SLOTS)
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
    if (slot < 0 || device < 0 || device >= MAX_DEVICES)
        return;
    pthread_mutex_lock(&pool_lock);
    for (int i = 0; i < slots; i++)
        pool_used[device] &= ~((uint64_t)1 << (slot + i));
    pthread_mutex_unlock(&pool_lock);
}

#define CUDA_TRY(call, what)                                                                                      \
    do {                                                                                                          \
        cudaError_t err_ = (call);                                                                                \
        if (err_ != cudaSuccess)                                                                                  \
            return glcv_cuda_fail(&m->p.logger, err_, what);                                                      \
    } while (0)

static size_t store_bytes(glcv_match_store store)
{
    return store == GLCV_MATCH_STORE_U64 ? 8 : 4;
}

static void cuda_release_template(glcv_match *m)
{
    for (int d = 0; d < m->n_dev; d++) {
        match_device *dv = &m->dev[d];
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

static void cuda_destroy(glcv_match *m)
{
    /* The bridge first: it waits on the last stream it mapped on, one of the streams below. */
    if (m->bridge && m->n_dev > 0 && cudaSetDevice(m->dev[0].device) == cudaSuccess)
        glcv_cuda_bridge_destroy(&m->bridge);
    cuda_release_template(m);
    for (int d = 0; d < m->n_dev; d++) {
        match_device *dv = &m->dev[d];
        if (cudaSetDevice(dv->device) != cudaSuccess)
            continue;
        for (int k = 0; k < m->chunks; k++) {
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
    if (m->bridge)
        glcv_cuda_bridge_destroy(&m->bridge);
    if (m->staging)
        cudaFreeHost(m->staging);
    if (m->host_words)
        cudaFreeHost(m->host_words);
    if (m->map.data)
        cudaFreeHost(m->map.data);
    m->staging = NULL;
    m->host_words = NULL;
    m->map.data = NULL;
    m->mapped = NULL;
    m->n_dev = 0;
}

/* Picks the devices: the current GL context's CUDA device when there is one, else cuda_device;
 * UNSUPPORTED (why says why) when none can be used. */
static glcv_status cuda_pick(glcv_match *m, int *first, int *count, char *why, size_t why_size)
{
    int with_gl = 0, device = -1;
    glcv_status st = glcv_cuda_bridge_pick_device(m->p.cuda_device, &device, &with_gl, why, why_size);
    int present = 0;
    if (cudaGetDeviceCount(&present) != cudaSuccess) {
        (void)cudaGetLastError();
        present = 0;
    }
    if (st != GLCV_OK && present > 0 && m->p.cuda_device >= 0 && m->p.cuda_device < present) {
        /* a GL context on another renderer: CUDA still works, textures go through the host */
        device = m->p.cuda_device;
        with_gl = 0;
        st = GLCV_OK;
    }
    if (st != GLCV_OK)
        return st;
    int want = m->p.cuda_devices < 0 ? present - device : m->p.cuda_devices;
    if (want < 1 || device + want > present || want > MAX_DEVICES) {
        snprintf(why, why_size, "%d CUDA device%s from device %d asked for, %d present", want, want == 1 ? "" : "s",
                 device, present);
        return GLCV_ERROR_UNSUPPORTED;
    }
    m->with_gl = with_gl;
    *first = device;
    *count = want;
    return GLCV_OK;
}

static glcv_status cuda_create(glcv_match *m, int first, int count)
{
    int w = m->p.width, h = m->p.height;
    m->n_dev = count;
    m->chunks = m->p.cuda_chunks;
    if (m->chunks > h)
        m->chunks = h;
    m->map_pitch = (((size_t)w + 63) & ~(size_t)63);
    size_t host_map = (size_t)w * (size_t)h * 8;
    CUDA_TRY(cudaHostAlloc((void **)&m->map.data, host_map, cudaHostAllocPortable), "match: pinned map");
    m->map_capacity = host_map;
    CUDA_TRY(cudaHostAlloc((void **)&m->staging, (size_t)w * (size_t)h * 4, cudaHostAllocPortable),
             "match: pinned staging");
    m->mapped = m->staging;
    for (int d = 0; d < count; d++) {
        match_device *dv = &m->dev[d];
        dv->device = first + d;
        dv->const_offset = -1;
        dv->row_begin = (int)((int64_t)h * d / count);
        dv->row_end = (int)((int64_t)h * (d + 1) / count);
        CUDA_TRY(cudaSetDevice(dv->device), "match: cudaSetDevice");
        for (int k = 0; k < m->chunks; k++) {
            CUDA_TRY(cudaStreamCreateWithFlags(&dv->streams[k], cudaStreamNonBlocking), "match: stream");
            CUDA_TRY(cudaEventCreateWithFlags(&dv->converted[k], cudaEventDisableTiming), "match: event");
            for (int e = 0; e < 4; e++)
                CUDA_TRY(cudaEventCreate(&dv->ev[k][e]), "match: event");
        }
        dv->raw_pitch = ((size_t)w * 4 + 255) & ~(size_t)255;
        size_t pitch = glcv_cuda_match_pitch(w);
        CUDA_TRY(cudaMalloc((void **)&dv->raw, dv->raw_pitch * (size_t)h), "match: input rows");
        CUDA_TRY(cudaMalloc((void **)&dv->planes, pitch * (size_t)h * (size_t)m->channels), "match: planes");
        CUDA_TRY(cudaMemset(dv->planes, 0, pitch * (size_t)h * (size_t)m->channels), "match: planes");
        CUDA_TRY(cudaMalloc(&dv->map, m->map_pitch * (size_t)h * 8), "match: score map");
    }
    return GLCV_OK;
}

/* Template words (see match_kernels.h) into pinned memory, then into each device's constant pool
 * (or global memory when the pool is full). */
static glcv_status cuda_set_template(glcv_match *m)
{
    const glcv_match_tmpl *t = &m->tmpl;
    int groups = (t->width + 3) / 4;
    size_t per = (size_t)t->channels * (size_t)t->height * (size_t)groups;
    size_t n = 2 * per;
    cuda_release_template(m);
    if (m->host_words)
        cudaFreeHost(m->host_words);
    m->host_words = NULL;
    CUDA_TRY(cudaHostAlloc((void **)&m->host_words, n * sizeof(uint32_t), cudaHostAllocPortable),
             "match: template words");
    uint32_t *tw = m->host_words, *mw = m->host_words + per;
    memset(tw, 0, n * sizeof(uint32_t));
    for (int c = 0; c < t->channels; c++) {
        for (int r = 0; r < t->height; r++) {
            const uint8_t *src = t->pixels + ((size_t)c * (size_t)t->height + (size_t)r) * (size_t)t->width;
            const uint8_t *mk = t->mask ? t->mask + (size_t)r * (size_t)t->width : NULL;
            size_t base = ((size_t)c * (size_t)t->height + (size_t)r) * (size_t)groups;
            for (int i = 0; i < t->width; i++) {
                if (mk && !mk[i])
                    continue;
                tw[base + (size_t)(i / 4)] |= (uint32_t)src[i] << (8 * (i % 4));
                mw[base + (size_t)(i / 4)] |= 0xFFu << (8 * (i % 4));
            }
        }
    }
    for (int d = 0; d < m->n_dev; d++) {
        match_device *dv = &m->dev[d];
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
              m->dev[0].const_offset >= 0 ? "constant" : "global");
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

static float elapsed(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0.0f;
    if (cudaEventElapsedTime(&ms, a, b) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0.0f;
    }
    return ms;
}

static glcv_status cuda_run(glcv_match *m, const cuda_source *src)
{
    const glcv_match_tmpl *t = &m->tmpl;
    int w = m->p.width, h = m->p.height;
    size_t pitch = glcv_cuda_match_pitch(w);
    int bpp = glcv_pixel_format_size(src->format);
    size_t row_bytes = (size_t)w * (size_t)bpp;
    size_t elem = store_bytes(m->map.store);
    int direct = src->format == GLCV_PIXEL_GRAY8 && m->channels == 1; /* rows go straight into the plane */
    int n_dev = src->device ? 1 : m->n_dev;
    int chunks = src->device ? 1 : m->chunks;

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
    kp.map_pitch = m->map_pitch;
    kp.count = t->count;
    for (int c = 0; c < 4; c++)
        kp.t_sum[c] = t->sum[c];
    kp.t_var = t->var;

    for (int k = 0; k < chunks; k++) {
        for (int d = 0; d < n_dev; d++) {
            match_device *dv = &m->dev[d];
            int rb = src->device ? 0 : dv->row_begin, re = src->device ? h : dv->row_end;
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
            if (ue > ub && !src->device) {
                const uint8_t *rows = src->host + (size_t)ub * src->stride;
                size_t rows_stride = src->stride;
                if (!src->in_staging) {
                    uint8_t *dst = m->staging + (size_t)ub * row_bytes;
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
            if (ue > ub && (!direct || src->device)) {
                glcv_cuda_planes_params pp;
                memset(&pp, 0, sizeof pp);
                layout_params(src->format, &pp);
                if (src->device)
                    pp.src_a = -1; /* as the host path's texture read-back: alpha 255 */
                pp.src = src->device ? src->device : dv->raw;
                pp.src_pitch = src->device ? src->device_pitch : dv->raw_pitch;
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
                                           (uint8_t *)dv->map + (size_t)cb * m->map_pitch * elem, m->map_pitch * elem,
                                           (size_t)w * elem, (size_t)(ce - cb), cudaMemcpyDeviceToHost, s),
                         "match: download");
            if (d == 0)
                CUDA_TRY(cudaEventRecord(dv->ev[k][3], s), "match: event");
        }
    }
    for (int d = 0; d < n_dev; d++) {
        CUDA_TRY(cudaSetDevice(m->dev[d].device), "match: cudaSetDevice");
        for (int k = 0; k < chunks; k++)
            CUDA_TRY(cudaStreamSynchronize(m->dev[d].streams[k]), "match: wait");
    }
    CUDA_TRY(cudaSetDevice(m->dev[0].device), "match: cudaSetDevice");
    double up = 0, kernel = 0, down = 0, total = 0;
    for (int k = 0; k < chunks; k++) {
        up += elapsed(m->dev[0].ev[k][0], m->dev[0].ev[k][1]);
        kernel += elapsed(m->dev[0].ev[k][1], m->dev[0].ev[k][2]);
        down += elapsed(m->dev[0].ev[k][2], m->dev[0].ev[k][3]);
        double end = elapsed(m->dev[0].ev[0][0], m->dev[0].ev[k][3]);
        if (end > total)
            total = end;
    }
    glcv_pass_timing tm[4] = {{"upload", up, chunks}, {"kernel", kernel, chunks}, {"download", down, chunks},
                              {"total", total, 1}};
    memcpy(m->timings, tm, sizeof tm);
    m->n_timings = 4;
    return GLCV_OK;
}

#undef CUDA_TRY
#endif /* GLCV_HAVE_CUDA */

static int use_cuda(const glcv_match *m)
{
    return m->p.engine == GLCV_MATCH_ENGINE_CUDA;
}

/* ---- create / destroy ----------------------------------------------------------------------- */

static glcv_status resolve_params(const glcv_match_params *in, glcv_match_params *p)
{
    *p = *in;
    const glcv_logger *lg = &in->logger;
    if (p->width < 1 || p->height < 1 || p->width > MAX_SIZE || p->height > MAX_SIZE)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: size %dx%d: width and height must be 1..%d",
                         p->width, p->height, MAX_SIZE);
    if (p->format == GLCV_PIXEL_UNKNOWN)
        p->format = GLCV_PIXEL_GRAY8;
    if (format_channels(p->format) == 0)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: unknown pixel format %d", (int)p->format);
    if (p->metric == GLCV_MATCH_METRIC_DEFAULT)
        p->metric = GLCV_MATCH_SAD;
    if (p->metric < GLCV_MATCH_SAD || p->metric > GLCV_MATCH_ZNCC)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: unknown metric %d", (int)p->metric);
    if (p->engine == GLCV_MATCH_ENGINE_DEFAULT)
        p->engine = GLCV_MATCH_ENGINE_AUTO;
    if (p->engine < GLCV_MATCH_ENGINE_AUTO || p->engine > GLCV_MATCH_ENGINE_CPU)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: unknown engine %d", (int)p->engine);
    if (p->nms_distance < 0 || p->nms_distance > MAX_SIZE)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: nms_distance %d must be 1..%d", p->nms_distance,
                         MAX_SIZE);
    if (p->threads < 0 || p->threads > 4096)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: threads %d must be 0..4096", p->threads);
    if (p->simd < GLCV_MATCH_SIMD_DEFAULT || p->simd > GLCV_MATCH_SIMD_AVX2)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: unknown SIMD level %d", (int)p->simd);
    if (p->cuda_device < 0)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: cuda_device %d must be >= 0", p->cuda_device);
    if (p->cuda_devices == 0)
        p->cuda_devices = 1;
    if (p->cuda_devices < -1 || p->cuda_devices > MAX_DEVICES)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: cuda_devices %d must be -1 or 1..%d",
                         p->cuda_devices, MAX_DEVICES);
    if (p->cuda_chunks == 0)
        p->cuda_chunks = (int64_t)p->width * p->height > 1000000 ? 4 : 1;
    if (p->cuda_chunks < 1 || p->cuda_chunks > MAX_CHUNKS)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: cuda_chunks %d must be 1..%d", p->cuda_chunks,
                         MAX_CHUNKS);
    return GLCV_OK;
}

static void match_free(glcv_match *m)
{
#ifdef GLCV_HAVE_CUDA
    if (use_cuda(m))
        cuda_destroy(m);
#endif
    if (!use_cuda(m)) {
        free(m->map.data);
        free(m->mapped);
    }
    if (m->map_texture && glcv_gl_context_current()) {
        GLuint tex = m->map_texture;
        glDeleteTextures(1, &tex);
    }
    glcv_match_tmpl_free(&m->tmpl);
    glcv_match_planes_free(&m->planes);
    glcv_image_free(&m->scratch);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

glcv_status glcv_match_create(const glcv_match_params *params, glcv_match **out)
{
    if (!out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (!params)
        return GLCV_ERROR_INVALID_ARGUMENT;
    glcv_match_params p;
    glcv_status st = resolve_params(params, &p);
    if (st != GLCV_OK)
        return st;
    const glcv_logger *lg = &params->logger;

    glcv_match_isa best = glcv_match_cpu_best_isa();
    glcv_match_isa isa = best;
    if (p.simd != GLCV_MATCH_SIMD_DEFAULT) {
        isa = p.simd == GLCV_MATCH_SIMD_AVX2    ? GLCV_MATCH_ISA_AVX2
              : p.simd == GLCV_MATCH_SIMD_SSE41 ? GLCV_MATCH_ISA_SSE41
                                                : GLCV_MATCH_ISA_PORTABLE;
        if (isa > best)
            return glcv_fail(lg, GLCV_ERROR_UNSUPPORTED, "match: this processor does not run %s",
                             glcv_match_simd_string(p.simd));
    }
    p.simd = simd_of_isa(isa);

    glcv_match *m = calloc(1, sizeof *m);
    if (!m)
        return GLCV_ERROR_OUT_OF_MEMORY;
    if (pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m);
        return GLCV_ERROR_OUT_OF_MEMORY;
    }
    m->p = p;
    m->nms_auto = p.nms_distance == 0;
    m->channels = format_channels(p.format);
    m->isa = isa;
    m->map.width = p.width;
    m->map.height = p.height;

    /* the engine */
    char why[192] = "CUDA support was not built";
    int cuda_ok = 0;
#ifdef GLCV_HAVE_CUDA
    int first = 0, count = 0;
    if (p.engine != GLCV_MATCH_ENGINE_CPU && cuda_pick(m, &first, &count, why, sizeof why) == GLCV_OK) {
        m->p.engine = GLCV_MATCH_ENGINE_CUDA;
        st = cuda_create(m, first, count);
        if (st != GLCV_OK) {
            match_free(m);
            return st;
        }
        m->p.cuda_device = first;
        m->p.cuda_devices = count;
        cuda_ok = 1;
    }
#endif
    if (!cuda_ok) {
        if (p.engine == GLCV_MATCH_ENGINE_CUDA) {
            free(m->map.data);
            pthread_mutex_destroy(&m->lock);
            free(m);
            return glcv_fail(lg, GLCV_ERROR_UNSUPPORTED, "match: CUDA engine unavailable: %s", why);
        }
        if (p.engine == GLCV_MATCH_ENGINE_AUTO)
            glcv_logf(lg, GLCV_LOG_INFO, "match: %s: template matching runs on the CPU (%s)", why,
                      glcv_match_simd_string(m->p.simd));
        m->p.engine = GLCV_MATCH_ENGINE_CPU;
        m->p.cuda_devices = 0;
        m->p.cuda_chunks = 0;
        st = glcv_match_planes_alloc(&m->planes, p.width, p.height, m->channels);
        size_t map_bytes = (size_t)p.width * (size_t)p.height * 8;
        m->map.data = st == GLCV_OK ? malloc(map_bytes) : NULL;
        m->map_capacity = map_bytes;
        m->mapped = m->map.data ? malloc((size_t)p.width * (size_t)p.height * (size_t)m->channels) : NULL;
        if (st != GLCV_OK || !m->map.data || !m->mapped) {
            match_free(m);
            return glcv_fail(lg, GLCV_ERROR_OUT_OF_MEMORY, "match: cannot allocate the buffers for %dx%d",
                             p.width, p.height);
        }
    }
    glcv_logf(lg, GLCV_LOG_DEBUG, "match: %dx%d, %d channel%s, engine %s", p.width, p.height, m->channels,
              m->channels == 1 ? "" : "s", glcv_match_engine_string(m->p.engine));
    *out = m;
    return GLCV_OK;
}

void glcv_match_destroy(glcv_match **match)
{
    if (!match || !*match)
        return;
    match_free(*match);
    *match = NULL;
}

glcv_status glcv_match_get_params(glcv_match *m, glcv_match_params *out)
{
    if (!m || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&m->lock);
    *out = m->p;
    pthread_mutex_unlock(&m->lock);
    return GLCV_OK;
}

/* ---- template, metric, ROI -------------------------------------------------------------------- */

static void update_store(glcv_match *m)
{
    m->map.store = m->have_template ? glcv_match_store_for(m->p.metric, m->tmpl.count, m->channels)
                                    : GLCV_MATCH_STORE_U32;
}

glcv_status glcv_match_set_metric(glcv_match *m, glcv_match_metric metric)
{
    if (!m)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (metric == GLCV_MATCH_METRIC_DEFAULT)
        metric = GLCV_MATCH_SAD;
    if (metric < GLCV_MATCH_SAD || metric > GLCV_MATCH_ZNCC)
        return glcv_fail(&m->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "match: unknown metric %d", (int)metric);
    pthread_mutex_lock(&m->lock);
    m->p.metric = metric;
    m->have_map = 0;
    update_store(m);
    pthread_mutex_unlock(&m->lock);
    return GLCV_OK;
}

/* Converts an image into the working format (m->scratch, reallocated as needed) unless it is in it
 * already; *pixels / *stride point at the result. */
static glcv_status to_working_format(glcv_match *m, const glcv_image *img, const uint8_t **pixels, size_t *stride)
{
    if (img->format == m->p.format) {
        *pixels = img->data;
        *stride = glcv_image_stride(img);
        return GLCV_OK;
    }
    if (m->scratch.width < img->width || m->scratch.height < img->height || m->scratch.format != m->p.format) {
        glcv_image_free(&m->scratch);
        glcv_status st = glcv_image_alloc(img->width, img->height, m->p.format, &m->scratch);
        if (st != GLCV_OK)
            return glcv_fail(&m->p.logger, st, "match: cannot allocate a %dx%d conversion buffer", img->width,
                             img->height);
    }
    glcv_image view = m->scratch;
    view.width = img->width;
    view.height = img->height;
    glcv_status st = glcv_image_convert(img, &view);
    if (st != GLCV_OK)
        return glcv_fail(&m->p.logger, st, "match: cannot convert the image");
    *pixels = view.data;
    *stride = glcv_image_stride(&m->scratch);
    return GLCV_OK;
}

static glcv_status set_template_locked(glcv_match *m, const glcv_image *templ, const glcv_image *mask)
{
    const glcv_logger *lg = &m->p.logger;
    if (glcv_image_check(templ) != GLCV_OK)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: the template is not a valid image");
    if (templ->width > m->p.width || templ->height > m->p.height)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT,
                         "match: the template (%dx%d) is larger than the image (%dx%d)", templ->width, templ->height,
                         m->p.width, m->p.height);
    if (mask) {
        if (glcv_image_check(mask) != GLCV_OK || mask->format != GLCV_PIXEL_GRAY8)
            return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: the mask must be a valid GRAY8 image");
        if (mask->width != templ->width || mask->height != templ->height)
            return glcv_fail(lg, GLCV_ERROR_SIZE_MISMATCH, "match: the mask is %dx%d, the template %dx%d", mask->width,
                             mask->height, templ->width, templ->height);
    }
    const uint8_t *pixels = NULL;
    size_t stride = 0;
    glcv_status st = to_working_format(m, templ, &pixels, &stride);
    if (st != GLCV_OK)
        return st;
    glcv_match_tmpl t;
    st = glcv_match_tmpl_init(&t, pixels, stride, templ->width, templ->height, m->channels, mask ? mask->data : NULL,
                              mask ? glcv_image_stride(mask) : 0);
    if (st == GLCV_ERROR_INVALID_ARGUMENT)
        return glcv_fail(lg, st, "match: the mask keeps no pixel of the template");
    if (st != GLCV_OK)
        return glcv_fail(lg, st, "match: cannot store the %dx%d template", templ->width, templ->height);
    glcv_match_tmpl_free(&m->tmpl);
    m->tmpl = t;
    m->have_template = 1;
    m->have_map = 0;
    update_store(m);
    if (m->nms_auto) {
        int side = t.width < t.height ? t.width : t.height;
        m->p.nms_distance = (side + 1) / 2 > 1 ? (side + 1) / 2 : 1;
    }
#ifdef GLCV_HAVE_CUDA
    if (use_cuda(m)) {
        st = cuda_set_template(m);
        if (st != GLCV_OK) {
            m->have_template = 0;
            return st;
        }
    }
#endif
    return GLCV_OK;
}

glcv_status glcv_match_set_template(glcv_match *m, const glcv_image *templ, const glcv_image *mask)
{
    if (!m || !templ)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&m->lock);
    glcv_status st = set_template_locked(m, templ, mask);
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* Reads a caller's texture into an RGB8 image (host memory). */
static glcv_status read_texture(glcv_match *m, unsigned int texture, int width, int height, glcv_image *out)
{
    glcv_status st = glcv_image_alloc(width, height, GLCV_PIXEL_RGB8, out);
    if (st != GLCV_OK)
        return glcv_fail(&m->p.logger, st, "match: cannot allocate %dx%d for texture %u", width, height, texture);
    st = glcv_texture_read_rgb(texture, width, height, out->data, &m->p.logger);
    if (st != GLCV_OK)
        glcv_image_free(out);
    return st;
}

glcv_status glcv_match_set_template_texture(glcv_match *m, unsigned int texture, int width, int height,
                                            const glcv_image *mask)
{
    if (!m)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (width < 1 || height < 1 || width > m->p.width || height > m->p.height)
        return glcv_fail(&m->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "match: template texture size %dx%d out of range",
                         width, height);
    pthread_mutex_lock(&m->lock);
    glcv_image rgb = {0};
    glcv_status st = read_texture(m, texture, width, height, &rgb);
    if (st == GLCV_OK)
        st = set_template_locked(m, &rgb, mask);
    glcv_image_free(&rgb);
    pthread_mutex_unlock(&m->lock);
    return st;
}

glcv_status glcv_match_set_roi(glcv_match *m, const glcv_match_rect *roi)
{
    if (!m)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (roi && (roi->width < 1 || roi->height < 1))
        return glcv_fail(&m->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "match: ROI %dx%d: width and height must be >= 1",
                         roi->width, roi->height);
    pthread_mutex_lock(&m->lock);
    if (roi) {
        /* clip to the image, in 64 bits so that no sum overflows */
        int64_t x0 = roi->x, y0 = roi->y, x1 = (int64_t)roi->x + roi->width, y1 = (int64_t)roi->y + roi->height;
        x0 = x0 < 0 ? 0 : x0;
        y0 = y0 < 0 ? 0 : y0;
        x1 = x1 > m->p.width ? m->p.width : x1;
        y1 = y1 > m->p.height ? m->p.height : y1;
        m->roi.x = (int)x0;
        m->roi.y = (int)y0;
        m->roi.width = x1 > x0 ? (int)(x1 - x0) : 0;
        m->roi.height = y1 > y0 ? (int)(y1 - y0) : 0;
        m->have_roi = 1;
    } else {
        m->have_roi = 0;
    }
    m->have_map = 0;
    pthread_mutex_unlock(&m->lock);
    return GLCV_OK;
}

/* The positions evaluated: the template inside the image and inside the ROI. */
static glcv_match_region region_of(const glcv_match *m)
{
    glcv_match_region r = {0, 0, m->p.width - m->tmpl.width + 1, m->p.height - m->tmpl.height + 1};
    if (m->have_roi) {
        int x0 = m->roi.x, y0 = m->roi.y;
        int x1 = m->roi.x + m->roi.width - m->tmpl.width + 1, y1 = m->roi.y + m->roi.height - m->tmpl.height + 1;
        r.x0 = x0 > r.x0 ? x0 : r.x0;
        r.y0 = y0 > r.y0 ? y0 : r.y0;
        r.x1 = x1 < r.x1 ? x1 : r.x1;
        r.y1 = y1 < r.y1 ? y1 : r.y1;
    }
    if (r.x1 <= r.x0 || r.y1 <= r.y0)
        r.x0 = r.x1 = r.y0 = r.y1 = 0;
    return r;
}

/* ---- matching -------------------------------------------------------------------------------- */

/* The worst value everywhere outside the region. */
static void fill_outside(glcv_match_map *map, glcv_match_region r)
{
    glcv_match_map row = *map;
    size_t elem = map->store == GLCV_MATCH_STORE_U64 ? 8 : 4;
    int w = map->width;
    for (int y = 0; y < map->height; y++) {
        uint8_t *base = (uint8_t *)map->data + (size_t)y * (size_t)w * elem;
        int inside = y >= r.y0 && y < r.y1;
        int spans[2][2] = {{0, inside ? r.x0 : w}, {inside ? r.x1 : w, w}};
        for (int s = 0; s < 2; s++) {
            if (spans[s][1] <= spans[s][0])
                continue;
            row.data = base + (size_t)spans[s][0] * elem;
            row.width = spans[s][1] - spans[s][0];
            row.height = 1;
            glcv_match_map_fill_worst(&row);
        }
    }
}

static glcv_status cpu_match(glcv_match *m, const uint8_t *pixels, size_t stride)
{
    double t0 = glcv_now();
    glcv_match_planes_fill(&m->planes, pixels, stride);
    double t1 = glcv_now();
    fill_outside(&m->map, m->region);
    glcv_match_cpu_run(&m->planes, &m->tmpl, m->p.metric, m->region, &m->map, m->isa, m->p.threads);
    double t2 = glcv_now();
    glcv_pass_timing tm[2] = {{"convert", 1e3 * (t1 - t0), 1}, {"match", 1e3 * (t2 - t1), 1}};
    memcpy(m->timings, tm, sizeof tm);
    m->n_timings = 2;
    return GLCV_OK;
}

static glcv_status check_ready(glcv_match *m)
{
    if (!m->have_template)
        return glcv_fail(&m->p.logger, GLCV_ERROR_STATE, "match: no template set");
    m->region = region_of(m);
    update_store(m);
    return GLCV_OK;
}

/* Matches host pixels (any format; converted here for the CPU engine, on the GPU for CUDA). */
static glcv_status match_host(glcv_match *m, const glcv_image *image, int in_staging)
{
    glcv_status st = check_ready(m);
    if (st != GLCV_OK)
        return st;
    m->have_map = 0;
#ifdef GLCV_HAVE_CUDA
    if (use_cuda(m)) {
        cuda_source src = {image->data, glcv_image_stride(image), in_staging, NULL, 0, image->format};
        st = cuda_run(m, &src);
        m->have_map = st == GLCV_OK;
        return st;
    }
#endif
    (void)in_staging;
    const uint8_t *pixels = NULL;
    size_t stride = 0;
    st = to_working_format(m, image, &pixels, &stride);
    if (st == GLCV_OK)
        st = cpu_match(m, pixels, stride);
    m->have_map = st == GLCV_OK;
    return st;
}

glcv_status glcv_match_image(glcv_match *m, const glcv_image *image)
{
    if (!m || !image)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (glcv_image_check(image) != GLCV_OK)
        return glcv_fail(&m->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "match: the image is not valid");
    if (image->width != m->p.width || image->height != m->p.height)
        return glcv_fail(&m->p.logger, GLCV_ERROR_SIZE_MISMATCH, "match: the image is %dx%d, the matcher %dx%d",
                         image->width, image->height, m->p.width, m->p.height);
    pthread_mutex_lock(&m->lock);
    glcv_status st = match_host(m, image, 0);
    pthread_mutex_unlock(&m->lock);
    return st;
}

glcv_status glcv_match_map_image(glcv_match *m, glcv_image *out)
{
    if (!m || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&m->lock);
    out->data = m->mapped;
    out->width = m->p.width;
    out->height = m->p.height;
    out->stride = (size_t)m->p.width * (size_t)m->channels;
    out->format = m->p.format;
    m->mapped_pending = 1;
    pthread_mutex_unlock(&m->lock);
    return GLCV_OK;
}

glcv_status glcv_match_image_mapped(glcv_match *m)
{
    if (!m)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&m->lock);
    glcv_status st;
    if (!m->mapped_pending) {
        st = glcv_fail(&m->p.logger, GLCV_ERROR_STATE, "match: glcv_match_image_mapped without glcv_match_map_image");
    } else {
        glcv_image img = {m->mapped, m->p.width, m->p.height, (size_t)m->p.width * (size_t)m->channels, m->p.format};
        st = match_host(m, &img, 1);
    }
    pthread_mutex_unlock(&m->lock);
    return st;
}

glcv_status glcv_match_image_texture(glcv_match *m, unsigned int texture)
{
    if (!m)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&m->lock);
    glcv_status st = check_ready(m);
#ifdef GLCV_HAVE_CUDA
    if (st == GLCV_OK && use_cuda(m) && m->with_gl) {
        /* through the bridge: GL copies the texture into a buffer that CUDA maps on device 0 */
        m->have_map = 0;
        if (!m->bridge)
            st = glcv_cuda_bridge_create(m->p.width, m->p.height, &m->p.logger, &m->bridge);
        glcv_cuda_frame frame;
        if (st == GLCV_OK && (st = glcv_cuda_bridge_map_frame(m->bridge, texture, 0, m->dev[0].streams[0], &frame)) ==
                                 GLCV_OK) {
            cuda_source src = {NULL, 0, 0, frame.rgba, frame.rgba_pitch, GLCV_PIXEL_RGBA8};
            st = cuda_run(m, &src);
            glcv_status un = glcv_cuda_bridge_unmap(m->bridge, m->dev[0].streams[0]);
            st = st != GLCV_OK ? st : un;
        }
        m->have_map = st == GLCV_OK;
        pthread_mutex_unlock(&m->lock);
        return st;
    }
#endif
    glcv_image rgb = {0};
    if (st == GLCV_OK)
        st = read_texture(m, texture, m->p.width, m->p.height, &rgb);
    if (st == GLCV_OK)
        st = match_host(m, &rgb, 0);
    glcv_image_free(&rgb);
    pthread_mutex_unlock(&m->lock);
    return st;
}

/* ---- results -------------------------------------------------------------------------------- */

static int is_distance(const glcv_match *m)
{
    return m->p.metric != GLCV_MATCH_ZNCC;
}

static int in_region(glcv_match_region r, int x, int y)
{
    return x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1;
}

/* The score at index i, as a double (exact for the integer metrics). */
static double score_at(const glcv_match *m, size_t i)
{
    switch (m->map.store) {
    case GLCV_MATCH_STORE_U32: return (double)((const uint32_t *)m->map.data)[i];
    case GLCV_MATCH_STORE_U64: return (double)((const uint64_t *)m->map.data)[i];
    case GLCV_MATCH_STORE_F32: return (double)((const float *)m->map.data)[i];
    }
    return 0.0;
}

static glcv_status check_map(glcv_match *m)
{
    if (!m->have_map)
        return glcv_fail(&m->p.logger, GLCV_ERROR_STATE, "match: nothing matched yet");
    return GLCV_OK;
}

glcv_status glcv_match_read_scores(glcv_match *m, double *out, size_t stride)
{
    if (!m || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&m->lock);
    glcv_status st = check_map(m);
    if (st == GLCV_OK) {
        size_t w = (size_t)m->p.width, s = stride ? stride : w;
        double worst = is_distance(m) ? HUGE_VAL : -HUGE_VAL;
        for (int y = 0; y < m->p.height; y++)
            for (int x = 0; x < m->p.width; x++)
                out[(size_t)y * s + (size_t)x] =
                    in_region(m->region, x, y) ? score_at(m, (size_t)y * w + (size_t)x) : worst;
    }
    pthread_mutex_unlock(&m->lock);
    return st;
}

static void normalized_locked(const glcv_match *m, float *out, size_t stride)
{
    size_t w = (size_t)m->p.width, s = stride ? stride : w;
    glcv_match_region r = m->region;
    double lo = HUGE_VAL, hi = -HUGE_VAL;
    for (int y = r.y0; y < r.y1; y++)
        for (int x = r.x0; x < r.x1; x++) {
            double v = score_at(m, (size_t)y * w + (size_t)x);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    double range = hi - lo;
    for (int y = 0; y < m->p.height; y++)
        for (int x = 0; x < m->p.width; x++) {
            float v = 0.0f;
            if (in_region(r, x, y)) {
                double score = score_at(m, (size_t)y * w + (size_t)x);
                v = range > 0 ? (float)(is_distance(m) ? (hi - score) / range : (score - lo) / range) : 1.0f;
            }
            out[(size_t)y * s + (size_t)x] = v;
        }
}

glcv_status glcv_match_read_normalized(glcv_match *m, float *out, size_t stride)
{
    if (!m || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&m->lock);
    glcv_status st = check_map(m);
    if (st == GLCV_OK)
        normalized_locked(m, out, stride);
    pthread_mutex_unlock(&m->lock);
    return st;
}

unsigned int glcv_match_map_texture(glcv_match *m)
{
    if (!m)
        return 0;
    pthread_mutex_lock(&m->lock);
    unsigned int result = 0;
    float *values = NULL;
    glcv_glstate *state = NULL;
    if (check_map(m) != GLCV_OK)
        goto done;
    if (!glcv_gl_context_current()) {
        glcv_fail(&m->p.logger, GLCV_ERROR_NO_CONTEXT, "match: the map texture needs a current GL context");
        goto done;
    }
    values = malloc((size_t)m->p.width * (size_t)m->p.height * sizeof *values);
    state = glcv_glstate_new();
    if (!values || !state) {
        glcv_fail(&m->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "match: out of memory for the map texture");
        goto done;
    }
    normalized_locked(m, values, 0);
    while (glGetError() != GL_NO_ERROR) {
    }
    glcv_glstate_save(state, 0);
    GLuint tex = m->map_texture;
    int fresh = tex == 0 || !glIsTexture(tex);
    if (fresh)
        glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    if (fresh) {
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_R32F, m->p.width, m->p.height, 0, GL_RED, GL_FLOAT, values);
    } else {
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, m->p.width, m->p.height, GL_RED, GL_FLOAT, values);
    }
    GLenum err = glGetError();
    glcv_glstate_restore(state);
    if (err != GL_NO_ERROR) {
        glcv_fail(&m->p.logger, GLCV_ERROR_GL, "match: map texture upload: GL error 0x%04x", (unsigned)err);
        if (fresh)
            glDeleteTextures(1, &tex);
        if (!fresh || tex == m->map_texture)
            m->map_texture = 0;
        goto done;
    }
    m->map_texture = tex;
    result = tex;
done:
    glcv_glstate_free(state);
    free(values);
    pthread_mutex_unlock(&m->lock);
    return result;
}

/* Best-k: a binary heap over the evaluated positions, best on top (ties: lower index). */
typedef struct heap {
    uint32_t *idx;
    size_t n;
    const glcv_match *m;
    int distance;
} heap;

static int better(const heap *h, uint32_t a, uint32_t b)
{
    double sa = score_at(h->m, a), sb = score_at(h->m, b);
    if (sa != sb)
        return h->distance ? sa < sb : sa > sb;
    return a < b;
}

static void sift_down(heap *h, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, top = i;
        if (l < h->n && better(h, h->idx[l], h->idx[top]))
            top = l;
        if (r < h->n && better(h, h->idx[r], h->idx[top]))
            top = r;
        if (top == i)
            return;
        uint32_t t = h->idx[i];
        h->idx[i] = h->idx[top];
        h->idx[top] = t;
        i = top;
    }
}

glcv_status glcv_match_best(glcv_match *m, int k, glcv_match_hit *hits, int *count)
{
    if (!m || !hits || !count || k < 1)
        return GLCV_ERROR_INVALID_ARGUMENT;
    *count = 0;
    pthread_mutex_lock(&m->lock);
    glcv_status st = check_map(m);
    glcv_match_region r = m->region;
    size_t w = (size_t)m->p.width;
    size_t n = (size_t)(r.x1 - r.x0) * (size_t)(r.y1 - r.y0);
    int found = 0;
    if (st == GLCV_OK && n > 0 && k == 1) {
        /* one hit: a scan */
        heap h = {NULL, 0, m, is_distance(m)};
        uint32_t best = (uint32_t)((size_t)r.y0 * w + (size_t)r.x0);
        for (int y = r.y0; y < r.y1; y++)
            for (int x = r.x0; x < r.x1; x++) {
                uint32_t i = (uint32_t)((size_t)y * w + (size_t)x);
                if (better(&h, i, best))
                    best = i;
            }
        hits[0] = (glcv_match_hit){(int)(best % w), (int)(best / w), 0, 0, score_at(m, best)};
        found = 1;
    } else if (st == GLCV_OK && n > 0) {
        heap h = {malloc(n * sizeof(uint32_t)), 0, m, is_distance(m)};
        if (!h.idx) {
            st = glcv_fail(&m->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "match: out of memory for best-k");
        } else {
            for (int y = r.y0; y < r.y1; y++)
                for (int x = r.x0; x < r.x1; x++)
                    h.idx[h.n++] = (uint32_t)((size_t)y * w + (size_t)x);
            for (size_t i = h.n / 2; i-- > 0;)
                sift_down(&h, i);
            int d = m->p.nms_distance > 0 ? m->p.nms_distance : 1;
            while (found < k && h.n > 0) {
                uint32_t top = h.idx[0];
                h.idx[0] = h.idx[--h.n];
                sift_down(&h, 0);
                int x = (int)(top % w), y = (int)(top / w), keep = 1;
                for (int j = 0; j < found && keep; j++)
                    keep = abs(hits[j].x - x) >= d || abs(hits[j].y - y) >= d;
                if (keep)
                    hits[found++] = (glcv_match_hit){x, y, 0, 0, score_at(m, top)};
            }
            free(h.idx);
        }
    }
    for (int j = 0; j < found; j++) {
        hits[j].cx = hits[j].x + m->tmpl.width / 2;
        hits[j].cy = hits[j].y + m->tmpl.height / 2;
    }
    *count = found;
    pthread_mutex_unlock(&m->lock);
    return st;
}

glcv_status glcv_match_timings(glcv_match *m, glcv_pass_timing *out, int capacity, int *count)
{
    if (!m || !count || capacity < 0 || (capacity > 0 && !out))
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&m->lock);
    int n = m->n_timings < capacity ? m->n_timings : capacity;
    if (n > 0)
        memcpy(out, m->timings, (size_t)n * sizeof *out);
    *count = n;
    pthread_mutex_unlock(&m->lock);
    return GLCV_OK;
}
