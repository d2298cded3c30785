/* The tracker's arithmetic, shared word for word by the CPU implementation (track_cpu.c) and
 * the CUDA kernels (cuda/track.cu), so that both engines give identical results.
 *
 * Everything here is integer arithmetic or IEEE double operations that both compilers round
 * the same way (+ - * / sqrt, round-half-even conversions). The CUDA side is compiled with
 * --fmad=false so that no a*b+c is fused; C11 on x86-64 does not contract either. There is no
 * libm transcendental here: cv::CamShift's cos(atan2(v, u)) and sin(atan2(v, u)) are computed
 * as u / r and v / r (the box angle, which needs atan2, is computed on the host only).
 *
 * Plain C, also valid CUDA C++: functions are `static inline` (plus __host__ __device__ under
 * nvcc). */
#ifndef GLCV_TRACK_MATH_H
#define GLCV_TRACK_MATH_H

#include <stdint.h>

#ifdef __CUDACC__
#define GLCV_TM static __host__ __device__ __forceinline__
#else
#include <math.h>
#define GLCV_TM static inline
#endif

/* Histogram bins: a pixel's bin index is hue_bin * sat_bins + sat_bin, or `nbins` (whose
 * back-projection is 0) when the pixel does not count. */
#define GLCV_TM_MAX_BINS 4096
#define GLCV_TM_HSV_SHIFT 12
/* cv::CamShift grows the mean-shift window by this much on each side before sizing. */
#define GLCV_TM_TOLERANCE 10
/* Bhattacharyya sums are reduced over this many lanes in a fixed tree (both engines). */
#define GLCV_TM_DIST_LANES 256

enum { GLCV_TM_WINDOW_OPENCV = 1, GLCV_TM_WINDOW_PAPER = 2, GLCV_TM_WINDOW_ADAPTIVE = 3 };
enum { GLCV_TM_LOST_ITERATIONS = 1, GLCV_TM_LOST_MASS = 2, GLCV_TM_LOST_HISTOGRAM = 4 };
enum { GLCV_TM_RECOVERY_FRAME = 1, GLCV_TM_RECOVERY_NONE = 2 };
enum { GLCV_TM_M00, GLCV_TM_M10, GLCV_TM_M01, GLCV_TM_M11, GLCV_TM_M20, GLCV_TM_M02, GLCV_TM_MOMENTS };

typedef struct glcv_tm_rect {
    int x, y, w, h;
} glcv_tm_rect;

/* Adds row y of a rectangle to its moments m (GLCV_TM_M00 ...), given the row's sums
 * s0 = sum p, s1 = sum p x, s2 = sum p x^2 (x relative to the rectangle). */
GLCV_TM void glcv_tm_add_row(uint64_t m[GLCV_TM_MOMENTS], uint64_t y, uint64_t s0, uint64_t s1, uint64_t s2)
{
    m[GLCV_TM_M00] += s0;
    m[GLCV_TM_M10] += s1;
    m[GLCV_TM_M20] += s2;
    m[GLCV_TM_M01] += y * s0;
    m[GLCV_TM_M11] += y * s1;
    m[GLCV_TM_M02] += y * y * s0;
}

/* The per-pixel tables: cv::cvtColor's RGB2HSV_b division tables (hsv_shift 12, hue range
 * 180) and cv::calcHist's bin look-up tables (-1: outside the range). */
typedef struct glcv_tm_tables {
    int32_t sdiv[256];
    int32_t hdiv[256];
    int16_t hue_bin[256];
    int16_t sat_bin[256];
} glcv_tm_tables;

/* What a frame's kernels need to know besides the pixels. */
typedef struct glcv_tm_config {
    int width, height;      /* frame */
    int nbins;              /* hue_bins * sat_bins */
    int sat_bins;
    int s_min, v_min, v_max;
    int eps2;               /* cvRound(epsilon^2) */
    int max_iterations;
    int window_mode;        /* GLCV_TM_WINDOW_* */
    double aspect;
    double min_mass;
    double max_distance;
    unsigned criteria;      /* GLCV_TM_LOST_* bits that mark an object lost */
    int measure_distance;   /* nonzero: histogram of the new window and its distance */
    int recovery;           /* GLCV_TM_RECOVERY_* */
    int recovery_interval;
    int min_window_area;    /* -1: never reset */
    int reset_width;
} glcv_tm_config;

/* An object's state between frames. */
typedef struct glcv_tm_object {
    glcv_tm_rect window; /* the next search window */
    double ref_m00;      /* the first positive M00 of a frame where it was not lost; 0 until then */
    int lost_frames;     /* consecutive frames lost */
    int tracked;         /* frames tracked */
    int stream;          /* the stream whose frames it is tracked in (its bin image); fixed */
    int pad;
    /* ADAPTIVE: the box's centre (pixel centres at +0.5) and velocity, a constant-velocity Kalman
       filter's state, the covariance of position and velocity (the same for x and y), and the
       box's size */
    double kx, ky, kvx, kvy;
    double p00, p01, p11;
    double bw, bh;
    double mass;         /* the mass (M00) of the frames measured, averaged; 0 until the first */
} glcv_tm_object;

/* An object's result for one frame. */
typedef struct glcv_tm_result {
    uint64_t m[GLCV_TM_MOMENTS]; /* moments of `measured` (relative to its origin) */
    glcv_tm_rect measured;       /* where the box was measured (OPENCV: the grown window) */
    glcv_tm_rect window;         /* the tracked window before any reset or recovery */
    glcv_tm_rect next;           /* the next search window */
    int iterations;              /* moment sums taken by the mean shift */
    unsigned reasons;            /* GLCV_TM_LOST_* that applied */
    unsigned lost;               /* reasons & criteria */
    int pad;
    double distance;             /* Bhattacharyya distance, -1 when not measured */
    double box[4];               /* ADAPTIVE: the box's centre x, y and width, height */
} glcv_tm_result;

/* ---- small helpers -------------------------------------------------------------------------- */

GLCV_TM int glcv_tm_min(int a, int b)
{
    return a < b ? a : b;
}

GLCV_TM int glcv_tm_max(int a, int b)
{
    return a > b ? a : b;
}

/* cvRound: to the nearest integer, halves to even (the default IEEE rounding mode). */
GLCV_TM int glcv_tm_round(double v)
{
#ifdef __CUDA_ARCH__
    return __double2int_rn(v);
#else
    return (int)lrint(v);
#endif
}

GLCV_TM double glcv_tm_sqrt(double v)
{
    return sqrt(v); /* correctly rounded on both sides (IEEE 754) */
}

/* OpenCV's Rect intersection; empty results are (0, 0, 0, 0). */
GLCV_TM glcv_tm_rect glcv_tm_intersect(glcv_tm_rect a, glcv_tm_rect b)
{
    glcv_tm_rect r = {0, 0, 0, 0};
    if (a.w <= 0 || a.h <= 0 || b.w <= 0 || b.h <= 0)
        return r;
    int x0 = glcv_tm_max(a.x, b.x), y0 = glcv_tm_max(a.y, b.y);
    int x1 = glcv_tm_min(a.x + a.w, b.x + b.w), y1 = glcv_tm_min(a.y + a.h, b.y + b.h);
    if (x1 <= x0 || y1 <= y0)
        return r;
    r.x = x0;
    r.y = y0;
    r.w = x1 - x0;
    r.h = y1 - y0;
    return r;
}

GLCV_TM glcv_tm_rect glcv_tm_frame_rect(const glcv_tm_config *c)
{
    glcv_tm_rect r = {0, 0, c->width, c->height};
    return r;
}

/* ---- HSV and bins --------------------------------------------------------------------------- */

/* cv::cvtColor(RGB2HSV) for 8-bit pixels, hue range 180: returns h | s << 8 | v << 16. */
GLCV_TM uint32_t glcv_tm_hsv(const glcv_tm_tables *t, int r, int g, int b)
{
    int v = glcv_tm_max(glcv_tm_max(r, g), b);
    int vmin = glcv_tm_min(glcv_tm_min(r, g), b);
    int diff = v - vmin;
    int vr = v == r ? -1 : 0;
    int vg = v == g ? -1 : 0;
    int s = (diff * t->sdiv[v] + (1 << (GLCV_TM_HSV_SHIFT - 1))) >> GLCV_TM_HSV_SHIFT;
    int h = (vr & (g - b)) + (~vr & ((vg & (b - r + 2 * diff)) + (~vg & (r - g + 4 * diff))));
    /* An arithmetic shift of a negative value: what OpenCV relies on, and what gcc, clang and
     * nvcc do. */
    h = (h * t->hdiv[diff] + (1 << (GLCV_TM_HSV_SHIFT - 1))) >> GLCV_TM_HSV_SHIFT;
    h += h < 0 ? 180 : 0;
    h = glcv_tm_min(glcv_tm_max(h, 0), 255);
    return (uint32_t)h | (uint32_t)s << 8 | (uint32_t)v << 16;
}

/* The bin of a pixel, or c->nbins when it does not count (limits, range, mask == 0). */
GLCV_TM int glcv_tm_bin(const glcv_tm_tables *t, const glcv_tm_config *c, int r, int g, int b, int mask)
{
    uint32_t hsv = glcv_tm_hsv(t, r, g, b);
    int h = (int)(hsv & 255u), s = (int)(hsv >> 8 & 255u), v = (int)(hsv >> 16);
    int hb = t->hue_bin[h];
    int sb = c->sat_bins > 1 ? t->sat_bin[s] : 0;
    if (!mask || s < c->s_min || v < c->v_min || v > c->v_max || hb < 0 || sb < 0)
        return c->nbins;
    return hb * c->sat_bins + sb;
}

/* ---- the mean shift (cv::meanShift) ------------------------------------------------------- */

typedef struct glcv_tm_meanshift {
    glcv_tm_rect window; /* the first window clipped to the frame (its size sets the shift) */
    glcv_tm_rect cur;    /* the window whose moments are needed next */
    int iterations;      /* moment sums taken */
    int capped;          /* stopped by max_iterations */
} glcv_tm_meanshift;

/* cv::meanShift's clipping at the top of each iteration. */
GLCV_TM void glcv_tm_meanshift_clip(glcv_tm_meanshift *s, const glcv_tm_config *c)
{
    glcv_tm_rect cur = glcv_tm_intersect(s->cur, glcv_tm_frame_rect(c));
    if (cur.x == 0 && cur.y == 0 && cur.w == 0 && cur.h == 0) {
        cur.x = c->width / 2;
        cur.y = c->height / 2;
    }
    cur.w = glcv_tm_max(cur.w, 1);
    cur.h = glcv_tm_max(cur.h, 1);
    s->cur = cur;
}

GLCV_TM void glcv_tm_meanshift_begin(glcv_tm_meanshift *s, glcv_tm_rect window, const glcv_tm_config *c)
{
    s->window = glcv_tm_intersect(window, glcv_tm_frame_rect(c));
    s->cur = window;
    s->iterations = 0;
    s->capped = 0;
    glcv_tm_meanshift_clip(s, c);
}

/* One iteration given the moments of s->cur. Returns nonzero when another is needed (then
 * s->cur is the next window to sum). OPENCV mode: cv::meanShift's step; PAPER mode: the window
 * is also resized to 2 sqrt(M00/255) x aspect times that, centred on the centroid. */
GLCV_TM int glcv_tm_meanshift_step(glcv_tm_meanshift *s, const uint64_t *m, const glcv_tm_config *c)
{
    s->iterations++;
    if (m[GLCV_TM_M00] == 0)
        return 0;
    double m00 = (double)m[GLCV_TM_M00];
    int dx, dy;
    if (c->window_mode == GLCV_TM_WINDOW_PAPER) {
        double width = 2.0 * glcv_tm_sqrt(m00 / 255.0);
        int w = glcv_tm_min(glcv_tm_max(glcv_tm_round(width), 1), c->width);
        int h = glcv_tm_min(glcv_tm_max(glcv_tm_round(c->aspect * width), 1), c->height);
        double xc = (double)m[GLCV_TM_M10] / m00 + (double)s->cur.x;
        double yc = (double)m[GLCV_TM_M01] / m00 + (double)s->cur.y;
        int nx = glcv_tm_min(glcv_tm_max(glcv_tm_round(xc - (double)w * 0.5), 0), c->width - w);
        int ny = glcv_tm_min(glcv_tm_max(glcv_tm_round(yc - (double)h * 0.5), 0), c->height - h);
        dx = nx - s->cur.x;
        dy = ny - s->cur.y;
        s->cur.x = nx;
        s->cur.y = ny;
        s->cur.w = w;
        s->cur.h = h;
    } else {
        dx = glcv_tm_round((double)m[GLCV_TM_M10] / m00 - (double)s->window.w * 0.5);
        dy = glcv_tm_round((double)m[GLCV_TM_M01] / m00 - (double)s->window.h * 0.5);
        int nx = glcv_tm_min(glcv_tm_max(s->cur.x + dx, 0), c->width - s->cur.w);
        int ny = glcv_tm_min(glcv_tm_max(s->cur.y + dy, 0), c->height - s->cur.h);
        dx = nx - s->cur.x;
        dy = ny - s->cur.y;
        s->cur.x = nx;
        s->cur.y = ny;
    }
    if (dx * dx + dy * dy < c->eps2)
        return 0;
    if (s->iterations >= c->max_iterations) {
        s->capped = 1;
        return 0;
    }
    glcv_tm_meanshift_clip(s, c);
    return 1;
}

/* ---- CamShift's sizing (cv::CamShift after its meanShift) -------------------------------- */

/* The mean-shift window grown by TOLERANCE on each side, inside the frame. */
GLCV_TM glcv_tm_rect glcv_tm_camshift_grow(glcv_tm_rect w, const glcv_tm_config *c)
{
    w.x -= GLCV_TM_TOLERANCE;
    if (w.x < 0)
        w.x = 0;
    w.y -= GLCV_TM_TOLERANCE;
    if (w.y < 0)
        w.y = 0;
    w.w += 2 * GLCV_TM_TOLERANCE;
    if (w.x + w.w > c->width)
        w.w = c->width - w.x;
    w.h += 2 * GLCV_TM_TOLERANCE;
    if (w.y + w.h > c->height)
        w.h = c->height - w.y;
    return w;
}

/* The rotated box of moments m taken in window `g`: centre of the resulting window, the two
 * axis lengths (length >= width), and cos/sin of the major axis's direction. Returns the next
 * window as cv::CamShift does. With M00 == 0 the box is all zero and the window stays `g`. */
typedef struct glcv_tm_box {
    double length, width; /* major and minor axes: 4 sqrt(eigenvalue of the covariance) */
    double u, v;          /* theta = atan2(v, u) before any swap (cs = u/r, sn = v/r) */
    int swapped;          /* length and width were exchanged: theta = pi/2 - theta */
    int valid;            /* M00 > 0 */
} glcv_tm_box;

GLCV_TM glcv_tm_rect glcv_tm_camshift_size(const uint64_t *mi, glcv_tm_rect g, const glcv_tm_config *c,
                                            glcv_tm_box *box)
{
    box->length = box->width = box->u = box->v = 0.0;
    box->swapped = 0;
    box->valid = 0;
    if (mi[GLCV_TM_M00] == 0)
        return g;
    double m00 = (double)mi[GLCV_TM_M00], m10 = (double)mi[GLCV_TM_M10], m01 = (double)mi[GLCV_TM_M01];
    double m11 = (double)mi[GLCV_TM_M11], m20 = (double)mi[GLCV_TM_M20], m02 = (double)mi[GLCV_TM_M02];
    /* cv::moments' central moments */
    double inv = 1.0 / m00;
    double cx = m10 * inv, cy = m01 * inv;
    double mu20 = m20 - m10 * cx;
    double mu11 = m11 - m10 * cy;
    double mu02 = m02 - m01 * cy;

    int xc = glcv_tm_round(m10 * inv + (double)g.x);
    int yc = glcv_tm_round(m01 * inv + (double)g.y);
    double a = mu20 * inv, b = mu11 * inv, cc = mu02 * inv;
    double square = glcv_tm_sqrt(4.0 * b * b + (a - cc) * (a - cc));
    /* theta = atan2(2b, a - c + square); cos and sin without libm */
    double u = a - cc + square, v = 2.0 * b;
    double r = glcv_tm_sqrt(u * u + v * v);
    double cs = 1.0, sn = 0.0;
    if (r > 0.0) {
        cs = u / r;
        sn = v / r;
    }
    double rotate_a = cs * cs * mu20 + 2.0 * cs * sn * mu11 + sn * sn * mu02;
    double rotate_c = sn * sn * mu20 - 2.0 * cs * sn * mu11 + cs * cs * mu02;
    if (rotate_a < 0.0)
        rotate_a = 0.0;
    if (rotate_c < 0.0)
        rotate_c = 0.0;
    double length = glcv_tm_sqrt(rotate_a * inv) * 4.0;
    double width = glcv_tm_sqrt(rotate_c * inv) * 4.0;
    int swapped = 0;
    if (length < width) {
        double t = length;
        length = width;
        width = t;
        t = cs;
        cs = sn;
        sn = t;
        swapped = 1;
    }
    int t0 = glcv_tm_round(fabs(length * cs));
    int t1 = glcv_tm_round(fabs(width * sn));
    t0 = glcv_tm_max(t0, t1) + 2;
    glcv_tm_rect w;
    w.w = glcv_tm_min(t0, (c->width - xc) * 2);
    t0 = glcv_tm_round(fabs(length * sn));
    t1 = glcv_tm_round(fabs(width * cs));
    t0 = glcv_tm_max(t0, t1) + 2;
    w.h = glcv_tm_min(t0, (c->height - yc) * 2);
    w.x = glcv_tm_max(0, xc - w.w / 2);
    w.y = glcv_tm_max(0, yc - w.h / 2);
    w.w = glcv_tm_min(c->width - w.x, w.w);
    w.h = glcv_tm_min(c->height - w.y, w.h);

    box->length = length;
    box->width = width;
    box->u = u;
    box->v = v;
    box->swapped = swapped;
    box->valid = 1;
    return w;
}

/* ---- ADAPTIVE: an upright box of guarded size, and a constant-velocity Kalman filter ------- */

/* The rates of the ADAPTIVE window: per frame, the box's scale (the geometric mean of its sides)
 * and its aspect (height / width) follow the measured ones by at most GLCV_TM_SIZE_STEP of
 * themselves, the scale half way (GLCV_TM_SIZE_GAIN), the aspect a tenth as fast (a part of the
 * object hidden or unlike its model changes the measured aspect much more than the scale); the
 * filter's measurement noise and acceleration are these fractions of the box's larger side (plus
 * a pixel, half a pixel); a lost object's velocity decays by GLCV_TM_COAST each frame. */
#define GLCV_TM_SIZE_STEP 0.125
#define GLCV_TM_SIZE_GAIN 0.5
#define GLCV_TM_ASPECT_GAIN 0.05
#define GLCV_TM_MEASURE_NOISE 0.1
#define GLCV_TM_ACCEL_NOISE 0.05
#define GLCV_TM_COAST 0.8
/* A frame whose mass is above GLCV_TM_MASS_JUMP times the object's average is not measured (its
 * window took in something else: an occluder, a neighbour); the average follows at
 * GLCV_TM_MASS_RATE. */
#define GLCV_TM_MASS_JUMP 2.0
#define GLCV_TM_MASS_RATE 0.1

/* An object's ADAPTIVE state for a window given by the caller: centred on it, at rest, its size. */
GLCV_TM void glcv_tm_adaptive_init(glcv_tm_object *o, glcv_tm_rect w)
{
    o->kx = (double)w.x + (double)w.w * 0.5;
    o->ky = (double)w.y + (double)w.h * 0.5;
    o->kvx = o->kvy = 0.0;
    double s = 0.25 * (double)glcv_tm_max(w.w, w.h);
    o->p00 = s * s;
    o->p01 = 0.0;
    o->p11 = s * s;
    o->bw = (double)glcv_tm_max(w.w, 1);
    o->bh = (double)glcv_tm_max(w.h, 1);
    o->mass = 0.0;
}

/* The mean-shift window grown by a quarter of its size on each side (at least 2 pixels), inside
 * the frame: where the box is measured, room for it to grow. */
GLCV_TM glcv_tm_rect glcv_tm_adaptive_grow(glcv_tm_rect w, const glcv_tm_config *c)
{
    int mx = glcv_tm_max(2, w.w / 4), my = glcv_tm_max(2, w.h / 4);
    glcv_tm_rect g;
    g.x = w.x - mx;
    g.y = w.y - my;
    g.w = w.w + 2 * mx;
    g.h = w.h + 2 * my;
    return glcv_tm_intersect(g, glcv_tm_frame_rect(c));
}

/* The box the moments m of window g measure: the centroid (pixel centres at +0.5) and the sides
 * of the uniform rectangle of the same variances, sqrt(12 var). 0 when M00 is 0. */
GLCV_TM int glcv_tm_adaptive_measure(const uint64_t *m, glcv_tm_rect g, double out[4])
{
    if (m[GLCV_TM_M00] == 0)
        return 0;
    double inv = 1.0 / (double)m[GLCV_TM_M00];
    double cx = (double)m[GLCV_TM_M10] * inv, cy = (double)m[GLCV_TM_M01] * inv;
    double vx = ((double)m[GLCV_TM_M20] - (double)m[GLCV_TM_M10] * cx) * inv;
    double vy = ((double)m[GLCV_TM_M02] - (double)m[GLCV_TM_M01] * cy) * inv;
    out[0] = cx + (double)g.x + 0.5;
    out[1] = cy + (double)g.y + 0.5;
    out[2] = glcv_tm_sqrt(12.0 * (vx > 0.0 ? vx : 0.0));
    out[3] = glcv_tm_sqrt(12.0 * (vy > 0.0 ? vy : 0.0));
    return 1;
}

/* A rectangle of size w x h (rounded, at least 1, at most the frame) centred on (x, y), moved
 * inside the frame. */
GLCV_TM glcv_tm_rect glcv_tm_centred(double x, double y, double w, double h, const glcv_tm_config *c)
{
    glcv_tm_rect r;
    r.w = glcv_tm_min(glcv_tm_max(glcv_tm_round(w), 1), c->width);
    r.h = glcv_tm_min(glcv_tm_max(glcv_tm_round(h), 1), c->height);
    double fx = x - (double)r.w * 0.5, fy = y - (double)r.h * 0.5;
    /* clamp before rounding: a centre far outside (a diverging filter) stays an int */
    fx = fx < 0.0 ? 0.0 : fx > (double)(c->width - r.w) ? (double)(c->width - r.w) : fx;
    fy = fy < 0.0 ? 0.0 : fy > (double)(c->height - r.h) ? (double)(c->height - r.h) : fy;
    r.x = glcv_tm_round(fx);
    r.y = glcv_tm_round(fy);
    return r;
}

/* The box of this frame before the object's state moves: at the measured centroid, of the
 * object's size (where the histogram distance is measured); `g` when M00 is 0. */
GLCV_TM glcv_tm_rect glcv_tm_adaptive_box(const uint64_t *m, glcv_tm_rect g, const glcv_tm_object *o,
                                          const glcv_tm_config *c)
{
    double b[4];
    if (!glcv_tm_adaptive_measure(m, g, b))
        return g;
    return glcv_tm_centred(b[0], b[1], o->bw, o->bh, c);
}

/* `prev` moved towards `measured`, limited to a change of GLCV_TM_SIZE_STEP, by `gain`. */
GLCV_TM double glcv_tm_adaptive_follow(double prev, double measured, double gain)
{
    double lo = prev * (1.0 - GLCV_TM_SIZE_STEP), hi = prev * (1.0 + GLCV_TM_SIZE_STEP);
    double v = measured < lo ? lo : measured > hi ? hi : measured;
    return prev + gain * (v - prev);
}

/* The box's sides after a measurement of sides mw x mh (each at least a pixel): its scale and its
 * aspect follow, each side between 2 pixels and the frame's. */
GLCV_TM void glcv_tm_adaptive_resize(glcv_tm_object *o, double mw, double mh, const glcv_tm_config *c)
{
    mw = mw > 1.0 ? mw : 1.0;
    mh = mh > 1.0 ? mh : 1.0;
    double scale = glcv_tm_adaptive_follow(glcv_tm_sqrt(o->bw * o->bh), glcv_tm_sqrt(mw * mh), GLCV_TM_SIZE_GAIN);
    double aspect = glcv_tm_adaptive_follow(o->bh / o->bw, mh / mw, GLCV_TM_ASPECT_GAIN);
    double r = glcv_tm_sqrt(aspect), w = scale / r, h = scale * r;
    o->bw = w < 2.0 ? 2.0 : w > (double)c->width ? (double)c->width : w;
    o->bh = h < 2.0 ? 2.0 : h > (double)c->height ? (double)c->height : h;
}

/* The filter's measurement update of one axis (position p, velocity v) with z. */
GLCV_TM void glcv_tm_kalman_update(double *p, double *v, const glcv_tm_object *o, double r, double z)
{
    double s = o->p00 + r;
    double k0 = o->p00 / s, k1 = o->p01 / s, y = z - *p;
    *p = *p + k0 * y;
    *v = *v + k1 * y;
}

/* ADAPTIVE's end of a frame (after the lost reasons): a tracked object's measurement moves the
 * filter and the box's size; a lost one coasts. Then the box of this frame, and the prediction:
 * the next window, of the box's size, centred where the object will be. */
GLCV_TM glcv_tm_rect glcv_tm_adaptive_finish(glcv_tm_object *o, glcv_tm_result *res, const glcv_tm_config *c)
{
    double b[4];
    double size = o->bw > o->bh ? o->bw : o->bh;
    double r = GLCV_TM_MEASURE_NOISE * size + 1.0, q = GLCV_TM_ACCEL_NOISE * size + 0.5;
    r = r * r;
    q = q * q;
    double m00 = (double)res->m[GLCV_TM_M00];
    int merged = o->mass > 0.0 && m00 > GLCV_TM_MASS_JUMP * o->mass;
    if (!res->lost && !merged && glcv_tm_adaptive_measure(res->m, res->measured, b)) {
        o->mass = o->mass > 0.0 ? o->mass + GLCV_TM_MASS_RATE * (m00 - o->mass) : m00;
        glcv_tm_kalman_update(&o->kx, &o->kvx, o, r, b[0]);
        glcv_tm_kalman_update(&o->ky, &o->kvy, o, r, b[1]);
        double s = o->p00 + r, k0 = o->p00 / s, k1 = o->p01 / s;
        double p00 = (1.0 - k0) * o->p00, p01 = (1.0 - k0) * o->p01, p11 = o->p11 - k1 * o->p01;
        o->p00 = p00;
        o->p01 = p01;
        o->p11 = p11;
        glcv_tm_adaptive_resize(o, b[2], b[3], c);
    } else if (res->lost || merged) {
        o->kvx = o->kvx * GLCV_TM_COAST;
        o->kvy = o->kvy * GLCV_TM_COAST;
    }
    res->box[0] = o->kx;
    res->box[1] = o->ky;
    res->box[2] = o->bw;
    res->box[3] = o->bh;
    /* prediction */
    o->kx = o->kx + o->kvx;
    o->ky = o->ky + o->kvy;
    double p00 = o->p00 + 2.0 * o->p01 + o->p11 + 0.25 * q;
    double p01 = o->p01 + o->p11 + 0.5 * q;
    o->p00 = p00;
    o->p01 = p01;
    o->p11 = o->p11 + q;
    /* a centre that left the frame comes back to its edge */
    o->kx = o->kx < 0.0 ? 0.0 : o->kx > (double)c->width ? (double)c->width : o->kx;
    o->ky = o->ky < 0.0 ? 0.0 : o->ky > (double)c->height ? (double)c->height : o->ky;
    return glcv_tm_centred(o->kx, o->ky, o->bw, o->bh, c);
}

/* ---- lost objects, recovery and the minimum window ----------------------------------------- */

/* Bhattacharyya distance from the lane sums (see glcv_tm_distance_lanes): as cv::compareHist. */
GLCV_TM double glcv_tm_distance(double sum_sqrt, double model_sum, double count_sum)
{
    double s = model_sum * count_sum;
    s = fabs(s) > 1.1920928955078125e-07 /* FLT_EPSILON */ ? 1.0 / glcv_tm_sqrt(s) : 1.0;
    double d = 1.0 - sum_sqrt * s;
    return glcv_tm_sqrt(d > 0.0 ? d : 0.0);
}

/* The window a reset or a too-small window gets: reset_width wide, centred on `around`. */
GLCV_TM glcv_tm_rect glcv_tm_reset_window(glcv_tm_rect around, const glcv_tm_config *c)
{
    int w = glcv_tm_min(glcv_tm_max(c->reset_width, 1), c->width);
    int h = c->window_mode == GLCV_TM_WINDOW_PAPER ? glcv_tm_round(c->aspect * (double)c->reset_width)
                                                  : c->reset_width;
    h = glcv_tm_min(glcv_tm_max(h, 1), c->height);
    glcv_tm_rect r;
    r.x = glcv_tm_min(glcv_tm_max(around.x + around.w / 2 - w / 2, 0), c->width - w);
    r.y = glcv_tm_min(glcv_tm_max(around.y + around.h / 2 - h / 2, 0), c->height - h);
    r.w = w;
    r.h = h;
    return r;
}

/* Ends an object's frame: lost reasons, the next window, the object's state. `res` holds the
 * moments, windows, iteration count, cap flag (in reasons) and distance already. */
GLCV_TM void glcv_tm_finish(glcv_tm_object *o, glcv_tm_result *res, const glcv_tm_config *c)
{
    unsigned reasons = res->reasons & GLCV_TM_LOST_ITERATIONS;
    double m00 = (double)res->m[GLCV_TM_M00];
    if (res->m[GLCV_TM_M00] == 0 || (o->ref_m00 > 0.0 && m00 < c->min_mass * o->ref_m00))
        reasons |= GLCV_TM_LOST_MASS;
    if (c->measure_distance && res->distance > c->max_distance)
        reasons |= GLCV_TM_LOST_HISTOGRAM;
    res->reasons = reasons;
    res->lost = reasons & c->criteria;

    glcv_tm_rect next = res->window;
    if (c->window_mode == GLCV_TM_WINDOW_ADAPTIVE)
        next = glcv_tm_adaptive_finish(o, res, c);
    else if (c->min_window_area >= 0 && (long long)next.w * next.h < c->min_window_area)
        next = glcv_tm_reset_window(next, c);
    if (res->lost) {
        /* after every recovery_interval consecutive lost frames, search the whole frame */
        o->lost_frames++;
        if (c->recovery == GLCV_TM_RECOVERY_FRAME && o->lost_frames % c->recovery_interval == 0)
            next = glcv_tm_frame_rect(c);
    } else {
        o->lost_frames = 0;
        if (o->ref_m00 == 0.0)
            o->ref_m00 = m00;
    }
    res->next = next;
    o->window = next;
    o->tracked++;
}

#endif
