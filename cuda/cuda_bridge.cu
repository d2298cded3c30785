// Kernels of the CUDA-GL interop bridge's checks and benchmarks: they read every byte of a
// handed-over image (linear memory or a texture object over a mapped array) and add them up, so a
// test or a benchmark sees that the pixels arrived, and what reading them costs.
#include <cuda_runtime.h>

#include "cuda_bridge.h"

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ unsigned long long block_sum(unsigned long long v)
{
    __shared__ unsigned long long warp_part[kThreads / 32];
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0)
        warp_part[warp] = v;
    __syncthreads();
    v = 0;
    if (warp == 0) {
        v = lane < kThreads / 32 ? warp_part[lane] : 0ull;
#pragma unroll
        for (int offset = 16; offset > 0; offset >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    return v;
}

// One row per blockIdx.y; 4 bytes per thread and step when the row allows it.
__global__ void sum_linear_kernel(const glcv_cuda_sum_linear_params p)
{
    const uint8_t *row = p.data + (size_t)blockIdx.y * p.pitch;
    unsigned long long s = 0;
    const bool words = (reinterpret_cast<uintptr_t>(row) & 3u) == 0 && p.width_bytes % 4 == 0;
    if (words) {
        const unsigned *w = reinterpret_cast<const unsigned *>(row);
        for (int i = blockIdx.x * kThreads + threadIdx.x; i < p.width_bytes / 4; i += gridDim.x * kThreads) {
            const unsigned v = __ldg(w + i);
            s += (v & 255u) + (v >> 8 & 255u) + (v >> 16 & 255u) + (v >> 24);
        }
    } else {
        for (int i = blockIdx.x * kThreads + threadIdx.x; i < p.width_bytes; i += gridDim.x * kThreads)
            s += row[i];
    }
    s = block_sum(s);
    if (threadIdx.x == 0 && s)
        atomicAdd(p.out, s);
}

__global__ void sum_texture_kernel(const glcv_cuda_sum_texture_params p)
{
    const int y = blockIdx.y;
    unsigned long long s = 0;
    for (int x = blockIdx.x * kThreads + threadIdx.x; x < p.width; x += gridDim.x * kThreads) {
        if (p.channels == 4) {
            const uchar4 v = tex2D<uchar4>(p.texture, x, y);
            s += (unsigned)v.x + v.y + v.z + v.w;
        } else {
            s += tex2D<unsigned char>(p.texture, x, y);
        }
    }
    s = block_sum(s);
    if (threadIdx.x == 0 && s)
        atomicAdd(p.out, s);
}

} // namespace

extern "C" int glcv_cuda_sum_linear(glcv_cuda_sum_linear_params p, cudaStream_t stream)
{
    if (!p.data || !p.out || p.width_bytes < 1 || p.height < 1)
        return (int)cudaErrorInvalidValue;
    const int per_row = (p.width_bytes / 4 + kThreads - 1) / kThreads;
    dim3 grid((unsigned)(per_row < 1 ? 1 : per_row > 8 ? 8 : per_row), (unsigned)p.height);
    sum_linear_kernel<<<grid, kThreads, 0, stream>>>(p);
    return (int)cudaGetLastError();
}

extern "C" int glcv_cuda_sum_texture(glcv_cuda_sum_texture_params p, cudaStream_t stream)
{
    if (!p.texture || !p.out || p.width < 1 || p.height < 1 || (p.channels != 1 && p.channels != 4))
        return (int)cudaErrorInvalidValue;
    const int per_row = (p.width + kThreads - 1) / kThreads;
    dim3 grid((unsigned)(per_row > 8 ? 8 : per_row), (unsigned)p.height);
    sum_texture_kernel<<<grid, kThreads, 0, stream>>>(p);
    return (int)cudaGetLastError();
}
