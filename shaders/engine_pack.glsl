// The bytes a host image set has, from layers of a frames array (8 bits a channel), written on the
// GPU into a storage buffer: u_order.x..w name the source channel of a pixel's bytes (u_channels of
// them: 1 red, 3 RGB or BGR, 4 RGBA or BGRA), rows tightly packed, layer after layer, four bytes a
// word (byte 0 in the low bits, as the buffer holds them in memory). An invocation writes one word;
// bytes past the last pixel are zero.
uniform sampler2DArray u_src;
uniform ivec2 u_size;
uniform int u_layers;
uniform int u_channels;
uniform ivec4 u_order;
uniform int u_words;
layout(std430, binding = 0) writeonly buffer glcv_packed { uint packed_words[]; };

uint packed_byte(uint b)
{
    uint ch = uint(u_channels), plane = uint(u_size.x) * uint(u_size.y);
    uint px = b / ch, k = b - px * ch;
    uint layer = px / plane, r = px - layer * plane;
    if (layer >= uint(u_layers))
        return 0u;
    vec4 c = texelFetch(u_src, ivec3(int(r % uint(u_size.x)), int(r / uint(u_size.x)), int(layer)), 0);
    return uint(round(c[u_order[k]] * 255.0));
}

void glcv_pass(ivec2 group)
{
    uint w = (uint(group.y) * gl_NumWorkGroups.x + uint(group.x)) * uint(GLCV_LOCAL_X) + gl_LocalInvocationIndex;
    if (w >= uint(u_words))
        return;
    uint b = w * 4u;
    packed_words[w] = packed_byte(b) | packed_byte(b + 1u) << 8 | packed_byte(b + 2u) << 16 | packed_byte(b + 3u) << 24;
}
