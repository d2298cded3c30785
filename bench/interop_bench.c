/* interop_bench: handing a 1920x1080 RGBA8 texture and a 1920x1080 R8 mask texture from OpenGL to
 * a CUDA kernel, every way, per frame:
 *
 *   reference      no GL: the kernels read plain device memory (what the hand-over adds to)
 *   naive          textures registered once (cudaGraphicsGLRegisterImage, read-only); per frame
 *                  both mapped in one call, arrays fetched, texture objects made, read, destroyed,
 *                  unmapped
 *   cached         the same, keeping the texture objects while the mapped arrays stay the same
 *                  (checked every frame; counted when they change)
 *   register       registering, mapping and unregistering both textures every frame (what
 *                  re-creating interop resources per call costs; 30 frames)
 *   pbo            glcv's bridge: GL copies both textures into one pixel-buffer object (glReadPixels
 *                  into a PIXEL_PACK buffer), flushes GL, maps the buffer (registered once) per
 *                  frame as plain device memory
 *   pbo-noflush    the same without the glFlush before the map (diagnostic: the map then waits until
 *                  the driver submits GL's commands on its own; 6 frames)
 *   pbo-gettex     glGetTextureImage (GL 4.5, no framebuffer) into a registered buffer instead
 *   ext-image      GL external memory objects: the textures live in memory exported by Vulkan
 *                  (GL_EXT_memory_object_fd; CUDA cudaImportExternalMemory, mipmapped arrays and
 *                  texture objects made once); GL signals a semaphore, CUDA waits on it and signals
 *                  one back (GL_EXT_semaphore_fd, cudaImportExternalSemaphore). No map, no copy:
 *                  for textures the engine owns
 *   ext-image-copy the same for a caller's textures: glCopyImageSubData into the shared ones first
 *   ext-buffer     shared memory as a GL buffer: glReadPixels of both textures into it, semaphores,
 *                  plain device memory in CUDA (the pbo path without map/unmap)
 *   batched        (a table of its own) the masks of 1, 4, 16, 64 and 256 streams of 640x480 as one
 *                  R8 texture array: one registration, one map per set for every layer
 *
 * Every frame GL writes new values into the textures (glClearTexImage), and the CUDA kernels add up
 * every byte: a wrong sum is counted as an error (so a path that shows stale or compressed data is
 * caught). Latency: GL's writes are finished (glFinish) before the clock starts; the clock stops
 * when the CUDA stream is idle; median over the frames ("calls": the CPU time of the hand-over's
 * calls alone). Pipelined: frames issued back to back with at most 8 in flight, one wait at the
 * end, mean per frame. "hand-over" = latency - reference latency.
 *
 * Every step prints a line (line-buffered, with the time since the start). A method ends early,
 * saying why, when one frame takes over --frame-limit-ms (1000), and each half of it stops at half
 * of --budget-s (6); a call that never returns trips a watchdog (budget + 15 s) that prints the
 * method, phase and frame and exits with status 3, so a wrapper can run the other methods with
 * --only.
 *
 * usage: interop_bench [--frames N] [--csv FILE] [--only KEY,KEY..] [--list] [--budget-s S]
 *                      [--frame-limit-ms MS]
 * Without CUDA, a GL context on a CUDA device, or (for ext-*) Vulkan with the external memory and
 * semaphore extensions, the rows that cannot run say why. */
#define _POSIX_C_SOURCE 200809L

#include <glcv/glcv.h>

#include "benchutil.h"
#include "cuda_bridge.h"
#include "cuda_texture.h"

#include <epoxy/gl.h>

#include <cuda_gl_interop.h>
#include <cuda_runtime_api.h>

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef GLCV_HAVE_VULKAN
#include <dlfcn.h>
#include <vulkan/vulkan.h>
#endif

enum { W = 1920, H = 1080, MAX_FRAMES = 4096 };

/* ---- the frame: GL writes, CUDA sums --------------------------------------------------------- */

typedef struct bench {
    int frames;
    cudaStream_t stream;
    unsigned long long *d_sums;  /* 2 per frame */
    unsigned long long *h_sums;
    GLuint src_rgba, src_mask;   /* the textures GL writes (a caller's, in the library's terms) */
    int uniform;                 /* the reference writes v in all four channels */
    double ref_latency;
} bench;

static uint8_t frame_value(int f)
{
    return (uint8_t)(17 + f * 37);
}

static unsigned long long expect_rgba(int f, int uniform)
{
    uint8_t v = frame_value(f);
    if (uniform)
        return (unsigned long long)W * H * 4u * v;
    return (unsigned long long)W * H * ((unsigned)v + (uint8_t)(v + 1) + (uint8_t)(v + 2) + (uint8_t)(v + 3));
}

static unsigned long long expect_mask(int f)
{
    return (unsigned long long)W * H * (uint8_t)(frame_value(f) ^ 0x5a);
}

/* GL writes frame f's values into an RGBA8 and an R8 texture. */
static void gl_write(GLuint rgba, GLuint mask, int f)
{
    uint8_t v = frame_value(f);
    uint8_t c4[4] = {v, (uint8_t)(v + 1), (uint8_t)(v + 2), (uint8_t)(v + 3)};
    uint8_t c1 = (uint8_t)(v ^ 0x5a);
    glClearTexImage(rgba, 0, GL_RGBA, GL_UNSIGNED_BYTE, c4);
    glClearTexImage(mask, 0, GL_RED, GL_UNSIGNED_BYTE, &c1);
}

static GLuint make_texture(GLenum internal)
{
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glTexStorage2D(GL_TEXTURE_2D, 1, internal, W, H);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    glBindTexture(GL_TEXTURE_2D, 0);
    return tex;
}

static int sum_textures(bench *b, int f, cudaTextureObject_t rgba, cudaTextureObject_t mask)
{
    glcv_cuda_sum_texture_params p = {rgba, W, H, 4, b->d_sums + 2 * f};
    int e = glcv_cuda_sum_texture(p, b->stream);
    glcv_cuda_sum_texture_params q = {mask, W, H, 1, b->d_sums + 2 * f + 1};
    return e ? e : glcv_cuda_sum_texture(q, b->stream);
}

static int sum_linear(bench *b, int f, const uint8_t *rgba, size_t rgba_pitch, const uint8_t *mask, size_t mask_pitch)
{
    glcv_cuda_sum_linear_params p = {rgba, rgba_pitch, W * 4, H, b->d_sums + 2 * f};
    int e = glcv_cuda_sum_linear(p, b->stream);
    glcv_cuda_sum_linear_params q = {mask, mask_pitch, W, H, b->d_sums + 2 * f + 1};
    return e ? e : glcv_cuda_sum_linear(q, b->stream);
}

/* Frames whose sums are wrong. */
static int check_sums(bench *b, int n)
{
    if (cudaMemcpy(b->h_sums, b->d_sums, (size_t)n * 2 * sizeof *b->h_sums, cudaMemcpyDeviceToHost) != cudaSuccess)
        return n;
    int bad = 0;
    for (int f = 0; f < n; f++)
        bad += b->h_sums[2 * f] != expect_rgba(f, b->uniform) || b->h_sums[2 * f + 1] != expect_mask(f);
    return bad;
}

/* ---- one way of handing over -------------------------------------------------------------------- */

typedef struct method {
    const char *key;  /* short name for --only */
    const char *name;
    void *state;
    /* GL's part of a frame before the clock starts (writes); may be NULL (then gl_write on b's textures) */
    void (*produce)(bench *b, void *state, int f);
    /* the hand-over and the kernels of frame f; returns 0 or an error text */
    const char *(*consume)(bench *b, void *state, int f);
    int max_frames;   /* 0: --frames; else at most this many (slow diagnostic rows) */
} method;

typedef struct result {
    const char *name;
    double latency, cpu, pipelined;
    int frames, errors;
    char note[200];
} result;

static result g_results[24];
static int g_n_results;

/* ---- progress, budgets and the watchdog ------------------------------------------------------------ */

static double g_start_ms;
static double g_frame_limit_ms = 1000;  /* a frame slower than this ends its method */
static double g_budget_ms = 6000;       /* per method (latency and pipelined halves) */
static volatile sig_atomic_t g_frame = -1;
static const char *volatile g_method = "setup";
static const char *volatile g_phase = "";

static void step(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("[%8.3f s] ", (bench_now_ms() - g_start_ms) / 1e3);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

static size_t put_str(char *buf, size_t n, size_t cap, const char *s)
{
    while (s && *s && n + 1 < cap)
        buf[n++] = *s++;
    return n;
}

/* SIGALRM: a call that never returned. Says where (async-signal-safe) and exits 3, so a wrapper
 * can run the other methods on their own (--only). */
static void on_watchdog(int sig)
{
    (void)sig;
    char buf[320], num[16];
    size_t n = put_str(buf, 0, sizeof buf, "\ninterop_bench: WATCHDOG: no progress in method '");
    n = put_str(buf, n, sizeof buf, g_method);
    n = put_str(buf, n, sizeof buf, "', phase '");
    n = put_str(buf, n, sizeof buf, g_phase);
    n = put_str(buf, n, sizeof buf, "', frame ");
    int f = (int)g_frame, k = 0;
    char tmp[16];
    if (f < 0) {
        tmp[k++] = '-';
        f = -f;
    }
    int d = 0;
    do {
        num[d++] = (char)('0' + f % 10);
        f /= 10;
    } while (f && d < 10);
    while (d)
        tmp[k++] = num[--d];
    tmp[k] = 0;
    n = put_str(buf, n, sizeof buf, tmp);
    n = put_str(buf, n, sizeof buf, " (a GL or CUDA call hung); exiting\n");
    if (write(STDOUT_FILENO, buf, n) < 0 || write(STDERR_FILENO, buf, n) < 0)
        _exit(3);
    _exit(3);
}

static void phase(const char *method_name, const char *what, unsigned watchdog_s)
{
    g_method = method_name;
    g_phase = what;
    g_frame = -1;
    alarm(watchdog_s);
}

static double median(double *v, int n, int skip)
{
    if (n <= 0)
        return NAN;
    skip = n > 2 * skip + 1 ? skip : 0;
    return bench_median(v + skip, n - skip);
}

/* Appends "; add" (or add) to note, cut to cap. */
static void append_note(char *note, size_t cap, const char *add)
{
    size_t n = strlen(note);
    if (!add || !add[0])
        return;
    if (n && n + 2 < cap) {
        memcpy(note + n, "; ", 2);
        n += 2;
    }
    while (*add && n + 1 < cap)
        note[n++] = *add++;
    note[n] = 0;
}

enum { PIPE_DEPTH = 8 };

static void run_method(bench *b, const method *m, const char *note)
{
    result *r = &g_results[g_n_results++];
    memset(r, 0, sizeof *r);
    r->name = m->name;
    r->latency = r->cpu = r->pipelined = NAN;
    snprintf(r->note, sizeof r->note, "%s", note ? note : "");
    int frames = m->max_frames > 0 && m->max_frames < b->frames ? m->max_frames : b->frames;
    double *lat = calloc((size_t)frames, sizeof *lat), *cpu = calloc((size_t)frames, sizeof *cpu);
    cudaEvent_t ev[PIPE_DEPTH];
    int n_ev = 0;
    for (; n_ev < PIPE_DEPTH; n_ev++)
        if (cudaEventCreateWithFlags(&ev[n_ev], cudaEventDisableTiming) != cudaSuccess)
            break;
    unsigned watchdog_s = (unsigned)(g_budget_ms / 1e3) + 15;
    const char *err = NULL;
    char stop[160] = "";
    if (!lat || !cpu || n_ev < PIPE_DEPTH) {
        snprintf(r->note, sizeof r->note, "failed: out of memory or events");
        goto done;
    }

    /* latency: GL finished before the clock */
    phase(m->key, "latency", watchdog_s);
    step("%s: latency, up to %d frames ...", m->key, frames);
    double start = bench_now_ms();
    cudaMemsetAsync(b->d_sums, 0, (size_t)b->frames * 2 * sizeof *b->d_sums, b->stream);
    cudaStreamSynchronize(b->stream);
    int n = 0;
    for (int f = 0; f < frames && !err; f++) {
        g_frame = f;
        if (m->produce)
            m->produce(b, m->state, f);
        else
            gl_write(b->src_rgba, b->src_mask, f);
        glFinish();
        double t0 = bench_now_ms();
        err = m->consume(b, m->state, f);
        double t1 = bench_now_ms();
        cudaStreamSynchronize(b->stream);
        lat[f] = bench_now_ms() - t0;
        cpu[f] = t1 - t0;
        n = f + 1;
        if (f < 2 || lat[f] > g_frame_limit_ms)
            step("%s: frame %d: %.3f ms (%.3f ms in the calls)", m->key, f, lat[f], cpu[f]);
        if (lat[f] > g_frame_limit_ms) {
            snprintf(stop, sizeof stop, "frame %d took %.0f ms (> %.0f ms): rest of the method skipped", f, lat[f],
                     g_frame_limit_ms);
            break;
        }
        if (bench_now_ms() - start > g_budget_ms / 2 && f + 1 < frames) {
            snprintf(stop, sizeof stop, "time budget: latency over %d of %d frames", n, frames);
            break;
        }
    }
    r->frames = n;
    if (err) {
        snprintf(r->note, sizeof r->note, "failed at frame %d: %s", n - 1, err);
        step("%s: failed at frame %d: %s", m->key, n - 1, err);
        goto done;
    }
    r->errors = check_sums(b, n);
    r->latency = median(lat, n, 10);
    r->cpu = median(cpu, n, 10);
    step("%s: latency done: median %.4f ms (calls %.4f ms), %d frames, %d wrong sums, %.0f ms", m->key, r->latency,
         r->cpu, n, r->errors, bench_now_ms() - start);
    if (stop[0] && n < frames && strncmp(stop, "frame", 5) == 0) {
        snprintf(r->note, sizeof r->note, "%s", stop);
        goto done;
    }

    /* pipelined: at most PIPE_DEPTH frames in flight */
    phase(m->key, "pipelined", watchdog_s);
    step("%s: pipelined, up to %d frames ...", m->key, frames);
    cudaMemsetAsync(b->d_sums, 0, (size_t)b->frames * 2 * sizeof *b->d_sums, b->stream);
    cudaStreamSynchronize(b->stream);
    glFinish();
    start = bench_now_ms();
    int issued = 0;
    char pstop[160] = "";
    for (int f = 0; f < frames && !err; f++) {
        g_frame = f;
        double t0 = bench_now_ms();
        if (f >= PIPE_DEPTH)
            cudaEventSynchronize(ev[f % PIPE_DEPTH]);
        if (m->produce)
            m->produce(b, m->state, f);
        else
            gl_write(b->src_rgba, b->src_mask, f);
        err = m->consume(b, m->state, f);
        cudaEventRecord(ev[f % PIPE_DEPTH], b->stream);
        issued = f + 1;
        double t = bench_now_ms() - t0;
        if (t > g_frame_limit_ms) {
            snprintf(pstop, sizeof pstop, "pipelined frame %d took %.0f ms (> %.0f ms): stopped", f, t,
                     g_frame_limit_ms);
            break;
        }
        if (bench_now_ms() - start > g_budget_ms / 2 && f + 1 < frames) {
            snprintf(pstop, sizeof pstop, "time budget: pipelined over %d of %d frames", issued, frames);
            break;
        }
    }
    phase(m->key, "pipelined: final wait", watchdog_s);
    cudaStreamSynchronize(b->stream);
    glFinish();
    r->pipelined = (bench_now_ms() - start) / (issued > 0 ? issued : 1);
    r->errors += check_sums(b, issued);
    step("%s: pipelined done: %.4f ms per frame, %d frames, %.0f ms", m->key, r->pipelined, issued,
         bench_now_ms() - start);
    if (err)
        snprintf(r->note, sizeof r->note, "failed while pipelined: %s", err);
    else {
        append_note(r->note, sizeof r->note, stop);
        append_note(r->note, sizeof r->note, pstop);
    }
done:
    alarm(0);
    g_method = "between methods";
    g_phase = "";
    for (int i = 0; i < n_ev; i++)
        cudaEventDestroy(ev[i]);
    free(lat);
    free(cpu);
}

/* ---- reference: no GL --------------------------------------------------------------------------- */

typedef struct ref_state {
    uint8_t *rgba, *mask;
    size_t rgba_pitch, mask_pitch;
} ref_state;

static void ref_produce(bench *b, void *s_, int f)
{
    ref_state *s = s_;
    uint8_t v = frame_value(f);
    cudaMemset2DAsync(s->rgba, s->rgba_pitch, v, (size_t)W * 4, H, b->stream);
    cudaMemset2DAsync(s->mask, s->mask_pitch, (uint8_t)(v ^ 0x5a), W, H, b->stream);
}

static const char *ref_consume(bench *b, void *s_, int f)
{
    ref_state *s = s_;
    return sum_linear(b, f, s->rgba, s->rgba_pitch, s->mask, s->mask_pitch) ? "kernel launch" : NULL;
}

/* ---- naive and cached registered images ---------------------------------------------------------- */

typedef struct image_state {
    glcv_cuda_image rgba, mask;
    int cache;
    cudaArray_t arrays[2];
    cudaTextureObject_t tex[2];
    int changes;
} image_state;

static const char *image_consume(bench *b, void *s_, int f)
{
    image_state *s = s_;
    glcv_cuda_image *both[2] = {&s->rgba, &s->mask};
    if (glcv_cuda_images_map(both, 2, b->stream, NULL) != GLCV_OK)
        return "cudaGraphicsMapResources";
    cudaArray_t arrays[2] = {s->rgba.array, s->mask.array};
    if (!s->cache && s->tex[0]) {
        /* the last frame's texture objects go once its kernels are done */
        cudaStreamSynchronize(b->stream);
        for (int i = 0; i < 2; i++) {
            cudaDestroyTextureObject(s->tex[i]);
            s->tex[i] = 0;
        }
    }
    for (int i = 0; i < 2; i++) {
        if (!s->cache || arrays[i] != s->arrays[i] || !s->tex[i]) {
            if (s->tex[i])
                cudaDestroyTextureObject(s->tex[i]);
            s->tex[i] = cuda_texture_object(arrays[i]);
            if (s->cache && s->arrays[i])
                s->changes++;
            s->arrays[i] = arrays[i];
        }
    }
    const char *err = sum_textures(b, f, s->tex[0], s->tex[1]) ? "kernel launch" : NULL;
    if (glcv_cuda_images_unmap(both, 2, b->stream, NULL) != GLCV_OK)
        return "cudaGraphicsUnmapResources";
    return err;
}

/* ---- pbo: the library's bridge -------------------------------------------------------------------- */

static const char *pbo_consume(bench *b, void *s_, int f)
{
    glcv_cuda_bridge *bridge = s_;
    glcv_cuda_frame fr;
    if (glcv_cuda_bridge_map_frame(bridge, b->src_rgba, b->src_mask, b->stream, &fr) != GLCV_OK)
        return "glcv_cuda_bridge_map_frame";
    const char *err = sum_linear(b, f, fr.rgba, fr.rgba_pitch, fr.mask, fr.mask_pitch) ? "kernel launch" : NULL;
    if (glcv_cuda_bridge_unmap(bridge, b->stream) != GLCV_OK)
        return "glcv_cuda_bridge_unmap";
    return err;
}

/* ---- register-per-frame: what re-creating the interop resource every call costs ---------------------- */

static const char *register_consume(bench *b, void *s_, int f)
{
    (void)s_;
    glcv_cuda_image rgba, mask;
    if (glcv_cuda_image_register(&rgba, b->src_rgba, 0, NULL) != GLCV_OK)
        return "cudaGraphicsGLRegisterImage";
    if (glcv_cuda_image_register(&mask, b->src_mask, 0, NULL) != GLCV_OK) {
        glcv_cuda_image_unregister(&rgba, NULL);
        return "cudaGraphicsGLRegisterImage";
    }
    glcv_cuda_image *both[2] = {&rgba, &mask};
    const char *err = NULL;
    if (glcv_cuda_images_map(both, 2, b->stream, NULL) != GLCV_OK) {
        err = "cudaGraphicsMapResources";
    } else {
        cudaTextureObject_t tex[2] = {cuda_texture_object(rgba.array), cuda_texture_object(mask.array)};
        err = !tex[0] || !tex[1] ? "cudaCreateTextureObject" : sum_textures(b, f, tex[0], tex[1]) ? "kernel launch" : NULL;
        cudaStreamSynchronize(b->stream);
        for (int i = 0; i < 2; i++)
            if (tex[i])
                cudaDestroyTextureObject(tex[i]);
        if (glcv_cuda_images_unmap(both, 2, b->stream, NULL) != GLCV_OK && !err)
            err = "cudaGraphicsUnmapResources";
    }
    glcv_cuda_image_unregister(&rgba, NULL);
    glcv_cuda_image_unregister(&mask, NULL);
    return err;
}

/* ---- pbo-gettex: glGetTextureImage (GL 4.5, no framebuffer) into a registered buffer ---------------- */

typedef struct gettex_state {
    GLuint pbo;
    struct cudaGraphicsResource *resource;
    size_t mask_offset, bytes;
} gettex_state;

static const char *gettex_setup(gettex_state *s)
{
    memset(s, 0, sizeof *s);
    if (epoxy_gl_version() < 45)
        return "glGetTextureImage needs GL 4.5";
    s->mask_offset = ((size_t)W * H * 4 + 255) & ~(size_t)255;
    s->bytes = s->mask_offset + (size_t)W * H;
    while (glGetError() != GL_NO_ERROR) {
    }
    glCreateBuffers(1, &s->pbo);
    glNamedBufferStorage(s->pbo, (GLsizeiptr)s->bytes, NULL, 0);
    if (glGetError() != GL_NO_ERROR)
        return "glNamedBufferStorage: GL error";
    if (cudaGraphicsGLRegisterBuffer(&s->resource, s->pbo, cudaGraphicsRegisterFlagsReadOnly) != cudaSuccess)
        return "cudaGraphicsGLRegisterBuffer failed";
    return NULL;
}

static void gettex_teardown(gettex_state *s)
{
    if (s->resource)
        cudaGraphicsUnregisterResource(s->resource);
    if (s->pbo)
        glDeleteBuffers(1, &s->pbo);
    memset(s, 0, sizeof *s);
}

static const char *gettex_consume(bench *b, void *s_, int f)
{
    gettex_state *s = s_;
    glBindBuffer(GL_PIXEL_PACK_BUFFER, s->pbo);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glGetTextureImage(b->src_rgba, 0, GL_RGBA, GL_UNSIGNED_BYTE, W * H * 4, (void *)0);
    glGetTextureImage(b->src_mask, 0, GL_RED, GL_UNSIGNED_BYTE, W * H, (void *)(uintptr_t)s->mask_offset);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
    glFlush();
    if (cudaGraphicsMapResources(1, &s->resource, b->stream) != cudaSuccess)
        return "cudaGraphicsMapResources";
    void *ptr = NULL;
    size_t size = 0;
    const char *err = NULL;
    if (cudaGraphicsResourceGetMappedPointer(&ptr, &size, s->resource) != cudaSuccess || size < s->bytes)
        err = "cudaGraphicsResourceGetMappedPointer";
    else if (sum_linear(b, f, ptr, (size_t)W * 4, (const uint8_t *)ptr + s->mask_offset, W))
        err = "kernel launch";
    if (cudaGraphicsUnmapResources(1, &s->resource, b->stream) != cudaSuccess && !err)
        err = "cudaGraphicsUnmapResources";
    return err;
}

#ifdef GLCV_HAVE_VULKAN
/* ---- external memory and semaphores, exported by Vulkan --------------------------------------------- */

typedef struct vk {
    void *lib;
    VkInstance instance;
    VkPhysicalDevice phys;
    VkDevice device;
    PFN_vkGetDeviceProcAddr gdpa;
    PFN_vkGetMemoryFdKHR get_memory_fd;
    PFN_vkGetSemaphoreFdKHR get_semaphore_fd;
    VkPhysicalDeviceMemoryProperties mem_props;
} vk;

static const char *vk_init(vk *v, const uint8_t uuid[16])
{
    memset(v, 0, sizeof *v);
    v->lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!v->lib)
        return "libvulkan.so.1 not found";
    PFN_vkGetInstanceProcAddr gipa = (PFN_vkGetInstanceProcAddr)(uintptr_t)dlsym(v->lib, "vkGetInstanceProcAddr");
    if (!gipa)
        return "no vkGetInstanceProcAddr";
    PFN_vkCreateInstance create_instance = (PFN_vkCreateInstance)(uintptr_t)gipa(NULL, "vkCreateInstance");
    VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "interop_bench", 1, "glcv", 1,
                             VK_API_VERSION_1_1};
    VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app, 0, NULL, 0, NULL};
    if (!create_instance || create_instance(&ici, NULL, &v->instance) != VK_SUCCESS)
        return "vkCreateInstance failed (no Vulkan driver?)";
    PFN_vkEnumeratePhysicalDevices enum_devices =
        (PFN_vkEnumeratePhysicalDevices)(uintptr_t)gipa(v->instance, "vkEnumeratePhysicalDevices");
    PFN_vkGetPhysicalDeviceProperties2 props2 =
        (PFN_vkGetPhysicalDeviceProperties2)(uintptr_t)gipa(v->instance, "vkGetPhysicalDeviceProperties2");
    PFN_vkGetPhysicalDeviceMemoryProperties mem_props =
        (PFN_vkGetPhysicalDeviceMemoryProperties)(uintptr_t)gipa(v->instance, "vkGetPhysicalDeviceMemoryProperties");
    PFN_vkCreateDevice create_device = (PFN_vkCreateDevice)(uintptr_t)gipa(v->instance, "vkCreateDevice");
    v->gdpa = (PFN_vkGetDeviceProcAddr)(uintptr_t)gipa(v->instance, "vkGetDeviceProcAddr");
    if (!enum_devices || !props2 || !mem_props || !create_device || !v->gdpa)
        return "Vulkan 1.1 entry points missing";
    uint32_t n = 0;
    VkPhysicalDevice devs[16];
    enum_devices(v->instance, &n, NULL);
    n = n > 16 ? 16 : n;
    enum_devices(v->instance, &n, devs);
    for (uint32_t i = 0; i < n && !v->phys; i++) {
        VkPhysicalDeviceIDProperties id = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES, NULL, {0}, {0}, {0}, 0, 0};
        VkPhysicalDeviceProperties2 p = {VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &id, {0}};
        props2(devs[i], &p);
        if (memcmp(id.deviceUUID, uuid, 16) == 0)
            v->phys = devs[i];
    }
    if (!v->phys)
        return "no Vulkan device with the CUDA device's UUID";
    mem_props(v->phys, &v->mem_props);
    float prio = 1.0f;
    VkDeviceQueueCreateInfo q = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, 0, 1, &prio};
    const char *exts[] = {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME};
    VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, NULL, 0, 1, &q, 0, NULL, 2, exts, NULL};
    if (create_device(v->phys, &dci, NULL, &v->device) != VK_SUCCESS)
        return "vkCreateDevice with external memory and semaphore fds failed";
    v->get_memory_fd = (PFN_vkGetMemoryFdKHR)(uintptr_t)v->gdpa(v->device, "vkGetMemoryFdKHR");
    v->get_semaphore_fd = (PFN_vkGetSemaphoreFdKHR)(uintptr_t)v->gdpa(v->device, "vkGetSemaphoreFdKHR");
    if (!v->get_memory_fd || !v->get_semaphore_fd)
        return "vkGetMemoryFdKHR or vkGetSemaphoreFdKHR missing";
    return NULL;
}

#define VK_DEV_FN(v, name) ((PFN_##name)(uintptr_t)(v)->gdpa((v)->device, #name))

/* Exportable memory for `image` or `buffer` (the other is VK_NULL_HANDLE), dedicated to it and
 * bound to it: its size and two fds. */
static const char *vk_memory(vk *v, VkImage image, VkBuffer buffer, VkDeviceSize *size, int fds[2])
{
    VkMemoryRequirements req;
    if (image != VK_NULL_HANDLE)
        VK_DEV_FN(v, vkGetImageMemoryRequirements)(v->device, image, &req);
    else
        VK_DEV_FN(v, vkGetBufferMemoryRequirements)(v->device, buffer, &req);
    uint32_t type = UINT32_MAX;
    for (uint32_t i = 0; i < v->mem_props.memoryTypeCount; i++)
        if ((req.memoryTypeBits & (1u << i)) &&
            (v->mem_props.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) {
            type = i;
            break;
        }
    if (type == UINT32_MAX)
        return "no device-local memory type";
    VkMemoryDedicatedAllocateInfo ded = {VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO, NULL, image, buffer};
    VkExportMemoryAllocateInfo exp = {VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO, &ded,
                                      VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkMemoryAllocateInfo ai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, &exp, req.size, type};
    VkDeviceMemory mem;
    if (VK_DEV_FN(v, vkAllocateMemory)(v->device, &ai, NULL, &mem) != VK_SUCCESS)
        return "vkAllocateMemory (exportable) failed";
    VkMemoryGetFdInfoKHR gi = {VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR, NULL, mem,
                               VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
    if (v->get_memory_fd(v->device, &gi, &fds[0]) != VK_SUCCESS || v->get_memory_fd(v->device, &gi, &fds[1]) != VK_SUCCESS)
        return "vkGetMemoryFdKHR failed";
    if (image != VK_NULL_HANDLE) {
        if (VK_DEV_FN(v, vkBindImageMemory)(v->device, image, mem, 0) != VK_SUCCESS)
            return "vkBindImageMemory failed";
    } else if (VK_DEV_FN(v, vkBindBufferMemory)(v->device, buffer, mem, 0) != VK_SUCCESS) {
        return "vkBindBufferMemory failed";
    }
    *size = req.size;
    return NULL;
}

static const char *vk_semaphore(vk *v, int fds[2])
{
    VkExportSemaphoreCreateInfo exp = {VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO, NULL,
                                       VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    VkSemaphoreCreateInfo ci = {VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, &exp, 0};
    VkSemaphore sem;
    if (VK_DEV_FN(v, vkCreateSemaphore)(v->device, &ci, NULL, &sem) != VK_SUCCESS)
        return "vkCreateSemaphore (exportable) failed";
    VkSemaphoreGetFdInfoKHR gi = {VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR, NULL, sem,
                                  VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT};
    if (v->get_semaphore_fd(v->device, &gi, &fds[0]) != VK_SUCCESS ||
        v->get_semaphore_fd(v->device, &gi, &fds[1]) != VK_SUCCESS)
        return "vkGetSemaphoreFdKHR failed";
    return NULL;
}

typedef struct ext_state {
    int mode;                      /* 0 image, 1 image with a copy, 2 buffer */
    GLuint gl_mem[2], tex[2], buf; /* shared textures (image modes) or buffer */
    GLuint gl_ready, gl_done;      /* semaphores */
    cudaExternalMemory_t cu_mem[2];
    cudaMipmappedArray_t mip[2];
    cudaTextureObject_t cu_tex[2];
    uint8_t *cu_ptr;               /* buffer mode */
    size_t mask_offset;
    cudaExternalSemaphore_t cu_ready, cu_done;
    GLuint fbo;
    int started;
} ext_state;

static const char *import_semaphores(vk *v, ext_state *s)
{
    int ready[2], done[2];
    const char *err = vk_semaphore(v, ready);
    if (!err)
        err = vk_semaphore(v, done);
    if (err)
        return err;
    glGenSemaphoresEXT(1, &s->gl_ready);
    glGenSemaphoresEXT(1, &s->gl_done);
    glImportSemaphoreFdEXT(s->gl_ready, GL_HANDLE_TYPE_OPAQUE_FD_EXT, ready[0]);
    glImportSemaphoreFdEXT(s->gl_done, GL_HANDLE_TYPE_OPAQUE_FD_EXT, done[0]);
    struct cudaExternalSemaphoreHandleDesc d;
    memset(&d, 0, sizeof d);
    d.type = cudaExternalSemaphoreHandleTypeOpaqueFd;
    d.handle.fd = ready[1];
    if (cudaImportExternalSemaphore(&s->cu_ready, &d) != cudaSuccess)
        return "cudaImportExternalSemaphore failed";
    d.handle.fd = done[1];
    if (cudaImportExternalSemaphore(&s->cu_done, &d) != cudaSuccess)
        return "cudaImportExternalSemaphore failed";
    return glGetError() == GL_NO_ERROR ? NULL : "glImportSemaphoreFdEXT: GL error";
}

/* GL's memory object over exported memory of `size` bytes (dedicated to one image or buffer), from
 * one of its fds. */
static void gl_import_memory(GLuint *mem, VkDeviceSize size, int fd)
{
    GLint dedicated = GL_TRUE;
    glCreateMemoryObjectsEXT(1, mem);
    glMemoryObjectParameterivEXT(*mem, GL_DEDICATED_MEMORY_OBJECT_EXT, &dedicated);
    glImportMemoryFdEXT(*mem, size, GL_HANDLE_TYPE_OPAQUE_FD_EXT, fd);
}

/* CUDA's handle on the same memory, from its other fd. */
static cudaError_t cuda_import_memory(cudaExternalMemory_t *mem, VkDeviceSize size, int fd)
{
    struct cudaExternalMemoryHandleDesc md;
    memset(&md, 0, sizeof md);
    md.type = cudaExternalMemoryHandleTypeOpaqueFd;
    md.handle.fd = fd;
    md.size = size;
    md.flags = cudaExternalMemoryDedicated;
    return cudaImportExternalMemory(mem, &md);
}

static const char *ext_setup(vk *v, ext_state *s, int mode)
{
    memset(s, 0, sizeof *s);
    s->mode = mode;
    while (glGetError() != GL_NO_ERROR) {
    }
    if (mode < 2) {
        static const VkFormat formats[2] = {VK_FORMAT_R8G8B8A8_UNORM, VK_FORMAT_R8_UNORM};
        static const GLenum gl_formats[2] = {GL_RGBA8, GL_R8};
        for (int i = 0; i < 2; i++) {
            VkExternalMemoryImageCreateInfo ext = {VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO, NULL,
                                                   VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
            VkImageCreateInfo ici = {VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO, &ext, 0, VK_IMAGE_TYPE_2D, formats[i],
                                     {W, H, 1}, 1, 1, VK_SAMPLE_COUNT_1_BIT, VK_IMAGE_TILING_OPTIMAL,
                                     VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT |
                                         VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT,
                                     VK_SHARING_MODE_EXCLUSIVE, 0, NULL, VK_IMAGE_LAYOUT_UNDEFINED};
            VkImage image;
            if (VK_DEV_FN(v, vkCreateImage)(v->device, &ici, NULL, &image) != VK_SUCCESS)
                return "vkCreateImage (external) failed";
            VkDeviceSize bytes;
            int fds[2];
            const char *err = vk_memory(v, image, VK_NULL_HANDLE, &bytes, fds);
            if (err)
                return err;
            gl_import_memory(&s->gl_mem[i], bytes, fds[0]);
            glGenTextures(1, &s->tex[i]);
            glBindTexture(GL_TEXTURE_2D, s->tex[i]);
            glTexStorageMem2DEXT(GL_TEXTURE_2D, 1, gl_formats[i], W, H, s->gl_mem[i], 0);
            glBindTexture(GL_TEXTURE_2D, 0);
            if (glGetError() != GL_NO_ERROR)
                return "glImportMemoryFdEXT / glTexStorageMem2DEXT: GL error";
            if (cuda_import_memory(&s->cu_mem[i], bytes, fds[1]) != cudaSuccess)
                return "cudaImportExternalMemory (image) failed";
            struct cudaExternalMemoryMipmappedArrayDesc ad;
            memset(&ad, 0, sizeof ad);
            ad.formatDesc = i == 0 ? cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned)
                                   : cudaCreateChannelDesc(8, 0, 0, 0, cudaChannelFormatKindUnsigned);
            ad.extent.width = W;
            ad.extent.height = H;
            ad.extent.depth = 0;
            ad.flags = cudaArrayColorAttachment;
            ad.numLevels = 1;
            if (cudaExternalMemoryGetMappedMipmappedArray(&s->mip[i], s->cu_mem[i], &ad) != cudaSuccess)
                return "cudaExternalMemoryGetMappedMipmappedArray failed";
            cudaArray_t level0;
            if (cudaGetMipmappedArrayLevel(&level0, s->mip[i], 0) != cudaSuccess)
                return "cudaGetMipmappedArrayLevel failed";
            s->cu_tex[i] = cuda_texture_object(level0);
            if (!s->cu_tex[i])
                return "cudaCreateTextureObject failed";
        }
    } else {
        s->mask_offset = ((size_t)W * H * 4 + 255) & ~(size_t)255;
        size_t size = s->mask_offset + (size_t)W * H;
        VkExternalMemoryBufferCreateInfo ext = {VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_BUFFER_CREATE_INFO, NULL,
                                                VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT};
        VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, &ext, 0, size,
                                  VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                  VK_SHARING_MODE_EXCLUSIVE, 0, NULL};
        VkBuffer buffer;
        if (VK_DEV_FN(v, vkCreateBuffer)(v->device, &bci, NULL, &buffer) != VK_SUCCESS)
            return "vkCreateBuffer (external) failed";
        VkDeviceSize bytes;
        int fds[2];
        const char *err = vk_memory(v, VK_NULL_HANDLE, buffer, &bytes, fds);
        if (err)
            return err;
        gl_import_memory(&s->gl_mem[0], bytes, fds[0]);
        glGenBuffers(1, &s->buf);
        glBindBuffer(GL_PIXEL_PACK_BUFFER, s->buf);
        glBufferStorageMemEXT(GL_PIXEL_PACK_BUFFER, (GLsizeiptr)size, s->gl_mem[0], 0);
        glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
        if (glGetError() != GL_NO_ERROR)
            return "glImportMemoryFdEXT / glBufferStorageMemEXT: GL error";
        if (cuda_import_memory(&s->cu_mem[0], bytes, fds[1]) != cudaSuccess)
            return "cudaImportExternalMemory (buffer) failed";
        struct cudaExternalMemoryBufferDesc bd;
        memset(&bd, 0, sizeof bd);
        bd.size = size;
        void *ptr = NULL;
        if (cudaExternalMemoryGetMappedBuffer(&ptr, s->cu_mem[0], &bd) != cudaSuccess)
            return "cudaExternalMemoryGetMappedBuffer failed";
        s->cu_ptr = ptr;
        glGenFramebuffers(1, &s->fbo);
    }
    return import_semaphores(v, s);
}

static void ext_produce(bench *b, void *s_, int f)
{
    ext_state *s = s_;
    GLenum general[2] = {GL_LAYOUT_GENERAL_EXT, GL_LAYOUT_GENERAL_EXT};
    /* GL may write again once CUDA has read the last frame */
    if (s->started) {
        if (s->mode == 2)
            glWaitSemaphoreEXT(s->gl_done, 1, &s->buf, 0, NULL, NULL);
        else
            glWaitSemaphoreEXT(s->gl_done, 0, NULL, 2, s->tex, general);
    }
    if (s->mode == 0)
        gl_write(s->tex[0], s->tex[1], f); /* the engine renders into the shared textures */
    else
        gl_write(b->src_rgba, b->src_mask, f);
}

static const char *ext_consume(bench *b, void *s_, int f)
{
    ext_state *s = s_;
    GLenum general[2] = {GL_LAYOUT_GENERAL_EXT, GL_LAYOUT_GENERAL_EXT};
    if (s->mode == 1) {
        glCopyImageSubData(b->src_rgba, GL_TEXTURE_2D, 0, 0, 0, 0, s->tex[0], GL_TEXTURE_2D, 0, 0, 0, 0, W, H, 1);
        glCopyImageSubData(b->src_mask, GL_TEXTURE_2D, 0, 0, 0, 0, s->tex[1], GL_TEXTURE_2D, 0, 0, 0, 0, W, H, 1);
    } else if (s->mode == 2) {
        GLint read_fbo = 0;
        glGetIntegerv(GL_READ_FRAMEBUFFER_BINDING, &read_fbo);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, s->fbo);
        glBindBuffer(GL_PIXEL_PACK_BUFFER, s->buf);
        glPixelStorei(GL_PACK_ALIGNMENT, 1);
        glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, b->src_rgba, 0);
        glReadBuffer(GL_COLOR_ATTACHMENT0);
        glReadPixels(0, 0, W, H, GL_RGBA, GL_UNSIGNED_BYTE, (void *)0);
        glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, b->src_mask, 0);
        glReadPixels(0, 0, W, H, GL_RED, GL_UNSIGNED_BYTE, (void *)(uintptr_t)s->mask_offset);
        glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, 0, 0);
        glPixelStorei(GL_PACK_ALIGNMENT, 4);
        glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, (GLuint)read_fbo);
    }
    if (s->mode == 2)
        glSignalSemaphoreEXT(s->gl_ready, 1, &s->buf, 0, NULL, NULL);
    else
        glSignalSemaphoreEXT(s->gl_ready, 0, NULL, 2, s->tex, general);
    glFlush();
    struct cudaExternalSemaphoreWaitParams wp;
    memset(&wp, 0, sizeof wp);
    if (cudaWaitExternalSemaphoresAsync(&s->cu_ready, &wp, 1, b->stream) != cudaSuccess)
        return "cudaWaitExternalSemaphoresAsync";
    int e = s->mode == 2 ? sum_linear(b, f, s->cu_ptr, (size_t)W * 4, s->cu_ptr + s->mask_offset, W)
                         : sum_textures(b, f, s->cu_tex[0], s->cu_tex[1]);
    if (e)
        return "kernel launch";
    struct cudaExternalSemaphoreSignalParams sp;
    memset(&sp, 0, sizeof sp);
    if (cudaSignalExternalSemaphoresAsync(&s->cu_done, &sp, 1, b->stream) != cudaSuccess)
        return "cudaSignalExternalSemaphoresAsync";
    s->started = 1;
    return NULL;
}
#endif

/* ---- main ---------------------------------------------------------------------------------------- */

static const char *const g_keys[] = {"ref", "naive", "cached", "register", "pbo", "pbo-noflush", "pbo-gettex",
                                     "ext-image", "ext-image-copy", "ext-buffer", "batched"};
#define N_KEYS ((int)(sizeof g_keys / sizeof g_keys[0]))
static const char *g_only; /* comma-separated keys, or NULL for all */

static int wanted(const char *key)
{
    if (!g_only)
        return 1;
    size_t n = strlen(key);
    for (const char *p = g_only; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, key, n) == 0)
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

static void unavailable(const char *name, const char *why)
{
    result *r = &g_results[g_n_results++];
    memset(r, 0, sizeof *r);
    r->name = name;
    r->latency = r->cpu = r->pipelined = NAN;
    snprintf(r->note, sizeof r->note, "unavailable: %s", why);
    step("%s: unavailable: %s", name, why);
}

/* The naive and cached rows (`cache`): both textures registered once, then the frames. */
static void run_images(bench *b, const char *key, const char *name, int cache, const char *note)
{
    image_state st;
    memset(&st, 0, sizeof st);
    st.cache = cache;
    phase(key, "register", 60);
    if (glcv_cuda_image_register(&st.rgba, b->src_rgba, 0, NULL) == GLCV_OK &&
        glcv_cuda_image_register(&st.mask, b->src_mask, 0, NULL) == GLCV_OK) {
        method m = {key, name, &st, NULL, image_consume, 0};
        run_method(b, &m, note);
        if (cache) {
            result *r = &g_results[g_n_results - 1];
            char changes[64];
            snprintf(changes, sizeof changes, "mapped arrays changed %d times", st.changes);
            append_note(r->note, sizeof r->note, changes);
        }
        cudaStreamSynchronize(b->stream);
        for (int i = 0; i < 2; i++)
            if (st.tex[i])
                cudaDestroyTextureObject(st.tex[i]);
    } else {
        unavailable(name, "cudaGraphicsGLRegisterImage failed");
    }
    glcv_cuda_image_unregister(&st.rgba, NULL);
    glcv_cuda_image_unregister(&st.mask, NULL);
}

/* ---- batched: the masks of many streams in one hand-over --------------------------------------- */

/* An R8 texture array of `layers` 640x480 masks (one per stream, as glcv_bgsub makes them),
 * registered once; per set GL writes every layer (glClearTexImage), then one map gives every
 * layer's array, the sum kernel reads layer 0 and the last one (checked), unmap. Latency: GL
 * finished first, median over the sets; the hand-over alone = map + arrays + unmap. */
static void batched(bench *b, int layers, int sets)
{
    enum { BW = 640, BH = 480 };
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D_ARRAY, tex);
    glTexStorage3D(GL_TEXTURE_2D_ARRAY, 1, GL_R8, BW, BH, layers);
    glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
    glcv_logger lg = {glcv_log_stderr, NULL, GLCV_LOG_WARN};
    glcv_cuda_image img;
    if (glcv_cuda_image_register_layers(&img, tex, 0, &lg) != GLCV_OK) {
        printf("batched %4d layers: registration failed\n", layers);
        glDeleteTextures(1, &tex);
        return;
    }
    glcv_cuda_image *one[1] = {&img};
    double handover[256], total[256];
    int errors = 0, n = 0;
    for (int s = 0; s < sets && s < 256; s++) {
        uint8_t v = (uint8_t)(s * 7 + 1);
        glClearTexImage(tex, 0, GL_RED, GL_UNSIGNED_BYTE, &v);
        glFinish();
        double t0 = bench_now_ms();
        if (glcv_cuda_images_map(one, 1, b->stream, &lg) != GLCV_OK)
            break;
        double t1 = bench_now_ms();
        unsigned long long sums[2] = {0, 0};
        for (int k = 0; k < 2; k++) {
            cudaTextureObject_t t = cuda_texture_object(img.layer_arrays[k ? layers - 1 : 0]);
            cudaMemsetAsync(b->d_sums, 0, sizeof *b->d_sums, b->stream);
            glcv_cuda_sum_texture_params tp = {t, BW, BH, 1, b->d_sums};
            glcv_cuda_sum_texture(tp, b->stream);
            cudaMemcpyAsync(&sums[k], b->d_sums, sizeof sums[k], cudaMemcpyDeviceToHost, b->stream);
            cudaStreamSynchronize(b->stream);
            cudaDestroyTextureObject(t);
        }
        double t2 = bench_now_ms();
        glcv_cuda_images_unmap(one, 1, b->stream, &lg);
        cudaStreamSynchronize(b->stream);
        double t3 = bench_now_ms();
        for (int k = 0; k < 2; k++)
            errors += sums[k] != (unsigned long long)v * BW * BH;
        handover[n] = (t1 - t0) + (t3 - t2);
        total[n] = t3 - t0;
        n++;
    }
    double h = median(handover, n, 1), t = median(total, n, 1);
    printf("batched %4d layers of 640x480 R8: hand-over %.4f ms per set, %.5f ms per stream; with two layers "
           "summed %.4f ms; %d sets, %d errors\n",
           layers, h, h / layers, t, n, errors);
    glcv_cuda_image_unregister(&img, &lg);
    glDeleteTextures(1, &tex);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* a pipe (tee) would otherwise hold everything until exit */
    g_start_ms = bench_now_ms();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_watchdog;
    sigaction(SIGALRM, &sa, NULL);
    bench b;
    memset(&b, 0, sizeof b);
    b.frames = 300;
    b.ref_latency = NAN;
    const char *csv = NULL, *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc)
            b.frames = atoi(argv[++i]);
        else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc)
            csv = argv[++i];
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--budget-s") == 0 && i + 1 < argc)
            g_budget_ms = 1e3 * atof(argv[++i]);
        else if (strcmp(argv[i], "--frame-limit-ms") == 0 && i + 1 < argc)
            g_frame_limit_ms = atof(argv[++i]);
        else if (strcmp(argv[i], "--list") == 0) {
            for (int k = 0; k < N_KEYS; k++)
                printf("%s\n", g_keys[k]);
            return 0;
        } else {
            fprintf(stderr, "usage: interop_bench [--frames N] [--csv FILE] [--only KEY,KEY..] [--list] "
                            "[--budget-s S] [--frame-limit-ms MS]\n");
            return 2;
        }
    }
    b.frames = b.frames < 2 ? 2 : b.frames > MAX_FRAMES ? MAX_FRAMES : b.frames;
    g_budget_ms = g_budget_ms < 100 ? 100 : g_budget_ms;
    g_only = only;

    phase("setup", "CUDA query", 60);
    step("setup: CUDA query ...");
    glcv_cuda_info info;
    glcv_cuda_query(&info);
    step("setup: CUDA query done (%d device(s))", info.devices);
    if (info.devices < 1) {
        printf("interop_bench: skipped: %s\n", info.text);
        return 0;
    }
    phase("setup", "GL context", 60);
    step("setup: GL context ...");
    glcv_context *ctx = NULL;
    glcv_context_params cp = GLCV_CONTEXT_PARAMS(.min_gl_version = 43);
    if (glcv_context_create(&cp, &ctx) != GLCV_OK) {
        printf("interop_bench: skipped: no OpenGL 4.3 context\n");
        return 0;
    }
    glcv_cuda_query(&info);
    step("setup: GL context done");
    printf("interop_bench: %dx%d RGBA8 + R8 mask, %d frames, %.1f s budget and %.0f ms frame limit per method; "
           "%s\n%s\n",
           W, H, b.frames, g_budget_ms / 1e3, g_frame_limit_ms, glcv_context_describe(ctx), info.text);
    if (info.gl_device < 0) {
        printf("interop_bench: skipped: the GL context is not on a CUDA device\n");
        glcv_context_destroy(&ctx);
        return 0;
    }
    if (!epoxy_has_gl_extension("GL_ARB_clear_texture") && epoxy_gl_version() < 44) {
        printf("interop_bench: skipped: glClearTexImage (GL 4.4) is needed\n");
        glcv_context_destroy(&ctx);
        return 0;
    }
    phase("setup", "CUDA resources", 60);
    step("setup: CUDA device %d, stream and buffers ...", info.gl_device);
    cudaSetDevice(info.gl_device);
    cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking);
    cudaMalloc((void **)&b.d_sums, (size_t)b.frames * 2 * sizeof *b.d_sums);
    b.h_sums = calloc((size_t)b.frames * 2, sizeof *b.h_sums);
    b.src_rgba = make_texture(GL_RGBA8);
    b.src_mask = make_texture(GL_R8);
    cudaError_t cerr = cudaDeviceSynchronize();
    glFinish();
    step("setup: done (%s)", cudaGetErrorName(cerr));

    /* reference */
    ref_state ref;
    memset(&ref, 0, sizeof ref);
    if (wanted("ref")) {
        cudaMallocPitch((void **)&ref.rgba, &ref.rgba_pitch, (size_t)W * 4, H);
        cudaMallocPitch((void **)&ref.mask, &ref.mask_pitch, W, H);
        method m_ref = {"ref", "reference (device memory, no GL)", &ref, ref_produce, ref_consume, 0};
        b.uniform = 1;
        run_method(&b, &m_ref, "the kernels alone");
        b.uniform = 0;
        b.ref_latency = g_results[g_n_results - 1].latency;
    }

    /* naive and cached */
    if (wanted("naive"))
        run_images(&b, "naive", "naive (register once, map + array per frame)", 0, "texture objects made per frame");
    if (wanted("cached"))
        run_images(&b, "cached", "cached (map per frame, texture objects kept)", 1, NULL);
    if (wanted("register")) {
        method m = {"register", "register-per-frame (register + map + unregister)", NULL, NULL, register_consume,
                    30};
        run_method(&b, &m, "re-creating the interop resources every call");
    }

    /* pbo: the library's bridge, with and without the flush */
    for (int flush = 1; flush >= 0; flush--) {
        const char *key = flush ? "pbo" : "pbo-noflush";
        if (!wanted(key))
            continue;
        phase(key, "bridge create", 60);
        glcv_cuda_bridge *bridge = NULL;
        if (glcv_cuda_bridge_create(W, H, NULL, &bridge) == GLCV_OK) {
            glcv_cuda_bridge_set_flush(bridge, flush);
            method m = {key, flush ? "pbo (glcv bridge: GL copy + flush + buffer map)" : "pbo without glFlush (diagnostic)",
                        bridge, NULL, pbo_consume, flush ? 0 : 6};
            run_method(&b, &m, flush ? "what glcv_track_frame_texture does" : "the copies left unflushed");
            cudaStreamSynchronize(b.stream);
            glcv_cuda_bridge_destroy(&bridge);
        } else {
            unavailable(key, "glcv_cuda_bridge_create failed");
        }
    }
    if (wanted("pbo-gettex")) {
        phase("pbo-gettex", "setup", 60);
        gettex_state gs;
        const char *why = gettex_setup(&gs);
        method m = {"pbo-gettex", "pbo-gettex (glGetTextureImage + flush + buffer map)", &gs, NULL, gettex_consume,
                    0};
        if (why)
            unavailable(m.name, why);
        else
            run_method(&b, &m, "no framebuffer");
        cudaStreamSynchronize(b.stream);
        gettex_teardown(&gs);
    }

    static const char *const ext_keys[3] = {"ext-image", "ext-image-copy", "ext-buffer"};
    static const char *const names[3] = {"ext-image (shared textures + semaphores)",
                                         "ext-image-copy (+ glCopyImageSubData)",
                                         "ext-buffer (GL copy into shared memory + semaphores)"};
#ifdef GLCV_HAVE_VULKAN
    if (wanted("ext-image") || wanted("ext-image-copy") || wanted("ext-buffer")) {
        phase("ext", "Vulkan setup", 60);
        step("ext: Vulkan instance and device ...");
        const char *why = NULL;
        if (!epoxy_has_gl_extension("GL_EXT_memory_object_fd") || !epoxy_has_gl_extension("GL_EXT_semaphore_fd"))
            why = "GL_EXT_memory_object_fd or GL_EXT_semaphore_fd missing";
        struct cudaDeviceProp prop;
        vk v;
        memset(&v, 0, sizeof v);
        if (!why && cudaGetDeviceProperties(&prop, info.gl_device) != cudaSuccess)
            why = "cudaGetDeviceProperties failed";
        if (!why)
            why = vk_init(&v, (const uint8_t *)prop.uuid.bytes);
        step("ext: Vulkan %s", why ? why : "ready");
        static ext_state ext[3];
        for (int mode = 0; mode < 3; mode++) {
            if (!wanted(ext_keys[mode]))
                continue;
            phase(ext_keys[mode], "setup", 60);
            step("%s: setup ...", ext_keys[mode]);
            const char *err = why ? why : ext_setup(&v, &ext[mode], mode);
            step("%s: setup %s", ext_keys[mode], err ? err : "done");
            method m = {ext_keys[mode], names[mode], &ext[mode], ext_produce, ext_consume, 0};
            if (err)
                unavailable(names[mode], err);
            else
                run_method(&b, &m, mode == 0 ? "for textures the engine owns" : NULL);
            cudaStreamSynchronize(b.stream);
        }
    }
#else
    for (int mode = 0; mode < 3; mode++)
        if (wanted(ext_keys[mode]))
            unavailable(names[mode], "not built: no Vulkan headers at build time (libvulkan-dev)");
#endif
    alarm(0);

    printf("\nlatency: GL finished, then the hand-over and the kernels until the stream is idle (median); calls: "
           "the CPU time of the calls alone; pipelined: back to back, %d in flight at most, mean\n",
           PIPE_DEPTH);
    printf("%-52s %10s %10s %10s %11s %6s %6s  %s\n", "hand-over", "latency", "hand-over", "calls", "pipelined",
           "frames", "errors", "note");
    for (int i = 0; i < g_n_results; i++) {
        const result *r = &g_results[i];
        printf("%-52s %7.4f ms %7.4f ms %7.4f ms %8.4f ms %6d %6d  %s\n", r->name, r->latency,
               r->latency - b.ref_latency, r->cpu, r->pipelined, r->frames, r->errors, r->note);
    }
    if (csv) {
        FILE *f = fopen(csv, "w");
        if (f) {
            fprintf(f, "method,latency_ms,handover_ms,calls_ms,pipelined_ms,frames,errors,note\n");
            for (int i = 0; i < g_n_results; i++)
                fprintf(f, "\"%s\",%.5f,%.5f,%.5f,%.5f,%d,%d,\"%s\"\n", g_results[i].name, g_results[i].latency,
                        g_results[i].latency - b.ref_latency, g_results[i].cpu, g_results[i].pipelined,
                        g_results[i].frames, g_results[i].errors, g_results[i].note);
            fclose(f);
        }
    }
    if (wanted("batched")) {
        phase("batched", "", 120);
        printf("\nbatched hand-over (one registration, one map per set for every layer):\n");
        for (int layers = 1; layers <= 256; layers *= 4)
            batched(&b, layers, 60);
    }
    phase("teardown", "", 30);
    cudaFree(ref.rgba);
    cudaFree(ref.mask);
    cudaFree(b.d_sums);
    free(b.h_sums);
    glDeleteTextures(1, &b.src_rgba);
    glDeleteTextures(1, &b.src_mask);
    cudaStreamDestroy(b.stream);
    glcv_context_destroy(&ctx);
    alarm(0);
    step("done");
    return 0;
}
