/* The event rules of glcv serve (tools/service/events.c): zone pixels against a point-in-polygon
 * test per pixel, motion start/end against the rule applied by hand to the fraction sequence,
 * fraction events, status, rules replaced while running. */
#include "events.h"
#include "serve_testlib.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                                            \
    do {                                                                                            \
        if (!(cond)) {                                                                              \
            failures++;                                                                             \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                             \
            printf(__VA_ARGS__);                                                                    \
            printf("\n");                                                                           \
        }                                                                                           \
    } while (0)

enum { MAX_EVENTS = 4096 };

typedef struct recorded {
    char topic[256], id[256];
    cJSON *json;
} recorded;

static recorded events[MAX_EVENTS];
static int n_events;

static void record(void *user, const char *topic, const char *id, const char *json, size_t length)
{
    (void)user;
    if (n_events == MAX_EVENTS)
        return;
    recorded *r = &events[n_events++];
    snprintf(r->topic, sizeof r->topic, "%s", topic);
    snprintf(r->id, sizeof r->id, "%s", id);
    r->json = cJSON_ParseWithLength(json, length);
    CHECK(r->json != NULL, "event %s is not JSON: %.*s", id, (int)length, json);
}

static void clear_events(void)
{
    for (int i = 0; i < n_events; i++)
        cJSON_Delete(events[i].json);
    n_events = 0;
}

static unsigned rng = 12345;
static unsigned next_random(void)
{
    rng = rng * 1664525u + 1013904223u;
    return rng >> 8;
}

/* Whether (px, py) is inside the polygon: the crossing number of a ray to +x. */
static int inside(const svc_point *p, int n, double px, double py)
{
    int in = 0;
    for (int i = 0, j = n - 1; i < n; j = i++) {
        if ((p[i].y > py) != (p[j].y > py)) {
            double x = (p[j].x - p[i].x) * (py - p[i].y) / (p[j].y - p[i].y) + p[i].x;
            if (px < x)
                in = !in;
        }
    }
    return in;
}

static svc_camera camera_with(svc_zone *zones, int n_zones)
{
    svc_camera c = {.id = "cam-a", .motion = {0.1, 0.05, 3, 4}, .zones = zones, .n_zones = n_zones};
    return c;
}

/* Random masks through random polygons: each zone's fraction in the fraction events equals the share
 * of foreground pixels among the pixels whose centres the per-pixel test puts inside. */
static void test_zone_pixels(void)
{
    enum { W = 77, H = 29, ZONES = 4, POINTS = 7 };
    svc_point pts[ZONES][POINTS];
    svc_zone zones[ZONES];
    char names[ZONES][16];
    for (int z = 0; z < ZONES; z++) {
        int n = 3 + z; /* triangles to hexagons, self-intersecting ones included */
        for (int i = 0; i < n; i++)
            pts[z][i] = (svc_point){(double)(next_random() % 4000) / 100.0, (double)(next_random() % 3000) / 100.0};
        if (z == 0) { /* corners on pixel centres and edges on the frame's border */
            pts[z][0] = (svc_point){0.5, 0.5};
            pts[z][1] = (svc_point){W, 0.5};
            pts[z][2] = (svc_point){10.5, H};
        }
        snprintf(names[z], sizeof names[z], "z%d", z);
        zones[z] = (svc_zone){.name = names[z], .line = 10 + z, .points = pts[z], .n_points = n, .motion = {0.5, 0.2, 1, 1}};
    }
    svc_camera c = camera_with(zones, ZONES);
    svc_events *e = NULL;
    char error[256];
    int rc = svc_events_create(&c, 0.0, W, H, &e, error, sizeof error);
    CHECK(rc == 0, "create: %s", error);
    if (rc != 0)
        return;
    static uint8_t mask[H][W + 3];
    for (int f = 0; f < 20; f++) {
        long on[ZONES] = {0}, all[ZONES] = {0}, frame_on = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                static const uint8_t values[] = {0, 0, 0, 0, 1, 127, 128, 255}; /* foreground: not 0 */
                mask[y][x] = values[next_random() % 8];
                frame_on += mask[y][x] != 0;
                for (int z = 0; z < ZONES; z++)
                    if (inside(pts[z], zones[z].n_points, x + 0.5, y + 0.5)) {
                        all[z]++;
                        on[z] += mask[y][x] != 0;
                    }
            }
        clear_events();
        svc_events_frame(e, &mask[0][0], W + 3, f, 1000.0 + f, record, NULL);
        const cJSON *fr = NULL;
        for (int i = 0; i < n_events; i++)
            if (!strcmp(events[i].topic, "cameras/cam-a/fraction"))
                fr = events[i].json;
        CHECK(fr != NULL, "frame %d: no fraction event", f);
        if (!fr)
            continue;
        CHECK(fabs(st_json_number(fr, "fraction") - (double)frame_on / (W * H)) < 1e-6,
              "frame %d: fraction %g, want %g", f, st_json_number(fr, "fraction"), (double)frame_on / (W * H));
        const cJSON *zs = cJSON_GetObjectItemCaseSensitive(fr, "zones");
        for (int z = 0; z < ZONES; z++) {
            if (all[z] == 0)
                continue;
            double want = (double)on[z] / (double)all[z], got = st_json_number(zs, names[z]);
            CHECK(fabs(got - want) < 1e-6, "frame %d zone %d: fraction %.6f, want %.6f (%ld of %ld pixels)", f, z, got,
                  want, on[z], all[z]);
        }
    }
    svc_events_destroy(&e);
    clear_events();
}

/* The rule by hand: scan the fractions; a change needs `frames` frames in a row past its bound. */
static int expected_changes(const double *fr, int n, svc_motion m, int *frames, int *since, int *states)
{
    int moving = 0, count = 0;
    for (int f = 0; f < n;) {
        int k = 0;
        while (f + k < n && (moving ? fr[f + k] < m.end : fr[f + k] >= m.start))
            k++;
        int need = moving ? m.end_frames : m.start_frames;
        if (k >= need) {
            frames[count] = f + need - 1;
            since[count] = f;
            states[count++] = !moving;
            moving = !moving;
            f += need;
        } else {
            f += k > 0 ? k : 1;
        }
    }
    return count;
}

static void test_motion_rule(void)
{
    enum { W = 20, H = 10, N = 400 };
    svc_camera c = camera_with(NULL, 0);
    svc_events *e = NULL;
    char error[256];
    CHECK(svc_events_create(&c, 3600.0, W, H, &e, error, sizeof error) == 0, "create: %s", error);
    static uint8_t mask[H * W];
    double fr[N];
    int frames[N], since[N], states[N];
    clear_events();
    for (int f = 0; f < N; f++) {
        /* bursts: long still and busy spells with flicker across both bounds */
        int phase = (f / 23) % 3;
        int on = phase == 0 ? (int)(next_random() % 12) : phase == 1 ? 15 + (int)(next_random() % 40)
                                                                       : (int)(next_random() % 30);
        memset(mask, 0, sizeof mask);
        for (int i = 0; i < on; i++)
            mask[(i * 37) % (W * H)] = 1;
        fr[f] = (double)on / (W * H);
        svc_events_frame(e, mask, W, f, 5000.0 + f * 0.04, record, NULL);
    }
    int want = expected_changes(fr, N, c.motion, frames, since, states), got = 0;
    for (int i = 0; i < n_events; i++) {
        if (strcmp(events[i].topic, "cameras/cam-a/motion") != 0)
            continue;
        const cJSON *o = events[i].json;
        if (got < want) {
            CHECK(st_json_number(o, "frame") == frames[got] && st_json_number(o, "since_frame") == since[got] &&
                      !strcmp(st_json_text(o, "state"), states[got] ? "start" : "end"),
                  "change %d: %s at frame %g since %g, want %s at %d since %d", got, st_json_text(o, "state"),
                  st_json_number(o, "frame"), st_json_number(o, "since_frame"), states[got] ? "start" : "end",
                  frames[got], since[got]);
            char id[128];
            snprintf(id, sizeof id, "cam-a:motion:%s:%d", states[got] ? "start" : "end", frames[got]);
            CHECK(!strcmp(events[i].id, id), "change %d: id %s, want %s", got, events[i].id, id);
        }
        got++;
    }
    CHECK(got == want && want >= 6, "%d motion events, want %d (at least 6 for the test to mean something)", got, want);
    /* the period: one fraction event for the first frame only (3600 s) */
    int fractions = 0;
    for (int i = 0; i < n_events; i++)
        fractions += !strcmp(events[i].topic, "cameras/cam-a/fraction");
    CHECK(fractions == 1, "%d fraction events with a period of 3600 s, want 1", fractions);
    CHECK(!strcmp(events[0].topic, "cameras/cam-a/status") && !strcmp(st_json_text(events[0].json, "state"), "up"),
          "the first event is %s, want the status up", events[0].topic);
    svc_events_destroy(&e);
    clear_events();
}

/* Down while moving ends the motion first; up/down repeats are no events; rules replaced. */
static void test_status_and_rules(void)
{
    enum { W = 10, H = 10 };
    svc_point square[4] = {{0, 0}, {5, 0}, {5, 5}, {0, 5}}, right[4] = {{5, 0}, {10, 0}, {10, 10}, {5, 10}};
    svc_zone zones[2] = {{.name = "left", .points = square, .n_points = 4, .motion = {0.5, 0.1, 1, 1}},
                         {.name = "right", .points = right, .n_points = 4, .motion = {0.5, 0.1, 1, 1}}};
    svc_camera c = camera_with(zones, 2);
    c.motion = (svc_motion){0.2, 0.1, 1, 1};
    svc_events *e = NULL;
    char error[256];
    CHECK(svc_events_create(&c, 0.5, W, H, &e, error, sizeof error) == 0, "create: %s", error);
    uint8_t mask[W * H];
    memset(mask, 0, sizeof mask);
    for (int y = 0; y < 5; y++)
        memset(mask + y * W, 255, 5); /* the left zone full: 25 % of the frame */
    clear_events();
    svc_events_frame(e, mask, W, 7, 100.0, record, NULL);
    int starts = 0;
    for (int i = 0; i < n_events; i++)
        starts += !strcmp(st_json_text(events[i].json, "state"), "start");
    CHECK(starts == 2, "%d motion starts (camera and left), want 2", starts);
    /* the left zone removed, a zone 'right' kept: left ends now, at frame 7 */
    clear_events();
    CHECK(svc_events_set_rules(e, &(svc_camera){.id = "cam-a", .motion = c.motion, .zones = &zones[1], .n_zones = 1},
                               0.5, 100.1, record, NULL, error, sizeof error) == 0,
          "set_rules: %s", error);
    CHECK(n_events == 1 && !strcmp(events[0].topic, "cameras/cam-a/zones/left/motion") &&
              !strcmp(st_json_text(events[0].json, "state"), "end") && st_json_number(events[0].json, "frame") == 7,
          "removing a moving zone: %d events, first %s", n_events, n_events ? events[0].topic : "-");
    clear_events();
    svc_events_status(e, 0, "connection refused", 101.0, record, NULL);
    CHECK(n_events == 2 && !strcmp(events[0].topic, "cameras/cam-a/motion") &&
              !strcmp(st_json_text(events[0].json, "state"), "end") &&
              !strcmp(events[1].topic, "cameras/cam-a/status") &&
              !strcmp(st_json_text(events[1].json, "state"), "down") &&
              !strcmp(st_json_text(events[1].json, "reason"), "connection refused"),
          "down while moving: %d events", n_events);
    clear_events();
    svc_events_status(e, 0, "again", 102.0, record, NULL);
    CHECK(n_events == 0, "a repeated down gave %d events", n_events);
    /* a zone outside the frame */
    svc_point far[3] = {{20, 20}, {30, 20}, {25, 30}};
    svc_zone out = {.name = "far", .line = 42, .points = far, .n_points = 3, .motion = c.motion};
    svc_events *bad = NULL;
    CHECK(svc_events_create(&(svc_camera){.id = "cam-b", .motion = c.motion, .zones = &out, .n_zones = 1}, 1.0, W,
                            H, &bad, error, sizeof error) == -1 &&
              bad == NULL && strstr(error, "line 42") && strstr(error, "far"),
          "a zone outside the frame: '%s'", error);
    CHECK(svc_events_set_rules(e, &(svc_camera){.id = "cam-a", .motion = c.motion, .zones = &out, .n_zones = 1}, 1.0,
                               103.0, record, NULL, error, sizeof error) == -1,
          "set_rules took a zone outside the frame");
    svc_events_state st;
    svc_events_get_state(e, &st);
    CHECK(st.up == 0 && st.moving == 0 && st.frames == 1 && st.last_frame == 7, "state up %d moving %d frames %lld",
          st.up, st.moving, (long long)st.frames);
    svc_events_destroy(&e);
    clear_events();
}

int main(void)
{
    test_zone_pixels();
    test_motion_rule();
    test_status_and_rules();
    if (failures) {
        printf("%d failure%s\n", failures, failures == 1 ? "" : "s");
        return 1;
    }
    printf("ok\n");
    return 0;
}
