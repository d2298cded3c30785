/* Events to message brokers for 'glcv serve': MQTT (libmosquitto) and NATS JetStream (libnats),
 * either or both, each with its own bounded queue and its own thread.
 *
 * Delivery is at-least-once. A message stays in a broker's queue until that broker acknowledges
 * it: MQTT QoS 1 (PUBACK), NATS through JetStream (the stream's PubAck). While a broker is away
 * (not started yet, restarted, unreachable) its messages wait in the queue and the connection is
 * retried with back-off (1, 2, 4 ... 10 s); on reconnection every message not acknowledged is sent
 * again, so a consumer may see a message twice: each message carries an id, and JetStream drops a
 * repeat of an id within its duplicate window (the Nats-Msg-Id header). When a queue is full the
 * oldest message of that queue is dropped and counted (stats: dropped) and a warning is logged.
 *
 * At close, messages not yet acknowledged are written to the spool file (when one is given):
 * one JSON line each, written to a temporary file in the same folder and renamed over the spool,
 * so a spool is never half-written. At open, a spool is read and its messages are queued first.
 *
 * Topics are '/'-separated ("cameras/gate/motion"); MQTT publishes PREFIX/TOPIC, NATS
 * PREFIX.TOPIC with every '/' as '.'. The JetStream stream (created when missing) takes the
 * subjects PREFIX.>. Thread-safe: publish from any thread. Messages go through the logger only. */
#ifndef GLCV_SERVICE_BROKER_H
#define GLCV_SERVICE_BROKER_H

#include <glcv/core.h>

#include <stddef.h>

typedef struct svc_broker svc_broker;

typedef struct svc_broker_params {
    const char *mqtt_url;       /* "mqtt://HOST[:PORT]" (port 1883); NULL: no MQTT */
    const char *mqtt_client_id; /* NULL: "glcv-HOSTNAME-PID" */
    const char *mqtt_prefix;    /* NULL: "glcv" */
    const char *nats_url;       /* "nats://HOST[:PORT]" (port 4222); NULL: no NATS */
    const char *nats_prefix;    /* NULL: "glcv" */
    const char *nats_stream;    /* the JetStream stream; NULL: "GLCV_EVENTS" */
    int nats_replicas;          /* the stream's replicas when it is created; 0: 1 */
    int queue_max;              /* messages a broker's queue holds; 0: 10000 */
    const char *spool;          /* NULL: none */
    glcv_logger logger;
} svc_broker_params;

typedef struct svc_broker_stats {
    int enabled;      /* the broker is configured */
    int connected;    /* connected now */
    long queued;      /* messages waiting for an acknowledgement (the backlog) */
    long published;   /* messages sent, resends included */
    long acked;       /* messages acknowledged */
    long dropped;     /* messages dropped because the queue was full */
    long reconnects;  /* connections made after the first */
} svc_broker_stats;

/* Opens the configured brokers' clients and starts their threads; an unreachable broker is no
 * error (its messages wait). Returns 0, or -1 with a one-line reason in `error` (a malformed URL,
 * an unreadable spool, no memory). */
int svc_broker_open(const svc_broker_params *params, svc_broker **out, char *error, size_t size);

/* Queues a message for every configured broker. `topic`: '/'-separated, no leading '/';
 * `id`: unique per message (the consumers' key for removing repeats). Returns 0, or -1 when the
 * broker is closing or there is no memory. */
int svc_broker_publish(svc_broker *b, const char *topic, const char *id, const char *payload, size_t length);

/* Each broker's counters (a broker that is not configured: all zero). */
void svc_broker_get_stats(svc_broker *b, svc_broker_stats *mqtt, svc_broker_stats *nats);

/* Waits until every queued message is acknowledged or `timeout_s` has passed. Returns 0 when the
 * queues are empty, 1 on timeout. */
int svc_broker_flush(svc_broker *b, double timeout_s);

/* Stops the threads (after svc_broker_flush, when a drain is wanted), writes what is left to the
 * spool and frees everything; *b is set to NULL. Accepts &NULL. */
void svc_broker_close(svc_broker **b);

#endif
