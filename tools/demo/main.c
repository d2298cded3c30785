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

#include "cli.h"

#include <glcv/glcv.h>
#include <glcv/media.h>

#include <epoxy/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <stb/stb_easy_font.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { MAX_BOXES = 16, MAX_TIMINGS = 32, SIDEBAR_WIDTH = 250, TEXT_CHARS = 8192, SOURCE_COUNT = 6 };
enum { VIEW_GRID = 0, VIEW_INPUT = 1, VIEW_BACKGROUND = 2, VIEW_MASK = 3, VIEW_OVERLAY = 4, VIEW_COUNT = 5 };
enum { PARAM_TS = 0, PARAM_ODC, PARAM_B1, PARAM_B2, PARAM_ITERATIONS, PARAM_COUNT };

/* Colours of tracked objects' boxes in the overlay: tracked, lost. */
#define TRACK_RGB 40, 220, 255
#define LOST_RGB 255, 150, 0

/* NULL-terminated: the choices of --view. */
static const char *const view_names[VIEW_COUNT + 1] = {"grid", "input", "background", "mask", "overlay", NULL};
static const char *const param_names[PARAM_COUNT] = {"Ts", "Odc", "B1", "B2", "iterations"};

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
    "\n"
    "segmenter options:\n"
    "  --engine E          auto, fragment, compute or cpu [auto]\n"
    "  --learn N           learn the background over the first N frames [30; the synthetic scene\n"
    "                      uses its clean background unless --learn is given]\n"
    "  --Ts F --Odc F --B1 F --B2 F --iterations N   segmenter parameters [310 5800 2 200 8]\n"
    "\n"
    "tracking options (CAMSHIFT; the CUDA tracker when the segmenter runs on the GPU and glcv has\n"
    "CUDA on the window's device, else the CPU tracker):\n"
    "  --track X,Y,W,H     track the object in this box (pixels, top-left origin) from the first\n"
    "                      frame on: its hue histogram is taken from that frame (repeatable, up\n"
    "                      to 16 objects; the mouse adds more)\n"
    "  --mask-from-segmenter  count only the segmenter's foreground when tracking (m toggles)\n"
    "\n"
    "window options:\n"
    "  --view V            grid, input, background, mask or overlay [grid]\n"
    "  --scale F           size of the image panels relative to the frames (0.1..4)\n"
    "  --max-frames N      exit after N frames have been processed (or at the end of the input)\n"
    "  --screenshot FILE   write the window's last frame as PNG at exit\n"
    "  --show-help         start with the key help shown (h hides it)\n"
    "  -q, --quiet         no library messages below warnings\n"
    "  -h, --help          this help; press h in the window for the keys\n";

static const char help_text[] =
    "keys and mouse\n"
    "\n"
    "h\tshow or hide this help\n"
    "space\tpause / resume\n"
    "b\tgrab the background now (the current frame)\n"
    "l\tlearn the background over the next N frames\n"
    "r\treset the MRF prior (next frame starts from an empty mask)\n"
    "up, down\tselect a parameter: Ts, Odc, B1, B2, iterations\n"
    "left, right\tchange it (with shift: bigger steps)\n"
    "e\tswitch engine: fragment, compute, cpu (recreates the segmenter)\n"
    "v, 0..4\tview: grid, input, background, mask, overlay\n"
    "mouse drag\tselect an object: track it from its hue (several allowed)\n"
    "right click\tstop tracking the object under the mouse\n"
    "c\tclear all tracked objects\n"
    "m\tmask from segmenter: track foreground pixels only (on/off)\n"
    "s\tsave a screenshot (glcv-demo-NNN.png)\n"
    "q, esc\tquit";

/* ---- GL helpers ----------------------------------------------------------------------------- */

static GLuint compile_shader(GLenum type, const char *src)
{
    GLuint sh = glCreateShader(type);
    glShaderSource(sh, 1, &src, NULL);
    glCompileShader(sh);
    GLint ok = 0;
    glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[2048];
        glGetShaderInfoLog(sh, sizeof log, NULL, log);
        fprintf(stderr, "glcv-demo: shader does not compile: %s\n", log);
        glDeleteShader(sh);
        return 0;
    }
    return sh;
}

static GLuint link_program(const char *vs_src, const char *fs_src)
{
    GLuint vs = compile_shader(GL_VERTEX_SHADER, vs_src);
    GLuint fs = compile_shader(GL_FRAGMENT_SHADER, fs_src);
    GLuint prog = 0;
    if (vs && fs) {
        prog = glCreateProgram();
        glAttachShader(prog, vs);
        glAttachShader(prog, fs);
        glBindAttribLocation(prog, 0, "a_pos");
        glBindAttribLocation(prog, 1, "a_color");
        glLinkProgram(prog);
        GLint ok = 0;
        glGetProgramiv(prog, GL_LINK_STATUS, &ok);
        if (!ok) {
            char log[2048];
            glGetProgramInfoLog(prog, sizeof log, NULL, log);
            fprintf(stderr, "glcv-demo: program does not link: %s\n", log);
            glDeleteProgram(prog);
            prog = 0;
        }
    }
    glDeleteShader(vs);
    glDeleteShader(fs);
    return prog;
}

/* Image panels: a quad from gl_VertexID, row 0 of the image at the top. Modes: 0 colour,
 * 1 single-channel mask as grey, 2 overlay (mask tinted red over the image), 3 a flat colour. */
static const char panel_vs[] = "#version 330 core\n"
                               "uniform vec4 u_rect; /* x0 y0 x1 y1 in NDC, y0 at the bottom */\n"
                               "out vec2 v_uv;\n"
                               "void main() {\n"
                               "    vec2 c = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));\n"
                               "    gl_Position = vec4(mix(u_rect.xy, u_rect.zw, c), 0.0, 1.0);\n"
                               "    v_uv = vec2(c.x, 1.0 - c.y);\n"
                               "}\n";
static const char panel_fs[] = "#version 330 core\n"
                               "uniform sampler2D u_image;\n"
                               "uniform sampler2D u_mask;\n"
                               "uniform int u_mode;\n"
                               "uniform vec3 u_color;\n"
                               "in vec2 v_uv;\n"
                               "out vec4 o_color;\n"
                               "void main() {\n"
                               "    vec3 c;\n"
                               "    if (u_mode == 1) c = vec3(texture(u_image, v_uv).r);\n"
                               "    else if (u_mode == 3) c = u_color;\n"
                               "    else c = texture(u_image, v_uv).rgb;\n"
                               "    if (u_mode == 2) c = mix(c, vec3(1.0, 0.0, 0.0), 0.5 * texture(u_mask, v_uv).r);\n"
                               "    o_color = vec4(c, 1.0);\n"
                               "}\n";
/* Text and shapes: triangles in window pixels (origin top left) with a colour per vertex. */
static const char flat_vs[] = "#version 330 core\n"
                              "uniform vec2 u_size;\n"
                              "in vec2 a_pos;\n"
                              "in vec4 a_color;\n"
                              "out vec4 v_color;\n"
                              "void main() {\n"
                              "    gl_Position = vec4(a_pos.x / u_size.x * 2.0 - 1.0, 1.0 - a_pos.y / u_size.y * 2.0, 0.0, 1.0);\n"
                              "    v_color = a_color;\n"
                              "}\n";
static const char flat_fs[] = "#version 330 core\n"
                              "in vec4 v_color;\n"
                              "out vec4 o_color;\n"
                              "void main() { o_color = v_color; }\n";

typedef struct vertex {
    float x, y;
    uint8_t rgba[4];
} vertex;

/* A growing list of triangles for the flat program. */
typedef struct shapes {
    vertex *v;
    int count;
    int capacity;
} shapes;

static void shapes_push(shapes *s, float x, float y, const uint8_t rgba[4])
{
    if (s->count == s->capacity) {
        int cap = s->capacity ? s->capacity * 2 : 4096;
        vertex *v = realloc(s->v, (size_t)cap * sizeof *v);
        if (!v)
            return;
        s->v = v;
        s->capacity = cap;
    }
    vertex *o = &s->v[s->count++];
    o->x = x;
    o->y = y;
    memcpy(o->rgba, rgba, 4);
}

static void shapes_rect(shapes *s, float x0, float y0, float x1, float y1, const uint8_t rgba[4])
{
    shapes_push(s, x0, y0, rgba);
    shapes_push(s, x1, y0, rgba);
    shapes_push(s, x1, y1, rgba);
    shapes_push(s, x0, y0, rgba);
    shapes_push(s, x1, y1, rgba);
    shapes_push(s, x0, y1, rgba);
}

/* A rectangle outline `t` pixels thick (GL core has no wide lines). */
static void shapes_frame(shapes *s, float x0, float y0, float x1, float y1, float t, const uint8_t rgba[4])
{
    shapes_rect(s, x0, y0, x1, y0 + t, rgba);
    shapes_rect(s, x0, y1 - t, x1, y1, rgba);
    shapes_rect(s, x0, y0 + t, x0 + t, y1 - t, rgba);
    shapes_rect(s, x1 - t, y0 + t, x1, y1 - t, rgba);
}

/* A line `t` pixels thick from (x0, y0) to (x1, y1), with square caps. */
static void shapes_line(shapes *s, float x0, float y0, float x1, float y1, float t, const uint8_t rgba[4])
{
    float dx = x1 - x0, dy = y1 - y0, len = sqrtf(dx * dx + dy * dy);
    if (len < 1e-3f)
        return;
    float ux = dx / len * t * 0.5f, uy = dy / len * t * 0.5f; /* along, half thickness */
    float ax = x0 - ux, ay = y0 - uy, bx = x1 + ux, by = y1 + uy;
    shapes_push(s, ax - uy, ay + ux, rgba);
    shapes_push(s, bx - uy, by + ux, rgba);
    shapes_push(s, bx + uy, by - ux, rgba);
    shapes_push(s, ax - uy, ay + ux, rgba);
    shapes_push(s, bx + uy, by - ux, rgba);
    shapes_push(s, ax + uy, ay - ux, rgba);
}

/* One run of text (no newlines or tabs) with stb_easy_font: quads of ~7-pixel-high glyphs. */
static void shapes_run(shapes *s, float x, float y, float scale, const char *text, size_t n, const uint8_t rgba[4])
{
    static char quads[512 * 270];
    char buf[512];
    if (n >= sizeof buf)
        n = sizeof buf - 1;
    memcpy(buf, text, n);
    buf[n] = '\0';
    unsigned char color[4] = {rgba[0], rgba[1], rgba[2], rgba[3]};
    int count = stb_easy_font_print(0, 0, buf, color, quads, (int)sizeof quads);
    static const int order[6] = {0, 1, 2, 0, 2, 3};
    for (int q = 0; q < count; q++) {
        for (int k = 0; k < 6; k++) {
            const float *p = (const float *)(quads + (size_t)(q * 4 + order[k]) * 16);
            shapes_push(s, x + p[0] * scale, y + p[1] * scale, rgba);
        }
    }
}

/* Text at (x, y) scaled by `scale`: lines of 12 units, and tabs that jump to the next multiple of
 * `tab` units (the font is proportional, so columns need them). */
static void shapes_text(shapes *s, float x, float y, float scale, const char *text, float tab, const uint8_t rgba[4])
{
    float cx = 0;
    const char *p = text;
    while (*p) {
        size_t n = strcspn(p, "\t\n");
        if (n > 0) {
            char run[512];
            size_t m = n < sizeof run - 1 ? n : sizeof run - 1;
            memcpy(run, p, m);
            run[m] = '\0';
            shapes_run(s, x + cx * scale, y, scale, run, m, rgba);
            cx += (float)stb_easy_font_width(run);
        }
        p += n;
        if (*p == '\t') {
            cx = (floorf((cx + 4) / tab) + 1) * tab;
            p++;
        } else if (*p == '\n') {
            cx = 0;
            y += 12 * scale;
            p++;
        }
    }
}

/* ---- the demo ------------------------------------------------------------------------------- */

typedef struct rect {
    float x, y, w, h; /* window pixels, origin top left */
} rect;

typedef struct box {
    float x0, y0, x1, y1; /* image pixels */
} box;

/* A tracked object: the tracker's id for it, the region it was selected from, and its result
 * for the last frame tracked (none yet right after it was added). */
typedef struct tracked {
    int id;
    glcv_rect start;
    int have_result;
    glcv_track_result r;
} tracked;

typedef struct demo {
    GLFWwindow *win;
    glcv_logger logger;

    /* input */
    glcv_media *media;
    glcv_media_params media_params; /* resolved */
    int width, height;
    int synthetic;
    int64_t frames_processed;
    int64_t last_index;
    int ended;               /* end of stream */
    glcv_status media_error; /* the input stopped with an error */
    int have_frame;

    /* segmenter */
    glcv_segment *seg;
    glcv_segment_params seg_params; /* the values the user set; engine as asked */
    glcv_engine_mode engine;        /* in use */
    int have_background;
    int learning, learn_count, learn_frames;
    glcv_timing timings[MAX_TIMINGS];
    int timing_count;

    /* tracker */
    glcv_track *track;
    glcv_engine_mode track_engine; /* in use */
    glcv_cuda_info cuda;
    int track_mask;                 /* count only the segmenter's foreground */
    tracked objects[MAX_BOXES];
    int object_count;
    glcv_rect initial[MAX_BOXES]; /* --track: added at the first frame */
    int initial_count;
    double track_ms;               /* wall time of the last frame's tracking */
    int track_failed;              /* the last frame's tracking failed (reported once) */

    /* GL objects of the demo (the engine's own textures are only displayed) */
    GLuint input_tex;      /* the current frame, uploaded once; segmented from here */
    GLuint background_tex; /* CPU engine only: a copy of its background for display */
    GLuint sampler;
    GLuint panel_prog, flat_prog, vao, flat_vao, flat_vbo;
    GLint u_rect, u_image, u_mask, u_mode, u_color, u_size;
    char renderer[128];

    /* interface */
    int view;
    int paused;
    int show_help;
    int selected;
    int dragging;
    box drag;
    double fps_display, fps_process;
    double last_draw, last_process;
    char message[256];
    double message_until;
    int screenshot_counter;
    float text_scale;
    float panel_scale; /* the grid's panels relative to the frames; 0 = as large as fit */
    int initial_fb_w, initial_fb_h;
} demo;

static void set_message(demo *d, const char *fmt, ...) CLI_PRINTF(2, 3);

static void set_message(demo *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->message, sizeof d->message, fmt, ap);
    va_end(ap);
    d->message_until = cli_now() + 4.0;
    printf("glcv-demo: %s\n", d->message);
    fflush(stdout);
}

/* The rectangles of the views in a framebuffer of fb_w x fb_h; cell[VIEW_INPUT..VIEW_OVERLAY]. */
static void layout(const demo *d, int fb_w, int fb_h, rect cell[VIEW_COUNT])
{
    float sidebar = SIDEBAR_WIDTH * d->text_scale;
    float area_w = (float)fb_w - sidebar, area_h = (float)fb_h;
    if (area_w < 1)
        area_w = 1;
    for (int v = 0; v < VIEW_COUNT; v++)
        cell[v] = (rect){0, 0, 0, 0};
    /* Panels packed from the top left: in the grid at the chosen scale until the window is
     * resized (then as large as fits), a single view as large as fits. */
    int n = d->view == VIEW_GRID ? 2 : 1;
    float s = fminf(area_w / (float)(n * d->width), area_h / (float)(n * d->height));
    if (d->view == VIEW_GRID && d->panel_scale > 0 && s > d->panel_scale)
        s = d->panel_scale;
    float w = (float)d->width * s, h = (float)d->height * s;
    if (d->view == VIEW_GRID) {
        static const int col[VIEW_COUNT] = {0, 0, 1, 0, 1}, row[VIEW_COUNT] = {0, 0, 0, 1, 1};
        for (int v = VIEW_INPUT; v < VIEW_COUNT; v++)
            cell[v] = (rect){(float)col[v] * w, (float)row[v] * h, w, h};
    } else {
        cell[d->view] = (rect){0, 0, w, h};
    }
}

static void framebuffer_size(const demo *d, int *w, int *h)
{
    glfwGetFramebufferSize(d->win, w, h);
}

/* The window position under the mouse, in framebuffer pixels. */
static void cursor_fb(const demo *d, double *x, double *y)
{
    int ww, wh, fw, fh;
    glfwGetWindowSize(d->win, &ww, &wh);
    framebuffer_size(d, &fw, &fh);
    glfwGetCursorPos(d->win, x, y);
    if (ww > 0 && wh > 0) {
        *x *= (double)fw / ww;
        *y *= (double)fh / wh;
    }
}

/* The view under a window point and the image coordinates there; -1 when none. */
static int hit_view(const demo *d, double x, double y, float *ix, float *iy)
{
    int fw, fh;
    framebuffer_size(d, &fw, &fh);
    rect cell[VIEW_COUNT];
    layout(d, fw, fh, cell);
    for (int v = VIEW_INPUT; v < VIEW_COUNT; v++) {
        const rect *r = &cell[v];
        if (r->w > 0 && x >= r->x && x < r->x + r->w && y >= r->y && y < r->y + r->h) {
            *ix = (float)((x - r->x) / r->w * d->width);
            *iy = (float)((y - r->y) / r->h * d->height);
            return v;
        }
    }
    return -1;
}

/* ---- segmenter ------------------------------------------------------------------------------ */

static void read_timings(demo *d)
{
    int n = 0;
    if (d->seg && glcv_segment_timings(d->seg, d->timings, MAX_TIMINGS, &n, 0) == GLCV_OK && n > 0)
        d->timing_count = n;
    if (d->engine == GLCV_ENGINE_CPU)
        d->timing_count = 0;
}

/* The CPU engine has no background texture: keep a copy in the demo's texture for display. */
static void refresh_background_copy(demo *d)
{
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
static int make_segmenter(demo *d, glcv_engine_mode engine)
{
    glcv_segment_params p = d->seg_params;
    p.engine = engine;
    p.timing = 1;
    p.logger = d->logger;
    glcv_segment *seg = NULL;
    glcv_status st = glcv_segment_create(&p, &seg);
    if (st != GLCV_OK) {
        set_message(d, "engine %s: %s", glcv_engine_mode_string(engine), glcv_status_string(st));
        return 0;
    }
    /* Values that zero cannot express in the params struct. */
    glcv_segment_set_ts(seg, d->seg_params.ts);
    glcv_segment_set_odc(seg, d->seg_params.odc);
    glcv_segment_set_iterations(seg, d->seg_params.iterations);
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

static void start_learning(demo *d)
{
    if (glcv_segment_learn_begin(d->seg) != GLCV_OK)
        return;
    d->learning = 1;
    d->learn_count = 0;
    set_message(d, "learning the background over %d frames", d->learn_frames);
}

static void grab_background(demo *d)
{
    if (!d->have_frame)
        return;
    if (d->learning) {
        glcv_segment_learn_end(d->seg); /* ends learning; the grab below replaces it */
        d->learning = 0;
    }
    glcv_status st = glcv_segment_set_background_texture(d->seg, d->input_tex);
    if (st == GLCV_OK) {
        d->have_background = 1;
        refresh_background_copy(d);
        set_message(d, "background grabbed from frame %lld", (long long)d->last_index);
    } else {
        set_message(d, "grabbing the background failed: %s", glcv_status_string(st));
    }
}

/* ---- tracker ------------------------------------------------------------------------------- */

/* Whether the segmenter's mask is the current frame's. */
static int have_mask(const demo *d)
{
    return d->seg && d->have_background && !d->learning && d->have_frame;
}

/* The segmenter's mask texture when tracking counts only the foreground and there is one; 0
 * otherwise. */
static GLuint track_mask_texture(demo *d)
{
    return d->track_mask && have_mask(d) ? glcv_segment_mask_texture(d->seg) : 0;
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
static int make_tracker(demo *d)
{
    glcv_engine_mode engine = wanted_track_engine(d);
    if (d->track && d->track_engine == engine)
        return 1;
    glcv_track_params p = GLCV_TRACK_PARAMS(.width = d->width, .height = d->height, .max_objects = MAX_BOXES,
                                            .engine = engine, .logger = d->logger);
    glcv_track *tr = NULL;
    glcv_status st = glcv_track_create(&p, &tr);
    if (st != GLCV_OK && engine == GLCV_ENGINE_CUDA) {
        set_message(d, "CUDA tracker: %s; tracking on the CPU", glcv_status_string(st));
        p.engine = GLCV_ENGINE_CPU;
        st = glcv_track_create(&p, &tr);
    }
    if (st != GLCV_OK) {
        set_message(d, "tracker: %s", glcv_status_string(st));
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
static void add_object(demo *d, glcv_rect region)
{
    if (!d->track || !d->have_frame)
        return;
    if (d->object_count >= MAX_BOXES) {
        set_message(d, "at most %d tracked objects", MAX_BOXES);
        return;
    }
    glcv_track_hist h;
    int id = -1;
    glcv_status st = glcv_track_hist_compute_texture(d->track, d->input_tex, track_mask_texture(d), region, &h);
    if (st == GLCV_OK)
        st = glcv_track_add(d->track, &h, region, &id);
    if (st != GLCV_OK) {
        set_message(d, "cannot track %d,%d %dx%d: %s", region.x, region.y, region.width, region.height,
                    glcv_status_string(st));
        return;
    }
    tracked *o = &d->objects[d->object_count++];
    *o = (tracked){.id = id, .start = region};
    set_message(d, "object %d: tracking from %d,%d %dx%d", id, region.x, region.y, region.width, region.height);
}

static void remove_object(demo *d, int index)
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
            set_message(d, "tracking failed: %s", glcv_status_string(st));
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

/* Processes the frame now in input_tex. */
static void process_frame(demo *d)
{
    if (d->learning) {
        glcv_segment_learn_add_texture(d->seg, d->input_tex);
        if (++d->learn_count >= d->learn_frames) {
            d->learning = 0;
            if (glcv_segment_learn_end(d->seg) == GLCV_OK) {
                d->have_background = 1;
                refresh_background_copy(d);
                set_message(d, "background learned from %d frames", d->learn_count);
            }
        }
        return;
    }
    if (!d->have_background)
        return;
    glcv_status st = glcv_segment_frame_texture(d->seg, d->input_tex, 0);
    if (st != GLCV_OK)
        set_message(d, "segmenting failed: %s", glcv_status_string(st));
    read_timings(d);
}

/* Reads and processes one frame if one comes within `timeout_ms`. */
static void step(demo *d, int timeout_ms)
{
    glcv_image f;
    glcv_media_frame_info info;
    glcv_status st = glcv_media_read(d->media, &f, &info, timeout_ms);
    if (st != GLCV_OK) {
        d->media_error = st;
        d->ended = 1;
        set_message(d, "the input stopped: %s", glcv_status_string(st));
        return;
    }
    if (info.end_of_stream) {
        d->ended = 1;
        set_message(d, "end of the input after %lld frames", (long long)d->frames_processed);
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
    process_frame(d);
    for (int i = 0; i < d->initial_count; i++)
        add_object(d, d->initial[i]);
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

/* ---- parameters ----------------------------------------------------------------------------- */

static double param_value(const demo *d, int which)
{
    switch (which) {
    case PARAM_TS: return d->seg_params.ts;
    case PARAM_ODC: return d->seg_params.odc;
    case PARAM_B1: return d->seg_params.b1;
    case PARAM_B2: return d->seg_params.b2;
    default: return d->seg_params.iterations;
    }
}

static void change_param(demo *d, int direction, int big)
{
    glcv_segment_params *p = &d->seg_params;
    double factor = big ? 2.0 : 1.25;
    switch (d->selected) {
    case PARAM_TS:
        p->ts = direction > 0 ? (p->ts < 1 ? 10.0f : (float)(p->ts * factor)) : (float)(p->ts / factor);
        if (p->ts < 1)
            p->ts = 0;
        if (p->ts > 1e7f)
            p->ts = 1e7f;
        glcv_segment_set_ts(d->seg, p->ts);
        break;
    case PARAM_ODC:
        p->odc += (float)(direction * (big ? 2500 : 250));
        if (p->odc < 0)
            p->odc = 0;
        if (p->odc > 1e7f)
            p->odc = 1e7f;
        glcv_segment_set_odc(d->seg, p->odc);
        break;
    case PARAM_B1:
        p->b1 = direction > 0 ? (float)fmin(p->b1 * factor, 1e6) : (float)fmax(p->b1 / factor, 0.01);
        glcv_segment_set_b1(d->seg, p->b1);
        break;
    case PARAM_B2:
        p->b2 = direction > 0 ? (float)fmin(p->b2 * factor, 1e6) : (float)fmax(p->b2 / factor, 0.01);
        glcv_segment_set_b2(d->seg, p->b2);
        break;
    default:
        p->iterations += direction * (big ? 10 : 1);
        if (p->iterations < 0)
            p->iterations = 0;
        if (p->iterations > 1000)
            p->iterations = 1000;
        glcv_segment_set_iterations(d->seg, p->iterations);
        break;
    }
}

/* ---- drawing -------------------------------------------------------------------------------- */

static void draw_panel(demo *d, const rect *r, int fb_w, int fb_h, GLuint tex, GLuint mask, int mode)
{
    if (r->w <= 0)
        return;
    float x0 = r->x / (float)fb_w * 2 - 1, x1 = (r->x + r->w) / (float)fb_w * 2 - 1;
    float y1 = 1 - r->y / (float)fb_h * 2, y0 = 1 - (r->y + r->h) / (float)fb_h * 2;
    int m = mode;
    if (!tex && mode != 3) {
        m = 3;
        glUniform3f(d->u_color, 0.08f, 0.08f, 0.1f);
    }
    glUniform4f(d->u_rect, x0, y0, x1, y1);
    glUniform1i(d->u_mode, m);
    glActiveTexture(GL_TEXTURE1);
    glBindTexture(GL_TEXTURE_2D, mask);
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, tex);
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
}

static int append(char *buf, size_t size, size_t *len, const char *fmt, ...) CLI_PRINTF(4, 5);

static int append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    if (*len >= size)
        return 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, size - *len, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len = (*len + (size_t)n < size) ? *len + (size_t)n : size - 1;
    return n;
}

/* Appends `text` broken into lines of at most `width` characters (at spaces where it can), each
 * indented by two spaces. */
static void append_wrapped(char *buf, size_t size, size_t *len, const char *text, int width)
{
    size_t n = strlen(text);
    for (size_t at = 0; at < n;) {
        size_t take = n - at;
        if (take > (size_t)width) {
            take = (size_t)width;
            for (size_t k = take; k > (size_t)width / 2; k--) {
                if (text[at + k] == ' ') {
                    take = k;
                    break;
                }
            }
        }
        append(buf, size, len, "  %.*s\n", (int)take, text + at);
        at += take;
        while (at < n && text[at] == ' ')
            at++;
    }
}

static void sidebar_text(demo *d, char *buf, size_t size)
{
    size_t len = 0;
    glcv_media_stats ms = {0};
    glcv_media_get_stats(d->media, &ms);
    const int cols = 38;
    append(buf, size, &len, "glcv-demo\t\th: help\n\n");
    append(buf, size, &len, "source\n");
    append_wrapped(buf, size, &len, glcv_media_describe(d->media), cols);
    append(buf, size, &len, "\nframe\t%lld  (%lld processed)\n", (long long)d->last_index,
           (long long)d->frames_processed);
    append(buf, size, &len, "processing\t%.1f fps\n", d->fps_process);
    append(buf, size, &len, "display\t%.1f fps\n", d->fps_display);
    append(buf, size, &len, "capture\t%lld captured, %lld dropped\n", (long long)ms.captured, (long long)ms.dropped);
    if (ms.decode_errors)
        append(buf, size, &len, "\t%lld decoding errors\n", (long long)ms.decode_errors);
    const char *state = d->media_error != GLCV_OK ? "input stopped (error)"
                        : d->ended                ? "end of input"
                        : d->paused               ? "paused"
                        : d->learning             ? "learning background"
                        : d->have_background      ? "segmenting"
                                                  : "no background (b or l)";
    append(buf, size, &len, "state\t%s", state);
    if (d->learning)
        append(buf, size, &len, " %d/%d", d->learn_count, d->learn_frames);
    append(buf, size, &len, "\n\nengine\t%s   (e: switch)\n", glcv_engine_mode_string(d->engine));
    append_wrapped(buf, size, &len, d->renderer, cols);
    append(buf, size, &len, "\nparameters (up/down, left/right)\n");
    for (int i = 0; i < PARAM_COUNT; i++)
        append(buf, size, &len, "%s %s\t%g\n", i == d->selected ? ">" : "  ", param_names[i], param_value(d, i));
    append(buf, size, &len, "\nGPU time per pass, ms\n");
    if (d->engine == GLCV_ENGINE_CPU) {
        append(buf, size, &len, "  (cpu engine: no GPU passes)\n");
    } else if (d->timing_count == 0) {
        append(buf, size, &len, "  (waiting for timer queries)\n");
    } else {
        double total = 0;
        for (int i = 0; i < d->timing_count; i++) {
            append(buf, size, &len, "  %s\t%.3f\tx%d\n", d->timings[i].name ? d->timings[i].name : "?",
                   d->timings[i].ms, d->timings[i].count);
            total += d->timings[i].ms;
        }
        append(buf, size, &len, "  total\t%.3f\n", total);
    }
    if (d->track) {
        append(buf, size, &len, "\ntracking\t%s engine, %.2f ms\n", glcv_engine_mode_string(d->track_engine),
               d->track_ms);
        append(buf, size, &len, "mask\t%s  (m: from segmenter)\n",
               !d->track_mask ? "off" : have_mask(d) ? "on" : "on (no mask yet)");
    } else {
        append(buf, size, &len, "\ntracking\tunavailable\n");
    }
    append(buf, size, &len, "objects\t%d  (mouse drag; c clears)\n", d->object_count);
    for (int i = 0; i < d->object_count; i++) {
        const tracked *o = &d->objects[i];
        if (o->have_result)
            append(buf, size, &len, "  %d  %.0f,%.0f  %.0fx%.0f  it %d%s\n", o->id, o->r.cx, o->r.cy, o->r.width,
                   o->r.height, o->r.iterations, o->r.lost ? "  LOST" : "");
        else
            append(buf, size, &len, "  %d  from %d,%d %dx%d\n", o->id, o->start.x, o->start.y, o->start.width,
                   o->start.height);
    }
    append(buf, size, &len, "\nview\t%s  (v, 0..4)\n", view_names[d->view]);
    if (d->view == VIEW_GRID)
        append(buf, size, &len, "\tinput | background\n\tmask | overlay\n");
    if (d->message[0] && cli_now() < d->message_until) {
        append(buf, size, &len, "\n");
        append_wrapped(buf, size, &len, d->message, cols);
    }
}

/* Draws a list of shapes with the flat program (blended). */
static void draw_shapes(demo *d, const shapes *s, int fb_w, int fb_h)
{
    if (s->count == 0)
        return;
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glUseProgram(d->flat_prog);
    glUniform2f(d->u_size, (float)fb_w, (float)fb_h);
    glBindVertexArray(d->flat_vao);
    glBindBuffer(GL_ARRAY_BUFFER, d->flat_vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)((size_t)s->count * sizeof(vertex)), s->v, GL_STREAM_DRAW);
    glDrawArrays(GL_TRIANGLES, 0, s->count);
    glDisable(GL_BLEND);
}

/* Draws the whole window into the bound draw framebuffer of fb_w x fb_h. */
static void draw(demo *d, int fb_w, int fb_h)
{
    glViewport(0, 0, fb_w, fb_h);
    glDisable(GL_BLEND);
    glClearColor(0.12f, 0.12f, 0.14f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);

    rect cell[VIEW_COUNT];
    layout(d, fb_w, fb_h, cell);
    GLuint mask = d->seg ? glcv_segment_mask_texture(d->seg) : 0;
    GLuint background = 0;
    if (d->have_background && !d->learning)
        background = d->engine == GLCV_ENGINE_CPU ? d->background_tex : glcv_segment_background_texture(d->seg);
    int segmented = d->have_background && !d->learning && d->have_frame;

    glUseProgram(d->panel_prog);
    glBindVertexArray(d->vao);
    glBindSampler(0, d->sampler);
    glBindSampler(1, d->sampler);
    draw_panel(d, &cell[VIEW_INPUT], fb_w, fb_h, d->have_frame ? d->input_tex : 0, 0, 0);
    draw_panel(d, &cell[VIEW_BACKGROUND], fb_w, fb_h, background, 0, 0);
    draw_panel(d, &cell[VIEW_MASK], fb_w, fb_h, segmented ? mask : 0, 0, 1);
    draw_panel(d, &cell[VIEW_OVERLAY], fb_w, fb_h, d->have_frame ? d->input_tex : 0, segmented ? mask : 0, 2);
    glBindSampler(0, 0);
    glBindSampler(1, 0);

    /* Shapes and text; the boxes of tracked objects separately, clipped to the overlay panel. */
    shapes s = {0}, boxes = {0};
    static const uint8_t white[4] = {235, 235, 235, 255}, grey[4] = {150, 150, 160, 255};
    static const uint8_t yellow[4] = {250, 220, 40, 255};
    static const uint8_t track_colour[4] = {TRACK_RGB, 255}, lost_colour[4] = {LOST_RGB, 255};
    static const uint8_t shade[4] = {10, 10, 14, 215};
    float ts = d->text_scale;
    static const char *const labels[VIEW_COUNT] = {"", "input", "background", "mask", "overlay"};
    for (int v = VIEW_INPUT; v < VIEW_COUNT; v++) {
        const rect *r = &cell[v];
        if (r->w <= 0)
            continue;
        if (v == VIEW_OVERLAY) {
            /* Tracked objects over the overlay, clipped to its panel. */
            float sx = r->w / (float)d->width, sy = r->h / (float)d->height;
            for (int i = 0; i < d->object_count; i++) {
                const tracked *o = &d->objects[i];
                const uint8_t *c = o->have_result && o->r.lost ? lost_colour : track_colour;
                char label[16];
                snprintf(label, sizeof label, "%d", o->id);
                if (o->have_result) {
                    float px[4], py[4];
                    glcv_track_box_points(o->r.cx, o->r.cy, o->r.width, o->r.height, o->r.angle, px, py);
                    for (int k = 0; k < 4; k++)
                        shapes_line(&boxes, r->x + px[k] * sx, r->y + py[k] * sy, r->x + px[(k + 1) % 4] * sx,
                                    r->y + py[(k + 1) % 4] * sy, 2, c);
                    float cx = r->x + o->r.cx * sx, cy = r->y + o->r.cy * sy;
                    shapes_rect(&boxes, cx - 2, cy - 2, cx + 2, cy + 2, c);
                    shapes_text(&boxes, r->x + (float)o->r.bbox.x * sx, r->y + (float)o->r.bbox.y * sy - 10 * ts, ts,
                                label, 72, c);
                } else {
                    const glcv_rect *b = &o->start;
                    shapes_frame(&boxes, r->x + (float)b->x * sx, r->y + (float)b->y * sy,
                                 r->x + (float)(b->x + b->width) * sx, r->y + (float)(b->y + b->height) * sy, 1, c);
                }
            }
        }
        if (v == VIEW_INPUT || v == VIEW_OVERLAY) {
            float sx = r->w / (float)d->width, sy = r->h / (float)d->height;
            if (d->dragging) {
                const box *bx = &d->drag;
                shapes_frame(&s, r->x + fminf(bx->x0, bx->x1) * sx, r->y + fminf(bx->y0, bx->y1) * sy,
                             r->x + fmaxf(bx->x0, bx->x1) * sx, r->y + fmaxf(bx->y0, bx->y1) * sy, 1, yellow);
            }
        }
    }
    /* Sidebar */
    float sb_x = (float)fb_w - SIDEBAR_WIDTH * ts;
    char text[TEXT_CHARS];
    sidebar_text(d, text, sizeof text);
    shapes_text(&s, sb_x + 8 * ts, 8 * ts, ts, text, 84, white);
    /* Panel labels in the sidebar's grey, under each panel's top-left corner, only when the panels
     * are large enough not to be covered much. */
    for (int v = VIEW_INPUT; v < VIEW_COUNT; v++) {
        const rect *r = &cell[v];
        if (r->w >= 160 && d->view != VIEW_GRID)
            shapes_text(&s, r->x + 4, r->y + r->h + 4 < fb_h - 10 ? r->y + r->h + 4 : r->y + 4, ts, labels[v], 72, grey);
    }
    if (d->show_help) {
        float area_w = (float)fb_w - SIDEBAR_WIDTH * ts;
        int lines = 1;
        for (const char *p = help_text; *p; p++)
            lines += *p == '\n';
        float hw = 480 * ts, hh = (float)(lines * 12 + 18) * ts;
        float hx = fmaxf(4, (area_w - hw) / 2), hy = fmaxf(4, ((float)fb_h - hh) / 2);
        shapes_rect(&s, hx, hy, hx + hw, hy + hh, shade);
        shapes_frame(&s, hx, hy, hx + hw, hy + hh, 1, grey);
        shapes_text(&s, hx + 12 * ts, hy + 12 * ts, ts, help_text, 80, white);
    }

    const rect *ov = &cell[VIEW_OVERLAY];
    if (boxes.count > 0 && ov->w > 0) {
        glEnable(GL_SCISSOR_TEST);
        glScissor((GLint)lroundf(ov->x), (GLint)lroundf((float)fb_h - (ov->y + ov->h)), (GLsizei)lroundf(ov->w),
                  (GLsizei)lroundf(ov->h));
        draw_shapes(d, &boxes, fb_w, fb_h);
        glDisable(GL_SCISSOR_TEST);
    }
    draw_shapes(d, &s, fb_w, fb_h);
    free(boxes.v);
    free(s.v);
    glBindVertexArray(0);
    glUseProgram(0);
}

/* Renders the window's content into an offscreen framebuffer of its size and writes it as PNG
 * (offscreen, so that windows covering this one do not matter). */
static int save_screenshot(demo *d, const char *path)
{
    int fw, fh;
    framebuffer_size(d, &fw, &fh);
    if (fw < 1 || fh < 1)
        return 0;
    GLuint tex = 0, fbo = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, fw, fh, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
    int ok = glCheckFramebufferStatus(GL_FRAMEBUFFER) == GL_FRAMEBUFFER_COMPLETE;
    glcv_image rgba = {0}, rgb = {0};
    if (ok) {
        draw(d, fw, fh);
        ok = glcv_image_alloc(fw, fh, GLCV_PIXEL_RGBA8, &rgba) == GLCV_OK &&
             glcv_image_alloc(fw, fh, GLCV_PIXEL_RGB8, &rgb) == GLCV_OK;
    }
    if (ok) {
        glPixelStorei(GL_PACK_ALIGNMENT, 4);
        glReadPixels(0, 0, fw, fh, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data);
        /* GL's rows go bottom-up. */
        size_t row = rgba.stride;
        uint8_t *tmp = malloc(row);
        if (tmp) {
            for (int y = 0; y < fh / 2; y++) {
                uint8_t *a = rgba.data + (size_t)y * row, *b = rgba.data + (size_t)(fh - 1 - y) * row;
                memcpy(tmp, a, row);
                memcpy(a, b, row);
                memcpy(b, tmp, row);
            }
            free(tmp);
        }
        glcv_image_convert(&rgba, &rgb);
        glcv_status st = glcv_image_save_png(path, &rgb, &d->logger);
        ok = st == GLCV_OK;
        if (!ok)
            fprintf(stderr, "glcv-demo: cannot write %s: %s\n", path, glcv_status_string(st));
    }
    glcv_image_free(&rgba);
    glcv_image_free(&rgb);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glDeleteFramebuffers(1, &fbo);
    glDeleteTextures(1, &tex);
    return ok;
}

/* ---- input events --------------------------------------------------------------------------- */

static void on_key(GLFWwindow *win, int key, int scancode, int action, int mods)
{
    (void)scancode;
    demo *d = glfwGetWindowUserPointer(win);
    if (action != GLFW_PRESS && action != GLFW_REPEAT)
        return;
    int big = (mods & GLFW_MOD_SHIFT) != 0;
    switch (key) {
    case GLFW_KEY_ESCAPE:
    case GLFW_KEY_Q: glfwSetWindowShouldClose(win, GLFW_TRUE); break;
    case GLFW_KEY_H:
    case GLFW_KEY_F1: d->show_help = !d->show_help; break;
    case GLFW_KEY_SPACE:
    case GLFW_KEY_P:
        d->paused = !d->paused;
        set_message(d, d->paused ? "paused" : "running");
        break;
    case GLFW_KEY_B: grab_background(d); break;
    case GLFW_KEY_L:
        if (d->learning)
            glcv_segment_learn_end(d->seg);
        d->learning = 0;
        start_learning(d);
        break;
    case GLFW_KEY_R:
        glcv_segment_reset(d->seg);
        set_message(d, "MRF prior reset");
        break;
    case GLFW_KEY_UP: d->selected = (d->selected + PARAM_COUNT - 1) % PARAM_COUNT; break;
    case GLFW_KEY_DOWN:
    case GLFW_KEY_TAB: d->selected = (d->selected + 1) % PARAM_COUNT; break;
    case GLFW_KEY_LEFT: change_param(d, -1, big); break;
    case GLFW_KEY_RIGHT: change_param(d, +1, big); break;
    case GLFW_KEY_E: {
        glcv_engine_mode next = d->engine == GLCV_ENGINE_FRAGMENT ? GLCV_ENGINE_COMPUTE
                                : d->engine == GLCV_ENGINE_COMPUTE ? GLCV_ENGINE_CPU
                                                                   : GLCV_ENGINE_FRAGMENT;
        int was_learning = d->learning;
        if (make_segmenter(d, next)) {
            make_tracker(d);
            set_message(d, "engine: %s, tracker %s", glcv_engine_mode_string(d->engine),
                        glcv_engine_mode_string(d->track_engine));
            if (was_learning || !d->have_background)
                start_learning(d);
        }
        break;
    }
    case GLFW_KEY_V: d->view = (d->view + 1) % VIEW_COUNT; break;
    case GLFW_KEY_0:
    case GLFW_KEY_1:
    case GLFW_KEY_2:
    case GLFW_KEY_3:
    case GLFW_KEY_4: d->view = key - GLFW_KEY_0; break;
    case GLFW_KEY_C:
        while (d->object_count > 0)
            remove_object(d, d->object_count - 1);
        set_message(d, "tracked objects cleared");
        break;
    case GLFW_KEY_M:
        d->track_mask = !d->track_mask;
        set_message(d, "tracking mask from segmenter: %s", d->track_mask ? "on" : "off");
        break;
    case GLFW_KEY_S: {
        char path[64];
        for (int tries = 0; tries < 1000; tries++) {
            snprintf(path, sizeof path, "glcv-demo-%03d.png", ++d->screenshot_counter);
            if (access(path, F_OK) != 0)
                break;
        }
        if (save_screenshot(d, path))
            set_message(d, "screenshot saved: %s", path);
        break;
    }
    default: break;
    }
}

static void on_mouse_button(GLFWwindow *win, int button, int action, int mods)
{
    (void)mods;
    demo *d = glfwGetWindowUserPointer(win);
    double x, y;
    cursor_fb(d, &x, &y);
    float ix, iy;
    int v = hit_view(d, x, y, &ix, &iy);
    if (button == GLFW_MOUSE_BUTTON_LEFT && action == GLFW_PRESS && v >= 0) {
        d->dragging = 1;
        d->drag = (box){ix, iy, ix, iy};
    } else if (button == GLFW_MOUSE_BUTTON_LEFT && action == GLFW_RELEASE && d->dragging) {
        d->dragging = 0;
        box b = {fminf(d->drag.x0, d->drag.x1), fminf(d->drag.y0, d->drag.y1), fmaxf(d->drag.x0, d->drag.x1),
                 fmaxf(d->drag.y0, d->drag.y1)};
        if (b.x1 - b.x0 >= 4 && b.y1 - b.y0 >= 4) {
            int bx = (int)floorf(b.x0), by = (int)floorf(b.y0);
            add_object(d, (glcv_rect){bx, by, (int)ceilf(b.x1) - bx, (int)ceilf(b.y1) - by});
        }
    } else if (button == GLFW_MOUSE_BUTTON_RIGHT && action == GLFW_PRESS && v >= 0) {
        for (int i = d->object_count - 1; i >= 0; i--) {
            const tracked *o = &d->objects[i];
            const glcv_rect *b = o->have_result ? &o->r.bbox : &o->start;
            if (ix >= (float)b->x && ix <= (float)(b->x + b->width) && iy >= (float)b->y &&
                iy <= (float)(b->y + b->height)) {
                int id = o->id;
                remove_object(d, i);
                set_message(d, "object %d removed", id);
                break;
            }
        }
    }
}

static void on_cursor(GLFWwindow *win, double x, double y)
{
    (void)x;
    (void)y;
    demo *d = glfwGetWindowUserPointer(win);
    if (!d->dragging)
        return;
    double fx, fy;
    cursor_fb(d, &fx, &fy);
    int fw, fh;
    framebuffer_size(d, &fw, &fh);
    rect cell[VIEW_COUNT];
    layout(d, fw, fh, cell);
    /* Keep dragging in image coordinates of whichever view the drag started in (all share them). */
    for (int v = VIEW_INPUT; v < VIEW_COUNT; v++) {
        const rect *r = &cell[v];
        if (r->w > 0 && fx >= r->x - r->w * 0.5 && fx < r->x + r->w * 1.5 && fy >= r->y - r->h * 0.5 &&
            fy < r->y + r->h * 1.5) {
            float ix = (float)((fx - r->x) / r->w * d->width), iy = (float)((fy - r->y) / r->h * d->height);
            d->drag.x1 = fminf(fmaxf(ix, 0), (float)d->width);
            d->drag.y1 = fminf(fmaxf(iy, 0), (float)d->height);
            break;
        }
    }
}

static void on_framebuffer_size(GLFWwindow *win, int w, int h)
{
    demo *d = glfwGetWindowUserPointer(win);
    if (w != d->initial_fb_w || h != d->initial_fb_h)
        d->panel_scale = 0; /* resized by the user: panels as large as fit */
}

static void on_glfw_error(int code, const char *text)
{
    fprintf(stderr, "glcv-demo: GLFW error %d: %s\n", code, text);
}

/* ---- set-up --------------------------------------------------------------------------------- */

static int create_gl_objects(demo *d)
{
    d->panel_prog = link_program(panel_vs, panel_fs);
    d->flat_prog = link_program(flat_vs, flat_fs);
    if (!d->panel_prog || !d->flat_prog)
        return 0;
    d->u_rect = glGetUniformLocation(d->panel_prog, "u_rect");
    d->u_image = glGetUniformLocation(d->panel_prog, "u_image");
    d->u_mask = glGetUniformLocation(d->panel_prog, "u_mask");
    d->u_mode = glGetUniformLocation(d->panel_prog, "u_mode");
    d->u_color = glGetUniformLocation(d->panel_prog, "u_color");
    d->u_size = glGetUniformLocation(d->flat_prog, "u_size");
    glUseProgram(d->panel_prog);
    glUniform1i(d->u_image, 0);
    glUniform1i(d->u_mask, 1);
    glUseProgram(0);

    glGenVertexArrays(1, &d->vao);
    glGenVertexArrays(1, &d->flat_vao);
    glGenBuffers(1, &d->flat_vbo);
    glBindVertexArray(d->flat_vao);
    glBindBuffer(GL_ARRAY_BUFFER, d->flat_vbo);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, sizeof(vertex), (const void *)0);
    glEnableVertexAttribArray(1);
    glVertexAttribPointer(1, 4, GL_UNSIGNED_BYTE, GL_TRUE, sizeof(vertex), (const void *)(2 * sizeof(float)));
    glBindVertexArray(0);
    glBindBuffer(GL_ARRAY_BUFFER, 0);

    /* A sampler object: the engine's textures are displayed without touching their own state. */
    glGenSamplers(1, &d->sampler);
    glSamplerParameteri(d->sampler, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glSamplerParameteri(d->sampler, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glSamplerParameteri(d->sampler, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
    glSamplerParameteri(d->sampler, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);

    GLuint tex[2];
    glGenTextures(2, tex);
    d->input_tex = tex[0];
    d->background_tex = tex[1];
    for (int i = 0; i < 2; i++) {
        glBindTexture(GL_TEXTURE_2D, tex[i]);
        glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, d->width, d->height, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
    }
    glBindTexture(GL_TEXTURE_2D, 0);
    return glGetError() == GL_NO_ERROR;
}

static void destroy_gl_objects(demo *d)
{
    GLuint tex[2] = {d->input_tex, d->background_tex};
    glDeleteTextures(2, tex);
    glDeleteSamplers(1, &d->sampler);
    glDeleteBuffers(1, &d->flat_vbo);
    glDeleteVertexArrays(1, &d->flat_vao);
    glDeleteVertexArrays(1, &d->vao);
    glDeleteProgram(d->panel_prog);
    glDeleteProgram(d->flat_prog);
}

/* The synthetic scene's clean background, from a generator with the media's parameters. */
static int set_synthetic_background(demo *d)
{
    glcv_synth *synth = NULL;
    glcv_image bg = {0};
    int ok = glcv_synth_create(&d->media_params.synth, &synth) == GLCV_OK &&
             glcv_image_alloc(d->width, d->height, GLCV_PIXEL_RGB8, &bg) == GLCV_OK &&
             glcv_synth_background(synth, &bg) == GLCV_OK && glcv_segment_set_background(d->seg, &bg) == GLCV_OK;
    glcv_image_free(&bg);
    glcv_synth_destroy(&synth);
    if (ok) {
        d->have_background = 1;
        refresh_background_copy(d);
    }
    return ok;
}

typedef struct options {
    glcv_media_params media;
    const char *location[SOURCE_COUNT]; /* per source option: its value (--synthetic: none) */
    int synthetic;
    int source_given[SOURCE_COUNT];     /* per source option: how often it was given (at most once) */
    cli_size size;
    int camera_format; /* index in camera_formats; -1: not given */
    int mode;          /* index in modes; -1: not given */
    const char *screenshot;
    int max_frames;
    int learn;
    int learn_given;
    double scale;
    int view;
    int quiet;
    int show_help;
    int no_loop;
    glcv_segment_params seg;
    double ts, odc, b1, b2;
    glcv_rect track[MAX_BOXES];
    int track_count;
    int track_mask;
} options;

/* The source options, in the order of options.location. */
static const struct {
    const char *name;
    glcv_media_source source;
} sources[SOURCE_COUNT] = {
    {"--camera", GLCV_MEDIA_CAMERA},
    {"--video", GLCV_MEDIA_VIDEO},
    {"--frames", GLCV_MEDIA_FRAMES_DIR},
    {"--sequence", GLCV_MEDIA_IMAGE_SEQUENCE},
    {"--lavfi", GLCV_MEDIA_LAVFI},
    {"--synthetic", GLCV_MEDIA_SYNTHETIC},
};

/* Parses the command line into `o` (which holds the defaults). Returns CLI_OK, or CLI_USAGE or
 * CLI_HELP after printing. */
static int parse_options(int argc, char **argv, options *o)
{
    static const char *const camera_formats[] = {"yuyv", "mjpeg", NULL};
    static const glcv_media_camera_format camera_format_values[] = {GLCV_MEDIA_CAMERA_YUYV,
                                                                    GLCV_MEDIA_CAMERA_MJPEG};
    static const char *const modes[] = {"live", "every-frame", NULL};
    static const glcv_media_mode mode_values[] = {GLCV_MEDIA_LIVE, GLCV_MEDIA_EVERY_FRAME};
    const cli_option table[] = {
        {"--camera", NULL, &o->location[0], .kind = CLI_STRING, .what = "device", .count = &o->source_given[0],
         .max_count = 1},
        {"--video", NULL, &o->location[1], .kind = CLI_STRING, .what = "file name", .count = &o->source_given[1],
         .max_count = 1},
        {"--frames", NULL, &o->location[2], .kind = CLI_STRING, .what = "folder", .count = &o->source_given[2],
         .max_count = 1},
        {"--sequence", NULL, &o->location[3], .kind = CLI_STRING, .what = "pattern", .count = &o->source_given[3],
         .max_count = 1},
        {"--lavfi", NULL, &o->location[4], .kind = CLI_STRING, .what = "graph", .count = &o->source_given[4],
         .max_count = 1},
        {"--synthetic", NULL, &o->synthetic, .kind = CLI_FLAG, .count = &o->source_given[5], .max_count = 1},
        {"--size", NULL, &o->size, .kind = CLI_SIZE},
        {"--rate", NULL, &o->media.frame_rate, .kind = CLI_REAL, .min = 0.1, .max = 1000},
        {"--camera-format", NULL, &o->camera_format, .kind = CLI_CHOICE, .choices = camera_formats, .any_case = 1,
         .what = "a camera format"},
        {"--mode", NULL, &o->mode, .kind = CLI_CHOICE, .choices = modes, .what = "a mode"},
        {"--no-loop", NULL, &o->no_loop, .kind = CLI_FLAG},
        {"--engine", NULL, &o->seg.engine, .kind = CLI_ENGINE, .choices = cli_gl_engines},
        {"--learn", NULL, &o->learn, .kind = CLI_INT, .min = 1, .max = 100000},
        {"--Ts", NULL, &o->ts, .kind = CLI_REAL, .min = 0, .max = 1e9},
        {"--Odc", NULL, &o->odc, .kind = CLI_REAL, .min = 0, .max = 1e9},
        {"--B1", NULL, &o->b1, .kind = CLI_REAL, .min = 1e-6, .max = 1e9},
        {"--B2", NULL, &o->b2, .kind = CLI_REAL, .min = 1e-6, .max = 1e9},
        {"--iterations", NULL, &o->seg.iterations, .kind = CLI_INT, .min = 0, .max = 1000},
        {"--track", NULL, o->track, .kind = CLI_RECT, .min = 0, .max = CLI_MAX_SIDE, .count = &o->track_count,
         .max_count = MAX_BOXES},
        {"--mask-from-segmenter", NULL, &o->track_mask, .kind = CLI_FLAG},
        {"--view", NULL, &o->view, .kind = CLI_CHOICE, .choices = view_names, .what = "a view"},
        {"--scale", NULL, &o->scale, .kind = CLI_REAL, .min = 0.1, .max = 4},
        {"--max-frames", NULL, &o->max_frames, .kind = CLI_INT, .min = 1, .max = 1000000000},
        {"--screenshot", NULL, &o->screenshot, .kind = CLI_STRING, .what = "file name"},
        {"--show-help", NULL, &o->show_help, .kind = CLI_FLAG},
        {"--quiet", "-q", &o->quiet, .kind = CLI_FLAG},
        {NULL},
    };
    cli_args args;
    int rc = cli_parse(table, argc - 1, argv + 1, &args);
    if (rc == CLI_OK)
        rc = cli_expect_args(&args, 0, 0, "");
    if (rc != CLI_OK)
        return rc;
    int first = -1;
    for (int k = 0; k < SOURCE_COUNT; k++) {
        if (!o->source_given[k])
            continue;
        if (first >= 0)
            return cli_usage("%s, %s: only one source may be given", sources[first].name, sources[k].name);
        first = k;
        o->media.source = sources[k].source;
        o->media.location = o->location[k];
    }
    o->media.width = o->size.width;
    o->media.height = o->size.height;
    if (o->camera_format >= 0)
        o->media.camera_format = camera_format_values[o->camera_format];
    if (o->mode >= 0)
        o->media.mode = mode_values[o->mode];
    o->learn_given = cli_given(&args, &o->learn);
    o->seg.ts = (float)o->ts;
    o->seg.odc = (float)o->odc;
    o->seg.b1 = (float)o->b1;
    o->seg.b2 = (float)o->b2;
    return CLI_OK;
}

int main(int argc, char **argv)
{
    static const cli_command command = {NULL, NULL, usage_text, NULL};
    cli_start("glcv-demo", &command);
    options o = {0};
    o.camera_format = -1;
    o.mode = -1;
    o.learn = 30;
    o.ts = 310;
    o.odc = 5800;
    o.b1 = 2;
    o.b2 = 200;
    o.seg.iterations = 8;
    int rc = parse_options(argc, argv, &o);
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
    o.media.format = GLCV_PIXEL_RGBA8;
    if (!o.max_frames) {
        if (o.media.mode == GLCV_MEDIA_MODE_DEFAULT)
            o.media.mode = GLCV_MEDIA_LIVE;
        o.media.loop = !o.no_loop;
    }
    o.media.logger = d.logger;
    glcv_status st = glcv_media_create(&o.media, &d.media);
    if (st != GLCV_OK) {
        fprintf(stderr, "glcv-demo: cannot open the input: %s\n", glcv_status_string(st));
        return CLI_FAIL;
    }
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
    if (o.media.source == GLCV_MEDIA_SOURCE_DEFAULT && d.synthetic)
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
    float scale = o.scale;
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
    glfwSetWindowUserPointer(d.win, &d);
    glfwSetKeyCallback(d.win, on_key);
    glfwSetMouseButtonCallback(d.win, on_mouse_button);
    glfwSetCursorPosCallback(d.win, on_cursor);
    framebuffer_size(&d, &d.initial_fb_w, &d.initial_fb_h);
    glfwSetFramebufferSizeCallback(d.win, on_framebuffer_size);
    snprintf(d.renderer, sizeof d.renderer, "%s | %s", (const char *)glGetString(GL_RENDERER),
             (const char *)glGetString(GL_VERSION));

    int status = CLI_OK;
    d.seg_params.width = d.width;
    d.seg_params.height = d.height;
    if (!create_gl_objects(&d)) {
        fprintf(stderr, "glcv-demo: OpenGL set-up failed\n");
        status = CLI_FAIL;
        goto done;
    }
    if (!make_segmenter(&d, o.seg.engine)) {
        fprintf(stderr, "glcv-demo: %s\n", d.message);
        status = CLI_FAIL;
        goto done;
    }
    printf("glcv-demo: engine %s on %s\n", glcv_engine_mode_string(d.engine), d.renderer);
    glcv_cuda_query(&d.cuda);
    if (make_tracker(&d))
        printf("glcv-demo: tracker engine %s%s\n", glcv_engine_mode_string(d.track_engine),
               d.track_mask ? ", mask from segmenter" : "");
    if (d.synthetic && !o.learn_given) {
        if (!set_synthetic_background(&d))
            start_learning(&d);
    } else {
        start_learning(&d);
    }

    /* With --max-frames the loop waits for every frame (a batch run); otherwise it keeps the
     * window responsive and shows frames as they come. */
    int wait_ms = o.max_frames > 0 ? 2000 : 5;
    while (!glfwWindowShouldClose(d.win)) {
        glfwPollEvents();
        if (!d.paused && !d.ended)
            step(&d, wait_ms);
        int fw, fh;
        framebuffer_size(&d, &fw, &fh);
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        draw(&d, fw, fh);
        glfwSwapBuffers(d.win);
        double t = cli_now();
        if (d.last_draw > 0) {
            double inst = 1.0 / fmax(t - d.last_draw, 1e-6);
            d.fps_display = d.fps_display > 0 ? 0.9 * d.fps_display + 0.1 * inst : inst;
        }
        d.last_draw = t;
        if (o.max_frames > 0 && (d.frames_processed >= o.max_frames || d.ended))
            break;
        if (d.ended && !o.max_frames) {
            struct timespec ts = {0, 15000000L}; /* nothing more to read: do not spin */
            nanosleep(&ts, NULL);
        }
    }
    read_timings(&d);
    if (o.screenshot) {
        glcv_segment_timings(d.seg, d.timings, MAX_TIMINGS, &d.timing_count, 1);
        if (d.engine == GLCV_ENGINE_CPU)
            d.timing_count = 0;
        if (save_screenshot(&d, o.screenshot))
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
               "engine %s\n",
               (long long)d.frames_processed, (long long)d.last_index, (long long)ms.captured,
               (long long)ms.dropped, glcv_engine_mode_string(d.engine));
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
    destroy_gl_objects(&d);
    glfwDestroyWindow(d.win);
    glfwTerminate();
    glcv_media_destroy(&d.media);
    return status;
}
