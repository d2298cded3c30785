// Template matching kernels (Mendez et al. 2010, section 4), behind src/match_kernels.h.
//
// One thread computes 8 consecutive positions of one row: x0 = 8 * threadIdx.x in a block tile of
// 256 x 8 positions. For every template row it walks the image row in 32-bit words: positions
// x0..x0+3 see template group g through the words (w[g], w[g+1]) shifted by 0..3 bytes (funnel
// shifts), positions x0+4..x0+7 through (w[g+1], w[g+2]). A byte-SIMD instruction then handles 4
// pixels at once: vabsdiff4 with accumulation (__vsadu4) for SAD, a byte absolute difference and
// dp4a for SSD, a byte maximum for LINF, dp4a for the three ZNCC sums. Template words come from
// constant memory (broadcast to the warp) when they fit in the pool, else from global memory.
// Templates up to 128 pixels wide read the image through shared-memory tiles of 15 rows (8 rows of
// positions + 8 template rows - 1), loaded with 16-byte accesses and read back as 8-byte pairs of
// words (no bank conflicts); wider ones read global memory through the L1 cache.
//
// Masked template pixels, and the bytes past a template width that is not a multiple of 4, are 0
// in the template words and in the mask words, and the image words are ANDed with the mask words
// before the difference, so they add nothing. All sums are exact integers: 32 bits when the
// largest possible score fits, else per-row 32-bit sums added into 64 bits.
#include "match_kernels.h"
#include "cuda_bridge.cuh"

#include <cuda_runtime.h>

#include <cfloat>
#include <cstdint>

__constant__ uint32_t c_pool[GLCV_CUDA_MATCH_CONST_WORDS];

namespace {

constexpr int kThreadsX = 32;
constexpr int kThreadsY = 8;
constexpr int kTileX = kThreadsX * 8;        // positions per block row
constexpr int kSlab = 8;                     // template rows per shared tile
constexpr int kTileRows = kThreadsY + kSlab - 1;
constexpr int kSharedGroups = 32;            // widest template (in 4-byte groups) using shared tiles
constexpr int kTileBytes = 400;              // >= 8 * 31 + 4 * (kSharedGroups + 2) + 4, a multiple of 16

enum { SAD = 1, SSD = 2, LINF = 3, ZNCC = 4 };

__device__ __forceinline__ uint32_t sad4_add(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t d;
    asm("vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}

__device__ __forceinline__ uint32_t byte_shift(uint32_t lo, uint32_t hi, int s)
{
    return s == 0 ? lo : __funnelshift_r(lo, hi, 8 * s);
}

// The same arithmetic as glcv_match_zncc_value (src/match_cpu.c), in the same IEEE operations.
__device__ __forceinline__ float zncc_value(double num, double var_i, double var_t)
{
    if (!(var_i > 0.0) || !(var_t > 0.0))
        return 0.0f;
    double r = __ddiv_rn(num, __dsqrt_rn(__dmul_rn(var_i, var_t)));
    r = r > 1.0 ? 1.0 : r;
    r = r < -1.0 ? -1.0 : r;
    return __double2float_rn(r);
}

__device__ __forceinline__ uint32_t template_word(const glcv_cuda_match_params &p, int i)
{
    return p.const_offset >= 0 ? c_pool[p.const_offset + i] : __ldg(p.words + i);
}

// Per-thread sums of 8 positions.
struct Sums {
    uint32_t a[8];       // SAD, SSD, LINF: the score; ZNCC: sum I*T
    uint32_t s[8];       // ZNCC: sum I
    uint32_t q[8];       // ZNCC: sum I*I
};

template <int METRIC, bool MASKED>
__device__ __forceinline__ void add_group(Sums &acc, uint32_t wa, uint32_t wb, uint32_t wc, uint32_t t, uint32_t m)
{
#pragma unroll
    for (int s = 0; s < 4; s++) {
#pragma unroll
        for (int half = 0; half < 2; half++) {
            const int j = half * 4 + s;
            uint32_t v = half == 0 ? byte_shift(wa, wb, s) : byte_shift(wb, wc, s);
            if (METRIC == ZNCC) {
                uint32_t vm = v & m;
                acc.a[j] = __dp4a(v, t, acc.a[j]);
                acc.s[j] = __dp4a(vm, 0x01010101u, acc.s[j]);
                acc.q[j] = __dp4a(vm, v, acc.q[j]);
            } else {
                if (MASKED)
                    v &= m;
                if (METRIC == SAD) {
                    acc.a[j] = sad4_add(v, t, acc.a[j]);
                } else if (METRIC == SSD) {
                    uint32_t d = __vabsdiffu4(v, t);
                    acc.a[j] = __dp4a(d, d, acc.a[j]);
                } else {
                    acc.a[j] = __vmaxu4(acc.a[j], __vabsdiffu4(v, t));
                }
            }
        }
    }
}

// One template row against the image row whose words start at `src` (the word of x0; 8-byte
// aligned). GT > 0: the number of groups known at compile time.
template <int METRIC, int GT, bool MASKED, bool SHARED>
__device__ __forceinline__ void add_row(Sums &acc, const uint2 *src, const glcv_cuda_match_params &p, int tbase,
                                        int mbase)
{
    const int groups = GT > 0 ? GT : p.groups;
    uint2 w = SHARED ? src[0] : __ldg(src);
    uint32_t wa = w.x, wb = w.y;
#pragma unroll(GT > 0 ? GT : 1)
    for (int g = 0; g < groups; g += 2) {
        uint2 n = SHARED ? src[1 + g / 2] : __ldg(src + 1 + g / 2);
        uint32_t t = template_word(p, tbase + g);
        uint32_t m = (MASKED || METRIC == ZNCC) ? template_word(p, mbase + g) : 0xFFFFFFFFu;
        add_group<METRIC, MASKED>(acc, wa, wb, n.x, t, m);
        if (g + 1 < groups) {
            t = template_word(p, tbase + g + 1);
            m = (MASKED || METRIC == ZNCC) ? template_word(p, mbase + g + 1) : 0xFFFFFFFFu;
            add_group<METRIC, MASKED>(acc, wb, n.x, n.y, t, m);
        }
        wa = n.x;
        wb = n.y;
    }
}

__device__ __forceinline__ void clear(uint32_t (&v)[8])
{
#pragma unroll
    for (int j = 0; j < 8; j++)
        v[j] = 0;
}

// The 64-bit totals of wide runs and the ZNCC terms.
struct Totals {
    unsigned long long a[8], s[8], q[8];
};

template <int METRIC, int GT, bool MASKED, bool WIDE, bool SHARED>
__global__ void __launch_bounds__(kThreadsX * kThreadsY, METRIC == ZNCC ? 1 : 4)
    match_kernel(const glcv_cuda_match_params p)
{
    __shared__ __align__(16) uint8_t tile[SHARED ? kTileRows * kTileBytes : 16];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x_base = blockIdx.x * kTileX;
    const int y_base = p.row_begin + blockIdx.y * kThreadsY;
    const int x0 = x_base + tx * 8;
    const int y = y_base + ty;
    const bool active = y < p.row_end && y >= p.y0 && y < p.y1 && x0 + 7 >= p.x0 && x0 < p.x1;
    const int groups = GT > 0 ? GT : p.groups;

    Sums acc;
    Totals tot;
    clear(acc.a);
    clear(acc.s);
    clear(acc.q);
#pragma unroll
    for (int j = 0; j < 8; j++)
        tot.a[j] = tot.s[j] = tot.q[j] = 0;
    // ZNCC: the numerator and the image variance, summed over channels
    long long num[8], var[8];
#pragma unroll
    for (int j = 0; j < 8; j++)
        num[j] = var[j] = 0;
    __int128 wnum[8], wvar[8];
    if (METRIC == ZNCC && WIDE) {
#pragma unroll
        for (int j = 0; j < 8; j++)
            wnum[j] = wvar[j] = 0;
    }

    const int words_per_plane = p.th * groups;
    const int mask_start = p.channels * words_per_plane;
    for (int c = 0; c < p.channels; c++) {
        const uint8_t *plane = p.planes + (size_t)c * p.plane_size;
        for (int r0 = 0; r0 < p.th; r0 += SHARED ? kSlab : p.th) {
            const int r1 = SHARED ? min(r0 + kSlab, p.th) : p.th;
            if (SHARED) {
                __syncthreads();
                const int vecs_per_row = kTileBytes / 16;
                for (int i = ty * kThreadsX + tx; i < kTileRows * vecs_per_row; i += kThreadsX * kThreadsY) {
                    const int row = i / vecs_per_row, col = i % vecs_per_row;
                    const int image_row = y_base + r0 + row;
                    if (image_row < p.height)
                        reinterpret_cast<uint4 *>(tile + row * kTileBytes)[col] = __ldg(
                            reinterpret_cast<const uint4 *>(plane + (size_t)image_row * p.pitch + x_base) + col);
                }
                __syncthreads();
            }
            if (!active)
                continue;
            for (int r = r0; r < r1; r++) {
                const uint2 *src =
                    SHARED ? reinterpret_cast<const uint2 *>(tile + (ty + r - r0) * kTileBytes + tx * 8)
                           : reinterpret_cast<const uint2 *>(plane + (size_t)(y + r) * p.pitch + x0);
                const int tbase = (c * p.th + r) * groups;
                add_row<METRIC, GT, MASKED, SHARED>(acc, src, p, tbase, mask_start + tbase);
                if (WIDE) {
#pragma unroll
                    for (int j = 0; j < 8; j++) {
                        tot.a[j] += acc.a[j];
                        tot.s[j] += acc.s[j];
                        tot.q[j] += acc.q[j];
                    }
                    clear(acc.a);
                    clear(acc.s);
                    clear(acc.q);
                }
            }
        }
        if (METRIC == ZNCC && active) {
            const long long n = p.count, st = p.t_sum[c];
#pragma unroll
            for (int j = 0; j < 8; j++) {
                if (WIDE) {
                    wnum[j] += (__int128)n * (__int128)tot.a[j] - (__int128)tot.s[j] * (__int128)st;
                    wvar[j] += (__int128)n * (__int128)tot.q[j] - (__int128)tot.s[j] * (__int128)tot.s[j];
                    tot.a[j] = tot.s[j] = tot.q[j] = 0;
                } else {
                    num[j] += n * (long long)acc.a[j] - (long long)acc.s[j] * st;
                    var[j] += n * (long long)acc.q[j] - (long long)acc.s[j] * (long long)acc.s[j];
                }
            }
            clear(acc.a);
            clear(acc.s);
            clear(acc.q);
        }
    }

    if (y >= p.row_end || x0 >= p.width)
        return;
    const bool row_ok = y >= p.y0 && y < p.y1;
#pragma unroll
    for (int j = 0; j < 8; j++) {
        const int x = x0 + j;
        if (x >= p.width)
            break;
        const bool ok = row_ok && x >= p.x0 && x < p.x1;
        const size_t at = (size_t)y * p.map_pitch + (size_t)x;
        if (METRIC == ZNCC) {
            float v = -FLT_MAX;
            if (ok)
                v = WIDE ? zncc_value((double)wnum[j], (double)wvar[j], p.t_var)
                         : zncc_value((double)num[j], (double)var[j], p.t_var);
            static_cast<float *>(p.map)[at] = v;
        } else if (WIDE) {
            static_cast<unsigned long long *>(p.map)[at] = ok ? tot.a[j] : ~0ull;
        } else {
            uint32_t v = acc.a[j];
            if (METRIC == LINF)
                v = max(max(v & 0xFFu, (v >> 8) & 0xFFu), max((v >> 16) & 0xFFu, v >> 24));
            static_cast<uint32_t *>(p.map)[at] = ok ? v : 0xFFFFFFFFu;
        }
    }
}

template <int METRIC, int GT, bool MASKED, bool WIDE>
cudaError_t launch_shared_or_global(const glcv_cuda_match_params &p, dim3 grid, dim3 block, cudaStream_t stream)
{
    if (p.groups <= kSharedGroups)
        match_kernel<METRIC, GT, MASKED, WIDE, true><<<grid, block, 0, stream>>>(p);
    else
        match_kernel<METRIC, GT, MASKED, WIDE, false><<<grid, block, 0, stream>>>(p);
    return cudaGetLastError();
}

template <int GT>
cudaError_t launch_sad_fixed(const glcv_cuda_match_params &p, dim3 grid, dim3 block, cudaStream_t stream)
{
    return p.masked ? launch_shared_or_global<SAD, GT, true, false>(p, grid, block, stream)
                    : launch_shared_or_global<SAD, GT, false, false>(p, grid, block, stream);
}

}  // namespace

extern "C" int glcv_cuda_match(glcv_cuda_match_params p, cudaStream_t stream)
{
    if (p.row_end <= p.row_begin)
        return cudaSuccess;
    dim3 block(kThreadsX, kThreadsY);
    dim3 grid((unsigned)((p.width + kTileX - 1) / kTileX),
              (unsigned)((p.row_end - p.row_begin + kThreadsY - 1) / kThreadsY));
    cudaError_t err = cudaErrorInvalidValue;
    switch (p.metric) {
    case SAD:
        if (p.wide) {
            err = p.masked ? launch_shared_or_global<SAD, 0, true, true>(p, grid, block, stream)
                           : launch_shared_or_global<SAD, 0, false, true>(p, grid, block, stream);
            break;
        }
        // The paper's range, 4..32 pixels wide, with the group loop unrolled.
        switch (p.groups) {
        case 1: err = launch_sad_fixed<1>(p, grid, block, stream); break;
        case 2: err = launch_sad_fixed<2>(p, grid, block, stream); break;
        case 3: err = launch_sad_fixed<3>(p, grid, block, stream); break;
        case 4: err = launch_sad_fixed<4>(p, grid, block, stream); break;
        case 5: err = launch_sad_fixed<5>(p, grid, block, stream); break;
        case 6: err = launch_sad_fixed<6>(p, grid, block, stream); break;
        case 7: err = launch_sad_fixed<7>(p, grid, block, stream); break;
        case 8: err = launch_sad_fixed<8>(p, grid, block, stream); break;
        default: err = launch_sad_fixed<0>(p, grid, block, stream); break;
        }
        break;
    case SSD:
        if (p.wide)
            err = p.masked ? launch_shared_or_global<SSD, 0, true, true>(p, grid, block, stream)
                           : launch_shared_or_global<SSD, 0, false, true>(p, grid, block, stream);
        else
            err = p.masked ? launch_shared_or_global<SSD, 0, true, false>(p, grid, block, stream)
                           : launch_shared_or_global<SSD, 0, false, false>(p, grid, block, stream);
        break;
    case LINF:
        err = p.masked ? launch_shared_or_global<LINF, 0, true, false>(p, grid, block, stream)
                       : launch_shared_or_global<LINF, 0, false, false>(p, grid, block, stream);
        break;
    case ZNCC:
        err = p.wide ? launch_shared_or_global<ZNCC, 0, true, true>(p, grid, block, stream)
                     : launch_shared_or_global<ZNCC, 0, true, false>(p, grid, block, stream);
        break;
    default: break;
    }
    return (int)err;
}

namespace {

__global__ void planes_kernel(const glcv_cuda_planes_params p)
{
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = p.row_begin + blockIdx.y;
    if (x >= p.width || y >= p.row_end)
        return;
    uint8_t *d = p.planes + (size_t)y * p.pitch + x;
    unsigned r, g, b, a = 255;
    if (p.src_texture) {
        glcv_texel_rgb(p.src_texture, x, y, &r, &g, &b);
    } else {
        const uint8_t *s = p.src + (size_t)y * p.src_pitch + (size_t)x * (size_t)p.src_bpp;
        r = s[p.src_r];
        g = s[p.src_g];
        b = s[p.src_b];
        if (p.src_a >= 0)
            a = s[p.src_a];
    }
    if (p.channels == 1) {
        d[0] = p.src_gray ? (uint8_t)r : (uint8_t)((77u * r + 150u * g + 29u * b + 128u) >> 8);
        return;
    }
    d[0] = (uint8_t)r;
    d[p.plane_size] = (uint8_t)g;
    d[2 * p.plane_size] = (uint8_t)b;
    if (p.channels == 4)
        d[3 * p.plane_size] = (uint8_t)a;
}

}  // namespace

extern "C" int glcv_cuda_match_planes(glcv_cuda_planes_params p, cudaStream_t stream)
{
    if (p.row_end <= p.row_begin)
        return cudaSuccess;
    dim3 block(256, 1);
    dim3 grid((unsigned)((p.width + 255) / 256), (unsigned)(p.row_end - p.row_begin));
    planes_kernel<<<grid, block, 0, stream>>>(p);
    return (int)cudaGetLastError();
}

extern "C" int glcv_cuda_match_const_upload(int offset, const uint32_t *words, int n, cudaStream_t stream)
{
    if (offset < 0 || n < 0 || offset + n > GLCV_CUDA_MATCH_CONST_WORDS)
        return (int)cudaErrorInvalidValue;
    return (int)cudaMemcpyToSymbolAsync(c_pool, words, (size_t)n * sizeof(uint32_t), (size_t)offset * sizeof(uint32_t),
                                        cudaMemcpyHostToDevice, stream);
}
