/* Helpers shared by the parts of the glcv tool (demo/glcv.c, demo/glcv_track.c,
 * demo/glcv_match.c): messages, value parsing, file lists and image probing. Internal to the tool. */
#ifndef GLCV_DEMO_CLI_H
#define GLCV_DEMO_CLI_H

#include <glcv/glcv.h>

#include <stdarg.h>

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* Exit status: 0 ok, 1 runtime failure, 2 usage error. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

/* "glcv: error: <message>" on stderr. */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* Prints "glcv: error: <what>: <status text>" and returns CLI_FAIL. */
int cli_lib_error(const char *what, glcv_status status);

/* "glcv: error: <message> (see 'glcv <command> --help')" (or 'glcv --help' when command is NULL);
 * returns CLI_USAGE. */
int cli_usage(const char *command, const char *fmt, ...) CLI_PRINTF(2, 3);
int cli_vusage(const char *command, const char *fmt, va_list ap) CLI_PRINTF(2, 0);

/* Logs to stderr: debug messages when verbose, else warnings and errors. */
glcv_logger cli_logger(int verbose);

/* Monotonic clock in seconds. */
double cli_now(void);

/* qsort comparators: char * by strcmp, double ascending. */
int cli_compare_strings(const void *a, const void *b);
int cli_compare_doubles(const void *a, const void *b);

/* Whether a file name has an image extension (.png .jpg .jpeg .bmp .tga .ppm .pgm). */
int cli_is_image_name(const char *name);

/* The whole text is an integer in lo..hi; usage error (for command) otherwise. */
int cli_parse_int(const char *command, const char *name, const char *text, long lo, long hi, int *out);

/* "x,y,w,h": four integers, w and h >= 1, into v; usage error (for command) otherwise. */
int cli_parse_rect(const char *command, const char *name, const char *text, int v[4]);

/* A growable list of paths. */
typedef struct cli_paths {
    char **items;
    int count, capacity;
} cli_paths;

/* Appends "<dir>/<name>" (no doubled slash), or name when dir is NULL; 0 when out of memory. */
int cli_paths_push(cli_paths *l, const char *dir, const char *name);
void cli_paths_free(cli_paths *l);

/* Files as given; folders expanded into their image files, sorted by name (hidden files skipped).
 * Prints the error. */
int cli_collect_images(char *const *args, int n, cli_paths *out);

/* Checks that a path is a readable image file and reads its size and channel count. Prints the
 * error. */
int cli_probe_image(const char *path, const glcv_logger *logger, int *w, int *h, int *channels);

/* Frees *out, then loads path as RGB8 into it. Prints the error. */
int cli_load_rgb(const char *path, const glcv_logger *logger, glcv_image *out);

/* Loads frame `k` (0 <= k < count) of a sequence as RGB8 into `frame`; returns CLI_OK or prints
 * the error and returns CLI_FAIL. */
typedef int (*cli_frame_loader)(void *user, int k, glcv_image *frame);

/* The exact per-pixel, per-channel lower median (rank (count - 1) / 2) of `count` RGB8 frames of
 * width x height, found digit by digit with two passes of 16-bin histograms: the high nibble,
 * then the low nibble among the values with that high nibble. Memory: 36 bytes per pixel, whatever
 * the number of frames (at most 65535). Each frame is loaded twice, through `load` into `frame`.
 * Writes width * height * 3 bytes to `median`. Prints the error. */
int cli_median_rgb(int width, int height, int count, cli_frame_loader load, void *user, glcv_image *frame,
                   uint8_t *median);

#endif
