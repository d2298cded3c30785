/* Host images: allocation, checks, conversion, PNG save/load round trips and file errors, the
 * per-pixel median against sorting, and folder listings. No GL needed. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkdtemp */
#endif
#include "testutil.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_zeroed(const glcv_image *img)
{
    return img->data == NULL && img->width == 0 && img->height == 0 && img->stride == 0 &&
           img->format == GLCV_PIXEL_DEFAULT;
}

static char tmpdir[256];

static void path_in_tmp(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", tmpdir, name);
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL, "cannot create %s", path);
    if (!f)
        return;
    CHECK(fwrite(data, 1, n, f) == n, "cannot write %s", path);
    fclose(f);
}

static uint8_t *read_all(const char *path, size_t *n)
{
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(len > 0 ? (size_t)len : 1);
    if (buf && len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf)
        *n = (size_t)len;
    return buf;
}

/* Entries of the temp dir whose name contains `part`. */
static int count_entries(const char *part)
{
    int n = 0;
    DIR *d = opendir(tmpdir);
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, part))
            n++;
    closedir(d);
    return n;
}

/* Compares two images of the same size and format pixel by pixel (ignoring stride padding). */
static void check_same_pixels(const glcv_image *a, const glcv_image *b, const char *what)
{
    CHECK(a->width == b->width && a->height == b->height && a->format == b->format,
          "%s: %dx%d format %d vs %dx%d format %d", what, a->width, a->height, (int)a->format, b->width, b->height,
          (int)b->format);
    if (a->width != b->width || a->height != b->height || a->format != b->format)
        return;
    size_t row = (size_t)a->width * (size_t)glcv_pixel_format_size(a->format);
    size_t sa = glcv_image_stride(a), sb = glcv_image_stride(b);
    for (int y = 0; y < a->height; y++) {
        const uint8_t *ra = a->data + (size_t)y * sa, *rb = b->data + (size_t)y * sb;
        for (size_t i = 0; i < row; i++) {
            if (ra[i] != rb[i]) {
                CHECK(0, "%s: first difference at row %d byte %zu: %d vs %d", what, y, i, ra[i], rb[i]);
                return;
            }
        }
    }
}

static void test_alloc_free(void)
{
    glcv_image img;
    CHECK_OK(glcv_image_alloc(7, 5, GLCV_PIXEL_RGB8, &img));
    CHECK(img.data != NULL && img.width == 7 && img.height == 5 && img.format == GLCV_PIXEL_RGB8,
          "alloc filled %dx%d format %d", img.width, img.height, (int)img.format);
    CHECK(img.stride == 21, "stride %zu, expected 21", img.stride);
    CHECK(glcv_image_stride(&img) == 21, "glcv_image_stride %zu", glcv_image_stride(&img));
    int nonzero = 0;
    for (size_t i = 0; img.data && i < 21 * 5; i++)
        nonzero += img.data[i] != 0;
    CHECK(nonzero == 0, "%d bytes not zero after alloc", nonzero);
    CHECK_OK(glcv_image_check(&img));
    glcv_image_free(&img);
    CHECK(is_zeroed(&img), "free did not zero the struct");
    glcv_image_free(&img); /* already freed */
    glcv_image zero = {0};
    glcv_image_free(&zero);
    glcv_image_free(NULL);

    const glcv_pixel_format fmts[] = {GLCV_PIXEL_GRAY8, GLCV_PIXEL_RGBA8, GLCV_PIXEL_BGR8, GLCV_PIXEL_BGRA8};
    const size_t bpp[] = {1, 4, 3, 4};
    for (int i = 0; i < 4; i++) {
        CHECK_OK(glcv_image_alloc(3, 2, fmts[i], &img));
        CHECK(img.stride == 3 * bpp[i], "format %d: stride %zu, expected %zu", (int)fmts[i], img.stride, 3 * bpp[i]);
        glcv_image_free(&img);
    }
}

static void test_invalid(void)
{
    glcv_image img;
    memset(&img, 0xAB, sizeof img);
    CHECK_STATUS(glcv_image_alloc(0, 5, GLCV_PIXEL_RGB8, &img), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(is_zeroed(&img), "out not zeroed on error");
    CHECK_STATUS(glcv_image_alloc(5, 0, GLCV_PIXEL_RGB8, &img), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_image_alloc(-3, 5, GLCV_PIXEL_RGB8, &img), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_image_alloc(5, 5, GLCV_PIXEL_DEFAULT, &img), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_image_alloc(5, 5, (glcv_pixel_format)42, &img), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_image_alloc(1 << 30, 1 << 30, GLCV_PIXEL_RGBA8, &img), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_image_alloc(5, 5, GLCV_PIXEL_RGB8, NULL), GLCV_ERROR_INVALID_ARGUMENT);

    uint8_t buf[64] = {0};
    glcv_image ok = {buf, 4, 4, 0, GLCV_PIXEL_GRAY8};
    CHECK_OK(glcv_image_check(&ok));
    CHECK(glcv_image_stride(&ok) == 4, "stride 0 resolves to %zu, expected 4", glcv_image_stride(&ok));
    glcv_image bad = ok;
    bad.stride = 3;
    CHECK_STATUS(glcv_image_check(&bad), GLCV_ERROR_INVALID_ARGUMENT);
    bad = ok;
    bad.stride = 5;
    CHECK_OK(glcv_image_check(&bad));
    CHECK(glcv_image_stride(&bad) == 5, "explicit stride %zu", glcv_image_stride(&bad));
    bad = ok;
    bad.data = NULL;
    CHECK_STATUS(glcv_image_check(&bad), GLCV_ERROR_INVALID_ARGUMENT);
    bad = ok;
    bad.width = 0;
    CHECK_STATUS(glcv_image_check(&bad), GLCV_ERROR_INVALID_ARGUMENT);
    bad = ok;
    bad.height = -1;
    CHECK_STATUS(glcv_image_check(&bad), GLCV_ERROR_INVALID_ARGUMENT);
    bad = ok;
    bad.format = (glcv_pixel_format)9;
    CHECK_STATUS(glcv_image_check(&bad), GLCV_ERROR_INVALID_ARGUMENT);
    bad = ok;
    bad.stride = SIZE_MAX / 2;
    CHECK_STATUS(glcv_image_check(&bad), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_image_check(NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(glcv_image_stride(NULL) == 0, "stride of NULL");

    glcv_image rgb = {buf, 4, 4, 0, GLCV_PIXEL_RGB8};
    glcv_image small = {buf, 4, 3, 0, GLCV_PIXEL_RGB8};
    CHECK_STATUS(glcv_image_convert(&rgb, &small), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_STATUS(glcv_image_convert(NULL, &small), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_image_convert(&rgb, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    bad = rgb;
    bad.stride = 11;
    CHECK_STATUS(glcv_image_convert(&rgb, &bad), GLCV_ERROR_INVALID_ARGUMENT);

    char path[512];
    path_in_tmp(path, sizeof path, "invalid.png");
    CHECK_STATUS(glcv_image_save_png(NULL, &rgb, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_image_save_png("", &rgb, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_image_save_png(path, NULL, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    bad = rgb;
    bad.stride = 2;
    CHECK_STATUS(glcv_image_save_png(path, &bad, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(count_entries("invalid") == 0, "a file was left behind by a rejected save");

    memset(&img, 0xAB, sizeof img);
    CHECK_STATUS(glcv_image_load(NULL, GLCV_PIXEL_RGB8, NULL, &img), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(is_zeroed(&img), "load did not zero out on error");
    CHECK_STATUS(glcv_image_load(path, GLCV_PIXEL_RGB8, NULL, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_image_load(path, GLCV_PIXEL_BGR8, NULL, &img), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_image_load(path, (glcv_pixel_format)42, NULL, &img), GLCV_ERROR_INVALID_ARGUMENT);
}

/* Fills an image with random bytes, padding included. */
static void fill_random(glcv_image *img, size_t bytes, uint64_t *rng)
{
    for (size_t i = 0; i < bytes; i++)
        img->data[i] = (uint8_t)(test_rand(rng) >> 56);
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* CRC-32 as the PNG specification writes it out, bit by bit (the library uses a table). */
static uint32_t reference_crc(const uint8_t *p, size_t n)
{
    uint32_t crc = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = crc & 1u ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
    }
    return ~crc;
}

/* Checks a PNG file's signature, that every chunk's CRC is right (stb_image does not check
 * them), its IHDR (size, 8 bits, the colour type of `channels`, no interlace) and that it ends
 * with IEND. */
static void check_png_structure(const char *path, int w, int h, int channels)
{
    static const uint8_t signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    static const int colour_type[5] = {-1, 0, 4, 2, 6};
    size_t n = 0;
    uint8_t *b = read_all(path, &n);
    CHECK(b && n > 8 && memcmp(b, signature, 8) == 0, "%s: no PNG signature", path);
    if (!b || n <= 8) {
        free(b);
        return;
    }
    size_t at = 8;
    int chunks = 0, ended = 0;
    while (at + 12 <= n && !ended) {
        uint32_t len = be32(b + at);
        if (len > n - at - 12) {
            CHECK(0, "%s: chunk %d claims %u bytes, beyond the end of the file", path, chunks, len);
            break;
        }
        const uint8_t *type = b + at + 4;
        CHECK(reference_crc(type, 4 + (size_t)len) == be32(type + 4 + len), "%s: chunk %.4s has a wrong CRC", path,
              (const char *)type);
        if (chunks == 0) {
            CHECK(memcmp(type, "IHDR", 4) == 0 && len == 13, "%s: the first chunk is not a 13-byte IHDR", path);
            if (len == 13)
                CHECK(be32(type + 4) == (uint32_t)w && be32(type + 8) == (uint32_t)h && type[12] == 8 &&
                          type[13] == colour_type[channels] && type[16] == 0,
                      "%s: IHDR %ux%u depth %d colour type %d interlace %d; expected %dx%d depth 8 type %d", path,
                      be32(type + 4), be32(type + 8), type[12], type[13], type[16], w, h, colour_type[channels]);
        }
        ended = memcmp(type, "IEND", 4) == 0;
        at += 12 + (size_t)len;
        chunks++;
    }
    CHECK(ended && at == n, "%s: does not end with IEND (%d chunks, %zu of %zu bytes)", path, chunks, at, n);
    free(b);
}

static void test_png_round_trip(void)
{
    static const struct {
        glcv_pixel_format format;
        glcv_pixel_format loaded; /* format of the file's own channels */
        const char *name;
    } cases[] = {
        {GLCV_PIXEL_GRAY8, GLCV_PIXEL_GRAY8, "gray"},
        {GLCV_PIXEL_RGB8, GLCV_PIXEL_RGB8, "rgb"},
        {GLCV_PIXEL_RGBA8, GLCV_PIXEL_RGBA8, "rgba"},
        {GLCV_PIXEL_BGR8, GLCV_PIXEL_RGB8, "bgr"},
        {GLCV_PIXEL_BGRA8, GLCV_PIXEL_RGBA8, "bgra"},
    };
    uint64_t rng = 12345;
    glcv_logger lg = test_logger();
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int w = 37, h = 23;
        size_t bpp = (size_t)glcv_pixel_format_size(cases[c].format);
        size_t stride = (size_t)w * bpp + 7; /* padded rows */
        glcv_image src = {malloc(stride * h), w, h, stride, cases[c].format};
        if (!src.data)
            continue;
        fill_random(&src, stride * h, &rng);

        char path[512], name[64];
        snprintf(name, sizeof name, "round_%s.png", cases[c].name);
        path_in_tmp(path, sizeof path, name);
        CHECK_OK(glcv_image_save_png(path, &src, &lg));
        check_png_structure(path, w, h, (int)glcv_pixel_format_size(cases[c].loaded));

        /* What the file should hold: the source in RGB(A) order, tightly packed. */
        glcv_image expect;
        CHECK_OK(glcv_image_alloc(w, h, cases[c].loaded, &expect));
        CHECK_OK(glcv_image_convert(&src, &expect));

        glcv_image got;
        CHECK_OK(glcv_image_load(path, GLCV_PIXEL_DEFAULT, &lg, &got));
        char what[96];
        snprintf(what, sizeof what, "%s saved and loaded", cases[c].name);
        check_same_pixels(&got, &expect, what);
        glcv_image_free(&got);

        /* The fast level holds the same pixels in a well-formed file. */
        char fast[512];
        snprintf(name, sizeof name, "round_%s_fast.png", cases[c].name);
        path_in_tmp(fast, sizeof fast, name);
        CHECK_OK(glcv_image_save_png_level(fast, &src, GLCV_PNG_LEVEL_FAST, &lg));
        check_png_structure(fast, w, h, (int)glcv_pixel_format_size(cases[c].loaded));
        CHECK_OK(glcv_image_load(fast, GLCV_PIXEL_DEFAULT, &lg, &got));
        snprintf(what, sizeof what, "%s saved at the fast level and loaded", cases[c].name);
        check_same_pixels(&got, &expect, what);
        glcv_image_free(&got);

        /* Loading with the file's format named gives the same pixels. */
        CHECK_OK(glcv_image_load(path, cases[c].loaded, &lg, &got));
        snprintf(what, sizeof what, "%s loaded as its own format", cases[c].name);
        check_same_pixels(&got, &expect, what);
        glcv_image_free(&got);

        /* Gray files loaded as colour are replicated, with alpha 255. */
        if (cases[c].format == GLCV_PIXEL_GRAY8) {
            glcv_image rgba, want;
            CHECK_OK(glcv_image_load(path, GLCV_PIXEL_RGBA8, &lg, &rgba));
            CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGBA8, &want));
            CHECK_OK(glcv_image_convert(&src, &want));
            check_same_pixels(&rgba, &want, "gray file loaded as RGBA8");
            glcv_image_free(&rgba);
            glcv_image_free(&want);
        }
        /* Colour files loaded as gray use the documented gray formula. */
        if (cases[c].format != GLCV_PIXEL_GRAY8) {
            glcv_image g, want;
            CHECK_OK(glcv_image_load(path, GLCV_PIXEL_GRAY8, &lg, &g));
            CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_GRAY8, &want));
            CHECK_OK(glcv_image_convert(&src, &want));
            snprintf(what, sizeof what, "%s file loaded as GRAY8", cases[c].name);
            check_same_pixels(&g, &want, what);
            glcv_image_free(&g);
            glcv_image_free(&want);
        }
        glcv_image_free(&expect);
        free(src.data);
    }
    CHECK(count_entries(".tmp-") == 0, "temporary files left behind after saving");
}

/* Pixel (x, y), channel c of a structured pattern: every PNG filter is the best one somewhere. */
static uint8_t pattern_value(int pattern, int x, int y, int c, uint64_t *rng)
{
    switch (pattern) {
    case 0: return (uint8_t)(3 * x + 5 * y + 40 * c);                          /* gradients: sub, up, paeth */
    case 1: return ((x / 3 + y / 2) & 1) ? 255 : 0;                             /* a checkerboard */
    case 2: return (x - 20) * (x - 20) + (y - 9) * (y - 9) < 120 ? 255 : 0;     /* a mask: a disc */
    case 3: return (uint8_t)(c == 3 ? 255 : 128);                               /* flat */
    case 4: return (uint8_t)((x * y) ^ (c * 77));                               /* texture */
    default: return (uint8_t)(test_rand(rng) >> 56);                            /* noise: none */
    }
}

/* Files of structured and random pixels, of odd sizes (1 x 1, single rows and columns, widths that
 * are no multiple of anything), in every format and at both levels: well-formed files (every
 * chunk's CRC checked) that decode to the same pixels. */
static void test_png_encoder(void)
{
    static const int sizes[][2] = {{1, 1}, {1, 7}, {9, 1}, {3, 5}, {33, 17}, {257, 3}, {64, 48}};
    static const glcv_pixel_format formats[] = {GLCV_PIXEL_GRAY8, GLCV_PIXEL_RGB8, GLCV_PIXEL_RGBA8, GLCV_PIXEL_BGR8,
                                                GLCV_PIXEL_BGRA8};
    glcv_logger lg = test_logger();
    uint64_t rng = 2718;
    int cases = 0;
    char path[512];
    path_in_tmp(path, sizeof path, "encoder.png");
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t f = 0; f < sizeof formats / sizeof formats[0]; f++)
            for (int pattern = 0; pattern < 6; pattern++) {
                int w = sizes[s][0], h = sizes[s][1], bpp = glcv_pixel_format_size(formats[f]);
                glcv_image src;
                CHECK_OK(glcv_image_alloc(w, h, formats[f], &src));
                if (!src.data)
                    continue;
                for (int y = 0; y < h; y++)
                    for (int x = 0; x < w; x++)
                        for (int c = 0; c < bpp; c++)
                            src.data[(size_t)y * src.stride + (size_t)x * bpp + c] = pattern_value(pattern, x, y, c,
                                                                                                    &rng);
                glcv_pixel_format own = formats[f] == GLCV_PIXEL_BGR8    ? GLCV_PIXEL_RGB8
                                        : formats[f] == GLCV_PIXEL_BGRA8 ? GLCV_PIXEL_RGBA8
                                                                         : formats[f];
                glcv_image expect;
                CHECK_OK(glcv_image_alloc(w, h, own, &expect));
                CHECK_OK(glcv_image_convert(&src, &expect));
                for (int level = 0; level < 2; level++) {
                    CHECK_OK(glcv_image_save_png_level(path, &src, (glcv_png_level)level, &lg));
                    check_png_structure(path, w, h, glcv_pixel_format_size(own));
                    glcv_image got;
                    CHECK_OK(glcv_image_load(path, GLCV_PIXEL_DEFAULT, &lg, &got));
                    char what[128];
                    snprintf(what, sizeof what, "%dx%d format %d pattern %d level %d", w, h, (int)formats[f], pattern,
                             level);
                    check_same_pixels(&got, &expect, what);
                    glcv_image_free(&got);
                    cases++;
                }
                glcv_image_free(&expect);
                glcv_image_free(&src);
            }
    CHECK(cases == 7 * 5 * 6 * 2, "%d of %d encoder cases ran", cases, 7 * 5 * 6 * 2);
}

/* One thread of test_png_levels: saves its image `rounds` times at its level. */
typedef struct png_job {
    const glcv_image *image;
    glcv_png_level level;
    char path[512];
    int rounds, failures;
} png_job;

static void *png_job_run(void *arg)
{
    png_job *job = arg;
    for (int r = 0; r < job->rounds; r++)
        job->failures += glcv_image_save_png_level(job->path, job->image, job->level, NULL) != GLCV_OK;
    return NULL;
}

static int same_file_bytes(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    uint8_t *x = read_all(a, &na), *y = read_all(b, &nb);
    int same = x && y && na == nb && memcmp(x, y, na) == 0;
    free(x);
    free(y);
    return same;
}

/* The level is an argument: files written at both levels at once, from several threads, are
 * byte for byte those written alone; the fast level compresses a mask; an unknown level is
 * refused before anything is written. */
static void test_png_levels(void)
{
    enum { THREADS = 4, ROUNDS = 20 };
    const int w = 160, h = 120;
    glcv_image mask, photo;
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_GRAY8, &mask));
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &photo));
    if (!mask.data || !photo.data)
        return;
    uint64_t rng = 4242;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int dx = x - 80, dy = y - 60;
            mask.data[(size_t)y * mask.stride + (size_t)x] = dx * dx + dy * dy < 900 ? 255 : 0;
            uint8_t *p = photo.data + (size_t)y * photo.stride + 3 * (size_t)x;
            p[0] = (uint8_t)(x + (test_rand(&rng) >> 62));
            p[1] = (uint8_t)y;
            p[2] = (uint8_t)(x ^ y);
        }

    png_job jobs[THREADS];
    char alone[THREADS][512];
    for (int t = 0; t < THREADS; t++) {
        glcv_png_level level = t / 2 ? GLCV_PNG_LEVEL_FAST : GLCV_PNG_LEVEL_DEFAULT;
        jobs[t] = (png_job){t % 2 ? &photo : &mask, level, "", ROUNDS, 0};
        char name[64];
        snprintf(name, sizeof name, "level_%d.png", t);
        path_in_tmp(jobs[t].path, sizeof jobs[t].path, name);
        snprintf(name, sizeof name, "level_%d_alone.png", t);
        path_in_tmp(alone[t], sizeof alone[t], name);
        CHECK_OK(glcv_image_save_png_level(alone[t], jobs[t].image, jobs[t].level, NULL));
    }
    pthread_t threads[THREADS];
    int started[THREADS];
    for (int t = 0; t < THREADS; t++)
        started[t] = pthread_create(&threads[t], NULL, png_job_run, &jobs[t]) == 0;
    for (int t = 0; t < THREADS; t++) {
        CHECK(started[t], "cannot start thread %d", t);
        if (started[t])
            pthread_join(threads[t], NULL);
        CHECK(jobs[t].failures == 0, "thread %d: %d of %d saves failed", t, jobs[t].failures, ROUNDS);
        CHECK(same_file_bytes(jobs[t].path, alone[t]),
              "%s (level %d, saved while other threads saved at other levels) differs from %s saved alone",
              jobs[t].path, (int)jobs[t].level, alone[t]);
    }
    size_t n = 0;
    free(read_all(alone[2], &n));
    CHECK(n > 0 && n < (size_t)w * h / 10, "a %dx%d disc mask at the fast level takes %zu bytes", w, h, n);

    char path[512];
    capture cap;
    glcv_logger lg = capture_logger(&cap);
    path_in_tmp(path, sizeof path, "bad_level.png");
    CHECK_STATUS(glcv_image_save_png_level(path, &mask, (glcv_png_level)7, &lg), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(cap.count > 0 && strstr(cap.last, "level"), "an unknown level: log says '%s'", cap.last);
    CHECK(count_entries("bad_level") == 0, "a file was written at an unknown level");
    glcv_image_free(&mask);
    glcv_image_free(&photo);
}

/* A PNG of nothing but its signature and header chunk: w x h, 8-bit gray (type 0) or RGB (2),
 * its CRC-32 right. */
static void write_png_header(const char *path, uint32_t w, uint32_t h, uint8_t type)
{
    uint8_t b[33] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
    for (int i = 0; i < 4; i++) {
        b[16 + i] = (uint8_t)(w >> (24 - 8 * i));
        b[20 + i] = (uint8_t)(h >> (24 - 8 * i));
    }
    b[24] = 8; /* bit depth */
    b[25] = type;
    uint32_t crc = 0xFFFFFFFFu;
    for (int i = 12; i < 29; i++) {
        crc ^= b[i];
        for (int k = 0; k < 8; k++)
            crc = crc >> 1 ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    crc ^= 0xFFFFFFFFu;
    for (int i = 0; i < 4; i++)
        b[29 + i] = (uint8_t)(crc >> (24 - 8 * i));
    write_bytes(path, (const char *)b, sizeof b);
}

/* Decompression bombs: a small file whose header claims a huge image is refused before any
 * pixel is decoded (LIMIT, the log naming the file and the limit); info still reads its size;
 * with the limit raised, the same file goes to the decoder (and fails there: it has no data). */
static void test_load_limits(void)
{
    char path[512];
    capture cap;
    glcv_logger lg = capture_logger(&cap);
    glcv_image img;
    CHECK(glcv_image_max_pixels() == GLCV_IMAGE_DEFAULT_MAX_PIXELS, "default limit %zu", glcv_image_max_pixels());
    /* (a 32768 x 32768 RGB header is too large for the decoder's own check: gray is not) */
    static const uint32_t sides[][3] = {{16384, 16384, 2}, {32768, 32768, 0}, {8193, 8192, 2}, {100000, 700, 0}};
    for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++) {
        path_in_tmp(path, sizeof path, "bomb.png");
        write_png_header(path, sides[i][0], sides[i][1], (uint8_t)sides[i][2]);
        lg = capture_logger(&cap);
        memset(&img, 0xAB, sizeof img);
        CHECK_STATUS(glcv_image_load(path, GLCV_PIXEL_DEFAULT, &lg, &img), GLCV_ERROR_LIMIT);
        CHECK(is_zeroed(&img), "bomb %ux%u: out not zeroed", sides[i][0], sides[i][1]);
        CHECK(cap.count > 0 && strstr(cap.last, "bomb.png") && strstr(cap.last, "limit"),
              "bomb %ux%u: log says '%s'", sides[i][0], sides[i][1], cap.last);
        int w = 0, h = 0, c = 0;
        CHECK_OK(glcv_image_info(path, &w, &h, &c, NULL));
        CHECK(w == (int)sides[i][0] && h == (int)sides[i][1], "info of the bomb: %dx%d", w, h);
    }
    /* a JPEG header (SOI, SOF0) claiming 16384 x 16384 */
    static const uint8_t jpeg[] = {0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x40, 0x00, 0x40, 0x00, 0x03, 0x01,
                                   0x11, 0x00, 0x02, 0x11, 0x00, 0x03, 0x11, 0x00, 0xFF, 0xD9};
    path_in_tmp(path, sizeof path, "bomb.jpg");
    write_bytes(path, (const char *)jpeg, sizeof jpeg);
    CHECK_STATUS(glcv_image_load(path, GLCV_PIXEL_RGB8, NULL, &img), GLCV_ERROR_LIMIT);
    /* the limit is the caller's: a header of 100 x 100 with no data is refused at 9999 pixels,
     * decoded (and found corrupt) at 10000; a real 40 x 30 image is refused at 1199, loaded at 1200 */
    CHECK(glcv_image_set_max_pixels((size_t)1 << 40) == (size_t)1 << 30, "the limit is clamped to 2^30");
    path_in_tmp(path, sizeof path, "header.png");
    write_png_header(path, 100, 100, 2);
    glcv_image_set_max_pixels(9999);
    CHECK_STATUS(glcv_image_load(path, GLCV_PIXEL_RGB8, NULL, &img), GLCV_ERROR_LIMIT);
    glcv_image_set_max_pixels(10000);
    CHECK_STATUS(glcv_image_load(path, GLCV_PIXEL_RGB8, NULL, &img), GLCV_ERROR_CORRUPT_DATA);
    glcv_image small;
    CHECK_OK(glcv_image_alloc(40, 30, GLCV_PIXEL_RGB8, &small));
    path_in_tmp(path, sizeof path, "small.png");
    CHECK_OK(glcv_image_save_png(path, &small, NULL));
    CHECK(glcv_image_set_max_pixels(1199) == 1199, "limit 1199");
    CHECK_STATUS(glcv_image_load(path, GLCV_PIXEL_RGB8, NULL, &img), GLCV_ERROR_LIMIT);
    glcv_image_set_max_pixels(1200);
    CHECK_OK(glcv_image_load(path, GLCV_PIXEL_RGB8, NULL, &img));
    glcv_image_free(&img);
    glcv_image_free(&small);
    CHECK(glcv_image_set_max_pixels(0) == 1, "limit 0 is clamped to 1");
    glcv_image_set_max_pixels(GLCV_IMAGE_DEFAULT_MAX_PIXELS);
    CHECK(strcmp(glcv_status_string(GLCV_ERROR_LIMIT), "above a resource limit") == 0, "LIMIT's text");
}

static void test_load_errors(void)
{
    char path[512];
    capture cap;
    glcv_logger lg = capture_logger(&cap);
    glcv_image img;

    path_in_tmp(path, sizeof path, "missing.png");
    memset(&img, 0xAB, sizeof img);
    CHECK_STATUS(glcv_image_load(path, GLCV_PIXEL_RGB8, &lg, &img), GLCV_ERROR_IO);
    CHECK(is_zeroed(&img), "missing file: out not zeroed");
    CHECK(cap.count > 0 && strstr(cap.last, "missing.png"), "missing file: log says '%s'", cap.last);
    /* Silent without a logger. */
    CHECK_STATUS(glcv_image_load(path, GLCV_PIXEL_RGB8, NULL, &img), GLCV_ERROR_IO);

    /* A directory opens but cannot be read. */
    lg = capture_logger(&cap);
    CHECK_STATUS(glcv_image_load(tmpdir, GLCV_PIXEL_DEFAULT, &lg, &img), GLCV_ERROR_IO);
    CHECK(cap.count > 0, "directory: nothing logged");

    static const char garbage[] = "this is not an image file, just some text bytes \x01\x02\x03\xff\xfe";
    path_in_tmp(path, sizeof path, "garbage.png");
    write_bytes(path, garbage, sizeof garbage);
    lg = capture_logger(&cap);
    memset(&img, 0xAB, sizeof img);
    CHECK_STATUS(glcv_image_load(path, GLCV_PIXEL_DEFAULT, &lg, &img), GLCV_ERROR_CORRUPT_DATA);
    CHECK(is_zeroed(&img), "garbage file: out not zeroed");
    CHECK(cap.count > 0 && strstr(cap.last, "garbage.png"), "garbage file: log says '%s'", cap.last);

    path_in_tmp(path, sizeof path, "empty.png");
    write_bytes(path, "", 0);
    CHECK_STATUS(glcv_image_load(path, GLCV_PIXEL_DEFAULT, NULL, &img), GLCV_ERROR_CORRUPT_DATA);

    /* A truncated PNG: a valid header, half of the compressed data. */
    glcv_image src;
    CHECK_OK(glcv_image_alloc(64, 48, GLCV_PIXEL_RGB8, &src));
    uint64_t rng = 777;
    if (src.data)
        fill_random(&src, src.stride * 48, &rng);
    path_in_tmp(path, sizeof path, "full.png");
    CHECK_OK(glcv_image_save_png(path, &src, NULL));
    glcv_image_free(&src);
    size_t n = 0;
    uint8_t *bytes = read_all(path, &n);
    CHECK(bytes != NULL && n > 1000, "full.png has %zu bytes", n);
    if (bytes) {
        path_in_tmp(path, sizeof path, "truncated.png");
        write_bytes(path, bytes, n / 2);
        lg = capture_logger(&cap);
        memset(&img, 0xAB, sizeof img);
        CHECK_STATUS(glcv_image_load(path, GLCV_PIXEL_RGB8, &lg, &img), GLCV_ERROR_CORRUPT_DATA);
        CHECK(is_zeroed(&img), "truncated file: out not zeroed");
        CHECK(cap.count > 0, "truncated file: nothing logged");
        /* Only the first 40 bytes: the header and part of the first chunk. */
        write_bytes(path, bytes, 40);
        CHECK_STATUS(glcv_image_load(path, GLCV_PIXEL_DEFAULT, NULL, &img), GLCV_ERROR_CORRUPT_DATA);
        free(bytes);
    }
}

/* Ends the test when a load blocks: a regression of test_not_regular fails instead of hanging. */
static void on_watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "test_image: FAIL: opening a FIFO as an image blocked for 10 s\n";
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0)
        _exit(1);
    _exit(1);
}

/* A FIFO (no writer) where an image is expected is refused at once, naming the path and what it
 * is, by load and info alike; nothing waits for a writer. */
static void test_not_regular(void)
{
    char path[512];
    capture cap;
    glcv_logger lg;
    glcv_image img;
    path_in_tmp(path, sizeof path, "pipe.png");
    if (mkfifo(path, 0600) != 0) {
        CHECK(0, "cannot create the FIFO %s", path);
        return;
    }
    signal(SIGALRM, on_watchdog);
    alarm(10);
    lg = capture_logger(&cap);
    memset(&img, 0xAB, sizeof img);
    CHECK_STATUS(glcv_image_load(path, GLCV_PIXEL_RGB8, &lg, &img), GLCV_ERROR_IO);
    CHECK(is_zeroed(&img), "FIFO: out not zeroed");
    CHECK(cap.count == 1 && strstr(cap.last, "pipe.png") && strstr(cap.last, "is not a regular file (a FIFO)") &&
              !strchr(cap.last, '\n'),
          "FIFO load: %d message(s), the last '%s'", cap.count, cap.last);
    lg = capture_logger(&cap);
    int w = -1, h = -1, c = -1;
    CHECK_STATUS(glcv_image_info(path, &w, &h, &c, &lg), GLCV_ERROR_IO);
    CHECK(cap.count == 1 && strstr(cap.last, "pipe.png") && strstr(cap.last, "is not a regular file (a FIFO)"),
          "FIFO info: %d message(s), the last '%s'", cap.count, cap.last);
    /* a character device, which would read for ever */
    lg = capture_logger(&cap);
    CHECK_STATUS(glcv_image_load("/dev/zero", GLCV_PIXEL_DEFAULT, &lg, &img), GLCV_ERROR_IO);
    CHECK(strstr(cap.last, "/dev/zero") && strstr(cap.last, "a character device"), "/dev/zero: log says '%s'",
          cap.last);
    alarm(0);
    signal(SIGALRM, SIG_DFL);
    /* a folder keeps its own message */
    lg = capture_logger(&cap);
    CHECK_STATUS(glcv_image_info(tmpdir, &w, &h, &c, &lg), GLCV_ERROR_IO);
    CHECK(strstr(cap.last, "is a folder"), "folder info: log says '%s'", cap.last);
    remove(path);
}

static void test_save_errors(void)
{
    uint8_t buf[3 * 4 * 4] = {0};
    glcv_image rgb = {buf, 4, 4, 0, GLCV_PIXEL_RGB8};
    char path[512];
    capture cap;
    glcv_logger lg = capture_logger(&cap);

    path_in_tmp(path, sizeof path, "no-such-dir/out.png");
    CHECK_STATUS(glcv_image_save_png(path, &rgb, &lg), GLCV_ERROR_IO);
    CHECK(cap.count > 0, "save into a missing directory: nothing logged");
    struct stat st;
    CHECK(stat(path, &st) != 0, "a file exists at %s after a failed save", path);
    CHECK(count_entries("no-such-dir") == 0, "something was created for the missing directory");

    /* The target is a directory: the temporary file is written, the rename fails and the temporary
     * file must be removed. */
    path_in_tmp(path, sizeof path, "a-directory");
    CHECK(mkdir(path, 0700) == 0, "cannot create %s", path);
    lg = capture_logger(&cap);
    CHECK_STATUS(glcv_image_save_png(path, &rgb, &lg), GLCV_ERROR_IO);
    CHECK(cap.count > 0, "save over a directory: nothing logged");
    CHECK(count_entries(".tmp-") == 0, "temporary file left behind after a failed rename");
    rmdir(path);

    /* Overwriting an existing file replaces it completely. */
    path_in_tmp(path, sizeof path, "overwrite.png");
    write_bytes(path, "old contents", 12);
    CHECK_OK(glcv_image_save_png(path, &rgb, NULL));
    glcv_image got;
    CHECK_OK(glcv_image_load(path, GLCV_PIXEL_DEFAULT, NULL, &got));
    check_same_pixels(&got, &rgb, "overwritten file");
    glcv_image_free(&got);
}

static void test_convert(void)
{
    uint64_t rng = 99;
    const int w = 13, h = 9;
    glcv_image rgb, bgra, back;
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &rgb));
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_BGRA8, &bgra));
    /* A padded destination. */
    back = (glcv_image){malloc((size_t)(w * 3 + 5) * h), w, h, (size_t)(w * 3 + 5), GLCV_PIXEL_RGB8};
    if (!rgb.data || !bgra.data || !back.data)
        return;
    fill_random(&rgb, rgb.stride * h, &rng);
    CHECK_OK(glcv_image_convert(&rgb, &bgra));
    int bad_order = 0, bad_alpha = 0;
    for (int i = 0; i < w * h; i++) {
        const uint8_t *s = rgb.data + 3 * i, *d = bgra.data + 4 * i;
        bad_order += d[0] != s[2] || d[1] != s[1] || d[2] != s[0];
        bad_alpha += d[3] != 255;
    }
    CHECK(bad_order == 0, "RGB->BGRA: %d pixels with wrong channel order", bad_order);
    CHECK(bad_alpha == 0, "RGB->BGRA: %d pixels with alpha != 255", bad_alpha);
    CHECK_OK(glcv_image_convert(&bgra, &back));
    check_same_pixels(&back, &rgb, "RGB->BGRA->RGB");

    /* Same format: a copy that honours strides. */
    glcv_image copy;
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &copy));
    CHECK_OK(glcv_image_convert(&back, &copy));
    check_same_pixels(&copy, &rgb, "RGB->RGB copy from a padded image");
    glcv_image_free(&copy);

    /* Colour -> gray: (77 R + 150 G + 29 B + 128) >> 8. */
    static const struct {
        uint8_t r, g, b, gray;
    } gray_cases[] = {
        {0, 0, 0, 0}, {255, 255, 255, 255}, {255, 0, 0, 77}, {0, 255, 0, 149}, {0, 0, 255, 29}, {10, 20, 30, 18},
        {200, 100, 50, 124},
    };
    const int ng = (int)(sizeof gray_cases / sizeof gray_cases[0]);
    uint8_t rgbbuf[7 * 3], bgrbuf[7 * 4], graybuf[7], rgbabuf[7 * 4];
    for (int i = 0; i < ng; i++) {
        rgbbuf[3 * i] = gray_cases[i].r;
        rgbbuf[3 * i + 1] = gray_cases[i].g;
        rgbbuf[3 * i + 2] = gray_cases[i].b;
        bgrbuf[4 * i] = gray_cases[i].b;
        bgrbuf[4 * i + 1] = gray_cases[i].g;
        bgrbuf[4 * i + 2] = gray_cases[i].r;
        bgrbuf[4 * i + 3] = 17;
    }
    glcv_image src_rgb = {rgbbuf, ng, 1, 0, GLCV_PIXEL_RGB8};
    glcv_image src_bgra = {bgrbuf, ng, 1, 0, GLCV_PIXEL_BGRA8};
    glcv_image gray = {graybuf, ng, 1, 0, GLCV_PIXEL_GRAY8};
    CHECK_OK(glcv_image_convert(&src_rgb, &gray));
    for (int i = 0; i < ng; i++)
        CHECK(graybuf[i] == gray_cases[i].gray, "gray of (%d,%d,%d) = %d, expected %d", gray_cases[i].r,
              gray_cases[i].g, gray_cases[i].b, graybuf[i], gray_cases[i].gray);
    memset(graybuf, 0, sizeof graybuf);
    CHECK_OK(glcv_image_convert(&src_bgra, &gray));
    for (int i = 0; i < ng; i++)
        CHECK(graybuf[i] == gray_cases[i].gray, "gray of BGRA (%d,%d,%d) = %d, expected %d", gray_cases[i].r,
              gray_cases[i].g, gray_cases[i].b, graybuf[i], gray_cases[i].gray);

    /* Gray -> RGBA replicates; BGRA -> RGBA keeps alpha. */
    glcv_image rgba = {rgbabuf, ng, 1, 0, GLCV_PIXEL_RGBA8};
    CHECK_OK(glcv_image_convert(&gray, &rgba));
    for (int i = 0; i < ng; i++) {
        const uint8_t *p = rgbabuf + 4 * i;
        CHECK(p[0] == graybuf[i] && p[1] == graybuf[i] && p[2] == graybuf[i] && p[3] == 255,
              "gray %d -> RGBA (%d,%d,%d,%d)", graybuf[i], p[0], p[1], p[2], p[3]);
    }
    CHECK_OK(glcv_image_convert(&src_bgra, &rgba));
    for (int i = 0; i < ng; i++) {
        const uint8_t *p = rgbabuf + 4 * i;
        CHECK(p[0] == gray_cases[i].r && p[1] == gray_cases[i].g && p[2] == gray_cases[i].b && p[3] == 17,
              "BGRA -> RGBA pixel %d: (%d,%d,%d,%d)", i, p[0], p[1], p[2], p[3]);
    }

    glcv_image_free(&rgb);
    glcv_image_free(&bgra);
    free(back.data);
}

/* ---- glcv_image_median --------------------------------------------------------------------- */

/* Frames for the median: the images themselves, served in place, and a record of the calls. */
typedef struct median_frames {
    glcv_image *frames;
    int count;
    int calls;        /* how many times the source was called */
    int order_errors; /* calls out of the order 0..count-1, 0..count-1 */
    int fail_at;      /* the call (0-based) that fails with GLCV_ERROR_IO; -1: none */
    int bad_at;       /* the call that hands out an image of another size; -1: none */
} median_frames;

static glcv_status median_source(void *user, int index, glcv_image *frame)
{
    median_frames *m = user;
    int call = m->calls++;
    if (index != call % m->count)
        m->order_errors++;
    if (call == m->fail_at)
        return GLCV_ERROR_IO;
    *frame = m->frames[index];
    if (call == m->bad_at)
        frame->width--;
    return GLCV_OK;
}

static int compare_bytes(const void *a, const void *b)
{
    return (int)*(const uint8_t *)a - (int)*(const uint8_t *)b;
}

/* The median by brute force: every frame converted to out's format, each byte's values sorted,
 * the one of rank (count - 1) / 2 taken. */
static void brute_median(const median_frames *m, glcv_image *out)
{
    int bpp = glcv_pixel_format_size(out->format);
    size_t row = (size_t)out->width * (size_t)bpp;
    glcv_image *converted = calloc((size_t)m->count, sizeof *converted);
    uint8_t *values = malloc((size_t)m->count);
    CHECK(converted && values, "out of memory");
    if (!converted || !values)
        goto done;
    for (int k = 0; k < m->count; k++) {
        CHECK_OK(glcv_image_alloc(out->width, out->height, out->format, &converted[k]));
        CHECK_OK(glcv_image_convert(&m->frames[k], &converted[k]));
    }
    for (int y = 0; y < out->height; y++)
        for (size_t x = 0; x < row; x++) {
            for (int k = 0; k < m->count; k++)
                values[k] = converted[k].data[(size_t)y * converted[k].stride + x];
            qsort(values, (size_t)m->count, 1, compare_bytes);
            out->data[(size_t)y * glcv_image_stride(out) + x] = values[(m->count - 1) / 2];
        }
done:
    for (int k = 0; converted && k < m->count; k++)
        glcv_image_free(&converted[k]);
    free(converted);
    free(values);
}

/* Random frames of `format` (values from the whole range, or from {0, 15, 16, 17, 240, 255} to
 * make ties and values on both sides of a nibble boundary), their median in `out_format` by
 * glcv_image_median and by sorting. */
static void check_median_case(int count, int w, int h, glcv_pixel_format format, glcv_pixel_format out_format,
                              int few_values, size_t out_padding, uint64_t *rng)
{
    static const uint8_t few[] = {0, 15, 16, 17, 240, 255};
    median_frames m = {calloc((size_t)count, sizeof(glcv_image)), count, 0, 0, -1, -1};
    CHECK(m.frames != NULL, "out of memory");
    if (!m.frames)
        return;
    int bpp = glcv_pixel_format_size(format);
    for (int k = 0; k < count; k++) {
        /* Every other frame with a padded stride, to read rows where they are. */
        m.frames[k] = test_image_make(w, h, format, k % 2 ? (size_t)(w * bpp + 5) : 0);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w * bpp; x++) {
                uint64_t r = test_rand(rng);
                m.frames[k].data[(size_t)y * glcv_image_stride(&m.frames[k]) + (size_t)x] =
                    few_values ? few[r % sizeof few] : (uint8_t)(r >> 24);
            }
    }
    size_t out_row = (size_t)w * (size_t)glcv_pixel_format_size(out_format);
    glcv_image got = test_image_make(w, h, out_format, out_padding ? out_row + out_padding : 0);
    glcv_image want = test_image_make(w, h, out_format, 0);
    CHECK_OK(glcv_image_median(count, median_source, &m, NULL, &got));
    CHECK(m.calls == 2 * count && m.order_errors == 0, "median of %d frames: %d source calls (%d out of order)", count,
          m.calls, m.order_errors);
    brute_median(&m, &want);
    char what[128];
    snprintf(what, sizeof what, "median of %d frames %dx%d, format %d -> %d%s", count, w, h, (int)format,
             (int)out_format, few_values ? ", many ties" : "");
    check_same_pixels(&got, &want, what);
    test_image_release(&got);
    test_image_release(&want);
    for (int k = 0; k < count; k++)
        test_image_release(&m.frames[k]);
    free(m.frames);
}

static void test_median(void)
{
    uint64_t rng = 0x3D1A;
    for (int count = 1; count <= 9; count++) /* odd and even counts, from one frame on */
        check_median_case(count, 13, 7, GLCV_PIXEL_RGB8, GLCV_PIXEL_RGB8, count % 3 == 0, 0, &rng);
    check_median_case(40, 9, 5, GLCV_PIXEL_RGB8, GLCV_PIXEL_RGB8, 0, 3, &rng);
    check_median_case(41, 9, 5, GLCV_PIXEL_RGB8, GLCV_PIXEL_RGB8, 1, 0, &rng);
    check_median_case(256, 3, 2, GLCV_PIXEL_RGB8, GLCV_PIXEL_RGB8, 1, 0, &rng); /* a bin holds more than 255 */
    check_median_case(6, 11, 4, GLCV_PIXEL_BGRA8, GLCV_PIXEL_RGB8, 0, 1, &rng); /* converted row by row */
    check_median_case(7, 11, 4, GLCV_PIXEL_RGB8, GLCV_PIXEL_GRAY8, 0, 0, &rng);
    check_median_case(5, 11, 4, GLCV_PIXEL_GRAY8, GLCV_PIXEL_GRAY8, 1, 2, &rng);
    check_median_case(4, 11, 4, GLCV_PIXEL_RGBA8, GLCV_PIXEL_RGBA8, 0, 0, &rng);

    /* Errors: arguments, a failing source, a frame of another size or an invalid one. */
    glcv_image frames[3];
    for (int k = 0; k < 3; k++) {
        frames[k] = test_image_make(4, 3, GLCV_PIXEL_RGB8, 0);
        memset(frames[k].data, 10 * k, 36);
    }
    glcv_image out = test_image_make(4, 3, GLCV_PIXEL_RGB8, 0);
    median_frames m = {frames, 3, 0, 0, -1, -1};
    capture c;
    glcv_logger lg = capture_logger(&c);
    CHECK_STATUS(glcv_image_median(0, median_source, &m, &lg, &out), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_image_median(-1, median_source, &m, &lg, &out), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_image_median(GLCV_IMAGE_MEDIAN_MAX_FRAMES + 1, median_source, &m, &lg, &out),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_image_median(3, NULL, &m, &lg, &out), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_image_median(3, median_source, &m, &lg, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_image no_pixels = {NULL, 4, 3, 0, GLCV_PIXEL_RGB8};
    CHECK_STATUS(glcv_image_median(3, median_source, &m, &lg, &no_pixels), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK(m.calls == 0, "the source was called %d times for invalid arguments", m.calls);
    CHECK(c.count > 0, "invalid arguments are not logged");

    for (int call = 0; call < 6; call += 4) { /* in the first pass and in the second */
        m = (median_frames){frames, 3, 0, 0, call, -1};
        c.count = 0;
        CHECK_STATUS(glcv_image_median(3, median_source, &m, &lg, &out), GLCV_ERROR_IO);
        CHECK(m.calls == call + 1, "the median went on after the source failed at call %d (%d calls)", call, m.calls);
        char want[32];
        snprintf(want, sizeof want, "frame %d", call % 3);
        CHECK(c.count > 0 && strstr(c.last, want), "the failing source's frame is not named: '%s'", c.last);

        m = (median_frames){frames, 3, 0, 0, -1, call};
        CHECK_STATUS(glcv_image_median(3, median_source, &m, &lg, &out), GLCV_ERROR_SIZE_MISMATCH);
    }
    glcv_image small = test_image_make(4, 2, GLCV_PIXEL_RGB8, 0);
    CHECK_STATUS(glcv_image_median(3, median_source, &(median_frames){frames, 3, 0, 0, -1, -1}, &lg, &small),
                 GLCV_ERROR_SIZE_MISMATCH);
    glcv_image saved = frames[1];
    frames[1].data = NULL;
    CHECK_STATUS(glcv_image_median(3, median_source, &(median_frames){frames, 3, 0, 0, -1, -1}, &lg, &out),
                 GLCV_ERROR_INVALID_ARGUMENT);
    frames[1] = saved;
    CHECK_OK(glcv_image_median(3, median_source, &(median_frames){frames, 3, 0, 0, -1, -1}, &lg, &out));
    CHECK(out.data[0] == 10 && out.data[35] == 10, "median of 0, 10, 20: %d and %d", out.data[0], out.data[35]);
    test_image_release(&small);
    test_image_release(&out);
    for (int k = 0; k < 3; k++)
        test_image_release(&frames[k]);
}

/* ---- glcv_image_list_folder ---------------------------------------------------------------- */

static void test_list_folder(void)
{
    char dir[300], path[400];
    path_in_tmp(dir, sizeof dir, "listing");
    CHECK(mkdir(dir, 0700) == 0, "cannot create %s", dir);
    static const char *const files[] = {"b10.png", "b2.PNG", "a.jpeg", "c.JPG", "d.bmp", "e.tga", "f.ppm",
                                        "g.pgm", ".hidden.png", "notes.txt", "png", "tif.tif", "noext"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        write_bytes(path, "x", 1);
    }
    snprintf(path, sizeof path, "%s/folder.png", dir); /* a folder with an image's name */
    CHECK(mkdir(path, 0700) == 0, "cannot create %s", path);

    /* Byte order: 'b10' before 'b2', upper-case endings kept as they are. */
    static const char *const want[] = {"a.jpeg", "b10.png", "b2.PNG", "c.JPG", "d.bmp", "e.tga", "f.ppm", "g.pgm"};
    const int n = (int)(sizeof want / sizeof want[0]);
    const char *spellings[2] = {dir, NULL};
    char slashed[310];
    snprintf(slashed, sizeof slashed, "%s/", dir);
    spellings[1] = slashed;
    for (int s = 0; s < 2; s++) {
        glcv_file_list list = {0};
        CHECK_OK(glcv_image_list_folder(spellings[s], NULL, &list));
        CHECK(list.count == n, "'%s': %d files listed, expected %d", spellings[s], list.count, n);
        for (int i = 0; i < list.count && i < n; i++) {
            snprintf(path, sizeof path, "%s/%s", dir, want[i]);
            CHECK(strcmp(list.paths[i], path) == 0, "'%s': file %d is '%s', expected '%s'", spellings[s], i,
                  list.paths[i], path);
        }
        glcv_file_list_free(&list);
        CHECK(list.paths == NULL && list.count == 0, "glcv_file_list_free leaves the list non-empty");
    }

    glcv_file_list list = {0};
    path_in_tmp(path, sizeof path, "listing/folder.png");
    CHECK_OK(glcv_image_list_folder(path, NULL, &list));
    CHECK(list.count == 0 && list.paths == NULL, "an empty folder lists %d files", list.count);
    path_in_tmp(path, sizeof path, "listing/d.bmp");
    capture c;
    glcv_logger lg = capture_logger(&c);
    CHECK_STATUS(glcv_image_list_folder(path, &lg, &list), GLCV_ERROR_IO);
    CHECK(strstr(c.last, "d.bmp") != NULL, "a file as folder: the message does not name it: '%s'", c.last);
    path_in_tmp(path, sizeof path, "no-such-folder");
    CHECK_STATUS(glcv_image_list_folder(path, &lg, &list), GLCV_ERROR_IO);
    CHECK(list.count == 0 && list.paths == NULL, "a failed listing leaves %d paths", list.count);
    CHECK_STATUS(glcv_image_list_folder("", &lg, &list), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_image_list_folder(NULL, &lg, &list), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_image_list_folder(dir, &lg, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_file_list_free(NULL);
    glcv_file_list_free(&list);

    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        remove(path);
    }
    snprintf(path, sizeof path, "%s/folder.png", dir);
    rmdir(path);
    rmdir(dir);
}

static void remove_tmpdir(void)
{
    DIR *d = opendir(tmpdir);
    if (!d)
        return;
    struct dirent *e;
    char path[512];
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        path_in_tmp(path, sizeof path, e->d_name);
        if (remove(path) != 0)
            fprintf(stderr, "cannot remove %s\n", path);
    }
    closedir(d);
    rmdir(tmpdir);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/glcv-test-image-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        printf("cannot create a temporary directory\n");
        return 1;
    }
    test_alloc_free();
    test_invalid();
    test_png_round_trip();
    test_png_levels();
    test_png_encoder();
    test_load_errors();
    test_not_regular();
    test_load_limits();
    test_save_errors();
    test_convert();
    test_median();
    test_list_folder();
    remove_tmpdir();
    return test_finish("test_image");
}
