/* Tests the HTTP endpoint of 'glcv serve' (tools/service/http.c) over real sockets on the loopback
 * interface, with a tiny client of its own: routes, the token, health, hostile clients, sequential
 * and concurrent clients, bind errors, two endpoints, a quick stop. Exit 0 pass, 1 fail, 77 when
 * this machine cannot open a loopback socket. */
#define _GNU_SOURCE /* getaddrinfo, clock_gettime */

#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum {
    REPLY_TIMEOUT_MS = 5000,
    SEQUENTIAL = 20,
    CONCURRENT = 8,
    BIG_BODY = 300 * 1024,
    LONG_HEADER = 64 * 1024
};

static atomic_int failures;

#define CHECK(cond, ...)                                                                                   \
    do {                                                                                                   \
        if (!(cond)) {                                                                                     \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                                \
            fprintf(stderr, __VA_ARGS__);                                                                  \
            fputc('\n', stderr);                                                                           \
            failures++;                                                                                    \
        }                                                                                                  \
    } while (0)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- What the endpoint's callbacks return ------------------------------------------------------------ */

typedef struct fake {
    pthread_mutex_t lock;
    char *metrics; /* the body /metrics must return */
    int healthy;
    char reason[64];
    atomic_int metrics_calls;
} fake;

static void fake_metrics(void *user, svc_text *out)
{
    fake *f = user;
    atomic_fetch_add(&f->metrics_calls, 1);
    pthread_mutex_lock(&f->lock);
    svc_text_printf(out, "%s", f->metrics);
    pthread_mutex_unlock(&f->lock);
}

static int fake_health(void *user, char *reason, size_t size)
{
    fake *f = user;
    pthread_mutex_lock(&f->lock);
    int healthy = f->healthy;
    snprintf(reason, size, "%s", f->reason);
    pthread_mutex_unlock(&f->lock);
    return healthy;
}

static void fake_set_metrics(fake *f, const char *text)
{
    pthread_mutex_lock(&f->lock);
    free(f->metrics);
    f->metrics = strdup(text);
    pthread_mutex_unlock(&f->lock);
}

static atomic_int log_messages;

static void count_log(void *user, glcv_log_level level, const char *message)
{
    (void)user;
    size_t n = strlen(message);
    CHECK((level == GLCV_LOG_ERROR || level == GLCV_LOG_WARN) && strncmp(message, "libwebsockets: ", 15) == 0 &&
              n > 15 && message[n - 1] != '\n',
          "log message at level %d: '%s'", (int)level, message);
    atomic_fetch_add(&log_messages, 1);
    if (getenv("TEST_VERBOSE"))
        printf("log: %s\n", message);
}

static svc_http *start(fake *f, const char *listen, const char *token)
{
    svc_http_params p = {listen, token, f, fake_metrics, fake_health, {count_log, NULL, GLCV_LOG_WARN}, NULL, NULL};
    svc_http *h = NULL;
    char error[256];
    int rc = svc_http_start(&p, &h, error, sizeof error);
    CHECK(rc == 0 && h, "svc_http_start('%s'): %s", listen, error);
    return rc == 0 ? h : NULL;
}

/* ---- A tiny HTTP client ----------------------------------------------------------------------------- */

typedef struct response {
    int status; /* -1: no parsable reply */
    char *raw;  /* the whole reply, NUL-terminated */
    size_t raw_length;
    const char *body;
    size_t body_length;
    double seconds;
} response;

static void response_free(response *r)
{
    free(r->raw);
    memset(r, 0, sizeof *r);
}

static int connect_to(int family, int port)
{
    int s = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len;
    if (family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        a->sin6_addr = in6addr_loopback;
        len = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)port);
        a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof *a;
    }
    if (connect(s, (struct sockaddr *)&ss, len) != 0) {
        close(s);
        return -1;
    }
    return s;
}

static int send_all(int s, const char *data, size_t n)
{
    while (n > 0) {
        ssize_t k = send(s, data, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        data += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Reads until the server closes (or REPLY_TIMEOUT_MS). */
static void read_to_close(int s, response *r)
{
    size_t capacity = 4096;
    r->raw = malloc(capacity);
    r->raw_length = 0;
    double deadline = now() + REPLY_TIMEOUT_MS / 1000.0;
    for (;;) {
        int left = (int)((deadline - now()) * 1000);
        struct pollfd p = {s, POLLIN, 0};
        if (left <= 0 || poll(&p, 1, left) <= 0)
            break;
        if (r->raw_length + 4096 + 1 > capacity) {
            capacity *= 2;
            r->raw = realloc(r->raw, capacity);
        }
        ssize_t k = recv(s, r->raw + r->raw_length, capacity - r->raw_length - 1, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        r->raw_length += (size_t)k;
    }
    r->raw[r->raw_length] = '\0';
}

static void parse(response *r)
{
    r->status = -1;
    const char *end = strstr(r->raw, "\r\n\r\n");
    int status = 0;
    if (!end || sscanf(r->raw, "HTTP/1.%*d %d", &status) != 1)
        return;
    r->status = status;
    r->body = end + 4;
    r->body_length = r->raw_length - (size_t)(r->body - r->raw);
}

/* The value of a header (case-insensitive name) into out; 0 when present. */
static int header(const response *r, const char *name, char *out, size_t size)
{
    size_t n = strlen(name);
    const char *end = r->body ? r->body : r->raw + r->raw_length;
    for (const char *line = strstr(r->raw, "\r\n"); line && line < end; line = strstr(line + 2, "\r\n")) {
        const char *h = line + 2;
        if (strncasecmp(h, name, n) == 0 && h[n] == ':') {
            h += n + 1;
            while (*h == ' ')
                h++;
            size_t length = strcspn(h, "\r\n");
            snprintf(out, size, "%.*s", (int)length, h);
            return 0;
        }
    }
    out[0] = '\0';
    return -1;
}

static response request_on(int family, int port, const char *text, size_t length)
{
    response r;
    memset(&r, 0, sizeof r);
    r.status = -1;
    double t0 = now();
    int s = connect_to(family, port);
    if (s < 0)
        return r;
    if (send_all(s, text, length) == 0)
        read_to_close(s, &r);
    close(s);
    r.seconds = now() - t0;
    if (r.raw)
        parse(&r);
    return r;
}

/* METHOD PATH with "Connection: close" and an optional Authorization header. */
static response request(int port, const char *method, const char *path, const char *authorization)
{
    char text[1024];
    int n = snprintf(text, sizeof text, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%s%s%sConnection: close\r\n\r\n",
                     method, path, authorization ? "Authorization: " : "", authorization ? authorization : "",
                     authorization ? "\r\n" : "");
    return request_on(AF_INET, port, text, (size_t)n);
}

/* Checks a reply's status, body (NULL: any) and content type (NULL: any); returns 0 when it matches. */
static int expect(const char *what, const response *r, int status, const char *body, const char *type)
{
    int before = failures;
    CHECK(r->status == status, "%s: status %d, expected %d; reply: %.300s", what, r->status, status,
          r->raw ? r->raw : "(none)");
    if (r->status < 0)
        return -1;
    char value[256];
    if (body) {
        size_t n = strlen(body);
        CHECK(r->body_length == n && memcmp(r->body, body, n) == 0, "%s: body of %zu bytes, expected %zu: '%.80s'",
              what, r->body_length, n, r->body);
        if (r->body_length != n || memcmp(r->body, body, n) != 0)
            for (size_t i = 0; i < n && i < r->body_length; i++)
                if (r->body[i] != body[i]) {
                    fprintf(stderr, "  first difference at byte %zu\n", i);
                    break;
                }
    }
    if (type) {
        header(r, "Content-Type", value, sizeof value);
        CHECK(strcmp(value, type) == 0, "%s: content type '%s', expected '%s'", what, value, type);
    }
    /* A reply to HEAD announces the length of a body it does not send. */
    if (strncmp(what, "HEAD", 4) != 0 && header(r, "Content-Length", value, sizeof value) == 0)
        CHECK(strtoull(value, NULL, 10) == r->body_length, "%s: Content-Length %s, body %zu bytes", what, value,
              r->body_length);
    return failures == before ? 0 : -1;
}

static const char METRICS_TYPE[] = "text/plain; version=0.0.4; charset=utf-8";
static const char METRICS_BODY[] = "# TYPE glcv_frames_total counter\nglcv_frames_total{camera=\"a\"} 42\n";

/* ---- Cases ------------------------------------------------------------------------------------------ */

static void test_text(void)
{
    svc_text t = {0};
    svc_text_printf(&t, "%s", "");
    CHECK(t.data && t.length == 0 && t.data[0] == '\0', "an empty append leaves \"\"");
    for (int i = 0; i < 1000; i++)
        svc_text_printf(&t, "line %d\n", i);
    size_t expected = 0;
    for (int i = 0; i < 1000; i++)
        expected += (size_t)snprintf(NULL, 0, "line %d\n", i);
    CHECK(!t.failed && t.length == expected && strlen(t.data) == expected, "length %zu, expected %zu", t.length,
          expected);
    CHECK(strncmp(t.data + t.length - 9, "line 999\n", 9) == 0, "tail '%s'", t.data + t.length - 9);
    svc_text_free(&t);
    CHECK(!t.data && t.length == 0 && t.capacity == 0, "svc_text_free zeroes");
}

static void test_metrics_open(fake *f)
{
    svc_http *h = start(f, "127.0.0.1:0", NULL);
    if (!h)
        return;
    int port = svc_http_port(h);
    CHECK(port > 0, "port %d", port);
    int calls = atomic_load(&f->metrics_calls);
    response r = request(port, "GET", "/metrics", NULL);
    expect("GET /metrics", &r, 200, METRICS_BODY, METRICS_TYPE);
    CHECK(atomic_load(&f->metrics_calls) == calls + 1, "metrics called %d times for one request",
          atomic_load(&f->metrics_calls) - calls);
    response_free(&r);

    r = request(port, "GET", "/metrics?x=1", NULL);
    expect("GET /metrics?x=1", &r, 200, METRICS_BODY, METRICS_TYPE);
    response_free(&r);

    r = request(port, "HEAD", "/metrics", NULL);
    expect("HEAD /metrics", &r, 200, "", METRICS_TYPE);
    char value[64];
    header(&r, "Content-Length", value, sizeof value);
    CHECK(strtoul(value, NULL, 10) == strlen(METRICS_BODY), "HEAD Content-Length '%s'", value);
    response_free(&r);

    /* A body larger than any buffer on the way, with every byte position distinguishable. */
    char *big = malloc(BIG_BODY + 1);
    for (size_t i = 0; i < BIG_BODY; i++)
        big[i] = i % 64 == 63 ? '\n' : (char)('a' + (i * 7 + i / 64) % 26);
    big[BIG_BODY] = '\0';
    fake_set_metrics(f, big);
    r = request(port, "GET", "/metrics", NULL);
    expect("GET /metrics (300 KB)", &r, 200, big, METRICS_TYPE);
    response_free(&r);
    fake_set_metrics(f, "");
    r = request(port, "GET", "/metrics", NULL);
    expect("GET /metrics (empty)", &r, 200, "", METRICS_TYPE);
    response_free(&r);
    fake_set_metrics(f, METRICS_BODY);
    free(big);

    /* Keep-alive: two requests on one connection, the second closing it. */
    const char two[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
                       "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    r = request_on(AF_INET, port, two, sizeof two - 1);
    CHECK(r.raw && strstr(r.raw, METRICS_BODY) && strstr(r.raw, "\r\n\r\nok\n"),
          "keep-alive: two replies expected on one connection, got: %.400s", r.raw ? r.raw : "(none)");
    response_free(&r);
    svc_http_stop(&h);
    CHECK(h == NULL, "stop sets NULL");
}

static void test_token(fake *f)
{
    svc_http *h = start(f, "127.0.0.1:0", "s3cret-token");
    if (!h)
        return;
    int port = svc_http_port(h);
    char value[128];
    response r = request(port, "GET", "/metrics", NULL);
    expect("no token", &r, 401, NULL, NULL);
    header(&r, "WWW-Authenticate", value, sizeof value);
    CHECK(strcmp(value, "Bearer") == 0, "WWW-Authenticate '%s'", value);
    response_free(&r);
    const char *wrong[] = {"Bearer s3cret-tokeX", "Bearer s3cret-token2", "Bearer s3cret", "Bearer ",
                           "Basic s3cret-token", "s3cret-token"};
    for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
        r = request(port, "GET", "/metrics", wrong[i]);
        char what[64];
        const char *w = wrong[i]; /* gcc 12 at -O2 sees a NULL past the array otherwise */
        snprintf(what, sizeof what, "Authorization '%s'", w ? w : "");
        expect(what, &r, 401, NULL, NULL);
        response_free(&r);
    }
    r = request(port, "GET", "/metrics", "Bearer s3cret-token");
    expect("right token", &r, 200, METRICS_BODY, METRICS_TYPE);
    response_free(&r);
    r = request(port, "GET", "/healthz", NULL);
    expect("/healthz needs no token", &r, 200, "ok\n", NULL);
    response_free(&r);
    svc_http_stop(&h);
}

static void test_routes(fake *f)
{
    svc_http *h = start(f, "127.0.0.1:0", NULL);
    if (!h)
        return;
    int port = svc_http_port(h);
    response r = request(port, "GET", "/healthz", NULL);
    expect("healthy", &r, 200, "ok\n", "text/plain; charset=utf-8");
    response_free(&r);

    pthread_mutex_lock(&f->lock);
    f->healthy = 0;
    snprintf(f->reason, sizeof f->reason, "camera 2 stalled\nsecond line");
    pthread_mutex_unlock(&f->lock);
    r = request(port, "GET", "/healthz", NULL);
    expect("unhealthy", &r, 503, "camera 2 stalled\n", "text/plain; charset=utf-8");
    response_free(&r);
    pthread_mutex_lock(&f->lock);
    f->healthy = 1;
    f->reason[0] = '\0';
    pthread_mutex_unlock(&f->lock);

    r = request(port, "GET", "/nope", NULL);
    expect("GET /nope", &r, 404, "not found\n", NULL);
    response_free(&r);
    r = request(port, "GET", "/metrics/", NULL);
    expect("GET /metrics/", &r, 404, NULL, NULL);
    response_free(&r);

    char value[64];
    r = request(port, "POST", "/metrics", NULL);
    expect("POST /metrics", &r, 405, "method not allowed\n", NULL);
    header(&r, "Allow", value, sizeof value);
    CHECK(strcmp(value, "GET, HEAD") == 0, "Allow '%s'", value);
    header(&r, "Connection", value, sizeof value);
    CHECK(strcasecmp(value, "close") == 0, "405: Connection '%s'", value);
    response_free(&r);
    /* Without Content-Length a POST has no body (RFC 9112 6.3); the reply must not wait for one. */
    const char bare[] = "POST /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    r = request_on(AF_INET, port, bare, sizeof bare - 1);
    expect("POST /metrics, keep-alive, no Content-Length", &r, 405, "method not allowed\n", NULL);
    CHECK(r.seconds < 1.0, "POST without Content-Length: closed after %.3f s", r.seconds);
    response_free(&r);
    const char post[] = "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
    r = request_on(AF_INET, port, post, sizeof post - 1);
    expect("POST /metrics with a body", &r, 405, "method not allowed\n", NULL);
    response_free(&r);
    r = request(port, "DELETE", "/healthz", NULL);
    expect("DELETE /healthz", &r, 405, NULL, NULL);
    response_free(&r);
    svc_http_stop(&h);
}

/* After each hostile client, a normal request must still be answered. */
static void check_still_serving(int port, const char *after)
{
    response r = request(port, "GET", "/metrics", NULL);
    char what[128];
    snprintf(what, sizeof what, "GET /metrics after %s", after);
    expect(what, &r, 200, METRICS_BODY, METRICS_TYPE);
    response_free(&r);
}

static void test_hostile(fake *f)
{
    svc_http *h = start(f, "127.0.0.1:0", NULL);
    if (!h)
        return;
    int port = svc_http_port(h);

    int idle = connect_to(AF_INET, port);
    CHECK(idle >= 0, "idle client connects");
    response r = request(port, "GET", "/metrics", NULL);
    expect("GET /metrics beside an idle client", &r, 200, METRICS_BODY, METRICS_TYPE);
    CHECK(r.seconds < 1.0, "a request beside an idle client took %.3f s", r.seconds);
    response_free(&r);

    const char garbage[] = "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\xff\xfe garbage \0\r\n\r\n";
    r = request_on(AF_INET, port, garbage, sizeof garbage - 1);
    int garbage_status = r.status;
    response_free(&r);
    check_still_serving(port, "garbage");

    const char unknown[] = "BREW /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
    r = request_on(AF_INET, port, unknown, sizeof unknown - 1);
    CHECK(r.status != 200, "an unknown method got 200");
    int unknown_status = r.status;
    response_free(&r);
    check_still_serving(port, "an unknown method");

    size_t n = LONG_HEADER + 64;
    char *huge = malloc(n + 64);
    int k = snprintf(huge, n, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Long: ");
    memset(huge + k, 'a', LONG_HEADER);
    memcpy(huge + k + LONG_HEADER, "\r\n\r\n", 5);
    r = request_on(AF_INET, port, huge, strlen(huge));
    CHECK(r.status != 200, "a 64 KB header line got 200");
    int huge_status = r.status;
    response_free(&r);
    free(huge);
    check_still_serving(port, "a 64 KB header line");

    int half = connect_to(AF_INET, port);
    CHECK(half >= 0 && send_all(half, "GET /metr", 9) == 0, "half request sent");
    if (half >= 0)
        close(half);
    check_still_serving(port, "a half request");

    /* A client that asks for a large body and reads none of it must not hold up the next one, nor
     * one that leaves in the middle of it. */
    char *big = malloc(BIG_BODY + 1);
    memset(big, 'm', BIG_BODY);
    big[BIG_BODY] = '\0';
    fake_set_metrics(f, big);
    const char get[] = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    int stalled = connect_to(AF_INET, port);
    CHECK(stalled >= 0 && send_all(stalled, get, sizeof get - 1) == 0, "stalled reader sent its request");
    int gone = connect_to(AF_INET, port);
    CHECK(gone >= 0 && send_all(gone, get, sizeof get - 1) == 0, "leaving reader sent its request");
    usleep(50 * 1000);
    if (gone >= 0)
        close(gone);
    r = request(port, "GET", "/metrics", NULL);
    expect("GET /metrics (300 KB) beside a reader that stalls", &r, 200, big, METRICS_TYPE);
    CHECK(r.seconds < 1.0, "a request beside a stalled reader took %.3f s", r.seconds);
    response_free(&r);
    fake_set_metrics(f, METRICS_BODY);
    free(big);
    check_still_serving(port, "a reader that left mid-body");

    /* Still there: the idle client and the stalled reader, while the endpoint stops. */
    double t0 = now();
    svc_http_stop(&h);
    double stop_s = now() - t0;
    CHECK(stop_s < 1.0, "stop with an idle client took %.3f s", stop_s);
    if (idle >= 0)
        close(idle);
    if (stalled >= 0)
        close(stalled);
    printf("hostile (-1: closed without a reply): garbage %d, unknown method %d, 64 KB header %d; stop %.3f s\n",
           garbage_status, unknown_status, huge_status, stop_s);
}

typedef struct client {
    int port;
    int ok;
    pthread_t thread;
} client;

static void *client_thread(void *arg)
{
    client *c = arg;
    response r = request(c->port, "GET", "/metrics", NULL);
    c->ok = r.status == 200 && r.body_length == strlen(METRICS_BODY) && memcmp(r.body, METRICS_BODY, r.body_length) == 0;
    if (!c->ok)
        fprintf(stderr, "concurrent client: status %d, %zu bytes\n", r.status, r.body_length);
    response_free(&r);
    return NULL;
}

static void test_many(fake *f)
{
    svc_http *h = start(f, "127.0.0.1:0", NULL);
    if (!h)
        return;
    int port = svc_http_port(h);
    for (int i = 0; i < SEQUENTIAL; i++) {
        response r = request(port, "GET", "/metrics", NULL);
        char what[64];
        snprintf(what, sizeof what, "sequential request %d", i);
        expect(what, &r, 200, METRICS_BODY, METRICS_TYPE);
        response_free(&r);
    }
    client clients[CONCURRENT];
    for (int i = 0; i < CONCURRENT; i++) {
        clients[i] = (client){port, 0, 0};
        pthread_create(&clients[i].thread, NULL, client_thread, &clients[i]);
    }
    int ok = 0;
    for (int i = 0; i < CONCURRENT; i++) {
        pthread_join(clients[i].thread, NULL);
        ok += clients[i].ok;
    }
    CHECK(ok == CONCURRENT, "%d of %d concurrent clients got 200 and the body", ok, CONCURRENT);
    svc_http_stop(&h);
}

static void expect_start_error(fake *f, const char *listen, const char *words)
{
    svc_http_params p = {listen, NULL, f, fake_metrics, fake_health, {0}, NULL, NULL};
    svc_http *h = (svc_http *)&p; /* must come back NULL */
    char error[256] = "";
    int rc = svc_http_start(&p, &h, error, sizeof error);
    CHECK(rc == -1 && h == NULL, "start('%s') returned %d", listen, rc);
    CHECK(strstr(error, words) && !strchr(error, '\n'), "start('%s'): error '%s' should say '%s' in one line",
          listen, error, words);
    if (rc == 0)
        svc_http_stop(&h);
}

static void test_errors(fake *f)
{
    svc_http *h = start(f, "127.0.0.1:0", NULL);
    if (!h)
        return;
    char listen[64];
    snprintf(listen, sizeof listen, "127.0.0.1:%d", svc_http_port(h));
    char words[128];
    snprintf(words, sizeof words, "cannot listen on %s: Address already in use", listen);
    expect_start_error(f, listen, words);
    check_still_serving(svc_http_port(h), "a second start on its port");
    svc_http_stop(&h);

    const char *bad[] = {"127.0.0.1:x", "127.0.0.1", "127.0.0.1:", ":8080", "127.0.0.1:65536", "127.0.0.1:-1",
                         "[::1", "[::1]8080", "::1:8080", ""};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        expect_start_error(f, bad[i], "expected HOST:PORT");
    /* The default address, whether or not its port is free here. */
    svc_http_params p = {NULL, NULL, f, fake_metrics, fake_health, {0}, NULL, NULL};
    char error[256] = "";
    if (svc_http_start(&p, &h, error, sizeof error) == 0) {
        CHECK(svc_http_port(h) == 8080, "default listen: port %d", svc_http_port(h));
        svc_http_stop(&h);
    } else {
        CHECK(strstr(error, "cannot listen on 127.0.0.1:8080: "), "default listen: '%s'", error);
    }
    /* A name, resolved. */
    h = start(f, "localhost:0", NULL);
    CHECK(!h || svc_http_port(h) > 0, "localhost: port %d", svc_http_port(h));
    svc_http_stop(&h);
    expect_start_error(f, "no-such-host.invalid:8080", "http listen 'no-such-host.invalid:8080': ");
    expect_start_error(f, "192.0.2.1:0", "cannot listen on 192.0.2.1:0: ");
}

static void test_ipv6(fake *f)
{
    int s = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 a = {0};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_loopback;
    int usable = s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0;
    if (s >= 0)
        close(s);
    if (!usable) {
        expect_start_error(f, "[::1]:0", "cannot listen on [::1]:0");
        printf("ipv6: no ::1 here; start fails as it should\n");
        return;
    }
    svc_http *h = start(f, "[::1]:0", NULL);
    if (!h)
        return;
    const char text[] = "GET /metrics HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n";
    response r = request_on(AF_INET6, svc_http_port(h), text, sizeof text - 1);
    expect("GET /metrics over IPv6", &r, 200, METRICS_BODY, METRICS_TYPE);
    response_free(&r);
    /* Bound to ::1 only: not reachable over IPv4. */
    int v4 = connect_to(AF_INET, svc_http_port(h));
    CHECK(v4 < 0, "an endpoint on [::1] accepted an IPv4 connection");
    if (v4 >= 0)
        close(v4);
    svc_http_stop(&h);
}

static void test_two(fake *f)
{
    fake g = {PTHREAD_MUTEX_INITIALIZER, strdup("second 2\n"), 1, "", 0};
    svc_http *a = start(f, "127.0.0.1:0", NULL), *b = start(&g, "127.0.0.1:0", "t");
    if (a && b) {
        CHECK(svc_http_port(a) != svc_http_port(b), "two endpoints on one port %d", svc_http_port(a));
        response r = request(svc_http_port(a), "GET", "/metrics", NULL);
        expect("first endpoint", &r, 200, METRICS_BODY, METRICS_TYPE);
        response_free(&r);
        r = request(svc_http_port(b), "GET", "/metrics", "Bearer t");
        expect("second endpoint", &r, 200, "second 2\n", METRICS_TYPE);
        response_free(&r);
        int idle = connect_to(AF_INET, svc_http_port(a));
        double t0 = now();
        svc_http_stop(&a);
        CHECK(now() - t0 < 1.0, "stop took %.3f s", now() - t0);
        r = request(svc_http_port(b), "GET", "/metrics", "Bearer t");
        expect("second endpoint after the first stopped", &r, 200, "second 2\n", METRICS_TYPE);
        response_free(&r);
        t0 = now();
        svc_http_stop(&b);
        CHECK(now() - t0 < 1.0, "stop took %.3f s", now() - t0);
        if (idle >= 0)
            close(idle);
    }
    svc_http_stop(&a);
    svc_http_stop(&b);
    svc_http_stop(&a); /* accepts &NULL */
    free(g.metrics);
}

static int loopback_usable(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int ok = s >= 0 && bind(s, (struct sockaddr *)&a, sizeof a) == 0 && listen(s, 1) == 0;
    if (s >= 0)
        close(s);
    return ok;
}

int main(void)
{
    if (!loopback_usable()) {
        printf("skipped: cannot listen on 127.0.0.1 here\n");
        return 77;
    }
    double t0 = now();
    fake f = {PTHREAD_MUTEX_INITIALIZER, strdup(METRICS_BODY), 1, "", 0};
    void (*tests[])(fake *) = {test_metrics_open, test_token, test_routes, test_hostile, test_many,
                               test_errors, test_ipv6, test_two};
    test_text();
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++) {
        double t = now();
        tests[i](&f);
        if (getenv("TEST_VERBOSE"))
            printf("test %zu: %.3f s\n", i, now() - t);
    }
    free(f.metrics);
    printf("%s: %d failure(s), %d libwebsockets log message(s), %.2f s\n", failures ? "FAIL" : "ok", failures,
           atomic_load(&log_messages), now() - t0);
    return failures ? 1 : 0;
}
