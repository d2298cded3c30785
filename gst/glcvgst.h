/* What the glcv GStreamer elements share: the glcv logger that feeds GStreamer's debug log, the
 * GL thread's state and plumbing (errors, the frame handed to the GL thread, the frame size kept,
 * the background image), the enum types of their properties, and the shaders that draw a mask,
 * an overlay or boxes into the element's output texture.
 *
 * The elements are GstGLFilter subclasses. Their glcv objects live on the pipeline's GL thread
 * (the GstGLContext of the filter is current there): they are created at the first frame, used
 * in filter_texture through gst_gl_context_thread_add, and destroyed in gl_stop.
 */
#ifndef GLCV_GST_H
#define GLCV_GST_H

#include <gst/gl/gl.h>
#include <gst/gl/gstglfilter.h>
#include <gst/gst.h>

#include <glcv/core.h>
#include <glcv/image.h>

G_BEGIN_DECLS

GST_DEBUG_CATEGORY_EXTERN(glcvgst_debug);

/* The last message glcv logged for an element (for the element's error messages). */
typedef struct glcvgst_log {
    GstElement *element;
    GMutex lock;
    char last[512];
} glcvgst_log;

void glcvgst_log_init(glcvgst_log *log, GstElement *element);
void glcvgst_log_clear(glcvgst_log *log);
void glcvgst_log_dispose(glcvgst_log *log);
/* A glcv logger that writes glcv's messages to the element's debug category and keeps the last
 * warning or error in `log`. */
glcv_logger glcvgst_logger(glcvgst_log *log);
/* "<what>: <status text> (<glcv's last message>)", for GST_ELEMENT_ERROR; g_free it. */
char *glcvgst_error_text(glcvgst_log *log, const char *what, glcv_status status);

/* What every element keeps for its GL thread. `width` and `height` are written under the
 * element's object lock (set_caps reads them on the streaming thread); the rest is the GL
 * thread's. */
typedef struct glcvgst_gl {
    glcvgst_log log;
    GstGLShader *shader;   /* what the element draws with, built at the first frame */
    int width, height;     /* the glcv object's size, 0 without one */
    GstGLMemory *in, *out; /* the frame in flight */
    gboolean ok;           /* what the frame's work on the GL thread came to */
} glcvgst_gl;

/* Posts "<what>: <status text> (<glcv's last message>)" as the element's LIBRARY FAILED error.
 * Returns FALSE. */
gboolean glcvgst_fail(glcvgst_gl *gl, const char *what, glcv_status status);

/* The body of filter_texture: runs `process(context, filter)` on the GL thread with gl->in and
 * gl->out set to the frame, and returns the gl->ok it leaves. */
gboolean glcvgst_process_frame(GstGLFilter *filter, glcvgst_gl *gl, GstGLContextThreadFunc process, GstGLMemory *input,
                               GstGLMemory *output);

/* The body of set_caps for an element whose glcv object keeps the first frame size: FALSE, and
 * an element error whose reason is `keeps` ("glcvxxx keeps ... of the first size"), when the
 * object exists and `incaps` has another size. `*started` (may be NULL): whether it exists. */
gboolean glcvgst_keep_frame_size(GstGLFilter *filter, glcvgst_gl *gl, GstCaps *incaps, const char *keeps,
                                 gboolean *started);

/* Loads the RGBA image at `path` into `image` (glcv_image_free it) when it has the frames' size
 * (gl->width x gl->height); else FALSE and an element error ("Could not read the background
 * image ...", or its size against the frames'). */
gboolean glcvgst_load_background(glcvgst_gl *gl, const char *path, glcv_image *image);

/* The class setup every element shares: RGBA pad templates, desktop OpenGL only (the shaders
 * then ask for 3.3 core). */
void glcvgst_filter_class_setup(GstGLFilterClass *klass);

/* The enum type `name` of `values` (static), registered at the first call: the body of a
 * *_get_type function whose `static gsize type = 0` is `once`. */
GType glcvgst_enum_type(gsize *once, const char *name, const GEnumValue *values);

/* Output of the mask-producing elements. */
typedef enum {
    GLCVGST_OUTPUT_MASK = 0,   /* the mask as grey RGBA: white foreground, black background */
    GLCVGST_OUTPUT_OVERLAY = 1 /* the frame with the foreground tinted */
} GlcvGstOutput;
GType glcvgst_output_get_type(void);
/* Installs the "output" property (GlcvGstOutput, default mask) as property `id`. */
void glcvgst_install_output_property(GObjectClass *klass, guint id, GParamFlags flags);

/* glcv_engine_mode values of the GL modules (segmenter, background subtraction). */
GType glcvgst_gl_engine_get_type(void);
/* glcv_engine_mode values of the tracker. */
GType glcvgst_track_engine_get_type(void);

/* Which kind of mask texture the mask shader reads. */
typedef enum {
    GLCVGST_MASK_2D = 0,   /* GL_TEXTURE_2D, GL_R8 (glcv_segment_mask_texture) */
    GLCVGST_MASK_ARRAY = 1 /* GL_TEXTURE_2D_ARRAY, layer 0 (glcv_bgsub_mask_texture) */
} GlcvGstMaskKind;

/* Compiles the shader that draws a mask or an overlay (on the GL thread). NULL and an element
 * error posted on failure, e.g. a context without GLSL 3.30 core. */
GstGLShader *glcvgst_mask_shader_new(GstGLFilter *filter, GlcvGstMaskKind kind);

/* Draws `input` with the mask texture `mask` (0: no mask yet, all background) into `output`:
 * the mask as grey or the overlay. On the GL thread. */
gboolean glcvgst_draw_mask(GstGLFilter *filter, GstGLShader *shader, GlcvGstMaskKind kind, GstGLMemory *input,
                           GstGLMemory *output, unsigned int mask, GlcvGstOutput output_mode);

/* Largest number of boxes glcvtrack draws. */
#define GLCVGST_MAX_DRAWN_BOXES 64

/* Compiles the shader that draws boxes over a frame (on the GL thread). */
GstGLShader *glcvgst_box_shader_new(GstGLFilter *filter);

/* Draws `input` into `output` with the outlines of `count` boxes (x, y, w, h in pixels, row 0
 * at the top), green, or orange where lost[i] is nonzero. On the GL thread. */
gboolean glcvgst_draw_boxes(GstGLFilter *filter, GstGLShader *shader, GstGLMemory *input, GstGLMemory *output,
                            const float *boxes, const float *lost, int count);

/* The element types, registered by the plugin. */
GType gst_glcv_segment_get_type(void);
GType gst_glcv_track_get_type(void);
GType gst_glcv_bgsub_get_type(void);

G_END_DECLS

#endif
