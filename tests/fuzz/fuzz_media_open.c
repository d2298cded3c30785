/* Fuzz target: the media opener (glcv_media_create of a video file: FFmpeg's probing, every
 * demuxer and decoder it picks, the conversion to RGB) and the reading of its frames, on any bytes.
 * The bytes are a memory file (memfd) opened by its /proc/self/fd path, so the input goes through
 * exactly the path a user's file takes. Checks the contract: open fails with one of the documented
 * statuses and no object, or succeeds with a frame size of 1..limit pixels; every frame read has
 * that size and a readable buffer; reading ends (end of stream, an error, or the frame cap) and
 * closing returns. Frames above the limit (64 Kpixels here) are never decoded.
 * libFuzzer drives it (clang -fsanitize=fuzzer); ctest replays its seeds and variations with
 * fuzz_replay_main.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include "fuzz_replay.h"

#include <glcv/image.h>
#include <glcv/media.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { LIMIT = 1 << 16, MAX_FRAMES = 48, READ_TIMEOUT_MS = 2000 };

static long g_opened, g_refused, g_frames;

static void require(int condition)
{
    if (!condition)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        glcv_image_set_max_pixels(LIMIT);
        ready = 1;
    }
    if (size == 0 || size > (1u << 20))
        return 0;
    int fd = memfd_create("glcv_fuzz_media", 0);
    if (fd < 0)
        return 0;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0)
            break;
        done += (size_t)n;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    glcv_media *m = (glcv_media *)&g_opened; /* must be set to NULL on failure */
    glcv_status st = done == size ? glcv_media_create(&GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = path,
                                                                         .mode = GLCV_MEDIA_EVERY_FRAME),
                                                      &m)
                                  : GLCV_ERROR_IO;
    if (st != GLCV_OK) {
        g_refused++;
        require(m == NULL || done != size);
        require(st == GLCV_ERROR_CORRUPT_DATA || st == GLCV_ERROR_UNSUPPORTED || st == GLCV_ERROR_LIMIT ||
                st == GLCV_ERROR_IO || st == GLCV_ERROR_OUT_OF_MEMORY);
        close(fd);
        return 0;
    }
    g_opened++;
    glcv_media_params got;
    require(glcv_media_get_params(m, &got) == GLCV_OK);
    require(got.width >= 1 && got.height >= 1 && (size_t)got.width * (size_t)got.height <= LIMIT);
    for (int frames = 0; frames < MAX_FRAMES;) {
        glcv_image frame;
        glcv_media_frame_info info;
        st = glcv_media_read(m, &frame, &info, READ_TIMEOUT_MS);
        if (st != GLCV_OK || info.end_of_stream || info.timed_out)
            break;
        require(frame.data && frame.width == got.width && frame.height == got.height);
        require(frame.stride >= (size_t)frame.width * 3);
        unsigned sum = 0;
        for (int y = 0; y < frame.height; y++)
            sum += frame.data[(size_t)y * frame.stride + (size_t)frame.width * 3 - 1];
        (void)sum;
        frames++;
        g_frames++;
    }
    glcv_media_stats stats;
    require(glcv_media_get_stats(m, &stats) == GLCV_OK && stats.decode_errors >= 0);
    glcv_media_destroy(&m);
    require(m == NULL);
    close(fd);
    return 0;
}

#ifndef GLCV_FUZZ_LIBFUZZER
/* ---- seeds: short videos in the containers and codecs users have ---------------------------- */

#include "video_file.h"

static void fill(void *user, int index, glcv_image *rgb)
{
    (void)user;
    for (int y = 0; y < rgb->height; y++)
        for (int x = 0; x < rgb->width * 3; x++)
            rgb->data[(size_t)y * rgb->stride + (size_t)x] = (uint8_t)(x * 7 + y * 3 + index * 40);
}

int fuzz_replay_seeds(void (*add)(const uint8_t *data, size_t size))
{
    static const struct {
        const char *container, *ext;
        enum AVCodecID codec;
        enum AVPixelFormat pix;
    } kinds[] = {
        {"matroska", "mkv", AV_CODEC_ID_FFV1, AV_PIX_FMT_BGR0},
        {"avi", "avi", AV_CODEC_ID_MPEG4, AV_PIX_FMT_YUV420P},
        {"mp4", "mp4", AV_CODEC_ID_MPEG4, AV_PIX_FMT_YUV420P},
    };
    char dir[] = "/tmp/glcv_fuzz_media.XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    int rc = 0;
    static uint8_t buffer[1 << 18];
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        char path[128];
        snprintf(path, sizeof path, "%s/seed.%s", dir, kinds[k].ext);
        if (test_video_encode(path, kinds[k].container, kinds[k].codec, kinds[k].pix, 16, 12, 3, 10, fill, NULL) != 0) {
            rc = 1;
            continue;
        }
        FILE *f = fopen(path, "rb");
        size_t n = f ? fread(buffer, 1, sizeof buffer, f) : 0;
        if (f)
            fclose(f);
        remove(path);
        if (n == 0 || n == sizeof buffer)
            rc = 1;
        else
            add(buffer, n);
    }
    rmdir(dir);
    return rc;
}
#endif

int fuzz_replay_check(void)
{
    fprintf(stderr, "fuzz_media_open: %ld inputs opened (%ld frames read), %ld refused\n", g_opened, g_frames,
            g_refused);
    if (g_opened == 0 || g_refused == 0 || g_frames == 0) {
        fprintf(stderr, "fuzz_media_open: expected inputs both opened and refused, and frames read\n");
        return 1;
    }
    return 0;
}
