/* The brokers' outbox (tools/service/broker.c) against real brokers on the loopback: Debian's
 * mosquitto and nats-server, started here in a temporary folder on free ports (skipped when either
 * is missing). Each case checks what the consumers received, message id by message id:
 *   delivery  500 messages reach an MQTT subscriber (each at least once) and the JetStream stream
 *             (each exactly once, in order);
 *   restart   the brokers stop after 100 of 200 messages and start again: every message arrives,
 *             exactly once in the stream, and the outbox counts a reconnection;
 *   full      no broker: a queue of 10 keeps the newest 10 of 25 and counts 15 dropped;
 *   spool     no broker: close writes the 20 messages per broker to the spool; the next open, with
 *             the brokers up, delivers them (a binary payload too) and removes the spool; a corrupt
 *             line fails open with its line number;
 *   params    malformed URLs and settings fail open with a one-line error.
 * The library prints nothing: the test's stdout and stderr go to a file while the cases run, and
 * that file must stay empty. */
#define _GNU_SOURCE

#include "broker.h"
#include "serve_testlib.h"

#include <mosquitto.h>
#include <nats/nats.h>

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_IDS = 1000 };

static st_server mqtt_server = {ST_MOSQUITTO, 0, 0}, nats_server = {ST_NATS, 0, 0};

/* the outbox's log, kept to show on failure; its queue-full warnings counted */
static const glcv_logger logger = {st_log, NULL, GLCV_LOG_DEBUG};

/* ---- The consumers ---------------------------------------------------------------------------- */

/* Message ids are a letter and a number ("m17"): counts[number] per consumer. */
static int id_number(const char *text, size_t length, char letter)
{
    if (length < 2 || text[0] != letter)
        return -1;
    int n = 0;
    size_t i = 1;
    for (; i < length && text[i] >= '0' && text[i] <= '9' && n < MAX_IDS; i++)
        n = n * 10 + (text[i] - '0');
    return i > 1 && n < MAX_IDS ? n : -1;
}

typedef struct subscriber {
    struct mosquitto *mosq;
    pthread_mutex_t lock;
    int counts[MAX_IDS];
    char letter;
    char topic[64]; /* expected topic of every message */
    int wrong_topic, subscribed;
} subscriber;

static void sub_on_connect(struct mosquitto *mosq, void *user, int rc)
{
    subscriber *s = user;
    char filter[80];
    snprintf(filter, sizeof filter, "%.*s/#", (int)(strchr(s->topic, '/') - s->topic), s->topic);
    if (rc == 0)
        mosquitto_subscribe(mosq, NULL, filter, 1);
}

static void sub_on_subscribe(struct mosquitto *mosq, void *user, int mid, int count, const int *granted)
{
    (void)mosq, (void)mid;
    subscriber *s = user;
    pthread_mutex_lock(&s->lock);
    s->subscribed = count == 1 && granted[0] == 1;
    pthread_mutex_unlock(&s->lock);
}

/* The payloads start with the message id ("m17 ..."): MQTT 3.1.1 has no headers. */
static void sub_on_message(struct mosquitto *mosq, void *user, const struct mosquitto_message *m)
{
    (void)mosq;
    subscriber *s = user;
    int n = id_number(m->payload, (size_t)m->payloadlen, s->letter);
    pthread_mutex_lock(&s->lock);
    if (n >= 0)
        s->counts[n]++;
    if (strcmp(m->topic, s->topic) != 0)
        s->wrong_topic++;
    pthread_mutex_unlock(&s->lock);
}

/* A subscriber with a persistent session (clean_session false) that reconnects by itself. */
static bool subscriber_start(subscriber *s, const char *client_id, const char *topic, char letter)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->lock, NULL);
    s->letter = letter;
    snprintf(s->topic, sizeof s->topic, "%s", topic);
    s->mosq = mosquitto_new(client_id, false, s);
    if (!s->mosq)
        return false;
    mosquitto_connect_callback_set(s->mosq, sub_on_connect);
    mosquitto_subscribe_callback_set(s->mosq, sub_on_subscribe);
    mosquitto_message_callback_set(s->mosq, sub_on_message);
    mosquitto_reconnect_delay_set(s->mosq, 1, 1, false);
    if (mosquitto_connect(s->mosq, "127.0.0.1", mqtt_server.port, 30) != MOSQ_ERR_SUCCESS ||
        mosquitto_loop_start(s->mosq) != MOSQ_ERR_SUCCESS)
        return false;
    for (double until = st_now() + 5; st_now() < until; st_sleep(0.01)) {
        pthread_mutex_lock(&s->lock);
        int ok = s->subscribed;
        pthread_mutex_unlock(&s->lock);
        if (ok)
            return true;
    }
    return false;
}

static void subscriber_stop(subscriber *s)
{
    if (s->mosq) {
        mosquitto_disconnect(s->mosq);
        mosquitto_loop_stop(s->mosq, false);
        mosquitto_destroy(s->mosq);
    }
    s->mosq = NULL;
    pthread_mutex_destroy(&s->lock);
}

/* Waits (at most `seconds`) until every id below n has come at least once; returns how many have. */
static int subscriber_wait(subscriber *s, int n, double seconds)
{
    int have = 0;
    for (double until = st_now() + seconds;; st_sleep(0.02)) {
        have = 0;
        pthread_mutex_lock(&s->lock);
        for (int i = 0; i < n; i++)
            have += s->counts[i] > 0;
        pthread_mutex_unlock(&s->lock);
        if (have == n || st_now() > until)
            return have;
    }
}

/* Prints the ids below n counted `missing` (0) or more than once, up to a few of each. */
static void show_ids(const char *who, const int *counts, int n, char letter, bool once)
{
    char missing[400] = "", repeated[400] = "";
    int n_missing = 0, n_repeated = 0;
    for (int i = 0; i < n; i++) {
        char word[40];
        if (counts[i] == 0 && ++n_missing <= 20) {
            snprintf(word, sizeof word, " %c%d", letter, i);
            strncat(missing, word, sizeof missing - strlen(missing) - 1);
        }
        if (once && counts[i] > 1 && ++n_repeated <= 20) {
            snprintf(word, sizeof word, " %c%d(x%d)", letter, i, counts[i]);
            strncat(repeated, word, sizeof repeated - strlen(repeated) - 1);
        }
    }
    if (n_missing)
        fprintf(st_out, "  %s: %d missing:%s%s\n", who, n_missing, missing, n_missing > 20 ? " ..." : "");
    if (n_repeated)
        fprintf(st_out, "  %s: %d duplicated:%s%s\n", who, n_repeated, repeated, n_repeated > 20 ? " ..." : "");
}

static int subscriber_check(subscriber *s, int n, double seconds, int line)
{
    int have = subscriber_wait(s, n, seconds);
    pthread_mutex_lock(&s->lock);
    int wrong = s->wrong_topic;
    if (have != n) {
        st_fail(line, "MQTT subscriber: %d of %d ids arrived", have, n);
        show_ids("MQTT", s->counts, n, s->letter, false);
    }
    if (wrong)
        st_fail(line, "MQTT subscriber: %d messages not on topic '%s'", wrong, s->topic);
    pthread_mutex_unlock(&s->lock);
    return have == n && !wrong ? 0 : -1;
}

/* Reads the whole stream: every id below n exactly once, in the order of the ids within each
 * class of id modulo `classes` (1: all in order; a publishing thread's ids are one class).
 * `payloads` (optional): each id's expected payload, `lengths` their lengths. */
static int stream_check(const char *stream, const char *subject, int n, char letter, int classes,
                        const char **payloads, const size_t *lengths, int line)
{
    char url[64];
    snprintf(url, sizeof url, "nats://127.0.0.1:%d", nats_server.port);
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsStreamInfo *info = NULL;
    int counts[MAX_IDS] = {0}, bad = 0, disorder = 0, last[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    natsStatus s = natsConnection_ConnectTo(&nc, url);
    if (s == NATS_OK)
        s = natsConnection_JetStream(&js, nc, NULL);
    if (s == NATS_OK)
        s = js_GetStreamInfo(&info, js, stream, NULL, NULL);
    if (s != NATS_OK) {
        st_fail(line, "stream %s: cannot read it: %s", stream, natsStatus_GetText(s));
    } else {
        for (uint64_t seq = info->State.FirstSeq; info->State.Msgs && seq <= info->State.LastSeq; seq++) {
            natsMsg *msg = NULL;
            const char *id = NULL;
            if (js_GetMsg(&msg, js, stream, seq, NULL, NULL) != NATS_OK ||
                natsMsgHeader_Get(msg, "Nats-Msg-Id", &id) != NATS_OK) {
                bad++;
                natsMsg_Destroy(msg);
                continue;
            }
            int k = id_number(id, strlen(id), letter);
            const char *data = natsMsg_GetData(msg);
            size_t length = (size_t)natsMsg_GetDataLength(msg);
            if (k < 0 || strcmp(natsMsg_GetSubject(msg), subject) != 0 ||
                (payloads && (length != lengths[k] || memcmp(data, payloads[k], length) != 0))) {
                if (++bad <= 3)
                    fprintf(st_out, "  stream %s seq %llu: id '%s' subject '%s' (payload %zu bytes) unexpected\n",
                            stream, (unsigned long long)seq, id, natsMsg_GetSubject(msg), length);
            } else {
                counts[k]++;
                disorder += k < last[k % classes];
                last[k % classes] = k;
            }
            natsMsg_Destroy(msg);
        }
        int once = 0;
        for (int i = 0; i < n; i++)
            once += counts[i] == 1;
        ST_CHECK(once == n && info->State.Msgs == (uint64_t)n,
              "stream %s: %llu messages, %d of %d ids exactly once", stream, (unsigned long long)info->State.Msgs,
              once, n);
        if (once != n)
            show_ids("JetStream", counts, n, letter, true);
        ST_CHECK(bad == 0, "stream %s: %d unexpected messages", stream, bad);
        ST_CHECK(disorder == 0, "stream %s: %d messages out of order", stream, disorder);
    }
    jsStreamInfo_Destroy(info);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return s == NATS_OK ? 0 : -1;
}

/* ---- The outbox ------------------------------------------------------------------------------- */

static svc_broker_params params_for(const char *prefix, const char *stream, int mqtt_port, int nats_port, char *mqtt_url,
                                    char *nats_url)
{
    sprintf(mqtt_url, "mqtt://127.0.0.1:%d", mqtt_port);
    sprintf(nats_url, "nats://127.0.0.1:%d", nats_port);
    svc_broker_params p = {0};
    p.mqtt_url = mqtt_url;
    p.nats_url = nats_url;
    p.mqtt_client_id = prefix;
    p.mqtt_prefix = prefix;
    p.nats_prefix = prefix;
    p.nats_stream = stream;
    p.logger = logger;
    return p;
}

static svc_broker *open_or_fail(const svc_broker_params *p, int line)
{
    svc_broker *b = NULL;
    char error[256] = "";
    if (svc_broker_open(p, &b, error, sizeof error) != 0 || !b)
        st_fail(line, "svc_broker_open: %s", error);
    return b;
}

static void publish_range(svc_broker *b, char letter, int from, int to, int line)
{
    for (int i = from; i < to; i++) {
        char id[16], payload[64];
        snprintf(id, sizeof id, "%c%d", letter, i);
        int n = snprintf(payload, sizeof payload, "%s {\"event\":\"motion\",\"n\":%d}", id, i);
        if (svc_broker_publish(b, "cam/gate/motion", id, payload, (size_t)n) != 0) {
            st_fail(line, "svc_broker_publish %s failed", id);
            return;
        }
    }
}

static void stats(svc_broker *b, svc_broker_stats *m, svc_broker_stats *n)
{
    svc_broker_get_stats(b, m, n);
}

/* Waits (at most `seconds`) until both brokers' `connected` is `want`. */
static bool wait_connected(svc_broker *b, int want, double seconds)
{
    svc_broker_stats m, n;
    for (double until = st_now() + seconds;; st_sleep(0.02)) {
        stats(b, &m, &n);
        if ((m.connected == want && n.connected == want) || st_now() > until)
            return m.connected == want && n.connected == want;
    }
}

static void case_delivery(void)
{
    double started = st_now();
    st_log_reset();
    int before = st_failures;
    char mu[64], nu[64];
    subscriber sub;
    ST_CHECK(subscriber_start(&sub, "test-sub-t1", "t1/cam/gate/motion", 'm'), "MQTT subscriber did not start");
    svc_broker_params p = params_for("t1", "T1", mqtt_server.port, nats_server.port, mu, nu);
    svc_broker *b = open_or_fail(&p, __LINE__);
    if (b) {
        publish_range(b, 'm', 0, 500, __LINE__);
        ST_CHECK(svc_broker_flush(b, 15) == 0, "flush: the queues did not drain in 15 s");
        /* the caller repeats ten ids: JetStream keeps the first of each (Nats-Msg-Id) */
        publish_range(b, 'm', 0, 10, __LINE__);
        ST_CHECK(svc_broker_flush(b, 5) == 0, "flush: the repeats were not acknowledged in 5 s");
        svc_broker_stats m, n;
        stats(b, &m, &n);
        ST_CHECK(m.enabled && n.enabled && m.connected && n.connected, "stats: enabled %d %d, connected %d %d",
                 m.enabled, n.enabled, m.connected, n.connected);
        ST_CHECK(m.acked == 510 && n.acked == 510 && m.queued == 0 && n.queued == 0,
              "stats: acked %ld (mqtt) %ld (nats), queued %ld %ld; want 510 and 0", m.acked, n.acked, m.queued,
              n.queued);
        ST_CHECK(m.published >= 510 && n.published >= 510 && m.dropped == 0 && n.dropped == 0 && m.reconnects == 0 &&
                  n.reconnects == 0,
              "stats: published %ld %ld, dropped %ld %ld, reconnects %ld %ld", m.published, n.published, m.dropped,
              n.dropped, m.reconnects, n.reconnects);
        subscriber_check(&sub, 500, 5, __LINE__);
        stream_check("T1", "t1.cam.gate.motion", 500, 'm', 1, NULL, NULL, __LINE__);
        svc_broker_close(&b);
        ST_CHECK(b == NULL, "close did not set the pointer to NULL");
    }
    subscriber_stop(&sub);
    if (st_failures != before)
        st_log_show("the outbox's last log lines", 64);
    fprintf(st_out, "%s delivery: 500 messages (and 10 repeated) to both brokers (%.1f s)\n",
            st_failures == before ? "ok  " : "FAIL", st_now() - started);
}

typedef struct publisher {
    svc_broker *b;
    int first, failed;
} publisher;

/* Ids first, first + 4, first + 8 ... below 400: four of these share the outbox. */
static void *publish_every_fourth(void *arg)
{
    publisher *w = arg;
    for (int i = w->first; i < 400; i += 4) {
        char id[16];
        snprintf(id, sizeof id, "p%d", i);
        w->failed += svc_broker_publish(w->b, "cam/yard/person", id, id, strlen(id)) != 0;
    }
    return NULL;
}

static void case_threads(void)
{
    double started = st_now();
    st_log_reset();
    int before = st_failures;
    char mu[64], nu[64];
    subscriber sub;
    ST_CHECK(subscriber_start(&sub, "test-sub-t5", "t5/cam/yard/person", 'p'), "MQTT subscriber did not start");
    svc_broker_params p = params_for("t5", "T5", mqtt_server.port, nats_server.port, mu, nu);
    svc_broker *b = open_or_fail(&p, __LINE__);
    if (b) {
        publisher w[4];
        pthread_t threads[4];
        for (int i = 0; i < 4; i++) {
            w[i] = (publisher){b, i, 0};
            pthread_create(&threads[i], NULL, publish_every_fourth, &w[i]);
        }
        for (int i = 0; i < 4; i++) {
            pthread_join(threads[i], NULL);
            ST_CHECK(w[i].failed == 0, "thread %d: %d publishes failed", i, w[i].failed);
        }
        ST_CHECK(svc_broker_flush(b, 10) == 0, "flush: the queues did not drain in 10 s");
        subscriber_check(&sub, 400, 5, __LINE__);
        stream_check("T5", "t5.cam.yard.person", 400, 'p', 4, NULL, NULL, __LINE__);
        svc_broker_close(&b);
    }
    subscriber_stop(&sub);
    if (st_failures != before)
        st_log_show("the outbox's last log lines", 64);
    fprintf(st_out, "%s threads: 4 threads publish 400 messages (%.1f s)\n", st_failures == before ? "ok  " : "FAIL",
            st_now() - started);
}

static void case_restart(void)
{
    double started = st_now();
    st_log_reset();
    int before = st_failures;
    char mu[64], nu[64];
    subscriber sub;
    ST_CHECK(subscriber_start(&sub, "test-sub-t2", "t2/cam/gate/motion", 'r'), "MQTT subscriber did not start");
    svc_broker_params p = params_for("t2", "T2", mqtt_server.port, nats_server.port, mu, nu);
    svc_broker *b = open_or_fail(&p, __LINE__);
    if (b) {
        svc_broker_stats m, n;
        ST_CHECK(wait_connected(b, 1, 5), "the outbox did not connect in 5 s");
        /* 60 acknowledged, then 40 more with no wait: some of those are in flight when the brokers go */
        publish_range(b, 'r', 0, 60, __LINE__);
        ST_CHECK(svc_broker_flush(b, 5) == 0, "flush: the first 60 were not acknowledged in 5 s");
        publish_range(b, 'r', 60, 100, __LINE__);
        st_server_stop(&mqtt_server, SIGTERM);
        st_server_stop(&nats_server, SIGTERM);
        ST_CHECK(wait_connected(b, 0, 5), "stats.connected did not drop to 0 in 5 s with the brokers stopped");
        publish_range(b, 'r', 100, 200, __LINE__);
        stats(b, &m, &n);
        ST_CHECK(m.queued >= 100 && n.queued >= 100, "stats while down: queued %ld (mqtt) %ld (nats); want >= 100",
              m.queued, n.queued);
        /* down long enough for a refused reconnection attempt (the first comes after 1 s) */
        st_sleep(1.3);
        ST_CHECK(st_server_start(&mqtt_server, 5) && st_server_start(&nats_server, 5),
                 "the brokers did not start again");
        ST_CHECK(svc_broker_flush(b, 20) == 0, "flush: the queues did not drain in 20 s after the restart");
        stats(b, &m, &n);
        ST_CHECK(m.reconnects >= 1 && n.reconnects >= 1 && m.connected && n.connected,
              "stats: reconnects %ld (mqtt) %ld (nats), connected %d %d", m.reconnects, n.reconnects, m.connected,
              n.connected);
        ST_CHECK(m.acked >= 200 && n.acked >= 200 && m.queued == 0 && n.queued == 0,
              "stats: acked %ld %ld queued %ld %ld", m.acked, n.acked, m.queued, n.queued);
        subscriber_check(&sub, 200, 8, __LINE__);
        stream_check("T2", "t2.cam.gate.motion", 200, 'r', 1, NULL, NULL, __LINE__);
        fprintf(st_out, "     restart: published %ld (mqtt) %ld (nats) for 200 messages, reconnects %ld %ld\n",
                m.published, n.published, m.reconnects, n.reconnects);
        svc_broker_close(&b);
    }
    subscriber_stop(&sub);
    if (st_failures != before)
        st_log_show("the outbox's last log lines", 64);
    fprintf(st_out, "%s restart: brokers stopped after 100 of 200 messages and started again (%.1f s)\n",
            st_failures == before ? "ok  " : "FAIL", st_now() - started);
}

static void case_full(int closed_port)
{
    double started = st_now();
    st_log_reset();
    int before = st_failures;
    char mu[64], nu[64];
    svc_broker_params p = params_for("t3", "T3", closed_port, closed_port, mu, nu);
    p.queue_max = 10;
    svc_broker *b = open_or_fail(&p, __LINE__);
    if (b) {
        publish_range(b, 'q', 0, 25, __LINE__);
        svc_broker_stats m, n;
        stats(b, &m, &n);
        ST_CHECK(m.dropped == 15 && n.dropped == 15 && m.queued == 10 && n.queued == 10,
              "stats: dropped %ld (mqtt) %ld (nats), queued %ld %ld; want 15 and 10", m.dropped, n.dropped, m.queued,
              n.queued);
        ST_CHECK(m.connected == 0 && n.connected == 0 && m.acked == 0 && n.acked == 0,
                 "stats: connected %d %d acked %ld %ld", m.connected, n.connected, m.acked, n.acked);
        int warnings = st_log_watched();
        ST_CHECK(warnings >= 1 && warnings <= 2,
                 "%d queue-full warnings for 25 messages in well under 1 s; want 1 or 2", warnings);
        ST_CHECK(svc_broker_flush(b, 0.2) == 1, "flush with no broker did not time out");
        ST_CHECK(svc_broker_publish(b, "/cam", "x1", "", 0) == -1, "publish accepted the topic '/cam'");
        ST_CHECK(svc_broker_publish(b, "cam/+", "x1", "", 0) == -1, "publish accepted the topic 'cam/+'");
        ST_CHECK(svc_broker_publish(b, "cam", "", "", 0) == -1, "publish accepted the id ''");
        double t0 = st_now();
        svc_broker_close(&b);
        ST_CHECK(st_now() - t0 < 3, "close took %.1f s with no broker", st_now() - t0);
    }
    if (st_failures != before)
        st_log_show("the outbox's last log lines", 64);
    fprintf(st_out, "%s full: queue of 10, 25 messages, no broker (%.1f s)\n", st_failures == before ? "ok  " : "FAIL",
            st_now() - started);
}

static long count_in_file(const char *path, const char *needle, long *lines)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    long n = 0;
    *lines = 0;
    while (f && fgets(line, sizeof line, f)) {
        (*lines)++;
        n += strstr(line, needle) != NULL;
    }
    if (f)
        fclose(f);
    return f ? n : -1;
}

static void case_spool(int closed_port)
{
    double started = st_now();
    st_log_reset();
    int before = st_failures;
    char mu[64], nu[64], spool[320];
    snprintf(spool, sizeof spool, "%s/outbox.spool", st_dir);
    /* s7 has a binary payload (a NUL, bytes that are not UTF-8): the spool keeps it in base64 */
    static char texts[20][64];
    const char *payloads[20];
    size_t lengths[20];
    for (int i = 0; i < 20; i++) {
        lengths[i] = (size_t)snprintf(texts[i], sizeof texts[i], "s%d {\"event\":\"line \\\"%d\\\"\"} \xc3\xa9", i, i);
        payloads[i] = texts[i];
    }
    memcpy(texts[7] + 3, "\0\xff\xfe\x01", 4);

    svc_broker_params p = params_for("t4", "T4", closed_port, closed_port, mu, nu);
    p.spool = spool;
    svc_broker *b = open_or_fail(&p, __LINE__);
    if (b) {
        for (int i = 0; i < 20; i++) {
            char id[16];
            snprintf(id, sizeof id, "s%d", i);
            ST_CHECK(svc_broker_publish(b, "cam/gate/motion", id, payloads[i], lengths[i]) == 0, "publish %s", id);
        }
        svc_broker_close(&b);
    }
    long lines = 0;
    long mqtt_lines = count_in_file(spool, "\"broker\":\"mqtt\"", &lines);
    long nats_lines = count_in_file(spool, "\"broker\":\"nats\"", &lines);
    ST_CHECK(lines == 40 && mqtt_lines == 20 && nats_lines == 20,
          "spool after close: %ld lines, %ld mqtt, %ld nats; want 40, 20, 20", lines, mqtt_lines, nats_lines);

    subscriber sub;
    ST_CHECK(subscriber_start(&sub, "test-sub-t4", "t4/cam/gate/motion", 's'), "MQTT subscriber did not start");
    p = params_for("t4", "T4", mqtt_server.port, nats_server.port, mu, nu);
    p.spool = spool;
    b = open_or_fail(&p, __LINE__);
    if (b) {
        ST_CHECK(access(spool, F_OK) != 0, "the spool is still there after open read it");
        ST_CHECK(svc_broker_flush(b, 10) == 0, "flush: the spooled messages were not delivered in 10 s");
        svc_broker_stats m, n;
        stats(b, &m, &n);
        ST_CHECK(m.acked == 20 && n.acked == 20, "stats: acked %ld (mqtt) %ld (nats); want 20", m.acked, n.acked);
        subscriber_check(&sub, 20, 5, __LINE__);
        stream_check("T4", "t4.cam.gate.motion", 20, 's', 1, payloads, lengths, __LINE__);
        svc_broker_close(&b);
        ST_CHECK(access(spool, F_OK) != 0, "a spool was written with nothing left to send");
    }
    subscriber_stop(&sub);

    /* a corrupt line: open fails naming it, and leaves the spool alone */
    st_write_file(
        spool,
        "{\"broker\":\"nats\",\"topic\":\"a/b\",\"id\":\"c1\",\"payload\":\"x\"}\n{\"broker\":\"nats\",\"topic\n");
    char error[256] = "";
    static char sentinel;
    b = (svc_broker *)&sentinel; /* open must set it to NULL */
    p = params_for("t4", "T4", closed_port, closed_port, mu, nu);
    p.spool = spool;
    int rc = svc_broker_open(&p, &b, error, sizeof error);
    ST_CHECK(rc == -1 && b == NULL, "open with a corrupt spool: %d (want -1), out %s", rc, b ? "set" : "NULL");
    ST_CHECK(strstr(error, "line 2") && !strchr(error, '\n'),
             "open with a corrupt spool: error '%s' does not name line 2", error);
    ST_CHECK(access(spool, F_OK) == 0, "a spool that could not be read was removed");
    if (rc == 0)
        svc_broker_close(&b);
    unlink(spool);
    if (st_failures != before)
        st_log_show("the outbox's last log lines", 64);
    fprintf(st_out, "%s spool: 20 messages kept at close with no broker, delivered at the next open (%.1f s)\n",
            st_failures == before ? "ok  " : "FAIL", st_now() - started);
}

static void case_params(void)
{
    double started = st_now();
    st_log_reset();
    int before = st_failures;
    static const struct {
        const char *mqtt, *nats, *mqtt_prefix, *nats_prefix, *stream;
        int queue_max;
        const char *says;
    } bad[] = {
        {"x", NULL, NULL, NULL, NULL, 0, "mqtt url 'x'"},
        {"http://h", NULL, NULL, NULL, NULL, 0, "mqtt url 'http://h'"},
        {"mqtt://", NULL, NULL, NULL, NULL, 0, "mqtt url 'mqtt://'"},
        {"mqtt://h:0", NULL, NULL, NULL, NULL, 0, "mqtt url 'mqtt://h:0'"},
        {"mqtt://h:70000", NULL, NULL, NULL, NULL, 0, "mqtt url 'mqtt://h:70000'"},
        {"mqtt://h:12ab", NULL, NULL, NULL, NULL, 0, "mqtt url 'mqtt://h:12ab'"},
        {"mqtt://h h", NULL, NULL, NULL, NULL, 0, "mqtt url 'mqtt://h h'"},
        {NULL, "nats//h", NULL, NULL, NULL, 0, "nats url 'nats//h'"},
        {NULL, "nats://[::1", NULL, NULL, NULL, 0, "nats url 'nats://[::1'"},
        {"mqtt://h", NULL, "a/+", NULL, NULL, 0, "mqtt prefix 'a/+'"},
        {NULL, "nats://h", NULL, "a..b", NULL, 0, "nats prefix 'a..b'"},
        {NULL, "nats://h", NULL, NULL, "A.B", 0, "nats stream 'A.B'"},
        {"mqtt://h", NULL, NULL, NULL, NULL, -1, "queue_max -1"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        svc_broker_params p = {0};
        p.mqtt_url = bad[i].mqtt;
        p.nats_url = bad[i].nats;
        p.mqtt_prefix = bad[i].mqtt_prefix;
        p.nats_prefix = bad[i].nats_prefix;
        p.nats_stream = bad[i].stream;
        p.queue_max = bad[i].queue_max;
        p.logger = logger;
        svc_broker *b = NULL;
        char error[256] = "";
        int rc = svc_broker_open(&p, &b, error, sizeof error);
        ST_CHECK(rc == -1 && b == NULL && strstr(error, bad[i].says) && !strchr(error, '\n'),
              "open(%s, %s): %d, error '%s'; want -1 and an error with \"%s\"", bad[i].mqtt ? bad[i].mqtt : "-",
              bad[i].nats ? bad[i].nats : "-", rc, error, bad[i].says);
        svc_broker_close(&b);
    }
    /* and a good one with an IPv6 address and default ports: opens (nothing listens, no matter) */
    svc_broker_params p = {0};
    p.mqtt_url = "mqtt://[::1]";
    p.nats_url = "nats://localhost";
    p.logger = logger;
    svc_broker *b = NULL;
    char error[256] = "";
    ST_CHECK(svc_broker_open(&p, &b, error, sizeof error) == 0 && b, "open(mqtt://[::1], nats://localhost): %s", error);
    svc_broker_close(&b);
    svc_broker_close(&b); /* &NULL */
    fprintf(st_out, "%s params: malformed URLs and settings (%.1f s)\n", st_failures == before ? "ok  " : "FAIL",
            st_now() - started);
}

/* ---- Main ------------------------------------------------------------------------------------- */

int main(void)
{
    if (access(ST_MOSQUITTO_BIN, X_OK) != 0 || access(ST_NATS_BIN, X_OK) != 0) {
        printf("skipped: %s or %s is missing\n", ST_MOSQUITTO_BIN, ST_NATS_BIN);
        return 77;
    }
    if (st_begin("broker") != 0)
        return 1;
    st_log_watch(GLCV_LOG_WARN, "queue is full");
    mosquitto_lib_init();
    mqtt_server.port = st_free_port();
    nats_server.port = st_free_port();
    int closed_port = st_free_port();
    if (mqtt_server.port < 0 || nats_server.port < 0 || closed_port < 0)
        st_fail(__LINE__, "no free port on the loopback");
    else if (!st_server_start(&mqtt_server, 5) || !st_server_start(&nats_server, 5))
        st_fail(__LINE__, "the brokers did not start");
    if (st_failures == 0) {
        case_params();
        case_full(closed_port);
        case_delivery();
        case_threads();
        case_restart();
        case_spool(closed_port);
    }
    st_server_stop(&mqtt_server, SIGTERM);
    st_server_stop(&nats_server, SIGTERM);
    mosquitto_lib_cleanup();
    /* no nats_Close(): the service never calls it (another outbox may open later), and libnats'
     * global state stays reachable, which the leak check accepts */
    return st_end();
}
