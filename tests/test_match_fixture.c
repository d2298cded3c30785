/* Writes the inputs of test_match_cli.sh from OpenCV's sample images:
 *   face.png        a crop of messi5.jpg (the template-matching tutorial's template)
 *   face_neg.png    its negative, face_noisy.png a noisy copy, face_small.png a smaller image
 *   scene.png       messi5.jpg with tmpl.png drawn into it through mask.png (mask_tmpl.cpp's
 *                   template and mask; its own scene image is not among the samples)
 * and prints the positions to find: "face X Y" and "scene X Y".
 * Usage: test_match_fixture DATA_DIR OUT_DIR. Exits 77 when the samples are missing. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

enum { FACE_X = 208, FACE_Y = 62, FACE_W = 56, FACE_H = 64, SCENE_X = 371, SCENE_Y = 151 };

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = malloc(n);
    snprintf(s, n, "%s/%s", dir, name);
    return s;
}

static int save(const char *dir, const char *name, const glcv_image *img)
{
    char *path = join(dir, name);
    glcv_status st = glcv_image_save_png(path, img, NULL);
    if (st != GLCV_OK)
        fprintf(stderr, "cannot write %s: %s\n", path, glcv_status_string(st));
    free(path);
    return st == GLCV_OK;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_match_fixture DATA_DIR OUT_DIR\n");
        return 2;
    }
    glcv_image messi = {0}, tmpl = {0}, mask = {0};
    char *p1 = join(argv[1], "messi5.jpg"), *p2 = join(argv[1], "tmpl.png"), *p3 = join(argv[1], "mask.png");
    int ok = glcv_image_load(p1, GLCV_PIXEL_RGB8, NULL, &messi) == GLCV_OK &&
             glcv_image_load(p2, GLCV_PIXEL_RGB8, NULL, &tmpl) == GLCV_OK &&
             glcv_image_load(p3, GLCV_PIXEL_GRAY8, NULL, &mask) == GLCV_OK;
    free(p1);
    free(p2);
    free(p3);
    if (!ok) {
        printf("SKIP: OpenCV's sample images (messi5.jpg, tmpl.png, mask.png) are not in %s\n", argv[1]);
        return TEST_SKIP;
    }
    glcv_image face = {0}, neg = {0}, noisy = {0}, small = {0};
    glcv_image_alloc(FACE_W, FACE_H, GLCV_PIXEL_RGB8, &face);
    glcv_image_alloc(FACE_W, FACE_H, GLCV_PIXEL_RGB8, &neg);
    glcv_image_alloc(FACE_W, FACE_H, GLCV_PIXEL_RGB8, &noisy);
    glcv_image_alloc(FACE_W - 1, FACE_H, GLCV_PIXEL_RGB8, &small);
    uint64_t rng = 1;
    for (int y = 0; y < FACE_H; y++)
        for (int x = 0; x < FACE_W * 3; x++) {
            uint8_t v = messi.data[(size_t)(FACE_Y + y) * messi.stride + (size_t)FACE_X * 3 + (size_t)x];
            face.data[(size_t)y * face.stride + (size_t)x] = v;
            neg.data[(size_t)y * neg.stride + (size_t)x] = (uint8_t)(255 - v);
            int n = v + (int)(test_rand(&rng) % 41) - 20;
            noisy.data[(size_t)y * noisy.stride + (size_t)x] = (uint8_t)(n < 0 ? 0 : n > 255 ? 255 : n);
        }
    /* the template drawn into the scene where the mask is nonzero, with the mask as its alpha */
    glcv_image scene = {0};
    glcv_image_alloc(messi.width, messi.height, GLCV_PIXEL_RGB8, &scene);
    memcpy(scene.data, messi.data, messi.stride * (size_t)messi.height);
    for (int y = 0; y < tmpl.height; y++)
        for (int x = 0; x < tmpl.width; x++) {
            unsigned a = mask.data[(size_t)y * mask.stride + (size_t)x];
            for (int c = 0; c < 3; c++) {
                uint8_t *d = &scene.data[(size_t)(SCENE_Y + y) * scene.stride + (size_t)(SCENE_X + x) * 3 + (size_t)c];
                unsigned t = tmpl.data[(size_t)y * tmpl.stride + (size_t)x * 3 + (size_t)c];
                *d = (uint8_t)((a * t + (255 - a) * *d + 127) / 255);
            }
        }
    ok = save(argv[2], "face.png", &face) && save(argv[2], "face_neg.png", &neg) &&
         save(argv[2], "face_noisy.png", &noisy) && save(argv[2], "face_small.png", &small) &&
         save(argv[2], "scene.png", &scene);
    printf("face %d %d\nscene %d %d\n", FACE_X, FACE_Y, SCENE_X, SCENE_Y);
    glcv_image_free(&messi);
    glcv_image_free(&tmpl);
    glcv_image_free(&mask);
    glcv_image_free(&face);
    glcv_image_free(&neg);
    glcv_image_free(&noisy);
    glcv_image_free(&small);
    glcv_image_free(&scene);
    return ok ? 0 : 1;
}
