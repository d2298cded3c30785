// The bridge's device side: the element reads of the caller's textures it hands over to kernels
// (texture objects of uchar4 elements, point sampling, unnormalised coordinates: src/cuda_bridge.c).
#ifndef GLCV_CUDA_BRIDGE_CUH
#define GLCV_CUDA_BRIDGE_CUH

#include <cuda_runtime.h>

// R, G and B of element (x, y): point sampling at the pixel's centre returns exactly that element.
__device__ __forceinline__ void glcv_texel_rgb(unsigned long long texture, int x, int y, unsigned *r, unsigned *g,
                                               unsigned *b)
{
    const uchar4 v = tex2D<uchar4>((cudaTextureObject_t)texture, (float)x + 0.5f, (float)y + 0.5f);
    *r = v.x;
    *g = v.y;
    *b = v.z;
}

#endif
