/* Camera sets (glcv/media.h, glcv_media_set): many sources of one size read together, a frame of
 * each, as host images or as one GL texture array.
 *
 * Each source is a glcv_media with its own capture thread (so decoding runs on as many threads as
 * there are sources, each decoder single-threaded when the sources outnumber the processors).
 * Texture sets with CUDA ask their sources for pictures - NVDEC frames kept in GPU memory, CPU
 * frames as 4:2:0 planes in pinned slots - and convert every new layer in one launch
 * (src/media_cuda.c); without CUDA the sources convert to RGB on their threads and GL uploads. */
#include "core_internal.h"
#include "gl.h"
#include "media_internal.h"

#include <glcv/context.h>
#include <glcv/image.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if GLCV_HAVE_CUDA
#define HAVE_MEDIA_CUDA 1
#else
#define HAVE_MEDIA_CUDA 0
/* Without CUDA the texture path uploads through GL only. */
glcv_status glcv_media_cuda_create(unsigned int texture, int width, int height, int layers, int cuda_device,
                                   const glcv_logger *logger, glcv_media_cuda **out)
{
    (void)texture, (void)width, (void)height, (void)layers, (void)cuda_device, (void)logger;
    *out = NULL;
    return GLCV_ERROR_UNSUPPORTED;
}
void glcv_media_cuda_destroy(glcv_media_cuda **cuda)
{
    (void)cuda;
}
void *glcv_media_cuda_context(const glcv_media_cuda *cuda)
{
    (void)cuda;
    return NULL;
}
void *glcv_media_cuda_host_alloc(size_t bytes, void *cuda)
{
    (void)bytes, (void)cuda;
    return NULL;
}
void glcv_media_cuda_host_free(void *ptr, void *cuda)
{
    (void)ptr, (void)cuda;
}
glcv_status glcv_media_cuda_convert(glcv_media_cuda *cuda, const glcv_media_cuda_layer *layers, int n)
{
    (void)cuda, (void)layers, (void)n;
    return GLCV_ERROR_UNSUPPORTED;
}
glcv_status glcv_media_cuda_wait(glcv_media_cuda *cuda)
{
    (void)cuda;
    return GLCV_OK;
}
#endif

enum { DEFAULT_OPEN_THREADS = 16, MAX_OPEN_THREADS = 256, LIVE_POLL_US = 500 };

typedef struct set_source {
    glcv_media_params params; /* as given, location pointing at `location` */
    char *location;
    glcv_media *media;        /* NULL while closed */
    glcv_status status;       /* OK while it runs (or has ended normally) */
    int ended;
    int cpu;                  /* the set put it on the CPU (cpu_share) */
    glcv_image view;          /* host sets: its last frame (the media's slot, or `kept`) */
    glcv_image kept;          /* host sets: a copy of the last frame, made when the media closes */
    glcv_media_picture picture; /* texture sets: the picture of this read */
    char text[600];
    /* the first error message of its media object since it was opened (its logger's): the cause */
    pthread_mutex_t log_lock;
    int log_ready;
    char last_error[512];
    glcv_logger set_logger; /* the set's, which the messages go on to */
    /* a reopen in the background: its thread, state (0 none, 1 opening, 2 done), and result */
    pthread_t reopen_thread;
    atomic_int reopen_state;
    glcv_media *reopened;
    glcv_status reopen_status;
    char reopen_text[600];
} set_source;

struct glcv_media_set {
    glcv_media_set_params p; /* resolved; p.sources points at `source_params` */
    glcv_media_params *source_params;
    set_source *src;
    int width, height;
    glcv_gl_token gl;        /* texture sets: the context they were made in */
    GLuint texture;
    glcv_media_cuda *cuda;   /* texture sets on CUDA */
    glcv_media_cuda_layer *layers;
    glcv_image *views;       /* per source: the frames handed out */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* ---- opening ------------------------------------------------------------------------------------ */

/* A source's logger: keeps its last error (the cause of a failure, for glcv_media_set_describe) and
 * passes every message on to the set's logger. */
static void source_log(void *user, glcv_log_level level, const char *message)
{
    set_source *s = user;
    if (level == GLCV_LOG_ERROR) { /* the first since the open: the cause, not what followed from it */
        pthread_mutex_lock(&s->log_lock);
        if (!s->last_error[0])
            snprintf(s->last_error, sizeof s->last_error, "%s", message);
        pthread_mutex_unlock(&s->log_lock);
    }
    glcv_logger lg = s->set_logger;
    if (lg.fn && level <= (lg.max_level ? lg.max_level : GLCV_LOG_INFO))
        lg.fn(lg.user, level, message);
}

/* The options and parameters source i is opened with. */
static void source_setup(const glcv_media_set *set, int i, glcv_media_params *mp, glcv_media_options *opt)
{
    const set_source *s = &set->src[i];
    *mp = s->params;
    *opt = (glcv_media_options){0};
    mp->logger = (glcv_logger){.fn = source_log, .user = (void *)s, .max_level = GLCV_LOG_DEBUG};
    mp->format = GLCV_PIXEL_RGB8;
    if (set->width > 0) {
        mp->width = set->width;
        mp->height = set->height;
    }
    if (mp->decoder_threads == 0 && set->p.count >= online_cpus())
        mp->decoder_threads = 1; /* the sources' own threads keep the processors busy */
    if (mp->decoder == GLCV_MEDIA_DECODER_DEFAULT && (s->cpu || set->p.decoder == GLCV_MEDIA_DECODER_CPU))
        mp->decoder = GLCV_MEDIA_DECODER_CPU;
    if (set->cuda) {
        mp->cuda_device = set->p.cuda_device;
        opt->pictures = 1;
        opt->alloc = glcv_media_cuda_host_alloc;
        opt->release = glcv_media_cuda_host_free;
        opt->alloc_user = set->cuda;
        opt->cuda_context = glcv_media_cuda_context(set->cuda);
        if (mp->decoder == GLCV_MEDIA_DECODER_DEFAULT && set->p.decoder == GLCV_MEDIA_DECODER_NVDEC)
            mp->decoder = GLCV_MEDIA_DECODER_NVDEC;
        opt->nvdec_auto = mp->decoder == GLCV_MEDIA_DECODER_DEFAULT;
    }
}

/* Source i's last error message, or `fallback`, after "<what>: ". */
static void failure_text(set_source *s, const char *what, glcv_status st, char *text, size_t size)
{
    pthread_mutex_lock(&s->log_lock);
    if (s->last_error[0])
        snprintf(text, size, "%s: %s", what, s->last_error);
    else
        snprintf(text, size, "%s: %s", what, glcv_status_string(st));
    pthread_mutex_unlock(&s->log_lock);
}

/* Opens source i into *out, its description (or why it failed) into text. */
static glcv_status open_media(glcv_media_set *set, int i, glcv_media **out, char *text, size_t size)
{
    set_source *s = &set->src[i];
    glcv_media_params mp;
    glcv_media_options opt;
    source_setup(set, i, &mp, &opt);
    pthread_mutex_lock(&s->log_lock);
    s->last_error[0] = '\0';
    pthread_mutex_unlock(&s->log_lock);
    glcv_status st = glcv_media_create_with(&mp, &opt, out);
    if (st != GLCV_OK)
        failure_text(s, "cannot open", st, text, size);
    else
        snprintf(text, size, "%s", glcv_media_describe(*out));
    return st;
}

static glcv_status open_source(glcv_media_set *set, int i)
{
    set_source *s = &set->src[i];
    glcv_media *m = NULL;
    glcv_status st = open_media(set, i, &m, s->text, sizeof s->text);
    s->status = st;
    s->ended = 0;
    s->media = m;
    return st;
}

typedef struct open_job {
    glcv_media_set *set;
    pthread_mutex_t lock;
    int next, first;
} open_job;

static void *open_worker(void *arg)
{
    open_job *job = arg;
    for (;;) {
        pthread_mutex_lock(&job->lock);
        int i = job->next < job->set->p.count ? job->next++ : -1;
        pthread_mutex_unlock(&job->lock);
        if (i < 0)
            return NULL;
        if (i != job->first)
            open_source(job->set, i);
    }
}

static glcv_status make_texture(glcv_media_set *set);
static void close_source(set_source *s);

/* Opens every source. Without a size, the first source that opens gives it (opened alone first);
 * a texture set then makes its texture and opens that source again, for the texture's memory. */
static glcv_status open_all(glcv_media_set *set)
{
    int first = -1;
    if (set->width == 0) {
        for (int i = 0; i < set->p.count && first < 0; i++) {
            if (open_source(set, i) == GLCV_OK) {
                glcv_media_params got;
                glcv_media_get_params(set->src[i].media, &got);
                set->width = got.width;
                set->height = got.height;
                first = i;
            }
        }
        if (first < 0)
            return glcv_fail(&set->p.logger, GLCV_ERROR_SIZE_MISMATCH,
                             "media set: no source opened, so the set has no frame size (give width and height)");
    }
    if (set->p.texture && !set->texture) {
        glcv_status st = make_texture(set);
        if (st != GLCV_OK)
            return st;
        if (first >= 0) {
            close_source(&set->src[first]);
            first = -1;
        }
    }
    open_job job = {.set = set, .next = 0, .first = first};
    pthread_mutex_init(&job.lock, NULL);
    int threads = set->p.open_threads;
    if (threads > set->p.count - job.next)
        threads = set->p.count - job.next;
    pthread_t tid[MAX_OPEN_THREADS];
    int started = 0;
    for (int t = 0; t < threads; t++)
        if (pthread_create(&tid[t], NULL, open_worker, &job) == 0)
            started++;
    if (started == 0)
        open_worker(&job);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&job.lock);
    return GLCV_OK;
}

/* ---- the texture ------------------------------------------------------------------------------- */

static glcv_status make_texture(glcv_media_set *set)
{
    const glcv_logger *lg = &set->p.logger;
    if (!glcv_gl_context_current())
        return glcv_fail(lg, GLCV_ERROR_NO_CONTEXT, "media set: a texture set needs a current GL context");
    GLint max_layers = 0, max_size = 0;
    glGetIntegerv(GL_MAX_ARRAY_TEXTURE_LAYERS, &max_layers);
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &max_size);
    if (set->p.count > max_layers || set->width > max_size || set->height > max_size)
        return glcv_fail(lg, GLCV_ERROR_UNSUPPORTED,
                         "media set: a texture array of %d layers of %dx%d is above this GL's limits (%d layers, "
                         "%d pixels)",
                         set->p.count, set->width, set->height, max_layers, max_size);
    glcv_glstate *state = glcv_glstate_new();
    if (!state)
        return glcv_fail(lg, GLCV_ERROR_OUT_OF_MEMORY, "media set: out of memory");
    glcv_glstate_save(state, 0);
    glcv_gl_clear_errors();
    glGenTextures(1, &set->texture);
    glBindTexture(GL_TEXTURE_2D_ARRAY, set->texture);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MAX_LEVEL, 0);
    glTexImage3D(GL_TEXTURE_2D_ARRAY, 0, GL_RGBA8, set->width, set->height, set->p.count, 0, GL_RGBA,
                 GL_UNSIGNED_BYTE, NULL);
    glcv_status st = glcv_gl_check(lg, "media set: the texture array");
    glcv_glstate_restore(state);
    glcv_glstate_free(state);
    if (st != GLCV_OK)
        return st;
    set->gl = glcv_gl_current_token();
    /* CUDA converts every source's frames, those decoded on the CPU too (half the bytes of RGB) */
    glcv_status cst = glcv_media_cuda_create(set->texture, set->width, set->height, set->p.count, set->p.cuda_device,
                                             lg, &set->cuda);
    if (cst == GLCV_OK)
        return GLCV_OK;
    if (set->p.decoder == GLCV_MEDIA_DECODER_NVDEC)
        return glcv_fail(lg, cst == GLCV_ERROR_UNSUPPORTED ? GLCV_ERROR_UNSUPPORTED : cst,
                         "media set: NVDEC asked for, but CUDA device %d cannot take the texture set",
                         set->p.cuda_device);
    glcv_logf(lg, GLCV_LOG_INFO, "media set: no CUDA on device %d: frames decoded on the CPU and uploaded by GL",
              set->p.cuda_device);
    return GLCV_OK;
}

/* Uploads the layers with a new frame (no CUDA): RGB8 host frames into the array. */
static glcv_status upload_layers(glcv_media_set *set, const glcv_media_set_frame *out)
{
    glcv_glstate *state = glcv_glstate_new();
    if (!state)
        return glcv_fail(&set->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "media set: out of memory");
    glcv_glstate_save(state, 0);
    glcv_gl_clear_errors();
    glBindTexture(GL_TEXTURE_2D_ARRAY, set->texture);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    for (int i = 0; i < set->p.count; i++) {
        if (!out[i].has_frame)
            continue;
        const glcv_image *v = &set->src[i].view;
        glPixelStorei(GL_UNPACK_ROW_LENGTH, (GLint)(glcv_image_stride(v) / 3));
        glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, 0, i, set->width, set->height, 1, GL_RGB, GL_UNSIGNED_BYTE,
                        v->data);
    }
    glcv_status st = glcv_gl_check(&set->p.logger, "media set: uploading the frames");
    glcv_glstate_restore(state);
    glcv_glstate_free(state);
    return st;
}

/* ---- create, destroy ---------------------------------------------------------------------------- */

static void close_source(set_source *s)
{
    glcv_media_destroy(&s->media);
    s->picture = (glcv_media_picture){0};
}

/* Waits for a reopen in the background and drops what it opened. */
static void join_reopen(set_source *s)
{
    if (atomic_load(&s->reopen_state) == 0)
        return;
    pthread_join(s->reopen_thread, NULL);
    glcv_media_destroy(&s->reopened);
    atomic_store(&s->reopen_state, 0);
}

void glcv_media_set_destroy(glcv_media_set **pset)
{
    glcv_media_set *set = pset ? *pset : NULL;
    if (!set)
        return;
    (void)glcv_media_cuda_wait(set->cuda); /* before the sources free the pictures it reads */
    for (int i = 0; set->src && i < set->p.count; i++) {
        join_reopen(&set->src[i]);
        close_source(&set->src[i]);
        free(set->src[i].location);
        glcv_image_free(&set->src[i].kept);
        if (set->src[i].log_ready)
            pthread_mutex_destroy(&set->src[i].log_lock);
    }
    glcv_media_cuda_destroy(&set->cuda);
    if (set->texture && glcv_gl_token_current(set->gl))
        glDeleteTextures(1, &set->texture);
    free(set->src);
    free(set->source_params);
    free(set->layers);
    free(set->views);
    free(set);
    *pset = NULL;
}

glcv_status glcv_media_set_create(const glcv_media_set_params *params, glcv_media_set **out)
{
    GLCV_CREATE_BEGIN(params, out);
    const glcv_logger *lg = &params->logger;
    if (params->count < 1 || params->count > GLCV_MEDIA_SET_MAX || !params->sources)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media set: %d sources (1..%d, with their params)",
                         params->count, GLCV_MEDIA_SET_MAX);
    if ((params->width == 0) != (params->height == 0) || params->width < 0 || params->height < 0 ||
        params->width > 16384 || params->height > 16384)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media set: size %dx%d: both in 1..16384, or neither",
                         params->width, params->height);
    if ((int)params->decoder < 0 || (int)params->decoder > GLCV_MEDIA_DECODER_NVDEC)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media set: unknown decoder %d", (int)params->decoder);
    if (!(params->cpu_share >= 0.0 && params->cpu_share <= 1.0))
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media set: cpu_share %g is not in 0..1",
                         params->cpu_share);
    if (params->cuda_device < 0 || params->cuda_device > 15 || params->open_threads < 0 ||
        params->open_threads > MAX_OPEN_THREADS)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "media set: cuda_device %d (0..15), open_threads %d (0..%d)",
                         params->cuda_device, params->open_threads, MAX_OPEN_THREADS);
    glcv_media_set *set = calloc(1, sizeof *set);
    if (!set)
        return glcv_fail(lg, GLCV_ERROR_OUT_OF_MEMORY, "media set: out of memory");
    set->p = *params;
    GLCV_DEFAULT(set->p.open_threads, DEFAULT_OPEN_THREADS);
    set->width = params->width;
    set->height = params->height;
    int n = params->count;
    set->src = calloc((size_t)n, sizeof *set->src);
    set->source_params = calloc((size_t)n, sizeof *set->source_params);
    set->layers = calloc((size_t)n, sizeof *set->layers);
    set->views = calloc((size_t)n, sizeof *set->views);
    glcv_status st = set->src && set->source_params && set->layers && set->views ? GLCV_OK : GLCV_ERROR_OUT_OF_MEMORY;
    for (int i = 0; i < n && st == GLCV_OK; i++) {
        set_source *s = &set->src[i];
        s->params = params->sources[i];
        s->set_logger = params->logger;
        s->log_ready = pthread_mutex_init(&s->log_lock, NULL) == 0;
        if (s->params.location && !(s->location = strdup(s->params.location)))
            st = GLCV_ERROR_OUT_OF_MEMORY;
        s->params.location = s->location;
        set->source_params[i] = s->params;
        /* cpu_share: every k-th source, spread evenly over the list */
        s->cpu = (int)((double)(i + 1) * params->cpu_share) > (int)((double)i * params->cpu_share);
    }
    if (st != GLCV_OK) {
        glcv_media_set_destroy(&set);
        return glcv_fail(lg, st, "media set: out of memory");
    }
    set->p.sources = set->source_params;
    /* texture sets on CUDA make the texture before the sources open (their slots are pinned) */
    if (params->texture && set->width > 0)
        st = make_texture(set);
    if (st == GLCV_OK)
        st = open_all(set);
    if (st != GLCV_OK) {
        glcv_media_set_destroy(&set);
        return st;
    }
    int opened = 0;
    for (int i = 0; i < n; i++)
        opened += set->src[i].media != NULL;
    glcv_logf(lg, GLCV_LOG_INFO, "media set: %d of %d sources open, %dx%d, %s", opened, n, set->width, set->height,
              !params->texture ? "host frames" : set->cuda ? "texture (CUDA conversion)" : "texture (GL upload)");
    *out = set;
    return GLCV_OK;
}

/* ---- reading ------------------------------------------------------------------------------------ */

static glcv_status take_reopened(glcv_media_set *set, int i);

static int running(const set_source *s)
{
    return s->media && s->status == GLCV_OK && !s->ended;
}

static int is_live(const set_source *s)
{
    glcv_media_params got;
    return glcv_media_get_params(s->media, &got) == GLCV_OK && got.mode == GLCV_MEDIA_LIVE;
}

/* Reads source i's next frame with `timeout_ms`; fills out. */
static void read_source(glcv_media_set *set, int i, int timeout_ms, glcv_media_set_frame *out)
{
    set_source *s = &set->src[i];
    glcv_status st;
    if (set->cuda) {
        st = glcv_media_read_picture(s->media, &s->picture, &out->info, timeout_ms);
    } else {
        glcv_image frame;
        st = glcv_media_read(s->media, &frame, &out->info, timeout_ms);
        if (st == GLCV_OK && frame.data)
            s->view = frame;
    }
    if (st != GLCV_OK) {
        s->status = st;
        failure_text(s, "stopped", st, s->text, sizeof s->text);
    } else if (out->info.end_of_stream) {
        s->ended = 1;
    } else if (!out->info.timed_out) {
        out->has_frame = 1;
    }
    out->status = s->status;
}

glcv_status glcv_media_set_read(glcv_media_set *set, glcv_image *frames, glcv_media_set_frame *out, int *running_out,
                                int timeout_ms)
{
    if (running_out)
        *running_out = 0;
    if (!set || !out)
        return glcv_fail(set ? &set->p.logger : NULL, GLCV_ERROR_INVALID_ARGUMENT, "media set: read: NULL set or out");
    if (!set->p.texture && !frames)
        return glcv_fail(&set->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "media set: read: a host set needs frames");
    if (set->p.texture && !glcv_gl_token_current(set->gl))
        return glcv_fail(&set->p.logger, GLCV_ERROR_NO_CONTEXT,
                         "media set: read: the context the set was made in is not current");
    int n = set->p.count;
    /* the last set's conversion reads the pictures that the reads below hand back to the decoders */
    glcv_status waited = glcv_media_cuda_wait(set->cuda);
    if (waited != GLCV_OK)
        return waited;
    for (int i = 0; i < n; i++) {
        glcv_status st = take_reopened(set, i);
        if (st != GLCV_OK)
            return st;
        out[i] = (glcv_media_set_frame){.status = set->src[i].status,
                                        .reopening = atomic_load(&set->src[i].reopen_state) != 0};
    }
    /* files and other sources read in order: their next frame, waited for */
    int live = 0;
    for (int i = 0; i < n; i++) {
        if (!running(&set->src[i]))
            continue;
        if (is_live(&set->src[i]))
            live++;
        else
            read_source(set, i, -1, &out[i]);
    }
    /* live sources: their newest frame, each waited for until the deadline */
    double deadline = now_s() + (timeout_ms >= 0 ? timeout_ms / 1000.0 : 1e30);
    while (live > 0) {
        int waiting = 0;
        for (int i = 0; i < n; i++) {
            set_source *s = &set->src[i];
            if (!running(s) || out[i].has_frame || !is_live(s))
                continue;
            if (glcv_media_ready(s->media))
                read_source(set, i, 0, &out[i]);
            waiting += running(s) && !out[i].has_frame;
        }
        if (waiting == 0 || now_s() >= deadline)
            break;
        struct timespec ts = {0, LIVE_POLL_US * 1000L};
        nanosleep(&ts, NULL);
    }
    glcv_status st = GLCV_OK;
    if (set->p.texture && set->cuda) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (out[i].has_frame)
                set->layers[k++] = (glcv_media_cuda_layer){.layer = i, .picture = set->src[i].picture};
        st = glcv_media_cuda_convert(set->cuda, set->layers, k);
    } else if (set->p.texture) {
        st = upload_layers(set, out);
    }
    int count = 0;
    for (int i = 0; i < n; i++) {
        count += running(&set->src[i]);
        if (frames)
            frames[i] = set->src[i].view;
    }
    if (running_out)
        *running_out = count;
    return st;
}

/* ---- the rest ------------------------------------------------------------------------------------ */

unsigned int glcv_media_set_texture(const glcv_media_set *set)
{
    return set ? set->texture : 0;
}

typedef struct reopen_job {
    glcv_media_set *set;
    int source;
} reopen_job;

static void *reopen_main(void *arg)
{
    reopen_job job = *(reopen_job *)arg;
    free(arg);
    set_source *s = &job.set->src[job.source];
    s->reopen_status = open_media(job.set, job.source, &s->reopened, s->reopen_text, sizeof s->reopen_text);
    atomic_store(&s->reopen_state, 2);
    return NULL;
}

glcv_status glcv_media_set_reopen(glcv_media_set *set, int source)
{
    if (!set)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (source < 0 || source >= set->p.count)
        return glcv_fail(&set->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "media set: reopen: source %d of %d", source,
                         set->p.count);
    set_source *s = &set->src[source];
    if (atomic_load(&s->reopen_state) != 0)
        return glcv_fail(&set->p.logger, GLCV_ERROR_STATE, "media set: reopen: source %d is being opened already",
                         source);
    reopen_job *job = malloc(sizeof *job);
    if (!job)
        return glcv_fail(&set->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "media set: out of memory");
    *job = (reopen_job){set, source};
    s->reopened = NULL;
    atomic_store(&s->reopen_state, 1);
    if (pthread_create(&s->reopen_thread, NULL, reopen_main, job) != 0) {
        atomic_store(&s->reopen_state, 0);
        free(job);
        return glcv_fail(&set->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "media set: cannot start a thread");
    }
    return GLCV_OK;
}

/* Host sets: source i's last frame copied out of its media's slot, which closes next. */
static glcv_status keep_view(glcv_media_set *set, set_source *s)
{
    if (!s->media || !s->view.data || set->p.texture || s->view.data == s->kept.data)
        return GLCV_OK;
    if (!s->kept.data && glcv_image_alloc(set->width, set->height, GLCV_PIXEL_RGB8, &s->kept) != GLCV_OK)
        return glcv_fail(&set->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "media set: out of memory");
    glcv_image_convert(&s->view, &s->kept);
    s->view = s->kept;
    return GLCV_OK;
}

/* Puts a finished reopen in: the old source closes (host sets keep showing its last frame). */
static glcv_status take_reopened(glcv_media_set *set, int i)
{
    set_source *s = &set->src[i];
    if (atomic_load(&s->reopen_state) != 2)
        return GLCV_OK;
    pthread_join(s->reopen_thread, NULL);
    atomic_store(&s->reopen_state, 0);
    if (keep_view(set, s) != GLCV_OK) {
        glcv_media_destroy(&s->reopened);
        return GLCV_ERROR_OUT_OF_MEMORY;
    }
    close_source(s);
    s->media = s->reopened;
    s->reopened = NULL;
    s->status = s->reopen_status;
    s->ended = 0;
    memcpy(s->text, s->reopen_text, sizeof s->text);
    return GLCV_OK;
}

glcv_status glcv_media_set_close(glcv_media_set *set, int source)
{
    if (!set)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (source < 0 || source >= set->p.count)
        return glcv_fail(&set->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "media set: close: source %d of %d", source,
                         set->p.count);
    set_source *s = &set->src[source];
    join_reopen(s);
    /* the last read's conversion may still read the source's picture */
    glcv_status st = glcv_media_cuda_wait(set->cuda);
    if (st != GLCV_OK)
        return st;
    if (s->media && (st = keep_view(set, s)) != GLCV_OK)
        return st;
    close_source(s);
    s->status = GLCV_ERROR_STATE;
    s->ended = 0;
    snprintf(s->text, sizeof s->text, "closed");
    return GLCV_OK;
}

glcv_status glcv_media_set_get_stats(glcv_media_set *set, int source, glcv_media_stats *out,
                                     glcv_media_decoder *decoder)
{
    if (!set || !out || source < 0 || source >= set->p.count)
        return GLCV_ERROR_INVALID_ARGUMENT;
    set_source *s = &set->src[source];
    *out = (glcv_media_stats){0};
    if (s->media)
        glcv_media_get_stats(s->media, out);
    if (decoder)
        *decoder = glcv_media_uses_nvdec(s->media) ? GLCV_MEDIA_DECODER_NVDEC : GLCV_MEDIA_DECODER_CPU;
    return GLCV_OK;
}

glcv_status glcv_media_set_get_params(glcv_media_set *set, glcv_media_set_params *out)
{
    if (!set || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    *out = set->p;
    out->width = set->width;
    out->height = set->height;
    return GLCV_OK;
}

const char *glcv_media_set_describe(glcv_media_set *set, int source)
{
    if (!set || source < 0 || source >= set->p.count)
        return "";
    return set->src[source].text;
}
