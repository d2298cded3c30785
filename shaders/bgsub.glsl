// Background subtraction (VSAM after Collins et al.; frame differencing), one layer per stream.
// The rule of src/bgsub_internal.h (glcv_bgsub_pixel) and the vote of src/bgsub_cpu.c, in the
// same integer arithmetic, over "lanes": the colour channels of one pixel (BGSUB_LANES 3), one
// gray pixel (BGSUB_LANES 1), or four gray pixels of one texel (BGSUB_PACKED). Defines:
//   BGSUB_METHOD  1 VSAM, 2 two-frame difference, 3 three-frame difference
//   BGSUB_STAGE   0 the decisions, B, T and the counter in one pass (outputs: decisions; VSAM
//                 also B, T, counter); the chain: 1 moving, 2 raw foreground, 3 counter,
//                 4 background, 5 threshold; 6 the vote into the mask
//   BGSUB_BPP     bytes per pixel of the raw frames (1, 3 or 4), BGSUB_BGR when blue comes first
//   BGSUB_LANES   1 (gray: luma of colour frames) or 3 (colour)
//   BGSUB_PACKED  gray frames, 4 pixels per 32-bit word (the textures likewise)
//   BGSUB_WRITE_RING  the current frames are read from the pinned upload memory (storage buffer
//                 0) and the pass copies their words into the device's frame ring (storage
//                 buffer 1) as it goes (compute)
//   BGSUB_WRITE_MASK  the vote also writes the masks into the host's download memory (storage
//                 buffer 2), a 32-bit word of four mask bytes per store (compute)
//   BGSUB_BLOCKS  compute, frames of one pixel per texel, width % 4 == 0, stage 0 (single pass)
//                 or 6: an invocation works on a quad, four pixels side by side (BGSUB_BPP whole
//                 words), and everything is linear memory in the order of the quads (layer after
//                 layer, row after row), no texture: B, T and the counter in storage buffers 3
//                 (in) and 4 (out), STATE_VECS 16-byte words a quad (see quad_state), the
//                 decisions a word of 4 bytes a quad (buffer 5 out, 6 in for the vote). The
//                 decide pass (GLCV_TILED, 64 x 1 invocations, not layered) reads one
//                 contiguous block of 64 quads of the set from the pinned upload memory (storage
//                 buffer 0) in 16-byte loads into shared memory and writes the block into the
//                 frame ring (storage buffer 1); the vote (stage 6, layered: its output is the
//                 mask texture) takes a quad per invocation and writes its four mask bytes as
//                 one word
//   BGSUB_FUSED   with BGSUB_BLOCKS, stage 0: the work groups take turns, even ones decide a block
//                 of the current set, odd ones vote a block of the set before (its decisions in
//                 buffer 6) into the download memory (BGSUB_WRITE_MASK), so that reading the new
//                 frames and writing the masks share one dispatch
// Frames are words (R32UI buffer textures): layer after layer, rows of width * BGSUB_BPP bytes.

uniform usamplerBuffer u_cur; // the current frame set
uniform usamplerBuffer u_p1;  // the one before
uniform usamplerBuffer u_p2;  // and the one before that
uniform usampler2DArray u_bg;     // B, 8.8 fixed point
uniform usampler2DArray u_th;     // T, 8.8 fixed point
uniform usampler2DArray u_count;  // VSAM's counter per pixel
uniform usampler2DArray u_moving; // the chain: moving pixels (0/1 per lane)
uniform usampler2DArray u_raw;    // decisions: bit 0 raw foreground, bit 1 moving (per lane)
uniform int u_history; // frames before the current one (0, 1, 2 = two or more)
uniform int u_init;    // VSAM: B, T and the counter start from this frame (B = I, T = floor)
uniform int u_learned; // frame differences: T from u_th (else the floor)
uniform int u_a;       // alpha * 65536
uniform int u_c;       // c * 256
uniform int u_f;       // min_threshold * 256
uniform int u_k;       // absorb count
uniform int u_vote;    // votes for foreground among the 3 x 3; 0: no vote
uniform int u_layers;  // streams (layers)
#ifdef BGSUB_WRITE_RING
layout(std430, binding = 0) readonly buffer StageWords { uint stage_words[]; };
layout(std430, binding = 1) writeonly buffer RingWords { uint ring_words[]; };
#endif
#if defined(BGSUB_WRITE_MASK) && !defined(BGSUB_BLOCKS)
layout(std430, binding = 2) writeonly buffer MaskWords { uint mask_words[]; };
#endif
#ifdef BGSUB_BLOCKS
#define BLOCK_QUADS 64                    // quads of a block: the work group's invocations
#define BLOCK_VECS (BLOCK_QUADS * BGSUB_BPP / 4) // its 16-byte words
#if BGSUB_LANES == 3
#define STATE_VECS 4 // 16-byte words of state a quad
#else
#define STATE_VECS 2
#endif
layout(std430, binding = 6) readonly buffer RawIn { uint raw_in[]; }; // decisions to vote
#if BGSUB_STAGE == 0
layout(std430, binding = 0) readonly buffer StageBlocks { uvec4 stage_blocks[]; };
layout(std430, binding = 1) writeonly buffer RingBlocks { uvec4 ring_blocks[]; };
layout(std430, binding = 3) readonly buffer StateIn { uvec4 state_in[]; };
layout(std430, binding = 4) writeonly buffer StateOut { uvec4 state_out[]; };
layout(std430, binding = 5) writeonly buffer RawOut { uint raw_out[]; };
shared uvec4 block[BLOCK_VECS];
uniform int u_quads;     // quads of the whole set
uniform int u_vote_prev; // BGSUB_FUSED: nonzero when the odd groups vote the set before
uvec4 quad_px[3];        // the pixel being decided in the current set and the two before (frame())
#endif
#endif

#if defined(BGSUB_PACKED)
const uvec4 LANE = uvec4(1u, 1u, 1u, 1u);
#elif BGSUB_LANES == 3
const uvec4 LANE = uvec4(1u, 1u, 1u, 0u);
#else
const uvec4 LANE = uvec4(1u, 0u, 0u, 0u);
#endif
const uvec4 LANE16 = LANE * 0xFFFFu;

ivec3 texel() { return ivec3(glcv_pos, glcv_layer); }

// The index of this texel among all texels of all layers (texel = pixel, or 4 packed pixels).
int texel_index() { return (glcv_layer * glcv_region.w + glcv_pos.y) * glcv_region.z + glcv_pos.x; }

// Word i of frame set `which`: 0 the current one, 1 and 2 the two before.
uint word_of(int which, int i)
{
    if (which == 1)
        return texelFetch(u_p1, i).r;
    if (which == 2)
        return texelFetch(u_p2, i).r;
#ifdef BGSUB_WRITE_RING
    return stage_words[i];
#else
    return texelFetch(u_cur, i).r;
#endif
}

uint byte_at(int which, int o) { return (word_of(which, o >> 2) >> uint((o & 3) * 8)) & 255u; }

// The lanes of a colour pixel from its first three bytes.
uvec4 colour_lanes(uint r, uint g, uint b)
{
#ifdef BGSUB_BGR
    uint t = r;
    r = b;
    b = t;
#endif
#if BGSUB_LANES == 1
    return uvec4((77u * r + 150u * g + 29u * b + 128u) >> 8, 0u, 0u, 0u);
#else
    return uvec4(r, g, b, 0u);
#endif
}

uvec4 frame(int which)
{
#if defined(BGSUB_BLOCKS) && BGSUB_STAGE == 0
    return quad_px[which];
#elif defined(BGSUB_PACKED)
    uint w = word_of(which, texel_index());
    return uvec4(w & 255u, (w >> 8) & 255u, (w >> 16) & 255u, w >> 24);
#elif BGSUB_BPP == 1
    return uvec4(byte_at(which, texel_index()), 0u, 0u, 0u);
#else
    int o = texel_index() * BGSUB_BPP;
    return colour_lanes(byte_at(which, o), byte_at(which, o + 1), byte_at(which, o + 2));
#endif
}

#if defined(BGSUB_BLOCKS) && BGSUB_STAGE == 0
// Pixel k (0..3) of a quad whose BGSUB_BPP words are w, as lanes.
uint quad_byte(uvec4 w, int o) { return (w[o >> 2] >> uint((o & 3) * 8)) & 255u; }

uvec4 quad_pixel(uvec4 w, int k)
{
#if BGSUB_BPP == 1
    return uvec4(quad_byte(w, k), 0u, 0u, 0u);
#else
    int o = k * BGSUB_BPP;
    return colour_lanes(quad_byte(w, o), quad_byte(w, o + 1), quad_byte(w, o + 2));
#endif
}
#endif

#ifdef BGSUB_WRITE_RING
// Copies the words whose first byte belongs to this texel's pixel(s) into the frame ring.
void write_ring()
{
#if defined(BGSUB_PACKED)
    int i = texel_index();
    ring_words[i] = stage_words[i];
#else
    int first = texel_index() * BGSUB_BPP;
    for (int j = (first + 3) >> 2; j < (first + BGSUB_BPP + 3) >> 2; j++)
        ring_words[j] = stage_words[j];
#endif
}
#endif

uvec4 absdiff(uvec4 a, uvec4 b) { return max(a, b) - min(a, b); }

// Per-lane decisions (0/1): in colour, a pixel decides where any channel does.
uvec4 combine(uvec4 v)
{
    v &= LANE;
#if BGSUB_LANES == 3 && !defined(BGSUB_PACKED)
    uint a = v.x | v.y | v.z;
    return uvec4(a, a, a, 0u);
#else
    return v;
#endif
}

// One value per pixel (R8UI, or RGBA8UI packed) as lanes, and back.
uvec4 spread(uvec4 v)
{
#if defined(BGSUB_PACKED)
    return v;
#else
    return uvec4(v.x) * LANE;
#endif
}

// The current B, T and counter (VSAM's first frame: the frame, the floor and 0).
void state(uvec4 cur, out uvec4 bg, out uvec4 th, out uvec4 cnt)
{
    if (u_init != 0) {
        bg = (cur << 8u) & LANE16;
        th = uvec4(uint(u_f)) * LANE;
        cnt = uvec4(0u);
    } else {
        bg = texelFetch(u_bg, texel(), 0) & LANE16;
        th = texelFetch(u_th, texel(), 0) & LANE16;
        cnt = spread(texelFetch(u_count, texel(), 0));
    }
}

uvec4 moving_lanes(uvec4 cur, uvec4 th)
{
    if (u_history < 2)
        return uvec4(0u);
    uvec4 d1 = absdiff(cur, frame(1)) << 8u;
    uvec4 d2 = absdiff(cur, frame(2)) << 8u;
    return combine(uvec4(greaterThan(d1, th)) & uvec4(greaterThan(d2, th)));
}

uvec4 foreground_lanes(uvec4 cur, uvec4 bg, uvec4 th)
{
    return combine(uvec4(greaterThan(absdiff(cur << 8u, bg), th)));
}

uvec4 next_count(uvec4 cnt, uvec4 moving, uvec4 raw)
{
    uvec4 up = min(uvec4(uint(u_k)), cnt + 1u);
    uvec4 down = cnt - min(cnt, uvec4(1u));
    return (moving * cnt + (1u - moving) * (raw * up + (1u - raw) * down)) & LANE * 255u;
}

// Lanes that keep B and T: moving, or foreground that the counter has not absorbed yet.
uvec4 holds(uvec4 moving, uvec4 raw, uvec4 cnt2)
{
    return (moving | (raw & uvec4(lessThan(cnt2, uvec4(uint(u_k)))))) & LANE;
}

uvec4 next_background(uvec4 cur, uvec4 bg, uvec4 keep)
{
    uint a = uint(u_a);
    uvec4 nb = (a * bg + (65536u - a) * (cur << 8u) + 32768u) >> 16u;
    return keep * bg + (1u - keep) * nb;
}

uvec4 next_threshold(uvec4 cur, uvec4 bg, uvec4 th, uvec4 keep)
{
    uint a = uint(u_a);
    uvec4 cd = min(uvec4(65280u), (uint(u_c) * absdiff(cur << 8u, bg) + 128u) >> 8u);
    uvec4 nt = max(uvec4(uint(u_f)), (a * th + (65536u - a) * cd + 32768u) >> 16u) & LANE16;
    return keep * th + (1u - keep) * nt;
}

uvec4 threshold_for_differences()
{
    uvec4 th = uvec4(uint(u_f)) * LANE;
    if (u_learned != 0)
        th = texelFetch(u_th, texel(), 0) & LANE16;
    return th;
}

#if BGSUB_STAGE == 6 && !defined(BGSUB_BLOCKS)
// Raw foreground (bit 0) of the pixels of texel (x, y) of a layer, clamped to it.
uvec4 raw_at(int x, int y, int layer)
{
    ivec2 c = clamp(ivec2(x, y), ivec2(0), glcv_region.zw - 1);
    return texelFetch(u_raw, ivec3(c, layer), 0) & 1u;
}

// The vote of texel p of a layer: foreground where at least u_vote of the 3 x 3 pixels are raw
// foreground.
uvec4 vote_at(ivec2 p, int layer)
{
    if (u_vote == 0)
        return raw_at(p.x, p.y, layer);
    uvec4 n = uvec4(0u);
    for (int dy = -1; dy <= 1; dy++) {
#if defined(BGSUB_PACKED)
        // the row's six pixels around the texel's four: left neighbour, the four, right one
        uvec4 c = raw_at(p.x, p.y + dy, layer);
        uint l = p.x > 0 ? raw_at(p.x - 1, p.y + dy, layer).w : c.x;
        uint r = p.x < glcv_region.z - 1 ? raw_at(p.x + 1, p.y + dy, layer).x : c.w;
        n += uvec4(l + c.x + c.y, c.x + c.y + c.z, c.y + c.z + c.w, c.z + c.w + r);
#else
        n += raw_at(p.x - 1, p.y + dy, layer) + raw_at(p.x, p.y + dy, layer) + raw_at(p.x + 1, p.y + dy, layer);
#endif
    }
    return uvec4(greaterThanEqual(n, uvec4(uint(u_vote))));
}
#endif

// Four mask bytes (0/1 each) as one word, the first in the low byte.
uint mask_word(uvec4 m)
{
    m *= 255u;
    return m.x | (m.y << 8) | (m.z << 16) | (m.w << 24);
}

#ifdef BGSUB_BLOCKS
// The quads of a row: the vote (stage 6) runs over quads, the decide pass over pixels.
int row_quads()
{
#if BGSUB_STAGE == 6
    return glcv_region.z;
#else
    return glcv_region.z / 4;
#endif
}

// Bit 0 of each byte of a decisions word as lanes.
uvec4 raw_bits(uint w) { return uvec4(w, w >> 8, w >> 16, w >> 24) & 1u; }

// The votes of quad q of the set, quad x of row y: per row of the 3 x 3 (clamped to the layer),
// the six pixels from the left neighbour to the right one, from the decisions words of the quad
// and its two neighbours.
uvec4 vote_quad(int q, int x, int y)
{
    if (u_vote == 0)
        return raw_bits(raw_in[q]);
    int w = row_quads(), h = glcv_region.w;
    uvec4 n = uvec4(0u);
    for (int dy = -1; dy <= 1; dy++) {
        int r = q + (clamp(y + dy, 0, h - 1) - y) * w; // the quad above, this one, below
        uvec4 c = raw_bits(raw_in[r]);
        uint left = x > 0 ? raw_in[r - 1] >> 24 & 1u : c.x;
        uint right = x < w - 1 ? raw_in[r + 1] & 1u : c.w;
        n += uvec4(left + c.x + c.y, c.x + c.y + c.z, c.y + c.z + c.w, c.z + c.w + right);
    }
    return uvec4(greaterThanEqual(n, uvec4(uint(u_vote))));
}

#ifdef BGSUB_WRITE_MASK
layout(std430, binding = 2) writeonly buffer MaskBlocks { uint mask_quads[]; };
#endif

// The vote of quad q of the set (quad x of row y of a layer): with BGSUB_WRITE_MASK into word q of
// the download memory, and (stage 6) into the mask texture's four pixels.
void vote_store(int q, int x, int y, int layer)
{
    uvec4 m = vote_quad(q, x, y);
#if BGSUB_STAGE == 6
    glcv_layer = layer;
    for (int k = 0; k < 4; k++) {
        glcv_pos = ivec2(4 * x + k, y);
        glcv_store0(vec4(float(m[k]), 0.0, 0.0, 1.0));
    }
#endif
#ifdef BGSUB_WRITE_MASK
    mask_quads[q] = mask_word(m);
#endif
}
#endif

#if defined(BGSUB_WRITE_MASK) && !defined(BGSUB_BLOCKS)
// The mask bytes of four pixels in one word: those of this texel (packed), or (one pixel per
// texel) of the four pixels from this one on in the order of the download (layer after layer),
// written by every fourth pixel.
void write_mask_word(uvec4 m)
{
#if defined(BGSUB_PACKED)
    mask_words[texel_index()] = mask_word(m);
#else
    int p = texel_index();
    if ((p & 3) != 0)
        return;
    int per_layer = glcv_region.z * glcv_region.w, total = per_layer * u_layers;
    uint word = 0u;
    for (int k = 0; k < 4 && p + k < total; k++) {
        int q = p + k, layer = q / per_layer, r = q - layer * per_layer;
        uint v = k == 0 ? m.x : vote_at(ivec2(r % glcv_region.z, r / glcv_region.z), layer).x;
        word |= (v * 255u) << uint(8 * k);
    }
    mask_words[p >> 2] = word;
#endif
}
#endif

// The mask as stored: one R8 value per pixel, or four (RGBA8) when packed.
vec4 mask_value(uvec4 m)
{
#if defined(BGSUB_PACKED)
    return vec4(m);
#else
    return vec4(float(m.x), 0.0, 0.0, 1.0);
#endif
}

#if BGSUB_STAGE != 6 && !defined(BGSUB_BLOCKS)
// The pass at pixel (glcv_pos, glcv_layer) of the current set, whose frames frame() gives.
void decide()
{
    uvec4 cur = frame(0);
#if BGSUB_METHOD != 1
    uvec4 th = threshold_for_differences();
#if BGSUB_METHOD == 2
    uvec4 raw = u_history >= 1 ? combine(uvec4(greaterThan(absdiff(cur, frame(1)) << 8u, th))) : uvec4(0u);
    glcv_store0(raw);
#else
    uvec4 mv = moving_lanes(cur, th);
    glcv_store0(mv | (mv << 1u));
#endif
#else
    uvec4 bg, th, cnt;
    state(cur, bg, th, cnt);
#if BGSUB_STAGE == 0
    uvec4 mv = moving_lanes(cur, th);
    uvec4 raw = foreground_lanes(cur, bg, th);
    uvec4 cnt2 = next_count(cnt, mv, raw);
    uvec4 keep = holds(mv, raw, cnt2);
    glcv_store0(raw | (mv << 1u));
    glcv_store1(next_background(cur, bg, keep));
    glcv_store2(next_threshold(cur, bg, th, keep));
    glcv_store3(cnt2);
#elif BGSUB_STAGE == 1
    glcv_store0(moving_lanes(cur, th));
#elif BGSUB_STAGE == 2
    uvec4 mv = spread(texelFetch(u_moving, texel(), 0));
    glcv_store0(foreground_lanes(cur, bg, th) | (mv << 1u));
#else
    uvec4 d = spread(texelFetch(u_raw, texel(), 0));
    uvec4 raw = d & 1u, mv = d >> 1u;
    uvec4 cnt2 = next_count(cnt, mv, raw);
#if BGSUB_STAGE == 3
    glcv_store0(cnt2);
#elif BGSUB_STAGE == 4
    glcv_store0(next_background(cur, bg, holds(mv, raw, cnt2)));
#else
    glcv_store0(next_threshold(cur, bg, th, holds(mv, raw, cnt2)));
#endif
#endif
#endif
}
#endif

#if defined(BGSUB_BLOCKS) && BGSUB_STAGE == 0
// The state of quad q: B, T (8.8) and the counter of its four pixels, as lanes. STATE_VECS words:
//   colour: B of pixels 0, 1 | B of pixels 2, 3 | T of 0, 1 | T of 2, 3, each pixel four 16-bit
//           halves r, g, b and (B) the counter, (T) 0
//   luma:   (B0 | B1 << 16, B2 | B3 << 16, T0 | T1 << 16, T2 | T3 << 16) | (the four counters as
//           bytes, 0, 0, 0)
// (src/bgsub_gl.c converts the same layout for read_state and set_state.)
uvec4 half16(uint lo, uint hi) { return uvec4(lo & 0xFFFFu, lo >> 16, hi & 0xFFFFu, hi >> 16); }

void quad_state(int q, out uvec4 bg[4], out uvec4 th[4], out uint cnt[4])
{
#if BGSUB_LANES == 3
    for (int h = 0; h < 2; h++) {
        uvec4 b = state_in[STATE_VECS * q + h], t = state_in[STATE_VECS * q + 2 + h];
        uvec4 b0 = half16(b.x, b.y), b1 = half16(b.z, b.w);
        bg[2 * h] = uvec4(b0.xyz, 0u);
        bg[2 * h + 1] = uvec4(b1.xyz, 0u);
        cnt[2 * h] = b0.w;
        cnt[2 * h + 1] = b1.w;
        th[2 * h] = uvec4(half16(t.x, t.y).xyz, 0u);
        th[2 * h + 1] = uvec4(half16(t.z, t.w).xyz, 0u);
    }
#else
    uvec4 s = state_in[STATE_VECS * q];
    uint c = state_in[STATE_VECS * q + 1].x;
    uvec4 b = half16(s.x, s.y), t = half16(s.z, s.w);
    for (int k = 0; k < 4; k++) {
        bg[k] = uvec4(b[k], 0u, 0u, 0u);
        th[k] = uvec4(t[k], 0u, 0u, 0u);
        cnt[k] = c >> uint(8 * k) & 255u;
    }
#endif
}

void store_quad_state(int q, uvec4 bg[4], uvec4 th[4], uint cnt[4])
{
#if BGSUB_LANES == 3
    for (int h = 0; h < 2; h++) {
        uvec4 b0 = bg[2 * h], b1 = bg[2 * h + 1], t0 = th[2 * h], t1 = th[2 * h + 1];
        state_out[STATE_VECS * q + h] = uvec4(b0.x | b0.y << 16, b0.z | cnt[2 * h] << 16, b1.x | b1.y << 16,
                                              b1.z | cnt[2 * h + 1] << 16);
        state_out[STATE_VECS * q + 2 + h] = uvec4(t0.x | t0.y << 16, t0.z, t1.x | t1.y << 16, t1.z);
    }
#else
    state_out[STATE_VECS * q] = uvec4(bg[0].x | bg[1].x << 16, bg[2].x | bg[3].x << 16, th[0].x | th[1].x << 16,
                                      th[2].x | th[3].x << 16);
    state_out[STATE_VECS * q + 1] = uvec4(cnt[0] | cnt[1] << 8 | cnt[2] << 16 | cnt[3] << 24, 0u, 0u, 0u);
#endif
}

// The rule of one pixel of a quad, from values (frame() gives the frames): its decisions (bit 0
// raw foreground, bit 1 moving, per lane); VSAM also moves bg, th and cnt on.
uvec4 decide_pixel(uvec4 cur, inout uvec4 bg, inout uvec4 th, inout uint cnt)
{
#if BGSUB_METHOD == 2
    return u_history >= 1 ? combine(uvec4(greaterThan(absdiff(cur, frame(1)) << 8u, th))) : uvec4(0u);
#elif BGSUB_METHOD == 3
    uvec4 mv = moving_lanes(cur, th);
    return mv | (mv << 1u);
#else
    if (u_init != 0) {
        bg = (cur << 8u) & LANE16;
        th = uvec4(uint(u_f)) * LANE;
        cnt = 0u;
    }
    uvec4 mv = moving_lanes(cur, th);
    uvec4 raw = foreground_lanes(cur, bg, th);
    uvec4 cnt2 = next_count(spread(uvec4(cnt)), mv, raw);
    uvec4 keep = holds(mv, raw, cnt2);
    uvec4 nb = next_background(cur, bg, keep);
    th = next_threshold(cur, bg, th, keep);
    bg = nb;
    cnt = cnt2.x;
    return raw | (mv << 1u);
#endif
}

// The index of this work group among all of the dispatch's (GLCV_TILED).
int group_index()
{
    return int((gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y) * gl_NumWorkGroups.x + gl_WorkGroupID.x);
}

// Quad q of the set: its coordinates in quads and its layer.
ivec3 quad_at(int q)
{
    int row = glcv_region.z / 4, per_layer = row * glcv_region.w;
    int layer = q / per_layer, r = q - layer * per_layer;
    return ivec3(r % row, r / row, layer);
}

// The streamed pass of one block of 64 quads (GLCV_TILED: one work group, one invocation per
// quad), the block g of the set's quads in memory order, layer after layer: its words are read
// from the upload memory in 16-byte loads, neighbouring invocations reading neighbouring words,
// into shared memory and the frame ring; then every invocation decides its four pixels, its
// state read and written as STATE_VECS contiguous 16-byte words and its decisions as one.
void decide_block(int g)
{
    int t = int(gl_LocalInvocationID.x);
    int first = g * BLOCK_VECS, vecs = (u_quads * BGSUB_BPP + 3) / 4;
    if (t < BLOCK_VECS && first + t < vecs) {
        uvec4 v = stage_blocks[first + t];
        block[t] = v;
        ring_blocks[first + t] = v;
    }
    memoryBarrierShared();
    barrier();
    int q = g * BLOCK_QUADS + t;
    if (q >= u_quads)
        return;
    uvec4 w0 = uvec4(0u), w1 = uvec4(0u), w2 = uvec4(0u);
    for (int i = 0; i < BGSUB_BPP; i++) {
        int o = t * BGSUB_BPP + i;
        w0[i] = block[o >> 2][o & 3];
        if (u_history >= 1)
            w1[i] = texelFetch(u_p1, q * BGSUB_BPP + i).r;
        if (u_history >= 2)
            w2[i] = texelFetch(u_p2, q * BGSUB_BPP + i).r;
    }
    uvec4 bg[4], th[4];
    uint cnt[4];
    for (int k = 0; k < 4; k++) {
        bg[k] = uvec4(0u);
        th[k] = uvec4(uint(u_f)) * LANE;
        cnt[k] = 0u;
    }
#if BGSUB_METHOD == 1
    if (u_init == 0)
        quad_state(q, bg, th, cnt);
#else
    if (u_learned != 0)
        quad_state(q, bg, th, cnt);
#endif
    uint raw = 0u;
    for (int k = 0; k < 4; k++) {
        quad_px[0] = quad_pixel(w0, k);
        quad_px[1] = quad_pixel(w1, k);
        quad_px[2] = quad_pixel(w2, k);
        raw |= decide_pixel(quad_px[0], bg[k], th[k], cnt[k]).x << uint(8 * k);
    }
    raw_out[q] = raw;
#if BGSUB_METHOD == 1
    store_quad_state(q, bg, th, cnt);
#endif
}

#ifdef BGSUB_FUSED
// The vote of block g of the set before: a quad per invocation.
void vote_block(int g)
{
    int q = g * BLOCK_QUADS + int(gl_LocalInvocationID.x);
    if (q >= u_quads)
        return;
    ivec3 at = quad_at(q);
    vote_store(q, at.x, at.y, at.z);
}
#endif
#endif

void glcv_pass(ivec2 pos)
{
#if BGSUB_STAGE == 6 && defined(BGSUB_BLOCKS)
    vote_store(texel_index(), glcv_pos.x, glcv_pos.y, glcv_layer); // a quad per invocation
#elif BGSUB_STAGE == 6
    uvec4 m = vote_at(glcv_pos, glcv_layer);
    glcv_store0(mask_value(m));
#ifdef BGSUB_WRITE_MASK
    write_mask_word(m);
#endif
#elif defined(BGSUB_FUSED)
    // work groups in turn: a block of this set, a block of the vote of the set before
    int g = group_index();
    if ((g & 1) == 0)
        decide_block(g >> 1);
    else if (u_vote_prev != 0)
        vote_block(g >> 1);
#elif defined(BGSUB_BLOCKS)
    decide_block(group_index());
#else
#ifdef BGSUB_WRITE_RING
    write_ring();
#endif
    decide();
#endif
}
