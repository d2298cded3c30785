/* A concurrent frame pipeline for the glcv tools: frames are read (by a pool of worker threads, or
 * by one reader thread when the source must be read in order), processed strictly in frame order
 * on the calling thread (the thread whose GL context is current), encoded by the worker pool, and
 * finished on the calling thread in frame order again. A fixed number of slots bounds the frames
 * in flight: the callbacks keep their per-frame buffers per slot and reuse them, frame k using slot
 * k % slots.
 *
 *   read     workers (parallel_read) or one reader thread   frame k into its slot
 *   process  the calling thread, k = 0, 1, 2, ...            e.g. the GPU stage
 *   encode   workers, any order                              e.g. PNG encoding and writing
 *   finish   the calling thread, k = 0, 1, 2, ...            e.g. progress and statistics
 *
 * Errors: a stage that fails stops the pipeline at that frame. The frames before it are still
 * processed, encoded and finished, none after it is processed or encoded from then on (when
 * encode fails, later frames may be being encoded already; they are not finished), and the one
 * error is printed once they are: the error of the earliest frame that failed, so a frame that
 * fails to read gives the same outcome whatever the threads' timing. Ctrl-C
 * (cli_interrupt_catch) stops the reading; what was read is finished. */
#ifndef GLCV_TOOLS_PIPELINE_H
#define GLCV_TOOLS_PIPELINE_H

#include "cli.h"

#include <stdatomic.h>
#include <stdint.h>

enum { CLI_JOB_TEXT = 1024 };

/* One frame's work in a stage, as the callbacks get it. */
typedef struct cli_job {
    int slot;     /* the frame's slot, 0 .. slots - 1: where the callbacks keep its buffers */
    int64_t item; /* the frame's position in the pipeline: 0, 1, 2, ... */
    /* A logger for the library calls of read and encode: warnings and errors are kept with the
     * job and printed only if it is the job whose error is reported; with `verbose` debug
     * messages go to stderr at once. */
    glcv_logger logger;
    /* Nonzero once the pipeline stops (an error, or Ctrl-C): a read that waits may give up. */
    const atomic_int *stop;
    char log[CLI_JOB_TEXT];   /* the library's messages kept */
    char error[CLI_JOB_TEXT]; /* why the stage failed (cli_job_fail) */
    char cause[CLI_JOB_TEXT]; /* the library's first error in this job: the cause the report names */
    char what[CLI_JOB_TEXT];  /* cli_job_lib_error's `what`, for that report */
} cli_job;

/* Records why a job failed ("<program>: error: <text>" when it is reported); returns CLI_FAIL. */
int cli_job_fail(cli_job *job, const char *fmt, ...) CLI_PRINTF(2, 3);

/* cli_job_fail with "<what>: <status text>". */
int cli_job_lib_error(cli_job *job, const char *what, glcv_status status);

typedef struct cli_pipeline {
    void *user; /* passed to the callbacks */
    int slots;   /* frames in flight, >= 1 */
    int workers; /* worker threads, >= 1 */
    /* Nonzero: frames are read by the workers, several at once and in any order; zero: by one
     * reader thread, in order. */
    int parallel_read;
    int64_t count; /* frames to read; < 0: until read reports the end */
    int verbose;   /* the jobs' loggers pass debug messages to stderr */
    /* Reads frame job->item into slot job->slot; sets *end, reading nothing, at the end of the
     * input. Returns CLI_OK or (cli_job_fail) CLI_FAIL. */
    int (*read)(void *user, cli_job *job, int *end);
    /* Processes the frame; sets *encode when it is to be encoded. Returns CLI_OK, or CLI_FAIL
     * after printing the error itself (it runs in order on the calling thread). */
    int (*process)(void *user, cli_job *job, int *encode);
    /* Encodes the frame (NULL: nothing is encoded). Returns CLI_OK or (cli_job_fail) CLI_FAIL. */
    int (*encode)(void *user, cli_job *job);
    /* Finishes the frame (may be NULL); its slot is reused after. Returns CLI_OK, or CLI_FAIL
     * after printing the error itself. */
    int (*finish)(void *user, cli_job *job);
} cli_pipeline;

/* What a run did. */
typedef struct cli_pipeline_result {
    int64_t finished; /* frames finished */
    int interrupted;  /* Ctrl-C stopped the reading */
} cli_pipeline_result;

/* Runs the pipeline until the input ends, `count` frames are read, a stage fails or Ctrl-C. Starts
 * and joins its threads. Returns CLI_OK or CLI_FAIL (the error printed). */
int cli_pipeline_run(const cli_pipeline *pipeline, cli_pipeline_result *result);

/* The number of online processors (at least 1). */
int cli_online_cpus(void);

#endif
