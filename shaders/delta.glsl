// Frame-delta coding (glcv/delta.h; the contract in src/delta_internal.h), the GL engines' passes.
// A frame is N bytes in the stream's format, held as 32-bit words: byte i is bits 8 (i & 3) .. of
// word i >> 2. Compute passes keep the words in storage buffers; fragment passes in R32UI
// textures DELTA_WIDTH words wide (word w at (w % DELTA_WIDTH, w / DELTA_WIDTH)). Defines:
//   DELTA_STAGE  1 convert: the frame into the stream's format, a word (4 bytes) per invocation
//                2 mask: a mask texture into a byte per pixel (0, 1), a word (4 pixels) per
//                  invocation (a host mask is uploaded as it is: nonzero may change)
//                3 diff: a bitmap word per 32 bytes: bit j of word b is byte 32 b + j, set where
//                  |cur - ref| > u_threshold in a pixel the mask allows. Compute (GLCV_TILED, 256
//                  words a group): also the group's records into a slot of its own (indices, and
//                  the deltas (cur - ref) mod 256 packed 4 to a word), the reference moved to the
//                  frame at the changed bytes, and the group's count; the last group done scans
//                  the counts into offsets and chooses the layout as the encoder does
//                  (src/delta.c), writing k, the layout and the payload's bytes where the packet's
//                  header goes (for the host) and the assemble pass's work groups
//                4 assemble (compute, work groups from the diff): a word of the packet's payload
//                  an invocation: the indices or the bitmap, then the deltas, gathered from slots
//                5 reduce (fragment): a level of the HistoPyramid over the bitmap (level 0: the
//                  bitmap's words, their bit counts): value j of level l is the sum of values
//                  4 j .. 4 j + 3 of level l - 1; odd levels in atlas A, even ones in atlas B
//                6 compact (fragment): 4 records a fragment, each found by a descent of the pyramid
//                7 update (fragment): the next reference (every byte with u_all)
//   DELTA_BPP    bytes per pixel of the stream; DELTA_GRAY (luma), DELTA_BGR (blue first)
//   DELTA_IN_BPP, DELTA_IN_BGR: the host frame's format (convert); DELTA_IN_TEXTURE: a texture
//   DELTA_MASK   diff: a mask is used

uniform int u_bytes;     // N: bytes of a frame
uniform int u_pixels;    // width * height
uniform int u_width;     // pixels of a row
uniform int u_threshold; // 0 (every change) .. 255

#ifndef DELTA_WIDTH
#define DELTA_WIDTH 4096
#endif

#ifdef GLCV_COMPUTE
layout(std430, binding = 0) buffer Cur { uint cur_w[]; };
layout(std430, binding = 1) buffer Ref { uint ref_w[]; };
layout(std430, binding = 2) buffer Mask { uint mask_w[]; };
layout(std430, binding = 3) buffer Bitmap { uint bitmap_w[]; };
#if DELTA_STAGE == 3
layout(std430, binding = 4) coherent buffer Counts { uint counts[]; }; // read across work groups
#else
layout(std430, binding = 4) buffer Counts { uint counts[]; };
#endif
layout(std430, binding = 5) buffer Deltas { uint deltas_w[]; };
layout(std430, binding = 6) buffer Indices { uint indices[]; };
#if DELTA_STAGE == 3 || DELTA_STAGE == 4
layout(std430, binding = 7) buffer Packet { uint packet_w[]; }; // the header's 16 words, the payload
#else
layout(std430, binding = 7) buffer In { uint in_w[]; };
uint in_word(int w) { return in_w[w]; }
#endif
uint cur_word(int w) { return cur_w[w]; }
uint ref_word(int w) { return ref_w[w]; }
uint mask_word(int w) { return mask_w[w]; }
uint bitmap_word(int b) { return bitmap_w[b]; }
#else
uniform usampler2D u_cur;
uniform usampler2D u_ref;
uniform usampler2D u_mask;
uniform usampler2D u_bitmap;
uniform usampler2D u_in;
ivec2 word_at(int w) { return ivec2(w % DELTA_WIDTH, w / DELTA_WIDTH); }
uint cur_word(int w) { return texelFetch(u_cur, word_at(w), 0).r; }
uint ref_word(int w) { return texelFetch(u_ref, word_at(w), 0).r; }
uint mask_word(int w) { return texelFetch(u_mask, word_at(w), 0).r; }
uint bitmap_word(int b) { return texelFetch(u_bitmap, word_at(b), 0).r; }
uint in_word(int w) { return texelFetch(u_in, word_at(w), 0).r; }
// The word this fragment writes.
int fragment_word() { return glcv_pos.y * DELTA_WIDTH + glcv_pos.x; }
#endif

uint byte_of(uint w, int k) { return (w >> uint(8 * k)) & 255u; }

// Set bits of a word, and the index of the lowest (v != 0): GLSL 4.00's bitCount and findLSB,
// written out for GL 3.3.
uint count_bits(uint v)
{
    v = v - ((v >> 1) & 0x55555555u);
    v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
    return (((v + (v >> 4)) & 0x0F0F0F0Fu) * 0x01010101u) >> 24;
}

int lowest_bit(uint v) { return int(count_bits((v & (0u - v)) - 1u)); }

#if DELTA_STAGE == 1
#ifdef DELTA_IN_TEXTURE
uniform sampler2D u_frame; // the caller's texture, row 0 = image row 0
#endif

// R, G, B, A of pixel p of the frame given.
uvec4 source_pixel(int p)
{
#ifdef DELTA_IN_TEXTURE
    vec4 v = texelFetch(u_frame, ivec2(p % u_width, p / u_width), 0);
    return uvec4(floor(clamp(v, 0.0, 1.0) * 255.0 + 0.5));
#else
    int o = p * DELTA_IN_BPP;
    uint c[4];
    for (int k = 0; k < DELTA_IN_BPP; k++)
        c[k] = byte_of(in_word((o + k) >> 2), (o + k) & 3);
#if DELTA_IN_BPP == 1
    return uvec4(c[0], c[0], c[0], 255u);
#else
#ifdef DELTA_IN_BGR
    uint r = c[2], b = c[0];
#else
    uint r = c[0], b = c[2];
#endif
#if DELTA_IN_BPP == 4
    return uvec4(r, c[1], b, c[3]);
#else
    return uvec4(r, c[1], b, 255u);
#endif
#endif
#endif
}

// Byte i of the frame in the stream's format.
uint stream_byte(int i)
{
    int p = i / DELTA_BPP, c = i - p * DELTA_BPP;
    uvec4 s = source_pixel(p);
#ifdef DELTA_GRAY
    return (77u * s.r + 150u * s.g + 29u * s.b + 128u) >> 8;
#else
#ifdef DELTA_BGR
    if (c == 0)
        return s.b;
    if (c == 2)
        return s.r;
#endif
    return s[c];
#endif
}

uint pass_word(int w)
{
    uint v = 0u;
    for (int k = 0; k < 4; k++)
        if (4 * w + k < u_bytes)
            v |= stream_byte(4 * w + k) << uint(8 * k);
    return v;
}
#endif

#if DELTA_STAGE == 2
uniform sampler2D u_mask_frame; // the caller's mask texture: red > 0.5 may change

uint pass_word(int w)
{
    uint v = 0u;
    for (int k = 0; k < 4; k++) {
        int p = 4 * w + k;
        if (p < u_pixels && texelFetch(u_mask_frame, ivec2(p % u_width, p / u_width), 0).r > 0.5)
            v |= 1u << uint(8 * k);
    }
    return v;
}
#endif

#if DELTA_STAGE == 3
// The bitmap word of bytes 32 b .. 32 b + 31 (bits past the frame 0).
uint diff_bits(int b)
{
    uint bits = 0u;
    for (int w = 0; w < 8; w++) {
        int i0 = 32 * b + 4 * w;
        if (i0 >= u_bytes)
            break;
        uint c = cur_word(8 * b + w), r = ref_word(8 * b + w);
        for (int k = 0; k < 4; k++) {
            int i = i0 + k;
            int d = int(byte_of(c, k)) - int(byte_of(r, k));
            bool changed = i < u_bytes && abs(d) > u_threshold;
#ifdef DELTA_MASK
            int p = i / DELTA_BPP;
            changed = changed && byte_of(mask_word(p >> 2), p & 3) != 0u;
#endif
            if (changed)
                bits |= 1u << uint(4 * w + k);
        }
    }
    return bits;
}
#endif

#ifdef GLCV_COMPUTE
uniform int u_words;  // words of the pass's output (convert, mask), or bitmap words (diff)
uniform int u_groups; // work groups of the diff pass

int group_index() { return int(gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x); }

// counts[0 .. u_groups - 1]: the diff's groups' counts, then their exclusive offsets; after them
// (counts[u_groups + i]): k (0), the assemble pass's work groups x, y, z (1..3), the layout (4:
// 1 RAW, 2 INDICES, 3 BITMAP), the payload's bytes (5), the groups done (6: 0 between frames).
#define AFTER_K 0
#define AFTER_LAYOUT 4
#define AFTER_PAYLOAD 5
#define AFTER_DONE 6
#define SLOT_BYTES 8192 // a diff group's records: 256 bitmap words of 32 bytes

#if DELTA_STAGE == 3
uniform int u_layout; // the encoder's layout: 0 the smaller, 2 INDICES, 3 BITMAP
shared uint scan[256];
shared uint staged[SLOT_BYTES / 4]; // the group's delta bytes
shared uint last;                   // the group is the last one done

// Inclusive scan of c over the work group (256 invocations).
uint group_scan(uint c, int t)
{
    scan[t] = c;
    barrier();
    for (int off = 1; off < 256; off <<= 1) {
        uint v = t >= off ? scan[t - off] : 0u;
        barrier();
        scan[t] += v;
        barrier();
    }
    return scan[t];
}

// The 4-byte mask of word k (0..7) of a bitmap word's 32 bytes.
uint byte_mask(uint bits, int k)
{
    uint m = 0u;
    for (int j = 0; j < 4; j++)
        if ((bits & (1u << uint(4 * k + j))) != 0u)
            m |= 255u << uint(8 * j);
    return m;
}

// The last group done: the groups' counts into offsets, k, the layout (as src/delta.c chooses
// it: INDICES 5 k bytes, BITMAP ceil(n / 8) + k, RAW when neither is below n), the payload's
// size and the assemble pass's work groups.
void finish_scan(int t)
{
    int run = (u_groups + 255) / 256, first = t * run, last_g = min(first + run, u_groups);
    uint sum = 0u;
    for (int i = first; i < last_g; i++)
        sum += counts[i];
    uint offset = group_scan(sum, t) - sum;
    for (int i = first; i < last_g; i++) {
        uint c = counts[i];
        counts[i] = offset;
        offset += c;
    }
    if (t == 255) {
        uint k = scan[255], n = uint(u_bytes), lead = (n + 7u) / 8u;
        uint lay = u_layout != 0 ? uint(u_layout) : k <= lead / 4u ? 2u : 3u;
        if (lay == 2u && k > (n - 1u) / 5u)
            lay = 1u;
        if (lay == 3u && k >= n - lead)
            lay = 1u;
        uint payload = lay == 2u ? 5u * k : lay == 3u ? lead + k : 0u;
        uint groups = (payload + 1023u) / 1024u, x = min(groups, 65535u);
        counts[u_groups + AFTER_K] = k;
        counts[u_groups + 1] = x;
        counts[u_groups + 2] = x == 0u ? 0u : (groups + x - 1u) / x;
        counts[u_groups + 3] = 1u;
        counts[u_groups + AFTER_LAYOUT] = lay;
        counts[u_groups + AFTER_PAYLOAD] = payload;
        packet_w[0] = k;
        packet_w[1] = lay;
        packet_w[2] = payload;
    }
}
#endif

#if DELTA_STAGE == 4
// The group of record r: the last whose offset is <= r (a binary search of the offsets).
int record_group(uint r)
{
    int lo = 0, hi = u_groups - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (counts[mid] <= r)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}
#endif

void glcv_pass(ivec2 group)
{
    int t = int(gl_LocalInvocationID.x);
#if DELTA_STAGE == 1 || DELTA_STAGE == 2
    int w = group_index() * 256 + t;
    if (w < u_words) {
#if DELTA_STAGE == 1
        cur_w[w] = pass_word(w);
#else
        mask_w[w] = pass_word(w);
#endif
    }
#elif DELTA_STAGE == 3
    int g = group_index(), b = g * 256 + t;
    if (g >= u_groups)
        return; // the same for the whole group
    uint bits = b < u_words ? diff_bits(b) : 0u;
    if (b < u_words)
        bitmap_w[b] = bits;
    uint c = uint(bitCount(bits));
    uint rank = group_scan(c, t) - c, total = scan[255];
    if (total != 0u) { // the same for the whole group
        // The records into the group's slot (indices, and deltas packed through shared memory),
        // and the reference moved to the frame at the changed bytes.
        int nw = int((total + 3u) / 4u);
        for (int i = t; i < nw; i += 256)
            staged[i] = 0u;
        barrier();
        uint m = 0u;
        for (uint rest = bits; rest != 0u; rest &= rest - 1u, m++) {
            int j = findLSB(rest), i = 32 * b + j;
            uint d = (byte_of(cur_word(i >> 2), i & 3) - byte_of(ref_word(i >> 2), i & 3)) & 255u;
            uint p = rank + m;
            atomicOr(staged[p >> 2], d << (8u * (p & 3u)));
            indices[g * SLOT_BYTES + int(p)] = uint(i);
        }
        barrier();
        for (int i = t; i < nw; i += 256)
            deltas_w[g * (SLOT_BYTES / 4) + i] = staged[i];
        if (bits != 0u)
            for (int k = 0; k < 8; k++) {
                uint bm = byte_mask(bits, k);
                if (bm != 0u)
                    ref_w[8 * b + k] = (cur_w[8 * b + k] & bm) | (ref_w[8 * b + k] & ~bm);
            }
    }
    // The group's count; the last group done scans them all.
    if (t == 0) {
        counts[g] = total;
        memoryBarrierBuffer();
        last = atomicAdd(counts[u_groups + AFTER_DONE], 1u) == uint(u_groups - 1) ? 1u : 0u;
    }
    barrier();
    if (last != 0u) { // the same for the whole group
        memoryBarrierBuffer();
        finish_scan(t);
        if (t == 0)
            counts[u_groups + AFTER_DONE] = 0u; // for the next frame
    }
#elif DELTA_STAGE == 4
    uint w = uint(group_index()) * 256u + uint(t), payload = counts[u_groups + AFTER_PAYLOAD];
    if (w >= (payload + 3u) / 4u)
        return;
    uint k = counts[u_groups + AFTER_K], lay = counts[u_groups + AFTER_LAYOUT];
    uint lead = lay == 2u ? 4u * k : (uint(u_bytes) + 7u) / 8u; // the bytes before the deltas
    uint word = 0u;
    if (lay == 2u && w < k) {
        int g = record_group(w);
        word = indices[g * SLOT_BYTES + int(w - counts[g])];
    } else if (lay == 3u && 4u * w + 3u < lead) {
        word = bitmap_w[w];
    } else {
        // The deltas from the group of the word's first, onwards byte by byte.
        int g = record_group(4u * w < lead ? 0u : 4u * w - lead);
        for (uint q = 0u; q < 4u; q++) {
            uint at = 4u * w + q, v;
            if (at >= payload)
                break;
            if (at < lead) {
                v = byte_of(bitmap_w[at >> 2], int(at & 3u));
            } else {
                uint j = at - lead;
                while (g + 1 < u_groups && counts[g + 1] <= j)
                    g++;
                uint r = j - counts[g];
                v = byte_of(deltas_w[g * (SLOT_BYTES / 4) + int(r >> 2)], int(r & 3u));
            }
            word |= v << (8u * q);
        }
    }
    packet_w[16u + w] = word;
#endif
}

#else // fragment passes

#if DELTA_STAGE == 5 || DELTA_STAGE == 6
// The pyramid: level 0 is the bitmap (a value: its word's bit count); level l >= 1 lies in atlas
// A (odd l) or B (even l), DELTA_WIDTH values a row from row u_rows[l].
uniform usampler2D u_atlas_a;
uniform usampler2D u_atlas_b;
uniform ivec4 u_rows[4]; // u_rows[l / 4][l % 4]: the first row of level l (levels 1..15)

int level_row(int l) { return u_rows[l / 4][l % 4]; }

uint level_value(int l, int j)
{
    if (l == 0)
        return count_bits(bitmap_word(j));
    ivec2 at = ivec2(j % DELTA_WIDTH, level_row(l) + j / DELTA_WIDTH);
    return (l & 1) != 0 ? texelFetch(u_atlas_a, at, 0).r : texelFetch(u_atlas_b, at, 0).r;
}
#endif

#if DELTA_STAGE == 5
uniform int u_level; // the level written
uniform int u_below; // values of the level below
#endif

#if DELTA_STAGE == 6
uniform int u_levels; // the top level (1 value: the count)
uniform int u_count;  // k

// Byte index of record r: a descent from the top, then the rank inside the bitmap word.
int record_index(int r)
{
    int j = 0;
    uint rest = uint(r);
    for (int l = u_levels - 1; l >= 0; l--) {
        j *= 4;
        for (int c = 0; c < 3; c++) {
            uint v = level_value(l, j);
            if (rest < v)
                break;
            rest -= v;
            j++;
        }
    }
    uint bits = bitmap_word(j);
    for (uint k = 0u; k < rest; k++)
        bits &= bits - 1u;
    return 32 * j + lowest_bit(bits);
}
#endif

#if DELTA_STAGE == 7
uniform int u_all; // a keyframe: every byte
#endif

void glcv_pass(ivec2 pos)
{
    int w = fragment_word();
#if DELTA_STAGE == 1 || DELTA_STAGE == 2
    glcv_store0(uvec4(pass_word(w), 0u, 0u, 0u));
#elif DELTA_STAGE == 3
    glcv_store0(uvec4(w < (u_bytes + 31) / 32 ? diff_bits(w) : 0u, 0u, 0u, 0u));
#elif DELTA_STAGE == 5
    int j = (pos.y - level_row(u_level)) * DELTA_WIDTH + pos.x;
    uint v = 0u;
    for (int c = 0; c < 4; c++)
        if (4 * j + c < u_below)
            v += level_value(u_level - 1, 4 * j + c);
    glcv_store0(uvec4(v, 0u, 0u, 0u));
#elif DELTA_STAGE == 6
    uint d = 0u;
    uvec4 at = uvec4(0u);
    for (int q = 0; q < 4; q++) {
        int r = 4 * w + q;
        if (r >= u_count)
            break;
        int i = record_index(r);
        d |= ((byte_of(cur_word(i >> 2), i & 3) - byte_of(ref_word(i >> 2), i & 3)) & 255u) << uint(8 * q);
        at[q] = uint(i);
    }
    glcv_store0(uvec4(d, 0u, 0u, 0u));
    glcv_store1(at);
#elif DELTA_STAGE == 7
    uint c = cur_word(w), r = ref_word(w);
    uint bits = u_all != 0 ? 15u : (bitmap_word(w >> 3) >> uint(4 * (w & 7))) & 15u;
    uint m = 0u;
    for (int j = 0; j < 4; j++)
        if ((bits & (1u << uint(j))) != 0u)
            m |= 255u << uint(8 * j);
    glcv_store0(uvec4((c & m) | (r & ~m), 0u, 0u, 0u));
#endif
}
#endif
