// Background subtraction (VSAM after Collins et al.; frame differencing), one layer per stream.
// The rule of src/bgsub_internal.h (glcv_bgsub_pixel), in the same integer arithmetic, over
// "lanes": the colour channels of one pixel (BGSUB_LANES 3), one gray pixel (BGSUB_LANES 1), or
// four gray pixels of one texel (BGSUB_PACKED). Defines:
//   BGSUB_METHOD  1 VSAM, 2 two-frame difference, 3 three-frame difference
//   BGSUB_STAGE   0 everything in one pass (mask; VSAM also B and T, as three outputs);
//                 the chain: 1 moving pixels, 2 foreground mask, 3 background, 4 threshold
//   BGSUB_BPP     bytes per pixel of the raw frames (1, 3 or 4), BGSUB_BGR when blue comes first
//   BGSUB_LANES   1 (gray: luma of colour frames) or 3 (colour)
//   BGSUB_PACKED  gray frames, 4 pixels per RGBA8UI texel (the outputs likewise)

uniform usampler2DArray u_cur; // frames: raw bytes, R8UI width * BGSUB_BPP (RGBA8UI when packed)
uniform usampler2DArray u_p1;
uniform usampler2DArray u_p2;
uniform usampler2DArray u_bg;     // B, 8.8 fixed point
uniform usampler2DArray u_th;     // T, 8.8 fixed point
uniform usampler2DArray u_moving; // the chain's moving pixels (0/1 per lane)
uniform int u_history; // frames before the current one (0, 1, 2 = two or more)
uniform int u_init;    // VSAM: B and T start from this frame (B = I, T = floor)
uniform int u_learned; // frame differences: T from u_th (else the floor)
uniform int u_a;       // alpha * 65536
uniform int u_c;       // c * 256
uniform int u_f;       // min_threshold * 256

#if defined(BGSUB_PACKED)
const uvec4 LANE = uvec4(1u, 1u, 1u, 1u);
#elif BGSUB_LANES == 3
const uvec4 LANE = uvec4(1u, 1u, 1u, 0u);
#else
const uvec4 LANE = uvec4(1u, 0u, 0u, 0u);
#endif

ivec3 texel() { return ivec3(glcv_pos, glcv_layer); }

uvec4 frame(usampler2DArray s)
{
#if defined(BGSUB_PACKED)
    return texelFetch(s, texel(), 0);
#elif BGSUB_BPP == 1
    return uvec4(texelFetch(s, texel(), 0).r, 0u, 0u, 0u);
#else
    int x = glcv_pos.x * BGSUB_BPP;
    uint r = texelFetch(s, ivec3(x, glcv_pos.y, glcv_layer), 0).r;
    uint g = texelFetch(s, ivec3(x + 1, glcv_pos.y, glcv_layer), 0).r;
    uint b = texelFetch(s, ivec3(x + 2, glcv_pos.y, glcv_layer), 0).r;
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
#endif
}

uvec4 absdiff(uvec4 a, uvec4 b) { return max(a, b) - min(a, b); }

// Per-lane decisions (0/1) of one pixel: in colour, a pixel decides where any channel does.
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

// The current B and T (VSAM's first frame: the frame and the floor).
void state(uvec4 cur, out uvec4 bg, out uvec4 th)
{
    uvec4 f = uvec4(uint(u_f)) * LANE;
    if (u_init != 0) {
        bg = (cur << 8u) & LANE * 0xFFFFu;
        th = f;
    } else {
        bg = texelFetch(u_bg, texel(), 0) & LANE * 0xFFFFu;
        th = texelFetch(u_th, texel(), 0) & LANE * 0xFFFFu;
    }
}

uvec4 moving_lanes(uvec4 cur, uvec4 th)
{
    if (u_history < 2)
        return uvec4(0u);
    uvec4 d1 = absdiff(cur, frame(u_p1)) << 8u;
    uvec4 d2 = absdiff(cur, frame(u_p2)) << 8u;
    return combine(uvec4(greaterThan(d1, th)) & uvec4(greaterThan(d2, th)));
}

uvec4 foreground_lanes(uvec4 cur, uvec4 bg, uvec4 th)
{
    return combine(uvec4(greaterThan(absdiff(cur << 8u, bg), th)));
}

// B and T after the frame where `keep` is 0 (neither moving nor foreground).
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
    uvec4 nt = max(uvec4(uint(u_f)), (a * th + (65536u - a) * cd + 32768u) >> 16u) & LANE * 0xFFFFu;
    return keep * th + (1u - keep) * nt;
}

// The mask as stored: one R8 value per pixel, or four (RGBA8) when packed.
vec4 mask_value(uvec4 m)
{
#if defined(BGSUB_PACKED)
    return vec4(m);
#else
    return vec4(float(m.x), 0.0, 0.0, 1.0);
#endif
}

// The chain's moving pixels as stored (R8UI, or RGBA8UI packed) and read back for all lanes.
uvec4 stored_moving()
{
    uvec4 m = texelFetch(u_moving, texel(), 0);
#if defined(BGSUB_PACKED)
    return m;
#else
    return uvec4(m.x) & LANE;
#endif
}

void glcv_pass(ivec2 pos)
{
    uvec4 cur = frame(u_cur);
#if BGSUB_METHOD != 1
    uvec4 th = uvec4(uint(u_f)) * LANE;
    if (u_learned != 0)
        th = texelFetch(u_th, texel(), 0) & LANE * 0xFFFFu;
    uvec4 d1 = absdiff(cur, frame(u_p1)) << 8u;
#if BGSUB_METHOD == 2
    uvec4 m = u_history >= 1 ? combine(uvec4(greaterThan(d1, th))) : uvec4(0u);
#else
    uvec4 m = moving_lanes(cur, th);
#endif
    glcv_store0(mask_value(m));
#else
    uvec4 bg, th;
    state(cur, bg, th);
#if BGSUB_STAGE == 0
    uvec4 moving = moving_lanes(cur, th);
    uvec4 fg = foreground_lanes(cur, bg, th);
    uvec4 keep = (moving | fg) & LANE;
    glcv_store0(mask_value(fg));
    glcv_store1(next_background(cur, bg, keep));
    glcv_store2(next_threshold(cur, bg, th, keep));
#elif BGSUB_STAGE == 1
    glcv_store0(moving_lanes(cur, th));
#elif BGSUB_STAGE == 2
    glcv_store0(mask_value(foreground_lanes(cur, bg, th)));
#elif BGSUB_STAGE == 3
    glcv_store0(next_background(cur, bg, (stored_moving() | foreground_lanes(cur, bg, th)) & LANE));
#else
    glcv_store0(next_threshold(cur, bg, th, (stored_moving() | foreground_lanes(cur, bg, th)) & LANE));
#endif
#endif
}
