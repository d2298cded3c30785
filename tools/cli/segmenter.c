/* The segmenter's options and set-up shared by 'glcv segment' and 'glcv eval'; see segmenter.h. */
#include "segmenter.h"

#include <stdio.h>

int cli_segmenter_create(const cli_segmenter *s, const cli_args *args, int width, int height, int timing, int quiet,
                         const glcv_logger *logger, glcv_context **ctx, glcv_segment **seg,
                         glcv_segment_params *resolved)
{
    glcv_engine_mode mode = s->engine == GLCV_ENGINE_DEFAULT ? GLCV_ENGINE_AUTO : s->engine;
    if (mode != GLCV_ENGINE_CPU) {
        glcv_context_params cp = GLCV_CONTEXT_PARAMS(.logger = *logger);
        glcv_status st = glcv_context_create(&cp, ctx);
        if (st != GLCV_OK && mode != GLCV_ENGINE_AUTO)
            return cli_lib_error("cannot create an OpenGL context", st);
        if (st != GLCV_OK) {
            cli_warning("cannot create an OpenGL context (%s): using the CPU engine", glcv_status_string(st));
            mode = GLCV_ENGINE_CPU;
        }
    }
    glcv_segment_params p = GLCV_SEGMENT_PARAMS(.width = width, .height = height, .ts = (float)s->ts,
                                                .odc = (float)s->odc, .b1 = (float)s->b1, .b2 = (float)s->b2,
                                                .iterations = s->iterations, .seed = s->seed, .engine = mode,
                                                .adapt_rate = (float)s->adapt, .timing = timing, .logger = *logger);
    glcv_status st = glcv_segment_create(&p, seg);
    if (st != GLCV_OK)
        return cli_lib_error("cannot create the segmenter", st);
    /* Zero means "default" in the params struct: explicit zeros go through the setters. */
    if (st == GLCV_OK && cli_given(args, &s->ts) && s->ts == 0.0)
        st = glcv_segment_set_ts(*seg, 0.0f);
    if (st == GLCV_OK && cli_given(args, &s->odc) && s->odc == 0.0)
        st = glcv_segment_set_odc(*seg, 0.0f);
    if (st == GLCV_OK && cli_given(args, &s->iterations) && s->iterations == 0)
        st = glcv_segment_set_iterations(*seg, 0);
    if (st == GLCV_OK && cli_given(args, &s->adapt) && s->adapt == 0.0)
        st = glcv_segment_set_adapt_rate(*seg, 0.0f);
    if (st == GLCV_OK)
        st = glcv_segment_get_params(*seg, resolved);
    if (st != GLCV_OK)
        return cli_lib_error("cannot set the parameters", st);
    if (!quiet) {
        int on_gpu = resolved->engine != GLCV_ENGINE_CPU && *ctx;
        fprintf(stderr, "glcv: engine %s on %s\n", glcv_engine_mode_string(resolved->engine),
                on_gpu ? glcv_context_describe(*ctx) : "CPU");
    }
    return CLI_OK;
}

int cli_segmenter_learn(glcv_segment *seg, char *const *paths, int count, const glcv_logger *logger, cli_progress *bar,
                        glcv_segment_params *resolved)
{
    glcv_image frame = {0};
    glcv_status st = glcv_segment_learn_begin(seg);
    if (st != GLCV_OK)
        return cli_lib_error("cannot start learning the background", st);
    int rc = CLI_OK;
    for (int i = 0; i < count && rc == CLI_OK; i++) {
        cli_progress_step(bar);
        rc = cli_load_rgb(paths[i], logger, &frame);
        if (rc == CLI_OK && (st = glcv_segment_learn_add(seg, &frame)) != GLCV_OK)
            rc = cli_lib_error(paths[i], st);
    }
    glcv_image_free(&frame);
    if (rc != CLI_OK)
        return rc;
    st = glcv_segment_learn_end(seg);
    if (st == GLCV_OK) /* learning calibrates the parameters not given */
        st = glcv_segment_get_params(seg, resolved);
    return st == GLCV_OK ? CLI_OK : cli_lib_error("cannot learn the background", st);
}
