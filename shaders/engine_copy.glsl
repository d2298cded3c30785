// Copies a colour texture into an RGBA8 texture, each channel quantised to 0..255.
uniform sampler2D source;

void glcv_pass(ivec2 pos)
{
    glcv_store0(vec4(round(texelFetch(source, pos, 0).rgb * 255.0) / 255.0, 1.0));
}
