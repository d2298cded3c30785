/* NVDEC through NVIDIA's parser, decoders shared by H.264 streams of one format (media_nvdec.h). */
#include "media_nvdec.h"

#include "core_internal.h"

/* The driver's CUDA and NVDEC functions, loaded at run time; the loader prints nothing. */
#define FFNV_LOG_FUNC(logctx, msg, ...) ((void)(logctx))
#define FFNV_DEBUG_LOG_FUNC(logctx, msg, ...) ((void)(logctx))
#include <ffnvcodec/dynlink_loader.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum {
    /* Surface indices a decoder's streams share without disturbing each other (see the header). */
    SHARED_INDICES = 16,
    /* Pictures decoded and not yet mapped, per stream (a flush at the end can show several). */
    QUEUE = 32,
    /* Streams a decoder holds at most, and the output surfaces each of them may hold mapped at once
     * (its source's ring, the frame its reader holds, those a set's conversion still reads). */
    MAX_RANGES = 4,
    OUTPUTS_PER_STREAM = 12
};

static CudaFunctions *cu;
static CuvidFunctions *cv;
static int libs_ok;
static pthread_once_t libs_once = PTHREAD_ONCE_INIT;

static void load_libs(void)
{
    if (cuda_load_functions(&cu, NULL) < 0) {
        cu = NULL;
        return;
    }
    if (cuvid_load_functions(&cv, NULL) < 0) {
        cuda_free_functions(&cu);
        cv = NULL;
        return;
    }
    libs_ok = 1;
}

int glcv_nvdec_available(void)
{
    pthread_once(&libs_once, load_libs);
    return libs_ok;
}

struct glcv_nvdec_decoder {
    glcv_nvdec_decoder *next; /* the pool of shareable decoders */
    CUvideodecoder handle;
    CUcontext ctx;
    cudaVideoCodec codec;
    cudaVideoChromaFormat chroma;
    unsigned int depth_minus8, coded_width, coded_height;
    int left, top, right, bottom; /* display area */
    int span;                     /* surfaces per stream */
    int ranges;                   /* streams it holds */
    unsigned int used;            /* ranges taken (bits) */
    int refs;                     /* streams on it and frames mapped from it; under pool_lock */
    pthread_mutex_t lock;         /* its NVDEC calls */
};

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static glcv_nvdec_decoder *pool;

typedef struct shown {
    int index;
    int progressive;
    int64_t pts;
} shown;

struct glcv_nvdec {
    CUcontext ctx;
    CUstream stream; /* the maps' post-processing */
    CUvideoparser parser;
    cudaVideoCodec codec;
    glcv_logger logger;
    glcv_nvdec_decoder *dec;
    int range, base;
    CUVIDEOFORMAT format; /* the sequence its decoder was made for */
    shown queue[QUEUE];
    int head, count;
    glcv_status error; /* set by a callback during glcv_nvdec_send */
};

static void decoder_unref(glcv_nvdec_decoder *d)
{
    pthread_mutex_lock(&pool_lock);
    int last = --d->refs == 0;
    if (last) {
        for (glcv_nvdec_decoder **p = &pool; *p; p = &(*p)->next)
            if (*p == d) {
                *p = d->next;
                break;
            }
    }
    pthread_mutex_unlock(&pool_lock);
    if (!last)
        return;
    CUcontext dummy;
    if (cu->cuCtxPushCurrent(d->ctx) == CUDA_SUCCESS) {
        cv->cuvidDestroyDecoder(d->handle);
        cu->cuCtxPopCurrent(&dummy);
    }
    pthread_mutex_destroy(&d->lock);
    free(d);
}

static int same_format(const glcv_nvdec_decoder *d, CUcontext ctx, const CUVIDEOFORMAT *f)
{
    return d->ctx == ctx && d->codec == f->codec && d->chroma == f->chroma_format &&
           d->depth_minus8 == f->bit_depth_luma_minus8 && d->coded_width == f->coded_width &&
           d->coded_height == f->coded_height && d->left == f->display_area.left && d->top == f->display_area.top &&
           d->right == f->display_area.right && d->bottom == f->display_area.bottom;
}

/* Finds a decoder of this format with a free range, or makes one; the stream takes the range. */
static glcv_status attach_decoder(glcv_nvdec *s, const CUVIDEOFORMAT *f)
{
    int span = f->min_num_decode_surfaces > 0 ? f->min_num_decode_surfaces : 1;
    int shareable = f->codec == cudaVideoCodec_H264 && span <= SHARED_INDICES / 2;
    int ranges = shareable ? SHARED_INDICES / span : 1;
    if (ranges > MAX_RANGES)
        ranges = MAX_RANGES;
    pthread_mutex_lock(&pool_lock);
    for (glcv_nvdec_decoder *d = shareable ? pool : NULL; d; d = d->next) {
        if (d->span != span || !same_format(d, s->ctx, f) || d->used == (1u << d->ranges) - 1u)
            continue;
        int r = 0;
        while (d->used & (1u << r))
            r++;
        d->used |= 1u << r;
        d->refs++;
        s->dec = d;
        s->range = r;
        s->base = r * span;
        pthread_mutex_unlock(&pool_lock);
        return GLCV_OK;
    }
    pthread_mutex_unlock(&pool_lock);

    glcv_nvdec_decoder *d = calloc(1, sizeof *d);
    if (!d)
        return GLCV_ERROR_OUT_OF_MEMORY;
    CUVIDDECODECREATEINFO ci;
    memset(&ci, 0, sizeof ci);
    ci.CodecType = f->codec;
    ci.ChromaFormat = f->chroma_format;
    ci.bitDepthMinus8 = f->bit_depth_luma_minus8;
    ci.OutputFormat = cudaVideoSurfaceFormat_NV12;
    ci.DeinterlaceMode = cudaVideoDeinterlaceMode_Weave;
    ci.ulCreationFlags = cudaVideoCreate_PreferCUVID;
    ci.ulWidth = ci.ulMaxWidth = f->coded_width;
    ci.ulHeight = ci.ulMaxHeight = f->coded_height;
    ci.display_area.left = (short)f->display_area.left;
    ci.display_area.top = (short)f->display_area.top;
    ci.display_area.right = (short)f->display_area.right;
    ci.display_area.bottom = (short)f->display_area.bottom;
    ci.ulTargetWidth = (unsigned long)(f->display_area.right - f->display_area.left);
    ci.ulTargetHeight = (unsigned long)(f->display_area.bottom - f->display_area.top);
    ci.ulNumDecodeSurfaces = (unsigned long)(ranges * span);
    ci.ulNumOutputSurfaces = (unsigned long)(ranges * OUTPUTS_PER_STREAM);
    CUresult r = cv->cuvidCreateDecoder(&d->handle, &ci);
    if (r != CUDA_SUCCESS) {
        free(d);
        glcv_logf(&s->logger, GLCV_LOG_WARN,
                  "media: NVDEC cannot make a decoder for a %ux%u stream (CUDA error %d: its sessions or memory "
                  "are used up, or it does not take the format)",
                  f->coded_width, f->coded_height, (int)r);
        return GLCV_ERROR_UNSUPPORTED;
    }
    pthread_mutex_init(&d->lock, NULL);
    d->ctx = s->ctx;
    d->codec = f->codec;
    d->chroma = f->chroma_format;
    d->depth_minus8 = f->bit_depth_luma_minus8;
    d->coded_width = f->coded_width;
    d->coded_height = f->coded_height;
    d->left = f->display_area.left;
    d->top = f->display_area.top;
    d->right = f->display_area.right;
    d->bottom = f->display_area.bottom;
    d->span = span;
    d->ranges = ranges;
    d->used = 1u;
    d->refs = 1;
    s->dec = d;
    s->range = 0;
    s->base = 0;
    if (shareable) {
        pthread_mutex_lock(&pool_lock);
        d->next = pool;
        pool = d;
        pthread_mutex_unlock(&pool_lock);
    }
    return GLCV_OK;
}

static void detach_decoder(glcv_nvdec *s)
{
    if (!s->dec)
        return;
    pthread_mutex_lock(&pool_lock);
    s->dec->used &= ~(1u << s->range);
    pthread_mutex_unlock(&pool_lock);
    decoder_unref(s->dec);
    s->dec = NULL;
}

static int CUDAAPI on_sequence(void *user, CUVIDEOFORMAT *f)
{
    glcv_nvdec *s = user;
    if (s->dec) {
        if (same_format(s->dec, s->ctx, f) && f->min_num_decode_surfaces <= (unsigned)s->dec->span)
            return s->dec->span;
        glcv_logf(&s->logger, GLCV_LOG_WARN, "media: the stream changed its format (%ux%u to %ux%u); NVDEC stops",
                  s->dec->coded_width, s->dec->coded_height, f->coded_width, f->coded_height);
        s->error = GLCV_ERROR_CORRUPT_DATA;
        return 0;
    }
    if (f->chroma_format != cudaVideoChromaFormat_420 || f->bit_depth_luma_minus8 != 0 ||
        f->display_area.right <= f->display_area.left || f->display_area.bottom <= f->display_area.top) {
        s->error = GLCV_ERROR_UNSUPPORTED;
        return 0;
    }
    glcv_status st = attach_decoder(s, f);
    if (st != GLCV_OK) {
        s->error = st;
        return 0;
    }
    s->format = *f;
    return s->dec->span;
}

static int CUDAAPI on_decode(void *user, CUVIDPICPARAMS *pic)
{
    glcv_nvdec *s = user;
    if (!s->dec)
        return 0;
    CUVIDPICPARAMS p = *pic;
    p.CurrPicIdx += s->base;
    if (s->base) {
        if (s->codec == cudaVideoCodec_H264) {
            for (int i = 0; i < 16; i++)
                if (p.CodecSpecific.h264.dpb[i].PicIdx >= 0)
                    p.CodecSpecific.h264.dpb[i].PicIdx += s->base;
        }
    }
    pthread_mutex_lock(&s->dec->lock);
    CUresult r = cv->cuvidDecodePicture(s->dec->handle, &p);
    pthread_mutex_unlock(&s->dec->lock);
    if (r != CUDA_SUCCESS) {
        glcv_logf(&s->logger, GLCV_LOG_WARN, "media: NVDEC refused a picture (CUDA error %d)", (int)r);
        if (s->error == GLCV_OK)
            s->error = GLCV_ERROR_CORRUPT_DATA;
        return 0;
    }
    return 1;
}

static int CUDAAPI on_display(void *user, CUVIDPARSERDISPINFO *info)
{
    glcv_nvdec *s = user;
    if (!info)
        return 1;
    if (s->count == QUEUE) { /* cannot happen with a picture mapped after every access unit */
        if (s->error == GLCV_OK)
            s->error = GLCV_ERROR_CORRUPT_DATA;
        return 0;
    }
    shown *q = &s->queue[(s->head + s->count) % QUEUE];
    q->index = info->picture_index + s->base;
    q->progressive = info->progressive_frame;
    q->pts = (int64_t)info->timestamp;
    s->count++;
    return 1;
}

static glcv_status make_parser(glcv_nvdec *s)
{
    CUVIDPARSERPARAMS pp;
    memset(&pp, 0, sizeof pp);
    pp.CodecType = s->codec;
    pp.ulMaxNumDecodeSurfaces = 1; /* the sequence callback says how many */
    pp.ulMaxDisplayDelay = 0;      /* cameras: each picture as soon as it is decoded */
    pp.pUserData = s;
    pp.pfnSequenceCallback = on_sequence;
    pp.pfnDecodePicture = on_decode;
    pp.pfnDisplayPicture = on_display;
    CUresult r = cv->cuvidCreateVideoParser(&s->parser, &pp);
    if (r != CUDA_SUCCESS) {
        s->parser = NULL;
        return glcv_fail(&s->logger, GLCV_ERROR_CUDA, "media: NVDEC's parser cannot be made (CUDA error %d)", (int)r);
    }
    return GLCV_OK;
}

glcv_status glcv_nvdec_create(void *cuda_context, glcv_nvdec_codec codec, const glcv_logger *logger,
                              glcv_nvdec **out)
{
    *out = NULL;
    glcv_logger lg = logger ? *logger : (glcv_logger){0};
    if (!glcv_nvdec_available() || !cuda_context)
        return glcv_fail(&lg, GLCV_ERROR_UNSUPPORTED, "media: no NVIDIA driver libraries for NVDEC");
    glcv_nvdec *s = calloc(1, sizeof *s);
    if (!s)
        return glcv_fail(&lg, GLCV_ERROR_OUT_OF_MEMORY, "media: out of memory");
    s->ctx = (CUcontext)cuda_context;
    s->codec = codec == GLCV_NVDEC_HEVC ? cudaVideoCodec_HEVC : cudaVideoCodec_H264;
    s->logger = lg;
    CUcontext dummy;
    if (cu->cuCtxPushCurrent(s->ctx) != CUDA_SUCCESS) {
        free(s);
        return glcv_fail(&lg, GLCV_ERROR_CUDA, "media: NVDEC's CUDA context cannot be used");
    }
    CUresult r = cu->cuStreamCreate(&s->stream, CU_STREAM_NON_BLOCKING);
    cu->cuCtxPopCurrent(&dummy);
    if (r != CUDA_SUCCESS) {
        free(s);
        return glcv_fail(&lg, GLCV_ERROR_CUDA, "media: NVDEC's CUDA stream cannot be made (CUDA error %d)", (int)r);
    }
    glcv_status st = make_parser(s);
    if (st != GLCV_OK) {
        glcv_nvdec_destroy(&s);
        return st;
    }
    *out = s;
    return GLCV_OK;
}

glcv_status glcv_nvdec_send(glcv_nvdec *s, const uint8_t *data, size_t size, int64_t pts)
{
    CUVIDSOURCEDATAPACKET pk;
    memset(&pk, 0, sizeof pk);
    if (size > 0) {
        pk.payload = data;
        pk.payload_size = (unsigned long)size;
        pk.flags = CUVID_PKT_ENDOFPICTURE | CUVID_PKT_TIMESTAMP;
        pk.timestamp = (CUvideotimestamp)pts;
    } else {
        pk.flags = CUVID_PKT_ENDOFSTREAM;
    }
    s->error = GLCV_OK;
    CUcontext dummy;
    if (cu->cuCtxPushCurrent(s->ctx) != CUDA_SUCCESS)
        return glcv_fail(&s->logger, GLCV_ERROR_CUDA, "media: NVDEC's CUDA context cannot be used");
    CUresult r = cv->cuvidParseVideoData(s->parser, &pk);
    cu->cuCtxPopCurrent(&dummy);
    if (s->error != GLCV_OK)
        return s->error;
    if (r != CUDA_SUCCESS)
        return glcv_fail(&s->logger, GLCV_ERROR_CORRUPT_DATA, "media: NVDEC's parser refused the data (CUDA error %d)",
                         (int)r);
    return GLCV_OK;
}

int glcv_nvdec_receive(glcv_nvdec *s, glcv_nvdec_frame *frame)
{
    memset(frame, 0, sizeof *frame);
    if (s->count == 0 || !s->dec)
        return 0;
    shown q = s->queue[s->head];
    s->head = (s->head + 1) % QUEUE;
    s->count--;
    glcv_nvdec_decoder *d = s->dec;
    CUVIDPROCPARAMS pp;
    memset(&pp, 0, sizeof pp);
    pp.progressive_frame = q.progressive;
    pp.output_stream = s->stream;
    CUdeviceptr ptr = 0;
    unsigned int pitch = 0;
    CUcontext dummy;
    if (cu->cuCtxPushCurrent(s->ctx) != CUDA_SUCCESS)
        return -1;
    pthread_mutex_lock(&d->lock);
    CUresult r = cv->cuvidMapVideoFrame(d->handle, q.index, &ptr, &pitch, &pp);
    pthread_mutex_unlock(&d->lock);
    if (r == CUDA_SUCCESS && cu->cuStreamSynchronize(s->stream) != CUDA_SUCCESS) {
        pthread_mutex_lock(&d->lock);
        cv->cuvidUnmapVideoFrame(d->handle, ptr);
        pthread_mutex_unlock(&d->lock);
        r = CUDA_ERROR_UNKNOWN;
    }
    cu->cuCtxPopCurrent(&dummy);
    if (r != CUDA_SUCCESS) {
        glcv_logf(&s->logger, GLCV_LOG_WARN, "media: NVDEC cannot map a picture (CUDA error %d)", (int)r);
        return -1;
    }
    pthread_mutex_lock(&pool_lock);
    d->refs++;
    pthread_mutex_unlock(&pool_lock);
    const CUVIDEOFORMAT *f = &s->format;
    int height = f->display_area.bottom - f->display_area.top;
    frame->decoder = d;
    frame->luma = ptr;
    frame->chroma = ptr + (CUdeviceptr)pitch * (CUdeviceptr)((height + 1) & ~1);
    frame->pitch = pitch;
    frame->width = f->display_area.right - f->display_area.left;
    frame->height = height;
    frame->pts = q.pts;
    frame->matrix_coefficients = f->video_signal_description.matrix_coefficients;
    frame->full_range = f->video_signal_description.video_full_range_flag;
    return 1;
}

glcv_status glcv_nvdec_restart(glcv_nvdec *s)
{
    if (s->parser)
        cv->cuvidDestroyVideoParser(s->parser);
    s->parser = NULL;
    s->head = s->count = 0;
    return make_parser(s);
}

void glcv_nvdec_unmap(glcv_nvdec_frame *frame)
{
    glcv_nvdec_decoder *d = frame->decoder;
    if (!d)
        return;
    CUcontext dummy;
    if (cu->cuCtxPushCurrent(d->ctx) == CUDA_SUCCESS) {
        pthread_mutex_lock(&d->lock);
        cv->cuvidUnmapVideoFrame(d->handle, (CUdeviceptr)frame->luma);
        pthread_mutex_unlock(&d->lock);
        cu->cuCtxPopCurrent(&dummy);
    }
    memset(frame, 0, sizeof *frame);
    decoder_unref(d);
}

void glcv_nvdec_destroy(glcv_nvdec **ps)
{
    glcv_nvdec *s = ps ? *ps : NULL;
    if (!s)
        return;
    if (s->parser)
        cv->cuvidDestroyVideoParser(s->parser);
    detach_decoder(s);
    CUcontext dummy;
    if (s->stream && cu->cuCtxPushCurrent(s->ctx) == CUDA_SUCCESS) {
        cu->cuStreamDestroy(s->stream);
        cu->cuCtxPopCurrent(&dummy);
    }
    free(s);
    *ps = NULL;
}
