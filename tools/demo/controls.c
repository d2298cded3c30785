/* glcv-demo: the keys and the mouse (GLFW callbacks), the segmenter parameters they change, and
 * the key help the window shows. See demo.h. */
#define _POSIX_C_SOURCE 200809L

#include "demo.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

const char demo_help_text[] =
    "keys and mouse\n"
    "\n"
    "h\tshow or hide this help\n"
    "space\tpause / resume\n"
    "b\tgrab the background now (the current frame)\n"
    "l\tlearn the background over the next N frames\n"
    "r\treset the MRF prior (next frame starts from an empty mask); other\n"
    "\tmethods: the frame history\n"
    "n\tswitch method: eth, vsam, diff2, diff3 (vsam learns its background)\n"
    "up, down\tselect a parameter of eth: Ts, Odc, B1, B2, iterations\n"
    "left, right\tchange it (with shift: bigger steps)\n"
    "e\tswitch engine: fragment, compute, cpu (recreates the segmenter)\n"
    "v, 0..4\tview: grid, input, background, mask, overlay\n"
    "mouse drag\tselect an object: track it from its hue (several allowed)\n"
    "right click\tstop tracking the object under the mouse\n"
    "c\tclear all tracked objects\n"
    "m\tmask from segmenter: track foreground pixels only (on/off)\n"
    "s\tsave a screenshot (glcv-demo-NNN.png)\n"
    "q, esc\tquit";

/* ---- where the mouse is --------------------------------------------------------------------- */

/* The window position under the mouse, in framebuffer pixels. */
static void cursor_fb(const demo *d, double *x, double *y)
{
    int ww, wh, fw, fh;
    glfwGetWindowSize(d->win, &ww, &wh);
    demo_framebuffer_size(d, &fw, &fh);
    glfwGetCursorPos(d->win, x, y);
    if (ww > 0 && wh > 0) {
        *x *= (double)fw / ww;
        *y *= (double)fh / wh;
    }
}

/* The view under a window point and the image coordinates there; -1 when none. Each view reaches
 * `margin` times its size beyond its edges (where the coordinates are outside the image). */
static int hit_view(const demo *d, double x, double y, double margin, float *ix, float *iy)
{
    int fw, fh;
    demo_framebuffer_size(d, &fw, &fh);
    rect cell[VIEW_COUNT];
    demo_layout(d, fw, fh, cell);
    for (int v = VIEW_INPUT; v < VIEW_COUNT; v++) {
        const rect *r = &cell[v];
        if (r->w > 0 && x >= r->x - r->w * margin && x < r->x + r->w * (1 + margin) && y >= r->y - r->h * margin &&
            y < r->y + r->h * (1 + margin)) {
            *ix = (float)((x - r->x) / r->w * d->width);
            *iy = (float)((y - r->y) / r->h * d->height);
            return v;
        }
    }
    return -1;
}

/* ---- parameters ----------------------------------------------------------------------------- */

double demo_param_value(const demo *d, int which)
{
    switch (which) {
    case PARAM_TS: return d->seg_params.ts;
    case PARAM_ODC: return d->seg_params.odc;
    case PARAM_B1: return d->seg_params.b1;
    case PARAM_B2: return d->seg_params.b2;
    default: return d->seg_params.iterations;
    }
}

/* A step of B1 or B2: a factor up or down, kept in 0.01..1e6. */
static float scale_step(float v, int direction, double factor)
{
    return direction > 0 ? (float)fmin(v * factor, 1e6) : (float)fmax(v / factor, 0.01);
}

static void change_param(demo *d, int direction, int big)
{
    glcv_segment_params *p = &d->seg_params;
    double factor = big ? 2.0 : 1.25;
    switch (d->selected) {
    case PARAM_TS:
        /* Up from 0 goes to 10; below 1 is 0. */
        p->ts = direction > 0 ? (p->ts < 1 ? 10.0f : (float)(p->ts * factor)) : (float)(p->ts / factor);
        p->ts = p->ts < 1 ? 0 : fminf(p->ts, 1e7f);
        glcv_segment_set_ts(d->seg, p->ts);
        break;
    case PARAM_ODC:
        p->odc = fminf(fmaxf(p->odc + (float)(direction * (big ? 2500 : 250)), 0), 1e7f);
        glcv_segment_set_odc(d->seg, p->odc);
        break;
    case PARAM_B1:
        p->b1 = scale_step(p->b1, direction, factor);
        glcv_segment_set_b1(d->seg, p->b1);
        break;
    case PARAM_B2:
        p->b2 = scale_step(p->b2, direction, factor);
        glcv_segment_set_b2(d->seg, p->b2);
        break;
    default:
        p->iterations += direction * (big ? 10 : 1);
        p->iterations = p->iterations < 0 ? 0 : p->iterations > 1000 ? 1000 : p->iterations;
        glcv_segment_set_iterations(d->seg, p->iterations);
        break;
    }
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
        demo_set_message(d, d->paused ? "paused" : "running");
        break;
    case GLFW_KEY_B: demo_grab_background(d); break;
    case GLFW_KEY_L:
        if (d->learning && d->method == CLI_METHOD_ETH)
            glcv_segment_learn_end(d->seg);
        d->learning = 0;
        demo_start_learning(d); /* learning again starts anew */
        break;
    case GLFW_KEY_R: demo_reset(d); break;
    case GLFW_KEY_N: demo_set_method(d, (d->method + 1) % CLI_METHOD_COUNT); break;
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
        if (demo_make_segmenter(d, next)) {
            demo_make_tracker(d);
            if (d->method != CLI_METHOD_ETH) /* the method's object on the new engine too */
                demo_set_method(d, d->method);
            demo_set_message(d, "engine: %s, tracker %s", glcv_engine_mode_string(d->engine),
                        glcv_engine_mode_string(d->track_engine));
            if (d->method == CLI_METHOD_ETH && (was_learning || !d->have_background || d->learned))
                demo_start_learning(d); /* per-pixel noise factors are measured anew */
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
            demo_remove_object(d, d->object_count - 1);
        demo_set_message(d, "tracked objects cleared");
        break;
    case GLFW_KEY_M:
        d->track_mask = !d->track_mask;
        demo_set_message(d, "tracking mask from segmenter: %s", d->track_mask ? "on" : "off");
        break;
    case GLFW_KEY_S: {
        char path[64];
        for (int tries = 0; tries < 1000; tries++) {
            snprintf(path, sizeof path, "glcv-demo-%03d.png", ++d->screenshot_counter);
            if (access(path, F_OK) != 0)
                break;
        }
        if (demo_save_screenshot(d, path))
            demo_set_message(d, "screenshot saved: %s", path);
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
    int v = hit_view(d, x, y, 0, &ix, &iy);
    if (button == GLFW_MOUSE_BUTTON_LEFT && action == GLFW_PRESS && v >= 0) {
        d->dragging = 1;
        d->drag = (box){ix, iy, ix, iy};
    } else if (button == GLFW_MOUSE_BUTTON_LEFT && action == GLFW_RELEASE && d->dragging) {
        d->dragging = 0;
        box b = {fminf(d->drag.x0, d->drag.x1), fminf(d->drag.y0, d->drag.y1), fmaxf(d->drag.x0, d->drag.x1),
                 fmaxf(d->drag.y0, d->drag.y1)};
        if (b.x1 - b.x0 >= 4 && b.y1 - b.y0 >= 4) {
            int bx = (int)floorf(b.x0), by = (int)floorf(b.y0);
            demo_add_object(d, (glcv_rect){bx, by, (int)ceilf(b.x1) - bx, (int)ceilf(b.y1) - by});
        }
    } else if (button == GLFW_MOUSE_BUTTON_RIGHT && action == GLFW_PRESS && v >= 0) {
        for (int i = d->object_count - 1; i >= 0; i--) {
            const tracked *o = &d->objects[i];
            const glcv_rect *b = o->have_result ? &o->r.bbox : &o->start;
            if (ix >= (float)b->x && ix <= (float)(b->x + b->width) && iy >= (float)b->y &&
                iy <= (float)(b->y + b->height)) {
                int id = o->id;
                demo_remove_object(d, i);
                demo_set_message(d, "object %d removed", id);
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
    /* Keep dragging in image coordinates of a view near the pointer (all views share them). */
    float ix, iy;
    if (hit_view(d, fx, fy, 0.5, &ix, &iy) >= 0) {
        d->drag.x1 = fminf(fmaxf(ix, 0), (float)d->width);
        d->drag.y1 = fminf(fmaxf(iy, 0), (float)d->height);
    }
}

static void on_framebuffer_size(GLFWwindow *win, int w, int h)
{
    demo *d = glfwGetWindowUserPointer(win);
    if (w != d->initial_fb_w || h != d->initial_fb_h)
        d->panel_scale = 0; /* resized by the user: panels as large as fit */
}

/* ---- installing them ------------------------------------------------------------------------ */

void demo_install_controls(demo *d)
{
    glfwSetWindowUserPointer(d->win, d);
    glfwSetKeyCallback(d->win, on_key);
    glfwSetMouseButtonCallback(d->win, on_mouse_button);
    glfwSetCursorPosCallback(d->win, on_cursor);
    demo_framebuffer_size(d, &d->initial_fb_w, &d->initial_fb_h);
    glfwSetFramebufferSizeCallback(d->win, on_framebuffer_size);
}
