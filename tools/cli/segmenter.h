/* The segmenter's options and set-up that 'glcv segment' and 'glcv eval' share: the paper's
 * parameters on the command line, the headless context, the engine line, learning the background
 * from files. */
#ifndef GLCV_TOOLS_SEGMENTER_H
#define GLCV_TOOLS_SEGMENTER_H

#include "cli.h"

#include <float.h>
#include <stdint.h>

/* The segmenter's parameters as given; zero means the library's default (see cli_segmenter_create
 * for explicit zeros). */
typedef struct cli_segmenter {
    double ts, odc, b1, b2, adapt;
    int iterations;
    uint64_t seed;
    glcv_engine_mode engine; /* DEFAULT: auto */
} cli_segmenter;

/* The option table rows of the parameters: --Ts --Odc --B1 --B2 --iterations --seed --adapt
 * --engine, into the cli_segmenter at `s`. */
#define CLI_SEGMENTER_OPTIONS(s)                                                                    \
    {"--Ts", NULL, &(s)->ts, .kind = CLI_REAL, .max = FLT_MAX},                                     \
    {"--Odc", NULL, &(s)->odc, .kind = CLI_REAL, .max = FLT_MAX},                                   \
    {"--B1", NULL, &(s)->b1, .kind = CLI_REAL, .open_min = 1, .max = FLT_MAX},                      \
    {"--B2", NULL, &(s)->b2, .kind = CLI_REAL, .open_min = 1, .max = FLT_MAX},                      \
    {"--iterations", NULL, &(s)->iterations, .kind = CLI_INT, .max = 1000},                         \
    {"--seed", NULL, &(s)->seed, .kind = CLI_UINT, .umax = UINT64_MAX},                             \
    {"--adapt", NULL, &(s)->adapt, .kind = CLI_REAL, .max = 1.0},                                   \
    {"--engine", NULL, &(s)->engine, .kind = CLI_ENGINE, .choices = cli_gl_engines}

/* Creates the headless OpenGL context (not for the cpu engine; auto without one falls back to
 * the CPU engine and says so) and a width x height segmenter with the parameters of `s` (those
 * given as 0 on the command line, per `args`, through the setters), reads its resolved
 * parameters into *resolved and, unless quiet, prints the engine line "glcv: engine E on
 * <context | CPU>" to stderr. On error the caller still owns *ctx and *seg (and destroys them). */
int cli_segmenter_create(const cli_segmenter *s, const cli_args *args, int width, int height, int timing, int quiet,
                         const glcv_logger *logger, glcv_context **ctx, glcv_segment **seg,
                         glcv_segment_params *resolved);

/* Learns the background as the per-pixel mean of the files (glcv_segment_learn_*; each file a
 * step of `bar`, which may be NULL), then reads the parameters that learning calibrated into
 * *resolved. Prints the error. */
int cli_segmenter_learn(glcv_segment *seg, char *const *paths, int count, const glcv_logger *logger, cli_progress *bar,
                        glcv_segment_params *resolved);

#endif
