// Copies a colour texture into an RGBA8 one, each channel quantised to 0..255, alpha 1. With
// GLCV_COPY_FROM_ARRAY the source is an array: its layer glcv_layer (every layer of a layered pass;
// layer 0 otherwise).
#ifdef GLCV_COPY_FROM_ARRAY
uniform sampler2DArray source;
#define COPY_AT(p) ivec3(p, glcv_layer)
#else
uniform glcv_sampler2D source;
#define COPY_AT(p) glcv_at(p)
#endif

void glcv_pass(ivec2 pos)
{
    glcv_store0(vec4(round(texelFetch(source, COPY_AT(pos), 0).rgb * 255.0) / 255.0, 1.0));
}
