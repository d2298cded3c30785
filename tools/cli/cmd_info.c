/* glcv info: the library's version, the headless OpenGL context, its CUDA device, and the engine
 * that 'auto' resolves to on it. */
#include "cli.h"
#include "commands.h"

#include <stdio.h>
#include <string.h>

const char cmd_info_help[] =
    "usage: glcv info\n"
    "\n"
    "Creates a headless OpenGL context (as 'glcv segment' does) and prints the library version,\n"
    "whether it has media input (FFmpeg: video files, cameras, lavfi), the context (renderer,\n"
    "OpenGL version, EGL platform), its CUDA device, and the engine that 'auto' resolves to on it\n"
    "(fragment, compute, or cpu when no context can be created).\n"
    "\n"
    "options:\n"
    "  -v, --verbose      print the library's debug messages\n"
    "  -h, --help         show this help\n";

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

int cmd_info(int argc, char **argv)
{
    int verbose = 0;
    const cli_option options[] = {
        {"--verbose", "-v", &verbose, .kind = CLI_FLAG},
        {NULL},
    };
    cli_args args;
    int rc = cli_parse_expecting(options, argc, argv, &args, 0, 0, "no arguments");
    if (rc != CLI_OK)
        return rc;
    glcv_logger logger = cli_logger(verbose);
    glcv_context *ctx = NULL;
    glcv_segment *seg = NULL;
    glcv_segment_params resolved = {0};
    printf("%-10s %s\n", "glcv:", GLCV_VERSION_STRING);
    printf("%-10s %s\n", "media:",
           GLCV_HAVE_FFMPEG ? "FFmpeg (video files, cameras, lavfi)" : "none (built without FFmpeg)");
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
    if (st == GLCV_OK)
        printf("%-10s auto -> %s\n", "engine:", glcv_engine_mode_string(resolved.engine));
    else
        rc = cli_lib_error("cannot create a segmenter", st);
    glcv_segment_destroy(&seg);
    glcv_context_destroy(&ctx);
    return rc;
}
