/* The tracker's CUDA engine, host side (see track_internal.h). Device memory: the frames and masks
 * of a host set (staged in pinned memory, uploaded in one copy), the bin images of all streams
 * (stream after stream), the tables, the objects' models and states, the results; one
 * non-blocking stream; texture inputs through the CUDA-GL bridge. The kernels are
 * cuda/track.cu (CAMSHIFT) and cuda/track_dcf.cu (DCF: the objects' filters, their working
 * memory and results instead of bin images and models), behind track_kernels.h. */
#include "track_internal.h"

#include "core_internal.h"

#include <glcv/context.h>
#include <glcv/image.h>

#include <stdlib.h>
#include <string.h>

#if GLCV_HAVE_CUDA
#include "cuda_bridge.h"
#include "track_kernels.h"

#include <cuda_runtime_api.h>

struct glcv_track_cuda {
    glcv_logger logger;
    int device;
    int width, height, nbins, max_objects, streams;
    int sms;                 /* multiprocessors */
    int max_cluster;         /* largest cluster the kernel can use (1 below compute 9.0) */
    int cluster_request;     /* 0 = automatic */
    int cluster_used;
    int dcf_two_fit;         /* two blocks of the DCF kernel's capped instance fit on a multiprocessor */
    int dcf_blocks;          /* the DCF kernel's blocks a multiprocessor in the last launch */
    cudaStream_t stream;
    cudaEvent_t done;

    /* Host sets: the frames (rows padded to 16 bytes, stream after stream) and then, from
     * mask_offset, the masks (rows of width bytes), laid out alike in pinned staging memory and
     * in device memory, so that a set goes up in one copy. */
    uint8_t *staging, *upload;
    size_t mask_offset;
    cudaEvent_t staged;      /* recorded after the last upload from the staging memory */
    int staging_busy;
    uint16_t *bins;          /* streams bin images, height rows each */
    size_t bins_pitch;       /* elements */
    glcv_tm_tables *tables;
    uint8_t *luts;
    int lut_stride;
    double *sqrt_models, *model_sums;
    glcv_tm_object *objects;
    glcv_tm_result *results;
    glcv_tm_object *states;   /* the new states in ids order, for the download */
    glcv_tm_object *initial;  /* benchmarks: the states every run starts from */
    int *ids;

    glcv_tm_result *host_results; /* pinned */
    glcv_tm_object *host_objects; /* pinned, in ids order */
    glcv_tm_rect *known;          /* the last windows the host knows, by id (cluster choice) */

    /* the last host set, for glcv_track_cuda_bench_time's conversion */
    int have_source, source_channels, source_bgr, source_streams;
    size_t source_pitch;

    glcv_cuda_bridge *bridge;     /* texture inputs, made on first use */

    /* DCF: the objects' states and working memory (by id), their streams, the tables, results */
    int dcf;
    glcv_track_dcf *dcf_objects;
    glcv_cuda_dcf_scratch *dcf_scratch;
    int *dcf_streams;
    glcv_track_dcf_tables *dcf_tables;
    glcv_track_dcf_result *dcf_results, *host_dcf_results; /* n in ids order; pinned copy */

    /* benchmarks */
    cudaEvent_t start, stop;
    int bench_n, bench_ids;       /* objects bench_ids .. bench_ids + bench_n - 1 */
};

#define CHECK_CUDA(call, what) GLCV_CUDA_TRY(&c_->logger, call, what)

static glcv_status cuda_alloc(glcv_track_cuda *c_, void **ptr, size_t bytes, const char *what)
{
    CHECK_CUDA(cudaMalloc(ptr, bytes), what);
    return GLCV_OK;
}

/* DCF: the objects' device memory and the tables. */
static glcv_status dcf_buffers(glcv_track_cuda *c_)
{
    size_t n = (size_t)c_->max_objects;
    glcv_status st = cuda_alloc(c_, (void **)&c_->dcf_objects, n * sizeof(glcv_track_dcf), "track: DCF objects");
    if (st == GLCV_OK)
        st = cuda_alloc(c_, (void **)&c_->dcf_scratch, n * glcv_cuda_track_dcf_scratch_bytes(),
                        "track: DCF working memory");
    if (st == GLCV_OK)
        st = cuda_alloc(c_, (void **)&c_->dcf_streams, n * sizeof(int), "track: DCF streams");
    if (st == GLCV_OK)
        st = cuda_alloc(c_, (void **)&c_->dcf_tables, sizeof(glcv_track_dcf_tables), "track: DCF tables");
    if (st == GLCV_OK)
        st = cuda_alloc(c_, (void **)&c_->dcf_results, n * sizeof(glcv_track_dcf_result), "track: DCF results");
    if (st == GLCV_OK)
        CHECK_CUDA(cudaMallocHost((void **)&c_->host_dcf_results, n * sizeof(glcv_track_dcf_result)),
                   "track: pinned DCF results");
    glcv_track_dcf_tables t;
    glcv_track_dcf_tables_init(&t);
    if (st == GLCV_OK)
        CHECK_CUDA(cudaMemcpy(c_->dcf_tables, &t, sizeof t, cudaMemcpyHostToDevice), "track: DCF tables upload");
    return st;
}

/* CAMSHIFT's device memory: the bin images of every stream, the tables, the objects' models,
 * states and results (and their pinned copies). */
static glcv_status camshift_buffers(glcv_track_cuda *c_, const glcv_tm_tables *tables, size_t w, size_t h, size_t n,
                                    size_t nb)
{
    glcv_status st = GLCV_OK;
    cudaError_t err = cudaSuccess;
    size_t bins_bytes_pitch = 0;
    if ((err = cudaMallocPitch((void **)&c_->bins, &bins_bytes_pitch, ((w + 7) & ~(size_t)7) * 2,
                                                h * (size_t)c_->streams)) != cudaSuccess)
        st = glcv_cuda_fail(&c_->logger, err, "track: bin images");
    c_->bins_pitch = bins_bytes_pitch / 2;
    if (st == GLCV_OK)
        st = cuda_alloc(c_, (void **)&c_->tables, sizeof *c_->tables, "track: tables");
    if (st == GLCV_OK)
        st = cuda_alloc(c_, (void **)&c_->luts, n * (size_t)c_->lut_stride, "track: models");
    if (st == GLCV_OK)
        st = cuda_alloc(c_, (void **)&c_->sqrt_models, n * nb * sizeof(double), "track: models");
    if (st == GLCV_OK)
        st = cuda_alloc(c_, (void **)&c_->model_sums, n * sizeof(double), "track: models");
    if (st == GLCV_OK)
        st = cuda_alloc(c_, (void **)&c_->objects, n * sizeof(glcv_tm_object), "track: objects");
    if (st == GLCV_OK)
        st = cuda_alloc(c_, (void **)&c_->results, n * sizeof(glcv_tm_result), "track: results");
    if (st == GLCV_OK)
        st = cuda_alloc(c_, (void **)&c_->states, n * sizeof(glcv_tm_object), "track: objects");
    if (st == GLCV_OK && (err = cudaMallocHost((void **)&c_->host_results, n * sizeof(glcv_tm_result))) !=
                             cudaSuccess)
        st = glcv_cuda_fail(&c_->logger, err, "track: pinned results");
    if (st == GLCV_OK && (err = cudaMallocHost((void **)&c_->host_objects, n * sizeof(glcv_tm_object))) !=
                             cudaSuccess)
        st = glcv_cuda_fail(&c_->logger, err, "track: pinned objects");
    if (st == GLCV_OK &&
        (err = cudaMemcpyAsync(c_->tables, tables, sizeof *tables, cudaMemcpyHostToDevice, c_->stream)) !=
            cudaSuccess)
        st = glcv_cuda_fail(&c_->logger, err, "track: tables upload");
    return st;
}

glcv_status glcv_track_cuda_create(int device, const glcv_tm_config *c, const glcv_tm_tables *tables,
                                   int max_objects, int streams, int dcf, const glcv_logger *logger,
                                   glcv_track_cuda **out)
{
    *out = NULL;
    glcv_track_cuda *c_ = calloc(1, sizeof *c_);
    if (!c_)
        return GLCV_ERROR_OUT_OF_MEMORY;
    if (logger)
        c_->logger = *logger;
    c_->device = device;
    c_->width = c->width;
    c_->height = c->height;
    c_->nbins = c->nbins;
    c_->max_objects = max_objects;
    c_->streams = streams;
    c_->dcf = dcf;
    c_->lut_stride = (c->nbins + 1 + 15) & ~15;
    c_->known = calloc((size_t)max_objects, sizeof *c_->known);
    glcv_status st = c_->known ? GLCV_OK : GLCV_ERROR_OUT_OF_MEMORY;

    cudaError_t err = cudaSuccess;
    if (st == GLCV_OK && (err = cudaSetDevice(device)) != cudaSuccess)
        st = glcv_cuda_fail(&c_->logger, err, "track: cudaSetDevice");
    if (st == GLCV_OK)
        st = glcv_cuda_stream_create(&c_->stream, &c_->logger, "track: cudaStreamCreate");
    if (st == GLCV_OK && (err = cudaEventCreateWithFlags(&c_->done, cudaEventDisableTiming)) != cudaSuccess)
        st = glcv_cuda_fail(&c_->logger, err, "track: cudaEventCreate");
    if (st == GLCV_OK && (err = cudaEventCreateWithFlags(&c_->staged, cudaEventDisableTiming)) != cudaSuccess)
        st = glcv_cuda_fail(&c_->logger, err, "track: cudaEventCreate");
    if (st == GLCV_OK &&
        (err = cudaDeviceGetAttribute(&c_->sms, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess)
        st = glcv_cuda_fail(&c_->logger, err, "track: cudaDeviceGetAttribute");

    size_t w = (size_t)c->width, h = (size_t)c->height, n = (size_t)max_objects, nb = (size_t)c->nbins;
    if (st == GLCV_OK)
        st = cuda_alloc(c_, (void **)&c_->ids, n * sizeof(int), "track: ids");
    /* CAMSHIFT's bin images, models and states; DCF has its own (dcf_buffers): 64 VGA streams'
     * bin images alone are 39 MB */
    if (st == GLCV_OK && !dcf)
        st = camshift_buffers(c_, tables, w, h, n, nb);
    if (st == GLCV_OK && dcf)
        st = dcf_buffers(c_);
    if (st == GLCV_OK)
        c_->max_cluster = dcf ? glcv_cuda_track_dcf_max_cluster() : glcv_cuda_track_max_cluster(c);
    if (st == GLCV_OK && dcf)
        c_->dcf_two_fit = glcv_cuda_track_dcf_two_fit();
    if (st == GLCV_OK && (err = cudaStreamSynchronize(c_->stream)) != cudaSuccess)
        st = glcv_cuda_fail(&c_->logger, err, "track: setup");
    if (st != GLCV_OK) {
        glcv_track_cuda_destroy(&c_);
        return st;
    }
    glcv_logf(&c_->logger, GLCV_LOG_DEBUG, "track: CUDA device %d, %d multiprocessors, clusters up to %d blocks",
              device, c_->sms, c_->max_cluster);
    *out = c_;
    return GLCV_OK;
}

void glcv_track_cuda_destroy(glcv_track_cuda **cuda)
{
    if (!cuda || !*cuda)
        return;
    glcv_track_cuda *c_ = *cuda;
    if (c_->stream)
        (void)cudaStreamSynchronize(c_->stream);
    glcv_cuda_bridge_destroy(&c_->bridge);
    cudaFreeHost(c_->staging);
    cudaFree(c_->upload);
    cudaFree(c_->bins);
    cudaFree(c_->tables);
    cudaFree(c_->luts);
    cudaFree(c_->sqrt_models);
    cudaFree(c_->model_sums);
    cudaFree(c_->objects);
    cudaFree(c_->results);
    cudaFree(c_->states);
    cudaFree(c_->initial);
    cudaFree(c_->ids);
    cudaFreeHost(c_->host_results);
    cudaFreeHost(c_->host_objects);
    cudaFree(c_->dcf_objects);
    cudaFree(c_->dcf_scratch);
    cudaFree(c_->dcf_streams);
    cudaFree(c_->dcf_tables);
    cudaFree(c_->dcf_results);
    cudaFreeHost(c_->host_dcf_results);
    if (c_->done)
        cudaEventDestroy(c_->done);
    if (c_->staged)
        cudaEventDestroy(c_->staged);
    if (c_->start)
        cudaEventDestroy(c_->start);
    if (c_->stop)
        cudaEventDestroy(c_->stop);
    if (c_->stream)
        cudaStreamDestroy(c_->stream);
    (void)cudaGetLastError();
    free(c_->known);
    free(c_);
    *cuda = NULL;
}

glcv_status glcv_track_cuda_set_object(glcv_track_cuda *c_, int id, const glcv_tm_object *object,
                                       const uint8_t *lut, const double *sqrt_model, double model_sum)
{
    if (c_->dcf) /* DCF keeps no CAMSHIFT state */
        return GLCV_OK;
    CHECK_CUDA(cudaSetDevice(c_->device), "track: cudaSetDevice");
    /* Pageable sources: the copies are staged before the calls return, so the caller's memory
     * may change at once; they are ordered before the next frame on the stream. */
    if (object) {
        CHECK_CUDA(cudaMemcpyAsync(c_->objects + id, object, sizeof *object, cudaMemcpyHostToDevice, c_->stream),
                   "track: object upload");
        c_->known[id] = object->window;
    }
    if (lut) {
        CHECK_CUDA(cudaMemcpyAsync(c_->luts + (size_t)id * (size_t)c_->lut_stride, lut, (size_t)c_->nbins + 1,
                                   cudaMemcpyHostToDevice, c_->stream),
                   "track: model upload");
        CHECK_CUDA(cudaMemcpyAsync(c_->sqrt_models + (size_t)id * (size_t)c_->nbins, sqrt_model,
                                   (size_t)c_->nbins * sizeof(double), cudaMemcpyHostToDevice, c_->stream),
                   "track: model upload");
        CHECK_CUDA(cudaMemcpyAsync(c_->model_sums + id, &model_sum, sizeof model_sum, cudaMemcpyHostToDevice,
                                   c_->stream),
                   "track: model upload");
    }
    return GLCV_OK;
}

glcv_status glcv_track_cuda_dcf_set(glcv_track_cuda *c_, int id, int stream, const glcv_track_dcf *object)
{
    CHECK_CUDA(cudaSetDevice(c_->device), "track: cudaSetDevice");
    /* pageable sources: staged before the calls return, ordered before the next frame */
    CHECK_CUDA(cudaMemcpyAsync(c_->dcf_objects + id, object, sizeof *object, cudaMemcpyHostToDevice, c_->stream),
               "track: DCF object upload");
    CHECK_CUDA(cudaMemcpyAsync(c_->dcf_streams + id, &stream, sizeof stream, cudaMemcpyHostToDevice, c_->stream),
               "track: DCF object upload");
    return GLCV_OK;
}

/* DCF: blocks per object. One block runs an object's phases one after another, on one
 * multiprocessor; a cluster deals each phase's pixels, cells and frequencies to all its blocks. So
 * sets of few objects take the most blocks such that all objects' blocks run at once (one block
 * fills a multiprocessor); bench/track_bench --dcf measures the sizes. */
static int dcf_cluster(const glcv_track_cuda *c_, int n)
{
    if (c_->cluster_request)
        return c_->cluster_request <= c_->max_cluster ? c_->cluster_request : c_->max_cluster;
    int blocks = 1;
    while (blocks < c_->max_cluster && (long long)blocks * 2 * n <= c_->sms)
        blocks *= 2;
    return blocks;
}

/* DCF: queues the objects' frames from the frame source in `p` (pixels or textures), and their
 * results' download. */
static glcv_status launch_dcf(glcv_track_cuda *c_, glcv_cuda_dcf_params p, const int *ids, int n)
{
    if (n < 1)
        return GLCV_OK;
    CHECK_CUDA(cudaMemcpyAsync(c_->ids, ids, (size_t)n * sizeof *ids, cudaMemcpyHostToDevice, c_->stream),
               "track: ids upload");
    p.width = c_->width;
    p.height = c_->height;
    p.ids = c_->ids;
    p.n = n;
    p.streams = c_->dcf_streams;
    p.objects = c_->dcf_objects;
    p.scratch = c_->dcf_scratch;
    p.tables = c_->dcf_tables;
    p.results = c_->dcf_results;
    p.blocks = c_->dcf_blocks = n > c_->sms && c_->dcf_two_fit ? 2 : 1;
    p.cluster = c_->cluster_used = p.blocks == 1 ? dcf_cluster(c_, n) : 1;
    CHECK_CUDA((cudaError_t)glcv_cuda_track_dcf(p, c_->stream), "track: DCF kernel");
    CHECK_CUDA(cudaMemcpyAsync(c_->host_dcf_results, c_->dcf_results, (size_t)n * sizeof *c_->dcf_results,
                               cudaMemcpyDeviceToHost, c_->stream),
               "track: DCF results download");
    CHECK_CUDA(cudaEventRecord(c_->done, c_->stream), "track: cudaEventRecord");
    return GLCV_OK;
}

glcv_status glcv_track_cuda_dcf_results(glcv_track_cuda *c_, glcv_track_dcf_result *out, int n)
{
    CHECK_CUDA(cudaEventSynchronize(c_->done), "track: waiting for the frame");
    if (n > 0)
        memcpy(out, c_->host_dcf_results, (size_t)n * sizeof *out);
    return GLCV_OK;
}

/* Blocks per object: enough that the largest window gets at most 128K pixels per block and that
 * all objects' blocks fill half the multiprocessors at least (measured on an H100: one object is
 * fastest with the most blocks; 64 objects with 200x200 and 400x400 windows with 2 a object, with
 * 1080x720 windows with 8 - bench/track_bench sweeps them). */
static int choose_cluster(glcv_track_cuda *c_, const int *ids, int n)
{
    if (c_->cluster_request)
        return c_->cluster_request <= c_->max_cluster ? c_->cluster_request : c_->max_cluster;
    long long largest = 0;
    for (int k = 0; k < n; k++) {
        glcv_tm_rect w = c_->known[ids[k]];
        long long area = (long long)(w.w + 20) * (w.h + 20);
        largest = area > largest ? area : largest;
    }
    int blocks = 1;
    while (blocks < c_->max_cluster && ((long long)blocks * 131072 < largest || (long long)blocks * n < c_->sms / 2))
        blocks *= 2;
    return blocks;
}

static glcv_status launch_tracking(glcv_track_cuda *c_, const glcv_tm_config *c, const int *ids, int n,
                                   const glcv_tm_object *initial, int copy_results)
{
    if (n < 1)
        return GLCV_OK;
    if (!initial) /* benchmarks upload their ids once */
        CHECK_CUDA(cudaMemcpyAsync(c_->ids, ids, (size_t)n * sizeof *ids, cudaMemcpyHostToDevice, c_->stream),
                   "track: ids upload");
    glcv_cuda_track_params p;
    memset(&p, 0, sizeof p);
    p.bins = c_->bins;
    p.bins_pitch = c_->bins_pitch;
    p.stream_stride = c_->bins_pitch * (size_t)c_->height;
    p.config = *c;
    p.ids = c_->ids;
    p.n = n;
    p.objects = c_->objects;
    p.initial = initial;
    p.states = copy_results ? c_->states : NULL;
    p.luts = c_->luts;
    p.lut_stride = c_->lut_stride;
    p.sqrt_models = c_->sqrt_models;
    p.model_sums = c_->model_sums;
    p.results = c_->results;
    int cluster = choose_cluster(c_, ids, n);
    c_->cluster_used = cluster;
    CHECK_CUDA((cudaError_t)glcv_cuda_track_objects(p, cluster, c_->stream), "track: tracking kernel");
    if (copy_results) {
        CHECK_CUDA(cudaMemcpyAsync(c_->host_results, c_->results, (size_t)n * sizeof *c_->results,
                                   cudaMemcpyDeviceToHost, c_->stream),
                   "track: results download");
        CHECK_CUDA(cudaMemcpyAsync(c_->host_objects, c_->states, (size_t)n * sizeof *c_->states,
                                   cudaMemcpyDeviceToHost, c_->stream),
                   "track: objects download");
    }
    CHECK_CUDA(cudaEventRecord(c_->done, c_->stream), "track: cudaEventRecord");
    return GLCV_OK;
}

/* Queues the bin kernel for `streams` frames with the frame and mask fields of `b` given; the
 * rest is the engine's. */
static glcv_status launch_bins(glcv_track_cuda *c_, const glcv_tm_config *c, glcv_cuda_bins_params b, int streams)
{
    b.tables = c_->tables;
    b.config = *c;
    b.bins = c_->bins;
    b.bins_pitch = c_->bins_pitch;
    b.streams = streams;
    CHECK_CUDA((cudaError_t)glcv_cuda_track_bins(b, c_->stream), "track: bin kernel");
    return GLCV_OK;
}

/* The bin kernel over `streams` frames in device memory, one after another (and masks counting
 * where >= mask_min). */
static glcv_status run_bins(glcv_track_cuda *c_, const glcv_tm_config *c, const uint8_t *pixels, size_t pitch,
                            int channels, int bgr, const uint8_t *mask, size_t mask_pitch, int mask_min, int streams)
{
    glcv_cuda_bins_params b = {.pixels = pixels, .pitch = pitch, .channels = channels, .bgr = bgr, .mask = mask,
                               .mask_pitch = mask_pitch, .mask_min = mask_min};
    return launch_bins(c_, c, b, streams);
}

/* The bin kernel over `streams` frames the bridge handed over: texture objects (one, or one per
 * layer) or the pixel buffer; a texture mask counts where red > 0.5. */
static glcv_status run_bins_frame(glcv_track_cuda *c_, const glcv_tm_config *c, const glcv_cuda_frame *f,
                                  int streams)
{
    if (!f->rgba_texture && !f->rgba_layers)
        return run_bins(c_, c, f->rgba, f->rgba_pitch, 4, 0, f->mask, f->mask_pitch, 128, streams);
    glcv_cuda_bins_params b = {.pixels_texture = f->rgba_texture, .pixels_layers = f->rgba_layers, .channels = 4,
                               .mask_texture = f->mask_texture, .mask_layers = f->mask_layers,
                               .mask_texture_channels = f->mask_channels, .mask_min = 128};
    return launch_bins(c_, c, b, streams);
}

/* Makes the upload buffer and, with `staging`, the pinned staging buffer, for sets of up to 4
 * bytes a pixel with masks. */
static glcv_status upload_buffers(glcv_track_cuda *c_, int staging)
{
    size_t rows = (size_t)c_->height * (size_t)c_->streams;
    size_t frames = rows * (((size_t)c_->width * 4 + 15) & ~(size_t)15);
    c_->mask_offset = (frames + 255) & ~(size_t)255;
    size_t bytes = c_->mask_offset + rows * (size_t)c_->width;
    if (!c_->upload)
        CHECK_CUDA(cudaMalloc((void **)&c_->upload, bytes), "track: device memory for frame sets");
    /* pinned memory is every device's (unified addressing): other devices upload from it too */
    if (staging && !c_->staging)
        CHECK_CUDA(cudaMallocHost((void **)&c_->staging, bytes), "track: pinned staging for frame sets");
    return GLCV_OK;
}

typedef struct stage_job {
    uint8_t *dst;
    size_t pitch;
    const glcv_image *images;
} stage_job;

/* Rows [begin, end) of the images (row r: image r / height, its row r % height). */
static void stage_range(void *user, int begin, int end)
{
    const stage_job *job = user;
    for (int r = begin; r < end; r++) {
        const glcv_image *img = &job->images[r / job->images[0].height];
        size_t row = (size_t)img->width * (size_t)glcv_pixel_format_size(img->format);
        memcpy(job->dst + (size_t)r * job->pitch, img->data + (size_t)(r % img->height) * glcv_image_stride(img), row);
    }
}

/* Copies `count` images of one size, row by row, into `dst` (rows of `pitch` bytes, image after
 * image), the rows spread over the library's threads (a set of 64 VGA frames is 78 MB: one core
 * copies it in about 10 ms). */
static void stage_images(uint8_t *dst, size_t pitch, const glcv_image *images, int count)
{
    stage_job job = {dst, pitch, images};
    glcv_parallel_for(count * images[0].height, 0, stage_range, &job);
}

glcv_status glcv_track_cuda_wait_upload(glcv_track_cuda *c_)
{
    if (!c_->staging_busy)
        return GLCV_OK;
    CHECK_CUDA(cudaSetDevice(c_->device), "track: cudaSetDevice");
    CHECK_CUDA(cudaEventSynchronize(c_->staged), "track: waiting for the last upload");
    c_->staging_busy = 0;
    return GLCV_OK;
}

glcv_status glcv_track_cuda_frames(glcv_track_cuda *c_, const glcv_tm_config *c, const glcv_image *frames,
                                   const glcv_image *masks, int count, const glcv_track_cuda *staged, const int *ids,
                                   int n)
{
    CHECK_CUDA(cudaSetDevice(c_->device), "track: cudaSetDevice");
    if (c_->dcf) /* DCF reads no mask: none is staged or uploaded */
        masks = NULL;
    glcv_status st = upload_buffers(c_, !staged);
    if (st != GLCV_OK)
        return st;
    int channels = glcv_pixel_format_size(frames[0].format);
    int bgr = frames[0].format == GLCV_PIXEL_BGR8 || frames[0].format == GLCV_PIXEL_BGRA8;
    size_t pitch = ((size_t)c_->width * (size_t)channels + 15) & ~(size_t)15;
    size_t rows = (size_t)c_->height * (size_t)count;
    if (!staged) {
        /* the staging memory is written again only once the last set's upload from it is done */
        if ((st = glcv_track_cuda_wait_upload(c_)) != GLCV_OK)
            return st;
        stage_images(c_->staging, pitch, frames, count);
        if (masks)
            stage_images(c_->staging + c_->mask_offset, (size_t)c_->width, masks, count);
    }
    size_t bytes = masks ? c_->mask_offset + rows * (size_t)c_->width : rows * pitch;
    CHECK_CUDA(cudaMemcpyAsync(c_->upload, staged ? staged->staging : c_->staging, bytes, cudaMemcpyHostToDevice,
                               c_->stream),
               "track: frame set upload");
    CHECK_CUDA(cudaEventRecord(c_->staged, c_->stream), "track: cudaEventRecord");
    c_->staging_busy = 1;
    if (c_->dcf)
        return launch_dcf(c_, (glcv_cuda_dcf_params){.pixels = c_->upload, .pitch = pitch, .channels = channels,
                                                      .bgr = bgr},
                          ids, n);
    st = run_bins(c_, c, c_->upload, pitch, channels, bgr, masks ? c_->upload + c_->mask_offset : NULL,
                  (size_t)c_->width, 1, count);
    if (st != GLCV_OK)
        return st;
    c_->have_source = 1;
    c_->source_channels = channels;
    c_->source_bgr = bgr;
    c_->source_streams = count;
    c_->source_pitch = pitch;
    return launch_tracking(c_, c, ids, n, NULL, 1);
}

/* Creates the bridge for texture inputs on first use (arrays of the engine's streams). */
static glcv_status need_bridge(glcv_track_cuda *c_)
{
    if (!glcv_gl_context_current())
        return glcv_fail(&c_->logger, GLCV_ERROR_NO_CONTEXT, "track: texture inputs need a current GL context");
    CHECK_CUDA(cudaSetDevice(c_->device), "track: cudaSetDevice");
    if (c_->bridge)
        return GLCV_OK;
    return glcv_cuda_bridge_create_for_layers(c_->width, c_->height, c_->streams, &c_->logger, &c_->bridge);
}

glcv_status glcv_track_cuda_frame_texture(glcv_track_cuda *c_, const glcv_tm_config *c, unsigned int frame,
                                          unsigned int mask, int layered, const int *ids, int n)
{
    if (c_->dcf) /* DCF reads no mask: none is mapped */
        mask = 0;
    glcv_status st = need_bridge(c_);
    /* registered textures (RGBA8 frames, R8 or RGBA8 masks; arrays: a texture object per layer,
     * both mapped in one call), else the bridge's pixel buffer */
    glcv_cuda_frame f;
    if (st == GLCV_OK)
        st = layered ? glcv_cuda_bridge_map_layers(c_->bridge, frame, mask, c_->stream, &f)
                     : glcv_cuda_bridge_map_textures(c_->bridge, frame, mask, c_->stream, &f);
    if (st != GLCV_OK)
        return st;
    if (c_->dcf) {
        /* the kernel reads the textures (or the bridge's buffer) before GL has them back */
        glcv_cuda_dcf_params p = {.pixels = f.rgba, .pitch = f.rgba_pitch, .channels = 4,
                                  .pixels_texture = f.rgba_texture, .pixels_layers = f.rgba_layers};
        st = launch_dcf(c_, p, ids, n);
        glcv_status st2 = glcv_cuda_bridge_unmap(c_->bridge, c_->stream);
        c_->have_source = 0;
        return st == GLCV_OK ? st2 : st;
    }
    st = run_bins_frame(c_, c, &f, layered ? c_->streams : 1);
    /* the bin images are CUDA's own: GL may have the textures back right after the bin kernel */
    glcv_status st2 = glcv_cuda_bridge_unmap(c_->bridge, c_->stream);
    if (st == GLCV_OK)
        st = st2;
    if (st != GLCV_OK)
        return st;
    c_->have_source = 0;
    return launch_tracking(c_, c, ids, n, NULL, 1);
}

glcv_status glcv_track_cuda_forget_texture(glcv_track_cuda *c_, unsigned int texture)
{
    if (!c_->bridge)
        return GLCV_OK;
    CHECK_CUDA(cudaSetDevice(c_->device), "track: cudaSetDevice");
    return glcv_cuda_bridge_forget(c_->bridge, texture);
}

void glcv_track_cuda_texture_stats(const glcv_track_cuda *c_, glcv_track_texture_stats *out)
{
    glcv_cuda_bridge_stats s;
    glcv_cuda_bridge_get_stats(c_->bridge, &s);
    out->direct = s.direct;
    out->registered = s.registered;
    out->registrations = s.registrations;
    out->refused = s.refused;
    out->texture_objects = s.texture_objects;
}

glcv_status glcv_track_cuda_results(glcv_track_cuda *c_, glcv_tm_result *results, glcv_tm_object *objects,
                                    const int *ids, int n)
{
    if (c_->dcf)
        return glcv_fail(&c_->logger, GLCV_ERROR_STATE, "track: CAMSHIFT results from a DCF engine");
    CHECK_CUDA(cudaEventSynchronize(c_->done), "track: waiting for the frame");
    if (n > 0) {
        memcpy(results, c_->host_results, (size_t)n * sizeof *results);
        memcpy(objects, c_->host_objects, (size_t)n * sizeof *objects);
        for (int k = 0; k < n; k++)
            c_->known[ids[k]] = objects[k].window;
    }
    return GLCV_OK;
}

void glcv_track_cuda_set_cluster(glcv_track_cuda *c_, int blocks)
{
    c_->cluster_request = blocks;
}

int glcv_track_cuda_cluster(const glcv_track_cuda *c_)
{
    return c_->cluster_used;
}

int glcv_track_cuda_dcf_blocks(const glcv_track_cuda *c_)
{
    return c_->dcf_blocks;
}

glcv_status glcv_track_cuda_bench_prepare(glcv_track_cuda *c_, const glcv_tm_rect *windows, const int *ids,
                                          int n)
{
    if (c_->dcf)
        return glcv_fail(&c_->logger, GLCV_ERROR_UNSUPPORTED, "track: the kernel benchmarks are CAMSHIFT's");
    CHECK_CUDA(cudaSetDevice(c_->device), "track: cudaSetDevice");
    if (!c_->initial)
        CHECK_CUDA(cudaMalloc((void **)&c_->initial, (size_t)c_->max_objects * sizeof *c_->initial),
                   "track: benchmark states");
    if (!c_->start)
        CHECK_CUDA(cudaEventCreate(&c_->start), "track: cudaEventCreate");
    if (!c_->stop)
        CHECK_CUDA(cudaEventCreate(&c_->stop), "track: cudaEventCreate");
    glcv_tm_object *o = calloc((size_t)(n > 0 ? n : 1), sizeof *o);
    if (!o)
        return GLCV_ERROR_OUT_OF_MEMORY;
    for (int k = 0; k < n; k++) {
        o[k].window = windows[k];
        c_->known[ids[k]] = windows[k];
    }
    cudaError_t err = cudaMemcpy(c_->initial, o, (size_t)n * sizeof *o, cudaMemcpyHostToDevice);
    if (err == cudaSuccess)
        err = cudaMemcpy(c_->ids, ids, (size_t)n * sizeof *ids, cudaMemcpyHostToDevice);
    free(o);
    if (err != cudaSuccess)
        return glcv_cuda_fail(&c_->logger, err, "track: benchmark states");
    c_->bench_n = n;
    c_->bench_ids = ids[0];
    return GLCV_OK;
}

glcv_status glcv_track_cuda_bench_time(glcv_track_cuda *c_, const glcv_tm_config *c, int hsv, int runs,
                                       double *ms_per_frame)
{
    CHECK_CUDA(cudaSetDevice(c_->device), "track: cudaSetDevice");
    if (!c_->initial || !c_->start)
        return glcv_fail(&c_->logger, GLCV_ERROR_STATE, "track: benchmark not prepared");
    if (hsv && !c_->have_source)
        return glcv_fail(&c_->logger, GLCV_ERROR_STATE, "track: no host frame on the device to convert");
    /* the ids on the device are the prepared ones; launch_tracking reads only ids[0] here for
     * the cluster choice */
    int first = c_->bench_ids;
    int *ids = malloc((size_t)(c_->bench_n > 0 ? c_->bench_n : 1) * sizeof *ids);
    if (!ids)
        return GLCV_ERROR_OUT_OF_MEMORY;
    for (int k = 0; k < c_->bench_n; k++)
        ids[k] = first + k;
    glcv_status st = GLCV_OK;
    cudaError_t err = cudaEventRecord(c_->start, c_->stream);
    for (int r = 0; r < runs && st == GLCV_OK && err == cudaSuccess; r++) {
        if (hsv)
            st = run_bins(c_, c, c_->upload, c_->source_pitch, c_->source_channels, c_->source_bgr, NULL, 0, 1,
                          c_->source_streams);
        if (st == GLCV_OK)
            st = launch_tracking(c_, c, ids, c_->bench_n, c_->initial, 0);
    }
    free(ids);
    if (st != GLCV_OK)
        return st;
    if (err == cudaSuccess)
        err = cudaEventRecord(c_->stop, c_->stream);
    if (err == cudaSuccess)
        err = cudaEventSynchronize(c_->stop);
    float ms = 0;
    if (err == cudaSuccess)
        err = cudaEventElapsedTime(&ms, c_->start, c_->stop);
    if (err != cudaSuccess)
        return glcv_cuda_fail(&c_->logger, err, "track: benchmark timing");
    *ms_per_frame = (double)ms / (runs > 0 ? runs : 1);
    return GLCV_OK;
}

#else /* built without CUDA: glcv_cuda_choose never picks this engine, so only create is reached */

glcv_status glcv_track_cuda_create(int device, const glcv_tm_config *c, const glcv_tm_tables *tables,
                                   int max_objects, int streams, int dcf, const glcv_logger *logger,
                                   glcv_track_cuda **out)
{
    (void)device, (void)c, (void)tables, (void)max_objects, (void)streams, (void)dcf;
    *out = NULL;
    return glcv_fail(logger, GLCV_ERROR_UNSUPPORTED, "track: glcv was built without CUDA");
}

void glcv_track_cuda_destroy(glcv_track_cuda **cuda)
{
    (void)cuda;
}

glcv_status glcv_track_cuda_set_object(glcv_track_cuda *cuda, int id, const glcv_tm_object *object,
                                       const uint8_t *lut, const double *sqrt_model, double model_sum)
{
    (void)cuda, (void)id, (void)object, (void)lut, (void)sqrt_model, (void)model_sum;
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_track_cuda_wait_upload(glcv_track_cuda *cuda)
{
    (void)cuda;
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_track_cuda_dcf_set(glcv_track_cuda *cuda, int id, int stream, const glcv_track_dcf *object)
{
    (void)cuda, (void)id, (void)stream, (void)object;
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_track_cuda_dcf_results(glcv_track_cuda *cuda, glcv_track_dcf_result *out, int n)
{
    (void)cuda, (void)out, (void)n;
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_track_cuda_frames(glcv_track_cuda *cuda, const glcv_tm_config *c, const glcv_image *frames,
                                   const glcv_image *masks, int count, const glcv_track_cuda *staged, const int *ids,
                                   int n)
{
    (void)cuda, (void)c, (void)frames, (void)masks, (void)count, (void)staged, (void)ids, (void)n;
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_track_cuda_frame_texture(glcv_track_cuda *cuda, const glcv_tm_config *c, unsigned int frame,
                                          unsigned int mask, int layered, const int *ids, int n)
{
    (void)cuda, (void)c, (void)frame, (void)mask, (void)layered, (void)ids, (void)n;
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_track_cuda_forget_texture(glcv_track_cuda *cuda, unsigned int texture)
{
    (void)cuda, (void)texture;
    return GLCV_ERROR_UNSUPPORTED;
}

void glcv_track_cuda_texture_stats(const glcv_track_cuda *cuda, glcv_track_texture_stats *out)
{
    (void)cuda;
    memset(out, 0, sizeof *out);
}

glcv_status glcv_track_cuda_results(glcv_track_cuda *cuda, glcv_tm_result *results, glcv_tm_object *objects,
                                    const int *ids, int n)
{
    (void)cuda, (void)results, (void)objects, (void)ids, (void)n;
    return GLCV_ERROR_UNSUPPORTED;
}

void glcv_track_cuda_set_cluster(glcv_track_cuda *cuda, int blocks)
{
    (void)cuda, (void)blocks;
}

int glcv_track_cuda_cluster(const glcv_track_cuda *cuda)
{
    (void)cuda;
    return 0;
}

int glcv_track_cuda_dcf_blocks(const glcv_track_cuda *cuda)
{
    (void)cuda;
    return 0;
}

glcv_status glcv_track_cuda_bench_prepare(glcv_track_cuda *cuda, const glcv_tm_rect *windows, const int *ids,
                                          int n)
{
    (void)cuda, (void)windows, (void)ids, (void)n;
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_track_cuda_bench_time(glcv_track_cuda *cuda, const glcv_tm_config *c, int hsv, int runs,
                                       double *ms_per_frame)
{
    (void)cuda, (void)c, (void)hsv, (void)runs, (void)ms_per_frame;
    return GLCV_ERROR_UNSUPPORTED;
}

#endif
