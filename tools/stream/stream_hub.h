/* The viewers of one delta stream, for 'glcv stream serve' and for each camera of the live view of
 * 'glcv serve': one network thread accepts connections (or takes those handed to it), runs each one's
 * handshake (stream_proto.h) against a deadline, reads the viewers' requests and writes their
 * queues, all sockets non-blocking in one poll loop, so a viewer that stalls, sends garbage or
 * disappears costs the others nothing.
 *
 * Packets reach the viewers through hub_publish (in stream order, from one thread): each is one
 * reference-counted buffer, compressed once, queued for every viewer that is in step. A viewer's
 * queue has a byte budget: a packet that would go over it (the viewer falls behind) empties the
 * queue instead, but for the packet being written, and the viewer waits for a snapshot keyframe
 * once that one is out. A viewer that joins, or asks for a keyframe, waits for one too. Which
 * viewers wait is decided as packets are published, in the stream's order: a keyframe serves every
 * viewer waiting; after any other packet the viewers waiting get nothing more until the snapshot
 * that the thread owning the encoder makes after its next frame (hub_snapshot_wanted), one for
 * all of them. So each viewer's picture follows from what it was sent, and the stream of every
 * other viewer stays as it was.
 *
 * Every event is one line to the log function (stderr without one): connected, authenticated (or
 * joined, without a token), rejected and why, asked for a keyframe, fell behind, disconnected. */
#ifndef GLCV_TOOLS_STREAM_HUB_H
#define GLCV_TOOLS_STREAM_HUB_H

#include "stream_proto.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* A packet (a delta packet, or END) shared by the queues that hold it. */
typedef struct stream_packet {
    atomic_int refs;
    size_t bytes;
    uint64_t frame;
    int key;      /* a keyframe (periodic or snapshot): it serves a viewer waiting for one */
    int snapshot; /* a snapshot: only for the viewers waiting for one */
    double capture_time; /* when its frame was captured (monotonic seconds; 0: unknown) */
    uint8_t data[];
} stream_packet;

/* A packet of `bytes` bytes (contents undefined), one reference; NULL when out of memory. */
stream_packet *stream_packet_new(size_t bytes);
stream_packet *stream_packet_ref(stream_packet *p);
/* Drops a reference (the last one frees it); accepts NULL and &NULL. */
void stream_packet_unref(stream_packet **p);

/* The levels of the hub's log lines. */
enum { STREAM_LOG_INFO = 0, STREAM_LOG_WARN = 1, STREAM_LOG_ERROR = 2 };

typedef struct stream_hub_params {
    int listener;           /* a listening socket, which the hub closes; -1: none (hub_adopt only) */
    const uint8_t *token;   /* the shared token, or NULL: none (kept by the caller while the hub runs) */
    size_t token_bytes;
    size_t queue_bytes;     /* each viewer's byte budget */
    int max_viewers;        /* viewers streaming at once; more are refused (SERVER_FULL) */
    double handshake_s;     /* a connection that has not completed its handshake by then is dropped */
    double stall_s;         /* a viewer that takes no byte for this long while it has some queued is dropped */
    const char *name;       /* what a connection is called in the log ("viewer" when NULL) */
    /* Where the log lines go (one line each, no newline; called on the hub's threads); NULL:
     * stderr, as "glcv: [warning: |error: ]LINE". */
    void (*log)(void *user, int level, const char *line);
    void *log_user;
} stream_hub_params;

/* What the viewers did, for the summary. */
typedef struct stream_hub_stats {
    int connections;   /* accepted connections */
    int joined;        /* completed handshakes */
    int rejected;      /* refused or dropped during the handshake */
    int64_t snapshots; /* snapshot packets queued (one per viewer served) */
    int64_t fell_behind;
    int64_t keyframe_requests;
    uint64_t bytes_sent;  /* to all viewers, packets and END */
    size_t peak_queued;   /* the most bytes queued for all viewers at once */
} stream_hub_stats;

typedef struct stream_hub stream_hub;

/* Creates the hub and starts its thread. 0, or -1 after logging the error. */
int hub_start(const stream_hub_params *params, stream_hub **out);

/* Hands a connected socket to the hub (from any thread): it becomes a viewer as an accepted
 * connection does, its handshake first; `peer` names it in the log. The hub owns `fd` from here,
 * even on failure (-1: out of memory, or the hub is finishing). */
int hub_adopt(stream_hub *hub, int fd, const char *peer);

/* Connections the hub holds (in their handshake, streaming, or handed over and not yet taken). */
int hub_viewers(stream_hub *hub);

/* Waits until `count` viewers have joined, or stop() (may be NULL) is true: 1 when they have. */
int hub_wait_for_viewers(stream_hub *hub, int count, int (*stop)(void));

/* Queues `p` (takes a reference of its own) for every viewer in step; a keyframe also for every
 * viewer waiting for one; a snapshot (p->snapshot) only for the viewers waiting for one. Then
 * every viewer still waiting is marked as waiting for the next snapshot (hub_snapshot_wanted).
 * Called by one thread, in the stream's order. */
void hub_publish(stream_hub *hub, stream_packet *p);

/* Whether viewers wait for a snapshot since the last call: the thread that owns the encoder asks
 * after each frame, and makes one snapshot for all of them. */
int hub_snapshot_wanted(stream_hub *hub);

/* Ends the stream: queues END for every viewer, drops the handshakes in progress, stops accepting,
 * waits until every queue is written (at most `drain_s` seconds; a viewer that takes longer is
 * dropped), closes every connection and joins the thread; *stats gets the counters. Frees the
 * hub. Accepts NULL. */
void hub_finish(stream_hub **hub, stream_end_reason reason, uint64_t frames, double drain_s, stream_hub_stats *stats);

#endif
