/* glcv compare: scores a mask against a ground-truth mask (glcv_segment_score_add) and checks the
 * scores against minimums. */
#include "cli.h"
#include "commands.h"

#include <stdio.h>

const char cmd_compare_help[] =
    "usage: glcv compare MASK TRUTH [--min-precision P] [--min-recall R] [--min-f F]\n"
    "\n"
    "Scores a mask against a ground-truth mask of the same size. Pixels >= 128 (in grey; colour\n"
    "images are converted) are positive. Prints one line:\n"
    "  precision P recall R F F tp N fp N fn N tn N\n"
    "Precision is 1 when the mask has no positive pixel, recall is 1 when the truth has none.\n"
    "\n"
    "options:\n"
    "  --min-precision P  exit 1 when the precision is below P\n"
    "  --min-recall R     exit 1 when the recall is below R\n"
    "  --min-f F          exit 1 when F (harmonic mean of precision and recall) is below F\n"
    "  -v, --verbose      print the library's debug messages\n"
    "  -h, --help         show this help\n";

static int check_minimum(const char *what, double value, double minimum)
{
    if (value >= minimum)
        return CLI_OK;
    cli_error("%s %.4f is below the minimum %.4f", what, value, minimum);
    return CLI_FAIL;
}

int cmd_compare(int argc, char **argv)
{
    int verbose = 0;
    double min_precision = 0, min_recall = 0, min_f = 0;
    const cli_option options[] = {
        {"--verbose", "-v", &verbose, .kind = CLI_FLAG},
        {"--min-precision", NULL, &min_precision, .kind = CLI_REAL, .max = 1.0},
        {"--min-recall", NULL, &min_recall, .kind = CLI_REAL, .max = 1.0},
        {"--min-f", NULL, &min_f, .kind = CLI_REAL, .max = 1.0},
        {NULL},
    };
    cli_args args;
    int rc = cli_parse_expecting(options, argc, argv, &args, 2, 2, "two files, MASK and TRUTH");
    if (rc != CLI_OK)
        return rc;
    const char *mask_path = args.items[0], *truth_path = args.items[1];
    glcv_logger logger = cli_logger(verbose);
    glcv_image mask = {0}, truth = {0};
    int w = 0, h = 0, channels = 0;
    rc = cli_probe_image(mask_path, &logger, &w, &h, &channels);
    if (rc == CLI_OK)
        rc = cli_check_size(truth_path, mask_path, w, h, &logger);
    glcv_status st = GLCV_OK;
    if (rc == CLI_OK && (st = glcv_image_load(mask_path, GLCV_PIXEL_GRAY8, &logger, &mask)) != GLCV_OK)
        rc = cli_lib_error(mask_path, st);
    if (rc == CLI_OK && (st = glcv_image_load(truth_path, GLCV_PIXEL_GRAY8, &logger, &truth)) != GLCV_OK)
        rc = cli_lib_error(truth_path, st);
    glcv_segment_score score = {0};
    glcv_segment_metrics m = {0};
    if (rc == CLI_OK && (st = glcv_segment_score_add(&score, &mask, &truth, NULL, GLCV_TRUTH_BINARY)) != GLCV_OK)
        rc = cli_lib_error("cannot score the mask", st);
    if (rc == CLI_OK) {
        glcv_segment_score_metrics(&score, &m);
        printf("precision %.4f recall %.4f F %.4f tp %llu fp %llu fn %llu tn %llu\n", m.precision, m.recall, m.f,
               (unsigned long long)score.tp, (unsigned long long)score.fp, (unsigned long long)score.fn,
               (unsigned long long)score.tn);
        fflush(stdout);
        if (check_minimum("precision", m.precision, min_precision) != CLI_OK)
            rc = CLI_FAIL;
        if (check_minimum("recall", m.recall, min_recall) != CLI_OK)
            rc = CLI_FAIL;
        if (check_minimum("F", m.f, min_f) != CLI_OK)
            rc = CLI_FAIL;
    }
    glcv_image_free(&mask);
    glcv_image_free(&truth);
    return rc;
}
