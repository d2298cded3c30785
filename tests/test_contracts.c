/* The public API's argument contract, one table per class of fault: NULL pointers, sizes and
 * counts below 1, sizes whose products overflow, strides below a row, NaN and infinite reals,
 * enum values out of range, and calls that need GL with no context current. Each row calls one
 * public function with one bad argument and checks the exact status its header documents, that
 * the out-pointers are as documented (NULL, zeroed or unchanged) and, where the object has a
 * logger, that the message names the argument. The CPU engines need no GPU; the last table makes
 * a headless GL context (Mesa's llvmpipe in CI), objects in it, and destroys it.
 * One file over 800 lines: it is one table per class of fault across the whole API, on one
 * fixture; split by module, each part would repeat the fixture and the classes. */
#include "testutil.h"

#include <epoxy/gl.h>

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

enum { W = 32, H = 24 };

/* Every object and image the rows use: CPU engines, set up so that a call fails only for the
 * argument the row spoils. */
typedef struct fixture {
    capture log;
    glcv_logger lg;
    glcv_segment *seg;  /* one stream, background set, one frame segmented */
    glcv_segment *seg2; /* two streams */
    glcv_bgsub *bgsub;  /* one set processed */
    glcv_delta *delta;  /* one frame encoded */
    glcv_delta_decoder *decoder;
    glcv_match *match; /* template set, one image matched */
    glcv_correlate *correlate; /* reference set */
    glcv_track *track; /* one object (id 0), one frame tracked */
    glcv_synth *synth;
    glcv_image rgb, rgb2[2], gray, gray2[2];
    glcv_track_hist hist;
    glcv_segment_score score;
} fixture;

/* ---- the rows ---------------------------------------------------------------------------------- */

static const char *fault; /* the class of fault of the rows being run */
static int rows;

/* Checks one row: `got` against `want`, `kept` (the out-pointers as documented) and, when
 * `names` is not NULL, that a message was logged that contains it. */
static void row(fixture *f, int logged_before, const char *fn, const char *arg, glcv_status want, glcv_status got,
                int kept, const char *names)
{
    rows++;
    if (got != want) {
        test_failures++;
        fprintf(stderr, "FAIL [%s] %s, argument %s: returned '%s', expected '%s'\n", fault, fn, arg,
                glcv_status_string(got), glcv_status_string(want));
    }
    if (!kept) {
        test_failures++;
        fprintf(stderr, "FAIL [%s] %s, argument %s: an out-pointer is not as documented after the call\n", fault, fn,
                arg);
    }
    if (names && (f->log.count == logged_before || !strstr(f->log.last, names))) {
        test_failures++;
        fprintf(stderr, "FAIL [%s] %s, argument %s: no message naming '%s' (last: '%s')\n", fault, fn, arg, names,
                f->log.count == logged_before ? "" : f->log.last);
    }
}

/* ROW(function, argument, expected status, call, out-pointers as documented, text the message must
 * contain or NULL). */
#define ROW(FN, ARG, WANT, CALL, KEPT, NAMES)                                                                 \
    do {                                                                                                      \
        int before_ = f->log.count;                                                                           \
        glcv_status got_ = (CALL);                                                                            \
        row(f, before_, FN, ARG, WANT, got_, (KEPT), NAMES);                                                  \
    } while (0)

#define INVALID GLCV_ERROR_INVALID_ARGUMENT

static void *const SENTINEL = (void *)&rows; /* what an out-pointer held before a call */

/* ---- fixture ----------------------------------------------------------------------------------- */

static void fill(glcv_image *im, uint64_t seed)
{
    size_t stride = glcv_image_stride(im), row_bytes = (size_t)im->width * (size_t)glcv_pixel_format_size(im->format);
    for (int y = 0; y < im->height; y++)
        for (size_t x = 0; x < row_bytes; x++)
            im->data[(size_t)y * stride + x] = (uint8_t)test_rand(&seed);
}

static void fixture_make(fixture *f)
{
    memset(f, 0, sizeof *f);
    f->lg = capture_logger(&f->log);
    f->rgb = test_image_make(W, H, GLCV_PIXEL_RGB8, 0);
    f->gray = test_image_make(W, H, GLCV_PIXEL_GRAY8, 0);
    fill(&f->rgb, 1);
    for (int i = 0; i < 2; i++) {
        f->rgb2[i] = test_image_make(W, H, GLCV_PIXEL_RGB8, 0);
        f->gray2[i] = test_image_make(W, H, GLCV_PIXEL_GRAY8, 0);
        fill(&f->rgb2[i], 2 + (uint64_t)i);
    }

    glcv_segment_params sp = GLCV_SEGMENT_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_CPU, .logger = f->lg);
    CHECK_OK(glcv_segment_create(&sp, &f->seg));
    CHECK_OK(glcv_segment_set_background(f->seg, &f->rgb));
    CHECK_OK(glcv_segment_frame(f->seg, &f->rgb, 1));
    sp.streams = 2;
    CHECK_OK(glcv_segment_create(&sp, &f->seg2));
    CHECK_OK(glcv_segment_set_backgrounds(f->seg2, f->rgb2, 2));
    CHECK_OK(glcv_segment_frames(f->seg2, f->rgb2, 2, 1));

    glcv_bgsub_params bp = GLCV_BGSUB_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_CPU, .logger = f->lg);
    CHECK_OK(glcv_bgsub_create(&bp, &f->bgsub));
    CHECK_OK(glcv_bgsub_frames(f->bgsub, &f->rgb, 1, 1));

    glcv_delta_params dp = GLCV_DELTA_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_CPU, .logger = f->lg);
    CHECK_OK(glcv_delta_create(&dp, &f->delta));
    const uint8_t *packet = NULL;
    size_t bytes = 0;
    CHECK_OK(glcv_delta_encode(f->delta, &f->rgb, NULL, 0, &packet, &bytes));
    glcv_delta_decoder_params dd = GLCV_DELTA_DECODER_PARAMS(.logger = f->lg);
    CHECK_OK(glcv_delta_decoder_create(&dd, &f->decoder));

    glcv_match_params mp = GLCV_MATCH_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_CPU, .logger = f->lg);
    CHECK_OK(glcv_match_create(&mp, &f->match));
    glcv_image templ = f->rgb;
    templ.width = 8;
    templ.height = 6;
    templ.stride = glcv_image_stride(&f->rgb);
    CHECK_OK(glcv_match_set_template(f->match, &templ, NULL));
    CHECK_OK(glcv_match_image(f->match, &f->rgb));

    glcv_correlate_params cp =
        GLCV_CORRELATE_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_CPU, .logger = f->lg);
    CHECK_OK(glcv_correlate_create(&cp, &f->correlate));
    CHECK_OK(glcv_correlate_set_reference(f->correlate, &f->rgb));

    glcv_track_params tp = GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = W, .height = H, .engine = GLCV_ENGINE_CPU, .logger = f->lg);
    CHECK_OK(glcv_track_create(&tp, &f->track));
    glcv_rect all = {0, 0, W, H};
    CHECK_OK(glcv_track_hist_compute(f->track, &f->rgb, NULL, all, &f->hist));
    int id = -1;
    CHECK_OK(glcv_track_add(f->track, &f->hist, (glcv_rect){4, 4, 8, 8}, &id));
    CHECK_OK(glcv_track_frame(f->track, &f->rgb, NULL));

    glcv_synth_params yp = GLCV_SYNTH_PARAMS(.width = W, .height = H, .frames = 4);
    CHECK_OK(glcv_synth_create(&yp, &f->synth));
    f->log.count = 0;
}

static void fixture_free(fixture *f)
{
    glcv_segment_destroy(&f->seg);
    glcv_segment_destroy(&f->seg2);
    glcv_bgsub_destroy(&f->bgsub);
    glcv_delta_destroy(&f->delta);
    glcv_delta_decoder_destroy(&f->decoder);
    glcv_match_destroy(&f->match);
    glcv_correlate_destroy(&f->correlate);
    glcv_track_destroy(&f->track);
    glcv_synth_destroy(&f->synth);
    test_image_release(&f->rgb);
    test_image_release(&f->gray);
    for (int i = 0; i < 2; i++) {
        test_image_release(&f->rgb2[i]);
        test_image_release(&f->gray2[i]);
    }
}

/* An image source for glcv_image_median that gives the fixture's frame. */
static glcv_status source_rgb(void *user, int index, glcv_image *frame)
{
    (void)index;
    *frame = *(const glcv_image *)user;
    return GLCV_OK;
}

/* ---- NULL pointers ----------------------------------------------------------------------------- */

static void null_pointers(fixture *f)
{
    fault = "NULL pointer";
    glcv_image im = f->rgb, mask = f->gray, out = f->rgb;
    glcv_image nodata = f->rgb;
    nodata.data = NULL;
    glcv_timing t[4];
    int count = 7;
    double r = 0;
    float fl = 0;
    const uint8_t *packet = SENTINEL;
    size_t bytes = 5;
    glcv_engine_mode mode = GLCV_ENGINE_CPU;

    ROW("glcv_engine_mode_parse", "name", INVALID, glcv_engine_mode_parse(NULL, &mode), mode == GLCV_ENGINE_CPU, NULL);
    ROW("glcv_engine_mode_parse", "out", INVALID, glcv_engine_mode_parse("cpu", NULL), 1, NULL);

    /* image */
    ROW("glcv_image_alloc", "out", INVALID, glcv_image_alloc(W, H, GLCV_PIXEL_RGB8, NULL), 1, NULL);
    ROW("glcv_image_load", "path", INVALID, glcv_image_load(NULL, GLCV_PIXEL_RGB8, &f->lg, &out),
        out.data == NULL && out.width == 0, "image load");
    out = f->rgb;
    ROW("glcv_image_load", "out", INVALID, glcv_image_load("x.png", GLCV_PIXEL_RGB8, &f->lg, NULL), 1, "image load");
    int w = -5, h = -5, c = -5;
    ROW("glcv_image_info", "path", INVALID, glcv_image_info(NULL, &w, &h, &c, &f->lg), 1, "image info");
    ROW("glcv_image_info", "width", INVALID, glcv_image_info("x.png", NULL, &h, &c, &f->lg), 1, "image info");
    ROW("glcv_image_save_png", "path", INVALID, glcv_image_save_png(NULL, &im, &f->lg), 1, "path");
    ROW("glcv_image_save_png", "image", INVALID, glcv_image_save_png("x.png", NULL, &f->lg), 1, "image");
    ROW("glcv_image_save_png", "image->data", INVALID, glcv_image_save_png("x.png", &nodata, &f->lg), 1, "image");
    ROW("glcv_image_convert", "src", INVALID, glcv_image_convert(NULL, &out), 1, NULL);
    ROW("glcv_image_convert", "dst", INVALID, glcv_image_convert(&im, NULL), 1, NULL);
    ROW("glcv_image_check", "image", INVALID, glcv_image_check(NULL), 1, NULL);
    ROW("glcv_image_check", "image->data", INVALID, glcv_image_check(&nodata), 1, NULL);
    ROW("glcv_image_stride", "image", GLCV_OK, glcv_image_stride(NULL) == 0 ? GLCV_OK : INVALID, 1, NULL);
    ROW("glcv_image_median", "source", INVALID, glcv_image_median(1, NULL, NULL, &f->lg, &out), 1, "image median");
    ROW("glcv_image_median", "out", INVALID, glcv_image_median(1, source_rgb, &im, &f->lg, NULL), 1,
        "image median");
    glcv_file_list list = {(char **)SENTINEL, 3};
    ROW("glcv_image_list_folder", "folder", INVALID, glcv_image_list_folder(NULL, &f->lg, &list),
        list.paths == NULL && list.count == 0, "image list");
    ROW("glcv_image_list_folder", "out", INVALID, glcv_image_list_folder(".", &f->lg, NULL), 1, "image list");
    glcv_image_free(NULL);
    glcv_file_list_free(NULL);

    /* synth */
    glcv_synth *sy = SENTINEL;
    ROW("glcv_synth_create", "params", INVALID, glcv_synth_create(NULL, &sy), sy == NULL, NULL);
    ROW("glcv_synth_create", "out", INVALID, glcv_synth_create(&(glcv_synth_params){0}, NULL), 1, NULL);
    ROW("glcv_synth_background", "synth", INVALID, glcv_synth_background(NULL, &out), 1, NULL);
    ROW("glcv_synth_background", "out", INVALID, glcv_synth_background(f->synth, NULL), 1, NULL);
    ROW("glcv_synth_frame", "frame", INVALID, glcv_synth_frame(f->synth, 0, NULL, NULL), 1, NULL);
    ROW("glcv_synth_dynamic_region", "out", INVALID, glcv_synth_dynamic_region(f->synth, NULL), 1, NULL);
    glcv_synth_get_params(f->synth, NULL);
    glcv_synth_destroy(NULL);

    /* segment */
    glcv_segment *seg = SENTINEL;
    glcv_segment_params segp;
    ROW("glcv_segment_create", "params", INVALID, glcv_segment_create(NULL, &seg), seg == NULL, NULL);
    ROW("glcv_segment_create", "out", INVALID, glcv_segment_create(&(glcv_segment_params){0}, NULL), 1, NULL);
    ROW("glcv_segment_get_params", "seg", INVALID, glcv_segment_get_params(NULL, &segp), 1, NULL);
    ROW("glcv_segment_get_params", "out", INVALID, glcv_segment_get_params(f->seg, NULL), 1, NULL);
    ROW("glcv_segment_set_ts", "seg", INVALID, glcv_segment_set_ts(NULL, 100), 1, NULL);
    ROW("glcv_segment_set_odc", "seg", INVALID, glcv_segment_set_odc(NULL, 100), 1, NULL);
    ROW("glcv_segment_set_b1", "seg", INVALID, glcv_segment_set_b1(NULL, 100), 1, NULL);
    ROW("glcv_segment_set_b2", "seg", INVALID, glcv_segment_set_b2(NULL, 100), 1, NULL);
    ROW("glcv_segment_set_iterations", "seg", INVALID, glcv_segment_set_iterations(NULL, 2), 1, NULL);
    ROW("glcv_segment_set_adapt_rate", "seg", INVALID, glcv_segment_set_adapt_rate(NULL, 0.1f), 1, NULL);
    ROW("glcv_segment_set_seed", "seg", INVALID, glcv_segment_set_seed(NULL, 1), 1, NULL);
    ROW("glcv_segment_set_background", "seg", INVALID, glcv_segment_set_background(NULL, &im), 1, NULL);
    ROW("glcv_segment_set_background", "background", INVALID, glcv_segment_set_background(f->seg, NULL), 1,
        "background");
    ROW("glcv_segment_set_background", "background->data", INVALID, glcv_segment_set_background(f->seg, &nodata), 1,
        "background");
    ROW("glcv_segment_set_background_texture", "seg", INVALID, glcv_segment_set_background_texture(NULL, 1), 1, NULL);
    ROW("glcv_segment_learn_begin", "seg", INVALID, glcv_segment_learn_begin(NULL), 1, NULL);
    ROW("glcv_segment_learn_add", "seg", INVALID, glcv_segment_learn_add(NULL, &im), 1, NULL);
    ROW("glcv_segment_learn_add_texture", "seg", INVALID, glcv_segment_learn_add_texture(NULL, 1), 1, NULL);
    ROW("glcv_segment_learn_end", "seg", INVALID, glcv_segment_learn_end(NULL), 1, NULL);
    ROW("glcv_segment_calibrate_begin", "seg", INVALID, glcv_segment_calibrate_begin(NULL), 1, NULL);
    ROW("glcv_segment_calibrate_add", "seg", INVALID, glcv_segment_calibrate_add(NULL, &im), 1, NULL);
    ROW("glcv_segment_calibrate_add_texture", "seg", INVALID, glcv_segment_calibrate_add_texture(NULL, 1), 1, NULL);
    ROW("glcv_segment_calibrate_end", "seg", INVALID, glcv_segment_calibrate_end(NULL, &fl), 1, NULL);
    ROW("glcv_segment_frame", "seg", INVALID, glcv_segment_frame(NULL, &im, 1), 1, NULL);
    ROW("glcv_segment_frame", "frame", INVALID, glcv_segment_frame(f->seg, NULL, 1), 1, "frame");
    ROW("glcv_segment_frame", "frame->data", INVALID, glcv_segment_frame(f->seg, &nodata, 1), 1, "frame");
    ROW("glcv_segment_map_frame", "seg", INVALID, glcv_segment_map_frame(NULL, GLCV_PIXEL_RGB8, &out), 1, NULL);
    ROW("glcv_segment_map_frame", "out", INVALID, glcv_segment_map_frame(f->seg, GLCV_PIXEL_RGB8, NULL), 1,
        "NULL image");
    ROW("glcv_segment_frame_mapped", "seg", INVALID, glcv_segment_frame_mapped(NULL, 1), 1, NULL);
    ROW("glcv_segment_frame_texture", "seg", INVALID, glcv_segment_frame_texture(NULL, 1, 1), 1, NULL);
    ROW("glcv_segment_mask_texture", "seg", GLCV_OK, glcv_segment_mask_texture(NULL) == 0 ? GLCV_OK : INVALID, 1,
        NULL);
    ROW("glcv_segment_background_texture", "seg", GLCV_OK,
        glcv_segment_background_texture(NULL) == 0 ? GLCV_OK : INVALID, 1, NULL);
    ROW("glcv_segment_read_mask", "seg", INVALID, glcv_segment_read_mask(NULL, &mask), 1, NULL);
    ROW("glcv_segment_read_mask", "out", INVALID, glcv_segment_read_mask(f->seg, NULL), 1, "read_mask");
    ROW("glcv_segment_read_qualifiers", "seg", INVALID, glcv_segment_read_qualifiers(NULL, NULL, NULL, NULL), 1,
        NULL);
    ROW("glcv_segment_read_thresholds", "seg", INVALID, glcv_segment_read_thresholds(NULL, NULL, NULL), 1, NULL);
    ROW("glcv_segment_read_background", "seg", INVALID, glcv_segment_read_background(NULL, &out), 1, NULL);
    ROW("glcv_segment_read_background", "out", INVALID, glcv_segment_read_background(f->seg, NULL), 1,
        "read_background");
    ROW("glcv_segment_read_noise", "seg", INVALID, glcv_segment_read_noise(NULL, &fl), 1, NULL);
    ROW("glcv_segment_read_noise", "k", INVALID, glcv_segment_read_noise(f->seg, NULL), 1, "k");
    ROW("glcv_segment_reset", "seg", INVALID, glcv_segment_reset(NULL), 1, NULL);
    ROW("glcv_segment_timings", "seg", INVALID, glcv_segment_timings(NULL, t, 4, &count, 0), count == 7, NULL);
    ROW("glcv_segment_timings", "count", INVALID, glcv_segment_timings(f->seg, t, 4, NULL, 0), 1, "count");
    ROW("glcv_segment_timings", "out", INVALID, glcv_segment_timings(f->seg, NULL, 4, &count, 0), count == 7, "out");
    ROW("glcv_segment_frames", "seg", INVALID, glcv_segment_frames(NULL, f->rgb2, 2, 1), 1, NULL);
    ROW("glcv_segment_frames", "frames", INVALID, glcv_segment_frames(f->seg2, NULL, 2, 1), 1, "frames");
    ROW("glcv_segment_map_frames", "out", INVALID, glcv_segment_map_frames(f->seg2, GLCV_PIXEL_RGB8, NULL, 2), 1,
        "NULL image");
    ROW("glcv_segment_frames_mapped", "seg", INVALID, glcv_segment_frames_mapped(NULL, 1), 1, NULL);
    ROW("glcv_segment_frames_texture", "seg", INVALID, glcv_segment_frames_texture(NULL, 1, 1), 1, NULL);
    ROW("glcv_segment_read_masks", "out", INVALID, glcv_segment_read_masks(f->seg2, NULL, 2), 1, "NULL images");
    ROW("glcv_segment_map_masks", "out", INVALID, glcv_segment_map_masks(f->seg2, NULL, 2), 1, "NULL images");
    ROW("glcv_segment_set_backgrounds", "backgrounds", INVALID, glcv_segment_set_backgrounds(f->seg2, NULL, 2), 1,
        "backgrounds");
    ROW("glcv_segment_learn_add_frames", "frames", INVALID, glcv_segment_learn_add_frames(f->seg2, NULL, 2), 1,
        "frames");
    ROW("glcv_segment_learn_add_stream", "seg", INVALID, glcv_segment_learn_add_stream(NULL, 0, f->rgb2), 1, NULL);
    ROW("glcv_segment_learn_add_stream", "frame", INVALID, glcv_segment_learn_add_stream(f->seg2, 1, NULL), 1, NULL);
    ROW("glcv_segment_learn_add_stream", "stream", INVALID, glcv_segment_learn_add_stream(f->seg2, 2, f->rgb2), 1,
        "stream 2 of 2");
    ROW("glcv_segment_read_backgrounds", "out", INVALID, glcv_segment_read_backgrounds(f->seg2, NULL, 2), 1,
        "NULL images");
    ROW("glcv_segment_get_stream_params", "out", INVALID, glcv_segment_get_stream_params(f->seg2, 0, NULL), 1, NULL);
    ROW("glcv_segment_get_stream_params", "seg", INVALID, glcv_segment_get_stream_params(NULL, 0, &segp), 1, NULL);
    glcv_segment_metrics metrics;
    glcv_segment_score score = {1, 2, 3, 4, 5};
    ROW("glcv_segment_score_add", "score", INVALID,
        glcv_segment_score_add(NULL, &f->gray, &f->gray, NULL, GLCV_TRUTH_BINARY), 1, NULL);
    ROW("glcv_segment_score_add", "mask", INVALID,
        glcv_segment_score_add(&score, NULL, &f->gray, NULL, GLCV_TRUTH_BINARY), score.tp == 1 && score.unknown == 5,
        NULL);
    ROW("glcv_segment_score_add", "truth", INVALID,
        glcv_segment_score_add(&score, &f->gray, NULL, NULL, GLCV_TRUTH_BINARY), score.tp == 1, NULL);
    ROW("glcv_segment_score_metrics", "score", INVALID, glcv_segment_score_metrics(NULL, &metrics), 1, NULL);
    ROW("glcv_segment_score_metrics", "out", INVALID, glcv_segment_score_metrics(&score, NULL), 1, NULL);
    glcv_segment_destroy(NULL);

    /* bgsub */
    glcv_bgsub *bg = SENTINEL;
    glcv_bgsub_params bgp;
    glcv_bgsub_method method = GLCV_BGSUB_VSAM;
    ROW("glcv_bgsub_method_parse", "name", INVALID, glcv_bgsub_method_parse(NULL, &method),
        method == GLCV_BGSUB_VSAM, NULL);
    ROW("glcv_bgsub_create", "params", INVALID, glcv_bgsub_create(NULL, &bg), bg == NULL, NULL);
    ROW("glcv_bgsub_create", "out", INVALID, glcv_bgsub_create(&(glcv_bgsub_params){0}, NULL), 1, NULL);
    ROW("glcv_bgsub_get_params", "bgsub", INVALID, glcv_bgsub_get_params(NULL, &bgp), 1, NULL);
    ROW("glcv_bgsub_get_params", "out", INVALID, glcv_bgsub_get_params(f->bgsub, NULL), 1, NULL);
    ROW("glcv_bgsub_frames", "bgsub", INVALID, glcv_bgsub_frames(NULL, &im, 1, 1), 1, NULL);
    ROW("glcv_bgsub_frames", "frames", INVALID, glcv_bgsub_frames(f->bgsub, NULL, 1, 1), 1, "frame");
    ROW("glcv_bgsub_frames", "frames->data", INVALID, glcv_bgsub_frames(f->bgsub, &nodata, 1, 1), 1, "frame 0");
    ROW("glcv_bgsub_map_frames", "out", INVALID, glcv_bgsub_map_frames(f->bgsub, NULL, 1), 1, "map_frames");
    ROW("glcv_bgsub_frames_mapped", "bgsub", INVALID, glcv_bgsub_frames_mapped(NULL, 1), 1, NULL);
    ROW("glcv_bgsub_frames_texture", "bgsub", INVALID, glcv_bgsub_frames_texture(NULL, 1, 1), 1, NULL);
    ROW("glcv_bgsub_learn_add_texture", "bgsub", INVALID, glcv_bgsub_learn_add_texture(NULL, 1), 1, NULL);
    ROW("glcv_bgsub_learn_begin", "bgsub", INVALID, glcv_bgsub_learn_begin(NULL), 1, NULL);
    ROW("glcv_bgsub_learn_add", "bgsub", INVALID, glcv_bgsub_learn_add(NULL, &im, 1), 1, NULL);
    ROW("glcv_bgsub_learn_end", "bgsub", INVALID, glcv_bgsub_learn_end(NULL), 1, NULL);
    ROW("glcv_bgsub_read_masks", "out", INVALID, glcv_bgsub_read_masks(f->bgsub, 0, NULL, 1), 1, "read_masks");
    ROW("glcv_bgsub_map_masks", "out", INVALID, glcv_bgsub_map_masks(f->bgsub, 0, NULL, 1), 1, "map_masks");
    ROW("glcv_bgsub_read_state", "bgsub", INVALID, glcv_bgsub_read_state(NULL, 0, NULL, NULL), 1, NULL);
    ROW("glcv_bgsub_mask_texture", "bgsub", GLCV_OK, glcv_bgsub_mask_texture(NULL) == 0 ? GLCV_OK : INVALID, 1, NULL);
    ROW("glcv_bgsub_reset", "bgsub", INVALID, glcv_bgsub_reset(NULL), 1, NULL);
    ROW("glcv_bgsub_timings", "bgsub", INVALID, glcv_bgsub_timings(NULL, t, 4, &count, 0), count == 7, NULL);
    ROW("glcv_bgsub_timings", "count", INVALID, glcv_bgsub_timings(f->bgsub, t, 4, NULL, 0), 1, "count");
    ROW("glcv_bgsub_timings", "out", INVALID, glcv_bgsub_timings(f->bgsub, NULL, 4, &count, 0), count == 7, "out");
    glcv_bgsub_destroy(NULL);

    /* delta */
    glcv_delta *dl = SENTINEL;
    glcv_delta_decoder *dec = SENTINEL;
    glcv_delta_params dlp;
    glcv_delta_header header;
    uint8_t buf[256] = {0};
    ROW("glcv_delta_header_parse", "data", INVALID, glcv_delta_header_parse(NULL, 64, &header, &f->lg), 1, NULL);
    ROW("glcv_delta_header_parse", "out", INVALID, glcv_delta_header_parse(buf, 64, NULL, &f->lg), 1, NULL);
    ROW("glcv_delta_crc32c", "data", GLCV_OK, glcv_delta_crc32c(0, NULL, 0) == 0 ? GLCV_OK : INVALID, 1, NULL);
    ROW("glcv_delta_compress", "packet", INVALID, glcv_delta_compress(NULL, 64, 1, buf, 256, &bytes, &f->lg), 1,
        NULL);
    ROW("glcv_delta_compress", "out", INVALID, glcv_delta_compress(buf, 64, 1, NULL, 256, &bytes, &f->lg), 1, NULL);
    ROW("glcv_delta_compress", "out_bytes", INVALID, glcv_delta_compress(buf, 64, 1, buf + 64, 192, NULL, &f->lg), 1,
        NULL);
    ROW("glcv_delta_create", "params", INVALID, glcv_delta_create(NULL, &dl), dl == NULL, NULL);
    ROW("glcv_delta_create", "out", INVALID, glcv_delta_create(&(glcv_delta_params){0}, NULL), 1, NULL);
    ROW("glcv_delta_get_params", "delta", INVALID, glcv_delta_get_params(NULL, &dlp), 1, NULL);
    ROW("glcv_delta_get_params", "out", INVALID, glcv_delta_get_params(f->delta, NULL), 1, NULL);
    ROW("glcv_delta_encode", "delta", INVALID, glcv_delta_encode(NULL, &im, NULL, 0, &packet, &bytes),
        packet == NULL && bytes == 0, NULL);
    packet = SENTINEL;
    bytes = 5;
    ROW("glcv_delta_encode", "frame", INVALID, glcv_delta_encode(f->delta, NULL, NULL, 0, &packet, &bytes),
        packet == NULL && bytes == 0, "frame");
    ROW("glcv_delta_encode", "frame->data", INVALID, glcv_delta_encode(f->delta, &nodata, NULL, 0, &packet, &bytes),
        packet == NULL && bytes == 0, "encode");
    ROW("glcv_delta_encode", "packet", INVALID, glcv_delta_encode(f->delta, &im, NULL, 0, NULL, &bytes), 1,
        "packet");
    ROW("glcv_delta_encode", "bytes", INVALID, glcv_delta_encode(f->delta, &im, NULL, 0, &packet, NULL), 1, "bytes");
    packet = SENTINEL;
    bytes = 5;
    ROW("glcv_delta_encode_texture", "delta", INVALID, glcv_delta_encode_texture(NULL, 1, 0, 0, &packet, &bytes),
        packet == NULL && bytes == 0, NULL);
    ROW("glcv_delta_map_frame", "out", INVALID, glcv_delta_map_frame(f->delta, NULL), 1, "map_frame");
    ROW("glcv_delta_encode_mapped", "delta", INVALID, glcv_delta_encode_mapped(NULL, NULL, 0, &packet, &bytes), 1,
        NULL);
    ROW("glcv_delta_snapshot", "delta", INVALID, glcv_delta_snapshot(NULL, &packet, &bytes), 1, NULL);
    ROW("glcv_delta_snapshot", "packet", INVALID, glcv_delta_snapshot(f->delta, NULL, &bytes), 1, "packet");
    ROW("glcv_delta_read_reference", "out", INVALID, glcv_delta_read_reference(f->delta, NULL), 1, "read_reference");
    ROW("glcv_delta_timings", "count", INVALID, glcv_delta_timings(f->delta, t, 4, NULL, 0), 1, "count");
    ROW("glcv_delta_decoder_create", "params", INVALID, glcv_delta_decoder_create(NULL, &dec), dec == NULL, NULL);
    ROW("glcv_delta_decoder_create", "out", INVALID,
        glcv_delta_decoder_create(&(glcv_delta_decoder_params){0}, NULL), 1, NULL);
    ROW("glcv_delta_decode", "decoder", INVALID, glcv_delta_decode(NULL, buf, 64), 1, NULL);
    ROW("glcv_delta_decode", "packet", INVALID, glcv_delta_decode(f->decoder, NULL, 64), 1, "packet");
    ROW("glcv_delta_decoder_picture", "out", INVALID, glcv_delta_decoder_picture(f->decoder, NULL, NULL), 1, NULL);
    glcv_delta_destroy(NULL);
    glcv_delta_decoder_destroy(NULL);

    /* match */
    glcv_match *mt = SENTINEL;
    glcv_match_params mtp;
    glcv_match_hit hits[4];
    double scores[W * H];
    ROW("glcv_match_create", "params", INVALID, glcv_match_create(NULL, &mt), mt == NULL, NULL);
    ROW("glcv_match_create", "out", INVALID, glcv_match_create(&(glcv_match_params){0}, NULL), 1, NULL);
    ROW("glcv_match_get_params", "out", INVALID, glcv_match_get_params(f->match, NULL), 1, NULL);
    ROW("glcv_match_set_metric", "match", INVALID, glcv_match_set_metric(NULL, GLCV_MATCH_SAD), 1, NULL);
    ROW("glcv_match_set_template", "templ", INVALID, glcv_match_set_template(f->match, NULL, NULL), 1, "template");
    ROW("glcv_match_set_template", "match", INVALID, glcv_match_set_template(NULL, &im, NULL), 1, NULL);
    ROW("glcv_match_set_template_texture", "match", INVALID, glcv_match_set_template_texture(NULL, 1, 4, 4, NULL), 1,
        NULL);
    ROW("glcv_match_set_roi", "match", INVALID, glcv_match_set_roi(NULL, NULL), 1, NULL);
    ROW("glcv_match_image", "image", INVALID, glcv_match_image(f->match, NULL), 1, "image");
    ROW("glcv_match_image", "image->data", INVALID, glcv_match_image(f->match, &nodata), 1, "image");
    ROW("glcv_match_image_texture", "match", INVALID, glcv_match_image_texture(NULL, 1), 1, NULL);
    ROW("glcv_match_forget_texture", "match", INVALID, glcv_match_forget_texture(NULL, 1), 1, NULL);
    ROW("glcv_match_map_image", "out", INVALID, glcv_match_map_image(f->match, NULL), 1, NULL);
    ROW("glcv_match_image_mapped", "match", INVALID, glcv_match_image_mapped(NULL), 1, NULL);
    ROW("glcv_match_read_scores", "out", INVALID, glcv_match_read_scores(f->match, NULL, 0), 1, "out");
    ROW("glcv_match_read_scores", "match", INVALID, glcv_match_read_scores(NULL, scores, 0), 1, NULL);
    ROW("glcv_match_read_normalized", "out", INVALID, glcv_match_read_normalized(f->match, NULL, 0), 1, "out");
    ROW("glcv_match_map_texture", "match", GLCV_OK, glcv_match_map_texture(NULL) == 0 ? GLCV_OK : INVALID, 1, NULL);
    count = 7;
    ROW("glcv_match_best", "hits", INVALID, glcv_match_best(f->match, 4, NULL, &count), count == 7, "hits");
    ROW("glcv_match_best", "count", INVALID, glcv_match_best(f->match, 4, hits, NULL), 1, "count");
    ROW("glcv_match_timings", "count", INVALID, glcv_match_timings(f->match, t, 4, NULL), 1, NULL);
    glcv_match_metric metric = GLCV_MATCH_SSD;
    ROW("glcv_match_metric_parse", "name", INVALID, glcv_match_metric_parse(NULL, &metric), metric == GLCV_MATCH_SSD,
        NULL);
    glcv_match_destroy(NULL);
    (void)mtp;

    /* correlate */
    glcv_correlate *co = SENTINEL;
    const char *paths[1] = {NULL};
    unsigned int textures[1] = {1};
    ROW("glcv_correlate_create", "params", INVALID, glcv_correlate_create(NULL, &co), co == NULL, NULL);
    ROW("glcv_correlate_create", "out", INVALID, glcv_correlate_create(&(glcv_correlate_params){0}, NULL), 1, NULL);
    ROW("glcv_correlate_get_params", "out", INVALID, glcv_correlate_get_params(f->correlate, NULL), 1, NULL);
    ROW("glcv_correlate_set_reference", "reference", INVALID, glcv_correlate_set_reference(f->correlate, NULL), 1,
        "reference");
    ROW("glcv_correlate_set_reference_texture", "correlate", INVALID, glcv_correlate_set_reference_texture(NULL, 1),
        1, NULL);
    ROW("glcv_correlate_images", "images", INVALID, glcv_correlate_images(f->correlate, NULL, 1, &r), 1, "images");
    ROW("glcv_correlate_images", "r", INVALID, glcv_correlate_images(f->correlate, &im, 1, NULL), 1, "results");
    ROW("glcv_correlate_images", "images->data", INVALID, glcv_correlate_images(f->correlate, &nodata, 1, &r), 1,
        "image 0");
    ROW("glcv_correlate_files", "paths", INVALID, glcv_correlate_files(f->correlate, NULL, 1, &r), 1, "paths");
    ROW("glcv_correlate_files", "paths[0]", INVALID, glcv_correlate_files(f->correlate, paths, 1, &r), 1,
        "paths[0]");
    ROW("glcv_correlate_textures", "textures", INVALID, glcv_correlate_textures(f->correlate, NULL, 1, &r), 1,
        "textures");
    ROW("glcv_correlate_textures", "r", INVALID, glcv_correlate_textures(f->correlate, textures, 1, NULL), 1,
        "results");
    ROW("glcv_correlate_forget_texture", "correlate", INVALID, glcv_correlate_forget_texture(NULL, 1), 1, NULL);
    ROW("glcv_correlate_bank_load", "images", INVALID, glcv_correlate_bank_load(f->correlate, NULL, 1), 1, "images");
    ROW("glcv_correlate_bank_run", "r", INVALID, glcv_correlate_bank_run(f->correlate, NULL), 1, "r");
    ROW("glcv_correlate_bank_run", "correlate", INVALID, glcv_correlate_bank_run(NULL, &r), 1, NULL);
    ROW("glcv_correlate_bank_size", "correlate", GLCV_OK, glcv_correlate_bank_size(NULL) == -1 ? GLCV_OK : INVALID, 1,
        NULL);
    ROW("glcv_correlate_timings", "count", INVALID, glcv_correlate_timings(f->correlate, t, 4, NULL), 1, NULL);
    glcv_correlate_destroy(NULL);

    /* track */
    glcv_track *tr = SENTINEL;
    glcv_track_hist hist;
    glcv_track_result results[2];
    glcv_rect all = {0, 0, W, H};
    int id = -7; /* -1 after a refused add */
    ROW("glcv_track_create", "params", INVALID, glcv_track_create(NULL, &tr), tr == NULL, NULL);
    ROW("glcv_track_create", "out", INVALID, glcv_track_create(&(glcv_track_params){0}, NULL), 1, NULL);
    ROW("glcv_track_get_params", "out", INVALID, glcv_track_get_params(f->track, NULL), 1, NULL);
    ROW("glcv_track_set_limits", "track", INVALID, glcv_track_set_limits(NULL, 30, 10, 255), 1, NULL);
    ROW("glcv_track_hist_compute", "frame", INVALID, glcv_track_hist_compute(f->track, NULL, NULL, all, &hist), 1,
        "frame");
    ROW("glcv_track_hist_compute", "out", INVALID, glcv_track_hist_compute(f->track, &im, NULL, all, NULL), 1, "out");
    ROW("glcv_track_hist_compute_texture", "out", INVALID,
        glcv_track_hist_compute_texture(f->track, 1, 0, all, NULL), 1, "out");
    ROW("glcv_track_hist_weight_background", "frame", INVALID,
        glcv_track_hist_weight_background(f->track, NULL, all, &hist), 1, "frame");
    ROW("glcv_track_hist_weight_background", "hist", INVALID,
        glcv_track_hist_weight_background(f->track, &im, all, NULL), 1, "hist");
    ROW("glcv_track_hist_save", "path", INVALID, glcv_track_hist_save(NULL, &f->hist, 1, &f->lg), 1, "hist_save");
    ROW("glcv_track_hist_save", "hists", INVALID, glcv_track_hist_save("x.hist", NULL, 1, &f->lg), 1, "hist_save");
    count = 7;
    ROW("glcv_track_hist_load", "path", INVALID, glcv_track_hist_load(NULL, &hist, 1, &count, &f->lg), 1,
        "hist_load");
    ROW("glcv_track_hist_load", "count", INVALID, glcv_track_hist_load("x.hist", &hist, 1, NULL, &f->lg), 1,
        "hist_load");
    ROW("glcv_track_hist_distance", "a", INVALID, glcv_track_hist_distance(NULL, &f->hist, &r), 1, NULL);
    ROW("glcv_track_hist_distance", "out", INVALID, glcv_track_hist_distance(&f->hist, &f->hist, NULL), 1, NULL);
    ROW("glcv_track_add", "hist", INVALID, glcv_track_add(f->track, NULL, all, &id), id == -1, "histogram");
    ROW("glcv_track_add", "id", INVALID, glcv_track_add(f->track, &f->hist, all, NULL), 1, "id");
    ROW("glcv_track_add_to_stream", "track", INVALID, glcv_track_add_to_stream(NULL, 0, &f->hist, all, &id),
        id == -1, NULL);
    ROW("glcv_track_remove", "track", INVALID, glcv_track_remove(NULL, 0), 1, NULL);
    ROW("glcv_track_set_window", "track", INVALID, glcv_track_set_window(NULL, 0, all), 1, NULL);
    ROW("glcv_track_get_hist", "out", INVALID, glcv_track_get_hist(f->track, 0, NULL), 1, NULL);
    ROW("glcv_track_frame", "frame", INVALID, glcv_track_frame(f->track, NULL, NULL), 1, "frame");
    ROW("glcv_track_frame", "frame->data", INVALID, glcv_track_frame(f->track, &nodata, NULL), 1, "frame");
    ROW("glcv_track_frames", "frames", INVALID, glcv_track_frames(f->track, NULL, NULL, 1), 1, "frames");
    ROW("glcv_track_frame_texture", "track", INVALID, glcv_track_frame_texture(NULL, 1, 0), 1, NULL);
    ROW("glcv_track_frames_texture", "track", INVALID, glcv_track_frames_texture(NULL, 1, 0), 1, NULL);
    ROW("glcv_track_forget_texture", "track", INVALID, glcv_track_forget_texture(NULL, 1), 1, NULL);
    count = 7;
    ROW("glcv_track_results", "count", INVALID, glcv_track_results(f->track, results, 2, NULL), 1, NULL);
    ROW("glcv_track_results", "out", INVALID, glcv_track_results(f->track, NULL, 2, &count), count == 7, NULL);
    float px[4] = {7, 7, 7, 7};
    glcv_track_box_points(1, 1, 2, 2, 0, NULL, px); /* must not crash; writes nothing */
    glcv_track_box_points(1, 1, 2, 2, 0, px, NULL);
    ROW("glcv_track_box_points", "x", GLCV_OK, GLCV_OK, px[0] == 7 && px[3] == 7, NULL);
    glcv_track_destroy(NULL);

    /* cuda, context, core */
    ROW("glcv_cuda_query", "out", INVALID, glcv_cuda_query(NULL), 1, NULL);
    glcv_context *ctx = SENTINEL;
    ROW("glcv_context_create", "out", INVALID, glcv_context_create(NULL, NULL), 1, NULL);
    ROW("glcv_context_make_current", "ctx", INVALID, glcv_context_make_current(NULL), 1, NULL);
    ROW("glcv_context_describe", "ctx", GLCV_OK, glcv_context_describe(NULL) != NULL ? GLCV_OK : INVALID, 1, NULL);
    ROW("glcv_context_cuda_device", "ctx", GLCV_OK, glcv_context_cuda_device(NULL) == -1 ? GLCV_OK : INVALID, 1,
        NULL);
    glcv_context_destroy(NULL);
    (void)ctx;
    glcv_log_stderr(NULL, GLCV_LOG_DEBUG, NULL == NULL ? "" : "");

#if GLCV_HAVE_FFMPEG
    glcv_media *media = SENTINEL;
    glcv_media_stats stats;
    glcv_media_params mdp;
    glcv_image frame = f->rgb;
    ROW("glcv_media_create", "params", INVALID, glcv_media_create(NULL, &media), media == NULL, NULL);
    ROW("glcv_media_create", "out", INVALID, glcv_media_create(&(glcv_media_params){0}, NULL), 1, NULL);
    ROW("glcv_media_read", "media", INVALID, glcv_media_read(NULL, &frame, NULL, 0), frame.data == NULL, NULL);
    ROW("glcv_media_get_stats", "media", INVALID, glcv_media_get_stats(NULL, &stats), 1, NULL);
    ROW("glcv_media_get_params", "media", INVALID, glcv_media_get_params(NULL, &mdp), 1, NULL);
    ROW("glcv_media_describe", "media", GLCV_OK, glcv_media_describe(NULL) != NULL ? GLCV_OK : INVALID, 1, NULL);
    glcv_media_destroy(NULL);
#endif
}

/* ---- sizes and counts below 1 ------------------------------------------------------------------ */

static void small_sizes(fixture *f)
{
    fault = "size or count < 1";
    glcv_image out = f->rgb, zero_w = f->rgb, neg_h = f->rgb;
    zero_w.width = 0;
    neg_h.height = -3;
    glcv_timing t[2];
    int count = 7;
    double r = 0;

    glcv_image alloc = f->rgb;
    ROW("glcv_image_alloc", "width", INVALID, glcv_image_alloc(0, H, GLCV_PIXEL_RGB8, &alloc),
        alloc.data == NULL && alloc.width == 0, NULL);
    alloc = f->rgb;
    ROW("glcv_image_alloc", "height", INVALID, glcv_image_alloc(W, -1, GLCV_PIXEL_RGB8, &alloc), alloc.data == NULL,
        NULL);
    ROW("glcv_image_check", "width", INVALID, glcv_image_check(&zero_w), 1, NULL);
    ROW("glcv_image_check", "height", INVALID, glcv_image_check(&neg_h), 1, NULL);
    ROW("glcv_image_convert", "src->width", INVALID, glcv_image_convert(&zero_w, &out), 1, NULL);
    ROW("glcv_image_save_png", "image->height", INVALID, glcv_image_save_png("x.png", &neg_h, &f->lg), 1, "image");
    ROW("glcv_image_median", "count", INVALID, glcv_image_median(0, source_rgb, &f->rgb, &f->lg, &out), 1, "frames");
    ROW("glcv_image_median", "count", INVALID, glcv_image_median(-1, source_rgb, &f->rgb, &f->lg, &out), 1,
        "frames");

    glcv_synth *sy = SENTINEL;
    ROW("glcv_synth_create", "width", INVALID, glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = -1), &sy), sy == NULL,
        NULL);
    sy = SENTINEL;
    ROW("glcv_synth_create", "frames", INVALID, glcv_synth_create(&GLCV_SYNTH_PARAMS(.frames = -2), &sy), sy == NULL,
        NULL);
    sy = SENTINEL;
    ROW("glcv_synth_create", "objects", INVALID, glcv_synth_create(&GLCV_SYNTH_PARAMS(.objects = -1), &sy),
        sy == NULL, NULL);
    ROW("glcv_synth_frame", "index", INVALID, glcv_synth_frame(f->synth, -1, &out, NULL), 1, NULL);
    ROW("glcv_synth_frame", "index", INVALID, glcv_synth_frame(f->synth, 4, &out, NULL), 1, NULL);

    glcv_segment *seg = SENTINEL;
    ROW("glcv_segment_create", "width", INVALID,
        glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = 0, .height = H, .logger = f->lg), &seg), seg == NULL,
        "size");
    seg = SENTINEL;
    ROW("glcv_segment_create", "height", INVALID,
        glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = W, .height = -1, .logger = f->lg), &seg), seg == NULL,
        "size");
    seg = SENTINEL;
    ROW("glcv_segment_create", "streams", INVALID,
        glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = W, .height = H, .streams = -2, .logger = f->lg), &seg),
        seg == NULL, "streams");
    seg = SENTINEL;
    ROW("glcv_segment_create", "iterations", INVALID,
        glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = W, .height = H, .iterations = -1, .logger = f->lg), &seg),
        seg == NULL, "iterations");
    ROW("glcv_segment_set_iterations", "iterations", INVALID, glcv_segment_set_iterations(f->seg, -1), 1,
        "iterations");
    ROW("glcv_segment_frame", "frame->width", INVALID, glcv_segment_frame(f->seg, &zero_w, 1), 1, "frame");
    ROW("glcv_segment_timings", "capacity", INVALID, glcv_segment_timings(f->seg, t, -1, &count, 0), count == 7,
        "capacity");
    ROW("glcv_segment_frames", "count", INVALID, glcv_segment_frames(f->seg2, f->rgb2, 0, 1), 1, "0 images");
    ROW("glcv_segment_frames", "count", INVALID, glcv_segment_frames(f->seg2, f->rgb2, -1, 1), 1, "-1 images");
    ROW("glcv_segment_map_frames", "count", INVALID,
        glcv_segment_map_frames(f->seg2, GLCV_PIXEL_RGB8, (glcv_image[2]){{0}}, 0), 1, "0 images");
    ROW("glcv_segment_read_masks", "count", INVALID, glcv_segment_read_masks(f->seg2, f->gray2, -1), 1, "-1 images");
    ROW("glcv_segment_map_masks", "count", INVALID, glcv_segment_map_masks(f->seg2, (glcv_image[2]){{0}}, 0), 1,
        "0 images");
    ROW("glcv_segment_set_backgrounds", "count", INVALID, glcv_segment_set_backgrounds(f->seg2, f->rgb2, -1), 1,
        "-1 images");
    ROW("glcv_segment_learn_add_frames", "count", INVALID, glcv_segment_learn_add_frames(f->seg2, f->rgb2, 0), 1,
        "0 images");
    ROW("glcv_segment_read_backgrounds", "count", INVALID, glcv_segment_read_backgrounds(f->seg2, f->rgb2, 0), 1,
        "0 images");
    glcv_segment_params segp;
    ROW("glcv_segment_get_stream_params", "stream", INVALID, glcv_segment_get_stream_params(f->seg2, -1, &segp), 1,
        "stream");
    ROW("glcv_segment_get_stream_params", "stream", INVALID, glcv_segment_get_stream_params(f->seg2, 2, &segp), 1,
        "stream");
    glcv_segment_score score = {1, 2, 3, 4, 5};
    ROW("glcv_segment_score_add", "mask->width", INVALID,
        glcv_segment_score_add(&score, &(glcv_image){f->gray.data, 0, H, 0, GLCV_PIXEL_GRAY8}, &f->gray, NULL,
                               GLCV_TRUTH_BINARY),
        score.tp == 1, NULL);

    glcv_bgsub *bg = SENTINEL;
    ROW("glcv_bgsub_create", "width", INVALID,
        glcv_bgsub_create(&GLCV_BGSUB_PARAMS(.width = -1, .height = H, .logger = f->lg), &bg), bg == NULL, "size");
    bg = SENTINEL;
    ROW("glcv_bgsub_create", "streams", INVALID,
        glcv_bgsub_create(&GLCV_BGSUB_PARAMS(.width = W, .height = H, .streams = -1, .logger = f->lg), &bg),
        bg == NULL, "streams");
    bg = SENTINEL;
    ROW("glcv_bgsub_create", "absorb", INVALID,
        glcv_bgsub_create(&GLCV_BGSUB_PARAMS(.width = W, .height = H, .absorb = -1, .logger = f->lg), &bg), bg == NULL,
        "absorb");
    ROW("glcv_bgsub_frames", "count", INVALID, glcv_bgsub_frames(f->bgsub, &f->rgb, 0, 1), 1, "frame");
    ROW("glcv_bgsub_frames", "count", INVALID, glcv_bgsub_frames(f->bgsub, &f->rgb, -1, 1), 1, "frame");
    ROW("glcv_bgsub_map_frames", "count", INVALID, glcv_bgsub_map_frames(f->bgsub, &out, 0), 1, "map_frames");
    ROW("glcv_bgsub_read_masks", "count", INVALID, glcv_bgsub_read_masks(f->bgsub, 0, &f->gray, -1), 1, "read_masks");
    ROW("glcv_bgsub_read_masks", "age", INVALID, glcv_bgsub_read_masks(f->bgsub, -1, &f->gray, 1), 1, "age");
    ROW("glcv_bgsub_map_masks", "age", INVALID, glcv_bgsub_map_masks(f->bgsub, 3, &out, 1), 1, "age");
    ROW("glcv_bgsub_read_state", "stream", INVALID, glcv_bgsub_read_state(f->bgsub, -1, NULL, NULL), 1, "stream");
    ROW("glcv_bgsub_timings", "capacity", INVALID, glcv_bgsub_timings(f->bgsub, t, -1, &count, 0), count == 7,
        "capacity");

    glcv_delta *dl = SENTINEL;
    ROW("glcv_delta_create", "width", INVALID,
        glcv_delta_create(&GLCV_DELTA_PARAMS(.width = 0, .height = H, .logger = f->lg), &dl), dl == NULL, "size");
    dl = SENTINEL;
    ROW("glcv_delta_create", "keyframe_interval", INVALID,
        glcv_delta_create(&GLCV_DELTA_PARAMS(.width = W, .height = H, .keyframe_interval = -2, .logger = f->lg), &dl),
        dl == NULL, "keyframe_interval");
    dl = SENTINEL;
    ROW("glcv_delta_create", "threshold", INVALID,
        glcv_delta_create(&GLCV_DELTA_PARAMS(.width = W, .height = H, .threshold = -5, .logger = f->lg), &dl),
        dl == NULL, "threshold");
    const uint8_t *packet = SENTINEL;
    size_t bytes = 5;
    ROW("glcv_delta_encode", "frame->width", INVALID, glcv_delta_encode(f->delta, &zero_w, NULL, 0, &packet, &bytes),
        packet == NULL && bytes == 0, "encode");
    ROW("glcv_delta_timings", "capacity", INVALID, glcv_delta_timings(f->delta, t, -1, &count, 0), count == 7,
        "capacity");
    uint8_t buf[64] = {0};
    glcv_delta_header header;
    ROW("glcv_delta_header_parse", "bytes", INVALID, glcv_delta_header_parse(buf, 10, &header, &f->lg), 1, NULL);
    ROW("glcv_delta_compress", "level", INVALID, glcv_delta_compress(buf, 64, -1, buf, 64, &bytes, &f->lg), 1,
        "level");
    glcv_delta_decoder *dec = SENTINEL;
    ROW("glcv_delta_decode", "bytes", GLCV_ERROR_CORRUPT_DATA, glcv_delta_decode(f->decoder, buf, 0), 1, NULL);
    (void)dec;

    glcv_match *mt = SENTINEL;
    ROW("glcv_match_create", "width", INVALID,
        glcv_match_create(&GLCV_MATCH_PARAMS(.width = 0, .height = H, .logger = f->lg), &mt), mt == NULL, "size");
    mt = SENTINEL;
    ROW("glcv_match_create", "nms_distance", INVALID,
        glcv_match_create(&GLCV_MATCH_PARAMS(.width = W, .height = H, .nms_distance = -1, .logger = f->lg), &mt),
        mt == NULL, "nms_distance");
    mt = SENTINEL;
    ROW("glcv_match_create", "threads", INVALID,
        glcv_match_create(&GLCV_MATCH_PARAMS(.width = W, .height = H, .threads = -1, .logger = f->lg), &mt),
        mt == NULL, "threads");
    ROW("glcv_match_set_template_texture", "width", INVALID, glcv_match_set_template_texture(f->match, 1, 0, 4, NULL),
        1, "size");
    ROW("glcv_match_set_roi", "roi->width", INVALID, glcv_match_set_roi(f->match, &(glcv_rect){0, 0, 0, 4}), 1,
        "ROI");
    ROW("glcv_match_set_template", "templ->width", INVALID, glcv_match_set_template(f->match, &zero_w, NULL), 1,
        "template");
    glcv_match_hit hits[2];
    count = 7;
    ROW("glcv_match_best", "k", INVALID, glcv_match_best(f->match, 0, hits, &count), count == 7, "k");
    ROW("glcv_match_timings", "capacity", INVALID, glcv_match_timings(f->match, t, -1, &count), count == 7, NULL);

    glcv_correlate *co = SENTINEL;
    ROW("glcv_correlate_create", "height", INVALID,
        glcv_correlate_create(&GLCV_CORRELATE_PARAMS(.width = W, .height = 0, .logger = f->lg), &co), co == NULL,
        "size");
    co = SENTINEL;
    ROW("glcv_correlate_create", "batch", INVALID,
        glcv_correlate_create(&GLCV_CORRELATE_PARAMS(.width = W, .height = H, .batch = -1, .logger = f->lg), &co),
        co == NULL, "batch");
    ROW("glcv_correlate_images", "n", INVALID, glcv_correlate_images(f->correlate, &f->rgb, 0, &r), 1, "n < 1");
    ROW("glcv_correlate_files", "n", INVALID, glcv_correlate_files(f->correlate, (const char *[]){"x"}, -1, &r), 1,
        "n < 1");
    ROW("glcv_correlate_textures", "n", INVALID, glcv_correlate_textures(f->correlate, (unsigned[]){1}, 0, &r), 1,
        "n < 1");
    ROW("glcv_correlate_bank_load", "n", INVALID, glcv_correlate_bank_load(f->correlate, &f->rgb, -1), 1, "n < 1");
    ROW("glcv_correlate_timings", "capacity", INVALID, glcv_correlate_timings(f->correlate, t, -1, &count), 1, NULL);

    glcv_track *tr = SENTINEL;
    glcv_track_hist hist;
    ROW("glcv_track_create", "width", INVALID,
        glcv_track_create(&GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = -4, .height = H, .logger = f->lg), &tr), tr == NULL, "size");
    tr = SENTINEL;
    ROW("glcv_track_create", "hue_bins", INVALID,
        glcv_track_create(&GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = W, .height = H, .hue_bins = -1, .logger = f->lg), &tr),
        tr == NULL, "hue_bins");
    tr = SENTINEL;
    ROW("glcv_track_create", "max_objects", INVALID,
        glcv_track_create(&GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = W, .height = H, .max_objects = -1, .logger = f->lg), &tr),
        tr == NULL, "max_objects");
    ROW("glcv_track_set_limits", "s_min", INVALID, glcv_track_set_limits(f->track, -1, 10, 255), 1, "s_min");
    ROW("glcv_track_hist_compute", "region.width", INVALID,
        glcv_track_hist_compute(f->track, &f->rgb, NULL, (glcv_rect){0, 0, 0, 4}, &hist), 1, "region");
    ROW("glcv_track_hist_weight_background", "region.height", INVALID,
        glcv_track_hist_weight_background(f->track, &f->rgb, (glcv_rect){0, 0, 4, -1}, &hist), 1, "region");
    ROW("glcv_track_hist_save", "count", INVALID, glcv_track_hist_save("x.hist", &f->hist, 0, &f->lg), 1,
        "hist_save");
    count = 7;
    ROW("glcv_track_hist_load", "capacity", INVALID, glcv_track_hist_load("x.hist", &hist, 0, &count, &f->lg), 1,
        "hist_load");
    int id = -7; /* -1 after a refused add */
    ROW("glcv_track_add", "window.width", INVALID, glcv_track_add(f->track, &f->hist, (glcv_rect){0, 0, 0, 4}, &id),
        id == -1, "window");
    ROW("glcv_track_add_to_stream", "stream", INVALID,
        glcv_track_add_to_stream(f->track, -1, &f->hist, (glcv_rect){0, 0, 4, 4}, &id), id == -1, "stream");
    ROW("glcv_track_remove", "id", INVALID, glcv_track_remove(f->track, -1), 1, "object -1");
    ROW("glcv_track_set_window", "window.height", INVALID,
        glcv_track_set_window(f->track, 0, (glcv_rect){0, 0, 4, 0}), 1, "window");
    ROW("glcv_track_get_hist", "id", INVALID, glcv_track_get_hist(f->track, -3, &hist), 1, "object -3");
    ROW("glcv_track_frames", "count", INVALID, glcv_track_frames(f->track, &f->rgb, NULL, 0), 1, "0 frames");
    glcv_track_result results[1];
    count = 7;
    ROW("glcv_track_results", "capacity", INVALID, glcv_track_results(f->track, results, -1, &count), count == 7,
        NULL);
    glcv_rect box = glcv_track_box_bounds(8, 8, 4, 4, 0, 0, H);
    ROW("glcv_track_box_bounds", "frame_w", GLCV_OK, box.width == 0 && box.height == 0 ? GLCV_OK : INVALID, 1, NULL);

#if GLCV_HAVE_FFMPEG
    glcv_media *media = SENTINEL;
    ROW("glcv_media_create", "width", INVALID,
        glcv_media_create(&GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC, .width = -1, .height = 4,
                                             .logger = f->lg),
                          &media),
        media == NULL, "frame size");
    media = SENTINEL;
    ROW("glcv_media_create", "ring_frames", INVALID,
        glcv_media_create(&GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC, .ring_frames = -1, .logger = f->lg),
                          &media),
        media == NULL, "ring");
#endif
}

/* ---- sizes whose products overflow ------------------------------------------------------------- */

static void huge_sizes(fixture *f)
{
    fault = "huge size (overflowing product)";
    glcv_image out = f->rgb;
    /* INT_MAX rows of 2^62 bytes: the last row starts beyond the address space. */
    glcv_image huge = {f->rgb.data, INT_MAX, INT_MAX, SIZE_MAX / 4, GLCV_PIXEL_RGBA8};
    /* INT_MAX rows of INT_MAX RGBA pixels, packed: 2^64 - 2^33 bytes, within the address space
     * (what glcv_image_check checks), but every count of its pixels or bytes overflows. */
    glcv_image packed = {f->rgb.data, INT_MAX, INT_MAX, 0, GLCV_PIXEL_RGBA8};

    ROW("glcv_image_alloc", "width x height", INVALID, glcv_image_alloc(INT_MAX, INT_MAX, GLCV_PIXEL_RGBA8, &out),
        out.data == NULL, NULL);
    ROW("glcv_image_check", "stride x height", INVALID, glcv_image_check(&huge), 1, NULL);
    ROW("glcv_image_median", "out", INVALID, glcv_image_median(1, source_rgb, &packed, &f->lg, &packed), 1,
        "too large");
    out = f->rgb;
    ROW("glcv_image_convert", "src", INVALID, glcv_image_convert(&huge, &out), 1, NULL);
    ROW("glcv_image_save_png", "image", INVALID, glcv_image_save_png("x.png", &huge, &f->lg), 1, "image");
    ROW("glcv_image_set_max_pixels", "n", GLCV_OK,
        glcv_image_set_max_pixels(SIZE_MAX) == ((size_t)1 << 30) ? GLCV_OK : INVALID, 1, NULL);
    glcv_image_set_max_pixels(GLCV_IMAGE_DEFAULT_MAX_PIXELS);

    glcv_synth *sy = SENTINEL;
    ROW("glcv_synth_create", "width x height", INVALID,
        glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = INT_MAX, .height = INT_MAX), &sy), sy == NULL, NULL);

    glcv_segment *seg = SENTINEL;
    ROW("glcv_segment_create", "width x height", INVALID,
        glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = INT_MAX, .height = INT_MAX, .logger = f->lg), &seg),
        seg == NULL, "size");
    seg = SENTINEL;
    ROW("glcv_segment_create", "streams", INVALID,
        glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = W, .height = H, .streams = INT_MAX, .logger = f->lg), &seg),
        seg == NULL, "streams");
    ROW("glcv_segment_set_iterations", "iterations", INVALID, glcv_segment_set_iterations(f->seg, INT_MAX), 1,
        "iterations");
    ROW("glcv_segment_frame", "frame", INVALID, glcv_segment_frame(f->seg, &huge, 1), 1, "frame");
    ROW("glcv_segment_read_mask", "out", INVALID, glcv_segment_read_mask(f->seg, &huge), 1, "read_mask");
    glcv_segment_score score = {0};
    ROW("glcv_segment_frame", "frame (packed)", GLCV_ERROR_SIZE_MISMATCH, glcv_segment_frame(f->seg, &packed, 1), 1,
        "frame");
    ROW("glcv_segment_score_add", "mask", GLCV_ERROR_SIZE_MISMATCH,
        glcv_segment_score_add(&score, &(glcv_image){f->gray.data, INT_MAX, INT_MAX, 0, GLCV_PIXEL_GRAY8}, &f->gray,
                               NULL, GLCV_TRUTH_BINARY),
        score.tp == 0, NULL);

    glcv_bgsub *bg = SENTINEL;
    ROW("glcv_bgsub_create", "width x height", INVALID,
        glcv_bgsub_create(&GLCV_BGSUB_PARAMS(.width = INT_MAX, .height = INT_MAX, .logger = f->lg), &bg), bg == NULL,
        "size");
    bg = SENTINEL;
    ROW("glcv_bgsub_create", "streams", INVALID,
        glcv_bgsub_create(&GLCV_BGSUB_PARAMS(.width = W, .height = H, .streams = INT_MAX, .logger = f->lg), &bg),
        bg == NULL, "streams");
    ROW("glcv_bgsub_frames", "frames", INVALID, glcv_bgsub_frames(f->bgsub, &huge, 1, 1), 1, "frame 0");
    ROW("glcv_bgsub_frames", "count", INVALID, glcv_bgsub_frames(f->bgsub, &f->rgb, INT_MAX, 1), 1, "frame");

    glcv_delta *dl = SENTINEL;
    ROW("glcv_delta_create", "width x height", INVALID,
        glcv_delta_create(&GLCV_DELTA_PARAMS(.width = INT_MAX, .height = INT_MAX, .logger = f->lg), &dl), dl == NULL,
        "size");
    dl = SENTINEL;
    /* 16384 x 16384 RGBA is 2^30 bytes: within the sizes, but width * height * bytes per pixel must be < 2^31 */
    ROW("glcv_delta_create", "width x height x 4", INVALID,
        glcv_delta_create(&GLCV_DELTA_PARAMS(.width = 32768, .height = 32768, .format = GLCV_PIXEL_RGBA8,
                                             .logger = f->lg),
                          &dl),
        dl == NULL, "size");
    glcv_delta_decoder *dec = SENTINEL;
    ROW("glcv_delta_decoder_create", "max_bytes", INVALID,
        glcv_delta_decoder_create(&GLCV_DELTA_DECODER_PARAMS(.max_bytes = SIZE_MAX, .logger = f->lg), &dec),
        dec == NULL, "max_bytes");
    ROW("glcv_delta_compress_bound", "bytes", GLCV_OK,
        glcv_delta_compress_bound(SIZE_MAX) == SIZE_MAX ? GLCV_OK : INVALID, 1, NULL);
    const uint8_t *packet = SENTINEL;
    size_t bytes = 5;
    ROW("glcv_delta_encode", "frame", INVALID, glcv_delta_encode(f->delta, &huge, NULL, 0, &packet, &bytes),
        packet == NULL && bytes == 0, "encode");

    glcv_match *mt = SENTINEL;
    ROW("glcv_match_create", "width x height", INVALID,
        glcv_match_create(&GLCV_MATCH_PARAMS(.width = INT_MAX, .height = INT_MAX, .logger = f->lg), &mt), mt == NULL,
        "size");
    double scores[W * H];
    ROW("glcv_match_read_scores", "stride", INVALID, glcv_match_read_scores(f->match, scores, SIZE_MAX / 4), 1,
        "stride");
    ROW("glcv_match_read_normalized", "stride", INVALID,
        glcv_match_read_normalized(f->match, (float *)scores, SIZE_MAX / 2), 1, "stride");
    ROW("glcv_match_set_roi", "roi", GLCV_OK, glcv_match_set_roi(f->match, &(glcv_rect){INT_MAX, INT_MAX, INT_MAX,
                                                                                           INT_MAX}),
        1, NULL);
    glcv_match_set_roi(f->match, NULL);
    CHECK_OK(glcv_match_image(f->match, &f->rgb)); /* set_roi forgot the map */
    ROW("glcv_match_set_template_texture", "width", INVALID,
        glcv_match_set_template_texture(f->match, 1, INT_MAX, INT_MAX, NULL), 1, "size");
    ROW("glcv_match_image", "image", INVALID, glcv_match_image(f->match, &huge), 1, "image");

    glcv_correlate *co = SENTINEL;
    ROW("glcv_correlate_create", "width x height", INVALID,
        glcv_correlate_create(&GLCV_CORRELATE_PARAMS(.width = INT_MAX, .height = INT_MAX, .logger = f->lg), &co),
        co == NULL, "size");
    co = SENTINEL;
    ROW("glcv_correlate_create", "cuda_devices", INVALID,
        glcv_correlate_create(&GLCV_CORRELATE_PARAMS(.width = W, .height = H, .cuda_devices = INT_MAX,
                                                     .logger = f->lg),
                              &co),
        co == NULL, "cuda_devices");
    ROW("glcv_correlate_set_reference", "reference", INVALID, glcv_correlate_set_reference(f->correlate, &huge), 1,
        "reference");

    glcv_track *tr = SENTINEL;
    ROW("glcv_track_create", "width x height", INVALID,
        glcv_track_create(&GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = INT_MAX, .height = INT_MAX, .logger = f->lg), &tr), tr == NULL,
        "size");
    tr = SENTINEL;
    ROW("glcv_track_create", "hue_bins x sat_bins", INVALID,
        glcv_track_create(&GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = W, .height = H, .hue_bins = 180, .sat_bins = 256,
                                             .logger = f->lg),
                          &tr),
        tr == NULL, "bins");
    glcv_track_hist hist;
    glcv_rect far = {INT_MAX - 1, INT_MAX - 1, INT_MAX, INT_MAX};
    ROW("glcv_track_hist_compute", "region", INVALID, glcv_track_hist_compute(f->track, &f->rgb, NULL, far, &hist), 1,
        "region");
    hist = f->hist;
    ROW("glcv_track_hist_weight_background", "region", INVALID,
        glcv_track_hist_weight_background(f->track, &f->rgb, far, &hist), 1, "region");
    int id = -7; /* -1 after a refused add */
    ROW("glcv_track_add", "window", INVALID, glcv_track_add(f->track, &f->hist, far, &id), id == -1, "window");
    ROW("glcv_track_set_window", "window", INVALID, glcv_track_set_window(f->track, 0, far), 1, "window");
    glcv_track_hist bad = f->hist;
    bad.hue_bins = INT_MAX;
    bad.sat_bins = INT_MAX;
    ROW("glcv_track_add", "hist->hue_bins x sat_bins", INVALID, glcv_track_add(f->track, &bad, far, &id), id == -1,
        "bins");
    ROW("glcv_track_hist_save", "hists->hue_bins x sat_bins", INVALID, glcv_track_hist_save("x.hist", &bad, 1, &f->lg),
        1, "bins");
    double d = 5;
    ROW("glcv_track_hist_distance", "a->hue_bins x sat_bins", INVALID, glcv_track_hist_distance(&bad, &bad, &d),
        d == 5, NULL);
    glcv_rect box = glcv_track_box_bounds(1e30f, 1e30f, 1e30f, 1e30f, 45, INT_MAX, INT_MAX);
    ROW("glcv_track_box_bounds", "cx", GLCV_OK,
        box.x >= 0 && box.y >= 0 && (int64_t)box.x + box.width <= INT_MAX ? GLCV_OK : INVALID, 1, NULL);
}

/* ---- strides below a row ----------------------------------------------------------------------- */

static void short_strides(fixture *f)
{
    fault = "stride < row";
    glcv_image rgb = f->rgb, gray = f->gray, out = f->rgb;
    rgb.stride = (size_t)W * 3 - 1;
    gray.stride = W - 1;
    glcv_image rgb2[2] = {f->rgb2[0], f->rgb2[1]}, gray2[2] = {f->gray2[0], f->gray2[1]};
    rgb2[1].stride = (size_t)W * 3 - 1;
    gray2[1].stride = W - 1;
    double r = 0;
    const uint8_t *packet = SENTINEL;
    size_t bytes = 5;

    ROW("glcv_image_check", "stride", INVALID, glcv_image_check(&rgb), 1, NULL);
    ROW("glcv_image_convert", "src->stride", INVALID, glcv_image_convert(&rgb, &out), 1, NULL);
    ROW("glcv_image_convert", "dst->stride", INVALID, glcv_image_convert(&f->rgb, &rgb), 1, NULL);
    ROW("glcv_image_save_png", "image->stride", INVALID, glcv_image_save_png("x.png", &rgb, &f->lg), 1, "image");
    ROW("glcv_image_median", "out->stride", INVALID, glcv_image_median(1, source_rgb, &f->rgb, &f->lg, &rgb), 1,
        "output");
    ROW("glcv_image_median", "frame->stride", INVALID, glcv_image_median(1, source_rgb, &rgb, &f->lg, &out), 1,
        "frame 0");
    ROW("glcv_synth_background", "out->stride", INVALID, glcv_synth_background(f->synth, &rgb), 1, NULL);
    ROW("glcv_synth_frame", "truth->stride", INVALID, glcv_synth_frame(f->synth, 0, &out, &gray), 1, NULL);
    ROW("glcv_synth_dynamic_region", "out->stride", INVALID, glcv_synth_dynamic_region(f->synth, &gray), 1, NULL);

    ROW("glcv_segment_set_background", "background->stride", INVALID, glcv_segment_set_background(f->seg, &rgb), 1,
        "background");
    ROW("glcv_segment_frame", "frame->stride", INVALID, glcv_segment_frame(f->seg, &rgb, 1), 1, "frame");
    ROW("glcv_segment_read_mask", "out->stride", INVALID, glcv_segment_read_mask(f->seg, &gray), 1, "read_mask");
    ROW("glcv_segment_read_background", "out->stride", INVALID, glcv_segment_read_background(f->seg, &rgb), 1,
        "read_background");
    ROW("glcv_segment_calibrate_begin", "seg", GLCV_OK, glcv_segment_calibrate_begin(f->seg), 1, NULL);
    ROW("glcv_segment_calibrate_add", "frame->stride", INVALID, glcv_segment_calibrate_add(f->seg, &rgb), 1, "frame");
    ROW("glcv_segment_calibrate_add", "frame", GLCV_OK, glcv_segment_calibrate_add(f->seg, &f->rgb), 1, NULL);
    ROW("glcv_segment_calibrate_end", "seg", GLCV_OK, glcv_segment_calibrate_end(f->seg, NULL), 1, NULL);
    ROW("glcv_segment_frames", "frames[1].stride", INVALID, glcv_segment_frames(f->seg2, rgb2, 2, 1), 1, "frame");
    ROW("glcv_segment_set_backgrounds", "backgrounds[1].stride", INVALID,
        glcv_segment_set_backgrounds(f->seg2, rgb2, 2), 1, "background");
    ROW("glcv_segment_read_masks", "out[1].stride", INVALID, glcv_segment_read_masks(f->seg2, gray2, 2), 1, "mask");
    ROW("glcv_segment_read_backgrounds", "out[1].stride", INVALID, glcv_segment_read_backgrounds(f->seg2, rgb2, 2), 1,
        "background");
    glcv_segment_score score = {1, 2, 3, 4, 5};
    ROW("glcv_segment_score_add", "truth->stride", INVALID,
        glcv_segment_score_add(&score, &f->gray, &gray, NULL, GLCV_TRUTH_BINARY), score.tp == 1, NULL);
    ROW("glcv_segment_score_add", "roi->stride", INVALID,
        glcv_segment_score_add(&score, &f->gray, &f->gray, &gray, GLCV_TRUTH_BINARY), score.tp == 1, NULL);

    ROW("glcv_bgsub_frames", "frames->stride", INVALID, glcv_bgsub_frames(f->bgsub, &rgb, 1, 1), 1, "frame 0");
    ROW("glcv_bgsub_learn_begin", "bgsub", GLCV_OK, glcv_bgsub_learn_begin(f->bgsub), 1, NULL);
    ROW("glcv_bgsub_learn_add", "frames->stride", INVALID, glcv_bgsub_learn_add(f->bgsub, &rgb, 1), 1, "frame 0");
    ROW("glcv_bgsub_learn_add", "frames", GLCV_OK, glcv_bgsub_learn_add(f->bgsub, &f->rgb, 1), 1, NULL);
    ROW("glcv_bgsub_learn_end", "bgsub", GLCV_OK, glcv_bgsub_learn_end(f->bgsub), 1, NULL);
    ROW("glcv_bgsub_read_masks", "out->stride", INVALID, glcv_bgsub_read_masks(f->bgsub, 0, &gray, 1), 1, "image 0");

    ROW("glcv_delta_encode", "frame->stride", INVALID, glcv_delta_encode(f->delta, &rgb, NULL, 0, &packet, &bytes),
        packet == NULL && bytes == 0, "encode");
    ROW("glcv_delta_encode", "mask->stride", INVALID,
        glcv_delta_encode(f->delta, &f->rgb, &gray, 0, &packet, &bytes), packet == NULL && bytes == 0, "encode");
    ROW("glcv_delta_read_reference", "out->stride", INVALID, glcv_delta_read_reference(f->delta, &rgb), 1,
        "read_reference");

    ROW("glcv_match_set_template", "templ->stride", INVALID, glcv_match_set_template(f->match, &rgb, NULL), 1,
        "template");
    ROW("glcv_match_image", "image->stride", INVALID, glcv_match_image(f->match, &rgb), 1, "image");
    double scores[W * H];
    ROW("glcv_match_read_scores", "stride", INVALID, glcv_match_read_scores(f->match, scores, W - 1), 1, "stride");
    ROW("glcv_match_read_normalized", "stride", INVALID, glcv_match_read_normalized(f->match, (float *)scores, 1), 1,
        "stride");

    ROW("glcv_correlate_set_reference", "reference->stride", INVALID, glcv_correlate_set_reference(f->correlate, &rgb),
        1, "reference");
    ROW("glcv_correlate_images", "images[1].stride", INVALID, glcv_correlate_images(f->correlate, rgb2, 2, &r), 1,
        "image 1");
    ROW("glcv_correlate_bank_load", "images[1].stride", INVALID, glcv_correlate_bank_load(f->correlate, rgb2, 2), 1,
        "image 1");

    glcv_track_hist hist;
    glcv_rect all = {0, 0, W, H};
    ROW("glcv_track_hist_compute", "frame->stride", INVALID, glcv_track_hist_compute(f->track, &rgb, NULL, all, &hist),
        1, "frame");
    ROW("glcv_track_hist_compute", "mask->stride", INVALID,
        glcv_track_hist_compute(f->track, &f->rgb, &gray, all, &hist), 1, "mask");
    hist = f->hist;
    ROW("glcv_track_hist_weight_background", "frame->stride", INVALID,
        glcv_track_hist_weight_background(f->track, &rgb, (glcv_rect){4, 4, 8, 8}, &hist), 1, "frame");
    ROW("glcv_track_frame", "frame->stride", INVALID, glcv_track_frame(f->track, &rgb, NULL), 1, "frame");
    ROW("glcv_track_frame", "mask->stride", INVALID, glcv_track_frame(f->track, &f->rgb, &gray), 1, "mask");
    ROW("glcv_track_frames", "frames->stride", INVALID, glcv_track_frames(f->track, &rgb, NULL, 1), 1, "frame");
}

/* ---- NaN and infinite reals -------------------------------------------------------------------- */

static void non_finite(fixture *f)
{
    fault = "NaN or inf";
    const float nan = NAN, inf = INFINITY;
    glcv_segment *seg = SENTINEL;
    glcv_segment_params sp = GLCV_SEGMENT_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_CPU, .logger = f->lg);
    const struct {
        const char *name;
        float *field;
    } seg_fields[] = {{"Ts", &sp.ts}, {"Odc", &sp.odc}, {"B1", &sp.b1}, {"B2", &sp.b2}, {"adapt_rate", &sp.adapt_rate}};
    for (size_t i = 0; i < sizeof seg_fields / sizeof seg_fields[0]; i++) {
        for (int k = 0; k < 3; k++) {
            *seg_fields[i].field = k == 0 ? nan : k == 1 ? inf : -inf;
            seg = SENTINEL;
            ROW("glcv_segment_create", seg_fields[i].name, INVALID, glcv_segment_create(&sp, &seg), seg == NULL,
                seg_fields[i].name);
            *seg_fields[i].field = 0;
        }
    }
    for (int k = 0; k < 2; k++) {
        float v = k ? inf : nan;
        ROW("glcv_segment_set_ts", "ts", INVALID, glcv_segment_set_ts(f->seg, v), 1, "Ts");
        ROW("glcv_segment_set_odc", "odc", INVALID, glcv_segment_set_odc(f->seg, v), 1, "Odc");
        ROW("glcv_segment_set_b1", "b1", INVALID, glcv_segment_set_b1(f->seg, v), 1, "B1");
        ROW("glcv_segment_set_b2", "b2", INVALID, glcv_segment_set_b2(f->seg, -v), 1, "B2");
        ROW("glcv_segment_set_adapt_rate", "rate", INVALID, glcv_segment_set_adapt_rate(f->seg, v), 1, "adapt_rate");
    }
    glcv_segment_params got;
    CHECK_OK(glcv_segment_get_params(f->seg, &got));
    CHECK(isfinite(got.ts) && isfinite(got.odc) && isfinite(got.b1) && isfinite(got.b2) &&
              isfinite(got.adapt_rate),
          "a refused setter changed a parameter to %g %g %g %g %g", got.ts, got.odc, got.b1, got.b2, got.adapt_rate);

    glcv_bgsub_params bp = GLCV_BGSUB_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_CPU, .logger = f->lg);
    const struct {
        const char *name;
        float *field;
    } bg_fields[] = {{"alpha", &bp.alpha}, {"c", &bp.c}, {"min_threshold", &bp.min_threshold}};
    for (size_t i = 0; i < sizeof bg_fields / sizeof bg_fields[0]; i++) {
        for (int k = 0; k < 2; k++) {
            glcv_bgsub *bg = SENTINEL;
            *bg_fields[i].field = k ? inf : nan;
            ROW("glcv_bgsub_create", bg_fields[i].name, INVALID, glcv_bgsub_create(&bp, &bg), bg == NULL,
                bg_fields[i].name);
            *bg_fields[i].field = 0;
        }
    }

    glcv_track_params tp = GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = W, .height = H, .engine = GLCV_ENGINE_CPU, .logger = f->lg);
    const struct {
        const char *name;
        float *field;
    } tr_fields[] = {{"epsilon", &tp.epsilon},
                     {"aspect", &tp.aspect},
                     {"min_mass", &tp.min_mass},
                     {"max_distance", &tp.max_distance}};
    for (size_t i = 0; i < sizeof tr_fields / sizeof tr_fields[0]; i++) {
        for (int k = 0; k < 2; k++) {
            glcv_track *tr = SENTINEL;
            *tr_fields[i].field = k ? -inf : nan;
            ROW("glcv_track_create", tr_fields[i].name, INVALID, glcv_track_create(&tp, &tr), tr == NULL,
                tr_fields[i].name);
            *tr_fields[i].field = 0;
        }
    }
    glcv_track_hist nan_hist = f->hist, inf_hist = f->hist, hist = f->hist;
    nan_hist.value[3] = nan;
    inf_hist.value[0] = inf;
    int id = -7; /* -1 after a refused add */
    ROW("glcv_track_add", "hist->value[3]", INVALID, glcv_track_add(f->track, &nan_hist, (glcv_rect){0, 0, 4, 4}, &id),
        id == -1, "bin 3");
    ROW("glcv_track_add_to_stream", "hist->value[0]", INVALID,
        glcv_track_add_to_stream(f->track, 0, &inf_hist, (glcv_rect){0, 0, 4, 4}, &id), id == -1, "bin 0");
    ROW("glcv_track_hist_save", "hists->value[3]", INVALID, glcv_track_hist_save("x.hist", &nan_hist, 1, &f->lg), 1,
        "bin 3");
    double d = 5;
    ROW("glcv_track_hist_distance", "a->value[3]", INVALID, glcv_track_hist_distance(&nan_hist, &f->hist, &d), d == 5,
        NULL);
    ROW("glcv_track_hist_distance", "b->value[0]", INVALID, glcv_track_hist_distance(&f->hist, &inf_hist, &d), d == 5,
        NULL);
    hist = nan_hist;
    ROW("glcv_track_hist_weight_background", "hist->value[3]", INVALID,
        glcv_track_hist_weight_background(f->track, &f->rgb, (glcv_rect){4, 4, 8, 8}, &hist), 1, "bin 3");
    glcv_rect box = glcv_track_box_bounds(nan, 4, 4, 4, 0, W, H);
    ROW("glcv_track_box_bounds", "cx", GLCV_OK, box.width == 0 && box.height == 0 ? GLCV_OK : INVALID, 1, NULL);
    box = glcv_track_box_bounds(4, 4, 4, 4, inf, W, H);
    ROW("glcv_track_box_bounds", "angle", GLCV_OK, box.width == 0 && box.height == 0 ? GLCV_OK : INVALID, 1, NULL);
    float px[4], py[4];
    glcv_track_box_points(nan, inf, -inf, nan, inf, px, py); /* NaN corners, no crash */

    glcv_synth *sy = SENTINEL;
    ROW("glcv_synth_create", "noise_sigma", INVALID,
        glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = W, .height = H, .noise_sigma = nan), &sy), sy == NULL, NULL);
    sy = SENTINEL;
    ROW("glcv_synth_create", "illumination_gain", INVALID,
        glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = W, .height = H, .illumination_gain = inf), &sy), sy == NULL,
        NULL);

#if GLCV_HAVE_FFMPEG
    glcv_media *media = SENTINEL;
    ROW("glcv_media_create", "frame_rate", INVALID,
        glcv_media_create(&GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC, .frame_rate = (double)nan,
                                             .logger = f->lg),
                          &media),
        media == NULL, "frame rate");
#endif
}

/* ---- enum values out of range ------------------------------------------------------------------ */

static void bad_enums(fixture *f)
{
    fault = "enum out of range";
    glcv_image out = f->rgb, im = f->rgb;
    im.format = (glcv_pixel_format)99;

    ROW("glcv_status_string", "status", GLCV_OK, glcv_status_string((glcv_status)99) != NULL ? GLCV_OK : INVALID, 1,
        NULL);
    ROW("glcv_engine_mode_string", "mode", GLCV_OK,
        strcmp(glcv_engine_mode_string((glcv_engine_mode)-1), "?") == 0 ? GLCV_OK : INVALID, 1, NULL);
    glcv_engine_mode mode = GLCV_ENGINE_CPU;
    ROW("glcv_engine_mode_parse", "name", INVALID, glcv_engine_mode_parse("gpu", &mode), mode == GLCV_ENGINE_CPU,
        NULL);
    ROW("glcv_pixel_format_size", "format", GLCV_OK,
        glcv_pixel_format_size((glcv_pixel_format)-1) == 0 ? GLCV_OK : INVALID, 1, NULL);
    ROW("glcv_image_alloc", "format", INVALID, glcv_image_alloc(W, H, (glcv_pixel_format)99, &out), out.data == NULL,
        NULL);
    out = f->rgb;
    ROW("glcv_image_check", "format", INVALID, glcv_image_check(&im), 1, NULL);
    ROW("glcv_image_load", "format", INVALID, glcv_image_load("x.png", (glcv_pixel_format)99, &f->lg, &out),
        out.data == NULL, "format");
    out = f->rgb;
    ROW("glcv_image_save_png_level", "level", INVALID,
        glcv_image_save_png_level("x.png", &f->rgb, (glcv_png_level)99, &f->lg), 1, "level");
    ROW("glcv_image_convert", "src->format", INVALID, glcv_image_convert(&im, &out), 1, NULL);

    glcv_synth *sy = SENTINEL;
    ROW("glcv_synth_create", "scene", INVALID,
        glcv_synth_create(&GLCV_SYNTH_PARAMS(.scene = (glcv_synth_scene)99), &sy), sy == NULL, NULL);

    glcv_segment *seg = SENTINEL;
    ROW("glcv_segment_create", "engine", INVALID,
        glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = W, .height = H, .engine = (glcv_engine_mode)99,
                                                 .logger = f->lg),
                            &seg),
        seg == NULL, "engine");
    seg = SENTINEL;
    ROW("glcv_segment_create", "engine", INVALID,
        glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_CUDA, .logger = f->lg),
                            &seg),
        seg == NULL, "engine");
    seg = SENTINEL;
    ROW("glcv_segment_create", "preset", INVALID,
        glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = W, .height = H, .preset = (glcv_segment_preset)-1,
                                                 .logger = f->lg),
                            &seg),
        seg == NULL, "preset");
    ROW("glcv_segment_map_frame", "format", INVALID, glcv_segment_map_frame(f->seg, (glcv_pixel_format)99, &out), 1,
        "format");
    ROW("glcv_segment_map_frame", "format", INVALID, glcv_segment_map_frame(f->seg, GLCV_PIXEL_GRAY8, &out), 1,
        "format");
    glcv_image mapped[2] = {f->rgb, f->rgb};
    ROW("glcv_segment_map_frames", "format", INVALID,
        glcv_segment_map_frames(f->seg2, (glcv_pixel_format)-1, mapped, 2), 1, "format");
    ROW("glcv_segment_frame", "frame->format", INVALID, glcv_segment_frame(f->seg, &im, 1), 1, "frame");
    glcv_segment_score score = {1, 2, 3, 4, 5};
    ROW("glcv_segment_score_add", "labels", INVALID,
        glcv_segment_score_add(&score, &f->gray, &f->gray, NULL, (glcv_truth_labels)99), score.tp == 1, NULL);
    ROW("glcv_segment_score_add", "mask->format", INVALID,
        glcv_segment_score_add(&score, &f->rgb, &f->gray, NULL, GLCV_TRUTH_BINARY), score.tp == 1, NULL);

    glcv_bgsub_params bp = GLCV_BGSUB_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_CPU, .logger = f->lg);
    glcv_bgsub *bg = SENTINEL;
    ROW("glcv_bgsub_create", "method", INVALID,
        glcv_bgsub_create(&(glcv_bgsub_params){.width = W, .height = H, .method = (glcv_bgsub_method)99,
                                               .logger = f->lg},
                          &bg),
        bg == NULL, "method");
    bg = SENTINEL;
    bp.format = (glcv_pixel_format)99;
    ROW("glcv_bgsub_create", "format", INVALID, glcv_bgsub_create(&bp, &bg), bg == NULL, "format");
    bp.format = 0;
    bg = SENTINEL;
    bp.passes = (glcv_bgsub_passes)99;
    ROW("glcv_bgsub_create", "passes", INVALID, glcv_bgsub_create(&bp, &bg), bg == NULL, "passes");
    bp.passes = 0;
    bg = SENTINEL;
    bp.upload = (glcv_bgsub_upload)-1;
    ROW("glcv_bgsub_create", "upload", INVALID, glcv_bgsub_create(&bp, &bg), bg == NULL, "upload");
    bp.upload = 0;
    bg = SENTINEL;
    bp.engine = GLCV_ENGINE_CUDA;
    ROW("glcv_bgsub_create", "engine", INVALID, glcv_bgsub_create(&bp, &bg), bg == NULL, "engine");
    ROW("glcv_bgsub_method_string", "method", GLCV_OK,
        strcmp(glcv_bgsub_method_string((glcv_bgsub_method)99), "?") == 0 ? GLCV_OK : INVALID, 1, NULL);

    glcv_delta_params dp = GLCV_DELTA_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_CPU, .logger = f->lg);
    glcv_delta *dl = SENTINEL;
    dp.layout = (glcv_delta_layout)99;
    ROW("glcv_delta_create", "layout", INVALID, glcv_delta_create(&dp, &dl), dl == NULL, "layout");
    dp.layout = 0;
    dl = SENTINEL;
    dp.format = (glcv_pixel_format)99;
    ROW("glcv_delta_create", "format", INVALID, glcv_delta_create(&dp, &dl), dl == NULL, "format");
    dp.format = 0;
    dl = SENTINEL;
    dp.engine = (glcv_engine_mode)99;
    ROW("glcv_delta_create", "engine", INVALID, glcv_delta_create(&dp, &dl), dl == NULL, "engine");
    const uint8_t *packet = SENTINEL;
    size_t bytes = 5;
    ROW("glcv_delta_encode", "flags", INVALID, glcv_delta_encode(f->delta, &f->rgb, NULL, 0x100, &packet, &bytes),
        packet == NULL && bytes == 0, "flags");
    ROW("glcv_delta_encode", "frame->format", INVALID, glcv_delta_encode(f->delta, &im, NULL, 0, &packet, &bytes),
        packet == NULL && bytes == 0, "encode");
    ROW("glcv_delta_encode", "mask->format", INVALID,
        glcv_delta_encode(f->delta, &f->rgb, &f->rgb, 0, &packet, &bytes), packet == NULL && bytes == 0, "encode");
    ROW("glcv_delta_read_reference", "out->format", INVALID, glcv_delta_read_reference(f->delta, &f->gray), 1,
        "format");

    glcv_match_params mp = GLCV_MATCH_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_CPU, .logger = f->lg);
    glcv_match *mt = SENTINEL;
    mp.metric = (glcv_match_metric)99;
    ROW("glcv_match_create", "metric", INVALID, glcv_match_create(&mp, &mt), mt == NULL, "metric");
    mp.metric = 0;
    mt = SENTINEL;
    mp.simd = (glcv_match_simd)99;
    ROW("glcv_match_create", "simd", INVALID, glcv_match_create(&mp, &mt), mt == NULL, "SIMD");
    mp.simd = 0;
    mt = SENTINEL;
    mp.engine = GLCV_ENGINE_FRAGMENT;
    ROW("glcv_match_create", "engine", INVALID, glcv_match_create(&mp, &mt), mt == NULL, "engine");
    mp.engine = GLCV_ENGINE_CPU;
    mt = SENTINEL;
    mp.format = (glcv_pixel_format)99;
    ROW("glcv_match_create", "format", INVALID, glcv_match_create(&mp, &mt), mt == NULL, "format");
    ROW("glcv_match_set_metric", "metric", INVALID, glcv_match_set_metric(f->match, (glcv_match_metric)99), 1,
        "metric");
    ROW("glcv_match_set_template", "mask->format", INVALID, glcv_match_set_template(f->match, &f->rgb, &f->rgb), 1,
        "mask");
    ROW("glcv_match_metric_string", "metric", GLCV_OK,
        strcmp(glcv_match_metric_string((glcv_match_metric)99), "?") == 0 ? GLCV_OK : INVALID, 1, NULL);
    ROW("glcv_match_simd_string", "simd", GLCV_OK,
        strcmp(glcv_match_simd_string((glcv_match_simd)99), "?") == 0 ? GLCV_OK : INVALID, 1, NULL);

    glcv_correlate *co = SENTINEL;
    ROW("glcv_correlate_create", "format", INVALID,
        glcv_correlate_create(&GLCV_CORRELATE_PARAMS(.width = W, .height = H, .format = GLCV_PIXEL_RGBA8,
                                                     .logger = f->lg),
                              &co),
        co == NULL, "format");
    co = SENTINEL;
    ROW("glcv_correlate_create", "engine", INVALID,
        glcv_correlate_create(&GLCV_CORRELATE_PARAMS(.width = W, .height = H, .engine = (glcv_engine_mode)99,
                                                     .logger = f->lg),
                              &co),
        co == NULL, "engine");

    glcv_track_params tp = GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = W, .height = H, .engine = GLCV_ENGINE_CPU, .logger = f->lg);
    glcv_track *tr = SENTINEL;
    tp.window = (glcv_track_window)99;
    ROW("glcv_track_create", "window", INVALID, glcv_track_create(&tp, &tr), tr == NULL, "window");
    tp.window = 0;
    tr = SENTINEL;
    tp.recovery = (glcv_track_recovery)-1;
    ROW("glcv_track_create", "recovery", INVALID, glcv_track_create(&tp, &tr), tr == NULL, "recovery");
    tp.recovery = 0;
    tr = SENTINEL;
    tp.lost_criteria = 0x80;
    ROW("glcv_track_create", "lost_criteria", INVALID, glcv_track_create(&tp, &tr), tr == NULL, "lost_criteria");
    tp.lost_criteria = 0;
    tr = SENTINEL;
    tp.engine = GLCV_ENGINE_COMPUTE;
    ROW("glcv_track_create", "engine", INVALID, glcv_track_create(&tp, &tr), tr == NULL, "engine");
    ROW("glcv_track_hist_compute", "frame->format", INVALID,
        glcv_track_hist_compute(f->track, &f->gray, NULL, (glcv_rect){0, 0, W, H}, &f->hist), 1, "frame");
    ROW("glcv_track_frame", "mask->format", INVALID, glcv_track_frame(f->track, &f->rgb, &f->rgb), 1, "mask");

#if GLCV_HAVE_FFMPEG
    glcv_media *media = SENTINEL;
    ROW("glcv_media_create", "source", INVALID,
        glcv_media_create(&GLCV_MEDIA_PARAMS(.source = (glcv_media_source)99, .logger = f->lg), &media), media == NULL,
        "source");
    media = SENTINEL;
    ROW("glcv_media_create", "format", INVALID,
        glcv_media_create(&GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC, .format = GLCV_PIXEL_GRAY8,
                                             .logger = f->lg),
                          &media),
        media == NULL, "format");
    ROW("glcv_media_source_string", "source", GLCV_OK,
        strcmp(glcv_media_source_string((glcv_media_source)99), "?") == 0 ? GLCV_OK : INVALID, 1, NULL);
#endif
}

/* ---- no GL context current --------------------------------------------------------------------- */

static void no_context(fixture *f)
{
    fault = "no GL context current";
    glcv_context *ctx = NULL;
    glcv_context_params cp = GLCV_CONTEXT_PARAMS(.min_gl_version = 33, .logger = test_logger());
    if (glcv_context_create(&cp, &ctx) != GLCV_OK) {
        printf("no OpenGL context: the rows that need one are skipped\n");
        return;
    }
    /* GL objects made and used in a context that is then destroyed: nothing is current. */
    glcv_segment *seg = NULL;
    glcv_bgsub *bg = NULL;
    glcv_delta *dl = NULL;
    CHECK_OK(glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_FRAGMENT,
                                                      .timing = 1, .logger = f->lg),
                                 &seg));
    CHECK_OK(glcv_bgsub_create(&GLCV_BGSUB_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_FRAGMENT,
                                                  .timing = 1, .logger = f->lg),
                               &bg));
    CHECK_OK(glcv_delta_create(&GLCV_DELTA_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_FRAGMENT,
                                                  .timing = 1, .logger = f->lg),
                               &dl));
    const uint8_t *packet = NULL;
    size_t bytes = 0;
    glcv_timing t[8];
    int count = 0;
    if (seg) {
        CHECK_OK(glcv_segment_set_background(seg, &f->rgb));
        CHECK_OK(glcv_segment_frame(seg, &f->rgb, 1));
        CHECK_OK(glcv_segment_timings(seg, t, 8, &count, 1));
    }
    if (bg)
        CHECK_OK(glcv_bgsub_frames(bg, &f->rgb, 1, 1));
    if (dl)
        CHECK_OK(glcv_delta_encode(dl, &f->rgb, NULL, 0, &packet, &bytes));
    /* the CPU segmenter's mask texture and the matcher's map texture, made in the context */
    CHECK(glcv_segment_mask_texture(f->seg) != 0, "the CPU segmenter made no mask texture");
    CHECK(glcv_match_map_texture(f->match) != 0, "the matcher made no map texture");
    glcv_context_destroy(&ctx);
    CHECK(!glcv_gl_context_current(), "a context is current after destroying the only one");

    const glcv_status NOCTX = GLCV_ERROR_NO_CONTEXT;
    glcv_image im = f->rgb, gray = f->gray, out = f->rgb;
    const char *gone = "not current";
    if (seg) {
        float g = -1;
        count = 7;
        ROW("glcv_segment_frame", "seg", NOCTX, glcv_segment_frame(seg, &im, 1), 1, gone);
        ROW("glcv_segment_set_background", "seg", NOCTX, glcv_segment_set_background(seg, &im), 1, gone);
        ROW("glcv_segment_read_mask", "seg", NOCTX, glcv_segment_read_mask(seg, &gray), 1, gone);
        ROW("glcv_segment_read_background", "seg", NOCTX, glcv_segment_read_background(seg, &out), 1, gone);
        ROW("glcv_segment_read_qualifiers", "seg", NOCTX, glcv_segment_read_qualifiers(seg, NULL, NULL, NULL), 1, gone);
        ROW("glcv_segment_read_thresholds", "seg", NOCTX, glcv_segment_read_thresholds(seg, NULL, NULL), 1, gone);
        ROW("glcv_segment_learn_begin", "seg", NOCTX, glcv_segment_learn_begin(seg), 1, gone);
        ROW("glcv_segment_calibrate_begin", "seg", NOCTX, glcv_segment_calibrate_begin(seg), 1, gone);
        ROW("glcv_segment_calibrate_end", "seg", NOCTX, glcv_segment_calibrate_end(seg, &g), g == -1, gone);
        ROW("glcv_segment_map_frame", "seg", NOCTX, glcv_segment_map_frame(seg, GLCV_PIXEL_RGBA8, &out), 1, gone);
        ROW("glcv_segment_frame_mapped", "seg", NOCTX, glcv_segment_frame_mapped(seg, 1), 1, gone);
        ROW("glcv_segment_frame_texture", "seg", NOCTX, glcv_segment_frame_texture(seg, 1, 1), 1, gone);
        ROW("glcv_segment_frames_texture", "seg", NOCTX, glcv_segment_frames_texture(seg, 1, 1), 1, gone);
        ROW("glcv_segment_reset", "seg", NOCTX, glcv_segment_reset(seg), 1, gone);
        ROW("glcv_segment_timings", "seg", NOCTX, glcv_segment_timings(seg, t, 8, &count, 1), count == 7, gone);
        ROW("glcv_segment_mask_texture", "seg", GLCV_OK, glcv_segment_mask_texture(seg) == 0 ? GLCV_OK : NOCTX, 1,
            gone);
        ROW("glcv_segment_background_texture", "seg", GLCV_OK,
            glcv_segment_background_texture(seg) == 0 ? GLCV_OK : NOCTX, 1, gone);
        ROW("glcv_segment_set_ts", "seg", GLCV_OK, glcv_segment_set_ts(seg, 100), 1, NULL); /* no GL: allowed */
        glcv_segment_destroy(&seg);
    }
    if (bg) {
        count = 7;
        ROW("glcv_bgsub_frames", "bgsub", NOCTX, glcv_bgsub_frames(bg, &im, 1, 1), 1, gone);
        ROW("glcv_bgsub_map_frames", "bgsub", NOCTX, glcv_bgsub_map_frames(bg, &out, 1), 1, gone);
        ROW("glcv_bgsub_frames_texture", "bgsub", NOCTX, glcv_bgsub_frames_texture(bg, 1, 1), 1, gone);
        ROW("glcv_bgsub_read_masks", "bgsub", NOCTX, glcv_bgsub_read_masks(bg, 0, &gray, 1), 1, gone);
        ROW("glcv_bgsub_map_masks", "bgsub", NOCTX, glcv_bgsub_map_masks(bg, 0, &out, 1), 1, gone);
        ROW("glcv_bgsub_read_state", "bgsub", NOCTX, glcv_bgsub_read_state(bg, 0, NULL, NULL), 1, gone);
        ROW("glcv_bgsub_learn_begin", "bgsub", NOCTX, glcv_bgsub_learn_begin(bg), 1, gone);
        ROW("glcv_bgsub_reset", "bgsub", NOCTX, glcv_bgsub_reset(bg), 1, gone);
        ROW("glcv_bgsub_timings", "bgsub", NOCTX, glcv_bgsub_timings(bg, t, 8, &count, 1), count == 7, gone);
        ROW("glcv_bgsub_mask_texture", "bgsub", GLCV_OK, glcv_bgsub_mask_texture(bg) == 0 ? GLCV_OK : NOCTX, 1, gone);
        glcv_bgsub_destroy(&bg);
    }
    if (dl) {
        packet = SENTINEL;
        bytes = 5;
        count = 7;
        ROW("glcv_delta_encode", "delta", NOCTX, glcv_delta_encode(dl, &im, NULL, 0, &packet, &bytes),
            packet == NULL && bytes == 0, gone);
        packet = SENTINEL;
        bytes = 5;
        ROW("glcv_delta_encode_texture", "delta", NOCTX, glcv_delta_encode_texture(dl, 1, 0, 0, &packet, &bytes),
            packet == NULL && bytes == 0, gone);
        ROW("glcv_delta_map_frame", "delta", NOCTX, glcv_delta_map_frame(dl, &out), 1, gone);
        ROW("glcv_delta_snapshot", "delta", NOCTX, glcv_delta_snapshot(dl, &packet, &bytes), 1, gone);
        ROW("glcv_delta_read_reference", "delta", NOCTX, glcv_delta_read_reference(dl, &out), 1, gone);
        ROW("glcv_delta_timings", "delta", NOCTX, glcv_delta_timings(dl, t, 8, &count, 1), count == 7, gone);
        glcv_delta_destroy(&dl);
    }

    /* Texture inputs of CPU objects: the texture cannot be read without a context. */
    const char *needs = "context";
    glcv_rect all = {0, 0, W, H};
    glcv_track_hist hist;
    double r = 0;
    packet = SENTINEL;
    bytes = 5;
    ROW("glcv_segment_mask_texture", "seg (CPU)", GLCV_OK, glcv_segment_mask_texture(f->seg) == 0 ? GLCV_OK : NOCTX, 1,
        needs);
    ROW("glcv_segment_set_background_texture", "texture", NOCTX, glcv_segment_set_background_texture(f->seg, 1), 1,
        needs);
    ROW("glcv_segment_frame_texture", "texture", NOCTX, glcv_segment_frame_texture(f->seg, 1, 1), 1, needs);
    ROW("glcv_segment_frames_texture", "texture", NOCTX, glcv_segment_frames_texture(f->seg, 1, 1), 1, needs);
    ROW("glcv_bgsub_frames_texture", "texture", NOCTX, glcv_bgsub_frames_texture(f->bgsub, 1, 1), 1, needs);
    ROW("glcv_delta_encode_texture", "frame", NOCTX, glcv_delta_encode_texture(f->delta, 1, 0, 0, &packet, &bytes),
        packet == NULL && bytes == 0, needs);
    ROW("glcv_match_set_template_texture", "texture", NOCTX, glcv_match_set_template_texture(f->match, 1, 4, 4, NULL),
        1, needs);
    ROW("glcv_match_image_texture", "texture", NOCTX, glcv_match_image_texture(f->match, 1), 1, needs);
    ROW("glcv_match_map_texture", "match", GLCV_OK, glcv_match_map_texture(f->match) == 0 ? GLCV_OK : NOCTX, 1, needs);
    ROW("glcv_correlate_set_reference_texture", "texture", NOCTX, glcv_correlate_set_reference_texture(f->correlate, 1),
        1, needs);
    ROW("glcv_correlate_textures", "textures", NOCTX, glcv_correlate_textures(f->correlate, (unsigned[]){1}, 1, &r), 1,
        needs);
    ROW("glcv_track_hist_compute_texture", "frame", NOCTX, glcv_track_hist_compute_texture(f->track, 1, 0, all, &hist),
        1, needs);
    ROW("glcv_track_frame_texture", "frame", NOCTX, glcv_track_frame_texture(f->track, 1, 0), 1, needs);
    ROW("glcv_track_frames_texture", "frames", NOCTX, glcv_track_frames_texture(f->track, 1, 0), 1, needs);

    /* A new context: the names the CPU objects made in the destroyed one may now be the caller's
     * textures. They must not be returned, written or deleted. */
    CHECK_OK(glcv_context_create(&cp, &ctx));
    enum { MINE = 256 }; /* more names than the destroyed context had given out */
    unsigned int mine[MINE];
    uint8_t px[4 * 4] = {7};
    for (int i = 0; i < MINE; i++)
        mine[i] = test_texture_make(GL_R8, GL_RED, 4, 4, px);
    unsigned int mask_tex = glcv_segment_mask_texture(f->seg), map_tex = glcv_match_map_texture(f->match);
    int touched = 0;
    for (int i = 0; i < MINE; i++) {
        GLint w = 0;
        glBindTexture(GL_TEXTURE_2D, mine[i]);
        glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_WIDTH, &w);
        glBindTexture(GL_TEXTURE_2D, 0);
        touched += mask_tex == mine[i] || map_tex == mine[i] || w != 4;
    }
    ROW("glcv_segment_mask_texture, glcv_match_map_texture", "(a new context)", GLCV_OK,
        touched == 0 && mask_tex != 0 && map_tex != 0 ? GLCV_OK : GLCV_ERROR_GL, 1, NULL);
    CHECK(touched == 0 && mask_tex != 0 && map_tex != 0,
          "%d of the caller's textures returned or changed; made %u, %u in the new context", touched, mask_tex,
          map_tex);
    glDeleteTextures(MINE, mine);
    glcv_context_destroy(&ctx);

    /* GL engines asked for with no context */
    glcv_segment *s2 = SENTINEL;
    ROW("glcv_segment_create", "engine", NOCTX,
        glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_FRAGMENT,
                                                 .logger = f->lg),
                            &s2),
        s2 == NULL, needs);
    glcv_bgsub *b2 = SENTINEL;
    ROW("glcv_bgsub_create", "engine", NOCTX,
        glcv_bgsub_create(&GLCV_BGSUB_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_COMPUTE, .logger = f->lg),
                          &b2),
        b2 == NULL, needs);
    glcv_delta *d2 = SENTINEL;
    ROW("glcv_delta_create", "engine", NOCTX,
        glcv_delta_create(&GLCV_DELTA_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_FRAGMENT, .logger = f->lg),
                          &d2),
        d2 == NULL, needs);
}

int main(void)
{
    fixture f;
    fixture_make(&f);
    null_pointers(&f);
    small_sizes(&f);
    huge_sizes(&f);
    short_strides(&f);
    non_finite(&f);
    bad_enums(&f);
    no_context(&f);
    fixture_free(&f);
    remove("x.png");
    remove("x.hist");
    printf("%d rows\n", rows);
    return test_finish("test_contracts");
}
