/* Media sources on the command line; see source.h. */
#define _POSIX_C_SOURCE 200809L

#include "source.h"

#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>
#include <strings.h>

enum { READ_POLL_MS = 100 };

const char *const cli_camera_formats[] = {"yuyv", "mjpeg", NULL};
const char *const cli_media_modes[] = {"live", "every-frame", NULL};

/* Per source option: its name and its kind of glcv_media source. */
static const struct {
    const char *name;
    glcv_media_source source;
} source_kinds[CLI_SOURCE_KINDS] = {
    [CLI_SOURCE_CAMERA] = {"--camera", GLCV_MEDIA_CAMERA},
    [CLI_SOURCE_VIDEO] = {"--video", GLCV_MEDIA_VIDEO},
    [CLI_SOURCE_FRAMES] = {"--frames", GLCV_MEDIA_FRAMES_DIR},
    [CLI_SOURCE_SEQUENCE] = {"--sequence", GLCV_MEDIA_IMAGE_SEQUENCE},
    [CLI_SOURCE_LAVFI] = {"--lavfi", GLCV_MEDIA_LAVFI},
    [CLI_SOURCE_SYNTHETIC] = {"--synthetic", GLCV_MEDIA_SYNTHETIC},
};

int cli_source_kind(const cli_source *s, int *kind)
{
    *kind = -1;
    for (int k = 0; k < CLI_SOURCE_KINDS; k++) {
        if (!s->given[k])
            continue;
        if (*kind >= 0) {
            int first = *kind;
            *kind = -1;
            return cli_usage("%s, %s: only one source may be given", source_kinds[first].name, source_kinds[k].name);
        }
        *kind = k;
    }
    return CLI_OK;
}

glcv_media_params cli_source_media_params(const cli_source *s, int kind, glcv_pixel_format format, int default_loop,
                                          const glcv_logger *logger)
{
    static const glcv_media_camera_format camera_format_values[] = {GLCV_MEDIA_CAMERA_YUYV, GLCV_MEDIA_CAMERA_MJPEG};
    static const glcv_media_mode mode_values[] = {GLCV_MEDIA_LIVE, GLCV_MEDIA_EVERY_FRAME};
    glcv_media_params p = GLCV_MEDIA_PARAMS(.width = s->size.width, .height = s->size.height,
                                            .frame_rate = s->rate, .format = format,
                                            .loop = s->loop >= 0 ? s->loop : default_loop,
                                            .stall_timeout = s->stall_timeout, .logger = *logger);
    if (kind >= 0) {
        p.source = source_kinds[kind].source;
        p.location = s->location[kind];
    }
    if (s->camera_format >= 0)
        p.camera_format = camera_format_values[s->camera_format];
    if (s->mode >= 0)
        p.mode = mode_values[s->mode];
    return p;
}

int cli_is_video_path(const char *path)
{
    static const char *const extensions[] = {".avi", ".mp4", ".mkv", ".mov", ".webm", ".mpg",
                                             ".mpeg", ".m4v", ".ts", ".flv"};
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    if (!dot)
        return 0;
    for (size_t i = 0; i < sizeof extensions / sizeof extensions[0]; i++)
        if (strcasecmp(dot, extensions[i]) == 0)
            return 1;
    return 0;
}

static int opened(glcv_media *media, int quiet, int *width, int *height);

int cli_source_of_args(const cli_source *s, const cli_args *args, int *kind)
{
    int rc = cli_source_kind(s, kind);
    if (rc != CLI_OK)
        return rc;
    if (*kind >= 0 && args->count > 0)
        return cli_usage("give the frames either as files or with one source option, not both (got '%s')",
                         args->items[0]);
    for (int i = 0; i < args->count; i++) {
        if (!cli_is_video_path(args->items[i]))
            continue;
        if (args->count > 1)
            return cli_usage("%s: a video file must be the only input", args->items[i]);
        *kind = CLI_SOURCE_VIDEO;
    }
    const void *media_only[] = {&s->rate, &s->camera_format, &s->mode, &s->loop, &s->stall_timeout};
    const char *names[] = {"--rate", "--camera-format", "--mode", "--loop and --no-loop", "--stall-timeout"};
    for (int i = 0; i < 5 && *kind < 0; i++)
        if (cli_given(args, media_only[i]))
            return cli_usage("%s applies only to media sources (--video, --camera, --frames, --sequence, --lavfi)",
                             names[i]);
    return CLI_OK;
}

int cli_source_open_args(const cli_source *s, const cli_args *args, int kind, int quiet, const glcv_logger *logger,
                         glcv_media **out, int *width, int *height)
{
    glcv_media_params p = cli_source_media_params(s, kind, GLCV_PIXEL_RGB8, 0, logger);
    if (!s->given[CLI_SOURCE_VIDEO] && kind == CLI_SOURCE_VIDEO)
        p.location = args->items[0];
    if (s->mode < 0 && kind != CLI_SOURCE_CAMERA)
        p.mode = GLCV_MEDIA_EVERY_FRAME;
    int rc = cli_source_open(&p, out);
    return rc == CLI_OK ? opened(*out, quiet, width, height) : rc;
}

#if GLCV_HAVE_FFMPEG

/* The size of an opened source's frames, and the input line. */
static int opened(glcv_media *media, int quiet, int *width, int *height)
{
    glcv_media_params got;
    glcv_media_get_params(media, &got);
    *width = got.width;
    *height = got.height;
    if (!quiet)
        fprintf(stderr, "glcv: input %s\n", glcv_media_describe(media));
    return CLI_OK;
}

int cli_source_open(const glcv_media_params *params, glcv_media **out)
{
    glcv_status st = glcv_media_create(params, out);
    return st == GLCV_OK ? CLI_OK : cli_lib_failure("cannot open the input", st);
}

void cli_source_close(glcv_media **media)
{
    glcv_media_destroy(media);
}

glcv_status cli_source_read(glcv_media *media, glcv_image *out, const atomic_int *stop, int64_t *index, int *end)
{
    *end = 0;
    for (;;) {
        if (cli_interrupted() || (stop && atomic_load(stop))) {
            *end = 1;
            return GLCV_OK;
        }
        glcv_image frame;
        glcv_media_frame_info info = {0};
        glcv_status st = glcv_media_read(media, &frame, &info, READ_POLL_MS);
        if (st != GLCV_OK)
            return st;
        if (info.end_of_stream) {
            *end = 1;
            return GLCV_OK;
        }
        if (info.timed_out)
            continue;
        *index = info.index;
        return glcv_image_convert(&frame, out);
    }
}

#else

static int opened(glcv_media *media, int quiet, int *width, int *height)
{
    (void)media;
    (void)quiet;
    *width = *height = 0;
    return CLI_FAIL; /* never reached: nothing opens */
}

int cli_source_open(const glcv_media_params *params, glcv_media **out)
{
    (void)params;
    *out = NULL;
    cli_error("this glcv was built without media input (FFmpeg): cameras, video files and the "
              "other media sources are not available");
    return CLI_FAIL;
}

void cli_source_close(glcv_media **media)
{
    *media = NULL;
}

glcv_status cli_source_read(glcv_media *media, glcv_image *out, const atomic_int *stop, int64_t *index, int *end)
{
    (void)media;
    (void)out;
    (void)stop;
    (void)index;
    *end = 1;
    return GLCV_ERROR_UNSUPPORTED;
}

#endif

/* ---- Ctrl-C and SIGTERM --------------------------------------------------------------------------- */

static atomic_int g_interrupted; /* the signal that came, 0 none; lock-free: safe in a signal handler */
static struct sigaction g_previous[2];
static int g_catching;
static const int g_signals[2] = {SIGINT, SIGTERM};

static void on_interrupt(int signal_number)
{
    atomic_store(&g_interrupted, signal_number);
}

void cli_interrupt_catch(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sa.sa_flags = SA_RESETHAND; /* a second one ends the program */
    sigemptyset(&sa.sa_mask);
    atomic_store(&g_interrupted, 0);
    g_catching = 0;
    for (int i = 0; i < 2; i++)
        g_catching |= (sigaction(g_signals[i], &sa, &g_previous[i]) == 0) << i;
}

int cli_interrupted(void)
{
    return atomic_load(&g_interrupted) != 0;
}

int cli_interrupt_signal(void)
{
    return atomic_load(&g_interrupted);
}

void cli_interrupt_release(void)
{
    for (int i = 0; i < 2; i++)
        if (g_catching & (1 << i))
            sigaction(g_signals[i], &g_previous[i], NULL);
    g_catching = 0;
}
