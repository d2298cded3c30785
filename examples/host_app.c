/* host_app: the texture-ID integration recipe, as a complete program.
 *
 * A small OpenGL application with a window of its own (GLFW, GL 3.3 core) renders an animated
 * scene into its own texture through its own framebuffer object: a textured backdrop and an
 * orange disc moving across it. It hands glcv texture IDs and gets a mask texture ID back, all
 * in its own context:
 *
 *   background  the scene rendered once without the disc   glcv_segment_set_background_texture
 *   each frame  the scene texture                           glcv_segment_frame_texture
 *   result      the mask texture (GL_R8, owned by glcv)     glcv_segment_mask_texture
 *
 * and draws the mask next to its scene. Around the glcv calls it snapshots a set of its GL state
 * (program, VAO, framebuffer bindings, viewport, active texture unit, texture and sampler
 * bindings, blend/scissor/depth/cull enables and their parameters, pixel-store parameters,
 * buffer bindings, colour mask, clear colour) and compares; every few frames it reads the mask
 * back and checks that it covers the disc and nothing else.
 *
 *   host_app [--frames N] [--engine auto|fragment|compute|cpu] [--size WxH]
 *
 * Without --frames it runs until the window is closed. Exit status: 0 when every check passed,
 * 1 when the GL state changed across a glcv call, the mask was wrong, or something failed;
 * 2 usage error.
 */
#define _POSIX_C_SOURCE 200809L

#include <glcv/glcv.h>

#include <epoxy/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the host's own rendering ---------------------------------------------------------------- */

static const char quad_vs[] = "#version 330 core\n"
                              "void main() {\n"
                              "    vec2 c = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));\n"
                              "    gl_Position = vec4(c * 2.0 - 1.0, 0.0, 1.0);\n"
                              "}\n";

/* The scene, in image pixels with row 0 at the top (the texture's row 0). */
static const char scene_fs[] = "#version 330 core\n"
                               "uniform vec2 u_center;\n"
                               "uniform float u_radius;\n"
                               "uniform float u_height;\n"
                               "out vec4 o_color;\n"
                               "void main() {\n"
                               "    vec2 p = vec2(gl_FragCoord.x, gl_FragCoord.y);\n"
                               "    /* gl_FragCoord.y = 0.5 is texture row 0 = image row 0 */\n"
                               "    float checker = mod(floor(p.x / 16.0) + floor(p.y / 16.0), 2.0);\n"
                               "    vec3 c = vec3(0.25 + 0.35 * p.x / 320.0, 0.35 + 0.2 * p.y / u_height, 0.6);\n"
                               "    c *= 0.85 + 0.15 * checker;\n"
                               "    if (distance(p, u_center) < u_radius) c = vec3(0.95, 0.5, 0.1);\n"
                               "    o_color = vec4(c, 1.0);\n"
                               "}\n";

/* The window: scene on the left, mask on the right, both 1:1 with texelFetch (so the host
 * needs no sampler state on glcv's texture). */
static const char show_fs[] = "#version 330 core\n"
                              "uniform sampler2D u_scene;\n"
                              "uniform sampler2D u_mask;\n"
                              "uniform ivec2 u_size;\n"
                              "out vec4 o_color;\n"
                              "void main() {\n"
                              "    ivec2 p = ivec2(gl_FragCoord.xy);\n"
                              "    int row = u_size.y - 1 - p.y; /* image row 0 at the top of the window */\n"
                              "    if (row < 0) { o_color = vec4(0.1, 0.1, 0.1, 1.0); return; }\n"
                              "    if (p.x < u_size.x) o_color = texelFetch(u_scene, ivec2(p.x, row), 0);\n"
                              "    else o_color = vec4(vec3(texelFetch(u_mask, ivec2(p.x - u_size.x, row), 0).r), 1.0);\n"
                              "}\n";

static GLuint compile(GLenum type, const char *src)
{
    GLuint sh = glCreateShader(type);
    glShaderSource(sh, 1, &src, NULL);
    glCompileShader(sh);
    GLint ok = 0;
    glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[2048];
        glGetShaderInfoLog(sh, sizeof log, NULL, log);
        fprintf(stderr, "host_app: shader: %s\n", log);
    }
    return sh;
}

static GLuint program(const char *fs_src)
{
    GLuint vs = compile(GL_VERTEX_SHADER, quad_vs), fs = compile(GL_FRAGMENT_SHADER, fs_src);
    GLuint p = glCreateProgram();
    glAttachShader(p, vs);
    glAttachShader(p, fs);
    glLinkProgram(p);
    glDeleteShader(vs);
    glDeleteShader(fs);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
        glDeleteProgram(p);
        return 0;
    }
    return p;
}

static GLuint make_texture(int w, int h)
{
    GLuint t = 0;
    glGenTextures(1, &t);
    glBindTexture(GL_TEXTURE_2D, t);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, w, h, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
    return t;
}

/* ---- GL state snapshots ------------------------------------------------------------------------ */

enum { UNITS = 8, MAX_FIELDS = 96 };

typedef struct snapshot {
    const char *name[MAX_FIELDS];
    GLint value[MAX_FIELDS][4];
    int count;
} snapshot;

static void record(snapshot *s, const char *name, const GLint v[4])
{
    if (s->count >= MAX_FIELDS)
        return;
    s->name[s->count] = name;
    memcpy(s->value[s->count], v, sizeof s->value[0]);
    s->count++;
}

static void record_int(snapshot *s, const char *name, GLenum pname)
{
    GLint v[4] = {0, 0, 0, 0};
    glGetIntegerv(pname, v);
    record(s, name, v);
}

static void record_enabled(snapshot *s, const char *name, GLenum cap)
{
    GLint v[4] = {glIsEnabled(cap), 0, 0, 0};
    record(s, name, v);
}

static void take_snapshot(snapshot *s)
{
    static const char *const unit_tex[UNITS] = {"texture unit 0", "texture unit 1", "texture unit 2",
                                                "texture unit 3", "texture unit 4", "texture unit 5",
                                                "texture unit 6", "texture unit 7"};
    static const char *const unit_smp[UNITS] = {"sampler unit 0", "sampler unit 1", "sampler unit 2",
                                                "sampler unit 3", "sampler unit 4", "sampler unit 5",
                                                "sampler unit 6", "sampler unit 7"};
    s->count = 0;
    record_int(s, "program", GL_CURRENT_PROGRAM);
    record_int(s, "vertex array", GL_VERTEX_ARRAY_BINDING);
    record_int(s, "draw framebuffer", GL_DRAW_FRAMEBUFFER_BINDING);
    record_int(s, "read framebuffer", GL_READ_FRAMEBUFFER_BINDING);
    record_int(s, "viewport", GL_VIEWPORT);
    record_int(s, "scissor box", GL_SCISSOR_BOX);
    record_int(s, "active texture", GL_ACTIVE_TEXTURE);
    GLint active = 0;
    glGetIntegerv(GL_ACTIVE_TEXTURE, &active);
    for (int u = 0; u < UNITS; u++) {
        glActiveTexture(GL_TEXTURE0 + (GLenum)u);
        record_int(s, unit_tex[u], GL_TEXTURE_BINDING_2D);
        record_int(s, unit_smp[u], GL_SAMPLER_BINDING);
    }
    glActiveTexture((GLenum)active);
    record_enabled(s, "blend", GL_BLEND);
    record_enabled(s, "scissor test", GL_SCISSOR_TEST);
    record_enabled(s, "depth test", GL_DEPTH_TEST);
    record_enabled(s, "cull face", GL_CULL_FACE);
    record_enabled(s, "stencil test", GL_STENCIL_TEST);
    record_int(s, "blend src rgb", GL_BLEND_SRC_RGB);
    record_int(s, "blend dst rgb", GL_BLEND_DST_RGB);
    record_int(s, "depth func", GL_DEPTH_FUNC);
    record_int(s, "unpack alignment", GL_UNPACK_ALIGNMENT);
    record_int(s, "unpack row length", GL_UNPACK_ROW_LENGTH);
    record_int(s, "unpack skip rows", GL_UNPACK_SKIP_ROWS);
    record_int(s, "unpack skip pixels", GL_UNPACK_SKIP_PIXELS);
    record_int(s, "pack alignment", GL_PACK_ALIGNMENT);
    record_int(s, "pack row length", GL_PACK_ROW_LENGTH);
    record_int(s, "pack skip rows", GL_PACK_SKIP_ROWS);
    record_int(s, "pack skip pixels", GL_PACK_SKIP_PIXELS);
    record_int(s, "array buffer", GL_ARRAY_BUFFER_BINDING);
    record_int(s, "pixel unpack buffer", GL_PIXEL_UNPACK_BUFFER_BINDING);
    record_int(s, "pixel pack buffer", GL_PIXEL_PACK_BUFFER_BINDING);
    record_int(s, "colour write mask", GL_COLOR_WRITEMASK);
    GLfloat clear[4];
    glGetFloatv(GL_COLOR_CLEAR_VALUE, clear);
    GLint cv[4];
    for (int i = 0; i < 4; i++)
        cv[i] = (GLint)lroundf(clear[i] * 1000.0f);
    record(s, "clear colour (x1000)", cv);
}

/* Prints every difference; returns how many. */
static int compare_snapshots(const snapshot *a, const snapshot *b, const char *call)
{
    int diffs = 0;
    for (int i = 0; i < a->count && i < b->count; i++) {
        if (memcmp(a->value[i], b->value[i], sizeof a->value[i]) != 0) {
            fprintf(stderr, "host_app: %s changed the host's %s: %d %d %d %d -> %d %d %d %d\n", call, a->name[i],
                    a->value[i][0], a->value[i][1], a->value[i][2], a->value[i][3], b->value[i][0], b->value[i][1],
                    b->value[i][2], b->value[i][3]);
            diffs++;
        }
    }
    return diffs;
}

/* ---- the application ----------------------------------------------------------------------------- */

typedef struct app {
    int w, h;
    GLuint scene_prog, show_prog, vao, fbo, scene_tex, background_tex, spare_tex[3];
    GLint u_center, u_radius, u_height, u_scene, u_mask, u_size;
    int state_errors;
} app;

static void render_scene(app *a, GLuint target, float cx, float cy, float radius)
{
    glBindFramebuffer(GL_FRAMEBUFFER, a->fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, target, 0);
    glViewport(0, 0, a->w, a->h);
    glDisable(GL_BLEND);
    glDisable(GL_SCISSOR_TEST);
    glDisable(GL_DEPTH_TEST);
    glUseProgram(a->scene_prog);
    /* The disc's centre in image rows from the top = gl_FragCoord.y in the texture. */
    glUniform2f(a->u_center, cx, cy);
    glUniform1f(a->u_radius, radius);
    glUniform1f(a->u_height, (float)a->h);
    glBindVertexArray(a->vao);
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
}

/* The state the host has when it calls glcv: its own bindings everywhere, and enables and
 * pixel-store values that a careless library would reset. */
static void host_state(app *a)
{
    glBindFramebuffer(GL_FRAMEBUFFER, a->fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, a->spare_tex[0], 0);
    glUseProgram(a->show_prog);
    glBindVertexArray(a->vao);
    glViewport(3, 5, a->w - 7, a->h - 9);
    glEnable(GL_SCISSOR_TEST);
    glScissor(1, 2, 30, 40);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LEQUAL);
    glEnable(GL_CULL_FACE);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 7);
    glPixelStorei(GL_PACK_ALIGNMENT, 2);
    glColorMask(GL_TRUE, GL_TRUE, GL_FALSE, GL_TRUE);
    glClearColor(0.2f, 0.3f, 0.4f, 0.5f);
    for (int u = 0; u < 3; u++) {
        glActiveTexture(GL_TEXTURE0 + (GLenum)u);
        glBindTexture(GL_TEXTURE_2D, a->spare_tex[u]);
    }
    glActiveTexture(GL_TEXTURE2);
}

static void host_state_reset(void)
{
    glDisable(GL_SCISSOR_TEST);
    glDisable(GL_BLEND);
    glDisable(GL_DEPTH_TEST);
    glDisable(GL_CULL_FACE);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glPixelStorei(GL_PACK_ALIGNMENT, 4);
    glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
}

/* Checks a glcv call against the host's state; `what` names it. */
#define GUARDED(a, what, call)                                                                           \
    do {                                                                                                 \
        snapshot before_, after_;                                                                        \
        host_state(a);                                                                                   \
        take_snapshot(&before_);                                                                         \
        call;                                                                                            \
        take_snapshot(&after_);                                                                          \
        (a)->state_errors += compare_snapshots(&before_, &after_, what);                                 \
        GLenum e_ = glGetError();                                                                        \
        if (e_ != GL_NO_ERROR) {                                                                         \
            fprintf(stderr, "host_app: GL error 0x%04x after %s\n", e_, what);                           \
            (a)->state_errors++;                                                                         \
        }                                                                                                \
        host_state_reset();                                                                              \
    } while (0)

/* The mask must cover the disc (shrunk by 2 pixels) and nothing farther than 3 pixels from it. */
static int check_mask(const glcv_image *mask, float cx, float cy, float radius, int frame)
{
    long inside = 0, inside_on = 0, outside = 0, outside_on = 0;
    for (int y = 0; y < mask->height; y++)
        for (int x = 0; x < mask->width; x++) {
            float d = hypotf((float)x + 0.5f - cx, (float)y + 0.5f - cy);
            int on = mask->data[(size_t)y * mask->stride + (size_t)x] > 127;
            if (d < radius - 2) {
                inside++;
                inside_on += on;
            } else if (d > radius + 3) {
                outside++;
                outside_on += on;
            }
        }
    double recall = inside ? (double)inside_on / (double)inside : 1.0;
    double spill = outside ? (double)outside_on / (double)outside : 0.0;
    int ok = recall >= 0.95 && spill <= 0.01;
    printf("host_app: frame %d: disc at (%.1f, %.1f): %.1f %% of it in the mask, %.2f %% of the rest%s\n", frame, cx,
           cy, 100.0 * recall, 100.0 * spill, ok ? "" : "  <-- wrong");
    return ok;
}

int main(int argc, char **argv)
{
    int frames = 0, w = 320, h = 240;
    glcv_engine_mode engine = GLCV_ENGINE_AUTO;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--frames") && i + 1 < argc) {
            frames = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--engine") && i + 1 < argc) {
            if (glcv_engine_mode_parse(argv[++i], &engine) != GLCV_OK) {
                fprintf(stderr, "host_app: --engine: auto, fragment, compute or cpu\n");
                return 2;
            }
        } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            if (sscanf(argv[++i], "%dx%d", &w, &h) != 2 || w < 64 || h < 64 || w > 4096 || h > 4096) {
                fprintf(stderr, "host_app: --size WxH, 64..4096\n");
                return 2;
            }
        } else {
            fprintf(stderr, "usage: host_app [--frames N] [--engine auto|fragment|compute|cpu] [--size WxH]\n");
            return 2;
        }
    }

    if (!glfwInit()) {
        fprintf(stderr, "host_app: cannot open a window (no display?)\n");
        return 1;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_RESIZABLE, GLFW_FALSE);
    GLFWwindow *win = glfwCreateWindow(2 * w, h, "host_app: scene | glcv mask", NULL, NULL);
    if (!win) {
        fprintf(stderr, "host_app: cannot create a window with an OpenGL 3.3 core context\n");
        glfwTerminate();
        return 1;
    }
    glfwMakeContextCurrent(win);
    glfwSwapInterval(1);
    printf("host_app: %s | %s\n", (const char *)glGetString(GL_RENDERER), (const char *)glGetString(GL_VERSION));

    app a = {0};
    a.w = w;
    a.h = h;
    a.scene_prog = program(scene_fs);
    a.show_prog = program(show_fs);
    if (!a.scene_prog || !a.show_prog) {
        glfwTerminate();
        return 1;
    }
    a.u_center = glGetUniformLocation(a.scene_prog, "u_center");
    a.u_radius = glGetUniformLocation(a.scene_prog, "u_radius");
    a.u_height = glGetUniformLocation(a.scene_prog, "u_height");
    a.u_scene = glGetUniformLocation(a.show_prog, "u_scene");
    a.u_mask = glGetUniformLocation(a.show_prog, "u_mask");
    a.u_size = glGetUniformLocation(a.show_prog, "u_size");
    glGenVertexArrays(1, &a.vao);
    glGenFramebuffers(1, &a.fbo);
    a.scene_tex = make_texture(w, h);
    a.background_tex = make_texture(w, h);
    for (int i = 0; i < 3; i++)
        a.spare_tex[i] = make_texture(4, 4);

    /* The background: the scene without the moving disc. */
    render_scene(&a, a.background_tex, 0, 0, 0);

    glcv_segment *seg = NULL;
    glcv_logger logger = {glcv_log_stderr, NULL, GLCV_LOG_WARN};
    glcv_status st = GLCV_OK;
    GUARDED(&a, "glcv_segment_create",
            st = glcv_segment_create(&GLCV_SEGMENT_PARAMS(.width = w, .height = h, .engine = engine, .logger = logger),
                                     &seg));
    if (st != GLCV_OK) {
        fprintf(stderr, "host_app: glcv_segment_create: %s\n", glcv_status_string(st));
        glfwTerminate();
        return 1;
    }
    glcv_segment_params got;
    glcv_segment_get_params(seg, &got);
    printf("host_app: glcv engine %s in the host's context\n", glcv_engine_mode_string(got.engine));
    GUARDED(&a, "glcv_segment_set_background_texture", st = glcv_segment_set_background_texture(seg, a.background_tex));
    int failures = st != GLCV_OK;

    glcv_image mask = {0};
    glcv_image_alloc(w, h, GLCV_PIXEL_GRAY8, &mask);
    const float radius = (float)h / 8.0f;
    int frame = 0;
    while (!glfwWindowShouldClose(win) && (frames <= 0 || frame < frames)) {
        glfwPollEvents();
        /* The disc moves on a Lissajous path inside the image. */
        float t = (float)frame * 0.07f;
        float cx = (float)w / 2 + ((float)w / 2 - radius - 6) * sinf(t);
        float cy = (float)h / 2 + ((float)h / 2 - radius - 6) * sinf(1.7f * t);
        render_scene(&a, a.scene_tex, cx, cy, radius);

        GLuint mask_tex = 0;
        GUARDED(&a, "glcv_segment_frame_texture", st = glcv_segment_frame_texture(seg, a.scene_tex, 0));
        failures += st != GLCV_OK;
        GUARDED(&a, "glcv_segment_mask_texture", mask_tex = glcv_segment_mask_texture(seg));
        failures += mask_tex == 0;
        if (frame % 10 == 9 || (frames > 0 && frame == frames - 1)) {
            GUARDED(&a, "glcv_segment_read_mask", st = glcv_segment_read_mask(seg, &mask));
            failures += st != GLCV_OK || !check_mask(&mask, cx, cy, radius, frame);
        }

        /* The host draws its scene and the mask with its own program. */
        glBindFramebuffer(GL_FRAMEBUFFER, 0);
        glViewport(0, 0, 2 * w, h);
        glUseProgram(a.show_prog);
        glUniform1i(a.u_scene, 0);
        glUniform1i(a.u_mask, 1);
        glUniform2i(a.u_size, w, h);
        glActiveTexture(GL_TEXTURE1);
        glBindTexture(GL_TEXTURE_2D, mask_tex);
        glActiveTexture(GL_TEXTURE0);
        glBindTexture(GL_TEXTURE_2D, a.scene_tex);
        glBindVertexArray(a.vao);
        glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
        glfwSwapBuffers(win);
        frame++;
    }

    GUARDED(&a, "glcv_segment_destroy", glcv_segment_destroy(&seg));
    glcv_image_free(&mask);
    GLuint tex[5] = {a.scene_tex, a.background_tex, a.spare_tex[0], a.spare_tex[1], a.spare_tex[2]};
    glDeleteTextures(5, tex);
    glDeleteFramebuffers(1, &a.fbo);
    glDeleteVertexArrays(1, &a.vao);
    glDeleteProgram(a.scene_prog);
    glDeleteProgram(a.show_prog);
    glfwDestroyWindow(win);
    glfwTerminate();

    printf("host_app: %d frames, %d GL state differences, %d failed checks\n", frame, a.state_errors, failures);
    return (a.state_errors || failures) ? 1 : 0;
}
