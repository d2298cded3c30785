/* glcv-demo's shared part: the state of the running demo and the functions its files call on each
 * other. Internal to glcv-demo, not installed; public glcv API and the tools' cli.h only.
 *
 *   main.c      options, start-up, the main loop, shut-down
 *   pipeline.c  a frame's way: media input, input texture, segmenter, tracker
 *   render.c    the window's content: GL objects, layout, panels, overlay, screenshots
 *   sidebar.c   the sidebar's text and the message line
 *   shapes.c    triangles and text for the flat program
 *   controls.c  keys and mouse, the parameters they change, the key help
 *
 * Everything runs on the main thread, with the window's GL context current. */
#ifndef GLCV_TOOLS_DEMO_H
#define GLCV_TOOLS_DEMO_H

#include "cli.h"
#include "source.h"
#include "subtractor.h"

#include <glcv/glcv.h>
#include <glcv/media.h>

#include <epoxy/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <stddef.h>
#include <stdint.h>

enum { MAX_BOXES = 16, MAX_TIMINGS = 32, SIDEBAR_WIDTH = 250 };
enum { VIEW_GRID = 0, VIEW_INPUT = 1, VIEW_BACKGROUND = 2, VIEW_MASK = 3, VIEW_OVERLAY = 4, VIEW_COUNT = 5 };
enum { PARAM_TS = 0, PARAM_ODC, PARAM_B1, PARAM_B2, PARAM_ITERATIONS, PARAM_COUNT };

/* ---- types ---------------------------------------------------------------------------------- */

/* A vertex of the flat program: window pixels, colour. */
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

/* ---- the demo's state ----------------------------------------------------------------------- */

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
    int learned; /* the background was learned (and calibrated: an engine switch learns again) */
    glcv_timing timings[MAX_TIMINGS];
    int timing_count;

    /* method (CLI_METHOD_*; n switches): eth is the segmenter above, on the input texture; vsam,
     * diff2 and diff3 run in `sub` on the host frames, their mask read back and uploaded */
    int method;
    cli_subtractor *sub;
    glcv_image sub_frame;      /* RGBA8: the current frame, for grabbing a background */
    glcv_image sub_mask;       /* GRAY8: its mask */
    glcv_image sub_background; /* RGBA8: vsam's background, for display */
    int sub_have_mask;         /* sub_mask is the current frame's */

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
    GLuint background_tex; /* CPU engine and vsam: a copy of the background for display */
    GLuint mask_tex;       /* vsam, diff2, diff3: their mask for display */
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

/* ---- shapes.c: appending to a list of triangles --------------------------------------------- */

void shapes_rect(shapes *s, float x0, float y0, float x1, float y1, const uint8_t rgba[4]);
void shapes_frame(shapes *s, float x0, float y0, float x1, float y1, float t, const uint8_t rgba[4]);
void shapes_line(shapes *s, float x0, float y0, float x1, float y1, float t, const uint8_t rgba[4]);
void shapes_text(shapes *s, float x, float y, float scale, const char *text, float tab, const uint8_t rgba[4]);

/* ---- pipeline.c ----------------------------------------------------------------------------- */

/* Reads and processes one frame if one comes within `timeout_ms`. */
void demo_step(demo *d, int timeout_ms);
/* Reads the segmenter's pass timings into d->timings (none with the CPU engine). */
void demo_read_timings(demo *d);
/* (Re)creates the segmenter with d->seg_params and `engine`, carrying the background over; on
 * failure the old one stays and d->message says why. Returns 1 on success. */
int demo_make_segmenter(demo *d, glcv_engine_mode engine);
void demo_start_learning(demo *d);
void demo_grab_background(demo *d);
/* Sets the synthetic scene's clean background (eth's, or vsam's). Returns 1 on success. */
int demo_set_synthetic_background(demo *d);
/* Whether the method's mask is the current frame's. */
int demo_have_mask(const demo *d);
/* The method's mask texture (GL_TEXTURE_2D, 1.0 foreground in red); 0 when there is none. */
GLuint demo_mask_texture(const demo *d);
/* Switches to method `method` (CLI_METHOD_*): creates its object with the segmenter's engine (the
 * eth segmenter stays as it is); vsam starts learning. Returns 1 on success (the old method stays
 * on failure; d->message says why). */
int demo_set_method(demo *d, int method);
/* Forgets the temporal state: eth's MRF prior, the others' frame history. */
void demo_reset(demo *d);
/* Frees the method's object and buffers. */
void demo_free_method(demo *d);
/* (Re)creates the tracker for the segmenter's engine, carrying the objects over. Returns 1 on
 * success (the old tracker stays on failure). */
int demo_make_tracker(demo *d);
void demo_add_object(demo *d, glcv_rect region);
void demo_remove_object(demo *d, int index);

/* ---- render.c ------------------------------------------------------------------------------- */

/* The view names, NULL-terminated (the choices of --view). */
extern const char *const demo_view_names[VIEW_COUNT + 1];

int demo_create_gl_objects(demo *d);
void demo_destroy_gl_objects(demo *d);
void demo_framebuffer_size(const demo *d, int *w, int *h);
/* The rectangles of the views in a framebuffer of fb_w x fb_h; cell[VIEW_INPUT..VIEW_OVERLAY]. */
void demo_layout(const demo *d, int fb_w, int fb_h, rect cell[VIEW_COUNT]);
/* Draws the whole window into the bound draw framebuffer of fb_w x fb_h. */
void demo_draw(demo *d, int fb_w, int fb_h);
/* Writes the window's content as PNG. Returns 1 on success. */
int demo_save_screenshot(demo *d, const char *path);

/* ---- sidebar.c ------------------------------------------------------------------------------ */

/* Sets the message line (shown for a few seconds) and prints it. */
void demo_set_message(demo *d, const char *fmt, ...) CLI_PRINTF(2, 3);
void demo_sidebar_text(demo *d, char *buf, size_t size);

/* ---- controls.c ----------------------------------------------------------------------------- */

/* The key help, lines of "keys\twhat they do". */
extern const char demo_help_text[];

/* Sets the window's key, mouse and resize callbacks (d is the window's user pointer). */
void demo_install_controls(demo *d);
double demo_param_value(const demo *d, int which);

#endif
