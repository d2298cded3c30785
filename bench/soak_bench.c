/* soak_bench: segment + track for many frames, sampling what a long-running process could leak:
 * host memory (resident set), open file descriptors, threads, GPU memory (GL_NVX_gpu_memory_info
 * where the driver has it; CUDA's cudaMemGetInfo when the tracker runs on CUDA). Every frame of a
 * synthetic scene (glcv/synth.h, 120 frames repeated, four moving objects) is segmented against
 * the scene's background (the GL engine in a headless context, else the CPU), its mask read back,
 * and the four objects tracked with the mask; every --recreate frames the segmenter and the
 * tracker are destroyed and made again (their create/destroy paths soak too).
 *
 * usage: soak_bench [--frames N] [--size WxH] [--samples S] [--recreate R] [--engine auto|cpu]
 *                   [--csv FILE]
 *   defaults: 100000 frames of 320x240, 100 samples, objects made again every 10000 frames.
 *
 * It prints a table of the samples and a summary: each quantity's value after the warm-up (the
 * first 5% of the frames), at the end, and its least-squares slope per 100000 frames over the
 * samples after the warm-up and over their last half. A leak shows as a steady slope in both; the
 * allocators' high-water marks (the C library's heap, the GL driver's) rise for a while and then
 * stay: a slope over the whole run, none over the last half. Exit status 1 when a call failed. */
#define _POSIX_C_SOURCE 200809L

#include <glcv/glcv.h>

#include "benchutil.h"
#include "cuda_internal.h"

#include <dirent.h>
#include <epoxy/gl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { SCENE_FRAMES = 120, OBJECTS = 4, MAX_SAMPLES = 10000 };

typedef struct sample {
    long frame;
    double seconds;
    double rss_mb;
    int fds, threads;
    double gl_used_mb;   /* -1: not reported by the driver */
    double cuda_used_mb; /* -1: no CUDA tracker */
} sample;

static double rss_mb(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the folder's own descriptor */
}

static int threads(void)
{
    char line[256];
    int n = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    fclose(f);
    return n;
}

/* GL_NVX_gpu_memory_info: dedicated memory minus what is available now, in MB; -1 without it. */
static double gl_used_mb(int have_nvx)
{
    if (!have_nvx)
        return -1.0;
    GLint total = 0, available = 0;
    glGetIntegerv(0x9047 /* GL_GPU_MEMORY_INFO_TOTAL_AVAILABLE_MEMORY_NVX */, &total);
    glGetIntegerv(0x9049 /* GL_GPU_MEMORY_INFO_CURRENT_AVAILABLE_VIDMEM_NVX */, &available);
    return (double)(total - available) / 1024.0;
}

typedef struct objects {
    glcv_segment *seg;
    glcv_track *track;
} objects;

static int make_objects(objects *o, const glcv_image *background, const glcv_image *first, glcv_engine_mode engine,
                        const glcv_rect *rois)
{
    glcv_logger lg = {glcv_log_stderr, NULL, GLCV_LOG_WARN};
    glcv_segment_params sp = GLCV_SEGMENT_PARAMS(.width = background->width, .height = background->height,
                                                 .engine = engine == GLCV_ENGINE_CPU ? GLCV_ENGINE_CPU
                                                                                     : GLCV_ENGINE_AUTO,
                                                 .logger = lg);
    glcv_track_params tp = GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = background->width, .height = background->height,
                                             .max_objects = OBJECTS, .window = GLCV_TRACK_WINDOW_ADAPTIVE,
                                             .engine = engine == GLCV_ENGINE_CPU ? GLCV_ENGINE_CPU : GLCV_ENGINE_AUTO,
                                             .logger = lg);
    if (glcv_segment_create(&sp, &o->seg) != GLCV_OK || glcv_segment_set_background(o->seg, background) != GLCV_OK ||
        glcv_track_create(&tp, &o->track) != GLCV_OK)
        return 0;
    glcv_track_hist h;
    for (int k = 0; k < OBJECTS; k++) {
        int id = -1;
        if (glcv_track_hist_compute(o->track, first, NULL, rois[k], &h) != GLCV_OK ||
            glcv_track_add(o->track, &h, rois[k], &id) != GLCV_OK)
            return 0;
    }
    return 1;
}

static void destroy_objects(objects *o)
{
    glcv_segment_destroy(&o->seg);
    glcv_track_destroy(&o->track);
}

/* Least-squares slope of y over x. */
static double slope(const double *x, const double *y, int n)
{
    double mx = 0, my = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        mx += x[i];
        my += y[i];
    }
    mx /= n;
    my /= n;
    for (int i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    return sxx > 0 ? sxy / sxx : 0.0;
}

int main(int argc, char **argv)
{
    long frames = 100000, recreate = 10000;
    int width = 320, height = 240, samples = 100;
    glcv_engine_mode engine = GLCV_ENGINE_AUTO;
    const char *csv = NULL;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--frames") && v)
            frames = atol(argv[++i]);
        else if (!strcmp(argv[i], "--size") && v && sscanf(argv[i + 1], "%dx%d", &width, &height) == 2)
            i++;
        else if (!strcmp(argv[i], "--samples") && v)
            samples = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--recreate") && v)
            recreate = atol(argv[++i]);
        else if (!strcmp(argv[i], "--engine") && v)
            engine = !strcmp(argv[++i], "cpu") ? GLCV_ENGINE_CPU : GLCV_ENGINE_AUTO;
        else if (!strcmp(argv[i], "--csv") && v)
            csv = argv[++i];
        else {
            fprintf(stderr, "usage: soak_bench [--frames N] [--size WxH] [--samples S] [--recreate R] "
                            "[--engine auto|cpu] [--csv FILE]\n");
            return 2;
        }
    }
    if (frames < 100 || samples < 10 || samples > MAX_SAMPLES || width < 64 || height < 48) {
        fprintf(stderr, "soak_bench: --frames >= 100, --samples 10..%d, --size at least 64x48\n", MAX_SAMPLES);
        return 2;
    }
    glcv_context *ctx = NULL;
    if (engine != GLCV_ENGINE_CPU) {
        glcv_context_params cp = GLCV_CONTEXT_PARAMS(.min_gl_version = 33);
        if (glcv_context_create(&cp, &ctx) != GLCV_OK)
            printf("no GL context: the segmenter runs on the CPU\n");
    }
    int have_nvx = ctx && epoxy_has_gl_extension("GL_NVX_gpu_memory_info");

    /* the scene, made once */
    glcv_synth *synth = NULL;
    glcv_synth_params sy = GLCV_SYNTH_PARAMS(.width = width, .height = height, .frames = SCENE_FRAMES,
                                             .objects = OBJECTS, .illumination_gain = 1.0f);
    glcv_image background, scene[SCENE_FRAMES];
    memset(scene, 0, sizeof scene);
    if (glcv_synth_create(&sy, &synth) != GLCV_OK ||
        glcv_image_alloc(width, height, GLCV_PIXEL_RGB8, &background) != GLCV_OK ||
        glcv_synth_background(synth, &background) != GLCV_OK) {
        fprintf(stderr, "soak_bench: cannot make the scene\n");
        return 1;
    }
    for (int f = 0; f < SCENE_FRAMES; f++)
        if (glcv_image_alloc(width, height, GLCV_PIXEL_RGB8, &scene[f]) != GLCV_OK ||
            glcv_synth_frame(synth, f, &scene[f], NULL) != GLCV_OK) {
            fprintf(stderr, "soak_bench: cannot make frame %d\n", f);
            return 1;
        }
    glcv_synth_destroy(&synth);
    glcv_rect rois[OBJECTS];
    for (int k = 0; k < OBJECTS; k++)
        rois[k] = (glcv_rect){width / 8 + k * width / 5, height / 3, width / 10, height / 4};

    objects o = {0};
    if (!make_objects(&o, &background, &scene[0], engine, rois)) {
        fprintf(stderr, "soak_bench: cannot make the segmenter and the tracker\n");
        return 1;
    }
    glcv_segment_params used;
    glcv_segment_get_params(o.seg, &used);
    glcv_track_params tused;
    glcv_track_get_params(o.track, &tused);
    int cuda = tused.engine == GLCV_ENGINE_CUDA;
    glcv_cuda_info info;
    glcv_cuda_query(&info);
    printf("soak_bench: %ld frames of %dx%d, segmenter %s, tracker %s (%d objects), made again every %ld frames%s\n%s\n",
           frames, width, height, glcv_engine_mode_string(used.engine), glcv_engine_mode_string(tused.engine), OBJECTS,
           recreate, have_nvx ? "; GL memory from GL_NVX_gpu_memory_info" : "", info.text);
    if (ctx)
        printf("GL: %s\n", glcv_context_describe(ctx));

    glcv_image mask;
    glcv_image_alloc(width, height, GLCV_PIXEL_GRAY8, &mask);
    glcv_track_result res[OBJECTS];
    sample *s = calloc((size_t)samples + 1, sizeof *s);
    int n = 0, failed = 0;
    long every = frames / samples;
    double t0 = bench_now_ms();
    printf("\n| frame | s | RSS MB | fds | threads | GL used MB | CUDA used MB |\n|---:|---:|---:|---:|---:|---:|---:|\n");
    for (long f = 0; f < frames && !failed; f++) {
        if (recreate > 0 && f > 0 && f % recreate == 0) {
            destroy_objects(&o);
            if (!make_objects(&o, &background, &scene[0], engine, rois)) {
                fprintf(stderr, "soak_bench: frame %ld: cannot make the objects again\n", f);
                failed = 1;
                break;
            }
        }
        const glcv_image *frame = &scene[f % SCENE_FRAMES];
        int count = 0;
        glcv_status st = glcv_segment_frame(o.seg, frame, 0);
        if (st == GLCV_OK)
            st = glcv_segment_read_mask(o.seg, &mask);
        if (st == GLCV_OK)
            st = glcv_track_frame(o.track, frame, &mask);
        if (st == GLCV_OK)
            st = glcv_track_results(o.track, res, OBJECTS, &count);
        if (st != GLCV_OK) {
            fprintf(stderr, "soak_bench: frame %ld: %s\n", f, glcv_status_string(st));
            failed = 1;
        }
        if ((f + 1) % every == 0 && n <= samples) {
            sample *p = &s[n++];
            p->frame = f + 1;
            p->seconds = (bench_now_ms() - t0) / 1e3;
            p->rss_mb = rss_mb();
            p->fds = open_fds();
            p->threads = threads();
            p->gl_used_mb = gl_used_mb(have_nvx);
            size_t cu = 0;
            p->cuda_used_mb = cuda && glcv_cuda_memory_used(tused.cuda_device, &cu) == GLCV_OK
                                  ? (double)cu / (1024.0 * 1024.0)
                                  : -1.0;
            printf("| %ld | %.1f | %.1f | %d | %d | %.1f | %.1f |\n", p->frame, p->seconds, p->rss_mb, p->fds,
                   p->threads, p->gl_used_mb, p->cuda_used_mb);
            fflush(stdout);
        }
    }
    /* summary over the samples after the warm-up */
    int first = 0;
    while (first < n && s[first].frame < frames / 20)
        first++;
    if (n - first >= 3) {
        int m = n - first;
        double *x = malloc((size_t)m * sizeof *x), *y = malloc((size_t)m * sizeof *y);
        printf("\n| quantity | after warm-up (frame %ld) | end (frame %ld) | slope per 100k frames | slope, last half |\n"
               "|---|---:|---:|---:|---:|\n",
               s[first].frame, s[n - 1].frame);
        static const char *const names[] = {"RSS MB", "open fds", "threads", "GL used MB", "CUDA used MB"};
        for (int q = 0; q < 5; q++) {
            for (int i = 0; i < m; i++) {
                const sample *p = &s[first + i];
                x[i] = (double)p->frame;
                y[i] = q == 0 ? p->rss_mb : q == 1 ? p->fds : q == 2 ? p->threads : q == 3 ? p->gl_used_mb
                                                                                      : p->cuda_used_mb;
            }
            if (y[0] < 0)
                printf("| %s | (not reported) | | | |\n", names[q]);
            else
                printf("| %s | %.1f | %.1f | %+.3f | %+.3f |\n", names[q], y[0], y[m - 1], slope(x, y, m) * 1e5,
                       slope(x + m / 2, y + m / 2, m - m / 2) * 1e5);
        }
        free(x);
        free(y);
    }
    printf("\n%ld frames in %.1f s (%.2f ms per frame)%s\n", n ? s[n - 1].frame : 0, n ? s[n - 1].seconds : 0.0,
           n ? 1e3 * s[n - 1].seconds / (double)s[n - 1].frame : 0.0, failed ? "; FAILED" : "");
    if (csv) {
        FILE *fc = fopen(csv, "w");
        if (fc) {
            fprintf(fc, "frame,seconds,rss_mb,fds,threads,gl_used_mb,cuda_used_mb\n");
            for (int i = 0; i < n; i++)
                fprintf(fc, "%ld,%.3f,%.3f,%d,%d,%.3f,%.3f\n", s[i].frame, s[i].seconds, s[i].rss_mb, s[i].fds,
                        s[i].threads, s[i].gl_used_mb, s[i].cuda_used_mb);
            fclose(fc);
        }
    }
    free(s);
    destroy_objects(&o);
    glcv_image_free(&mask);
    glcv_image_free(&background);
    for (int f = 0; f < SCENE_FRAMES; f++)
        glcv_image_free(&scene[f]);
    glcv_context_destroy(&ctx);
    return failed;
}
