/* Scoring masks against ground truth (glcv_segment_score_add, glcv_segment_score_metrics): the
 * counts against a per-pixel loop on random masks, truths (binary and CDnet labels), regions and
 * strides; the metrics on known counts, including the ratios with nothing to count; the errors.
 * No GL needed. */
#include "testutil.h"

#include <math.h>
#include <string.h>

/* The counts by the definitions, one pixel at a time. */
static glcv_segment_score brute_score(const glcv_image *mask, const glcv_image *truth, const glcv_image *roi,
                                      int cdnet)
{
    glcv_segment_score s;
    memset(&s, 0, sizeof s);
    for (int y = 0; y < mask->height; y++)
        for (int x = 0; x < mask->width; x++) {
            if (roi && roi->data[(size_t)y * glcv_image_stride(roi) + (size_t)x] == 0)
                continue;
            int fg = mask->data[(size_t)y * glcv_image_stride(mask) + (size_t)x] >= 128;
            int t = truth->data[(size_t)y * glcv_image_stride(truth) + (size_t)x];
            int object, scored = 1;
            if (!cdnet) {
                object = t >= 128;
            } else {
                object = t == 255;
                scored = t == 255 || t == 0 || t == 50;
                if (!scored && t != 85 && t != 170)
                    s.unknown++;
            }
            if (!scored)
                continue;
            s.tp += (uint64_t)(fg && object);
            s.fp += (uint64_t)(fg && !object);
            s.fn += (uint64_t)(!fg && object);
            s.tn += (uint64_t)(!fg && !object);
        }
    return s;
}

static void fill(glcv_image *img, const uint8_t *values, size_t n, uint64_t *rng)
{
    for (int y = 0; y < img->height; y++)
        for (int x = 0; x < img->width; x++)
            img->data[(size_t)y * glcv_image_stride(img) + (size_t)x] = values[test_rand(rng) % n];
}

static void check_same_score(const glcv_segment_score *got, const glcv_segment_score *want, const char *what)
{
    CHECK(got->tp == want->tp && got->fp == want->fp && got->fn == want->fn && got->tn == want->tn &&
              got->unknown == want->unknown,
          "%s: tp %llu fp %llu fn %llu tn %llu unknown %llu, expected %llu %llu %llu %llu %llu", what,
          (unsigned long long)got->tp, (unsigned long long)got->fp, (unsigned long long)got->fn,
          (unsigned long long)got->tn, (unsigned long long)got->unknown, (unsigned long long)want->tp,
          (unsigned long long)want->fp, (unsigned long long)want->fn, (unsigned long long)want->tn,
          (unsigned long long)want->unknown);
}

static void test_counts(void)
{
    /* Values on both sides of 128 for masks and binary truths; every CDnet label and some values
     * that are none for CDnet truths. */
    static const uint8_t mask_values[] = {0, 127, 128, 255};
    static const uint8_t binary_values[] = {0, 1, 127, 128, 200, 255};
    static const uint8_t cdnet_values[] = {0, 50, 85, 170, 255, 255, 0, 7, 128};
    static const uint8_t roi_values[] = {0, 1, 255, 255};
    uint64_t rng = 0x5C0FE;
    const int w = 37, h = 23;
    for (int round = 0; round < 6; round++) {
        int cdnet = round % 2, with_roi = round >= 2;
        size_t pad = (size_t)round; /* strides of w + 0..5 */
        glcv_image mask = test_image_make(w, h, GLCV_PIXEL_GRAY8, (size_t)w + pad);
        glcv_image truth = test_image_make(w, h, GLCV_PIXEL_GRAY8, round >= 4 ? (size_t)w + 3 : 0);
        glcv_image roi = test_image_make(w, h, GLCV_PIXEL_GRAY8, round == 3 ? (size_t)w + 1 : 0);
        fill(&mask, mask_values, sizeof mask_values, &rng);
        if (cdnet)
            fill(&truth, cdnet_values, sizeof cdnet_values, &rng);
        else
            fill(&truth, binary_values, sizeof binary_values, &rng);
        fill(&roi, roi_values, sizeof roi_values, &rng);
        glcv_truth_labels labels = cdnet ? GLCV_TRUTH_CDNET : round == 0 ? GLCV_TRUTH_DEFAULT : GLCV_TRUTH_BINARY;
        /* Two frames summed: the same one twice gives twice the counts. */
        glcv_segment_score got = {0};
        CHECK_OK(glcv_segment_score_add(&got, &mask, &truth, with_roi ? &roi : NULL, labels));
        CHECK_OK(glcv_segment_score_add(&got, &mask, &truth, with_roi ? &roi : NULL, labels));
        glcv_segment_score one = brute_score(&mask, &truth, with_roi ? &roi : NULL, cdnet);
        glcv_segment_score want = {2 * one.tp, 2 * one.fp, 2 * one.fn, 2 * one.tn, 2 * one.unknown};
        char what[96];
        snprintf(what, sizeof what, "round %d (%s truth%s)", round, cdnet ? "CDnet" : "binary",
                 with_roi ? ", region" : "");
        check_same_score(&got, &want, what);
        CHECK(one.tp > 0 && one.fp > 0 && one.fn > 0 && one.tn > 0 && (!cdnet || one.unknown > 0),
              "%s: the random case misses a count", what);
        test_image_release(&mask);
        test_image_release(&truth);
        test_image_release(&roi);
    }
}

static void check_close(double got, double want, const char *what)
{
    CHECK(fabs(got - want) <= 1e-12, "%s: %.15g, expected %.15g", what, got, want);
}

static void test_metrics(void)
{
    glcv_segment_metrics m;
    glcv_segment_score s = {.tp = 30, .fp = 10, .fn = 20, .tn = 940};
    CHECK_OK(glcv_segment_score_metrics(&s, &m));
    check_close(m.recall, 0.6, "recall");
    check_close(m.precision, 0.75, "precision");
    check_close(m.f, 2.0 * 0.75 * 0.6 / 1.35, "F");
    check_close(m.specificity, 940.0 / 950.0, "specificity");
    check_close(m.fpr, 10.0 / 950.0, "FPR");
    check_close(m.fnr, 20.0 / 50.0, "FNR");
    check_close(m.pwc, 3.0, "PWC");

    /* Nothing to count: the ratios' conventions. */
    glcv_segment_score empty = {0};
    CHECK_OK(glcv_segment_score_metrics(&empty, &m));
    CHECK(m.recall == 1 && m.precision == 1 && m.f == 1 && m.specificity == 1 && m.fpr == 0 && m.fnr == 0 &&
              m.pwc == 0,
          "empty score: recall %g precision %g F %g specificity %g FPR %g FNR %g PWC %g", m.recall, m.precision, m.f,
          m.specificity, m.fpr, m.fnr, m.pwc);
    glcv_segment_score all_wrong = {.fp = 5, .fn = 5};
    CHECK_OK(glcv_segment_score_metrics(&all_wrong, &m));
    CHECK(m.recall == 0 && m.precision == 0 && m.f == 0 && m.specificity == 0 && m.pwc == 100,
          "all wrong: recall %g precision %g F %g specificity %g PWC %g", m.recall, m.precision, m.f, m.specificity,
          m.pwc);
    CHECK_STATUS(glcv_segment_score_metrics(NULL, &m), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_score_metrics(&s, NULL), GLCV_ERROR_INVALID_ARGUMENT);
}

static void test_errors(void)
{
    glcv_image mask = test_image_make(8, 6, GLCV_PIXEL_GRAY8, 0);
    glcv_image truth = test_image_make(8, 6, GLCV_PIXEL_GRAY8, 0);
    glcv_image small = test_image_make(8, 5, GLCV_PIXEL_GRAY8, 0);
    glcv_image colour = test_image_make(8, 6, GLCV_PIXEL_RGB8, 0);
    glcv_image no_pixels = {NULL, 8, 6, 0, GLCV_PIXEL_GRAY8};
    glcv_segment_score s = {1, 2, 3, 4, 5};
    const glcv_segment_score before = s;
    CHECK_STATUS(glcv_segment_score_add(NULL, &mask, &truth, NULL, GLCV_TRUTH_BINARY), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_score_add(&s, NULL, &truth, NULL, GLCV_TRUTH_BINARY), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_score_add(&s, &mask, NULL, NULL, GLCV_TRUTH_BINARY), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_score_add(&s, &no_pixels, &truth, NULL, GLCV_TRUTH_BINARY),
                 GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_score_add(&s, &colour, &truth, NULL, GLCV_TRUTH_BINARY), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_score_add(&s, &mask, &colour, NULL, GLCV_TRUTH_BINARY), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_score_add(&s, &mask, &truth, &colour, GLCV_TRUTH_BINARY), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_score_add(&s, &mask, &truth, NULL, (glcv_truth_labels)3), GLCV_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(glcv_segment_score_add(&s, &mask, &small, NULL, GLCV_TRUTH_BINARY), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_STATUS(glcv_segment_score_add(&s, &mask, &truth, &small, GLCV_TRUTH_CDNET), GLCV_ERROR_SIZE_MISMATCH);
    CHECK(memcmp(&s, &before, sizeof s) == 0, "a failed call changed the score");
    CHECK_OK(glcv_segment_score_add(&s, &mask, &truth, NULL, GLCV_TRUTH_BINARY));
    CHECK(s.tn == before.tn + 48 && s.tp == before.tp, "an all-background frame: tn %llu, expected %llu",
          (unsigned long long)s.tn, (unsigned long long)(before.tn + 48));
    test_image_release(&mask);
    test_image_release(&truth);
    test_image_release(&small);
    test_image_release(&colour);
}

int main(void)
{
    test_counts();
    test_metrics();
    test_errors();
    return test_finish("test_segment_score");
}
