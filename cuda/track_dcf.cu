// The tracker's correlation-filter method (DCF) on the GPU: one block per object runs the
// object's whole frame - the window's resampling and HOG cells, the filter's FFTs and response,
// the colour model's response, the decisions, the scale filter, and the models' learning - with
// track_dcf_math.h's arithmetic in the CPU implementation's order (src/track_dcf.c), so that both
// engines agree: the block's threads share the per-pixel, per-cell, per-line and per-frequency
// work, and every sum whose order matters runs in the CPU's order - in one thread (the cells'
// histograms, the B and A sums over the channels, the integral image) or in the lanes the shared
// arithmetic defines (the ratio of the peak, the scale filter's sums over its dimensions), one
// thread per lane. A peak is the first largest value, as the CPU's scan finds it. The only difference left is pow(1.03, step) of the
// scale update, which the device's pow may round differently from the C library's in the last
// place. Compiled with --fmad=false (no fused multiply-adds), as the CPU side with
// -ffp-contract=off.
#include <cuda_runtime.h>

#include "track_kernels.h"

struct glcv_cuda_dcf_scratch {
    float patch[(DCF_T + 2) * (DCF_T + 2) * 3];
    float spatch[DCF_SCALES][(DCF_ST + 2) * (DCF_ST + 2) * 3];
    float feat[DCF_CH * DCF_CELLS];
    float hist[18 * DCF_CELLS], energy[DCF_CELLS], gray[DCF_CELLS];
    float sraw[DCF_SCALES][DCF_SDIM];
    float shist[DCF_SCALES][18 * DCF_SN * DCF_SN], senergy[DCF_SCALES][DCF_SN * DCF_SN],
        sgray[DCF_SCALES][DCF_SN * DCF_SN];
    float sfeat[DCF_SDIM][DCF_SCALES];
    dcf_c sx[DCF_SDIM][DCF_SHALF];
    dcf_c z[DCF_CH / 2][DCF_CELLS];
    dcf_c acc[DCF_CELLS];
    float response[DCF_CELLS], colour[DCF_CELLS];
    double rows[DCF_T * DCF_T];
    double integral[(DCF_T + 1) * (DCF_T + 1)];
    float hist_new[2 * DCF_HIST];
    double counts[2];
    float sresponse[DCF_SCALES];
};

namespace {

constexpr int kThreads = GLCV_CUDA_DCF_THREADS;

// The index of the first largest of r[0..n-1] (dcf_argmax's), found by the whole block: each
// thread the first largest of its share, then the largest of those, the smallest index on ties.
__device__ int block_argmax(const float *r, int n)
{
    __shared__ float value[kThreads];
    __shared__ int index[kThreads];
    __shared__ int best;
    int bi = -1;
    float bv = 0;
    for (int i = threadIdx.x; i < n; i += kThreads)
        if (bi < 0 || r[i] > bv) {
            bv = r[i];
            bi = i;
        }
    value[threadIdx.x] = bv;
    index[threadIdx.x] = bi;
    __syncthreads();
    if (threadIdx.x == 0) {
        int b = index[0];
        float v = value[0];
        for (int t = 1; t < kThreads; t++)
            if (index[t] >= 0 && (value[t] > v || (value[t] == v && index[t] < b))) {
                v = value[t];
                b = index[t];
            }
        best = b;
    }
    __syncthreads();
    return best;
}

struct source {
    const glcv_cuda_dcf_params *p;
    int stream;
};

// The R, G, B of frame pixel (x, y) of the object's stream, as floats.
__device__ __forceinline__ void fetch(const source &s, int x, int y, float rgb[3])
{
    const glcv_cuda_dcf_params &p = *s.p;
    if (p.pixels) {
        const uint8_t *px = p.pixels + ((size_t)s.stream * (size_t)p.height + (size_t)y) * p.pitch +
                            (size_t)x * (size_t)p.channels;
        rgb[0] = px[p.bgr ? 2 : 0];
        rgb[1] = px[1];
        rgb[2] = px[p.bgr ? 0 : 2];
        return;
    }
    cudaTextureObject_t t = p.pixels_layers ? p.pixels_layers[s.stream] : p.pixels_texture;
    uchar4 v = tex2D<uchar4>(t, (float)x + 0.5f, (float)y + 0.5f); // point sampling: element (x, y)
    rgb[0] = v.x;
    rgb[1] = v.y;
    rgb[2] = v.z;
}

// Pixel (i, j) (0..w+1, 0..h+1: the CPU's -1..w) of a (w + 2) x (h + 2) resampling (track_dcf.c's
// sample): the sub-samples b (rows) outer, a (columns) inner, then the mean.
__device__ void sample_pixel(const source &s, double cx, double cy, double sx, double sy, int w, int h, int i, int j,
                             float *out)
{
    const int kx = dcf_super(sx), ky = dcf_super(sy);
    float acc[3] = {0, 0, 0};
    for (int b = 0; b < ky; b++) {
        int y0, y1;
        float wy;
        dcf_tap_at(cy, sy, h, ky, s.p->height, j - 1, b, &y0, &y1, &wy);
        for (int a = 0; a < kx; a++) {
            int x0, x1;
            float wx;
            dcf_tap_at(cx, sx, w, kx, s.p->width, i - 1, a, &x0, &x1, &wx);
            float p00[3], p01[3], p10[3], p11[3];
            fetch(s, x0, y0, p00);
            fetch(s, x1, y0, p01);
            fetch(s, x0, y1, p10);
            fetch(s, x1, y1, p11);
            for (int c = 0; c < 3; c++)
                acc[c] += dcf_bilerp(p00[c], p01[c], p10[c], p11[c], wx, wy);
        }
    }
    const float norm = 1.0f / (float)(kx * ky);
    for (int c = 0; c < 3; c++)
        out[c] = acc[c] * norm;
}

// The window's patch, HOG cells and Hann window at the object's centre and scale (s->feat).
__device__ void window_features(const source &src, const glcv_track_dcf *d, glcv_cuda_dcf_scratch *s,
                                const glcv_track_dcf_tables *t)
{
    const int pw = DCF_T + 2;
    const double sx = d->zx * d->scale, sy = d->zy * d->scale;
    for (int k = threadIdx.x; k < pw * pw; k += kThreads)
        sample_pixel(src, d->cx, d->cy, sx, sy, DCF_T, DCF_T, k % pw, k / pw, s->patch + (size_t)k * 3);
    __syncthreads();
    for (int c = threadIdx.x; c < DCF_CELLS; c += kThreads) {
        dcf_cell_hist(s->patch, pw, c % DCF_N, c / DCF_N, s->hist + c * 18, &s->gray[c]);
        s->energy[c] = dcf_cell_energy(s->hist + c * 18);
    }
    __syncthreads();
    for (int c = threadIdx.x; c < DCF_CELLS; c += kThreads)
        dcf_cell_features(s->hist, s->energy, DCF_N, DCF_N, c % DCF_N, c / DCF_N, s->gray[c], s->feat);
    __syncthreads();
    for (int k = threadIdx.x; k < DCF_CH * DCF_CELLS; k += kThreads) {
        int i = k % DCF_CELLS;
        s->feat[k] *= t->hann[i / DCF_N] * t->hann[i % DCF_N];
    }
    __syncthreads();
}

// The transforms of the channel pairs (c + i (c + 1)) into s->z: rows, then columns.
__device__ void pair_transforms(glcv_cuda_dcf_scratch *s, const glcv_track_dcf_tables *t)
{
    for (int k = threadIdx.x; k < DCF_CH / 2 * DCF_CELLS; k += kThreads) {
        int pair = k / DCF_CELLS, i = k % DCF_CELLS;
        s->z[pair][i].re = s->feat[(2 * pair) * DCF_CELLS + i];
        s->z[pair][i].im = s->feat[(2 * pair + 1) * DCF_CELLS + i];
    }
    __syncthreads();
    for (int l = threadIdx.x; l < DCF_CH / 2 * DCF_N; l += kThreads)
        dcf_fft_line(s->z[l / DCF_N] + (l % DCF_N) * DCF_N, 1, 0, t->twiddle);
    __syncthreads();
    for (int l = threadIdx.x; l < DCF_CH / 2 * DCF_N; l += kThreads)
        dcf_fft_line(s->z[l / DCF_N] + l % DCF_N, DCF_N, 0, t->twiddle);
    __syncthreads();
}

__device__ void learn_filter(glcv_track_dcf *d, glcv_cuda_dcf_scratch *s, const glcv_track_dcf_tables *t, float rate)
{
    pair_transforms(s, t);
    for (int i = threadIdx.x; i < DCF_CELLS; i += kThreads) {
        float b = 0;
        for (int pair = 0; pair < DCF_CH / 2; pair++) {
            dcf_c x[2];
            dcf_split(s->z[pair], i / DCF_N, i % DCF_N, &x[0], &x[1]);
            for (int h = 0; h < 2; h++) {
                dcf_c *a = &d->a[2 * pair + h][i];
                a->re = (1.0f - rate) * a->re + rate * d->label[i] * x[h].re;
                a->im = (1.0f - rate) * a->im + rate * d->label[i] * x[h].im;
                b += x[h].re * x[h].re + x[h].im * x[h].im;
            }
        }
        d->b[i] = (1.0f - rate) * d->b[i] + rate * b;
    }
    __syncthreads();
}

__device__ void filter_response(const glcv_track_dcf *d, glcv_cuda_dcf_scratch *s, const glcv_track_dcf_tables *t)
{
    pair_transforms(s, t);
    for (int i = threadIdx.x; i < DCF_CELLS; i += kThreads) {
        dcf_c acc = {0, 0};
        for (int pair = 0; pair < DCF_CH / 2; pair++) {
            dcf_c x[2];
            dcf_split(s->z[pair], i / DCF_N, i % DCF_N, &x[0], &x[1]);
            for (int h = 0; h < 2; h++) {
                dcf_c p = dcf_mulc(d->a[2 * pair + h][i], x[h]);
                acc.re += p.re;
                acc.im += p.im;
            }
        }
        float k = 1.0f / (d->b[i] + DCF_LAMBDA);
        acc.re *= k;
        acc.im *= k;
        s->acc[i] = acc;
    }
    __syncthreads();
    for (int l = threadIdx.x; l < DCF_N; l += kThreads)
        dcf_fft_line(s->acc + l * DCF_N, 1, 1, t->twiddle);
    __syncthreads();
    for (int l = threadIdx.x; l < DCF_N; l += kThreads)
        dcf_fft_line(s->acc + l, DCF_N, 1, t->twiddle);
    __syncthreads();
    for (int i = threadIdx.x; i < DCF_CELLS; i += kThreads)
        s->response[i] = s->acc[i].re * (1.0f / DCF_CELLS);
    __syncthreads();
}

__device__ const float *patch_pixel(const glcv_cuda_dcf_scratch *s, int x, int y)
{
    return s->patch + ((size_t)(y + 1) * (DCF_T + 2) + (size_t)(x + 1)) * 3;
}

// The colour response (s->colour): row sums, then the integral image down the columns, then the
// cells - each sum in the CPU's order.
__device__ void colour_response(const glcv_track_dcf *d, glcv_cuda_dcf_scratch *s)
{
    const int w1 = DCF_T + 1;
    for (int y = threadIdx.x; y < DCF_T; y += kThreads) {
        double row = 0;
        for (int x = 0; x < DCF_T; x++) {
            row += dcf_likelihood(d, patch_pixel(s, x, y));
            s->rows[y * DCF_T + x] = row;
        }
    }
    __syncthreads();
    for (int x = threadIdx.x; x <= DCF_T; x += kThreads) {
        s->integral[x] = 0;
        for (int y = 0; y < DCF_T; y++)
            s->integral[(size_t)(y + 1) * w1 + x] = x == 0 ? 0.0 : s->integral[(size_t)y * w1 + x] + s->rows[y * DCF_T + x - 1];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < DCF_CELLS; i += kThreads)
        s->colour[i] = dcf_colour_cell(d, s->integral, i / DCF_N, i % DCF_N);
    __syncthreads();
}

__device__ void learn_colour(glcv_track_dcf *d, glcv_cuda_dcf_scratch *s, float rate)
{
    float *nf = s->hist_new, *nb = s->hist_new + DCF_HIST;
    for (int i = threadIdx.x; i < 2 * DCF_HIST; i += kThreads)
        s->hist_new[i] = 0;
    if (threadIdx.x == 0)
        s->counts[0] = s->counts[1] = 0;
    __syncthreads();
    // counts of whole pixels: exact in any order
    for (int k = threadIdx.x; k < DCF_T * DCF_T; k += kThreads) {
        int x = k % DCF_T, y = k / DCF_T;
        int region = dcf_colour_region(d, x, y);
        if (region == 0)
            continue;
        int bin = dcf_colour_bin(patch_pixel(s, x, y));
        atomicAdd(region == 1 ? &nf[bin] : &nb[bin], 1.0f);
        atomicAdd(&s->counts[region - 1], 1.0);
    }
    __syncthreads();
    const double n_fg = s->counts[0], n_bg = s->counts[1];
    for (int i = threadIdx.x; i < DCF_HIST; i += kThreads) {
        float f = n_fg > 0 ? (float)(nf[i] / n_fg) : 0.0f, b = n_bg > 0 ? (float)(nb[i] / n_bg) : 0.0f;
        d->fg[i] = (1.0f - rate) * d->fg[i] + rate * f;
        d->bg[i] = (1.0f - rate) * d->bg[i] + rate * b;
    }
    __syncthreads();
}

// The 17 scale samples, their HOG cells, and the scale-windowed vectors (s->sfeat).
__device__ void scale_features(const source &src, const glcv_track_dcf *d, glcv_cuda_dcf_scratch *s,
                               const glcv_track_dcf_tables *t)
{
    const int pw = DCF_ST + 2, px = pw * pw, cells = DCF_SN * DCF_SN;
    for (int k = threadIdx.x; k < DCF_SCALES * px; k += kThreads) {
        int sc = k / px, e = k % px;
        double f = d->scale_factor[sc] * d->scale;
        sample_pixel(src, d->cx, d->cy, d->tw * f / DCF_ST, d->th * f / DCF_ST, DCF_ST, DCF_ST, e % pw, e / pw,
                     s->spatch[sc] + (size_t)e * 3);
    }
    __syncthreads();
    for (int k = threadIdx.x; k < DCF_SCALES * cells; k += kThreads) {
        int sc = k / cells, c = k % cells;
        dcf_cell_hist(s->spatch[sc], pw, c % DCF_SN, c / DCF_SN, s->shist[sc] + c * 18, &s->sgray[sc][c]);
        s->senergy[sc][c] = dcf_cell_energy(s->shist[sc] + c * 18);
    }
    __syncthreads();
    for (int k = threadIdx.x; k < DCF_SCALES * cells; k += kThreads) {
        int sc = k / cells, c = k % cells;
        dcf_cell_features(s->shist[sc], s->senergy[sc], DCF_SN, DCF_SN, c % DCF_SN, c / DCF_SN, s->sgray[sc][c],
                          s->sraw[sc]);
    }
    __syncthreads();
    for (int k = threadIdx.x; k < DCF_SCALES * DCF_SDIM; k += kThreads) {
        int sc = k / DCF_SDIM, i = k % DCF_SDIM;
        s->sfeat[i][sc] = s->sraw[sc][i] * t->shann[sc];
    }
    __syncthreads();
}

// The scale filter's response (s->sresponse): the sums over the dimensions in order, one thread
// per frequency.
__device__ void scale_response(const glcv_track_dcf *d, glcv_cuda_dcf_scratch *s, const glcv_track_dcf_tables *t)
{
    for (int k = threadIdx.x; k < DCF_SDIM * DCF_SHALF; k += kThreads) {
        int i = k / DCF_SHALF, f = k % DCF_SHALF;
        s->sx[i][f] = dcf_dft_scale(s->sfeat[i], f, t->stwiddle);
    }
    __syncthreads();
    __shared__ dcf_c lanes[DCF_SHALF * DCF_SLANES], acc[DCF_SHALF];
    for (int k = threadIdx.x; k < DCF_SHALF * DCF_SLANES; k += kThreads) {
        int f = k / DCF_SLANES, l = k % DCF_SLANES;
        dcf_c a = {0, 0};
        for (int i = l; i < DCF_SDIM; i += DCF_SLANES) {
            dcf_c p = dcf_mulc(d->sa[i][f], s->sx[i][f]);
            a.re += p.re;
            a.im += p.im;
        }
        lanes[k] = a;
    }
    __syncthreads();
    if (threadIdx.x < DCF_SHALF) {
        int f = threadIdx.x;
        dcf_c a = {0, 0};
        for (int l = 0; l < DCF_SLANES; l++) {
            a.re += lanes[f * DCF_SLANES + l].re;
            a.im += lanes[f * DCF_SLANES + l].im;
        }
        acc[f] = a;
    }
    __syncthreads();
    if (threadIdx.x < DCF_SCALES) {
        int i = threadIdx.x;
        float v = 0;
        for (int k = 0; k < DCF_SHALF; k++) {
            dcf_c w = t->stwiddle[(i * k) % DCF_SCALES];
            float q = (k ? 2.0f : 1.0f) / (d->sb[k] + DCF_SCALE_LAMBDA);
            v += (acc[k].re * w.re + acc[k].im * w.im) * q;
        }
        s->sresponse[i] = v;
    }
    __syncthreads();
}

__device__ void learn_scale(glcv_track_dcf *d, glcv_cuda_dcf_scratch *s, const glcv_track_dcf_tables *t, float rate)
{
    for (int k = threadIdx.x; k < DCF_SDIM * DCF_SHALF; k += kThreads) {
        int i = k / DCF_SHALF, f = k % DCF_SHALF;
        dcf_c x = dcf_dft_scale(s->sfeat[i], f, t->stwiddle), n = dcf_mulc(d->slabel[f], x);
        s->sx[i][f] = x;
        d->sa[i][f].re = (1.0f - rate) * d->sa[i][f].re + rate * n.re;
        d->sa[i][f].im = (1.0f - rate) * d->sa[i][f].im + rate * n.im;
    }
    __syncthreads();
    __shared__ float lanes[DCF_SHALF * DCF_SLANES];
    for (int k = threadIdx.x; k < DCF_SHALF * DCF_SLANES; k += kThreads) {
        int f = k / DCF_SLANES, l = k % DCF_SLANES;
        float b = 0;
        for (int i = l; i < DCF_SDIM; i += DCF_SLANES)
            b += s->sx[i][f].re * s->sx[i][f].re + s->sx[i][f].im * s->sx[i][f].im;
        lanes[k] = b;
    }
    __syncthreads();
    if (threadIdx.x < DCF_SHALF) {
        int f = threadIdx.x;
        float b = 0;
        for (int l = 0; l < DCF_SLANES; l++)
            b += lanes[f * DCF_SLANES + l];
        d->sb[f] = (1.0f - rate) * d->sb[f] + rate * b;
    }
    __syncthreads();
}

__device__ void learn(const source &src, glcv_track_dcf *d, glcv_cuda_dcf_scratch *s, const glcv_track_dcf_tables *t,
                      int first)
{
    window_features(src, d, s, t);
    for (int k = threadIdx.x; k < DCF_CH * DCF_CELLS; k += kThreads) {
        int i = k % DCF_CELLS;
        s->feat[k] *= dcf_box_cover(d, i / DCF_N, i % DCF_N);
    }
    __syncthreads();
    learn_filter(d, s, t, first ? 1.0f : DCF_RATE);
    learn_colour(d, s, first ? 1.0f : DCF_COLOUR_RATE);
    scale_features(src, d, s, t);
    learn_scale(d, s, t, first ? 1.0f : DCF_SCALE_RATE);
}

__global__ void __launch_bounds__(kThreads) dcf_kernel(glcv_cuda_dcf_params p)
{
    const int id = p.ids[blockIdx.x];
    glcv_track_dcf *d = &p.objects[id];
    glcv_cuda_dcf_scratch *s = &p.scratch[id];
    const glcv_track_dcf_tables *t = p.tables;
    const source src = {&p, p.streams[id]};
    __shared__ int judged;
    if (!d->started) {
        learn(src, d, s, t, 1);
        if (threadIdx.x == 0) {
            d->started = 1;
            d->psr = 0;
            judged = 1;
        }
    } else {
        window_features(src, d, s, t);
        filter_response(d, s, t);
        colour_response(d, s);
        for (int i = threadIdx.x; i < DCF_CELLS; i += kThreads)
            s->colour[i] = (1.0f - DCF_MERGE) * s->response[i] + DCF_MERGE * s->colour[i];
        __syncthreads();
        __shared__ double lanes[DCF_N * 3];
        const int peak = block_argmax(s->response, DCF_CELLS);
        if (threadIdx.x < DCF_N)
            dcf_psr_lane(s->response, peak, threadIdx.x, lanes + threadIdx.x * 3);
        __syncthreads();
        const int merged_peak = block_argmax(s->colour, DCF_CELLS);
        if (threadIdx.x == 0) {
            d->psr = dcf_psr_finish(lanes, s->response[peak]);
            judged = dcf_judge(d);
            if (judged)
                dcf_move(d, s->colour, merged_peak, judged == 1);
        }
        __syncthreads();
        if (judged) {
            scale_features(src, d, s, t);
            scale_response(d, s, t);
            if (threadIdx.x == 0)
                dcf_rescale(d, pow(DCF_SCALE_STEP, dcf_scale_peak(s->sresponse)));
            __syncthreads();
            if (judged == 1)
                learn(src, d, s, t, 0);
        }
    }
    if (threadIdx.x == 0)
        dcf_output(d, judged == 0, &p.results[blockIdx.x]);
}

} // namespace

extern "C" size_t glcv_cuda_track_dcf_scratch_bytes(void)
{
    return sizeof(glcv_cuda_dcf_scratch);
}

extern "C" int glcv_cuda_track_dcf(glcv_cuda_dcf_params p, cudaStream_t stream)
{
    if (p.n < 1)
        return (int)cudaSuccess;
    const bool textures = p.pixels_texture != 0 || p.pixels_layers;
    if ((textures ? p.pixels != nullptr : !p.pixels || (p.channels != 3 && p.channels != 4)) || !p.ids ||
        !p.streams || !p.objects || !p.scratch || !p.tables || !p.results || p.width < 1 || p.height < 1)
        return (int)cudaErrorInvalidValue;
    dcf_kernel<<<(unsigned)p.n, kThreads, 0, stream>>>(p);
    return (int)cudaGetLastError();
}
