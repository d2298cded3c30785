/* A host application of an installed (or embedded) glcv: it links a reference to every public
 * function (glcv_public_functions, generated from the headers by make_refs.sh), checks that the
 * configuration header agrees with the library, and segments a synthetic frame on the CPU engine.
 * Exits 0 when all of that works. */
#include <glcv/glcv.h>

#include <stdio.h>
#include <string.h>

typedef void (*glcv_public_fn)(void);
extern const glcv_public_fn glcv_public_functions[];
extern const size_t glcv_public_count;

int main(int argc, char **argv)
{
    for (size_t i = 0; i < glcv_public_count; i++) {
        if (!glcv_public_functions[i]) {
            fprintf(stderr, "consumer: public function %zu is NULL\n", i);
            return 1;
        }
    }
    printf("consumer: glcv %s, %zu public functions linked, CUDA %d, FFmpeg %d, OpenMP %d, %s\n",
           GLCV_VERSION_STRING, glcv_public_count, GLCV_HAVE_CUDA, GLCV_HAVE_FFMPEG, GLCV_HAVE_OPENMP,
           GLCV_SHARED ? "shared" : "static");
    if (argc > 1 && strcmp(argv[1], GLCV_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: the header says version %s, the package %s\n", GLCV_VERSION_STRING, argv[1]);
        return 1;
    }
    if (glcv_delta_can_compress() != GLCV_HAVE_ZSTD) {
        fprintf(stderr, "consumer: glcv_delta_can_compress disagrees with GLCV_HAVE_ZSTD\n");
        return 1;
    }
    glcv_cuda_info cuda;
    if (glcv_cuda_query(&cuda) != GLCV_OK || !cuda.built != !GLCV_HAVE_CUDA) {
        fprintf(stderr, "consumer: glcv_cuda_query disagrees with GLCV_HAVE_CUDA (%s)\n", cuda.text);
        return 1;
    }

    glcv_synth *synth = NULL;
    glcv_segment *seg = NULL;
    glcv_image bg = {0}, frame = {0}, mask = {0}, truth = {0};
    int rc = 1;
    if (glcv_synth_create(&GLCV_SYNTH_PARAMS(.width = 64, .height = 48, .frames = 2), &synth) ||
        glcv_image_alloc(64, 48, GLCV_PIXEL_RGB8, &bg) || glcv_image_alloc(64, 48, GLCV_PIXEL_RGB8, &frame) ||
        glcv_image_alloc(64, 48, GLCV_PIXEL_GRAY8, &mask) || glcv_image_alloc(64, 48, GLCV_PIXEL_GRAY8, &truth) ||
        glcv_synth_background(synth, &bg) || glcv_synth_frame(synth, 1, &frame, &truth) ||
        glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = 64, .height = 48, .engine = GLCV_ENGINE_CPU), &seg) ||
        glcv_segment_set_background(seg, &bg) || glcv_segment_frame(seg, &frame, 1) ||
        glcv_segment_read_mask(seg, &mask)) {
        fprintf(stderr, "consumer: segmenting the synthetic frame failed\n");
        goto done;
    }
    int hit = 0, objects = 0;
    for (int i = 0; i < 64 * 48; i++) {
        objects += truth.data[i] != 0;
        hit += truth.data[i] != 0 && mask.data[i] != 0;
    }
    printf("consumer: %d of %d object pixels found\n", hit, objects);
    rc = objects > 0 && hit * 2 > objects ? 0 : 1;
done:
    glcv_segment_destroy(&seg);
    glcv_synth_destroy(&synth);
    glcv_image_free(&bg);
    glcv_image_free(&frame);
    glcv_image_free(&mask);
    glcv_image_free(&truth);
    return rc;
}
