/* The segmenter's options and set-up that 'glcv segment', 'glcv eval' and glcv-demo share: the
 * parameters on the command line and their help, the preset (--paper-defaults), the headless
 * context, the engine line, the end of learning. */
#ifndef GLCV_TOOLS_SEGMENTER_H
#define GLCV_TOOLS_SEGMENTER_H

#include "cli.h"

#include <stddef.h>
#include <stdint.h>

/* The segmenter's parameters as given; zero means the library's default for the preset (see
 * cli_segmenter_zeros for explicit zeros). */
typedef struct cli_segmenter {
    double ts, odc, b1, b2, adapt;
    int iterations;
    uint64_t seed;
    glcv_engine_mode engine; /* DEFAULT: auto */
    int paper;               /* --paper-defaults: GLCV_SEGMENT_PAPER instead of CALIBRATED */
} cli_segmenter;

/* The option table rows of the parameters: --Ts --Odc --B1 --B2 --iterations --seed --adapt
 * --engine --paper-defaults, into the cli_segmenter at `s`. Ts, Odc, B1 and B2 in the library's
 * range (up to 1e9, glcv/segment.h). */
#define CLI_SEGMENTER_OPTIONS(s)                                                                    \
    {"--Ts", NULL, &(s)->ts, .kind = CLI_REAL, .max = 1e9},                                         \
    {"--Odc", NULL, &(s)->odc, .kind = CLI_REAL, .max = 1e9},                                       \
    {"--B1", NULL, &(s)->b1, .kind = CLI_REAL, .open_min = 1, .max = 1e9},                          \
    {"--B2", NULL, &(s)->b2, .kind = CLI_REAL, .open_min = 1, .max = 1e9},                          \
    {"--iterations", NULL, &(s)->iterations, .kind = CLI_INT, .max = 1000},                         \
    {"--seed", NULL, &(s)->seed, .kind = CLI_UINT, .umax = UINT64_MAX},                             \
    {"--adapt", NULL, &(s)->adapt, .kind = CLI_REAL, .max = 1.0},                                   \
    {"--engine", NULL, &(s)->engine, .kind = CLI_ENGINE, .choices = cli_gl_engines},               \
    {"--paper-defaults", NULL, &(s)->paper, .kind = CLI_FLAG}

/* The help of those options but --engine, for the help texts of the programs that take them:
 * the defaults of both presets. */
#define CLI_SEGMENTER_HELP                                                                          \
    "segmenter parameters (the paper's symbols). Defaults in brackets: first the calibrated\n"      \
    "ones, then the paper's (--paper-defaults). Learning a background (the per-pixel median of\n"   \
    "up to 16 of the learned frames) measures the scene's noise on those frames: its level g,\n"    \
    "and a factor per pixel that raises the thresholds only where the background moves by\n"       \
    "itself (water, leaves, flicker). The parameters not given are set from g; given ones are\n"    \
    "kept. Before any learning (a background given as an image) they are those for g = 50:\n"      \
    "Ts 3000, B1 = B2 = 500.\n"                                                                     \
    "  --Ts F             static threshold on the colinearity measure D^2, >= 0 [60 g | 310]\n"     \
    "  --Odc F            darkness-compensation offset, >= 0 [100000 | 5800]\n"                     \
    "  --B1 F             MRF compactness of a frame's first iteration, > 0 [10 g | 2]\n"            \
    "  --B2 F             MRF compactness of the later iterations, > 0 [10 g | 200]\n"               \
    "  --iterations N     MRF iterations with B2 after the B1 iteration, 0..1000 [8]\n"               \
    "  --seed N           seed of the random order of the pixel subsets (0 = default) [0x5EED]\n"   \
    "  --adapt RATE       background adaptation where the mask says background, 0..1, 0 = off\n"    \
    "                     [0.01 | 0]\n"                                                             \
    "  --paper-defaults   the paper's values (Ts 310, Odc 5800, B1 2, B2 200) for the parameters\n" \
    "                     not given; learning takes the per-pixel mean of all learned frames and\n" \
    "                     calibrates nothing; no adaptation\n"

/* The --engine help of the commands that make their own headless context. */
#define CLI_SEGMENTER_ENGINE_HELP                                                                   \
    "  --engine E         auto, fragment, compute or cpu [auto]. The GPU engines run in a\n"       \
    "                     headless OpenGL context; when none can be created, auto falls back to\n"  \
    "                     the CPU engine (and says so), fragment and compute fail\n"

/* The library's parameters for the options of `s`, width and height 0 (zeros: the preset's
 * defaults; see cli_segmenter_set_zeros). */
glcv_segment_params cli_segmenter_params(const cli_segmenter *s);

/* Zero means "default" in glcv_segment_params: the parameters given as 0 on the command line
 * (per `args`), as a set of bits for cli_segmenter_set_zeros. */
unsigned cli_segmenter_zeros(const cli_segmenter *s, const cli_args *args);

/* Sets the parameters in `zeros` to 0 through the setters. */
glcv_status cli_segmenter_set_zeros(glcv_segment *seg, unsigned zeros);

/* "Ts T Odc O B1 B B2 B, N iterations, adapt R|off" for the resolved parameters `p`. */
void cli_segmenter_describe(const glcv_segment_params *p, char *out, size_t size);

/* The headless OpenGL context for `engine` (DEFAULT is taken as AUTO): none for the cpu engine;
 * when none can be created, auto falls back to the CPU engine (*engine becomes CPU) and says so,
 * fragment and compute fail. Prints the error. */
int cli_context_for_engine(glcv_engine_mode *engine, const glcv_logger *logger, glcv_context **ctx);

/* The engine line on stderr: "glcv: engine E on <context | CPU>". */
void cli_print_engine(glcv_engine_mode engine, glcv_context *ctx);

/* A width x height segmenter of `streams` streams with the parameters of `s` and `engine`, in the
 * current context (if any): cli_segmenter_create without the context and the engine line. */
int cli_segmenter_make(const cli_segmenter *s, const cli_args *args, int width, int height, int streams, int timing,
                       glcv_engine_mode engine, const glcv_logger *logger, glcv_segment **seg,
                       glcv_segment_params *resolved);

/* Creates the headless OpenGL context (not for the cpu engine; auto without one falls back to
 * the CPU engine and says so) and a width x height segmenter with the parameters of `s` (those
 * given as 0 on the command line, per `args`, through the setters), reads its resolved
 * parameters into *resolved and, unless quiet, prints the engine line "glcv: engine E on
 * <context | CPU>" to stderr. On error the caller still owns *ctx and *seg (and destroys them). */
int cli_segmenter_create(const cli_segmenter *s, const cli_args *args, int width, int height, int timing, int quiet,
                         const glcv_logger *logger, glcv_context **ctx, glcv_segment **seg,
                         glcv_segment_params *resolved);

/* The end of learning for a caller that added the `count` frames (sets) itself:
 * glcv_segment_learn_end, the parameters (of stream 0) into *resolved and, with `report`, prints
 * them to stderr: "glcv: background learned from N frames: <parameters> (preset calibrated |
 * paper)", after "glcv: input K:" (K = first + the stream) when there are `total` > 1 inputs.
 * Prints the error. */
int cli_segmenter_learn_end(glcv_segment *seg, int count, int report, int first, int total,
                            glcv_segment_params *resolved);

#endif
