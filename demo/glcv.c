/* glcv: the command-line tool of the glcv library.
 *
 *   glcv segment   segment image files, a folder or the built-in synthetic sequence
 *   glcv synth     write the built-in synthetic sequence (frames, ground truth, background)
 *   glcv compare   score a mask against a ground-truth mask
 *   glcv eval      score the segmenter on a CDnet-2014 video folder (CDnet metrics)
 *   glcv info      describe the headless OpenGL context and the engine "auto" picks
 *   glcv track     track objects through frames with CAMSHIFT (demo/glcv_track.c)
 *
 * Uses the public API only. Exit status: 0 ok, 1 runtime failure, 2 usage error.
 */
#define _POSIX_C_SOURCE 200809L

#include <glcv/glcv.h>

#include "cli.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { PROGRESS_WIDTH = 30, PROGRESS_MIN_FRAMES = 10, MAX_TIMINGS = 64, MAX_SIZE = 16384 };

static const int default_synthetic_frames = 60;
static const int default_synthetic_width = 320;
static const int default_synthetic_height = 240;
static const int default_lead_in = 30;

/* ------------------------------------------------------------------------------------------ */
/* Help texts                                                                                 */

static const char main_help[] =
    "usage: glcv <command> [options]\n"
    "\n"
    "Foreground/background segmentation of video frames on the GPU (OpenGL fragment or compute\n"
    "shaders in a headless context), with a CPU engine where no GPU is available. The method is\n"
    "Griesser's (ETH Zurich 2005): a colinearity test of colour vectors over 3x3 windows with\n"
    "darkness compensation, regularised by a Markov random field.\n"
    "\n"
    "commands:\n"
    "  segment   segment image files, folders or the built-in synthetic sequence\n"
    "  synth     write the built-in synthetic sequence (frames, ground truth, background)\n"
    "  compare   score a mask against a ground-truth mask (precision, recall, F)\n"
    "  eval      score the segmenter on a CDnet-2014 video folder (recall, precision, F, PWC...)\n"
    "  info      describe the headless OpenGL context and the engine 'auto' picks\n"
    "  track     track objects through frames with CAMSHIFT (CSV of boxes, overlays)\n"
    "  match     find a template in an image (SAD, SSD, L-infinity or ZNCC; best positions, map)\n"
    "  correlate Pearson correlation of a reference image with many images\n"
    "\n"
    "options:\n"
    "  -h, --help   show this help; 'glcv <command> --help' shows a command's options\n"
    "  --version    print the version\n"
    "\n"
    "examples:\n"
    "  glcv segment --synthetic 60 --timing -o out/synthetic\n"
    "  glcv segment --bg empty_room.png frames/ -o masks\n"
    "  glcv segment --learn 25 frames/ --panels -o masks\n"
    "  glcv eval cdnet dataset/baseline/highway --engine cpu\n"
    "\n"
    "Exit status: 0 success, 1 runtime failure (files, OpenGL), 2 usage error.\n";

static const char segment_help[] =
    "usage: glcv segment --bg BACKGROUND FRAME... -o OUTDIR [options]\n"
    "       glcv segment --learn N FRAME... -o OUTDIR [options]\n"
    "       glcv segment --synthetic [N] -o OUTDIR [options]\n"
    "\n"
    "Segments every frame into foreground (255) and background (0) against a background image\n"
    "and writes OUTDIR/<frame file name without extension>_mask.png (8-bit grey). The MRF prior\n"
    "carries over from frame to frame, so give the frames in their order.\n"
    "\n"
    "A FRAME that is a folder stands for its image files (.png .jpg .jpeg .bmp .tga .ppm .pgm,\n"
    "any case; hidden files skipped), sorted by name. The frames and the background must all\n"
    "have the same size. Everything is checked before anything is written, and every file is\n"
    "written under a temporary name and renamed, so no output is ever half-written.\n"
    "\n"
    "background (one of):\n"
    "  --bg FILE          the background image\n"
    "  --learn N          the background is the per-pixel mean of the first N frames. Those N\n"
    "                     frames are only learned from: the frames after them are segmented.\n"
    "                     When N equals the number of frames, the background is learned from\n"
    "                     all of them and all of them are segmented.\n"
    "  --synthetic [N]    the built-in synthetic sequence (see 'glcv synth'): N frames (default\n"
    "                     60) segmented against its clean background; writes panels by default\n"
    "                     and reports precision/recall against its ground truth\n"
    "  --size WxH         frame size of --synthetic (default 320x240)\n"
    "\n"
    "parameters (the paper's symbols; library defaults in brackets):\n"
    "  --Ts F             static threshold on the colinearity measure D^2, >= 0 [310]\n"
    "  --Odc F            darkness-compensation offset, >= 0 [5800]\n"
    "  --B1 F             MRF compactness of a frame's first iteration, > 0 [2]\n"
    "  --B2 F             MRF compactness of the later iterations, > 0 [200]\n"
    "  --iterations N     MRF iterations with B2 after the B1 iteration, 0..1000 [8]\n"
    "  --seed N           seed of the random order of the pixel subsets (0 = default) [0x5EED]\n"
    "  --adapt RATE       background adaptation where the mask says background, 0..1 [0: off]\n"
    "  --engine E         auto, fragment, compute or cpu [auto]. The GPU engines run in a\n"
    "                     headless OpenGL context; when none can be created, auto falls back to\n"
    "                     the CPU engine (and says so), fragment and compute fail\n"
    "\n"
    "output:\n"
    "  -o, --output DIR   output folder, created if missing (needed only when files are written)\n"
    "  --panels           also write DIR/<name>_panel.png: frame | background | mask, side by side\n"
    "  --no-panels        no panels (the default, except with --synthetic)\n"
    "  --no-masks         do not write the masks\n"
    "  --timing           also print the GPU time of each kind of pass in the last frame\n"
    "  -q, --quiet        no engine line and no progress bar on stderr\n"
    "  -v, --verbose      print the library's debug messages\n"
    "  -h, --help         show this help\n"
    "\n"
    "Options may also be written --name=value. stderr gets the line 'glcv: engine <engine> on\n"
    "<OpenGL renderer | version | platform>' first, then a progress bar when it is a terminal.\n"
    "stdout gets a summary: the number of frames; the wall time per frame of the segmentation\n"
    "call with wait (upload + GPU passes + waiting for the GPU; not file reading or writing):\n"
    "mean, median, min and max; the foreground fraction; with --synthetic, precision, recall and\n"
    "F against the ground truth.\n";

static const char synth_help[] =
    "usage: glcv synth -o OUTDIR [--frames N] [--size WxH] [--seed N]\n"
    "\n"
    "Writes the built-in synthetic sequence as PNG files: OUTDIR/background.png (the clean\n"
    "background), OUTDIR/frame_0000.png... (textured background, moving objects, some of them\n"
    "dark, sensor noise and a slow global illumination change) and OUTDIR/truth_0000.png...\n"
    "(ground-truth masks: 255 object, 0 background). The same options always give the same\n"
    "files, on every machine.\n"
    "\n"
    "options:\n"
    "  -o, --output DIR   output folder, created if missing\n"
    "  --frames N         number of frames (default 60)\n"
    "  --size WxH         frame size (default 320x240)\n"
    "  --seed N           scene seed, 0..4294967295 (0 = default)\n"
    "  -q, --quiet        no progress bar and no closing line\n"
    "  -v, --verbose      print the library's debug messages\n"
    "  -h, --help         show this help\n"
    "\n"
    "Example: glcv synth -o seq && glcv segment --bg seq/background.png seq/frame_*.png -o masks\n";

static const char compare_help[] =
    "usage: glcv compare MASK TRUTH [--min-precision P] [--min-recall R] [--min-f F]\n"
    "\n"
    "Scores a mask against a ground-truth mask of the same size. Pixels >= 128 (in grey; colour\n"
    "images are converted) are positive. Prints one line:\n"
    "  precision P recall R F F tp N fp N fn N tn N\n"
    "Precision is 1 when the mask has no positive pixel, recall is 1 when the truth has none.\n"
    "\n"
    "options:\n"
    "  --min-precision P  exit 1 when the precision is below P\n"
    "  --min-recall R     exit 1 when the recall is below R\n"
    "  --min-f F          exit 1 when F (harmonic mean of precision and recall) is below F\n"
    "  -v, --verbose      print the library's debug messages\n"
    "  -h, --help         show this help\n";

static const char eval_help[] =
    "usage: glcv eval cdnet DIR [options]\n"
    "\n"
    "Scores the segmenter on one video of the CDnet 2014 change-detection benchmark with the\n"
    "CDnet protocol and prints its metrics: recall, precision, F-measure, specificity, FPR, FNR,\n"
    "PWC (percentage of wrong classifications) and the TP FP FN TN pixel counts, summed over all\n"
    "scored frames.\n"
    "\n"
    "DIR holds, as the benchmark distributes it:\n"
    "  input/in000001.jpg ...      the frames, numbered from 1 (.png frames are accepted too)\n"
    "  groundtruth/gt000001.png .. 255 foreground; 0 and 50 (shadow) background; 85 (outside\n"
    "                              the region of interest) and 170 (unknown) not scored\n"
    "  ROI.bmp (or ROI.png)        spatial region of interest: only its nonzero pixels are scored\n"
    "  temporalROI.txt             'FIRST LAST': only frames FIRST..LAST are scored\n"
    "Frames 1..FIRST-1 are the warm-up: the background is learned from all of them (the exact\n"
    "per-pixel median by default). Then frames FIRST-N..LAST are segmented in order (N = --lead-in)\n"
    "so that the temporal prior is settled when scoring starts, and frames FIRST..LAST are scored.\n"
    "Everything is checked (files present, sizes equal) before anything is computed or written.\n"
    "\n"
    "options:\n"
    "  --background B     median (default): the per-pixel, per-channel median of the warm-up\n"
    "                     frames, computed exactly (lower median) in two passes over them; robust\n"
    "                     to objects passing during the warm-up. mean: the library's learning\n"
    "                     (glcv_segment_learn_*), the per-pixel mean\n"
    "  --lead-in N        frames segmented before FIRST and not scored [30]\n"
    "  --save-masks DIR   write the masks of the scored frames as DIR/binNNNNNN.png (CDnet names:\n"
    "                     255 foreground, 0 background), created if missing\n"
    "  --csv FILE         append one line with the parameters and the metrics to FILE (a header\n"
    "                     line first when FILE is new or empty)\n"
    "  --calibrate        set Ts, B1 and B2 from the scene's noise instead of by hand: g = the\n"
    "                     median of D^2 over every other pixel of about 50 warm-up frames\n"
    "                     against the learned background, then Ts = 100 g and B1 = B2 = 23 g.\n"
    "                     Odc is 100000 unless --Odc is given (dark objects need Odc well above\n"
    "                     Ts). Recommended with --adapt 0.01\n"
    "  --Ts --Odc --B1 --B2 --iterations --seed --adapt --engine\n"
    "                     the segmenter's parameters, as for 'glcv segment' (library defaults)\n"
    "  -q, --quiet        no engine line and no progress bar on stderr\n"
    "  -v, --verbose      print the library's debug messages\n"
    "  -h, --help         show this help\n"
    "\n"
    "stdout gets one summary line (F-measure first), then the metrics table.\n"
    "Examples: glcv eval cdnet dataset/baseline/highway --engine cpu --Ts 2000 --csv scores.csv\n"
    "          glcv eval cdnet dataset/baseline/highway --calibrate --adapt 0.01\n";

static const char info_help[] =
    "usage: glcv info\n"
    "\n"
    "Creates a headless OpenGL context (as 'glcv segment' does) and prints the library version,\n"
    "the context (renderer, OpenGL version, EGL platform), its CUDA device, and the engine that\n"
    "'auto' resolves to on it (fragment, compute, or cpu when no context can be created).\n"
    "\n"
    "options:\n"
    "  -v, --verbose      print the library's debug messages\n"
    "  -h, --help         show this help\n";

/* ------------------------------------------------------------------------------------------ */
/* Options                                                                                    */

typedef enum cli_command {
    CMD_NONE = 0,
    CMD_SEGMENT = 1,
    CMD_SYNTH = 2,
    CMD_COMPARE = 4,
    CMD_INFO = 8,
    CMD_EVAL = 16
} cli_command;

enum { CMD_ALL = CMD_SEGMENT | CMD_SYNTH | CMD_COMPARE | CMD_INFO | CMD_EVAL };

typedef enum option_id {
    OPT_HELP,
    OPT_VERBOSE,
    OPT_QUIET,
    OPT_OUTPUT,
    OPT_BG,
    OPT_LEARN,
    OPT_SYNTHETIC,
    OPT_SIZE,
    OPT_TS,
    OPT_ODC,
    OPT_B1,
    OPT_B2,
    OPT_ITERATIONS,
    OPT_SEED,
    OPT_ADAPT,
    OPT_ENGINE,
    OPT_TIMING,
    OPT_PANELS,
    OPT_NO_PANELS,
    OPT_NO_MASKS,
    OPT_FRAMES,
    OPT_MIN_PRECISION,
    OPT_MIN_RECALL,
    OPT_MIN_F,
    OPT_BACKGROUND,
    OPT_LEAD_IN,
    OPT_SAVE_MASKS,
    OPT_CSV,
    OPT_CALIBRATE
} option_id;

typedef enum value_kind {
    VALUE_NONE,     /* a flag */
    VALUE_REQUIRED, /* --name VALUE or --name=VALUE */
    VALUE_OPTIONAL  /* --name, --name=VALUE, or --name VALUE when VALUE is a number */
} value_kind;

typedef struct option_spec {
    const char *name;
    option_id id;
    value_kind value;
    int commands; /* cli_command bits the option belongs to */
} option_spec;

static const option_spec option_table[] = {
    {"-h", OPT_HELP, VALUE_NONE, CMD_ALL},
    {"--help", OPT_HELP, VALUE_NONE, CMD_ALL},
    {"-v", OPT_VERBOSE, VALUE_NONE, CMD_ALL},
    {"--verbose", OPT_VERBOSE, VALUE_NONE, CMD_ALL},
    {"-q", OPT_QUIET, VALUE_NONE, CMD_SEGMENT | CMD_SYNTH | CMD_EVAL},
    {"--quiet", OPT_QUIET, VALUE_NONE, CMD_SEGMENT | CMD_SYNTH | CMD_EVAL},
    {"-o", OPT_OUTPUT, VALUE_REQUIRED, CMD_SEGMENT | CMD_SYNTH},
    {"--output", OPT_OUTPUT, VALUE_REQUIRED, CMD_SEGMENT | CMD_SYNTH},
    {"--bg", OPT_BG, VALUE_REQUIRED, CMD_SEGMENT},
    {"--learn", OPT_LEARN, VALUE_REQUIRED, CMD_SEGMENT},
    {"--synthetic", OPT_SYNTHETIC, VALUE_OPTIONAL, CMD_SEGMENT},
    {"--size", OPT_SIZE, VALUE_REQUIRED, CMD_SEGMENT | CMD_SYNTH},
    {"--Ts", OPT_TS, VALUE_REQUIRED, CMD_SEGMENT | CMD_EVAL},
    {"--Odc", OPT_ODC, VALUE_REQUIRED, CMD_SEGMENT | CMD_EVAL},
    {"--B1", OPT_B1, VALUE_REQUIRED, CMD_SEGMENT | CMD_EVAL},
    {"--B2", OPT_B2, VALUE_REQUIRED, CMD_SEGMENT | CMD_EVAL},
    {"--iterations", OPT_ITERATIONS, VALUE_REQUIRED, CMD_SEGMENT | CMD_EVAL},
    {"--seed", OPT_SEED, VALUE_REQUIRED, CMD_SEGMENT | CMD_SYNTH | CMD_EVAL},
    {"--adapt", OPT_ADAPT, VALUE_REQUIRED, CMD_SEGMENT | CMD_EVAL},
    {"--engine", OPT_ENGINE, VALUE_REQUIRED, CMD_SEGMENT | CMD_EVAL},
    {"--timing", OPT_TIMING, VALUE_NONE, CMD_SEGMENT},
    {"--panels", OPT_PANELS, VALUE_NONE, CMD_SEGMENT},
    {"--no-panels", OPT_NO_PANELS, VALUE_NONE, CMD_SEGMENT},
    {"--no-masks", OPT_NO_MASKS, VALUE_NONE, CMD_SEGMENT},
    {"--frames", OPT_FRAMES, VALUE_REQUIRED, CMD_SYNTH},
    {"--min-precision", OPT_MIN_PRECISION, VALUE_REQUIRED, CMD_COMPARE},
    {"--min-recall", OPT_MIN_RECALL, VALUE_REQUIRED, CMD_COMPARE},
    {"--min-f", OPT_MIN_F, VALUE_REQUIRED, CMD_COMPARE},
    {"--background", OPT_BACKGROUND, VALUE_REQUIRED, CMD_EVAL},
    {"--lead-in", OPT_LEAD_IN, VALUE_REQUIRED, CMD_EVAL},
    {"--save-masks", OPT_SAVE_MASKS, VALUE_REQUIRED, CMD_EVAL},
    {"--csv", OPT_CSV, VALUE_REQUIRED, CMD_EVAL},
    {"--calibrate", OPT_CALIBRATE, VALUE_NONE, CMD_EVAL},
};

/* A growable list of owned strings. */
typedef struct string_list {
    char **items;
    size_t count;
    size_t capacity;
} string_list;

typedef struct cli_options {
    cli_command command;
    const char *command_name;
    unsigned given; /* bit (1u << option_id) for every option on the command line */
    int quiet;
    int verbose;
    const char *outdir;
    /* segment */
    const char *background;
    int learn;     /* --learn N; 0 = not given */
    int synthetic; /* --synthetic [N]: number of frames; 0 = not given */
    int width;     /* --size, for --synthetic and synth */
    int height;
    double ts, odc, b1, b2, adapt;
    int iterations;
    uint64_t seed;
    glcv_engine_mode engine;
    int timing;
    int panels; /* -1: default (on for --synthetic only) */
    int masks;
    /* synth */
    int frames;
    /* compare */
    double min_precision, min_recall, min_f;
    /* eval */
    int median_background; /* --background median (default) or mean */
    int lead_in;           /* frames segmented before the temporal ROI */
    const char *save_masks;
    const char *csv;
    int calibrate; /* Ts, B1, B2 from the noise measured on the warm-up frames */
    /* positional arguments, in order */
    string_list args;
} cli_options;

/* ------------------------------------------------------------------------------------------ */
/* Messages                                                                                   */

static void warnf(const char *fmt, ...) CLI_PRINTF(1, 2);
static void warnf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("glcv: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static int usage_error(const cli_options *opt, const char *fmt, ...) CLI_PRINTF(2, 3);
static int usage_error(const cli_options *opt, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = cli_vusage(opt ? opt->command_name : NULL, fmt, ap);
    va_end(ap);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* Small utilities                                                                            */

static int list_push(string_list *list, const char *text)
{
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? list->capacity * 2 : 16;
        char **items = realloc(list->items, capacity * sizeof *items);
        if (!items)
            return 0;
        list->items = items;
        list->capacity = capacity;
    }
    char *copy = strdup(text);
    if (!copy)
        return 0;
    list->items[list->count++] = copy;
    return 1;
}

static void list_free(string_list *list)
{
    for (size_t i = 0; i < list->count; i++)
        free(list->items[i]);
    free(list->items);
    list->items = NULL;
    list->count = list->capacity = 0;
}

/* "<a><b><c>" in new memory, or NULL when out of memory. */
static char *concat3(const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    char *s = malloc(la + lb + lc + 1);
    if (!s)
        return NULL;
    memcpy(s, a, la);
    memcpy(s + la, b, lb);
    memcpy(s + la + lb, c, lc + 1);
    return s;
}

/* "<dir>/<name><suffix>" (no doubled slash), or NULL when out of memory. */
static char *path_join(const char *dir, const char *name, const char *suffix)
{
    size_t n = strlen(dir);
    char *head = concat3(dir, n > 0 && dir[n - 1] == '/' ? "" : "/", name);
    if (!head)
        return NULL;
    char *path = concat3(head, suffix, "");
    free(head);
    return path;
}

/* The file name of a path without folders and without its last extension. */
static char *path_stem(const char *path)
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

static int digits_for(int count)
{
    int digits = 4;
    for (int limit = 10000; count > limit && digits < 10; limit *= 10)
        digits++;
    return digits;
}

/* mkdir -p, then checks that the folder is writable. Prints the error. */
static int make_output_dir(const char *dir)
{
    char *buf = strdup(dir);
    int rc = CLI_FAIL;
    if (!buf) {
        cli_error("%s: out of memory", dir);
        return CLI_FAIL;
    }
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

/* ------------------------------------------------------------------------------------------ */
/* Progress bar (stderr, only on a terminal)                                                  */

typedef struct progress {
    int enabled;
    size_t total;
} progress;

static progress progress_start(const cli_options *opt, size_t total)
{
    progress bar = {!opt->quiet && total >= PROGRESS_MIN_FRAMES && isatty(fileno(stderr)), total};
    return bar;
}

static void progress_update(const progress *bar, size_t done)
{
    if (!bar->enabled)
        return;
    char cells[PROGRESS_WIDTH + 1];
    size_t filled = bar->total ? done * PROGRESS_WIDTH / bar->total : PROGRESS_WIDTH;
    for (size_t i = 0; i < PROGRESS_WIDTH; i++)
        cells[i] = i < filled ? '#' : '.';
    cells[PROGRESS_WIDTH] = '\0';
    fprintf(stderr, "\r[%s] %zu/%zu", cells, done, bar->total);
    fflush(stderr);
}

/* Clears the bar's line; safe to call more than once. */
static void progress_end(progress *bar)
{
    if (!bar->enabled)
        return;
    fprintf(stderr, "\r%*s\r", PROGRESS_WIDTH + 2 * 12 + 4, "");
    fflush(stderr);
    bar->enabled = 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Value parsing: the whole text must be the value                                            */

static int parse_real(const cli_options *opt, const char *name, const char *text, double lo, int lo_open,
                      double hi, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || isspace((unsigned char)text[0]))
        return usage_error(opt, "%s: '%s' is not a number", name, text);
    if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1.0) || fabs(v) > FLT_MAX)
        return usage_error(opt, "%s: '%s' is not a finite number", name, text);
    if (v < lo || (lo_open && v == lo))
        return usage_error(opt, "%s: '%s' must be %s %g", name, text, lo_open ? ">" : ">=", lo);
    if (v > hi)
        return usage_error(opt, "%s: '%s' must be <= %g", name, text, hi);
    *out = v;
    return CLI_OK;
}

static int parse_u64(const cli_options *opt, const char *name, const char *text, uint64_t hi, uint64_t *out)
{
    int hex = text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
    if (!isxdigit((unsigned char)text[hex ? 2 : 0]))
        return usage_error(opt, "%s: '%s' is not a non-negative integer", name, text);
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, hex ? 16 : 10);
    if (*end != '\0')
        return usage_error(opt, "%s: '%s' is not a non-negative integer", name, text);
    if (errno == ERANGE || v > hi)
        return usage_error(opt, "%s: '%s' must be at most %llu", name, text, (unsigned long long)hi);
    *out = (uint64_t)v;
    return CLI_OK;
}

/* "WxH" with 1 <= W, H <= MAX_SIZE. */
static int parse_size(const cli_options *opt, const char *name, const char *text, int *w, int *h)
{
    char *end = NULL;
    errno = 0;
    long width = isdigit((unsigned char)text[0]) ? strtol(text, &end, 10) : -1;
    long height = -1;
    if (width >= 0 && (*end == 'x' || *end == 'X') && isdigit((unsigned char)end[1]))
        height = strtol(end + 1, &end, 10);
    if (height < 0 || *end != '\0')
        return usage_error(opt, "%s: '%s' is not a size like 320x240", name, text);
    if (errno == ERANGE || width < 1 || height < 1 || width > MAX_SIZE || height > MAX_SIZE)
        return usage_error(opt, "%s: '%s': width and height must be between 1 and %d", name, text, MAX_SIZE);
    *w = (int)width;
    *h = (int)height;
    return CLI_OK;
}

/* A VALUE_OPTIONAL option takes the next argument only when it is a plain number. */
static int looks_like_count(const char *text)
{
    if (!*text)
        return 0;
    for (const char *p = text; *p; p++)
        if (!isdigit((unsigned char)*p))
            return 0;
    return 1;
}

static int apply_option(cli_options *opt, const option_spec *spec, const char *value)
{
    const char *name = spec->name;
    double real = 0.0;
    int rc = CLI_OK;
    opt->given |= 1u << spec->id;
    switch (spec->id) {
    case OPT_HELP: break;
    case OPT_VERBOSE: opt->verbose = 1; break;
    case OPT_QUIET: opt->quiet = 1; break;
    case OPT_OUTPUT:
        if (!*value)
            return usage_error(opt, "%s: empty folder name", name);
        opt->outdir = value;
        break;
    case OPT_BG: opt->background = value; break;
    case OPT_LEARN: rc = cli_parse_int(opt->command_name, name, value, 1, INT_MAX, &opt->learn); break;
    case OPT_SYNTHETIC:
        opt->synthetic = default_synthetic_frames;
        if (value)
            rc = cli_parse_int(opt->command_name, name, value, 1, 1000000, &opt->synthetic);
        break;
    case OPT_SIZE: rc = parse_size(opt, name, value, &opt->width, &opt->height); break;
    case OPT_TS: rc = parse_real(opt, name, value, 0.0, 0, FLT_MAX, &opt->ts); break;
    case OPT_ODC: rc = parse_real(opt, name, value, 0.0, 0, FLT_MAX, &opt->odc); break;
    case OPT_B1: rc = parse_real(opt, name, value, 0.0, 1, FLT_MAX, &opt->b1); break;
    case OPT_B2: rc = parse_real(opt, name, value, 0.0, 1, FLT_MAX, &opt->b2); break;
    case OPT_ITERATIONS: rc = cli_parse_int(opt->command_name, name, value, 0, 1000, &opt->iterations); break;
    case OPT_SEED:
        rc = parse_u64(opt, name, value, opt->command == CMD_SYNTH ? UINT32_MAX : UINT64_MAX, &opt->seed);
        break;
    case OPT_ADAPT: rc = parse_real(opt, name, value, 0.0, 0, 1.0, &opt->adapt); break;
    case OPT_ENGINE:
        if (glcv_engine_mode_parse(value, &opt->engine) != GLCV_OK)
            return usage_error(opt, "%s: '%s' is not an engine: use auto, fragment, compute or cpu", name, value);
        break;
    case OPT_TIMING: opt->timing = 1; break;
    case OPT_PANELS: opt->panels = 1; break;
    case OPT_NO_PANELS: opt->panels = 0; break;
    case OPT_NO_MASKS: opt->masks = 0; break;
    case OPT_FRAMES: rc = cli_parse_int(opt->command_name, name, value, 1, 1000000, &opt->frames); break;
    case OPT_MIN_PRECISION:
        rc = parse_real(opt, name, value, 0.0, 0, 1.0, &real);
        opt->min_precision = real;
        break;
    case OPT_MIN_RECALL:
        rc = parse_real(opt, name, value, 0.0, 0, 1.0, &real);
        opt->min_recall = real;
        break;
    case OPT_MIN_F:
        rc = parse_real(opt, name, value, 0.0, 0, 1.0, &real);
        opt->min_f = real;
        break;
    case OPT_BACKGROUND:
        if (strcmp(value, "median") == 0)
            opt->median_background = 1;
        else if (strcmp(value, "mean") == 0)
            opt->median_background = 0;
        else
            return usage_error(opt, "%s: '%s' is not a background model: use median or mean", name, value);
        break;
    case OPT_LEAD_IN: rc = cli_parse_int(opt->command_name, name, value, 0, 1000000, &opt->lead_in); break;
    case OPT_CALIBRATE: opt->calibrate = 1; break;
    case OPT_SAVE_MASKS:
    case OPT_CSV:
        if (!*value)
            return usage_error(opt, "%s: empty file name", name);
        if (spec->id == OPT_CSV)
            opt->csv = value;
        else
            opt->save_masks = value;
        break;
    }
    return rc;
}

static const option_spec *find_option(const char *name, size_t name_len)
{
    for (size_t i = 0; i < sizeof option_table / sizeof option_table[0]; i++) {
        const char *candidate = option_table[i].name;
        if (strlen(candidate) == name_len && strncmp(candidate, name, name_len) == 0)
            return &option_table[i];
    }
    return NULL;
}

/* Parses one option at argv[*i] (advancing *i past a separate value). */
static int parse_one_option(cli_options *opt, int argc, char **argv, int *i)
{
    const char *arg = argv[*i];
    const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
    size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
    const char *value = eq ? eq + 1 : NULL;
    const option_spec *spec = find_option(arg, name_len);
    if (!spec || !(spec->commands & (int)opt->command))
        return usage_error(opt, "unknown option '%.*s'", (int)name_len, arg);
    switch (spec->value) {
    case VALUE_NONE:
        if (value)
            return usage_error(opt, "%s takes no value", spec->name);
        break;
    case VALUE_REQUIRED:
        if (!value) {
            if (*i + 1 >= argc)
                return usage_error(opt, "%s needs a value", spec->name);
            value = argv[++*i];
        }
        break;
    case VALUE_OPTIONAL:
        if (!value && *i + 1 < argc && looks_like_count(argv[*i + 1]))
            value = argv[++*i];
        break;
    }
    return apply_option(opt, spec, value);
}

static int parse_command(cli_options *opt, const char *name)
{
    static const struct {
        const char *name;
        cli_command command;
    } commands[] = {
        {"segment", CMD_SEGMENT}, {"synth", CMD_SYNTH}, {"compare", CMD_COMPARE}, {"info", CMD_INFO},
        {"eval", CMD_EVAL}};
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(name, commands[i].name) == 0) {
            opt->command = commands[i].command;
            opt->command_name = commands[i].name;
            return CLI_OK;
        }
    }
    return usage_error(NULL, "unknown command '%s'", name);
}

/* Parses argv[1..] after the command name. */
static int parse_arguments(cli_options *opt, int argc, char **argv)
{
    int options_done = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (!options_done && strcmp(arg, "--") == 0) {
            options_done = 1;
        } else if (!options_done && arg[0] == '-' && arg[1] != '\0') {
            int rc = parse_one_option(opt, argc, argv, &i);
            if (rc != CLI_OK)
                return rc;
        } else if (!list_push(&opt->args, arg)) {
            cli_error("out of memory");
            return CLI_FAIL;
        }
    }
    return CLI_OK;
}

static void options_init(cli_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->engine = GLCV_ENGINE_AUTO;
    opt->panels = -1;
    opt->masks = 1;
    opt->width = default_synthetic_width;
    opt->height = default_synthetic_height;
    opt->frames = default_synthetic_frames;
    opt->median_background = 1;
    opt->lead_in = default_lead_in;
}

static int given(const cli_options *opt, option_id id)
{
    return (opt->given >> id) & 1u;
}

/* ------------------------------------------------------------------------------------------ */
/* glcv segment: planning and validation                                                      */

typedef struct segment_run {
    const cli_options *opt;
    glcv_logger logger;
    string_list inputs; /* every input file, folders expanded */
    string_list stems;  /* output name stem of every segmented frame */
    size_t first;       /* index in inputs of the first segmented frame */
    size_t frames;      /* number of segmented frames */
    int width, height;
    int write_masks, write_panels;
    glcv_context *ctx;
    glcv_synth *synth;
    glcv_segment *seg;
    glcv_segment_params resolved;
    glcv_image frame, truth, mask, background, panel;
    double *frame_ms;    /* wall time of each frame's segmentation call */
    double *foreground;  /* foreground percentage of each frame */
    uint64_t tp, fp, fn; /* against the synthetic ground truth */
    size_t written_masks, written_panels;
    glcv_timing timings[MAX_TIMINGS];
    int timing_count;
} segment_run;

/* Expands the positional arguments into run->inputs; every one must exist. */
static int collect_inputs(segment_run *run)
{
    const string_list *args = &run->opt->args;
    cli_paths paths = {0};
    int rc = cli_collect_images(args->items, (int)args->count, &paths);
    for (int i = 0; rc == CLI_OK && i < paths.count; i++) {
        if (!list_push(&run->inputs, paths.items[i])) {
            cli_error("out of memory");
            rc = CLI_FAIL;
        }
    }
    cli_paths_free(&paths);
    return rc;
}

/* Reads an image file's size without decoding it. Prints one line naming the file on error. */
static int image_size(const char *path, const glcv_logger *logger, int *w, int *h)
{
    int channels = 0;
    return cli_probe_image(path, logger, w, h, &channels);
}

/* Every input decodes and has the size of the first; the background has that size too. */
static int check_input_sizes(segment_run *run)
{
    const char *reference = run->inputs.items[0];
    for (size_t i = 0; i < run->inputs.count; i++) {
        int w = 0, h = 0;
        if (image_size(run->inputs.items[i], run->opt->verbose ? &run->logger : NULL, &w, &h) != CLI_OK)
            return CLI_FAIL;
        if (i == 0) {
            run->width = w;
            run->height = h;
        } else if (w != run->width || h != run->height) {
            cli_error("%s is %dx%d but %s is %dx%d: all frames must have the same size", run->inputs.items[i], w, h,
                   reference, run->width, run->height);
            return CLI_FAIL;
        }
    }
    const char *bg = run->opt->background;
    if (bg) {
        int w = 0, h = 0;
        if (image_size(bg, run->opt->verbose ? &run->logger : NULL, &w, &h) != CLI_OK)
            return CLI_FAIL;
        if (w != run->width || h != run->height) {
            cli_error("background %s is %dx%d but the frames are %dx%d (%s)", bg, w, h, run->width, run->height,
                   reference);
            return CLI_FAIL;
        }
    }
    return CLI_OK;
}

typedef struct stem_entry {
    const char *stem;
    const char *path;
} stem_entry;

static int compare_stem_entries(const void *a, const void *b)
{
    return strcmp(((const stem_entry *)a)->stem, ((const stem_entry *)b)->stem);
}

/* Two frames whose names differ only in folder or extension would write the same outputs. */
static int check_unique_stems(const segment_run *run)
{
    if (run->frames < 2 || run->synth)
        return CLI_OK;
    stem_entry *entries = malloc(run->frames * sizeof *entries);
    if (!entries) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    for (size_t k = 0; k < run->frames; k++) {
        entries[k].stem = run->stems.items[k];
        entries[k].path = run->inputs.items[run->first + k];
    }
    qsort(entries, run->frames, sizeof *entries, compare_stem_entries);
    int rc = CLI_OK;
    for (size_t k = 1; k < run->frames && rc == CLI_OK; k++) {
        if (strcmp(entries[k - 1].stem, entries[k].stem) == 0) {
            cli_error("%s and %s would both write %s_mask.png: give frames distinct file names", entries[k - 1].path,
                   entries[k].path, entries[k].stem);
            rc = CLI_FAIL;
        }
    }
    free(entries);
    return rc;
}

static int make_stems(segment_run *run)
{
    int digits = digits_for((int)run->frames);
    for (size_t k = 0; k < run->frames; k++) {
        char synthetic_name[32];
        char *stem = NULL;
        if (run->synth) {
            int n = snprintf(synthetic_name, sizeof synthetic_name, "frame_%0*zu", digits, k);
            if (n < 0 || (size_t)n >= sizeof synthetic_name) {
                cli_error("frame name too long");
                return CLI_FAIL;
            }
        } else {
            stem = path_stem(run->inputs.items[run->first + k]);
            if (!stem) {
                cli_error("out of memory");
                return CLI_FAIL;
            }
        }
        int ok = list_push(&run->stems, stem ? stem : synthetic_name);
        free(stem);
        if (!ok) {
            cli_error("out of memory");
            return CLI_FAIL;
        }
    }
    return check_unique_stems(run);
}

/* Checks the combination of options (usage errors, exit 2). */
static int check_segment_options(const cli_options *opt)
{
    int sources = (opt->background != NULL) + (opt->learn > 0) + (opt->synthetic > 0);
    if (sources == 0)
        return usage_error(opt, "no background: give --bg FILE, --learn N or --synthetic");
    if (sources > 1)
        return usage_error(opt, "--bg, --learn and --synthetic exclude each other");
    if (opt->synthetic && opt->args.count > 0)
        return usage_error(opt, "--synthetic takes no input files (got '%s')", opt->args.items[0]);
    if (!opt->synthetic && opt->args.count == 0)
        return usage_error(opt, "no input frames");
    if (!opt->synthetic && given(opt, OPT_SIZE))
        return usage_error(opt, "--size applies only to --synthetic");
    return CLI_OK;
}

static int plan_segment(segment_run *run)
{
    const cli_options *opt = run->opt;
    int rc = check_segment_options(opt);
    if (rc != CLI_OK)
        return rc;
    run->write_masks = opt->masks;
    run->write_panels = opt->panels == 1 || (opt->panels == -1 && opt->synthetic > 0);
    if ((run->write_masks || run->write_panels) && !opt->outdir)
        return usage_error(opt, "no output folder: give -o OUTDIR (or --no-masks%s)",
                           run->write_panels ? " --no-panels" : "");
    if (opt->synthetic) {
        glcv_synth_params sp = GLCV_SYNTH_PARAMS(.width = opt->width, .height = opt->height,
                                                 .frames = opt->synthetic);
        glcv_status st = glcv_synth_create(&sp, &run->synth);
        if (st != GLCV_OK)
            return cli_lib_error("cannot create the synthetic sequence", st);
        run->width = opt->width;
        run->height = opt->height;
        run->frames = (size_t)opt->synthetic;
        return make_stems(run);
    }
    rc = collect_inputs(run);
    if (rc == CLI_OK && opt->learn > 0 && (size_t)opt->learn > run->inputs.count)
        return usage_error(opt, "--learn %d: only %zu input frame%s", opt->learn, run->inputs.count,
                           run->inputs.count == 1 ? "" : "s");
    if (rc == CLI_OK)
        rc = check_input_sizes(run);
    if (rc != CLI_OK)
        return rc;
    size_t learn = (size_t)opt->learn;
    run->first = learn > 0 && learn < run->inputs.count ? learn : 0;
    run->frames = run->inputs.count - run->first;
    return make_stems(run);
}

/* ------------------------------------------------------------------------------------------ */
/* glcv segment: engine, background, frames                                                   */

/* Creates the context (unless cpu) and a segmenter with the command line's parameters, and
 * prints the engine line. On error the caller still owns (and frees) *ctx and *seg. */
static int create_segmenter(const cli_options *opt, const glcv_logger *logger, int width, int height,
                            glcv_context **ctx, glcv_segment **seg, glcv_segment_params *resolved)
{
    glcv_engine_mode mode = opt->engine;
    if (mode != GLCV_ENGINE_CPU) {
        glcv_context_params cp = GLCV_CONTEXT_PARAMS(.logger = *logger);
        glcv_status st = glcv_context_create(&cp, ctx);
        if (st != GLCV_OK && mode != GLCV_ENGINE_AUTO)
            return cli_lib_error("cannot create an OpenGL context", st);
        if (st != GLCV_OK) {
            warnf("cannot create an OpenGL context (%s): using the CPU engine", glcv_status_string(st));
            mode = GLCV_ENGINE_CPU;
        }
    }
    glcv_segment_params p = GLCV_SEGMENT_PARAMS(.width = width, .height = height, .ts = (float)opt->ts,
                                                .odc = (float)opt->odc, .b1 = (float)opt->b1, .b2 = (float)opt->b2,
                                                .iterations = opt->iterations, .seed = opt->seed, .engine = mode,
                                                .adapt_rate = (float)opt->adapt, .timing = opt->timing,
                                                .logger = *logger);
    glcv_status st = glcv_segment_create(&p, seg);
    if (st != GLCV_OK)
        return cli_lib_error("cannot create the segmenter", st);
    /* Zero means "default" in the params struct: explicit zeros go through the setters. */
    if (st == GLCV_OK && given(opt, OPT_TS) && opt->ts == 0.0)
        st = glcv_segment_set_ts(*seg, 0.0f);
    if (st == GLCV_OK && given(opt, OPT_ODC) && opt->odc == 0.0)
        st = glcv_segment_set_odc(*seg, 0.0f);
    if (st == GLCV_OK && given(opt, OPT_ITERATIONS) && opt->iterations == 0)
        st = glcv_segment_set_iterations(*seg, 0);
    if (st == GLCV_OK && given(opt, OPT_ADAPT) && opt->adapt == 0.0)
        st = glcv_segment_set_adapt_rate(*seg, 0.0f);
    if (st == GLCV_OK)
        st = glcv_segment_get_params(*seg, resolved);
    if (st != GLCV_OK)
        return cli_lib_error("cannot set the parameters", st);
    if (!opt->quiet) {
        int on_gpu = resolved->engine != GLCV_ENGINE_CPU && *ctx;
        fprintf(stderr, "glcv: engine %s on %s\n", glcv_engine_mode_string(resolved->engine),
                on_gpu ? glcv_context_describe(*ctx) : "CPU");
    }
    return CLI_OK;
}

static int open_engine(segment_run *run)
{
    return create_segmenter(run->opt, &run->logger, run->width, run->height, &run->ctx, &run->seg, &run->resolved);
}

/* Ends learning the background and reads the parameters it calibrated. */
static int end_learning(glcv_segment *seg, glcv_segment_params *resolved)
{
    glcv_status st = glcv_segment_learn_end(seg);
    if (st == GLCV_OK) /* learning calibrates the parameters not given */
        st = glcv_segment_get_params(seg, resolved);
    if (st != GLCV_OK)
        return cli_lib_error("cannot learn the background", st);
    return CLI_OK;
}

static int learn_background(segment_run *run)
{
    glcv_status st = glcv_segment_learn_begin(run->seg);
    if (st != GLCV_OK)
        return cli_lib_error("cannot start learning the background", st);
    for (size_t i = 0; i < (size_t)run->opt->learn; i++) {
        const char *path = run->inputs.items[i];
        if (cli_load_rgb(path, &run->logger, &run->frame) != CLI_OK)
            return CLI_FAIL;
        st = glcv_segment_learn_add(run->seg, &run->frame);
        if (st != GLCV_OK)
            return cli_lib_error(path, st);
    }
    if (end_learning(run->seg, &run->resolved) != CLI_OK)
        return CLI_FAIL;
    return CLI_OK;
}

static int set_background(segment_run *run)
{
    const cli_options *opt = run->opt;
    glcv_status st = GLCV_OK;
    if (opt->learn > 0)
        return learn_background(run);
    if (run->synth) {
        st = glcv_synth_background(run->synth, &run->background);
        if (st == GLCV_OK)
            st = glcv_segment_set_background(run->seg, &run->background);
        return st == GLCV_OK ? CLI_OK : cli_lib_error("synthetic background", st);
    }
    glcv_image bg = {0};
    if (cli_load_rgb(opt->background, &run->logger, &bg) != CLI_OK)
        return CLI_FAIL;
    st = glcv_segment_set_background(run->seg, &bg);
    glcv_image_free(&bg);
    return st == GLCV_OK ? CLI_OK : cli_lib_error(opt->background, st);
}

static int allocate_buffers(segment_run *run)
{
    int w = run->width, h = run->height;
    glcv_status st = glcv_image_alloc(w, h, GLCV_PIXEL_GRAY8, &run->mask);
    if (st == GLCV_OK)
        st = glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &run->background);
    if (st == GLCV_OK && run->synth)
        st = glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &run->frame);
    if (st == GLCV_OK && run->synth)
        st = glcv_image_alloc(w, h, GLCV_PIXEL_GRAY8, &run->truth);
    if (st == GLCV_OK && run->write_panels)
        st = glcv_image_alloc(3 * w, h, GLCV_PIXEL_RGB8, &run->panel);
    if (st != GLCV_OK)
        return cli_lib_error("cannot allocate the image buffers", st);
    run->frame_ms = calloc(run->frames, sizeof *run->frame_ms);
    run->foreground = calloc(run->frames, sizeof *run->foreground);
    if (!run->frame_ms || !run->foreground) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* Copies an RGB8 or GRAY8 image (grey replicated) into the panel at column x0. */
static void blit_rgb(glcv_image *panel, int x0, const glcv_image *src)
{
    size_t src_stride = glcv_image_stride(src), dst_stride = glcv_image_stride(panel);
    int gray = src->format == GLCV_PIXEL_GRAY8;
    for (int y = 0; y < src->height; y++) {
        const uint8_t *s = src->data + (size_t)y * src_stride;
        uint8_t *d = panel->data + (size_t)y * dst_stride + (size_t)x0 * 3;
        if (!gray) {
            memcpy(d, s, (size_t)src->width * 3);
            continue;
        }
        for (int x = 0; x < src->width; x++)
            d[3 * x] = d[3 * x + 1] = d[3 * x + 2] = s[x];
    }
}

static int save_png(segment_run *run, const char *stem, const char *suffix, const glcv_image *image)
{
    char *path = path_join(run->opt->outdir, stem, suffix);
    if (!path) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    glcv_status st = glcv_image_save_png(path, image, &run->logger);
    int rc = st == GLCV_OK ? CLI_OK : cli_lib_error(path, st);
    free(path);
    return rc;
}

/* Foreground percentage of the mask; with the synthetic truth, also counts tp/fp/fn. */
static double measure_mask(segment_run *run)
{
    size_t stride = glcv_image_stride(&run->mask), truth_stride = glcv_image_stride(&run->truth);
    uint64_t on = 0;
    for (int y = 0; y < run->height; y++) {
        const uint8_t *m = run->mask.data + (size_t)y * stride;
        const uint8_t *t = run->truth.data ? run->truth.data + (size_t)y * truth_stride : NULL;
        for (int x = 0; x < run->width; x++) {
            int fg = m[x] >= 128;
            on += (uint64_t)fg;
            if (!t)
                continue;
            int object = t[x] >= 128;
            run->tp += (uint64_t)(fg && object);
            run->fp += (uint64_t)(fg && !object);
            run->fn += (uint64_t)(!fg && object);
        }
    }
    return 100.0 * (double)on / ((double)run->width * (double)run->height);
}

static int write_outputs(segment_run *run, size_t k)
{
    const char *stem = run->stems.items[k];
    if (run->write_masks) {
        if (save_png(run, stem, "_mask.png", &run->mask) != CLI_OK)
            return CLI_FAIL;
        run->written_masks++;
    }
    if (run->write_panels) {
        glcv_status st = glcv_segment_read_background(run->seg, &run->background);
        if (st != GLCV_OK)
            return cli_lib_error("cannot read the background", st);
        blit_rgb(&run->panel, 0, &run->frame);
        blit_rgb(&run->panel, run->width, &run->background);
        blit_rgb(&run->panel, 2 * run->width, &run->mask);
        if (save_png(run, stem, "_panel.png", &run->panel) != CLI_OK)
            return CLI_FAIL;
        run->written_panels++;
    }
    return CLI_OK;
}

static int segment_one(segment_run *run, size_t k)
{
    glcv_status st = GLCV_OK;
    if (run->synth) {
        st = glcv_synth_frame(run->synth, (int)k, &run->frame, &run->truth);
        if (st != GLCV_OK)
            return cli_lib_error("synthetic frame", st);
    } else if (cli_load_rgb(run->inputs.items[run->first + k], &run->logger, &run->frame) != CLI_OK) {
        return CLI_FAIL;
    }
    double t0 = cli_now();
    st = glcv_segment_frame(run->seg, &run->frame, 1);
    run->frame_ms[k] = 1e3 * (cli_now() - t0);
    if (st != GLCV_OK)
        return cli_lib_error(run->synth ? run->stems.items[k] : run->inputs.items[run->first + k], st);
    st = glcv_segment_read_mask(run->seg, &run->mask);
    if (st != GLCV_OK)
        return cli_lib_error("cannot read the mask", st);
    run->foreground[k] = measure_mask(run);
    return write_outputs(run, k);
}

static int segment_frames(segment_run *run)
{
    progress bar = progress_start(run->opt, run->frames);
    int rc = CLI_OK;
    for (size_t k = 0; k < run->frames && rc == CLI_OK; k++) {
        progress_update(&bar, k);
        rc = segment_one(run, k);
    }
    if (rc == CLI_OK)
        progress_update(&bar, run->frames);
    progress_end(&bar);
    if (rc == CLI_OK && run->opt->timing) {
        glcv_status st = glcv_segment_timings(run->seg, run->timings, MAX_TIMINGS, &run->timing_count, 1);
        if (st != GLCV_OK)
            return cli_lib_error("cannot read the GPU timings", st);
    }
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* glcv segment: summary                                                                      */

static void print_timing_table(const segment_run *run)
{
    if (run->timing_count == 0) {
        printf("GPU passes: no timings (%s)\n", run->resolved.engine == GLCV_ENGINE_CPU
                                                  ? "the CPU engine has none"
                                                  : "no timer query results");
        return;
    }
    double total = 0.0;
    int count = run->timing_count < MAX_TIMINGS ? run->timing_count : MAX_TIMINGS;
    printf("GPU passes of the last frame:\n");
    printf("  %-20s %10s %8s\n", "pass", "ms", "passes");
    for (int i = 0; i < count; i++) {
        const glcv_timing *t = &run->timings[i];
        printf("  %-20s %10.4f %8d\n", t->name ? t->name : "?", t->ms, t->count);
        total += t->ms;
    }
    printf("  %-20s %10.4f\n", "total", total);
}

static void print_summary(const segment_run *run)
{
    size_t n = run->frames;
    double *sorted = malloc(n * sizeof *sorted);
    double sum = 0.0, fg_sum = 0.0, fg_min = 100.0, fg_max = 0.0;
    for (size_t k = 0; k < n; k++) {
        sum += run->frame_ms[k];
        fg_sum += run->foreground[k];
        fg_min = fmin(fg_min, run->foreground[k]);
        fg_max = fmax(fg_max, run->foreground[k]);
    }
    printf("frames:     %zu of %dx%d, engine %s\n", n, run->width, run->height,
           glcv_engine_mode_string(run->resolved.engine));
    if (sorted) {
        memcpy(sorted, run->frame_ms, n * sizeof *sorted);
        qsort(sorted, n, sizeof *sorted, cli_compare_doubles);
        double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
        printf("frame time: mean %.3f ms, median %.3f ms, min %.3f ms, max %.3f ms "
               "(upload + GPU passes + wait)\n",
               sum / (double)n, median, sorted[0], sorted[n - 1]);
        free(sorted);
    }
    printf("foreground: mean %.2f %% of the pixels per frame (min %.2f %%, max %.2f %%)\n", fg_sum / (double)n, fg_min,
           fg_max);
    if (run->synth) {
        double precision = run->tp + run->fp ? (double)run->tp / (double)(run->tp + run->fp) : 1.0;
        double recall = run->tp + run->fn ? (double)run->tp / (double)(run->tp + run->fn) : 1.0;
        double f = precision + recall > 0.0 ? 2.0 * precision * recall / (precision + recall) : 0.0;
        printf("truth:      precision %.4f, recall %.4f, F %.4f (all frames against the ground truth)\n", precision,
               recall, f);
    }
    if (run->write_masks || run->write_panels)
        printf("written:    %zu masks, %zu panels in %s\n", run->written_masks, run->written_panels,
               run->opt->outdir);
    if (run->opt->timing)
        print_timing_table(run);
}

static void segment_run_free(segment_run *run)
{
    glcv_segment_destroy(&run->seg);
    glcv_context_destroy(&run->ctx);
    glcv_synth_destroy(&run->synth);
    glcv_image_free(&run->frame);
    glcv_image_free(&run->truth);
    glcv_image_free(&run->mask);
    glcv_image_free(&run->background);
    glcv_image_free(&run->panel);
    free(run->frame_ms);
    free(run->foreground);
    list_free(&run->inputs);
    list_free(&run->stems);
}

static int cmd_segment(const cli_options *opt)
{
    segment_run run = {.opt = opt, .logger = cli_logger(opt->verbose)};
    int rc = plan_segment(&run);
    if (rc == CLI_OK && (run.write_masks || run.write_panels))
        rc = make_output_dir(opt->outdir);
    if (rc == CLI_OK)
        rc = open_engine(&run);
    if (rc == CLI_OK)
        rc = allocate_buffers(&run);
    if (rc == CLI_OK)
        rc = set_background(&run);
    if (rc == CLI_OK)
        rc = segment_frames(&run);
    if (rc == CLI_OK)
        print_summary(&run);
    segment_run_free(&run);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* glcv synth                                                                                 */

static int save_numbered(const char *dir, const char *prefix, int digits, int k, const glcv_image *image,
                         const glcv_logger *logger)
{
    char name[64];
    int n = snprintf(name, sizeof name, "%s_%0*d", prefix, digits, k);
    if (n < 0 || (size_t)n >= sizeof name) {
        cli_error("file name too long");
        return CLI_FAIL;
    }
    char *path = path_join(dir, name, ".png");
    if (!path) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    glcv_status st = glcv_image_save_png(path, image, logger);
    int rc = st == GLCV_OK ? CLI_OK : cli_lib_error(path, st);
    free(path);
    return rc;
}

static int write_synth_frames(const cli_options *opt, glcv_synth *synth, glcv_image *frame, glcv_image *truth,
                              const glcv_logger *logger)
{
    int digits = digits_for(opt->frames);
    progress bar = progress_start(opt, (size_t)opt->frames);
    int rc = CLI_OK;
    for (int k = 0; k < opt->frames && rc == CLI_OK; k++) {
        progress_update(&bar, (size_t)k);
        glcv_status st = glcv_synth_frame(synth, k, frame, truth);
        if (st != GLCV_OK)
            rc = cli_lib_error("synthetic frame", st);
        if (rc == CLI_OK)
            rc = save_numbered(opt->outdir, "frame", digits, k, frame, logger);
        if (rc == CLI_OK)
            rc = save_numbered(opt->outdir, "truth", digits, k, truth, logger);
    }
    progress_end(&bar);
    return rc;
}

static int cmd_synth(const cli_options *opt)
{
    if (opt->args.count > 0)
        return usage_error(opt, "unexpected argument '%s'", opt->args.items[0]);
    if (!opt->outdir)
        return usage_error(opt, "no output folder: give -o OUTDIR");
    glcv_logger logger = cli_logger(opt->verbose);
    glcv_synth *synth = NULL;
    glcv_image frame = {0}, truth = {0};
    char *bg_path = NULL;
    glcv_synth_params sp = GLCV_SYNTH_PARAMS(.width = opt->width, .height = opt->height, .frames = opt->frames,
                                             .seed = (uint32_t)opt->seed);
    glcv_status st = glcv_synth_create(&sp, &synth);
    int rc = st == GLCV_OK ? CLI_OK : cli_lib_error("cannot create the synthetic sequence", st);
    if (rc == CLI_OK)
        rc = make_output_dir(opt->outdir);
    if (rc == CLI_OK) {
        st = glcv_image_alloc(opt->width, opt->height, GLCV_PIXEL_RGB8, &frame);
        if (st == GLCV_OK)
            st = glcv_image_alloc(opt->width, opt->height, GLCV_PIXEL_GRAY8, &truth);
        if (st == GLCV_OK)
            st = glcv_synth_background(synth, &frame);
        if (st != GLCV_OK)
            rc = cli_lib_error("synthetic background", st);
    }
    if (rc == CLI_OK) {
        bg_path = path_join(opt->outdir, "background", ".png");
        st = bg_path ? glcv_image_save_png(bg_path, &frame, &logger) : GLCV_ERROR_OUT_OF_MEMORY;
        if (st != GLCV_OK)
            rc = cli_lib_error(bg_path ? bg_path : "background.png", st);
    }
    if (rc == CLI_OK)
        rc = write_synth_frames(opt, synth, &frame, &truth, &logger);
    if (rc == CLI_OK && !opt->quiet)
        printf("wrote background.png, %d frames and %d truth masks (%dx%d) to %s\n", opt->frames, opt->frames,
               opt->width, opt->height, opt->outdir);
    free(bg_path);
    glcv_image_free(&frame);
    glcv_image_free(&truth);
    glcv_synth_destroy(&synth);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* glcv compare                                                                               */

static int check_minimum(const char *what, double value, double minimum)
{
    if (value >= minimum)
        return CLI_OK;
    fprintf(stderr, "glcv: compare: %s %.4f is below the minimum %.4f\n", what, value, minimum);
    return CLI_FAIL;
}

static int cmd_compare(const cli_options *opt)
{
    if (opt->args.count != 2)
        return usage_error(opt, "compare takes two files, MASK and TRUTH (got %zu)", opt->args.count);
    const char *mask_path = opt->args.items[0], *truth_path = opt->args.items[1];
    glcv_logger logger = cli_logger(opt->verbose);
    glcv_image mask = {0}, truth = {0};
    int rc = CLI_FAIL;
    glcv_status st = glcv_image_load(mask_path, GLCV_PIXEL_GRAY8, &logger, &mask);
    if (st != GLCV_OK) {
        cli_lib_error(mask_path, st);
        goto cleanup;
    }
    st = glcv_image_load(truth_path, GLCV_PIXEL_GRAY8, &logger, &truth);
    if (st != GLCV_OK) {
        cli_lib_error(truth_path, st);
        goto cleanup;
    }
    if (mask.width != truth.width || mask.height != truth.height) {
        cli_error("%s is %dx%d but %s is %dx%d", mask_path, mask.width, mask.height, truth_path, truth.width,
               truth.height);
        goto cleanup;
    }
    uint64_t tp = 0, fp = 0, fn = 0, tn = 0;
    size_t ms = glcv_image_stride(&mask), ts = glcv_image_stride(&truth);
    for (int y = 0; y < mask.height; y++) {
        for (int x = 0; x < mask.width; x++) {
            int m = mask.data[(size_t)y * ms + (size_t)x] >= 128;
            int t = truth.data[(size_t)y * ts + (size_t)x] >= 128;
            tp += (uint64_t)(m && t);
            fp += (uint64_t)(m && !t);
            fn += (uint64_t)(!m && t);
            tn += (uint64_t)(!m && !t);
        }
    }
    double precision = tp + fp ? (double)tp / (double)(tp + fp) : 1.0;
    double recall = tp + fn ? (double)tp / (double)(tp + fn) : 1.0;
    double f = precision + recall > 0.0 ? 2.0 * precision * recall / (precision + recall) : 0.0;
    printf("precision %.4f recall %.4f F %.4f tp %llu fp %llu fn %llu tn %llu\n", precision, recall, f,
           (unsigned long long)tp, (unsigned long long)fp, (unsigned long long)fn, (unsigned long long)tn);
    rc = CLI_OK;
    if (check_minimum("precision", precision, opt->min_precision) != CLI_OK)
        rc = CLI_FAIL;
    if (check_minimum("recall", recall, opt->min_recall) != CLI_OK)
        rc = CLI_FAIL;
    if (check_minimum("F", f, opt->min_f) != CLI_OK)
        rc = CLI_FAIL;
cleanup:
    glcv_image_free(&mask);
    glcv_image_free(&truth);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* glcv eval: one video of the CDnet 2014 benchmark                                           */

/* CDnet frame numbers have six digits; the median histograms count in 16 bits. */
enum { CDNET_MAX_FRAME = 999999, MEDIAN_MAX_FRAMES = 65535 };

typedef struct eval_run {
    const cli_options *opt;
    glcv_logger logger;
    const char *dir;
    char *name;         /* the folder's last component, for the summary */
    int first, last;    /* temporal ROI: scored frames, 1-based, inclusive */
    int start;          /* first segmented frame */
    int width, height;
    string_list inputs; /* frame files 1..last (index k - 1) */
    string_list truths; /* ground truth of frames first..last (index k - first) */
    char *roi_path;
    glcv_image roi; /* GRAY8: nonzero = scored */
    uint64_t roi_pixels;
    FILE *csv;
    glcv_context *ctx;
    glcv_segment *seg;
    glcv_segment_params resolved;
    glcv_image frame, truth, mask, background;
    int warmup_used; /* warm-up frames the background was learned from */
    double noise;    /* --calibrate: median D^2 of the calibration frames */
    int noise_frames;
    uint64_t tp, fp, fn, tn;
    uint64_t odd;      /* ground-truth pixels with a value outside 0, 50, 85, 170, 255: not scored */
    double segment_ms; /* total wall time of the segmentation calls */
    size_t segmented, written;
    progress bar;
    size_t done; /* progress steps: two per warm-up frame (median) or one (mean), one per segmented frame */
} eval_run;

static int is_file(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* "<dir>/<sub>/<prefix>NNNNNN<ext>" for the first ext that exists; NULL with *missing = 1 when none
 * does (*missing = 0: out of memory). */
static char *find_numbered(const char *dir, const char *sub, const char *prefix, int k,
                           const char *const *extensions, size_t count, int *missing)
{
    char name[64];
    *missing = 0;
    for (size_t i = 0; i < count; i++) {
        snprintf(name, sizeof name, "%s/%s%06d", sub, prefix, k);
        char *path = path_join(dir, name, extensions[i]);
        if (!path)
            return NULL;
        if (is_file(path))
            return path;
        free(path);
    }
    *missing = 1;
    return NULL;
}

/* Reads temporalROI.txt: two frame numbers "FIRST LAST" and nothing else but white space. */
static int read_temporal_roi(eval_run *run)
{
    char *path = path_join(run->dir, "temporalROI.txt", "");
    char text[256] = {0};
    int rc = CLI_FAIL;
    if (!path) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        cli_error("%s: %s (a CDnet folder has input/, groundtruth/, ROI.bmp and temporalROI.txt)", path,
               strerror(errno));
        goto cleanup;
    }
    size_t n = fread(text, 1, sizeof text - 1, f);
    int too_long = n == sizeof text - 1 && fgetc(f) != EOF;
    fclose(f);
    char *end = text;
    errno = 0;
    long first = strtol(text, &end, 10);
    long last = end != text ? strtol(end, &end, 10) : -1;
    while (isspace((unsigned char)*end))
        end++;
    if (too_long || *end != '\0' || errno == ERANGE || strlen(text) != n || first < 1 || last < first ||
        last > CDNET_MAX_FRAME) {
        cli_error("%s: malformed: expected two frame numbers 'FIRST LAST' with 1 <= FIRST <= LAST <= %d", path,
               CDNET_MAX_FRAME);
        goto cleanup;
    }
    if (first < 2) {
        cli_error("%s: the scored frames start at frame 1: no warm-up frames to learn the background from", path);
        goto cleanup;
    }
    run->first = (int)first;
    run->last = (int)last;
    rc = CLI_OK;
cleanup:
    free(path);
    return rc;
}

static int find_roi(eval_run *run)
{
    static const char *const names[] = {"ROI.bmp", "ROI.png"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *path = path_join(run->dir, names[i], "");
        if (!path) {
            cli_error("out of memory");
            return CLI_FAIL;
        }
        if (is_file(path)) {
            run->roi_path = path;
            return CLI_OK;
        }
        free(path);
    }
    cli_error("%s: no ROI.bmp (nor ROI.png): the spatial region of interest is missing", run->dir);
    return CLI_FAIL;
}

/* Finds every frame 1..last and every ground truth first..last. */
static int collect_cdnet_files(eval_run *run)
{
    static const char *const frame_ext[] = {".jpg", ".png"};
    static const char *const truth_ext[] = {".png"};
    for (int k = 1; k <= run->last; k++) {
        int missing = 0;
        char *path = find_numbered(run->dir, "input", "in", k, frame_ext, 2, &missing);
        if (!path && missing) {
            cli_error("%s/input/in%06d.jpg (or .png): no such frame (temporalROI.txt scores frames up to %d)",
                   run->dir, k, run->last);
            return CLI_FAIL;
        }
        int ok = path && list_push(&run->inputs, path);
        free(path);
        if (!ok) {
            cli_error("out of memory");
            return CLI_FAIL;
        }
    }
    for (int k = run->first; k <= run->last; k++) {
        int missing = 0;
        char *path = find_numbered(run->dir, "groundtruth", "gt", k, truth_ext, 1, &missing);
        if (!path && missing) {
            cli_error("%s/groundtruth/gt%06d.png: no such ground truth (frame %d is scored)", run->dir, k, k);
            return CLI_FAIL;
        }
        int ok = path && list_push(&run->truths, path);
        free(path);
        if (!ok) {
            cli_error("out of memory");
            return CLI_FAIL;
        }
    }
    return CLI_OK;
}

/* All frames, ground truths and the ROI have the size of the first frame. */
static int check_cdnet_sizes(eval_run *run)
{
    const glcv_logger *logger = run->opt->verbose ? &run->logger : NULL;
    const char *reference = run->inputs.items[0];
    int w = 0, h = 0;
    if (image_size(reference, logger, &run->width, &run->height) != CLI_OK)
        return CLI_FAIL;
    const string_list *lists[2] = {&run->inputs, &run->truths};
    for (int l = 0; l < 2; l++) {
        for (size_t i = 0; i < lists[l]->count; i++) {
            const char *path = lists[l]->items[i];
            if (image_size(path, logger, &w, &h) != CLI_OK)
                return CLI_FAIL;
            if (w != run->width || h != run->height) {
                cli_error("%s is %dx%d but the frames are %dx%d (%s)", path, w, h, run->width, run->height, reference);
                return CLI_FAIL;
            }
        }
    }
    if (image_size(run->roi_path, logger, &w, &h) != CLI_OK)
        return CLI_FAIL;
    if (w != run->width || h != run->height) {
        cli_error("%s is %dx%d but the frames are %dx%d (%s)", run->roi_path, w, h, run->width, run->height, reference);
        return CLI_FAIL;
    }
    glcv_status st = glcv_image_load(run->roi_path, GLCV_PIXEL_GRAY8, &run->logger, &run->roi);
    if (st != GLCV_OK)
        return cli_lib_error(run->roi_path, st);
    size_t stride = glcv_image_stride(&run->roi);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            run->roi_pixels += run->roi.data[(size_t)y * stride + (size_t)x] != 0;
    if (run->roi_pixels == 0) {
        cli_error("%s: the region of interest is empty (no nonzero pixel)", run->roi_path);
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* The last component of a folder path ("a/b/highway/" -> "highway"), in new memory. */
static char *folder_name(const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    size_t begin = n;
    while (begin > 0 && dir[begin - 1] != '/')
        begin--;
    if (begin == n) /* "/" */
        begin = 0;
    char *name = malloc(n - begin + 1);
    if (!name)
        return NULL;
    memcpy(name, dir + begin, n - begin);
    name[n - begin] = '\0';
    return name;
}

static int plan_eval(eval_run *run)
{
    const cli_options *opt = run->opt;
    if (opt->args.count == 0)
        return usage_error(opt, "no dataset: give 'cdnet DIR'");
    if (strcmp(opt->args.items[0], "cdnet") != 0)
        return usage_error(opt, "'%s' is not a dataset format: use 'cdnet DIR'", opt->args.items[0]);
    if (opt->args.count != 2)
        return usage_error(opt, "eval cdnet takes one folder (got %zu arguments)", opt->args.count - 1);
    if (opt->calibrate && (given(opt, OPT_TS) || given(opt, OPT_B1) || given(opt, OPT_B2)))
        return usage_error(opt, "--calibrate sets Ts, B1 and B2: give none of them with it");
    run->dir = opt->args.items[1];
    struct stat sb;
    if (stat(run->dir, &sb) != 0) {
        cli_error("%s: %s", run->dir, strerror(errno));
        return CLI_FAIL;
    }
    if (!S_ISDIR(sb.st_mode)) {
        cli_error("%s: not a folder", run->dir);
        return CLI_FAIL;
    }
    run->name = folder_name(run->dir);
    if (!run->name) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    int rc = read_temporal_roi(run);
    if (rc == CLI_OK)
        rc = find_roi(run);
    if (rc == CLI_OK)
        rc = collect_cdnet_files(run);
    if (rc == CLI_OK)
        rc = check_cdnet_sizes(run);
    run->start = run->first - opt->lead_in > 1 ? run->first - opt->lead_in : 1;
    return rc;
}

/* Warm-up frames used for the background: all of 1..first-1, evenly thinned to at most
 * MEDIAN_MAX_FRAMES for the median. */
static int warmup_step(const eval_run *run)
{
    int count = run->first - 1;
    return run->opt->median_background ? (count + MEDIAN_MAX_FRAMES - 1) / MEDIAN_MAX_FRAMES : 1;
}

/* Warm-up frame k (0-based, every warmup_step-th of 1..first-1) for the median. */
static int eval_median_frame(void *user, int k, glcv_image *frame)
{
    eval_run *run = user;
    progress_update(&run->bar, run->done++);
    return cli_load_rgb(run->inputs.items[k * warmup_step(run)], &run->logger, frame);
}

/* The background as the exact per-pixel, per-channel lower median of the warm-up frames
 * (cli_median_rgb). */
static int median_background(eval_run *run)
{
    int step = warmup_step(run), count = 0;
    for (int k = 1; k < run->first; k += step)
        count++;
    size_t row = (size_t)run->width * 3;
    uint8_t *median = malloc(row * (size_t)run->height);
    if (!median) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    int rc = cli_median_rgb(run->width, run->height, count, eval_median_frame, run, &run->frame, median);
    if (rc == CLI_OK) {
        size_t stride = glcv_image_stride(&run->background);
        for (int y = 0; y < run->height; y++)
            memcpy(run->background.data + (size_t)y * stride, median + (size_t)y * row, row);
        glcv_status st = glcv_segment_set_background(run->seg, &run->background);
        if (st != GLCV_OK)
            rc = cli_lib_error("cannot set the background", st);
        else
            run->warmup_used = count;
    }
    free(median);
    return rc;
}

/* The background as the library learns it: the per-pixel mean of the warm-up frames. */
static int mean_background(eval_run *run)
{
    glcv_status st = glcv_segment_learn_begin(run->seg);
    if (st != GLCV_OK)
        return cli_lib_error("cannot start learning the background", st);
    for (int k = 1; k < run->first; k++) {
        progress_update(&run->bar, run->done++);
        const char *path = run->inputs.items[k - 1];
        if (cli_load_rgb(path, &run->logger, &run->frame) != CLI_OK)
            return CLI_FAIL;
        st = glcv_segment_learn_add(run->seg, &run->frame);
        if (st != GLCV_OK)
            return cli_lib_error(path, st);
    }
    if (end_learning(run->seg, &run->resolved) != CLI_OK)
        return CLI_FAIL;
    run->warmup_used = run->first - 1;
    return CLI_OK;
}

/* Adds the mask of scored frame k to the counts: ROI pixels only; truth 255 positive, 0 and 50
 * negative, 85 and 170 not scored. */
static int score_mask(eval_run *run, int k)
{
    const char *path = run->truths.items[k - run->first];
    glcv_image_free(&run->truth);
    glcv_status st = glcv_image_load(path, GLCV_PIXEL_GRAY8, &run->logger, &run->truth);
    if (st != GLCV_OK)
        return cli_lib_error(path, st);
    size_t ms = glcv_image_stride(&run->mask), ts = glcv_image_stride(&run->truth);
    size_t rs = glcv_image_stride(&run->roi);
    for (int y = 0; y < run->height; y++) {
        const uint8_t *m = run->mask.data + (size_t)y * ms;
        const uint8_t *t = run->truth.data + (size_t)y * ts;
        const uint8_t *r = run->roi.data + (size_t)y * rs;
        for (int x = 0; x < run->width; x++) {
            if (!r[x])
                continue;
            int fg = m[x] >= 128;
            switch (t[x]) {
            case 255:
                run->tp += (uint64_t)fg;
                run->fn += (uint64_t)!fg;
                break;
            case 0:
            case 50:
                run->fp += (uint64_t)fg;
                run->tn += (uint64_t)!fg;
                break;
            case 85:
            case 170: break;
            default: run->odd++; break;
            }
        }
    }
    return CLI_OK;
}

static int save_cdnet_mask(eval_run *run, int k)
{
    char name[32];
    snprintf(name, sizeof name, "bin%06d", k);
    char *path = path_join(run->opt->save_masks, name, ".png");
    if (!path) {
        cli_error("out of memory");
        return CLI_FAIL;
    }
    glcv_status st = glcv_image_save_png(path, &run->mask, &run->logger);
    int rc = st == GLCV_OK ? CLI_OK : cli_lib_error(path, st);
    free(path);
    if (rc == CLI_OK)
        run->written++;
    return rc;
}

/* --calibrate: the library's calibration (glcv_segment_calibrate_*) on about CALIBRATION_FRAMES
 * warm-up frames, evenly spaced, against the learned background: g = the median of D^2, then
 * Ts = 100 g, B1 = B2 = 23 g and Odc 100000 unless --Odc was given. */
enum { CALIBRATION_FRAMES = 50 };

static int calibrate_thresholds(eval_run *run)
{
    int warmup = run->first - 1;
    int step = warmup > CALIBRATION_FRAMES ? warmup / CALIBRATION_FRAMES : 1;
    float g = 0;
    glcv_status st = glcv_segment_calibrate_begin(run->seg);
    int frames = 0;
    for (int k = 1; k <= warmup && st == GLCV_OK; k += step, frames++) {
        if (cli_load_rgb(run->inputs.items[k - 1], &run->logger, &run->frame) != CLI_OK)
            return CLI_FAIL;
        st = glcv_segment_calibrate_add(run->seg, &run->frame);
    }
    if (st == GLCV_OK)
        st = glcv_segment_calibrate_end(run->seg, &g);
    if (st == GLCV_OK)
        st = glcv_segment_get_params(run->seg, &run->resolved);
    if (st != GLCV_OK) {
        cli_lib_error("cannot calibrate the thresholds", st);
        return CLI_FAIL;
    }
    run->noise = g;
    run->noise_frames = frames;
    return CLI_OK;
}

static int eval_frames(eval_run *run)
{
    for (int k = run->start; k <= run->last; k++) {
        progress_update(&run->bar, run->done++);
        const char *path = run->inputs.items[k - 1];
        if (cli_load_rgb(path, &run->logger, &run->frame) != CLI_OK)
            return CLI_FAIL;
        double t0 = cli_now();
        glcv_status st = glcv_segment_frame(run->seg, &run->frame, 1);
        run->segment_ms += 1e3 * (cli_now() - t0);
        if (st != GLCV_OK)
            return cli_lib_error(path, st);
        run->segmented++;
        if (k < run->first)
            continue;
        st = glcv_segment_read_mask(run->seg, &run->mask);
        if (st != GLCV_OK)
            return cli_lib_error("cannot read the mask", st);
        if (score_mask(run, k) != CLI_OK)
            return CLI_FAIL;
        if (run->opt->save_masks && save_cdnet_mask(run, k) != CLI_OK)
            return CLI_FAIL;
    }
    progress_update(&run->bar, run->done);
    return CLI_OK;
}

/* The CDnet metrics of summed counts (a ratio with nothing to count is 1 for recall, precision
 * and specificity, 0 for the error rates). */
typedef struct cdnet_metrics {
    double recall, precision, f, specificity, fpr, fnr, pwc;
} cdnet_metrics;

static double ratio_or(uint64_t num, uint64_t den, double empty)
{
    return den ? (double)num / (double)den : empty;
}

static cdnet_metrics cdnet_compute(const eval_run *run)
{
    cdnet_metrics m;
    uint64_t all = run->tp + run->fp + run->fn + run->tn;
    m.recall = ratio_or(run->tp, run->tp + run->fn, 1.0);
    m.precision = ratio_or(run->tp, run->tp + run->fp, 1.0);
    m.f = m.precision + m.recall > 0.0 ? 2.0 * m.precision * m.recall / (m.precision + m.recall) : 0.0;
    m.specificity = ratio_or(run->tn, run->tn + run->fp, 1.0);
    m.fpr = ratio_or(run->fp, run->fp + run->tn, 0.0);
    m.fnr = ratio_or(run->fn, run->tp + run->fn, 0.0);
    m.pwc = 100.0 * ratio_or(run->fn + run->fp, all, 0.0);
    return m;
}

static void print_eval(const eval_run *run, const cdnet_metrics *m)
{
    const glcv_segment_params *p = &run->resolved;
    int scored = run->last - run->first + 1;
    char adapt[32] = "";
    if (p->adapt_rate > 0.0f)
        snprintf(adapt, sizeof adapt, " adapt %g", (double)p->adapt_rate);
    printf("%s: F %.4f (recall %.4f, precision %.4f, PWC %.3f) on frames %d..%d, engine %s, Ts %g Odc %g B1 %g "
           "B2 %g iterations %d%s, %s background\n",
           run->name, m->f, m->recall, m->precision, m->pwc, run->first, run->last,
           glcv_engine_mode_string(p->engine), (double)p->ts, (double)p->odc, (double)p->b1, (double)p->b2,
           p->iterations, adapt, run->opt->median_background ? "median" : "mean");
    printf("  %-12s %.4f\n", "recall", m->recall);
    printf("  %-12s %.4f\n", "precision", m->precision);
    printf("  %-12s %.4f\n", "F-measure", m->f);
    printf("  %-12s %.4f\n", "specificity", m->specificity);
    printf("  %-12s %.6f\n", "FPR", m->fpr);
    printf("  %-12s %.6f\n", "FNR", m->fnr);
    printf("  %-12s %.4f\n", "PWC", m->pwc);
    printf("  %-12s TP %llu FP %llu FN %llu TN %llu\n", "pixels", (unsigned long long)run->tp,
           (unsigned long long)run->fp, (unsigned long long)run->fn, (unsigned long long)run->tn);
    printf("  %-12s %d scored, %zu segmented (from frame %d), background from %d warm-up frames; %.3f ms per "
           "frame (segmentation call)\n",
           "frames", scored, run->segmented, run->start, run->warmup_used,
           run->segmented ? run->segment_ms / (double)run->segmented : 0.0);
    printf("  %-12s %llu of %dx%d pixels (%s)\n", "ROI", (unsigned long long)run->roi_pixels, run->width, run->height,
           run->roi_path);
    if (run->opt->calibrate)
        printf("  %-12s median D^2 %.1f over %d warm-up frames (Odc %g): Ts %g, B1 %g, B2 %g\n", "calibrated",
               run->noise, run->noise_frames, (double)p->odc, (double)p->ts, (double)p->b1, (double)p->b2);
    if (run->opt->save_masks)
        printf("  %-12s %zu masks in %s\n", "written", run->written, run->opt->save_masks);
    if (run->odd)
        warnf("%llu ground-truth pixels have values other than 0, 50, 85, 170 and 255: not scored",
              (unsigned long long)run->odd);
}

static int write_csv_row(eval_run *run, const cdnet_metrics *m)
{
    const glcv_segment_params *p = &run->resolved;
    FILE *f = run->csv;
    int empty = fseek(f, 0, SEEK_END) == 0 && ftell(f) == 0;
    if (empty)
        fprintf(f, "video,first,last,background,engine,Ts,Odc,B1,B2,iterations,seed,adapt,lead_in,"
                   "TP,FP,FN,TN,recall,precision,F,specificity,FPR,FNR,PWC,noise\n");
    fprintf(f, "%s,%d,%d,%s,%s,%g,%g,%g,%g,%d,%llu,%g,%d,%llu,%llu,%llu,%llu,%.6f,%.6f,%.6f,%.6f,%.8f,%.8f,%.6f,%g\n",
            run->name, run->first, run->last, run->opt->median_background ? "median" : "mean",
            glcv_engine_mode_string(p->engine), (double)p->ts, (double)p->odc, (double)p->b1, (double)p->b2,
            p->iterations, (unsigned long long)p->seed, (double)p->adapt_rate, run->first - run->start,
            (unsigned long long)run->tp, (unsigned long long)run->fp, (unsigned long long)run->fn,
            (unsigned long long)run->tn, m->recall, m->precision, m->f, m->specificity, m->fpr, m->fnr, m->pwc,
            run->opt->calibrate ? run->noise : 0.0);
    if (fflush(f) != 0 || ferror(f)) {
        cli_error("%s: cannot write: %s", run->opt->csv, strerror(errno));
        return CLI_FAIL;
    }
    return CLI_OK;
}

static void eval_run_free(eval_run *run)
{
    progress_end(&run->bar);
    glcv_segment_destroy(&run->seg);
    glcv_context_destroy(&run->ctx);
    glcv_image_free(&run->frame);
    glcv_image_free(&run->truth);
    glcv_image_free(&run->mask);
    glcv_image_free(&run->background);
    glcv_image_free(&run->roi);
    if (run->csv)
        fclose(run->csv);
    free(run->name);
    free(run->roi_path);
    list_free(&run->inputs);
    list_free(&run->truths);
}

static int cmd_eval(const cli_options *opt)
{
    eval_run run = {.opt = opt, .logger = cli_logger(opt->verbose)};
    int rc = plan_eval(&run);
    if (rc == CLI_OK && opt->save_masks)
        rc = make_output_dir(opt->save_masks);
    if (rc == CLI_OK && opt->csv) {
        run.csv = fopen(opt->csv, "a");
        if (!run.csv) {
            cli_error("%s: %s", opt->csv, strerror(errno));
            rc = CLI_FAIL;
        }
    }
    if (rc == CLI_OK)
        rc = create_segmenter(opt, &run.logger, run.width, run.height, &run.ctx, &run.seg, &run.resolved);
    if (rc == CLI_OK) {
        glcv_status st = glcv_image_alloc(run.width, run.height, GLCV_PIXEL_GRAY8, &run.mask);
        if (st == GLCV_OK)
            st = glcv_image_alloc(run.width, run.height, GLCV_PIXEL_RGB8, &run.background);
        if (st != GLCV_OK)
            rc = cli_lib_error("cannot allocate the image buffers", st);
    }
    if (rc == CLI_OK) {
        int warmup = run.first - 1, step = warmup_step(&run);
        size_t background_steps = opt->median_background ? 2u * (size_t)((warmup + step - 1) / step) : (size_t)warmup;
        run.bar = progress_start(opt, background_steps + (size_t)(run.last - run.start + 1));
        rc = opt->median_background ? median_background(&run) : mean_background(&run);
    }
    if (rc == CLI_OK && opt->calibrate)
        rc = calibrate_thresholds(&run);
    if (rc == CLI_OK)
        rc = eval_frames(&run);
    progress_end(&run.bar);
    if (rc == CLI_OK) {
        cdnet_metrics m = cdnet_compute(&run);
        print_eval(&run, &m);
        if (run.csv)
            rc = write_csv_row(&run, &m);
    }
    eval_run_free(&run);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* glcv info                                                                                  */

/* Prints the " | "-separated parts of a context description on their own lines. */
static void print_description_parts(const char *desc)
{
    static const char *const labels[] = {"renderer:", "OpenGL:", "platform:"};
    const char *part = desc;
    for (size_t i = 0; i < sizeof labels / sizeof labels[0] && part; i++) {
        const char *sep = strstr(part, " | ");
        int len = sep ? (int)(sep - part) : (int)strlen(part);
        printf("%-10s %.*s\n", labels[i], len, part);
        part = sep ? sep + 3 : NULL;
    }
}

static int cmd_info(const cli_options *opt)
{
    if (opt->args.count > 0)
        return usage_error(opt, "unexpected argument '%s'", opt->args.items[0]);
    glcv_logger logger = cli_logger(opt->verbose);
    glcv_context *ctx = NULL;
    glcv_segment *seg = NULL;
    glcv_segment_params resolved = {0};
    int rc = CLI_FAIL;
    printf("%-10s %d.%d.%d\n", "glcv:", GLCV_VERSION_MAJOR, GLCV_VERSION_MINOR, GLCV_VERSION_PATCH);
    glcv_context_params cp = GLCV_CONTEXT_PARAMS(.logger = logger);
    glcv_status st = glcv_context_create(&cp, &ctx);
    if (st == GLCV_OK) {
        const char *desc = glcv_context_describe(ctx);
        printf("%-10s %s\n", "context:", desc ? desc : "?");
        print_description_parts(desc ? desc : "");
        int cuda = glcv_context_cuda_device(ctx);
        if (cuda >= 0)
            printf("%-10s %d\n", "CUDA:", cuda);
        else
            printf("%-10s none\n", "CUDA:");
    } else {
        printf("%-10s none (%s)\n", "context:", glcv_status_string(st));
    }
    glcv_segment_params p = GLCV_SEGMENT_PARAMS(.width = 64, .height = 64, .engine = GLCV_ENGINE_AUTO,
                                                .logger = logger);
    st = glcv_segment_create(&p, &seg);
    if (st == GLCV_OK)
        st = glcv_segment_get_params(seg, &resolved);
    if (st != GLCV_OK) {
        cli_lib_error("cannot create a segmenter", st);
        goto cleanup;
    }
    printf("%-10s auto -> %s\n", "engine:", glcv_engine_mode_string(resolved.engine));
    rc = CLI_OK;
cleanup:
    glcv_segment_destroy(&seg);
    glcv_context_destroy(&ctx);
    return rc;
}

/* ------------------------------------------------------------------------------------------ */

static const char *command_help(cli_command command)
{
    switch (command) {
    case CMD_SEGMENT: return segment_help;
    case CMD_SYNTH: return synth_help;
    case CMD_COMPARE: return compare_help;
    case CMD_INFO: return info_help;
    case CMD_EVAL: return eval_help;
    case CMD_NONE: break;
    }
    return main_help;
}

static int run_command(const cli_options *opt)
{
    switch (opt->command) {
    case CMD_SEGMENT: return cmd_segment(opt);
    case CMD_SYNTH: return cmd_synth(opt);
    case CMD_COMPARE: return cmd_compare(opt);
    case CMD_INFO: return cmd_info(opt);
    case CMD_EVAL: return cmd_eval(opt);
    case CMD_NONE: break;
    }
    return CLI_USAGE;
}

/* glcv track: demo/glcv_track.c */
int glcv_track_command(int argc, char **argv);
/* glcv match, glcv correlate: demo/glcv_match.c */
int glcv_match_command(int argc, char **argv);
int glcv_correlate_command(int argc, char **argv);

int main(int argc, char **argv)
{
    cli_options opt;
    options_init(&opt);
    if (argc < 2) {
        fputs(main_help, stderr);
        return CLI_USAGE;
    }
    const char *first = argv[1];
    if (strcmp(first, "-h") == 0 || strcmp(first, "--help") == 0 || strcmp(first, "help") == 0) {
        fputs(main_help, stdout);
        return CLI_OK;
    }
    if (strcmp(first, "track") == 0)
        return glcv_track_command(argc - 2, argv + 2);
    if (strcmp(first, "match") == 0)
        return glcv_match_command(argc - 2, argv + 2);
    if (strcmp(first, "correlate") == 0)
        return glcv_correlate_command(argc - 2, argv + 2);
    if (strcmp(first, "--version") == 0) {
        printf("glcv %d.%d.%d\n", GLCV_VERSION_MAJOR, GLCV_VERSION_MINOR, GLCV_VERSION_PATCH);
        return CLI_OK;
    }
    int rc = parse_command(&opt, first);
    if (rc == CLI_OK)
        rc = parse_arguments(&opt, argc - 2, argv + 2);
    if (rc == CLI_OK && given(&opt, OPT_HELP))
        fputs(command_help(opt.command), stdout);
    else if (rc == CLI_OK)
        rc = run_command(&opt);
    list_free(&opt.args);
    fflush(stdout);
    return rc;
}
