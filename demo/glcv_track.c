/* glcv track: CAMSHIFT tracking of objects through image files or folders of frames, with
 * the segmenter's mask on request; writes one CSV row per frame and object, and frames with the
 * boxes drawn. Part of the glcv tool (demo/glcv.c dispatches here). Public API only.
 * Exit status: 0 ok, 1 runtime failure, 2 usage error. */
#define _POSIX_C_SOURCE 200809L

#include <glcv/glcv.h>

#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int glcv_track_command(int argc, char **argv);

enum { MAX_ROIS = GLCV_TRACK_MAX_OBJECTS, MEDIAN_FRAMES = 200 };

static const char track_help[] =
    "usage: glcv track INPUT... --roi x,y,w,h [--roi ...] --csv OUT.csv [options]\n"
    "\n"
    "Tracks objects through a sequence of frames with CAMSHIFT (Bradski 1998; Perry 2016): each\n"
    "object's hue histogram is taken from its --roi in the first frame (or read from --hist), and\n"
    "its window follows the back-projection of that histogram from frame to frame. Runs on the GPU\n"
    "with CUDA when a device is there, else on the CPU (same results).\n"
    "\n"
    "INPUT is image files (.png .jpg .jpeg .bmp .tga .ppm .pgm) or folders of them (sorted by name),\n"
    "in frame order; all frames must have the same size.\n"
    "\n"
    "options:\n"
    "  --roi x,y,w,h         an object's box in the first frame, in pixels (x, y of its top-left\n"
    "                        pixel, row 0 at the top); repeat for more objects (at most 1024)\n"
    "  --csv FILE            write the tracks: a header line, then one line per frame and object:\n"
    "                          frame,object,cx,cy,w,h,angle,x,y,bw,bh,iterations,lost\n"
    "                        frame and object count from 0 (objects in --roi order); cx,cy,w,h,angle\n"
    "                        the rotated box (centre, minor and major axis in pixels, degrees 0..180\n"
    "                        as cv::CamShift reports it); x,y,bw,bh its axis-aligned bounding box in\n"
    "                        pixels; iterations the mean-shift iterations; lost 0 when tracked, else\n"
    "                        why: 1 iteration cap, 2 too little mass, 4 histogram too far\n"
    "  --overlay DIR         also write DIR/<frame name>_track.png: the frame with each object's\n"
    "                        box drawn (lost objects in grey)\n"
    "  --mask-from-segmenter count only the segmenter's foreground: the frames are segmented (glcv\n"
    "                        segment) against their per-pixel median and the mask excludes the\n"
    "                        background from the histograms and the back-projection\n"
    "  --Ts F                the segmenter's threshold with --mask-from-segmenter [310]\n"
    "  --hist FILE           the objects' histograms: read from FILE when it exists (one per\n"
    "                        --roi, in order), else taken from the first frame and written to FILE\n"
    "  --bins N              hue bins, 1..180 [60]\n"
    "  --sat-bins N          saturation bins for a hue x saturation histogram, 1..256 [1: hue only]\n"
    "  --smin N --vmin N --vmax N\n"
    "                        Bradski's limits: a pixel counts when S >= smin and vmin <= V <= vmax\n"
    "                        (0..255) [30, 10, 255]\n"
    "  --window W            opencv (cv::CamShift's rotated box) or paper (width 2 sqrt(M00/255),\n"
    "                        height 1.2 width) [opencv]\n"
    "  --engine E            auto, cuda or cpu [auto]; cpu also keeps the segmenter on the CPU\n"
    "  -q, --quiet           no engine line on stderr\n"
    "  -v, --verbose         print the library's debug messages\n"
    "  -h, --help            show this help\n"
    "\n"
    "Everything is checked (files, sizes, values) before anything is written. stdout gets a\n"
    "summary: frames, objects, the time per frame of the tracking calls, frames lost per object.\n"
    "Example: glcv track seq/img --roi 205,151,17,50 --mask-from-segmenter --csv tracks.csv\n";

typedef struct track_cli {
    /* options */
    char **inputs_arg;
    int n_inputs_arg;
    glcv_rect rois[MAX_ROIS];
    int n_rois;
    const char *csv, *overlay, *hist;
    int mask_from_segmenter;
    double ts;
    int bins, sat_bins, s_min, v_min, v_max;
    glcv_track_window window;
    glcv_engine_mode engine;
    int quiet, verbose;
    /* the run */
    cli_paths files;
    int width, height;
    glcv_logger logger;
    glcv_context *ctx;
    glcv_segment *seg;
    glcv_track *tr;
    glcv_image frame, mask, overlay_img;
    FILE *out;
    char *csv_tmp;
} track_cli;

/* ---- options ---------------------------------------------------------------------------------- */

/* Finds --name or --name=value; sets *value (the next argument when needed). */
static int option_value(int argc, char **argv, int *i, const char *arg, const char *name, const char **value)
{
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0 || (arg[n] != '\0' && arg[n] != '='))
        return 0;
    if (arg[n] == '=') {
        *value = arg + n + 1;
    } else if (*i + 1 < argc) {
        *value = argv[++*i];
    } else {
        *value = NULL;
    }
    return 1;
}

static int parse_options(track_cli *t, int argc, char **argv, int *help)
{
    int done = 0;
    t->inputs_arg = calloc((size_t)argc + 1, sizeof *t->inputs_arg);
    if (!t->inputs_arg) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *value = NULL;
        int rc = CLI_OK;
        if (done || arg[0] != '-' || arg[1] == '\0') {
            t->inputs_arg[t->n_inputs_arg++] = argv[i];
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            done = 1;
        } else if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            *help = 1;
        } else if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0) {
            t->quiet = 1;
        } else if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
            t->verbose = 1;
        } else if (strcmp(arg, "--mask-from-segmenter") == 0) {
            t->mask_from_segmenter = 1;
        } else if (option_value(argc, argv, &i, arg, "--roi", &value)) {
            if (!value)
                return cli_usage("track", "--roi needs a value");
            if (t->n_rois == MAX_ROIS)
                return cli_usage("track", "--roi: at most %d objects", MAX_ROIS);
            int v[4];
            rc = cli_parse_rect("track", "--roi", value, v);
            if (rc == CLI_OK)
                t->rois[t->n_rois] = (glcv_rect){v[0], v[1], v[2], v[3]};
            t->n_rois++;
        } else if (option_value(argc, argv, &i, arg, "--csv", &value) ||
                   option_value(argc, argv, &i, arg, "--overlay", &value) ||
                   option_value(argc, argv, &i, arg, "--hist", &value)) {
            const char *name = arg[2] == 'c' ? "--csv" : arg[2] == 'o' ? "--overlay" : "--hist";
            if (!value || !*value)
                return cli_usage("track", "%s needs a file or folder name", name);
            if (arg[2] == 'c')
                t->csv = value;
            else if (arg[2] == 'o')
                t->overlay = value;
            else
                t->hist = value;
        } else if (option_value(argc, argv, &i, arg, "--Ts", &value)) {
            char *end = NULL;
            if (!value)
                return cli_usage("track", "--Ts needs a value");
            t->ts = strtod(value, &end);
            if (end == value || *end || !isfinite(t->ts) || t->ts < 0 || t->ts > 1e9)
                return cli_usage("track", "--Ts: '%s' must be a number in 0..1e9", value);
        } else if (option_value(argc, argv, &i, arg, "--bins", &value)) {
            rc = value ? cli_parse_int("track", "--bins", value, 1, 180, &t->bins)
                       : cli_usage("track", "--bins needs a value");
        } else if (option_value(argc, argv, &i, arg, "--sat-bins", &value)) {
            rc = value ? cli_parse_int("track", "--sat-bins", value, 1, 256, &t->sat_bins)
                       : cli_usage("track", "--sat-bins needs a value");
        } else if (option_value(argc, argv, &i, arg, "--smin", &value)) {
            rc = value ? cli_parse_int("track", "--smin", value, 0, 255, &t->s_min)
                       : cli_usage("track", "--smin needs a value");
        } else if (option_value(argc, argv, &i, arg, "--vmin", &value)) {
            rc = value ? cli_parse_int("track", "--vmin", value, 0, 255, &t->v_min)
                       : cli_usage("track", "--vmin needs a value");
        } else if (option_value(argc, argv, &i, arg, "--vmax", &value)) {
            rc = value ? cli_parse_int("track", "--vmax", value, 0, 255, &t->v_max)
                       : cli_usage("track", "--vmax needs a value");
        } else if (option_value(argc, argv, &i, arg, "--window", &value)) {
            if (value && strcmp(value, "opencv") == 0)
                t->window = GLCV_TRACK_WINDOW_OPENCV;
            else if (value && strcmp(value, "paper") == 0)
                t->window = GLCV_TRACK_WINDOW_PAPER;
            else
                return cli_usage("track", "--window: '%s' is not opencv or paper", value ? value : "");
        } else if (option_value(argc, argv, &i, arg, "--engine", &value)) {
            if (!value || glcv_engine_mode_parse(value, &t->engine) != GLCV_OK)
                return cli_usage("track", "--engine: '%s' is not auto, cuda or cpu", value ? value : "");
        } else {
            return cli_usage("track", "unknown option '%s'", arg);
        }
        if (rc != CLI_OK)
            return rc;
    }
    return CLI_OK;
}

/* ---- inputs ----------------------------------------------------------------------------------- */

static int check_sizes(track_cli *t)
{
    for (int i = 0; i < t->files.count; i++) {
        int w = 0, h = 0, c = 0;
        glcv_status st = glcv_image_info(t->files.items[i], &w, &h, &c, t->verbose ? &t->logger : NULL);
        if (st != GLCV_OK)
            return cli_lib_error(t->files.items[i], st);
        if (i == 0) {
            t->width = w;
            t->height = h;
        } else if (w != t->width || h != t->height) {
            cli_error("%s is %dx%d but %s is %dx%d: all frames must have the same size", t->files.items[i], w, h,
                      t->files.items[0], t->width, t->height);
            return CLI_FAIL;
        }
    }
    return CLI_OK;
}

/* "<dir>/<file name without folders and extension><suffix>" */
static char *output_name(const char *dir, const char *path, const char *suffix)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t stem = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    size_t n = strlen(dir) + 1 + stem + strlen(suffix) + 1;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s/%.*s%s", dir, (int)stem, base, suffix);
    return s;
}

static int make_dir(const char *dir)
{
    char *buf = strdup(dir);
    if (!buf)
        return CLI_FAIL;
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            cli_error("%s: cannot create %s: %s", dir, buf, strerror(errno));
            free(buf);
            return CLI_FAIL;
        }
        *p = '/';
    }
    free(buf);
    struct stat sb;
    if ((mkdir(dir, 0777) != 0 && errno != EEXIST) || stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode) ||
        access(dir, W_OK | X_OK) != 0) {
        cli_error("%s: not a writable folder", dir);
        return CLI_FAIL;
    }
    return CLI_OK;
}

static int check_overlay_names(track_cli *t)
{
    char **names = calloc((size_t)t->files.count, sizeof *names);
    int rc = names ? CLI_OK : CLI_FAIL;
    for (int i = 0; i < t->files.count && rc == CLI_OK; i++)
        if (!(names[i] = output_name("", t->files.items[i], "")))
            rc = CLI_FAIL;
    if (rc == CLI_OK) {
        qsort(names, (size_t)t->files.count, sizeof *names, cli_compare_strings);
        for (int i = 1; i < t->files.count; i++)
            if (strcmp(names[i - 1], names[i]) == 0) {
                cli_error("two frames are named %s: --overlay needs distinct frame names", names[i] + 1);
                rc = CLI_FAIL;
                break;
            }
    }
    for (int i = 0; names && i < t->files.count; i++)
        free(names[i]);
    free(names);
    return rc;
}

/* ---- background median and segmenter ---------------------------------------------------------- */

/* Frame k of up to MEDIAN_FRAMES evenly spaced frames, for the median background. */
static int track_median_frame(void *user, int k, glcv_image *frame)
{
    track_cli *t = user;
    int step = (t->files.count + MEDIAN_FRAMES - 1) / MEDIAN_FRAMES;
    return cli_load_rgb(t->files.items[k * step], &t->logger, frame);
}

/* The exact per-pixel, per-channel lower median of up to MEDIAN_FRAMES evenly spaced frames
 * (cli_median_rgb). */
static int median_background(track_cli *t, glcv_image *bg)
{
    int step = (t->files.count + MEDIAN_FRAMES - 1) / MEDIAN_FRAMES, count = 0;
    for (int k = 0; k < t->files.count; k += step)
        count++;
    return cli_median_rgb(t->width, t->height, count, track_median_frame, t, &t->frame, bg->data);
}

static int start_segmenter(track_cli *t)
{
    glcv_segment_params sp = GLCV_SEGMENT_PARAMS(.width = t->width, .height = t->height, .ts = (float)t->ts,
                                                 .engine = t->engine == GLCV_ENGINE_CPU || !t->ctx
                                                               ? GLCV_ENGINE_CPU
                                                               : GLCV_ENGINE_AUTO,
                                                 .logger = t->logger);
    glcv_status st = glcv_segment_create(&sp, &t->seg);
    if (st != GLCV_OK)
        return cli_lib_error("cannot create the segmenter", st);
    glcv_image bg = {0};
    if ((st = glcv_image_alloc(t->width, t->height, GLCV_PIXEL_RGB8, &bg)) != GLCV_OK)
        return cli_lib_error("background", st);
    int rc = median_background(t, &bg);
    if (rc == CLI_OK && (st = glcv_segment_set_background(t->seg, &bg)) != GLCV_OK)
        rc = cli_lib_error("cannot set the background", st);
    glcv_image_free(&bg);
    if (rc == CLI_OK && (st = glcv_image_alloc(t->width, t->height, GLCV_PIXEL_GRAY8, &t->mask)) != GLCV_OK)
        rc = cli_lib_error("mask", st);
    return rc;
}

static int segment_frame(track_cli *t)
{
    glcv_status st = glcv_segment_frame(t->seg, &t->frame, 1);
    if (st == GLCV_OK)
        st = glcv_segment_read_mask(t->seg, &t->mask);
    if (st != GLCV_OK)
        return cli_lib_error("segmentation", st);
    return CLI_OK;
}

/* ---- overlay ---------------------------------------------------------------------------------- */

static void put(glcv_image *img, int x, int y, const uint8_t c[3])
{
    if (x < 0 || y < 0 || x >= img->width || y >= img->height)
        return;
    uint8_t *p = img->data + ((size_t)y * (size_t)img->width + (size_t)x) * 3;
    p[0] = c[0];
    p[1] = c[1];
    p[2] = c[2];
}

static void line(glcv_image *img, double x0, double y0, double x1, double y1, const uint8_t c[3])
{
    int steps = (int)ceil(fmax(fabs(x1 - x0), fabs(y1 - y0))) + 1;
    for (int i = 0; i <= steps; i++) {
        double s = (double)i / steps;
        int x = (int)floor(x0 + s * (x1 - x0)), y = (int)floor(y0 + s * (y1 - y0));
        put(img, x, y, c);
        put(img, x + 1, y, c);
        put(img, x, y + 1, c);
    }
}

static void draw_result(glcv_image *img, const glcv_track_result *r, int k)
{
    static const uint8_t palette[8][3] = {{0, 255, 0},   {255, 0, 255}, {0, 255, 255}, {255, 255, 0},
                                          {255, 96, 0},  {0, 128, 255}, {255, 0, 96},  {160, 255, 96}};
    static const uint8_t grey[3] = {160, 160, 160};
    const uint8_t *c = r->lost ? grey : palette[k % 8];
    if (r->width <= 0 || r->height <= 0)
        return;
    double a = r->angle * 3.14159265358979323846 / 180.0;
    double bx = cos(a) * 0.5, ay = sin(a) * 0.5, px[4], py[4];
    /* cv::RotatedRect::points */
    px[0] = r->cx - ay * r->height - bx * r->width;
    py[0] = r->cy + bx * r->height - ay * r->width;
    px[1] = r->cx + ay * r->height - bx * r->width;
    py[1] = r->cy - bx * r->height - ay * r->width;
    px[2] = 2 * r->cx - px[0];
    py[2] = 2 * r->cy - py[0];
    px[3] = 2 * r->cx - px[1];
    py[3] = 2 * r->cy - py[1];
    for (int i = 0; i < 4; i++)
        line(img, px[i], py[i], px[(i + 1) % 4], py[(i + 1) % 4], c);
    put(img, (int)r->cx, (int)r->cy, c);
}

/* ---- the run ---------------------------------------------------------------------------------- */

static int open_csv(track_cli *t)
{
    size_t n = strlen(t->csv) + 32;
    t->csv_tmp = malloc(n);
    if (!t->csv_tmp)
        return CLI_FAIL;
    snprintf(t->csv_tmp, n, "%s.tmp%ld", t->csv, (long)getpid());
    t->out = fopen(t->csv_tmp, "w");
    if (!t->out) {
        cli_error("%s: cannot write: %s", t->csv, strerror(errno));
        return CLI_FAIL;
    }
    fputs("frame,object,cx,cy,w,h,angle,x,y,bw,bh,iterations,lost\n", t->out);
    return CLI_OK;
}

static int close_csv(track_cli *t, int ok)
{
    if (!t->out)
        return ok ? CLI_OK : CLI_FAIL;
    int bad = ferror(t->out);
    bad |= fclose(t->out) != 0;
    t->out = NULL;
    if (ok && !bad && rename(t->csv_tmp, t->csv) == 0)
        return CLI_OK;
    if (ok)
        cli_error("%s: cannot write: %s", t->csv, strerror(errno));
    remove(t->csv_tmp);
    return CLI_FAIL;
}

static int add_objects(track_cli *t)
{
    glcv_track_hist *h = calloc((size_t)t->n_rois, sizeof *h);
    if (!h) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    int rc = CLI_OK, from_file = 0;
    glcv_status st = GLCV_OK;
    if (t->hist && access(t->hist, F_OK) == 0) {
        int count = 0;
        st = glcv_track_hist_load(t->hist, h, t->n_rois, &count, &t->logger);
        if (st != GLCV_OK) {
            rc = cli_lib_error(t->hist, st);
        } else if (count < t->n_rois) {
            cli_error("%s holds %d histogram%s for %d --roi", t->hist, count, count == 1 ? "" : "s", t->n_rois);
            rc = CLI_FAIL;
        } else {
            from_file = 1;
            for (int k = 0; k < t->n_rois && rc == CLI_OK; k++)
                if (h[k].hue_bins != t->bins || h[k].sat_bins != t->sat_bins) {
                    cli_error("%s: histogram %d has %d x %d bins, the tracker %d x %d (--bins, --sat-bins)",
                              t->hist, k + 1, h[k].hue_bins, h[k].sat_bins, t->bins, t->sat_bins);
                    rc = CLI_FAIL;
                }
        }
    } else {
        for (int k = 0; k < t->n_rois && rc == CLI_OK; k++) {
            st = glcv_track_hist_compute(t->tr, &t->frame, t->seg ? &t->mask : NULL, t->rois[k], &h[k]);
            if (st != GLCV_OK) {
                cli_error("--roi %d,%d,%d,%d: %s", t->rois[k].x, t->rois[k].y, t->rois[k].width, t->rois[k].height,
                          glcv_status_string(st));
                rc = CLI_FAIL;
            }
        }
    }
    for (int k = 0; k < t->n_rois && rc == CLI_OK; k++) {
        int id = -1;
        st = glcv_track_add(t->tr, &h[k], t->rois[k], &id);
        if (st != GLCV_OK)
            rc = cli_lib_error("cannot add an object", st);
    }
    if (rc == CLI_OK && t->hist && !from_file) {
        st = glcv_track_hist_save(t->hist, h, t->n_rois, &t->logger);
        if (st != GLCV_OK)
            rc = cli_lib_error(t->hist, st);
    }
    free(h);
    return rc;
}

static int run_frames(track_cli *t)
{
    glcv_track_result *res = calloc((size_t)t->n_rois, sizeof *res);
    int *lost = calloc((size_t)t->n_rois, sizeof *lost);
    double *ms = calloc((size_t)t->files.count, sizeof *ms);
    int rc = res && lost && ms ? CLI_OK : CLI_FAIL;
    if (rc != CLI_OK)
        cli_error("out of memory");
    for (int f = 0; f < t->files.count && rc == CLI_OK; f++) {
        if (f > 0 && (rc = cli_load_rgb(t->files.items[f], &t->logger, &t->frame)) != CLI_OK)
            break;
        if (t->seg && f > 0 && (rc = segment_frame(t)) != CLI_OK)
            break;
        if (f == 0 && (rc = add_objects(t)) != CLI_OK)
            break;
        double t0 = cli_now();
        glcv_status st = glcv_track_frame(t->tr, &t->frame, t->seg ? &t->mask : NULL);
        int count = 0;
        if (st == GLCV_OK)
            st = glcv_track_results(t->tr, res, t->n_rois, &count);
        ms[f] = 1e3 * (cli_now() - t0);
        if (st != GLCV_OK) {
            rc = cli_lib_error("tracking", st);
            break;
        }
        for (int k = 0; k < count && k < t->n_rois; k++) {
            const glcv_track_result *r = &res[k];
            lost[k] += r->lost != 0;
            fprintf(t->out, "%d,%d,%.3f,%.3f,%.3f,%.3f,%.3f,%d,%d,%d,%d,%d,%u\n", f, r->id, (double)r->cx,
                    (double)r->cy, (double)r->width, (double)r->height, (double)r->angle, r->bbox.x, r->bbox.y,
                    r->bbox.width, r->bbox.height, r->iterations, r->lost);
        }
        if (t->overlay) {
            glcv_image_free(&t->overlay_img);
            if ((st = glcv_image_alloc(t->width, t->height, GLCV_PIXEL_RGB8, &t->overlay_img)) != GLCV_OK ||
                (st = glcv_image_convert(&t->frame, &t->overlay_img)) != GLCV_OK) {
                rc = cli_lib_error("overlay", st);
                break;
            }
            for (int k = 0; k < count && k < t->n_rois; k++)
                draw_result(&t->overlay_img, &res[k], k);
            char *path = output_name(t->overlay, t->files.items[f], "_track.png");
            st = path ? glcv_image_save_png(path, &t->overlay_img, &t->logger) : GLCV_ERROR_OUT_OF_MEMORY;
            if (st != GLCV_OK)
                rc = cli_lib_error(path ? path : "overlay", st);
            free(path);
        }
    }
    if (rc == CLI_OK) {
        double sum = 0;
        for (int f = 0; f < t->files.count; f++)
            sum += ms[f];
        printf("frames %d objects %d\n", t->files.count, t->n_rois);
        printf("tracking %.3f ms per frame (mean of the frame and results calls)\n", sum / t->files.count);
        for (int k = 0; k < t->n_rois; k++)
            printf("object %d: lost in %d of %d frames\n", k, lost[k], t->files.count);
    }
    free(res);
    free(lost);
    free(ms);
    return rc;
}

static void cleanup(track_cli *t)
{
    if (t->out)
        close_csv(t, 0);
    free(t->csv_tmp);
    glcv_track_destroy(&t->tr);
    glcv_segment_destroy(&t->seg);
    glcv_context_destroy(&t->ctx);
    glcv_image_free(&t->frame);
    glcv_image_free(&t->mask);
    glcv_image_free(&t->overlay_img);
    cli_paths_free(&t->files);
    free(t->inputs_arg);
}

int glcv_track_command(int argc, char **argv)
{
    track_cli t;
    memset(&t, 0, sizeof t);
    t.ts = 310;
    t.bins = 60;
    t.sat_bins = 1;
    t.s_min = 30;
    t.v_min = 10;
    t.v_max = 255;
    t.window = GLCV_TRACK_WINDOW_OPENCV;
    t.engine = GLCV_ENGINE_AUTO;
    int help = 0;
    int rc = parse_options(&t, argc, argv, &help);
    if (rc == CLI_OK && help) {
        fputs(track_help, stdout);
        cleanup(&t);
        return CLI_OK;
    }
    t.logger = cli_logger(t.verbose);
    if (rc == CLI_OK && t.n_inputs_arg == 0)
        rc = cli_usage("track", "no input frames");
    if (rc == CLI_OK && t.n_rois == 0)
        rc = cli_usage("track", "no object: give --roi x,y,w,h");
    if (rc == CLI_OK && !t.csv)
        rc = cli_usage("track", "no output: give --csv FILE");
    if (rc == CLI_OK && t.v_min > t.v_max)
        rc = cli_usage("track", "--vmin %d is above --vmax %d", t.v_min, t.v_max);
    if (rc == CLI_OK)
        rc = cli_collect_images(t.inputs_arg, t.n_inputs_arg, &t.files);
    if (rc == CLI_OK)
        rc = check_sizes(&t);
    for (int k = 0; rc == CLI_OK && k < t.n_rois; k++) {
        const glcv_rect *r = &t.rois[k];
        if (r->x >= t.width || r->y >= t.height || r->x + r->width <= 0 || r->y + r->height <= 0)
            rc = cli_usage("track", "--roi %d,%d,%d,%d is outside the %dx%d frames", r->x, r->y, r->width, r->height,
                           t.width, t.height);
    }
    if (rc == CLI_OK && t.overlay)
        rc = check_overlay_names(&t);
    if (rc == CLI_OK && t.overlay)
        rc = make_dir(t.overlay);

    if (rc == CLI_OK && t.engine != GLCV_ENGINE_CPU) {
        /* a GL context: for the GPU segmenter, and so that CUDA takes the GL context's device */
        glcv_context_params cp = GLCV_CONTEXT_PARAMS(.logger = t.logger);
        cp.logger.max_level = t.verbose ? GLCV_LOG_DEBUG : GLCV_LOG_ERROR;
        if (glcv_context_create(&cp, &t.ctx) != GLCV_OK)
            t.ctx = NULL;
    }
    if (rc == CLI_OK) {
        glcv_track_params p = GLCV_TRACK_PARAMS(.width = t.width, .height = t.height,
                                                .max_objects = t.n_rois > 64 ? t.n_rois : 64, .hue_bins = t.bins,
                                                .sat_bins = t.sat_bins, .window = t.window, .engine = t.engine,
                                                .logger = t.logger);
        glcv_status st = glcv_track_create(&p, &t.tr);
        if (st == GLCV_OK)
            st = glcv_track_set_limits(t.tr, t.s_min, t.v_min, t.v_max);
        if (st != GLCV_OK)
            rc = cli_lib_error("cannot create the tracker", st);
    }
    if (rc == CLI_OK && t.mask_from_segmenter)
        rc = start_segmenter(&t);
    if (rc == CLI_OK && !t.quiet) {
        glcv_track_params got;
        glcv_track_get_params(t.tr, &got);
        fprintf(stderr, "glcv: track engine %s", glcv_engine_mode_string(got.engine));
        if (t.seg) {
            glcv_segment_params sp;
            glcv_segment_get_params(t.seg, &sp);
            fprintf(stderr, "; segmenter %s", glcv_engine_mode_string(sp.engine));
        }
        fprintf(stderr, "%s%s\n", t.ctx ? " on " : "", t.ctx ? glcv_context_describe(t.ctx) : "");
    }
    if (rc == CLI_OK)
        rc = cli_load_rgb(t.files.items[0], &t.logger, &t.frame);
    if (rc == CLI_OK && t.seg)
        rc = segment_frame(&t);
    if (rc == CLI_OK)
        rc = open_csv(&t);
    if (rc == CLI_OK)
        rc = run_frames(&t);
    if (t.out) {
        int c = close_csv(&t, rc == CLI_OK);
        rc = rc == CLI_OK ? c : rc;
    }
    cleanup(&t);
    fflush(stdout);
    return rc;
}
