/* The glcv tools' concurrent frame pipeline; see pipeline.h.
 *
 * One mutex guards the pipeline's state and one condition variable announces every change of it;
 * the stages' work runs outside the lock. Frame k lives in slot k % slots from its read until it
 * is finished; it may be read once frame k - slots is finished. */
#define _POSIX_C_SOURCE 200809L

#include "pipeline.h"
#include "source.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum slot_state {
    SLOT_FREE,      /* no frame, or the frame k - slots before it was finished */
    SLOT_READING,   /* frame `job.item` is being read */
    SLOT_READ,      /* read, waiting to be processed */
    SLOT_TO_ENCODE, /* processed, waiting for a worker to encode it */
    SLOT_ENCODING,
    SLOT_DONE /* processed (and encoded), waiting to be finished */
} slot_state;

typedef struct pipeline_run {
    const cli_pipeline *p;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    cli_job *jobs;
    slot_state *state;
    int64_t next_read;    /* the next frame to read */
    int64_t read_end;     /* frames that exist: the input ended (or reading stopped) there */
    int64_t next_process; /* the next frame to process */
    int64_t next_finish;  /* the next frame to finish: the frames before it are done */
    int64_t fail_item;    /* the earliest frame that failed (INT64_MAX: none) */
    int fail_printed;     /* its error was printed by the stage itself */
    cli_job failed;       /* a copy of its job, with the error */
    int quit;             /* the workers and the reader end */
    int interrupted;
    atomic_int stop;
} pipeline_run;

/* ---- jobs ---------------------------------------------------------------------------------------- */

static void append(char *buf, const char *text)
{
    size_t n = strlen(buf);
    snprintf(buf + n, CLI_JOB_TEXT - n, "%s", text);
}

/* A job's logger: warnings are kept, the first error is kept as the cause of a failure (reported in
 * one line with it), the rest printed (the logger's level filters). */
static void job_log(void *user, glcv_log_level level, const char *message)
{
    cli_job *job = user;
    if (level > GLCV_LOG_WARN) {
        glcv_log_stderr(NULL, level, message);
        return;
    }
    if (level == GLCV_LOG_ERROR && !job->cause[0]) {
        snprintf(job->cause, sizeof job->cause, "%s", message);
        return;
    }
    char line[CLI_JOB_TEXT];
    snprintf(line, sizeof line, "glcv: %s: %s\n", level == GLCV_LOG_ERROR ? "error" : "warning", message);
    append(job->log, line);
}

int cli_job_fail(cli_job *job, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(job->error, sizeof job->error, fmt, ap);
    va_end(ap);
    return CLI_FAIL;
}

int cli_job_lib_error(cli_job *job, const char *what, glcv_status status)
{
    snprintf(job->what, sizeof job->what, "%s", what);
    return cli_job_fail(job, "%s: %s", what, glcv_status_string(status));
}

static void start_job(pipeline_run *r, int slot, int64_t item)
{
    cli_job *job = &r->jobs[slot];
    job->slot = slot;
    job->item = item;
    job->log[0] = job->error[0] = job->cause[0] = job->what[0] = '\0';
}

/* Under the lock: frame `item` failed in a stage (its error in `job`, or printed already). */
static void record_failure(pipeline_run *r, const cli_job *job, int printed)
{
    if (job->item < r->fail_item) {
        r->fail_item = job->item;
        r->failed = *job;
        r->fail_printed = printed;
    }
    atomic_store(&r->stop, 1);
}

static void print_kept_log(const cli_job *job)
{
    if (job->log[0])
        fputs(job->log, stderr);
}

/* ---- reading ----------------------------------------------------------------------------------- */

/* Under the lock: whether the next frame may be read now. */
static int can_read(const pipeline_run *r)
{
    const cli_pipeline *p = r->p;
    return !r->quit && r->fail_item == INT64_MAX && r->next_read < r->read_end &&
           (p->count < 0 || r->next_read < p->count) && r->next_read < r->next_finish + p->slots;
}

/* Under the lock: whether reading has ended for good. */
static int reading_over(const pipeline_run *r)
{
    const cli_pipeline *p = r->p;
    return r->quit || r->fail_item != INT64_MAX || r->next_read >= r->read_end ||
           (p->count >= 0 && r->next_read >= p->count);
}

/* Under the lock: reads the next frame, unlocking while it is read. */
static void read_next(pipeline_run *r)
{
    if (cli_interrupted()) {
        r->interrupted = 1;
        r->read_end = r->next_read;
        pthread_cond_broadcast(&r->changed);
        return;
    }
    int64_t item = r->next_read++;
    int slot = (int)(item % r->p->slots);
    start_job(r, slot, item);
    r->state[slot] = SLOT_READING;
    pthread_mutex_unlock(&r->lock);
    int end = 0;
    int rc = r->p->read(r->p->user, &r->jobs[slot], &end);
    pthread_mutex_lock(&r->lock);
    if (rc != CLI_OK) {
        record_failure(r, &r->jobs[slot], 0);
        r->state[slot] = SLOT_FREE;
    } else if (end) {
        if (item < r->read_end)
            r->read_end = item;
        r->interrupted |= cli_interrupted();
        r->state[slot] = SLOT_FREE;
    } else {
        r->state[slot] = SLOT_READ;
    }
    pthread_cond_broadcast(&r->changed);
}

/* The reader thread of a source that is read in order. */
static void *reader_main(void *arg)
{
    pipeline_run *r = arg;
    pthread_mutex_lock(&r->lock);
    while (!reading_over(r)) {
        if (can_read(r))
            read_next(r);
        else
            pthread_cond_wait(&r->changed, &r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/* ---- workers: encoding first, then reading --------------------------------------------------------- */

/* Under the lock: the slot of the earliest frame waiting to be encoded (before the failed one), or
 * -1. */
static int next_to_encode(const pipeline_run *r)
{
    int best = -1;
    for (int s = 0; s < r->p->slots; s++)
        if (r->state[s] == SLOT_TO_ENCODE && r->jobs[s].item < r->fail_item &&
            (best < 0 || r->jobs[s].item < r->jobs[best].item))
            best = s;
    return best;
}

static void encode_slot(pipeline_run *r, int slot)
{
    r->state[slot] = SLOT_ENCODING;
    pthread_mutex_unlock(&r->lock);
    int rc = r->p->encode(r->p->user, &r->jobs[slot]);
    pthread_mutex_lock(&r->lock);
    if (rc != CLI_OK)
        record_failure(r, &r->jobs[slot], 0);
    r->state[slot] = SLOT_DONE;
    pthread_cond_broadcast(&r->changed);
}

static void *worker_main(void *arg)
{
    pipeline_run *r = arg;
    pthread_mutex_lock(&r->lock);
    while (!r->quit) {
        int slot = next_to_encode(r);
        if (slot >= 0)
            encode_slot(r, slot);
        else if (r->p->parallel_read && can_read(r))
            read_next(r);
        else
            pthread_cond_wait(&r->changed, &r->lock);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/* ---- the calling thread: process and finish in order ------------------------------------------------ */

/* Under the lock: finishes the frames that are done, in order, up to the failed one. */
static void finish_done(pipeline_run *r)
{
    const cli_pipeline *p = r->p;
    while (r->next_finish < r->next_process && r->next_finish < r->fail_item) {
        int slot = (int)(r->next_finish % p->slots);
        if (r->state[slot] != SLOT_DONE)
            return;
        pthread_mutex_unlock(&r->lock);
        cli_job *job = &r->jobs[slot];
        print_kept_log(job);
        int rc = p->finish ? p->finish(p->user, job) : CLI_OK;
        pthread_mutex_lock(&r->lock);
        if (rc != CLI_OK) {
            record_failure(r, job, 1);
            return;
        }
        r->state[slot] = SLOT_FREE;
        r->next_finish++;
        pthread_cond_broadcast(&r->changed);
    }
}

static void process_slot(pipeline_run *r, int slot)
{
    const cli_pipeline *p = r->p;
    pthread_mutex_unlock(&r->lock);
    int encode = 0;
    int rc = p->process(p->user, &r->jobs[slot], &encode);
    pthread_mutex_lock(&r->lock);
    r->next_process++;
    if (rc != CLI_OK) {
        record_failure(r, &r->jobs[slot], 1);
        r->state[slot] = SLOT_DONE;
    } else {
        r->state[slot] = encode && p->encode ? SLOT_TO_ENCODE : SLOT_DONE;
    }
    pthread_cond_broadcast(&r->changed);
}

/* Under the lock: the number of frames to finish, as far as it is known (INT64_MAX: not yet). */
static int64_t frames_to_finish(const pipeline_run *r)
{
    int64_t end = r->read_end < r->fail_item ? r->read_end : r->fail_item;
    return r->p->count >= 0 && r->p->count < end ? r->p->count : end;
}

/* The calling thread's loop; returns with the lock held once every frame is finished (or those
 * before the failed one). */
static void run_in_order(pipeline_run *r)
{
    const cli_pipeline *p = r->p;
    for (;;) {
        finish_done(r);
        int64_t end = frames_to_finish(r);
        if (r->next_finish >= end)
            return;
        int slot = (int)(r->next_process % p->slots);
        if (r->next_process < end && r->state[slot] == SLOT_READ && r->jobs[slot].item == r->next_process)
            process_slot(r, slot);
        else
            pthread_cond_wait(&r->changed, &r->lock);
    }
}

static void report_failure(const pipeline_run *r)
{
    if (r->fail_printed)
        return;
    print_kept_log(&r->failed);
    if (r->failed.cause[0] && r->failed.what[0])
        cli_report_cause(r->failed.what, r->failed.cause);
    else
        cli_error("%s", r->failed.error[0] ? r->failed.error : "a stage of the pipeline failed");
}

int cli_pipeline_run(const cli_pipeline *p, cli_pipeline_result *result)
{
    memset(result, 0, sizeof *result);
    pipeline_run r = {.p = p, .read_end = INT64_MAX, .fail_item = INT64_MAX};
    atomic_init(&r.stop, 0);
    r.jobs = calloc((size_t)p->slots, sizeof *r.jobs);
    r.state = calloc((size_t)p->slots, sizeof *r.state);
    pthread_t *threads = calloc((size_t)p->workers + 1, sizeof *threads);
    if (!r.jobs || !r.state || !threads) {
        free(r.jobs);
        free(r.state);
        free(threads);
        return cli_out_of_memory();
    }
    for (int s = 0; s < p->slots; s++) {
        r.jobs[s].logger = (glcv_logger){job_log, &r.jobs[s], p->verbose ? GLCV_LOG_DEBUG : GLCV_LOG_WARN};
        r.jobs[s].stop = &r.stop;
    }
    pthread_mutex_init(&r.lock, NULL);
    pthread_cond_init(&r.changed, NULL);

    int started = 0, rc = CLI_OK;
    for (int t = 0; t < p->workers + !p->parallel_read && rc == CLI_OK; t++) {
        int reader = t == p->workers;
        if (pthread_create(&threads[t], NULL, reader ? reader_main : worker_main, &r) != 0) {
            cli_error("cannot start a thread");
            rc = CLI_FAIL;
        } else {
            started++;
        }
    }
    pthread_mutex_lock(&r.lock);
    if (rc == CLI_OK)
        run_in_order(&r);
    r.quit = 1;
    atomic_store(&r.stop, 1);
    pthread_cond_broadcast(&r.changed);
    pthread_mutex_unlock(&r.lock);
    for (int t = 0; t < started; t++)
        pthread_join(threads[t], NULL);

    if (rc == CLI_OK && r.fail_item != INT64_MAX) {
        report_failure(&r);
        rc = CLI_FAIL;
    }
    result->finished = r.next_finish;
    result->interrupted = r.interrupted;
    pthread_cond_destroy(&r.changed);
    pthread_mutex_destroy(&r.lock);
    free(r.jobs);
    free(r.state);
    free(threads);
    return rc;
}

int cli_online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 ? (int)(n < 1024 ? n : 1024) : 1;
}
