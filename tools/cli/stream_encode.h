/* The encode stage of 'glcv stream serve': the filter before encoding (none; gray: the encoder's
 * GRAY8 format; segment: the ETH segmenter's mask, so that only moving objects are sent), the
 * headless GL context, the segmenter and the frame-delta encoder. Everything here runs on one
 * thread, the one that created it (its GL context is current there).
 *
 * With segment the first `learn` frames are sent whole while the segmenter learns the background
 * from them (as 'glcv segment --learn' does); from then on each frame is segmented, and what is
 * encoded is the frame where the mask is 1 and the segmenter's background where it is 0: the
 * moving objects over the background. A pixel an object has left goes back to the background in
 * the next packet, within the threshold (the background itself changes only as the segmenter
 * adapts it, slowly). When the segmenter and the encoder both run on the GPU, each frame is
 * uploaded once into a texture that both read, and a GL pass composes what is sent from it, the
 * mask and the background textures. */
#ifndef GLCV_TOOLS_STREAM_ENCODE_H
#define GLCV_TOOLS_STREAM_ENCODE_H

#include "cli.h"
#include "segmenter.h"

enum { STREAM_FILTER_NONE = 0, STREAM_FILTER_GRAY, STREAM_FILTER_SEGMENT };

extern const char *const stream_filter_names[]; /* "none", "gray", "segment" */

typedef struct stream_encoder_params {
    int width, height;       /* of the source's RGB8 frames */
    int filter;              /* STREAM_FILTER_* */
    int threshold;           /* glcv_delta_params.threshold: GLCV_DELTA_LOSSLESS or 1..255 */
    int keyframe_interval;   /* glcv_delta_params.keyframe_interval */
    int learn;               /* segment: frames learned from */
    const cli_segmenter *seg; /* the segmenter's options and --engine (every stage's engine) */
    const cli_args *args;    /* for explicit zeros among them */
    int quiet;
    glcv_logger logger;
} stream_encoder_params;

typedef struct stream_encoder stream_encoder;

/* Creates the context (unless the engine is cpu; auto falls back to the CPU without one), the
 * segmenter and the encoder on the calling thread; unless quiet, prints the engine line. Prints
 * the error. */
int stream_encoder_create(const stream_encoder_params *params, stream_encoder **out);

/* Encodes the next frame (RGB8, the size given): *packet (in the encoder's memory, valid until
 * the next call) and *bytes; *ms gets the time of the filter and the encoder. Prints the error. */
int stream_encoder_frame(stream_encoder *e, const glcv_image *frame, const uint8_t **packet, size_t *bytes,
                         double *ms);

/* A snapshot keyframe of the viewers' picture after the last frame (glcv_delta_snapshot). */
int stream_encoder_snapshot(stream_encoder *e, const uint8_t **packet, size_t *bytes);

/* Bytes of a frame of the stream (its format). */
size_t stream_encoder_frame_bytes(const stream_encoder *e);

/* "RGB8" or "GRAY8", and "engine E (segmenter S) on <context | CPU>". */
const char *stream_encoder_format_name(const stream_encoder *e);
const char *stream_encoder_describe(const stream_encoder *e);

/* Destroys everything, the context last. Accepts &NULL. */
void stream_encoder_destroy(stream_encoder **e);

#endif
