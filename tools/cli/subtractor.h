/* The method that tells foreground from background, as 'glcv segment', 'glcv eval' and glcv-demo
 * choose it with --method: eth (the segmenter of glcv/segment.h, Griesser 2005) or one of
 * glcv/bgsub.h's (vsam: adaptive background subtraction; diff2, diff3: two- and three-frame
 * differencing). Its options and their checks, and one small interface over the library objects
 * for one input or several inputs of one size at once (streams): create, learn, frames, masks,
 * background, timings, a description. All streams are one library object, one upload and one
 * pass for all of them: a glcv_segment of several streams (eth) or a glcv_bgsub. */
#ifndef GLCV_TOOLS_SUBTRACTOR_H
#define GLCV_TOOLS_SUBTRACTOR_H

#include "cli.h"
#include "segmenter.h"

#include <stddef.h>

/* --method: the index into cli_method_names. */
enum { CLI_METHOD_ETH = 0, CLI_METHOD_VSAM, CLI_METHOD_DIFF2, CLI_METHOD_DIFF3, CLI_METHOD_COUNT };

extern const char *const cli_method_names[];        /* "eth", "vsam", "diff2", "diff3" */
extern const char *const cli_bgsub_passes_names[];  /* "single", "multi" */

/* The method's options as given. */
typedef struct cli_method {
    int method;        /* CLI_METHOD_*; default eth */
    cli_segmenter seg; /* eth's parameters and --engine (every method's) */
    double alpha, c, min_threshold; /* 0: the library's default */
    int absorb;  /* 0: the library's default */
    int vote;    /* given: 0 = no vote; not given: the library's default */
    int gray;
    int passes; /* index into cli_bgsub_passes_names */
} cli_method;

/* The option table rows: --method, the segmenter's (CLI_SEGMENTER_OPTIONS, --engine included)
 * and bgsub's: --alpha --c --min-threshold --gray --passes, in the ranges of glcv/bgsub.h (an
 * explicit 0 is no value of the library's: zero means its default there). */
#define CLI_METHOD_OPTIONS(m)                                                                       \
    {"--method", NULL, &(m)->method, .kind = CLI_CHOICE, .choices = cli_method_names,              \
     .what = "a method"},                                                                           \
    CLI_SEGMENTER_OPTIONS(&(m)->seg),                                                               \
    {"--alpha", NULL, &(m)->alpha, .kind = CLI_REAL, .open_min = 1, .max = 1.0, .open_max = 1},     \
    {"--c", NULL, &(m)->c, .kind = CLI_REAL, .open_min = 1, .max = 16.0},                            \
    {"--min-threshold", NULL, &(m)->min_threshold, .kind = CLI_REAL, .open_min = 1, .max = 255.0},  \
    {"--absorb", NULL, &(m)->absorb, .kind = CLI_INT, .min = 1, .max = 255},                        \
    {"--vote", NULL, &(m)->vote, .kind = CLI_INT, .max = 9},                                         \
    {"--gray", NULL, &(m)->gray, .kind = CLI_FLAG},                                                 \
    {"--passes", NULL, &(m)->passes, .kind = CLI_CHOICE, .choices = cli_bgsub_passes_names,        \
     .what = "a pass layout"}

/* The help of --method and of bgsub's options, for the programs that take CLI_METHOD_OPTIONS. */
#define CLI_METHOD_HELP                                                                             \
    "method:\n"                                                                                     \
    "  --method M         eth, vsam, diff2 or diff3 [eth]. eth: the colinearity + MRF segmenter\n"  \
    "                     (Griesser 2005; its parameters below). vsam: adaptive background\n"      \
    "                     subtraction (CMU VSAM): foreground where a pixel differs from the\n"      \
    "                     background B by more than its threshold T; B and T adapt where the\n"     \
    "                     pixel neither moves nor is foreground (or has been foreground without\n"  \
    "                     moving for --absorb frames). diff2: foreground where the frame\n"        \
    "                     differs from the one before by more than T; diff3: from both frames\n"   \
    "                     before it. The first frame's mask is empty (diff3 and vsam: the first\n"  \
    "                     two frames' moving-pixel test too). The segmenter's parameters are a\n"  \
    "                     usage error with vsam, diff2 and diff3, and the options below with eth\n" \
    "  --alpha F          vsam: B and T keep this share and take the rest from the frame,\n"       \
    "                     0 < F < 1 [0.92]\n"                                                       \
    "  --c F              T's multiple of |frame - B| (when adapting and learning), 0 < F <= 16\n" \
    "                     [3]\n"                                                                    \
    "  --min-threshold F  T never falls below it, 0 < F <= 255 [20]\n"                             \
    "  --absorb N         vsam: frames a pixel stays foreground without moving before it becomes\n" \
    "                     background again (a parked car, a light switched on), 1..255 [100]\n"   \
    "  --vote N           a mask pixel is foreground where at least N of the 3x3 pixels around it\n" \
    "                     are, 1..9; 0: each pixel alone [5]\n"                                    \
    "  --gray             work on luma (Y = 0.30 R + 0.59 G + 0.11 B) instead of the three colours\n" \
    "  --passes P         single: one GL pass writes mask, B and T; multi: a pass per step\n"      \
    "                     (slower, for comparison) [single]. The masks are the same\n"

/* The method's usage errors: eth's parameters with another method, bgsub's options with eth,
 * --alpha with diff2 or diff3 (they have no background to adapt). */
int cli_method_check(const cli_method *m, const cli_args *args);

/* glcv_bgsub's parameters for a bgsub method's options (width, height, streams 0). */
glcv_bgsub_params cli_method_bgsub_params(const cli_method *m);

#define CLI_MAX_GPUS 16

/* One method for `streams` inputs of one size; with several GPUs, this object holds the first
 * group of inputs and others[] the next groups, each in a context of its own GPU. */
typedef struct cli_subtractor {
    int method;
    int width, height, streams;
    glcv_engine_mode engine;          /* in use */
    glcv_segment *seg;                /* eth: all streams */
    glcv_segment_params seg_resolved; /* eth: the resolved parameters of stream 0 */
    glcv_bgsub *bgsub;                /* vsam, diff2, diff3: all streams */
    glcv_bgsub_params bgsub_resolved;
    int learning;                     /* learned frame sets since learn_begin */
    glcv_context *ctx;                /* the context the objects live in (the first group's: the caller's) */
    int first, total;                 /* this group's first input, and all the inputs */
    int groups;                       /* 1, or the GPUs the inputs are spread over */
    int download;                     /* vsam, diff2, diff3: each set's masks downloaded as made */
    struct cli_subtractor *others[CLI_MAX_GPUS - 1];
} cli_subtractor;

/* Creates the headless OpenGL context as cli_segmenter_create does (none for the cpu engine; auto
 * falls back to the CPU), the method's object(s) and, unless quiet, prints the engine line. On
 * error the caller still owns *ctx and *out (cli_subtractor_destroy). Prints the error. */
int cli_subtractor_create(const cli_method *m, const cli_args *args, int width, int height, int streams, int timing,
                          int quiet, const glcv_logger *logger, glcv_context **ctx, cli_subtractor **out);

/* As cli_subtractor_create, with the inputs spread over `gpus` GPUs in groups of consecutive
 * inputs, one context (the EGL device of CUDA device g) and one object per group; every call below
 * then works on all groups, each GPU's set queued before any is waited for. *ctx is the first
 * group's context, current on return. With fewer GPUs than asked for, contexts share one. */
int cli_subtractor_create_gpus(const cli_method *m, const cli_args *args, int width, int height, int streams, int gpus,
                               int timing, int quiet, const glcv_logger *logger, glcv_context **ctx,
                               cli_subtractor **out);

/* The same in the GL context that is current (or the CPU), with `engine` instead of --engine's.
 * `download` (vsam, diff2, diff3): every set's masks are downloaded as soon as they are made,
 * overlapped with the next set's work (glcv_bgsub_params.download), for a caller that reads them
 * one set behind (cli_subtractor_read_masks_age 1). */
int cli_subtractor_make(const cli_method *m, const cli_args *args, int width, int height, int streams, int timing,
                        int download, glcv_engine_mode engine, const glcv_logger *logger, cli_subtractor **out);

/* Destroys the objects (in their context); accepts &NULL. */
void cli_subtractor_destroy(cli_subtractor **sub);

/* Learning: begin; add a frame set (frames[0..streams-1], one per stream) N times; end. eth: the
 * segmenter's learning per stream (the background and the calibration); the others: B and T
 * (glcv_bgsub_learn_*). learn_end with `report` prints "glcv: background learned from N frames:
 * <description>" to stderr (eth with several streams: a line per input, each calibrated on its
 * own frames). Library errors are
 * returned (begin, add) or printed (end). */
glcv_status cli_subtractor_learn_begin(cli_subtractor *sub);
glcv_status cli_subtractor_learn_add(cli_subtractor *sub, const glcv_image *frames);
int cli_subtractor_learn_end(cli_subtractor *sub, int count, int report);

/* Learns from image files, one a frame set of a one-stream subtractor: begin, each file loaded as
 * RGB8 and added (a step of `bar`, which may be NULL), end (with `report`, its line). Prints the
 * error. */
int cli_subtractor_learn_files(cli_subtractor *sub, char *const *paths, int count, const glcv_logger *logger,
                               cli_progress *bar, int report);

/* Sets every stream's background to `background`: eth sets it; the others learn from this one
 * image (B becomes it, T min_threshold). Prints the error, naming `what`. */
int cli_subtractor_set_background(cli_subtractor *sub, const glcv_image *background, const char *what);

/* Processes a frame set (frames[0..streams-1]); with `wait` returns when the GPU is done (with
 * several GPUs, the last one; reading the masks waits for the others). */
glcv_status cli_subtractor_frames(cli_subtractor *sub, const glcv_image *frames, int wait);

/* Processes a frame set given as a GL_TEXTURE_2D_ARRAY (layer i = stream i, RGBA8), as
 * glcv_bgsub_frames_texture / glcv_segment_frames_texture; one group (one GPU) only. */
glcv_status cli_subtractor_frames_texture(cli_subtractor *sub, unsigned int texture, int wait);

/* Reads the newest set's masks into masks[0..streams-1] (GRAY8, the frames' size). */
glcv_status cli_subtractor_read_masks(cli_subtractor *sub, glcv_image *masks);

/* As cli_subtractor_read_masks, of the set `age` (0..1) sets before the newest: age 1 only where
 * cli_subtractor_reads_behind (else STATE). */
glcv_status cli_subtractor_read_masks_age(cli_subtractor *sub, glcv_image *masks, int age);

/* As cli_subtractor_read_masks_age, without a copy: masks[i] become views of the masks in the
 * subtractor's memory (GRAY8, read-only), valid until the next call that processes a set or ends
 * the subtractor. Where cli_subtractor_maps (vsam, diff2, diff3); else UNSUPPORTED (eth: read them). */
glcv_status cli_subtractor_map_masks_age(cli_subtractor *sub, glcv_image *masks, int age);

/* Whether cli_subtractor_map_masks_age can map this subtractor's masks. */
int cli_subtractor_maps(const cli_subtractor *sub);

/* Whether the masks can be read one set behind (made with `download`: vsam, diff2, diff3). */
int cli_subtractor_reads_behind(const cli_subtractor *sub);

/* Reads every stream's background into out[0..streams-1] (RGB8 or RGBA8, the frames' size):
 * eth's background, vsam's B; diff2 and diff3 keep none: black. */
glcv_status cli_subtractor_read_backgrounds(cli_subtractor *sub, glcv_image *out);

/* The per-pass GPU times of the last set (as glcv_segment_timings). */
glcv_status cli_subtractor_timings(cli_subtractor *sub, glcv_timing *out, int capacity, int *count, int wait);

/* The method and its resolved parameters, e.g. "Ts 310 Odc 5800 B1 2 B2 200, 8 iterations, adapt
 * off" (eth: cli_segmenter_describe) or "vsam: alpha 0.92 c 3 min threshold 20, colour, single
 * pass". */
void cli_subtractor_describe(const cli_subtractor *sub, char *out, size_t size);

#endif
