/* glcv frame-delta coding: streaming video by sending only the bytes that changed, with error
 * feedback so that a receiver never drifts (after Polito 2021, "Webcam streaming & filters").
 *
 * The encoder keeps a reference: the picture every receiver holds. A frame is N bytes (the
 * stream's pixel format, rows tightly packed: N = width * height * bytes per pixel). For each
 * byte, d = cur - ref; where |d| > threshold the byte is sent as its index and d (modulo 256) and
 * ref becomes cur; elsewhere nothing is sent and ref stays. So the sender's reference always
 * equals the receiver's picture, and every byte of that picture is within `threshold` of the frame
 * it stands for, for ever. A keyframe sends the whole frame (ref = cur everywhere).
 *
 * A frame's k changed bytes ("records") travel in whichever layout is smaller:
 *   INDICES  k little-endian uint32 byte indices in increasing order, then the k deltas:
 *            5 k bytes (pays below about N / 32 changed bytes);
 *   BITMAP   a bit per byte of the frame (bit i of byte j is frame byte 8 j + i), ceil(N / 8)
 *            bytes, then the k deltas in index order;
 * and when neither is smaller than the frame itself, the frame is sent as a keyframe (RAW).
 * A packet is a 64-byte header (magic, version, frame number, size, pixel format, keyframe flag,
 * layout, compression, record count, payload bytes, checksum, the header's own CRC) and the
 * payload. The byte-exact format, versioned, is in docs/STREAM.md.
 *
 * An optional mask (a byte per pixel, nonzero = may change) keeps the reference, and so the
 * receivers' picture, where it is 0: only the masked pixels are sent (the "segment" filter of
 * `glcv stream serve`: moving objects over a frozen background). Keyframes ignore the mask.
 *
 * Engines: FRAGMENT and COMPUTE (GL passes in the current context: the difference, then the
 * compaction of the records - a prefix sum in compute, a HistoPyramid in fragment mode; only the
 * bytes the packet needs cross to the host: compute with GL 4.4 assembles the whole payload on the
 * GPU, in the packet's own memory, and waits once; otherwise the count is read back first, then
 * the bytes the chosen layout uses) and CPU (the same in C:
 * the fallback and the tests' oracle). AUTO (the default) picks as the segmenter does
 * (glcv/segment.h), CPU when no GL context is current. CUDA is INVALID_ARGUMENT. Every engine
 * writes the same packets, bit for bit.
 *
 * The decoder (glcv_delta_decoder) is the receiver: it applies packets to its picture on the CPU,
 * checking everything it reads.
 *
 * Thread safety: every function that takes an encoder or decoder locks its mutex. Every function
 * that uses GL follows the GL rules of glcv/core.h. The packet functions (header parsing,
 * compression) keep no state and may be called from any thread.
 */
#ifndef GLCV_DELTA_H
#define GLCV_DELTA_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- packets ------------------------------------------------------------------------------------ */

#define GLCV_DELTA_HEADER_BYTES 64
#define GLCV_DELTA_VERSION 1
/* Largest frame of a stream: width and height up to 16384, N up to 2^31 - 1 bytes. */
#define GLCV_DELTA_MAX_SIZE 16384

/* How a packet's records are laid out (the header's layout field). 0 (DEFAULT) is, for the
 * encoder, the smaller of INDICES and BITMAP for each frame. */
typedef enum glcv_delta_layout {
    GLCV_DELTA_LAYOUT_DEFAULT = 0,
    GLCV_DELTA_RAW = 1,     /* a keyframe: the whole frame */
    GLCV_DELTA_INDICES = 2, /* k uint32 indices, then k deltas */
    GLCV_DELTA_BITMAP = 3   /* ceil(N / 8) bytes of bits, then k deltas */
} glcv_delta_layout;

/* How a packet's payload is compressed. */
typedef enum glcv_delta_compression {
    GLCV_DELTA_UNCOMPRESSED = 0,
    GLCV_DELTA_ZSTD = 1 /* one Zstandard frame (RFC 8878) */
} glcv_delta_compression;

/* A packet's header, parsed. */
typedef struct glcv_delta_header {
    int version;              /* GLCV_DELTA_VERSION */
    uint64_t frame;           /* the frame's number: 0 for the encoder's first frame */
    int width, height;        /* 1..GLCV_DELTA_MAX_SIZE */
    glcv_pixel_format format; /* GRAY8, RGB8, RGBA8, BGR8 or BGRA8 */
    int key;                  /* 1: a keyframe (layout RAW): the payload is the whole picture */
    int snapshot;             /* 1: a keyframe that is a copy of the reference, not of a frame
                                 (glcv_delta_snapshot: for a receiver that joins or resyncs) */
    glcv_delta_layout layout; /* RAW, INDICES or BITMAP */
    glcv_delta_compression compression;
    int threshold;            /* the encoder's threshold (0 lossless), for information */
    uint32_t records;         /* k: bytes that changed (N for a keyframe) */
    uint32_t payload_bytes;   /* bytes after the header, as sent */
    uint32_t raw_bytes;       /* bytes of the payload before compression (N, 5 k, N/8 + k) */
    uint32_t checksum;        /* CRC-32C of the header (this field as 0) and the payload */
} glcv_delta_header;

/* Parses and checks the GLCV_DELTA_HEADER_BYTES bytes at `data` (`bytes` >= 64; the payload need
 * not follow: a reader of a stream learns from payload_bytes how much to read next). Checks the
 * magic, version, the header's own CRC (so payload_bytes can be trusted before the payload is
 * read), sizes, pixel format, layout, compression, and that records, raw_bytes and payload_bytes
 * agree with each other and with the size. Does not check the packet's checksum (that needs the
 * payload: glcv_delta_decode does). Errors: INVALID_ARGUMENT (NULL, bytes < 64), CORRUPT_DATA
 * (anything else; the logger says what). */
GLCV_API glcv_status glcv_delta_header_parse(const uint8_t *data, size_t bytes, glcv_delta_header *out,
                                             const glcv_logger *logger);

/* The CRC-32C (Castagnoli, reflected, initial and final XOR 0xFFFFFFFF) of `bytes` bytes,
 * continuing from `crc` (0 to start). The packets' checksum. */
GLCV_API uint32_t glcv_delta_crc32c(uint32_t crc, const void *data, size_t bytes);

/* Whether this build can compress packets (1: built with Zstandard; 0: not). Decoding a
 * compressed packet needs it too. */
GLCV_API int glcv_delta_can_compress(void);

/* The most bytes glcv_delta_compress writes for a packet of `bytes` bytes: `bytes` (a packet is
 * compressed only where that makes it smaller). */
GLCV_API size_t glcv_delta_compress_bound(size_t bytes);

/* Compresses the payload of a packet (header and payload, uncompressed) with Zstandard at
 * `level` (1..19; 0 = 1) into `out` when that makes the packet smaller, else copies the packet as
 * it is; *out_bytes receives the size. The header's compression, payload_bytes and checksum are
 * rewritten. `out` must not overlap `packet`. Errors: INVALID_ARGUMENT (NULL, level, capacity
 * below glcv_delta_compress_bound), CORRUPT_DATA (not a whole uncompressed packet),
 * UNSUPPORTED (built without Zstandard), OUT_OF_MEMORY. */
GLCV_API glcv_status glcv_delta_compress(const uint8_t *packet, size_t bytes, int level, uint8_t *out,
                                         size_t capacity, size_t *out_bytes, const glcv_logger *logger);

/* ---- the encoder -------------------------------------------------------------------------------- */

typedef struct glcv_delta glcv_delta;

/* glcv_delta_params.threshold: send every change (a threshold of 0: lossless). */
#define GLCV_DELTA_LOSSLESS (-1)

/* Zero fields mean defaults. */
typedef struct glcv_delta_params {
    int width;  /* required, 1..GLCV_DELTA_MAX_SIZE */
    int height; /* required, 1..GLCV_DELTA_MAX_SIZE; width * height * bytes per pixel < 2^31 */
    /* The stream's pixel format (GRAY8, RGB8, RGBA8, BGR8, BGRA8; default RGB8). Frames in
     * another format are converted first (GRAY8: luma (77 R + 150 G + 29 B + 128) >> 8), on the
     * GPU with the GL engines. */
    glcv_pixel_format format;
    /* A byte is sent when |cur - ref| > threshold; 1..255, default 8; GLCV_DELTA_LOSSLESS sends
     * every change. */
    int threshold;
    /* A keyframe every `keyframe_interval` frames (the first frame is one); default 300; -1: only
     * the first frame and those asked for. */
    int keyframe_interval;
    /* Records' layout: DEFAULT (the smaller of INDICES and BITMAP, per frame), INDICES or BITMAP.
     * Whatever it says, a frame whose records would take more bytes than the frame is a keyframe. */
    glcv_delta_layout layout;
    glcv_engine_mode engine; /* default AUTO; FRAGMENT, COMPUTE or CPU (CUDA: INVALID_ARGUMENT) */
    int timing;              /* nonzero: GPU timer queries per pass (glcv_delta_timings) */
    glcv_logger logger;
} glcv_delta_params;

#define GLCV_DELTA_PARAMS(...) ((glcv_delta_params){__VA_ARGS__})

/* Creates an encoder. Errors: INVALID_ARGUMENT (NULL, sizes, out-of-range parameters, unknown
 * enums, CUDA), NO_CONTEXT (FRAGMENT or COMPUTE without a current context), UNSUPPORTED (GL too
 * old, a size above the GL's limits), GL, OUT_OF_MEMORY. */
GLCV_API glcv_status glcv_delta_create(const glcv_delta_params *params, glcv_delta **out);

/* Destroys the encoder and its GL objects (with its context current; otherwise they are left to
 * die with the context). Accepts NULL and &NULL. */
GLCV_API void glcv_delta_destroy(glcv_delta **delta);

/* The resolved parameters (engine: the one in use). */
GLCV_API glcv_status glcv_delta_get_params(glcv_delta *delta, glcv_delta_params *out);

/* glcv_delta_encode flags. */
enum {
    GLCV_DELTA_FORCE_KEY = 1 /* make this frame a keyframe */
};

/* Encodes the next frame (host memory: the encoder's size, any of the five formats, any stride)
 * with an optional `mask` (GRAY8, the encoder's size, any stride; NULL: every pixel may change):
 * *packet receives the packet (header and payload, uncompressed) in the encoder's memory, valid
 * until the next call on the encoder, and *bytes its size (every call that gives a packet first
 * sets *packet to NULL and *bytes to 0, so they are so after any error). The frame's number is the count of
 * frames encoded before it. Errors: INVALID_ARGUMENT, SIZE_MISMATCH, GL, OUT_OF_MEMORY. A frame
 * refused for its arguments changes nothing; after an error in the work itself (GL, memory) the
 * frame has no number, no packet says what happened to the reference, and so the next frame is a
 * keyframe (snapshot and read_reference say STATE until then). */
GLCV_API glcv_status glcv_delta_encode(glcv_delta *delta, const glcv_image *frame, const glcv_image *mask, int flags,
                                       const uint8_t **packet, size_t *bytes);

/* As glcv_delta_encode, from GL textures in the current context: `frame` a GL_TEXTURE_2D of the
 * encoder's size with a colour format (values 0..1 scaled by 255; row 0 = image row 0), `mask` 0
 * or a GL_TEXTURE_2D of that size whose red channel > 0.5 means "may change" (e.g.
 * glcv_segment_mask_texture). The GL engines read them in place; the CPU engine reads them back.
 * Errors: as glcv_delta_encode, NO_CONTEXT, UNSUPPORTED (texture format). */
GLCV_API glcv_status glcv_delta_encode_texture(glcv_delta *delta, unsigned int frame, unsigned int mask, int flags,
                                               const uint8_t **packet, size_t *bytes);

/* Zero-copy input: *out becomes an image of the encoder's size in the stream's format, tightly
 * packed, whose pixels lie in memory the encoder's engine reads directly (persistently mapped,
 * pinned upload memory with the GL engines; the CPU engine's own frame). Write the next frame
 * there (a decoder can decode into it), then call glcv_delta_encode_mapped: the frame is not copied
 * on the host. Valid until the next encode call. Errors: INVALID_ARGUMENT, NO_CONTEXT, GL,
 * OUT_OF_MEMORY. */
GLCV_API glcv_status glcv_delta_map_frame(glcv_delta *delta, glcv_image *out);

/* As glcv_delta_encode, for the frame written into the memory of glcv_delta_map_frame (`mask`:
 * as there). Errors: as glcv_delta_encode, STATE (no glcv_delta_map_frame before). */
GLCV_API glcv_status glcv_delta_encode_mapped(glcv_delta *delta, const glcv_image *mask, int flags,
                                              const uint8_t **packet, size_t *bytes);

/* A keyframe packet of the reference after the last frame encoded (its number; snapshot flag
 * set), for a receiver that joins the stream or has to resynchronise: with it, the deltas of the
 * following frames apply as they do for every other receiver. The encoder's state does not change.
 * *packet as for glcv_delta_encode. Errors: INVALID_ARGUMENT, STATE (no frame yet), GL,
 * OUT_OF_MEMORY. */
GLCV_API glcv_status glcv_delta_snapshot(glcv_delta *delta, const uint8_t **packet, size_t *bytes);

/* Copies the reference (N bytes: the stream's format) into `out`, an image of the encoder's size
 * and format in the caller's memory (any stride). Errors: INVALID_ARGUMENT, SIZE_MISMATCH, STATE
 * (no frame yet), GL. */
GLCV_API glcv_status glcv_delta_read_reference(glcv_delta *delta, glcv_image *out);

/* Per-pass times of the most recent frame whose timer queries are complete (params.timing; GL
 * engines), as glcv_segment_timings (errors too); with the CPU engine, host times of its steps. */
GLCV_API glcv_status glcv_delta_timings(glcv_delta *delta, glcv_timing *out, int capacity, int *count, int wait);

/* ---- the decoder -------------------------------------------------------------------------------- */

typedef struct glcv_delta_decoder glcv_delta_decoder;

typedef struct glcv_delta_decoder_params {
    /* The largest picture it accepts, in bytes (width * height * bytes per pixel): a packet of a
     * larger one is CORRUPT_DATA before anything is allocated. Default 64 MiB (4096 x 4096 RGBA);
     * 1..2^31 - 1. */
    size_t max_bytes;
    glcv_logger logger;
} glcv_delta_decoder_params;

#define GLCV_DELTA_DECODER_PARAMS(...) ((glcv_delta_decoder_params){__VA_ARGS__})

/* Creates a decoder with no picture. Errors: INVALID_ARGUMENT, OUT_OF_MEMORY. */
GLCV_API glcv_status glcv_delta_decoder_create(const glcv_delta_decoder_params *params, glcv_delta_decoder **out);
/* Accepts NULL and &NULL. */
GLCV_API void glcv_delta_decoder_destroy(glcv_delta_decoder **decoder);

/* Applies one packet (`bytes` bytes: header and payload, compressed or not) to the picture. A
 * keyframe replaces it (and may change its size or format); a delta applies only to the picture
 * of the frame before it. Everything is checked before the picture changes: on any error the
 * picture stays as it was. Errors: INVALID_ARGUMENT (NULL), CORRUPT_DATA (a bad header or
 * checksum, `bytes` not the packet's size, a payload that does not match its header, indices out
 * of order or out of range, a picture above max_bytes, compressed data that does not decompress
 * to raw_bytes), STATE (a delta with no picture yet, for another size or format, or whose frame
 * is not the one after the picture's: the receiver must wait for a keyframe), UNSUPPORTED (a
 * compressed packet in a build without Zstandard), OUT_OF_MEMORY. */
GLCV_API glcv_status glcv_delta_decode(glcv_delta_decoder *decoder, const uint8_t *packet, size_t bytes);

/* The picture: *out becomes an image (tightly packed, the stream's format) in the decoder's
 * memory, read-only and valid until the next call on the decoder; *frame (may be NULL) its frame
 * number. Errors: INVALID_ARGUMENT, STATE (no keyframe yet). */
GLCV_API glcv_status glcv_delta_decoder_picture(glcv_delta_decoder *decoder, glcv_image *out, uint64_t *frame);

#ifdef __cplusplus
}
#endif
#endif
