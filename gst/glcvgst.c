/* What the glcv elements share: glcv's logger into GStreamer's debug log, the GL thread's
 * plumbing, the property enums, and the shaders that draw a mask, an overlay or boxes into the
 * output texture. */
#include "glcvgst.h"

#include <gst/gl/gstglfuncs.h>

#include <stdio.h>
#include <string.h>

GST_DEBUG_CATEGORY(glcvgst_debug);
#define GST_CAT_DEFAULT glcvgst_debug

/* ---- the logger ------------------------------------------------------------------------------ */

void glcvgst_log_init(glcvgst_log *log, GstElement *element)
{
    log->element = element;
    g_mutex_init(&log->lock);
    log->last[0] = '\0';
}

void glcvgst_log_clear(glcvgst_log *log)
{
    g_mutex_lock(&log->lock);
    log->last[0] = '\0';
    g_mutex_unlock(&log->lock);
}

void glcvgst_log_dispose(glcvgst_log *log)
{
    g_mutex_clear(&log->lock);
}

static void log_message(void *user, glcv_log_level level, const char *message)
{
    glcvgst_log *log = user;
    switch (level) {
    case GLCV_LOG_ERROR:
        GST_ERROR_OBJECT(log->element, "glcv: %s", message);
        break;
    case GLCV_LOG_WARN:
        GST_WARNING_OBJECT(log->element, "glcv: %s", message);
        break;
    case GLCV_LOG_INFO:
        GST_INFO_OBJECT(log->element, "glcv: %s", message);
        break;
    default:
        GST_DEBUG_OBJECT(log->element, "glcv: %s", message);
        break;
    }
    if (level <= GLCV_LOG_WARN) {
        g_mutex_lock(&log->lock);
        g_strlcpy(log->last, message, sizeof log->last);
        g_mutex_unlock(&log->lock);
    }
}

glcv_logger glcvgst_logger(glcvgst_log *log)
{
    return (glcv_logger){log_message, log, GLCV_LOG_DEBUG};
}

char *glcvgst_error_text(glcvgst_log *log, const char *what, glcv_status status)
{
    g_mutex_lock(&log->lock);
    char *text = log->last[0] ? g_strdup_printf("%s: %s (%s)", what, glcv_status_string(status), log->last)
                              : g_strdup_printf("%s: %s", what, glcv_status_string(status));
    g_mutex_unlock(&log->lock);
    return text;
}

/* ---- the GL thread --------------------------------------------------------------------------- */

gboolean glcvgst_fail(glcvgst_gl *gl, const char *what, glcv_status status)
{
    char *text = glcvgst_error_text(&gl->log, what, status);
    GST_ELEMENT_ERROR(gl->log.element, LIBRARY, FAILED, ("%s", text), ("glcv status %d", (int)status));
    g_free(text);
    return FALSE;
}

gboolean glcvgst_process_frame(GstGLFilter *filter, glcvgst_gl *gl, GstGLContextThreadFunc process, GstGLMemory *input,
                               GstGLMemory *output)
{
    gl->in = input;
    gl->out = output;
    gst_gl_context_thread_add(GST_GL_BASE_FILTER(filter)->context, process, filter);
    gl->in = gl->out = NULL;
    return gl->ok;
}

gboolean glcvgst_keep_frame_size(GstGLFilter *filter, glcvgst_gl *gl, GstCaps *incaps, const char *keeps,
                                 gboolean *started)
{
    GstVideoInfo info;
    if (!gst_video_info_from_caps(&info, incaps))
        return FALSE;
    GST_OBJECT_LOCK(filter);
    const int w = gl->width, h = gl->height;
    GST_OBJECT_UNLOCK(filter);
    if (started)
        *started = w > 0;
    if (w > 0 && (GST_VIDEO_INFO_WIDTH(&info) != w || GST_VIDEO_INFO_HEIGHT(&info) != h)) {
        GST_ELEMENT_ERROR(filter, STREAM, FORMAT,
                          ("The frame size changed mid-stream from %dx%d to %dx%d; %s (restart the pipeline for a "
                           "new size).",
                           w, h, GST_VIDEO_INFO_WIDTH(&info), GST_VIDEO_INFO_HEIGHT(&info), keeps),
                          (NULL));
        return FALSE;
    }
    return TRUE;
}

gboolean glcvgst_load_background(glcvgst_gl *gl, const char *path, glcv_image *image)
{
    GstElement *element = gl->log.element;
    glcv_logger logger = glcvgst_logger(&gl->log);
    glcv_status st = glcv_image_load(path, GLCV_PIXEL_RGBA8, &logger, image);
    if (st != GLCV_OK) {
        char *text = glcvgst_error_text(&gl->log, path, st);
        GST_ELEMENT_ERROR(element, RESOURCE, OPEN_READ, ("Could not read the background image \"%s\".", path),
                          ("%s", text));
        g_free(text);
        return FALSE;
    }
    if (image->width != gl->width || image->height != gl->height) {
        GST_ELEMENT_ERROR(element, STREAM, FORMAT,
                          ("The background image \"%s\" is %dx%d, the frames %dx%d.", path, image->width,
                           image->height, gl->width, gl->height),
                          (NULL));
        glcv_image_free(image);
        return FALSE;
    }
    return TRUE;
}

void glcvgst_filter_class_setup(GstGLFilterClass *klass)
{
    gst_gl_filter_add_rgba_pad_templates(klass);
    GST_GL_BASE_FILTER_CLASS(klass)->supported_gl_api = GST_GL_API_OPENGL | GST_GL_API_OPENGL3;
}

/* ---- property enums -------------------------------------------------------------------------- */

GType glcvgst_enum_type(gsize *once, const char *name, const GEnumValue *values)
{
    if (g_once_init_enter(once))
        g_once_init_leave(once, g_enum_register_static(name, values));
    return (GType)*once;
}

GType glcvgst_output_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GLCVGST_OUTPUT_MASK, "The mask as grey: white foreground, black background", "mask"},
        {GLCVGST_OUTPUT_OVERLAY, "The frame with the foreground tinted", "overlay"},
        {0, NULL, NULL},
    };
    return glcvgst_enum_type(&type, "GlcvGstOutput", values);
}

void glcvgst_install_output_property(GObjectClass *klass, guint id, GParamFlags flags)
{
    g_object_class_install_property(klass, id,
                                    g_param_spec_enum("output", "Output",
                                                      "The mask (grey RGBA) or the frame with the foreground tinted",
                                                      glcvgst_output_get_type(), GLCVGST_OUTPUT_MASK, flags));
}

GType glcvgst_gl_engine_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GLCV_ENGINE_AUTO, "The faster GL engine this context runs (compute needs GL 4.3)", "auto"},
        {GLCV_ENGINE_FRAGMENT, "Fragment-shader passes (GL 3.3)", "fragment"},
        {GLCV_ENGINE_COMPUTE, "Compute-shader passes (GL 4.3)", "compute"},
        {GLCV_ENGINE_CPU, "The CPU implementation (textures read back, masks uploaded)", "cpu"},
        {0, NULL, NULL},
    };
    return glcvgst_enum_type(&type, "GlcvGstGLEngine", values);
}

GType glcvgst_track_engine_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GLCV_ENGINE_AUTO, "CUDA when a device can be used, else the CPU", "auto"},
        {GLCV_ENGINE_CUDA, "CUDA (the textures are mapped, not copied)", "cuda"},
        {GLCV_ENGINE_CPU, "The CPU implementation (textures read back)", "cpu"},
        {0, NULL, NULL},
    };
    return glcvgst_enum_type(&type, "GlcvGstTrackEngine", values);
}

/* ---- shaders --------------------------------------------------------------------------------- */

/* The sources carry their #version line (GstGLSLStage does not add one). GstGLFilter draws its quad with the attributes
 * a_position and a_texcoord; texture coordinate (0, 0) is texel row 0 of the input, which is image row 0 (the top row)
 * as glupload fills it and as glcv reads it, so the output keeps the input's row order. */
static const char vertex_source[] = "#version 330 core\n"
                                    "in vec4 a_position;\n"
                                    "in vec2 a_texcoord;\n"
                                    "out vec2 v_texcoord;\n"
                                    "void main() {\n"
                                    "    gl_Position = a_position;\n"
                                    "    v_texcoord = a_texcoord;\n"
                                    "}\n";

/* The mask is fetched at the input pixel under the output pixel (exact, whatever glcv's
 * sampler state); "overlay" tints the foreground, "mask" writes 1 or 0 exactly. */
static const char mask_fragment_format[] =
    "#version 330 core\n"
    "in vec2 v_texcoord;\n"
    "out vec4 frag_colour;\n"
    "uniform sampler2D tex;\n"
    "uniform %s mask;\n"
    "uniform int have_mask;\n"
    "uniform int overlay;\n"
    "void main() {\n"
    "    vec4 frame = texture(tex, v_texcoord);\n"
    "    float m = 0.0;\n"
    "    if (have_mask != 0) {\n"
    "        ivec2 size = textureSize(mask, 0).xy;\n"
    "        ivec2 p = clamp(ivec2(v_texcoord * vec2(size)), ivec2(0), size - 1);\n"
    "        m = step(0.5, texelFetch(mask, %s, 0).r);\n"
    "    }\n"
    "    if (overlay != 0)\n"
    "        frag_colour = vec4(mix(frame.rgb, vec3(1.0, 0.15, 0.55), 0.55 * m), frame.a);\n"
    "    else\n"
    "        frag_colour = vec4(m, m, m, 1.0);\n"
    "}\n";

/* The box arrays hold GLCVGST_MAX_DRAWN_BOXES (64) boxes. */
G_STATIC_ASSERT(GLCVGST_MAX_DRAWN_BOXES == 64);
static const char box_fragment_source[] =
    "#version 330 core\n"
    "in vec2 v_texcoord;\n"
    "out vec4 frag_colour;\n"
    "uniform sampler2D tex;\n"
    "uniform vec2 size;\n"
    "uniform int count;\n"
    "uniform vec4 boxes[64];\n"
    "uniform float lost[64];\n"
    "void main() {\n"
    "    vec4 colour = texture(tex, v_texcoord);\n"
    "    vec2 p = floor(v_texcoord * size) + 0.5;\n"
    "    float t = max(2.0, floor(min(size.x, size.y) / 240.0));\n"
    "    for (int i = 0; i < count; i++) {\n"
    "        vec4 b = boxes[i];\n"
    "        bool outer = all(greaterThanEqual(p, b.xy)) && all(lessThan(p, b.xy + b.zw));\n"
    "        bool inner = all(greaterThanEqual(p, b.xy + t)) && all(lessThan(p, b.xy + b.zw - t));\n"
    "        if (outer && !inner)\n"
    "            colour = lost[i] > 0.5 ? vec4(1.0, 140.0 / 255.0, 0.0, 1.0)\n"
    "                                   : vec4(26.0 / 255.0, 1.0, 51.0 / 255.0, 1.0);\n"
    "    }\n"
    "    frag_colour = colour;\n"
    "}\n";

static GstGLShader *shader_new(GstGLFilter *filter, const char *fragment)
{
    GstGLContext *context = GST_GL_BASE_FILTER(filter)->context;
    if (!gst_gl_context_check_gl_version(context, GST_GL_API_OPENGL | GST_GL_API_OPENGL3, 3, 3)) {
        GST_ELEMENT_ERROR(filter, RESOURCE, SETTINGS,
                          ("glcv needs an OpenGL 3.3 (core) context or later; this one is older or OpenGL ES"),
                          ("headless: GST_GL_PLATFORM=egl GST_GL_WINDOW=egl-device GST_GL_API=opengl3"));
        return NULL;
    }
    GError *error = NULL;
    GstGLSLStage *vs = gst_glsl_stage_new_with_string(context, GL_VERTEX_SHADER, GST_GLSL_VERSION_330,
                                                      GST_GLSL_PROFILE_CORE, vertex_source);
    GstGLSLStage *fs = gst_glsl_stage_new_with_string(context, GL_FRAGMENT_SHADER, GST_GLSL_VERSION_330,
                                                      GST_GLSL_PROFILE_CORE, fragment);
    GstGLShader *shader = NULL;
    if (vs && fs)
        shader = gst_gl_shader_new_link_with_stages(context, &error, vs, fs, NULL);
    if (!shader) {
        GST_ELEMENT_ERROR(filter, RESOURCE, NOT_FOUND, ("Cannot build the element's shader"),
                          ("%s", error ? error->message : "GLSL 3.30 core stages refused by the context"));
        g_clear_error(&error);
    }
    return shader;
}

GstGLShader *glcvgst_mask_shader_new(GstGLFilter *filter, GlcvGstMaskKind kind)
{
    char source[sizeof mask_fragment_format + 64];
    snprintf(source, sizeof source, mask_fragment_format, kind == GLCVGST_MASK_ARRAY ? "sampler2DArray" : "sampler2D",
             kind == GLCVGST_MASK_ARRAY ? "ivec3(p, 0)" : "p");
    return shader_new(filter, source);
}

GstGLShader *glcvgst_box_shader_new(GstGLFilter *filter)
{
    return shader_new(filter, box_fragment_source);
}

/* gst_gl_filter_render_to_target_with_shader binds the input to unit 1 ("tex"); the mask goes
 * to unit 2. */
enum { MASK_UNIT = 2 };

gboolean glcvgst_draw_mask(GstGLFilter *filter, GstGLShader *shader, GlcvGstMaskKind kind, GstGLMemory *input,
                           GstGLMemory *output, unsigned int mask, GlcvGstOutput output_mode)
{
    const GstGLFuncs *gl = GST_GL_BASE_FILTER(filter)->context->gl_vtable;
    const GLenum target = kind == GLCVGST_MASK_ARRAY ? GL_TEXTURE_2D_ARRAY : GL_TEXTURE_2D;
    gst_gl_shader_use(shader);
    gst_gl_shader_set_uniform_1i(shader, "mask", MASK_UNIT);
    gst_gl_shader_set_uniform_1i(shader, "have_mask", mask != 0);
    gst_gl_shader_set_uniform_1i(shader, "overlay", output_mode == GLCVGST_OUTPUT_OVERLAY);
    gl->ActiveTexture(GL_TEXTURE0 + MASK_UNIT);
    gl->BindTexture(target, mask);
    gst_gl_filter_render_to_target_with_shader(filter, input, output, shader);
    gl->ActiveTexture(GL_TEXTURE0 + MASK_UNIT);
    gl->BindTexture(target, 0);
    gl->ActiveTexture(GL_TEXTURE0);
    return TRUE;
}

gboolean glcvgst_draw_boxes(GstGLFilter *filter, GstGLShader *shader, GstGLMemory *input, GstGLMemory *output,
                            const float *boxes, const float *lost, int count)
{
    gst_gl_shader_use(shader);
    gst_gl_shader_set_uniform_2f(shader, "size", (float)GST_VIDEO_INFO_WIDTH(&filter->in_info),
                                 (float)GST_VIDEO_INFO_HEIGHT(&filter->in_info));
    gst_gl_shader_set_uniform_1i(shader, "count", count);
    if (count > 0) {
        gst_gl_shader_set_uniform_4fv(shader, "boxes", (guint)count, boxes);
        gst_gl_shader_set_uniform_1fv(shader, "lost", (guint)count, lost);
    }
    gst_gl_filter_render_to_target_with_shader(filter, input, output, shader);
    return TRUE;
}
