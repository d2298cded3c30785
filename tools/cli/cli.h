/* The part of the glcv tools that every command shares: one option parser (a table of option specs
 * per command), messages in one style, and small helpers (logger, clock, paths, image files,
 * progress bar). glcv-demo uses it too. Internal to the tools: public glcv API only.
 *
 * Messages: errors are "<program>: error: <message>" on stderr; usage errors add
 * " (see '<program> <command> --help')". Exit status: 0 ok, 1 runtime failure, 2 usage error. */
#ifndef GLCV_TOOLS_CLI_H
#define GLCV_TOOLS_CLI_H

#include <glcv/glcv.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* Exit status of a command. CLI_HELP is no exit status: cli_parse printed the help, and the
 * command returns it so that the program exits 0 (cli_exit_status). CLI_INTERRUPTED: Ctrl-C
 * stopped a command that then finished what it had started (128 + SIGINT, as shells report it). */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2, CLI_HELP = 3, CLI_INTERRUPTED = 130 };

/* ---- the program and its commands ------------------------------------------------------------- */

/* A command: `run` gets the arguments after the command's name. */
typedef struct cli_command {
    const char *name;    /* "segment"; NULL for a program without commands (glcv-demo) */
    const char *summary; /* one line for 'glcv --help' */
    const char *help;    /* the text --help prints */
    int (*run)(int argc, char **argv);
} cli_command;

/* Names the program ("glcv", "glcv-demo") and the command that runs, for messages and --help. */
void cli_start(const char *program, const cli_command *command);

/* The exit status for a command's return value (CLI_HELP -> 0). */
int cli_exit_status(int rc);

/* ---- messages ----------------------------------------------------------------------------------- */

/* "<program>: error: <message>" on stderr. */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);

/* "<program>: warning: <message>" on stderr. */
void cli_warning(const char *fmt, ...) CLI_PRINTF(1, 2);

/* "<program>: error: <message> (see '<program> <command> --help')"; returns CLI_USAGE. */
int cli_usage(const char *fmt, ...) CLI_PRINTF(1, 2);

/* Reports a failed library call in one line; returns CLI_FAIL. When the library logged why
 * through a cli_logger on this thread (and --verbose did not print it already), the line is its
 * message without the module's name: alone when it names `what` (the file, usually), else
 * "<what>: <message>". Otherwise "<program>: error: <what>: <status text>". */
int cli_lib_error(const char *what, glcv_status status);
/* One error line from `what` and the library's message `cause` (its module prefix dropped): the
 * cause alone when it names `what` already. Returns CLI_FAIL. */
int cli_report_cause(const char *what, const char *cause);

/* As cli_lib_error, but the library's message, when there is one, stands alone: `what` is only
 * the context of the status text ("cannot open the input: input/output error"). */
int cli_lib_failure(const char *what, glcv_status status);

/* "<program>: error: out of memory"; returns CLI_FAIL. */
int cli_out_of_memory(void);

/* ---- options ------------------------------------------------------------------------------------ */

/* What an option takes, and where its value goes. */
typedef enum cli_kind {
    CLI_FLAG,   /* no value: sets an int to 1 (to 0 with .clear) */
    CLI_INT,    /* an integer in min..max, into an int */
    CLI_UINT,   /* a non-negative integer, decimal or 0x hexadecimal, at most .umax, into a uint64_t */
    CLI_REAL,   /* a finite number in min..max (min excluded with .open_min), into a double */
    CLI_STRING, /* a non-empty text, into a const char * */
    CLI_CHOICE, /* one of .choices, its index into an int */
    CLI_ENGINE, /* one of .choices, engine names (cli_gl_engines, cli_cuda_engines), into a glcv_engine_mode */
    CLI_RECT,   /* x,y,w,h: four integers, w and h >= 1, into a glcv_rect */
    CLI_SIZE    /* WxH, both 1..CLI_MAX_SIDE, into a cli_size */
} cli_kind;

enum { CLI_MAX_SIDE = 16384, CLI_MAX_OPTIONS = 64 };

typedef struct cli_size {
    int width, height;
} cli_size;

/* One option of a command's table, written {"--name", "-n" or NULL, &value, .kind = CLI_X, ...};
 * the table ends with an entry whose name is NULL. -h and --help are every command's: the parser
 * prints the command's help. Options may be written --name VALUE or --name=VALUE. Fields left
 * zero take their defaults. */
typedef struct cli_option {
    const char *name;  /* "--name" */
    const char *alias; /* a second spelling ("-o"), or NULL */
    void *value;       /* where the value goes, of the type the kind says; for a repeatable
                          option an array of max_count of them */
    cli_kind kind;
    double min, max;   /* CLI_INT, CLI_REAL: the range; CLI_RECT: of x and y (0, 0: +-1000000) */
    int open_min;      /* CLI_REAL: min itself is out of range */
    int open_max;      /* CLI_REAL: max itself is out of range */
    uint64_t umax;     /* CLI_UINT: the largest value */
    int clear;         /* CLI_FLAG: store 0 instead of 1 */
    const char *const *choices; /* CLI_CHOICE, CLI_ENGINE: the names, NULL-terminated */
    int any_case;      /* CLI_CHOICE: names match in any case */
    const char *what;  /* CLI_CHOICE: "a metric"; CLI_STRING: "file name" (for messages) */
    int bare;          /* CLI_INT: nonzero: the value may be left out, and --name alone stores
                          `bare`; --name N then takes N only when it is a plain number */
    int *count;        /* repeatable: how many values the array holds (NULL: the last one wins) */
    int max_count;     /* repeatable: the array's size */
} cli_option;

/* The --quiet (-q) and --verbose (-v) flags of a command, as two entries of its option table. */
#define CLI_QUIET_VERBOSE_OPTIONS(quiet, verbose)                                                   \
    {"--quiet", "-q", (quiet), .kind = CLI_FLAG}, {"--verbose", "-v", (verbose), .kind = CLI_FLAG}

/* The engines of the GL modules (the segmenter) and of the CUDA modules (tracker, matcher,
 * correlator), as CLI_ENGINE choices. */
extern const char *const cli_gl_engines[];
extern const char *const cli_cuda_engines[];

/* What cli_parse found besides the options' values. */
typedef struct cli_args {
    char **items; /* the positional arguments, in order (argv's own strings) */
    int count;
    const cli_option *options;
    unsigned char given[CLI_MAX_OPTIONS]; /* per entry of `options`: given on the command line */
} cli_args;

/* Parses argv[0..argc-1] (the arguments after the command's name) against `options`: stores each
 * option's value, and moves the positional arguments (everything that does not start with '-',
 * "-" itself, and everything after "--") to the front of argv, in order. Returns CLI_OK, or
 * CLI_USAGE after printing what is wrong (an unknown option, a missing value, a value out of
 * range or unparsable, named with its option), or CLI_HELP after printing the command's help when
 * -h or --help was given and nothing was wrong. */
int cli_parse(const cli_option *options, int argc, char **argv, cli_args *args);

/* Whether the option whose value lives at `value` was given (0 when `args` is NULL: nothing given). */
int cli_given(const cli_args *args, const void *value);

/* A usage error unless the command got between min and max positional arguments: "unexpected
 * argument '<the first too many>'" or "give <what>" ("give two files, MASK and TRUTH"). */
int cli_expect_args(const cli_args *args, int min, int max, const char *what);

/* cli_parse, then (when it returned CLI_OK) cli_expect_args: what the first of them that did
 * not return CLI_OK returned, else CLI_OK. */
int cli_parse_expecting(const cli_option *options, int argc, char **argv, cli_args *args, int min, int max,
                        const char *what);

/* ---- helpers ------------------------------------------------------------------------------------ */

/* Logs to stderr: debug messages when verbose, else warnings and errors. Without verbose, the
 * first error the library logs on the main thread is held for the report that follows
 * (cli_lib_error), so that a failure is one line; a held message is printed before anything else
 * the tool or the library prints, and at exit, if no report took it. */
glcv_logger cli_logger(int verbose);

/* Monotonic clock in seconds. */
double cli_now(void);

/* Sorts `values` and returns their median (the mean of the middle two for an even count); 0 for
 * none. */
double cli_median(double *values, size_t count);

/* A growable list of owned strings. */
typedef struct cli_paths {
    char **items;
    int count, capacity;
} cli_paths;

/* Appends a copy of `text`; CLI_OK or prints "out of memory" and returns CLI_FAIL. */
int cli_paths_add(cli_paths *list, const char *text);
void cli_paths_free(cli_paths *list);

/* "<dir>/<name><suffix>" (no doubled '/') in new memory, or NULL when out of memory. */
char *cli_path_join(const char *dir, const char *name, const char *suffix);

/* The file name of a path without its folders and its last extension, in new memory (NULL: out of
 * memory). */
char *cli_path_stem(const char *path);

/* "<dir>/<stem of path><suffix>", in new memory (NULL: out of memory). */
char *cli_output_path(const char *dir, const char *path, const char *suffix);

/* Checks that no two paths have the same stem, so that the outputs named "<stem><suffix>" after
 * them are distinct. Prints the error: "<a> and <b> would both write <stem><suffix>". */
int cli_check_distinct_stems(char *const *paths, int count, const char *suffix);

/* A number of pixels for messages: "76800 pixels" below 0.1 Mpixel, else "67.1 Mpixel". */
void cli_format_pixels(double pixels, char *text, size_t size);

/* Whether a path is a regular file. */
int cli_is_file(const char *path);

/* The digits of the numbers in names of `count` files: 4, more for more than 10000. */
int cli_digits_for(int count);

/* mkdir -p, then checks that the folder is writable. Prints the error. */
int cli_make_dir(const char *dir);

/* ---- image files ------------------------------------------------------------------------------- */

/* Whether an image file is one that glcv synth or a CDnet folder keeps beside the frames, by its
 * name (any case): background.*, dynamic.*, ROI.*, truth_*, gt_* and gt<digit>*. */
int cli_is_companion_image(const char *path);

/* Appends the arguments to `out`: files as given, folders as their image files sorted by name
 * (glcv_image_list_folder) without the companions of cli_is_companion_image, unless the folder
 * holds nothing else. Prints the error (a missing path, a folder without images). */
int cli_collect_images(char *const *args, int count, cli_paths *out);

/* Checks that a path is a regular file and reads its image size and channel count. Prints the
 * error, in one line (the library's reason; `logger` may be NULL): also for an image above the
 * limit of glcv_image_set_max_pixels, refused here before it is decoded. */
int cli_probe_image(const char *path, const glcv_logger *logger, int *width, int *height, int *channels);

/* Probes `path` and checks that it is width x height, the size of `reference`. Prints the error:
 * "<path> is WxH but <reference> is WxH". */
int cli_check_size(const char *path, const char *reference, int width, int height, const glcv_logger *logger);

/* The size of paths[0], and cli_check_size of every other path against it. */
int cli_common_size(char *const *paths, int count, const glcv_logger *logger, int *width, int *height);

/* Frees *out, then loads `path` as RGB8 into it. Prints the error. */
int cli_load_rgb(const char *path, const glcv_logger *logger, glcv_image *out);

/* A line of a ground-truth file (OTB's groundtruth_rect.txt): four finite numbers x, y, w, h
 * separated by commas, tabs or blanks, into v. Returns 1 for a box, 0 for an empty line, -1 for
 * anything else. Changes `line`. */
int cli_parse_box_line(char *line, double v[4]);

/* A box written x,y,w,h (integers, w and h >= 1), as --roi takes it; `name` begins the usage error. */
int cli_parse_rect(const char *name, const char *text, glcv_rect *out);

/* ---- progress bar (stderr, only on a terminal) --------------------------------------------------- */

typedef struct cli_progress {
    int enabled;
    size_t total, done;    /* total 0: not known (a count instead of a bar) */
    const char *rate_unit; /* "frames": also "<steps per second> frames/s"; NULL: no rate */
    double start, last_draw;
    int width; /* characters drawn last */
} cli_progress;

/* A bar for `total` steps: shown when not quiet, stderr is a terminal and there are enough steps. */
cli_progress cli_progress_start(int quiet, size_t total);

/* A bar that also shows the steps per second since it started, as "<rate> <unit>/s"; for an
 * unknown `total` (0) it shows the count of steps done instead of a bar. */
cli_progress cli_progress_start_rate(int quiet, size_t total, const char *unit);

/* Draws the bar at `done` steps (at most ten times a second, and always at the last step). */
void cli_progress_show(cli_progress *bar, size_t done);

/* One more step done (drawn before it is worked on, as "done of total"). */
void cli_progress_step(cli_progress *bar);

/* Clears the bar's line so that a message can be printed on stderr; the next step draws it
 * again. */
void cli_progress_clear(cli_progress *bar);

/* Clears the bar's line; safe to call more than once. */
void cli_progress_end(cli_progress *bar);

/* The per-pixel, per-channel median (glcv_image_median) of the RGB8 image files paths[k * step]
 * for k = 0, 1, ... while k * step < count, with step the smallest that takes at most max_frames of
 * them, into `out` (RGB8, allocated, their size). Every file is read twice, each read a step of
 * `bar` (may be NULL). *used (may be NULL) receives the number of frames taken. Prints the
 * error. */
int cli_median_of_files(char *const *paths, int count, int max_frames, const glcv_logger *logger, cli_progress *bar,
                        glcv_image *out, int *used);

#endif
