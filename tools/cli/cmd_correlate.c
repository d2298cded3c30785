/* glcv correlate: Pearson correlation of one reference image against many images. */
#include "cli.h"
#include "commands.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_correlate_help[] =
    "usage: glcv correlate REFERENCE IMAGE... [options]\n"
    "\n"
    "Prints Pearson's correlation coefficient of REFERENCE with every IMAGE, one line each, in\n"
    "the order given:\n"
    "  file,r\n"
    "r is in -1..1 (1: the same up to brightness and contrast; -1: the negative; 0 when either\n"
    "image is uniform). The sums are exact integers, so r is exact up to its last digits. An IMAGE\n"
    "that is a folder stands for its image files (.png .jpg .jpeg .bmp .tga .ppm .pgm), sorted by\n"
    "name. All images must have the reference's size. Runs on the GPU with CUDA when a device is\n"
    "there, else on the CPU.\n"
    "\n"
    "options:\n"
    "  --csv FILE         also write the lines to FILE, after a header line 'file,r'\n"
    "  --rgb              correlate the three colour channels' values (default: gray values)\n"
    "  --engine E         auto, cuda or cpu [auto]\n"
    "  -q, --quiet        no summary line on stderr\n"
    "  -v, --verbose      print the library's debug messages\n"
    "  -h, --help         show this help\n";

typedef struct correlate_options {
    int quiet, verbose, rgb;
    const char *csv;
    glcv_engine_mode engine;
} correlate_options;

/* Prints "file,r" lines to stdout and, when given, to the CSV file after its header. */
static int print_results(const correlate_options *o, const cli_paths *files, const double *r)
{
    FILE *csv = NULL;
    if (o->csv && !(csv = fopen(o->csv, "w"))) {
        cli_error("%s: %s", o->csv, strerror(errno));
        return CLI_FAIL;
    }
    if (csv)
        fprintf(csv, "file,r\n");
    for (int i = 0; i < files->count; i++) {
        printf("%s,%.9f\n", files->items[i], r[i]);
        if (csv)
            fprintf(csv, "%s,%.9f\n", files->items[i], r[i]);
    }
    int rc = CLI_OK;
    if (csv && (fflush(csv) != 0 || ferror(csv))) {
        cli_error("%s: cannot write: %s", o->csv, strerror(errno));
        rc = CLI_FAIL;
    }
    if (csv)
        fclose(csv);
    return rc;
}

int cmd_correlate(int argc, char **argv)
{
    correlate_options o = {.engine = GLCV_ENGINE_AUTO};
    const cli_option options[] = {
        CLI_QUIET_VERBOSE_OPTIONS(&o.quiet, &o.verbose),
        {"--engine", NULL, &o.engine, .kind = CLI_ENGINE, .choices = cli_cuda_engines},
        {"--csv", NULL, &o.csv, .kind = CLI_STRING, .what = "file name"},
        {"--rgb", NULL, &o.rgb, .kind = CLI_FLAG},
        {NULL},
    };
    cli_args args;
    int rc = cli_parse_expecting(options, argc, argv, &args, 2, INT_MAX, "a reference image and at least one image");
    if (rc != CLI_OK)
        return rc;
    const char *reference = args.items[0];
    glcv_logger lg = cli_logger(o.verbose);
    cli_paths files = {0};
    glcv_image ref = {0};
    glcv_correlate *c = NULL;
    double *r = NULL;
    int w = 0, h = 0, channels = 0;
    rc = cli_collect_images(args.items + 1, args.count - 1, &files);
    if (rc == CLI_OK)
        rc = cli_probe_image(reference, &lg, &w, &h, &channels);
    for (int i = 0; i < files.count && rc == CLI_OK; i++)
        rc = cli_check_size(files.items[i], reference, w, h, &lg);
    glcv_pixel_format format = o.rgb ? GLCV_PIXEL_RGB8 : GLCV_PIXEL_GRAY8;
    glcv_status st = GLCV_OK;
    if (rc == CLI_OK && (st = glcv_image_load(reference, format, &lg, &ref)) != GLCV_OK)
        rc = cli_lib_error(reference, st);
    glcv_correlate_params p = GLCV_CORRELATE_PARAMS(.width = w, .height = h, .format = format, .engine = o.engine,
                                                    .logger = lg);
    if (rc == CLI_OK && (st = glcv_correlate_create(&p, &c)) != GLCV_OK)
        rc = cli_lib_error("cannot create the correlator", st);
    if (rc == CLI_OK && (st = glcv_correlate_set_reference(c, &ref)) != GLCV_OK)
        rc = cli_lib_error(reference, st);
    if (rc == CLI_OK && !(r = malloc((size_t)files.count * sizeof *r)))
        rc = cli_out_of_memory();
    double t0 = cli_now();
    if (rc == CLI_OK && (st = glcv_correlate_files(c, (const char *const *)files.items, files.count, r)) != GLCV_OK)
        rc = cli_lib_error("correlation failed", st);
    double ms = 1e3 * (cli_now() - t0);
    if (rc == CLI_OK)
        rc = print_results(&o, &files, r);
    if (rc == CLI_OK && !o.quiet) {
        glcv_correlate_params used;
        glcv_correlate_get_params(c, &used);
        fprintf(stderr, "glcv: correlated %d image%s of %dx%d (%s) with %s on %s in %.1f ms (files read included)\n",
                files.count, files.count == 1 ? "" : "s", w, h, o.rgb ? "RGB" : "gray", reference,
                glcv_engine_mode_string(used.engine), ms);
    }
    free(r);
    glcv_correlate_destroy(&c);
    glcv_image_free(&ref);
    cli_paths_free(&files);
    return rc;
}
