/* nvdec_share_bench: can one NVDEC decoder serve several cameras? The floor of NVIDIA's decoders
 * when S live H.264 streams share D decoder sessions, against a session per stream.
 *
 *   nvdec_share_bench FILE.h264 --streams S --decoders D [--threads T] [--seconds N]
 *                     [--surfaces P] [--outputs O] [--device G] [--check 1]
 *
 * FILE is an Annex-B H.264 elementary stream (ffmpeg -i IN -c:v copy -bsf:v h264_mp4toannexb F.h264).
 * Every stream reads it and loops. Each stream has its own NVIDIA parser; a decoder made for
 * K = ceil(S / D) streams holds K * P decode surfaces, and stream k of it decodes into surfaces
 * [k P, (k + 1) P): its parser's picture indices (the current picture and every DPB reference) are
 * offset by k P before cuvidDecodePicture, so the streams' reference pictures never meet. T threads
 * (default min(D, 64)) serve the decoders; a thread gives each stream of its decoders one access
 * unit in turn, as live cameras deliver them, and maps (then unmaps) the pictures displayed in that
 * round once the round is submitted, so the decodes of a round overlap. Nothing is copied to the host.
 *
 * Prints the frames decoded per second, the cameras at 25 fps that rate serves, and the GPU memory
 * the decoders took. The driver's libraries are loaded at run time (nv-codec-headers).
 *
 * On an H200 (driver 580), pictures come out exact while the streams of a decoder stay within its
 * surfaces 0 - 15 (--streams 16 --decoders 4 --surfaces 4), and differ once they go past 15
 * (--streams 32 --decoders 8 --surfaces 8): src/media_nvdec.c shares decoders within that bound. */
#define _DEFAULT_SOURCE
#define FFNV_LOG_FUNC(logctx, msg, ...) ((void)(logctx))
#define FFNV_DEBUG_LOG_FUNC(logctx, msg, ...) ((void)(logctx))
#include <ffnvcodec/dynlink_loader.h>

#include <dlfcn.h>

#include <pthread.h>
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_PENDING = 8 };

static CudaFunctions *cu;
static CuvidFunctions *cv;
static CUcontext ctx;
/* not among nv-codec-headers' functions */
typedef CUresult CUDAAPI mem_get_info_fn(size_t *free_bytes, size_t *total_bytes);
static mem_get_info_fn *mem_get_info;

static size_t free_memory(void)
{
    size_t free_bytes = 0, total = 0;
    if (mem_get_info && mem_get_info(&free_bytes, &total) != CUDA_SUCCESS)
        free_bytes = 0;
    return free_bytes;
}

typedef struct au {
    size_t offset, size;
} au;

static const unsigned char *file_data;
static const au *aus;
static size_t au_count;
static int surfaces_per_stream = 8;
static int shift;  /* --shift N: every stream's surfaces start N * P further (tests the offsets alone) */
static int spread = 7; /* stream i starts at the file's (spread * i)-th IDR picture */
static int output_surfaces;
static int serial; /* --serial 1: map each picture right after its access unit, not after the round */ /* per decoder; 0: max(8, its streams) */
static atomic_int min_surfaces; /* the largest min_num_decode_surfaces a sequence asked for */
/* --check: every picture is copied to the host and hashed; pictures of the same access unit must
 * be identical whichever stream, decoder and surfaces decoded them */
static int check;
static uint64_t *au_hash;
static pthread_mutex_t hash_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_long checked, mismatches;

typedef struct decoder decoder;

typedef struct stream {
    decoder *dec;
    int base; /* first decode surface of this stream in its decoder */
    CUvideoparser parser;
    size_t next;      /* next access unit */
    size_t displayed; /* the access unit of the next picture displayed */
    int pending[MAX_PENDING];
    int progressive[MAX_PENDING];
    int npending;
    int failed;
} stream;

struct decoder {
    CUvideodecoder handle;
    int streams;
    unsigned width, height;
    cudaVideoCodec codec;
    pthread_mutex_t lock; /* creation: the streams of a decoder are served by one thread anyway */
};

static atomic_long frames_total;
static atomic_int stop_flag;
static atomic_int errors;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Access units of an Annex-B H.264 stream: a new one starts at an access unit delimiter, an SPS, or
 * at the first slice of a picture (first_mb_in_slice == 0) after a slice, together with the SEI,
 * SPS and PPS units that come before it. */
static au *split_access_units(const unsigned char *d, size_t n, size_t *count)
{
    size_t cap = 1024, k = 0;
    au *out = malloc(cap * sizeof *out);
    size_t start = 0;
    int seen_slice = 0;
    size_t pending_start = (size_t)-1; /* start of non-slice units after the last slice */
    for (size_t i = 0; i + 3 < n; i++) {
        if (!(d[i] == 0 && d[i + 1] == 0 && d[i + 2] == 1))
            continue;
        size_t nal_start = (i > 0 && d[i - 1] == 0) ? i - 1 : i;
        int type = d[i + 3] & 31;
        int boundary = -1;
        if (type == 1 || type == 5) {
            int first_mb_zero = i + 4 < n && (d[i + 4] & 0x80);
            if (seen_slice && first_mb_zero)
                boundary = 1;
            seen_slice = 1;
        } else if (seen_slice && (type == 6 || type == 7 || type == 8 || type == 9)) {
            if (pending_start == (size_t)-1)
                pending_start = nal_start;
        }
        if (boundary == 1) {
            size_t cut = pending_start != (size_t)-1 ? pending_start : nal_start;
            if (k == cap)
                out = realloc(out, (cap *= 2) * sizeof *out);
            out[k++] = (au){start, cut - start};
            start = cut;
            pending_start = (size_t)-1;
        } else if (type == 1 || type == 5) {
            pending_start = (size_t)-1;
        }
        i += 2;
    }
    if (k == cap)
        out = realloc(out, (cap + 1) * sizeof *out);
    out[k++] = (au){start, n - start};
    *count = k;
    return out;
}

static int CUDAAPI on_sequence(void *user, CUVIDEOFORMAT *f)
{
    stream *s = user;
    decoder *d = s->dec;
    pthread_mutex_lock(&d->lock);
    int ok = 1;
    if (!d->handle) {
        CUVIDDECODECREATEINFO ci;
        memset(&ci, 0, sizeof ci);
        ci.CodecType = f->codec;
        ci.ChromaFormat = f->chroma_format;
        ci.OutputFormat = cudaVideoSurfaceFormat_NV12;
        ci.ulWidth = f->coded_width;
        ci.ulHeight = f->coded_height;
        ci.ulMaxWidth = f->coded_width;
        ci.ulMaxHeight = f->coded_height;
        ci.ulTargetWidth = f->coded_width;
        ci.ulTargetHeight = f->coded_height;
        ci.ulNumDecodeSurfaces = (unsigned long)(d->streams + shift) * (unsigned long)surfaces_per_stream;
        ci.ulNumOutputSurfaces = output_surfaces > 0          ? (unsigned long)output_surfaces
                                 : d->streams < MAX_PENDING ? MAX_PENDING
                                                            : (unsigned long)d->streams;
        ci.DeinterlaceMode = cudaVideoDeinterlaceMode_Weave;
        ci.ulCreationFlags = cudaVideoCreate_PreferCUVID;
        ci.display_area.right = (short)f->display_area.right;
        ci.display_area.bottom = (short)f->display_area.bottom;
        CUresult r = cv->cuvidCreateDecoder(&d->handle, &ci);
        if (r != CUDA_SUCCESS) {
            fprintf(stderr, "cuvidCreateDecoder (%lu decode surfaces, %lu output surfaces) failed: %d\n",
                    ci.ulNumDecodeSurfaces, ci.ulNumOutputSurfaces, (int)r);
            d->handle = NULL;
            ok = 0;
        } else {
            d->width = f->coded_width;
            d->height = f->coded_height;
            d->codec = f->codec;
        }
    } else if (d->width != f->coded_width || d->height != f->coded_height || d->codec != f->codec) {
        fprintf(stderr, "a stream's format differs from its decoder's\n");
        ok = 0;
    }
    pthread_mutex_unlock(&d->lock);
    if (!ok) {
        s->failed = 1;
        atomic_fetch_add(&errors, 1);
        return 0;
    }
    int need = f->min_num_decode_surfaces, seen = atomic_load(&min_surfaces);
    while (need > seen && !atomic_compare_exchange_weak(&min_surfaces, &seen, need))
        ;
    if ((int)f->min_num_decode_surfaces > surfaces_per_stream) {
        fprintf(stderr, "the stream needs %d decode surfaces, more than --surfaces %d\n",
                f->min_num_decode_surfaces, surfaces_per_stream);
        s->failed = 1;
        atomic_fetch_add(&errors, 1);
        return 0;
    }
    return surfaces_per_stream;
}

static int CUDAAPI on_decode(void *user, CUVIDPICPARAMS *pic)
{
    stream *s = user;
    if (s->failed || !s->dec->handle)
        return 0;
    CUVIDPICPARAMS p = *pic;
    p.CurrPicIdx += s->base;
    for (int i = 0; i < 16; i++)
        if (p.CodecSpecific.h264.dpb[i].PicIdx >= 0)
            p.CodecSpecific.h264.dpb[i].PicIdx += s->base;
    if (cv->cuvidDecodePicture(s->dec->handle, &p) != CUDA_SUCCESS) {
        atomic_fetch_add(&errors, 1);
        return 0;
    }
    return 1;
}

static int CUDAAPI on_display(void *user, CUVIDPARSERDISPINFO *info)
{
    stream *s = user;
    if (!info)
        return 1;
    if (s->npending == MAX_PENDING) {
        atomic_fetch_add(&errors, 1);
        return 0;
    }
    s->pending[s->npending] = info->picture_index + s->base;
    s->progressive[s->npending] = info->progressive_frame;
    s->npending++;
    return 1;
}

typedef struct worker {
    stream **streams; /* the streams of this thread's decoders */
    int nstreams;
} worker;

static void check_picture(stream *s, CUdeviceptr ptr, unsigned pitch)
{
    unsigned w = s->dec->width, h = s->dec->height;
    size_t bytes = (size_t)w * h * 3 / 2;
    unsigned char *host = malloc(bytes);
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    c.srcDevice = ptr;
    c.srcPitch = pitch;
    c.dstMemoryType = CU_MEMORYTYPE_HOST;
    c.dstHost = host;
    c.dstPitch = w;
    c.WidthInBytes = w;
    c.Height = h;
    int ok = cu->cuMemcpy2D(&c) == CUDA_SUCCESS;
    c.srcDevice = ptr + (CUdeviceptr)pitch * h; /* NV12's chroma follows the surface's coded rows */
    c.dstHost = host + (size_t)w * h;
    c.Height = h / 2;
    ok = ok && cu->cuMemcpy2D(&c) == CUDA_SUCCESS;
    uint64_t hash = 1469598103934665603ull;
    for (size_t i = 0; i < bytes; i++)
        hash = (hash ^ host[i]) * 1099511628211ull;
    free(host);
    if (!ok) {
        atomic_fetch_add(&errors, 1);
        return;
    }
    pthread_mutex_lock(&hash_lock);
    size_t k = s->displayed % au_count;
    if (!au_hash[k])
        au_hash[k] = hash;
    else if (au_hash[k] != hash)
        atomic_fetch_add(&mismatches, 1);
    pthread_mutex_unlock(&hash_lock);
    atomic_fetch_add(&checked, 1);
}

static void map_pending(stream *s)
{
    for (int i = 0; i < s->npending; i++) {
        CUVIDPROCPARAMS pp;
        memset(&pp, 0, sizeof pp);
        pp.progressive_frame = s->progressive[i];
        CUdeviceptr ptr;
        unsigned pitch;
        if (cv->cuvidMapVideoFrame(s->dec->handle, s->pending[i], &ptr, &pitch, &pp) != CUDA_SUCCESS) {
            atomic_fetch_add(&errors, 1);
            continue;
        }
        if (check)
            check_picture(s, ptr, pitch);
        s->displayed++;
        cv->cuvidUnmapVideoFrame(s->dec->handle, ptr);
        atomic_fetch_add(&frames_total, 1);
    }
    s->npending = 0;
}

static void *work(void *arg)
{
    worker *w = arg;
    cu->cuCtxPushCurrent(ctx);
    while (!atomic_load(&stop_flag)) {
        for (int si = 0; si < w->nstreams; si++) {
            stream *s = w->streams[si];
            if (s->failed)
                continue;
            const au *a = &aus[s->next];
            CUVIDSOURCEDATAPACKET pk;
            memset(&pk, 0, sizeof pk);
            pk.payload = file_data + a->offset;
            pk.payload_size = (unsigned long)a->size;
            pk.flags = CUVID_PKT_ENDOFPICTURE;
            if (cv->cuvidParseVideoData(s->parser, &pk) != CUDA_SUCCESS)
                atomic_fetch_add(&errors, 1);
            s->next = (s->next + 1) % au_count;
            if (serial)
                map_pending(s);
        }
        for (int si = 0; si < w->nstreams; si++)
            map_pending(w->streams[si]);
    }
    CUcontext dummy;
    cu->cuCtxPopCurrent(&dummy);
    return NULL;
}

static void usage(void)
{
    fprintf(stderr, "usage: nvdec_share_bench FILE.h264 --streams S --decoders D [--threads T] "
                    "[--seconds N] [--surfaces P] [--device G] [--outputs O] [--check 0|1]\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage();
        return 2;
    }
    const char *path = argv[1];
    int nstreams = 64, ndec = 64, nthreads = 0, device = 0;
    double seconds = 3.0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            usage();
            return 2;
        }
        if (!strcmp(a, "--streams"))
            nstreams = atoi(v);
        else if (!strcmp(a, "--decoders"))
            ndec = atoi(v);
        else if (!strcmp(a, "--threads"))
            nthreads = atoi(v);
        else if (!strcmp(a, "--seconds"))
            seconds = atof(v);
        else if (!strcmp(a, "--surfaces"))
            surfaces_per_stream = atoi(v);
        else if (!strcmp(a, "--device"))
            device = atoi(v);
        else if (!strcmp(a, "--outputs"))
            output_surfaces = atoi(v);
        else if (!strcmp(a, "--serial"))
            serial = atoi(v);
        else if (!strcmp(a, "--shift"))
            shift = atoi(v);
        else if (!strcmp(a, "--spread"))
            spread = atoi(v);
        else if (!strcmp(a, "--check"))
            check = atoi(v);
        else {
            usage();
            return 2;
        }
        i++;
    }
    if (nstreams < 1 || ndec < 1 || ndec > nstreams || surfaces_per_stream < 1 || seconds <= 0) {
        fprintf(stderr, "nvdec_share_bench: need 1 <= decoders <= streams, surfaces >= 1, seconds > 0\n");
        return 2;
    }
    if (nthreads <= 0)
        nthreads = ndec < 64 ? ndec : 64;
    if (nthreads > ndec)
        nthreads = ndec;

    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "nvdec_share_bench: cannot open %s\n", path);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc((size_t)size > 0 ? (size_t)size : 1);
    if (size <= 0 || fread(data, 1, (size_t)size, f) != (size_t)size) {
        fprintf(stderr, "nvdec_share_bench: cannot read %s\n", path);
        fclose(f);
        return 1;
    }
    fclose(f);
    file_data = data;
    aus = split_access_units(data, (size_t)size, &au_count);
    size_t *idr = malloc(au_count * sizeof *idr), nidr = 0;
    for (size_t k = 0; k < au_count; k++) {
        const unsigned char *p = data + aus[k].offset, *e = p + aus[k].size;
        for (; p + 3 < e; p++)
            if (p[0] == 0 && p[1] == 0 && p[2] == 1 && (p[3] & 31) == 5) {
                idr[nidr++] = k;
                break;
            }
    }
    if (!nidr || idr[0] != 0) {
        fprintf(stderr, "nvdec_share_bench: %s does not start with an IDR picture\n", path);
        return 1;
    }
    au_hash = calloc(au_count, sizeof *au_hash);

    if (cuda_load_functions(&cu, NULL) < 0 || cuvid_load_functions(&cv, NULL) < 0) {
        fprintf(stderr, "nvdec_share_bench: no NVIDIA driver (libcuda / libnvcuvid)\n");
        return 77;
    }
    CUdevice dev;
    if (cu->cuInit(0) != CUDA_SUCCESS || cu->cuDeviceGet(&dev, device) != CUDA_SUCCESS ||
        cu->cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS) {
        fprintf(stderr, "nvdec_share_bench: no CUDA device %d\n", device);
        return 77;
    }
    cu->cuCtxPushCurrent(ctx);
    void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (libcuda)
        *(void **)&mem_get_info = dlsym(libcuda, "cuMemGetInfo_v2");
    size_t free0 = free_memory();

    decoder *decs = calloc((size_t)ndec, sizeof *decs);
    stream *streams = calloc((size_t)nstreams, sizeof *streams);
    int per = (nstreams + ndec - 1) / ndec;
    for (int d = 0; d < ndec; d++) {
        pthread_mutex_init(&decs[d].lock, NULL);
        decs[d].streams = per;
    }
    for (int i = 0; i < nstreams; i++) {
        stream *s = &streams[i];
        s->dec = &decs[i % ndec];
        s->base = (i / ndec + shift) * surfaces_per_stream;
        CUVIDPARSERPARAMS pp;
        memset(&pp, 0, sizeof pp);
        pp.CodecType = cudaVideoCodec_H264;
        pp.ulMaxNumDecodeSurfaces = (unsigned)surfaces_per_stream;
        pp.ulMaxDisplayDelay = 0;
        pp.pUserData = s;
        pp.pfnSequenceCallback = on_sequence;
        pp.pfnDecodePicture = on_decode;
        pp.pfnDisplayPicture = on_display;
        if (cv->cuvidCreateVideoParser(&s->parser, &pp) != CUDA_SUCCESS) {
            fprintf(stderr, "nvdec_share_bench: cannot make parser %d\n", i);
            return 1;
        }
    }

    /* The first access units make every decoder (its first stream's sequence header); the clock
     * starts after one round. */
    worker *ws = calloc((size_t)nthreads, sizeof *ws);
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    for (int t = 0; t < nthreads; t++)
        ws[t].streams = calloc((size_t)nstreams, sizeof *ws[t].streams);
    for (int i = 0; i < nstreams; i++) {
        worker *w = &ws[(i % ndec) % nthreads];
        w->streams[w->nstreams++] = &streams[i];
    }
    double t0 = now();
    for (int i = 0; i < nstreams; i++) {
        size_t first = idr[((size_t)i * (size_t)spread) % nidr];
        const au *a = &aus[first];
        streams[i].displayed = first;
        CUVIDSOURCEDATAPACKET pk;
        memset(&pk, 0, sizeof pk);
        pk.payload = data + a->offset;
        pk.payload_size = (unsigned long)a->size;
        pk.flags = CUVID_PKT_ENDOFPICTURE;
        cv->cuvidParseVideoData(streams[i].parser, &pk);
        streams[i].next = (first + 1) % au_count;
        map_pending(&streams[i]);
    }
    double t_setup = now() - t0;
    size_t free1 = free_memory();
    int failed = 0;
    for (int i = 0; i < nstreams; i++)
        failed += streams[i].failed;

    atomic_store(&frames_total, 0);
    double start = now();
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, work, &ws[t]);
    while (now() - start < seconds) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    atomic_store(&stop_flag, 1);
    for (int t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    double elapsed = now() - start;
    long n = atomic_load(&frames_total);

    printf("nvdec_share_bench %s: %d streams on %d decoders (%d streams a decoder, %d surfaces a stream), "
           "%d threads: %ld frames in %.2f s = %.0f frames/s = %.0f cameras at 25 fps; decoders made in "
           "%.2f s, %.0f MB of GPU memory (%.1f MB a decoder); %d streams failed, %d errors; %zu access units, "
           "%zu IDR; the sequence asks for %d decode surfaces; checked %ld pictures, %ld differ\n",
           path, nstreams, ndec, per, surfaces_per_stream, nthreads, n, elapsed, n / elapsed, n / elapsed / 25.0,
           t_setup, (double)(free0 - free1) / 1e6, (double)(free0 - free1) / 1e6 / ndec, failed,
           atomic_load(&errors), au_count, nidr, atomic_load(&min_surfaces), atomic_load(&checked), atomic_load(&mismatches));
    for (int i = 0; i < nstreams; i++)
        cv->cuvidDestroyVideoParser(streams[i].parser);
    for (int d = 0; d < ndec; d++)
        if (decs[d].handle)
            cv->cuvidDestroyDecoder(decs[d].handle);
    CUcontext dummy;
    cu->cuCtxPopCurrent(&dummy);
    cu->cuDevicePrimaryCtxRelease(dev);
    for (int t = 0; t < nthreads; t++)
        free(ws[t].streams);
    free(ws);
    free(idr);
    free(au_hash);
    free(th);
    free(streams);
    free(decs);
    free((void *)aus);
    free(data);
    return failed || atomic_load(&errors) || atomic_load(&mismatches) ? 1 : 0;
}
