/* glcv match, glcv correlate: template matching of one template in one image, and Pearson
 * correlation of one reference image against many. Part of the glcv tool (demo/glcv.c dispatches
 * here). Public API only. Exit status: 0 ok, 1 runtime failure, 2 usage error. */
#define _POSIX_C_SOURCE 200809L

#include <glcv/correlate.h>
#include <glcv/glcv.h>
#include <glcv/match.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int glcv_match_command(int argc, char **argv);
int glcv_correlate_command(int argc, char **argv);

enum { MC_OK = 0, MC_FAIL = 1, MC_USAGE = 2 };
enum { MAX_TOP = 100000, MAX_REPEAT = 1000000 };

static const char match_help[] =
    "usage: glcv match IMAGE TEMPLATE [options]\n"
    "\n"
    "Slides TEMPLATE over IMAGE and prints the best positions, one line each, best first:\n"
    "  x,y,score\n"
    "x,y is the template's top-left corner in the image (add half the template's size for its\n"
    "centre); score is the metric's value there. Runs on the GPU with CUDA when a device is there,\n"
    "else on the CPU (SIMD and all cores); both give the same scores.\n"
    "\n"
    "Colour images are matched in colour (the three channels' results added) unless --gray is\n"
    "given; a gray image or template makes both gray.\n"
    "\n"
    "options:\n"
    "  --metric M         sad (sum of absolute differences; default), ssd (sum of squared\n"
    "                     differences), linf (largest absolute difference): smaller is better;\n"
    "                     zncc (zero-mean normalised cross-correlation, -1..1): larger is better\n"
    "  --mask FILE        a mask of the template's size: only its nonzero pixels count\n"
    "  --roi x,y,w,h      search only positions where the template lies inside this rectangle\n"
    "  --top K            print the K best positions (default 1), each at least --nms pixels away\n"
    "                     from every better one in x or y\n"
    "  --nms D            that distance (default: half the template's smaller side)\n"
    "  --map FILE         write the score map as an 8-bit PNG of the image's size: 255 at the best\n"
    "                     score, 0 at the worst and where the template does not fit\n"
    "  --gray             match in gray even when both files are colour\n"
    "  --engine E         auto, cuda or cpu [auto]\n"
    "  --repeat N         match N times and print the best and median time per match (loading\n"
    "                     the files excluded) on a line starting with '#'\n"
    "  -q, --quiet        no engine line on stderr\n"
    "  -v, --verbose      print the library's debug messages\n"
    "  -h, --help         show this help\n"
    "\n"
    "Options may also be written --name=value.\n"
    "Example: glcv match scene.png logo.png --metric zncc --top 3 --map scores.png\n";

static const char correlate_help[] =
    "usage: glcv correlate REFERENCE IMAGE... [options]\n"
    "\n"
    "Prints Pearson's correlation coefficient of REFERENCE with every IMAGE, one line each, in\n"
    "the order given:\n"
    "  file,r\n"
    "r is in -1..1 (1: the same up to brightness and contrast; -1: the negative; 0 when either\n"
    "image is uniform). The sums are exact integers, so r is exact up to its last digits. An IMAGE\n"
    "that is a folder stands for its image files (.png .jpg .jpeg .bmp .tga .ppm .pgm), sorted by\n"
    "name. All images must have the reference's size. Runs on the GPU with CUDA when a device is\n"
    "there, else on the CPU.\n"
    "\n"
    "options:\n"
    "  --csv FILE         also write the lines to FILE, after a header line 'file,r'\n"
    "  --rgb              correlate the three colour channels' values (default: gray values)\n"
    "  --engine E         auto, cuda or cpu [auto]\n"
    "  -q, --quiet        no summary line on stderr\n"
    "  -v, --verbose      print the library's debug messages\n"
    "  -h, --help         show this help\n";

/* ---- messages --------------------------------------------------------------------------------- */

static const char *g_command = "match";

#if defined(__GNUC__)
#define MC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define MC_PRINTF(a, b)
#endif

static void mc_error(const char *fmt, ...) MC_PRINTF(1, 2);
static int mc_usage(const char *fmt, ...) MC_PRINTF(1, 2);

static void mc_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("glcv: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int mc_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("glcv: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (see 'glcv %s --help')\n", g_command);
    va_end(ap);
    return MC_USAGE;
}

static int mc_lib(const char *what, glcv_status st)
{
    mc_error("%s: %s", what, glcv_status_string(st));
    return MC_FAIL;
}

static double mc_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- options ------------------------------------------------------------------------------------ */

typedef enum mc_option {
    MO_HELP, MO_QUIET, MO_VERBOSE, MO_METRIC, MO_MASK, MO_ROI, MO_TOP, MO_NMS, MO_MAP, MO_GRAY, MO_ENGINE,
    MO_REPEAT, MO_CSV, MO_RGB
} mc_option;

enum { FOR_MATCH = 1, FOR_CORRELATE = 2 };

typedef struct mc_spec {
    const char *name;
    mc_option id;
    int takes_value;
    int commands;
} mc_spec;

static const mc_spec mc_table[] = {
    {"-h", MO_HELP, 0, FOR_MATCH | FOR_CORRELATE},        {"--help", MO_HELP, 0, FOR_MATCH | FOR_CORRELATE},
    {"-q", MO_QUIET, 0, FOR_MATCH | FOR_CORRELATE},       {"--quiet", MO_QUIET, 0, FOR_MATCH | FOR_CORRELATE},
    {"-v", MO_VERBOSE, 0, FOR_MATCH | FOR_CORRELATE},     {"--verbose", MO_VERBOSE, 0, FOR_MATCH | FOR_CORRELATE},
    {"--engine", MO_ENGINE, 1, FOR_MATCH | FOR_CORRELATE}, {"--metric", MO_METRIC, 1, FOR_MATCH},
    {"--mask", MO_MASK, 1, FOR_MATCH},                    {"--roi", MO_ROI, 1, FOR_MATCH},
    {"--top", MO_TOP, 1, FOR_MATCH},                      {"--nms", MO_NMS, 1, FOR_MATCH},
    {"--map", MO_MAP, 1, FOR_MATCH},                      {"--gray", MO_GRAY, 0, FOR_MATCH},
    {"--repeat", MO_REPEAT, 1, FOR_MATCH},                {"--csv", MO_CSV, 1, FOR_CORRELATE},
    {"--rgb", MO_RGB, 0, FOR_CORRELATE},
};

typedef struct mc_options {
    int command; /* FOR_MATCH or FOR_CORRELATE */
    int help, quiet, verbose, gray, rgb;
    glcv_match_metric metric;
    const char *mask, *map, *csv;
    int have_roi;
    glcv_match_rect roi;
    int top, nms, repeat;
    glcv_match_engine engine; /* the correlator's engine enum has the same values */
    char **args;
    int n_args;
} mc_options;

static int parse_count(const char *name, const char *text, long lo, long hi, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || isspace((unsigned char)text[0]))
        return mc_usage("%s: '%s' is not an integer", name, text);
    if (errno == ERANGE || v < lo || v > hi)
        return mc_usage("%s: '%s' must be between %ld and %ld", name, text, lo, hi);
    *out = (int)v;
    return MC_OK;
}

/* "x,y,w,h": four integers, w and h >= 1. */
static int parse_rect(const char *name, const char *text, glcv_match_rect *out)
{
    long v[4];
    const char *p = text;
    for (int i = 0; i < 4; i++) {
        char *end = NULL;
        errno = 0;
        if (!isdigit((unsigned char)*p) && *p != '-')
            return mc_usage("%s: '%s' is not x,y,w,h (four integers)", name, text);
        v[i] = strtol(p, &end, 10);
        if (errno == ERANGE || v[i] < -1000000 || v[i] > 1000000)
            return mc_usage("%s: '%s': a value is out of range", name, text);
        if ((i < 3 && *end != ',') || (i == 3 && *end != '\0'))
            return mc_usage("%s: '%s' is not x,y,w,h (four integers)", name, text);
        p = end + 1;
    }
    if (v[2] < 1 || v[3] < 1)
        return mc_usage("%s: '%s': width and height must be >= 1", name, text);
    *out = (glcv_match_rect){(int)v[0], (int)v[1], (int)v[2], (int)v[3]};
    return MC_OK;
}

static int apply(mc_options *o, const mc_spec *spec, const char *value)
{
    const char *name = spec->name;
    switch (spec->id) {
    case MO_HELP: o->help = 1; break;
    case MO_QUIET: o->quiet = 1; break;
    case MO_VERBOSE: o->verbose = 1; break;
    case MO_GRAY: o->gray = 1; break;
    case MO_RGB: o->rgb = 1; break;
    case MO_METRIC:
        if (glcv_match_metric_parse(value, &o->metric) != GLCV_OK)
            return mc_usage("%s: '%s' is not a metric: use sad, ssd, linf or zncc", name, value);
        break;
    case MO_ENGINE:
        if (glcv_match_engine_parse(value, &o->engine) != GLCV_OK)
            return mc_usage("%s: '%s' is not an engine: use auto, cuda or cpu", name, value);
        break;
    case MO_MASK:
    case MO_MAP:
    case MO_CSV:
        if (!*value)
            return mc_usage("%s: empty file name", name);
        *(spec->id == MO_MASK ? &o->mask : spec->id == MO_MAP ? &o->map : &o->csv) = value;
        break;
    case MO_ROI:
        o->have_roi = 1;
        return parse_rect(name, value, &o->roi);
    case MO_TOP: return parse_count(name, value, 1, MAX_TOP, &o->top);
    case MO_NMS: return parse_count(name, value, 1, 16384, &o->nms);
    case MO_REPEAT: return parse_count(name, value, 1, MAX_REPEAT, &o->repeat);
    }
    return MC_OK;
}

static int parse_options(mc_options *o, int command, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->command = command;
    o->metric = GLCV_MATCH_SAD;
    o->engine = GLCV_MATCH_ENGINE_AUTO;
    o->top = 1;
    o->args = calloc((size_t)argc + 1, sizeof *o->args);
    if (!o->args) {
        mc_error("out of memory");
        return MC_FAIL;
    }
    int done = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (done || arg[0] != '-' || arg[1] == '\0') {
            o->args[o->n_args++] = argv[i];
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            done = 1;
            continue;
        }
        const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        const mc_spec *spec = NULL;
        for (size_t k = 0; k < sizeof mc_table / sizeof mc_table[0] && !spec; k++)
            if (strlen(mc_table[k].name) == len && strncmp(mc_table[k].name, arg, len) == 0 &&
                (mc_table[k].commands & command))
                spec = &mc_table[k];
        if (!spec)
            return mc_usage("unknown option '%.*s'", (int)len, arg);
        const char *value = eq ? eq + 1 : NULL;
        if (!spec->takes_value && value)
            return mc_usage("%s takes no value", spec->name);
        if (spec->takes_value && !value) {
            if (i + 1 >= argc)
                return mc_usage("%s needs a value", spec->name);
            value = argv[++i];
        }
        int rc = apply(o, spec, value);
        if (rc != MC_OK)
            return rc;
    }
    return MC_OK;
}

static glcv_logger make_logger(const mc_options *o)
{
    glcv_logger lg = {glcv_log_stderr, NULL, o->verbose ? GLCV_LOG_DEBUG : GLCV_LOG_WARN};
    return lg;
}

/* Checks that a path is a readable image file and reads its size and channel count. */
static int probe(const char *path, const glcv_logger *lg, int *w, int *h, int *channels)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        mc_error("%s: %s", path, strerror(errno));
        return MC_FAIL;
    }
    if (!S_ISREG(sb.st_mode)) {
        mc_error("%s: not a regular file", path);
        return MC_FAIL;
    }
    glcv_status st = glcv_image_info(path, w, h, channels, lg);
    return st == GLCV_OK ? MC_OK : mc_lib(path, st);
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- glcv match --------------------------------------------------------------------------------- */

static int write_map(glcv_match *m, int w, int h, const char *path, const glcv_logger *lg)
{
    float *norm = malloc((size_t)w * (size_t)h * sizeof *norm);
    glcv_image out = {0};
    glcv_status st = norm ? glcv_image_alloc(w, h, GLCV_PIXEL_GRAY8, &out) : GLCV_ERROR_OUT_OF_MEMORY;
    if (st == GLCV_OK)
        st = glcv_match_read_normalized(m, norm, 0);
    if (st == GLCV_OK) {
        for (size_t i = 0; i < (size_t)w * (size_t)h; i++)
            out.data[i] = (uint8_t)lrintf(norm[i] * 255.0f);
        st = glcv_image_save_png(path, &out, lg);
    }
    free(norm);
    glcv_image_free(&out);
    return st == GLCV_OK ? MC_OK : mc_lib(path, st);
}

static int cmd_match(const mc_options *o)
{
    if (o->n_args < 2)
        return mc_usage("give an image and a template");
    if (o->n_args > 2)
        return mc_usage("unexpected argument '%s'", o->args[2]);
    if (o->nms && o->top == 1)
        fprintf(stderr, "glcv: warning: --nms matters only with --top K > 1\n");
    const char *image_path = o->args[0], *templ_path = o->args[1];
    glcv_logger lg = make_logger(o);
    int iw, ih, ic, tw, th, tc, mw = 0, mh = 0, mchan = 0;
    if (probe(image_path, &lg, &iw, &ih, &ic) != MC_OK || probe(templ_path, &lg, &tw, &th, &tc) != MC_OK)
        return MC_FAIL;
    if (o->mask && probe(o->mask, &lg, &mw, &mh, &mchan) != MC_OK)
        return MC_FAIL;
    if (tw > iw || th > ih) {
        mc_error("template %s (%dx%d) is larger than image %s (%dx%d)", templ_path, tw, th, image_path, iw, ih);
        return MC_FAIL;
    }
    if (o->mask && (mw != tw || mh != th)) {
        mc_error("mask %s is %dx%d but template %s is %dx%d", o->mask, mw, mh, templ_path, tw, th);
        return MC_FAIL;
    }
    glcv_pixel_format format = !o->gray && ic >= 3 && tc >= 3 ? GLCV_PIXEL_RGB8 : GLCV_PIXEL_GRAY8;
    glcv_image image = {0}, templ = {0}, mask = {0};
    glcv_match *m = NULL;
    double *times = NULL;
    glcv_match_hit *hits = NULL;
    int rc = MC_FAIL;
    glcv_status st = glcv_image_load(image_path, format, &lg, &image);
    if (st != GLCV_OK) {
        mc_lib(image_path, st);
        goto cleanup;
    }
    if ((st = glcv_image_load(templ_path, format, &lg, &templ)) != GLCV_OK) {
        mc_lib(templ_path, st);
        goto cleanup;
    }
    if (o->mask && (st = glcv_image_load(o->mask, GLCV_PIXEL_GRAY8, &lg, &mask)) != GLCV_OK) {
        mc_lib(o->mask, st);
        goto cleanup;
    }
    glcv_match_params p = GLCV_MATCH_PARAMS(.width = iw, .height = ih, .format = format, .metric = o->metric,
                                            .engine = o->engine, .nms_distance = o->nms, .logger = lg);
    if ((st = glcv_match_create(&p, &m)) != GLCV_OK) {
        mc_lib("cannot create the matcher", st);
        goto cleanup;
    }
    glcv_match_params used;
    glcv_match_get_params(m, &used);
    if (!o->quiet) {
        if (used.engine == GLCV_MATCH_ENGINE_CUDA)
            fprintf(stderr, "glcv: match engine cuda (device %d, %d device%s)\n", used.cuda_device, used.cuda_devices,
                    used.cuda_devices == 1 ? "" : "s");
        else
            fprintf(stderr, "glcv: match engine cpu (%s)\n", glcv_match_simd_string(used.simd));
    }
    if ((st = glcv_match_set_template(m, &templ, o->mask ? &mask : NULL)) != GLCV_OK) {
        mc_lib(o->mask ? "cannot use the template and mask" : "cannot use the template", st);
        goto cleanup;
    }
    if (o->have_roi && (st = glcv_match_set_roi(m, &o->roi)) != GLCV_OK) {
        mc_lib("--roi", st);
        goto cleanup;
    }
    int runs = o->repeat > 0 ? o->repeat : 1;
    times = malloc((size_t)runs * sizeof *times);
    hits = malloc((size_t)o->top * sizeof *hits);
    if (!times || !hits) {
        mc_error("out of memory");
        goto cleanup;
    }
    for (int i = 0; i < runs; i++) {
        double t0 = mc_now();
        st = glcv_match_image(m, &image);
        times[i] = 1e3 * (mc_now() - t0);
        if (st != GLCV_OK) {
            mc_lib("matching failed", st);
            goto cleanup;
        }
    }
    int count = 0;
    if ((st = glcv_match_best(m, o->top, hits, &count)) != GLCV_OK) {
        mc_lib("cannot find the best positions", st);
        goto cleanup;
    }
    if (count == 0)
        fprintf(stderr, "glcv: warning: the template fits nowhere in the region searched\n");
    for (int i = 0; i < count; i++) {
        if (o->metric == GLCV_MATCH_ZNCC)
            printf("%d,%d,%.6f\n", hits[i].x, hits[i].y, hits[i].score);
        else
            printf("%d,%d,%.0f\n", hits[i].x, hits[i].y, hits[i].score);
    }
    if (o->repeat > 0) {
        qsort(times, (size_t)runs, sizeof *times, compare_doubles);
        double median = runs % 2 ? times[runs / 2] : 0.5 * (times[runs / 2 - 1] + times[runs / 2]);
        printf("# time per match: best %.3f ms, median %.3f ms over %d runs (%dx%d image, %dx%d template, %s, %s)\n",
               times[0], median, runs, iw, ih, tw, th, glcv_match_metric_string(o->metric),
               used.engine == GLCV_MATCH_ENGINE_CUDA ? "cuda" : glcv_match_simd_string(used.simd));
    }
    if (o->map && write_map(m, iw, ih, o->map, &lg) != MC_OK)
        goto cleanup;
    rc = MC_OK;
cleanup:
    glcv_match_destroy(&m);
    glcv_image_free(&image);
    glcv_image_free(&templ);
    glcv_image_free(&mask);
    free(times);
    free(hits);
    return rc;
}

/* ---- glcv correlate ------------------------------------------------------------------------------ */

typedef struct path_list {
    char **items;
    int count, capacity;
} path_list;

static int push_path(path_list *l, const char *dir, const char *name)
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

static void free_paths(path_list *l)
{
    for (int i = 0; i < l->count; i++)
        free(l->items[i]);
    free(l->items);
    memset(l, 0, sizeof *l);
}

static int is_image_name(const char *name)
{
    static const char *const ext[] = {".png", ".jpg", ".jpeg", ".bmp", ".tga", ".ppm", ".pgm"};
    const char *dot = strrchr(name, '.');
    if (!dot || dot == name)
        return 0;
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
        if (strcasecmp(dot, ext[i]) == 0)
            return 1;
    return 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Files as given; folders expanded into their image files, sorted by name (hidden files skipped). */
static int collect(char **args, int n, path_list *out)
{
    for (int i = 0; i < n; i++) {
        struct stat sb;
        if (stat(args[i], &sb) != 0) {
            mc_error("%s: %s", args[i], strerror(errno));
            return MC_FAIL;
        }
        if (!S_ISDIR(sb.st_mode)) {
            if (!push_path(out, NULL, args[i]))
                goto oom;
            continue;
        }
        DIR *d = opendir(args[i]);
        if (!d) {
            mc_error("%s: %s", args[i], strerror(errno));
            return MC_FAIL;
        }
        int first = out->count;
        for (struct dirent *e = readdir(d); e; e = readdir(d)) {
            if (e->d_name[0] == '.' || !is_image_name(e->d_name))
                continue;
            if (!push_path(out, args[i], e->d_name)) {
                closedir(d);
                goto oom;
            }
        }
        closedir(d);
        if (out->count == first) {
            mc_error("%s: the folder holds no image files (.png .jpg .jpeg .bmp .tga .ppm .pgm)", args[i]);
            return MC_FAIL;
        }
        qsort(out->items + first, (size_t)(out->count - first), sizeof *out->items, compare_names);
    }
    return MC_OK;
oom:
    mc_error("out of memory");
    return MC_FAIL;
}

static int cmd_correlate(const mc_options *o)
{
    if (o->n_args < 2)
        return mc_usage("give a reference image and at least one image");
    glcv_logger lg = make_logger(o);
    path_list files = {0};
    glcv_image ref = {0};
    glcv_correlate *c = NULL;
    double *r = NULL;
    FILE *csv = NULL;
    int rc = collect(o->args + 1, o->n_args - 1, &files);
    int w = 0, h = 0, ch = 0;
    if (rc == MC_OK)
        rc = probe(o->args[0], &lg, &w, &h, &ch);
    for (int i = 0; i < files.count && rc == MC_OK; i++) {
        int fw = 0, fh = 0, fc = 0;
        rc = probe(files.items[i], &lg, &fw, &fh, &fc);
        if (rc == MC_OK && (fw != w || fh != h)) {
            mc_error("%s is %dx%d but the reference %s is %dx%d: all images must have its size", files.items[i], fw,
                     fh, o->args[0], w, h);
            rc = MC_FAIL;
        }
    }
    if (rc != MC_OK)
        goto cleanup;
    rc = MC_FAIL;
    glcv_pixel_format format = o->rgb ? GLCV_PIXEL_RGB8 : GLCV_PIXEL_GRAY8;
    glcv_status st = glcv_image_load(o->args[0], format, &lg, &ref);
    if (st != GLCV_OK) {
        mc_lib(o->args[0], st);
        goto cleanup;
    }
    glcv_correlate_params p = GLCV_CORRELATE_PARAMS(.width = w, .height = h, .format = format,
                                                    .engine = (glcv_correlate_engine)o->engine, .logger = lg);
    if ((st = glcv_correlate_create(&p, &c)) != GLCV_OK) {
        mc_lib("cannot create the correlator", st);
        goto cleanup;
    }
    if ((st = glcv_correlate_set_reference(c, &ref)) != GLCV_OK) {
        mc_lib(o->args[0], st);
        goto cleanup;
    }
    if (o->csv && !(csv = fopen(o->csv, "w"))) {
        mc_error("%s: %s", o->csv, strerror(errno));
        goto cleanup;
    }
    r = malloc((size_t)files.count * sizeof *r);
    if (!r) {
        mc_error("out of memory");
        goto cleanup;
    }
    double t0 = mc_now();
    st = glcv_correlate_files(c, (const char *const *)files.items, files.count, r);
    double ms = 1e3 * (mc_now() - t0);
    if (st != GLCV_OK) {
        mc_lib("correlation failed", st);
        goto cleanup;
    }
    if (csv)
        fprintf(csv, "file,r\n");
    for (int i = 0; i < files.count; i++) {
        printf("%s,%.9f\n", files.items[i], r[i]);
        if (csv)
            fprintf(csv, "%s,%.9f\n", files.items[i], r[i]);
    }
    if (csv && (fflush(csv) != 0 || ferror(csv))) {
        mc_error("%s: cannot write: %s", o->csv, strerror(errno));
        goto cleanup;
    }
    if (!o->quiet) {
        glcv_correlate_params used;
        glcv_correlate_get_params(c, &used);
        fprintf(stderr, "glcv: correlated %d image%s of %dx%d (%s) with %s on %s in %.1f ms (files read included)\n",
                files.count, files.count == 1 ? "" : "s", w, h, o->rgb ? "RGB" : "gray", o->args[0],
                glcv_correlate_engine_string(used.engine), ms);
    }
    rc = MC_OK;
cleanup:
    if (csv)
        fclose(csv);
    free(r);
    glcv_correlate_destroy(&c);
    glcv_image_free(&ref);
    free_paths(&files);
    return rc;
}

/* ---- entry points (argv after the command name) ----------------------------------------------------- */

int glcv_match_command(int argc, char **argv)
{
    mc_options o;
    g_command = "match";
    int rc = parse_options(&o, FOR_MATCH, argc, argv);
    if (rc == MC_OK && o.help)
        fputs(match_help, stdout);
    else if (rc == MC_OK)
        rc = cmd_match(&o);
    free(o.args);
    fflush(stdout);
    return rc;
}

int glcv_correlate_command(int argc, char **argv)
{
    mc_options o;
    g_command = "correlate";
    int rc = parse_options(&o, FOR_CORRELATE, argc, argv);
    if (rc == MC_OK && o.help)
        fputs(correlate_help, stdout);
    else if (rc == MC_OK)
        rc = cmd_correlate(&o);
    free(o.args);
    fflush(stdout);
    return rc;
}
