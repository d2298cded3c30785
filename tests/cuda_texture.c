#include "cuda_texture.h"

#include "cuda_bridge.h"

cudaTextureObject_t cuda_texture_object(cudaArray_t array)
{
    cudaTextureObject_t tex = 0;
    if (glcv_cuda_texture_object(array, &tex) != cudaSuccess)
        return 0;
    return tex;
}
