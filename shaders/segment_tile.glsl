// Segmenter, compute mode: several MRF iterations in one dispatch (temporal blocking).
//
// The multi-pass path (segment_mrf.glsl) runs one dispatch per substep: 36 for 8 iterations,
// each a few microseconds of launch and barrier for a few microseconds of work. Here one work
// group owns a TILE x TILE block of every subset texture plus a HALO on each side, holds the
// masks and thresholds of that region in shared memory, and runs the substeps of `iterations`
// iterations with a barrier between them. Information moves at most one image pixel per
// substep, so after 4 K substeps only the outer 2 K subset pixels of the region can be wrong:
// HALO >= 2 K keeps the TILE x TILE interior exact. The decisions are the same as the
// multi-pass path and the CPU engine: the same subset orders, thresholds and neighbourhoods.
//
// Four pixels of a subset row are packed into one uint, one byte each, and processed together:
// byte lanes hold M <= 12 and thresholds <= 13, so sums never carry between lanes, and
// (M | 0x80) - m_min has its top bit set exactly when M >= m_min.
//
// Inputs: per subset, the packed thresholds (R32UI words of four pixels: B1 threshold << 4 | B2
// threshold per byte, from segment_threshold.glsl with SEGMENT_PACKED) and the packed mask of the
// previous frame or chunk (R32UI, 0 or 1 per byte). Outputs: images 0..3 the packed subset masks,
// image 4 the full R8 mask (when write_full is set). Compute only (GLCV_TILED: one call per work
// group).

#ifndef TILE
#define TILE 32
#endif
#ifndef HALO
#define HALO 20
#endif
#define ROWS (TILE + 2 * HALO)
#define WORDS (ROWS / 4)
#define THREADS (GLCV_LOCAL_X * GLCV_LOCAL_Y)

uniform usampler2D thr_k, thr_l, thr_m, thr_n;
uniform usampler2D prior_k, prior_l, prior_m, prior_n;
uniform ivec2 words_size; // size of the packed textures: ceil(subset width / 4) x subset height
uniform ivec2 image_size;
uniform int iterations;    // iterations in this dispatch, 1..16
uniform int first_is_b1;   // the first of them uses B1 (the frame's first iteration)
uniform int write_full;
uniform ivec4 orders[16];  // subset order of each iteration

shared uint s_mask[4][ROWS * WORDS];
shared uint s_thr[4][ROWS * WORDS]; // per byte: B1 threshold << 4 | B2 threshold

uint fetch_threshold(int s, ivec2 p)
{
    if (s == 0) return texelFetch(thr_k, p, 0).r;
    if (s == 1) return texelFetch(thr_l, p, 0).r;
    if (s == 2) return texelFetch(thr_m, p, 0).r;
    return texelFetch(thr_n, p, 0).r;
}

uint fetch_prior(int s, ivec2 p)
{
    if (s == 0) return texelFetch(prior_k, p, 0).r;
    if (s == 1) return texelFetch(prior_l, p, 0).r;
    if (s == 2) return texelFetch(prior_m, p, 0).r;
    return texelFetch(prior_n, p, 0).r;
}

uint word_at(int s, int row, int col)
{
    if (row < 0 || row >= ROWS || col < 0 || col >= WORDS)
        return 0u;
    return s_mask[s][row * WORDS + col];
}

// The four lanes' neighbours one pixel to the left (dir < 0) or right (dir > 0).
uint shifted(int s, int row, int col, int dir)
{
    uint w = word_at(s, row, col);
    if (dir < 0)
        return (w << 8) | (word_at(s, row, col - 1) >> 24);
    return (w >> 8) | (word_at(s, row, col + 1) << 24);
}

void glcv_pass(ivec2 group)
{
    int tid = int(gl_LocalInvocationIndex);
    ivec2 origin = group * TILE - HALO; // subset coordinates of the region's corner (x: a word edge)
    ivec2 word_origin = ivec2(origin.x / 4, origin.y);

    for (int i = tid; i < 4 * ROWS * WORDS; i += THREADS) {
        int s = i / (ROWS * WORDS), w = i % (ROWS * WORDS);
        ivec2 p = word_origin + ivec2(w % WORDS, w / WORDS);
        uint m = 0u, t = 0xDDDDDDDDu; // outside: background, never switches on
        if (p.x >= 0 && p.y >= 0 && p.x < words_size.x && p.y < words_size.y) {
            t = fetch_threshold(s, p);
            m = fetch_prior(s, p);
        }
        s_mask[s][w] = m;
        s_thr[s][w] = t;
    }
    barrier();

    for (int it = 0; it < iterations; it++) {
        bool b1 = it == 0 && first_is_b1 != 0;
        for (int k = 0; k < 4; k++) {
            int s = orders[it][k];
            int a = s & 1, b = s >> 1;
            int hs = (1 - a) + 2 * b, vs = a + 2 * (1 - b), ds = (1 - a) + 2 * (1 - b);
            int dx = a == 0 ? -1 : 1, dy = b == 0 ? -1 : 1;
            for (int w = tid; w < ROWS * WORDS; w += THREADS) {
                int row = w / WORDS, col = w % WORDS;
                uint h = word_at(hs, row, col) + shifted(hs, row, col, dx);
                uint v = word_at(vs, row, col) + word_at(vs, row + dy, col);
                uint d = word_at(ds, row, col) + shifted(ds, row, col, dx) + word_at(ds, row + dy, col) +
                         shifted(ds, row + dy, col, dx);
                uint m = 2u * (h + v) + d;
                uint t = s_thr[s][w];
                uint m_min = b1 ? (t >> 4) & 0x0F0F0F0Fu : t & 0x0F0F0F0Fu;
                s_mask[s][w] = (((m | 0x80808080u) - m_min) & 0x80808080u) >> 7;
            }
            barrier();
        }
    }

    // The exact interior goes out: the four packed subset masks and, on the last chunk, the full
    // mask.
    for (int i = tid; i < 4 * TILE * (TILE / 4); i += THREADS) {
        int s = i / (TILE * (TILE / 4)), w = i % (TILE * (TILE / 4));
        int row = HALO + w / (TILE / 4), col = HALO / 4 + w % (TILE / 4);
        uint m = s_mask[s][row * WORDS + col];
        ivec2 wp = word_origin + ivec2(col, row);
        if (wp.x >= words_size.x || wp.y >= words_size.y)
            continue;
        uvec4 mv = uvec4(m);
        if (s == 0) imageStore(glcv_image0, wp, mv);
        else if (s == 1) imageStore(glcv_image1, wp, mv);
        else if (s == 2) imageStore(glcv_image2, wp, mv);
        else imageStore(glcv_image3, wp, mv);
        if (write_full == 0)
            continue;
        for (int k = 0; k < 4; k++) {
            ivec2 q = 2 * ivec2(wp.x * 4 + k, wp.y) + ivec2(s & 1, s >> 1);
            if (q.x < image_size.x && q.y < image_size.y)
                imageStore(glcv_image4, q, vec4(float((m >> (8 * k)) & 1u)));
        }
    }
}
