/* Frame-delta coding, the encoder: parameters, validation, the keyframe rule, the choice of the
 * records' layout, and the packets; the work on the bytes is its engines' (delta_cpu.c,
 * delta_gl.c), the header and checksum delta_packet.c's. */
#include "delta_internal.h"

#include "core_internal.h"

#include <glcv/context.h>
#include <glcv/image.h>

#include <stdlib.h>
#include <string.h>

#define DEFAULT_THRESHOLD 8
#define DEFAULT_KEYFRAME_INTERVAL 300

/* ---- parameters ---------------------------------------------------------------------------- */

static glcv_status resolve_params(const glcv_delta_params *in, glcv_delta_params *p)
{
    *p = *in;
    const glcv_logger *lg = &in->logger;
    glcv_status st = glcv_check_size(lg, "delta", p->width, p->height, GLCV_DELTA_MAX_SIZE);
    if (st != GLCV_OK)
        return st;
    GLCV_DEFAULT(p->format, GLCV_PIXEL_RGB8);
    GLCV_DEFAULT(p->threshold, DEFAULT_THRESHOLD);
    GLCV_DEFAULT(p->keyframe_interval, DEFAULT_KEYFRAME_INTERVAL);
    GLCV_DEFAULT(p->engine, GLCV_ENGINE_AUTO);
    int bpp = glcv_pixel_format_size(p->format);
    if (bpp == 0)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "delta: unknown pixel format %d", (int)p->format);
    if ((double)p->width * p->height * bpp > 2147483647.0)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "delta: a frame of %dx%d x %d bytes is above 2^31 - 1 bytes",
                         p->width, p->height, bpp);
    if (p->threshold != GLCV_DELTA_LOSSLESS &&
        (st = glcv_check_range(lg, "delta", "threshold", p->threshold, 1, 255)) != GLCV_OK)
        return st;
    if (p->keyframe_interval < -1)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "delta: keyframe_interval must be >= 1 or -1 (got %d)",
                         p->keyframe_interval);
    if (p->layout != GLCV_DELTA_LAYOUT_DEFAULT && p->layout != GLCV_DELTA_INDICES && p->layout != GLCV_DELTA_BITMAP)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "delta: layout must be default, indices or bitmap (got %d)",
                         (int)p->layout);
    if (p->engine < GLCV_ENGINE_AUTO || p->engine > GLCV_ENGINE_CPU)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "delta: engine %s is not one of auto, fragment, compute, cpu",
                         glcv_engine_mode_string(p->engine));
    p->timing = p->timing ? 1 : 0;
    return GLCV_OK;
}

/* ---- create / destroy ---------------------------------------------------------------------- */

glcv_status glcv_delta_create(const glcv_delta_params *params, glcv_delta **out)
{
    GLCV_CREATE_BEGIN(params, out);
    glcv_delta_params p;
    glcv_status st = resolve_params(params, &p);
    if (st != GLCV_OK)
        return st;
    glcv_delta *d = calloc(1, sizeof *d);
    if (!d)
        return GLCV_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&d->lock, NULL);
    d->p = p;
    d->bpp = glcv_pixel_format_size(p.format);
    d->threshold = p.threshold == GLCV_DELTA_LOSSLESS ? 0 : p.threshold;
    d->n = (size_t)p.width * (size_t)p.height * (size_t)d->bpp;
    const glcv_logger *lg = &params->logger;
    if (p.engine == GLCV_ENGINE_AUTO && !glcv_gl_context_current()) {
        glcv_logf(lg, GLCV_LOG_INFO, "delta: no GL context is current: using the CPU engine");
        d->p.engine = GLCV_ENGINE_CPU;
    }
    st = d->p.engine == GLCV_ENGINE_CPU ? glcv_delta_cpu_init(d) : glcv_delta_gl_create(d);
    if (st != GLCV_OK) {
        glcv_delta_destroy(&d);
        return st;
    }
    glcv_logf(lg, GLCV_LOG_DEBUG, "delta: %dx%d %d bytes a pixel, threshold %d, engine %s", p.width, p.height, d->bpp,
              d->threshold, glcv_engine_mode_string(d->p.engine));
    *out = d;
    return GLCV_OK;
}

void glcv_delta_destroy(glcv_delta **delta)
{
    glcv_delta *d = delta ? *delta : NULL;
    if (!d)
        return;
    glcv_delta_gl_destroy(d);
    glcv_delta_cpu_free(d);
    free(d->packet_memory);
    pthread_mutex_destroy(&d->lock);
    free(d);
    *delta = NULL;
}

glcv_status glcv_delta_get_params(glcv_delta *d, glcv_delta_params *out)
{
    GLCV_LOCKED_COPY(d, p, out);
}

/* ---- encoding -------------------------------------------------------------------------------- */

/* The GL engines work in the context they were made in; texture inputs need one with any engine:
 * without a current one, NO_CONTEXT before any GL call. */
static glcv_status gl_ready(glcv_delta *d, int textures, const char *what)
{
    if ((d->engine || textures) && !glcv_gl_context_current())
        return glcv_fail(&d->p.logger, GLCV_ERROR_NO_CONTEXT, "delta: %s: no OpenGL context is current", what);
    return GLCV_OK;
}

static glcv_status check_image(glcv_delta *d, const glcv_image *im, int mask, const char *what)
{
    const glcv_logger *lg = &d->p.logger;
    if (glcv_image_check(im) != GLCV_OK)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "delta: %s: the %s is not a valid image", what,
                         mask ? "mask" : "frame");
    if (mask && im->format != GLCV_PIXEL_GRAY8)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "delta: %s: the mask must be GRAY8", what);
    if (im->width != d->p.width || im->height != d->p.height)
        return glcv_fail(lg, GLCV_ERROR_SIZE_MISMATCH, "delta: %s: the %s is %dx%d, the encoder %dx%d", what,
                         mask ? "mask" : "frame", im->width, im->height, d->p.width, d->p.height);
    return GLCV_OK;
}

/* Room for a packet of `payload` bytes after the header. */
/* Room for a packet of `payload` bytes after the header: the GL engine's own memory where it has
 * some (filled without a copy on the host), else the host's. */
static glcv_status reserve(glcv_delta *d, size_t payload)
{
    size_t need = GLCV_DELTA_HEADER_BYTES + payload;
    uint8_t *engine_memory = NULL;
    glcv_status st = d->engine ? glcv_delta_gl_packet(d, need, &engine_memory) : GLCV_OK;
    if (st != GLCV_OK)
        return st;
    if (engine_memory) {
        d->packet = engine_memory;
        return GLCV_OK;
    }
    if (need > d->packet_capacity) {
        uint8_t *p = realloc(d->packet_memory, need);
        if (!p)
            return glcv_fail(&d->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "delta: no memory for a packet of %zu bytes",
                             need);
        d->packet_memory = p;
        d->packet_capacity = need;
    }
    d->packet = d->packet_memory;
    return GLCV_OK;
}

/* The header of a packet of frame `frame` and seals it (the payload is in place). */
static size_t finish_packet(glcv_delta *d, uint64_t frame, unsigned flags, glcv_delta_layout layout, size_t records,
                            size_t payload)
{
    glcv_delta_header h = {
        .version = GLCV_DELTA_VERSION,
        .frame = frame,
        .width = d->p.width,
        .height = d->p.height,
        .format = d->p.format,
        .key = (flags & GLCV_DELTA_FLAG_KEY) != 0,
        .snapshot = (flags & GLCV_DELTA_FLAG_SNAPSHOT) != 0,
        .layout = layout,
        .compression = GLCV_DELTA_UNCOMPRESSED,
        .threshold = d->threshold,
        .records = (uint32_t)records,
        .payload_bytes = (uint32_t)payload,
        .raw_bytes = (uint32_t)payload,
    };
    glcv_delta_header_write(&h, d->packet);
    glcv_delta_packet_seal(d->packet, GLCV_DELTA_HEADER_BYTES + payload);
    return GLCV_DELTA_HEADER_BYTES + payload;
}

/* The layout of a frame with k records: the smaller one allowed, RAW when the frame is not larger
 * than the records would be. */
static glcv_delta_layout choose_layout(const glcv_delta *d, size_t k)
{
    size_t indices = glcv_delta_layout_bytes(GLCV_DELTA_INDICES, d->n, k);
    size_t bitmap = glcv_delta_layout_bytes(GLCV_DELTA_BITMAP, d->n, k);
    glcv_delta_layout layout = d->p.layout == GLCV_DELTA_INDICES  ? GLCV_DELTA_INDICES
                               : d->p.layout == GLCV_DELTA_BITMAP ? GLCV_DELTA_BITMAP
                               : indices <= bitmap                ? GLCV_DELTA_INDICES
                                                                  : GLCV_DELTA_BITMAP;
    return glcv_delta_layout_bytes(layout, d->n, k) < d->n ? layout : GLCV_DELTA_RAW;
}

static glcv_status encode_locked(glcv_delta *d, const glcv_image *frame, unsigned int frame_tex, const glcv_image *mask,
                                 unsigned int mask_tex, int flags, const uint8_t **packet, size_t *bytes)
{
    const char *what = frame ? "encode" : "encode_texture";
    if (!packet || !bytes || (flags & ~GLCV_DELTA_FORCE_KEY))
        return glcv_fail(&d->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "delta: %s: %s", what,
                         !packet || !bytes ? "NULL packet or bytes" : "unknown flags");
    *packet = NULL;
    *bytes = 0;
    glcv_status st = GLCV_OK;
    if (frame && (st = check_image(d, frame, 0, what)) == GLCV_OK && mask)
        st = check_image(d, mask, 1, what);
    if (!frame && !frame_tex)
        st = glcv_fail(&d->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "delta: %s: no frame", what);
    if (st == GLCV_OK)
        st = gl_ready(d, !frame, what);
    if (st != GLCV_OK)
        return st;
    double t0 = glcv_now();
    st = d->engine ? glcv_delta_gl_load(d, frame, frame_tex, mask, mask_tex)
                   : glcv_delta_cpu_load(d, frame, frame_tex, mask, mask_tex);
    d->mapped = NULL; /* a mapped frame is taken (or dropped) by the encode call */
    if (st != GLCV_OK)
        return st;
    int key = (flags & GLCV_DELTA_FORCE_KEY) || !d->has_reference ||
              (d->p.keyframe_interval > 0 && d->since_key + 1 >= d->p.keyframe_interval);
    uint32_t k = 0;
    glcv_delta_layout layout = GLCV_DELTA_RAW;
    if (!key) {
        st = d->engine ? glcv_delta_gl_count(d, &k) : glcv_delta_cpu_count(d, &k);
        if (st == GLCV_OK)
            layout = choose_layout(d, k);
        key = layout == GLCV_DELTA_RAW;
    }
    size_t payload = key ? d->n : glcv_delta_layout_bytes(layout, d->n, k);
    if (st == GLCV_OK)
        st = reserve(d, payload);
    if (st == GLCV_OK) {
        uint8_t *out = d->packet + GLCV_DELTA_HEADER_BYTES;
        if (key)
            st = d->engine ? glcv_delta_gl_key(d, out) : glcv_delta_cpu_key(d, out);
        else
            st = d->engine ? glcv_delta_gl_records(d, layout, k, out) : glcv_delta_cpu_records(d, layout, k, out);
    }
    if (st != GLCV_OK) {
        /* The reference may have moved on without a packet to say so: start again from a keyframe. */
        d->has_reference = 0;
        return st;
    }
    *bytes = finish_packet(d, d->frames, key ? GLCV_DELTA_FLAG_KEY : 0, key ? GLCV_DELTA_RAW : layout,
                           key ? d->n : k, payload);
    *packet = d->packet;
    d->frames++;
    d->has_reference = 1;
    d->since_key = key ? 0 : d->since_key + 1;
    if (!d->engine) {
        d->cpu_timings[0] =
            (glcv_timing){.name = "encode", .ms = (glcv_now() - t0) * 1000.0, .count = 1, .clock = GLCV_CLOCK_HOST};
        d->n_cpu_timings = 1;
    }
    return GLCV_OK;
}

/* encode_locked inside one save and restore of the host's GL state (the engines' steps nest in it). */
static glcv_status encode_gl_once(glcv_delta *d, const glcv_image *frame, unsigned int frame_tex,
                                  const glcv_image *mask, unsigned int mask_tex, int flags, const uint8_t **packet,
                                  size_t *bytes)
{
    int gl = d->engine && glcv_gl_context_current();
    if (gl)
        glcv_engine_begin(d->engine);
    glcv_status st = encode_locked(d, frame, frame_tex, mask, mask_tex, flags, packet, bytes);
    if (gl)
        glcv_engine_end(d->engine);
    return st;
}

/* Every call that gives a packet clears *packet and *bytes first, whatever its outcome. */
static void clear_packet(const uint8_t **packet, size_t *bytes)
{
    if (packet)
        *packet = NULL;
    if (bytes)
        *bytes = 0;
}

glcv_status glcv_delta_encode(glcv_delta *d, const glcv_image *frame, const glcv_image *mask, int flags,
                              const uint8_t **packet, size_t *bytes)
{
    clear_packet(packet, bytes);
    if (d && !frame)
        return glcv_fail(&d->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "delta: encode: NULL frame");
    GLCV_LOCKED_GL_CALL(d, "delta: encode", encode_gl_once(d, frame, 0, mask, 0, flags, packet, bytes));
}

glcv_status glcv_delta_encode_texture(glcv_delta *d, unsigned int frame, unsigned int mask, int flags,
                                      const uint8_t **packet, size_t *bytes)
{
    clear_packet(packet, bytes);
    if (d && !frame)
        return glcv_fail(&d->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "delta: encode_texture: frame texture 0");
    GLCV_LOCKED_GL_CALL(d, "delta: encode_texture", encode_gl_once(d, NULL, frame, NULL, mask, flags, packet, bytes));
}

static glcv_status map_frame_locked(glcv_delta *d, glcv_image *out)
{
    if (!out)
        return glcv_fail(&d->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "delta: map_frame: NULL image");
    glcv_status st = gl_ready(d, 0, "map_frame");
    uint8_t *ptr = d->cpu.cur;
    int slot = -1;
    if (st == GLCV_OK && d->engine)
        st = glcv_delta_gl_map(d, &ptr, &slot);
    if (st != GLCV_OK)
        return st;
    d->mapped = ptr;
    d->mapped_slot = slot;
    *out = (glcv_image){ptr, d->p.width, d->p.height, 0, d->p.format};
    return GLCV_OK;
}

glcv_status glcv_delta_map_frame(glcv_delta *d, glcv_image *out)
{
    GLCV_LOCKED_GL_CALL(d, "delta: map_frame", map_frame_locked(d, out));
}

static glcv_status encode_mapped_locked(glcv_delta *d, const glcv_image *mask, int flags, const uint8_t **packet,
                                        size_t *bytes)
{
    if (!d->mapped)
        return glcv_fail(&d->p.logger, GLCV_ERROR_STATE, "delta: encode_mapped without map_frame");
    glcv_image frame = {d->mapped, d->p.width, d->p.height, 0, d->p.format};
    return encode_gl_once(d, &frame, 0, mask, 0, flags, packet, bytes);
}

glcv_status glcv_delta_encode_mapped(glcv_delta *d, const glcv_image *mask, int flags, const uint8_t **packet,
                                     size_t *bytes)
{
    clear_packet(packet, bytes);
    GLCV_LOCKED_GL_CALL(d, "delta: encode_mapped", encode_mapped_locked(d, mask, flags, packet, bytes));
}

static glcv_status snapshot_locked(glcv_delta *d, const uint8_t **packet, size_t *bytes)
{
    if (!packet || !bytes)
        return glcv_fail(&d->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "delta: snapshot: NULL packet or bytes");
    if (!d->has_reference)
        return glcv_fail(&d->p.logger, GLCV_ERROR_STATE, "delta: snapshot: no reference (no frame encoded since the "
                                                          "start or the last error)");
    glcv_status st = gl_ready(d, 0, "snapshot");
    if (st == GLCV_OK)
        st = reserve(d, d->n);
    if (st == GLCV_OK)
        st = d->engine ? glcv_delta_gl_reference(d, d->packet + GLCV_DELTA_HEADER_BYTES)
                       : glcv_delta_cpu_reference(d, d->packet + GLCV_DELTA_HEADER_BYTES);
    if (st != GLCV_OK)
        return st;
    *bytes = finish_packet(d, d->frames - 1, GLCV_DELTA_FLAG_KEY | GLCV_DELTA_FLAG_SNAPSHOT, GLCV_DELTA_RAW, d->n,
                           d->n);
    *packet = d->packet;
    return GLCV_OK;
}

glcv_status glcv_delta_snapshot(glcv_delta *d, const uint8_t **packet, size_t *bytes)
{
    clear_packet(packet, bytes);
    GLCV_LOCKED_GL_CALL(d, "delta: snapshot", snapshot_locked(d, packet, bytes));
}

static glcv_status read_reference_locked(glcv_delta *d, glcv_image *out)
{
    glcv_status st = out && out->data ? check_image(d, out, 0, "read_reference")
                                      : glcv_fail(&d->p.logger, GLCV_ERROR_INVALID_ARGUMENT,
                                                  "delta: read_reference: no image");
    if (st == GLCV_OK && out->format != d->p.format)
        st = glcv_fail(&d->p.logger, GLCV_ERROR_INVALID_ARGUMENT,
                       "delta: read_reference: the image's format %d is not the stream's %d", (int)out->format,
                       (int)d->p.format);
    if (st == GLCV_OK && !d->has_reference)
        st = glcv_fail(&d->p.logger, GLCV_ERROR_STATE, "delta: read_reference: no reference yet");
    if (st == GLCV_OK)
        st = gl_ready(d, 0, "read_reference");
    uint8_t *ref = st == GLCV_OK ? malloc(d->n) : NULL;
    if (st == GLCV_OK && !ref)
        st = GLCV_ERROR_OUT_OF_MEMORY;
    if (st == GLCV_OK)
        st = d->engine ? glcv_delta_gl_reference(d, ref) : glcv_delta_cpu_reference(d, ref);
    if (st == GLCV_OK) {
        size_t row = (size_t)d->p.width * (size_t)d->bpp, stride = out->stride ? out->stride : row;
        for (int y = 0; y < d->p.height; y++)
            memcpy(out->data + stride * (size_t)y, ref + row * (size_t)y, row);
    }
    free(ref);
    return st;
}

glcv_status glcv_delta_read_reference(glcv_delta *d, glcv_image *out)
{
    GLCV_LOCKED_GL_CALL(d, "delta: read_reference", read_reference_locked(d, out));
}

static glcv_status timings_locked(glcv_delta *d, glcv_timing *out, int capacity, int *count, int wait)
{
    glcv_status st = glcv_check_timings_args(&d->p.logger, "delta", out, capacity, count);
    if (st != GLCV_OK)
        return st;
    if (!d->engine)
        return glcv_timings_copy(d->cpu_timings, d->n_cpu_timings, out, capacity, count);
    *count = glcv_engine_timings(d->engine, out, capacity, wait);
    return GLCV_OK;
}

glcv_status glcv_delta_timings(glcv_delta *d, glcv_timing *out, int capacity, int *count, int wait)
{
    GLCV_LOCKED_GL_CALL(d, "delta: timings", timings_locked(d, out, capacity, count, wait));
}
