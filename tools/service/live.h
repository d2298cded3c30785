/* The live view of 'glcv serve': for each camera someone watches, a frame-delta stream
 * (docs/STREAM.md) of what it sees, served to browsers over WebSocket (http.h) by the stream hub of
 * 'glcv stream serve' (tools/stream/stream_hub.h) with the stream protocol's handshake and token.
 *
 * The picture is RGBA8: the camera's frame in R, G, B and the segmenter's mask in A (255 moving, 0
 * not), so one packet carries both and a viewer draws the mask over the frame. The encoder is the
 * CPU engine of glcv/delta.h (the sets' GL contexts are theirs), without compression (a browser
 * decodes the packets without a Zstandard library). Nothing is read back, composed or encoded for
 * a camera nobody watches, and a watched camera's frames are handed over at `max_fps` at most:
 * svc_live_wanted says whether its set should hand the frame it has now.
 *
 * Beside the packets, each stream keeps the last frames' camera frame indices (and, when the
 * camera tracks objects, their boxes), which the WebSocket sends as text messages so that a viewer
 * knows which frame of the camera a picture is. */
#ifndef GLCV_SERVICE_LIVE_H
#define GLCV_SERVICE_LIVE_H

#include "http.h"

#include <glcv/core.h>

#include <stddef.h>
#include <stdint.h>

typedef struct svc_live_params {
    const uint8_t *token; /* the viewers' token (copied), or NULL: none */
    size_t token_bytes;
    int threshold;         /* of the delta encoder: 1..255, 0: 8 */
    int keyframe_interval; /* 0: 100 */
    int max_viewers;       /* of one camera, 0: 8 */
    int max_fps;           /* pictures a second at most (a camera sending more: frames skipped), 0: 30 */
    glcv_logger logger;
} svc_live_params;

/* A box of a tracked object in a frame (svc_live_boxes). */
typedef struct svc_live_box {
    int64_t id;
    int x, y, width, height;
} svc_live_box;

typedef struct svc_live_stream svc_live_stream;

/* A camera's stream, with one reference; NULL when out of memory. No thread runs until a viewer
 * comes (a hub and the encoder's thread), nor 30 s after the last one left. */
svc_live_stream *svc_live_stream_new(const svc_live_params *params, const char *camera);
svc_live_stream *svc_live_stream_ref(svc_live_stream *s);
/* Drops a reference; the last one frees the stream. Accepts NULL and &NULL. */
void svc_live_stream_unref(svc_live_stream **s);

/* The camera is gone: its viewers get END (at most 1 s to take what is queued), and no viewer
 * joins any more. */
void svc_live_stream_close(svc_live_stream *s);

/* Hands a connected socket (a WebSocket's bridge) to the stream's hub, started on the first
 * viewer. The stream owns `fd` from here. 0, or -1 with a one-line reason. */
int svc_live_attach(svc_live_stream *s, int fd, const char *peer, char *error, size_t size);

/* The camera's frame size, when its set opens: a viewer's byte budget is 4 pictures of it (of
 * 1920 x 1080 before it is known). */
void svc_live_size(svc_live_stream *s, int width, int height);

/* Whether anyone watches (the boxes are worth making). */
int svc_live_watched(svc_live_stream *s);

/* Whether anyone watches and a picture is due (max_fps): the set hands this camera's frame over
 * (svc_live_frame) only then. A hub that has had no viewer for 30 s is stopped here, with its
 * thread (the next viewer starts them again). */
int svc_live_wanted(svc_live_stream *s);

/* The camera's next frame (RGB8 or RGBA8) and its mask (GRAY8), its index in the camera: composed,
 * encoded and published to the viewers. Called by the camera's set thread. */
void svc_live_frame(svc_live_stream *s, const glcv_image *frame, const glcv_image *mask, int64_t index);

/* The tracked objects' boxes of the camera's frame `index` (from the event workers): sent with
 * the next frame's information. */
void svc_live_boxes(svc_live_stream *s, int64_t index, const svc_live_box *boxes, int count);

/* Appends to `out` a JSON object with what was encoded since *cursor (0 at first):
 *   {"camera":ID,"frames":[[PACKET_FRAME,CAMERA_INDEX],...],"boxes":{"index":I,"objects":[[ID,X,Y,W,H],...]}}
 * and moves *cursor on. Returns 1 when it appended something, 0 when nothing is new. */
int svc_live_info(svc_live_stream *s, uint64_t *cursor, uint64_t *boxes_cursor, svc_text *out);

#endif
