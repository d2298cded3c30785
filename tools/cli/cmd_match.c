/* glcv match: template matching of one template in one image: the best positions, the score
 * map, timings. */
#include "cli.h"
#include "commands.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { MAX_TOP = 100000, MAX_REPEAT = 1000000 };

const char cmd_match_help[] =
    "usage: glcv match IMAGE TEMPLATE [options]\n"
    "\n"
    "Slides TEMPLATE over IMAGE and prints the best positions, one line each, best first:\n"
    "  x,y,score\n"
    "x,y is the template's top-left corner in the image (add half the template's size for its\n"
    "centre); score is the metric's value there. Runs on the GPU with CUDA when a device is there,\n"
    "else on the CPU (SIMD and all cores); both give the same scores.\n"
    "\n"
    "Colour images are matched in colour (the three channels' results added) unless --gray is\n"
    "given; a gray image or template makes both gray.\n"
    "\n"
    "options:\n"
    "  --metric M         sad (sum of absolute differences; default), ssd (sum of squared\n"
    "                     differences), linf (largest absolute difference): smaller is better;\n"
    "                     zncc (zero-mean normalised cross-correlation, -1..1): larger is better\n"
    "  --mask FILE        a mask of the template's size: only its nonzero pixels count\n"
    "  --roi x,y,w,h      search only positions where the template lies inside this rectangle\n"
    "  --top K            print the K best positions (default 1), each at least --nms pixels away\n"
    "                     from every better one in x or y\n"
    "  --nms D            that distance (default: half the template's smaller side)\n"
    "  --map FILE         write the score map as an 8-bit PNG of the image's size: 255 at the best\n"
    "                     score, 0 at the worst and where the template does not fit\n"
    "  --gray             match in gray even when both files are colour\n"
    "  --engine E         auto, cuda or cpu [auto]\n"
    "  --repeat N         match N times and print the best and median time per match (loading\n"
    "                     the files excluded) on a line starting with '#'\n"
    "  -q, --quiet        no engine line on stderr\n"
    "  -v, --verbose      print the library's debug messages\n"
    "  -h, --help         show this help\n"
    "\n"
    "Options may also be written --name=value.\n"
    "Example: glcv match scene.png logo.png --metric zncc --top 3 --map scores.png\n";

/* --metric's names (glcv_match_metric_parse's). */
static const char *const metric_names[] = {"sad", "ssd", "linf", "zncc", NULL};

typedef struct match_options {
    int quiet, verbose, gray;
    int metric; /* index in metric_names */
    const char *mask, *map;
    glcv_rect roi;
    int top, nms, repeat;
    glcv_engine_mode engine;
} match_options;

/* The images, the matcher and what it found. */
typedef struct match_run {
    const match_options *opt;
    glcv_logger logger;
    const char *image_path, *templ_path;
    int iw, ih, tw, th;
    glcv_match_metric metric;
    glcv_image image, templ, mask;
    glcv_match *m;
    glcv_match_params used;
    double *times;
    glcv_match_hit *hits;
} match_run;

static int write_map(match_run *run)
{
    int w = run->iw, h = run->ih;
    float *norm = malloc((size_t)w * (size_t)h * sizeof *norm);
    glcv_image out = {0};
    glcv_status st = norm ? glcv_image_alloc(w, h, GLCV_PIXEL_GRAY8, &out) : GLCV_ERROR_OUT_OF_MEMORY;
    if (st == GLCV_OK)
        st = glcv_match_read_normalized(run->m, norm, 0);
    if (st == GLCV_OK) {
        for (size_t i = 0; i < (size_t)w * (size_t)h; i++)
            out.data[i] = (uint8_t)lrintf(norm[i] * 255.0f);
        st = glcv_image_save_png(run->opt->map, &out, &run->logger);
    }
    free(norm);
    glcv_image_free(&out);
    return st == GLCV_OK ? CLI_OK : cli_lib_error(run->opt->map, st);
}

/* Probes the files (sizes, the template inside the image, the mask the template's size) and
 * loads them, in colour when both are colour and --gray is not given. */
static int load_images(match_run *run)
{
    const match_options *o = run->opt;
    int ic = 0, tc = 0, mw = 0, mh = 0, mc = 0;
    if (cli_probe_image(run->image_path, &run->logger, &run->iw, &run->ih, &ic) != CLI_OK ||
        cli_probe_image(run->templ_path, &run->logger, &run->tw, &run->th, &tc) != CLI_OK)
        return CLI_FAIL;
    if (o->mask && cli_probe_image(o->mask, &run->logger, &mw, &mh, &mc) != CLI_OK)
        return CLI_FAIL;
    if (run->tw > run->iw || run->th > run->ih) {
        cli_error("template %s (%dx%d) is larger than image %s (%dx%d)", run->templ_path, run->tw, run->th,
                  run->image_path, run->iw, run->ih);
        return CLI_FAIL;
    }
    if (o->mask && (mw != run->tw || mh != run->th)) {
        cli_error("mask %s is %dx%d but template %s is %dx%d", o->mask, mw, mh, run->templ_path, run->tw, run->th);
        return CLI_FAIL;
    }
    glcv_pixel_format format = !o->gray && ic >= 3 && tc >= 3 ? GLCV_PIXEL_RGB8 : GLCV_PIXEL_GRAY8;
    glcv_status st = glcv_image_load(run->image_path, format, &run->logger, &run->image);
    if (st != GLCV_OK)
        return cli_lib_error(run->image_path, st);
    if ((st = glcv_image_load(run->templ_path, format, &run->logger, &run->templ)) != GLCV_OK)
        return cli_lib_error(run->templ_path, st);
    if (o->mask && (st = glcv_image_load(o->mask, GLCV_PIXEL_GRAY8, &run->logger, &run->mask)) != GLCV_OK)
        return cli_lib_error(o->mask, st);
    return CLI_OK;
}

/* The matcher with the template, mask and region; prints the engine line. */
static int create_matcher(match_run *run, const cli_args *args)
{
    const match_options *o = run->opt;
    glcv_match_params p = GLCV_MATCH_PARAMS(.width = run->iw, .height = run->ih, .format = run->image.format,
                                            .metric = run->metric, .engine = o->engine, .nms_distance = o->nms,
                                            .logger = run->logger);
    glcv_status st = glcv_match_create(&p, &run->m);
    if (st != GLCV_OK)
        return cli_lib_error("cannot create the matcher", st);
    glcv_match_get_params(run->m, &run->used);
    if (!o->quiet) {
        if (run->used.engine == GLCV_ENGINE_CUDA)
            fprintf(stderr, "glcv: match engine cuda (device %d, %d device%s)\n", run->used.cuda_device,
                    run->used.cuda_devices, run->used.cuda_devices == 1 ? "" : "s");
        else
            fprintf(stderr, "glcv: match engine cpu (%s)\n", glcv_match_simd_string(run->used.simd));
    }
    if ((st = glcv_match_set_template(run->m, &run->templ, o->mask ? &run->mask : NULL)) != GLCV_OK)
        return cli_lib_error(o->mask ? "cannot use the template and mask" : "cannot use the template", st);
    if (cli_given(args, &o->roi) && (st = glcv_match_set_roi(run->m, &o->roi)) != GLCV_OK)
        return cli_lib_error("--roi", st);
    return CLI_OK;
}

/* Matches --repeat times (once by default) and prints the best positions and the timing line. */
static int find_best(match_run *run)
{
    const match_options *o = run->opt;
    int runs = o->repeat > 0 ? o->repeat : 1;
    run->times = malloc((size_t)runs * sizeof *run->times);
    run->hits = malloc((size_t)o->top * sizeof *run->hits);
    if (!run->times || !run->hits)
        return cli_out_of_memory();
    for (int i = 0; i < runs; i++) {
        double t0 = cli_now();
        glcv_status st = glcv_match_image(run->m, &run->image);
        run->times[i] = 1e3 * (cli_now() - t0);
        if (st != GLCV_OK)
            return cli_lib_error("matching failed", st);
    }
    int count = 0;
    glcv_status st = glcv_match_best(run->m, o->top, run->hits, &count);
    if (st != GLCV_OK)
        return cli_lib_error("cannot find the best positions", st);
    if (count == 0)
        cli_warning("the template fits nowhere in the region searched");
    for (int i = 0; i < count; i++) {
        const glcv_match_hit *hit = &run->hits[i];
        if (run->metric == GLCV_MATCH_ZNCC)
            printf("%d,%d,%.6f\n", hit->x, hit->y, hit->score);
        else
            printf("%d,%d,%.0f\n", hit->x, hit->y, hit->score);
    }
    if (o->repeat > 0) {
        double median = cli_median(run->times, (size_t)runs);
        printf("# time per match: best %.3f ms, median %.3f ms over %d runs (%dx%d image, %dx%d template, %s, %s)\n",
               run->times[0], median, runs, run->iw, run->ih, run->tw, run->th, glcv_match_metric_string(run->metric),
               run->used.engine == GLCV_ENGINE_CUDA ? "cuda" : glcv_match_simd_string(run->used.simd));
    }
    return CLI_OK;
}

int cmd_match(int argc, char **argv)
{
    match_options o = {.top = 1, .engine = GLCV_ENGINE_AUTO};
    const cli_option options[] = {
        CLI_QUIET_VERBOSE_OPTIONS(&o.quiet, &o.verbose),
        {"--engine", NULL, &o.engine, .kind = CLI_ENGINE, .choices = cli_cuda_engines},
        {"--metric", NULL, &o.metric, .kind = CLI_CHOICE, .choices = metric_names, .what = "a metric"},
        {"--mask", NULL, &o.mask, .kind = CLI_STRING, .what = "file name"},
        {"--roi", NULL, &o.roi, .kind = CLI_RECT},
        {"--top", NULL, &o.top, .kind = CLI_INT, .min = 1, .max = MAX_TOP},
        {"--nms", NULL, &o.nms, .kind = CLI_INT, .min = 1, .max = CLI_MAX_SIDE},
        {"--map", NULL, &o.map, .kind = CLI_STRING, .what = "file name"},
        {"--gray", NULL, &o.gray, .kind = CLI_FLAG},
        {"--repeat", NULL, &o.repeat, .kind = CLI_INT, .min = 1, .max = MAX_REPEAT},
        {NULL},
    };
    cli_args args;
    int rc = cli_parse_expecting(options, argc, argv, &args, 2, 2, "an image and a template");
    if (rc != CLI_OK)
        return rc;
    if (o.nms && o.top == 1)
        cli_warning("--nms matters only with --top K > 1");
    match_run run = {.opt = &o, .logger = cli_logger(o.verbose), .image_path = args.items[0],
                     .templ_path = args.items[1]};
    glcv_match_metric_parse(metric_names[o.metric], &run.metric);
    rc = load_images(&run);
    if (rc == CLI_OK)
        rc = create_matcher(&run, &args);
    if (rc == CLI_OK)
        rc = find_best(&run);
    if (rc == CLI_OK && o.map)
        rc = write_map(&run);
    glcv_match_destroy(&run.m);
    glcv_image_free(&run.image);
    glcv_image_free(&run.templ);
    glcv_image_free(&run.mask);
    free(run.times);
    free(run.hits);
    return rc;
}
