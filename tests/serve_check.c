/* Checks the events of a 'glcv serve' run against the masks the same run wrote (the configuration's
 * `masks` folder), for test_serve.sh. The events come from a file of JSON lines (stdout, or what
 * mosquitto_sub printed) or from a NATS JetStream stream. For each camera of the configuration
 * (whose fraction_every must be 0):
 *   - a fraction event for every mask, equal to the mask's foreground share, and each zone's share
 *     of the pixels whose centres a point-in-polygon test puts inside it;
 *   - the motion events of the camera and of each zone: exactly those the rule gives on those
 *     fractions (frame, since_frame, state), applied here by a scan of the sequence;
 *   - the status: up before its first frame, down with `--ended` at the end ("the file ended").
 * Events with the same id are one event (at-least-once); --exact says none may repeat.
 *
 * usage: serve_check CONFIG (--file EVENTS.jsonl | --nats URL STREAM) [--exact] [--ended] [--masks DIR]
 *
 * --masks DIR: the masks of another run on the same files, for a run that wrote none (DIR instead of
 * the configuration's `masks`).
 *
 * With --cluster, the cameras of several instances after one was killed at KILLED_AT (seconds
 * since 1970): each camera has events within SECONDS after it, and its fraction events, in time
 * order, have increasing frame indices that never jump by more than MAXGAP.
 *
 * usage: serve_check --cluster URL STREAM KILLED_AT SECONDS MAXGAP ID...
 *
 * With --replicas, that each named JetStream stream (a key-value bucket B is the stream KV_B) is
 * kept by N servers, all current; prints each one's leader ("STREAM: leader NAME").
 *
 * usage: serve_check --replicas URL N STREAM... */
#define _GNU_SOURCE /* getline */

#include "config.h"
#include "objects.h"
#include "serve_testlib.h"

#include <glcv/glcv.h>

#include <cjson/cJSON.h>
#include <nats/nats.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int failures;

#define FAIL(...)                                                                                   \
    do {                                                                                            \
        failures++;                                                                                 \
        printf("FAIL: ");                                                                           \
        printf(__VA_ARGS__);                                                                        \
        printf("\n");                                                                               \
    } while (0)

typedef struct event {
    char *id;
    cJSON *json;
} event;

static event *events;
static int n_events, cap_events, repeats;

static void add_event(const char *text, size_t length)
{
    cJSON *o = cJSON_ParseWithLength(text, length);
    if (!o) {
        FAIL("not JSON: %.*s", (int)length, text);
        return;
    }
    /* the id as glcv makes it: rebuilt from the fields, so that repeats are found without headers */
    const cJSON *type = cJSON_GetObjectItem(o, "type"), *frame = cJSON_GetObjectItem(o, "frame");
    const cJSON *cam = cJSON_GetObjectItem(o, "camera"), *state = cJSON_GetObjectItem(o, "state");
    const cJSON *zone = cJSON_GetObjectItem(o, "zone"), *time = cJSON_GetObjectItem(o, "time");
    const cJSON *object = cJSON_GetObjectItem(o, "id");
    char id[512];
    snprintf(id, sizeof id, "%s:%s:%s:%.0f:%s:%.0f:%s", cJSON_IsString(cam) ? cam->valuestring : "?",
             cJSON_IsString(type) ? type->valuestring : "?", cJSON_IsString(zone) ? zone->valuestring : "",
             cJSON_IsNumber(object) ? object->valuedouble : -1, cJSON_IsString(state) ? state->valuestring : "",
             cJSON_IsNumber(frame) ? frame->valuedouble : -2,
             cJSON_IsString(type) && !strcmp(type->valuestring, "status") && cJSON_IsString(time) ? time->valuestring
                                                                                                  : "");
    for (int i = 0; i < n_events; i++)
        if (!strcmp(events[i].id, id)) {
            repeats++;
            cJSON_Delete(o);
            return;
        }
    if (n_events == cap_events) {
        cap_events = cap_events ? 2 * cap_events : 1024;
        events = realloc(events, (size_t)cap_events * sizeof *events);
        if (!events) {
            printf("serve_check: out of memory\n");
            exit(1);
        }
    }
    events[n_events].id = strdup(id);
    events[n_events++].json = o;
}

static int read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("serve_check: cannot read %s\n", path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
            line[--n] = '\0';
        if (n > 0)
            add_event(line, (size_t)n);
    }
    free(line);
    fclose(f);
    return 0;
}

/* Every message of the stream, by sequence. */
static int read_nats(const char *url, const char *stream)
{
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    natsStatus s = natsConnection_ConnectTo(&nc, url);
    if (s == NATS_OK)
        s = natsConnection_JetStream(&js, nc, NULL);
    if (s == NATS_OK)
        s = js_GetStreamInfo(&si, js, stream, NULL, &jerr);
    if (s != NATS_OK) {
        printf("serve_check: NATS %s, stream %s: %s\n", url, stream, natsStatus_GetText(s));
    } else {
        for (uint64_t seq = si->State.FirstSeq; seq <= si->State.LastSeq && seq > 0; seq++) {
            natsMsg *m = NULL;
            if (js_GetMsg(&m, js, stream, seq, NULL, &jerr) == NATS_OK) {
                add_event(natsMsg_GetData(m), (size_t)natsMsg_GetDataLength(m));
                natsMsg_Destroy(m);
            }
        }
        printf("serve_check: %llu messages in the stream %s\n", (unsigned long long)si->State.Msgs, stream);
    }
    jsStreamInfo_Destroy(si);
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    return s == NATS_OK ? 0 : -1;
}

static int inside(const svc_zone *z, double px, double py)
{
    int in = 0;
    for (int i = 0, j = z->n_points - 1; i < z->n_points; j = i++) {
        const svc_point a = z->points[i], b = z->points[j];
        if ((a.y > py) != (b.y > py) && px < (b.x - a.x) * (py - a.y) / (b.y - a.y) + a.x)
            in = !in;
    }
    return in;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The rule scanned over a region's fractions, a run of frames at a time: a camera that goes down
 * (downs: the last frame seen before each) ends a motion there and starts still. Checks the region's
 * motion events against it. */
static void check_motion(const char *cam, const char *zone, const svc_motion *m, const double *fr, const long *frame,
                         int n, const long *downs, int n_downs)
{
    enum { MOST = 8192 };
    static long wf[MOST], ws[MOST];
    static int wstate[MOST];
    int want = 0, got = 0, moving = 0, f = 0;
    for (int d = 0; d <= n_downs && want < MOST - 1; d++) {
        int stop = f; /* the segment: frames up to the down's frame (all that are left after the last) */
        while (stop < n && (d == n_downs || frame[stop] <= downs[d]))
            stop++;
        while (f < stop && want < MOST - 1) {
            int k = 0;
            while (f + k < stop && (moving ? fr[f + k] < m->end : fr[f + k] >= m->start))
                k++;
            int need = moving ? m->end_frames : m->start_frames;
            if (k >= need) {
                wf[want] = frame[f + need - 1];
                ws[want] = frame[f];
                wstate[want++] = !moving;
                moving = !moving;
                f += need;
            } else {
                f += k > 0 ? k : 1;
            }
        }
        if (d < n_downs && moving) { /* ended by the camera going down */
            wf[want] = ws[want] = downs[d];
            wstate[want++] = 0;
            moving = 0;
        }
    }
    for (int i = 0; i < n_events; i++) {
        const cJSON *o = events[i].json;
        if (strcmp(st_json_text(o, "type"), "motion") != 0 || strcmp(st_json_text(o, "camera"), cam) != 0 ||
            strcmp(st_json_text(o, "zone"), zone) != 0)
            continue;
        if (got >= want)
            FAIL("%s%s%s: motion %s at frame %g: no such change in the masks", cam, zone[0] ? "/" : "", zone,
                 st_json_text(o, "state"), st_json_number(o, "frame"));
        else if (st_json_number(o, "frame") != wf[got] || st_json_number(o, "since_frame") != ws[got] ||
                 strcmp(st_json_text(o, "state"), wstate[got] ? "start" : "end") != 0)
            FAIL("%s%s%s: change %d is %s at frame %g since %g; the masks give %s at %ld since %ld", cam,
                 zone[0] ? "/" : "", zone, got, st_json_text(o, "state"), st_json_number(o, "frame"),
                 st_json_number(o, "since_frame"), wstate[got] ? "start" : "end", wf[got], ws[got]);
        got++;
    }
    if (got < want)
        FAIL("%s%s%s: %d motion events, the masks give %d", cam, zone[0] ? "/" : "", zone, got, want);
    printf("serve_check: %s%s%s: %d motion changes, %d downs\n", cam, zone[0] ? "/" : "", zone, want, n_downs);
}

/* The tracked objects the masks give (objects.c, run here on the masks the service wrote): their
 * start and end events, and the boxes of each frame, for comparison with what the service sent. */
typedef struct expected_object {
    svc_object o;
    int start;
    int64_t frame;
    int found;
} expected_object;

static expected_object *expected;
static int n_expected, cap_expected;

static void expect_object(void *user, const svc_object *o, int start, int64_t frame)
{
    (void)user;
    if (n_expected == cap_expected) {
        cap_expected = cap_expected ? 2 * cap_expected : 256;
        expected = realloc(expected, (size_t)cap_expected * sizeof *expected);
        if (!expected) {
            printf("serve_check: out of memory\n");
            exit(1);
        }
    }
    expected[n_expected++] = (expected_object){*o, start, frame, 0};
}

static int same_box(const cJSON *box, const svc_object *o)
{
    return cJSON_GetArraySize(box) == 4 && cJSON_GetArrayItem(box, 0)->valuedouble == o->x &&
           cJSON_GetArrayItem(box, 1)->valuedouble == o->y && cJSON_GetArrayItem(box, 2)->valuedouble == o->width &&
           cJSON_GetArrayItem(box, 3)->valuedouble == o->height;
}

/* The camera's object events against `expected`: each one sent once or more (ids dedup), with its
 * frame and box; none other. */
static void check_objects(const svc_camera *c)
{
    int got = 0;
    for (int i = 0; i < n_events; i++) {
        const cJSON *o = events[i].json;
        if (strcmp(st_json_text(o, "camera"), c->id) != 0 || strcmp(st_json_text(o, "type"), "object") != 0)
            continue;
        got++;
        int start = !strcmp(st_json_text(o, "state"), "start"), match = 0;
        for (int k = 0; k < n_expected && !match; k++) {
            expected_object *x = &expected[k];
            if (x->start != start || (double)x->o.id != st_json_number(o, "id"))
                continue;
            match = 1;
            x->found = 1;
            if ((double)x->frame != st_json_number(o, "frame") || !same_box(cJSON_GetObjectItem(o, "box"), &x->o) ||
                (double)x->o.first_frame != st_json_number(o, "first_frame") ||
                (!start && (double)x->o.last_frame != st_json_number(o, "last_frame")))
                FAIL("%s: object %lld %s: frame %g, the masks give frame %lld (box %d,%d %dx%d)", c->id,
                     (long long)x->o.id, start ? "start" : "end", st_json_number(o, "frame"), (long long)x->frame,
                     x->o.x, x->o.y, x->o.width, x->o.height);
        }
        if (!match)
            FAIL("%s: object event %g %s that the masks do not give", c->id, st_json_number(o, "id"),
                 st_json_text(o, "state"));
    }
    int missing = 0;
    for (int k = 0; k < n_expected; k++)
        if (!expected[k].found && missing++ < 5)
            FAIL("%s: object %lld %s at frame %lld not received", c->id, (long long)expected[k].o.id,
                 expected[k].start ? "start" : "end", (long long)expected[k].frame);
    printf("serve_check: %s: %d object events, %d from the masks\n", c->id, got, n_expected);
}

static void check_camera(const svc_config *cfg, const svc_camera *c, int ended)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", cfg->masks, c->id);
    DIR *d = opendir(dir);
    if (!d) {
        FAIL("%s: no masks folder %s", c->id, dir);
        return;
    }
    char **names = NULL;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (strstr(de->d_name, "_mask.png")) {
            names = realloc(names, (size_t)(n + 1) * sizeof *names);
            names[n++] = strdup(de->d_name);
        }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, compare_names);
    double *fr = calloc((size_t)(n + 1) * (size_t)(c->n_zones + 1), sizeof *fr);
    long *frame = calloc((size_t)n + 1, sizeof *frame);
    svc_objects *objects = NULL;
    enum { MAX_NOW = 64 };
    svc_object *now = calloc((size_t)(n + 1) * MAX_NOW, sizeof *now); /* per mask: its objects */
    int *n_now = calloc((size_t)n + 1, sizeof *n_now);
    n_expected = 0;
    for (int i = 0; i < n; i++) {
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        glcv_image mask = {0};
        if (glcv_image_load(path, GLCV_PIXEL_GRAY8, NULL, &mask) != GLCV_OK) {
            FAIL("cannot load %s", path);
            continue;
        }
        frame[i] = atol(names[i] + 6);
        size_t stride = mask.stride ? mask.stride : (size_t)mask.width;
        if (c->objects.enabled && !objects && svc_objects_create(&c->objects, mask.width, mask.height, &objects) != 0)
            FAIL("%s: out of memory", c->id);
        if (objects && now && n_now) {
            svc_objects_frame(objects, mask.data, stride, frame[i], expect_object, NULL);
            n_now[i] = svc_objects_current(objects, now + (size_t)i * MAX_NOW, MAX_NOW);
        }
        long on = 0;
        for (int y = 0; y < mask.height; y++)
            for (int x = 0; x < mask.width; x++)
                on += mask.data[(size_t)y * stride + (size_t)x] != 0;
        fr[i] = (double)on / ((double)mask.width * mask.height);
        for (int z = 0; z < c->n_zones; z++) {
            long zin = 0, zon = 0;
            for (int y = 0; y < mask.height; y++)
                for (int x = 0; x < mask.width; x++)
                    if (inside(&c->zones[z], x + 0.5, y + 0.5)) {
                        zin++;
                        zon += mask.data[(size_t)y * stride + (size_t)x] != 0;
                    }
            fr[(size_t)(z + 1) * (size_t)n + (size_t)i] = zin ? (double)zon / (double)zin : 0.0;
        }
        glcv_image_free(&mask);
    }
    /* the fraction events, one per mask, in order */
    /* status_before: the last status before the first frame's event (a camera that could not be opened
     * when it started says down first, then up with its first frame) */
    int seen = 0, first_status = -1, last_status = -1, first_frame = -1, status_before = -1;
    for (int i = 0; i < n_events; i++) {
        const cJSON *o = events[i].json;
        if (strcmp(st_json_text(o, "camera"), c->id) != 0)
            continue;
        if (!strcmp(st_json_text(o, "type"), "status")) {
            first_status = first_status < 0 ? i : first_status;
            last_status = i;
            if (first_frame < 0)
                status_before = i;
            continue;
        }
        if (strcmp(st_json_text(o, "type"), "fraction") != 0)
            continue;
        first_frame = first_frame < 0 ? i : first_frame;
        if (seen >= n) {
            FAIL("%s: a fraction event for frame %g, after the last mask", c->id, st_json_number(o, "frame"));
            continue;
        }
        if (st_json_number(o, "frame") != frame[seen] || fabs(st_json_number(o, "fraction") - fr[seen]) > 1e-6)
            FAIL("%s: fraction event %d: frame %g fraction %.6f; the mask frame_%06ld gives %.6f", c->id, seen,
                 st_json_number(o, "frame"), st_json_number(o, "fraction"), frame[seen], fr[seen]);
        const cJSON *boxes = cJSON_GetObjectItem(o, "objects");
        if (objects && n_now && (!cJSON_IsArray(boxes) || cJSON_GetArraySize(boxes) != n_now[seen]))
            FAIL("%s: frame %ld: %d objects in the fraction event, the masks give %d", c->id, frame[seen],
                 cJSON_IsArray(boxes) ? cJSON_GetArraySize(boxes) : -1, n_now[seen]);
        for (int k = 0; objects && n_now && cJSON_IsArray(boxes) && k < cJSON_GetArraySize(boxes) && k < n_now[seen];
             k++) {
            const cJSON *b = cJSON_GetArrayItem(boxes, k);
            const svc_object *w = &now[(size_t)seen * MAX_NOW + (size_t)k];
            if (cJSON_GetArraySize(b) != 5 || cJSON_GetArrayItem(b, 0)->valuedouble != (double)w->id ||
                cJSON_GetArrayItem(b, 1)->valuedouble != w->x || cJSON_GetArrayItem(b, 2)->valuedouble != w->y ||
                cJSON_GetArrayItem(b, 3)->valuedouble != w->width || cJSON_GetArrayItem(b, 4)->valuedouble != w->height)
                FAIL("%s: frame %ld: object %d of the fraction event is not %lld at %d,%d %dx%d", c->id, frame[seen], k,
                     (long long)w->id, w->x, w->y, w->width, w->height);
        }
        const cJSON *zs = cJSON_GetObjectItem(o, "zones");
        for (int z = 0; z < c->n_zones; z++) {
            double want = fr[(size_t)(z + 1) * (size_t)n + (size_t)seen], got = st_json_number(zs, c->zones[z].name);
            if (fabs(got - want) > 1e-6)
                FAIL("%s: frame %ld zone %s: fraction %.6f, the mask gives %.6f", c->id, frame[seen], c->zones[z].name,
                     got, want);
        }
        seen++;
    }
    if (seen != n || n == 0)
        FAIL("%s: %d fraction events for %d masks", c->id, seen, n);
    if (first_status < 0 || (first_frame < 0 && strcmp(st_json_text(events[first_status].json, "state"), "up") != 0) ||
        (first_frame >= 0 && (status_before < 0 || strcmp(st_json_text(events[status_before].json, "state"), "up") != 0)))
        FAIL("%s: no status 'up' before the first frame's event", c->id);
    if (ended && (last_status < 0 || strcmp(st_json_text(events[last_status].json, "state"), "down") != 0 ||
                  strcmp(st_json_text(events[last_status].json, "reason"), "the file ended") != 0))
        FAIL("%s: the last status is not 'down' because the file ended", c->id);
    long *downs = calloc((size_t)n_events + 1, sizeof *downs);
    int n_downs = 0;
    for (int i = 0; downs && i < n_events; i++) {
        const cJSON *o = events[i].json;
        if (!strcmp(st_json_text(o, "camera"), c->id) && !strcmp(st_json_text(o, "type"), "status") &&
            !strcmp(st_json_text(o, "state"), "down"))
            downs[n_downs++] = (long)st_json_number(o, "frame");
    }
    check_motion(c->id, "", &c->motion, fr, frame, n, downs, n_downs);
    for (int z = 0; z < c->n_zones; z++)
        check_motion(c->id, c->zones[z].name, &c->zones[z].motion, fr + (size_t)(z + 1) * (size_t)n, frame, n, downs,
                     n_downs);
    if (objects) {
        if (ended) /* the camera went down at its end: every object ends */
            svc_objects_end_all(objects, expect_object, NULL);
        check_objects(c);
    }
    svc_objects_destroy(&objects);
    free(now);
    free(n_now);
    free(downs);
    printf("serve_check: %s: %d masks, %d fraction events\n", c->id, n, seen);
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    free(fr);
    free(frame);
}

/* "2026-11-28T07:40:01.123Z" as seconds since 1970 (NAN when malformed). */
static double parse_time(const char *s)
{
    struct tm tm = {0};
    int ms = 0;
    if (sscanf(s, "%d-%d-%dT%d:%d:%d.%dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec,
               &ms) != 7)
        return NAN;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (double)timegm(&tm) + ms / 1000.0;
}

typedef struct stamp {
    double time;
    long frame;
} stamp;

static int by_time(const void *a, const void *b)
{
    const stamp *x = a, *y = b;
    return (x->time > y->time) - (x->time < y->time);
}

static int check_cluster(int argc, char **argv)
{
    if (argc < 8) {
        printf("usage: serve_check --cluster URL STREAM KILLED_AT SECONDS MAXGAP ID...\n");
        return 1;
    }
    double killed = atof(argv[4]), limit = atof(argv[5]);
    long maxgap = atol(argv[6]);
    if (read_nats(argv[2], argv[3]) != 0)
        return 1;
    stamp *st = calloc((size_t)n_events + 1, sizeof *st);
    for (int a = 7; st && a < argc; a++) {
        int n = 0;
        for (int i = 0; i < n_events; i++) {
            const cJSON *o = events[i].json;
            if (!strcmp(st_json_text(o, "camera"), argv[a]) && !strcmp(st_json_text(o, "type"), "fraction"))
                st[n++] = (stamp){parse_time(st_json_text(o, "time")), (long)st_json_number(o, "frame")};
        }
        qsort(st, (size_t)n, sizeof *st, by_time);
        double resumed = -1;
        long worst = 0;
        int before = 0;
        for (int i = 0; i < n; i++) {
            before += st[i].time < killed;
            if (resumed < 0 && st[i].time > killed)
                resumed = st[i].time - killed;
            if (i > 0 && st[i].frame <= st[i - 1].frame)
                FAIL("%s: frame %ld at %.3f after frame %ld at %.3f: the numbering went back", argv[a], st[i].frame,
                     st[i].time, st[i - 1].frame, st[i - 1].time);
            if (i > 0 && st[i].frame - st[i - 1].frame > worst)
                worst = st[i].frame - st[i - 1].frame;
        }
        if (before == 0 || resumed < 0 || resumed > limit)
            FAIL("%s: %d events before the kill, the first after it %.3f s later (at most %.0f s)", argv[a], before,
                 resumed, limit);
        if (worst > maxgap)
            FAIL("%s: the frame indices jump by %ld (at most %ld)", argv[a], worst, maxgap);
        printf("serve_check: %s: %d events, first after the kill %.3f s later, largest frame step %ld\n", argv[a], n,
               resumed, worst);
    }
    free(st);
    for (int i = 0; i < n_events; i++) {
        free(events[i].id);
        cJSON_Delete(events[i].json);
    }
    free(events);
    nats_Close();
    printf("serve_check: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

static int check_replicas(int argc, char **argv)
{
    if (argc < 5) {
        printf("usage: serve_check --replicas URL N STREAM...\n");
        return 1;
    }
    long want = atol(argv[3]);
    natsConnection *nc = NULL;
    jsCtx *js = NULL;
    natsStatus s = natsConnection_ConnectTo(&nc, argv[2]);
    if (s == NATS_OK)
        s = natsConnection_JetStream(&js, nc, NULL);
    if (s != NATS_OK)
        FAIL("NATS %s: %s", argv[2], natsStatus_GetText(s));
    /* the replicas are configured at once; a follower may be a moment behind its leader under load
     * (not current): each stream's followers have REPLICAS_CURRENT_S to be current */
    const double REPLICAS_CURRENT_S = 10;
    for (int a = 4; s == NATS_OK && a < argc; a++) {
        for (double waited = 0;; waited += 0.25) {
            jsStreamInfo *si = NULL;
            jsErrCode jerr = 0;
            natsStatus got = js_GetStreamInfo(&si, js, argv[a], NULL, &jerr);
            if (got != NATS_OK) {
                FAIL("stream %s: %s", argv[a], natsStatus_GetText(got));
                break;
            }
            int current = 0, others = si->Cluster ? si->Cluster->ReplicasLen : 0;
            for (int i = 0; i < others; i++)
                current += si->Cluster->Replicas[i]->Current;
            bool placed = si->Config->Replicas == want && others == want - 1;
            if (!placed || current == others || waited >= REPLICAS_CURRENT_S) {
                printf("serve_check: %s: %lld replicas configured, leader %s, %d other%s (%d current after %.2f s)\n",
                       argv[a], (long long)si->Config->Replicas,
                       si->Cluster && si->Cluster->Leader ? si->Cluster->Leader : "none", others, others == 1 ? "" : "s",
                       current, waited);
                if (!placed || current != others)
                    FAIL("stream %s: %lld replicas configured, %d others of which %d current; wanted %ld, all current",
                         argv[a], (long long)si->Config->Replicas, others, current, want);
                else
                    printf("%s: leader %s\n", argv[a], si->Cluster && si->Cluster->Leader ? si->Cluster->Leader : "none");
                jsStreamInfo_Destroy(si);
                break;
            }
            jsStreamInfo_Destroy(si);
            st_sleep(0.25);
        }
    }
    jsCtx_Destroy(js);
    natsConnection_Destroy(nc);
    nats_Close();
    printf("serve_check: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--cluster"))
        return check_cluster(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "--replicas"))
        return check_replicas(argc, argv);
    const char *file = NULL, *url = NULL, *stream = NULL, *masks = NULL;
    int exact = 0, ended = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--file") && i + 1 < argc)
            file = argv[++i];
        else if (!strcmp(argv[i], "--nats") && i + 2 < argc)
            url = argv[++i], stream = argv[++i];
        else if (!strcmp(argv[i], "--masks") && i + 1 < argc)
            masks = argv[++i];
        else if (!strcmp(argv[i], "--exact"))
            exact = 1;
        else if (!strcmp(argv[i], "--ended"))
            ended = 1;
        else
            argc = 0;
    }
    if (argc < 3 || (!file && !url)) {
        printf("usage: serve_check CONFIG (--file EVENTS.jsonl | --nats URL STREAM) [--exact] [--ended] [--masks DIR]\n");
        return 1;
    }
    svc_config cfg;
    char error[1024];
    if (svc_config_load(argv[1], &cfg, error, sizeof error) != 0) {
        printf("serve_check: %s\n", error);
        return 1;
    }
    if (masks) {
        free(cfg.masks);
        if (!(cfg.masks = strdup(masks))) {
            svc_config_free(&cfg);
            return 1;
        }
    }
    if (!cfg.masks || cfg.fraction_every != 0) {
        printf("serve_check: the configuration needs masks: DIR (or --masks DIR) and fraction_every: 0\n");
        svc_config_free(&cfg);
        return 1;
    }
    if ((file ? read_file(file) : read_nats(url, stream)) != 0)
        failures++;
    printf("serve_check: %d events, %d repeated\n", n_events, repeats);
    if (exact && repeats > 0)
        FAIL("%d events came more than once", repeats);
    for (int i = 0; failures == 0 && i < cfg.n_cameras; i++)
        check_camera(&cfg, &cfg.cameras[i], ended);
    for (int i = 0; i < n_events; i++) {
        free(events[i].id);
        cJSON_Delete(events[i].json);
    }
    free(events);
    svc_config_free(&cfg);
    if (url)
        nats_Close();
    printf("serve_check: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
