/* Media sources on the command line, shared by 'glcv segment', 'glcv track' and glcv-demo: the
 * options --camera, --video, --frames, --sequence, --lavfi (and the demo's --synthetic), --size,
 * --rate, --camera-format, --mode, --loop / --no-loop, --max-frames and --stall-timeout; turning them into a
 * glcv_media, and reading its frames. Media input exists only when glcv was built with FFmpeg
 * (GLCV_HAVE_FFMPEG); without it the options still parse, and opening a source fails with a
 * message that says so (exit status 1). Ctrl-C handling for commands that read until the end
 * of a source is here too. */
#ifndef GLCV_TOOLS_SOURCE_H
#define GLCV_TOOLS_SOURCE_H

#include "cli.h"

#include <glcv/media.h>

#include <stdatomic.h>

/* The source options in the order of cli_source.location; SYNTHETIC is the demo's --synthetic. */
enum {
    CLI_SOURCE_CAMERA,
    CLI_SOURCE_VIDEO,
    CLI_SOURCE_FRAMES,
    CLI_SOURCE_SEQUENCE,
    CLI_SOURCE_LAVFI,
    CLI_SOURCE_SYNTHETIC,
    CLI_SOURCE_KINDS
};

/* The source options as given. Initialise with CLI_SOURCE_INIT. */
typedef struct cli_source {
    const char *location[CLI_SOURCE_KINDS]; /* per source option: its value (--synthetic: none) */
    int given[CLI_SOURCE_KINDS];            /* per source option: how often it was given (at most once) */
    int synthetic;                          /* the demo's --synthetic flag */
    cli_size size;                          /* --size; 0x0: not given */
    double rate;                            /* --rate; 0: not given */
    int camera_format;                      /* index in cli_camera_formats; -1: not given */
    int mode;                               /* index in cli_media_modes; -1: not given */
    int loop;                               /* 1 --loop, 0 --no-loop, -1: neither */
    int max_frames;                         /* --max-frames; 0: not given */
    double stall_timeout;                   /* --stall-timeout; 0: not given */
} cli_source;

#define CLI_SOURCE_INIT {.camera_format = -1, .mode = -1, .loop = -1}

extern const char *const cli_camera_formats[]; /* "yuyv", "mjpeg" */
extern const char *const cli_media_modes[];    /* "live", "every-frame" */

/* The option table rows of the sources (without the demo's --synthetic) and of the input options,
 * into the cli_source at `s`. */
#define CLI_SOURCE_OPTIONS(s)                                                                       \
    {"--camera", NULL, &(s)->location[CLI_SOURCE_CAMERA], .kind = CLI_STRING, .what = "device",    \
     .count = &(s)->given[CLI_SOURCE_CAMERA], .max_count = 1},                                      \
    {"--video", NULL, &(s)->location[CLI_SOURCE_VIDEO], .kind = CLI_STRING, .what = "file name",   \
     .count = &(s)->given[CLI_SOURCE_VIDEO], .max_count = 1},                                       \
    {"--frames", NULL, &(s)->location[CLI_SOURCE_FRAMES], .kind = CLI_STRING, .what = "folder",    \
     .count = &(s)->given[CLI_SOURCE_FRAMES], .max_count = 1},                                      \
    {"--sequence", NULL, &(s)->location[CLI_SOURCE_SEQUENCE], .kind = CLI_STRING, .what = "pattern", \
     .count = &(s)->given[CLI_SOURCE_SEQUENCE], .max_count = 1},                                    \
    {"--lavfi", NULL, &(s)->location[CLI_SOURCE_LAVFI], .kind = CLI_STRING, .what = "graph",       \
     .count = &(s)->given[CLI_SOURCE_LAVFI], .max_count = 1},                                       \
    {"--size", NULL, &(s)->size, .kind = CLI_SIZE},                                                 \
    {"--rate", NULL, &(s)->rate, .kind = CLI_REAL, .min = 0.1, .max = 1000},                        \
    {"--camera-format", NULL, &(s)->camera_format, .kind = CLI_CHOICE, .choices = cli_camera_formats, \
     .any_case = 1, .what = "a camera format"},                                                     \
    {"--mode", NULL, &(s)->mode, .kind = CLI_CHOICE, .choices = cli_media_modes, .what = "a mode"}, \
    {"--loop", NULL, &(s)->loop, .kind = CLI_FLAG},                                                 \
    {"--no-loop", NULL, &(s)->loop, .kind = CLI_FLAG, .clear = 1},                                  \
    {"--max-frames", NULL, &(s)->max_frames, .kind = CLI_INT, .min = 1, .max = 1000000000},         \
    {"--stall-timeout", NULL, &(s)->stall_timeout, .kind = CLI_REAL, .min = 0.01, .max = 1e6}

/* The source option given (CLI_SOURCE_CAMERA ..), or -1 for none. A usage error when two were
 * given ("--video, --lavfi: only one source may be given"); *kind is then -1 too. */
int cli_source_kind(const cli_source *s, int *kind);

/* The media parameters of the source options: the source of `kind` (-1: the default source) and
 * its location, size, rate, camera format and mode as given, `format`, loop as given or else
 * `default_loop`, and `logger`. */
glcv_media_params cli_source_media_params(const cli_source *s, int kind, glcv_pixel_format format, int default_loop,
                                          const glcv_logger *logger);

/* The media source of a command that takes its frames either as FRAME arguments (image files and
 * folders, or one video file) or from a source option: the source option given (CLI_SOURCE_*),
 * CLI_SOURCE_VIDEO when the only FRAME is a video file (cli_is_video_path), or -1 when the FRAMEs
 * are images (or none were given). Usage errors: two sources; a source option and FRAMEs; a video
 * file among other FRAMEs; --rate, --camera-format, --mode, --loop or --no-loop without a media
 * source. */
int cli_source_of_args(const cli_source *s, const cli_args *args, int *kind);

/* Opens the media source `kind` of cli_source_of_args for a command that processes every frame:
 * RGB8 frames, every frame in order (EVERY_FRAME) unless --mode says otherwise or it is a camera,
 * no loop unless --loop, the location of a video file FRAME. Unless quiet, prints "glcv: input
 * <what was opened>" on stderr. *width and *height get the frames' size. Prints the error. */
int cli_source_open_args(const cli_source *s, const cli_args *args, int kind, int quiet, const glcv_logger *logger,
                         glcv_media **out, int *width, int *height);

/* Whether a path names a video file by its extension (.avi .mp4 .mkv .mov .webm .mpg .mpeg .m4v
 * .ts .flv, any case). */
int cli_is_video_path(const char *path);

/* Opens the source (glcv_media_create). Prints the error in one line: the library's reason
 * ("cannot open video 'x.avi': No such file or directory") when its logger is a cli_logger,
 * else "cannot open the input: <status>"; or that this glcv has no media input. */
int cli_source_open(const glcv_media_params *params, glcv_media **out);

/* Closes a source opened by cli_source_open (glcv_media_destroy); accepts &NULL. */
void cli_source_close(glcv_media **media);

/* Reads the next frame of `media` into `out` (allocated by the caller, the media's size, any
 * format glcv_image_convert writes): waits for it, but gives up waiting when cli_interrupted() or
 * `*stop` (may be NULL) turns true. *index gets the frame's index in the source; *end is set
 * (nothing read) at the end of the stream or when it gave up. Returns GLCV_OK, or the error of
 * glcv_media_read (the input stopped) or of the copy; the caller reports it. */
glcv_status cli_source_read(glcv_media *media, glcv_image *out, const atomic_int *stop, int64_t *index, int *end);

/* ---- Ctrl-C and SIGTERM ---------------------------------------------------------------------------- */

/* From now on the first SIGINT or SIGTERM only sets a flag (cli_interrupted), so that a command can
 * stop reading and finish what it started (its files whole, none half-written); a second one ends
 * the program as usual. */
void cli_interrupt_catch(void);

/* Whether SIGINT or SIGTERM came since cli_interrupt_catch. May be called from any thread. */
int cli_interrupted(void);

/* The signal that came (SIGINT, SIGTERM), 0 none: the program's exit status is 128 + it. */
int cli_interrupt_signal(void);

/* Puts SIGINT's and SIGTERM's handling back as they were before cli_interrupt_catch. */
void cli_interrupt_release(void);

#endif
