/* Several streams in one segmenter: every stream's masks, noise factors and learned rule values
 * are exactly those a one-stream segmenter of the same engine gives on that stream's frames alone
 * - after learning and calibrating per stream, through host frames of mixed formats and strides,
 * through mapped frames, after set_backgrounds and setters - and the one-stream calls, wrong
 * counts and calls out of order are refused. The argument is the engine under test (default
 * fragment; compute, cpu); "compute multipass" runs the MRF one dispatch per substep. */
#include "testutil.h"

#include "segment_internal.h"

#include <string.h>

#define STREAMS 3
#define LEARN 10
#define RUN 8
#define FRAMES (LEARN + RUN)

static int W = 61, H = 45; /* odd sizes: partial blocks, words and tiles */
static int multipass;      /* compute: one dispatch per MRF substep instead of the tiled kernel */

/* Stream i's frames: its own scene, seed and noise level (so each calibrates differently). */
static glcv_image frames[STREAMS][FRAMES];

static void make_frames(void)
{
    static const float sigma[STREAMS] = {1.0f, 6.0f, 14.0f};
    for (int i = 0; i < STREAMS; i++) {
        glcv_synth *synth = NULL;
        CHECK_OK(glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = W, .height = H, .frames = FRAMES + LEARN,
                                                      .noise_sigma = sigma[i], .seed = (uint32_t)(7 + 13 * i),
                                                      .objects = 2 + i),
                                   &synth));
        for (int f = 0; f < FRAMES; f++) {
            /* mixed formats and strides across the streams */
            glcv_pixel_format fmt = i == 0 ? GLCV_PIXEL_RGB8 : i == 1 ? GLCV_PIXEL_RGBA8 : GLCV_PIXEL_RGB8;
            size_t stride = i == 2 ? (size_t)W * 3 + 5 : 0;
            frames[i][f] = test_image_make(W, H, fmt, stride);
            /* learning frames come from the start of the sequence, the segmented ones later */
            CHECK_OK(glcv_synth_frame(synth, f < LEARN ? f : f + LEARN, &frames[i][f], NULL));
        }
        glcv_synth_destroy(&synth);
    }
}

static glcv_segment *make(glcv_engine_mode mode, int streams)
{
    glcv_segment *s = NULL;
    CHECK_OK(glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = W, .height = H, .engine = mode, .streams = streams,
                                                      .logger = test_logger()),
                                 &s));
    if (s && multipass)
        CHECK_OK(glcv_segment_use_multipass(s));
    if (s)
        test_segment_on_path(s, mode, multipass);
    return s;
}

/* Stream i's mask from the batch against the one-stream segmenter's; returns the differences. */
static int compare_masks(glcv_segment *batch, glcv_segment *const *single, const char *what, int frame)
{
    glcv_image got[STREAMS], want = test_image_make(W, H, GLCV_PIXEL_GRAY8, 0);
    for (int i = 0; i < STREAMS; i++)
        got[i] = test_image_make(W, H, i == 1 ? GLCV_PIXEL_RGBA8 : GLCV_PIXEL_GRAY8, i == 2 ? (size_t)W + 3 : 0);
    glcv_image mapped[STREAMS];
    CHECK_OK(glcv_segment_map_masks(batch, mapped, STREAMS));
    int bad = 0, on = 0, bad_mapped = 0;
    for (int i = 0; i < STREAMS; i++) /* the mapped masks, as they are now */
        for (int j = 0; mapped[i].data && j < W * H; j++)
            bad_mapped += mapped[i].data[(size_t)(j / W) * mapped[i].stride + (size_t)(j % W)] != 0 &&
                          mapped[i].data[(size_t)(j / W) * mapped[i].stride + (size_t)(j % W)] != 255;
    CHECK_OK(glcv_segment_read_masks(batch, got, STREAMS));
    for (int i = 0; i < STREAMS; i++) {
        CHECK_OK(glcv_segment_read_mask(single[i], &want));
        glcv_image again[STREAMS];
        CHECK_OK(glcv_segment_map_masks(batch, again, STREAMS));
        for (int j = 0; again[i].data && j < W * H; j++)
            bad_mapped += again[i].data[j] != want.data[j];
        int bpp = glcv_pixel_format_size(got[i].format);
        size_t stride = got[i].stride ? got[i].stride : (size_t)W * (size_t)bpp;
        for (int y = 0; y < H; y++) {
            for (int x = 0; x < W; x++) {
                uint8_t g = got[i].data[(size_t)y * stride + (size_t)x * (size_t)bpp], w = want.data[y * W + x];
                on += w != 0;
                if (g != w && bad++ < 5)
                    fprintf(stderr, "  %s, frame %d, stream %d: mask (%d, %d) is %d, alone %d\n", what, frame, i, x,
                            y, g, w);
            }
        }
        test_image_release(&got[i]);
    }
    test_image_release(&want);
    CHECK(bad == 0, "%s, frame %d: %d mask pixels differ from the streams run alone", what, frame, bad);
    CHECK(bad_mapped == 0, "%s, frame %d: %d mapped mask bytes differ from the streams run alone", what, frame,
          bad_mapped);
    CHECK(on > 0, "%s, frame %d: no foreground at all (the scene should have moving objects)", what, frame);
    return bad;
}

/* Every stream's noise factors from the batch (into k, W * H * STREAMS) against the one-stream
 * segmenters'. */
static void compare_noise(glcv_segment *batch, glcv_segment *const *single, const char *name, const char *when,
                          float *k)
{
    float *k1 = malloc((size_t)W * (size_t)H * sizeof *k1);
    CHECK_OK(glcv_segment_read_noise(batch, k));
    int bad = 0;
    for (int i = 0; i < STREAMS && k1; i++) {
        CHECK_OK(glcv_segment_read_noise(single[i], k1));
        for (int j = 0; j < W * H; j++)
            if (k[W * H * i + j] != k1[j] && bad++ < 3)
                fprintf(stderr, "  %s, %s: stream %d noise factor %d is %g, alone %g\n", name, when, i, j,
                        (double)k[W * H * i + j], (double)k1[j]);
    }
    CHECK(bad == 0, "%s, %s: %d noise factors differ from the streams alone", name, when, bad);
    free(k1);
}

/* per_stream: each stream learns through glcv_segment_learn_add_stream from a number of frames of
 * its own (as cameras that start late, or files of different lengths), else all through
 * glcv_segment_learn_add_frames. */
static void test_learned(glcv_engine_mode mode, const char *name, int per_stream)
{
    glcv_segment *batch = make(mode, STREAMS), *single[STREAMS] = {0};
    if (!batch)
        return;
    for (int i = 0; i < STREAMS; i++)
        single[i] = make(mode, 1);
    /* compute's tiled kernel writes the masks to the host itself when the width allows words */
    int to_host = mode == GLCV_ENGINE_COMPUTE && !multipass && W % 4 == 0 && epoxy_gl_version() >= 44;
    CHECK(glcv_segment_masks_to_host(batch) == to_host, "%s %dx%d: masks written to the host %d, expected %d", name,
          W, H, glcv_segment_masks_to_host(batch), to_host);
    CHECK_OK(glcv_segment_learn_begin(batch));
    for (int i = 0; i < STREAMS; i++)
        CHECK_OK(glcv_segment_learn_begin(single[i]));
    for (int f = 0; f < LEARN; f++) {
        glcv_image set[STREAMS];
        for (int i = 0; i < STREAMS; i++) {
            set[i] = frames[i][f];
            if (per_stream && f >= LEARN - 3 * i)
                continue; /* stream i learns from its first LEARN - 3i frames */
            CHECK_OK(glcv_segment_learn_add(single[i], &frames[i][f]));
            if (per_stream)
                CHECK_OK(glcv_segment_learn_add_stream(batch, i, &frames[i][f]));
        }
        if (!per_stream)
            CHECK_OK(glcv_segment_learn_add_frames(batch, set, STREAMS));
    }
    CHECK_OK(glcv_segment_learn_end(batch));
    for (int i = 0; i < STREAMS; i++)
        CHECK_OK(glcv_segment_learn_end(single[i]));

    /* each stream calibrated on its own frames: different noise, different rule values */
    glcv_segment_params p0, p2;
    CHECK_OK(glcv_segment_get_params(single[0], &p0));
    CHECK_OK(glcv_segment_get_params(single[2], &p2));
    CHECK(p2.ts > 1.5f * p0.ts, "%s: stream 2 (noisier) calibrated Ts %g, stream 0 %g: the test needs them apart",
          name, p2.ts, p0.ts);
    glcv_image bgs[STREAMS], bg1 = test_image_make(W, H, GLCV_PIXEL_RGB8, 0);
    for (int i = 0; i < STREAMS; i++)
        bgs[i] = test_image_make(W, H, i == 1 ? GLCV_PIXEL_RGBA8 : GLCV_PIXEL_RGB8, 0);
    CHECK_OK(glcv_segment_read_backgrounds(batch, bgs, STREAMS));
    for (int i = 0; i < STREAMS; i++) {
        glcv_segment_params got, want;
        CHECK_OK(glcv_segment_get_stream_params(batch, i, &got));
        CHECK_OK(glcv_segment_get_params(single[i], &want));
        CHECK(got.ts == want.ts && got.odc == want.odc && got.b1 == want.b1 && got.b2 == want.b2,
              "%s: stream %d's rule Ts %g Odc %g B1 %g B2 %g, alone Ts %g Odc %g B1 %g B2 %g", name, i, got.ts,
              got.odc, got.b1, got.b2, want.ts, want.odc, want.b1, want.b2);
        CHECK_OK(glcv_segment_read_background(single[i], &bg1));
        int bpp = glcv_pixel_format_size(bgs[i].format), differ = 0;
        for (int j = 0; j < W * H; j++)
            for (int c = 0; c < 3; c++)
                differ += bgs[i].data[j * bpp + c] != bg1.data[j * 3 + c];
        CHECK(differ == 0, "%s: stream %d's background differs from the one learned alone in %d bytes", name, i,
              differ);
        test_image_release(&bgs[i]);
    }
    test_image_release(&bg1);
    glcv_segment_params none;
    CHECK_STATUS(glcv_segment_get_stream_params(batch, STREAMS, &none), GLCV_ERROR_INVALID_ARGUMENT);
    size_t n = (size_t)W * (size_t)H * STREAMS;
    float *learned_k = malloc(n * sizeof *learned_k), *k = malloc(n * sizeof *k);
    if (!learned_k || !k)
        return;
    compare_noise(batch, single, name, "learned", learned_k);

    /* host frames, then mapped frames (RGBA8) */
    for (int f = LEARN; f < FRAMES; f++) {
        int mapped = f >= LEARN + RUN / 2;
        if (mapped) {
            glcv_image m[STREAMS];
            CHECK_OK(glcv_segment_map_frames(batch, GLCV_PIXEL_RGBA8, m, STREAMS));
            for (int i = 0; i < STREAMS && m[i].data; i++)
                CHECK_OK(glcv_image_convert(&frames[i][f], &m[i]));
            CHECK_OK(glcv_segment_frames_mapped(batch, 0));
        } else {
            glcv_image set[STREAMS];
            for (int i = 0; i < STREAMS; i++)
                set[i] = frames[i][f];
            CHECK_OK(glcv_segment_frames(batch, set, STREAMS, 0));
        }
        for (int i = 0; i < STREAMS; i++)
            CHECK_OK(glcv_segment_frame(single[i], &frames[i][f], 0));
        compare_masks(batch, single, mapped ? "mapped frames" : "host frames", f);
    }
    /* the noise model ran in every stream, as in each stream alone */
    compare_noise(batch, single, name, "after the frames", k);
    int changed = 0;
    for (size_t j = 0; j < n; j++)
        changed += k[j] != learned_k[j];
    CHECK(changed > 0, "%s: no noise factor changed in %d frames: the noise model did not run", name, FRAMES - LEARN);
    free(learned_k);
    free(k);
    if (mode != GLCV_ENGINE_CPU) {
        unsigned int t = glcv_segment_mask_texture(batch);
        CHECK(t != 0, "%s: no mask texture", name);
        GLint layers = 0;
        glBindTexture(GL_TEXTURE_2D_ARRAY, t);
        glGetTexLevelParameteriv(GL_TEXTURE_2D_ARRAY, 0, GL_TEXTURE_DEPTH, &layers);
        glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
        CHECK(glGetError() == GL_NO_ERROR && layers == STREAMS, "%s: mask texture has %d layers, expected %d", name,
              layers, STREAMS);
    } else {
        CHECK(glcv_segment_mask_texture(batch) == 0, "cpu: several streams have no mask texture");
    }
    glcv_segment_destroy(&batch);
    for (int i = 0; i < STREAMS; i++)
        glcv_segment_destroy(&single[i]);
}

/* Given backgrounds and the setters, applied to every stream. */
static void test_set_backgrounds(glcv_engine_mode mode)
{
    glcv_segment *batch = make(mode, STREAMS), *single[STREAMS] = {0};
    if (!batch)
        return;
    glcv_image set[STREAMS];
    for (int i = 0; i < STREAMS; i++) {
        single[i] = make(mode, 1);
        set[i] = frames[i][0];
        CHECK_OK(glcv_segment_set_background(single[i], &frames[i][0]));
        CHECK_OK(glcv_segment_set_iterations(single[i], 3));
        CHECK_OK(glcv_segment_set_ts(single[i], 2000.0f));
        CHECK_OK(glcv_segment_set_seed(single[i], 99));
    }
    CHECK_OK(glcv_segment_set_backgrounds(batch, set, STREAMS));
    CHECK_OK(glcv_segment_set_iterations(batch, 3));
    CHECK_OK(glcv_segment_set_ts(batch, 2000.0f));
    CHECK_OK(glcv_segment_set_seed(batch, 99));
    for (int f = LEARN; f < LEARN + 3; f++) {
        for (int i = 0; i < STREAMS; i++) {
            set[i] = frames[i][f];
            CHECK_OK(glcv_segment_frame(single[i], &frames[i][f], 0));
        }
        CHECK_OK(glcv_segment_frames(batch, set, STREAMS, 1));
        compare_masks(batch, single, "set backgrounds", f);
    }
    /* reset clears every stream's temporal prior */
    CHECK_OK(glcv_segment_reset(batch));
    for (int i = 0; i < STREAMS; i++) {
        CHECK_OK(glcv_segment_reset(single[i]));
        set[i] = frames[i][LEARN + 3];
        CHECK_OK(glcv_segment_frame(single[i], &frames[i][LEARN + 3], 0));
    }
    CHECK_OK(glcv_segment_frames(batch, set, STREAMS, 0));
    compare_masks(batch, single, "after reset", LEARN + 3);
    glcv_segment_destroy(&batch);
    for (int i = 0; i < STREAMS; i++)
        glcv_segment_destroy(&single[i]);
}

static void test_errors(glcv_engine_mode mode)
{
    glcv_segment *s = NULL;
    glcv_segment_params q = {.width = W, .height = H, .engine = mode};
    q.streams = 2049;
    CHECK_STATUS(glcv_segment_create(&q, &s), GLCV_ERROR_INVALID_ARGUMENT);
    q.streams = -1;
    CHECK_STATUS(glcv_segment_create(&q, &s), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(s == NULL, "a failed create leaves *out NULL");
    s = make(mode, STREAMS);
    if (!s)
        return;
    glcv_image set[STREAMS], out[STREAMS], one = test_image_make(W, H, GLCV_PIXEL_GRAY8, 0);
    for (int i = 0; i < STREAMS; i++) {
        set[i] = frames[i][LEARN];
        out[i] = test_image_make(W, H, GLCV_PIXEL_GRAY8, 0);
    }
    /* out of order */
    CHECK_STATUS(glcv_segment_frames(s, set, STREAMS, 0), GLCV_ERROR_STATE);
    CHECK_STATUS(glcv_segment_read_masks(s, out, STREAMS), GLCV_ERROR_STATE);
    CHECK_STATUS(glcv_segment_map_masks(s, out, STREAMS), GLCV_ERROR_STATE);
    CHECK_STATUS(glcv_segment_map_masks(s, out, 1), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_frames_mapped(s, 0), GLCV_ERROR_STATE);
    CHECK_STATUS(glcv_segment_learn_add_frames(s, set, STREAMS), GLCV_ERROR_STATE);
    /* one-stream calls */
    CHECK_STATUS(glcv_segment_set_background(s, &frames[0][0]), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_frame(s, &frames[0][0], 0), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_map_frame(s, GLCV_PIXEL_RGB8, &one), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_read_mask(s, &one), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_calibrate_begin(s), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_read_thresholds(s, NULL, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    /* wrong counts, NULL, a wrong size */
    CHECK_STATUS(glcv_segment_set_backgrounds(s, set, STREAMS - 1), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_set_backgrounds(s, NULL, STREAMS), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_image mapped[STREAMS + 1];
    CHECK_STATUS(glcv_segment_map_frames(s, GLCV_PIXEL_RGB8, mapped, STREAMS + 1), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_image small = test_image_make(W - 1, H, GLCV_PIXEL_RGB8, 0);
    glcv_image bad_set[STREAMS] = {set[0], small, set[2]};
    CHECK_STATUS(glcv_segment_set_backgrounds(s, bad_set, STREAMS), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_STATUS(glcv_segment_frames(s, set, STREAMS, 0), GLCV_ERROR_STATE); /* nothing was set */
    CHECK_OK(glcv_segment_set_backgrounds(s, set, STREAMS));
    CHECK_STATUS(glcv_segment_frames(s, bad_set, STREAMS, 0), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_STATUS(glcv_segment_frames(s, set, 0, 0), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_OK(glcv_segment_frames(s, set, STREAMS, 0));
    glcv_image bad_out[STREAMS] = {out[0], out[1], small};
    CHECK_STATUS(glcv_segment_read_masks(s, bad_out, STREAMS), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_OK(glcv_segment_read_masks(s, out, STREAMS));
    /* learning without frames, and learning again after */
    CHECK_OK(glcv_segment_learn_begin(s));
    CHECK_STATUS(glcv_segment_frames(s, set, STREAMS, 0), GLCV_ERROR_STATE);
    CHECK_STATUS(glcv_segment_learn_end(s), GLCV_ERROR_STATE);
    /* one stream at a time: a stream out of range, a wrong size, not learning, a stream with none */
    CHECK_STATUS(glcv_segment_learn_add_stream(s, 0, &set[0]), GLCV_ERROR_STATE);
    CHECK_OK(glcv_segment_learn_begin(s));
    CHECK_STATUS(glcv_segment_learn_add_stream(s, STREAMS, &set[0]), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_learn_add_stream(s, -1, &set[0]), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_learn_add_stream(s, 0, &small), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_STATUS(glcv_segment_learn_add_stream(s, 0, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_OK(glcv_segment_learn_add_stream(s, 0, &set[0]));
    CHECK_STATUS(glcv_segment_learn_end(s), GLCV_ERROR_STATE); /* streams 1.. have no frame */
    /* that ended the learning: the backgrounds set before are in use, the masks as before */
    CHECK_STATUS(glcv_segment_learn_add_frames(s, set, STREAMS), GLCV_ERROR_STATE);
    glcv_image again[STREAMS];
    for (int i = 0; i < STREAMS; i++)
        again[i] = test_image_make(W, H, GLCV_PIXEL_GRAY8, 0);
    CHECK_OK(glcv_segment_frames(s, set, STREAMS, 0));
    CHECK_OK(glcv_segment_read_masks(s, again, STREAMS));
    for (int i = 0; i < STREAMS; i++) {
        CHECK(memcmp(again[i].data, out[i].data, (size_t)W * H) == 0,
              "stream %d: the mask changed through a learning ended with no frame", i);
        test_image_release(&again[i]);
    }
    CHECK_OK(glcv_segment_learn_begin(s));
    CHECK_OK(glcv_segment_learn_add_frames(s, set, STREAMS));
    CHECK_OK(glcv_segment_learn_end(s));
    CHECK_OK(glcv_segment_frames(s, set, STREAMS, 0));
    test_image_release(&small);
    test_image_release(&one);
    for (int i = 0; i < STREAMS; i++)
        test_image_release(&out[i]);
    glcv_segment_destroy(&s);
    /* one stream through the calls for several: the same as the one-stream calls */
    s = make(mode, 1);
    CHECK_OK(glcv_segment_set_backgrounds(s, set, 1));
    CHECK_OK(glcv_segment_frames(s, set, 1, 0));
    glcv_image m = test_image_make(W, H, GLCV_PIXEL_GRAY8, 0);
    CHECK_OK(glcv_segment_read_masks(s, &m, 1));
    test_image_release(&m);
    glcv_segment_destroy(&s);
}

int main(int argc, char **argv)
{
    const char *name = argc > 1 ? argv[1] : "fragment";
    glcv_engine_mode mode;
    if (glcv_engine_mode_parse(name, &mode) != GLCV_OK)
        return 2;
    multipass = argc > 2 && strcmp(argv[2], "multipass") == 0 && mode == GLCV_ENGINE_COMPUTE;
    glcv_context *ctx = NULL;
    if (mode != GLCV_ENGINE_CPU)
        ctx = test_context_or_skip(mode == GLCV_ENGINE_COMPUTE ? 43 : 33);
    make_frames();
    test_learned(mode, name, 0);
    test_learned(mode, name, 1);
    test_set_backgrounds(mode);
    test_errors(mode);
    /* a larger size: several work groups of the tiled kernel across and down */
    for (int i = 0; i < STREAMS; i++)
        for (int f = 0; f < FRAMES; f++)
            test_image_release(&frames[i][f]);
    W = 200;
    H = 264;
    make_frames();
    test_learned(mode, name, 0);
    for (int i = 0; i < STREAMS; i++)
        for (int f = 0; f < FRAMES; f++)
            test_image_release(&frames[i][f]);
    glcv_context_destroy(&ctx);
    return test_finish("test_segment_batch");
}
