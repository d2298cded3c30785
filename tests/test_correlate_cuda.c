/* Pearson correlation, CUDA engine against the CPU engine: the same coefficients (the same exact
 * sums and the same final operations: compared to 1e-12, the number of bit-identical doubles
 * reported) for gray and RGB images of many sizes (1x1 and sizes that are not a multiple of 16
 * bytes), host batches streamed in pieces of 1, 3 and 256 images, the resident bank with 1 image
 * (split into slices), a few, and thousands (1, 2 and 4 images per block), and r = 1 / -1 / 0.
 * Exits 77 (skipped) without a CUDA device. */
#include "testutil.h"

#include "correlate_internal.h"

#include <glcv/correlate.h>
#include <glcv/track.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int g_exact, g_total;
static int g_devices = 1; /* the CUDA correlators' cuda_devices */

static void fill(glcv_image *img, uint64_t *rng, const glcv_image *like, int every)
{
    size_t bytes = img->stride * (size_t)img->height;
    for (size_t i = 0; i < bytes; i += 8) {
        uint64_t v = test_rand(rng);
        for (size_t k = 0; k < 8 && i + k < bytes; k++)
            img->data[i + k] = (uint8_t)(v >> (8 * k));
    }
    if (like)
        for (size_t i = 0; i < bytes; i += (size_t)every)
            img->data[i] = like->data[i];
}

static void compare(const char *what, const double *gpu, const double *cpu, int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        g_total++;
        g_exact += gpu[i] == cpu[i];
        if (fabs(gpu[i] - cpu[i]) > 1e-12 && bad++ < 3)
            fprintf(stderr, "%s: image %d: cuda %.17g, cpu %.17g\n", what, i, gpu[i], cpu[i]);
    }
    CHECK(bad == 0, "%s: %d of %d coefficients differ", what, bad, n);
}

static glcv_correlate *make(int w, int h, glcv_pixel_format f, glcv_engine_mode e, int batch)
{
    glcv_correlate_params p = GLCV_CORRELATE_PARAMS(.width = w, .height = h, .format = f, .engine = e, .batch = batch,
                                                    .cuda_devices = e == GLCV_ENGINE_CUDA ? g_devices : 0,
                                                    .logger = test_logger());
    glcv_correlate *c = NULL;
    CHECK_OK(glcv_correlate_create(&p, &c));
    return c;
}

/* per_block: images per block of the correlation kernel (0: the launcher's choice). */
static void run(int w, int h, glcv_pixel_format f, int n, int batch, int per_block, uint64_t *rng)
{
    glcv_image ref, *imgs = calloc((size_t)n, sizeof *imgs);
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &ref));
    fill(&ref, rng, NULL, 1);
    for (int i = 0; i < n; i++) {
        CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &imgs[i]));
        fill(&imgs[i], rng, &ref, 1 + i % 5);
    }
    if (n > 2) {
        memcpy(imgs[0].data, ref.data, ref.stride * (size_t)h);
        for (size_t i = 0; i < ref.stride * (size_t)h; i++)
            imgs[1].data[i] = (uint8_t)(255 - ref.data[i]);
        memset(imgs[2].data, 9, ref.stride * (size_t)h);
    }
    double *cpu = malloc((size_t)n * sizeof *cpu), *gpu = malloc((size_t)n * sizeof *gpu);
    glcv_correlate *c = make(w, h, f, GLCV_ENGINE_CPU, 0),
                   *g = make(w, h, f, GLCV_ENGINE_CUDA, batch);
    if (g && per_block)
        CHECK_OK(glcv_correlate_set_images_per_block(g, per_block));
    if (c && g) {
        char what[96];
        CHECK_OK(glcv_correlate_set_reference(c, &ref));
        CHECK_OK(glcv_correlate_set_reference(g, &ref));
        CHECK_OK(glcv_correlate_images(c, imgs, n, cpu));
        CHECK_OK(glcv_correlate_images(g, imgs, n, gpu));
        snprintf(what, sizeof what, "%dx%d %s, %d images streamed in pieces of %d, %d per block, %d devices", w, h,
                 f == GLCV_PIXEL_RGB8 ? "RGB" : "gray", n, batch, per_block, g_devices);
        compare(what, gpu, cpu, n);
        /* (in gray, the negative of a colour image is not exactly the negative of its gray values) */
        if (n > 2 && w * h > 1)
            CHECK(gpu[0] == 1.0 && (f == GLCV_PIXEL_GRAY8 || gpu[1] == -1.0) && gpu[2] == 0.0,
                  "%s: self %.17g, negative %.17g, flat %.17g", what, gpu[0], gpu[1], gpu[2]);
        CHECK_OK(glcv_correlate_bank_load(g, imgs, n));
        memset(gpu, 0, (size_t)n * sizeof *gpu);
        CHECK_OK(glcv_correlate_bank_run(g, gpu));
        snprintf(what, sizeof what, "%dx%d %s, resident bank of %d, %d per block, %d devices", w, h,
                 f == GLCV_PIXEL_RGB8 ? "RGB" : "gray", n, per_block, g_devices);
        compare(what, gpu, cpu, n);
        glcv_timing t[4];
        int nt = 0;
        CHECK_OK(glcv_correlate_timings(g, t, 4, &nt));
        CHECK(nt == 4, "CUDA timings: %d", nt);
    }
    glcv_correlate_destroy(&c);
    glcv_correlate_destroy(&g);
    free(cpu);
    free(gpu);
    glcv_image_free(&ref);
    for (int i = 0; i < n; i++)
        glcv_image_free(&imgs[i]);
    free(imgs);
}

int main(void)
{
    glcv_cuda_info info;
    test_cuda_or_skip(&info);
    uint64_t rng = 8080;
    run(1, 1, GLCV_PIXEL_GRAY8, 3, 1, 0, &rng);
    run(5, 3, GLCV_PIXEL_RGB8, 7, 3, 0, &rng);
    run(37, 23, GLCV_PIXEL_GRAY8, 10, 3, 0, &rng);
    run(320, 240, GLCV_PIXEL_GRAY8, 1, 256, 0, &rng);   /* one image: slices */
    run(320, 240, GLCV_PIXEL_RGB8, 40, 16, 0, &rng);
    run(1920, 1080, GLCV_PIXEL_GRAY8, 3, 256, 0, &rng); /* large: many slices */
    /* thousands of images: every images-per-block variant of the kernel */
    static const int per_block[] = {1, 2, 4};
    for (int k = 0; k < 3; k++)
        run(64, 48, GLCV_PIXEL_GRAY8, 5001, 1024, per_block[k], &rng);
    run(64, 48, GLCV_PIXEL_RGB8, 4099, 4096, 0, &rng);
    if (info.devices > 1) {
        /* the images split across every device: shares of 0 (fewer images than devices), 1, a
         * few and thousands of images, each a piece or several */
        g_devices = info.devices;
        run(1, 1, GLCV_PIXEL_GRAY8, 1, 1, 0, &rng);
        run(5, 3, GLCV_PIXEL_RGB8, 7, 3, 0, &rng);
        run(320, 240, GLCV_PIXEL_RGB8, 40, 16, 0, &rng);
        run(1920, 1080, GLCV_PIXEL_GRAY8, 3, 256, 0, &rng);
        run(64, 48, GLCV_PIXEL_GRAY8, 5001, 1024, 2, &rng);
        glcv_correlate *c = make(8, 8, GLCV_PIXEL_GRAY8, GLCV_ENGINE_CUDA, 0);
        glcv_correlate_params used;
        if (c && glcv_correlate_get_params(c, &used) == GLCV_OK)
            CHECK(used.cuda_devices == info.devices, "cuda_devices resolved to %d, %d expected", used.cuda_devices,
                  info.devices);
        glcv_correlate_destroy(&c);
    } else {
        printf("one CUDA device: the split across devices is not run\n");
    }
    /* more devices than present: UNSUPPORTED */
    glcv_correlate_params p = GLCV_CORRELATE_PARAMS(.width = 8, .height = 8, .engine = GLCV_ENGINE_CUDA,
                                                    .cuda_devices = info.devices + 1, .logger = test_logger());
    glcv_correlate *c = NULL;
    CHECK(glcv_correlate_create(&p, &c) == GLCV_ERROR_UNSUPPORTED && !c, "%d devices of %d: not UNSUPPORTED",
          info.devices + 1, info.devices);
    printf("CUDA vs CPU: %d of %d coefficients bit-identical\n", g_exact, g_total);
    return test_finish("test_correlate_cuda");
}
