/* glcvtrack: glcv's tracker (glcv/track.h: correlation filters or CAMSHIFT) on the pipeline's GL
 * context. The objects are given by their boxes in the first frame (boxes="x,y,w,h;..."): with
 * method=dcf each object's filters learn from that frame at its box; with method=camshift its hue
 * histogram is taken from that frame's texture (glcv_track_hist_compute_texture). Every frame's texture goes to
 * glcv_track_frame_texture (the CUDA engine maps it, the CPU engine reads it back). Each output
 * buffer is the frame, with the boxes drawn over it when draw-boxes is set, and carries one
 * GstVideoRegionOfInterestMeta per object: roi type "glcv-object", id = the object's id (the
 * index of its box), the axis-aligned box, and a "glcv-object" parameter structure with the
 * rotated box (cx, cy, width, height, angle), lost and iterations. */
#include "glcvgst.h"

#include <gst/video/gstvideometa.h>

#include <glcv/track.h>

#include <errno.h>
#include <stdlib.h>

#define GST_CAT_DEFAULT glcvgst_debug

/* More distinct input textures than this: the upstream pool was replaced (or is unusually big),
 * and the registrations of the ones seen are dropped. */
#define GLCVGST_MAX_TRACKED_TEXTURES 16

typedef struct _GstGlcvTrack {
    GstGLFilter parent;

    /* Properties (object lock). */
    char *boxes;
    gboolean draw_boxes;
    glcv_track_params params; /* the tracker's fields (size, engine and logger filled at start) */
    int s_min, v_min, v_max;

    /* The GL thread's state. */
    glcv_track *track;
    glcvgst_gl gl; /* the size is the tracker's */
    glcv_track_result *results; /* the frame's results, for the metas */
    int count, capacity;
    /* The textures given to glcv_track_frame_texture: the CUDA engine keeps a registration of
     * each, which must not outlive it (glcv/track.h), and GStreamer deletes a pool's textures when
     * it replaces the pool. They are forgotten on new caps and when more turn up than a pool
     * holds. */
    unsigned int textures[GLCVGST_MAX_TRACKED_TEXTURES];
    int n_textures;
} GstGlcvTrack;

typedef struct _GstGlcvTrackClass {
    GstGLFilterClass parent_class;
} GstGlcvTrackClass;

G_DEFINE_TYPE(GstGlcvTrack, gst_glcv_track, GST_TYPE_GL_FILTER)

enum {
    PROP_0,
    PROP_BOXES,
    PROP_DRAW_BOXES,
    PROP_BINS,
    PROP_SAT_BINS,
    PROP_METHOD,
    PROP_EPSILON,
    PROP_MAX_ITERATIONS,
    PROP_WINDOW,
    PROP_ASPECT,
    PROP_MIN_MASS,
    PROP_MAX_DISTANCE,
    PROP_LOST_CRITERIA,
    PROP_RECOVERY,
    PROP_RECOVERY_INTERVAL,
    PROP_MIN_WINDOW_AREA,
    PROP_RESET_WIDTH,
    PROP_S_MIN,
    PROP_V_MIN,
    PROP_V_MAX,
    PROP_ENGINE
};

/* The defaults are glcv track's: the library's, with the adaptive window. */
#define DEFAULT_PARAMS                                                                                                 \
    GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_DCF, .hue_bins = 60, .sat_bins = 1, .epsilon = 1.0f, .max_iterations = 10,                            \
                      .window = GLCV_TRACK_WINDOW_ADAPTIVE, .aspect = 1.2f, .min_mass = 0.1f, .max_distance = 0.7f,    \
                      .lost_criteria = GLCV_TRACK_LOST_MASS | GLCV_TRACK_LOST_HISTOGRAM | GLCV_TRACK_LOST_PEAK,        \
                      .recovery = GLCV_TRACK_RECOVERY_FRAME, .recovery_interval = 4, .min_window_area = 20,            \
                      .reset_width = 200, .engine = GLCV_ENGINE_AUTO)

static GType method_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GLCV_TRACK_METHOD_DCF, "Correlation filters with a scale filter and a colour model", "dcf"},
        {GLCV_TRACK_METHOD_CAMSHIFT, "A hue histogram's mean shift", "camshift"},
        {0, NULL, NULL},
    };
    return glcvgst_enum_type(&type, "GlcvGstTrackMethod", values);
}

static GType window_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GLCV_TRACK_WINDOW_OPENCV, "cv::CamShift's rotated box from the second moments", "opencv"},
        {GLCV_TRACK_WINDOW_PAPER, "Bradski's window: width 2 sqrt(M00/255), height aspect x width", "paper"},
        {GLCV_TRACK_WINDOW_ADAPTIVE, "An upright box of guarded size and a Kalman filter that predicts the window",
         "adaptive"},
        {0, NULL, NULL},
    };
    return glcvgst_enum_type(&type, "GlcvGstTrackWindow", values);
}

static GType recovery_get_type(void)
{
    static gsize type = 0;
    static const GEnumValue values[] = {
        {GLCV_TRACK_RECOVERY_FRAME, "A lost object searches the whole frame every recovery-interval frames", "frame"},
        {GLCV_TRACK_RECOVERY_NONE, "A lost object keeps its last window", "none"},
        {0, NULL, NULL},
    };
    return glcvgst_enum_type(&type, "GlcvGstTrackRecovery", values);
}

static GType lost_get_type(void)
{
    static gsize type = 0;
    static const GFlagsValue values[] = {
        {GLCV_TRACK_LOST_ITERATIONS, "The mean shift did not converge in max-iterations", "iterations"},
        {GLCV_TRACK_LOST_MASS, "M00 below min-mass times the first M00", "mass"},
        {GLCV_TRACK_LOST_HISTOGRAM, "Bhattacharyya distance to the model above max-distance", "histogram"},
        {GLCV_TRACK_LOST_PEAK, "method=dcf: the correlation peak's peak-to-sidelobe ratio too low", "peak"},
        {0, NULL, NULL},
    };
    if (g_once_init_enter(&type))
        g_once_init_leave(&type, g_flags_register_static("GlcvGstTrackLost", values));
    return (GType)type;
}

static void gst_glcv_track_init(GstGlcvTrack *self)
{
    self->params = DEFAULT_PARAMS;
    self->s_min = 30;
    self->v_min = 10;
    self->v_max = 255;
    glcvgst_log_init(&self->gl.log, GST_ELEMENT(self));
}

static void gst_glcv_track_finalize(GObject *object)
{
    GstGlcvTrack *self = (GstGlcvTrack *)object;
    g_free(self->boxes);
    g_free(self->results);
    glcvgst_log_dispose(&self->gl.log);
    G_OBJECT_CLASS(gst_glcv_track_parent_class)->finalize(object);
}

static void gst_glcv_track_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec)
{
    GstGlcvTrack *self = (GstGlcvTrack *)object;
    glcv_track_params *p = &self->params;
    GST_OBJECT_LOCK(self);
    switch (id) {
    case PROP_BOXES:
        g_free(self->boxes);
        self->boxes = g_value_dup_string(value);
        break;
    case PROP_DRAW_BOXES:
        self->draw_boxes = g_value_get_boolean(value);
        break;
    case PROP_BINS:
        p->hue_bins = g_value_get_int(value);
        break;
    case PROP_SAT_BINS:
        p->sat_bins = g_value_get_int(value);
        break;
    case PROP_EPSILON:
        p->epsilon = g_value_get_float(value);
        break;
    case PROP_MAX_ITERATIONS:
        p->max_iterations = g_value_get_int(value);
        break;
    case PROP_WINDOW:
        p->window = (glcv_track_window)g_value_get_enum(value);
        break;
    case PROP_METHOD:
        p->method = (glcv_track_method)g_value_get_enum(value);
        break;
    case PROP_ASPECT:
        p->aspect = g_value_get_float(value);
        break;
    case PROP_MIN_MASS:
        p->min_mass = g_value_get_float(value);
        break;
    case PROP_MAX_DISTANCE:
        p->max_distance = g_value_get_float(value);
        break;
    case PROP_LOST_CRITERIA:
        p->lost_criteria = g_value_get_flags(value);
        break;
    case PROP_RECOVERY:
        p->recovery = (glcv_track_recovery)g_value_get_enum(value);
        break;
    case PROP_RECOVERY_INTERVAL:
        p->recovery_interval = g_value_get_int(value);
        break;
    case PROP_MIN_WINDOW_AREA:
        p->min_window_area = g_value_get_int(value);
        break;
    case PROP_RESET_WIDTH:
        p->reset_width = g_value_get_int(value);
        break;
    case PROP_S_MIN:
        self->s_min = g_value_get_int(value);
        break;
    case PROP_V_MIN:
        self->v_min = g_value_get_int(value);
        break;
    case PROP_V_MAX:
        self->v_max = g_value_get_int(value);
        break;
    case PROP_ENGINE:
        p->engine = (glcv_engine_mode)g_value_get_enum(value);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        break;
    }
    GST_OBJECT_UNLOCK(self);
}

static void gst_glcv_track_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec)
{
    GstGlcvTrack *self = (GstGlcvTrack *)object;
    const glcv_track_params *p = &self->params;
    GST_OBJECT_LOCK(self);
    switch (id) {
    case PROP_BOXES:
        g_value_set_string(value, self->boxes);
        break;
    case PROP_DRAW_BOXES:
        g_value_set_boolean(value, self->draw_boxes);
        break;
    case PROP_BINS:
        g_value_set_int(value, p->hue_bins);
        break;
    case PROP_SAT_BINS:
        g_value_set_int(value, p->sat_bins);
        break;
    case PROP_EPSILON:
        g_value_set_float(value, p->epsilon);
        break;
    case PROP_MAX_ITERATIONS:
        g_value_set_int(value, p->max_iterations);
        break;
    case PROP_WINDOW:
        g_value_set_enum(value, p->window);
        break;
    case PROP_METHOD:
        g_value_set_enum(value, p->method);
        break;
    case PROP_ASPECT:
        g_value_set_float(value, p->aspect);
        break;
    case PROP_MIN_MASS:
        g_value_set_float(value, p->min_mass);
        break;
    case PROP_MAX_DISTANCE:
        g_value_set_float(value, p->max_distance);
        break;
    case PROP_LOST_CRITERIA:
        g_value_set_flags(value, p->lost_criteria);
        break;
    case PROP_RECOVERY:
        g_value_set_enum(value, p->recovery);
        break;
    case PROP_RECOVERY_INTERVAL:
        g_value_set_int(value, p->recovery_interval);
        break;
    case PROP_MIN_WINDOW_AREA:
        g_value_set_int(value, p->min_window_area);
        break;
    case PROP_RESET_WIDTH:
        g_value_set_int(value, p->reset_width);
        break;
    case PROP_S_MIN:
        g_value_set_int(value, self->s_min);
        break;
    case PROP_V_MIN:
        g_value_set_int(value, self->v_min);
        break;
    case PROP_V_MAX:
        g_value_set_int(value, self->v_max);
        break;
    case PROP_ENGINE:
        g_value_set_enum(value, p->engine);
        break;
    default:
        G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
        break;
    }
    GST_OBJECT_UNLOCK(self);
}

/* ---- the GL thread --------------------------------------------------------------------------- */

/* Parses "x,y,w,h;x,y,w,h;..." (spaces allowed) into at most `capacity` rectangles; -1 when the
 * text is not that (or a width or height below 1). */
static int parse_boxes(const char *text, glcv_rect *out, int capacity)
{
    int n = 0;
    const char *s = text ? text : "";
    while (*s) {
        while (*s == ' ' || *s == ';')
            s++;
        if (!*s)
            break;
        long v[4];
        for (int k = 0; k < 4; k++) {
            char *end = NULL;
            errno = 0;
            v[k] = strtol(s, &end, 10);
            if (end == s || errno || v[k] < -(1L << 24) || v[k] > (1L << 24))
                return -1;
            s = end;
            while (*s == ' ')
                s++;
            if (k < 3) {
                if (*s != ',')
                    return -1;
                s++;
            }
        }
        if (*s && *s != ';')
            return -1;
        if (v[2] < 1 || v[3] < 1 || n == capacity)
            return -1;
        out[n++] = (glcv_rect){(int)v[0], (int)v[1], (int)v[2], (int)v[3]};
    }
    return n;
}

/* Creates the tracker and adds the objects from the first frame's texture. */
static gboolean track_start(GstGlcvTrack *self, unsigned int frame)
{
    GstGLFilter *filter = GST_GL_FILTER(self);
    if (!self->gl.shader && !(self->gl.shader = glcvgst_box_shader_new(filter)))
        return FALSE;
    GST_OBJECT_LOCK(self);
    glcv_track_params p = self->params;
    char *boxes = g_strdup(self->boxes);
    const int s_min = self->s_min, v_min = self->v_min, v_max = self->v_max;
    GST_OBJECT_UNLOCK(self);

    glcv_rect rects[GLCV_TRACK_MAX_OBJECTS];
    const int n = parse_boxes(boxes, rects, GLCV_TRACK_MAX_OBJECTS);
    if (n < 0) {
        GST_ELEMENT_ERROR(self, RESOURCE, SETTINGS,
                          ("Cannot parse boxes=\"%s\": expected x,y,w,h[;x,y,w,h...] with w, h >= 1 (at most %d "
                           "boxes).",
                           boxes ? boxes : "", GLCV_TRACK_MAX_OBJECTS),
                          (NULL));
        g_free(boxes);
        return FALSE;
    }
    if (n == 0)
        GST_ELEMENT_WARNING(self, RESOURCE, SETTINGS, ("No boxes given: nothing is tracked."),
                            ("set boxes=\"x,y,w,h;...\" (the objects in the first frame)"));
    glcvgst_log_clear(&self->gl.log);
    p.width = GST_VIDEO_INFO_WIDTH(&filter->in_info);
    p.height = GST_VIDEO_INFO_HEIGHT(&filter->in_info);
    p.max_objects = n > 0 ? n : 1;
    p.logger = glcvgst_logger(&self->gl.log);
    glcv_track *track = NULL;
    glcv_status st = glcv_track_create(&p, &track);
    if (st == GLCV_OK)
        st = glcv_track_set_limits(track, s_min, v_min, v_max);
    if (st != GLCV_OK) {
        glcv_track_destroy(&track);
        g_free(boxes);
        return glcvgst_fail(&self->gl, "Cannot create the tracker", st);
    }
    GST_OBJECT_LOCK(self);
    self->track = track;
    self->gl.width = p.width;
    self->gl.height = p.height;
    GST_OBJECT_UNLOCK(self);
    glcv_track_get_params(track, &p);
    GST_INFO_OBJECT(self, "tracker %dx%d, engine %s, %d objects", p.width, p.height, glcv_engine_mode_string(p.engine),
                    n);
    gboolean ok = TRUE;
    for (int k = 0; k < n && ok; k++) {
        glcv_track_hist hist;
        int id = -1;
        const int dcf = p.method == GLCV_TRACK_METHOD_DCF; /* learns from the frame itself */
        st = dcf ? GLCV_OK : glcv_track_hist_compute_texture(track, frame, 0, rects[k], &hist);
        if (st == GLCV_OK)
            st = glcv_track_add(track, dcf ? NULL : &hist, rects[k], &id);
        if (st != GLCV_OK) {
            char *what = g_strdup_printf("Box %d,%d,%d,%d (frame %dx%d)", rects[k].x, rects[k].y, rects[k].width,
                                         rects[k].height, p.width, p.height);
            ok = glcvgst_fail(&self->gl, what, st);
            g_free(what);
        }
    }
    g_free(self->results);
    self->capacity = n;
    self->results = g_new0(glcv_track_result, n > 0 ? n : 1);
    g_free(boxes);
    return ok;
}

/* Drops the tracker's registrations of every texture it was given (on the GL thread). */
static void forget_textures(GstGLContext *context, gpointer data)
{
    (void)context;
    GstGlcvTrack *self = data;
    for (int k = 0; k < self->n_textures && self->track; k++)
        glcv_track_forget_texture(self->track, self->textures[k]);
    self->n_textures = 0;
}

/* Notes a texture given to the tracker. */
static void note_texture(GstGlcvTrack *self, unsigned int tex)
{
    for (int k = 0; k < self->n_textures; k++)
        if (self->textures[k] == tex)
            return;
    if (self->n_textures == GLCVGST_MAX_TRACKED_TEXTURES) {
        GST_DEBUG_OBJECT(self, "more than %d input textures: forgetting the ones seen", GLCVGST_MAX_TRACKED_TEXTURES);
        forget_textures(NULL, self);
    }
    self->textures[self->n_textures++] = tex;
}

static void process_frame(GstGLContext *context, gpointer data)
{
    (void)context;
    GstGlcvTrack *self = data;
    const unsigned int tex = gst_gl_memory_get_texture_id(self->gl.in);
    self->gl.ok = FALSE;
    self->count = 0;
    if (!self->track && !track_start(self, tex))
        return;
    glcv_status st;
    if (self->capacity > 0) {
        note_texture(self, tex);
        if ((st = glcv_track_frame_texture(self->track, tex, 0)) != GLCV_OK) {
            glcvgst_fail(&self->gl, "Cannot track in the frame", st);
            return;
        }
        if ((st = glcv_track_results(self->track, self->results, self->capacity, &self->count)) != GLCV_OK) {
            glcvgst_fail(&self->gl, "Cannot read the tracking results", st);
            return;
        }
    }
    GST_OBJECT_LOCK(self);
    const gboolean draw = self->draw_boxes;
    GST_OBJECT_UNLOCK(self);
    float boxes[4 * GLCVGST_MAX_DRAWN_BOXES], lost[GLCVGST_MAX_DRAWN_BOXES];
    int drawn = 0;
    for (int k = 0; draw && k < self->count && drawn < GLCVGST_MAX_DRAWN_BOXES; k++, drawn++) {
        const glcv_rect *b = &self->results[k].bbox;
        boxes[4 * drawn] = (float)b->x;
        boxes[4 * drawn + 1] = (float)b->y;
        boxes[4 * drawn + 2] = (float)b->width;
        boxes[4 * drawn + 3] = (float)b->height;
        lost[drawn] = self->results[k].lost ? 1.0f : 0.0f;
    }
    self->gl.ok =
        glcvgst_draw_boxes(GST_GL_FILTER(self), self->gl.shader, self->gl.in, self->gl.out, boxes, lost, drawn);
}

static gboolean gst_glcv_track_filter_texture(GstGLFilter *filter, GstGLMemory *input, GstGLMemory *output)
{
    return glcvgst_process_frame(filter, &((GstGlcvTrack *)filter)->gl, process_frame, input, output);
}

/* Tracks (filter_texture), then attaches the objects' boxes to the output buffer. */
static gboolean gst_glcv_track_filter(GstGLFilter *filter, GstBuffer *inbuf, GstBuffer *outbuf)
{
    GstGlcvTrack *self = (GstGlcvTrack *)filter;
    if (!gst_gl_filter_filter_texture(filter, inbuf, outbuf))
        return FALSE;
    for (int k = 0; k < self->count; k++) {
        const glcv_track_result *r = &self->results[k];
        GstVideoRegionOfInterestMeta *meta = gst_buffer_add_video_region_of_interest_meta(
            outbuf, "glcv-object", (guint)r->bbox.x, (guint)r->bbox.y, (guint)r->bbox.width, (guint)r->bbox.height);
        meta->id = r->id;
        gst_video_region_of_interest_meta_add_param(
            meta, gst_structure_new("glcv-object", "cx", G_TYPE_DOUBLE, (double)r->cx, "cy", G_TYPE_DOUBLE,
                                    (double)r->cy, "width", G_TYPE_DOUBLE, (double)r->width, "height", G_TYPE_DOUBLE,
                                    (double)r->height, "angle", G_TYPE_DOUBLE, (double)r->angle, "lost", G_TYPE_BOOLEAN,
                                    r->lost != 0, "iterations", G_TYPE_INT, r->iterations, NULL));
    }
    return TRUE;
}

/* The tracker's windows are in the first size's pixels: a new size mid-stream is an error. */
static gboolean gst_glcv_track_set_caps(GstGLFilter *filter, GstCaps *incaps, GstCaps *outcaps)
{
    (void)outcaps;
    gboolean started = FALSE;
    if (!glcvgst_keep_frame_size(filter, &((GstGlcvTrack *)filter)->gl, incaps,
                                 "glcvtrack's objects are in the first size's pixels", &started))
        return FALSE;
    /* New caps: upstream's pool, and its textures, may be new. */
    if (started)
        gst_gl_context_thread_add(GST_GL_BASE_FILTER(filter)->context, forget_textures, filter);
    return TRUE;
}

static void gst_glcv_track_gl_stop(GstGLBaseFilter *base)
{
    GstGlcvTrack *self = (GstGlcvTrack *)base;
    GST_OBJECT_LOCK(self);
    glcv_track *track = self->track;
    self->track = NULL;
    self->gl.width = self->gl.height = 0;
    GST_OBJECT_UNLOCK(self);
    glcv_track_destroy(&track); /* drops its registrations of the upstream textures */
    self->count = 0;
    self->n_textures = 0;
    gst_clear_object(&self->gl.shader);
    GST_GL_BASE_FILTER_CLASS(gst_glcv_track_parent_class)->gl_stop(base);
}

/* ---- class ----------------------------------------------------------------------------------- */

static void gst_glcv_track_class_init(GstGlcvTrackClass *klass)
{
    GObjectClass *gobject = G_OBJECT_CLASS(klass);
    GstElementClass *element = GST_ELEMENT_CLASS(klass);
    GstGLBaseFilterClass *base = GST_GL_BASE_FILTER_CLASS(klass);
    GstGLFilterClass *filter = GST_GL_FILTER_CLASS(klass);
    const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS;
    const GParamFlags ready = rw | GST_PARAM_MUTABLE_READY;
    const glcv_track_params d = DEFAULT_PARAMS;

    gobject->set_property = gst_glcv_track_set_property;
    gobject->get_property = gst_glcv_track_get_property;
    gobject->finalize = gst_glcv_track_finalize;

    g_object_class_install_property(
        gobject, PROP_BOXES,
        g_param_spec_string("boxes", "Boxes",
                            "The objects in the first frame: \"x,y,w,h;x,y,w,h;...\" (pixels, row 0 at the top); "
                            "object k gets id k",
                            NULL, ready));
    g_object_class_install_property(
        gobject, PROP_DRAW_BOXES,
        g_param_spec_boolean("draw-boxes", "Draw boxes",
                             "Draw each object's box over the frame (green, orange when lost)", FALSE,
                             rw | GST_PARAM_MUTABLE_PLAYING));
    g_object_class_install_property(
        gobject, PROP_BINS,
        g_param_spec_int("bins", "Bins", "Hue bins of the histograms (over H 0..179)", 1, 180, d.hue_bins, ready));
    g_object_class_install_property(
        gobject, PROP_SAT_BINS,
        g_param_spec_int("sat-bins", "Saturation bins",
                         "Saturation bins: 1 = hue only, 2..256 = hue x saturation (bins x sat-bins <= 4096)", 1, 256,
                         d.sat_bins, ready));
    g_object_class_install_property(gobject, PROP_EPSILON,
                                    g_param_spec_float("epsilon", "Epsilon",
                                                       "Mean-shift convergence: stop when the window moves less",
                                                       0.001f, 1000.0f, d.epsilon, ready));
    g_object_class_install_property(gobject, PROP_MAX_ITERATIONS,
                                    g_param_spec_int("max-iterations", "Max iterations",
                                                     "Mean-shift iterations per frame", 1, 1000, d.max_iterations,
                                                     ready));
    g_object_class_install_property(gobject, PROP_METHOD,
                                    g_param_spec_enum("method", "Method", "The tracking method", method_get_type(),
                                                      d.method, ready));
    g_object_class_install_property(gobject, PROP_WINDOW,
                                    g_param_spec_enum("window", "Window",
                                                      "How the window is sized after the mean shift", window_get_type(),
                                                      d.window, ready));
    g_object_class_install_property(
        gobject, PROP_ASPECT,
        g_param_spec_float("aspect", "Aspect", "window=paper: height / width", 0.01f, 100.0f, d.aspect, ready));
    g_object_class_install_property(gobject, PROP_MIN_MASS,
                                    g_param_spec_float("min-mass", "Min mass",
                                                       "Lost below this fraction of the first M00 (0: the default 0.1)",
                                                       0.0f, 1.0f, d.min_mass, ready));
    g_object_class_install_property(
        gobject, PROP_MAX_DISTANCE,
        g_param_spec_float("max-distance", "Max distance",
                           "Lost above this Bhattacharyya distance to the model, 1 = never (0: the default 0.7)", 0.0f,
                           1.0f, d.max_distance, ready));
    g_object_class_install_property(gobject, PROP_LOST_CRITERIA,
                                    g_param_spec_flags("lost-criteria", "Lost criteria",
                                                       "What marks an object lost (none: the default, mass+histogram)",
                                                       lost_get_type(), d.lost_criteria, ready));
    g_object_class_install_property(
        gobject, PROP_RECOVERY,
        g_param_spec_enum("recovery", "Recovery", "What a lost object does", recovery_get_type(), d.recovery, ready));
    g_object_class_install_property(
        gobject, PROP_RECOVERY_INTERVAL,
        g_param_spec_int("recovery-interval", "Recovery interval",
                         "recovery=frame: the whole frame is searched after this many lost frames", 1, 1000000,
                         d.recovery_interval, ready));
    g_object_class_install_property(
        gobject, PROP_MIN_WINDOW_AREA,
        g_param_spec_int("min-window-area", "Min window area",
                         "A window of fewer pixels is reset to reset-width; -1 = never (0: the default 20)", -1,
                         GLCV_TRACK_MAX_MIN_WINDOW_AREA, d.min_window_area, ready));
    g_object_class_install_property(
        gobject, PROP_RESET_WIDTH,
        g_param_spec_int("reset-width", "Reset width", "Width of a reset window", 1, 16384, d.reset_width, ready));
    g_object_class_install_property(
        gobject, PROP_S_MIN,
        g_param_spec_int("s-min", "S min", "A pixel counts when its saturation >= s-min", 0, 255, 30, ready));
    g_object_class_install_property(
        gobject, PROP_V_MIN,
        g_param_spec_int("v-min", "V min", "A pixel counts when v-min <= its value", 0, 255, 10, ready));
    g_object_class_install_property(
        gobject, PROP_V_MAX,
        g_param_spec_int("v-max", "V max", "A pixel counts when its value <= v-max", 0, 255, 255, ready));
    g_object_class_install_property(gobject, PROP_ENGINE,
                                    g_param_spec_enum("engine", "Engine", "Where the tracker runs",
                                                      glcvgst_track_engine_get_type(), GLCV_ENGINE_AUTO, ready));

    gst_element_class_set_static_metadata(
        element, "glcv tracker", "Filter/Analyzer/Video",
        "CAMSHIFT tracking of objects given in the first frame, with glcv on GL frames: the frame out with a "
        "GstVideoRegionOfInterestMeta (\"glcv-object\") per object, and optionally the boxes drawn",
        "glcv");
    glcvgst_filter_class_setup(filter);
    base->gl_stop = gst_glcv_track_gl_stop;
    filter->filter = gst_glcv_track_filter;
    filter->filter_texture = gst_glcv_track_filter_texture;
    filter->set_caps = gst_glcv_track_set_caps;
    gst_type_mark_as_plugin_api(window_get_type(), 0);
    gst_type_mark_as_plugin_api(recovery_get_type(), 0);
    gst_type_mark_as_plugin_api(lost_get_type(), 0);
    gst_type_mark_as_plugin_api(method_get_type(), 0);
    gst_type_mark_as_plugin_api(glcvgst_track_engine_get_type(), 0);
}
