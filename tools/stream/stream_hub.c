/* The viewers of a delta stream ('glcv stream serve', the live view of 'glcv serve'); see stream_hub.h.
 *
 * One mutex guards the list of viewers, their sync states and queues and the counters. Only the
 * network thread adds and removes viewers and takes packets off the front of a queue; hub_publish
 * appends and, when a viewer falls behind, removes everything but the front packet, which the
 * network thread may be writing; so the network thread writes without holding the lock. The
 * addresses connections come from (peers) are the network thread's alone.
 *
 * Why one file of this size: the viewers' queues and sync states, the handshake limits per address
 * and the poll loop are one state machine under one lock; split, each part would reach into the
 * others' fields. */
#define _GNU_SOURCE

#include "stream_hub.h"

#include "stream_crypto.h"
#include "stream_net.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#if defined(__GNUC__)
#define HUB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define HUB_PRINTF(a, b)
#endif

enum {
    TICK_MS = 100,        /* the longest poll: deadlines and the end are checked this often */
    CLOSE_WAIT_S = 2,     /* after END: how long the viewer has to close its side */
    READ_CHUNK = 4096,
    READ_BUDGET = 65536,  /* bytes read from one connection per round of the loop, so that one that
                             sends without pause cannot keep the thread from the others */
    PEER_BUCKETS = 256,   /* the peers' hash table */
    PEER_LOG_LINES = 40   /* lines about one address's connections per PEER_LOG_S; the rest counted */
};

/* The handshake limits (docs/STREAM.md). Connections that have not completed their handshake hold
 * no viewer's slot (--max-viewers counts viewers that joined); they are limited apart, per address
 * first, so that a client that opens connections and says nothing, as fast as it likes, takes the
 * handshakes of its own address and of nobody else: a new connection from an address that has
 * PEER_HANDSHAKES in their handshake drops that address's oldest one, and one that finds
 * MAX_HANDSHAKES in their handshake drops the oldest of the address that has the most. */
enum { PEER_HANDSHAKES = 8, MAX_HANDSHAKES = 256 };

static const double PEER_LOG_S = 10;      /* the window of PEER_LOG_LINES */
static const double KEYFRAME_EVERY_S = 0.5; /* a viewer's requests make a snapshot follow at most this often */
static const double REQUEST_LOG_S = 10;   /* a viewer's requests are logged once per this, summed up */

/* Where a viewer stands with the stream. */
typedef enum sync_state {
    SYNC_WAIT,     /* needs a keyframe: none of its deltas is queued */
    SYNC_PENDING,  /* takes the next keyframe or snapshot published */
    SYNC_OK,       /* in step: every packet is queued for it */
    SYNC_DRAINING  /* fell behind: its queue was emptied but for the packet being written */
} sync_state;

typedef enum phase {
    PHASE_HANDSHAKE, /* HELLO sent (or being sent), waiting for JOIN */
    PHASE_STREAMING,
    PHASE_CLOSING /* everything sent, its side shut: waiting for the viewer to close */
} phase;

/* An address connections come from: its connections in their handshake, counted against
 * PEER_HANDSHAKES, and the lines about its connections, limited to PEER_LOG_LINES per PEER_LOG_S
 * so that a client that floods the server with connections cannot flood its log as well. Kept
 * while it has connections and until its log window is over. */
typedef struct stream_peer {
    struct stream_peer *next;
    char address[NET_ADDRESS_BYTES]; /* without the port */
    int connections;                 /* open, in any phase */
    int handshakes;                  /* in their handshake */
    double window_start;             /* of the log window */
    int lines;                       /* written in the window */
    int64_t unlogged, opened, dropped; /* in the window: lines not written, connections, dropped at a limit */
} stream_peer;

typedef struct viewer {
    struct viewer *next;
    struct stream_hub *hub;
    int id, fd;
    char peer[NET_ADDRESS_BYTES];
    stream_peer *from;
    phase phase;
    double accepted;  /* when it connected: the oldest handshake is dropped first */
    double deadline; /* handshake; closing */
    uint8_t nonce[STREAM_NONCE_BYTES];
    uint8_t in[STREAM_JOIN_BYTES]; /* JOIN, or a request */
    size_t in_bytes;
    uint8_t ctl[STREAM_WELCOME_BYTES]; /* HELLO or WELCOME, written before the queue */
    size_t ctl_bytes, ctl_sent;
    int close_after_ctl; /* refused: close once WELCOME is out */
    char refused[STREAM_WHY_BYTES]; /* why it was refused (WELCOME with a status), for its last line */
    int joined;          /* accepted: counted in hub->streaming */
    /* keyframe requests (network thread) */
    double keyframe_at;    /* when a request last made a snapshot follow (0: never) */
    double requests_since; /* the start of the requests' log window (0: none open) */
    int64_t requests, ignored; /* in the window, after the one logged when it opened */
    /* under the lock */
    sync_state sync;
    stream_packet **queue; /* queue[0] is the front */
    int count, capacity;
    size_t front_sent; /* bytes of queue[0] written */
    size_t queued;     /* bytes queued, less front_sent */
    int ending;        /* END is queued: close once the queue is out */
    int quiet_resync;  /* the snapshot it waits for was asked for by a request that was not logged */
    double stalled_since; /* when it last took a byte while it had some queued (0: nothing queued) */
    uint64_t packets, bytes, snapshots, fell_behind;
} viewer;

/* A connection handed over by hub_adopt, until the network thread takes it. */
typedef struct adopted {
    struct adopted *next;
    int fd;
    char peer[NET_ADDRESS_BYTES];
} adopted;

struct stream_hub {
    stream_hub_params p;
    adopted *adopted; /* under the lock, newest first */
    pthread_t thread;
    int wake[2]; /* a byte written to wake[1] wakes the network thread */
    pthread_mutex_t lock;
    pthread_cond_t joined_cond;
    viewer *viewers;
    int next_id;
    int streaming; /* viewers past the handshake */
    int quit;      /* the thread ends */
    int finishing; /* END queued: no new connections; end once every queue is out */
    double finish_deadline;
    double accept_after; /* out of file descriptors: no accepting until then */
    stream_peer *peers[PEER_BUCKETS];
    int handshakes; /* connections in their handshake, all peers */
    size_t total_queued;
    int snapshot_wanted; /* viewers became PENDING since hub_snapshot_wanted */
    stream_hub_stats stats;
};

/* ---- packets --------------------------------------------------------------------------------- */

stream_packet *stream_packet_new(size_t bytes)
{
    stream_packet *p = malloc(sizeof *p + bytes);
    if (!p)
        return NULL;
    atomic_init(&p->refs, 1);
    p->bytes = bytes;
    p->frame = 0;
    p->key = p->snapshot = 0;
    p->capture_time = 0;
    return p;
}

stream_packet *stream_packet_ref(stream_packet *p)
{
    atomic_fetch_add(&p->refs, 1);
    return p;
}

void stream_packet_unref(stream_packet **p)
{
    if (p && *p && atomic_fetch_sub(&(*p)->refs, 1) == 1)
        free(*p);
    if (p)
        *p = NULL;
}

/* ---- events ---------------------------------------------------------------------------------- */

static void say(const stream_hub *hub, int level, const char *fmt, ...) HUB_PRINTF(3, 4);

/* One line to the hub's log function, or to stderr as "glcv: [warning: |error: ]LINE". */
static void say(const stream_hub *hub, int level, const char *fmt, ...)
{
    char text[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (hub->p.log)
        hub->p.log(hub->p.log_user, level, text);
    else
        fprintf(stderr, "glcv: %s%s\n", level == STREAM_LOG_ERROR ? "error: " : level == STREAM_LOG_WARN ? "warning: " : "",
                text);
}

static void event(const viewer *v, const char *fmt, ...) HUB_PRINTF(2, 3);

static void vevent(const viewer *v, const char *fmt, va_list ap) HUB_PRINTF(2, 0);

static void vevent(const viewer *v, const char *fmt, va_list ap)
{
    char text[512];
    vsnprintf(text, sizeof text, fmt, ap);
    say(v->hub, STREAM_LOG_INFO, "%s %d (%s): %s", v->hub->p.name ? v->hub->p.name : "viewer", v->id, v->peer, text);
}

static void event(const viewer *v, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vevent(v, fmt, ap);
    va_end(ap);
}

static void wake(stream_hub *hub)
{
    char c = 1;
    ssize_t n = write(hub->wake[1], &c, 1);
    (void)n; /* a full pipe is awake already */
}

/* ---- queues (under the lock) ----------------------------------------------------------------- */

static int push(stream_hub *hub, viewer *v, stream_packet *p)
{
    if (v->count == v->capacity) {
        int capacity = v->capacity ? 2 * v->capacity : 16;
        stream_packet **q = realloc(v->queue, (size_t)capacity * sizeof *q);
        if (!q)
            return -1;
        v->queue = q;
        v->capacity = capacity;
    }
    v->queue[v->count++] = stream_packet_ref(p);
    v->queued += p->bytes;
    hub->total_queued += p->bytes;
    if (hub->total_queued > hub->stats.peak_queued)
        hub->stats.peak_queued = hub->total_queued;
    if (v->stalled_since == 0)
        v->stalled_since = net_now();
    return 0;
}

/* Removes queue[from..] (from >= 1: the front stays). */
static void drop_after(stream_hub *hub, viewer *v, int from)
{
    for (int i = from; i < v->count; i++) {
        v->queued -= v->queue[i]->bytes;
        hub->total_queued -= v->queue[i]->bytes;
        stream_packet_unref(&v->queue[i]);
    }
    v->count = from < v->count ? from : v->count;
}

/* The viewer needs a keyframe: what is queued after the front is useless to it. */
static void resync(stream_hub *hub, viewer *v)
{
    drop_after(hub, v, v->count > 0 ? 1 : 0);
    v->sync = v->count > 0 ? SYNC_DRAINING : SYNC_WAIT;
}

/* Queues a packet of the stream for a viewer that is in step, unless that puts it over its budget. */
static void offer(stream_hub *hub, viewer *v, stream_packet *p)
{
    if (v->count > 0 && v->queued + p->bytes > hub->p.queue_bytes) {
        size_t queued = v->queued;
        resync(hub, v);
        v->fell_behind++;
        hub->stats.fell_behind++;
        event(v, "fell behind (%zu bytes queued, frame %llu would pass the budget of %zu): queue dropped, a "
                 "snapshot follows once it catches up",
              queued, (unsigned long long)p->frame, hub->p.queue_bytes);
        return;
    }
    if (push(hub, v, p) != 0) {
        resync(hub, v);
        event(v, "out of memory for its queue: a snapshot follows");
    }
}

void hub_publish(stream_hub *hub, stream_packet *p)
{
    int waiting = 0;
    pthread_mutex_lock(&hub->lock);
    for (viewer *v = hub->viewers; v; v = v->next) {
        if (v->phase != PHASE_STREAMING || v->ending)
            continue;
        int takes = v->sync == SYNC_OK || (p->key && (v->sync == SYNC_WAIT || v->sync == SYNC_PENDING)) ||
                    (p->snapshot && v->sync == SYNC_PENDING);
        if (takes) {
            sync_state was = v->sync;
            v->sync = SYNC_OK;
            offer(hub, v, p);
            if (was != SYNC_OK && v->sync == SYNC_OK) {
                v->snapshots += p->snapshot != 0;
                hub->stats.snapshots += p->snapshot != 0;
                if (!v->quiet_resync) /* (else its requests' summary line counts it) */
                    event(v, "in step from %s %llu", p->snapshot ? "a snapshot of frame" : "keyframe",
                          (unsigned long long)p->frame);
                v->quiet_resync = 0;
            }
        }
        if (v->sync == SYNC_WAIT) { /* it takes the next snapshot */
            v->sync = SYNC_PENDING;
            waiting = 1;
        }
    }
    if (waiting)
        hub->snapshot_wanted = 1;
    pthread_mutex_unlock(&hub->lock);
    wake(hub);
}

int hub_snapshot_wanted(stream_hub *hub)
{
    pthread_mutex_lock(&hub->lock);
    int wanted = hub->snapshot_wanted;
    hub->snapshot_wanted = 0;
    pthread_mutex_unlock(&hub->lock);
    return wanted;
}

int hub_wait_for_viewers(stream_hub *hub, int count, int (*stop)(void))
{
    pthread_mutex_lock(&hub->lock);
    while (hub->streaming < count && !(stop && stop()) && !hub->quit) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += TICK_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&hub->joined_cond, &hub->lock, &ts);
    }
    int ok = hub->streaming >= count;
    pthread_mutex_unlock(&hub->lock);
    return ok;
}

/* ---- connections (network thread) ------------------------------------------------------------ */

/* One non-blocking send (no SIGPIPE): the bytes taken, 0 when the socket takes none now, -1 on an
 * error (errno). */
static ssize_t send_now(int fd, const uint8_t *data, size_t bytes)
{
    for (;;) {
        ssize_t n = send(fd, data, bytes, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n >= 0)
            return n;
        if (errno != EINTR)
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
    }
}

/* ---- peers (network thread) ------------------------------------------------------------------- */

/* "ADDRESS:PORT" or "[ADDRESS]:PORT" without the port (and the brackets). */
static void peer_address(const char *peer_text, char out[NET_ADDRESS_BYTES])
{
    const char *colon = strrchr(peer_text, ':');
    size_t n = colon ? (size_t)(colon - peer_text) : strlen(peer_text);
    if (n >= 2 && peer_text[0] == '[' && peer_text[n - 1] == ']') {
        peer_text++;
        n -= 2;
    }
    snprintf(out, NET_ADDRESS_BYTES, "%.*s", (int)n, peer_text);
}

static unsigned peer_bucket(const char *address)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *c = address; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    return h % PEER_BUCKETS;
}

/* The peer of an address, made when new; NULL when out of memory (then the connection has no
 * peer: no per-address limit nor log window, which only costs the protection). */
static stream_peer *peer_of(stream_hub *hub, const char *address, double now)
{
    stream_peer **bucket = &hub->peers[peer_bucket(address)];
    for (stream_peer *p = *bucket; p; p = p->next)
        if (strcmp(p->address, address) == 0)
            return p;
    stream_peer *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    snprintf(p->address, sizeof p->address, "%s", address);
    p->window_start = now;
    p->next = *bucket;
    *bucket = p;
    return p;
}

/* Writes the line that sums up a log window in which lines were held back. */
static void peer_flush(const stream_hub *hub, stream_peer *p)
{
    if (p->unlogged > 0)
        say(hub, STREAM_LOG_INFO,
            "peer %s: %lld more lines about its connections not written in the last %.0f s (%lld "
            "connections, %lld dropped at the handshake limits)",
            p->address, (long long)p->unlogged, PEER_LOG_S, (long long)p->opened, (long long)p->dropped);
    p->unlogged = p->opened = p->dropped = 0;
    p->lines = 0;
}

/* Ends the log windows that are over: their summaries written, the peers with no connection left
 * freed. `all`: every window (the end). */
static void peers_tick(stream_hub *hub, double now, int all)
{
    for (int b = 0; b < PEER_BUCKETS; b++) {
        stream_peer **link = &hub->peers[b];
        while (*link) {
            stream_peer *p = *link;
            if (all || now - p->window_start >= PEER_LOG_S) {
                peer_flush(hub, p);
                p->window_start = now;
                if (p->connections == 0) {
                    *link = p->next;
                    free(p);
                    continue;
                }
            }
            link = &p->next;
        }
    }
}

/* A line about a connection, within its address's allowance. */
static void peer_event(const viewer *v, const char *fmt, ...) HUB_PRINTF(2, 3);

static void peer_event(const viewer *v, const char *fmt, ...)
{
    stream_peer *p = v->from;
    if (p && p->lines >= PEER_LOG_LINES) {
        p->unlogged++;
        return;
    }
    if (p)
        p->lines++;
    va_list ap;
    va_start(ap, fmt);
    vevent(v, fmt, ap);
    va_end(ap);
}

/* The viewer leaves its handshake (it joined, was refused, or closes). */
static void end_handshake(stream_hub *hub, viewer *v)
{
    if (v->phase != PHASE_HANDSHAKE)
        return;
    hub->handshakes--;
    if (v->from)
        v->from->handshakes--;
}

/* ---- keyframe requests -------------------------------------------------------------------------- */

/* Writes the line that sums up the viewer's requests since the one logged, if any came. */
static void requests_flush(viewer *v, double now)
{
    if (v->requests > 0)
        peer_event(v, "%lld keyframe requests in the last %.0f s, %lld ignored (a snapshot follows one at most every "
                      "%.1f s)",
                   (long long)v->requests, now - v->requests_since, (long long)v->ignored, KEYFRAME_EVERY_S);
    v->requests_since = v->requests > 0 ? now : 0; /* still asking: a new window */
    v->requests = v->ignored = 0;
}

/* ---- closing ----------------------------------------------------------------------------------- */

static void close_viewer(stream_hub *hub, viewer *v, const char *why)
{
    requests_flush(v, net_now());
    end_handshake(hub, v);
    pthread_mutex_lock(&hub->lock);
    viewer **link = &hub->viewers;
    while (*link && *link != v)
        link = &(*link)->next;
    if (*link)
        *link = v->next;
    if (v->joined)
        hub->streaming--;
    drop_after(hub, v, 0);
    pthread_mutex_unlock(&hub->lock);
    if (why)
        peer_event(v, "%s", why);
    if (v->from)
        v->from->connections--;
    close(v->fd);
    free(v->queue);
    stream_wipe(v->nonce, sizeof v->nonce);
    free(v);
}

/* Closes a viewer that was streaming: "disconnected (how) after N packets, B bytes". */
static void close_disconnected(stream_hub *hub, viewer *v, const char *how)
{
    char line[256];
    snprintf(line, sizeof line, "disconnected (%s) after %llu packets, %llu bytes", how,
             (unsigned long long)v->packets, (unsigned long long)v->bytes);
    close_viewer(hub, v, line);
}

/* Closes a viewer that was refused (WELCOME with a status): its last line says why. */
static void close_refused(stream_hub *hub, viewer *v)
{
    char line[STREAM_WHY_BYTES + 32];
    snprintf(line, sizeof line, "disconnected (refused: %s)", v->refused);
    close_viewer(hub, v, line);
}

/* Drops the oldest connection in its handshake of `from` (NULL: of the peer with the most, the
 * server's limit), to make room for a new one. */
static void drop_oldest_handshake(stream_hub *hub, stream_peer *from)
{
    int per_address = from != NULL;
    if (!from) {
        for (int b = 0; b < PEER_BUCKETS; b++)
            for (stream_peer *p = hub->peers[b]; p; p = p->next)
                if (!from || p->handshakes > from->handshakes)
                    from = p;
    }
    viewer *oldest = NULL;
    for (viewer *v = hub->viewers; v; v = v->next)
        if (v->phase == PHASE_HANDSHAKE && (v->from == from || !from) && (!oldest || v->accepted <= oldest->accepted))
            oldest = v;
    if (!oldest)
        return;
    char line[256];
    if (per_address)
        snprintf(line, sizeof line,
                 "dropped during the handshake: %s has %d connections in their handshake, the most one address may "
                 "have (its oldest goes first)",
                 from->address, from->handshakes);
    else
        snprintf(line, sizeof line,
                 "dropped during the handshake: %d connections are in their handshake, the most the server takes "
                 "(the oldest of the address with the most goes first)",
                 hub->handshakes);
    hub->stats.rejected++;
    if (oldest->from)
        oldest->from->dropped++;
    close_viewer(hub, oldest, line);
}

static void add_viewer(stream_hub *hub, int fd, const char *peer);

static void accept_all(stream_hub *hub)
{
    for (;;) {
        char peer[NET_ADDRESS_BYTES];
        int fd = net_accept(hub->p.listener, peer);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED) {
                /* out of file descriptors, say: the pending connection stays; try again in a second */
                say(hub, STREAM_LOG_WARN, "cannot accept a connection: %s", strerror(errno));
                hub->accept_after = net_now() + 1.0;
            }
            return;
        }
        add_viewer(hub, fd, peer);
    }
}

/* The connections handed over by hub_adopt, taken by the network thread. */
static void adopt_pending(stream_hub *hub)
{
    pthread_mutex_lock(&hub->lock);
    adopted *list = hub->adopted;
    hub->adopted = NULL;
    pthread_mutex_unlock(&hub->lock);
    /* in the order they came */
    adopted *rev = NULL;
    while (list) {
        adopted *next = list->next;
        list->next = rev;
        rev = list;
        list = next;
    }
    while (rev) {
        adopted *next = rev->next;
        if (hub->finishing)
            close(rev->fd);
        else
            add_viewer(hub, rev->fd, rev->peer);
        free(rev);
        rev = next;
    }
}

/* A new connection (accepted or adopted, non-blocking): its handshake starts with HELLO. */
static void add_viewer(stream_hub *hub, int fd, const char *peer)
{
    {
        viewer *v = calloc(1, sizeof *v);
        int id = ++hub->next_id;
        hub->stats.connections++;
        if (!v || stream_random(v->nonce, sizeof v->nonce) != 0) {
            say(hub, STREAM_LOG_INFO, "%s %d (%s): refused: %s", hub->p.name ? hub->p.name : "viewer", id, peer,
                !v ? "out of memory" : "no random bytes for a nonce");
            hub->stats.rejected++;
            free(v);
            close(fd);
            return;
        }
        double now = net_now();
        char address[NET_ADDRESS_BYTES];
        peer_address(peer, address);
        stream_peer *from = peer_of(hub, address, now);
        /* Room for its handshake: made by dropping the oldest of its own address, or, when the
         * server has no room left, of the address that has the most. */
        if (from && from->handshakes >= PEER_HANDSHAKES)
            drop_oldest_handshake(hub, from);
        else if (hub->handshakes >= MAX_HANDSHAKES)
            drop_oldest_handshake(hub, NULL);
        v->id = id;
        v->hub = hub;
        v->fd = fd;
        snprintf(v->peer, sizeof v->peer, "%s", peer);
        v->from = from;
        v->phase = PHASE_HANDSHAKE;
        v->accepted = now;
        v->deadline = now + hub->p.handshake_s;
        hub->handshakes++;
        if (from) {
            from->connections++;
            from->handshakes++;
            from->opened++;
        }
        stream_hello_write(v->ctl, hub->p.token != NULL, v->nonce);
        v->ctl_bytes = STREAM_HELLO_BYTES;
        v->sync = SYNC_WAIT;
        pthread_mutex_lock(&hub->lock);
        v->next = hub->viewers;
        hub->viewers = v;
        pthread_mutex_unlock(&hub->lock);
        peer_event(v, "connected");
    }
}

/* The JOIN is complete (or cannot be one): answer it. Returns 0, or -1 when the viewer is closed. */
static int answer(stream_hub *hub, viewer *v)
{
    char why[STREAM_WHY_BYTES];
    pthread_mutex_lock(&hub->lock);
    int full = hub->streaming >= hub->p.max_viewers;
    pthread_mutex_unlock(&hub->lock);
    int status = stream_server_answer(v->in, v->in_bytes, hub->p.token, hub->p.token_bytes, v->nonce, full, v->ctl,
                                      why);
    if (status < 0) {
        char line[STREAM_WHY_BYTES + 32];
        snprintf(line, sizeof line, "rejected: %s", why);
        hub->stats.rejected++;
        close_viewer(hub, v, strstr(why, "greeting") ? "rejected: it sent something that is not a glcv stream "
                                                       "viewer's greeting"
                                                     : line);
        return -1;
    }
    v->ctl_bytes = STREAM_WELCOME_BYTES;
    v->ctl_sent = 0;
    v->in_bytes = 0;
    if (status != STREAM_ACCEPTED) {
        hub->stats.rejected++;
        v->close_after_ctl = 1;
        snprintf(v->refused, sizeof v->refused, "%s", why);
        peer_event(v, "rejected: %s", why);
        return 0;
    }
    end_handshake(hub, v);
    pthread_mutex_lock(&hub->lock);
    v->phase = PHASE_STREAMING;
    v->sync = SYNC_WAIT;
    v->joined = 1;
    hub->streaming++;
    hub->stats.joined++;
    pthread_cond_broadcast(&hub->joined_cond);
    pthread_mutex_unlock(&hub->lock);
    peer_event(v, "%s", hub->p.token ? "authenticated (the token's MAC checked both ways): waiting for a keyframe"
                                     : "joined (no token): waiting for a keyframe");
    return 0;
}

/* A request from a streaming viewer. Returns 0, or -1 when the viewer is closed. */
static int handle_request(stream_hub *hub, viewer *v)
{
    char why[STREAM_WHY_BYTES], text[STREAM_WHY_BYTES + 32];
    int type = 0;
    v->in_bytes = 0;
    if (stream_request_parse(v->in, STREAM_REQUEST_BYTES, &type, why) != 0) {
        snprintf(text, sizeof text, "dropped: it %s", why);
        close_viewer(hub, v, text);
        return -1;
    }
    if (type == STREAM_REQUEST_BYE) {
        close_disconnected(hub, v, "bye");
        return -1;
    }
    /* A snapshot follows a request at most every KEYFRAME_EVERY_S (one is on its way, or will be
     * soon: the others are ignored), and the requests are logged once per REQUEST_LOG_S: a viewer
     * that asks without pause costs neither snapshots nor log lines. */
    double now = net_now();
    int soon = v->keyframe_at > 0 && now - v->keyframe_at < KEYFRAME_EVERY_S;
    pthread_mutex_lock(&hub->lock);
    hub->stats.keyframe_requests++;
    int on_its_way = v->sync != SYNC_OK || v->ending;
    int act = !on_its_way && !soon;
    if (act) {
        resync(hub, v);
        v->quiet_resync = v->requests_since > 0;
    }
    pthread_mutex_unlock(&hub->lock);
    if (act)
        v->keyframe_at = now;
    if (v->requests_since == 0) {
        v->requests_since = now;
        if (act || on_its_way)
            peer_event(v, "asked for a keyframe%s",
                       act ? ": a snapshot follows" : " (one is on its way)");
        else
            peer_event(v, "asked for a keyframe (ignored: a snapshot followed one less than %.1f s ago)",
                       KEYFRAME_EVERY_S);
    } else {
        v->requests++;
        v->ignored += !act;
    }
    return 0;
}

/* Reads what the viewer sent, READ_BUDGET bytes at most (the poll loop comes back for more).
 * Returns 0, or -1 when the viewer is closed. */
static int read_viewer(stream_hub *hub, viewer *v)
{
    for (size_t budget = READ_BUDGET; budget > 0;) {
        uint8_t chunk[READ_CHUNK];
        int discard = v->phase == PHASE_CLOSING || v->close_after_ctl;
        /* In the handshake, nothing past JOIN: requests follow WELCOME. */
        int joining = v->phase == PHASE_HANDSHAKE && !discard;
        uint8_t *into = joining ? v->in + v->in_bytes : chunk;
        size_t want = joining ? STREAM_JOIN_BYTES - v->in_bytes : sizeof chunk;
        ssize_t n = recv(v->fd, into, want, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n <= 0) {
            const char *how = n == 0 ? "closed the connection" : strerror(errno);
            char line[160];
            if (v->close_after_ctl || (v->phase == PHASE_CLOSING && !v->joined)) {
                close_refused(hub, v);
            } else if (v->phase == PHASE_HANDSHAKE) {
                hub->stats.rejected++;
                snprintf(line, sizeof line, "left during the handshake (%s)", how);
                close_viewer(hub, v, line);
            } else {
                close_disconnected(hub, v, v->phase == PHASE_STREAMING ? how : "at the end of the stream");
            }
            return -1;
        }
        budget -= (size_t)n < budget ? (size_t)n : budget;
        if (discard)
            continue;
        if (joining) {
            v->in_bytes += (size_t)n;
            if ((!stream_join_prefix_ok(v->in, v->in_bytes) || v->in_bytes == STREAM_JOIN_BYTES) && answer(hub, v) != 0)
                return -1;
            continue;
        }
        /* Streaming: whole requests out of the chunk, a partial one kept in v->in. */
        for (size_t at = 0; at < (size_t)n;) {
            size_t take = STREAM_REQUEST_BYTES - v->in_bytes;
            take = take < (size_t)n - at ? take : (size_t)n - at;
            memcpy(v->in + v->in_bytes, chunk + at, take);
            v->in_bytes += take;
            at += take;
            if (v->in_bytes == STREAM_REQUEST_BYTES && handle_request(hub, v) != 0)
                return -1;
        }
    }
    return 0;
}

/* Writes what is pending: HELLO or WELCOME, then the queue. Returns 0, or -1 when the viewer is
 * closed. */
static int write_viewer(stream_hub *hub, viewer *v)
{
    while (v->ctl_sent < v->ctl_bytes) {
        ssize_t n = send_now(v->fd, v->ctl + v->ctl_sent, v->ctl_bytes - v->ctl_sent);
        if (n == 0)
            return 0;
        if (n < 0) {
            char line[128];
            snprintf(line, sizeof line, "disconnected during the handshake (%s)", strerror(errno));
            hub->stats.rejected += v->phase == PHASE_HANDSHAKE && !v->close_after_ctl;
            if (v->close_after_ctl)
                close_refused(hub, v);
            else
                close_viewer(hub, v, line);
            return -1;
        }
        v->ctl_sent += (size_t)n;
    }
    if (v->close_after_ctl) {
        /* WELCOME with a refusal is out: the viewer closes; wait for it briefly. */
        shutdown(v->fd, SHUT_WR);
        end_handshake(hub, v);
        v->phase = PHASE_CLOSING;
        v->close_after_ctl = 0;
        v->deadline = net_now() + CLOSE_WAIT_S;
        return 0;
    }
    if (v->phase != PHASE_STREAMING)
        return 0;
    for (;;) {
        pthread_mutex_lock(&hub->lock);
        stream_packet *p = v->count > 0 ? v->queue[0] : NULL;
        size_t sent = v->front_sent;
        int ending = v->ending;
        pthread_mutex_unlock(&hub->lock);
        if (!p) {
            if (ending) { /* END is out */
                shutdown(v->fd, SHUT_WR);
                v->phase = PHASE_CLOSING;
                v->deadline = net_now() + CLOSE_WAIT_S;
            }
            return 0;
        }
        ssize_t n = send_now(v->fd, p->data + sent, p->bytes - sent);
        if (n == 0)
            return 0;
        if (n < 0) {
            close_disconnected(hub, v, strerror(errno));
            return -1;
        }
        pthread_mutex_lock(&hub->lock);
        v->front_sent += (size_t)n;
        v->queued -= (size_t)n;
        hub->total_queued -= (size_t)n;
        v->bytes += (size_t)n;
        hub->stats.bytes_sent += (size_t)n;
        v->stalled_since = net_now();
        if (v->front_sent == p->bytes) {
            v->packets++;
            stream_packet_unref(&v->queue[0]);
            memmove(v->queue, v->queue + 1, (size_t)(v->count - 1) * sizeof *v->queue);
            v->count--;
            v->front_sent = 0;
            if (v->count == 0) {
                v->stalled_since = 0;
                if (v->sync == SYNC_DRAINING)
                    v->sync = SYNC_WAIT; /* caught up: the encoder's thread makes its snapshot */
            }
        }
        pthread_mutex_unlock(&hub->lock);
    }
}

static int has_output(stream_hub *hub, viewer *v)
{
    if (v->ctl_sent < v->ctl_bytes || v->close_after_ctl)
        return 1;
    if (v->phase != PHASE_STREAMING)
        return 0;
    pthread_mutex_lock(&hub->lock);
    int pending = v->count > 0 || v->ending;
    pthread_mutex_unlock(&hub->lock);
    return pending;
}

/* Deadlines: handshakes, stalled viewers, closing connections, the end; the log windows. */
static void check_deadlines(stream_hub *hub)
{
    double now = net_now();
    viewer *next = NULL;
    for (viewer *v = hub->viewers; v; v = next) {
        next = v->next;
        char line[160];
        if (v->requests_since > 0 && now - v->requests_since >= REQUEST_LOG_S)
            requests_flush(v, now);
        if (v->phase == PHASE_HANDSHAKE && v->close_after_ctl && now > v->deadline) {
            close_refused(hub, v); /* its answer could not be written in time */
        } else if (v->phase == PHASE_HANDSHAKE && (now > v->deadline || hub->finishing)) {
            hub->stats.rejected++;
            if (hub->finishing)
                snprintf(line, sizeof line, "dropped during the handshake: the server is ending");
            else
                snprintf(line, sizeof line, "rejected: no greeting within %.0f s (%zu bytes received)",
                         hub->p.handshake_s, v->in_bytes);
            close_viewer(hub, v, line);
        } else if (v->phase == PHASE_CLOSING && now > v->deadline) {
            if (v->joined)
                close_disconnected(hub, v, "closed by the server at the end of the stream");
            else
                close_refused(hub, v);
        } else if (v->phase == PHASE_STREAMING) {
            pthread_mutex_lock(&hub->lock);
            double since = v->stalled_since;
            size_t queued = v->queued;
            pthread_mutex_unlock(&hub->lock);
            int stalled = since > 0 && now - since > hub->p.stall_s;
            int late = hub->finishing && (now > hub->finish_deadline || !v->ending);
            if (stalled || late) {
                snprintf(line, sizeof line, "dropped: %s (%zu bytes still queued)",
                         late ? "still writing when the server ended" : "took no data for too long", queued);
                close_viewer(hub, v, line);
            }
        }
    }
    peers_tick(hub, now, 0);
}

static void *network_main(void *arg)
{
    stream_hub *hub = arg;
    struct pollfd *fds = NULL;
    viewer **owners = NULL;
    size_t capacity = 0;
    for (;;) {
        pthread_mutex_lock(&hub->lock);
        int quit = hub->quit, finishing = hub->finishing;
        pthread_mutex_unlock(&hub->lock);
        if (quit || (finishing && !hub->viewers))
            break;
        size_t count = 0;
        for (viewer *v = hub->viewers; v; v = v->next)
            count++;
        if (count + 2 > capacity) {
            capacity = 2 * (count + 2);
            struct pollfd *f = realloc(fds, capacity * sizeof *fds);
            viewer **o = f ? realloc(owners, capacity * sizeof *owners) : NULL;
            if (f)
                fds = f;
            if (o)
                owners = o;
            if (!f || !o) {
                say(hub, STREAM_LOG_ERROR, "out of memory in the network thread");
                break;
            }
        }
        size_t n = 0;
        fds[n] = (struct pollfd){hub->wake[0], POLLIN, 0};
        owners[n++] = NULL;
        int accepting = hub->p.listener >= 0 && !finishing && net_now() >= hub->accept_after;
        if (accepting) {
            fds[n] = (struct pollfd){hub->p.listener, POLLIN, 0};
            owners[n++] = NULL;
        }
        for (viewer *v = hub->viewers; v; v = v->next) {
            fds[n] = (struct pollfd){v->fd, (short)(POLLIN | (has_output(hub, v) ? POLLOUT : 0)), 0};
            owners[n++] = v;
        }
        int rc = poll(fds, n, TICK_MS);
        if (rc < 0 && errno != EINTR) {
            say(hub, STREAM_LOG_ERROR, "poll: %s", strerror(errno));
            break;
        }
        if (rc > 0 && (fds[0].revents & POLLIN)) {
            char buf[64];
            while (read(hub->wake[0], buf, sizeof buf) > 0)
                ;
            adopt_pending(hub);
        }
        /* Viewers polled this round, and any the wake-up left with output. */
        for (size_t i = 0; i < n; i++) {
            viewer *v = owners[i];
            if (!v)
                continue;
            short ev = rc > 0 ? fds[i].revents : 0;
            if ((ev & (POLLIN | POLLHUP | POLLERR)) && read_viewer(hub, v) != 0)
                continue;
            if (has_output(hub, v))
                write_viewer(hub, v);
        }
        /* After the viewers: accepting may drop connections that `owners` holds. */
        if (rc > 0 && accepting && (fds[1].revents & POLLIN))
            accept_all(hub);
        check_deadlines(hub);
    }
    /* The end: every connection closed, what the log windows held back summed up. */
    while (hub->viewers)
        close_viewer(hub, hub->viewers, NULL);
    peers_tick(hub, net_now(), 1);
    free(fds);
    free(owners);
    return NULL;
}

/* ---- start and finish -------------------------------------------------------------------------- */

int hub_start(const stream_hub_params *params, stream_hub **out)
{
    *out = NULL;
    stream_hub *hub = calloc(1, sizeof *hub);
    if (!hub) {
        if (params->listener >= 0)
            close(params->listener);
        stream_hub tmp = {.p = *params};
        say(&tmp, STREAM_LOG_ERROR, "out of memory");
        return -1;
    }
    hub->p = *params;
    if (pipe2(hub->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        say(hub, STREAM_LOG_ERROR, "pipe: %s", strerror(errno));
        if (params->listener >= 0)
            close(params->listener);
        free(hub);
        return -1;
    }
    if (hub->p.listener >= 0)
        net_set_nonblocking(hub->p.listener, 1);
    pthread_mutex_init(&hub->lock, NULL);
    pthread_cond_init(&hub->joined_cond, NULL);
    if (pthread_create(&hub->thread, NULL, network_main, hub) != 0) {
        say(hub, STREAM_LOG_ERROR, "cannot start the network thread");
        close(hub->wake[0]);
        close(hub->wake[1]);
        if (params->listener >= 0)
            close(params->listener);
        pthread_mutex_destroy(&hub->lock);
        pthread_cond_destroy(&hub->joined_cond);
        free(hub);
        return -1;
    }
    *out = hub;
    return 0;
}

int hub_adopt(stream_hub *hub, int fd, const char *peer)
{
    adopted *a = calloc(1, sizeof *a);
    if (!a || net_set_nonblocking(fd, 1) != 0) {
        free(a);
        close(fd);
        return -1;
    }
    a->fd = fd;
    snprintf(a->peer, sizeof a->peer, "%s", peer ? peer : "?");
    pthread_mutex_lock(&hub->lock);
    int finishing = hub->finishing;
    if (!finishing) {
        a->next = hub->adopted;
        hub->adopted = a;
    }
    pthread_mutex_unlock(&hub->lock);
    if (finishing) {
        free(a);
        close(fd);
        return -1;
    }
    wake(hub);
    return 0;
}

int hub_viewers(stream_hub *hub)
{
    pthread_mutex_lock(&hub->lock);
    int n = 0;
    for (viewer *v = hub->viewers; v; v = v->next)
        n++;
    n += hub->adopted != NULL;
    pthread_mutex_unlock(&hub->lock);
    return n;
}

void hub_finish(stream_hub **hubp, stream_end_reason reason, uint64_t frames, double drain_s, stream_hub_stats *stats)
{
    stream_hub *hub = hubp ? *hubp : NULL;
    if (!hub)
        return;
    stream_packet *end = stream_packet_new(STREAM_END_BYTES);
    if (end)
        stream_end_write(end->data, reason, frames);
    pthread_mutex_lock(&hub->lock);
    for (viewer *v = hub->viewers; v; v = v->next) {
        if (v->phase != PHASE_STREAMING)
            continue;
        if (end && push(hub, v, end) == 0)
            v->ending = 1; /* else closed at once (check_deadlines) */
    }
    hub->finishing = 1;
    hub->finish_deadline = net_now() + drain_s;
    pthread_mutex_unlock(&hub->lock);
    stream_packet_unref(&end);
    /* Handshakes in progress are dropped; the listener closes. */
    wake(hub);
    pthread_join(hub->thread, NULL);
    if (hub->p.listener >= 0)
        close(hub->p.listener);
    while (hub->adopted) {
        adopted *a = hub->adopted;
        hub->adopted = a->next;
        close(a->fd);
        free(a);
    }
    close(hub->wake[0]);
    close(hub->wake[1]);
    if (stats)
        *stats = hub->stats;
    pthread_mutex_destroy(&hub->lock);
    pthread_cond_destroy(&hub->joined_cond);
    free(hub);
    *hubp = NULL;
}
