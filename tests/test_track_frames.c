/* Writes frames for the 'glcv track' command's test: OUTDIR/frame_NNNN.png, N frames of 200x150
 * with two blobs on a grey background: blob 0 (orange disc) at (40 + 3f, 50 + 1.5f), blob 1
 * (blue square, 16 x 16) at (150 - 2f, 100 - f). usage: test_track_frames OUTDIR N [FIRST LAST]:
 * with FIRST and LAST, blob 1 is hidden in frames FIRST..LAST. */
#include "test_track_scene.h"

#include <glcv/glcv.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 5) {
        fprintf(stderr, "usage: test_track_frames OUTDIR N [FIRST LAST]\n");
        return 2;
    }
    int n = atoi(argv[2]), hide0 = argc == 5 ? atoi(argv[3]) : -1, hide1 = argc == 5 ? atoi(argv[4]) : -1;
    glcv_image img;
    if (n < 1 || glcv_image_alloc(200, 150, GLCV_PIXEL_RGB8, &img) != GLCV_OK)
        return 1;
    for (int f = 0; f < n; f++) {
        scene_blob blobs[2] = {{40 + 3.0 * f, 50 + 1.5 * f, 11, 11, 0, 0, 250, 140, 30},
                               {150 - 2.0 * f, 125 - 0.5 * f, 8, 8, 0, 1, 40, 60, 230}};
        scene_draw(&img, blobs, f >= hide0 && f <= hide1 ? 1 : 2, (uint32_t)f);
        char path[4096];
        snprintf(path, sizeof path, "%s/frame_%04d.png", argv[1], f);
        if (glcv_image_save_png(path, &img, NULL) != GLCV_OK)
            return 1;
    }
    glcv_image_free(&img);
    return 0;
}
