/* glcv: the command-line tool of the glcv library. The table below maps each command's name to
 * the function that runs it (tools/cli/cmd_<name>.c); 'glcv --help' lists them, 'glcv <command>
 * --help' shows a command's options. Public API only.
 * Exit status: 0 ok, 1 runtime failure, 2 usage error. */
#include "cli.h"
#include "commands.h"
#include "source.h"

#include <glcv/image.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cli_command commands[] = {
    {"segment", "segment image files, folders, videos, cameras or the built-in synthetic sequence", cmd_segment_help,
     cmd_segment},
    {"synth", "write the built-in synthetic sequence (frames, ground truth, background)", cmd_synth_help, cmd_synth},
    {"compare", "score a mask against a ground-truth mask (precision, recall, F)", cmd_compare_help, cmd_compare},
    {"eval", "score the segmenter on a CDnet-2014 video folder (recall, precision, F, PWC...)", cmd_eval_help,
     cmd_eval},
    {"info", "describe the headless OpenGL context and the engine 'auto' picks", cmd_info_help, cmd_info},
    {"track", "track objects through frames or a video with CAMSHIFT (CSV of boxes, overlays)", cmd_track_help,
     cmd_track},
    {"match", "find a template in an image (SAD, SSD, L-infinity or ZNCC; best positions, map)", cmd_match_help,
     cmd_match},
    {"correlate", "Pearson correlation of a reference image with many images", cmd_correlate_help, cmd_correlate},
    {"stream", "stream video over TCP as frame deltas to many viewers (serve), or view a stream", cmd_stream_help,
     cmd_stream},
#if GLCV_HAVE_SERVICE
    {"serve", "run a camera service from a YAML file: events to MQTT/NATS, /metrics", cmd_serve_help, cmd_serve},
#endif
};

enum { COMMAND_COUNT = sizeof commands / sizeof commands[0] };

static const char help_head[] =
    "usage: glcv <command> [options]\n"
    "\n"
    "Foreground/background segmentation of video frames on the GPU (OpenGL fragment or compute\n"
    "shaders in a headless context), with a CPU engine where no GPU is available. The method is\n"
    "Griesser's (ETH Zurich 2005): a colinearity test of colour vectors over 3x3 windows with\n"
    "darkness compensation, regularised by a Markov random field.\n"
    "\n"
    "commands:\n";

static const char help_tail[] =
    "\n"
    "options:\n"
    "  -h, --help   show this help; 'glcv <command> --help' shows a command's options\n"
    "  --version    print the version\n"
    "  --max-pixels N\n"
    "               the largest image file decoded, in pixels [67108864 = 8192 x 8192]: a file\n"
    "               whose header claims more is refused before decoding; before or after the\n"
    "               command\n"
    "\n"
    "examples:\n"
    "  glcv segment --synthetic 60 --timing -o out/synthetic\n"
    "  glcv segment --bg empty_room.png frames/ -o masks\n"
    "  glcv segment --learn 25 frames/ --panels -o masks\n"
    "  glcv eval cdnet dataset/baseline/highway --engine cpu\n"
    "  glcv stream serve vtest.avi --port 9000   (and: glcv stream view 127.0.0.1:9000 --window)\n"
    "\n"
    "Exit status: 0 success, 1 runtime failure (files, OpenGL), 2 usage error.\n";

static void print_help(FILE *out)
{
    fputs(help_head, out);
    for (int i = 0; i < COMMAND_COUNT; i++)
        fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fputs(help_tail, out);
}

/* Whether argv[i] is --max-pixels (or --max-pixels=N); *text gets its value (NULL: missing) and
 * *taken the number of arguments it spans. */
static int is_max_pixels(int argc, char **argv, int i, const char **text, int *taken)
{
    static const char name[] = "--max-pixels";
    size_t len = sizeof name - 1;
    if (strncmp(argv[i], name, len) != 0 || (argv[i][len] != '\0' && argv[i][len] != '='))
        return 0;
    *text = argv[i][len] == '=' ? argv[i] + len + 1 : i + 1 < argc ? argv[i + 1] : NULL;
    *taken = argv[i][len] == '=' ? 1 : 2;
    return 1;
}

/* --max-pixels N: the largest image file decoded (glcv_image_set_max_pixels). */
static int set_max_pixels(const char *text)
{
    if (!text)
        return cli_usage("--max-pixels needs a value (pixels, 1..%d)", 1 << 30);
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || v < 1 || v > (1LL << 30))
        return cli_usage("--max-pixels: '%s' must be a number of pixels between 1 and %d", text, 1 << 30);
    glcv_image_set_max_pixels((size_t)v);
    return CLI_OK;
}

/* --max-pixels anywhere after the command, taken out of argv before the command parses its
 * options (they are the program's, not the command's). */
static int take_max_pixels(int *argc, char **argv)
{
    for (int i = 2; i < *argc; i++) {
        const char *text = NULL;
        int taken = 0;
        if (!is_max_pixels(*argc, argv, i, &text, &taken))
            continue;
        int rc = set_max_pixels(text);
        if (rc != CLI_OK)
            return rc;
        for (int k = i; k + taken <= *argc; k++)
            argv[k] = argv[k + taken];
        *argc -= taken;
        i--;
    }
    return CLI_OK;
}

static const cli_command *find_command(const char *name)
{
    for (int i = 0; i < COMMAND_COUNT; i++)
        if (strcmp(name, commands[i].name) == 0)
            return &commands[i];
    return NULL;
}

int main(int argc, char **argv)
{
    cli_start("glcv", NULL);
    /* the options 'glcv --help' lists come before the command too */
    int first = 1;
    while (first < argc && argv[first][0] == '-') {
        const char *arg = argv[first], *text = NULL;
        int taken = 0;
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            print_help(stdout);
            return CLI_OK;
        }
        if (strcmp(arg, "--version") == 0) {
            printf("glcv %s\n", GLCV_VERSION_STRING);
            return CLI_OK;
        }
        if (!is_max_pixels(argc, argv, first, &text, &taken))
            return cli_usage("unknown option '%s': the options before the command are -h, --help, --version and "
                             "--max-pixels N",
                             arg);
        int rc = set_max_pixels(text);
        if (rc != CLI_OK)
            return cli_exit_status(rc);
        first += taken;
    }
    if (first >= argc) {
        print_help(stderr);
        return CLI_USAGE;
    }
    if (strcmp(argv[first], "help") == 0) {
        print_help(stdout);
        return CLI_OK;
    }
    const cli_command *command = find_command(argv[first]);
    if (!command)
        return cli_usage("unknown command '%s'", argv[first]);
    cli_start("glcv", command);
    /* the command sees its name in argv[1], whatever came before it */
    argv[first - 1] = argv[0];
    argc -= first - 1;
    argv += first - 1;
    int rc = take_max_pixels(&argc, argv);
    if (rc != CLI_OK)
        return cli_exit_status(rc);
    rc = command->run(argc - 2, argv + 2);
    fflush(stdout);
    if (rc == CLI_INTERRUPTED && cli_interrupt_signal() > 0)
        rc = 128 + cli_interrupt_signal(); /* 130 after Ctrl-C, 143 after SIGTERM */
    return cli_exit_status(rc);
}
