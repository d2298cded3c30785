/* Camera leases shared by several 'glcv serve' instances (tools/service/cluster.c) against Debian's
 * nats-server, started here on a free loopback port in a temporary folder (skipped, 77, when it is
 * missing). Lease 3 s (a round every second) to keep it short. Cases:
 *   share       three instances over 12 cameras: after the registration round and two more each
 *               camera is held exactly once, 4 per instance; two more rounds change nothing;
 *   continuity  A reports frame 41 and stops without closing: within lease + period the other two
 *               take A's cameras, numbering from 177 (41 + 1 + the frames A may have handled since it
 *               reported: 1.5 x its 30 frames/s x the lease); each camera again held exactly once;
 *   close       B closes: C takes B's cameras in its next round (frames from B's last + 1);
 *   join        F joins while C holds all 12: C gives back the 6 above its share in its second round
 *               (the first that sees F only waits), F claims them (frames from C's last + 1); F
 *               closes, and C takes them again;
 *   capacity    (another bucket) an instance of capacity 3 never holds more than 3, and an
 *               unlimited one that joins takes the other 9;
 *   taken       a foreign write on one of the capacity-3 instance's keys: its next round loses
 *               that camera (and only it), and nobody claims it;
 *   unreported  (a third bucket) G claims 12 cameras it was told run at 30 frames/s and stops
 *               before it reports a frame: H takes them after the lease, numbering from 135 (what G
 *               may have handled: 1.5 x 30 x the lease), not from 0 again;
 *   down        after a round, the held cameras may run until lease - period after its start;
 *               nats-server stopped (SIGSTOP), then killed: a round fails (-1, nothing claimed or
 *               lost, that time unchanged) in under 3 s, and works again once the server goes on (SIGCONT); killed, a
 *               failed round lease - period after the last renewal stops every held camera;
 *               restarted on the same port and folder: the cameras are claimed again and renewed
 *               (the new frame is in the lease and in the frames bucket);
 *   params      malformed URLs, instance names, buckets, leases, an unreachable server: -1 with
 *               one line of error.
 * The library prints nothing: stdout and stderr go to a file while the cases run, which must stay
 * empty. */
#define _GNU_SOURCE

#include "cluster.h"
#include "serve_testlib.h"

#include <nats/nats.h>

#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LEASE_S 3.0

enum { CAMS = 12, LOG_LINES = 48 };

static st_server nats = {ST_NATS, 0, 0};
static char nats_url[64];

/* ---- Raw access to the buckets (what another party would write) ------------------------------------ */

typedef struct raw {
    natsConnection *nc;
    jsCtx *js;
    kvStore *kv;
} raw;

static bool raw_open(raw *r, const char *bucket)
{
    *r = (raw){0};
    return natsConnection_ConnectTo(&r->nc, nats_url) == NATS_OK && natsConnection_JetStream(&r->js, r->nc, NULL) == NATS_OK &&
           js_KeyValue(&r->kv, r->js, bucket) == NATS_OK;
}

static void raw_close(raw *r)
{
    kvStore_Destroy(r->kv);
    jsCtx_Destroy(r->js);
    natsConnection_Destroy(r->nc);
    *r = (raw){0};
}

/* The value of bucket's key ("" when missing) into text. */
static void raw_get(const char *bucket, const char *key, char *text, size_t size)
{
    raw r;
    text[0] = '\0';
    kvEntry *e = NULL;
    if (raw_open(&r, bucket) && kvStore_Get(&e, r.kv, key) == NATS_OK) {
        size_t n = (size_t)kvEntry_ValueLen(e) < size ? (size_t)kvEntry_ValueLen(e) : size - 1;
        memcpy(text, kvEntry_Value(e), n);
        text[n] = '\0';
    }
    kvEntry_Destroy(e);
    raw_close(&r);
}

/* ---- Instances ------------------------------------------------------------------------------------- */

static const char *ids[CAMS] = {"cam00", "cam01", "cam02", "cam03", "cam04", "cam05",
                                "cam06", "cam07", "cam08", "cam09", "cam10", "cam11"};

typedef struct inst {
    const char *name;
    svc_cluster *c;
    int held[CAMS], claim[CAMS], lose[CAMS];
    int64_t last[CAMS], first[CAMS];
    double fps[CAMS]; /* the frame rates reported (0: unknown) */
    int claims, loses; /* of the last round */
} inst;

static bool inst_open(inst *in, const char *name, const char *bucket, int capacity)
{
    memset(in, 0, sizeof *in);
    in->name = name;
    for (int k = 0; k < CAMS; k++)
        in->last[k] = -1;
    svc_cluster_params p = {.nats_url = nats_url, .bucket = bucket, .instance = name, .capacity = capacity,
                            .lease_s = LEASE_S, .logger = {st_log, (void *)name, GLCV_LOG_DEBUG}};
    char error[256] = "";
    if (svc_cluster_open(&p, &in->c, error, sizeof error) != 0) {
        fprintf(st_out, "  open %s: %s\n", name, error);
        return false;
    }
    return true;
}

/* One round; what it claims starts with its first frame, what it loses stops. */
static int inst_round(inst *in)
{
    int rc = svc_cluster_round(in->c, ids, CAMS, in->held, in->last, in->fps, in->claim, in->first, in->lose);
    in->claims = in->loses = 0;
    for (int k = 0; k < CAMS; k++) {
        if (in->claim[k]) {
            in->held[k] = 1;
            in->last[k] = in->first[k] - 1;
            in->claims++;
        }
        if (in->lose[k]) {
            in->held[k] = 0;
            in->loses++;
        }
    }
    return rc;
}

static int inst_count(const inst *in)
{
    int n = 0;
    for (int k = 0; k < CAMS; k++)
        n += in->held[k] != 0;
    return n;
}

/* Every camera held by exactly one of the n instances; what differs is printed. */
static bool exactly_once(inst *const *all, int n, int line)
{
    bool ok = true;
    for (int k = 0; k < CAMS; k++) {
        int holders = 0;
        char who[128] = "";
        for (int i = 0; i < n; i++)
            if (all[i]->held[k]) {
                holders++;
                size_t used = strlen(who), length = strlen(all[i]->name);
                if (used + 1 + length < sizeof who) {
                    who[used] = ' ';
                    memcpy(who + used + 1, all[i]->name, length + 1);
                }
            }
        if (holders != 1) {
            st_fail(line, "camera %s held by %d instances (%s )", ids[k], holders, who);
            ok = false;
        }
    }
    return ok;
}

static void set_frames(inst *in, int64_t frame)
{
    for (int k = 0; k < CAMS; k++)
        if (in->held[k])
            in->last[k] = frame;
}

/* ---- Cases ------------------------------------------------------------------------------------------- */

static inst A, B, C, D, E, F;

static void case_share(void)
{
    double started = st_now();
    int before = st_failures;
    inst *all[3] = {&A, &B, &C};
    if (!inst_open(&A, "inst-a", "T1", 0) || !inst_open(&B, "inst-b", "T1", 0) || !inst_open(&C, "inst-c", "T1", 0)) {
        st_fail(__LINE__, "open failed");
        return;
    }
    for (int i = 0; i < 3; i++) {
        ST_CHECK(inst_round(all[i]) == 0, "%s: registration round failed", all[i]->name);
        ST_CHECK(all[i]->claims == 0, "%s: claimed %d in the registration round", all[i]->name, all[i]->claims);
    }
    /* A saw itself alone and B two instances: their next rounds see more and claim nothing, the rounds
     * after claim */
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 3; i++)
            ST_CHECK(inst_round(all[i]) == 0, "%s: round failed", all[i]->name);
    for (int i = 0; i < 3; i++) {
        ST_CHECK(inst_count(all[i]) == 4, "%s holds %d cameras, expected 4", all[i]->name, inst_count(all[i]));
        ST_CHECK(svc_cluster_instances(all[i]->c) == 3, "%s sees %d instances, expected 3", all[i]->name,
              svc_cluster_instances(all[i]->c));
        for (int k = 0; k < CAMS; k++)
            ST_CHECK(!all[i]->claim[k] || all[i]->first[k] == 0, "%s: camera %s starts at %" PRId64 ", expected 0",
                  all[i]->name, ids[k], all[i]->first[k]);
    }
    exactly_once(all, 3, __LINE__);
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 3; i++) {
            ST_CHECK(inst_round(all[i]) == 0, "%s: round failed", all[i]->name);
            ST_CHECK(all[i]->claims == 0 && all[i]->loses == 0, "%s: a further round claimed %d, lost %d", all[i]->name,
                  all[i]->claims, all[i]->loses);
        }
    fprintf(st_out, "%s share: 3 instances x 12 cameras, 4 each, exactly once (%.2f s)\n",
            st_failures == before ? "ok  " : "FAIL", st_now() - started);
}

static void case_continuity(void)
{
    double started = st_now();
    int before = st_failures;
    inst *all[3] = {&A, &B, &C};
    int of_a[CAMS] = {0};
    set_frames(&A, 41);
    for (int k = 0; k < CAMS; k++)
        A.fps[k] = 30.0; /* the next holder skips 1.5 x 30 frames/s x the lease (3 s): 135 frames */
    set_frames(&B, 7);
    set_frames(&C, 7);
    ST_CHECK(inst_round(&A) == 0, "A: round failed");
    memcpy(of_a, A.held, sizeof of_a);
    double a_stopped = st_now(), taken_after = -1;
    double period = svc_cluster_period(B.c);
    ST_CHECK(period > 0.99 && period < 1.01, "period %.3f s, expected lease / 3 = 1 s", period);
    /* A stops here, without closing: B and C go on, one round each per period */
    while (st_now() - a_stopped < LEASE_S + 2 * period + 1.5) {
        st_sleep(period);
        for (int i = 1; i < 3; i++) {
            ST_CHECK(inst_round(all[i]) == 0, "%s: round failed", all[i]->name);
            ST_CHECK(all[i]->loses == 0, "%s lost %d cameras", all[i]->name, all[i]->loses);
            for (int k = 0; k < CAMS; k++)
                if (all[i]->claim[k]) {
                    ST_CHECK(of_a[k], "%s claimed camera %s, which was not A's", all[i]->name, ids[k]);
                    ST_CHECK(all[i]->first[k] == 177, "%s: camera %s continues from %" PRId64 ", expected 177",
                             all[i]->name, ids[k], all[i]->first[k]);
                    ST_CHECK(st_now() - a_stopped > LEASE_S - 0.3, "%s claimed camera %s %.2f s after A's last round: "
                          "before A's lease ran out", all[i]->name, ids[k], st_now() - a_stopped);
                }
        }
        if (inst_count(&B) + inst_count(&C) == CAMS) {
            taken_after = st_now() - a_stopped;
            break;
        }
    }
    if (taken_after < 0)
        st_fail(__LINE__, "B and C hold %d + %d cameras %.2f s after A stopped, expected 12", inst_count(&B),
                inst_count(&C), st_now() - a_stopped);
    else
        ST_CHECK(taken_after <= LEASE_S + period + 1.0,
                 "A's cameras taken after %.2f s, expected within lease + period "
                 "(%.2f s) and a little",
                 taken_after, LEASE_S + period);
    inst *live[2] = {&B, &C};
    exactly_once(live, 2, __LINE__);
    ST_CHECK(inst_count(&B) == 6 && inst_count(&C) == 6, "B holds %d, C %d: expected 6 each", inst_count(&B),
             inst_count(&C));
    ST_CHECK(svc_cluster_instances(B.c) == 2, "B sees %d instances, expected 2", svc_cluster_instances(B.c));
    char text[128];
    raw_get("T1_FRAMES", ids[0], text, sizeof text);
    ST_CHECK(strstr(text, "\"frame\":") != NULL, "frames bucket, %s: '%s'", ids[0], text);
    fprintf(st_out, "%s continuity: A's 4 cameras taken %.2f s after its last round, frames from 177 (%.2f s)\n",
            st_failures == before ? "ok  " : "FAIL", taken_after, st_now() - started);
}

static void case_close(void)
{
    double started = st_now();
    int before = st_failures;
    set_frames(&B, 99);
    ST_CHECK(inst_round(&B) == 0, "B: round failed");
    int of_b[CAMS];
    memcpy(of_b, B.held, sizeof of_b);
    ST_CHECK(inst_round(&C) == 0 && C.claims == 0, "C claimed %d while B still ran", C.claims);
    svc_cluster_close(&B.c);
    svc_cluster_close(&B.c); /* &NULL */
    memset(B.held, 0, sizeof B.held);
    ST_CHECK(inst_round(&C) == 0, "C: round failed");
    ST_CHECK(C.claims == 6, "C claimed %d cameras after B closed, expected 6", C.claims);
    for (int k = 0; k < CAMS; k++)
        if (C.claim[k]) {
            ST_CHECK(of_b[k], "C claimed camera %s, which was not B's", ids[k]);
            ST_CHECK(C.first[k] == 100, "C: camera %s continues from %" PRId64 ", expected 100", ids[k], C.first[k]);
        }
    ST_CHECK(inst_count(&C) == CAMS, "C holds %d cameras, expected 12", inst_count(&C));
    ST_CHECK(svc_cluster_instances(C.c) == 1, "C sees %d instances, expected 1", svc_cluster_instances(C.c));
    /* A, stopped since, closes now: its releases expect its old revisions, so C keeps everything */
    svc_cluster_close(&A.c);
    ST_CHECK(inst_round(&C) == 0 && C.loses == 0 && C.claims == 0, "C after A's close: claimed %d, lost %d", C.claims,
          C.loses);
    fprintf(st_out, "%s close: B's 6 cameras taken by C in its next round, frames from 100 (%.2f s)\n",
            st_failures == before ? "ok  " : "FAIL", st_now() - started);
}

/* A camera whose first holder stops before it reports a frame: the claim left a record of no frame
 * with the rate the holder was told to assume, and the next holder numbers past what the first one
 * may have handled (1.5 x 30 frames/s x the 3 s lease: from 135), not from 0 again. */
static inst G, H;

static void case_unreported(void)
{
    double started = st_now();
    int before = st_failures;
    if (!inst_open(&G, "inst-g", "T5", 0)) {
        st_fail(__LINE__, "open failed");
        return;
    }
    for (int k = 0; k < CAMS; k++)
        G.fps[k] = 30.0;
    for (int r = 0; r < 3 && inst_count(&G) < CAMS; r++)
        ST_CHECK(inst_round(&G) == 0, "G: round %d failed", r);
    ST_CHECK(inst_count(&G) == CAMS, "G holds %d cameras, expected 12", inst_count(&G));
    for (int k = 0; k < CAMS; k++)
        ST_CHECK(G.first[k] == 0, "G: camera %s starts at %" PRId64 ", expected 0", ids[k], G.first[k]);
    char text[128];
    raw_get("T5_FRAMES", ids[0], text, sizeof text);
    ST_CHECK(strstr(text, "\"frame\":-1") != NULL, "frames bucket after the claim, %s: '%s'", ids[0], text);
    /* G handles frames and stops before its next round: nothing reported; H starts */
    double g_stopped = st_now();
    if (!inst_open(&H, "inst-h", "T5", 0)) {
        st_fail(__LINE__, "open failed");
        return;
    }
    double period = svc_cluster_period(H.c);
    ST_CHECK(inst_round(&H) == 0, "H: registration round failed");
    while (inst_count(&H) < CAMS && st_now() - g_stopped < LEASE_S + 2 * period + 1.5) {
        st_sleep(period);
        ST_CHECK(inst_round(&H) == 0, "H: round failed");
        for (int k = 0; k < CAMS; k++)
            if (H.claim[k])
                ST_CHECK(H.first[k] == 135, "H: camera %s continues from %" PRId64 ", expected 135", ids[k],
                         H.first[k]);
    }
    ST_CHECK(inst_count(&H) == CAMS, "H holds %d cameras %.2f s after G stopped, expected 12", inst_count(&H),
             st_now() - g_stopped);
    raw_get("T5_FRAMES", ids[0], text, sizeof text);
    ST_CHECK(strstr(text, "\"frame\":134") != NULL, "frames bucket after H's claim, %s: '%s'", ids[0], text);
    fprintf(st_out, "%s unreported: G's cameras, claimed and never reported, continue from 135 on H (%.2f s)\n",
            st_failures == before ? "ok  " : "FAIL", st_now() - started);
}

static void case_join(void)
{
    double started = st_now();
    int before = st_failures;
    if (!inst_open(&F, "inst-f", "T1", 0)) {
        st_fail(__LINE__, "open failed");
        return;
    }
    set_frames(&C, 120);
    ST_CHECK(inst_round(&F) == 0 && F.claims == 0, "F's registration round: %d claims", F.claims);
    /* C's next round sees two instances where it saw one: it waits a round; then gives back 6 */
    ST_CHECK(inst_round(&C) == 0 && C.loses == 0, "C gave back %d cameras in the round that first saw F", C.loses);
    ST_CHECK(inst_round(&C) == 0 && C.loses == 6 && inst_count(&C) == 6,
             "C, the round after: gave back %d, holds %d; expected 6 and 6 (its share of 2 instances)", C.loses,
             inst_count(&C));
    int gave[CAMS];
    for (int k = 0; k < CAMS; k++) {
        gave[k] = C.lose[k] != 0;
        ST_CHECK(!C.lose[k] || C.lose[k] == 2, "C: camera %s lost as %d, expected 2 (given back)", ids[k], C.lose[k]);
    }
    ST_CHECK(inst_round(&F) == 0 && F.claims == 6 && inst_count(&F) == 6, "F claimed %d, holds %d; expected 6",
             F.claims, inst_count(&F));
    for (int k = 0; k < CAMS; k++)
        if (F.claim[k]) {
            ST_CHECK(gave[k], "F claimed camera %s, which C did not give back", ids[k]);
            ST_CHECK(F.first[k] == 121, "F: camera %s continues from %" PRId64 ", expected 121", ids[k], F.first[k]);
        }
    inst *two[2] = {&C, &F};
    exactly_once(two, 2, __LINE__);
    for (int r = 0; r < 2; r++)
        ST_CHECK(inst_round(&C) == 0 && inst_round(&F) == 0 && C.claims + C.loses + F.claims + F.loses == 0,
                 "a further round: C claimed %d, lost %d; F claimed %d, lost %d", C.claims, C.loses, F.claims,
                 F.loses);
    /* F leaves: C takes its cameras again */
    svc_cluster_close(&F.c);
    memset(F.held, 0, sizeof F.held);
    ST_CHECK(inst_round(&C) == 0 && C.claims == 6 && inst_count(&C) == CAMS, "C after F left: claimed %d, holds %d",
             C.claims, inst_count(&C));
    fprintf(st_out, "%s join: F joins C's 12 cameras: C gives 6 back, F claims them, frames from 121 (%.2f s)\n",
            st_failures == before ? "ok  " : "FAIL", st_now() - started);
}

static void case_capacity(void)
{
    double started = st_now();
    int before = st_failures;
    if (!inst_open(&D, "inst-d", "T2", 3)) {
        st_fail(__LINE__, "open failed");
        return;
    }
    for (int r = 0; r < 3; r++) {
        ST_CHECK(inst_round(&D) == 0, "D: round failed");
        ST_CHECK(inst_count(&D) == (r == 0 ? 0 : 3), "round %d: D (capacity 3) holds %d cameras", r, inst_count(&D));
    }
    if (!inst_open(&E, "inst-e", "T2", 0)) {
        st_fail(__LINE__, "open failed");
        return;
    }
    for (int r = 0; r < 4; r++) {
        ST_CHECK(inst_round(&E) == 0, "E: round failed");
        ST_CHECK(inst_round(&D) == 0, "D: round failed");
        ST_CHECK(inst_count(&D) <= 3, "round %d: D (capacity 3) holds %d cameras", r, inst_count(&D));
    }
    ST_CHECK(inst_count(&D) == 3 && inst_count(&E) == 9, "D holds %d, E %d: expected 3 and 9", inst_count(&D),
          inst_count(&E));
    inst *all[2] = {&D, &E};
    exactly_once(all, 2, __LINE__);
    fprintf(st_out, "%s capacity: capacity 3 holds 3, the unlimited one 9 (%.2f s)\n",
            st_failures == before ? "ok  " : "FAIL", st_now() - started);
}

static void case_taken(void)
{
    double started = st_now();
    int before = st_failures;
    int victim = -1;
    for (int k = 0; k < CAMS && victim < 0; k++)
        if (D.held[k])
            victim = k;
    if (victim < 0) {
        st_fail(__LINE__, "D holds no camera");
        return;
    }
    raw r;
    char key[64];
    snprintf(key, sizeof key, "cameras.%s", ids[victim]);
    bool put = raw_open(&r, "T2") && kvStore_PutString(NULL, r.kv, key, "{\"instance\":\"intruder\",\"frame\":5}") == NATS_OK;
    raw_close(&r);
    ST_CHECK(put, "cannot write %s", key);
    ST_CHECK(inst_round(&E) == 0 && E.claims == 0, "E: claimed %d", E.claims);
    ST_CHECK(inst_round(&D) == 0, "D: round failed");
    ST_CHECK(D.loses == 1 && D.lose[victim], "D lost %d cameras (camera %s %s), expected exactly %s", D.loses,
             ids[victim], D.lose[victim] ? "lost" : "kept", ids[victim]);
    ST_CHECK(D.claims == 0, "D claimed %d", D.claims);
    ST_CHECK(inst_round(&D) == 0 && D.loses == 0 && D.claims == 0, "D's next round: claimed %d, lost %d", D.claims,
          D.loses);
    ST_CHECK(inst_round(&E) == 0 && E.claims == 0 && E.loses == 0, "E: claimed %d, lost %d", E.claims, E.loses);
    fprintf(st_out, "%s taken: a foreign write on %s: D loses it in its next round (%.2f s)\n",
            st_failures == before ? "ok  " : "FAIL", ids[victim], st_now() - started);
}

static void case_down(void)
{
    double started = st_now();
    int before = st_failures;
    double period = LEASE_S / 3, t0 = st_now();
    ST_CHECK(inst_round(&C) == 0, "C's round before the stop failed");
    /* the cameras may run until lease - period after the round's start */
    double t1 = st_now(), hold = svc_cluster_hold_until(C.c);
    ST_CHECK(hold >= t0 + LEASE_S - period && hold <= t1 + LEASE_S - period,
             "C's hold after a round of %.3f to %.3f s: %.3f s, expected within the round + %.1f s", t0, t1, hold,
             LEASE_S - period);
    /* a server that does not answer (stopped): the round gives up after its request timeout */
    kill(nats.pid, SIGSTOP);
    double t = st_now();
    int rc = inst_round(&C);
    double hung = st_now() - t, since = st_now() - t0;
    kill(nats.pid, SIGCONT);
    ST_CHECK(rc == -1 && hung < 3, "C's round with NATS stopped: %d in %.2f s, expected -1 in under 3 s", rc, hung);
    /* a failed round renews nothing: the time the cameras may run stays */
    ST_CHECK(svc_cluster_hold_until(C.c) == hold, "C's hold moved from %.3f to %.3f s in a failed round", hold,
             svc_cluster_hold_until(C.c));
    /* it keeps the cameras, unless it hung until the leases had a period left (a loaded machine):
     * then it stops them all, and claims them again once NATS answers */
    bool may_stop = since >= LEASE_S - period, must_stop = hung >= LEASE_S - period;
    ST_CHECK(C.claims == 0 && (C.loses == 0 ? !must_stop : C.loses == CAMS && may_stop),
             "C's failed round (%.2f s, %.2f s after its last renewal) claimed %d, lost %d", hung, since, C.claims,
             C.loses);
    int stopped = C.loses;
    rc = -1;
    for (double until = st_now() + LEASE_S + 5; (rc != 0 || inst_count(&C) < CAMS) && st_now() < until;)
        if ((rc = inst_round(&C)) != 0 || inst_count(&C) < CAMS)
            st_sleep(0.2);
    ST_CHECK(rc == 0 && inst_count(&C) == CAMS && (stopped || (C.claims == 0 && C.loses == 0)),
             "C's rounds with NATS going on: %d, holds %d, claimed %d, lost %d", rc, inst_count(&C), C.claims,
             C.loses);
    /* a server that died, for longer than a lease: C's first failed round keeps its cameras, a round
     * lease - period after its last renewal stops them all (another instance could take them) */
    ST_CHECK(inst_round(&C) == 0 && inst_count(&C) == CAMS, "C before the kill: holds %d", inst_count(&C));
    double renewed = st_now();
    st_server_stop(&nats, SIGKILL);
    t = st_now();
    rc = inst_round(&C);
    double took = st_now() - t;
    ST_CHECK(rc == -1, "C's round with NATS down returned %d, expected -1", rc);
    ST_CHECK(took < 3, "C's round with NATS down took %.2f s", took);
    ST_CHECK(C.claims == 0 && C.loses == 0, "C's first failed round claimed %d, lost %d", C.claims, C.loses);
    st_sleep(LEASE_S - (st_now() - renewed));
    t = st_now();
    rc = inst_round(&C);
    double took2 = st_now() - t;
    ST_CHECK(rc == -1 && took2 < 3, "C's second round with NATS down: %d in %.2f s", rc, took2);
    ST_CHECK(C.loses == CAMS && inst_count(&C) == 0,
             "C's round %.1f s after its last renewal: %d cameras stopped, %d held; expected all %d stopped", 
             st_now() - renewed, C.loses, inst_count(&C), CAMS);
    if (!st_server_start(&nats, 10)) {
        st_fail(__LINE__, "nats-server did not start again");
        return;
    }
    /* back: C claims the cameras again once its old leases ran out */
    double restarted = st_now();
    while (inst_count(&C) < CAMS && st_now() - restarted < 10) {
        if (inst_round(&C) != 0 || inst_count(&C) < CAMS)
            st_sleep(0.2);
    }
    double back = st_now() - restarted;
    ST_CHECK(inst_count(&C) == CAMS, "C holds %d cameras %.1f s after the restart, expected %d", inst_count(&C), back,
             CAMS);
    set_frames(&C, 77);
    ST_CHECK(inst_round(&C) == 0 && C.claims == 0 && C.loses == 0, "C's renewal after the restart: claimed %d, lost %d",
             C.claims, C.loses);
    char lease[128], frame[128];
    raw_get("T1", "cameras.cam05", lease, sizeof lease);
    raw_get("T1_FRAMES", "cam05", frame, sizeof frame);
    ST_CHECK(!strcmp(lease, "{\"instance\":\"inst-c\",\"frame\":77}"), "lease of cam05 after the restart: '%s'", lease);
    ST_CHECK(!strcmp(frame, "{\"frame\":77,\"fps\":0.000}"), "frames of cam05 after the restart: '%s'", frame);
    ST_CHECK(inst_round(&C) == 0 && C.claims == 0 && C.loses == 0, "C: claimed %d, lost %d", C.claims, C.loses);
    ST_CHECK(inst_round(&D) == 0 && inst_round(&E) == 0, "D or E: round failed after the restart");
    fprintf(st_out,
            "%s down: stopped server: failed round in %.2f s; killed: failed rounds in %.3f and %.3f s; rounds back "
            "%.2f s after the restart (%.2f s)\n",
            st_failures == before ? "ok  " : "FAIL", hung, took, took2, back, st_now() - started);
}

static void expect_refused(int line, const svc_cluster_params *p, const char *what)
{
    svc_cluster *c = NULL;
    char error[256] = "";
    double t = st_now();
    int rc = svc_cluster_open(p, &c, error, sizeof error);
    if (rc != -1 || c)
        st_fail(line, "%s: open returned %d", what, rc);
    else if (!error[0] || strchr(error, '\n'))
        st_fail(line, "%s: error '%s' is not one line", what, error);
    else if (st_now() - t > 3)
        st_fail(line, "%s: open took %.2f s", what, st_now() - t);
    svc_cluster_close(&c);
}

static void case_params(int closed_port)
{
    double started = st_now();
    int before = st_failures;
    svc_cluster_params p = {.nats_url = nats_url, .instance = "ok-name", .lease_s = LEASE_S,
                            .logger = {st_log, (void *)"params", GLCV_LOG_DEBUG}};
    const char *urls[] = {"http://127.0.0.1:4222", "nats://", "nats://:4222", "nats://host:0", "nats://host:65536",
                          "nats://host:12x", "nats://ho st", "nats://[::1", "127.0.0.1:4222", "",
                          "nats://a:4222,", ",nats://a:4222", "nats://a:4222,,nats://b", "nats://a:4222,mqtt://b"};
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        svc_cluster_params q = p;
        q.nats_url = urls[i];
        char what[80];
        snprintf(what, sizeof what, "url '%s'", urls[i]);
        expect_refused(__LINE__, &q, what);
    }
    svc_cluster_params q = p;
    q.nats_url = NULL;
    expect_refused(__LINE__, &q, "no url");
    const char *names[] = {"", "bad name", "a.b", "x>", "a*", "0123456789012345678901234567890123456789012345678901234567890123456789"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        q = p;
        q.instance = names[i];
        expect_refused(__LINE__, &q, names[i]);
    }
    q = p;
    q.bucket = "bad.bucket";
    expect_refused(__LINE__, &q, "bucket 'bad.bucket'");
    const double leases[] = {0.5, -1, 1e9};
    for (size_t i = 0; i < sizeof leases / sizeof leases[0]; i++) {
        q = p;
        q.lease_s = leases[i];
        char what[64];
        snprintf(what, sizeof what, "lease %g", leases[i]);
        expect_refused(__LINE__, &q, what);
    }
    q = p;
    q.capacity = -1;
    expect_refused(__LINE__, &q, "capacity -1");
    char closed[64];
    snprintf(closed, sizeof closed, "nats://127.0.0.1:%d", closed_port);
    q = p;
    q.nats_url = closed;
    expect_refused(__LINE__, &q, "a port nobody listens on");
    ST_CHECK(svc_cluster_open(&p, NULL, NULL, 0) == -1, "open without a place for the object");
    /* a list of servers: the closed one is passed over for the live one */
    char list[160];
    snprintf(list, sizeof list, "%s, %s", closed, nats_url);
    q = p;
    q.nats_url = list;
    q.bucket = "T4";
    svc_cluster *listed = NULL;
    char why[256] = "";
    ST_CHECK(svc_cluster_open(&q, &listed, why, sizeof why) == 0, "a list of servers, one closed: %s", why);
    svc_cluster_close(&listed);
    /* lease 0 is the default, 10 s, and a 64-character name is fine */
    q = p;
    q.lease_s = 0;
    q.bucket = "T3";
    q.instance = "0123456789012345678901234567890123456789012345678901234567890123";
    svc_cluster *c = NULL;
    char error[256] = "";
    ST_CHECK(svc_cluster_open(&q, &c, error, sizeof error) == 0, "lease 0 (default): %s", error);
    ST_CHECK(c && svc_cluster_period(c) > 3.33 && svc_cluster_period(c) < 3.34, "default period %.3f s",
          c ? svc_cluster_period(c) : -1);
    svc_cluster_close(&c);
    q.instance = NULL; /* HOSTNAME-PID */
    ST_CHECK(svc_cluster_open(&q, &c, error, sizeof error) == 0, "default instance name: %s", error);
    svc_cluster_close(&c);
    fprintf(st_out, "%s params: malformed URLs, names, buckets, leases and an unreachable server (%.2f s)\n",
            st_failures == before ? "ok  " : "FAIL", st_now() - started);
}

/* ---- Main -------------------------------------------------------------------------------------------- */

int main(void)
{
    if (access(ST_NATS_BIN, X_OK) != 0) {
        printf("skipped: %s is missing\n", ST_NATS_BIN);
        return 77;
    }
    if (st_begin("cluster") != 0)
        return 1;
    nats.port = st_free_port();
    int closed_port = st_free_port();
    snprintf(nats_url, sizeof nats_url, "nats://127.0.0.1:%d", nats.port);
    if (nats.port < 0 || closed_port < 0 || closed_port == nats.port)
        st_fail(__LINE__, "no free port on the loopback");
    else if (!st_server_start(&nats, 10))
        st_fail(__LINE__, "nats-server did not start");
    if (st_failures == 0) {
        case_params(closed_port);
        case_share();
        if (st_failures == 0)
            case_continuity();
        if (st_failures == 0)
            case_close();
        if (st_failures == 0)
            case_join();
        case_capacity();
        if (st_failures == 0)
            case_taken();
        case_unreported();
        case_down();
    }
    if (st_failures || getenv("TEST_SERVE_CLUSTER_LOG"))
        st_log_show("the last log lines", LOG_LINES);
    inst *all[8] = {&A, &B, &C, &D, &E, &F, &G, &H};
    for (int i = 0; i < 8; i++)
        svc_cluster_close(&all[i]->c);
    st_server_stop(&nats, SIGTERM);
    /* no nats_Close(): the service never calls it, and libnats' global state stays reachable */
    return st_end();
}
