/* The segmenter in C: the CPU engine and the oracle of the GPU passes.
 * Same decisions as shaders/segment_*.glsl, with the decision value in double precision. */
#include "segment_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

glcv_status glcv_segment_cpu_init(glcv_segment_cpu *cpu, int width, int height)
{
    memset(cpu, 0, sizeof *cpu);
    size_t n = (size_t)width * (size_t)height;
    cpu->width = width;
    cpu->height = height;
    cpu->background = calloc(n, 3);
    cpu->fore = calloc(n, sizeof(int32_t));
    cpu->back = calloc(n, sizeof(int32_t));
    cpu->cross = calloc(n, sizeof(int32_t));
    cpu->m_min[0] = calloc(n, 1);
    cpu->m_min[1] = calloc(n, 1);
    cpu->mask = calloc(n, 1);
    if (!cpu->background || !cpu->fore || !cpu->back || !cpu->cross || !cpu->m_min[0] || !cpu->m_min[1] ||
        !cpu->mask) {
        glcv_segment_cpu_free(cpu);
        return GLCV_ERROR_OUT_OF_MEMORY;
    }
    return GLCV_OK;
}

void glcv_segment_cpu_free(glcv_segment_cpu *cpu)
{
    free(cpu->background);
    free(cpu->background_f);
    free(cpu->learn_sum);
    free(cpu->fore);
    free(cpu->back);
    free(cpu->cross);
    free(cpu->m_min[0]);
    free(cpu->m_min[1]);
    free(cpu->mask);
    free(cpu->noise_level);
    memset(cpu, 0, sizeof *cpu);
}

void glcv_segment_cpu_set_background(glcv_segment_cpu *cpu, const uint8_t *rgb)
{
    size_t n = (size_t)cpu->width * (size_t)cpu->height;
    memcpy(cpu->background, rgb, n * 3);
    free(cpu->background_f);
    cpu->background_f = NULL;
    memset(cpu->mask, 0, n);
}

glcv_status glcv_segment_cpu_learn_begin(glcv_segment_cpu *cpu)
{
    size_t n = (size_t)cpu->width * (size_t)cpu->height;
    free(cpu->learn_sum);
    cpu->learn_sum = calloc(n * 3, sizeof(double));
    cpu->learn_count = 0;
    return cpu->learn_sum ? GLCV_OK : GLCV_ERROR_OUT_OF_MEMORY;
}

void glcv_segment_cpu_learn_add(glcv_segment_cpu *cpu, const uint8_t *rgb)
{
    size_t n = (size_t)cpu->width * (size_t)cpu->height * 3;
    for (size_t i = 0; i < n; i++)
        cpu->learn_sum[i] += rgb[i];
    cpu->learn_count++;
}

void glcv_segment_cpu_learn_cancel(glcv_segment_cpu *cpu)
{
    free(cpu->learn_sum);
    cpu->learn_sum = NULL;
    cpu->learn_count = 0;
}

void glcv_segment_cpu_learn_end(glcv_segment_cpu *cpu)
{
    size_t n = (size_t)cpu->width * (size_t)cpu->height * 3;
    for (size_t i = 0; i < n; i++) {
        double v = floor(cpu->learn_sum[i] / cpu->learn_count + 0.5);
        cpu->learn_sum[i] = v; /* reuse as scratch before the copy below */
    }
    uint8_t *bg = cpu->background;
    for (size_t i = 0; i < n; i++)
        bg[i] = (uint8_t)cpu->learn_sum[i];
    free(cpu->learn_sum);
    cpu->learn_sum = NULL;
    cpu->learn_count = 0;
    free(cpu->background_f);
    cpu->background_f = NULL;
    memset(cpu->mask, 0, (size_t)cpu->width * (size_t)cpu->height);
}

double glcv_segment_d2(int32_t fore, int32_t back, int32_t cross, double odc)
{
    /* D^2 = 2 det / (F + B + sqrt((F - B)^2 + 4 C^2)) with F = fore + Odc, B = back + Odc,
     * C = cross + Odc; det = fore back - cross^2 + Odc (fore + back - 2 cross) >= 0, a sum of two
     * non-negative terms (Cauchy-Schwarz, |f - b|^2): no cancellation, unlike eq. (12). */
    int64_t det0 = (int64_t)fore * back - (int64_t)cross * cross;
    int64_t dist = (int64_t)fore + back - 2 * (int64_t)cross;
    double det = (double)det0 + odc * (double)dist;
    double diff = (double)fore - (double)back;
    double c = (double)cross + odc;
    double den = (double)fore + (double)back + 2.0 * odc + sqrt(diff * diff + 4.0 * c * c);
    return den > 0.0 ? 2.0 * det / den : 0.0;
}

int glcv_segment_m_min(int32_t fore, int32_t back, int32_t cross, double ts, double odc, double b)
{
    return glcv_segment_rule(glcv_segment_d2(fore, back, cross, odc), ts, b);
}

int glcv_segment_rule(double d2, double ts, double b)
{
    /* changed <=> D^2 > Ts + B (12 - 2M) <=> M > x */
    double x = (ts + 12.0 * b - d2) / (2.0 * b);
    if (x < 0.0)
        return 0;
    if (x >= 12.0)
        return 13;
    return (int)floor(x) + 1;
}

void glcv_segment_cpu_thresholds(glcv_segment_cpu *cpu, const uint8_t *frame, const glcv_segment_values *v)
{
    const int w = cpu->width, h = cpu->height;
    const uint8_t *bg = cpu->background;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            int32_t ff = 0, bb = 0, fb = 0;
            for (int dy = -1; dy <= 1; dy++) {
                int yy = y + dy;
                if (yy < 0 || yy >= h)
                    continue;
                for (int dx = -1; dx <= 1; dx++) {
                    int xx = x + dx;
                    if (xx < 0 || xx >= w)
                        continue;
                    const uint8_t *f = frame + ((size_t)yy * w + xx) * 3;
                    const uint8_t *b = bg + ((size_t)yy * w + xx) * 3;
                    for (int c = 0; c < 3; c++) {
                        ff += f[c] * f[c];
                        bb += b[c] * b[c];
                        fb += f[c] * b[c];
                    }
                }
            }
            size_t i = (size_t)y * w + x;
            cpu->fore[i] = ff;
            cpu->back[i] = bb;
            cpu->cross[i] = fb;
            double d2 = glcv_segment_d2(ff, bb, fb, v->odc); /* divided by the pixel's noise factor */
            if (cpu->noise)
                d2 /= (double)cpu->noise[i];
            cpu->m_min[0][i] = (uint8_t)glcv_segment_rule(d2, v->ts, v->b[0]);
            cpu->m_min[1][i] = (uint8_t)glcv_segment_rule(d2, v->ts, v->b[1]);
        }
    }
}

static int mask_at(const glcv_segment_cpu *cpu, int x, int y)
{
    if (x < 0 || y < 0 || x >= cpu->width || y >= cpu->height)
        return 0;
    return cpu->mask[(size_t)y * cpu->width + x];
}

void glcv_segment_cpu_iterate(glcv_segment_cpu *cpu, const int order[4], int set)
{
    const uint8_t *m_min = cpu->m_min[set];
    for (int k = 0; k < 4; k++) {
        int sx = order[k] & 1, sy = order[k] >> 1;
        /* Pixels of one subset are at chessboard distance >= 2: updating them in place is the
         * same as updating them all at once. */
        for (int y = sy; y < cpu->height; y += 2) {
            for (int x = sx; x < cpu->width; x += 2) {
                int m = 2 * (mask_at(cpu, x - 1, y) + mask_at(cpu, x + 1, y) + mask_at(cpu, x, y - 1) +
                             mask_at(cpu, x, y + 1)) +
                        mask_at(cpu, x - 1, y - 1) + mask_at(cpu, x + 1, y - 1) + mask_at(cpu, x - 1, y + 1) +
                        mask_at(cpu, x + 1, y + 1);
                size_t i = (size_t)y * cpu->width + x;
                cpu->mask[i] = m >= m_min[i];
            }
        }
    }
}

glcv_status glcv_segment_cpu_adapt(glcv_segment_cpu *cpu, const uint8_t *frame, float rate)
{
    size_t n = (size_t)cpu->width * (size_t)cpu->height;
    if (!cpu->background_f) {
        cpu->background_f = malloc(n * 3 * sizeof(float));
        if (!cpu->background_f)
            return GLCV_ERROR_OUT_OF_MEMORY;
        for (size_t i = 0; i < n * 3; i++)
            cpu->background_f[i] = cpu->background[i];
    }
    for (size_t p = 0; p < n; p++) {
        if (cpu->mask[p])
            continue;
        for (int c = 0; c < 3; c++) {
            size_t i = p * 3 + c;
            float b = cpu->background_f[i];
            b = b + rate * ((float)frame[i] - b);
            cpu->background_f[i] = b;
            cpu->background[i] = (uint8_t)floorf(b + 0.5f);
        }
    }
    return GLCV_OK;
}

void glcv_segment_cpu_noise_update(glcv_segment_cpu *cpu, double ts, double odc)
{
    if (!cpu->noise_level || !cpu->noise)
        return;
    const float(*table)[4] = cpu->noise_table;
    for (int y = 0; y < cpu->height; y++) {
        for (int x = 0; x < cpu->width; x++) {
            size_t i = (size_t)y * cpu->width + x;
            int level = cpu->noise_level[i], near = 0;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++)
                    near |= mask_at(cpu, x + dx, y + dy);
            if (!near) {
                double d2 = glcv_segment_d2(cpu->fore[i], cpu->back[i], cpu->cross[i], odc);
                double t = (double)table[level][0];
                if (d2 > t && d2 <= ts * (double)table[level][1] && level < GLCV_SEGMENT_NOISE_LEVELS - 1)
                    level++;
                else if (d2 < t && level > 0)
                    level--;
            }
            cpu->noise_level[i] = (uint8_t)level;
            cpu->noise[i] = table[level][1];
        }
    }
}
