/* GL objects that outlive their context: the segmenter, the background subtractor and the delta
 * encoder on a GL engine, used and destroyed after their context was destroyed, while no context
 * is current and while another (new) context is current - which may sit at the destroyed one's
 * address. Every call must return NO_CONTEXT without a GL call (under AddressSanitizer a GL call
 * would touch the dead context's freed memory; libepoxy aborts on one made without a context),
 * destruction must make no GL call either, and objects made in the new context must work. */
#include "testutil.h"

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
    glcv_image_free(&frame);
    return test_finish("test_context_lost");
}
