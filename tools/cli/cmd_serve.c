/* glcv serve CONFIG: a long-running camera service. The configuration file (tools/service/config.h)
 * names the cameras, their method and event rules, the brokers and the HTTP endpoint.
 *
 * Cameras of one method, options and learning are a group: one run of the source lists' engine
 * (sources.h, cli_sources_run with a sink) on its own thread, which puts cameras of one frame size
 * into camera sets (texture arrays, one hand-over per set) and spreads them over the GPUs. Each
 * camera's masks go through its event rules (tools/service/events.h) and the events to the brokers
 * (tools/service/broker.h), or to stdout as JSON lines when no broker is configured. The main
 * thread waits for signals: SIGHUP reloads the file, SIGTERM and SIGINT stop the service.
 *
 * Reloading keeps every camera whose run is unchanged (svc_camera_same_run) running: new rules and
 * zones apply from its next frame. A new or changed camera starts in a new group; a removed (or
 * changed) camera is stopped: its group stops when none of its cameras is left, otherwise the
 * camera is muted (no events, status down) and its set closes its source at its next read.
 *
 * Stopping: the groups stop and are joined, the brokers get up to 10 s to acknowledge what was
 * queued, and what is left goes to the spool file (written whole, then renamed).
 *
 * Why one file of this size: the camera and group lists, their lock and the cameras' lifetimes are
 * shared by every part here (the sets' callbacks, the event workers, reload, the cluster's rounds,
 * the metrics); the reusable parts (configuration, events, brokers, HTTP, leases) are already
 * tools/service/, and what is left is the command's own bookkeeping. */
#define _GNU_SOURCE /* sigtimedwait, pthread_sigmask */

#include "cli.h"
#include "commands.h"
#include "pipeline.h"
#include "sources.h"
#include "subtractor.h"

#include "broker.h"
#include "cluster.h"
#include "config.h"
#include "events.h"
#include "http.h"
#include "live.h"
#include "stream_net.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char cmd_serve_help[] =
    "usage: glcv serve CONFIG [options]\n"
    "\n"
    "Runs a camera service configured by the YAML file CONFIG (docs/SERVICE.md has its schema): reads\n"
    "every camera all the time (files, rtsp:// and other URLs, /dev/videoN; live ones reconnect with\n"
    "back-off), segments them on the GPU in camera sets (eth, vsam, diff2, diff3, as 'glcv segment\n"
    "--sources'), and publishes events as JSON (docs/EVENTS.md): motion start and end per camera and\n"
    "zone, the foreground fraction at a rate, camera up and down. Events go to MQTT and NATS JetStream,\n"
    "at least once, queued while a broker is away; without a broker they are printed to stdout, one\n"
    "JSON object a line. GET /metrics (Prometheus) and /healthz are served over HTTP.\n"
    "\n"
    "SIGHUP reloads CONFIG: unchanged cameras go on, rules and zones apply at once, new cameras start,\n"
    "removed ones stop. SIGTERM or SIGINT stops: brokers get 10 s to acknowledge what was queued, the\n"
    "rest goes to the spool file.\n"
    "\n"
    "options:\n"
    "  --check            check CONFIG and its cameras' options, print a summary and exit\n"
    "  -q, --quiet        print errors only\n"
    "  -v, --verbose      print the library's debug messages\n"
    "  -h, --help         show this help\n"
    "\n"
    "example:\n"
    "  glcv serve cameras.yaml\n"
    "\n"
    "Exit status: 0 stopped by a signal (or --check passed), 1 runtime failure, 2 usage error or a\n"
    "bad CONFIG.\n";

enum {
    DRAIN_S = 10,       /* what a stop gives the brokers to acknowledge the queue */
    GROUP_RETRY_MAX_S = 30,
    /* the frame rate the cluster assumes of a camera slower than this or not measured yet, when the
     * next holder skips the frames this one may handle after its last report (cluster.h) */
    SKIP_FPS = 30,
    WORKER_QUEUE = 64, /* masks waiting for one event worker at most: a set waits beyond (no loss) */
    MAX_WORKERS = 16,
    MAX_METHOD_ARGS = 256
};

typedef struct service service;

/* A camera as it runs. */
typedef struct camera {
    svc_camera *cfg;     /* in the service's configuration (replaced on reload, under the camera's lock) */
    pthread_mutex_t lock;
    svc_events *events;  /* made when its set opens (the frame size is known then) */
    int sized;           /* events has the camera's frame size (not a stand-in for reporting status) */
    atomic_int muted;    /* removed while its group runs: no more events (read by the sets' threads) */
    int live;
    int worker;          /* the event worker its masks go to (one per camera: its events stay in order) */
    atomic_int pending;  /* its jobs queued or running on that worker */
    atomic_int lent;     /* of them, those that read a mask lent by its set (see sink_release) */
    atomic_llong handed; /* the newest frame index handed to that worker (-1: none): its events never
                            go past it, so a cluster's next holder numbers on from it */
    int64_t first_frame; /* the index its frames start from (a camera another instance ran numbers on) */
    svc_live_stream *stream; /* its live view */
    int width, height;   /* of its frames, once its set opened (under the lock) */
    /* metrics, under the lock */
    long dropped;
    double read_ms, process_ms;
    int64_t frames_at_rate;
    double rate_at, rate;
} camera;

/* A camera's mask or status change, for its event worker. */
typedef struct job {
    camera *cam;
    glcv_image mask; /* a mask (data not NULL): the job's own, or lent by the set, or: */
    int lent;
    char *down;      /* the camera went down, why */
    int64_t index;
    double time;
    struct job *next;
} job;

/* A thread that runs the event rules of its cameras' masks (counting a mask's pixels is the work),
 * in the order the sets delivered them, so that the sets' threads only hand masks over. */
typedef struct worker {
    service *svc;
    pthread_t thread;
    int started;
    pthread_mutex_t lock;
    pthread_cond_t has_job, has_room;
    job *head, *tail;
    int queued, stop;
} worker;

/* Cameras of one method, options and learning: one cli_sources_run on its own thread. */
typedef struct group {
    service *svc;
    camera **cams;
    int count;
    char **sources, **folders;
    int *transports, *realtime;
    int64_t *first_index;
    atomic_int stop;
    pthread_t thread;
    int started;
    atomic_int done;
    /* the method, parsed from "--method M OPTIONS..." with the table below */
    cli_method method;
    cli_option table[64];
    cli_args args;
    char *argv[MAX_METHOD_ARGS];
    int argc;
    int learn;
    cli_source src;
} group;

struct service {
    svc_config cfg;
    svc_broker *broker;
    svc_http *http;
    svc_cluster *cluster; /* NULL: this instance runs every camera */
    int instances;        /* the cluster's live instances at its last round (under the lock) */
    /* net_now() in microseconds until which the held cameras' masks are handled (svc_cluster_hold_until):
     * past it they are dropped, and `lapsed` says that the warning was given */
    atomic_llong hold_until_us;
    atomic_int lapsed;
    atomic_long unleased; /* masks given no events for it */
    pthread_mutex_t lock; /* the camera and group lists */
    camera **cams;
    int n_cams;
    group **groups;
    int n_groups;
    pthread_mutex_t out_lock; /* stdout, when events go there */
    pthread_mutex_t lent_lock; /* a camera's lent count falling to 0, for sink_release */
    pthread_cond_t lent_done;
    int to_stdout;
    int quiet, verbose;
    double started;
    /* fixed at the start (a reload changes them only at the next start) */
    char *path;  /* the file's name (messages from the sets' threads) */
    char *masks; /* the masks' folder, or NULL */
    char *token; /* the HTTP token, which the live view's viewers prove too; NULL: none */
    int gpus;    /* resolved: 1.. */
    int decoder; /* index into cli_decoder_names */
    svc_config *retired; /* configurations replaced by reloads: muted cameras may point into them */
    int n_retired;
    worker *workers;
    int n_workers, next_worker;
    svc_live_params live; /* of every camera's live stream */
};

/* ---- events out ------------------------------------------------------------------------------------- */

static double wall_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void publish(void *user, const char *topic, const char *id, const char *json, size_t length)
{
    service *svc = user;
    if (svc->to_stdout) {
        pthread_mutex_lock(&svc->out_lock);
        fwrite(json, 1, length, stdout);
        fputc('\n', stdout);
        fflush(stdout);
        pthread_mutex_unlock(&svc->out_lock);
        return;
    }
    if (svc_broker_publish(svc->broker, topic, id, json, length) != 0)
        cli_warning("event %s not queued: the brokers' outbox refused it", id);
}

/* ---- the sink: what the camera sets report ----------------------------------------------------------- */

/* The fraction period of the configuration that runs now. */
static double fraction_every(service *svc)
{
    pthread_mutex_lock(&svc->lock);
    double every = svc->cfg.fraction_every;
    pthread_mutex_unlock(&svc->lock);
    return every;
}

static void sink_open(void *user, const int *sources, int count, int width, int height)
{
    group *g = user;
    double every = fraction_every(g->svc);
    for (int k = 0; k < count; k++) {
        camera *c = g->cams[sources[k]];
        pthread_mutex_lock(&c->lock);
        c->width = width;
        c->height = height;
        svc_live_size(c->stream, width, height);
        if (!c->sized) {
            svc_events *e = NULL;
            char error[512];
            if (svc_events_create(c->cfg, every, width, height, &e, error, sizeof error) == 0) {
                svc_events_destroy(&c->events);
                c->events = e;
                c->sized = 1;
            } else {
                cli_error("%s: %s", g->svc->path, error);
            }
        }
        pthread_mutex_unlock(&c->lock);
    }
}

/* ---- the event workers ------------------------------------------------------------------------------- */

static void run_job(service *svc, job *jb)
{
    camera *c = jb->cam;
    pthread_mutex_lock(&c->lock);
    if (jb->down) {
        if (!c->events) { /* never opened: a stand-in without zones reports the status */
            svc_camera bare = *c->cfg;
            bare.n_zones = 0;
            char error[256];
            svc_events_create(&bare, fraction_every(svc), 1, 1, &c->events, error, sizeof error);
        }
        if (c->events && !c->muted)
            svc_events_status(c->events, 0, jb->down, jb->time, publish, svc);
        if (!svc->quiet)
            cli_warning("%s:%d: camera '%s': %s", svc->path, c->cfg->line, c->cfg->id, jb->down);
    } else if (c->events && c->sized && !c->muted) {
        svc_events_frame(c->events, jb->mask.data, jb->mask.stride ? jb->mask.stride : (size_t)jb->mask.width,
                         jb->index, jb->time, publish, svc);
        if (c->cfg->objects.enabled && svc_live_watched(c->stream)) { /* the boxes, for the live view */
            svc_object now[64];
            svc_live_box boxes[64];
            int n = svc_events_objects(c->events, now, 64);
            for (int i = 0; i < n; i++)
                boxes[i] = (svc_live_box){now[i].id, now[i].x, now[i].y, now[i].width, now[i].height};
            svc_live_boxes(c->stream, jb->index, boxes, n);
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (jb->lent) { /* the set may change the mask from now */
        pthread_mutex_lock(&svc->lent_lock);
        if (atomic_fetch_sub(&c->lent, 1) == 1)
            pthread_cond_broadcast(&svc->lent_done);
        pthread_mutex_unlock(&svc->lent_lock);
    } else {
        glcv_image_free(&jb->mask);
    }
    free(jb->down);
    atomic_fetch_sub(&c->pending, 1);
    free(jb);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        while (!w->head && !w->stop)
            pthread_cond_wait(&w->has_job, &w->lock);
        job *jb = w->head;
        if (jb) {
            w->head = jb->next;
            w->tail = w->head ? w->tail : NULL;
            w->queued--;
            pthread_cond_signal(&w->has_room);
        }
        pthread_mutex_unlock(&w->lock);
        if (!jb)
            return NULL; /* stopped, and nothing left */
        run_job(w->svc, jb);
    }
}

/* Queues the job on its camera's worker; waits while that worker has WORKER_QUEUE jobs. */
static void enqueue(service *svc, job *jb)
{
    worker *w = &svc->workers[jb->cam->worker];
    atomic_fetch_add(&jb->cam->pending, 1);
    pthread_mutex_lock(&w->lock);
    while (w->queued >= WORKER_QUEUE && !w->stop)
        pthread_cond_wait(&w->has_room, &w->lock);
    if (w->tail)
        w->tail->next = jb;
    else
        w->head = jb;
    w->tail = jb;
    w->queued++;
    pthread_cond_signal(&w->has_job);
    pthread_mutex_unlock(&w->lock);
}

/* One worker per processor but one (at most MAX_WORKERS). Prints the error. */
static int start_workers(service *svc)
{
    int n = cli_online_cpus() - 1;
    n = n < 1 ? 1 : n > MAX_WORKERS ? MAX_WORKERS : n;
    if (!(svc->workers = calloc((size_t)n, sizeof *svc->workers)))
        return cli_out_of_memory();
    for (int i = 0; i < n; i++) {
        worker *w = &svc->workers[i];
        w->svc = svc;
        pthread_mutex_init(&w->lock, NULL);
        pthread_cond_init(&w->has_job, NULL);
        pthread_cond_init(&w->has_room, NULL);
        svc->n_workers = i + 1;
        if (!(w->started = pthread_create(&w->thread, NULL, worker_main, w) == 0)) {
            cli_error("cannot start the event threads");
            return CLI_FAIL;
        }
    }
    return CLI_OK;
}

/* Runs what is queued, then stops the workers (after the groups: nothing is queued any more). */
static void stop_workers(service *svc)
{
    for (int i = 0; i < svc->n_workers; i++) {
        worker *w = &svc->workers[i];
        pthread_mutex_lock(&w->lock);
        w->stop = 1;
        pthread_cond_broadcast(&w->has_job);
        pthread_cond_broadcast(&w->has_room);
        pthread_mutex_unlock(&w->lock);
        if (w->started)
            pthread_join(w->thread, NULL);
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->has_job);
        pthread_cond_destroy(&w->has_room);
    }
    free(svc->workers);
    svc->workers = NULL;
    svc->n_workers = 0;
}

static void sink_masks(void *user, const int *sources, int count, glcv_image *masks, const int *fresh,
                       const int64_t *index, int lent)
{
    group *g = user;
    service *svc = g->svc;
    double now = wall_clock();
    /* leases not renewed in time (a round may wait on NATS for seconds): another instance may run these
     * cameras soon, numbering on from their last report, so no frame past the lease gets events here */
    int lapsed = svc->cluster && net_now() * 1e6 > (double)atomic_load(&svc->hold_until_us);
    for (int k = 0; k < count; k++) {
        camera *c = g->cams[sources[k]];
        if (!fresh[k] || c->muted)
            continue;
        if (lapsed) {
            atomic_fetch_add(&svc->unleased, 1);
            if (!atomic_exchange(&svc->lapsed, 1))
                cli_warning("cluster: the leases were not renewed in time: frames are dropped until a round renews them");
            continue;
        }
        job *jb = calloc(1, sizeof *jb);
        if (!jb) {
            cli_warning("camera '%s': frame %lld: out of memory, no events", g->folders[sources[k]], (long long)index[k]);
            continue;
        }
        *jb = (job){.cam = c, .index = index[k], .time = now};
        if (index[k] > atomic_load(&c->handed))
            atomic_store(&c->handed, index[k]);
        if (lent) { /* read in place by the worker; the set waits for it before it changes (sink_release) */
            jb->mask = masks[k];
            jb->lent = 1;
            atomic_fetch_add(&c->lent, 1);
        } else if (svc->masks) { /* the set writes the masks too: a copy */
            const glcv_image *m = &masks[k];
            size_t stride = m->stride ? m->stride : (size_t)m->width;
            if (glcv_image_alloc(m->width, m->height, GLCV_PIXEL_GRAY8, &jb->mask) != GLCV_OK) {
                free(jb);
                continue;
            }
            for (int y = 0; y < m->height; y++)
                memcpy(jb->mask.data + (size_t)y * (jb->mask.stride ? jb->mask.stride : (size_t)m->width),
                       m->data + (size_t)y * stride, (size_t)m->width);
        } else { /* taken: the worker frees it */
            jb->mask = masks[k];
            masks[k] = (glcv_image){0};
        }
        enqueue(svc, jb);
    }
}

/* The set changes the masks it lent from now: waits until the workers have read them. (The sets' threads
 * hand masks over without copying 300 KB a camera; the workers count them meanwhile, while the set reads
 * its next frames.) */
static void sink_release(void *user, const int *sources, int count)
{
    group *g = user;
    service *svc = g->svc;
    pthread_mutex_lock(&svc->lent_lock);
    for (int k = 0; k < count; k++)
        while (atomic_load(&g->cams[sources[k]]->lent) > 0)
            pthread_cond_wait(&svc->lent_done, &svc->lent_lock);
    pthread_mutex_unlock(&svc->lent_lock);
}

static int sink_still(void *user, int source)
{
    group *g = user;
    return !g->cams[source]->muted;
}

static int sink_wanted(void *user, int source)
{
    group *g = user;
    return svc_live_wanted(g->cams[source]->stream);
}

static void sink_frame(void *user, int source, const glcv_image *frame, const glcv_image *mask, int64_t index)
{
    group *g = user;
    svc_live_frame(g->cams[source]->stream, frame, mask, index);
}

static void sink_down(void *user, int source, const char *why)
{
    group *g = user;
    job *jb = calloc(1, sizeof *jb);
    char *text = strdup(why);
    if (!jb || !text) {
        free(jb);
        free(text);
        cli_warning("camera '%s': %s (out of memory: no event)", g->folders[source], why);
        return;
    }
    *jb = (job){.cam = g->cams[source], .down = text, .time = wall_clock()};
    enqueue(g->svc, jb); /* after the camera's masks before it */
}

static void sink_stats(void *user, const int *sources, int count, const long *dropped, double read_ms,
                       double process_ms)
{
    group *g = user;
    double now = wall_clock();
    for (int k = 0; k < count; k++) {
        camera *c = g->cams[sources[k]];
        pthread_mutex_lock(&c->lock);
        c->dropped = dropped[k];
        c->read_ms = read_ms;
        c->process_ms = process_ms;
        if (c->events) {
            svc_events_state st;
            svc_events_get_state(c->events, &st);
            if (c->rate_at > 0 && now > c->rate_at)
                c->rate = (double)(st.frames - c->frames_at_rate) / (now - c->rate_at);
            c->frames_at_rate = st.frames;
            c->rate_at = now;
        }
        pthread_mutex_unlock(&c->lock);
    }
}

/* ---- groups ------------------------------------------------------------------------------------------- */

static void group_free(group *g)
{
    if (!g)
        return;
    for (int k = 0; k < g->count; k++) {
        free(g->sources ? g->sources[k] : NULL);
        free(g->folders ? g->folders[k] : NULL);
    }
    for (int i = 0; i < g->argc; i++)
        free(g->argv[i]);
    free(g->sources);
    free(g->folders);
    free(g->transports);
    free(g->realtime);
    free(g->first_index);
    free(g->cams);
    free(g);
}

/* The method of a camera: its options parsed as 'glcv segment' parses them. Prints the error. */
static int parse_method(group *g, const svc_config *cfg, const svc_camera *c)
{
    if (c->n_options + 2 > MAX_METHOD_ARGS)
        return cli_usage("%s:%d: camera '%s': more than %d options", cfg->path, c->options_line, c->id,
                         MAX_METHOD_ARGS - 2);
    const char *words[MAX_METHOD_ARGS];
    words[0] = "--method";
    words[1] = c->method;
    for (int i = 0; i < c->n_options; i++)
        words[2 + i] = c->options[i];
    for (int i = 0; i < c->n_options + 2; i++) {
        if (!(g->argv[i] = strdup(words[i])))
            return cli_out_of_memory();
        g->argc = i + 1;
    }
    const cli_option table[] = {CLI_METHOD_OPTIONS(&g->method), {NULL}};
    if (sizeof table > sizeof g->table)
        return cli_out_of_memory();
    memcpy(g->table, table, sizeof table);
    /* parsed in place: cli_parse may reorder the pointers (every one is still freed), and the
     * arguments keep pointing into the group's argv for as long as the group runs */
    int line = c->options_line ? c->options_line : c->line;
    int rc = cli_parse(g->table, g->argc, g->argv, &g->args);
    if (rc == CLI_OK && g->args.count > 0)
        rc = cli_usage("'%s' is not an option", g->args.items[0]);
    if (rc == CLI_OK)
        rc = cli_method_check(&g->method, &g->args);
    int diff = g->method.method == CLI_METHOD_DIFF2 || g->method.method == CLI_METHOD_DIFF3;
    if (rc == CLI_OK && !diff && c->learn == 0)
        rc = cli_usage("--method %s needs a background: learn must be at least 1", c->method);
    if (rc != CLI_OK)
        cli_error("%s:%d: in the options of camera '%s' (above)", cfg->path, line, c->id);
    g->learn = diff ? 0 : c->learn;
    return rc == CLI_OK ? CLI_OK : CLI_USAGE;
}

/* Whether two cameras share a group: the same method, options and learning. */
static int same_group(const svc_camera *a, const svc_camera *b)
{
    if (strcmp(a->method, b->method) != 0 || a->learn != b->learn || a->n_options != b->n_options)
        return 0;
    for (int i = 0; i < a->n_options; i++)
        if (strcmp(a->options[i], b->options[i]) != 0)
            return 0;
    return 1;
}

static int is_live(const char *s)
{
    return !strncmp(s, "/dev/video", 10) || strstr(s, "://") != NULL;
}

static void *group_main(void *arg)
{
    group *g = arg;
    service *svc = g->svc;
    const cli_sources_sink sink = {.user = g,
                                   .sources = (const char *const *)g->sources,
                                   .transports = g->transports,
                                   .realtime = g->realtime,
                                   .folders = (const char *const *)g->folders,
                                   .first_index = g->first_index,
                                   .count = g->count,
                                   .stop = &g->stop,
                                   .open = sink_open,
                                   .masks = sink_masks,
                                   .release = sink_release,
                                   .wanted = sink_wanted,
                                   .frame = sink_frame,
                                   .down = sink_down,
                                   .stats = sink_stats,
                                   .still = sink_still};
    const cli_sources_options so = {.outdir = svc->masks,
                                    .learn = g->learn,
                                    .src = &g->src,
                                    .method = &g->method,
                                    .masks = svc->masks != NULL,
                                    .gpus = svc->gpus,
                                    .decoder = svc->decoder,
                                    .nvdec_sessions = -1,
                                    .quiet = 1,
                                    .verbose = svc->verbose,
                                    .sink = &sink};
    int live = 0;
    for (int k = 0; k < g->count; k++)
        live |= g->cams[k]->live;
    double wait = 1.0;
    while (!atomic_load(&g->stop)) {
        double began = wall_clock();
        for (int k = 0; k < g->count; k++) { /* a run again numbers on: event ids stay unique */
            camera *c = g->cams[k];
            while (atomic_load(&c->pending) > 0) { /* the last run's masks through its worker first */
                struct timespec pause = {0, 1000000L};
                nanosleep(&pause, NULL);
            }
            pthread_mutex_lock(&c->lock);
            svc_events_state st = {.last_frame = -1};
            if (c->events)
                svc_events_get_state(c->events, &st);
            if (st.last_frame + 1 > g->first_index[k])
                g->first_index[k] = st.last_frame + 1;
            pthread_mutex_unlock(&c->lock);
        }
        int rc = cli_sources_run(&so, &g->args);
        int left = 0; /* cameras it still runs (the sets close the others' sources, and end with them) */
        for (int k = 0; k < g->count; k++)
            left += !g->cams[k]->muted;
        if (atomic_load(&g->stop) || !live || !left)
            break;
        /* a group with live cameras runs again: the set failed, or its cameras all went away */
        if (wall_clock() - began > 60.0)
            wait = 1.0;
        if (!svc->quiet)
            cli_warning("the cameras of '%s' stopped (%s): starting them again in %.0f s", g->folders[0],
                        rc == CLI_OK ? "their sources ended" : "an error", wait);
        for (double t = 0; t < wait && !atomic_load(&g->stop); t += 0.1) {
            struct timespec pause = {0, 100 * 1000000L};
            nanosleep(&pause, NULL);
        }
        wait = wait * 2 > GROUP_RETRY_MAX_S ? GROUP_RETRY_MAX_S : wait * 2;
    }
    atomic_store(&g->done, 1);
    return NULL;
}

/* A group of the given cameras (all of one group key); not started. Prints the error. */
static int group_make(service *svc, camera **cams, int count, group **out)
{
    group *g = calloc(1, sizeof *g);
    *out = g;
    if (!g)
        return cli_out_of_memory();
    g->svc = svc;
    g->src = (cli_source)CLI_SOURCE_INIT;
    atomic_init(&g->stop, 0);
    atomic_init(&g->done, 0);
    g->cams = calloc((size_t)count, sizeof *g->cams);
    g->sources = calloc((size_t)count, sizeof *g->sources);
    g->folders = calloc((size_t)count, sizeof *g->folders);
    g->transports = calloc((size_t)count, sizeof *g->transports);
    g->realtime = calloc((size_t)count, sizeof *g->realtime);
    g->first_index = calloc((size_t)count, sizeof *g->first_index);
    if (!g->cams || !g->sources || !g->folders || !g->transports || !g->realtime || !g->first_index)
        return cli_out_of_memory();
    g->count = count;
    for (int k = 0; k < count; k++) {
        const svc_camera *c = cams[k]->cfg;
        g->cams[k] = cams[k];
        g->first_index[k] = cams[k]->first_frame;
        if (!(g->sources[k] = strdup(c->source)) || !(g->folders[k] = strdup(c->id)))
            return cli_out_of_memory();
        g->transports[k] = !c->transport ? GLCV_MEDIA_RTSP_DEFAULT
                           : !strcmp(c->transport, "tcp") ? GLCV_MEDIA_RTSP_TCP
                                                          : GLCV_MEDIA_RTSP_UDP;
        g->realtime[k] = c->realtime;
    }
    return parse_method(g, &svc->cfg, cams[0]->cfg);
}

static int group_start(group *g)
{
    g->started = pthread_create(&g->thread, NULL, group_main, g) == 0;
    if (!g->started) {
        cli_error("cannot start a thread for the cameras of '%s'", g->cams[0]->cfg->id);
        return CLI_FAIL;
    }
    return CLI_OK;
}

static void group_stop(group *g)
{
    atomic_store(&g->stop, 1);
    if (g->started)
        pthread_join(g->thread, NULL);
    g->started = 0;
}

/* ---- cameras ------------------------------------------------------------------------------------------ */

static camera *camera_new(const service *svc, svc_camera *cfg)
{
    camera *c = calloc(1, sizeof *c);
    if (!c || !(c->stream = svc_live_stream_new(&svc->live, cfg->id))) {
        free(c);
        return NULL;
    }
    c->cfg = cfg;
    c->live = is_live(cfg->source);
    atomic_init(&c->pending, 0);
    atomic_init(&c->lent, 0);
    atomic_init(&c->handed, -1);
    pthread_mutex_init(&c->lock, NULL);
    return c;
}

static void camera_free(camera *c)
{
    if (!c)
        return;
    while (atomic_load(&c->pending) > 0) { /* its group has stopped: what it queued runs soon */
        struct timespec pause = {0, 1000000L};
        nanosleep(&pause, NULL);
    }
    svc_events_destroy(&c->events);
    svc_live_stream_close(c->stream); /* its viewers get END; a WebSocket may hold it a little longer */
    svc_live_stream_unref(&c->stream);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* Starts groups for the cameras given (any keys): consecutive calls group them by key. Prints the
 * error. */
static int start_cameras(service *svc, camera **cams, int count)
{
    int *taken = calloc((size_t)(count > 0 ? count : 1), sizeof *taken);
    camera **members = calloc((size_t)(count > 0 ? count : 1), sizeof *members);
    int rc = taken && members ? CLI_OK : cli_out_of_memory();
    for (int i = 0; rc == CLI_OK && i < count; i++) {
        if (taken[i])
            continue;
        int n = 0;
        for (int j = i; j < count; j++)
            if (!taken[j] && same_group(cams[i]->cfg, cams[j]->cfg)) {
                taken[j] = 1;
                members[n++] = cams[j];
            }
        group **grown = realloc(svc->groups, (size_t)(svc->n_groups + 1) * sizeof *grown);
        if (!grown) {
            rc = cli_out_of_memory();
            break;
        }
        svc->groups = grown;
        group *g = NULL;
        rc = group_make(svc, members, n, &g);
        if (rc != CLI_OK) {
            group_free(g);
            break;
        }
        svc->groups[svc->n_groups++] = g;
        rc = group_start(g);
    }
    free(taken);
    free(members);
    return rc;
}

/* ---- metrics and health ------------------------------------------------------------------------------- */

static void metric_head(svc_text *t, const char *name, const char *type, const char *help)
{
    svc_text_printf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* Per broker that is configured: one row of each metric, a family at a time. */
static void broker_metrics(svc_text *t, const svc_broker_stats *mqtt, const svc_broker_stats *nats)
{
    static const struct {
        const char *name, *type, *help;
    } rows[] = {
        {"glcv_broker_connected", "gauge", "1 while connected to the broker"},
        {"glcv_broker_queued", "gauge", "events waiting for the broker's acknowledgement"},
        {"glcv_broker_published_total", "counter", "events sent, resends included"},
        {"glcv_broker_acked_total", "counter", "events the broker acknowledged"},
        {"glcv_broker_dropped_total", "counter", "events dropped because the queue was full"},
        {"glcv_broker_reconnects_total", "counter", "connections made after the first"},
    };
    const svc_broker_stats *stats[] = {mqtt, nats};
    const char *names[] = {"mqtt", "nats"};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        metric_head(t, rows[r].name, rows[r].type, rows[r].help);
        for (int b = 0; b < 2; b++) {
            const svc_broker_stats *x = stats[b];
            long v[] = {x->connected, x->queued, x->published, x->acked, x->dropped, x->reconnects};
            if (x->enabled)
                svc_text_printf(t, "%s{broker=\"%s\"} %ld\n", rows[r].name, names[b], v[r]);
        }
    }
}

/* Per camera: one row of each metric (ids are [A-Za-z0-9_-]: no label escaping needed). */
static void service_metrics(void *user, svc_text *t)
{
    service *svc = user;
    static const struct {
        const char *name, *type, *help;
    } rows[] = {
        {"glcv_camera_up", "gauge", "1 while the camera delivers frames"},
        {"glcv_camera_frames_total", "counter", "masks made of the camera's frames"},
        {"glcv_camera_frames_per_second", "gauge", "frames a second over the last second"},
        {"glcv_camera_dropped_frames_total", "counter", "frames dropped because the camera's set fell behind"},
        {"glcv_camera_decode_milliseconds", "gauge", "the last read of the camera's set (decoding and conversion)"},
        {"glcv_camera_gpu_milliseconds", "gauge", "the last processing of the camera's set (method and masks)"},
        {"glcv_camera_moving", "gauge", "1 while the camera's motion rule says moving"},
        {"glcv_camera_foreground_fraction", "gauge", "the foreground share of the last mask"},
        {"glcv_camera_events_total", "counter", "events made from the camera"},
        {"glcv_camera_queued", "gauge", "masks waiting for the camera's event worker"},
    };
    pthread_mutex_lock(&svc->lock);
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        metric_head(t, rows[r].name, rows[r].type, rows[r].help);
        for (int i = 0; i < svc->n_cams; i++) {
            camera *c = svc->cams[i];
            if (c->muted) /* removed: a camera of the same id may run again */
                continue;
            pthread_mutex_lock(&c->lock);
            svc_events_state st = {.last_frame = -1};
            if (c->events)
                svc_events_get_state(c->events, &st);
            double v[] = {st.up,       (double)st.frames, c->rate,     (double)c->dropped,
                          c->read_ms,  c->process_ms,     st.moving,   st.fraction,
                          (double)st.events, (double)atomic_load(&c->pending)};
            svc_text_printf(t, "%s{camera=\"%s\"} %.15g\n", rows[r].name, c->cfg->id, v[r]);
            pthread_mutex_unlock(&c->lock);
        }
    }
    pthread_mutex_unlock(&svc->lock);
    if (svc->broker) {
        svc_broker_stats mqtt, nats;
        svc_broker_get_stats(svc->broker, &mqtt, &nats);
        broker_metrics(t, &mqtt, &nats);
    }
    if (svc->cluster) {
        pthread_mutex_lock(&svc->lock);
        int instances = svc->instances;
        pthread_mutex_unlock(&svc->lock);
        metric_head(t, "glcv_cluster_instances", "gauge", "live instances sharing the camera list");
        svc_text_printf(t, "glcv_cluster_instances %d\n", instances);
        metric_head(t, "glcv_cluster_unleased_frames_total", "counter",
                    "frames given no events because the leases were not renewed in time");
        svc_text_printf(t, "glcv_cluster_unleased_frames_total %ld\n", atomic_load(&svc->unleased));
    }
    metric_head(t, "glcv_uptime_seconds", "gauge", "seconds since the service started");
    svc_text_printf(t, "glcv_uptime_seconds %.3f\n", wall_clock() - svc->started);
}

/* GET /cameras: [{"id":..., "up":0|1, "moving":0|1, "width":W, "height":H}, ...] */
static void service_cameras(void *user, svc_text *t)
{
    service *svc = user;
    svc_text_printf(t, "[");
    int first = 1;
    pthread_mutex_lock(&svc->lock);
    for (int i = 0; i < svc->n_cams; i++) {
        camera *c = svc->cams[i];
        if (c->muted)
            continue;
        pthread_mutex_lock(&c->lock);
        svc_events_state st = {0};
        if (c->events)
            svc_events_get_state(c->events, &st);
        /* ids are names (config.h): nothing to escape */
        svc_text_printf(t, "%s{\"id\":\"%s\",\"up\":%d,\"moving\":%d,\"width\":%d,\"height\":%d}", first ? "" : ",",
                        c->cfg->id, st.up, st.moving, c->width, c->height);
        first = 0;
        pthread_mutex_unlock(&c->lock);
    }
    pthread_mutex_unlock(&svc->lock);
    svc_text_printf(t, "]\n");
}

/* The live stream of a camera this instance runs, for a WebSocket (a reference of its own). */
static svc_live_stream *service_live(void *user, const char *id)
{
    service *svc = user;
    svc_live_stream *s = NULL;
    pthread_mutex_lock(&svc->lock);
    for (int i = 0; i < svc->n_cams && !s; i++)
        if (!svc->cams[i]->muted && !strcmp(svc->cams[i]->cfg->id, id))
            s = svc_live_stream_ref(svc->cams[i]->stream);
    pthread_mutex_unlock(&svc->lock);
    return s;
}

/* Healthy while at least one camera is up, or none has had the time to come up (30 s). */
static int service_health(void *user, char *reason, size_t size)
{
    service *svc = user;
    int up = 0, n;
    pthread_mutex_lock(&svc->lock);
    n = svc->n_cams;
    for (int i = 0; i < svc->n_cams; i++) {
        camera *c = svc->cams[i];
        pthread_mutex_lock(&c->lock);
        svc_events_state st = {0};
        if (c->events)
            svc_events_get_state(c->events, &st);
        up += st.up && !c->muted;
        pthread_mutex_unlock(&c->lock);
    }
    pthread_mutex_unlock(&svc->lock);
    int starting = wall_clock() - svc->started < 30.0;
    snprintf(reason, size, "%d of %d cameras up%s", up, n, up == 0 && starting ? ", starting" : "");
    return up > 0 || starting;
}

/* ---- reload ------------------------------------------------------------------------------------------- */

/* Stops the cameras marked in drop[] (indices into svc->cams), with a status down saying why: a
 * group left with no other camera stops (and its cameras go); in a group that keeps running, the
 * camera is muted (no more events), its set closes its source at its next read, and the camera goes
 * when the group does. Called with svc->lock held. */
static int drop_cameras(service *svc, const int *drop, const char *why, double now)
{
    int dropped = 0;
    for (int i = 0; i < svc->n_cams; i++) {
        camera *c = svc->cams[i];
        if (!drop[i] || c->muted)
            continue;
        pthread_mutex_lock(&c->lock);
        if (c->events)
            svc_events_status(c->events, 0, why, now, publish, svc);
        c->muted = 1;
        pthread_mutex_unlock(&c->lock);
        dropped++;
    }
    for (int gi = 0; gi < svc->n_groups;) {
        group *g = svc->groups[gi];
        int live = 0;
        for (int k = 0; k < g->count; k++)
            live += !g->cams[k]->muted;
        if (live > 0) {
            gi++;
            continue;
        }
        pthread_mutex_unlock(&svc->lock); /* its thread's callbacks take camera locks only */
        group_stop(g);
        pthread_mutex_lock(&svc->lock);
        for (int k = 0; k < g->count; k++)
            for (int i = 0; i < svc->n_cams; i++)
                if (svc->cams[i] == g->cams[k]) {
                    camera_free(svc->cams[i]);
                    svc->cams[i] = svc->cams[--svc->n_cams];
                    break;
                }
        group_free(g);
        svc->groups[gi] = svc->groups[--svc->n_groups];
    }
    return dropped;
}

/* New cameras for the configuration's entries marked in start[], started in groups; first[] (may be
 * NULL) their first frame indices. Called with svc->lock held. Prints errors. */
static int add_cameras(service *svc, const int *start, const int64_t *first)
{
    int n = 0, rc = CLI_OK;
    camera **added = calloc((size_t)(svc->cfg.n_cameras > 0 ? svc->cfg.n_cameras : 1), sizeof *added);
    camera **grown = realloc(svc->cams, (size_t)(svc->n_cams + svc->cfg.n_cameras) * sizeof *grown);
    if (grown)
        svc->cams = grown;
    if (!added || !grown) {
        free(added);
        return cli_out_of_memory();
    }
    for (int j = 0; j < svc->cfg.n_cameras && rc == CLI_OK; j++) {
        if (!start[j])
            continue;
        camera *c = camera_new(svc, &svc->cfg.cameras[j]);
        if (!c) {
            rc = cli_out_of_memory();
            break;
        }
        c->first_frame = first ? first[j] : 0;
        c->worker = svc->n_workers > 0 ? svc->next_worker++ % svc->n_workers : 0;
        svc->cams[svc->n_cams++] = c;
        added[n++] = c;
    }
    if (rc == CLI_OK)
        rc = start_cameras(svc, added, n);
    free(added);
    return rc;
}

/* Applies a new configuration: see the top of this file. Prints what it did. */
static void reload(service *svc)
{
    svc_config next;
    char error[1024];
    if (svc_config_load(svc->path, &next, error, sizeof error) != 0) {
        cli_error("reload: %s (the running configuration stays)", error);
        return;
    }
    const svc_config *old = &svc->cfg;
    /* what only a restart changes */
    const char *fixed[][2] = {{old->http_listen, next.http_listen}, {old->token, next.token},
                              {old->mqtt_url, next.mqtt_url},       {old->mqtt_prefix, next.mqtt_prefix},
                              {old->nats_url, next.nats_url},       {old->nats_prefix, next.nats_prefix},
                              {old->nats_stream, next.nats_stream}, {old->spool, next.spool},
                              {old->masks, next.masks},             {old->decoder, next.decoder},
                              {old->cluster_bucket, next.cluster_bucket},
                              {old->cluster_instance, next.cluster_instance}};
    int restart = old->queue != next.queue || old->gpus != next.gpus || old->cluster != next.cluster ||
                  old->cluster_capacity != next.cluster_capacity || old->cluster_lease != next.cluster_lease ||
                  old->nats_replicas != next.nats_replicas;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        const char *a = fixed[i][0], *b = fixed[i][1];
        restart |= (a == NULL) != (b == NULL) || (a && b && strcmp(a, b) != 0);
    }
    if (restart)
        cli_warning("reload: changes outside 'cameras' and 'fraction_every' apply at the next start");
    int *keep = calloc((size_t)(svc->n_cams > 0 ? svc->n_cams : 1), sizeof *keep);
    int *start = calloc((size_t)(next.n_cameras > 0 ? next.n_cameras : 1), sizeof *start);
    svc_config *retired = realloc(svc->retired, (size_t)(svc->n_retired + 1) * sizeof *retired);
    if (retired)
        svc->retired = retired;
    if (!keep || !start || !retired) {
        cli_error("reload: out of memory (the running configuration stays)");
        free(keep);
        free(start);
        svc_config_free(&next);
        return;
    }
    double now = wall_clock();
    int kept = 0;
    pthread_mutex_lock(&svc->lock);
    for (int j = 0; j < next.n_cameras; j++)
        start[j] = !svc->cluster; /* with a cluster, the leases start cameras */
    /* unchanged cameras: the new rules */
    for (int i = 0; i < svc->n_cams; i++) {
        camera *c = svc->cams[i];
        for (int j = 0; j < next.n_cameras && !keep[i] && !c->muted; j++) {
            if (!svc_camera_same_run(c->cfg, &next.cameras[j]))
                continue;
            pthread_mutex_lock(&c->lock);
            if (!c->events || !c->sized ||
                svc_events_set_rules(c->events, &next.cameras[j], next.fraction_every, now, publish, svc, error,
                                     sizeof error) == 0) {
                c->cfg = &next.cameras[j];
                keep[i] = 1;
                start[j] = 0;
                kept++;
            } else {
                cli_error("reload: %s: %s (the camera restarts)", next.path, error);
            }
            pthread_mutex_unlock(&c->lock);
        }
        keep[i] = !keep[i]; /* now: to drop */
    }
    int stopped = drop_cameras(svc, keep, "removed from the configuration", now);
    /* the old file stays allocated: muted cameras of running groups still point into it */
    svc->retired[svc->n_retired++] = svc->cfg;
    svc->cfg = next;
    int started = 0;
    for (int j = 0; j < next.n_cameras; j++)
        started += start[j];
    int rc = add_cameras(svc, start, NULL);
    pthread_mutex_unlock(&svc->lock);
    free(keep);
    free(start);
    if (!svc->quiet)
        cli_warning("reload: %d camera%s kept, %d started, %d stopped%s", kept, kept == 1 ? "" : "s", started, stopped,
                    rc == CLI_OK ? "" : " (some failed to start: above)");
}

/* ---- the cluster: cameras claimed by leases -------------------------------------------------------------- */

/* One round of the leases: claimed cameras start, lost ones stop. */
static void cluster_round(service *svc)
{
    pthread_mutex_lock(&svc->lock);
    int n = svc->cfg.n_cameras;
    const char **ids = calloc((size_t)n + 1, sizeof *ids);
    int *held = calloc((size_t)n + 1, sizeof *held), *claim = calloc((size_t)n + 1, sizeof *claim);
    int *lose = calloc((size_t)n + 1, sizeof *lose), *drop = calloc((size_t)svc->n_cams + 1, sizeof *drop);
    int64_t *last = calloc((size_t)n + 1, sizeof *last), *first = calloc((size_t)n + 1, sizeof *first);
    double *fps = calloc((size_t)n + 1, sizeof *fps);
    if (!ids || !held || !claim || !lose || !drop || !last || !first || !fps) {
        cli_error("cluster: out of memory");
        goto done;
    }
    for (int j = 0; j < n; j++) {
        ids[j] = svc->cfg.cameras[j].id;
        last[j] = -1;
        fps[j] = SKIP_FPS; /* a camera claimed now: its rate is not known yet */
    }
    for (int i = 0; i < svc->n_cams; i++) {
        camera *c = svc->cams[i];
        for (int j = 0; j < n && !c->muted; j++) {
            if (c->cfg != &svc->cfg.cameras[j])
                continue;
            held[j] = 1;
            pthread_mutex_lock(&c->lock);
            svc_events_state st = {.last_frame = -1};
            if (c->events)
                svc_events_get_state(c->events, &st);
            /* the newest frame handed to its worker, not the last one of its events: masks may wait in
             * the worker's queue, and their events still come */
            int64_t handed = atomic_load(&c->handed);
            last[j] = handed > st.last_frame ? handed : st.last_frame >= 0 ? st.last_frame : c->first_frame - 1;
            fps[j] = c->rate > SKIP_FPS ? c->rate : SKIP_FPS;
            pthread_mutex_unlock(&c->lock);
        }
    }
    /* NATS may take a second or two to answer: /metrics, /cameras and the live view do not wait for
     * it (only this thread changes the cameras and the configuration, so nothing above goes stale) */
    pthread_mutex_unlock(&svc->lock);
    int round = svc_cluster_round(svc->cluster, ids, n, held, last, fps, claim, first, lose);
    double hold = svc_cluster_hold_until(svc->cluster);
    atomic_store(&svc->hold_until_us, (long long)(hold * 1e6));
    if (hold > net_now() && atomic_exchange(&svc->lapsed, 0) && !svc->quiet)
        fprintf(stderr, "glcv: cluster: leases renewed: frames are handled again\n");
    pthread_mutex_lock(&svc->lock);
    if (round == 0)
        svc->instances = svc_cluster_instances(svc->cluster);
    int claimed = 0, lost = 0;
    /* lose 1: taken (or, the round failed, not renewed in time); 2: given back to share the load */
    for (int kind = 1; kind <= 2; kind++) {
        int these = 0;
        for (int i = 0; i < svc->n_cams; i++) {
            drop[i] = 0;
            for (int j = 0; j < n; j++)
                if (lose[j] == kind && svc->cams[i]->cfg == &svc->cfg.cameras[j] && !svc->cams[i]->muted) {
                    drop[i] = 1;
                    these++;
                }
        }
        if (these)
            drop_cameras(svc, drop,
                         kind == 2    ? "given to another instance (the cluster's cameras are shared again)"
                         : round == 0 ? "its lease was taken by another instance"
                                      : "its lease could not be renewed (NATS unreachable): another instance may take it",
                         wall_clock());
        lost += these;
    }
    for (int j = 0; j < n; j++)
        claimed += claim[j];
    if (claimed)
        add_cameras(svc, claim, first);
    if ((claimed || lost) && !svc->quiet)
        fprintf(stderr, "glcv: cluster: %d camera%s claimed, %d lost; %d instance%s\n", claimed,
                claimed == 1 ? "" : "s", lost, svc_cluster_instances(svc->cluster),
                svc_cluster_instances(svc->cluster) == 1 ? "" : "s");
done:
    pthread_mutex_unlock(&svc->lock);
    free(ids);
    free(held);
    free(claim);
    free(lose);
    free(drop);
    free(last);
    free(first);
    free(fps);
}

/* ---- the command -------------------------------------------------------------------------------------- */

/* Stops every group (all asked at once, then joined) and frees groups and cameras. */
static void stop_all(service *svc)
{
    for (int i = 0; i < svc->n_groups; i++)
        atomic_store(&svc->groups[i]->stop, 1);
    for (int i = 0; i < svc->n_groups; i++)
        group_stop(svc->groups[i]);
    stop_workers(svc); /* after the groups: every mask they handed over has its events */
    for (int i = 0; i < svc->n_groups; i++)
        group_free(svc->groups[i]);
    free(svc->groups);
    svc->groups = NULL;
    svc->n_groups = 0;
    for (int i = 0; i < svc->n_cams; i++)
        camera_free(svc->cams[i]);
    free(svc->cams);
    svc->cams = NULL;
    svc->n_cams = 0;
}

static void free_service(service *svc)
{
    stop_all(svc);
    svc_config_free(&svc->cfg);
    for (int i = 0; i < svc->n_retired; i++)
        svc_config_free(&svc->retired[i]);
    free(svc->retired);
    free(svc->path);
    free(svc->masks);
    free(svc->token);
    pthread_mutex_destroy(&svc->lock);
    pthread_mutex_destroy(&svc->out_lock);
    pthread_mutex_destroy(&svc->lent_lock);
    pthread_cond_destroy(&svc->lent_done);
}

/* --check: every camera's method parsed as its group would parse it. */
static int check_config(service *svc)
{
    int groups = 0, rc = CLI_OK;
    for (int i = 0; i < svc->cfg.n_cameras && rc == CLI_OK; i++) {
        int first = 1;
        for (int j = 0; j < i && first; j++)
            first = !same_group(&svc->cfg.cameras[j], &svc->cfg.cameras[i]);
        groups += first;
        camera *c = camera_new(svc, &svc->cfg.cameras[i]);
        group *g = NULL;
        rc = c ? group_make(svc, &c, 1, &g) : cli_out_of_memory();
        group_free(g);
        camera_free(c);
    }
    if (rc == CLI_OK)
        printf("%s: %d camera%s in %d group%s; events to %s%s%s%s; http on %s%s\n", svc->cfg.path,
               svc->cfg.n_cameras, svc->cfg.n_cameras == 1 ? "" : "s", groups, groups == 1 ? "" : "s",
               svc->cfg.mqtt_url ? svc->cfg.mqtt_url : "", svc->cfg.mqtt_url && svc->cfg.nats_url ? " and " : "",
               svc->cfg.nats_url ? svc->cfg.nats_url : "", svc->cfg.mqtt_url || svc->cfg.nats_url ? "" : "stdout",
               svc->cfg.http_listen, svc->cfg.token ? " (token)" : "");
    return rc;
}

/* The brokers and the HTTP endpoint. Prints the error. */
static int open_outputs(service *svc)
{
    char error[1024];
    const svc_config *c = &svc->cfg;
    svc->to_stdout = !c->mqtt_url && !c->nats_url;
    if (!svc->to_stdout) {
        svc_broker_params bp = {.mqtt_url = c->mqtt_url,
                                .mqtt_client_id = c->mqtt_client_id,
                                .mqtt_prefix = c->mqtt_prefix,
                                .nats_url = c->nats_url,
                                .nats_prefix = c->nats_prefix,
                                .nats_stream = c->nats_stream,
                                .nats_replicas = c->nats_replicas,
                                .queue_max = c->queue,
                                .spool = c->spool,
                                .logger = cli_logger(svc->verbose)};
        if (svc_broker_open(&bp, &svc->broker, error, sizeof error) != 0) {
            cli_error("%s", error);
            return CLI_FAIL;
        }
    }
    svc_http_params hp = {.listen = c->http_listen,
                          .token = c->token,
                          .user = svc,
                          .metrics = service_metrics,
                          .health = service_health,
                          .cameras = service_cameras,
                          .live = service_live,
                          .logger = cli_logger(svc->verbose)};
    if (svc_http_start(&hp, &svc->http, error, sizeof error) != 0) {
        cli_error("%s", error);
        return CLI_FAIL;
    }
    if (c->cluster) {
        svc_cluster_params cp = {.nats_url = c->nats_url,
                                 .bucket = c->cluster_bucket,
                                 .instance = c->cluster_instance,
                                 .capacity = c->cluster_capacity,
                                 .lease_s = c->cluster_lease,
                                 .replicas = c->nats_replicas,
                                 .logger = cli_logger(svc->verbose)};
        if (svc_cluster_open(&cp, &svc->cluster, error, sizeof error) != 0) {
            cli_error("%s", error);
            return CLI_FAIL;
        }
    }
    if (!svc->quiet) {
        char host[256];
        snprintf(host, sizeof host, "%s", c->http_listen);
        char *colon = strrchr(host, ':');
        if (colon)
            *colon = '\0';
        fprintf(stderr, "glcv: http on %s:%d (/metrics, /healthz)\n", host, svc_http_port(svc->http));
    }
    return CLI_OK;
}

/* Waits for signals: SIGHUP reloads, SIGINT and SIGTERM end the wait. With a cluster, runs its
 * rounds between them. */
static void serve_signals(service *svc, const sigset_t *signals)
{
    double next_round = 0;
    for (;;) {
        double now = wall_clock(), wait = 1.0;
        if (svc->cluster) {
            if (now >= next_round) {
                cluster_round(svc);
                next_round = now + svc_cluster_period(svc->cluster);
            }
            wait = next_round - wall_clock();
            wait = wait < 0.01 ? 0.01 : wait > 1.0 ? 1.0 : wait;
        }
        struct timespec tick = {(time_t)wait, (long)((wait - floor(wait)) * 1e9)};
        int sig = sigtimedwait(signals, NULL, &tick);
        if (sig == SIGHUP) {
            if (!svc->quiet)
                fprintf(stderr, "glcv: SIGHUP: reloading %s\n", svc->path);
            reload(svc);
        } else if (sig == SIGINT || sig == SIGTERM) {
            if (!svc->quiet)
                fprintf(stderr, "glcv: %s: stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
            return;
        }
    }
}

int cmd_serve(int argc, char **argv)
{
    int quiet = 0, verbose = 0, check = 0;
    const cli_option options[] = {
        CLI_QUIET_VERBOSE_OPTIONS(&quiet, &verbose),
        {"--check", NULL, &check, .kind = CLI_FLAG},
        {NULL},
    };
    cli_args args;
    int rc = cli_parse_expecting(options, argc, argv, &args, 1, 1, "a configuration file");
    if (rc != CLI_OK)
        return rc;
    service svc = {.quiet = quiet, .verbose = verbose, .started = wall_clock()};
    pthread_mutex_init(&svc.lock, NULL);
    pthread_mutex_init(&svc.out_lock, NULL);
    pthread_mutex_init(&svc.lent_lock, NULL);
    pthread_cond_init(&svc.lent_done, NULL);
    char error[1024];
    if (svc_config_load(args.items[0], &svc.cfg, error, sizeof error) != 0) {
        cli_error("%s", error);
        free_service(&svc);
        return CLI_USAGE;
    }
    svc.path = strdup(svc.cfg.path);
    svc.masks = svc.cfg.masks ? strdup(svc.cfg.masks) : NULL;
    svc.token = svc.cfg.token ? strdup(svc.cfg.token) : NULL;
    svc.live = (svc_live_params){.token = (const uint8_t *)svc.token,
                                 .token_bytes = svc.token ? strlen(svc.token) : 0,
                                 .logger = cli_logger(1)}; /* viewers joining and leaving: always said */
    svc.gpus = svc.cfg.gpus == 1 ? 1 : cli_gpus(svc.cfg.gpus);
    while (cli_decoder_names[svc.decoder] && strcmp(cli_decoder_names[svc.decoder], svc.cfg.decoder) != 0)
        svc.decoder++;
    if (!svc.path || (svc.cfg.masks && !svc.masks) || (svc.cfg.token && !svc.token) ||
        !cli_decoder_names[svc.decoder]) {
        free_service(&svc);
        return cli_out_of_memory();
    }
    if (check) {
        rc = check_config(&svc);
        free_service(&svc);
        return rc;
    }
    /* the signals are waited for on this thread: every thread started from now on blocks them */
    sigset_t signals, previous;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    sigaddset(&signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &signals, &previous);
    if (svc.masks)
        rc = cli_make_dir(svc.masks);
    if (rc == CLI_OK)
        rc = open_outputs(&svc);
    if (rc == CLI_OK)
        rc = start_workers(&svc);
    if (rc == CLI_OK && !svc.cluster) { /* with a cluster, the leases start cameras */
        int *all = malloc((size_t)svc.cfg.n_cameras * sizeof *all);
        for (int i = 0; all && i < svc.cfg.n_cameras; i++)
            all[i] = 1;
        pthread_mutex_lock(&svc.lock);
        rc = all ? add_cameras(&svc, all, NULL) : cli_out_of_memory();
        pthread_mutex_unlock(&svc.lock);
        free(all);
    }
    if (rc == CLI_OK) {
        if (!quiet)
            fprintf(stderr, "glcv: serving %d camera%s in %d group%s from %s%s\n", svc.cfg.n_cameras,
                    svc.cfg.n_cameras == 1 ? "" : "s", svc.n_groups, svc.n_groups == 1 ? "" : "s", svc.path,
                    svc.cluster ? " (as the cluster's leases give them)" : "");
        serve_signals(&svc, &signals);
    }
    stop_all(&svc);
    svc_cluster_close(&svc.cluster); /* after the cameras stopped: the others take them at once */
    if (svc.broker) {
        int late = svc_broker_flush(svc.broker, DRAIN_S);
        svc_broker_stats mqtt, nats;
        svc_broker_get_stats(svc.broker, &mqtt, &nats);
        if (!quiet)
            fprintf(stderr, "glcv: events: %ld acknowledged by mqtt, %ld by nats; %s\n", mqtt.acked, nats.acked,
                    !late                ? "none left"
                    : svc.cfg.spool      ? "the rest goes to the spool"
                                         : "the rest is lost (no spool configured)");
        svc_broker_close(&svc.broker);
    }
    svc_http_stop(&svc.http);
    free_service(&svc);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    return rc;
}
