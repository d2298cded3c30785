/* Source lists for 'glcv segment --sources FILE': see sources.h.
 *
 * Threads: one per camera set (its GL context current on it: reading the set, the method, the masks
 * read back), a pool of workers that encode and write the PNG files, and this thread, which probes
 * the sources, starts the sets, shows the progress and prints the summary.
 *
 * Why one file of this size: the list's entries, the sets' threads and the PNG workers share the
 * run's state (stop flag, counters, failures, the service's sink) and its lifetime; the parts that
 * stand alone (the media sets, the methods) are modules of their own already. */
#define _GNU_SOURCE /* pthread_timedjoin_np */

#include "sources.h"

#include "pipeline.h"
#include "segmenter.h"

#include <glcv/cuda.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if GLCV_HAVE_FFMPEG
#include <epoxy/gl.h>
#endif

const char *const cli_decoder_names[] = {"auto", "cpu", "nvdec", NULL};

enum {
    MAX_LINE = 4096,
    MAX_SOURCES = 16384,
    PROBE_THREADS = 16,
    QUEUE_PER_WORKER = 64,
    LIVE_WAIT_MS = 100,      /* a set waits this long for its live sources' frames */
    /* The pixels of one set at most: a glcv_bgsub of 640x480 RGB cameras keeps its frames in buffer
     * textures, which NVIDIA's GL caps at 512 MB (about 580 such cameras); larger groups of one size
     * are split into sets of this size, each with its own objects, which the GPU runs one after
     * another. */
    MAX_SET_PIXELS = 64 << 20,
    MAX_SET_MEMBERS = 2048, /* the streams of one glcv_segment, glcv_bgsub or glcv_track at most */
    BACKOFF_MAX_S = 30
};

int cli_gpus(int requested)
{
    glcv_cuda_info info;
    if (requested > 0)
        return requested;
    return glcv_cuda_query(&info) == GLCV_OK && info.devices > 0 ? info.devices : 1;
}

#if !GLCV_HAVE_FFMPEG

int cli_sources_run(const cli_sources_options *o, const cli_args *args)
{
    (void)o, (void)args;
    cli_error("--sources needs media input, and this glcv was built without FFmpeg");
    return CLI_FAIL;
}

#else

/* ---- the list ------------------------------------------------------------------------------------ */

typedef struct entry {
    int line;           /* the list's line, from 0: camLLL */
    char *text;         /* the source as written */
    glcv_media_source kind;
    int live;           /* a URL or a camera: read live, reconnected */
    glcv_media_rtsp_transport transport; /* the line's transport=udp|tcp */
    int realtime;       /* a service's file read at its frame rate */
    int width, height;  /* probed */
    char why[600];      /* why it failed */
    atomic_int failed;  /* reported as failed at least once */
    int set;            /* its set */
    int waiting;        /* a live source whose frame size was unknown at the start: probed again */
    double retry_at, backoff; /* ... next probe (cli_now) and its back-off, by the waiters' threads */
    atomic_int ready;   /* ... probed: width and height known, its set to start */
    atomic_int probing; /* ... a waiter probes it now (the entry's back-off is that waiter's) */
    glcv_rect *rois;    /* the line's roi=x,y,w,h (a work's list) */
    int n_rois;
} entry;

static int is_url(const char *s)
{
    const char *colon = strstr(s, "://");
    if (!colon || colon == s)
        return 0;
    for (const char *p = s; p < colon; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '+'))
            return 0;
    return 1;
}

/* A line's roi=x,y,w,h: appended to the entry's boxes. */
static int add_roi(const char *path, int line, entry *x, const char *text)
{
    char name[MAX_LINE + 32];
    snprintf(name, sizeof name, "%s:%d: roi", path, line + 1);
    glcv_rect r;
    int rc = cli_parse_rect(name, text, &r);
    if (rc != CLI_OK)
        return rc;
    glcv_rect *grown = realloc(x->rois, (size_t)(x->n_rois + 1) * sizeof *grown);
    if (!grown)
        return cli_out_of_memory();
    x->rois = grown;
    x->rois[x->n_rois++] = r;
    return CLI_OK;
}

/* The entry's kind: a camera, a live URL or a video file (a folder is an error, printed with `where`). */
static int classify(entry *x, const char *where)
{
    struct stat st;
    const char *s = x->text;
    if (!strncmp(s, "/dev/video", 10)) {
        x->kind = GLCV_MEDIA_CAMERA;
        x->live = 1;
    } else if (is_url(s)) {
        x->kind = GLCV_MEDIA_VIDEO;
        x->live = 1;
    } else if (stat(s, &st) == 0 && S_ISDIR(st.st_mode)) {
        cli_error("%s: '%s' is a folder: a source of a list is a video file, a URL or a camera", where, s);
        return CLI_FAIL;
    } else {
        x->kind = GLCV_MEDIA_VIDEO;
    }
    return CLI_OK;
}

/* A service's sources (cli_sources_sink), as read_list makes a list's entries. Prints the error. */
static int sink_entries(const cli_sources_sink *k, entry **out, int *count)
{
    entry *e = calloc((size_t)(k->count > 0 ? k->count : 1), sizeof *e);
    int rc = e ? CLI_OK : cli_out_of_memory();
    *out = e;
    *count = 0;
    for (int i = 0; rc == CLI_OK && i < k->count; i++) {
        entry *x = &e[i];
        x->line = i;
        x->transport = (glcv_media_rtsp_transport)k->transports[i];
        x->realtime = k->realtime && k->realtime[i];
        (*count)++;
        if (!(x->text = strdup(k->sources[i])))
            rc = cli_out_of_memory();
        else
            rc = classify(x, k->folders[i]);
    }
    return rc;
}

/* Reads the list: one entry per source line; roi= options when `rois` (the boxes go before the
 * others in line order). Prints the error. */
static int read_list(const char *path, int rois, entry **out, int *count)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        cli_error("cannot read the source list '%s': %s", path, strerror(errno));
        return CLI_FAIL;
    }
    entry *e = NULL;
    int n = 0, cap = 0, rc = CLI_OK;
    char buf[MAX_LINE + 2];
    for (int line = 0; rc == CLI_OK && fgets(buf, sizeof buf, f); line++) {
        size_t len = strlen(buf);
        if (len == sizeof buf - 1 && buf[len - 1] != '\n') {
            cli_error("%s:%d: a line longer than %d characters", path, line + 1, MAX_LINE);
            rc = CLI_FAIL;
            break;
        }
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ' || buf[len - 1] == '\t'))
            buf[--len] = '\0';
        char *s = buf;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s || *s == '#')
            continue;
        /* options after the source, separated by blanks: transport=udp|tcp, roi=x,y,w,h (read
         * from the end: the boxes are reversed after) */
        glcv_media_rtsp_transport transport = GLCV_MEDIA_RTSP_DEFAULT;
        entry opts = {0};
        for (;;) {
            char *blank = strrchr(s, ' '), *tab = strrchr(s, '\t');
            char *sep = blank > tab ? blank : tab;
            if (!sep)
                break;
            const char *v = sep + 1;
            if (!strncmp(v, "transport=", 10)) {
                v += 10;
                if (!strcmp(v, "udp") || !strcmp(v, "tcp")) {
                    transport = !strcmp(v, "tcp") ? GLCV_MEDIA_RTSP_TCP : GLCV_MEDIA_RTSP_UDP;
                } else {
                    cli_error("%s:%d: transport=%s: udp or tcp", path, line + 1, v);
                    rc = CLI_FAIL;
                }
            } else if (!strncmp(v, "roi=", 4)) {
                if (!rois) {
                    cli_error("%s:%d: roi= gives a box to track: it belongs to 'glcv track --sources'", path,
                              line + 1);
                    rc = CLI_FAIL;
                } else {
                    rc = add_roi(path, line, &opts, v + 4);
                }
            } else {
                break;
            }
            if (rc != CLI_OK)
                break;
            while (sep > s && (*sep == ' ' || *sep == '\t'))
                *sep-- = '\0';
        }
        for (int i = 0; i < opts.n_rois / 2; i++) {
            glcv_rect t = opts.rois[i];
            opts.rois[i] = opts.rois[opts.n_rois - 1 - i];
            opts.rois[opts.n_rois - 1 - i] = t;
        }
        if (rc == CLI_OK && n == MAX_SOURCES) {
            cli_error("%s: more than %d sources", path, MAX_SOURCES);
            rc = CLI_FAIL;
        }
        if (rc == CLI_OK && n == cap) {
            cap = cap ? 2 * cap : 64;
            entry *grown = realloc(e, (size_t)cap * sizeof *e);
            if (grown)
                e = grown;
            else
                rc = cli_out_of_memory();
        }
        if (rc != CLI_OK) {
            free(opts.rois);
            break;
        }
        entry *x = &e[n];
        memset(x, 0, sizeof *x);
        x->line = line;
        x->transport = transport;
        x->rois = opts.rois;
        x->n_rois = opts.n_rois;
        n++;
        if (!(x->text = strdup(s))) {
            rc = cli_out_of_memory();
            break;
        }
        char where[MAX_LINE + 32];
        snprintf(where, sizeof where, "%s:%d", path, line + 1);
        rc = classify(x, where);
    }
    if (rc == CLI_OK && ferror(f)) {
        cli_error("cannot read the source list '%s'", path);
        rc = CLI_FAIL;
    }
    fclose(f);
    if (rc == CLI_OK && n == 0) {
        cli_error("the source list '%s' names no source", path);
        rc = CLI_FAIL;
    }
    *out = e;
    *count = n;
    return rc;
}

/* ---- the run -------------------------------------------------------------------------------------- */

typedef struct encode_job {
    char *path;
    glcv_image mask;
    int source; /* entry index, for the error */
    struct encode_job *next;
} encode_job;

typedef struct run run;

typedef struct set_job {
    run *r;
    int *members; /* entry indices, in list order */
    int count;
    int gpu;
    int width, height;
    pthread_t thread;
    int started, joined;
    int rc;
    long frames, learned;
    /* when, in seconds from the run's start: the set's sources were open, the first frames came, the
     * background was learned (0: not), the set ended */
    double opened_at, first_at, learned_at, ended_at;
    atomic_long dropped; /* the members' dropped frames, updated as the set runs */
    char engine_line[256];
} set_job;

struct run {
    const cli_sources_options *o;
    const cli_args *args;
    glcv_logger logger;
    entry *e;
    int n;
    set_job *sets;
    int set_count;
    int waiting;  /* entries waiting for their frame size (their sets are reserved in sets[]) */
    pthread_t waiters[PROBE_THREADS];
    int n_waiters;
    atomic_int waiter_stop;
    double start; /* cli_now() when the sets started */
    /* progress, from every set thread */
    atomic_long frames;
    atomic_int stop;
    /* the encoders */
    pthread_mutex_t lock;
    pthread_cond_t has_job, has_room;
    encode_job *head, *tail;
    int queued, max_queued, workers_stop;
    pthread_t *workers;
    int worker_count;
    atomic_long written;
    atomic_int write_failed;
    pthread_mutex_t print_lock;
};

static const char *list_path(const run *r)
{
    return r->o->list;
}

/* Whether the run is to stop: a set failed, Ctrl-C, or the service's stop. */
static int stopping(run *r)
{
    return atomic_load(&r->stop) || cli_interrupted() || (r->o->sink && atomic_load(r->o->sink->stop));
}

/* Source i's masks' folder under the output folder: camKKK, or the service's name for it. */
static void source_folder(const run *r, int i, char *out, size_t size)
{
    if (r->o->sink)
        snprintf(out, size, "%s", r->o->sink->folders[r->e[i].line]);
    else
        snprintf(out, size, "cam%03d", r->e[i].line);
}

/* One line naming the source and why it failed (once per failure). */
static void report_failure(run *r, int i, const char *why)
{
    entry *x = &r->e[i];
    if (r->o->sink) {
        r->o->sink->down(r->o->sink->user, x->line, why);
    } else {
        pthread_mutex_lock(&r->print_lock);
        cli_error("%s:%d: source '%s' (cam%03d): %s", list_path(r), x->line + 1, x->text, x->line, why);
        pthread_mutex_unlock(&r->print_lock);
    }
    atomic_store(&x->failed, 1);
}

/* ---- the encoders ----------------------------------------------------------------------------------- */

static void *encode_main(void *arg)
{
    run *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->lock);
        while (!r->head && !r->workers_stop)
            pthread_cond_wait(&r->has_job, &r->lock);
        encode_job *j = r->head;
        if (!j) {
            pthread_mutex_unlock(&r->lock);
            return NULL;
        }
        r->head = j->next;
        if (!r->head)
            r->tail = NULL;
        r->queued--;
        pthread_cond_signal(&r->has_room);
        pthread_mutex_unlock(&r->lock);
        glcv_status st = glcv_image_save_png_level(j->path, &j->mask, GLCV_PNG_LEVEL_FAST, &r->logger);
        if (st == GLCV_OK) {
            atomic_fetch_add(&r->written, 1);
        } else if (atomic_exchange(&r->write_failed, 1) == 0) {
            pthread_mutex_lock(&r->print_lock);
            cli_error("cannot write %s: %s", j->path, glcv_status_string(st));
            pthread_mutex_unlock(&r->print_lock);
            atomic_store(&r->stop, 1);
        }
        glcv_image_free(&j->mask);
        free(j->path);
        free(j);
    }
}

/* Queues a mask to write (waits while the queue is full: files are never dropped). Takes `mask`. */
static int queue_mask(run *r, int source, int64_t index, glcv_image *mask)
{
    encode_job *j = calloc(1, sizeof *j);
    char folder[128], name[192];
    source_folder(r, source, folder, sizeof folder);
    snprintf(name, sizeof name, "%s/frame_%06" PRId64, folder, index);
    if (!j || !(j->path = cli_path_join(r->o->outdir, name, "_mask.png"))) {
        free(j);
        glcv_image_free(mask);
        return cli_out_of_memory();
    }
    j->mask = *mask;
    j->source = source;
    *mask = (glcv_image){0};
    pthread_mutex_lock(&r->lock);
    while (r->queued >= r->max_queued && !r->workers_stop)
        pthread_cond_wait(&r->has_room, &r->lock);
    if (r->tail)
        r->tail->next = j;
    else
        r->head = j;
    r->tail = j;
    r->queued++;
    pthread_cond_signal(&r->has_job);
    pthread_mutex_unlock(&r->lock);
    return CLI_OK;
}

static int start_encoders(run *r)
{
    int cpus = cli_online_cpus();
    r->worker_count = r->o->threads > 0 ? r->o->threads : (cpus > 1 ? cpus - 1 : 1);
    r->max_queued = QUEUE_PER_WORKER * r->worker_count;
    r->workers = calloc((size_t)r->worker_count, sizeof *r->workers);
    if (!r->workers)
        return cli_out_of_memory();
    for (int i = 0; i < r->worker_count; i++)
        if (pthread_create(&r->workers[i], NULL, encode_main, r) != 0) {
            r->worker_count = i;
            cli_error("cannot start the encoder threads");
            return CLI_FAIL;
        }
    return CLI_OK;
}

static void stop_encoders(run *r)
{
    pthread_mutex_lock(&r->lock);
    r->workers_stop = 1;
    pthread_cond_broadcast(&r->has_job);
    pthread_cond_broadcast(&r->has_room);
    pthread_mutex_unlock(&r->lock);
    for (int i = 0; i < r->worker_count; i++)
        pthread_join(r->workers[i], NULL);
    free(r->workers);
    r->workers = NULL;
}

/* ---- probing: every source's frame size ------------------------------------------------------------- */

static glcv_media_params source_params(const run *r, const entry *x)
{
    const cli_source *s = r->o->src;
    glcv_media_params p = GLCV_MEDIA_PARAMS(.source = x->kind, .location = x->text, .format = GLCV_PIXEL_RGB8,
                                            .stall_timeout = s->stall_timeout, .rtsp_transport = x->transport);
    p.mode = x->live || x->realtime ? GLCV_MEDIA_LIVE : GLCV_MEDIA_EVERY_FRAME;
    if (s->mode >= 0)
        p.mode = s->mode == 0 ? GLCV_MEDIA_LIVE : GLCV_MEDIA_EVERY_FRAME;
    return p;
}

/* A probe's logger: the first error is the cause that the report names. */
static void keep_first_error(void *user, glcv_log_level level, const char *message)
{
    entry *x = user;
    if (level == GLCV_LOG_ERROR && !x->why[0])
        snprintf(x->why, sizeof x->why, "cannot open: %s", message);
}

typedef struct probe_job {
    run *r;
    atomic_int next;
} probe_job;

/* Opens entry x once to learn its frame size (x->width, x->height; else x->why says why). */
static void probe_entry(const run *r, entry *x)
{
    glcv_media_params p = source_params(r, x);
    p.decoder_threads = 1;
    p.ring_frames = 2;
    p.logger = (glcv_logger){.fn = keep_first_error, .user = x, .max_level = GLCV_LOG_ERROR};
    glcv_media *m = NULL;
    glcv_status st = glcv_media_create(&p, &m);
    if (st == GLCV_OK) {
        glcv_media_params got;
        glcv_media_get_params(m, &got);
        x->width = got.width;
        x->height = got.height;
    } else if (!x->why[0]) {
        snprintf(x->why, sizeof x->why, "cannot open: %s", glcv_status_string(st));
    }
    glcv_media_destroy(&m);
}

static void *probe_main(void *arg)
{
    probe_job *pj = arg;
    for (;;) {
        int i = atomic_fetch_add(&pj->next, 1);
        if (i >= pj->r->n)
            return NULL;
        probe_entry(pj->r, &pj->r->e[i]);
    }
}

/* Probes every source, PROBE_THREADS at a time: a source that does not answer holds one thread for its
 * stall timeout, not the others. */
static void probe_sources(run *r)
{
    probe_job pj = {.r = r};
    atomic_init(&pj.next, 0);
    int threads = r->n < PROBE_THREADS ? r->n : PROBE_THREADS;
    pthread_t tid[PROBE_THREADS];
    int started = 0;
    for (int t = 0; t < threads; t++)
        if (pthread_create(&tid[t], NULL, probe_main, &pj) == 0)
            started++;
    if (started == 0)
        probe_main(&pj);
    for (int t = 0; t < started; t++)
        pthread_join(tid[t], NULL);
}

/* ---- a set's thread ----------------------------------------------------------------------------- */

typedef struct set_state {
    set_job *job;
    glcv_context *ctx;
    cli_subtractor *sub;
    glcv_media_set *set;
    glcv_image *frames;  /* host sets: the set's frames; texture sets: the learned set read back */
    uint8_t *readback;   /* texture sets, learning: the array's pixels */
    glcv_image *masks;   /* per member: where read_masks writes */
    glcv_image scratch;  /* the mask of a member without a new frame */
    glcv_media_set_frame *out;
    double *retry_at, *backoff; /* live members: the next reopen, and the back-off */
    glcv_status *last_status;
    int *ended;          /* the member reached its end (until a reopen brings it back) */
    int64_t *index_base; /* live members: added to the source's frame index (a reopened stream counts on) */
    int64_t *next_index; /* live members: the index after the last frame delivered */
    int *reopened;       /* live members: reopened, not delivered a frame since */
    int *ever_up;        /* live members: delivered a frame once (they hold the run while down) */
    int64_t *index;      /* per member: the index of its frame in this read (a work's frames) */
    int texture;
    int learn_frames;    /* a work's first pass: frames per learning member */
    int *learns;         /* per member: learns in the first pass */
    int *ids, *fresh;    /* per member: its source (a service's run), whether its mask is new */
    int *told_end;       /* a service's run: the file's end was reported */
    int *closed;         /* a service's run: the service no longer runs the member (still() 0): its source closed */
    long *dropped;       /* a service's run: per member its dropped frames */
    int behind;          /* the masks are read one set behind (cli_subtractor_reads_behind) */
    int lends;           /* the masks go to the sink as views of the subtractor's (see deliver) */
    int lent;            /* masks holds such views, lent to the sink until its release */
    int told_lent;       /* --verbose: the first lending was reported */
    int pending;         /* behind: a set processed whose masks are not read yet; of it: */
    int *p_has;          /*   per member: it had a frame */
    int64_t *p_index;    /*   per member: that frame's index */
    glcv_image *p_view;  /*   per member: its frame for its viewers (a service's run; data NULL: none) */
    uint8_t *layer;      /* a service's run, texture sets: one member's frame read back for its viewers */
    GLuint layer_fbo;    /* ... through this framebuffer */
    int opened;          /* the work is open (its close is due) */
    void *work;          /* the work's state */
    cli_set_member *members;
} set_state;

static int set_fail(set_job *j, int rc)
{
    j->rc = rc;
    atomic_store(&j->r->stop, 1);
    return rc;
}

/* Opens (or opens again) the set's sources. */
static int open_media(set_state *s)
{
    set_job *j = s->job;
    run *r = j->r;
    const cli_sources_options *o = r->o;
    glcv_media_params *src = calloc((size_t)j->count, sizeof *src);
    if (!src)
        return cli_out_of_memory();
    for (int k = 0; k < j->count; k++)
        src[k] = source_params(r, &r->e[j->members[k]]);
    static const glcv_media_decoder decoders[] = {GLCV_MEDIA_DECODER_DEFAULT, GLCV_MEDIA_DECODER_CPU,
                                                  GLCV_MEDIA_DECODER_NVDEC};
    glcv_status st = glcv_media_set_create(
        &GLCV_MEDIA_SET_PARAMS(.count = j->count, .sources = src, .width = j->width, .height = j->height,
                               .decoder = decoders[o->decoder], .cpu_share = o->cpu_share, .texture = s->texture,
                               .cuda_device = j->gpu, .logger = o->verbose ? r->logger : (glcv_logger){0}),
        &s->set);
    free(src);
    return st == GLCV_OK ? CLI_OK : cli_lib_error("cannot open the camera set", st);
}

/* Opens the set's context, method (or work) and sources. */
static int set_open(set_state *s)
{
    set_job *j = s->job;
    run *r = j->r;
    const cli_sources_options *o = r->o;
    glcv_engine_mode engine = o->work ? o->work->engine : o->method->seg.engine;
    int rc = CLI_OK;
    if (o->gpus > 1 && engine != GLCV_ENGINE_CPU) {
        glcv_status st = glcv_context_create(
            &GLCV_CONTEXT_PARAMS(.logger = r->logger, .match_cuda_device = 1, .cuda_device = j->gpu), &s->ctx);
        rc = st == GLCV_OK ? CLI_OK : cli_lib_error("cannot create an OpenGL context", st);
    } else {
        rc = cli_context_for_engine(&engine, &r->logger, &s->ctx);
    }
    char engine_name[128] = "";
    if (rc == CLI_OK && o->work) {
        if (!(s->members = calloc((size_t)j->count, sizeof *s->members)) ||
            !(s->learns = calloc((size_t)j->count, sizeof *s->learns)))
            return cli_out_of_memory();
        for (int k = 0; k < j->count; k++) {
            const entry *x = &r->e[j->members[k]];
            s->members[k] = (cli_set_member){x->line, x->text, x->live, x->rois, x->n_rois};
        }
        rc = o->work->open(o->work->user, s->ctx, j->width, j->height, s->members, j->count, &s->work,
                           &s->learn_frames, s->learns, engine_name, sizeof engine_name);
        s->opened = s->work != NULL; /* its close frees what open made, also after an error */
    } else if (rc == CLI_OK) {
        /* masks read one set behind where the method can (their download overlaps the next set) */
        int behind = (o->masks || o->sink) && o->method->method != CLI_METHOD_ETH;
        rc = cli_subtractor_make(o->method, r->args, j->width, j->height, j->count, 0, behind, engine, &r->logger,
                                 &s->sub);
        s->behind = rc == CLI_OK && cli_subtractor_reads_behind(s->sub);
        /* a sink that borrows (release) and no mask files: views of the subtractor's own memory, no copy */
        s->lends = rc == CLI_OK && o->sink && o->sink->release && !o->masks && cli_subtractor_maps(s->sub);
        if (rc == CLI_OK) {
            s->texture = s->sub->engine != GLCV_ENGINE_CPU;
            snprintf(engine_name, sizeof engine_name, "%s", glcv_engine_mode_string(s->sub->engine));
        }
    }
    if (rc == CLI_OK)
        rc = open_media(s);
    if (rc != CLI_OK)
        return rc;
    glcv_status st = GLCV_OK;
    int nvdec = 0;
    for (int k = 0; k < j->count; k++) {
        glcv_media_stats stats;
        glcv_media_decoder d = GLCV_MEDIA_DECODER_CPU;
        glcv_media_set_get_stats(s->set, k, &stats, &d);
        nvdec += d == GLCV_MEDIA_DECODER_NVDEC;
    }
    snprintf(j->engine_line, sizeof j->engine_line, "cam%03d..cam%03d: %d source%s of %dx%d, engine %s on %s, %d decoded by NVDEC",
             r->e[j->members[0]].line, r->e[j->members[j->count - 1]].line, j->count, j->count == 1 ? "" : "s",
             j->width, j->height, engine_name,
             s->ctx ? glcv_context_describe(s->ctx) : "the CPU", nvdec);
    if (!o->quiet) {
        pthread_mutex_lock(&r->print_lock);
        fprintf(stderr, "glcv: %s\n", j->engine_line);
        pthread_mutex_unlock(&r->print_lock);
    }
    size_t n = (size_t)j->count;
    s->frames = calloc(n, sizeof *s->frames);
    s->masks = calloc(n, sizeof *s->masks);
    s->out = calloc(n, sizeof *s->out);
    s->retry_at = calloc(n, sizeof *s->retry_at);
    s->backoff = calloc(n, sizeof *s->backoff);
    s->last_status = calloc(n, sizeof *s->last_status);
    s->ended = calloc(n, sizeof *s->ended);
    s->index_base = calloc(n, sizeof *s->index_base);
    s->next_index = calloc(n, sizeof *s->next_index);
    s->reopened = calloc(n, sizeof *s->reopened);
    s->ever_up = calloc(n, sizeof *s->ever_up);
    s->index = calloc(n, sizeof *s->index);
    s->fresh = calloc(n, sizeof *s->fresh);
    s->p_has = calloc(n, sizeof *s->p_has);
    s->p_index = calloc(n, sizeof *s->p_index);
    s->p_view = calloc(n, sizeof *s->p_view);
    if (!s->frames || !s->masks || !s->out || !s->retry_at || !s->backoff || !s->last_status || !s->ended ||
        !s->index_base || !s->next_index || !s->reopened || !s->ever_up || !s->index || !s->fresh || !s->p_has ||
        !s->p_index || !s->p_view)
        return cli_out_of_memory();
    if (o->sink) {
        s->ids = calloc(n, sizeof *s->ids);
        s->dropped = calloc(n, sizeof *s->dropped);
        s->told_end = calloc(n, sizeof *s->told_end);
        s->closed = calloc(n, sizeof *s->closed);
        if (!s->ids || !s->dropped || !s->told_end || !s->closed)
            return cli_out_of_memory();
        for (int k = 0; k < j->count; k++) {
            s->ids[k] = r->e[j->members[k]].line;
            if (o->sink->first_index)
                s->index_base[k] = s->next_index[k] = o->sink->first_index[s->ids[k]];
        }
    }
    if (o->sink)
        o->sink->open(o->sink->user, s->ids, j->count, j->width, j->height);
    if (o->work)
        return CLI_OK;
    if (glcv_image_alloc(j->width, j->height, GLCV_PIXEL_GRAY8, &s->scratch) != GLCV_OK)
        return cli_out_of_memory();
    /* the background: one file for every member, or learning from the first sets */
    if (o->background) {
        glcv_image bg = {0};
        rc = cli_load_rgb(o->background, &r->logger, &bg);
        if (rc == CLI_OK && (bg.width != j->width || bg.height != j->height)) {
            cli_error("%s is %dx%d but the sources of cam%03d.. are %dx%d", o->background, bg.width, bg.height,
                      r->e[j->members[0]].line, j->width, j->height);
            rc = CLI_FAIL;
        }
        if (rc == CLI_OK)
            rc = cli_subtractor_set_background(s->sub, &bg, o->background);
        glcv_image_free(&bg);
    } else if (o->learn > 0) {
        st = cli_subtractor_learn_begin(s->sub);
        if (st != GLCV_OK)
            rc = cli_lib_error("cannot start learning the background", st);
    }
    return rc;
}

/* The sink is done with the masks it was lent (called before they change: the next set processed,
 * the set's end). */
static void release_masks(set_state *s)
{
    const cli_sources_sink *k = s->job->r->o->sink;
    if (s->lent && k && k->release)
        k->release(k->user, s->ids, s->job->count);
    s->lent = 0;
}

static void set_close(set_state *s, int ok)
{
    release_masks(s);
    if (s->layer_fbo)
        glDeleteFramebuffers(1, &s->layer_fbo); /* the set's context is current */
    free(s->layer);
    for (int k = 0; s->p_view && k < s->job->count; k++)
        glcv_image_free(&s->p_view[k]);
    free(s->p_view);
    free(s->p_has);
    free(s->p_index);
    glcv_media_set_destroy(&s->set);
    if (s->opened)
        s->job->r->o->work->close(s->work, ok);
    cli_subtractor_destroy(&s->sub);
    glcv_context_destroy(&s->ctx);
    glcv_image_free(&s->scratch);
    free(s->frames);
    free(s->readback);
    free(s->masks);
    free(s->out);
    free(s->retry_at);
    free(s->backoff);
    free(s->last_status);
    free(s->ended);
    free(s->index_base);
    free(s->next_index);
    free(s->reopened);
    free(s->ever_up);
    free(s->index);
    free(s->learns);
    free(s->members);
    free(s->ids);
    free(s->closed);
    free(s->fresh);
    free(s->dropped);
    free(s->told_end);
}

/* Texture sets while learning: the array read back, as RGBA8 frames. */
static glcv_status read_back(set_state *s)
{
    set_job *j = s->job;
    size_t layer = (size_t)j->width * (size_t)j->height * 4;
    if (!s->readback && !(s->readback = malloc(layer * (size_t)j->count)))
        return GLCV_ERROR_OUT_OF_MEMORY;
    GLint bound = 0, align = 4;
    glGetIntegerv(GL_TEXTURE_BINDING_2D_ARRAY, &bound);
    glGetIntegerv(GL_PACK_ALIGNMENT, &align);
    glBindTexture(GL_TEXTURE_2D_ARRAY, glcv_media_set_texture(s->set));
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glGetTexImage(GL_TEXTURE_2D_ARRAY, 0, GL_RGBA, GL_UNSIGNED_BYTE, s->readback);
    glPixelStorei(GL_PACK_ALIGNMENT, align);
    glBindTexture(GL_TEXTURE_2D_ARRAY, (GLuint)bound);
    for (int k = 0; k < j->count; k++)
        s->frames[k] = (glcv_image){s->readback + layer * (size_t)k, j->width, j->height, 0, GLCV_PIXEL_RGBA8};
    return glGetError() == GL_NO_ERROR ? GLCV_OK : GLCV_ERROR_GL;
}

/* A service's run: member k's frame for its viewers (sink->frame), from the host set, or read back
 * from its layer of a texture set as RGBA8. */
static glcv_status member_frame(set_state *s, int k, glcv_image *out)
{
    set_job *j = s->job;
    if (!s->texture) {
        *out = s->frames[k];
        return GLCV_OK;
    }
    if (!s->layer && !(s->layer = malloc((size_t)j->width * (size_t)j->height * 4)))
        return GLCV_ERROR_OUT_OF_MEMORY;
    GLint bound = 0, align = 4;
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &bound);
    glGetIntegerv(GL_PACK_ALIGNMENT, &align);
    if (!s->layer_fbo)
        glGenFramebuffers(1, &s->layer_fbo);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, s->layer_fbo);
    glFramebufferTextureLayer(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, glcv_media_set_texture(s->set), 0, k);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, j->width, j->height, GL_RGBA, GL_UNSIGNED_BYTE, s->layer);
    glPixelStorei(GL_PACK_ALIGNMENT, align);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, (GLuint)bound);
    *out = (glcv_image){s->layer, j->width, j->height, 0, GLCV_PIXEL_RGBA8};
    return glGetError() == GL_NO_ERROR ? GLCV_OK : GLCV_ERROR_GL;
}

/* A service's run, masks read behind: copies of this set's watched members' frames (sink->wanted),
 * for when their masks come. */
static void keep_views(set_state *s)
{
    const cli_sources_sink *k = s->job->r->o->sink;
    for (int m = 0; m < s->job->count; m++) {
        glcv_image frame;
        s->p_view[m].width = 0; /* none unless copied below (the pixels stay allocated for the next) */
        if (!k || !k->frame || !s->out[m].has_frame || !k->wanted(k->user, s->ids[m]) ||
            member_frame(s, m, &frame) != GLCV_OK)
            continue;
        glcv_image *v = &s->p_view[m];
        int bpp = glcv_pixel_format_size(frame.format);
        size_t row = (size_t)frame.width * (size_t)bpp, stride = frame.stride ? frame.stride : row;
        if (v->data && (v->format != frame.format || (size_t)v->height * v->stride < (size_t)frame.height * row))
            glcv_image_free(v);
        if (!v->data && glcv_image_alloc(frame.width, frame.height, frame.format, v) != GLCV_OK)
            continue;
        v->width = frame.width;
        v->height = frame.height;
        v->stride = row;
        for (int y = 0; y < frame.height; y++)
            memcpy(v->data + (size_t)y * row, frame.data + (size_t)y * stride, row);
    }
}

/* Reads the masks of the set `age` sets before the newest (0: the newest) and hands them on: to the
 * sink (and, for its viewers, the watched members' frames: read from the set now when `views` is
 * NULL, else views[k] where its width is not 0) and to the PNG writers. has[k], index[k]: the members
 * that had a frame in that set, and the frames' indices. Returns CLI_OK, or fails the set. */
static int deliver(set_state *s, int age, const int *has, const int64_t *index, const glcv_image *views)
{
    set_job *j = s->job;
    run *r = j->r;
    const cli_sources_options *o = r->o;
    glcv_status st = GLCV_OK;
    int lend = s->lends;
    if (lend) {
        st = cli_subtractor_map_masks_age(s->sub, s->masks, age);
        for (int k = 0; k < j->count; k++)
            if (!has[k] || st != GLCV_OK)
                s->masks[k] = s->scratch;
        s->lent = st == GLCV_OK;
        if (s->lent && o->verbose && !s->told_lent) {
            char first[128];
            source_folder(r, j->members[0], first, sizeof first);
            pthread_mutex_lock(&r->print_lock);
            fprintf(stderr, "glcv: the set of %s (%d source%s): masks lent in place, not copied\n", first, j->count,
                    j->count == 1 ? "" : "s");
            pthread_mutex_unlock(&r->print_lock);
            s->told_lent = 1;
        }
    } else {
        for (int k = 0; k < j->count; k++) {
            s->masks[k] = s->scratch;
            if (st == GLCV_OK && has[k] &&
                (st = glcv_image_alloc(j->width, j->height, GLCV_PIXEL_GRAY8, &s->masks[k])) != GLCV_OK)
                s->masks[k] = s->scratch;
        }
        if (st == GLCV_OK)
            st = cli_subtractor_read_masks_age(s->sub, s->masks, age);
    }
    if (st != GLCV_OK) {
        for (int k = 0; !lend && k < j->count; k++)
            if (s->masks[k].data && s->masks[k].data != s->scratch.data)
                glcv_image_free(&s->masks[k]);
        return set_fail(j, cli_lib_error("cannot segment the camera set", st));
    }
    if (o->sink) {
        for (int k = 0; k < j->count; k++) {
            s->fresh[k] = s->masks[k].data != s->scratch.data;
            s->index[k] = index[k];
            glcv_image frame;
            if (!s->fresh[k] || !o->sink->frame)
                continue;
            if (views ? views[k].width > 0
                      : o->sink->wanted(o->sink->user, s->ids[k]) && member_frame(s, k, &frame) == GLCV_OK)
                o->sink->frame(o->sink->user, s->ids[k], views ? &views[k] : &frame, &s->masks[k], index[k]);
        }
        o->sink->masks(o->sink->user, s->ids, j->count, s->masks, s->fresh, s->index, lend);
    }
    if (lend)
        return CLI_OK; /* views: nothing to free, and no files (lending needs !o->masks) */
    for (int k = 0; k < j->count; k++) {
        if (s->masks[k].data == s->scratch.data || !s->masks[k].data) /* none, or the sink's now */
            continue;
        if (!o->masks) {
            glcv_image_free(&s->masks[k]);
            continue;
        }
        if (queue_mask(r, j->members[k], index[k], &s->masks[k]) != CLI_OK)
            return set_fail(j, CLI_FAIL);
    }
    return CLI_OK;
}

/* A service's run: members that the service no longer runs (removed by a reload, handed to another
 * instance) close their sources at once, rather than decoding on until the set stops; they deliver
 * nothing more, are reported nowhere, and no longer hold the run. */
static void close_unwanted(set_state *s)
{
    set_job *j = s->job;
    const cli_sources_sink *sink = j->r->o->sink;
    if (!sink || !sink->still)
        return;
    for (int k = 0; k < j->count; k++) {
        if (s->closed[k] || sink->still(sink->user, s->ids[k]))
            continue;
        glcv_status st = glcv_media_set_close(s->set, k);
        if (st != GLCV_OK)
            cli_lib_error("cannot close a source the service no longer runs", st);
        s->closed[k] = 1;
        s->out[k] = (glcv_media_set_frame){.status = GLCV_ERROR_STATE};
        s->last_status[k] = GLCV_ERROR_STATE;
        s->retry_at[k] = 0;
    }
}

/* What happened to each member in the last read: failures reported once, live members scheduled
 * for a reopen with back-off. */
static void watch_members(set_state *s, double now)
{
    set_job *j = s->job;
    run *r = j->r;
    for (int k = 0; k < j->count; k++) {
        if (s->closed && s->closed[k])
            continue;
        const glcv_media_set_frame *f = &s->out[k];
        entry *x = &r->e[j->members[k]];
        if (f->status != GLCV_OK && f->status != s->last_status[k] && !f->reopening) {
            report_failure(r, j->members[k], glcv_media_set_describe(s->set, k));
            if (x->live) {
                s->backoff[k] = s->backoff[k] > 0 ? (s->backoff[k] * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S
                                                                                          : s->backoff[k] * 2)
                                                  : 1.0;
                s->retry_at[k] = now + s->backoff[k];
            }
        }
        if (f->status == GLCV_OK && f->has_frame && s->last_status[k] != GLCV_OK)
            s->backoff[k] = 0; /* back up: the next failure waits 1 s again */
        if (!f->reopening)
            s->last_status[k] = f->status;
        /* a live source that ended (a stream that closed, a server that went away) failed too */
        if (x->live && f->status == GLCV_OK && f->info.end_of_stream && s->retry_at[k] == 0) {
            report_failure(r, j->members[k], "the stream ended");
            s->backoff[k] = s->backoff[k] > 0 ? s->backoff[k] : 1.0;
            s->retry_at[k] = now + s->backoff[k];
        }
        if (x->live && s->retry_at[k] > 0 && now >= s->retry_at[k] && !f->reopening) {
            s->retry_at[k] = 0;
            if (glcv_media_set_reopen(s->set, k) == GLCV_OK)
                s->reopened[k] = 1;
        }
        /* a reopened live source counts its frames on from where it stopped: its masks' names go on */
        if (f->has_frame) {
            if (s->reopened[k]) {
                s->index_base[k] = s->next_index[k];
                s->reopened[k] = 0;
            }
            s->next_index[k] = s->index_base[k] + f->info.index + 1;
        }
    }
}

/* A work's first pass: up to s->learn_frames frames of each learning member from its start (fewer
 * with --max-frames), then learn_end, and the sources opened again. Failures are reported by the
 * run that follows (it meets them again). */
static int learn_pass(set_state *s)
{
    set_job *j = s->job;
    run *r = j->r;
    const cli_sources_work *w = r->o->work;
    int limit = s->learn_frames, rc = CLI_OK;
    if (r->o->src->max_frames > 0 && r->o->src->max_frames < limit)
        limit = r->o->src->max_frames;
    int *learned = calloc((size_t)j->count, sizeof *learned), live = 0;
    if (!learned)
        return cli_out_of_memory();
    for (int k = 0; k < j->count; k++)
        live += r->e[j->members[k]].live;
    while (rc == CLI_OK && !stopping(r)) {
        glcv_status st = glcv_media_set_read(s->set, s->frames, s->out, NULL, live ? LIVE_WAIT_MS : -1);
        if (st != GLCV_OK) {
            rc = cli_lib_error("cannot read the camera set", st);
            break;
        }
        int waiting = 0;
        for (int k = 0; k < j->count && rc == CLI_OK; k++) {
            const glcv_media_set_frame *f = &s->out[k];
            if (!s->learns[k] || learned[k] >= limit)
                continue;
            if (f->has_frame) {
                rc = w->learn(s->work, k, &s->frames[k]);
                learned[k]++;
            }
            if (f->status != GLCV_OK || f->info.end_of_stream) /* said once: the member is done */
                learned[k] = limit;
            waiting += learned[k] < limit;
        }
        if (waiting == 0)
            break;
    }
    free(learned);
    if (rc == CLI_OK && !stopping(r))
        rc = w->learn_end(s->work);
    glcv_media_set_destroy(&s->set);
    if (rc == CLI_OK)
        rc = open_media(s);
    return rc;
}

/* A work's frames: each member's frame index, then the work. */
static int work_frames(set_state *s)
{
    for (int k = 0; k < s->job->count; k++)
        s->index[k] = s->index_base[k] + s->out[k].info.index;
    return s->job->r->o->work->frames(s->work, s->frames, s->out, s->index);
}

static void *set_main(void *arg)
{
    set_job *j = arg;
    run *r = j->r;
    const cli_sources_options *o = r->o;
    set_state s = {.job = j};
    int rc = set_open(&s);
    j->opened_at = cli_now() - r->start;
    if (rc == CLI_OK && o->work && s.learn_frames > 0) {
        rc = learn_pass(&s);
        j->learned_at = cli_now() - r->start;
    }
    if (rc != CLI_OK) {
        set_fail(j, rc);
        set_close(&s, 0);
        return NULL;
    }
    int live = 0;
    for (int k = 0; k < j->count; k++)
        live += r->e[j->members[k]].live;
    int64_t sets = 0;
    int learning = o->learn > 0 && !o->background;
    double last_count = 0, read_ms = 0, process_ms = 0;
    int want_masks = o->masks || o->sink;
    while (!stopping(r)) {
        double read_at = cli_now();
        glcv_status st = glcv_media_set_read(s.set, s.texture ? NULL : s.frames, s.out, NULL, live ? LIVE_WAIT_MS : -1);
        if (st != GLCV_OK) {
            set_fail(j, cli_lib_error("cannot read the camera set", st));
            break;
        }
        double now = cli_now();
        read_ms = (now - read_at) * 1e3;
        close_unwanted(&s);
        if (s.pending) { /* a member fails or ends now: its last masks go out before it is reported */
            int ending = 0;
            for (int k = 0; k < j->count; k++)
                ending |= (s.out[k].status != GLCV_OK && s.out[k].status != s.last_status[k]) ||
                          (s.out[k].info.end_of_stream && !s.ended[k]);
            if (ending && deliver(&s, 0, s.p_has, s.p_index, s.p_view) != CLI_OK)
                break;
            s.pending = s.pending && !ending;
        }
        watch_members(&s, now);
        int fresh = 0, files_up = 0, live_up = 0;
        for (int k = 0; k < j->count; k++) {
            if (s.closed && s.closed[k])
                continue;
            fresh += s.out[k].has_frame;
            if (s.out[k].info.end_of_stream)
                s.ended[k] = 1;
            else if (s.out[k].has_frame)
                s.ended[k] = 0;
            int up = s.out[k].status == GLCV_OK && !s.ended[k];
            if (r->e[j->members[k]].live) {
                s.ever_up[k] |= s.out[k].has_frame;
                live_up += up || s.ever_up[k]; /* one that ran comes back: it holds the run while down */
            } else {
                files_up += up;
            }
        }
        if (fresh > 0 && j->first_at == 0)
            j->first_at = now - r->start;
        if (fresh > 0 && o->work) {
            if ((rc = work_frames(&s)) != CLI_OK) {
                set_fail(j, rc);
                break;
            }
            j->frames += fresh;
            atomic_fetch_add(&r->frames, fresh);
            sets++;
        } else if (fresh > 0) {
            if (learning) {
                if (s.texture)
                    st = read_back(&s);
                if (st == GLCV_OK)
                    st = cli_subtractor_learn_add(s.sub, s.frames);
                if (st != GLCV_OK) {
                    set_fail(j, cli_lib_error("cannot learn the background", st));
                    break;
                }
                j->learned += fresh;
                if (sets + 1 == o->learn) {
                    rc = cli_subtractor_learn_end(s.sub, o->learn, o->verbose || j->count <= 8 ? !o->quiet : 0);
                    if (rc != CLI_OK) {
                        set_fail(j, rc);
                        break;
                    }
                    learning = 0;
                    j->learned_at = cli_now() - r->start;
                }
            } else {
                release_masks(&s); /* the masks lent to the sink change from here */
                st = s.texture ? cli_subtractor_frames_texture(s.sub, glcv_media_set_texture(s.set), 0)
                               : cli_subtractor_frames(s.sub, s.frames, 0);
                if (st != GLCV_OK) {
                    set_fail(j, cli_lib_error("cannot segment the camera set", st));
                    break;
                }
                for (int k = 0; k < j->count; k++) {
                    s.index[k] = s.index_base[k] + s.out[k].info.index;
                    s.fresh[k] = s.out[k].has_frame;
                }
                if (want_masks && s.behind) {
                    /* the set before's masks (downloaded meanwhile), then this one waits for the next */
                    if (s.pending && deliver(&s, 1, s.p_has, s.p_index, s.p_view) != CLI_OK)
                        break;
                    for (int k = 0; k < j->count; k++) { /* (deliver used s.index and s.fresh for the set before) */
                        s.p_has[k] = s.out[k].has_frame;
                        s.p_index[k] = s.index_base[k] + s.out[k].info.index;
                    }
                    keep_views(&s);
                    s.pending = 1;
                } else if (want_masks && deliver(&s, 0, s.fresh, s.index, NULL) != CLI_OK) {
                    break;
                }
                process_ms = (cli_now() - now) * 1e3;
                j->frames += fresh;
                atomic_fetch_add(&r->frames, fresh);
            }
            sets++;
        } else if (s.pending && deliver(&s, 0, s.p_has, s.p_index, s.p_view) == CLI_OK) {
            s.pending = 0; /* nothing new this read: the last set's masks now */
        }
        /* a file's end, after its last mask (live sources' ends are failures: watch_members) */
        for (int k = 0; o->sink && k < j->count; k++) {
            if (s.ended[k] && !s.told_end[k] && !r->e[j->members[k]].live)
                o->sink->down(o->sink->user, s.ids[k], "the file ended");
            s.told_end[k] = s.ended[k];
        }
        if (now - last_count >= 1.0) { /* the dropped frames, for the progress line */
            long dropped = 0;
            for (int k = 0; k < j->count; k++) {
                glcv_media_stats stats;
                long d = glcv_media_set_get_stats(s.set, k, &stats, NULL) == GLCV_OK ? (long)stats.dropped : 0;
                dropped += d;
                if (o->sink)
                    s.dropped[k] = d;
            }
            atomic_store(&j->dropped, dropped); /* of the streams open now */
            if (o->sink)
                o->sink->stats(o->sink->user, s.ids, j->count, s.dropped, read_ms, process_ms);
            last_count = now;
        }
        if (o->src->max_frames > 0 && sets >= o->src->max_frames)
            break;
        /* the end: no file left and no live source that ran (one that never opened does not hold the run) */
        if (files_up == 0 && live_up == 0)
            break;
        if (fresh == 0 && files_up == 0) { /* live sources only, none had a frame: do not spin */
            struct timespec pause = {0, 20 * 1000000L};
            nanosleep(&pause, NULL);
        }
    }
    if (s.pending && j->rc == CLI_OK) /* the last set's masks */
        deliver(&s, 0, s.p_has, s.p_index, s.p_view);
    if (learning && j->rc == CLI_OK && !stopping(r)) {
        pthread_mutex_lock(&r->print_lock);
        cli_error("--learn %d: the sources of cam%03d.. ended after %" PRId64 " frame set%s, with none left to segment",
                  o->learn, r->e[j->members[0]].line, sets, sets == 1 ? "" : "s");
        pthread_mutex_unlock(&r->print_lock);
        j->rc = CLI_FAIL;
    }
    long dropped = 0;
    for (int k = 0; k < j->count; k++) {
        glcv_media_stats stats;
        if (glcv_media_set_get_stats(s.set, k, &stats, NULL) == GLCV_OK)
            dropped += (long)stats.dropped;
    }
    atomic_store(&j->dropped, dropped);
    j->ended_at = cli_now() - r->start;
    set_close(&s, j->rc == CLI_OK);
    return NULL;
}

/* ---- the command ------------------------------------------------------------------------------------ */

/* Groups the probed sources by frame size (--size: one set) and splits each over the GPUs. */
static int plan_sets(run *r)
{
    const cli_sources_options *o = r->o;
    int *size_of = calloc((size_t)r->n, sizeof *size_of); /* per entry: its size group, -1 none */
    int (*sizes)[2] = calloc((size_t)r->n, sizeof *sizes);
    int groups = 0;
    if (!size_of || !sizes) {
        free(size_of);
        free(sizes);
        return cli_out_of_memory();
    }
    for (int i = 0; i < r->n; i++) {
        entry *x = &r->e[i];
        size_of[i] = -1;
        if (o->src->size.width) {
            x->width = o->src->size.width;
            x->height = o->src->size.height;
        } else if (x->width == 0) {
            char why[800];
            snprintf(why, sizeof why, "%s%s", x->why,
                     x->live ? " (opened again after 1, 2, 4 ... 30 s while other sources run; once it opens, its "
                               "frame size known, it gets a camera set of its own)"
                             : "");
            report_failure(r, i, why);
            if (x->live) {
                x->waiting = 1;
                x->backoff = 1.0;
                x->retry_at = cli_now() + x->backoff;
                r->waiting++;
            }
            continue;
        }
        int g = 0;
        while (g < groups && (sizes[g][0] != x->width || sizes[g][1] != x->height))
            g++;
        if (g == groups) {
            sizes[g][0] = x->width;
            sizes[g][1] = x->height;
            groups++;
        }
        size_of[i] = g;
    }
    int rc = CLI_OK, capacity = 0;
    for (int g = 0; g < groups && rc == CLI_OK; g++) {
        int members = 0;
        for (int i = 0; i < r->n; i++)
            members += size_of[i] == g;
        long long pixels = (long long)sizes[g][0] * sizes[g][1];
        int by_size = (int)(((long long)members * pixels + MAX_SET_PIXELS - 1) / MAX_SET_PIXELS);
        int parts = by_size > o->gpus ? by_size : o->gpus;
        parts = parts < members ? parts : members;
        /* members of one set at most: the objects' stream limit, and a work's boxes per set */
        int most = MAX_SET_MEMBERS, boxes = 1;
        for (int i = 0; o->work && i < r->n; i++)
            if (size_of[i] == g && r->e[i].n_rois > boxes)
                boxes = r->e[i].n_rois;
        if (o->work && o->work->max_set_objects / boxes < most)
            most = o->work->max_set_objects / boxes > 0 ? o->work->max_set_objects / boxes : 1;
        if ((members + parts - 1) / parts > most)
            parts = (members + most - 1) / most;
        int per = (members + parts - 1) / parts, k = 0;
        if (r->set_count + parts > capacity) {
            capacity = 2 * (r->set_count + parts);
            set_job *grown = realloc(r->sets, (size_t)capacity * sizeof *grown);
            if (!grown) {
                rc = cli_out_of_memory();
                break;
            }
            r->sets = grown;
        }
        for (int p = 0; p < parts && rc == CLI_OK; p++) {
            set_job *j = &r->sets[r->set_count++];
            *j = (set_job){.r = r, .gpu = p % o->gpus, .width = sizes[g][0], .height = sizes[g][1]};
            atomic_init(&j->dropped, 0);
            if (!(j->members = calloc((size_t)per, sizeof *j->members)))
                rc = cli_out_of_memory();
            for (int i = 0; i < r->n && rc == CLI_OK && j->count < per; i++)
                if (size_of[i] == g && k-- <= 0) {
                    j->members[j->count++] = i;
                    r->e[i].set = r->set_count - 1;
                }
            k = (p + 1) * per;
        }
    }
    free(size_of);
    free(sizes);
    /* room for the sets of the sources that may open later: sets[] never moves once threads run */
    if (rc == CLI_OK && r->waiting > 0 && r->set_count + r->waiting > capacity) {
        set_job *grown = realloc(r->sets, (size_t)(r->set_count + r->waiting) * sizeof *grown);
        if (grown)
            r->sets = grown;
        else
            rc = cli_out_of_memory();
    }
    return rc;
}

/* ---- live sources that could not be opened at the start ------------------------------------------- */

/* A waiter's thread (up to PROBE_THREADS of them): takes a waiting source whose back-off has passed (1, 2,
 * 4 ... 30 s), probes it, and goes on to the next; one that opens is marked ready, and the run's thread
 * starts its set. Each source is probed by one waiter at a time, and each waiter takes the sources as they
 * fall due, so that one that accepts a connection and never answers holds one waiter for its stall
 * timeout, not the retries of the others. */
static void *waiter_main(void *arg)
{
    run *r = arg;
    const cli_sources_sink *k = r->o->sink;
    while (!atomic_load(&r->waiter_stop) && !stopping(r)) {
        int probed = 0;
        for (int i = 0; i < r->n && !atomic_load(&r->waiter_stop) && !stopping(r); i++) {
            entry *x = &r->e[i];
            int idle = 0;
            /* ready first: once it is set, the run's thread owns the entry again; then the entry is
             * this waiter's until it lets go of `probing` */
            if (atomic_load(&x->ready) || !x->waiting || !atomic_compare_exchange_strong(&x->probing, &idle, 1))
                continue;
            if (cli_now() < x->retry_at) {
                atomic_store(&x->probing, 0);
                continue;
            }
            if (k && k->still && !k->still(k->user, x->line)) {
                atomic_store(&x->ready, 1); /* removed from the service: never probed again (no set either) */
                atomic_store(&x->probing, 0);
                continue;
            }
            x->why[0] = '\0';
            probe_entry(r, x);
            probed = 1;
            if (x->width > 0) {
                atomic_store(&x->ready, 1);
            } else {
                x->backoff = x->backoff * 2 < BACKOFF_MAX_S ? x->backoff * 2 : BACKOFF_MAX_S;
                x->retry_at = cli_now() + x->backoff;
                if (r->o->verbose) {
                    pthread_mutex_lock(&r->print_lock);
                    fprintf(stderr, "glcv: source '%s' (line %d): %s; again in %.0f s\n", x->text, x->line + 1,
                            x->why, x->backoff);
                    pthread_mutex_unlock(&r->print_lock);
                }
            }
            atomic_store(&x->probing, 0);
        }
        if (!probed) {
            struct timespec pause = {0, 100 * 1000000L};
            nanosleep(&pause, NULL);
        }
    }
    return NULL;
}

static void *set_main(void *arg);

/* Starts a set of its own for each waiting source that opened; 1 when one was started. */
static int start_ready_sets(run *r, int *rc)
{
    const cli_sources_options *o = r->o;
    int started = 0;
    for (int i = 0; i < r->n && *rc == CLI_OK && !stopping(r); i++) {
        entry *x = &r->e[i];
        if (!x->waiting || !atomic_load(&x->ready))
            continue;
        x->waiting = 0;
        r->waiting--;
        if (o->sink && o->sink->still && !o->sink->still(o->sink->user, x->line))
            continue; /* removed from the service meanwhile */
        set_job *j = &r->sets[r->set_count];
        *j = (set_job){.r = r, .gpu = r->set_count % o->gpus, .width = x->width, .height = x->height, .count = 1};
        atomic_init(&j->dropped, 0);
        if (!(j->members = malloc(sizeof *j->members))) {
            *rc = cli_out_of_memory();
            break;
        }
        j->members[0] = i;
        x->set = r->set_count;
        if (o->masks) {
            char name[128];
            source_folder(r, i, name, sizeof name);
            char *dir = cli_path_join(o->outdir, name, "");
            *rc = dir ? cli_make_dir(dir) : cli_out_of_memory();
            free(dir);
            if (*rc != CLI_OK) {
                free(j->members);
                break;
            }
        }
        if (!o->quiet && !o->sink) {
            pthread_mutex_lock(&r->print_lock);
            fprintf(stderr, "glcv: source '%s' (cam%03d) opened: %dx%d, in a camera set of its own\n", x->text,
                    x->line, x->width, x->height);
            pthread_mutex_unlock(&r->print_lock);
        }
        r->set_count++;
        j->started = pthread_create(&j->thread, NULL, set_main, j) == 0;
        if (!j->started) {
            cli_error("cannot start a thread for the camera sets");
            *rc = CLI_FAIL;
            atomic_store(&r->stop, 1);
        }
        started = 1;
    }
    return started;
}

static void show_progress(run *r, double start, double *last, long *last_frames, int final)
{
    double now = cli_now();
    if (!final && now - *last < (isatty(2) ? 1.0 : 10.0))
        return;
    long frames = atomic_load(&r->frames), dropped = 0;
    for (int k = 0; k < r->set_count; k++)
        dropped += atomic_load(&r->sets[k].dropped);
    double fps = now > *last ? (double)(frames - *last_frames) / (now - *last) : 0.0;
    int failed = 0;
    for (int i = 0; i < r->n; i++)
        failed += atomic_load(&r->e[i].failed);
    pthread_mutex_lock(&r->print_lock);
    fprintf(stderr, "%sglcv: %d cameras in %d set%s, %d failed so far: %ld frames, %.1f frames/s, %ld dropped, %.0f s%s",
            isatty(2) ? "\r" : "", r->n, r->set_count, r->set_count == 1 ? "" : "s", failed, frames, fps, dropped,
            now - start, isatty(2) && !final ? "   " : "\n");
    fflush(stderr);
    pthread_mutex_unlock(&r->print_lock);
    *last = now;
    *last_frames = frames;
}

/* A work's list: the boxes of lines that give none (--roi), or the error. */
static int check_boxes(run *r)
{
    const cli_sources_work *w = r->o->work;
    for (int i = 0; i < r->n; i++) {
        entry *x = &r->e[i];
        if (x->n_rois > 0)
            continue;
        if (w->n_rois == 0) {
            cli_error("%s:%d: no box for '%s': give roi=x,y,w,h after the source (or --roi for every line)",
                      r->o->list, x->line + 1, x->text);
            return CLI_FAIL;
        }
        if (!(x->rois = malloc((size_t)w->n_rois * sizeof *x->rois)))
            return cli_out_of_memory();
        memcpy(x->rois, w->rois, (size_t)w->n_rois * sizeof *x->rois);
        x->n_rois = w->n_rois;
    }
    return CLI_OK;
}

int cli_sources_run(const cli_sources_options *o, const cli_args *args)
{
    run r = {.o = o, .args = args, .logger = cli_logger(o->verbose)};
    atomic_init(&r.frames, 0);
    atomic_init(&r.stop, 0);
    atomic_init(&r.written, 0);
    atomic_init(&r.write_failed, 0);
    atomic_init(&r.waiter_stop, 0);
    pthread_mutex_init(&r.lock, NULL);
    pthread_mutex_init(&r.print_lock, NULL);
    pthread_cond_init(&r.has_job, NULL);
    pthread_cond_init(&r.has_room, NULL);
    if (o->nvdec_sessions >= 0)
        glcv_media_nvdec_auto_limit(o->nvdec_sessions);
    int rc = o->sink ? sink_entries(o->sink, &r.e, &r.n) : read_list(o->list, o->work != NULL, &r.e, &r.n);
    if (rc == CLI_OK && o->work)
        rc = check_boxes(&r);
    if (rc == CLI_OK && !o->src->size.width)
        probe_sources(&r);
    if (rc == CLI_OK)
        rc = plan_sets(&r);
    /* the output folders, of every source that may write */
    for (int i = 0; rc == CLI_OK && o->masks && i < r.n; i++) {
        if (r.e[i].width == 0) /* in no set: it never writes */
            continue;
        char name[128];
        source_folder(&r, i, name, sizeof name);
        char *dir = cli_path_join(o->outdir, name, "");
        rc = dir ? cli_make_dir(dir) : cli_out_of_memory();
        free(dir);
    }
    if (rc == CLI_OK && r.set_count > 0)
        rc = start_encoders(&r);
    double start = cli_now(), last = start;
    r.start = start;
    long last_frames = 0;
    if (rc == CLI_OK && r.set_count > 0) {
        if (!o->sink)
            cli_interrupt_catch();
        for (int k = 0; k < r.set_count; k++)
            r.sets[k].started = pthread_create(&r.sets[k].thread, NULL, set_main, &r.sets[k]) == 0;
        for (int k = 0; k < r.set_count; k++) {
            if (!r.sets[k].started) {
                cli_error("cannot start a thread for the camera sets");
                rc = CLI_FAIL;
                atomic_store(&r.stop, 1);
            }
        }
        while (r.n_waiters < r.waiting && r.n_waiters < PROBE_THREADS &&
               pthread_create(&r.waiters[r.n_waiters], NULL, waiter_main, &r) == 0)
            r.n_waiters++;
        if (r.waiting > 0 && r.n_waiters == 0)
            cli_warning("cannot start a thread for the sources to open again: they are not tried again");
        /* the progress, until every set's thread is done; the sources that open late get sets of their
         * own meanwhile (not once every set has ended: a run of files is over then) */
        for (;;) {
            int running = 0;
            for (int k = 0; k < r.set_count; k++) {
                set_job *j = &r.sets[k];
                if (!j->started || j->joined)
                    continue;
                if (pthread_tryjoin_np(j->thread, NULL) != 0) {
                    running++;
                    continue;
                }
                j->joined = 1;
                if (j->rc != CLI_OK && rc == CLI_OK)
                    rc = j->rc;
            }
            if (running == 0)
                break;
            if (r.waiting > 0 && start_ready_sets(&r, &rc))
                continue;
            if (!o->quiet)
                show_progress(&r, start, &last, &last_frames, 0);
            struct timespec pause = {0, 200 * 1000000L};
            nanosleep(&pause, NULL);
        }
        atomic_store(&r.waiter_stop, 1);
        for (int t = 0; t < r.n_waiters; t++)
            pthread_join(r.waiters[t], NULL);
        if (!o->sink)
            cli_interrupt_release();
    }
    if (r.workers)
        stop_encoders(&r);
    double wall = cli_now() - start;
    if (!o->quiet && r.set_count > 0) {
        show_progress(&r, start, &last, &last_frames, 1);
        for (int k = 0; k < r.set_count; k++) {
            const set_job *j = &r.sets[k];
            if (!j->started || !j->count)
                continue;
            char learned[48] = "";
            if (j->learned_at > 0)
                snprintf(learned, sizeof learned, ", background at %.1f s", j->learned_at);
            fprintf(stderr, "glcv: cam%03d..cam%03d: open at %.1f s, first frames at %.1f s%s, %ld frames, ended at %.1f s\n",
                    r.e[j->members[0]].line, r.e[j->members[j->count - 1]].line, j->opened_at, j->first_at, learned,
                    j->frames, j->ended_at);
        }
    }
    int failed = 0;
    for (int i = 0; i < r.n; i++)
        failed += atomic_load(&r.e[i].failed);
    if ((r.set_count > 0 || failed > 0) && !o->sink) {
        long frames = atomic_load(&r.frames), learned = 0;
        for (int k = 0; k < r.set_count; k++)
            learned += r.sets[k].learned;
        printf("sources:    %d in %d camera set%s (%s), %d failed\n", r.n, r.set_count, r.set_count == 1 ? "" : "s",
               o->list, failed);
        if (o->work) {
            long boxes = 0;
            for (int i = 0; i < r.n; i++)
                boxes += r.e[i].n_rois;
            printf("frames:     %ld %s, %ld object%s\n", frames, o->work->done, boxes, boxes == 1 ? "" : "s");
        } else {
            printf("frames:     %ld segmented, %ld learned from, method %s\n", frames, learned,
                   cli_method_names[o->method->method]);
        }
        long dropped = 0;
        for (int k = 0; k < r.set_count; k++)
            dropped += atomic_load(&r.sets[k].dropped);
        printf("wall time:  %.3f s: %.1f frames/s end to end (%.1f cameras at 25 frames/s), %ld dropped\n", wall,
               wall > 0 ? (double)frames / wall : 0.0, wall > 0 ? (double)frames / wall / 25.0 : 0.0, dropped);
        if (o->masks && !o->work)
            printf("written:    %ld masks in %s/camNNN\n", atomic_load(&r.written), o->outdir);
    }
    if (rc == CLI_OK && atomic_load(&r.write_failed))
        rc = CLI_FAIL;
    if (rc == CLI_OK && failed > 0)
        rc = CLI_FAIL;
    if (rc == CLI_OK && cli_interrupted())
        rc = CLI_INTERRUPTED;
    for (int k = 0; k < r.set_count; k++)
        free(r.sets[k].members);
    free(r.sets);
    for (int i = 0; i < r.n; i++) {
        free(r.e[i].text);
        free(r.e[i].rois);
    }
    free(r.e);
    pthread_cond_destroy(&r.has_job);
    pthread_cond_destroy(&r.has_room);
    pthread_mutex_destroy(&r.lock);
    pthread_mutex_destroy(&r.print_lock);
    return rc;
}

#endif
