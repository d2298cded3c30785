/* Compressed video into the engine: the one definition of 4:2:0 -> RGB (media_yuv.h) against the
 * formulas in double precision and across plane layouts; glcv_media delivering exactly that
 * conversion of exactly decoded H.264 / HEVC frames; NVDEC frames equal to CPU frames, bit for bit;
 * camera sets (glcv_media_set) as host images and as a GL texture array (CUDA conversion on a GPU,
 * GL upload elsewhere) equal to each source read alone, with sources that fail or end.
 *
 * Runs: test_media_set definition | cpu | set | texture | nvdec | nvdec_set. `texture` needs a GL
 * context, `nvdec` a CUDA device with NVDEC and `nvdec_set` a CUDA device and a GL context on it
 * (else exit 77); the others need FFmpeg only. */
#define _POSIX_C_SOURCE 200809L

#include "testutil.h"

#if !GLCV_HAVE_FFMPEG

int main(void)
{
    printf("SKIP: glcv was built without media input (FFmpeg not found)\n");
    return TEST_SKIP;
}

#else

#include <glcv/media.h>

#include "gl.h"
#include "media_internal.h"
#include "video_file.h"

#include <libavformat/avformat.h>
#include <libavutil/pixdesc.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char g_tmp[256];

/* ---- the definition ------------------------------------------------------------------------------ */

/* The formulas of media_yuv.h in double precision, rounded and clamped. */
static void reference_rgb(int matrix, int full, double y, double u, double v, int rgb[3])
{
    static const double kr[3] = {0.299, 0.2126, 0.2627}, kb[3] = {0.114, 0.0722, 0.0593};
    double r_ = kr[matrix], b_ = kb[matrix], g_ = 1.0 - r_ - b_;
    double yy = full ? y : (y - 16.0) * 255.0 / 219.0;
    double cu = full ? u - 128.0 : (u - 128.0) * 255.0 / 224.0, cv = full ? v - 128.0 : (v - 128.0) * 255.0 / 224.0;
    double out[3] = {yy + 2 * (1 - r_) * cv, yy - 2 * b_ * (1 - b_) / g_ * cu - 2 * r_ * (1 - r_) / g_ * cv,
                     yy + 2 * (1 - b_) * cu};
    for (int k = 0; k < 3; k++)
        rgb[k] = (int)fmin(255.0, fmax(0.0, floor(out[k] + 0.5)));
}

static void test_matrix_against_formulas(void)
{
    int worst = 0, off_by_one = 0, cases = 0;
    for (int matrix = 0; matrix < GLCV_YUV_MATRICES; matrix++)
        for (int full = 0; full < 2; full++) {
            const glcv_yuv_coeffs *c = glcv_media_yuv_coeffs(matrix, full);
            for (int y = 0; y < 256; y++)
                for (int u = 0; u < 256; u += 3)
                    for (int v = 0; v < 256; v += 5) {
                        uint8_t got[3];
                        int want[3];
                        glcv_yuv_pixel(c, y, 8 * u, 8 * v, &got[0], &got[1], &got[2]);
                        reference_rgb(matrix, full, y, u, v, want);
                        for (int k = 0; k < 3; k++) {
                            int d = abs((int)got[k] - want[k]);
                            worst = d > worst ? d : worst;
                            off_by_one += d == 1;
                            if (d > 1)
                                CHECK(0, "matrix %d full %d Y %d U %d V %d channel %d: %d, formula %d", matrix, full,
                                      y, u, v, k, got[k], want[k]);
                        }
                        cases++;
                    }
        }
    printf("definition: %d (Y, U, V) cases x 6 matrices: largest difference from the formulas %d, %d channels off "
           "by one (fixed-point coefficients)\n",
           cases / 6, worst, off_by_one);
    /* the range ends: black and white are exact */
    uint8_t r, g, b;
    glcv_yuv_pixel(glcv_media_yuv_coeffs(GLCV_YUV_BT709, 0), 16, 8 * 128, 8 * 128, &r, &g, &b);
    CHECK(r == 0 && g == 0 && b == 0, "limited-range black is %d %d %d", r, g, b);
    glcv_yuv_pixel(glcv_media_yuv_coeffs(GLCV_YUV_BT709, 0), 235, 8 * 128, 8 * 128, &r, &g, &b);
    CHECK(r == 255 && g == 255 && b == 255, "limited-range white is %d %d %d", r, g, b);
}

/* Chroma siting: on even columns a pixel takes its own chroma column, on odd columns the mean of
 * two; rows take 3/4 of the nearer chroma row and 1/4 of the other (clamped at the edges). */
static void test_chroma_siting(void)
{
    /* a 4 x 3 chroma plane of a 8 x 6 picture (pitch 5: padding must not be read) */
    const uint8_t plane[3 * 5] = {0, 40, 80, 120, 99, 10, 50, 90, 130, 99, 20, 60, 100, 140, 99};
    struct {
        int x, y, want8;
    } cases[] = {
        {0, 0, 8 * 0},                            /* row 0: rows 0 (3/4) and 0 (clamped 1/4) */
        {1, 0, 4 * (0 + 40)},                     /* odd column: mean of columns 0 and 1 */
        {0, 1, 2 * (3 * 0 + 10) * 1},             /* row 1: 3/4 row 0, 1/4 row 1; column 0 twice */
        {2, 2, 2 * (3 * 50 + 40)},                /* row 2: 3/4 row 1, 1/4 row 0 */
        {7, 5, 3 * (140 + 140) + (140 + 140)},    /* last column and row: clamped */
        {3, 3, 3 * (50 + 90) + (60 + 100)},       /* row 3: 3/4 row 1, 1/4 row 2; columns 1 and 2 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int32_t got = glcv_yuv_chroma(plane, 5, 1, 4, 3, cases[i].x, cases[i].y);
        CHECK(got == cases[i].want8, "chroma of pixel (%d, %d): %d, expected %d", cases[i].x, cases[i].y, got,
              cases[i].want8);
    }
}

/* The same picture as I420 and as NV12 (and as I420 with different U and V pitches) converts to
 * the same bits. */
static void test_layouts(void)
{
    enum { W = 37, H = 23, CW = (W + 1) / 2, CH = (H + 1) / 2 };
    static uint8_t y[W * H], u[CH * CW], v[CH * (CW + 3)], uv[CH * 2 * CW];
    uint64_t seed = 7;
    for (int i = 0; i < W * H; i++)
        y[i] = (uint8_t)test_rand(&seed);
    for (int j = 0; j < CH; j++)
        for (int i = 0; i < CW; i++) {
            u[j * CW + i] = (uint8_t)test_rand(&seed);
            v[j * (CW + 3) + i] = (uint8_t)test_rand(&seed);
            uv[j * 2 * CW + 2 * i] = u[j * CW + i];
            uv[j * 2 * CW + 2 * i + 1] = v[j * (CW + 3) + i];
        }
    glcv_media_picture planar = {.kind = GLCV_PICTURE_YUV420, .matrix = GLCV_YUV_BT601};
    planar.planes = (glcv_yuv_planes){y, u, v, W, CW, CW + 3, 1, W, H};
    glcv_media_picture nv12 = planar;
    nv12.planes = (glcv_yuv_planes){y, uv, uv + 1, W, 2 * CW, 2 * CW, 2, W, H};
    static uint8_t a[W * H * 4], b[W * H * 4];
    glcv_media_picture_to_rgb(&planar, GLCV_PIXEL_RGBA8, a, W * 4);
    glcv_media_picture_to_rgb(&nv12, GLCV_PIXEL_RGBA8, b, W * 4);
    int diff = 0;
    for (int i = 0; i < W * H * 4; i++)
        diff += a[i] != b[i];
    CHECK(diff == 0, "I420 and NV12 of one picture differ in %d bytes", diff);
    CHECK(a[3] == 255 && a[W * H * 4 - 1] == 255, "RGBA alpha is %d, %d", a[3], a[W * H * 4 - 1]);
}

/* ---- test videos --------------------------------------------------------------------------------- */

/* Moving coloured shapes over a gradient: chroma edges everywhere. */
static void fill_scene(void *user, int index, glcv_image *rgb)
{
    int seed = user ? *(const int *)user : 0;
    for (int y = 0; y < rgb->height; y++)
        for (int x = 0; x < rgb->width; x++) {
            uint8_t *p = rgb->data + (size_t)y * glcv_image_stride(rgb) + (size_t)x * 3;
            p[0] = (uint8_t)(x * 3 + seed * 40);
            p[1] = (uint8_t)(y * 4);
            p[2] = (uint8_t)(128 + 60 * sin((x + y) * 0.2 + seed));
            int cx = (index * 3 + seed * 11) % rgb->width, cy = (index * 2 + seed * 7) % rgb->height;
            if (abs(x - cx) < 7 && abs(y - cy) < 5) {
                p[0] = (uint8_t)(200 - seed * 30);
                p[1] = 30;
                p[2] = (uint8_t)(90 + seed * 50);
            }
        }
}

/* Writes a video; returns its path (static storage per call site's buffer) or NULL when FFmpeg has
 * no encoder for the codec (printed). */
static int make_video(char *path, size_t size, const char *name, const char *container, enum AVCodecID codec,
                      int w, int h, int frames, int seed)
{
    snprintf(path, size, "%s/%s", g_tmp, name);
    return test_video_encode(path, container, codec, AV_PIX_FMT_YUV420P, w, h, frames, 25, fill_scene, &seed);
}

/* Every frame of a source as glcv_media reads it alone (RGB8, packed), up to `max` frames. */
static int read_all(const char *path, glcv_media_decoder decoder, uint8_t **frames, int max, int *w, int *h,
                    glcv_media_stats *stats)
{
    glcv_media *m = NULL;
    glcv_status st = glcv_media_create(
        &GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = path, .decoder = decoder, .logger = test_logger()),
        &m);
    if (st != GLCV_OK)
        return -(int)st;
    int n = 0;
    for (; n < max; n++) {
        glcv_image f;
        glcv_media_frame_info info;
        st = glcv_media_read(m, &f, &info, -1);
        if (st != GLCV_OK || info.end_of_stream)
            break;
        *w = f.width;
        *h = f.height;
        frames[n] = malloc((size_t)f.width * (size_t)f.height * 3);
        glcv_image dst = {frames[n], f.width, f.height, 0, GLCV_PIXEL_RGB8};
        glcv_image_convert(&f, &dst);
    }
    CHECK(st == GLCV_OK, "reading %s: %s", path, glcv_status_string(st));
    if (stats)
        glcv_media_get_stats(m, stats);
    glcv_media_destroy(&m);
    return n;
}

static void free_frames(uint8_t **frames, int n)
{
    for (int i = 0; i < n; i++)
        free(frames[i]);
}

/* Compares two RGB8 (or RGBA8 `b` with bpp_b 4) frames; prints the first difference. */
static int same_frame(const char *what, const uint8_t *a, const uint8_t *b, int bpp_b, int w, int h)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int k = 0; k < 3; k++) {
                int va = a[((size_t)y * w + x) * 3 + k], vb = b[((size_t)y * w + x) * bpp_b + k];
                if (va != vb) {
                    CHECK(0, "%s: pixel (%d, %d) channel %d: %d against %d", what, x, y, k, va, vb);
                    return 0;
                }
            }
    return 1;
}

/* ---- cpu: glcv_media delivers the definition's conversion of the decoded frames -------------------- */

/* Decodes a file with libavcodec directly and converts each 4:2:0 frame with the definition. */
static int decode_reference(const char *path, uint8_t **frames, int max)
{
    AVFormatContext *fmt = NULL;
    if (avformat_open_input(&fmt, path, NULL, NULL) < 0 || avformat_find_stream_info(fmt, NULL) < 0)
        return -1;
    const AVCodec *codec = NULL;
    int s = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
    AVCodecContext *dec = avcodec_alloc_context3(codec);
    avcodec_parameters_to_context(dec, fmt->streams[s]->codecpar);
    avcodec_open2(dec, codec, NULL);
    AVPacket *pkt = av_packet_alloc();
    AVFrame *f = av_frame_alloc();
    int n = 0, draining = 0;
    while (n < max) {
        int r = avcodec_receive_frame(dec, f);
        if (r == 0) {
            CHECK(f->format == AV_PIX_FMT_YUV420P, "the reference decoder made %s frames",
                  av_get_pix_fmt_name(f->format));
            glcv_media_picture pic = {.kind = GLCV_PICTURE_YUV420,
                                      .matrix = f->colorspace == AVCOL_SPC_BT709 ? GLCV_YUV_BT709
                                                : f->height >= 720              ? GLCV_YUV_BT709
                                                                                : GLCV_YUV_BT601,
                                      .full_range = f->color_range == AVCOL_RANGE_JPEG};
            pic.planes = (glcv_yuv_planes){f->data[0], f->data[1], f->data[2], (size_t)f->linesize[0],
                                           (size_t)f->linesize[1], (size_t)f->linesize[2], 1, f->width, f->height};
            frames[n] = malloc((size_t)f->width * (size_t)f->height * 3);
            glcv_media_picture_to_rgb(&pic, GLCV_PIXEL_RGB8, frames[n], (size_t)f->width * 3);
            n++;
            continue;
        }
        if (r == AVERROR_EOF || draining)
            break;
        if (av_read_frame(fmt, pkt) < 0) {
            avcodec_send_packet(dec, NULL);
            draining = 1;
            continue;
        }
        if (pkt->stream_index == s)
            avcodec_send_packet(dec, pkt);
        av_packet_unref(pkt);
    }
    av_frame_free(&f);
    av_packet_free(&pkt);
    avcodec_free_context(&dec);
    avformat_close_input(&fmt);
    return n;
}

static void test_cpu_codec(enum AVCodecID codec, const char *name, const char *container)
{
    char path[512];
    enum { W = 96, H = 54, FRAMES = 20 };
    if (make_video(path, sizeof path, name, container, codec, W, H, FRAMES, 1) != 0) {
        printf("cpu: %s: no encoder here, not tested\n", avcodec_get_name(codec));
        return;
    }
    uint8_t *ref[FRAMES] = {0}, *got[FRAMES] = {0};
    int nref = decode_reference(path, ref, FRAMES);
    int w = 0, h = 0;
    int ngot = read_all(path, GLCV_MEDIA_DECODER_CPU, got, FRAMES, &w, &h, NULL);
    CHECK(nref == FRAMES && ngot == FRAMES, "%s: %d reference and %d media frames of %d", name, nref, ngot, FRAMES);
    double err = 0;
    for (int i = 0; i < nref && i < ngot; i++) {
        char what[64];
        snprintf(what, sizeof what, "%s frame %d (media against the definition)", name, i);
        same_frame(what, ref[i], got[i], 3, W, H);
        /* and the frames are the scene, within the codec's loss */
        glcv_image scene = test_image_make(W, H, GLCV_PIXEL_RGB8, 0);
        int seed = 1;
        fill_scene(&seed, i, &scene);
        for (int p = 0; p < W * H * 3; p++)
            err += abs((int)scene.data[p] - (int)got[i][p]);
        test_image_release(&scene);
    }
    err /= (double)ngot * W * H * 3;
    printf("cpu: %s: %d frames equal to the definition's conversion, mean difference from the scene %.2f\n", name,
           ngot, err);
    CHECK(err < 6.0, "%s: mean difference %.2f from the encoded scene", name, err);
    free_frames(ref, nref);
    free_frames(got, ngot);
}

static void test_cpu(void)
{
    test_cpu_codec(AV_CODEC_ID_H264, "cpu.mkv", "matroska");
    test_cpu_codec(AV_CODEC_ID_H264, "cpu.h264", "h264"); /* Annex-B, as cameras send it */
    test_cpu_codec(AV_CODEC_ID_HEVC, "cpu_hevc.mkv", "matroska");
    /* NVDEC for a codec it does not decode: refused at create, naming it (any machine) */
    char path[512];
    if (make_video(path, sizeof path, "ffv1.mkv", "matroska", AV_CODEC_ID_FFV1, 32, 24, 3, 0) == 0) {
        capture c = {0};
        glcv_media *m = NULL;
        CHECK_STATUS(glcv_media_create(&GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = path,
                                                          .decoder = GLCV_MEDIA_DECODER_NVDEC,
                                                          .logger = capture_logger(&c)),
                                       &m),
                     GLCV_ERROR_UNSUPPORTED);
        CHECK(strstr(c.last, "NVDEC decodes 8-bit 4:2:0 H.264 and HEVC") && strstr(c.last, "ffv1"), "message: %s",
              c.last);
        glcv_media_destroy(&m);
    }
    glcv_media *m = NULL;
    CHECK_STATUS(glcv_media_create(&GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_LAVFI, .decoder = 3), &m),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_media_create(&GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_LAVFI, .decoder_threads = 65), &m),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(!strcmp(glcv_media_decoder_string(GLCV_MEDIA_DECODER_NVDEC), "nvdec"), "decoder name");
}

/* ---- sets ------------------------------------------------------------------------------------------ */

/* The sets' frame size: 64 x 48, one whole number of the conversion kernel's 64 x 16 tiles, and
 * 70 x 38 (set_size), whose last tiles are cut in both directions and whose chroma planes have
 * an odd width. */
static int SET_W = 64, SET_H = 48;

static void set_size(int w, int h)
{
    SET_W = w;
    SET_H = h;
}

typedef struct set_case {
    char paths[4][512];
    int frames[4];  /* frames of each file */
    int count;      /* sources: the files and one missing */
} set_case;

static int make_set_files(set_case *c)
{
    const int lengths[3] = {12, 9, 12};
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "set%d_%dx%d.mkv", i, SET_W, SET_H);
        if (make_video(c->paths[i], sizeof c->paths[i], name, "matroska", AV_CODEC_ID_H264, SET_W, SET_H, lengths[i],
                       i + 2) != 0)
            return -1;
        c->frames[i] = lengths[i];
    }
    snprintf(c->paths[3], sizeof c->paths[3], "%s/missing.mp4", g_tmp);
    c->count = 4;
    return 0;
}

/* Reads a set to its end and compares every frame with the source read alone; `texture`: the
 * frames come from the texture array. */
static void run_set(set_case *c, int texture, glcv_media_decoder decoder, double cpu_share, int expect_nvdec)
{
    glcv_media_params sources[4];
    for (int i = 0; i < c->count; i++)
        sources[i] = GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = c->paths[i]);
    glcv_media_set *set = NULL;
    capture log = {0};
    CHECK_OK(glcv_media_set_create(&GLCV_MEDIA_SET_PARAMS(.count = c->count, .sources = sources, .texture = texture,
                                                          .decoder = decoder, .cpu_share = cpu_share,
                                                          .logger = capture_logger(&log)),
                                   &set));
    if (!set)
        return;
    glcv_media_set_params got;
    CHECK_OK(glcv_media_set_get_params(set, &got));
    CHECK(got.width == SET_W && got.height == SET_H, "the set's size %dx%d", got.width, got.height);
    CHECK(glcv_media_set_texture(set) ? texture : !texture, "texture %u for a %s set", glcv_media_set_texture(set),
          texture ? "texture" : "host");
    /* the missing file failed alone, saying why */
    CHECK(strstr(glcv_media_set_describe(set, 3), "missing.mp4"), "source 3 is described as '%s'",
          glcv_media_set_describe(set, 3));
    uint8_t *alone[3][16] = {{0}};
    int n_alone[3];
    for (int i = 0; i < 3; i++) {
        int w, h;
        n_alone[i] = read_all(c->paths[i], GLCV_MEDIA_DECODER_CPU, alone[i], 16, &w, &h, NULL);
    }
    glcv_image frames[4];
    glcv_media_set_frame out[4];
    uint8_t *layer = malloc((size_t)SET_W * SET_H * 4 * 4);
    int seen[3] = {0}, running = -1, reads = 0, mismatches = 0;
    for (; reads < 40; reads++) {
        CHECK_OK(glcv_media_set_read(set, texture ? NULL : frames, out, &running, 1000));
        CHECK(out[3].status == GLCV_ERROR_IO && !out[3].has_frame, "the missing source: status %s, frame %d",
              glcv_status_string(out[3].status), out[3].has_frame);
        if (texture) {
            glBindTexture(GL_TEXTURE_2D_ARRAY, glcv_media_set_texture(set));
            glPixelStorei(GL_PACK_ALIGNMENT, 1);
            glGetTexImage(GL_TEXTURE_2D_ARRAY, 0, GL_RGBA, GL_UNSIGNED_BYTE, layer);
            glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
        }
        for (int i = 0; i < 3; i++) {
            if (!out[i].has_frame)
                continue;
            CHECK(out[i].status == GLCV_OK, "source %d has a frame and status %s", i,
                  glcv_status_string(out[i].status));
            int k = (int)out[i].info.index;
            CHECK(k == seen[i], "source %d: frame %d after %d frames", i, k, seen[i]);
            seen[i]++;
            if (k >= n_alone[i])
                continue;
            char what[96];
            snprintf(what, sizeof what, "%s set, source %d frame %d (against the source alone)",
                     texture ? "texture" : "host", i, k);
            if (texture)
                mismatches += !same_frame(what, alone[i][k], layer + (size_t)i * SET_W * SET_H * 4, 4, SET_W, SET_H);
            else
                mismatches += !same_frame(what, alone[i][k], frames[i].data, 3, SET_W, SET_H);
        }
        if (running == 0)
            break;
    }
    for (int i = 0; i < 3; i++)
        CHECK(seen[i] == c->frames[i], "source %d: %d frames through the set, the file has %d", i, seen[i],
              c->frames[i]);
    CHECK(running == 0, "after %d reads %d sources still run", reads, running);
    int nvdec = 0;
    for (int i = 0; i < 3; i++) {
        glcv_media_stats s;
        glcv_media_decoder d;
        CHECK_OK(glcv_media_set_get_stats(set, i, &s, &d));
        nvdec += s.nvdec_frames > 0;
        if (expect_nvdec >= 0)
            CHECK((s.nvdec_frames == c->frames[i]) == (d == GLCV_MEDIA_DECODER_NVDEC),
                  "source %d: %lld NVDEC frames of %d, decoder %s", i, (long long)s.nvdec_frames, c->frames[i],
                  glcv_media_decoder_string(d));
    }
    if (expect_nvdec >= 0)
        CHECK(nvdec == expect_nvdec, "%d sources decoded on NVDEC, expected %d", nvdec, expect_nvdec);
    printf("%s set (decoder %s, cpu share %.2f): %d reads, frames %d %d %d, %d on NVDEC, %d mismatches\n",
           texture ? "texture" : "host", glcv_media_decoder_string(decoder), cpu_share, reads + 1, seen[0], seen[1],
           seen[2], nvdec, mismatches);
    /* reopens run in the background: the failed source fails the same way, an ended one starts
     * again; a second reopen while one is under way is refused */
    CHECK_OK(glcv_media_set_reopen(set, 3));
    CHECK_STATUS(glcv_media_set_reopen(set, 3), GLCV_ERROR_STATE);
    CHECK_OK(glcv_media_set_reopen(set, 1));
    int back = 0, failed_again = 0;
    for (int k = 0; k < 200 && !(back && failed_again); k++) {
        CHECK_OK(glcv_media_set_read(set, texture ? NULL : frames, out, &running, 20));
        if (!back && out[1].has_frame) {
            back = 1;
            CHECK(out[1].info.index == 0, "source 1 starts again at frame %lld", (long long)out[1].info.index);
        }
        failed_again = !out[3].reopening;
        struct timespec pause = {0, 10 * 1000000L}; /* reads do not wait for reopens */
        nanosleep(&pause, NULL);
    }
    CHECK(back && running == 1 && !out[1].reopening, "after the reopen: frame %d, %d running, reopening %d", back,
          running, out[1].reopening);
    CHECK(out[3].status == GLCV_ERROR_IO && !out[3].reopening, "the missing source after its reopen: %s, reopening %d",
          glcv_status_string(out[3].status), out[3].reopening);
    CHECK_STATUS(glcv_media_set_reopen(set, 4), GLCV_ERROR_INVALID_ARGUMENT);
    /* closed: source 1 (running again) delivers nothing, its status STATE, "closed"; host sets keep
     * showing its last frame; a reopen opens it again, and a close drops a reopen under way */
    uint8_t *last = texture ? NULL : malloc((size_t)SET_W * SET_H * 3);
    if (last)
        for (int y = 0; y < SET_H; y++)
            memcpy(last + (size_t)y * SET_W * 3, frames[1].data + (size_t)y * glcv_image_stride(&frames[1]),
                   (size_t)SET_W * 3);
    CHECK_OK(glcv_media_set_close(set, 1));
    CHECK_OK(glcv_media_set_close(set, 1));
    CHECK_STATUS(glcv_media_set_close(set, 4), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_media_set_close(NULL, 0), GLCV_ERROR_INVALID_ARGUMENT);
    int delivered = 0;
    for (int k = 0; k < 5; k++) {
        CHECK_OK(glcv_media_set_read(set, texture ? NULL : frames, out, &running, 20));
        delivered += out[1].has_frame;
    }
    CHECK(!delivered && running == 0 && out[1].status == GLCV_ERROR_STATE && !out[1].reopening,
          "closed source 1: %d frames, %d running, status %s, reopening %d", delivered, running,
          glcv_status_string(out[1].status), out[1].reopening);
    CHECK(!strcmp(glcv_media_set_describe(set, 1), "closed"), "closed source 1 is described as '%s'",
          glcv_media_set_describe(set, 1));
    if (last) {
        char what[64];
        snprintf(what, sizeof what, "host set: closed source 1's image");
        mismatches += !same_frame(what, last, frames[1].data, 3, SET_W, SET_H);
        free(last);
    }
    CHECK_OK(glcv_media_set_reopen(set, 1));
    CHECK_OK(glcv_media_set_close(set, 1));
    CHECK_OK(glcv_media_set_read(set, texture ? NULL : frames, out, &running, 20));
    CHECK(!out[1].has_frame && !out[1].reopening && out[1].status == GLCV_ERROR_STATE,
          "source 1 closed during its reopen: frame %d, reopening %d, status %s", out[1].has_frame, out[1].reopening,
          glcv_status_string(out[1].status));
    CHECK_OK(glcv_media_set_reopen(set, 1));
    back = 0;
    for (int k = 0; k < 200 && !back; k++) {
        CHECK_OK(glcv_media_set_read(set, texture ? NULL : frames, out, &running, 20));
        back = out[1].has_frame && out[1].info.index == 0 && out[1].status == GLCV_OK;
        struct timespec pause = {0, 10 * 1000000L};
        nanosleep(&pause, NULL);
    }
    CHECK(back && running == 1, "source 1 opened again after its close: frame %d, %d running", back, running);
    free(layer);
    for (int i = 0; i < 3; i++)
        free_frames(alone[i], n_alone[i]);
    glcv_media_set_destroy(&set);
    CHECK(set == NULL, "destroy clears the handle");
}

static void test_set_errors(void)
{
    glcv_media_set *set = NULL;
    glcv_media_params one = GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_LAVFI);
    CHECK_STATUS(glcv_media_set_create(NULL, &set), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_media_set_create(&GLCV_MEDIA_SET_PARAMS(.count = 0, .sources = &one), &set),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_media_set_create(&GLCV_MEDIA_SET_PARAMS(.count = 1), &set), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_media_set_create(&GLCV_MEDIA_SET_PARAMS(.count = 1, .sources = &one, .cpu_share = NAN), &set),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_media_set_create(&GLCV_MEDIA_SET_PARAMS(.count = 1, .sources = &one, .width = 5), &set),
                 GLCV_ERROR_INVALID_ARGUMENT);
    glcv_media_params bad = GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = "/nonexistent/x.mp4");
    CHECK_STATUS(glcv_media_set_create(&GLCV_MEDIA_SET_PARAMS(.count = 1, .sources = &bad), &set),
                 GLCV_ERROR_SIZE_MISMATCH);
    CHECK(set == NULL, "a failed create leaves NULL");
    /* with a size, a set of failing sources opens, and reports them */
    CHECK_OK(glcv_media_set_create(&GLCV_MEDIA_SET_PARAMS(.count = 1, .sources = &bad, .width = 8, .height = 8), &set));
    glcv_media_set_frame out;
    glcv_image frame;
    int running = -1;
    CHECK_OK(glcv_media_set_read(set, &frame, &out, &running, 0));
    CHECK(out.status == GLCV_ERROR_IO && !out.has_frame && running == 0, "status %s, frame %d, running %d",
          glcv_status_string(out.status), out.has_frame, running);
    CHECK_STATUS(glcv_media_set_read(set, NULL, &out, &running, 0), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_media_set_destroy(&set);
    glcv_media_set_destroy(NULL);
}

/* ---- nvdec: the GPU's decoders give the CPU's frames ------------------------------------------------ */

static void test_nvdec_codec(enum AVCodecID codec, const char *name, const char *container, int w, int h)
{
    char path[512];
    enum { FRAMES = 24 };
    if (make_video(path, sizeof path, name, container, codec, w, h, FRAMES, 3) != 0) {
        CHECK(0, "nvdec: cannot encode a %s test video", avcodec_get_name(codec));
        return;
    }
    uint8_t *cpu[FRAMES] = {0}, *gpu[FRAMES] = {0};
    int fw = 0, fh = 0;
    glcv_media_stats s_cpu, s_gpu;
    int ncpu = read_all(path, GLCV_MEDIA_DECODER_CPU, cpu, FRAMES, &fw, &fh, &s_cpu);
    int ngpu = read_all(path, GLCV_MEDIA_DECODER_NVDEC, gpu, FRAMES, &fw, &fh, &s_gpu);
    CHECK(ncpu == FRAMES && ngpu == FRAMES, "%s: %d CPU and %d NVDEC frames of %d", name, ncpu, ngpu, FRAMES);
    CHECK(s_gpu.nvdec_frames == ngpu && s_cpu.nvdec_frames == 0, "%s: %lld and %lld frames on NVDEC", name,
          (long long)s_gpu.nvdec_frames, (long long)s_cpu.nvdec_frames);
    int same = 0;
    for (int i = 0; i < ncpu && i < ngpu; i++) {
        char what[96];
        snprintf(what, sizeof what, "%s %dx%d frame %d (NVDEC against the CPU)", name, w, h, i);
        same += same_frame(what, cpu[i], gpu[i], 3, w, h);
    }
    printf("nvdec: %s %dx%d: %d of %d frames bit-identical to the CPU's\n", name, w, h, same, ncpu);
    free_frames(cpu, ncpu);
    free_frames(gpu, ngpu);
}

static int nvdec_available(void)
{
    char path[512];
    if (make_video(path, sizeof path, "probe.mkv", "matroska", AV_CODEC_ID_H264, 64, 48, 2, 0) != 0)
        return 0;
    glcv_media *m = NULL;
    glcv_status st = glcv_media_create(&GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = path,
                                                          .decoder = GLCV_MEDIA_DECODER_NVDEC),
                                       &m);
    glcv_media_destroy(&m);
    return st == GLCV_OK;
}

/* ---- main ------------------------------------------------------------------------------------------- */

static void remove_tmp(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (system(cmd) != 0)
        printf("could not remove %s\n", g_tmp);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "definition";
    av_log_set_level(AV_LOG_ERROR); /* the encoders of the fixtures are talkative */
    /* a directory of its own, removed however the test ends (a skip included) */
    snprintf(g_tmp, sizeof g_tmp, "/tmp/glcv_media_set_XXXXXX");
    if (!mkdtemp(g_tmp)) {
        printf("cannot create a directory in /tmp: %s\n", strerror(errno));
        return 1;
    }
    atexit(remove_tmp);
    glcv_context *ctx = NULL;
    if (!strcmp(mode, "definition")) {
        test_matrix_against_formulas();
        test_chroma_siting();
        test_layouts();
    } else if (!strcmp(mode, "cpu")) {
        test_cpu();
    } else if (!strcmp(mode, "set")) {
        set_case c;
        if (make_set_files(&c) != 0) {
            printf("SKIP: no H.264 encoder in this FFmpeg\n");
            return TEST_SKIP;
        }
        run_set(&c, 0, GLCV_MEDIA_DECODER_CPU, 0.0, 0);
        test_set_errors();
        /* the automatic NVDEC sessions' limit: set, queried, restored */
        CHECK(glcv_media_nvdec_auto_limit(-1) == GLCV_MEDIA_NVDEC_AUTO_SESSIONS, "the default limit is %d",
              glcv_media_nvdec_auto_limit(-1));
        CHECK(glcv_media_nvdec_auto_limit(5) == GLCV_MEDIA_NVDEC_AUTO_SESSIONS, "setting returns the previous limit");
        CHECK(glcv_media_nvdec_auto_limit(-1) == 5, "the limit set is %d", glcv_media_nvdec_auto_limit(-1));
        CHECK(glcv_media_nvdec_auto_limit(0) == 5 && glcv_media_nvdec_auto_limit(-1) == 0, "0: no limit");
        glcv_media_nvdec_auto_limit(GLCV_MEDIA_NVDEC_AUTO_SESSIONS);
    } else if (!strcmp(mode, "texture")) {
        set_case c;
        if (make_set_files(&c) != 0) {
            printf("SKIP: no H.264 encoder in this FFmpeg\n");
            return TEST_SKIP;
        }
        ctx = test_context_or_skip(33);
        /* the default: NVDEC where the GPU has it (CUDA conversion), else CPU and GL upload */
        run_set(&c, 1, GLCV_MEDIA_DECODER_DEFAULT, 0.0, -1);
        run_set(&c, 1, GLCV_MEDIA_DECODER_CPU, 0.0, 0);
        set_size(70, 38);
        if (make_set_files(&c) != 0) {
            CHECK(0, "texture: no 70x38 files");
        } else {
            run_set(&c, 1, GLCV_MEDIA_DECODER_DEFAULT, 0.0, -1);
            run_set(&c, 1, GLCV_MEDIA_DECODER_CPU, 0.0, 0);
        }
    } else if (!strcmp(mode, "nvdec")) {
        if (!nvdec_available()) {
            printf("SKIP: no CUDA device with NVDEC (glcv_media with decoder NVDEC is UNSUPPORTED)\n");
            return TEST_SKIP;
        }
        test_nvdec_codec(AV_CODEC_ID_H264, "nvdec.mkv", "matroska", 96, 54);
        test_nvdec_codec(AV_CODEC_ID_H264, "nvdec.h264", "h264", 160, 120);
        test_nvdec_codec(AV_CODEC_ID_H264, "nvdec_vga.mkv", "matroska", 640, 480);
        test_nvdec_codec(AV_CODEC_ID_H264, "nvdec_hd.mkv", "matroska", 1280, 720);
        test_nvdec_codec(AV_CODEC_ID_HEVC, "nvdec_hevc.mkv", "matroska", 320, 240);
    } else if (!strcmp(mode, "nvdec_set")) {
        /* sets first in the process: the CUDA runtime makes the primary context before FFmpeg sees it */
        if (!glcv_cuda_available(0)) {
            printf("SKIP: no CUDA device\n");
            return TEST_SKIP;
        }
        ctx = test_context_or_skip(33);
        set_case c;
        if (make_set_files(&c) != 0) {
            CHECK(0, "nvdec_set: no H.264 encoder");
        } else {
            run_set(&c, 1, GLCV_MEDIA_DECODER_DEFAULT, 0.0, 3);  /* the default: all three on NVDEC */
            run_set(&c, 1, GLCV_MEDIA_DECODER_NVDEC, 0.0, 3);
            run_set(&c, 1, GLCV_MEDIA_DECODER_DEFAULT, 0.5, 2);  /* one of three on the CPU, spread */
            run_set(&c, 1, GLCV_MEDIA_DECODER_CPU, 0.0, 0);      /* CPU frames, CUDA conversion */
            /* the automatic sessions' limit: two on NVDEC, the third on the CPU; given back with the
             * set (the next set gets two again); sources that ask for NVDEC are not limited */
            CHECK(glcv_media_nvdec_auto_limit(2) == GLCV_MEDIA_NVDEC_AUTO_SESSIONS, "the default limit");
            run_set(&c, 1, GLCV_MEDIA_DECODER_DEFAULT, 0.0, 2);
            run_set(&c, 1, GLCV_MEDIA_DECODER_DEFAULT, 0.0, 2);
            run_set(&c, 1, GLCV_MEDIA_DECODER_NVDEC, 0.0, 3);
            glcv_media_nvdec_auto_limit(GLCV_MEDIA_NVDEC_AUTO_SESSIONS);
            set_size(70, 38); /* cut tiles, odd chroma width: NVDEC's NV12 and the CPU's I420 */
            if (make_set_files(&c) != 0) {
                CHECK(0, "nvdec_set: no 70x38 files");
            } else {
                run_set(&c, 1, GLCV_MEDIA_DECODER_NVDEC, 0.0, 3);
                run_set(&c, 1, GLCV_MEDIA_DECODER_CPU, 0.0, 0);
            }
        }
    } else {
        printf("usage: test_media_set definition|cpu|set|texture|nvdec|nvdec_set\n");
        return 2;
    }
    glcv_context_destroy(&ctx);
    return test_finish("test_media_set");
}

#endif
