/* GL objects that outlive their context: the segmenter, the background subtractor and the delta
 * encoder on a GL engine, used and destroyed after their context was destroyed, while no context
 * is current and while another (new) context is current - which may sit at the destroyed one's
 * address. Every call must return NO_CONTEXT without a GL call (under AddressSanitizer a GL call
 * would touch the dead context's freed memory; libepoxy aborts on one made without a context),
 * destruction must make no GL call either, and objects made in the new context must work.
 * Then EGL failures injected through a private hook (glcv_egl_fail_next): a context that cannot be
 * created (eglInitialize, eglCreateContext, eglCreatePbufferSurface, eglMakeCurrent failing: a clear
 * error, nothing made, and the AUTO engine segments on the CPU with the CPU's exact mask), and a
 * context lost on the GPU (eglMakeCurrent failing with EGL_CONTEXT_LOST): an error that says so,
 * its objects refuse every call and are destroyed without a GL call, and a new context works. */
#include "testutil.h"

#include "gl.h" /* glcv_egl_fail_next */

#include <epoxy/egl.h>
#include <string.h>

enum { W = 64, H = 48 };

typedef struct objects {
    glcv_segment *seg;
    glcv_bgsub *bgsub;
    glcv_delta *delta;
} objects;

static objects make_objects(const glcv_image *frame)
{
    objects o = {0};
    glcv_logger lg = test_logger();
    glcv_segment_params sp = GLCV_SEGMENT_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_FRAGMENT, .logger = lg);
    CHECK_OK(glcv_segment_create(&sp, &o.seg));
    glcv_bgsub_params bp = GLCV_BGSUB_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_FRAGMENT, .logger = lg);
    CHECK_OK(glcv_bgsub_create(&bp, &o.bgsub));
    glcv_delta_params dp = GLCV_DELTA_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_FRAGMENT, .logger = lg);
    CHECK_OK(glcv_delta_create(&dp, &o.delta));
    if (o.seg) {
        CHECK_OK(glcv_segment_set_background(o.seg, frame));
        CHECK_OK(glcv_segment_frame(o.seg, frame, 1));
    }
    if (o.bgsub)
        CHECK_OK(glcv_bgsub_frames(o.bgsub, frame, 1, 1));
    const uint8_t *packet = NULL;
    size_t bytes = 0;
    if (o.delta)
        CHECK_OK(glcv_delta_encode(o.delta, frame, NULL, 0, &packet, &bytes));
    return o;
}

/* Every GL call of the objects: NO_CONTEXT (`works` 0) or OK (`works` 1). */
static void use_objects(const objects *o, const glcv_image *frame, int works, const char *when)
{
    glcv_status want = works ? GLCV_OK : GLCV_ERROR_NO_CONTEXT;
    glcv_image mask;
    CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_GRAY8, &mask));
    glcv_status st[8];
    int n = 0;
    if (o->seg) {
        st[n++] = glcv_segment_frame(o->seg, frame, 1);
        st[n++] = glcv_segment_read_mask(o->seg, &mask);
        st[n++] = glcv_segment_set_background(o->seg, frame);
        st[n++] = glcv_segment_learn_begin(o->seg);
        if (st[n - 1] == GLCV_OK) {
            CHECK_OK(glcv_segment_learn_add(o->seg, frame));
            CHECK_OK(glcv_segment_learn_end(o->seg));
        }
    }
    if (o->bgsub) {
        st[n++] = glcv_bgsub_frames(o->bgsub, frame, 1, 1);
        st[n++] = glcv_bgsub_read_masks(o->bgsub, 0, &mask, 1);
    }
    if (o->delta) {
        const uint8_t *packet = NULL;
        size_t bytes = 0;
        st[n++] = glcv_delta_encode(o->delta, frame, NULL, 0, &packet, &bytes);
    }
    for (int i = 0; i < n; i++)
        CHECK(st[i] == want, "%s: call %d returned '%s', expected '%s'", when, i, glcv_status_string(st[i]),
              glcv_status_string(want));
    glcv_image_free(&mask);
}

static void destroy_objects(objects *o)
{
    glcv_segment_destroy(&o->seg);
    glcv_bgsub_destroy(&o->bgsub);
    glcv_delta_destroy(&o->delta);
}

int main(void)
{
    glcv_context *ctx = NULL;
    glcv_context_params cp = GLCV_CONTEXT_PARAMS(.min_gl_version = 33, .logger = test_logger());
    if (glcv_context_create(&cp, &ctx) != GLCV_OK) {
        printf("SKIP: no OpenGL context\n");
        return TEST_SKIP;
    }
    glcv_image frame;
    CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_RGB8, &frame));
    for (size_t i = 0; i < frame.stride * H; i++)
        frame.data[i] = (uint8_t)(i * 7 % 251);

    /* 1. used, then destroyed, with no context current */
    objects a = make_objects(&frame);
    use_objects(&a, &frame, 1, "in its context");
    glcv_context_destroy(&ctx);
    CHECK(!glcv_gl_context_current(), "a context is current after destroying the only one");
    use_objects(&a, &frame, 0, "no context current");
    destroy_objects(&a);

    /* 2. made in a context that is destroyed, then used and destroyed while a new one is current
     *    (EGL may hand out the destroyed context's address again) */
    CHECK_OK(glcv_context_create(&cp, &ctx));
    objects b = make_objects(&frame);
    glcv_context_destroy(&ctx);
    CHECK_OK(glcv_context_create(&cp, &ctx));
    use_objects(&b, &frame, 0, "another context current");
    /* objects of the new context work beside them */
    objects c = make_objects(&frame);
    use_objects(&c, &frame, 1, "the new context's objects");
    destroy_objects(&b);
    use_objects(&c, &frame, 1, "the new context's objects after the old ones' destruction");

    /* 3. the right context made current again after another: the objects work again */
    glcv_context *other = NULL;
    CHECK_OK(glcv_context_create(&cp, &other));
    use_objects(&c, &frame, 0, "while another live context is current");
    CHECK_OK(glcv_context_make_current(ctx));
    use_objects(&c, &frame, 1, "their context current again");
    destroy_objects(&c);
    glcv_context_destroy(&other);
    glcv_context_destroy(&ctx);

    /* 4. injected EGL failures at creation: a clear error, no context; the AUTO engine then runs
     *    on the CPU and gives the CPU engine's mask */
    glcv_image cpu_mask, mask;
    CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_GRAY8, &cpu_mask));
    CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_GRAY8, &mask));
    glcv_image moved;
    CHECK_OK(glcv_image_alloc(W, H, GLCV_PIXEL_RGB8, &moved));
    for (size_t i = 0; i < moved.stride * H; i++)
        moved.data[i] = (uint8_t)(frame.data[i] ^ ((i / 3 % W) > W / 2 && i / moved.stride > H / 3 ? 0xC0 : 0));
    glcv_segment *cpu = NULL;
    CHECK_OK(glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_CPU), &cpu));
    if (cpu) {
        CHECK_OK(glcv_segment_set_background(cpu, &frame));
        CHECK_OK(glcv_segment_frame(cpu, &moved, 1));
        CHECK_OK(glcv_segment_read_mask(cpu, &cpu_mask));
        glcv_segment_destroy(&cpu);
    }
    CHECK(test_count_nonzero(cpu_mask.data, (size_t)W * H) > 0, "the CPU mask has no foreground: a useless reference");
    static const char *const calls[] = {"eglInitialize", "eglCreateContext", "eglCreatePbufferSurface", "eglMakeCurrent"};
    for (int i = 0; i < 4; i++) {
        capture cap = {0};
        glcv_context_params fp = GLCV_CONTEXT_PARAMS(.min_gl_version = 33, .logger = capture_logger(&cap));
        /* every attempt fails (the pbuffer is a fallback: it fails with the surfaceless path) */
        glcv_egl_fail_next(calls[i], 1000, 0);
        if (i == 2)
            glcv_egl_fail_next("eglMakeCurrent", 1000, 0);
        glcv_context *failed = (glcv_context *)&cap;
        glcv_status st = glcv_context_create(&fp, &failed);
        glcv_egl_fail_next(NULL, 0, 0);
        printf("  %s failing: %s, \"%s\"\n", calls[i], glcv_status_string(st), cap.last);
        CHECK(st != GLCV_OK && failed == NULL, "%s failing: context create returned %s", calls[i],
              glcv_status_string(st));
        glcv_context_destroy(&failed);
        CHECK(strstr(cap.last, calls[i]) != NULL,
              "%s failing: the message does not name it: %s", calls[i], cap.last);
        CHECK(!glcv_gl_context_current(), "%s failing: a context is current", calls[i]);
        glcv_segment *seg = NULL;
        CHECK_OK(glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_AUTO), &seg));
        if (seg) {
            glcv_segment_params got;
            glcv_segment_get_params(seg, &got);
            CHECK(got.engine == GLCV_ENGINE_CPU, "without a context AUTO must run on the CPU, got engine %d",
                  (int)got.engine);
            CHECK_OK(glcv_segment_set_background(seg, &frame));
            CHECK_OK(glcv_segment_frame(seg, &moved, 1));
            CHECK_OK(glcv_segment_read_mask(seg, &mask));
            CHECK(memcmp(mask.data, cpu_mask.data, (size_t)W * H) == 0, "%s failing: AUTO's mask differs from the CPU's",
                  calls[i]);
            glcv_segment_destroy(&seg);
        }
        glcv_segment *gpu = NULL;
        CHECK_STATUS(glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = W, .height = H, .engine = GLCV_ENGINE_FRAGMENT),
                                         &gpu),
                     GLCV_ERROR_NO_CONTEXT);
        CHECK(gpu == NULL, "a fragment segmenter without a context");
    }

    /* 5. the context lost on the GPU: making it current fails with EGL_CONTEXT_LOST and says so;
     *    its objects refuse every call and are destroyed without a GL call; a new context works */
    CHECK_OK(glcv_context_create(&cp, &ctx));
    objects d = make_objects(&frame);
    use_objects(&d, &frame, 1, "before the loss");
    CHECK_OK(glcv_context_create(&cp, &other));
    capture cap = {0};
    glcv_context *lost = NULL;
    glcv_context_params lp = GLCV_CONTEXT_PARAMS(.min_gl_version = 33, .logger = capture_logger(&cap));
    CHECK_OK(glcv_context_create(&lp, &lost));
    CHECK_OK(glcv_context_make_current(other));
    glcv_egl_fail_next("eglMakeCurrent", 1, EGL_CONTEXT_LOST);
    CHECK_STATUS(glcv_context_make_current(lost), GLCV_ERROR_NO_CONTEXT);
    glcv_egl_fail_next(NULL, 0, 0);
    printf("  context lost: \"%s\"\n", cap.last);
    CHECK(strstr(cap.last, "EGL_CONTEXT_LOST") && strstr(cap.last, "lost the context"),
          "the loss is not named: %s", cap.last);
    glcv_context_destroy(&lost);
    glcv_egl_fail_next("eglMakeCurrent", 1, EGL_CONTEXT_LOST);
    CHECK_STATUS(glcv_context_make_current(ctx), GLCV_ERROR_NO_CONTEXT);
    glcv_egl_fail_next(NULL, 0, 0);
    use_objects(&d, &frame, 0, "their context lost");
    destroy_objects(&d);
    glcv_context_destroy(&ctx);
    CHECK_OK(glcv_context_create(&cp, &ctx));
    objects e = make_objects(&frame);
    use_objects(&e, &frame, 1, "a new context after the loss");
    destroy_objects(&e);
    glcv_context_destroy(&other);
    glcv_context_destroy(&ctx);
    glcv_image_free(&moved);
    glcv_image_free(&mask);
    glcv_image_free(&cpu_mask);
    glcv_image_free(&frame);
    return test_finish("test_context_lost");
}
