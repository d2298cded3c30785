/* glcv segment: segments image files, folders, a media source (video file, camera, lavfi graph,
 * image folder or sequence through glcv's media input) or the built-in synthetic sequence against a
 * background (a file, one learned from the first frames, or the sequence's own), writes masks and
 * panels, and prints a summary (frames, wall time and frames per second, foreground, quality
 * against the synthetic truth, with --timing the time of each stage).
 *
 * The frames flow through a pipeline (pipeline.h): image files are decoded by the worker threads,
 * a media source or the synthetic sequence is read by one reader thread, the segmenter runs on
 * this thread (whose OpenGL context it was created in) strictly in frame order, since its MRF
 * prior and background adaptation carry over from frame to frame, and the workers encode and
 * write the PNG files.
 *
 * Why one file of about 1,000 lines: 170 of them are the help text; the rest plans, runs and
 * reports one segment_run (inputs and outputs of every stream, the pipeline's callbacks, the
 * summary), each part reading the same struct. */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "commands.h"
#include "pipeline.h"
#include "segmenter.h"
#include "source.h"
#include "sources.h"
#include "subtractor.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_TIMINGS = 64, DEFAULT_SYNTHETIC_FRAMES = 60, MAX_THREADS = 256 };

const char cmd_segment_help[] =
    "usage: glcv segment --bg BACKGROUND FRAME... -o OUTDIR [options]\n"
    "       glcv segment --learn N FRAME... -o OUTDIR [options]\n"
    "       glcv segment (--bg BACKGROUND | --learn N) SOURCE -o OUTDIR [options]\n"
    "       glcv segment --synthetic [N] -o OUTDIR [options]\n"
    "       glcv segment --method diff2|diff3 FRAME... -o OUTDIR [options]\n"
    "       glcv segment --batch [--bg BACKGROUND | --learn N] INPUT... -o OUTDIR [options]\n"
    "       glcv segment --sources LIST [--bg BACKGROUND | --learn N] -o OUTDIR [options]\n"
    "\n"
    "Segments every frame into foreground (255) and background (0) against a background image\n"
    "and writes OUTDIR/<frame file name without extension>_mask.png (8-bit grey); frames of a\n"
    "video or another media SOURCE write OUTDIR/frame_NNNNNN_mask.png, NNNNNN the frame's index in\n"
    "the source from 0. The MRF prior (eth) and the background and frame history (vsam, diff2,\n"
    "diff3) carry over from frame to frame, so give the frames in their order.\n"
    "\n"
    "A FRAME that is a folder stands for its image files (.png .jpg .jpeg .bmp .tga .ppm .pgm,\n"
    "any case; hidden files skipped), sorted by name, except the files kept beside frames (as\n"
    "glcv synth and CDnet folders do): background.*, dynamic.*, ROI.*, truth_*, gt_* and gt<digit>*\n"
    "(a folder of nothing else stands for all of them). A FRAME that is a video file (.avi .mp4 .mkv\n"
    ".mov .webm .mpg .mpeg .m4v .ts .flv) is read as with --video and must be the only one. The\n"
    "frames and the background must all have the same size. Everything is checked before\n"
    "anything is written (the image files' headers; a media source is opened), and every file is\n"
    "written under a temporary name and renamed, so no output is ever half-written. When a frame\n"
    "fails (a file that does not decode, say), the frames before it are finished and written,\n"
    "none after it is segmented, and the error names the frame (exit status 1); when writing a\n"
    "file fails, frames after it that were segmented already may be written too, each whole.\n"
    "\n"
    "background (one of; diff2 and diff3 need none and take no --bg):\n"
    "  --bg FILE          the background image (vsam: learned from this one image: B is it, T\n"
    "                     the minimum threshold)\n"
    "  --learn N          learn the background from the first N frames (the per-pixel median\n"
    "                     of up to 16 of them, and the parameters calibrated on them; see below)\n"
    "                     and report the parameters. Those N frames are only learned from: the\n"
    "                     frames after them are segmented. When N equals the number of image\n"
    "                     files, the background is learned from all of them and all of them are\n"
    "                     segmented; a media source is read once, so it needs more than N frames.\n"
    "                     vsam: B is the per-pixel median and T the frames' spread around it;\n"
    "                     diff2, diff3: T only\n"
    "  --synthetic [N]    the built-in synthetic sequence (see 'glcv synth'): N frames (default\n"
    "                     60) segmented against its clean background; writes panels by default\n"
    "                     and reports precision/recall against its ground truth\n"
    "  --size WxH         frame size of --synthetic (default 320x240); of a media source: its\n"
    "                     frames are scaled to it (cameras are asked for it)\n"
    "\n"
    "media sources (SOURCE; glcv's media input, built with FFmpeg: without it these options and\n"
    "video files fail with exit status 1):\n"
    "  --video FILE       a video file\n"
    "  --camera DEV       a V4L2 camera, e.g. /dev/video0\n"
    "  --frames DIR       a folder of images, in name order\n"
    "  --sequence PATTERN numbered images, e.g. 'img_%04d.png'\n"
    "  --lavfi GRAPH      an FFmpeg lavfi graph, e.g. 'testsrc=size=320x240:rate=25'\n"
    "  --rate FPS         camera rate; rate of folders and sequences\n"
    "  --camera-format F  yuyv or mjpeg\n"
    "  --mode M           every-frame: every frame in order, as fast as it is segmented (the\n"
    "                     default, except for cameras); live: at the source's own rate, frames\n"
    "                     dropped when segmenting is slower (the default for cameras; the output\n"
    "                     names keep the source's frame indices)\n"
    "  --loop, --no-loop  start a video, folder or sequence again at its end [--no-loop]\n"
    "  --stall-timeout S  a source that sends no data for S seconds (a network stream or camera\n"
    "                     that stopped) ends the run with an error, the frames before it written\n"
    "                     [10]\n"
    "  --max-frames N     read at most N frames (learned ones included), of any input. Cameras,\n"
    "                     lavfi graphs and --loop run until N frames or Ctrl-C\n"
    "\n"
    "several inputs at once:\n"
    "  --batch            every INPUT argument is an input of its own: a folder of images (in name\n"
    "                     order), or a video file; all folders or all video files, of one frame\n"
    "                     size. Frame k of every input is processed as one set, by one object for\n"
    "                     all inputs (one upload and one GPU pass per set). The masks of input k (k = 0, 1,\n"
    "                     ... in the order given) go to OUTDIR/k/, named as for a single input;\n"
    "                     every input's masks are those it would get alone. Folders must hold the\n"
    "                     same number of images (an error otherwise); a batch of videos ends with\n"
    "                     its shortest video. --bg is every input's background, --learn N learns\n"
    "                     each input's from its first N frames\n"
    "  --gpus N           spread the inputs of --batch or --sources over N GPUs, consecutive\n"
    "                     inputs together, one OpenGL context (the EGL device of CUDA device g) and\n"
    "                     one object per GPU (with --sources, their decoders too), all GPUs working\n"
    "                     at once; 0: every GPU CUDA sees [1]. The outputs do not depend on N\n"
    "\n"
    "camera lists:\n"
    "  --sources LIST     a text file with one source per line: a video file, a URL (rtsp://,\n"
    "                     http://, tcp://, ...) or a camera (/dev/videoN); blank lines and lines\n"
    "                     starting with # are skipped. The source on line k (from 0) writes its\n"
    "                     masks to OUTDIR/camKKK/ (KKK: k with 3 digits at least), named and made as\n"
    "                     a run on that source alone would make them. Sources of one frame size are\n"
    "                     one set: decoded together (H.264 and HEVC on the GPU's decoders where it\n"
    "                     has them), converted on the GPU into one texture array and processed by\n"
    "                     one object for all of them; other sizes make sets of their own (--size WxH:\n"
    "                     every source scaled to one size, one set). URLs and cameras are read live:\n"
    "                     a set does not wait for one that falls behind (its frames are dropped),\n"
    "                     and one that fails is opened again after 1, 2, 4 ... 30 s. Files are read\n"
    "                     frame by frame. A source that fails is reported with its line and the\n"
    "                     others go on; the exit status is 1 then. The run ends when the files have\n"
    "                     ended and no live source runs, at --max-frames, or at Ctrl-C. stderr gets\n"
    "                     a line per set and the progress (cameras, frames/s, failures), and at the\n"
    "                     end when each set opened, saw its first frames, learned and ended\n"
    "  --decoder D        auto, cpu or nvdec: which decoders the sets use [auto: NVDEC for H.264 and\n"
    "                     HEVC where the GPU has it and room (--nvdec-sessions), CPU threads for the\n"
    "                     rest; nvdec: NVDEC for every source it decodes]\n"
    "  --nvdec-sessions N with auto: sources per GPU on NVDEC for frames below 1 Mpixel at most,\n"
    "                     the other such sources on CPU threads; 0: no limit [64]\n"
    "  --cpu-decode F     with auto or nvdec: the share F (0..1) of the NVDEC sources decoded on CPU\n"
    "                     threads instead, to use spare processors [0]\n"
    "\n"
    CLI_METHOD_HELP
    "\n"
    CLI_SEGMENTER_HELP
    CLI_SEGMENTER_ENGINE_HELP
    "\n"
    "output:\n"
    "  -o, --output DIR   output folder, created if missing (needed only when files are written)\n"
    "  --panels           also write DIR/<name>_panel.png: frame | background | mask, side by side\n"
    "  --no-panels        no panels (the default, except with --synthetic)\n"
    "  --no-masks         do not write the masks\n"
    "  --threads N        worker threads that decode image files and encode and write the PNG\n"
    "                     files, 1..256 [one fewer than the online processors, at least 1]; the\n"
    "                     segmenter runs on one more thread, in frame order, and keeps a\n"
    "                     processor of its own. The outputs do not depend on N\n"
    "  --timing           also print each stage's time per frame (read, upload, GPU passes,\n"
    "                     download, encode: mean and median), which stage limits the frame rate,\n"
    "                     and the GPU time of each kind of pass in the last frame\n"
    "  -q, --quiet        no engine line and no progress bar on stderr\n"
    "  -v, --verbose      print the library's debug messages\n"
    "  -h, --help         show this help\n"
    "\n"
    "Options may also be written --name=value. stderr gets the line 'glcv: engine <engine> on\n"
    "<OpenGL renderer | version | platform>' first, with --learn a line with the parameters\n"
    "learned, then a progress bar with the frames per second when it is a terminal. stdout gets\n"
    "a summary: the number of frames segmented; the wall time per frame of the segmentation call\n"
    "with wait (upload + GPU passes + waiting for the GPU; not file reading or writing): mean,\n"
    "median, min and max; the wall time of the whole pipeline and its frames per second, end to\n"
    "end; the foreground fraction; with --synthetic, precision, recall and F against the ground\n"
    "truth. Ctrl-C stops reading: the frames read are finished, the summary printed, and the exit\n"
    "status is 130.\n"
    "Examples: glcv segment --learn 30 --video vtest.avi -o masks --timing\n"
    "          glcv segment --method vsam --learn 30 --batch cam0/ cam1/ cam2/ -o masks\n"
    "          glcv segment --method vsam --learn 30 --sources cameras.txt -o masks\n";

/* Where the frames come from. */
typedef enum input_kind { INPUT_FILES, INPUT_MEDIA, INPUT_SYNTHETIC } input_kind;

typedef struct segment_options {
    int quiet, verbose;
    const char *outdir;
    const char *background; /* --bg */
    int learn;              /* --learn N; 0 = not given */
    int synthetic;          /* --synthetic [N]: number of frames; 0 = not given */
    int batch;              /* --batch: every argument is an input of its own */
    cli_source src;         /* the media source options, --size and --max-frames */
    cli_method method;      /* --method and its parameters, --engine */
    int timing;
    int panels; /* -1: default (on for --synthetic only) */
    int masks;
    int threads; /* 0: one fewer than the online processors, at least 1 */
    int gpus;    /* --gpus N: GPUs the inputs of a batch are spread over; 0: all */
    const char *sources; /* --sources LIST */
    int decoder;         /* --decoder: index into cli_decoder_names */
    double cpu_decode;   /* --cpu-decode F */
    int nvdec_sessions;  /* --nvdec-sessions N */
} segment_options;

/* A growing list of per-frame values, in frame order. */
typedef struct series {
    double *v;
    size_t count, capacity;
} series;

/* The stages of the --timing table. */
enum { STAGE_READ, STAGE_UPLOAD, STAGE_GPU, STAGE_DOWNLOAD, STAGE_ENCODE, STAGE_PROCESS, STAGE_COUNT };

/* The buffers and results of one frame set in flight (a frame of every input); reused by set
 * k + slots. The arrays have one entry per input (stream). */
typedef struct frame_slot {
    glcv_image *frame, *mask, *background, *panel;
    glcv_image truth;
    int64_t *index;     /* the frame's index in a media source */
    double *foreground; /* percentage of foreground pixels */
    int segmented;      /* the set is segmented (not only learned from) */
    double call_ms;     /* wall time of the segmentation call (with wait) */
    int wrote_masks, wrote_panels;
    double ms[STAGE_COUNT]; /* the time of each stage */
} frame_slot;

typedef struct segment_run {
    const segment_options *opt;
    glcv_logger logger;
    input_kind input;
    int streams;            /* inputs processed together: 1, or the --batch inputs */
    cli_paths *inputs;      /* INPUT_FILES, per input: every input file, folders expanded */
    cli_paths *stems;       /* INPUT_FILES, per input: output name stem of every segmented frame */
    char **outdirs;         /* per input: its output folder (OUTDIR, or OUTDIR/<k> in a batch) */
    int learn_items;        /* frames that are only learned from, at the start */
    int64_t items;          /* frames through the pipeline (< 0: until the source ends) */
    int width, height;
    int write_masks, write_panels;
    glcv_context *ctx;
    glcv_synth *synth;
    glcv_media **media;     /* INPUT_MEDIA, per input */
    cli_subtractor *sub;
    frame_slot *slots;
    int slot_count, workers;
    series frame_ms;   /* wall time of each frame's segmentation call */
    series foreground; /* foreground percentage of each frame (of every input) */
    series stage[STAGE_COUNT];
    glcv_segment_score score; /* against the synthetic ground truth */
    int64_t read, segmented;
    int written_masks, written_panels;
    double wall_s;
    cli_progress bar;
    glcv_timing timings[MAX_TIMINGS];
    int timing_count;
} segment_run;

static int series_add(series *s, double value)
{
    if (s->count == s->capacity) {
        size_t capacity = s->capacity ? 2 * s->capacity : 1024;
        double *v = realloc(s->v, capacity * sizeof *v);
        if (!v)
            return cli_out_of_memory();
        s->v = v;
        s->capacity = capacity;
    }
    s->v[s->count++] = value;
    return CLI_OK;
}

static double series_mean(const series *s)
{
    double sum = 0.0;
    for (size_t k = 0; k < s->count; k++)
        sum += s->v[k];
    return s->count ? sum / (double)s->count : 0.0;
}

/* The median (sorts the values). */
static double series_median(series *s)
{
    return cli_median(s->v, s->count);
}

/* ---- planning and validation --------------------------------------------------------------------- */

/* INPUT_FILES: the file read as frame `item` (with --learn N for all N files, each is read twice). */
static int file_of(const segment_run *run, int64_t item)
{
    return (int)(item >= run->inputs[0].count ? item - run->inputs[0].count : item);
}

static int make_stems(segment_run *run, int stream)
{
    int frames = (int)run->items - run->learn_items;
    const cli_paths *in = &run->inputs[stream];
    cli_paths *stems = &run->stems[stream];
    for (int k = 0; k < frames; k++) {
        char *stem = cli_path_stem(in->items[file_of(run, run->learn_items + k)]);
        int rc = stem ? cli_paths_add(stems, stem) : cli_out_of_memory();
        free(stem);
        if (rc != CLI_OK)
            return rc;
    }
    return cli_check_distinct_stems(stems->items, stems->count, "_mask.png");
}

/* --batch: every argument a folder, or every argument a video file. *kind: CLI_SOURCE_VIDEO for
 * videos, -1 for folders. */
static int check_batch(const segment_options *opt, const cli_args *args, int *kind)
{
    int source = -1;
    int rc = cli_source_kind(&opt->src, &source);
    if (rc != CLI_OK)
        return rc;
    if (source >= 0)
        return cli_usage("--batch takes its inputs as arguments (folders or video files), not from a source option");
    if (opt->synthetic)
        return cli_usage("--batch and --synthetic exclude each other");
    if (args->count == 0)
        return cli_usage("no input: --batch takes one or more folders or video files");
    int videos = 0;
    for (int i = 0; i < args->count; i++) {
        if (cli_is_video_path(args->items[i]))
            videos++;
        else if (cli_is_file(args->items[i]))
            return cli_usage("%s: an input of --batch is a folder of images or a video file", args->items[i]);
    }
    if (videos > 0 && videos < args->count)
        return cli_usage("--batch takes folders or video files, not both");
    *kind = videos ? CLI_SOURCE_VIDEO : -1;
    const void *media_only[] = {&opt->src.rate, &opt->src.camera_format, &opt->src.mode, &opt->src.loop,
                                &opt->src.size, &opt->src.stall_timeout};
    const char *names[] = {"--rate", "--camera-format", "--mode", "--loop and --no-loop", "--size",
                           "--stall-timeout"};
    for (int i = 0; i < 6 && !videos; i++)
        if (cli_given(args, media_only[i]))
            return cli_usage("%s applies only to media sources, not to a batch of folders", names[i]);
    if (cli_given(args, &opt->src.camera_format))
        return cli_usage("--camera-format applies only to cameras");
    return CLI_OK;
}

/* The combination of options and arguments (usage errors); *kind gets the media source: the
 * source option given (CLI_SOURCE_*), CLI_SOURCE_VIDEO for a video file given as a FRAME (or
 * video files in a batch), or -1. */
static int check_segment_options(const segment_options *opt, const cli_args *args, int *kind)
{
    int rc = cli_method_check(&opt->method, args);
    if (rc == CLI_OK)
        rc = opt->batch ? check_batch(opt, args, kind) : cli_source_of_args(&opt->src, args, kind);
    if (rc != CLI_OK)
        return rc;
    if (cli_given(args, &opt->gpus) && !opt->batch)
        return cli_usage("--gpus spreads the inputs of --batch over GPUs: give --batch");
    if (cli_given(args, &opt->gpus) && opt->method.seg.engine == GLCV_ENGINE_CPU)
        return cli_usage("--gpus needs a GPU engine, not --engine cpu");
    int media = *kind >= 0;
    int diff = opt->method.method == CLI_METHOD_DIFF2 || opt->method.method == CLI_METHOD_DIFF3;
    int backgrounds = (opt->background != NULL) + (opt->learn > 0) + (opt->synthetic > 0);
    if (diff && opt->background)
        return cli_usage("--bg: --method %s compares frames with the frames before them and takes no background "
                         "(--learn N learns its thresholds)",
                         cli_method_names[opt->method.method]);
    if (backgrounds == 0 && !diff)
        return cli_usage("no background: give --bg FILE, --learn N or --synthetic");
    if (backgrounds > 1)
        return cli_usage("--bg, --learn and --synthetic exclude each other");
    if (opt->synthetic && (args->count > 0 || media))
        return cli_usage("--synthetic takes no input (got '%s')", args->count ? args->items[0] : "a media source");
    if (!opt->synthetic && !media && args->count == 0)
        return cli_usage("no input frames");
    if (!opt->synthetic && !media && cli_given(args, &opt->src.size))
        return cli_usage("--size applies only to --synthetic and media sources");
    if (media && opt->src.max_frames > 0 && opt->learn >= opt->src.max_frames)
        return cli_usage("--learn %d needs more than --max-frames %d: a media source is read once", opt->learn,
                         opt->src.max_frames);
    return CLI_OK;
}

/* The image files of one input: all FRAME arguments, or (a batch) the folder args->items[stream]. */
static int collect_input(segment_run *run, const cli_args *args, int stream)
{
    const segment_options *opt = run->opt;
    cli_paths *in = &run->inputs[stream];
    int rc = opt->batch ? cli_collect_images(&args->items[stream], 1, in)
                        : cli_collect_images(args->items, args->count, in);
    if (rc != CLI_OK)
        return rc;
    if (opt->src.max_frames > 0 && opt->src.max_frames < in->count) {
        for (int i = opt->src.max_frames; i < in->count; i++)
            free(in->items[i]);
        in->count = opt->src.max_frames;
    }
    if (stream > 0 && in->count != run->inputs[0].count) {
        cli_error("%s has %d image%s but %s has %d: the inputs of a batch must have the same number of frames",
                  args->items[stream], in->count, in->count == 1 ? "" : "s", args->items[0], run->inputs[0].count);
        return CLI_FAIL;
    }
    return CLI_OK;
}

static int plan_files(segment_run *run, const cli_args *args)
{
    const segment_options *opt = run->opt;
    int rc = CLI_OK;
    for (int i = 0; i < run->streams && rc == CLI_OK; i++)
        rc = collect_input(run, args, i);
    if (rc != CLI_OK)
        return rc;
    int count = run->inputs[0].count;
    if (opt->learn > count)
        return cli_usage("--learn %d: only %d input frame%s", opt->learn, count, count == 1 ? "" : "s");
    const glcv_logger *probe_logger = opt->verbose ? &run->logger : NULL;
    const char *reference = run->inputs[0].items[0];
    rc = cli_common_size(run->inputs[0].items, count, probe_logger, &run->width, &run->height);
    for (int i = 1; i < run->streams && rc == CLI_OK; i++)
        for (int k = 0; k < count && rc == CLI_OK; k++)
            rc = cli_check_size(run->inputs[i].items[k], reference, run->width, run->height, probe_logger);
    if (rc == CLI_OK && opt->background)
        rc = cli_check_size(opt->background, reference, run->width, run->height, probe_logger);
    if (rc != CLI_OK)
        return rc;
    run->learn_items = opt->learn;
    run->items = count + (opt->learn == count ? opt->learn : 0);
    for (int i = 0; i < run->streams && rc == CLI_OK; i++)
        rc = make_stems(run, i);
    return rc;
}

/* Opens input `stream`: the source of the options, or (a batch) the video file args->items[stream]. */
static int open_media(segment_run *run, const cli_args *args, int kind, int stream, int *width, int *height)
{
    const segment_options *opt = run->opt;
    if (!opt->batch)
        return cli_source_open_args(&opt->src, args, kind, opt->quiet, &run->logger, &run->media[stream], width,
                                    height);
    cli_args one = *args;
    one.items = &args->items[stream];
    one.count = 1;
    return cli_source_open_args(&opt->src, &one, kind, opt->quiet, &run->logger, &run->media[stream], width, height);
}

static int plan_media(segment_run *run, const cli_args *args, int kind)
{
    const segment_options *opt = run->opt;
    for (int i = 0; i < run->streams; i++) {
        int w = 0, h = 0;
        int rc = open_media(run, args, kind, i, &w, &h);
        if (rc != CLI_OK)
            return rc;
        if (i == 0) {
            run->width = w;
            run->height = h;
        } else if (w != run->width || h != run->height) {
            cli_error("%s's frames are %dx%d but %s's are %dx%d: the inputs of a batch must have one size (or give "
                      "--size)",
                      args->items[i], w, h, args->items[0], run->width, run->height);
            return CLI_FAIL;
        }
    }
    if (opt->background) {
        const glcv_logger *probe_logger = opt->verbose ? &run->logger : NULL;
        int w = 0, h = 0, channels = 0;
        if (cli_probe_image(opt->background, probe_logger, &w, &h, &channels) != CLI_OK)
            return CLI_FAIL;
        if (w != run->width || h != run->height) {
            cli_error("%s is %dx%d but the input's frames are %dx%d: give --size %dx%d or a background of their size",
                      opt->background, w, h, run->width, run->height, w, h);
            return CLI_FAIL;
        }
    }
    run->learn_items = opt->learn;
    run->items = opt->src.max_frames > 0 ? opt->src.max_frames : -1;
    return CLI_OK;
}

/* The output folders: OUTDIR, or OUTDIR/<k> for input k of a batch. */
static int plan_outdirs(segment_run *run)
{
    if (!(run->outdirs = calloc((size_t)run->streams, sizeof *run->outdirs)))
        return cli_out_of_memory();
    for (int i = 0; i < run->streams; i++) {
        char name[16];
        snprintf(name, sizeof name, "%d", i);
        run->outdirs[i] = run->opt->batch ? cli_path_join(run->opt->outdir, name, "") : strdup(run->opt->outdir);
        if (!run->outdirs[i])
            return cli_out_of_memory();
    }
    return CLI_OK;
}

static int plan_segment(segment_run *run, const cli_args *args)
{
    const segment_options *opt = run->opt;
    int kind = -1;
    int rc = check_segment_options(opt, args, &kind);
    if (rc != CLI_OK)
        return rc;
    run->write_masks = opt->masks;
    run->write_panels = opt->panels == 1 || (opt->panels == -1 && opt->synthetic > 0);
    if ((run->write_masks || run->write_panels) && !opt->outdir)
        return cli_usage("no output folder: give -o OUTDIR (or --no-masks%s)", run->write_panels ? " --no-panels" : "");
    /* The segmenter's thread limits the frame rate: by default it keeps a processor to itself. */
    run->workers = opt->threads > 0 ? opt->threads : (cli_online_cpus() > 1 ? cli_online_cpus() - 1 : 1);
    run->slot_count = 2 * run->workers + 2;
    run->streams = opt->batch ? args->count : 1;
    if ((run->write_masks || run->write_panels) && plan_outdirs(run) != CLI_OK)
        return CLI_FAIL;
    if (opt->synthetic) {
        run->input = INPUT_SYNTHETIC;
        run->width = opt->src.size.width ? opt->src.size.width : 320;
        run->height = opt->src.size.height ? opt->src.size.height : 240;
        glcv_synth_params sp = GLCV_SYNTH_PARAMS(.width = run->width, .height = run->height,
                                                 .frames = opt->synthetic);
        glcv_status st = glcv_synth_create(&sp, &run->synth);
        if (st != GLCV_OK)
            return cli_lib_error("cannot create the synthetic sequence", st);
        run->items = opt->src.max_frames > 0 && opt->src.max_frames < opt->synthetic ? opt->src.max_frames
                                                                                      : opt->synthetic;
        return CLI_OK;
    }
    if (kind >= 0) {
        run->input = INPUT_MEDIA;
        if (!(run->media = calloc((size_t)run->streams, sizeof *run->media)))
            return cli_out_of_memory();
        return plan_media(run, args, kind);
    }
    run->input = INPUT_FILES;
    run->inputs = calloc((size_t)run->streams, sizeof *run->inputs);
    run->stems = calloc((size_t)run->streams, sizeof *run->stems);
    if (!run->inputs || !run->stems)
        return cli_out_of_memory();
    return plan_files(run, args);
}

/* ---- set-up ---------------------------------------------------------------------------------------- */

static int set_background(segment_run *run)
{
    const segment_options *opt = run->opt;
    glcv_status st = GLCV_OK;
    if (opt->learn > 0) {
        st = cli_subtractor_learn_begin(run->sub);
        return st == GLCV_OK ? CLI_OK : cli_lib_error("cannot start learning the background", st);
    }
    if (!run->synth && !opt->background) /* frame differencing without learning */
        return CLI_OK;
    glcv_image bg = {0};
    int rc = CLI_OK;
    if (run->synth) {
        st = glcv_image_alloc(run->width, run->height, GLCV_PIXEL_RGB8, &bg);
        if (st == GLCV_OK)
            st = glcv_synth_background(run->synth, &bg);
        rc = st == GLCV_OK ? CLI_OK : cli_lib_error("synthetic background", st);
        if (rc == CLI_OK && opt->method.method != CLI_METHOD_DIFF2 && opt->method.method != CLI_METHOD_DIFF3)
            rc = cli_subtractor_set_background(run->sub, &bg, "synthetic background");
    } else {
        rc = cli_load_rgb(opt->background, &run->logger, &bg);
        if (rc == CLI_OK)
            rc = cli_subtractor_set_background(run->sub, &bg, opt->background);
    }
    glcv_image_free(&bg);
    return rc;
}

static int allocate_slots(segment_run *run)
{
    int w = run->width, h = run->height, n = run->streams;
    run->slots = calloc((size_t)run->slot_count, sizeof *run->slots);
    if (!run->slots)
        return cli_out_of_memory();
    for (int s = 0; s < run->slot_count; s++) {
        frame_slot *f = &run->slots[s];
        f->frame = calloc((size_t)n, sizeof *f->frame);
        f->mask = calloc((size_t)n, sizeof *f->mask);
        f->background = calloc((size_t)n, sizeof *f->background);
        f->panel = calloc((size_t)n, sizeof *f->panel);
        f->index = calloc((size_t)n, sizeof *f->index);
        f->foreground = calloc((size_t)n, sizeof *f->foreground);
        if (!f->frame || !f->mask || !f->background || !f->panel || !f->index || !f->foreground)
            return cli_out_of_memory();
    }
    glcv_status st = GLCV_OK;
    for (int s = 0; s < run->slot_count && st == GLCV_OK; s++) {
        frame_slot *f = &run->slots[s];
        if (run->synth)
            st = glcv_image_alloc(w, h, GLCV_PIXEL_GRAY8, &f->truth);
        for (int i = 0; i < n && st == GLCV_OK; i++) {
            st = glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &f->frame[i]);
            if (st == GLCV_OK)
                st = glcv_image_alloc(w, h, GLCV_PIXEL_GRAY8, &f->mask[i]);
            if (st == GLCV_OK && run->write_panels)
                st = glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &f->background[i]);
            if (st == GLCV_OK && run->write_panels)
                st = glcv_image_alloc(3 * w, h, GLCV_PIXEL_RGB8, &f->panel[i]);
        }
    }
    return st == GLCV_OK ? CLI_OK : cli_lib_error("cannot allocate the image buffers", st);
}

/* ---- the stages ------------------------------------------------------------------------------------ */

/* Read (workers for image files; the reader thread for media sources or the synthetic sequence):
 * frame job->item of every input. A batch of media sources ends with the first of them that ends. */
static int read_frame(void *user, cli_job *job, int *end)
{
    segment_run *run = user;
    frame_slot *f = &run->slots[job->slot];
    double t0 = cli_now();
    glcv_status st = GLCV_OK;
    for (int i = 0; i < run->streams && !*end; i++) {
        if (run->input == INPUT_FILES) {
            const char *path = run->inputs[i].items[file_of(run, job->item)];
            glcv_image loaded = {0};
            st = glcv_image_load(path, GLCV_PIXEL_RGB8, &job->logger, &loaded);
            if (st != GLCV_OK)
                return cli_job_lib_error(job, path, st);
            if (loaded.width != run->width || loaded.height != run->height) {
                cli_job_fail(job, "%s is %dx%d but %s is %dx%d: all images must have the same size", path,
                             loaded.width, loaded.height, run->inputs[0].items[0], run->width, run->height);
                glcv_image_free(&loaded);
                return CLI_FAIL;
            }
            glcv_image_free(&f->frame[i]); /* the decoded buffer takes the slot's place: no copy */
            f->frame[i] = loaded;
        } else if (run->input == INPUT_MEDIA) {
            st = cli_source_read(run->media[i], &f->frame[i], job->stop, &f->index[i], end);
            if (st != GLCV_OK)
                return cli_job_lib_error(job, "the input stopped", st);
        } else {
            st = glcv_synth_frame(run->synth, (int)job->item, &f->frame[i], &f->truth);
            if (st != GLCV_OK)
                return cli_job_lib_error(job, "synthetic frame", st);
        }
    }
    f->ms[STAGE_READ] = 1e3 * (cli_now() - t0);
    return CLI_OK;
}

/* The sum of the GPU times of the last frame set's passes (0 without timer results). */
static double gpu_pass_ms(segment_run *run)
{
    glcv_timing t[MAX_TIMINGS];
    int n = 0;
    if (cli_subtractor_timings(run->sub, t, MAX_TIMINGS, &n, 1) != GLCV_OK)
        return 0.0;
    double sum = 0.0;
    for (int i = 0; i < n && i < MAX_TIMINGS; i++)
        sum += t[i].ms;
    return sum;
}

static int learn_frame(segment_run *run, const cli_job *job, const frame_slot *f)
{
    glcv_status st = cli_subtractor_learn_add(run->sub, f->frame);
    if (st != GLCV_OK)
        return cli_lib_error("cannot learn the background", st);
    if (job->item < run->learn_items - 1)
        return CLI_OK;
    cli_progress_clear(&run->bar);
    return cli_subtractor_learn_end(run->sub, run->learn_items, !run->opt->quiet);
}

/* Process (this thread, in frame order): learn from the frame set, or segment it and read the
 * masks (and the backgrounds, for panels). */
static int process_frame(void *user, cli_job *job, int *encode)
{
    segment_run *run = user;
    frame_slot *f = &run->slots[job->slot];
    double t0 = cli_now();
    f->segmented = job->item >= run->learn_items;
    if (!f->segmented) {
        *encode = 0;
        int rc = learn_frame(run, job, f);
        f->ms[STAGE_PROCESS] = 1e3 * (cli_now() - t0);
        return rc;
    }
    glcv_status st = cli_subtractor_frames(run->sub, f->frame, 1);
    double t1 = cli_now();
    if (st != GLCV_OK) {
        char name[64];
        snprintf(name, sizeof name, "frame %" PRId64, job->item);
        return cli_lib_error(run->input == INPUT_FILES ? run->inputs[0].items[file_of(run, job->item)] : name, st);
    }
    st = cli_subtractor_read_masks(run->sub, f->mask);
    double t2 = cli_now();
    if (st == GLCV_OK && run->write_panels)
        st = cli_subtractor_read_backgrounds(run->sub, f->background);
    if (st != GLCV_OK)
        return cli_lib_error("cannot read the mask or the background", st);
    f->call_ms = 1e3 * (t1 - t0);
    f->ms[STAGE_GPU] = run->opt->timing && run->sub->engine != GLCV_ENGINE_CPU ? gpu_pass_ms(run) : 0.0;
    f->ms[STAGE_UPLOAD] = fmax(0.0, 1e3 * (t1 - t0) - f->ms[STAGE_GPU]);
    f->ms[STAGE_DOWNLOAD] = 1e3 * (t2 - t1);
    f->ms[STAGE_PROCESS] = 1e3 * (cli_now() - t0);
    *encode = 1;
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

/* The output name stem of input `stream`'s segmented frame. */
static void output_stem(const segment_run *run, const cli_job *job, const frame_slot *f, int stream, char *buf,
                        size_t size)
{
    int64_t k = job->item - run->learn_items;
    if (run->input == INPUT_FILES)
        snprintf(buf, size, "%s", run->stems[stream].items[k]);
    else if (run->input == INPUT_MEDIA)
        snprintf(buf, size, "frame_%06" PRId64, f->index[stream]);
    else
        snprintf(buf, size, "frame_%0*" PRId64, cli_digits_for((int)run->items), k);
}

static int save_png(cli_job *job, const char *dir, const char *stem, const char *suffix, const glcv_image *image)
{
    char *path = cli_path_join(dir, stem, suffix);
    if (!path)
        return cli_job_fail(job, "out of memory");
    glcv_status st = glcv_image_save_png_level(path, image, GLCV_PNG_LEVEL_FAST, &job->logger);
    int rc = st == GLCV_OK ? CLI_OK : cli_job_lib_error(job, path, st);
    free(path);
    return rc;
}

/* The mask's foreground percentage. */
static double foreground_percent(const glcv_image *mask)
{
    size_t stride = glcv_image_stride(mask);
    uint64_t on = 0;
    for (int y = 0; y < mask->height; y++)
        for (int x = 0; x < mask->width; x++)
            on += mask->data[(size_t)y * stride + (size_t)x] >= 128;
    return 100.0 * (double)on / ((double)mask->width * (double)mask->height);
}

/* Encode (workers, any order): measures the masks and writes the masks and the panels. */
static int encode_frame(void *user, cli_job *job)
{
    segment_run *run = user;
    frame_slot *f = &run->slots[job->slot];
    double t0 = cli_now();
    f->wrote_masks = f->wrote_panels = 0;
    for (int i = 0; i < run->streams; i++) {
        f->foreground[i] = foreground_percent(&f->mask[i]);
        char stem[256];
        output_stem(run, job, f, i, stem, sizeof stem);
        if (run->write_masks) {
            if (save_png(job, run->outdirs[i], stem, "_mask.png", &f->mask[i]) != CLI_OK)
                return CLI_FAIL;
            f->wrote_masks++;
        }
        if (run->write_panels) {
            blit_rgb(&f->panel[i], 0, &f->frame[i]);
            blit_rgb(&f->panel[i], run->width, &f->background[i]);
            blit_rgb(&f->panel[i], 2 * run->width, &f->mask[i]);
            if (save_png(job, run->outdirs[i], stem, "_panel.png", &f->panel[i]) != CLI_OK)
                return CLI_FAIL;
            f->wrote_panels++;
        }
    }
    f->ms[STAGE_ENCODE] = 1e3 * (cli_now() - t0);
    return CLI_OK;
}

/* Finish (this thread, in frame order): the progress bar, the statistics, the score. */
static int finish_frame(void *user, cli_job *job)
{
    segment_run *run = user;
    frame_slot *f = &run->slots[job->slot];
    cli_progress_step(&run->bar);
    run->read++;
    int rc = series_add(&run->stage[STAGE_READ], f->ms[STAGE_READ]);
    if (!f->segmented || rc != CLI_OK)
        return rc;
    run->segmented++;
    run->written_masks += f->wrote_masks;
    run->written_panels += f->wrote_panels;
    for (int s = STAGE_UPLOAD; s < STAGE_COUNT && rc == CLI_OK; s++)
        rc = series_add(&run->stage[s], f->ms[s]);
    if (rc == CLI_OK)
        rc = series_add(&run->frame_ms, f->call_ms);
    for (int i = 0; i < run->streams && rc == CLI_OK; i++)
        rc = series_add(&run->foreground, f->foreground[i]);
    if (rc == CLI_OK && run->synth)
        glcv_segment_score_add(&run->score, &f->mask[0], &f->truth, NULL, GLCV_TRUTH_BINARY);
    return rc;
}

static int segment_frames(segment_run *run)
{
    const cli_pipeline p = {
        .user = run,
        .slots = run->slot_count,
        .workers = run->workers,
        .parallel_read = run->input == INPUT_FILES,
        .count = run->items,
        .verbose = run->opt->verbose,
        .read = read_frame,
        .process = process_frame,
        .encode = encode_frame,
        .finish = finish_frame,
    };
    run->bar = cli_progress_start_rate(run->opt->quiet, run->items > 0 ? (size_t)run->items : 0, "frames");
    cli_interrupt_catch();
    cli_pipeline_result result;
    double t0 = cli_now();
    int rc = cli_pipeline_run(&p, &result);
    run->wall_s = cli_now() - t0;
    cli_interrupt_release();
    if (rc == CLI_OK)
        cli_progress_show(&run->bar, run->bar.done);
    cli_progress_end(&run->bar);
    if (rc == CLI_OK && run->read <= run->learn_items && run->learn_items > 0 && !result.interrupted) {
        cli_error("--learn %d: the input ended after %" PRId64 " frame%s, with none left to segment", run->learn_items,
                  run->read, run->read == 1 ? "" : "s");
        rc = CLI_FAIL;
    }
    if (rc == CLI_OK && run->opt->timing && run->segmented > 0) {
        glcv_status st = cli_subtractor_timings(run->sub, run->timings, MAX_TIMINGS, &run->timing_count, 1);
        if (st != GLCV_OK)
            return cli_lib_error("cannot read the GPU timings", st);
    }
    if (rc == CLI_OK && result.interrupted) {
        cli_warning("interrupted: stopped reading after %" PRId64 " frames", run->read);
        rc = CLI_INTERRUPTED;
    }
    return rc;
}

/* ---- summary ------------------------------------------------------------------------------------- */

static void print_timing_table(const segment_run *run)
{
    if (run->timing_count == 0) {
        printf("GPU passes: no timings (%s)\n",
               run->sub->engine == GLCV_ENGINE_CPU ? "the CPU engine has none" : "no timer query results");
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

/* One row of the stage table: mean and median of the stage's time per frame. */
static void print_stage(segment_run *run, int stage, const char *name, const char *where)
{
    series *s = &run->stage[stage];
    double mean = series_mean(s);
    printf("  %-26s %9.3f %9.3f   %s\n", name, mean, series_median(s), where);
}

/* The stages' times and which one limits the frame rate: the segmenter's thread can run
 * 1 / (its time per frame) frames a second, the workers N / (their time per frame). */
static void print_stages(segment_run *run)
{
    int cpu = run->sub->engine == GLCV_ENGINE_CPU;
    int files = run->input == INPUT_FILES;
    char workers[64];
    snprintf(workers, sizeof workers, "%d worker thread%s", run->workers, run->workers == 1 ? "" : "s");
    printf("stages, time per frame in ms:    mean    median   thread\n");
    print_stage(run, STAGE_READ, files ? "read (decode a file)" : "read (source, copy)",
                files ? workers : "the reader thread");
    if (cpu) {
        print_stage(run, STAGE_UPLOAD, "segment (CPU engine)", "the segmenter's thread");
    } else {
        print_stage(run, STAGE_UPLOAD, "upload + submit + wait", "the segmenter's thread");
        print_stage(run, STAGE_GPU, "GPU passes (timer queries)", "the GPU");
    }
    print_stage(run, STAGE_DOWNLOAD, run->write_panels ? "download (mask, background)" : "download (mask)",
                "the segmenter's thread");
    print_stage(run, STAGE_ENCODE, "encode + write PNG files", workers);
    print_stage(run, STAGE_PROCESS, "segmenter's thread in all", "the segmenter's thread");

    double read = series_mean(&run->stage[STAGE_READ]), encode = series_mean(&run->stage[STAGE_ENCODE]);
    double segmenter = series_mean(&run->stage[STAGE_PROCESS]);
    double worker_ms = encode + (files ? read : 0.0);
    /* frames per second each part could keep up alone: one segmenter thread, the workers, the reader */
    const char *names[3] = {"the segmenter's thread", "the workers", "the reader thread"};
    double fps[3] = {segmenter > 0 ? 1e3 / segmenter : INFINITY,
                     worker_ms > 0 ? 1e3 * run->workers / worker_ms : INFINITY,
                     !files && read > 0 ? 1e3 / read : INFINITY};
    int slowest = 0;
    for (int i = 1; i < 3; i++)
        if (fps[i] < fps[slowest])
            slowest = i;
    printf("limit:      %s, at most %.1f frames/s (", names[slowest], fps[slowest]);
    const char *sep = "";
    for (int i = 0; i < 3; i++)
        if (i != slowest && isfinite(fps[i])) {
            printf("%s%s %.1f", sep, names[i], fps[i]);
            sep = ", ";
        }
    printf("); measured %.1f frames/s end to end, the stages sharing the processors\n",
           run->wall_s > 0 ? (double)run->read / run->wall_s : 0.0);
}

static void print_summary(segment_run *run)
{
    series *ms = &run->frame_ms;
    size_t n = ms->count;
    char batch[64] = "", method[32] = "";
    if (run->opt->batch)
        snprintf(batch, sizeof batch, " in each of %d inputs", run->streams);
    if (run->sub->method != CLI_METHOD_ETH)
        snprintf(method, sizeof method, ", method %s", cli_method_names[run->sub->method]);
    printf("frames:     %zu of %dx%d%s, engine %s%s\n", n, run->width, run->height, batch,
           glcv_engine_mode_string(run->sub->engine), method);
    printf("wall time:  %.3f s for %" PRId64 " frames read (%d learned from): %.1f frames/s end to end, "
           "%d worker thread%s\n",
           run->wall_s, run->read, run->read < run->learn_items ? (int)run->read : run->learn_items,
           run->wall_s > 0 ? (double)run->read / run->wall_s : 0.0, run->workers, run->workers == 1 ? "" : "s");
    if (n == 0)
        return;
    double mean = series_mean(ms), median = series_median(ms); /* sorted from here */
    printf("frame time: mean %.3f ms, median %.3f ms, min %.3f ms, max %.3f ms "
           "(upload + GPU passes + wait)\n",
           mean, median, ms->v[0], ms->v[n - 1]);
    series *fg = &run->foreground;
    double fg_mean = series_mean(fg);
    series_median(fg);
    printf("foreground: mean %.2f %% of the pixels per frame (min %.2f %%, max %.2f %%)\n", fg_mean, fg->v[0],
           fg->v[fg->count - 1]);
    if (run->synth) {
        glcv_segment_metrics m;
        glcv_segment_score_metrics(&run->score, &m);
        printf("truth:      precision %.4f, recall %.4f, F %.4f (all frames against the ground truth)\n", m.precision,
               m.recall, m.f);
    }
    if (run->write_masks || run->write_panels)
        printf("written:    %d masks, %d panels in %s%s\n", run->written_masks, run->written_panels, run->opt->outdir,
               run->opt->batch ? "/<input>" : "");
    if (run->opt->timing) {
        print_stages(run);
        print_timing_table(run);
    }
}

static void segment_run_free(segment_run *run)
{
    cli_subtractor_destroy(&run->sub);
    glcv_context_destroy(&run->ctx);
    glcv_synth_destroy(&run->synth);
    for (int i = 0; run->media && i < run->streams; i++)
        cli_source_close(&run->media[i]);
    free(run->media);
    for (int s = 0; run->slots && s < run->slot_count; s++) {
        frame_slot *f = &run->slots[s];
        glcv_image_free(&f->truth);
        for (int i = 0; i < run->streams; i++) {
            if (f->frame)
                glcv_image_free(&f->frame[i]);
            if (f->mask)
                glcv_image_free(&f->mask[i]);
            if (f->background)
                glcv_image_free(&f->background[i]);
            if (f->panel)
                glcv_image_free(&f->panel[i]);
        }
        free(f->frame);
        free(f->mask);
        free(f->background);
        free(f->panel);
        free(f->index);
        free(f->foreground);
    }
    free(run->slots);
    free(run->frame_ms.v);
    free(run->foreground.v);
    for (int s = 0; s < STAGE_COUNT; s++)
        free(run->stage[s].v);
    for (int i = 0; i < run->streams; i++) {
        if (run->inputs)
            cli_paths_free(&run->inputs[i]);
        if (run->stems)
            cli_paths_free(&run->stems[i]);
        if (run->outdirs)
            free(run->outdirs[i]);
    }
    free(run->inputs);
    free(run->stems);
    free(run->outdirs);
}

/* --sources: the camera list's run (sources.h). */
static int segment_sources(const segment_options *o, const cli_args *args)
{
    int kind = -1;
    int rc = cli_method_check(&o->method, args);
    if (rc == CLI_OK)
        rc = cli_source_kind(&o->src, &kind);
    if (rc != CLI_OK)
        return rc;
    if (args->count > 0)
        return cli_usage("--sources takes its sources from the list, not as arguments (got '%s')", args->items[0]);
    if (kind >= 0 || o->batch || o->synthetic)
        return cli_usage("--sources excludes the other inputs (a source option, --batch, --synthetic)");
    const void *unsupported[] = {&o->src.rate, &o->src.camera_format, &o->src.loop, &o->panels, &o->timing};
    const char *names[] = {"--rate", "--camera-format", "--loop and --no-loop", "--panels", "--timing"};
    for (int i = 0; i < 5; i++)
        if (cli_given(args, unsupported[i]))
            return cli_usage("%s does not apply to --sources", names[i]);
    int diff = o->method.method == CLI_METHOD_DIFF2 || o->method.method == CLI_METHOD_DIFF3;
    if (diff && o->background)
        return cli_usage("--bg: --method %s takes no background", cli_method_names[o->method.method]);
    if (!diff && !o->background && o->learn == 0)
        return cli_usage("no background: give --bg FILE or --learn N");
    if (o->background && o->learn > 0)
        return cli_usage("--bg and --learn exclude each other");
    if (o->masks && !o->outdir)
        return cli_usage("no output folder: give -o OUTDIR (or --no-masks)");
    if (o->src.max_frames > 0 && o->learn >= o->src.max_frames)
        return cli_usage("--learn %d needs more than --max-frames %d", o->learn, o->src.max_frames);
    if (cli_given(args, &o->gpus) && o->method.seg.engine == GLCV_ENGINE_CPU)
        return cli_usage("--gpus needs a GPU engine, not --engine cpu");
    cli_sources_options so = {.list = o->sources,
                              .outdir = o->outdir,
                              .background = o->background,
                              .learn = o->learn,
                              .src = &o->src,
                              .method = &o->method,
                              .masks = o->masks,
                              .gpus = cli_given(args, &o->gpus) ? cli_gpus(o->gpus) : 1,
                              .decoder = o->decoder,
                              .cpu_share = o->cpu_decode,
                              .nvdec_sessions = cli_given(args, &o->nvdec_sessions) ? o->nvdec_sessions : -1,
                              .threads = o->threads,
                              .quiet = o->quiet,
                              .verbose = o->verbose};
    return cli_sources_run(&so, args);
}

int cmd_segment(int argc, char **argv)
{
    segment_options o = {.panels = -1, .masks = 1, .gpus = 1, .src = CLI_SOURCE_INIT};
    const cli_option options[] = {
        CLI_QUIET_VERBOSE_OPTIONS(&o.quiet, &o.verbose),
        {"--output", "-o", &o.outdir, .kind = CLI_STRING, .what = "folder name"},
        {"--bg", NULL, &o.background, .kind = CLI_STRING, .what = "file name"},
        {"--learn", NULL, &o.learn, .kind = CLI_INT, .min = 1, .max = INT_MAX},
        {"--synthetic", NULL, &o.synthetic, .kind = CLI_INT, .min = 1, .max = 1000000, .bare = DEFAULT_SYNTHETIC_FRAMES},
        CLI_SOURCE_OPTIONS(&o.src),
        {"--batch", NULL, &o.batch, .kind = CLI_FLAG},
        {"--gpus", NULL, &o.gpus, .kind = CLI_INT, .min = 0, .max = CLI_MAX_GPUS},
        {"--sources", NULL, &o.sources, .kind = CLI_STRING, .what = "file name"},
        {"--decoder", NULL, &o.decoder, .kind = CLI_CHOICE, .choices = cli_decoder_names, .what = "a decoder"},
        {"--cpu-decode", NULL, &o.cpu_decode, .kind = CLI_REAL, .min = 0.0, .max = 1.0},
        {"--nvdec-sessions", NULL, &o.nvdec_sessions, .kind = CLI_INT, .min = 0, .max = 100000},
        CLI_METHOD_OPTIONS(&o.method),
        {"--timing", NULL, &o.timing, .kind = CLI_FLAG},
        {"--panels", NULL, &o.panels, .kind = CLI_FLAG},
        {"--no-panels", NULL, &o.panels, .kind = CLI_FLAG, .clear = 1},
        {"--no-masks", NULL, &o.masks, .kind = CLI_FLAG, .clear = 1},
        {"--threads", NULL, &o.threads, .kind = CLI_INT, .min = 1, .max = MAX_THREADS},
        {NULL},
    };
    cli_args args;
    int rc = cli_parse(options, argc, argv, &args);
    if (rc != CLI_OK)
        return rc;
    if (o.sources)
        return segment_sources(&o, &args);
    if (cli_given(&args, &o.decoder) || cli_given(&args, &o.cpu_decode) || cli_given(&args, &o.nvdec_sessions))
        return cli_usage("--decoder, --cpu-decode and --nvdec-sessions apply to --sources");
    segment_run run = {.opt = &o, .logger = cli_logger(o.verbose)};
    rc = plan_segment(&run, &args);
    if (rc == CLI_OK)
        rc = cli_subtractor_create_gpus(&o.method, &args, run.width, run.height, run.streams, cli_gpus(o.gpus), o.timing,
                                        o.quiet, &run.logger, &run.ctx, &run.sub);
    if (rc == CLI_OK)
        rc = allocate_slots(&run);
    if (rc == CLI_OK)
        rc = set_background(&run);
    /* the output folders once the background is in (a --bg that does not decode creates none) */
    for (int i = 0; rc == CLI_OK && run.outdirs && i < run.streams; i++)
        rc = cli_make_dir(run.outdirs[i]);
    if (rc == CLI_OK)
        rc = segment_frames(&run);
    if (rc == CLI_OK || rc == CLI_INTERRUPTED)
        print_summary(&run);
    segment_run_free(&run);
    return rc;
}
