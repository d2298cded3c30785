#include "testutil.h"

#include "segment_internal.h"

#include <epoxy/gl.h>
#include <math.h>
#include <string.h>

int test_failures = 0;

glcv_logger test_logger(void)
{
    const char *v = getenv("GLCV_TEST_VERBOSE");
    glcv_logger lg = {glcv_log_stderr, NULL, (v && *v == '1') ? GLCV_LOG_DEBUG : GLCV_LOG_WARN};
    return lg;
}

glcv_context *test_context_or_skip(int min_gl_version)
{
    glcv_context *ctx = NULL;
    glcv_context_params p = {0};
    p.min_gl_version = min_gl_version;
    p.logger = test_logger();
    glcv_status st = glcv_context_create(&p, &ctx);
    if (st != GLCV_OK) {
        printf("SKIP: no OpenGL context (%s)\n", glcv_status_string(st));
        exit(TEST_SKIP);
    }
    printf("GL context: %s\n", glcv_context_describe(ctx));
    return ctx;
}

void test_cuda_or_skip(glcv_cuda_info *info)
{
    CHECK_OK(glcv_cuda_query(info));
    printf("%s\n", info->text);
    if (!glcv_cuda_available(0)) {
        printf("SKIP: no CUDA device (%s)\n", info->text);
        exit(TEST_SKIP);
    }
}

int test_mode_cuda(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "cpu";
    if (strcmp(mode, "cuda") != 0 && strcmp(mode, "cpu") != 0) {
        fprintf(stderr, "usage: %s [cpu | cuda]\n", argv[0]);
        exit(2);
    }
    return strcmp(mode, "cuda") == 0;
}

void test_cuda_gl_or_skip(glcv_context **ctx, glcv_cuda_info *info)
{
    test_cuda_or_skip(info);
    if (info->gl_device < 0) {
        printf("SKIP: the GL context is not on a CUDA device: texture inputs would not reach CUDA directly\n");
        glcv_context_destroy(ctx);
        exit(TEST_SKIP);
    }
}

int test_segment_on_path(glcv_segment *seg, glcv_engine_mode engine, int multipass)
{
    glcv_segment_params got;
    glcv_status st = glcv_segment_get_params(seg, &got);
    CHECK(st == GLCV_OK, "get_params: %s", glcv_status_string(st));
    if (st != GLCV_OK)
        return 0;
    CHECK(got.engine == engine, "the segmenter runs on the %s engine, expected %s", glcv_engine_mode_string(got.engine),
          glcv_engine_mode_string(engine));
    int ok = got.engine == engine;
    if (engine == GLCV_ENGINE_COMPUTE && ok) {
        int tiled = glcv_segment_tiled(seg);
        CHECK(tiled == !multipass, "compute mode runs the %s MRF, expected the %s one",
              tiled ? "tiled" : "one-dispatch-per-substep", multipass ? "one-dispatch-per-substep" : "tiled");
        ok = tiled == !multipass;
    }
    return ok;
}

void test_window_sums(const uint8_t *f, const uint8_t *b, int w, int h, int x, int y, int32_t out[3])
{
    out[0] = out[1] = out[2] = 0;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            int xx = x + dx, yy = y + dy;
            if (xx < 0 || yy < 0 || xx >= w || yy >= h)
                continue; /* outside the image counts as 0 */
            for (int c = 0; c < 3; c++) {
                int32_t fv = f[((size_t)yy * w + xx) * 3 + c], bv = b[((size_t)yy * w + xx) * 3 + c];
                out[0] += fv * fv;
                out[1] += bv * bv;
                out[2] += fv * bv;
            }
        }
}

double test_decision_x(int32_t fore, int32_t back, int32_t cross, double ts, double odc, double b)
{
    double det = (double)((int64_t)fore * back - (int64_t)cross * cross) +
                 odc * (double)((int64_t)fore + back - 2 * (int64_t)cross);
    double c = cross + odc;
    double lmax = 0.5 * ((fore + odc) + (back + odc) + sqrt((double)(fore - back) * (fore - back) + 4.0 * c * c));
    double d2 = lmax > 0 ? det / lmax : 0.0;
    return (ts + 12.0 * b - d2) / (2.0 * b);
}

uint64_t test_rand(uint64_t *state)
{
    uint64_t x = *state ? *state : 0x9E3779B97F4A7C15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

int test_count_nonzero(const uint8_t *m, size_t n)
{
    int k = 0;
    for (size_t i = 0; i < n; i++)
        k += m[i] != 0;
    return k;
}

int test_finish(const char *name)
{
    if (test_failures) {
        printf("%s: FAILED (%d checks)\n", name, test_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

glcv_image test_image_make(int w, int h, glcv_pixel_format fmt, size_t stride)
{
    glcv_image im = {0};
    size_t row = (size_t)w * (size_t)glcv_pixel_format_size(fmt);
    im.data = calloc((stride ? stride : row) * (size_t)h + 1, 1);
    if (!im.data) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    im.width = w;
    im.height = h;
    im.stride = stride;
    im.format = fmt;
    return im;
}

void test_image_release(glcv_image *im)
{
    free(im->data);
    memset(im, 0, sizeof *im);
}

void test_texture_upload(unsigned int tex, unsigned int internal, unsigned int format, int w, int h, const void *px,
                         int respecify)
{
    glBindTexture(GL_TEXTURE_2D, tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1); /* rows of any width are packed */
    if (respecify)
        glTexImage2D(GL_TEXTURE_2D, 0, (GLint)internal, w, h, 0, format, GL_UNSIGNED_BYTE, px);
    else
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, w, h, format, GL_UNSIGNED_BYTE, px);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glBindTexture(GL_TEXTURE_2D, 0);
}

unsigned int test_texture_make(unsigned int internal, unsigned int format, int w, int h, const void *px)
{
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    test_texture_upload(tex, internal, format, w, h, px, 1);
    return tex;
}

static void capture_fn(void *user, glcv_log_level level, const char *message)
{
    capture *c = user;
    (void)level;
    snprintf(c->last, sizeof c->last, "%s", message);
    c->count++;
}

glcv_logger capture_logger(capture *c)
{
    memset(c, 0, sizeof *c);
    glcv_logger lg = {capture_fn, c, GLCV_LOG_DEBUG};
    return lg;
}
