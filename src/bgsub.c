/* Background subtraction, the object: parameters, validation, frame sets, learning, and the
 * dispatch of each set to its engine - the GL passes (bgsub_gl.c) or the CPU implementation
 * (bgsub_cpu.c). */
#include "bgsub_internal.h"

#include "core_internal.h"

#include <glcv/context.h>
#include <glcv/image.h>

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The chapter's values (Temizel et al.'s kernels: 0.92 B + 0.08 I, 0.92 T + 0.24 |I - B|, a
 * floor of 20). */
#define DEFAULT_ALPHA 0.92f
#define DEFAULT_C 3.0f
#define DEFAULT_MIN_THRESHOLD 20.0f
/* The additions (bgsub.h; measured in docs/QUALITY.md). */
#define DEFAULT_ABSORB 100
#define DEFAULT_VOTE 5

static const char *const method_names[] = {"vsam", "vsam", "diff2", "diff3"};
GLCV_ENUM_NAMES(glcv_bgsub_method, glcv_bgsub_method, method_names)

/* ---- parameters ---------------------------------------------------------------------------- */

static glcv_status resolve_params(const glcv_bgsub_params *in, glcv_bgsub_params *p)
{
    *p = *in;
    const glcv_logger *lg = &in->logger;
    glcv_status st = glcv_check_size(lg, "bgsub", p->width, p->height, GLCV_BGSUB_MAX_SIZE);
    if (st != GLCV_OK)
        return st;
    GLCV_DEFAULT(p->streams, 1);
    GLCV_DEFAULT(p->method, GLCV_BGSUB_VSAM);
    GLCV_DEFAULT(p->format, GLCV_PIXEL_RGB8);
    GLCV_DEFAULT(p->alpha, DEFAULT_ALPHA);
    GLCV_DEFAULT(p->c, DEFAULT_C);
    GLCV_DEFAULT(p->min_threshold, DEFAULT_MIN_THRESHOLD);
    GLCV_DEFAULT(p->engine, GLCV_ENGINE_AUTO);
    GLCV_DEFAULT(p->passes, GLCV_BGSUB_SINGLE_PASS);
    GLCV_DEFAULT(p->absorb, DEFAULT_ABSORB);
    GLCV_DEFAULT(p->vote, DEFAULT_VOTE);
    if ((st = glcv_check_range(lg, "bgsub", "streams", p->streams, 1, GLCV_BGSUB_MAX_STREAMS)) ||
        (st = glcv_check_range(lg, "bgsub", "min_threshold", p->min_threshold, 0, 255)) ||
        (st = glcv_check_range(lg, "bgsub", "c", p->c, 0, 16)) ||
        (st = glcv_check_range(lg, "bgsub", "absorb", p->absorb, 1, 255)))
        return st;
    if (p->vote != -1 && (p->vote < 1 || p->vote > 9))
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: vote must be 1..9 or -1 (got %d)", p->vote);
    if (p->upload < GLCV_BGSUB_UPLOAD_DEFAULT || p->upload > GLCV_BGSUB_UPLOAD_STREAM_FUSED)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: unknown upload %d", (int)p->upload);
    if (!glcv_finite(p->alpha) || p->alpha <= 0 || p->alpha >= 1)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: alpha must be > 0 and < 1 (got %g)", p->alpha);
    if (p->c <= 0)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: c must be > 0 (got %g)", p->c);
    if (p->method < GLCV_BGSUB_VSAM || p->method > GLCV_BGSUB_DIFF3)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: unknown method %d", (int)p->method);
    if (glcv_pixel_format_size(p->format) == 0)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: unknown pixel format %d", (int)p->format);
    if (p->passes != GLCV_BGSUB_SINGLE_PASS && p->passes != GLCV_BGSUB_MULTI_PASS)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: unknown passes %d", (int)p->passes);
    if (p->engine < GLCV_ENGINE_AUTO || p->engine > GLCV_ENGINE_CPU)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: engine %s is not one of auto, fragment, compute, cpu",
                         glcv_engine_mode_string(p->engine));
    if (p->format == GLCV_PIXEL_GRAY8)
        p->gray = 1;
    p->gray = p->gray ? 1 : 0;
    if (p->packed < -1 || p->packed > 1)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: packed must be -1, 0 or 1 (got %d)", p->packed);
    int can_pack = p->format == GLCV_PIXEL_GRAY8 && p->width % 4 == 0;
    if (p->packed == 1 && !can_pack)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT,
                         "bgsub: packing needs GRAY8 frames and a width that is a multiple of 4 (format %d, width %d)",
                         (int)p->format, p->width);
    if (p->packed == 0)
        p->packed = can_pack ? 1 : -1;
    p->download = p->download ? 1 : 0;
    return GLCV_OK;
}

static uint32_t fixed(double v, double scale)
{
    return (uint32_t)floor(v * scale + 0.5);
}

/* ---- create / destroy ---------------------------------------------------------------------- */

glcv_status glcv_bgsub_create(const glcv_bgsub_params *params, glcv_bgsub **out)
{
    GLCV_CREATE_BEGIN(params, out);
    glcv_bgsub_params p;
    glcv_status st = resolve_params(params, &p);
    if (st != GLCV_OK)
        return st;
    glcv_bgsub *b = calloc(1, sizeof *b);
    if (!b)
        return GLCV_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&b->lock, NULL);
    b->p = p;
    b->mapped_slot = -1;
    b->lanes = p.gray ? 1 : 3;
    b->bpp = glcv_pixel_format_size(p.format);
    b->packed = p.packed == 1;
    b->rule.method = p.method;
    b->rule.a = fixed(p.alpha, 65536.0);
    if (b->rule.a < 1)
        b->rule.a = 1;
    if (b->rule.a > 65535)
        b->rule.a = 65535;
    b->rule.c = fixed(p.c, 256.0);
    b->rule.f = fixed(p.min_threshold, 256.0);
    b->rule.k = p.absorb;
    b->rule.vote = p.vote > 0 ? p.vote : 0;
    for (int i = 0; i < GLCV_ENGINE_DOWNLOAD_SLOTS; i++)
        b->dl_set[i] = -1;
    const glcv_logger *lg = &params->logger;
    if (p.engine == GLCV_ENGINE_AUTO && !glcv_gl_context_current()) {
        glcv_logf(lg, GLCV_LOG_INFO, "bgsub: no GL context is current: using the CPU engine");
        b->p.engine = GLCV_ENGINE_CPU;
    }
    if (b->p.engine == GLCV_ENGINE_CPU) {
        st = glcv_bgsub_cpu_init(&b->cpu, p.width, p.height, p.streams, b->lanes);
        if (st == GLCV_OK) {
            size_t n = (size_t)p.width * (size_t)p.height * (size_t)p.streams * (size_t)b->lanes;
            for (size_t i = 0; i < n; i++)
                b->cpu.th[i] = (uint16_t)b->rule.f;
        }
        b->p.upload = GLCV_BGSUB_UPLOAD_DEFAULT;
    } else {
        st = glcv_bgsub_gl_create(b);
    }
    if (st != GLCV_OK) {
        glcv_bgsub_destroy(&b);
        return st;
    }
    glcv_logf(lg, GLCV_LOG_DEBUG, "bgsub: %d stream(s) of %dx%d, %s, %s, engine %s%s", p.streams, p.width, p.height,
              glcv_bgsub_method_string(p.method), p.gray ? "gray" : "colour", glcv_engine_mode_string(b->p.engine),
              b->packed ? ", packed" : "");
    *out = b;
    return GLCV_OK;
}

static void learn_free(glcv_bgsub *b)
{
    for (int i = 0; i < GLCV_BGSUB_LEARN_KEEP; i++) {
        free(b->learn[i]);
        b->learn[i] = NULL;
    }
    b->learn_kept = 0;
}

void glcv_bgsub_destroy(glcv_bgsub **bgsub)
{
    glcv_bgsub *b = bgsub ? *bgsub : NULL;
    if (!b)
        return;
    glcv_bgsub_gl_destroy(b);
    glcv_bgsub_cpu_free(&b->cpu);
    learn_free(b);
    free(b->mapped_host);
    pthread_mutex_destroy(&b->lock);
    free(b);
    *bgsub = NULL;
}

glcv_status glcv_bgsub_get_params(glcv_bgsub *b, glcv_bgsub_params *out)
{
    GLCV_LOCKED_COPY(b, p, out);
}

/* ---- frame sets ---------------------------------------------------------------------------- */

/* The GL engines work in the context they were made in: without a current one, NO_CONTEXT
 * before any GL call. */
static glcv_status gl_ready(glcv_bgsub *b, const char *what)
{
    if (b->engine && !glcv_gl_context_current())
        return glcv_fail(&b->p.logger, GLCV_ERROR_NO_CONTEXT, "bgsub: %s: no OpenGL context is current", what);
    return GLCV_OK;
}

static glcv_status check_set(glcv_bgsub *b, const glcv_image *frames, int count, const char *what)
{
    const glcv_logger *lg = &b->p.logger;
    if (!frames || count != b->p.streams)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: %s: %d frame(s) given for %d stream(s)", what,
                         frames ? count : 0, b->p.streams);
    for (int i = 0; i < count; i++) {
        if (glcv_image_check(&frames[i]) != GLCV_OK)
            return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: %s: frame %d is not a valid image", what, i);
        if (frames[i].width != b->p.width || frames[i].height != b->p.height)
            return glcv_fail(lg, GLCV_ERROR_SIZE_MISMATCH, "bgsub: %s: frame %d is %dx%d, the object is %dx%d", what,
                             i, frames[i].width, frames[i].height, b->p.width, b->p.height);
    }
    return GLCV_OK;
}

static size_t frame_bytes(const glcv_bgsub *b)
{
    return (size_t)b->p.width * (size_t)b->p.height * (size_t)b->bpp;
}

static size_t lane_bytes(const glcv_bgsub *b)
{
    return (size_t)b->p.width * (size_t)b->p.height * (size_t)b->lanes;
}

/* Writes frame `f` in params.format, tightly packed, at `dst` (rows copied, or converted). */
static void put_raw(const glcv_bgsub *b, const glcv_image *f, uint8_t *dst)
{
    glcv_image raw = {dst, b->p.width, b->p.height, 0, b->p.format};
    glcv_image_convert(f, &raw);
}

/* The set's processing once its frames are in place (ring slot or staging slot). */
static glcv_status run_set(glcv_bgsub *b, int slot, int wait)
{
    glcv_status st;
    if (b->engine) {
        st = glcv_bgsub_gl_run(b, slot, wait);
    } else {
        int cur = (b->ring_cur + 1) % 3;
        int history = b->sets >= 2 ? 2 : (int)b->sets;
        int init = b->rule.method == GLCV_BGSUB_VSAM && !b->initialised;
        glcv_bgsub_cpu_run(&b->cpu, &b->rule, cur, (cur + 2) % 3, (cur + 1) % 3, (int)(b->total % 3), history, init);
        b->ring_cur = cur;
        if (init)
            b->initialised = 1;
        st = GLCV_OK;
    }
    if (st == GLCV_OK) {
        b->sets++;
        b->total++;
    }
    return st;
}

static glcv_status frames_locked(glcv_bgsub *b, const glcv_image *frames, int count, int wait)
{
    glcv_status st = check_set(b, frames, count, "frames");
    if (st == GLCV_OK)
        st = gl_ready(b, "frames");
    if (st != GLCV_OK)
        return st;
    if (b->learning)
        return glcv_fail(&b->p.logger, GLCV_ERROR_STATE, "bgsub: learning is in progress");
    b->mapped = 0; /* a set processed: frames mapped before it are not (GL reuses their staging) */
    if (!b->engine) {
        int cur = (b->ring_cur + 1) % 3;
        for (int i = 0; i < count; i++)
            glcv_bgsub_to_lanes(&frames[i], b->lanes, b->cpu.ring[cur] + lane_bytes(b) * (size_t)i);
        return run_set(b, -1, wait);
    }
    void *ptr = NULL;
    int slot = 0;
    if ((st = glcv_bgsub_gl_stage(b, &ptr, &slot)) != GLCV_OK)
        return st;
    for (int i = 0; i < count; i++)
        put_raw(b, &frames[i], (uint8_t *)ptr + frame_bytes(b) * (size_t)i);
    return run_set(b, slot, wait);
}

glcv_status glcv_bgsub_frames(glcv_bgsub *b, const glcv_image *frames, int count, int wait)
{
    GLCV_LOCKED_GL_CALL(b, "bgsub: frames", frames_locked(b, frames, count, wait));
}

static glcv_status frames_texture_locked(glcv_bgsub *b, unsigned int texture, int wait)
{
    const glcv_logger *lg = &b->p.logger;
    if (!texture)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: frames_texture: texture 0");
    glcv_status st = gl_ready(b, "frames_texture");
    if (st != GLCV_OK)
        return st;
    if (b->learning)
        return glcv_fail(lg, GLCV_ERROR_STATE, "bgsub: learning is in progress");
    if (!b->engine) {
        /* the CPU engine takes them as host frames */
        glcv_image *set = NULL;
        st = glcv_gl_read_frames(texture, b->p.streams, b->p.width, b->p.height, GLCV_PIXEL_RGBA8, &set, lg);
        if (st == GLCV_OK)
            st = frames_locked(b, set, b->p.streams, wait);
        free(set);
        return st;
    }
    /* GL: copied on the GPU to where the passes read a staged set, which they then take as one */
    if ((st = glcv_bgsub_gl_take_texture(b, texture)) != GLCV_OK)
        return st;
    b->mapped = 0;
    return run_set(b, -1, wait);
}

glcv_status glcv_bgsub_frames_texture(glcv_bgsub *b, unsigned int texture, int wait)
{
    GLCV_LOCKED_GL_CALL(b, "bgsub: frames_texture", frames_texture_locked(b, texture, wait));
}

static glcv_status map_locked(glcv_bgsub *b, glcv_image *out, int count)
{
    if (!out || count != b->p.streams)
        return glcv_fail(&b->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: map_frames: %d image(s) for %d stream(s)",
                         out ? count : 0, b->p.streams);
    uint8_t *base = NULL;
    glcv_status ready = gl_ready(b, "map_frames");
    if (ready != GLCV_OK)
        return ready;
    if (b->engine) {
        void *ptr = NULL;
        glcv_status st = glcv_bgsub_gl_stage(b, &ptr, &b->mapped_slot);
        if (st != GLCV_OK)
            return st;
        base = ptr;
    } else {
        if (!b->mapped_host && !(b->mapped_host = malloc(frame_bytes(b) * (size_t)count)))
            return GLCV_ERROR_OUT_OF_MEMORY;
        base = b->mapped_host;
    }
    for (int i = 0; i < count; i++)
        out[i] = (glcv_image){base + frame_bytes(b) * (size_t)i, b->p.width, b->p.height,
                              (size_t)b->p.width * (size_t)b->bpp, b->p.format};
    b->mapped = 1;
    return GLCV_OK;
}

glcv_status glcv_bgsub_map_frames(glcv_bgsub *b, glcv_image *out, int count)
{
    GLCV_LOCKED_GL_CALL(b, "bgsub: map_frames", map_locked(b, out, count));
}

static glcv_status mapped_locked(glcv_bgsub *b, int wait)
{
    if (!b->mapped)
        return glcv_fail(&b->p.logger, GLCV_ERROR_STATE, "bgsub: frames_mapped without map_frames");
    if (b->learning)
        return glcv_fail(&b->p.logger, GLCV_ERROR_STATE, "bgsub: learning is in progress");
    glcv_status ready = gl_ready(b, "frames_mapped");
    if (ready != GLCV_OK)
        return ready;
    b->mapped = 0;
    if (b->engine)
        return run_set(b, b->mapped_slot, wait);
    int cur = (b->ring_cur + 1) % 3;
    for (int i = 0; i < b->p.streams; i++) {
        glcv_image f = {b->mapped_host + frame_bytes(b) * (size_t)i, b->p.width, b->p.height, 0, b->p.format};
        glcv_bgsub_to_lanes(&f, b->lanes, b->cpu.ring[cur] + lane_bytes(b) * (size_t)i);
    }
    return run_set(b, -1, wait);
}

glcv_status glcv_bgsub_frames_mapped(glcv_bgsub *b, int wait)
{
    GLCV_LOCKED_GL_CALL(b, "bgsub: frames_mapped", mapped_locked(b, wait));
}

/* ---- learning ------------------------------------------------------------------------------- */

static glcv_status learn_begin_locked(glcv_bgsub *b)
{
    learn_free(b);
    b->learning = 1;
    b->learn_step = 1;
    b->learn_seen = 0;
    return GLCV_OK;
}

glcv_status glcv_bgsub_learn_begin(glcv_bgsub *b)
{
    GLCV_LOCKED_GL_CALL(b, "bgsub: learn_begin", learn_begin_locked(b));
}

static glcv_status learn_add_locked(glcv_bgsub *b, const glcv_image *frames, int count)
{
    if (!b->learning)
        return glcv_fail(&b->p.logger, GLCV_ERROR_STATE, "bgsub: learn_add without learn_begin");
    glcv_status st = check_set(b, frames, count, "learn_add");
    if (st != GLCV_OK)
        return st;
    int keep = b->learn_seen % b->learn_step == 0;
    b->learn_seen++;
    if (!keep)
        return GLCV_OK;
    if (b->learn_kept == GLCV_BGSUB_LEARN_KEEP) {
        /* Full: keep every other set and take every other one from now on (evenly spaced). */
        int k = 0;
        for (int i = 0; i < GLCV_BGSUB_LEARN_KEEP; i++) {
            if (i % 2 == 0) {
                b->learn[k++] = b->learn[i];
            } else {
                free(b->learn[i]);
            }
            if (i >= k)
                b->learn[i] = NULL;
        }
        b->learn_kept = k;
        b->learn_step *= 2;
        if ((b->learn_seen - 1) % b->learn_step != 0)
            return GLCV_OK;
    }
    uint8_t *set = malloc(lane_bytes(b) * (size_t)count);
    if (!set)
        return glcv_fail(&b->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "bgsub: no memory for a learned set");
    for (int i = 0; i < count; i++)
        glcv_bgsub_to_lanes(&frames[i], b->lanes, set + lane_bytes(b) * (size_t)i);
    b->learn[b->learn_kept++] = set;
    return GLCV_OK;
}

glcv_status glcv_bgsub_learn_add(glcv_bgsub *b, const glcv_image *frames, int count)
{
    GLCV_LOCKED_GL_CALL(b, "bgsub: learn_add", learn_add_locked(b, frames, count));
}

static glcv_status learn_add_texture_locked(glcv_bgsub *b, unsigned int texture)
{
    if (!b->learning)
        return glcv_fail(&b->p.logger, GLCV_ERROR_STATE, "bgsub: learn_add_texture without learn_begin");
    if (!texture)
        return glcv_fail(&b->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: learn_add_texture: texture 0");
    /* Learning keeps its frames in host memory, whatever the engine. */
    glcv_image *set = NULL;
    glcv_status st =
        glcv_gl_read_frames(texture, b->p.streams, b->p.width, b->p.height, GLCV_PIXEL_RGBA8, &set, &b->p.logger);
    if (st == GLCV_OK)
        st = learn_add_locked(b, set, b->p.streams);
    free(set);
    return st;
}

glcv_status glcv_bgsub_learn_add_texture(glcv_bgsub *b, unsigned int texture)
{
    GLCV_LOCKED_GL_CALL(b, "bgsub: learn_add_texture", learn_add_texture_locked(b, texture));
}

typedef struct learn_source {
    glcv_bgsub *b;
    int stream;
} learn_source;

/* One stream of a kept set, as a GRAY8 image of width * lanes bytes per row. */
static glcv_status learned_frame(void *user, int index, glcv_image *frame)
{
    learn_source *s = user;
    glcv_bgsub *b = s->b;
    *frame = (glcv_image){b->learn[index] + lane_bytes(b) * (size_t)s->stream, b->p.width * b->lanes, b->p.height,
                          0, GLCV_PIXEL_GRAY8};
    return GLCV_OK;
}

typedef struct learn_job {
    glcv_bgsub *b;
    uint16_t *bg, *th;
    atomic_int failed;
    glcv_status st; /* the first failure's, written by the thread that set `failed` */
} learn_job;

/* B: the median of the kept sets; T: c times the median |I - B| over them, at least the floor;
 * for streams [begin, end). */
static void learn_streams(void *user, int begin, int end)
{
    learn_job *job = user;
    glcv_bgsub *b = job->b;
    uint16_t *bg = job->bg, *th = job->th;
    size_t n = lane_bytes(b);
    uint8_t *median = malloc(n);
    glcv_status st = median ? GLCV_OK : GLCV_ERROR_OUT_OF_MEMORY;
    for (int s = begin; s < end && st == GLCV_OK && !atomic_load(&job->failed); s++) {
        learn_source src = {b, s};
        glcv_image out = {median, b->p.width * b->lanes, b->p.height, 0, GLCV_PIXEL_GRAY8};
        st = glcv_image_median(b->learn_kept, learned_frame, &src, &b->p.logger, &out);
        if (st != GLCV_OK)
            break;
        uint16_t *sb = bg + n * (size_t)s, *stt = th + n * (size_t)s;
        for (size_t i = 0; i < n; i++) {
            /* the lower median of |I - B| over the kept sets (insertion sort of at most 16) */
            uint32_t d[GLCV_BGSUB_LEARN_KEEP];
            int kept = b->learn_kept;
            for (int k = 0; k < kept; k++) {
                int v = (int)b->learn[k][n * (size_t)s + i] - (int)median[i];
                uint32_t x = (uint32_t)(v < 0 ? -v : v) << 8;
                int j = k;
                for (; j > 0 && d[j - 1] > x; j--)
                    d[j] = d[j - 1];
                d[j] = x;
            }
            uint32_t t = (b->rule.c * d[(kept - 1) / 2] + 128u) >> 8;
            if (t > 65280u)
                t = 65280u;
            sb[i] = (uint16_t)(median[i] << 8);
            stt[i] = (uint16_t)(t > b->rule.f ? t : b->rule.f);
        }
    }
    free(median);
    if (st != GLCV_OK && atomic_exchange(&job->failed, 1) == 0)
        job->st = st;
}

/* Every stream's B and T, the streams on several threads (each stream's work is its own). */
static glcv_status learn_state(glcv_bgsub *b, uint16_t *bg, uint16_t *th)
{
    learn_job job = {.b = b, .bg = bg, .th = th, .st = GLCV_OK};
    atomic_init(&job.failed, 0);
    glcv_parallel_for(b->p.streams, 0, learn_streams, &job);
    return atomic_load(&job.failed) ? job.st : GLCV_OK;
}

/* Ends learning whatever happens (see glcv_bgsub_learn_end): B and T are computed aside and
 * replace the state only when all went well. */
static glcv_status learn_end_locked(glcv_bgsub *b)
{
    if (!b->learning)
        return glcv_fail(&b->p.logger, GLCV_ERROR_STATE, "bgsub: learn_end without learn_begin");
    glcv_status st = gl_ready(b, "learn_end");
    if (st != GLCV_OK)
        return st; /* nothing done: learning goes on */
    if (b->learn_kept == 0) {
        b->learning = 0;
        return glcv_fail(&b->p.logger, GLCV_ERROR_STATE,
                         "bgsub: learn_end after no frame set (learning ended; B and T are unchanged)");
    }
    size_t n = lane_bytes(b) * (size_t)b->p.streams;
    uint16_t *bg = malloc(n * sizeof *bg), *th = malloc(n * sizeof *th);
    st = bg && th ? learn_state(b, bg, th)
                  : glcv_fail(&b->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "bgsub: no memory to learn from");
    if (st == GLCV_OK && !b->engine) {
        memcpy(b->cpu.bg, bg, n * sizeof *bg);
        memcpy(b->cpu.th, th, n * sizeof *th);
        memset(b->cpu.count, 0, (size_t)b->p.width * (size_t)b->p.height * (size_t)b->p.streams);
    } else if (st == GLCV_OK) {
        st = glcv_bgsub_gl_set_state(b, bg, th);
    }
    free(bg);
    free(th);
    learn_free(b);
    b->learning = 0;
    if (st != GLCV_OK)
        return st;
    b->initialised = 1;
    b->sets = 0;
    return GLCV_OK;
}

glcv_status glcv_bgsub_learn_end(glcv_bgsub *b)
{
    GLCV_LOCKED_GL_CALL(b, "bgsub: learn_end", learn_end_locked(b));
}

/* ---- outputs -------------------------------------------------------------------------------- */

/* The masks of the set `age` sets before the newest: streams * width * height bytes. */
static glcv_status masks_of(glcv_bgsub *b, int age, const uint8_t **masks)
{
    const glcv_logger *lg = &b->p.logger;
    if (age < 0 || age > 2)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: masks: age must be 0, 1 or 2 (got %d)", age);
    long set = b->total - 1 - age;
    if (set < 0)
        return glcv_fail(lg, GLCV_ERROR_STATE, "bgsub: masks: no frame set %d before the newest yet", age);
    /* Every engine says so, although a GL engine may still hold the set's masks (read at age 0) */
    if (age > 0 && !b->p.download)
        return glcv_fail(lg, GLCV_ERROR_STATE, "bgsub: masks: age %d needs params.download (without it only the "
                         "newest set's masks are kept)", age);
    glcv_status st = gl_ready(b, "masks");
    if (st != GLCV_OK)
        return st;
    if (b->engine)
        return glcv_bgsub_gl_masks(b, set, masks);
    *masks = b->cpu.masks[set % 3];
    return GLCV_OK;
}

static glcv_status map_masks_locked(glcv_bgsub *b, int age, glcv_image *out, int count)
{
    if (!out || count != b->p.streams)
        return glcv_fail(&b->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: map_masks: %d image(s) for %d stream(s)",
                         out ? count : 0, b->p.streams);
    const uint8_t *m = NULL;
    glcv_status st = masks_of(b, age, &m);
    if (st != GLCV_OK)
        return st;
    size_t px = (size_t)b->p.width * (size_t)b->p.height;
    for (int i = 0; i < count; i++)
        out[i] = (glcv_image){(uint8_t *)m + px * (size_t)i, b->p.width, b->p.height, (size_t)b->p.width,
                              GLCV_PIXEL_GRAY8};
    return GLCV_OK;
}

glcv_status glcv_bgsub_map_masks(glcv_bgsub *b, int age, glcv_image *out, int count)
{
    GLCV_LOCKED_GL_CALL(b, "bgsub: map_masks", map_masks_locked(b, age, out, count));
}

static glcv_status read_masks_locked(glcv_bgsub *b, int age, glcv_image *out, int count)
{
    const glcv_logger *lg = &b->p.logger;
    if (!out || count != b->p.streams)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: read_masks: %d image(s) for %d stream(s)",
                         out ? count : 0, b->p.streams);
    for (int i = 0; i < count; i++) {
        if (glcv_image_check(&out[i]) != GLCV_OK || out[i].format != GLCV_PIXEL_GRAY8)
            return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: read_masks: image %d is not a GRAY8 image", i);
        if (out[i].width != b->p.width || out[i].height != b->p.height)
            return glcv_fail(lg, GLCV_ERROR_SIZE_MISMATCH, "bgsub: read_masks: image %d is %dx%d, the object is %dx%d",
                             i, out[i].width, out[i].height, b->p.width, b->p.height);
    }
    const uint8_t *src = NULL;
    glcv_status st = masks_of(b, age, &src);
    if (st != GLCV_OK)
        return st;
    size_t px = (size_t)b->p.width * (size_t)b->p.height;
    for (int s = 0; s < count; s++) {
        glcv_image m = {(uint8_t *)src + px * (size_t)s, b->p.width, b->p.height, 0, GLCV_PIXEL_GRAY8};
        glcv_image_convert(&m, &out[s]);
    }
    return GLCV_OK;
}

glcv_status glcv_bgsub_read_masks(glcv_bgsub *b, int age, glcv_image *out, int count)
{
    GLCV_LOCKED_GL_CALL(b, "bgsub: read_masks", read_masks_locked(b, age, out, count));
}

static glcv_status read_state_locked(glcv_bgsub *b, int stream, uint16_t *bg, uint16_t *th)
{
    if (stream < 0 || stream >= b->p.streams)
        return glcv_fail(&b->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "bgsub: read_state: stream %d of %d", stream,
                         b->p.streams);
    if (!b->initialised && b->total == 0)
        return glcv_fail(&b->p.logger, GLCV_ERROR_STATE, "bgsub: read_state: no frame set yet");
    glcv_status st = gl_ready(b, "read_state");
    if (st != GLCV_OK)
        return st;
    if (b->engine)
        return glcv_bgsub_gl_read_state(b, stream, bg, th);
    size_t n = lane_bytes(b);
    if (bg)
        memcpy(bg, b->cpu.bg + n * (size_t)stream, n * sizeof *bg);
    if (th)
        memcpy(th, b->cpu.th + n * (size_t)stream, n * sizeof *th);
    return GLCV_OK;
}

glcv_status glcv_bgsub_read_state(glcv_bgsub *b, int stream, uint16_t *bg, uint16_t *th)
{
    GLCV_LOCKED_GL_CALL(b, "bgsub: read_state", read_state_locked(b, stream, bg, th));
}

unsigned int glcv_bgsub_mask_texture(glcv_bgsub *b)
{
    if (!b)
        return 0;
    pthread_mutex_lock(&b->lock);
    unsigned int id = 0;
    /* fused: the newest set's masks are made when asked for, with its context current */
    if (b->engine && b->total > 0 && glcv_engine_check_context(b->engine, "bgsub: mask_texture") == GLCV_OK &&
        (!b->fused || glcv_bgsub_gl_vote_newest(b) == GLCV_OK))
        id = b->mask[(b->total - 1) % 2].id;
    pthread_mutex_unlock(&b->lock);
    return id;
}

static glcv_status reset_locked(glcv_bgsub *b)
{
    b->sets = 0;
    return GLCV_OK;
}

glcv_status glcv_bgsub_reset(glcv_bgsub *b)
{
    GLCV_LOCKED_GL_CALL(b, "bgsub: reset", reset_locked(b));
}

static glcv_status timings_locked(glcv_bgsub *b, glcv_timing *out, int capacity, int *count, int wait)
{
    glcv_status st = glcv_check_timings_args(&b->p.logger, "bgsub", out, capacity, count);
    if (st == GLCV_OK)
        st = gl_ready(b, "timings");
    if (st != GLCV_OK)
        return st;
    *count = b->engine ? glcv_engine_timings(b->engine, out, capacity, wait) : 0;
    return GLCV_OK;
}

glcv_status glcv_bgsub_timings(glcv_bgsub *b, glcv_timing *out, int capacity, int *count, int wait)
{
    GLCV_LOCKED_GL_CALL(b, "bgsub: timings", timings_locked(b, out, capacity, count, wait));
}
