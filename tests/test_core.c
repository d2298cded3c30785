/* Status strings, engine-mode names, pixel formats, and the loops the CPU engines share among
 * threads (glcv_parallel_for: every item once, whatever the threads; nested loops alone, but
 * inside a loop of one item; glcv_team_run / glcv_team_share: every step's items once, done and
 * visible when the step returns). No GL needed. */
#define _POSIX_C_SOURCE 200809L
#include "testutil.h"

#include "core_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct loop_record {
    atomic_int *hits;     /* per item: how many times it ran */
    pthread_t *ran_on;    /* per item: the thread it ran on */
    int sleep_us;         /* per item */
    int nested_threads;   /* what a loop inside an item returned (the largest seen) */
} loop_record;

static void record_range(void *user, int begin, int end)
{
    loop_record *r = user;
    for (int i = begin; i < end; i++) {
        atomic_fetch_add(&r->hits[i], 1);
        r->ran_on[i] = pthread_self();
        if (r->sleep_us > 0) {
            struct timespec ts = {0, 1000L * r->sleep_us};
            nanosleep(&ts, NULL);
        }
    }
}

static void nested_range(void *user, int begin, int end)
{
    loop_record *r = user;
    record_range(user, begin, end);
    loop_record inner = *r;
    inner.sleep_us = 100; /* 6 ms: worth threads, were it not inside a loop */
    atomic_int hits[64] = {0};
    pthread_t on[64];
    inner.hits = hits;
    inner.ran_on = on;
    int t = glcv_parallel_for(64, 8, record_range, &inner);
    if (t > r->nested_threads)
        r->nested_threads = t;
}

static int check_loop(int n, int max_threads, int sleep_us, glcv_range_fn fn, int *distinct, int *nested);

static void *concurrent_caller(void *arg)
{
    (void)arg;
    for (int k = 0; k < 5; k++) {
        int d = 0;
        check_loop(64, 4, 100, record_range, &d, NULL);
    }
    return NULL;
}

/* Runs a loop of n items and checks that each ran once; returns the threads it used and sets
 * *distinct to how many different threads ran items. */
static int check_loop(int n, int max_threads, int sleep_us, glcv_range_fn fn, int *distinct, int *nested)
{
    loop_record r = {calloc((size_t)n, sizeof(atomic_int)), calloc((size_t)n, sizeof(pthread_t)), sleep_us, 0};
    if (!r.hits || !r.ran_on) {
        CHECK(0, "out of memory for %d items", n);
        free(r.hits);
        free(r.ran_on);
        return 0;
    }
    int threads = glcv_parallel_for(n, max_threads, fn, &r);
    int bad = 0, first = -1;
    for (int i = 0; i < n; i++)
        if (atomic_load(&r.hits[i]) != 1 && bad++ == 0)
            first = i;
    CHECK(bad == 0, "loop of %d items, at most %d threads: %d items did not run exactly once, first %d (%d times)",
          n, max_threads, bad, first, first >= 0 ? atomic_load(&r.hits[first]) : 0);
    pthread_t threads_seen[64];
    *distinct = 0;
    for (int i = 0; i < n; i++) {
        int seen = 0;
        for (int j = 0; j < *distinct && !seen; j++)
            seen = pthread_equal(r.ran_on[i], threads_seen[j]);
        if (!seen && *distinct < 64)
            threads_seen[(*distinct)++] = r.ran_on[i];
    }
    if (nested)
        *nested = r.nested_threads;
    free(r.hits);
    free(r.ran_on);
    return threads;
}

/* Two loops started at once on two threads, each of 64 items of 1 ms: the helpers are shared, so
 * each loop gets some (one loop at a time would leave the other on its caller alone). */
typedef struct sharing_caller {
    pthread_barrier_t *go;
    int threads, distinct;
} sharing_caller;

static void *sharing_main(void *arg)
{
    sharing_caller *c = arg;
    pthread_barrier_wait(c->go);
    c->threads = check_loop(64, 4, 1000, record_range, &c->distinct, NULL);
    return NULL;
}

static void check_sharing(void)
{
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, 2);
    sharing_caller c[2] = {{&go, 0, 0}, {&go, 0, 0}};
    pthread_t id[2];
    int started[2];
    for (int i = 0; i < 2; i++)
        started[i] = pthread_create(&id[i], NULL, sharing_main, &c[i]) == 0;
    CHECK(started[0] && started[1], "cannot start the two callers");
    if (!started[0] || !started[1]) { /* the one started waits at the barrier for good: give up */
        return;
    }
    for (int i = 0; i < 2; i++)
        pthread_join(id[i], NULL);
    pthread_barrier_destroy(&go);
    for (int i = 0; i < 2; i++)
        CHECK(c[i].threads >= 2 && c[i].distinct >= 2,
              "two loops at once, at most 4 threads each: loop %d used %d threads, %d ran items (the other %d)", i,
              c[i].threads, c[i].distinct, c[1 - i].threads);
}

/* Runs fn on n threads at once (at most 8) and waits for them. */
static void run_callers(int n, void *(*fn)(void *))
{
    pthread_t callers[8];
    int started[8];
    for (int i = 0; i < n && i < 8; i++)
        started[i] = pthread_create(&callers[i], NULL, fn, NULL) == 0;
    for (int i = 0; i < n && i < 8; i++) {
        CHECK(started[i], "cannot start caller %d", i);
        if (started[i])
            pthread_join(callers[i], NULL);
    }
}

static void test_parallel_for(void)
{
    static const int sizes[] = {1, 2, 31, 32, 33, 1000, 100000};
    static const int most[] = {0, 1, 3, 8};
    int distinct = 0, nested = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t m = 0; m < sizeof most / sizeof most[0]; m++) {
            int t = check_loop(sizes[s], most[m], 0, record_range, &distinct, NULL);
            int cap = glcv_parallel_max_threads(most[m]);
            CHECK(t >= 1 && t <= cap && distinct <= t, "%d items, at most %d threads: %d threads, %d ran items",
                  sizes[s], most[m], t, distinct);
        }
    /* 64 items of 200 us: 12 ms after the probe, worth 4 threads; the helpers wake in microseconds
     * and join (the count is of those that took part) */
    int t = check_loop(64, 4, 200, record_range, &distinct, NULL);
    CHECK(t >= 2 && t <= 4 && distinct >= 2 && distinct <= t, "64 items of 200 us, at most 4 threads: %d threads, "
          "%d ran items", t, distinct);
    t = check_loop(64, 1, 200, record_range, &distinct, NULL);
    CHECK(t == 1 && distinct == 1, "at most 1 thread: %d threads, %d ran items", t, distinct);
    /* a loop inside an item runs on that item's thread alone */
    t = check_loop(64, 4, 200, nested_range, &distinct, &nested);
    CHECK(t >= 2 && nested == 1, "nested loops: the outer used %d threads, an inner one %d (expected 1)", t, nested);
    /* loops on several threads at once share the helpers; all complete */
    run_callers(4, concurrent_caller);
    check_sharing();
    /* a child process has no helpers (threads are not copied): its loops make their own */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int d = 0, threads = check_loop(64, 4, 200, record_range, &d, NULL);
        _exit(test_failures == 0 && threads >= 2 ? 0 : 1);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
          "a loop in a forked child failed (status 0x%x)", status);
    CHECK(glcv_parallel_for(0, 0, record_range, NULL) == 1 && glcv_parallel_for(-5, 0, record_range, NULL) == 1,
          "an empty loop");
    CHECK(glcv_parallel_max_threads(0) >= 1 && glcv_parallel_max_threads(7) == 7, "max threads: %d, %d",
          glcv_parallel_max_threads(0), glcv_parallel_max_threads(7));
}

/* A team's task: `steps` steps (more than a team holds, so that the last run on main's thread),
 * step k of k % 9 items of k * 20 us each; after each, main checks that every item ran once and
 * wrote its value. */
typedef struct team_record {
    int steps;
    int item_us;
    int failures;          /* items wrong after a step returned */
    int saw_team;          /* main got a team */
    int step;              /* the step running */
    atomic_int hits[16];
    int value[16];
    pthread_t ran_on[16];
    pthread_t seen[8];     /* threads that ran items */
    int n_seen;
    pthread_mutex_t lock;
} team_record;

static void team_item(void *user, int begin, int end)
{
    team_record *r = user;
    for (int i = begin; i < end; i++) {
        atomic_fetch_add(&r->hits[i], 1);
        r->value[i] = r->step * 100 + i;
        r->ran_on[i] = pthread_self();
        if (r->item_us > 0) {
            struct timespec ts = {0, 1000L * r->item_us};
            nanosleep(&ts, NULL);
        }
    }
}

static void team_main(glcv_team *team, void *user)
{
    team_record *r = user;
    r->saw_team = team != NULL;
    for (int k = 0; k < r->steps; k++) {
        int n = k % 9;
        r->step = k;
        for (int i = 0; i < 16; i++) {
            atomic_store(&r->hits[i], 0);
            r->value[i] = -1;
        }
        glcv_team_share(team, n, team_item, r);
        for (int i = 0; i < 16; i++) {
            int want_hits = i < n ? 1 : 0, want = i < n ? k * 100 + i : -1;
            if (atomic_load(&r->hits[i]) != want_hits || r->value[i] != want) {
                if (r->failures++ == 0)
                    fprintf(stderr, "team step %d of %d items: item %d ran %d times, value %d (expected %d)\n", k, n,
                            i, atomic_load(&r->hits[i]), r->value[i], want);
            }
        }
        for (int i = 0; i < n; i++) {
            int known = 0;
            for (int j = 0; j < r->n_seen && !known; j++)
                known = pthread_equal(r->seen[j], r->ran_on[i]);
            if (!known && r->n_seen < 8)
                r->seen[r->n_seen++] = r->ran_on[i];
        }
    }
}

static int check_team(int max_threads, int steps, int item_us, int *distinct, int *saw_team)
{
    team_record r = {.steps = steps, .item_us = item_us};
    int threads = glcv_team_run(max_threads, team_main, &r);
    CHECK(r.failures == 0, "team of at most %d threads, %d steps: %d steps wrong", max_threads, steps, r.failures);
    *distinct = r.n_seen;
    *saw_team = r.saw_team;
    return threads;
}

static void team_in_loop(void *user, int begin, int end)
{
    int *alone = user;
    for (int i = begin; i < end; i++) {
        int distinct = 0, saw = 0;
        if (check_team(4, 10, 0, &distinct, &saw) != 1 || saw || distinct > 1)
            atomic_fetch_add((atomic_int *)alone, 1);
    }
}

static void *concurrent_team(void *arg)
{
    (void)arg;
    for (int k = 0; k < 5; k++) {
        int d = 0, saw = 0;
        check_team(3, 30, 20, &d, &saw);
    }
    return NULL;
}

static void test_team(void)
{
    int distinct = 0, saw = 0;
    /* 100 steps: more than a team holds (the rest run on main's thread), every item once */
    for (int most = 1; most <= 4; most++) {
        int t = check_team(most, 100, 0, &distinct, &saw);
        int cap = glcv_parallel_max_threads(most);
        CHECK(t >= 1 && t <= cap && distinct <= t && (cap > 1 || (!saw && t == 1)),
              "team of at most %d threads: %d took part, %d ran items, team %d", most, t, distinct, saw);
    }
    /* steps of 200 us items: the helper is awake between steps and takes items */
    int t = check_team(2, 40, 200, &distinct, &saw);
    CHECK(saw && t == 2 && distinct == 2, "team of 2 over 40 steps of 200 us items: %d took part, %d ran items", t,
          distinct);
    /* a team inside a loop runs alone */
    atomic_int alone = 0;
    glcv_parallel_for(8, 2, team_in_loop, &alone);
    CHECK(atomic_load(&alone) == 0, "%d teams inside a loop used helpers", atomic_load(&alone));
    /* teams on several threads at once share the helpers, all complete */
    run_callers(3, concurrent_team);
    /* a loop of one item leaves the helpers free: a loop inside it uses them */
    int nested = 0;
    t = check_loop(1, 4, 0, nested_range, &distinct, &nested);
    CHECK(t == 1 && nested >= 2, "a loop inside a loop of one item used %d threads (expected 2 or more)", nested);
}

int main(void)
{
    test_parallel_for();
    test_team();
    for (int s = GLCV_OK; s <= GLCV_ERROR_CORRUPT_DATA; s++) {
        const char *t = glcv_status_string((glcv_status)s);
        CHECK(t && strlen(t) > 0 && strcmp(t, "unknown status") != 0, "status %d has no text", s);
    }
    CHECK(strcmp(glcv_status_string((glcv_status)999), "unknown status") == 0, "unknown status text");

    const char *names[] = {"auto", "fragment", "compute", "cpu"};
    for (int i = 0; i < 4; i++) {
        glcv_engine_mode m;
        CHECK_OK(glcv_engine_mode_parse(names[i], &m));
        CHECK(strcmp(glcv_engine_mode_string(m), names[i]) == 0, "round trip of %s", names[i]);
    }
    glcv_engine_mode m;
    CHECK_STATUS(glcv_engine_mode_parse("gpu", &m), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_engine_mode_parse(NULL, &m), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(strcmp(glcv_engine_mode_string(GLCV_ENGINE_DEFAULT), "auto") == 0, "default is auto");

    CHECK(glcv_pixel_format_size(GLCV_PIXEL_GRAY8) == 1, "gray");
    CHECK(glcv_pixel_format_size(GLCV_PIXEL_BGR8) == 3, "bgr");
    CHECK(glcv_pixel_format_size(GLCV_PIXEL_RGBA8) == 4, "rgba");
    CHECK(glcv_pixel_format_size((glcv_pixel_format)42) == 0, "invalid format size");
    return test_finish("test_core");
}
