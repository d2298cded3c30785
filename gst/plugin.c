/* The glcv GStreamer plugin: glcvsegment, glcvtrack and glcvbgsub, elements on the pipeline's own
 * OpenGL context that use glcv's texture-ID API (no frame leaves the GPU on the GL engines). */
#include "glcvgst.h"

#include <glcv/glcv.h>

static gboolean plugin_init(GstPlugin *plugin)
{
    GST_DEBUG_CATEGORY_INIT(glcvgst_debug, "glcv", 0, "glcv elements");
    return gst_element_register(plugin, "glcvsegment", GST_RANK_NONE, gst_glcv_segment_get_type()) &&
           gst_element_register(plugin, "glcvtrack", GST_RANK_NONE, gst_glcv_track_get_type()) &&
           gst_element_register(plugin, "glcvbgsub", GST_RANK_NONE, gst_glcv_bgsub_get_type());
}

#define PACKAGE "glcv"
GST_PLUGIN_DEFINE(GST_VERSION_MAJOR, GST_VERSION_MINOR, glcv,
                  "GPU video analysis on the pipeline's OpenGL context: segmentation, background subtraction, "
                  "CAMSHIFT tracking",
                  plugin_init, GLCV_GST_VERSION, "unknown", "glcv", "glcv")
