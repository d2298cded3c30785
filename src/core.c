/* Status strings, logging, engine-mode and pixel-format helpers. */
#include "core_internal.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

const char *glcv_status_string(glcv_status status)
{
    switch (status) {
    case GLCV_OK: return "ok";
    case GLCV_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case GLCV_ERROR_SIZE_MISMATCH: return "size mismatch";
    case GLCV_ERROR_STATE: return "call out of order";
    case GLCV_ERROR_NO_CONTEXT: return "no OpenGL context";
    case GLCV_ERROR_UNSUPPORTED: return "not supported by this build, driver or device";
    case GLCV_ERROR_GL: return "OpenGL error";
    case GLCV_ERROR_OUT_OF_MEMORY: return "out of memory";
    case GLCV_ERROR_IO: return "input/output error";
    case GLCV_ERROR_CORRUPT_DATA: return "corrupt or unreadable data";
    case GLCV_ERROR_CUDA: return "CUDA error";
    case GLCV_ERROR_LIMIT: return "above a resource limit";
    }
    return "unknown status";
}

static const char *level_name(glcv_log_level level)
{
    switch (level) {
    case GLCV_LOG_ERROR: return "error";
    case GLCV_LOG_WARN: return "warning";
    case GLCV_LOG_INFO: return "info";
    case GLCV_LOG_DEBUG: return "debug";
    }
    return "log";
}

void glcv_log_stderr(void *user, glcv_log_level level, const char *message)
{
    (void)user;
    fprintf(stderr, "glcv: %s: %s\n", level_name(level), message);
}

static void vlogf(const glcv_logger *logger, glcv_log_level level, const char *fmt, va_list ap)
{
    if (!logger || !logger->fn)
        return;
    glcv_log_level max = logger->max_level ? logger->max_level : GLCV_LOG_INFO;
    if (level > max)
        return;
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    size_t n = strlen(buf);
    while (n > 0 && buf[n - 1] == '\n')
        buf[--n] = '\0';
    logger->fn(logger->user, level, buf);
}

void glcv_logf(const glcv_logger *logger, glcv_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlogf(logger, level, fmt, ap);
    va_end(ap);
}

glcv_status glcv_fail(const glcv_logger *logger, glcv_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlogf(logger, GLCV_LOG_ERROR, fmt, ap);
    va_end(ap);
    return status;
}

glcv_status glcv_timings_copy(const glcv_timing *src, int n, glcv_timing *out, int capacity, int *count)
{
    if (!count || capacity < 0 || (capacity > 0 && !out))
        return GLCV_ERROR_INVALID_ARGUMENT;
    *count = n < capacity ? n : capacity;
    if (*count > 0)
        memcpy(out, src, (size_t)*count * sizeof *out);
    return GLCV_OK;
}

glcv_status glcv_check_timings_args(const glcv_logger *logger, const char *module, const glcv_timing *out,
                                    int capacity, const int *count)
{
    if (count && capacity >= 0 && (capacity == 0 || out))
        return GLCV_OK;
    return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: timings: %s", module,
                     !count ? "NULL count" : capacity < 0 ? "capacity < 0" : "NULL out with capacity > 0");
}

const char *glcv_enum_name(const char *const *names, int count, int value)
{
    return value >= 0 && value < count && names[value] ? names[value] : "?";
}

int glcv_enum_parse(const char *const *names, int count, const char *name)
{
    for (int v = 1; name && v < count; v++)
        if (names[v] && strcmp(names[v], name) == 0)
            return v;
    return -1;
}

glcv_status glcv_check_range(const glcv_logger *logger, const char *module, const char *name, double v, double lo,
                             double hi)
{
    if (!isfinite(v) || v < lo || v > hi)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: %s must be in %g..%g (got %g)", module, name, lo, hi,
                         v);
    return GLCV_OK;
}

glcv_status glcv_check_size(const glcv_logger *logger, const char *module, int width, int height, int max)
{
    if (width < 1 || height < 1 || width > max || height > max)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: size %dx%d: width and height must be 1..%d", module,
                         width, height, max);
    return GLCV_OK;
}

glcv_status glcv_check_rect(const glcv_logger *logger, const char *module, const char *what, glcv_rect r)
{
    if (r.width < 1 || r.height < 1)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: %s %d,%d %dx%d: width and height must be >= 1",
                         module, what, r.x, r.y, r.width, r.height);
    if (r.width > GLCV_MAX_COORD || r.height > GLCV_MAX_COORD || r.x < -GLCV_MAX_COORD || r.x > GLCV_MAX_COORD ||
        r.y < -GLCV_MAX_COORD || r.y > GLCV_MAX_COORD)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT,
                         "%s: %s %d,%d %dx%d: coordinates and sizes must be within +-%d", module, what, r.x, r.y,
                         r.width, r.height, GLCV_MAX_COORD);
    return GLCV_OK;
}

int glcv_finite(double v)
{
    return isfinite(v);
}

double glcv_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- loops over many items on several threads ---- */

/* The most threads a loop uses, whatever is asked: far more than the cores of any host. */
#define PARALLEL_MAX_THREADS 1024

/* Nonzero on a thread running a loop's items: a loop inside runs there alone. */
static _Thread_local int in_parallel_loop;

typedef struct parallel_loop {
    glcv_range_fn fn;
    void *user;
    int n, chunk;
    atomic_int next; /* the first item no thread has taken */
    /* under pool.lock: */
    int seats;       /* helpers that may still join it */
    int working;     /* helpers inside it */
    struct parallel_loop *later; /* the loop registered after it */
} parallel_loop;

static void loop_work(parallel_loop *l)
{
    for (;;) {
        int begin = atomic_fetch_add(&l->next, l->chunk);
        if (begin >= l->n)
            return;
        l->fn(l->user, begin, l->n - begin > l->chunk ? begin + l->chunk : l->n);
    }
}

/* The loops' helper threads: started when a loop first needs them and then kept, asleep on a
 * condition variable between loops. A sleeping thread is woken ahead of the processes that kept
 * its core busy, where a spinning one (OpenMP's) has used its share of the core by then, and one
 * made for each loop starts behind them (Linux places a new thread after the others). Loops on
 * several threads at once share them: a helper joins the loop with items left that has the fewest
 * helpers, and when a loop's items are all taken its helpers go on to the others' (several camera
 * sets learning at once each get threads, where one loop at a time left the rest on one thread). */
static struct loop_pool {
    pthread_mutex_t lock;
    pthread_cond_t wake;          /* helpers wait here for seats */
    pthread_cond_t idle;          /* callers wait here for their loop's helpers to finish */
    pthread_t ids[PARALLEL_MAX_THREADS];
    int started;                  /* helpers running */
    parallel_loop *loops;         /* the loops being shared, oldest first */
    int stopping;
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER, .wake = PTHREAD_COND_INITIALIZER, .idle = PTHREAD_COND_INITIALIZER};

static pthread_once_t pool_once = PTHREAD_ONCE_INIT;

/* The loop a free helper joins: seats left and items not taken; the fewest helpers first, then
 * the oldest. Under pool.lock. */
static parallel_loop *pool_pick(void)
{
    parallel_loop *best = NULL;
    for (parallel_loop *l = pool.loops; l; l = l->later)
        if (l->seats > 0 && atomic_load(&l->next) < l->n && (!best || l->working < best->working))
            best = l;
    return best;
}

static void *pool_helper(void *arg)
{
    (void)arg;
    in_parallel_loop = 1;
    pthread_mutex_lock(&pool.lock);
    for (;;) {
        parallel_loop *l = NULL;
        while (!pool.stopping && !(l = pool_pick()))
            pthread_cond_wait(&pool.wake, &pool.lock);
        if (pool.stopping)
            break;
        l->seats--;
        l->working++;
        pthread_mutex_unlock(&pool.lock);
        loop_work(l);
        pthread_mutex_lock(&pool.lock);
        if (--l->working == 0)
            pthread_cond_broadcast(&pool.idle);
    }
    pthread_mutex_unlock(&pool.lock);
    return NULL;
}

/* fork: no loop is running while the process is copied (the fork waits for those running to
 * end), and the child starts without helpers (threads are not copied). */
static void pool_prepare(void)
{
    pthread_mutex_lock(&pool.lock);
    while (pool.loops)
        pthread_cond_wait(&pool.idle, &pool.lock);
}

static void pool_parent(void)
{
    pthread_mutex_unlock(&pool.lock);
}

static void pool_child(void)
{
    pool.started = 0;
    pool.loops = NULL;
    pthread_mutex_unlock(&pool.lock);
}

static void pool_setup(void)
{
    pthread_atfork(pool_prepare, pool_parent, pool_child);
}

/* At exit or when the library is unloaded, the helpers end (their code is about to go). */
__attribute__((destructor)) static void pool_stop(void)
{
    pthread_mutex_lock(&pool.lock);
    pool.stopping = 1;
    pthread_cond_broadcast(&pool.wake);
    int started = pool.started;
    pthread_mutex_unlock(&pool.lock);
    for (int i = 0; i < started; i++)
        if (!pthread_equal(pool.ids[i], pthread_self()))
            pthread_join(pool.ids[i], NULL);
}

/* Shares the loop's items with up to `helpers` helper threads, the calling thread working too;
 * returns how many helped. */
static int pool_run(parallel_loop *l, int helpers)
{
    pthread_once(&pool_once, pool_setup);
    pthread_mutex_lock(&pool.lock);
    while (pool.started < helpers && !pool.stopping &&
           pthread_create(&pool.ids[pool.started], NULL, pool_helper, NULL) == 0)
        pool.started++;
    l->seats = helpers < pool.started ? helpers : pool.started;
    l->working = 0;
    l->later = NULL;
    parallel_loop **end = &pool.loops;
    while (*end)
        end = &(*end)->later;
    *end = l;
    int offered = l->seats;
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.lock);
    loop_work(l);
    /* Every item is taken: helpers that have not joined yet need not, and the caller waits only
     * for those inside (asleep, not spinning). */
    pthread_mutex_lock(&pool.lock);
    int joined = offered - l->seats;
    l->seats = 0;
    while (l->working > 0)
        pthread_cond_wait(&pool.idle, &pool.lock);
    for (parallel_loop **p = &pool.loops; *p; p = &(*p)->later)
        if (*p == l) {
            *p = l->later;
            break;
        }
    if (!pool.loops) /* a fork may be waiting for none to run */
        pthread_cond_broadcast(&pool.idle);
    pthread_mutex_unlock(&pool.lock);
    return joined;
}

int glcv_parallel_max_threads(int requested)
{
    int n = requested;
    if (n <= 0) {
#ifdef _OPENMP
        n = omp_get_max_threads(); /* reads OMP_NUM_THREADS, changes nothing */
#else
        cpu_set_t set;
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : online > 0 ? (int)online : 1;
#endif
    }
    return n < 1 ? 1 : n > PARALLEL_MAX_THREADS ? PARALLEL_MAX_THREADS : n;
}

int glcv_parallel_for(int n, int max_threads, glcv_range_fn fn, void *user)
{
    if (n <= 0)
        return 1;
    int most = glcv_parallel_max_threads(max_threads), outer = in_parallel_loop;
    if (n == 1 && !outer) { /* the helpers stay free for the item's own loops */
        fn(user, 0, 1);
        return 1;
    }
    in_parallel_loop = 1;
    if (most == 1 || outer) {
        fn(user, 0, n);
        in_parallel_loop = outer;
        return 1;
    }
    /* The probe: how long an item takes here, on the items the calling thread does first anyway. */
    int probe = n / 32 > 0 ? n / 32 : 1, rest = n - probe;
    double t0 = glcv_now();
    fn(user, 0, probe);
    double rest_ms = 1e3 * (glcv_now() - t0) * rest / probe;
    int threads = rest_ms >= most * GLCV_PARALLEL_MIN_MS ? most : (int)(rest_ms / GLCV_PARALLEL_MIN_MS);
    if (threads > rest)
        threads = rest;
    int helped = 0;
    if (threads > 1) {
        /* Chunks of a 16th of a thread's share: a thread kept off its core holds up little. */
        parallel_loop l = {fn, user, n, rest / (threads * 16) > 1 ? rest / (threads * 16) : 1, probe, 0, 0, NULL};
        helped = pool_run(&l, threads - 1);
    } else {
        fn(user, probe, n);
    }
    in_parallel_loop = 0;
    return helped + 1;
}

/* A team: its steps (glcv_team_share) are published one after another; each step's items are
 * taken by whichever of its threads comes first. */
#define TEAM_STEPS 64

struct glcv_team {
    glcv_team_fn main;
    void *user;
    atomic_int published; /* steps published */
    atomic_int finished;  /* main has returned */
    int steps;            /* steps main has made (main's thread only) */
    struct team_step {
        glcv_range_fn fn;
        void *user;
        int n;
        atomic_int next, done;
    } step[TEAM_STEPS];
};

/* Waiting for a teammate: spinning first (the waits inside a team are short), then yielding the
 * core, as a teammate kept off its core holds the team up. */
static void team_pause(int *spins)
{
    if (++*spins < 2000) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else {
        sched_yield();
    }
}

static void team_take(struct team_step *st)
{
    for (int i; (i = atomic_fetch_add(&st->next, 1)) < st->n;) {
        st->fn(st->user, i, i + 1);
        atomic_fetch_add_explicit(&st->done, 1, memory_order_release);
    }
}

/* A helper's part: every step main publishes, until main returns. */
static void team_help(glcv_team *team)
{
    for (int k = 0; k < TEAM_STEPS;) {
        int spins = 0;
        while (atomic_load_explicit(&team->published, memory_order_acquire) <= k) {
            if (atomic_load_explicit(&team->finished, memory_order_acquire))
                return;
            team_pause(&spins);
        }
        team_take(&team->step[k++]);
    }
}

static void team_item(void *user, int begin, int end)
{
    glcv_team *team = user;
    for (int i = begin; i < end; i++)
        if (i == 0) {
            team->main(team, team->user);
            atomic_store_explicit(&team->finished, 1, memory_order_release);
        } else {
            team_help(team);
        }
}

int glcv_team_run(int max_threads, glcv_team_fn main, void *user)
{
    int most = glcv_parallel_max_threads(max_threads);
    if (most == 1 || in_parallel_loop) {
        main(NULL, user);
        return 1;
    }
    glcv_team team = {.main = main, .user = user};
    atomic_init(&team.published, 0);
    atomic_init(&team.finished, 0);
    in_parallel_loop = 1;
    parallel_loop l = {team_item, &team, most, 1, 0, 0, 0, NULL};
    int helped = pool_run(&l, most - 1);
    in_parallel_loop = 0;
    return helped + 1;
}

void glcv_team_share(glcv_team *team, int n, glcv_range_fn fn, void *user)
{
    if (n <= 0)
        return;
    if (!team || n == 1 || team->steps >= TEAM_STEPS) {
        fn(user, 0, n);
        return;
    }
    struct team_step *st = &team->step[team->steps++];
    st->fn = fn;
    st->user = user;
    st->n = n;
    atomic_init(&st->next, 0);
    atomic_init(&st->done, 0);
    atomic_store_explicit(&team->published, team->steps, memory_order_release);
    team_take(st);
    int spins = 0;
    while (atomic_load_explicit(&st->done, memory_order_acquire) < n)
        team_pause(&spins);
}

static const char *const engine_names[] = {
    [GLCV_ENGINE_DEFAULT] = "auto", [GLCV_ENGINE_AUTO] = "auto", [GLCV_ENGINE_FRAGMENT] = "fragment",
    [GLCV_ENGINE_COMPUTE] = "compute", [GLCV_ENGINE_CPU] = "cpu", [GLCV_ENGINE_CUDA] = "cuda"};
GLCV_ENUM_NAMES(glcv_engine_mode, glcv_engine_mode, engine_names)

int glcv_pixel_format_size(glcv_pixel_format format)
{
    switch (format) {
    case GLCV_PIXEL_GRAY8: return 1;
    case GLCV_PIXEL_RGB8:
    case GLCV_PIXEL_BGR8: return 3;
    case GLCV_PIXEL_RGBA8:
    case GLCV_PIXEL_BGRA8: return 4;
    case GLCV_PIXEL_DEFAULT: break;
    }
    return 0;
}
