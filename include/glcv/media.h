/* glcv media input: webcams, video files, image folders and sequences, FFmpeg's virtual lavfi
 * devices and the built-in synthetic scene, as one stream of RGB(A) frames.
 *
 * Built when FFmpeg's libraries (libavformat, libavcodec, libavdevice, libswscale) were found
 * at build time; the library builds without them, without this module.
 *
 * A capture thread decodes frames into a small ring of page-aligned buffers, so capture,
 * processing and display overlap. Two delivery modes:
 *   LIVE         the source runs at its own rate (a camera's clock; files, folders, lavfi and the
 *                synthetic scene paced by their timestamps). A reader slower than the source gets
 *                the newest frame and the older unread ones are dropped and counted: capture
 *                never stalls.
 *   EVERY_FRAME  every frame is delivered, in order, as fast as the reader reads; the capture
 *                thread waits when the ring is full. Nothing is dropped.
 * End of stream, an unplugged camera and decoding errors are reported by glcv_media_read.
 *
 * Thread safety: glcv_media_create, glcv_media_read and glcv_media_destroy are called by one thread
 * at a time (the reader); glcv_media_get_stats, glcv_media_get_params and glcv_media_describe may be
 * called from any thread while the object is open. No GL is used.
 *
 * FFmpeg's own log messages: on the first open, glcv installs an av_log callback that passes
 * messages emitted on glcv's capture threads to the object's logger (FFmpeg errors and warnings
 * as WARN, the rest as DEBUG) and every other message to FFmpeg's default callback, so an
 * application's own use of FFmpeg logs as before.
 */
#ifndef GLCV_MEDIA_H
#define GLCV_MEDIA_H

#include "core.h"
#include "synth.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct glcv_media glcv_media;

/* Kinds of source; what `location` names. */
typedef enum glcv_media_source {
    /* The first V4L2 camera that opens (/dev/video0 .. /dev/video63), or the synthetic scene
     * when there is none. glcv_media_get_params and glcv_media_describe say which. */
    GLCV_MEDIA_SOURCE_DEFAULT = 0,
    /* A V4L2 camera: `location` is the device (default "/dev/video0"). */
    GLCV_MEDIA_CAMERA = 1,
    /* A video file (any container and codec FFmpeg decodes): `location` is its path. */
    GLCV_MEDIA_VIDEO = 2,
    /* A folder of image files (.png .jpg .jpeg .bmp .tga .tif .tiff .ppm .pgm .pnm, any case;
     * hidden files skipped), sorted by name: `location` is the folder. */
    GLCV_MEDIA_FRAMES_DIR = 3,
    /* Numbered image files: `location` is a printf-style pattern with one integer conversion,
     * e.g. "frames/img_%04d.png"; numbering starts at the first of 0..4 that exists and ends at
     * the first missing number. */
    GLCV_MEDIA_IMAGE_SEQUENCE = 4,
    /* An FFmpeg lavfi filter graph used as a virtual device: `location` is the graph, e.g.
     * "testsrc=size=320x240:rate=25" (default "testsrc=size=320x240:rate=25"). */
    GLCV_MEDIA_LAVFI = 5,
    /* The built-in synthetic scene (glcv/synth.h) with `synth` as its parameters. */
    GLCV_MEDIA_SYNTHETIC = 6
} glcv_media_source;

/* How frames reach the reader; see the top of this header. */
typedef enum glcv_media_mode {
    /* LIVE for cameras and lavfi, EVERY_FRAME for the other sources. */
    GLCV_MEDIA_MODE_DEFAULT = 0,
    GLCV_MEDIA_LIVE = 1,
    GLCV_MEDIA_EVERY_FRAME = 2
} glcv_media_mode;

/* The pixel format a camera is asked to send. */
typedef enum glcv_media_camera_format {
    GLCV_MEDIA_CAMERA_FORMAT_DEFAULT = 0, /* the device's choice */
    GLCV_MEDIA_CAMERA_YUYV = 1,           /* uncompressed YUYV 4:2:2 */
    GLCV_MEDIA_CAMERA_MJPEG = 2           /* motion JPEG */
} glcv_media_camera_format;

/* Zero fields mean defaults. */
typedef struct glcv_media_params {
    glcv_media_source source; /* default: first camera, else the synthetic scene */
    /* Device, file, folder, pattern or lavfi graph (see glcv_media_source); copied at open.
     * NULL = the kind's default (cameras: "/dev/video0"; lavfi: a 320x240 testsrc); required for
     * VIDEO, FRAMES_DIR and IMAGE_SEQUENCE; ignored for SYNTHETIC. */
    const char *location;
    /* Frame size delivered. Cameras are asked for it (the device may pick a near size, which is
     * then scaled); other sources are scaled to it. 0, 0 = the source's own size (synthetic:
     * synth.width x synth.height). Set both or neither; 1..16384. */
    int width;
    int height;
    /* Cameras: the rate asked for (0 = the device's default). Folders and image sequences: their
     * rate (default 25). Synthetic: its rate (default 25). Video files and lavfi: ignored, they
     * have their own. Rates pace LIVE mode and give the timestamps. Finite, 0 or 0.1..1000. */
    double frame_rate;
    glcv_media_camera_format camera_format; /* default: the device's choice */
    glcv_pixel_format format;               /* RGB8 (default) or RGBA8 (alpha 255) */
    glcv_media_mode mode;                   /* default: LIVE for cameras and lavfi, else EVERY_FRAME */
    /* Frame buffers in the ring, 2..16 (default 4): one is held by the reader, one is being
     * filled, the rest queue. */
    int ring_frames;
    /* Nonzero: video files, folders, sequences and the synthetic scene start again at their end
     * instead of ending (frame indices keep counting). Default 0. */
    int loop;
    /* The synthetic scene's parameters (zero fields are its defaults; its width and height are
     * replaced by `width` and `height` when those are set). Ignored by other sources. */
    glcv_synth_params synth;
    /* The longest one wait for the input's data may last, in seconds, before the input counts as
     * failed (IO, "no data for N s"): a network stream that stopped sending, a camera that stopped
     * delivering, a source that never answers while opening. Default 10; negative: wait for ever
     * (glcv_media_destroy still ends the wait); finite. Files on a local disk never wait that long;
     * a named pipe (FIFO) is read without this bound. */
    double stall_timeout;
    glcv_logger logger;
} glcv_media_params;

#define GLCV_MEDIA_PARAMS(...) ((glcv_media_params){__VA_ARGS__})

/* About one delivered frame. */
typedef struct glcv_media_frame_info {
    /* Nonzero: the source has ended (end of file, last image, a lavfi graph that stops); no
     * frame was delivered and every later read says the same. */
    int end_of_stream;
    /* Nonzero: no frame arrived within timeout_ms; no frame was delivered; read again. */
    int timed_out;
    /* Index of the frame in the source, from 0 (counting on across loops). Dropped frames leave
     * gaps. */
    int64_t index;
    /* Presentation time of the frame in seconds from the first frame of the stream. */
    double pts;
    /* When the capture thread finished the frame, in seconds on a monotonic clock
     * (CLOCK_MONOTONIC). */
    double capture_time;
} glcv_media_frame_info;

/* Counters since open. */
typedef struct glcv_media_stats {
    int64_t captured;      /* frames decoded by the capture thread */
    int64_t delivered;     /* frames returned by glcv_media_read */
    int64_t dropped;       /* frames captured but never delivered (LIVE mode, slow reader) */
    int64_t decode_errors; /* packets or images that failed to decode and were skipped, and
                              frames a video file's container declares that never came out (a
                              truncated or damaged file; logged at its end) */
} glcv_media_stats;

/* Opens a source and starts its capture thread. The source is opened and probed before this
 * returns, so a missing file or device is reported here; frame size, rate and the resolved
 * source kind are then known (glcv_media_get_params).
 * Errors: INVALID_ARGUMENT (NULL, a bad field, no location for VIDEO, FRAMES_DIR or
 * IMAGE_SEQUENCE, an empty location (NULL is the default's), a NaN or infinite frame_rate or
 * stall_timeout, an enum out of range, a lavfi graph FFmpeg cannot build or without video),
 * IO (a file, folder, network stream or device that cannot be opened or read; an empty folder;
 * no camera for CAMERA; no data for stall_timeout while opening), CORRUPT_DATA (a file without a
 * decodable video stream), UNSUPPORTED (a codec FFmpeg cannot decode), LIMIT (frames of more
 * pixels than glcv_image_max_pixels), OUT_OF_MEMORY. *out is NULL on error; the logger says why.
 * Thread safety: any thread; the object may then be read from one thread at a time. */
GLCV_API glcv_status glcv_media_create(const glcv_media_params *params, glcv_media **out);

/* Waits up to `timeout_ms` milliseconds (< 0: without limit, 0: do not wait) for a frame and
 * returns it:
 *   GLCV_OK with a frame: *frame describes it (format as asked, row 0 at the top, the object's
 *     width and height, `stride` bytes between rows); its pixels belong to the media object
 *     and stay valid and unchanged until the next glcv_media_read or glcv_media_destroy.
 *   GLCV_OK with info->end_of_stream or info->timed_out set: no frame; frame->data is NULL.
 * Errors (no frame; frames captured before the problem are delivered first):
 *   IO: the device went away (an unplugged camera), the connection of a network stream was cut,
 *     the input sent no data for stall_timeout seconds, or it could not be read any more;
 *   CORRUPT_DATA: the stream stopped decoding (too many consecutive decoding errors; single
 *     bad packets are skipped and counted in stats.decode_errors);
 *   INVALID_ARGUMENT: NULL media or frame.
 * After an error every later read returns the same error. `info` may be NULL; on every return
 * *info is filled (zeroed when there is no frame) and on error *frame is zeroed.
 * Thread safety: one reader thread at a time (the capture thread runs beside it). */
GLCV_API glcv_status glcv_media_read(glcv_media *media, glcv_image *frame, glcv_media_frame_info *info,
                                     int timeout_ms);

/* The counters since open. Errors: INVALID_ARGUMENT (NULL media or out). Any thread. */
GLCV_API glcv_status glcv_media_get_stats(glcv_media *media, glcv_media_stats *out);

/* The resolved parameters: the source kind actually opened, its location (valid while the object
 * is open), the delivered width and height, the frame rate (0 when unknown), format, mode and ring
 * size. Errors: INVALID_ARGUMENT (NULL media or out). Any thread. */
GLCV_API glcv_status glcv_media_get_params(glcv_media *media, glcv_media_params *out);

/* One line saying what was opened, e.g. "camera /dev/video0: 640x480 yuyv422 at 30 fps" or
 * "synthetic scene: 320x240 at 25 fps"; owned by the object, valid until it is closed;
 * "" for NULL. */
GLCV_API const char *glcv_media_describe(const glcv_media *media);

/* "camera", "video", "frames", "sequence", "lavfi", "synthetic" ("default" for DEFAULT; "?" for
 * unknown values). */
GLCV_API const char *glcv_media_source_string(glcv_media_source source);

/* Stops the capture thread, closes the source and frees everything (frame views returned by
 * glcv_media_read become invalid). Accepts NULL and &NULL; sets *media to NULL. */
GLCV_API void glcv_media_destroy(glcv_media **media);

#ifdef __cplusplus
}
#endif
#endif
