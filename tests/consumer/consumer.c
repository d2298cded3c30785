/* Segments a synthetic frame on the CPU engine through the installed library. */
#include <glcv/glcv.h>
#include <stdio.h>

int main(void)
{
    glcv_synth *synth = NULL;
    glcv_segment *seg = NULL;
    glcv_image bg = {0}, frame = {0}, mask = {0};
    int rc = 1;
    if (glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = 64, .height = 48, .frames = 2), &synth) ||
        glcv_image_alloc(64, 48, GLCV_PIXEL_RGB8, &bg) || glcv_image_alloc(64, 48, GLCV_PIXEL_RGB8, &frame) ||
        glcv_image_alloc(64, 48, GLCV_PIXEL_GRAY8, &mask) || glcv_synth_background(synth, &bg) ||
        glcv_synth_frame(synth, 1, &frame, NULL) ||
        glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = 64, .height = 48, .engine = GLCV_ENGINE_CPU), &seg) ||
        glcv_segment_set_background(seg, &bg) || glcv_segment_frame(seg, &frame, 1) ||
        glcv_segment_read_mask(seg, &mask))
        goto done;
    int on = 0;
    for (int i = 0; i < 64 * 48; i++)
        on += mask.data[i] != 0;
    printf("consumer: %d foreground pixels\n", on);
    rc = on > 0 ? 0 : 1;
done:
    glcv_segment_destroy(&seg);
    glcv_synth_destroy(&synth);
    glcv_image_free(&bg);
    glcv_image_free(&frame);
    glcv_image_free(&mask);
    return rc;
}
