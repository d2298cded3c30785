/* Test videos encoded with FFmpeg's libraries, for the tests of media input (test_media) and of
 * the glcv tool's video input (test_video_fixture). Only with FFmpeg (GLCV_HAVE_FFMPEG). */
#ifndef GLCV_TEST_VIDEO_FILE_H
#define GLCV_TEST_VIDEO_FILE_H

#include <glcv/glcv.h>

#include <libavcodec/avcodec.h>

/* Fills `rgb` (RGB8, the video's size) with frame `index`. */
typedef void (*test_video_fill)(void *user, int index, glcv_image *rgb);

/* Writes `frames` frames from `fill` into the video file `path`: `container` (an FFmpeg muxer
 * name: "matroska", "avi", "mp4", "h264"), `codec_id` (FFV1 is lossless; H.264 and HEVC through
 * x264 / x265, or NVENC where FFmpeg has only that, with B-frames), its pixel format `pix`, w x h at
 * `rate` frames a second, a key frame every 8 frames (MPEG-4 at a fixed, fine quantiser). Returns 0,
 * or -1 with the reason printed on stdout (no encoder: "no encoder for ..."). */
int test_video_encode(const char *path, const char *container, enum AVCodecID codec_id, enum AVPixelFormat pix, int w,
                      int h, int frames, int rate, test_video_fill fill, void *user);

#endif
