/* glcv synth: writes the built-in synthetic sequence as PNG files: its clean background, the
 * frames and their ground-truth masks; or a tracking scene in the OTB benchmark's layout. */
#include "cli.h"
#include "commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_synth_help[] =
    "usage: glcv synth -o OUTDIR [--frames N] [--size WxH] [--seed N] [--dynamic] [--gusts] [--jitter]\n"
    "                  [--stop-go] [--cdnet FIRST]\n"
    "       glcv synth -o OUTDIR --track KIND [--frames N] [--size WxH] [--seed N]\n"
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
    "  --dynamic          a background that moves by itself: rippling water, swaying foliage and\n"
    "                     flickering patches (background in the ground truth), and\n"
    "                     OUTDIR/dynamic.png, 255 where they are\n"
    "  --gusts            with --dynamic: the foliage sways in gusts, mostly calm, at times up to\n"
    "                     about 3x its swing (from the seed)\n"
    "  --jitter           the camera shakes: every frame after the first shows the scene moved by\n"
    "                     -2..2 pixels in x and in y (the truth with it)\n"
    "  --stop-go          the objects stop and go: each moves for 18-40 frames, then stands still\n"
    "                     for 12-40 (and is foreground in the truth while still)\n"
    "  --cdnet FIRST      write the CDnet 2014 layout instead, for 'glcv eval cdnet OUTDIR':\n"
    "                     input/in000001.png..., groundtruth/gt000001.png..., ROI.png (every\n"
    "                     pixel) and temporalROI.txt 'FIRST N' (frames before FIRST: warm-up)\n"
    "  --track KIND       a tracking scene instead, in the OTB layout for 'glcv eval otb OUTDIR':\n"
    "                     OUTDIR/img/0001.png... and OUTDIR/groundtruth_rect.txt (the target's\n"
    "                     box per frame, x,y,w,h, 1-based); 120 frames unless --frames. One\n"
    "                     figure (head, striped shirt, trousers) on the textured background:\n"
    "                       scale         its size goes 0.7 -> 1.6 -> 0.7 as it walks across\n"
    "                       occlusion     it walks behind a pole twice its width\n"
    "                       illumination  the light swings +-45 % and a shadow band halves it\n"
    "                       distractor    a figure that looks the same passes just below it\n"
    "                       fast          it darts between random points (11 pixels a frame at\n"
    "                                     320x240, 3.4 % of the width; --seed picks the points)\n"
    "  -q, --quiet        no progress bar and no closing line\n"
    "  -v, --verbose      print the library's debug messages\n"
    "  -h, --help         show this help\n"
    "\n"
"Example: glcv synth -o seq && glcv segment --bg seq/background.png seq/frame_*.png -o masks\n"
    "         glcv synth -o occ --track occlusion && glcv eval otb occ\n";

/* --track's names, in the order of glcv_synth_track from GLCV_SYNTH_TRACK_SCALE on. */
static const char *const track_names[] = {"scale", "occlusion", "illumination", "distractor", "fast", NULL};

typedef struct synth_options {
    int quiet, verbose;
    const char *outdir;
    int frames;
    cli_size size;
    uint64_t seed;
    int dynamic, gusts, jitter, stop_go;
    int cdnet; /* 0, or the first scored frame (1-based) of the CDnet layout */
    int track; /* -1, or the index in track_names of the tracking scene */
} synth_options;

/* Writes <dir>/<name>.png. */
static int save_png(const char *dir, const char *name, const glcv_image *image, const glcv_logger *logger)
{
    char *path = cli_path_join(dir, name, ".png");
    if (!path)
        return cli_out_of_memory();
    glcv_status st = glcv_image_save_png(path, image, logger);
    int rc = st == GLCV_OK ? CLI_OK : cli_lib_error(path, st);
    free(path);
    return rc;
}

/* Writes frame k (0-based) and its truth: frame_<k>.png and truth_<k>.png (k `digits` wide), or in
 * the CDnet layout input/in<k+1>.png and groundtruth/gt<k+1>.png (six digits). */
static int save_frame(const synth_options *o, int digits, int k, const glcv_image *frame, const glcv_image *truth,
                      const glcv_logger *logger)
{
    char name[2][64];
    if (o->track >= 0) {
        snprintf(name[0], sizeof name[0], "img/%0*d", digits > 4 ? 7 : 4, k + 1); /* --frames <= 10^6 */
        return save_png(o->outdir, name[0], frame, logger);
    }
    if (o->cdnet) {
        snprintf(name[0], sizeof name[0], "input/in%06d", k + 1);
        snprintf(name[1], sizeof name[1], "groundtruth/gt%06d", k + 1);
    } else {
        snprintf(name[0], sizeof name[0], "frame_%0*d", digits, k);
        snprintf(name[1], sizeof name[1], "truth_%0*d", digits, k);
    }
    int rc = save_png(o->outdir, name[0], frame, logger);
    return rc == CLI_OK ? save_png(o->outdir, name[1], truth, logger) : rc;
}

/* Closes a text file written to `path` (f NULL: it did not open), says so when opening, writing or
 * closing failed, frees `path`; returns rc, or CLI_FAIL after such a failure. */
static int end_text_file(FILE *f, char *path, int failed, int rc)
{
    if (f && fclose(f) != 0)
        failed = 1;
    if (failed) {
        cli_error("cannot write %s", path);
        rc = CLI_FAIL;
    }
    free(path);
    return rc;
}

/* The CDnet layout's folders, ROI.png (every pixel scored) and temporalROI.txt. */
static int write_cdnet_layout(const synth_options *o, glcv_image *roi, const glcv_logger *logger)
{
    const char *sub[] = {"input", "groundtruth"};
    for (int i = 0; i < 2; i++) {
        char *dir = cli_path_join(o->outdir, sub[i], "");
        int rc = dir ? cli_make_dir(dir) : cli_out_of_memory();
        free(dir);
        if (rc != CLI_OK)
            return rc;
    }
    size_t stride = glcv_image_stride(roi);
    for (int y = 0; y < roi->height; y++)
        memset(roi->data + (size_t)y * stride, 255, (size_t)roi->width);
    int rc = save_png(o->outdir, "ROI", roi, logger);
    char *path = rc == CLI_OK ? cli_path_join(o->outdir, "temporalROI", ".txt") : NULL;
    if (rc == CLI_OK && !path)
        return cli_out_of_memory();
    FILE *f = path ? fopen(path, "w") : NULL;
    int failed = path && (!f || fprintf(f, "%d %d\n", o->cdnet, o->frames) < 0);
    return end_text_file(f, path, failed, rc);
}

/* The OTB layout's img folder and groundtruth_rect.txt: the target's box per frame, 1-based. */
static int write_otb_layout(const synth_options *o, const glcv_synth *synth)
{
    char *dir = cli_path_join(o->outdir, "img", "");
    int rc = dir ? cli_make_dir(dir) : cli_out_of_memory();
    free(dir);
    char *path = rc == CLI_OK ? cli_path_join(o->outdir, "groundtruth_rect", ".txt") : NULL;
    if (rc == CLI_OK && !path)
        return cli_out_of_memory();
    FILE *f = path ? fopen(path, "w") : NULL;
    int failed = path && !f;
    for (int k = 0; f && k < o->frames && !failed; k++) {
        double box[4];
        failed = glcv_synth_track_box(synth, k, box) != GLCV_OK ||
                 fprintf(f, "%.2f,%.2f,%.2f,%.2f\n", box[0] + 1.0, box[1] + 1.0, box[2], box[3]) < 0;
    }
    return end_text_file(f, path, failed, rc);
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
            rc = save_frame(o, digits, k, frame, truth, logger);
    }
    cli_progress_end(&bar);
    return rc;
}

int cmd_synth(int argc, char **argv)
{
    synth_options o = {.frames = 60, .size = {320, 240}, .track = -1};
    const cli_option options[] = {
        CLI_QUIET_VERBOSE_OPTIONS(&o.quiet, &o.verbose),
        {"--output", "-o", &o.outdir, .kind = CLI_STRING, .what = "folder name"},
        {"--frames", NULL, &o.frames, .kind = CLI_INT, .min = 1, .max = 1000000},
        {"--size", NULL, &o.size, .kind = CLI_SIZE},
        {"--seed", NULL, &o.seed, .kind = CLI_UINT, .umax = UINT32_MAX},
        {"--dynamic", NULL, &o.dynamic, .kind = CLI_FLAG},
        {"--gusts", NULL, &o.gusts, .kind = CLI_FLAG},
        {"--jitter", NULL, &o.jitter, .kind = CLI_FLAG},
        {"--stop-go", NULL, &o.stop_go, .kind = CLI_FLAG},
        {"--cdnet", NULL, &o.cdnet, .kind = CLI_INT, .min = 2, .max = 999999},
        {"--track", NULL, &o.track, .kind = CLI_CHOICE, .choices = track_names, .what = "a tracking scene"},
        {NULL},
    };
    cli_args args;
    int rc = cli_parse_expecting(options, argc, argv, &args, 0, 0, "no arguments");
    if (rc == CLI_OK && !o.outdir)
        rc = cli_usage("no output folder: give -o OUTDIR");
    if (rc == CLI_OK && o.track >= 0 && (o.dynamic || o.cdnet || o.gusts || o.jitter || o.stop_go))
        rc = cli_usage("--track writes a tracking scene: not with --dynamic, --gusts, --jitter, --stop-go or --cdnet");
    if (rc == CLI_OK && o.gusts && !o.dynamic)
        rc = cli_usage("--gusts moves the foliage of --dynamic: give --dynamic too");
    if (rc == CLI_OK && o.track >= 0 && !cli_given(&args, &o.frames))
        o.frames = 120;
    if (rc == CLI_OK && o.cdnet > o.frames)
        rc = cli_usage("--cdnet %d: the sequence has only %d frames", o.cdnet, o.frames);
    if (rc != CLI_OK)
        return rc;
    glcv_logger logger = cli_logger(o.verbose);
    glcv_synth *synth = NULL;
    glcv_image frame = {0}, truth = {0};
    glcv_synth_params sp = GLCV_SYNTH_PARAMS(.width = o.size.width, .height = o.size.height, .frames = o.frames,
                                             .seed = (uint32_t)o.seed,
                                             .scene = o.dynamic ? GLCV_SYNTH_DYNAMIC : GLCV_SYNTH_STATIC,
                                             .track = (glcv_synth_track)(o.track + 1),
                                             .challenges = (o.gusts ? GLCV_SYNTH_GUSTS : 0u) |
                                                           (o.jitter ? GLCV_SYNTH_JITTER : 0u) |
                                                           (o.stop_go ? GLCV_SYNTH_STOP_GO : 0u));
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
    if (rc == CLI_OK && o.track < 0)
        rc = save_png(o.outdir, "background", &frame, &logger);
    if (rc == CLI_OK && o.track >= 0)
        rc = write_otb_layout(&o, synth);
    if (rc == CLI_OK && o.dynamic) {
        st = glcv_synth_dynamic_region(synth, &truth);
        rc = st == GLCV_OK ? save_png(o.outdir, "dynamic", &truth, &logger) : cli_lib_error("dynamic region", st);
    }
    if (rc == CLI_OK && o.cdnet)
        rc = write_cdnet_layout(&o, &truth, &logger);
    if (rc == CLI_OK)
        rc = write_frames(&o, synth, &frame, &truth, &logger);
    if (rc == CLI_OK && !o.quiet && o.track >= 0)
        printf("wrote the %s tracking scene: %d frames (%dx%d) in img/ and groundtruth_rect.txt to %s\n",
               track_names[o.track], o.frames, o.size.width, o.size.height, o.outdir);
    else if (rc == CLI_OK && !o.quiet)
        printf("wrote background.png, %d frames and %d truth masks (%dx%d%s) to %s\n", o.frames, o.frames,
               o.size.width, o.size.height, o.cdnet ? ", CDnet layout" : "", o.outdir);
    glcv_image_free(&frame);
    glcv_image_free(&truth);
    glcv_synth_destroy(&synth);
    return rc;
}
