/* Scoring masks against ground truth (glcv/segment.h): the pixel counts and the CDnet 2014
 * metrics that glcv's evaluations report. Host code only. */
#include "core_internal.h"

#include <glcv/image.h>
#include <glcv/segment.h>

#include <string.h>

/* Where a truth value falls: 1 foreground, 0 background, -1 not scored, -2 not a label. */
static int truth_class(uint8_t value, glcv_truth_labels labels)
{
    if (labels != GLCV_TRUTH_CDNET)
        return value >= 128;
    switch (value) {
    case 255: return 1;
    case 0:
    case 50: return 0;
    case 85:
    case 170: return -1;
    default: return -2;
    }
}

static int gray_image_ok(const glcv_image *image)
{
    return glcv_image_check(image) == GLCV_OK && image->format == GLCV_PIXEL_GRAY8;
}

glcv_status glcv_segment_score_add(glcv_segment_score *score, const glcv_image *mask, const glcv_image *truth,
                                   const glcv_image *roi, glcv_truth_labels labels)
{
    if (!score || !gray_image_ok(mask) || !gray_image_ok(truth) || (roi && !gray_image_ok(roi)))
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (labels != GLCV_TRUTH_DEFAULT && labels != GLCV_TRUTH_BINARY && labels != GLCV_TRUTH_CDNET)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (truth->width != mask->width || truth->height != mask->height ||
        (roi && (roi->width != mask->width || roi->height != mask->height)))
        return GLCV_ERROR_SIZE_MISMATCH;
    /* counts[truth class + 2][mask foreground]: -2 not a label, -1 not scored, 0, 1. */
    uint64_t counts[4][2] = {{0}};
    size_t ms = glcv_image_stride(mask), ts = glcv_image_stride(truth), rs = roi ? glcv_image_stride(roi) : 0;
    for (int y = 0; y < mask->height; y++) {
        const uint8_t *m = mask->data + (size_t)y * ms;
        const uint8_t *t = truth->data + (size_t)y * ts;
        const uint8_t *r = roi ? roi->data + (size_t)y * rs : NULL;
        for (int x = 0; x < mask->width; x++)
            if (!r || r[x])
                counts[truth_class(t[x], labels) + 2][m[x] >= 128]++;
    }
    score->tp += counts[3][1];
    score->fn += counts[3][0];
    score->fp += counts[2][1];
    score->tn += counts[2][0];
    score->unknown += counts[0][0] + counts[0][1];
    return GLCV_OK;
}

static double ratio_or(uint64_t num, uint64_t den, double empty)
{
    return den ? (double)num / (double)den : empty;
}

glcv_status glcv_segment_score_metrics(const glcv_segment_score *score, glcv_segment_metrics *out)
{
    if (!score || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    const glcv_segment_score *s = score;
    glcv_segment_metrics m;
    memset(&m, 0, sizeof m);
    m.recall = ratio_or(s->tp, s->tp + s->fn, 1.0);
    m.precision = ratio_or(s->tp, s->tp + s->fp, 1.0);
    m.f = m.precision + m.recall > 0.0 ? 2.0 * m.precision * m.recall / (m.precision + m.recall) : 0.0;
    m.specificity = ratio_or(s->tn, s->tn + s->fp, 1.0);
    m.fpr = ratio_or(s->fp, s->fp + s->tn, 0.0);
    m.fnr = ratio_or(s->fn, s->tp + s->fn, 0.0);
    m.pwc = 100.0 * ratio_or(s->fn + s->fp, s->tp + s->fp + s->fn + s->tn, 0.0);
    *out = m;
    return GLCV_OK;
}
