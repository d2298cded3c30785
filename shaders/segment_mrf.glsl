// Segmenter, one MRF substep (Griesser 2005, sections 2.3, 2.6, 4.5): updates the pixels of one
// subset (x mod 2, y mod 2) = `subset`, all independent of each other, from their neighbours
// in the three other subsets. Masks are R8 textures holding 0 or 1, sampled bilinearly with a
// zero border: at the midpoints used here the filter returns exact halves and quarters, so
//   M = 2 (changed 4-neighbours) + (changed diagonal neighbours)
//     = 4 (h(x -+ 1/2, y) + v(x, y -+ 1/2) + d(x -+ 1/2, y -+ 1/2))
// takes three lookups instead of eight. The pixel switches on when M >= its stored threshold.

uniform glcv_usampler2D thresholds; // .r: threshold with B1, .g: with B2
uniform glcv_sampler2D h_mask;      // the subset of the horizontal neighbours
uniform glcv_sampler2D v_mask;      // the subset of the vertical neighbours
uniform glcv_sampler2D d_mask;      // the subset of the diagonal neighbours
uniform ivec2 subset;
uniform int param_set;         // 0: B1, 1: B2
uniform vec2 texel;            // 1 / subset texture size

void glcv_pass(ivec2 pos)
{
    vec2 c = vec2(pos) + 0.5;
    vec2 o = vec2(subset) - 0.5; // neighbours lie left/up for subset 0, right/down for subset 1
    float h = textureLod(h_mask, glcv_uv(vec2(c.x + o.x, c.y) * texel), 0.0).r;
    float v = textureLod(v_mask, glcv_uv(vec2(c.x, c.y + o.y) * texel), 0.0).r;
    float d = textureLod(d_mask, glcv_uv((c + o) * texel), 0.0).r;
    uint m = uint(round(4.0 * (h + v + d)));
    uvec2 t = texelFetch(thresholds, glcv_at(pos), 0).rg;
    uint m_min = param_set == 0 ? t.r : t.g;
    glcv_store0(vec4(m >= m_min ? 1.0 : 0.0));
}
