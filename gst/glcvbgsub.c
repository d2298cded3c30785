/* glcvbgsub: glcv's background subtraction (glcv/bgsub.h: VSAM, two- and three-frame
 * differencing) on the pipeline's GL context, mask or overlay out like glcvsegment.
 *
 * glcv_bgsub takes frames as host images only (it has no texture input), so each frame texture is
 * read (gst_gl_memory_read_pixels) into the pinned upload memory that glcv_bgsub_map_frames hands
 * out, and glcv uploads it from there; the mask stays on the GPU (glcv_bgsub_mask_texture, a
 * texture array of one layer) and is drawn into the output texture. The CPU engine has no mask
 * texture, so the element offers the GL engines only. */
#include "glcvgst.h"

#include <glcv/bgsub.h>
#include <glcv/image.h>

#include <string.h>

#define GST_CAT_DEFAULT glcvgst_debug

typedef struct _GstGlcvBgsub {
    GstGLFilter parent;

    /* Properties (object lock). */
    glcv_bgsub_params params; /* the object's fields (size, format, logger filled at start) */
    int learn_frames_set, output;
    char *background_location;

    /* The GL thread's state. */
    glcv_bgsub *bgsub;
    glcvgst_gl gl; /* the size is the object's */
    int learn_frames, learned;
    gboolean learning;
    glcv_image scratch; /* a frame read back while learning */
} GstGlcvBgsub;

typedef struct _GstGlcvBgsubClass {
    GstGLFilterClass parent_class;
} GstGlcvBgsubClass;

G_DEFINE_TYPE(GstGlcvBgsub, gst_glcv_bgsub, GST_TYPE_GL_FILTER)

enum {
    PROP_0,
    PROP_OUTPUT,
    PROP_METHOD,
    PROP_LEARN_FRAMES,
    PROP_BACKGROUND_LOCATION,
    PROP_ENGINE,
    PROP_GRAY,
    PROP_ALPHA,
    PROP_C,
    PROP_MIN_THRESHOLD,
    PROP_ABSORB,
    PROP_VOTE,
    PROP_PASSES
};

/* glcvsegment's: a background learned from frames where people walk by keeps no ghost of them, as
 * one taken from the first frame does (the median of the learned frames; vsam's B starts there). */
enum { DEFAULT_LEARN_FRAMES = 30 };

#define DEFAULT_PARAMS                                                                                                 \
    GLCV_BGSUB_PARAMS(.method = GLCV_BGSUB_VSAM, .alpha = 0.92f, .c = 3.0f, .min_threshold = 20.0f, .absorb = 100,     \
                      .vote = 5, .engine = GLCV_ENGINE_AUTO, .passes = GLCV_BGSUB_SINGLE_PASS)

static GType method_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GLCV_BGSUB_VSAM, "VSAM adaptive background subtraction", "vsam"},
        {GLCV_BGSUB_DIFF2, "Two-frame differencing", "diff2"},
        {GLCV_BGSUB_DIFF3, "Three-frame differencing", "diff3"},
        {0, NULL, NULL},
    };
    return glcvgst_enum_type(&type, "GlcvGstBgsubMethod", values);
}

static GType engine_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GLCV_ENGINE_AUTO, "The faster GL engine this context runs (compute needs GL 4.3)", "auto"},
        {GLCV_ENGINE_FRAGMENT, "Fragment-shader passes (GL 3.3)", "fragment"},
        {GLCV_ENGINE_COMPUTE, "Compute-shader passes (GL 4.3)", "compute"},
        {0, NULL, NULL},
    };
    return glcvgst_enum_type(&type, "GlcvGstBgsubEngine", values);
}

static GType passes_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GLCV_BGSUB_SINGLE_PASS, "One pass decides every pixel, a second votes", "single"},
        {GLCV_BGSUB_MULTI_PASS, "The chapter's chain of passes (slower; for comparison)", "multi"},
        {0, NULL, NULL},
    };
    return glcvgst_enum_type(&type, "GlcvGstBgsubPasses", values);
}

static void gst_glcv_bgsub_init(GstGlcvBgsub *self)
{
    self->params = DEFAULT_PARAMS;
    self->learn_frames_set = DEFAULT_LEARN_FRAMES;
    self->output = GLCVGST_OUTPUT_MASK;
    glcvgst_log_init(&self->gl.log, GST_ELEMENT(self));
}

static void gst_glcv_bgsub_finalize(GObject *object)
{
    GstGlcvBgsub *self = (GstGlcvBgsub *)object;
    g_free(self->background_location);
    glcv_image_free(&self->scratch);
    glcvgst_log_dispose(&self->gl.log);
    G_OBJECT_CLASS(gst_glcv_bgsub_parent_class)->finalize(object);
}

static void gst_glcv_bgsub_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
    GstGlcvBgsub *self = (GstGlcvBgsub *)object;
    glcv_bgsub_params *p = &self->params;
    GST_OBJECT_LOCK(self);
    switch (id) {
    case PROP_OUTPUT:
        self->output = g_value_get_enum(value);
        break;
    case PROP_METHOD:
        p->method = (glcv_bgsub_method)g_value_get_enum(value);
        break;
    case PROP_LEARN_FRAMES:
        self->learn_frames_set = g_value_get_int(value);
        break;
    case PROP_BACKGROUND_LOCATION:
        g_free(self->background_location);
        self->background_location = g_value_dup_string(value);
        break;
    case PROP_ENGINE:
        p->engine = (glcv_engine_mode)g_value_get_enum(value);
        break;
    case PROP_GRAY:
        p->gray = g_value_get_boolean(value);
        break;
    case PROP_ALPHA:
        p->alpha = g_value_get_float(value);
        break;
    case PROP_C:
        p->c = g_value_get_float(value);
        break;
    case PROP_MIN_THRESHOLD:
        p->min_threshold = g_value_get_float(value);
        break;
    case PROP_ABSORB:
        p->absorb = g_value_get_int(value);
        break;
    case PROP_VOTE:
        p->vote = g_value_get_int(value);
        break;
    case PROP_PASSES:
        p->passes = (glcv_bgsub_passes)g_value_get_enum(value);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        break;
    }
    GST_OBJECT_UNLOCK(self);
}

static void gst_glcv_bgsub_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    GstGlcvBgsub *self = (GstGlcvBgsub *)object;
    const glcv_bgsub_params *p = &self->params;
    GST_OBJECT_LOCK(self);
    switch (id) {
    case PROP_OUTPUT:
        g_value_set_enum(value, self->output);
        break;
    case PROP_METHOD:
        g_value_set_enum(value, p->method);
        break;
    case PROP_LEARN_FRAMES:
        g_value_set_int(value, self->learn_frames_set);
        break;
    case PROP_BACKGROUND_LOCATION:
        g_value_set_string(value, self->background_location);
        break;
    case PROP_ENGINE:
        g_value_set_enum(value, p->engine);
        break;
    case PROP_GRAY:
        g_value_set_boolean(value, p->gray);
        break;
    case PROP_ALPHA:
        g_value_set_float(value, p->alpha);
        break;
    case PROP_C:
        g_value_set_float(value, p->c);
        break;
    case PROP_MIN_THRESHOLD:
        g_value_set_float(value, p->min_threshold);
        break;
    case PROP_ABSORB:
        g_value_set_int(value, p->absorb);
        break;
    case PROP_VOTE:
        g_value_set_int(value, p->vote);
        break;
    case PROP_PASSES:
        g_value_set_enum(value, p->passes);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        break;
    }
    GST_OBJECT_UNLOCK(self);
}

/* ---- the GL thread --------------------------------------------------------------------------- */

/* background-location: B is the image and T the minimum threshold, as glcv segment --bg does
 * (learning from that one image). */
static gboolean learn_from_file(GstGlcvBgsub *self, const char *path)
{
    glcv_image image = {0};
    if (!glcvgst_load_background(&self->gl, path, &image))
        return FALSE;
    glcv_status st = glcv_bgsub_learn_begin(self->bgsub);
    if (st == GLCV_OK)
        st = glcv_bgsub_learn_add(self->bgsub, &image, 1);
    if (st == GLCV_OK)
        st = glcv_bgsub_learn_end(self->bgsub);
    glcv_image_free(&image);
    return st == GLCV_OK || glcvgst_fail(&self->gl, "Cannot learn the background image", st);
}

static gboolean bgsub_start(GstGlcvBgsub *self)
{
    GstGLFilter *filter = GST_GL_FILTER(self);
    if (!self->gl.shader && !(self->gl.shader = glcvgst_mask_shader_new(filter, GLCVGST_MASK_ARRAY)))
        return FALSE;
    GST_OBJECT_LOCK(self);
    glcv_bgsub_params p = self->params;
    char *location = g_strdup(self->background_location);
    const int learn_frames = self->learn_frames_set;
    GST_OBJECT_UNLOCK(self);
    glcvgst_log_clear(&self->gl.log);
    p.width = GST_VIDEO_INFO_WIDTH(&filter->in_info);
    p.height = GST_VIDEO_INFO_HEIGHT(&filter->in_info);
    p.format = GLCV_PIXEL_RGBA8; /* what the frame textures read back as: uploaded as it is */
    p.packed = -1;               /* one pixel per mask texel: a GL_R8 mask the shader reads */
    p.logger = glcvgst_logger(&self->gl.log);
    glcv_bgsub *bgsub = NULL;
    glcv_status st = glcv_bgsub_create(&p, &bgsub);
    if (st != GLCV_OK) {
        g_free(location);
        return glcvgst_fail(&self->gl, "Cannot create the background subtraction", st);
    }
    GST_OBJECT_LOCK(self);
    self->bgsub = bgsub;
    self->gl.width = p.width;
    self->gl.height = p.height;
    GST_OBJECT_UNLOCK(self);
    glcv_bgsub_get_params(bgsub, &p);
    GST_INFO_OBJECT(self, "%s %dx%d, engine %s", glcv_bgsub_method_string(p.method), p.width, p.height,
                    glcv_engine_mode_string(p.engine));
    self->learned = 0;
    self->learning = FALSE;
    self->learn_frames = learn_frames;
    gboolean ok = TRUE;
    if (location && location[0]) {
        ok = learn_from_file(self, location);
    } else if (learn_frames > 0) {
        glcv_image_free(&self->scratch);
        st = glcv_image_alloc(p.width, p.height, GLCV_PIXEL_RGBA8, &self->scratch);
        if (st == GLCV_OK)
            st = glcv_bgsub_learn_begin(bgsub);
        self->learning = st == GLCV_OK;
        ok = st == GLCV_OK || glcvgst_fail(&self->gl, "Cannot start learning the background", st);
    }
    g_free(location);
    return ok;
}

/* Reads the frame texture into `image` (RGBA8 of the frame's size, any stride). */
static gboolean read_frame(GstGlcvBgsub *self, glcv_image *image)
{
    const int width = self->gl.width, height = self->gl.height;
    const size_t row = (size_t)width * 4;
    uint8_t *target = image->stride == row ? image->data : self->scratch.data;
    if (!target) {
        glcv_status st = glcv_image_alloc(width, height, GLCV_PIXEL_RGBA8, &self->scratch);
        if (st != GLCV_OK)
            return glcvgst_fail(&self->gl, "Cannot read the frame", st);
        target = self->scratch.data;
    }
    if (!gst_gl_memory_read_pixels(self->gl.in, target)) {
        GST_ELEMENT_ERROR(self, RESOURCE, READ, ("Cannot read the frame texture"), (NULL));
        return FALSE;
    }
    if (target != image->data)
        for (int y = 0; y < height; y++)
            memcpy(image->data + (size_t)y * image->stride, target + (size_t)y * row, row);
    return TRUE;
}

static void process_frame(GstGLContext *context, gpointer data)
{
    (void)context;
    GstGlcvBgsub *self = data;
    self->gl.ok = FALSE;
    if (!self->bgsub && !bgsub_start(self))
        return;
    unsigned int mask = 0;
    glcv_status st;
    if (self->learning) {
        if (!read_frame(self, &self->scratch))
            return;
        if ((st = glcv_bgsub_learn_add(self->bgsub, &self->scratch, 1)) != GLCV_OK) {
            glcvgst_fail(&self->gl, "Cannot learn from the frame", st);
            return;
        }
        if (++self->learned >= self->learn_frames) {
            if ((st = glcv_bgsub_learn_end(self->bgsub)) != GLCV_OK) {
                glcvgst_fail(&self->gl, "Cannot learn the background", st);
                return;
            }
            self->learning = FALSE;
        }
    } else {
        glcv_image frame;
        if ((st = glcv_bgsub_map_frames(self->bgsub, &frame, 1)) != GLCV_OK) {
            glcvgst_fail(&self->gl, "Cannot map the upload memory", st);
            return;
        }
        if (!read_frame(self, &frame))
            return;
        if ((st = glcv_bgsub_frames_mapped(self->bgsub, 0)) != GLCV_OK) {
            glcvgst_fail(&self->gl, "Cannot process the frame", st);
            return;
        }
        if (!(mask = glcv_bgsub_mask_texture(self->bgsub))) {
            glcvgst_fail(&self->gl, "No mask texture", GLCV_ERROR_GL);
            return;
        }
    }
    GST_OBJECT_LOCK(self);
    const int output = self->output;
    GST_OBJECT_UNLOCK(self);
    self->gl.ok = glcvgst_draw_mask(GST_GL_FILTER(self), self->gl.shader, GLCVGST_MASK_ARRAY, self->gl.in,
                                    self->gl.out, mask, (GlcvGstOutput)output);
}

static gboolean gst_glcv_bgsub_filter_texture(GstGLFilter *filter, GstGLMemory *input, GstGLMemory *output)
{
    return glcvgst_process_frame(filter, &((GstGlcvBgsub *)filter)->gl, process_frame, input, output);
}

static gboolean gst_glcv_bgsub_set_caps(GstGLFilter *filter, GstCaps *incaps, GstCaps *outcaps)
{
    (void)outcaps;
    return glcvgst_keep_frame_size(filter, &((GstGlcvBgsub *)filter)->gl, incaps,
                                   "glcvbgsub keeps a background of the first size", NULL);
}

static void gst_glcv_bgsub_gl_stop(GstGLBaseFilter *base)
{
    GstGlcvBgsub *self = (GstGlcvBgsub *)base;
    GST_OBJECT_LOCK(self);
    glcv_bgsub *bgsub = self->bgsub;
    self->bgsub = NULL;
    self->gl.width = self->gl.height = 0;
    GST_OBJECT_UNLOCK(self);
    glcv_bgsub_destroy(&bgsub);
    glcv_image_free(&self->scratch);
    gst_clear_object(&self->gl.shader);
    GST_GL_BASE_FILTER_CLASS(gst_glcv_bgsub_parent_class)->gl_stop(base);
}

/* ---- class ----------------------------------------------------------------------------------- */

static void gst_glcv_bgsub_class_init(GstGlcvBgsubClass *klass)
{
    GObjectClass *gobject = G_OBJECT_CLASS(klass);
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    GstGLBaseFilterClass *base = GST_GL_BASE_FILTER_CLASS(klass);
    GstGLFilterClass *filter = GST_GL_FILTER_CLASS(klass);
    const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
    const GParamFlags ready = rw | GST_PARAM_MUTABLE_READY;
    const glcv_bgsub_params d = DEFAULT_PARAMS;

    gobject->set_property = gst_glcv_bgsub_set_property;
    gobject->get_property = gst_glcv_bgsub_get_property;
    gobject->finalize = gst_glcv_bgsub_finalize;

    glcvgst_install_output_property(gobject, PROP_OUTPUT, rw | GST_PARAM_MUTABLE_PLAYING);
    g_object_class_install_property(gobject, PROP_METHOD,
                                    g_param_spec_enum("method", "Method", "How foreground is told from background",
                                                      method_get_type(), d.method, ready));
    g_object_class_install_property(
        gobject, PROP_LEARN_FRAMES,
        g_param_spec_int("learn-frames", "Learn frames",
                         "Learn from the first N frames (vsam: B their median and T their spread; diff2, diff3: T) "
                         "and process the frames after them (the N frames give an empty mask); 0: no learning "
                         "(vsam: B starts as the first frame)",
                         0, 65535, DEFAULT_LEARN_FRAMES, ready));
    g_object_class_install_property(
        gobject, PROP_BACKGROUND_LOCATION,
        g_param_spec_string("background-location", "Background location",
                            "Image file of the empty scene, learned from (B is it, T the minimum); when set, "
                            "learn-frames is not used",
                            NULL, ready));
    g_object_class_install_property(
        gobject, PROP_ENGINE,
        g_param_spec_enum("engine", "Engine", "Where the passes run", engine_get_type(), GLCV_ENGINE_AUTO, ready));
    g_object_class_install_property(
        gobject, PROP_GRAY,
        g_param_spec_boolean("gray", "Gray", "Work on luma instead of the three colours", FALSE, ready));
    g_object_class_install_property(gobject, PROP_ALPHA,
                                    g_param_spec_float("alpha", "Alpha",
                                                       "VSAM: how slowly B and T adapt, 0 < alpha < 1", 0.0001f,
                                                       0.9999f, d.alpha, ready));
    g_object_class_install_property(
        gobject, PROP_C,
        g_param_spec_float("c", "C", "T's multiple of |I - B|, 0 < c <= 16", 0.0001f, 16.0f, d.c, ready));
    g_object_class_install_property(gobject, PROP_MIN_THRESHOLD,
                                    g_param_spec_float("min-threshold", "Min threshold",
                                                       "T never falls below it (0: the default 20)", 0.0f, 255.0f,
                                                       d.min_threshold, ready));
    g_object_class_install_property(
        gobject, PROP_ABSORB,
        g_param_spec_int("absorb", "Absorb",
                         "VSAM: frames a pixel stays foreground without moving before it becomes background", 1, 255,
                         d.absorb, ready));
    g_object_class_install_property(
        gobject, PROP_VOTE,
        g_param_spec_int("vote", "Vote",
                         "Pixels of the 3x3 that must be foreground for the mask to say so, 1..9; -1: no vote (0: "
                         "the default 5)",
                         -1, 9, d.vote, ready));
    g_object_class_install_property(gobject, PROP_PASSES,
                                    g_param_spec_enum("passes", "Passes", "How the GL engines lay out the work",
                                                      passes_get_type(), d.passes, ready));

    gst_element_class_set_static_metadata(
        element, "glcv background subtraction", "Filter/Analyzer/Video",
        "VSAM background subtraction or frame differencing of GL frames with glcv: mask or overlay out", "glcv");
    glcvgst_filter_class_setup(filter);
    base->gl_stop = gst_glcv_bgsub_gl_stop;
    filter->filter_texture = gst_glcv_bgsub_filter_texture;
    filter->set_caps = gst_glcv_bgsub_set_caps;
    gst_type_mark_as_plugin_api(method_get_type(), 0);
    gst_type_mark_as_plugin_api(engine_get_type(), 0);
    gst_type_mark_as_plugin_api(passes_get_type(), 0);
}
