/* Helpers of the service's test programs (test_serve_broker, test_serve_cluster, test_serve_events,
 * serve_check): failed checks counted and printed with their line, a monotonic clock and a sleep, a
 * captured log kept in a ring to show on failure, mosquitto and nats-server started on free loopback
 * ports in a temporary work folder, the run's stdout and stderr sent to a file that must stay empty
 * (the library prints nothing), and the fields of a cJSON object. */
#ifndef GLCV_SERVE_TESTLIB_H
#define GLCV_SERVE_TESTLIB_H

#include <glcv/core.h>

#include <cjson/cJSON.h>

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#define ST_MOSQUITTO_BIN "/usr/sbin/mosquitto"
#define ST_NATS_BIN "/usr/sbin/nats-server"

/* ---- Checks ------------------------------------------------------------------------------------ */

extern FILE *st_out;   /* the test's own output: stdout as it was before st_begin (stdout until then) */
extern char st_dir[256]; /* the work folder made by st_begin */
extern int st_failures;

/* Prints "FAIL (line N): ..." to st_out and counts a failure. */
void st_fail(int line, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define ST_CHECK(cond, ...)                 \
    do {                                    \
        if (!(cond))                        \
            st_fail(__LINE__, __VA_ARGS__); \
    } while (0)

/* Seconds on the monotonic clock; sleeps that go on after a signal. */
double st_now(void);
void st_sleep(double seconds);

/* ---- The library's log ------------------------------------------------------------------------- */

/* A glcv_log_fn that keeps the last lines, "level: message" ("user: level: message" when `user` is
 * a string): a logger {st_log, NULL or "name", GLCV_LOG_DEBUG}. Thread-safe. */
void st_log(void *user, glcv_log_level level, const char *message);
/* Forgets the lines and the count of st_log_watched. */
void st_log_reset(void);
/* From now on st_log counts the messages at `level` that contain `needle` (a static string). */
void st_log_watch(glcv_log_level level, const char *needle);
int st_log_watched(void);
/* Prints "  TITLE:" and the last `most` lines (at most 64) to st_out. */
void st_log_show(const char *title, int most);

/* ---- Servers on the loopback ------------------------------------------------------------------- */

typedef enum st_server_kind { ST_MOSQUITTO, ST_NATS } st_server_kind;

/* A broker: mosquitto (persistence in st_dir/mosquitto-data) or nats-server with JetStream (in
 * st_dir/nats-data); its output goes to st_dir/NAME.log. pid 0: not running. */
typedef struct st_server {
    st_server_kind kind;
    int port;
    pid_t pid;
} st_server;

/* A port that was free on 127.0.0.1 a moment ago (-1 when none). */
int st_free_port(void);
/* Starts srv on its port (ended by the kernel should the test die) and waits at most wait_s for it
 * to accept connections; says why not on st_out. */
bool st_server_start(st_server *srv, double wait_s);
/* Sends sig and waits 5 s for the server to end, then kills it. */
void st_server_stop(st_server *srv, int sig);

/* Writes text to path (nothing when it cannot be opened). */
void st_write_file(const char *path, const char *text);

/* ---- A test's run ------------------------------------------------------------------------------ */

/* Ignores SIGPIPE, makes the work folder $TMPDIR/glcv-NAME-XXXXXX, sends stdout and stderr to a file
 * there (st_out keeps the old stdout, line-buffered) and says where the folder is. 0, or 1 after a
 * "FAIL: ..." line. */
int st_begin(const char *name);
/* Puts stdout and stderr back, fails when anything was printed to them, prints "passed/FAILED in T s"
 * (since st_begin), removes the work folder unless something failed, closes st_out; the exit status. */
int st_end(void);

/* ---- JSON fields ------------------------------------------------------------------------------- */

/* The string at key ("" when missing or not a string), the number at key (NAN when not a number). */
const char *st_json_text(const cJSON *o, const char *key);
double st_json_number(const cJSON *o, const char *key);

#endif
