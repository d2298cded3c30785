/* The segmenter leaves the host's GL state as it found it (argv[1]: fragment or compute;
 * default fragment). Before the calls the host sets non-default state everywhere the
 * library's passes could touch: program, VAO, draw and read framebuffers, viewport, texture
 * units, a sampler, blend/scissor/depth/cull/sRGB, colour mask, polygon mode, pixel-store
 * parameters, pixel pack/unpack buffers, array buffer, and in compute mode image units.
 * Everything is snapshotted with glGet*, the calls run (create, host and texture inputs,
 * learning, mask texture, read-backs, timings, destroy), and the snapshot is compared field
 * by field. The host's unpack buffer and row length must not disturb the library's uploads
 * of host pixels, nor its pack state the read-backs: the masks are checked against the CPU
 * engine. */
#include "testutil.h"

#include <epoxy/gl.h>
#include <string.h>

static glcv_engine_mode g_mode = GLCV_ENGINE_FRAGMENT;

/* ---- snapshots ------------------------------------------------------------------------------ */

#define MAX_FIELDS 256

typedef struct field {
    char name[64];
    double v[4];
    int n;
} field;

typedef struct snapshot {
    field f[MAX_FIELDS];
    int count;
} snapshot;

static void put(snapshot *s, const char *name, const double *v, int n)
{
    if (s->count >= MAX_FIELDS)
        return;
    field *f = &s->f[s->count++];
    snprintf(f->name, sizeof f->name, "%s", name);
    f->n = n;
    for (int i = 0; i < 4; i++)
        f->v[i] = i < n ? v[i] : 0.0;
}

static void put_int(snapshot *s, const char *name, GLenum pname, int n)
{
    GLint v[4] = {-12345, -12345, -12345, -12345};
    glGetIntegerv(pname, v);
    double d[4];
    for (int i = 0; i < 4; i++)
        d[i] = v[i];
    put(s, name, d, n);
}

static void put_enabled(snapshot *s, const char *name, GLenum cap)
{
    double d = glIsEnabled(cap) ? 1.0 : 0.0;
    put(s, name, &d, 1);
}

static void put_indexed(snapshot *s, const char *name, GLenum pname, GLuint index)
{
    GLint v = -12345;
    glGetIntegeri_v(pname, index, &v);
    char nm[64];
    snprintf(nm, sizeof nm, "%s[%u]", name, index);
    double d = v;
    put(s, nm, &d, 1);
}

#define PUT_INT(s, pname, n) put_int(s, #pname, pname, n)
#define PUT_ENABLED(s, cap) put_enabled(s, #cap, cap)
#define PUT_INDEXED(s, pname, i) put_indexed(s, #pname, pname, i)

static void take_snapshot(snapshot *s, int compute)
{
    s->count = 0;
    PUT_INT(s, GL_CURRENT_PROGRAM, 1);
    PUT_INT(s, GL_VERTEX_ARRAY_BINDING, 1);
    PUT_INT(s, GL_COPY_READ_BUFFER_BINDING, 1);
    PUT_INT(s, GL_COPY_WRITE_BUFFER_BINDING, 1);
    PUT_INT(s, GL_TEXTURE_BUFFER_BINDING, 1);
    PUT_INT(s, GL_DRAW_FRAMEBUFFER_BINDING, 1);
    PUT_INT(s, GL_READ_FRAMEBUFFER_BINDING, 1);
    PUT_INT(s, GL_RENDERBUFFER_BINDING, 1);
    PUT_INT(s, GL_DRAW_BUFFER0, 1);
    PUT_INT(s, GL_READ_BUFFER, 1);
    PUT_INT(s, GL_VIEWPORT, 4);
    PUT_INT(s, GL_SCISSOR_BOX, 4);
    PUT_INT(s, GL_ACTIVE_TEXTURE, 1);
    PUT_INT(s, GL_POLYGON_MODE, 2);
    PUT_INT(s, GL_CULL_FACE_MODE, 1);
    PUT_INT(s, GL_FRONT_FACE, 1);
    PUT_INT(s, GL_DEPTH_FUNC, 1);
    PUT_INT(s, GL_BLEND_SRC_RGB, 1);
    PUT_INT(s, GL_BLEND_DST_RGB, 1);
    PUT_INT(s, GL_BLEND_SRC_ALPHA, 1);
    PUT_INT(s, GL_BLEND_DST_ALPHA, 1);
    PUT_INT(s, GL_BLEND_EQUATION_RGB, 1);
    PUT_INT(s, GL_BLEND_EQUATION_ALPHA, 1);
    PUT_INT(s, GL_UNPACK_ALIGNMENT, 1);
    PUT_INT(s, GL_UNPACK_ROW_LENGTH, 1);
    PUT_INT(s, GL_UNPACK_SKIP_ROWS, 1);
    PUT_INT(s, GL_UNPACK_SKIP_PIXELS, 1);
    PUT_INT(s, GL_UNPACK_IMAGE_HEIGHT, 1);
    PUT_INT(s, GL_UNPACK_SKIP_IMAGES, 1);
    PUT_INT(s, GL_UNPACK_SWAP_BYTES, 1);
    PUT_INT(s, GL_UNPACK_LSB_FIRST, 1);
    PUT_INT(s, GL_PACK_ALIGNMENT, 1);
    PUT_INT(s, GL_PACK_ROW_LENGTH, 1);
    PUT_INT(s, GL_PACK_SKIP_ROWS, 1);
    PUT_INT(s, GL_PACK_SKIP_PIXELS, 1);
    PUT_INT(s, GL_PACK_IMAGE_HEIGHT, 1);
    PUT_INT(s, GL_PACK_SKIP_IMAGES, 1);
    PUT_INT(s, GL_PACK_SWAP_BYTES, 1);
    PUT_INT(s, GL_PIXEL_UNPACK_BUFFER_BINDING, 1);
    PUT_INT(s, GL_PIXEL_PACK_BUFFER_BINDING, 1);
    PUT_INT(s, GL_ARRAY_BUFFER_BINDING, 1);
    PUT_INT(s, GL_ELEMENT_ARRAY_BUFFER_BINDING, 1);
    PUT_INT(s, GL_UNIFORM_BUFFER_BINDING, 1);
    PUT_INT(s, GL_COPY_READ_BUFFER_BINDING, 1);
    PUT_INT(s, GL_COPY_WRITE_BUFFER_BINDING, 1);
    PUT_INT(s, GL_TEXTURE_BUFFER, 1);
    PUT_INT(s, GL_TRANSFORM_FEEDBACK_BUFFER_BINDING, 1);
    PUT_INT(s, GL_SAMPLE_COVERAGE_VALUE, 1);
    for (GLuint i = 0; i < 4; i++)
        PUT_INDEXED(s, GL_UNIFORM_BUFFER_BINDING, i);
    PUT_ENABLED(s, GL_BLEND);
    PUT_ENABLED(s, GL_SCISSOR_TEST);
    PUT_ENABLED(s, GL_DEPTH_TEST);
    PUT_ENABLED(s, GL_STENCIL_TEST);
    PUT_ENABLED(s, GL_CULL_FACE);
    PUT_ENABLED(s, GL_FRAMEBUFFER_SRGB);
    PUT_ENABLED(s, GL_DITHER);
    PUT_ENABLED(s, GL_MULTISAMPLE);
    PUT_ENABLED(s, GL_RASTERIZER_DISCARD);
    PUT_ENABLED(s, GL_POLYGON_OFFSET_FILL);
    PUT_ENABLED(s, GL_PRIMITIVE_RESTART);
    PUT_ENABLED(s, GL_SAMPLE_ALPHA_TO_COVERAGE);
    PUT_ENABLED(s, GL_PROGRAM_POINT_SIZE);
    {
        GLboolean cm[4] = {9, 9, 9, 9}, dm = 9;
        glGetBooleanv(GL_COLOR_WRITEMASK, cm);
        glGetBooleanv(GL_DEPTH_WRITEMASK, &dm);
        double d[4] = {cm[0], cm[1], cm[2], cm[3]}, e = dm;
        put(s, "GL_COLOR_WRITEMASK", d, 4);
        put(s, "GL_DEPTH_WRITEMASK", &e, 1);
        GLfloat cc[4] = {-1, -1, -1, -1};
        glGetFloatv(GL_COLOR_CLEAR_VALUE, cc);
        double c2[4] = {cc[0], cc[1], cc[2], cc[3]};
        put(s, "GL_COLOR_CLEAR_VALUE", c2, 4);
        GLfloat bc[4] = {-1, -1, -1, -1};
        glGetFloatv(GL_BLEND_COLOR, bc);
        double b2[4] = {bc[0], bc[1], bc[2], bc[3]};
        put(s, "GL_BLEND_COLOR", b2, 4);
    }
    {
        GLint q = -12345;
        glGetQueryiv(GL_TIME_ELAPSED, GL_CURRENT_QUERY, &q);
        double d = q;
        put(s, "GL_CURRENT_QUERY(GL_TIME_ELAPSED)", &d, 1);
    }
    /* Texture units: bindings and samplers, then the active unit restored. */
    GLint active = 0;
    glGetIntegerv(GL_ACTIVE_TEXTURE, &active);
    static const struct {
        GLenum pname;
        const char *name;
    } per_unit[] = {{GL_TEXTURE_BINDING_2D, "GL_TEXTURE_BINDING_2D"},
                    {GL_TEXTURE_BINDING_2D_ARRAY, "GL_TEXTURE_BINDING_2D_ARRAY"},
                    {GL_TEXTURE_BINDING_3D, "GL_TEXTURE_BINDING_3D"},
                    {GL_TEXTURE_BINDING_BUFFER, "GL_TEXTURE_BINDING_BUFFER"},
                    {GL_SAMPLER_BINDING, "GL_SAMPLER_BINDING"}};
    for (int u = 0; u < 16; u++) {
        glActiveTexture((GLenum)(GL_TEXTURE0 + u));
        for (size_t k = 0; k < sizeof per_unit / sizeof per_unit[0]; k++) {
            GLint v = -1;
            glGetIntegerv(per_unit[k].pname, &v);
            char nm[64];
            snprintf(nm, sizeof nm, "%s[unit %d]", per_unit[k].name, u);
            double d = v;
            put(s, nm, &d, 1);
        }
    }
    glActiveTexture((GLenum)active);
    if (compute) {
        PUT_INT(s, GL_SHADER_STORAGE_BUFFER_BINDING, 1);
        PUT_INT(s, GL_DISPATCH_INDIRECT_BUFFER_BINDING, 1);
        PUT_INT(s, GL_ATOMIC_COUNTER_BUFFER_BINDING, 1);
        for (GLuint i = 0; i < 8; i++) {
            PUT_INDEXED(s, GL_IMAGE_BINDING_NAME, i);
            PUT_INDEXED(s, GL_IMAGE_BINDING_LEVEL, i);
            PUT_INDEXED(s, GL_IMAGE_BINDING_LAYERED, i);
            PUT_INDEXED(s, GL_IMAGE_BINDING_LAYER, i);
            PUT_INDEXED(s, GL_IMAGE_BINDING_ACCESS, i);
            PUT_INDEXED(s, GL_IMAGE_BINDING_FORMAT, i);
            PUT_INDEXED(s, GL_SHADER_STORAGE_BUFFER_BINDING, i);
        }
    }
}

static int compare_snapshots(const snapshot *a, const snapshot *b, const char *when)
{
    int diffs = 0;
    for (int i = 0; i < a->count && i < b->count; i++) {
        const field *x = &a->f[i], *y = &b->f[i];
        if (memcmp(x->v, y->v, sizeof x->v) == 0)
            continue;
        diffs++;
        fprintf(stderr, "%s: %s changed from", when, x->name);
        for (int k = 0; k < x->n; k++)
            fprintf(stderr, " %g", x->v[k]);
        fprintf(stderr, " to");
        for (int k = 0; k < y->n; k++)
            fprintf(stderr, " %g", y->v[k]);
        fputc('\n', stderr);
    }
    CHECK(a->count == b->count, "%s: snapshot sizes differ (%d vs %d)", when, a->count, b->count);
    CHECK(diffs == 0, "%s: %d GL state fields changed (listed above)", when, diffs);
    return diffs;
}

/* ---- host objects --------------------------------------------------------------------------- */

static GLuint compile(GLenum type, const char *src)
{
    GLuint sh = glCreateShader(type);
    glShaderSource(sh, 1, &src, NULL);
    glCompileShader(sh);
    GLint ok = 0;
    glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[1024];
        glGetShaderInfoLog(sh, sizeof log, NULL, log);
        fprintf(stderr, "host shader: %s\n", log);
    }
    CHECK(ok, "the host's own shader did not compile");
    return sh;
}

static GLuint host_program(void)
{
    GLuint vs = compile(GL_VERTEX_SHADER, "#version 330 core\nlayout(location = 0) in vec2 p;\n"
                                          "void main() { gl_Position = vec4(p, 0.0, 1.0); }\n");
    GLuint fs = compile(GL_FRAGMENT_SHADER,
                        "#version 330 core\nout vec4 c;\nvoid main() { c = vec4(1.0, 0.5, 0.25, 1.0); }\n");
    GLuint prog = glCreateProgram();
    glAttachShader(prog, vs);
    glAttachShader(prog, fs);
    glLinkProgram(prog);
    GLint ok = 0;
    glGetProgramiv(prog, GL_LINK_STATUS, &ok);
    CHECK(ok, "the host's own program did not link");
    glDeleteShader(vs);
    glDeleteShader(fs);
    return prog;
}

static GLuint host_texture(GLenum internal, int w, int h)
{
    GLuint t = 0;
    glGenTextures(1, &t);
    glBindTexture(GL_TEXTURE_2D, t);
    glTexImage2D(GL_TEXTURE_2D, 0, (GLint)internal, w, h, 0, internal == GL_R32F ? GL_RED : GL_RGBA,
                 internal == GL_R32F ? GL_FLOAT : GL_UNSIGNED_BYTE, NULL);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glBindTexture(GL_TEXTURE_2D, 0);
    return t;
}

static GLuint rgba_texture(const uint8_t *rgb, int w, int h)
{
    uint8_t *px = malloc((size_t)w * h * 4);
    for (size_t i = 0; i < (size_t)w * h; i++) {
        memcpy(px + i * 4, rgb + i * 3, 3);
        px[i * 4 + 3] = 255;
    }
    GLuint t = 0;
    glGenTextures(1, &t);
    glBindTexture(GL_TEXTURE_2D, t);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, px);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glBindTexture(GL_TEXTURE_2D, 0);
    free(px);
    return t;
}

static GLuint host_fbo(GLuint color)
{
    GLuint fbo = 0;
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, color, 0);
    GLenum st = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    CHECK(st == GL_FRAMEBUFFER_COMPLETE, "the host's FBO is incomplete (0x%x)", st);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    return fbo;
}

/* ---- scene ---------------------------------------------------------------------------------- */

static void make_scene(int w, int h, uint8_t *bg, uint8_t *f1, uint8_t *f2)
{
    uint64_t rng = 99;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < 3; c++) {
                size_t i = ((size_t)y * w + x) * 3 + c;
                bg[i] = (uint8_t)(60 + (x * 3 + y * 2 + c * 40) % 120 + test_rand(&rng) % 20);
                f1[i] = bg[i];
                f2[i] = bg[i];
                if (x >= 8 && x < 24 && y >= 6 && y < 20)
                    f1[i] = (uint8_t)(c == 0 ? 240 : 20);
                if (x >= 14 && x < 34 && y >= 12 && y < 26)
                    f2[i] = (uint8_t)(c == 2 ? 230 : 15);
            }
}

/* A host image with padded rows from packed RGB. */
static glcv_image padded(const uint8_t *rgb, int w, int h, glcv_pixel_format fmt)
{
    int bpp = glcv_pixel_format_size(fmt);
    glcv_image im = {0};
    im.width = w;
    im.height = h;
    im.format = fmt;
    im.stride = (size_t)w * bpp + 12;
    im.data = calloc(im.stride * h, 1);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = im.data + (size_t)y * im.stride + (size_t)x * bpp;
            memcpy(p, rgb + ((size_t)y * w + x) * 3, 3);
            if (bpp == 4)
                p[3] = 255;
        }
    return im;
}

static void mask_compare(const uint8_t *a, const uint8_t *b, int w, int h, const char *what)
{
    int bad = 0;
    for (int i = 0; i < w * h; i++)
        if (a[i] != b[i] && bad++ < 5)
            fprintf(stderr, "%s (%d, %d): %d, CPU engine %d\n", what, i % w, i / w, a[i], b[i]);
    CHECK(bad == 0, "%s: %d mask pixels differ from the CPU engine", what, bad);
    int on = 0;
    for (int i = 0; i < w * h; i++)
        on += b[i] != 0;
    CHECK(on > 0, "%s: the reference mask is empty, the comparison proves little", what);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "fragment";
    if (strcmp(mode, "fragment") == 0) {
        g_mode = GLCV_ENGINE_FRAGMENT;
    } else if (strcmp(mode, "compute") == 0) {
        g_mode = GLCV_ENGINE_COMPUTE;
    } else {
        fprintf(stderr, "usage: %s [fragment|compute]\n", argv[0]);
        return 2;
    }
    const int compute = g_mode == GLCV_ENGINE_COMPUTE;
    glcv_context *ctx = test_context_or_skip(compute ? 43 : 33);
    printf("engine: %s\n", mode);

    const int w = 45, h = 31; /* odd width: row alignment matters */
    const size_t n = (size_t)w * h;
    uint8_t *bg = malloc(n * 3), *f1 = malloc(n * 3), *f2 = malloc(n * 3);
    make_scene(w, h, bg, f1, f2);
    glcv_image bg_img = padded(bg, w, h, GLCV_PIXEL_RGB8);
    glcv_image f1_img = padded(f1, w, h, GLCV_PIXEL_RGBA8);
    glcv_image f2_img = padded(f2, w, h, GLCV_PIXEL_RGB8);

    /* Host objects, made while the state is still default. */
    GLuint bg_tex = rgba_texture(bg, w, h), f2_tex = rgba_texture(f2, w, h);
    GLuint prog = host_program();
    GLuint vao = 0, bufs[4] = {0};
    glGenVertexArrays(1, &vao);
    glGenBuffers(4, bufs);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, bufs[0]);
    glBufferData(GL_PIXEL_UNPACK_BUFFER, 1024, NULL, GL_STREAM_DRAW);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, bufs[1]);
    glBufferData(GL_PIXEL_PACK_BUFFER, 1024, NULL, GL_STREAM_READ);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    glBindBuffer(GL_ARRAY_BUFFER, bufs[2]);
    glBufferData(GL_ARRAY_BUFFER, 64, NULL, GL_STATIC_DRAW);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
    GLuint unit_tex[8];
    for (int u = 0; u < 8; u++)
        unit_tex[u] = host_texture(GL_RGBA8, 8 + u, 8);
    GLuint draw_color = host_texture(GL_RGBA8, 64, 64), read_color = host_texture(GL_RGBA8, 32, 32);
    GLuint draw_fbo = host_fbo(draw_color), read_fbo = host_fbo(read_color);
    GLuint sampler = 0;
    glGenSamplers(1, &sampler);
    glSamplerParameteri(sampler, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    /* Inputs the segmenter must refuse: a texture of the wrong size and a 3D texture. */
    GLuint small_tex = host_texture(GL_RGBA8, w - 1, h), tex3d = 0;
    glGenTextures(1, &tex3d);
    glBindTexture(GL_TEXTURE_3D, tex3d);
    glTexImage3D(GL_TEXTURE_3D, 0, GL_RGBA8, w, h, 2, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
    glBindTexture(GL_TEXTURE_3D, 0);
    /* A texture array and a buffer texture the host keeps bound on every unit. */
    GLuint array_tex = 0, buffer_tex = 0;
    glGenTextures(1, &array_tex);
    glBindTexture(GL_TEXTURE_2D_ARRAY, array_tex);
    glTexImage3D(GL_TEXTURE_2D_ARRAY, 0, GL_RGBA8, 4, 4, 2, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
    glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
    glGenTextures(1, &buffer_tex);
    glBindTexture(GL_TEXTURE_BUFFER, buffer_tex);
    glTexBuffer(GL_TEXTURE_BUFFER, GL_R32UI, bufs[2]);
    glBindTexture(GL_TEXTURE_BUFFER, 0);
    GLuint img0 = 0, img1 = 0;
    if (compute) {
        img0 = host_texture(GL_RGBA8, 16, 16);
        img1 = host_texture(GL_R32F, 16, 16);
    }
    GLenum err = glGetError();
    CHECK(err == GL_NO_ERROR, "GL error 0x%x while making the host's objects", err);

    /* The host's non-default state. */
    glUseProgram(prog);
    glBindVertexArray(vao);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, bufs[3]);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, draw_fbo);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, read_fbo);
    glViewport(3, 4, 50, 60);
    for (int u = 0; u < 8; u++) {
        glActiveTexture((GLenum)(GL_TEXTURE0 + u));
        glBindTexture(GL_TEXTURE_2D, unit_tex[u]);
        glBindTexture(GL_TEXTURE_2D_ARRAY, array_tex);
        glBindTexture(GL_TEXTURE_BUFFER, buffer_tex);
    }
    glBindBuffer(GL_COPY_READ_BUFFER, bufs[2]);
    glBindBuffer(GL_COPY_WRITE_BUFFER, bufs[0]);
    glBindBuffer(GL_TEXTURE_BUFFER, bufs[1]);
    glBindSampler(2, sampler);
    glActiveTexture(GL_TEXTURE5);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glBlendEquation(GL_FUNC_REVERSE_SUBTRACT);
    glBlendColor(0.1f, 0.2f, 0.3f, 0.4f);
    glEnable(GL_SCISSOR_TEST);
    glScissor(1, 2, 5, 6);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_GREATER);
    glDepthMask(GL_FALSE);
    glEnable(GL_CULL_FACE);
    glCullFace(GL_FRONT_AND_BACK);
    glFrontFace(GL_CW);
    glColorMask(GL_TRUE, GL_FALSE, GL_TRUE, GL_FALSE);
    glClearColor(0.25f, 0.5f, 0.75f, 0.125f);
    glPolygonMode(GL_FRONT_AND_BACK, GL_LINE);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 7);
    glPixelStorei(GL_UNPACK_SKIP_ROWS, 1);
    glPixelStorei(GL_PACK_ALIGNMENT, 2);
    glPixelStorei(GL_PACK_ROW_LENGTH, 5);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, bufs[0]);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, bufs[1]);
    glBindBuffer(GL_ARRAY_BUFFER, bufs[2]);
    glBindBuffer(GL_UNIFORM_BUFFER, bufs[2]);
    glEnable(GL_FRAMEBUFFER_SRGB);
    glDisable(GL_DITHER);
    if (compute) {
        glBindImageTexture(0, img0, 0, GL_FALSE, 0, GL_READ_WRITE, GL_RGBA8);
        glBindImageTexture(1, img1, 0, GL_FALSE, 0, GL_READ_ONLY, GL_R32F);
        for (GLuint i = 0; i < 8; i++) /* the indexed storage bindings glcv's passes use */
            glBindBufferRange(GL_SHADER_STORAGE_BUFFER, i, bufs[2], 0, 16 + 16 * (GLsizeiptr)i);
        glBindBuffer(GL_SHADER_STORAGE_BUFFER, bufs[2]);
        glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, bufs[1]);
    }
    err = glGetError();
    CHECK(err == GL_NO_ERROR, "GL error 0x%x while setting the host's state", err);

    snapshot *before = malloc(sizeof *before), *after = malloc(sizeof *after);
    take_snapshot(before, compute);

    /* The CPU engine gives the reference masks; it uses no GL for host images. */
    glcv_segment_params p = {0};
    p.width = w;
    p.height = h;
    p.logger = test_logger();
    p.engine = GLCV_ENGINE_CPU;
    p.preset = GLCV_SEGMENT_PAPER;
    glcv_segment *ref = NULL, *gpu = NULL, *cpu_tex = NULL;
    CHECK_OK(glcv_segment_create(&p, &ref));
    CHECK_OK(glcv_segment_create(&p, &cpu_tex));
    p.engine = g_mode;
    p.timing = 1;
    CHECK_OK(glcv_segment_create(&p, &gpu));
    if (gpu) /* the engine under test, not a fallback */
        test_segment_on_path(gpu, g_mode, 0);
    if (!ref || !gpu || !cpu_tex) {
        glcv_segment_destroy(&ref);
        glcv_segment_destroy(&gpu);
        glcv_segment_destroy(&cpu_tex);
        glcv_context_destroy(&ctx);
        return test_finish("test_glstate");
    }
    uint8_t *mg = malloc(n), *mr = malloc(n);
    glcv_image mg_img = {mg, w, h, 0, GLCV_PIXEL_GRAY8}, mr_img = {mr, w, h, 0, GLCV_PIXEL_GRAY8};
    int32_t *q = malloc(n * 12);
    uint8_t *t1 = malloc(n), *t2 = malloc(n);

    /* 1: host background and frame. */
    CHECK_OK(glcv_segment_set_background(gpu, &bg_img));
    CHECK_OK(glcv_segment_set_background(ref, &bg_img));
    CHECK_OK(glcv_segment_frame(gpu, &f1_img, 1));
    CHECK_OK(glcv_segment_frame(ref, &f1_img, 1));
    CHECK_OK(glcv_segment_read_mask(gpu, &mg_img));
    CHECK_OK(glcv_segment_read_mask(ref, &mr_img));
    mask_compare(mg, mr, w, h, "host frame 1");

    /* 2: a texture frame without waiting; the mask texture; read-back. */
    CHECK_OK(glcv_segment_frame_texture(gpu, f2_tex, 0));
    CHECK_OK(glcv_segment_frame(ref, &f2_img, 1));
    GLuint mt = glcv_segment_mask_texture(gpu);
    CHECK(mt != 0, "mask_texture returned 0");
    CHECK_OK(glcv_segment_read_mask(gpu, &mg_img));
    CHECK_OK(glcv_segment_read_mask(ref, &mr_img));
    mask_compare(mg, mr, w, h, "texture frame 2");

    /* 3: learning from a host frame and a texture. */
    CHECK_OK(glcv_segment_learn_begin(gpu));
    CHECK_OK(glcv_segment_learn_add(gpu, &bg_img));
    CHECK_OK(glcv_segment_learn_add_texture(gpu, f2_tex));
    CHECK_OK(glcv_segment_learn_add(gpu, &f1_img));
    CHECK_OK(glcv_segment_learn_end(gpu));
    CHECK_OK(glcv_segment_learn_begin(ref));
    CHECK_OK(glcv_segment_learn_add(ref, &bg_img));
    CHECK_OK(glcv_segment_learn_add(ref, &f2_img));
    CHECK_OK(glcv_segment_learn_add(ref, &f1_img));
    CHECK_OK(glcv_segment_learn_end(ref));
    {
        glcv_image b1 = {malloc(n * 4), w, h, 0, GLCV_PIXEL_RGBA8}, b2 = {malloc(n * 4), w, h, 0, GLCV_PIXEL_RGBA8};
        CHECK_OK(glcv_segment_read_background(gpu, &b1));
        CHECK_OK(glcv_segment_read_background(ref, &b2));
        int bad = 0;
        for (size_t i = 0; i < n * 4; i++)
            if (b1.data[i] != b2.data[i] && bad++ < 5)
                fprintf(stderr, "learned background (%d, %d) channel %d: %d, CPU engine %d\n", (int)(i / 4 % w),
                        (int)(i / 4 / w), (int)(i % 4), b1.data[i], b2.data[i]);
        CHECK(bad == 0, "learned background differs from the CPU engine at %d values", bad);
        free(b1.data);
        free(b2.data);
    }
    CHECK_OK(glcv_segment_frame(gpu, &f2_img, 1));
    CHECK_OK(glcv_segment_frame(ref, &f2_img, 1));
    CHECK_OK(glcv_segment_read_mask(gpu, &mg_img));
    CHECK_OK(glcv_segment_read_mask(ref, &mr_img));
    mask_compare(mg, mr, w, h, "frame 3 on the learned background");

    /* 4: background from a texture, diagnostics, timings. */
    CHECK_OK(glcv_segment_set_background_texture(gpu, bg_tex));
    CHECK_OK(glcv_segment_set_background(ref, &bg_img));
    CHECK_OK(glcv_segment_frame(gpu, &f1_img, 0));
    CHECK_OK(glcv_segment_frame(ref, &f1_img, 1));
    CHECK_OK(glcv_segment_read_qualifiers(gpu, q, q + n, q + 2 * n));
    CHECK_OK(glcv_segment_read_thresholds(gpu, t1, t2));
    CHECK_OK(glcv_segment_read_mask(gpu, &mg_img));
    CHECK_OK(glcv_segment_read_mask(ref, &mr_img));
    mask_compare(mg, mr, w, h, "frame 4 on a texture background");
    glcv_timing tm[8];
    int count = 0;
    CHECK_OK(glcv_segment_timings(gpu, tm, 8, &count, 1));
    GLint timer_bits = 0;
    glGetQueryiv(GL_TIME_ELAPSED, GL_QUERY_COUNTER_BITS, &timer_bits);
    CHECK(timer_bits == 0 || count >= 2, "timings of frame 4: %d entries, expected the threshold and MRF passes at least",
          count);
    CHECK_OK(glcv_segment_reset(gpu));

    /* 5: the CPU engine's texture paths use GL too. */
    CHECK_OK(glcv_segment_set_background_texture(cpu_tex, bg_tex));
    CHECK_OK(glcv_segment_frame_texture(cpu_tex, f2_tex, 1));
    GLuint cmt = glcv_segment_mask_texture(cpu_tex);
    CHECK(cmt != 0, "CPU engine mask_texture returned 0");
    CHECK_OK(glcv_segment_read_mask(cpu_tex, &mg_img));

    /* 6: background subtraction of three streams (compute: streamed in blocks, fused, masks
     * downloaded; its passes use storage bindings 0..6), masks mapped. */
    {
        glcv_bgsub *bs = NULL;
        glcv_bgsub_params bp = GLCV_BGSUB_PARAMS(.width = w - w % 4, .height = h, .streams = 3, .engine = g_mode,
                                                 .download = 1, .logger = test_logger());
        CHECK_OK(glcv_bgsub_create(&bp, &bs));
        glcv_image sf[3], sm[3];
        for (int k = 0; k < 4 && bs; k++) {
            CHECK_OK(glcv_bgsub_map_frames(bs, sf, 3));
            for (int i = 0; i < 3; i++)
                for (int y = 0; y < h; y++)
                    memset(sf[i].data + (size_t)y * sf[i].stride, (k * 40 + i * 7 + y) & 255, (size_t)sf[i].width * 3);
            CHECK_OK(glcv_bgsub_frames_mapped(bs, 0));
            if (k >= 1)
                CHECK_OK(glcv_bgsub_map_masks(bs, 1, sm, 3));
        }
        if (bs)
            CHECK(glcv_bgsub_mask_texture(bs) != 0, "bgsub: no mask texture");
        glcv_bgsub_destroy(&bs);
    }

    /* 7: frame-delta coding (compute: an indirect dispatch, storage bindings 0..7), a host frame,
     * a mapped one and a texture. */
    {
        glcv_delta *dl = NULL;
        CHECK_OK(glcv_delta_create(&GLCV_DELTA_PARAMS(.width = w, .height = h, .format = GLCV_PIXEL_RGBA8,
                                                      .engine = g_mode, .logger = test_logger()),
                                   &dl));
        const uint8_t *pk = NULL;
        size_t pn = 0;
        glcv_image mf;
        for (int k = 0; k < 3 && dl; k++) {
            CHECK_OK(glcv_delta_map_frame(dl, &mf));
            for (int y = 0; y < h; y++)
                memset(mf.data + (size_t)y * mf.stride, (k * 50 + y) & 255, (size_t)w * 4);
            CHECK_OK(glcv_delta_encode_mapped(dl, NULL, 0, &pk, &pn));
        }
        if (dl) {
            CHECK_OK(glcv_delta_encode(dl, &f1_img, NULL, 0, &pk, &pn));
            CHECK_OK(glcv_delta_encode_texture(dl, f2_tex, 0, 0, &pk, &pn));
        }
        glcv_delta_destroy(&dl);
    }

    err = glGetError();
    CHECK(err == GL_NO_ERROR, "GL error 0x%x after the segmenter calls", err);
    take_snapshot(after, compute);
    compare_snapshots(before, after, "after the segmenter calls");

    /* Error paths restore the state too, and leave no GL error behind. */
    CHECK_STATUS(glcv_segment_frame_texture(gpu, small_tex, 1), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_STATUS(glcv_segment_set_background_texture(gpu, tex3d), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_frame_texture(gpu, 0x7ffff123u, 1), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_frame_texture(cpu_tex, small_tex, 1), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_STATUS(glcv_segment_set_background_texture(cpu_tex, tex3d), GLCV_ERROR_INVALID_ARGUMENT);
    {
        GLint maxsz = 0;
        glGetIntegerv(GL_MAX_TEXTURE_SIZE, &maxsz);
        glcv_segment_params bad = p;
        bad.width = maxsz + 1;
        glcv_segment *none = NULL;
        CHECK_STATUS(glcv_segment_create(&bad, &none), GLCV_ERROR_UNSUPPORTED);
    }
    err = glGetError();
    CHECK(err == GL_NO_ERROR, "GL error 0x%x left behind by failing segmenter calls", err);
    take_snapshot(after, compute);
    compare_snapshots(before, after, "after failing calls");

    /* Destroying GPU objects restores the state too. */
    glcv_segment_destroy(&gpu);
    glcv_segment_destroy(&cpu_tex);
    err = glGetError();
    CHECK(err == GL_NO_ERROR, "GL error 0x%x after destroy", err);
    take_snapshot(after, compute);
    compare_snapshots(before, after, "after destroy");

    /* Background subtraction: every call that touches GL, both uploads, with downloads. */
    for (int up = 0; up < 2; up++) {
        glcv_bgsub_params bp = GLCV_BGSUB_PARAMS(.width = w, .height = h, .streams = 2, .engine = g_mode,
                                                 .download = 1, .timing = 1, .logger = test_logger());
        bp.upload = up ? GLCV_BGSUB_UPLOAD_STREAM : GLCV_BGSUB_UPLOAD_COPY;
        if (up && (!compute || epoxy_gl_version() < 44))
            continue;
        glcv_bgsub *b = NULL;
        CHECK_OK(glcv_bgsub_create(&bp, &b));
        glcv_image set[2] = {f1_img, f2_img}, masks[2], mapped[2];
        uint8_t *mbuf = malloc(n * 2);
        uint16_t *state = malloc(n * 3 * sizeof *state);
        for (int i = 0; i < 2; i++)
            masks[i] = (glcv_image){mbuf + n * (size_t)i, w, h, 0, GLCV_PIXEL_GRAY8};
        CHECK_OK(glcv_bgsub_learn_begin(b));
        CHECK_OK(glcv_bgsub_learn_add(b, set, 2));
        CHECK_OK(glcv_bgsub_learn_end(b));
        for (int t = 0; t < 3; t++) {
            CHECK_OK(glcv_bgsub_map_frames(b, mapped, 2));
            if (mapped[0].data) {
                glcv_image_convert(&f2_img, &mapped[0]);
                glcv_image_convert(&f1_img, &mapped[1]);
            }
            CHECK_OK(glcv_bgsub_frames_mapped(b, 0));
            CHECK_OK(glcv_bgsub_frames(b, set, 2, t == 2));
        }
        CHECK_OK(glcv_bgsub_read_masks(b, 1, masks, 2));
        CHECK_OK(glcv_bgsub_map_masks(b, 0, mapped, 2));
        CHECK_OK(glcv_bgsub_read_state(b, 1, state, state));
        CHECK(glcv_bgsub_mask_texture(b) != 0, "bgsub: no mask texture");
        glcv_timing bt[8];
        int bn = 0;
        CHECK_OK(glcv_bgsub_timings(b, bt, 8, &bn, 1));
        glcv_bgsub_destroy(&b);
        free(mbuf);
        free(state);
        err = glGetError();
        CHECK(err == GL_NO_ERROR, "GL error 0x%x after bgsub calls", err);
        take_snapshot(after, compute);
        compare_snapshots(before, after, up ? "after bgsub (streamed upload)" : "after bgsub");
    }

    /* Creating a segmenter in this state, with nothing else, restores it as well. */
    glcv_segment *again = NULL;
    p.timing = 0;
    CHECK_OK(glcv_segment_create(&p, &again));
    if (again)
        test_segment_on_path(again, g_mode, 0);
    take_snapshot(after, compute);
    compare_snapshots(before, after, "after create");
    glcv_segment_destroy(&again);

    glcv_segment_destroy(&ref);
    free(before);
    free(after);
    free(mg);
    free(mr);
    free(q);
    free(t1);
    free(t2);
    free(bg);
    free(f1);
    free(f2);
    free(bg_img.data);
    free(f1_img.data);
    free(f2_img.data);
    glcv_context_destroy(&ctx);
    char name[64];
    snprintf(name, sizeof name, "test_glstate (%s)", mode);
    return test_finish(name);
}
