/* multicam_bench: how many cameras one GPU (or every GPU of the host) serves in real time with
 * background subtraction - the metric of Temizel et al. (GPU Gems 3, chapter 34): the number of
 * frames processed in 40 ms, i.e. cameras at 25 frames per second.
 *
 *   multicam_bench [--sizes 160x120,320x240,640x480,720x576] [--engines fragment,compute]
 *                  [--variants vsam,vsam-multi,vsam-gray,vsam-gray-unpacked,diff2,diff3]
 *                  [--streams N] [--seconds S] [--gpus G] [--csv FILE]
 *
 * Per size, engine and variant, one glcv_bgsub object holds N cameras (default: about 64
 * megapixels per set, at most 2048) as the layers of its texture arrays:
 *   gpu ms      GPU time of the passes of one set (timer queries, median over the sets)
 *   cams no-I/O 40 ms / (gpu ms / N): the chapter's "I/O not included"
 *   cams I/O    sets per second * N / 25 with every set uploaded from pinned memory
 *               (glcv_bgsub_map_frames: the producer - a decoder - writes the frames there; the
 *               benchmark writes them once) and its masks downloaded (params.download, read with
 *               glcv_bgsub_map_masks one set behind): the chapter's "I/O included", pipelined
 *   Gpix/s      pixels per second with I/O
 *   floor       cameras at 25 fps that moving the frames alone allows: the faster of a buffer
 *               copy of a set from pinned memory and a compute shader reading it there (both
 *               measured here with nothing else running, as GB/s), and the fraction of it that
 *               "cams I/O" reaches
 * Variants: vsam (RGB frames, single pass), vsam-multi (the chain of passes), vsam-gray (gray
 * frames, 4 pixels per texel), vsam-gray-unpacked (one gray pixel per texel), vsam-gray-multi,
 * diff2, diff3 (RGB), all with the default upload (compute: streamed for packed gray, a buffer
 * copy otherwise); vsam-stream (compute only) streams RGB frames, each invocation reading its
 * own pixel's bytes; vsam-stream-blocks (compute only) streams them in blocks of 64 x 4 pixels,
 * 16-byte loads side by side (GLCV_BGSUB_UPLOAD_STREAM_BLOCKS); vsam-stream-fused (compute only)
 * does so in one dispatch per set that also votes the set before and writes its masks
 * (GLCV_BGSUB_UPLOAD_STREAM_FUSED: masks one set later, which the loop's reads one set behind
 * absorb); vsam-gray-copy copies packed gray ones. eth and eth-rgba: the ETH segmenter
 * (glcv_segment with params.streams, 8 iterations, adaptation on) with RGB or RGBA frames
 * mapped, masks mapped after each set. --gpus G > 1 runs G copies at once, one thread, context
 * and object per GPU (EGL device
 * of CUDA device g), and reports the sum of the "cams I/O" of all of them (0: every GPU CUDA
 * sees). */
#define _POSIX_C_SOURCE 200809L
#include <glcv/glcv.h>

#include "benchutil.h"
#include "engine.h"

#include <epoxy/gl.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LIST 16
#define MAX_GPUS 16

typedef struct variant {
    const char *name;
    glcv_bgsub_method method;
    glcv_pixel_format format;
    int packed;
    glcv_bgsub_passes passes;
    glcv_bgsub_upload upload;
    int eth; /* the ETH segmenter (glcv_segment with streams), frames mapped in `format` */
} variant;

static const variant all_variants[] = {
    {"vsam", GLCV_BGSUB_VSAM, GLCV_PIXEL_RGB8, -1, GLCV_BGSUB_SINGLE_PASS, GLCV_BGSUB_UPLOAD_DEFAULT, 0},
    {"vsam-multi", GLCV_BGSUB_VSAM, GLCV_PIXEL_RGB8, -1, GLCV_BGSUB_MULTI_PASS, GLCV_BGSUB_UPLOAD_DEFAULT, 0},
    {"vsam-gray", GLCV_BGSUB_VSAM, GLCV_PIXEL_GRAY8, 1, GLCV_BGSUB_SINGLE_PASS, GLCV_BGSUB_UPLOAD_DEFAULT, 0},
    {"vsam-gray-unpacked", GLCV_BGSUB_VSAM, GLCV_PIXEL_GRAY8, -1, GLCV_BGSUB_SINGLE_PASS, GLCV_BGSUB_UPLOAD_DEFAULT, 0},
    {"vsam-gray-multi", GLCV_BGSUB_VSAM, GLCV_PIXEL_GRAY8, 1, GLCV_BGSUB_MULTI_PASS, GLCV_BGSUB_UPLOAD_DEFAULT, 0},
    {"diff2", GLCV_BGSUB_DIFF2, GLCV_PIXEL_RGB8, -1, GLCV_BGSUB_SINGLE_PASS, GLCV_BGSUB_UPLOAD_DEFAULT, 0},
    {"diff3", GLCV_BGSUB_DIFF3, GLCV_PIXEL_RGB8, -1, GLCV_BGSUB_SINGLE_PASS, GLCV_BGSUB_UPLOAD_DEFAULT, 0},
    {"vsam-stream", GLCV_BGSUB_VSAM, GLCV_PIXEL_RGB8, -1, GLCV_BGSUB_SINGLE_PASS, GLCV_BGSUB_UPLOAD_STREAM, 0},
    {"vsam-stream-blocks", GLCV_BGSUB_VSAM, GLCV_PIXEL_RGB8, -1, GLCV_BGSUB_SINGLE_PASS,
     GLCV_BGSUB_UPLOAD_STREAM_BLOCKS, 0},
    {"vsam-stream-fused", GLCV_BGSUB_VSAM, GLCV_PIXEL_RGB8, -1, GLCV_BGSUB_SINGLE_PASS,
     GLCV_BGSUB_UPLOAD_STREAM_FUSED, 0},
    {"vsam-gray-copy", GLCV_BGSUB_VSAM, GLCV_PIXEL_GRAY8, 1, GLCV_BGSUB_SINGLE_PASS, GLCV_BGSUB_UPLOAD_COPY, 0},
    {"eth", 0, GLCV_PIXEL_RGB8, 0, 0, 0, 1},
    {"eth-rgba", 0, GLCV_PIXEL_RGBA8, 0, 0, 0, 1},
};
#define N_VARIANTS (int)(sizeof all_variants / sizeof all_variants[0])

typedef struct options {
    int sizes[MAX_LIST][2];
    int n_sizes;
    glcv_engine_mode engines[4];
    int n_engines;
    int variants[N_VARIANTS];
    int n_variants;
    int streams;
    double seconds;
    int gpus;
    const char *csv;
} options;

typedef struct result {
    double gpu_ms;   /* per set */
    double cams_io;  /* at 25 fps, with upload and download */
    double gpix_io;  /* gigapixels per second with I/O */
    double floor_cams;
    int ok;
} result;

/* ---- one run: an object of N streams on the current context ------------------------------------ */

/* Errors of the objects measured go to stderr (a failed row says why). */
static const glcv_logger errors = {glcv_log_stderr, NULL, GLCV_LOG_ERROR};

/* A frame set with structure: a gradient background and a square that moves with the set index
 * (so that masks are not empty), written into the mapped memory once per staging slot. */
static void fill(glcv_image *im, int n, int t)
{
    for (int s = 0; s < n; s++) {
        int bpp = glcv_pixel_format_size(im[s].format);
        for (int y = 0; y < im[s].height; y++) {
            uint8_t *row = im[s].data + im[s].stride * (size_t)y;
            for (int x = 0; x < im[s].width; x++) {
                int in = x >= 10 + 7 * t && x < 40 + 7 * t && y >= 10 && y < 40;
                for (int k = 0; k < bpp; k++)
                    row[x * bpp + k] = (uint8_t)(in ? 220 : 40 + (x + y + 13 * s) % 64);
            }
        }
    }
}

/* One object of N streams behind the calls the measurement makes: a bgsub (masks read one set
 * behind, downloaded while the next set runs) or the ETH segmenter (8 iterations, default
 * parameters, adaptation on; masks mapped after each set). */
typedef struct subject {
    const variant *v;
    glcv_bgsub *b;
    glcv_segment *seg;
    int n;
} subject;

static glcv_status map_set(subject *o, glcv_image *frames)
{
    return o->seg ? glcv_segment_map_frames(o->seg, o->v->format, frames, o->n)
                  : glcv_bgsub_map_frames(o->b, frames, o->n);
}

static glcv_status run_set(subject *o, int wait)
{
    return o->seg ? glcv_segment_frames_mapped(o->seg, wait) : glcv_bgsub_frames_mapped(o->b, wait);
}

/* The masks of the set before (bgsub; age 0: the last set's) or of the last set (ETH). */
static glcv_status masks_of(subject *o, int age, glcv_image *masks)
{
    return o->seg ? glcv_segment_map_masks(o->seg, masks, o->n) : glcv_bgsub_map_masks(o->b, age, masks, o->n);
}

static glcv_status timings_of(subject *o, glcv_timing *t, int capacity, int *count)
{
    return o->seg ? glcv_segment_timings(o->seg, t, capacity, count, 1) : glcv_bgsub_timings(o->b, t, capacity, count, 1);
}

static glcv_status make_subject(glcv_engine_mode engine, const variant *v, int w, int h, int n, int timing_run,
                                subject *o)
{
    *o = (subject){.v = v, .n = n};
    if (v->eth) {
        glcv_segment_params p = GLCV_SEGMENT_PARAMS(.width = w, .height = h, .streams = n, .engine = engine,
                                                    .timing = timing_run, .logger = errors);
        glcv_status st = glcv_segment_create(&p, &o->seg);
        glcv_image *bg = st == GLCV_OK ? calloc((size_t)n, sizeof *bg) : NULL;
        if (st == GLCV_OK && !bg)
            st = GLCV_ERROR_OUT_OF_MEMORY;
        /* the background: a set without the square */
        if (st == GLCV_OK && (st = map_set(o, bg)) == GLCV_OK) {
            fill(bg, n, -100);
            st = glcv_segment_set_backgrounds(o->seg, bg, n);
        }
        free(bg);
        return st;
    }
    glcv_bgsub_params p = GLCV_BGSUB_PARAMS(.width = w, .height = h, .streams = n, .method = v->method,
                                            .format = v->format, .packed = v->packed, .passes = v->passes, .upload = v->upload,
                                            .engine = engine, .download = !timing_run, .timing = timing_run,
                                            .logger = errors);
    glcv_status st = glcv_bgsub_create(&p, &o->b);
    glcv_bgsub_params used;
    if (st == GLCV_OK && timing_run && v->upload && glcv_bgsub_get_params(o->b, &used) == GLCV_OK &&
        used.upload != v->upload)
        printf("# %s %dx%d: upload %d instead of %d (its fallback for this size)\n", v->name, w, h, (int)used.upload,
               (int)v->upload);
    return st;
}

static glcv_status measure(glcv_engine_mode engine, const variant *v, int w, int h, int n, double seconds,
                           int timing_run, result *r)
{
    subject o;
    glcv_status st = make_subject(engine, v, w, h, n, timing_run, &o);
    glcv_image *frames = calloc((size_t)n, sizeof *frames), *masks = calloc((size_t)n, sizeof *masks);
    if (st == GLCV_OK && (!frames || !masks))
        st = GLCV_ERROR_OUT_OF_MEMORY;
    /* Fill the staging slots (three) once, as a decoder would write into them. */
    for (int k = 0; k < 3 && st == GLCV_OK; k++) {
        if ((st = map_set(&o, frames)) == GLCV_OK) {
            fill(frames, n, k);
            st = run_set(&o, 1);
        }
    }
    if (st == GLCV_OK && timing_run) {
        double ms[64];
        int got = 0;
        for (int i = 0; i < 64 && st == GLCV_OK; i++) {
            if ((st = map_set(&o, frames)) == GLCV_OK)
                st = run_set(&o, 1);
            glcv_timing t[16];
            int count = 0;
            if (st == GLCV_OK && timings_of(&o, t, 16, &count) == GLCV_OK && count > 0) {
                double sum = 0;
                for (int k = 0; k < count; k++)
                    sum += t[k].ms;
                ms[got++] = sum;
            }
        }
        r->gpu_ms = bench_median(ms, got);
    } else if (st == GLCV_OK) {
        long sets = 0;
        double t0 = bench_now_ms(), t1 = t0;
        while (st == GLCV_OK && t1 - t0 < seconds * 1000.0) {
            if ((st = map_set(&o, frames)) == GLCV_OK)
                st = run_set(&o, 0);
            if (st == GLCV_OK)
                st = masks_of(&o, 1, masks);
            sets++;
            t1 = bench_now_ms();
        }
        if (st == GLCV_OK)
            st = masks_of(&o, 0, masks);
        t1 = bench_now_ms();
        double per_s = sets / ((t1 - t0) / 1000.0);
        r->cams_io = per_s * n / 25.0;
        r->gpix_io = per_s * n * (double)w * h / 1e9;
    }
    free(frames);
    free(masks);
    glcv_bgsub_destroy(&o.b);
    glcv_segment_destroy(&o.seg);
    return st;
}

/* Raw GL, for comparison: `bytes` copied from persistently mapped client memory into a
 * device buffer (glCopyBufferSubData) or an R8UI texture array of w * bpp x h x n (as
 * upload_floor), three staging buffers in turn. GB/s. */
static double copy_rate(size_t bytes, int to_texture, int w, int h, int n, int bpp, double seconds)
{
    GLuint src[3], dst = 0, tex = 0;
    glGenBuffers(3, src);
    const GLbitfield flags = GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
    for (int i = 0; i < 3; i++) {
        glBindBuffer(GL_COPY_READ_BUFFER, src[i]);
        glBufferStorage(GL_COPY_READ_BUFFER, (GLsizeiptr)bytes, NULL, flags);
        void *m = glMapBufferRange(GL_COPY_READ_BUFFER, 0, (GLsizeiptr)bytes, flags);
        if (m)
            memset(m, i, bytes);
    }
    if (to_texture) {
        glGenTextures(1, &tex);
        glBindTexture(GL_TEXTURE_2D_ARRAY, tex);
        glTexStorage3D(GL_TEXTURE_2D_ARRAY, 1, GL_R8UI, w * bpp, h, n);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    } else {
        glGenBuffers(1, &dst);
        glBindBuffer(GL_COPY_WRITE_BUFFER, dst);
        glBufferStorage(GL_COPY_WRITE_BUFFER, (GLsizeiptr)bytes, NULL, 0);
    }
    glFinish();
    long sets = 0;
    double t0 = bench_now_ms(), t1 = t0;
    while (t1 - t0 < seconds * 1000.0 && glGetError() == GL_NO_ERROR) {
        GLuint s = src[sets % 3];
        if (to_texture) {
            glBindBuffer(GL_PIXEL_UNPACK_BUFFER, s);
            glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, 0, 0, w * bpp, h, n, GL_RED_INTEGER, GL_UNSIGNED_BYTE, NULL);
            glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
        } else {
            glBindBuffer(GL_COPY_READ_BUFFER, s);
            glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, (GLsizeiptr)bytes);
        }
        glFlush();
        sets++;
        if (sets % 3 == 0)
            glFinish();
        t1 = bench_now_ms();
    }
    glFinish();
    t1 = bench_now_ms();
    glDeleteBuffers(3, src);
    if (dst)
        glDeleteBuffers(1, &dst);
    if (tex)
        glDeleteTextures(1, &tex);
    return sets * (double)bytes / ((t1 - t0) / 1000.0) / 1e9;
}

/* Raw GL experiments on how to move frames: (1) a compute shader reading `bytes` from
 * persistently mapped client memory (as a storage buffer) and writing them to a device buffer
 * (the GPU reading host memory itself); (2) a device-buffer copy alongside a compute shader that
 * works on other buffers, to see whether GL runs them at once. Prints GB/s and ms. */
static GLuint compile_compute(const char *src)
{
    GLuint sh = glCreateShader(GL_COMPUTE_SHADER);
    glShaderSource(sh, 1, &src, NULL);
    glCompileShader(sh);
    GLuint p = glCreateProgram();
    glAttachShader(p, sh);
    glLinkProgram(p);
    glDeleteShader(sh);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    return ok ? p : 0;
}

static double io_experiments(size_t bytes, double seconds)
{
    static const char copy_src[] = "#version 430\n"
                                   "layout(local_size_x = 256) in;\n"
                                   "layout(std430, binding = 0) readonly buffer A { uvec4 a[]; };\n"
                                   "layout(std430, binding = 1) writeonly buffer B { uvec4 b[]; };\n"
                                   "uniform uint n;\n"
                                   "void main() { uint i = gl_GlobalInvocationID.x; if (i < n) b[i] = a[i]; }\n";
    static const char work_src[] = "#version 430\n"
                                   "layout(local_size_x = 256) in;\n"
                                   "layout(std430, binding = 0) buffer A { uvec4 a[]; };\n"
                                   "uniform uint n;\n"
                                   "void main() { uint i = gl_GlobalInvocationID.x; if (i < n) {\n"
                                   "  uvec4 v = a[i]; for (int k = 0; k < 64; k++) v = v * 1664525u + 1013904223u;\n"
                                   "  a[i] = v; } }\n";
    GLuint copy = compile_compute(copy_src), work = compile_compute(work_src);
    if (!copy || !work) {
        printf("# io experiments: shaders failed\n");
        return 0;
    }
    GLuint host = 0, dev[3];
    glGenBuffers(1, &host);
    glGenBuffers(3, dev);
    const GLbitfield flags = GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, host);
    glBufferStorage(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)bytes, NULL, flags | GL_CLIENT_STORAGE_BIT);
    void *m = glMapBufferRange(GL_SHADER_STORAGE_BUFFER, 0, (GLsizeiptr)bytes, flags);
    if (m)
        memset(m, 7, bytes);
    for (int i = 0; i < 3; i++) {
        glBindBuffer(GL_SHADER_STORAGE_BUFFER, dev[i]);
        glBufferStorage(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)bytes, NULL, 0);
    }
    GLuint n16 = (GLuint)(bytes / 16);
    /* (1) shader reads host memory */
    glUseProgram(copy);
    glUniform1ui(glGetUniformLocation(copy, "n"), n16);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, host);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 1, dev[0]);
    glFinish();
    int reps = 0;
    double t0 = bench_now_ms(), t1 = t0;
    while (t1 - t0 < seconds * 500.0) {
        glDispatchCompute((n16 + 255) / 256, 1, 1);
        glFinish();
        reps++;
        t1 = bench_now_ms();
    }
    double read_gbs = reps * (double)bytes / ((t1 - t0) / 1000.0) / 1e9;
    /* (2) work alone, copy alone, both interleaved */
    glUseProgram(work);
    glUniform1ui(glGetUniformLocation(work, "n"), n16);
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, dev[1]);
    glFinish();
    t0 = bench_now_ms();
    for (int i = 0; i < 10; i++)
        glDispatchCompute((n16 + 255) / 256, 1, 1);
    glFinish();
    double work_ms = (bench_now_ms() - t0) / 10;
    glBindBuffer(GL_COPY_READ_BUFFER, host);
    glBindBuffer(GL_COPY_WRITE_BUFFER, dev[2]);
    t0 = bench_now_ms();
    for (int i = 0; i < 10; i++)
        glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, (GLsizeiptr)bytes);
    glFinish();
    double copy_ms = (bench_now_ms() - t0) / 10;
    t0 = bench_now_ms();
    for (int i = 0; i < 10; i++) {
        glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, (GLsizeiptr)bytes);
        glDispatchCompute((n16 + 255) / 256, 1, 1);
    }
    glFinish();
    double both_ms = (bench_now_ms() - t0) / 10;
    printf("# io: %.0f MB: shader reading host memory %.1f GB/s; work %.2f ms, copy %.2f ms (%.1f GB/s), both "
           "interleaved %.2f ms (%s)\n",
           bytes / 1e6, read_gbs, work_ms, copy_ms, bytes / copy_ms / 1e6, both_ms,
           both_ms < 0.8 * (work_ms + copy_ms) ? "overlapped" : "serial");
    glUseProgram(0);
    glDeleteBuffers(1, &host);
    glDeleteBuffers(3, dev);
    glDeleteProgram(copy);
    glDeleteProgram(work);
    return read_gbs;
}

/* ---- several GPUs ------------------------------------------------------------------------------- */

typedef struct gpu_job {
    int gpu;
    glcv_engine_mode engine;
    const variant *v;
    int w, h, n;
    double seconds;
    pthread_barrier_t *start;
    result r;
    glcv_status st;
    char describe[256];
} gpu_job;

static void *gpu_thread(void *arg)
{
    gpu_job *j = arg;
    glcv_context *ctx = NULL;
    glcv_context_params cp = GLCV_CONTEXT_PARAMS(.match_cuda_device = 1, .cuda_device = j->gpu,
                                                 .min_gl_version = j->engine == GLCV_ENGINE_COMPUTE ? 43 : 33);
    j->st = glcv_context_create(&cp, &ctx);
    if (j->st == GLCV_OK) {
        snprintf(j->describe, sizeof j->describe, "%s (CUDA device %d)", glcv_context_describe(ctx),
                 glcv_context_cuda_device(ctx));
        if (glcv_context_cuda_device(ctx) != j->gpu)
            j->st = GLCV_ERROR_UNSUPPORTED;
    }
    pthread_barrier_wait(j->start);
    if (j->st == GLCV_OK)
        j->st = measure(j->engine, j->v, j->w, j->h, j->n, j->seconds, 0, &j->r);
    glcv_context_destroy(&ctx);
    return NULL;
}

static double run_gpus(int gpus, glcv_engine_mode engine, const variant *v, int w, int h, int n, double seconds)
{
    gpu_job jobs[MAX_GPUS];
    pthread_t th[MAX_GPUS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)gpus);
    for (int g = 0; g < gpus; g++) {
        jobs[g] = (gpu_job){.gpu = g, .engine = engine, .v = v, .w = w, .h = h, .n = n, .seconds = seconds,
                            .start = &start};
        pthread_create(&th[g], NULL, gpu_thread, &jobs[g]);
    }
    double total = 0;
    for (int g = 0; g < gpus; g++) {
        pthread_join(th[g], NULL);
        if (jobs[g].st != GLCV_OK) {
            fprintf(stderr, "multicam_bench: GPU %d: %s %s\n", g, glcv_status_string(jobs[g].st), jobs[g].describe);
            total = -1;
        } else if (total >= 0) {
            printf("#   GPU %d: %.0f cameras with I/O on %s\n", g, jobs[g].r.cams_io, jobs[g].describe);
            total += jobs[g].r.cams_io;
        }
    }
    pthread_barrier_destroy(&start);
    return total;
}

/* ---- options --------------------------------------------------------------------------------- */

static int parse_sizes(const char *s, options *o)
{
    o->n_sizes = 0;
    while (*s && o->n_sizes < MAX_LIST) {
        int w, h, used = 0;
        if (sscanf(s, "%dx%d%n", &w, &h, &used) != 2 || w < 1 || h < 1)
            return 0;
        o->sizes[o->n_sizes][0] = w;
        o->sizes[o->n_sizes][1] = h;
        o->n_sizes++;
        s += used;
        if (*s == ',')
            s++;
        else if (*s)
            return 0;
    }
    return o->n_sizes > 0;
}

static int parse_names(const char *s, options *o, int engines)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    int n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (engines) {
            if (n == 4 || glcv_engine_mode_parse(t, &o->engines[n]) != GLCV_OK)
                return 0;
            n++;
        } else {
            int found = -1;
            for (int i = 0; i < N_VARIANTS; i++)
                if (strcmp(all_variants[i].name, t) == 0)
                    found = i;
            if (found < 0 || n == N_VARIANTS)
                return 0;
            o->variants[n++] = found;
        }
    }
    if (engines)
        o->n_engines = n;
    else
        o->n_variants = n;
    return n > 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: multicam_bench [--sizes WxH,...] [--engines fragment,compute] [--variants V,...]\n"
                    "                      [--streams N] [--seconds S] [--gpus G] [--csv FILE]\n"
                    "variants:");
    for (int i = 0; i < N_VARIANTS; i++)
        fprintf(stderr, " %s", all_variants[i].name);
    fprintf(stderr, "\n");
}

int main(int argc, char **argv)
{
    options o = {.seconds = 2.0, .gpus = 1};
    parse_sizes("160x120,320x240,640x480,720x576", &o);
    parse_names("fragment,compute", &o, 1);
    parse_names("vsam,vsam-multi,vsam-gray,vsam-gray-unpacked,vsam-gray-multi,diff2,diff3", &o, 0);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = v != NULL;
        if (strcmp(a, "--sizes") == 0 && v)
            ok = parse_sizes(v, &o);
        else if (strcmp(a, "--engines") == 0 && v)
            ok = parse_names(v, &o, 1);
        else if (strcmp(a, "--variants") == 0 && v)
            ok = parse_names(v, &o, 0);
        else if (strcmp(a, "--streams") == 0 && v)
            ok = (o.streams = atoi(v)) >= 1 && o.streams <= 2048;
        else if (strcmp(a, "--seconds") == 0 && v)
            ok = (o.seconds = atof(v)) > 0;
        else if (strcmp(a, "--gpus") == 0 && v)
            ok = (o.gpus = atoi(v)) >= 0 && o.gpus <= MAX_GPUS;
        else if (strcmp(a, "--csv") == 0 && v)
            o.csv = v;
        else
            ok = 0;
        if (!ok) {
            usage();
            return 2;
        }
        i++;
    }
    if (o.gpus == 0) {
        glcv_cuda_info info;
        o.gpus = glcv_cuda_query(&info) == GLCV_OK && info.devices > 0 ? info.devices : 1;
        if (o.gpus > MAX_GPUS)
            o.gpus = MAX_GPUS;
    }
    glcv_context *ctx = NULL;
    glcv_context_params cp = GLCV_CONTEXT_PARAMS(.min_gl_version = 33);
    if (glcv_context_create(&cp, &ctx) != GLCV_OK) {
        fprintf(stderr, "multicam_bench: no OpenGL context\n");
        return 1;
    }
    printf("# multicam_bench on %s, %.1f s per measurement\n", glcv_context_describe(ctx), o.seconds);
    FILE *csv = o.csv ? fopen(o.csv, "w") : NULL;
    if (csv)
        fprintf(csv, "size,engine,variant,streams,gpu_ms_per_set,cams_no_io,cams_io,gpix_io,floor_cams,floor_fraction"
                     ",gpus,cams_io_all_gpus\n");
    printf("| size | engine | variant | N | gpu ms/set | cams no-I/O | cams I/O | Gpix/s I/O | upload floor | "
           "of floor |%s\n",
           o.gpus > 1 ? " cams I/O, all GPUs |" : "");
    printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|%s\n", o.gpus > 1 ? "---:|" : "");
    int failures = 0;
    for (int si = 0; si < o.n_sizes; si++) {
        int w = o.sizes[si][0], h = o.sizes[si][1];
        int n = o.streams;
        if (!n) {
            n = (int)(64e6 / ((double)w * h));
            n = n < 1 ? 1 : n > 2048 ? 2048 : n;
        }
        size_t set_rgb = (size_t)w * (size_t)h * 3 * (size_t)n;
        double to_buffer = copy_rate(set_rgb, 0, w, h, n, 3, o.seconds);
        printf("# %dx%d x %d: GL copies of a set from pinned memory: to a buffer %.1f GB/s, to a texture array "
               "%.1f GB/s\n",
               w, h, n, to_buffer, copy_rate(set_rgb, 1, w, h, n, 3, o.seconds));
        double read = epoxy_gl_version() >= 43 ? io_experiments(set_rgb, o.seconds) : 0;
        /* the floor: the faster way GL moves frames to the GPU here */
        double gbs = read > to_buffer ? read : to_buffer;
        double floor_rgb = gbs * 1e9 / ((double)w * h * 3 * 25), floor_gray = gbs * 1e9 / ((double)w * h * 25);
        for (int ei = 0; ei < o.n_engines; ei++) {
            glcv_engine_mode engine = o.engines[ei];
            for (int vi = 0; vi < o.n_variants; vi++) {
                const variant *v = &all_variants[o.variants[vi]];
                result r = {0};
                glcv_status st = measure(engine, v, w, h, n, o.seconds, 1, &r);
                if (st == GLCV_OK)
                    st = measure(engine, v, w, h, n, o.seconds, 0, &r);
                if (st != GLCV_OK) {
                    printf("| %dx%d | %s | %s | %d | failed: %s |\n", w, h, glcv_engine_mode_string(engine), v->name, n,
                           glcv_status_string(st));
                    failures++;
                    continue;
                }
                double floor = v->format == GLCV_PIXEL_GRAY8   ? floor_gray
                               : v->format == GLCV_PIXEL_RGBA8 ? floor_rgb * 3 / 4
                                                               : floor_rgb;
                /* (timer queries that measure nothing - some software renderers - give 0: no column) */
                double no_io = r.gpu_ms > 0 ? 40.0 / (r.gpu_ms / n) : 0;
                double all = o.gpus > 1 ? run_gpus(o.gpus, engine, v, w, h, n, o.seconds) : r.cams_io;
                char extra[64] = "";
                if (o.gpus > 1)
                    snprintf(extra, sizeof extra, " %.0f |", all);
                printf("| %dx%d | %s | %s | %d | %.3f | %.0f | %.0f | %.2f | %.0f | %.2f |%s\n", w, h,
                       glcv_engine_mode_string(engine), v->name, n, r.gpu_ms, no_io, r.cams_io, r.gpix_io, floor,
                       floor > 0 ? r.cams_io / floor : 0, extra);
                fflush(stdout);
                if (csv)
                    fprintf(csv, "%dx%d,%s,%s,%d,%.4f,%.1f,%.1f,%.3f,%.1f,%.3f,%d,%.1f\n", w, h,
                            glcv_engine_mode_string(engine), v->name, n, r.gpu_ms, no_io, r.cams_io, r.gpix_io, floor,
                            floor > 0 ? r.cams_io / floor : 0, o.gpus, all);
            }
        }
    }
    if (csv)
        fclose(csv);
    glcv_context_destroy(&ctx);
    return failures ? 1 : 0;
}
