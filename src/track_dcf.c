/* The tracker's correlation-filter method (DCF): one object's filters, colour model and frame step,
 * on the CPU. The method follows the discriminative correlation filters of Bolme et al. (MOSSE,
 * 2010), in the multi-channel form of Danelljan et al. (DSST, BMVC 2014), with that paper's
 * separate one-dimensional scale filter, and merges the filter's response with a colour-histogram
 * likelihood as Bertinetto et al. do (Staple, CVPR 2016); the features are Felzenszwalb et al.'s
 * HOG cells (PAMI 2010) and the cell's mean intensity. Constants are those papers' published
 * defaults, not values fitted to a sequence.
 *
 * Per object and frame:
 *   1. A search window around the last box (the box grown by its half-perimeter, so by
 *      (w + h) / 2 a side) is resampled to a fixed template of DCF_T x DCF_T pixels (32 x 32 HOG
 *      cells of 4 pixels), its features are taken under a Hann window and transformed (FFT), and
 *      the filter's response is
 *          r = IFFT( sum_c conj(A_c) Z_c / (B + lambda) ),   A_c = conj(Y) X_c,  B = sum_c |X_c|^2
 *      over the channels c, with Y the transform of a Gaussian label (sigma: the target's size in
 *      cells / 16) and A, B running averages of the training frames (rate 0.01). The training
 *      features X are those of the box's cells only (each cell weighted by the share of it the box
 *      covers): the spatial constraint of Lukezic et al.'s CSR-DCF (CVPR 2017) with the box as its
 *      reliability map, so that a background that does not move with the object cannot hold the
 *      filter.
 *   2. The colour model - foreground and background histograms of 16 x 16 x 16 RGB bins, from the
 *      box and the rest of the window (rate 0.04) - gives each template pixel the likelihood
 *      fg / (fg + bg); its mean over a box of the target's size, at every cell offset, is the
 *      colour response. The two are merged 0.7 : 0.3 and the peak, refined by a parabola through
 *      its neighbours, moves the box.
 *   3. The peak-to-sidelobe ratio of the filter's response (the peak against the mean and
 *      deviation of the response outside 5 x 5 cells around it) says how sure the step is: below
 *      0.3 times its mean over the frames found the object is lost (an occlusion): its box coasts
 *      at its last velocity and no model changes; from 0.45 times the mean on, the models and
 *      the velocity learn from the frame (Wang et al.'s LMCF rule, CVPR 2017); in between the
 *      box moves but nothing learns. The models learn on every second of those frames only
 *      (Danelljan et al.'s sparse updates, ECO, CVPR 2017), at rates compounded over the two
 *      (dcf_step_rate): half the learning steps, the same memory; the object's phase follows from
 *      its first box, so that a set's objects take turns and an object learns on the same frames
 *      in any set.
 *   4. Found, 17 scale samples (the box times 1.03^k, k = -8..8, each resampled to 24 x 24 pixels,
 *      its HOG cells a vector) go through the scale filter, a one-dimensional DCF over k, whose
 *      refined peak scales the box; then, on a learning frame, both filters and the colour model
 *      learn from the frame at the new box.
 * The FFTs are radix-2 over the 32 x 32 cells and plain DFTs over the 17 scales, written here so
 * that the CPU and a GPU implementation run one arithmetic; no library FFT glcv links offers
 * that.
 *
 * The CPU's loops keep track_dcf_math.h's arithmetic and order per value but run it over whole
 * rows, columns and frequencies at once, so that the compiler vectorises them (the 2-D FFT's
 * butterflies over every column, the gradients of a row, the scale DFT over every dimension); and
 * a frame's steps are shared between two threads (dcf_share, a glcv_team), each part writing its
 * own rows, channels, scales or frequencies: one object uses two cores, and the results are the
 * bytes of one thread's. */
#include "core_internal.h"
#include "track_internal.h"

#include <glcv/image.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A bilinear tap along one axis: two frame pixels and the weight of the second. */
typedef struct dcf_tap {
    int i0, i1;
    float w;
} dcf_tap;

/* The threads an object's frame is shared between (dcf_share). */
#define DCF_WORKERS 2

/* A share's temporaries: a resampling, its pixels' gradients, a scale sample's cells, an FFT. */
typedef struct dcf_worker {
    float patch[(DCF_T + 2) * (DCF_T + 2) * 3]; /* RGB, a pixel of border (worker 0's: the window) */
    dcf_tap tx[(DCF_T + 2) * DCF_MAX_SUPER], ty[(DCF_T + 2) * DCF_MAX_SUPER];
    float rows[2][(DCF_T + 2) * DCF_MAX_SUPER * 3]; /* frame_row's slots, and their rows */
    int row_y[2];
    float gmag[DCF_T * DCF_T], gshare[DCF_T * DCF_T], ggray[DCF_T * DCF_T]; /* the pixels' gradients */
    int gbin[DCF_T * DCF_T];
    float hist[18 * DCF_SN * DCF_SN], energy[DCF_SN * DCF_SN], gray[DCF_SN * DCF_SN], feat[DCF_SDIM];
    dcf_c z[DCF_CELLS], tmp[DCF_CELLS];
    float colour[2][DCF_HIST]; /* its rows' foreground and background colours, counted */
    double counts[2];
} dcf_worker;

/* A thread's working memory for one object's frame. */
struct glcv_track_dcf_scratch {
    dcf_worker worker[DCF_WORKERS];
    float feat[DCF_CH * DCF_CELLS];
    float hist[18 * DCF_CELLS], energy[DCF_CELLS], gray[DCF_CELLS];
    dcf_c spec[DCF_CH][DCF_CELLS]; /* the channels' spectra */
    dcf_c acc[DCF_CELLS], tmp[DCF_CELLS];
    float response[DCF_CELLS], colour[DCF_CELLS];
    float likelihood[DCF_T * DCF_T]; /* the window pixels' (dcf_likelihood) */
    double integral[(DCF_T + 1) * (DCF_T + 1)];
    float sfeat[DCF_SCALES][DCF_SDIM];                        /* scale k's windowed vector */
    float sre[DCF_SHALF][DCF_SDIM], sim[DCF_SHALF][DCF_SDIM]; /* their DFT over the scales */
    dcf_c sacc[DCF_SHALF];                                    /* the scale filter's sums */
    glcv_track_dcf_tables tables;
    /* the step being shared: its object and frame, the scale filter's rate (< 0: its response) */
    glcv_track_dcf *d;
    const glcv_image *img;
    float srate;
    int learning; /* the window is learned from (its colours counted, its cells weighted) */
    glcv_team *team; /* the frame's threads (NULL: this one alone) */
    glcv_track_dcf_result *out;
};

static void transpose(const dcf_c *restrict a, dcf_c *restrict t)
{
    for (int y = 0; y < DCF_N; y++)
        for (int x = 0; x < DCF_N; x++)
            t[x * DCF_N + y] = a[y * DCF_N + x];
}

/* 2-D FFT of DCF_N x DCF_N values (row-major): the rows' transforms, then the columns'
 * (dcf_fft_lines over every column at once; the rows transposed to columns and back); the inverse
 * divides by DCF_CELLS. tmp: DCF_CELLS values. */
static void fft2(dcf_c *a, int inverse, const dcf_c *tw, dcf_c *tmp)
{
    transpose(a, tmp);
    dcf_fft_lines(tmp, DCF_N, DCF_N, inverse, tw); /* the rows */
    transpose(tmp, a);
    dcf_fft_lines(a, DCF_N, DCF_N, inverse, tw);
    if (inverse)
        for (int i = 0; i < DCF_CELLS; i++) {
            a[i].re *= 1.0f / DCF_CELLS;
            a[i].im *= 1.0f / DCF_CELLS;
        }
}

/* ---- sampling and features ----------------------------------------------------------------------- */

/* The channel offsets of R, G and B in a host frame's pixel. */
static void rgb_offsets(glcv_pixel_format f, int o[3])
{
    int bgr = f == GLCV_PIXEL_BGR8 || f == GLCV_PIXEL_BGRA8;
    o[0] = bgr ? 2 : 0;
    o[1] = 1;
    o[2] = bgr ? 0 : 2;
}

static void taps(double c, double step, int n, int k, int size, dcf_tap *out)
{
    for (int i = -1; i <= n; i++)
        for (int a = 0; a < k; a++) {
            dcf_tap *t = &out[(i + 1) * k + a];
            dcf_tap_at(c, step, n, k, size, i, a, &t->i0, &t->i1, &t->w);
        }
}

/* Frame row y's horizontal half of the bilinear samples at the worker's taps tx (n taps): for each
 * tap and colour channel, p0 + (p1 - p0) w (dcf_bilerp's top and bottom), kept in one of the
 * worker's two row slots - the slot that holds it already, else the one of the lower row, as the
 * rows a resampling reads go down the frame and each is read for up to four output rows. */
static const float *frame_row(const glcv_image *img, int y, int n, dcf_worker *wk)
{
    for (int k = 0; k < 2; k++)
        if (wk->row_y[k] == y)
            return wk->rows[k];
    const int k = wk->row_y[0] < wk->row_y[1] ? 0 : 1, bpp = glcv_pixel_format_size(img->format);
    int o[3];
    rgb_offsets(img->format, o);
    const uint8_t *row = img->data + (size_t)y * glcv_image_stride(img);
    float *out = wk->rows[k];
    for (int i = 0; i < n; i++) {
        const uint8_t *p0 = row + wk->tx[i].i0 * bpp, *p1 = row + wk->tx[i].i1 * bpp;
        const float w = wk->tx[i].w;
        for (int c = 0; c < 3; c++) {
            float v0 = p0[o[c]], v1 = p1[o[c]];
            out[3 * i + c] = v0 + (v1 - v0) * w;
        }
    }
    wk->row_y[k] = y;
    return out;
}

/* Rows [j0, j1) of the frame resampled to (w + 2) x (h + 2) RGB pixels in wk->patch: pixel (i, j),
 * i = -1..w, is centred at (cx + (i + 0.5 - w / 2) sx, cy + (j + 0.5 - h / 2) sy) (row j at
 * index j + 1), edges repeated; a pixel covering more than one frame pixel averages a grid of
 * bilinear samples over its footprint (dcf_super): the sub-samples b (rows) outer, a (columns)
 * inner, each dcf_bilerp's arithmetic. */
static void sample(const glcv_image *img, double cx, double cy, double sx, double sy, int w, int h, int j0, int j1,
                   dcf_worker *wk)
{
    int kx = dcf_super(sx), ky = dcf_super(sy), n = (w + 2) * kx;
    taps(cx, sx, w, kx, img->width, wk->tx);
    taps(cy, sy, h, ky, img->height, wk->ty);
    wk->row_y[0] = wk->row_y[1] = -1;
    float norm = 1.0f / (float)(kx * ky);
    for (int j = j0; j < j1; j++) {
        float *p = wk->patch + (size_t)j * (size_t)(w + 2) * 3;
        for (int b = 0; b < ky; b++) {
            const dcf_tap *t = &wk->ty[j * ky + b];
            const float *top = frame_row(img, t->i0, n, wk), *bottom = frame_row(img, t->i1, n, wk);
            const float wy = t->w;
            if (kx == 1 && ky == 1) { /* 0 + v, then v * 1: v */
                for (int i = 0; i < 3 * (w + 2); i++)
                    p[i] = top[i] + (bottom[i] - top[i]) * wy;
                continue;
            }
            if (b == 0)
                memset(p, 0, sizeof(float) * 3 * (size_t)(w + 2));
            for (int i = 0; i < w + 2; i++)
                for (int a = 0; a < kx; a++)
                    for (int c = 0; c < 3; c++) {
                        int e = 3 * (i * kx + a) + c;
                        p[3 * i + c] += top[e] + (bottom[e] - top[e]) * wy;
                    }
        }
        if (kx > 1 || ky > 1)
            for (int i = 0; i < 3 * (w + 2); i++)
                p[i] *= norm;
    }
}

/* The gradients of rows [y0, y1) of the w x h inside of wk->patch ((w + 2) pixels a row), a pixel
 * at a time (dcf_pixel_gradient) in a loop the compiler vectorises. */
static void gradients(dcf_worker *wk, int w, int y0, int y1)
{
    const int pw = w + 2;
    for (int y = y0; y < y1; y++) {
        const float *row = wk->patch + ((size_t)(y + 1) * (size_t)pw + 1) * 3;
        float *mag = wk->gmag + y * w, *share = wk->gshare + y * w, *gray = wk->ggray + y * w;
        int *bin = wk->gbin + y * w;
        for (int x = 0; x < w; x++)
            dcf_pixel_gradient(row + 3 * x, pw, &mag[x], &bin[x], &share[x], &gray[x]);
    }
}

/* The histograms (18 each), gray sums and energies of cell rows [cy0, cy1) of a w-pixel-wide patch
 * (cw = w / DCF_CELL cells a row) from its pixels' gradients (dcf_hist_add, in row order). */
static void cells(const dcf_worker *wk, int w, int cy0, int cy1, float *hist, float *energy, float *gray)
{
    const int cw = w / DCF_CELL;
    for (int cy = cy0; cy < cy1; cy++)
        for (int cx = 0; cx < cw; cx++) {
            int c = cy * cw + cx;
            float *h = hist + c * 18, g = 0;
            for (int o = 0; o < 18; o++)
                h[o] = 0;
            for (int y = cy * DCF_CELL; y < cy * DCF_CELL + DCF_CELL; y++)
                for (int x = cx * DCF_CELL; x < cx * DCF_CELL + DCF_CELL; x++) {
                    g += wk->ggray[y * w + x];
                    dcf_hist_add(h, 1, wk->gmag[y * w + x], wk->gbin[y * w + x], wk->gshare[y * w + x]);
                }
            gray[c] = g;
            energy[c] = dcf_cell_energy(h, 1);
        }
}

/* ---- sharing a step between threads ---------------------------------------------------------------- */

typedef void (*dcf_part_fn)(glcv_track_dcf_scratch *s, int part);

typedef struct dcf_share_job {
    glcv_track_dcf_scratch *s;
    dcf_part_fn fn;
} dcf_share_job;

static void share_range(void *user, int begin, int end)
{
    const dcf_share_job *job = user;
    for (int part = begin; part < end; part++)
        job->fn(job->s, part);
}

/* Runs fn's DCF_WORKERS parts (part k uses worker k) on the frame's team (glcv_team_share): one
 * object's frame uses the cores an object per thread would leave idle; inside a loop over objects
 * the parts run one after another. The parts write disjoint memory: the result does not depend
 * on the threads. */
static void dcf_share(glcv_track_dcf_scratch *s, dcf_part_fn fn)
{
    dcf_share_job job = {s, fn};
    glcv_team_share(s->team, DCF_WORKERS, share_range, &job);
}

/* Part `part`'s share [begin, end) of n items. */
static void part_range(int n, int part, int *begin, int *end)
{
    *begin = part * n / DCF_WORKERS;
    *end = (part + 1) * n / DCF_WORKERS;
}

/* ---- the colour model ----------------------------------------------------------------------------- */

static const float *window_pixel(const glcv_track_dcf_scratch *s, int x, int y)
{
    return s->worker[0].patch + ((size_t)(y + 1) * (DCF_T + 2) + (size_t)(x + 1)) * 3;
}

/* Counts the colours of a part's window rows [y0, y1) in its worker (dcf_colour_region): whole
 * counts, exact in any order. */
static void count_colours(const glcv_track_dcf *d, const glcv_track_dcf_scratch *s, int y0, int y1, dcf_worker *wk)
{
    memset(wk->colour, 0, sizeof wk->colour);
    wk->counts[0] = wk->counts[1] = 0;
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < DCF_T; x++) {
            int region = dcf_colour_region(d, x, y);
            if (region) {
                wk->colour[region - 1][dcf_colour_bin(window_pixel(s, x, y))] += 1;
                wk->counts[region - 1] += 1;
            }
        }
}

/* Learns the colour histograms from the window's counted colours (count_colours). */
static void learn_colour(glcv_track_dcf *d, glcv_track_dcf_scratch *s, float rate)
{
    double n_fg = 0, n_bg = 0;
    for (int k = 0; k < DCF_WORKERS; k++) {
        n_fg += s->worker[k].counts[0];
        n_bg += s->worker[k].counts[1];
    }
    for (int i = 0; i < DCF_HIST; i++) {
        float nf = 0, nb = 0;
        for (int k = 0; k < DCF_WORKERS; k++) {
            nf += s->worker[k].colour[0][i];
            nb += s->worker[k].colour[1][i];
        }
        float f = n_fg > 0 ? (float)(nf / n_fg) : 0.0f, b = n_bg > 0 ? (float)(nb / n_bg) : 0.0f;
        d->fg[i] = (1.0f - rate) * d->fg[i] + rate * f;
        d->bg[i] = (1.0f - rate) * d->bg[i] + rate * b;
    }
}

/* The colour response at every cell offset (dcf_colour_cell) from the window pixels' likelihoods,
 * wrapped as the filter's. */
static void colour_response(const glcv_track_dcf *d, glcv_track_dcf_scratch *s)
{
    const int w1 = DCF_T + 1;
    for (int x = 0; x <= DCF_T; x++)
        s->integral[x] = 0;
    for (int y = 0; y < DCF_T; y++) {
        double row = 0;
        s->integral[(size_t)(y + 1) * w1] = 0;
        for (int x = 0; x < DCF_T; x++) {
            row += s->likelihood[y * DCF_T + x];
            s->integral[(size_t)(y + 1) * w1 + x + 1] = s->integral[(size_t)y * w1 + x + 1] + row;
        }
    }
    for (int i = 0; i < DCF_N; i++)
        for (int j = 0; j < DCF_N; j++)
            s->colour[i * DCF_N + j] = dcf_colour_cell(d, s->integral, i, j);
}

/* ---- the translation filter ------------------------------------------------------------------------ */

/* A part's cell rows of the window at the object's centre and scale: their pixels resampled (and
 * the rows either side the gradients need) into its worker's patch, their cells' histograms. */
static void window_part(glcv_track_dcf_scratch *s, int part)
{
    const glcv_track_dcf *d = s->d;
    dcf_worker *wk = &s->worker[part];
    int c0, c1;
    part_range(DCF_N, part, &c0, &c1);
    sample(s->img, d->cx, d->cy, d->zx * d->scale, d->zy * d->scale, DCF_T, DCF_T, c0 * DCF_CELL,
           c1 * DCF_CELL + 2, wk);
    gradients(wk, DCF_T, c0 * DCF_CELL, c1 * DCF_CELL);
    cells(wk, DCF_T, c0, c1, s->hist, s->energy, s->gray);
}

/* A part's cell rows' features (dcf_cell_features) under the Hann window; then, to locate the
 * object, its pixels' colour likelihoods, or, to learn, its colours counted and its cells
 * weighted by the box's cover of them. */
static void features_part(glcv_track_dcf_scratch *s, int part)
{
    int c0, c1;
    part_range(DCF_N, part, &c0, &c1);
    for (int cy = c0; cy < c1; cy++)
        for (int cx = 0; cx < DCF_N; cx++)
            dcf_cell_features(s->hist, 18, 1, s->energy, DCF_N, DCF_N, cx, cy, s->gray[cy * DCF_N + cx], s->feat);
    for (int c = 0; c < DCF_CH; c++)
        for (int y = c0; y < c1; y++)
            for (int x = 0; x < DCF_N; x++)
                s->feat[c * DCF_CELLS + y * DCF_N + x] *= s->tables.hann[y] * s->tables.hann[x];
    const glcv_track_dcf *d = s->d;
    if (!s->learning) {
        for (int y = c0 * DCF_CELL; y < c1 * DCF_CELL; y++)
            for (int x = 0; x < DCF_T; x++)
                s->likelihood[y * DCF_T + x] = dcf_likelihood(d, window_pixel(s, x, y));
        return;
    }
    count_colours(d, s, c0 * DCF_CELL, c1 * DCF_CELL, &s->worker[part]);
    /* the filter learns the object's cells only (CSR-DCF's spatial constraint, with the box as
     * the reliability map): a static textured background cannot hold it */
    float cover[DCF_N];
    for (int y = c0; y < c1; y++) {
        for (int x = 0; x < DCF_N; x++)
            cover[x] = dcf_box_cover(d, y, x);
        for (int c = 0; c < DCF_CH; c++)
            for (int x = 0; x < DCF_N; x++)
                s->feat[c * DCF_CELLS + y * DCF_N + x] *= cover[x];
    }
}

/* The window's features at the object's centre and scale, under the Hann window (s->feat); the
 * resampled window ends in worker 0's patch. */
static void window_features(glcv_track_dcf *d, const glcv_image *img, glcv_track_dcf_scratch *s)
{
    s->d = d;
    s->img = img;
    dcf_share(s, window_part);
    const size_t row = (DCF_T + 2) * 3;
    for (int part = 1; part < DCF_WORKERS; part++) { /* the rows the part before did not resample */
        int c0, c1;
        part_range(DCF_N, part, &c0, &c1);
        memcpy(s->worker[0].patch + (size_t)(c0 * DCF_CELL + 2) * row, s->worker[part].patch + (size_t)(c0 * DCF_CELL + 2) * row,
               sizeof(float) * (size_t)((c1 - c0) * DCF_CELL) * row);
    }
    dcf_share(s, features_part);
}

/* A part's channel pairs' spectra (s->spec): the pair c, c + 1 as one complex FFT (dcf_split). */
static void spectra_part(glcv_track_dcf_scratch *s, int part)
{
    dcf_worker *wk = &s->worker[part];
    int p0, p1;
    part_range(DCF_CH / 2, part, &p0, &p1);
    for (int c = 2 * p0; c < 2 * p1; c += 2) {
        for (int i = 0; i < DCF_CELLS; i++)
            wk->z[i] = (dcf_c){s->feat[c * DCF_CELLS + i], s->feat[(c + 1) * DCF_CELLS + i]};
        fft2(wk->z, 0, s->tables.twiddle, wk->tmp);
        for (int y = 0; y < DCF_N; y++)
            for (int x = 0; x < DCF_N; x++)
                dcf_split(wk->z, y, x, &s->spec[c][y * DCF_N + x], &s->spec[c + 1][y * DCF_N + x]);
    }
}

/* A part's frequencies of the filter's learning: A_c for every channel, and B (the frame's sum over
 * the channels in order) at s->srate. */
static void learn_filter_part(glcv_track_dcf_scratch *s, int part)
{
    glcv_track_dcf *d = s->d;
    const float rate = s->srate;
    int i0, i1;
    part_range(DCF_CELLS, part, &i0, &i1);
    float *b = s->response; /* the frame's B */
    for (int i = i0; i < i1; i++)
        b[i] = 0;
    for (int c = 0; c < DCF_CH; c++)
        for (int i = i0; i < i1; i++) {
            dcf_c x = s->spec[c][i];
            dcf_c *a = &d->a[c][i];
            a->re = (1.0f - rate) * a->re + rate * d->label[i] * x.re;
            a->im = (1.0f - rate) * a->im + rate * d->label[i] * x.im;
            b[i] += x.re * x.re + x.im * x.im;
        }
    for (int i = i0; i < i1; i++)
        d->b[i] = (1.0f - rate) * d->b[i] + rate * b[i];
}

static void learn_filter(glcv_track_dcf *d, glcv_track_dcf_scratch *s, float rate)
{
    dcf_share(s, spectra_part);
    s->d = d;
    s->srate = rate;
    dcf_share(s, learn_filter_part);
}

/* A part's frequencies of the filter's response before its inverse transform (s->acc): the sum
 * over the channels in order, over B + lambda. */
static void response_part(glcv_track_dcf_scratch *s, int part)
{
    const glcv_track_dcf *d = s->d;
    int i0, i1;
    part_range(DCF_CELLS, part, &i0, &i1);
    for (int i = i0; i < i1; i++)
        s->acc[i] = (dcf_c){0, 0};
    for (int c = 0; c < DCF_CH; c++)
        for (int i = i0; i < i1; i++) {
            dcf_c p = dcf_mulc(d->a[c][i], s->spec[c][i]);
            s->acc[i].re += p.re;
            s->acc[i].im += p.im;
        }
    for (int i = i0; i < i1; i++) {
        float k = 1.0f / (d->b[i] + DCF_LAMBDA);
        s->acc[i].re *= k;
        s->acc[i].im *= k;
    }
}

static void filter_response(glcv_track_dcf *d, glcv_track_dcf_scratch *s)
{
    dcf_share(s, spectra_part);
    s->d = d;
    dcf_share(s, response_part);
    fft2(s->acc, 1, s->tables.twiddle, s->tmp);
    for (int i = 0; i < DCF_CELLS; i++)
        s->response[i] = s->acc[i].re;
}

/* ---- the scale filter ------------------------------------------------------------------------------ */

/* A part's scale samples: each resampled, its HOG cells a vector, under the scales' Hann window
 * (s->sfeat). */
static void scale_part(glcv_track_dcf_scratch *s, int part)
{
    const glcv_track_dcf *d = s->d;
    dcf_worker *wk = &s->worker[part];
    for (int k = part; k < DCF_SCALES; k += DCF_WORKERS) { /* interleaved: the larger samples cost more */
        double f = d->scale_factor[k] * d->scale;
        sample(s->img, d->cx, d->cy, d->tw * f / DCF_ST, d->th * f / DCF_ST, DCF_ST, DCF_ST, 0, DCF_ST + 2, wk);
        gradients(wk, DCF_ST, 0, DCF_ST);
        cells(wk, DCF_ST, 0, DCF_SN, wk->hist, wk->energy, wk->gray);
        for (int cy = 0; cy < DCF_SN; cy++)
            for (int cx = 0; cx < DCF_SN; cx++)
                dcf_cell_features(wk->hist, 18, 1, wk->energy, DCF_SN, DCF_SN, cx, cy, wk->gray[cy * DCF_SN + cx], wk->feat);
        for (int i = 0; i < DCF_SDIM; i++)
            s->sfeat[k][i] = wk->feat[i] * s->tables.shann[k];
    }
}

/* A part's frequencies of the scale filter: every dimension's DFT over the scales (dcf_dft_scale's
 * sums in its order, a scale at a time over all the dimensions, a loop the compiler vectorises),
 * then, with s->srate >= 0, the filter learns at that rate, else its sums over the dimensions
 * (s->sacc). Sums over the dimensions run in the lanes DCF_SLANES defines. */
static void scale_freq_part(glcv_track_dcf_scratch *s, int part)
{
    glcv_track_dcf *d = s->d;
    const float rate = s->srate;
    int f0, f1;
    part_range(DCF_SHALF, part, &f0, &f1);
    for (int k = f0; k < f1; k++) {
        float *re = s->sre[k], *im = s->sim[k];
        for (int i = 0; i < DCF_SDIM; i++)
            re[i] = im[i] = 0.0f;
        for (int j = 0; j < DCF_SCALES; j++) {
            const dcf_c w = s->tables.stwiddle[(j * k) % DCF_SCALES];
            const float *x = s->sfeat[j];
            for (int i = 0; i < DCF_SDIM; i++) {
                re[i] += x[i] * w.re;
                im[i] += x[i] * w.im;
            }
        }
        float lr[DCF_SLANES] = {0}, li[DCF_SLANES] = {0};
        if (rate >= 0) {
            const dcf_c y = d->slabel[k];
            for (int i = 0; i < DCF_SDIM; i++) {
                dcf_c x = {re[i], im[i]}, n = dcf_mulc(y, x);
                d->sa[k][i].re = (1.0f - rate) * d->sa[k][i].re + rate * n.re;
                d->sa[k][i].im = (1.0f - rate) * d->sa[k][i].im + rate * n.im;
            }
            for (int i0 = 0; i0 < DCF_SDIM; i0 += DCF_SLANES)
                for (int l = 0; l < DCF_SLANES; l++)
                    lr[l] += re[i0 + l] * re[i0 + l] + im[i0 + l] * im[i0 + l];
            float b = 0;
            for (int l = 0; l < DCF_SLANES; l++)
                b += lr[l];
            d->sb[k] = (1.0f - rate) * d->sb[k] + rate * b;
        } else {
            for (int i0 = 0; i0 < DCF_SDIM; i0 += DCF_SLANES)
                for (int l = 0; l < DCF_SLANES; l++) {
                    dcf_c p = dcf_mulc(d->sa[k][i0 + l], (dcf_c){re[i0 + l], im[i0 + l]});
                    lr[l] += p.re;
                    li[l] += p.im;
                }
            dcf_c acc = {0, 0};
            for (int l = 0; l < DCF_SLANES; l++) {
                acc.re += lr[l];
                acc.im += li[l];
            }
            s->sacc[k] = acc;
        }
    }
}

/* The scale samples at the object's centre and scale (s->sfeat). */
static void scale_features(glcv_track_dcf *d, const glcv_image *img, glcv_track_dcf_scratch *s)
{
    s->d = d;
    s->img = img;
    dcf_share(s, scale_part);
}

static void learn_scale(glcv_track_dcf *d, glcv_track_dcf_scratch *s, float rate)
{
    s->d = d;
    s->srate = rate;
    dcf_share(s, scale_freq_part);
}

/* The scale filter's response over the scales (its inverse transform: frequency 0 once, the
 * others twice, as the spectrum of real samples is conjugate-symmetric and DCF_SCALES odd). */
static void scale_response(glcv_track_dcf *d, glcv_track_dcf_scratch *s, float *r)
{
    s->d = d;
    s->srate = -1.0f;
    dcf_share(s, scale_freq_part);
    for (int i = 0; i < DCF_SCALES; i++) {
        float v = 0;
        for (int k = 0; k < DCF_SHALF; k++) {
            dcf_c w = s->tables.stwiddle[(i * k) % DCF_SCALES]; /* conj(w): the inverse transform */
            float q = (k ? 2.0f : 1.0f) / (d->sb[k] + DCF_SCALE_LAMBDA);
            v += (s->sacc[k].re * w.re + s->sacc[k].im * w.im) * q;
        }
        r[i] = v;
    }
}

/* ---- one object ------------------------------------------------------------------------------------ */

glcv_status glcv_track_dcf_create(glcv_track_dcf **out)
{
    *out = calloc(1, sizeof **out);
    return *out ? GLCV_OK : GLCV_ERROR_OUT_OF_MEMORY;
}

void glcv_track_dcf_destroy(glcv_track_dcf **d)
{
    if (d) {
        free(*d);
        *d = NULL;
    }
}

void glcv_track_dcf_tables_init(glcv_track_dcf_tables *t)
{
    const double pi = 3.14159265358979323846;
    for (int k = 0; k < DCF_N / 2; k++)
        t->twiddle[k] = (dcf_c){(float)cos(-2.0 * pi * k / DCF_N), (float)sin(-2.0 * pi * k / DCF_N)};
    for (int k = 0; k < DCF_SCALES; k++)
        t->stwiddle[k] = (dcf_c){(float)cos(-2.0 * pi * k / DCF_SCALES), (float)sin(-2.0 * pi * k / DCF_SCALES)};
    for (int i = 0; i < DCF_N; i++)
        t->hann[i] = (float)(0.5 - 0.5 * cos(2.0 * pi * i / (DCF_N - 1)));
    for (int i = 0; i < DCF_SCALES; i++)
        t->shann[i] = (float)(0.5 - 0.5 * cos(2.0 * pi * (i + 1) / (DCF_SCALES + 1)));
}

glcv_track_dcf_scratch *glcv_track_dcf_scratch_create(void)
{
    glcv_track_dcf_scratch *s = malloc(sizeof *s);
    if (s)
        glcv_track_dcf_tables_init(&s->tables);
    return s;
}

void glcv_track_dcf_scratch_destroy(glcv_track_dcf_scratch *s)
{
    free(s);
}

void glcv_track_dcf_start(glcv_track_dcf *d, double cx, double cy, double w, double h, int frame_w, int frame_h)
{
    d->started = d->found = d->lost_frames = 0;
    /* the learning frames' phase from the first box (its pixel coordinates mixed by SplitMix64's
     * finaliser), not from the object's id: an object learns on the same frames in any set, and a
     * set's objects take turns, about as many on each frame, even when their boxes lie on a grid */
    uint64_t key = ((uint64_t)(uint32_t)(int32_t)floor(cx) << 32) ^ (uint64_t)(uint32_t)(int32_t)floor(cy) ^
                   ((uint64_t)(uint32_t)(int32_t)floor(w) << 48) ^ ((uint64_t)(uint32_t)(int32_t)floor(h) << 16);
    key = (key ^ (key >> 30)) * 0xbf58476d1ce4e5b9ull;
    key = (key ^ (key >> 27)) * 0x94d049bb133111ebull;
    d->phase = (int)((key ^ (key >> 31)) % DCF_LEARN_EVERY);
    d->psr = d->mean_psr = d->vx = d->vy = 0;
    d->frame_w = frame_w;
    d->frame_h = frame_h;
    d->cx = cx;
    d->cy = cy;
    d->tw = w < 1 ? 1 : w;
    d->th = h < 1 ? 1 : h;
    d->scale = 1.0;
    double pad = 0.5 * (d->tw + d->th);
    d->zx = (d->tw + 2.0 * pad) / DCF_T;
    d->zy = (d->th + 2.0 * pad) / DCF_T;
    /* the box stays at least 2 pixels a side and at most the frame */
    d->min_scale = fmax(2.0 / d->tw, 2.0 / d->th);
    d->max_scale = fmax(1.0, fmin(frame_w / d->tw, frame_h / d->th));
    for (int k = 0; k < DCF_SCALES; k++)
        d->scale_factor[k] = pow(DCF_SCALE_STEP, k - DCF_SCALES / 2);
    double sigma = sqrt(d->tw / (d->zx * DCF_CELL) * d->th / (d->zy * DCF_CELL)) * DCF_SIGMA_FACTOR;
    glcv_track_dcf_tables t;
    glcv_track_dcf_tables_init(&t);
    dcf_c y[DCF_CELLS];
    for (int i = 0; i < DCF_N; i++)
        for (int j = 0; j < DCF_N; j++) {
            double r2 = (double)dcf_wrapped(i) * dcf_wrapped(i) + (double)dcf_wrapped(j) * dcf_wrapped(j);
            y[i * DCF_N + j] = (dcf_c){(float)exp(-0.5 * r2 / (sigma * sigma)), 0.0f};
        }
    dcf_c tmp[DCF_CELLS];
    fft2(y, 0, t.twiddle, tmp);
    for (int i = 0; i < DCF_CELLS; i++)
        d->label[i] = y[i].re; /* an even label's transform is real */
    const double pi = 3.14159265358979323846, ss = sqrt((double)DCF_SCALES) / 4.0; /* DSST's sigma */
    for (int k = 0; k < DCF_SHALF; k++) {
        double re = 0, im = 0;
        for (int i = 0; i < DCF_SCALES; i++) {
            double o = i - DCF_SCALES / 2, v = exp(-0.5 * o * o / (ss * ss));
            re += v * cos(-2.0 * pi * i * k / DCF_SCALES);
            im += v * sin(-2.0 * pi * i * k / DCF_SCALES);
        }
        d->slabel[k] = (dcf_c){(float)re, (float)im};
    }
}

/* Learns every model from the frame at the object's box (rate 1: from this frame alone). */
static void learn(glcv_track_dcf *d, const glcv_image *img, glcv_track_dcf_scratch *s, int first)
{
    s->learning = 1;
    window_features(d, img, s);
    s->learning = 0;
    learn_filter(d, s, first ? 1.0f : dcf_step_rate(DCF_RATE));
    learn_colour(d, s, first ? 1.0f : dcf_step_rate(DCF_COLOUR_RATE));
    scale_features(d, img, s);
    learn_scale(d, s, first ? 1.0f : dcf_step_rate(DCF_SCALE_RATE));
}

/* The frame's step, on the frame's team (s->d, s->img, s->out). */
static void frame_main(glcv_team *team, void *user)
{
    glcv_track_dcf_scratch *s = user;
    glcv_track_dcf *d = s->d;
    const glcv_image *img = s->img;
    int lost = 0;
    s->team = team;
    if (!d->started) {
        learn(d, img, s, 1);
        d->started = 1;
        d->psr = 0;
    } else {
        window_features(d, img, s);
        filter_response(d, s);
        colour_response(d, s);
        float *m = s->colour; /* merged in place: what locates the object */
        for (int i = 0; i < DCF_CELLS; i++)
            m[i] = (1.0f - DCF_MERGE) * s->response[i] + DCF_MERGE * m[i];
        double lanes[DCF_N * 3];
        int peak = dcf_argmax(s->response, DCF_CELLS);
        for (int x = 0; x < DCF_N; x++)
            dcf_psr_lane(s->response, peak, x, lanes + x * 3);
        d->psr = dcf_psr_finish(lanes, s->response[peak]);
        int judged = dcf_judge(d);
        lost = judged == 0;
        if (!lost) {
            dcf_move(d, m, dcf_argmax(m, DCF_CELLS), judged == 1);
            float r[DCF_SCALES];
            scale_features(d, img, s);
            scale_response(d, s, r);
            dcf_rescale(d, pow(DCF_SCALE_STEP, dcf_scale_peak(r)));
            if (judged == 1 && dcf_learns(d))
                learn(d, img, s, 0);
        }
    }
    s->team = NULL;
    dcf_output(d, lost, s->out);
}

void glcv_track_dcf_frame(glcv_track_dcf *d, const glcv_image *img, glcv_track_dcf_scratch *s,
                          glcv_track_dcf_result *out)
{
    s->d = d;
    s->img = img;
    s->out = out;
    glcv_team_run(DCF_WORKERS, frame_main, s);
}
