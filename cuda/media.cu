// The media service's kernel: a texture set's frames, 4:2:0 planes (NVDEC's NV12 in GPU memory,
// or CPU-decoded I420 in pinned host memory) or RGB, into the layers of the set's GL texture array
// as RGBA8, with src/media_yuv.h's integer definition (the CPU path's, bit for bit).
//
// A block converts a tile of 64 x 16 pixels: it first copies the tile's luma (16 rows, in 32-bit
// words where the rows allow) and the chroma samples it mixes (10 rows of 33 samples of each plane)
// into shared memory, each byte read once and in rows, then converts from there. Read per pixel, as
// the definition is written, a pixel made about nine loads, most of them of bytes its neighbours
// load too - which costs most where a frame is read across the bus (pinned host memory, when
// src/media_cuda.c does not stage it).
#include "media_kernels.h"

namespace {

constexpr int kTileX = 64, kTileY = 16, kThreads = 256;
constexpr int kChromaX = kTileX / 2 + 1; /* columns x0 / 2 .. x0 / 2 + 32 */
constexpr int kChromaY = kTileY / 2 + 2; /* rows y0 / 2 - 1 .. y0 / 2 + 8 */

__global__ void __launch_bounds__(kThreads) convert_kernel(glcv_cuda_media_convert_params p)
{
    const glcv_cuda_media_layer &layer = p.layers[blockIdx.z];
    const int x0 = blockIdx.x * kTileX, y0 = blockIdx.y * kTileY;
    const int tw = min(kTileX, p.width - x0), th = min(kTileY, p.height - y0);
    const int t = threadIdx.x;
    if (layer.rgb_bytes) {
        for (int i = t; i < kTileX * kTileY; i += kThreads) {
            int r = i / kTileX, c = i % kTileX;
            if (r >= th || c >= tw)
                continue;
            int x = x0 + c, y = y0 + r;
            const uint8_t *px = layer.rgb + (size_t)y * layer.rgb_pitch + (size_t)x * (size_t)layer.rgb_bytes;
            surf2Dwrite(make_uchar4(px[0], px[1], px[2], 255), layer.surface, x * (int)sizeof(uchar4), y);
        }
        return;
    }
    __shared__ __align__(4) uint8_t s_y[kTileY][kTileX];
    __shared__ uint8_t s_u[kChromaY][kChromaX], s_v[kChromaY][kChromaX];
    const glcv_yuv_planes &pl = layer.planes;
    const int cw = (pl.width + 1) >> 1, ch = (pl.height + 1) >> 1;
    const int ci0 = x0 >> 1, cj0 = y0 > 0 ? (y0 >> 1) - 1 : 0;
    if (tw == kTileX && (((uintptr_t)pl.y | pl.y_pitch) & 3) == 0) {
        for (int i = t; i < kTileY * kTileX / 4; i += kThreads) {
            int r = i / (kTileX / 4), c = 4 * (i % (kTileX / 4));
            if (r < th)
                *(uint32_t *)&s_y[r][c] = *(const uint32_t *)(pl.y + (size_t)(y0 + r) * pl.y_pitch + (size_t)(x0 + c));
        }
    } else {
        for (int i = t; i < kTileY * kTileX; i += kThreads) {
            int r = i / kTileX, c = i % kTileX;
            if (r < th && c < tw)
                s_y[r][c] = pl.y[(size_t)(y0 + r) * pl.y_pitch + (size_t)(x0 + c)];
        }
    }
    for (int i = t; i < kChromaY * kChromaX; i += kThreads) {
        int r = i / kChromaX, c = i % kChromaX, j = cj0 + r, k = ci0 + c;
        if (j < ch && k < cw) {
            s_u[r][c] = pl.u[(size_t)j * pl.u_pitch + (size_t)k * (size_t)pl.c_step];
            s_v[r][c] = pl.v[(size_t)j * pl.v_pitch + (size_t)k * (size_t)pl.c_step];
        }
    }
    __syncthreads();
    for (int i = t; i < kTileX * kTileY; i += kThreads) {
        int r = i / kTileX, c = i % kTileX;
        if (r >= th || c >= tw)
            continue;
        int x = x0 + c, y = y0 + r;
        glcv_yuv_taps tap = glcv_yuv_chroma_taps(cw, ch, x, y);
        int a0 = tap.i0 - ci0, a1 = tap.i1 - ci0, b0 = tap.j0 - cj0, b1 = tap.j1 - cj0;
        int32_t u8 = glcv_yuv_mix(s_u[b0][a0], s_u[b0][a1], s_u[b1][a0], s_u[b1][a1]);
        int32_t v8 = glcv_yuv_mix(s_v[b0][a0], s_v[b0][a1], s_v[b1][a0], s_v[b1][a1]);
        uint8_t cr, cg, cb;
        glcv_yuv_pixel(&layer.coeffs, s_y[r][c], u8, v8, &cr, &cg, &cb);
        surf2Dwrite(make_uchar4(cr, cg, cb, 255), layer.surface, x * (int)sizeof(uchar4), y);
    }
}

} // namespace

extern "C" int glcv_cuda_media_convert(glcv_cuda_media_convert_params p, cudaStream_t stream)
{
    if (p.count < 1 || p.width < 1 || p.height < 1)
        return (int)cudaErrorInvalidValue;
    dim3 grid((unsigned)((p.width + kTileX - 1) / kTileX), (unsigned)((p.height + kTileY - 1) / kTileY),
              (unsigned)p.count);
    convert_kernel<<<grid, kThreads, 0, stream>>>(p);
    return (int)cudaGetLastError();
}
