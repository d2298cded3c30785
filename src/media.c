/* Media input: cameras, video files, image folders and sequences and lavfi graphs through FFmpeg,
 * and the synthetic scene, delivered by a capture thread through a small ring of frame buffers.
 *
 * Why one file of about 1,900 lines: it is the only file of the library that includes FFmpeg, so
 * that FFmpeg's types and headers stay out of every other source and of the public API. That
 * includes NVDEC: a set's NVDEC sources are demuxed and filtered to Annex-B here and decoded by
 * src/media_nvdec.c (NVIDIA's parser, decoders shared by streams); a glcv_media on its own reaches
 * NVDEC through FFmpeg's CUDA frames. */
#include "core_internal.h"
#include "image_internal.h"
#include "media_internal.h"

#include <glcv/media.h>
#include <glcv/synth.h>

#include <libavcodec/avcodec.h>
#include <libavcodec/bsf.h>
#include <libavdevice/avdevice.h>
#include <libavformat/avformat.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/hwcontext.h>
#ifdef GLCV_HAVE_FFNVCODEC
/* CUcontext for AVCUDADeviceContext without the CUDA toolkit's cuda.h, and the driver's CUDA
 * functions loaded at run time (for the streams of NVDEC's maps); the loader prints nothing. */
#define FFNV_LOG_FUNC(logctx, msg, ...) ((void)(logctx))
#define FFNV_DEBUG_LOG_FUNC(logctx, msg, ...) ((void)(logctx))
#include <ffnvcodec/dynlink_loader.h>
#include <libavutil/hwcontext_cuda.h>

#include "media_nvdec.h"
#endif
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum {
    DEFAULT_RING = 4,
    MAX_RING = 16,
    MAX_SIZE = 16384,
    MAX_CAMERAS = 64,
    /* Consecutive packets or images that fail to decode before the stream counts as broken. */
    MAX_CONSECUTIVE_ERRORS = 64,
    BUFFER_ALIGN = 4096,
    BUFFER_PADDING = 64,
    /* Sleep between polls of a camera opened non-blocking (milliseconds). */
    CAMERA_POLL_MS = 2,
    MAX_DECODER_THREADS = 64,
    MAX_CUDA_DEVICES = 16
};

static const double default_rate = 25.0;
#define DEFAULT_STALL_SECONDS 10.0
static const char default_camera[] = "/dev/video0";
static const char default_lavfi[] = "testsrc=size=320x240:rate=25";

typedef enum slot_state { SLOT_FREE = 0, SLOT_FILLING, SLOT_READY, SLOT_HELD } slot_state;

typedef struct slot {
    uint8_t *data;
    slot_state state;
    uint64_t seq; /* order of publication */
    glcv_media_frame_info info;
    /* pictures: what the slot holds (hw: an NVDEC frame kept in GPU memory, a reference into the
     * decoder's pool; else `data` holds 4:2:0 planes or RGB) */
    AVFrame *hw;
#ifdef GLCV_HAVE_FFNVCODEC
    glcv_nvdec_frame nv; /* or a picture mapped by glcv's own NVDEC path */
#endif
    glcv_media_picture picture;
} slot;

struct glcv_media {
    glcv_media_params p; /* resolved; p.location points at `location` */
    glcv_media_options opt;
    char *location;
    char description[512];
    int bpp;
    size_t stride;
    size_t frame_bytes;

    /* Source state, touched by the opening thread and then by the capture thread only. */
    AVFormatContext *fmt;
    AVCodecContext *dec;
    AVFrame *frame;
    AVFrame *sw_frame; /* an NVDEC frame copied to the host (RGB delivery) */
    AVPacket *pkt;
    AVBufferRef *hw_device; /* NVDEC: the CUDA device's FFmpeg context (a reference) */
    void *nvdec_stream;     /* NVDEC: this object's CUDA stream for the decoder's maps (or NULL) */
    int nvdec;              /* the open decoder uses NVDEC */
    int nvdec_auto;         /* a set's source: NVDEC where it takes the stream, else the CPU */
    int nvdec_counted;      /* holds one of its device's automatic NVDEC sessions (nvdec_auto_limit) */
#ifdef GLCV_HAVE_FFNVCODEC
    /* A set's NVDEC source: NVIDIA's parser and decoders shared by streams (src/media_nvdec.c), fed
     * Annex-B access units; `dec` is then a CPU decoder, used only when NVDEC has no decoder left. */
    glcv_nvdec *nv;
    AVBSFContext *bsf;
    AVPacket *nv_pkt;
    int nv_first;              /* the next access unit is the first since the input opened */
    glcv_nvdec_frame nv_frame; /* the picture decode_next produced */
#endif
    struct SwsContext *sws;
    int stream;
    int draining;
    AVRational time_base;
    int64_t first_pts;    /* AV_NOPTS_VALUE until the input's first frame */
    double pts_offset;    /* seconds added to the timestamps after each loop */
    double last_pts;      /* timestamp of the last frame produced (offset included) */
    int frames_this_pass; /* frames produced since the input was (re)opened */
    int64_t errors_this_pass_start; /* stats.decode_errors when it was (re)opened */
    int consecutive_errors;
    glcv_file_list files; /* FRAMES_DIR: sorted paths */
    int file_index;
    glcv_synth *synth;
    int synth_frames;
    int64_t next_index;
    double clock_start; /* LIVE pacing: monotonic time of pts 0 */
    int clock_set;      /* clock_start is set (at the first frame) */
    int quiet_ffmpeg;   /* probing cameras: FFmpeg's errors are expected, log them as DEBUG */
    /* Stall detection (p.stall_timeout): when the current wait for the input's data began (0 when
     * not waiting), whether a poll of a non-blocking camera is under way, and whether the wait
     * was cut for lasting too long. Touched by the thread doing the input's I/O only. */
    double wait_started;
    int polling;
    int stalled;
    glcv_log_level fail_level; /* level of open_input's failure messages (ERROR; lower when expected) */

    /* FFmpeg's messages about this object, assembled into lines (decoder threads log too). */
    pthread_mutex_t log_lock;
    char log_line[1024];
    int log_prefix;
    glcv_media *next_live; /* registry of open objects, for messages from decoder threads */

    /* Ring, shared by the capture thread and the reader under `lock`. */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int sync_ready;
    slot slots[MAX_RING];
    int slot_count;
    int held; /* slot held by the reader, -1 when none */
    uint64_t seq;
    int finished;       /* the capture thread has stopped producing */
    glcv_status error;  /* why it stopped, GLCV_OK for the end of the stream */
    glcv_status source_error; /* the capture thread's own copy while it runs */
    glcv_media_stats stats;
    atomic_int stop;
    pthread_t thread;
    int thread_started;
};

/* ---- FFmpeg set-up and logging ----------------------------------------------------------- */

/* The media object whose capture thread (or open call) is running on this thread. */
static _Thread_local glcv_media *tls_media;

/* Open objects: FFmpeg's decoder threads log with their codec context, whose `opaque` names the
 * object; it is looked up here before it is trusted. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static glcv_media *live_list;

static void live_add(glcv_media *m)
{
    pthread_mutex_lock(&live_lock);
    m->next_live = live_list;
    live_list = m;
    pthread_mutex_unlock(&live_lock);
}

static void live_remove(glcv_media *m)
{
    pthread_mutex_lock(&live_lock);
    for (glcv_media **p = &live_list; *p; p = &(*p)->next_live) {
        if (*p == m) {
            *p = m->next_live;
            break;
        }
    }
    pthread_mutex_unlock(&live_lock);
}

/* The open object a message is about, or NULL when it is not one of glcv's. */
static glcv_media *media_of_message(void *avcl)
{
    if (tls_media)
        return tls_media;
    if (!avcl)
        return NULL;
    const AVClass *cls = *(const AVClass *const *)avcl;
    if (!cls || !cls->class_name || strcmp(cls->class_name, "AVCodecContext") != 0)
        return NULL;
    void *opaque = ((const AVCodecContext *)avcl)->opaque;
    glcv_media *found = NULL;
    pthread_mutex_lock(&live_lock);
    for (glcv_media *m = live_list; m && opaque; m = m->next_live)
        if (m == opaque)
            found = m;
    pthread_mutex_unlock(&live_lock);
    return found;
}

static void log_bridge(void *avcl, int level, const char *fmt, va_list vl)
{
    glcv_media *m = media_of_message(avcl);
    if (!m) {
        av_log_default_callback(avcl, level, fmt, vl);
        return;
    }
    if (level > AV_LOG_INFO || !m->p.logger.fn)
        return;
    glcv_log_level gl = (level <= AV_LOG_WARNING && !m->quiet_ffmpeg) ? GLCV_LOG_WARN : GLCV_LOG_DEBUG;
    char part[1024];
    pthread_mutex_lock(&m->log_lock);
    av_log_format_line2(avcl, level, fmt, vl, part, (int)sizeof part, &m->log_prefix);
    /* FFmpeg may write a line in pieces, or several lines at once: emit whole lines. */
    size_t used = strlen(m->log_line);
    snprintf(m->log_line + used, sizeof m->log_line - used, "%s", part);
    char *line = m->log_line;
    char *nl;
    while ((nl = strchr(line, '\n')) != NULL) {
        *nl = '\0';
        size_t n = strlen(line);
        while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' '))
            line[--n] = '\0';
        if (n > 0)
            glcv_logf(&m->p.logger, gl, "ffmpeg: %s", line);
        line = nl + 1;
    }
    if (strlen(m->log_line) >= sizeof m->log_line - 1) { /* an overlong line: emit what there is */
        glcv_logf(&m->p.logger, gl, "ffmpeg: %s", line);
        line += strlen(line);
    }
    memmove(m->log_line, line, strlen(line) + 1);
    pthread_mutex_unlock(&m->log_lock);
}

static pthread_once_t ffmpeg_once = PTHREAD_ONCE_INIT;

static void ffmpeg_init(void)
{
    avdevice_register_all();
    av_log_set_callback(log_bridge);
}

static const char *av_error_text(int err, char *buf, size_t size)
{
    if (av_strerror(err, buf, size) < 0)
        snprintf(buf, size, "error %d", err);
    return buf;
}

/* The status of an FFmpeg error while opening or reading. */
static glcv_status status_of(int err)
{
    if (err == AVERROR(ENOMEM))
        return GLCV_ERROR_OUT_OF_MEMORY;
    if (err == AVERROR_INVALIDDATA || err == AVERROR_DEMUXER_NOT_FOUND || err == AVERROR_STREAM_NOT_FOUND ||
        err == AVERROR(EINVAL))
        return GLCV_ERROR_CORRUPT_DATA;
    if (err == AVERROR_DECODER_NOT_FOUND || err == AVERROR_PATCHWELCOME)
        return GLCV_ERROR_UNSUPPORTED;
    return GLCV_ERROR_IO;
}

static double monotonic_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- names ------------------------------------------------------------------------------- */

const char *glcv_media_source_string(glcv_media_source source)
{
    switch (source) {
    case GLCV_MEDIA_SOURCE_DEFAULT: return "default";
    case GLCV_MEDIA_CAMERA: return "camera";
    case GLCV_MEDIA_VIDEO: return "video";
    case GLCV_MEDIA_FRAMES_DIR: return "frames";
    case GLCV_MEDIA_IMAGE_SEQUENCE: return "sequence";
    case GLCV_MEDIA_LAVFI: return "lavfi";
    case GLCV_MEDIA_SYNTHETIC: return "synthetic";
    }
    return "?";
}

static const char *const decoder_names[] = {"default", "cpu", "nvdec"};

/* ---- NVDEC sources of the sets that take NVDEC where it has room ---------------------------------
 * Sources left to choose (a set's DEFAULT) take NVDEC while their device has fewer than the limit of
 * such sources open, and the CPU after (docs/PERFORMANCE.md says why the limit and its value).
 * Counted process-wide, per CUDA device. */
enum {
    NVDEC_COUNTED_DEVICES = 64,
    /* Frames of this many pixels or more are not limited: per frame the decoders' work grows with
     * the pixels and their sessions' overhead does not (130 sessions of 1080p H.264 decode 5,400
     * frames/s on an H100, near its engines' rate), and the CPU decodes such frames slowly
     * (7 ms a 1080p frame per core) */
    NVDEC_LIMITED_PIXELS = 1 << 20
};
static atomic_int nvdec_auto_open[NVDEC_COUNTED_DEVICES];
static atomic_int nvdec_auto_limit = GLCV_MEDIA_NVDEC_AUTO_SESSIONS;

int glcv_media_nvdec_auto_limit(int sessions)
{
    return sessions < 0 ? atomic_load(&nvdec_auto_limit) : atomic_exchange(&nvdec_auto_limit, sessions);
}

/* One more automatic NVDEC session on `device`, if there is room: 1 (counted), else 0. */
static int nvdec_auto_reserve(int device)
{
    if (device < 0 || device >= NVDEC_COUNTED_DEVICES)
        return 1;
    int limit = atomic_load(&nvdec_auto_limit), n = atomic_load(&nvdec_auto_open[device]);
    while (limit == 0 || n < limit)
        if (atomic_compare_exchange_weak(&nvdec_auto_open[device], &n, n + 1))
            return 1;
    return 0;
}

static void nvdec_auto_release(glcv_media *m)
{
    if (m->nvdec_counted && m->p.cuda_device >= 0 && m->p.cuda_device < NVDEC_COUNTED_DEVICES)
        atomic_fetch_sub(&nvdec_auto_open[m->p.cuda_device], 1);
    m->nvdec_counted = 0;
}

const char *glcv_media_decoder_string(glcv_media_decoder decoder)
{
    return glcv_enum_name(decoder_names, (int)(sizeof decoder_names / sizeof decoder_names[0]), (int)decoder);
}

/* ---- parameters -------------------------------------------------------------------------- */

static glcv_status resolve_params(const glcv_media_params *in, glcv_media_params *p)
{
    const glcv_logger *lg = &in->logger;
    *p = *in;
    if ((int)p->source < GLCV_MEDIA_SOURCE_DEFAULT || (int)p->source > GLCV_MEDIA_SYNTHETIC)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media: unknown source kind %d", (int)p->source);
    if ((p->width == 0) != (p->height == 0) || p->width < 0 || p->height < 0 || p->width > MAX_SIZE ||
        p->height > MAX_SIZE)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT,
                         "media: frame size %dx%d: give both width and height in 1..%d, or neither", p->width,
                         p->height, MAX_SIZE);
    if (!glcv_finite(p->frame_rate) || (p->frame_rate != 0.0 && (p->frame_rate < 0.1 || p->frame_rate > 1000.0)))
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media: frame rate %g is not 0 or 0.1..1000",
                         p->frame_rate);
    if ((int)p->camera_format < 0 || (int)p->camera_format > GLCV_MEDIA_CAMERA_MJPEG)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media: unknown camera format %d", (int)p->camera_format);
    GLCV_DEFAULT(p->format, GLCV_PIXEL_RGB8);
    if (p->format != GLCV_PIXEL_RGB8 && p->format != GLCV_PIXEL_RGBA8)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media: pixel format %d: RGB8 or RGBA8 only",
                         (int)p->format);
    if ((int)p->mode < 0 || (int)p->mode > GLCV_MEDIA_EVERY_FRAME)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media: unknown mode %d", (int)p->mode);
    if (!glcv_finite(p->stall_timeout))
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media: stall_timeout %g is not finite", p->stall_timeout);
    GLCV_DEFAULT(p->stall_timeout, DEFAULT_STALL_SECONDS);
    if ((int)p->decoder < GLCV_MEDIA_DECODER_DEFAULT || (int)p->decoder > GLCV_MEDIA_DECODER_NVDEC)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media: unknown decoder %d", (int)p->decoder);
    GLCV_DEFAULT(p->decoder, GLCV_MEDIA_DECODER_CPU);
    if (p->cuda_device < 0 || p->cuda_device >= MAX_CUDA_DEVICES)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media: cuda_device %d: 0..%d", p->cuda_device,
                         MAX_CUDA_DEVICES - 1);
    if ((int)p->rtsp_transport < GLCV_MEDIA_RTSP_DEFAULT || (int)p->rtsp_transport > GLCV_MEDIA_RTSP_TCP)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media: unknown RTSP transport %d", (int)p->rtsp_transport);
    if (p->decoder_threads < 0 || p->decoder_threads > MAX_DECODER_THREADS)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media: decoder_threads %d: 0..%d", p->decoder_threads,
                         MAX_DECODER_THREADS);
    GLCV_DEFAULT(p->ring_frames, DEFAULT_RING);
    if (p->ring_frames < 2 || p->ring_frames > MAX_RING)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media: ring of %d frames: 2..%d", p->ring_frames,
                         MAX_RING);
    if ((p->source == GLCV_MEDIA_VIDEO || p->source == GLCV_MEDIA_FRAMES_DIR ||
         p->source == GLCV_MEDIA_IMAGE_SEQUENCE) &&
        (!p->location || !*p->location))
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media: a %s source needs a location",
                         glcv_media_source_string(p->source));
    /* NULL is a camera's or a graph's default; an empty text is a mistake, not the default */
    if (p->location && !*p->location)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media: an empty %s location (NULL for the default)",
                         glcv_media_source_string(p->source));
    return GLCV_OK;
}

/* ---- FFmpeg inputs ----------------------------------------------------------------------- */

static int stalled_now(glcv_media *m)
{
    if (m->p.stall_timeout > 0 && m->wait_started > 0 && monotonic_now() - m->wait_started > m->p.stall_timeout)
        m->stalled = 1;
    return m->stalled;
}

/* FFmpeg calls it while it waits for data: nonzero ends the wait (AVERROR_EXIT). */
static int interrupt_cb(void *opaque)
{
    glcv_media *m = opaque;
    return atomic_load(&m->stop) || stalled_now(m);
}

static void nvdec_auto_release(glcv_media *m);

static void close_input(glcv_media *m)
{
    nvdec_auto_release(m);
#ifdef GLCV_HAVE_FFNVCODEC
    av_bsf_free(&m->bsf);
#endif
    avcodec_free_context(&m->dec);
    avformat_close_input(&m->fmt);
    m->stream = -1;
    m->draining = 0;
}

static const char *input_format_name(glcv_media_source kind)
{
    switch (kind) {
    case GLCV_MEDIA_CAMERA: return "video4linux2";
    case GLCV_MEDIA_LAVFI: return "lavfi";
    case GLCV_MEDIA_IMAGE_SEQUENCE: return "image2";
    default: return NULL;
    }
}

/* Logs a failure to open an input at m->fail_level and returns `status`. */
static glcv_status input_fail(glcv_media *m, glcv_status status, const char *fmt, ...) GLCV_PRINTF(3, 4);

static glcv_status input_fail(glcv_media *m, glcv_status status, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    glcv_logf(&m->p.logger, m->fail_level, "%s", text);
    return status;
}

/* ---- NVDEC through FFmpeg's CUDA hardware acceleration ----------------------------------------
 * One FFmpeg CUDA device context per GPU, made on first use and kept for the process (what it holds
 * is the CUDA primary context, which the CUDA runtime of the rest of the library shares: frames in
 * its memory are read by glcv's kernels in place). FFmpeg loads libcuda and libnvcuvid at run time,
 * so a machine without the NVIDIA driver only fails to make it. */

static pthread_mutex_t hw_lock = PTHREAD_MUTEX_INITIALIZER;
static AVBufferRef *hw_devices[MAX_CUDA_DEVICES];
static int hw_failed[MAX_CUDA_DEVICES];

/* FFmpeg's CUDA device over a context the caller made (the runtime's primary context), or NULL. */
static AVBufferRef *hw_device_over(void *cuda_context, const glcv_logger *lg)
{
#ifdef GLCV_HAVE_FFNVCODEC
    AVBufferRef *ref = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_CUDA);
    if (!ref)
        return NULL;
    AVCUDADeviceContext *cu = ((AVHWDeviceContext *)ref->data)->hwctx;
    cu->cuda_ctx = (CUcontext)cuda_context;
    char err[128];
    int r = av_hwdevice_ctx_init(ref);
    if (r < 0) {
        glcv_logf(lg, GLCV_LOG_DEBUG, "media: FFmpeg cannot use the CUDA context for NVDEC: %s",
                  av_error_text(r, err, sizeof err));
        av_buffer_unref(&ref);
    }
    return ref;
#else
    (void)cuda_context;
    glcv_logf(lg, GLCV_LOG_DEBUG, "media: built without nv-codec-headers: NVDEC only in FFmpeg's own context");
    return NULL;
#endif
}

/* A new reference to device `index`'s context, or NULL (the reason logged at DEBUG once). With
 * `cuda_context` (the runtime's primary context of that device) FFmpeg works in it; otherwise FFmpeg
 * takes the primary context itself. Either way the frames live in the primary context. */
static AVBufferRef *hw_device_ref(int index, void *cuda_context, const glcv_logger *lg)
{
    AVBufferRef *ref = NULL;
    pthread_mutex_lock(&hw_lock);
    if (!hw_devices[index] && cuda_context)
        hw_devices[index] = hw_device_over(cuda_context, lg);
    if (!hw_devices[index] && !hw_failed[index]) {
        char name[16], err[128];
        snprintf(name, sizeof name, "%d", index);
        AVDictionary *opts = NULL;
        av_dict_set(&opts, "primary_ctx", "1", 0);
        int r = av_hwdevice_ctx_create(&hw_devices[index], AV_HWDEVICE_TYPE_CUDA, name, opts, 0);
        av_dict_free(&opts);
        if (r < 0) {
            hw_failed[index] = 1;
            glcv_logf(lg, GLCV_LOG_DEBUG, "media: no CUDA device %d for NVDEC: %s", index,
                      av_error_text(r, err, sizeof err));
        }
    }
    if (hw_devices[index])
        ref = av_buffer_ref(hw_devices[index]);
    pthread_mutex_unlock(&hw_lock);
    return ref;
}

#ifdef GLCV_HAVE_FFNVCODEC
static CudaFunctions *cuda_fns; /* loaded once, under hw_lock; kept for the process */
static int cuda_fns_failed;

static CudaFunctions *cuda_functions(void)
{
    pthread_mutex_lock(&hw_lock);
    if (!cuda_fns && !cuda_fns_failed && cuda_load_functions(&cuda_fns, NULL) < 0)
        cuda_fns_failed = 1;
    pthread_mutex_unlock(&hw_lock);
    return cuda_fns;
}
#endif

/* The FFmpeg CUDA device of one object's decoder: the device's context with a stream of its own for
 * NVDEC's maps (on the shared default stream, hundreds of decoders serialise on each other), or the
 * device's context as it is. */
static AVBufferRef *object_device(glcv_media *m)
{
#ifdef GLCV_HAVE_FFNVCODEC
    CudaFunctions *cu = cuda_functions();
    const AVCUDADeviceContext *shared = ((AVHWDeviceContext *)m->hw_device->data)->hwctx;
    CUcontext dummy;
    if (cu && !m->nvdec_stream && cu->cuCtxPushCurrent(shared->cuda_ctx) == CUDA_SUCCESS) {
        CUstream stream = NULL;
        if (cu->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS)
            m->nvdec_stream = stream;
        cu->cuCtxPopCurrent(&dummy);
    }
    if (m->nvdec_stream) {
        AVBufferRef *ref = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_CUDA);
        if (ref) {
            AVCUDADeviceContext *own = ((AVHWDeviceContext *)ref->data)->hwctx;
            own->cuda_ctx = shared->cuda_ctx;
            own->stream = (CUstream)m->nvdec_stream;
            if (av_hwdevice_ctx_init(ref) == 0)
                return ref;
            av_buffer_unref(&ref);
        }
    }
#endif
    return av_buffer_ref(m->hw_device);
}

/* Waits for the NVDEC work queued on the object's stream (the map of the frame just received), so
 * that other streams may read the frame. */
static void sync_object_stream(glcv_media *m)
{
#ifdef GLCV_HAVE_FFNVCODEC
    CudaFunctions *cu = m->nvdec_stream ? cuda_functions() : NULL;
    if (cu)
        cu->cuStreamSynchronize((CUstream)m->nvdec_stream);
#else
    (void)m;
#endif
}

static void destroy_object_stream(glcv_media *m)
{
#ifdef GLCV_HAVE_FFNVCODEC
    CudaFunctions *cu = m->nvdec_stream ? cuda_functions() : NULL;
    if (cu) {
        const AVCUDADeviceContext *shared = ((AVHWDeviceContext *)m->hw_device->data)->hwctx;
        CUcontext dummy;
        if (cu->cuCtxPushCurrent(shared->cuda_ctx) == CUDA_SUCCESS) {
            cu->cuStreamDestroy((CUstream)m->nvdec_stream);
            cu->cuCtxPopCurrent(&dummy);
        }
    }
#endif
    m->nvdec_stream = NULL;
}

/* The decoder's format choice: CUDA frames when offered. When the hardware cannot take the stream
 * (FFmpeg then offers the software formats only) the frames are decoded on the CPU. */
static enum AVPixelFormat pick_cuda_format(AVCodecContext *ctx, const enum AVPixelFormat *formats)
{
    (void)ctx;
    for (const enum AVPixelFormat *f = formats; *f != AV_PIX_FMT_NONE; f++)
        if (*f == AV_PIX_FMT_CUDA)
            return *f;
    return formats[0];
}

/* Whether NVDEC decodes this stream into 8-bit 4:2:0 frames: H.264 or HEVC of 8 bits, 4:2:0. */
static int nvdec_takes(const AVCodecParameters *par)
{
    if (par->codec_id != AV_CODEC_ID_H264 && par->codec_id != AV_CODEC_ID_HEVC)
        return 0;
    return par->format == AV_PIX_FMT_YUV420P || par->format == AV_PIX_FMT_YUVJ420P;
}

#ifdef GLCV_HAVE_FFNVCODEC
/* glcv's own NVDEC path for a set's source (src/media_nvdec.c): the demuxer's packets converted to
 * Annex-B access units for NVIDIA's parser; the stream object outlives reopenings of a looping file. */
static int nv_open(glcv_media *m, const AVStream *stream)
{
    const AVCodecParameters *par = stream->codecpar;
    const AVBitStreamFilter *f =
        av_bsf_get_by_name(par->codec_id == AV_CODEC_ID_HEVC ? "hevc_mp4toannexb" : "h264_mp4toannexb");
    av_bsf_free(&m->bsf);
    if (!f || av_bsf_alloc(f, &m->bsf) < 0 || avcodec_parameters_copy(m->bsf->par_in, par) < 0)
        return -1;
    m->bsf->time_base_in = stream->time_base;
    if (av_bsf_init(m->bsf) < 0 || (!m->nv_pkt && !(m->nv_pkt = av_packet_alloc())))
        return -1;
    glcv_status st;
    if (m->nv) {
        st = glcv_nvdec_restart(m->nv);
    } else {
        const AVCUDADeviceContext *hw = ((AVHWDeviceContext *)m->hw_device->data)->hwctx;
        st = glcv_nvdec_create(hw->cuda_ctx, par->codec_id == AV_CODEC_ID_HEVC ? GLCV_NVDEC_HEVC : GLCV_NVDEC_H264,
                               &m->p.logger, &m->nv);
    }
    m->nv_first = 1;
    return st == GLCV_OK ? 0 : -1;
}

/* The source goes on decoding on the CPU (its `dec`) instead of NVDEC, for the reason `why`. */
static void nv_fallback(glcv_media *m, glcv_log_level level, const char *why)
{
    glcv_logf(&m->p.logger, level, "media: '%s' is decoded on the CPU: %s", m->location, why);
    glcv_nvdec_unmap(&m->nv_frame);
    glcv_nvdec_destroy(&m->nv);
    av_bsf_free(&m->bsf);
    m->nvdec = 0;
    nvdec_auto_release(m);
}

/* Sends the packet in m->pkt through the Annex-B filter to NVIDIA's parser: 0, or an AVERROR for a
 * packet refused. When NVDEC can make no decoder for the stream, it falls back to the CPU decoder,
 * which gets this packet. */
static int nv_send(glcv_media *m)
{
    int r = av_packet_ref(m->nv_pkt, m->pkt);
    if (r < 0)
        return r;
    r = av_bsf_send_packet(m->bsf, m->nv_pkt);
    if (r < 0) {
        av_packet_unref(m->nv_pkt);
        return r;
    }
    glcv_status st = GLCV_OK;
    while (st == GLCV_OK && (r = av_bsf_receive_packet(m->bsf, m->nv_pkt)) == 0) {
        const AVCodecParameters *par = m->bsf->par_out;
        uint8_t *data = m->nv_pkt->data, *joined = NULL;
        size_t size = (size_t)m->nv_pkt->size;
        /* Annex-B parameter sets that only the container carries (an RTSP session's SDP) go in
         * front of the first access unit. */
        if (m->nv_first && par->extradata_size > 4 && par->extradata[0] == 0 && par->extradata[1] == 0 &&
            (par->extradata[2] == 1 || (par->extradata[2] == 0 && par->extradata[3] == 1)) &&
            (joined = malloc((size_t)par->extradata_size + size)) != NULL) {
            memcpy(joined, par->extradata, (size_t)par->extradata_size);
            memcpy(joined + par->extradata_size, data, size);
            data = joined;
            size += (size_t)par->extradata_size;
        }
        m->nv_first = 0;
        st = glcv_nvdec_send(m->nv, data, size, m->nv_pkt->pts);
        free(joined);
        av_packet_unref(m->nv_pkt);
    }
    if (st == GLCV_ERROR_UNSUPPORTED) {
        nv_fallback(m, GLCV_LOG_INFO, "NVDEC has no decoder for it"); /* the warning said why */
        return avcodec_send_packet(m->dec, m->pkt);
    }
    if (st != GLCV_OK)
        return AVERROR_INVALIDDATA;
    return r == AVERROR(EAGAIN) || r == AVERROR_EOF ? 0 : r;
}
#endif

/* The next decoded frame, as avcodec_receive_frame: 0 (in m->frame, or m->nv_frame for glcv's own
 * NVDEC path), AVERROR(EAGAIN), AVERROR_EOF, or an error. */
static int receive_frame(glcv_media *m)
{
#ifdef GLCV_HAVE_FFNVCODEC
    if (m->nv) {
        int got = glcv_nvdec_receive(m->nv, &m->nv_frame);
        return got > 0 ? 0 : got < 0 ? AVERROR(EIO) : m->draining ? AVERROR_EOF : AVERROR(EAGAIN);
    }
#endif
    return avcodec_receive_frame(m->dec, m->frame);
}

/* m->pkt to the decoder (NULL: the end of the stream), as avcodec_send_packet. */
static int send_packet(glcv_media *m, int end)
{
#ifdef GLCV_HAVE_FFNVCODEC
    if (m->nv) {
        if (end)
            return glcv_nvdec_send(m->nv, NULL, 0, 0) == GLCV_OK ? 0 : AVERROR_INVALIDDATA;
        return nv_send(m);
    }
#endif
    return avcodec_send_packet(m->dec, end ? NULL : m->pkt);
}

/* Whether the frame decode_next produced is in GPU memory. */
static int decoded_on_gpu(const glcv_media *m)
{
#ifdef GLCV_HAVE_FFNVCODEC
    if (m->nv_frame.decoder)
        return 1;
#endif
    return m->frame->format == AV_PIX_FMT_CUDA;
}

/* Opens `url` as the given kind of source, finds its best video stream and opens a decoder. */
static glcv_status open_input(glcv_media *m, glcv_media_source kind, const char *url)
{
    char err[128];
    const AVInputFormat *ifmt = NULL;
    const char *ifmt_name = input_format_name(kind);
    if (ifmt_name) {
        ifmt = av_find_input_format(ifmt_name);
        if (!ifmt)
            return input_fail(m, GLCV_ERROR_UNSUPPORTED, "media: FFmpeg has no '%s' input", ifmt_name);
    }

    AVDictionary *opts = NULL;
    char value[64];
    if (kind == GLCV_MEDIA_CAMERA) {
        if (m->p.width > 0) {
            snprintf(value, sizeof value, "%dx%d", m->p.width, m->p.height);
            av_dict_set(&opts, "video_size", value, 0);
        }
        if (m->p.frame_rate > 0) {
            snprintf(value, sizeof value, "%g", m->p.frame_rate);
            av_dict_set(&opts, "framerate", value, 0);
        }
        if (m->p.camera_format == GLCV_MEDIA_CAMERA_YUYV)
            av_dict_set(&opts, "input_format", "yuyv422", 0);
        else if (m->p.camera_format == GLCV_MEDIA_CAMERA_MJPEG)
            av_dict_set(&opts, "input_format", "mjpeg", 0);
    } else if (kind == GLCV_MEDIA_IMAGE_SEQUENCE) {
        snprintf(value, sizeof value, "%g", m->p.frame_rate > 0 ? m->p.frame_rate : default_rate);
        av_dict_set(&opts, "framerate", value, 0);
    } else if (kind == GLCV_MEDIA_VIDEO && !strncmp(url, "rtsp", 4) && m->p.rtsp_transport != GLCV_MEDIA_RTSP_DEFAULT) {
        av_dict_set(&opts, "rtsp_transport", m->p.rtsp_transport == GLCV_MEDIA_RTSP_TCP ? "tcp" : "udp", 0);
    }

    m->fmt = avformat_alloc_context();
    if (!m->fmt) {
        av_dict_free(&opts);
        return input_fail(m, GLCV_ERROR_OUT_OF_MEMORY, "media: out of memory");
    }
    m->fmt->interrupt_callback.callback = interrupt_cb;
    m->fmt->interrupt_callback.opaque = m;
    if (kind == GLCV_MEDIA_CAMERA)
        m->fmt->flags |= AVFMT_FLAG_NONBLOCK; /* so that closing never waits for a stalled camera */
    m->stalled = 0;
    m->polling = 0;
    m->wait_started = monotonic_now();
    int r = avformat_open_input(&m->fmt, url, ifmt, &opts); /* frees m->fmt on failure */
    av_dict_free(&opts);
    if (r < 0 && m->stalled)
        return input_fail(m, GLCV_ERROR_IO, "media: cannot open %s '%s': no data for %g s (stall_timeout)",
                          glcv_media_source_string(kind), url, m->p.stall_timeout);
    if (r < 0) {
        glcv_status st = status_of(r);
        /* a graph FFmpeg cannot build (an unknown filter, a bad option) is the caller's argument */
        if (kind == GLCV_MEDIA_LAVFI && (st == GLCV_ERROR_IO || st == GLCV_ERROR_CORRUPT_DATA))
            st = GLCV_ERROR_INVALID_ARGUMENT;
        if (r == AVERROR(ENOENT) || r == AVERROR(EACCES) || r == AVERROR(ENODEV) || r == AVERROR(EIO))
            st = GLCV_ERROR_IO;
        return input_fail(m, st, "media: cannot open %s '%s': %s", glcv_media_source_string(kind), url,
                         av_error_text(r, err, sizeof err));
    }
    /* The decoders that probe the streams refuse frames above the image limit too. Their bound
     * is twice the limit: they count the padded, aligned picture (97x61 is allocated as 128x61);
     * the exact limit is checked on the stream's declared size below. */
    AVDictionary **probe_opts = NULL;
    size_t limit = glcv_image_max_pixels();
    int64_t decoder_max_pixels = limit > 0 && limit < (size_t)INT64_MAX / 2 ? (int64_t)limit * 2 : 0;
    if (m->fmt->nb_streams > 0 && m->fmt->nb_streams < 1024 && decoder_max_pixels > 0) {
        probe_opts = av_calloc(m->fmt->nb_streams, sizeof *probe_opts);
        snprintf(value, sizeof value, "%lld", (long long)decoder_max_pixels);
        for (unsigned i = 0; probe_opts && i < m->fmt->nb_streams; i++)
            av_dict_set(&probe_opts[i], "max_pixels", value, 0);
    }
    r = avformat_find_stream_info(m->fmt, probe_opts);
    for (unsigned i = 0; probe_opts && i < m->fmt->nb_streams; i++)
        av_dict_free(&probe_opts[i]);
    av_freep(&probe_opts);
    m->wait_started = 0;
    if (r < 0 && m->stalled) {
        close_input(m);
        return input_fail(m, GLCV_ERROR_IO, "media: cannot read stream information of '%s': no data for %g s "
                          "(stall_timeout)", url, m->p.stall_timeout);
    }
    if (r < 0 && r != AVERROR(EAGAIN)) {
        glcv_status st = status_of(r);
        close_input(m);
        return input_fail(m, st, "media: cannot read stream information of '%s': %s", url,
                         av_error_text(r, err, sizeof err));
    }
    const AVCodec *codec = NULL;
    r = av_find_best_stream(m->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    if (r < 0) {
        glcv_status st = r == AVERROR_DECODER_NOT_FOUND ? GLCV_ERROR_UNSUPPORTED
                         : kind == GLCV_MEDIA_LAVFI    ? GLCV_ERROR_INVALID_ARGUMENT /* the graph has no video */
                                                       : GLCV_ERROR_CORRUPT_DATA;
        close_input(m);
        return input_fail(m, st, "media: %s '%s' has no %svideo stream", glcv_media_source_string(kind), url,
                         r == AVERROR_DECODER_NOT_FOUND ? "decodable " : "");
    }
    m->stream = r;
    AVStream *stream = m->fmt->streams[r];
    m->time_base = stream->time_base;
    m->dec = avcodec_alloc_context3(codec);
    if (!m->dec) {
        close_input(m);
        return input_fail(m, GLCV_ERROR_OUT_OF_MEMORY, "media: out of memory");
    }
    int64_t pixels = (int64_t)stream->codecpar->width * stream->codecpar->height;
    if (limit > 0 && pixels > 0 && (uint64_t)pixels > limit) {
        int w = stream->codecpar->width, h = stream->codecpar->height;
        close_input(m);
        return input_fail(m, GLCV_ERROR_LIMIT,
                          "media: '%s' has %dx%d frames (%.1f Mpixels), above the limit of %.1f Mpixels (to raise "
                          "the limit: glcv_image_set_max_pixels, or --max-pixels on the command line)",
                          url, w, h, (double)pixels / 1e6, (double)limit / 1e6);
    }
    m->nvdec = 0;
    int nvdec_asked = m->p.decoder == GLCV_MEDIA_DECODER_NVDEC && m->p.source != GLCV_MEDIA_FRAMES_DIR;
    if (m->nvdec_auto && nvdec_takes(stream->codecpar) && m->p.source != GLCV_MEDIA_FRAMES_DIR) {
        if (!m->hw_device)
            m->hw_device = hw_device_ref(m->p.cuda_device, m->opt.cuda_context, &m->p.logger);
        int limited = (int64_t)stream->codecpar->width * stream->codecpar->height < NVDEC_LIMITED_PIXELS;
        m->nvdec = m->hw_device != NULL && (!limited || (m->nvdec_counted = nvdec_auto_reserve(m->p.cuda_device)));
    } else if (nvdec_asked) {
        if (!nvdec_takes(stream->codecpar)) {
            const char *pix = av_get_pix_fmt_name((enum AVPixelFormat)stream->codecpar->format);
            close_input(m);
            return input_fail(m, GLCV_ERROR_UNSUPPORTED,
                              "media: NVDEC decodes 8-bit 4:2:0 H.264 and HEVC; '%s' is %s %s (decode it on the CPU)",
                              url, codec->name, pix ? pix : "of an unknown pixel format");
        }
        if (!m->hw_device)
            m->hw_device = hw_device_ref(m->p.cuda_device, m->opt.cuda_context, &m->p.logger);
        if (!m->hw_device) {
            close_input(m);
            return input_fail(m, GLCV_ERROR_UNSUPPORTED,
                              "media: NVDEC for '%s': no CUDA device %d with the NVIDIA driver's decoder libraries",
                              url, m->p.cuda_device);
        }
        m->nvdec = 1;
    }
    /* a set's NVDEC sources: glcv's own path; `dec` decodes on the CPU */
    int own = 0;
#ifdef GLCV_HAVE_FFNVCODEC
    own = m->nvdec && m->opt.pictures && glcv_nvdec_available();
    if (!own && m->nv) { /* reopened without NVDEC: the mapped frames stay valid until unmapped */
        glcv_nvdec_unmap(&m->nv_frame);
        glcv_nvdec_destroy(&m->nv);
    }
#endif
    r = avcodec_parameters_to_context(m->dec, stream->codecpar);
    if (r >= 0 && m->nvdec && !own) {
        m->dec->hw_device_ctx = object_device(m);
        m->dec->get_format = pick_cuda_format;
        /* the frames a reader and the ring hold on to, beyond what the decoder needs */
        m->dec->extra_hw_frames = m->p.ring_frames + 2;
        if (!m->dec->hw_device_ctx)
            r = AVERROR(ENOMEM);
    }
    if (r >= 0) {
        m->dec->pkt_timebase = stream->time_base;
        m->dec->thread_count = m->nvdec && !own ? 1 : m->p.decoder_threads; /* 0: FFmpeg's choice */
        m->dec->opaque = m;       /* names this object in messages from decoder threads */
        /* the decoder refuses frames above the limit (padded, as above) when the size changes later */
        if (decoder_max_pixels > 0)
            m->dec->max_pixels = decoder_max_pixels;
        r = avcodec_open2(m->dec, codec, NULL);
    }
    if (r < 0) {
        close_input(m);
        return input_fail(m, status_of(r) == GLCV_ERROR_IO ? GLCV_ERROR_UNSUPPORTED : status_of(r),
                         "media: cannot open the %s decoder for '%s': %s", codec->name, url,
                         av_error_text(r, err, sizeof err));
    }
    if (m->dec->width < 1 || m->dec->height < 1) {
        close_input(m);
        return input_fail(m, GLCV_ERROR_CORRUPT_DATA, "media: '%s' does not say its frame size", url);
    }
#ifdef GLCV_HAVE_FFNVCODEC
    if (own && nv_open(m, stream) != 0)
        nv_fallback(m, GLCV_LOG_WARN, "NVDEC's parser cannot be set up");
#endif
    m->first_pts = AV_NOPTS_VALUE;
    m->frames_this_pass = 0;
    m->errors_this_pass_start = m->stats.decode_errors; /* only this thread writes it */
    m->draining = 0;
    return GLCV_OK;
}

static void count_decode_error(glcv_media *m);

/* Next decoded frame of the open input into m->frame: 1 a frame, 0 end of the input,
 * -1 stopped or failed (m->error set on failure). */
static int decode_next(glcv_media *m)
{
    const glcv_logger *lg = &m->p.logger;
    char err[128];
    for (;;) {
        if (atomic_load(&m->stop))
            return -1;
        int r = receive_frame(m);
        if (r == 0) {
            m->consecutive_errors = 0;
            return 1;
        }
        if (r == AVERROR_EOF)
            return 0;
        if (r != AVERROR(EAGAIN)) {
            count_decode_error(m);
            glcv_logf(lg, GLCV_LOG_WARN, "media: decoding error in '%s': %s", m->location,
                      av_error_text(r, err, sizeof err));
            if (++m->consecutive_errors > MAX_CONSECUTIVE_ERRORS) {
                m->source_error = GLCV_ERROR_CORRUPT_DATA;
                glcv_logf(lg, GLCV_LOG_ERROR, "media: '%s' stopped decoding", m->location);
                return -1;
            }
            continue;
        }
        if (m->draining)
            return 0;
        if (!m->polling)
            m->wait_started = monotonic_now();
        r = av_read_frame(m->fmt, m->pkt);
        m->polling = r == AVERROR(EAGAIN);
        if (m->polling && !stalled_now(m)) {
            struct timespec ts = {0, CAMERA_POLL_MS * 1000000L};
            nanosleep(&ts, NULL);
            continue;
        }
        m->wait_started = 0;
        if (r < 0 && m->stalled && !atomic_load(&m->stop)) {
            m->source_error = GLCV_ERROR_IO;
            glcv_logf(lg, GLCV_LOG_ERROR, "media: no data from %s '%s' for %g s (stall_timeout)",
                      glcv_media_source_string(m->p.source), m->location, m->p.stall_timeout);
            return -1;
        }
        /* The byte stream's own error outranks the demuxer's "end of file": a connection reset
         * or a device that went away mid-stream is a failure, not the end of the input. */
        int io_error = m->fmt->pb ? m->fmt->pb->error : 0;
        if (r < 0 && io_error < 0 && io_error != AVERROR_EOF && io_error != AVERROR_EXIT && !atomic_load(&m->stop))
            r = io_error;
        else if (r == AVERROR_EOF || (r < 0 && m->fmt->pb && avio_feof(m->fmt->pb))) {
            send_packet(m, 1);
            m->draining = 1;
            continue;
        }
        if (r < 0) {
            if (atomic_load(&m->stop))
                return -1;
            m->source_error = r == AVERROR(ENOMEM) ? GLCV_ERROR_OUT_OF_MEMORY : GLCV_ERROR_IO;
            glcv_logf(lg, GLCV_LOG_ERROR, "media: reading %s '%s' failed: %s", glcv_media_source_string(m->p.source),
                      m->location, av_error_text(r, err, sizeof err));
            return -1;
        }
        if (m->pkt->stream_index != m->stream) {
            av_packet_unref(m->pkt);
            continue;
        }
        r = send_packet(m, 0);
        av_packet_unref(m->pkt);
        if (r < 0 && r != AVERROR(EAGAIN)) {
            count_decode_error(m);
            glcv_logf(lg, GLCV_LOG_WARN, "media: bad packet in '%s' skipped: %s", m->location,
                      av_error_text(r, err, sizeof err));
            if (++m->consecutive_errors > MAX_CONSECUTIVE_ERRORS) {
                m->source_error = GLCV_ERROR_CORRUPT_DATA;
                glcv_logf(lg, GLCV_LOG_ERROR, "media: '%s' stopped decoding", m->location);
                return -1;
            }
        }
    }
}

static void count_decode_error(glcv_media *m)
{
    pthread_mutex_lock(&m->lock);
    m->stats.decode_errors++;
    pthread_mutex_unlock(&m->lock);
}

/* At the end of a video file: frames its container declares (nb_frames, where it says) that never
 * came out - a truncated or damaged file - are logged and counted as decode errors, so that such
 * an end is not taken for a normal one. */
static void count_missing_frames(glcv_media *m)
{
    int64_t declared = m->fmt && m->stream >= 0 ? m->fmt->streams[m->stream]->nb_frames : 0;
    int64_t missing = declared - (int64_t)m->frames_this_pass;
    if (declared <= 0 || missing <= 0)
        return;
    /* packets already counted as bad in this pass are among the missing frames */
    missing -= m->stats.decode_errors - m->errors_this_pass_start;
    if (missing <= 0)
        return;
    glcv_logf(&m->p.logger, GLCV_LOG_WARN,
              "media: '%s' ended after %d of the %lld frames its container declares (truncated or damaged): %lld "
              "more counted as decode errors",
              m->location, m->frames_this_pass, (long long)declared, (long long)missing);
    pthread_mutex_lock(&m->lock);
    m->stats.decode_errors += missing;
    pthread_mutex_unlock(&m->lock);
}

/* Seconds of m->frame from the input's first frame. */
static double frame_seconds(glcv_media *m)
{
    int64_t ts = m->frame->best_effort_timestamp;
    if (ts == AV_NOPTS_VALUE)
        ts = m->frame->pts;
#ifdef GLCV_HAVE_FFNVCODEC
    if (m->nv_frame.decoder)
        ts = m->nv_frame.pts;
#endif
    if (ts == AV_NOPTS_VALUE || m->time_base.den == 0) {
        double rate = m->p.frame_rate > 0 ? m->p.frame_rate : default_rate;
        return (double)m->frames_this_pass / rate;
    }
    if (m->first_pts == AV_NOPTS_VALUE)
        m->first_pts = ts;
    return (double)(ts - m->first_pts) * av_q2d(m->time_base);
}

/* ---- image folders ----------------------------------------------------------------------- */

/* The folder's image files: what FFmpeg's image decoders read, by name ending. */
static glcv_status list_folder(glcv_media *m)
{
    static const char *const extensions[] = {".png", ".jpg", ".jpeg", ".bmp", ".tga", ".tif",
                                             ".tiff", ".ppm", ".pgm", ".pnm"};
    const glcv_logger *lg = &m->p.logger;
    glcv_status st = glcv_list_folder(m->location, extensions, sizeof extensions / sizeof extensions[0], "media", lg,
                                      &m->files);
    if (st == GLCV_OK && m->files.count == 0)
        return glcv_fail(lg, GLCV_ERROR_IO, "media: no image files in folder '%s'", m->location);
    return st;
}

/* Decodes the next image of the folder into m->frame: 1 a frame, 0 no more files, -1 stopped or
 * failed. Files that cannot be decoded are skipped and counted. */
static int folder_next(glcv_media *m)
{
    const glcv_logger *lg = &m->p.logger;
    while (m->file_index < m->files.count) {
        if (atomic_load(&m->stop))
            return -1;
        const char *path = m->files.paths[m->file_index++];
        int got = 0;
        m->fail_level = GLCV_LOG_WARN;
        glcv_status opened = open_input(m, GLCV_MEDIA_VIDEO, path);
        m->fail_level = GLCV_LOG_ERROR;
        if (opened == GLCV_OK) {
            got = decode_next(m);
            close_input(m);
        }
        if (got == 1) {
            m->consecutive_errors = 0;
            return 1;
        }
        if (atomic_load(&m->stop) || m->source_error != GLCV_OK)
            return -1;
        count_decode_error(m);
        glcv_logf(lg, GLCV_LOG_WARN, "media: image '%s' skipped: it could not be decoded", path);
        if (++m->consecutive_errors > MAX_CONSECUTIVE_ERRORS) {
            m->source_error = GLCV_ERROR_CORRUPT_DATA;
            glcv_logf(lg, GLCV_LOG_ERROR, "media: no image of folder '%s' decodes", m->location);
            return -1;
        }
    }
    return 0;
}

/* ---- ring -------------------------------------------------------------------------------- */

static void deadline_after(struct timespec *ts, double seconds)
{
    clock_gettime(CLOCK_MONOTONIC, ts);
    double whole = floor(seconds);
    ts->tv_sec += (time_t)whole;
    ts->tv_nsec += (long)((seconds - whole) * 1e9);
    if (ts->tv_nsec >= 1000000000L) {
        ts->tv_sec++;
        ts->tv_nsec -= 1000000000L;
    }
}

/* LIVE pacing: a frame more than this many seconds from its time (a timestamp jump) restarts the
 * clock instead of waiting. */
#define PACE_JUMP 2.0

/* LIVE pacing: waits until the frame's time has come (returns early when stopping). */
static void pace(glcv_media *m, double pts)
{
    if (m->p.mode != GLCV_MEDIA_LIVE || m->p.source == GLCV_MEDIA_CAMERA)
        return;
    double now = monotonic_now();
    if (!m->clock_set)
        m->clock_start = now - pts;
    m->clock_set = 1;
    double wait = m->clock_start + pts - now;
    /* a timestamp jump (forward, or back as when a source restarts its clock or loops): the clock
     * starts again at this frame, which is due now */
    if (wait > PACE_JUMP || wait < -PACE_JUMP) {
        m->clock_start = now - pts;
        return;
    }
    if (wait <= 0.0)
        return;
    struct timespec ts;
    deadline_after(&ts, wait);
    pthread_mutex_lock(&m->lock);
    while (!atomic_load(&m->stop)) {
        if (pthread_cond_timedwait(&m->cond, &m->lock, &ts) == ETIMEDOUT)
            break;
    }
    pthread_mutex_unlock(&m->lock);
}

/* A slot to fill, or -1 when stopping. LIVE: a free slot, else the oldest unread frame is dropped;
 * EVERY_FRAME: waits for a free slot. */
static int acquire_slot(glcv_media *m)
{
    pthread_mutex_lock(&m->lock);
    int chosen = -1;
    while (!atomic_load(&m->stop)) {
        for (int i = 0; i < m->slot_count && chosen < 0; i++)
            if (m->slots[i].state == SLOT_FREE)
                chosen = i;
        if (chosen < 0 && m->p.mode == GLCV_MEDIA_LIVE) {
            for (int i = 0; i < m->slot_count; i++)
                if (m->slots[i].state == SLOT_READY && (chosen < 0 || m->slots[i].seq < m->slots[chosen].seq))
                    chosen = i;
            if (chosen >= 0)
                m->stats.dropped++;
        }
        if (chosen >= 0) {
            m->slots[chosen].state = SLOT_FILLING;
            break;
        }
        pthread_cond_wait(&m->cond, &m->lock);
    }
    pthread_mutex_unlock(&m->lock);
    return chosen;
}

static void publish_slot(glcv_media *m, int i, double pts, int nvdec)
{
    pthread_mutex_lock(&m->lock);
    m->stats.nvdec_frames += nvdec;
    slot *s = &m->slots[i];
    s->state = SLOT_READY;
    s->seq = ++m->seq;
    s->info = (glcv_media_frame_info){0};
    s->info.index = m->next_index++;
    s->info.pts = pts;
    s->info.capture_time = monotonic_now();
    m->stats.captured++;
    pthread_cond_broadcast(&m->cond);
    pthread_mutex_unlock(&m->lock);
}

static void finish(glcv_media *m, glcv_status error)
{
    pthread_mutex_lock(&m->lock);
    m->finished = 1;
    m->error = error;
    pthread_cond_broadcast(&m->cond);
    pthread_mutex_unlock(&m->lock);
}

/* ---- colour ----------------------------------------------------------------------------------- */

static const glcv_yuv_coeffs yuv_coeffs[GLCV_YUV_MATRICES][2] = GLCV_YUV_COEFFS_INIT;

const glcv_yuv_coeffs *glcv_media_yuv_coeffs(int matrix, int full_range)
{
    if (matrix < 0 || matrix >= GLCV_YUV_MATRICES)
        matrix = GLCV_YUV_BT601;
    return &yuv_coeffs[matrix][full_range ? 1 : 0];
}

void glcv_media_picture_to_rgb(const glcv_media_picture *pic, glcv_pixel_format format, uint8_t *dst,
                               size_t dst_stride)
{
    const glcv_yuv_coeffs *c = glcv_media_yuv_coeffs(pic->matrix, pic->full_range);
    int bpp = format == GLCV_PIXEL_RGBA8 ? 4 : 3;
    const glcv_yuv_planes *p = &pic->planes;
    for (int y = 0; y < p->height; y++) {
        uint8_t *row = dst + (size_t)y * dst_stride;
        for (int x = 0; x < p->width; x++) {
            uint8_t *px = row + (size_t)x * (size_t)bpp;
            glcv_yuv_at(c, p, x, y, &px[0], &px[1], &px[2]);
            if (bpp == 4)
                px[3] = 255;
        }
    }
}

/* The colour matrix of a decoded frame: the one the stream says, else BT.601 below 720 rows
 * (standard definition) and BT.709 from 720 rows up, as players assume. */
/* The conversion's matrix for a frame's colour space (FFmpeg's AVColorSpace, which numbers them as
 * H.273's matrix_coefficients) and height. */
static int matrix_of(int colorspace, int height)
{
    switch (colorspace) {
    case AVCOL_SPC_BT709: return GLCV_YUV_BT709;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL: return GLCV_YUV_BT2020;
    case AVCOL_SPC_BT470BG:
    case AVCOL_SPC_SMPTE170M:
    case AVCOL_SPC_FCC:
    case AVCOL_SPC_SMPTE240M: return GLCV_YUV_BT601;
    default: return height >= 720 ? GLCV_YUV_BT709 : GLCV_YUV_BT601;
    }
}

static int frame_matrix(const AVFrame *f)
{
    return matrix_of(f->colorspace, f->height);
}

/* A host frame of 8-bit 4:2:0 at the object's size, which the shared definition converts; *out
 * gets its planes. */
static int frame_planes(const glcv_media *m, const AVFrame *f, glcv_media_picture *out)
{
    int nv12 = f->format == AV_PIX_FMT_NV12;
    if (!nv12 && f->format != AV_PIX_FMT_YUV420P && f->format != AV_PIX_FMT_YUVJ420P)
        return 0;
    if (f->width != m->p.width || f->height != m->p.height || f->linesize[0] < 0 || f->linesize[1] < 0 ||
        (!nv12 && f->linesize[2] < 0))
        return 0;
    *out = (glcv_media_picture){.kind = GLCV_PICTURE_YUV420};
    out->planes = (glcv_yuv_planes){.y = f->data[0],
                                    .u = f->data[1],
                                    .v = nv12 ? f->data[1] + 1 : f->data[2],
                                    .y_pitch = (size_t)f->linesize[0],
                                    .u_pitch = (size_t)f->linesize[1],
                                    .v_pitch = (size_t)(nv12 ? f->linesize[1] : f->linesize[2]),
                                    .c_step = nv12 ? 2 : 1,
                                    .width = f->width,
                                    .height = f->height};
    out->matrix = frame_matrix(f);
    out->full_range = f->color_range == AVCOL_RANGE_JPEG || f->format == AV_PIX_FMT_YUVJ420P;
    return 1;
}

/* Bytes of the planes of a tightly packed 4:2:0 picture of the object's size (I420). */
static size_t i420_bytes(const glcv_media *m)
{
    size_t cw = (size_t)(m->p.width + 1) / 2, ch = (size_t)(m->p.height + 1) / 2;
    return (size_t)m->p.width * (size_t)m->p.height + 2 * cw * ch;
}

/* Copies a host 4:2:0 picture's planes into `dst` (I420, tightly packed) and points *pic there. */
static void copy_planes(const glcv_media *m, glcv_media_picture *pic, uint8_t *dst)
{
    const glcv_yuv_planes *p = &pic->planes;
    int cw = (p->width + 1) / 2, ch = (p->height + 1) / 2;
    uint8_t *y = dst, *u = y + (size_t)p->width * (size_t)p->height, *v = u + (size_t)cw * (size_t)ch;
    av_image_copy_plane(y, p->width, p->y, (int)p->y_pitch, p->width, p->height);
    if (p->c_step == 1) {
        av_image_copy_plane(u, cw, p->u, (int)p->u_pitch, cw, ch);
        av_image_copy_plane(v, cw, p->v, (int)p->v_pitch, cw, ch);
    } else {
        for (int j = 0; j < ch; j++) {
            const uint8_t *uv = p->u + (size_t)j * p->u_pitch;
            for (int i = 0; i < cw; i++) {
                u[(size_t)j * (size_t)cw + (size_t)i] = uv[2 * i];
                v[(size_t)j * (size_t)cw + (size_t)i] = uv[2 * i + 1];
            }
        }
    }
    (void)m;
    pic->planes = (glcv_yuv_planes){.y = y, .u = u, .v = v, .y_pitch = (size_t)p->width, .u_pitch = (size_t)cw,
                                    .v_pitch = (size_t)cw, .c_step = 1, .width = p->width, .height = p->height};
}

/* Converts m->frame into slot i (RGB, or with options.pictures the picture as kept); 0 on success. */
static int convert_frame(glcv_media *m, int i)
{
    AVFrame *f = m->frame;
    slot *s = &m->slots[i];
    if (s->hw)
        av_frame_free(&s->hw); /* the GPU frame the slot held before (a pool buffer goes back) */
    s->picture = (glcv_media_picture){0};
#ifdef GLCV_HAVE_FFNVCODEC
    glcv_nvdec_unmap(&s->nv);
    if (m->nv_frame.decoder) {
        glcv_nvdec_frame *nf = &m->nv_frame;
        if (nf->width != m->p.width || nf->height != m->p.height) {
            glcv_logf(&m->p.logger, GLCV_LOG_WARN, "media: NVDEC gave a %dx%d frame for a %dx%d source", nf->width,
                      nf->height, m->p.width, m->p.height);
            glcv_nvdec_unmap(nf);
            return -1;
        }
        s->nv = *nf;
        memset(nf, 0, sizeof *nf);
        uint8_t *y = (uint8_t *)(uintptr_t)s->nv.luma, *uv = (uint8_t *)(uintptr_t)s->nv.chroma;
        s->picture = (glcv_media_picture){.kind = GLCV_PICTURE_YUV420, .device = 1};
        s->picture.planes = (glcv_yuv_planes){.y = y,
                                              .u = uv,
                                              .v = uv + 1,
                                              .y_pitch = s->nv.pitch,
                                              .u_pitch = s->nv.pitch,
                                              .v_pitch = s->nv.pitch,
                                              .c_step = 2,
                                              .width = s->nv.width,
                                              .height = s->nv.height};
        s->picture.matrix = matrix_of(s->nv.matrix_coefficients, s->nv.height);
        s->picture.full_range = s->nv.full_range;
        return 0;
    }
#endif
    if (f->format == AV_PIX_FMT_CUDA) {
        sync_object_stream(m);
        const AVHWFramesContext *fc = f->hw_frames_ctx ? (const AVHWFramesContext *)f->hw_frames_ctx->data : NULL;
        if (m->opt.pictures && fc && fc->sw_format == AV_PIX_FMT_NV12 && f->width == m->p.width &&
            f->height == m->p.height && (s->hw = av_frame_alloc()) != NULL && av_frame_ref(s->hw, f) == 0) {
            /* kept in GPU memory: data[0] and data[1] are the luma and UV planes' device addresses */
            s->picture = (glcv_media_picture){.kind = GLCV_PICTURE_YUV420, .device = 1};
            s->picture.planes = (glcv_yuv_planes){.y = f->data[0],
                                                  .u = f->data[1],
                                                  .v = f->data[1] + 1,
                                                  .y_pitch = (size_t)f->linesize[0],
                                                  .u_pitch = (size_t)f->linesize[1],
                                                  .v_pitch = (size_t)f->linesize[1],
                                                  .c_step = 2,
                                                  .width = f->width,
                                                  .height = f->height};
            s->picture.matrix = frame_matrix(f);
            s->picture.full_range = f->color_range == AVCOL_RANGE_JPEG;
            return 0;
        }
        av_frame_free(&s->hw);
        av_frame_unref(m->sw_frame);
        if (av_hwframe_transfer_data(m->sw_frame, f, 0) < 0 || av_frame_copy_props(m->sw_frame, f) < 0) {
            glcv_logf(&m->p.logger, GLCV_LOG_WARN, "media: cannot copy a decoded frame from the GPU");
            return -1;
        }
        f = m->sw_frame;
    }
    glcv_media_picture pic;
    if (frame_planes(m, f, &pic)) {
        if (m->opt.pictures) {
            copy_planes(m, &pic, s->data);
            s->picture = pic;
        } else {
            glcv_media_picture_to_rgb(&pic, m->p.format, s->data, m->stride);
            s->picture = (glcv_media_picture){.kind = GLCV_PICTURE_RGB, .rgb = s->data, .stride = m->stride};
        }
        return 0;
    }
    enum AVPixelFormat dst_fmt = m->p.format == GLCV_PIXEL_RGBA8 ? AV_PIX_FMT_RGBA : AV_PIX_FMT_RGB24;
    m->sws = sws_getCachedContext(m->sws, f->width, f->height, (enum AVPixelFormat)f->format, m->p.width,
                                  m->p.height, dst_fmt, SWS_BILINEAR | SWS_ACCURATE_RND, NULL, NULL, NULL);
    if (!m->sws) {
        const char *name = av_get_pix_fmt_name((enum AVPixelFormat)f->format);
        glcv_logf(&m->p.logger, GLCV_LOG_WARN, "media: cannot convert %dx%d %s frames to RGB", f->width, f->height,
                  name ? name : "?");
        return -1;
    }
    uint8_t *dst[4] = {s->data, NULL, NULL, NULL};
    int dst_stride[4] = {(int)m->stride, 0, 0, 0};
    int rows = sws_scale(m->sws, (const uint8_t *const *)f->data, f->linesize, 0, f->height, dst, dst_stride);
    s->picture = (glcv_media_picture){.kind = GLCV_PICTURE_RGB, .rgb = s->data, .stride = m->stride};
    return rows == m->p.height ? 0 : -1;
}

/* Reopens a looping source at its start; 0 on success. */
static int restart(glcv_media *m)
{
    switch (m->p.source) {
    case GLCV_MEDIA_VIDEO:
    case GLCV_MEDIA_IMAGE_SEQUENCE:
        close_input(m);
        if (open_input(m, m->p.source, m->location) != GLCV_OK) {
            m->source_error = GLCV_ERROR_IO;
            return -1;
        }
        return 0;
    case GLCV_MEDIA_FRAMES_DIR:
        m->file_index = 0;
        m->frames_this_pass = 0;
        return 0;
    default: return -1;
    }
}

static void *capture_thread(void *arg)
{
    glcv_media *m = arg;
    tls_media = m;
    const double rate = m->p.frame_rate > 0 ? m->p.frame_rate : default_rate;
    int64_t synth_index = 0;
    for (;;) {
        if (atomic_load(&m->stop))
            break;
        if (m->p.source == GLCV_MEDIA_SYNTHETIC) {
            if (synth_index >= m->synth_frames) {
                if (!m->p.loop)
                    break;
                synth_index = 0;
            }
            double pts = (double)m->next_index / rate;
            pace(m, pts);
            int i = acquire_slot(m);
            if (i < 0)
                break;
            glcv_image view = {m->slots[i].data, m->p.width, m->p.height, m->stride, m->p.format};
            glcv_synth_frame(m->synth, (int)synth_index++, &view, NULL);
            m->slots[i].picture = (glcv_media_picture){.kind = GLCV_PICTURE_RGB, .rgb = view.data, .stride = m->stride};
            publish_slot(m, i, pts, 0);
            continue;
        }

        int got = m->p.source == GLCV_MEDIA_FRAMES_DIR ? folder_next(m) : decode_next(m);
        if (got < 0)
            break;
        if (got == 0 && m->p.source == GLCV_MEDIA_VIDEO)
            count_missing_frames(m);
        if (got == 0) {
            if (!m->p.loop || m->frames_this_pass == 0 || m->p.source == GLCV_MEDIA_CAMERA ||
                m->p.source == GLCV_MEDIA_LAVFI)
                break;
            m->pts_offset = m->last_pts + 1.0 / rate;
            if (restart(m) != 0)
                break;
            continue;
        }
        double pts = m->p.source == GLCV_MEDIA_FRAMES_DIR ? (double)m->frames_this_pass / rate : frame_seconds(m);
        pts += m->pts_offset;
        m->frames_this_pass++;
        m->last_pts = pts;
        pace(m, pts);
        int i = acquire_slot(m);
        if (i < 0) {
            av_frame_unref(m->frame);
            break;
        }
        int on_gpu = decoded_on_gpu(m);
        if (convert_frame(m, i) != 0) {
            av_frame_unref(m->frame);
#ifdef GLCV_HAVE_FFNVCODEC
            glcv_nvdec_unmap(&m->nv_frame);
#endif
            pthread_mutex_lock(&m->lock);
            m->slots[i].state = SLOT_FREE;
            pthread_mutex_unlock(&m->lock);
            count_decode_error(m);
            if (++m->consecutive_errors > MAX_CONSECUTIVE_ERRORS) {
                m->source_error = GLCV_ERROR_CORRUPT_DATA;
                break;
            }
            continue;
        }
        av_frame_unref(m->frame);
        publish_slot(m, i, pts, on_gpu);
    }
    finish(m, m->source_error);
    tls_media = NULL;
    return NULL;
}

/* ---- open -------------------------------------------------------------------------------- */

static glcv_status set_location(glcv_media *m, const char *location)
{
    char *copy = strdup(location);
    if (!copy)
        return glcv_fail(&m->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "media: out of memory");
    free(m->location);
    m->location = copy;
    m->p.location = copy;
    return GLCV_OK;
}

/* The first /dev/videoN that opens as a capture device; GLCV_ERROR_IO when there is none. */
static glcv_status open_first_camera(glcv_media *m)
{
    for (int n = 0; n < MAX_CAMERAS; n++) {
        char path[32];
        snprintf(path, sizeof path, "/dev/video%d", n);
        struct stat sb;
        if (stat(path, &sb) != 0)
            continue;
        /* Failures here are expected (metadata nodes, busy devices): log them as DEBUG. */
        m->fail_level = GLCV_LOG_DEBUG;
        m->quiet_ffmpeg = 1;
        glcv_status st = open_input(m, GLCV_MEDIA_CAMERA, path);
        m->quiet_ffmpeg = 0;
        m->fail_level = GLCV_LOG_ERROR;
        if (st == GLCV_OK)
            return set_location(m, path);
        glcv_logf(&m->p.logger, GLCV_LOG_DEBUG, "media: %s is not a usable camera", path);
    }
    return GLCV_ERROR_IO;
}

static glcv_status open_synthetic(glcv_media *m)
{
    glcv_synth_params sp = m->p.synth;
    if (m->p.width > 0) {
        sp.width = m->p.width;
        sp.height = m->p.height;
    }
    glcv_status st = glcv_synth_create(&sp, &m->synth);
    if (st != GLCV_OK)
        return glcv_fail(&m->p.logger, st, "media: bad synthetic scene parameters");
    glcv_synth_get_params(m->synth, &m->p.synth);
    m->p.width = m->p.synth.width;
    m->p.height = m->p.synth.height;
    m->synth_frames = m->p.synth.frames;
    if (m->p.frame_rate <= 0)
        m->p.frame_rate = default_rate;
    return set_location(m, "synthetic");
}

/* Opens the source named by the params; fills size, rate and the description. */
static glcv_status open_source(glcv_media *m)
{
    glcv_status st = GLCV_OK;
    int src_w = 0, src_h = 0;
    const char *codec = "";
    switch (m->p.source) {
    case GLCV_MEDIA_SOURCE_DEFAULT:
        if (open_first_camera(m) == GLCV_OK) {
            m->p.source = GLCV_MEDIA_CAMERA;
        } else {
            glcv_logf(&m->p.logger, GLCV_LOG_INFO, "media: no camera found, using the synthetic scene");
            m->p.source = GLCV_MEDIA_SYNTHETIC;
            return open_synthetic(m);
        }
        break;
    case GLCV_MEDIA_SYNTHETIC: return open_synthetic(m);
    case GLCV_MEDIA_FRAMES_DIR:
        if ((st = set_location(m, m->p.location)) != GLCV_OK || (st = list_folder(m)) != GLCV_OK)
            return st;
        /* The first image gives the size. */
        if ((st = open_input(m, GLCV_MEDIA_VIDEO, m->files.paths[0])) != GLCV_OK)
            return st;
        break;
    case GLCV_MEDIA_CAMERA:
    case GLCV_MEDIA_LAVFI:
    case GLCV_MEDIA_VIDEO:
    case GLCV_MEDIA_IMAGE_SEQUENCE: {
        const char *loc = m->p.location && *m->p.location ? m->p.location
                          : m->p.source == GLCV_MEDIA_CAMERA ? default_camera
                                                             : default_lavfi;
        if ((st = set_location(m, loc)) != GLCV_OK || (st = open_input(m, m->p.source, m->location)) != GLCV_OK)
            return st;
        break;
    }
    }

    src_w = m->dec->width;
    src_h = m->dec->height;
    codec = m->dec->codec ? m->dec->codec->name : "?";
    const char *pix = av_get_pix_fmt_name(m->dec->pix_fmt);
    double rate = 0.0;
    if (m->p.source == GLCV_MEDIA_FRAMES_DIR) {
        rate = m->p.frame_rate > 0 ? m->p.frame_rate : default_rate;
        close_input(m);
    } else {
        AVRational r = av_guess_frame_rate(m->fmt, m->fmt->streams[m->stream], NULL);
        if (r.num > 0 && r.den > 0)
            rate = av_q2d(r);
        if (m->p.source == GLCV_MEDIA_IMAGE_SEQUENCE && m->p.frame_rate > 0)
            rate = m->p.frame_rate;
    }
    if (m->p.width == 0) {
        m->p.width = src_w;
        m->p.height = src_h;
    }
    m->p.frame_rate = rate;
#ifdef GLCV_HAVE_FFNVCODEC
    if (m->nv && (m->p.width != src_w || m->p.height != src_h))
        nv_fallback(m, GLCV_LOG_INFO, "its frames are scaled");
#endif
    char what[96];
    if (m->p.source == GLCV_MEDIA_FRAMES_DIR)
        snprintf(what, sizeof what, "%d images", m->files.count);
    else
        snprintf(what, sizeof what, "%s %s%s", codec, pix ? pix : "?", m->nvdec ? " (NVDEC)" : "");
    char scaled[64] = "";
    if (m->p.width != src_w || m->p.height != src_h)
        snprintf(scaled, sizeof scaled, ", scaled to %dx%d", m->p.width, m->p.height);
    snprintf(m->description, sizeof m->description, "%s %s: %dx%d %s at %.4g fps%s%s",
             glcv_media_source_string(m->p.source), m->location, src_w, src_h, what, rate, scaled,
             m->p.loop ? ", looping" : "");
    return GLCV_OK;
}

static void free_media(glcv_media *m)
{
    if (!m)
        return;
    close_input(m);
    sws_freeContext(m->sws);
    av_frame_free(&m->frame);
    av_frame_free(&m->sw_frame);
    av_packet_free(&m->pkt);
    glcv_synth_destroy(&m->synth);
    glcv_file_list_free(&m->files);
#ifdef GLCV_HAVE_FFNVCODEC
    glcv_nvdec_unmap(&m->nv_frame);
    for (int i = 0; i < MAX_RING; i++)
        glcv_nvdec_unmap(&m->slots[i].nv);
    glcv_nvdec_destroy(&m->nv);
    av_packet_free(&m->nv_pkt);
#endif
    for (int i = 0; i < MAX_RING; i++) {
        av_frame_free(&m->slots[i].hw);
        if (m->slots[i].data && m->opt.release)
            m->opt.release(m->slots[i].data, m->opt.alloc_user);
        else
            free(m->slots[i].data);
    }
    if (m->hw_device)
        destroy_object_stream(m);
    av_buffer_unref(&m->hw_device);
    if (m->sync_ready) {
        live_remove(m); /* after close_input: no decoder thread can log about it any more */
        pthread_mutex_destroy(&m->log_lock);
        pthread_cond_destroy(&m->cond);
        pthread_mutex_destroy(&m->lock);
    }
    free(m->location);
    free(m);
}

glcv_status glcv_media_create(const glcv_media_params *params, glcv_media **out)
{
    return glcv_media_create_with(params, NULL, out);
}

glcv_status glcv_media_create_with(const glcv_media_params *params, const glcv_media_options *options,
                                   glcv_media **out)
{
    if (out)
        *out = NULL;
    if (!params || !out)
        return glcv_fail(params ? &params->logger : NULL, GLCV_ERROR_INVALID_ARGUMENT,
                         "media: NULL params or output pointer");
    glcv_media_params p;
    glcv_status st = resolve_params(params, &p);
    if (st != GLCV_OK)
        return st;
    pthread_once(&ffmpeg_once, ffmpeg_init);

    glcv_media *m = calloc(1, sizeof *m);
    if (!m)
        return glcv_fail(&p.logger, GLCV_ERROR_OUT_OF_MEMORY, "media: out of memory");
    m->p = p;
    if (options)
        m->opt = *options;
    m->nvdec_auto = m->opt.nvdec_auto && params->decoder == GLCV_MEDIA_DECODER_DEFAULT;
    m->p.location = NULL;
    m->stream = -1;
    m->held = -1;
    m->first_pts = AV_NOPTS_VALUE;
    atomic_init(&m->stop, 0);

    pthread_condattr_t ca;
    if (pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m);
        return glcv_fail(&p.logger, GLCV_ERROR_OUT_OF_MEMORY, "media: cannot create a mutex");
    }
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int cr = pthread_cond_init(&m->cond, &ca);
    pthread_condattr_destroy(&ca);
    if (cr != 0) {
        pthread_mutex_destroy(&m->lock);
        free(m);
        return glcv_fail(&p.logger, GLCV_ERROR_OUT_OF_MEMORY, "media: cannot create a condition variable");
    }
    if (pthread_mutex_init(&m->log_lock, NULL) != 0) {
        pthread_cond_destroy(&m->cond);
        pthread_mutex_destroy(&m->lock);
        free(m);
        return glcv_fail(&p.logger, GLCV_ERROR_OUT_OF_MEMORY, "media: cannot create a mutex");
    }
    m->sync_ready = 1;
    m->fail_level = GLCV_LOG_ERROR;
    m->log_prefix = 1;
    live_add(m);
    m->p.location = p.location; /* read by open_source, then replaced by the copy */

    glcv_media *outer = tls_media;
    tls_media = m;
    m->frame = av_frame_alloc();
    m->sw_frame = av_frame_alloc();
    m->pkt = av_packet_alloc();
    if (!m->frame || !m->sw_frame || !m->pkt)
        st = glcv_fail(&p.logger, GLCV_ERROR_OUT_OF_MEMORY, "media: out of memory");
    else
        st = open_source(m);
    tls_media = outer;
    if (st != GLCV_OK)
        goto fail;
    /* Defaults that depended on the source kind, now that DEFAULT is resolved. */
    if (params->mode == GLCV_MEDIA_MODE_DEFAULT)
        m->p.mode = m->p.source == GLCV_MEDIA_CAMERA || m->p.source == GLCV_MEDIA_LAVFI ? GLCV_MEDIA_LIVE
                                                                                        : GLCV_MEDIA_EVERY_FRAME;
    if (m->p.source == GLCV_MEDIA_SYNTHETIC)
        snprintf(m->description, sizeof m->description, "synthetic scene: %dx%d, %d frames at %.4g fps%s",
                 m->p.width, m->p.height, m->synth_frames, m->p.frame_rate, m->p.loop ? ", looping" : "");

    m->bpp = glcv_pixel_format_size(m->p.format);
    m->stride = (size_t)m->p.width * (size_t)m->bpp;
    m->frame_bytes = m->stride * (size_t)m->p.height;
    m->slot_count = m->p.ring_frames;
    size_t bytes = m->frame_bytes;
    if (m->opt.pictures && i420_bytes(m) > bytes)
        bytes = i420_bytes(m);
    size_t alloc = (bytes + BUFFER_PADDING + BUFFER_ALIGN - 1) / BUFFER_ALIGN * BUFFER_ALIGN;
    for (int i = 0; i < m->slot_count; i++) {
        void *mem = NULL;
        if (m->opt.alloc)
            mem = m->opt.alloc(alloc, m->opt.alloc_user);
        else if (posix_memalign(&mem, BUFFER_ALIGN, alloc) != 0)
            mem = NULL;
        if (!mem) {
            st = glcv_fail(&p.logger, GLCV_ERROR_OUT_OF_MEMORY, "media: out of memory for %d frames of %zu bytes",
                           m->slot_count, m->frame_bytes);
            goto fail;
        }
        memset(mem, 0, alloc);
        m->slots[i].data = mem;
    }
    if (pthread_create(&m->thread, NULL, capture_thread, m) != 0) {
        st = glcv_fail(&p.logger, GLCV_ERROR_OUT_OF_MEMORY, "media: cannot start the capture thread");
        goto fail;
    }
    m->thread_started = 1;
    glcv_logf(&m->p.logger, GLCV_LOG_INFO, "media: %s", m->description);
    *out = m;
    return GLCV_OK;

fail:
    free_media(m);
    return st;
}

/* ---- reading ----------------------------------------------------------------------------- */

/* Waits for the next frame to deliver (see glcv_media_read) and holds its slot: *held is the slot,
 * or -1 with no frame (end of stream, timed out, or an error returned). */
static glcv_status take_frame(glcv_media *m, glcv_media_frame_info *info, int timeout_ms, int *held)
{
    *held = -1;
    struct timespec deadline;
    if (timeout_ms > 0)
        deadline_after(&deadline, timeout_ms / 1000.0);
    glcv_status st = GLCV_OK;
    pthread_mutex_lock(&m->lock);
    if (m->held >= 0) {
        m->slots[m->held].state = SLOT_FREE;
        m->held = -1;
        pthread_cond_broadcast(&m->cond);
    }
    for (;;) {
        int chosen = -1;
        for (int i = 0; i < m->slot_count; i++) {
            if (m->slots[i].state != SLOT_READY)
                continue;
            if (chosen < 0 || (m->p.mode == GLCV_MEDIA_LIVE ? m->slots[i].seq > m->slots[chosen].seq
                                                            : m->slots[i].seq < m->slots[chosen].seq))
                chosen = i;
        }
        if (chosen >= 0) {
            if (m->p.mode == GLCV_MEDIA_LIVE) {
                /* The newest frame wins; older unread ones are dropped. */
                for (int i = 0; i < m->slot_count; i++) {
                    if (i != chosen && m->slots[i].state == SLOT_READY) {
                        m->slots[i].state = SLOT_FREE;
                        m->stats.dropped++;
                    }
                }
                pthread_cond_broadcast(&m->cond);
            }
            m->slots[chosen].state = SLOT_HELD;
            m->held = chosen;
            m->stats.delivered++;
            *info = m->slots[chosen].info;
            *held = chosen;
            break;
        }
        if (m->finished) {
            if (m->error == GLCV_OK)
                info->end_of_stream = 1;
            st = m->error;
            break;
        }
        if (timeout_ms == 0) {
            info->timed_out = 1;
            break;
        }
        if (timeout_ms < 0) {
            pthread_cond_wait(&m->cond, &m->lock);
        } else if (pthread_cond_timedwait(&m->cond, &m->lock, &deadline) == ETIMEDOUT) {
            timeout_ms = 0; /* one last look, then report the timeout */
        }
    }
    pthread_mutex_unlock(&m->lock);
    if (st != GLCV_OK)
        return glcv_fail(&m->p.logger, st, "media: %s '%s' stopped: %s", glcv_media_source_string(m->p.source),
                         m->location, glcv_status_string(st));
    return GLCV_OK;
}

glcv_status glcv_media_read(glcv_media *m, glcv_image *frame, glcv_media_frame_info *info, int timeout_ms)
{
    glcv_media_frame_info local;
    if (!info)
        info = &local;
    *info = (glcv_media_frame_info){0};
    if (frame)
        *frame = (glcv_image){0};
    if (!m || !frame)
        return glcv_fail(m ? &m->p.logger : NULL, GLCV_ERROR_INVALID_ARGUMENT, "media: NULL media or frame");
    if (m->opt.pictures)
        return glcv_fail(&m->p.logger, GLCV_ERROR_STATE, "media: this source delivers pictures to its set");
    int held = -1;
    glcv_status st = take_frame(m, info, timeout_ms, &held);
    if (held >= 0)
        *frame = (glcv_image){m->slots[held].data, m->p.width, m->p.height, m->stride, m->p.format};
    return st;
}

glcv_status glcv_media_read_picture(glcv_media *m, glcv_media_picture *picture, glcv_media_frame_info *info,
                                    int timeout_ms)
{
    glcv_media_frame_info local;
    if (!info)
        info = &local;
    *info = (glcv_media_frame_info){0};
    if (picture)
        *picture = (glcv_media_picture){0};
    if (!m || !picture)
        return GLCV_ERROR_INVALID_ARGUMENT;
    int held = -1;
    glcv_status st = take_frame(m, info, timeout_ms, &held);
    if (held >= 0)
        *picture = m->slots[held].picture;
    return st;
}

int glcv_media_uses_nvdec(const glcv_media *m)
{
    return m && m->nvdec;
}

int glcv_media_ready(glcv_media *m)
{
    int ready = 0;
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < m->slot_count && !ready; i++)
        ready = m->slots[i].state == SLOT_READY;
    ready |= m->finished;
    pthread_mutex_unlock(&m->lock);
    return ready;
}

glcv_status glcv_media_get_stats(glcv_media *m, glcv_media_stats *out)
{
    GLCV_LOCKED_COPY(m, stats, out);
}

glcv_status glcv_media_get_params(glcv_media *m, glcv_media_params *out)
{
    if (!m || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    *out = m->p;
    return GLCV_OK;
}

const char *glcv_media_describe(const glcv_media *m)
{
    return m ? m->description : "";
}

void glcv_media_destroy(glcv_media **media)
{
    if (!media || !*media)
        return;
    glcv_media *m = *media;
    *media = NULL;
    if (m->thread_started) {
        pthread_mutex_lock(&m->lock);
        atomic_store(&m->stop, 1);
        pthread_cond_broadcast(&m->cond);
        pthread_mutex_unlock(&m->lock);
        pthread_join(m->thread, NULL);
    }
    free_media(m);
}
