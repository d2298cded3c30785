/* glcv track: tracking of objects (correlation filters or CAMSHIFT) through image files, folders of frames or a media
 * source (a video file, a camera, a lavfi graph), with the segmenter's mask (by default for files);
 * writes one CSV row per frame and object, and frames with the boxes drawn. glcv eval otb: the same
 * tracking on OTB sequences, scored.
 *
 * Why one file of about 800 lines: glcv eval otb is glcv track's own run - the same options, the
 * same steps (the tracker, the segmenter and its median background, the frames, the mask of each
 * frame) - with boxes kept instead of a CSV file; apart, those steps would become a shared header
 * that only these two commands use. */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "commands.h"
#include "source.h"
#include "sources.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_ROIS = GLCV_TRACK_MAX_OBJECTS, MEDIAN_FRAMES = 200 };
/* Above this fraction of foreground pixels a frame's mask is not used (the camera moves, or the
 * light changed: the background is not that frame's). */
#define MAX_FOREGROUND 0.5
/* The CSV's first line (--csv, and each camera's in a list run) */
#define CSV_HEADER "frame,object,cx,cy,w,h,angle,x,y,bw,bh,iterations,lost,state,peak\n"

const char cmd_track_help[] =
    "usage: glcv track INPUT... --roi x,y,w,h [--roi ...] --csv OUT.csv [options]\n"
    "       glcv track SOURCE --roi x,y,w,h [--roi ...] --csv OUT.csv [options]\n"
    "       glcv track --sources LIST -o OUTDIR [--csv NAME] [options]\n"
    "\n"
    "Tracks objects through a sequence of frames. The default method, dcf, learns correlation\n"
    "filters of each object's --roi in the first frame (HOG cells and intensity, merged with a\n"
    "colour model; Danelljan's DSST 2014, Bertinetto's Staple 2016) and finds its box, position\n"
    "and size, in each frame after. With --method camshift (Bradski 1998; Perry 2016) each\n"
    "object's hue histogram is taken from its --roi in the first frame (or read from --hist) and\n"
    "its window follows the back-projection of that histogram. Both run on the GPU with CUDA when\n"
    "a device is there, else on the CPU (the same results). docs/QUALITY.md compares them.\n"
    "\n"
    "INPUT is image files (.png .jpg .jpeg .bmp .tga .ppm .pgm) or folders of them (sorted by name),\n"
    "in frame order; all frames must have the same size. An INPUT that is a video file (.avi .mp4\n"
    ".mkv .mov .webm .mpg .mpeg .m4v .ts .flv) is read as with --video and must be the only one.\n"
    "\n"
    "media sources (SOURCE; glcv's media input, built with FFmpeg: without it these options and\n"
    "video files fail with exit status 1; see 'glcv segment --help' for the details):\n"
    "  --video FILE  --camera DEV  --frames DIR  --sequence PATTERN  --lavfi GRAPH\n"
    "  --size WxH  --rate FPS  --camera-format F  --mode live|every-frame  --loop  --no-loop\n"
    "  --stall-timeout S\n"
    "  --max-frames N        track at most N frames (of any input); cameras, lavfi graphs and\n"
    "                        --loop run until N frames or Ctrl-C (exit status 130, the CSV file\n"
    "                        holds the frames tracked)\n"
    "With a media source the frame column of the CSV file and the overlay names\n"
    "(frame_NNNNNN_track.png) are the frames' indices in the source.\n"
    "\n"
    "camera lists (as 'glcv segment --sources', see its --help):\n"
    "  --sources LIST        a text file with one source per line: a video file, a URL (rtsp://,\n"
    "                        http://, tcp://, ...) or a camera (/dev/videoN), then its objects'\n"
    "                        boxes: roi=x,y,w,h (repeat for more; a line without one takes the\n"
    "                        --roi options), e.g. 'cam1.mkv roi=10,20,30,40 roi=50,60,20,20'.\n"
    "                        The source on line k (from 0) writes OUTDIR/camKKK/NAME (--csv NAME,\n"
    "                        default tracks.csv; objects numbered from 0 in its roi= order) and,\n"
    "                        with --overlay DIR, OUTDIR/camKKK/DIR/frame_NNNNNN_track.png: the\n"
    "                        bytes a run on that source alone writes with the same options. Sources\n"
    "                        of one frame size are one set: decoded together and tracked by one\n"
    "                        tracker (one upload per set); video files learn their background from\n"
    "                        their first 200 frames first, as alone (read twice). A live source's\n"
    "                        objects are tracked at each read of its set, on its last frame when\n"
    "                        it brought none. A source that fails is reported with its line and the\n"
    "                        others go on (exit status 1); its CSV file holds the frames it gave\n"
    "  -o, --output OUTDIR   the camera folders' folder\n"
    "  --decoder D  --cpu-decode F  --nvdec-sessions N  --gpus N  --size WxH  --max-frames N\n"
    "  --stall-timeout S\n"
    "                        as for 'glcv segment --sources'\n"
    "\n"
    "options:\n"
    "  --roi x,y,w,h         an object's box in the first frame, in pixels (x, y of its top-left\n"
    "                        pixel, row 0 at the top); repeat for more objects (at most 1024)\n"
    "  --method M            dcf (correlation filters on HOG cells with a colour model and a scale\n"
    "                        filter: the box's position and size; no segmenter's mask) or camshift\n"
    "                        (a hue histogram's mean shift, with the segmenter's mask) [dcf]; both\n"
    "                        run on CUDA or on the CPU (the same results)\n"
    "  --csv FILE            write the tracks: a header line, then one line per frame and object:\n"
    "                          frame,object,cx,cy,w,h,angle,x,y,bw,bh,iterations,lost,state,peak\n"
    "                        frame and object count from 0 (objects in --roi order); cx,cy,w,h,angle\n"
    "                        the box (centre, sizes in pixels, angle in degrees 0..180: adaptive,\n"
    "                        width and height of an upright box, angle 0; opencv, minor and major\n"
    "                        axis as cv::CamShift reports them); x,y,bw,bh its axis-aligned bounding\n"
    "                        box in pixels; iterations the mean-shift iterations (0 with dcf); lost\n"
    "                        0 when tracked, else why: 1 iteration cap, 2 too little mass, 4\n"
    "                        histogram too far, 8 correlation peak too weak (dcf); state tracked,\n"
    "                        lost, or recovered (tracked after lost frames); peak dcf's peak-to-\n"
    "                        sidelobe ratio in the frame (0 on the first), -1 with camshift\n"
    "  --overlay DIR         also write DIR/<frame name>_track.png: the frame with each object's\n"
    "                        box drawn (lost objects in grey)\n"
    "  --mask-from-segmenter camshift: count only the segmenter's foreground: the frames are\n"
    "                        segmented (glcv segment) against their per-pixel median and the mask\n"
    "                        excludes the background from the histograms and the back-projection; a frame\n"
    "                        whose mask is more than half foreground (a moving camera, a change of\n"
    "                        light) is tracked without it. With camshift, on by default for image\n"
    "                        files, folders, video files, --frames and --sequence (not cameras and\n"
    "                        lavfi graphs); dcf uses no mask;\n"
    "                        a media source is opened twice: the background is learned from its\n"
    "                        first 200 frames (at most --max-frames) before tracking starts\n"
    "  --no-mask             no segmenter's mask\n"
    "  --bg-weighted         background-weighted histograms (Comaniciu et al. 2003): colours common\n"
    "                        in a ring around each --roi lose weight in its histogram\n"    "  --Ts F                the segmenter's threshold with --mask-from-segmenter [310]\n"
    "  --hist FILE           the objects' histograms: read from FILE when it exists (one per\n"
    "                        --roi, in order), else taken from the first frame and written to FILE\n"
    "  --bins N              hue bins, 1..180 [60]\n"
    "  --sat-bins N          saturation bins for a hue x saturation histogram, 1..256 [1: hue only]\n"
    "  --smin N --vmin N --vmax N\n"
    "                        Bradski's limits: a pixel counts when S >= smin and vmin <= V <= vmax\n"
    "                        (0..255) [30, 10, 255]\n"
    "  --window W            adaptive (an upright box of guarded size and a Kalman filter that\n"
    "                        predicts the search window and carries a lost object), opencv\n"
    "                        (cv::CamShift's rotated box) or paper (width 2 sqrt(M00/255), height\n"
    "                        1.2 width) [adaptive]\n"
    "  --engine E            auto, cuda or cpu [auto]; cpu also keeps the segmenter on the CPU\n"
    "  -q, --quiet           no engine line on stderr\n"
    "  -v, --verbose         print the library's debug messages\n"
    "  -h, --help            show this help\n"
    "\n"
    "Options may also be written --name=value.\n"
    "Options, files' headers and sizes are checked before anything is written; the CSV file and\n"
    "the overlays are written under temporary names and renamed, so none is ever half-written.\n"
    "A frame that fails to decode stops the run (exit status 1) with the frames before it\n"
    "written, the CSV file holding their rows. stderr gets a\n"
    "progress bar with the frames per second when it is a terminal; stdout a summary: frames,\n"
    "objects, the time per frame of the tracking calls, frames lost per object.\n"
    "Example: glcv track seq/img --roi 205,151,17,50 --csv tracks.csv\n";

/* --method's names, in the order of glcv_track_method from GLCV_TRACK_METHOD_CAMSHIFT on. */
static const char *const method_names[] = {"camshift", "dcf", NULL};
/* --window's names, in the order of glcv_track_window from GLCV_TRACK_WINDOW_OPENCV on. */
static const char *const window_names[] = {"opencv", "paper", "adaptive", NULL};

typedef struct track_options {
    glcv_rect rois[MAX_ROIS];
    int n_rois;
    const char *csv, *overlay, *hist;
    int mask_from_segmenter, no_mask, bg_weighted;
    double ts;
    int bins, sat_bins, s_min, v_min, v_max;
    int window; /* index in window_names */
    int method; /* index in method_names */
    glcv_engine_mode engine;
    int quiet, verbose;
    cli_source src;
    /* --sources: the camera list's run */
    const char *sources, *outdir;
    int gpus, decoder, nvdec_sessions;
    double cpu_decode;
} track_options;

/* The defaults, and the options glcv track and glcv eval otb share (the tracker, its mask). */
#define TRACK_OPTIONS_INIT                                                                                   \
    {.method = 1, .ts = 310, .bins = 60, .sat_bins = 1, .s_min = 30, .v_min = 10, .v_max = 255, .window = 2,                \
     .engine = GLCV_ENGINE_AUTO, .src = CLI_SOURCE_INIT}
#define TRACK_OPTIONS(o)                                                                                     \
    {"--method", NULL, &(o)->method, .kind = CLI_CHOICE, .choices = method_names, .what = "a method"},       \
    {"--no-mask", NULL, &(o)->no_mask, .kind = CLI_FLAG},                                                    \
    {"--bg-weighted", NULL, &(o)->bg_weighted, .kind = CLI_FLAG},                                            \
    {"--Ts", NULL, &(o)->ts, .kind = CLI_REAL, .max = 1e9},                                                  \
    {"--bins", NULL, &(o)->bins, .kind = CLI_INT, .min = 1, .max = 180},                                     \
    {"--sat-bins", NULL, &(o)->sat_bins, .kind = CLI_INT, .min = 1, .max = 256},                             \
    {"--smin", NULL, &(o)->s_min, .kind = CLI_INT, .max = 255},                                              \
    {"--vmin", NULL, &(o)->v_min, .kind = CLI_INT, .max = 255},                                              \
    {"--vmax", NULL, &(o)->v_max, .kind = CLI_INT, .max = 255},                                              \
    {"--window", NULL, &(o)->window, .kind = CLI_CHOICE, .choices = window_names, .what = "a window"},       \
    {"--engine", NULL, &(o)->engine, .kind = CLI_ENGINE, .choices = cli_cuda_engines}

typedef struct track_run {
    const track_options *opt;
    cli_paths files;
    glcv_media *media;
    int64_t index; /* the frame's number: its position among the files, or its index in the source */
    int frames;    /* frames read */
    int width, height;
    glcv_logger logger;
    glcv_context *ctx;
    glcv_segment *seg;
    glcv_track *tr;
    glcv_image frame, mask, overlay;
    FILE *out;
    char *csv_tmp;
    glcv_rect *boxes;     /* glcv eval otb: each frame's box of object 0 (the frames' count) */
    int boxes_capacity;
    int unmasked;         /* frames tracked without their mask (too much foreground) */
    int lost_first;       /* frames where object 0 was lost */
} track_run;

/* ---- checks ----------------------------------------------------------------------------------- */

/* The options; *kind gets the media source (cli_source_of_args). */
/* The options every track command checks the same way: the histogram's size, the value limits,
 * the method (dcf does not use the segmenter's mask: no mask is made for it). */
static int check_model_options(track_options *o)
{
    if (o->method == GLCV_TRACK_METHOD_DCF - 1) {
        if (o->mask_from_segmenter)
            return cli_usage("--method dcf does not use the segmenter's mask: drop --mask-from-segmenter");
        o->no_mask = 1;
    }
    if ((long)o->bins * o->sat_bins > GLCV_TRACK_MAX_BINS)
        return cli_usage("--bins %d x --sat-bins %d is %ld bins: at most %d in all", o->bins, o->sat_bins,
                         (long)o->bins * o->sat_bins, GLCV_TRACK_MAX_BINS);
    if (o->v_min > o->v_max)
        return cli_usage("--vmin %d is above --vmax %d", o->v_min, o->v_max);
    return CLI_OK;
}

static int check_options(track_options *o, const cli_args *args, int *kind)
{
    int rc = cli_source_of_args(&o->src, args, kind);
    if (rc != CLI_OK)
        return rc;
    if (args->count == 0 && *kind < 0)
        return cli_usage("no input frames");
    if (*kind < 0 && cli_given(args, &o->src.size))
        return cli_usage("--size applies only to media sources");
    if (o->n_rois == 0)
        return cli_usage("no object: give --roi x,y,w,h");
    if (!o->csv)
        return cli_usage("no output: give --csv FILE");
    if ((rc = check_model_options(o)) != CLI_OK)
        return rc;
    if (o->no_mask && o->mask_from_segmenter)
        return cli_usage("--no-mask and --mask-from-segmenter: give one");
    return CLI_OK;
}

static int check_rois(const track_run *t)
{
    for (int k = 0; k < t->opt->n_rois; k++) {
        const glcv_rect *r = &t->opt->rois[k];
        if (r->x >= t->width || r->y >= t->height || r->x + r->width <= 0 || r->y + r->height <= 0)
            return cli_usage("--roi %d,%d,%d,%d is outside the %dx%d frames", r->x, r->y, r->width, r->height,
                             t->width, t->height);
    }
    return CLI_OK;
}

/* ---- the segmenter's mask ------------------------------------------------------------------------- */

/* ---- the frames: files, or a media source ------------------------------------------------------------ */

/* Reads the next frame into t->frame (t->index its number); *end at the end of the input, at
 * --max-frames, or on Ctrl-C. */
static int read_frame(track_run *t, int *end)
{
    *end = t->opt->src.max_frames > 0 && t->frames >= t->opt->src.max_frames;
    if (*end)
        return CLI_OK;
    if (!t->media) {
        *end = t->frames >= t->files.count || cli_interrupted();
        t->index = t->frames;
        if (!*end && cli_load_rgb(t->files.items[t->frames], &t->logger, &t->frame) != CLI_OK)
            return CLI_FAIL;
    } else {
        glcv_status st = cli_source_read(t->media, &t->frame, NULL, &t->index, end);
        if (st != GLCV_OK)
            return cli_lib_error("the input stopped", st);
    }
    t->frames += !*end;
    return CLI_OK;
}

/* A media source's background: the segmenter learns it (a median, the parameters kept) from the
 * source's first MEDIAN_FRAMES frames, read before tracking; the source is then opened again. */
static int learn_from_media(track_run *t, const cli_args *args, int kind)
{
    glcv_status st = glcv_segment_learn_begin(t->seg);
    int rc = st == GLCV_OK ? CLI_OK : cli_lib_error("cannot start learning the background", st);
    cli_progress bar = cli_progress_start_rate(t->opt->quiet, MEDIAN_FRAMES, "frames");
    int end = 0;
    while (rc == CLI_OK && t->frames < MEDIAN_FRAMES && (rc = read_frame(t, &end)) == CLI_OK && !end) {
        cli_progress_step(&bar);
        if ((st = glcv_segment_learn_add(t->seg, &t->frame)) != GLCV_OK)
            rc = cli_lib_error("cannot learn the background", st);
    }
    cli_progress_end(&bar);
    if (rc == CLI_OK && t->frames == 0) {
        cli_error("the input has no frames");
        rc = CLI_FAIL;
    }
    if (rc == CLI_OK && (st = glcv_segment_learn_end(t->seg)) != GLCV_OK)
        rc = cli_lib_error("cannot learn the background", st);
    if (rc == CLI_OK && !t->opt->quiet)
        fprintf(stderr, "glcv: background learned from the first %d frames of the input\n", t->frames);
    cli_source_close(&t->media);
    t->frames = 0;
    if (rc == CLI_OK && !cli_interrupted())
        rc = cli_source_open_args(&t->opt->src, args, kind, 1, &t->logger, &t->media, &t->width, &t->height);
    return rc;
}

/* A segmenter whose background is the per-pixel median of up to MEDIAN_FRAMES evenly spaced
 * frames (of a media source: learned from its first frames), and its mask buffer. */
static int start_segmenter(track_run *t, const cli_args *args, int kind)
{
    glcv_engine_mode engine = t->opt->engine == GLCV_ENGINE_CPU || !t->ctx ? GLCV_ENGINE_CPU : GLCV_ENGINE_AUTO;
    glcv_segment_params sp = GLCV_SEGMENT_PARAMS(.width = t->width, .height = t->height, .ts = (float)t->opt->ts,
                                                 .engine = engine, .fixed_parameters = 1, .logger = t->logger);
    glcv_status st = glcv_segment_create(&sp, &t->seg);
    if (st != GLCV_OK)
        return cli_lib_error("cannot create the segmenter", st);
    if ((st = glcv_image_alloc(t->width, t->height, GLCV_PIXEL_GRAY8, &t->mask)) != GLCV_OK)
        return cli_lib_error("mask", st);
    if (t->media)
        return learn_from_media(t, args, kind);
    glcv_image bg = {0};
    if ((st = glcv_image_alloc(t->width, t->height, GLCV_PIXEL_RGB8, &bg)) != GLCV_OK)
        return cli_lib_error("background", st);
    int rc = cli_median_of_files(t->files.items, t->files.count, MEDIAN_FRAMES, &t->logger, NULL, &bg, NULL);
    if (rc == CLI_OK && (st = glcv_segment_set_background(t->seg, &bg)) != GLCV_OK)
        rc = cli_lib_error("cannot set the background", st);
    glcv_image_free(&bg);
    return rc;
}

static int segment_frame(track_run *t)
{
    glcv_status st = glcv_segment_frame(t->seg, &t->frame, 1);
    if (st == GLCV_OK)
        st = glcv_segment_read_mask(t->seg, &t->mask);
    return st == GLCV_OK ? CLI_OK : cli_lib_error("segmentation", st);
}

/* Whether a mask says most of its frame moves (it is then not used). */
static int mostly_foreground(const glcv_image *mask)
{
    size_t fg = 0, stride = glcv_image_stride(mask);
    for (int y = 0; y < mask->height; y++)
        for (int x = 0; x < mask->width; x++)
            fg += mask->data[(size_t)y * stride + (size_t)x] != 0;
    return (double)fg > MAX_FOREGROUND * (double)mask->width * (double)mask->height;
}

/* The mask for this frame: NULL without a segmenter, or when it says most of the frame moves. */
static const glcv_image *frame_mask(track_run *t)
{
    if (!t->seg)
        return NULL;
    if (mostly_foreground(&t->mask)) {
        t->unmasked++;
        return NULL;
    }
    return &t->mask;
}

/* ---- overlay ---------------------------------------------------------------------------------- */

static void put(glcv_image *img, int x, int y, const uint8_t c[3])
{
    if (x < 0 || y < 0 || x >= img->width || y >= img->height)
        return;
    uint8_t *p = img->data + (size_t)y * glcv_image_stride(img) + (size_t)x * 3;
    p[0] = c[0];
    p[1] = c[1];
    p[2] = c[2];
}

static void line(glcv_image *img, double x0, double y0, double x1, double y1, const uint8_t c[3])
{
    int steps = (int)ceil(fmax(fabs(x1 - x0), fabs(y1 - y0))) + 1;
    for (int i = 0; i <= steps; i++) {
        double s = (double)i / steps;
        int x = (int)floor(x0 + s * (x1 - x0)), y = (int)floor(y0 + s * (y1 - y0));
        put(img, x, y, c);
        put(img, x + 1, y, c);
        put(img, x, y + 1, c);
    }
}

static void draw_result(glcv_image *img, const glcv_track_result *r, int k)
{
    static const uint8_t palette[8][3] = {{0, 255, 0},  {255, 0, 255}, {0, 255, 255}, {255, 255, 0},
                                          {255, 96, 0}, {0, 128, 255}, {255, 0, 96},  {160, 255, 96}};
    static const uint8_t grey[3] = {160, 160, 160};
    const uint8_t *c = r->lost ? grey : palette[k % 8];
    if (r->width <= 0 || r->height <= 0)
        return;
    float px[4], py[4];
    glcv_track_box_points(r->cx, r->cy, r->width, r->height, r->angle, px, py);
    for (int i = 0; i < 4; i++)
        line(img, px[i], py[i], px[(i + 1) % 4], py[(i + 1) % 4], c);
    put(img, (int)r->cx, (int)r->cy, c);
}

/* Writes the frame with the boxes: OVERLAY/<file name>_track.png, or frame_NNNNNN_track.png for a
 * media source's frame. */
static int write_overlay(track_run *t, const glcv_track_result *res, int count)
{
    glcv_status st = glcv_image_convert(&t->frame, &t->overlay);
    if (st != GLCV_OK)
        return cli_lib_error("overlay", st);
    for (int k = 0; k < count; k++)
        draw_result(&t->overlay, &res[k], k);
    char name[64];
    snprintf(name, sizeof name, "frame_%06" PRId64, t->index);
    char *path = t->media ? cli_path_join(t->opt->overlay, name, "_track.png")
                          : cli_output_path(t->opt->overlay, t->files.items[t->index], "_track.png");
    if (!path)
        return cli_out_of_memory();
    st = glcv_image_save_png(path, &t->overlay, &t->logger);
    int rc = st == GLCV_OK ? CLI_OK : cli_lib_error(path, st);
    free(path);
    return rc;
}

/* ---- the CSV file: written under a temporary name, renamed when complete ----------------------------- */

static int open_csv(track_run *t)
{
    size_t n = strlen(t->opt->csv) + 32;
    if (!(t->csv_tmp = malloc(n)))
        return cli_out_of_memory();
    snprintf(t->csv_tmp, n, "%s.tmp%ld", t->opt->csv, (long)getpid());
    t->out = fopen(t->csv_tmp, "w");
    if (!t->out) {
        cli_error("%s: cannot write: %s", t->opt->csv, strerror(errno));
        return CLI_FAIL;
    }
    fputs(CSV_HEADER, t->out);
    return CLI_OK;
}

static int close_csv(track_run *t, int ok)
{
    if (!t->out)
        return ok ? CLI_OK : CLI_FAIL;
    int bad = ferror(t->out);
    bad |= fclose(t->out) != 0;
    t->out = NULL;
    if (ok && !bad && rename(t->csv_tmp, t->opt->csv) == 0)
        return CLI_OK;
    if (ok)
        cli_error("%s: cannot write: %s", t->opt->csv, strerror(errno));
    remove(t->csv_tmp);
    return CLI_FAIL;
}

/* ---- the run ---------------------------------------------------------------------------------- */

/* A CSV row: the object's box in frame `index`; `object` its number in the input's --roi order. */
static void write_row(FILE *out, int64_t index, int object, const glcv_track_result *r, int recovered)
{
    fprintf(out, "%" PRId64 ",%d,%.3f,%.3f,%.3f,%.3f,%.3f,%d,%d,%d,%d,%d,%u,%s,%.3f\n", index, object, (double)r->cx,
            (double)r->cy, (double)r->width, (double)r->height, (double)r->angle, r->bbox.x, r->bbox.y,
            r->bbox.width, r->bbox.height, r->iterations, r->lost, r->lost ? "lost" : recovered ? "recovered" : "tracked",
            (double)r->peak);
}

/* An object's histogram, from its box in the frame (background-weighted with --bg-weighted). */
static int object_histogram(glcv_track *tr, const track_options *o, const glcv_image *frame, const glcv_image *mask,
                            glcv_rect roi, glcv_track_hist *h)
{
    glcv_status st = glcv_track_hist_compute(tr, frame, mask, roi, h);
    if (st == GLCV_OK && o->bg_weighted)
        st = glcv_track_hist_weight_background(tr, frame, roi, h);
    if (st != GLCV_OK) {
        cli_error("--roi %d,%d,%d,%d: %s", roi.x, roi.y, roi.width, roi.height, glcv_status_string(st));
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* The objects' histograms: read from --hist when the file exists, else taken from the first frame
 * (and written to --hist when given). */
static int object_histograms(track_run *t, glcv_track_hist *h, int *from_file)
{
    const track_options *o = t->opt;
    *from_file = 0;
    if (!o->hist || access(o->hist, F_OK) != 0) {
        const glcv_image *mask = t->seg && !mostly_foreground(&t->mask) ? &t->mask : NULL; /* counted when tracked */
        for (int k = 0; k < o->n_rois; k++)
            if (object_histogram(t->tr, o, &t->frame, mask, o->rois[k], &h[k]) != CLI_OK)
                return CLI_FAIL;
        return CLI_OK;
    }
    int count = 0;
    glcv_status st = glcv_track_hist_load(o->hist, h, o->n_rois, &count, &t->logger);
    if (st != GLCV_OK)
        return cli_lib_error(o->hist, st);
    if (count < o->n_rois) {
        cli_error("%s holds %d histogram%s for %d --roi", o->hist, count, count == 1 ? "" : "s", o->n_rois);
        return CLI_FAIL;
    }
    for (int k = 0; k < o->n_rois; k++)
        if (h[k].hue_bins != o->bins || h[k].sat_bins != o->sat_bins) {
            cli_error("%s: histogram %d has %d x %d bins, the tracker %d x %d (--bins, --sat-bins)", o->hist, k + 1,
                      h[k].hue_bins, h[k].sat_bins, o->bins, o->sat_bins);
            return CLI_FAIL;
        }
    *from_file = 1;
    return CLI_OK;
}

static int add_objects(track_run *t)
{
    const track_options *o = t->opt;
    glcv_track_hist *h = calloc((size_t)o->n_rois, sizeof *h);
    if (!h)
        return cli_out_of_memory();
    int from_file = 0;
    int rc = object_histograms(t, h, &from_file);
    for (int k = 0; k < o->n_rois && rc == CLI_OK; k++) {
        int id = -1;
        glcv_status st = glcv_track_add(t->tr, &h[k], o->rois[k], &id);
        if (st != GLCV_OK)
            rc = cli_lib_error("cannot add an object", st);
    }
    if (rc == CLI_OK && o->hist && !from_file) {
        glcv_status st = glcv_track_hist_save(o->hist, h, o->n_rois, &t->logger);
        if (st != GLCV_OK)
            rc = cli_lib_error(o->hist, st);
    }
    free(h);
    return rc;
}

/* Tracks frame 0 (read already) and every frame after it, a CSV row per frame and object. */
static int run_frames(track_run *t)
{
    const int n_rois = t->opt->n_rois;
    glcv_track_result *res = calloc((size_t)n_rois, sizeof *res);
    int *lost = calloc((size_t)n_rois, 3 * sizeof *lost); /* per object: lost frames, recoveries, lost now */
    int rc = res && lost ? CLI_OK : cli_out_of_memory();
    size_t total = t->media ? (size_t)t->opt->src.max_frames : (size_t)t->files.count;
    if (!t->media && t->opt->src.max_frames > 0 && t->opt->src.max_frames < t->files.count)
        total = (size_t)t->opt->src.max_frames;
    cli_progress bar = cli_progress_start_rate(t->opt->quiet, total, "frames");
    double sum_ms = 0.0;
    int end = 0;
    for (int f = 0; rc == CLI_OK; f++) {
        if (f > 0 && ((rc = read_frame(t, &end)) != CLI_OK || end))
            break;
        cli_progress_step(&bar);
        if (t->seg && f > 0 && (rc = segment_frame(t)) != CLI_OK)
            break;
        if (f == 0 && (rc = add_objects(t)) != CLI_OK)
            break;
        const glcv_image *mask = frame_mask(t);
        double t0 = cli_now();
        glcv_status st = glcv_track_frame(t->tr, &t->frame, mask);
        int count = 0;
        if (st == GLCV_OK)
            st = glcv_track_results(t->tr, res, n_rois, &count);
        sum_ms += 1e3 * (cli_now() - t0);
        if (st != GLCV_OK) {
            rc = cli_lib_error("tracking", st);
            break;
        }
        count = count < n_rois ? count : n_rois;
        if (t->boxes && f < t->boxes_capacity && count > 0)
            t->boxes[f] = res[0].bbox;
        t->lost_first += count > 0 && res[0].lost != 0;
        for (int k = 0; k < count && t->out; k++) {
            const glcv_track_result *r = &res[k];
            int *was_lost = &lost[2 * n_rois + k], recovered = !r->lost && *was_lost;
            lost[k] += r->lost != 0;
            lost[n_rois + k] += recovered;
            *was_lost = r->lost != 0;
            write_row(t->out, t->index, r->id, r, recovered);
        }
        if (t->opt->overlay)
            rc = write_overlay(t, res, count);
    }
    if (rc == CLI_OK)
        cli_progress_show(&bar, bar.done);
    cli_progress_end(&bar);
    if (rc == CLI_OK && t->out) {
        printf("frames %d objects %d\n", t->frames, n_rois);
        if (t->unmasked)
            printf("%d frames tracked without the mask (more than half of them foreground)\n", t->unmasked);
        printf("tracking %.3f ms per frame (mean of the frame and results calls)\n", sum_ms / t->frames);
        for (int k = 0; k < n_rois; k++)
            printf("object %d: lost in %d of %d frames, recovered %d times\n", k, lost[k], t->frames,
                   lost[n_rois + k]);
    }
    free(res);
    free(lost);
    return rc;
}

/* The tracker of the options, for `streams` cameras of width x height and `objects` boxes. */
static int make_tracker(const track_options *o, int width, int height, int streams, int objects, glcv_logger logger,
                        glcv_track **out)
{
    glcv_track_params p = GLCV_TRACK_PARAMS(.width = width, .height = height, .streams = streams,
                                            .max_objects = objects > 64 ? objects : 64, .hue_bins = o->bins,
                                            .sat_bins = o->sat_bins,
                                            .method = (glcv_track_method)(GLCV_TRACK_METHOD_CAMSHIFT + o->method),
                                            .window = (glcv_track_window)(GLCV_TRACK_WINDOW_OPENCV + o->window),
                                            .engine = o->engine, .logger = logger);
    glcv_status st = glcv_track_create(&p, out);
    if (st == GLCV_OK)
        st = glcv_track_set_limits(*out, o->s_min, o->v_min, o->v_max);
    return st == GLCV_OK ? CLI_OK : cli_lib_error("cannot create the tracker", st);
}

/* A GL context (for the GPU segmenter, and so that CUDA takes the GL context's device) unless the
 * engine is cpu, and the tracker. */
static int create_tracker(track_run *t)
{
    const track_options *o = t->opt;
    if (o->engine != GLCV_ENGINE_CPU) {
        glcv_context_params cp = GLCV_CONTEXT_PARAMS(.logger = t->logger);
        cp.logger.max_level = o->verbose ? GLCV_LOG_DEBUG : GLCV_LOG_ERROR;
        if (glcv_context_create(&cp, &t->ctx) != GLCV_OK)
            t->ctx = NULL;
    }
    return make_tracker(o, t->width, t->height, 1, o->n_rois, t->logger, &t->tr);
}

static void print_engines(const track_run *t)
{
    glcv_track_params got;
    glcv_track_get_params(t->tr, &got);
    fprintf(stderr, "glcv: track engine %s", glcv_engine_mode_string(got.engine));
    if (t->seg) {
        glcv_segment_params sp;
        glcv_segment_get_params(t->seg, &sp);
        fprintf(stderr, "; segmenter %s", glcv_engine_mode_string(sp.engine));
    }
    fprintf(stderr, "%s%s\n", t->ctx ? " on " : "", t->ctx ? glcv_context_describe(t->ctx) : "");
}

static void track_run_free(track_run *t)
{
    if (t->out)
        close_csv(t, 0);
    free(t->csv_tmp);
    glcv_track_destroy(&t->tr);
    glcv_segment_destroy(&t->seg);
    glcv_context_destroy(&t->ctx);
    glcv_image_free(&t->frame);
    glcv_image_free(&t->mask);
    glcv_image_free(&t->overlay);
    cli_source_close(&t->media);
    cli_paths_free(&t->files);
}

/* ---- glcv track --sources: a tracker per camera set ------------------------------------------------ */

/* One source of a set: its CSV file and overlays, its objects. */
typedef struct track_member {
    FILE *out;
    char *csv, *csv_tmp, *overlay_dir;
    int masked;   /* tracked with the segmenter's mask (a video file; a live one with --mask-from-segmenter) */
    int learned;  /* frames learned from */
    int started;  /* its objects are in (its first frame came) */
    int write_failed;
} track_member;

typedef struct track_set {
    const track_options *opt;
    glcv_logger logger;
    int width, height, count;
    const cli_set_member *members;
    track_member *m;
    glcv_track *tr;
    glcv_segment *seg;      /* streams = count, when a member is masked */
    glcv_image *masks;      /* per member: the segmenter's mask */
    const glcv_image **use; /* per member: the mask it is tracked with */
    glcv_image *use_images; /* the masks handed to the tracker */
    glcv_image full;        /* every pixel: a member without a mask */
    glcv_image overlay;
    glcv_track_result *res;
    int objects;            /* boxes of all members */
    int *member_of, *object_of, *was_lost; /* by tracker id */
} track_set;

static void track_set_free(track_set *t)
{
    glcv_track_destroy(&t->tr);
    glcv_segment_destroy(&t->seg);
    for (int k = 0; t->masks && k < t->count; k++)
        glcv_image_free(&t->masks[k]);
    for (int k = 0; t->m && k < t->count; k++) {
        free(t->m[k].csv);
        free(t->m[k].csv_tmp);
        free(t->m[k].overlay_dir);
    }
    free(t->m);
    free(t->masks);
    free(t->use);
    free(t->use_images);
    glcv_image_free(&t->full);
    glcv_image_free(&t->overlay);
    free(t->res);
    free(t->member_of);
    free(t->object_of);
    free(t->was_lost);
    free(t);
}

/* A member's CSV file (under a temporary name) and overlay folder in OUTDIR/camKKK/. */
static int open_member(track_set *t, int k)
{
    const track_options *o = t->opt;
    track_member *m = &t->m[k];
    char dir[32];
    snprintf(dir, sizeof dir, "cam%03d/", t->members[k].line);
    char *folder = cli_path_join(o->outdir, dir, "");
    if (!folder)
        return cli_out_of_memory();
    m->csv = cli_path_join(folder, o->csv, "");
    if (o->overlay)
        m->overlay_dir = cli_path_join(folder, o->overlay, "");
    free(folder);
    if (!m->csv || (o->overlay && !m->overlay_dir) || !(m->csv_tmp = malloc(strlen(m->csv) + 32)))
        return cli_out_of_memory();
    snprintf(m->csv_tmp, strlen(m->csv) + 32, "%s.tmp%ld", m->csv, (long)getpid());
    if (m->overlay_dir && cli_make_dir(m->overlay_dir) != CLI_OK)
        return CLI_FAIL;
    if (!(m->out = fopen(m->csv_tmp, "w"))) {
        cli_error("%s: cannot write: %s", m->csv, strerror(errno));
        return CLI_FAIL;
    }
    fputs(CSV_HEADER, m->out);
    return CLI_OK;
}

static int list_open(void *user, glcv_context *ctx, int width, int height, const cli_set_member *members, int count,
                     void **state, int *learn_frames, int *learns, char *engine_line, size_t engine_size)
{
    const track_options *o = user;
    track_set *t = calloc(1, sizeof *t);
    if (!t)
        return cli_out_of_memory();
    *t = (track_set){.opt = o, .logger = cli_logger(o->verbose), .width = width, .height = height, .count = count,
                     .members = members};
    *state = t;
    for (int k = 0; k < count; k++)
        t->objects += members[k].n_rois;
    t->m = calloc((size_t)count, sizeof *t->m);
    t->masks = calloc((size_t)count, sizeof *t->masks);
    t->use = calloc((size_t)count, sizeof *t->use);
    t->use_images = calloc((size_t)count, sizeof *t->use_images);
    t->res = calloc((size_t)t->objects, sizeof *t->res);
    t->member_of = calloc((size_t)t->objects, sizeof *t->member_of);
    t->object_of = calloc((size_t)t->objects, sizeof *t->object_of);
    t->was_lost = calloc((size_t)t->objects, sizeof *t->was_lost);
    if (!t->m || !t->masks || !t->use || !t->use_images || !t->res || !t->member_of || !t->object_of ||
        !t->was_lost || glcv_image_alloc(width, height, GLCV_PIXEL_GRAY8, &t->full) != GLCV_OK)
        return cli_out_of_memory();
    memset(t->full.data, 255, glcv_image_stride(&t->full) * (size_t)height);
    for (int k = 0; k < count; k++)
        for (int b = 0; b < members[k].n_rois; b++) {
            const glcv_rect *r = &members[k].rois[b];
            if (r->x >= width || r->y >= height || r->x + r->width <= 0 || r->y + r->height <= 0) {
                cli_error("%s:%d: roi=%d,%d,%d,%d is outside the %dx%d frames of '%s'", o->sources, members[k].line + 1,
                          r->x, r->y, r->width, r->height, width, height, members[k].text);
                return CLI_FAIL;
            }
        }
    if (make_tracker(o, width, height, count, t->objects, t->logger, &t->tr) != CLI_OK)
        return CLI_FAIL;
    glcv_status st = GLCV_OK;
    int masked = 0;
    for (int k = 0; k < count; k++) {
        t->m[k].masked = o->mask_from_segmenter || (!members[k].live && !o->no_mask);
        masked += t->m[k].masked;
        learns[k] = t->m[k].masked;
    }
    glcv_track_params got;
    glcv_track_get_params(t->tr, &got);
    snprintf(engine_line, engine_size, "track %s", glcv_engine_mode_string(got.engine));
    if (masked > 0) {
        glcv_engine_mode engine = o->engine == GLCV_ENGINE_CPU || !ctx ? GLCV_ENGINE_CPU : GLCV_ENGINE_AUTO;
        glcv_segment_params sp = GLCV_SEGMENT_PARAMS(.width = width, .height = height, .ts = (float)o->ts,
                                                     .engine = engine, .fixed_parameters = 1, .streams = count,
                                                     .logger = t->logger);
        if ((st = glcv_segment_create(&sp, &t->seg)) != GLCV_OK)
            return cli_lib_error("cannot create the segmenter", st);
        if ((st = glcv_segment_learn_begin(t->seg)) != GLCV_OK)
            return cli_lib_error("cannot start learning the background", st);
        for (int k = 0; k < count; k++)
            if ((st = glcv_image_alloc(width, height, GLCV_PIXEL_GRAY8, &t->masks[k])) != GLCV_OK)
                return cli_lib_error("mask", st);
        *learn_frames = MEDIAN_FRAMES;
        glcv_segment_get_params(t->seg, &sp);
        size_t used = strlen(engine_line);
        snprintf(engine_line + used, engine_size - used, ", segmenter %s", glcv_engine_mode_string(sp.engine));
    }
    if (o->overlay && glcv_image_alloc(width, height, GLCV_PIXEL_RGB8, &t->overlay) != GLCV_OK)
        return cli_out_of_memory();
    for (int k = 0; k < count; k++)
        if (open_member(t, k) != CLI_OK)
            return CLI_FAIL;
    return CLI_OK;
}

static int list_learn(void *state, int member, const glcv_image *frame)
{
    track_set *t = state;
    glcv_status st = glcv_segment_learn_add_stream(t->seg, member, frame);
    t->m[member].learned++;
    return st == GLCV_OK ? CLI_OK : cli_lib_error("cannot learn the background", st);
}

/* Every stream learns from at least one frame: the members tracked without a mask (and those that
 * gave none) from a black one, whose mask is never used. */
static int list_learn_end(void *state)
{
    track_set *t = state;
    glcv_image black = {0};
    glcv_status st = GLCV_OK;
    for (int k = 0; k < t->count && st == GLCV_OK; k++) {
        if (t->m[k].learned > 0)
            continue;
        if (!black.data && (st = glcv_image_alloc(t->width, t->height, GLCV_PIXEL_RGB8, &black)) == GLCV_OK)
            memset(black.data, 0, glcv_image_stride(&black) * (size_t)t->height);
        if (st == GLCV_OK)
            st = glcv_segment_learn_add_stream(t->seg, k, &black);
        t->m[k].masked = 0; /* no frame of its own to learn from: tracked without the mask */
    }
    glcv_image_free(&black);
    if (st == GLCV_OK)
        st = glcv_segment_learn_end(t->seg);
    return st == GLCV_OK ? CLI_OK : cli_lib_error("cannot learn the background", st);
}

/* A member's first frame: its objects' histograms and boxes. */
static int start_member(track_set *t, int k, const glcv_image *frame)
{
    const cli_set_member *mb = &t->members[k];
    for (int b = 0; b < mb->n_rois; b++) {
        glcv_track_hist h;
        int id = -1;
        if (object_histogram(t->tr, t->opt, frame, t->use[k] == &t->full ? NULL : t->use[k], mb->rois[b], &h) !=
            CLI_OK)
            return CLI_FAIL;
        glcv_status st = glcv_track_add_to_stream(t->tr, k, &h, mb->rois[b], &id);
        if (st != GLCV_OK)
            return cli_lib_error("cannot add an object", st);
        t->member_of[id] = k;
        t->object_of[id] = b;
    }
    t->m[k].started = 1;
    return CLI_OK;
}

static int list_frames(void *state, const glcv_image *frames, const glcv_media_set_frame *out, const int64_t *index)
{
    track_set *t = state;
    glcv_status st = GLCV_OK;
    if (t->seg && (st = glcv_segment_frames(t->seg, frames, t->count, 1)) == GLCV_OK)
        st = glcv_segment_read_masks(t->seg, t->masks, t->count);
    if (st != GLCV_OK)
        return cli_lib_error("segmentation", st);
    for (int k = 0; k < t->count; k++) {
        int use_mask = t->m[k].masked && out[k].has_frame && !mostly_foreground(&t->masks[k]);
        t->use[k] = use_mask ? &t->masks[k] : &t->full;
        t->use_images[k] = *t->use[k];
    }
    for (int k = 0; k < t->count; k++)
        if (out[k].has_frame && !t->m[k].started && start_member(t, k, &frames[k]) != CLI_OK)
            return CLI_FAIL;
    int count = 0;
    st = glcv_track_frames(t->tr, frames, t->use_images, t->count);
    if (st == GLCV_OK)
        st = glcv_track_results(t->tr, t->res, t->objects, &count);
    if (st != GLCV_OK)
        return cli_lib_error("tracking", st);
    for (int i = 0; i < count; i++) {
        const glcv_track_result *r = &t->res[i];
        int k = t->member_of[r->id];
        if (!out[k].has_frame || !t->m[k].out)
            continue;
        int recovered = !r->lost && t->was_lost[r->id];
        t->was_lost[r->id] = r->lost != 0;
        write_row(t->m[k].out, index[k], t->object_of[r->id], r, recovered);
    }
    for (int k = 0; t->opt->overlay && k < t->count; k++) {
        if (!out[k].has_frame)
            continue;
        if ((st = glcv_image_convert(&frames[k], &t->overlay)) != GLCV_OK)
            return cli_lib_error("overlay", st);
        for (int i = 0; i < count; i++)
            if (t->member_of[t->res[i].id] == k)
                draw_result(&t->overlay, &t->res[i], t->object_of[t->res[i].id]);
        char name[64];
        snprintf(name, sizeof name, "frame_%06" PRId64, index[k]);
        char *path = cli_path_join(t->m[k].overlay_dir, name, "_track.png");
        if (!path)
            return cli_out_of_memory();
        st = glcv_image_save_png(path, &t->overlay, &t->logger);
        int rc = st == GLCV_OK ? CLI_OK : cli_lib_error(path, st);
        free(path);
        if (rc != CLI_OK)
            return rc;
    }
    return CLI_OK;
}

/* Each member's CSV file under its name when it tracked a frame (the rows of the frames it gave,
 * a source that failed included); removed otherwise. */
static void list_close(void *state, int ok)
{
    track_set *t = state;
    (void)ok;
    for (int k = 0; k < t->count; k++) {
        track_member *m = &t->m[k];
        if (!m->out)
            continue;
        int bad = ferror(m->out);
        bad |= fclose(m->out) != 0;
        if (m->started && !bad && rename(m->csv_tmp, m->csv) == 0)
            continue;
        if (m->started)
            cli_error("%s: cannot write: %s", m->csv, strerror(errno));
        remove(m->csv_tmp);
    }
    track_set_free(t);
}

/* --sources: the camera list's run (sources.h). */
static int track_sources(track_options *o, const cli_args *args)
{
    int kind = -1;
    int rc = cli_source_kind(&o->src, &kind);
    if (rc != CLI_OK)
        return rc;
    if (args->count > 0)
        return cli_usage("--sources takes its sources from the list, not as arguments (got '%s')", args->items[0]);
    if (kind >= 0)
        return cli_usage("--sources excludes the other inputs (a source option)");
    const void *unsupported[] = {&o->src.rate, &o->src.camera_format, &o->src.loop, &o->hist};
    const char *names[] = {"--rate", "--camera-format", "--loop and --no-loop", "--hist"};
    for (int i = 0; i < 4; i++)
        if (cli_given(args, unsupported[i]))
            return cli_usage("%s does not apply to --sources", names[i]);
    if (!o->outdir)
        return cli_usage("no output folder: give -o OUTDIR");
    if (!o->csv)
        o->csv = "tracks.csv";
    if (strchr(o->csv, '/') || (o->overlay && strchr(o->overlay, '/')))
        return cli_usage("with --sources, --csv and --overlay name a file and a folder inside each camera's folder");
    if ((rc = check_model_options(o)) != CLI_OK)
        return rc;
    if (o->no_mask && o->mask_from_segmenter)
        return cli_usage("--no-mask and --mask-from-segmenter: give one");
    if (cli_given(args, &o->gpus) && o->engine == GLCV_ENGINE_CPU)
        return cli_usage("--gpus needs a GPU engine, not --engine cpu");
    cli_sources_work work = {.user = o,
                             .engine = o->engine,
                             .max_set_objects = GLCV_TRACK_MAX_OBJECTS,
                             .rois = o->rois,
                             .n_rois = o->n_rois,
                             .done = "tracked",
                             .open = list_open,
                             .learn = list_learn,
                             .learn_end = list_learn_end,
                             .frames = list_frames,
                             .close = list_close};
    cli_sources_options so = {.list = o->sources,
                              .outdir = o->outdir,
                              .src = &o->src,
                              .work = &work,
                              .masks = 1,
                              .gpus = cli_given(args, &o->gpus) ? cli_gpus(o->gpus) : 1,
                              .decoder = o->decoder,
                              .cpu_share = o->cpu_decode,
                              .nvdec_sessions = cli_given(args, &o->nvdec_sessions) ? o->nvdec_sessions : -1,
                              .quiet = o->quiet,
                              .verbose = o->verbose};
    return cli_sources_run(&so, args);
}

int cmd_track(int argc, char **argv)
{
    track_options o = TRACK_OPTIONS_INIT;
    const cli_option options[] = {
        CLI_QUIET_VERBOSE_OPTIONS(&o.quiet, &o.verbose),
        {"--roi", NULL, o.rois, .kind = CLI_RECT, .count = &o.n_rois, .max_count = MAX_ROIS},
        {"--csv", NULL, &o.csv, .kind = CLI_STRING, .what = "file name"},
        {"--overlay", NULL, &o.overlay, .kind = CLI_STRING, .what = "folder name"},
        {"--hist", NULL, &o.hist, .kind = CLI_STRING, .what = "file name"},
        {"--mask-from-segmenter", NULL, &o.mask_from_segmenter, .kind = CLI_FLAG},
        TRACK_OPTIONS(&o),
        CLI_SOURCE_OPTIONS(&o.src),
        {"--sources", NULL, &o.sources, .kind = CLI_STRING, .what = "file name"},
        {"--output", "-o", &o.outdir, .kind = CLI_STRING, .what = "folder name"},
        {"--gpus", NULL, &o.gpus, .kind = CLI_INT, .min = 0, .max = CLI_MAX_GPUS},
        {"--decoder", NULL, &o.decoder, .kind = CLI_CHOICE, .choices = cli_decoder_names, .what = "a decoder"},
        {"--cpu-decode", NULL, &o.cpu_decode, .kind = CLI_REAL, .min = 0.0, .max = 1.0},
        {"--nvdec-sessions", NULL, &o.nvdec_sessions, .kind = CLI_INT, .min = 0, .max = 100000},
        {NULL},
    };
    cli_args args;
    int kind = -1;
    int rc = cli_parse(options, argc, argv, &args);
    if (rc == CLI_OK && o.sources)
        return track_sources(&o, &args);
    const void *list_only[] = {&o.outdir, &o.gpus, &o.decoder, &o.cpu_decode, &o.nvdec_sessions};
    for (int i = 0; rc == CLI_OK && i < 5; i++)
        if (cli_given(&args, list_only[i]))
            rc = cli_usage("-o, --gpus, --decoder, --cpu-decode and --nvdec-sessions apply to --sources");
    if (rc == CLI_OK)
        rc = check_options(&o, &args, &kind);
    if (rc != CLI_OK)
        return rc;
    track_run t = {.opt = &o, .logger = cli_logger(o.verbose)};
    if (kind >= 0) {
        rc = cli_source_open_args(&o.src, &args, kind, o.quiet, &t.logger, &t.media, &t.width, &t.height);
        glcv_status st = rc == CLI_OK ? glcv_image_alloc(t.width, t.height, GLCV_PIXEL_RGB8, &t.frame) : GLCV_OK;
        if (st != GLCV_OK)
            rc = cli_lib_error("frame", st);
    } else {
        rc = cli_collect_images(args.items, args.count, &t.files);
        if (rc == CLI_OK)
            rc = cli_common_size(t.files.items, t.files.count, o.verbose ? &t.logger : NULL, &t.width, &t.height);
        if (rc == CLI_OK && o.overlay)
            rc = cli_check_distinct_stems(t.files.items, t.files.count, "_track.png");
    }
    if (rc == CLI_OK)
        rc = check_rois(&t);
    if (rc == CLI_OK)
        rc = create_tracker(&t);
    cli_interrupt_catch();
    /* the mask by default where a background can be learned: files, folders, a video file, frames
     * of a folder or pattern - not a camera or a lavfi graph (live: asked for with the flag) */
    int finite = kind < 0 || kind == CLI_SOURCE_VIDEO || kind == CLI_SOURCE_FRAMES || kind == CLI_SOURCE_SEQUENCE;
    if (rc == CLI_OK && (o.mask_from_segmenter || (finite && !o.no_mask)))
        rc = start_segmenter(&t, &args, kind);
    /* the overlay folder once the background's frames have all decoded */
    if (rc == CLI_OK && o.overlay)
        rc = cli_make_dir(o.overlay);
    if (rc == CLI_OK && !o.quiet)
        print_engines(&t);
    int end = 0;
    if (rc == CLI_OK && (rc = read_frame(&t, &end)) == CLI_OK && end) {
        cli_error(cli_interrupted() ? "interrupted before the first frame" : "the input has no frames");
        rc = CLI_FAIL;
    }
    if (rc == CLI_OK && t.seg)
        rc = segment_frame(&t);
    if (rc == CLI_OK && o.overlay) {
        glcv_status st = glcv_image_alloc(t.width, t.height, GLCV_PIXEL_RGB8, &t.overlay);
        if (st != GLCV_OK)
            rc = cli_lib_error("overlay", st);
    }
    if (rc == CLI_OK)
        rc = open_csv(&t);
    if (rc == CLI_OK)
        rc = run_frames(&t);
    cli_interrupt_release();
    if (t.out) {
        int closed = close_csv(&t, rc == CLI_OK);
        rc = rc == CLI_OK ? closed : rc;
    }
    if (rc == CLI_OK && cli_interrupted()) {
        cli_warning("interrupted: stopped reading after %d frames", t.frames);
        rc = CLI_INTERRUPTED;
    }
    track_run_free(&t);
    return rc;
}

/* ---- glcv eval otb: the tracker on OTB sequences ----------------------------------------------------- */

const char cmd_eval_otb_help[] =
    "usage: glcv eval otb SEQDIR... [options]\n"
    "\n"
    "Scores the tracker on sequences of the OTB benchmark (Wu, Lim and Yang 2013) with its one-pass\n"
    "protocol: the tracker starts from the first frame's ground-truth box and runs through every\n"
    "frame. Each SEQDIR holds, as the benchmark distributes it:\n"
    "  img/0001.jpg ...          the frames (any image files, in name order)\n"
    "  groundtruth_rect.txt      a box per frame: x,y,w,h in pixels, 1-based, separated by commas,\n"
    "                            tabs or spaces (CRLF line ends accepted); frames past its last line\n"
    "                            are not tracked, a box of width or height <= 0 is not scored\n"
    "Per sequence it prints the mean IoU of the tracker's axis-aligned box with the ground truth,\n"
    "the success AUC (the mean, over the thresholds 0, 0.05, ..., 1, of the share of frames whose\n"
    "IoU is above the threshold), the precision at 20 px (the share of frames whose box centre is\n"
    "within 20 pixels of the ground truth's) and the frames lost; then a summary line: the means\n"
    "over the sequences.\n"
    "\n"
    "options: as 'glcv track' (see its --help): --no-mask --bg-weighted --Ts --bins --sat-bins --smin --vmin\n"
    "--vmax --window --engine -q -v; the defaults are glcv track's (the segmenter's mask, the\n"
    "adaptive window).\n"
    "Example: glcv eval otb OTB100/Crossing OTB100/Walking\n";

enum { OTB_THRESHOLDS = 21, OTB_PRECISION_PX = 20 };

/* Reads SEQDIR/groundtruth_rect.txt: up to `capacity` boxes (x, y, w, h, 1-based) into `gt`. */
static int read_otb_truth(const char *dir, double (*gt)[4], int capacity, int *count)
{
    char *path = cli_path_join(dir, "groundtruth_rect", ".txt");
    if (!path)
        return cli_out_of_memory();
    FILE *f = fopen(path, "r");
    if (!f) {
        cli_error("%s: cannot read: %s", path, strerror(errno));
        free(path);
        return CLI_FAIL;
    }
    char line[512];
    int n = 0, rc = CLI_OK, lineno = 0;
    while (rc == CLI_OK && n < capacity && fgets(line, sizeof line, f)) {
        lineno++;
        double v[4];
        int parsed = cli_parse_box_line(line, v);
        if (parsed == 0)
            continue; /* an empty line */
        if (parsed < 0) {
            cli_error("%s:%d: expected x,y,w,h", path, lineno);
            rc = CLI_FAIL;
            break;
        }
        memcpy(gt[n++], v, sizeof v);
    }
    fclose(f);
    if (rc == CLI_OK && n == 0) {
        cli_error("%s: no boxes", path);
        rc = CLI_FAIL;
    }
    free(path);
    *count = n;
    return rc;
}

typedef struct otb_score {
    double iou, auc, precision;
    int frames, scored, lost;
} otb_score;

/* The scores of boxes[0..n-1] (0-based pixels) against the ground truth (1-based). */
static otb_score score_otb(const glcv_rect *boxes, double (*gt)[4], int n)
{
    otb_score s = {0};
    int above[OTB_THRESHOLDS] = {0}, near = 0;
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double gx = gt[i][0] - 1.0, gy = gt[i][1] - 1.0, gw = gt[i][2], gh = gt[i][3];
        if (gw <= 0 || gh <= 0)
            continue;
        const glcv_rect *b = &boxes[i];
        double ix = fmin(b->x + b->width, gx + gw) - fmax(b->x, gx);
        double iy = fmin(b->y + b->height, gy + gh) - fmax(b->y, gy);
        double inter = ix > 0 && iy > 0 ? ix * iy : 0;
        double uni = (double)b->width * b->height + gw * gh - inter;
        double iou = uni > 0 ? inter / uni : 0;
        double dx = b->x + b->width * 0.5 - (gx + gw * 0.5), dy = b->y + b->height * 0.5 - (gy + gh * 0.5);
        sum += iou;
        for (int k = 0; k < OTB_THRESHOLDS; k++)
            above[k] += iou > k / (double)(OTB_THRESHOLDS - 1);
        near += dx * dx + dy * dy <= OTB_PRECISION_PX * OTB_PRECISION_PX;
        s.scored++;
    }
    s.frames = n;
    if (s.scored > 0) {
        s.iou = sum / s.scored;
        for (int k = 0; k < OTB_THRESHOLDS; k++)
            s.auc += above[k] / (double)s.scored / OTB_THRESHOLDS;
        s.precision = near / (double)s.scored;
    }
    return s;
}

/* Tracks one sequence with the options `o` (its first ground-truth box as the object). */
static int eval_sequence(track_options *o, const char *dir, otb_score *score)
{
    double(*gt)[4] = malloc(sizeof *gt * 100000);
    track_run t = {.opt = o, .logger = cli_logger(o->verbose)};
    int n_gt = 0;
    int rc = gt ? read_otb_truth(dir, gt, 100000, &n_gt) : cli_out_of_memory();
    char *img = rc == CLI_OK ? cli_path_join(dir, "img", "") : NULL;
    if (rc == CLI_OK && !img)
        rc = cli_out_of_memory();
    if (rc == CLI_OK)
        rc = cli_collect_images(&img, 1, &t.files);
    while (rc == CLI_OK && t.files.count > n_gt) /* only frames with ground truth */
        free(t.files.items[--t.files.count]);
    if (rc == CLI_OK)
        rc = cli_common_size(t.files.items, t.files.count, o->verbose ? &t.logger : NULL, &t.width, &t.height);
    if (rc == CLI_OK) {
        o->n_rois = 1;
        o->rois[0] = (glcv_rect){(int)lrint(gt[0][0] - 1.0), (int)lrint(gt[0][1] - 1.0), (int)lrint(gt[0][2]),
                                 (int)lrint(gt[0][3])};
        rc = check_rois(&t);
    }
    if (rc == CLI_OK && !(t.boxes = calloc((size_t)t.files.count, sizeof *t.boxes)))
        rc = cli_out_of_memory();
    t.boxes_capacity = t.files.count;
    if (rc == CLI_OK)
        rc = create_tracker(&t);
    if (rc == CLI_OK && !o->no_mask)
        rc = start_segmenter(&t, NULL, -1);
    int end = 0;
    if (rc == CLI_OK && (rc = read_frame(&t, &end)) == CLI_OK && end) {
        cli_error("%s: no frames", dir);
        rc = CLI_FAIL;
    }
    if (rc == CLI_OK && t.seg)
        rc = segment_frame(&t);
    if (rc == CLI_OK)
        rc = run_frames(&t);
    if (rc == CLI_OK) {
        *score = score_otb(t.boxes, gt, t.frames);
        score->lost = t.lost_first;
    }
    free(img);
    free(gt);
    free(t.boxes);
    track_run_free(&t);
    return rc;
}

int cmd_eval_otb(int argc, char **argv)
{
    track_options o = TRACK_OPTIONS_INIT;
    const cli_option options[] = {
        CLI_QUIET_VERBOSE_OPTIONS(&o.quiet, &o.verbose),
        TRACK_OPTIONS(&o),
        {NULL},
    };
    static const cli_command otb = {"eval otb", "", cmd_eval_otb_help, cmd_eval_otb};
    cli_start("glcv", &otb); /* its help and usage lines */
    cli_args args;
    int rc = cli_parse_expecting(options, argc, argv, &args, 1, 100000, "one or more sequence folders");
    if (rc == CLI_OK)
        rc = check_model_options(&o);
    if (rc != CLI_OK)
        return rc;
    o.quiet = 1; /* no progress bars, no engine lines: one line per sequence */
    printf("%-24s %7s %7s %7s %7s %6s\n", "sequence", "frames", "meanIoU", "AUC", "prec20", "lost");
    double sum_iou = 0, sum_auc = 0, sum_prec = 0;
    int done = 0;
    for (int i = 0; i < args.count && rc == CLI_OK; i++) {
        otb_score s;
        rc = eval_sequence(&o, args.items[i], &s);
        if (rc != CLI_OK)
            break;
        char name[256];
        snprintf(name, sizeof name, "%s", args.items[i]);
        for (size_t n = strlen(name); n > 1 && name[n - 1] == '/'; n--)
            name[n - 1] = '\0';
        const char *base = strrchr(name, '/');
        printf("%-24s %7d %7.3f %7.3f %7.3f %6d\n", base ? base + 1 : name, s.frames, s.iou, s.auc, s.precision,
               s.lost);
        sum_iou += s.iou;
        sum_auc += s.auc;
        sum_prec += s.precision;
        done++;
    }
    if (rc == CLI_OK)
        printf("summary: %d sequences, mean IoU %.3f, AUC %.3f, precision@20 %.3f\n", done, sum_iou / done,
               sum_auc / done, sum_prec / done);
    return rc;
}
