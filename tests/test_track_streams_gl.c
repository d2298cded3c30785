/* Texture arrays of a tracker of several streams (glcv_track_frames_texture): every stream's frame
 * a layer of a GL_TEXTURE_2D_ARRAY, with masks as another array - none, made by hand (GL_R8, and
 * GL_RGBA8 whose red channel is the mask), or the masks of a real glcv_bgsub object of the same
 * streams (glcv_bgsub_mask_texture) - give exactly the results of glcv_track_frames on the same
 * pixels read back (CPU engine), which give those of one tracker per stream. The host's GL state
 * survives; wrong textures fail with the right status and track nothing.
 *
 * Argument "cpu" (default): the CPU engine reads the layers back. "cuda": the CUDA engine, the GL
 * context on the CUDA device: arrays registered once each (2 registrations for 2 arrays, however
 * many sets), both mapped in one call per set; an RGB8 frames array through the pixel-buffer
 * fallback. Exits 77 without a GL context, and with "cuda" without a CUDA device or when the GL
 * context is not on it. */
#include "testutil.h"
#include "test_track_scene.h"
#include "track_internal.h"

#include <epoxy/gl.h>
#include <stdlib.h>
#include <string.h>

enum { S = SCENE_STREAMS, W = SCENE_W, H = SCENE_H };

typedef enum mask_source { NO_MASKS, R8_MASKS, RGBA8_MASKS, BGSUB_MASKS } mask_source;

static const char *const mask_names[] = {"no masks", "GL_R8 masks", "GL_RGBA8 masks", "glcv_bgsub masks"};

/* A GL_TEXTURE_2D_ARRAY of `layers` layers of w x h, `internal` format, contents undefined. */
static GLuint array_make(GLenum internal, GLenum format, GLenum type, int w, int h, int layers)
{
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D_ARRAY, tex);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MAX_LEVEL, 0);
    glTexImage3D(GL_TEXTURE_2D_ARRAY, 0, (GLint)internal, w, h, layers, 0, format, type, NULL);
    glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
    return tex;
}

/* Writes packed rows into layer `layer` of an array texture. */
static void array_upload(GLuint tex, int layer, GLenum format, const void *px)
{
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glBindTexture(GL_TEXTURE_2D_ARRAY, tex);
    glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, 0, layer, W, H, 1, format, GL_UNSIGNED_BYTE, px);
    glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
}

/* Reads every layer of an array texture as `format` (GL_RGBA or GL_RED), layer after layer. */
static void array_read(GLuint tex, GLenum format, uint8_t *out)
{
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glBindTexture(GL_TEXTURE_2D_ARRAY, tex);
    glGetTexImage(GL_TEXTURE_2D_ARRAY, 0, format, GL_UNSIGNED_BYTE, out);
    glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
}

/* The host's GL bindings, which the tracker must leave as they were. */
typedef struct host_state {
    GLuint fbo, pbo, array, tex2d;
} host_state;

static void host_state_set(host_state *h)
{
    if (!h->fbo) {
        glGenFramebuffers(1, &h->fbo);
        glGenBuffers(1, &h->pbo);
        h->array = array_make(GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, 4, 4, 2);
        h->tex2d = test_texture_make(GL_RGBA8, GL_RGBA, 4, 4, NULL);
    }
    glBindFramebuffer(GL_READ_FRAMEBUFFER, h->fbo);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, h->pbo);
    glPixelStorei(GL_PACK_ALIGNMENT, 8);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D_ARRAY, h->array);
    glBindTexture(GL_TEXTURE_2D, h->tex2d);
}

/* Checks the bindings and puts GL's defaults back. */
static void host_state_check(const host_state *h, const char *what)
{
    GLint fbo = 0, pbo = 0, align = 0, array = 0, tex2d = 0;
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &fbo);
    glGetIntegerv(GL_PIXEL_PACK_BUFFER_BINDING, &pbo);
    glGetIntegerv(GL_PACK_ALIGNMENT, &align);
    glGetIntegerv(GL_TEXTURE_BINDING_2D_ARRAY, &array);
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &tex2d);
    CHECK((GLuint)fbo == h->fbo && (GLuint)pbo == h->pbo && align == 8 && (GLuint)array == h->array &&
              (GLuint)tex2d == h->tex2d,
          "%s: GL state changed: read framebuffer %d (was %u), pack buffer %d (was %u), pack alignment %d (was 8), "
          "array texture %d (was %u), 2D texture %d (was %u)",
          what, fbo, h->fbo, pbo, h->pbo, align, array, h->array, tex2d, h->tex2d);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
    glBindTexture(GL_TEXTURE_2D, 0);
}

static void host_state_free(host_state *h)
{
    glDeleteFramebuffers(1, &h->fbo);
    glDeleteBuffers(1, &h->pbo);
    glDeleteTextures(1, &h->array);
    glDeleteTextures(1, &h->tex2d);
}

static glcv_track_texture_stats stats_of(glcv_track *t)
{
    glcv_track_texture_stats ts;
    CHECK_OK(glcv_track_texture_stats_get(t, &ts));
    return ts;
}

/* One run over the scene: `tex` (on `engine`) takes the arrays, `ref` (CPU engine) the pixels
 * read back from them, and SCENE_STREAMS one-stream trackers each stream's. rgb_frames: the
 * frames array is GL_RGB8 instead of GL_RGBA8. */
static void run(glcv_engine_mode engine, mask_source masks_from, int rgb_frames, host_state *hs)
{
    const int cuda = engine == GLCV_ENGINE_CUDA;
    char what[128];
    snprintf(what, sizeof what, "%s engine, %s frames, %s", glcv_engine_mode_string(engine),
             rgb_frames ? "GL_RGB8" : "GL_RGBA8", mask_names[masks_from]);
    streams_check c;
    CHECK(streams_check_open(&c, test_logger()), "%s: the reference trackers cannot be made", what);
    glcv_track *tex = NULL, *ref = NULL;
    glcv_track_params p = streams_check_params(S, engine, test_logger());
    CHECK_OK(glcv_track_create(&p, &tex));
    p.engine = GLCV_ENGINE_CPU;
    CHECK_OK(glcv_track_create(&p, &ref));
    glcv_bgsub *bg = NULL;
    if (masks_from == BGSUB_MASKS) {
        glcv_bgsub_params bp = GLCV_BGSUB_PARAMS(.width = W, .height = H, .streams = S, .format = GLCV_PIXEL_RGB8,
                                                 .logger = test_logger());
        CHECK_OK(glcv_bgsub_create(&bp, &bg));
    }
    glcv_image rgb[S], rgba[S], mask[S], back[S], back_masks[S];
    for (int s = 0; s < S; s++) {
        rgb[s] = test_image_make(W, H, GLCV_PIXEL_RGB8, 0);
        rgba[s] = test_image_make(W, H, GLCV_PIXEL_RGBA8, 0);
        mask[s] = test_image_make(W, H, GLCV_PIXEL_GRAY8, 0);
        back[s] = test_image_make(W, H, GLCV_PIXEL_RGBA8, 0);
        back_masks[s] = test_image_make(W, H, GLCV_PIXEL_GRAY8, 0);
    }
    uint8_t *frames_px = malloc((size_t)W * H * 4 * S), *masks_px = malloc((size_t)W * H * S);
    uint8_t *mask4 = malloc((size_t)W * H * 4);
    GLuint frames = array_make(rgb_frames ? GL_RGB8 : GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, W, H, S);
    GLuint masks = 0, seen_masks[4] = {0, 0, 0, 0};
    if (masks_from == R8_MASKS)
        masks = array_make(GL_R8, GL_RED, GL_UNSIGNED_BYTE, W, H, S);
    if (masks_from == RGBA8_MASKS)
        masks = array_make(GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, W, H, S);
    int differences = 0, direct = 0, n_seen = 0;
    glcv_track *both[2] = {tex, ref};
    int ready = tex && ref && frames_px && masks_px && mask4 && (masks_from != BGSUB_MASKS || bg);
    for (int f = 0; f < SCENE_FRAMES && ready; f++) {
        for (int s = 0; s < S; s++) {
            scene_stream_draw(&rgb[s], s, f);
            CHECK_OK(glcv_image_convert(&rgb[s], &rgba[s]));
            array_upload(frames, s, GL_RGBA, rgba[s].data);
            scene_stream_mask(&mask[s], s, f);
            if (masks_from == R8_MASKS) {
                array_upload(masks, s, GL_RED, mask[s].data);
            } else if (masks_from == RGBA8_MASKS) {
                for (size_t i = 0; i < (size_t)W * H; i++) {
                    mask4[4 * i] = mask[s].data[i] ? 200 : 100; /* red > 0.5 or not */
                    mask4[4 * i + 1] = mask4[4 * i + 2] = mask4[4 * i + 3] = (uint8_t)(i * 37 + (size_t)s);
                }
                array_upload(masks, s, GL_RGBA, mask4);
            }
        }
        if (bg) {
            CHECK_OK(glcv_bgsub_frames(bg, rgb, S, 0));
            masks = glcv_bgsub_mask_texture(bg);
            CHECK(masks != 0, "frame %d: no bgsub mask texture", f);
            int known = 0;
            for (int i = 0; i < n_seen; i++)
                known |= seen_masks[i] == masks;
            if (!known && n_seen < 4)
                seen_masks[n_seen++] = masks;
            if (f == 0) {
                GLint internal = 0, layers = 0;
                glBindTexture(GL_TEXTURE_2D_ARRAY, masks);
                glGetTexLevelParameteriv(GL_TEXTURE_2D_ARRAY, 0, GL_TEXTURE_INTERNAL_FORMAT, &internal);
                glGetTexLevelParameteriv(GL_TEXTURE_2D_ARRAY, 0, GL_TEXTURE_DEPTH, &layers);
                glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
                CHECK(internal == GL_R8 && layers == S, "bgsub masks: format 0x%04x, %d layers, expected GL_R8, %d",
                      (unsigned)internal, (int)layers, S);
            }
        }
        /* the same pixels, read back */
        array_read(frames, GL_RGBA, frames_px);
        if (masks)
            array_read(masks, GL_RED, masks_px);
        for (int s = 0; s < S; s++) {
            memcpy(back[s].data, frames_px + (size_t)W * H * 4 * (size_t)s, (size_t)W * H * 4);
            for (size_t i = 0; i < (size_t)W * H; i++)
                back_masks[s].data[i] = masks_px[(size_t)W * H * (size_t)s + i] >= 128 ? 255 : 0;
        }
        const glcv_image *host_masks = masks ? back_masks : NULL;
        CHECK(streams_check_objects(&c, both, 2, f, back), "%s frame %d: adding or removing objects failed",
              what, f);
        CHECK(streams_check_refs(&c, back, host_masks), "%s frame %d: a reference failed", what, f);
        CHECK_OK(glcv_track_frames(ref, back, host_masks, S));
        if (f == 0)
            host_state_set(hs);
        CHECK_OK(glcv_track_frames_texture(tex, frames, masks));
        if (f == 0)
            host_state_check(hs, what);
        glcv_track_result a[SCENE_OBJECTS], b[SCENE_OBJECTS];
        int na = 0, nb = 0;
        CHECK_OK(glcv_track_results(ref, a, SCENE_OBJECTS, &na));
        CHECK_OK(glcv_track_results(tex, b, SCENE_OBJECTS, &nb));
        for (int k = 0; k < na || k < nb; k++) {
            if (k < na && k < nb && memcmp(&a[k], &b[k], sizeof a[k]) == 0)
                continue;
            if (differences++ < 5)
                CHECK(0,
                      "%s frame %d result %d: from read-back pixels id %d stream %d m00 %.17g window %d,%d %dx%d it "
                      "%d lost %u; from textures id %d stream %d m00 %.17g window %d,%d %dx%d it %d lost %u",
                      what, f, k, k < na ? a[k].id : -1, k < na ? a[k].stream : -1, k < na ? a[k].m00 : -1,
                      k < na ? a[k].window.x : 0, k < na ? a[k].window.y : 0, k < na ? a[k].window.width : 0,
                      k < na ? a[k].window.height : 0, k < na ? a[k].iterations : 0, k < na ? a[k].lost : 0,
                      k < nb ? b[k].id : -1, k < nb ? b[k].stream : -1, k < nb ? b[k].m00 : -1,
                      k < nb ? b[k].window.x : 0, k < nb ? b[k].window.y : 0, k < nb ? b[k].window.width : 0,
                      k < nb ? b[k].window.height : 0, k < nb ? b[k].iterations : 0, k < nb ? b[k].lost : 0);
        }
        differences += streams_check_compare(&c, tex, what, f);
        if (cuda) {
            glcv_track_texture_stats ts = stats_of(tex);
            direct += ts.direct;
            int arrays = masks ? 2 : 1;
            if (rgb_frames) {
                CHECK(ts.direct == 0 && ts.registrations == 0,
                      "%s frame %d: direct %d, %d registrations: a GL_RGB8 array goes through the pixel buffer", what,
                      f, ts.direct, ts.registrations);
            } else if (masks_from == BGSUB_MASKS) {
                CHECK(ts.direct == 1 && ts.registrations == 1 + n_seen && ts.registered == 1 + n_seen,
                      "%s frame %d: direct %d, %d registrations, %d registered: expected the frames array and the %d "
                      "mask arrays bgsub takes turns with, each registered once",
                      what, f, ts.direct, ts.registrations, ts.registered, n_seen);
            } else {
                CHECK(ts.direct == 1 && ts.registrations == arrays && ts.registered == arrays,
                      "%s frame %d: direct %d, %d registrations, %d registered: expected %d arrays registered once, "
                      "the registrations reused by every set",
                      what, f, ts.direct, ts.registrations, ts.registered, arrays);
            }
            if (f == SCENE_FRAMES - 1)
                printf("  %s: registrations %d, registered %d, refused %d, texture objects %d\n", what,
                       ts.registrations, ts.registered, ts.refused, ts.texture_objects);
        }
    }
    printf("%-60s %d sets of %d streams: %d results compared, %d lost, %d differences%s\n", what, SCENE_FRAMES, S,
           c.compared, c.lost, differences, cuda ? (direct ? ", read in place" : ", through the pixel buffer") : "");
    CHECK(differences == 0, "%s: %d results differ", what, differences);
    CHECK(c.compared > 0, "%s: nothing compared", what);
    /* forgotten, the registrations go; the textures may then be deleted */
    CHECK_OK(glcv_track_forget_texture(tex, frames));
    if (masks_from == BGSUB_MASKS) {
        for (int i = 0; i < n_seen; i++)
            CHECK_OK(glcv_track_forget_texture(tex, seen_masks[i]));
    } else if (masks) {
        CHECK_OK(glcv_track_forget_texture(tex, masks));
    }
    if (cuda && tex) {
        glcv_track_texture_stats ts = stats_of(tex);
        CHECK(ts.registered == 0, "%s: %d arrays still registered after forget", what, ts.registered);
    }
    glDeleteTextures(1, &frames);
    if (masks_from == R8_MASKS || masks_from == RGBA8_MASKS)
        glDeleteTextures(1, &masks);
    glcv_bgsub_destroy(&bg);
    glcv_track_destroy(&tex);
    glcv_track_destroy(&ref);
    streams_check_close(&c);
    for (int s = 0; s < S; s++) {
        test_image_release(&rgb[s]);
        test_image_release(&rgba[s]);
        test_image_release(&mask[s]);
        test_image_release(&back[s]);
        test_image_release(&back_masks[s]);
    }
    free(frames_px);
    free(masks_px);
    free(mask4);
    CHECK(glGetError() == GL_NO_ERROR, "%s: GL error", what);
}

/* Textures that must be refused, with nothing tracked; what still works with several streams. */
static void errors(glcv_engine_mode engine)
{
    glcv_track *tr = NULL;
    glcv_track_params p = streams_check_params(S, engine, test_logger());
    CHECK_OK(glcv_track_create(&p, &tr));
    if (!tr)
        return;
    glcv_image rgba = test_image_make(W, H, GLCV_PIXEL_RGBA8, 0), rgb = test_image_make(W, H, GLCV_PIXEL_RGB8, 0);
    scene_stream_draw(&rgb, 0, 0);
    CHECK_OK(glcv_image_convert(&rgb, &rgba));
    GLuint frames = array_make(GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, W, H, S);
    for (int s = 0; s < S; s++)
        array_upload(frames, s, GL_RGBA, rgba.data);
    GLuint tex2d = test_texture_make(GL_RGBA8, GL_RGBA, W, H, rgba.data);
    GLuint more = array_make(GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, W, H, S + 1);
    GLuint fewer = array_make(GL_R8, GL_RED, GL_UNSIGNED_BYTE, W, H, S - 1);
    GLuint smaller = array_make(GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, W, H - 2, S);
    GLuint integer = array_make(GL_RGBA8UI, GL_RGBA_INTEGER, GL_UNSIGNED_BYTE, W, H, S);
    GLuint srgb = array_make(GL_SRGB8_ALPHA8, GL_RGBA, GL_UNSIGNED_BYTE, W, H, S);
    CHECK(glGetError() == GL_NO_ERROR, "GL error making the textures");

    /* histograms from a 2D texture work whatever the number of streams */
    glcv_track_hist *h = calloc(1, sizeof *h);
    glcv_rect roi = scene_object_roi(&scene_objects[0], 0);
    CHECK_OK(glcv_track_hist_compute_texture(tr, tex2d, 0, roi, h));
    int id = -1;
    CHECK_OK(glcv_track_add_to_stream(tr, 1, h, roi, &id));
    CHECK_OK(glcv_track_frames_texture(tr, frames, 0));
    glcv_track_result before, after;
    int n = 0;
    CHECK_OK(glcv_track_results(tr, &before, 1, &n));
    CHECK(n == 1 && before.stream == 1 && before.lost == 0, "%d results, stream %d, lost %u", n, before.stream,
          before.lost);
    static const struct {
        const char *what;
        int frames, masks; /* indices into the textures below */
        glcv_status expect;
    } cases[] = {
        {"frames 0", 0, -1, GLCV_ERROR_INVALID_ARGUMENT},
        {"frames a GL_TEXTURE_2D", 1, -1, GLCV_ERROR_INVALID_ARGUMENT},
        {"frames of a layer too many", 2, -1, GLCV_ERROR_INVALID_ARGUMENT},
        {"frames of another size", 4, -1, GLCV_ERROR_SIZE_MISMATCH},
        {"GL_RGBA8UI frames", 5, -1, GLCV_ERROR_UNSUPPORTED},
        {"sRGB frames", 6, -1, GLCV_ERROR_UNSUPPORTED},
        {"masks of a layer too few", 7, 3, GLCV_ERROR_INVALID_ARGUMENT},
        {"masks a GL_TEXTURE_2D", 7, 1, GLCV_ERROR_INVALID_ARGUMENT},
        {"masks of another size", 7, 4, GLCV_ERROR_SIZE_MISMATCH},
        {"GL_RGBA8UI masks", 7, 5, GLCV_ERROR_UNSUPPORTED},
        {"a deleted texture", 8, -1, GLCV_ERROR_INVALID_ARGUMENT},
    };
    GLuint deleted = array_make(GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, W, H, S);
    glDeleteTextures(1, &deleted);
    const GLuint names[] = {0, tex2d, more, fewer, smaller, integer, srgb, frames, deleted};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        GLuint masks = cases[i].masks < 0 ? 0 : names[cases[i].masks];
        glcv_status st = glcv_track_frames_texture(tr, names[cases[i].frames], masks);
        CHECK(st == cases[i].expect, "%s engine, %s: '%s', expected '%s'", glcv_engine_mode_string(engine),
              cases[i].what, glcv_status_string(st), glcv_status_string(cases[i].expect));
    }
    CHECK_STATUS(glcv_track_frame_texture(tr, tex2d, 0), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_OK(glcv_track_results(tr, &after, 1, &n));
    CHECK(n == 1 && memcmp(&before, &after, sizeof before) == 0, "%s engine: a refused set changed the results",
          glcv_engine_mode_string(engine));
    CHECK(glGetError() == GL_NO_ERROR, "%s engine: the refused calls left a GL error", glcv_engine_mode_string(engine));
    CHECK_OK(glcv_track_forget_texture(tr, frames));
    CHECK_OK(glcv_track_forget_texture(tr, 12345)); /* unknown: a no-op */
    glcv_track_destroy(&tr);
    GLuint all[] = {frames, tex2d, more, fewer, smaller, integer, srgb};
    glDeleteTextures((GLsizei)(sizeof all / sizeof all[0]), all);
    test_image_release(&rgba);
    test_image_release(&rgb);
    free(h);
}

int main(int argc, char **argv)
{
    const int cuda = test_mode_cuda(argc, argv);
    glcv_context *ctx = test_context_or_skip(33);
    glcv_cuda_info info;
    if (cuda)
        test_cuda_gl_or_skip(&ctx, &info);
    glcv_engine_mode engine = cuda ? GLCV_ENGINE_CUDA : GLCV_ENGINE_CPU;
    host_state hs = {0, 0, 0, 0};
    run(engine, NO_MASKS, 0, &hs);
    run(engine, R8_MASKS, 0, &hs);
    run(engine, RGBA8_MASKS, 0, &hs);
    run(engine, BGSUB_MASKS, 0, &hs);
    run(engine, R8_MASKS, 1, &hs);
    errors(engine);
    host_state_free(&hs);
    glcv_context_destroy(&ctx);
    char name[64];
    snprintf(name, sizeof name, "test_track_streams_gl (%s)", cuda ? "cuda" : "cpu");
    return test_finish(name);
}
