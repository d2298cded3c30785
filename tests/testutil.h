/* Test helpers: checks that say where and by how much, and GL context setup that skips. */
#ifndef GLCV_TESTUTIL_H
#define GLCV_TESTUTIL_H

#include <glcv/glcv.h>
#include <stdio.h>
#include <stdlib.h>

#define TEST_SKIP 77

extern int test_failures;

/* Records a failure with file:line and a printf-style explanation; the test goes on. */
#define CHECK(cond, ...)                                                                            \
    do {                                                                                            \
        if (!(cond)) {                                                                              \
            test_failures++;                                                                        \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);                \
            fprintf(stderr, __VA_ARGS__);                                                           \
            fputc('\n', stderr);                                                                    \
        }                                                                                           \
    } while (0)

/* Checks a status against the expected one. */
#define CHECK_STATUS(expr, expected)                                                                \
    do {                                                                                            \
        glcv_status st_ = (expr);                                                                   \
        CHECK(st_ == (expected), "%s returned '%s', expected '%s'", #expr, glcv_status_string(st_), \
              glcv_status_string(expected));                                                        \
    } while (0)

#define CHECK_OK(expr) CHECK_STATUS(expr, GLCV_OK)

/* Creates a headless GL context (printing what it got) or exits 77 (skipped) with the reason.
 * min_gl_version as major*10+minor (0 = 33). */
glcv_context *test_context_or_skip(int min_gl_version);

/* Prints what CUDA glcv sees from this thread into *info and returns; exits 77 (skipped) with
 * the reason when a module created now with the CUDA engine would get no device
 * (glcv_cuda_available(0) is 0). */
void test_cuda_or_skip(glcv_cuda_info *info);

/* The engine argument of a test run as "PROGRAM [cpu | cuda]": 1 for "cuda", 0 for "cpu" or none;
 * anything else prints the usage and exits 2. */
int test_mode_cuda(int argc, char **argv);

/* With a GL context current: prints what CUDA glcv sees into *info and returns when a CUDA module
 * would get the GL context's device (so texture inputs reach CUDA directly); otherwise destroys
 * *ctx and exits 77 (skipped) with the reason. */
void test_cuda_gl_or_skip(glcv_context **ctx, glcv_cuda_info *info);

/* Checks that a segmenter runs on the path a test is about: `engine` is the engine
 * glcv_segment_get_params reports in use, and with COMPUTE the MRF runs the kernel asked for -
 * the tiled one, or one dispatch per substep when `multipass` (glcv_segment_use_multipass).
 * Records a failure otherwise; returns nonzero when the path is the expected one. */
int test_segment_on_path(glcv_segment *seg, glcv_engine_mode engine, int multipass);

/* The segmenter's exact window sums at (x, y) of a packed RGB frame f and background b of w x h
 * pixels: out[0] = f.f, out[1] = b.b, out[2] = f.b over the 3x3 window (outside the image
 * counts as 0). */
void test_window_sums(const uint8_t *f, const uint8_t *b, int w, int h, int x, int y, int32_t out[3]);

/* The segmenter's decision rule, written out independently of the library: for a pixel's window
 * sums fore (f.f), back (b.b) and cross (f.b), the value x = (Ts + 12B - D^2) / (2B), where the
 * pixel is changed when M (the number of its window's changed neighbours) > x. D^2 is the
 * smallest eigenvalue of [[fore+Odc, cross+Odc], [cross+Odc, back+Odc]], det / largest
 * eigenvalue, with the determinant expanded as (fore back - cross^2) + Odc (fore + back -
 * 2 cross) (exact in 64-bit integers plus one product), so that it stays accurate for any Odc. */
double test_decision_x(int32_t fore, int32_t back, int32_t cross, double ts, double odc, double b);

/* A logger that prints to stderr at WARN level and above (INFO with GLCV_TEST_VERBOSE=1). */
glcv_logger test_logger(void);

/* A logger that keeps the last message and counts them, to check that failures say why. */
typedef struct capture {
    char last[1024];
    int count;
} capture;
glcv_logger capture_logger(capture *c);

/* Deterministic random numbers for test inputs (xorshift64*). */
uint64_t test_rand(uint64_t *state);

/* How many of the n bytes at m are not 0 (foreground pixels of a mask). */
int test_count_nonzero(const uint8_t *m, size_t n);

/* A zero-filled host image of the given size, format and stride (0 = packed), with one spare
 * byte; exits on out of memory. Free with test_image_release. */
glcv_image test_image_make(int w, int h, glcv_pixel_format fmt, size_t stride);
void test_image_release(glcv_image *im);

/* A GL_TEXTURE_2D (nearest filtering) of `internal` format, w x h, filled from the packed rows
 * `px` of `format` / GL_UNSIGNED_BYTE, or undefined when px is NULL; a GL context must be
 * current. Returns its name; binds texture 0 and leaves GL_UNPACK_ALIGNMENT at 4. */
unsigned int test_texture_make(unsigned int internal, unsigned int format, int w, int h, const void *px);

/* Writes the packed rows `px` into texture `tex`: in place (glTexSubImage2D) or, when
 * `respecify`, as a new w x h image of `internal` format (glTexImage2D). As test_texture_make,
 * binds texture 0 and leaves GL_UNPACK_ALIGNMENT at 4. */
void test_texture_upload(unsigned int tex, unsigned int internal, unsigned int format, int w, int h, const void *px,
                         int respecify);

/* Ends a test: prints a summary line and returns the exit code (0 or 1). */
int test_finish(const char *name);

#endif
