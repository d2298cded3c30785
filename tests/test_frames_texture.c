/* Frame sets already on the GPU (glcv_bgsub_frames_texture, glcv_bgsub_learn_add_texture,
 * glcv_segment_frames_texture): each set goes into a GL_TEXTURE_2D_ARRAY for one object and, as
 * host images with the same pixels, to a twin of the same engine; their masks and state must be
 * the same bit for bit - background subtraction in every upload mode, method, gray and colour
 * layout, the segmenter with one and several streams; odd sizes, one and five streams, random and
 * structured frames, arrays with a spare layer and GL_RGB8 arrays. A texture whose rows are
 * upside down must give other masks (the comparison can fail). Then every error the headers
 * document, each logged, with the host's GL bindings left as they were.
 * The argument is the engine: fragment (default), compute, cpu; "gl33" runs fragment where GL
 * says 3.3 (MESA_GL_VERSION_OVERRIDE=3.3: no glGetTextureSubImage, so glReadPixels per layer). */
#include "testutil.h"

#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include <string.h>

#define SETS 6
#define MAX_STREAMS 5

static glcv_logger lg;
static glcv_engine_mode engine = GLCV_ENGINE_FRAGMENT;
static int upload_runs[GLCV_BGSUB_UPLOAD_STREAM_FUSED + 1]; /* bgsub cases per upload mode in use */

/* ---- frames -------------------------------------------------------------------------------------- */

/* A set of `layers` frames, w x h, `bpp` 4 (RGBA) or 3 (RGB), layer after layer: a noisy scene with
 * a bright square moving right in the upper rows (so that rows upside down give other masks) or,
 * random, noise everywhere. Layers past `streams` are noise, never to be read. */
static void make_set(uint8_t *px, int w, int h, int bpp, int layers, int streams, int t, int random_mode,
                     uint64_t *rng)
{
    for (int s = 0; s < layers; s++)
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                uint8_t *p = px + (((size_t)s * (size_t)h + (size_t)y) * (size_t)w + (size_t)x) * (size_t)bpp;
                for (int k = 0; k < bpp; k++) {
                    int v;
                    if (random_mode || s >= streams) {
                        v = (int)(test_rand(rng) % 256);
                    } else {
                        v = 50 + 7 * k + 15 * s + (x * 5 + y * 3) % 40 + (int)(test_rand(rng) % 9) - 4;
                        int sx = 1 + 4 * t + s, sy = 2;
                        if (x >= sx && x < sx + 7 && y >= sy && y < sy + 6)
                            v = 210 + 10 * k + (int)(test_rand(rng) % 7);
                    }
                    p[k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
                }
            }
}

/* A GL_TEXTURE_2D_ARRAY of `layers` layers (glTexImage3D: GL 3.3). */
static GLuint array_make(GLenum internal, int w, int h, int layers)
{
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D_ARRAY, tex);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glTexImage3D(GL_TEXTURE_2D_ARRAY, 0, (GLint)internal, w, h, layers, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
    glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
    CHECK(glGetError() == GL_NO_ERROR, "making a %dx%dx%d array of 0x%04x", w, h, layers, internal);
    return tex;
}

/* Writes a set (rows top first, as glcv_image rows) into the array; `flip`: rows bottom first. */
static void array_upload(GLuint tex, int w, int h, int layers, int bpp, const uint8_t *px, int flip)
{
    glBindTexture(GL_TEXTURE_2D_ARRAY, tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    GLenum format = bpp == 4 ? GL_RGBA : GL_RGB;
    if (!flip) {
        glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, 0, 0, w, h, layers, format, GL_UNSIGNED_BYTE, px);
    } else {
        size_t row = (size_t)w * (size_t)bpp;
        for (int s = 0; s < layers; s++)
            for (int y = 0; y < h; y++)
                glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, h - 1 - y, s, w, 1, 1, format, GL_UNSIGNED_BYTE,
                                px + ((size_t)s * (size_t)h + (size_t)y) * row);
    }
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
}

/* The set's first `streams` layers as host images. */
static void host_images(glcv_image *out, uint8_t *px, int w, int h, int bpp, int streams)
{
    for (int s = 0; s < streams; s++)
        out[s] = (glcv_image){px + (size_t)s * (size_t)w * (size_t)h * (size_t)bpp, w, h, 0,
                              bpp == 4 ? GLCV_PIXEL_RGBA8 : GLCV_PIXEL_RGB8};
}

/* Compares two planes of `n` values per pixel (bytes, or 16-bit when wide) of w x h; prints the first
 * difference. Returns the differing values. */
static size_t compare(const char *what, const char *plane, int set, int stream, const void *got, const void *want,
                      int w, int h, int n, int wide)
{
    size_t count = (size_t)w * (size_t)h * (size_t)n, bad = 0, first = 0;
    for (size_t i = 0; i < count; i++) {
        unsigned a = wide ? ((const uint16_t *)got)[i] : ((const uint8_t *)got)[i];
        unsigned b = wide ? ((const uint16_t *)want)[i] : ((const uint8_t *)want)[i];
        if (a != b && bad++ == 0)
            first = i;
    }
    if (bad) {
        size_t px = first / (size_t)n;
        unsigned a = wide ? ((const uint16_t *)got)[first] : ((const uint8_t *)got)[first];
        unsigned b = wide ? ((const uint16_t *)want)[first] : ((const uint8_t *)want)[first];
        CHECK(0, "%s: set %d stream %d: %zu %s values differ, first at (%d, %d) channel %d: texture %u, host %u", what,
              set, stream, bad, plane, (int)(px % (size_t)w), (int)(px / (size_t)w), (int)(first % (size_t)n), a, b);
    }
    return bad;
}

/* ---- background subtraction ---------------------------------------------------------------------- */

typedef struct bg_case {
    glcv_bgsub_method method;
    glcv_pixel_format format;
    int gray;
    glcv_bgsub_upload upload;
    int width, height, streams;
    int download, learn;
    GLenum internal; /* the array's format */
    int spare;       /* layers past `streams` */
    int random_mode;
} bg_case;

/* Runs a case: the texture object against its host twin. Returns the mask values that differed
 * (0 when all agree); `flip` uploads the texture upside down. */
static size_t run_bgsub(const bg_case *c, int flip)
{
    static const char *const uploads[] = {"default", "copy", "stream", "stream-blocks", "stream-fused"};
    char what[256];
    snprintf(what, sizeof what, "bgsub %s %s format %d%s upload %s %dx%d streams %d%s%s array 0x%04x+%d %s%s",
             glcv_engine_mode_string(engine), glcv_bgsub_method_string(c->method), (int)c->format,
             c->gray ? " gray" : "", uploads[c->upload], c->width, c->height, c->streams,
             c->download ? " download" : "", c->learn ? " learned" : "", c->internal, c->spare,
             c->random_mode ? "random" : "structured", flip ? " flipped" : "");
    const int w = c->width, h = c->height, n = c->streams, layers = n + c->spare;
    const int bpp = c->internal == GL_RGB8 ? 3 : 4;
    glcv_bgsub_params p = GLCV_BGSUB_PARAMS(.width = w, .height = h, .streams = n, .method = c->method,
                                            .format = c->format, .gray = c->gray, .upload = c->upload,
                                            .download = c->download, .engine = engine, .logger = lg);
    glcv_bgsub *tex_obj = NULL, *host_obj = NULL;
    CHECK_OK(glcv_bgsub_create(&p, &tex_obj));
    CHECK_OK(glcv_bgsub_create(&p, &host_obj));
    GLuint tex = array_make(c->internal, w, h, layers);
    size_t set_bytes = (size_t)w * (size_t)h * (size_t)bpp * (size_t)layers;
    uint8_t *px = malloc(set_bytes), *junk = malloc(set_bytes);
    if (junk)
        make_set(junk, w, h, bpp, layers, 0, 0, 1, &(uint64_t){99});
    glcv_image frames[MAX_STREAMS], mt[MAX_STREAMS], mh[MAX_STREAMS];
    for (int s = 0; s < n; s++) {
        mt[s] = test_image_make(w, h, GLCV_PIXEL_GRAY8, 0);
        mh[s] = test_image_make(w, h, GLCV_PIXEL_GRAY8, 0);
    }
    int lanes = c->gray || c->format == GLCV_PIXEL_GRAY8 ? 1 : 3;
    size_t values = (size_t)w * (size_t)h * (size_t)lanes;
    uint16_t *state[4] = {malloc(values * 2), malloc(values * 2), malloc(values * 2), malloc(values * 2)};
    size_t bad = 0;
    uint64_t rng = 0x5eed0000ull + (uint64_t)c->random_mode;
    if (!tex_obj || !host_obj || !px || !junk || !state[3])
        goto done;
    glcv_bgsub_params got;
    CHECK_OK(glcv_bgsub_get_params(tex_obj, &got));
    upload_runs[got.upload]++;
    if (c->learn) {
        CHECK_OK(glcv_bgsub_learn_begin(tex_obj));
        CHECK_OK(glcv_bgsub_learn_begin(host_obj));
        for (int t = 0; t < 3; t++) {
            make_set(px, w, h, bpp, layers, n, -2, c->random_mode, &rng);
            array_upload(tex, w, h, layers, bpp, px, flip);
            host_images(frames, px, w, h, bpp, n);
            CHECK_OK(glcv_bgsub_learn_add_texture(tex_obj, tex));
            CHECK_OK(glcv_bgsub_learn_add(host_obj, frames, n));
        }
        CHECK_OK(glcv_bgsub_learn_end(tex_obj));
        CHECK_OK(glcv_bgsub_learn_end(host_obj));
    }
    for (int t = 0; t < SETS; t++) {
        make_set(px, w, h, bpp, layers, n, t, c->random_mode, &rng);
        array_upload(tex, w, h, layers, bpp, px, flip);
        host_images(frames, px, w, h, bpp, n);
        CHECK_OK(glcv_bgsub_frames_texture(tex_obj, tex, t % 2));
        /* the copy was queued: the array may be overwritten at once */
        array_upload(tex, w, h, layers, bpp, junk, 0);
        CHECK_OK(glcv_bgsub_frames(host_obj, frames, n, 0));
        /* with downloads, the set before (as a pipelined caller reads it) and the last one */
        int ages[2] = {c->download && t > 0 ? 1 : 0, c->download && t == SETS - 1 ? 0 : -1};
        for (int a = 0; a < 2; a++) {
            if (ages[a] < 0)
                continue;
            CHECK_OK(glcv_bgsub_read_masks(tex_obj, ages[a], mt, n));
            CHECK_OK(glcv_bgsub_read_masks(host_obj, ages[a], mh, n));
            for (int s = 0; s < n; s++)
                bad += flip ? (size_t)(memcmp(mt[s].data, mh[s].data, (size_t)w * (size_t)h) != 0)
                            : compare(what, "mask", t - ages[a], s, mt[s].data, mh[s].data, w, h, 1, 0);
        }
        if (flip || (c->method != GLCV_BGSUB_VSAM && !c->learn))
            continue; /* B and T of frame differences are the floor, unless learned */
        for (int s = 0; s < n; s++) {
            CHECK_OK(glcv_bgsub_read_state(tex_obj, s, state[0], state[1]));
            CHECK_OK(glcv_bgsub_read_state(host_obj, s, state[2], state[3]));
            compare(what, "B", t, s, state[0], state[2], w, h, lanes, 1);
            compare(what, "T", t, s, state[1], state[3], w, h, lanes, 1);
        }
    }
    /* The structured scene has foreground: comparing empty masks would prove nothing. */
    if (!c->random_mode && !flip) {
        int fg = test_count_nonzero(mh[0].data, (size_t)w * (size_t)h);
        CHECK(fg > 5 && fg < w * h / 2, "%s: %d foreground pixels in the last mask", what, fg);
    }
done:
    for (int s = 0; s < n; s++) {
        test_image_release(&mt[s]);
        test_image_release(&mh[s]);
    }
    for (int i = 0; i < 4; i++)
        free(state[i]);
    free(px);
    free(junk);
    glDeleteTextures(1, &tex);
    glcv_bgsub_destroy(&tex_obj);
    glcv_bgsub_destroy(&host_obj);
    return bad;
}

static void check_bgsub(void)
{
    static const struct {
        glcv_pixel_format format;
        int gray;
    } layouts[] = {{GLCV_PIXEL_RGB8, 0},  {GLCV_PIXEL_RGB8, 1},  {GLCV_PIXEL_GRAY8, 0},
                   {GLCV_PIXEL_RGBA8, 0}, {GLCV_PIXEL_BGR8, 0}, {GLCV_PIXEL_BGRA8, 1}};
    static const int sizes[2][2] = {{37, 23}, {48, 18}}; /* 48: whole quads, packed gray */
    /* Every upload mode with compute; the fragment engine always copies, the CPU engine has none. */
    int uploads = engine == GLCV_ENGINE_COMPUTE ? GLCV_BGSUB_UPLOAD_STREAM_FUSED : GLCV_BGSUB_UPLOAD_DEFAULT;
    int runs = 0;
    for (int u = 0; u <= uploads; u++)
        for (int m = GLCV_BGSUB_VSAM; m <= GLCV_BGSUB_DIFF3; m++)
            for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
                for (int z = 0; z < 2; z++)
                    for (int k = 0; k < 2; k++) {
                        /* the other colour layouts once per method and upload */
                        if (l >= 3 && (z != 1 || k != 1))
                            continue;
                        int i = runs++;
                        bg_case c = {(glcv_bgsub_method)m, layouts[l].format, layouts[l].gray,
                                     (glcv_bgsub_upload)u, sizes[z][0], sizes[z][1], k ? MAX_STREAMS : 1,
                                     i % 2, m == GLCV_BGSUB_VSAM && i % 3 == 0, i % 4 == 3 ? GL_RGB8 : GL_RGBA8,
                                     i % 5 == 1 ? 2 : 0, i % 2};
                        run_bgsub(&c, 0);
                    }
    printf("bgsub: %d cases (upload in use: copy %d, stream %d, blocks %d, fused %d)\n", runs,
           upload_runs[GLCV_BGSUB_UPLOAD_COPY], upload_runs[GLCV_BGSUB_UPLOAD_STREAM],
           upload_runs[GLCV_BGSUB_UPLOAD_STREAM_BLOCKS], upload_runs[GLCV_BGSUB_UPLOAD_STREAM_FUSED]);
    /* with compute (GL 4.4), each of them ran */
    int streamed = engine == GLCV_ENGINE_COMPUTE && epoxy_gl_version() >= 44;
    for (int u = GLCV_BGSUB_UPLOAD_STREAM; streamed && u <= uploads; u++)
        CHECK(upload_runs[u] > 0, "bgsub: no case ran upload %d", u);
    /* Rows upside down give other masks: the comparison sees the orientation. */
    bg_case c = {GLCV_BGSUB_VSAM, GLCV_PIXEL_RGB8, 0, 0, 37, 23, 2, 0, 0, GL_RGBA8, 0, 0};
    CHECK(run_bgsub(&c, 1) > 0, "bgsub: frames upside down gave the same masks");
}

/* ---- segmenter ------------------------------------------------------------------------------------ */

typedef struct seg_case {
    int width, height, streams;
    GLenum internal;
    int spare, random_mode;
} seg_case;

static size_t run_segment(const seg_case *c, int flip)
{
    char what[160];
    snprintf(what, sizeof what, "segment %s %dx%d streams %d array 0x%04x+%d %s%s", glcv_engine_mode_string(engine),
             c->width, c->height, c->streams, c->internal, c->spare, c->random_mode ? "random" : "structured",
             flip ? " flipped" : "");
    const int w = c->width, h = c->height, n = c->streams, layers = n + c->spare;
    const int bpp = c->internal == GL_RGB8 ? 3 : 4;
    glcv_segment_params p = GLCV_SEGMENT_PARAMS(.width = w, .height = h, .streams = n, .engine = engine,
                                                .logger = lg, .adapt_rate = 0.25f);
    glcv_segment *tex_obj = NULL, *host_obj = NULL;
    CHECK_OK(glcv_segment_create(&p, &tex_obj));
    CHECK_OK(glcv_segment_create(&p, &host_obj));
    GLuint tex = array_make(c->internal, w, h, layers);
    size_t plane = (size_t)w * (size_t)h;
    uint8_t *px = malloc(plane * (size_t)bpp * (size_t)layers), *junk = malloc(plane * (size_t)bpp * (size_t)layers);
    if (junk)
        make_set(junk, w, h, bpp, layers, 0, 0, 1, &(uint64_t){99});
    uint8_t *thr[4] = {malloc(plane), malloc(plane), malloc(plane), malloc(plane)};
    glcv_image frames[MAX_STREAMS], mt[MAX_STREAMS], mh[MAX_STREAMS], bt[MAX_STREAMS], bh[MAX_STREAMS];
    for (int s = 0; s < n; s++) {
        mt[s] = test_image_make(w, h, GLCV_PIXEL_GRAY8, 0);
        mh[s] = test_image_make(w, h, GLCV_PIXEL_GRAY8, 0);
        bt[s] = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
        bh[s] = test_image_make(w, h, GLCV_PIXEL_RGB8, 0);
    }
    size_t bad = 0;
    uint64_t rng = 0xbadc0ffeull + (uint64_t)c->random_mode;
    if (!tex_obj || !host_obj || !px || !junk || !thr[3])
        goto done;
    /* the background: the scene without the square (the set of t = -20 puts it outside) */
    make_set(px, w, h, bpp, layers, n, -20, 0, &rng);
    host_images(frames, px, w, h, bpp, n);
    CHECK_OK(glcv_segment_set_backgrounds(tex_obj, frames, n));
    CHECK_OK(glcv_segment_set_backgrounds(host_obj, frames, n));
    for (int t = 0; t < SETS; t++) {
        make_set(px, w, h, bpp, layers, n, t, c->random_mode && t % 2, &rng);
        array_upload(tex, w, h, layers, bpp, px, flip);
        host_images(frames, px, w, h, bpp, n);
        CHECK_OK(glcv_segment_frames_texture(tex_obj, tex, t % 2));
        /* the copy was queued: the array may be overwritten at once */
        array_upload(tex, w, h, layers, bpp, junk, 0);
        CHECK_OK(glcv_segment_frames(host_obj, frames, n, 0));
        CHECK_OK(glcv_segment_read_masks(tex_obj, mt, n));
        CHECK_OK(glcv_segment_read_masks(host_obj, mh, n));
        for (int s = 0; s < n; s++)
            bad += flip ? (size_t)(memcmp(mt[s].data, mh[s].data, plane) != 0)
                        : compare(what, "mask", t, s, mt[s].data, mh[s].data, w, h, 1, 0);
        if (flip)
            continue;
        CHECK_OK(glcv_segment_read_backgrounds(tex_obj, bt, n));
        CHECK_OK(glcv_segment_read_backgrounds(host_obj, bh, n));
        for (int s = 0; s < n; s++)
            compare(what, "background", t, s, bt[s].data, bh[s].data, w, h, 3, 0);
        if (n == 1) {
            CHECK_OK(glcv_segment_read_thresholds(tex_obj, thr[0], thr[1]));
            CHECK_OK(glcv_segment_read_thresholds(host_obj, thr[2], thr[3]));
            compare(what, "m_min B1", t, 0, thr[0], thr[2], w, h, 1, 0);
            compare(what, "m_min B2", t, 0, thr[1], thr[3], w, h, 1, 0);
        }
    }
    if (!c->random_mode && !flip) {
        int fg = test_count_nonzero(mh[0].data, plane);
        CHECK(fg > 5 && fg < w * h / 2, "%s: %d foreground pixels in the last mask", what, fg);
    }
done:
    for (int s = 0; s < n; s++) {
        test_image_release(&mt[s]);
        test_image_release(&mh[s]);
        test_image_release(&bt[s]);
        test_image_release(&bh[s]);
    }
    for (int i = 0; i < 4; i++)
        free(thr[i]);
    free(px);
    free(junk);
    glDeleteTextures(1, &tex);
    glcv_segment_destroy(&tex_obj);
    glcv_segment_destroy(&host_obj);
    return bad;
}

static void check_segment(void)
{
    static const int sizes[2][2] = {{37, 23}, {48, 18}};
    int runs = 0;
    for (int z = 0; z < 2; z++)
        for (int k = 0; k < 2; k++)
            for (int r = 0; r < 2; r++) {
                int i = runs++;
                seg_case c = {sizes[z][0], sizes[z][1], k ? MAX_STREAMS : 1, i % 3 == 1 ? GL_RGB8 : GL_RGBA8,
                              i % 2, r};
                run_segment(&c, 0);
            }
    printf("segment: %d cases\n", runs);
    seg_case c = {37, 23, 2, GL_RGBA8, 0, 0};
    CHECK(run_segment(&c, 1) > 0, "segment: frames upside down gave the same masks");
}

/* ---- errors ---------------------------------------------------------------------------------------- */

/* The host's bindings that the calls touch, set to odd values before and compared after. */
typedef struct bindings {
    GLint active, array0, tex2d0, pack, unpack, read_fbo, draw_fbo, pack_align, unpack_align, program, copy_read;
} bindings;

static bindings get_bindings(void)
{
    bindings b;
    glGetIntegerv(GL_ACTIVE_TEXTURE, &b.active);
    glActiveTexture(GL_TEXTURE0);
    glGetIntegerv(GL_TEXTURE_BINDING_2D_ARRAY, &b.array0);
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &b.tex2d0);
    glActiveTexture((GLenum)b.active);
    glGetIntegerv(GL_PIXEL_PACK_BUFFER_BINDING, &b.pack);
    glGetIntegerv(GL_PIXEL_UNPACK_BUFFER_BINDING, &b.unpack);
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &b.read_fbo);
    glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &b.draw_fbo);
    glGetIntegerv(GL_PACK_ALIGNMENT, &b.pack_align);
    glGetIntegerv(GL_UNPACK_ALIGNMENT, &b.unpack_align);
    glGetIntegerv(GL_CURRENT_PROGRAM, &b.program);
    glGetIntegerv(GL_COPY_READ_BUFFER_BINDING, &b.copy_read);
    return b;
}

static void check_bindings(const bindings *want, const char *what)
{
    bindings got = get_bindings();
    CHECK(memcmp(&got, want, sizeof got) == 0,
          "%s: host bindings changed: active 0x%x/0x%x array %d/%d 2d %d/%d pack %d/%d unpack %d/%d read fbo %d/%d "
          "draw fbo %d/%d pack align %d/%d unpack align %d/%d program %d/%d copy read %d/%d (now/before)",
          what, got.active, want->active, got.array0, want->array0, got.tex2d0, want->tex2d0, got.pack, want->pack,
          got.unpack, want->unpack, got.read_fbo, want->read_fbo, got.draw_fbo, want->draw_fbo, got.pack_align,
          want->pack_align, got.unpack_align, want->unpack_align, got.program, want->program, got.copy_read,
          want->copy_read);
}

/* Sets host bindings that glcv must put back: buffers on the pixel and copy targets, a framebuffer,
 * textures on unit 0 (another unit active), odd pack alignments. Returns the GL names to delete. */
static void set_host_bindings(GLuint names[4])
{
    glGenBuffers(3, names);
    glGenFramebuffers(1, &names[3]);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, names[0]);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, names[1]);
    glBindBuffer(GL_COPY_READ_BUFFER, names[2]);
    glBindFramebuffer(GL_FRAMEBUFFER, names[3]);
    glPixelStorei(GL_PACK_ALIGNMENT, 8);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 2);
    glActiveTexture(GL_TEXTURE3);
}

static void clear_host_bindings(GLuint names[4])
{
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    glBindBuffer(GL_COPY_READ_BUFFER, 0);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glActiveTexture(GL_TEXTURE0);
    glDeleteBuffers(3, names);
    glDeleteFramebuffers(1, &names[3]);
}

/* A call that must fail with `want` and log why (one error message at least), leaving the host's
 * bindings as they were. */
#define CHECK_FAILS(call, want, cap)                                                                            \
    do {                                                                                                        \
        int current_ = glcv_gl_context_current();                                                               \
        bindings before_ = current_ ? get_bindings() : (bindings){0};                                           \
        int count_ = (cap)->count;                                                                              \
        CHECK_STATUS(call, want);                                                                               \
        CHECK((cap)->count > count_ && (cap)->last[0], "%s: no error logged", #call);                           \
        if ((cap)->count > count_)                                                                              \
            printf("  %-56.56s %s: %s\n", #call, glcv_status_string(want), (cap)->last);                      \
        if (current_)                                                                                           \
            check_bindings(&before_, #call);                                                                    \
    } while (0)

static void check_errors(glcv_context *ctx)
{
    enum { W = 16, H = 8, N = 3 };
    capture cap;
    glcv_logger errors = capture_logger(&cap);
    errors.max_level = GLCV_LOG_ERROR;
    glcv_bgsub *b = NULL;
    glcv_segment *seg = NULL;
    CHECK_OK(glcv_bgsub_create(&GLCV_BGSUB_PARAMS(.width = W, .height = H, .streams = N, .engine = engine,
                                                  .logger = errors),
                               &b));
    CHECK_OK(glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = W, .height = H, .streams = N, .engine = engine,
                                                      .logger = errors),
                                 &seg));
    if (!b || !seg)
        goto done;
    GLuint good = array_make(GL_RGBA8, W, H, N), few = array_make(GL_RGBA8, W, H, N - 1);
    GLuint wide = array_make(GL_RGBA8, W + 1, H, N), half = array_make(GL_RGBA16F, W, H, N);
    GLuint red = array_make(GL_R8, W, H, N), srgb = array_make(GL_SRGB8_ALPHA8, W, H, N);
    GLuint integer = 0, flat = test_texture_make(GL_RGBA8, GL_RGBA, W, H, NULL);
    glGenTextures(1, &integer);
    glBindTexture(GL_TEXTURE_2D_ARRAY, integer);
    glTexImage3D(GL_TEXTURE_2D_ARRAY, 0, GL_RGBA8UI, W, H, N, 0, GL_RGBA_INTEGER, GL_UNSIGNED_BYTE, NULL);
    glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
    GLuint unused = 0; /* a name that is no texture */
    glGenTextures(1, &unused);
    glDeleteTextures(1, &unused);
    GLuint host[4];
    set_host_bindings(host);

    printf("errors (%s):\n", glcv_engine_mode_string(engine));
    const GLuint invalid[] = {0, unused, flat, few};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
        CHECK_FAILS(glcv_bgsub_frames_texture(b, invalid[i], 1), GLCV_ERROR_INVALID_ARGUMENT, &cap);
    CHECK_FAILS(glcv_segment_frames_texture(seg, 0, 1), GLCV_ERROR_INVALID_ARGUMENT, &cap);
    CHECK_FAILS(glcv_segment_frames_texture(seg, good, 1), GLCV_ERROR_STATE, &cap); /* no background yet */
    CHECK_STATUS(glcv_bgsub_frames_texture(NULL, good, 1), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_frames_texture(NULL, good, 1), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_bgsub_learn_add_texture(NULL, good), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_image bg[N];
    uint8_t *px = calloc((size_t)W * H * 4 * N, 1);
    host_images(bg, px, W, H, 4, N);
    CHECK_OK(glcv_segment_set_backgrounds(seg, bg, N));
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
        CHECK_FAILS(glcv_segment_frames_texture(seg, invalid[i], 1), GLCV_ERROR_INVALID_ARGUMENT, &cap);
    CHECK_FAILS(glcv_bgsub_frames_texture(b, wide, 1), GLCV_ERROR_SIZE_MISMATCH, &cap);
    CHECK_FAILS(glcv_segment_frames_texture(seg, wide, 1), GLCV_ERROR_SIZE_MISMATCH, &cap);
    const GLuint unsupported[] = {half, red, srgb, integer};
    for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++) {
        CHECK_FAILS(glcv_bgsub_frames_texture(b, unsupported[i], 1), GLCV_ERROR_UNSUPPORTED, &cap);
        CHECK_FAILS(glcv_segment_frames_texture(seg, unsupported[i], 1), GLCV_ERROR_UNSUPPORTED, &cap);
    }
    /* learning */
    CHECK_FAILS(glcv_bgsub_learn_add_texture(b, good), GLCV_ERROR_STATE, &cap);
    CHECK_OK(glcv_bgsub_learn_begin(b));
    CHECK_FAILS(glcv_bgsub_frames_texture(b, good, 1), GLCV_ERROR_STATE, &cap);
    CHECK_FAILS(glcv_bgsub_learn_add_texture(b, 0), GLCV_ERROR_INVALID_ARGUMENT, &cap);
    CHECK_FAILS(glcv_bgsub_learn_add_texture(b, few), GLCV_ERROR_INVALID_ARGUMENT, &cap);
    CHECK_FAILS(glcv_bgsub_learn_add_texture(b, half), GLCV_ERROR_UNSUPPORTED, &cap);
    CHECK_OK(glcv_bgsub_learn_add_texture(b, good));
    CHECK_OK(glcv_bgsub_learn_end(b));
    CHECK_OK(glcv_segment_learn_begin(seg));
    CHECK_FAILS(glcv_segment_frames_texture(seg, good, 1), GLCV_ERROR_STATE, &cap);
    CHECK_OK(glcv_segment_learn_add_frames(seg, bg, N));
    CHECK_OK(glcv_segment_learn_end(seg));
    /* after every error, the objects still work, and the host's bindings stay */
    bindings before = get_bindings();
    CHECK_OK(glcv_bgsub_frames_texture(b, good, 1));
    check_bindings(&before, "bgsub_frames_texture");
    CHECK_OK(glcv_segment_frames_texture(seg, good, 1));
    check_bindings(&before, "segment_frames_texture");
    clear_host_bindings(host);

    /* no current context: NO_CONTEXT, whatever the engine */
    EGLDisplay dpy = eglGetCurrentDisplay();
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    CHECK(!glcv_gl_context_current(), "the context is still current");
    CHECK_FAILS(glcv_bgsub_frames_texture(b, good, 1), GLCV_ERROR_NO_CONTEXT, &cap);
    CHECK_FAILS(glcv_segment_frames_texture(seg, good, 1), GLCV_ERROR_NO_CONTEXT, &cap);
    CHECK_OK(glcv_context_make_current(ctx));
    CHECK_OK(glcv_bgsub_learn_begin(b));
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    CHECK_FAILS(glcv_bgsub_learn_add_texture(b, good), GLCV_ERROR_NO_CONTEXT, &cap);
    CHECK_OK(glcv_context_make_current(ctx));
    CHECK_OK(glcv_bgsub_learn_add_texture(b, good));
    CHECK_OK(glcv_bgsub_learn_end(b));
    CHECK_OK(glcv_bgsub_frames_texture(b, good, 1));
    CHECK_OK(glcv_segment_frames_texture(seg, good, 1));
    GLuint all[] = {good, few, wide, half, red, srgb, integer, flat};
    glDeleteTextures((GLsizei)(sizeof all / sizeof all[0]), all);
    free(px);
done:
    glcv_bgsub_destroy(&b);
    glcv_segment_destroy(&seg);
}

int main(int argc, char **argv)
{
    lg = test_logger();
    int gl33 = argc > 1 && strcmp(argv[1], "gl33") == 0;
    if (argc > 1 && !gl33 && glcv_engine_mode_parse(argv[1], &engine) != GLCV_OK) {
        fprintf(stderr, "usage: test_frames_texture [fragment | compute | cpu | gl33]\n");
        return 2;
    }
    glcv_context *ctx = test_context_or_skip(engine == GLCV_ENGINE_COMPUTE ? 43 : 33);
    if (gl33 && epoxy_gl_version() != 33) {
        printf("SKIP: GL says %d.%d, not 3.3 (MESA_GL_VERSION_OVERRIDE=3.3 not honoured)\n", epoxy_gl_version() / 10,
               epoxy_gl_version() % 10);
        glcv_context_destroy(&ctx);
        return TEST_SKIP;
    }
    check_bgsub();
    check_segment();
    check_errors(ctx);
    glcv_context_destroy(&ctx);
    return test_finish("test_frames_texture");
}
