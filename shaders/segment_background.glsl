// Segmenter, background passes. Colours are kept as integers 0..255 (in float textures while
// learning or adapting) so the window sums stay exact.
//
// SEGMENT_LEARN_ADD:  sum' = sum + frame                        (RGBA32F)
// SEGMENT_LEARN_END:  background = round half up (sum / count)  (RGBA8 and RGBA32F)
// SEGMENT_ADAPT_INIT: background_f = background                 (RGBA32F)
// SEGMENT_ADAPT:      where the mask is background,
//                     bg_f' = bg_f + rate (frame - bg_f), background = round(bg_f')  (VSAM rule)

uniform glcv_sampler2D frame;
uniform glcv_sampler2D sum;
uniform glcv_sampler2D background_f;
uniform glcv_sampler2D background;
uniform glcv_sampler2D mask;
uniform int count;
uniform float rate;

vec3 rgb255(glcv_sampler2D s, ivec2 p)
{
    return round(texelFetch(s, glcv_at(p), 0).rgb * 255.0);
}

void glcv_pass(ivec2 pos)
{
#if defined(SEGMENT_LEARN_ADD)
    glcv_store0(vec4(texelFetch(sum, glcv_at(pos), 0).rgb + rgb255(frame, pos), 0.0));
#elif defined(SEGMENT_LEARN_END)
    // Integer arithmetic: round half up of sum / count, exactly as the CPU engine does.
    ivec3 s = ivec3(texelFetch(sum, glcv_at(pos), 0).rgb);
    vec3 mean = vec3((2 * s + count) / (2 * count));
    glcv_store0(vec4(mean / 255.0, 1.0));
    glcv_store1(vec4(mean, 0.0));
#elif defined(SEGMENT_ADAPT_INIT)
    glcv_store0(vec4(rgb255(background, pos), 0.0));
#elif defined(SEGMENT_ADAPT)
    vec3 b = texelFetch(background_f, glcv_at(pos), 0).rgb;
    if (texelFetch(mask, glcv_at(pos), 0).r < 0.5)
        b = b + rate * (rgb255(frame, pos) - b);
    glcv_store0(vec4(b, 0.0));
    glcv_store1(vec4(floor(b + 0.5) / 255.0, 1.0));
#endif
}
