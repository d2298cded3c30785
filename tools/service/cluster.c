/* Camera leases in a NATS JetStream key-value bucket for several 'glcv serve' instances; see
 * cluster.h.
 *
 * A round reads the whole lease bucket once (a watcher that delivers the last entry of every key,
 * then stops: one ephemeral ordered consumer per round), so that it knows every camera's holder,
 * free cameras and the live instances without a request per camera. A persistent watcher would not
 * cost less: every held key is rewritten every round by its holder, so it would carry as many
 * messages, and it would not see keys that the bucket's max age removes (the server sends no
 * marker for those). Then it writes, one request each: its heartbeat, the renewals of the cameras
 * it holds (a publish that expects the key's last revision: the server refuses it when another
 * instance wrote since), the frames of those whose last frame changed, and its claims (a publish
 * that expects no message, or the delete marker's revision, on the key). The writes go through
 * js_Publish on the bucket's subjects ($KV.BUCKET.KEY, the KV protocol) rather than kvStore_Update
 * because the latter drops JetStream's error code, and a refused write ("wrong last sequence")
 * must be told from a failure of NATS; releases are deletes that expect our revision (a
 * KV-Operation: DEL message, which kvStore_Delete cannot make conditional), so that a late
 * release never deletes a lease another instance has taken since.
 *
 * libnats' own reconnection is off, as in broker.c: a closed connection is dropped and the next
 * round connects again (one attempt per round, bounded by CONNECT_TIMEOUT_MS), every request is
 * bounded by REQUEST_TIMEOUT_MS, and a round stops at the first failure of NATS.
 *
 * The share: the smallest level L such that the live instances, each taking min(its capacity, L),
 * can run every camera; with no capacities this is ceil(cameras / live instances), and an instance
 * of small capacity leaves its part to the others instead of to nobody. An instance claims nothing in
 * a round that sees more live instances than its last one did: of instances started together, the
 * first does not take the shares of the others before their heartbeats are in. An instance that holds
 * more than its share (one joined) gives the extra cameras back in its next round, and the others
 * claim them.
 *
 * Why one file of this size: the connection, the bucket's snapshot, the lease writes and the round
 * share the cluster's state and its one rule for revisions; split, that state would become a
 * private header for files that only call each other. */
#define _GNU_SOURCE

#include "cluster.h"
#include "service.h"
#include "stream_net.h"

#include <cjson/cJSON.h>
#include <nats/nats.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    CONNECT_TIMEOUT_MS = 1500, /* a connection attempt: one per round at most */
    REQUEST_TIMEOUT_MS = 1000, /* a write, a read, the bucket's listing, a bucket look-up */
    NAME_MAX_BYTES = 64,       /* an instance name's characters */
    BUCKET_MAX_BYTES = 128,    /* a bucket name's characters (FRAMES_SUFFIX comes after it) */
    ID_MAX_BYTES = 256,        /* a camera id's characters */
    HOST_BYTES = SVC_HOST_BYTES,
    SUBJECT_BYTES = 16 + BUCKET_MAX_BYTES + 16 + ID_MAX_BYTES,
    VALUE_BYTES = 160,
    TEXT_BYTES = 768,
    WARN_EVERY_S = 60 /* repeated warnings (an unreachable NATS, a bad id) at most this often */
};

#define BUCKET_DEFAULT "GLCV_LEASES"
#define FRAMES_SUFFIX "_FRAMES"
#define CAMERA_PREFIX "cameras."
#define INSTANCE_PREFIX "instances."
#define LEASE_DEFAULT_S 10.0
#define FRAME_NONE INT64_MIN /* a lease whose frame was never written to the frames bucket */

/* ---- A string-keyed hash table (open addressing, linear probing) ---------------------------------- */

typedef enum { HOLDER_MINE = 1, HOLDER_OTHER, HOLDER_DELETED } holder;

typedef struct slot {
    char *key;      /* NULL: empty */
    uint64_t rev;   /* the key's last revision (snapshot), or the one this instance wrote (leases) */
    int64_t frame;  /* leases: the frame last written to the frames bucket, FRAME_NONE: none */
    int state;      /* snapshot: a holder; leases: unused */
    unsigned mark;  /* leases: the round that last saw the camera held */
} slot;

typedef struct table {
    slot *slots;
    size_t capacity; /* 0 or a power of two */
    size_t used;
} table;

static uint64_t hash_text(const char *text)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
        h ^= *c;
        h *= 1099511628211ULL;
    }
    return h;
}

static slot *table_find(const table *t, const char *key)
{
    if (t->capacity == 0)
        return NULL;
    size_t mask = t->capacity - 1;
    for (size_t i = (size_t)hash_text(key) & mask;; i = (i + 1) & mask) {
        if (!t->slots[i].key)
            return NULL;
        if (!strcmp(t->slots[i].key, key))
            return &t->slots[i];
    }
}

static bool table_grow(table *t)
{
    size_t capacity = t->capacity ? 2 * t->capacity : 64;
    slot *slots = calloc(capacity, sizeof *slots);
    if (!slots)
        return false;
    for (size_t k = 0; k < t->capacity; k++) {
        if (!t->slots[k].key)
            continue;
        size_t i = (size_t)hash_text(t->slots[k].key) & (capacity - 1);
        while (slots[i].key)
            i = (i + 1) & (capacity - 1);
        slots[i] = t->slots[k];
    }
    free(t->slots);
    t->slots = slots;
    t->capacity = capacity;
    return true;
}

/* The slot of `key`, added (zeroed, frame FRAME_NONE) when missing; NULL when out of memory. */
static slot *table_add(table *t, const char *key)
{
    slot *s = table_find(t, key);
    if (s)
        return s;
    if ((t->used + 1) * 4 > t->capacity * 3 && !table_grow(t))
        return NULL;
    size_t mask = t->capacity - 1, i = (size_t)hash_text(key) & mask;
    while (t->slots[i].key)
        i = (i + 1) & mask;
    size_t n = strlen(key) + 1;
    char *copy = malloc(n);
    if (!copy)
        return NULL;
    memcpy(copy, key, n);
    t->slots[i] = (slot){.key = copy, .frame = FRAME_NONE};
    t->used++;
    return &t->slots[i];
}

/* Removes s (backward-shift deletion: no tombstones). Entries after it may move into its place. */
static void table_remove(table *t, slot *s)
{
    size_t mask = t->capacity - 1, hole = (size_t)(s - t->slots);
    free(t->slots[hole].key);
    t->slots[hole].key = NULL;
    t->used--;
    for (size_t i = (hole + 1) & mask; t->slots[i].key; i = (i + 1) & mask) {
        size_t home = (size_t)hash_text(t->slots[i].key) & mask;
        /* the entry at i may fill the hole when its home is not in (hole, i] (circularly) */
        bool stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
        if (stays)
            continue;
        t->slots[hole] = t->slots[i];
        t->slots[i].key = NULL;
        hole = i;
    }
}

static void table_clear(table *t)
{
    for (size_t i = 0; i < t->capacity; i++) {
        free(t->slots[i].key);
        t->slots[i].key = NULL;
    }
    t->used = 0;
}

static void table_free(table *t)
{
    table_clear(t);
    free(t->slots);
    *t = (table){0};
}

/* ---- The object ------------------------------------------------------------------------------------ */

struct svc_cluster {
    glcv_logger logger;
    char name[NAME_MAX_BYTES + 1];
    char bucket[BUCKET_MAX_BYTES + 1];
    char frames_bucket[BUCKET_MAX_BYTES + sizeof FRAMES_SUFFIX];
    svc_nats_servers servers;
    int capacity;
    double lease_s;
    int replicas; /* of the buckets, when they are created */
    natsOptions *options;
    natsConnection *nc; /* NULL: not connected (the next round connects) */
    jsCtx *js;
    kvStore *leases_kv, *frames_kv;
    bool registered; /* a round has succeeded since open: claims are allowed */
    int live_seen;   /* the live instances of the last round: claims wait for a round that sees the same */
    bool down;       /* the last round could not reach NATS (the warning is given once) */
    /* net_now() at the start of the last round that renewed the leases: the leases last from their
     * writes on, later, and the frames reported in it were taken before it */
    double renewed_at;
    double down_warned_at, bad_id_warned_at;
    unsigned round_no;
    int live; /* live instances seen in the last round */
    table leases;   /* the cameras this instance holds a lease for: id -> the revision it wrote */
    table snapshot; /* this round's view of the lease keys: id -> holder and revision */
    int *caps;      /* capacities of the live instances this round (0: none) */
    size_t caps_n, caps_size;
};


static bool name_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-';
}

/* [A-Za-z0-9_-]{1,max} */
static bool valid_name(const char *text, size_t max)
{
    size_t n = 0;
    for (; text[n]; n++)
        if (n >= max || !name_char(text[n]))
            return false;
    return n > 0;
}

/* HOSTNAME-PID, characters outside [A-Za-z0-9_-] made '-', the host name cut to fit 64. */
static void default_name(char out[NAME_MAX_BYTES + 1])
{
    char host[HOST_BYTES] = "";
    if (gethostname(host, sizeof host) != 0 || !host[0])
        snprintf(host, sizeof host, "host");
    host[sizeof host - 1] = '\0';
    char pid[24];
    snprintf(pid, sizeof pid, "-%ld", (long)getpid());
    size_t keep = NAME_MAX_BYTES - strlen(pid), n = strlen(host);
    if (n > keep)
        n = keep;
    for (size_t i = 0; i < n; i++)
        out[i] = name_char(host[i]) ? host[i] : '-';
    memcpy(out + n, pid, strlen(pid) + 1);
}

/* ---- Connection ------------------------------------------------------------------------------------ */

static void disconnect(svc_cluster *c)
{
    kvStore_Destroy(c->leases_kv);
    kvStore_Destroy(c->frames_kv);
    jsCtx_Destroy(c->js);
    natsConnection_Destroy(c->nc);
    c->leases_kv = c->frames_kv = NULL;
    c->js = NULL;
    c->nc = NULL;
}

/* Binds the bucket, creating it when missing. ttl_s 0: no max age. */
static int bind_bucket(svc_cluster *c, const char *bucket, double ttl_s, kvStore **kv, char why[TEXT_BYTES])
{
    natsStatus s = js_KeyValue(kv, c->js, bucket);
    if (s == NATS_NOT_FOUND) {
        kvConfig config;
        kvConfig_Init(&config);
        config.Bucket = bucket;
        config.History = 1;
        config.TTL = (int64_t)llround(ttl_s * 1e9); /* nanoseconds (the stream's max age) */
        config.StorageType = js_FileStorage;
        config.Replicas = c->replicas;
        s = js_CreateKeyValue(kv, c->js, &config);
        if (s == NATS_OK)
            svc_log(&c->logger, GLCV_LOG_INFO, "cluster: created bucket '%s' (%s, %d replica%s)", bucket,
                ttl_s > 0 ? "max age = the lease" : "no max age", c->replicas, c->replicas == 1 ? "" : "s");
    } else if (s == NATS_OK && ttl_s > 0) {
        kvStatus *status = NULL;
        if (kvStore_Status(&status, *kv) == NATS_OK) {
            double ttl = (double)kvStatus_TTL(status) * 1e-9;
            if (fabs(ttl - ttl_s) > 1e-3)
                svc_log(&c->logger, GLCV_LOG_WARN,
                    "cluster: bucket '%s' keeps keys %.3g s (its creator's lease), not this instance's lease of %.3g s: "
                    "give every instance the same lease",
                    bucket, ttl, ttl_s);
        }
        kvStatus_Destroy(status);
    }
    if (s != NATS_OK) {
        snprintf(why, TEXT_BYTES, "bucket '%s': %s", bucket, svc_nats_error(s));
        *kv = NULL;
        return -1;
    }
    return 0;
}

static int connect_nats(svc_cluster *c, char why[TEXT_BYTES])
{
    natsStatus s = natsConnection_Connect(&c->nc, c->options);
    if (s != NATS_OK) {
        snprintf(why, TEXT_BYTES, "cannot connect to %.300s: %s", c->servers.text, svc_nats_error(s));
        c->nc = NULL;
        return -1;
    }
    jsOptions options;
    jsOptions_Init(&options);
    options.Wait = REQUEST_TIMEOUT_MS;
    s = natsConnection_JetStream(&c->js, c->nc, &options);
    if (s != NATS_OK) {
        snprintf(why, TEXT_BYTES, "%.300s: JetStream: %s", c->servers.text, svc_nats_error(s));
        disconnect(c);
        return -1;
    }
    if (bind_bucket(c, c->bucket, c->lease_s, &c->leases_kv, why) != 0 ||
        bind_bucket(c, c->frames_bucket, 0, &c->frames_kv, why) != 0) {
        disconnect(c);
        return -1;
    }
    return 0;
}

/* A failure of NATS in a round: the connection is dropped when libnats has closed it. */
static void after_failure(svc_cluster *c)
{
    if (c->nc && natsConnection_IsClosed(c->nc))
        disconnect(c);
}

/* A failed round: once the leases could not be renewed for lease - period, every held camera is to
 * stop (lose[k] = 1) and the leases are forgotten, so that a camera does not run on two instances:
 * with rounds a period apart, the cameras stop between lease - period and lease after the last
 * renewal, before the server drops the leases and another instance can claim them. The cameras it
 * stops. */
static int fence(svc_cluster *c, const int *held, int count, int *lose)
{
    double since = net_now() - c->renewed_at;
    if (since < c->lease_s - c->lease_s / 3)
        return 0;
    int n = 0;
    for (int k = 0; k < count; k++)
        if (held[k]) {
            lose[k] = 1;
            n++;
        }
    table_clear(&c->leases);
    if (n > 0)
        svc_log(&c->logger, GLCV_LOG_WARN,
                "cluster: leases not renewed for %.1f s (lease %.3g s): %d camera%s stop, as another instance may take "
                "them",
                since, c->lease_s, n, n == 1 ? "" : "s");
    return n;
}

/* A round that failed (why): NATS is marked away (warned once a minute), and the held cameras stop
 * once their leases are near their end (fence). Nothing is lost or claimed otherwise. Returns -1. */
static int round_failed(svc_cluster *c, const char *why, const int *held, int count, int *lose)
{
    for (int k = 0; k < count; k++)
        lose[k] = 0;
    after_failure(c);
    double now = net_now();
    bool warn = !c->down || now - c->down_warned_at >= WARN_EVERY_S;
    if (warn)
        c->down_warned_at = now;
    c->down = true;
    svc_log(&c->logger, warn ? GLCV_LOG_WARN : GLCV_LOG_DEBUG, "cluster: round failed: %s (held cameras keep running)", why);
    fence(c, held, count, lose);
    return -1;
}

/* ---- Writes ------------------------------------------------------------------------------------------ */

typedef enum { WRITE_OK, WRITE_REFUSED, WRITE_FAILED } write_result;

/* Publishes data (or, data NULL, a delete marker) on bucket's key. expect: 0 none, EXPECT_EMPTY the
 * key must have no message, else the key's last revision must be it. REFUSED: the expectation did not
 * hold; FAILED: NATS did not answer, or refused for another reason (why says). */
#define EXPECT_EMPTY UINT64_MAX

static write_result write_key(svc_cluster *c, const char *bucket, const char *key, const char *data, uint64_t expect,
                              uint64_t *rev, char why[TEXT_BYTES])
{
    char subject[SUBJECT_BYTES];
    snprintf(subject, sizeof subject, "$KV.%s.%s", bucket, key);
    natsMsg *msg = NULL;
    natsStatus s = natsMsg_Create(&msg, subject, NULL, data, data ? (int)strlen(data) : 0);
    if (s == NATS_OK && !data)
        s = natsMsgHeader_Set(msg, "KV-Operation", "DEL");
    jsPubAck *ack = NULL;
    jsErrCode code = 0;
    if (s == NATS_OK) {
        jsPubOptions options;
        jsPubOptions_Init(&options);
        options.MaxWait = REQUEST_TIMEOUT_MS;
        if (expect == EXPECT_EMPTY)
            options.ExpectNoMessage = true;
        else
            options.ExpectLastSubjectSeq = expect;
        s = js_PublishMsg(&ack, c->js, msg, &options, &code);
    }
    natsMsg_Destroy(msg);
    if (s == NATS_OK && rev)
        *rev = ack->Sequence;
    jsPubAck_Destroy(ack);
    if (s == NATS_OK)
        return WRITE_OK;
    if (s == NATS_ERR && code == JSStreamWrongLastSequenceErr) {
        return WRITE_REFUSED;
    }
    snprintf(why, TEXT_BYTES, "writing %s in bucket '%s': %s", key, bucket, svc_nats_error(s));
    return WRITE_FAILED;
}

static write_result write_heartbeat(svc_cluster *c, char why[TEXT_BYTES])
{
    char key[sizeof INSTANCE_PREFIX + NAME_MAX_BYTES], value[VALUE_BYTES];
    snprintf(key, sizeof key, INSTANCE_PREFIX "%s", c->name);
    snprintf(value, sizeof value, "{\"capacity\":%d}", c->capacity);
    return write_key(c, c->bucket, key, value, 0, NULL, why);
}

static write_result write_lease(svc_cluster *c, const char *id, int64_t frame, uint64_t expect, uint64_t *rev,
                                char why[TEXT_BYTES])
{
    char key[sizeof CAMERA_PREFIX + ID_MAX_BYTES], value[VALUE_BYTES];
    snprintf(key, sizeof key, CAMERA_PREFIX "%s", id);
    snprintf(value, sizeof value, "{\"instance\":\"%s\",\"frame\":%" PRId64 "}", c->name, frame);
    return write_key(c, c->bucket, key, value, expect, rev, why);
}

/* Deletes the lease of `id` if its last revision is still `rev` (ours). */
static write_result release_lease(svc_cluster *c, const char *id, uint64_t rev, char why[TEXT_BYTES])
{
    char key[sizeof CAMERA_PREFIX + ID_MAX_BYTES];
    snprintf(key, sizeof key, CAMERA_PREFIX "%s", id);
    return write_key(c, c->bucket, key, NULL, rev, NULL, why);
}

static write_result write_frame(svc_cluster *c, const char *id, int64_t frame, double fps, char why[TEXT_BYTES])
{
    char value[VALUE_BYTES];
    snprintf(value, sizeof value, "{\"frame\":%" PRId64 ",\"fps\":%.3f}", frame, fps > 0 && fps < 1e6 ? fps : 0.0);
    return write_key(c, c->frames_bucket, id, value, 0, NULL, why);
}

/* The last frame reported for `id` (-1: none), the frame rate then (0: unknown), and whether the
 * camera has a record at all (*recorded: a holder claimed it, even one that reported no frame).
 * Returns 0, or -1 when NATS failed. */
static int read_frame(svc_cluster *c, const char *id, int64_t *frame, double *fps, bool *recorded,
                      char why[TEXT_BYTES])
{
    *frame = -1;
    *fps = 0;
    *recorded = false;
    /* from the stream's leader (a stream message get), not kvStore_Get: the buckets allow direct gets,
     * which any replica answers, and a replica that is behind (after a server's loss) would give an
     * older frame, and the frames since it would be numbered twice */
    char stream[BUCKET_MAX_BYTES + sizeof FRAMES_SUFFIX + 8], subject[SUBJECT_BYTES];
    snprintf(stream, sizeof stream, "KV_%s", c->frames_bucket);
    snprintf(subject, sizeof subject, "$KV.%s.%s", c->frames_bucket, id);
    natsMsg *m = NULL;
    jsErrCode code = 0;
    natsStatus s = js_GetLastMsg(&m, c->js, stream, subject, NULL, &code);
    if (s == NATS_NOT_FOUND || code == JSNoMessageFoundErr)
        return 0;
    if (s != NATS_OK) {
        snprintf(why, TEXT_BYTES, "reading %s in bucket '%s': %s", id, c->frames_bucket, svc_nats_error(s));
        return -1;
    }
    const char *op = NULL;
    if (natsMsgHeader_Get(m, "KV-Operation", &op) == NATS_OK && op) { /* deleted or purged */
        natsMsg_Destroy(m);
        return 0;
    }
    cJSON *json = cJSON_ParseWithLength(natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m));
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(json, "frame");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(json, "fps");
    if (cJSON_IsNumber(f) && f->valuedouble >= -1 && f->valuedouble < 9e15) {
        *frame = (int64_t)f->valuedouble;
        *recorded = true;
    } else {
        svc_log(&c->logger, GLCV_LOG_WARN, "cluster: bucket '%s', key %s: not {\"frame\":N}: frames of camera %s start at 0",
            c->frames_bucket, id, id);
    }
    if (cJSON_IsNumber(r) && r->valuedouble > 0 && r->valuedouble < 1e6)
        *fps = r->valuedouble;
    cJSON_Delete(json);
    natsMsg_Destroy(m);
    return 0;
}

/* ---- The bucket's snapshot -------------------------------------------------------------------------- */

static bool caps_push(svc_cluster *c, int capacity)
{
    if (c->caps_n == c->caps_size) {
        size_t size = c->caps_size ? 2 * c->caps_size : 16;
        int *caps = realloc(c->caps, size * sizeof *caps);
        if (!caps)
            return false;
        c->caps = caps;
        c->caps_size = size;
    }
    c->caps[c->caps_n++] = capacity;
    return true;
}

/* One entry of the listing into the snapshot or the live instances. Returns false when out of memory. */
static bool take_entry(svc_cluster *c, kvEntry *e)
{
    const char *key = kvEntry_Key(e);
    kvOperation op = kvEntry_Operation(e);
    bool put = op == kvOp_Put;
    if (!key)
        return true;
    const void *value = kvEntry_Value(e);
    int length = kvEntry_ValueLen(e);
    if (!strncmp(key, INSTANCE_PREFIX, strlen(INSTANCE_PREFIX))) {
        if (!put)
            return true;
        int capacity = 0;
        cJSON *json = value && length > 0 ? cJSON_ParseWithLength(value, (size_t)length) : NULL;
        const cJSON *cap = cJSON_GetObjectItemCaseSensitive(json, "capacity");
        if (cJSON_IsNumber(cap) && cap->valuedouble >= 1 && cap->valuedouble <= INT_MAX)
            capacity = (int)cap->valuedouble;
        cJSON_Delete(json);
        return caps_push(c, capacity);
    }
    if (strncmp(key, CAMERA_PREFIX, strlen(CAMERA_PREFIX)) != 0)
        return true;
    slot *s = table_add(&c->snapshot, key + strlen(CAMERA_PREFIX));
    if (!s)
        return false;
    s->rev = kvEntry_Revision(e);
    s->state = HOLDER_DELETED;
    if (put) {
        cJSON *json = value && length > 0 ? cJSON_ParseWithLength(value, (size_t)length) : NULL;
        const cJSON *who = cJSON_GetObjectItemCaseSensitive(json, "instance");
        s->state = cJSON_IsString(who) && !strcmp(who->valuestring, c->name) ? HOLDER_MINE : HOLDER_OTHER;
        cJSON_Delete(json);
    }
    return true;
}

/* Lists the lease bucket: every key's last entry (delete markers included). Returns 0 or -1. */
static int take_snapshot(svc_cluster *c, char why[TEXT_BYTES])
{
    table_clear(&c->snapshot);
    c->caps_n = 0;
    kvWatcher *w = NULL;
    kvWatchOptions options;
    kvWatchOptions_Init(&options);
    natsStatus s = kvStore_WatchAll(&w, c->leases_kv, &options);
    bool memory = true;
    /* each entry within REQUEST_TIMEOUT_MS of the previous one, the whole listing within a lease */
    double until = net_now() + c->lease_s;
    while (s == NATS_OK && memory) {
        kvEntry *e = NULL;
        double left = until - net_now();
        int64_t wait = left < REQUEST_TIMEOUT_MS * 1e-3 ? (int64_t)(left * 1e3) : REQUEST_TIMEOUT_MS;
        s = kvWatcher_Next(&e, w, wait > 1 ? wait : 1);
        if (s != NATS_OK || !e) /* NULL: the initial values are all in */
            break;
        memory = take_entry(c, e);
        kvEntry_Destroy(e);
    }
    if (w)
        kvWatcher_Destroy(w);
    if (s == NATS_OK && memory)
        return 0;
    if (!memory)
        snprintf(why, TEXT_BYTES, "listing bucket '%s': out of memory", c->bucket);
    else
        snprintf(why, TEXT_BYTES, "listing bucket '%s': %s", c->bucket, svc_nats_error(s));
    return -1;
}

/* The smallest L such that the live instances, each running min(its capacity, L) cameras, run all
 * `count` (count when even all of their capacities fall short). */
static long share_level(const int *caps, size_t n, long count)
{
    if (n == 0)
        return count;
    long lo = 0, hi = count;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2, run = 0;
        for (size_t i = 0; i < n && run < count; i++)
            run += caps[i] > 0 && caps[i] < mid ? caps[i] : mid;
        if (run >= count)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* ---- Public ------------------------------------------------------------------------------------------ */

double svc_cluster_period(const svc_cluster *c)
{
    return c ? c->lease_s / 3 : LEASE_DEFAULT_S / 3;
}

double svc_cluster_hold_until(const svc_cluster *c)
{
    return c ? c->renewed_at + c->lease_s - c->lease_s / 3 : 0;
}

int svc_cluster_instances(const svc_cluster *c)
{
    return c ? c->live : 0;
}

static void cluster_free(svc_cluster *c)
{
    disconnect(c);
    natsOptions_Destroy(c->options);
    table_free(&c->leases);
    table_free(&c->snapshot);
    free(c->caps);
    free(c);
}

int svc_cluster_open(const svc_cluster_params *params, svc_cluster **out, char *error, size_t size)
{
    if (error && size > 0)
        error[0] = '\0';
    if (!out)
        return svc_fail(error, size, "cluster: no place for the object");
    *out = NULL;
    if (!params || !params->nats_url)
        return svc_fail(error, size, "cluster: no nats url");
    double lease = params->lease_s == 0 ? LEASE_DEFAULT_S : params->lease_s;
    if (!(lease >= 1) || !(lease <= 86400))
        return svc_fail(error, size, "cluster: lease %g s: must be from 1 to 86400 s (0: %g s)", params->lease_s,
                     LEASE_DEFAULT_S);
    if (params->capacity < 0)
        return svc_fail(error, size, "cluster: capacity %d: must be 0 (no limit) or more", params->capacity);
    const char *bucket = params->bucket ? params->bucket : BUCKET_DEFAULT;
    if (!valid_name(bucket, BUCKET_MAX_BYTES))
        return svc_fail(error, size, "cluster: bucket '%s': expected 1 to %d of A-Z a-z 0-9 _ -", bucket,
                     BUCKET_MAX_BYTES);
    if (params->instance && !valid_name(params->instance, NAME_MAX_BYTES))
        return svc_fail(error, size, "cluster: instance name '%s': expected 1 to %d of A-Z a-z 0-9 _ -",
                     params->instance, NAME_MAX_BYTES);
    svc_nats_servers servers;
    if (svc_nats_servers_parse(params->nats_url, &servers, error, size) != 0)
        return -1;

    svc_cluster *c = calloc(1, sizeof *c);
    if (!c)
        return svc_fail(error, size, "cluster: out of memory");
    c->logger = params->logger;
    c->capacity = params->capacity;
    c->lease_s = lease;
    c->renewed_at = net_now();
    c->replicas = params->replicas > 0 ? params->replicas : 1;
    c->live = 1;
    c->down_warned_at = c->bad_id_warned_at = -1e9;
    c->servers = servers;
    snprintf(c->bucket, sizeof c->bucket, "%s", bucket);
    snprintf(c->frames_bucket, sizeof c->frames_bucket, "%s" FRAMES_SUFFIX, bucket);
    if (params->instance)
        snprintf(c->name, sizeof c->name, "%s", params->instance);
    else
        default_name(c->name);

    char client[NAME_MAX_BYTES + 16];
    snprintf(client, sizeof client, "glcv-cluster-%s", c->name);
    natsStatus s = natsOptions_Create(&c->options);
    if (s == NATS_OK)
        s = svc_nats_servers_set(&c->servers, c->options);
    if (s == NATS_OK)
        s = natsOptions_SetAllowReconnect(c->options, false);
    if (s == NATS_OK)
        s = natsOptions_SetTimeout(c->options, CONNECT_TIMEOUT_MS);
    if (s == NATS_OK)
        s = natsOptions_SetName(c->options, client);
    if (s != NATS_OK) {
        svc_fail(error, size, "cluster: nats servers %s: %s", c->servers.text, svc_nats_error(s));
        cluster_free(c);
        return -1;
    }
    char why[TEXT_BYTES] = "";
    if (connect_nats(c, why) != 0 || write_heartbeat(c, why) != WRITE_OK) {
        svc_fail(error, size, "cluster: %s", why);
        cluster_free(c);
        return -1;
    }
    svc_log(&c->logger, GLCV_LOG_INFO, "cluster: instance '%s' on %s, bucket '%s', lease %.3g s, capacity %d%s", c->name, c->servers.text,
        c->bucket, c->lease_s, c->capacity, c->capacity ? "" : " (no limit)");
    *out = c;
    return 0;
}

/* Releases the leases this round did not see held (the caller stopped those cameras, or they left
 * the list). Returns 0, or -1 when NATS failed. */
static int release_unheld(svc_cluster *c, char why[TEXT_BYTES])
{
    for (size_t i = 0; i < c->leases.capacity;) {
        slot *s = &c->leases.slots[i];
        if (!s->key || s->mark == c->round_no) {
            i++;
            continue;
        }
        write_result r = release_lease(c, s->key, s->rev, why);
        if (r == WRITE_FAILED)
            return -1;
        svc_log(&c->logger, GLCV_LOG_DEBUG, "cluster: camera %s released%s", s->key, r == WRITE_REFUSED ? " (already taken)" : "");
        table_remove(&c->leases, s); /* an entry may move into slot i: look at it again */
    }
    return 0;
}

int svc_cluster_round(svc_cluster *c, const char *const *ids, int count, const int *held, const int64_t *last_frame,
                      const double *fps, int *claim, int64_t *first_frame, int *lose)
{
    if (!c)
        return -1;
    if (count < 0 || (count > 0 && (!ids || !held || !last_frame || !claim || !first_frame || !lose))) {
        svc_log(&c->logger, GLCV_LOG_ERROR, "cluster: round: %d cameras, or a NULL array", count);
        return -1;
    }
    for (int k = 0; k < count; k++) {
        claim[k] = lose[k] = 0;
        first_frame[k] = 0;
    }
    c->round_no++;
    char why[TEXT_BYTES] = "";
    double started = net_now();
    /* NATS away since the last round and the leases near their end: the cameras stop now, not after
     * this round's attempts (a connection and a request may take seconds) */
    if (c->down && fence(c, held, count, lose) > 0)
        return -1;

    /* connection, heartbeat, listing: nothing is decided before these succeed */
    if (c->nc && natsConnection_IsClosed(c->nc))
        disconnect(c);
    bool reconnected = false;
    int rc = 0;
    if (!c->nc) {
        rc = connect_nats(c, why);
        reconnected = rc == 0;
    }
    if (rc == 0 && write_heartbeat(c, why) != WRITE_OK)
        rc = -1;
    if (rc == 0)
        rc = take_snapshot(c, why);
    if (rc != 0)
        return round_failed(c, why, held, count, lose);
    if (c->down || reconnected)
        svc_log(&c->logger, GLCV_LOG_INFO, "cluster: %s %s", reconnected ? "connected to" : "reached", c->servers.text);
    c->down = false;
    c->live = (int)c->caps_n > 0 ? (int)c->caps_n : 1;
    /* instances that start together: a round that sees more live instances than the last one claims
     * nothing, so that the first to start does not take the shares of those starting after it (fewer
     * instances: claim at once, the others' cameras are free) */
    bool settled = c->live <= c->live_seen;
    c->live_seen = c->live;

    /* renewals */
    long holding = 0;
    int lost = 0;
    bool bad_id = false;
    for (int k = 0; k < count && rc == 0; k++) {
        if (!held[k])
            continue;
        const char *id = ids[k];
        if (!id || !valid_name(id, ID_MAX_BYTES)) {
            lose[k] = 1; /* never claimed here */
            bad_id = true;
            continue;
        }
        const slot *snap = table_find(&c->snapshot, id);
        slot *mine = table_find(&c->leases, id);
        uint64_t expect = !snap ? EXPECT_EMPTY : snap->rev;
        write_result r = snap && snap->state == HOLDER_OTHER ? WRITE_REFUSED : WRITE_OK;
        uint64_t rev = 0;
        if (r == WRITE_OK)
            r = write_lease(c, id, last_frame[k], expect, &rev, why);
        if (r == WRITE_FAILED) {
            rc = -1;
            break;
        }
        if (r == WRITE_REFUSED) {
            lose[k] = 1;
            lost++;
            if (mine)
                table_remove(&c->leases, mine);
            svc_log(&c->logger, GLCV_LOG_INFO, "cluster: camera %s: lease taken by another instance", id);
            continue;
        }
        if (!mine && !(mine = table_add(&c->leases, id))) {
            snprintf(why, sizeof why, "out of memory");
            rc = -1;
            break;
        }
        mine->rev = rev;
        mine->mark = c->round_no;
        holding++;
        if (last_frame[k] >= 0 && last_frame[k] != mine->frame) {
            if (write_frame(c, id, last_frame[k], fps ? fps[k] : 0.0, why) == WRITE_FAILED) {
                rc = -1;
                break;
            }
            mine->frame = last_frame[k];
        }
    }
    if (rc == 0)
        rc = release_unheld(c, why);
    if (rc != 0)
        return round_failed(c, why, held, count, lose);
    c->renewed_at = started;

    /* claims, from this instance's place in the list, up to its share */
    long level = share_level(c->caps, c->caps_n, count);
    long limit = c->capacity > 0 && c->capacity < level ? c->capacity : level;
    int claimed = 0, given = 0;
    /* more than the share (an instance joined): the last claimed in this instance's order go back
     * (lose 2), and the others claim them in their next rounds */
    if (c->registered && settled && count > 0 && holding > limit) {
        int start = (int)(hash_text(c->name) % (uint64_t)count);
        for (int i = 0; i < count && holding > limit; i++) {
            int k = (start + count - 1 - i) % count;
            slot *mine = held[k] && !lose[k] && ids[k] ? table_find(&c->leases, ids[k]) : NULL;
            if (!mine)
                continue;
            write_result r = release_lease(c, ids[k], mine->rev, why);
            if (r == WRITE_FAILED) {
                after_failure(c);
                svc_log(&c->logger, GLCV_LOG_WARN, "cluster: giving cameras back stopped: %s", why);
                break;
            }
            table_remove(&c->leases, mine);
            lose[k] = r == WRITE_OK ? 2 : 1; /* refused: another instance wrote it since */
            holding--;
            given++;
        }
        svc_log(&c->logger, GLCV_LOG_INFO, "cluster: %d camera%s given back (share %ld of %d instance%s)", given,
                given == 1 ? "" : "s", limit, c->live, c->live == 1 ? "" : "s");
    }
    if (c->registered && settled && count > 0 && given == 0) {
        int start = (int)(hash_text(c->name) % (uint64_t)count);
        for (int i = 0; i < count && holding < limit; i++) {
            int k = (start + i) % count;
            const char *id = ids[k];
            if (held[k] || !id)
                continue;
            if (!valid_name(id, ID_MAX_BYTES)) {
                bad_id = true;
                continue;
            }
            const slot *snap = table_find(&c->snapshot, id);
            if ((snap && snap->state != HOLDER_DELETED) || table_find(&c->leases, id))
                continue;
            int64_t previous = -1;
            double rate = 0;
            bool recorded = false;
            uint64_t rev = 0;
            write_result r = read_frame(c, id, &previous, &rate, &recorded, why) == 0 ? WRITE_OK : WRITE_FAILED;
            if (r == WRITE_OK)
                r = write_lease(c, id, previous, snap ? snap->rev : EXPECT_EMPTY, &rev, why);
            if (r == WRITE_REFUSED)
                continue; /* another instance was quicker */
            slot *mine = r == WRITE_OK ? table_add(&c->leases, id) : NULL;
            if (!mine) {
                if (r == WRITE_OK)
                    snprintf(why, sizeof why, "out of memory");
                after_failure(c);
                svc_log(&c->logger, GLCV_LOG_WARN, "cluster: claims stopped: %s", why);
                break;
            }
            mine->rev = rev;
            mine->frame = previous;
            mine->mark = c->round_no;
            claim[k] = 1;
            /* the last holder may have handled frames it never reported: up to a period of them when it
             * died or stopped before its next round, up to a lease's when NATS was away from it (it stops
             * its cameras then, see fence): skip them, with a margin, so that no index is used twice. A
             * record without a frame is a holder that may have died before its first report. */
            first_frame[k] =
                previous + 1 + (previous >= 0 || recorded ? (int64_t)ceil(1.5 * rate * c->lease_s) : 0);
            /* the skipped indices go into the record at once: were this camera lost again before this
             * instance's first report, the next claimer would read the same record and number the
             * frames this instance handled a second time. A camera never held gets a record of no frame
             * (-1) with the caller's rate for it, for the same reason. */
            if (first_frame[k] - 1 > previous || !recorded) {
                double noted = recorded ? rate : fps ? fps[k] : 0.0;
                if (write_frame(c, id, first_frame[k] - 1, noted, why) == WRITE_OK)
                    mine->frame = first_frame[k] - 1;
                else
                    svc_log(&c->logger, GLCV_LOG_WARN, "cluster: camera %s: its first frame %" PRId64 " not recorded: %s",
                        id, first_frame[k], why);
            }
            holding++;
            claimed++;
            svc_log(&c->logger, GLCV_LOG_DEBUG, "cluster: camera %s claimed (frames from %" PRId64 ")", id, previous + 1);
        }
    }
    c->registered = true;
    if (bad_id) {
        double now = net_now();
        if (now - c->bad_id_warned_at >= WARN_EVERY_S) {
            c->bad_id_warned_at = now;
            svc_log(&c->logger, GLCV_LOG_WARN, "cluster: camera ids other than 1 to %d of A-Z a-z 0-9 _ - are never run", ID_MAX_BYTES);
        }
    }
    svc_log(&c->logger, GLCV_LOG_DEBUG,
        "cluster: round %u: %d live instance(s), share %ld, holding %ld, claimed %d, lost %d, given back %d (%.0f ms)",
        c->round_no, c->live, limit, holding, claimed, lost, given, (net_now() - started) * 1e3);
    return 0;
}

void svc_cluster_close(svc_cluster **cp)
{
    if (!cp || !*cp)
        return;
    svc_cluster *c = *cp;
    *cp = NULL;
    char why[TEXT_BYTES] = "";
    if (c->nc && natsConnection_IsClosed(c->nc))
        disconnect(c);
    int rc = c->nc ? 0 : connect_nats(c, why);
    size_t released = 0;
    for (size_t i = 0; rc == 0 && i < c->leases.capacity; i++) {
        const slot *s = &c->leases.slots[i];
        if (!s->key)
            continue;
        write_result r = release_lease(c, s->key, s->rev, why);
        if (r == WRITE_FAILED)
            rc = -1;
        else if (r == WRITE_OK)
            released++;
    }
    if (rc == 0) {
        char key[sizeof INSTANCE_PREFIX + NAME_MAX_BYTES];
        snprintf(key, sizeof key, INSTANCE_PREFIX "%s", c->name);
        if (write_key(c, c->bucket, key, NULL, 0, NULL, why) != WRITE_OK)
            rc = -1;
    }
    if (rc == 0)
        svc_log(&c->logger, GLCV_LOG_INFO, "cluster: instance '%s' left (%zu lease(s) released)", c->name, released);
    else
        svc_log(&c->logger, GLCV_LOG_WARN, "cluster: instance '%s' left without releasing its leases (%s): they expire in %.3g s",
            c->name, why, c->lease_s);
    cluster_free(c);
}
