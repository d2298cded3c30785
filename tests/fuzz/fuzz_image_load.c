/* Fuzz target: the image loader (glcv_image_load's decoding of PNG, JPEG, BMP, TGA, PPM/PGM, GIF,
 * PSD, HDR, PIC through stb_image) on any bytes, read from memory. Checks its contract: a load
 * that succeeds gives an image of 1..limit pixels in the format asked for (every byte readable);
 * one that fails gives a zeroed image and one of the documented statuses (CORRUPT_DATA, LIMIT,
 * OUT_OF_MEMORY, IO); a header claiming more than the limit (1 Mpixel here) is never decoded.
 * libFuzzer drives it (clang -fsanitize=fuzzer); ctest replays its seeds and variations with
 * fuzz_replay_main.c. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* fmemopen */
#endif
#include "fuzz_replay.h"
#include "image_internal.h"

#include <stb/stb_image_write.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LIMIT = 1 << 20 };

static long g_ok, g_failed;

static void require(int condition)
{
    if (!condition)
        abort();
}

static void load(const uint8_t *data, size_t size, glcv_pixel_format format)
{
    FILE *f = fmemopen((void *)data, size, "rb");
    if (!f)
        return;
    glcv_image img;
    memset(&img, 0xAB, sizeof img);
    glcv_status st = glcv_image_load_stream(f, "fuzz input", format, NULL, &img);
    fclose(f);
    if (st == GLCV_OK) {
        g_ok++;
        require(img.data && img.width >= 1 && img.height >= 1);
        require((size_t)img.width * (size_t)img.height <= LIMIT);
        int bpp = glcv_pixel_format_size(img.format);
        require(format == GLCV_PIXEL_DEFAULT ? bpp >= 1 : img.format == format);
        require(img.stride == (size_t)img.width * (size_t)bpp);
        unsigned sum = 0;
        for (size_t i = 0; i < img.stride * (size_t)img.height; i++)
            sum += img.data[i];
        (void)sum;
        glcv_image_free(&img);
    } else {
        g_failed++;
        require(st == GLCV_ERROR_CORRUPT_DATA || st == GLCV_ERROR_LIMIT || st == GLCV_ERROR_OUT_OF_MEMORY ||
                st == GLCV_ERROR_IO);
        require(!img.data && img.width == 0 && img.height == 0 && img.stride == 0);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        glcv_image_set_max_pixels(LIMIT);
        ready = 1;
    }
    if (size == 0 || size > (1u << 22))
        return 0;
    load(data, size, GLCV_PIXEL_DEFAULT);
    load(data, size, GLCV_PIXEL_GRAY8);
    return 0;
}

/* ---- seeds: small images of every format stb writes -------------------------------------------- */

typedef struct sink {
    uint8_t *data;
    size_t size, capacity;
} sink;

static void sink_write(void *context, void *data, int size)
{
    sink *s = context;
    if (size <= 0 || s->size + (size_t)size > s->capacity)
        return;
    memcpy(s->data + s->size, data, (size_t)size);
    s->size += (size_t)size;
}

int fuzz_replay_seeds(void (*add)(const uint8_t *data, size_t size))
{
    enum { W = 13, H = 7 };
    uint8_t px[W * H * 4];
    for (int i = 0; i < W * H * 4; i++)
        px[i] = (uint8_t)(i * 37 + (i >> 3));
    static uint8_t buffer[1 << 16];
    for (int comp = 1; comp <= 4; comp++) {
        for (int kind = 0; kind < 4; kind++) {
            sink s = {buffer, 0, sizeof buffer};
            int ok = kind == 0   ? stbi_write_png_to_func(sink_write, &s, W, H, comp, px, W * comp)
                     : kind == 1 ? stbi_write_bmp_to_func(sink_write, &s, W, H, comp, px)
                     : kind == 2 ? stbi_write_tga_to_func(sink_write, &s, W, H, comp, px)
                                 : stbi_write_jpg_to_func(sink_write, &s, W, H, comp, px, 80);
            if (!ok || s.size == 0)
                return 1;
            add(s.data, s.size);
        }
    }
    /* a PPM and a PGM */
    char head[64];
    int n = snprintf(head, sizeof head, "P6\n%d %d\n255\n", W, H);
    memcpy(buffer, head, (size_t)n);
    memcpy(buffer + n, px, W * H * 3);
    add(buffer, (size_t)n + W * H * 3);
    n = snprintf(head, sizeof head, "P5 %d %d 255\n", W, H);
    memcpy(buffer, head, (size_t)n);
    memcpy(buffer + n, px, W * H);
    add(buffer, (size_t)n + W * H);
    return 0;
}

int fuzz_replay_check(void)
{
    fprintf(stderr, "fuzz_image_load: %ld loads decoded, %ld refused\n", g_ok, g_failed);
    if (g_ok == 0 || g_failed == 0) {
        fprintf(stderr, "fuzz_image_load: expected both decoded and refused inputs\n");
        return 1;
    }
    return 0;
}
