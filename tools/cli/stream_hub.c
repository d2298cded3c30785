/* The viewers of 'glcv stream serve'; see stream_hub.h.
 *
 * One mutex guards the list of viewers, their sync states and queues and the counters. Only the
 * network thread adds and removes viewers and takes packets off the front of a queue; hub_publish
 * appends and, when a viewer falls behind, removes everything but the front packet, which the
 * network thread may be writing; so the network thread writes without holding the lock. */
#define _GNU_SOURCE

#include "stream_hub.h"

#include "cli.h"
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

enum {
    TICK_MS = 100,           /* the longest poll: deadlines and the end are checked this often */
    MAX_HANDSHAKES = 64,     /* connections in their handshake at once; more are closed at once */
    CLOSE_WAIT_S = 2,        /* after END: how long the viewer has to close its side */
    READ_CHUNK = 4096
};

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

typedef struct viewer {
    struct viewer *next;
    int id, fd;
    char peer[NET_ADDRESS_BYTES];
    phase phase;
    double deadline; /* handshake; closing */
    uint8_t nonce[STREAM_NONCE_BYTES];
    uint8_t in[STREAM_JOIN_BYTES]; /* JOIN, or a request */
    size_t in_bytes;
    uint8_t ctl[STREAM_WELCOME_BYTES]; /* HELLO or WELCOME, written before the queue */
    size_t ctl_bytes, ctl_sent;
    int close_after_ctl; /* refused: close once WELCOME is out */
    int joined;          /* accepted: counted in hub->streaming */
    /* under the lock */
    sync_state sync;
    stream_packet **queue; /* queue[0] is the front */
    int count, capacity;
    size_t front_sent; /* bytes of queue[0] written */
    size_t queued;     /* bytes queued, less front_sent */
    int ending;        /* END is queued: close once the queue is out */
    double stalled_since; /* when it last took a byte while it had some queued (0: nothing queued) */
    uint64_t packets, bytes, snapshots, fell_behind;
} viewer;

struct stream_hub {
    stream_hub_params p;
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

static void event(const viewer *v, const char *fmt, ...) CLI_PRINTF(2, 3);

static void event(const viewer *v, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "glcv: viewer %d (%s): %s\n", v->id, v->peer, text);
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
                event(v, "in step from %s %llu", p->snapshot ? "a snapshot of frame" : "keyframe",
                      (unsigned long long)p->frame);
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

static void close_viewer(stream_hub *hub, viewer *v, const char *why)
{
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
        event(v, "%s", why);
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

static int handshakes(const stream_hub *hub)
{
    int n = 0;
    for (const viewer *v = hub->viewers; v; v = v->next)
        n += v->phase == PHASE_HANDSHAKE;
    return n;
}

static void accept_all(stream_hub *hub)
{
    for (;;) {
        char peer[NET_ADDRESS_BYTES];
        int fd = net_accept(hub->p.listener, peer);
        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED) {
                /* out of file descriptors, say: the pending connection stays; try again in a second */
                fprintf(stderr, "glcv: warning: cannot accept a connection: %s\n", strerror(errno));
                hub->accept_after = net_now() + 1.0;
            }
            return;
        }
        viewer *v = calloc(1, sizeof *v);
        int id = ++hub->next_id;
        hub->stats.connections++;
        if (!v || handshakes(hub) >= MAX_HANDSHAKES || stream_random(v->nonce, sizeof v->nonce) != 0) {
            fprintf(stderr, "glcv: viewer %d (%s): refused: %s\n", id, peer,
                    !v ? "out of memory" : handshakes(hub) >= MAX_HANDSHAKES ? "too many handshakes at once"
                                                                               : "no random bytes for a nonce");
            hub->stats.rejected++;
            free(v);
            close(fd);
            continue;
        }
        v->id = id;
        v->fd = fd;
        snprintf(v->peer, sizeof v->peer, "%s", peer);
        v->phase = PHASE_HANDSHAKE;
        v->deadline = net_now() + hub->p.handshake_s;
        stream_hello_write(v->ctl, hub->p.token != NULL, v->nonce);
        v->ctl_bytes = STREAM_HELLO_BYTES;
        v->sync = SYNC_WAIT;
        pthread_mutex_lock(&hub->lock);
        v->next = hub->viewers;
        hub->viewers = v;
        pthread_mutex_unlock(&hub->lock);
        event(v, "connected");
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
        hub->stats.rejected++;
        close_viewer(hub, v, "rejected: it sent something that is not a glcv stream viewer's greeting");
        return -1;
    }
    v->ctl_bytes = STREAM_WELCOME_BYTES;
    v->ctl_sent = 0;
    v->in_bytes = 0;
    if (status != STREAM_ACCEPTED) {
        hub->stats.rejected++;
        v->close_after_ctl = 1;
        event(v, "rejected: %s", why);
        return 0;
    }
    pthread_mutex_lock(&hub->lock);
    v->phase = PHASE_STREAMING;
    v->sync = SYNC_WAIT;
    v->joined = 1;
    hub->streaming++;
    hub->stats.joined++;
    pthread_cond_broadcast(&hub->joined_cond);
    pthread_mutex_unlock(&hub->lock);
    event(v, "%s", hub->p.token ? "authenticated (the token's MAC checked both ways): waiting for a keyframe"
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
    pthread_mutex_lock(&hub->lock);
    hub->stats.keyframe_requests++;
    int act = v->sync == SYNC_OK && !v->ending;
    if (act)
        resync(hub, v);
    pthread_mutex_unlock(&hub->lock);
    event(v, "%s", act ? "asked for a keyframe: a snapshot follows" : "asked for a keyframe (one is on its way)");
    return 0;
}

/* Reads what the viewer sent. Returns 0, or -1 when the viewer is closed. */
static int read_viewer(stream_hub *hub, viewer *v)
{
    for (;;) {
        uint8_t discard[READ_CHUNK];
        size_t want = v->phase == PHASE_HANDSHAKE   ? STREAM_JOIN_BYTES - v->in_bytes
                      : v->phase == PHASE_STREAMING ? STREAM_REQUEST_BYTES - v->in_bytes
                                                    : sizeof discard;
        uint8_t *into = v->phase == PHASE_CLOSING || v->close_after_ctl ? discard : v->in + v->in_bytes;
        if (v->close_after_ctl)
            want = sizeof discard;
        ssize_t n = recv(v->fd, into, want, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n <= 0) {
            const char *how = n == 0 ? "closed the connection" : strerror(errno);
            char line[160];
            if (v->close_after_ctl) {
                close_viewer(hub, v, NULL); /* refused, and logged so */
            } else if (v->phase == PHASE_HANDSHAKE) {
                hub->stats.rejected++;
                snprintf(line, sizeof line, "left during the handshake (%s)", how);
                close_viewer(hub, v, line);
            } else {
                close_disconnected(hub, v, v->phase == PHASE_STREAMING ? how : "at the end of the stream");
            }
            return -1;
        }
        if (into == discard)
            continue;
        v->in_bytes += (size_t)n;
        if (v->phase == PHASE_HANDSHAKE) {
            if (!stream_join_prefix_ok(v->in, v->in_bytes) || v->in_bytes == STREAM_JOIN_BYTES) {
                if (answer(hub, v) != 0)
                    return -1;
            }
        } else if (v->in_bytes == STREAM_REQUEST_BYTES) {
            if (handle_request(hub, v) != 0)
                return -1;
        }
    }
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
            close_viewer(hub, v, v->close_after_ctl ? NULL : line);
            return -1;
        }
        v->ctl_sent += (size_t)n;
    }
    if (v->close_after_ctl) {
        /* WELCOME with a refusal is out: the viewer closes; wait for it briefly. */
        shutdown(v->fd, SHUT_WR);
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

/* Deadlines: handshakes, stalled viewers, closing connections, the end. */
static void check_deadlines(stream_hub *hub)
{
    double now = net_now();
    viewer *next = NULL;
    for (viewer *v = hub->viewers; v; v = next) {
        next = v->next;
        char line[160];
        if (v->phase == PHASE_HANDSHAKE && v->close_after_ctl && now > v->deadline) {
            close_viewer(hub, v, NULL); /* refused, and its answer could not be written in time */
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
                close_viewer(hub, v, NULL); /* refused */
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
                fprintf(stderr, "glcv: error: out of memory in the network thread\n");
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
            fprintf(stderr, "glcv: error: poll: %s\n", strerror(errno));
            break;
        }
        if (rc > 0 && (fds[0].revents & POLLIN)) {
            char buf[64];
            while (read(hub->wake[0], buf, sizeof buf) > 0)
                ;
        }
        if (rc > 0 && accepting && (fds[1].revents & POLLIN))
            accept_all(hub);
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
        check_deadlines(hub);
    }
    /* The end: every connection closed. */
    while (hub->viewers)
        close_viewer(hub, hub->viewers, NULL);
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
        close(params->listener);
        return cli_out_of_memory();
    }
    hub->p = *params;
    if (pipe2(hub->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        cli_error("pipe: %s", strerror(errno));
        close(params->listener);
        free(hub);
        return CLI_FAIL;
    }
    net_set_nonblocking(hub->p.listener, 1);
    pthread_mutex_init(&hub->lock, NULL);
    pthread_cond_init(&hub->joined_cond, NULL);
    if (pthread_create(&hub->thread, NULL, network_main, hub) != 0) {
        cli_error("cannot start the network thread");
        close(hub->wake[0]);
        close(hub->wake[1]);
        close(params->listener);
        pthread_mutex_destroy(&hub->lock);
        pthread_cond_destroy(&hub->joined_cond);
        free(hub);
        return CLI_FAIL;
    }
    *out = hub;
    return CLI_OK;
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
    close(hub->wake[0]);
    close(hub->wake[1]);
    if (stats)
        *stats = hub->stats;
    pthread_mutex_destroy(&hub->lock);
    pthread_cond_destroy(&hub->joined_cond);
    free(hub);
    *hubp = NULL;
}
