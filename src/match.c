/* The matcher object: parameters, template, region of interest, validation, the dispatch of each
 * match to its engine - the CPU implementation (match_cpu.c) or CUDA (match_cuda.c) - and the
 * results: the score map, its normalised form and texture, and the best positions. */
#include "match_internal.h"

#include "core_internal.h"
#include "gl.h"

#include <glcv/context.h>
#include <glcv/image.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZE GLCV_MATCH_MAX_SIZE

/* ---- names ------------------------------------------------------------------------------------ */

static const char *const metric_names[] = {[GLCV_MATCH_METRIC_DEFAULT] = "sad", [GLCV_MATCH_SAD] = "sad",
                                           [GLCV_MATCH_SSD] = "ssd", [GLCV_MATCH_LINF] = "linf",
                                           [GLCV_MATCH_ZNCC] = "zncc"};
GLCV_ENUM_NAMES(glcv_match_metric, glcv_match_metric, metric_names)

const char *glcv_match_simd_string(glcv_match_simd simd)
{
    switch (simd) {
    case GLCV_MATCH_SIMD_DEFAULT: return "default";
    case GLCV_MATCH_SIMD_NONE: return "none";
    case GLCV_MATCH_SIMD_SSE41: return "sse4.1";
    case GLCV_MATCH_SIMD_AVX2: return "avx2";
    }
    return "?";
}

static glcv_match_simd simd_of_isa(glcv_match_isa isa)
{
    return isa == GLCV_MATCH_ISA_AVX2    ? GLCV_MATCH_SIMD_AVX2
           : isa == GLCV_MATCH_ISA_SSE41 ? GLCV_MATCH_SIMD_SSE41
                                         : GLCV_MATCH_SIMD_NONE;
}

static int use_cuda(const glcv_match *m)
{
    return m->cuda != NULL;
}

/* ---- create / destroy ----------------------------------------------------------------------- */

static glcv_status resolve_params(const glcv_match_params *in, glcv_match_params *p)
{
    *p = *in;
    const glcv_logger *lg = &in->logger;
    glcv_status st = glcv_check_size(lg, "match", p->width, p->height, MAX_SIZE);
    if (st != GLCV_OK)
        return st;
    GLCV_DEFAULT(p->format, GLCV_PIXEL_GRAY8);
    if (glcv_pixel_format_size(p->format) == 0)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: unknown pixel format %d", (int)p->format);
    GLCV_DEFAULT(p->metric, GLCV_MATCH_SAD);
    if (p->metric < GLCV_MATCH_SAD || p->metric > GLCV_MATCH_ZNCC)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: unknown metric %d", (int)p->metric);
    if (p->nms_distance < 0 || p->nms_distance > MAX_SIZE)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: nms_distance %d must be 1..%d", p->nms_distance,
                         MAX_SIZE);
    if (p->threads < 0 || p->threads > 4096)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: threads %d must be 0..4096", p->threads);
    if (p->simd < GLCV_MATCH_SIMD_DEFAULT || p->simd > GLCV_MATCH_SIMD_AVX2)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: unknown SIMD level %d", (int)p->simd);
    if (p->cuda_device < 0)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: cuda_device %d must be >= 0", p->cuda_device);
    GLCV_DEFAULT(p->cuda_devices, 1);
    if (p->cuda_devices < -1 || p->cuda_devices > GLCV_MATCH_MAX_DEVICES)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: cuda_devices %d must be -1 or 1..%d",
                         p->cuda_devices, GLCV_MATCH_MAX_DEVICES);
    GLCV_DEFAULT(p->cuda_chunks, (int64_t)p->width * p->height > 1000000 ? 4 : 1);
    if (p->cuda_chunks < 1 || p->cuda_chunks > GLCV_MATCH_MAX_CHUNKS)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: cuda_chunks %d must be 1..%d", p->cuda_chunks,
                         GLCV_MATCH_MAX_CHUNKS);
    return GLCV_OK;
}

static void match_free(glcv_match *m)
{
    if (use_cuda(m)) {
        glcv_match_cuda_destroy(m);
    } else {
        free(m->map.data);
        free(m->mapped);
    }
    if (m->map_texture && glcv_gl_token_current(m->map_context)) {
        GLuint tex = m->map_texture;
        glDeleteTextures(1, &tex);
    }
    glcv_match_tmpl_free(&m->tmpl);
    glcv_match_planes_free(&m->planes);
    glcv_image_free(&m->scratch);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

glcv_status glcv_match_create(const glcv_match_params *params, glcv_match **out)
{
    GLCV_CREATE_BEGIN(params, out);
    glcv_match_params p;
    glcv_status st = resolve_params(params, &p);
    if (st != GLCV_OK)
        return st;
    const glcv_logger *lg = &params->logger;

    glcv_match_isa best = glcv_match_cpu_best_isa();
    glcv_match_isa isa = best;
    if (p.simd != GLCV_MATCH_SIMD_DEFAULT) {
        isa = p.simd == GLCV_MATCH_SIMD_AVX2    ? GLCV_MATCH_ISA_AVX2
              : p.simd == GLCV_MATCH_SIMD_SSE41 ? GLCV_MATCH_ISA_SSE41
                                                : GLCV_MATCH_ISA_PORTABLE;
        if (isa > best)
            return glcv_fail(lg, GLCV_ERROR_UNSUPPORTED, "match: this processor does not run %s",
                             glcv_match_simd_string(p.simd));
    }
    p.simd = simd_of_isa(isa);

    glcv_match *m = calloc(1, sizeof *m);
    if (!m)
        return GLCV_ERROR_OUT_OF_MEMORY;
    if (pthread_mutex_init(&m->lock, NULL) != 0) {
        free(m);
        return GLCV_ERROR_OUT_OF_MEMORY;
    }
    m->p = p;
    m->nms_auto = p.nms_distance == 0;
    m->channels = glcv_pixel_format_size(p.format);
    m->isa = isa;
    m->map.width = p.width;
    m->map.height = p.height;

    /* the engine */
    glcv_cuda_device device;
    st = glcv_cuda_choose("match", p.engine, p.cuda_device, lg, &m->p.engine, &device);
    if (st == GLCV_OK && m->p.engine == GLCV_ENGINE_CUDA) {
        st = glcv_match_cuda_create(m, &device);
        if (st == GLCV_ERROR_UNSUPPORTED && p.engine != GLCV_ENGINE_CUDA) {
            glcv_match_cuda_destroy(m);
            glcv_logf(lg, GLCV_LOG_INFO, "match: using the CPU engine");
            m->p.engine = GLCV_ENGINE_CPU;
            st = GLCV_OK;
        }
    }
    if (st == GLCV_OK && m->p.engine == GLCV_ENGINE_CPU) {
        m->p.cuda_devices = 0;
        m->p.cuda_chunks = 0;
        st = glcv_match_planes_alloc(&m->planes, p.width, p.height, m->channels);
        m->map.data = st == GLCV_OK ? malloc((size_t)p.width * (size_t)p.height * 8) : NULL;
        m->mapped = m->map.data ? malloc((size_t)p.width * (size_t)p.height * (size_t)m->channels) : NULL;
        if (st != GLCV_OK || !m->map.data || !m->mapped)
            st = glcv_fail(lg, GLCV_ERROR_OUT_OF_MEMORY, "match: cannot allocate the buffers for %dx%d", p.width,
                           p.height);
    }
    if (st != GLCV_OK) {
        match_free(m);
        return st;
    }
    glcv_logf(lg, GLCV_LOG_DEBUG, "match: %dx%d, %d channel%s, engine %s", p.width, p.height, m->channels,
              m->channels == 1 ? "" : "s", glcv_engine_mode_string(m->p.engine));
    *out = m;
    return GLCV_OK;
}

void glcv_match_destroy(glcv_match **match)
{
    if (!match || !*match)
        return;
    match_free(*match);
    *match = NULL;
}

glcv_status glcv_match_get_params(glcv_match *m, glcv_match_params *out)
{
    GLCV_LOCKED_COPY(m, p, out);
}

/* ---- template, metric, ROI -------------------------------------------------------------------- */

static void update_store(glcv_match *m)
{
    m->map.store = m->have_template ? glcv_match_store_for(m->p.metric, m->tmpl.count, m->channels)
                                    : GLCV_MATCH_STORE_U32;
}

glcv_status glcv_match_set_metric(glcv_match *m, glcv_match_metric metric)
{
    if (!m)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (metric == GLCV_MATCH_METRIC_DEFAULT)
        metric = GLCV_MATCH_SAD;
    if (metric < GLCV_MATCH_SAD || metric > GLCV_MATCH_ZNCC)
        return glcv_fail(&m->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "match: unknown metric %d", (int)metric);
    pthread_mutex_lock(&m->lock);
    m->p.metric = metric;
    m->have_map = 0;
    update_store(m);
    pthread_mutex_unlock(&m->lock);
    return GLCV_OK;
}

/* Converts an image into the working format (m->scratch, reallocated as needed) unless it is in it
 * already; *pixels / *stride point at the result. */
static glcv_status to_working_format(glcv_match *m, const glcv_image *img, const uint8_t **pixels, size_t *stride)
{
    if (img->format == m->p.format) {
        *pixels = img->data;
        *stride = glcv_image_stride(img);
        return GLCV_OK;
    }
    if (m->scratch.width < img->width || m->scratch.height < img->height || m->scratch.format != m->p.format) {
        glcv_image_free(&m->scratch);
        glcv_status st = glcv_image_alloc(img->width, img->height, m->p.format, &m->scratch);
        if (st != GLCV_OK)
            return glcv_fail(&m->p.logger, st, "match: cannot allocate a %dx%d conversion buffer", img->width,
                             img->height);
    }
    glcv_image view = m->scratch;
    view.width = img->width;
    view.height = img->height;
    glcv_status st = glcv_image_convert(img, &view);
    if (st != GLCV_OK)
        return glcv_fail(&m->p.logger, st, "match: cannot convert the image");
    *pixels = view.data;
    *stride = glcv_image_stride(&m->scratch);
    return GLCV_OK;
}

static glcv_status set_template_locked(glcv_match *m, const glcv_image *templ, const glcv_image *mask)
{
    const glcv_logger *lg = &m->p.logger;
    if (glcv_image_check(templ) != GLCV_OK)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: the template is not a valid image");
    if (templ->width > m->p.width || templ->height > m->p.height)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT,
                         "match: the template (%dx%d) is larger than the image (%dx%d)", templ->width, templ->height,
                         m->p.width, m->p.height);
    if (mask) {
        if (glcv_image_check(mask) != GLCV_OK || mask->format != GLCV_PIXEL_GRAY8)
            return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "match: the mask must be a valid GRAY8 image");
        if (mask->width != templ->width || mask->height != templ->height)
            return glcv_fail(lg, GLCV_ERROR_SIZE_MISMATCH, "match: the mask is %dx%d, the template %dx%d", mask->width,
                             mask->height, templ->width, templ->height);
    }
    const uint8_t *pixels = NULL;
    size_t stride = 0;
    glcv_status st = to_working_format(m, templ, &pixels, &stride);
    if (st != GLCV_OK)
        return st;
    glcv_match_tmpl t;
    st = glcv_match_tmpl_init(&t, pixels, stride, templ->width, templ->height, m->channels, mask ? mask->data : NULL,
                              mask ? glcv_image_stride(mask) : 0);
    if (st == GLCV_ERROR_INVALID_ARGUMENT)
        return glcv_fail(lg, st, "match: the mask keeps no pixel of the template");
    if (st != GLCV_OK)
        return glcv_fail(lg, st, "match: cannot store the %dx%d template", templ->width, templ->height);
    glcv_match_tmpl_free(&m->tmpl);
    m->tmpl = t;
    m->have_template = 1;
    m->have_map = 0;
    update_store(m);
    if (m->nms_auto) {
        int side = t.width < t.height ? t.width : t.height;
        m->p.nms_distance = (side + 1) / 2 > 1 ? (side + 1) / 2 : 1;
    }
    if (use_cuda(m) && (st = glcv_match_cuda_set_template(m)) != GLCV_OK) {
        m->have_template = 0;
        return st;
    }
    return GLCV_OK;
}

glcv_status glcv_match_set_template(glcv_match *m, const glcv_image *templ, const glcv_image *mask)
{
    GLCV_LOCKED_CALL(m, set_template_locked(m, templ, mask));
}

/* Reads a caller's texture into an RGB8 image (host memory). */
static glcv_status read_texture(glcv_match *m, unsigned int texture, int width, int height, glcv_image *out)
{
    glcv_status st = glcv_image_alloc(width, height, GLCV_PIXEL_RGB8, out);
    if (st != GLCV_OK)
        return glcv_fail(&m->p.logger, st, "match: cannot allocate %dx%d for texture %u", width, height, texture);
    st = glcv_gl_read_rgb(texture, width, height, out->data, &m->p.logger);
    if (st != GLCV_OK)
        glcv_image_free(out);
    return st;
}

glcv_status glcv_match_set_template_texture(glcv_match *m, unsigned int texture, int width, int height,
                                            const glcv_image *mask)
{
    if (!m)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (width < 1 || height < 1 || width > m->p.width || height > m->p.height)
        return glcv_fail(&m->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "match: template texture size %dx%d out of range",
                         width, height);
    pthread_mutex_lock(&m->lock);
    glcv_image rgb = {0};
    glcv_status st = read_texture(m, texture, width, height, &rgb);
    if (st == GLCV_OK)
        st = set_template_locked(m, &rgb, mask);
    glcv_image_free(&rgb);
    pthread_mutex_unlock(&m->lock);
    return st;
}

glcv_status glcv_match_set_roi(glcv_match *m, const glcv_rect *roi)
{
    if (!m)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (roi && (roi->width < 1 || roi->height < 1))
        return glcv_fail(&m->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "match: ROI %dx%d: width and height must be >= 1",
                         roi->width, roi->height);
    pthread_mutex_lock(&m->lock);
    if (roi) {
        /* clip to the image, in 64 bits so that no sum overflows */
        int64_t x0 = roi->x, y0 = roi->y, x1 = (int64_t)roi->x + roi->width, y1 = (int64_t)roi->y + roi->height;
        x0 = x0 < 0 ? 0 : x0;
        y0 = y0 < 0 ? 0 : y0;
        x1 = x1 > m->p.width ? m->p.width : x1;
        y1 = y1 > m->p.height ? m->p.height : y1;
        m->roi.x = (int)x0;
        m->roi.y = (int)y0;
        m->roi.width = x1 > x0 ? (int)(x1 - x0) : 0;
        m->roi.height = y1 > y0 ? (int)(y1 - y0) : 0;
        m->have_roi = 1;
    } else {
        m->have_roi = 0;
    }
    m->have_map = 0;
    pthread_mutex_unlock(&m->lock);
    return GLCV_OK;
}

/* The positions evaluated: the template inside the image and inside the ROI. */
static glcv_match_region region_of(const glcv_match *m)
{
    glcv_match_region r = {0, 0, m->p.width - m->tmpl.width + 1, m->p.height - m->tmpl.height + 1};
    if (m->have_roi) {
        int x0 = m->roi.x, y0 = m->roi.y;
        int x1 = m->roi.x + m->roi.width - m->tmpl.width + 1, y1 = m->roi.y + m->roi.height - m->tmpl.height + 1;
        r.x0 = x0 > r.x0 ? x0 : r.x0;
        r.y0 = y0 > r.y0 ? y0 : r.y0;
        r.x1 = x1 < r.x1 ? x1 : r.x1;
        r.y1 = y1 < r.y1 ? y1 : r.y1;
    }
    if (r.x1 <= r.x0 || r.y1 <= r.y0)
        r.x0 = r.x1 = r.y0 = r.y1 = 0;
    return r;
}

/* ---- matching -------------------------------------------------------------------------------- */

/* The worst value everywhere outside the region. */
static void fill_outside(glcv_match_map *map, glcv_match_region r)
{
    glcv_match_map row = *map;
    size_t elem = map->store == GLCV_MATCH_STORE_U64 ? 8 : 4;
    int w = map->width;
    for (int y = 0; y < map->height; y++) {
        uint8_t *base = (uint8_t *)map->data + (size_t)y * (size_t)w * elem;
        int inside = y >= r.y0 && y < r.y1;
        int spans[2][2] = {{0, inside ? r.x0 : w}, {inside ? r.x1 : w, w}};
        for (int s = 0; s < 2; s++) {
            if (spans[s][1] <= spans[s][0])
                continue;
            row.data = base + (size_t)spans[s][0] * elem;
            row.width = spans[s][1] - spans[s][0];
            row.height = 1;
            glcv_match_map_fill_worst(&row);
        }
    }
}

static glcv_status cpu_match(glcv_match *m, const uint8_t *pixels, size_t stride)
{
    double t0 = glcv_now();
    glcv_match_planes_fill(&m->planes, pixels, stride);
    double t1 = glcv_now();
    fill_outside(&m->map, m->region);
    glcv_match_cpu_run(&m->planes, &m->tmpl, m->p.metric, m->region, &m->map, m->isa, m->p.threads);
    double t2 = glcv_now();
    glcv_timing tm[2] = {{"convert", 1e3 * (t1 - t0), 1, GLCV_CLOCK_HOST}, {"match", 1e3 * (t2 - t1), 1, GLCV_CLOCK_HOST}};
    memcpy(m->timings, tm, sizeof tm);
    m->n_timings = 2;
    return GLCV_OK;
}

static glcv_status check_ready(glcv_match *m)
{
    if (!m->have_template)
        return glcv_fail(&m->p.logger, GLCV_ERROR_STATE, "match: no template set");
    m->region = region_of(m);
    update_store(m);
    return GLCV_OK;
}

/* Matches host pixels (any format; converted here for the CPU engine, on the GPU for CUDA). */
static glcv_status match_host(glcv_match *m, const glcv_image *image, int in_staging)
{
    glcv_status st = check_ready(m);
    if (st != GLCV_OK)
        return st;
    m->have_map = 0;
    if (use_cuda(m)) {
        st = glcv_match_cuda_image(m, image, in_staging);
        m->have_map = st == GLCV_OK;
        return st;
    }
    const uint8_t *pixels = NULL;
    size_t stride = 0;
    st = to_working_format(m, image, &pixels, &stride);
    if (st == GLCV_OK)
        st = cpu_match(m, pixels, stride);
    m->have_map = st == GLCV_OK;
    return st;
}

glcv_status glcv_match_image(glcv_match *m, const glcv_image *image)
{
    if (!m)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (glcv_image_check(image) != GLCV_OK)
        return glcv_fail(&m->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "match: the image is not valid");
    if (image->width != m->p.width || image->height != m->p.height)
        return glcv_fail(&m->p.logger, GLCV_ERROR_SIZE_MISMATCH, "match: the image is %dx%d, the matcher %dx%d",
                         image->width, image->height, m->p.width, m->p.height);
    GLCV_LOCKED_CALL(m, match_host(m, image, 0));
}

glcv_status glcv_match_map_image(glcv_match *m, glcv_image *out)
{
    if (!m || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&m->lock);
    out->data = m->mapped;
    out->width = m->p.width;
    out->height = m->p.height;
    out->stride = (size_t)m->p.width * (size_t)m->channels;
    out->format = m->p.format;
    m->mapped_pending = 1;
    pthread_mutex_unlock(&m->lock);
    return GLCV_OK;
}

static glcv_status image_mapped(glcv_match *m)
{
    if (!m->mapped_pending)
        return glcv_fail(&m->p.logger, GLCV_ERROR_STATE, "match: glcv_match_image_mapped without glcv_match_map_image");
    glcv_image img = {m->mapped, m->p.width, m->p.height, (size_t)m->p.width * (size_t)m->channels, m->p.format};
    return match_host(m, &img, 1);
}

glcv_status glcv_match_image_mapped(glcv_match *m)
{
    GLCV_LOCKED_CALL(m, image_mapped(m));
}

glcv_status glcv_match_image_texture(glcv_match *m, unsigned int texture)
{
    if (!m)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&m->lock);
    glcv_status st = check_ready(m);
    if (st == GLCV_OK && use_cuda(m)) {
        m->have_map = 0;
        glcv_status cuda = glcv_match_cuda_texture(m, texture);
        if (cuda != GLCV_ERROR_UNSUPPORTED) { /* UNSUPPORTED: not on the GL context's device */
            m->have_map = cuda == GLCV_OK;
            pthread_mutex_unlock(&m->lock);
            return cuda;
        }
    }
    glcv_image rgb = {0};
    if (st == GLCV_OK)
        st = read_texture(m, texture, m->p.width, m->p.height, &rgb);
    if (st == GLCV_OK)
        st = match_host(m, &rgb, 0);
    glcv_image_free(&rgb);
    pthread_mutex_unlock(&m->lock);
    return st;
}

glcv_status glcv_match_forget_texture(glcv_match *m, unsigned int texture)
{
    if (!m)
        return GLCV_ERROR_INVALID_ARGUMENT;
    GLCV_LOCKED_CALL(m, m->cuda ? glcv_match_cuda_forget_texture(m, texture) : GLCV_OK);
}

/* ---- results -------------------------------------------------------------------------------- */

static int is_distance(const glcv_match *m)
{
    return m->p.metric != GLCV_MATCH_ZNCC;
}

static int in_region(glcv_match_region r, int x, int y)
{
    return x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1;
}

/* The score at index i, as a double (exact for the integer metrics). */
static double score_at(const glcv_match *m, size_t i)
{
    switch (m->map.store) {
    case GLCV_MATCH_STORE_U32: return (double)((const uint32_t *)m->map.data)[i];
    case GLCV_MATCH_STORE_U64: return (double)((const uint64_t *)m->map.data)[i];
    case GLCV_MATCH_STORE_F32: return (double)((const float *)m->map.data)[i];
    }
    return 0.0;
}

static glcv_status check_map(glcv_match *m)
{
    if (!m->have_map)
        return glcv_fail(&m->p.logger, GLCV_ERROR_STATE, "match: nothing matched yet");
    return GLCV_OK;
}

/* A caller's map buffer: rows of `stride` elements (0 = width) of `size` bytes; a stride below
 * the width (rows would overlap and the last one run past the buffer) or a map whose byte size
 * overflows is INVALID_ARGUMENT. */
static glcv_status check_stride(glcv_match *m, size_t stride, size_t size, const char *fn)
{
    size_t w = (size_t)m->p.width, h = (size_t)m->p.height, s = stride ? stride : w;
    if (s < w || s > SIZE_MAX / size / h)
        return glcv_fail(&m->p.logger, GLCV_ERROR_INVALID_ARGUMENT,
                         "match: %s: stride %zu for a map %zu wide (at least the width, 0 = the width)", fn,
                         stride, w);
    return check_map(m);
}

glcv_status glcv_match_read_scores(glcv_match *m, double *out, size_t stride)
{
    if (!m)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (!out)
        return glcv_fail(&m->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "match: read_scores: NULL out");
    pthread_mutex_lock(&m->lock);
    glcv_status st = check_stride(m, stride, sizeof *out, "read_scores");
    if (st == GLCV_OK) {
        size_t w = (size_t)m->p.width, s = stride ? stride : w;
        double worst = is_distance(m) ? HUGE_VAL : -HUGE_VAL;
        for (int y = 0; y < m->p.height; y++)
            for (int x = 0; x < m->p.width; x++)
                out[(size_t)y * s + (size_t)x] =
                    in_region(m->region, x, y) ? score_at(m, (size_t)y * w + (size_t)x) : worst;
    }
    pthread_mutex_unlock(&m->lock);
    return st;
}

static void normalized_locked(const glcv_match *m, float *out, size_t stride)
{
    size_t w = (size_t)m->p.width, s = stride ? stride : w;
    glcv_match_region r = m->region;
    double lo = HUGE_VAL, hi = -HUGE_VAL;
    for (int y = r.y0; y < r.y1; y++)
        for (int x = r.x0; x < r.x1; x++) {
            double v = score_at(m, (size_t)y * w + (size_t)x);
            lo = v < lo ? v : lo;
            hi = v > hi ? v : hi;
        }
    double range = hi - lo;
    for (int y = 0; y < m->p.height; y++)
        for (int x = 0; x < m->p.width; x++) {
            float v = 0.0f;
            if (in_region(r, x, y)) {
                double score = score_at(m, (size_t)y * w + (size_t)x);
                v = range > 0 ? (float)(is_distance(m) ? (hi - score) / range : (score - lo) / range) : 1.0f;
            }
            out[(size_t)y * s + (size_t)x] = v;
        }
}

static glcv_status read_normalized(glcv_match *m, float *out, size_t stride)
{
    glcv_status st = check_stride(m, stride, sizeof *out, "read_normalized");
    if (st == GLCV_OK)
        normalized_locked(m, out, stride);
    return st;
}

glcv_status glcv_match_read_normalized(glcv_match *m, float *out, size_t stride)
{
    if (!m)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (!out)
        return glcv_fail(&m->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "match: read_normalized: NULL out");
    GLCV_LOCKED_CALL(m, read_normalized(m, out, stride));
}

unsigned int glcv_match_map_texture(glcv_match *m)
{
    if (!m)
        return 0;
    pthread_mutex_lock(&m->lock);
    unsigned int result = 0;
    float *values = NULL;
    if (check_map(m) == GLCV_OK) {
        values = malloc((size_t)m->p.width * (size_t)m->p.height * sizeof *values);
        if (!values) {
            glcv_fail(&m->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "match: out of memory for the map texture");
        } else {
            normalized_locked(m, values, 0);
            /* a texture made in another (or a destroyed) context is not touched: its name may be
             * another texture here */
            GLuint tex = glcv_gl_token_current(m->map_context) ? m->map_texture : 0;
            if (glcv_gl_upload_texture(&tex, m->p.width, m->p.height, GL_R32F, GL_RED, GL_FLOAT, values,
                                       &m->p.logger) == GLCV_OK) {
                result = tex;
                m->map_texture = tex;
                m->map_context = glcv_gl_current_token();
            }
        }
    }
    free(values);
    pthread_mutex_unlock(&m->lock);
    return result;
}

/* Best-k: a binary heap over the evaluated positions, best on top (ties: lower index). */
typedef struct heap {
    uint32_t *idx;
    size_t n;
    const glcv_match *m;
    int distance;
} heap;

static int better(const heap *h, uint32_t a, uint32_t b)
{
    double sa = score_at(h->m, a), sb = score_at(h->m, b);
    if (sa != sb)
        return h->distance ? sa < sb : sa > sb;
    return a < b;
}

static void sift_down(heap *h, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, top = i;
        if (l < h->n && better(h, h->idx[l], h->idx[top]))
            top = l;
        if (r < h->n && better(h, h->idx[r], h->idx[top]))
            top = r;
        if (top == i)
            return;
        uint32_t t = h->idx[i];
        h->idx[i] = h->idx[top];
        h->idx[top] = t;
        i = top;
    }
}

glcv_status glcv_match_best(glcv_match *m, int k, glcv_match_hit *hits, int *count)
{
    if (!m)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (!hits || !count || k < 1)
        return glcv_fail(&m->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "match: best: %s",
                         !hits ? "NULL hits" : !count ? "NULL count" : "k < 1");
    *count = 0;
    pthread_mutex_lock(&m->lock);
    glcv_status st = check_map(m);
    glcv_match_region r = m->region;
    size_t w = (size_t)m->p.width;
    size_t n = (size_t)(r.x1 - r.x0) * (size_t)(r.y1 - r.y0);
    int found = 0;
    if (st == GLCV_OK && n > 0 && k == 1) {
        /* one hit: a scan */
        heap h = {NULL, 0, m, is_distance(m)};
        uint32_t best = (uint32_t)((size_t)r.y0 * w + (size_t)r.x0);
        for (int y = r.y0; y < r.y1; y++)
            for (int x = r.x0; x < r.x1; x++) {
                uint32_t i = (uint32_t)((size_t)y * w + (size_t)x);
                if (better(&h, i, best))
                    best = i;
            }
        hits[0] = (glcv_match_hit){(int)(best % w), (int)(best / w), 0, 0, score_at(m, best)};
        found = 1;
    } else if (st == GLCV_OK && n > 0) {
        heap h = {malloc(n * sizeof(uint32_t)), 0, m, is_distance(m)};
        if (!h.idx) {
            st = glcv_fail(&m->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "match: out of memory for best-k");
        } else {
            for (int y = r.y0; y < r.y1; y++)
                for (int x = r.x0; x < r.x1; x++)
                    h.idx[h.n++] = (uint32_t)((size_t)y * w + (size_t)x);
            for (size_t i = h.n / 2; i-- > 0;)
                sift_down(&h, i);
            int d = m->p.nms_distance > 0 ? m->p.nms_distance : 1;
            while (found < k && h.n > 0) {
                uint32_t top = h.idx[0];
                h.idx[0] = h.idx[--h.n];
                sift_down(&h, 0);
                int x = (int)(top % w), y = (int)(top / w), keep = 1;
                for (int j = 0; j < found && keep; j++)
                    keep = abs(hits[j].x - x) >= d || abs(hits[j].y - y) >= d;
                if (keep)
                    hits[found++] = (glcv_match_hit){x, y, 0, 0, score_at(m, top)};
            }
            free(h.idx);
        }
    }
    for (int j = 0; j < found; j++) {
        hits[j].cx = hits[j].x + m->tmpl.width / 2;
        hits[j].cy = hits[j].y + m->tmpl.height / 2;
    }
    *count = found;
    pthread_mutex_unlock(&m->lock);
    return st;
}

glcv_status glcv_match_timings(glcv_match *m, glcv_timing *out, int capacity, int *count)
{
    GLCV_LOCKED_CALL(m, glcv_timings_copy(m->timings, m->n_timings, out, capacity, count));
}
