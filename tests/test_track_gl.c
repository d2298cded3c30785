/* The tracker's texture inputs: frames and masks given as GL textures give exactly the results
 * of the same pixels given as host images; the host's GL bindings survive; textures updated,
 * re-specified with another size or format, forgotten and deleted keep giving the right
 * results. Argument "cpu" (default): the CPU engine, and without a CUDA device the AUTO engine's
 * fallback to it; "cuda": the CUDA engine and AUTO on it, the GL context on the CUDA device
 * (registered textures read through texture objects, or the pixel-buffer fallback for other
 * formats). Exits 77 without a GL context, and with "cuda" without a CUDA device or when the GL
 * context is not on it. */
#include "testutil.h"
#include "test_track_scene.h"
#include "track_internal.h"

#include <epoxy/gl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { W = 320, H = 240, FRAMES = 12, OBJECTS = 3 };

/* The engine a tracker asked for `engine` must run on: AUTO is CUDA when a device can be had. */
static glcv_engine_mode expected_engine(glcv_engine_mode engine)
{
    if (engine != GLCV_ENGINE_AUTO)
        return engine;
    return glcv_cuda_available(0) ? GLCV_ENGINE_CUDA : GLCV_ENGINE_CPU;
}

/* The texture mask holds 0, 100 and 200 (red 0, 0.39, 0.78: only 200 is foreground); the host
 * mask the same decisions as 0 and 255. */
static void scene(int f, glcv_image *rgb, glcv_image *mask, uint8_t *tex_mask)
{
    scene_blob blobs[OBJECTS] = {
        {60 + 5.0 * f, 60 + 2.0 * f, 14, 10, 20.0 * f, 0, 250, 60, 40},
        {250 - 4.0 * f, 70 + 3.0 * f, 10, 16, 0, 1, 40, 200, 230},
        {160, 180 - 2.0 * f, 18, 12, 45, 0, 230, 220, 40},
    };
    scene_draw(rgb, blobs, OBJECTS, (uint32_t)f);
    /* the mask hides the bottom-right quarter and a stripe through the first blob */
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            size_t i = (size_t)y * W + (size_t)x;
            uint8_t v = (x >= W / 2 && y >= H / 2) || (y % 17 == 0) ? 0 : (x + y) % 11 == 0 ? 100 : 200;
            tex_mask[i] = v;
            mask->data[i] = v >= 128 ? 255 : 0;
        }
}

/* A run's frame images and its two trackers: `ref` on the CPU engine, for host inputs (the
 * reference), and `tex` on the engine under test, for texture inputs. */
typedef struct pair {
    glcv_image rgb, rgba, mask;
    glcv_track *ref, *tex;
    glcv_engine_mode engine; /* what `tex` runs on */
} pair;

/* Makes the images and the trackers and checks the engine `tex` resolved to; 0 when a tracker
 * could not be made. */
static int pair_open(pair *pr, glcv_engine_mode engine)
{
    memset(pr, 0, sizeof *pr);
    CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_RGB8, &pr->rgb));
    CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_RGBA8, &pr->rgba));
    CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_GRAY8, &pr->mask));
    glcv_track_params p = GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = W, .height = H, .engine = GLCV_ENGINE_CPU,
                                            .logger = test_logger());
    CHECK_OK(glcv_track_create(&p, &pr->ref));
    p.engine = engine;
    CHECK_OK(glcv_track_create(&p, &pr->tex));
    if (!pr->ref || !pr->tex)
        return 0;
    glcv_track_params got;
    CHECK_OK(glcv_track_get_params(pr->tex, &got));
    pr->engine = got.engine;
    CHECK(got.engine == expected_engine(engine), "engine %s resolved to %s, expected %s", glcv_engine_mode_string(engine),
          glcv_engine_mode_string(got.engine), glcv_engine_mode_string(expected_engine(engine)));
    return 1;
}

static void pair_close(pair *pr)
{
    glcv_track_destroy(&pr->tex);
    glcv_track_destroy(&pr->ref);
    glcv_image_free(&pr->rgb);
    glcv_image_free(&pr->rgba);
    glcv_image_free(&pr->mask);
}

/* Runs the same sequence through host inputs (reference: CPU engine) and texture inputs on
 * `engine`, comparing every result. */
static void compare(glcv_engine_mode engine, int use_mask)
{
    pair pr;
    if (!pair_open(&pr, engine))
        return;
    glcv_track *ref = pr.ref, *tex = pr.tex;
    printf("texture inputs on the %s engine%s\n", glcv_engine_mode_string(pr.engine), use_mask ? ", masked" : "");

    /* the host's bindings, which the texture path must leave as they were */
    GLuint host_fbo = 0, host_pbo = 0;
    glGenFramebuffers(1, &host_fbo);
    glGenBuffers(1, &host_pbo);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, host_fbo);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, host_pbo);
    glPixelStorei(GL_PACK_ALIGNMENT, 8);

    glcv_track_hist *h = calloc(2, sizeof *h);
    uint8_t *tex_mask = malloc((size_t)W * H);
    int mismatches = 0;
    for (int f = 0; f < FRAMES; f++) {
        scene(f, &pr.rgb, &pr.mask, tex_mask);
        CHECK_OK(glcv_image_convert(&pr.rgb, &pr.rgba));
        GLuint frame_tex = test_texture_make(GL_RGBA8, GL_RGBA, W, H, pr.rgba.data);
        GLuint mask_tex = test_texture_make(GL_R8, GL_RED, W, H, tex_mask);
        if (f == 0) {
            const glcv_rect roi[OBJECTS] = {{44, 48, 32, 24}, {238, 52, 24, 36}, {140, 166, 40, 28}};
            for (int k = 0; k < OBJECTS; k++) {
                int id_ref = -1, id_tex = -1;
                CHECK_OK(glcv_track_hist_compute(ref, &pr.rgb, use_mask ? &pr.mask : NULL, roi[k], &h[0]));
                CHECK_OK(glcv_track_hist_compute_texture(tex, frame_tex, use_mask ? mask_tex : 0, roi[k], &h[1]));
                CHECK(memcmp(h[0].value, h[1].value, sizeof h[0].value) == 0,
                      "object %d: the histogram from textures differs from the host one", k);
                CHECK_OK(glcv_track_add(ref, &h[0], roi[k], &id_ref));
                CHECK_OK(glcv_track_add(tex, &h[1], roi[k], &id_tex));
            }
        }
        CHECK_OK(glcv_track_frame(ref, &pr.rgb, use_mask ? &pr.mask : NULL));
        CHECK_OK(glcv_track_frame_texture(tex, frame_tex, use_mask ? mask_tex : 0));
        /* the textures may go once forgotten */
        if (engine == GLCV_ENGINE_CUDA && f == 0) {
            glcv_track_texture_stats ts;
            CHECK_OK(glcv_track_texture_stats_get(tex, &ts));
            CHECK(ts.direct == 1 && ts.registered == 1 + use_mask,
                  "CUDA engine: RGBA8/R8 textures not read directly (direct %d, registered %d)", ts.direct,
                  ts.registered);
        }
        CHECK_OK(glcv_track_forget_texture(tex, frame_tex));
        CHECK_OK(glcv_track_forget_texture(tex, mask_tex));
        glDeleteTextures(1, &frame_tex);
        glDeleteTextures(1, &mask_tex);
        glcv_track_result a[OBJECTS], b[OBJECTS];
        int na = 0, nb = 0;
        CHECK_OK(glcv_track_results(ref, a, OBJECTS, &na));
        CHECK_OK(glcv_track_results(tex, b, OBJECTS, &nb));
        CHECK(na == OBJECTS && nb == OBJECTS, "%d and %d results", na, nb);
        for (int k = 0; k < na && k < nb; k++) {
            if (memcmp(&a[k], &b[k], sizeof a[k]) != 0) {
                mismatches++;
                CHECK(0, "frame %d object %d: host %g,%g %gx%g m00 %g it %d lost %u; texture %g,%g %gx%g m00 %g it %d "
                         "lost %u",
                      f, k, (double)a[k].cx, (double)a[k].cy, (double)a[k].width, (double)a[k].height, a[k].m00,
                      a[k].iterations, a[k].lost, (double)b[k].cx, (double)b[k].cy, (double)b[k].width,
                      (double)b[k].height, b[k].m00, b[k].iterations, b[k].lost);
            }
        }
    }
    GLint fbo = 0, pbo = 0, align = 0;
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &fbo);
    glGetIntegerv(GL_PIXEL_PACK_BUFFER_BINDING, &pbo);
    glGetIntegerv(GL_PACK_ALIGNMENT, &align);
    CHECK((GLuint)fbo == host_fbo && (GLuint)pbo == host_pbo && align == 8,
          "GL state changed: read framebuffer %d (was %u), pack buffer %d (was %u), pack alignment %d (was 8)", fbo,
          host_fbo, pbo, host_pbo, align);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glDeleteFramebuffers(1, &host_fbo);
    glDeleteBuffers(1, &host_pbo);
    printf("%d frames x %d objects: %d differences\n", FRAMES, OBJECTS, mismatches);

    /* errors */
    CHECK_STATUS(glcv_track_frame_texture(tex, 0, 0), GLCV_ERROR_INVALID_ARGUMENT);
    GLuint small = test_texture_make(GL_RGBA8, GL_RGBA, W / 2, H, NULL);
    CHECK_STATUS(glcv_track_frame_texture(tex, small, 0), GLCV_ERROR_SIZE_MISMATCH);
    glDeleteTextures(1, &small);
    free(h);
    free(tex_mask);
    pair_close(&pr);
}

/* One frame through both trackers; 1 when every result agrees. */
static int step(glcv_track *ref, glcv_track *tex, int f, const glcv_image *rgb, const glcv_image *mask,
                GLuint frame_tex, GLuint mask_tex)
{
    CHECK_OK(glcv_track_frame(ref, rgb, mask));
    CHECK_OK(glcv_track_frame_texture(tex, frame_tex, mask_tex));
    glcv_track_result a[OBJECTS], b[OBJECTS];
    int na = 0, nb = 0;
    CHECK_OK(glcv_track_results(ref, a, OBJECTS, &na));
    CHECK_OK(glcv_track_results(tex, b, OBJECTS, &nb));
    int same = na == OBJECTS && nb == OBJECTS;
    for (int k = 0; k < na && k < nb; k++)
        same = same && memcmp(&a[k], &b[k], sizeof a[k]) == 0;
    CHECK(same, "step %d: texture results differ from host results (%d and %d results)", f, na, nb);
    return same;
}

static glcv_track_texture_stats stats_of(glcv_track *t)
{
    glcv_track_texture_stats ts;
    CHECK_OK(glcv_track_texture_stats_get(t, &ts));
    return ts;
}

/* Long-lived textures: updated in place; forgotten and re-specified with another size (an
 * error, then back at the tracker's size: registered again), with another format (registered
 * again, or the pixel-buffer fallback), and at the same size; forgotten, deleted and made anew.
 * (A texture registered with CUDA cannot be re-specified in GL: it is forgotten first.) */
static void respecify(glcv_engine_mode engine)
{
    pair pr;
    if (!pair_open(&pr, engine))
        return;
    glcv_track *ref = pr.ref, *tex = pr.tex;
    uint8_t *tex_mask = malloc((size_t)W * H), *mask4 = malloc((size_t)W * H * 4);
    glcv_track_hist *h = calloc(2, sizeof *h);
    if (!tex_mask || !mask4 || !h)
        return;
    const int cuda = pr.engine == GLCV_ENGINE_CUDA;
    printf("long-lived textures on the %s engine\n", glcv_engine_mode_string(pr.engine));

    scene(0, &pr.rgb, &pr.mask, tex_mask);
    CHECK_OK(glcv_image_convert(&pr.rgb, &pr.rgba));
    GLuint frame_tex = test_texture_make(GL_RGBA8, GL_RGBA, W, H, pr.rgba.data);
    GLuint mask_tex = test_texture_make(GL_R8, GL_RED, W, H, tex_mask);
    const glcv_rect roi[OBJECTS] = {{44, 48, 32, 24}, {238, 52, 24, 36}, {140, 166, 40, 28}};
    for (int k = 0; k < OBJECTS; k++) {
        int id = -1;
        CHECK_OK(glcv_track_hist_compute(ref, &pr.rgb, &pr.mask, roi[k], &h[0]));
        CHECK_OK(glcv_track_add(ref, &h[0], roi[k], &id));
        CHECK_OK(glcv_track_add(tex, &h[0], roi[k], &id));
    }
    int good = 0, steps = 0;
    glcv_track_texture_stats ts;
    for (int f = 0; f < 10; f++) {
        scene(f, &pr.rgb, &pr.mask, tex_mask);
        CHECK_OK(glcv_image_convert(&pr.rgb, &pr.rgba));
        for (size_t i = 0; i < (size_t)W * H; i++) {
            mask4[4 * i] = tex_mask[i];
            mask4[4 * i + 1] = mask4[4 * i + 2] = mask4[4 * i + 3] = (uint8_t)(i * 37);
        }
        int expect_registrations = -1, expect_direct = 1;
        switch (f) {
        case 0: /* first use: both registered */
            expect_registrations = 2;
            break;
        case 1: /* new content in place: the registrations stay */
            test_texture_upload(frame_tex, GL_RGBA8, GL_RGBA, W, H, pr.rgba.data, 0);
            test_texture_upload(mask_tex, GL_R8, GL_RED, W, H, tex_mask, 0);
            expect_registrations = 2;
            break;
        case 2: /* another size: an error; back at the tracker's size: registered again */
            CHECK_OK(glcv_track_forget_texture(tex, frame_tex));
            test_texture_upload(frame_tex, GL_RGBA8, GL_RGBA, W / 2, H, NULL, 1);
            CHECK_STATUS(glcv_track_frame_texture(tex, frame_tex, mask_tex), GLCV_ERROR_SIZE_MISMATCH);
            if (cuda) {
                ts = stats_of(tex);
                CHECK(ts.registered == 1, "after a size change: %d textures registered, expected 1", ts.registered);
            }
            CHECK_OK(glcv_track_forget_texture(tex, frame_tex)); /* a no-op: it is not registered */
            test_texture_upload(frame_tex, GL_RGBA8, GL_RGBA, W, H, pr.rgba.data, 1);
            test_texture_upload(mask_tex, GL_R8, GL_RED, W, H, tex_mask, 0);
            expect_registrations = 3;
            break;
        case 3: /* the mask becomes RGBA8 (red is the mask): registered again */
            test_texture_upload(frame_tex, GL_RGBA8, GL_RGBA, W, H, pr.rgba.data, 0);
            CHECK_OK(glcv_track_forget_texture(tex, mask_tex));
            test_texture_upload(mask_tex, GL_RGBA8, GL_RGBA, W, H, mask4, 1);
            expect_registrations = 4;
            break;
        case 4: /* an RGB8 frame: the pixel-buffer fallback */
            CHECK_OK(glcv_track_forget_texture(tex, frame_tex));
            test_texture_upload(frame_tex, GL_RGB8, GL_RGB, W, H, pr.rgb.data, 1);
            test_texture_upload(mask_tex, GL_RGBA8, GL_RGBA, W, H, mask4, 0);
            expect_direct = 0;
            break;
        case 5: /* RGBA8 and R8 again: both registered again */
        case 7: /* forgotten and re-specified at the same size and format: both registered again */
            CHECK_OK(glcv_track_forget_texture(tex, frame_tex));
            CHECK_OK(glcv_track_forget_texture(tex, mask_tex));
            test_texture_upload(frame_tex, GL_RGBA8, GL_RGBA, W, H, pr.rgba.data, 1);
            test_texture_upload(mask_tex, GL_R8, GL_RED, W, H, tex_mask, 1);
            expect_registrations = f == 5 ? 6 : 8;
            break;
        case 6: /* updated in place */
            test_texture_upload(frame_tex, GL_RGBA8, GL_RGBA, W, H, pr.rgba.data, 0);
            test_texture_upload(mask_tex, GL_R8, GL_RED, W, H, tex_mask, 0);
            expect_registrations = 6;
            break;
        case 8: /* forgotten, deleted, made anew (GL may give the same names) */
            CHECK_OK(glcv_track_forget_texture(tex, frame_tex));
            CHECK_OK(glcv_track_forget_texture(tex, mask_tex));
            if (cuda) {
                ts = stats_of(tex);
                CHECK(ts.registered == 0, "after forget: %d textures registered", ts.registered);
            }
            glDeleteTextures(1, &frame_tex);
            glDeleteTextures(1, &mask_tex);
            frame_tex = test_texture_make(GL_RGBA8, GL_RGBA, W, H, pr.rgba.data);
            mask_tex = test_texture_make(GL_R8, GL_RED, W, H, tex_mask);
            break;
        default: /* no mask */
            test_texture_upload(frame_tex, GL_RGBA8, GL_RGBA, W, H, pr.rgba.data, 0);
            break;
        }
        CHECK(glGetError() == GL_NO_ERROR, "step %d: GL error updating the textures", f);
        int use_mask = f < 9;
        good += step(ref, tex, f, &pr.rgb, use_mask ? &pr.mask : NULL, frame_tex, use_mask ? mask_tex : 0);
        steps++;
        if (cuda) {
            ts = stats_of(tex);
            CHECK(ts.direct == expect_direct, "step %d: direct %d, expected %d", f, ts.direct, expect_direct);
            CHECK(expect_registrations < 0 || ts.registrations == expect_registrations,
                  "step %d: %d registrations, expected %d", f, ts.registrations, expect_registrations);
            printf("step %d: direct %d, registered %d, registrations %d, refused %d, texture objects %d\n", f,
                   ts.direct, ts.registered, ts.registrations, ts.refused, ts.texture_objects);
        }
    }
    printf("%d of %d steps agree\n", good, steps);
    CHECK_OK(glcv_track_forget_texture(tex, 12345)); /* unknown: a no-op */
    CHECK_STATUS(glcv_track_forget_texture(NULL, frame_tex), GLCV_ERROR_INVALID_ARGUMENT);
    /* destroy drops the registrations left; the textures go after it */
    pair_close(&pr);
    glDeleteTextures(1, &frame_tex);
    glDeleteTextures(1, &mask_tex);
    CHECK(glGetError() == GL_NO_ERROR, "GL error");
    free(tex_mask);
    free(mask4);
    free(h);
}

int main(int argc, char **argv)
{
    const int cuda = test_mode_cuda(argc, argv);
    glcv_context *ctx = test_context_or_skip(33);
    glcv_cuda_info info;
    if (cuda) {
        test_cuda_gl_or_skip(&ctx, &info);
        compare(GLCV_ENGINE_AUTO, 1); /* AUTO takes the CUDA engine */
        compare(GLCV_ENGINE_CUDA, 0);
        compare(GLCV_ENGINE_CUDA, 1);
        respecify(GLCV_ENGINE_CUDA);
    } else {
        CHECK_OK(glcv_cuda_query(&info));
        printf("%s\n", info.text);
        compare(GLCV_ENGINE_CPU, 0);
        compare(GLCV_ENGINE_CPU, 1);
        respecify(GLCV_ENGINE_CPU);
        if (!glcv_cuda_available(0)) { /* without a device: AUTO falls back to the CPU, CUDA is refused */
            compare(GLCV_ENGINE_AUTO, 1);
            glcv_track *tr = NULL;
            glcv_track_params p = GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = W, .height = H, .engine = GLCV_ENGINE_CUDA);
            CHECK_STATUS(glcv_track_create(&p, &tr), GLCV_ERROR_UNSUPPORTED);
        }
    }
    glcv_context_destroy(&ctx);
    char name[64];
    snprintf(name, sizeof name, "test_track_gl (%s)", cuda ? "cuda" : "cpu");
    return test_finish(name);
}
