/* NVDEC through NVIDIA's own parser, with decoders shared by the H.264 streams of one format: the
 * media service's GPU decoder for the sources of texture sets (src/media.c feeds it Annex-B access
 * units it demuxed with FFmpeg; this file includes no FFmpeg header).
 *
 * Why not FFmpeg's CUDA frames for these: a GPU opens at most about 288 NVDEC sessions (the 289th
 * fails on an H200 with driver 580), and FFmpeg's path costs about 0.49 ms of CPU time per VGA frame
 * against 0.15 ms here (docs/PERFORMANCE.md, "One decoder for several cameras"). One decoder serves
 * several H.264 streams when their decode surfaces together stay within the first 16 surface indices:
 * past index 15 the pictures of different streams disturb each other (measured with
 * bench/nvdec_share_bench --check), so a decoder holds 16 / P streams of P surfaces each, P being what
 * the stream's sequence asks for. Each stream's parser numbers its pictures from 0; its decodes are
 * offset to its own range of the decoder's surfaces. HEVC streams get a decoder each.
 *
 * Thread safety: a stream is used by one thread at a time; the streams of a shared decoder may run on
 * different threads (the decoder's calls are serialised by its own lock). */
#ifndef GLCV_MEDIA_NVDEC_H
#define GLCV_MEDIA_NVDEC_H

#include <glcv/glcv.h>

#include <stddef.h>
#include <stdint.h>

typedef struct glcv_nvdec glcv_nvdec;
typedef struct glcv_nvdec_decoder glcv_nvdec_decoder;

typedef enum glcv_nvdec_codec { GLCV_NVDEC_H264 = 0, GLCV_NVDEC_HEVC = 1 } glcv_nvdec_codec;

/* A decoded picture mapped in device memory: NV12, `width` x `height` (the stream's display
 * area), luma at `luma`, interleaved chroma at `chroma`, rows of `pitch` bytes. Valid until
 * glcv_nvdec_unmap, which may come after the stream is destroyed. */
typedef struct glcv_nvdec_frame {
    glcv_nvdec_decoder *decoder; /* NULL: no frame */
    unsigned long long luma, chroma;
    unsigned int pitch;
    int width, height;
    int64_t pts;
    int matrix_coefficients; /* the sequence's H.273 matrix_coefficients (2: unspecified) */
    int full_range;          /* its video_full_range_flag */
} glcv_nvdec_frame;

/* Whether the driver's CUDA and NVDEC libraries load (once per process; the answer is kept). */
int glcv_nvdec_available(void);

/* A stream decoding into decoders of `cuda_context` (a CUcontext). Frames are synchronised on the
 * stream's own CUDA stream before glcv_nvdec_receive returns them. Errors: UNSUPPORTED (no driver
 * libraries), CUDA, OUT_OF_MEMORY. */
glcv_status glcv_nvdec_create(void *cuda_context, glcv_nvdec_codec codec, const glcv_logger *logger,
                              glcv_nvdec **out);
/* Parses one access unit (Annex-B bytes) with its timestamp; size 0 ends the stream (the pictures
 * still held come out). Decoded pictures wait for glcv_nvdec_receive. Errors: UNSUPPORTED (no
 * decoder could be made for the stream: the GPU's sessions or memory are used up, or NVDEC does not
 * take its format; nothing was decoded, decode it on the CPU), CORRUPT_DATA (the stream changed its
 * format, or NVDEC refused a picture), CUDA. */
glcv_status glcv_nvdec_send(glcv_nvdec *s, const uint8_t *data, size_t size, int64_t pts);
/* Maps the next decoded picture into *frame: 1, or 0 when none waits. Errors (negative): a map that
 * failed (-1), counted as a decode error by the caller. */
int glcv_nvdec_receive(glcv_nvdec *s, glcv_nvdec_frame *frame);
/* Starts the stream again (a new parser, the same decoder surfaces), e.g. when a file loops. */
glcv_status glcv_nvdec_restart(glcv_nvdec *s);
/* Unmaps a frame (no-op for an empty one) and clears it. */
void glcv_nvdec_unmap(glcv_nvdec_frame *frame);
/* Frees the stream; frames it mapped stay valid until unmapped. NULL is a no-op. */
void glcv_nvdec_destroy(glcv_nvdec **s);

#endif
