/* The HTTP endpoint of 'glcv serve'; see http.h.
 *
 * One libwebsockets context per endpoint, with one vhost that listens on the configured address,
 * served by the endpoint's own thread. The vhost has no mounts, so lws hands every HTTP request to
 * protocols[0] ("http"), which routes it. A reply is built whole (status, headers, body in an
 * svc_text) when the request arrives and its body goes out in chunks of BODY_CHUNK on WRITEABLE
 * callbacks, so a large body never makes lws buffer it all.
 *
 * The live view: a WebSocket of protocol "glcv-stream-1" on /live/CAMERA gets a socket pair; one
 * end goes to the camera's stream hub (svc_live_attach) as if a viewer had connected over TCP, the
 * other is adopted by lws as a raw socket ("glcv-live-bridge", a child of the WebSocket), so that
 * one loop carries bytes both ways: what the hub writes becomes binary messages (LIVE_CHUNK at most
 * each; the bridge stops reading while LIVE_HIGH bytes wait, and the hub's own byte budget then
 * decides what a slow browser misses), and the browser's binary messages are written to the hub.
 * When either side closes, the other follows. The text messages (which camera frame each packet is,
 * the objects' boxes) go out only once the hub's WELCOME has said the viewer was accepted.
 *
 * lws's behaviour that this relies on (4.1; tests/test_serve_http.c checks it):
 * - the path it passes is the decoded path without the query string;
 * - HTTP/1.1 keep-alive: lws_http_transaction_completed() readies the connection for the next
 *   request, or says to close it (HTTP/1.0, "Connection: close");
 * - it parses GET, HEAD, POST, PUT, PATCH, DELETE and OPTIONS; any of these but GET and HEAD gets
 *   405 and the connection is closed after the reply, since lws would wait for a body (100 MB of
 *   it for a POST without Content-Length) before the next request;
 * - a method it does not know or bytes that are not HTTP get its own 403, a path that is not
 *   absolute ("OPTIONS *") too; a header past its header buffer (4 KB) closes the connection
 *   without a reply (and lws logs an error); none of these reach us;
 * - a connection that sends nothing holds a header slot until lws's 5 s timeout; the pool has a
 *   slot per possible file descriptor, so it does not block others.
 *
 * lws's log is one per process (lws_set_log_level): every endpoint installs the same emit function
 * (never lws's stderr one, so nothing is printed), which passes errors and warnings to the logger
 * of the most recently started endpoint still running, under a mutex. With several endpoints, one
 * endpoint's lws messages may so reach another's logger. lws 4.1 built with LWS_MAX_SMP 1 (Debian's)
 * formats every message in one static buffer: two endpoints logging at the same instant may garble
 * a line; only errors and warnings are formatted at all. */
#define _GNU_SOURCE /* getaddrinfo, SOCK_CLOEXEC */

#include "http.h"
#include "live.h"
#include "service.h"
#include "stream_proto.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libwebsockets.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

enum {
    BODY_CHUNK = 16 * 1024,   /* bytes of body per WRITEABLE callback */
    LIVE_CHUNK = 64 * 1024,   /* bytes of a live stream per binary message */
    LIVE_HIGH = 1024 * 1024,  /* a live stream's bytes waiting for its WebSocket: the bridge pauses */
    URI_BYTES = 512,
    HEADER_BYTES = 1024,      /* our response headers */
    AUTH_BYTES = 4096,        /* the Authorization header: lws's whole header buffer */
    REASON_BYTES = 256,       /* health()'s reason */
    TEXT_MIN_CAPACITY = 256,
    ERROR_LINE_BYTES = 256
};

static const char DEFAULT_LISTEN[] = "127.0.0.1:8080";
static const char METRICS_TYPE[] = "text/plain; version=0.0.4; charset=utf-8";
static const char TEXT_TYPE[] = "text/plain; charset=utf-8";
static const char JSON_TYPE[] = "application/json";
static const char LIVE_PROTOCOL[] = "glcv-stream-1";
static const char BRIDGE_PROTOCOL[] = "glcv-live-bridge";

/* The page's files (generated from tools/service/live.html and live.js by cmake/embed_files.cmake). */
typedef struct svc_page_file {
    const char *name, *text;
} svc_page_file;
extern const svc_page_file svc_page_files[];

struct svc_http {
    void *user;
    void (*metrics)(void *user, svc_text *out);
    int (*health)(void *user, char *reason, size_t size);
    void (*cameras)(void *user, svc_text *out);
    svc_live_stream *(*live)(void *user, const char *id);
    glcv_logger logger;
    char *token; /* NULL: /metrics is open */
    size_t token_length;
    char address[INET6_ADDRSTRLEN]; /* numeric; lws keeps pointing at it while the vhost lives */
    struct lws_context *context;
    pthread_t thread;
    atomic_int stopping;
    int port;
    svc_http *log_next; /* the running endpoints, most recent first (log_lock) */
    unsigned char chunk[LWS_PRE + LIVE_CHUNK]; /* service thread only */
};

/* A WebSocket of the live view (lws's per-session data). */
typedef struct live_session {
    svc_live_stream *stream;
    struct lws *ws, *bridge; /* bridge: NULL once closed */
    uint8_t *out;            /* bytes from the hub, not yet sent */
    size_t out_start, out_end, out_capacity;
    uint64_t cursor, boxes_cursor; /* svc_live_info */
    int paused;              /* the bridge does not read */
    int eof;                 /* the hub closed its side */
    uint8_t head[STREAM_HELLO_BYTES + STREAM_WELCOME_BYTES]; /* the hub's first bytes: HELLO, WELCOME */
    size_t head_len;
    int accepted;            /* WELCOME said accepted: the frames' information may go out */
} live_session;

/* One HTTP transaction (lws's per-session data: zeroed for each request). */
typedef struct request {
    svc_text body;
    size_t sent;
    int close; /* close the connection after the reply */
} request;

/* The reply to a request, less its body. */
typedef struct reply {
    unsigned status;
    const char *type;
    const char *header, *value; /* one extra header ("name:"), or NULL */
    int close;                  /* "Connection: close", and close after the body */
} reply;

/* ---- Text ------------------------------------------------------------------------------------------- */

static int text_reserve(svc_text *t, size_t more)
{
    if (more > SIZE_MAX - t->length - 1)
        return -1;
    size_t need = t->length + more + 1;
    if (need <= t->capacity)
        return 0;
    size_t capacity = t->capacity < TEXT_MIN_CAPACITY ? TEXT_MIN_CAPACITY : t->capacity;
    while (capacity < need)
        capacity = capacity > SIZE_MAX / 2 ? need : capacity * 2;
    char *data = realloc(t->data, capacity);
    if (!data)
        return -1;
    t->data = data;
    t->capacity = capacity;
    return 0;
}

void svc_text_printf(svc_text *t, const char *fmt, ...)
{
    /* After a failure the text stays a prefix of what was asked for, never one with holes. */
    if (t->failed)
        return;
    size_t room = t->capacity - t->length;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->data ? t->data + t->length : NULL, t->data ? room : 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        t->failed = 1;
        if (t->data)
            t->data[t->length] = '\0';
        return;
    }
    if (t->data && (size_t)n < room) {
        t->length += (size_t)n;
        return;
    }
    if (text_reserve(t, (size_t)n) != 0) {
        t->failed = 1;
        if (t->data)
            t->data[t->length] = '\0';
        return;
    }
    va_start(ap, fmt);
    vsnprintf(t->data + t->length, t->capacity - t->length, fmt, ap);
    va_end(ap);
    t->length += (size_t)n;
}

void svc_text_free(svc_text *t)
{
    free(t->data);
    memset(t, 0, sizeof *t);
}

/* ---- lws's log -------------------------------------------------------------------------------------- */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static svc_http *log_endpoints; /* running endpoints, most recently started first */
static int log_installed;
/* While svc_http_start runs lws on its thread: where lws's first error goes, for start's message. */
static _Thread_local char *start_error;

static void lws_emit(int lws_level, const char *line)
{
    glcv_log_level level = lws_level & LLL_ERR ? GLCV_LOG_ERROR : lws_level & LLL_WARN ? GLCV_LOG_WARN : 0;
    if (!level)
        return;
    char text[ERROR_LINE_BYTES];
    snprintf(text, sizeof text, "%s", line);
    size_t length = strlen(text);
    while (length > 0 && (text[length - 1] == '\n' || text[length - 1] == '\r'))
        text[--length] = '\0';
    if (start_error && level == GLCV_LOG_ERROR && !start_error[0])
        memcpy(start_error, text, length + 1);
    char message[ERROR_LINE_BYTES + 16];
    snprintf(message, sizeof message, "libwebsockets: %s", text);
    pthread_mutex_lock(&log_lock);
    const glcv_logger *logger = log_endpoints ? &log_endpoints->logger : NULL;
    glcv_log_level max = logger && logger->max_level ? logger->max_level : GLCV_LOG_INFO;
    if (logger && logger->fn && level <= max)
        logger->fn(logger->user, level, message);
    pthread_mutex_unlock(&log_lock);
}

static void log_attach(svc_http *h)
{
    pthread_mutex_lock(&log_lock);
    if (!log_installed) {
        /* Before the first lws call: lws's own emitter would print to stderr. */
        lws_set_log_level(LLL_ERR | LLL_WARN, lws_emit);
        log_installed = 1;
    }
    h->log_next = log_endpoints;
    log_endpoints = h;
    pthread_mutex_unlock(&log_lock);
}

static void log_detach(svc_http *h)
{
    pthread_mutex_lock(&log_lock);
    for (svc_http **p = &log_endpoints; *p; p = &(*p)->log_next)
        if (*p == h) {
            *p = h->log_next;
            break;
        }
    pthread_mutex_unlock(&log_lock);
}

/* ---- Requests --------------------------------------------------------------------------------------- */

/* Compares in a time that depends only on the expected token's length. */
static int same_token(const char *given, size_t given_length, const char *want, size_t want_length)
{
    volatile unsigned char diff = given_length != want_length;
    for (size_t i = 0; i < want_length; i++)
        diff |= (unsigned char)(want[i] ^ (i < given_length ? given[i] : 0));
    return diff == 0;
}

static int authorized(const svc_http *h, struct lws *wsi)
{
    if (!h->token)
        return 1;
    char value[AUTH_BYTES];
    int n = lws_hdr_copy(wsi, value, sizeof value, WSI_TOKEN_HTTP_AUTHORIZATION);
    if (n < 7 || strncasecmp(value, "Bearer ", 7) != 0)
        return 0;
    const char *given = value + 7;
    while (*given == ' ')
        given++;
    size_t length = strlen(given);
    while (length > 0 && given[length - 1] == ' ')
        length--;
    return same_token(given, length, h->token, h->token_length);
}

static reply text_reply(svc_text *body, unsigned status, const char *text)
{
    svc_text_printf(body, "%s", text);
    return (reply){status, TEXT_TYPE, NULL, NULL, 0};
}

static reply metrics_reply(const svc_http *h, svc_text *body)
{
    if (h->metrics)
        h->metrics(h->user, body);
    if (body->failed) {
        svc_text_free(body);
        return text_reply(body, 500, "metrics incomplete: out of memory\n");
    }
    return (reply){200, METRICS_TYPE, NULL, NULL, 0};
}

static reply health_reply(const svc_http *h, svc_text *body)
{
    char reason[REASON_BYTES] = "";
    int healthy = h->health ? h->health(h->user, reason, sizeof reason) : 1;
    if (healthy)
        return text_reply(body, 200, "ok\n");
    reason[sizeof reason - 1] = '\0';
    reason[strcspn(reason, "\r\n")] = '\0'; /* one line */
    svc_text_printf(body, "%s\n", reason[0] ? reason : "unhealthy");
    return (reply){503, TEXT_TYPE, NULL, NULL, 0};
}

static reply page_reply(svc_text *body, const char *name)
{
    for (const svc_page_file *f = svc_page_files; f->name; f++)
        if (!strcmp(f->name, name)) {
            svc_text_printf(body, "%s", f->text);
            return (reply){200, strstr(name, ".js") ? "text/javascript; charset=utf-8" : "text/html; charset=utf-8",
                           "cache-control:", "no-store", 0};
        }
    return text_reply(body, 404, "not found\n");
}

static reply route(const svc_http *h, struct lws *wsi, const char *path, svc_text *body)
{
    int metrics = strcmp(path, "/metrics") == 0, health = strcmp(path, "/healthz") == 0;
    int cameras = h->cameras && strcmp(path, "/cameras") == 0;
    int page = h->live && (strcmp(path, "/") == 0 || strcmp(path, "/live.js") == 0);
    if (!metrics && !health && !cameras && !page)
        return text_reply(body, 404, "not found\n");
    if (lws_hdr_total_length(wsi, WSI_TOKEN_GET_URI) <= 0 && lws_hdr_total_length(wsi, WSI_TOKEN_HEAD_URI) <= 0) {
        reply r = text_reply(body, 405, "method not allowed\n");
        r.header = "allow:";
        r.value = "GET, HEAD";
        /* The body that may follow is not ours to frame: lws takes a POST without Content-Length
         * as 100 MB to come and would hold the connection until its timeout. */
        r.close = 1;
        return r;
    }
    if (health)
        return health_reply(h, body);
    if (page)
        return page_reply(body, strcmp(path, "/") == 0 ? "live.html" : "live.js");
    if (!authorized(h, wsi)) {
        reply r = text_reply(body, 401, "unauthorized\n");
        r.header = "www-authenticate:";
        r.value = "Bearer";
        return r;
    }
    if (cameras) {
        h->cameras(h->user, body);
        if (body->failed) {
            svc_text_free(body);
            return text_reply(body, 500, "out of memory\n");
        }
        return (reply){200, JSON_TYPE, "cache-control:", "no-store", 0};
    }
    return metrics_reply(h, body);
}

static int send_headers(struct lws *wsi, const reply *r, size_t length)
{
    unsigned char buffer[LWS_PRE + HEADER_BYTES];
    unsigned char *start = buffer + LWS_PRE, *p = start, *end = buffer + sizeof buffer - 1;
    /* Without a length lws announces "connection: close"; the length follows by itself. */
    if (lws_add_http_common_headers(wsi, r->status, r->type, r->close ? LWS_ILLEGAL_HTTP_CONTENT_LEN : length, &p,
                                    end))
        return -1;
    if (r->close && lws_add_http_header_content_length(wsi, length, &p, end))
        return -1;
    if (r->header && lws_add_http_header_by_name(wsi, (const unsigned char *)r->header,
                                                 (const unsigned char *)r->value, (int)strlen(r->value), &p, end))
        return -1;
    return lws_finalize_write_http_header(wsi, start, &p, end) ? -1 : 0;
}

/* Ends the transaction: 0 to keep the connection for the next request, -1 to close it (lws
 * sends what it still holds, then shuts the connection down). */
static int finish(struct lws *wsi, request *rq)
{
    svc_text_free(&rq->body);
    if (rq->close)
        return -1;
    return lws_http_transaction_completed(wsi) ? -1 : 0;
}

static int on_request(struct lws *wsi, request *rq, const char *path)
{
    const svc_http *h = lws_context_user(lws_get_context(wsi));
    svc_text_free(&rq->body);
    rq->sent = 0;
    reply r = route(h, wsi, path, &rq->body);
    rq->close = r.close;
    if (send_headers(wsi, &r, rq->body.length) != 0)
        return -1;
    if (lws_hdr_total_length(wsi, WSI_TOKEN_HEAD_URI) > 0 || rq->body.length == 0)
        return finish(wsi, rq);
    lws_callback_on_writable(wsi);
    return 0;
}

static int on_writeable(struct lws *wsi, request *rq)
{
    if (!rq->body.data || rq->sent >= rq->body.length)
        return 0;
    svc_http *h = lws_context_user(lws_get_context(wsi));
    size_t n = rq->body.length - rq->sent < BODY_CHUNK ? rq->body.length - rq->sent : BODY_CHUNK;
    int last = rq->sent + n == rq->body.length;
    memcpy(h->chunk + LWS_PRE, rq->body.data + rq->sent, n);
    if (lws_write(wsi, h->chunk + LWS_PRE, n, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP) != (int)n)
        return -1;
    rq->sent += n;
    if (last)
        return finish(wsi, rq);
    lws_callback_on_writable(wsi);
    return 0;
}

static int http_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    request *rq = user;
    switch (reason) {
    case LWS_CALLBACK_HTTP:
        return rq && in ? on_request(wsi, rq, in) : -1;
    case LWS_CALLBACK_HTTP_WRITEABLE:
        return rq ? on_writeable(wsi, rq) : 0;
    case LWS_CALLBACK_HTTP_BODY:
    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        /* A body nobody asked for: the reply (405) ends the transaction, not its end. */
        return 0;
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        return -1; /* a WebSocket without the live view's protocol */
    case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
    case LWS_CALLBACK_CLOSED_HTTP:
    case LWS_CALLBACK_WSI_DESTROY:
        if (rq)
            svc_text_free(&rq->body);
        return 0;
    default:
        return lws_callback_http_dummy(wsi, reason, user, in, len);
    }
}

/* ---- The live view's WebSockets ------------------------------------------------------------------- */

/* The camera of a WebSocket's path "/live/CAMERA" (a camera id: no '/', '%', '?'), or NULL. */
static const char *live_camera(struct lws *wsi, char *uri, size_t size)
{
    if (lws_hdr_copy(wsi, uri, (int)size, WSI_TOKEN_GET_URI) <= 0 || strncmp(uri, "/live/", 6) != 0)
        return NULL;
    const char *id = uri + 6;
    return id[0] && !strpbrk(id, "/%?#") ? id : NULL;
}

static void live_close_bridge(live_session *s)
{
    if (!s->bridge)
        return;
    lws_set_opaque_user_data(s->bridge, NULL);
    lws_set_timeout(s->bridge, PENDING_TIMEOUT_KILLED_BY_PARENT, LWS_TO_KILL_ASYNC);
    s->bridge = NULL;
}

/* The WebSocket is up: a socket pair, one end to the camera's hub, the other adopted as the bridge. */
static int live_established(svc_http *h, struct lws *wsi, live_session *s)
{
    s->ws = wsi;
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
        svc_log(&h->logger, GLCV_LOG_WARN, "live view: socketpair: %s", strerror(errno));
        return -1;
    }
    char peer[INET6_ADDRSTRLEN + 8] = "browser";
    lws_get_peer_simple(wsi, peer, sizeof peer);
    char error[256];
    if (svc_live_attach(s->stream, pair[0], peer, error, sizeof error) != 0) {
        svc_log(&h->logger, GLCV_LOG_WARN, "live view: %s", error);
        close(pair[1]);
        return -1;
    }
    lws_adopt_desc_t desc;
    memset(&desc, 0, sizeof desc);
    desc.vh = lws_get_vhost(wsi);
    desc.type = LWS_ADOPT_SOCKET;
    desc.fd.sockfd = pair[1];
    desc.vh_prot_name = BRIDGE_PROTOCOL;
    desc.parent = wsi;
    desc.opaque = s;
    s->bridge = lws_adopt_descriptor_vhost_via_info(&desc); /* closes pair[1] when it fails */
    return s->bridge ? 0 : -1;
}

/* Sends the frames' information, then a chunk of the hub's bytes; closes once the hub has closed
 * and everything is out. */
static int live_writeable(svc_http *h, struct lws *wsi, live_session *s)
{
    svc_text info = {0};
    if (s->accepted && svc_live_info(s->stream, &s->cursor, &s->boxes_cursor, &info) && !info.failed) {
        size_t n = info.length < LIVE_CHUNK ? info.length : 0; /* the ring keeps it far below */
        memcpy(h->chunk + LWS_PRE, info.data, n);
        svc_text_free(&info);
        if (n && lws_write(wsi, h->chunk + LWS_PRE, n, LWS_WRITE_TEXT) != (int)n)
            return -1;
        lws_callback_on_writable(wsi);
        return 0;
    }
    svc_text_free(&info);
    size_t n = s->out_end - s->out_start;
    if (n == 0)
        return s->eof ? -1 : 0;
    if (n > LIVE_CHUNK)
        n = LIVE_CHUNK;
    memcpy(h->chunk + LWS_PRE, s->out + s->out_start, n);
    if (lws_write(wsi, h->chunk + LWS_PRE, n, LWS_WRITE_BINARY) != (int)n)
        return -1;
    s->out_start += n;
    if (s->out_start == s->out_end)
        s->out_start = s->out_end = 0;
    if (s->paused && s->bridge && s->out_end - s->out_start < LIVE_HIGH / 2) {
        s->paused = 0;
        lws_rx_flow_control(s->bridge, 1);
    }
    if (s->out_end > s->out_start || s->eof)
        lws_callback_on_writable(wsi);
    return 0;
}

static int live_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    svc_http *h = lws_context_user(lws_get_context(wsi));
    live_session *s = user;
    switch (reason) {
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
        char uri[URI_BYTES];
        const char *id = live_camera(wsi, uri, sizeof uri);
        s->stream = id && h->live ? h->live(h->user, id) : NULL;
        return s->stream ? 0 : -1;
    }
    case LWS_CALLBACK_ESTABLISHED:
        return live_established(h, wsi, s);
    case LWS_CALLBACK_RECEIVE:
        /* the viewer's JOIN and requests, to the hub; a viewer that sends faster than a socket
         * pair takes them breaks the protocol anyway */
        if (!lws_frame_is_binary(wsi) || !s->bridge)
            return -1;
        return send(lws_get_socket_fd(s->bridge), in, len, MSG_DONTWAIT | MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
    case LWS_CALLBACK_SERVER_WRITEABLE:
        return live_writeable(h, wsi, s);
    case LWS_CALLBACK_CLOSED:
    case LWS_CALLBACK_WSI_DESTROY:
        if (s) {
            live_close_bridge(s);
            free(s->out);
            s->out = NULL;
            s->out_start = s->out_end = s->out_capacity = 0;
            svc_live_stream_unref(&s->stream);
        }
        return 0;
    default:
        return 0;
    }
}

static int bridge_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    (void)user;
    live_session *s = lws_get_opaque_user_data(wsi);
    switch (reason) {
    case LWS_CALLBACK_RAW_RX: {
        if (!s)
            return -1;
        if (s->out_end + len > s->out_capacity) {
            if (s->out_start > 0) { /* room at the front first */
                memmove(s->out, s->out + s->out_start, s->out_end - s->out_start);
                s->out_end -= s->out_start;
                s->out_start = 0;
            }
            if (s->out_end + len > s->out_capacity) {
                size_t capacity = 2 * (s->out_end + len);
                uint8_t *grown = realloc(s->out, capacity);
                if (!grown)
                    return -1;
                s->out = grown;
                s->out_capacity = capacity;
            }
        }
        memcpy(s->out + s->out_end, in, len);
        s->out_end += len;
        if (s->head_len < sizeof s->head) { /* the viewer's handshake, as the hub answers it */
            size_t n = sizeof s->head - s->head_len < len ? sizeof s->head - s->head_len : len;
            memcpy(s->head + s->head_len, in, n);
            s->head_len += n;
            const uint8_t *w = s->head + STREAM_HELLO_BYTES;
            s->accepted = s->head_len == sizeof s->head && !memcmp(w, STREAM_WELCOME_MAGIC, STREAM_MAGIC_BYTES) &&
                          w[10] == STREAM_ACCEPTED && w[11] == 0;
        }
        if (s->out_end - s->out_start >= LIVE_HIGH && !s->paused) {
            s->paused = 1;
            lws_rx_flow_control(wsi, 0);
        }
        lws_callback_on_writable(s->ws);
        return 0;
    }
    case LWS_CALLBACK_RAW_CLOSE:
        if (s) { /* the hub closed the viewer: what it sent goes out, then the WebSocket closes */
            s->bridge = NULL;
            s->eof = 1;
            lws_callback_on_writable(s->ws);
        }
        return 0;
    default:
        return 0;
    }
}

/* protocols[0] receives every HTTP request. */
static const struct lws_protocols protocols[] = {
    {"http", http_callback, sizeof(request), 0, 0, NULL, 0},
    {LIVE_PROTOCOL, live_callback, sizeof(live_session), 4096, 0, NULL, 0},
    {BRIDGE_PROTOCOL, bridge_callback, 0, LIVE_CHUNK, 0, NULL, 0},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

/* ---- Endpoint --------------------------------------------------------------------------------------- */


/* Splits "HOST:PORT" or "[IPV6]:PORT" with PORT 0..65535. */
static int split_listen(const char *text, char *host, size_t host_size, int *port)
{
    const char *start = text, *end = NULL, *colon = NULL;
    if (text[0] == '[') {
        start = text + 1;
        end = strchr(start, ']');
        if (!end || end[1] != ':')
            return -1;
        colon = end + 1;
    } else {
        colon = strrchr(text, ':');
        if (!colon || memchr(text, ':', (size_t)(colon - text)))
            return -1;
        end = colon;
    }
    size_t n = (size_t)(end - start);
    if (n == 0 || n >= host_size)
        return -1;
    memcpy(host, start, n);
    host[n] = '\0';
    const char *digits = colon + 1;
    size_t count = strspn(digits, "0123456789");
    if (count == 0 || count > 5 || digits[count] != '\0')
        return -1;
    *port = atoi(digits);
    return *port <= 65535 ? 0 : -1;
}

/* Binds a socket of our own to the address first, only to say why lws could not: lws logs a
 * number where we want a sentence. The socket is closed before lws binds. */
static int probe_bind(const struct addrinfo *a, int *err)
{
    int s = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0) {
        *err = errno;
        return -1;
    }
    int one = 1; /* as lws does: a port in TIME_WAIT is free */
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int rc = bind(s, a->ai_addr, a->ai_addrlen);
    *err = errno;
    close(s);
    return rc;
}

/* Resolves the host to one numeric address (lws binds only to numeric addresses or interface
 * names) and checks that it can be bound. */
static int resolve_listen(svc_http *h, const char *listen, int *family, int *port, char *error, size_t size)
{
    char host[256];
    if (split_listen(listen, host, sizeof host, port) != 0)
        return svc_fail(error, size, "http listen '%s': expected HOST:PORT or [IPV6]:PORT with PORT 0 to 65535",
                    listen);
    struct addrinfo hints, *list = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    char service[16];
    snprintf(service, sizeof service, "%d", *port);
    hints.ai_flags = AI_NUMERICSERV;
    int rc = getaddrinfo(host, service, &hints, &list);
    if (rc != 0)
        return svc_fail(error, size, "http listen '%s': %s", listen, gai_strerror(rc));
    const struct addrinfo *a = list;
    while (a && a->ai_family != AF_INET && a->ai_family != AF_INET6)
        a = a->ai_next;
    if (!a) {
        freeaddrinfo(list);
        return svc_fail(error, size, "http listen '%s': no IPv4 or IPv6 address", listen);
    }
    *family = a->ai_family;
    const void *in = a->ai_family == AF_INET ? (const void *)&((const struct sockaddr_in *)a->ai_addr)->sin_addr
                                             : (const void *)&((const struct sockaddr_in6 *)a->ai_addr)->sin6_addr;
    inet_ntop(a->ai_family, in, h->address, sizeof h->address);
    int err = 0;
    rc = probe_bind(a, &err);
    freeaddrinfo(list);
    if (rc != 0)
        return svc_fail(error, size, "cannot listen on %s: %s", listen, strerror(err));
    return 0;
}

static void *serve(void *arg)
{
    svc_http *h = arg;
    while (!atomic_load(&h->stopping))
        if (lws_service(h->context, 0) < 0) {
            if (h->logger.fn)
                h->logger.fn(h->logger.user, GLCV_LOG_ERROR, "http: the libwebsockets service loop failed: "
                                                             "the endpoint no longer answers");
            break;
        }
    return NULL;
}

/* Creates the context and its listening vhost; the caller holds h in the log list. */
static int create_context(svc_http *h, const char *listen, int family, int port, char *error, size_t size)
{
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    /* An IPv4 address on lws's IPv6 socket would be read as "::" (any address): IPv4 stays IPv4.
     * Without FAIL_UPON_UNABLE_TO_BIND lws would keep the vhost and retry the bind later. */
    info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS | LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND |
                   (family == AF_INET ? LWS_SERVER_OPTION_DISABLE_IPV6 : 0);
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.user = h;
    info.pt_serv_buf_size = LIVE_CHUNK; /* what a raw socket's read takes at once */
    char lws_error[ERROR_LINE_BYTES] = "";
    start_error = lws_error;
    h->context = lws_create_context(&info);
    struct lws_vhost *vhost = NULL;
    if (h->context) {
        info.port = port;
        info.iface = h->address;
        info.protocols = protocols;
        info.vhost_name = "glcv";
        vhost = lws_create_vhost(h->context, &info);
    }
    start_error = NULL;
    if (!h->context)
        return svc_fail(error, size, "http: cannot create the libwebsockets context%s%s", lws_error[0] ? ": " : "",
                    lws_error);
    h->port = vhost ? lws_get_vhost_listen_port(vhost) : 0;
    if (!vhost || h->port <= 0)
        return svc_fail(error, size, "cannot listen on %s: %s", listen,
                    lws_error[0] ? lws_error : "libwebsockets could not bind");
    return 0;
}

static void destroy(svc_http *h)
{
    if (h->context)
        lws_context_destroy(h->context);
    log_detach(h);
    free(h->token);
    free(h);
}

int svc_http_start(const svc_http_params *params, svc_http **out, char *error, size_t size)
{
    *out = NULL;
    if (error && size)
        error[0] = '\0';
    svc_http *h = calloc(1, sizeof *h);
    if (!h)
        return svc_fail(error, size, "http: out of memory");
    h->user = params->user;
    h->metrics = params->metrics;
    h->health = params->health;
    h->cameras = params->cameras;
    h->live = params->live;
    h->logger = params->logger;
    if (params->token && params->token[0]) {
        h->token = strdup(params->token);
        if (!h->token) {
            free(h);
            return svc_fail(error, size, "http: out of memory");
        }
        h->token_length = strlen(h->token);
    }
    const char *listen = params->listen ? params->listen : DEFAULT_LISTEN;
    int family = 0, port = 0;
    if (resolve_listen(h, listen, &family, &port, error, size) != 0) {
        free(h->token);
        free(h);
        return -1;
    }
    log_attach(h);
    if (create_context(h, listen, family, port, error, size) != 0) {
        destroy(h);
        return -1;
    }
    int rc = pthread_create(&h->thread, NULL, serve, h);
    if (rc != 0) {
        destroy(h);
        return svc_fail(error, size, "http: cannot start a thread: %s", strerror(rc));
    }
    *out = h;
    return 0;
}

int svc_http_port(const svc_http *h)
{
    return h ? h->port : 0;
}

void svc_http_stop(svc_http **hp)
{
    svc_http *h = hp ? *hp : NULL;
    if (!h)
        return;
    atomic_store(&h->stopping, 1);
    lws_cancel_service(h->context); /* wakes lws_service, which then sees `stopping` */
    pthread_join(h->thread, NULL);
    destroy(h);
    *hp = NULL;
}
