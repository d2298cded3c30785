/* Template matching, CUDA engine against the CPU engine: the same score maps (integer metrics bit
 * for bit, ZNCC within 1e-5, the number of bit-identical floats reported) on random images and
 * templates of many sizes (1x1, odd, as large as the image, 260x260 with 64-bit sums), every metric,
 * gray, RGB and RGBA, masks, ROIs, the border band; the paper's sizes on 640x480; 1 to 7 pipelined
 * pieces; templates in constant memory and, when the pool is full or the template too large, in
 * global memory; templates wider than the shared-memory tiles; many matchers at once; the
 * zero-copy input; every device when there are several. Exits 77 (skipped) without a CUDA device. */
#include "testutil.h"

#include <glcv/match.h>
#include <glcv/track.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int g_zncc_exact, g_zncc_total;

static glcv_image random_image(int w, int h, glcv_pixel_format f, uint64_t *rng, int levels)
{
    glcv_image img;
    CHECK_OK(glcv_image_alloc(w, h, f, &img));
    for (size_t i = 0; i < img.stride * (size_t)h; i++)
        img.data[i] = (uint8_t)(levels >= 256 ? test_rand(rng) >> 56 : (test_rand(rng) >> 40) % (uint64_t)levels);
    return img;
}

typedef struct job {
    int W, H, w, h;
    glcv_pixel_format input, working;
    int masked, roi, levels, chunks, devices;
} job;

static void compare(const char *what, const double *gpu, const double *cpu, int n, int zncc)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        int ok = gpu[i] == cpu[i] || (zncc && fabs(gpu[i] - cpu[i]) <= 1e-5);
        if (zncc && isfinite(cpu[i])) {
            g_zncc_total++;
            g_zncc_exact += gpu[i] == cpu[i];
        }
        if (!ok && bad++ < 3)
            fprintf(stderr, "%s: index %d: cuda %.9g, cpu %.9g\n", what, i, gpu[i], cpu[i]);
    }
    CHECK(bad == 0, "%s: %d of %d scores differ", what, bad, n);
}

/* Each case prints the generator state its inputs start from; GLCV_MATCH_SEED=<that value> runs every
 * case from it, to reproduce a failure. */
static void run_job(const job *j, uint64_t *rng)
{
    const char *env = getenv("GLCV_MATCH_SEED");
    if (env && *env)
        *rng = strtoull(env, NULL, 0);
    const uint64_t seed = *rng;
    printf("case %dx%d in %dx%d, %d->%d ch%s%s, %d pieces, %d devices: seed 0x%016llx\n", j->w, j->h, j->W, j->H,
           glcv_pixel_format_size(j->input), glcv_pixel_format_size(j->working), j->masked ? ", mask" : "",
           j->roi ? ", roi" : "", j->chunks, j->devices, (unsigned long long)seed);
    fflush(stdout);
    glcv_image img = random_image(j->W, j->H, j->input, rng, j->levels);
    glcv_image tpl = random_image(j->w, j->h, j->input, rng, j->levels);
    glcv_image mask = random_image(j->w, j->h, GLCV_PIXEL_GRAY8, rng, 4);
    mask.data[0] = 1;
    glcv_rect roi = {j->W / 5, j->H / 7, j->w + j->W / 2, j->h + j->H / 2};
    double *cpu = malloc((size_t)j->W * j->H * sizeof *cpu), *gpu = malloc((size_t)j->W * j->H * sizeof *gpu);
    for (int metric = GLCV_MATCH_SAD; metric <= GLCV_MATCH_ZNCC; metric++) {
        glcv_match *m[2] = {NULL, NULL};
        for (int e = 0; e < 2; e++) {
            glcv_match_params p = GLCV_MATCH_PARAMS(.width = j->W, .height = j->H, .format = j->working,
                                                    .metric = (glcv_match_metric)metric,
                                                    .engine = e ? GLCV_ENGINE_CUDA : GLCV_ENGINE_CPU,
                                                    .cuda_chunks = j->chunks, .cuda_devices = j->devices,
                                                    .logger = test_logger());
            CHECK_OK(glcv_match_create(&p, &m[e]));
            if (!m[e])
                continue;
            CHECK_OK(glcv_match_set_template(m[e], &tpl, j->masked ? &mask : NULL));
            if (j->roi)
                CHECK_OK(glcv_match_set_roi(m[e], &roi));
            CHECK_OK(glcv_match_image(m[e], &img));
            CHECK_OK(glcv_match_read_scores(m[e], e ? gpu : cpu, 0));
        }
        if (m[0] && m[1]) {
            char what[192];
            snprintf(what, sizeof what, "%dx%d in %dx%d %s, %d->%d ch%s%s, %d pieces, %d devices, seed 0x%016llx",
                     j->w, j->h, j->W, j->H, glcv_match_metric_string((glcv_match_metric)metric),
                     glcv_pixel_format_size(j->input), glcv_pixel_format_size(j->working), j->masked ? ", mask" : "",
                     j->roi ? ", roi" : "", j->chunks, j->devices, (unsigned long long)seed);
            compare(what, gpu, cpu, j->W * j->H, metric == GLCV_MATCH_ZNCC);
            glcv_match_hit hc[5], hg[5];
            int nc = 0, ng = 0;
            CHECK_OK(glcv_match_best(m[0], 5, hc, &nc));
            CHECK_OK(glcv_match_best(m[1], 5, hg, &ng));
            CHECK(nc == ng, "%s: best-k counts %d vs %d", what, ng, nc);
            if (metric != GLCV_MATCH_ZNCC)
                for (int i = 0; i < nc && i < ng; i++)
                    CHECK(hc[i].x == hg[i].x && hc[i].y == hg[i].y, "%s: hit %d at (%d,%d) vs (%d,%d)", what, i,
                          hg[i].x, hg[i].y, hc[i].x, hc[i].y);
        }
        glcv_match_destroy(&m[0]);
        glcv_match_destroy(&m[1]);
    }
    free(cpu);
    free(gpu);
    glcv_image_free(&img);
    glcv_image_free(&tpl);
    glcv_image_free(&mask);
}

int main(void)
{
    glcv_cuda_info info;
    test_cuda_or_skip(&info);
    uint64_t rng = 31337;
    static const int sizes[][4] = {{1, 1, 1, 1},     {9, 5, 9, 5},     {40, 3, 5, 3},     {3, 40, 3, 7},
                                   {33, 17, 4, 4},   {70, 31, 13, 6},  {61, 47, 16, 16},  {97, 41, 31, 9},
                                   {50, 50, 32, 32}, {300, 90, 33, 7}, {260, 40, 129, 5}, {613, 211, 24, 24},
                                   {270, 266, 260, 260}};
    static const glcv_pixel_format formats[][2] = {{GLCV_PIXEL_GRAY8, GLCV_PIXEL_GRAY8},
                                                   {GLCV_PIXEL_RGB8, GLCV_PIXEL_RGB8},
                                                   {GLCV_PIXEL_RGBA8, GLCV_PIXEL_RGBA8},
                                                   {GLCV_PIXEL_BGR8, GLCV_PIXEL_RGB8},
                                                   {GLCV_PIXEL_RGBA8, GLCV_PIXEL_GRAY8}};
    static const int chunks[] = {1, 3, 7};
    int n = 0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (int v = 0; v < 4; v++) {
            const glcv_pixel_format *f = formats[(s + (size_t)v) % 5];
            job j = {sizes[s][0], sizes[s][1], sizes[s][2], sizes[s][3], f[0], f[1], v & 1, v >> 1 & 1,
                     s % 4 == 3 ? 3 : 256, chunks[(s + (size_t)v) % 3], 1};
            if (s == sizeof sizes / sizeof sizes[0] - 1 && v > 0)
                break; /* the 64-bit case once */
            run_job(&j, &rng);
            n++;
        }
    }
    /* the paper's sizes */
    static const int masks[] = {4, 8, 12, 16, 24, 32};
    for (size_t k = 0; k < sizeof masks / sizeof masks[0]; k++) {
        job j = {640, 480, masks[k], masks[k], GLCV_PIXEL_GRAY8, GLCV_PIXEL_GRAY8, 0, 0, 256, k % 2 ? 4 : 1, 1};
        run_job(&j, &rng);
        n++;
    }
    /* global-memory template words: 200x100 RGBA needs 40000 words (the pool has 14336), 50 groups */
    {
        job j = {320, 200, 200, 100, GLCV_PIXEL_RGBA8, GLCV_PIXEL_RGBA8, 1, 0, 256, 2, 1};
        run_job(&j, &rng);
        n++;
    }
    /* every device */
    if (info.devices > 1) {
        job j = {640, 480, 16, 16, GLCV_PIXEL_RGB8, GLCV_PIXEL_RGB8, 0, 1, 256, 3, -1};
        run_job(&j, &rng);
        j.devices = info.devices;
        j.working = GLCV_PIXEL_GRAY8;
        run_job(&j, &rng);
        n += 2;
    }
    printf("CUDA vs CPU: %d cases x 4 metrics; ZNCC bit-identical floats: %d of %d\n", n, g_zncc_exact,
           g_zncc_total);

    /* more devices than present: UNSUPPORTED */
    glcv_match *m = NULL;
    glcv_match_params p = GLCV_MATCH_PARAMS(.width = 64, .height = 64, .engine = GLCV_ENGINE_CUDA,
                                            .cuda_devices = info.devices + 1);
    CHECK_STATUS(glcv_match_create(&p, &m), GLCV_ERROR_UNSUPPORTED);

    /* many matchers at once share the constant pool (those that do not fit use global memory) */
    {
        enum { K = 12 };
        glcv_match *ms[K] = {NULL};
        glcv_image img = random_image(200, 120, GLCV_PIXEL_RGB8, &rng, 256);
        glcv_image tpls[K];
        double *ref = malloc(200 * 120 * sizeof *ref), *got = malloc(200 * 120 * sizeof *got);
        for (int i = 0; i < K; i++) {
            tpls[i] = random_image(32, 32, GLCV_PIXEL_RGB8, &rng, 256);
            p = GLCV_MATCH_PARAMS(.width = 200, .height = 120, .format = GLCV_PIXEL_RGB8,
                                  .engine = GLCV_ENGINE_CUDA, .logger = test_logger());
            CHECK_OK(glcv_match_create(&p, &ms[i]));
            if (ms[i])
                CHECK_OK(glcv_match_set_template(ms[i], &tpls[i], NULL));
        }
        glcv_match *cpu = NULL;
        p.engine = GLCV_ENGINE_CPU;
        CHECK_OK(glcv_match_create(&p, &cpu));
        for (int i = 0; i < K && cpu; i++) {
            if (!ms[i])
                continue;
            CHECK_OK(glcv_match_image(ms[i], &img));
            CHECK_OK(glcv_match_read_scores(ms[i], got, 0));
            CHECK_OK(glcv_match_set_template(cpu, &tpls[i], NULL));
            CHECK_OK(glcv_match_image(cpu, &img));
            CHECK_OK(glcv_match_read_scores(cpu, ref, 0));
            char what[64];
            snprintf(what, sizeof what, "matcher %d of %d", i, K);
            compare(what, got, ref, 200 * 120, 0);
        }
        for (int i = 0; i < K; i++) {
            glcv_match_destroy(&ms[i]);
            glcv_image_free(&tpls[i]);
        }
        glcv_match_destroy(&cpu);
        glcv_image_free(&img);
        free(ref);
        free(got);
    }

    /* zero-copy input and timings */
    {
        glcv_image img = random_image(640, 480, GLCV_PIXEL_GRAY8, &rng, 256);
        glcv_image tpl = random_image(16, 16, GLCV_PIXEL_GRAY8, &rng, 256);
        p = GLCV_MATCH_PARAMS(.width = 640, .height = 480, .engine = GLCV_ENGINE_CUDA, .logger = test_logger());
        glcv_match *g = NULL;
        CHECK_OK(glcv_match_create(&p, &g));
        if (g) {
            double *a = malloc(640 * 480 * sizeof *a), *b = malloc(640 * 480 * sizeof *b);
            CHECK_OK(glcv_match_set_template(g, &tpl, NULL));
            CHECK_OK(glcv_match_image(g, &img));
            CHECK_OK(glcv_match_read_scores(g, a, 0));
            glcv_image mapped;
            CHECK_OK(glcv_match_map_image(g, &mapped));
            for (int y = 0; y < 480; y++)
                memcpy(mapped.data + (size_t)y * mapped.stride, img.data + (size_t)y * img.stride, 640);
            CHECK_OK(glcv_match_image_mapped(g));
            CHECK_OK(glcv_match_read_scores(g, b, 0));
            compare("zero-copy input", b, a, 640 * 480, 0);
            glcv_timing t[4];
            int nt = 0;
            CHECK_OK(glcv_match_timings(g, t, 4, &nt));
            CHECK(nt == 4, "CUDA timings: %d", nt);
            for (int i = 0; i < nt; i++)
                printf("  %-8s %.4f ms\n", t[i].name, t[i].ms);
            free(a);
            free(b);
            glcv_match_destroy(&g);
        }
        glcv_image_free(&img);
        glcv_image_free(&tpl);
    }
    return test_finish("test_match_cuda");
}
