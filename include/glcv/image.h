/* glcv image files and host image buffers (PNG, JPEG, BMP, TGA, PNM in through stb_image; PNG out
 * through libdeflate), folders of image files, and the per-pixel median of many images.
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

/* The largest image glcv_image_load decodes, in pixels (width x height, as the file's header
 * says, checked before any pixel is decoded): a small file whose header claims a huge image
 * (a decompression bomb) is refused instead of taking gigabytes and minutes. Media input
 * (glcv/media.h) applies it to video frames too: a video whose frames are larger is refused at
 * open (LIMIT), and its decoder drops frames of more than twice the limit (decoders count
 * padded pictures) that come later in the stream. Process-wide;
 * default GLCV_IMAGE_DEFAULT_MAX_PIXELS (8192 x 8192, 64 Mi pixels: 256 MiB as RGBA); set it
 * before other threads load images. n is clamped to 1..2^30; returns the limit now in force. */
#define GLCV_IMAGE_DEFAULT_MAX_PIXELS ((size_t)8192 * 8192)
GLCV_API size_t glcv_image_set_max_pixels(size_t n);
GLCV_API size_t glcv_image_max_pixels(void);

/* Loads an image file and converts it to `format` (GRAY8, RGB8 or RGBA8; UNKNOWN keeps the
 * file's own channel count: GRAY8, RGB8 or RGBA8; a gray+alpha file becomes RGBA8).
 * Errors: INVALID_ARGUMENT, IO (missing or unreadable file, or not a regular file: a folder, a
 * FIFO, a device or a socket is refused at once, without waiting for a writer), CORRUPT_DATA
 * (not a decodable image), LIMIT (more pixels than glcv_image_max_pixels), OUT_OF_MEMORY. On
 * error *out is zeroed and the logger says why. */
GLCV_API glcv_status glcv_image_load(const char *path, glcv_pixel_format format, const glcv_logger *logger,
                                     glcv_image *out);

/* Reads an image file's size and channel count (1..4) without decoding the pixels (any size up
 * to 2^30 pixels: the load limit does not apply).
 * Errors: INVALID_ARGUMENT, IO (missing or unreadable, or not a regular file, as for
 * glcv_image_load), CORRUPT_DATA (not an image). */
GLCV_API glcv_status glcv_image_info(const char *path, int *width, int *height, int *channels,
                                     const glcv_logger *logger);

/* Writes an image as PNG (any format; BGR(A) is written as RGB(A)). The file is written to a
 * temporary name beside `path` and renamed, so a failed write never leaves a partial file.
 * The same as glcv_image_save_png_level with GLCV_PNG_LEVEL_DEFAULT.
 * Errors: INVALID_ARGUMENT, IO, OUT_OF_MEMORY. */
GLCV_API glcv_status glcv_image_save_png(const char *path, const glcv_image *image, const glcv_logger *logger);

/* How hard glcv_image_save_png_level compresses. 0 (DEFAULT) is what glcv_image_save_png does. */
typedef enum glcv_png_level {
    /* Each row with the PNG filter that suits it best (the smallest sum of magnitudes, PNG
     * specification 12.8), deflated by libdeflate at its default effort (6). */
    GLCV_PNG_LEVEL_DEFAULT = 0,
    /* One filter for every row ("up": the difference to the row above) and libdeflate's least
     * effort (1). Measured on CDnet highway (2 cores): a 320x240 mask in 0.3 ms instead of 0.7 ms,
     * files 10-40 % larger; a 320x240 video frame in 2 ms instead of 8 ms, 12 % larger
     * (docs/PERFORMANCE.md). */
    GLCV_PNG_LEVEL_FAST = 1
} glcv_png_level;

/* glcv_image_save_png at a compression level. The level is an argument, not state: calls on
 * different threads with different levels do not affect each other. Any level gives the same
 * pixels.
 * Errors: INVALID_ARGUMENT (also an unknown level), IO, OUT_OF_MEMORY. */
GLCV_API glcv_status glcv_image_save_png_level(const char *path, const glcv_image *image, glcv_png_level level,
                                               const glcv_logger *logger);

/* Converts between any two pixel formats (gray → colour replicates; colour → gray uses
 * (77 R + 150 G + 29 B + 128) >> 8; alpha is 255 where the source has none).
 * `dst` must be allocated with the same width and height. Errors: INVALID_ARGUMENT,
 * SIZE_MISMATCH. */
GLCV_API glcv_status glcv_image_convert(const glcv_image *src, glcv_image *dst);

/* Checks that an image is usable: data != NULL, size >= 1, known format, stride 0 or at least
 * width * bytes per pixel, and its last row ending inside the address space ((height - 1) *
 * stride + row computed without overflow). Returns INVALID_ARGUMENT otherwise (NULL too); logs
 * nothing (it has no logger). The modules check every image they take with it. */
GLCV_API glcv_status glcv_image_check(const glcv_image *image);

/* The stride of an image, with 0 resolved to width * bytes per pixel. */
GLCV_API size_t glcv_image_stride(const glcv_image *image);

/* Where glcv_image_median gets frame `index` (0 <= index < count): the function fills *frame
 * (zeroed before each call) with an image of any format, whose pixels stay readable until the
 * source is called again or glcv_image_median returns. It may point into the caller's own memory:
 * nothing is copied. It returns GLCV_OK, or a status that stops the median and is returned. */
typedef glcv_status (*glcv_image_source)(void *user, int index, glcv_image *frame);

/* The most frames glcv_image_median takes (its histograms count in 16 bits). */
#define GLCV_IMAGE_MEDIAN_MAX_FRAMES 65535

/* The exact per-pixel, per-channel median of `count` frames, for a background free of the objects
 * that pass through some of them. Each byte of `out` becomes the lower median of that byte over
 * the frames: the value of rank (count - 1) / 2 in ascending order (the middle value for an odd
 * count, the smaller of the two middle values for an even one). Frames in another format than
 * `out` are converted to it row by row as glcv_image_convert does (so RGB8 out of BGR8 or RGBA8
 * frames, GRAY8 out of colour frames); frames in its format are read in place. `out` is the
 * caller's image (allocated, any format and stride); every frame must have its size.
 *
 * The median is found digit by digit: a 16-bin histogram of the high nibbles over all frames, then
 * one of the low nibbles among the values with the median's high nibble. So the frames are
 * fetched twice through `source`, in order 0..count-1 each time (it must give the same pixels
 * both times), and the memory is 34 bytes per byte of `out` whatever the count. `user` is passed
 * to `source`. The frames must not share memory with `out`.
 * Errors: INVALID_ARGUMENT (NULL source, an invalid `out` or one above 2^30 pixels, count outside
 * 1..GLCV_IMAGE_MEDIAN_MAX_FRAMES, a frame that fails glcv_image_check), SIZE_MISMATCH (a frame of
 * another size), OUT_OF_MEMORY, and whatever status the source returns (logged with the frame's
 * index). On error the content of `out` is undefined. */
GLCV_API glcv_status glcv_image_median(int count, glcv_image_source source, void *user, const glcv_logger *logger,
                                       glcv_image *out);

/* A list of file paths, made by glcv_image_list_folder, freed by glcv_file_list_free. */
typedef struct glcv_file_list {
    char **paths; /* `count` paths, each a NUL-terminated string */
    int count;
} glcv_file_list;

/* Lists the image files of a folder that glcv_image_load reads: the regular files (links
 * followed) whose names end in .png .jpg .jpeg .bmp .tga .ppm or .pgm, in any case, leaving out
 * hidden files (names that start with '.'). The paths are "<folder>/<name>" (no doubled '/'),
 * sorted by name in byte order (strcmp), so numbered frames come in their order. A folder
 * without image files gives count 0, not an error.
 * Errors: INVALID_ARGUMENT (NULL or empty folder, NULL out), IO (the folder does not exist, is
 * not a folder, or cannot be read), OUT_OF_MEMORY. On error *out is empty (paths NULL, count 0). */
GLCV_API glcv_status glcv_image_list_folder(const char *folder, const glcv_logger *logger, glcv_file_list *out);

/* Frees the paths of a list and empties it. NULL and empty lists are accepted. */
GLCV_API void glcv_file_list_free(glcv_file_list *list);

#ifdef __cplusplus
}
#endif
#endif
