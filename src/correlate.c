/* The correlator object: parameters, the reference, validation, files and textures, and the
 * dispatch of each call to its engine - the CPU implementation (correlate_cpu.c) or CUDA
 * (correlate_cuda.c). Pearson's coefficient of one reference against N images, from exact
 * integer sums (Temizel et al., GPU Gems ch. 34). */
#include "correlate_internal.h"

#include "core_internal.h"
#include "gl.h"

#include <glcv/image.h>

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZE 16384
#define DEFAULT_BATCH 256
#define MAX_BATCH 65536
#define FILE_CHUNK 64

/* Loading a chunk of files, for glcv_parallel_for: the error of the first file that fails, in
 * the order of the paths whatever thread gets there first. */
typedef struct file_loop {
    glcv_correlate *c;
    const char *const *paths;
    glcv_image *images;
    pthread_mutex_t lock;
    glcv_status status;
    int failed_at; /* the first failing index, or INT_MAX */
} file_loop;

static void files_range(void *user, int begin, int end)
{
    file_loop *l = user;
    glcv_correlate *c = l->c;
    for (int i = begin; i < end; i++) {
        glcv_status one = glcv_image_load(l->paths[i], c->p.format, &c->p.logger, &l->images[i]);
        if (one == GLCV_OK && (l->images[i].width != c->p.width || l->images[i].height != c->p.height)) {
            glcv_fail(&c->p.logger, GLCV_ERROR_SIZE_MISMATCH, "correlate: '%s' is %dx%d, the correlator %dx%d",
                      l->paths[i], l->images[i].width, l->images[i].height, c->p.width, c->p.height);
            one = GLCV_ERROR_SIZE_MISMATCH;
        }
        if (one != GLCV_OK) {
            pthread_mutex_lock(&l->lock);
            if (i < l->failed_at) {
                l->failed_at = i;
                l->status = one;
            }
            pthread_mutex_unlock(&l->lock);
        }
    }
}

static int on_cuda(const glcv_correlate *c)
{
    return c->cuda != NULL;
}

/* ---- create / destroy ----------------------------------------------------------------------- */

glcv_status glcv_correlate_create(const glcv_correlate_params *params, glcv_correlate **out)
{
    GLCV_CREATE_BEGIN(params, out);
    glcv_correlate_params p = *params;
    const glcv_logger *lg = &params->logger;
    glcv_status st = glcv_check_size(lg, "correlate", p.width, p.height, MAX_SIZE);
    if (st != GLCV_OK)
        return st;
    if (p.format == GLCV_PIXEL_DEFAULT)
        p.format = GLCV_PIXEL_GRAY8;
    if (p.format != GLCV_PIXEL_GRAY8 && p.format != GLCV_PIXEL_RGB8)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "correlate: format %d: GRAY8 or RGB8 expected",
                         (int)p.format);
    if (p.threads < 0 || p.threads > 4096 || p.cuda_device < 0)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "correlate: threads %d / cuda_device %d out of range",
                         p.threads, p.cuda_device);
    GLCV_DEFAULT(p.cuda_devices, 1);
    if (p.cuda_devices < -1 || p.cuda_devices > GLCV_CORRELATE_MAX_DEVICES)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "correlate: cuda_devices %d must be -1 or 1..%d",
                         p.cuda_devices, GLCV_CORRELATE_MAX_DEVICES);
    if (p.batch == 0)
        p.batch = DEFAULT_BATCH;
    if (p.batch < 1 || p.batch > MAX_BATCH)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "correlate: batch %d must be 1..%d", p.batch, MAX_BATCH);

    glcv_correlate *c = calloc(1, sizeof *c);
    if (!c)
        return GLCV_ERROR_OUT_OF_MEMORY;
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return GLCV_ERROR_OUT_OF_MEMORY;
    }
    c->channels = p.format == GLCV_PIXEL_RGB8 ? 3 : 1;
    c->samples = (size_t)p.width * (size_t)p.height * (size_t)c->channels;
    c->padded = (c->samples + 15) & ~(size_t)15;
    c->avx2 = !p.no_simd && glcv_correlate_cpu_avx2();
    p.no_simd = !c->avx2;
    c->reference = calloc(1, c->padded);
    if (!c->reference) {
        glcv_correlate_destroy(&c);
        return GLCV_ERROR_OUT_OF_MEMORY;
    }

    c->p = p;
    glcv_cuda_device device;
    st = glcv_cuda_choose("correlate", p.engine, p.cuda_device, lg, &c->p.engine, &device);
    if (st == GLCV_OK && c->p.engine == GLCV_ENGINE_CUDA) {
        st = glcv_correlate_cuda_create(c, &device);
        c->p.cuda_device = device.device;
    } else {
        c->p.cuda_devices = 0; /* the CPU engine uses none */
    }
    if (st != GLCV_OK) {
        glcv_correlate_destroy(&c);
        return st;
    }
    *out = c;
    return GLCV_OK;
}

void glcv_correlate_destroy(glcv_correlate **correlate)
{
    if (!correlate || !*correlate)
        return;
    glcv_correlate *c = *correlate;
    glcv_correlate_cuda_destroy(c);
    free(c->reference);
    free(c->bank);
    pthread_mutex_destroy(&c->lock);
    free(c);
    *correlate = NULL;
}

glcv_status glcv_correlate_get_params(glcv_correlate *c, glcv_correlate_params *out)
{
    GLCV_LOCKED_COPY(c, p, out);
}

/* ---- inputs ----------------------------------------------------------------------------------- */

static glcv_status check_image(glcv_correlate *c, const glcv_image *img, const char *what)
{
    if (glcv_image_check(img) != GLCV_OK)
        return glcv_fail(&c->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "correlate: %s is not a valid image", what);
    if (img->width != c->p.width || img->height != c->p.height)
        return glcv_fail(&c->p.logger, GLCV_ERROR_SIZE_MISMATCH, "correlate: %s is %dx%d, the correlator %dx%d", what,
                         img->width, img->height, c->p.width, c->p.height);
    return GLCV_OK;
}

static glcv_status set_reference_locked(glcv_correlate *c, const glcv_image *ref)
{
    glcv_status st = check_image(c, ref, "the reference");
    if (st != GLCV_OK)
        return st;
    glcv_correlate_pack(c, ref, c->reference);
    int64_t s = 0, q = 0;
    for (size_t i = 0; i < c->samples; i++) {
        s += c->reference[i];
        q += (int64_t)c->reference[i] * c->reference[i];
    }
    c->ref_sum = s;
    c->ref_sum_sq = q;
    c->have_reference = 0;
    if (on_cuda(c) && (st = glcv_correlate_cuda_set_reference(c)) != GLCV_OK)
        return st;
    c->have_reference = 1;
    return GLCV_OK;
}

glcv_status glcv_correlate_set_reference(glcv_correlate *c, const glcv_image *reference)
{
    GLCV_LOCKED_CALL(c, set_reference_locked(c, reference));
}

static glcv_status read_texture(glcv_correlate *c, unsigned int texture, glcv_image *out)
{
    glcv_status st = glcv_image_alloc(c->p.width, c->p.height, GLCV_PIXEL_RGB8, out);
    if (st != GLCV_OK)
        return glcv_fail(&c->p.logger, st, "correlate: cannot allocate a texture read-back");
    st = glcv_gl_read_rgb(texture, c->p.width, c->p.height, out->data, &c->p.logger);
    if (st != GLCV_OK)
        glcv_image_free(out);
    return st;
}

glcv_status glcv_correlate_set_reference_texture(glcv_correlate *c, unsigned int texture)
{
    if (!c)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&c->lock);
    glcv_image rgb = {0};
    glcv_status st = read_texture(c, texture, &rgb);
    if (st == GLCV_OK)
        st = set_reference_locked(c, &rgb);
    glcv_image_free(&rgb);
    pthread_mutex_unlock(&c->lock);
    return st;
}

/* ---- correlating ------------------------------------------------------------------------------ */

static glcv_status check_batch(glcv_correlate *c, const glcv_image *images, int n, const double *r)
{
    if (!images || n < 1 || !r)
        return glcv_fail(&c->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "correlate: NULL images or results, or n < 1");
    for (int i = 0; i < n; i++) {
        char what[48];
        snprintf(what, sizeof what, "image %d", i);
        glcv_status st = check_image(c, &images[i], what);
        if (st != GLCV_OK)
            return st;
    }
    return GLCV_OK;
}

static glcv_status images_locked(glcv_correlate *c, const glcv_image *images, int n, double *r)
{
    glcv_status st = check_batch(c, images, n, r);
    if (st != GLCV_OK)
        return st;
    if (!c->have_reference)
        return glcv_fail(&c->p.logger, GLCV_ERROR_STATE, "correlate: no reference set");
    return on_cuda(c) ? glcv_correlate_cuda_images(c, images, n, r) : glcv_correlate_cpu_images(c, images, n, r);
}

glcv_status glcv_correlate_images(glcv_correlate *c, const glcv_image *images, int n, double *r)
{
    GLCV_LOCKED_CALL(c, images_locked(c, images, n, r));
}

glcv_status glcv_correlate_files(glcv_correlate *c, const char *const *paths, int n, double *r)
{
    if (!c)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (!paths || n < 1 || !r)
        return glcv_fail(&c->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "correlate: NULL paths or results, or n < 1");
    for (int i = 0; i < n; i++)
        if (!paths[i] || !*paths[i])
            return glcv_fail(&c->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "correlate: paths[%d] is NULL or empty", i);
    pthread_mutex_lock(&c->lock);
    glcv_status st =
        c->have_reference ? GLCV_OK : glcv_fail(&c->p.logger, GLCV_ERROR_STATE, "correlate: no reference set");
    int chunk = on_cuda(c) ? c->p.batch : FILE_CHUNK;
    glcv_image *images = st == GLCV_OK ? calloc((size_t)(n < chunk ? n : chunk), sizeof *images) : NULL;
    if (st == GLCV_OK && !images)
        st = GLCV_ERROR_OUT_OF_MEMORY;
    double up = 0, kernel = 0, down = 0, total = 0;
    for (int first = 0; first < n && st == GLCV_OK; first += chunk) {
        int count = n - first < chunk ? n - first : chunk;
        file_loop load = {c, paths + first, images, PTHREAD_MUTEX_INITIALIZER, GLCV_OK, INT_MAX};
        glcv_parallel_for(count, c->p.threads, files_range, &load);
        pthread_mutex_destroy(&load.lock);
        st = load.status;
        if (st == GLCV_OK)
            st = images_locked(c, images, count, r + first);
        for (int i = 0; i < c->n_timings; i++) {
            double *sum = strcmp(c->timings[i].name, "upload") == 0     ? &up
                          : strcmp(c->timings[i].name, "kernel") == 0   ? &kernel
                          : strcmp(c->timings[i].name, "download") == 0 ? &down
                                                                         : &total;
            *sum += c->timings[i].ms;
        }
        for (int i = 0; i < count; i++)
            glcv_image_free(&images[i]);
    }
    if (st == GLCV_OK && on_cuda(c)) {
        glcv_timing t[4] = {{"upload", up, 1, GLCV_CLOCK_GPU}, {"kernel", kernel, 1, GLCV_CLOCK_GPU}, {"download", down, 1, GLCV_CLOCK_GPU}, {"total", total, 1, GLCV_CLOCK_GPU}};
        memcpy(c->timings, t, sizeof t);
        c->n_timings = 4;
    } else if (st == GLCV_OK) {
        glcv_timing t = {"correlate", total, 1, GLCV_CLOCK_HOST};
        c->timings[0] = t;
        c->n_timings = 1;
    }
    free(images);
    pthread_mutex_unlock(&c->lock);
    return st;
}

glcv_status glcv_correlate_textures(glcv_correlate *c, const unsigned int *textures, int n, double *r)
{
    if (!c)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (!textures || n < 1 || !r)
        return glcv_fail(&c->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "correlate: NULL textures or results, or n < 1");
    pthread_mutex_lock(&c->lock);
    glcv_status st =
        c->have_reference ? GLCV_OK : glcv_fail(&c->p.logger, GLCV_ERROR_STATE, "correlate: no reference set");
    if (st == GLCV_OK && on_cuda(c)) {
        glcv_status cuda = glcv_correlate_cuda_textures(c, textures, n, r);
        if (cuda != GLCV_ERROR_UNSUPPORTED) { /* UNSUPPORTED: not on the GL context's device */
            pthread_mutex_unlock(&c->lock);
            return cuda;
        }
    }
    glcv_image *images = st == GLCV_OK ? calloc((size_t)n, sizeof *images) : NULL;
    if (st == GLCV_OK && !images)
        st = glcv_fail(&c->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "correlate: out of memory");
    for (int i = 0; i < n && st == GLCV_OK; i++)
        st = read_texture(c, textures[i], &images[i]);
    if (st == GLCV_OK)
        st = images_locked(c, images, n, r);
    for (int i = 0; images && i < n; i++)
        glcv_image_free(&images[i]);
    free(images);
    pthread_mutex_unlock(&c->lock);
    return st;
}

glcv_status glcv_correlate_forget_texture(glcv_correlate *c, unsigned int texture)
{
    GLCV_LOCKED_CALL(c, c->cuda ? glcv_correlate_cuda_forget_texture(c, texture) : GLCV_OK);
}

glcv_status glcv_correlate_bank_load(glcv_correlate *c, const glcv_image *images, int n)
{
    if (!c)
        return GLCV_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&c->lock);
    double dummy = 0;
    glcv_status st = check_batch(c, images, n, &dummy);
    if (st == GLCV_OK) {
        c->bank_n = 0;
        if (on_cuda(c)) {
            st = glcv_correlate_cuda_bank_load(c, images, n);
            if (st == GLCV_OK)
                c->bank_n = n;
            pthread_mutex_unlock(&c->lock);
            return st;
        }
        uint8_t *bank = realloc(c->bank, (size_t)n * c->samples);
        if (!bank) {
            st = glcv_fail(&c->p.logger, GLCV_ERROR_OUT_OF_MEMORY, "correlate: cannot hold %d images", n);
        } else {
            c->bank = bank;
            for (int i = 0; i < n; i++)
                glcv_correlate_pack(c, &images[i], bank + (size_t)i * c->samples);
            c->bank_n = n;
        }
    }
    pthread_mutex_unlock(&c->lock);
    return st;
}

static glcv_status bank_run(glcv_correlate *c, double *r)
{
    if (!c->bank_n)
        return glcv_fail(&c->p.logger, GLCV_ERROR_STATE, "correlate: no image bank loaded");
    if (!c->have_reference)
        return glcv_fail(&c->p.logger, GLCV_ERROR_STATE, "correlate: no reference set");
    if (on_cuda(c))
        return glcv_correlate_cuda_bank_run(c, r);
    glcv_correlate_cpu_bank(c, r);
    return GLCV_OK;
}

glcv_status glcv_correlate_bank_run(glcv_correlate *c, double *r)
{
    if (!c)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (!r)
        return glcv_fail(&c->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "correlate: bank_run: NULL r");
    GLCV_LOCKED_CALL(c, bank_run(c, r));
}

int glcv_correlate_bank_size(glcv_correlate *c)
{
    if (!c)
        return -1;
    pthread_mutex_lock(&c->lock);
    int n = c->bank_n;
    pthread_mutex_unlock(&c->lock);
    return n;
}

glcv_status glcv_correlate_timings(glcv_correlate *c, glcv_timing *out, int capacity, int *count)
{
    GLCV_LOCKED_CALL(c, glcv_timings_copy(c->timings, c->n_timings, out, capacity, count));
}

/* ---- for tests and benchmarks ----------------------------------------------------------------- */

static glcv_status set_images_per_block(glcv_correlate *c, int k)
{
    if (k != 0 && k != 1 && k != 2 && k != 4)
        return glcv_fail(&c->p.logger, GLCV_ERROR_INVALID_ARGUMENT, "correlate: %d images per block (0, 1, 2 or 4)", k);
    if (!on_cuda(c))
        return glcv_fail(&c->p.logger, GLCV_ERROR_UNSUPPORTED, "correlate: images per block is for the CUDA engine");
    c->images_per_block = k;
    return GLCV_OK;
}

glcv_status glcv_correlate_set_images_per_block(glcv_correlate *c, int k)
{
    GLCV_LOCKED_CALL(c, set_images_per_block(c, k));
}
