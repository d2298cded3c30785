/* Cameras shared by several 'glcv serve' instances, on one host or many, through leases in a NATS
 * JetStream key-value bucket (libnats). Every instance runs the same camera list; each camera is
 * run by the one instance that holds its lease.
 *
 * Buckets (created when missing): BUCKET (history 1, max age = the lease) holds
 *   cameras.ID    the lease of camera ID: {"instance":"NAME","frame":F}
 *   instances.NAME  the instance's heartbeat: {"capacity":C}
 * and BUCKET_FRAMES (no max age) holds, per camera ID, the last frame index its holder reported and
 * its frame rate then ({"frame":F,"fps":R}), so that the next holder numbers on from there: it
 * starts at F + 1 + ceil(1.5 R period), past the frames the last holder may have handled after its
 * last report, so that no index (and no event id) is used twice.
 *
 * Each round (every lease / 3 s) an instance renews its heartbeat and the leases it holds (an
 * update that expects the revision it last wrote: if another instance wrote since, the camera is
 * lost to it), then claims free cameras (a create, which fails when the key exists) up to its
 * share: at most its capacity and at most L, the smallest level at which the live instances (those
 * with a heartbeat), each taking min(its capacity, L), cover every camera (without capacities:
 * ceil(cameras / live instances)). A lease held for a camera the caller no longer marks as held is
 * released; a held camera whose lease lapsed with nobody else taking it is renewed, not lost. An
 * instance that dies stops renewing: its keys expire after the lease, and
 * the others claim its cameras in their next rounds, within lease + lease / 3 s. The first round
 * after open only registers the heartbeat, so that instances started together see each other
 * before they claim. svc_cluster_close deletes the instance's keys, so the others take its cameras
 * at once. One thread at a time; messages through the logger only. */
#ifndef GLCV_SERVICE_CLUSTER_H
#define GLCV_SERVICE_CLUSTER_H

#include <glcv/core.h>

#include <stddef.h>
#include <stdint.h>

typedef struct svc_cluster svc_cluster;

typedef struct svc_cluster_params {
    const char *nats_url; /* "nats://HOST[:PORT]" */
    const char *bucket;   /* NULL: "GLCV_LEASES" (and "GLCV_LEASES_FRAMES") */
    const char *instance; /* NULL: "HOSTNAME-PID"; [A-Za-z0-9_-]{1,64} */
    int capacity;         /* cameras at most; 0: no limit */
    double lease_s;       /* 0: 10 s; at least 1 */
    int replicas;         /* the buckets' replicas when they are created; 0: 1 */
    glcv_logger logger;
} svc_cluster_params;

/* Connects, creates the buckets when missing and writes the heartbeat. Returns 0, or -1 with one
 * line in `error` (NATS unreachable, JetStream off, a bad name). */
int svc_cluster_open(const svc_cluster_params *params, svc_cluster **out, char *error, size_t size);

/* Seconds between rounds: lease / 3. */
double svc_cluster_period(const svc_cluster *c);

/* One round over the `count` cameras of the list (ids[k]). In: held[k] nonzero where this instance
 * runs camera k, last_frame[k] its last frame index (-1: none yet), fps[k] its frames a second (NULL
 * or 0: unknown; for a camera not held, the rate to assume if it is claimed now and lost before a
 * report: the next claimer skips 1.5 x that rate x the lease). Out: claim[k] = 1 where camera k is now this instance's to start, first_frame[k]
 * then the index its frames continue from (see above; 0 for a camera never run); lose[k] = 1 where a
 * held camera's lease was taken by another instance, 2 where this instance gave it back because it
 * held more than its share (an instance joined): stop it. Returns 0, or -1 when NATS cannot be reached this round: nothing is claimed, and the held
 * cameras keep running while their leases may still be valid; once they could not be renewed for
 * lease - period, lose[k] = 1 for every held camera (stop them: the server drops the leases a period
 * later and another instance may claim them: a camera does not run on two instances). */
int svc_cluster_round(svc_cluster *c, const char *const *ids, int count, const int *held, const int64_t *last_frame,
                      const double *fps, int *claim, int64_t *first_frame, int *lose);

/* The time (net_now(): CLOCK_MONOTONIC seconds) until which the held cameras may run: lease - period
 * after the start of the last round that renewed them (their leases run from the writes, later; their
 * frames were reported before it). A round waits on NATS for seconds when a server is lost (a
 * connection, the listing, each write wait for their time-outs), and the leases may run out
 * meanwhile: past this time the caller stops handling the held cameras' frames, whatever round it
 * runs, so that the next holder, which numbers on past 1.5 x rate x lease frames after the last
 * report, never reuses an index. 0 when c is NULL. */
double svc_cluster_hold_until(const svc_cluster *c);

/* Live instances seen in the last round (this one included). */
int svc_cluster_instances(const svc_cluster *c);

/* Deletes this instance's leases and heartbeat (so that the others claim its cameras at once),
 * then disconnects; *c = NULL. Accepts &NULL. */
void svc_cluster_close(svc_cluster **c);

#endif
