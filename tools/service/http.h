/* The HTTP endpoint of 'glcv serve' (libwebsockets): GET /metrics (Prometheus' text exposition
 * format, version 0.0.4) and GET /healthz, on one listener with its own thread. Anything else is
 * 404; a method other than GET (or HEAD) 405. When a token is given, /metrics needs
 * "Authorization: Bearer TOKEN" (401 otherwise, compared in constant time); /healthz is open.
 * The listener binds to the address given: 127.0.0.1 unless configured otherwise. */
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

typedef struct svc_http_params {
    const char *listen; /* "HOST:PORT"; NULL: "127.0.0.1:8080"; port 0: a free port (svc_http_port) */
    const char *token;  /* NULL or "": /metrics is open */
    void *user;
    /* Appends the metrics; called on the endpoint's thread, once per request. */
    void (*metrics)(void *user, svc_text *out);
    /* Returns nonzero when healthy; writes a one-line reason. 200 "ok ..." or 503 with the reason. */
    int (*health)(void *user, char *reason, size_t size);
    glcv_logger logger;
} svc_http_params;

/* Binds and starts the thread. Returns 0, or -1 with a one-line reason (the address cannot be
 * bound, a malformed HOST:PORT). */
int svc_http_start(const svc_http_params *params, svc_http **out, char *error, size_t size);

/* The port bound. */
int svc_http_port(const svc_http *h);

/* Stops the thread and closes the listener; *h = NULL. Accepts &NULL. */
void svc_http_stop(svc_http **h);

#endif
