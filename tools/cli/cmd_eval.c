/* glcv eval cdnet: scores a method (the segmenter, VSAM, frame differencing) on one video folder of the CDnet 2014 change-detection
 * benchmark with the benchmark's protocol (warm-up frames, temporal and spatial regions of
 * interest, its ground-truth labels and metrics). */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "commands.h"
#include "segmenter.h"
#include "subtractor.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* CDnet frame numbers have six digits. */
enum { CDNET_MAX_FRAME = 999999, DEFAULT_LEAD_IN = 30 };

const char cmd_eval_help[] =
    "usage: glcv eval cdnet DIR [options]\n"
    "       glcv eval otb SEQDIR... [options]     (the tracker on OTB sequences: glcv eval otb --help)\n"
    "\n"
    "Scores the method (--method: the segmenter by default) on one video of the CDnet 2014 change-detection benchmark with the\n"
    "CDnet protocol and prints its metrics: recall, precision, F-measure, specificity, FPR, FNR,\n"
    "PWC (percentage of wrong classifications) and the TP FP FN TN pixel counts, summed over all\n"
    "scored frames.\n"
    "\n"
    "DIR holds, as the benchmark distributes it:\n"
    "  input/in000001.jpg ...      the frames, numbered from 1 (.png frames are accepted too)\n"
    "  groundtruth/gt000001.png .. 255 foreground; 0 and 50 (shadow) background; 85 (outside\n"
    "                              the region of interest) and 170 (unknown) not scored\n"
    "  ROI.bmp (or ROI.png)        spatial region of interest: only its nonzero pixels are scored\n"
    "  temporalROI.txt             'FIRST LAST': only frames FIRST..LAST are scored\n"
    "Frames 1..FIRST-1 are the warm-up: the background is learned from them (see --background;\n"
    "vsam: B and T, diff2 and diff3: T only).\n"
    "Then frames FIRST-N..LAST are segmented in order (N = --lead-in) so that the temporal prior\n"
    "is settled when scoring starts, and frames FIRST..LAST are scored. Everything is checked\n"
    "(files present, sizes equal) before anything is computed or written.\n"
    "\n"
    "options:\n"
    "  --background B     learn (default): the library's learning on all warm-up frames, as\n"
    "                     'glcv segment --learn' and glcv-demo do: the per-pixel median of up to\n"
    "                     16 of them, evenly spaced, and the parameters calibrated on those (the\n"
    "                     mean of all of them and no calibration with --paper-defaults).\n"
    "                     median: the exact per-pixel, per-channel (lower) median of all warm-up\n"
    "                     frames, in two passes over them, then the parameters calibrated on 32\n"
    "                     of them, evenly spaced (glcv_segment_calibrate_*; none with\n"
    "                     --paper-defaults). vsam, diff2, diff3: learned from that one image\n"
    "                     (T the minimum threshold)\n"
    "  --lead-in N        frames segmented before FIRST and not scored [30]\n"
    "  --save-masks DIR   write the masks of the scored frames as DIR/binNNNNNN.png (CDnet names:\n"
    "                     255 foreground, 0 background), created if missing\n"
    "  --csv FILE         append one line with the parameters and the metrics to FILE (a header\n"
    "                     line first when FILE is new or empty)\n"
    "  -q, --quiet        no engine line and no progress bar on stderr\n"
    "  -v, --verbose      print the library's debug messages\n"
    "  -h, --help         show this help\n"
    "\n"
    CLI_METHOD_HELP
    "\n"
    CLI_SEGMENTER_HELP
    CLI_SEGMENTER_ENGINE_HELP
    "\n"
    "stdout gets one summary line (F-measure first), then the metrics table.\n"
    "Examples: glcv eval cdnet dataset/baseline/highway\n"
    "          glcv eval cdnet dataset/baseline/highway --paper-defaults --csv scores.csv\n"
    "          glcv eval cdnet dataset/baseline/highway --engine cpu --Ts 2000 --adapt 0\n"
    "          glcv eval cdnet dataset/baseline/highway --method vsam --gray\n";

/* --background; "mean" is the name "learn" had until the library learned the median, kept so that
 * scripts still run (with a warning). */
enum { BACKGROUND_LEARN = 0, BACKGROUND_MEDIAN = 1, BACKGROUND_MEAN = 2 };
static const char *const background_names[] = {"learn", "median", "mean", NULL};

/* The library's calibration keeps up to 32 D^2 samples per pixel (glcv_segment_calibrate_end):
 * --background median offers it that many warm-up frames, evenly spaced. */
enum { CALIBRATION_FRAMES = 32 };

typedef struct eval_options {
    int quiet, verbose;
    cli_method method; /* --method, its parameters and --engine */
    int background; /* BACKGROUND_LEARN or BACKGROUND_MEDIAN */
    int lead_in;    /* frames segmented before the temporal ROI */
    const char *save_masks;
    const char *csv;
    int calibrate; /* the old --calibrate: ignored (calibrating is the default) */
} eval_options;

typedef struct eval_run {
    const eval_options *opt;
    glcv_logger logger;
    const char *dir;
    char *name;      /* the folder's last component, for the summary */
    int first, last; /* temporal ROI: scored frames, 1-based, inclusive */
    int start;       /* first segmented frame */
    int width, height;
    cli_paths inputs; /* frame files 1..last (index k - 1) */
    cli_paths truths; /* ground truth of frames first..last (index k - first) */
    char *roi_path;
    glcv_image roi; /* GRAY8: nonzero = scored */
    uint64_t roi_pixels;
    FILE *csv;
    glcv_context *ctx;
    cli_subtractor *sub;
    glcv_segment_params resolved; /* eth */
    glcv_image frame, truth, mask, background;
    int warmup_used;  /* warm-up frames the background was learned from */
    int calibrated;   /* the parameters were calibrated on warm-up frames */
    double noise;     /* --background median: the noise level g of the calibration */
    int noise_frames; /* ... measured on that many warm-up frames */
    glcv_segment_score score;
    double segment_ms; /* total wall time of the segmentation calls */
    int segmented, written;
    cli_progress bar; /* steps: two per warm-up frame (median) or one (mean), one per segmented frame */
} eval_run;

/* ---- the folder ---------------------------------------------------------------------------------- */

/* "<dir>/<sub>/<prefix>NNNNNN<ext>" for the first ext that exists; NULL with *missing = 1 when none
 * does (*missing = 0: out of memory). */
static char *find_numbered(const char *dir, const char *sub, const char *prefix, int k,
                           const char *const *extensions, size_t count, int *missing)
{
    char name[64];
    *missing = 0;
    snprintf(name, sizeof name, "%s/%s%06d", sub, prefix, k);
    for (size_t i = 0; i < count; i++) {
        char *path = cli_path_join(dir, name, extensions[i]);
        if (!path)
            return NULL;
        if (cli_is_file(path))
            return path;
        free(path);
    }
    *missing = 1;
    return NULL;
}

/* Reads temporalROI.txt: two frame numbers "FIRST LAST" and nothing else but white space. */
static int read_temporal_roi(eval_run *run)
{
    char *path = cli_path_join(run->dir, "temporalROI.txt", "");
    char text[256] = {0};
    int rc = CLI_FAIL;
    if (!path)
        return cli_out_of_memory();
    FILE *f = fopen(path, "r");
    if (!f) {
        cli_error("%s: %s (a CDnet folder has input/, groundtruth/, ROI.bmp and temporalROI.txt)", path,
                  strerror(errno));
        goto cleanup;
    }
    size_t n = fread(text, 1, sizeof text - 1, f);
    int too_long = n == sizeof text - 1 && fgetc(f) != EOF;
    fclose(f);
    char *end = text;
    errno = 0;
    long first = strtol(text, &end, 10);
    long last = end != text ? strtol(end, &end, 10) : -1;
    while (isspace((unsigned char)*end))
        end++;
    if (too_long || *end != '\0' || errno == ERANGE || strlen(text) != n || first < 1 || last < first ||
        last > CDNET_MAX_FRAME) {
        cli_error("%s: malformed: expected two frame numbers 'FIRST LAST' with 1 <= FIRST <= LAST <= %d", path,
                  CDNET_MAX_FRAME);
        goto cleanup;
    }
    if (first < 2) {
        cli_error("%s: the scored frames start at frame 1: no warm-up frames to learn the background from", path);
        goto cleanup;
    }
    run->first = (int)first;
    run->last = (int)last;
    rc = CLI_OK;
cleanup:
    free(path);
    return rc;
}

static int find_roi(eval_run *run)
{
    static const char *const names[] = {"ROI.bmp", "ROI.png"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *path = cli_path_join(run->dir, names[i], "");
        if (!path)
            return cli_out_of_memory();
        if (cli_is_file(path)) {
            run->roi_path = path;
            return CLI_OK;
        }
        free(path);
    }
    cli_error("%s: no ROI.bmp (nor ROI.png): the spatial region of interest is missing", run->dir);
    return CLI_FAIL;
}

/* Finds frames (or ground truths) first..last, named <sub>/<prefix>NNNNNN<ext>, into `list`. */
static int collect_numbered(eval_run *run, const char *sub, const char *prefix, const char *const *extensions,
                            size_t count, int first, cli_paths *list)
{
    for (int k = first; k <= run->last; k++) {
        int missing = 0;
        char *path = find_numbered(run->dir, sub, prefix, k, extensions, count, &missing);
        if (!path && missing) {
            cli_error("%s/%s/%s%06d%s%s%s%s: no such file (temporalROI.txt scores frames %d..%d)", run->dir, sub,
                      prefix, k, extensions[0], count > 1 ? " (or " : "", count > 1 ? extensions[1] : "",
                      count > 1 ? ")" : "", run->first, run->last);
            return CLI_FAIL;
        }
        int rc = path ? cli_paths_add(list, path) : cli_out_of_memory();
        free(path);
        if (rc != CLI_OK)
            return rc;
    }
    return CLI_OK;
}

/* All frames, ground truths and the ROI have the size of the first frame; the ROI is not empty. */
static int check_cdnet_sizes(eval_run *run)
{
    const glcv_logger *logger = run->opt->verbose ? &run->logger : NULL;
    const char *reference = run->inputs.items[0];
    int rc = cli_common_size(run->inputs.items, run->inputs.count, logger, &run->width, &run->height);
    for (int i = 0; i < run->truths.count && rc == CLI_OK; i++)
        rc = cli_check_size(run->truths.items[i], reference, run->width, run->height, logger);
    if (rc == CLI_OK)
        rc = cli_check_size(run->roi_path, reference, run->width, run->height, logger);
    if (rc != CLI_OK)
        return rc;
    glcv_status st = glcv_image_load(run->roi_path, GLCV_PIXEL_GRAY8, &run->logger, &run->roi);
    if (st != GLCV_OK)
        return cli_lib_error(run->roi_path, st);
    size_t stride = glcv_image_stride(&run->roi);
    for (int y = 0; y < run->height; y++)
        for (int x = 0; x < run->width; x++)
            run->roi_pixels += run->roi.data[(size_t)y * stride + (size_t)x] != 0;
    if (run->roi_pixels == 0) {
        cli_error("%s: the region of interest is empty (no nonzero pixel)", run->roi_path);
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* The last component of a folder path ("a/b/highway/" -> "highway"), in new memory. */
static char *folder_name(const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    size_t begin = n;
    while (begin > 0 && dir[begin - 1] != '/')
        begin--;
    if (begin == n) /* "/" */
        begin = 0;
    char *name = malloc(n - begin + 1);
    if (!name)
        return NULL;
    memcpy(name, dir + begin, n - begin);
    name[n - begin] = '\0';
    return name;
}

static int plan_eval(eval_run *run, const cli_args *args)
{
    const eval_options *opt = run->opt;
    if (args->count == 0)
        return cli_usage("no dataset: give 'cdnet DIR'");
    if (strcmp(args->items[0], "cdnet") != 0)
        return cli_usage("'%s' is not a dataset format: use 'cdnet DIR'", args->items[0]);
    if (args->count != 2)
        return cli_usage("eval cdnet takes one folder (got %d arguments)", args->count - 1);
    run->dir = args->items[1];
    struct stat sb;
    if (stat(run->dir, &sb) != 0) {
        cli_error("%s: %s", run->dir, strerror(errno));
        return CLI_FAIL;
    }
    if (!S_ISDIR(sb.st_mode)) {
        cli_error("%s: not a folder", run->dir);
        return CLI_FAIL;
    }
    if (!(run->name = folder_name(run->dir)))
        return cli_out_of_memory();
    static const char *const frame_ext[] = {".jpg", ".png"};
    static const char *const truth_ext[] = {".png"};
    int rc = read_temporal_roi(run);
    if (rc == CLI_OK)
        rc = find_roi(run);
    if (rc == CLI_OK)
        rc = collect_numbered(run, "input", "in", frame_ext, 2, 1, &run->inputs);
    if (rc == CLI_OK)
        rc = collect_numbered(run, "groundtruth", "gt", truth_ext, 1, run->first, &run->truths);
    if (rc == CLI_OK)
        rc = check_cdnet_sizes(run);
    run->start = run->first - opt->lead_in > 1 ? run->first - opt->lead_in : 1;
    return rc;
}

/* ---- background, calibration, frames ------------------------------------------------------------- */

/* The background (see --background) and, with the CALIBRATED preset, the calibration. */
static int learn_background(eval_run *run)
{
    int warmup = run->first - 1;
    int eth = run->sub->method == CLI_METHOD_ETH;
    int calibrates = eth && run->resolved.preset == GLCV_SEGMENT_CALIBRATED;
    if (run->opt->background == BACKGROUND_LEARN) {
        run->warmup_used = warmup;
        run->calibrated = calibrates;
        int rc = cli_subtractor_learn_files(run->sub, run->inputs.items, warmup, &run->logger, &run->bar, 0);
        run->resolved = run->sub->seg_resolved;
        return rc;
    }
    int rc = cli_median_of_files(run->inputs.items, warmup, GLCV_IMAGE_MEDIAN_MAX_FRAMES, &run->logger, &run->bar,
                                 &run->background, &run->warmup_used);
    if (rc == CLI_OK)
        rc = cli_subtractor_set_background(run->sub, &run->background, "cannot set the background");
    if (rc != CLI_OK || !calibrates)
        return rc;
    glcv_segment *seg = run->sub->seg;
    glcv_status st = GLCV_OK;
    /* the calibration that learning would have made, on the exact median */
    float g = 0;
    int step = warmup > CALIBRATION_FRAMES ? warmup / CALIBRATION_FRAMES : 1;
    st = glcv_segment_calibrate_begin(seg);
    for (int k = 1; k <= warmup && run->noise_frames < CALIBRATION_FRAMES && st == GLCV_OK; k += step) {
        cli_progress_step(&run->bar);
        if (cli_load_rgb(run->inputs.items[k - 1], &run->logger, &run->frame) != CLI_OK)
            return CLI_FAIL;
        st = glcv_segment_calibrate_add(seg, &run->frame);
        run->noise_frames++;
    }
    if (st == GLCV_OK)
        st = glcv_segment_calibrate_end(seg, &g);
    if (st == GLCV_OK)
        st = glcv_segment_get_params(seg, &run->resolved);
    if (st != GLCV_OK)
        return cli_lib_error("cannot calibrate the parameters", st);
    run->noise = g;
    run->calibrated = 1;
    return CLI_OK;
}

/* Adds the mask of scored frame k to the score: ROI pixels only, CDnet's labels. */
static int score_mask(eval_run *run, int k)
{
    const char *path = run->truths.items[k - run->first];
    glcv_image_free(&run->truth);
    glcv_status st = glcv_image_load(path, GLCV_PIXEL_GRAY8, &run->logger, &run->truth);
    if (st == GLCV_OK)
        st = glcv_segment_score_add(&run->score, &run->mask, &run->truth, &run->roi, GLCV_TRUTH_CDNET);
    return st == GLCV_OK ? CLI_OK : cli_lib_error(path, st);
}

static int save_cdnet_mask(eval_run *run, int k)
{
    char name[32];
    snprintf(name, sizeof name, "bin%06d", k);
    char *path = cli_path_join(run->opt->save_masks, name, ".png");
    if (!path)
        return cli_out_of_memory();
    glcv_status st = glcv_image_save_png(path, &run->mask, &run->logger);
    int rc = st == GLCV_OK ? CLI_OK : cli_lib_error(path, st);
    free(path);
    if (rc == CLI_OK)
        run->written++;
    return rc;
}

static int eval_frames(eval_run *run)
{
    for (int k = run->start; k <= run->last; k++) {
        cli_progress_step(&run->bar);
        const char *path = run->inputs.items[k - 1];
        if (cli_load_rgb(path, &run->logger, &run->frame) != CLI_OK)
            return CLI_FAIL;
        double t0 = cli_now();
        glcv_status st = cli_subtractor_frames(run->sub, &run->frame, 1);
        run->segment_ms += 1e3 * (cli_now() - t0);
        if (st != GLCV_OK)
            return cli_lib_error(path, st);
        run->segmented++;
        if (k < run->first)
            continue;
        st = cli_subtractor_read_masks(run->sub, &run->mask);
        if (st != GLCV_OK)
            return cli_lib_error("cannot read the mask", st);
        if (score_mask(run, k) != CLI_OK)
            return CLI_FAIL;
        if (run->opt->save_masks && save_cdnet_mask(run, k) != CLI_OK)
            return CLI_FAIL;
    }
    cli_progress_show(&run->bar, run->bar.done);
    return CLI_OK;
}

/* ---- results ------------------------------------------------------------------------------------- */

static void print_eval(const eval_run *run, const glcv_segment_metrics *m)
{
    const glcv_segment_params *p = &run->resolved;
    const glcv_segment_score *s = &run->score;
    int scored = run->last - run->first + 1;
    int eth = run->sub->method == CLI_METHOD_ETH;
    char parameters[160], preset[32] = "";
    cli_subtractor_describe(run->sub, parameters, sizeof parameters);
    if (eth)
        snprintf(preset, sizeof preset, ", preset %s", p->preset == GLCV_SEGMENT_PAPER ? "paper" : "calibrated");
    printf("%s: F %.4f (recall %.4f, precision %.4f, PWC %.3f) on frames %d..%d, engine %s, %s, background %s%s\n",
           run->name, m->f, m->recall, m->precision, m->pwc, run->first, run->last,
           glcv_engine_mode_string(run->sub->engine), parameters, background_names[run->opt->background], preset);
    printf("  %-12s %.4f\n", "recall", m->recall);
    printf("  %-12s %.4f\n", "precision", m->precision);
    printf("  %-12s %.4f\n", "F-measure", m->f);
    printf("  %-12s %.4f\n", "specificity", m->specificity);
    printf("  %-12s %.6f\n", "FPR", m->fpr);
    printf("  %-12s %.6f\n", "FNR", m->fnr);
    printf("  %-12s %.4f\n", "PWC", m->pwc);
    printf("  %-12s TP %llu FP %llu FN %llu TN %llu\n", "pixels", (unsigned long long)s->tp,
           (unsigned long long)s->fp, (unsigned long long)s->fn, (unsigned long long)s->tn);
    printf("  %-12s %d scored, %d segmented (from frame %d); %.3f ms per frame (segmentation call)\n", "frames",
           scored, run->segmented, run->start, run->segmented ? run->segment_ms / (double)run->segmented : 0.0);
    if (run->opt->background == BACKGROUND_MEDIAN)
        printf("  %-12s the exact median of %d warm-up frames\n", "background", run->warmup_used);
    else if (eth || run->sub->method == CLI_METHOD_VSAM)
        printf("  %-12s learned from %d warm-up frames (the %s)\n", "background", run->warmup_used,
               eth && p->preset == GLCV_SEGMENT_PAPER ? "mean of all of them" : "median of up to 16 of them");
    else
        printf("  %-12s none; thresholds learned from %d warm-up frames\n", "background", run->warmup_used);
    if (eth && run->calibrated && run->noise_frames > 0) /* the segmenter's calibration */
        printf("  %-12s on %d warm-up frames: noise level g %.1f\n", "calibrated", run->noise_frames, run->noise);
    else if (eth && run->calibrated)
        printf("  %-12s on the learned frames\n", "calibrated");
    else if (eth)
        printf("  %-12s no (the paper's values and those given)\n", "calibrated");
    printf("  %-12s %llu of %dx%d pixels (%s)\n", "ROI", (unsigned long long)run->roi_pixels, run->width, run->height,
           run->roi_path);
    if (run->opt->save_masks)
        printf("  %-12s %d masks in %s\n", "written", run->written, run->opt->save_masks);
    if (s->unknown)
        cli_warning("%llu ground-truth pixels have values other than 0, 50, 85, 170 and 255: not scored",
                    (unsigned long long)s->unknown);
}

static int write_csv_row(eval_run *run, const glcv_segment_metrics *m)
{
    const glcv_segment_params *p = &run->resolved;
    const glcv_bgsub_params *b = &run->sub->bgsub_resolved;
    const glcv_segment_score *s = &run->score;
    int eth = run->sub->method == CLI_METHOD_ETH;
    FILE *f = run->csv;
    int empty = fseek(f, 0, SEEK_END) == 0 && ftell(f) == 0;
    if (empty)
        fprintf(f, "video,first,last,background,preset,engine,Ts,Odc,B1,B2,iterations,seed,adapt,lead_in,"
                   "TP,FP,FN,TN,recall,precision,F,specificity,FPR,FNR,PWC,noise,method,alpha,c,min_threshold,gray\n");
    char noise[32] = ""; /* g, where the calibration says it (--background median) */
    if (run->noise_frames > 0)
        snprintf(noise, sizeof noise, "%g", run->noise);
    /* the columns of the other method stay empty */
    char segmenter[192] = ",,,,,,,", bgsub[96] = ",,,";
    if (eth)
        snprintf(segmenter, sizeof segmenter, "%s,%s,%g,%g,%g,%g,%d,%llu,%g",
                 p->preset == GLCV_SEGMENT_PAPER ? "paper" : "calibrated", glcv_engine_mode_string(run->sub->engine),
                 (double)p->ts, (double)p->odc, (double)p->b1, (double)p->b2, p->iterations,
                 (unsigned long long)p->seed, (double)p->adapt_rate);
    else
        snprintf(segmenter, sizeof segmenter, ",%s,,,,,,,", glcv_engine_mode_string(run->sub->engine));
    if (!eth)
    {
        char alpha[32] = ""; /* vsam only */
        if (b->method == GLCV_BGSUB_VSAM)
            snprintf(alpha, sizeof alpha, "%g", (double)b->alpha);
        snprintf(bgsub, sizeof bgsub, "%s,%g,%g,%d", alpha, (double)b->c, (double)b->min_threshold, b->gray);
    }
    fprintf(f, "%s,%d,%d,%s,%s,%d,%llu,%llu,%llu,%llu,%.6f,%.6f,%.6f,%.6f,%.8f,%.8f,%.6f,%s,%s,%s\n", run->name,
            run->first, run->last, background_names[run->opt->background], segmenter, run->first - run->start,
            (unsigned long long)s->tp, (unsigned long long)s->fp, (unsigned long long)s->fn,
            (unsigned long long)s->tn, m->recall, m->precision, m->f, m->specificity, m->fpr, m->fnr, m->pwc,
            noise, cli_method_names[run->sub->method], bgsub);
    if (fflush(f) != 0 || ferror(f)) {
        cli_error("%s: cannot write: %s", run->opt->csv, strerror(errno));
        return CLI_FAIL;
    }
    return CLI_OK;
}

static void eval_run_free(eval_run *run)
{
    cli_progress_end(&run->bar);
    cli_subtractor_destroy(&run->sub);
    glcv_context_destroy(&run->ctx);
    glcv_image_free(&run->frame);
    glcv_image_free(&run->truth);
    glcv_image_free(&run->mask);
    glcv_image_free(&run->background);
    glcv_image_free(&run->roi);
    if (run->csv)
        fclose(run->csv);
    free(run->name);
    free(run->roi_path);
    cli_paths_free(&run->inputs);
    cli_paths_free(&run->truths);
}

/* Opens the outputs, the segmenter and the buffers. */
static int prepare(eval_run *run, const cli_args *args)
{
    const eval_options *o = run->opt;
    int rc = o->save_masks ? cli_make_dir(o->save_masks) : CLI_OK;
    if (rc == CLI_OK && o->csv && !(run->csv = fopen(o->csv, "a"))) {
        cli_error("%s: %s", o->csv, strerror(errno));
        rc = CLI_FAIL;
    }
    if (rc == CLI_OK)
        rc = cli_subtractor_create(&o->method, args, run->width, run->height, 1, 0, o->quiet, &run->logger, &run->ctx,
                                   &run->sub);
    if (rc == CLI_OK)
        run->resolved = run->sub->seg_resolved;
    if (rc == CLI_OK) {
        glcv_status st = glcv_image_alloc(run->width, run->height, GLCV_PIXEL_GRAY8, &run->mask);
        if (st == GLCV_OK)
            st = glcv_image_alloc(run->width, run->height, GLCV_PIXEL_RGB8, &run->background);
        if (st != GLCV_OK)
            rc = cli_lib_error("cannot allocate the image buffers", st);
    }
    return rc;
}

/* ---- glcv eval otb: the first ground-truth boxes ---------------------------------------------- */

/* The largest coordinate the tracker takes (glcv_track refuses windows beyond +-2^24). */
#define OTB_MAX_COORDINATE 16777216.0

/* glcv eval otb (cmd_track.c) starts the tracker from each sequence's first ground-truth box, as
 * if it had been given as --roi, and would name it so. A first box the tracker cannot start from
 * is named here by its file and line instead, for every sequence before any is run. What cannot
 * be read or parsed here is left to cmd_eval_otb, which reports it. `dir` is a SEQDIR. */
static int check_otb_first_box(const char *dir)
{
    char *path = cli_path_join(dir, "groundtruth_rect", ".txt");
    if (!path)
        return cli_out_of_memory();
    FILE *f = fopen(path, "r");
    char line[512];
    int lineno = 0, found = 0, rc = CLI_OK;
    double v[4];
    while (f && !found && fgets(line, sizeof line, f)) { /* the first line that is not empty */
        lineno++;
        found = cli_parse_box_line(line, v);
    }
    if (f)
        fclose(f);
    cli_paths files = {0};
    struct stat sb;
    char *img = found > 0 ? cli_path_join(dir, "img", "") : NULL;
    int w = 0, h = 0, channels = 0;
    if (found > 0 && (fabs(v[0]) > OTB_MAX_COORDINATE || fabs(v[1]) > OTB_MAX_COORDINATE ||
                      fabs(v[2]) > OTB_MAX_COORDINATE || fabs(v[3]) > OTB_MAX_COORDINATE)) {
        cli_error("%s:%d: the first box %g,%g,%g,%g, where the tracker starts, is beyond +-%.0f", path, lineno, v[0],
                  v[1], v[2], v[3], OTB_MAX_COORDINATE);
        rc = CLI_FAIL;
    } else if (found > 0 && (lrint(v[2]) < 1 || lrint(v[3]) < 1)) {
        cli_error("%s:%d: the first box %g,%g,%g,%g, where the tracker starts, has no area (width and height must "
                  "be >= 1)", path, lineno, v[0], v[1], v[2], v[3]);
        rc = CLI_FAIL;
    } else if (img && stat(img, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        /* these print what is wrong, as cmd_eval_otb would */
        rc = cli_collect_images(&img, 1, &files);
        if (rc == CLI_OK && files.count > 0)
            rc = cli_probe_image(files.items[0], NULL, &w, &h, &channels);
    }
    if (rc == CLI_OK && w > 0) {
        /* as --roi is checked: some of the box inside the frames (x, y 1-based in the file) */
        long x = lrint(v[0] - 1.0), y = lrint(v[1] - 1.0), bw = lrint(v[2]), bh = lrint(v[3]);
        if (x >= w || y >= h || x + bw <= 0 || y + bh <= 0) {
            cli_error("%s:%d: the first box %g,%g,%g,%g, where the tracker starts, is outside the %dx%d frames", path,
                      lineno, v[0], v[1], v[2], v[3], w, h);
            rc = CLI_FAIL;
        }
    }
    cli_paths_free(&files);
    free(img);
    free(path);
    return rc;
}

int cmd_eval(int argc, char **argv)
{
    if (argc > 0 && strcmp(argv[0], "otb") == 0) {
        /* The SEQDIRs: the arguments that are folders holding a ground truth (no option takes one). */
        int help = 0, rc = CLI_OK;
        for (int i = 1; i < argc; i++)
            help |= strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0;
        for (int i = 1; i < argc && !help && rc == CLI_OK; i++) {
            char *truth = argv[i][0] != '-' ? cli_path_join(argv[i], "groundtruth_rect", ".txt") : NULL;
            if (truth && cli_is_file(truth))
                rc = check_otb_first_box(argv[i]);
            free(truth);
        }
        return rc == CLI_OK ? cmd_eval_otb(argc - 1, argv + 1) : rc;
    }
    eval_options o = {.lead_in = DEFAULT_LEAD_IN};
    const cli_option options[] = {
        CLI_QUIET_VERBOSE_OPTIONS(&o.quiet, &o.verbose),
        CLI_METHOD_OPTIONS(&o.method),
        {"--background", NULL, &o.background, .kind = CLI_CHOICE, .choices = background_names, .what = "a background model"},
        {"--lead-in", NULL, &o.lead_in, .kind = CLI_INT, .max = 1000000},
        {"--save-masks", NULL, &o.save_masks, .kind = CLI_STRING, .what = "folder name"},
        {"--csv", NULL, &o.csv, .kind = CLI_STRING, .what = "file name"},
        {"--calibrate", NULL, &o.calibrate, .kind = CLI_FLAG},
        {NULL},
    };
    cli_args args;
    int rc = cli_parse(options, argc, argv, &args);
    if (rc == CLI_OK)
        rc = cli_method_check(&o.method, &args);
    if (rc != CLI_OK)
        return rc;
    if (o.calibrate)
        cli_warning("--calibrate is ignored: the parameters are calibrated on the warm-up frames by default "
                    "(--paper-defaults: not)");
    if (o.background == BACKGROUND_MEAN) {
        cli_warning("--background mean is now called --background learn (the library's learning)");
        o.background = BACKGROUND_LEARN;
    }
    eval_run run = {.opt = &o, .logger = cli_logger(o.verbose)};
    rc = plan_eval(&run, &args);
    if (rc == CLI_OK)
        rc = prepare(&run, &args);
    if (rc == CLI_OK) {
        /* median: the frames of the median read twice, then the calibration frames */
        int warmup = run.first - 1, step = (warmup + GLCV_IMAGE_MEDIAN_MAX_FRAMES - 1) / GLCV_IMAGE_MEDIAN_MAX_FRAMES;
        size_t background_steps = (size_t)warmup;
        if (o.background == BACKGROUND_MEDIAN)
            background_steps = 2u * (size_t)((warmup + step - 1) / step) +
                               (size_t)(warmup < CALIBRATION_FRAMES ? warmup : CALIBRATION_FRAMES);
        run.bar = cli_progress_start(o.quiet, background_steps + (size_t)(run.last - run.start + 1));
        rc = learn_background(&run);
    }
    if (rc == CLI_OK)
        rc = eval_frames(&run);
    cli_progress_end(&run.bar);
    if (rc == CLI_OK) {
        glcv_segment_metrics m;
        glcv_segment_score_metrics(&run.score, &m);
        print_eval(&run, &m);
        if (run.csv)
            rc = write_csv_row(&run, &m);
    }
    eval_run_free(&run);
    return rc;
}
