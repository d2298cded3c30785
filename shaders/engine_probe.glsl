// The engine's probe pass: a 3x3 neighbourhood sum over an RGBA8 texture, timed once as a
// fragment pass and once as a compute pass to choose the engine mode (auto).
uniform sampler2D source;

void glcv_pass(ivec2 pos)
{
    ivec2 size = textureSize(source, 0);
    vec4 sum = vec4(0.0);
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            sum += texelFetch(source, clamp(pos + ivec2(dx, dy), ivec2(0), size - 1), 0);
    glcv_store0(sum / 9.0);
}
