/* Checks a glcv-demo screenshot taken in the grid view at scale 1: input panel at (0, 0),
 * background at (W, 0), mask at (0, H), overlay at (W, H), each W x H.
 *
 *   demo_check SHOT.png synthetic W H INDEX
 *       the input panel is frame INDEX of the synthetic scene (default parameters, W x H), the
 *       background panel its clean background, the mask panel covers the scene's moving objects
 *       (glcv_synth_frame's truth for that frame: precision and recall >= 0.85), and the overlay
 *       is the mask tinted red over the input.
 *   demo_check SHOT.png box W H X Y BW BH R G B
 *       the input shows a box of colour RGB at X,Y (BW x BH, clipped to the frame) on a flat
 *       background, the mask covers that box (recall >= 0.9, precision >= 0.85: every frame was
 *       shown, so the MRF's temporal prior trails the box, moving a pixel a frame, by a pixel at
 *       most), and the overlay is as above.
 *   demo_check SHOT.png track W H INDEX CX CY BW BH ANGLE R G B
 *       a tracked object at the last frame, INDEX of the synthetic scene: the demo reported its
 *       rotated box (centre CX,CY, size BW x BH, ANGLE degrees, as cv::RotatedRect). The object's
 *       true position is the part of glcv_synth_frame's truth whose colour has the chromaticity of
 *       R,G,B (the object's colour, which shading and illumination only scale). Checks: the input
 *       panel is frame INDEX; the tracked centre is within max(4, truth radius / 3) pixels of the
 *       truth's centroid; the pixels inside the rotated box and the object's pixels overlap with
 *       IoU >= 0.5 (a disc in its ideal box: 0.785); the overlay panel shows the box drawn in the
 *       tracking colour (40, 220, 255) around it.
 *
 * Exit status 0 when every check passed, 1 otherwise (each failure says where and by how much). */
#include "testutil.h"

#include <math.h>
#include <string.h>

static const uint8_t *px(const glcv_image *img, int x, int y)
{
    return img->data + (size_t)y * img->stride + (size_t)x * 3;
}

/* Mean and largest absolute difference of a W x H panel at (ox, oy) from an RGB image. */
static void panel_diff(const glcv_image *shot, int ox, int oy, const glcv_image *want, double *mean, int *max)
{
    long sum = 0;
    int mx = 0;
    int bpp = glcv_pixel_format_size(want->format);
    for (int y = 0; y < want->height; y++)
        for (int x = 0; x < want->width; x++) {
            const uint8_t *a = px(shot, ox + x, oy + y);
            const uint8_t *b = want->data + (size_t)y * glcv_image_stride(want) + (size_t)x * (size_t)bpp;
            for (int c = 0; c < 3; c++) {
                int d = abs((int)a[c] - (int)b[c]);
                sum += d;
                if (d > mx)
                    mx = d;
            }
        }
    *mean = (double)sum / (3.0 * want->width * want->height);
    *max = mx;
}

/* Precision and recall of the mask panel against a truth mask (GRAY8, 255 = object). */
static void check_mask(const glcv_image *shot, int w, int h, const glcv_image *truth, double min_precision,
                       double min_recall, double max_offset)
{
    long tp = 0, fp = 0, fn = 0;
    double mx = 0, my = 0, tx = 0, ty = 0;
    long mn = 0, tn = 0;
    int grey = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const uint8_t *p = px(shot, x, h + y);
            if (p[0] > 20 && p[0] < 235)
                grey++;
            int on = p[0] > 127;
            int t = truth->data[(size_t)y * truth->stride + (size_t)x] > 127;
            tp += on && t;
            fp += on && !t;
            fn += !on && t;
            if (on) {
                mx += x;
                my += y;
                mn++;
            }
            if (t) {
                tx += x;
                ty += y;
                tn++;
            }
        }
    double precision = tp + fp ? (double)tp / (double)(tp + fp) : 0.0;
    double recall = tp + fn ? (double)tp / (double)(tp + fn) : 0.0;
    printf("mask panel: precision %.3f recall %.3f (%ld object pixels in the truth, %ld in the mask)\n", precision,
           recall, tn, mn);
    CHECK(tn > 0, "the truth has no object pixels");
    CHECK(precision >= min_precision && recall >= min_recall,
          "mask panel vs truth: precision %.3f, recall %.3f (need %.2f, %.2f)", precision, recall, min_precision,
          min_recall);
    if (mn > 0 && tn > 0) {
        double dx = mx / (double)mn - tx / (double)tn, dy = my / (double)mn - ty / (double)tn;
        printf("mask panel: centroid off the truth's by (%.2f, %.2f) pixels\n", dx, dy);
        CHECK(fabs(dx) < max_offset && fabs(dy) < max_offset, "mask centroid off by (%.2f, %.2f) pixels", dx, dy);
    }
    CHECK(grey < w * h / 100, "the mask panel is not black and white: %d grey pixels", grey);
}

/* The overlay panel is input * (1 - m/2) + red * m/2 with m from the mask panel. */
static void check_overlay(const glcv_image *shot, int w, int h)
{
    int worst = 0, wx = 0, wy = 0;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const uint8_t *in = px(shot, x, y), *m = px(shot, x, h + y), *ov = px(shot, w + x, h + y);
            double k = m[0] / 255.0 * 0.5;
            const double red[3] = {255, 0, 0};
            for (int c = 0; c < 3; c++) {
                double want = in[c] * (1 - k) + red[c] * k;
                int d = (int)fabs(ov[c] - want);
                if (d > worst) {
                    worst = d;
                    wx = x;
                    wy = y;
                }
            }
        }
    printf("overlay panel: largest difference from input tinted by mask %d (at %d,%d)\n", worst, wx, wy);
    CHECK(worst <= 2, "overlay differs from the tinted input by %d at (%d,%d)", worst, wx, wy);
}

static int check_synthetic(const glcv_image *shot, int w, int h, int index)
{
    glcv_synth *synth = NULL;
    glcv_image frame = {0}, truth = {0}, bg = {0};
    CHECK_OK(glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = w, .height = h), &synth));
    if (!synth)
        return 1;
    glcv_synth_params sp;
    glcv_synth_get_params(synth, &sp);
    CHECK(index >= 0 && index < sp.frames, "frame index %d outside the sequence (0..%d)", index, sp.frames - 1);
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &frame));
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_GRAY8, &truth));
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &bg));
    CHECK_OK(glcv_synth_frame(synth, index, &frame, &truth));
    CHECK_OK(glcv_synth_background(synth, &bg));

    double mean;
    int max;
    panel_diff(shot, 0, 0, &frame, &mean, &max);
    printf("input panel vs synthetic frame %d: mean difference %.3f, largest %d\n", index, mean, max);
    CHECK(mean < 0.5 && max <= 2, "input panel is not frame %d: mean %.3f, largest %d", index, mean, max);
    panel_diff(shot, w, 0, &bg, &mean, &max);
    printf("background panel vs the clean background: mean difference %.3f, largest %d\n", mean, max);
    CHECK(mean < 0.5 && max <= 2, "background panel: mean %.3f, largest %d", mean, max);
    check_mask(shot, w, h, &truth, 0.85, 0.85, 3.0);
    check_overlay(shot, w, h);

    glcv_image_free(&frame);
    glcv_image_free(&truth);
    glcv_image_free(&bg);
    glcv_synth_destroy(&synth);
    return 0;
}

static void check_box(const glcv_image *shot, int w, int h, const int box[4], const int rgb[3])
{
    glcv_image truth = {0};
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_GRAY8, &truth));
    int x0 = box[0] < 0 ? 0 : box[0], y0 = box[1] < 0 ? 0 : box[1];
    int x1 = box[0] + box[2] > w ? w : box[0] + box[2], y1 = box[1] + box[3] > h ? h : box[1] + box[3];
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++)
            truth.data[(size_t)y * truth.stride + (size_t)x] = 255;
    /* The box's colour at its centre in the input panel; the background colour far from it. */
    const uint8_t *c = px(shot, (x0 + x1) / 2, (y0 + y1) / 2);
    int dc = abs(c[0] - rgb[0]) + abs(c[1] - rgb[1]) + abs(c[2] - rgb[2]);
    printf("input panel: box centre (%d,%d) is %d %d %d\n", (x0 + x1) / 2, (y0 + y1) / 2, c[0], c[1], c[2]);
    CHECK(dc <= 24, "input panel: box centre is %d %d %d, expected about %d %d %d", c[0], c[1], c[2], rgb[0], rgb[1],
          rgb[2]);
    check_mask(shot, w, h, &truth, 0.85, 0.90, 3.0);
    check_overlay(shot, w, h);
    glcv_image_free(&truth);
}

/* The tracked object against the truth: see the header. */
static void check_track(const glcv_image *shot, int w, int h, int index, const double rbox[5], const int rgb[3])
{
    glcv_synth *synth = NULL;
    glcv_image frame = {0}, truth = {0};
    CHECK_OK(glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = w, .height = h), &synth));
    if (!synth)
        return;
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &frame));
    CHECK_OK(glcv_image_alloc(w, h, GLCV_PIXEL_GRAY8, &truth));
    CHECK_OK(glcv_synth_frame(synth, index, &frame, &truth));
    double mean;
    int max;
    panel_diff(shot, 0, 0, &frame, &mean, &max);
    printf("input panel vs synthetic frame %d: mean difference %.3f, largest %d\n", index, mean, max);
    CHECK(mean < 0.5 && max <= 2, "input panel is not frame %d: mean %.3f, largest %d", index, mean, max);

    /* The object: truth pixels whose chromaticity is within 0.1 (L1) of the object's colour. */
    double want[3], sum = rgb[0] + rgb[1] + rgb[2];
    for (int c = 0; c < 3; c++)
        want[c] = sum > 0 ? rgb[c] / sum : 1.0 / 3;
    const double cx = rbox[0], cy = rbox[1], bw = rbox[2], bh = rbox[3];
    const double ca = cos(rbox[4] * 3.14159265358979323846 / 180.0), sa = sin(rbox[4] * 3.14159265358979323846 / 180.0);
    long n = 0, in_box = 0, both = 0;
    double sx = 0, sy = 0;
    int bx0 = w, by0 = h, bx1 = -1, by1 = -1; /* the rotated box's pixels' extent */
    int x0 = w, y0 = h, x1 = -1, y1 = -1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            /* Inside the rotated box: width along the angle, height across it. */
            double dx = x + 0.5 - cx, dy = y + 0.5 - cy;
            int inside = fabs(dx * ca + dy * sa) <= bw / 2 && fabs(-dx * sa + dy * ca) <= bh / 2;
            if (inside) {
                in_box++;
                bx0 = x < bx0 ? x : bx0;
                by0 = y < by0 ? y : by0;
                bx1 = x > bx1 ? x : bx1;
                by1 = y > by1 ? y : by1;
            }
            if (truth.data[(size_t)y * truth.stride + (size_t)x] < 128)
                continue;
            const uint8_t *p = frame.data + (size_t)y * frame.stride + (size_t)x * 3;
            double s = p[0] + p[1] + p[2];
            if (s < 30)
                continue;
            double dist = fabs(p[0] / s - want[0]) + fabs(p[1] / s - want[1]) + fabs(p[2] / s - want[2]);
            if (dist > 0.1)
                continue;
            n++;
            both += inside;
            sx += x + 0.5;
            sy += y + 0.5;
            x0 = x < x0 ? x : x0;
            y0 = y < y0 ? y : y0;
            x1 = x > x1 ? x : x1;
            y1 = y > y1 ? y : y1;
        }
    CHECK(n >= 20, "no object of colour %d %d %d in the truth of frame %d (%ld pixels)", rgb[0], rgb[1], rgb[2],
          index, n);
    if (n >= 20) {
        double tx = sx / (double)n, ty = sy / (double)n;
        double radius = sqrt((double)n / 3.14159265358979323846);
        double tol = fmax(4.0, radius / 3.0);
        double err = hypot(cx - tx, cy - ty);
        printf("tracked centre (%.2f, %.2f), truth centroid (%.2f, %.2f): %.2f pixels apart (tolerance %.2f)\n", cx,
               cy, tx, ty, err, tol);
        CHECK(err <= tol, "tracked centre %.2f pixels from the truth's (tolerance %.2f)", err, tol);
        double iou = (double)both / (double)(n + in_box - both);
        printf("tracked box %.1fx%.1f at %.1f degrees: %ld pixels; the object (extent %d,%d %dx%d): %ld pixels; "
               "IoU %.3f (need 0.5)\n",
               bw, bh, rbox[4], in_box, x0, y0, x1 + 1 - x0, y1 + 1 - y0, n, iou);
        CHECK(iou >= 0.5, "tracked box overlaps the object with IoU %.3f (need 0.5)", iou);
    }

    /* The box drawn over the overlay panel: pixels of the tracking colour around the bbox. */
    static const int colour[3] = {40, 220, 255};
    long drawn = 0;
    int need = (int)(bw + bh);
    for (int y = by0 - 14; y <= by1 + 4; y++)
        for (int x = bx0 - 4; x <= bx1 + 4; x++) {
            if (x < 0 || y < 0 || x >= w || y >= h)
                continue;
            const uint8_t *p = px(shot, w + x, h + y);
            drawn += abs(p[0] - colour[0]) <= 2 && abs(p[1] - colour[1]) <= 2 && abs(p[2] - colour[2]) <= 2;
        }
    printf("overlay panel: %ld pixels of the tracking colour around the box (need %d)\n", drawn, need);
    CHECK(in_box > 0 && drawn >= need, "overlay panel: the tracked box is not drawn (%ld pixels of its colour)", drawn);

    glcv_image_free(&frame);
    glcv_image_free(&truth);
    glcv_synth_destroy(&synth);
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: demo_check SHOT.png synthetic W H INDEX\n"
                        "       demo_check SHOT.png box W H X Y BW BH R G B\n"
                        "       demo_check SHOT.png track W H INDEX CX CY BW BH ANGLE R G B\n");
        return 2;
    }
    glcv_logger lg = test_logger();
    glcv_image shot = {0};
    glcv_status st = glcv_image_load(argv[1], GLCV_PIXEL_RGB8, &lg, &shot);
    if (st != GLCV_OK) {
        printf("cannot load %s: %s\n", argv[1], glcv_status_string(st));
        return 1;
    }
    int w = atoi(argv[3]), h = atoi(argv[4]);
    printf("screenshot %s: %dx%d; panels %dx%d\n", argv[1], shot.width, shot.height, w, h);
    if (w < 1 || h < 1 || shot.width < 2 * w || shot.height < 2 * h) {
        printf("FAIL: the screenshot is too small for a 2x2 grid of %dx%d panels\n", w, h);
        glcv_image_free(&shot);
        return 1;
    }
    if (!strcmp(argv[2], "synthetic")) {
        check_synthetic(&shot, w, h, atoi(argv[5]));
    } else if (!strcmp(argv[2], "box") && argc >= 12) {
        int box[4] = {atoi(argv[5]), atoi(argv[6]), atoi(argv[7]), atoi(argv[8])};
        int rgb[3] = {atoi(argv[9]), atoi(argv[10]), atoi(argv[11])};
        check_box(&shot, w, h, box, rgb);
    } else if (!strcmp(argv[2], "track") && argc >= 14) {
        double rbox[5] = {atof(argv[6]), atof(argv[7]), atof(argv[8]), atof(argv[9]), atof(argv[10])};
        int rgb[3] = {atoi(argv[11]), atoi(argv[12]), atoi(argv[13])};
        check_track(&shot, w, h, atoi(argv[5]), rbox, rgb);
    } else {
        fprintf(stderr, "demo_check: unknown check '%s'\n", argv[2]);
        glcv_image_free(&shot);
        return 2;
    }
    glcv_image_free(&shot);
    return test_finish("demo_check");
}
