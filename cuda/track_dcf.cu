// The tracker's correlation-filter method (DCF) on the GPU: one block per object (or, for sets of
// few objects on compute capability 9.0, a thread-block cluster: see team_first) runs the object's
// whole frame - the window's resampling and HOG cells, the filter's FFTs and response, the colour
// model's response, the decisions, the scale filter, and the models' learning - with
// track_dcf_math.h's arithmetic in the CPU implementation's order (src/track_dcf.c), so that both
// engines agree. The object's threads share the per-pixel, per-cell and per-frequency work, and
// every sum whose order matters runs in the CPU's order: in one thread (a cell's histogram over its
// pixels, the A and B sums over the channels, the integral image) or in the lanes the shared
// arithmetic defines (the ratio of the peak, the scale filter's sums over its dimensions). Memory
// is laid out for the warps: a pixel's gradient and a cell's histogram bin in planes (one coalesced
// access a warp), a channel pair's 2-D FFT in one warp's registers (its rows through shuffles, a
// lane per element; its columns in each lane's registers: dcf_fft_lines' butterflies, value for
// value), or, for the inverse transform and in clusters, spread over a block's warps through shared
// memory (block_fft2); a resampling's taps are made once per axis and a pixel's frame pixels
// fetched together; the colour model counts in shared memory. A peak is the first largest value, as
// the CPU's scan finds it. The only difference left is pow(1.03, step) of the scale update, which
// the device's pow may round differently from the C library's in the last place. Compiled with
// --fmad=false (no fused multiply-adds), as the CPU side with -ffp-contract=off.
//
// Why one file of about 800 lines: it is one kernel. Its phases share the object's scratch layout,
// the team helpers (one block or a cluster) and the FFTs, and nvcc inlines them into the two
// instances of dcf_kernel; split across translation units they would need relocatable device code
// and lose that inlining.
#include <cuda_runtime.h>

#include "cluster.cuh"
#include "track_kernels.h"

// A bilinear tap along an axis (dcf_tap_at's): two frame pixels and the weight of the second.
struct glcv_cuda_dcf_tap {
    int i0, i1;
    float w;
};

struct glcv_cuda_dcf_scratch {
    float patch[(DCF_T + 2) * (DCF_T + 2) * 3];
    float spatch[DCF_SCALES][(DCF_ST + 2) * (DCF_ST + 2) * 3];
    glcv_cuda_dcf_tap wtap[2][(DCF_T + 2) * DCF_MAX_SUPER];                // the window's x and y taps
    glcv_cuda_dcf_tap stap[DCF_SCALES][2][(DCF_ST + 2) * DCF_MAX_SUPER];   // the scale samples'
    float feat[DCF_CH * DCF_CELLS];
    float hist[18 * DCF_CELLS], energy[DCF_CELLS], gray[DCF_CELLS]; // bin o of cell c at hist[o * DCF_CELLS + c]
    // the pixels' gradients (dcf_pixel_gradient): pixel j (row-major) of cell c of n at [j * n + c];
    // the window's, or the scale samples' (sample k's at k * DCF_ST * DCF_ST)
    float gmag[DCF_T * DCF_T], gshare[DCF_T * DCF_T], ggray[DCF_T * DCF_T];
    int gbin[DCF_T * DCF_T];
    float sraw[DCF_SCALES][DCF_SDIM];
    float shist[DCF_SCALES][18 * DCF_SN * DCF_SN], senergy[DCF_SCALES][DCF_SN * DCF_SN],
        sgray[DCF_SCALES][DCF_SN * DCF_SN];
    float sfeat[DCF_SCALES][DCF_SDIM];
    dcf_c sx[DCF_SHALF][DCF_SDIM];
    dcf_c z[DCF_CH / 2][DCF_CELLS];
    dcf_c acc[DCF_CELLS];
    float response[DCF_CELLS], colour[DCF_CELLS];
    float likelihood[DCF_T * DCF_T]; // pixel (x, y) at [x * DCF_T + y]
    double rows[DCF_T * DCF_T];
    double integral[(DCF_T + 1) * (DCF_T + 1)];
    float sresponse[DCF_SCALES];
};

namespace {

constexpr int kThreads = GLCV_CUDA_DCF_THREADS;

constexpr int kWarps = kThreads / 32;
constexpr unsigned kFull = 0xffffffffu;
constexpr int kMaxCluster = 16;

// ---- an object's blocks: one block, or a thread-block cluster ----------------------------------------
// The loops over an object's pixels, cells, channels and frequencies are dealt to all the threads
// of its blocks (team_first, team_stride); a phase's writes (to the object's scratch and state in
// global memory) are seen by the next phase's readers after team_sync. The steps that one block
// takes (the peak, the decisions, the last sums in their order) run in the leader, block 0, whose
// shared memory the others reach through the cluster. The work of each element, and every sum's
// order, is the same with any number of blocks.

__device__ __forceinline__ int team_first()
{
    return (int)glcv_cluster_rank() * kThreads + (int)threadIdx.x;
}

__device__ __forceinline__ int team_stride()
{
    return (int)glcv_cluster_blocks() * kThreads;
}

// For loops over fewer items than a block has threads, whose work per item is long: items
// [*first, *end) of n go to this block's threads, a run of them a block (consecutive items to
// consecutive threads).
__device__ __forceinline__ void team_share(int n, int *first, int *end)
{
    const int blocks = (int)glcv_cluster_blocks(), rank = (int)glcv_cluster_rank(), run = (n + blocks - 1) / blocks;
    *first = rank * run + (int)threadIdx.x;
    *end = min(n, (rank + 1) * run);
}

__device__ __forceinline__ bool leader()
{
    return glcv_cluster_rank() == 0;
}

__device__ __forceinline__ void team_sync()
{
    if (glcv_cluster_blocks() > 1)
        glcv_cluster_sync();
    else
        __syncthreads();
}

// p, a shared-memory address, in the leader's shared memory.
template <class T> __device__ __forceinline__ T *in_leader(T *p)
{
    return glcv_cluster_blocks() > 1 ? glcv_cluster_map(p, 0) : p;
}

// Whether (v, i) comes before (bv, bi) in dcf_argmax's order: larger, or as large and earlier.
__device__ __forceinline__ bool before(float v, int i, float bv, int bi)
{
    return i >= 0 && (bi < 0 || v > bv || (v == bv && i < bi));
}

// The index of the first largest of r[0..n-1] (dcf_argmax's), found by the whole block: each
// thread the first largest of its share, then the warps and the block by that order (the same
// whatever the order of combining).
__device__ int block_argmax(const float *r, int n)
{
    __shared__ float value[kWarps];
    __shared__ int index[kWarps];
    __shared__ int best;
    int bi = -1;
    float bv = 0;
    for (int i = threadIdx.x; i < n; i += kThreads)
        if (bi < 0 || r[i] > bv) {
            bv = r[i];
            bi = i;
        }
    for (int off = 16; off > 0; off >>= 1) {
        float v = __shfl_down_sync(kFull, bv, off);
        int i = __shfl_down_sync(kFull, bi, off);
        if (before(v, i, bv, bi)) {
            bv = v;
            bi = i;
        }
    }
    if ((threadIdx.x & 31) == 0) {
        value[threadIdx.x >> 5] = bv;
        index[threadIdx.x >> 5] = bi;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int b = -1;
        float v = 0;
        for (int w = 0; w < kWarps; w++)
            if (before(value[w], index[w], v, b)) {
                v = value[w];
                b = index[w];
            }
        best = b;
    }
    __syncthreads();
    return best;
}

// ---- FFTs: a 2-D transform in one warp -------------------------------------------------------------

__host__ __device__ constexpr int rev5(int i)
{
    return ((i & 1) << 4) | ((i & 2) << 2) | (i & 4) | ((i & 8) >> 2) | ((i & 16) >> 4);
}

static_assert(DCF_N == 32, "the warp transforms hold a line of DCF_N values in a warp's lanes");

// dcf_fft_lines (one line) over the warp's lanes (lane i holds element i): the same permutation,
// and each lane computes its butterfly's v = a[i + k + half] w as both of its elements' lanes do.
template <bool Inverse>
__device__ __forceinline__ dcf_c warp_fft(dcf_c a, int lane, const dcf_c *tw)
{
    const int src = rev5(lane);
    a.re = __shfl_sync(kFull, a.re, src);
    a.im = __shfl_sync(kFull, a.im, src);
#pragma unroll
    for (int stage = 1; stage <= 5; stage++) {
        const int len = 1 << stage, half = len / 2, pos = lane & (len - 1);
        dcf_c o = {__shfl_xor_sync(kFull, a.re, half), __shfl_xor_sync(kFull, a.im, half)};
        dcf_c w = tw[(pos & (half - 1)) * (DCF_N / len)];
        if (Inverse)
            w.im = -w.im;
        const bool lower = pos < half;
        dcf_c u = lower ? a : o, v = dcf_mul(lower ? o : a, w);
        a = lower ? dcf_c{u.re + v.re, u.im + v.im} : dcf_c{u.re - v.re, u.im - v.im};
    }
    return a;
}

// dcf_fft_lines (one line) over a thread's registers, unrolled.
template <bool Inverse>
__device__ __forceinline__ void reg_fft(dcf_c (&v)[DCF_N], const dcf_c *tw)
{
#pragma unroll
    for (int i = 0; i < DCF_N; i++)
        if (i < rev5(i)) {
            dcf_c t = v[i];
            v[i] = v[rev5(i)];
            v[rev5(i)] = t;
        }
#pragma unroll
    for (int stage = 1; stage <= 5; stage++)
#pragma unroll
        for (int b = 0; b < DCF_N / 2; b++) { // butterfly b of the stage: element i + k and its pair
            const int half = 1 << (stage - 1), k = b & (half - 1), lo = ((b >> (stage - 1)) << stage) + k;
            dcf_c w = tw[k * (DCF_N >> stage)];
            if (Inverse)
                w.im = -w.im;
            dcf_c u = v[lo], t = dcf_mul(v[lo + half], w);
            v[lo] = dcf_c{u.re + t.re, u.im + t.im};
            v[lo + half] = dcf_c{u.re - t.re, u.im - t.im};
        }
}

// The 2-D transform of DCF_N x DCF_N values as track_dcf.c's fft2 (the rows, then the columns;
// without its 1/n): lane x holds column x (v[y]: row y) before and after.
template <bool Inverse>
__device__ __forceinline__ void warp_fft2(dcf_c (&v)[DCF_N], int lane, const dcf_c *tw)
{
#pragma unroll
    for (int y = 0; y < DCF_N; y++)
        v[y] = warp_fft<Inverse>(v[y], lane, tw);
    reg_fft<Inverse>(v, tw);
}

// The block's buffer for block_fft2: a DCF_N x DCF_N transform, rows padded against bank conflicts.
__device__ __forceinline__ dcf_c (*fft_buffer())[DCF_N + 1]
{
    __shared__ dcf_c buffer[DCF_N][DCF_N + 1];
    return buffer;
}

// The same 2-D transform by the whole block: each warp transforms rows (lane x holds element x),
// then columns (lane y holds element y) through the shared buffer; warp_fft's butterflies, value for
// value those of warp_fft2's rows and columns. load(i) and store(i, v) take element i = y * DCF_N + x.
template <bool Inverse, class Load, class Store>
__device__ void block_fft2(Load load, Store store, const dcf_c *tw)
{
    dcf_c(*buffer)[DCF_N + 1] = fft_buffer();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int y = warp; y < DCF_N; y += kWarps)
        buffer[y][lane] = warp_fft<Inverse>(load(y * DCF_N + lane), lane, tw);
    __syncthreads();
    for (int x = warp; x < DCF_N; x += kWarps)
        store(lane * DCF_N + x, warp_fft<Inverse>(buffer[lane][x], lane, tw));
    __syncthreads();
}

// The object's frame: its stream's pixels or texture, resolved once.
struct source {
    const uint8_t *pixels; // the stream's first row, or NULL: the texture
    size_t pitch;
    int channels, r, b;    // bytes a pixel; the offsets of red and blue
    cudaTextureObject_t texture;
    int width, height;
};

__device__ source make_source(const glcv_cuda_dcf_params &p, int stream)
{
    source s;
    s.pixels = p.pixels ? p.pixels + (size_t)stream * (size_t)p.height * p.pitch : nullptr;
    s.pitch = p.pitch;
    s.channels = p.channels;
    s.r = p.bgr ? 2 : 0;
    s.b = p.bgr ? 0 : 2;
    s.texture = p.pixels ? 0 : p.pixels_layers ? p.pixels_layers[stream] : p.pixels_texture;
    s.width = p.width;
    s.height = p.height;
    return s;
}

// The R, G, B of frame pixel (x, y) of the object's stream (w unused).
__device__ __forceinline__ uchar4 fetch(const source &s, int x, int y)
{
    if (s.pixels) {
        const uint8_t *px = s.pixels + (size_t)y * s.pitch + (size_t)x * (size_t)s.channels;
        return make_uchar4(px[s.r], px[1], px[s.b], 0);
    }
    return tex2D<uchar4>(s.texture, (float)x + 0.5f, (float)y + 0.5f); // point sampling: element (x, y)
}

using tap = glcv_cuda_dcf_tap;

// The taps of a (n + 2)-pixel resampling along both axes (track_dcf.c's taps): x tap (i, a) at
// tx[i * kx + a], y tap (j, b) at ty[j * ky + b], i, j = 0..n+1 (the CPU's -1..n); the block's
// threads from `first`, `count` of them (the caller synchronises).
__device__ void make_taps(const source &src, double cx, double cy, double sx, double sy, int n, tap *tx, tap *ty,
                          int first, int count)
{
    const int kx = dcf_super(sx), ky = dcf_super(sy), nx = (n + 2) * kx, ny = (n + 2) * ky;
    for (int e = first; e < nx + ny; e += count)
        if (e < nx)
            dcf_tap_at(cx, sx, n, kx, src.width, e / kx - 1, e % kx, &tx[e].i0, &tx[e].i1, &tx[e].w);
        else
            dcf_tap_at(cy, sy, n, ky, src.height, (e - nx) / ky - 1, (e - nx) % ky, &ty[e - nx].i0, &ty[e - nx].i1,
                       &ty[e - nx].w);
}

// A resampled pixel (track_dcf.c's sample) from its KX x KY sub-samples' taps: every frame pixel
// fetched first (the loads in flight together), then the sub-samples b (rows) outer, a (columns)
// inner, then the mean.
template <int KX, int KY>
__device__ __forceinline__ void sample_pixel_k(const source &s, const tap *tx, const tap *ty, float *out)
{
    uchar4 q[KY][KX][4];
#pragma unroll
    for (int b = 0; b < KY; b++)
#pragma unroll
        for (int a = 0; a < KX; a++) {
            q[b][a][0] = fetch(s, tx[a].i0, ty[b].i0);
            q[b][a][1] = fetch(s, tx[a].i1, ty[b].i0);
            q[b][a][2] = fetch(s, tx[a].i0, ty[b].i1);
            q[b][a][3] = fetch(s, tx[a].i1, ty[b].i1);
        }
    float acc[3] = {0, 0, 0};
#pragma unroll
    for (int b = 0; b < KY; b++)
#pragma unroll
        for (int a = 0; a < KX; a++) {
            const uchar4 *v = q[b][a];
            const float wx = tx[a].w, wy = ty[b].w;
            acc[0] += dcf_bilerp(v[0].x, v[1].x, v[2].x, v[3].x, wx, wy);
            acc[1] += dcf_bilerp(v[0].y, v[1].y, v[2].y, v[3].y, wx, wy);
            acc[2] += dcf_bilerp(v[0].z, v[1].z, v[2].z, v[3].z, wx, wy);
        }
    const float norm = 1.0f / (float)(KX * KY);
#pragma unroll
    for (int c = 0; c < 3; c++)
        out[c] = acc[c] * norm;
}

static_assert(DCF_MAX_SUPER == 2, "sample_pixel's cases");

// Pixel (i, j) of a resampling whose taps make_taps made (kx, ky sub-samples).
__device__ void sample_pixel(const source &s, const tap *tx, const tap *ty, int kx, int ky, int i, int j, float *out)
{
    tx += i * kx;
    ty += j * ky;
    switch (kx * 2 + ky) {
    case 3: sample_pixel_k<1, 1>(s, tx, ty, out); break;
    case 4: sample_pixel_k<1, 2>(s, tx, ty, out); break;
    case 5: sample_pixel_k<2, 1>(s, tx, ty, out); break;
    default: sample_pixel_k<2, 2>(s, tx, ty, out); break;
    }
}

// The gradients of the inside pixels of `count` patches of w x w (patch k at patches + k *
// patch_floats, rows of w + 2 pixels) into s->g* (patch k's at k * w * w, pixel j of cell c at
// j * cells + c), a thread a pixel; then each cell's histogram (in a thread's registers: a bin
// takes a pixel's share or adds 0, as exact as the CPU's two adds), gray sum and energy, a thread a
// cell, the cells' bins in planes (bin o of cell c at hist[o * cells + c], patch k's at
// hist + k * hist_floats).
__device__ void hog_cells(glcv_cuda_dcf_scratch *s, const float *patches, int patch_floats, int count, int w,
                          float *hist, int hist_floats, float *energy, float *gray)
{
    const int pw = w + 2, cw = w / DCF_CELL, cells = cw * cw, px = w * w;
    for (int k = team_first(); k < count * px; k += team_stride()) {
        const int m = k / px, e = k % px, x = e % w, y = e / w;
        const float *p = patches + (size_t)m * patch_floats + ((size_t)(y + 1) * pw + (size_t)(x + 1)) * 3;
        const int j = (y % DCF_CELL) * DCF_CELL + x % DCF_CELL, c = (y / DCF_CELL) * cw + x / DCF_CELL;
        const int g = m * px + j * cells + c;
        dcf_pixel_gradient(p, pw, &s->gmag[g], &s->gbin[g], &s->gshare[g], &s->ggray[g]);
    }
    team_sync();
    for (int k = team_first(); k < count * cells; k += team_stride()) {
        const int m = k / cells, c = k % cells;
        float h[18], g = 0;
#pragma unroll
        for (int o = 0; o < 18; o++)
            h[o] = 0;
#pragma unroll 4
        for (int j = 0; j < DCF_CELL * DCF_CELL; j++) {
            const int i = m * px + j * cells + c;
            const float mag = s->gmag[i], f = s->gshare[i];
            const int b0 = s->gbin[i], b1 = b0 + 1 == 18 ? 0 : b0 + 1;
            const float lo = (1.0f - f) * mag, hi = f * mag;
            g += s->ggray[i];
#pragma unroll
            for (int o = 0; o < 18; o++)
                h[o] += o == b0 ? lo : o == b1 ? hi : 0.0f;
        }
        float *hc = hist + (size_t)m * hist_floats + c;
#pragma unroll
        for (int o = 0; o < 18; o++)
            hc[o * cells] = h[o];
        gray[m * cells + c] = g;
        energy[m * cells + c] = dcf_cell_energy(h, 1);
    }
    team_sync();
}

// The window's patch, HOG cells and Hann window at the object's centre and scale (s->feat).
__device__ void window_features(const source &src, const glcv_track_dcf *d, glcv_cuda_dcf_scratch *s,
                                const glcv_track_dcf_tables *t)
{
    const int pw = DCF_T + 2;
    const double sx = d->zx * d->scale, sy = d->zy * d->scale;
    make_taps(src, d->cx, d->cy, sx, sy, DCF_T, s->wtap[0], s->wtap[1], team_first(), team_stride());
    team_sync();
    const int kx = dcf_super(sx), ky = dcf_super(sy);
    for (int k = team_first(); k < pw * pw; k += team_stride())
        sample_pixel(src, s->wtap[0], s->wtap[1], kx, ky, k % pw, k / pw, s->patch + (size_t)k * 3);
    team_sync();
    hog_cells(s, s->patch, 0, 1, DCF_T, s->hist, 0, s->energy, s->gray);
    for (int c = team_first(); c < DCF_CELLS; c += team_stride())
        dcf_cell_features(s->hist, 1, DCF_CELLS, s->energy, DCF_N, DCF_N, c % DCF_N, c / DCF_N, s->gray[c], s->feat);
    team_sync();
    for (int k = team_first(); k < DCF_CH * DCF_CELLS; k += team_stride()) {
        int i = k % DCF_CELLS;
        s->feat[k] *= t->hann[i / DCF_N] * t->hann[i % DCF_N];
    }
    team_sync();
}

// The transforms of the channel pairs (c + i (c + 1)) into s->z: one block, a pair a warp; a
// cluster, a pair a block (block_fft2), each block's pairs one after another.
__device__ void pair_transforms(glcv_cuda_dcf_scratch *s, const dcf_c *tw)
{
    const int blocks = (int)glcv_cluster_blocks();
    if (blocks > 1) {
        for (int pair = (int)glcv_cluster_rank(); pair < DCF_CH / 2; pair += blocks) {
            const float *re = s->feat + (size_t)(2 * pair) * DCF_CELLS, *im = re + DCF_CELLS;
            dcf_c *z = s->z[pair];
            block_fft2<false>([&](int i) { return dcf_c{re[i], im[i]}; }, [&](int i, dcf_c v) { z[i] = v; }, tw);
        }
        team_sync();
        return;
    }
    const int lane = threadIdx.x & 31;
    for (int pair = threadIdx.x >> 5; pair < DCF_CH / 2; pair += kWarps) {
        const float *re = s->feat + (size_t)(2 * pair) * DCF_CELLS, *im = re + DCF_CELLS;
        dcf_c v[DCF_N];
#pragma unroll
        for (int y = 0; y < DCF_N; y++)
            v[y] = dcf_c{re[y * DCF_N + lane], im[y * DCF_N + lane]};
        warp_fft2<false>(v, lane, tw);
#pragma unroll
        for (int y = 0; y < DCF_N; y++)
            s->z[pair][y * DCF_N + lane] = v[y];
    }
    team_sync();
}

__device__ void learn_filter(glcv_track_dcf *d, glcv_cuda_dcf_scratch *s, const dcf_c *tw, float rate)
{
    pair_transforms(s, tw);
    for (int i = team_first(); i < DCF_CELLS; i += team_stride()) {
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
    team_sync();
}

__device__ void filter_response(const glcv_track_dcf *d, glcv_cuda_dcf_scratch *s, const dcf_c *tw)
{
    pair_transforms(s, tw);
    for (int i = team_first(); i < DCF_CELLS; i += team_stride()) {
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
    team_sync();
    if (leader()) // the inverse transform
        block_fft2<true>([&](int i) { return s->acc[i]; },
                         [&](int i, dcf_c v) { s->response[i] = v.re * (1.0f / DCF_CELLS); }, tw);
    team_sync();
}

__device__ const float *patch_pixel(const glcv_cuda_dcf_scratch *s, int x, int y)
{
    return s->patch + ((size_t)(y + 1) * (DCF_T + 2) + (size_t)(x + 1)) * 3;
}

// The colour response (s->colour): the pixels' likelihoods, row sums, then the integral image down
// the columns, then the cells - each sum in the CPU's order.
__device__ void colour_response(const glcv_track_dcf *d, glcv_cuda_dcf_scratch *s)
{
    const int w1 = DCF_T + 1;
    for (int k = team_first(); k < DCF_T * DCF_T; k += team_stride())
        s->likelihood[k] = dcf_likelihood(d, patch_pixel(s, k / DCF_T, k % DCF_T));
    team_sync();
    // each chain's terms are loaded 16 at a time before its sums (the loads in flight together)
    constexpr int kBatch = 16;
    static_assert(DCF_T % kBatch == 0, "whole batches");
    int first, end;
    team_share(DCF_T, &first, &end);
    for (int y = first; y < end; y += kThreads) {
        double row = 0;
        for (int x0 = 0; x0 < DCF_T; x0 += kBatch) {
            float l[kBatch];
#pragma unroll
            for (int j = 0; j < kBatch; j++)
                l[j] = s->likelihood[(x0 + j) * DCF_T + y];
#pragma unroll
            for (int j = 0; j < kBatch; j++) {
                row += l[j];
                s->rows[y * DCF_T + x0 + j] = row;
            }
        }
    }
    team_sync();
    team_share(DCF_T + 1, &first, &end);
    for (int x = first; x < end; x += kThreads) {
        double v = 0; // integral[y][x]
        s->integral[x] = 0;
        for (int y0 = 0; y0 < DCF_T; y0 += kBatch) {
            double r[kBatch];
#pragma unroll
            for (int j = 0; j < kBatch; j++)
                r[j] = x == 0 ? 0.0 : s->rows[(y0 + j) * DCF_T + x - 1];
#pragma unroll
            for (int j = 0; j < kBatch; j++) {
                v = x == 0 ? 0.0 : v + r[j];
                s->integral[(size_t)(y0 + j + 1) * w1 + x] = v;
            }
        }
    }
    team_sync();
    for (int i = team_first(); i < DCF_CELLS; i += team_stride())
        s->colour[i] = dcf_colour_cell(d, s->integral, i / DCF_N, i % DCF_N);
    team_sync();
}

// The colour histograms learn from the window: whole counts (exact in any order), each block's
// in its shared memory, added into the leader's.
__device__ void learn_colour(glcv_track_dcf *d, glcv_cuda_dcf_scratch *s, float rate)
{
    __shared__ int counts[2][DCF_HIST];
    __shared__ int totals[2];
    for (int i = threadIdx.x; i < 2 * DCF_HIST; i += kThreads)
        counts[i / DCF_HIST][i % DCF_HIST] = 0;
    if (threadIdx.x < 2)
        totals[threadIdx.x] = 0;
    __syncthreads();
    int n[2] = {0, 0};
    for (int k = team_first(); k < DCF_T * DCF_T; k += team_stride()) {
        int x = k % DCF_T, y = k / DCF_T;
        int region = dcf_colour_region(d, x, y);
        if (region == 0)
            continue;
        atomicAdd(&counts[region - 1][dcf_colour_bin(patch_pixel(s, x, y))], 1);
        n[region - 1]++;
    }
    for (int off = 16; off > 0; off >>= 1) {
        n[0] += __shfl_down_sync(kFull, n[0], off);
        n[1] += __shfl_down_sync(kFull, n[1], off);
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(&totals[0], n[0]);
        atomicAdd(&totals[1], n[1]);
    }
    int *all = in_leader(&counts[0][0]), *sums = in_leader(totals);
    if (glcv_cluster_blocks() > 1) {
        team_sync(); // every block's counts are complete
        if (!leader()) {
            for (int i = threadIdx.x; i < 2 * DCF_HIST; i += kThreads)
                if (counts[i / DCF_HIST][i % DCF_HIST])
                    atomicAdd(&all[i], counts[i / DCF_HIST][i % DCF_HIST]);
            if (threadIdx.x < 2)
                atomicAdd(&sums[threadIdx.x], totals[threadIdx.x]);
        }
    }
    team_sync();
    const double n_fg = sums[0], n_bg = sums[1];
    for (int i = team_first(); i < DCF_HIST; i += team_stride()) {
        float nf = (float)all[i], nb = (float)all[DCF_HIST + i];
        float f = n_fg > 0 ? (float)(nf / n_fg) : 0.0f, b = n_bg > 0 ? (float)(nb / n_bg) : 0.0f;
        d->fg[i] = (1.0f - rate) * d->fg[i] + rate * f;
        d->bg[i] = (1.0f - rate) * d->bg[i] + rate * b;
    }
    team_sync();
}

// The 17 scale samples, their HOG cells, and the scale-windowed vectors (s->sfeat).
__device__ void scale_features(const source &src, const glcv_track_dcf *d, glcv_cuda_dcf_scratch *s,
                               const glcv_track_dcf_tables *t)
{
    const int pw = DCF_ST + 2, px = pw * pw, cells = DCF_SN * DCF_SN, slots = pw * DCF_MAX_SUPER * 2;
    for (int k = team_first(); k < DCF_SCALES * slots; k += team_stride()) {
        const int sc = k / slots;
        const double f = d->scale_factor[sc] * d->scale;
        make_taps(src, d->cx, d->cy, d->tw * f / DCF_ST, d->th * f / DCF_ST, DCF_ST, s->stap[sc][0], s->stap[sc][1],
                  k % slots, slots);
    }
    team_sync();
    for (int k = team_first(); k < DCF_SCALES * px; k += team_stride()) {
        const int sc = k / px, e = k % px;
        const double f = d->scale_factor[sc] * d->scale;
        sample_pixel(src, s->stap[sc][0], s->stap[sc][1], dcf_super(d->tw * f / DCF_ST), dcf_super(d->th * f / DCF_ST),
                     e % pw, e / pw, s->spatch[sc] + (size_t)e * 3);
    }
    team_sync();
    hog_cells(s, s->spatch[0], px * 3, DCF_SCALES, DCF_ST, s->shist[0], 18 * cells, s->senergy[0], s->sgray[0]);
    for (int k = team_first(); k < DCF_SCALES * cells; k += team_stride()) {
        int sc = k / cells, c = k % cells;
        dcf_cell_features(s->shist[sc], 1, cells, s->senergy[sc], DCF_SN, DCF_SN, c % DCF_SN, c / DCF_SN,
                          s->sgray[sc][c], s->sraw[sc]);
    }
    team_sync();
    for (int k = team_first(); k < DCF_SCALES * DCF_SDIM; k += team_stride()) {
        int sc = k / DCF_SDIM, i = k % DCF_SDIM;
        s->sfeat[sc][i] = s->sraw[sc][i] * t->shann[sc];
    }
    team_sync();
}

// The scale filter's response (s->sresponse): the sums over the dimensions in order, one thread
// per frequency.
__device__ void scale_response(const glcv_track_dcf *d, glcv_cuda_dcf_scratch *s, const glcv_track_dcf_tables *t)
{
    for (int k = team_first(); k < DCF_SDIM * DCF_SHALF; k += team_stride()) {
        int f = k / DCF_SDIM, i = k % DCF_SDIM;
        s->sx[f][i] = dcf_dft_scale(&s->sfeat[0][i], DCF_SDIM, f, t->stwiddle);
    }
    team_sync();
    __shared__ dcf_c lanes[DCF_SHALF * DCF_SLANES], acc[DCF_SHALF];
    dcf_c *lanes_all = in_leader(lanes);
    for (int k = team_first(); k < DCF_SHALF * DCF_SLANES; k += team_stride()) {
        int f = k / DCF_SLANES, l = k % DCF_SLANES;
        dcf_c a = {0, 0};
        for (int i = l; i < DCF_SDIM; i += DCF_SLANES) {
            dcf_c p = dcf_mulc(d->sa[f][i], s->sx[f][i]);
            a.re += p.re;
            a.im += p.im;
        }
        lanes_all[k] = a;
    }
    team_sync();
    if (leader()) { // the sums in order, and the response, in the leader
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
    }
    team_sync();
}

__device__ void learn_scale(glcv_track_dcf *d, glcv_cuda_dcf_scratch *s, const glcv_track_dcf_tables *t, float rate)
{
    for (int k = team_first(); k < DCF_SDIM * DCF_SHALF; k += team_stride()) {
        int f = k / DCF_SDIM, i = k % DCF_SDIM;
        dcf_c x = dcf_dft_scale(&s->sfeat[0][i], DCF_SDIM, f, t->stwiddle), n = dcf_mulc(d->slabel[f], x);
        s->sx[f][i] = x;
        d->sa[f][i].re = (1.0f - rate) * d->sa[f][i].re + rate * n.re;
        d->sa[f][i].im = (1.0f - rate) * d->sa[f][i].im + rate * n.im;
    }
    team_sync();
    __shared__ float lanes[DCF_SHALF * DCF_SLANES];
    float *lanes_all = in_leader(lanes);
    for (int k = team_first(); k < DCF_SHALF * DCF_SLANES; k += team_stride()) {
        int f = k / DCF_SLANES, l = k % DCF_SLANES;
        float b = 0;
        for (int i = l; i < DCF_SDIM; i += DCF_SLANES)
            b += s->sx[f][i].re * s->sx[f][i].re + s->sx[f][i].im * s->sx[f][i].im;
        lanes_all[k] = b;
    }
    team_sync();
    if (leader() && threadIdx.x < DCF_SHALF) {
        int f = threadIdx.x;
        float b = 0;
        for (int l = 0; l < DCF_SLANES; l++)
            b += lanes[f * DCF_SLANES + l];
        d->sb[f] = (1.0f - rate) * d->sb[f] + rate * b;
    }
    team_sync();
}

__device__ void learn(const source &src, glcv_track_dcf *d, glcv_cuda_dcf_scratch *s, const glcv_track_dcf_tables *t,
                      const dcf_c *tw, int first)
{
    window_features(src, d, s, t);
    for (int i = team_first(); i < DCF_CELLS; i += team_stride()) {
        const float m = dcf_box_cover(d, i / DCF_N, i % DCF_N);
        for (int c = 0; c < DCF_CH; c++)
            s->feat[c * DCF_CELLS + i] *= m;
    }
    team_sync();
    learn_filter(d, s, tw, first ? 1.0f : dcf_step_rate(DCF_RATE));
    learn_colour(d, s, first ? 1.0f : dcf_step_rate(DCF_COLOUR_RATE));
    scale_features(src, d, s, t);
    learn_scale(d, s, t, first ? 1.0f : dcf_step_rate(DCF_SCALE_RATE));
}

// MinBlocks 2 caps the registers at 64 a thread so that two objects share a multiprocessor (some
// of the FFT's registers spill to local memory): slower for one object, faster for sets with more
// objects than the device has multiprocessors (glcv_cuda_track_dcf_two_fit). The same arithmetic.
template <int MinBlocks> __global__ void __launch_bounds__(kThreads, MinBlocks) dcf_kernel(glcv_cuda_dcf_params p)
{
    const int object = (int)(blockIdx.x / glcv_cluster_blocks()), id = p.ids[object];
    glcv_track_dcf *d = &p.objects[id];
    glcv_cuda_dcf_scratch *s = &p.scratch[id];
    const glcv_track_dcf_tables *t = p.tables;
    const source src = make_source(p, p.streams[id]);
    __shared__ int judged; // the leader's decision: 0 lost, 1 found, 2 found but not sure
    __shared__ dcf_c tw[DCF_N / 2];
    if (threadIdx.x < DCF_N / 2)
        tw[threadIdx.x] = t->twiddle[threadIdx.x];
    __syncthreads();
    const bool started = d->started; // read by every block before the leader changes it
    if (!started) {
        learn(src, d, s, t, tw, 1);
        if (leader() && threadIdx.x == 0) {
            d->started = 1;
            d->psr = 0;
            judged = 1;
        }
    } else {
        window_features(src, d, s, t);
        filter_response(d, s, tw);
        colour_response(d, s);
        for (int i = team_first(); i < DCF_CELLS; i += team_stride())
            s->colour[i] = (1.0f - DCF_MERGE) * s->response[i] + DCF_MERGE * s->colour[i];
        team_sync();
        if (leader()) { // the peaks, the ratio and the decision
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
        }
        team_sync();
        const int decision = *in_leader(&judged);
        if (decision) {
            scale_features(src, d, s, t);
            scale_response(d, s, t);
            if (leader() && threadIdx.x == 0)
                dcf_rescale(d, pow(DCF_SCALE_STEP, dcf_scale_peak(s->sresponse)));
            team_sync();
            if (decision == 1 && dcf_learns(d))
                learn(src, d, s, t, tw, 0);
        }
    }
    team_sync(); // no block leaves while another may still read the leader's shared memory
    if (leader() && threadIdx.x == 0)
        dcf_output(d, judged == 0, &p.results[object]);
}

} // namespace

extern "C" int glcv_cuda_track_dcf_two_fit(void)
{
    int fit = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, dcf_kernel<2>, kThreads, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return fit >= 2;
}

extern "C" size_t glcv_cuda_track_dcf_scratch_bytes(void)
{
    return sizeof(glcv_cuda_dcf_scratch);
}

extern "C" int glcv_cuda_track_dcf_max_cluster(void)
{
    return glcv_cluster_largest(dcf_kernel<1>, kThreads, 0, kMaxCluster);
}

extern "C" int glcv_cuda_track_dcf(glcv_cuda_dcf_params p, cudaStream_t stream)
{
    if (p.n < 1)
        return (int)cudaSuccess;
    const bool textures = p.pixels_texture != 0 || p.pixels_layers;
    if ((textures ? p.pixels != nullptr : !p.pixels || (p.channels != 3 && p.channels != 4)) || !p.ids ||
        !p.streams || !p.objects || !p.scratch || !p.tables || !p.results || p.width < 1 || p.height < 1 ||
        (p.blocks == 2 && p.cluster != 1))
        return (int)cudaErrorInvalidValue;
    if (p.blocks == 2)
        return (int)glcv_cluster_launch(dcf_kernel<2>, p, p.n, 1, kThreads, 0, stream);
    return (int)glcv_cluster_launch(dcf_kernel<1>, p, p.n, p.cluster, kThreads, 0, stream);
}
