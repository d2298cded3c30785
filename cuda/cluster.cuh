// Thread-block clusters (compute capability 9.0) for kernels that give one object several blocks:
// a block's rank in its cluster, the cluster's size, its barrier, and another block's shared
// memory; on the host, the largest cluster a kernel can run and its launch. Compiled for earlier
// devices every block is a cluster of one: rank 0 of 1, the barrier the block's.
#ifndef GLCV_CLUSTER_CUH
#define GLCV_CLUSTER_CUH

#include <cooperative_groups.h>
#include <cuda_runtime.h>

__device__ __forceinline__ unsigned glcv_cluster_rank()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return cooperative_groups::this_cluster().block_rank();
#else
    return 0;
#endif
}

__device__ __forceinline__ unsigned glcv_cluster_blocks()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return cooperative_groups::this_cluster().num_blocks();
#else
    return 1;
#endif
}

// The cluster's barrier: release and acquire at cluster scope, so that the writes of every block
// before it (shared, distributed shared and global memory) are seen by every block after it.
__device__ __forceinline__ void glcv_cluster_sync()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cooperative_groups::this_cluster().sync();
#else
    __syncthreads();
#endif
}

// p (a shared-memory address of this block) in block `rank`'s shared memory.
template <class T> __device__ __forceinline__ T *glcv_cluster_map(T *p, unsigned rank)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return cooperative_groups::this_cluster().map_shared_rank(p, rank);
#else
    (void)rank;
    return p;
#endif
}

// ---- host side -------------------------------------------------------------------------------------

// The largest power of two up to `most` blocks (at most 16) that the current device runs as one
// cluster of `kernel` with `threads` threads and `smem` bytes of dynamic shared memory a block; 1
// below compute capability 9.0 or on any error (cleared).
template <class Kernel> int glcv_cluster_largest(Kernel kernel, int threads, size_t smem, int most)
{
    int device = 0, major = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return 1;
    }
    if (major < 9)
        return 1;
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)
        (void)cudaGetLastError();
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)most, 1, 1);
    cfg.blockDim = dim3((unsigned)threads, 1, 1);
    cfg.dynamicSmemBytes = smem;
    int size = 1;
    if (cudaOccupancyMaxPotentialClusterSize(&size, kernel, &cfg) != cudaSuccess) {
        (void)cudaGetLastError();
        return 1;
    }
    int best = 1;
    while (best * 2 <= size && best * 2 <= most && best * 2 <= 16)
        best *= 2;
    return best;
}

// Launches `kernel` on `objects` clusters of `cluster` blocks (1, 2, 4, 8 or 16; 1: plain blocks),
// block k * cluster + r being block r of object k's cluster.
template <class Kernel, class Params>
cudaError_t glcv_cluster_launch(Kernel kernel, const Params &p, int objects, int cluster, int threads, size_t smem,
                                cudaStream_t stream)
{
    if (cluster != 1 && cluster != 2 && cluster != 4 && cluster != 8 && cluster != 16)
        return cudaErrorInvalidValue;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)(objects * cluster), 1, 1);
    cfg.blockDim = dim3((unsigned)threads, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cudaLaunchAttribute attr[1];
    cfg.attrs = attr;
    cfg.numAttrs = 0;
    if (cluster > 1) {
        if (cluster > 8) {
            cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
            if (err != cudaSuccess)
                return err;
        }
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = (unsigned)cluster;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cfg.numAttrs = 1;
    }
    return cudaLaunchKernelEx(&cfg, kernel, p);
}

#endif
