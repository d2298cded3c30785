/* A tracker of several streams (glcv_track_frames, host images): for every object, exactly the
 * results a tracker of one stream gets on that stream's frames alone with the same objects added
 * in the same order - moments, windows, boxes, iterations, lost flags and distances, bit for bit -
 * over SCENE_FRAMES frames of SCENE_STREAMS cameras (objects in some streams, none in one,
 * several in another; added late, removed, an id reused across streams; an object that vanishes
 * and is found again by the search of its own stream's whole frame), without masks, with masks,
 * and with BGRA8 frames and masks of padded rows. Then the arguments and states that must fail.
 *
 * Argument "cpu" (default): the CPU engine. "cuda": the CUDA engine, against the same references
 * and against a CPU tracker of the same streams (skipped, exit 77, without a CUDA device). */
#include "testutil.h"
#include "test_track_scene.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* How the frames of a run are given. */
typedef enum input_kind { PLAIN, MASKED, BGRA_PADDED } input_kind;

static const char *const kind_names[] = {"no masks", "masks", "BGRA8 frames, padded rows, masks"};

/* One run over the scene: the batched trackers (engines[0..n-1]) against one CPU tracker per
 * stream. Returns the differing results. */
static int run(const glcv_engine_mode *engines, int n, input_kind kind)
{
    streams_check c;
    glcv_track *batched[2] = {NULL, NULL};
    glcv_image rgb[SCENE_STREAMS], masks[SCENE_STREAMS], bgra[SCENE_STREAMS], padded_masks[SCENE_STREAMS];
    for (int s = 0; s < SCENE_STREAMS; s++) {
        rgb[s] = test_image_make(SCENE_W, SCENE_H, GLCV_PIXEL_RGB8, 0);
        masks[s] = test_image_make(SCENE_W, SCENE_H, GLCV_PIXEL_GRAY8, 0);
        bgra[s] = test_image_make(SCENE_W, SCENE_H, GLCV_PIXEL_BGRA8, SCENE_W * 4 + 24);
        padded_masks[s] = test_image_make(SCENE_W, SCENE_H, GLCV_PIXEL_GRAY8, SCENE_W + 13);
    }
    CHECK(streams_check_open(&c, test_logger()), "the reference trackers cannot be made");
    for (int i = 0; i < n; i++) {
        glcv_track_params p = streams_check_params(SCENE_STREAMS, engines[i], test_logger());
        CHECK_OK(glcv_track_create(&p, &batched[i]));
    }
    int differences = 0, recovered = -1;
    const int masked = kind != PLAIN;
    for (int f = 0; f < SCENE_FRAMES && batched[n - 1]; f++) {
        for (int s = 0; s < SCENE_STREAMS; s++) {
            scene_stream_draw(&rgb[s], s, f);
            scene_stream_mask(&masks[s], s, f);
            CHECK_OK(glcv_image_convert(&rgb[s], &bgra[s]));
            CHECK_OK(glcv_image_convert(&masks[s], &padded_masks[s]));
        }
        CHECK(streams_check_objects(&c, batched, n, f, rgb),
              "frame %d: adding or removing objects failed (or the batched trackers gave different ids)", f);
        CHECK(streams_check_refs(&c, rgb, masked ? masks : NULL), "frame %d: a reference failed", f);
        const glcv_image *frames = kind == BGRA_PADDED ? bgra : rgb;
        const glcv_image *m = kind == BGRA_PADDED ? padded_masks : masked ? masks : NULL;
        for (int i = 0; i < n; i++) {
            char what[96];
            snprintf(what, sizeof what, "%s engine, %s", glcv_engine_mode_string(engines[i]), kind_names[kind]);
            CHECK_OK(glcv_track_frames(batched[i], frames, m, SCENE_STREAMS));
            differences += streams_check_compare(&c, batched[i], what, f);
        }
        /* object 2 (stream 2) is gone in frames 12..14 and back elsewhere from 15 on: the search
         * of stream 2's whole frame finds it again */
        glcv_track_result r[SCENE_OBJECTS];
        int count = 0;
        CHECK_OK(glcv_track_results(batched[0], r, SCENE_OBJECTS, &count));
        const glcv_track_result *o2 = streams_find(r, count, c.global_id[2]);
        scene_blob b;
        if (o2 && f >= 15 && recovered < 0 && !o2->lost && scene_object_blob(&scene_objects[2], f, &b) &&
            hypot(o2->cx - b.cx, o2->cy - b.cy) < 3)
            recovered = f;
    }
    printf("%-36s %d streams x %d frames, %d results compared, %d lost, object 2 found again at frame %d: %d "
           "differences\n",
           kind_names[kind], SCENE_STREAMS, SCENE_FRAMES, c.compared, c.lost, recovered, differences);
    CHECK(differences == 0, "%s: %d results differ from the one-stream trackers'", kind_names[kind], differences);
    CHECK(recovered >= 15, "%s: object 2 is back from frame 15 on and never found again", kind_names[kind]);
    for (int i = 0; i < n; i++)
        glcv_track_destroy(&batched[i]);
    streams_check_close(&c);
    for (int s = 0; s < SCENE_STREAMS; s++) {
        test_image_release(&rgb[s]);
        test_image_release(&masks[s]);
        test_image_release(&bgra[s]);
        test_image_release(&padded_masks[s]);
    }
    return differences;
}

/* The arguments and states that must fail, and the calls that must still work, on the CPU engine. */
static void test_api(void)
{
    glcv_track *tr = NULL;
    glcv_track_params p = streams_check_params(-1, GLCV_ENGINE_CPU, test_logger());
    CHECK_STATUS(glcv_track_create(&p, &tr), GLCV_ERROR_INVALID_ARGUMENT);
    p.streams = GLCV_TRACK_MAX_STREAMS + 1;
    CHECK_STATUS(glcv_track_create(&p, &tr), GLCV_ERROR_INVALID_ARGUMENT);
    p.streams = 0; /* default: 1 */
    CHECK_OK(glcv_track_create(&p, &tr));
    glcv_track_params got;
    CHECK_OK(glcv_track_get_params(tr, &got));
    CHECK(got.streams == 1, "streams 0 resolves to %d, expected 1", got.streams);
    glcv_track_destroy(&tr);

    enum { S = 3 };
    p = streams_check_params(S, GLCV_ENGINE_CPU, test_logger());
    p.max_objects = 3;
    CHECK_OK(glcv_track_create(&p, &tr));
    if (!tr)
        return;
    CHECK_OK(glcv_track_get_params(tr, &got));
    CHECK(got.streams == S, "streams %d, expected %d", got.streams, S);
    glcv_image frames[S + 1], masks[S], small = test_image_make(SCENE_W - 1, SCENE_H, GLCV_PIXEL_RGB8, 0);
    glcv_image gray = test_image_make(SCENE_W, SCENE_H, GLCV_PIXEL_GRAY8, 0);
    glcv_image rgba = test_image_make(SCENE_W, SCENE_H, GLCV_PIXEL_RGBA8, 0);
    glcv_image small_mask = test_image_make(SCENE_W, SCENE_H - 1, GLCV_PIXEL_GRAY8, 0);
    for (int s = 0; s < S + 1; s++) {
        frames[s] = test_image_make(SCENE_W, SCENE_H, GLCV_PIXEL_RGB8, 0);
        scene_stream_draw(&frames[s], s, 0);
    }
    for (int s = 0; s < S; s++) {
        masks[s] = test_image_make(SCENE_W, SCENE_H, GLCV_PIXEL_GRAY8, 0);
        scene_stream_mask(&masks[s], s, 0);
    }

    /* objects: stream in range, ids shared by all streams, max_objects over all of them */
    glcv_track_hist *h = calloc(1, sizeof *h);
    CHECK_OK(glcv_track_hist_compute(tr, &frames[2], NULL, scene_object_roi(&scene_objects[1], 0), h));
    int id = 7;
    CHECK_STATUS(glcv_track_add_to_stream(tr, -1, h, (glcv_rect){0, 0, 10, 10}, &id), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(id == -1, "a failed add leaves id %d, expected -1", id);
    CHECK_STATUS(glcv_track_add_to_stream(tr, S, h, (glcv_rect){0, 0, 10, 10}, &id), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_track_add_to_stream(NULL, 0, h, (glcv_rect){0, 0, 10, 10}, &id), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_track_add_to_stream(tr, 0, h, (glcv_rect){0, 0, 10, 10}, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_track_add_to_stream(tr, 0, NULL, (glcv_rect){0, 0, 10, 10}, &id), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_track_add_to_stream(tr, 1, h, (glcv_rect){0, 0, 0, 10}, &id), GLCV_ERROR_INVALID_ARGUMENT);
    int ids[3] = {-1, -1, -1};
    CHECK_OK(glcv_track_add_to_stream(tr, 2, h, scene_object_roi(&scene_objects[1], 0), &ids[0]));
    CHECK_OK(glcv_track_add(tr, h, (glcv_rect){100, 40, 30, 30}, &ids[1]));
    CHECK_OK(glcv_track_add_to_stream(tr, 1, h, (glcv_rect){5, 5, 30, 30}, &ids[2]));
    CHECK(ids[0] == 0 && ids[1] == 1 && ids[2] == 2, "ids %d %d %d, expected 0 1 2 across streams", ids[0], ids[1],
          ids[2]);
    CHECK_STATUS(glcv_track_add_to_stream(tr, 0, h, (glcv_rect){0, 0, 10, 10}, &id), GLCV_ERROR_STATE);

    /* no set yet */
    glcv_track_result r[3], before[3];
    int n = 0;
    CHECK_STATUS(glcv_track_results(tr, r, 3, &n), GLCV_ERROR_STATE);
    /* bad sets: nothing is tracked */
    CHECK_STATUS(glcv_track_frames(NULL, frames, NULL, S), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_track_frames(tr, NULL, NULL, S), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_track_frames(tr, frames, NULL, S - 1), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_track_frames(tr, frames, NULL, S + 1), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_track_frames(tr, frames, NULL, 0), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_track_results(tr, r, 3, &n), GLCV_ERROR_STATE);
    CHECK_OK(glcv_track_frames(tr, frames, masks, S));
    CHECK_OK(glcv_track_results(tr, before, 3, &n));
    CHECK(n == 3 && before[0].stream == 2 && before[1].stream == 0 && before[2].stream == 1,
          "%d results, streams %d %d %d, expected 3 results of streams 2 0 1", n, before[0].stream, before[1].stream,
          before[2].stream);
    CHECK(before[0].lost == 0 && fabs(before[0].cx - 120) < 2 && fabs(before[0].cy - 40) < 2,
          "object 0 (stream 2) at %g,%g, lost %u: expected about 120,40 (its own stream's blob)", (double)before[0].cx,
          (double)before[0].cy, before[0].lost);
    glcv_image bad[S];
    for (int i = 0; i < 6; i++) {
        memcpy(bad, frames, sizeof bad);
        glcv_image bad_masks[S];
        memcpy(bad_masks, masks, sizeof bad_masks);
        glcv_status expect = GLCV_ERROR_INVALID_ARGUMENT;
        const char *what = "";
        switch (i) {
        case 0: bad[1] = small, expect = GLCV_ERROR_SIZE_MISMATCH, what = "a frame of another size"; break;
        case 1: bad_masks[2] = small_mask, expect = GLCV_ERROR_SIZE_MISMATCH, what = "a mask of another size"; break;
        case 2: bad[0] = gray, what = "a GRAY8 frame"; break;
        case 3: bad_masks[1] = rgba, what = "an RGBA8 mask"; break;
        case 4: bad[2] = rgba, what = "frames of two formats"; break;
        default: bad[1].data = NULL, what = "a frame without pixels"; break;
        }
        glcv_status st = glcv_track_frames(tr, bad, bad_masks, S);
        CHECK(st == expect, "a set with %s: '%s', expected '%s'", what, glcv_status_string(st),
              glcv_status_string(expect));
    }
    CHECK_OK(glcv_track_results(tr, r, 3, &n));
    CHECK(n == 3 && memcmp(r, before, sizeof before) == 0, "a failed set changed the results");
    /* the one-frame calls name the set calls */
    CHECK_STATUS(glcv_track_frame(tr, &frames[0], NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_track_frame_texture(tr, 1, 0), GLCV_ERROR_INVALID_ARGUMENT);
    /* no GL context here: NO_CONTEXT, before any GL call */
    CHECK_STATUS(glcv_track_frames_texture(tr, 1, 0), GLCV_ERROR_NO_CONTEXT);
    CHECK_STATUS(glcv_track_frames_texture(tr, 0, 0), GLCV_ERROR_NO_CONTEXT);
    CHECK_STATUS(glcv_track_frames_texture(NULL, 1, 0), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_OK(glcv_track_forget_texture(tr, 1));
    CHECK_OK(glcv_track_results(tr, r, 3, &n));
    CHECK(n == 3 && memcmp(r, before, sizeof before) == 0, "a refused call changed the results");
    /* objects keep their streams through set_window and remove/add */
    CHECK_OK(glcv_track_set_window(tr, ids[0], (glcv_rect){100, 20, 40, 40}));
    CHECK_OK(glcv_track_remove(tr, ids[1]));
    CHECK_OK(glcv_track_add_to_stream(tr, 2, h, (glcv_rect){100, 20, 40, 40}, &id));
    CHECK(id == ids[1], "the freed id %d is given again (got %d)", ids[1], id);
    CHECK_OK(glcv_track_frames(tr, frames, NULL, S));
    CHECK_OK(glcv_track_results(tr, r, 3, &n));
    CHECK(n == 3 && r[0].stream == 2 && r[1].stream == 2 && r[2].stream == 1 &&
              memcmp(&r[0].window, &r[1].window, sizeof r[0].window) == 0 && r[0].m00 == r[1].m00,
          "after remove and add: streams %d %d %d; objects 0 and 1 (both stream 2, same window and histogram) at "
          "%d,%d and %d,%d, m00 %g and %g",
          r[0].stream, r[1].stream, r[2].stream, r[0].window.x, r[0].window.y, r[1].window.x, r[1].window.y, r[0].m00,
          r[1].m00);
    free(h);
    glcv_track_destroy(&tr);

    /* one stream: glcv_track_frames with one frame is glcv_track_frame */
    glcv_track *one = NULL, *two = NULL;
    p = streams_check_params(1, GLCV_ENGINE_CPU, test_logger());
    CHECK_OK(glcv_track_create(&p, &one));
    CHECK_OK(glcv_track_create(&p, &two));
    h = calloc(1, sizeof *h);
    glcv_rect roi = scene_object_roi(&scene_objects[0], 0);
    CHECK_OK(glcv_track_hist_compute(one, &frames[0], NULL, roi, h));
    CHECK_OK(glcv_track_add(one, h, roi, &id));
    CHECK_OK(glcv_track_add_to_stream(two, 0, h, roi, &id));
    CHECK_STATUS(glcv_track_add_to_stream(two, 1, h, roi, &id), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_OK(glcv_track_frame(one, &frames[0], &masks[0]));
    CHECK_OK(glcv_track_frames(two, &frames[0], &masks[0], 1));
    CHECK_STATUS(glcv_track_frames(two, frames, NULL, 2), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_track_result a, b;
    CHECK_OK(glcv_track_results(one, &a, 1, &n));
    CHECK_OK(glcv_track_results(two, &b, 1, &n));
    CHECK(memcmp(&a, &b, sizeof a) == 0 && a.stream == 0,
          "one stream: glcv_track_frames differs from glcv_track_frame (m00 %g and %g)", a.m00, b.m00);
    free(h);
    glcv_track_destroy(&one);
    glcv_track_destroy(&two);

    for (int s = 0; s < S + 1; s++)
        test_image_release(&frames[s]);
    for (int s = 0; s < S; s++)
        test_image_release(&masks[s]);
    test_image_release(&small);
    test_image_release(&gray);
    test_image_release(&rgba);
    test_image_release(&small_mask);
}

int main(int argc, char **argv)
{
    const int cuda = test_mode_cuda(argc, argv);
    glcv_engine_mode engines[2] = {GLCV_ENGINE_CPU, GLCV_ENGINE_CUDA};
    if (cuda) {
        glcv_cuda_info info;
        test_cuda_or_skip(&info);
    }
    int differences = 0;
    for (int kind = PLAIN; kind <= BGRA_PADDED; kind++)
        differences += run(engines, cuda ? 2 : 1, (input_kind)kind);
    printf("%d differing results in all\n", differences);
    if (!cuda)
        test_api();
    char name[64];
    snprintf(name, sizeof name, "test_track_streams (%s)", cuda ? "cuda" : "cpu");
    return test_finish(name);
}
