/* Helpers shared by the parts of the glcv tool; see cli.h. */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("glcv: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int cli_lib_error(const char *what, glcv_status status)
{
    cli_error("%s: %s", what, glcv_status_string(status));
    return CLI_FAIL;
}

int cli_vusage(const char *command, const char *fmt, va_list ap)
{
    fputs("glcv: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    if (command)
        fprintf(stderr, " (see 'glcv %s --help')\n", command);
    else
        fputs(" (see 'glcv --help')\n", stderr);
    return CLI_USAGE;
}

int cli_usage(const char *command, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = cli_vusage(command, fmt, ap);
    va_end(ap);
    return rc;
}

glcv_logger cli_logger(int verbose)
{
    glcv_logger logger = {glcv_log_stderr, NULL, verbose ? GLCV_LOG_DEBUG : GLCV_LOG_WARN};
    return logger;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int cli_compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cli_compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int cli_is_image_name(const char *name)
{
    static const char *const extensions[] = {".png", ".jpg", ".jpeg", ".bmp", ".tga", ".ppm", ".pgm"};
    const char *dot = strrchr(name, '.');
    if (!dot || dot == name)
        return 0;
    for (size_t i = 0; i < sizeof extensions / sizeof extensions[0]; i++)
        if (strcasecmp(dot, extensions[i]) == 0)
            return 1;
    return 0;
}

int cli_parse_int(const char *command, const char *name, const char *text, long lo, long hi, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || isspace((unsigned char)text[0]))
        return cli_usage(command, "%s: '%s' is not an integer", name, text);
    if (errno == ERANGE || v < lo || v > hi)
        return cli_usage(command, "%s: '%s' must be between %ld and %ld", name, text, lo, hi);
    *out = (int)v;
    return CLI_OK;
}

int cli_parse_rect(const char *command, const char *name, const char *text, int v[4])
{
    long r[4];
    const char *p = text;
    for (int i = 0; i < 4; i++) {
        char *end = NULL;
        errno = 0;
        if (!isdigit((unsigned char)*p) && *p != '-')
            return cli_usage(command, "%s: '%s' is not x,y,w,h (four integers)", name, text);
        r[i] = strtol(p, &end, 10);
        if (errno == ERANGE || r[i] < -1000000 || r[i] > 1000000)
            return cli_usage(command, "%s: '%s': a value is out of range", name, text);
        if ((i < 3 && *end != ',') || (i == 3 && *end != '\0'))
            return cli_usage(command, "%s: '%s' is not x,y,w,h (four integers)", name, text);
        p = end + 1;
    }
    if (r[2] < 1 || r[3] < 1)
        return cli_usage(command, "%s: '%s': width and height must be >= 1", name, text);
    for (int i = 0; i < 4; i++)
        v[i] = (int)r[i];
    return CLI_OK;
}

int cli_paths_push(cli_paths *l, const char *dir, const char *name)
{
    if (l->count == l->capacity) {
        int cap = l->capacity ? 2 * l->capacity : 64;
        char **items = realloc(l->items, (size_t)cap * sizeof *items);
        if (!items)
            return 0;
        l->items = items;
        l->capacity = cap;
    }
    size_t n = (dir ? strlen(dir) + 1 : 0) + strlen(name) + 1;
    char *s = malloc(n);
    if (!s)
        return 0;
    if (dir)
        snprintf(s, n, "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", name);
    else
        snprintf(s, n, "%s", name);
    l->items[l->count++] = s;
    return 1;
}

void cli_paths_free(cli_paths *l)
{
    for (int i = 0; i < l->count; i++)
        free(l->items[i]);
    free(l->items);
    memset(l, 0, sizeof *l);
}

int cli_collect_images(char *const *args, int n, cli_paths *out)
{
    for (int i = 0; i < n; i++) {
        struct stat sb;
        if (stat(args[i], &sb) != 0) {
            cli_error("%s: %s", args[i], strerror(errno));
            return CLI_FAIL;
        }
        if (!S_ISDIR(sb.st_mode)) {
            if (!cli_paths_push(out, NULL, args[i]))
                goto oom;
            continue;
        }
        DIR *d = opendir(args[i]);
        if (!d) {
            cli_error("%s: %s", args[i], strerror(errno));
            return CLI_FAIL;
        }
        int first = out->count;
        for (struct dirent *e = readdir(d); e; e = readdir(d)) {
            if (e->d_name[0] == '.' || !cli_is_image_name(e->d_name))
                continue;
            if (!cli_paths_push(out, args[i], e->d_name)) {
                closedir(d);
                goto oom;
            }
        }
        closedir(d);
        if (out->count == first) {
            cli_error("%s: the folder holds no image files (.png .jpg .jpeg .bmp .tga .ppm .pgm)", args[i]);
            return CLI_FAIL;
        }
        qsort(out->items + first, (size_t)(out->count - first), sizeof *out->items, cli_compare_strings);
    }
    return CLI_OK;
oom:
    cli_error("out of memory");
    return CLI_FAIL;
}

int cli_probe_image(const char *path, const glcv_logger *logger, int *w, int *h, int *channels)
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
    glcv_status st = glcv_image_info(path, w, h, channels, logger);
    return st == GLCV_OK ? CLI_OK : cli_lib_error(path, st);
}

int cli_load_rgb(const char *path, const glcv_logger *logger, glcv_image *out)
{
    glcv_image_free(out);
    glcv_status st = glcv_image_load(path, GLCV_PIXEL_RGB8, logger, out);
    return st == GLCV_OK ? CLI_OK : cli_lib_error(path, st);
}

int cli_median_rgb(int width, int height, int count, cli_frame_loader load, void *user, glcv_image *frame,
                   uint8_t *median)
{
    enum { BINS = 16 };
    size_t n = (size_t)width * (size_t)height * 3, row = (size_t)width * 3;
    uint16_t *hist = calloc(n * BINS, sizeof *hist), *below = malloc(n * sizeof *below);
    uint8_t *high = median;
    int rc = CLI_FAIL;
    if (!hist || !below) {
        cli_error("out of memory");
        goto done;
    }
    unsigned rank = (unsigned)(count - 1) / 2u;
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < count; k++) {
            if (load(user, k, frame) != CLI_OK)
                goto done;
            size_t stride = glcv_image_stride(frame);
            for (int y = 0; y < height; y++) {
                const uint8_t *src = frame->data + (size_t)y * stride;
                for (size_t x = 0; x < row; x++) {
                    size_t i = (size_t)y * row + x;
                    unsigned v = src[x];
                    if (pass == 0)
                        hist[i * BINS + (v >> 4)]++;
                    else if ((v >> 4) == high[i])
                        hist[i * BINS + (v & 15u)]++;
                }
            }
        }
        for (size_t i = 0; i < n; i++) {
            const uint16_t *h = hist + i * BINS;
            unsigned cum = pass == 0 ? 0u : below[i], digit = 0;
            while (digit < BINS - 1 && cum + h[digit] <= rank)
                cum += h[digit++];
            if (pass == 0) {
                high[i] = (uint8_t)digit;
                below[i] = (uint16_t)cum;
            } else {
                high[i] = (uint8_t)(high[i] << 4 | digit);
            }
        }
        if (pass == 0)
            memset(hist, 0, n * BINS * sizeof *hist);
    }
    rc = CLI_OK;
done:
    free(hist);
    free(below);
    return rc;
}
