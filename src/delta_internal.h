/* Frame-delta coding (private): the encoder shared by its files, the packet helpers, and the
 * contract between the encoder and its engines.
 *   delta.c         the encoder: parameters, validation, keyframes, the choice of layout, packets
 *   delta_packet.c  headers, the checksum, compression, and the decoder
 *   delta_cpu.c     the CPU engine: the fallback and the tests' oracle
 *   delta_gl.c      the GL engines (shaders/delta.glsl)
 * Every encoder function here is called with the encoder's mutex held. */
#ifndef GLCV_DELTA_INTERNAL_H
#define GLCV_DELTA_INTERNAL_H

#include <glcv/delta.h>

#include "engine.h"

#include <pthread.h>

/* ---- packets (delta_packet.c) -------------------------------------------------------------------
 * The header's bytes are in docs/STREAM.md. */
#define GLCV_DELTA_MAGIC "GLCVDLTA" /* 8 bytes, no terminator on the wire */
enum { GLCV_DELTA_FLAG_KEY = 1, GLCV_DELTA_FLAG_SNAPSHOT = 2 };

/* The payload bytes of `layout` (uncompressed) for a frame of n bytes with k records: RAW n,
 * INDICES 5 k, BITMAP ceil(n / 8) + k. */
size_t glcv_delta_layout_bytes(glcv_delta_layout layout, size_t n, size_t k);

/* Writes header `h` into out[0..GLCV_DELTA_HEADER_BYTES-1] (its checksum field as given). */
void glcv_delta_header_write(const glcv_delta_header *h, uint8_t *out);

/* Computes the checksums of a whole packet (header and payload) and writes them into the header:
 * the header's own CRC (of its first 48 bytes) and the packet's checksum. */
void glcv_delta_packet_seal(uint8_t *packet, size_t bytes);

/* The two implementations behind glcv_delta_crc32c (for the tests): slicing by 8 in portable C,
 * and the SSE4.2 crc32 instruction on three streams at once, which is the portable one where
 * glcv_delta_crc32c_hw_available() is 0 (no SSE4.2, or not x86). */
uint32_t glcv_delta_crc32c_portable(uint32_t crc, const void *data, size_t bytes);
uint32_t glcv_delta_crc32c_hw(uint32_t crc, const void *data, size_t bytes);
int glcv_delta_crc32c_hw_available(void);

/* ---- the encoder -------------------------------------------------------------------------------- */

/* The CPU engine's state (delta_cpu.c). */
typedef struct glcv_delta_cpu {
    uint8_t *ref;     /* the reference, n bytes */
    uint8_t *cur;     /* the loaded frame in the stream's format, n bytes */
    uint8_t *mask;    /* the loaded mask, a byte per pixel (1 may change), or NULL: none */
    uint8_t *pixmask; /* storage for `mask` */
    uint8_t *bits;    /* after count: a bit per byte of the frame (changed), ceil(n / 8) bytes */
} glcv_delta_cpu;

struct glcv_delta_gl; /* the GL engines' state (delta_gl.c) */

struct glcv_delta {
    pthread_mutex_t lock;
    glcv_delta_params p;
    int bpp;          /* bytes per pixel of p.format */
    int threshold;    /* the threshold in use: 0 (lossless) .. 255 */
    size_t n;         /* bytes per frame */
    uint64_t frames;  /* frames encoded */
    int has_reference; /* 0: the next frame is a keyframe (the first, or after an error) */
    long since_key;   /* frames encoded since the last keyframe */
    uint8_t *packet;  /* the last packet: in packet_memory, or the GL engine's (glcv_delta_gl_packet) */
    uint8_t *packet_memory; /* the host's memory for packets */
    size_t packet_capacity;
    glcv_engine *engine; /* the GL engines' engine; NULL: the CPU engine */
    struct glcv_delta_gl *gl;
    glcv_delta_cpu cpu;
    glcv_timing cpu_timings[4]; /* the CPU engine's steps of the last frame */
    int n_cpu_timings;
    /* glcv_delta_map_frame: the frame's memory handed out (the CPU engine's cur, or a staging slot
     * of the GL engines), NULL when none is */
    uint8_t *mapped;
    int mapped_slot;
};

/* The engines' steps for one frame, in this order: load, then either count and records, or key.
 * load   takes the frame (host image `frame`, or texture `frame_tex` when frame is NULL) in the
 *        stream's format and the mask (host GRAY8 `mask`, or texture `mask_tex`, or neither);
 *        the reference does not change. A frame whose data is d->mapped is the one written into
 *        the memory of glcv_delta_map_frame (the stream's format, tightly packed): the engine
 *        takes it from there without a copy on the host.
 * map    (the GL engines) staging memory for a frame of the stream's format: *ptr, its slot. The
 *        CPU engine's is its cur.
 * count  *k = the bytes of the loaded frame that differ from the reference by more than the
 *        threshold, in pixels the mask allows. The compute engine also chooses the layout as
 *        the encoder does (the same rule) and assembles the payload, moving the reference on.
 * records  writes the payload of those k bytes in `layout` (INDICES or BITMAP, exactly
 *        glcv_delta_layout_bytes(layout, n, k) bytes) to `out`, and sets the reference to the
 *        frame at those bytes.
 * key    writes the loaded frame (n bytes) to `out` and sets the reference to it.
 * reference  writes the reference (n bytes) to `out`. */
glcv_status glcv_delta_cpu_init(glcv_delta *d);
void glcv_delta_cpu_free(glcv_delta *d);
glcv_status glcv_delta_cpu_load(glcv_delta *d, const glcv_image *frame, unsigned int frame_tex, const glcv_image *mask,
                                unsigned int mask_tex);
glcv_status glcv_delta_cpu_count(glcv_delta *d, uint32_t *k);
glcv_status glcv_delta_cpu_records(glcv_delta *d, glcv_delta_layout layout, uint32_t k, uint8_t *out);
glcv_status glcv_delta_cpu_key(glcv_delta *d, uint8_t *out);
glcv_status glcv_delta_cpu_reference(glcv_delta *d, uint8_t *out);

glcv_status glcv_delta_gl_create(glcv_delta *d);
void glcv_delta_gl_destroy(glcv_delta *d);
glcv_status glcv_delta_gl_load(glcv_delta *d, const glcv_image *frame, unsigned int frame_tex, const glcv_image *mask,
                               unsigned int mask_tex);
glcv_status glcv_delta_gl_count(glcv_delta *d, uint32_t *k);
glcv_status glcv_delta_gl_records(glcv_delta *d, glcv_delta_layout layout, uint32_t k, uint8_t *out);
glcv_status glcv_delta_gl_key(glcv_delta *d, uint8_t *out);
glcv_status glcv_delta_gl_reference(glcv_delta *d, uint8_t *out);
glcv_status glcv_delta_gl_map(glcv_delta *d, uint8_t **ptr, int *slot);
/* Memory for a packet of `bytes` bytes that the GL engine fills without a copy on the host (the
 * compute engine with GL 4.4: a header and a whole frame, persistently mapped, written by the GPU);
 * *ptr NULL where there is none (then the packet is in the host's memory, filled by reads). Valid
 * until the next call. */
glcv_status glcv_delta_gl_packet(glcv_delta *d, size_t bytes, uint8_t **ptr);

#endif
