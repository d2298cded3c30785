/* Helpers of the service's test programs: checks, clocks, a captured log, servers started on the
 * loopback, the output that must stay empty, JSON fields (see serve_testlib.h). */
#define _GNU_SOURCE

#include "serve_testlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

FILE *st_out;
char st_dir[256];
int st_failures;

/* ---- Checks ------------------------------------------------------------------------------------ */

void st_fail(int line, const char *fmt, ...)
{
    FILE *f = st_out ? st_out : stdout;
    va_list ap;
    va_start(ap, fmt);
    fprintf(f, "FAIL (line %d): ", line);
    vfprintf(f, fmt, ap);
    fprintf(f, "\n");
    fflush(f);
    va_end(ap);
    st_failures++;
}

double st_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void st_sleep(double seconds)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* ---- The library's log ------------------------------------------------------------------------- */

enum { LOG_LINES = 64 };

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_lines[LOG_LINES][400];
static int log_count, log_watched;
static glcv_log_level watch_level;
static const char *watch_needle;

void st_log(void *user, glcv_log_level level, const char *message)
{
    static const char *names[] = {"?", "error", "warn", "info", "debug"};
    const char *name = names[level <= 4 ? level : 0];
    pthread_mutex_lock(&log_lock);
    char *line = log_lines[log_count % LOG_LINES];
    if (user)
        snprintf(line, sizeof log_lines[0], "%s: %s: %s", (const char *)user, name, message);
    else
        snprintf(line, sizeof log_lines[0], "%s: %s", name, message);
    log_count++;
    if (watch_needle && level == watch_level && strstr(message, watch_needle))
        log_watched++;
    pthread_mutex_unlock(&log_lock);
}

void st_log_reset(void)
{
    pthread_mutex_lock(&log_lock);
    log_count = log_watched = 0;
    pthread_mutex_unlock(&log_lock);
}

void st_log_watch(glcv_log_level level, const char *needle)
{
    pthread_mutex_lock(&log_lock);
    watch_level = level;
    watch_needle = needle;
    log_watched = 0;
    pthread_mutex_unlock(&log_lock);
}

int st_log_watched(void)
{
    pthread_mutex_lock(&log_lock);
    int n = log_watched;
    pthread_mutex_unlock(&log_lock);
    return n;
}

void st_log_show(const char *title, int most)
{
    most = most < LOG_LINES ? most : LOG_LINES;
    pthread_mutex_lock(&log_lock);
    int first = log_count > most ? log_count - most : 0;
    fprintf(st_out, "  %s:\n", title);
    for (int i = first; i < log_count; i++)
        fprintf(st_out, "    %s\n", log_lines[i % LOG_LINES]);
    pthread_mutex_unlock(&log_lock);
}

/* ---- Servers on the loopback ------------------------------------------------------------------- */

int st_free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof a;
    int port = -1;
    if (s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(s, (struct sockaddr *)&a, &length) == 0)
        port = ntohs(a.sin_port);
    if (s >= 0)
        close(s);
    return port;
}

static bool accepting(int port)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bool ok = s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) == 0;
    if (s >= 0)
        close(s);
    return ok;
}

void st_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

bool st_server_start(st_server *srv, double wait_s)
{
    const char *name = srv->kind == ST_MOSQUITTO ? "mosquitto" : "nats-server";
    char port[16], conf[512], data[512], log[512];
    snprintf(port, sizeof port, "%d", srv->port);
    snprintf(log, sizeof log, "%s/%s.log", st_dir, name);
    if (srv->kind == ST_MOSQUITTO) {
        char text[1024];
        snprintf(data, sizeof data, "%s/mosquitto-data", st_dir);
        mkdir(data, 0700);
        snprintf(text, sizeof text,
                 "listener %d 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location %s/\n"
                 "log_dest stdout\n%s",
                 srv->port, data, geteuid() == 0 ? "user root\n" : "");
        snprintf(conf, sizeof conf, "%s/mosquitto.conf", st_dir);
        st_write_file(conf, text);
    } else {
        snprintf(data, sizeof data, "%s/nats-data", st_dir);
    }
    pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        /* no stray server should the test die: the kernel ends it with its parent */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        if (srv->kind == ST_MOSQUITTO)
            execl(ST_MOSQUITTO_BIN, "mosquitto", "-c", conf, (char *)NULL);
        else
            execl(ST_NATS_BIN, "nats-server", "-js", "-a", "127.0.0.1", "-p", port, "-sd", data, (char *)NULL);
        _exit(127);
    }
    srv->pid = pid;
    for (double until = st_now() + wait_s; st_now() < until; st_sleep(0.02)) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            srv->pid = 0;
            fprintf(st_out, "  %s exited at start: see %s\n", name, log);
            return false;
        }
        if (accepting(srv->port))
            return true;
    }
    fprintf(st_out, "  %s does not accept connections on port %d after %.0f s: see %s\n", name, srv->port, wait_s, log);
    return false;
}

void st_server_stop(st_server *srv, int sig)
{
    if (srv->pid <= 0)
        return;
    kill(srv->pid, sig);
    int status;
    for (double until = st_now() + 5; st_now() < until; st_sleep(0.01))
        if (waitpid(srv->pid, &status, WNOHANG) == srv->pid) {
            srv->pid = 0;
            return;
        }
    kill(srv->pid, SIGKILL);
    waitpid(srv->pid, &status, 0);
    srv->pid = 0;
}

/* ---- A test's run ------------------------------------------------------------------------------ */

static int saved_out = -1, saved_err = -1;
static char stray[300];
static double began;

int st_begin(const char *name)
{
    signal(SIGPIPE, SIG_IGN);
    snprintf(st_dir, sizeof st_dir, "%s/glcv-%s-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
    if (!mkdtemp(st_dir)) {
        printf("FAIL: mkdtemp %s: %s\n", st_dir, strerror(errno));
        return 1;
    }
    /* the library must print nothing: its stdout and stderr go to a file that must stay empty */
    fflush(stdout);
    saved_out = dup(1);
    saved_err = dup(2);
    st_out = fdopen(dup(1), "w");
    snprintf(stray, sizeof stray, "%s/stray-output.txt", st_dir);
    int stray_fd = open(stray, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (!st_out || saved_out < 0 || saved_err < 0 || stray_fd < 0) {
        printf("FAIL: cannot redirect the output\n");
        return 1;
    }
    dup2(stray_fd, 1);
    dup2(stray_fd, 2);
    close(stray_fd);
    setvbuf(st_out, NULL, _IOLBF, 0);
    fprintf(st_out, "work folder %s (kept when a case fails)\n", st_dir);
    began = st_now();
    return 0;
}

static void remove_tree(const char *path)
{
    pid_t pid = fork();
    if (pid == 0) {
        execlp("rm", "rm", "-rf", path, (char *)NULL);
        _exit(127);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

int st_end(void)
{
    fflush(stdout);
    fflush(stderr);
    dup2(saved_out, 1);
    dup2(saved_err, 2);
    close(saved_out);
    close(saved_err);
    struct stat st;
    if (stat(stray, &st) == 0 && st.st_size > 0)
        st_fail(__LINE__, "something printed to stdout or stderr while the cases ran: see %s", stray);
    fprintf(st_out, "%s in %.1f s\n", st_failures ? "FAILED" : "passed", st_now() - began);
    if (st_failures == 0)
        remove_tree(st_dir);
    fclose(st_out);
    st_out = NULL;
    return st_failures ? 1 : 0;
}

/* ---- JSON fields ------------------------------------------------------------------------------- */

const char *st_json_text(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

double st_json_number(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}
