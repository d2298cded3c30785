/* Template matching and correlation with GL textures: a template, an image and a reference given as
 * texture IDs give the same scores as the same pixels given as host images; the map texture holds
 * the normalised map; the host's texture binding survives. Argument: "cpu" (default: the CPU
 * engine, textures read back in GL) or "auto" (the AUTO engine, which must pick CUDA: through the
 * CUDA-GL bridge when the GL context is on the CUDA device). Exits 77 without a GL context, and
 * with "auto" without a CUDA device. */
#include "correlate_internal.h"
#include "match_internal.h"
#include "testutil.h"

#include <glcv/correlate.h>
#include <glcv/match.h>

#include <epoxy/gl.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

static GLuint make_texture(const glcv_image *rgba)
{
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, rgba->width, rgba->height, 0, GL_RGBA, GL_UNSIGNED_BYTE, rgba->data);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glBindTexture(GL_TEXTURE_2D, 0);
    return tex;
}

static glcv_image random_rgba(int w, int h, uint64_t *rng)
{
    glcv_image img;
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGBA8, &img));
    for (size_t i = 0; i < (size_t)w * h * 4; i++)
        img.data[i] = (uint8_t)(i % 4 == 3 ? 255 : test_rand(rng) >> 56);
    return img;
}

/* The engine each object must run on: CPU, or CUDA for AUTO (the argument "auto"). */
static glcv_engine_mode g_expected = GLCV_ENGINE_CPU;

static void test_match(glcv_engine_mode engine, glcv_pixel_format format)
{
    uint64_t rng = 17;
    int W = 97, H = 61, w = 13, h = 9;
    glcv_image img = random_rgba(W, H, &rng), tpl = random_rgba(w, h, &rng);
    GLuint tex_img = make_texture(&img), tex_tpl = make_texture(&tpl);
    glcv_match_params p = GLCV_MATCH_PARAMS(.width = W, .height = H, .format = format, .metric = GLCV_MATCH_SSD,
                                            .engine = engine, .logger = test_logger());
    glcv_match *host = NULL, *gl = NULL;
    CHECK_OK(glcv_match_create(&p, &host));
    CHECK_OK(glcv_match_create(&p, &gl));
    if (!host || !gl)
        return;
    glcv_match_params used;
    CHECK_OK(glcv_match_get_params(gl, &used));
    printf("match engine %s -> %s, format %d\n", glcv_engine_mode_string(engine),
           glcv_engine_mode_string(used.engine), (int)format);
    CHECK(used.engine == g_expected, "match engine %s resolved to %s, expected %s", glcv_engine_mode_string(engine),
          glcv_engine_mode_string(used.engine), glcv_engine_mode_string(g_expected));
    double *a = malloc((size_t)W * H * sizeof *a), *b = malloc((size_t)W * H * sizeof *b);
    CHECK_OK(glcv_match_set_template(host, &tpl, NULL));
    CHECK_OK(glcv_match_image(host, &img));
    CHECK_OK(glcv_match_read_scores(host, a, 0));
    CHECK_OK(glcv_match_set_template_texture(gl, tex_tpl, w, h, NULL));
    CHECK_OK(glcv_match_image_texture(gl, tex_img));
    CHECK_OK(glcv_match_read_scores(gl, b, 0));
    int bad = 0;
    for (int i = 0; i < W * H; i++)
        bad += a[i] != b[i];
    CHECK(bad == 0, "texture inputs: %d of %d scores differ from host inputs", bad, W * H);
    int direct = -1, registered = 0;
    if (g_expected == GLCV_ENGINE_CUDA) {
        glcv_match_texture_stats(gl, &direct, &registered);
        CHECK(direct == 1 && registered == 1,
              "CUDA engine: the RGBA8 texture was not read in place (direct %d, registered %d)", direct, registered);
    }
    /* new pixels in the same texture: read again (the registration is kept, not the pixels) */
    glcv_image img2 = random_rgba(W, H, &rng);
    glBindTexture(GL_TEXTURE_2D, tex_img);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, W, H, GL_RGBA, GL_UNSIGNED_BYTE, img2.data);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glBindTexture(GL_TEXTURE_2D, 0);
    CHECK_OK(glcv_match_image(host, &img2));
    CHECK_OK(glcv_match_read_scores(host, a, 0));
    CHECK_OK(glcv_match_image_texture(gl, tex_img));
    CHECK_OK(glcv_match_read_scores(gl, b, 0));
    bad = 0;
    for (int i = 0; i < W * H; i++)
        bad += a[i] != b[i];
    CHECK(bad == 0, "the texture's new pixels: %d of %d scores differ from host inputs", bad, W * H);
    glcv_image_free(&img2);
    CHECK_OK(glcv_match_forget_texture(gl, tex_img));
    CHECK_OK(glcv_match_forget_texture(gl, tex_img)); /* nothing left to forget */
    if (g_expected == GLCV_ENGINE_CUDA) {
        glcv_match_texture_stats(gl, &direct, &registered);
        CHECK(registered == 0, "forget: %d textures still registered", registered);
    }

    /* the map texture, and the host's binding left alone */
    GLuint mine = 0;
    glGenTextures(1, &mine);
    glBindTexture(GL_TEXTURE_2D, mine);
    GLuint map = glcv_match_map_texture(gl);
    CHECK(map != 0, "map texture");
    GLint bound = 0;
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &bound);
    CHECK((GLuint)bound == mine, "texture binding changed: %d, was %u", bound, mine);
    if (map) {
        float *tex = malloc((size_t)W * H * sizeof *tex), *norm = malloc((size_t)W * H * sizeof *norm);
        glBindTexture(GL_TEXTURE_2D, map);
        glPixelStorei(GL_PACK_ALIGNMENT, 4);
        glGetTexImage(GL_TEXTURE_2D, 0, GL_RED, GL_FLOAT, tex);
        glBindTexture(GL_TEXTURE_2D, mine);
        CHECK_OK(glcv_match_read_normalized(gl, norm, 0));
        bad = 0;
        for (int i = 0; i < W * H; i++)
            bad += tex[i] != norm[i];
        CHECK(bad == 0, "map texture: %d values differ from glcv_match_read_normalized", bad);
        CHECK(glcv_match_map_texture(gl) == map, "the map texture keeps its name");
        free(tex);
        free(norm);
    }
    glDeleteTextures(1, &mine);
    CHECK(glGetError() == GL_NO_ERROR, "GL error");
    glcv_match_destroy(&host);
    glcv_match_destroy(&gl);
    glDeleteTextures(1, &tex_img);
    glDeleteTextures(1, &tex_tpl);
    free(a);
    free(b);
    glcv_image_free(&img);
    glcv_image_free(&tpl);
}

static void test_correlate(glcv_engine_mode engine)
{
    uint64_t rng = 99;
    int w = 64, h = 40;
    enum { N = 5 };
    glcv_image ref = random_rgba(w, h, &rng), imgs[N];
    GLuint tex_ref = make_texture(&ref), tex[N];
    for (int i = 0; i < N; i++) {
        imgs[i] = random_rgba(w, h, &rng);
        for (size_t k = 0; k < (size_t)w * h * 4; k += i + 1)
            imgs[i].data[k] = ref.data[k]; /* partly correlated */
        tex[i] = make_texture(&imgs[i]);
    }
    glcv_correlate_params p = GLCV_CORRELATE_PARAMS(.width = w, .height = h, .engine = engine, .batch = 2,
                                                    .logger = test_logger());
    glcv_correlate *c = NULL;
    CHECK_OK(glcv_correlate_create(&p, &c));
    if (c) {
        glcv_correlate_params used;
        CHECK_OK(glcv_correlate_get_params(c, &used));
        CHECK(used.engine == g_expected, "correlate engine %s resolved to %s, expected %s",
              glcv_engine_mode_string(engine), glcv_engine_mode_string(used.engine),
              glcv_engine_mode_string(g_expected));
        double a[N], b[N];
        CHECK_OK(glcv_correlate_set_reference(c, &ref));
        CHECK_OK(glcv_correlate_images(c, imgs, N, a));
        CHECK_OK(glcv_correlate_set_reference_texture(c, tex_ref));
        CHECK_OK(glcv_correlate_textures(c, tex, N, b));
        for (int i = 0; i < N; i++)
            CHECK(a[i] == b[i], "correlate texture %d: r %.17g, host r %.17g", i, b[i], a[i]);
        int direct = -1, registered = 0;
        if (g_expected == GLCV_ENGINE_CUDA) {
            glcv_correlate_texture_stats(c, &direct, &registered);
            CHECK(direct == 1 && registered == N,
                  "CUDA engine: the RGBA8 textures were not handed over in place (direct %d, registered %d of %d)",
                  direct, registered, N);
        }
        /* a texture twice in one batch, and new pixels in a registered texture */
        glcv_image fresh = random_rgba(w, h, &rng);
        glBindTexture(GL_TEXTURE_2D, tex[1]);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, fresh.data);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
        glBindTexture(GL_TEXTURE_2D, 0);
        const GLuint again[3] = {tex[1], tex[1], tex[0]};
        const glcv_image host_again[3] = {fresh, fresh, imgs[0]};
        CHECK_OK(glcv_correlate_images(c, host_again, 3, a));
        CHECK_OK(glcv_correlate_textures(c, again, 3, b));
        for (int i = 0; i < 3; i++)
            CHECK(a[i] == b[i], "correlate texture batch %d (a texture twice, new pixels): r %.17g, host r %.17g", i,
                  b[i], a[i]);
        glcv_image_free(&fresh);
        for (int i = 0; i < N; i++)
            CHECK_OK(glcv_correlate_forget_texture(c, tex[i]));
        if (g_expected == GLCV_ENGINE_CUDA) {
            glcv_correlate_texture_stats(c, &direct, &registered);
            CHECK(registered == 0, "forget: %d textures still registered", registered);
        }
        glcv_correlate_destroy(&c);
    }
    glDeleteTextures(1, &tex_ref);
    glDeleteTextures(N, tex);
    glcv_image_free(&ref);
    for (int i = 0; i < N; i++)
        glcv_image_free(&imgs[i]);
}

int main(int argc, char **argv)
{
    int automatic = argc > 1 && strcmp(argv[1], "auto") == 0;
    if (argc > 1 && !automatic && strcmp(argv[1], "cpu") != 0) {
        fprintf(stderr, "usage: %s [cpu | auto]\n", argv[0]);
        return 2;
    }
    glcv_context *ctx = test_context_or_skip(33);
    if (automatic) { /* about the CUDA engine: without a device AUTO would only repeat the CPU run */
        glcv_cuda_info info;
        test_cuda_or_skip(&info);
        g_expected = GLCV_ENGINE_CUDA;
    }
    glcv_engine_mode me = automatic ? GLCV_ENGINE_AUTO : GLCV_ENGINE_CPU;
    test_match(me, GLCV_PIXEL_GRAY8);
    test_match(me, GLCV_PIXEL_RGB8);
    test_correlate(automatic ? GLCV_ENGINE_AUTO : GLCV_ENGINE_CPU);
    glcv_context_destroy(&ctx);
    return test_finish("test_match_gl");
}
