/* Background subtraction on the CPU: the rule of bgsub_internal.h over every pixel of every
 * stream. The CPU engine and the tests' oracle. */
#include "bgsub_internal.h"

#include <stdlib.h>
#include <string.h>

glcv_status glcv_bgsub_cpu_init(glcv_bgsub_cpu *cpu, int width, int height, int streams, int lanes)
{
    memset(cpu, 0, sizeof *cpu);
    cpu->width = width;
    cpu->height = height;
    cpu->streams = streams;
    cpu->lanes = lanes;
    size_t px = (size_t)width * (size_t)height * (size_t)streams;
    size_t values = px * (size_t)lanes;
    for (int i = 0; i < 3; i++) {
        cpu->ring[i] = calloc(values, 1);
        cpu->masks[i] = calloc(px, 1);
    }
    cpu->bg = calloc(values, sizeof *cpu->bg);
    cpu->th = calloc(values, sizeof *cpu->th);
    cpu->count = calloc(px, 1);
    cpu->raw = calloc(px, 1);
    if (!cpu->ring[0] || !cpu->ring[1] || !cpu->ring[2] || !cpu->masks[0] || !cpu->masks[1] || !cpu->masks[2] ||
        !cpu->bg || !cpu->th || !cpu->count || !cpu->raw) {
        glcv_bgsub_cpu_free(cpu);
        return GLCV_ERROR_OUT_OF_MEMORY;
    }
    return GLCV_OK;
}

void glcv_bgsub_cpu_free(glcv_bgsub_cpu *cpu)
{
    for (int i = 0; i < 3; i++) {
        free(cpu->ring[i]);
        free(cpu->masks[i]);
    }
    free(cpu->bg);
    free(cpu->th);
    free(cpu->count);
    free(cpu->raw);
    memset(cpu, 0, sizeof *cpu);
}

void glcv_bgsub_cpu_run(glcv_bgsub_cpu *cpu, const glcv_bgsub_rule *rule, int cur, int p1, int p2, int mask,
                        int history, int init)
{
    size_t n = (size_t)cpu->width * (size_t)cpu->height * (size_t)cpu->streams;
    int lanes = cpu->lanes;
    const uint8_t *c = cpu->ring[cur], *a = cpu->ring[p1], *b = cpu->ring[p2];
    for (size_t i = 0; i < n; i++) {
        size_t o = i * (size_t)lanes;
        cpu->raw[i] = (uint8_t)glcv_bgsub_pixel(rule, lanes, c + o, a + o, b + o, cpu->bg + o, cpu->th + o,
                                                cpu->count + i, history, init);
    }
    /* The vote: raw foreground among the 3 x 3 pixels (clamped to the edge), per stream. */
    uint8_t *m = cpu->masks[mask];
    int w = cpu->width, h = cpu->height;
    for (int s = 0; s < cpu->streams; s++) {
        const uint8_t *r = cpu->raw + (size_t)s * (size_t)w * (size_t)h;
        uint8_t *out = m + (size_t)s * (size_t)w * (size_t)h;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int fg;
                if (rule->vote) {
                    int votes = 0;
                    for (int dy = -1; dy <= 1; dy++)
                        for (int dx = -1; dx <= 1; dx++) {
                            int yy = y + dy < 0 ? 0 : y + dy >= h ? h - 1 : y + dy;
                            int xx = x + dx < 0 ? 0 : x + dx >= w ? w - 1 : x + dx;
                            votes += r[(size_t)yy * (size_t)w + (size_t)xx] & GLCV_BGSUB_RAW;
                        }
                    fg = votes >= rule->vote;
                } else {
                    fg = r[(size_t)y * (size_t)w + (size_t)x] & GLCV_BGSUB_RAW;
                }
                out[(size_t)y * (size_t)w + (size_t)x] = fg ? 255 : 0;
            }
    }
}

void glcv_bgsub_to_lanes(const glcv_image *f, int lanes, uint8_t *out)
{
    int bpp = glcv_pixel_format_size(f->format);
    size_t stride = f->stride ? f->stride : (size_t)f->width * (size_t)bpp;
    int bgr = f->format == GLCV_PIXEL_BGR8 || f->format == GLCV_PIXEL_BGRA8;
    for (int y = 0; y < f->height; y++) {
        const uint8_t *row = f->data + stride * (size_t)y;
        uint8_t *o = out + (size_t)y * (size_t)f->width * (size_t)lanes;
        for (int x = 0; x < f->width; x++, row += bpp, o += lanes) {
            unsigned r = row[0], g = bpp == 1 ? row[0] : row[1], bl = bpp == 1 ? row[0] : row[2];
            if (bgr) {
                unsigned t = r;
                r = bl;
                bl = t;
            }
            if (lanes == 1) {
                o[0] = bpp == 1 ? row[0] : (uint8_t)((77u * r + 150u * g + 29u * bl + 128u) >> 8);
            } else {
                o[0] = (uint8_t)r;
                o[1] = (uint8_t)g;
                o[2] = (uint8_t)bl;
            }
        }
    }
}
