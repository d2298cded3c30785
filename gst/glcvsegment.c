/* glcvsegment: glcv's segmenter (glcv/segment.h) on the pipeline's GL context. GL memory in,
 * the mask (grey RGBA) or an overlay out. The frame texture goes to glcv_segment_frame_texture
 * and the mask texture it returns is drawn into the output texture: no frame is read back on the
 * GL engines. The background is a file (background-location), the first learn-frames frames
 * (learned, as glcv segment --learn N does: those frames give an empty mask), or the first frame. */
#include "glcvgst.h"

#include <glcv/image.h>
#include <glcv/segment.h>

#define GST_CAT_DEFAULT glcvgst_debug

typedef struct _GstGlcvSegment {
    GstGLFilter parent;

    /* Properties (object lock). Negative thresholds: glcv's defaults (calibrated on learning). */
    float ts, odc, b1, b2, adapt_rate;
    int iterations;
    guint64 seed;
    int engine, preset, learn_frames_set, output;
    gboolean fixed_parameters;
    char *background_location;
    unsigned dirty; /* bits of the setters to call before the next frame */

    /* The GL thread's state. */
    glcv_segment *seg;
    glcvgst_gl gl; /* the size is the segmenter's */
    int learned;
    int learn_frames; /* of this stream */
    gboolean learning, background_from_first_frame;
} GstGlcvSegment;

typedef struct _GstGlcvSegmentClass {
    GstGLFilterClass parent_class;
} GstGlcvSegmentClass;

G_DEFINE_TYPE(GstGlcvSegment, gst_glcv_segment, GST_TYPE_GL_FILTER)

enum {
    PROP_0,
    PROP_OUTPUT,
    PROP_BACKGROUND_LOCATION,
    PROP_LEARN_FRAMES,
    PROP_ENGINE,
    PROP_PRESET,
    PROP_FIXED_PARAMETERS,
    PROP_TS,
    PROP_ODC,
    PROP_B1,
    PROP_B2,
    PROP_ITERATIONS,
    PROP_SEED,
    PROP_ADAPT_RATE
};

/* The setters a property change calls (bits of `dirty`). */
enum { SET_TS = 1, SET_ODC = 2, SET_B1 = 4, SET_B2 = 8, SET_ITERATIONS = 16, SET_SEED = 32, SET_ADAPT = 64 };

enum { DEFAULT_LEARN_FRAMES = 30 };

static GType preset_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GLCV_SEGMENT_CALIBRATED, "Parameters not given are calibrated on the learned frames", "calibrated"},
        {GLCV_SEGMENT_PAPER, "The paper's fixed values (Ts 310, Odc 5800, B1 2, B2 200), mean background", "paper"},
        {0, NULL, NULL},
    };
    return glcvgst_enum_type(&type, "GlcvGstSegmentPreset", values);
}

static void gst_glcv_segment_init(GstGlcvSegment *self)
{
    self->ts = self->odc = self->b1 = self->b2 = self->adapt_rate = -1.0f;
    self->iterations = -1;
    self->engine = GLCV_ENGINE_AUTO;
    self->preset = GLCV_SEGMENT_CALIBRATED;
    self->learn_frames_set = DEFAULT_LEARN_FRAMES;
    self->output = GLCVGST_OUTPUT_MASK;
    glcvgst_log_init(&self->gl.log, GST_ELEMENT(self));
}

static void gst_glcv_segment_finalize(GObject *object)
{
    GstGlcvSegment *self = (GstGlcvSegment *)object;
    g_free(self->background_location);
    glcvgst_log_dispose(&self->gl.log);
    G_OBJECT_CLASS(gst_glcv_segment_parent_class)->finalize(object);
}

static void set_threshold(GstGlcvSegment *self, float *field, const GValue *value, unsigned bit)
{
    *field = g_value_get_float(value);
    self->dirty |= bit;
}

static void gst_glcv_segment_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
    GstGlcvSegment *self = (GstGlcvSegment *)object;
    GST_OBJECT_LOCK(self);
    switch (id) {
    case PROP_OUTPUT:
        self->output = g_value_get_enum(value);
        break;
    case PROP_BACKGROUND_LOCATION:
        g_free(self->background_location);
        self->background_location = g_value_dup_string(value);
        break;
    case PROP_LEARN_FRAMES:
        self->learn_frames_set = g_value_get_int(value);
        break;
    case PROP_ENGINE:
        self->engine = g_value_get_enum(value);
        break;
    case PROP_PRESET:
        self->preset = g_value_get_enum(value);
        break;
    case PROP_FIXED_PARAMETERS:
        self->fixed_parameters = g_value_get_boolean(value);
        break;
    case PROP_TS:
        set_threshold(self, &self->ts, value, SET_TS);
        break;
    case PROP_ODC:
        set_threshold(self, &self->odc, value, SET_ODC);
        break;
    case PROP_B1:
        set_threshold(self, &self->b1, value, SET_B1);
        break;
    case PROP_B2:
        set_threshold(self, &self->b2, value, SET_B2);
        break;
    case PROP_ADAPT_RATE:
        set_threshold(self, &self->adapt_rate, value, SET_ADAPT);
        break;
    case PROP_ITERATIONS:
        self->iterations = g_value_get_int(value);
        self->dirty |= SET_ITERATIONS;
        break;
    case PROP_SEED:
        self->seed = g_value_get_uint64(value);
        self->dirty |= SET_SEED;
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        break;
    }
    GST_OBJECT_UNLOCK(self);
}

/* The value of a threshold: the one set, or the one in use (glcv's default or calibration) while
 * the segmenter runs and it was not set; -1 before. */
static float threshold_value(const GstGlcvSegment *self, float set, float used)
{
    return set >= 0.0f || !self->seg ? set : used;
}

static void gst_glcv_segment_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    GstGlcvSegment *self = (GstGlcvSegment *)object;
    glcv_segment_params p = {0};
    GST_OBJECT_LOCK(self);
    if (self->seg)
        glcv_segment_get_params(self->seg, &p);
    switch (id) {
    case PROP_OUTPUT:
        g_value_set_enum(value, self->output);
        break;
    case PROP_BACKGROUND_LOCATION:
        g_value_set_string(value, self->background_location);
        break;
    case PROP_LEARN_FRAMES:
        g_value_set_int(value, self->learn_frames_set);
        break;
    case PROP_ENGINE:
        g_value_set_enum(value, self->engine);
        break;
    case PROP_PRESET:
        g_value_set_enum(value, self->preset);
        break;
    case PROP_FIXED_PARAMETERS:
        g_value_set_boolean(value, self->fixed_parameters);
        break;
    case PROP_TS:
        g_value_set_float(value, threshold_value(self, self->ts, p.ts));
        break;
    case PROP_ODC:
        g_value_set_float(value, threshold_value(self, self->odc, p.odc));
        break;
    case PROP_B1:
        g_value_set_float(value, threshold_value(self, self->b1, p.b1));
        break;
    case PROP_B2:
        g_value_set_float(value, threshold_value(self, self->b2, p.b2));
        break;
    case PROP_ADAPT_RATE:
        g_value_set_float(value, threshold_value(self, self->adapt_rate, p.adapt_rate));
        break;
    case PROP_ITERATIONS:
        g_value_set_int(value, self->iterations >= 0 || !self->seg ? self->iterations : p.iterations);
        break;
    case PROP_SEED:
        g_value_set_uint64(value, self->seed);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        break;
    }
    GST_OBJECT_UNLOCK(self);
}

/* ---- the GL thread --------------------------------------------------------------------------- */

/* The properties, as one frame uses them (copied under the object lock: glcv is not called and
 * no message posted while it is held). */
typedef struct settings {
    float ts, odc, b1, b2, adapt_rate;
    int iterations;
    guint64 seed;
    int engine, preset, learn_frames, output;
    gboolean fixed_parameters;
    char *background_location;
    unsigned dirty;
} settings;

static void take_settings(GstGlcvSegment *self, settings *s)
{
    GST_OBJECT_LOCK(self);
    s->ts = self->ts;
    s->odc = self->odc;
    s->b1 = self->b1;
    s->b2 = self->b2;
    s->adapt_rate = self->adapt_rate;
    s->iterations = self->iterations;
    s->seed = self->seed;
    s->engine = self->engine;
    s->preset = self->preset;
    s->learn_frames = self->learn_frames_set;
    s->output = self->output;
    s->fixed_parameters = self->fixed_parameters;
    s->background_location = g_strdup(self->background_location);
    s->dirty = self->dirty;
    self->dirty = 0;
    GST_OBJECT_UNLOCK(self);
}

/* Calls the setters of the thresholds given since the last frame. */
static gboolean apply_setters(GstGlcvSegment *self, const settings *s)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {
        {SET_TS, "ts"},     {SET_ODC, "odc"},         {SET_B1, "b1"}, {SET_B2, "b2"}, {SET_ITERATIONS, "iterations"},
        {SET_SEED, "seed"}, {SET_ADAPT, "adapt-rate"}};
    for (size_t k = 0; k < G_N_ELEMENTS(names); k++) {
        if (!(s->dirty & names[k].bit))
            continue;
        glcv_status st = GLCV_OK;
        switch (names[k].bit) {
        case SET_TS:
            st = s->ts >= 0.0f ? glcv_segment_set_ts(self->seg, s->ts) : GLCV_OK;
            break;
        case SET_ODC:
            st = s->odc >= 0.0f ? glcv_segment_set_odc(self->seg, s->odc) : GLCV_OK;
            break;
        case SET_B1:
            st = s->b1 >= 0.0f ? glcv_segment_set_b1(self->seg, s->b1) : GLCV_OK;
            break;
        case SET_B2:
            st = s->b2 >= 0.0f ? glcv_segment_set_b2(self->seg, s->b2) : GLCV_OK;
            break;
        case SET_ITERATIONS:
            st = s->iterations >= 0 ? glcv_segment_set_iterations(self->seg, s->iterations) : GLCV_OK;
            break;
        case SET_SEED:
            st = glcv_segment_set_seed(self->seg, s->seed);
            break;
        default:
            st = s->adapt_rate >= 0.0f ? glcv_segment_set_adapt_rate(self->seg, s->adapt_rate) : GLCV_OK;
            break;
        }
        if (st != GLCV_OK) {
            char *what = g_strdup_printf("Property %s refused", names[k].name);
            glcvgst_fail(&self->gl, what, st);
            g_free(what);
            return FALSE;
        }
    }
    return TRUE;
}

/* Loads background-location into the segmenter. */
static gboolean load_background(GstGlcvSegment *self, const char *path)
{
    glcv_image image = {0};
    if (!glcvgst_load_background(&self->gl, path, &image))
        return FALSE;
    const glcv_status st = glcv_segment_set_background(self->seg, &image);
    glcv_image_free(&image);
    return st == GLCV_OK || glcvgst_fail(&self->gl, "Cannot set the background", st);
}

/* Creates the segmenter for the negotiated size and sets up its background. */
static gboolean segment_start(GstGlcvSegment *self, settings *s)
{
    GstGLFilter *filter = GST_GL_FILTER(self);
    const int width = GST_VIDEO_INFO_WIDTH(&filter->in_info), height = GST_VIDEO_INFO_HEIGHT(&filter->in_info);
    if (!self->gl.shader && !(self->gl.shader = glcvgst_mask_shader_new(filter, GLCVGST_MASK_2D)))
        return FALSE;
    glcvgst_log_clear(&self->gl.log);
    glcv_segment_params p =
        GLCV_SEGMENT_PARAMS(.width = width, .height = height, .engine = s->engine, .preset = s->preset,
                            .fixed_parameters = s->fixed_parameters, .logger = glcvgst_logger(&self->gl.log));
    glcv_segment *seg = NULL;
    glcv_status st = glcv_segment_create(&p, &seg);
    if (st != GLCV_OK)
        return glcvgst_fail(&self->gl, "Cannot create the segmenter", st);
    GST_OBJECT_LOCK(self);
    self->seg = seg;
    self->gl.width = width;
    self->gl.height = height;
    GST_OBJECT_UNLOCK(self);
    s->dirty = ~0u; /* every threshold given is set */
    self->learned = 0;
    self->learning = self->background_from_first_frame = FALSE;
    glcv_segment_get_params(seg, &p);
    GST_INFO_OBJECT(self, "segmenter %dx%d, engine %s", width, height, glcv_engine_mode_string(p.engine));
    if (s->background_location && s->background_location[0])
        return load_background(self, s->background_location);
    self->learn_frames = s->learn_frames;
    if (s->learn_frames > 0) {
        st = glcv_segment_learn_begin(seg);
        self->learning = st == GLCV_OK;
        return st == GLCV_OK || glcvgst_fail(&self->gl, "Cannot start learning the background", st);
    }
    self->background_from_first_frame = TRUE;
    return TRUE;
}

static void process_frame(GstGLContext *context, gpointer data)
{
    (void)context;
    GstGlcvSegment *self = data;
    self->gl.ok = FALSE;
    settings s;
    take_settings(self, &s);
    gboolean ready = (self->seg || segment_start(self, &s)) && apply_setters(self, &s);
    g_free(s.background_location);
    if (!ready)
        return;
    const unsigned int tex = gst_gl_memory_get_texture_id(self->gl.in);
    unsigned int mask = 0;
    glcv_status st;
    if (self->learning) {
        if ((st = glcv_segment_learn_add_texture(self->seg, tex)) != GLCV_OK) {
            glcvgst_fail(&self->gl, "Cannot learn from the frame", st);
            return;
        }
        if (++self->learned >= self->learn_frames) {
            if ((st = glcv_segment_learn_end(self->seg)) != GLCV_OK) {
                glcvgst_fail(&self->gl, "Cannot learn the background", st);
                return;
            }
            self->learning = FALSE;
            glcv_segment_params p;
            glcv_segment_get_params(self->seg, &p);
            GST_INFO_OBJECT(self, "background learned from %d frames: Ts %g, Odc %g, B1 %g, B2 %g", self->learned,
                            (double)p.ts, (double)p.odc, (double)p.b1, (double)p.b2);
        }
    } else if (self->background_from_first_frame) {
        if ((st = glcv_segment_set_background_texture(self->seg, tex)) != GLCV_OK) {
            glcvgst_fail(&self->gl, "Cannot take the first frame as the background", st);
            return;
        }
        self->background_from_first_frame = FALSE;
    } else {
        if ((st = glcv_segment_frame_texture(self->seg, tex, 0)) != GLCV_OK) {
            glcvgst_fail(&self->gl, "Cannot segment the frame", st);
            return;
        }
        if (!(mask = glcv_segment_mask_texture(self->seg))) {
            glcvgst_fail(&self->gl, "No mask texture", GLCV_ERROR_GL);
            return;
        }
    }
    self->gl.ok = glcvgst_draw_mask(GST_GL_FILTER(self), self->gl.shader, GLCVGST_MASK_2D, self->gl.in, self->gl.out,
                                    mask, (GlcvGstOutput)s.output);
}

static gboolean gst_glcv_segment_filter_texture(GstGLFilter *filter, GstGLMemory *input, GstGLMemory *output)
{
    return glcvgst_process_frame(filter, &((GstGlcvSegment *)filter)->gl, process_frame, input, output);
}

/* The segmenter keeps a background and a mask of one size: a new size mid-stream is an error. */
static gboolean gst_glcv_segment_set_caps(GstGLFilter *filter, GstCaps *incaps, GstCaps *outcaps)
{
    (void)outcaps;
    return glcvgst_keep_frame_size(filter, &((GstGlcvSegment *)filter)->gl, incaps,
                                   "glcvsegment keeps one background of the first size", NULL);
}

static void gst_glcv_segment_gl_stop(GstGLBaseFilter *base)
{
    GstGlcvSegment *self = (GstGlcvSegment *)base;
    GST_OBJECT_LOCK(self);
    glcv_segment *seg = self->seg;
    self->seg = NULL;
    self->gl.width = self->gl.height = 0;
    GST_OBJECT_UNLOCK(self);
    glcv_segment_destroy(&seg);
    gst_clear_object(&self->gl.shader);
    GST_GL_BASE_FILTER_CLASS(gst_glcv_segment_parent_class)->gl_stop(base);
}

/* ---- class ----------------------------------------------------------------------------------- */

static void gst_glcv_segment_class_init(GstGlcvSegmentClass *klass)
{
    GObjectClass *gobject = G_OBJECT_CLASS(klass);
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    GstGLBaseFilterClass *base = GST_GL_BASE_FILTER_CLASS(klass);
    GstGLFilterClass *filter = GST_GL_FILTER_CLASS(klass);
    const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
    const GParamFlags live = rw | GST_PARAM_MUTABLE_PLAYING | GST_PARAM_CONTROLLABLE;
    const GParamFlags ready = rw | GST_PARAM_MUTABLE_READY;

    gobject->set_property = gst_glcv_segment_set_property;
    gobject->get_property = gst_glcv_segment_get_property;
    gobject->finalize = gst_glcv_segment_finalize;

    glcvgst_install_output_property(gobject, PROP_OUTPUT, live);
    g_object_class_install_property(
        gobject, PROP_BACKGROUND_LOCATION,
        g_param_spec_string("background-location", "Background location",
                            "Image file of the empty scene (PNG, JPEG, BMP, TGA, PNM; the frames' size); when "
                            "set, learn-frames is not used",
                            NULL, ready));
    g_object_class_install_property(
        gobject, PROP_LEARN_FRAMES,
        g_param_spec_int("learn-frames", "Learn frames",
                         "Without background-location: learn the background from the first N frames (their "
                         "median; the parameters not given are calibrated on them) and segment the frames after "
                         "them (the N frames give an empty mask); 0: the first frame is the background",
                         0, 65535, DEFAULT_LEARN_FRAMES, ready));
    g_object_class_install_property(gobject, PROP_ENGINE,
                                    g_param_spec_enum("engine", "Engine", "Where the segmenter runs",
                                                      glcvgst_gl_engine_get_type(), GLCV_ENGINE_AUTO, ready));
    g_object_class_install_property(gobject, PROP_PRESET,
                                    g_param_spec_enum("preset", "Preset",
                                                      "What the parameters not given are, and how learning works",
                                                      preset_get_type(), GLCV_SEGMENT_CALIBRATED, ready));
    g_object_class_install_property(
        gobject, PROP_FIXED_PARAMETERS,
        g_param_spec_boolean("fixed-parameters", "Fixed parameters",
                             "Learning keeps the parameters instead of calibrating those not given", FALSE, ready));
    g_object_class_install_property(
        gobject, PROP_TS,
        g_param_spec_float("ts", "Ts", "Static threshold on D^2 (-1: the preset's, calibrated when learned)", -1.0f,
                           1e9f, -1.0f, live));
    g_object_class_install_property(
        gobject, PROP_ODC,
        g_param_spec_float("odc", "Odc", "Darkness compensation; 0 = purely illumination invariant (-1: the preset's)",
                           -1.0f, 1e9f, -1.0f, live));
    g_object_class_install_property(
        gobject, PROP_B1,
        g_param_spec_float("b1", "B1",
                           "Compactness of the first MRF iteration (temporal prior); > 0 (-1: the preset's)", -1.0f,
                           1e9f, -1.0f, live));
    g_object_class_install_property(
        gobject, PROP_B2,
        g_param_spec_float("b2", "B2", "Compactness of the later MRF iterations; > 0 (-1: the preset's)", -1.0f, 1e9f,
                           -1.0f, live));
    g_object_class_install_property(gobject, PROP_ITERATIONS,
                                    g_param_spec_int("iterations", "Iterations",
                                                     "MRF iterations with B2 after the B1 iteration (-1: 8)", -1, 1000,
                                                     -1, live));
    g_object_class_install_property(
        gobject, PROP_SEED,
        g_param_spec_uint64("seed", "Seed", "Seed of the MRF's subset orders (0: 0x5EED)", 0, G_MAXUINT64, 0, live));
    g_object_class_install_property(
        gobject, PROP_ADAPT_RATE,
        g_param_spec_float("adapt-rate", "Adapt rate",
                           "Background adaptation where the mask says background, 0..1; 0 = off (-1: the preset's: "
                           "0.01 calibrated, off paper)",
                           -1.0f, 1.0f, -1.0f, live));

    gst_element_class_set_static_metadata(
        element, "glcv segmenter", "Filter/Analyzer/Video",
        "Foreground/background segmentation (colinearity, darkness compensation, MRF) of GL frames with glcv: "
        "mask or overlay out, on the pipeline's GL context",
        "glcv");
    glcvgst_filter_class_setup(filter);
    base->gl_stop = gst_glcv_segment_gl_stop;
    filter->filter_texture = gst_glcv_segment_filter_texture;
    filter->set_caps = gst_glcv_segment_set_caps;
    gst_type_mark_as_plugin_api(glcvgst_output_get_type(), 0);
    gst_type_mark_as_plugin_api(glcvgst_gl_engine_get_type(), 0);
    gst_type_mark_as_plugin_api(preset_get_type(), 0);
}
