/* A CUDA texture object over an array, as the CUDA-GL bridge makes them for a registered
 * texture's level 0 (glcv_cuda_texture_object): point sampling, clamped addresses, elements read
 * as stored. Shared by test_bridge and bench/interop_bench (built with CUDA only). */
#ifndef GLCV_CUDA_TEXTURE_H
#define GLCV_CUDA_TEXTURE_H

#include <cuda_runtime_api.h>

/* The new texture object, or 0 when CUDA refuses it. */
cudaTextureObject_t cuda_texture_object(cudaArray_t array);

#endif
