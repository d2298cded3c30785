/* Host images: allocation, checks, pixel-format conversion, image files (read through stb_image,
 * PNG written with libdeflate), folders of image files, and the per-pixel median of many images. */
#include "core_internal.h"
#include "image_internal.h"

#include <glcv/image.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libdeflate.h>
#include <stb/stb_image.h>

/* The largest image accepted, in pixels: keeps every size computation far from overflow. */
#define MAX_PIXELS ((size_t)1 << 30)

/* glcv_image_load's limit (glcv_image_set_max_pixels). */
static atomic_size_t g_max_pixels = GLCV_IMAGE_DEFAULT_MAX_PIXELS;

size_t glcv_image_set_max_pixels(size_t n)
{
    n = n < 1 ? 1 : n > MAX_PIXELS ? MAX_PIXELS : n;
    atomic_store(&g_max_pixels, n);
    return n;
}

size_t glcv_image_max_pixels(void)
{
    return atomic_load(&g_max_pixels);
}

/* Bytes of one tightly packed row, or 0 if the width or format is invalid. */
static size_t row_bytes(int width, glcv_pixel_format format)
{
    int bpp = glcv_pixel_format_size(format);
    if (width < 1 || bpp == 0)
        return 0;
    return (size_t)width * (size_t)bpp;
}

static int size_ok(int width, int height)
{
    return width >= 1 && height >= 1 && (size_t)width * (size_t)height <= MAX_PIXELS;
}

size_t glcv_image_stride(const glcv_image *image)
{
    if (!image)
        return 0;
    if (image->stride)
        return image->stride;
    return row_bytes(image->width, image->format);
}

glcv_status glcv_image_check(const glcv_image *image)
{
    if (!image || !image->data || image->width < 1 || image->height < 1)
        return GLCV_ERROR_INVALID_ARGUMENT;
    size_t row = row_bytes(image->width, image->format);
    if (row == 0)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (image->stride != 0 && image->stride < row)
        return GLCV_ERROR_INVALID_ARGUMENT;
    /* The last row must end inside the address space. */
    size_t stride = image->stride ? image->stride : row;
    if ((size_t)(image->height - 1) > (SIZE_MAX - row) / stride)
        return GLCV_ERROR_INVALID_ARGUMENT;
    return GLCV_OK;
}

glcv_status glcv_image_alloc(int width, int height, glcv_pixel_format format, glcv_image *out)
{
    if (!out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    memset(out, 0, sizeof *out);
    size_t row = row_bytes(width, format);
    if (row == 0 || !size_ok(width, height))
        return GLCV_ERROR_INVALID_ARGUMENT;
    uint8_t *data = calloc((size_t)height, row);
    if (!data)
        return GLCV_ERROR_OUT_OF_MEMORY;
    out->data = data;
    out->width = width;
    out->height = height;
    out->stride = row;
    out->format = format;
    return GLCV_OK;
}

void glcv_image_free(glcv_image *image)
{
    if (!image)
        return;
    free(image->data);
    memset(image, 0, sizeof *image);
}

/* ---- Pixel-format conversion ---- */

/* Where the channels of a format lie in a pixel; gray formats have r == g == b == 0. */
typedef struct channel_layout {
    int bpp;
    int r, g, b;
    int a; /* -1: no alpha */
    int gray;
} channel_layout;

static channel_layout layout_of(glcv_pixel_format format)
{
    channel_layout l = {0, 0, 0, 0, -1, 0};
    switch (format) {
    case GLCV_PIXEL_GRAY8: l = (channel_layout){1, 0, 0, 0, -1, 1}; break;
    case GLCV_PIXEL_RGB8: l = (channel_layout){3, 0, 1, 2, -1, 0}; break;
    case GLCV_PIXEL_RGBA8: l = (channel_layout){4, 0, 1, 2, 3, 0}; break;
    case GLCV_PIXEL_BGR8: l = (channel_layout){3, 2, 1, 0, -1, 0}; break;
    case GLCV_PIXEL_BGRA8: l = (channel_layout){4, 2, 1, 0, 3, 0}; break;
    case GLCV_PIXEL_DEFAULT: break;
    }
    return l;
}

static void convert_row(const uint8_t *s, channel_layout sl, uint8_t *d, channel_layout dl, int width)
{
    for (int x = 0; x < width; x++, s += sl.bpp, d += dl.bpp) {
        unsigned r = s[sl.r], g = s[sl.g], b = s[sl.b];
        unsigned a = sl.a >= 0 ? s[sl.a] : 255u;
        if (dl.gray) {
            d[0] = sl.gray ? (uint8_t)r : (uint8_t)((77u * r + 150u * g + 29u * b + 128u) >> 8);
            continue;
        }
        d[dl.r] = (uint8_t)r;
        d[dl.g] = (uint8_t)g;
        d[dl.b] = (uint8_t)b;
        if (dl.a >= 0)
            d[dl.a] = (uint8_t)a;
    }
}

glcv_status glcv_image_convert(const glcv_image *src, glcv_image *dst)
{
    if (glcv_image_check(src) != GLCV_OK || glcv_image_check(dst) != GLCV_OK)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (src->width != dst->width || src->height != dst->height)
        return GLCV_ERROR_SIZE_MISMATCH;
    size_t ss = glcv_image_stride(src), ds = glcv_image_stride(dst);
    if (src->format == dst->format) {
        size_t row = row_bytes(src->width, src->format);
        for (int y = 0; y < src->height; y++)
            memmove(dst->data + (size_t)y * ds, src->data + (size_t)y * ss, row);
        return GLCV_OK;
    }
    channel_layout sl = layout_of(src->format), dl = layout_of(dst->format);
    for (int y = 0; y < src->height; y++)
        convert_row(src->data + (size_t)y * ss, sl, dst->data + (size_t)y * ds, dl, src->width);
    return GLCV_OK;
}

/* ---- Loading ---- */

/* Reads an open image's header (`path` names it in messages); on success `f` is at its start
 * again. `limit`: more pixels than glcv_image_max_pixels is LIMIT. */
static glcv_status read_header(FILE *f, const char *path, const glcv_logger *logger, int limit, int *w, int *h,
                               int *comp)
{
    if (!stbi_info_from_file(f, w, h, comp)) {
        if (ferror(f))
            return glcv_fail(logger, GLCV_ERROR_IO, "image: cannot read '%s': %s", path, strerror(errno));
        return glcv_fail(logger, GLCV_ERROR_CORRUPT_DATA, "image: '%s' is not a decodable image: %s", path,
                         stbi_failure_reason());
    }
    if (!size_ok(*w, *h))
        return glcv_fail(logger, GLCV_ERROR_CORRUPT_DATA, "image: '%s' has an unusable size %dx%d", path, *w, *h);
    if (limit && (size_t)*w * (size_t)*h > glcv_image_max_pixels())
        return glcv_fail(logger, GLCV_ERROR_LIMIT,
                         "image: '%s' is %dx%d (%.1f Mpixel), above the limit of %.1f Mpixel: not decoded (a larger "
                         "limit: glcv_image_set_max_pixels, or --max-pixels on the command line)",
                         path, *w, *h, (double)*w * (double)*h / 1e6, (double)glcv_image_max_pixels() / 1e6);
    return GLCV_OK;
}

static int load_format_ok(glcv_pixel_format format)
{
    return format == GLCV_PIXEL_DEFAULT || format == GLCV_PIXEL_GRAY8 || format == GLCV_PIXEL_RGB8 ||
           format == GLCV_PIXEL_RGBA8;
}

static glcv_status load_format_error(const glcv_logger *logger, glcv_pixel_format format)
{
    return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT,
                     "image load: format %d not supported (GRAY8, RGB8, RGBA8 or UNKNOWN)", (int)format);
}

/* What a file that is not a regular file is, for messages. */
static const char *file_kind(mode_t mode)
{
    return S_ISFIFO(mode)  ? "a FIFO"
           : S_ISCHR(mode) ? "a character device"
           : S_ISBLK(mode) ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a plain file";
}

/* Opens an image file: a folder, a missing file or anything that is not a regular file is IO,
 * named. The file is opened without blocking and checked on the open descriptor: a plain open()
 * of a FIFO waits for a writer for ever, and no signal the caller handles ends that wait. */
static glcv_status open_file(const char *path, const glcv_logger *logger, FILE **file)
{
    struct stat sb;
    *file = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        /* open() of a socket fails (ENXIO): say what it is rather than "no such device" */
        if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode))
            return glcv_fail(logger, GLCV_ERROR_IO, "image: '%s' is not a regular file (%s)", path,
                             file_kind(sb.st_mode));
        return glcv_fail(logger, GLCV_ERROR_IO, "image: cannot open '%s': %s", path, strerror(err));
    }
    if (fstat(fd, &sb) != 0) {
        int err = errno;
        close(fd);
        return glcv_fail(logger, GLCV_ERROR_IO, "image: cannot read '%s': %s", path, strerror(err));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        if (S_ISDIR(sb.st_mode))
            return glcv_fail(logger, GLCV_ERROR_IO, "image: '%s' is a folder, not an image file", path);
        return glcv_fail(logger, GLCV_ERROR_IO, "image: '%s' is not a regular file (%s)", path,
                         file_kind(sb.st_mode));
    }
    /* Reads of a regular file never block; the flag is cleared so that the stream reads as any other. */
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    *file = fdopen(fd, "rb");
    if (!*file) {
        int err = errno;
        close(fd);
        return glcv_fail(logger, GLCV_ERROR_IO, "image: cannot open '%s': %s", path, strerror(err));
    }
    return GLCV_OK;
}

glcv_status glcv_image_info(const char *path, int *width, int *height, int *channels, const glcv_logger *logger)
{
    if (!path || !*path || !width || !height || !channels)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "image info: NULL or empty argument");
    FILE *f = NULL;
    glcv_status st = open_file(path, logger, &f);
    if (st == GLCV_OK)
        st = read_header(f, path, logger, 0, width, height, channels);
    if (f)
        fclose(f);
    return st;
}

glcv_status glcv_image_load(const char *path, glcv_pixel_format format, const glcv_logger *logger,
                            glcv_image *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!path || !*path || !out)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "image load: NULL or empty argument");
    if (!load_format_ok(format))
        return load_format_error(logger, format);
    FILE *f = NULL;
    glcv_status st = open_file(path, logger, &f);
    if (st != GLCV_OK)
        return st;
    st = glcv_image_load_stream(f, path, format, logger, out);
    fclose(f);
    return st;
}

glcv_status glcv_image_load_stream(FILE *f, const char *path, glcv_pixel_format format, const glcv_logger *logger,
                                   glcv_image *out)
{
    memset(out, 0, sizeof *out);
    if (!load_format_ok(format))
        return load_format_error(logger, format);

    int w = 0, h = 0, comp = 0, want = 0;
    int lw = 0, lh = 0, lcomp = 0;
    unsigned char *pixels = NULL;
    glcv_status st = read_header(f, path, logger, 1, &w, &h, &comp);
    if (st != GLCV_OK)
        return st;
    if (format == GLCV_PIXEL_DEFAULT)
        format = comp == 1 ? GLCV_PIXEL_GRAY8 : comp == 3 ? GLCV_PIXEL_RGB8 : GLCV_PIXEL_RGBA8;
    /* Colour files wanted as gray are decoded as RGB and converted here, so that the gray formula
     * is the one glcv_image_convert documents. */
    want = format == GLCV_PIXEL_GRAY8 && comp >= 3 ? 3 : glcv_pixel_format_size(format);
    pixels = stbi_load_from_file(f, &lw, &lh, &lcomp, want);
    if (!pixels) {
        const char *why = stbi_failure_reason();
        if (ferror(f))
            st = glcv_fail(logger, GLCV_ERROR_IO, "image load: cannot read '%s': %s", path, strerror(errno));
        else if (why && strcmp(why, "outofmem") == 0)
            st = glcv_fail(logger, GLCV_ERROR_OUT_OF_MEMORY, "image load: out of memory decoding '%s'", path);
        else
            st = glcv_fail(logger, GLCV_ERROR_CORRUPT_DATA, "image load: cannot decode '%s': %s", path,
                           why ? why : "unknown reason");
        goto done;
    }
    if (lw != w || lh != h) {
        st = glcv_fail(logger, GLCV_ERROR_CORRUPT_DATA, "image load: '%s' changed size while decoding", path);
        goto done;
    }
    st = glcv_image_alloc(w, h, format, out);
    if (st != GLCV_OK) {
        glcv_fail(logger, st, "image load: cannot allocate %dx%d for '%s'", w, h, path);
        goto done;
    }
    if (want == glcv_pixel_format_size(format)) {
        memcpy(out->data, pixels, out->stride * (size_t)h);
    } else {
        glcv_image decoded = {pixels, w, h, (size_t)w * (size_t)want, GLCV_PIXEL_RGB8};
        glcv_image_convert(&decoded, out);
    }
    glcv_logf(logger, GLCV_LOG_DEBUG, "image load: '%s' %dx%d, %d channel(s) in file", path, w, h, comp);

done:
    stbi_image_free(pixels);
    return st;
}

/* ---- Saving ---- */

typedef struct png_sink {
    FILE *f;
    int failed;
} png_sink;

static void png_write(void *context, void *data, int size)
{
    png_sink *sink = context;
    if (sink->failed || size <= 0)
        return;
    if (fwrite(data, 1, (size_t)size, sink->f) != (size_t)size)
        sink->failed = errno ? errno : EIO;
}

enum { PNG_FILTER_NONE = 0, PNG_FILTER_SUB = 1, PNG_FILTER_UP = 2, PNG_FILTER_AVERAGE = 3, PNG_FILTER_PAETH = 4 };

/* libdeflate's effort at each level (1 the least, 12 the most). DEFAULT: its own default, which
 * gives files as small as stb_image_write's default effort did, in less time; FAST: the least. */
enum { DEFLATE_LEVEL_DEFAULT = 6, DEFLATE_LEVEL_FAST = 1 };

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* One chunk: length, type, data, CRC-32 (ISO 3309, libdeflate's) of type and data. */
static void png_chunk(png_sink *sink, const char type[4], const uint8_t *data, uint32_t size)
{
    uint8_t head[8], tail[4];
    put_be32(head, size);
    memcpy(head + 4, type, 4);
    uint32_t crc = libdeflate_crc32(0, head + 4, 4);
    if (size > 0)
        crc = libdeflate_crc32(crc, data, size);
    put_be32(tail, crc);
    png_write(sink, head, 8);
    if (size > 0)
        png_write(sink, (void *)data, (int)size);
    png_write(sink, tail, 4);
}

/* The PNG predictor of filter type 4 (PNG specification, 9.4). */
static uint8_t paeth(int a, int b, int c)
{
    int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    return (uint8_t)(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

/* Row `cur` (n bytes, `bpp` a pixel) filtered with `type` against the row above (`prev`, zeros for
 * the first row) into `out`. A loop per type, so that the compiler vectorises them. */
static void filter_row(int type, const uint8_t *cur, const uint8_t *prev, size_t n, size_t bpp, uint8_t *out)
{
    size_t first = bpp < n ? bpp : n; /* the first pixel has no left neighbour (0) */
    switch (type) {
    case PNG_FILTER_SUB:
        memcpy(out, cur, first);
        for (size_t i = first; i < n; i++)
            out[i] = (uint8_t)(cur[i] - cur[i - bpp]);
        break;
    case PNG_FILTER_UP:
        for (size_t i = 0; i < n; i++)
            out[i] = (uint8_t)(cur[i] - prev[i]);
        break;
    case PNG_FILTER_AVERAGE:
        for (size_t i = 0; i < first; i++)
            out[i] = (uint8_t)(cur[i] - (prev[i] >> 1));
        for (size_t i = first; i < n; i++)
            out[i] = (uint8_t)(cur[i] - ((cur[i - bpp] + prev[i]) >> 1));
        break;
    case PNG_FILTER_PAETH:
        for (size_t i = 0; i < first; i++)
            out[i] = (uint8_t)(cur[i] - prev[i]); /* paeth(0, up, 0) is up */
        for (size_t i = first; i < n; i++)
            out[i] = (uint8_t)(cur[i] - paeth(cur[i - bpp], prev[i], prev[i - bpp]));
        break;
    default:
        memcpy(out, cur, n);
        break;
    }
}

/* The usual choice of filter (PNG specification, 12.8): the one whose bytes, read as signed,
 * have the smallest sum of magnitudes. `trial` holds n bytes. Returns the type; `out` gets the row. */
static int filter_best(const uint8_t *cur, const uint8_t *prev, size_t n, size_t bpp, uint8_t *trial, uint8_t *out)
{
    int best = PNG_FILTER_NONE;
    uint64_t best_sum = UINT64_MAX;
    for (int type = PNG_FILTER_NONE; type <= PNG_FILTER_PAETH; type++) {
        filter_row(type, cur, prev, n, bpp, trial);
        uint64_t sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += (uint64_t)abs((int)(int8_t)trial[i]);
        if (sum < best_sum) {
            best_sum = sum;
            best = type;
            memcpy(out, trial, n);
        }
    }
    return best;
}

/* Encodes the image (`comp` 1, 2, 3 or 4 channels of 8 bits) into the sink as one IDAT of zlib
 * data from libdeflate: DEFAULT each row with the filter filter_best chooses, FAST row 0
 * unfiltered and every other row "up" (a mask's rows are mostly their neighbours). Returns 0 when
 * out of memory. */
static int encode_png(png_sink *sink, const uint8_t *pixels, size_t stride, int w, int h, int comp,
                      glcv_png_level level)
{
    static const uint8_t signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    static const uint8_t colour_type[5] = {0, 0, 4, 2, 6}; /* by channels: grey, grey+alpha, RGB, RGBA */
    size_t row = (size_t)w * (size_t)comp, filtered_size = (row + 1) * (size_t)h;
    uint8_t *filtered = malloc(filtered_size), *zeros = calloc(row, 1), *trial = malloc(row), *zlib = NULL;
    struct libdeflate_compressor *compressor =
        libdeflate_alloc_compressor(level == GLCV_PNG_LEVEL_FAST ? DEFLATE_LEVEL_FAST : DEFLATE_LEVEL_DEFAULT);
    size_t zlib_size = 0;
    int ok = filtered && zeros && trial && compressor;
    for (int y = 0; ok && y < h; y++) {
        uint8_t *d = filtered + (row + 1) * (size_t)y;
        const uint8_t *cur = pixels + stride * (size_t)y, *prev = y > 0 ? cur - stride : zeros;
        if (level == GLCV_PNG_LEVEL_FAST) {
            d[0] = y == 0 ? PNG_FILTER_NONE : PNG_FILTER_UP;
            filter_row(d[0], cur, prev, row, (size_t)comp, d + 1);
        } else {
            d[0] = (uint8_t)filter_best(cur, prev, row, (size_t)comp, trial, d + 1);
        }
    }
    if (ok) {
        size_t bound = libdeflate_zlib_compress_bound(compressor, filtered_size);
        ok = (zlib = malloc(bound)) != NULL;
        if (ok)
            zlib_size = libdeflate_zlib_compress(compressor, filtered, filtered_size, zlib, bound);
        ok = ok && zlib_size > 0 && zlib_size <= 0x7FFFFFFFu; /* a PNG chunk holds at most 2^31 - 1 bytes */
    }
    if (ok) {
        uint8_t header[13];
        put_be32(header, (uint32_t)w);
        put_be32(header + 4, (uint32_t)h);
        header[8] = 8; /* bits per channel */
        header[9] = colour_type[comp];
        header[10] = header[11] = header[12] = 0; /* deflate, adaptive filtering, no interlace */
        png_write(sink, (void *)signature, sizeof signature);
        png_chunk(sink, "IHDR", header, sizeof header);
        png_chunk(sink, "IDAT", zlib, (uint32_t)zlib_size);
        png_chunk(sink, "IEND", NULL, 0);
    }
    libdeflate_free_compressor(compressor);
    free(filtered);
    free(zeros);
    free(trial);
    free(zlib);
    return ok;
}

static atomic_uint temp_counter;

glcv_status glcv_image_save_png(const char *path, const glcv_image *image, const glcv_logger *logger)
{
    return glcv_image_save_png_level(path, image, GLCV_PNG_LEVEL_DEFAULT, logger);
}

glcv_status glcv_image_save_png_level(const char *path, const glcv_image *image, glcv_png_level level,
                                      const glcv_logger *logger)
{
    if (level != GLCV_PNG_LEVEL_DEFAULT && level != GLCV_PNG_LEVEL_FAST)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "image save: unknown PNG level %d", (int)level);
    if (!path || !*path)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "image save: NULL or empty path");
    if (glcv_image_check(image) != GLCV_OK)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "image save: invalid image for '%s'", path);
    if (!size_ok(image->width, image->height))
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "image save: image %dx%d too large for '%s'",
                         image->width, image->height, path);

    int w = image->width, h = image->height;
    glcv_pixel_format fmt = image->format;
    int comp = glcv_pixel_format_size(fmt);
    size_t row = (size_t)w * (size_t)comp;
    /* A PNG chunk holds less than 2^31 bytes: the filtered image (one extra byte a row) must fit. */
    if ((row + 1) > (size_t)INT_MAX / (size_t)h)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "image save: image %dx%d too large for PNG", w, h);

    const uint8_t *pixels = image->data;
    size_t stride = glcv_image_stride(image);
    uint8_t *converted = NULL;
    if (fmt == GLCV_PIXEL_BGR8 || fmt == GLCV_PIXEL_BGRA8 || stride > (size_t)INT_MAX) {
        glcv_pixel_format to = fmt == GLCV_PIXEL_BGR8 ? GLCV_PIXEL_RGB8 : fmt == GLCV_PIXEL_BGRA8 ? GLCV_PIXEL_RGBA8 : fmt;
        converted = malloc(row * (size_t)h);
        if (!converted)
            return glcv_fail(logger, GLCV_ERROR_OUT_OF_MEMORY, "image save: out of memory for '%s'", path);
        glcv_image tmp = {converted, w, h, row, to};
        glcv_image_convert(image, &tmp);
        pixels = converted;
        stride = row;
    }

    glcv_status st = GLCV_OK;
    png_sink sink = {NULL, 0};
    size_t tlen = strlen(path) + 64;
    char *tmp_path = malloc(tlen);
    if (!tmp_path) {
        free(converted);
        return glcv_fail(logger, GLCV_ERROR_OUT_OF_MEMORY, "image save: out of memory for '%s'", path);
    }
    snprintf(tmp_path, tlen, "%s.tmp-%ld-%u", path, (long)getpid(), atomic_fetch_add(&temp_counter, 1u));

    FILE *f = fopen(tmp_path, "wb");
    if (!f) {
        st = glcv_fail(logger, GLCV_ERROR_IO, "image save: cannot create '%s': %s", tmp_path, strerror(errno));
        goto done;
    }
    sink.f = f;
    errno = 0;
    int encoded = encode_png(&sink, pixels, stride, w, h, comp, level);
    int close_failed = fclose(f) != 0;
    int close_errno = errno;
    if (!encoded) {
        st = glcv_fail(logger, GLCV_ERROR_OUT_OF_MEMORY, "image save: PNG encoding of '%s' failed", path);
    } else if (sink.failed || close_failed) {
        st = glcv_fail(logger, GLCV_ERROR_IO, "image save: cannot write '%s': %s", tmp_path,
                       strerror(sink.failed ? sink.failed : close_errno));
    } else if (rename(tmp_path, path) != 0) {
        st = glcv_fail(logger, GLCV_ERROR_IO, "image save: cannot rename '%s' to '%s': %s", tmp_path, path,
                       strerror(errno));
    }
    if (st != GLCV_OK)
        remove(tmp_path);
    else
        glcv_logf(logger, GLCV_LOG_DEBUG, "image save: wrote '%s' (%dx%d, %d channel(s))", path, w, h, comp);

done:
    free(tmp_path);
    free(converted);
    return st;
}

/* ---- The per-pixel median ---- */

enum { MEDIAN_BINS = 16 };

/* Counts one frame's row of channel values into the histograms: pass 0 the high nibbles, pass 1
 * the low nibbles of the values whose high nibble is the one pass 0 chose (in `high`). */
static void median_count_row(uint16_t *hist, const uint8_t *values, const uint8_t *high, size_t n, int pass)
{
    for (size_t x = 0; x < n; x++) {
        unsigned v = values[x];
        if (pass == 0)
            hist[x * MEDIAN_BINS + (v >> 4)]++;
        else if ((v >> 4) == high[x])
            hist[x * MEDIAN_BINS + (v & 15u)]++;
    }
}

/* Fetches frame k from the source and checks it against the output's size. */
static glcv_status median_fetch(glcv_image_source source, void *user, int k, const glcv_image *out,
                                const glcv_logger *logger, glcv_image *frame)
{
    memset(frame, 0, sizeof *frame);
    glcv_status st = source(user, k, frame);
    if (st != GLCV_OK)
        return glcv_fail(logger, st, "image median: the source failed on frame %d: %s", k, glcv_status_string(st));
    if (glcv_image_check(frame) != GLCV_OK)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "image median: frame %d is not a valid image", k);
    if (frame->width != out->width || frame->height != out->height)
        return glcv_fail(logger, GLCV_ERROR_SIZE_MISMATCH, "image median: frame %d is %dx%d, the output %dx%d", k,
                         frame->width, frame->height, out->width, out->height);
    return GLCV_OK;
}

glcv_status glcv_image_median(int count, glcv_image_source source, void *user, const glcv_logger *logger,
                              glcv_image *out)
{
    if (!source || glcv_image_check(out) != GLCV_OK)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "image median: NULL source or invalid output image");
    if (count < 1 || count > GLCV_IMAGE_MEDIAN_MAX_FRAMES)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "image median: %d frames (1..%d)", count,
                         GLCV_IMAGE_MEDIAN_MAX_FRAMES);
    if (!size_ok(out->width, out->height))
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT,
                         "image median: output %dx%d too large (at most %zu pixels)", out->width, out->height,
                         MAX_PIXELS);
    size_t row = row_bytes(out->width, out->format), out_stride = glcv_image_stride(out);
    size_t n = row * (size_t)out->height;
    /* hist: the 16 bins of every channel value; below: how many values lie under the chosen high
     * nibble; the chosen high nibble itself is kept in `out` until the low one joins it. */
    uint16_t *hist = calloc(n * MEDIAN_BINS, sizeof *hist);
    uint16_t *below = malloc(n * sizeof *below);
    uint8_t *converted = malloc(row);
    if (!hist || !below || !converted) {
        free(hist);
        free(below);
        free(converted);
        return glcv_fail(logger, GLCV_ERROR_OUT_OF_MEMORY, "image median: out of memory for %dx%d", out->width,
                         out->height);
    }
    channel_layout out_layout = layout_of(out->format);
    unsigned rank = (unsigned)(count - 1) / 2u;
    glcv_status st = GLCV_OK;
    for (int pass = 0; pass < 2 && st == GLCV_OK; pass++) {
        for (int k = 0; k < count && st == GLCV_OK; k++) {
            glcv_image frame;
            st = median_fetch(source, user, k, out, logger, &frame);
            if (st != GLCV_OK)
                break;
            size_t stride = glcv_image_stride(&frame);
            for (int y = 0; y < out->height; y++) {
                const uint8_t *values = frame.data + (size_t)y * stride;
                if (frame.format != out->format) {
                    convert_row(values, layout_of(frame.format), converted, out_layout, out->width);
                    values = converted;
                }
                median_count_row(hist + (size_t)y * row * MEDIAN_BINS, values, out->data + (size_t)y * out_stride,
                                 row, pass);
            }
        }
        if (st != GLCV_OK)
            break;
        /* The digit of each value: the first bin where the count passes the median's rank. */
        for (int y = 0; y < out->height; y++) {
            uint8_t *high = out->data + (size_t)y * out_stride;
            for (size_t x = 0; x < row; x++) {
                size_t i = (size_t)y * row + x;
                const uint16_t *h = hist + i * MEDIAN_BINS;
                unsigned cum = pass == 0 ? 0u : below[i], digit = 0;
                while (digit < MEDIAN_BINS - 1 && cum + h[digit] <= rank)
                    cum += h[digit++];
                if (pass == 0) {
                    high[x] = (uint8_t)digit;
                    below[i] = (uint16_t)cum;
                } else {
                    high[x] = (uint8_t)(high[x] << 4 | digit);
                }
            }
        }
        if (pass == 0)
            memset(hist, 0, n * MEDIAN_BINS * sizeof *hist);
    }
    free(hist);
    free(below);
    free(converted);
    if (st == GLCV_OK)
        glcv_logf(logger, GLCV_LOG_DEBUG, "image median: %dx%d from %d frames", out->width, out->height, count);
    return st;
}

/* ---- Folders of image files ---- */

static int has_extension(const char *name, const char *const *extensions, size_t count)
{
    const char *dot = strrchr(name, '.');
    if (name[0] == '.' || !dot)
        return 0;
    for (size_t i = 0; i < count; i++)
        if (strcasecmp(dot, extensions[i]) == 0)
            return 1;
    return 0;
}

static int compare_paths(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends a path (taking it over) to the list; 0 when out of memory (the path is freed). */
static int list_append(glcv_file_list *list, int *capacity, char *path)
{
    if (list->count == *capacity) {
        int cap = *capacity ? *capacity * 2 : 64;
        char **paths = cap > 0 && cap < INT_MAX / 2 ? realloc(list->paths, (size_t)cap * sizeof *paths) : NULL;
        if (!paths) {
            free(path);
            return 0;
        }
        list->paths = paths;
        *capacity = cap;
    }
    list->paths[list->count++] = path;
    return 1;
}

glcv_status glcv_list_folder(const char *folder, const char *const *extensions, size_t count, const char *who,
                             const glcv_logger *logger, glcv_file_list *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!folder || !*folder || !out)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: NULL or empty argument", who);
    DIR *dir = opendir(folder);
    if (!dir)
        return glcv_fail(logger, GLCV_ERROR_IO, "%s: cannot open folder '%s': %s", who, folder, strerror(errno));
    size_t len = strlen(folder);
    const char *sep = folder[len - 1] == '/' ? "" : "/";
    int capacity = 0, ok = 1;
    for (struct dirent *e = readdir(dir); e && ok; e = readdir(dir)) {
        if (!has_extension(e->d_name, extensions, count))
            continue;
        size_t size = len + strlen(sep) + strlen(e->d_name) + 1;
        char *path = malloc(size);
        if (!path) {
            ok = 0;
            break;
        }
        snprintf(path, size, "%s%s%s", folder, sep, e->d_name);
        struct stat sb;
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))
            free(path);
        else
            ok = list_append(out, &capacity, path);
    }
    closedir(dir);
    if (!ok) {
        glcv_file_list_free(out);
        return glcv_fail(logger, GLCV_ERROR_OUT_OF_MEMORY, "%s: out of memory listing '%s'", who, folder);
    }
    if (out->count > 0)
        qsort(out->paths, (size_t)out->count, sizeof *out->paths, compare_paths);
    glcv_logf(logger, GLCV_LOG_DEBUG, "%s: %d files in '%s'", who, out->count, folder);
    return GLCV_OK;
}

glcv_status glcv_image_list_folder(const char *folder, const glcv_logger *logger, glcv_file_list *out)
{
    static const char *const extensions[] = {".png", ".jpg", ".jpeg", ".bmp", ".tga", ".ppm", ".pgm"};
    return glcv_list_folder(folder, extensions, sizeof extensions / sizeof extensions[0], "image list", logger, out);
}

void glcv_file_list_free(glcv_file_list *list)
{
    if (!list)
        return;
    for (int i = 0; i < list->count; i++)
        free(list->paths[i]);
    free(list->paths);
    memset(list, 0, sizeof *list);
}
