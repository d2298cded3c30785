// The luma of a caller's frames (glcv_bgsub_frames_texture on an object of GRAY8 frames), one layer
// per stream: Y = (77 R + 150 G + 29 B + 128) >> 8 of the 8-bit colours, the conversion the host
// makes of colour frames for such an object (glcv_image_convert), into an R8 array whose bytes are
// then staged as the host's GRAY8 frames would be.
uniform glcv_sampler2D u_frames;

void glcv_pass(ivec2 pos)
{
    uvec3 c = uvec3(round(texelFetch(u_frames, glcv_at(pos), 0).rgb * 255.0));
    uint y = (77u * c.r + 150u * c.g + 29u * c.b + 128u) >> 8;
    glcv_store0(vec4(float(y) / 255.0, 0.0, 0.0, 1.0));
}
