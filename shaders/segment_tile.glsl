// Segmenter, compute mode: several MRF iterations in one dispatch (temporal blocking).
//
// The multi-pass path (segment_mrf.glsl) runs one dispatch per substep: 36 for 8 iterations,
// each a few microseconds of launch and barrier for a few microseconds of work. Here one work
// group owns a block of every subset -- TILE_X x TILE_Y subset pixels -- plus a halo around it,
// holds the masks and thresholds of that region in shared memory, and runs the substeps of
// `iterations` iterations with a barrier between them. Information moves at most one image
// pixel per substep, so after 4 K substeps only the outer 2 K subset pixels of the region can be
// wrong: a halo of at least 2 K keeps the interior exact. The decisions are those of the
// multi-pass path and the CPU engine: the same subset orders, thresholds and neighbourhoods.
//
// Bit-sliced arithmetic: a uint holds one bit of 32 neighbouring pixels of a subset row. Each
// substep adds the 8 neighbour bits of 32 pixels at once into the 4-bit count
// M = 2 (4-neighbours) + (diagonal neighbours) and compares it with the 4-bit thresholds, kept
// as four bit planes per parameter set (B1, B2): M >= m_min  <=>  M - m_min does not borrow.
//
// Inputs: per subset, the packed thresholds (R32UI words of four pixels, one byte each:
// B1 threshold << 4 | B2 threshold, from segment_threshold.glsl with SEGMENT_PACKED) and the mask
// of the previous frame or dispatch (R32UI words of 32 pixels, one bit each). Outputs: images
// 0..3 the four subset masks (bits), image 4 the full R8 mask (when write_full is set).
// Compute only (GLCV_TILED: glcv_pass runs once per invocation with the work group's id). The
// region has at most as many words as the work group has invocations: one each per substep.

#ifndef TILE_Y
#define TILE_Y 28
#endif
#ifndef HALO_Y
#define HALO_Y 18
#endif
#define TILE_X 64                 // two words of 32 pixels
#define WORDS 4                   // one word of halo on each side: halo 32 >= 2 K for K <= 16
#define ROWS (TILE_Y + 2 * HALO_Y)
#define CELLS (ROWS * WORDS)      // at most the number of invocations: each owns one cell
#define PITCH (WORDS + 2)         // mask rows carry a zero word on each side...
#define MASK_CELLS (PITCH * (ROWS + 2)) // ...and there is a zero row above and below
#define THREADS (GLCV_LOCAL_X * GLCV_LOCAL_Y)

uniform glcv_usampler2D thr_k, thr_l, thr_m, thr_n;
uniform glcv_usampler2D prior_k, prior_l, prior_m, prior_n;
uniform ivec2 thr_size;   // size of the threshold textures: ceil(subset width / 4) x subset height
uniform ivec2 bits_size;  // size of the mask textures: ceil(subset width / 32) x subset height
uniform ivec2 image_size;
uniform int iterations;   // iterations in this dispatch, 1..16
uniform int first_is_b1;  // the first of them uses B1 (the frame's first iteration)
uniform int write_full;
uniform ivec4 orders[16]; // subset order of each iteration

shared uint s_mask[4][MASK_CELLS];

#ifdef SEGMENT_HOST_MASK
// Several streams, width a multiple of 4: the full mask also as words of four pixels (bytes 0 or
// 255, the leftmost in the low byte), layer after layer, rows of image_size.x / 4 words, into the
// host's download memory - the masks cross the bus while the kernel runs, no read-back after it.
layout(std430, binding = 2) writeonly buffer MaskWords { uint mask_words[]; };
#endif

uint fetch_threshold(int s, ivec2 p)
{
    if (s == 0) return texelFetch(thr_k, glcv_at(p), 0).r;
    if (s == 1) return texelFetch(thr_l, glcv_at(p), 0).r;
    if (s == 2) return texelFetch(thr_m, glcv_at(p), 0).r;
    return texelFetch(thr_n, glcv_at(p), 0).r;
}

uint fetch_prior(int s, ivec2 p)
{
    if (s == 0) return texelFetch(prior_k, glcv_at(p), 0).r;
    if (s == 1) return texelFetch(prior_l, glcv_at(p), 0).r;
    if (s == 2) return texelFetch(prior_m, glcv_at(p), 0).r;
    return texelFetch(prior_n, glcv_at(p), 0).r;
}

// The padded index of data cell (row, col); row -1..ROWS and col -1..WORDS are zero padding.
int at(int row, int col)
{
    return (row + 1) * PITCH + col + 1;
}

// Bit k <- the pixel one to the left (dir < 0) or right (dir > 0) of pixel k.
uint shifted(int s, int i, int dir)
{
    uint w = s_mask[s][i];
    if (dir < 0)
        return (w << 1) | (s_mask[s][i - 1] >> 31);
    return (w >> 1) | (s_mask[s][i + 1] << 31);
}

// Gathers bit `bit` of each byte of `t` into four contiguous bits.
uint gather4(uint t, int bit)
{
    uint x = (t >> bit) & 0x01010101u;
    return (x | (x >> 7) | (x >> 14) | (x >> 21)) & 0xFu;
}

void glcv_pass(ivec2 group)
{
    int tid = int(gl_LocalInvocationIndex);
    ivec2 word0 = ivec2(group.x * (TILE_X / 32) - 1, group.y * TILE_Y - HALO_Y); // region corner, words

    // Load: masks into shared memory (zero padding around), each invocation's thresholds for its
    // own cell of every subset into registers as bit planes (.xyzw = bits 0..3).
    for (int i = tid; i < 4 * MASK_CELLS; i += THREADS)
        s_mask[i / MASK_CELLS][i % MASK_CELLS] = 0u;
    barrier();
    int row = tid / WORDS, col = tid % WORDS;
    int me = at(row, col);
    uvec4 b1[4], b2[4];
    for (int s = 0; s < 4; s++) {
        b1[s] = b2[s] = uvec4(~0u, 0u, ~0u, ~0u); // 13 = never: outside the textures
        ivec2 w = word0 + ivec2(col, row);
        if (tid < CELLS && w.x >= 0 && w.y >= 0 && w.x < bits_size.x && w.y < bits_size.y) {
            s_mask[s][me] = fetch_prior(s, w);
            b1[s] = b2[s] = uvec4(0u);
            for (int j = 0; j < 8; j++) {
                ivec2 tp = ivec2(w.x * 8 + j, w.y);
                uint t = tp.x < thr_size.x ? fetch_threshold(s, tp) : 0xDDDDDDDDu;
                b1[s] |= uvec4(gather4(t, 4), gather4(t, 5), gather4(t, 6), gather4(t, 7)) << (4 * j);
                b2[s] |= uvec4(gather4(t, 0), gather4(t, 1), gather4(t, 2), gather4(t, 3)) << (4 * j);
            }
        }
    }
    barrier();

    for (int it = 0; it < iterations; it++) {
        bool first = it == 0 && first_is_b1 != 0;
        for (int k = 0; k < 4; k++) {
            int s = orders[it][k];
            int a = s & 1, b = s >> 1;
            int hs = (1 - a) + 2 * b, vs = a + 2 * (1 - b), ds = (1 - a) + 2 * (1 - b);
            int dx = a == 0 ? -1 : 1;
            int next = me + (b == 0 ? -PITCH : PITCH); // the row of the other vertical neighbour
            if (tid < CELLS) {
                uint h0 = s_mask[hs][me], h1 = shifted(hs, me, dx);
                uint v0 = s_mask[vs][me], v1 = s_mask[vs][next];
                uint d0 = s_mask[ds][me], d1 = shifted(ds, me, dx);
                uint d2 = s_mask[ds][next], d3 = shifted(ds, next, dx);
                // S = h0 + h1 + v0 + v1 and D = d0 + d1 + d2 + d3, three bits each.
                uint th = h0 ^ h1, ch = h0 & h1, tv = v0 ^ v1, cv = v0 & v1;
                uint s0 = th ^ tv, s1 = ch ^ cv ^ (th & tv), s2 = ch & cv;
                uint ta = d0 ^ d1, ca = d0 & d1, tb = d2 ^ d3, cb = d2 & d3;
                uint e0 = ta ^ tb, e1 = ca ^ cb ^ (ta & tb), e2 = ca & cb;
                // M = 2 S + D, four bits (M <= 12).
                uint m0 = e0;
                uint m1 = s0 ^ e1, k1 = s0 & e1;
                uint m2 = s1 ^ e2 ^ k1, k2 = (s1 & e2) | (k1 & (s1 ^ e2));
                uint m3 = s2 ^ k2;
                // Borrow of M - m_min: none means M >= m_min.
                uvec4 t = first ? b1[s] : b2[s];
                uint br = ~m0 & t.x;
                br = (~m1 & t.y) | (~(m1 ^ t.y) & br);
                br = (~m2 & t.z) | (~(m2 ^ t.z) & br);
                br = (~m3 & t.w) | (~(m3 ^ t.w) & br);
                s_mask[s][me] = ~br;
            }
            barrier();
        }
    }

    // The exact interior goes out: the subset masks and, on the last dispatch, the full mask.
    for (int i = tid; i < 4 * TILE_Y * 2; i += THREADS) {
        int s = i / (TILE_Y * 2), r = i % (TILE_Y * 2);
        int orow = HALO_Y + r / 2, ocol = 1 + r % 2;
        ivec2 w = word0 + ivec2(ocol, orow);
        if (w.x >= bits_size.x || w.y >= bits_size.y)
            continue;
        uint m = s_mask[s][at(orow, ocol)];
        if (s == 0) imageStore(glcv_image0, glcv_at(w), uvec4(m));
        else if (s == 1) imageStore(glcv_image1, glcv_at(w), uvec4(m));
        else if (s == 2) imageStore(glcv_image2, glcv_at(w), uvec4(m));
        else imageStore(glcv_image3, glcv_at(w), uvec4(m));
    }
    if (write_full == 0)
        return;
#ifdef SEGMENT_HOST_MASK
    // Word wx of full row 2 (word0.y + orow) + sy: pixels x0..x0+3 are subset pixels c and c + 1
    // of the interior (c even) in the subsets of even x (2 sy) and odd x (2 sy + 1).
    int words_per_row = image_size.x / 4;
    for (int i = tid; i < 2 * TILE_Y * 32; i += THREADS) {
        int fr = i / 32, wx = i % 32;
        int orow = HALO_Y + fr / 2, sy = fr & 1;
        int y = 2 * (word0.y + orow) + sy;
        int x0 = 64 * (word0.x + 1) + 4 * wx;
        if (y >= image_size.y || x0 >= image_size.x)
            continue;
        int c = 2 * wx, ocol = 1 + c / 32, bit = c % 32;
        uint e = s_mask[2 * sy][at(orow, ocol)] >> bit, o = s_mask[2 * sy + 1][at(orow, ocol)] >> bit;
        mask_words[(glcv_layer * image_size.y + y) * words_per_row + (x0 >> 2)] =
            ((e & 1u) * 0xFFu) | ((o & 1u) * 0xFF00u) | (((e >> 1) & 1u) * 0xFF0000u) | (((o >> 1) & 1u) * 0xFF000000u);
    }
#endif
    for (int i = tid; i < 4 * TILE_Y * TILE_X; i += THREADS) {
        int s = i / (TILE_Y * TILE_X), r = i % (TILE_Y * TILE_X);
        int orow = HALO_Y + r / TILE_X, x = r % TILE_X;
        int ocol = 1 + x / 32, bit = x % 32;
        ivec2 q = 2 * ivec2((word0.x + ocol) * 32 + bit, word0.y + orow) + ivec2(s & 1, s >> 1);
        if (q.x < image_size.x && q.y < image_size.y)
            imageStore(glcv_image4, glcv_at(q), vec4(float((s_mask[s][at(orow, ocol)] >> bit) & 1u)));
    }
}
