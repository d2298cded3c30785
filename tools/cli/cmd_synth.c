/* glcv synth: writes the built-in synthetic sequence as PNG files: its clean background, the
 * frames and their ground-truth masks. */
#include "cli.h"
#include "commands.h"

#include <stdio.h>
#include <stdlib.h>

const char cmd_synth_help[] =
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

typedef struct synth_options {
    int quiet, verbose;
    const char *outdir;
    int frames;
    cli_size size;
    uint64_t seed;
} synth_options;

/* Writes <dir>/<prefix>_<k, digits wide>.png. */
static int save_numbered(const char *dir, const char *prefix, int digits, int k, const glcv_image *image,
                         const glcv_logger *logger)
{
    char name[64];
    snprintf(name, sizeof name, "%s_%0*d", prefix, digits, k);
    char *path = cli_path_join(dir, name, ".png");
    if (!path)
        return cli_out_of_memory();
    glcv_status st = glcv_image_save_png(path, image, logger);
    int rc = st == GLCV_OK ? CLI_OK : cli_lib_error(path, st);
    free(path);
    return rc;
}

static int write_frames(const synth_options *o, glcv_synth *synth, glcv_image *frame, glcv_image *truth,
                        const glcv_logger *logger)
{
    int digits = cli_digits_for(o->frames);
    cli_progress bar = cli_progress_start(o->quiet, (size_t)o->frames);
    int rc = CLI_OK;
    for (int k = 0; k < o->frames && rc == CLI_OK; k++) {
        cli_progress_step(&bar);
        glcv_status st = glcv_synth_frame(synth, k, frame, truth);
        if (st != GLCV_OK)
            rc = cli_lib_error("synthetic frame", st);
        if (rc == CLI_OK)
            rc = save_numbered(o->outdir, "frame", digits, k, frame, logger);
        if (rc == CLI_OK)
            rc = save_numbered(o->outdir, "truth", digits, k, truth, logger);
    }
    cli_progress_end(&bar);
    return rc;
}

int cmd_synth(int argc, char **argv)
{
    synth_options o = {.frames = 60, .size = {320, 240}};
    const cli_option options[] = {
        CLI_QUIET_VERBOSE_OPTIONS(&o.quiet, &o.verbose),
        {"--output", "-o", &o.outdir, .kind = CLI_STRING, .what = "folder name"},
        {"--frames", NULL, &o.frames, .kind = CLI_INT, .min = 1, .max = 1000000},
        {"--size", NULL, &o.size, .kind = CLI_SIZE},
        {"--seed", NULL, &o.seed, .kind = CLI_UINT, .umax = UINT32_MAX},
        {NULL},
    };
    cli_args args;
    int rc = cli_parse_expecting(options, argc, argv, &args, 0, 0, "no arguments");
    if (rc == CLI_OK && !o.outdir)
        rc = cli_usage("no output folder: give -o OUTDIR");
    if (rc != CLI_OK)
        return rc;
    glcv_logger logger = cli_logger(o.verbose);
    glcv_synth *synth = NULL;
    glcv_image frame = {0}, truth = {0};
    char *bg_path = NULL;
    glcv_synth_params sp = GLCV_SYNTH_PARAMS(.width = o.size.width, .height = o.size.height, .frames = o.frames,
                                             .seed = (uint32_t)o.seed);
    glcv_status st = glcv_synth_create(&sp, &synth);
    rc = st == GLCV_OK ? CLI_OK : cli_lib_error("cannot create the synthetic sequence", st);
    if (rc == CLI_OK)
        rc = cli_make_dir(o.outdir);
    if (rc == CLI_OK) {
        st = glcv_image_alloc(o.size.width, o.size.height, GLCV_PIXEL_RGB8, &frame);
        if (st == GLCV_OK)
            st = glcv_image_alloc(o.size.width, o.size.height, GLCV_PIXEL_GRAY8, &truth);
        if (st == GLCV_OK)
            st = glcv_synth_background(synth, &frame);
        if (st != GLCV_OK)
            rc = cli_lib_error("synthetic background", st);
    }
    if (rc == CLI_OK) {
        bg_path = cli_path_join(o.outdir, "background", ".png");
        st = bg_path ? glcv_image_save_png(bg_path, &frame, &logger) : GLCV_ERROR_OUT_OF_MEMORY;
        if (st != GLCV_OK)
            rc = cli_lib_error(bg_path ? bg_path : "background.png", st);
    }
    if (rc == CLI_OK)
        rc = write_frames(&o, synth, &frame, &truth, &logger);
    if (rc == CLI_OK && !o.quiet)
        printf("wrote background.png, %d frames and %d truth masks (%dx%d) to %s\n", o.frames, o.frames, o.size.width,
               o.size.height, o.outdir);
    free(bg_path);
    glcv_image_free(&frame);
    glcv_image_free(&truth);
    glcv_synth_destroy(&synth);
    return rc;
}
