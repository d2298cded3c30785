/* The correlation-filter method's arithmetic (see track_dcf.c for the method), shared word for
 * word by the CPU implementation (track_dcf.c) and the CUDA kernel (cuda/track_dcf.cu): the
 * object's state, the per-element and per-cell steps both run in the same order, and the
 * decisions of a frame (lost, the step, the velocity, the scale). Everything is float or double
 * + - * / and sqrt, with no libm transcendental: the orientation is a polynomial (dcf_turns), and
 * the trigonometric tables, the labels and the scale factors are made once on the host. The CUDA
 * side is compiled with --fmad=false and the C side with -ffp-contract=off, so that no a*b+c is
 * fused: the engines agree but for the order of a few float sums of the CUDA kernel (none here).
 *
 * Plain C, also valid CUDA C++: functions are `static inline` (plus __host__ __device__ under
 * nvcc). */
#ifndef GLCV_TRACK_DCF_MATH_H
#define GLCV_TRACK_DCF_MATH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define GLCV_DM static __host__ __device__ __forceinline__
#else
#include <math.h>
#define GLCV_DM static inline
#endif

#define DCF_N 32                 /* cells per template side (a power of two) */
#define DCF_CELL 4               /* template pixels per cell side */
#define DCF_T (DCF_N * DCF_CELL) /* template pixels per side */
#define DCF_CELLS (DCF_N * DCF_N)
#define DCF_CH 32                /* feature channels: 18 + 9 orientations, 4 textures, intensity */
#define DCF_SCALES 17
#define DCF_SCALE_STEP 1.03
#define DCF_SN 6                            /* scale sample: cells per side */
#define DCF_ST (DCF_SN * DCF_CELL)          /* scale sample: pixels per side */
#define DCF_SDIM (DCF_SN * DCF_SN * DCF_CH) /* scale sample: its vector's length */
#define DCF_SHALF (DCF_SCALES / 2 + 1)      /* scale spectra kept: real samples' are symmetric */
#define DCF_HBINS 16                        /* colour bins per channel */
#define DCF_HIST (DCF_HBINS * DCF_HBINS * DCF_HBINS)
#define DCF_LAMBDA 1e-3f                    /* translation filter regularisation (DSST, Staple) */
#define DCF_SCALE_LAMBDA 1e-2f              /* scale filter regularisation (DSST) */
#define DCF_RATE 0.01f                      /* translation filter learning rate (Staple) */
#define DCF_SCALE_RATE 0.025f               /* scale filter learning rate (DSST) */
#define DCF_COLOUR_RATE 0.04f               /* colour model learning rate (Staple) */
#define DCF_MERGE 0.3f                      /* weight of the colour response (Staple) */
#define DCF_SIGMA_FACTOR (1.0 / 16.0)       /* label sigma: target size in cells / 16 (DSST) */
#define DCF_LOST_RATIO 0.3                  /* lost below this share of the mean ratio */
#define DCF_UPDATE_RATIO 0.45               /* models learn at or above this share (LMCF) */
#define DCF_PSR_RATE 0.1                    /* the mean ratio's rate */
#define DCF_VELOCITY_RATE 0.3               /* the velocity's rate (coasting while lost) */
#define DCF_MAX_SUPER 2                     /* resampling: at most 2 x 2 samples per pixel */
#define DCF_LEARN_EVERY 2                   /* models learn on every 2nd sure frame (ECO's sparse updates) */

typedef struct dcf_c {
    float re, im;
} dcf_c;

/* One object: its box, its filters and colour model. Plain data: the CUDA engine keeps a copy
 * per object in device memory, made on the host by glcv_track_dcf_start. */
struct glcv_track_dcf {
    int started;     /* the models were learned from a frame */
    int found;       /* frames found (tracked, not lost) */
    int lost_frames; /* consecutive frames lost */
    int phase;       /* learns on the sure frames where found + phase is a multiple of DCF_LEARN_EVERY */
    double cx, cy;   /* the box's centre (pixel centres at +0.5) */
    double tw, th;   /* the box's size at scale 1 */
    double scale;    /* the box's size now: tw * scale x th * scale */
    double zx, zy;   /* frame pixels per template pixel at scale 1 */
    double min_scale, max_scale;
    double psr;      /* the last frame's peak-to-sidelobe ratio (0 on a learning frame) */
    double mean_psr; /* its running mean over the frames found */
    double vx, vy;   /* the centre's velocity, pixels a frame, over the confident frames */
    double frame_w, frame_h;
    double scale_factor[DCF_SCALES]; /* DCF_SCALE_STEP^(k - DCF_SCALES / 2) */
    float label[DCF_CELLS];          /* Y: the label's transform (real: the label is even) */
    dcf_c a[DCF_CH][DCF_CELLS];      /* A_c */
    float b[DCF_CELLS];              /* B */
    float fg[DCF_HIST], bg[DCF_HIST];
    dcf_c slabel[DCF_SHALF];         /* the scale label's DFT, frequencies 0..DCF_SCALES / 2 */
    dcf_c sa[DCF_SHALF][DCF_SDIM];   /* frequency-major: the engines run over the dimensions */
    float sb[DCF_SHALF];
};

/* The trigonometric tables (made on the host, glcv_track_dcf_tables_init). */
typedef struct glcv_track_dcf_tables {
    dcf_c twiddle[DCF_N / 2];   /* exp(-2 pi i k / DCF_N) */
    dcf_c stwiddle[DCF_SCALES]; /* exp(-2 pi i k / DCF_SCALES) */
    float hann[DCF_N], shann[DCF_SCALES];
} glcv_track_dcf_tables;

/* One object's frame: what the engines hand back. */
typedef struct glcv_track_dcf_result {
    double box[4];    /* centre x, y (pixel centres at +0.5), width, height */
    double window[4]; /* the search window of the next frame: centre x, y, width, height */
    double psr;       /* the filter response's peak-to-sidelobe ratio (0 on a learning frame) */
    int lost;         /* the ratio was too low: the box coasted and no model changed */
    int pad;
} glcv_track_dcf_result;

/* ---- transforms ------------------------------------------------------------------------------- */

GLCV_DM dcf_c dcf_mul(dcf_c a, dcf_c b)
{
    dcf_c r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    return r;
}

/* conj(a) b */
GLCV_DM dcf_c dcf_mulc(dcf_c a, dcf_c b)
{
    dcf_c r = {a.re * b.re + a.im * b.im, a.re * b.im - a.im * b.re};
    return r;
}

/* In-place radix-2 FFTs of `lines` lines of DCF_N values, element i of line x at a[i * stride + x]
 * (one line: lines 1); the inverse without the 1/n. The bit-reversal permutation, then the
 * butterflies of lengths 2, 4, ..., DCF_N, each u + v w and u - v w with w = tw[k * DCF_N / len]
 * (conjugated for the inverse); the innermost loop runs over the lines (the CPU vectorises it, the
 * CUDA kernel runs a line's butterflies in a warp or in a thread's registers, value for value). */
GLCV_DM void dcf_fft_lines(dcf_c *a, int stride, int lines, int inverse, const dcf_c *tw)
{
    const int n = DCF_N;
    for (int i = 1, j = 0; i < n; i++) {
        int bit = n >> 1;
        for (; j & bit; bit >>= 1)
            j ^= bit;
        j ^= bit;
        if (i < j)
            for (int x = 0; x < lines; x++) {
                dcf_c t = a[i * stride + x];
                a[i * stride + x] = a[j * stride + x];
                a[j * stride + x] = t;
            }
    }
    for (int len = 2; len <= n; len <<= 1) {
        int step = n / len, half = len / 2;
        for (int i = 0; i < n; i += len)
            for (int k = 0; k < half; k++) {
                dcf_c w = tw[k * step];
                if (inverse)
                    w.im = -w.im;
                dcf_c *lo = a + (i + k) * stride, *hi = a + (i + k + half) * stride;
                for (int x = 0; x < lines; x++) {
                    dcf_c u = lo[x], v = dcf_mul(hi[x], w);
                    dcf_c sum = {u.re + v.re, u.im + v.im}, diff = {u.re - v.re, u.im - v.im};
                    lo[x] = sum;
                    hi[x] = diff;
                }
            }
    }
}

/* The spectra of channels c and c + 1 at frequency (y, x) from z, the transform of
 * c + i (c + 1): X_c = (Z[k] + conj(Z[-k])) / 2, X_c+1 = (Z[k] - conj(Z[-k])) / 2i
 * (dcf_split_values: from p = Z[k] and q = Z[-k]). */
GLCV_DM void dcf_split_values(dcf_c p, dcf_c q, dcf_c *a, dcf_c *b)
{
    a->re = 0.5f * (p.re + q.re);
    a->im = 0.5f * (p.im - q.im);
    b->re = 0.5f * (p.im + q.im);
    b->im = 0.5f * (q.re - p.re);
}

GLCV_DM void dcf_split(const dcf_c *z, int y, int x, dcf_c *a, dcf_c *b)
{
    dcf_split_values(z[y * DCF_N + x], z[((DCF_N - y) % DCF_N) * DCF_N + (DCF_N - x) % DCF_N], a, b);
}

/* Frequency k (0..DCF_SCALES / 2) of the DFT over the scales of real samples x[i * stride]. */
GLCV_DM dcf_c dcf_dft_scale(const float *x, size_t stride, int k, const dcf_c *tw)
{
    float re = 0, im = 0;
    for (int i = 0, e = 0; i < DCF_SCALES; i++) { /* e = i k mod DCF_SCALES */
        dcf_c w = tw[e];
        re += x[i * stride] * w.re;
        im += x[i * stride] * w.im;
        e += k;
        e = e >= DCF_SCALES ? e - DCF_SCALES : e;
    }
    dcf_c r = {re, im};
    return r;
}

/* ---- sampling ----------------------------------------------------------------------------------- */

/* Sub-samples per axis for a template pixel covering `step` frame pixels: ceil(step), 1..4. */
GLCV_DM int dcf_super(double step)
{
    int k = (int)ceil(step - 1e-9);
    return k < 1 ? 1 : k > DCF_MAX_SUPER ? DCF_MAX_SUPER : k;
}

/* The bilinear tap of output pixel i (-1..n) and sub-sample a (0..k-1) along an axis of `size`
 * frame pixels: sample centre c + (i + 0.5 - n / 2) step + ((a + 0.5) / k - 0.5) step; the two
 * frame pixels (edges repeated) and the weight of the second. */
GLCV_DM void dcf_tap_at(double c, double step, int n, int k, int size, int i, int a, int *i0, int *i1, float *w)
{
    double x = c + (i + 0.5 - n * 0.5) * step + ((a + 0.5) / k - 0.5) * step - 0.5;
    double f = floor(x);
    int x0 = (int)f, x1 = x0 + 1;
    *i0 = x0 < 0 ? 0 : x0 > size - 1 ? size - 1 : x0;
    *i1 = x1 < 0 ? 0 : x1 > size - 1 ? size - 1 : x1;
    *w = (float)(x - f);
}

/* A bilinear sample from its four pixels' values. */
GLCV_DM float dcf_bilerp(float p00, float p01, float p10, float p11, float wx, float wy)
{
    float top = p00 + (p01 - p00) * wx, bottom = p10 + (p11 - p10) * wx;
    return top + (bottom - top) * wy;
}

/* ---- HOG cells ------------------------------------------------------------------------------------ */

/* atan2(y, x) / (2 pi) in [0, 1), within 2e-5 turns: an odd polynomial of the octant's ratio. */
GLCV_DM float dcf_turns(float y, float x)
{
    float ax = fabsf(x), ay = fabsf(y);
    float mx = ax > ay ? ax : ay, mn = ax > ay ? ay : ax;
    float r = mx > 0 ? mn / mx : 0.0f, r2 = r * r;
    /* atan(r), r in [0, 1] (minimax, error below 1e-5 rad) */
    float a = r * (0.99997726f +
                   r2 * (-0.33262347f + r2 * (0.19354346f + r2 * (-0.11643287f + r2 * (0.05265332f + r2 * -0.01172120f)))));
    if (ay > ax)
        a = 1.57079633f - a;
    if (x < 0)
        a = 3.14159265f - a;
    if (y < 0)
        a = 6.28318531f - a;
    float t = a * 0.15915494f;
    return t >= 1.0f ? 0.0f : t;
}

/* The gradient of the patch pixel at p (an RGB patch of rows of pw pixels): of the colour channel
 * with the largest (the first on ties), in 18 contrast-sensitive orientation bins - its
 * magnitude, its orientation's lower bin and that bin's share of it, the rest going to the next
 * bin (dcf_hist_add) - and the pixel's R + G + B (*gray). A pixel without gradient has magnitude
 * 0, bin 0, share 0, and adds nothing. Selects, not branches: the CPU vectorises it. */
GLCV_DM void dcf_pixel_gradient(const float *p, int pw, float *mag, int *bin, float *share, float *gray)
{
    float best = -1, gx = 0, gy = 0;
    for (int c = 0; c < 3; c++) {
        float dx = p[3 + c] - p[-3 + c], dy = p[3 * pw + c] - p[-3 * pw + c];
        float m = dx * dx + dy * dy;
        int more = m > best;
        best = more ? m : best;
        gx = more ? dx : gx;
        gy = more ? dy : gy;
    }
    float a = dcf_turns(gy, gx) * 18.0f;
    int b0 = (int)a;
    *share = a - (float)b0;
    *bin = b0 >= 18 ? 0 : b0;
    *mag = sqrtf(best);
    *gray = p[0] + p[1] + p[2];
}

/* Adds a pixel's gradient (dcf_pixel_gradient) to a cell's histogram, bin o at hist[o * os]. A
 * cell's histogram and R + G + B sum take its DCF_CELL x DCF_CELL pixels in row order. */
GLCV_DM void dcf_hist_add(float *hist, int os, float mag, int bin, float share)
{
    int b1 = bin + 1 == 18 ? 0 : bin + 1;
    hist[bin * os] += (1.0f - share) * mag;
    hist[b1 * os] += share * mag;
}

/* A cell's gradient energy: the squares of its 9 contrast-insensitive orientations (bin o of its
 * histogram at hist[o * os]). */
GLCV_DM float dcf_cell_energy(const float *hist, int os)
{
    float e = 0;
    for (int o = 0; o < 9; o++) {
        float s = hist[o * os] + hist[(o + 9) * os];
        e += s * s;
    }
    return e;
}

GLCV_DM float dcf_truncate(float v)
{
    return v < 0.2f ? v : 0.2f;
}

/* Cell (cx, cy)'s DCF_CH features (channel k at feat[k * nc], nc = cw * ch cells) from the cells'
 * histograms (cell c's bin o at hist[c * cs + o * os]) and energies, as Felzenszwalb et al.:
 * normalised by each of the four 2 x 2 blocks of cells that hold it (edges repeated) and
 * truncated at 0.2: 18 sensitive and 9 insensitive orientations (sums over the four), 4 textures
 * (sums over the orientations), and the cell's mean intensity from its R + G + B sum, in
 * -0.5..0.5. */
GLCV_DM void dcf_cell_features(const float *hist, int cs, int os, const float *energy, int cw, int ch, int cx, int cy,
                               float gray, float *feat)
{
    const int nc = cw * ch, c = cy * cw + cx;
    float n[4];
    for (int k = 0; k < 4; k++) {
        int x0 = cx - (k & 1 ? 0 : 1), y0 = cy - (k & 2 ? 0 : 1);
        float s = 0;
        for (int dy = 0; dy < 2; dy++)
            for (int dx = 0; dx < 2; dx++) {
                int xx = x0 + dx, yy = y0 + dy;
                xx = xx < 0 ? 0 : xx >= cw ? cw - 1 : xx;
                yy = yy < 0 ? 0 : yy >= ch ? ch - 1 : yy;
                s += energy[yy * cw + xx];
            }
        n[k] = 1.0f / sqrtf(s + 1e-4f);
    }
    const float *hc = hist + (size_t)c * (size_t)cs;
    float texture[4] = {0, 0, 0, 0};
    for (int o = 0; o < 18; o++) {
        float sum = 0;
        for (int k = 0; k < 4; k++) {
            float v = dcf_truncate(hc[o * os] * n[k]);
            sum += v;
            texture[k] += v;
        }
        feat[o * nc + c] = 0.5f * sum;
    }
    for (int o = 0; o < 9; o++) {
        float sum = 0;
        for (int k = 0; k < 4; k++)
            sum += dcf_truncate((hc[o * os] + hc[(o + 9) * os]) * n[k]);
        feat[(18 + o) * nc + c] = 0.5f * sum;
    }
    for (int k = 0; k < 4; k++)
        feat[(27 + k) * nc + c] = 0.2357f * texture[k];
    feat[31 * nc + c] = gray / (3.0f * 255.0f * DCF_CELL * DCF_CELL) - 0.5f;
}

/* ---- the colour model and the target's cells -------------------------------------------------------- */

GLCV_DM int dcf_colour_bin(const float *p)
{
    int r = (int)(p[0] * (DCF_HBINS / 256.0f)), g = (int)(p[1] * (DCF_HBINS / 256.0f)),
        b = (int)(p[2] * (DCF_HBINS / 256.0f));
    r = r < 0 ? 0 : r >= DCF_HBINS ? DCF_HBINS - 1 : r;
    g = g < 0 ? 0 : g >= DCF_HBINS ? DCF_HBINS - 1 : g;
    b = b < 0 ? 0 : b >= DCF_HBINS ? DCF_HBINS - 1 : b;
    return (r * DCF_HBINS + g) * DCF_HBINS + b;
}

/* A template pixel's foreground likelihood fg / (fg + bg) (0 for a colour never seen). */
GLCV_DM float dcf_likelihood(const struct glcv_track_dcf *d, const float *p)
{
    int bin = dcf_colour_bin(p);
    float f = d->fg[bin], b = d->bg[bin];
    return f + b > 0 ? f / (f + b) : 0.0f;
}

/* Where template pixel (x, y) is for the colour model: 1 foreground (the box's inner 80 %),
 * 2 background (outside the box), 0 neither. */
GLCV_DM int dcf_colour_region(const struct glcv_track_dcf *d, int x, int y)
{
    double hw = 0.5 * d->tw / d->zx, hh = 0.5 * d->th / d->zy, c = DCF_T * 0.5;
    double u = fabs(x + 0.5 - c), v = fabs(y + 0.5 - c);
    if (u < 0.8 * hw && v < 0.8 * hh)
        return 1;
    return u >= hw || v >= hh ? 2 : 0;
}

/* The cell offset of row or column index i of a wrapped response (0 = no motion). */
GLCV_DM int dcf_wrapped(int i)
{
    return i < DCF_N / 2 ? i : i - DCF_N;
}

/* The colour response at cell offset (i, j) (wrapped): the mean likelihood over a box of the
 * target's size moved by it, clipped to the window, from the integral image ((DCF_T + 1)^2). */
GLCV_DM float dcf_colour_cell(const struct glcv_track_dcf *d, const double *integral, int i, int j)
{
    const int w1 = DCF_T + 1;
    double hw = 0.5 * d->tw / d->zx, hh = 0.5 * d->th / d->zy;
    double cx = DCF_T * 0.5 + dcf_wrapped(j) * DCF_CELL, cy = DCF_T * 0.5 + dcf_wrapped(i) * DCF_CELL;
    int x0 = (int)floor(cx - hw + 0.5), x1 = (int)floor(cx + hw + 0.5), y0 = (int)floor(cy - hh + 0.5),
        y1 = (int)floor(cy + hh + 0.5);
    x0 = x0 < 0 ? 0 : x0 > DCF_T ? DCF_T : x0;
    x1 = x1 < 0 ? 0 : x1 > DCF_T ? DCF_T : x1;
    y0 = y0 < 0 ? 0 : y0 > DCF_T ? DCF_T : y0;
    y1 = y1 < 0 ? 0 : y1 > DCF_T ? DCF_T : y1;
    double area = (double)(x1 - x0) * (double)(y1 - y0);
    double sum = integral[(size_t)y1 * w1 + x1] - integral[(size_t)y0 * w1 + x1] - integral[(size_t)y1 * w1 + x0] +
                 integral[(size_t)y0 * w1 + x0];
    return area > 0 ? (float)(sum / area) : 0.0f;
}

/* The share of template cell (x, y) that the target's box covers (0..1): the training weight. */
GLCV_DM float dcf_box_cover(const struct glcv_track_dcf *d, int y, int x)
{
    double hw = 0.5 * d->tw / d->zx, hh = 0.5 * d->th / d->zy, c = DCF_T * 0.5;
    double x0 = (double)(x * DCF_CELL), y0 = (double)(y * DCF_CELL);
    double ox = fmin(x0 + DCF_CELL, c + hw) - fmax(x0, c - hw);
    double oy = fmin(y0 + DCF_CELL, c + hh) - fmax(y0, c - hh);
    return ox > 0 && oy > 0 ? (float)(ox * oy / (DCF_CELL * DCF_CELL)) : 0.0f;
}

/* ---- a frame's decisions (one thread) ------------------------------------------------------------- */

GLCV_DM int dcf_argmax(const float *r, int n)
{
    int best = 0;
    for (int i = 1; i < n; i++)
        if (r[i] > r[best])
            best = i;
    return best;
}

/* The offset of a peak's vertex from its sample, from a parabola through it and its neighbours. */
GLCV_DM double dcf_vertex(float l, float c, float r)
{
    double den = (double)l - 2.0 * c + r;
    if (den >= 0)
        return 0;
    double off = 0.5 * ((double)l - r) / den;
    return off < -0.5 ? -0.5 : off > 0.5 ? 0.5 : off;
}

/* The peak-to-sidelobe ratio of a response: its peak (at p, dcf_argmax) against the mean and
 * deviation of the response outside 5 x 5 cells around it. The sums run in DCF_N lanes, one per
 * column x (rows in order), then over the lanes in order: both engines sum alike.
 * dcf_psr_lane: column x's sums of v and v^2 and their count, into s[0], s[1], s[2]. */
GLCV_DM void dcf_psr_lane(const float *r, int p, int x, double *s)
{
    int py = p / DCF_N, px = p % DCF_N;
    double sum = 0, sum2 = 0, n = 0;
    int dx = dcf_wrapped((x - px + DCF_N) % DCF_N);
    for (int y = 0; y < DCF_N; y++) {
        int dy = dcf_wrapped((y - py + DCF_N) % DCF_N);
        if (dy >= -2 && dy <= 2 && dx >= -2 && dx <= 2)
            continue;
        double v = r[y * DCF_N + x];
        sum += v;
        sum2 += v * v;
        n += 1;
    }
    s[0] = sum;
    s[1] = sum2;
    s[2] = n;
}

/* The ratio from the lanes' sums (lanes[x * 3 + 0..2], dcf_psr_lane) and the peak's value. */
GLCV_DM double dcf_psr_finish(const double *lanes, float peak)
{
    double sum = 0, sum2 = 0, n = 0;
    for (int x = 0; x < DCF_N; x++) {
        sum += lanes[x * 3];
        sum2 += lanes[x * 3 + 1];
        n += lanes[x * 3 + 2];
    }
    double mean = sum / n, var = sum2 / n - mean * mean;
    return var > 0 ? (peak - mean) / sqrt(var) : 0.0;
}

/* Sums over the scale filter's dimensions run in DCF_SLANES lanes (lane l: dimensions l,
 * l + DCF_SLANES, ... in order), then over the lanes in order: both engines sum alike. */
#define DCF_SLANES 32

/* Whether a sure frame (dcf_judge 1, after dcf_move) is one the models learn from: one in
 * DCF_LEARN_EVERY, at the object's phase (from its first box), so that a set's objects take turns. */
GLCV_DM int dcf_learns(const struct glcv_track_dcf *d)
{
    return (d->found + d->phase) % DCF_LEARN_EVERY == 0;
}

/* A learning rate per frame (the papers') as the rate of a learning step taken every
 * DCF_LEARN_EVERY frames: 1 - (1 - r)^DCF_LEARN_EVERY, so that the models forget a frame as fast. */
GLCV_DM float dcf_step_rate(float r)
{
    double keep = 1.0;
    for (int i = 0; i < DCF_LEARN_EVERY; i++)
        keep *= 1.0 - (double)r;
    return (float)(1.0 - keep);
}

/* Judges a frame from its filter response's ratio (d->psr) against the mean of the frames found:
 * returns 0 when the object is lost (the box coasts at its velocity, inside the frame), else 1
 * when the step is sure enough to learn from and 2 when it is not. */
GLCV_DM int dcf_judge(struct glcv_track_dcf *d)
{
    double ref = d->found > 0 ? d->mean_psr : d->psr;
    if (d->psr < DCF_LOST_RATIO * ref) {
        d->lost_frames++;
        d->cx = fmin(fmax(d->cx + d->vx, 0.0), d->frame_w);
        d->cy = fmin(fmax(d->cy + d->vy, 0.0), d->frame_h);
        return 0;
    }
    return d->psr >= DCF_UPDATE_RATIO * ref ? 1 : 2;
}

/* A found frame's step: the merged response m's refined peak (at p, dcf_argmax) moves the box; a
 * sure step (not the first after coasting, which corrects the guess) teaches the velocity; the
 * mean ratio takes the frame's (all of them for the first 1 / DCF_PSR_RATE frames, then a running
 * mean). */
GLCV_DM void dcf_move(struct glcv_track_dcf *d, const float *m, int p, int sure)
{
    int py = p / DCF_N, px = p % DCF_N;
    double oy = dcf_vertex(m[((py + DCF_N - 1) % DCF_N) * DCF_N + px], m[p], m[((py + 1) % DCF_N) * DCF_N + px]);
    double ox = dcf_vertex(m[py * DCF_N + (px + DCF_N - 1) % DCF_N], m[p], m[py * DCF_N + (px + 1) % DCF_N]);
    double dx = (dcf_wrapped(px) + ox) * DCF_CELL * d->zx * d->scale,
           dy = (dcf_wrapped(py) + oy) * DCF_CELL * d->zy * d->scale;
    /* the centre stays inside the frame (a box on a featureless or vanishing view may drift) */
    d->cx = fmin(fmax(d->cx + dx, 0.0), d->frame_w);
    d->cy = fmin(fmax(d->cy + dy, 0.0), d->frame_h);
    if (sure && d->lost_frames == 0) {
        d->vx = (1.0 - DCF_VELOCITY_RATE) * d->vx + DCF_VELOCITY_RATE * dx;
        d->vy = (1.0 - DCF_VELOCITY_RATE) * d->vy + DCF_VELOCITY_RATE * dy;
    }
    d->lost_frames = 0;
    d->found++;
    double rate = 1.0 / d->found > DCF_PSR_RATE ? 1.0 / d->found : DCF_PSR_RATE;
    d->mean_psr = (1.0 - rate) * d->mean_psr + rate * d->psr;
}

/* The scale filter's response r (DCF_SCALES values): its refined peak, in steps of
 * DCF_SCALE_STEP from the present scale. */
GLCV_DM double dcf_scale_peak(const float *r)
{
    int p = dcf_argmax(r, DCF_SCALES);
    double off = p > 0 && p < DCF_SCALES - 1 ? dcf_vertex(r[p - 1], r[p], r[p + 1]) : 0.0;
    return p - DCF_SCALES / 2 + off;
}

/* Scales the box by `power` (pow(DCF_SCALE_STEP, the peak's step)), within the object's limits. */
GLCV_DM void dcf_rescale(struct glcv_track_dcf *d, double power)
{
    d->scale *= power;
    d->scale = d->scale < d->min_scale ? d->min_scale : d->scale > d->max_scale ? d->max_scale : d->scale;
}

GLCV_DM void dcf_output(const struct glcv_track_dcf *d, int lost, struct glcv_track_dcf_result *out)
{
    out->lost = lost;
    out->pad = 0;
    out->psr = d->psr;
    out->box[0] = d->cx;
    out->box[1] = d->cy;
    out->box[2] = d->tw * d->scale;
    out->box[3] = d->th * d->scale;
    out->window[0] = d->cx;
    out->window[1] = d->cy;
    out->window[2] = d->zx * d->scale * DCF_T;
    out->window[3] = d->zy * d->scale * DCF_T;
}

#endif
