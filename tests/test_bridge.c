/* The CUDA-GL interop bridge, where a GL context shares a CUDA device: the pixel-buffer hand-over
 * of a frame and a mask (exact bytes, every frame's new content), registered textures mapped
 * together in one call (read-only, through arrays and texture objects) and written by CUDA
 * (write-discard), the register/unregister lifecycle across reallocations, and the cached
 * registrations of caller textures (map_textures). Exits 77 without
 * CUDA, without a GL context, or when the context is not on a CUDA device. */
#include "testutil.h"

#if GLCV_HAVE_CUDA
#include <epoxy/gl.h>

#include "cuda_bridge.h"
#include "cuda_texture.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

enum { W = 333, H = 201 }; /* odd sizes: no row is a multiple of 4 bytes in R8 */

static void pattern(uint8_t *px, int w, int h, int channels, int frame)
{
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            for (int c = 0; c < channels; c++)
                px[((size_t)y * (size_t)w + (size_t)x) * (size_t)channels + (size_t)c] =
                    (uint8_t)(x * 7 + y * 13 + c * 61 + frame * 29);
}

static unsigned long long host_sum(const uint8_t *px, size_t n)
{
    unsigned long long s = 0;
    for (size_t i = 0; i < n; i++)
        s += px[i];
    return s;
}

#define CHECK_CU(call) CHECK((call) == cudaSuccess, "%s: %s", #call, cudaGetErrorString(cudaGetLastError()))

/* The sum the sum kernels give: of every channel byte of the W x H texture `tex` (1 or 4 channels)
 * when it is not 0, else of every byte of H rows of W * channels bytes from `ptr`, `pitch` apart,
 * in device memory. */
static unsigned long long device_sum(cudaTextureObject_t tex, const uint8_t *ptr, size_t pitch, int channels,
                                     cudaStream_t stream, unsigned long long *d_sum)
{
    unsigned long long sum = 0;
    CHECK_CU(cudaMemsetAsync(d_sum, 0, sizeof *d_sum, stream));
    if (tex) {
        glcv_cuda_sum_texture_params tp = {tex, W, H, channels, d_sum};
        CHECK(glcv_cuda_sum_texture(tp, stream) == 0, "texture sum kernel");
    } else {
        glcv_cuda_sum_linear_params sp = {ptr, pitch, W * channels, H, d_sum};
        CHECK(glcv_cuda_sum_linear(sp, stream) == 0, "sum kernel");
    }
    CHECK_CU(cudaMemcpyAsync(&sum, d_sum, sizeof sum, cudaMemcpyDeviceToHost, stream));
    CHECK_CU(cudaStreamSynchronize(stream));
    return sum;
}

static void test_pixel_buffer(cudaStream_t stream, unsigned long long *d_sum)
{
    glcv_logger lg = test_logger();
    glcv_cuda_bridge *bridge = NULL;
    CHECK_OK(glcv_cuda_bridge_create(W, H, &lg, &bridge));
    if (!bridge)
        return;
    uint8_t *rgba = malloc((size_t)W * H * 4), *mask = malloc((size_t)W * H), *back = malloc((size_t)W * H * 4);
    GLuint frame_tex = test_texture_make(GL_RGBA8, GL_RGBA, W, H, NULL);
    GLuint mask_tex = test_texture_make(GL_R8, GL_RED, W, H, NULL);
    int bad_frames = 0;
    for (int f = 0; f < 20; f++) {
        pattern(rgba, W, H, 4, f);
        pattern(mask, W, H, 1, 3 * f);
        test_texture_upload(frame_tex, GL_RGBA8, GL_RGBA, W, H, rgba, 0);
        test_texture_upload(mask_tex, GL_R8, GL_RED, W, H, mask, 0);
        glcv_cuda_frame fr;
        glcv_status st = glcv_cuda_bridge_map_frame(bridge, frame_tex, f % 2 ? mask_tex : 0, stream, &fr);
        CHECK_OK(st);
        if (st != GLCV_OK)
            break;
        CHECK(fr.rgba_pitch == (size_t)W * 4 && (f % 2 ? fr.mask != NULL : fr.mask == NULL), "frame layout");
        unsigned long long sum = device_sum(0, fr.rgba, fr.rgba_pitch, 4, stream, d_sum);
        CHECK_CU(cudaMemcpy2DAsync(back, (size_t)W * 4, fr.rgba, fr.rgba_pitch, (size_t)W * 4, H,
                                   cudaMemcpyDeviceToHost, stream));
        CHECK_CU(cudaStreamSynchronize(stream));
        int ok = memcmp(back, rgba, (size_t)W * H * 4) == 0 && sum == host_sum(rgba, (size_t)W * H * 4);
        if (f % 2) {
            CHECK_CU(cudaMemcpy2DAsync(back, W, fr.mask, fr.mask_pitch, W, H, cudaMemcpyDeviceToHost, stream));
            CHECK_CU(cudaStreamSynchronize(stream));
            ok = ok && memcmp(back, mask, (size_t)W * H) == 0;
        }
        bad_frames += !ok;
        CHECK_OK(glcv_cuda_bridge_unmap(bridge, stream));
    }
    CHECK(bad_frames == 0, "pixel buffer: %d of 20 frames arrived wrong in CUDA", bad_frames);
    printf("pixel buffer hand-over: 20 frames, %d wrong\n", bad_frames);
    /* a format that cannot be read through a framebuffer, and a wrong size */
    glcv_cuda_frame fr;
    GLuint small = test_texture_make(GL_RGBA8, GL_RGBA, W - 1, H, NULL);
    CHECK_STATUS(glcv_cuda_bridge_map_frame(bridge, small, 0, stream, &fr), GLCV_ERROR_SIZE_MISMATCH);
    CHECK_STATUS(glcv_cuda_bridge_map_frame(bridge, 0, 0, stream, &fr), GLCV_ERROR_INVALID_ARGUMENT);
    glDeleteTextures(1, &small);
    glDeleteTextures(1, &frame_tex);
    glDeleteTextures(1, &mask_tex);
    glcv_cuda_bridge_destroy(&bridge);
    CHECK(bridge == NULL, "destroy sets NULL");
    free(rgba);
    free(mask);
    free(back);
}

static void test_images(cudaStream_t stream, unsigned long long *d_sum)
{
    glcv_logger lg = test_logger();
    uint8_t *rgba = malloc((size_t)W * H * 4), *r8 = malloc((size_t)W * H), *back = malloc((size_t)W * H * 4);
    pattern(rgba, W, H, 4, 1);
    pattern(r8, W, H, 1, 2);
    GLuint t_rgba = test_texture_make(GL_RGBA8, GL_RGBA, W, H, rgba);
    GLuint t_r8 = test_texture_make(GL_R8, GL_RED, W, H, r8);
    GLuint t_out = test_texture_make(GL_RGBA8, GL_RGBA, W, H, NULL);
    glcv_cuda_image in_rgba, in_r8, out;
    CHECK_OK(glcv_cuda_image_register(&in_rgba, t_rgba, 0, &lg));
    CHECK_OK(glcv_cuda_image_register(&in_r8, t_r8, 0, &lg));
    CHECK_OK(glcv_cuda_image_register(&out, t_out, 1, &lg));
    glcv_cuda_image *all[3] = {&in_rgba, &in_r8, &out};
    CHECK_OK(glcv_cuda_images_map(all, 3, stream, &lg));
    if (in_rgba.array && in_r8.array && out.array) {
        CHECK_CU(cudaMemcpy2DFromArrayAsync(back, (size_t)W * 4, in_rgba.array, 0, 0, (size_t)W * 4, H,
                                            cudaMemcpyDeviceToHost, stream));
        CHECK_CU(cudaStreamSynchronize(stream));
        CHECK(memcmp(back, rgba, (size_t)W * H * 4) == 0, "RGBA8 texture: the mapped array differs");
        CHECK_CU(cudaMemcpy2DFromArrayAsync(back, W, in_r8.array, 0, 0, W, H, cudaMemcpyDeviceToHost, stream));
        CHECK_CU(cudaStreamSynchronize(stream));
        CHECK(memcmp(back, r8, (size_t)W * H) == 0, "R8 texture: the mapped array differs");
        /* texture objects over the arrays */
        cudaTextureObject_t tex4 = cuda_texture_object(in_rgba.array), tex1 = cuda_texture_object(in_r8.array);
        CHECK(tex4 && tex1, "cudaCreateTextureObject");
        unsigned long long sum = device_sum(tex4, NULL, 0, 4, stream, d_sum);
        CHECK(sum == host_sum(rgba, (size_t)W * H * 4), "RGBA8 texture object sum %llu, expected %llu", sum,
              host_sum(rgba, (size_t)W * H * 4));
        sum = device_sum(tex1, NULL, 0, 1, stream, d_sum);
        CHECK(sum == host_sum(r8, (size_t)W * H), "R8 texture object sum %llu, expected %llu", sum,
              host_sum(r8, (size_t)W * H));
        cudaDestroyTextureObject(tex4);
        cudaDestroyTextureObject(tex1);
        /* CUDA writes the output texture */
        pattern(rgba, W, H, 4, 9);
        CHECK_CU(cudaMemcpy2DToArrayAsync(out.array, 0, 0, rgba, (size_t)W * 4, (size_t)W * 4, H,
                                          cudaMemcpyHostToDevice, stream));
    }
    CHECK_OK(glcv_cuda_images_unmap(all, 3, stream, &lg));
    /* GL sees what CUDA wrote */
    GLuint fbo = 0;
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, t_out, 0);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, W, H, GL_RGBA, GL_UNSIGNED_BYTE, back);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &fbo);
    CHECK(memcmp(back, rgba, (size_t)W * H * 4) == 0, "write-discard: GL does not see what CUDA wrote");
    /* unregister before deleting; a reallocated texture is registered again */
    CHECK_OK(glcv_cuda_image_unregister(&in_rgba, &lg));
    CHECK_OK(glcv_cuda_image_unregister(&in_r8, &lg));
    CHECK_OK(glcv_cuda_image_unregister(&out, &lg));
    glBindTexture(GL_TEXTURE_2D, t_rgba);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, W / 2, H / 2, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
    glBindTexture(GL_TEXTURE_2D, 0);
    CHECK_OK(glcv_cuda_image_register(&in_rgba, t_rgba, 0, &lg));
    CHECK(in_rgba.width == W / 2 && in_rgba.height == H / 2, "re-registered at %dx%d", in_rgba.width, in_rgba.height);
    glcv_cuda_image *one[1] = {&in_rgba};
    CHECK_OK(glcv_cuda_images_map(one, 1, stream, &lg));
    CHECK_OK(glcv_cuda_images_unmap(one, 1, stream, &lg));
    CHECK_OK(glcv_cuda_image_unregister(&in_rgba, &lg));
    glDeleteTextures(1, &t_rgba);
    glDeleteTextures(1, &t_r8);
    glDeleteTextures(1, &t_out);
    CHECK(glGetError() == GL_NO_ERROR, "GL error");
    free(rgba);
    free(r8);
    free(back);
}

/* The registered-texture hand-over (map_textures): a caller's RGBA8 and R8 textures registered
 * once and read through texture objects, new content every frame, a re-specification with
 * another size (an error; the registration goes, and comes back at the bridge's size), the
 * fallback for another format, forget, and destroy with registrations left. */
static void test_map_textures(cudaStream_t stream, unsigned long long *d_sum)
{
    glcv_logger lg = test_logger();
    glcv_cuda_bridge *bridge = NULL;
    CHECK_OK(glcv_cuda_bridge_create_for_textures(W, H, &lg, &bridge));
    uint8_t *rgba = malloc((size_t)W * H * 4), *mask = malloc((size_t)W * H);
    if (!bridge || !rgba || !mask)
        return;
    GLuint frame_tex = test_texture_make(GL_RGBA8, GL_RGBA, W, H, NULL);
    GLuint mask_tex = test_texture_make(GL_R8, GL_RED, W, H, NULL);
    glcv_cuda_bridge_stats bs;
    int bad = 0;
    for (int f = 0; f < 8; f++) {
        pattern(rgba, W, H, 4, f);
        pattern(mask, W, H, 1, 5 * f);
        int respec = f == 4; /* frame 4: forgotten, another size, then the bridge's size again */
        if (respec) {
            /* GL refuses to re-specify a texture registered with CUDA (seen on NVIDIA 580) */
            while (glGetError() != GL_NO_ERROR) {
            }
            test_texture_upload(frame_tex, GL_RGBA8, GL_RGBA, W + 3, H, NULL, 1);
            GLenum refused = glGetError();
            printf("re-specifying a registered texture: GL error 0x%04x\n", (unsigned)refused);
            CHECK_OK(glcv_cuda_bridge_forget(bridge, frame_tex));
            test_texture_upload(frame_tex, GL_RGBA8, GL_RGBA, W + 3, H, NULL, 1);
            CHECK(glGetError() == GL_NO_ERROR, "re-specifying a forgotten texture: GL error");
            glcv_cuda_frame fr;
            CHECK_STATUS(glcv_cuda_bridge_map_textures(bridge, frame_tex, mask_tex, stream, &fr),
                         GLCV_ERROR_SIZE_MISMATCH);
            glcv_cuda_bridge_get_stats(bridge, &bs);
            CHECK(bs.registered == 1, "after a size change %d registered, expected 1", bs.registered);
        }
        /* after a re-specification at another size, back at the bridge's */
        test_texture_upload(frame_tex, GL_RGBA8, GL_RGBA, W, H, rgba, respec);
        test_texture_upload(mask_tex, GL_R8, GL_RED, W, H, mask, 0);
        glcv_cuda_frame fr;
        glcv_status st = glcv_cuda_bridge_map_textures(bridge, frame_tex, mask_tex, stream, &fr);
        CHECK_OK(st);
        if (st != GLCV_OK)
            break;
        CHECK(fr.rgba_texture && fr.mask_texture && fr.mask_channels == 1 && !fr.rgba && !fr.mask,
              "frame %d: not handed over as texture objects", f);
        if (fr.rgba_texture && fr.mask_texture) {
            unsigned long long s4 = device_sum(fr.rgba_texture, NULL, 0, 4, stream, d_sum);
            unsigned long long s1 = device_sum(fr.mask_texture, NULL, 0, 1, stream, d_sum);
            bad += s4 != host_sum(rgba, (size_t)W * H * 4) || s1 != host_sum(mask, (size_t)W * H);
        }
        CHECK_OK(glcv_cuda_bridge_unmap(bridge, stream));
        glcv_cuda_bridge_get_stats(bridge, &bs);
        CHECK(bs.direct == 1 && bs.registered == 2 && bs.registrations == (f < 4 ? 2 : 3),
              "frame %d: direct %d, registered %d, registrations %d", f, bs.direct, bs.registered,
              bs.registrations);
    }
    CHECK(bad == 0, "registered textures: %d of 8 frames summed wrong in CUDA", bad);
    printf("registered-texture hand-over: 8 frames, %d wrong; %d registrations, %d texture objects\n", bad,
           bs.registrations, bs.texture_objects);
    /* another format: the pixel buffer */
    GLuint rgb_tex = test_texture_make(GL_RGB8, GL_RGB, W, H, NULL);
    glcv_cuda_frame fr;
    CHECK_OK(glcv_cuda_bridge_map_textures(bridge, rgb_tex, mask_tex, stream, &fr));
    CHECK(fr.rgba && fr.mask && !fr.rgba_texture, "RGB8: not the pixel buffer");
    CHECK_OK(glcv_cuda_bridge_unmap(bridge, stream));
    glcv_cuda_bridge_get_stats(bridge, &bs);
    CHECK(bs.direct == 0 && bs.registered == 2, "RGB8: direct %d, registered %d", bs.direct, bs.registered);
    /* forget, then delete; destroy drops the rest */
    CHECK_OK(glcv_cuda_bridge_forget(bridge, frame_tex));
    CHECK_OK(glcv_cuda_bridge_forget(bridge, frame_tex));
    glcv_cuda_bridge_get_stats(bridge, &bs);
    CHECK(bs.registered == 1, "after forget: %d registered", bs.registered);
    glDeleteTextures(1, &frame_tex);
    /* what happens when a registered texture is deleted without being forgotten and GL gives its
     * name to a new one (reported, not checked: the API says to forget first) */
    {
        GLuint old_name = mask_tex;
        glDeleteTextures(1, &mask_tex);
        pattern(mask, W, H, 1, 77);
        mask_tex = test_texture_make(GL_R8, GL_RED, W, H, mask);
        GLuint frame2 = test_texture_make(GL_RGBA8, GL_RGBA, W, H, rgba);
        glcv_status st = glcv_cuda_bridge_map_textures(bridge, frame2, mask_tex, stream, &fr);
        unsigned long long s1 = 0;
        if (st == GLCV_OK && fr.mask_texture)
            s1 = device_sum(fr.mask_texture, NULL, 0, 1, stream, d_sum);
        else if (st == GLCV_OK && fr.mask)
            s1 = device_sum(0, fr.mask, fr.mask_pitch, 1, stream, d_sum);
        if (st == GLCV_OK)
            glcv_cuda_bridge_unmap(bridge, stream);
        printf("deleted without forget, name %s (%u, %u): map %s, %s\n", old_name == mask_tex ? "reused" : "not reused",
               old_name, mask_tex, glcv_status_string(st),
               st != GLCV_OK ? "-" : s1 == host_sum(mask, (size_t)W * H) ? "new content" : "STALE content");
        CHECK_OK(glcv_cuda_bridge_forget(bridge, frame2));
        glDeleteTextures(1, &frame2);
        (void)cudaGetLastError();
        while (glGetError() != GL_NO_ERROR) {
        }
    }
    glcv_cuda_bridge_destroy(&bridge);
    glDeleteTextures(1, &mask_tex);
    glDeleteTextures(1, &rgb_tex);
    CHECK(glGetError() == GL_NO_ERROR, "GL error");
    free(rgba);
    free(mask);
}

/* Layered: an R8 texture array of streams handed over with one registration and one map per set,
 * every layer's bytes as GL wrote them, set after set; then the masks of a bgsub object of several
 * streams, the same way, against the masks it reads back. */
static void test_layers(cudaStream_t stream, unsigned long long *d_sum)
{
    glcv_logger lg = test_logger();
    enum { LAYERS = 5 };
    uint8_t *px = malloc((size_t)W * H * LAYERS);
    GLuint tex = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D_ARRAY, tex);
    glTexImage3D(GL_TEXTURE_2D_ARRAY, 0, GL_R8, W, H, LAYERS, 0, GL_RED, GL_UNSIGNED_BYTE, NULL);
    glTexParameteri(GL_TEXTURE_2D_ARRAY, GL_TEXTURE_MAX_LEVEL, 0);
    glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
    glcv_cuda_image img;
    CHECK_OK(glcv_cuda_image_register_layers(&img, tex, 0, &lg));
    CHECK(img.layers == LAYERS && img.width == W && img.height == H, "registered %dx%d x %d", img.width, img.height,
          img.layers);
    glcv_cuda_image *one[1] = {&img};
    int bad = 0;
    for (int set = 0; set < 3 && img.resource; set++) {
        for (int l = 0; l < LAYERS; l++)
            pattern(px + (size_t)W * H * (size_t)l, W, H, 1, 11 * set + 3 * l);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
        glBindTexture(GL_TEXTURE_2D_ARRAY, tex);
        glTexSubImage3D(GL_TEXTURE_2D_ARRAY, 0, 0, 0, 0, W, H, LAYERS, GL_RED, GL_UNSIGNED_BYTE, px);
        glBindTexture(GL_TEXTURE_2D_ARRAY, 0);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
        CHECK_OK(glcv_cuda_images_map(one, 1, stream, &lg));
        for (int l = 0; l < LAYERS && img.layer_arrays && img.layer_arrays[l]; l++) {
            cudaTextureObject_t t = cuda_texture_object(img.layer_arrays[l]);
            unsigned long long got = device_sum(t, NULL, 0, 1, stream, d_sum);
            unsigned long long want = host_sum(px + (size_t)W * H * (size_t)l, (size_t)W * H);
            if (got != want) {
                bad++;
                fprintf(stderr, "set %d layer %d: CUDA sums %llu, GL wrote %llu\n", set, l, got, want);
            }
            cudaDestroyTextureObject(t);
        }
        CHECK_OK(glcv_cuda_images_unmap(one, 1, stream, &lg));
    }
    CHECK(bad == 0, "layered hand-over: %d layers arrived wrong", bad);
    CHECK_OK(glcv_cuda_image_unregister(&img, &lg));
    glDeleteTextures(1, &tex);
    free(px);

    /* bgsub's masks of 3 streams */
    glcv_bgsub_params bp = GLCV_BGSUB_PARAMS(.width = W, .height = H, .streams = 3, .format = GLCV_PIXEL_RGBA8,
                                             .vote = -1, .logger = lg);
    glcv_bgsub *b = NULL;
    CHECK_OK(glcv_bgsub_create(&bp, &b));
    glcv_image frames[3], masks[3];
    for (int i = 0; i < 3; i++) {
        frames[i] = test_image_make(W, H, GLCV_PIXEL_RGBA8, 0);
        masks[i] = test_image_make(W, H, GLCV_PIXEL_GRAY8, 0);
    }
    for (int set = 0; set < 4 && b; set++) {
        for (int i = 0; i < 3; i++)
            pattern(frames[i].data, W, H, 4, set * (i + 1) * 40);
        CHECK_OK(glcv_bgsub_frames(b, frames, 3, 0));
        CHECK_OK(glcv_bgsub_read_masks(b, 0, masks, 3));
        glcv_cuda_image m;
        CHECK_OK(glcv_cuda_image_register_layers(&m, glcv_bgsub_mask_texture(b), 0, &lg));
        glcv_cuda_image *mm[1] = {&m};
        CHECK_OK(glcv_cuda_images_map(mm, 1, stream, &lg));
        for (int i = 0; i < 3 && m.layer_arrays && m.layer_arrays[i]; i++) {
            cudaTextureObject_t t = cuda_texture_object(m.layer_arrays[i]);
            unsigned long long got = device_sum(t, NULL, 0, 1, stream, d_sum);
            unsigned long long want = host_sum(masks[i].data, (size_t)W * H);
            CHECK(got == want, "bgsub set %d stream %d: CUDA sums %llu, read_masks %llu", set, i, got, want);
            cudaDestroyTextureObject(t);
        }
        CHECK_OK(glcv_cuda_images_unmap(mm, 1, stream, &lg));
        CHECK_OK(glcv_cuda_image_unregister(&m, &lg));
    }
    for (int i = 0; i < 3; i++) {
        test_image_release(&frames[i]);
        test_image_release(&masks[i]);
    }
    glcv_bgsub_destroy(&b);
}

int main(void)
{
    glcv_cuda_info info;
    CHECK_OK(glcv_cuda_query(&info));
    if (info.devices < 1) {
        printf("SKIP: %s\n", info.text);
        return TEST_SKIP;
    }
    glcv_context *ctx = test_context_or_skip(33);
    CHECK_OK(glcv_cuda_query(&info));
    printf("%s\n", info.text);
    if (info.gl_device < 0) {
        printf("SKIP: the GL context is not on a CUDA device\n");
        glcv_context_destroy(&ctx);
        return TEST_SKIP;
    }
    int egl_device = glcv_context_cuda_device(ctx);
    CHECK(egl_device < 0 || egl_device == info.gl_device, "EGL says CUDA device %d, cudaGLGetDevices %d", egl_device,
          info.gl_device);
    glcv_cuda_device picked;
    char why[256];
    CHECK_OK(glcv_cuda_pick(0, &picked, why, sizeof why));
    CHECK(picked.device == info.gl_device && picked.with_gl, "picked device %d (with GL %d)", picked.device,
          picked.with_gl);
    CHECK(glcv_cuda_available(0), "glcv_cuda_available says no CUDA device");
    cudaSetDevice(picked.device);
    cudaStream_t stream = NULL;
    unsigned long long *d_sum = NULL;
    CHECK_CU(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK_CU(cudaMalloc((void **)&d_sum, sizeof *d_sum));
    test_pixel_buffer(stream, d_sum);
    test_images(stream, d_sum);
    test_map_textures(stream, d_sum);
    test_layers(stream, d_sum);
    cudaFree(d_sum);
    cudaStreamDestroy(stream);
    glcv_context_destroy(&ctx);
    return test_finish("test_bridge");
}

#else

int main(void)
{
    printf("SKIP: glcv was built without CUDA\n");
    return TEST_SKIP;
}

#endif
