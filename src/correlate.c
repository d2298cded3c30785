/* The correlator: Pearson's coefficient of one reference against N images, from exact integer
 * sums (Temizel et al., GPU Gems ch. 34). The CPU engine (OpenMP over the images, AVX2 sums with a
 * portable C path) is here; the CUDA engine's kernels are in cuda/correlate.cu, its memory, streams
 * and events here. */
#include <glcv/context.h>
#include <glcv/correlate.h>
#include <glcv/image.h>

#include "engine.h"
#include "internal.h"

#ifdef GLCV_HAVE_CUDA
#include "cuda_bridge.h"
#include "match_kernels.h"

#include <cuda_runtime_api.h>
#endif

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CORRELATE_X86 1
#else
#define CORRELATE_X86 0
#endif

#ifdef _OPENMP
#include <omp.h>
#endif

#define MAX_SIZE 16384
#define DEFAULT_BATCH 256
#define MAX_BATCH 65536
#define FILE_CHUNK 64

#if defined(__SIZEOF_INT128__)
typedef __int128 wide_int;
#else
typedef long double wide_int;
#endif

/* The sums of one image against the reference. */
typedef struct sums {
    uint64_t y, yy, xy;
} sums;

struct glcv_correlate {
    pthread_mutex_t lock;
    glcv_correlate_params p; /* resolved */
    int channels;
    int avx2;
    size_t samples;          /* w * h * channels */
    size_t padded;           /* samples rounded up to 16 bytes (the CUDA layout) */
    uint8_t *reference;      /* packed samples, zero padded to `padded` */
    int have_reference;
    int64_t ref_sum, ref_sum_sq;
    uint8_t *bank;           /* CPU engine: bank_n images of `samples` bytes */
    int bank_n;
    glcv_pass_timing timings[4];
    int n_timings;
#ifdef GLCV_HAVE_CUDA
    int cuda;
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
#endif
};

/* ---- names ---------------------------------------------------------------------------------- */

const char *glcv_correlate_engine_string(glcv_correlate_engine engine)
{
    switch (engine) {
    case GLCV_CORRELATE_ENGINE_DEFAULT:
    case GLCV_CORRELATE_ENGINE_AUTO: return "auto";
    case GLCV_CORRELATE_ENGINE_CUDA: return "cuda";
    case GLCV_CORRELATE_ENGINE_CPU: return "cpu";
    }
    return "?";
}

glcv_status glcv_correlate_engine_parse(const char *name, glcv_correlate_engine *out)
{
    static const glcv_correlate_engine all[] = {GLCV_CORRELATE_ENGINE_AUTO, GLCV_CORRELATE_ENGINE_CUDA,
                                                GLCV_CORRELATE_ENGINE_CPU};
    if (!name || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (strcmp(name, glcv_correlate_engine_string(all[i])) == 0) {
            *out = all[i];
            return GLCV_OK;
        }
    }
    return GLCV_ERROR_INVALID_ARGUMENT;
}

/* ---- the coefficient ------------------------------------------------------------------------- */

/* r from exact sums; cuda/correlate.cu computes it with the same operations. */
static double pearson(int64_t n, int64_t sx, int64_t sxx, sums s)
{
    wide_int num = (wide_int)n * (wide_int)s.xy - (wide_int)sx * (wide_int)s.y;
    wide_int vx = (wide_int)n * (wide_int)sxx - (wide_int)sx * (wide_int)sx;
    wide_int vy = (wide_int)n * (wide_int)s.yy - (wide_int)s.y * (wide_int)s.y;
    if (vx <= 0 || vy <= 0)
        return 0.0;
    double r = (double)num / sqrt((double)vx * (double)vy);
    return r > 1.0 ? 1.0 : r < -1.0 ? -1.0 : r;
}

/* ---- CPU sums ------------------------------------------------------------------------------- */

static void sums_portable(const uint8_t *y, const uint8_t *x, size_t n, sums *s)
{
    uint64_t sy = 0, syy = 0, sxy = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t v = y[i];
        sy += v;
        syy += v * v;
        sxy += v * x[i];
    }
    s->y += sy;
    s->yy += syy;
    s->xy += sxy;
}

#if CORRELATE_X86
/* 32 samples a step: psadbw sums y into 64-bit lanes, pmaddwd gives y*y and x*y in 32-bit lanes
 * (each lane gains at most 4 * 65025 a step), added into 64 bits every 4096 steps. */
__attribute__((target("avx2"))) static void sums_avx2(const uint8_t *y, const uint8_t *x, size_t n, sums *s)
{
    const __m256i zero = _mm256_setzero_si256();
    __m256i acc_y = zero, acc_yy64 = zero, acc_xy64 = zero;
    size_t i = 0;
    while (i + 32 <= n) {
        __m256i acc_yy = zero, acc_xy = zero;
        size_t end = i + 32 * 4096 < n ? i + 32 * 4096 : n;
        for (; i + 32 <= end; i += 32) {
            __m256i vy = _mm256_loadu_si256((const __m256i *)(y + i));
            __m256i vx = _mm256_loadu_si256((const __m256i *)(x + i));
            acc_y = _mm256_add_epi64(acc_y, _mm256_sad_epu8(vy, zero));
            __m256i ylo = _mm256_unpacklo_epi8(vy, zero), yhi = _mm256_unpackhi_epi8(vy, zero);
            __m256i xlo = _mm256_unpacklo_epi8(vx, zero), xhi = _mm256_unpackhi_epi8(vx, zero);
            acc_yy =
                _mm256_add_epi32(acc_yy, _mm256_add_epi32(_mm256_madd_epi16(ylo, ylo), _mm256_madd_epi16(yhi, yhi)));
            acc_xy =
                _mm256_add_epi32(acc_xy, _mm256_add_epi32(_mm256_madd_epi16(ylo, xlo), _mm256_madd_epi16(yhi, xhi)));
        }
        acc_yy64 = _mm256_add_epi64(acc_yy64, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(acc_yy)));
        acc_yy64 = _mm256_add_epi64(acc_yy64, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(acc_yy, 1)));
        acc_xy64 = _mm256_add_epi64(acc_xy64, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(acc_xy)));
        acc_xy64 = _mm256_add_epi64(acc_xy64, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(acc_xy, 1)));
    }
    uint64_t t[4];
    _mm256_storeu_si256((__m256i *)t, acc_y);
    s->y += t[0] + t[1] + t[2] + t[3];
    _mm256_storeu_si256((__m256i *)t, acc_yy64);
    s->yy += t[0] + t[1] + t[2] + t[3];
    _mm256_storeu_si256((__m256i *)t, acc_xy64);
    s->xy += t[0] + t[1] + t[2] + t[3];
    if (i < n)
        sums_portable(y + i, x + i, n - i, s);
}
#endif

static void image_sums(const glcv_correlate *c, const uint8_t *y, const uint8_t *x, size_t n, sums *s)
{
#if CORRELATE_X86
    if (c->avx2) {
        sums_avx2(y, x, n, s);
        return;
    }
#endif
    sums_portable(y, x, n, s);
}

/* Sums of a host image of any format against the reference, row by row (a row is converted into
 * `row` when its format is not the working one). */
static void host_image_sums(const glcv_correlate *c, const glcv_image *img, uint8_t *row, sums *s)
{
    size_t row_samples = (size_t)c->p.width * (size_t)c->channels, stride = glcv_image_stride(img);
    memset(s, 0, sizeof *s);
    for (int y = 0; y < img->height; y++) {
        const uint8_t *src = img->data + (size_t)y * stride;
        if (img->format != c->p.format) {
            glcv_image in = {(uint8_t *)src, img->width, 1, stride, img->format};
            glcv_image out = {row, img->width, 1, row_samples, c->p.format};
            glcv_image_convert(&in, &out);
            src = row;
        }
        image_sums(c, src, c->reference + (size_t)y * row_samples, row_samples, s);
    }
}

/* Copies a host image of any format into packed samples of the working format. */
static void pack_image(const glcv_correlate *c, const glcv_image *img, uint8_t *dst)
{
    glcv_image out = {dst, c->p.width, c->p.height, (size_t)c->p.width * (size_t)c->channels, c->p.format};
    glcv_image_convert(img, &out);
}

/* ---- CUDA engine ----------------------------------------------------------------------------- */

#ifdef GLCV_HAVE_CUDA

#define CUDA_TRY(call, what)                                                                                      \
    do {                                                                                                          \
        cudaError_t err_ = (call);                                                                                \
        if (err_ != cudaSuccess)                                                                                  \
            return glcv_cuda_fail(&c->p.logger, err_, what);                                                      \
    } while (0)

static void cuda_destroy(glcv_correlate *c)
{
    if (!c->cuda)
        return;
    if (cudaSetDevice(c->device) == cudaSuccess) {
        /* The bridge first: it waits on the last stream it mapped on, one of the streams below. */
        if (c->bridge)
            glcv_cuda_bridge_destroy(&c->bridge);
        for (int s = 0; s < 2; s++) {
            if (c->streams[s])
                cudaStreamDestroy(c->streams[s]);
            if (c->slot_free[s])
                cudaEventDestroy(c->slot_free[s]);
            for (int e = 0; e < 4; e++)
                if (c->ev[s][e])
                    cudaEventDestroy(c->ev[s][e]);
            cudaFree(c->d_slots[s]);
            cudaFree(c->d_partial[s]);
            if (c->h_slots[s])
                cudaFreeHost(c->h_slots[s]);
        }
        if (c->run_start)
            cudaEventDestroy(c->run_start);
        if (c->run_end)
            cudaEventDestroy(c->run_end);
        cudaFree(c->d_reference);
        cudaFree(c->d_bank);
        cudaFree(c->d_bank_partial);
        cudaFree(c->d_r);
        if (c->h_r)
            cudaFreeHost(c->h_r);
    }
    if (c->bridge)
        glcv_cuda_bridge_destroy(&c->bridge);
}

static glcv_status cuda_create(glcv_correlate *c)
{
    size_t slot = (size_t)c->p.batch * c->padded;
    CUDA_TRY(cudaSetDevice(c->device), "correlate: cudaSetDevice");
    CUDA_TRY(cudaDeviceGetAttribute(&c->sms, cudaDevAttrMultiProcessorCount, c->device), "correlate: device");
    for (int s = 0; s < 2; s++) {
        CUDA_TRY(cudaStreamCreateWithFlags(&c->streams[s], cudaStreamNonBlocking), "correlate: stream");
        CUDA_TRY(cudaEventCreateWithFlags(&c->slot_free[s], cudaEventDisableTiming), "correlate: event");
        for (int e = 0; e < 4; e++)
            CUDA_TRY(cudaEventCreate(&c->ev[s][e]), "correlate: event");
        CUDA_TRY(cudaMalloc((void **)&c->d_slots[s], slot), "correlate: device slots");
        CUDA_TRY(cudaMemset(c->d_slots[s], 0, slot), "correlate: device slots"); /* zero padding */
        CUDA_TRY(cudaHostAlloc((void **)&c->h_slots[s], slot, cudaHostAllocDefault), "correlate: pinned slots");
        memset(c->h_slots[s], 0, slot);
    }
    CUDA_TRY(cudaEventCreate(&c->run_start), "correlate: event");
    CUDA_TRY(cudaEventCreate(&c->run_end), "correlate: event");
    CUDA_TRY(cudaMalloc((void **)&c->d_reference, c->padded), "correlate: reference");
    return GLCV_OK;
}

static glcv_status cuda_upload_reference(glcv_correlate *c)
{
    CUDA_TRY(cudaSetDevice(c->device), "correlate: cudaSetDevice");
    CUDA_TRY(cudaMemcpy(c->d_reference, c->reference, c->padded, cudaMemcpyHostToDevice), "correlate: reference");
    return GLCV_OK;
}

static glcv_status ensure_r(glcv_correlate *c, size_t n)
{
    if (n <= c->r_capacity)
        return GLCV_OK;
    cudaFree(c->d_r);
    if (c->h_r)
        cudaFreeHost(c->h_r);
    c->d_r = NULL;
    c->h_r = NULL;
    c->r_capacity = 0;
    CUDA_TRY(cudaMalloc((void **)&c->d_r, n * sizeof(double)), "correlate: coefficients");
    CUDA_TRY(cudaHostAlloc((void **)&c->h_r, n * sizeof(double), cudaHostAllocDefault), "correlate: coefficients");
    c->r_capacity = n;
    return GLCV_OK;
}

/* Slices per image: enough blocks for every multiprocessor when there are few images, each slice
 * at least 256 words of 16 bytes. */
static int slices_for(const glcv_correlate *c, int n)
{
    int target = 4 * (c->sms > 0 ? c->sms : 1);
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
    int slices = slices_for(c, n);
    glcv_cuda_correlate_params kp = {bank, c->padded, n, c->d_reference, c->padded, slices, partial,
                                     (long long)c->samples, c->ref_sum, c->ref_sum_sq, d_r};
    CUDA_TRY((cudaError_t)glcv_cuda_correlate(kp, stream), "correlate: kernel");
    if (slices > 1) {
        glcv_cuda_correlate_finish_params fp = {partial, n, slices, (long long)c->samples, c->ref_sum,
                                                c->ref_sum_sq, d_r};
        CUDA_TRY((cudaError_t)glcv_cuda_correlate_finish(fp, stream), "correlate: finish kernel");
    }
    return GLCV_OK;
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

/* The source of streamed images: host images, or textures through the bridge. */
typedef struct stream_source {
    const glcv_image *images;
    const unsigned int *textures;
} stream_source;

/* Streams n images through the two slots: piece k on stream k % 2 (pack into pinned memory, upload,
 * kernels, download of its coefficients), so that one piece's upload overlaps the other's kernels. */
static glcv_status cuda_stream(glcv_correlate *c, stream_source src, int n, double *r)
{
    CUDA_TRY(cudaSetDevice(c->device), "correlate: cudaSetDevice");
    glcv_status st = ensure_r(c, (size_t)n);
    int batch = c->p.batch;
    int slices_max = slices_for(c, 1);
    for (int s = 0; s < 2 && st == GLCV_OK; s++)
        st = ensure_partial(c, &c->d_partial[s], &c->partial_capacity[s], (size_t)batch * (size_t)slices_max * 3);
    if (st != GLCV_OK)
        return st;
    double up = 0, kernel = 0, down = 0;
    CUDA_TRY(cudaEventRecord(c->run_start, c->streams[0]), "correlate: event");
    for (int first = 0, k = 0; first < n; first += batch, k++) {
        int s = k % 2, count = n - first < batch ? n - first : batch;
        cudaStream_t stream = c->streams[s];
        if (k >= 2) {
            /* the slot's last piece must be done before its pinned memory is reused (then its
             * timings can be read) */
            CUDA_TRY(cudaEventSynchronize(c->ev[s][3]), "correlate: wait");
            up += elapsed(c->ev[s][0], c->ev[s][1]);
            kernel += elapsed(c->ev[s][1], c->ev[s][2]);
            down += elapsed(c->ev[s][2], c->ev[s][3]);
        }
        if (k == 1)
            CUDA_TRY(cudaStreamWaitEvent(stream, c->run_start, 0), "correlate: stream order");
        if (src.images) {
            /* packing into pinned memory is a host copy: on every core */
            const glcv_image *images = src.images + first;
            uint8_t *slot = c->h_slots[s];
#ifdef _OPENMP
            int nt = c->p.threads > 0 ? c->p.threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(nt)
#endif
            for (int i = 0; i < count; i++)
                pack_image(c, &images[i], slot + (size_t)i * c->padded);
            CUDA_TRY(cudaEventRecord(c->ev[s][0], stream), "correlate: event");
            CUDA_TRY(cudaMemcpyAsync(c->d_slots[s], c->h_slots[s], (size_t)count * c->padded, cudaMemcpyHostToDevice,
                                     stream),
                     "correlate: upload");
        } else {
            CUDA_TRY(cudaEventRecord(c->ev[s][0], stream), "correlate: event");
            for (int i = 0; i < count; i++) {
                glcv_cuda_frame frame;
                glcv_status bst = glcv_cuda_bridge_map_frame(c->bridge, src.textures[first + i], 0, stream, &frame);
                if (bst != GLCV_OK)
                    return bst;
                glcv_cuda_correlate_pack_params pp = {frame.rgba, frame.rgba_pitch, c->p.width, c->p.height,
                                                      c->channels, c->d_slots[s] + (size_t)i * c->padded};
                cudaError_t err = (cudaError_t)glcv_cuda_correlate_pack(pp, stream);
                bst = glcv_cuda_bridge_unmap(c->bridge, stream);
                if (err != cudaSuccess)
                    return glcv_cuda_fail(&c->p.logger, err, "correlate: pack kernel");
                if (bst != GLCV_OK)
                    return bst;
            }
        }
        CUDA_TRY(cudaEventRecord(c->ev[s][1], stream), "correlate: event");
        st = queue_kernels(c, c->d_slots[s], count, c->d_r + first, c->d_partial[s], stream);
        if (st != GLCV_OK)
            return st;
        CUDA_TRY(cudaEventRecord(c->ev[s][2], stream), "correlate: event");
        CUDA_TRY(cudaMemcpyAsync(c->h_r + first, c->d_r + first, (size_t)count * sizeof(double),
                                 cudaMemcpyDeviceToHost, stream),
                 "correlate: download");
        CUDA_TRY(cudaEventRecord(c->ev[s][3], stream), "correlate: event");
    }
    int pieces = (n + batch - 1) / batch;
    for (int s = 0; s < 2 && s < pieces; s++) {
        CUDA_TRY(cudaStreamSynchronize(c->streams[s]), "correlate: wait");
        up += elapsed(c->ev[s][0], c->ev[s][1]);
        kernel += elapsed(c->ev[s][1], c->ev[s][2]);
        down += elapsed(c->ev[s][2], c->ev[s][3]);
    }
    int last = (pieces - 1) % 2;
    double total = elapsed(c->run_start, c->ev[last][3]);
    memcpy(r, c->h_r, (size_t)n * sizeof(double));
    glcv_pass_timing t[4] = {{"upload", up, pieces}, {"kernel", kernel, pieces}, {"download", down, pieces},
                             {"total", total, 1}};
    memcpy(c->timings, t, sizeof t);
    c->n_timings = 4;
    return GLCV_OK;
}

static glcv_status cuda_bank_load(glcv_correlate *c, const glcv_image *images, int n)
{
    CUDA_TRY(cudaSetDevice(c->device), "correlate: cudaSetDevice");
    if ((size_t)n > c->d_bank_capacity) {
        cudaFree(c->d_bank);
        c->d_bank = NULL;
        c->d_bank_capacity = 0;
        CUDA_TRY(cudaMalloc((void **)&c->d_bank, (size_t)n * c->padded), "correlate: image bank");
        c->d_bank_capacity = (size_t)n;
    }
    int batch = c->p.batch;
    for (int first = 0, k = 0; first < n; first += batch, k++) {
        int s = k % 2, count = n - first < batch ? n - first : batch;
        if (k >= 2)
            CUDA_TRY(cudaEventSynchronize(c->slot_free[s]), "correlate: wait");
        const glcv_image *piece = images + first;
        uint8_t *slot = c->h_slots[s];
#ifdef _OPENMP
        int nt = c->p.threads > 0 ? c->p.threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(nt)
#endif
        for (int i = 0; i < count; i++)
            pack_image(c, &piece[i], slot + (size_t)i * c->padded);
        CUDA_TRY(cudaMemcpyAsync(c->d_bank + (size_t)first * c->padded, c->h_slots[s], (size_t)count * c->padded,
                                 cudaMemcpyHostToDevice, c->streams[s]),
                 "correlate: bank upload");
        CUDA_TRY(cudaEventRecord(c->slot_free[s], c->streams[s]), "correlate: event");
    }
    for (int s = 0; s < 2; s++)
        CUDA_TRY(cudaStreamSynchronize(c->streams[s]), "correlate: bank upload");
    c->d_bank_n = n;
    return GLCV_OK;
}

static glcv_status cuda_bank_run(glcv_correlate *c, double *r)
{
    int n = c->d_bank_n;
    CUDA_TRY(cudaSetDevice(c->device), "correlate: cudaSetDevice");
    glcv_status st = ensure_r(c, (size_t)n);
    if (st == GLCV_OK)
        st = ensure_partial(c, &c->d_bank_partial, &c->bank_partial_capacity,
                            (size_t)n * (size_t)slices_for(c, n) * 3);
    if (st != GLCV_OK)
        return st;
    cudaStream_t stream = c->streams[0];
    CUDA_TRY(cudaEventRecord(c->ev[0][1], stream), "correlate: event");
    st = queue_kernels(c, c->d_bank, n, c->d_r, c->d_bank_partial, stream);
    if (st != GLCV_OK)
        return st;
    CUDA_TRY(cudaEventRecord(c->ev[0][2], stream), "correlate: event");
    CUDA_TRY(cudaMemcpyAsync(c->h_r, c->d_r, (size_t)n * sizeof(double), cudaMemcpyDeviceToHost, stream),
             "correlate: download");
    CUDA_TRY(cudaEventRecord(c->ev[0][3], stream), "correlate: event");
    CUDA_TRY(cudaStreamSynchronize(stream), "correlate: wait");
    memcpy(r, c->h_r, (size_t)n * sizeof(double));
    double kernel = elapsed(c->ev[0][1], c->ev[0][2]), down = elapsed(c->ev[0][2], c->ev[0][3]);
    glcv_pass_timing t[4] = {{"upload", 0.0, 0}, {"kernel", kernel, 1}, {"download", down, 1},
                             {"total", kernel + down, 1}};
    memcpy(c->timings, t, sizeof t);
    c->n_timings = 4;
    return GLCV_OK;
}

#undef CUDA_TRY
#endif /* GLCV_HAVE_CUDA */

static int on_cuda(const glcv_correlate *c)
{
#ifdef GLCV_HAVE_CUDA
    return c->cuda;
#else
    (void)c;
    return 0;
#endif
}

/* ---- create / destroy ----------------------------------------------------------------------- */

glcv_status glcv_correlate_create(const glcv_correlate_params *params, glcv_correlate **out)
{
    if (!out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    *out = NULL;
    if (!params)
        return GLCV_ERROR_INVALID_ARGUMENT;
    glcv_correlate_params p = *params;
    const glcv_logger *lg = &params->logger;
    if (p.width < 1 || p.height < 1 || p.width > MAX_SIZE || p.height > MAX_SIZE)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "correlate: size %dx%d: width and height must be 1..%d",
                         p.width, p.height, MAX_SIZE);
    if (p.format == GLCV_PIXEL_UNKNOWN)
        p.format = GLCV_PIXEL_GRAY8;
    if (p.format != GLCV_PIXEL_GRAY8 && p.format != GLCV_PIXEL_RGB8)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "correlate: format %d: GRAY8 or RGB8 expected",
                         (int)p.format);
    if (p.engine == GLCV_CORRELATE_ENGINE_DEFAULT)
        p.engine = GLCV_CORRELATE_ENGINE_AUTO;
    if (p.engine < GLCV_CORRELATE_ENGINE_AUTO || p.engine > GLCV_CORRELATE_ENGINE_CPU)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "correlate: unknown engine %d", (int)p.engine);
    if (p.threads < 0 || p.threads > 4096 || p.cuda_device < 0)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "correlate: threads %d / cuda_device %d out of range",
                         p.threads, p.cuda_device);
    if (p.batch == 0)
        p.batch = DEFAULT_BATCH;
    if (p.batch < 1 || p.batch > MAX_BATCH)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "correlate: batch %d must be 1..%d", p.batch, MAX_BATCH);

    glcv_correlate *c = calloc(1, sizeof *c);
    if (!c)
        return GLCV_ERROR_OUT_OF_MEMORY;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return GLCV_ERROR_OUT_OF_MEMORY;
    }
    c->channels = p.format == GLCV_PIXEL_RGB8 ? 3 : 1;
    c->samples = (size_t)p.width * (size_t)p.height * (size_t)c->channels;
    c->padded = (c->samples + 15) & ~(size_t)15;
#if CORRELATE_X86
    __builtin_cpu_init();
    c->avx2 = !p.no_simd && __builtin_cpu_supports("avx2");
#endif
    p.no_simd = !c->avx2;
    c->reference = calloc(1, c->padded);
    if (!c->reference) {
        glcv_correlate_destroy(&c);
        return GLCV_ERROR_OUT_OF_MEMORY;
    }

    char why[192] = "CUDA support was not built";
    int cuda_ok = 0;
#ifdef GLCV_HAVE_CUDA
    if (p.engine != GLCV_CORRELATE_ENGINE_CPU) {
        int device = -1, with_gl = 0, present = 0;
        glcv_status pick = glcv_cuda_bridge_pick_device(p.cuda_device, &device, &with_gl, why, sizeof why);
        if (cudaGetDeviceCount(&present) != cudaSuccess) {
            (void)cudaGetLastError();
            present = 0;
        }
        if (pick != GLCV_OK && present > 0 && p.cuda_device < present) {
            device = p.cuda_device; /* a GL context elsewhere: textures go through the host */
            with_gl = 0;
            pick = GLCV_OK;
        }
        if (pick == GLCV_OK) {
            c->p = p;
            c->cuda = 1;
            c->device = device;
            c->with_gl = with_gl;
            glcv_status st = cuda_create(c);
            if (st != GLCV_OK) {
                glcv_correlate_destroy(&c);
                return st;
            }
            p.engine = GLCV_CORRELATE_ENGINE_CUDA;
            p.cuda_device = device;
            cuda_ok = 1;
        }
    }
#endif
    if (!cuda_ok) {
        if (p.engine == GLCV_CORRELATE_ENGINE_CUDA) {
            glcv_correlate_destroy(&c);
            return glcv_fail(lg, GLCV_ERROR_UNSUPPORTED, "correlate: CUDA engine unavailable: %s", why);
        }
        if (p.engine == GLCV_CORRELATE_ENGINE_AUTO)
            glcv_logf(lg, GLCV_LOG_INFO, "correlate: %s: correlation runs on the CPU", why);
        p.engine = GLCV_CORRELATE_ENGINE_CPU;
    }
    c->p = p;
    *out = c;
    return GLCV_OK;
}

void glcv_correlate_destroy(glcv_correlate **correlate)
{
    if (!correlate || !*correlate)
        return;
    glcv_correlate *c = *correlate;
#ifdef GLCV_HAVE_CUDA
    cuda_destroy(c);
#endif
    free(c->reference);
    free(c->bank);
    pthread_mutex_destroy(&c->lock);
    free(c);
    *correlate = NULL;
}

glcv_status glcv_correlate_get_params(glcv_correlate *c, glcv_correlate_params *out)
{
    if (!c || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&c->lock);
    *out = c->p;
    pthread_mutex_unlock(&c->lock);
    return GLCV_OK;
}

/* ---- inputs ----------------------------------------------------------------------------------- */

static glcv_status check_image(glcv_correlate *c, const glcv_image *img, const char *what)
{
    if (glcv_image_check(img) != GLCV_OK)
        return glcv_fail(&c->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "correlate: %s is not a valid image", what);
    if (img->width != c->p.width || img->height != c->p.height)
        return glcv_fail(&c->p.logger, GLCV_ERROR_SIZE_MISMATCH, "correlate: %s is %dx%d, the correlator %dx%d", what,
                         img->width, img->height, c->p.width, c->p.height);
    return GLCV_OK;
}

static glcv_status set_reference_locked(glcv_correlate *c, const glcv_image *ref)
{
    glcv_status st = check_image(c, ref, "the reference");
    if (st != GLCV_OK)
        return st;
    pack_image(c, ref, c->reference);
    int64_t s = 0, q = 0;
    for (size_t i = 0; i < c->samples; i++) {
        s += c->reference[i];
        q += (int64_t)c->reference[i] * c->reference[i];
    }
    c->ref_sum = s;
    c->ref_sum_sq = q;
    c->have_reference = 0;
#ifdef GLCV_HAVE_CUDA
    if (c->cuda && (st = cuda_upload_reference(c)) != GLCV_OK)
        return st;
#endif
    c->have_reference = 1;
    return GLCV_OK;
}

glcv_status glcv_correlate_set_reference(glcv_correlate *c, const glcv_image *reference)
{
    if (!c || !reference)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&c->lock);
    glcv_status st = set_reference_locked(c, reference);
    pthread_mutex_unlock(&c->lock);
    return st;
}

static glcv_status read_texture(glcv_correlate *c, unsigned int texture, glcv_image *out)
{
    glcv_status st = glcv_image_alloc(c->p.width, c->p.height, GLCV_PIXEL_RGB8, out);
    if (st != GLCV_OK)
        return glcv_fail(&c->p.logger, st, "correlate: cannot allocate a texture read-back");
    st = glcv_texture_read_rgb(texture, c->p.width, c->p.height, out->data, &c->p.logger);
    if (st != GLCV_OK)
        glcv_image_free(out);
    return st;
}

glcv_status glcv_correlate_set_reference_texture(glcv_correlate *c, unsigned int texture)
{
    if (!c)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&c->lock);
    glcv_image rgb = {0};
    glcv_status st = read_texture(c, texture, &rgb);
    if (st == GLCV_OK)
        st = set_reference_locked(c, &rgb);
    glcv_image_free(&rgb);
    pthread_mutex_unlock(&c->lock);
    return st;
}

/* ---- correlating ------------------------------------------------------------------------------ */

static glcv_status check_batch(glcv_correlate *c, const glcv_image *images, int n, const double *r)
{
    if (!images || n < 1 || !r)
        return glcv_fail(&c->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "correlate: NULL images or results, or n < 1");
    for (int i = 0; i < n; i++) {
        char what[48];
        snprintf(what, sizeof what, "image %d", i);
        glcv_status st = check_image(c, &images[i], what);
        if (st != GLCV_OK)
            return st;
    }
    return GLCV_OK;
}

static glcv_status cpu_images(glcv_correlate *c, const glcv_image *images, int n, double *r)
{
    double t0 = glcv_now();
    size_t row_samples = (size_t)c->p.width * (size_t)c->channels;
    int failed = 0;
#ifdef _OPENMP
    int nt = c->p.threads > 0 ? c->p.threads : omp_get_max_threads();
#pragma omp parallel num_threads(nt)
#endif
    {
        uint8_t *row = malloc(row_samples);
        if (!row) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
            failed = 1;
        }
#ifdef _OPENMP
#pragma omp for schedule(dynamic, 1)
#endif
        for (int i = 0; i < n; i++) {
            if (!row)
                continue;
            sums s;
            host_image_sums(c, &images[i], row, &s);
            r[i] = pearson((int64_t)c->samples, c->ref_sum, c->ref_sum_sq, s);
        }
        free(row);
    }
    if (failed)
        return glcv_fail(&c->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "correlate: out of memory");
    glcv_pass_timing t = {"correlate", 1e3 * (glcv_now() - t0), 1};
    c->timings[0] = t;
    c->n_timings = 1;
    return GLCV_OK;
}

static glcv_status images_locked(glcv_correlate *c, const glcv_image *images, int n, double *r)
{
    glcv_status st = check_batch(c, images, n, r);
    if (st != GLCV_OK)
        return st;
    if (!c->have_reference)
        return glcv_fail(&c->p.logger, GLCV_ERROR_STATE, "correlate: no reference set");
#ifdef GLCV_HAVE_CUDA
    if (c->cuda) {
        stream_source src = {images, NULL};
        return cuda_stream(c, src, n, r);
    }
#endif
    return cpu_images(c, images, n, r);
}

glcv_status glcv_correlate_images(glcv_correlate *c, const glcv_image *images, int n, double *r)
{
    if (!c)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&c->lock);
    glcv_status st = images_locked(c, images, n, r);
    pthread_mutex_unlock(&c->lock);
    return st;
}

glcv_status glcv_correlate_files(glcv_correlate *c, const char *const *paths, int n, double *r)
{
    if (!c)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (!paths || n < 1 || !r)
        return glcv_fail(&c->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "correlate: NULL paths or results, or n < 1");
    pthread_mutex_lock(&c->lock);
    glcv_status st =
        c->have_reference ? GLCV_OK : glcv_fail(&c->p.logger, GLCV_ERROR_STATE, "correlate: no reference set");
    int chunk = on_cuda(c) ? c->p.batch : FILE_CHUNK;
    glcv_image *images = st == GLCV_OK ? calloc((size_t)(n < chunk ? n : chunk), sizeof *images) : NULL;
    if (st == GLCV_OK && !images)
        st = GLCV_ERROR_OUT_OF_MEMORY;
    double up = 0, kernel = 0, down = 0, total = 0;
    for (int first = 0; first < n && st == GLCV_OK; first += chunk) {
        int count = n - first < chunk ? n - first : chunk;
        glcv_status load = GLCV_OK;
#ifdef _OPENMP
        int nt = c->p.threads > 0 ? c->p.threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#endif
        for (int i = 0; i < count; i++) {
            glcv_status one = glcv_image_load(paths[first + i], c->p.format, &c->p.logger, &images[i]);
            if (one == GLCV_OK && (images[i].width != c->p.width || images[i].height != c->p.height)) {
                glcv_fail(&c->p.logger, GLCV_ERROR_SIZE_MISMATCH, "correlate: '%s' is %dx%d, the correlator %dx%d",
                          paths[first + i], images[i].width, images[i].height, c->p.width, c->p.height);
                one = GLCV_ERROR_SIZE_MISMATCH;
            }
            if (one != GLCV_OK) {
#ifdef _OPENMP
#pragma omp critical(glcv_correlate_files)
#endif
                if (load == GLCV_OK)
                    load = one;
            }
        }
        st = load;
        if (st == GLCV_OK)
            st = images_locked(c, images, count, r + first);
        for (int i = 0; i < c->n_timings; i++) {
            double *sum = strcmp(c->timings[i].name, "upload") == 0     ? &up
                          : strcmp(c->timings[i].name, "kernel") == 0   ? &kernel
                          : strcmp(c->timings[i].name, "download") == 0 ? &down
                                                                         : &total;
            *sum += c->timings[i].gpu_ms;
        }
        for (int i = 0; i < count; i++)
            glcv_image_free(&images[i]);
    }
    if (st == GLCV_OK && on_cuda(c)) {
        glcv_pass_timing t[4] = {{"upload", up, 1}, {"kernel", kernel, 1}, {"download", down, 1}, {"total", total, 1}};
        memcpy(c->timings, t, sizeof t);
        c->n_timings = 4;
    } else if (st == GLCV_OK) {
        glcv_pass_timing t = {"correlate", total, 1};
        c->timings[0] = t;
        c->n_timings = 1;
    }
    free(images);
    pthread_mutex_unlock(&c->lock);
    return st;
}

glcv_status glcv_correlate_textures(glcv_correlate *c, const unsigned int *textures, int n, double *r)
{
    if (!c)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (!textures || n < 1 || !r)
        return glcv_fail(&c->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "correlate: NULL textures or results, or n < 1");
    pthread_mutex_lock(&c->lock);
    glcv_status st =
        c->have_reference ? GLCV_OK : glcv_fail(&c->p.logger, GLCV_ERROR_STATE, "correlate: no reference set");
#ifdef GLCV_HAVE_CUDA
    if (st == GLCV_OK && c->cuda && c->with_gl) {
        if (!c->bridge)
            st = glcv_cuda_bridge_create(c->p.width, c->p.height, &c->p.logger, &c->bridge);
        if (st == GLCV_OK) {
            stream_source src = {NULL, textures};
            st = cuda_stream(c, src, n, r);
        }
        pthread_mutex_unlock(&c->lock);
        return st;
    }
#endif
    glcv_image *images = st == GLCV_OK ? calloc((size_t)n, sizeof *images) : NULL;
    if (st == GLCV_OK && !images)
        st = glcv_fail(&c->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "correlate: out of memory");
    for (int i = 0; i < n && st == GLCV_OK; i++)
        st = read_texture(c, textures[i], &images[i]);
    if (st == GLCV_OK)
        st = images_locked(c, images, n, r);
    for (int i = 0; images && i < n; i++)
        glcv_image_free(&images[i]);
    free(images);
    pthread_mutex_unlock(&c->lock);
    return st;
}

glcv_status glcv_correlate_bank_load(glcv_correlate *c, const glcv_image *images, int n)
{
    if (!c)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&c->lock);
    double dummy = 0;
    glcv_status st = check_batch(c, images, n, &dummy);
    if (st == GLCV_OK) {
        c->bank_n = 0;
#ifdef GLCV_HAVE_CUDA
        if (c->cuda) {
            c->d_bank_n = 0;
            st = cuda_bank_load(c, images, n);
            if (st == GLCV_OK)
                c->bank_n = n;
            pthread_mutex_unlock(&c->lock);
            return st;
        }
#endif
        uint8_t *bank = realloc(c->bank, (size_t)n * c->samples);
        if (!bank) {
            st = glcv_fail(&c->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "correlate: cannot hold %d images", n);
        } else {
            c->bank = bank;
            for (int i = 0; i < n; i++)
                pack_image(c, &images[i], bank + (size_t)i * c->samples);
            c->bank_n = n;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return st;
}

glcv_status glcv_correlate_bank_run(glcv_correlate *c, double *r)
{
    if (!c || !r)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&c->lock);
    glcv_status st = GLCV_OK;
    if (!c->bank_n)
        st = glcv_fail(&c->p.logger, GLCV_ERROR_STATE, "correlate: no image bank loaded");
    else if (!c->have_reference)
        st = glcv_fail(&c->p.logger, GLCV_ERROR_STATE, "correlate: no reference set");
#ifdef GLCV_HAVE_CUDA
    if (st == GLCV_OK && c->cuda) {
        st = cuda_bank_run(c, r);
        pthread_mutex_unlock(&c->lock);
        return st;
    }
#endif
    if (st == GLCV_OK) {
        double t0 = glcv_now();
        int n = c->bank_n;
#ifdef _OPENMP
        int nt = c->p.threads > 0 ? c->p.threads : omp_get_max_threads();
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
#endif
        for (int i = 0; i < n; i++) {
            sums s = {0, 0, 0};
            image_sums(c, c->bank + (size_t)i * c->samples, c->reference, c->samples, &s);
            r[i] = pearson((int64_t)c->samples, c->ref_sum, c->ref_sum_sq, s);
        }
        glcv_pass_timing t = {"correlate", 1e3 * (glcv_now() - t0), 1};
        c->timings[0] = t;
        c->n_timings = 1;
    }
    pthread_mutex_unlock(&c->lock);
    return st;
}

int glcv_correlate_bank_size(glcv_correlate *c)
{
    if (!c)
        return -1;
    pthread_mutex_lock(&c->lock);
    int n = c->bank_n;
    pthread_mutex_unlock(&c->lock);
    return n;
}

glcv_status glcv_correlate_timings(glcv_correlate *c, glcv_pass_timing *out, int capacity, int *count)
{
    if (!c || !count || capacity < 0 || (capacity > 0 && !out))
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&c->lock);
    int n = c->n_timings < capacity ? c->n_timings : capacity;
    if (n > 0)
        memcpy(out, c->timings, (size_t)n * sizeof *out);
    *count = n;
    pthread_mutex_unlock(&c->lock);
    return GLCV_OK;
}
