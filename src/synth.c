/* Synthetic scene: a textured background, moving objects, sensor noise and an illumination ramp;
 * in the DYNAMIC scene also water, swaying foliage and flickering patches.
 *
 * Every value is computed with integer hashing and the basic double operations (+ - * /, sqrt,
 * floor), which IEEE 754 defines exactly, and with sine and logarithm implemented here as
 * polynomials: the output does not depend on the C library or the machine.
 */
#include "core_internal.h"

#include <glcv/image.h>
#include <glcv/synth.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZE 16384
#define MAX_OBJECTS 16
#define TWO_PI 6.283185307179586476925286766559

/* ---- Portable math ---- */

/* sin(y) and cos(y) for |y| <= pi/4: Taylor series in Horner form over -y^2 (error below 1e-16).
 * The coefficients are 1/15!, 1/13!, ..., 1/1! and 1/16!, 1/14!, ..., 1/0!. */
static const double sin_coef[] = {1.0 / 1307674368000.0, 1.0 / 6227020800.0, 1.0 / 39916800.0, 1.0 / 362880.0,
                                  1.0 / 5040.0,          1.0 / 120.0,        1.0 / 6.0,        1.0};
static const double cos_coef[] = {1.0 / 20922789888000.0, 1.0 / 87178291200.0, 1.0 / 479001600.0,
                                  1.0 / 3628800.0,        1.0 / 40320.0,       1.0 / 720.0,
                                  1.0 / 24.0,             1.0 / 2.0,           1.0};

static double horner(const double *coef, int n, double y)
{
    double y2 = y * y, p = coef[0];
    for (int i = 1; i < n; i++)
        p = p * -y2 + coef[i];
    return p;
}

static double sin_small(double y)
{
    return y * horner(sin_coef, (int)(sizeof sin_coef / sizeof sin_coef[0]), y);
}

static double cos_small(double y)
{
    return horner(cos_coef, (int)(sizeof cos_coef / sizeof cos_coef[0]), y);
}

/* sin(2 pi t): the argument in turns, so range reduction is exact. */
static double sin_turns(double t)
{
    t -= floor(t); /* [0, 1) */
    double q = floor(t * 4.0 + 0.5);
    double y = (t - q * 0.25) * TWO_PI; /* [-pi/4, pi/4] */
    switch ((int)q & 3) {
    case 0: return sin_small(y);
    case 1: return cos_small(y);
    case 2: return -sin_small(y);
    default: return -cos_small(y);
    }
}

static double cos_turns(double t)
{
    return sin_turns(t + 0.25);
}

/* Natural logarithm of x > 0: x = m 2^e with m in [sqrt(1/2), sqrt(2)), ln m = 2 atanh(s). */
static double log_pos(double x)
{
    int e = 0;
    double m = frexp(x, &e); /* exact */
    if (m < 0.70710678118654752440) {
        m *= 2.0;
        e--;
    }
    double s = (m - 1.0) / (m + 1.0); /* |s| <= 0.1716 */
    double s2 = s * s;
    double p = 1.0 / 23.0;
    for (int k = 21; k >= 1; k -= 2)
        p = p * s2 + 1.0 / (double)k;
    return 2.0 * s * p + (double)e * 0.69314718055994530942;
}

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* ---- Hashing ---- */

static uint64_t mix64(uint64_t z)
{
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A standard normal sample from a 64-bit hash (Box-Muller). */
static double gaussian(uint64_t h)
{
    double u1 = ((double)(h >> 32) + 0.5) * (1.0 / 4294967296.0); /* (0, 1) */
    double u2 = (double)(h & 0xFFFFFFFFu) * (1.0 / 4294967296.0); /* [0, 1) */
    return sqrt(-2.0 * log_pos(u1)) * cos_turns(u2);
}

/* ---- Scene ---- */

enum { SHAPE_DISC, SHAPE_BOX };

/* One moving object. Sizes are in units of min(width, height); centre and amplitude are in
 * fractions of the width (x) and height (y); periods in frames; phases in turns. */
typedef struct object_spec {
    int shape;
    double r, g, b;
    double shade;  /* brightness change from the centre to the rim, lit from the upper left */
    double size;   /* disc radius or half width of a box */
    double aspect; /* box half height / half width */
    double cx, cy, ax, ay;
    double px, py, phx, phy;
} object_spec;

/* Object 0 is dark and moves over the brighter lower-right part of the background; the list is
 * in drawing order from the top: an object hides the ones after it. */
static const object_spec OBJECTS[MAX_OBJECTS] = {
    {SHAPE_DISC, 15, 15, 20, 0.00, 0.090, 1.0, 0.63, 0.62, 0.20, 0.18, 70, 53, 0.00, 0.25},
    {SHAPE_DISC, 200, 45, 40, 0.12, 0.080, 1.0, 0.40, 0.42, 0.26, 0.24, 61, 83, 0.30, 0.10},
    {SHAPE_BOX, 45, 165, 70, 0.00, 0.100, 0.6, 0.50, 0.50, 0.33, 0.30, 97, 67, 0.60, 0.45},
    {SHAPE_DISC, 45, 70, 205, 0.15, 0.070, 1.0, 0.45, 0.55, 0.33, 0.30, 79, 59, 0.15, 0.70},
    {SHAPE_BOX, 215, 195, 45, 0.10, 0.060, 1.4, 0.55, 0.45, 0.30, 0.28, 89, 71, 0.85, 0.35},
    {SHAPE_BOX, 28, 22, 18, 0.00, 0.070, 0.8, 0.60, 0.65, 0.22, 0.18, 103, 77, 0.50, 0.90},
    {SHAPE_DISC, 190, 50, 170, 0.12, 0.060, 1.0, 0.30, 0.35, 0.18, 0.22, 57, 91, 0.20, 0.55},
    {SHAPE_DISC, 40, 180, 190, 0.10, 0.055, 1.0, 0.70, 0.30, 0.20, 0.20, 67, 101, 0.75, 0.05},
    {SHAPE_BOX, 225, 120, 30, 0.00, 0.050, 1.0, 0.35, 0.70, 0.25, 0.20, 83, 63, 0.40, 0.60},
    {SHAPE_DISC, 225, 225, 215, 0.10, 0.050, 1.0, 0.65, 0.50, 0.28, 0.35, 109, 73, 0.95, 0.15},
    {SHAPE_BOX, 90, 40, 140, 0.08, 0.045, 1.6, 0.50, 0.30, 0.38, 0.18, 73, 97, 0.10, 0.80},
    {SHAPE_DISC, 120, 130, 40, 0.10, 0.065, 1.0, 0.50, 0.65, 0.35, 0.25, 113, 87, 0.55, 0.30},
    {SHAPE_BOX, 20, 110, 100, 0.00, 0.055, 0.7, 0.40, 0.55, 0.30, 0.33, 79, 107, 0.25, 0.40},
    {SHAPE_DISC, 215, 140, 150, 0.12, 0.045, 1.0, 0.60, 0.40, 0.33, 0.30, 91, 61, 0.65, 0.85},
    {SHAPE_DISC, 18, 18, 18, 0.00, 0.050, 1.0, 0.70, 0.70, 0.20, 0.20, 59, 79, 0.35, 0.50},
    {SHAPE_BOX, 120, 70, 30, 0.08, 0.060, 1.2, 0.45, 0.40, 0.35, 0.30, 101, 83, 0.90, 0.65},
};

/* An object placed in one frame, in pixel units. */
typedef struct placed_object {
    const object_spec *spec;
    double x, y;   /* centre */
    double hw, hh; /* half extents (radius for discs) */
    double r2;     /* squared radius (discs) */
    int x0, x1, y0, y1; /* pixel bounding box, inclusive, clipped */
} placed_object;

/* A rectangle of pixels [x0, x1) x [y0, y1). */
typedef struct pixel_rect {
    int x0, y0, x1, y1;
} pixel_rect;

enum { FLICKER_PATCHES = 2 };

struct glcv_synth {
    glcv_synth_params params;
    double unit; /* min(width, height) / 240: the dynamic parts' sizes scale with the frame */
    pixel_rect water, foliage, flicker[FLICKER_PATCHES]; /* DYNAMIC scene; empty otherwise */
    double gain_step; /* (illumination_gain - 1) / max(1, frames - 1) */
    double *col_gx;   /* (x + 0.5) / width */
    double *col_wave; /* checker wave along x, in [-1, 1] */
    double *col_fine; /* fine texture along x */
    double *row_gy;
    double *row_wave;
    double *row_fine;
};

/* Tiles of the soft checker across the width and the height. */
#define TILES_X 8.0
#define TILES_Y 6.0

/* The clean background colour of pixel (x, y), gain 1, in grey levels. */
static void background_pixel(const glcv_synth *s, int x, int y, double rgb[3])
{
    double gx = s->col_gx[x], gy = s->row_gy[y];
    /* Smooth gradients: darker upper left, brighter lower right. */
    double r = 55.0 + 115.0 * gx + 20.0 * gy;
    double g = 60.0 + 45.0 * gx + 85.0 * gy;
    double b = 150.0 - 40.0 * gx + 45.0 * gy;
    /* Soft checker: flat tiles with smooth edges, +-12 % brightness. */
    double m = 1.0 + 0.12 * clampd(3.0 * s->col_wave[x] * s->row_wave[y], -1.0, 1.0);
    /* Fine texture: a small oriented pattern and a fixed per-pixel grain. */
    uint64_t h = mix64(((uint64_t)(uint32_t)y << 32) ^ (uint64_t)(uint32_t)x ^ 0x5EEDBA5E00000000ull);
    double grain = (double)(h & 0xFF) * (6.0 / 255.0) - 3.0;
    double tex = 3.0 * s->col_fine[x] * s->row_fine[y] + grain;
    double chroma = (double)((h >> 8) & 0xFF) * (4.0 / 255.0) - 2.0;
    rgb[0] = clampd(r * m + tex + chroma, 24.0, 232.0);
    rgb[1] = clampd(g * m + tex, 24.0, 232.0);
    rgb[2] = clampd(b * m + tex - chroma, 24.0, 232.0);
}

/* ---- The DYNAMIC scene's moving background ---- */

static int in_rect(const pixel_rect *r, int x, int y)
{
    return x >= r->x0 && x < r->x1 && y >= r->y0 && y < r->y1;
}

static pixel_rect fraction_rect(const glcv_synth *s, double fx0, double fy0, double fx1, double fy1)
{
    double w = (double)s->params.width, h = (double)s->params.height;
    pixel_rect r = {(int)floor(fx0 * w), (int)floor(fy0 * h), (int)floor(fx1 * w), (int)floor(fy1 * h)};
    return r;
}

/* Water: three travelling waves (direction in turns, wavelength in units, period in frames). */
static const double WAVES[3][4] = {{0.10, 9.0, 11.0, 0.00}, {0.35, 13.0, 17.0, 0.40}, {0.80, 6.5, 7.0, 0.70}};

/* The ripple field in [-1, 1] at pixel (x, y) of frame t (0 everywhere at rest, t < 0). */
static double ripple(const glcv_synth *s, int x, int y, double t)
{
    if (t < 0.0)
        return 0.0;
    double sum = 0.0;
    for (int i = 0; i < 3; i++) {
        double along = ((double)x * cos_turns(WAVES[i][0]) + (double)y * sin_turns(WAVES[i][0])) / s->unit;
        sum += sin_turns(along / WAVES[i][1] - t / WAVES[i][2] + WAVES[i][3]);
    }
    return sum / 3.0;
}

static void water_pixel(const glcv_synth *s, int x, int y, double t, double rgb[3])
{
    double w = ripple(s, x, y, t);
    double k = 1.0 + 0.22 * w;
    double glint = w > 0.72 ? 60.0 * (w - 0.72) / 0.28 : 0.0; /* sun on the crests */
    double depth = (double)(y - s->water.y0) / (double)(s->water.y1 - s->water.y0 + 1);
    rgb[0] = (38.0 - 10.0 * depth) * k + glint;
    rgb[1] = (88.0 - 15.0 * depth) * k + glint;
    rgb[2] = (108.0 - 10.0 * depth) * k + glint;
}

/* Smooth value noise in [0, 1] on a lattice of `cell` pixels, at a real position. */
static double value_noise(double u, double v, double cell, uint64_t key)
{
    double fu = u / cell, fv = v / cell;
    double iu = floor(fu), iv = floor(fv);
    double a = fu - iu, b = fv - iv;
    a = a * a * (3.0 - 2.0 * a);
    b = b * b * (3.0 - 2.0 * b);
    double corner[4];
    for (int k = 0; k < 4; k++) {
        uint64_t cx = (uint64_t)(int64_t)iu + (uint64_t)(k & 1), cy = (uint64_t)(int64_t)iv + (uint64_t)(k >> 1);
        corner[k] = (double)(mix64(key ^ (cx << 32) ^ (cy & 0xFFFFFFFFu)) >> 11) * (1.0 / 9007199254740992.0);
    }
    return (corner[0] * (1.0 - a) + corner[1] * a) * (1.0 - b) + (corner[2] * (1.0 - a) + corner[3] * a) * b;
}

/* GUSTS: the wind's strength in frame t, in [0, 1]: a smooth random envelope over about 16 frames,
 * cubed, so that calm spells are long and bursts short. */
static double gust_strength(const glcv_synth *s, double t)
{
    double e = value_noise(t, 0.5, 16.0, mix64((uint64_t)s->params.seed ^ 0x6057ull));
    return e * e * e;
}

/* Foliage swaying by a few pixels (at rest, t < 0: in its middle position); with GUSTS the swing
 * is 0.3x in calm spells and up to 3.3x in bursts, with a fast flutter on top. */
static void foliage_pixel(const glcv_synth *s, int x, int y, double t, double rgb[3])
{
    double dx = 0.0, dy = 0.0;
    if (t >= 0.0) {
        double g = 1.0, flutter = 0.0;
        if (s->params.challenges & GLCV_SYNTH_GUSTS) {
            double e = gust_strength(s, t);
            g = 0.3 + 3.0 * e;
            flutter = 1.5 * e * sin_turns(t / 3.1);
        }
        dx = s->unit * (g * (2.5 * sin_turns(t / 23.0) + 1.0 * sin_turns(t / 7.3 + 0.3)) + flutter);
        dy = s->unit * g * 0.8 * sin_turns(t / 31.0 + 0.6);
    }
    double u = (double)x + 0.5 - dx, v = (double)y + 0.5 - dy;
    double n = 0.7 * value_noise(u, v, 4.0 * s->unit, 0xF011A6E0ull) + 0.3 * value_noise(u, v, 2.0 * s->unit, 0x1EAF5ull);
    n = clampd((n - 0.5) * 2.2 + 0.5, 0.0, 1.0); /* leaves and the gaps between them */
    rgb[0] = 25.0 + 85.0 * n;
    rgb[1] = 60.0 + 100.0 * n;
    rgb[2] = 28.0 + 42.0 * n;
}

/* The brightness factor of flickering patch `i` in frame t (1 at rest). */
static double flicker_gain(const glcv_synth *s, int i, double t)
{
    if (t < 0.0)
        return 1.0;
    uint64_t h = mix64(mix64((uint64_t)s->params.seed ^ 0xF1C4E700ull) ^ ((uint64_t)(int64_t)t * 4u + (uint64_t)i));
    double u = (double)(h >> 11) * (2.0 / 9007199254740992.0) - 1.0;
    return 1.0 + 0.3 * u;
}

/* The background colour of pixel (x, y) in frame t, gain 1: the still background and, in the
 * DYNAMIC scene, its moving parts (t < 0: at rest). */
static void scene_pixel(const glcv_synth *s, int x, int y, double t, double rgb[3])
{
    if (s->params.scene == GLCV_SYNTH_DYNAMIC) {
        if (in_rect(&s->water, x, y)) {
            water_pixel(s, x, y, t, rgb);
            return;
        }
        if (in_rect(&s->foliage, x, y)) {
            foliage_pixel(s, x, y, t, rgb);
            return;
        }
        for (int i = 0; i < FLICKER_PATCHES; i++) {
            if (in_rect(&s->flicker[i], x, y)) {
                background_pixel(s, x, y, rgb);
                double k = flicker_gain(s, i, t);
                for (int c = 0; c < 3; c++)
                    rgb[c] *= k;
                return;
            }
        }
    }
    background_pixel(s, x, y, rgb);
}

/* The time along object i's path in frame `frame`: the frame itself, or with STOP_GO the frames
 * it has moved in: it moves for `move` frames, then stands for `stop`, from a point of that cycle
 * of its own. */
static double motion_time(const glcv_synth *s, int i, int frame)
{
    if (!(s->params.challenges & GLCV_SYNTH_STOP_GO))
        return (double)frame;
    uint64_t h = mix64(mix64((uint64_t)s->params.seed ^ 0x5709C0ull) ^ (uint64_t)i);
    long move = 18 + (long)(h % 23u), stop = 12 + (long)((h >> 16) % 29u), cycle = move + stop;
    long f = (long)frame + (long)((h >> 32) % (uint64_t)cycle);
    long rem = f % cycle;
    return (double)(f / cycle * move + (rem < move ? rem : move));
}

static void place_objects(const glcv_synth *s, int frame, placed_object *out)
{
    int w = s->params.width, h = s->params.height;
    double unit = (double)(w < h ? w : h);
    for (int i = 0; i < s->params.objects; i++) {
        const object_spec *o = &OBJECTS[i];
        placed_object *p = &out[i];
        double t = motion_time(s, i, frame);
        p->spec = o;
        p->x = (o->cx + o->ax * sin_turns(t / o->px + o->phx)) * (double)w;
        p->y = (o->cy + o->ay * sin_turns(t / o->py + o->phy)) * (double)h;
        p->hw = o->size * unit;
        p->hh = o->shape == SHAPE_BOX ? p->hw * o->aspect : p->hw;
        p->r2 = p->hw * p->hw;
        /* Pixel centres x + 0.5 within [x - hw, x + hw], with one pixel of slack. */
        double fx0 = floor(p->x - p->hw - 0.5) - 1.0, fx1 = floor(p->x + p->hw - 0.5) + 1.0;
        double fy0 = floor(p->y - p->hh - 0.5) - 1.0, fy1 = floor(p->y + p->hh - 0.5) + 1.0;
        p->x0 = (int)clampd(fx0, 0.0, (double)w);
        p->x1 = (int)clampd(fx1, -1.0, (double)(w - 1));
        p->y0 = (int)clampd(fy0, 0.0, (double)h);
        p->y1 = (int)clampd(fy1, -1.0, (double)(h - 1));
    }
}

/* Whether the object covers the centre of pixel (x, y); if so, its colour there. */
static int object_pixel(const placed_object *p, int x, int y, double rgb[3])
{
    if (x < p->x0 || x > p->x1 || y < p->y0 || y > p->y1)
        return 0;
    double dx = (double)x + 0.5 - p->x, dy = (double)y + 0.5 - p->y;
    if (p->spec->shape == SHAPE_DISC) {
        if (dx * dx + dy * dy > p->r2)
            return 0;
    } else if (fabs(dx) > p->hw || fabs(dy) > p->hh) {
        return 0;
    }
    /* Lit from the upper left: brighter there, darker at the lower right. */
    double k = 1.0 - p->spec->shade * (0.6 * dx / p->hw + 0.8 * dy / p->hh);
    rgb[0] = p->spec->r * k;
    rgb[1] = p->spec->g * k;
    rgb[2] = p->spec->b * k;
    return 1;
}

/* ---- Tracking scenes ---- */

/* The target's half width and height at scale 1, in units of min(width, height). */
#define FIGURE_HW 0.05
#define FIGURE_HH 0.11
/* FAST: frames from one random point to the next. */
#define FAST_LEG 8

/* A figure in one frame: centre and half sizes in pixels. */
typedef struct figure {
    double x, y, hw, hh;
} figure;

static double hash01(uint64_t key)
{
    return (double)(mix64(key) >> 11) * (1.0 / 9007199254740992.0);
}

static double scene_time(const glcv_synth *s, int index)
{
    return s->params.frames > 1 ? (double)index / (double)(s->params.frames - 1) : 0.0;
}

static double figure_unit(const glcv_synth *s)
{
    return (double)(s->params.width < s->params.height ? s->params.width : s->params.height);
}

/* The target in frame `index`. */
static figure target_figure(const glcv_synth *s, int index)
{
    double w = (double)s->params.width, h = (double)s->params.height, t = scene_time(s, index);
    double x = 0.5 * w, y = 0.5 * h, k = 1.0;
    switch (s->params.track) {
    case GLCV_SYNTH_TRACK_SCALE:
        x = (0.25 + 0.5 * t) * w;
        y = (0.5 + 0.08 * sin_turns(t)) * h;
        k = 0.7 + 0.9 * sin_turns(0.5 * t);
        break;
    case GLCV_SYNTH_TRACK_OCCLUSION:
        x = (0.15 + 0.7 * t) * w;
        y = 0.55 * h;
        break;
    case GLCV_SYNTH_TRACK_ILLUMINATION:
        x = (0.5 + 0.3 * sin_turns(t)) * w;
        y = (0.5 + 0.15 * sin_turns(2.0 * t)) * h;
        break;
    case GLCV_SYNTH_TRACK_DISTRACTOR:
        x = (0.2 + 0.6 * t) * w;
        y = 0.42 * h;
        break;
    default: { /* FAST: straight legs between random points */
        int leg = index / FAST_LEG;
        double f = (double)(index % FAST_LEG) / FAST_LEG;
        uint64_t key = mix64((uint64_t)s->params.seed ^ 0xFA57F16Eull);
        double x0 = 0.15 + 0.7 * hash01(key ^ ((uint64_t)leg << 1)), y0 = 0.25 + 0.5 * hash01(key ^ ((uint64_t)leg << 1 | 1));
        double x1 = 0.15 + 0.7 * hash01(key ^ ((uint64_t)(leg + 1) << 1)),
               y1 = 0.25 + 0.5 * hash01(key ^ ((uint64_t)(leg + 1) << 1 | 1));
        x = (x0 + (x1 - x0) * f) * w;
        y = (y0 + (y1 - y0) * f) * h;
        break;
    }
    }
    figure fig = {x, y, FIGURE_HW * figure_unit(s) * k, FIGURE_HH * figure_unit(s) * k};
    return fig;
}

/* DISTRACTOR: the figure that looks the same, walking the other way just below the target. */
static figure distractor_figure(const glcv_synth *s, int index)
{
    double t = scene_time(s, index), u = figure_unit(s);
    figure fig = {(0.8 - 0.6 * t) * s->params.width, 0.42 * s->params.height + 2.4 * FIGURE_HH * u, FIGURE_HW * u,
                  FIGURE_HH * u};
    return fig;
}

/* Whether the figure covers the centre of pixel (x, y); if so, its colour there: a head, a
 * striped shirt with the arms, trousers with a gap between the legs, lit from the left. */
static int figure_pixel(const figure *f, int x, int y, double rgb[3])
{
    double u = ((double)x + 0.5 - f->x) / f->hw, v = ((double)y + 0.5 - f->y) / f->hh;
    if (fabs(u) > 1.0 || fabs(v) > 1.0)
        return 0;
    double c[3];
    if (v < -0.62) {
        double a = u / 0.45, b = (v + 0.81) / 0.19;
        if (a * a + b * b > 1.0)
            return 0;
        c[0] = 205, c[1] = 165, c[2] = 135;
    } else if (v < 0.12) {
        double stripe = sin_turns((v + 0.62) * 3.0) > 0.0 ? 1.15 : 0.85;
        c[0] = 185 * stripe, c[1] = 48 * stripe, c[2] = 42 * stripe;
    } else {
        if (fabs(u) < 0.14)
            return 0;
        c[0] = 42, c[1] = 52, c[2] = 118;
    }
    double shade = 1.0 - 0.15 * u;
    for (int i = 0; i < 3; i++)
        rgb[i] = c[i] * shade;
    return 1;
}

/* OCCLUSION: the pole in the middle, twice the figure's width: grey with vertical grooves. */
static int pole_pixel(const glcv_synth *s, int x, double rgb[3])
{
    double half = 2.0 * FIGURE_HW * figure_unit(s), d = (double)x + 0.5 - 0.5 * s->params.width;
    if (fabs(d) > half)
        return 0;
    double g = 120.0 + 25.0 * sin_turns(d / half * 1.5);
    rgb[0] = g;
    rgb[1] = g * 0.97;
    rgb[2] = g * 0.92;
    return 1;
}

/* ILLUMINATION: the light at column x of frame `index`: swinging +-45 % over the sequence, and
 * half in the shadow band. */
static double light(const glcv_synth *s, int x, int index)
{
    double k = 1.0 + 0.45 * sin_turns(2.0 * scene_time(s, index));
    double fx = ((double)x + 0.5) / s->params.width;
    return fx >= 0.58 && fx < 0.74 ? 0.5 * k : k;
}

/* A tracking scene's pixel: its colour (gain 1) and whether the target shows there. */
static int track_pixel(const glcv_synth *s, const figure *target, const figure *other, int x, int y, double rgb[3])
{
    if (s->params.track == GLCV_SYNTH_TRACK_OCCLUSION && pole_pixel(s, x, rgb))
        return 0;
    if (figure_pixel(target, x, y, rgb))
        return 1;
    if (!other || !figure_pixel(other, x, y, rgb))
        background_pixel(s, x, y, rgb);
    return 0;
}

glcv_status glcv_synth_track_box(const glcv_synth *synth, int index, double box[4])
{
    if (!synth || !box || synth->params.track == GLCV_SYNTH_TRACK_DEFAULT || index < 0 ||
        index >= synth->params.frames)
        return GLCV_ERROR_INVALID_ARGUMENT;
    figure f = target_figure(synth, index);
    box[0] = f.x - f.hw;
    box[1] = f.y - f.hh;
    box[2] = 2.0 * f.hw;
    box[3] = 2.0 * f.hh;
    return GLCV_OK;
}

/* JITTER: where the camera points in frame `index`: frame pixel (x, y) shows the scene at
 * (x + *ox, y + *oy); 0, 0 in frame 0 and without JITTER. */
static void jitter_offset(const glcv_synth *s, int index, int *ox, int *oy)
{
    *ox = *oy = 0;
    if (!(s->params.challenges & GLCV_SYNTH_JITTER) || index == 0)
        return;
    uint64_t h = mix64(mix64((uint64_t)s->params.seed ^ 0x717E4ull) ^ (uint64_t)(uint32_t)index);
    *ox = (int)(h % 5u) - 2;
    *oy = (int)((h >> 8) % 5u) - 2;
}

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static uint8_t to_byte(double v)
{
    return (uint8_t)clampd(floor(v + 0.5), 0.0, 255.0);
}

/* ---- API ---- */

static glcv_status resolve_params(const glcv_synth_params *in, glcv_synth_params *p)
{
    *p = *in;
    GLCV_DEFAULT(p->width, 320);
    GLCV_DEFAULT(p->height, 240);
    GLCV_DEFAULT(p->frames, 60);
    GLCV_DEFAULT(p->objects, 4);
    GLCV_DEFAULT(p->seed, 1);
    GLCV_DEFAULT(p->scene, GLCV_SYNTH_STATIC);
    if (p->scene != GLCV_SYNTH_STATIC && p->scene != GLCV_SYNTH_DYNAMIC)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (p->track < GLCV_SYNTH_TRACK_DEFAULT || p->track > GLCV_SYNTH_TRACK_FAST)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if ((p->challenges & ~(unsigned int)GLCV_SYNTH_CHALLENGES) ||
        ((p->challenges & GLCV_SYNTH_GUSTS) && p->scene != GLCV_SYNTH_DYNAMIC) ||
        (p->challenges && p->track != GLCV_SYNTH_TRACK_DEFAULT))
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (p->width < 1 || p->width > MAX_SIZE || p->height < 1 || p->height > MAX_SIZE || p->frames < 1 ||
        p->objects < 1 || p->objects > MAX_OBJECTS)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (!glcv_finite(p->noise_sigma) || !glcv_finite(p->illumination_gain))
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (p->noise_sigma == 0.0f)
        p->noise_sigma = 2.0f;
    if (p->noise_sigma > 255.0f)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (p->illumination_gain == 0.0f)
        p->illumination_gain = 0.85f;
    if (p->illumination_gain < 0.0f || p->illumination_gain > 16.0f)
        return GLCV_ERROR_INVALID_ARGUMENT;
    return GLCV_OK;
}

glcv_status glcv_synth_create(const glcv_synth_params *params, glcv_synth **out)
{
    if (out)
        *out = NULL;
    if (!params || !out)
        return GLCV_ERROR_INVALID_ARGUMENT;
    glcv_synth_params p;
    glcv_status st = resolve_params(params, &p);
    if (st != GLCV_OK)
        return st;

    glcv_synth *s = calloc(1, sizeof *s);
    if (!s)
        return GLCV_ERROR_OUT_OF_MEMORY;
    s->params = p;
    s->gain_step = ((double)p.illumination_gain - 1.0) / (double)(p.frames > 1 ? p.frames - 1 : 1);
    size_t w = (size_t)p.width, h = (size_t)p.height;
    s->col_gx = malloc(3 * w * sizeof(double));
    s->row_gy = malloc(3 * h * sizeof(double));
    if (!s->col_gx || !s->row_gy) {
        glcv_synth_destroy(&s);
        return GLCV_ERROR_OUT_OF_MEMORY;
    }
    s->col_wave = s->col_gx + w;
    s->col_fine = s->col_gx + 2 * w;
    s->row_wave = s->row_gy + h;
    s->row_fine = s->row_gy + 2 * h;
    s->unit = (double)(p.width < p.height ? p.width : p.height) / 240.0;
    if (p.scene == GLCV_SYNTH_DYNAMIC) {
        s->water = fraction_rect(s, 0.0, 0.45, 0.80, 1.0);
        s->foliage = fraction_rect(s, 0.64, 0.0, 1.0, 0.38);
        s->flicker[0] = fraction_rect(s, 0.04, 0.06, 0.16, 0.20);
        s->flicker[1] = fraction_rect(s, 0.22, 0.10, 0.30, 0.30);
    }
    for (size_t x = 0; x < w; x++) {
        double gx = ((double)x + 0.5) / (double)p.width;
        s->col_gx[x] = gx;
        s->col_wave[x] = sin_turns(gx * TILES_X * 0.5);
        s->col_fine[x] = sin_turns((double)x / 5.3);
    }
    for (size_t y = 0; y < h; y++) {
        double gy = ((double)y + 0.5) / (double)p.height;
        s->row_gy[y] = gy;
        s->row_wave[y] = sin_turns(gy * TILES_Y * 0.5);
        s->row_fine[y] = cos_turns((double)y / 7.1);
    }
    *out = s;
    return GLCV_OK;
}

void glcv_synth_destroy(glcv_synth **synth)
{
    if (!synth || !*synth)
        return;
    glcv_synth *s = *synth;
    free(s->col_gx);
    free(s->row_gy);
    free(s);
    *synth = NULL;
}

void glcv_synth_get_params(const glcv_synth *synth, glcv_synth_params *out)
{
    if (!out)
        return;
    if (!synth) {
        memset(out, 0, sizeof *out);
        return;
    }
    *out = synth->params;
}

/* Checks an output colour image (RGB8 or RGBA8 of the generator's size). */
static glcv_status check_colour_out(const glcv_synth *s, const glcv_image *img)
{
    if (glcv_image_check(img) != GLCV_OK)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (img->format != GLCV_PIXEL_RGB8 && img->format != GLCV_PIXEL_RGBA8)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (img->width != s->params.width || img->height != s->params.height)
        return GLCV_ERROR_SIZE_MISMATCH;
    return GLCV_OK;
}

glcv_status glcv_synth_background(const glcv_synth *synth, glcv_image *out)
{
    if (!synth)
        return GLCV_ERROR_INVALID_ARGUMENT;
    glcv_status st = check_colour_out(synth, out);
    if (st != GLCV_OK)
        return st;
    int bpp = glcv_pixel_format_size(out->format);
    size_t stride = glcv_image_stride(out);
    for (int y = 0; y < synth->params.height; y++) {
        uint8_t *d = out->data + (size_t)y * stride;
        for (int x = 0; x < synth->params.width; x++, d += bpp) {
            double rgb[3];
            scene_pixel(synth, x, y, -1.0, rgb);
            d[0] = to_byte(rgb[0]);
            d[1] = to_byte(rgb[1]);
            d[2] = to_byte(rgb[2]);
            if (bpp == 4)
                d[3] = 255;
        }
    }
    return GLCV_OK;
}

glcv_status glcv_synth_frame(const glcv_synth *synth, int index, glcv_image *frame, glcv_image *truth)
{
    if (!synth || index < 0 || index >= synth->params.frames)
        return GLCV_ERROR_INVALID_ARGUMENT;
    glcv_status st = check_colour_out(synth, frame);
    if (st != GLCV_OK)
        return st;
    if (truth) {
        if (glcv_image_check(truth) != GLCV_OK || truth->format != GLCV_PIXEL_GRAY8)
            return GLCV_ERROR_INVALID_ARGUMENT;
        if (truth->width != synth->params.width || truth->height != synth->params.height)
            return GLCV_ERROR_SIZE_MISMATCH;
    }

    const glcv_synth_params *p = &synth->params;
    const int tracking = p->track != GLCV_SYNTH_TRACK_DEFAULT;
    placed_object objs[MAX_OBJECTS];
    int n_objects = tracking ? 0 : p->objects;
    if (!tracking)
        place_objects(synth, index, objs);
    figure target = tracking ? target_figure(synth, index) : (figure){0, 0, 0, 0};
    figure other = p->track == GLCV_SYNTH_TRACK_DISTRACTOR ? distractor_figure(synth, index) : target;
    double gain = 1.0 + synth->gain_step * (double)index;
    int noisy = p->noise_sigma > 0.0f;
    double sigma = (double)p->noise_sigma;
    uint64_t frame_key = mix64(mix64((uint64_t)p->seed) ^ (uint64_t)(uint32_t)index);

    int bpp = glcv_pixel_format_size(frame->format);
    size_t stride = glcv_image_stride(frame);
    size_t tstride = truth ? glcv_image_stride(truth) : 0;
    int ox, oy; /* the camera's shake: the scene point each pixel shows (edges repeated) */
    jitter_offset(synth, index, &ox, &oy);
    for (int y = 0; y < p->height; y++) {
        int sy = clampi(y + oy, 0, p->height - 1);
        /* The objects that reach this row, top first. */
        const placed_object *row_objs[MAX_OBJECTS];
        int nrow = 0;
        for (int i = 0; i < n_objects; i++)
            if (sy >= objs[i].y0 && sy <= objs[i].y1)
                row_objs[nrow++] = &objs[i];
        uint8_t *d = frame->data + (size_t)y * stride;
        uint8_t *t = truth ? truth->data + (size_t)y * tstride : NULL;
        for (int x = 0; x < p->width; x++, d += bpp) {
            int sx = clampi(x + ox, 0, p->width - 1);
            double rgb[3], k = gain;
            int covered = 0;
            if (tracking) {
                covered = track_pixel(synth, &target, p->track == GLCV_SYNTH_TRACK_DISTRACTOR ? &other : NULL, x, y,
                                      rgb);
                if (p->track == GLCV_SYNTH_TRACK_ILLUMINATION)
                    k *= light(synth, x, index);
            }
            for (int i = 0; i < nrow && !covered; i++)
                covered = object_pixel(row_objs[i], sx, sy, rgb);
            if (!covered && !tracking)
                scene_pixel(synth, sx, sy, (double)index, rgb);
            if (t)
                t[x] = covered ? 255 : 0;
            uint64_t pixel = (uint64_t)y * (uint64_t)p->width + (uint64_t)x;
            for (int c = 0; c < 3; c++) {
                double v = rgb[c] * k;
                if (noisy)
                    v += sigma * gaussian(mix64(frame_key ^ (pixel * 4u + (uint64_t)c)));
                d[c] = to_byte(v);
            }
            if (bpp == 4)
                d[3] = 255;
        }
    }
    return GLCV_OK;
}

glcv_status glcv_synth_dynamic_region(const glcv_synth *synth, glcv_image *out)
{
    if (!synth || glcv_image_check(out) != GLCV_OK || out->format != GLCV_PIXEL_GRAY8)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (out->width != synth->params.width || out->height != synth->params.height)
        return GLCV_ERROR_SIZE_MISMATCH;
    size_t stride = glcv_image_stride(out);
    for (int y = 0; y < out->height; y++)
        memset(out->data + (size_t)y * stride, 0, (size_t)out->width);
    if (synth->params.scene != GLCV_SYNTH_DYNAMIC)
        return GLCV_OK;
    const pixel_rect *rects[2 + FLICKER_PATCHES] = {&synth->water, &synth->foliage, &synth->flicker[0],
                                                    &synth->flicker[1]};
    int margin = synth->params.challenges & GLCV_SYNTH_JITTER ? 3 : 1;
    for (int i = 0; i < 2 + FLICKER_PATCHES; i++) {
        const pixel_rect *r = rects[i];
        int x0 = clampi(r->x0 - margin, 0, out->width), x1 = clampi(r->x1 + margin, 0, out->width);
        int y0 = clampi(r->y0 - margin, 0, out->height), y1 = clampi(r->y1 + margin, 0, out->height);
        for (int y = y0; y < y1; y++)
            memset(out->data + (size_t)y * stride + (size_t)x0, 255, (size_t)(x1 > x0 ? x1 - x0 : 0));
    }
    return GLCV_OK;
}
