/* The tracker's CPU implementation (see track_cpu.h). */
#include "track_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

void glcv_track_cpu_tables(glcv_tm_tables *t, int hue_bins, int sat_bins)
{
    /* cv::cvtColor RGB2HSV_b: saturate_cast<int>((255 << 12) / (1. * i)) and
     * saturate_cast<int>((180 << 12) / (6. * i)), saturate_cast rounding half to even. */
    t->sdiv[0] = t->hdiv[0] = 0;
    for (int i = 1; i < 256; i++) {
        t->sdiv[i] = (int32_t)lrint((double)(255 << GLCV_TM_HSV_SHIFT) / (1.0 * i));
        t->hdiv[i] = (int32_t)lrint((double)(180 << GLCV_TM_HSV_SHIFT) / (6.0 * i));
    }
    /* cv::calcHist's uniform look-up tables: bin = cvFloor(j * a) with a = bins / range,
     * clamped, for j inside [low, high). Hue range [0, 180), saturation [0, 256). */
    double a_h = (double)hue_bins / 180.0;
    double a_s = (double)(sat_bins > 1 ? sat_bins : 1) / 256.0;
    for (int j = 0; j < 256; j++) {
        int hb = (int)floor((double)j * a_h);
        hb = hb < 0 ? 0 : hb > hue_bins - 1 ? hue_bins - 1 : hb;
        t->hue_bin[j] = (int16_t)(j < 180 ? hb : -1);
        int sb = (int)floor((double)j * a_s);
        int s_max = (sat_bins > 1 ? sat_bins : 1) - 1;
        sb = sb < 0 ? 0 : sb > s_max ? s_max : sb;
        t->sat_bin[j] = (int16_t)sb;
    }
}

void glcv_track_cpu_model(const float *value, int nbins, uint8_t *lut, double *sqrt_model, double *model_sum)
{
    double sum = 0.0;
    for (int b = 0; b < nbins; b++) {
        /* cv::calcBackProject: saturate_cast<uchar>(float), i.e. cvRound, saturated */
        long r = lrintf(value[b]);
        lut[b] = (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
        sqrt_model[b] = sqrt((double)value[b]);
        sum += (double)value[b];
    }
    lut[nbins] = 0;
    *model_sum = sum;
}

void glcv_track_cpu_normalize(const uint32_t *counts, int nbins, float *value)
{
    /* cv::normalize(hist, hist, 0, 255, NORM_MINMAX) on a CV_32F histogram:
     * scale = (float)(255 / (max - min)), shift = (float)0 - (float)(min * scale). */
    double lo = DBL_MAX, hi = -DBL_MAX;
    for (int b = 0; b < nbins; b++) {
        double v = (double)(float)counts[b];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    double scale = 255.0 * (hi - lo > DBL_EPSILON ? 1.0 / (hi - lo) : 0.0);
    float fscale = (float)scale;
    float fshift = (float)0.0 - (float)(lo * (double)fscale);
    for (int b = 0; b < nbins; b++) {
        float v = (float)counts[b] * fscale + fshift;
        value[b] = v < 0.0f ? 0.0f : v > 255.0f ? 255.0f : v;
    }
}

void glcv_track_cpu_bins(const glcv_tm_tables *t, const glcv_tm_config *c, const glcv_image *frame,
                         const uint8_t *mask, size_t mask_stride, uint16_t *bins)
{
    int bpp = glcv_pixel_format_size(frame->format);
    size_t stride = frame->stride ? frame->stride : (size_t)frame->width * (size_t)bpp;
    int bgr = frame->format == GLCV_PIXEL_BGR8 || frame->format == GLCV_PIXEL_BGRA8;
    for (int y = 0; y < c->height; y++) {
        const uint8_t *row = frame->data + (size_t)y * stride;
        const uint8_t *mrow = mask ? mask + (size_t)y * mask_stride : NULL;
        uint16_t *out = bins + (size_t)y * (size_t)c->width;
        for (int x = 0; x < c->width; x++) {
            const uint8_t *px = row + (size_t)x * (size_t)bpp;
            int r = bgr ? px[2] : px[0], g = px[1], b = bgr ? px[0] : px[2];
            out[x] = (uint16_t)glcv_tm_bin(t, c, r, g, b, mrow ? mrow[x] != 0 : 1);
        }
    }
}

void glcv_track_cpu_bins_rgb(const glcv_tm_tables *t, const glcv_tm_config *c, const uint8_t *rgb,
                             const uint8_t *mask, uint16_t *bins)
{
    size_t n = (size_t)c->width * (size_t)c->height;
    for (size_t i = 0; i < n; i++)
        bins[i] = (uint16_t)glcv_tm_bin(t, c, rgb[3 * i], rgb[3 * i + 1], rgb[3 * i + 2], mask ? mask[i] != 0 : 1);
}

void glcv_track_cpu_moments(const uint16_t *bins, int width, const uint8_t *lut, glcv_tm_rect r,
                            uint64_t m[GLCV_TM_MOMENTS])
{
    for (int i = 0; i < GLCV_TM_MOMENTS; i++)
        m[i] = 0;
    for (int y = 0; y < r.h; y++) {
        const uint16_t *row = bins + (size_t)(r.y + y) * (size_t)width + r.x;
        uint64_t s0 = 0, s1 = 0, s2 = 0;
        for (int x = 0; x < r.w; x++) {
            uint64_t p = lut[row[x]];
            uint64_t px = p * (uint64_t)x;
            s0 += p;
            s1 += px;
            s2 += px * (uint64_t)x;
        }
        glcv_tm_add_row(m, (uint64_t)y, s0, s1, s2);
    }
}

void glcv_track_cpu_counts(const uint16_t *bins, int width, int nbins, glcv_tm_rect r, uint32_t *counts)
{
    memset(counts, 0, (size_t)nbins * sizeof *counts);
    for (int y = 0; y < r.h; y++) {
        const uint16_t *row = bins + (size_t)(r.y + y) * (size_t)width + r.x;
        for (int x = 0; x < r.w; x++)
            if (row[x] < nbins)
                counts[row[x]]++;
    }
}

double glcv_track_cpu_distance(const glcv_track_model *model, const uint32_t *counts, int nbins)
{
    double lane[GLCV_TM_DIST_LANES];
    uint64_t total = 0;
    for (int t = 0; t < GLCV_TM_DIST_LANES; t++) {
        double acc = 0.0;
        for (int b = t; b < nbins; b += GLCV_TM_DIST_LANES) {
            acc += model->sqrt_model[b] * sqrt((double)counts[b]);
            total += counts[b];
        }
        lane[t] = acc;
    }
    for (int s = GLCV_TM_DIST_LANES / 2; s > 0; s >>= 1)
        for (int t = 0; t < s; t++)
            lane[t] += lane[t + s];
    return glcv_tm_distance(lane[0], model->model_sum, (double)total);
}

void glcv_track_cpu_object(const uint16_t *bins, const glcv_tm_config *c, const glcv_track_model *model,
                           glcv_tm_object *object, glcv_tm_result *result, uint32_t *counts)
{
    memset(result, 0, sizeof *result);
    uint64_t m[GLCV_TM_MOMENTS];
    glcv_tm_meanshift ms;
    glcv_tm_meanshift_begin(&ms, object->window, c);
    do {
        glcv_track_cpu_moments(bins, c->width, model->lut, ms.cur, m);
    } while (glcv_tm_meanshift_step(&ms, m, c));
    result->iterations = ms.iterations;
    result->reasons = ms.capped ? GLCV_TM_LOST_ITERATIONS : 0;

    if (c->window_mode == GLCV_TM_WINDOW_PAPER) {
        /* the box is measured in the last window summed: `m` holds its moments unless the
         * step moved it, so sum the final window once more */
        glcv_track_cpu_moments(bins, c->width, model->lut, ms.cur, m);
        result->measured = ms.cur;
        result->window = ms.cur;
    } else if (c->window_mode == GLCV_TM_WINDOW_ADAPTIVE) {
        glcv_tm_rect grown = glcv_tm_adaptive_grow(ms.cur, c);
        glcv_track_cpu_moments(bins, c->width, model->lut, grown, m);
        result->measured = grown;
        result->window = glcv_tm_adaptive_box(m, grown, object, c);
    } else {
        glcv_tm_rect grown = glcv_tm_camshift_grow(ms.cur, c);
        glcv_tm_box box;
        glcv_track_cpu_moments(bins, c->width, model->lut, grown, m);
        result->measured = grown;
        result->window = glcv_tm_camshift_size(m, grown, c, &box);
    }
    memcpy(result->m, m, sizeof m);
    result->distance = -1.0;
    if (c->measure_distance) {
        glcv_tm_rect w = glcv_tm_intersect(result->window, glcv_tm_frame_rect(c));
        glcv_track_cpu_counts(bins, c->width, c->nbins, w, counts);
        result->distance = glcv_track_cpu_distance(model, counts, c->nbins);
    }
    glcv_tm_finish(object, result, c);
}
