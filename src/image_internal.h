/* The image service, private: what the public folder listing does, with the caller's set of
 * file name endings (media's folders take every format FFmpeg decodes, more than stb_image). */
#ifndef GLCV_IMAGE_INTERNAL_H
#define GLCV_IMAGE_INTERNAL_H

#include <glcv/image.h>

#include <stdio.h>

/* glcv_image_list_folder with `extensions` (count of them, each with its dot, matched in any
 * case) instead of the image endings; messages start with "<who>: ". */
glcv_status glcv_list_folder(const char *folder, const char *const *extensions, size_t count, const char *who,
                             const glcv_logger *logger, glcv_file_list *out);

/* glcv_image_load from an open stream at its start (`path` names it in messages); the stream is
 * left open. */
glcv_status glcv_image_load_stream(FILE *f, const char *path, glcv_pixel_format format, const glcv_logger *logger,
                                   glcv_image *out);

#endif
