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
 *      box moves but nothing learns.
 *   4. Found, 17 scale samples (the box times 1.03^k, k = -8..8, each resampled to 24 x 24 pixels,
 *      its HOG cells a vector) go through the scale filter, a one-dimensional DCF over k, whose
 *      refined peak scales the box; then both filters and the colour model learn from the frame
 *      at the new box.
 * The FFTs are radix-2 over the 32 x 32 cells and plain DFTs over the 17 scales, written here so
 * that the CPU and a GPU implementation run one arithmetic; no library FFT glcv links offers
 * that. */
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

/* A thread's working memory for one object's frame. */
struct glcv_track_dcf_scratch {
    float patch[(DCF_T + 2) * (DCF_T + 2) * 3]; /* the resampled window, RGB, a pixel of border */
    float feat[DCF_CH * DCF_CELLS];
    float hist[18 * DCF_CELLS], energy[DCF_CELLS], gray[DCF_CELLS];
    dcf_c spec[2][DCF_CELLS], acc[DCF_CELLS], work[DCF_CELLS];
    float response[DCF_CELLS], colour[DCF_CELLS];
    float hist_new[2 * DCF_HIST];
    dcf_tap tx[(DCF_T + 2) * DCF_MAX_SUPER], ty[(DCF_T + 2) * DCF_MAX_SUPER];
    double integral[(DCF_T + 1) * (DCF_T + 1)];
    float sfeat[DCF_SDIM][DCF_SCALES];
    glcv_track_dcf_tables tables;
};

/* 2-D FFT of DCF_N x DCF_N values (row-major); the inverse divides by DCF_CELLS. */
static void fft2(dcf_c *a, int inverse, const dcf_c *tw)
{
    for (int y = 0; y < DCF_N; y++)
        dcf_fft_line(a + y * DCF_N, 1, inverse, tw);
    for (int x = 0; x < DCF_N; x++)
        dcf_fft_line(a + x, DCF_N, inverse, tw);
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

/* Resamples the frame to (w + 2) x (h + 2) RGB pixels: pixel (i, j), i = -1..w, is centred at
 * (cx + (i + 0.5 - w / 2) sx, cy + (j + 0.5 - h / 2) sy), edges repeated; a pixel covering more
 * than one frame pixel averages a grid of bilinear samples over its footprint (dcf_super). */
static void sample(const glcv_image *img, double cx, double cy, double sx, double sy, int w, int h, float *out,
                   dcf_tap *tx, dcf_tap *ty)
{
    size_t stride = glcv_image_stride(img);
    int bpp = glcv_pixel_format_size(img->format), o[3];
    rgb_offsets(img->format, o);
    int kx = dcf_super(sx), ky = dcf_super(sy);
    taps(cx, sx, w, kx, img->width, tx);
    taps(cy, sy, h, ky, img->height, ty);
    float norm = 1.0f / (float)(kx * ky);
    for (int j = 0; j < h + 2; j++) {
        float *p = out + (size_t)j * (size_t)(w + 2) * 3;
        memset(p, 0, sizeof(float) * 3 * (size_t)(w + 2));
        for (int b = 0; b < ky; b++) {
            const dcf_tap *t = &ty[j * ky + b];
            const uint8_t *r0 = img->data + (size_t)t->i0 * stride, *r1 = img->data + (size_t)t->i1 * stride;
            for (int i = 0; i < w + 2; i++)
                for (int a = 0; a < kx; a++) {
                    const dcf_tap *u = &tx[i * kx + a];
                    const uint8_t *p00 = r0 + u->i0 * bpp, *p01 = r0 + u->i1 * bpp, *p10 = r1 + u->i0 * bpp,
                                  *p11 = r1 + u->i1 * bpp;
                    for (int c = 0; c < 3; c++)
                        p[3 * i + c] += dcf_bilerp(p00[o[c]], p01[o[c]], p10[o[c]], p11[o[c]], u->w, t->w);
                }
        }
        for (int i = 0; i < 3 * (w + 2); i++)
            p[i] *= norm;
    }
}

/* The HOG cells of a (w + 2) x (h + 2) patch into s->feat (dcf_cell_hist, dcf_cell_features). */
static void hog(glcv_track_dcf_scratch *s, int w, int h)
{
    const int cw = w / DCF_CELL, ch = h / DCF_CELL;
    for (int cy = 0; cy < ch; cy++)
        for (int cx = 0; cx < cw; cx++) {
            int c = cy * cw + cx;
            dcf_cell_hist(s->patch, w + 2, cx, cy, s->hist + c * 18, &s->gray[c]);
            s->energy[c] = dcf_cell_energy(s->hist + c * 18);
        }
    for (int cy = 0; cy < ch; cy++)
        for (int cx = 0; cx < cw; cx++)
            dcf_cell_features(s->hist, s->energy, cw, ch, cx, cy, s->gray[cy * cw + cx], s->feat);
}

/* ---- the colour model ----------------------------------------------------------------------------- */

/* Learns the colour histograms from the template patch (dcf_colour_region). */
static void learn_colour(glcv_track_dcf *d, glcv_track_dcf_scratch *s, float rate)
{
    float *nf = s->hist_new, *nb = s->hist_new + DCF_HIST;
    memset(s->hist_new, 0, sizeof s->hist_new);
    double n_fg = 0, n_bg = 0;
    for (int y = 0; y < DCF_T; y++)
        for (int x = 0; x < DCF_T; x++) {
            int region = dcf_colour_region(d, x, y);
            int bin = dcf_colour_bin(s->patch + ((size_t)(y + 1) * (DCF_T + 2) + (size_t)(x + 1)) * 3);
            if (region == 1) {
                nf[bin] += 1;
                n_fg += 1;
            } else if (region == 2) {
                nb[bin] += 1;
                n_bg += 1;
            }
        }
    for (int i = 0; i < DCF_HIST; i++) {
        float f = n_fg > 0 ? (float)(nf[i] / n_fg) : 0.0f, b = n_bg > 0 ? (float)(nb[i] / n_bg) : 0.0f;
        d->fg[i] = (1.0f - rate) * d->fg[i] + rate * f;
        d->bg[i] = (1.0f - rate) * d->bg[i] + rate * b;
    }
}

/* The colour response at every cell offset (dcf_colour_cell), wrapped as the filter's. */
static void colour_response(const glcv_track_dcf *d, glcv_track_dcf_scratch *s)
{
    const int w1 = DCF_T + 1;
    for (int x = 0; x <= DCF_T; x++)
        s->integral[x] = 0;
    for (int y = 0; y < DCF_T; y++) {
        double row = 0;
        s->integral[(size_t)(y + 1) * w1] = 0;
        for (int x = 0; x < DCF_T; x++) {
            row += dcf_likelihood(d, s->patch + ((size_t)(y + 1) * (DCF_T + 2) + (size_t)(x + 1)) * 3);
            s->integral[(size_t)(y + 1) * w1 + x + 1] = s->integral[(size_t)y * w1 + x + 1] + row;
        }
    }
    for (int i = 0; i < DCF_N; i++)
        for (int j = 0; j < DCF_N; j++)
            s->colour[i * DCF_N + j] = dcf_colour_cell(d, s->integral, i, j);
}

/* ---- the translation filter ------------------------------------------------------------------------ */

/* The window's features at the object's centre and scale, under the Hann window; the resampled
 * patch stays in s->patch. */
static void window_features(const glcv_track_dcf *d, const glcv_image *img, glcv_track_dcf_scratch *s)
{
    sample(img, d->cx, d->cy, d->zx * d->scale, d->zy * d->scale, DCF_T, DCF_T, s->patch, s->tx, s->ty);
    hog(s, DCF_T, DCF_T);
    for (int c = 0; c < DCF_CH; c++)
        for (int y = 0; y < DCF_N; y++)
            for (int x = 0; x < DCF_N; x++)
                s->feat[c * DCF_CELLS + y * DCF_N + x] *= s->tables.hann[y] * s->tables.hann[x];
}

/* The spectra of channels c and c + 1, from one complex FFT (dcf_split). */
static void channel_spectra(glcv_track_dcf_scratch *s, int c, dcf_c *a, dcf_c *b)
{
    dcf_c *z = s->work;
    for (int i = 0; i < DCF_CELLS; i++)
        z[i] = (dcf_c){s->feat[c * DCF_CELLS + i], s->feat[(c + 1) * DCF_CELLS + i]};
    fft2(z, 0, s->tables.twiddle);
    for (int y = 0; y < DCF_N; y++)
        for (int x = 0; x < DCF_N; x++)
            dcf_split(z, y, x, &a[y * DCF_N + x], &b[y * DCF_N + x]);
}

static void learn_filter(glcv_track_dcf *d, glcv_track_dcf_scratch *s, float rate)
{
    float *b = s->response; /* the frame's B */
    memset(b, 0, sizeof s->response);
    for (int c = 0; c < DCF_CH; c += 2) {
        channel_spectra(s, c, s->spec[0], s->spec[1]);
        for (int h = 0; h < 2; h++)
            for (int i = 0; i < DCF_CELLS; i++) {
                dcf_c x = s->spec[h][i];
                dcf_c *a = &d->a[c + h][i];
                a->re = (1.0f - rate) * a->re + rate * d->label[i] * x.re;
                a->im = (1.0f - rate) * a->im + rate * d->label[i] * x.im;
                b[i] += x.re * x.re + x.im * x.im;
            }
    }
    for (int i = 0; i < DCF_CELLS; i++)
        d->b[i] = (1.0f - rate) * d->b[i] + rate * b[i];
}

static void filter_response(const glcv_track_dcf *d, glcv_track_dcf_scratch *s)
{
    memset(s->acc, 0, sizeof s->acc);
    for (int c = 0; c < DCF_CH; c += 2) {
        channel_spectra(s, c, s->spec[0], s->spec[1]);
        for (int h = 0; h < 2; h++)
            for (int i = 0; i < DCF_CELLS; i++) {
                dcf_c p = dcf_mulc(d->a[c + h][i], s->spec[h][i]);
                s->acc[i].re += p.re;
                s->acc[i].im += p.im;
            }
    }
    for (int i = 0; i < DCF_CELLS; i++) {
        float k = 1.0f / (d->b[i] + DCF_LAMBDA);
        s->acc[i].re *= k;
        s->acc[i].im *= k;
    }
    fft2(s->acc, 1, s->tables.twiddle);
    for (int i = 0; i < DCF_CELLS; i++)
        s->response[i] = s->acc[i].re;
}

/* ---- the scale filter ------------------------------------------------------------------------------ */

static void scale_features(const glcv_track_dcf *d, const glcv_image *img, glcv_track_dcf_scratch *s)
{
    for (int k = 0; k < DCF_SCALES; k++) {
        double f = d->scale_factor[k] * d->scale;
        sample(img, d->cx, d->cy, d->tw * f / DCF_ST, d->th * f / DCF_ST, DCF_ST, DCF_ST, s->patch, s->tx, s->ty);
        hog(s, DCF_ST, DCF_ST);
        for (int i = 0; i < DCF_SDIM; i++)
            s->sfeat[i][k] = s->feat[i] * s->tables.shann[k];
    }
}

static void learn_scale(glcv_track_dcf *d, glcv_track_dcf_scratch *s, float rate)
{
    float lanes[DCF_SHALF][DCF_SLANES];
    memset(lanes, 0, sizeof lanes);
    for (int i = 0; i < DCF_SDIM; i++)
        for (int k = 0; k < DCF_SHALF; k++) {
            dcf_c x = dcf_dft_scale(s->sfeat[i], k, s->tables.stwiddle), n = dcf_mulc(d->slabel[k], x);
            d->sa[i][k].re = (1.0f - rate) * d->sa[i][k].re + rate * n.re;
            d->sa[i][k].im = (1.0f - rate) * d->sa[i][k].im + rate * n.im;
            lanes[k][i % DCF_SLANES] += x.re * x.re + x.im * x.im;
        }
    for (int k = 0; k < DCF_SHALF; k++) {
        float b = 0;
        for (int l = 0; l < DCF_SLANES; l++)
            b += lanes[k][l];
        d->sb[k] = (1.0f - rate) * d->sb[k] + rate * b;
    }
}

/* The scale filter's response over the scales (its inverse transform: frequency 0 once, the
 * others twice, as the spectrum of real samples is conjugate-symmetric and DCF_SCALES odd). */
static void scale_response(const glcv_track_dcf *d, glcv_track_dcf_scratch *s, float *r)
{
    dcf_c lanes[DCF_SHALF][DCF_SLANES], acc[DCF_SHALF];
    memset(lanes, 0, sizeof lanes);
    memset(acc, 0, sizeof acc);
    for (int i = 0; i < DCF_SDIM; i++)
        for (int k = 0; k < DCF_SHALF; k++) {
            dcf_c p = dcf_mulc(d->sa[i][k], dcf_dft_scale(s->sfeat[i], k, s->tables.stwiddle));
            lanes[k][i % DCF_SLANES].re += p.re;
            lanes[k][i % DCF_SLANES].im += p.im;
        }
    for (int k = 0; k < DCF_SHALF; k++)
        for (int l = 0; l < DCF_SLANES; l++) {
            acc[k].re += lanes[k][l].re;
            acc[k].im += lanes[k][l].im;
        }
    for (int i = 0; i < DCF_SCALES; i++) {
        float v = 0;
        for (int k = 0; k < DCF_SHALF; k++) {
            dcf_c w = s->tables.stwiddle[(i * k) % DCF_SCALES]; /* conj(w): the inverse transform */
            float q = (k ? 2.0f : 1.0f) / (d->sb[k] + DCF_SCALE_LAMBDA);
            v += (acc[k].re * w.re + acc[k].im * w.im) * q;
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
    fft2(y, 0, t.twiddle);
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
    window_features(d, img, s);
    /* the filter learns the object's cells only (CSR-DCF's spatial constraint, with the box as
     * the reliability map): a static textured background cannot hold it */
    for (int y = 0; y < DCF_N; y++)
        for (int x = 0; x < DCF_N; x++) {
            float m = dcf_box_cover(d, y, x);
            for (int c = 0; c < DCF_CH; c++)
                s->feat[c * DCF_CELLS + y * DCF_N + x] *= m;
        }
    learn_filter(d, s, first ? 1.0f : DCF_RATE);
    learn_colour(d, s, first ? 1.0f : DCF_COLOUR_RATE);
    scale_features(d, img, s);
    learn_scale(d, s, first ? 1.0f : DCF_SCALE_RATE);
}

void glcv_track_dcf_frame(glcv_track_dcf *d, const glcv_image *img, glcv_track_dcf_scratch *s,
                          glcv_track_dcf_result *out)
{
    int lost = 0;
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
            if (judged == 1)
                learn(d, img, s, 0);
        }
    }
    dcf_output(d, lost, out);
}
