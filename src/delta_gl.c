/* Placeholder for the GL engines of the frame-delta encoder, to be replaced by the GL engine: every
 * step fails with GLCV_ERROR_UNSUPPORTED (and says so in the log), so only the CPU engine runs. */
#include "delta_internal.h"

#include "core_internal.h"

#include <glcv/context.h>

static glcv_status not_built(glcv_delta *d)
{
    return glcv_fail(&d->p.logger, GLCV_ERROR_UNSUPPORTED,
                     "delta: the %s engine is not in this build (only the CPU engine is)",
                     glcv_engine_mode_string(d->p.engine));
}

glcv_status glcv_delta_gl_create(glcv_delta *d)
{
    if (!glcv_gl_context_current()) /* as the engine's own create says */
        return glcv_fail(&d->p.logger, GLCV_ERROR_NO_CONTEXT, "no OpenGL context is current on this thread");
    return not_built(d);
}

void glcv_delta_gl_destroy(glcv_delta *d)
{
    (void)d;
}

glcv_status glcv_delta_gl_load(glcv_delta *d, const glcv_image *frame, unsigned int frame_tex, const glcv_image *mask,
                               unsigned int mask_tex)
{
    (void)frame;
    (void)frame_tex;
    (void)mask;
    (void)mask_tex;
    return not_built(d);
}

glcv_status glcv_delta_gl_count(glcv_delta *d, uint32_t *k)
{
    (void)k;
    return not_built(d);
}

glcv_status glcv_delta_gl_records(glcv_delta *d, glcv_delta_layout layout, uint32_t k, uint8_t *out)
{
    (void)layout;
    (void)k;
    (void)out;
    return not_built(d);
}

glcv_status glcv_delta_gl_key(glcv_delta *d, uint8_t *out)
{
    (void)out;
    return not_built(d);
}

glcv_status glcv_delta_gl_reference(glcv_delta *d, uint8_t *out)
{
    (void)out;
    return not_built(d);
}
