/* A video for the glcv tool's tests of video input: COUNT frames of the synthetic scene, both as
 * a lossless video (FFV1 in Matroska, so a reader gets the same pixels back) and as PNG files
 * DIR/frame_NNNN.png, so that a test can segment the same frames either way.
 *
 * With CODEC h264 or hevc the video is that instead (lossy, 4:2:0, B-frames; as cameras send it),
 * and SEED picks another synthetic scene (its objects move otherwise).
 *
 * usage: test_video_fixture OUT.mkv DIR COUNT WxH [ffv1|h264|hevc [SEED]]
 *        (exit 0 written, 1 failed, 77 no FFmpeg or no encoder for the codec) */
#include "testutil.h"

#if !GLCV_HAVE_FFMPEG

int main(void)
{
    printf("test_video_fixture: glcv was built without media input (FFmpeg not found)\n");
    return TEST_SKIP;
}

#else

#include "video_file.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

typedef struct fixture {
    glcv_synth *synth;
    const char *dir;
    int failures;
} fixture;

/* Renders frame i into the video's frame and writes it as DIR/frame_NNNN.png too. */
static void fill_synthetic(void *user, int i, glcv_image *rgb)
{
    fixture *f = user;
    char path[1024];
    snprintf(path, sizeof path, "%s/frame_%04d.png", f->dir, i);
    if (glcv_synth_frame(f->synth, i, rgb, NULL) != GLCV_OK || glcv_image_save_png(path, rgb, NULL) != GLCV_OK) {
        printf("test_video_fixture: cannot render or write %s\n", path);
        f->failures++;
    }
}

int main(int argc, char **argv)
{
    int count = argc >= 5 && argc <= 7 ? atoi(argv[3]) : 0, w = 0, h = 0;
    const char *codec = argc >= 6 ? argv[5] : "ffv1";
    int seed = argc >= 7 ? atoi(argv[6]) : 0;
    if (count < 1 || sscanf(argv[4], "%dx%d", &w, &h) != 2 || w < 1 || h < 1 ||
        (strcmp(codec, "ffv1") && strcmp(codec, "h264") && strcmp(codec, "hevc")) || seed < 0) {
        printf("usage: test_video_fixture OUT.mkv DIR COUNT WxH [ffv1|h264|hevc [SEED]]\n");
        return 1;
    }
    enum AVCodecID id = !strcmp(codec, "h264") ? AV_CODEC_ID_H264 : !strcmp(codec, "hevc") ? AV_CODEC_ID_HEVC
                                                                                            : AV_CODEC_ID_FFV1;
    if (id != AV_CODEC_ID_FFV1 && !avcodec_find_encoder(id)) {
        printf("test_video_fixture: this FFmpeg has no %s encoder\n", codec);
        return TEST_SKIP;
    }
    if (mkdir(argv[2], 0700) != 0 && errno != EEXIST) {
        printf("test_video_fixture: cannot create %s: %s\n", argv[2], strerror(errno));
        return 1;
    }
    fixture f = {NULL, argv[2], 0};
    glcv_synth_params sp = GLCV_SYNTH_PARAMS(.width = w, .height = h, .frames = count, .seed = (uint32_t)seed);
    if (glcv_synth_create(&sp, &f.synth) != GLCV_OK) {
        printf("test_video_fixture: cannot create the synthetic scene\n");
        return 1;
    }
    int rc = test_video_encode(argv[1], "matroska", id, id == AV_CODEC_ID_FFV1 ? AV_PIX_FMT_BGR0 : AV_PIX_FMT_YUV420P,
                               w, h, count, 25, fill_synthetic, &f);
    glcv_synth_destroy(&f.synth);
    return rc == 0 && f.failures == 0 ? 0 : 1;
}

#endif
