/* The frame-delta encoder's GL engines against its CPU engine (argv[1]: fragment or compute): the
 * same frames, masks and keyframe requests give the same packets, byte for byte, and the same
 * reference, for every pixel format, threshold and layout, from host frames (in the stream's format
 * or converted) and from textures, with host and texture masks. argv[2] "gl43": the context must be
 * GL 4.3 (MESA_GL_VERSION_OVERRIDE), where the compute engine reads its packets back. */
#include <glcv/glcv.h>

#include "testutil.h"

#include <epoxy/gl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A frame of a scene: a textured background, two moving rectangles, sensor noise; `cut` frames
 * are noise everywhere (most bytes change: a keyframe); `still` repeats the frame before. */
static void scene(uint8_t *rgba, int w, int h, int t, uint64_t *rng)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = rgba + 4 * ((size_t)y * w + x);
            int bg = 60 + (x * 3 + y * 5) % 80 + (t >= 20 ? 25 : 0); /* a brightness change at 20 */
            int in1 = x >= 2 + t % (w > 8 ? w - 6 : 1) && x < 6 + t % (w > 8 ? w - 6 : 1) && y >= h / 4 &&
                      y < h / 4 + 3;
            int in2 = (x - t / 2) % 9 == 0 && y % 7 < 3;
            for (int c = 0; c < 4; c++) {
                int v = in1 ? 200 + 20 * c : in2 ? 30 * c : bg + c * 7;
                v += (int)(test_rand(rng) % 5) - 2; /* noise of +-2 */
                if (t == 27)
                    v = (int)(test_rand(rng) & 255); /* a scene cut */
                p[c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
}

typedef struct run {
    int w, h;
    glcv_pixel_format stream;   /* the stream's format */
    glcv_pixel_format input;    /* the frames' format (host) */
    int threshold;              /* 0: the default */
    glcv_delta_layout layout;
    int mask;                   /* 0 none, 1 host, 2 texture */
    int texture;                /* frames as textures; -1: written into glcv_delta_map_frame's memory */
    int frames;
} run;

static int compare_packets(const char *what, int f, const uint8_t *a, size_t na, const uint8_t *b, size_t nb)
{
    if (na == nb && memcmp(a, b, na) == 0)
        return 0;
    size_t i = 0;
    while (i < na && i < nb && a[i] == b[i])
        i++;
    glcv_delta_header ha, hb;
    int ok = glcv_delta_header_parse(a, na, &ha, NULL) == GLCV_OK && glcv_delta_header_parse(b, nb, &hb, NULL) == GLCV_OK;
    fprintf(stderr,
            "%s: frame %d: packets differ: GL %zu bytes, CPU %zu, first difference at byte %zu (GL %d, CPU %d)%s\n",
            what, f, na, nb, i, i < na ? a[i] : -1, i < nb ? b[i] : -1, i < 64 ? " (header)" : "");
    if (ok)
        fprintf(stderr, "  GL: key %d layout %d records %u payload %u; CPU: key %d layout %d records %u payload %u\n",
                ha.key, (int)ha.layout, ha.records, ha.payload_bytes, hb.key, (int)hb.layout, hb.records,
                hb.payload_bytes);
    size_t j = 64, diffs = 0;
    for (size_t k = 64; k < na && k < nb; k++)
        if (a[k] != b[k] && diffs++ == 0)
            j = k;
    if (diffs)
        fprintf(stderr, "  payload: %zu bytes differ, the first at payload byte %zu (GL %d, CPU %d)\n", diffs, j - 64,
                a[j], b[j]);
    return 1;
}

static void check_run(glcv_engine_mode engine, const run *r)
{
    char what[200];
    snprintf(what, sizeof what, "%s %dx%d stream %d input %d%s threshold %d layout %d mask %d", glcv_engine_mode_string(engine),
             r->w, r->h, (int)r->stream, (int)r->input, r->texture ? " (texture)" : "", r->threshold, (int)r->layout,
             r->mask);
    glcv_delta_params p = GLCV_DELTA_PARAMS(.width = r->w, .height = r->h, .format = r->stream,
                                            .threshold = r->threshold, .keyframe_interval = 13, .layout = r->layout,
                                            .timing = 1, .logger = test_logger());
    glcv_delta *gpu = NULL, *cpu = NULL;
    p.engine = engine;
    CHECK_OK(glcv_delta_create(&p, &gpu));
    p.engine = GLCV_ENGINE_CPU;
    CHECK_OK(glcv_delta_create(&p, &cpu));
    if (!gpu || !cpu) {
        glcv_delta_destroy(&gpu);
        glcv_delta_destroy(&cpu);
        return;
    }
    glcv_delta_params got;
    CHECK_OK(glcv_delta_get_params(gpu, &got));
    CHECK(got.engine == engine, "%s: engine in use %s", what, glcv_engine_mode_string(got.engine));
    size_t px = (size_t)r->w * r->h;
    uint8_t *rgba = malloc(px * 4), *m = malloc(px);
    glcv_image in = test_image_make(r->w, r->h, r->input, (size_t)r->w * glcv_pixel_format_size(r->input) + 3);
    glcv_image rgba_im = {rgba, r->w, r->h, 0, GLCV_PIXEL_RGBA8};
    glcv_image mask = {m, r->w, r->h, 0, GLCV_PIXEL_GRAY8};
    int bpp = glcv_pixel_format_size(r->stream);
    glcv_image ref_g = test_image_make(r->w, r->h, r->stream, 0), ref_c = test_image_make(r->w, r->h, r->stream, 0);
    GLuint tex = 0, mtex = 0;
    uint8_t *cpu_packet = NULL;
    uint64_t rng = 0x5EED + (uint64_t)r->w * 31 + (uint64_t)r->stream;
    int bad = 0;
    for (int f = 0; f < r->frames && !bad; f++) {
        scene(rgba, r->w, r->h, f, &rng);
        for (size_t i = 0; i < px; i++)
            m[i] = (uint8_t)((i * 7 + (size_t)f) % 5 == 0 ? 0 : 255);
        glcv_image_convert(&rgba_im, &in);
        int flags = f == 9 ? GLCV_DELTA_FORCE_KEY : 0;
        const uint8_t *pg = NULL, *pc = NULL;
        size_t ng = 0, nc = 0;
        glcv_status sg, sc;
        if (r->texture) {
            if (!tex)
                tex = test_texture_make(GL_RGBA8, GL_RGBA, r->w, r->h, rgba);
            else
                test_texture_upload(tex, GL_RGBA8, GL_RGBA, r->w, r->h, rgba, 0);
        }
        if (r->mask == 2) {
            if (!mtex)
                mtex = test_texture_make(GL_R8, GL_RED, r->w, r->h, m);
            else
                test_texture_upload(mtex, GL_R8, GL_RED, r->w, r->h, m, 0);
        }
        glcv_image mapped;
        if (r->texture < 0) { /* the stream's format, written into the encoder's memory */
            CHECK_OK(glcv_delta_map_frame(cpu, &mapped));
            glcv_image_convert(&in, &mapped);
            sc = glcv_delta_encode_mapped(cpu, r->mask ? &mask : NULL, flags, &pc, &nc);
        } else if (r->texture) { /* (a texture mask goes with texture frames) */
            sc = glcv_delta_encode_texture(cpu, tex, mtex, flags, &pc, &nc);
        } else {
            sc = glcv_delta_encode(cpu, &in, r->mask ? &mask : NULL, flags, &pc, &nc);
        }
        CHECK_OK(sc);
        if (sc != GLCV_OK)
            break;
        free(cpu_packet);
        cpu_packet = malloc(nc);
        memcpy(cpu_packet, pc, nc);
        if (r->texture < 0) {
            CHECK_OK(glcv_delta_map_frame(gpu, &mapped));
            CHECK(mapped.width == r->w && mapped.height == r->h && mapped.format == r->stream && mapped.data,
                  "%s: map_frame gave %dx%d format %d", what, mapped.width, mapped.height, (int)mapped.format);
            glcv_image_convert(&in, &mapped);
            sg = glcv_delta_encode_mapped(gpu, r->mask ? &mask : NULL, flags, &pg, &ng);
        } else if (r->texture) {
            sg = glcv_delta_encode_texture(gpu, tex, mtex, flags, &pg, &ng);
        } else {
            sg = glcv_delta_encode(gpu, &in, r->mask ? &mask : NULL, flags, &pg, &ng);
        }
        CHECK_OK(sg);
        if (sg != GLCV_OK)
            break;
        bad += compare_packets(what, f, pg, ng, cpu_packet, nc);
        if (f % 5 == 4 || f == r->frames - 1) {
            CHECK_OK(glcv_delta_read_reference(gpu, &ref_g));
            CHECK_OK(glcv_delta_read_reference(cpu, &ref_c));
            size_t row = (size_t)r->w * bpp, diffs = 0, first = 0;
            for (size_t i = 0; i < row * r->h; i++)
                if (ref_g.data[i] != ref_c.data[i] && diffs++ == 0)
                    first = i;
            CHECK(diffs == 0, "%s: frame %d: references differ at %zu bytes, first %zu (GL %d, CPU %d)", what, f, diffs,
                  first, ref_g.data[first], ref_c.data[first]);
            bad += diffs != 0;
        }
    }
    if (!bad) {
        const uint8_t *sg = NULL, *sc = NULL;
        size_t ng = 0, nc = 0;
        CHECK_OK(glcv_delta_snapshot(cpu, &sc, &nc));
        free(cpu_packet);
        cpu_packet = malloc(nc);
        memcpy(cpu_packet, sc, nc);
        CHECK_OK(glcv_delta_snapshot(gpu, &sg, &ng));
        bad += compare_packets(what, -1, sg, ng, cpu_packet, nc);
        glcv_timing t[16];
        int count = 0;
        CHECK_OK(glcv_delta_timings(gpu, t, 16, &count, 1));
    }
    CHECK(bad == 0, "%s: GL and CPU packets differ", what);
    if (tex)
        glDeleteTextures(1, &tex);
    if (mtex)
        glDeleteTextures(1, &mtex);
    free(cpu_packet);
    free(rgba);
    free(m);
    test_image_release(&in);
    test_image_release(&ref_g);
    test_image_release(&ref_c);
    glcv_delta_destroy(&gpu);
    glcv_delta_destroy(&cpu);
}

int main(int argc, char **argv)
{
    glcv_engine_mode engine = GLCV_ENGINE_FRAGMENT;
    if (argc > 1 && glcv_engine_mode_parse(argv[1], &engine) != GLCV_OK) {
        fprintf(stderr, "usage: test_delta_gl [fragment|compute]\n");
        return 2;
    }
    glcv_context *ctx = test_context_or_skip(engine == GLCV_ENGINE_COMPUTE ? 43 : 33);
    if (argc > 2 && !strcmp(argv[2], "gl43") && epoxy_gl_version() >= 44) {
        /* the compute engine without GL 4.4's mapped packet memory: the packets are read back */
        fprintf(stderr, "test_delta_gl: GL %d.%d: the driver did not take MESA_GL_VERSION_OVERRIDE=4.3, skipped\n",
                epoxy_gl_version() / 10, epoxy_gl_version() % 10);
        glcv_context_destroy(&ctx);
        return 77;
    }
    static const run runs[] = {
        /* w, h, stream, input, threshold, layout, mask, texture, frames */
        {1, 1, GLCV_PIXEL_RGB8, GLCV_PIXEL_RGB8, 0, 0, 0, 0, 30},
        {3, 5, GLCV_PIXEL_GRAY8, GLCV_PIXEL_RGB8, 1, 0, 0, 0, 30},
        {17, 13, GLCV_PIXEL_BGR8, GLCV_PIXEL_RGBA8, 8, 0, 1, 0, 35},
        {64, 48, GLCV_PIXEL_RGB8, GLCV_PIXEL_RGB8, 8, 0, 0, 0, 35},
        {64, 48, GLCV_PIXEL_RGB8, GLCV_PIXEL_RGB8, 8, GLCV_DELTA_INDICES, 1, 0, 35},
        {64, 48, GLCV_PIXEL_RGB8, GLCV_PIXEL_BGR8, 8, GLCV_DELTA_BITMAP, 0, 0, 35},
        {64, 48, GLCV_PIXEL_RGBA8, GLCV_PIXEL_GRAY8, GLCV_DELTA_LOSSLESS, 0, 0, 0, 30},
        {97, 61, GLCV_PIXEL_BGRA8, GLCV_PIXEL_BGRA8, 40, 0, 0, 0, 30},
        {97, 61, GLCV_PIXEL_RGB8, GLCV_PIXEL_RGBA8, 8, 0, 0, 1, 30},
        {97, 61, GLCV_PIXEL_GRAY8, GLCV_PIXEL_RGBA8, 8, 0, 2, 1, 30},
        {333, 201, GLCV_PIXEL_RGB8, GLCV_PIXEL_RGB8, 8, 0, 1, 0, 30},
        {333, 201, GLCV_PIXEL_RGB8, GLCV_PIXEL_RGBA8, 8, 0, 1, -1, 30},
        {61, 37, GLCV_PIXEL_GRAY8, GLCV_PIXEL_RGB8, 8, GLCV_DELTA_BITMAP, 0, -1, 30},
        {640, 480, GLCV_PIXEL_RGB8, GLCV_PIXEL_RGB8, 8, 0, 0, 0, 30},
        {640, 480, GLCV_PIXEL_RGB8, GLCV_PIXEL_RGB8, 8, GLCV_DELTA_INDICES, 0, 0, 30},
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++)
        check_run(engine, &runs[i]);
    { /* encode_mapped needs a map_frame first, each time */
        glcv_delta *d = NULL;
        const uint8_t *pk = NULL;
        size_t n = 0;
        glcv_image m;
        CHECK_OK(glcv_delta_create(&GLCV_DELTA_PARAMS(.width = 16, .height = 8, .engine = engine, .logger = test_logger()),
                                   &d));
        CHECK_STATUS(glcv_delta_encode_mapped(d, NULL, 0, &pk, &n), GLCV_ERROR_STATE);
        CHECK_OK(glcv_delta_map_frame(d, &m));
        memset(m.data, 7, (size_t)16 * 8 * 3);
        CHECK_OK(glcv_delta_encode_mapped(d, NULL, 0, &pk, &n));
        CHECK(n == 64 + 16 * 8 * 3, "a mapped first frame: %zu bytes, expected a keyframe", n);
        CHECK_STATUS(glcv_delta_encode_mapped(d, NULL, 0, &pk, &n), GLCV_ERROR_STATE);
        CHECK_STATUS(glcv_delta_map_frame(d, NULL), GLCV_ERROR_INVALID_ARGUMENT);
        glcv_delta_destroy(&d);
    }
    glcv_context_destroy(&ctx);
    return test_finish("test_delta_gl");
}
