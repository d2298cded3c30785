/* match_bench: template matching and Pearson correlation against the papers' tables.
 *
 *   CPU   SAD on a 640x480 gray image with the paper's masks (4..32): portable C (the paper's
 *         "C plain"), SSE4.1 mpsadbw and AVX2 vmpsadbw on one thread, AVX2 on every core; the
 *         four metrics at 16x16 and 32x32.
 *   GPU   the paper's table 2 per mask: upload, kernel, download and total (CUDA events, one piece,
 *         input from pinned memory), the wall time of a whole call from ordinary memory, and the
 *         total with 4 pipelined pieces; every metric at 32x32; every device when there are several.
 *   GL    a 1920x1080 RGBA8 frame, SSD 16x16: the whole call from host memory against the same
 *         pixels in a GL texture (registered with CUDA once and mapped per call, read in place), and
 *         the Pearson coefficients of 64 images of 320x240 from host memory and from GL textures (a
 *         piece of them per hand-over), when the GL context is on the CUDA device.
 *   PMCC  8192 images of 320x240 against one reference (Temizel et al.): the resident bank's kernel
 *         time and bandwidth (1, 2 and 4 images per block), the bank streamed from host memory, and
 *         the CPU engine on a part of the bank.
 *
 * Times are medians of --repeat runs after one warm-up run (best in brackets). Inputs are
 * deterministic random pixels; --write-data DIR saves the image and templates as PNG for
 * bench/match_peer.py (OpenCV on the same data).
 *
 * Usage: match_bench [--cpu-only | --gpu-only] [--repeat N] [--pmcc N] [--pmcc-cpu N]
 *                    [--write-data DIR] [--csv FILE] [--quick] */
#define _POSIX_C_SOURCE 200809L

#include "benchutil.h"
#include "correlate_internal.h"

#include <glcv/correlate.h>
#include <glcv/glcv.h>
#include <glcv/match.h>

#include <epoxy/gl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int masks[] = {4, 8, 12, 16, 24, 32};
enum { N_MASKS = sizeof masks / sizeof masks[0], W = 640, H = 480 };

static int g_repeat = 50;
static FILE *g_csv;

typedef struct stat2 {
    double median, best;
} stat2;

static stat2 stats(double *v, int n)
{
    bench_sort(v, n);
    stat2 s = {n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]), v[0]};
    return s;
}

static void csv_row(const char *section, const char *name, const char *param, double value)
{
    if (g_csv)
        fprintf(g_csv, "%s,%s,%s,%.6f\n", section, name, param, value);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t next_random(void)
{
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static void fill_random(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = next_random();
        for (size_t k = 0; k < 8 && i + k < n; k++)
            p[i + k] = (uint8_t)(v >> (8 * k));
    }
}

static glcv_image g_image, g_templ[N_MASKS];

static void make_data(void)
{
    glcv_image_alloc(W, H, GLCV_PIXEL_GRAY8, &g_image);
    fill_random(g_image.data, (size_t)W * H);
    for (int k = 0; k < N_MASKS; k++) {
        glcv_image_alloc(masks[k], masks[k], GLCV_PIXEL_GRAY8, &g_templ[k]);
        /* the template is cut out of the image, so that there is a perfect match */
        int x0 = 100 + 7 * k, y0 = 200 + 3 * k;
        for (int y = 0; y < masks[k]; y++)
            memcpy(g_templ[k].data + (size_t)y * masks[k], g_image.data + (size_t)(y0 + y) * W + x0, (size_t)masks[k]);
    }
}

static glcv_match *make_matcher(glcv_engine_mode engine, glcv_match_simd simd, int threads, glcv_match_metric metric,
                                int chunks, int devices, int k)
{
    glcv_logger lg = {glcv_log_stderr, NULL, GLCV_LOG_WARN};
    glcv_match_params p = GLCV_MATCH_PARAMS(.width = W, .height = H, .engine = engine, .simd = simd,
                                            .threads = threads, .metric = metric, .cuda_chunks = chunks,
                                            .cuda_devices = devices, .logger = lg);
    glcv_match *m = NULL;
    if (glcv_match_create(&p, &m) != GLCV_OK)
        return NULL;
    if (glcv_match_set_template(m, &g_templ[k], NULL) != GLCV_OK)
        glcv_match_destroy(&m);
    return m;
}

/* Median wall time of glcv_match_image (after a warm-up call). */
static stat2 time_match(glcv_match *m, int runs)
{
    double *t = malloc((size_t)runs * sizeof *t);
    glcv_match_image(m, &g_image);
    for (int i = 0; i < runs; i++) {
        double t0 = bench_now_ms();
        glcv_match_image(m, &g_image);
        t[i] = bench_now_ms() - t0;
    }
    stat2 s = stats(t, runs);
    free(t);
    return s;
}

static void print_cell(stat2 s)
{
    printf(" %8.3f (%7.3f) |", s.median, s.best);
}

/* The CUDA timings of the last match (upload, kernel, download, total). */
static void cuda_times(glcv_match *m, double out[4])
{
    glcv_timing t[4];
    int n = 0;
    glcv_match_timings(m, t, 4, &n);
    for (int i = 0; i < 4; i++)
        out[i] = i < n ? t[i].ms : 0.0;
}

/* Median kernel time of glcv_match_image (CUDA events; after a warm-up call). */
static stat2 time_kernel(glcv_match *m, int runs)
{
    double *kt = malloc((size_t)runs * sizeof *kt);
    glcv_match_image(m, &g_image);
    for (int i = 0; i < runs; i++) {
        glcv_match_image(m, &g_image);
        double t[4];
        cuda_times(m, t);
        kt[i] = t[1];
    }
    stat2 s = stats(kt, runs);
    free(kt);
    return s;
}

/* Every metric at 16x16 and 32x32 on `engine` (all cores and the best SIMD; CUDA: one piece on one
 * device), timed by `time_of` (--repeat runs): median and best on the CPU, the median on CUDA;
 * CSV rows of the table `table`. */
static void metric_table(const char *title, glcv_engine_mode engine, stat2 (*time_of)(glcv_match *m, int runs),
                         const char *table)
{
    int cuda = engine == GLCV_ENGINE_CUDA;
    printf("%s", title);
    printf("| mask | SAD | SSD | LINF | ZNCC |\n|---|---|---|---|---|\n");
    for (int k = 3; k < N_MASKS; k += 2) {
        printf("| %dx%d |", masks[k], masks[k]);
        for (int metric = GLCV_MATCH_SAD; metric <= GLCV_MATCH_ZNCC; metric++) {
            glcv_match *m = make_matcher(engine, GLCV_MATCH_SIMD_DEFAULT, 0, (glcv_match_metric)metric, cuda, cuda, k);
            stat2 s = time_of(m, g_repeat);
            if (cuda)
                printf(" %.4f |", s.median);
            else
                print_cell(s);
            char param[16];
            snprintf(param, sizeof param, "%d", masks[k]);
            csv_row(table, glcv_match_metric_string((glcv_match_metric)metric), param, s.median);
            glcv_match_destroy(&m);
        }
        printf("\n");
    }
}

static void bench_cpu(int quick)
{
    printf("\n## CPU: SAD, 640x480 gray, the paper's masks (ms per image: median (best) of %d)\n\n", g_repeat);
    printf("| mask | C plain, 1 thread | SSE4.1, 1 thread | AVX2, 1 thread | AVX2, all cores |\n");
    printf("|---|---|---|---|---|\n");
    static const glcv_match_simd simds[] = {GLCV_MATCH_SIMD_NONE, GLCV_MATCH_SIMD_SSE41, GLCV_MATCH_SIMD_AVX2,
                                            GLCV_MATCH_SIMD_AVX2};
    static const char *const names[] = {"portable_1t", "sse41_1t", "avx2_1t", "avx2_all"};
    for (int k = 0; k < N_MASKS; k++) {
        printf("| %dx%d |", masks[k], masks[k]);
        for (int v = 0; v < 4; v++) {
            glcv_match *m = make_matcher(GLCV_ENGINE_CPU, simds[v], v == 3 ? 0 : 1, GLCV_MATCH_SAD, 0, 0, k);
            if (!m || (v == 0 && quick)) {
                printf(" n/a |");
                glcv_match_destroy(&m);
                continue;
            }
            int runs = v == 0 ? (g_repeat < 5 ? g_repeat : 5) : g_repeat;
            stat2 s = time_match(m, runs);
            print_cell(s);
            char param[16];
            snprintf(param, sizeof param, "%d", masks[k]);
            csv_row("cpu_sad", names[v], param, s.median);
            glcv_match_destroy(&m);
        }
        printf("\n");
    }
    metric_table("\n## CPU: every metric, 640x480 gray, all cores, best SIMD (ms per image: median (best))\n\n",
                 GLCV_ENGINE_CPU, time_match, "cpu_metric");
}

static void bench_gpu(int devices)
{
    printf("\n## GPU: the paper's table 2, 640x480 gray, SAD (ms: median of %d)\n\n", g_repeat);
    printf("HtoD/kernel/DtoH/total: CUDA events, one piece, image from pinned memory (glcv_match_map_image); "
           "call: wall time of glcv_match_image from ordinary memory (one piece); 4 pieces: the same with 4 "
           "pipelined pieces. The map is 640x480 uint32.\n\n");
    printf("| mask | HtoD | kernel | DtoH | total | call | call, 4 pieces |\n|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < N_MASKS; k++) {
        glcv_match *m = make_matcher(GLCV_ENGINE_CUDA, GLCV_MATCH_SIMD_DEFAULT, 0, GLCV_MATCH_SAD, 1, 1, k);
        glcv_match *m4 = make_matcher(GLCV_ENGINE_CUDA, GLCV_MATCH_SIMD_DEFAULT, 0, GLCV_MATCH_SAD, 4, 1, k);
        if (!m || !m4) {
            printf("| %dx%d | cannot create a CUDA matcher |\n", masks[k], masks[k]);
            glcv_match_destroy(&m);
            glcv_match_destroy(&m4);
            continue;
        }
        glcv_image mapped;
        glcv_match_map_image(m, &mapped);
        memcpy(mapped.data, g_image.data, (size_t)W * H);
        glcv_match_image_mapped(m);
        double *col[4];
        for (int c = 0; c < 4; c++)
            col[c] = malloc((size_t)g_repeat * sizeof(double));
        for (int i = 0; i < g_repeat; i++) {
            glcv_match_map_image(m, &mapped);
            glcv_match_image_mapped(m);
            double t[4];
            cuda_times(m, t);
            for (int c = 0; c < 4; c++)
                col[c][i] = t[c];
        }
        printf("| %dx%d |", masks[k], masks[k]);
        static const char *const names[] = {"htod", "kernel", "dtoh", "total"};
        char param[16];
        snprintf(param, sizeof param, "%d", masks[k]);
        for (int c = 0; c < 4; c++) {
            stat2 s = stats(col[c], g_repeat);
            printf(" %.4f |", s.median);
            csv_row("gpu_sad", names[c], param, s.median);
            free(col[c]);
        }
        stat2 call = time_match(m, g_repeat), call4 = time_match(m4, g_repeat);
        printf(" %.4f | %.4f |\n", call.median, call4.median);
        csv_row("gpu_sad", "call", param, call.median);
        csv_row("gpu_sad", "call_4pieces", param, call4.median);
        glcv_match_destroy(&m);
        glcv_match_destroy(&m4);
    }
    metric_table("\n## GPU: every metric, 640x480 gray (kernel ms, CUDA events, median)\n\n", GLCV_ENGINE_CUDA,
                 time_kernel, "gpu_metric_kernel");
    if (devices > 1) {
        printf("\n## GPU: the image split across %d devices, SAD (wall ms per call, median)\n\n", devices);
        printf("| mask | 1 device | %d devices |\n|---|---|---|\n", devices);
        for (int k = 0; k < N_MASKS; k++) {
            glcv_match *one = make_matcher(GLCV_ENGINE_CUDA, GLCV_MATCH_SIMD_DEFAULT, 0, GLCV_MATCH_SAD, 1, 1, k);
            glcv_match *all =
                make_matcher(GLCV_ENGINE_CUDA, GLCV_MATCH_SIMD_DEFAULT, 0, GLCV_MATCH_SAD, 1, -1, k);
            if (one && all)
                printf("| %dx%d | %.4f | %.4f |\n", masks[k], masks[k], time_match(one, g_repeat).median,
                       time_match(all, g_repeat).median);
            glcv_match_destroy(&one);
            glcv_match_destroy(&all);
        }
    }
}

/* ---- PMCC ---------------------------------------------------------------------------------------- */

/* One call from host memory (from_texture 0) or from GL textures (1). */
typedef glcv_status (*input_fn)(void *run, int from_texture);

typedef struct match_run {
    glcv_match *m;
    const glcv_image *frame;
    GLuint tex;
} match_run;

static glcv_status match_input(void *run, int from_texture)
{
    match_run *r = run;
    return from_texture ? glcv_match_image_texture(r->m, r->tex) : glcv_match_image(r->m, r->frame);
}

typedef struct correlate_run {
    glcv_correlate *c;
    const glcv_image *imgs;
    const GLuint *texs;
    int n;
    double *r;
} correlate_run;

static glcv_status correlate_input(void *run, int from_texture)
{
    correlate_run *r = run;
    return from_texture ? glcv_correlate_textures(r->c, r->texs, r->n, r->r) : glcv_correlate_images(r->c, r->imgs, r->n, r->r);
}

/* A table row per input (host memory, then GL textures): the median and best of --repeat calls
 * after a warm-up one; `t` holds g_repeat times. */
static void time_inputs(input_fn call, void *run, const char *const rows[2], const char *const names[2],
                        const char *param, double *t)
{
    for (int from_texture = 0; from_texture < 2; from_texture++) {
        glcv_status st = call(run, from_texture);
        for (int i = 0; i < g_repeat && st == GLCV_OK; i++) {
            double t0 = bench_now_ms();
            st = call(run, from_texture);
            t[i] = bench_now_ms() - t0;
        }
        if (st != GLCV_OK) {
            printf("| %s | %s |\n", rows[from_texture], glcv_status_string(st));
            continue;
        }
        stat2 s2 = stats(t, g_repeat);
        printf("| %s |", rows[from_texture]);
        print_cell(s2);
        printf("\n");
        csv_row("texture", names[from_texture], param, s2.median);
    }
}

/* The whole call from host memory and from a GL texture, 1920x1080 RGBA8, SSD 16x16. */
static void bench_texture(void)
{
    enum { TW = 1920, TH = 1080 };
    glcv_context *ctx = NULL;
    glcv_context_params cp = GLCV_CONTEXT_PARAMS(.min_gl_version = 33);
    glcv_cuda_info info;
    if (glcv_context_create(&cp, &ctx) != GLCV_OK || (glcv_cuda_query(&info), info.gl_device < 0)) {
        printf("\n(no GL context on a CUDA device: no texture-input rows)\n");
        glcv_context_destroy(&ctx);
        return;
    }
    glcv_image frame;
    if (glcv_image_alloc(TW, TH, GLCV_PIXEL_RGBA8, &frame) != GLCV_OK) {
        glcv_context_destroy(&ctx);
        return;
    }
    fill_random(frame.data, (size_t)TW * TH * 4);
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, TW, TH, 0, GL_RGBA, GL_UNSIGNED_BYTE, frame.data);
    glBindTexture(GL_TEXTURE_2D, 0);
    glcv_logger lg = {glcv_log_stderr, NULL, GLCV_LOG_WARN};
    glcv_match_params p = GLCV_MATCH_PARAMS(.width = TW, .height = TH, .format = GLCV_PIXEL_GRAY8,
                                            .engine = GLCV_ENGINE_CUDA, .metric = GLCV_MATCH_SSD, .logger = lg);
    glcv_match *m = NULL;
    int k = 3; /* 16x16 */
    if (glcv_match_create(&p, &m) == GLCV_OK && glcv_match_set_template(m, &g_templ[k], NULL) == GLCV_OK) {
        double *t = malloc((size_t)g_repeat * sizeof *t);
        printf("\n## A 1920x1080 RGBA8 frame, SSD %dx%d, the whole call (gray matching)\n\n", masks[k], masks[k]);
        printf("| input | ms median (best) |\n|---|---|\n");
        static const char *const rows[2] = {"host memory", "GL texture (registered once, mapped per call)"};
        static const char *const names[2] = {"host", "gl_texture"};
        if (t)
            time_inputs(match_input, &(match_run){m, &frame, tex}, rows, names, "1920x1080", t);
        free(t);
        glcv_match_forget_texture(m, tex);
    }
    glcv_match_destroy(&m);
    glDeleteTextures(1, &tex);
    /* Pearson correlation of 64 textures of 320x240 against a reference: a piece of `batch` of them
     * per hand-over */
    enum { CN = 64, CW = 320, CH = 240 };
    glcv_image imgs[CN];
    GLuint texs[CN];
    int made = 0;
    for (; made < CN && glcv_image_alloc(CW, CH, GLCV_PIXEL_RGBA8, &imgs[made]) == GLCV_OK; made++) {
        fill_random(imgs[made].data, (size_t)CW * CH * 4);
        glGenTextures(1, &texs[made]);
        glBindTexture(GL_TEXTURE_2D, texs[made]);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, CW, CH, 0, GL_RGBA, GL_UNSIGNED_BYTE, imgs[made].data);
    }
    glBindTexture(GL_TEXTURE_2D, 0);
    glcv_correlate_params cpar = GLCV_CORRELATE_PARAMS(.width = CW, .height = CH, .engine = GLCV_ENGINE_CUDA,
                                                       .logger = lg);
    glcv_correlate *c = NULL;
    double r[CN], *t = malloc((size_t)g_repeat * sizeof *t);
    if (made == CN && t && glcv_correlate_create(&cpar, &c) == GLCV_OK &&
        glcv_correlate_set_reference(c, &imgs[0]) == GLCV_OK) {
        glcv_correlate_params used;
        glcv_correlate_get_params(c, &used);
        printf("\n## Pearson correlation of %d RGBA8 images of %dx%d (gray), pieces of %d, the whole call\n\n", CN, CW,
               CH, used.batch);
        printf("| input | ms median (best) |\n|---|---|\n");
        static const char *const rows[2] = {"host memory", "GL textures"};
        static const char *const names[2] = {"correlate_host", "correlate_gl_textures"};
        time_inputs(correlate_input, &(correlate_run){c, imgs, texs, CN, r}, rows, names, "64x320x240", t);
        for (int i = 0; i < CN; i++)
            glcv_correlate_forget_texture(c, texs[i]);
    }
    free(t);
    glcv_correlate_destroy(&c);
    for (int i = 0; i < made; i++) {
        glDeleteTextures(1, &texs[i]);
        glcv_image_free(&imgs[i]);
    }
    glcv_image_free(&frame);
    glcv_context_destroy(&ctx);
}

/* The bank split across 1..devices devices: the resident bank's call (kernels, download, wait)
 * and a streamed call from host memory, medians of --repeat calls; the coefficients must be those
 * of one device. */
static void bench_pmcc_devices(const glcv_image *imgs, int n, const glcv_image *ref, int devices)
{
    glcv_logger lg = {glcv_log_stderr, NULL, GLCV_LOG_WARN};
    double *r1 = malloc((size_t)n * sizeof *r1), *r = malloc((size_t)n * sizeof *r);
    int runs = g_repeat < 10 ? g_repeat : 10;
    double *t = malloc((size_t)g_repeat * sizeof *t);
    if (!r1 || !r || !t) {
        free(r1), free(r), free(t);
        return;
    }
    printf("\n## PMCC over several GPUs: %d images of %dx%d gray, contiguous shares, one per device\n\n", n,
           ref->width, ref->height);
    printf("| devices | resident bank call ms | speed-up | streamed call ms | speed-up | same as 1 device |\n"
           "|---|---|---|---|---|---|\n");
    double bank1 = 0, stream1 = 0;
    for (int d = 1; d <= devices; d++) {
        glcv_correlate_params p = GLCV_CORRELATE_PARAMS(.width = ref->width, .height = ref->height,
                                                        .engine = GLCV_ENGINE_CUDA, .batch = 1024,
                                                        .cuda_devices = d, .logger = lg);
        glcv_correlate *c = NULL;
        if (glcv_correlate_create(&p, &c) != GLCV_OK || glcv_correlate_set_reference(c, ref) != GLCV_OK ||
            glcv_correlate_bank_load(c, imgs, n) != GLCV_OK || glcv_correlate_bank_run(c, r) != GLCV_OK) {
            printf("| %d | (failed) | | | | |\n", d);
            glcv_correlate_destroy(&c);
            continue;
        }
        for (int i = 0; i < g_repeat; i++) {
            double c0 = bench_now_ms();
            glcv_correlate_bank_run(c, r);
            t[i] = bench_now_ms() - c0;
        }
        stat2 bank = stats(t, g_repeat);
        int same = 1;
        if (d == 1)
            memcpy(r1, r, (size_t)n * sizeof *r);
        for (int i = 0; i < n; i++)
            same &= r[i] == r1[i];
        glcv_correlate_images(c, imgs, n, r);
        for (int i = 0; i < runs; i++) {
            double c0 = bench_now_ms();
            glcv_correlate_images(c, imgs, n, r);
            t[i] = bench_now_ms() - c0;
        }
        stat2 streamed = stats(t, runs);
        for (int i = 0; i < n; i++)
            same &= r[i] == r1[i];
        if (d == 1) {
            bank1 = bank.median;
            stream1 = streamed.median;
        }
        printf("| %d | %.3f | %.2fx | %.2f | %.2fx | %s |\n", d, bank.median, bank1 / bank.median, streamed.median,
               stream1 / streamed.median, same ? "yes" : "NO");
        char name[32];
        snprintf(name, sizeof name, "%d_devices", d);
        csv_row("pmcc_devices_bank", name, "ms", bank.median);
        csv_row("pmcc_devices_streamed", name, "ms", streamed.median);
        glcv_correlate_destroy(&c);
    }
    free(r1);
    free(r);
    free(t);
}

static void bench_pmcc(int n_gpu, int n_cpu, int gpu, int cpu, int devices)
{
    int pw = 320, ph = 240, n = gpu ? n_gpu : n_cpu;
    size_t bytes = (size_t)pw * ph;
    uint8_t *bank = malloc((size_t)n * bytes);
    glcv_image *imgs = calloc((size_t)n, sizeof *imgs);
    glcv_image ref = {malloc(bytes), pw, ph, (size_t)pw, GLCV_PIXEL_GRAY8};
    if (!bank || !imgs || !ref.data) {
        fprintf(stderr, "match_bench: out of memory for %d images\n", n);
        return;
    }
    fill_random(ref.data, bytes);
    fill_random(bank, (size_t)n * bytes);
    for (int i = 0; i < n; i++)
        imgs[i] = (glcv_image){bank + (size_t)i * bytes, pw, ph, (size_t)pw, GLCV_PIXEL_GRAY8};
    double *r = malloc((size_t)n * sizeof *r), *r_cpu = malloc((size_t)n * sizeof *r_cpu);
    glcv_logger lg = {glcv_log_stderr, NULL, GLCV_LOG_WARN};
    printf("\n## PMCC: %d images of 320x240 gray against one reference\n\n", n);
    if (gpu) {
        glcv_correlate_params p = GLCV_CORRELATE_PARAMS(.width = pw, .height = ph, .engine = GLCV_ENGINE_CUDA,
                                                        .batch = 1024, .logger = lg);
        glcv_correlate *c = NULL;
        if (glcv_correlate_create(&p, &c) == GLCV_OK) {
            glcv_correlate_set_reference(c, &ref);
            double t0 = bench_now_ms();
            glcv_correlate_bank_load(c, imgs, n);
            double load = bench_now_ms() - t0;
            double gb = (double)n * (double)bytes / 1e9;
            printf(
                "Resident bank (%.3f GB, loaded in %.1f ms): kernel time (CUDA events, median of %d), bandwidth over "
                "the bank's bytes:\n\n| images per block | kernel ms | GB/s | call ms (kernel + download + wait) |\n"
                "|---|---|---|---|\n",
                gb, load, g_repeat);
            static const char *const per_block[] = {"", "1", "2", "4"};
            for (int v = 0; v < 4; v++) {
                glcv_correlate_set_images_per_block(c, v ? per_block[v][0] - '0' : 0);
                double *kt = malloc((size_t)g_repeat * sizeof *kt), *ct = malloc((size_t)g_repeat * sizeof *ct);
                glcv_correlate_bank_run(c, r);
                for (int i = 0; i < g_repeat; i++) {
                    double c0 = bench_now_ms();
                    glcv_correlate_bank_run(c, r);
                    ct[i] = bench_now_ms() - c0;
                    glcv_timing t[4];
                    int nt = 0;
                    glcv_correlate_timings(c, t, 4, &nt);
                    kt[i] = nt > 1 ? t[1].ms : 0.0;
                }
                stat2 k = stats(kt, g_repeat), call = stats(ct, g_repeat);
                printf("| %s | %.4f (best %.4f) | %.0f | %.4f |\n", v ? per_block[v] : "auto", k.median, k.best,
                       gb / (k.median * 1e-3), call.median);
                csv_row("pmcc_resident", v ? per_block[v] : "auto", "kernel", k.median);
                free(kt);
                free(ct);
            }
            glcv_correlate_set_images_per_block(c, 0);
            /* streamed from host memory: pieces of 1024 images, uploads overlapping the kernels */
            double *st = malloc((size_t)(g_repeat < 10 ? g_repeat : 10) * sizeof *st);
            int runs = g_repeat < 10 ? g_repeat : 10;
            glcv_correlate_images(c, imgs, n, r);
            double up = 0, kern = 0;
            for (int i = 0; i < runs; i++) {
                double c0 = bench_now_ms();
                glcv_correlate_images(c, imgs, n, r);
                st[i] = bench_now_ms() - c0;
                glcv_timing t[4];
                int nt = 0;
                glcv_correlate_timings(c, t, 4, &nt);
                up = nt > 0 ? t[0].ms : 0;
                kern = nt > 1 ? t[1].ms : 0;
            }
            stat2 s = stats(st, runs);
            printf(
                "\nStreamed from ordinary host memory (copied into pinned pieces of 1024 images, uploads overlapping "
                "the kernels): %.2f ms per call (%.1f GB/s); last call: uploads %.2f ms, kernels %.2f ms summed.\n",
                s.median, gb / (s.median * 1e-3), up, kern);
            csv_row("pmcc_streamed", "call", "ms", s.median);
            free(st);
            glcv_correlate_destroy(&c);
            if (devices > 1)
                bench_pmcc_devices(imgs, n, &ref, devices);
        } else {
            printf("(no CUDA correlator)\n");
        }
    }
    if (cpu && n_cpu > 0) {
        int nc = n_cpu < n ? n_cpu : n;
        glcv_correlate_params p = GLCV_CORRELATE_PARAMS(.width = pw, .height = ph, .engine = GLCV_ENGINE_CPU,
                                                        .logger = lg);
        glcv_correlate *c = NULL;
        glcv_correlate_create(&p, &c);
        glcv_correlate_set_reference(c, &ref);
        int runs = g_repeat < 5 ? g_repeat : 5;
        double *t = malloc((size_t)runs * sizeof *t);
        glcv_correlate_images(c, imgs, nc, r_cpu);
        for (int i = 0; i < runs; i++) {
            double c0 = bench_now_ms();
            glcv_correlate_images(c, imgs, nc, r_cpu);
            t[i] = bench_now_ms() - c0;
        }
        stat2 s = stats(t, runs);
        printf("\nCPU engine (AVX2, all cores), %d images from host memory: %.2f ms per call, %.1f us per image, "
               "%.1f GB/s.\n",
               nc, s.median, 1e3 * s.median / nc, (double)nc * (double)bytes / 1e9 / (s.median * 1e-3));
        csv_row("pmcc_cpu", "call", "ms", s.median);
        if (gpu) {
            int same = 0;
            for (int i = 0; i < nc; i++)
                same += r_cpu[i] == r[i];
            printf("CPU and CUDA coefficients bit-identical for %d of %d images.\n", same, nc);
        }
        free(t);
        glcv_correlate_destroy(&c);
    }
    free(r);
    free(r_cpu);
    free(imgs);
    free(bank);
    free(ref.data);
}

static int write_data(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/image.png", dir);
    if (glcv_image_save_png(path, &g_image, NULL) != GLCV_OK)
        return 0;
    for (int k = 0; k < N_MASKS; k++) {
        snprintf(path, sizeof path, "%s/templ_%d.png", dir, masks[k]);
        if (glcv_image_save_png(path, &g_templ[k], NULL) != GLCV_OK)
            return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    int cpu = 1, gpu = 1, quick = 0, n_pmcc = 8192, n_pmcc_cpu = 1024;
    const char *data = NULL, *csv = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--cpu-only") == 0)
            gpu = 0;
        else if (strcmp(a, "--gpu-only") == 0)
            cpu = 0;
        else if (strcmp(a, "--quick") == 0)
            quick = 1;
        else if (strcmp(a, "--repeat") == 0 && v)
            g_repeat = atoi(argv[++i]);
        else if (strcmp(a, "--pmcc") == 0 && v)
            n_pmcc = atoi(argv[++i]);
        else if (strcmp(a, "--pmcc-cpu") == 0 && v)
            n_pmcc_cpu = atoi(argv[++i]);
        else if (strcmp(a, "--write-data") == 0 && v)
            data = argv[++i];
        else if (strcmp(a, "--csv") == 0 && v)
            csv = argv[++i];
        else {
            fprintf(stderr, "usage: match_bench [--cpu-only | --gpu-only] [--repeat N] [--pmcc N] [--pmcc-cpu N] "
                            "[--write-data DIR] [--csv FILE] [--quick]\n");
            return 2;
        }
    }
    if (g_repeat < 1 || n_pmcc < 1 || n_pmcc_cpu < 0)
        return 2;
    if (quick && g_repeat > 10)
        g_repeat = 10;
    if (csv && !(g_csv = fopen(csv, "a"))) {
        perror(csv);
        return 1;
    }
    make_data();
    if (data && !write_data(data)) {
        fprintf(stderr, "match_bench: cannot write the data to %s\n", data);
        return 1;
    }
    glcv_cuda_info info;
    glcv_cuda_query(&info);
    printf("# match_bench\n\n%s\n", info.text);
    if (gpu && (!info.built || info.devices < 1)) {
        printf("No CUDA device: GPU tables skipped.\n");
        gpu = 0;
    }
    if (cpu)
        bench_cpu(quick);
    if (gpu)
        bench_gpu(info.devices);
    if (gpu)
        bench_texture();
    bench_pmcc(n_pmcc, n_pmcc_cpu, gpu, cpu, gpu ? info.devices : 0);
    if (g_csv)
        fclose(g_csv);
    glcv_image_free(&g_image);
    for (int k = 0; k < N_MASKS; k++)
        glcv_image_free(&g_templ[k]);
    return 0;
}
