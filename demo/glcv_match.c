/* glcv match, glcv correlate: template matching of one template in one image, and Pearson
 * correlation of one reference image against many. Part of the glcv tool (demo/glcv.c dispatches
 * here). Public API only. Exit status: 0 ok, 1 runtime failure, 2 usage error. */
#define _POSIX_C_SOURCE 200809L

#include <glcv/correlate.h>
#include <glcv/glcv.h>
#include <glcv/match.h>

#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int glcv_match_command(int argc, char **argv);
int glcv_correlate_command(int argc, char **argv);

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
    glcv_rect roi;
    int top, nms, repeat;
    glcv_engine_mode engine; /* the correlator's engine enum has the same values */
    char **args;
    int n_args;
} mc_options;

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
            return cli_usage(g_command, "%s: '%s' is not a metric: use sad, ssd, linf or zncc", name, value);
        break;
    case MO_ENGINE:
        if (glcv_engine_mode_parse(value, &o->engine) != GLCV_OK)
            return cli_usage(g_command, "%s: '%s' is not an engine: use auto, cuda or cpu", name, value);
        break;
    case MO_MASK:
    case MO_MAP:
    case MO_CSV:
        if (!*value)
            return cli_usage(g_command, "%s: empty file name", name);
        *(spec->id == MO_MASK ? &o->mask : spec->id == MO_MAP ? &o->map : &o->csv) = value;
        break;
    case MO_ROI: {
        int v[4];
        o->have_roi = 1;
        int rc = cli_parse_rect(g_command, name, value, v);
        if (rc == CLI_OK)
            o->roi = (glcv_rect){v[0], v[1], v[2], v[3]};
        return rc;
    }
    case MO_TOP: return cli_parse_int(g_command, name, value, 1, MAX_TOP, &o->top);
    case MO_NMS: return cli_parse_int(g_command, name, value, 1, 16384, &o->nms);
    case MO_REPEAT: return cli_parse_int(g_command, name, value, 1, MAX_REPEAT, &o->repeat);
    }
    return CLI_OK;
}

static int parse_options(mc_options *o, int command, int argc, char **argv)
{
    memset(o, 0, sizeof *o);
    o->command = command;
    o->metric = GLCV_MATCH_SAD;
    o->engine = GLCV_ENGINE_AUTO;
    o->top = 1;
    o->args = calloc((size_t)argc + 1, sizeof *o->args);
    if (!o->args) {
        cli_error("out of memory");
        return CLI_FAIL;
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
            return cli_usage(g_command, "unknown option '%.*s'", (int)len, arg);
        const char *value = eq ? eq + 1 : NULL;
        if (!spec->takes_value && value)
            return cli_usage(g_command, "%s takes no value", spec->name);
        if (spec->takes_value && !value) {
            if (i + 1 >= argc)
                return cli_usage(g_command, "%s needs a value", spec->name);
            value = argv[++i];
        }
        int rc = apply(o, spec, value);
        if (rc != CLI_OK)
            return rc;
    }
    return CLI_OK;
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
    return st == GLCV_OK ? CLI_OK : cli_lib_error(path, st);
}

static int cmd_match(const mc_options *o)
{
    if (o->n_args < 2)
        return cli_usage(g_command, "give an image and a template");
    if (o->n_args > 2)
        return cli_usage(g_command, "unexpected argument '%s'", o->args[2]);
    if (o->nms && o->top == 1)
        fprintf(stderr, "glcv: warning: --nms matters only with --top K > 1\n");
    const char *image_path = o->args[0], *templ_path = o->args[1];
    glcv_logger lg = cli_logger(o->verbose);
    int iw, ih, ic, tw, th, tc, mw = 0, mh = 0, mchan = 0;
    if (cli_probe_image(image_path, &lg, &iw, &ih, &ic) != CLI_OK ||
        cli_probe_image(templ_path, &lg, &tw, &th, &tc) != CLI_OK)
        return CLI_FAIL;
    if (o->mask && cli_probe_image(o->mask, &lg, &mw, &mh, &mchan) != CLI_OK)
        return CLI_FAIL;
    if (tw > iw || th > ih) {
        cli_error("template %s (%dx%d) is larger than image %s (%dx%d)", templ_path, tw, th, image_path, iw, ih);
        return CLI_FAIL;
    }
    if (o->mask && (mw != tw || mh != th)) {
        cli_error("mask %s is %dx%d but template %s is %dx%d", o->mask, mw, mh, templ_path, tw, th);
        return CLI_FAIL;
    }
    glcv_pixel_format format = !o->gray && ic >= 3 && tc >= 3 ? GLCV_PIXEL_RGB8 : GLCV_PIXEL_GRAY8;
    glcv_image image = {0}, templ = {0}, mask = {0};
    glcv_match *m = NULL;
    double *times = NULL;
    glcv_match_hit *hits = NULL;
    int rc = CLI_FAIL;
    glcv_status st = glcv_image_load(image_path, format, &lg, &image);
    if (st != GLCV_OK) {
        cli_lib_error(image_path, st);
        goto cleanup;
    }
    if ((st = glcv_image_load(templ_path, format, &lg, &templ)) != GLCV_OK) {
        cli_lib_error(templ_path, st);
        goto cleanup;
    }
    if (o->mask && (st = glcv_image_load(o->mask, GLCV_PIXEL_GRAY8, &lg, &mask)) != GLCV_OK) {
        cli_lib_error(o->mask, st);
        goto cleanup;
    }
    glcv_match_params p = GLCV_MATCH_PARAMS(.width = iw, .height = ih, .format = format, .metric = o->metric,
                                            .engine = o->engine, .nms_distance = o->nms, .logger = lg);
    if ((st = glcv_match_create(&p, &m)) != GLCV_OK) {
        cli_lib_error("cannot create the matcher", st);
        goto cleanup;
    }
    glcv_match_params used;
    glcv_match_get_params(m, &used);
    if (!o->quiet) {
        if (used.engine == GLCV_ENGINE_CUDA)
            fprintf(stderr, "glcv: match engine cuda (device %d, %d device%s)\n", used.cuda_device, used.cuda_devices,
                    used.cuda_devices == 1 ? "" : "s");
        else
            fprintf(stderr, "glcv: match engine cpu (%s)\n", glcv_match_simd_string(used.simd));
    }
    if ((st = glcv_match_set_template(m, &templ, o->mask ? &mask : NULL)) != GLCV_OK) {
        cli_lib_error(o->mask ? "cannot use the template and mask" : "cannot use the template", st);
        goto cleanup;
    }
    if (o->have_roi && (st = glcv_match_set_roi(m, &o->roi)) != GLCV_OK) {
        cli_lib_error("--roi", st);
        goto cleanup;
    }
    int runs = o->repeat > 0 ? o->repeat : 1;
    times = malloc((size_t)runs * sizeof *times);
    hits = malloc((size_t)o->top * sizeof *hits);
    if (!times || !hits) {
        cli_error("out of memory");
        goto cleanup;
    }
    for (int i = 0; i < runs; i++) {
        double t0 = cli_now();
        st = glcv_match_image(m, &image);
        times[i] = 1e3 * (cli_now() - t0);
        if (st != GLCV_OK) {
            cli_lib_error("matching failed", st);
            goto cleanup;
        }
    }
    int count = 0;
    if ((st = glcv_match_best(m, o->top, hits, &count)) != GLCV_OK) {
        cli_lib_error("cannot find the best positions", st);
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
        qsort(times, (size_t)runs, sizeof *times, cli_compare_doubles);
        double median = runs % 2 ? times[runs / 2] : 0.5 * (times[runs / 2 - 1] + times[runs / 2]);
        printf("# time per match: best %.3f ms, median %.3f ms over %d runs (%dx%d image, %dx%d template, %s, %s)\n",
               times[0], median, runs, iw, ih, tw, th, glcv_match_metric_string(o->metric),
               used.engine == GLCV_ENGINE_CUDA ? "cuda" : glcv_match_simd_string(used.simd));
    }
    if (o->map && write_map(m, iw, ih, o->map, &lg) != CLI_OK)
        goto cleanup;
    rc = CLI_OK;
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

static int cmd_correlate(const mc_options *o)
{
    if (o->n_args < 2)
        return cli_usage(g_command, "give a reference image and at least one image");
    glcv_logger lg = cli_logger(o->verbose);
    cli_paths files = {0};
    glcv_image ref = {0};
    glcv_correlate *c = NULL;
    double *r = NULL;
    FILE *csv = NULL;
    int rc = cli_collect_images(o->args + 1, o->n_args - 1, &files);
    int w = 0, h = 0, ch = 0;
    if (rc == CLI_OK)
        rc = cli_probe_image(o->args[0], &lg, &w, &h, &ch);
    for (int i = 0; i < files.count && rc == CLI_OK; i++) {
        int fw = 0, fh = 0, fc = 0;
        rc = cli_probe_image(files.items[i], &lg, &fw, &fh, &fc);
        if (rc == CLI_OK && (fw != w || fh != h)) {
            cli_error("%s is %dx%d but the reference %s is %dx%d: all images must have its size", files.items[i], fw,
                     fh, o->args[0], w, h);
            rc = CLI_FAIL;
        }
    }
    if (rc != CLI_OK)
        goto cleanup;
    rc = CLI_FAIL;
    glcv_pixel_format format = o->rgb ? GLCV_PIXEL_RGB8 : GLCV_PIXEL_GRAY8;
    glcv_status st = glcv_image_load(o->args[0], format, &lg, &ref);
    if (st != GLCV_OK) {
        cli_lib_error(o->args[0], st);
        goto cleanup;
    }
    glcv_correlate_params p = GLCV_CORRELATE_PARAMS(.width = w, .height = h, .format = format,
                                                    .engine = (glcv_engine_mode)o->engine, .logger = lg);
    if ((st = glcv_correlate_create(&p, &c)) != GLCV_OK) {
        cli_lib_error("cannot create the correlator", st);
        goto cleanup;
    }
    if ((st = glcv_correlate_set_reference(c, &ref)) != GLCV_OK) {
        cli_lib_error(o->args[0], st);
        goto cleanup;
    }
    if (o->csv && !(csv = fopen(o->csv, "w"))) {
        cli_error("%s: %s", o->csv, strerror(errno));
        goto cleanup;
    }
    r = malloc((size_t)files.count * sizeof *r);
    if (!r) {
        cli_error("out of memory");
        goto cleanup;
    }
    double t0 = cli_now();
    st = glcv_correlate_files(c, (const char *const *)files.items, files.count, r);
    double ms = 1e3 * (cli_now() - t0);
    if (st != GLCV_OK) {
        cli_lib_error("correlation failed", st);
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
        cli_error("%s: cannot write: %s", o->csv, strerror(errno));
        goto cleanup;
    }
    if (!o->quiet) {
        glcv_correlate_params used;
        glcv_correlate_get_params(c, &used);
        fprintf(stderr, "glcv: correlated %d image%s of %dx%d (%s) with %s on %s in %.1f ms (files read included)\n",
                files.count, files.count == 1 ? "" : "s", w, h, o->rgb ? "RGB" : "gray", o->args[0],
                glcv_engine_mode_string(used.engine), ms);
    }
    rc = CLI_OK;
cleanup:
    if (csv)
        fclose(csv);
    free(r);
    glcv_correlate_destroy(&c);
    glcv_image_free(&ref);
    cli_paths_free(&files);
    return rc;
}

/* ---- entry points (argv after the command name) ----------------------------------------------------- */

int glcv_match_command(int argc, char **argv)
{
    mc_options o;
    g_command = "match";
    int rc = parse_options(&o, FOR_MATCH, argc, argv);
    if (rc == CLI_OK && o.help)
        fputs(match_help, stdout);
    else if (rc == CLI_OK)
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
    if (rc == CLI_OK && o.help)
        fputs(correlate_help, stdout);
    else if (rc == CLI_OK)
        rc = cmd_correlate(&o);
    free(o.args);
    fflush(stdout);
    return rc;
}
