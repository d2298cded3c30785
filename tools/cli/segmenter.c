/* The segmenter's options and set-up shared by 'glcv segment', 'glcv eval' and glcv-demo; see
 * segmenter.h. */
#include "segmenter.h"

#include <stdio.h>

/* cli_segmenter_zeros' bits */
enum { ZERO_TS = 1, ZERO_ODC = 2, ZERO_ITERATIONS = 4, ZERO_ADAPT = 8 };

glcv_segment_params cli_segmenter_params(const cli_segmenter *s)
{
    return GLCV_SEGMENT_PARAMS(.ts = (float)s->ts, .odc = (float)s->odc, .b1 = (float)s->b1, .b2 = (float)s->b2,
                               .iterations = s->iterations, .seed = s->seed, .engine = s->engine,
                               .adapt_rate = (float)s->adapt,
                               .preset = s->paper ? GLCV_SEGMENT_PAPER : GLCV_SEGMENT_CALIBRATED);
}

unsigned cli_segmenter_zeros(const cli_segmenter *s, const cli_args *args)
{
    return (cli_given(args, &s->ts) && s->ts == 0.0 ? ZERO_TS : 0u) |
           (cli_given(args, &s->odc) && s->odc == 0.0 ? ZERO_ODC : 0u) |
           (cli_given(args, &s->iterations) && s->iterations == 0 ? ZERO_ITERATIONS : 0u) |
           (cli_given(args, &s->adapt) && s->adapt == 0.0 ? ZERO_ADAPT : 0u);
}

glcv_status cli_segmenter_set_zeros(glcv_segment *seg, unsigned zeros)
{
    glcv_status st = GLCV_OK;
    if (st == GLCV_OK && (zeros & ZERO_TS))
        st = glcv_segment_set_ts(seg, 0.0f);
    if (st == GLCV_OK && (zeros & ZERO_ODC))
        st = glcv_segment_set_odc(seg, 0.0f);
    if (st == GLCV_OK && (zeros & ZERO_ITERATIONS))
        st = glcv_segment_set_iterations(seg, 0);
    if (st == GLCV_OK && (zeros & ZERO_ADAPT))
        st = glcv_segment_set_adapt_rate(seg, 0.0f);
    return st;
}

void cli_segmenter_describe(const glcv_segment_params *p, char *out, size_t size)
{
    char adapt[32] = "off";
    if (p->adapt_rate > 0.0f)
        snprintf(adapt, sizeof adapt, "%g", (double)p->adapt_rate);
    snprintf(out, size, "Ts %g Odc %g B1 %g B2 %g, %d iterations, adapt %s", (double)p->ts, (double)p->odc,
             (double)p->b1, (double)p->b2, p->iterations, adapt);
}

int cli_context_for_engine(glcv_engine_mode *engine, const glcv_logger *logger, glcv_context **ctx)
{
    if (*engine == GLCV_ENGINE_DEFAULT)
        *engine = GLCV_ENGINE_AUTO;
    if (*engine == GLCV_ENGINE_CPU)
        return CLI_OK;
    glcv_context_params cp = GLCV_CONTEXT_PARAMS(.logger = *logger);
    glcv_status st = glcv_context_create(&cp, ctx);
    if (st != GLCV_OK && *engine != GLCV_ENGINE_AUTO)
        return cli_lib_error("cannot create an OpenGL context", st);
    if (st != GLCV_OK) {
        cli_warning("cannot create an OpenGL context (%s): using the CPU engine", glcv_status_string(st));
        *engine = GLCV_ENGINE_CPU;
    }
    return CLI_OK;
}

void cli_print_engine(glcv_engine_mode engine, glcv_context *ctx)
{
    int on_gpu = engine != GLCV_ENGINE_CPU && ctx;
    fprintf(stderr, "glcv: engine %s on %s\n", glcv_engine_mode_string(engine), on_gpu ? glcv_context_describe(ctx) : "CPU");
}

int cli_segmenter_make(const cli_segmenter *s, const cli_args *args, int width, int height, int streams, int timing,
                       glcv_engine_mode engine, const glcv_logger *logger, glcv_segment **seg,
                       glcv_segment_params *resolved)
{
    glcv_segment_params p = cli_segmenter_params(s);
    p.streams = streams;
    p.engine = engine;
    p.width = width;
    p.height = height;
    p.timing = timing;
    p.logger = *logger;
    glcv_status st = glcv_segment_create(&p, seg);
    if (st != GLCV_OK)
        return cli_lib_error("cannot create the segmenter", st);
    st = cli_segmenter_set_zeros(*seg, cli_segmenter_zeros(s, args));
    if (st == GLCV_OK)
        st = glcv_segment_get_params(*seg, resolved);
    if (st != GLCV_OK)
        return cli_lib_error("cannot set the parameters", st);
    return CLI_OK;
}

int cli_segmenter_create(const cli_segmenter *s, const cli_args *args, int width, int height, int timing, int quiet,
                         const glcv_logger *logger, glcv_context **ctx, glcv_segment **seg,
                         glcv_segment_params *resolved)
{
    glcv_engine_mode engine = s->engine;
    int rc = cli_context_for_engine(&engine, logger, ctx);
    if (rc == CLI_OK)
        rc = cli_segmenter_make(s, args, width, height, 1, timing, engine, logger, seg, resolved);
    if (rc == CLI_OK && !quiet)
        cli_print_engine(resolved->engine, *ctx);
    return rc;
}

int cli_segmenter_learn_end(glcv_segment *seg, int count, int report, int first, int total,
                            glcv_segment_params *resolved)
{
    glcv_status st = glcv_segment_learn_end(seg);
    glcv_segment_params all;
    if (st == GLCV_OK)
        st = glcv_segment_get_params(seg, &all);
    /* learning calibrates the parameters not given, each stream on its own frames */
    for (int i = 0; st == GLCV_OK && i < all.streams; i++) {
        glcv_segment_params q;
        if ((st = glcv_segment_get_stream_params(seg, i, &q)) != GLCV_OK)
            break;
        if (i == 0)
            *resolved = q;
        if (report) {
            char text[160];
            cli_segmenter_describe(&q, text, sizeof text);
            if (total > 1)
                fprintf(stderr, "glcv: input %d:\n", first + i);
            fprintf(stderr, "glcv: background learned from %d frame%s: %s (preset %s)\n", count,
                    count == 1 ? "" : "s", text, q.preset == GLCV_SEGMENT_PAPER ? "paper" : "calibrated");
        }
    }
    if (st != GLCV_OK)
        return cli_lib_error("cannot learn the background", st);
    return CLI_OK;
}
