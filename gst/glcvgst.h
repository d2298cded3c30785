/* What the glcv GStreamer elements share: the glcv logger that feeds GStreamer's debug log,
 * the enum types of their properties, and the shader that draws a mask or an overlay into the
 * element's output texture.
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

/* Output of the mask-producing elements. */
typedef enum {
    GLCVGST_OUTPUT_MASK = 0,   /* the mask as grey RGBA: white foreground, black background */
    GLCVGST_OUTPUT_OVERLAY = 1 /* the frame with the foreground tinted */
} GlcvGstOutput;
GType glcvgst_output_get_type(void);

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
