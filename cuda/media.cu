// The media service's kernel: a texture set's frames, 4:2:0 planes (NVDEC's NV12 in GPU memory,
// or CPU-decoded I420 in pinned host memory) or RGB, into the layers of the set's GL texture array
// as RGBA8, with src/media_yuv.h's integer definition (the CPU path's, bit for bit).
#include "media_kernels.h"

namespace {

// Two horizontally adjacent pixels per thread: they share their chroma columns' loads.
constexpr int kBlockX = 32, kBlockY = 8;

__global__ void convert_kernel(glcv_cuda_media_convert_params p)
{
    const glcv_cuda_media_layer &layer = p.layers[blockIdx.z];
    int x0 = 2 * (blockIdx.x * kBlockX + threadIdx.x), y = blockIdx.y * kBlockY + threadIdx.y;
    if (x0 >= p.width || y >= p.height)
        return;
    for (int x = x0; x < x0 + 2 && x < p.width; x++) {
        uchar4 out;
        if (layer.rgb_bytes) {
            const uint8_t *px = layer.rgb + (size_t)y * layer.rgb_pitch + (size_t)x * (size_t)layer.rgb_bytes;
            out = make_uchar4(px[0], px[1], px[2], 255);
        } else {
            uint8_t r, g, b;
            glcv_yuv_at(&layer.coeffs, &layer.planes, x, y, &r, &g, &b);
            out = make_uchar4(r, g, b, 255);
        }
        surf2Dwrite(out, layer.surface, x * (int)sizeof(uchar4), y);
    }
}

} // namespace

extern "C" int glcv_cuda_media_convert(glcv_cuda_media_convert_params p, cudaStream_t stream)
{
    if (p.count < 1 || p.width < 1 || p.height < 1)
        return (int)cudaErrorInvalidValue;
    dim3 block(kBlockX, kBlockY);
    dim3 grid((unsigned)((p.width + 2 * kBlockX - 1) / (2 * kBlockX)), (unsigned)((p.height + kBlockY - 1) / kBlockY),
              (unsigned)p.count);
    convert_kernel<<<grid, block, 0, stream>>>(p);
    return (int)cudaGetLastError();
}
