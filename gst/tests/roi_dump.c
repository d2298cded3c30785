/* gst_roi_dump: runs a pipeline that ends in "fakesink name=sink signal-handoffs=true" and prints
 * the GstVideoRegionOfInterestMeta of every buffer that reaches the sink as CSV:
 *   frame,id,type,x,y,w,h,lost
 * (frame counts the buffers from 0; lost from the "glcv-object" parameter, -1 without one).
 * Exit status 0 at end of stream, 1 on a pipeline error (printed on stderr), 2 on a usage error.
 *
 * usage: gst_roi_dump 'PIPELINE ... ! fakesink name=sink signal-handoffs=true' */
#include <gst/gst.h>
#include <gst/video/gstvideometa.h>

#include <stdio.h>

static void handoff(GstElement *sink, GstBuffer *buffer, GstPad *pad, gpointer user)
{
    (void)sink;
    (void)pad;
    int *frame = user;
    gpointer state = NULL;
    GstMeta *meta;
    while ((meta = gst_buffer_iterate_meta_filtered(buffer, &state, GST_VIDEO_REGION_OF_INTEREST_META_API_TYPE))) {
        GstVideoRegionOfInterestMeta *roi = (GstVideoRegionOfInterestMeta *)meta;
        GstStructure *param = gst_video_region_of_interest_meta_get_param(roi, "glcv-object");
        gboolean lost = FALSE;
        int lost_out = param && gst_structure_get_boolean(param, "lost", &lost) ? (lost != 0) : -1;
        printf("%d,%d,%s,%u,%u,%u,%u,%d\n", *frame, roi->id, g_quark_to_string(roi->roi_type), roi->x, roi->y, roi->w,
               roi->h, lost_out);
    }
    (*frame)++;
}

int main(int argc, char **argv)
{
    gst_init(&argc, &argv);
    if (argc != 2) {
        fprintf(stderr, "usage: gst_roi_dump 'PIPELINE ! fakesink name=sink signal-handoffs=true'\n");
        return 2;
    }
    GError *error = NULL;
    GstElement *pipeline = gst_parse_launch(argv[1], &error);
    if (!pipeline || error) {
        fprintf(stderr, "gst_roi_dump: %s\n", error ? error->message : "cannot build the pipeline");
        return 1;
    }
    GstElement *sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
    if (!sink) {
        fprintf(stderr, "gst_roi_dump: the pipeline has no element named sink\n");
        return 2;
    }
    int frame = 0;
    g_signal_connect(sink, "handoff", G_CALLBACK(handoff), &frame);
    printf("frame,id,type,x,y,w,h,lost\n");
    int rc = 0;
    if (gst_element_set_state(pipeline, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        fprintf(stderr, "gst_roi_dump: the pipeline does not start\n");
        rc = 1;
    }
    GstBus *bus = gst_element_get_bus(pipeline);
    GstMessage *msg =
        rc ? NULL : gst_bus_timed_pop_filtered(bus, GST_CLOCK_TIME_NONE, GST_MESSAGE_ERROR | GST_MESSAGE_EOS);
    if (msg && GST_MESSAGE_TYPE(msg) == GST_MESSAGE_ERROR) {
        GError *err = NULL;
        char *debug = NULL;
        gst_message_parse_error(msg, &err, &debug);
        fprintf(stderr, "gst_roi_dump: error from %s: %s\n%s\n", GST_OBJECT_NAME(msg->src), err->message,
                debug ? debug : "");
        g_clear_error(&err);
        g_free(debug);
        rc = 1;
    }
    if (msg)
        gst_message_unref(msg);
    gst_object_unref(bus);
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(sink);
    gst_object_unref(pipeline);
    fprintf(stderr, "gst_roi_dump: %d frames\n", frame);
    return rc;
}
