/* The image service, private: what the public folder listing does, with the caller's set of
 * file name endings (media's folders take every format FFmpeg decodes, more than stb_image). */
#ifndef GLCV_IMAGE_INTERNAL_H
#define GLCV_IMAGE_INTERNAL_H

#include <glcv/image.h>

/* glcv_image_list_folder with `extensions` (count of them, each with its dot, matched in any
 * case) instead of the image endings; messages start with "<who>: ". */
glcv_status glcv_list_folder(const char *folder, const char *const *extensions, size_t count, const char *who,
                             const glcv_logger *logger, glcv_file_list *out);

#endif
