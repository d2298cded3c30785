/* The glcv tools' shared part: the option parser, messages, helpers; see cli.h.
 *
 * Why one file of about 900 lines: it is the one place every command's arguments, messages and
 * file helpers go through, each part small; split, the parts would share the message state and
 * the usage rules through a header of their own. */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { PROGRESS_WIDTH = 30, PROGRESS_MIN_STEPS = 10, RECT_LIMIT = 1000000 };
#define PROGRESS_INTERVAL 0.1 /* seconds between two drawings of a bar */

static const char *g_program = "glcv";
static const cli_command *g_command;

/* The library's first error message on the main thread since the last report, held so that the
 * report names the cause in one line (see cli_logger). */
enum { HELD_TEXT = 1024 };
static pthread_mutex_t g_log_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t g_main_thread;
static int g_main_known, g_flush_at_exit;
static char g_held[HELD_TEXT];
static int g_held_set;

const char *const cli_gl_engines[] = {"auto", "fragment", "compute", "cpu", NULL};
const char *const cli_cuda_engines[] = {"auto", "cuda", "cpu", NULL};

static void flush_held_locked(void)
{
    if (g_held_set)
        glcv_log_stderr(NULL, GLCV_LOG_ERROR, g_held);
    g_held_set = 0;
}

/* At exit: a held message that no report took is printed, not lost. */
static void flush_held(void)
{
    pthread_mutex_lock(&g_log_lock);
    flush_held_locked();
    pthread_mutex_unlock(&g_log_lock);
}

void cli_start(const char *program, const cli_command *command)
{
    g_program = program;
    g_command = command;
    if (!g_main_known) {
        g_main_thread = pthread_self();
        g_main_known = 1;
    }
    if (!g_flush_at_exit)
        g_flush_at_exit = atexit(flush_held) == 0;
}

int cli_exit_status(int rc)
{
    return rc == CLI_HELP ? CLI_OK : rc;
}

/* ---- messages ----------------------------------------------------------------------------------- */

static void vmessage(const char *kind, const char *fmt, va_list ap, const char *tail)
{
    pthread_mutex_lock(&g_log_lock);
    flush_held_locked(); /* in the order things happened */
    fprintf(stderr, "%s: %s: ", g_program, kind);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "%s\n", tail);
    pthread_mutex_unlock(&g_log_lock);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage("error", fmt, ap, "");
    va_end(ap);
}

void cli_warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage("warning", fmt, ap, "");
    va_end(ap);
}

int cli_usage(const char *fmt, ...)
{
    char tail[128];
    if (g_command && g_command->name)
        snprintf(tail, sizeof tail, " (see '%s %s --help')", g_program, g_command->name);
    else
        snprintf(tail, sizeof tail, " (see '%s --help')", g_program);
    va_list ap;
    va_start(ap, fmt);
    vmessage("error", fmt, ap, tail);
    va_end(ap);
    return CLI_USAGE;
}

/* The library's messages start with the module that logs them ("media: ", "image load: "): a
 * report in the tool's words leaves that out. */
static const char *without_module(const char *message)
{
    const char *p = message;
    while (islower((unsigned char)*p) || isdigit((unsigned char)*p) || *p == '_' || *p == ' ')
        p++;
    return p > message && p - message <= 24 && p[0] == ':' && p[1] == ' ' && p[2] ? p + 2 : message;
}

/* One line for a failure whose cause the library logged: the cause alone when it names `what`
 * (the file, usually) already, else "<what>: <cause>". */
int cli_report_cause(const char *what, const char *cause)
{
    const char *bare = without_module(cause);
    if (!what || !*what || strstr(bare, what))
        cli_error("%s", bare);
    else if (strstr(cause, what))
        cli_error("%s", cause);
    else
        cli_error("%s: %s", what, bare);
    return CLI_FAIL;
}

/* Takes the held message into `text` (HELD_TEXT bytes); 0 when none is held for this thread. */
static int take_held(char *text)
{
    int taken = 0;
    pthread_mutex_lock(&g_log_lock);
    if (g_held_set && g_main_known && pthread_equal(pthread_self(), g_main_thread)) {
        memcpy(text, g_held, HELD_TEXT);
        g_held_set = 0;
        taken = 1;
    }
    pthread_mutex_unlock(&g_log_lock);
    return taken;
}

int cli_lib_error(const char *what, glcv_status status)
{
    char cause[HELD_TEXT];
    if (take_held(cause))
        return cli_report_cause(what, cause);
    cli_error("%s: %s", what, glcv_status_string(status));
    return CLI_FAIL;
}

int cli_lib_failure(const char *what, glcv_status status)
{
    char cause[HELD_TEXT];
    if (take_held(cause))
        return cli_report_cause(NULL, cause);
    cli_error("%s: %s", what, glcv_status_string(status));
    return CLI_FAIL;
}

int cli_out_of_memory(void)
{
    cli_error("out of memory");
    return CLI_FAIL;
}

/* ---- option values: the whole text must be the value ------------------------------------------- */

static int parse_int(const char *name, const char *text, long lo, long hi, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || isspace((unsigned char)text[0]))
        return cli_usage("%s: '%s' is not an integer", name, text);
    if (errno == ERANGE || v < lo || v > hi)
        return cli_usage("%s: '%s' must be between %ld and %ld", name, text, lo, hi);
    *out = (int)v;
    return CLI_OK;
}

static int parse_uint(const char *name, const char *text, uint64_t hi, uint64_t *out)
{
    int hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    if (!isxdigit((unsigned char)text[hex ? 2 : 0]))
        return cli_usage("%s: '%s' is not a non-negative integer", name, text);
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, hex ? 16 : 10);
    if (*end != '\0')
        return cli_usage("%s: '%s' is not a non-negative integer", name, text);
    if (errno == ERANGE || v > hi)
        return cli_usage("%s: '%s' must be at most %llu", name, text, (unsigned long long)hi);
    *out = (uint64_t)v;
    return CLI_OK;
}

/* Reals end up in the library's float parameters: beyond FLT_MAX is not finite there. */
static int parse_real(const char *name, const char *text, double lo, int lo_open, double hi, int hi_open,
                      double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || isspace((unsigned char)text[0]))
        return cli_usage("%s: '%s' is not a number", name, text);
    if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1.0) || fabs(v) > FLT_MAX)
        return cli_usage("%s: '%s' is not a finite number", name, text);
    /* a value that becomes 0 in the library's floats would silently mean "the default" */
    if (v != 0.0 && fabs(v) < FLT_MIN)
        return cli_usage("%s: '%s' is too close to 0: it would be 0 (the default) in single precision; the "
                         "smallest is %g",
                         name, text, (double)FLT_MIN);
    if (v < lo || (lo_open && v == lo))
        return cli_usage("%s: '%s' must be %s %g", name, text, lo_open ? ">" : ">=", lo);
    if (v > hi || (hi_open && v == hi))
        return cli_usage("%s: '%s' must be %s %g", name, text, hi_open ? "<" : "<=", hi);
    *out = v;
    return CLI_OK;
}

/* "a, b or c" of a NULL-terminated list. */
static void join_choices(const char *const *choices, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; choices[i] && len < size; i++) {
        const char *sep = i == 0 ? "" : choices[i + 1] ? ", " : " or ";
        int n = snprintf(buf + len, size - len, "%s%s", sep, choices[i]);
        len += n > 0 ? (size_t)n : 0;
    }
}

static int parse_choice(const cli_option *o, const char *name, const char *text, int *index)
{
    for (int i = 0; o->choices[i]; i++) {
        if ((o->any_case ? strcasecmp(text, o->choices[i]) : strcmp(text, o->choices[i])) == 0) {
            *index = i;
            return CLI_OK;
        }
    }
    char names[256];
    join_choices(o->choices, names, sizeof names);
    return cli_usage("%s: '%s' is not %s: use %s", name, text,
                     o->what ? o->what : o->kind == CLI_ENGINE ? "an engine" : "a choice", names);
}

/* "x,y,w,h" with x, y in lo..hi and w, h in 1..RECT_LIMIT. */
static int parse_rect(const char *name, const char *text, long lo, long hi, glcv_rect *out)
{
    long r[4];
    const char *p = text;
    for (int i = 0; i < 4; i++) {
        char *end = NULL;
        errno = 0;
        if (!isdigit((unsigned char)*p) && *p != '-')
            return cli_usage("%s: '%s' is not x,y,w,h (four integers)", name, text);
        r[i] = strtol(p, &end, 10);
        if (errno == ERANGE || r[i] < (i < 2 ? lo : -RECT_LIMIT) || r[i] > (i < 2 ? hi : RECT_LIMIT))
            return cli_usage("%s: '%s': a value is out of range", name, text);
        if ((i < 3 && *end != ',') || (i == 3 && *end != '\0'))
            return cli_usage("%s: '%s' is not x,y,w,h (four integers)", name, text);
        p = end + 1;
    }
    if (r[2] < 1 || r[3] < 1)
        return cli_usage("%s: '%s': width and height must be >= 1", name, text);
    *out = (glcv_rect){(int)r[0], (int)r[1], (int)r[2], (int)r[3]};
    return CLI_OK;
}

int cli_parse_rect(const char *name, const char *text, glcv_rect *out)
{
    return parse_rect(name, text, -RECT_LIMIT, RECT_LIMIT, out);
}

/* "WxH" with 1 <= W, H <= CLI_MAX_SIDE. */
static int parse_size(const char *name, const char *text, cli_size *out)
{
    char *end = NULL;
    errno = 0;
    long width = isdigit((unsigned char)text[0]) ? strtol(text, &end, 10) : -1;
    long height = -1;
    if (width >= 0 && (*end == 'x' || *end == 'X') && isdigit((unsigned char)end[1]))
        height = strtol(end + 1, &end, 10);
    if (height < 0 || *end != '\0')
        return cli_usage("%s: '%s' is not a size like 320x240", name, text);
    if (errno == ERANGE || width < 1 || height < 1 || width > CLI_MAX_SIDE || height > CLI_MAX_SIDE)
        return cli_usage("%s: '%s': width and height must be between 1 and %d", name, text, CLI_MAX_SIDE);
    *out = (cli_size){(int)width, (int)height};
    return CLI_OK;
}

/* The address of the value an option stores next: its slot in the array of a repeatable one. */
static void *value_slot(const cli_option *o, size_t size)
{
    return o->count ? (char *)o->value + (size_t)*o->count * size : o->value;
}

static size_t value_size(cli_kind kind)
{
    switch (kind) {
    case CLI_FLAG:
    case CLI_INT:
    case CLI_CHOICE: return sizeof(int);
    case CLI_UINT: return sizeof(uint64_t);
    case CLI_REAL: return sizeof(double);
    case CLI_STRING: return sizeof(const char *);
    case CLI_ENGINE: return sizeof(glcv_engine_mode);
    case CLI_RECT: return sizeof(glcv_rect);
    case CLI_SIZE: return sizeof(cli_size);
    }
    return 0;
}

/* Parses `text` (NULL for a flag or a bare option) into the option's value. */
static int store_value(const cli_option *o, const char *name, const char *text)
{
    if (o->count && *o->count >= o->max_count)
        return cli_usage("%s: given more than %d times", name, o->max_count);
    void *slot = value_slot(o, value_size(o->kind));
    int rc = CLI_OK, index = 0;
    switch (o->kind) {
    case CLI_FLAG: *(int *)slot = !o->clear; break;
    case CLI_INT:
        if (text)
            rc = parse_int(name, text, (long)o->min, (long)o->max, slot);
        else
            *(int *)slot = o->bare;
        break;
    case CLI_UINT: rc = parse_uint(name, text, o->umax, slot); break;
    case CLI_REAL: rc = parse_real(name, text, o->min, o->open_min, o->max, o->open_max, slot); break;
    case CLI_STRING:
        if (!*text)
            return cli_usage("%s: empty %s", name, o->what ? o->what : "value");
        *(const char **)slot = text;
        break;
    case CLI_CHOICE: rc = parse_choice(o, name, text, slot); break;
    case CLI_ENGINE:
        rc = parse_choice(o, name, text, &index);
        if (rc == CLI_OK && glcv_engine_mode_parse(o->choices[index], slot) != GLCV_OK)
            rc = cli_usage("%s: '%s' is not an engine", name, text);
        break;
    case CLI_RECT:
        rc = o->min == 0 && o->max == 0 ? parse_rect(name, text, -RECT_LIMIT, RECT_LIMIT, slot)
                                        : parse_rect(name, text, (long)o->min, (long)o->max, slot);
        break;
    case CLI_SIZE: rc = parse_size(name, text, slot); break;
    }
    if (rc == CLI_OK && o->count)
        ++*o->count;
    return rc;
}

/* ---- the parser --------------------------------------------------------------------------------- */

static int is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

static int spelled(const char *candidate, const char *arg, size_t len)
{
    return candidate && strlen(candidate) == len && strncmp(candidate, arg, len) == 0;
}

/* A plain number: what a bare option takes as its value from the next argument. */
static int is_count(const char *text)
{
    if (!*text)
        return 0;
    for (const char *p = text; *p; p++)
        if (!isdigit((unsigned char)*p))
            return 0;
    return 1;
}

/* Parses the option at argv[*i], advancing *i past a separate value. */
static int parse_option(cli_args *args, int argc, char **argv, int *i)
{
    const char *arg = argv[*i];
    const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    int k = 0;
    while (args->options[k].name && !spelled(args->options[k].name, arg, len) &&
           !spelled(args->options[k].alias, arg, len))
        k++;
    const cli_option *o = &args->options[k];
    if (!o->name)
        return cli_usage("unknown option '%.*s'", (int)len, arg);
    const char *name = spelled(o->name, arg, len) ? o->name : o->alias;
    const char *value = eq ? eq + 1 : NULL;
    if (o->kind == CLI_FLAG && value)
        return cli_usage("%s takes no value", name);
    if (o->kind != CLI_FLAG && !value && o->bare) {
        if (*i + 1 < argc && is_count(argv[*i + 1]))
            value = argv[++*i];
    } else if (o->kind != CLI_FLAG && !value) {
        if (*i + 1 >= argc)
            return cli_usage("%s needs a value", name);
        value = argv[++*i];
    }
    int rc = store_value(o, name, value);
    if (rc == CLI_OK)
        args->given[k] = 1;
    return rc;
}

int cli_parse(const cli_option *options, int argc, char **argv, cli_args *args)
{
    memset(args, 0, sizeof *args);
    args->options = options;
    args->items = argv;
    int help = 0, options_done = 0, n = 0;
    for (int k = 0; options[k].name; k++) {
        if (k + 1 >= CLI_MAX_OPTIONS) {
            cli_error("more than %d options in one table", CLI_MAX_OPTIONS - 1);
            return CLI_FAIL;
        }
    }
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        int rc = CLI_OK;
        if (options_done || arg[0] != '-' || arg[1] == '\0')
            argv[n++] = argv[i]; /* n <= i: a slot already read */
        else if (strcmp(arg, "--") == 0)
            options_done = 1;
        else if (is_help(arg))
            help = 1;
        else
            rc = parse_option(args, argc, argv, &i);
        if (rc != CLI_OK)
            return rc;
    }
    args->count = n;
    if (help) {
        fputs(g_command && g_command->help ? g_command->help : "", stdout);
        return CLI_HELP;
    }
    return CLI_OK;
}

int cli_given(const cli_args *args, const void *value)
{
    for (int k = 0; args && args->options && args->options[k].name; k++)
        if (args->options[k].value == value)
            return args->given[k];
    return 0;
}

int cli_expect_args(const cli_args *args, int min, int max, const char *what)
{
    if (args->count > max)
        return cli_usage("unexpected argument '%s'", args->items[max]);
    if (args->count < min)
        return cli_usage("give %s", what);
    return CLI_OK;
}

int cli_parse_expecting(const cli_option *options, int argc, char **argv, cli_args *args, int min, int max,
                        const char *what)
{
    int rc = cli_parse(options, argc, argv, args);
    return rc == CLI_OK ? cli_expect_args(args, min, max, what) : rc;
}

/* ---- helpers ------------------------------------------------------------------------------------ */

/* The tool's log function; `user` is non-NULL for --verbose. Without it, the first error the
 * library logs on the main thread is held for the report that follows (cli_lib_error); anything
 * else printed first, or the end of the program, prints it. */
static void cli_log(void *user, glcv_log_level level, const char *message)
{
    pthread_mutex_lock(&g_log_lock);
    int main_thread = g_main_known && pthread_equal(pthread_self(), g_main_thread);
    if (!user && level == GLCV_LOG_ERROR && main_thread) {
        /* the first message names the cause; the ones after it follow from it */
        if (!g_held_set)
            snprintf(g_held, sizeof g_held, "%s", message);
        g_held_set = 1;
    } else {
        flush_held_locked();
        glcv_log_stderr(NULL, level, message);
    }
    pthread_mutex_unlock(&g_log_lock);
}

glcv_logger cli_logger(int verbose)
{
    static int verbose_mark;
    glcv_logger logger = {cli_log, verbose ? &verbose_mark : NULL, verbose ? GLCV_LOG_DEBUG : GLCV_LOG_WARN};
    return logger;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cli_median(double *values, size_t count)
{
    if (count == 0)
        return 0.0;
    qsort(values, count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

int cli_paths_add(cli_paths *list, const char *text)
{
    if (list->count == list->capacity) {
        int capacity = list->capacity ? 2 * list->capacity : 64;
        char **items = realloc(list->items, (size_t)capacity * sizeof *items);
        if (!items)
            return cli_out_of_memory();
        list->items = items;
        list->capacity = capacity;
    }
    char *copy = strdup(text);
    if (!copy)
        return cli_out_of_memory();
    list->items[list->count++] = copy;
    return CLI_OK;
}

void cli_paths_free(cli_paths *list)
{
    for (int i = 0; i < list->count; i++)
        free(list->items[i]);
    free(list->items);
    memset(list, 0, sizeof *list);
}

char *cli_path_join(const char *dir, const char *name, const char *suffix)
{
    size_t n = strlen(dir);
    const char *sep = n > 0 && dir[n - 1] == '/' ? "" : "/";
    size_t size = n + strlen(sep) + strlen(name) + strlen(suffix) + 1;
    char *path = malloc(size);
    if (path)
        snprintf(path, size, "%s%s%s%s", dir, sep, name, suffix);
    return path;
}

char *cli_path_stem(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    char *stem = malloc(n + 1);
    if (!stem)
        return NULL;
    memcpy(stem, base, n);
    stem[n] = '\0';
    return stem;
}

char *cli_output_path(const char *dir, const char *path, const char *suffix)
{
    char *stem = cli_path_stem(path);
    char *out = stem ? cli_path_join(dir, stem, suffix) : NULL;
    free(stem);
    return out;
}

typedef struct stem_entry {
    char *stem;
    const char *path;
} stem_entry;

static int compare_stem_entries(const void *a, const void *b)
{
    return strcmp(((const stem_entry *)a)->stem, ((const stem_entry *)b)->stem);
}

int cli_check_distinct_stems(char *const *paths, int count, const char *suffix)
{
    if (count < 2)
        return CLI_OK;
    stem_entry *entries = calloc((size_t)count, sizeof *entries);
    int rc = entries ? CLI_OK : cli_out_of_memory();
    for (int k = 0; k < count && rc == CLI_OK; k++) {
        entries[k] = (stem_entry){cli_path_stem(paths[k]), paths[k]};
        if (!entries[k].stem)
            rc = cli_out_of_memory();
    }
    if (rc == CLI_OK)
        qsort(entries, (size_t)count, sizeof *entries, compare_stem_entries);
    for (int k = 1; k < count && rc == CLI_OK; k++) {
        if (strcmp(entries[k - 1].stem, entries[k].stem) == 0) {
            cli_error("%s and %s would both write %s%s: give frames distinct file names", entries[k - 1].path,
                      entries[k].path, entries[k].stem, suffix);
            rc = CLI_FAIL;
        }
    }
    for (int k = 0; entries && k < count; k++)
        free(entries[k].stem);
    free(entries);
    return rc;
}

void cli_format_pixels(double pixels, char *text, size_t size)
{
    /* "0.0 Mpixel" says nothing: small counts are written in pixels */
    if (pixels < 1e5)
        snprintf(text, size, "%.0f pixel%s", pixels, pixels == 1 ? "" : "s");
    else
        snprintf(text, size, "%.1f Mpixel", pixels / 1e6);
}

int cli_is_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

int cli_digits_for(int count)
{
    int digits = 4;
    for (int limit = 10000; count > limit && digits < 10; limit *= 10)
        digits++;
    return digits;
}

int cli_make_dir(const char *dir)
{
    char *buf = strdup(dir);
    int rc = CLI_FAIL;
    if (!buf)
        return cli_out_of_memory();
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            cli_error("%s: cannot create folder %s: %s", dir, buf, strerror(errno));
            goto cleanup;
        }
        *p = '/';
    }
    if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
        cli_error("%s: cannot create folder: %s", dir, strerror(errno));
        goto cleanup;
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        cli_error("%s: not a folder", dir);
        goto cleanup;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        cli_error("%s: folder not writable: %s", dir, strerror(errno));
        goto cleanup;
    }
    rc = CLI_OK;
cleanup:
    free(buf);
    return rc;
}

/* ---- image files --------------------------------------------------------------------------------- */

int cli_is_companion_image(const char *path)
{
    static const char *const whole[] = {"background", "dynamic", "roi"};
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    const char *dot = strrchr(name, '.');
    size_t stem = dot && dot != name ? (size_t)(dot - name) : strlen(name);
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++)
        if (stem == strlen(whole[i]) && strncasecmp(name, whole[i], stem) == 0)
            return 1;
    if (strncasecmp(name, "truth_", 6) == 0)
        return 1;
    return strncasecmp(name, "gt", 2) == 0 && (isdigit((unsigned char)name[2]) || name[2] == '_');
}

int cli_collect_images(char *const *args, int count, cli_paths *out)
{
    for (int i = 0; i < count; i++) {
        struct stat sb;
        if (stat(args[i], &sb) != 0) {
            cli_error("%s: %s", args[i], strerror(errno));
            return CLI_FAIL;
        }
        if (!S_ISDIR(sb.st_mode)) {
            if (cli_paths_add(out, args[i]) != CLI_OK)
                return CLI_FAIL;
            continue;
        }
        glcv_file_list files = {0};
        glcv_status st = glcv_image_list_folder(args[i], NULL, &files);
        if (st != GLCV_OK)
            return cli_lib_error(args[i], st);
        int rc = CLI_OK, frames = 0;
        if (files.count == 0) {
            cli_error("%s: the folder holds no image files (.png .jpg .jpeg .bmp .tga .ppm .pgm)", args[i]);
            rc = CLI_FAIL;
        }
        /* The background and ground truth that glcv synth (or a CDnet folder) keeps beside the frames
         * are no frames; a folder of nothing else is what it holds, though (a folder of masks). */
        for (int k = 0; k < files.count; k++)
            frames += !cli_is_companion_image(files.paths[k]);
        for (int k = 0; k < files.count && rc == CLI_OK; k++)
            if (frames == 0 || !cli_is_companion_image(files.paths[k]))
                rc = cli_paths_add(out, files.paths[k]);
        glcv_file_list_free(&files);
        if (rc != CLI_OK)
            return rc;
    }
    return CLI_OK;
}

int cli_probe_image(const char *path, const glcv_logger *logger, int *width, int *height, int *channels)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        cli_error("%s: %s", path, strerror(errno));
        return CLI_FAIL;
    }
    if (!S_ISREG(sb.st_mode)) {
        cli_error("%s: not a regular file", path);
        return CLI_FAIL;
    }
    /* without a logger the library's reason is still wanted, in the one line of the report */
    glcv_logger held = cli_logger(0);
    glcv_status st = glcv_image_info(path, width, height, channels, logger ? logger : &held);
    if (st != GLCV_OK)
        return cli_lib_error(path, st);
    /* refused here, before any output exists, rather than when the frame's turn to be decoded comes */
    size_t limit = glcv_image_max_pixels();
    if (limit && (size_t)*width * (size_t)*height > limit) {
        char size[32], max[32];
        cli_format_pixels((double)*width * (double)*height, size, sizeof size);
        cli_format_pixels((double)limit, max, sizeof max);
        cli_error("'%s' is %dx%d (%s), above the limit of %s: not decoded (a larger limit: --max-pixels N)", path,
                  *width, *height, size, max);
        return CLI_FAIL;
    }
    return CLI_OK;
}

int cli_check_size(const char *path, const char *reference, int width, int height, const glcv_logger *logger)
{
    int w = 0, h = 0, channels = 0;
    if (cli_probe_image(path, logger, &w, &h, &channels) != CLI_OK)
        return CLI_FAIL;
    if (w != width || h != height) {
        cli_error("%s is %dx%d but %s is %dx%d: all images must have the same size", path, w, h, reference, width,
                  height);
        return CLI_FAIL;
    }
    return CLI_OK;
}

int cli_common_size(char *const *paths, int count, const glcv_logger *logger, int *width, int *height)
{
    int channels = 0;
    if (count < 1 || cli_probe_image(paths[0], logger, width, height, &channels) != CLI_OK)
        return CLI_FAIL;
    for (int i = 1; i < count; i++)
        if (cli_check_size(paths[i], paths[0], *width, *height, logger) != CLI_OK)
            return CLI_FAIL;
    return CLI_OK;
}

int cli_load_rgb(const char *path, const glcv_logger *logger, glcv_image *out)
{
    glcv_image_free(out);
    glcv_status st = glcv_image_load(path, GLCV_PIXEL_RGB8, logger, out);
    return st == GLCV_OK ? CLI_OK : cli_lib_error(path, st);
}

/* ---- progress bar -------------------------------------------------------------------------------- */

cli_progress cli_progress_start(int quiet, size_t total)
{
    cli_progress bar = {!quiet && total >= PROGRESS_MIN_STEPS && isatty(fileno(stderr)), total, 0, NULL, 0, 0, 0};
    bar.start = cli_now();
    return bar;
}

cli_progress cli_progress_start_rate(int quiet, size_t total, const char *unit)
{
    cli_progress bar = cli_progress_start(quiet, total);
    bar.enabled = !quiet && (total == 0 || total >= PROGRESS_MIN_STEPS) && isatty(fileno(stderr));
    bar.rate_unit = unit;
    return bar;
}

void cli_progress_show(cli_progress *bar, size_t done)
{
    if (!bar || !bar->enabled)
        return;
    double now = cli_now();
    if (done != bar->total && now - bar->last_draw < PROGRESS_INTERVAL)
        return;
    bar->last_draw = now;
    char line[160];
    int n = 0;
    if (bar->total) {
        char cells[PROGRESS_WIDTH + 1];
        size_t filled = done * PROGRESS_WIDTH / bar->total;
        for (size_t i = 0; i < PROGRESS_WIDTH; i++)
            cells[i] = i < filled ? '#' : '.';
        cells[PROGRESS_WIDTH] = '\0';
        n = snprintf(line, sizeof line, "[%s] %zu/%zu", cells, done, bar->total);
    } else {
        n = snprintf(line, sizeof line, "%zu %s", done, bar->rate_unit ? bar->rate_unit : "steps");
    }
    if (bar->rate_unit && now > bar->start && n > 0 && (size_t)n < sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, ", %.1f %s/s", (double)done / (now - bar->start),
                      bar->rate_unit);
    int pad = bar->width > n ? bar->width - n : 0;
    fprintf(stderr, "\r%s%*s", line, pad, "");
    fflush(stderr);
    bar->width = n;
}

void cli_progress_step(cli_progress *bar)
{
    if (bar)
        cli_progress_show(bar, bar->done++);
}

void cli_progress_clear(cli_progress *bar)
{
    if (!bar || !bar->enabled)
        return;
    fprintf(stderr, "\r%*s\r", bar->width, "");
    fflush(stderr);
    bar->width = 0;
    bar->last_draw = 0;
}

void cli_progress_end(cli_progress *bar)
{
    cli_progress_clear(bar);
    if (bar)
        bar->enabled = 0;
}

/* ---- the median of image files ------------------------------------------------------------------- */

typedef struct median_files {
    char *const *paths;
    int step;
    const glcv_logger *logger;
    cli_progress *bar;
    glcv_image frame; /* the frame last read, handed to the median in place */
} median_files;

static glcv_status median_file(void *user, int k, glcv_image *frame)
{
    median_files *m = user;
    cli_progress_step(m->bar);
    if (cli_load_rgb(m->paths[k * m->step], m->logger, &m->frame) != CLI_OK)
        return GLCV_ERROR_IO;
    *frame = m->frame;
    return GLCV_OK;
}

int cli_median_of_files(char *const *paths, int count, int max_frames, const glcv_logger *logger, cli_progress *bar,
                        glcv_image *out, int *used)
{
    median_files m = {paths, (count + max_frames - 1) / max_frames, logger, bar, {0}};
    int frames = (count + m.step - 1) / m.step;
    /* The files' own errors are printed as they are read; the library's logger would repeat them. */
    glcv_status st = glcv_image_median(frames, median_file, &m, NULL, out);
    glcv_image_free(&m.frame);
    if (st == GLCV_ERROR_IO)
        return CLI_FAIL;
    if (st != GLCV_OK)
        return cli_lib_error("cannot compute the median background", st);
    if (used)
        *used = frames;
    return CLI_OK;
}

int cli_parse_box_line(char *line, double v[4])
{
    for (char *c = line; *c; c++)
        if (*c == ',' || *c == '\t' || *c == '\r' || *c == '\n')
            *c = ' ';
    char *p = line, *end = NULL;
    int k = 0;
    for (; k < 4; k++, p = end) {
        errno = 0;
        v[k] = strtod(p, &end);
        if (end == p || errno != 0 || !isfinite(v[k]))
            break;
    }
    while (*p == ' ')
        p++;
    if (k == 0 && *p == '\0')
        return 0;
    return k == 4 && *p == '\0' ? 1 : -1;
}
