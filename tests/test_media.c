/* Media input: parameter checks and open errors; lavfi sources (frame count, size, timestamps,
 * content, scaling, RGBA, live pacing and frame drops, timeouts); videos this test encodes itself
 * with FFmpeg's libraries (lossless FFV1 in Matroska: exact pixels; MPEG-4 in AVI: within
 * tolerance; looping; truncated and corrupted files); image folders and numbered sequences; the
 * synthetic scene; closing while the capture thread waits; a network source that is cut or stalls
 * mid-stream. Optional argument: a video file that
 * must play (the OpenCV sample vtest.avi). Exits 77 when glcv was built without FFmpeg. */
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

#include "video_file.h"

#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char g_tmp[256];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static glcv_media *open_ok(glcv_media_params p)
{
    glcv_media *m = NULL;
    p.logger = test_logger();
    glcv_status st = glcv_media_create(&p, &m);
    CHECK(st == GLCV_OK && m, "glcv_media_create(%s, '%s'): %s", glcv_media_source_string(p.source),
          p.location ? p.location : "", glcv_status_string(st));
    if (m)
        printf("  opened: %s\n", glcv_media_describe(m));
    return m;
}

static glcv_status open_status(glcv_media_params p)
{
    glcv_media *m = NULL;
    glcv_status st = glcv_media_create(&p, &m);
    CHECK((st == GLCV_OK) == (m != NULL), "open returned %s with media %p", glcv_status_string(st), (void *)m);
    glcv_media_destroy(&m);
    return st;
}

/* The test pattern of frame i: a gradient, a blue level that codes the index and a white
 * 12x12 box that moves 3 pixels per frame. */
static void pattern_pixel(int i, int x, int y, int w, int h, uint8_t rgb[3])
{
    int bx = 4 + 3 * i, by = h / 2 - 6;
    if (x >= bx && x < bx + 12 && y >= by && y < by + 12) {
        rgb[0] = rgb[1] = rgb[2] = 255;
        return;
    }
    rgb[0] = (uint8_t)(x * 200 / w);
    rgb[1] = (uint8_t)(y * 200 / h);
    rgb[2] = (uint8_t)((i * 37) % 200);
}

static void fill_pattern(void *user, int i, glcv_image *img)
{
    (void)user;
    int bpp = glcv_pixel_format_size(img->format);
    size_t stride = glcv_image_stride(img);
    for (int y = 0; y < img->height; y++)
        for (int x = 0; x < img->width; x++) {
            uint8_t *d = img->data + (size_t)y * stride + (size_t)x * (size_t)bpp;
            pattern_pixel(i, x, y, img->width, img->height, d);
            if (bpp == 4)
                d[3] = 255;
        }
}

/* Largest and mean absolute difference between a delivered frame and pattern i. */
static void compare_pattern(const glcv_image *f, int i, int *max_diff, double *mean_diff)
{
    int bpp = glcv_pixel_format_size(f->format);
    long sum = 0;
    int mx = 0;
    for (int y = 0; y < f->height; y++)
        for (int x = 0; x < f->width; x++) {
            uint8_t want[3];
            pattern_pixel(i, x, y, f->width, f->height, want);
            const uint8_t *d = f->data + (size_t)y * f->stride + (size_t)x * (size_t)bpp;
            for (int c = 0; c < 3; c++) {
                int diff = abs((int)d[c] - (int)want[c]);
                sum += diff;
                if (diff > mx)
                    mx = diff;
            }
        }
    *max_diff = mx;
    *mean_diff = (double)sum / (3.0 * f->width * f->height);
}

/* ---- helpers ----------------------------------------------------------------------------- */

typedef struct read_result {
    int frames;
    int eos;
    glcv_status error;
    int width, height;
    int64_t last_index;
    int index_errors; /* EVERY_FRAME: indices not 0, 1, 2, ... */
    int worst_max_diff;
    double worst_mean_diff;
} read_result;

/* Reads until the end (or `limit` frames), comparing with the pattern when `pattern_frames` > 0
 * (frame index modulo pattern_frames). */
static read_result read_all(glcv_media *m, int limit, int pattern_frames)
{
    read_result rr = {0};
    rr.last_index = -1;
    for (int guard = 0; guard < 100000 && (limit <= 0 || rr.frames < limit); guard++) {
        glcv_image f;
        glcv_media_frame_info info;
        glcv_status st = glcv_media_read(m, &f, &info, 10000);
        if (st != GLCV_OK) {
            rr.error = st;
            break;
        }
        if (info.end_of_stream) {
            rr.eos = 1;
            CHECK(f.data == NULL, "end of stream with a frame");
            break;
        }
        CHECK(!info.timed_out, "no frame within 10 s (after %d frames)", rr.frames);
        if (info.timed_out)
            break;
        if (info.index != rr.frames)
            rr.index_errors++;
        rr.last_index = info.index;
        rr.width = f.width;
        rr.height = f.height;
        if (pattern_frames > 0) {
            int mx;
            double mean;
            compare_pattern(&f, (int)(info.index % pattern_frames), &mx, &mean);
            if (mx > rr.worst_max_diff)
                rr.worst_max_diff = mx;
            if (mean > rr.worst_mean_diff)
                rr.worst_mean_diff = mean;
        }
        rr.frames++;
    }
    return rr;
}

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL, "cannot write %s", path);
    if (!f)
        return;
    fwrite(data, 1, n, f);
    fclose(f);
}

static long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* ---- tests ------------------------------------------------------------------------------- */

static void test_params(void)
{
    printf("== parameters and open errors\n");
    glcv_media *m = (glcv_media *)1;
    CHECK_STATUS(glcv_media_create(NULL, &m), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(m == NULL, "out not cleared");
    CHECK_STATUS(glcv_media_create(&GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC), NULL),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = (glcv_media_source)42)), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC, .width = 64)),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC, .width = -1, .height = 5)),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC, .stall_timeout = NAN)),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC, .frame_rate = NAN)),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC, .frame_rate = -5)),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC, .format = GLCV_PIXEL_GRAY8)),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC, .ring_frames = 1)),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC, .ring_frames = 17)),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC, .mode = (glcv_media_mode)9)),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC,
                                               .synth = GLCV_SYNTH_PARAMS(.objects = 99))),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO)), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_FRAMES_DIR, .location = "")),
                 GLCV_ERROR_INVALID_ARGUMENT);

    char path[512];
    snprintf(path, sizeof path, "%s/missing.avi", g_tmp);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = path)), GLCV_ERROR_IO);
    snprintf(path, sizeof path, "%s/garbage.avi", g_tmp);
    char junk[4096];
    uint64_t rs = 7;
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (char)(test_rand(&rs) & 0xff);
    write_file(path, junk, sizeof junk);
    glcv_status st = open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = path));
    CHECK(st == GLCV_ERROR_CORRUPT_DATA, "a file of random bytes: %s, expected corrupt data", glcv_status_string(st));
    snprintf(path, sizeof path, "%s/empty_dir", g_tmp);
    mkdir(path, 0700);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_FRAMES_DIR, .location = path)), GLCV_ERROR_IO);
    snprintf(path, sizeof path, "%s/no_such_dir", g_tmp);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_FRAMES_DIR, .location = path)), GLCV_ERROR_IO);
    snprintf(path, sizeof path, "%s/none_%%04d.png", g_tmp);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_IMAGE_SEQUENCE, .location = path)),
                 GLCV_ERROR_IO);
    st = open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_LAVFI, .location = "nosuchfilter=size=10x10"));
    CHECK(st == GLCV_ERROR_INVALID_ARGUMENT, "a bad lavfi graph: %s, expected invalid argument",
          glcv_status_string(st));
    st = open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_LAVFI, .location = "anullsrc"));
    CHECK(st == GLCV_ERROR_INVALID_ARGUMENT, "a lavfi graph without video: %s, expected invalid argument",
          glcv_status_string(st));
    /* an empty location is refused (NULL means the default graph or camera) */
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_LAVFI, .location = "")),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_CAMERA, .location = "")),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_CAMERA, .location = "/dev/video999")),
                 GLCV_ERROR_IO);

    glcv_image f;
    glcv_media_frame_info info;
    CHECK_STATUS(glcv_media_read(NULL, &f, &info, 0), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_media_get_stats(NULL, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_media_get_params(NULL, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(strcmp(glcv_media_source_string(GLCV_MEDIA_LAVFI), "lavfi") == 0, "source names");
    CHECK(strcmp(glcv_media_source_string((glcv_media_source)77), "?") == 0, "unknown source name");
    glcv_media_destroy(NULL);
    glcv_media *none = NULL;
    glcv_media_destroy(&none);
}

static void test_lavfi(void)
{
    printf("== lavfi: count, size, timestamps, content\n");
    glcv_media *m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_LAVFI,
                                              .location = "testsrc=size=160x120:rate=25:duration=2",
                                              .mode = GLCV_MEDIA_EVERY_FRAME));
    if (m) {
        glcv_media_params p;
        CHECK_OK(glcv_media_get_params(m, &p));
        CHECK(p.width == 160 && p.height == 120, "size %dx%d", p.width, p.height);
        CHECK(fabs(p.frame_rate - 25.0) < 1e-6, "rate %g", p.frame_rate);
        CHECK(p.format == GLCV_PIXEL_RGB8 && p.mode == GLCV_MEDIA_EVERY_FRAME && p.ring_frames == 4,
              "resolved format %d mode %d ring %d", (int)p.format, (int)p.mode, p.ring_frames);
        int frames = 0, bad_pts = 0, not_gray = 0;
        uint64_t prev_hash = 0;
        int same = 0;
        for (;;) {
            glcv_image f;
            glcv_media_frame_info info;
            glcv_status st = glcv_media_read(m, &f, &info, 10000);
            CHECK_OK(st);
            if (st != GLCV_OK || info.end_of_stream || info.timed_out)
                break;
            CHECK(f.width == 160 && f.height == 120 && f.format == GLCV_PIXEL_RGB8 && f.stride >= 480,
                  "frame %dx%d format %d stride %zu", f.width, f.height, (int)f.format, f.stride);
            CHECK(((uintptr_t)f.data & 63) == 0, "frame buffer not 64-byte aligned");
            if (fabs(info.pts - frames / 25.0) > 1e-6)
                bad_pts++;
            CHECK(info.index == frames, "index %lld, expected %d", (long long)info.index, frames);
            /* testsrc: colourful, and changes every frame (its counter and moving gradient) */
            int colourful = 0;
            for (int i = 0; i < f.width * f.height; i += 7) {
                const uint8_t *px = f.data + i * 3;
                if (abs(px[0] - px[1]) > 40 || abs(px[1] - px[2]) > 40)
                    colourful++;
            }
            if (colourful < f.width * f.height / 70)
                not_gray++;
            uint64_t h = 1469598103934665603ull;
            for (size_t i = 0; i < f.stride * (size_t)f.height; i++)
                h = (h ^ f.data[i]) * 1099511628211ull;
            if (frames > 0 && h == prev_hash)
                same++;
            prev_hash = h;
            frames++;
        }
        CHECK(frames == 50, "testsrc duration=2 rate=25 gave %d frames, expected 50", frames);
        CHECK(bad_pts == 0, "%d frames with wrong timestamps", bad_pts);
        CHECK(not_gray == 0, "%d frames without testsrc's colours", not_gray);
        CHECK(same == 0, "%d frames identical to the one before", same);
        glcv_image f;
        glcv_media_frame_info info;
        CHECK_OK(glcv_media_read(m, &f, &info, 0));
        CHECK(info.end_of_stream && f.data == NULL, "end of stream is reported again");
        glcv_media_stats s;
        CHECK_OK(glcv_media_get_stats(m, &s));
        CHECK(s.captured == 50 && s.delivered == 50 && s.dropped == 0 && s.decode_errors == 0,
              "stats captured %lld delivered %lld dropped %lld errors %lld", (long long)s.captured,
              (long long)s.delivered, (long long)s.dropped, (long long)s.decode_errors);
        glcv_media_destroy(&m);
        CHECK(m == NULL, "close clears the pointer");
    }

    printf("== lavfi: a moving box, scaled, RGBA\n");
    /* A 32x32 yellow box enters at x = 10 + 4n on a flat blue-grey background. */
    const char *graph = "color=c=0x405060:size=200x100:rate=25:duration=1[bg];"
                        "color=c=0xffff00:size=32x32:rate=25[fg];"
                        "[bg][fg]overlay=x=10+4*n:y=30:shortest=1";
    m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_LAVFI, .location = graph, .width = 100, .height = 50,
                                  .format = GLCV_PIXEL_RGBA8, .mode = GLCV_MEDIA_EVERY_FRAME));
    if (m) {
        int frames = 0, misplaced = 0, bad_alpha = 0;
        for (;;) {
            glcv_image f;
            glcv_media_frame_info info;
            if (glcv_media_read(m, &f, &info, 10000) != GLCV_OK || info.end_of_stream || info.timed_out)
                break;
            CHECK(f.width == 100 && f.height == 50 && f.format == GLCV_PIXEL_RGBA8 && f.stride >= 400,
                  "scaled RGBA frame %dx%d format %d", f.width, f.height, (int)f.format);
            /* Box centre in the half-size frame: ((10 + 4n + 16) / 2, (30 + 16) / 2). */
            int cx = (26 + 4 * (int)info.index) / 2, cy = 23;
            const uint8_t *in = f.data + (size_t)cy * f.stride + (size_t)cx * 4;
            const uint8_t *out = f.data + (size_t)cy * f.stride + (size_t)((cx + 14) % 100) * 4;
            if (!(in[0] > 220 && in[1] > 220 && in[2] < 40) || !(out[2] > 80 && out[0] < 80)) {
                if (misplaced++ < 3)
                    printf("frame %lld: at box centre (%d,%d) rgb %d %d %d; beside it %d %d %d\n",
                           (long long)info.index, cx, cy, in[0], in[1], in[2], out[0], out[1], out[2]);
            }
            for (int x = 0; x < f.width; x += 9)
                if (f.data[(size_t)x * 4 + 3] != 255)
                    bad_alpha++;
            frames++;
        }
        CHECK(frames == 25, "%d frames, expected 25", frames);
        CHECK(misplaced == 0, "%d frames with the box elsewhere", misplaced);
        CHECK(bad_alpha == 0, "%d pixels with alpha != 255", bad_alpha);
        glcv_media_destroy(&m);
    }
}

static void test_live(void)
{
    printf("== live: pacing, drops, timeouts\n");
    /* LIVE (the default for lavfi): paced at 20 fps, so 20 frames take about a second. */
    glcv_media *m =
        open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_LAVFI, .location = "testsrc=size=64x48:rate=20:duration=1"));
    if (m) {
        glcv_media_params p;
        glcv_media_get_params(m, &p);
        CHECK(p.mode == GLCV_MEDIA_LIVE, "lavfi defaults to LIVE, got %d", (int)p.mode);
        double t0 = now_s();
        read_result rr = read_all(m, 0, 0);
        double t = now_s() - t0;
        CHECK(rr.eos && rr.frames == 20 && rr.error == GLCV_OK, "%d frames (eos %d, %s), expected 20", rr.frames,
              rr.eos, glcv_status_string(rr.error));
        CHECK(t > 0.8 && t < 5.0, "20 frames at 20 fps took %.3f s", t);
        glcv_media_destroy(&m);
    }

    /* Timestamp jumps, forward by 100 s after frame 5 and back by 50 s after frame 10: the clock
     * starts again at each, so 16 frames at 20 fps still take about 0.8 s (not a wait of the jump,
     * nor every later frame waiting). */
    m = open_ok(GLCV_MEDIA_PARAMS(
        .source = GLCV_MEDIA_LAVFI,
        .location = "testsrc=size=32x32:rate=20:duration=0.8,setpts='PTS+if(gte(N,5),100/TB,0)-if(gte(N,10),50/TB,0)'"));
    if (m) {
        double t0 = now_s();
        read_result rr = read_all(m, 0, 0);
        double t = now_s() - t0;
        printf("  timestamp jumps: %d frames in %.3f s\n", rr.frames, t);
        CHECK(rr.eos && rr.frames >= 14 && rr.error == GLCV_OK, "jumps: %d frames (eos %d, %s), expected 16 (live: a drop or two)",
              rr.frames, rr.eos, glcv_status_string(rr.error));
        CHECK(t > 0.5 && t < 4.0, "16 frames at 20 fps with two timestamp jumps took %.3f s", t);
        glcv_media_destroy(&m);
    }

    /* A reader slower than the source: newest frame wins, the rest are dropped and counted. */
    m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_LAVFI, .location = "testsrc=size=64x48:rate=100",
                                  .ring_frames = 3));
    if (m) {
        int64_t last = -1;
        int reads = 0, backwards = 0;
        double slowest = 0.0;
        for (int k = 0; k < 10; k++) {
            glcv_image f;
            glcv_media_frame_info info;
            double t0 = now_s();
            glcv_status st = glcv_media_read(m, &f, &info, 5000);
            double dt = now_s() - t0;
            if (dt > slowest)
                slowest = dt;
            CHECK(st == GLCV_OK && f.data && !info.timed_out, "read %d: %s", k, glcv_status_string(st));
            if (st != GLCV_OK || !f.data)
                break;
            if (info.index <= last)
                backwards++;
            last = info.index;
            reads++;
            sleep_ms(50); /* "processing" slower than the 100 fps source */
        }
        glcv_media_stats s;
        CHECK_OK(glcv_media_get_stats(m, &s));
        printf("  slow reader: %d reads, last index %lld, captured %lld delivered %lld dropped %lld, "
               "slowest read %.1f ms\n",
               reads, (long long)last, (long long)s.captured, (long long)s.delivered, (long long)s.dropped,
               slowest * 1e3);
        CHECK(backwards == 0, "indices went backwards %d times", backwards);
        CHECK(s.delivered == reads, "delivered %lld, read %d", (long long)s.delivered, reads);
        CHECK(s.dropped > 0, "a slow reader of a live source must see drops");
        CHECK(last >= 10 + s.dropped / 2, "the newest frame is delivered (last index %lld)", (long long)last);
        CHECK(s.captured >= s.delivered + s.dropped && s.captured <= s.delivered + s.dropped + 3,
              "captured %lld vs delivered %lld + dropped %lld (+ at most the ring)", (long long)s.captured,
              (long long)s.delivered, (long long)s.dropped);
        glcv_media_destroy(&m);
    }

    /* Timeouts: a 2 fps source has nothing new 0 or 100 ms after a frame. */
    m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_LAVFI, .location = "testsrc=size=32x32:rate=2"));
    if (m) {
        glcv_image f;
        glcv_media_frame_info info;
        CHECK_OK(glcv_media_read(m, &f, &info, -1));
        CHECK(f.data != NULL && !info.timed_out && !info.end_of_stream, "first frame without a limit");
        CHECK_OK(glcv_media_read(m, &f, &info, 0));
        CHECK(info.timed_out && f.data == NULL, "poll right after a frame times out");
        double t0 = now_s();
        CHECK_OK(glcv_media_read(m, &f, &info, 100));
        double dt = now_s() - t0;
        CHECK(info.timed_out && f.data == NULL, "100 ms timeout");
        CHECK(dt >= 0.09 && dt < 1.0, "a 100 ms timeout took %.3f s", dt);
        CHECK_OK(glcv_media_read(m, &f, &info, 3000));
        CHECK(f.data != NULL && info.index == 1, "the next frame arrives (index %lld)", (long long)info.index);
        glcv_media_destroy(&m); /* closes while the capture thread waits for the next frame's time */
    }
}

static void test_video(void)
{
    printf("== encoded videos: FFV1 (lossless) and MPEG-4\n");
    char ffv1[512], mpeg4[512], path[512];
    snprintf(ffv1, sizeof ffv1, "%s/pattern_ffv1.mkv", g_tmp);
    snprintf(mpeg4, sizeof mpeg4, "%s/pattern_mpeg4.avi", g_tmp);
    const int n = 20;
    int have_ffv1 =
        test_video_encode(ffv1, "matroska", AV_CODEC_ID_FFV1, AV_PIX_FMT_BGR0, 97, 61, n, 25, fill_pattern, NULL) == 0;
    int have_mpeg4 =
        test_video_encode(mpeg4, "avi", AV_CODEC_ID_MPEG4, AV_PIX_FMT_YUV420P, 160, 96, n, 10, fill_pattern, NULL) == 0;
    CHECK(have_ffv1, "could not encode the FFV1 test video");
    CHECK(have_mpeg4, "could not encode the MPEG-4 test video");

    if (have_ffv1) {
        glcv_media *m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = ffv1));
        if (m) {
            glcv_media_params p;
            glcv_media_get_params(m, &p);
            CHECK(p.mode == GLCV_MEDIA_EVERY_FRAME, "videos default to EVERY_FRAME");
            CHECK(strstr(glcv_media_describe(m), "ffv1") != NULL, "description names the codec: %s",
                  glcv_media_describe(m));
            read_result rr = read_all(m, 0, n);
            CHECK(rr.eos && rr.error == GLCV_OK && rr.frames == n, "FFV1: %d frames (eos %d), expected %d",
                  rr.frames, rr.eos, n);
            CHECK(rr.width == 97 && rr.height == 61, "FFV1: size %dx%d", rr.width, rr.height);
            CHECK(rr.index_errors == 0, "FFV1: %d out-of-order indices", rr.index_errors);
            CHECK(rr.worst_max_diff == 0, "FFV1 is lossless, yet a pixel differs by %d", rr.worst_max_diff);
            glcv_media_destroy(&m);
        }
        /* Frames above the image limit: refused at open with LIMIT (97x61 = 5917 pixels). */
        size_t saved = glcv_image_max_pixels();
        glcv_image_set_max_pixels(97 * 61 - 1);
        CHECK(open_status(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = ffv1)) == GLCV_ERROR_LIMIT,
              "a video of frames above the pixel limit must be refused with LIMIT");
        glcv_image_set_max_pixels(97 * 61);
        m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = ffv1));
        glcv_media_destroy(&m);
        glcv_image_set_max_pixels(saved);
        /* Looping: indices count on, content repeats. */
        m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = ffv1, .loop = 1));
        if (m) {
            read_result rr = read_all(m, 2 * n + 5, n);
            CHECK(rr.frames == 2 * n + 5 && rr.last_index == 2 * n + 4 && rr.index_errors == 0,
                  "looping: %d frames, last index %lld", rr.frames, (long long)rr.last_index);
            CHECK(rr.worst_max_diff == 0, "looping: a pixel differs by %d", rr.worst_max_diff);
            glcv_media_destroy(&m);
        }
    }

    if (have_mpeg4) {
        glcv_media *m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = mpeg4));
        if (m) {
            glcv_media_params p;
            glcv_media_get_params(m, &p);
            CHECK(fabs(p.frame_rate - 10.0) < 1e-6, "MPEG-4: rate %g, expected 10", p.frame_rate);
            read_result rr = read_all(m, 0, n);
            CHECK(rr.eos && rr.frames == n, "MPEG-4: %d frames (eos %d), expected %d", rr.frames, rr.eos, n);
            CHECK(rr.width == 160 && rr.height == 96, "MPEG-4: size %dx%d", rr.width, rr.height);
            CHECK(rr.worst_mean_diff < 4.0, "MPEG-4: mean difference %.2f (tolerance 4)", rr.worst_mean_diff);
            printf("  MPEG-4 at q2: worst frame mean |diff| %.2f, max %d\n", rr.worst_mean_diff, rr.worst_max_diff);
            glcv_media_destroy(&m);
        }

        /* Scaled on the way out. */
        m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = mpeg4, .width = 80, .height = 48));
        if (m) {
            read_result rr = read_all(m, 0, 0);
            CHECK(rr.frames == n && rr.width == 80 && rr.height == 48, "scaled: %d frames of %dx%d", rr.frames,
                  rr.width, rr.height);
            glcv_media_destroy(&m);
        }

        /* A truncated copy: fewer frames, then the end, never a crash. */
        long size = file_size(mpeg4);
        FILE *in = fopen(mpeg4, "rb");
        char *data = size > 0 ? malloc((size_t)size) : NULL;
        if (in && data && fread(data, 1, (size_t)size, in) == (size_t)size) {
            snprintf(path, sizeof path, "%s/truncated.avi", g_tmp);
            write_file(path, data, (size_t)size / 2);
            m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = path));
            if (m) {
                read_result rr = read_all(m, 0, 0);
                glcv_media_stats s;
                glcv_media_get_stats(m, &s);
                printf("  truncated: %d frames, eos %d, status %s, decode errors %lld\n", rr.frames, rr.eos,
                       glcv_status_string(rr.error), (long long)s.decode_errors);
                CHECK(rr.frames >= 1 && rr.frames < n, "truncated file: %d frames", rr.frames);
                /* the frames the file declares and never gave are not a normal end */
                CHECK(s.decode_errors >= n - rr.frames, "truncated file: %lld decode errors for %d missing frames",
                      (long long)s.decode_errors, n - rr.frames);
                CHECK(rr.eos || rr.error == GLCV_ERROR_CORRUPT_DATA || rr.error == GLCV_ERROR_IO,
                      "truncated file ends with %s", glcv_status_string(rr.error));
                glcv_media_destroy(&m);
            }
            /* Corrupted: random bytes over the middle of the frame data. */
            uint64_t rs = 99;
            for (long i = size / 3; i < size * 2 / 3; i++)
                if (test_rand(&rs) % 4 == 0)
                    data[i] = (char)(test_rand(&rs) & 0xff);
            snprintf(path, sizeof path, "%s/corrupted.avi", g_tmp);
            write_file(path, data, (size_t)size);
            m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = path));
            if (m) {
                read_result rr = read_all(m, 0, 0);
                glcv_media_stats s;
                glcv_media_get_stats(m, &s);
                printf("  corrupted: %d frames, eos %d, status %s, decode errors %lld\n", rr.frames, rr.eos,
                       glcv_status_string(rr.error), (long long)s.decode_errors);
                CHECK(rr.eos || rr.error == GLCV_ERROR_CORRUPT_DATA || rr.error == GLCV_ERROR_IO,
                      "corrupted file ends with %s", glcv_status_string(rr.error));
                if (rr.error != GLCV_OK) {
                    glcv_image f;
                    glcv_media_frame_info info;
                    CHECK_STATUS(glcv_media_read(m, &f, &info, 0), rr.error);
                }
                glcv_media_destroy(&m);
            }
        }
        free(data);
        if (in)
            fclose(in);
    }
}

static void test_images(void)
{
    printf("== image folders and sequences\n");
    char dir[512], path[600], pattern[600];
    snprintf(dir, sizeof dir, "%s/frames", g_tmp);
    mkdir(dir, 0700);
    const int n = 12;
    glcv_image img = {0};
    CHECK_OK(glcv_image_alloc(45, 31, GLCV_PIXEL_RGB8, &img));
    for (int i = 0; i < n; i++) {
        fill_pattern(NULL, i, &img);
        snprintf(path, sizeof path, "%s/f%03d.png", dir, i);
        CHECK_OK(glcv_image_save_png(path, &img, NULL));
        snprintf(path, sizeof path, "%s/seq_%04d.png", g_tmp, i + 1); /* a sequence starting at 1 */
        CHECK_OK(glcv_image_save_png(path, &img, NULL));
    }
    glcv_image_free(&img);
    snprintf(path, sizeof path, "%s/.hidden.png", dir);
    write_file(path, "x", 1);
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    write_file(path, "not an image", 12);

    glcv_media *m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_FRAMES_DIR, .location = dir));
    if (m) {
        CHECK(strstr(glcv_media_describe(m), "12 images") != NULL, "description: %s", glcv_media_describe(m));
        read_result rr = read_all(m, 0, n);
        CHECK(rr.eos && rr.frames == n && rr.index_errors == 0, "folder: %d frames, expected %d", rr.frames, n);
        CHECK(rr.width == 45 && rr.height == 31, "folder: size %dx%d", rr.width, rr.height);
        CHECK(rr.worst_max_diff == 0, "folder: PNG frames differ by up to %d (order or content)", rr.worst_max_diff);
        glcv_media_destroy(&m);
    }

    /* A corrupt image in the folder is skipped and counted. */
    snprintf(path, sizeof path, "%s/f005b.png", dir);
    write_file(path, "\x89PNG\r\n\x1a\nbroken", 14);
    m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_FRAMES_DIR, .location = dir));
    if (m) {
        read_result rr = read_all(m, 0, 0);
        glcv_media_stats s;
        glcv_media_get_stats(m, &s);
        CHECK(rr.eos && rr.frames == n && s.decode_errors == 1,
              "folder with a corrupt image: %d frames, %lld decode errors (expected %d, 1)", rr.frames,
              (long long)s.decode_errors, n);
        glcv_media_destroy(&m);
    }

    snprintf(pattern, sizeof pattern, "%s/seq_%%04d.png", g_tmp);
    m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_IMAGE_SEQUENCE, .location = pattern, .frame_rate = 5));
    if (m) {
        glcv_media_params p;
        glcv_media_get_params(m, &p);
        CHECK(fabs(p.frame_rate - 5.0) < 1e-6, "sequence rate %g", p.frame_rate);
        read_result rr = read_all(m, 0, n);
        CHECK(rr.eos && rr.frames == n && rr.index_errors == 0, "sequence: %d frames, expected %d", rr.frames, n);
        CHECK(rr.worst_max_diff == 0, "sequence: frames differ by up to %d", rr.worst_max_diff);
        glcv_media_destroy(&m);
    }
}

static void test_synthetic(void)
{
    printf("== synthetic scene and the default source\n");
    glcv_synth_params sp = GLCV_SYNTH_PARAMS(.frames = 7, .seed = 3);
    glcv_media *m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC, .width = 80, .height = 60, .synth = sp,
                                              .loop = 1));
    glcv_synth *ref = NULL;
    sp.width = 80;
    sp.height = 60;
    CHECK_OK(glcv_synth_create(&sp, &ref));
    glcv_image want = {0};
    CHECK_OK(glcv_image_alloc(80, 60, GLCV_PIXEL_RGB8, &want));
    if (m && ref) {
        int mismatches = 0;
        for (int k = 0; k < 10; k++) {
            glcv_image f;
            glcv_media_frame_info info;
            CHECK_OK(glcv_media_read(m, &f, &info, 5000));
            if (!f.data)
                break;
            CHECK(info.index == k, "index %lld, expected %d", (long long)info.index, k);
            glcv_synth_frame(ref, k % 7, &want, NULL);
            if (memcmp(f.data, want.data, want.stride * 60) != 0)
                mismatches++;
        }
        CHECK(mismatches == 0, "%d synthetic frames differ from glcv_synth_frame", mismatches);
        glcv_media_destroy(&m);
    }
    glcv_image_free(&want);
    glcv_synth_destroy(&ref);

    m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC, .synth = GLCV_SYNTH_PARAMS(.frames = 5)));
    if (m) {
        read_result rr = read_all(m, 0, 0);
        CHECK(rr.eos && rr.frames == 5 && rr.width == 320 && rr.height == 240, "synthetic: %d frames of %dx%d",
              rr.frames, rr.width, rr.height);
        glcv_media_destroy(&m);
    }

    /* Closing while the capture thread waits for a free slot (EVERY_FRAME, nobody reading). */
    m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_SYNTHETIC, .width = 32, .height = 32, .ring_frames = 2));
    if (m) {
        glcv_media_stats s;
        for (int k = 0; k < 200; k++) { /* the ring fills (within 2 s even on a loaded machine) */
            glcv_media_get_stats(m, &s);
            if (s.captured >= 2)
                break;
            sleep_ms(10);
        }
        sleep_ms(50); /* ... and then nothing more is captured */
        glcv_media_get_stats(m, &s);
        CHECK(s.captured == 2 && s.dropped == 0, "EVERY_FRAME fills the ring and waits: captured %lld dropped %lld",
              (long long)s.captured, (long long)s.dropped);
        glcv_media_destroy(&m);
    }

    m = open_ok(GLCV_MEDIA_PARAMS(0));
    if (m) {
        glcv_media_params p;
        glcv_media_get_params(m, &p);
        printf("  default source: %s (%s)\n", glcv_media_source_string(p.source), glcv_media_describe(m));
        CHECK(p.source == GLCV_MEDIA_CAMERA || p.source == GLCV_MEDIA_SYNTHETIC, "default source %d", (int)p.source);
        CHECK(p.mode == (p.source == GLCV_MEDIA_CAMERA ? GLCV_MEDIA_LIVE : GLCV_MEDIA_EVERY_FRAME),
              "default mode for %s", glcv_media_source_string(p.source));
        glcv_image f;
        glcv_media_frame_info info;
        CHECK_OK(glcv_media_read(m, &f, &info, 5000));
        CHECK(f.data && f.width == p.width && f.height == p.height, "a first frame from the default source");
        glcv_media_destroy(&m);
    }
}

static void test_sample_video(const char *path)
{
    printf("== sample video %s\n", path);
    if (access(path, R_OK) != 0) {
        printf("  not present: skipped\n");
        return;
    }
    glcv_media *m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = path));
    if (!m)
        return;
    glcv_media_params p;
    glcv_media_get_params(m, &p);
    CHECK(p.width == 768 && p.height == 576, "vtest.avi is 768x576, got %dx%d", p.width, p.height);
    double t0 = now_s();
    read_result rr = read_all(m, 0, 0);
    double t = now_s() - t0;
    glcv_media_stats s;
    glcv_media_get_stats(m, &s);
    printf("  %d frames in %.2f s, eos %d, decode errors %lld\n", rr.frames, t, rr.eos, (long long)s.decode_errors);
    CHECK(rr.eos && rr.error == GLCV_OK && rr.frames > 100 && rr.index_errors == 0, "%d frames, eos %d, %s",
          rr.frames, rr.eos, glcv_status_string(rr.error));
    glcv_media_destroy(&m);
}

/* ---- a network source that fails mid-stream --------------------------------------------- */

typedef enum { SERVE_RESET, SERVE_STALL } serve_end;

typedef struct server {
    int listener;
    const uint8_t *data;
    size_t bytes; /* sent before the end */
    serve_end end;
    atomic_int release; /* SERVE_STALL: close when set */
} server;

static void *serve(void *arg)
{
    server *sv = arg;
    int c = accept(sv->listener, NULL, NULL);
    if (c < 0)
        return NULL;
    for (size_t done = 0; done < sv->bytes;) {
        ssize_t n = send(c, sv->data + done, sv->bytes - done, MSG_NOSIGNAL);
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    if (sv->end == SERVE_RESET) {
        sleep_ms(200);
        struct linger lg = {1, 0}; /* close with a reset, as a peer that went away */
        setsockopt(c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    } else {
        while (!atomic_load(&sv->release))
            sleep_ms(10);
    }
    close(c);
    return NULL;
}

/* Serves the first `bytes` of `data` on a loopback port, then resets or stalls; returns the port. */
static int serve_start(server *sv, pthread_t *thread)
{
    sv->listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (sv->listener < 0 || bind(sv->listener, (struct sockaddr *)&a, sizeof a) != 0 || listen(sv->listener, 1) != 0 ||
        getsockname(sv->listener, (struct sockaddr *)&a, &len) != 0 || pthread_create(thread, NULL, serve, sv) != 0) {
        CHECK(0, "cannot start a loopback server: %s", strerror(errno));
        return -1;
    }
    return ntohs(a.sin_port);
}

static void serve_stop(server *sv, pthread_t thread)
{
    atomic_store(&sv->release, 1);
    pthread_join(thread, NULL);
    close(sv->listener);
}

static uint8_t *read_whole(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    uint8_t *data = NULL;
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (data = malloc((size_t)n)) && fread(data, 1, (size_t)n, f) != (size_t)n) {
        free(data);
        data = NULL;
    }
    if (f)
        fclose(f);
    *size = data ? (size_t)n : 0;
    return data;
}

static void test_network_faults(void)
{
    printf("== a network source cut or stalled mid-stream\n");
    char path[512], url[64];
    snprintf(path, sizeof path, "%s/network.mkv", g_tmp);
    /* 8 s of video: opening reads at most FFmpeg's 5 s analysis window, so a stall after 80 % of
     * the bytes comes after the open */
    const int n = 200;
    if (test_video_encode(path, "matroska", AV_CODEC_ID_FFV1, AV_PIX_FMT_BGR0, 97, 61, n, 25, fill_pattern, NULL) != 0) {
        CHECK(0, "could not encode the network test video");
        return;
    }
    size_t size;
    uint8_t *data = read_whole(path, &size);
    CHECK(data != NULL, "cannot read %s back", path);
    if (!data)
        return;

    /* Cut: the peer resets the connection after half the file. The frames before it come out
     * whole, then the read fails with IO (before: a quiet end of stream). */
    server sv = {.data = data, .bytes = size / 2, .end = SERVE_RESET};
    pthread_t thread;
    int port = serve_start(&sv, &thread);
    if (port > 0) {
        snprintf(url, sizeof url, "tcp://127.0.0.1:%d", port);
        glcv_media *m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = url));
        if (m) {
            read_result rr = read_all(m, 0, n);
            printf("  reset after %zu of %zu bytes: %d frames, then %s\n", sv.bytes, size, rr.frames,
                   glcv_status_string(rr.error));
            CHECK(rr.frames >= 1 && rr.frames < n && rr.worst_max_diff == 0, "reset: %d whole frames of %d", rr.frames,
                  n);
            CHECK(rr.error == GLCV_ERROR_IO && !rr.eos, "a reset connection must end with IO, not %s (eos %d)",
                  glcv_status_string(rr.error), rr.eos);
            glcv_media_destroy(&m);
        }
        serve_stop(&sv, thread);
    }

    /* Stall: the peer stops sending but keeps the connection. With stall_timeout 0.5 s the read
     * fails with IO about 0.5 s after the last data (before: it waited for ever). */
    sv = (server){.data = data, .bytes = size / 10 * 8, .end = SERVE_STALL};
    port = serve_start(&sv, &thread);
    if (port > 0) {
        snprintf(url, sizeof url, "tcp://127.0.0.1:%d", port);
        glcv_media *m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = url, .stall_timeout = 0.5));
        if (m) {
            double t0 = now_s();
            read_result rr = read_all(m, 0, n);
            double t = now_s() - t0;
            printf("  stalled after %zu bytes: %d frames, then %s after %.2f s\n", sv.bytes, rr.frames,
                   glcv_status_string(rr.error), t);
            CHECK(rr.frames >= 1 && rr.error == GLCV_ERROR_IO, "stall: %d frames, %s", rr.frames,
                  glcv_status_string(rr.error));
            CHECK(t >= 0.4 && t < 5.0, "stall: reported after %.2f s with stall_timeout 0.5", t);
            glcv_media_destroy(&m);
        }
        serve_stop(&sv, thread);
    }

    /* Stall with no timeout (negative): closing still ends the wait at once. */
    sv = (server){.data = data, .bytes = size / 10 * 8, .end = SERVE_STALL};
    port = serve_start(&sv, &thread);
    if (port > 0) {
        snprintf(url, sizeof url, "tcp://127.0.0.1:%d", port);
        glcv_media *m = open_ok(GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = url, .stall_timeout = -1));
        if (m) {
            read_result rr = read_all(m, 1, n);
            CHECK(rr.frames == 1, "stall without timeout: first frame not read");
            sleep_ms(300);
            double t0 = now_s();
            glcv_media_destroy(&m);
            double t = now_s() - t0;
            printf("  closed while the input stalls: %.3f s\n", t);
            CHECK(t < 2.0, "closing a stalled input took %.2f s", t);
        }
        serve_stop(&sv, thread);
    }
    free(data);
}

int main(int argc, char **argv)
{
    snprintf(g_tmp, sizeof g_tmp, "%s/glcv_media.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(g_tmp)) {
        printf("cannot create a temporary folder: %s\n", strerror(errno));
        return 1;
    }
    test_params();
    test_lavfi();
    test_live();
    test_video();
    test_images();
    test_synthetic();
    test_network_faults();
    if (argc > 1)
        test_sample_video(argv[1]);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (system(cmd) != 0)
        printf("could not remove %s\n", g_tmp);
    return test_finish("test_media");
}

#endif
