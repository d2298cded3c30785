// Pearson correlation of one reference against a bank of images (Temizel et al., GPU Gems ch. 34,
// "Cross correlation"), behind src/correlate_kernels.h.
//
// The paper gives one thread per image and sums in float, which loses the sums' low bits at
// 320x240 and reads the bank with a stride of N images. Here one block handles K images (or a
// slice of one): its threads read consecutive 16-byte words of each image (coalesced, streaming
// loads that do not stay in L1), the reference word once for the K images (read-only cache; the
// reference stays in L2 and L1 for the whole bank), and sum y, y*y and x*y four bytes at a time
// with dp4a into 32-bit registers, added into 64 bits every 2048 words. The block then reduces
// with warp shuffles, and the coefficient comes from the exact integers:
//   r = (n Sxy - Sx Sy) / sqrt((n Sxx - Sx^2)(n Syy - Sy^2)),  0 when a variance is 0.
#include "correlate_kernels.h"
#include "cuda_bridge.cuh"

#include <cuda_runtime.h>

#include <cstdint>

namespace {

typedef unsigned long long u64;

constexpr int kThreads = GLCV_CUDA_CORRELATE_THREADS;
constexpr int kFlushWords = 2048; // 2048 * 16 * 65025 < 2^32: the 32-bit sums never overflow

// The same arithmetic as the CPU implementation (src/correlate.c).
__device__ double pearson(long long n, long long sx, long long sxx, u64 sy, u64 syy, u64 sxy)
{
    __int128 num = (__int128)n * (__int128)sxy - (__int128)sx * (__int128)sy;
    __int128 vx = (__int128)n * (__int128)sxx - (__int128)sx * (__int128)sx;
    __int128 vy = (__int128)n * (__int128)syy - (__int128)sy * (__int128)sy;
    if (vx <= 0 || vy <= 0)
        return 0.0;
    double r = __ddiv_rn((double)num, __dsqrt_rn(__dmul_rn((double)vx, (double)vy)));
    r = r > 1.0 ? 1.0 : r;
    r = r < -1.0 ? -1.0 : r;
    return r;
}

__device__ __forceinline__ void add_word(uint32_t (&s)[3], uint4 y, uint4 x)
{
    s[0] = __dp4a(y.x, 0x01010101u, s[0]);
    s[0] = __dp4a(y.y, 0x01010101u, s[0]);
    s[0] = __dp4a(y.z, 0x01010101u, s[0]);
    s[0] = __dp4a(y.w, 0x01010101u, s[0]);
    s[1] = __dp4a(y.x, y.x, s[1]);
    s[1] = __dp4a(y.y, y.y, s[1]);
    s[1] = __dp4a(y.z, y.z, s[1]);
    s[1] = __dp4a(y.w, y.w, s[1]);
    s[2] = __dp4a(y.x, x.x, s[2]);
    s[2] = __dp4a(y.y, x.y, s[2]);
    s[2] = __dp4a(y.z, x.z, s[2]);
    s[2] = __dp4a(y.w, x.w, s[2]);
}

__device__ __forceinline__ u64 warp_sum(u64 v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_down_sync(0xFFFFFFFFu, v, o);
    return v;
}

template <int K>
__global__ void __launch_bounds__(kThreads) correlate_kernel(const glcv_cuda_correlate_params p)
{
    const int first = blockIdx.x * K;
    const int slice = blockIdx.y;
    const size_t words = p.bytes / 16;
    const size_t per = (words + (size_t)p.blocks_per_image - 1) / (size_t)p.blocks_per_image;
    const size_t w0 = (size_t)slice * per;
    const size_t w1 = min(words, w0 + per);
    const uint4 *ref = reinterpret_cast<const uint4 *>(p.reference);
    const uint4 *img[K];
#pragma unroll
    for (int k = 0; k < K; k++) {
        const int i = min(first + k, p.n - 1); // past the end: repeat the last image, not written
        img[k] = reinterpret_cast<const uint4 *>(p.bank + (size_t)i * p.image_pitch);
    }

    uint32_t s[K][3];
    u64 t[K][3];
#pragma unroll
    for (int k = 0; k < K; k++)
        for (int j = 0; j < 3; j++)
            s[k][j] = 0, t[k][j] = 0;

    int since_flush = 0;
    for (size_t w = w0 + threadIdx.x; w < w1; w += kThreads) {
        const uint4 x = __ldg(ref + w);
#pragma unroll
        for (int k = 0; k < K; k++)
            add_word(s[k], __ldcs(img[k] + w), x);
        if (++since_flush == kFlushWords) {
#pragma unroll
            for (int k = 0; k < K; k++)
                for (int j = 0; j < 3; j++)
                    t[k][j] += s[k][j], s[k][j] = 0;
            since_flush = 0;
        }
    }

    __shared__ u64 partial[kThreads / 32][K][3];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
    for (int k = 0; k < K; k++)
        for (int j = 0; j < 3; j++) {
            u64 v = warp_sum(t[k][j] + s[k][j]);
            if (lane == 0)
                partial[warp][k][j] = v;
        }
    __syncthreads();
    if (threadIdx.x >= K * 3)
        return;
    const int k = threadIdx.x / 3, j = threadIdx.x % 3;
    const int i = first + k;
    u64 v = 0;
    for (int wi = 0; wi < kThreads / 32; wi++)
        v += partial[wi][k][j];
    if (i >= p.n)
        return;
    if (p.blocks_per_image > 1) {
        p.partial[((size_t)i * (size_t)p.blocks_per_image + (size_t)slice) * 3 + (size_t)j] = v;
        return;
    }
    // one block per image: finish here (the three sums of image i are in partial[][k][])
    if (j == 0) {
        u64 sy = 0, syy = 0, sxy = 0;
        for (int wi = 0; wi < kThreads / 32; wi++) {
            sy += partial[wi][k][0];
            syy += partial[wi][k][1];
            sxy += partial[wi][k][2];
        }
        p.r[i] = pearson(p.count, p.ref_sum, p.ref_sum_sq, sy, syy, sxy);
    }
}

__global__ void finish_kernel(const glcv_cuda_correlate_finish_params p)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= p.n)
        return;
    u64 sy = 0, syy = 0, sxy = 0;
    const u64 *s = p.partial + (size_t)i * (size_t)p.blocks_per_image * 3;
    for (int b = 0; b < p.blocks_per_image; b++) {
        sy += s[b * 3 + 0];
        syy += s[b * 3 + 1];
        sxy += s[b * 3 + 2];
    }
    p.r[i] = pearson(p.count, p.ref_sum, p.ref_sum_sq, sy, syy, sxy);
}

}  // namespace

extern "C" int glcv_cuda_correlate(glcv_cuda_correlate_params p, cudaStream_t stream)
{
    if (p.n <= 0)
        return cudaSuccess;
    if (p.bytes % 16 || p.image_pitch % 16 || p.blocks_per_image < 1 || p.blocks_per_image > 65535)
        return (int)cudaErrorInvalidValue;
    // K images per block share each reference load; slices of one image when there are few.
    // p.images_per_block (1, 2 or 4) overrides the choice, for tests and benchmarks.
    // Measured on an H200 (8192 images of 320x240): 1 per block 0.154 ms, 2: 0.150 ms, 4: 0.171 ms.
    int k = p.blocks_per_image > 1 ? 1 : p.n >= 1024 ? 2 : 1;
    const int force = p.images_per_block;
    if (p.blocks_per_image == 1 && (force == 1 || force == 2 || force == 4))
        k = force;
    dim3 grid((unsigned)((p.n + k - 1) / k), (unsigned)p.blocks_per_image);
    switch (k) {
    case 4: correlate_kernel<4><<<grid, kThreads, 0, stream>>>(p); break;
    case 2: correlate_kernel<2><<<grid, kThreads, 0, stream>>>(p); break;
    default: correlate_kernel<1><<<grid, kThreads, 0, stream>>>(p); break;
    }
    return (int)cudaGetLastError();
}

extern "C" int glcv_cuda_correlate_finish(glcv_cuda_correlate_finish_params p, cudaStream_t stream)
{
    if (p.n <= 0)
        return cudaSuccess;
    finish_kernel<<<(unsigned)((p.n + 255) / 256), 256, 0, stream>>>(p);
    return (int)cudaGetLastError();
}

namespace {

__global__ void pack_kernel(const glcv_cuda_correlate_pack_params p)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= p.width || y >= p.height)
        return;
    unsigned r, g, b;
    if (p.texture) {
        glcv_texel_rgb(p.texture, x, y, &r, &g, &b);
    } else {
        const uint8_t *s = p.rgba + (size_t)y * p.rgba_pitch + (size_t)x * 4;
        r = s[0];
        g = s[1];
        b = s[2];
    }
    uint8_t *d = p.dst + ((size_t)y * (size_t)p.width + (size_t)x) * (size_t)p.channels;
    if (p.channels == 1) {
        d[0] = (uint8_t)((77u * r + 150u * g + 29u * b + 128u) >> 8);
    } else {
        d[0] = (uint8_t)r;
        d[1] = (uint8_t)g;
        d[2] = (uint8_t)b;
    }
}

}  // namespace

extern "C" int glcv_cuda_correlate_pack(glcv_cuda_correlate_pack_params p, cudaStream_t stream)
{
    if (p.width <= 0 || p.height <= 0)
        return cudaSuccess;
    dim3 grid((unsigned)((p.width + 255) / 256), (unsigned)p.height);
    pack_kernel<<<grid, 256, 0, stream>>>(p);
    return (int)cudaGetLastError();
}
