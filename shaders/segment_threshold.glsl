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
// With SEGMENT_PACKED defined (compute mode's tiled MRF; GLCV_TILED) the pass writes, per subset,
// R32UI words holding four pixels' thresholds, one byte each: threshold with B1 << 4 | with B2.

uniform sampler2D frame;
uniform sampler2D background;
uniform ivec2 image_size;
uniform vec4 rule; // Ts, Odc, B1, B2

ivec3 fetch_rgb(sampler2D s, ivec2 p)
{
    if (p.x < 0 || p.y < 0 || p.x >= image_size.x || p.y >= image_size.y)
        return ivec3(0);
    return ivec3(round(texelFetch(s, p, 0).rgb * 255.0));
}

// The decision rule solved for M (see src/segment_cpu.c, glcv_segment_m_min, for the same in
// double precision). D^2, the smallest eigenvalue of [[F, C], [C, B]] with F = fore + Odc,
// B = back + Odc, C = cross + Odc, is evaluated as 2 det / (F + B + sqrt((F - B)^2 + 4 C^2)):
// det = (fore back - cross^2) + Odc |f - b|^2 is a sum of two non-negative terms, and
// fore back - cross^2 (up to 2^42) is formed exactly from 11-bit halves in integers.
uint m_min(int fore, int back, int cross, float ts, float odc, float b)
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
    float d2 = den > 0.0 ? 2.0 * det / den : 0.0;
    float x = (ts + 12.0 * b - d2) / (2.0 * b); // changed <=> M > x  (eq. 14 solved for M)
    if (x < 0.0)
        return 0u;
    if (x >= 12.0)
        return 13u;
    return uint(floor(x)) + 1u;
}

#ifdef SEGMENT_QUALIFIERS

void glcv_pass(ivec2 pos)
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
    glcv_store0(ivec4(ff, bb, fb, 0));
}

#elif defined(SEGMENT_PACKED)

// Work group of 16 x 4 invocations (GLCV_TILED): 16 words of 4 subset pixels across and 4 subset
// rows, i.e. 128 x 8 image pixels. Each frame and background texel of the region (plus a border
// of one) is fetched once into shared memory as its three dot products; then column sums of
// three rows, then each invocation forms the windows of its 16 pixels.
#define GX 16
#define GY 4
#define TW (GX * 8 + 2)
#define TH (GY * 2 + 2)

shared int s_ff[TH * TW], s_bb[TH * TW], s_fb[TH * TW]; // dot products per texel
shared int c_ff[2 * GY * TW], c_bb[2 * GY * TW], c_fb[2 * GY * TW]; // column sums of 3 rows

void glcv_pass(ivec2 group)
{
    int tid = int(gl_LocalInvocationIndex);
    ivec2 origin = ivec2(group.x * GX * 8 - 1, group.y * GY * 2 - 1);
    for (int i = tid; i < TH * TW; i += GX * GY) {
        ivec2 p = origin + ivec2(i % TW, i / TW);
        ivec3 f = fetch_rgb(frame, p);
        ivec3 b = fetch_rgb(background, p);
        s_ff[i] = f.r * f.r + f.g * f.g + f.b * f.b;
        s_bb[i] = b.r * b.r + b.g * b.g + b.b * b.b;
        s_fb[i] = f.r * b.r + f.g * b.g + f.b * b.b;
    }
    barrier();
    for (int i = tid; i < 2 * GY * TW; i += GX * GY) {
        c_ff[i] = s_ff[i] + s_ff[i + TW] + s_ff[i + 2 * TW];
        c_bb[i] = s_bb[i] + s_bb[i + TW] + s_bb[i + 2 * TW];
        c_fb[i] = s_fb[i] + s_fb[i + TW] + s_fb[i + 2 * TW];
    }
    barrier();

    int wx = tid % GX, wy = tid / GX;
    ivec2 word = ivec2(group.x * GX + wx, group.y * GY + wy);
    uint words[4] = uint[4](0u, 0u, 0u, 0u);
    for (int c = 0; c < 4; c++) {
        for (int s = 0; s < 4; s++) {
            int sx = s & 1, sy = s >> 1;
            int j = wx * 8 + 2 * c + sx + 1; // the pixel's column in the region
            int row = (2 * wy + sy) * TW;     // column sums of the pixel's three rows
            int k = row + j;
            ivec3 q = ivec3(c_ff[k - 1] + c_ff[k] + c_ff[k + 1], c_bb[k - 1] + c_bb[k] + c_bb[k + 1],
                            c_fb[k - 1] + c_fb[k] + c_fb[k + 1]);
            ivec2 p = origin + ivec2(j, 2 * wy + sy + 1);
            uint t = 0xDDu;
            if (p.x < image_size.x && p.y < image_size.y)
                t = (m_min(q.x, q.y, q.z, rule.x, rule.y, rule.z) << 4) |
                    m_min(q.x, q.y, q.z, rule.x, rule.y, rule.w);
            words[s] |= t << (8 * c);
        }
    }
    if (word.x < glcv_region.z && word.y < glcv_region.w) {
        imageStore(glcv_image0, word, uvec4(words[0]));
        imageStore(glcv_image1, word, uvec4(words[1]));
        imageStore(glcv_image2, word, uvec4(words[2]));
        imageStore(glcv_image3, word, uvec4(words[3]));
    }
}

#else

void glcv_pass(ivec2 pos)
{
    // Per-texel dot products of the 4x4 neighbourhood, then row sums of 3.
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
    uvec4 result[4];
    for (int s = 0; s < 4; s++) {
        int sx = s & 1, sy = s >> 1;
        ivec2 p = pos * 2 + ivec2(sx, sy);
        int fore = row_ff[sy][sx] + row_ff[sy + 1][sx] + row_ff[sy + 2][sx];
        int back = row_bb[sy][sx] + row_bb[sy + 1][sx] + row_bb[sy + 2][sx];
        int cross = row_fb[sy][sx] + row_fb[sy + 1][sx] + row_fb[sy + 2][sx];
        if (p.x >= image_size.x || p.y >= image_size.y)
            result[s] = uvec4(13u, 13u, 0u, 0u);
        else
            result[s] = uvec4(m_min(fore, back, cross, rule.x, rule.y, rule.z),
                              m_min(fore, back, cross, rule.x, rule.y, rule.w), 0u, 0u);
    }
    glcv_store0(result[0]);
    glcv_store1(result[1]);
    glcv_store2(result[2]);
    glcv_store3(result[3]);
}

#endif
