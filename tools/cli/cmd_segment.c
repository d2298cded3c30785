/* glcv segment: segments image files, folders or the built-in synthetic sequence against a
 * background (a file, the mean of the first frames, or the sequence's own), writes masks and
 * panels, and prints a summary (frame times, foreground, quality against the synthetic truth). */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "commands.h"
#include "segmenter.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_TIMINGS = 64, DEFAULT_SYNTHETIC_FRAMES = 60 };

const char cmd_segment_help[] =
    "usage: glcv segment --bg BACKGROUND FRAME... -o OUTDIR [options]\n"
    "       glcv segment --learn N FRAME... -o OUTDIR [options]\n"
    "       glcv segment --synthetic [N] -o OUTDIR [options]\n"
    "\n"
    "Segments every frame into foreground (255) and background (0) against a background image\n"
    "and writes OUTDIR/<frame file name without extension>_mask.png (8-bit grey). The MRF prior\n"
    "carries over from frame to frame, so give the frames in their order.\n"
    "\n"
    "A FRAME that is a folder stands for its image files (.png .jpg .jpeg .bmp .tga .ppm .pgm,\n"
    "any case; hidden files skipped), sorted by name. The frames and the background must all\n"
    "have the same size. Everything is checked before anything is written, and every file is\n"
    "written under a temporary name and renamed, so no output is ever half-written.\n"
    "\n"
    "background (one of):\n"
    "  --bg FILE          the background image\n"
    "  --learn N          learn the background from the first N frames (the per-pixel median\n"
    "                     of up to 16 of them, and the parameters calibrated on them; see below)\n"
    "                     and report the parameters. Those N frames are only learned from: the\n"
    "                     frames after them are segmented. When N equals the number of frames,\n"
    "                     the background is learned from all of them and all of them are\n"
    "                     segmented.\n"
    "  --synthetic [N]    the built-in synthetic sequence (see 'glcv synth'): N frames (default\n"
    "                     60) segmented against its clean background; writes panels by default\n"
    "                     and reports precision/recall against its ground truth\n"
    "  --size WxH         frame size of --synthetic (default 320x240)\n"
    "\n"
    CLI_SEGMENTER_HELP
    CLI_SEGMENTER_ENGINE_HELP
    "\n"
    "output:\n"
    "  -o, --output DIR   output folder, created if missing (needed only when files are written)\n"
    "  --panels           also write DIR/<name>_panel.png: frame | background | mask, side by side\n"
    "  --no-panels        no panels (the default, except with --synthetic)\n"
    "  --no-masks         do not write the masks\n"
    "  --timing           also print the GPU time of each kind of pass in the last frame\n"
    "  -q, --quiet        no engine line and no progress bar on stderr\n"
    "  -v, --verbose      print the library's debug messages\n"
    "  -h, --help         show this help\n"
    "\n"
    "Options may also be written --name=value. stderr gets the line 'glcv: engine <engine> on\n"
    "<OpenGL renderer | version | platform>' first, with --learn a line with the parameters\n"
    "learned, then a progress bar when it is a terminal.\n"
    "stdout gets a summary: the number of frames; the wall time per frame of the segmentation\n"
    "call with wait (upload + GPU passes + waiting for the GPU; not file reading or writing):\n"
    "mean, median, min and max; the foreground fraction; with --synthetic, precision, recall and\n"
    "F against the ground truth.\n";

typedef struct segment_options {
    int quiet, verbose;
    const char *outdir;
    const char *background; /* --bg */
    int learn;              /* --learn N; 0 = not given */
    int synthetic;          /* --synthetic [N]: number of frames; 0 = not given */
    cli_size size;          /* --size, for --synthetic */
    cli_segmenter seg;
    int timing;
    int panels; /* -1: default (on for --synthetic only) */
    int masks;
} segment_options;

typedef struct segment_run {
    const segment_options *opt;
    glcv_logger logger;
    cli_paths inputs; /* every input file, folders expanded */
    cli_paths stems;  /* output name stem of every segmented frame */
    int first;        /* index in inputs of the first segmented frame */
    int frames;       /* number of segmented frames */
    int width, height;
    int write_masks, write_panels;
    glcv_context *ctx;
    glcv_synth *synth;
    glcv_segment *seg;
    glcv_segment_params resolved;
    glcv_image frame, truth, mask, background, panel;
    double *frame_ms;         /* wall time of each frame's segmentation call */
    double *foreground;       /* foreground percentage of each frame */
    glcv_segment_score score; /* against the synthetic ground truth */
    int written_masks, written_panels;
    glcv_timing timings[MAX_TIMINGS];
    int timing_count;
} segment_run;

/* ---- planning and validation --------------------------------------------------------------------- */

static int make_stems(segment_run *run)
{
    int digits = cli_digits_for(run->frames);
    for (int k = 0; k < run->frames; k++) {
        char synthetic_name[32];
        char *stem = NULL;
        if (run->synth)
            snprintf(synthetic_name, sizeof synthetic_name, "frame_%0*d", digits, k);
        else if (!(stem = cli_path_stem(run->inputs.items[run->first + k])))
            return cli_out_of_memory();
        int rc = cli_paths_add(&run->stems, stem ? stem : synthetic_name);
        free(stem);
        if (rc != CLI_OK)
            return rc;
    }
    return run->synth ? CLI_OK
                      : cli_check_distinct_stems(run->inputs.items + run->first, run->frames, "_mask.png");
}

/* The combination of options and arguments (usage errors). */
static int check_segment_options(const segment_options *opt, const cli_args *args)
{
    int sources = (opt->background != NULL) + (opt->learn > 0) + (opt->synthetic > 0);
    if (sources == 0)
        return cli_usage("no background: give --bg FILE, --learn N or --synthetic");
    if (sources > 1)
        return cli_usage("--bg, --learn and --synthetic exclude each other");
    if (opt->synthetic && args->count > 0)
        return cli_usage("--synthetic takes no input files (got '%s')", args->items[0]);
    if (!opt->synthetic && args->count == 0)
        return cli_usage("no input frames");
    if (!opt->synthetic && cli_given(args, &opt->size))
        return cli_usage("--size applies only to --synthetic");
    return CLI_OK;
}

static int plan_segment(segment_run *run, const cli_args *args)
{
    const segment_options *opt = run->opt;
    int rc = check_segment_options(opt, args);
    if (rc != CLI_OK)
        return rc;
    run->write_masks = opt->masks;
    run->write_panels = opt->panels == 1 || (opt->panels == -1 && opt->synthetic > 0);
    if ((run->write_masks || run->write_panels) && !opt->outdir)
        return cli_usage("no output folder: give -o OUTDIR (or --no-masks%s)", run->write_panels ? " --no-panels" : "");
    if (opt->synthetic) {
        glcv_synth_params sp = GLCV_SYNTH_PARAMS(.width = opt->size.width, .height = opt->size.height,
                                                 .frames = opt->synthetic);
        glcv_status st = glcv_synth_create(&sp, &run->synth);
        if (st != GLCV_OK)
            return cli_lib_error("cannot create the synthetic sequence", st);
        run->width = opt->size.width;
        run->height = opt->size.height;
        run->frames = opt->synthetic;
        return make_stems(run);
    }
    rc = cli_collect_images(args->items, args->count, &run->inputs);
    if (rc == CLI_OK && opt->learn > run->inputs.count)
        return cli_usage("--learn %d: only %d input frame%s", opt->learn, run->inputs.count,
                         run->inputs.count == 1 ? "" : "s");
    const glcv_logger *probe_logger = opt->verbose ? &run->logger : NULL;
    if (rc == CLI_OK)
        rc = cli_common_size(run->inputs.items, run->inputs.count, probe_logger, &run->width, &run->height);
    if (rc == CLI_OK && opt->background)
        rc = cli_check_size(opt->background, run->inputs.items[0], run->width, run->height, probe_logger);
    if (rc != CLI_OK)
        return rc;
    run->first = opt->learn > 0 && opt->learn < run->inputs.count ? opt->learn : 0;
    run->frames = run->inputs.count - run->first;
    return make_stems(run);
}

/* ---- background and frames ----------------------------------------------------------------------- */

static int set_background(segment_run *run)
{
    const segment_options *opt = run->opt;
    glcv_status st = GLCV_OK;
    if (opt->learn > 0)
        return cli_segmenter_learn(run->seg, run->inputs.items, opt->learn, &run->logger, NULL, !opt->quiet,
                                   &run->resolved);
    if (run->synth) {
        st = glcv_synth_background(run->synth, &run->background);
        if (st == GLCV_OK)
            st = glcv_segment_set_background(run->seg, &run->background);
        return st == GLCV_OK ? CLI_OK : cli_lib_error("synthetic background", st);
    }
    glcv_image bg = {0};
    if (cli_load_rgb(opt->background, &run->logger, &bg) != CLI_OK)
        return CLI_FAIL;
    st = glcv_segment_set_background(run->seg, &bg);
    glcv_image_free(&bg);
    return st == GLCV_OK ? CLI_OK : cli_lib_error(opt->background, st);
}

static int allocate_buffers(segment_run *run)
{
    int w = run->width, h = run->height;
    glcv_status st = glcv_image_alloc(w, h, GLCV_PIXEL_GRAY8, &run->mask);
    if (st == GLCV_OK)
        st = glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &run->background);
    if (st == GLCV_OK && run->synth)
        st = glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &run->frame);
    if (st == GLCV_OK && run->synth)
        st = glcv_image_alloc(w, h, GLCV_PIXEL_GRAY8, &run->truth);
    if (st == GLCV_OK && run->write_panels)
        st = glcv_image_alloc(3 * w, h, GLCV_PIXEL_RGB8, &run->panel);
    if (st != GLCV_OK)
        return cli_lib_error("cannot allocate the image buffers", st);
    run->frame_ms = calloc((size_t)run->frames, sizeof *run->frame_ms);
    run->foreground = calloc((size_t)run->frames, sizeof *run->foreground);
    if (!run->frame_ms || !run->foreground)
        return cli_out_of_memory();
    return CLI_OK;
}

/* Copies an RGB8 or GRAY8 image (grey replicated) into the panel at column x0. */
static void blit_rgb(glcv_image *panel, int x0, const glcv_image *src)
{
    size_t src_stride = glcv_image_stride(src), dst_stride = glcv_image_stride(panel);
    int gray = src->format == GLCV_PIXEL_GRAY8;
    for (int y = 0; y < src->height; y++) {
        const uint8_t *s = src->data + (size_t)y * src_stride;
        uint8_t *d = panel->data + (size_t)y * dst_stride + (size_t)x0 * 3;
        if (!gray) {
            memcpy(d, s, (size_t)src->width * 3);
            continue;
        }
        for (int x = 0; x < src->width; x++)
            d[3 * x] = d[3 * x + 1] = d[3 * x + 2] = s[x];
    }
}

static int save_png(segment_run *run, const char *stem, const char *suffix, const glcv_image *image)
{
    char *path = cli_path_join(run->opt->outdir, stem, suffix);
    if (!path)
        return cli_out_of_memory();
    glcv_status st = glcv_image_save_png(path, image, &run->logger);
    int rc = st == GLCV_OK ? CLI_OK : cli_lib_error(path, st);
    free(path);
    return rc;
}

/* The mask's foreground percentage; with the synthetic truth, the mask is also scored. */
static double measure_mask(segment_run *run)
{
    size_t stride = glcv_image_stride(&run->mask);
    uint64_t on = 0;
    for (int y = 0; y < run->height; y++)
        for (int x = 0; x < run->width; x++)
            on += run->mask.data[(size_t)y * stride + (size_t)x] >= 128;
    if (run->synth)
        glcv_segment_score_add(&run->score, &run->mask, &run->truth, NULL, GLCV_TRUTH_BINARY);
    return 100.0 * (double)on / ((double)run->width * (double)run->height);
}

static int write_outputs(segment_run *run, int k)
{
    const char *stem = run->stems.items[k];
    if (run->write_masks) {
        if (save_png(run, stem, "_mask.png", &run->mask) != CLI_OK)
            return CLI_FAIL;
        run->written_masks++;
    }
    if (run->write_panels) {
        glcv_status st = glcv_segment_read_background(run->seg, &run->background);
        if (st != GLCV_OK)
            return cli_lib_error("cannot read the background", st);
        blit_rgb(&run->panel, 0, &run->frame);
        blit_rgb(&run->panel, run->width, &run->background);
        blit_rgb(&run->panel, 2 * run->width, &run->mask);
        if (save_png(run, stem, "_panel.png", &run->panel) != CLI_OK)
            return CLI_FAIL;
        run->written_panels++;
    }
    return CLI_OK;
}

static int segment_one(segment_run *run, int k)
{
    glcv_status st = GLCV_OK;
    const char *name = run->synth ? run->stems.items[k] : run->inputs.items[run->first + k];
    if (run->synth) {
        st = glcv_synth_frame(run->synth, k, &run->frame, &run->truth);
        if (st != GLCV_OK)
            return cli_lib_error("synthetic frame", st);
    } else if (cli_load_rgb(name, &run->logger, &run->frame) != CLI_OK) {
        return CLI_FAIL;
    }
    double t0 = cli_now();
    st = glcv_segment_frame(run->seg, &run->frame, 1);
    run->frame_ms[k] = 1e3 * (cli_now() - t0);
    if (st != GLCV_OK)
        return cli_lib_error(name, st);
    st = glcv_segment_read_mask(run->seg, &run->mask);
    if (st != GLCV_OK)
        return cli_lib_error("cannot read the mask", st);
    run->foreground[k] = measure_mask(run);
    return write_outputs(run, k);
}

static int segment_frames(segment_run *run)
{
    cli_progress bar = cli_progress_start(run->opt->quiet, (size_t)run->frames);
    int rc = CLI_OK;
    for (int k = 0; k < run->frames && rc == CLI_OK; k++) {
        cli_progress_step(&bar);
        rc = segment_one(run, k);
    }
    if (rc == CLI_OK)
        cli_progress_show(&bar, (size_t)run->frames);
    cli_progress_end(&bar);
    if (rc == CLI_OK && run->opt->timing) {
        glcv_status st = glcv_segment_timings(run->seg, run->timings, MAX_TIMINGS, &run->timing_count, 1);
        if (st != GLCV_OK)
            return cli_lib_error("cannot read the GPU timings", st);
    }
    return rc;
}

/* ---- summary ------------------------------------------------------------------------------------- */

static void print_timing_table(const segment_run *run)
{
    if (run->timing_count == 0) {
        printf("GPU passes: no timings (%s)\n",
               run->resolved.engine == GLCV_ENGINE_CPU ? "the CPU engine has none" : "no timer query results");
        return;
    }
    double total = 0.0;
    int count = run->timing_count < MAX_TIMINGS ? run->timing_count : MAX_TIMINGS;
    printf("GPU passes of the last frame:\n");
    printf("  %-20s %10s %8s\n", "pass", "ms", "passes");
    for (int i = 0; i < count; i++) {
        const glcv_timing *t = &run->timings[i];
        printf("  %-20s %10.4f %8d\n", t->name ? t->name : "?", t->ms, t->count);
        total += t->ms;
    }
    printf("  %-20s %10.4f\n", "total", total);
}

static void print_summary(const segment_run *run)
{
    size_t n = (size_t)run->frames;
    double *sorted = malloc(n * sizeof *sorted);
    double sum = 0.0, fg_sum = 0.0, fg_min = 100.0, fg_max = 0.0;
    for (size_t k = 0; k < n; k++) {
        sum += run->frame_ms[k];
        fg_sum += run->foreground[k];
        fg_min = fmin(fg_min, run->foreground[k]);
        fg_max = fmax(fg_max, run->foreground[k]);
    }
    printf("frames:     %zu of %dx%d, engine %s\n", n, run->width, run->height,
           glcv_engine_mode_string(run->resolved.engine));
    if (sorted) {
        memcpy(sorted, run->frame_ms, n * sizeof *sorted);
        double median = cli_median(sorted, n);
        printf("frame time: mean %.3f ms, median %.3f ms, min %.3f ms, max %.3f ms "
               "(upload + GPU passes + wait)\n",
               sum / (double)n, median, sorted[0], sorted[n - 1]);
        free(sorted);
    }
    printf("foreground: mean %.2f %% of the pixels per frame (min %.2f %%, max %.2f %%)\n", fg_sum / (double)n, fg_min,
           fg_max);
    if (run->synth) {
        glcv_segment_metrics m;
        glcv_segment_score_metrics(&run->score, &m);
        printf("truth:      precision %.4f, recall %.4f, F %.4f (all frames against the ground truth)\n", m.precision,
               m.recall, m.f);
    }
    if (run->write_masks || run->write_panels)
        printf("written:    %d masks, %d panels in %s\n", run->written_masks, run->written_panels, run->opt->outdir);
    if (run->opt->timing)
        print_timing_table(run);
}

static void segment_run_free(segment_run *run)
{
    glcv_segment_destroy(&run->seg);
    glcv_context_destroy(&run->ctx);
    glcv_synth_destroy(&run->synth);
    glcv_image_free(&run->frame);
    glcv_image_free(&run->truth);
    glcv_image_free(&run->mask);
    glcv_image_free(&run->background);
    glcv_image_free(&run->panel);
    free(run->frame_ms);
    free(run->foreground);
    cli_paths_free(&run->inputs);
    cli_paths_free(&run->stems);
}

int cmd_segment(int argc, char **argv)
{
    segment_options o = {.panels = -1, .masks = 1, .size = {320, 240}};
    const cli_option options[] = {
        CLI_QUIET_VERBOSE_OPTIONS(&o.quiet, &o.verbose),
        {"--output", "-o", &o.outdir, .kind = CLI_STRING, .what = "folder name"},
        {"--bg", NULL, &o.background, .kind = CLI_STRING, .what = "file name"},
        {"--learn", NULL, &o.learn, .kind = CLI_INT, .min = 1, .max = INT_MAX},
        {"--synthetic", NULL, &o.synthetic, .kind = CLI_INT, .min = 1, .max = 1000000, .bare = DEFAULT_SYNTHETIC_FRAMES},
        {"--size", NULL, &o.size, .kind = CLI_SIZE},
        CLI_SEGMENTER_OPTIONS(&o.seg),
        {"--timing", NULL, &o.timing, .kind = CLI_FLAG},
        {"--panels", NULL, &o.panels, .kind = CLI_FLAG},
        {"--no-panels", NULL, &o.panels, .kind = CLI_FLAG, .clear = 1},
        {"--no-masks", NULL, &o.masks, .kind = CLI_FLAG, .clear = 1},
        {NULL},
    };
    cli_args args;
    int rc = cli_parse(options, argc, argv, &args);
    if (rc != CLI_OK)
        return rc;
    segment_run run = {.opt = &o, .logger = cli_logger(o.verbose)};
    rc = plan_segment(&run, &args);
    if (rc == CLI_OK && (run.write_masks || run.write_panels))
        rc = cli_make_dir(o.outdir);
    if (rc == CLI_OK)
        rc = cli_segmenter_create(&o.seg, &args, run.width, run.height, o.timing, o.quiet, &run.logger, &run.ctx,
                                  &run.seg, &run.resolved);
    if (rc == CLI_OK)
        rc = allocate_buffers(&run);
    if (rc == CLI_OK)
        rc = set_background(&run);
    if (rc == CLI_OK)
        rc = segment_frames(&run);
    if (rc == CLI_OK)
        print_summary(&run);
    segment_run_free(&run);
    return rc;
}
