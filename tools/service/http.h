/* The HTTP endpoint of 'glcv serve' (libwebsockets), on one listener with its own thread:
 *   GET /metrics      Prometheus' text exposition format, version 0.0.4
 *   GET /healthz      "ok", or 503 with the reason
 *   GET /cameras      the cameras as JSON, for the live view's page
 *   GET /, /live.js   the live view's page (tools/service/live.html, live.js; embedded)
 *   /live/CAMERA      a WebSocket (subprotocol "glcv-stream-1") that carries the stream protocol of
 *                     docs/STREAM.md, byte for byte, in binary messages both ways: the viewer's
 *                     side of a camera's live stream (live.h), whose hub runs the handshake and
 *                     checks the token; text messages from the server say which camera frame each
 *                     packet is (svc_live_info)
 * Anything else is 404; a method other than GET (or HEAD) 405. When a token is given, /metrics and
 * /cameras need "Authorization: Bearer TOKEN" (401 otherwise, compared in constant time); /healthz
 * and the page are open, and the WebSocket proves the token with the stream protocol's MACs. The
 * listener binds to the address given: 127.0.0.1 unless configured otherwise. */
#ifndef GLCV_SERVICE_HTTP_H
#define GLCV_SERVICE_HTTP_H

#include <glcv/core.h>

#include <stddef.h>

/* A growing text buffer. */
typedef struct svc_text {
    char *data; /* NUL-terminated */
    size_t length, capacity;
    int failed; /* an allocation failed: the text is incomplete */
} svc_text;

void svc_text_printf(svc_text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void svc_text_free(svc_text *t);

typedef struct svc_http svc_http;
typedef struct svc_live_stream svc_live_stream;

typedef struct svc_http_params {
    const char *listen; /* "HOST:PORT"; NULL: "127.0.0.1:8080"; port 0: a free port (svc_http_port) */
    const char *token;  /* NULL or "": /metrics is open */
    void *user;
    /* Appends the metrics; called on the endpoint's thread, once per request. */
    void (*metrics)(void *user, svc_text *out);
    /* Returns nonzero when healthy; writes a one-line reason. 200 "ok ..." or 503 with the reason. */
    int (*health)(void *user, char *reason, size_t size);
    glcv_logger logger;
    /* Appends the cameras as a JSON array (GET /cameras). NULL: 404. */
    void (*cameras)(void *user, svc_text *out);
    /* The live stream of camera `id` with a reference of the caller's, or NULL when there is no
     * such camera (the WebSocket is refused). NULL: no live view. */
    svc_live_stream *(*live)(void *user, const char *id);
} svc_http_params;

/* Binds and starts the thread. Returns 0, or -1 with a one-line reason (the address cannot be
 * bound, a malformed HOST:PORT). */
int svc_http_start(const svc_http_params *params, svc_http **out, char *error, size_t size);

/* The port bound. */
int svc_http_port(const svc_http *h);

/* Stops the thread and closes the listener; *h = NULL. Accepts &NULL. */
void svc_http_stop(svc_http **h);

#endif
