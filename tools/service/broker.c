/* Events to MQTT and NATS JetStream for 'glcv serve'; see broker.h.
 *
 * Each configured broker has a queue (a doubly linked list of messages, oldest first) and a thread
 * that owns that broker's client: the publishers only append to the queues under the one lock and
 * wake the threads. A message leaves a queue only when its broker acknowledges it (or when a full
 * queue drops it, the oldest first).
 *
 * MQTT: the thread drives libmosquitto itself (mosquitto_loop_read/_write/_misc on its own poll(),
 * which also watches a wake-up pipe), publishing QoS 1 with at most MQTT_INFLIGHT_MAX unacknowledged
 * at a time; on_publish (the PUBACK) finds the message by the id mosquitto gave its publish. Every
 * connection uses a new mosquitto client with a clean session, so the library holds no message from
 * an earlier connection and resends nothing by itself: after a reconnection this file resends
 * every unacknowledged message, in order, and nothing is sent twice by two parties.
 *
 * NATS: the thread publishes synchronously (js_PublishMsg), one message at a time, the queue's
 * head, and removes it when the PubAck comes. One outstanding message keeps the order and the
 * acknowledgement's message obvious across failures, where asynchronous publishing would leave
 * the library holding publishes of a dead connection that time out later; a PubAck takes one round
 * trip (well under a millisecond on a LAN), plenty for events. libnats' own reconnection is off:
 * a lost connection ends the session and this file reconnects, as for MQTT, so both brokers share
 * the back-off (1, 2, 4 ... 10 s) and the resend.
 *
 * Why one file of this size: the queues, the spool and the two clients share one lock, one
 * message list and one rule for acknowledgements; split by broker, each part would reach into the
 * queue's internals through a private header, and the rule would live in three places. */
#define _GNU_SOURCE

#include "broker.h"
#include "service.h"
#include "stream_net.h"

#include <cjson/cJSON.h>
#include <mosquitto.h>
#include <nats/nats.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
    QUEUE_MAX_DEFAULT = 10000,
    MQTT_PORT_DEFAULT = 1883,
    BACKOFF_MAX_S = 10,
    MQTT_KEEPALIVE_S = 30,
    MQTT_CONNACK_S = 10,     /* a connection the broker has not accepted by then is given up */
    MQTT_INFLIGHT_MAX = 64,  /* publishes awaiting their PUBACK, so that mosquitto queues little */
    MQTT_POLL_MS = 1000,     /* mosquitto_loop_misc (keepalive) runs at least this often */
    NATS_TIMEOUT_MS = 2000,  /* connecting, a PubAck, a stream look-up: also bounds close's wait */
    NATS_IDLE_CHECK_MS = 500, /* an idle connection is checked for closure this often */
    NATS_PING_MS = 10000,    /* a silent dead connection is noticed after two unanswered pings */
    HOST_BYTES = SVC_HOST_BYTES,
    TEXT_BYTES = 768
};

/* One message in one broker's queue; its strings live in `text` after it. */
typedef struct node {
    struct node *prev, *next;
    uint64_t seq;        /* unique in its queue: the NATS thread finds its message after publishing */
    int mid;             /* MQTT: mosquitto's id of its publish on this connection; 0: not sent on it */
    size_t length;       /* of payload */
    const char *subject; /* PREFIX/TOPIC (MQTT) or PREFIX.TOPIC with '.' for '/' (NATS) */
    const char *topic;   /* as given: what the spool keeps (the prefix may change between runs) */
    const char *id;
    const char *payload; /* length bytes and a '\0' */
    char text[];
} node;

typedef struct queue {
    const char *name; /* "mqtt" or "nats" */
    bool enabled, connected, ever_connected;
    node *head, *tail;
    long length, inflight;
    long published, acked, dropped, reconnects;
    uint64_t next_seq;
    double drop_logged_at; /* rate limit of the queue-full warning */
    long drops_unlogged;
    char host[HOST_BYTES];
    int port;
    char where[sizeof(((svc_nats_servers *)0)->text)]; /* "HOST:PORT", "[IPV6]:PORT" (NATS: a list): for the log */
    char *prefix;
    char separator; /* between prefix and topic, and for '/' in the topic: '/' MQTT, '.' NATS */
    pthread_cond_t wake; /* the thread's back-off sleep (and the NATS thread's idle wait) */
    pthread_t thread;
    bool thread_started;
} queue;

struct svc_broker {
    glcv_logger logger;
    pthread_mutex_t lock; /* everything in the queues and `stopping` */
    pthread_cond_t drained;
    bool stopping;
    long queue_max;
    char *spool;
    queue mqtt, nats;
    /* MQTT */
    char *mqtt_client_id;
    int wake_pipe[2]; /* a byte written wakes the MQTT thread's poll */
    bool mosquitto_used;
    /* What mosquitto's callbacks report, for the MQTT thread to act on after the call that ran them
     * returns: the callbacks run under mosquitto's callback mutex, and taking `lock` there would
     * order the two locks both ways (mqtt_send holds `lock` while mosquitto_publish takes
     * mosquitto's). Touched by the MQTT thread only. */
    bool mqtt_connack;                    /* the broker accepted this connection */
    int mqtt_refused;                     /* the CONNACK's refusal code, 0: none */
    int mqtt_acks[2 * MQTT_INFLIGHT_MAX]; /* PUBACKs' message ids */
    int mqtt_acks_n;
    /* NATS */
    svc_nats_servers nats_servers;
    char *nats_stream, *nats_subjects;
    int nats_replicas; /* of the stream, when it is created */
    natsOptions *nats_options;
    double nats_complained_at; /* the last warning of a refusing stream (NATS thread only) */
};

/* mosquitto_lib_init is not thread-safe: this lock makes the outboxes' calls one at a time (from
 * version 2.0 libmosquitto counts its users, so each open's init pairs with its close's cleanup). */
static pthread_mutex_t mosquitto_users_lock = PTHREAD_MUTEX_INITIALIZER;

static const char BASE64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* ---- Small helpers ------------------------------------------------------------------------------ */


/* The CLOCK_MONOTONIC time `seconds` from now, for pthread_cond_timedwait on our conditions. */
static struct timespec deadline_in(double seconds)
{
    if (!(seconds > 0))
        seconds = 0;
    if (seconds > 1e8) /* about three years: "forever" without overflowing time_t arithmetic */
        seconds = 1e8;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double whole = floor(seconds);
    ts.tv_sec += (time_t)whole;
    ts.tv_nsec += (long)((seconds - whole) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec += 1;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

static char *copy_text(const char *text)
{
    size_t n = strlen(text) + 1;
    char *copy = malloc(n);
    if (copy)
        memcpy(copy, text, n);
    return copy;
}

static bool utf8_valid(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t extra = (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : 0;
        if (extra == 0 || c == 0xC0 || c == 0xC1 || c > 0xF4 || i + extra >= n)
            return false;
        unsigned code = c & (0x3Fu >> extra);
        for (size_t k = 1; k <= extra; k++) {
            if ((s[i + k] & 0xC0) != 0x80)
                return false;
            code = code << 6 | (s[i + k] & 0x3Fu);
        }
        /* no overlong form, no surrogate, nothing past U+10FFFF */
        if ((extra == 2 && (code < 0x800 || (code >= 0xD800 && code <= 0xDFFF))) ||
            (extra == 3 && (code < 0x10000 || code > 0x10FFFF)))
            return false;
        i += extra + 1;
    }
    return true;
}

/* Why `text` cannot be a topic or a prefix (NULL: it can): levels separated by '/', none empty;
 * no wildcard of either broker (+ # * >); no space or control character (a NATS subject ends at
 * whitespace); no empty NATS token either, NATS splitting at '.' too; UTF-8, as MQTT requires. */
static const char *name_problem(const char *text)
{
    if (!text || !text[0])
        return "is empty";
    size_t n = strlen(text);
    if (!utf8_valid((const unsigned char *)text, n))
        return "is not UTF-8";
    unsigned char prev = '/';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c <= ' ' || c == 0x7F)
            return "has a space or a control character";
        if (strchr("+#*>", c))
            return "has a wildcard character (+ # * >)";
        if ((c == '/' || c == '.') && (prev == '/' || prev == '.'))
            return "has an empty level (a leading or double '/' or '.')";
        prev = c;
    }
    if (prev == '/' || prev == '.')
        return "has an empty level (a trailing '/' or '.')";
    return NULL;
}

/* Why `id` cannot be a message id (NULL: it can): it goes into a NATS header and the spool. */
static const char *id_problem(const char *id)
{
    if (!id || !id[0])
        return "is empty";
    if (!utf8_valid((const unsigned char *)id, strlen(id)))
        return "is not UTF-8";
    for (const unsigned char *c = (const unsigned char *)id; *c; c++)
        if (*c < ' ' || *c == 0x7F)
            return "has a control character";
    return NULL;
}

/* ---- URLs and parameters -------------------------------------------------------------------------- */

static int check_stream_name(const char *name, char *error, size_t size)
{
    if (!name[0])
        return svc_fail(error, size, "nats stream '': the name is empty");
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        if (*c <= ' ' || *c == 0x7F || strchr(".*>/\\", *c))
            return svc_fail(error, size, "nats stream '%s': no space, control character or . * > / \\ in a name", name);
    return 0;
}

static void default_client_id(char *out, size_t size)
{
    char host[HOST_BYTES] = "";
    if (gethostname(host, sizeof host) != 0 || !host[0])
        snprintf(host, sizeof host, "host");
    host[sizeof host - 1] = '\0';
    snprintf(out, size, "glcv-%s-%ld", host, (long)getpid());
}

/* ---- Queues (callers hold b->lock) -------------------------------------------------------------------- */

static node *node_new(const queue *q, const char *topic, const char *id, const void *payload, size_t length)
{
    size_t prefix_n = strlen(q->prefix), topic_n = strlen(topic), id_n = strlen(id);
    size_t need = prefix_n + 1 + topic_n + 1 + topic_n + 1 + id_n + 1 + length + 1;
    node *n = calloc(1, sizeof *n + need);
    if (!n)
        return NULL;
    char *p = n->text;
    n->subject = p;
    memcpy(p, q->prefix, prefix_n);
    p[prefix_n] = q->separator;
    for (size_t i = 0; i < topic_n; i++)
        p[prefix_n + 1 + i] = topic[i] == '/' ? q->separator : topic[i];
    p += prefix_n + 1 + topic_n + 1;
    n->topic = memcpy(p, topic, topic_n + 1);
    p += topic_n + 1;
    n->id = memcpy(p, id, id_n + 1);
    p += id_n + 1;
    if (length)
        memcpy(p, payload, length);
    p[length] = '\0';
    n->payload = p;
    n->length = length;
    return n;
}

static void queue_unlink(queue *q, node *n)
{
    if (n->prev)
        n->prev->next = n->next;
    else
        q->head = n->next;
    if (n->next)
        n->next->prev = n->prev;
    else
        q->tail = n->prev;
    if (n->mid)
        q->inflight--;
    q->length--;
    free(n);
}

/* Appends n, first dropping the oldest message when the queue is full. */
static void queue_push(svc_broker *b, queue *q, node *n)
{
    if (q->length >= b->queue_max && q->head) {
        queue_unlink(q, q->head);
        q->dropped++;
        q->drops_unlogged++;
    }
    n->seq = q->next_seq++;
    n->prev = q->tail;
    n->next = NULL;
    if (q->tail)
        q->tail->next = n;
    else
        q->head = n;
    q->tail = n;
    q->length++;
}

static void queue_free(queue *q)
{
    for (node *n = q->head, *next = NULL; n; n = next) {
        next = n->next;
        free(n);
    }
    q->head = q->tail = NULL;
    q->length = q->inflight = 0;
}

/* An acknowledged (or refused) message leaves; flush's waiters learn when the queues are empty. */
static void queue_done(svc_broker *b, queue *q, node *n)
{
    queue_unlink(q, n);
    if (b->mqtt.length + b->nats.length == 0)
        pthread_cond_broadcast(&b->drained);
}

/* A connection ended or starts: nothing is in flight on it, everything is to be sent again. */
static void queue_unsend(queue *q)
{
    for (node *n = q->head; n && n->mid; n = n->next)
        n->mid = 0;
    q->inflight = 0;
}

/* The queue-full warning, at most once a second per broker: text to log after unlocking. */
static bool drop_note(const svc_broker *b, queue *q, bool force, char text[TEXT_BYTES])
{
    double now = net_now();
    if (q->drops_unlogged == 0 || (!force && now - q->drop_logged_at < 1.0))
        return false;
    snprintf(text, TEXT_BYTES, "%s: the queue is full (%ld messages): dropped the %ld oldest (%ld in all)", q->name,
             b->queue_max, q->drops_unlogged, q->dropped);
    q->drops_unlogged = 0;
    q->drop_logged_at = now;
    return true;
}

/* Sleeps `seconds` unless closing: returns true when closing. */
static bool backoff_wait(svc_broker *b, queue *q, double seconds)
{
    struct timespec until = deadline_in(seconds);
    pthread_mutex_lock(&b->lock);
    while (!b->stopping && pthread_cond_timedwait(&q->wake, &b->lock, &until) != ETIMEDOUT)
        ;
    bool stopping = b->stopping;
    pthread_mutex_unlock(&b->lock);
    return stopping;
}

static bool is_stopping(svc_broker *b)
{
    pthread_mutex_lock(&b->lock);
    bool stopping = b->stopping;
    pthread_mutex_unlock(&b->lock);
    return stopping;
}

/* The state of a connection for the counters and the log. */
static void mark_connected(svc_broker *b, queue *q)
{
    pthread_mutex_lock(&b->lock);
    queue_unsend(q);
    q->connected = true;
    if (q->ever_connected)
        q->reconnects++;
    bool again = q->ever_connected;
    q->ever_connected = true;
    long waiting = q->length;
    pthread_mutex_unlock(&b->lock);
    svc_log(&b->logger, GLCV_LOG_INFO, "%s: %s %s (%ld messages waiting)", q->name, again ? "reconnected to" : "connected to",
        q->where, waiting);
}

static void mark_disconnected(svc_broker *b, queue *q)
{
    pthread_mutex_lock(&b->lock);
    queue_unsend(q);
    q->connected = false;
    pthread_mutex_unlock(&b->lock);
}

/* A failed connection attempt: a warning for the first of an outage, then quieter. */
static void connect_failed(svc_broker *b, queue *q, const char *why, bool *warned)
{
    svc_log(&b->logger, *warned ? GLCV_LOG_DEBUG : GLCV_LOG_WARN, "%s: cannot connect to %s: %s (retrying, 1 to %d s apart)",
        q->name, q->where, why, BACKOFF_MAX_S);
    *warned = true;
}

/* The broker's thread: sessions until closing, with back-off between them: 1 s after a session
 * that was connected, doubling after each failed attempt up to BACKOFF_MAX_S. */
static void run_sessions(svc_broker *b, queue *q, bool (*session)(svc_broker *, bool *))
{
    int delay = 0;
    bool warned = false;
    while (!is_stopping(b)) {
        if (delay > 0 && backoff_wait(b, q, delay))
            break;
        bool was_up = session(b, &warned);
        if (was_up)
            warned = false;
        delay = was_up || delay == 0 ? 1 : delay * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S : delay * 2;
    }
}

/* ---- MQTT ------------------------------------------------------------------------------------------- */

static void mqtt_on_connect(struct mosquitto *mosq, void *user, int rc)
{
    (void)mosq;
    svc_broker *b = user;
    if (rc != 0)
        b->mqtt_refused = rc;
    else
        b->mqtt_connack = true;
}

static void mqtt_on_publish(struct mosquitto *mosq, void *user, int mid)
{
    (void)mosq;
    svc_broker *b = user;
    /* one PUBACK per message in flight, at most MQTT_INFLIGHT_MAX between two mqtt_take_acks */
    if (b->mqtt_acks_n < (int)(sizeof b->mqtt_acks / sizeof b->mqtt_acks[0]))
        b->mqtt_acks[b->mqtt_acks_n++] = mid;
}

/* The acknowledged messages leave the queue. */
static void mqtt_take_acks(svc_broker *b)
{
    queue *q = &b->mqtt;
    if (b->mqtt_acks_n == 0)
        return;
    pthread_mutex_lock(&b->lock);
    /* the sent messages are the queue's first ones: they go in order, new ones join at the end */
    for (node *n = q->head, *next = NULL; n && n->mid; n = next) {
        next = n->next;
        for (int i = 0; i < b->mqtt_acks_n; i++) {
            if (b->mqtt_acks[i] == n->mid) {
                q->acked++;
                queue_done(b, q, n);
                break;
            }
        }
    }
    pthread_mutex_unlock(&b->lock);
    b->mqtt_acks_n = 0;
}

static bool mqtt_refuses(int rc)
{
    return rc == MOSQ_ERR_PAYLOAD_SIZE || rc == MOSQ_ERR_MALFORMED_UTF8 || rc == MOSQ_ERR_INVAL ||
           rc == MOSQ_ERR_OVERSIZE_PACKET || rc == MOSQ_ERR_QOS_NOT_SUPPORTED;
}

/* Publishes the unsent messages, in order, up to MQTT_INFLIGHT_MAX awaiting their PUBACK. A
 * message mosquitto refuses for itself (too large) would block the queue forever: it leaves with
 * an error. Returns mosquitto's code of a failure of the connection. */
static int mqtt_send(svc_broker *b, struct mosquitto *mosq)
{
    queue *q = &b->mqtt;
    char refused[TEXT_BYTES] = "";
    int rc = MOSQ_ERR_SUCCESS;
    pthread_mutex_lock(&b->lock);
    node *n = q->head;
    while (n && n->mid)
        n = n->next;
    while (n && q->inflight < MQTT_INFLIGHT_MAX) {
        int mid = 0;
        rc = mosquitto_publish(mosq, &mid, n->subject, (int)n->length, n->payload, 1, false);
        if (rc == MOSQ_ERR_SUCCESS) {
            n->mid = mid;
            q->inflight++;
            q->published++;
            n = n->next;
        } else if (mqtt_refuses(rc)) {
            snprintf(refused, sizeof refused, "mqtt: message '%s' on '%s' refused (%s): dropped", n->id, n->subject,
                     mosquitto_strerror(rc));
            node *next = n->next;
            queue_done(b, q, n);
            n = next;
            rc = MOSQ_ERR_SUCCESS;
        } else {
            break;
        }
    }
    pthread_mutex_unlock(&b->lock);
    if (refused[0])
        svc_log(&b->logger, GLCV_LOG_ERROR, "%s", refused);
    return rc;
}

static void drain_pipe(int fd)
{
    char bytes[64];
    while (read(fd, bytes, sizeof bytes) > 0)
        ;
}

static const char *mqtt_error(int rc)
{
    return rc == MOSQ_ERR_ERRNO ? strerror(errno) : mosquitto_strerror(rc);
}

/* One turn of mosquitto's network loop on our poll(), which the wake-up pipe interrupts; `why`
 * says why the connection ends, when it does. */
static void mqtt_turn(svc_broker *b, struct mosquitto *mosq, char why[TEXT_BYTES])
{
    struct pollfd p[2] = {{mosquitto_socket(mosq), POLLIN, 0}, {b->wake_pipe[0], POLLIN, 0}};
    if (p[0].fd < 0) {
        snprintf(why, TEXT_BYTES, "the connection closed");
        return;
    }
    if (mosquitto_want_write(mosq))
        p[0].events |= POLLOUT;
    if (poll(p, 2, MQTT_POLL_MS) < 0 && errno != EINTR) {
        snprintf(why, TEXT_BYTES, "poll: %s", strerror(errno));
        return;
    }
    if (p[1].revents)
        drain_pipe(b->wake_pipe[0]);
    int rc = MOSQ_ERR_SUCCESS;
    if (p[0].revents & (POLLIN | POLLERR | POLLHUP))
        rc = mosquitto_loop_read(mosq, 1);
    if (rc == MOSQ_ERR_SUCCESS && mosquitto_want_write(mosq))
        rc = mosquitto_loop_write(mosq, 1);
    if (rc == MOSQ_ERR_SUCCESS)
        rc = mosquitto_loop_misc(mosq);
    if (b->mqtt_refused)
        snprintf(why, TEXT_BYTES, "refused: %s", mosquitto_connack_string(b->mqtt_refused));
    else if (rc != MOSQ_ERR_SUCCESS)
        snprintf(why, TEXT_BYTES, "%s", mqtt_error(rc));
}

/* One connection: mosquitto's network loop until the connection fails or closing.
 * Returns whether the broker accepted the connection. */
static bool mqtt_session(svc_broker *b, bool *warned)
{
    queue *q = &b->mqtt;
    struct mosquitto *mosq = mosquitto_new(b->mqtt_client_id, true, b);
    if (!mosq) {
        connect_failed(b, q, "no memory for a client", warned);
        return false;
    }
    mosquitto_connect_callback_set(mosq, mqtt_on_connect);
    mosquitto_publish_callback_set(mosq, mqtt_on_publish);
    bool up = false;
    b->mqtt_connack = false;
    b->mqtt_refused = 0;
    b->mqtt_acks_n = 0;
    /* mosquitto.h pairs connect_async with its own loop thread; in 2.0 it only starts a non-blocking
     * connect and queues CONNECT, which mosquitto_loop_write sends once the socket is writable, as
     * mosquitto_loop would: a blocking mosquitto_connect could hold close for the TCP timeout */
    int rc = mosquitto_connect_async(mosq, q->host, q->port, MQTT_KEEPALIVE_S);
    if (rc != MOSQ_ERR_SUCCESS) {
        connect_failed(b, q, mqtt_error(rc), warned);
        mosquitto_destroy(mosq);
        return false;
    }
    double give_up = net_now() + MQTT_CONNACK_S;
    char why[TEXT_BYTES] = "";
    bool stopping = false;
    while (!why[0] && !(stopping = is_stopping(b))) {
        if (up && (rc = mqtt_send(b, mosq)) != MOSQ_ERR_SUCCESS)
            snprintf(why, sizeof why, "%s", mqtt_error(rc));
        else if (!up && net_now() > give_up)
            snprintf(why, sizeof why, "no answer from the broker in %d s", MQTT_CONNACK_S);
        else
            mqtt_turn(b, mosq, why);
        if (b->mqtt_connack && !up) {
            up = true;
            mark_connected(b, q);
        }
        mqtt_take_acks(b);
    }
    if (stopping && up) {
        /* a clean goodbye when the socket takes it at once; no waiting for it */
        mosquitto_disconnect(mosq);
        mosquitto_loop_write(mosq, 1);
    }
    mark_disconnected(b, q);
    mosquitto_destroy(mosq);
    if (!up && !stopping)
        connect_failed(b, q, why, warned);
    else if (!stopping)
        svc_log(&b->logger, GLCV_LOG_WARN, "mqtt: connection to %s lost: %s (reconnecting)", q->where, why);
    return up;
}

static void *mqtt_main(void *arg)
{
    svc_broker *b = arg;
    run_sessions(b, &b->mqtt, mqtt_session);
    return NULL;
}

/* ---- NATS JetStream -------------------------------------------------------------------------------- */

/* Creates the stream when it is missing. */
static int nats_ensure_stream(svc_broker *b, jsCtx *js, char why[TEXT_BYTES])
{
    jsStreamInfo *info = NULL;
    jsErrCode code = 0;
    natsStatus s = js_GetStreamInfo(&info, js, b->nats_stream, NULL, &code);
    jsStreamInfo_Destroy(info);
    info = NULL;
    if (s == NATS_OK)
        return 0;
    if (s != NATS_NOT_FOUND && code != JSStreamNotFoundErr) {
        snprintf(why, TEXT_BYTES, "stream '%s': %s", b->nats_stream, svc_nats_error(s));
        return -1;
    }
    jsStreamConfig config;
    jsStreamConfig_Init(&config);
    const char *subjects[1] = {b->nats_subjects};
    config.Name = b->nats_stream;
    config.Subjects = subjects;
    config.SubjectsLen = 1;
    config.Storage = js_FileStorage;
    config.Replicas = b->nats_replicas;
    s = js_AddStream(&info, js, &config, NULL, &code);
    jsStreamInfo_Destroy(info);
    if (s != NATS_OK) {
        snprintf(why, TEXT_BYTES, "cannot create stream '%s' (subjects %s): %s", b->nats_stream, b->nats_subjects,
                 svc_nats_error(s));
        return -1;
    }
    svc_log(&b->logger, GLCV_LOG_INFO, "nats: created stream '%s' (subjects %s, file storage, %d replica%s)",
            b->nats_stream, b->nats_subjects, b->nats_replicas, b->nats_replicas == 1 ? "" : "s");
    return 0;
}

/* The queue's head, copied into a message with its id header: NATS_OK (*msg NULL when closing),
 * or a failure of the copy. Waits for a message, checking meanwhile that the connection lives
 * (NATS_CONNECTION_CLOSED when not). */
static natsStatus nats_take_head(svc_broker *b, natsConnection *nc, natsMsg **msg, uint64_t *seq)
{
    queue *q = &b->nats;
    *msg = NULL;
    *seq = 0;
    pthread_mutex_lock(&b->lock);
    while (!b->stopping && !q->head) {
        struct timespec until = deadline_in(NATS_IDLE_CHECK_MS / 1000.0);
        if (pthread_cond_timedwait(&q->wake, &b->lock, &until) == ETIMEDOUT && !q->head) {
            pthread_mutex_unlock(&b->lock);
            if (natsConnection_IsClosed(nc))
                return NATS_CONNECTION_CLOSED;
            pthread_mutex_lock(&b->lock);
        }
    }
    natsStatus s = NATS_OK;
    if (!b->stopping) {
        node *n = q->head;
        s = natsMsg_Create(msg, n->subject, NULL, n->payload, (int)n->length);
        if (s == NATS_OK)
            s = natsMsgHeader_Set(*msg, "Nats-Msg-Id", n->id);
        if (s == NATS_OK) {
            *seq = n->seq;
            q->published++;
        }
    }
    pthread_mutex_unlock(&b->lock);
    if (s != NATS_OK) {
        natsMsg_Destroy(*msg);
        *msg = NULL;
    }
    return s;
}

/* The message of sequence `seq` leaves the queue (when a full queue has not dropped it meanwhile:
 * it was the head, and only a drop removes the head behind the NATS thread's back). */
static void nats_done(svc_broker *b, uint64_t seq, bool acked, const char *refused)
{
    queue *q = &b->nats;
    char id[TEXT_BYTES] = "";
    pthread_mutex_lock(&b->lock);
    if (q->head && q->head->seq == seq) {
        snprintf(id, sizeof id, "%s", q->head->id);
        if (acked)
            q->acked++;
        queue_done(b, q, q->head);
    }
    pthread_mutex_unlock(&b->lock);
    if (refused && id[0])
        svc_log(&b->logger, GLCV_LOG_ERROR, "nats: message '%s' refused (%s): dropped", id, refused);
}

typedef enum { NATS_NEXT, NATS_STOP, NATS_LOST } nats_step;

/* A stream that refuses our messages is retried every second: a warning every 10 s of that. */
static void nats_complain(svc_broker *b, const char *what, const char *detail)
{
    double now = net_now();
    bool warn = now - b->nats_complained_at >= 10;
    if (warn)
        b->nats_complained_at = now;
    svc_log(&b->logger, warn ? GLCV_LOG_WARN : GLCV_LOG_DEBUG, "nats: %s (stream '%s', subjects %s): %s (retrying every 1 s)",
        what, b->nats_stream, b->nats_subjects, detail);
}

/* Publishes the queue's head and waits for its PubAck. */
static nats_step nats_publish_next(svc_broker *b, natsConnection *nc, jsCtx *js, char why[TEXT_BYTES])
{
    natsMsg *msg = NULL;
    uint64_t seq = 0;
    natsStatus s = nats_take_head(b, nc, &msg, &seq);
    if (s == NATS_CONNECTION_CLOSED) {
        snprintf(why, TEXT_BYTES, "the connection closed");
        return NATS_LOST;
    }
    if (s != NATS_OK) {
        snprintf(why, TEXT_BYTES, "cannot make a message: %s", svc_nats_error(s));
        return NATS_LOST;
    }
    if (!msg)
        return NATS_STOP;
    jsPubOptions options;
    jsPubOptions_Init(&options);
    options.MaxWait = NATS_TIMEOUT_MS;
    jsPubAck *ack = NULL;
    jsErrCode code = 0;
    s = js_PublishMsg(&ack, js, msg, &options, &code);
    jsPubAck_Destroy(ack);
    natsMsg_Destroy(msg);
    if (s == NATS_OK) {
        nats_done(b, seq, true, NULL);
        return NATS_NEXT;
    }
    if (s == NATS_MAX_PAYLOAD || s == NATS_INVALID_SUBJECT || code == JSStreamMessageExceedsMaximumErr) {
        nats_done(b, seq, false, svc_nats_error(s));
        return NATS_NEXT;
    }
    if (s == NATS_NO_RESPONDERS || code == JSStreamNotFoundErr) {
        /* the stream went away (deleted, or the server lost it): make it again; or it exists
         * without our subjects (made by hand): nothing to do but wait */
        nats_complain(b, "no stream takes the subject", svc_nats_error(s));
        if (nats_ensure_stream(b, js, why) != 0)
            return NATS_LOST;
        return backoff_wait(b, &b->nats, 1.0) ? NATS_STOP : NATS_NEXT;
    }
    if (s == NATS_TIMEOUT) {
        /* a slow store, or a dead connection: a round trip tells which */
        if (natsConnection_FlushTimeout(nc, NATS_TIMEOUT_MS) == NATS_OK)
            return NATS_NEXT;
        snprintf(why, TEXT_BYTES, "no PubAck and no answer to a ping in %d ms", NATS_TIMEOUT_MS);
        return NATS_LOST;
    }
    if (s == NATS_ERR && code != 0) {
        /* the stream refuses for now (full, or short of storage): keep the message, try again */
        nats_complain(b, "the stream refused a message", svc_nats_error(s));
        return backoff_wait(b, &b->nats, 1.0) ? NATS_STOP : NATS_NEXT;
    }
    snprintf(why, TEXT_BYTES, "%s", svc_nats_error(s));
    return NATS_LOST;
}

/* One connection: the queue published head first until the connection fails or closing. Returns
 * whether it connected. */
static bool nats_session(svc_broker *b, bool *warned)
{
    queue *q = &b->nats;
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    natsStatus s = natsConnection_Connect(&nc, b->nats_options);
    if (s != NATS_OK) {
        connect_failed(b, q, svc_nats_error(s), warned);
        return false;
    }
    char why[TEXT_BYTES] = "";
    jsOptions options;
    jsOptions_Init(&options);
    options.Wait = NATS_TIMEOUT_MS;
    s = natsConnection_JetStream(&js, nc, &options);
    if (s != NATS_OK)
        snprintf(why, sizeof why, "JetStream: %s", svc_nats_error(s));
    bool up = s == NATS_OK && nats_ensure_stream(b, js, why) == 0;
    if (up) {
        mark_connected(b, q);
        nats_step step = NATS_NEXT;
        while (step == NATS_NEXT)
            step = nats_publish_next(b, nc, js, why);
        mark_disconnected(b, q);
        if (step == NATS_LOST)
            svc_log(&b->logger, GLCV_LOG_WARN, "nats: connection to %s lost: %s (reconnecting)", q->where, why);
    } else {
        connect_failed(b, q, why, warned);
    }
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return up;
}

static void *nats_main(void *arg)
{
    svc_broker *b = arg;
    run_sessions(b, &b->nats, nats_session);
    return NULL;
}

static int nats_prepare(svc_broker *b, char *error, size_t size)
{
    natsStatus s = natsOptions_Create(&b->nats_options);
    if (s == NATS_OK)
        s = svc_nats_servers_set(&b->nats_servers, b->nats_options);
    if (s == NATS_OK)
        s = natsOptions_SetAllowReconnect(b->nats_options, false);
    if (s == NATS_OK)
        s = natsOptions_SetTimeout(b->nats_options, NATS_TIMEOUT_MS);
    if (s == NATS_OK)
        s = natsOptions_SetPingInterval(b->nats_options, NATS_PING_MS);
    if (s == NATS_OK)
        s = natsOptions_SetName(b->nats_options, "glcv");
    if (s != NATS_OK)
        return svc_fail(error, size, "nats servers %s: %s", b->nats.where, svc_nats_error(s));
    return 0;
}

/* ---- Spool -------------------------------------------------------------------------------------- */

/* A payload goes into the spool as a JSON string when it is text (UTF-8, no NUL), else base64. */
static char *base64_encode(const unsigned char *data, size_t n)
{
    char *out = malloc((n + 2) / 3 * 4 + 1), *o = out;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)data[i] << 16 | (i + 1 < n ? (unsigned)data[i + 1] << 8 : 0) | (i + 2 < n ? data[i + 2] : 0);
        *o++ = BASE64[v >> 18 & 63];
        *o++ = BASE64[v >> 12 & 63];
        *o++ = i + 1 < n ? BASE64[v >> 6 & 63] : '=';
        *o++ = i + 2 < n ? BASE64[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

/* Decodes base64 text in place; returns its length, or -1 when it is not base64. */
static long base64_decode(char *text)
{
    size_t n = strlen(text), out = 0;
    if (n % 4)
        return -1;
    for (size_t i = 0; i < n; i += 4) {
        unsigned v = 0;
        int pad = 0;
        for (size_t k = 0; k < 4; k++) {
            const char *at = text[i + k] ? strchr(BASE64, text[i + k]) : NULL;
            if (text[i + k] == '=' && i + 4 == n && k >= 2 && (k == 3 || text[i + 3] == '=')) {
                pad++;
                v <<= 6;
            } else if (at && !pad) {
                v = v << 6 | (unsigned)(at - BASE64);
            } else {
                return -1;
            }
        }
        text[out++] = (char)(v >> 16);
        if (pad < 2)
            text[out++] = (char)(v >> 8 & 255);
        if (pad < 1)
            text[out++] = (char)(v & 255);
    }
    return (long)out;
}

/* One spool line (without its newline), malloc'd; NULL: no memory. */
static char *spool_line(const queue *q, const node *n)
{
    cJSON *o = cJSON_CreateObject();
    char *line = NULL, *encoded = NULL;
    bool text = memchr(n->payload, '\0', n->length) == NULL &&
                utf8_valid((const unsigned char *)n->payload, n->length);
    if (!text)
        encoded = base64_encode((const unsigned char *)n->payload, n->length);
    if (o && cJSON_AddStringToObject(o, "broker", q->name) && cJSON_AddStringToObject(o, "topic", n->topic) &&
        cJSON_AddStringToObject(o, "id", n->id) &&
        (text ? cJSON_AddStringToObject(o, "payload", n->payload) != NULL
              : encoded && cJSON_AddStringToObject(o, "payload_base64", encoded) != NULL))
        line = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    free(encoded);
    return line;
}

static int spool_write_queue(FILE *f, const queue *q)
{
    for (const node *n = q->head; n; n = n->next) {
        char *line = spool_line(q, n);
        if (!line) {
            errno = ENOMEM;
            return -1;
        }
        int rc = fputs(line, f) < 0 || fputc('\n', f) == EOF ? -1 : 0;
        cJSON_free(line);
        if (rc)
            return -1;
    }
    return 0;
}

/* Makes a rename durable: the folder's entry is written too. */
static void sync_folder(const char *path)
{
    char folder[PATH_MAX];
    snprintf(folder, sizeof folder, "%s", path);
    char *slash = strrchr(folder, '/');
    if (!slash)
        snprintf(folder, sizeof folder, ".");
    else if (slash == folder)
        folder[1] = '\0';
    else
        *slash = '\0';
    int fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

/* At close: what is left goes to PATH.tmp, synced, then renamed over PATH (never half a spool).
 * Nothing left: no spool. */
static void spool_save(svc_broker *b)
{
    long count = b->mqtt.length + b->nats.length;
    if (count == 0) {
        if (unlink(b->spool) != 0 && errno != ENOENT)
            svc_log(&b->logger, GLCV_LOG_WARN, "spool '%s': cannot remove: %s", b->spool, strerror(errno));
        return;
    }
    size_t n = strlen(b->spool);
    char *tmp = malloc(n + 5);
    if (!tmp) {
        svc_log(&b->logger, GLCV_LOG_ERROR, "spool '%s': no memory: %ld messages lost", b->spool, count);
        return;
    }
    memcpy(tmp, b->spool, n);
    memcpy(tmp + n, ".tmp", 5);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    int rc = f ? 0 : -1;
    if (!f && fd >= 0)
        close(fd);
    if (rc == 0)
        rc = spool_write_queue(f, &b->mqtt);
    if (rc == 0)
        rc = spool_write_queue(f, &b->nats);
    if (rc == 0 && (fflush(f) != 0 || fsync(fileno(f)) != 0))
        rc = -1;
    int err = errno;
    if (f && fclose(f) != 0 && rc == 0) {
        rc = -1;
        err = errno;
    }
    if (rc == 0 && rename(tmp, b->spool) != 0) {
        rc = -1;
        err = errno;
    }
    if (rc == 0) {
        sync_folder(b->spool);
        svc_log(&b->logger, GLCV_LOG_INFO, "spool '%s': %ld messages kept for the next start", b->spool, count);
    } else {
        unlink(tmp);
        svc_log(&b->logger, GLCV_LOG_ERROR, "spool '%s': cannot write %s: %s: %ld messages lost", b->spool, tmp, strerror(err),
            count);
    }
    free(tmp);
}

static const char *json_text(const cJSON *o, const char *key)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(item) ? item->valuestring : NULL;
}

/* Queues one spool line's message: 0, or -1 with the reason in why. */
static int spool_load_line(svc_broker *b, const char *line, size_t length, long *skipped, char why[TEXT_BYTES])
{
    cJSON *o = cJSON_ParseWithLength(line, length);
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return svc_fail(why, TEXT_BYTES, "not a JSON object");
    }
    const char *broker = json_text(o, "broker"), *topic = json_text(o, "topic"), *id = json_text(o, "id");
    const char *payload = json_text(o, "payload");
    const cJSON *encoded = cJSON_GetObjectItemCaseSensitive(o, "payload_base64");
    char *payload_base64 = cJSON_IsString(encoded) ? encoded->valuestring : NULL; /* decoded in place */
    long length_decoded = payload ? (long)strlen(payload) : payload_base64 ? base64_decode(payload_base64) : -1;
    queue *q = broker && !strcmp(broker, "mqtt") ? &b->mqtt : broker && !strcmp(broker, "nats") ? &b->nats : NULL;
    const char *topic_says = topic ? name_problem(topic) : "is missing", *id_says = id ? id_problem(id) : "is missing";
    int rc = 0;
    if (!q)
        rc = svc_fail(why, TEXT_BYTES, "\"broker\" must be \"mqtt\" or \"nats\"");
    else if (topic_says)
        rc = svc_fail(why, TEXT_BYTES, "\"topic\" %s", topic_says);
    else if (id_says)
        rc = svc_fail(why, TEXT_BYTES, "\"id\" %s", id_says);
    else if (length_decoded < 0)
        rc = svc_fail(why, TEXT_BYTES, "no \"payload\" text or \"payload_base64\" base64");
    else if (!q->enabled)
        (*skipped)++;
    else {
        node *n = node_new(q, topic, id, payload ? payload : payload_base64, (size_t)length_decoded);
        if (n)
            queue_push(b, q, n);
        else
            rc = svc_fail(why, TEXT_BYTES, "no memory");
    }
    cJSON_Delete(o);
    return rc;
}

/* At open: the spool's messages are queued first. Returns 1 when a spool was read, 0 when there
 * is none, -1 with a one-line reason. */
static int spool_load(svc_broker *b, char *error, size_t size)
{
    FILE *f = fopen(b->spool, "re");
    if (!f)
        return errno == ENOENT ? 0 : svc_fail(error, size, "spool '%s': %s", b->spool, strerror(errno));
    char *line = NULL, why[TEXT_BYTES];
    size_t capacity = 0;
    long number = 0, loaded = 0, skipped = 0;
    ssize_t n;
    int rc = 1;
    while (rc == 1 && (n = getline(&line, &capacity, f)) >= 0) {
        number++;
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
            n--;
        if (n == 0)
            continue;
        if (spool_load_line(b, line, (size_t)n, &skipped, why) != 0)
            rc = svc_fail(error, size, "spool '%s' line %ld: %s", b->spool, number, why);
        else
            loaded++;
    }
    if (rc == 1 && ferror(f))
        rc = svc_fail(error, size, "spool '%s': %s", b->spool, strerror(errno));
    free(line);
    fclose(f);
    if (rc == 1) {
        svc_log(&b->logger, GLCV_LOG_INFO, "spool '%s': %ld messages queued again", b->spool, loaded - skipped);
        char note[TEXT_BYTES];
        if (drop_note(b, &b->mqtt, true, note))
            svc_log(&b->logger, GLCV_LOG_WARN, "%s", note);
        if (drop_note(b, &b->nats, true, note))
            svc_log(&b->logger, GLCV_LOG_WARN, "%s", note);
        if (skipped)
            svc_log(&b->logger, GLCV_LOG_WARN, "spool '%s': %ld messages for a broker no longer configured: dropped", b->spool,
                skipped);
    }
    return rc;
}

/* ---- The interface ------------------------------------------------------------------------------- */

static int queue_init(queue *q, const char *name, const char *prefix, char separator, char *error, size_t size)
{
    q->name = name;
    q->separator = separator;
    q->drop_logged_at = -1e9;
    q->next_seq = 1;
    const char *problem = name_problem(prefix);
    if (problem)
        return svc_fail(error, size, "%s prefix '%s' %s", name, prefix, problem);
    if (!(q->prefix = copy_text(prefix)))
        return svc_fail(error, size, "no memory");
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&q->wake, &attr);
    pthread_condattr_destroy(&attr);
    return 0;
}

static void release(svc_broker *b)
{
    queue *queues[2] = {&b->mqtt, &b->nats};
    for (int i = 0; i < 2; i++) {
        queue_free(queues[i]);
        if (queues[i]->prefix)
            pthread_cond_destroy(&queues[i]->wake);
        free(queues[i]->prefix);
    }
    if (b->mosquitto_used) {
        pthread_mutex_lock(&mosquitto_users_lock);
        mosquitto_lib_cleanup();
        pthread_mutex_unlock(&mosquitto_users_lock);
    }
    natsOptions_Destroy(b->nats_options);
    for (int i = 0; i < 2; i++)
        if (b->wake_pipe[i] >= 0)
            close(b->wake_pipe[i]);
    pthread_cond_destroy(&b->drained);
    pthread_mutex_destroy(&b->lock);
    free(b->mqtt_client_id);
    free(b->nats_stream);
    free(b->nats_subjects);
    free(b->spool);
    free(b);
}

static int configure(svc_broker *b, const svc_broker_params *params, char *error, size_t size)
{
    if (params->queue_max < 0)
        return svc_fail(error, size, "queue_max %d: must be 0 (the default, %d) or more", params->queue_max,
                     QUEUE_MAX_DEFAULT);
    b->queue_max = params->queue_max ? params->queue_max : QUEUE_MAX_DEFAULT;
    b->mqtt.enabled = params->mqtt_url != NULL;
    b->nats.enabled = params->nats_url != NULL;
    if (b->mqtt.enabled &&
        svc_parse_url(params->mqtt_url, "mqtt", MQTT_PORT_DEFAULT, b->mqtt.host, &b->mqtt.port, error, size) != 0)
        return -1;
    if (b->nats.enabled && svc_nats_servers_parse(params->nats_url, &b->nats_servers, error, size) != 0)
        return -1;
    if (queue_init(&b->mqtt, "mqtt", params->mqtt_prefix ? params->mqtt_prefix : "glcv", '/', error, size) != 0 ||
        queue_init(&b->nats, "nats", params->nats_prefix ? params->nats_prefix : "glcv", '.', error, size) != 0)
        return -1;
    snprintf(b->mqtt.where, sizeof b->mqtt.where, strchr(b->mqtt.host, ':') ? "[%s]:%d" : "%s:%d", b->mqtt.host,
             b->mqtt.port);
    snprintf(b->nats.where, sizeof b->nats.where, "%s", b->nats_servers.text);
    const char *stream = params->nats_stream ? params->nats_stream : "GLCV_EVENTS";
    if (check_stream_name(stream, error, size) != 0)
        return -1;
    if (params->mqtt_client_id && !params->mqtt_client_id[0])
        return svc_fail(error, size, "mqtt client id '': must not be empty (NULL: the default)");
    if (params->spool && !params->spool[0])
        return svc_fail(error, size, "spool '': the path is empty (NULL: no spool)");
    char client_id[HOST_BYTES + 32];
    default_client_id(client_id, sizeof client_id);
    b->mqtt_client_id = copy_text(params->mqtt_client_id ? params->mqtt_client_id : client_id);
    size_t subjects_n = strlen(b->nats.prefix) + 3;
    b->nats_subjects = malloc(subjects_n);
    if (b->nats_subjects)
        snprintf(b->nats_subjects, subjects_n, "%s.>", b->nats.prefix);
    b->nats_stream = copy_text(stream);
    b->nats_replicas = params->nats_replicas > 0 ? params->nats_replicas : 1;
    b->spool = params->spool ? copy_text(params->spool) : NULL;
    if (!b->nats_subjects || !b->mqtt_client_id || !b->nats_stream || (params->spool && !b->spool))
        return svc_fail(error, size, "no memory");
    return 0;
}

static int start_clients(svc_broker *b, char *error, size_t size)
{
    if (pipe2(b->wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return svc_fail(error, size, "pipe: %s", strerror(errno));
    if (b->mqtt.enabled) {
        pthread_mutex_lock(&mosquitto_users_lock);
        int rc = mosquitto_lib_init();
        pthread_mutex_unlock(&mosquitto_users_lock);
        if (rc != MOSQ_ERR_SUCCESS)
            return svc_fail(error, size, "mqtt: libmosquitto: %s", mosquitto_strerror(rc));
        b->mosquitto_used = true;
    }
    if (b->nats.enabled && nats_prepare(b, error, size) != 0)
        return -1;
    queue *queues[2] = {&b->mqtt, &b->nats};
    void *(*mains[2])(void *) = {mqtt_main, nats_main};
    for (int i = 0; i < 2; i++) {
        if (!queues[i]->enabled)
            continue;
        int rc = pthread_create(&queues[i]->thread, NULL, mains[i], b);
        if (rc != 0)
            return svc_fail(error, size, "%s: cannot start a thread: %s", queues[i]->name, strerror(rc));
        queues[i]->thread_started = true;
    }
    return 0;
}

static void stop_threads(svc_broker *b)
{
    pthread_mutex_lock(&b->lock);
    b->stopping = true;
    pthread_cond_broadcast(&b->mqtt.wake);
    pthread_cond_broadcast(&b->nats.wake);
    pthread_mutex_unlock(&b->lock);
    if (b->wake_pipe[1] >= 0 && write(b->wake_pipe[1], "", 1) < 0) {
        /* full: the thread has wake-ups to read already */
    }
    queue *queues[2] = {&b->mqtt, &b->nats};
    for (int i = 0; i < 2; i++) {
        if (queues[i]->thread_started)
            pthread_join(queues[i]->thread, NULL);
        queues[i]->thread_started = false;
    }
}

int svc_broker_open(const svc_broker_params *params, svc_broker **out, char *error, size_t size)
{
    if (error && size)
        error[0] = '\0';
    if (!out)
        return svc_fail(error, size, "svc_broker_open: out is NULL");
    *out = NULL;
    if (!params)
        return svc_fail(error, size, "svc_broker_open: params is NULL");
    svc_broker *b = calloc(1, sizeof *b);
    if (!b)
        return svc_fail(error, size, "no memory");
    b->logger = params->logger;
    b->wake_pipe[0] = b->wake_pipe[1] = -1;
    b->nats_complained_at = -1e9;
    pthread_mutex_init(&b->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&b->drained, &attr);
    pthread_condattr_destroy(&attr);
    int spool = 0;
    if (configure(b, params, error, size) != 0 || (b->spool && (spool = spool_load(b, error, size)) < 0) ||
        start_clients(b, error, size) != 0) {
        stop_threads(b);
        release(b);
        return -1;
    }
    /* the messages are in memory now: close writes a new spool when any are left */
    if (spool == 1 && unlink(b->spool) != 0)
        svc_log(&b->logger, GLCV_LOG_WARN, "spool '%s': cannot remove after reading: %s", b->spool, strerror(errno));
    *out = b;
    return 0;
}

int svc_broker_publish(svc_broker *b, const char *topic, const char *id, const char *payload, size_t length)
{
    if (!b)
        return -1;
    const char *problem = NULL;
    if ((problem = name_problem(topic)) != NULL) {
        svc_log(&b->logger, GLCV_LOG_ERROR, "publish: topic '%s' %s", topic ? topic : "(null)", problem);
        return -1;
    }
    if ((problem = id_problem(id)) != NULL) {
        svc_log(&b->logger, GLCV_LOG_ERROR, "publish: id '%s' %s", id ? id : "(null)", problem);
        return -1;
    }
    if ((!payload && length > 0) || length > INT_MAX) {
        svc_log(&b->logger, GLCV_LOG_ERROR, "publish: message '%s': the payload is %s", id, payload ? "over 2 GiB" : "NULL");
        return -1;
    }
    node *m = NULL, *n = NULL;
    if ((b->mqtt.enabled && !(m = node_new(&b->mqtt, topic, id, payload, length))) ||
        (b->nats.enabled && !(n = node_new(&b->nats, topic, id, payload, length)))) {
        free(m);
        svc_log(&b->logger, GLCV_LOG_ERROR, "publish: no memory for message '%s'", id);
        return -1;
    }
    char notes[2][TEXT_BYTES];
    bool noted[2] = {false, false};
    pthread_mutex_lock(&b->lock);
    if (b->stopping) {
        pthread_mutex_unlock(&b->lock);
        free(m);
        free(n);
        return -1;
    }
    if (m) {
        queue_push(b, &b->mqtt, m);
        noted[0] = drop_note(b, &b->mqtt, false, notes[0]);
    }
    if (n) {
        queue_push(b, &b->nats, n);
        noted[1] = drop_note(b, &b->nats, false, notes[1]);
        pthread_cond_signal(&b->nats.wake);
    }
    pthread_mutex_unlock(&b->lock);
    if (m && write(b->wake_pipe[1], "", 1) < 0) {
        /* full: the MQTT thread has wake-ups to read already */
    }
    for (int i = 0; i < 2; i++)
        if (noted[i])
            svc_log(&b->logger, GLCV_LOG_WARN, "%s", notes[i]);
    return 0;
}

static void copy_stats(const queue *q, svc_broker_stats *s)
{
    if (!s)
        return;
    memset(s, 0, sizeof *s);
    if (!q || !q->enabled)
        return;
    s->enabled = 1;
    s->connected = q->connected;
    s->queued = q->length;
    s->published = q->published;
    s->acked = q->acked;
    s->dropped = q->dropped;
    s->reconnects = q->reconnects;
}

void svc_broker_get_stats(svc_broker *b, svc_broker_stats *mqtt, svc_broker_stats *nats)
{
    if (!b) {
        copy_stats(NULL, mqtt);
        copy_stats(NULL, nats);
        return;
    }
    pthread_mutex_lock(&b->lock);
    copy_stats(&b->mqtt, mqtt);
    copy_stats(&b->nats, nats);
    pthread_mutex_unlock(&b->lock);
}

int svc_broker_flush(svc_broker *b, double timeout_s)
{
    if (!b)
        return 0;
    struct timespec until = deadline_in(timeout_s);
    pthread_mutex_lock(&b->lock);
    while (b->mqtt.length + b->nats.length > 0 && pthread_cond_timedwait(&b->drained, &b->lock, &until) != ETIMEDOUT)
        ;
    int rc = b->mqtt.length + b->nats.length > 0;
    pthread_mutex_unlock(&b->lock);
    return rc;
}

void svc_broker_close(svc_broker **pb)
{
    if (!pb || !*pb)
        return;
    svc_broker *b = *pb;
    *pb = NULL;
    stop_threads(b);
    queue *queues[2] = {&b->mqtt, &b->nats};
    for (int i = 0; i < 2; i++) {
        char note[TEXT_BYTES];
        if (drop_note(b, queues[i], true, note))
            svc_log(&b->logger, GLCV_LOG_WARN, "%s", note);
    }
    if (b->spool)
        spool_save(b);
    else if (b->mqtt.length + b->nats.length > 0)
        svc_log(&b->logger, GLCV_LOG_WARN, "closing with %ld mqtt and %ld nats messages not acknowledged (no spool): lost",
            b->mqtt.length, b->nats.length);
    release(b);
}
