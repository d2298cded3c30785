/* glcv-demo: live foreground/background segmentation in a window.
 *
 * A webcam, a video file, an image folder or sequence, an FFmpeg lavfi graph or the built-in
 * synthetic scene comes in through glcv's media input; each frame is uploaded once into a
 * texture of the window's GL context, segmented there by glcv (texture in, mask texture out),
 * and the window shows the engine's own textures without copies: input, background, mask, and
 * an overlay (mask tinted over the input, tracked objects' boxes drawn in GL), in a 2x2 grid or
 * one at a time. Keys and the mouse drive the segmenter; boxes dragged with the mouse (or given
 * with --track) are tracked with glcv_track (CAMSHIFT), from host pixels or the input texture,
 * optionally counting only the segmenter's foreground. A sidebar shows frame rates, capture
 * drops, the GPU time of each pass and the tracked objects. Text is stb_easy_font's quads, drawn
 * with a small shader.
 *
 * Uses the public API only; options and usage errors go through the tools' parser (tools/cli/cli.h).
 * Exit status: 0 ok, 1 runtime failure, 2 usage error.
 */
#define _POSIX_C_SOURCE 200809L

#include "demo.h"
#include "segmenter.h"

#include <math.h>
#include <stdio.h>
#include <time.h>

static const char usage_text[] =
    "usage: glcv-demo [source] [options]\n"
    "\n"
    "Live foreground/background segmentation (Griesser 2005) of a camera, a video or images, in a\n"
    "window: input, background, mask and overlay side by side.\n"
    "\n"
    "source (one of; default: the first webcam, else the synthetic scene):\n"
    "  --camera DEV        a V4L2 camera, e.g. /dev/video0\n"
    "  --video FILE        a video file\n"
    "  --frames DIR        a folder of images, in name order\n"
    "  --sequence PATTERN  numbered images, e.g. 'img_%04d.png'\n"
    "  --lavfi GRAPH       an FFmpeg lavfi graph, e.g. 'testsrc=size=640x480:rate=30'\n"
    "  --synthetic         the built-in synthetic scene (its clean background is used)\n"
    "\n"
    "input options:\n"
    "  --size WxH          frame size (cameras are asked for it; other sources are scaled)\n"
    "  --rate FPS          camera rate; rate of folders, sequences and the synthetic scene\n"
    "  --camera-format F   yuyv or mjpeg\n"
    "  --mode M            live: frames at the source's own rate, dropped when processing is\n"
    "                      slower (the default, except with --max-frames); every-frame: all\n"
    "                      frames in order, as fast as they are processed (the default with\n"
    "                      --max-frames, except for cameras and lavfi)\n"
    "  --no-loop           stop at the end of a video, folder or the synthetic scene (default:\n"
    "                      start again; with --max-frames: stop)\n"
    "  --loop              start again at the end, also with --max-frames\n"
    "\n"
    "segmenter options:\n"
    "  --method M          eth, vsam, diff2 or diff3 [eth; n switches]: the segmenter (its\n"
    "                      parameters below), VSAM adaptive background subtraction (learns its\n"
    "                      background like eth), two- or three-frame differencing (no background)\n"
    "  --engine E          auto, fragment, compute or cpu [auto: the faster in the window's\n"
    "                      OpenGL context]\n"
    "  --learn N           learn the background over the first N frames [30; the synthetic scene\n"
    "                      uses its clean background unless --learn is given]\n"
    "\n"
    CLI_SEGMENTER_HELP
    "\n"
    "tracking options (CAMSHIFT; the CUDA tracker when the segmenter runs on the GPU and glcv has\n"
    "CUDA on the window's device, else the CPU tracker):\n"
    "  --track X,Y,W,H     track the object in this box (pixels, top-left origin) from the first\n"
    "                      frame on: its hue histogram is taken from that frame (repeatable, up\n"
    "                      to 16 objects; the mouse adds more)\n"
    "  --mask-from-segmenter  hand the tracker the segmenter's mask with the frame's texture (m\n"
    "                         toggles; the DCF tracker reads the texture and does not use the mask)\n"
    "\n"
    "window options:\n"
    "  --view V            grid, input, background, mask or overlay [grid]\n"
    "  --scale F           size of the image panels relative to the frames (0.1..4)\n"
    "  --max-frames N      exit after N frames have been processed (or at the end of the input)\n"
    "  --screenshot FILE   write the window's last frame as PNG at exit\n"
    "  --show-help         start with the key help shown (h hides it)\n"
    "  -q, --quiet         no library messages below warnings\n"
    "  -h, --help          this help; press h in the window for the keys\n";

typedef struct options {
    cli_source src;
    const char *screenshot;
    int learn;
    int learn_given;
    double scale;
    int view;
    int quiet;
    int show_help;
    int method;              /* --method: CLI_METHOD_* */
    cli_segmenter segmenter; /* the segmenter's options, */
    glcv_segment_params seg; /* as the library's parameters */
    unsigned zeros;          /* those given as 0 (cli_segmenter_set_zeros) */
    glcv_rect track[MAX_BOXES];
    int track_count;
    int track_mask;
} options;

/* Parses the command line into `o` (which holds the defaults); *source_kind gets the source option
 * given (CLI_SOURCE_*), -1 for none. Returns CLI_OK, or CLI_USAGE or CLI_HELP after printing. */
static int parse_options(int argc, char **argv, options *o, int *source_kind)
{
    cli_source *src = &o->src;
    const cli_option table[] = {
        CLI_SOURCE_OPTIONS(src),
        {"--synthetic", NULL, &src->synthetic, .kind = CLI_FLAG, .count = &src->given[CLI_SOURCE_SYNTHETIC],
         .max_count = 1},
        {"--learn", NULL, &o->learn, .kind = CLI_INT, .min = 1, .max = 100000},
        {"--method", NULL, &o->method, .kind = CLI_CHOICE, .choices = cli_method_names, .what = "a method"},
        CLI_SEGMENTER_OPTIONS(&o->segmenter),
        {"--track", NULL, o->track, .kind = CLI_RECT, .min = 0, .max = CLI_MAX_SIDE, .count = &o->track_count,
         .max_count = MAX_BOXES},
        {"--mask-from-segmenter", NULL, &o->track_mask, .kind = CLI_FLAG},
        {"--view", NULL, &o->view, .kind = CLI_CHOICE, .choices = demo_view_names, .what = "a view"},
        {"--scale", NULL, &o->scale, .kind = CLI_REAL, .min = 0.1, .max = 4},
        {"--screenshot", NULL, &o->screenshot, .kind = CLI_STRING, .what = "file name"},
        {"--show-help", NULL, &o->show_help, .kind = CLI_FLAG},
        {"--quiet", "-q", &o->quiet, .kind = CLI_FLAG},
        {NULL},
    };
    cli_args args;
    int rc = cli_parse_expecting(table, argc - 1, argv + 1, &args, 0, 0, "");
    if (rc == CLI_OK)
        rc = cli_source_kind(src, source_kind);
    if (rc != CLI_OK)
        return rc;
    o->learn_given = cli_given(&args, &o->learn);
    /* Given values are explicit (never calibrated); zeros, which the params cannot express, go
     * through the setters once the segmenter exists. */
    o->seg = cli_segmenter_params(&o->segmenter);
    o->zeros = cli_segmenter_zeros(&o->segmenter, &args);
    return CLI_OK;
}

static void on_glfw_error(int code, const char *text)
{
    fprintf(stderr, "glcv-demo: GLFW error %d: %s\n", code, text);
}

int main(int argc, char **argv)
{
    static const cli_command command = {NULL, NULL, usage_text, NULL};
    cli_start("glcv-demo", &command);
    options o = {.src = CLI_SOURCE_INIT, .learn = 30};
    int source_kind = -1;
    int rc = parse_options(argc, argv, &o, &source_kind);
    if (rc != CLI_OK)
        return cli_exit_status(rc);
    setvbuf(stdout, NULL, _IOLBF, 0);

    demo d = {0};
    d.logger = (glcv_logger){glcv_log_stderr, NULL, o.quiet ? GLCV_LOG_WARN : GLCV_LOG_INFO};
    d.view = o.view;
    d.show_help = o.show_help;
    d.learn_frames = o.learn;
    d.last_index = -1;
    d.text_scale = 1.0f;
    d.seg_params = o.seg;

    /* The input first: its size decides the window's. Interactive runs play every source at its
     * own rate and loop; batch runs (--max-frames) take every frame of files once. */
    const int max_frames = o.src.max_frames;
    glcv_media_params media = cli_source_media_params(&o.src, source_kind, GLCV_PIXEL_RGBA8, !max_frames, &d.logger);
    if (!max_frames && media.mode == GLCV_MEDIA_MODE_DEFAULT)
        media.mode = GLCV_MEDIA_LIVE;
    if (cli_source_open(&media, &d.media) != CLI_OK)
        return CLI_FAIL;
    glcv_media_get_params(d.media, &d.media_params);
    d.width = d.media_params.width;
    d.height = d.media_params.height;
    for (int i = 0; i < o.track_count; i++) {
        const glcv_rect *b = &o.track[i];
        if (b->x >= d.width || b->y >= d.height) {
            glcv_media_destroy(&d.media);
            return cli_usage("--track %d,%d,%d,%d: outside the %dx%d frames", b->x, b->y, b->width, b->height,
                             d.width, d.height);
        }
        d.initial[d.initial_count++] = *b;
    }
    d.track_mask = o.track_mask;
    d.synthetic = d.media_params.source == GLCV_MEDIA_SYNTHETIC;
    if (media.source == GLCV_MEDIA_SOURCE_DEFAULT && d.synthetic)
        printf("glcv-demo: no webcam found: showing the synthetic scene\n");
    printf("glcv-demo: source: %s\n", glcv_media_describe(d.media));

    glfwSetErrorCallback(on_glfw_error);
    if (!glfwInit()) {
        fprintf(stderr, "glcv-demo: cannot open a window (no display?)\n");
        glcv_media_destroy(&d.media);
        return CLI_FAIL;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    float scale = (float)o.scale;
    if (scale <= 0) {
        /* Panels at full size when the window fits in 1600x1000, else smaller. */
        scale = fminf(1.0f, fminf((1600.0f - SIDEBAR_WIDTH) / (2.0f * d.width), 1000.0f / (2.0f * d.height)));
    }
    d.panel_scale = scale;
    int grid_w = (int)lroundf(2 * d.width * scale), grid_h = (int)lroundf(2 * d.height * scale);
    int win_w = grid_w + SIDEBAR_WIDTH, win_h = grid_h < 600 ? 600 : grid_h;
    char title[160];
    snprintf(title, sizeof title, "glcv-demo: %s", glcv_media_source_string(d.media_params.source));
    d.win = glfwCreateWindow(win_w, win_h, title, NULL, NULL);
    if (!d.win) {
        fprintf(stderr, "glcv-demo: cannot create a window with an OpenGL 3.3 core context\n");
        glfwTerminate();
        glcv_media_destroy(&d.media);
        return CLI_FAIL;
    }
    glfwMakeContextCurrent(d.win);
    glfwSwapInterval(1);
    demo_install_controls(&d);
    snprintf(d.renderer, sizeof d.renderer, "%s | %s", (const char *)glGetString(GL_RENDERER),
             (const char *)glGetString(GL_VERSION));

    int status = CLI_OK;
    d.seg_params.width = d.width;
    d.seg_params.height = d.height;
    if (!demo_create_gl_objects(&d)) {
        fprintf(stderr, "glcv-demo: OpenGL set-up failed\n");
        status = CLI_FAIL;
        goto done;
    }
    if (!demo_make_segmenter(&d, o.seg.engine)) {
        fprintf(stderr, "glcv-demo: %s\n", d.message);
        status = CLI_FAIL;
        goto done;
    }
    cli_segmenter_set_zeros(d.seg, o.zeros);
    glcv_segment_get_params(d.seg, &d.seg_params);
    printf("glcv-demo: engine %s on %s\n", glcv_engine_mode_string(d.engine), d.renderer);
    glcv_cuda_query(&d.cuda);
    if (demo_make_tracker(&d))
        printf("glcv-demo: tracker engine %s%s\n", glcv_engine_mode_string(d.track_engine),
               d.track_mask ? ", mask from segmenter" : "");
    if (o.method != CLI_METHOD_ETH && !demo_set_method(&d, o.method)) { /* vsam starts learning */
        fprintf(stderr, "glcv-demo: %s\n", d.message);
        status = CLI_FAIL;
        goto done;
    }
    int differencing = d.method == CLI_METHOD_DIFF2 || d.method == CLI_METHOD_DIFF3;
    if (d.synthetic && !o.learn_given && !differencing) {
        if (!demo_set_synthetic_background(&d))
            demo_start_learning(&d);
    } else if (d.method == CLI_METHOD_ETH) {
        demo_start_learning(&d);
    }

    /* With --max-frames the loop waits for every frame (a batch run); otherwise it keeps the
     * window responsive and shows frames as they come. */
    int wait_ms = max_frames > 0 ? 2000 : 5;
    while (!glfwWindowShouldClose(d.win)) {
        glfwPollEvents();
        if (!d.paused && !d.ended)
            demo_step(&d, wait_ms);
        int fw, fh;
        demo_framebuffer_size(&d, &fw, &fh);
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        demo_draw(&d, fw, fh);
        glfwSwapBuffers(d.win);
        double t = cli_now();
        if (d.last_draw > 0) {
            double inst = 1.0 / fmax(t - d.last_draw, 1e-6);
            d.fps_display = d.fps_display > 0 ? 0.9 * d.fps_display + 0.1 * inst : inst;
        }
        d.last_draw = t;
        if (max_frames > 0 && (d.frames_processed >= max_frames || d.ended))
            break;
        if (d.ended && !max_frames) {
            struct timespec ts = {0, 15000000L}; /* nothing more to read: do not spin */
            nanosleep(&ts, NULL);
        }
    }
    demo_read_timings(&d);
    if (o.screenshot) {
        if (d.method != CLI_METHOD_ETH)
            cli_subtractor_timings(d.sub, d.timings, MAX_TIMINGS, &d.timing_count, 1);
        else
            glcv_segment_timings(d.seg, d.timings, MAX_TIMINGS, &d.timing_count, 1);
        if (d.engine == GLCV_ENGINE_CPU)
            d.timing_count = 0;
        if (demo_save_screenshot(&d, o.screenshot))
            printf("glcv-demo: screenshot %s\n", o.screenshot);
        else
            status = CLI_FAIL;
    }
    if (d.media_error != GLCV_OK)
        status = CLI_FAIL;
    {
        glcv_media_stats ms = {0};
        glcv_media_get_stats(d.media, &ms);
        printf("glcv-demo: %lld frames processed, last source frame %lld, captured %lld, dropped %lld, "
               "engine %s, method %s\n",
               (long long)d.frames_processed, (long long)d.last_index, (long long)ms.captured,
               (long long)ms.dropped, glcv_engine_mode_string(d.engine), cli_method_names[d.method]);
        for (int i = 0; i < d.object_count; i++) {
            const tracked *t = &d.objects[i];
            if (!t->have_result) {
                printf("glcv-demo: object %d: not tracked yet (from %d,%d %dx%d)\n", t->id, t->start.x, t->start.y,
                       t->start.width, t->start.height);
                continue;
            }
            const glcv_track_result *r = &t->r;
            printf("glcv-demo: object %d: centre %.2f,%.2f size %.2fx%.2f angle %.1f bbox %d,%d,%d,%d "
                   "iterations %d lost %u\n",
                   r->id, r->cx, r->cy, r->width, r->height, r->angle, r->bbox.x, r->bbox.y, r->bbox.width,
                   r->bbox.height, r->iterations, r->lost);
        }
    }
    if (glGetError() != GL_NO_ERROR) {
        fprintf(stderr, "glcv-demo: an OpenGL error occurred\n");
        status = CLI_FAIL;
    }

done:
    glcv_track_destroy(&d.track);
    glcv_segment_destroy(&d.seg);
    demo_free_method(&d);
    demo_destroy_gl_objects(&d);
    glfwDestroyWindow(d.win);
    glfwTerminate();
    glcv_media_destroy(&d.media);
    return status;
}
