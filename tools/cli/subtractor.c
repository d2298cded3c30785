/* The method behind 'glcv segment', 'glcv eval' and glcv-demo; see subtractor.h. */
#include "subtractor.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const cli_method_names[] = {"eth", "vsam", "diff2", "diff3", NULL};
const char *const cli_bgsub_passes_names[] = {"single", "multi", NULL};

static const glcv_bgsub_method bgsub_methods[CLI_METHOD_COUNT] = {GLCV_BGSUB_DEFAULT, GLCV_BGSUB_VSAM,
                                                                  GLCV_BGSUB_DIFF2, GLCV_BGSUB_DIFF3};

int cli_method_check(const cli_method *m, const cli_args *args)
{
    const cli_segmenter *s = &m->seg;
    const void *eth_only[] = {&s->ts, &s->odc, &s->b1, &s->b2, &s->iterations, &s->seed, &s->adapt, &s->paper};
    const char *eth_names[] = {"--Ts", "--Odc", "--B1", "--B2", "--iterations", "--seed", "--adapt",
                               "--paper-defaults"};
    const void *bgsub_only[] = {&m->alpha, &m->c, &m->min_threshold, &m->absorb, &m->vote, &m->gray, &m->passes};
    const char *bgsub_names[] = {"--alpha", "--c", "--min-threshold", "--absorb", "--vote", "--gray", "--passes"};
    const char *name = cli_method_names[m->method];
    if (m->method != CLI_METHOD_ETH) {
        for (size_t i = 0; i < sizeof eth_only / sizeof eth_only[0]; i++)
            if (cli_given(args, eth_only[i]))
                return cli_usage("%s applies only to --method eth, not to %s", eth_names[i], name);
    } else {
        for (size_t i = 0; i < sizeof bgsub_only / sizeof bgsub_only[0]; i++)
            if (cli_given(args, bgsub_only[i]))
                return cli_usage("%s applies only to --method vsam, diff2 and diff3 (give --method)", bgsub_names[i]);
    }
    if (m->method != CLI_METHOD_VSAM && cli_given(args, &m->alpha))
        return cli_usage("--alpha applies only to --method vsam: %s keeps no background to adapt", name);
    if (m->method != CLI_METHOD_VSAM && cli_given(args, &m->absorb))
        return cli_usage("--absorb applies only to --method vsam: %s keeps no background to adapt", name);
    return CLI_OK;
}

glcv_bgsub_params cli_method_bgsub_params(const cli_method *m)
{
    return GLCV_BGSUB_PARAMS(.method = bgsub_methods[m->method], .gray = m->gray, .alpha = (float)m->alpha,
                             .c = (float)m->c, .min_threshold = (float)m->min_threshold, .absorb = m->absorb,
                             .vote = m->vote, .engine = m->seg.engine,
                             .passes = m->passes ? GLCV_BGSUB_MULTI_PASS : GLCV_BGSUB_SINGLE_PASS);
}

int cli_subtractor_make(const cli_method *m, const cli_args *args, int width, int height, int streams, int timing,
                        int download, glcv_engine_mode engine, const glcv_logger *logger, cli_subtractor **out)
{
    cli_subtractor *sub = calloc(1, sizeof *sub);
    *out = sub;
    if (!sub)
        return cli_out_of_memory();
    sub->groups = 1;
    sub->total = streams;
    sub->method = m->method;
    sub->width = width;
    sub->height = height;
    sub->streams = streams;
    if (m->method == CLI_METHOD_ETH) {
        int rc = cli_segmenter_make(&m->seg, args, width, height, streams, timing, engine, logger, &sub->seg,
                                    &sub->seg_resolved);
        sub->engine = sub->seg_resolved.engine;
        return rc;
    }
    glcv_bgsub_params p = cli_method_bgsub_params(m);
    p.width = width;
    p.height = height;
    p.streams = streams;
    p.engine = engine;
    p.timing = timing;
    p.download = download;
    p.logger = *logger;
    if (cli_given(args, &m->vote) && m->vote == 0)
        p.vote = -1; /* --vote 0: no vote */
    glcv_status st = glcv_bgsub_create(&p, &sub->bgsub);
    if (st == GLCV_OK)
        st = glcv_bgsub_get_params(sub->bgsub, &sub->bgsub_resolved);
    if (st != GLCV_OK)
        return cli_lib_error("cannot create the background subtraction", st);
    sub->engine = sub->bgsub_resolved.engine;
    sub->download = download;
    return CLI_OK;
}

int cli_subtractor_create(const cli_method *m, const cli_args *args, int width, int height, int streams, int timing,
                          int quiet, const glcv_logger *logger, glcv_context **ctx, cli_subtractor **out)
{
    return cli_subtractor_create_gpus(m, args, width, height, streams, 1, timing, quiet, logger, ctx, out);
}

/* A context on GPU g (the EGL device of CUDA device g, where EGL says which). */
static int context_on(int g, const glcv_logger *logger, glcv_context **ctx)
{
    glcv_context_params cp = GLCV_CONTEXT_PARAMS(.logger = *logger, .match_cuda_device = 1, .cuda_device = g);
    glcv_status st = glcv_context_create(&cp, ctx);
    return st == GLCV_OK ? CLI_OK : cli_lib_error("cannot create an OpenGL context", st);
}

/* The engine line of a group of inputs on a GPU of its own. */
static void print_group(glcv_engine_mode engine, glcv_context *ctx, int first, int count)
{
    fprintf(stderr, "glcv: inputs %d..%d: engine %s on %s\n", first, first + count - 1,
            glcv_engine_mode_string(engine), glcv_context_describe(ctx));
}

int cli_subtractor_create_gpus(const cli_method *m, const cli_args *args, int width, int height, int streams, int gpus,
                               int timing, int quiet, const glcv_logger *logger, glcv_context **ctx,
                               cli_subtractor **out)
{
    glcv_engine_mode engine = m->seg.engine;
    int per = (streams + gpus - 1) / gpus, groups = (streams + per - 1) / per;
    if (groups > CLI_MAX_GPUS)
        return cli_usage("at most %d GPUs", CLI_MAX_GPUS);
    int rc = groups > 1 ? context_on(0, logger, ctx) : cli_context_for_engine(&engine, logger, ctx);
    if (rc == CLI_OK)
        rc = cli_subtractor_make(m, args, width, height, groups > 1 ? per : streams, timing, 0, engine, logger, out);
    cli_subtractor *sub = *out;
    if (sub) {
        sub->ctx = *ctx;
        sub->total = streams;
    }
    if (rc == CLI_OK && !quiet && groups == 1)
        cli_print_engine(sub->engine, *ctx);
    if (rc == CLI_OK && !quiet && groups > 1)
        print_group(sub->engine, *ctx, 0, per);
    for (int g = 1; rc == CLI_OK && g < groups; g++) {
        glcv_context *gctx = NULL;
        int first = g * per, count = streams - first < per ? streams - first : per;
        rc = context_on(g, logger, &gctx);
        cli_subtractor *o = NULL;
        if (rc == CLI_OK)
            rc = cli_subtractor_make(m, args, width, height, count, timing, 0, engine, logger, &o);
        if (o) {
            o->ctx = gctx;
            o->first = first;
            o->total = streams;
            sub->others[g - 1] = o;
            sub->groups = g + 1;
        } else {
            glcv_context_destroy(&gctx);
        }
        if (rc == CLI_OK && !quiet)
            print_group(o->engine, gctx, first, count);
    }
    if (sub && sub->groups > 1)
        glcv_context_make_current(*ctx);
    return rc;
}

void cli_subtractor_destroy(cli_subtractor **sub)
{
    if (!sub || !*sub)
        return;
    cli_subtractor *s = *sub;
    for (int g = 0; g < s->groups - 1; g++) { /* each in its own context, then that context */
        cli_subtractor *o = s->others[g];
        if (o && o->ctx)
            glcv_context_make_current(o->ctx);
        glcv_context *ctx = o ? o->ctx : NULL;
        cli_subtractor_destroy(&s->others[g]);
        glcv_context_destroy(&ctx);
    }
    if (s->groups > 1 && s->ctx)
        glcv_context_make_current(s->ctx);
    glcv_segment_destroy(&s->seg);
    glcv_bgsub_destroy(&s->bgsub);
    free(s);
    *sub = NULL;
}

static glcv_status one_learn_begin(cli_subtractor *sub)
{
    glcv_status st = GLCV_OK;
    sub->learning = 0;
    if (sub->bgsub)
        return glcv_bgsub_learn_begin(sub->bgsub);
    st = glcv_segment_learn_begin(sub->seg);
    return st;
}

static glcv_status one_learn_add(cli_subtractor *sub, const glcv_image *frames)
{
    glcv_status st = GLCV_OK;
    if (sub->bgsub)
        st = glcv_bgsub_learn_add(sub->bgsub, frames, sub->streams);
    else
        st = glcv_segment_learn_add_frames(sub->seg, frames, sub->streams);
    if (st == GLCV_OK)
        sub->learning++;
    return st;
}

static int one_learn_end(cli_subtractor *sub, int count, int report, int total)
{
    if (!sub->bgsub) /* each stream calibrates on its own input: a report line for each */
        return cli_segmenter_learn_end(sub->seg, count, report, sub->first, total, &sub->seg_resolved);
    glcv_status st = glcv_bgsub_learn_end(sub->bgsub);
    if (st != GLCV_OK)
        return cli_lib_error("cannot learn the background", st);
    if (report && sub->first == 0) { /* one line for every group of inputs */
        char text[160];
        cli_subtractor_describe(sub, text, sizeof text);
        fprintf(stderr, "glcv: %s learned from %d frame%s: %s\n",
                sub->method == CLI_METHOD_VSAM ? "background and thresholds" : "thresholds", count,
                count == 1 ? "" : "s", text);
    }
    return CLI_OK;
}

int cli_subtractor_learn_files(cli_subtractor *sub, char *const *paths, int count, const glcv_logger *logger,
                               cli_progress *bar, int report)
{
    glcv_image frame = {0};
    glcv_status st = cli_subtractor_learn_begin(sub);
    if (st != GLCV_OK)
        return cli_lib_error("cannot start learning the background", st);
    int rc = CLI_OK;
    for (int i = 0; i < count && rc == CLI_OK; i++) {
        cli_progress_step(bar);
        rc = cli_load_rgb(paths[i], logger, &frame);
        if (rc == CLI_OK && (st = cli_subtractor_learn_add(sub, &frame)) != GLCV_OK)
            rc = cli_lib_error(paths[i], st);
    }
    glcv_image_free(&frame);
    return rc == CLI_OK ? cli_subtractor_learn_end(sub, count, report) : rc;
}

static int one_set_background(cli_subtractor *sub, const glcv_image *background, const char *what)
{
    glcv_image *set = calloc((size_t)sub->streams, sizeof *set);
    if (!set)
        return cli_out_of_memory();
    for (int i = 0; i < sub->streams; i++)
        set[i] = *background;
    glcv_status st;
    if (sub->bgsub) {
        st = glcv_bgsub_learn_begin(sub->bgsub);
        if (st == GLCV_OK)
            st = glcv_bgsub_learn_add(sub->bgsub, set, sub->streams);
        if (st == GLCV_OK)
            st = glcv_bgsub_learn_end(sub->bgsub);
    } else {
        st = glcv_segment_set_backgrounds(sub->seg, set, sub->streams);
    }
    free(set);
    return st == GLCV_OK ? CLI_OK : cli_lib_error(what, st);
}

static glcv_status one_frames(cli_subtractor *sub, const glcv_image *frames, int wait)
{
    if (sub->bgsub)
        return glcv_bgsub_frames(sub->bgsub, frames, sub->streams, wait);
    return glcv_segment_frames(sub->seg, frames, sub->streams, wait);
}

static glcv_status one_read_masks(cli_subtractor *sub, glcv_image *masks, int age)
{
    if (sub->bgsub)
        return glcv_bgsub_read_masks(sub->bgsub, age, masks, sub->streams);
    return age == 0 ? glcv_segment_read_masks(sub->seg, masks, sub->streams) : GLCV_ERROR_STATE;
}

/* vsam's B of one stream (8.8 fixed point, rounded) into `out`; diff2 and diff3: black. */
static glcv_status bgsub_background(cli_subtractor *sub, int stream, glcv_image *out)
{
    int bpp = glcv_pixel_format_size(out->format);
    if (out->width != sub->width || out->height != sub->height ||
        (out->format != GLCV_PIXEL_RGB8 && out->format != GLCV_PIXEL_RGBA8))
        return GLCV_ERROR_INVALID_ARGUMENT;
    size_t stride = glcv_image_stride(out);
    for (int y = 0; y < out->height; y++)
        memset(out->data + (size_t)y * stride, 0, (size_t)out->width * (size_t)bpp);
    if (sub->method != CLI_METHOD_VSAM)
        return GLCV_OK;
    int lanes = sub->bgsub_resolved.gray ? 1 : 3;
    size_t n = (size_t)sub->width * (size_t)sub->height * (size_t)lanes;
    uint16_t *b = malloc(n * sizeof *b);
    if (!b)
        return GLCV_ERROR_OUT_OF_MEMORY;
    glcv_status st = glcv_bgsub_read_state(sub->bgsub, stream, b, NULL);
    for (int y = 0; st == GLCV_OK && y < out->height; y++)
        for (int x = 0; x < out->width; x++) {
            const uint16_t *px = b + ((size_t)y * (size_t)out->width + (size_t)x) * (size_t)lanes;
            uint8_t *d = out->data + (size_t)y * stride + (size_t)x * (size_t)bpp;
            for (int k = 0; k < 3; k++) { /* 8.8 fixed point, rounded */
                unsigned v = (px[lanes == 1 ? 0 : k] + 128u) >> 8;
                d[k] = (uint8_t)(v > 255u ? 255u : v);
            }
            if (bpp == 4)
                d[3] = 255;
        }
    free(b);
    return st;
}

static glcv_status one_read_backgrounds(cli_subtractor *sub, glcv_image *out)
{
    if (!sub->bgsub)
        return glcv_segment_read_backgrounds(sub->seg, out, sub->streams);
    glcv_status st = GLCV_OK;
    for (int i = 0; i < sub->streams && st == GLCV_OK; i++)
        st = bgsub_background(sub, i, &out[i]);
    return st;
}

static glcv_status one_timings(cli_subtractor *sub, glcv_timing *out, int capacity, int *count, int wait)
{
    if (sub->bgsub)
        return glcv_bgsub_timings(sub->bgsub, out, capacity, count, wait);
    return glcv_segment_timings(sub->seg, out, capacity, count, wait);
}

void cli_subtractor_describe(const cli_subtractor *sub, char *out, size_t size)
{
    if (!sub->bgsub) {
        cli_segmenter_describe(&sub->seg_resolved, out, size);
        return;
    }
    const glcv_bgsub_params *p = &sub->bgsub_resolved;
    char alpha[64] = "";
    if (sub->method == CLI_METHOD_VSAM)
        snprintf(alpha, sizeof alpha, "alpha %g ", (double)p->alpha);
    char vote[16] = "off";
    if (p->vote > 0)
        snprintf(vote, sizeof vote, "%d", p->vote);
    if (sub->method == CLI_METHOD_VSAM)
        snprintf(alpha + strlen(alpha), sizeof alpha - strlen(alpha), "absorb %d ", p->absorb);
    snprintf(out, size, "%s: %sc %g min threshold %g vote %s, %s, %s", cli_method_names[sub->method], alpha,
             (double)p->c, (double)p->min_threshold, vote, p->gray ? "gray" : "colour",
             p->passes == GLCV_BGSUB_MULTI_PASS ? "multi pass" : "single pass");
}

/* ---- several GPUs: a group of streams per GPU, each its own object in its own context -------- */

/* Runs CALL on every group (`g` the group, `o` its subtractor), each with its context current,
 * the first group's context current again after; stops at the first error. */
#define EACH_GROUP(sub, st, ok, CALL)                                                                   \
    do {                                                                                               \
        for (int g = 0; g < (sub)->groups && (st) == (ok); g++) {                                     \
            cli_subtractor *o = g == 0 ? (sub) : (sub)->others[g - 1];                                \
            if ((sub)->groups > 1)                                                                     \
                glcv_context_make_current(o->ctx);                                                     \
            (st) = (CALL);                                                                             \
        }                                                                                              \
        if ((sub)->groups > 1)                                                                         \
            glcv_context_make_current((sub)->ctx);                                                     \
    } while (0)

glcv_status cli_subtractor_learn_begin(cli_subtractor *sub)
{
    glcv_status st = GLCV_OK;
    EACH_GROUP(sub, st, GLCV_OK, one_learn_begin(o));
    return st;
}

glcv_status cli_subtractor_learn_add(cli_subtractor *sub, const glcv_image *frames)
{
    glcv_status st = GLCV_OK;
    EACH_GROUP(sub, st, GLCV_OK, one_learn_add(o, frames + o->first));
    return st;
}

int cli_subtractor_learn_end(cli_subtractor *sub, int count, int report)
{
    int rc = CLI_OK;
    EACH_GROUP(sub, rc, CLI_OK, one_learn_end(o, count, report, sub->total));
    return rc;
}

int cli_subtractor_set_background(cli_subtractor *sub, const glcv_image *background, const char *what)
{
    int rc = CLI_OK;
    EACH_GROUP(sub, rc, CLI_OK, one_set_background(o, background, what));
    return rc;
}

glcv_status cli_subtractor_frames(cli_subtractor *sub, const glcv_image *frames, int wait)
{
    glcv_status st = GLCV_OK;
    /* every GPU's set queued without waiting, so that they work at the same time; `wait` waits
     * for the last GPU (reading the masks waits for the others) */
    EACH_GROUP(sub, st, GLCV_OK, one_frames(o, frames + o->first, g == sub->groups - 1 ? wait : 0));
    return st;
}

glcv_status cli_subtractor_frames_texture(cli_subtractor *sub, unsigned int texture, int wait)
{
    if (sub->groups > 1)
        return GLCV_ERROR_INVALID_ARGUMENT;
    if (sub->bgsub)
        return glcv_bgsub_frames_texture(sub->bgsub, texture, wait);
    return glcv_segment_frames_texture(sub->seg, texture, wait);
}

glcv_status cli_subtractor_read_masks(cli_subtractor *sub, glcv_image *masks)
{
    return cli_subtractor_read_masks_age(sub, masks, 0);
}

glcv_status cli_subtractor_read_masks_age(cli_subtractor *sub, glcv_image *masks, int age)
{
    glcv_status st = GLCV_OK;
    EACH_GROUP(sub, st, GLCV_OK, one_read_masks(o, masks + o->first, age));
    return st;
}

int cli_subtractor_maps(const cli_subtractor *sub)
{
    return sub->bgsub != NULL; /* every group has the same method */
}

glcv_status cli_subtractor_map_masks_age(cli_subtractor *sub, glcv_image *masks, int age)
{
    if (!cli_subtractor_maps(sub))
        return GLCV_ERROR_UNSUPPORTED;
    glcv_status st = GLCV_OK;
    EACH_GROUP(sub, st, GLCV_OK, glcv_bgsub_map_masks(o->bgsub, age, masks + o->first, o->streams));
    return st;
}

int cli_subtractor_reads_behind(const cli_subtractor *sub)
{
    return sub->bgsub && sub->download && sub->groups == 1;
}

glcv_status cli_subtractor_read_backgrounds(cli_subtractor *sub, glcv_image *out)
{
    glcv_status st = GLCV_OK;
    EACH_GROUP(sub, st, GLCV_OK, one_read_backgrounds(o, out + o->first));
    return st;
}

glcv_status cli_subtractor_timings(cli_subtractor *sub, glcv_timing *out, int capacity, int *count, int wait)
{
    glcv_status st = one_timings(sub, out, capacity, count, wait);
    for (int g = 1; g < sub->groups && st == GLCV_OK; g++) {
        cli_subtractor *o = sub->others[g - 1];
        glcv_timing more[64];
        int n = 0;
        glcv_context_make_current(o->ctx);
        st = one_timings(o, more, 64, &n, wait);
        /* every GPU runs the same passes on its streams: their times added up, pass by pass */
        for (int k = 0; st == GLCV_OK && k < n && k < *count && k < capacity; k++)
            out[k].ms += more[k].ms;
    }
    if (sub->groups > 1)
        glcv_context_make_current(sub->ctx);
    return st;
}
