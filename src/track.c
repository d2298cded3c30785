/* The tracker object: parameters, objects and their models, validation, and the dispatch of each
 * frame to its method and engine - CAMSHIFT on CUDA (track_cuda.c, cuda/track.cu) or on the CPU
 * (track_cpu.c), DCF on CUDA (track_cuda.c, cuda/track_dcf.cu) or on the CPU (track_dcf.c, objects
 * on the library's threads); results with cv::CamShift's rotated boxes or DCF's boxes. Histogram
 * files: track_hist.c.
 *
 * Why one file of about 1,400 lines: every public call locks the object and reads or changes the
 * same private fields - the object slots, the list of the set being tracked and its streams, the
 * results still pending on the GPU (on one device or spread over several) - and the frame paths
 * (host frames and sets, textures and texture arrays read back for the CPU engine or handed to
 * CUDA, for either method) must keep them consistent with each other (a refused set changes none
 * of them). Split, those fields would move into the private header for every file to change. The
 * arithmetic both engines share is track_math.h (CAMSHIFT) and track_dcf_math.h (DCF). */
#include "track_internal.h"

#include "core_internal.h"
#include "cuda_internal.h"
#include "gl.h"

#include <glcv/context.h>
#include <glcv/image.h>

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_OBJECTS 64
#define DEFAULT_HUE_BINS 60
#define DEFAULT_EPSILON 1.0f
#define DEFAULT_MAX_ITERATIONS 10
#define DEFAULT_ASPECT 1.2f
#define DEFAULT_MIN_MASS 0.1f
#define DEFAULT_MAX_DISTANCE 0.7f
#define DEFAULT_CRITERIA (GLCV_TRACK_LOST_MASS | GLCV_TRACK_LOST_HISTOGRAM | GLCV_TRACK_LOST_PEAK)
#define DEFAULT_RECOVERY_INTERVAL 4
#define DEFAULT_MIN_WINDOW_AREA 20
#define DEFAULT_RESET_WIDTH 200
#define DEFAULT_S_MIN 30
#define DEFAULT_V_MIN 10
#define DEFAULT_V_MAX 255
#define MAX_FRAME_SIZE 16384

typedef struct track_slot {
    int used;
    glcv_tm_object state;
    float *value;       /* nbins: the model */
    uint8_t *lut;       /* nbins + 1 */
    double *sqrt_model; /* nbins */
    double model_sum;
    glcv_track_dcf *dcf; /* DCF: the object's filters (kept for the slot's next object) */
} track_slot;

struct glcv_track {
    pthread_mutex_t lock;
    glcv_track_params p; /* resolved; p.engine is the engine in use */
    glcv_logger logger;
    int s_min, v_min, v_max;
    int nbins;
    glcv_tm_tables tables;
    track_slot *slots;

    /* the last frame (set) */
    int *ids;                 /* ids tracked in the last frame */
    int *id_streams;          /* their streams */
    int n_ids;
    int *next_ids, *next_streams; /* CUDA engine: the list of a set being queued (swapped in once it is) */
    glcv_tm_result *results;  /* in ids order */
    double *peaks;            /* DCF: the results' peak-to-sidelobe ratios */
    int have_frame;           /* a frame was tracked */
    int results_pending;      /* CUDA: results not fetched yet */

    /* CPU engine */
    uint16_t *bins;      /* streams bin images, one after another */
    uint32_t *counts;
    /* texture inputs read back: read_frames frames of 3 bytes a pixel each (the masks' first
     * width * height bytes of each frame end up holding their 0/1 decisions) */
    uint8_t *rgb, *mask;
    int read_frames;
    glcv_image *set_images; /* 2 * streams: frames and masks read back, as images */

    /* DCF: working memory of the threads tracking objects, kept between frames */
    pthread_mutex_t scratch_lock;
    glcv_track_dcf_scratch **scratch, **idle; /* every one made; those not in use */
    int n_scratch, n_idle;

    glcv_track_cuda *cuda; /* the CUDA engine (its first device's), NULL with the CPU engine */
    int cuda_with_gl; /* ... on the GL context's device, alone: textures go through the bridge */
    /* Several devices (params.cuda_devices): an engine per device, object id on engine
     * id % n_engines (engines[0] == cuda); a set's objects split into per-engine lists */
    glcv_track_cuda *engines[GLCV_TRACK_MAX_DEVICES];
    int n_engines;
    int *part_ids, *part_pos;   /* max_objects each: per engine, its ids and their places in the list */
    glcv_tm_result *part_results;
    glcv_tm_object *part_states;
};

/* ---- parameters ------------------------------------------------------------------------------- */

static glcv_status check_range(const glcv_logger *lg, const char *name, double v, double lo, double hi)
{
    return glcv_check_range(lg, "track", name, v, lo, hi);
}

static glcv_status resolve_params(const glcv_track_params *in, glcv_track_params *p)
{
    *p = *in;
    const glcv_logger *lg = &in->logger;
    glcv_status st = glcv_check_size(lg, "track", p->width, p->height, MAX_FRAME_SIZE);
    if (st != GLCV_OK)
        return st;
    GLCV_DEFAULT(p->streams, 1);
    GLCV_DEFAULT(p->max_objects, DEFAULT_MAX_OBJECTS);
    GLCV_DEFAULT(p->method, GLCV_TRACK_METHOD_DCF);
    if (p->method != GLCV_TRACK_METHOD_CAMSHIFT && p->method != GLCV_TRACK_METHOD_DCF)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "track: unknown method %d", (int)p->method);
    GLCV_DEFAULT(p->cuda_devices, 1);
    if (p->cuda_devices < -1 || p->cuda_devices > GLCV_TRACK_MAX_DEVICES)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "track: cuda_devices %d must be -1 or 1..%d",
                         p->cuda_devices, GLCV_TRACK_MAX_DEVICES);
    GLCV_DEFAULT(p->hue_bins, DEFAULT_HUE_BINS);
    GLCV_DEFAULT(p->sat_bins, 1);
    GLCV_DEFAULT(p->epsilon, DEFAULT_EPSILON);
    GLCV_DEFAULT(p->max_iterations, DEFAULT_MAX_ITERATIONS);
    GLCV_DEFAULT(p->window, GLCV_TRACK_WINDOW_OPENCV);
    GLCV_DEFAULT(p->aspect, DEFAULT_ASPECT);
    GLCV_DEFAULT(p->min_mass, DEFAULT_MIN_MASS);
    GLCV_DEFAULT(p->max_distance, DEFAULT_MAX_DISTANCE);
    GLCV_DEFAULT(p->lost_criteria, DEFAULT_CRITERIA);
    GLCV_DEFAULT(p->recovery, GLCV_TRACK_RECOVERY_FRAME);
    GLCV_DEFAULT(p->recovery_interval, DEFAULT_RECOVERY_INTERVAL);
    GLCV_DEFAULT(p->min_window_area, DEFAULT_MIN_WINDOW_AREA);
    GLCV_DEFAULT(p->reset_width, DEFAULT_RESET_WIDTH);

    if ((st = check_range(lg, "streams", p->streams, 1, GLCV_TRACK_MAX_STREAMS)) ||
        (st = check_range(lg, "max_objects", p->max_objects, 1, GLCV_TRACK_MAX_OBJECTS)) ||
        (st = check_range(lg, "hue_bins", p->hue_bins, 1, 180)) ||
        (st = check_range(lg, "sat_bins", p->sat_bins, 1, 256)) ||
        (st = check_range(lg, "epsilon", p->epsilon, 0.001, 1000)) ||
        (st = check_range(lg, "max_iterations", p->max_iterations, 1, 1000)) ||
        (st = check_range(lg, "aspect", p->aspect, 0.01, 100)) ||
        (st = check_range(lg, "min_mass", p->min_mass, 0, 1)) ||
        (st = check_range(lg, "max_distance", p->max_distance, 0, 1)) ||
        (st = check_range(lg, "recovery_interval", p->recovery_interval, 1, 1e6)) ||
        (st = check_range(lg, "min_window_area", p->min_window_area, -1, GLCV_TRACK_MAX_MIN_WINDOW_AREA)) ||
        (st = check_range(lg, "reset_width", p->reset_width, 1, 1e6)) ||
        (st = check_range(lg, "cuda_device", p->cuda_device, 0, 1024)))
        return st;
    if (p->hue_bins * p->sat_bins > GLCV_TRACK_MAX_BINS)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "track: %d x %d bins: at most %d in all", p->hue_bins,
                         p->sat_bins, GLCV_TRACK_MAX_BINS);
    if (p->lost_criteria & ~(unsigned)(GLCV_TRACK_LOST_ITERATIONS | GLCV_TRACK_LOST_MASS | GLCV_TRACK_LOST_HISTOGRAM |
                                       GLCV_TRACK_LOST_PEAK))
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "track: unknown lost_criteria bits 0x%x",
                         p->lost_criteria);
    if (p->window < GLCV_TRACK_WINDOW_OPENCV || p->window > GLCV_TRACK_WINDOW_ADAPTIVE)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "track: unknown window mode %d", (int)p->window);
    if (p->recovery < GLCV_TRACK_RECOVERY_FRAME || p->recovery > GLCV_TRACK_RECOVERY_NONE)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "track: unknown recovery mode %d", (int)p->recovery);
    return GLCV_OK;
}

static glcv_tm_config make_config(const glcv_track *t)
{
    glcv_tm_config c;
    memset(&c, 0, sizeof c);
    c.width = t->p.width;
    c.height = t->p.height;
    c.nbins = t->nbins;
    c.sat_bins = t->p.sat_bins;
    c.s_min = t->s_min;
    c.v_min = t->v_min;
    c.v_max = t->v_max;
    c.eps2 = (int)lrint((double)t->p.epsilon * (double)t->p.epsilon);
    c.max_iterations = t->p.max_iterations;
    c.window_mode = t->p.window == GLCV_TRACK_WINDOW_PAPER      ? GLCV_TM_WINDOW_PAPER
                    : t->p.window == GLCV_TRACK_WINDOW_ADAPTIVE ? GLCV_TM_WINDOW_ADAPTIVE
                                                                : GLCV_TM_WINDOW_OPENCV;
    c.aspect = t->p.aspect;
    c.min_mass = t->p.min_mass;
    c.max_distance = t->p.max_distance;
    c.criteria = t->p.lost_criteria;
    c.measure_distance = (t->p.lost_criteria & GLCV_TRACK_LOST_HISTOGRAM) != 0;
    c.recovery = t->p.recovery == GLCV_TRACK_RECOVERY_NONE ? GLCV_TM_RECOVERY_NONE : GLCV_TM_RECOVERY_FRAME;
    c.recovery_interval = t->p.recovery_interval;
    c.min_window_area = t->p.min_window_area;
    c.reset_width = t->p.reset_width;
    return c;
}

/* ---- create / destroy ------------------------------------------------------------------------- */

glcv_status glcv_track_create(const glcv_track_params *params, glcv_track **out)
{
    GLCV_CREATE_BEGIN(params, out);
    glcv_track_params p;
    glcv_status st = resolve_params(params, &p);
    if (st != GLCV_OK)
        return st;
    const glcv_logger *lg = &params->logger;

    glcv_track *t = calloc(1, sizeof *t);
    if (!t)
        return GLCV_ERROR_OUT_OF_MEMORY;
    pthread_mutex_init(&t->lock, NULL);
    pthread_mutex_init(&t->scratch_lock, NULL);
    t->p = p;
    t->logger = p.logger;
    t->s_min = DEFAULT_S_MIN;
    t->v_min = DEFAULT_V_MIN;
    t->v_max = DEFAULT_V_MAX;
    t->nbins = p.hue_bins * p.sat_bins;
    glcv_track_cpu_tables(&t->tables, p.hue_bins, p.sat_bins);

    size_t n_slots = (size_t)p.max_objects, nb = (size_t)t->nbins;
    t->slots = calloc(n_slots, sizeof *t->slots);
    t->ids = calloc(n_slots, sizeof *t->ids);
    t->id_streams = calloc(n_slots, sizeof *t->id_streams);
    t->next_ids = calloc(n_slots, sizeof *t->next_ids);
    t->next_streams = calloc(n_slots, sizeof *t->next_streams);
    t->results = calloc(n_slots, sizeof *t->results);
    t->peaks = calloc(n_slots, sizeof *t->peaks);
    t->counts = calloc(nb, sizeof *t->counts);
    t->set_images = calloc(2 * (size_t)p.streams, sizeof *t->set_images);
    if (!t->slots || !t->ids || !t->id_streams || !t->next_ids || !t->next_streams || !t->results || !t->peaks ||
        !t->counts || !t->set_images) {
        st = GLCV_ERROR_OUT_OF_MEMORY;
        goto fail;
    }
    for (size_t i = 0; i < n_slots; i++) {
        track_slot *s = &t->slots[i];
        s->value = calloc(nb, sizeof *s->value);
        s->lut = calloc(nb + 1, 1);
        s->sqrt_model = calloc(nb, sizeof *s->sqrt_model);
        if (!s->value || !s->lut || !s->sqrt_model) {
            st = GLCV_ERROR_OUT_OF_MEMORY;
            goto fail;
        }
    }

    glcv_cuda_device device;
    st = glcv_cuda_choose("track", p.engine, p.cuda_device, lg, &t->p.engine, &device);
    if (st != GLCV_OK)
        goto fail;
    if (t->p.engine == GLCV_ENGINE_CUDA) {
        glcv_tm_config c = make_config(t);
        int n = p.cuda_devices < 0 ? device.count - device.device : p.cuda_devices;
        if (n < 1 || device.device + n > device.count) {
            st = glcv_fail(lg, GLCV_ERROR_UNSUPPORTED, "track: %d CUDA device%s from device %d asked for, %d present",
                           n, n == 1 ? "" : "s", device.device, device.count);
            goto fail;
        }
        for (int e = 0; e < n; e++) {
            st = glcv_track_cuda_create(device.device + e, &c, &t->tables, p.max_objects, p.streams,
                                        p.method == GLCV_TRACK_METHOD_DCF, lg,
                                        &t->engines[e]);
            if (st != GLCV_OK)
                goto fail;
            t->n_engines = e + 1;
        }
        t->cuda = t->engines[0];
        t->p.cuda_device = device.device;
        t->p.cuda_devices = n;
        t->cuda_with_gl = device.with_gl && n == 1;
        if (n > 1) {
            size_t m = (size_t)p.max_objects;
            t->part_ids = malloc(m * sizeof *t->part_ids);
            t->part_pos = malloc(m * sizeof *t->part_pos);
            t->part_results = malloc(m * sizeof *t->part_results);
            t->part_states = malloc(m * sizeof *t->part_states);
            if (!t->part_ids || !t->part_pos || !t->part_results || !t->part_states) {
                st = GLCV_ERROR_OUT_OF_MEMORY;
                goto fail;
            }
        }
    } else {
        t->p.cuda_devices = 0; /* the CPU engine uses none */
    }
    if (t->p.engine == GLCV_ENGINE_CPU && p.method == GLCV_TRACK_METHOD_CAMSHIFT) {
        size_t n = (size_t)p.width * (size_t)p.height * (size_t)p.streams;
        t->bins = malloc(n * sizeof *t->bins);
        if (!t->bins) {
            st = GLCV_ERROR_OUT_OF_MEMORY;
            goto fail;
        }
    }
    glcv_logf(lg, GLCV_LOG_DEBUG, "track: %dx%d, %d stream%s, %d x %d bins, up to %d objects, engine %s", p.width,
              p.height, p.streams, p.streams == 1 ? "" : "s", p.hue_bins, p.sat_bins, p.max_objects,
              glcv_engine_mode_string(t->p.engine));
    *out = t;
    return GLCV_OK;
fail:
    glcv_track_destroy(&t);
    return st;
}

void glcv_track_destroy(glcv_track **track)
{
    if (!track || !*track)
        return;
    glcv_track *t = *track;
    for (int e = 0; e < t->n_engines; e++)
        glcv_track_cuda_destroy(&t->engines[e]);
    t->cuda = NULL;
    free(t->part_ids);
    free(t->part_pos);
    free(t->part_results);
    free(t->part_states);
    if (t->slots) {
        for (int i = 0; i < t->p.max_objects; i++) {
            free(t->slots[i].value);
            free(t->slots[i].lut);
            free(t->slots[i].sqrt_model);
            glcv_track_dcf_destroy(&t->slots[i].dcf);
        }
    }
    free(t->slots);
    free(t->ids);
    free(t->id_streams);
    free(t->next_ids);
    free(t->next_streams);
    free(t->results);
    free(t->peaks);
    free(t->counts);
    free(t->bins);
    free(t->rgb);
    free(t->mask);
    free(t->set_images);
    for (int i = 0; i < t->n_scratch; i++)
        glcv_track_dcf_scratch_destroy(t->scratch[i]);
    free(t->scratch);
    free(t->idle);
    pthread_mutex_destroy(&t->scratch_lock);
    pthread_mutex_destroy(&t->lock);
    free(t);
    *track = NULL;
}

glcv_status glcv_track_get_params(glcv_track *t, glcv_track_params *out)
{
    GLCV_LOCKED_COPY(t, p, out);
}

glcv_status glcv_track_set_limits(glcv_track *t, int s_min, int v_min, int v_max)
{
    if (!t)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (s_min < 0 || s_min > 255 || v_min < 0 || v_min > 255 || v_max < 0 || v_max > 255 || v_min > v_max)
        return glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT,
                         "track: limits s_min %d, v_min %d, v_max %d: each 0..255, v_min <= v_max", s_min, v_min,
                         v_max);
    pthread_mutex_lock(&t->lock);
    t->s_min = s_min;
    t->v_min = v_min;
    t->v_max = v_max;
    pthread_mutex_unlock(&t->lock);
    return GLCV_OK;
}

/* ---- input checks ----------------------------------------------------------------------------- */

/* Checks a frame (and mask) of the tracker's size; `stream` >= 0 names its stream in messages. */
static glcv_status check_frame_of(const glcv_track *t, int stream, const glcv_image *frame, const glcv_image *mask)
{
    char who[48] = "track";
    if (stream >= 0)
        snprintf(who, sizeof who, "track: stream %d", stream);
    if (!frame || glcv_image_check(frame) != GLCV_OK || frame->format == GLCV_PIXEL_GRAY8)
        return glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT,
                         "%s: the frame must be an RGB8, RGBA8, BGR8 or BGRA8 image", who);
    if (frame->width != t->p.width || frame->height != t->p.height)
        return glcv_fail(&t->logger, GLCV_ERROR_SIZE_MISMATCH, "%s: the frame is %dx%d, the tracker %dx%d", who,
                         frame->width, frame->height, t->p.width, t->p.height);
    if (mask) {
        if (glcv_image_check(mask) != GLCV_OK || mask->format != GLCV_PIXEL_GRAY8)
            return glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: the mask must be a GRAY8 image", who);
        if (mask->width != t->p.width || mask->height != t->p.height)
            return glcv_fail(&t->logger, GLCV_ERROR_SIZE_MISMATCH, "%s: the mask is %dx%d, the tracker %dx%d", who,
                             mask->width, mask->height, t->p.width, t->p.height);
    }
    return GLCV_OK;
}

static glcv_status check_frame(const glcv_track *t, const glcv_image *frame, const glcv_image *mask)
{
    return check_frame_of(t, -1, frame, mask);
}

/* Checks a frame set: one frame (and mask) per stream, all of one pixel format. */
static glcv_status check_frames(const glcv_track *t, const glcv_image *frames, const glcv_image *masks, int count)
{
    if (!frames)
        return glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT, "track: no frames (NULL)");
    if (count != t->p.streams)
        return glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT,
                         "track: %d frames given, the tracker has %d stream%s (one frame each)", count, t->p.streams,
                         t->p.streams == 1 ? "" : "s");
    for (int i = 0; i < count; i++) {
        glcv_status st = check_frame_of(t, t->p.streams > 1 ? i : -1, &frames[i], masks ? &masks[i] : NULL);
        if (st != GLCV_OK)
            return st;
        if (frames[i].format != frames[0].format)
            return glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT,
                             "track: stream %d's frame has pixel format %d, stream 0's %d: the frames of a set share "
                             "one format",
                             i, (int)frames[i].format, (int)frames[0].format);
    }
    return GLCV_OK;
}

/* INVALID_ARGUMENT for a one-frame call (`call`) on a tracker of several streams. */
static glcv_status check_one_stream(const glcv_track *t, const char *call)
{
    if (t->p.streams == 1)
        return GLCV_OK;
    return glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT,
                     "track: %s takes one frame, and the tracker has %d streams: give their frames as a set with "
                     "glcv_track_frames or glcv_track_frames_texture",
                     call, t->p.streams);
}

static glcv_status need_context(const glcv_track *t)
{
    if (glcv_gl_context_current())
        return GLCV_OK;
    return glcv_fail(&t->logger, GLCV_ERROR_NO_CONTEXT, "track: texture inputs need a current GL context");
}

/* Makes the read-back buffers hold `frames` frames (t->rgb, t->mask). */
static glcv_status read_buffers(glcv_track *t, int frames)
{
    if (t->read_frames >= frames)
        return GLCV_OK;
    size_t bytes = (size_t)t->p.width * (size_t)t->p.height * 3 * (size_t)frames;
    free(t->rgb);
    free(t->mask);
    t->rgb = malloc(bytes);
    t->mask = malloc(bytes);
    t->read_frames = t->rgb && t->mask ? frames : 0;
    if (!t->read_frames) {
        free(t->rgb);
        free(t->mask);
        t->rgb = t->mask = NULL;
        return GLCV_ERROR_OUT_OF_MEMORY;
    }
    return GLCV_OK;
}

/* Reads a texture input into read-back frame `index` (read_buffers made room): the frame as RGB8
 * into t->rgb, the mask's decisions (0/1: red > 0.5) into the first width * height bytes of
 * t->mask's frame. layer < 0: GL_TEXTURE_2D textures; else that layer of the array textures. */
static glcv_status read_input(glcv_track *t, unsigned int frame, unsigned int mask, int layer, int index)
{
    size_t n = (size_t)t->p.width * (size_t)t->p.height;
    uint8_t *rgb = t->rgb + (size_t)index * n * 3, *m = t->mask + (size_t)index * n * 3;
    int w = t->p.width, h = t->p.height, streams = t->p.streams;
    glcv_status st = layer < 0 ? glcv_gl_read_rgb(frame, w, h, rgb, &t->logger)
                               : glcv_gl_read_rgb_layer(frame, streams, layer, w, h, rgb, &t->logger);
    if (st != GLCV_OK || !mask)
        return st;
    st = layer < 0 ? glcv_gl_read_rgb(mask, w, h, m, &t->logger)
                   : glcv_gl_read_rgb_layer(mask, streams, layer, w, h, m, &t->logger);
    if (st != GLCV_OK)
        return st;
    for (size_t i = 0; i < n; i++) /* red > 0.5 */
        m[i] = m[3 * i] >= 128;
    return GLCV_OK;
}

/* Reads a GL_TEXTURE_2D frame texture (and mask) into read-back frame 0. */
static glcv_status read_textures(glcv_track *t, unsigned int frame, unsigned int mask)
{
    glcv_status st = need_context(t);
    if (st == GLCV_OK)
        st = read_buffers(t, 1);
    return st == GLCV_OK ? read_input(t, frame, mask, -1, 0) : st;
}

/* Read-back frame `index` as an RGB8 image, and its mask as a GRAY8 one. */
static glcv_image read_frame(const glcv_track *t, int index)
{
    glcv_image img = {t->rgb + (size_t)index * (size_t)t->p.width * (size_t)t->p.height * 3, t->p.width,
                      t->p.height, 0, GLCV_PIXEL_RGB8};
    return img;
}

static glcv_image read_mask(const glcv_track *t, int index)
{
    glcv_image img = {t->mask + (size_t)index * (size_t)t->p.width * (size_t)t->p.height * 3, t->p.width,
                      t->p.height, (size_t)t->p.width, GLCV_PIXEL_GRAY8};
    return img;
}

/* ---- histograms ------------------------------------------------------------------------------- */

static void hist_from_counts(const glcv_track *t, const uint32_t *counts, glcv_track_hist *out)
{
    memset(out, 0, sizeof *out);
    out->hue_bins = t->p.hue_bins;
    out->sat_bins = t->p.sat_bins;
    glcv_track_cpu_normalize(counts, t->nbins, out->value);
}

/* Counts and normalises; the caller holds the lock. */
static glcv_status hist_compute_locked(glcv_track *t, const glcv_image *frame, const glcv_image *mask,
                                       glcv_rect region, glcv_track_hist *out)
{
    glcv_status st = check_frame(t, frame, mask);
    if (st == GLCV_OK)
        st = glcv_check_rect(&t->logger, "track", "region", region);
    if (st != GLCV_OK)
        return st;
    glcv_tm_config c = make_config(t);
    glcv_tm_rect r = {region.x, region.y, region.width, region.height};
    r = glcv_tm_intersect(r, glcv_tm_frame_rect(&c));
    if (st == GLCV_OK && (r.w < 1 || r.h < 1))
        st = glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT, "track: region %d,%d %dx%d is outside the frame",
                       region.x, region.y, region.width, region.height);
    if (st != GLCV_OK)
        return st;
    int bpp = glcv_pixel_format_size(frame->format);
    size_t stride = glcv_image_stride(frame), mstride = mask ? glcv_image_stride(mask) : 0;
    int bgr = frame->format == GLCV_PIXEL_BGR8 || frame->format == GLCV_PIXEL_BGRA8;
    memset(t->counts, 0, (size_t)t->nbins * sizeof *t->counts);
    for (int y = r.y; y < r.y + r.h; y++) {
        const uint8_t *row = frame->data + (size_t)y * stride;
        for (int x = r.x; x < r.x + r.w; x++) {
            const uint8_t *px = row + (size_t)x * (size_t)bpp;
            int m = mask ? mask->data[(size_t)y * mstride + (size_t)x] != 0 : 1;
            int b = glcv_tm_bin(&t->tables, &c, bgr ? px[2] : px[0], px[1], bgr ? px[0] : px[2], m);
            if (b < t->nbins)
                t->counts[b]++;
        }
    }
    hist_from_counts(t, t->counts, out);
    return GLCV_OK;
}

glcv_status glcv_track_hist_compute(glcv_track *t, const glcv_image *frame, const glcv_image *mask,
                                    glcv_rect region, glcv_track_hist *out)
{
    if (!t)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (!out)
        return glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT, "track: hist_compute: NULL out");
    GLCV_LOCKED_CALL(t, hist_compute_locked(t, frame, mask, region, out));
}

/* The ring's counts (the region grown to three times its area, inside the frame, without the
 * region), then each bin of `hist` scaled by min(1, o* / o_u); the caller holds the lock. */
static glcv_status weight_background_locked(glcv_track *t, const glcv_image *frame, glcv_rect region,
                                            glcv_track_hist *hist)
{
    glcv_status st = check_frame(t, frame, NULL);
    if (st == GLCV_OK)
        st = glcv_check_rect(&t->logger, "track", "region", region);
    glcv_tm_config c = make_config(t);
    glcv_tm_rect r = {region.x, region.y, region.width, region.height};
    if (st == GLCV_OK)
        st = glcv_track_hist_check(&t->logger, hist);
    if (st == GLCV_OK && (hist->hue_bins != t->p.hue_bins || hist->sat_bins != t->p.sat_bins))
        st = glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT, "track: a histogram of %d x %d bins, the tracker's %d x %d",
                       hist->hue_bins, hist->sat_bins, t->p.hue_bins, t->p.sat_bins);
    if (st == GLCV_OK && (r.w < 1 || r.h < 1 || glcv_tm_intersect(r, glcv_tm_frame_rect(&c)).w < 1))
        st = glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT, "track: region %d,%d %dx%d is outside the frame",
                       region.x, region.y, region.width, region.height);
    if (st != GLCV_OK)
        return st;
    /* sqrt(3) times the sides: (sqrt(3) - 1) / 2 of a side on each side */
    int gx = (int)lrint(0.3660254037844386 * r.w), gy = (int)lrint(0.3660254037844386 * r.h);
    glcv_tm_rect g = {r.x - gx, r.y - gy, r.w + 2 * gx, r.h + 2 * gy};
    g = glcv_tm_intersect(g, glcv_tm_frame_rect(&c));
    int bpp = glcv_pixel_format_size(frame->format);
    size_t stride = glcv_image_stride(frame);
    int bgr = frame->format == GLCV_PIXEL_BGR8 || frame->format == GLCV_PIXEL_BGRA8;
    memset(t->counts, 0, (size_t)t->nbins * sizeof *t->counts);
    for (int y = g.y; y < g.y + g.h; y++) {
        const uint8_t *row = frame->data + (size_t)y * stride;
        for (int x = g.x; x < g.x + g.w; x++) {
            if (x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h)
                continue;
            const uint8_t *px = row + (size_t)x * (size_t)bpp;
            int b = glcv_tm_bin(&t->tables, &c, bgr ? px[2] : px[0], px[1], bgr ? px[0] : px[2], 1);
            if (b < t->nbins)
                t->counts[b]++;
        }
    }
    uint32_t least = 0;
    for (int b = 0; b < t->nbins; b++)
        if (t->counts[b] && (!least || t->counts[b] < least))
            least = t->counts[b];
    float top = 0.0f;
    for (int b = 0; b < t->nbins; b++) {
        if (t->counts[b] > least)
            hist->value[b] = (float)((double)hist->value[b] * (double)least / (double)t->counts[b]);
        top = hist->value[b] > top ? hist->value[b] : top;
    }
    for (int b = 0; b < t->nbins && top > 0.0f; b++)
        hist->value[b] = hist->value[b] * (255.0f / top);
    return GLCV_OK;
}

glcv_status glcv_track_hist_weight_background(glcv_track *t, const glcv_image *frame, glcv_rect region,
                                              glcv_track_hist *hist)
{
    if (!t)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (!hist)
        return glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT, "track: weight_background: NULL hist");
    GLCV_LOCKED_CALL(t, weight_background_locked(t, frame, region, hist));
}

glcv_status glcv_track_hist_compute_texture(glcv_track *t, unsigned int frame, unsigned int mask,
                                            glcv_rect region, glcv_track_hist *out)
{
    if (!t)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (!out)
        return glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT, "track: hist_compute_texture: NULL out");
    pthread_mutex_lock(&t->lock);
    glcv_status st = read_textures(t, frame, mask);
    if (st == GLCV_OK) {
        glcv_image img = read_frame(t, 0), mimg = read_mask(t, 0);
        st = hist_compute_locked(t, &img, mask ? &mimg : NULL, region, out);
    }
    pthread_mutex_unlock(&t->lock);
    return st;
}

/* ---- objects ---------------------------------------------------------------------------------- */

static int valid_id(const glcv_track *t, int id)
{
    return id >= 0 && id < t->p.max_objects && t->slots[id].used;
}

static glcv_status check_id(const glcv_track *t, int id)
{
    return valid_id(t, id) ? GLCV_OK : glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT, "track: no object %d", id);
}

/* Several engines: the objects of list ids[0..n-1] on engine e (id % n_engines), into
 * part_ids[0..], their places in the list into part_pos; returns their number. */
static int engine_part(glcv_track *t, const int *ids, int n, int e)
{
    int k = 0;
    for (int i = 0; i < n; i++)
        if (ids[i] % t->n_engines == e) {
            t->part_ids[k] = ids[i];
            t->part_pos[k++] = i;
        }
    return k;
}

/* Waits for the results and states of list ids[0..n-1] (in list order) from every engine. */
static glcv_status engines_results(glcv_track *t, glcv_tm_result *results, glcv_tm_object *states, const int *ids,
                                   int n)
{
    if (t->n_engines == 1)
        return glcv_track_cuda_results(t->cuda, results, states, ids, n);
    glcv_status first = GLCV_OK;
    for (int e = 0; e < t->n_engines; e++) {
        int k = engine_part(t, ids, n, e);
        if (k == 0)
            continue;
        glcv_status st = glcv_track_cuda_results(t->engines[e], t->part_results, t->part_states, t->part_ids, k);
        for (int i = 0; i < k && st == GLCV_OK; i++) {
            results[t->part_pos[i]] = t->part_results[i];
            states[t->part_pos[i]] = t->part_states[i];
        }
        first = first == GLCV_OK ? st : first; /* every engine is waited for */
    }
    return first;
}

static void dcf_result(const glcv_track *t, const glcv_track_dcf_result *r, glcv_tm_result *out);

/* DCF on CUDA: the results of list ids[0..n-1] from every engine, as engine results and ratios. */
static glcv_status dcf_engines_results(glcv_track *t, const int *ids, int n)
{
    glcv_track_dcf_result *r = malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
    if (!r)
        return GLCV_ERROR_OUT_OF_MEMORY;
    glcv_status first = GLCV_OK;
    for (int e = 0; e < t->n_engines; e++) {
        int k = t->n_engines == 1 ? n : engine_part(t, ids, n, e);
        if (k == 0)
            continue;
        glcv_status st = glcv_track_cuda_dcf_results(t->engines[e], r, k);
        for (int i = 0; i < k && st == GLCV_OK; i++) {
            int pos = t->n_engines == 1 ? i : t->part_pos[i];
            dcf_result(t, &r[i], &t->results[pos]);
            t->peaks[pos] = r[i].psr;
        }
        first = first == GLCV_OK ? st : first; /* every engine is waited for */
    }
    free(r);
    return first;
}

/* CUDA: fetches the last frame's results and the objects' states before the host changes them. */
static glcv_status settle(glcv_track *t)
{
    if (t->cuda && t->results_pending && t->p.method == GLCV_TRACK_METHOD_DCF) {
        t->results_pending = 0;
        return dcf_engines_results(t, t->ids, t->n_ids);
    }
    if (t->cuda && t->results_pending) {
        glcv_tm_object *states = malloc((size_t)t->p.max_objects * sizeof *states);
        if (!states)
            return GLCV_ERROR_OUT_OF_MEMORY;
        glcv_status st = engines_results(t, t->results, states, t->ids, t->n_ids);
        if (st == GLCV_OK)
            for (int k = 0; k < t->n_ids; k++)
                if (t->slots[t->ids[k]].used)
                    t->slots[t->ids[k]].state = states[k];
        free(states);
        t->results_pending = 0;
        return st;
    }
    return GLCV_OK;
}

static glcv_status upload_object(glcv_track *t, int id, int model)
{
    if (!t->cuda)
        return GLCV_OK;
    track_slot *s = &t->slots[id];
    return glcv_track_cuda_set_object(t->engines[id % t->n_engines], id, &s->state, model ? s->lut : NULL, model ? s->sqrt_model : NULL,
                                      s->model_sum);
}

/* DCF: the part of a box inside the frame, where an object starts; INVALID_ARGUMENT when none is. */
static glcv_status dcf_box(const glcv_track *t, glcv_rect window, glcv_tm_rect *out)
{
    glcv_tm_rect r = {window.x, window.y, window.width, window.height};
    *out = glcv_tm_intersect(r, (glcv_tm_rect){0, 0, t->p.width, t->p.height});
    if (out->w > 0 && out->h > 0)
        return GLCV_OK;
    return glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT,
                     "track: box %d,%d %dx%d has no pixel in the %dx%d frame: DCF learns the object from its pixels",
                     window.x, window.y, window.width, window.height, t->p.width, t->p.height);
}

/* DCF: object `id` starts from a box inside the frame (dcf_box); the CUDA engine gets its state. */
static glcv_status dcf_start(const glcv_track *t, track_slot *s, int id, glcv_tm_rect r)
{
    glcv_track_dcf_start(s->dcf, r.x + 0.5 * r.w, r.y + 0.5 * r.h, r.w, r.h, t->p.width, t->p.height);
    if (!t->cuda)
        return GLCV_OK;
    return glcv_track_cuda_dcf_set(t->engines[id % t->n_engines], id, s->state.stream, s->dcf);
}

glcv_status glcv_track_add(glcv_track *t, const glcv_track_hist *hist, glcv_rect window, int *id)
{
    return glcv_track_add_to_stream(t, 0, hist, window, id);
}

glcv_status glcv_track_add_to_stream(glcv_track *t, int stream, const glcv_track_hist *hist, glcv_rect window,
                                     int *id)
{
    if (id)
        *id = -1;
    if (!t)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (!id)
        return glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT, "track: add: NULL id");
    if (stream < 0 || stream >= t->p.streams)
        return glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT, "track: stream %d: the tracker has %d (0..%d)",
                         stream, t->p.streams, t->p.streams - 1);
    const int dcf = t->p.method == GLCV_TRACK_METHOD_DCF;
    glcv_status st = dcf && !hist ? GLCV_OK : glcv_track_hist_check(&t->logger, hist);
    if (st != GLCV_OK)
        return st;
    if (hist && (hist->hue_bins != t->p.hue_bins || hist->sat_bins != t->p.sat_bins))
        return glcv_fail(&t->logger, GLCV_ERROR_INVALID_ARGUMENT,
                         "track: the histogram has %d x %d bins, the tracker %d x %d", hist->hue_bins, hist->sat_bins,
                         t->p.hue_bins, t->p.sat_bins);
    if ((st = glcv_check_rect(&t->logger, "track", "window", window)) != GLCV_OK)
        return st;
    pthread_mutex_lock(&t->lock);
    int slot = 0;
    while (slot < t->p.max_objects && t->slots[slot].used)
        slot++;
    if (slot == t->p.max_objects) {
        st = glcv_fail(&t->logger, GLCV_ERROR_STATE, "track: already %d objects (max_objects)", t->p.max_objects);
    } else {
        track_slot *s = &t->slots[slot];
        if (hist)
            memcpy(s->value, hist->value, (size_t)t->nbins * sizeof *s->value);
        else
            memset(s->value, 0, (size_t)t->nbins * sizeof *s->value);
        glcv_track_cpu_model(s->value, t->nbins, s->lut, s->sqrt_model, &s->model_sum);
        memset(&s->state, 0, sizeof s->state);
        s->state.window = (glcv_tm_rect){window.x, window.y, window.width, window.height};
        glcv_tm_adaptive_init(&s->state, s->state.window);
        s->state.stream = stream;
        glcv_tm_rect box;
        if (dcf)
            st = dcf_box(t, window, &box);
        if (dcf && st == GLCV_OK && !s->dcf)
            st = glcv_track_dcf_create(&s->dcf);
        if (dcf && st == GLCV_OK)
            st = dcf_start(t, s, slot, box);
        if (st == GLCV_OK)
            st = upload_object(t, slot, 1);
        if (st == GLCV_OK) {
            s->used = 1;
            *id = slot;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return st;
}

glcv_status glcv_track_remove(glcv_track *t, int id)
{
    if (!t)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&t->lock);
    glcv_status st = check_id(t, id);
    if (st == GLCV_OK)
        t->slots[id].used = 0;
    pthread_mutex_unlock(&t->lock);
    return st;
}

glcv_status glcv_track_set_window(glcv_track *t, int id, glcv_rect window)
{
    if (!t)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&t->lock);
    glcv_status st = check_id(t, id);
    if (st == GLCV_OK)
        st = glcv_check_rect(&t->logger, "track", "window", window);
    glcv_tm_rect box;
    if (st == GLCV_OK && t->p.method == GLCV_TRACK_METHOD_DCF)
        st = dcf_box(t, window, &box);
    if (st == GLCV_OK)
        st = settle(t);
    if (st == GLCV_OK) {
        track_slot *s = &t->slots[id];
        s->state.window = (glcv_tm_rect){window.x, window.y, window.width, window.height};
        glcv_tm_adaptive_init(&s->state, s->state.window);
        s->state.lost_frames = 0;
        if (t->p.method == GLCV_TRACK_METHOD_DCF)
            st = dcf_start(t, s, id, box);
        if (st == GLCV_OK)
        st = upload_object(t, id, 0);
    }
    pthread_mutex_unlock(&t->lock);
    return st;
}

glcv_status glcv_track_get_hist(glcv_track *t, int id, glcv_track_hist *out)
{
    if (!t || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&t->lock);
    glcv_status st = check_id(t, id);
    if (st == GLCV_OK) {
        memset(out, 0, sizeof *out);
        out->hue_bins = t->p.hue_bins;
        out->sat_bins = t->p.sat_bins;
        memcpy(out->value, t->slots[id].value, (size_t)t->nbins * sizeof *out->value);
    }
    pthread_mutex_unlock(&t->lock);
    return st;
}

/* ---- frames ----------------------------------------------------------------------------------- */

/* Lists the objects to track (increasing ids) into ids, their streams into streams; returns how
 * many. */
static int list_into(const glcv_track *t, int *ids, int *streams)
{
    int n = 0;
    for (int i = 0; i < t->p.max_objects; i++)
        if (t->slots[i].used) {
            streams[n] = t->slots[i].state.stream;
            ids[n++] = i;
        }
    return n;
}

static void list_objects(glcv_track *t)
{
    t->n_ids = list_into(t, t->ids, t->id_streams);
}

/* CPU engine: the bin image of a stream. */
static uint16_t *stream_bins(const glcv_track *t, int stream)
{
    return t->bins + (size_t)stream * (size_t)t->p.width * (size_t)t->p.height;
}

/* CPU engine: tracks every object on its stream's bin image. */
static void cpu_track_all(glcv_track *t, const glcv_tm_config *c)
{
    list_objects(t);
    for (int k = 0; k < t->n_ids; k++) {
        track_slot *s = &t->slots[t->ids[k]];
        glcv_track_model model = {s->lut, s->sqrt_model, s->model_sum};
        glcv_track_cpu_object(stream_bins(t, s->state.stream), c, &model, &s->state, &t->results[k], t->counts);
    }
    t->have_frame = 1;
}

/* ---- DCF ---- */

/* A thread's working memory from the tracker's pool (made when none is idle); NULL when out of
 * memory. */
static glcv_track_dcf_scratch *take_scratch(glcv_track *t)
{
    glcv_track_dcf_scratch *s = NULL;
    pthread_mutex_lock(&t->scratch_lock);
    if (t->n_idle > 0) {
        s = t->idle[--t->n_idle];
    } else {
        size_t n = (size_t)t->n_scratch + 1;
        glcv_track_dcf_scratch **all = realloc(t->scratch, n * sizeof *all);
        if (all)
            t->scratch = all;
        glcv_track_dcf_scratch **idle = all ? realloc(t->idle, n * sizeof *idle) : NULL;
        if (idle)
            t->idle = idle;
        if (all && idle && (s = glcv_track_dcf_scratch_create()) != NULL)
            t->scratch[t->n_scratch++] = s;
    }
    pthread_mutex_unlock(&t->scratch_lock);
    return s;
}

static void give_scratch(glcv_track *t, glcv_track_dcf_scratch *s)
{
    pthread_mutex_lock(&t->scratch_lock);
    t->idle[t->n_idle++] = s;
    pthread_mutex_unlock(&t->scratch_lock);
}

/* An engine result from a DCF result: the box, the lost state and the next search window. */
static void dcf_result(const glcv_track *t, const glcv_track_dcf_result *r, glcv_tm_result *out)
{
    memset(out, 0, sizeof *out);
    memcpy(out->box, r->box, sizeof out->box);
    out->reasons = r->lost ? GLCV_TRACK_LOST_PEAK : 0;
    out->lost = out->reasons & t->p.lost_criteria;
    out->distance = -1;
    glcv_tm_rect w = {(int)lrint(r->window[0] - 0.5 * r->window[2]), (int)lrint(r->window[1] - 0.5 * r->window[3]),
                      (int)lrint(r->window[2]), (int)lrint(r->window[3])};
    out->measured = out->window = out->next = w;
}

typedef struct dcf_job {
    glcv_track *t;
    const glcv_image *frames; /* a frame per stream */
    atomic_int failed;
} dcf_job;

static void dcf_range(void *user, int begin, int end)
{
    dcf_job *job = user;
    glcv_track *t = job->t;
    glcv_track_dcf_scratch *s = take_scratch(t);
    if (!s) {
        atomic_store(&job->failed, 1);
        return;
    }
    for (int k = begin; k < end; k++) {
        track_slot *slot = &t->slots[t->ids[k]];
        glcv_track_dcf_result r;
        glcv_track_dcf_frame(slot->dcf, &job->frames[slot->state.stream], s, &r);
        dcf_result(t, &r, &t->results[k]);
        t->peaks[k] = r.psr;
    }
    give_scratch(t, s);
}

/* DCF: tracks every object in its stream's frame, objects spread over the library's threads. */
static glcv_status dcf_track_all(glcv_track *t, const glcv_image *frames)
{
    list_objects(t);
    dcf_job job = {.t = t, .frames = frames};
    atomic_init(&job.failed, 0);
    glcv_parallel_for(t->n_ids, 0, dcf_range, &job);
    t->have_frame = !atomic_load(&job.failed);
    return t->have_frame ? GLCV_OK : glcv_fail(&t->logger, GLCV_ERROR_OUT_OF_MEMORY, "track: out of memory");
}

/* CUDA engine: queues a set through `queue` (the objects listed into t->next_ids), whose results
 * are fetched later. The list becomes the set's (t->ids) once the set is queued; a set refused
 * before anything was queued (a bad argument or texture) leaves the last set's list and results
 * as they were; after a CUDA or GL error there are none. */
typedef glcv_status (*cuda_queue_fn)(glcv_track *t, glcv_track_cuda *engine, const glcv_tm_config *c,
                                     const void *args, const int *ids, int n);

static glcv_status cuda_set(glcv_track *t, cuda_queue_fn queue, const void *args)
{
    glcv_tm_config c = make_config(t);
    int n = list_into(t, t->next_ids, t->next_streams);
    glcv_status st = GLCV_OK;
    if (t->n_engines == 1)
        st = queue(t, t->cuda, &c, args, t->next_ids, n);
    /* several: each engine gets the frames and its objects, queued one after the other (they
     * run side by side). The first engine's staging memory is written again only once every
     * engine's upload from it is done; it queues the set even without objects of its own. */
    for (int e = 1; e < t->n_engines && st == GLCV_OK; e++)
        st = glcv_track_cuda_wait_upload(t->engines[e]);
    for (int e = 0; e < t->n_engines && t->n_engines > 1 && st == GLCV_OK; e++) {
        int k = engine_part(t, t->next_ids, n, e);
        if (k > 0 || e == 0)
            st = queue(t, t->engines[e], &c, args, t->part_ids, k);
    }
    if (st == GLCV_OK) {
        int *ids = t->ids, *streams = t->id_streams;
        t->ids = t->next_ids;
        t->id_streams = t->next_streams;
        t->next_ids = ids;
        t->next_streams = streams;
        t->n_ids = n;
        t->have_frame = 1;
        t->results_pending = 1;
    } else if (st == GLCV_ERROR_CUDA || st == GLCV_ERROR_GL) {
        t->have_frame = 0;
        t->results_pending = 0;
    }
    return st;
}

typedef struct host_set_args {
    const glcv_image *frames, *masks;
    int count;
} host_set_args;

static glcv_status queue_host_set(glcv_track *t, glcv_track_cuda *engine, const glcv_tm_config *c, const void *args,
                                  const int *ids, int n)
{
    const host_set_args *a = args;
    /* several engines: the first stages the set, the others upload from its staging memory */
    const glcv_track_cuda *staged = engine == t->cuda ? NULL : t->cuda;
    return glcv_track_cuda_frames(engine, c, a->frames, a->masks, a->count, staged, ids, n);
}

typedef struct texture_args {
    unsigned int frame, mask;
    int layered;
} texture_args;

static glcv_status queue_textures(glcv_track *t, glcv_track_cuda *engine, const glcv_tm_config *c, const void *args,
                                  const int *ids, int n)
{
    (void)t;
    const texture_args *a = args;
    return glcv_track_cuda_frame_texture(engine, c, a->frame, a->mask, a->layered, ids, n);
}

/* A checked host frame set (count frames, masks NULL or count) through the engine. */
static glcv_status track_set(glcv_track *t, const glcv_image *frames, const glcv_image *masks, int count)
{
    glcv_tm_config c = make_config(t);
    if (t->p.method == GLCV_TRACK_METHOD_DCF && !t->cuda)
        return dcf_track_all(t, frames);
    if (t->cuda)
        return cuda_set(t, queue_host_set, &(host_set_args){frames, masks, count});
    for (int i = 0; i < count; i++) {
        const glcv_image *m = masks ? &masks[i] : NULL;
        glcv_track_cpu_bins(&t->tables, &c, &frames[i], m ? m->data : NULL, m ? glcv_image_stride(m) : 0,
                            stream_bins(t, i));
    }
    cpu_track_all(t, &c);
    return GLCV_OK;
}

static glcv_status frame_locked(glcv_track *t, const glcv_image *frame, const glcv_image *mask)
{
    glcv_status st = check_one_stream(t, "glcv_track_frame");
    if (st == GLCV_OK)
        st = check_frame(t, frame, mask);
    return st == GLCV_OK ? track_set(t, frame, mask, 1) : st;
}

glcv_status glcv_track_frame(glcv_track *t, const glcv_image *frame, const glcv_image *mask)
{
    GLCV_LOCKED_CALL(t, frame_locked(t, frame, mask));
}

static glcv_status frames_locked(glcv_track *t, const glcv_image *frames, const glcv_image *masks, int count)
{
    glcv_status st = check_frames(t, frames, masks, count);
    return st == GLCV_OK ? track_set(t, frames, masks, count) : st;
}

glcv_status glcv_track_frames(glcv_track *t, const glcv_image *frames, const glcv_image *masks, int count)
{
    GLCV_LOCKED_CALL(t, frames_locked(t, frames, masks, count));
}

/* Texture inputs read back to host memory (the CPU engine, or the CUDA engine on a device other
 * than the GL context's): layer < 0, the GL_TEXTURE_2D frame (and mask); else every layer of
 * the array textures. */
static glcv_status track_read_back(glcv_track *t, unsigned int frames, unsigned int masks, int layers)
{
    int count = layers ? t->p.streams : 1;
    glcv_tm_config c = make_config(t);
    /* the CPU engine makes each stream's bin image as soon as its layer is read: one frame of room
     * (DCF: every frame) */
    const int dcf = t->p.method == GLCV_TRACK_METHOD_DCF && !t->cuda, all = t->cuda || dcf;
    glcv_status st = read_buffers(t, all ? count : 1);
    for (int i = 0; st == GLCV_OK && i < count; i++) {
        int index = all ? i : 0;
        st = read_input(t, frames, masks, layers ? i : -1, index);
        t->set_images[i] = read_frame(t, index);
        t->set_images[count + i] = read_mask(t, index);
        if (st == GLCV_OK && !all)
            glcv_track_cpu_bins_rgb(&t->tables, &c, t->rgb, masks ? t->mask : NULL, stream_bins(t, i));
    }
    if (st != GLCV_OK)
        return st;
    if (dcf)
        return dcf_track_all(t, t->set_images);
    if (!t->cuda) {
        cpu_track_all(t, &c);
        return GLCV_OK;
    }
    return cuda_set(t, queue_host_set, &(host_set_args){t->set_images, masks ? t->set_images + count : NULL, count});
}

/* Texture inputs: GL_TEXTURE_2D textures, or (layered) arrays of the tracker's streams. */
static glcv_status textures_locked(glcv_track *t, unsigned int frame, unsigned int mask, int layered)
{
    glcv_status st = layered ? GLCV_OK : check_one_stream(t, "glcv_track_frame_texture");
    if (st == GLCV_OK)
        st = need_context(t);
    if (st != GLCV_OK)
        return st;
    if (t->cuda && t->cuda_with_gl)
        return cuda_set(t, queue_textures, &(texture_args){frame, mask, layered});
    return track_read_back(t, frame, mask, layered);
}

glcv_status glcv_track_frame_texture(glcv_track *t, unsigned int frame, unsigned int mask)
{
    GLCV_LOCKED_CALL(t, textures_locked(t, frame, mask, 0));
}

glcv_status glcv_track_frames_texture(glcv_track *t, unsigned int frames, unsigned int masks)
{
    GLCV_LOCKED_CALL(t, textures_locked(t, frames, masks, 1));
}

glcv_status glcv_track_forget_texture(glcv_track *t, unsigned int texture)
{
    if (!t)
        return GLCV_ERROR_INVALID_ARGUMENT;
    glcv_status st = GLCV_OK;
    pthread_mutex_lock(&t->lock);
    if (t->cuda)
        st = glcv_track_cuda_forget_texture(t->cuda, texture);
    pthread_mutex_unlock(&t->lock);
    return st;
}

/* ---- results ---------------------------------------------------------------------------------- */

void glcv_track_box_points(float cx, float cy, float w, float h, float angle, float px[4], float py[4])
{
    /* cv::RotatedRect::points */
    if (!px || !py)
        return;
    double a_rad = (double)angle * 3.14159265358979323846 / 180.0;
    float b = (float)cos(a_rad) * 0.5f;
    float a = (float)sin(a_rad) * 0.5f;
    px[0] = cx - a * h - b * w;
    py[0] = cy + b * h - a * w;
    px[1] = cx + a * h - b * w;
    py[1] = cy - b * h - a * w;
    px[2] = 2 * cx - px[0];
    py[2] = 2 * cy - py[0];
    px[3] = 2 * cx - px[1];
    py[3] = 2 * cy - py[1];
}

glcv_rect glcv_track_box_bounds(float cx, float cy, float w, float h, float angle, int frame_w, int frame_h)
{
    /* cv::RotatedRect::boundingRect */
    float px[4], py[4];
    glcv_track_box_points(cx, cy, w, h, angle, px, py);
    float x0 = px[0], x1 = px[0], y0 = py[0], y1 = py[0];
    for (int i = 1; i < 4; i++) {
        x0 = px[i] < x0 ? px[i] : x0;
        x1 = px[i] > x1 ? px[i] : x1;
        y0 = py[i] < y0 ? py[i] : y0;
        y1 = py[i] > y1 ? py[i] : y1;
    }
    glcv_rect empty = {0, 0, 0, 0};
    if (!(isfinite(x0) && isfinite(x1) && isfinite(y0) && isfinite(y1)) || frame_w < 1 || frame_h < 1)
        return empty;
    /* only what lies in the frame is kept: clamp before converting (a float beyond an int's range
     * has no int value) */
    float fx = (float)frame_w + 1.0f, fy = (float)frame_h + 1.0f;
    x0 = fminf(fmaxf(x0, -1.0f), fx);
    x1 = fminf(fmaxf(x1, -1.0f), fx);
    y0 = fminf(fmaxf(y0, -1.0f), fy);
    y1 = fminf(fmaxf(y1, -1.0f), fy);
    int rx = (int)floorf(x0), ry = (int)floorf(y0);
    int rw = (int)ceilf(x1) - rx + 1, rh = (int)ceilf(y1) - ry + 1;
    glcv_tm_rect r = {rx, ry, rw, rh}, frame = {0, 0, frame_w, frame_h};
    r = glcv_tm_intersect(r, frame);
    glcv_rect out = {r.x, r.y, r.w, r.h};
    return out;
}

/* The public result of an engine result: the box is recomputed here from the moments, with the
 * engines' own arithmetic (plus atan2 for the angle, which only the host computes). */
static void to_public(const glcv_track *t, const glcv_tm_config *c, int id, int stream, const glcv_tm_result *r,
                      glcv_track_result *out)
{
    memset(out, 0, sizeof *out);
    out->id = id;
    out->stream = stream;
    out->iterations = r->iterations;
    out->lost = r->lost;
    out->reasons = r->reasons;
    out->m00 = (double)r->m[GLCV_TM_M00];
    out->m10 = (double)r->m[GLCV_TM_M10];
    out->m01 = (double)r->m[GLCV_TM_M01];
    out->m11 = (double)r->m[GLCV_TM_M11];
    out->m20 = (double)r->m[GLCV_TM_M20];
    out->m02 = (double)r->m[GLCV_TM_M02];
    out->measured = (glcv_rect){r->measured.x, r->measured.y, r->measured.w, r->measured.h};
    out->window = (glcv_rect){r->next.x, r->next.y, r->next.w, r->next.h};
    out->distance = r->distance;
    if (c->window_mode == GLCV_TM_WINDOW_ADAPTIVE || t->p.method == GLCV_TRACK_METHOD_DCF) {
        /* the filter's box, also while the object is lost */
        out->cx = (float)r->box[0];
        out->cy = (float)r->box[1];
        out->width = (float)r->box[2];
        out->height = (float)r->box[3];
        out->bbox = glcv_track_box_bounds(out->cx, out->cy, out->width, out->height, 0.0f, t->p.width, t->p.height);
        return;
    }
    if (r->m[GLCV_TM_M00] == 0)
        return; /* cv::CamShift's empty RotatedRect */
    if (c->window_mode == GLCV_TM_WINDOW_PAPER) {
        double m00 = (double)r->m[GLCV_TM_M00];
        double width = 2.0 * sqrt(m00 / 255.0);
        out->cx = (float)((double)r->m[GLCV_TM_M10] / m00 + r->measured.x + 0.5);
        out->cy = (float)((double)r->m[GLCV_TM_M01] / m00 + r->measured.y + 0.5);
        out->width = (float)width;
        out->height = (float)(c->aspect * width);
        out->angle = 0.0f;
    } else {
        glcv_tm_box box;
        glcv_tm_rect w = glcv_tm_camshift_size(r->m, r->measured, c, &box);
        double theta = atan2(box.v, box.u);
        if (box.swapped)
            theta = 3.14159265358979323846 * 0.5 - theta;
        float angle = (float)((3.14159265358979323846 * 0.5 + theta) * 180.0 / 3.14159265358979323846);
        while (angle < 0)
            angle += 360;
        while (angle >= 360)
            angle -= 360;
        if (angle >= 180)
            angle -= 180;
        out->cx = (float)w.x + (float)w.w * 0.5f;
        out->cy = (float)w.y + (float)w.h * 0.5f;
        out->width = (float)box.width;
        out->height = (float)box.length;
        out->angle = angle;
    }
    out->bbox = glcv_track_box_bounds(out->cx, out->cy, out->width, out->height, out->angle, t->p.width,
                                      t->p.height);
}

glcv_status glcv_track_results(glcv_track *t, glcv_track_result *out, int capacity, int *count)
{
    if (!t || !count || capacity < 0 || (capacity > 0 && !out))
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&t->lock);
    glcv_status st = GLCV_OK;
    if (!t->have_frame)
        st = glcv_fail(&t->logger, GLCV_ERROR_STATE, "track: no frame tracked yet");
    if (st == GLCV_OK)
        st = settle(t);
    if (st == GLCV_OK) {
        glcv_tm_config c = make_config(t);
        *count = t->n_ids;
        for (int k = 0; k < t->n_ids && k < capacity; k++) {
            to_public(t, &c, t->ids[k], t->id_streams[k], &t->results[k], &out[k]);
            out[k].peak = t->p.method == GLCV_TRACK_METHOD_DCF ? t->peaks[k] : -1.0;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return st;
}

/* ---- private hooks ---------------------------------------------------------------------------- */

glcv_status glcv_track_set_cuda_cluster(glcv_track *t, int blocks)
{
    if (!t || (blocks != 0 && blocks != 1 && blocks != 2 && blocks != 4 && blocks != 8 && blocks != 16))
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (t->cuda) {
        pthread_mutex_lock(&t->lock);
        for (int e = 0; e < t->n_engines; e++)
            glcv_track_cuda_set_cluster(t->engines[e], blocks);
        pthread_mutex_unlock(&t->lock);
        return GLCV_OK;
    }
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_track_texture_stats_get(glcv_track *t, glcv_track_texture_stats *out)
{
    if (!t || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&t->lock);
    if (t->cuda)
        glcv_track_cuda_texture_stats(t->cuda, out);
    pthread_mutex_unlock(&t->lock);
    return GLCV_OK;
}

int glcv_track_cuda_cluster_used(glcv_track *t)
{
    if (t && t->cuda) {
        pthread_mutex_lock(&t->lock);
        int n = glcv_track_cuda_cluster(t->cuda);
        pthread_mutex_unlock(&t->lock);
        return n;
    }
    return 0;
}

int glcv_track_dcf_blocks_used(glcv_track *t)
{
    if (t && t->cuda) {
        pthread_mutex_lock(&t->lock);
        int n = glcv_track_cuda_dcf_blocks(t->cuda);
        pthread_mutex_unlock(&t->lock);
        return n;
    }
    return 0;
}

glcv_status glcv_track_bench_prepare(glcv_track *t, const glcv_rect *windows, int n)
{
    if (!t || n < 1 || !windows)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (t->n_engines > 1)
        return glcv_fail(&t->logger, GLCV_ERROR_UNSUPPORTED, "track: kernel benchmarks run on one device");
    if (t->cuda) {
        pthread_mutex_lock(&t->lock);
        glcv_status st = settle(t);
        int *ids = malloc((size_t)n * sizeof *ids);
        glcv_tm_rect *w = malloc((size_t)n * sizeof *w);
        if (!ids || !w)
            st = GLCV_ERROR_OUT_OF_MEMORY;
        for (int i = 0; st == GLCV_OK && i < n; i++) {
            if (i >= t->p.max_objects || !t->slots[i].used)
                st = glcv_fail(&t->logger, GLCV_ERROR_STATE, "track: bench_prepare: no object %d", i);
            else {
                ids[i] = i;
                w[i] = (glcv_tm_rect){windows[i].x, windows[i].y, windows[i].width, windows[i].height};
            }
        }
        if (st == GLCV_OK && !t->have_frame)
            st = glcv_fail(&t->logger, GLCV_ERROR_STATE, "track: bench_prepare needs a frame tracked before");
        if (st == GLCV_OK)
            st = glcv_track_cuda_bench_prepare(t->cuda, w, ids, n);
        free(ids);
        free(w);
        pthread_mutex_unlock(&t->lock);
        return st;
    }
    return GLCV_ERROR_UNSUPPORTED;
}

glcv_status glcv_track_bench_time(glcv_track *t, int hsv, int runs, double *ms_per_frame)
{
    if (!t || runs < 1 || !ms_per_frame)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (t->n_engines > 1)
        return glcv_fail(&t->logger, GLCV_ERROR_UNSUPPORTED, "track: kernel benchmarks run on one device");
    if (t->cuda) {
        pthread_mutex_lock(&t->lock);
        glcv_tm_config c = make_config(t);
        glcv_status st = glcv_track_cuda_bench_time(t->cuda, &c, hsv, runs, ms_per_frame);
        pthread_mutex_unlock(&t->lock);
        return st;
    }
    return GLCV_ERROR_UNSUPPORTED;
}
