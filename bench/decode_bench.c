/* decode_bench: compressed cameras end to end - decoding (NVDEC, CPU threads, or both), the 4:2:0
 * -> RGB conversion into the set's texture array, VSAM background subtraction or the ETH segmenter
 * over the set, and the masks read back (or kept as textures) - in frames per second and in cameras
 * at 25 (or --rate) frames per second.
 *
 *   decode_bench FILE [--sources N] [--work decode|convert|vsam|eth] [--decoder nvdec|cpu|both|auto]
 *                [--cpu-share F] [--nvdec-sessions M] [--gpus G] [--no-download] [--seconds S]
 *                [--rate FPS] [--label TEXT] [--set-size K]
 *
 * Every source reads FILE (a video; looping), as a camera of a set would. The rows:
 *   decode   the floor of the decoders used: N glcv_media sources decoded and their frames taken
 *            (NVDEC frames stay in GPU memory, CPU frames as 4:2:0 planes), nothing converted or
 *            processed; reader threads take the frames as soon as they come
 *   convert  glcv_media_set texture sets: decoding, and per set one CUDA launch converting every
 *            new frame into the layers of the GL texture array (one GL<->CUDA hand-over per set)
 *   vsam     convert, then glcv_bgsub (VSAM, colour, compute engine, streams = N) on the array,
 *            masks read back one set behind (params.download + map_masks), unless --no-download
 *   eth      convert, then glcv_segment (streams = N, compute, 8 MRF iterations) on the array, the
 *            masks mapped after each set, unless --no-download
 * --decoder: nvdec (every source on NVDEC), cpu (libavcodec, one thread per source), both (a share
 * --cpu-share of the sources, default 0.35, on the CPU), auto (what a set does by default: NVDEC for
 * the first --nvdec-sessions sources of each GPU, default GLCV_MEDIA_NVDEC_AUTO_SESSIONS, the CPU for
 * the rest). --set-size K: a GPU's sources go in sets of at
 * most K (default 256: 640x480 RGB sets above about 580 cameras exceed NVIDIA's 512 MB buffer
 * textures, which one glcv_bgsub object's frame ring is), read and processed one after another. --gpus G: G sets, one per GPU (a thread,
 * a GL context on the EGL device of CUDA device g, its own decoders), sources split evenly.
 * Prints one line: the row, frames/s, cameras at --rate, and the time per set spent reading (decode
 * wait + conversion) and processing. */
#define _DEFAULT_SOURCE
#include <glcv/glcv.h>
#include <glcv/media.h>

#include "benchutil.h"
#include "media_internal.h"

#include <epoxy/gl.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_GPUS = 16, MAX_SETS = 100000 };

typedef struct options {
    const char *file, *work, *decoder, *label;
    int sources, gpus, download, set_size, nvdec_sessions;
    double cpu_share, seconds, rate;
} options;

typedef struct gpu_job {
    const options *o;
    int gpu, count;
    long frames;
    double elapsed_s;
    double read_ms, process_ms; /* medians per set */
    double started_ms, first_round_s; /* when the loop started; how long the first round of sets took */
    int nvdec_sources;
    glcv_status st;
    char err[256];
    pthread_barrier_t *start;
} gpu_job;

static glcv_logger quiet_logger(void)
{
    return (glcv_logger){.fn = glcv_log_stderr, .max_level = GLCV_LOG_WARN};
}

static glcv_media_params source_params(const options *o)
{
    return GLCV_MEDIA_PARAMS(.source = GLCV_MEDIA_VIDEO, .location = o->file, .loop = 1,
                             .mode = GLCV_MEDIA_EVERY_FRAME, .cuda_device = 0);
}

/* ---- decode: the decoders alone ------------------------------------------------------------------- */

typedef struct reader {
    glcv_media **media;
    int count;
    atomic_long frames;
    atomic_int *stop;
} reader;

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static void *read_loop(void *arg)
{
    reader *r = arg;
    while (!atomic_load(r->stop)) {
        for (int i = 0; i < r->count && !atomic_load(r->stop); i++) {
            glcv_media_picture pic;
            glcv_media_frame_info info;
            if (glcv_media_read_picture(r->media[i], &pic, &info, 100) == GLCV_OK && !info.timed_out &&
                !info.end_of_stream)
                atomic_fetch_add(&r->frames, 1);
        }
    }
    return NULL;
}

static void run_decode(gpu_job *j)
{
    const options *o = j->o;
    glcv_media **media = calloc((size_t)j->count, sizeof *media);
    int cpu_every = o->cpu_share > 0 ? (int)(1.0 / o->cpu_share + 0.5) : 0;
    for (int i = 0; i < j->count && j->st == GLCV_OK; i++) {
        glcv_media_params p = source_params(o);
        p.cuda_device = j->gpu;
        p.decoder_threads = 1;
        int cpu = !strcmp(o->decoder, "cpu") || (!strcmp(o->decoder, "both") && cpu_every && i % cpu_every == 0) ||
                  (!strcmp(o->decoder, "auto") && o->nvdec_sessions > 0 && i >= o->nvdec_sessions);
        p.decoder = cpu ? GLCV_MEDIA_DECODER_CPU : GLCV_MEDIA_DECODER_NVDEC;
        glcv_media_options opt = {.pictures = 1};
        j->st = glcv_media_create_with(&p, &opt, &media[i]);
        if (j->st != GLCV_OK)
            snprintf(j->err, sizeof j->err, "source %d: %s", i, glcv_status_string(j->st));
        else
            j->nvdec_sources += glcv_media_uses_nvdec(media[i]);
    }
    int threads = j->count < 32 ? (j->count > 0 ? j->count : 1) : 32;
    reader *r = calloc((size_t)threads, sizeof *r);
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    atomic_int stop;
    atomic_init(&stop, 0);
    pthread_barrier_wait(j->start);
    if (j->st == GLCV_OK) {
        int per = (j->count + threads - 1) / threads;
        for (int t = 0; t < threads; t++) {
            int first = t * per, n = first + per > j->count ? j->count - first : per;
            r[t].media = media + (first < j->count ? first : 0);
            r[t].count = n > 0 ? n : 0;
            atomic_init(&r[t].frames, 0);
            r[t].stop = &stop;
        }
        /* warm-up: a second, then the counters start */
        for (int t = 0; t < threads; t++)
            pthread_create(&tid[t], NULL, read_loop, &r[t]);
        sleep_s(1.0);
        long before = 0;
        for (int t = 0; t < threads; t++)
            before += atomic_load(&r[t].frames);
        double t0 = bench_now_ms();
        sleep_s(o->seconds);
        long after = 0;
        for (int t = 0; t < threads; t++)
            after += atomic_load(&r[t].frames);
        j->elapsed_s = (bench_now_ms() - t0) / 1e3;
        j->frames = after - before;
        atomic_store(&stop, 1);
        for (int t = 0; t < threads; t++)
            pthread_join(tid[t], NULL);
    }
    for (int i = 0; i < j->count; i++)
        glcv_media_destroy(&media[i]);
    free(media);
    free(r);
    free(tid);
}

/* ---- convert, vsam, eth: texture sets ------------------------------------------------------------- */

/* One set of a GPU's sources and the method's object over it. */
typedef struct chunk {
    int count;
    glcv_media_set *set;
    glcv_bgsub *bgsub;
    glcv_segment *seg;
    glcv_media_set_frame *out;
    glcv_image *masks;
    int sets;
} chunk;

static glcv_status chunk_open(gpu_job *j, chunk *c, int count)
{
    const options *o = j->o;
    c->count = count;
    c->out = calloc((size_t)count, sizeof *c->out);
    c->masks = calloc((size_t)count, sizeof *c->masks);
    glcv_media_params *src = calloc((size_t)count, sizeof *src);
    glcv_image *bgs = calloc((size_t)count, sizeof *bgs);
    if (!c->out || !c->masks || !src || !bgs) {
        free(src);
        free(bgs);
        return GLCV_ERROR_OUT_OF_MEMORY;
    }
    for (int i = 0; i < count; i++) {
        src[i] = source_params(o);
        src[i].cuda_device = j->gpu;
    }
    glcv_media_decoder dec = !strcmp(o->decoder, "cpu") ? GLCV_MEDIA_DECODER_CPU : GLCV_MEDIA_DECODER_DEFAULT;
    glcv_status st = glcv_media_set_create(
        &GLCV_MEDIA_SET_PARAMS(.count = count, .sources = src, .texture = 1, .decoder = dec, .cuda_device = j->gpu,
                               .cpu_share = !strcmp(o->decoder, "both") ? o->cpu_share : 0.0, .open_threads = 64,
                               .logger = quiet_logger()),
        &c->set);
    glcv_media_set_params sp = {0};
    if (st == GLCV_OK)
        st = glcv_media_set_get_params(c->set, &sp);
    for (int i = 0; st == GLCV_OK && i < count; i++) {
        glcv_media_stats stats;
        glcv_media_decoder d;
        glcv_media_set_get_stats(c->set, i, &stats, &d);
        j->nvdec_sources += d == GLCV_MEDIA_DECODER_NVDEC;
    }
    if (st == GLCV_OK && !strcmp(o->work, "vsam"))
        st = glcv_bgsub_create(&GLCV_BGSUB_PARAMS(.width = sp.width, .height = sp.height, .streams = count,
                                                  .engine = GLCV_ENGINE_COMPUTE, .download = o->download,
                                                  .logger = quiet_logger()),
                               &c->bgsub);
    if (st == GLCV_OK && !strcmp(o->work, "eth")) {
        st = glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = sp.width, .height = sp.height, .streams = count,
                                                      .engine = GLCV_ENGINE_COMPUTE, .logger = quiet_logger()),
                                 &c->seg);
        for (int i = 0; i < count && st == GLCV_OK; i++) {
            st = glcv_image_alloc(sp.width, sp.height, GLCV_PIXEL_RGB8, &bgs[i]);
            if (st == GLCV_OK)
                memset(bgs[i].data, 110, glcv_image_stride(&bgs[i]) * (size_t)sp.height);
        }
        if (st == GLCV_OK)
            st = glcv_segment_set_backgrounds(c->seg, bgs, count);
    }
    for (int i = 0; i < count; i++)
        glcv_image_free(&bgs[i]);
    free(bgs);
    free(src);
    return st;
}

static void chunk_close(chunk *c)
{
    glcv_bgsub_destroy(&c->bgsub);
    glcv_segment_destroy(&c->seg);
    glcv_media_set_destroy(&c->set);
    free(c->out);
    free(c->masks);
}

/* Reads and processes one set of the chunk; *frames gets its new frames. */
static glcv_status chunk_step(const options *o, chunk *c, long *frames, double *read_ms, double *proc_ms)
{
    double a = bench_now_ms();
    glcv_status st = glcv_media_set_read(c->set, NULL, c->out, NULL, -1);
    double b = bench_now_ms();
    unsigned int tex = glcv_media_set_texture(c->set);
    if (st == GLCV_OK && c->bgsub) {
        st = glcv_bgsub_frames_texture(c->bgsub, tex, 0);
        if (st == GLCV_OK && o->download && c->sets >= 2)
            st = glcv_bgsub_map_masks(c->bgsub, 1, c->masks, c->count);
    } else if (st == GLCV_OK && c->seg) {
        st = glcv_segment_frames_texture(c->seg, tex, 0);
        if (st == GLCV_OK && o->download)
            st = glcv_segment_map_masks(c->seg, c->masks, c->count);
    }
    *read_ms += b - a;
    *proc_ms += bench_now_ms() - b;
    for (int i = 0; i < c->count; i++)
        *frames += c->out[i].has_frame;
    c->sets++;
    return st;
}

static void run_set(gpu_job *j)
{
    const options *o = j->o;
    glcv_context *ctx = NULL;
    int n_chunks = (j->count + o->set_size - 1) / o->set_size;
    chunk *chunks = calloc((size_t)n_chunks, sizeof *chunks);
    double *read_ms = calloc(MAX_SETS, sizeof *read_ms), *proc_ms = calloc(MAX_SETS, sizeof *proc_ms);
    j->st = chunks && read_ms && proc_ms ? GLCV_OK : GLCV_ERROR_OUT_OF_MEMORY;
    if (j->st == GLCV_OK)
        j->st = glcv_context_create(&GLCV_CONTEXT_PARAMS(.match_cuda_device = 1, .cuda_device = j->gpu,
                                                         .min_gl_version = 43, .logger = quiet_logger()),
                                    &ctx);
    for (int k = 0; k < n_chunks && j->st == GLCV_OK; k++) {
        int first = k * o->set_size, count = j->count - first < o->set_size ? j->count - first : o->set_size;
        j->st = chunk_open(j, &chunks[k], count);
    }
    if (j->st != GLCV_OK)
        snprintf(j->err, sizeof j->err, "set-up on GPU %d: %s", j->gpu, glcv_status_string(j->st));
    pthread_barrier_wait(j->start);
    j->started_ms = bench_now_ms();
    int rounds = 0, done = 0;
    long frames = 0;
    /* the clock starts a second after the first round of sets is complete: the decoders of a set
     * start with its first frames (hundreds of NVDEC decoders are made one after another) */
    double t0 = 0, warm_until = 1e300, end = 1e300;
    int measuring = 0;
    while (j->st == GLCV_OK) {
        double now = bench_now_ms();
        if (done == 1 && warm_until == 1e300) {
            warm_until = now + 1000.0;
            end = warm_until + o->seconds * 1e3;
            j->first_round_s = (now - j->started_ms) / 1e3;
        }
        if (!measuring && now >= warm_until) {
            glFinish();
            measuring = 1;
            t0 = bench_now_ms();
            frames = 0;
        }
        if (measuring && now >= end)
            break;
        double r_ms = 0, p_ms = 0;
        for (int k = 0; k < n_chunks && j->st == GLCV_OK; k++)
            j->st = chunk_step(o, &chunks[k], &frames, &r_ms, &p_ms);
        if (j->st != GLCV_OK) {
            snprintf(j->err, sizeof j->err, "round %d on GPU %d: %s", rounds, j->gpu, glcv_status_string(j->st));
            break;
        }
        done++;
        if (measuring && rounds < MAX_SETS) {
            read_ms[rounds] = r_ms;
            proc_ms[rounds] = p_ms;
            rounds++;
        }
    }
    glFinish();
    j->elapsed_s = (bench_now_ms() - t0) / 1e3;
    j->frames = frames;
    j->read_ms = bench_median(read_ms, rounds);
    j->process_ms = bench_median(proc_ms, rounds);
    for (int k = 0; k < n_chunks; k++)
        chunk_close(&chunks[k]);
    glcv_context_destroy(&ctx);
    free(chunks);
    free(read_ms);
    free(proc_ms);
}

static void *gpu_thread(void *arg)
{
    gpu_job *j = arg;
    if (!strcmp(j->o->work, "decode"))
        run_decode(j);
    else
        run_set(j);
    return NULL;
}

static int usage(void)
{
    fprintf(stderr, "usage: decode_bench FILE [--sources N] [--work decode|convert|vsam|eth] "
                    "[--decoder nvdec|cpu|both|auto] [--cpu-share F] [--nvdec-sessions M] [--gpus G] "
                    "[--no-download] [--seconds S] [--rate FPS] [--label TEXT] [--set-size K]\n");
    return 2;
}

int main(int argc, char **argv)
{
    options o = {.work = "vsam", .decoder = "nvdec", .label = "", .sources = 64, .gpus = 1, .download = 1, .set_size = 256,
                 .cpu_share = 0.35, .seconds = 10, .rate = 25, .nvdec_sessions = GLCV_MEDIA_NVDEC_AUTO_SESSIONS};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--no-download")) {
            o.download = 0;
            continue;
        }
        if (a[0] != '-') {
            o.file = a;
            continue;
        }
        if (!v)
            return usage();
        i++;
        if (!strcmp(a, "--sources"))
            o.sources = atoi(v);
        else if (!strcmp(a, "--work"))
            o.work = v;
        else if (!strcmp(a, "--decoder"))
            o.decoder = v;
        else if (!strcmp(a, "--cpu-share"))
            o.cpu_share = atof(v);
        else if (!strcmp(a, "--gpus"))
            o.gpus = atoi(v);
        else if (!strcmp(a, "--seconds"))
            o.seconds = atof(v);
        else if (!strcmp(a, "--rate"))
            o.rate = atof(v);
        else if (!strcmp(a, "--label"))
            o.label = v;
        else if (!strcmp(a, "--set-size"))
            o.set_size = atoi(v);
        else if (!strcmp(a, "--nvdec-sessions"))
            o.nvdec_sessions = atoi(v);
        else
            return usage();
    }
    if (!o.file || o.sources < 1 || o.sources > GLCV_MEDIA_SET_MAX * MAX_GPUS || o.gpus < 1 || o.gpus > MAX_GPUS ||
        o.seconds <= 0 || o.rate <= 0 || o.set_size < 1 || o.set_size > GLCV_MEDIA_SET_MAX)
        return usage();
    if (strcmp(o.work, "decode") && strcmp(o.work, "convert") && strcmp(o.work, "vsam") && strcmp(o.work, "eth"))
        return usage();
    if (strcmp(o.decoder, "nvdec") && strcmp(o.decoder, "cpu") && strcmp(o.decoder, "both") &&
        strcmp(o.decoder, "auto"))
        return usage();
    if (o.nvdec_sessions < 0)
        return usage();
    /* nvdec and both: every (other) source on NVDEC, however many; auto: the limit of a set's default */
    glcv_media_nvdec_auto_limit(!strcmp(o.decoder, "auto") ? o.nvdec_sessions : 0);
    gpu_job jobs[MAX_GPUS];
    pthread_t tid[MAX_GPUS];
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)o.gpus);
    int per = (o.sources + o.gpus - 1) / o.gpus;
    for (int g = 0; g < o.gpus; g++) {
        int count = g == o.gpus - 1 ? o.sources - per * (o.gpus - 1) : per;
        jobs[g] = (gpu_job){.o = &o, .gpu = g, .count = count, .start = &start};
        pthread_create(&tid[g], NULL, gpu_thread, &jobs[g]);
    }
    long frames = 0;
    double seconds = 0, read_ms = 0, process_ms = 0, first_round = 0;
    int nvdec = 0, failed = 0;
    for (int g = 0; g < o.gpus; g++) {
        pthread_join(tid[g], NULL);
        if (jobs[g].st != GLCV_OK) {
            fprintf(stderr, "decode_bench: %s\n", jobs[g].err);
            failed = 1;
        }
        frames += jobs[g].frames;
        seconds = jobs[g].elapsed_s > seconds ? jobs[g].elapsed_s : seconds;
        read_ms += jobs[g].read_ms / o.gpus;
        process_ms += jobs[g].process_ms / o.gpus;
        nvdec += jobs[g].nvdec_sources;
        first_round = jobs[g].first_round_s > first_round ? jobs[g].first_round_s : first_round;
    }
    pthread_barrier_destroy(&start);
    if (failed)
        return 1;
    double fps = seconds > 0 ? (double)frames / seconds : 0;
    printf("%-10s %-8s %-6s %5d src %d GPU %4d NVDEC  %9.0f frames/s  %7.1f cams@%g  read %.2f ms  process %.2f ms "
           "per round of sets (first round %.1f s)  %s\n",
           o.work, o.decoder, o.download ? "masks" : "tex", o.sources, o.gpus, nvdec, fps, fps / o.rate, o.rate,
           read_ms, process_ms, first_round, o.label);
    return 0;
}
