/* Test videos encoded with FFmpeg's libraries; see video_file.h. */
#include "video_file.h"

#include <libavformat/avformat.h>
#include <libswscale/swscale.h>

#include <stdio.h>
#include <string.h>

static int drain_encoder(AVCodecContext *enc, AVFormatContext *oc, AVStream *st, AVPacket *pkt)
{
    for (;;) {
        int r = avcodec_receive_packet(enc, pkt);
        if (r == AVERROR(EAGAIN) || r == AVERROR_EOF)
            return 0;
        if (r < 0)
            return r;
        av_packet_rescale_ts(pkt, enc->time_base, st->time_base);
        pkt->stream_index = st->index;
        r = av_interleaved_write_frame(oc, pkt);
        if (r < 0)
            return r;
    }
}

int test_video_encode(const char *path, const char *container, enum AVCodecID codec_id, enum AVPixelFormat pix, int w,
                      int h, int frames, int rate, test_video_fill fill, void *user)
{
    int ret = -1, r = 0;
    AVFormatContext *oc = NULL;
    AVCodecContext *enc = NULL;
    AVFrame *frame = NULL;
    AVPacket *pkt = NULL;
    struct SwsContext *sws = NULL;
    glcv_image rgb = {0};
    /* H.264 and HEVC: x264 / x265 where FFmpeg has them, else the GPU's encoder */
    const char *const h264[] = {"libx264", "h264_nvenc", NULL}, *const hevc[] = {"libx265", "hevc_nvenc", NULL};
    const char *const *names = codec_id == AV_CODEC_ID_H264 ? h264 : codec_id == AV_CODEC_ID_HEVC ? hevc : NULL;
    const AVCodec *codec = names ? NULL : avcodec_find_encoder(codec_id);
    for (int i = 0; names && names[i] && !codec; i++)
        codec = avcodec_find_encoder_by_name(names[i]);
    if (!codec) {
        printf("no encoder for %s\n", avcodec_get_name(codec_id));
        return -1;
    }
    if ((r = avformat_alloc_output_context2(&oc, NULL, container, path)) < 0)
        goto done;
    AVStream *st = avformat_new_stream(oc, NULL);
    enc = avcodec_alloc_context3(codec);
    frame = av_frame_alloc();
    pkt = av_packet_alloc();
    if (!st || !enc || !frame || !pkt)
        goto done;
    enc->width = w;
    enc->height = h;
    enc->pix_fmt = pix;
    enc->time_base = (AVRational){1, rate};
    enc->framerate = (AVRational){rate, 1};
    enc->gop_size = 8;
    if (codec_id == AV_CODEC_ID_MPEG4) {
        enc->flags |= AV_CODEC_FLAG_QSCALE;
        enc->global_quality = FF_QP2LAMBDA * 2;
    }
    if (codec_id == AV_CODEC_ID_H264 || codec_id == AV_CODEC_ID_HEVC)
        enc->max_b_frames = 2; /* frames out of order: the decoders must reorder them alike */
    AVDictionary *opts = NULL;
    if (!strcmp(codec->name, "libx265"))
        av_dict_set(&opts, "x265-params", "log-level=error", 0);
    if (oc->oformat->flags & AVFMT_GLOBALHEADER)
        enc->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    r = avcodec_open2(enc, codec, &opts);
    av_dict_free(&opts);
    if (r < 0)
        goto done;
    if ((r = avcodec_parameters_from_context(st->codecpar, enc)) < 0)
        goto done;
    st->time_base = enc->time_base;
    if ((r = avio_open(&oc->pb, path, AVIO_FLAG_WRITE)) < 0)
        goto done;
    if ((r = avformat_write_header(oc, NULL)) < 0)
        goto done;
    frame->format = pix;
    frame->width = w;
    frame->height = h;
    if ((r = av_frame_get_buffer(frame, 0)) < 0)
        goto done;
    if (glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &rgb) != GLCV_OK)
        goto done;
    sws = sws_getContext(w, h, AV_PIX_FMT_RGB24, w, h, pix, SWS_BILINEAR | SWS_ACCURATE_RND, NULL, NULL, NULL);
    if (!sws)
        goto done;
    for (int i = 0; i < frames; i++) {
        if ((r = av_frame_make_writable(frame)) < 0)
            goto done;
        fill(user, i, &rgb);
        const uint8_t *src[1] = {rgb.data};
        int src_stride[1] = {(int)rgb.stride};
        sws_scale(sws, src, src_stride, 0, h, frame->data, frame->linesize);
        frame->pts = i;
        if ((r = avcodec_send_frame(enc, frame)) < 0 || (r = drain_encoder(enc, oc, st, pkt)) < 0)
            goto done;
    }
    if ((r = avcodec_send_frame(enc, NULL)) < 0 || (r = drain_encoder(enc, oc, st, pkt)) < 0)
        goto done;
    if ((r = av_write_trailer(oc)) < 0)
        goto done;
    ret = 0;
done:
    if (ret != 0) {
        char err[128] = "";
        if (r < 0)
            av_strerror(r, err, sizeof err);
        printf("encoding %s failed: %s\n", path, err);
    }
    sws_freeContext(sws);
    glcv_image_free(&rgb);
    av_packet_free(&pkt);
    av_frame_free(&frame);
    avcodec_free_context(&enc);
    if (oc && oc->pb)
        avio_closep(&oc->pb);
    avformat_free_context(oc);
    return ret;
}
