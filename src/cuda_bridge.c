/* The CUDA-GL interop bridge (see cuda_bridge.h).
 *
 * Why one file of about 1,000 lines: it holds every cudaGraphics* call of the library. The
 * pixel-buffer path, the registered 2D textures and the registered texture arrays share one cache
 * of registrations and one map entry, and the rules they keep together - a registration never
 * outlives its texture, is made again when the texture's size or format changed, and everything a
 * set needs is mapped in one call - are easiest to check in one place. */
/* epoxy first: cuda_gl_interop.h includes the system GL header, which epoxy's guards stop. */
#include <epoxy/gl.h>

#include "cuda_bridge.h"

#include "core_internal.h"
#include "gl.h"

#include <glcv/context.h>

#include <cuda_gl_interop.h>
#include <cuda_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the pixel-buffer bridge ----------------------------------------------------------------- */

/* A caller's texture registered for a direct path, keyed by name, kind, size and internal format:
 * a GL_TEXTURE_2D (map_textures: layers 0) or a GL_TEXTURE_2D_ARRAY of the bridge's layers
 * (map_layers). */
typedef struct cached_texture {
    GLuint texture;                     /* 0: a free slot */
    int layers;                         /* 0: a GL_TEXTURE_2D; else the array's layers */
    GLint width, height, internal;      /* level 0 when registered */
    int channels;                       /* of its texture objects: 4 (uchar4) or 1 (uchar) */
    int refused;                        /* registration refused or unexpected array: pixel buffer */
    /* a GL_TEXTURE_2D */
    struct cudaGraphicsResource *resource;
    cudaArray_t array;                  /* the array the texture object reads */
    struct cudaChannelFormatDesc desc;
    struct cudaExtent extent;
    cudaTextureObject_t object;
    /* an array texture */
    glcv_cuda_image image;              /* the registration (glcv_cuda_image_register_layers) */
    cudaArray_t *arrays;                /* per layer: the array its texture object reads */
    cudaTextureObject_t *objects;       /* per layer: the texture object, 0 until built */
    cudaTextureObject_t *device_objects; /* the objects in device memory, for the kernels */
    unsigned long long used;            /* the last map that used it (eviction) */
} cached_texture;

/* Slots of the registration cache: 8 at first, more when a batch needs them (map_many), up to
 * MAX_CACHE_SLOTS. */
enum { CACHE_SLOTS = 8, MAX_CACHE_SLOTS = 4096 };

struct glcv_cuda_bridge {
    glcv_logger logger;
    int width, height;
    GLuint pbo, fbo;
    size_t rgba_bytes, mask_offset, bytes;
    struct cudaGraphicsResource *resource;
    int layers;   /* layers of the arrays map_layers takes; the pixel buffer holds that many frames */
    int mapped;   /* 1: the pixel buffer, 2: registered textures, 3: registered texture arrays */
    int no_flush; /* benchmarks only: leave the copies unflushed before the map */

    cached_texture *cache;
    int cache_slots;
    struct cudaGraphicsResource **mapped_images; /* map_textures, map_many: what is mapped */
    int n_mapped_images, mapped_capacity;
    glcv_cuda_image *mapped_arrays[2];
    int n_mapped_arrays;
    cudaStream_t last_stream; /* the last map's stream, waited for before a registration goes */
    int have_stream;
    unsigned long long maps;
    glcv_cuda_bridge_stats stats;
};

/* Creates and registers the pixel buffer. */
static glcv_status make_pbo(glcv_cuda_bridge *b)
{
    glcv_gl_clear_errors();
    GLint old_pack = 0;
    glGetIntegerv(GL_PIXEL_PACK_BUFFER_BINDING, &old_pack);
    glGenBuffers(1, &b->pbo);
    glGenFramebuffers(1, &b->fbo);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, b->pbo);
    /* Immutable storage with no client access keeps the buffer in video memory (a mutable
     * pixel-pack buffer may be placed in system memory for read-back). */
    if (epoxy_gl_version() >= 44 || epoxy_has_gl_extension("GL_ARB_buffer_storage"))
        glBufferStorage(GL_PIXEL_PACK_BUFFER, (GLsizeiptr)b->bytes, NULL, 0);
    else
        glBufferData(GL_PIXEL_PACK_BUFFER, (GLsizeiptr)b->bytes, NULL, GL_DYNAMIC_COPY);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, (GLuint)old_pack);
    glcv_status st = glcv_gl_check(&b->logger, "cuda bridge: pixel buffer");
    if (st == GLCV_OK) {
        cudaError_t err = cudaGraphicsGLRegisterBuffer(&b->resource, b->pbo, cudaGraphicsRegisterFlagsReadOnly);
        if (err != cudaSuccess) {
            b->resource = NULL;
            st = glcv_cuda_fail(&b->logger, err, "cuda bridge: cudaGraphicsGLRegisterBuffer");
        }
    }
    if (st == GLCV_OK)
        glcv_logf(&b->logger, GLCV_LOG_DEBUG, "cuda bridge: %dx%d, pixel buffer of %zu bytes registered", b->width,
                  b->height, b->bytes);
    return st;
}

static glcv_status bridge_new(int width, int height, int layers, const glcv_logger *logger, int with_pbo,
                              glcv_cuda_bridge **out)
{
    *out = NULL;
    if (!glcv_gl_context_current())
        return glcv_fail(logger, GLCV_ERROR_NO_CONTEXT, "cuda bridge: no GL context is current");
    glcv_cuda_bridge *b = calloc(1, sizeof *b);
    if (b) {
        b->cache = calloc(CACHE_SLOTS, sizeof *b->cache);
        b->mapped_images = calloc(2, sizeof *b->mapped_images);
        b->cache_slots = CACHE_SLOTS;
        b->mapped_capacity = 2;
    }
    if (!b || !b->cache || !b->mapped_images) {
        if (b) {
            free(b->cache);
            free(b->mapped_images);
        }
        free(b);
        return GLCV_ERROR_OUT_OF_MEMORY;
    }
    if (logger)
        b->logger = *logger;
    b->width = width;
    b->height = height;
    b->layers = layers;
    b->rgba_bytes = (size_t)width * (size_t)height * (size_t)layers * 4;
    b->mask_offset = (b->rgba_bytes + 255) & ~(size_t)255;
    b->bytes = b->mask_offset + (size_t)width * (size_t)height * (size_t)layers;
    if (with_pbo) {
        glcv_status st = make_pbo(b);
        if (st != GLCV_OK) {
            glcv_cuda_bridge_destroy(&b);
            return st;
        }
    }
    *out = b;
    return GLCV_OK;
}

glcv_status glcv_cuda_bridge_create(int width, int height, const glcv_logger *logger, glcv_cuda_bridge **out)
{
    return bridge_new(width, height, 1, logger, 1, out);
}

glcv_status glcv_cuda_bridge_create_for_textures(int width, int height, const glcv_logger *logger,
                                                 glcv_cuda_bridge **out)
{
    return bridge_new(width, height, 1, logger, 0, out);
}

glcv_status glcv_cuda_bridge_create_for_layers(int width, int height, int layers, const glcv_logger *logger,
                                               glcv_cuda_bridge **out)
{
    if (layers < 1) {
        *out = NULL;
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "cuda bridge: %d layers", layers);
    }
    return bridge_new(width, height, layers, logger, 0, out);
}

/* Waits for the work queued on the last map's stream (it may read a texture object). */
static void wait_last_stream(glcv_cuda_bridge *b)
{
    if (b->have_stream)
        (void)cudaStreamSynchronize(b->last_stream);
}

/* Destroys a slot's texture objects and registration; the slot becomes free. The caller has
 * waited for the work that may use them. */
static void drop_slot(glcv_cuda_bridge *b, cached_texture *s)
{
    if (s->object)
        (void)cudaDestroyTextureObject(s->object);
    for (int l = 0; s->objects && l < s->layers; l++)
        if (s->objects[l])
            (void)cudaDestroyTextureObject(s->objects[l]);
    if (s->device_objects)
        (void)cudaFree(s->device_objects);
    if (s->resource || s->image.resource) {
        cudaError_t err = cudaSuccess;
        if (s->resource)
            err = cudaGraphicsUnregisterResource(s->resource);
        else if (glcv_cuda_image_unregister(&s->image, NULL) != GLCV_OK)
            err = cudaGetLastError();
        if (err != cudaSuccess) /* e.g. the texture was deleted before it was forgotten */
            glcv_logf(&b->logger, GLCV_LOG_WARN,
                      "cuda bridge: unregistering texture %u: CUDA error %d (%s); was it deleted before "
                      "glcv_track_forget_texture?",
                      s->texture, (int)err, cudaGetErrorName(err));
        b->stats.registered--;
    }
    free(s->arrays);
    free(s->objects);
    (void)cudaGetLastError();
    memset(s, 0, sizeof *s);
}

void glcv_cuda_bridge_destroy(glcv_cuda_bridge **bridge)
{
    if (!bridge || !*bridge)
        return;
    glcv_cuda_bridge *b = *bridge;
    if (b->mapped)
        (void)glcv_cuda_bridge_unmap(b, b->last_stream);
    wait_last_stream(b);
    for (int i = 0; i < b->cache_slots; i++)
        if (b->cache[i].texture)
            drop_slot(b, &b->cache[i]);
    free(b->cache);
    free(b->mapped_images);
    if (b->resource) {
        cudaError_t err = cudaGraphicsUnregisterResource(b->resource);
        if (err != cudaSuccess)
            glcv_cuda_fail(&b->logger, err, "cuda bridge: cudaGraphicsUnregisterResource");
    }
    if (glcv_gl_context_current()) {
        if (b->fbo)
            glDeleteFramebuffers(1, &b->fbo);
        if (b->pbo)
            glDeleteBuffers(1, &b->pbo);
    }
    free(b);
    *bridge = NULL;
}

/* Checks a caller's texture: a GL_TEXTURE_2D of the bridge's size (its level 0), whose internal
 * format goes to *internal when it is not NULL. */
static glcv_status query_texture(glcv_cuda_bridge *b, GLuint texture, const char *what, GLint *internal)
{
    if (!texture || !glIsTexture(texture))
        return glcv_fail(&b->logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: %u is not a texture", what, texture);
    GLint bound = 0, w = 0, h = 0, fmt = 0;
    glGetIntegerv(GL_TEXTURE_BINDING_2D, &bound);
    glBindTexture(GL_TEXTURE_2D, texture);
    glcv_status st = glcv_gl_check(&b->logger, what);
    if (st != GLCV_OK) {
        glBindTexture(GL_TEXTURE_2D, (GLuint)bound);
        return glcv_fail(&b->logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: texture %u is not a GL_TEXTURE_2D", what,
                         texture);
    }
    glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_WIDTH, &w);
    glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_HEIGHT, &h);
    if (internal)
        glGetTexLevelParameteriv(GL_TEXTURE_2D, 0, GL_TEXTURE_INTERNAL_FORMAT, &fmt);
    glBindTexture(GL_TEXTURE_2D, (GLuint)bound);
    if (w != b->width || h != b->height)
        return glcv_fail(&b->logger, GLCV_ERROR_SIZE_MISMATCH, "%s: texture %u is %dx%d, expected %dx%d", what,
                         texture, (int)w, (int)h, b->width, b->height);
    if (internal)
        *internal = fmt;
    return GLCV_OK;
}

static glcv_status check_texture(glcv_cuda_bridge *b, GLuint texture, const char *what)
{
    return query_texture(b, texture, what, NULL);
}

static const GLenum pack_names[] = {GL_PACK_ALIGNMENT, GL_PACK_ROW_LENGTH, GL_PACK_SKIP_PIXELS, GL_PACK_SKIP_ROWS,
                                    GL_PACK_SWAP_BYTES, GL_PACK_LSB_FIRST};
#define N_PACK (sizeof pack_names / sizeof pack_names[0])

/* Reads one texture's level 0 into the bound pixel-pack buffer at `offset`. glGetTexImage, not
 * glReadPixels through a framebuffer: measured on an H200 (driver 580), glReadPixels into the
 * CUDA-registered buffer took about 440 ms a frame, glGetTexImage 0.7 ms. */
static glcv_status read_into_buffer(glcv_cuda_bridge *b, GLenum target, GLuint texture, GLenum format,
                                    size_t offset, const char *what)
{
    GLint bound = 0;
    glGetIntegerv(target == GL_TEXTURE_2D ? GL_TEXTURE_BINDING_2D : GL_TEXTURE_BINDING_2D_ARRAY, &bound);
    glBindTexture(target, texture);
    glGetTexImage(target, 0, format, GL_UNSIGNED_BYTE, (void *)(uintptr_t)offset);
    glBindTexture(target, (GLuint)bound);
    return glcv_gl_check(&b->logger, what);
}

/* Copies level 0 of the checked textures `frame` and `mask` (0 = none) of `target` - a
 * GL_TEXTURE_2D, or every layer of a GL_TEXTURE_2D_ARRAY, one after another - into the pixel
 * buffer and maps it on `stream`. */
static glcv_status map_buffer(glcv_cuda_bridge *b, GLenum target, GLuint frame, GLuint mask, cudaStream_t stream,
                              glcv_cuda_frame *out)
{
    glcv_status st = b->resource ? GLCV_OK : make_pbo(b);
    if (st != GLCV_OK)
        return st;

    /* save what is touched */
    GLint read_fbo = 0, pack_buffer = 0, pack[N_PACK];
    glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &read_fbo);
    glGetIntegerv(GL_PIXEL_PACK_BUFFER_BINDING, &pack_buffer);
    for (size_t i = 0; i < N_PACK; i++)
        glGetIntegerv(pack_names[i], &pack[i]);

    glBindFramebuffer(GL_READ_FRAMEBUFFER, b->fbo);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, b->pbo);
    for (size_t i = 0; i < N_PACK; i++)
        glPixelStorei(pack_names[i], pack_names[i] == GL_PACK_ALIGNMENT ? 1 : 0);
    st = read_into_buffer(b, target, frame, GL_RGBA, 0, "track frame texture");
    if (st == GLCV_OK && mask)
        st = read_into_buffer(b, target, mask, GL_RED, b->mask_offset, "track mask texture");

    for (size_t i = 0; i < N_PACK; i++)
        glPixelStorei(pack_names[i], pack[i]);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, (GLuint)pack_buffer);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, (GLuint)read_fbo);
    if (st != GLCV_OK)
        return st;

    /* The copies must reach the GPU before CUDA waits for them: the map orders the stream after
     * GL's commands but need not submit GL's pending command buffer, and an unflushed copy can
     * leave the stream waiting until the driver flushes on its own (interop_bench's pbo-noflush
     * row measures what that costs). */
    if (!b->no_flush)
        glFlush();
    cudaError_t err = cudaGraphicsMapResources(1, &b->resource, stream);
    if (err != cudaSuccess)
        return glcv_cuda_fail(&b->logger, err, "cuda bridge: cudaGraphicsMapResources");
    b->mapped = 1;
    b->last_stream = stream;
    b->have_stream = 1;
    b->stats.direct = 0;
    void *ptr = NULL;
    size_t size = 0;
    err = cudaGraphicsResourceGetMappedPointer(&ptr, &size, b->resource);
    if (err != cudaSuccess || size < b->bytes) {
        glcv_cuda_bridge_unmap(b, stream);
        if (err != cudaSuccess)
            return glcv_cuda_fail(&b->logger, err, "cuda bridge: cudaGraphicsResourceGetMappedPointer");
        return glcv_fail(&b->logger, GLCV_ERROR_CUDA, "cuda bridge: mapped %zu bytes, expected %zu", size,
                         b->bytes);
    }
    out->rgba = (const uint8_t *)ptr;
    out->rgba_pitch = (size_t)b->width * 4;
    out->mask = mask ? (const uint8_t *)ptr + b->mask_offset : NULL;
    out->mask_pitch = (size_t)b->width;
    return GLCV_OK;
}

/* The start of every map: the arguments, nothing mapped still, the host's pending GL errors
 * cleared. */
static glcv_status map_begin(glcv_cuda_bridge *b, glcv_cuda_frame *out)
{
    if (!b || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    if (b->mapped)
        return glcv_fail(&b->logger, GLCV_ERROR_STATE, "cuda bridge: the last inputs are still mapped");
    glcv_gl_clear_errors();
    return GLCV_OK;
}

glcv_status glcv_cuda_bridge_map_frame(glcv_cuda_bridge *b, unsigned int frame, unsigned int mask,
                                       cudaStream_t stream, glcv_cuda_frame *out)
{
    glcv_status st = map_begin(b, out);
    if (st == GLCV_OK)
        st = check_texture(b, frame, "track frame texture");
    if (st == GLCV_OK && mask)
        st = check_texture(b, mask, "track mask texture");
    if (st != GLCV_OK)
        return st;
    return map_buffer(b, GL_TEXTURE_2D, frame, mask, stream, out);
}

glcv_status glcv_cuda_bridge_unmap(glcv_cuda_bridge *b, cudaStream_t stream)
{
    if (!b || !b->mapped)
        return GLCV_OK;
    if (b->mapped == 3) {
        b->mapped = 0;
        return glcv_cuda_images_unmap(b->mapped_arrays, b->n_mapped_arrays, stream, &b->logger);
    }
    cudaError_t err = b->mapped == 2 ? cudaGraphicsUnmapResources(b->n_mapped_images, b->mapped_images, stream)
                                     : cudaGraphicsUnmapResources(1, &b->resource, stream);
    b->mapped = 0;
    b->n_mapped_images = 0;
    if (err != cudaSuccess)
        return glcv_cuda_fail(&b->logger, err, "cuda bridge: cudaGraphicsUnmapResources");
    return GLCV_OK;
}

/* ---- the registered-texture path ------------------------------------------------------------ */

/* Channels of the texture object the kernels read a texture of this internal format through
 * (4: uchar4, 1: uchar), or 0 when it takes the pixel buffer. */
static int direct_channels(GLint internal, int is_mask)
{
    if (internal == GL_RGBA8)
        return 4;
    if (is_mask && internal == GL_R8)
        return 1;
    return 0;
}

/* Registers a slot's texture (its key set) with CUDA, read-only; a refusal marks it refused. */
static void register_slot(glcv_cuda_bridge *b, cached_texture *s)
{
    const char *why = NULL;
    if (!s->layers) {
        cudaError_t err =
            cudaGraphicsGLRegisterImage(&s->resource, s->texture, GL_TEXTURE_2D, cudaGraphicsRegisterFlagsReadOnly);
        if (err != cudaSuccess) {
            (void)cudaGetLastError();
            s->resource = NULL;
            why = cudaGetErrorName(err);
        }
    } else {
        s->arrays = calloc((size_t)s->layers, sizeof *s->arrays);
        s->objects = calloc((size_t)s->layers, sizeof *s->objects);
        glcv_status st = s->arrays && s->objects ? glcv_cuda_image_register_layers(&s->image, s->texture, 0, NULL)
                                                 : GLCV_ERROR_OUT_OF_MEMORY;
        if (st == GLCV_OK && s->image.layers != s->layers) {
            (void)glcv_cuda_image_unregister(&s->image, NULL);
            st = GLCV_ERROR_UNSUPPORTED;
        }
        if (st != GLCV_OK) {
            (void)cudaGetLastError();
            why = glcv_status_string(st);
        }
    }
    if (why) {
        s->refused = 1;
        b->stats.refused++;
        glcv_logf(&b->logger, GLCV_LOG_INFO,
                  "cuda bridge: texture %u (format 0x%04x) cannot be registered with CUDA (%s): it is read "
                  "through the pixel buffer",
                  s->texture, (unsigned)s->internal, why);
    } else {
        b->stats.registrations++;
        b->stats.registered++;
    }
}

/* Room for `n` textures mapped at once (more slots, and the map's list); 0 when there is none.
 * Moves the slots: no slot pointer may be held across it. */
static int reserve_slots(glcv_cuda_bridge *b, int n)
{
    if (n > MAX_CACHE_SLOTS)
        return 0;
    if (n > b->cache_slots) {
        cached_texture *c = realloc(b->cache, (size_t)n * sizeof *c);
        if (!c)
            return 0;
        memset(c + b->cache_slots, 0, (size_t)(n - b->cache_slots) * sizeof *c);
        b->cache = c;
        b->cache_slots = n;
    }
    if (n > b->mapped_capacity) {
        struct cudaGraphicsResource **m = realloc(b->mapped_images, (size_t)n * sizeof *m);
        if (!m)
            return 0;
        b->mapped_images = m;
        b->mapped_capacity = n;
    }
    return 1;
}

/* The slot of `texture` (level 0 of width x height, `internal`; `layers` 0 for a GL_TEXTURE_2D,
 * else an array texture of the bridge's layers), registered on first use and again when the
 * texture was re-specified with another size or format; NULL when no slot can be had. Slots taken
 * by this map already (used == b->maps) are not evicted. */
static cached_texture *texture_slot(glcv_cuda_bridge *b, GLuint texture, int layers, GLint internal, int channels)
{
    cached_texture *s = NULL, *free_slot = NULL, *oldest = NULL;
    for (int i = 0; i < b->cache_slots; i++) {
        cached_texture *c = &b->cache[i];
        if (c->texture == texture)
            s = c;
        else if (!c->texture && !free_slot)
            free_slot = c;
        else if (c->texture && c->used != b->maps && (!oldest || c->used < oldest->used))
            oldest = c;
    }
    if (s && (s->layers != layers || s->width != b->width || s->height != b->height || s->internal != internal)) {
        glcv_logf(&b->logger, GLCV_LOG_DEBUG,
                  "cuda bridge: texture %u was re-specified (%dx%d, format 0x%04x, now %dx%d, 0x%04x): registered "
                  "again",
                  texture, (int)s->width, (int)s->height, (unsigned)s->internal, b->width, b->height,
                  (unsigned)internal);
        wait_last_stream(b);
        drop_slot(b, s);
    } else if (!s) {
        s = free_slot ? free_slot : oldest;
        if (!s)
            return NULL;
        if (s->texture) {
            wait_last_stream(b);
            drop_slot(b, s);
        }
    }
    if (!s->texture) {
        s->texture = texture;
        s->layers = layers;
        s->width = b->width;
        s->height = b->height;
        s->internal = internal;
        s->channels = channels;
        register_slot(b, s);
    }
    s->used = b->maps;
    return s;
}

/* Drops a slot's registration but remembers the texture as refused (the pixel buffer reads it)
 * until it is forgotten or re-specified. */
static void refuse_slot(glcv_cuda_bridge *b, cached_texture *s)
{
    cached_texture key = *s;
    wait_last_stream(b);
    drop_slot(b, s);
    s->texture = key.texture;
    s->layers = key.layers;
    s->width = key.width;
    s->height = key.height;
    s->internal = key.internal;
    s->channels = key.channels;
    s->refused = 1;
    s->used = b->maps;
    b->stats.refused++;
}

/* Does an array of this format hold what a texture object of `channels` (4: uchar4, 1: uchar)
 * reads? */
static int holds_channels(const struct cudaChannelFormatDesc *d, int channels)
{
    int bits = channels == 4 ? 8 : 0;
    return d->f == cudaChannelFormatKindUnsigned && d->x == 8 && d->y == bits && d->z == bits && d->w == bits;
}

static int expected_array(const cached_texture *s, const struct cudaChannelFormatDesc *d, const struct cudaExtent *e)
{
    return holds_channels(d, s->channels) && (int)e->width == s->width && (int)e->height == s->height;
}

cudaError_t glcv_cuda_texture_object(cudaArray_t array, cudaTextureObject_t *out)
{
    struct cudaResourceDesc rd;
    memset(&rd, 0, sizeof rd);
    rd.resType = cudaResourceTypeArray;
    rd.res.array.array = array;
    struct cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    return cudaCreateTextureObject(out, &rd, &td, NULL);
}

/* Maps the slots' resources in one call and brings their texture objects up to date.
 * GLCV_ERROR_UNSUPPORTED (nothing mapped, nothing logged as an error) when the pixel buffer
 * should be used instead. */
static glcv_status map_slots(glcv_cuda_bridge *b, cached_texture **slots, int n, cudaStream_t stream)
{
    struct cudaGraphicsResource **res = b->mapped_images; /* room for n: reserve_slots */
    for (int i = 0; i < n; i++)
        res[i] = slots[i]->resource;
    /* GL's writes to the textures must be submitted before CUDA waits for them (see map_frame) */
    if (!b->no_flush)
        glFlush();
    cudaStream_t previous = b->last_stream; /* the last map's kernels may still read old objects */
    int had_previous = b->have_stream;
    cudaError_t err = cudaGraphicsMapResources(n, res, stream);
    if (err != cudaSuccess) {
        /* e.g. a texture deleted without being forgotten: register afresh next time */
        (void)cudaGetLastError();
        glcv_logf(&b->logger, GLCV_LOG_WARN,
                  "cuda bridge: mapping registered textures failed (%s): registered again next frame, this one is "
                  "read through the pixel buffer",
                  cudaGetErrorName(err));
        wait_last_stream(b);
        for (int i = 0; i < n; i++)
            drop_slot(b, slots[i]);
        return GLCV_ERROR_UNSUPPORTED;
    }
    b->last_stream = stream;
    b->have_stream = 1;
    for (int i = 0; i < n; i++) {
        cached_texture *s = slots[i];
        cudaArray_t array = NULL;
        struct cudaChannelFormatDesc desc;
        struct cudaExtent extent;
        unsigned int flags = 0;
        memset(&desc, 0, sizeof desc);
        memset(&extent, 0, sizeof extent);
        err = cudaGraphicsSubResourceGetMappedArray(&array, s->resource, 0, 0);
        if (err == cudaSuccess)
            err = cudaArrayGetInfo(&desc, &extent, &flags, array);
        if (err != cudaSuccess || !expected_array(s, &desc, &extent)) {
            (void)cudaGetLastError();
            (void)cudaGraphicsUnmapResources(n, res, stream);
            glcv_logf(&b->logger, GLCV_LOG_INFO,
                      "cuda bridge: texture %u maps to %s (%zux%zu, %d/%d/%d/%d bits, kind %d): it is read through "
                      "the pixel buffer",
                      s->texture, err != cudaSuccess ? cudaGetErrorName(err) : "an unexpected array", extent.width,
                      extent.height, desc.x, desc.y, desc.z, desc.w, (int)desc.f);
            refuse_slot(b, s);
            return GLCV_ERROR_UNSUPPORTED;
        }
        if (!s->object || array != s->array || memcmp(&desc, &s->desc, sizeof desc) != 0 ||
            extent.width != s->extent.width || extent.height != s->extent.height) {
            if (s->object) {
                /* the previous frame's kernels may still read the old object */
                (void)cudaStreamSynchronize(stream);
                if (had_previous)
                    (void)cudaStreamSynchronize(previous);
                (void)cudaDestroyTextureObject(s->object);
                s->object = 0;
            }
            err = glcv_cuda_texture_object(array, &s->object);
            if (err != cudaSuccess) {
                s->object = 0;
                (void)cudaGraphicsUnmapResources(n, res, stream);
                return glcv_cuda_fail(&b->logger, err, "cuda bridge: cudaCreateTextureObject");
            }
            s->array = array;
            s->desc = desc;
            s->extent = extent;
            b->stats.texture_objects++;
        }
    }
    b->n_mapped_images = n;
    b->mapped = 2;
    return GLCV_OK;
}

glcv_status glcv_cuda_bridge_forget(glcv_cuda_bridge *b, unsigned int texture)
{
    if (!b)
        return GLCV_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < b->cache_slots; i++) {
        cached_texture *s = &b->cache[i];
        if (!texture || s->texture != texture)
            continue;
        if (b->mapped >= 2)
            return glcv_fail(&b->logger, GLCV_ERROR_STATE, "cuda bridge: texture %u is mapped", texture);
        wait_last_stream(b);
        drop_slot(b, s);
    }
    return GLCV_OK;
}

void glcv_cuda_bridge_get_stats(const glcv_cuda_bridge *b, glcv_cuda_bridge_stats *out)
{
    if (b)
        *out = b->stats;
    else
        memset(out, 0, sizeof *out);
}

void glcv_cuda_bridge_set_flush(glcv_cuda_bridge *b, int flush)
{
    if (b)
        b->no_flush = !flush;
}

/* ---- registered texture arrays (map_layers), and the entry of both registered paths ------------ */

/* Brings a mapped array slot's texture objects up to date: kept while CUDA maps its layers to
 * the arrays they were built over, else (after the kernels that may read the old ones) built
 * again and their handles uploaded on `stream`. UNSUPPORTED when a layer holds other than the
 * slot's format says. */
static glcv_status layer_objects(glcv_cuda_bridge *b, cached_texture *s, cudaStream_t stream)
{
    int same = s->objects[0] != 0;
    for (int l = 0; same && l < s->layers; l++)
        same = s->arrays[l] == s->image.layer_arrays[l];
    if (same)
        return GLCV_OK;
    if (s->objects[0]) {
        (void)cudaStreamSynchronize(stream); /* the previous set's kernels may still read them */
        for (int l = 0; l < s->layers; l++)
            if (s->objects[l])
                (void)cudaDestroyTextureObject(s->objects[l]);
        memset(s->objects, 0, (size_t)s->layers * sizeof *s->objects);
    }
    for (int l = 0; l < s->layers; l++) {
        struct cudaChannelFormatDesc desc;
        struct cudaExtent extent;
        unsigned int flags = 0;
        memset(&desc, 0, sizeof desc);
        cudaError_t err = cudaArrayGetInfo(&desc, &extent, &flags, s->image.layer_arrays[l]);
        if (err != cudaSuccess || !holds_channels(&desc, s->channels)) {
            (void)cudaGetLastError();
            glcv_logf(&b->logger, GLCV_LOG_INFO,
                      "cuda bridge: array texture %u layer %d maps to %s (%d/%d/%d/%d bits, kind %d): it is read "
                      "through the pixel buffer",
                      s->texture, l, err != cudaSuccess ? cudaGetErrorName(err) : "an unexpected array", desc.x,
                      desc.y, desc.z, desc.w, (int)desc.f);
            return GLCV_ERROR_UNSUPPORTED;
        }
        if ((err = glcv_cuda_texture_object(s->image.layer_arrays[l], &s->objects[l])) != cudaSuccess) {
            s->objects[l] = 0;
            return glcv_cuda_fail(&b->logger, err, "cuda bridge: cudaCreateTextureObject");
        }
        s->arrays[l] = s->image.layer_arrays[l];
        b->stats.texture_objects++;
    }
    size_t bytes = (size_t)s->layers * sizeof *s->objects;
    cudaError_t err = s->device_objects ? cudaSuccess : cudaMalloc((void **)&s->device_objects, bytes);
    if (err == cudaSuccess) /* pageable: staged before the call returns */
        err = cudaMemcpyAsync(s->device_objects, s->objects, bytes, cudaMemcpyHostToDevice, stream);
    if (err != cudaSuccess) {
        s->objects[0] = 0; /* built again next time */
        return glcv_cuda_fail(&b->logger, err, "cuda bridge: texture objects upload");
    }
    return GLCV_OK;
}

/* Maps the array slots in one call and brings their texture objects up to date.
 * GLCV_ERROR_UNSUPPORTED (nothing mapped) when the pixel buffer should be used instead. */
static glcv_status map_layer_slots(glcv_cuda_bridge *b, cached_texture **slots, int n, cudaStream_t stream)
{
    glcv_cuda_image *images[2];
    for (int i = 0; i < n; i++)
        images[i] = &slots[i]->image;
    glcv_status st = glcv_cuda_images_map(images, n, stream, NULL); /* flushes GL first */
    if (st != GLCV_OK) {
        glcv_logf(&b->logger, GLCV_LOG_WARN,
                  "cuda bridge: mapping registered array textures failed (%s): this set is read through the pixel "
                  "buffer",
                  glcv_status_string(st));
        for (int i = 0; i < n; i++) {
            if (st == GLCV_ERROR_UNSUPPORTED) {
                refuse_slot(b, slots[i]); /* arrays CUDA maps in an unexpected format */
            } else { /* e.g. a texture deleted without being forgotten: registered afresh next time */
                wait_last_stream(b);
                drop_slot(b, slots[i]);
            }
        }
        return GLCV_ERROR_UNSUPPORTED;
    }
    b->last_stream = stream;
    b->have_stream = 1;
    for (int i = 0; i < n; i++) {
        st = layer_objects(b, slots[i], stream);
        if (st != GLCV_OK) {
            (void)glcv_cuda_images_unmap(images, n, stream, NULL);
            if (st == GLCV_ERROR_UNSUPPORTED)
                refuse_slot(b, slots[i]);
            return st;
        }
    }
    for (int i = 0; i < n; i++)
        b->mapped_arrays[i] = images[i];
    b->n_mapped_arrays = n;
    b->mapped = 3;
    return GLCV_OK;
}

/* Checks a caller's input texture - a GL_TEXTURE_2D of the bridge's size (layers 0), or a
 * GL_TEXTURE_2D_ARRAY of its layers (glcv_gl_check_input_layers) - and gets its internal format.
 * One that no longer passes (re-specified, deleted) loses its registration now; it is registered
 * again when it comes back as the bridge takes it. */
static glcv_status query_input(glcv_cuda_bridge *b, GLuint texture, int layers, const char *what, GLint *internal)
{
    glcv_status st;
    if (layers) {
        GLint bound = 0;
        glGetIntegerv(GL_TEXTURE_BINDING_2D_ARRAY, &bound);
        st = glcv_gl_check_input_layers(texture, b->width, b->height, layers, internal, &b->logger);
        glBindTexture(GL_TEXTURE_2D_ARRAY, (GLuint)bound);
    } else {
        st = query_texture(b, texture, what, internal);
    }
    for (int i = 0; st != GLCV_OK && i < b->cache_slots; i++)
        if (b->cache[i].texture && b->cache[i].texture == texture) {
            wait_last_stream(b);
            drop_slot(b, &b->cache[i]);
        }
    return st;
}

/* map_textures (layers 0) and map_layers: registered textures where their formats allow it,
 * else the pixel buffer. */
static glcv_status map_registered(glcv_cuda_bridge *b, GLuint frame, GLuint mask, int layers, cudaStream_t stream,
                                  glcv_cuda_frame *out)
{
    GLint frame_format = 0, mask_format = 0;
    glcv_status st = map_begin(b, out);
    if (st == GLCV_OK)
        st = query_input(b, frame, layers, "track frame texture", &frame_format);
    if (st == GLCV_OK && mask)
        st = query_input(b, mask, layers, "track mask texture", &mask_format);
    if (st != GLCV_OK)
        return st;
    b->maps++;
    int fc = direct_channels(frame_format, 0), mc = mask ? direct_channels(mask_format, 1) : 0;
    if (fc && (!mask || mc) && frame != mask) {
        cached_texture *slots[2] = {NULL, NULL};
        slots[0] = texture_slot(b, frame, layers, frame_format, fc);
        if (slots[0] && mask)
            slots[1] = texture_slot(b, mask, layers, mask_format, mc);
        int n = mask ? 2 : 1;
        int usable = slots[0] && !slots[0]->refused && (!mask || (slots[1] && !slots[1]->refused));
        if (usable) {
            st = layers ? map_layer_slots(b, slots, n, stream) : map_slots(b, slots, n, stream);
            if (st == GLCV_OK) {
                out->rgba_texture = slots[0]->object;
                out->rgba_layers = slots[0]->device_objects;
                out->rgba_pitch = (size_t)b->width * 4;
                if (mask) {
                    out->mask_texture = slots[1]->object;
                    out->mask_layers = slots[1]->device_objects;
                    out->mask_channels = slots[1]->channels;
                    out->mask_pitch = (size_t)b->width;
                }
                b->stats.direct = 1;
                return GLCV_OK;
            }
            if (st != GLCV_ERROR_UNSUPPORTED)
                return st;
        }
    }
    return map_buffer(b, layers ? GL_TEXTURE_2D_ARRAY : GL_TEXTURE_2D, frame, mask, stream, out);
}

glcv_status glcv_cuda_bridge_map_textures(glcv_cuda_bridge *b, unsigned int frame, unsigned int mask,
                                          cudaStream_t stream, glcv_cuda_frame *out)
{
    return map_registered(b, frame, mask, 0, stream, out);
}

glcv_status glcv_cuda_bridge_map_layers(glcv_cuda_bridge *b, unsigned int frames, unsigned int masks,
                                        cudaStream_t stream, glcv_cuda_frame *out)
{
    return map_registered(b, frames, masks, b ? b->layers : 1, stream, out);
}

glcv_status glcv_cuda_bridge_map_many(glcv_cuda_bridge *b, const unsigned int *textures, int n, cudaStream_t stream,
                                      cudaTextureObject_t *objects)
{
    glcv_cuda_frame unused;
    glcv_status st = map_begin(b, &unused);
    if (st == GLCV_OK && (!textures || !objects || n < 1))
        st = glcv_fail(&b->logger, GLCV_ERROR_INVALID_ARGUMENT, "cuda bridge: map_many of %d textures", n);
    int direct = 1;
    for (int i = 0; i < n && st == GLCV_OK; i++) {
        GLint internal = 0;
        st = query_input(b, textures[i], 0, "correlate texture", &internal);
        direct = direct && direct_channels(internal, 0) == 4;
    }
    if (st != GLCV_OK)
        return st;
    if (!direct || !reserve_slots(b, n))
        return GLCV_ERROR_UNSUPPORTED;
    b->maps++;
    /* the distinct slots, each once in the map's list; which[i]: textures[i]'s slot */
    cached_texture **slots = malloc((size_t)n * sizeof *slots);
    int *which = malloc((size_t)n * sizeof *which);
    unsigned char *listed = calloc((size_t)b->cache_slots, 1);
    if (!slots || !which || !listed) {
        free(slots);
        free(which);
        free(listed);
        return GLCV_ERROR_OUT_OF_MEMORY;
    }
    int unique = 0;
    for (int i = 0; i < n && direct; i++) {
        cached_texture *s = texture_slot(b, textures[i], 0, GL_RGBA8, 4);
        direct = s && !s->refused;
        if (!direct)
            break;
        which[i] = (int)(s - b->cache);
        if (!listed[which[i]]) {
            listed[which[i]] = 1;
            slots[unique++] = s;
        }
    }
    st = direct ? map_slots(b, slots, unique, stream) : GLCV_ERROR_UNSUPPORTED;
    for (int i = 0; i < n && st == GLCV_OK; i++)
        objects[i] = b->cache[which[i]].object;
    free(slots);
    free(which);
    free(listed);
    if (st != GLCV_OK)
        return st;
    b->stats.direct = 1;
    return GLCV_OK;
}

/* ---- registered textures ------------------------------------------------------------------ */

static glcv_status image_register(glcv_cuda_image *image, unsigned int texture, GLenum target, int write_discard,
                                  const glcv_logger *logger)
{
    if (!image || !texture)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "cuda image: no texture");
    if (!glcv_gl_context_current())
        return glcv_fail(logger, GLCV_ERROR_NO_CONTEXT, "cuda image: no GL context is current");
    memset(image, 0, sizeof *image);
    GLint bound = 0, w = 0, h = 0, d = 0;
    glGetIntegerv(target == GL_TEXTURE_2D ? GL_TEXTURE_BINDING_2D : GL_TEXTURE_BINDING_2D_ARRAY, &bound);
    glBindTexture(target, texture);
    glGetTexLevelParameteriv(target, 0, GL_TEXTURE_WIDTH, &w);
    glGetTexLevelParameteriv(target, 0, GL_TEXTURE_HEIGHT, &h);
    glGetTexLevelParameteriv(target, 0, GL_TEXTURE_DEPTH, &d);
    glBindTexture(target, (GLuint)bound);
    glcv_status st = glcv_gl_check(logger, "cuda image: texture query");
    if (st != GLCV_OK)
        return st;
    if (w < 1 || h < 1 || (target == GL_TEXTURE_2D_ARRAY && d < 1))
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "cuda image: texture %u has no level 0 of that kind",
                         texture);
    cudaArray_t *layers = NULL;
    if (target == GL_TEXTURE_2D_ARRAY && !(layers = calloc((size_t)d, sizeof *layers)))
        return GLCV_ERROR_OUT_OF_MEMORY;
    unsigned flags = write_discard == GLCV_CUDA_IMAGE_SURFACE
                         ? cudaGraphicsRegisterFlagsWriteDiscard | cudaGraphicsRegisterFlagsSurfaceLoadStore
                     : write_discard ? cudaGraphicsRegisterFlagsWriteDiscard
                                     : cudaGraphicsRegisterFlagsReadOnly;
    cudaError_t err = cudaGraphicsGLRegisterImage(&image->resource, texture, target, flags);
    if (err != cudaSuccess) {
        image->resource = NULL;
        free(layers);
        return glcv_cuda_fail(logger, err, "cuda image: cudaGraphicsGLRegisterImage");
    }
    image->texture = texture;
    image->width = (int)w;
    image->height = (int)h;
    image->layers = target == GL_TEXTURE_2D_ARRAY ? (int)d : 0;
    image->layer_arrays = layers;
    image->write_discard = write_discard != 0;
    return GLCV_OK;
}

glcv_status glcv_cuda_image_register(glcv_cuda_image *image, unsigned int texture, int write_discard,
                                     const glcv_logger *logger)
{
    return image_register(image, texture, GL_TEXTURE_2D, write_discard, logger);
}

glcv_status glcv_cuda_image_register_layers(glcv_cuda_image *image, unsigned int texture, int write_discard,
                                            const glcv_logger *logger)
{
    return image_register(image, texture, GL_TEXTURE_2D_ARRAY, write_discard, logger);
}

glcv_status glcv_cuda_image_unregister(glcv_cuda_image *image, const glcv_logger *logger)
{
    if (!image || !image->resource)
        return GLCV_OK;
    cudaError_t err = cudaGraphicsUnregisterResource(image->resource);
    image->resource = NULL;
    image->array = NULL;
    free(image->layer_arrays);
    image->layer_arrays = NULL;
    if (err != cudaSuccess)
        return glcv_cuda_fail(logger, err, "cuda image: cudaGraphicsUnregisterResource");
    return GLCV_OK;
}

enum { MAX_MAPPED = 16 };

glcv_status glcv_cuda_images_map(glcv_cuda_image *const *images, int n, cudaStream_t stream,
                                 const glcv_logger *logger)
{
    struct cudaGraphicsResource *res[MAX_MAPPED];
    if (n < 1 || n > MAX_MAPPED)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "cuda image: %d images to map (1..%d)", n, MAX_MAPPED);
    for (int i = 0; i < n; i++) {
        if (!images[i] || !images[i]->resource)
            return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "cuda image: image %d is not registered", i);
        res[i] = images[i]->resource;
    }
    /* GL's writes to the textures must be submitted before CUDA waits for them (see map_frame) */
    if (glcv_gl_context_current())
        glFlush();
    cudaError_t err = cudaGraphicsMapResources(n, res, stream);
    if (err != cudaSuccess)
        return glcv_cuda_fail(logger, err, "cuda image: cudaGraphicsMapResources");
    for (int i = 0; i < n; i++) {
        /* every layer of an array texture (its own 2D array each), level 0 */
        int layers = images[i]->layers ? images[i]->layers : 1;
        for (int l = 0; l < layers; l++) {
            cudaArray_t array = NULL;
            err = cudaGraphicsSubResourceGetMappedArray(&array, res[i], (unsigned)l, 0);
            struct cudaChannelFormatDesc desc;
            struct cudaExtent extent;
            unsigned int flags = 0;
            if (err == cudaSuccess)
                err = cudaArrayGetInfo(&desc, &extent, &flags, array);
            if (err != cudaSuccess) {
                (void)cudaGraphicsUnmapResources(n, res, stream);
                return glcv_cuda_fail(logger, err, "cuda image: the mapped array");
            }
            int channels = (desc.x > 0) + (desc.y > 0) + (desc.z > 0) + (desc.w > 0);
            if ((int)extent.width != images[i]->width || (int)extent.height != images[i]->height || desc.x != 8 ||
                (channels != 1 && channels != 4)) {
                (void)cudaGraphicsUnmapResources(n, res, stream);
                return glcv_fail(logger, GLCV_ERROR_UNSUPPORTED,
                                 "cuda image: texture %u (layer %d) maps to a %zux%zu array of %d channel(s) of %d "
                                 "bits, expected %dx%d of 1 or 4 8-bit channels",
                                 images[i]->texture, l, extent.width, extent.height, channels, desc.x,
                                 images[i]->width, images[i]->height);
            }
            if (l == 0)
                images[i]->array = array;
            if (images[i]->layer_arrays)
                images[i]->layer_arrays[l] = array;
        }
    }
    return GLCV_OK;
}

glcv_status glcv_cuda_images_unmap(glcv_cuda_image *const *images, int n, cudaStream_t stream,
                                   const glcv_logger *logger)
{
    struct cudaGraphicsResource *res[MAX_MAPPED];
    if (n < 1 || n > MAX_MAPPED)
        return GLCV_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < n; i++) {
        res[i] = images[i]->resource;
        images[i]->array = NULL;
    }
    cudaError_t err = cudaGraphicsUnmapResources(n, res, stream);
    if (err != cudaSuccess)
        return glcv_cuda_fail(logger, err, "cuda image: cudaGraphicsUnmapResources");
    return GLCV_OK;
}
