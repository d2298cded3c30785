/* An RTSP server for the tests of camera lists: GStreamer's gst-rtsp-server on the loopback, serving
 * a video file's H.264 stream at rtsp://127.0.0.1:PORT/cam (paced by its timestamps, as a camera
 * sends, over UDP or TCP as the client asks; each client from the file's start), until it is killed.
 *
 * usage: rtsp_server FILE.mkv PORT   (prints "ready" once it listens; exit 1 on a failure) */
#include <gst/gst.h>
#include <gst/rtsp-server/rtsp-server.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: rtsp_server FILE.mkv PORT\n");
        return 1;
    }
    gst_init(&argc, &argv);
    GMainLoop *loop = g_main_loop_new(NULL, FALSE);
    GstRTSPServer *server = gst_rtsp_server_new();
    gst_rtsp_server_set_address(server, "127.0.0.1");
    gst_rtsp_server_set_service(server, argv[2]);
    GstRTSPMediaFactory *factory = gst_rtsp_media_factory_new();
    gchar *launch = g_strdup_printf("( filesrc location=\"%s\" ! matroskademux ! h264parse ! rtph264pay name=pay0 "
                                    "pt=96 config-interval=1 )",
                                    argv[1]);
    gst_rtsp_media_factory_set_launch(factory, launch);
    g_free(launch);
    /* a pipeline per client: with one shared by the clients, gst-rtsp-server 1.22 aborted once under
     * load as clients came and went (a probe opens and closes a stream while others play it) */
    gst_rtsp_media_factory_set_shared(factory, FALSE);
    GstRTSPMountPoints *mounts = gst_rtsp_server_get_mount_points(server);
    gst_rtsp_mount_points_add_factory(mounts, "/cam", factory);
    g_object_unref(mounts);
    if (gst_rtsp_server_attach(server, NULL) == 0) {
        fprintf(stderr, "rtsp_server: cannot listen on 127.0.0.1:%s\n", argv[2]);
        return 1;
    }
    printf("ready\n");
    fflush(stdout);
    g_main_loop_run(loop);
    return 0;
}
