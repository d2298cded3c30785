/* glcv image files and host image buffers (PNG, JPEG, BMP, TGA, PNM in; PNG out).
 *
 * Thread safety: all functions may be called from any thread on different images.
 */
#ifndef GLCV_IMAGE_H
#define GLCV_IMAGE_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Allocates a tightly packed image (stride = width * bytes per pixel), zero-filled.
 * Errors: INVALID_ARGUMENT (NULL out, size < 1, unknown format, size overflow), OUT_OF_MEMORY.
 * On error *out is zeroed. Free with glcv_image_free. */
GLCV_API glcv_status glcv_image_alloc(int width, int height, glcv_pixel_format format, glcv_image *out);

/* Frees the pixels of an image made by glcv_image_alloc or glcv_image_load and zeroes the
 * struct. NULL and already-freed (zeroed) images are accepted. */
GLCV_API void glcv_image_free(glcv_image *image);

/* Loads an image file and converts it to `format` (GRAY8, RGB8 or RGBA8; UNKNOWN keeps the
 * file's own channel count: GRAY8, RGB8 or RGBA8; a gray+alpha file becomes RGBA8).
 * Errors: INVALID_ARGUMENT, IO (missing or unreadable file), CORRUPT_DATA (not a decodable
 * image), OUT_OF_MEMORY. On error *out is zeroed and the logger says why. */
GLCV_API glcv_status glcv_image_load(const char *path, glcv_pixel_format format, const glcv_logger *logger,
                                     glcv_image *out);

/* Reads an image file's size and channel count (1..4) without decoding the pixels.
 * Errors: INVALID_ARGUMENT, IO (missing or unreadable), CORRUPT_DATA (not an image). */
GLCV_API glcv_status glcv_image_info(const char *path, int *width, int *height, int *channels,
                                     const glcv_logger *logger);

/* Writes an image as PNG (any format; BGR(A) is written as RGB(A)). The file is written to a
 * temporary name beside `path` and renamed, so a failed write never leaves a partial file.
 * Errors: INVALID_ARGUMENT, IO, OUT_OF_MEMORY. */
GLCV_API glcv_status glcv_image_save_png(const char *path, const glcv_image *image, const glcv_logger *logger);

/* Converts between any two pixel formats (gray → colour replicates; colour → gray uses
 * (77 R + 150 G + 29 B + 128) >> 8; alpha is 255 where the source has none).
 * `dst` must be allocated with the same width and height. Errors: INVALID_ARGUMENT,
 * SIZE_MISMATCH. */
GLCV_API glcv_status glcv_image_convert(const glcv_image *src, glcv_image *dst);

/* Checks that an image is usable: data != NULL, size >= 1, known format, stride 0 or large
 * enough. Returns INVALID_ARGUMENT otherwise. */
GLCV_API glcv_status glcv_image_check(const glcv_image *image);

/* The stride of an image, with 0 resolved to width * bytes per pixel. */
GLCV_API size_t glcv_image_stride(const glcv_image *image);

#ifdef __cplusplus
}
#endif
#endif
