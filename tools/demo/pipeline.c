/* glcv-demo: a frame's way through the demo. It is read from the media input, uploaded once into
 * the input texture, segmented there (or added to the background being learned) and its objects
 * tracked; the segmenter and the tracker are (re)created here when the engine changes. With
 * another method than eth (vsam, diff2, diff3) the host frame goes to that method's object
 * instead, and its mask is read back and uploaded for display and tracking. See demo.h. */
#include "demo.h"

#include <math.h>
#include <string.h>

/* ---- segmenter ------------------------------------------------------------------------------ */

void demo_read_timings(demo *d)
{
    int n = 0;
    if (d->method != CLI_METHOD_ETH) {
        if (d->sub && cli_subtractor_timings(d->sub, d->timings, MAX_TIMINGS, &n, 0) == GLCV_OK && n > 0)
            d->timing_count = n;
    } else if (d->seg && glcv_segment_timings(d->seg, d->timings, MAX_TIMINGS, &n, 0) == GLCV_OK && n > 0) {
        d->timing_count = n;
    }
    if (d->engine == GLCV_ENGINE_CPU)
        d->timing_count = 0;
}

/* Uploads an RGBA8 or GRAY8 (as red) image of the frames' size into a texture of the demo. */
static void upload(GLuint tex, const glcv_image *im)
{
    glBindTexture(GL_TEXTURE_2D, tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, (GLint)(glcv_image_stride(im) / (size_t)glcv_pixel_format_size(im->format)));
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, im->width, im->height, im->format == GLCV_PIXEL_GRAY8 ? GL_RED : GL_RGBA,
                    GL_UNSIGNED_BYTE, im->data);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
}

/* The CPU engine has no background texture, nor has vsam one in a GL_TEXTURE_2D: keep a copy in
 * the demo's texture for display. */
static void refresh_background_copy(demo *d)
{
    if (d->method == CLI_METHOD_VSAM) {
        if (d->sub && cli_subtractor_read_backgrounds(d->sub, &d->sub_background) == GLCV_OK)
            upload(d->background_tex, &d->sub_background);
        return;
    }
    if (d->engine != GLCV_ENGINE_CPU || !d->have_background)
        return;
    glcv_image bg = {0};
    if (glcv_image_alloc(d->width, d->height, GLCV_PIXEL_RGBA8, &bg) != GLCV_OK)
        return;
    if (glcv_segment_read_background(d->seg, &bg) == GLCV_OK) {
        glBindTexture(GL_TEXTURE_2D, d->background_tex);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
        glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, d->width, d->height, GL_RGBA, GL_UNSIGNED_BYTE, bg.data);
    }
    glcv_image_free(&bg);
}

/* (Re)creates the segmenter with the current parameters and `engine`, carrying the background
 * over. On failure the old one stays. */
int demo_make_segmenter(demo *d, glcv_engine_mode engine)
{
    glcv_segment_params p = d->seg_params;
    p.engine = engine;
    p.timing = 1;
    p.logger = d->logger;
    glcv_segment *seg = NULL;
    glcv_status st = glcv_segment_create(&p, &seg);
    if (st != GLCV_OK) {
        demo_set_message(d, "engine %s: %s", glcv_engine_mode_string(engine), glcv_status_string(st));
        return 0;
    }
    /* A new engine for a running demo: the values in use, zeros included (which the params
     * cannot express). */
    if (d->seg) {
        glcv_segment_set_ts(seg, d->seg_params.ts);
        glcv_segment_set_odc(seg, d->seg_params.odc);
        glcv_segment_set_iterations(seg, d->seg_params.iterations);
        glcv_segment_set_adapt_rate(seg, d->seg_params.adapt_rate);
    }
    if (d->seg && d->have_background && !d->learning) {
        glcv_image bg = {0};
        if (glcv_image_alloc(d->width, d->height, GLCV_PIXEL_RGBA8, &bg) == GLCV_OK &&
            glcv_segment_read_background(d->seg, &bg) == GLCV_OK)
            glcv_segment_set_background(seg, &bg);
        else
            d->have_background = 0;
        glcv_image_free(&bg);
    } else {
        d->have_background = 0;
    }
    glcv_segment_destroy(&d->seg);
    d->seg = seg;
    d->learning = 0;
    glcv_segment_params got;
    glcv_segment_get_params(seg, &got);
    d->engine = got.engine;
    d->timing_count = 0;
    refresh_background_copy(d);
    return 1;
}

void demo_start_learning(demo *d)
{
    glcv_status st = d->method != CLI_METHOD_ETH ? cli_subtractor_learn_begin(d->sub) : glcv_segment_learn_begin(d->seg);
    if (st != GLCV_OK)
        return;
    d->learning = 1;
    d->learn_count = 0;
    demo_set_message(d, "learning the background over %d frames", d->learn_frames);
}

void demo_grab_background(demo *d)
{
    if (!d->have_frame)
        return;
    if (d->method != CLI_METHOD_ETH) {
        if (d->method != CLI_METHOD_VSAM) {
            demo_set_message(d, "%s compares frames with each other: it keeps no background",
                             cli_method_names[d->method]);
            return;
        }
        d->learning = 0; /* setting the background starts learning anew: it replaces this one */
        if (cli_subtractor_set_background(d->sub, &d->sub_frame, "grabbing the background") == CLI_OK) {
            refresh_background_copy(d);
            demo_set_message(d, "background grabbed from frame %lld", (long long)d->last_index);
        }
        return;
    }
    if (d->learning) {
        glcv_segment_learn_end(d->seg); /* ends learning; the grab below replaces it */
        d->learning = 0;
    }
    glcv_status st = glcv_segment_set_background_texture(d->seg, d->input_tex);
    if (st == GLCV_OK) {
        d->have_background = 1;
        d->learned = 0;
        refresh_background_copy(d);
        demo_set_message(d, "background grabbed from frame %lld", (long long)d->last_index);
    } else {
        demo_set_message(d, "grabbing the background failed: %s", glcv_status_string(st));
    }
}

/* The synthetic scene's clean background, from a generator with the media's parameters. */
int demo_set_synthetic_background(demo *d)
{
    glcv_synth *synth = NULL;
    glcv_image bg = {0};
    int ok = glcv_synth_create(&d->media_params.synth, &synth) == GLCV_OK &&
             glcv_image_alloc(d->width, d->height, GLCV_PIXEL_RGB8, &bg) == GLCV_OK &&
             glcv_synth_background(synth, &bg) == GLCV_OK;
    if (ok && d->method == CLI_METHOD_ETH)
        ok = glcv_segment_set_background(d->seg, &bg) == GLCV_OK;
    else if (ok) /* vsam: learned from this one image, which ends learning */
        ok = cli_subtractor_set_background(d->sub, &bg, "the synthetic background") == CLI_OK;
    glcv_image_free(&bg);
    glcv_synth_destroy(&synth);
    if (ok && d->method != CLI_METHOD_ETH)
        d->learning = 0;
    if (ok && d->method == CLI_METHOD_ETH)
        d->have_background = 1;
    if (ok)
        refresh_background_copy(d);
    return ok;
}

/* ---- tracker -------------------------------------------------------------------------------- */

/* Whether the method's mask is the current frame's. */
int demo_have_mask(const demo *d)
{
    if (d->method != CLI_METHOD_ETH)
        return d->sub && !d->learning && d->have_frame && d->sub_have_mask;
    return d->seg && d->have_background && !d->learning && d->have_frame;
}

GLuint demo_mask_texture(const demo *d)
{
    if (d->method != CLI_METHOD_ETH)
        return d->mask_tex;
    return d->seg ? glcv_segment_mask_texture(d->seg) : 0;
}

/* The method's mask texture when tracking counts only the foreground and there is one; 0
 * otherwise. */
static GLuint track_mask_texture(demo *d)
{
    return d->track_mask && demo_have_mask(d) ? demo_mask_texture(d) : 0;
}

/* ---- the method ------------------------------------------------------------------------------ */

void demo_free_method(demo *d)
{
    cli_subtractor_destroy(&d->sub);
    glcv_image_free(&d->sub_frame);
    glcv_image_free(&d->sub_mask);
    glcv_image_free(&d->sub_background);
}

int demo_set_method(demo *d, int method)
{
    cli_subtractor *sub = NULL;
    if (method != CLI_METHOD_ETH) {
        cli_method m = {.method = method};
        glcv_status st = GLCV_OK;
        if (!d->sub_frame.data)
            st = glcv_image_alloc(d->width, d->height, GLCV_PIXEL_RGBA8, &d->sub_frame);
        if (st == GLCV_OK && !d->sub_mask.data)
            st = glcv_image_alloc(d->width, d->height, GLCV_PIXEL_GRAY8, &d->sub_mask);
        if (st == GLCV_OK && !d->sub_background.data)
            st = glcv_image_alloc(d->width, d->height, GLCV_PIXEL_RGBA8, &d->sub_background);
        if (st != GLCV_OK || cli_subtractor_make(&m, NULL, d->width, d->height, 1, 1, 0, d->engine, &d->logger, &sub) !=
                                 CLI_OK) {
            cli_subtractor_destroy(&sub);
            demo_set_message(d, "method %s: cannot create it (engine %s)", cli_method_names[method],
                             glcv_engine_mode_string(d->engine));
            return 0;
        }
    }
    if (d->learning && d->method == CLI_METHOD_ETH && glcv_segment_learn_end(d->seg) == GLCV_OK)
        d->have_background = 1; /* the segmenter keeps what it learned so far */
    d->learning = 0;
    cli_subtractor_destroy(&d->sub);
    d->sub = sub;
    d->sub_have_mask = 0;
    d->method = method;
    d->timing_count = 0;
    demo_set_message(d, "method: %s", cli_method_names[method]);
    if (method == CLI_METHOD_VSAM)
        demo_start_learning(d); /* its background is shown once learned */
    else
        refresh_background_copy(d);
    return 1;
}

void demo_reset(demo *d)
{
    if (d->method == CLI_METHOD_ETH) {
        glcv_segment_reset(d->seg);
        demo_set_message(d, "MRF prior reset");
    } else {
        glcv_bgsub_reset(d->sub->bgsub);
        d->sub_have_mask = 0;
        demo_set_message(d, "frame history reset");
    }
}

/* The tracker's engine for the segmenter's: CUDA when the segmenter runs on the GPU, glcv was
 * built with CUDA and the window's GL context is on a CUDA device (the tracker reads the
 * demo's textures there), else the CPU. */
static glcv_engine_mode wanted_track_engine(const demo *d)
{
    if (d->engine != GLCV_ENGINE_CPU && d->cuda.built && d->cuda.gl_device >= 0)
        return GLCV_ENGINE_CUDA;
    return GLCV_ENGINE_CPU;
}

/* (Re)creates the tracker for the segmenter's engine when it is not that one already, carrying
 * the objects over (their histograms and next search windows; ids may change). On failure the
 * old tracker stays. */
int demo_make_tracker(demo *d)
{
    glcv_engine_mode engine = wanted_track_engine(d);
    if (d->track && d->track_engine == engine)
        return 1;
    glcv_track_params p = GLCV_TRACK_PARAMS(.width = d->width, .height = d->height, .max_objects = MAX_BOXES,
                                            .window = GLCV_TRACK_WINDOW_ADAPTIVE, .engine = engine,
                                            .logger = d->logger);
    glcv_track *tr = NULL;
    glcv_status st = glcv_track_create(&p, &tr);
    if (st != GLCV_OK && engine == GLCV_ENGINE_CUDA) {
        demo_set_message(d, "CUDA tracker: %s; tracking on the CPU", glcv_status_string(st));
        p.engine = GLCV_ENGINE_CPU;
        st = glcv_track_create(&p, &tr);
    }
    if (st != GLCV_OK) {
        demo_set_message(d, "tracker: %s", glcv_status_string(st));
        return 0;
    }
    int kept = 0;
    for (int i = 0; i < d->object_count; i++) {
        tracked *o = &d->objects[i];
        glcv_track_hist h;
        int id = -1;
        glcv_rect window = o->have_result ? o->r.window : o->start;
        if (glcv_track_get_hist(d->track, o->id, &h) == GLCV_OK && glcv_track_add(tr, &h, window, &id) == GLCV_OK) {
            d->objects[kept] = *o;
            d->objects[kept].id = id;
            d->objects[kept].have_result = 0;
            d->objects[kept].start = window;
            kept++;
        }
    }
    d->object_count = kept;
    glcv_track_destroy(&d->track);
    d->track = tr;
    glcv_track_params got;
    glcv_track_get_params(tr, &got);
    d->track_engine = got.engine;
    d->track_failed = 0;
    return 1;
}

/* Starts tracking the object in `region` of the current frame: its model histogram is built
 * from there (foreground pixels only when tracking is masked). */
void demo_add_object(demo *d, glcv_rect region)
{
    if (!d->track || !d->have_frame)
        return;
    if (d->object_count >= MAX_BOXES) {
        demo_set_message(d, "at most %d tracked objects", MAX_BOXES);
        return;
    }
    glcv_track_hist h;
    int id = -1;
    glcv_status st = glcv_track_hist_compute_texture(d->track, d->input_tex, track_mask_texture(d), region, &h);
    if (st == GLCV_OK)
        st = glcv_track_add(d->track, &h, region, &id);
    if (st != GLCV_OK) {
        demo_set_message(d, "cannot track %d,%d %dx%d: %s", region.x, region.y, region.width, region.height,
                    glcv_status_string(st));
        return;
    }
    tracked *o = &d->objects[d->object_count++];
    *o = (tracked){.id = id, .start = region};
    demo_set_message(d, "object %d: tracking from %d,%d %dx%d", id, region.x, region.y, region.width, region.height);
}

void demo_remove_object(demo *d, int index)
{
    glcv_track_remove(d->track, d->objects[index].id);
    memmove(&d->objects[index], &d->objects[index + 1], (size_t)(d->object_count - index - 1) * sizeof(tracked));
    d->object_count--;
}

/* Tracks every object in the current frame: host pixels `f` with the CPU tracker and no mask,
 * else the input texture (and the segmenter's mask texture). */
static void track_objects(demo *d, const glcv_image *f)
{
    if (!d->track || d->object_count == 0)
        return;
    double t0 = cli_now();
    GLuint mask = track_mask_texture(d);
    glcv_status st;
    if (d->track_engine == GLCV_ENGINE_CPU && !mask)
        st = glcv_track_frame(d->track, f, NULL);
    else
        st = glcv_track_frame_texture(d->track, d->input_tex, mask);
    glcv_track_result res[MAX_BOXES];
    int n = 0;
    if (st == GLCV_OK)
        st = glcv_track_results(d->track, res, MAX_BOXES, &n);
    d->track_ms = (cli_now() - t0) * 1000.0;
    if (st != GLCV_OK) {
        if (!d->track_failed)
            demo_set_message(d, "tracking failed: %s", glcv_status_string(st));
        d->track_failed = 1;
        return;
    }
    d->track_failed = 0;
    if (n > MAX_BOXES)
        n = MAX_BOXES;
    for (int i = 0; i < d->object_count; i++)
        for (int k = 0; k < n; k++)
            if (res[k].id == d->objects[i].id) {
                d->objects[i].r = res[k];
                d->objects[i].have_result = 1;
            }
}

/* vsam, diff2, diff3: the host frame `f` to their object; the mask read back and uploaded. */
static void process_host_frame(demo *d, const glcv_image *f)
{
    glcv_status st = glcv_image_convert(f, &d->sub_frame);
    if (st == GLCV_OK && d->learning) {
        st = cli_subtractor_learn_add(d->sub, &d->sub_frame);
        if (st == GLCV_OK && ++d->learn_count >= d->learn_frames) {
            d->learning = 0;
            if (cli_subtractor_learn_end(d->sub, d->learn_count, 0) == CLI_OK) {
                refresh_background_copy(d);
                demo_set_message(d, "background learned from %d frames", d->learn_count);
            }
        }
        return;
    }
    if (st == GLCV_OK)
        st = cli_subtractor_frames(d->sub, &d->sub_frame, 0);
    if (st == GLCV_OK)
        st = cli_subtractor_read_masks(d->sub, &d->sub_mask);
    d->sub_have_mask = st == GLCV_OK;
    if (st != GLCV_OK) {
        demo_set_message(d, "%s failed: %s", cli_method_names[d->method], glcv_status_string(st));
        return;
    }
    upload(d->mask_tex, &d->sub_mask);
    refresh_background_copy(d);
    demo_read_timings(d);
}

/* Processes the frame now in input_tex (and in `f`, on the host). */
static void process_frame(demo *d, const glcv_image *f)
{
    if (d->method != CLI_METHOD_ETH) {
        process_host_frame(d, f);
        return;
    }
    if (d->learning) {
        glcv_segment_learn_add_texture(d->seg, d->input_tex);
        if (++d->learn_count >= d->learn_frames) {
            d->learning = 0;
            if (glcv_segment_learn_end(d->seg) == GLCV_OK) {
                d->have_background = 1;
                d->learned = 1;
                glcv_engine_mode engine = d->seg_params.engine;
                glcv_segment_get_params(d->seg, &d->seg_params); /* the calibrated values, shown */
                d->seg_params.engine = engine;
                refresh_background_copy(d);
                demo_set_message(d, "background learned from %d frames", d->learn_count);
            }
        }
        return;
    }
    if (!d->have_background)
        return;
    glcv_status st = glcv_segment_frame_texture(d->seg, d->input_tex, 0);
    if (st != GLCV_OK)
        demo_set_message(d, "segmenting failed: %s", glcv_status_string(st));
    demo_read_timings(d);
}

/* Reads and processes one frame if one comes within `timeout_ms`. */
void demo_step(demo *d, int timeout_ms)
{
    glcv_image f;
    glcv_media_frame_info info;
    glcv_status st = glcv_media_read(d->media, &f, &info, timeout_ms);
    if (st != GLCV_OK) {
        d->media_error = st;
        d->ended = 1;
        demo_set_message(d, "the input stopped: %s", glcv_status_string(st));
        return;
    }
    if (info.end_of_stream) {
        d->ended = 1;
        demo_set_message(d, "end of the input after %lld frames", (long long)d->frames_processed);
        return;
    }
    if (info.timed_out)
        return;
    glBindTexture(GL_TEXTURE_2D, d->input_tex);
    size_t tight = (size_t)f.width * 4;
    glPixelStorei(GL_UNPACK_ALIGNMENT, (f.stride % 4) ? 1 : 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, f.stride == tight ? 0 : (GLint)(f.stride / 4));
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, f.width, f.height, GL_RGBA, GL_UNSIGNED_BYTE, f.data);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    d->have_frame = 1;
    d->last_index = info.index;
    process_frame(d, &f);
    for (int i = 0; i < d->initial_count; i++)
        demo_add_object(d, d->initial[i]);
    d->initial_count = 0;
    track_objects(d, &f);
    d->frames_processed++;
    double t = cli_now();
    if (d->last_process > 0) {
        double inst = 1.0 / fmax(t - d->last_process, 1e-6);
        d->fps_process = d->fps_process > 0 ? 0.9 * d->fps_process + 0.1 * inst : inst;
    }
    d->last_process = t;
}
