// CAMSHIFT on the GPU (Perry 2016, after Bradski 1998): the bin image of a frame, then every
// object's whole frame - mean-shift loop, CamShift sizing, window histogram, lost logic - in one
// launch, without a host round trip per iteration.
//
// Perry's design launched child reductions from a parent kernel (dynamic parallelism). Here one
// block, or on compute capability 9.0 one thread-block cluster, owns an object and loops on the
// device: each iteration the blocks sum their share of the window's rows, exchange the partial
// moments through distributed shared memory and all compute the same next window. The moments
// are exact 64-bit integer sums, so the order of the reduction does not matter, and the window
// arithmetic is track_math.h's, shared with the CPU implementation (compiled with
// --fmad=false), so both engines agree bit for bit.
#include <cuda_runtime.h>

#include "cluster.cuh"
#include "track_kernels.h"

namespace {

constexpr int kThreads = GLCV_CUDA_TRACK_THREADS;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxCluster = 16;

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long v)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

struct Shared {
    unsigned long long warp_part[kWarps][GLCV_TM_MOMENTS];
    unsigned long long part[2][GLCV_TM_MOMENTS]; // this block's partial sums, read by the cluster
    unsigned long long total[GLCV_TM_MOMENTS];
    double lanes[GLCV_TM_DIST_LANES];
    unsigned long long lane_counts[GLCV_TM_DIST_LANES];
    double distance;
};

// The moments of rectangle r summed by the whole cluster; every thread gets them in m.
// Rows are dealt to warps across the cluster; each lane reads 8 bins (16 bytes) at a time.
__device__ void cluster_moments(const glcv_cuda_track_params &p, const uint16_t *bins, const uint8_t *lut,
                                glcv_tm_rect r, Shared &sh, int &parity, unsigned long long m[GLCV_TM_MOMENTS])
{
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const unsigned rank = glcv_cluster_rank(), blocks = glcv_cluster_blocks();
    const int nbins = p.config.nbins;
    uint64_t acc[GLCV_TM_MOMENTS] = {0, 0, 0, 0, 0, 0};
    const int c0 = r.x >> 3, c1 = (r.x + r.w - 1) >> 3;
    const int row_step = kWarps * (int)blocks;
    for (int y = (int)rank * kWarps + warp; y < r.h; y += row_step) {
        const uint16_t *row = bins + (size_t)(r.y + y) * p.bins_pitch;
        unsigned s0 = 0, s1 = 0; // s1 <= 8 ceil(16384 / 256) * 255 * 16383 < 2^32
        unsigned long long s2 = 0;
        for (int c = c0 + lane; c <= c1; c += 32) {
            const uint4 v = __ldg(reinterpret_cast<const uint4 *>(row + (size_t)c * 8));
            const unsigned words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int e = 0; e < 8; e++) {
                const unsigned x = (unsigned)(c * 8 + e - r.x);
                unsigned bin = (words[e >> 1] >> ((e & 1) * 16)) & 0xffffu;
                bin = min(bin, (unsigned)nbins);
                const unsigned p8 = x < (unsigned)r.w ? lut[bin] : 0u;
                const unsigned px = p8 * x;
                s0 += p8;
                s1 += px;
                s2 += (unsigned long long)px * x;
            }
        }
        glcv_tm_add_row(acc, (uint64_t)y, s0, s1, s2);
    }
    unsigned long long v[GLCV_TM_MOMENTS];
#pragma unroll
    for (int i = 0; i < GLCV_TM_MOMENTS; i++)
        v[i] = acc[i];
#pragma unroll
    for (int i = 0; i < GLCV_TM_MOMENTS; i++) {
        v[i] = warp_sum(v[i]);
        if (lane == 0)
            sh.warp_part[warp][i] = v[i];
    }
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int i = 0; i < GLCV_TM_MOMENTS; i++) {
            unsigned long long s = lane < kWarps ? sh.warp_part[lane][i] : 0ull;
            s = warp_sum(s);
            if (lane == 0)
                sh.part[parity][i] = s;
        }
    }
    // Every block's partial is written before any block reads it. A block writes part[parity]
    // again only two sums later, after the next glcv_cluster_sync, by which time every block has
    // finished reading this sum's partials.
    glcv_cluster_sync();
    if (threadIdx.x == 0) {
        unsigned long long t[GLCV_TM_MOMENTS] = {0, 0, 0, 0, 0, 0};
        for (unsigned b = 0; b < blocks; b++) {
            const unsigned long long *remote = glcv_cluster_map(&sh.part[parity][0], b);
#pragma unroll
            for (int i = 0; i < GLCV_TM_MOMENTS; i++)
                t[i] += remote[i];
        }
#pragma unroll
        for (int i = 0; i < GLCV_TM_MOMENTS; i++)
            sh.total[i] = t[i];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < GLCV_TM_MOMENTS; i++)
        m[i] = sh.total[i];
    parity ^= 1;
    __syncthreads(); // sh.total is rewritten by the next sum
}

// The Bhattacharyya distance of window w's histogram to the object's model, on rank 0 (the
// other ranks return -1). Same fixed lane order as glcv_track_cpu_distance.
__device__ double cluster_distance(const glcv_cuda_track_params &p, const uint16_t *bins, int id, glcv_tm_rect w,
                                   uint32_t *counts, Shared &sh)
{
    const unsigned rank = glcv_cluster_rank(), blocks = glcv_cluster_blocks();
    const int nbins = p.config.nbins;
    for (int b = threadIdx.x; b < nbins; b += kThreads)
        counts[b] = 0;
    __syncthreads();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    for (int y = (int)rank * kWarps + warp; y < w.h; y += kWarps * (int)blocks) {
        const uint16_t *row = bins + (size_t)(w.y + y) * p.bins_pitch + w.x;
        for (int x = lane; x < w.w; x += 32) {
            const unsigned bin = row[x];
            if (bin < (unsigned)nbins)
                atomicAdd(&counts[bin], 1u);
        }
    }
    glcv_cluster_sync(); // every block's counts are complete
    double d = -1.0;
    if (rank == 0) {
        if (blocks > 1) {
            for (int b = threadIdx.x; b < nbins; b += kThreads) {
                unsigned s = 0;
                for (unsigned k = 0; k < blocks; k++)
                    s += glcv_cluster_map(counts, k)[b];
                counts[b] = s; // only this thread reads or writes bin b here
            }
            __syncthreads();
        }
        const double *sqrt_model = p.sqrt_models + (size_t)id * (size_t)nbins;
        for (int t = threadIdx.x; t < GLCV_TM_DIST_LANES; t += kThreads) {
            double acc = 0.0;
            unsigned long long total = 0;
            for (int b = t; b < nbins; b += GLCV_TM_DIST_LANES) {
                acc += sqrt_model[b] * sqrt((double)counts[b]);
                total += counts[b];
            }
            sh.lanes[t] = acc;
            sh.lane_counts[t] = total;
        }
        __syncthreads();
        for (int s = GLCV_TM_DIST_LANES / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s) {
                sh.lanes[threadIdx.x] += sh.lanes[threadIdx.x + s];
                sh.lane_counts[threadIdx.x] += sh.lane_counts[threadIdx.x + s];
            }
            __syncthreads();
        }
        if (threadIdx.x == 0)
            sh.distance = glcv_tm_distance(sh.lanes[0], p.model_sums[id], (double)sh.lane_counts[0]);
        __syncthreads();
        d = sh.distance;
    }
    return d;
}

__global__ void __launch_bounds__(kThreads) track_kernel(const glcv_cuda_track_params p)
{
    extern __shared__ __align__(16) unsigned char dyn[];
    __shared__ Shared sh;
    const glcv_tm_config &c = p.config;
    const unsigned blocks = glcv_cluster_blocks();
    const int k = (int)(blockIdx.x / blocks);
    const int id = p.ids[k];
    uint32_t *counts = reinterpret_cast<uint32_t *>(dyn);
    uint8_t *lut = dyn + (c.measure_distance ? (size_t)c.nbins * 4 : 0);

    const uint8_t *model_lut = p.luts + (size_t)id * (size_t)p.lut_stride;
    for (int i = threadIdx.x; i <= c.nbins; i += kThreads)
        lut[i] = model_lut[i];
    __syncthreads();

    glcv_tm_object object = p.initial ? p.initial[k] : p.objects[id];
    const uint16_t *bins = p.bins + (size_t)object.stream * p.stream_stride;
    glcv_tm_meanshift ms;
    glcv_tm_meanshift_begin(&ms, object.window, &c);
    unsigned long long m[GLCV_TM_MOMENTS];
    int parity = 0;
    do {
        cluster_moments(p, bins, lut, ms.cur, sh, parity, m);
    } while (glcv_tm_meanshift_step(&ms, reinterpret_cast<const uint64_t *>(m), &c));

    glcv_tm_result res;
    memset(&res, 0, sizeof res);
    res.iterations = ms.iterations;
    res.reasons = ms.capped ? GLCV_TM_LOST_ITERATIONS : 0u;
    if (c.window_mode == GLCV_TM_WINDOW_PAPER) {
        cluster_moments(p, bins, lut, ms.cur, sh, parity, m);
        res.measured = ms.cur;
        res.window = ms.cur;
    } else if (c.window_mode == GLCV_TM_WINDOW_ADAPTIVE) {
        const glcv_tm_rect grown = glcv_tm_adaptive_grow(ms.cur, &c);
        cluster_moments(p, bins, lut, grown, sh, parity, m);
        res.measured = grown;
        res.window = glcv_tm_adaptive_box(reinterpret_cast<const uint64_t *>(m), grown, &object, &c);
    } else {
        const glcv_tm_rect grown = glcv_tm_camshift_grow(ms.cur, &c);
        glcv_tm_box box;
        cluster_moments(p, bins, lut, grown, sh, parity, m);
        res.measured = grown;
        res.window = glcv_tm_camshift_size(reinterpret_cast<const uint64_t *>(m), grown, &c, &box);
    }
#pragma unroll
    for (int i = 0; i < GLCV_TM_MOMENTS; i++)
        res.m[i] = m[i];
    res.distance = -1.0;
    if (c.measure_distance) {
        const glcv_tm_rect w = glcv_tm_intersect(res.window, glcv_tm_frame_rect(&c));
        res.distance = cluster_distance(p, bins, id, w, counts, sh);
    }
    // No block leaves while another may still read its shared memory.
    glcv_cluster_sync();
    if (glcv_cluster_rank() == 0 && threadIdx.x == 0) {
        glcv_tm_finish(&object, &res, &c);
        p.objects[id] = object;
        if (p.states)
            p.states[k] = object;
        p.results[k] = res;
    }
}

// Four pixels per thread; one row per blockIdx.y, one stream per blockIdx.z. kTextures: the frame
// and the mask (when there is one) come from texture objects, else from pitched memory.
template <bool kTextures> __global__ void bins_kernel(const glcv_cuda_bins_params p)
{
    const glcv_tm_config &c = p.config;
    const int y = blockIdx.y;
    const int z = blockIdx.z;
    const size_t row_index = (size_t)z * (size_t)c.height + (size_t)y; // in the stacked streams
    const int x0 = (int)(blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (x0 >= (int)p.bins_pitch)
        return;
    const uint8_t *row = kTextures ? nullptr : p.pixels + row_index * p.pitch;
    const uint8_t *mrow = !kTextures && p.mask ? p.mask + row_index * p.mask_pitch : nullptr;
    const cudaTextureObject_t pixels_texture = kTextures && p.pixels_layers ? p.pixels_layers[z] : p.pixels_texture;
    const cudaTextureObject_t mask_texture = kTextures && p.mask_layers ? p.mask_layers[z] : p.mask_texture;
    unsigned short out[4];
    const bool vector =
        !kTextures && p.channels == 4 && ((reinterpret_cast<uintptr_t>(row) & 15u) == 0) && x0 + 4 <= c.width;
    uint4 quad = make_uint4(0, 0, 0, 0);
    if (vector)
        quad = __ldg(reinterpret_cast<const uint4 *>(row + (size_t)x0 * 4));
    const unsigned words[4] = {quad.x, quad.y, quad.z, quad.w};
    const float fy = (float)y + 0.5f;
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const int x = x0 + e;
        if (x >= c.width) {
            out[e] = (unsigned short)c.nbins;
            continue;
        }
        int r, g, b, m = 1;
        if (kTextures) {
            // point sampling at the pixel's centre returns exactly element (x, y)
            const float fx = (float)x + 0.5f;
            const uchar4 v = tex2D<uchar4>(pixels_texture, fx, fy);
            r = v.x;
            g = v.y;
            b = v.z;
            if (mask_texture) {
                const unsigned mv = p.mask_texture_channels == 4 ? (unsigned)tex2D<uchar4>(mask_texture, fx, fy).x
                                                                 : (unsigned)tex2D<unsigned char>(mask_texture, fx, fy);
                m = mv >= (unsigned)p.mask_min;
            }
        } else if (vector) {
            r = (int)(words[e] & 255u);
            g = (int)(words[e] >> 8 & 255u);
            b = (int)(words[e] >> 16 & 255u);
        } else {
            const uint8_t *px = row + (size_t)x * (size_t)p.channels;
            r = px[0];
            g = px[1];
            b = px[2];
        }
        if (p.bgr) {
            const int t = r;
            r = b;
            b = t;
        }
        if (!kTextures && mrow)
            m = mrow[x] >= p.mask_min;
        out[e] = (unsigned short)glcv_tm_bin(p.tables, &c, r, g, b, m);
    }
    uint16_t *dst = p.bins + row_index * p.bins_pitch + x0;
    *reinterpret_cast<ushort4 *>(dst) = make_ushort4(out[0], out[1], out[2], out[3]);
}

} // namespace

extern "C" int glcv_cuda_track_bins(glcv_cuda_bins_params p, cudaStream_t stream)
{
    const bool textures = p.pixels_texture != 0 || p.pixels_layers;
    const bool mask_textures = p.mask_texture != 0 || p.mask_layers;
    if ((textures ? p.channels != 4 || p.mask : !p.pixels || mask_textures) || !p.bins || !p.tables ||
        (p.channels != 3 && p.channels != 4) || p.bins_pitch % 8 != 0 || (int)p.bins_pitch < p.config.width ||
        (mask_textures && p.mask_texture_channels != 1 && p.mask_texture_channels != 4) || p.streams < 1 ||
        p.streams > 65535)
        return (int)cudaErrorInvalidValue;
    const int threads = 128;
    const int quads = (int)(p.bins_pitch / 4);
    dim3 grid((unsigned)((quads + threads - 1) / threads), (unsigned)p.config.height, (unsigned)p.streams);
    if (textures)
        bins_kernel<true><<<grid, threads, 0, stream>>>(p);
    else
        bins_kernel<false><<<grid, threads, 0, stream>>>(p);
    return (int)cudaGetLastError();
}

extern "C" size_t glcv_cuda_track_shared_bytes(const glcv_tm_config *config)
{
    size_t counts = config->measure_distance ? (size_t)config->nbins * 4 : 0;
    return counts + (((size_t)config->nbins + 1 + 15) & ~(size_t)15);
}

extern "C" int glcv_cuda_track_max_cluster(const glcv_tm_config *config)
{
    return glcv_cluster_largest(track_kernel, kThreads, glcv_cuda_track_shared_bytes(config), kMaxCluster);
}

extern "C" int glcv_cuda_track_objects(glcv_cuda_track_params p, int cluster, cudaStream_t stream)
{
    if (p.n < 1)
        return (int)cudaSuccess;
    if (!p.bins || !p.ids || !p.objects || !p.luts || !p.results || p.bins_pitch % 8 != 0)
        return (int)cudaErrorInvalidValue;
    return (int)glcv_cluster_launch(track_kernel, p, p.n, cluster, kThreads, glcv_cuda_track_shared_bytes(&p.config),
                                    stream);
}
