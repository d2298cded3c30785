// Segmenter, final pass (Griesser 2005, section 4.6): the four subset masks back into one
// full-resolution R8 mask, 1.0 (255) for foreground.

uniform glcv_sampler2D mask_k; // (even x, even y)
uniform glcv_sampler2D mask_l; // (odd x, even y)
uniform glcv_sampler2D mask_m; // (even x, odd y)
uniform glcv_sampler2D mask_n; // (odd x, odd y)

void glcv_pass(ivec2 pos)
{
    ivec2 q = pos >> 1;
    int s = (pos.x & 1) + 2 * (pos.y & 1);
    float v;
    if (s == 0)
        v = texelFetch(mask_k, glcv_at(q), 0).r;
    else if (s == 1)
        v = texelFetch(mask_l, glcv_at(q), 0).r;
    else if (s == 2)
        v = texelFetch(mask_m, glcv_at(q), 0).r;
    else
        v = texelFetch(mask_n, glcv_at(q), 0).r;
    glcv_store0(vec4(v > 0.5 ? 1.0 : 0.0));
}
