/* Synthetic scenes for the tracker's tests: a grey (zero-saturation) textured background, which
 * CAMSHIFT's limits exclude, and filled coloured ellipses whose moments are known. */
#ifndef GLCV_TEST_TRACK_SCENE_H
#define GLCV_TEST_TRACK_SCENE_H

#include <glcv/glcv.h>

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct scene_blob {
    double cx, cy;   /* centre (pixel centres at integer + 0.5 are inside when within) */
    double rx, ry;   /* half axes; rx = ry = 0 means none */
    double angle;    /* degrees, of the rx axis from the x axis */
    int rect;        /* nonzero: an axis-aligned rectangle cx - rx .. cx + rx (angle ignored) */
    uint8_t r, g, b;
} scene_blob;

/* Is pixel (x, y) (its centre at x + 0.5, y + 0.5) inside the blob? */
static inline int scene_inside(const scene_blob *s, int x, int y)
{
    if (s->rx <= 0 || s->ry <= 0)
        return 0;
    double px = x + 0.5 - s->cx, py = y + 0.5 - s->cy;
    if (s->rect)
        return fabs(px) < s->rx && fabs(py) < s->ry;
    double a = s->angle * 3.14159265358979323846 / 180.0;
    double u = px * cos(a) + py * sin(a), v = -px * sin(a) + py * cos(a);
    return (u * u) / (s->rx * s->rx) + (v * v) / (s->ry * s->ry) <= 1.0;
}

/* Fills an RGB8 image: grey texture (0 saturation) with a little grey noise, then the blobs in
 * order. `seed` varies the texture. */
static inline void scene_draw(glcv_image *img, const scene_blob *blobs, int n, uint32_t seed)
{
    size_t stride = img->stride ? img->stride : (size_t)img->width * 3;
    for (int y = 0; y < img->height; y++) {
        uint8_t *row = img->data + (size_t)y * stride;
        for (int x = 0; x < img->width; x++) {
            uint32_t h = (uint32_t)x * 73856093u ^ (uint32_t)y * 19349663u ^ seed * 83492791u;
            h ^= h >> 13;
            h *= 0x5bd1e995u;
            h ^= h >> 15;
            uint8_t *px = row + (size_t)x * 3;
            px[0] = px[1] = px[2] = (uint8_t)(90 + ((x / 8 + y / 8) % 2) * 40 + (h & 15));
        }
    }
    for (int k = 0; k < n; k++) {
        const scene_blob *b = &blobs[k];
        if (b->rx <= 0 || b->ry <= 0)
            continue;
        double reach = b->rx > b->ry ? b->rx : b->ry;
        int x0 = (int)floor(b->cx - reach) - 1, x1 = (int)ceil(b->cx + reach) + 1;
        int y0 = (int)floor(b->cy - reach) - 1, y1 = (int)ceil(b->cy + reach) + 1;
        x0 = x0 < 0 ? 0 : x0;
        y0 = y0 < 0 ? 0 : y0;
        x1 = x1 > img->width ? img->width : x1;
        y1 = y1 > img->height ? img->height : y1;
        for (int y = y0; y < y1; y++)
            for (int x = x0; x < x1; x++)
                if (scene_inside(b, x, y)) {
                    uint8_t *px = img->data + (size_t)y * stride + (size_t)x * 3;
                    px[0] = b->r;
                    px[1] = b->g;
                    px[2] = b->b;
                }
    }
}

#endif
