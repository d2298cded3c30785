/* 'glcv stream': the options of its two sides as cmd_stream.c parses them, and the functions that
 * run them (stream_serve.c, stream_view.c). */
#ifndef GLCV_TOOLS_STREAM_H
#define GLCV_TOOLS_STREAM_H

#include "cli.h"
#include "segmenter.h"
#include "source.h"

#include <stddef.h>
#include <stdint.h>

typedef struct stream_serve_options {
    cli_source src;             /* the source options (--max-frames among them) */
    int source_kind;            /* CLI_SOURCE_*, resolved from the options or the positional SOURCE */
    const char *location;       /* the positional SOURCE's file or folder, or NULL */
    const char *bind;           /* --bind [127.0.0.1] */
    int port;                   /* --port, 0: any free port */
    int threshold;              /* the library's: GLCV_DELTA_LOSSLESS or 1..255 */
    int keyframe_interval;      /* the library's: -1 or >= 1 */
    int filter;                 /* STREAM_FILTER_* */
    int learn;                  /* --learn: frames the segmenter learns from */
    int compress;               /* Zstandard level, 0: off */
    uint8_t *token;             /* --token: the secret, or NULL */
    size_t token_bytes;
    int wait;                   /* --wait N: viewers to wait for before reading the source */
    size_t queue_bytes;         /* --queue-bytes, 0: the default */
    int max_viewers;
    double handshake_s;
    int fast;                   /* --fast: files, folders and the synthetic scene unpaced */
    const char *trace;          /* --trace FILE */
    cli_segmenter seg;          /* the segmenter's options and --engine */
    const cli_args *args;
    int quiet, verbose;
} stream_serve_options;

typedef struct stream_view_options {
    char host[256];
    int port;
    int window;
    const char *screenshot;     /* --screenshot FILE: the window's last picture, at exit */
    const char *record;         /* --record DIR */
    int max_frames;             /* 0: until the stream ends */
    uint8_t *token;
    size_t token_bytes;
    size_t max_bytes;           /* the largest picture accepted */
    double timeout_s;           /* connecting and the handshake */
    double read_timeout_s;      /* --read-timeout: the most seconds without a byte after the handshake; 0: none */
    const char *trace;          /* --trace FILE */
    int quiet, verbose;
} stream_view_options;

/* Serves until the source ends, --max-frames, an error or Ctrl-C. Returns an exit status. */
int stream_serve(const stream_serve_options *o);

/* Views until the stream ends, --max-frames, an error or Ctrl-C. Returns an exit status. */
int stream_view(const stream_view_options *o);

/* The picture the viewer shows in its window: the network thread writes it, the window reads it. */
typedef struct stream_display stream_display;

/* Runs `body(user)` (the viewer's loop) on a thread of its own while this thread shows the
 * pictures published with stream_display_publish in a GLFW window, until `body` returns or the
 * window is closed (stream_display_closed turns true); with `screenshot` (may be NULL), writes
 * what the window shows last as that PNG file (not when `body` failed before any picture: a viewer
 * that was refused leaves no output). Returns body's status, or CLI_FAIL after printing
 * why no window could be opened (also when glcv was built without GLFW). */
int stream_display_run(const char *title, const char *screenshot, int (*body)(void *user, stream_display *display),
                       void *user);

/* Hands a picture (GRAY8 or RGB8, tightly packed) to the window; copies it. */
void stream_display_publish(stream_display *display, const glcv_image *picture);

/* Whether the window was closed (the viewer then stops). NULL: no window, 0. */
int stream_display_closed(stream_display *display);

#endif
