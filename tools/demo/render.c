/* glcv-demo: the window's content. The GL objects of the demo, the layout of the image panels,
 * the panels themselves (the engine's textures, shown without copies), the overlay's boxes, the
 * sidebar and the key help drawn over them, and screenshots. See demo.h. */
#include "demo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TEXT_CHARS = 8192 };

/* Colours of tracked objects' boxes in the overlay: tracked, lost. */
#define TRACK_RGB 40, 220, 255
#define LOST_RGB 255, 150, 0

/* NULL-terminated: also the choices of --view. */
const char *const demo_view_names[VIEW_COUNT + 1] = {"grid", "input", "background", "mask", "overlay", NULL};

/* ---- GL helpers ----------------------------------------------------------------------------- */

/* Whether shader or program `obj` compiled (shader) or linked; if not, prints its log after
 * `what` and deletes it. */
static int gl_built(GLuint obj, int shader, const char *what)
{
    GLint ok = 0;
    if (shader)
        glGetShaderiv(obj, GL_COMPILE_STATUS, &ok);
    else
        glGetProgramiv(obj, GL_LINK_STATUS, &ok);
    if (ok)
        return 1;
    char log[2048];
    if (shader)
        glGetShaderInfoLog(obj, sizeof log, NULL, log);
    else
        glGetProgramInfoLog(obj, sizeof log, NULL, log);
    fprintf(stderr, "glcv-demo: %s: %s\n", what, log);
    if (shader)
        glDeleteShader(obj);
    else
        glDeleteProgram(obj);
    return 0;
}

static GLuint compile_shader(GLenum type, const char *src)
{
    GLuint sh = glCreateShader(type);
    glShaderSource(sh, 1, &src, NULL);
    glCompileShader(sh);
    return gl_built(sh, 1, "shader does not compile") ? sh : 0;
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
        if (!gl_built(prog, 0, "program does not link"))
            prog = 0;
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

/* ---- the window's layout -------------------------------------------------------------------- */

/* The rectangles of the views in a framebuffer of fb_w x fb_h; cell[VIEW_INPUT..VIEW_OVERLAY]. */
void demo_layout(const demo *d, int fb_w, int fb_h, rect cell[VIEW_COUNT])
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

void demo_framebuffer_size(const demo *d, int *w, int *h)
{
    glfwGetFramebufferSize(d->win, w, h);
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
void demo_draw(demo *d, int fb_w, int fb_h)
{
    glViewport(0, 0, fb_w, fb_h);
    glDisable(GL_BLEND);
    glClearColor(0.12f, 0.12f, 0.14f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);

    rect cell[VIEW_COUNT];
    demo_layout(d, fb_w, fb_h, cell);
    GLuint mask = demo_mask_texture(d);
    GLuint background = 0;
    if (d->method == CLI_METHOD_VSAM && !d->learning)
        background = d->background_tex;
    else if (d->method == CLI_METHOD_ETH && d->have_background && !d->learning)
        background = d->engine == GLCV_ENGINE_CPU ? d->background_tex : glcv_segment_background_texture(d->seg);
    int segmented = demo_have_mask(d);

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
    demo_sidebar_text(d, text, sizeof text);
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
        for (const char *p = demo_help_text; *p; p++)
            lines += *p == '\n';
        float hw = 480 * ts, hh = (float)(lines * 12 + 18) * ts;
        float hx = fmaxf(4, (area_w - hw) / 2), hy = fmaxf(4, ((float)fb_h - hh) / 2);
        shapes_rect(&s, hx, hy, hx + hw, hy + hh, shade);
        shapes_frame(&s, hx, hy, hx + hw, hy + hh, 1, grey);
        shapes_text(&s, hx + 12 * ts, hy + 12 * ts, ts, demo_help_text, 80, white);
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
int demo_save_screenshot(demo *d, const char *path)
{
    int fw, fh;
    demo_framebuffer_size(d, &fw, &fh);
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
        demo_draw(d, fw, fh);
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

/* ---- set-up --------------------------------------------------------------------------------- */

int demo_create_gl_objects(demo *d)
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

    GLuint tex[3];
    glGenTextures(3, tex);
    d->input_tex = tex[0];
    d->background_tex = tex[1];
    d->mask_tex = tex[2];
    for (int i = 0; i < 3; i++) {
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

void demo_destroy_gl_objects(demo *d)
{
    GLuint tex[3] = {d->input_tex, d->background_tex, d->mask_tex};
    glDeleteTextures(3, tex);
    glDeleteSamplers(1, &d->sampler);
    glDeleteBuffers(1, &d->flat_vbo);
    glDeleteVertexArrays(1, &d->flat_vao);
    glDeleteVertexArrays(1, &d->vao);
    glDeleteProgram(d->panel_prog);
    glDeleteProgram(d->flat_prog);
}
