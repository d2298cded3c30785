#include "cuda_texture.h"

#include <string.h>

cudaTextureObject_t cuda_texture_object(cudaArray_t array)
{
    struct cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = array;
    struct cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex = 0;
    if (cudaCreateTextureObject(&tex, &res, &td, NULL) != cudaSuccess)
        return 0;
    return tex;
}
