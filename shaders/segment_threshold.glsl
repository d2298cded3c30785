// Segmenter, fused first pass (Griesser 2005, sections 2.1-2.5, 4.1-4.4).
//
// One invocation per 2x2 block of the image: it fetches the 4x4 texels around the block from
// the frame and the background, forms the exact 3x3 window sums
//   fore = sum f.f, back = sum b.b, cross = sum f.b        (eq. 3; integers < 2^21)
// for the block's four pixels, and writes for each pixel the smallest integer M that switches
// it on with B1 and with B2 (0..13, 13 = never) into the four subset textures k, l, m, n
// (multiple render targets / image stores). Window pixels outside the image count as 0; pixels
// of the block outside the image get 13 so they never switch on.
//
// With SEGMENT_QUALIFIERS defined the pass instead runs per pixel and writes
// ivec4(fore, back, cross, 0) (diagnostics).
//
// With SEGMENT_NOISE defined it runs per pixel after the frame's mask, before the background
// adapts: the noise model's step (src/segment_internal.h; glcv_segment_cpu_noise_update in
// src/segment_cpu.c is the same in C). It writes the pixel's new level (R8UI) and noise factor
// (R32F).
//
// With SEGMENT_PACKED defined (compute mode's tiled MRF; GLCV_TILED, 16 x 8 invocations) the
// pass writes, per subset, R32UI words of four pixels' thresholds, one byte each:
// threshold with B1 << 4 | threshold with B2.

uniform glcv_sampler2D frame;
uniform glcv_sampler2D background;
uniform glcv_sampler2D noise; // R32F: each pixel's noise factor k >= 1 (the rule compares D^2 / k)
uniform ivec2 image_size;
#ifdef GLCV_LAYERED
uniform sampler2DArray rules; // one texel per layer: that stream's Ts, Odc, B1, B2
#define RULE texelFetch(rules, ivec3(0, 0, glcv_layer), 0)
#else
uniform vec4 rule; // Ts, Odc, B1, B2
#define RULE rule
#endif

ivec3 fetch_rgb(glcv_sampler2D s, ivec2 p)
{
    if (p.x < 0 || p.y < 0 || p.x >= image_size.x || p.y >= image_size.y)
        return ivec3(0);
    return ivec3(round(texelFetch(s, glcv_at(p), 0).rgb * 255.0));
}

// The decision rule solved for M (see src/segment_cpu.c, glcv_segment_m_min, for the same in
// double precision). D^2, the smallest eigenvalue of [[F, C], [C, B]] with F = fore + Odc,
// B = back + Odc, C = cross + Odc, is evaluated as 2 det / (F + B + sqrt((F - B)^2 + 4 C^2)):
// det = (fore back - cross^2) + Odc |f - b|^2 is a sum of two non-negative terms, and
// fore back - cross^2 (up to 2^42) is formed exactly from 11-bit halves in integers. D^2 is
// divided by the pixel's noise factor k.
float d2_of(int fore, int back, int cross, float odc, float k)
{
    int fh = fore >> 11, fl = fore & 2047;
    int bh = back >> 11, bl = back & 2047;
    int ch = cross >> 11, cl = cross & 2047;
    int hi = fh * bh - ch * ch;
    int mid = fh * bl + fl * bh - 2 * ch * cl;
    int lo = fl * bl - cl * cl;
    float det0 = float(hi) * 4194304.0 + float(mid) * 2048.0 + float(lo);
    float det = det0 + odc * float(fore + back - 2 * cross);
    float diff = float(fore - back);
    float c = float(cross) + odc;
    float den = float(fore + back) + 2.0 * odc + sqrt(diff * diff + 4.0 * c * c);
    return (den > 0.0 ? 2.0 * det / den : 0.0) / k;
}

uint m_min(float d2, float ts, float b)
{
    float x = (ts + 12.0 * b - d2) / (2.0 * b); // changed <=> M > x  (eq. 14 solved for M)
    if (x < 0.0)
        return 0u;
    if (x >= 12.0)
        return 13u;
    return uint(floor(x)) + 1u;
}

#if defined(SEGMENT_QUALIFIERS) || defined(SEGMENT_NOISE)

// The window sums of the pixel at `pos`: fore, back, cross.
ivec3 window_sums(ivec2 pos)
{
    int ff = 0, bb = 0, fb = 0;
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            ivec3 f = fetch_rgb(frame, pos + ivec2(dx, dy));
            ivec3 b = fetch_rgb(background, pos + ivec2(dx, dy));
            ff += f.r * f.r + f.g * f.g + f.b * f.b;
            bb += b.r * b.r + b.g * b.g + b.b * b.b;
            fb += f.r * b.r + f.g * b.g + f.b * b.b;
        }
    }
    return ivec3(ff, bb, fb);
}

#ifdef SEGMENT_QUALIFIERS

void glcv_pass(ivec2 pos)
{
    glcv_store0(ivec4(window_sums(pos), 0));
}

#else

uniform glcv_usampler2D level; // R8UI: each pixel's level
uniform glcv_sampler2D mask;   // R8: the frame's mask
uniform glcv_sampler2D levels; // RGBA32F, 256 x 1: level L's D^2 and factor k

bool mask_at(ivec2 p)
{
    return p.x >= 0 && p.y >= 0 && p.x < image_size.x && p.y < image_size.y && texelFetch(mask, glcv_at(p), 0).r > 0.5;
}

// Pixel p's next level and its factor k, from its window sums and whether the mask is foreground
// in its 3 x 3 neighbourhood.
uint next_level(ivec2 p, ivec3 sums, bool near, out float k)
{
    int l = int(texelFetch(level, glcv_at(p), 0).r);
    if (!near) {
        vec4 r = RULE;
        float d2 = d2_of(sums.x, sums.y, sums.z, r.y, 1.0);
        vec2 t = texelFetch(levels, glcv_at(ivec2(l, 0)), 0).rg;
        if (d2 > t.x && d2 <= r.x * t.y && l < 255)
            l++;
        else if (d2 < t.x && l > 0)
            l--;
    }
    k = texelFetch(levels, glcv_at(ivec2(l, 0)), 0).g;
    return uint(l);
}

#ifdef GLCV_COMPUTE

// Compute mode: an invocation per 2 x 2 block (as the threshold pass), its 4 x 4 neighbourhood
// fetched once, the four pixels written with image stores.
void glcv_pass(ivec2 pos)
{
    ivec2 origin = pos * 2 - 1;
    ivec3 dots[4][4]; // per texel: f.f, b.b, f.b
    bool on[4][4];
    for (int j = 0; j < 4; j++) {
        for (int i = 0; i < 4; i++) {
            ivec2 q = origin + ivec2(i, j);
            ivec3 f = fetch_rgb(frame, q), b = fetch_rgb(background, q);
            dots[j][i] = ivec3(f.r * f.r + f.g * f.g + f.b * f.b, b.r * b.r + b.g * b.g + b.b * b.b,
                               f.r * b.r + f.g * b.g + f.b * b.b);
            on[j][i] = mask_at(q);
        }
    }
    for (int s = 0; s < 4; s++) {
        int sx = s & 1, sy = s >> 1;
        ivec2 p = pos * 2 + ivec2(sx, sy);
        if (p.x >= image_size.x || p.y >= image_size.y)
            continue;
        ivec3 sums = ivec3(0);
        bool near = false;
        for (int j = sy; j < sy + 3; j++) {
            for (int i = sx; i < sx + 3; i++) {
                sums += dots[j][i];
                near = near || on[j][i];
            }
        }
        float k;
        uint l = next_level(p, sums, near, k);
        imageStore(glcv_image0, glcv_at(p), uvec4(l, 0u, 0u, 0u));
        imageStore(glcv_image1, glcv_at(p), vec4(k, 0.0, 0.0, 0.0));
    }
}

#else

void glcv_pass(ivec2 pos)
{
    bool near = false;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            near = near || mask_at(pos + ivec2(dx, dy));
    float k;
    uint l = next_level(pos, window_sums(pos), near, k);
    glcv_store0(uvec4(l, 0u, 0u, 0u));
    glcv_store1(vec4(k, 0.0, 0.0, 0.0));
}

#endif
#endif

#else

// The thresholds of the block at `pos` (pixels 2 pos + (sx, sy), subset s = sx + 2 sy), each
// B1 threshold << 4 | B2 threshold: per-texel dot products of the 4x4 neighbourhood, then row
// sums of 3, then windows.
uvec4 block_thresholds(ivec2 pos)
{
    ivec2 origin = pos * 2 - 1;
    ivec3 row_ff[4], row_bb[4], row_fb[4]; // .x: columns 0..2, .y: columns 1..3
    for (int j = 0; j < 4; j++) {
        int ff[4], bb[4], fb[4];
        for (int i = 0; i < 4; i++) {
            ivec3 f = fetch_rgb(frame, origin + ivec2(i, j));
            ivec3 b = fetch_rgb(background, origin + ivec2(i, j));
            ff[i] = f.r * f.r + f.g * f.g + f.b * f.b;
            bb[i] = b.r * b.r + b.g * b.g + b.b * b.b;
            fb[i] = f.r * b.r + f.g * b.g + f.b * b.b;
        }
        row_ff[j] = ivec3(ff[0] + ff[1] + ff[2], ff[1] + ff[2] + ff[3], 0);
        row_bb[j] = ivec3(bb[0] + bb[1] + bb[2], bb[1] + bb[2] + bb[3], 0);
        row_fb[j] = ivec3(fb[0] + fb[1] + fb[2], fb[1] + fb[2] + fb[3], 0);
    }
    uvec4 result;
    vec4 r = RULE;
    for (int s = 0; s < 4; s++) {
        int sx = s & 1, sy = s >> 1;
        ivec2 p = pos * 2 + ivec2(sx, sy);
        int fore = row_ff[sy][sx] + row_ff[sy + 1][sx] + row_ff[sy + 2][sx];
        int back = row_bb[sy][sx] + row_bb[sy + 1][sx] + row_bb[sy + 2][sx];
        int cross = row_fb[sy][sx] + row_fb[sy + 1][sx] + row_fb[sy + 2][sx];
        if (p.x >= image_size.x || p.y >= image_size.y) {
            result[s] = 0xDDu;
        } else {
            float d2 = d2_of(fore, back, cross, r.y, texelFetch(noise, glcv_at(p), 0).r);
            result[s] = (m_min(d2, r.x, r.z) << 4) | m_min(d2, r.x, r.w);
        }
    }
    return result;
}

#ifdef SEGMENT_PACKED

// Work group of 16 x 8 invocations (GLCV_TILED), one block each: per subset 4 words of 4 pixels
// across and 8 rows, assembled in shared memory.
shared uint s_words[4][8][4];

void glcv_pass(ivec2 group)
{
    ivec2 id = ivec2(gl_LocalInvocationID.xy);
    int tid = int(gl_LocalInvocationIndex);
    s_words[tid >> 5][(tid >> 2) & 7][tid & 3] = 0u;
    barrier();
    uvec4 t = block_thresholds(group * ivec2(16, 8) + id);
    for (int s = 0; s < 4; s++)
        atomicOr(s_words[s][id.y][id.x >> 2], t[s] << (8 * (id.x & 3)));
    barrier();
    int s = tid >> 5, r = (tid >> 2) & 7, c = tid & 3;
    ivec2 word = ivec2(group.x * 4 + c, group.y * 8 + r);
    if (word.x < glcv_region.z && word.y < glcv_region.w) {
        uvec4 v = uvec4(s_words[s][r][c]);
        if (s == 0) imageStore(glcv_image0, glcv_at(word), v);
        else if (s == 1) imageStore(glcv_image1, glcv_at(word), v);
        else if (s == 2) imageStore(glcv_image2, glcv_at(word), v);
        else imageStore(glcv_image3, glcv_at(word), v);
    }
}

#else

void glcv_pass(ivec2 pos)
{
    uvec4 t = block_thresholds(pos);
    glcv_store0(uvec4(t[0] >> 4, t[0] & 15u, 0u, 0u));
    glcv_store1(uvec4(t[1] >> 4, t[1] & 15u, 0u, 0u));
    glcv_store2(uvec4(t[2] >> 4, t[2] & 15u, 0u, 0u));
    glcv_store3(uvec4(t[3] >> 4, t[3] & 15u, 0u, 0u));
}

#endif
#endif
