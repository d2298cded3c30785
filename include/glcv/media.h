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

/* Which decoder turns compressed video into frames. */
typedef enum glcv_media_decoder {
    /* A glcv_media on its own: CPU. A source of a glcv_media_set: chosen by the set (see
     * glcv_media_set_params.decoder). */
    GLCV_MEDIA_DECODER_DEFAULT = 0,
    /* libavcodec on the CPU (FFmpeg's threads, see decoder_threads). */
    GLCV_MEDIA_DECODER_CPU = 1,
    /* The GPU's video decoders (NVDEC; the driver's libraries are loaded at run time): H.264 and
     * HEVC, 8-bit 4:2:0. Frames stay in the GPU's memory when a glcv_media_set delivers them as a
     * texture (NVIDIA's parser, one decoder serving up to four H.264 sources of a format); a
     * glcv_media on its own decodes through FFmpeg's CUDA frames and glcv_media_read copies them to
     * the host. A set's source for which the GPU has no decoder left goes on on the CPU, with a
     * warning. Anything else (another codec, 10-bit, 4:2:2, no NVIDIA driver or device): UNSUPPORTED
     * at create. The frames are the CPU decoder's, bit for bit (decoding is exact and both paths
     * convert 4:2:0 to RGB with one integer definition; see glcv_media_read). */
    GLCV_MEDIA_DECODER_NVDEC = 2
} glcv_media_decoder;

/* How an rtsp:// source's packets travel. */
typedef enum glcv_media_rtsp_transport {
    GLCV_MEDIA_RTSP_DEFAULT = 0, /* FFmpeg's choice: UDP, then TCP when UDP brings nothing */
    GLCV_MEDIA_RTSP_UDP = 1,     /* RTP over UDP */
    GLCV_MEDIA_RTSP_TCP = 2      /* RTP interleaved in the RTSP connection (through firewalls, no loss) */
} glcv_media_rtsp_transport;

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
    glcv_media_decoder decoder; /* default: CPU (see glcv_media_decoder) */
    int cuda_device;            /* NVDEC: the CUDA device whose decoders are used, default 0 */
    /* CPU decoding: threads of libavcodec's decoder, 0 (default) = FFmpeg's choice (the online
     * processors); 1 when many sources share the processors (glcv_media_set does so). 0..64. */
    int decoder_threads;
    glcv_media_rtsp_transport rtsp_transport; /* rtsp:// video sources; default: FFmpeg's choice */
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
    int64_t nvdec_frames;  /* frames decoded by NVDEC (the rest by the CPU) */
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
 * Colour: 8-bit 4:2:0 video (H.264, HEVC, MPEG-4 ... in their usual form) delivered at its own size
 * is converted by glcv's one integer definition, which the GPU path of glcv_media_set uses too:
 * the stream's matrix (BT.601, BT.709, BT.2020; when unsaid, BT.601 below 720 rows, else BT.709)
 * and range, chroma mixed bilinearly at H.264's default siting. Other pixel formats, and scaled
 * frames, go through libswscale (bilinear, accurate rounding).
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

/* "cpu", "nvdec" ("default" for DEFAULT; "?" for unknown values). */
GLCV_API const char *glcv_media_decoder_string(glcv_media_decoder decoder);

/* ---- Camera sets --------------------------------------------------------------------------------
 * Many sources of one frame size read together, a frame of each at a time, for the modules that
 * take a camera set (glcv_bgsub and glcv_segment with streams, glcv_track with streams): as host
 * images, or as one GL_TEXTURE_2D_ARRAY (a layer per source) made on the GPU.
 *
 * Texture sets, on a GPU with CUDA and NVDEC: H.264 and HEVC sources are decoded by NVDEC into
 * the GPU's memory; each set is converted from 4:2:0 to RGBA by one CUDA launch that writes every
 * layer of the array, handed from CUDA to GL with one map per set; no frame crosses to the host.
 * Sources decoded on the CPU (other codecs, cpu_sources, or no NVDEC) go to the GPU as 4:2:0
 * (half the bytes of RGB) from pinned memory and are converted by the same launch. Without CUDA the
 * CPU converts and GL uploads. Every path gives the same bits as glcv_media_read (one definition of
 * the conversion; H.264/HEVC decoding is exact).
 *
 * Sources fail alone: one that cannot be opened or stops (a camera unplugged, a cut connection)
 * is reported by its slot in glcv_media_set_frame and the others go on; glcv_media_set_reopen
 * tries it again (the caller's back-off). */

typedef struct glcv_media_set glcv_media_set;

/* The most sources in one set. */
#define GLCV_MEDIA_SET_MAX 2048

/* Zero fields mean defaults. */
typedef struct glcv_media_set_params {
    int count;                        /* sources, 1..GLCV_MEDIA_SET_MAX; required */
    const glcv_media_params *sources; /* `count` source parameters, copied at create; required */
    /* The set's frame size: 0, 0 = the first source that opens. Sources of another size are
     * scaled to it by the CPU path (see glcv_media_params.width). */
    int width;
    int height;
    /* DEFAULT: each H.264/HEVC source on NVDEC when the set makes textures on a CUDA device whose
     * decoders take it and that device has room (glcv_media_nvdec_auto_limit), else on the CPU;
     * CPU: all on the CPU; NVDEC: as DEFAULT, but a source NVDEC
     * cannot decode is UNSUPPORTED at open. A source's own glcv_media_params.decoder, when set,
     * overrides this for that source. */
    glcv_media_decoder decoder;
    /* DEFAULT and NVDEC: the share of the NVDEC sources decoded on CPU threads instead, 0..1
     * (default 0): with cores to spare, both kinds of decoder work at once. */
    double cpu_share;
    /* Nonzero: frames are delivered as a GL texture array (glcv_media_set_texture); the GL context
     * current at create is used by every read and must be current then. 0 (default): host images. */
    int texture;
    int cuda_device;         /* the GPU of NVDEC and of the texture's CUDA conversion, default 0 */
    int open_threads;        /* sources opened at once at create, default 16 (network sources are slow) */
    glcv_logger logger;
} glcv_media_set_params;

#define GLCV_MEDIA_SET_PARAMS(...) ((glcv_media_set_params){__VA_ARGS__})

/* Sources left to choose their decoder (a set's DEFAULT) with frames below 1 Mpixel (2^20 pixels)
 * take NVDEC while their GPU has fewer than this many such sources open in the process, and decode
 * on CPU threads after, so that a host's processors and its GPU's decoders share many small cameras
 * (the value, measured end to end: docs/PERFORMANCE.md, "Compressed cameras"). Larger frames, and
 * sources that ask for NVDEC (the set's or their own decoder NVDEC), are not limited. */
#define GLCV_MEDIA_NVDEC_AUTO_SESSIONS 64

/* Sets that limit for every GPU of the process (0: no limit) and returns the previous one; a
 * negative `sessions` only returns it. Sources opened before keep their decoder. Thread safety: any
 * thread. */
GLCV_API int glcv_media_nvdec_auto_limit(int sessions);

/* One source's part of a read. */
typedef struct glcv_media_set_frame {
    /* Nonzero: a new frame of this source is in the set (frames[i] / layer i); zero: the layer and
     * frames[i] hold what they held (the source had nothing new, ended or failed). */
    int has_frame;
    /* OK, or why the source stopped or never opened (IO, CORRUPT_DATA, UNSUPPORTED, LIMIT, ...);
     * once not OK it stays so until glcv_media_set_reopen. */
    glcv_status status;
    glcv_media_frame_info info; /* the frame's info; info.end_of_stream: the source ended */
    int reopening;              /* glcv_media_set_reopen is opening it again, in the background */
} glcv_media_set_frame;

/* Opens every source (open_threads at a time) and, for texture sets, makes the texture array
 * (RGBA8, width x height x count) in the current GL context. Sources that fail to open do not fail
 * the set: their status says why (logged). Errors: INVALID_ARGUMENT (NULL, count, a source's params,
 * cpu_share), SIZE_MISMATCH (no source opened and no size given), NO_CONTEXT (texture without a
 * current context), UNSUPPORTED (GL_TEXTURE_2D_ARRAY of that size or layers), GL, CUDA,
 * OUT_OF_MEMORY. *out is NULL on error. Thread safety: any thread; the set is then used by one
 * thread at a time. */
GLCV_API glcv_status glcv_media_set_create(const glcv_media_set_params *params, glcv_media_set **out);

/* Reads a set: every running source in EVERY_FRAME mode contributes its next frame (waiting for
 * it), every running LIVE source its newest frame since the last read, if one came (frames it
 * skipped are counted as dropped); when no source has anything yet, waits up to `timeout_ms`
 * (< 0: without limit) for the first one. frames[0..count-1] (host sets; may be NULL for texture
 * sets) are the set's images, owned by the set, RGB8 of the set's size, valid until the next read;
 * out[0..count-1] (required) tells what each source did. *running (may be NULL) gets the sources
 * still running (0: every source ended or failed). Texture sets: the texture array holds the set
 * when this returns for GL commands issued afterwards (the GPU conversion may still run: GL waits
 * for it; CUDA work that maps the array itself should follow a glFinish). Errors (the set itself,
 * not a source): INVALID_ARGUMENT, NO_CONTEXT, GL, CUDA. Thread safety: the set's thread. */
GLCV_API glcv_status glcv_media_set_read(glcv_media_set *set, glcv_image *frames, glcv_media_set_frame *out,
                                         int *running, int timeout_ms);

/* Texture sets: the GL_TEXTURE_2D_ARRAY holding the last set read (GL_RGBA8, alpha 255, layer i =
 * source i, row 0 at the top as glcv_image rows); owned by the set, valid until it is destroyed.
 * 0 for host sets. */
GLCV_API unsigned int glcv_media_set_texture(const glcv_media_set *set);

/* Opens source `source` again (a live source that failed or ended: a reconnect), on a thread of its
 * own, so that the set's reads go on meanwhile (a network source may take up to its stall_timeout
 * to answer). The read after the open has finished puts the new source in (closing the old one):
 * from then on its status is the open's, and a source of another frame size than the set's is
 * scaled to it. Returns at once: OK (started), STATE (a reopen of it is under way),
 * INVALID_ARGUMENT (source out of range), OUT_OF_MEMORY. */
GLCV_API glcv_status glcv_media_set_reopen(glcv_media_set *set, int source);

/* Closes source `source` (its stream, decoder and capture thread; a reopen under way is dropped), for
 * a source nobody needs any more: it delivers nothing and its status is STATE ("closed") until
 * glcv_media_set_reopen opens it again; the other sources go on. Its layer and, in host sets, its
 * image keep its last frame. Closing a closed source does nothing. Errors: INVALID_ARGUMENT (source
 * out of range), CUDA (the set's conversion failed), OUT_OF_MEMORY. Thread safety: the set's thread. */
GLCV_API glcv_status glcv_media_set_close(glcv_media_set *set, int source);

/* Source `source`'s counters (zeros while it is closed), and which decoder it uses now. Errors:
 * INVALID_ARGUMENT. */
GLCV_API glcv_status glcv_media_set_get_stats(glcv_media_set *set, int source, glcv_media_stats *out,
                                              glcv_media_decoder *decoder);

/* The set's resolved parameters (size, decoder, texture; sources as given). Errors: INVALID_ARGUMENT. */
GLCV_API glcv_status glcv_media_set_get_params(glcv_media_set *set, glcv_media_set_params *out);

/* Source `source`'s description (glcv_media_describe), or its error while it is not open; "" out of
 * range. Valid until the next call on the set. */
GLCV_API const char *glcv_media_set_describe(glcv_media_set *set, int source);

/* Closes every source and frees the set (texture sets: with the set's context current, else the
 * texture is left to die with the context). Accepts NULL and &NULL; sets *set to NULL. */
GLCV_API void glcv_media_set_destroy(glcv_media_set **set);

#ifdef __cplusplus
}
#endif
#endif
