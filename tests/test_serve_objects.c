/* Tracked objects of glcv serve (tools/service/objects.c) on drawn masks whose boxes are known:
 * objects start after `confirm` frames with the ids the header promises, keep their id while they
 * move, pass each other and hide for fewer than `lost` frames, follow their true boxes within the
 * cell grid, end after `lost` frames with their last frame; noise, specks below min_area and
 * tracks shorter than `confirm` make none; the same masks give the same events; and the events
 * module turns them into "object" events and boxes in "fraction". */
#include "events.h"
#include "objects.h"
#include "serve_testlib.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK ST_CHECK

enum { W = 160, H = 120, MAX_TOLD = 256 };

typedef struct told {
    svc_object o;
    int start;
    int64_t frame;
} told;

static told log_[MAX_TOLD];
static int n_told;

static void hear(void *user, const svc_object *o, int start, int64_t frame)
{
    (void)user;
    if (n_told < MAX_TOLD)
        log_[n_told++] = (told){*o, start, frame};
}

static void rect(uint8_t *mask, int x, int y, int w, int h)
{
    for (int j = y; j < y + h; j++)
        for (int i = x; i < x + w; i++)
            if (i >= 0 && j >= 0 && i < W && j < H)
                mask[j * W + i] = 255;
}

static const svc_objects_rule RULE = {1, 8, 0.001, 3, 5};

/* Each edge of the box within the grid's error of the truth's: cells are on at a quarter full, so
 * an edge may be up to cell - 1 pixels out or in. */
static int near_box(const svc_object *o, int x, int y, int w, int h)
{
    int slack = RULE.cell - 1;
    return abs(o->x - x) <= slack && abs(o->y - y) <= slack && abs(o->x + o->width - (x + w)) <= slack &&
           abs(o->y + o->height - (y + h)) <= slack;
}

/* Two boxes cross the frame in opposite directions on rows apart, one hides for 3 frames. */
static void test_two_objects(void)
{
    svc_objects *o = NULL;
    CHECK(svc_objects_create(&RULE, W, H, &o) == 0, "create");
    n_told = 0;
    uint8_t mask[W * H];
    int64_t base = 1000; /* frames of a camera that ran before: ids from its frames */
    int worst = 0;
    for (int f = 0; f < 40; f++) {
        memset(mask, 0, sizeof mask);
        int ax = 4 + 3 * f, bx = 130 - 3 * f;
        rect(mask, ax, 20, 24, 16);
        int b_hidden = f >= 15 && f < 18;
        if (!b_hidden)
            rect(mask, bx, 70, 20, 20);
        svc_objects_frame(o, mask, W, base + f, hear, NULL);
        svc_object now[8];
        int n = svc_objects_current(o, now, 8);
        if (f >= 2) {
            CHECK(n == (b_hidden ? 1 : 2), "frame %d: %d objects", f, n);
            for (int k = 0; k < n; k++) {
                int is_a = now[k].id == base * 1000 + 0;
                int is_b = now[k].id == base * 1000 + 1;
                CHECK(is_a || is_b, "frame %d: id %lld is neither object", f, (long long)now[k].id);
                int ok = is_a ? near_box(&now[k], ax, 20, 24, 16) : near_box(&now[k], bx, 70, 20, 20);
                if (!ok) {
                    worst++;
                    CHECK(0, "frame %d: object %lld at %d,%d %dx%d, truth %d,%d", f, (long long)now[k].id, now[k].x,
                          now[k].y, now[k].width, now[k].height, is_a ? ax : bx, is_a ? 20 : 70);
                }
            }
        }
    }
    int starts = 0, ends = 0;
    for (int i = 0; i < n_told; i++) {
        starts += log_[i].start;
        ends += !log_[i].start;
        if (log_[i].start) {
            CHECK(log_[i].frame == base + 2 && log_[i].o.first_frame == base,
                  "start at frame %lld (first %lld): expected %lld (first %lld)", (long long)log_[i].frame,
                  (long long)log_[i].o.first_frame, (long long)(base + 2), (long long)base);
        }
    }
    CHECK(starts == 2 && ends == 0, "%d starts, %d ends while both cross (hiding 3 < lost 5 frames)", starts, ends);
    /* both leave: each ends after `lost` frames without it, with its last frame */
    n_told = 0;
    memset(mask, 0, sizeof mask);
    for (int f = 40; f < 40 + RULE.lost + 1; f++)
        svc_objects_frame(o, mask, W, base + f, hear, NULL);
    CHECK(n_told == 2, "%d events after both left (2 ends expected)", n_told);
    for (int i = 0; i < n_told; i++)
        CHECK(!log_[i].start && log_[i].o.last_frame == base + 39 && log_[i].frame == base + 40 + RULE.lost,
              "end of %lld at %lld, last %lld", (long long)log_[i].o.id, (long long)log_[i].frame,
              (long long)log_[i].o.last_frame);
    svc_objects_destroy(&o);
    printf("two objects: %d boxes off the grid\n", worst);
}

/* Noise, specks, short tracks: no object. */
static void test_nothing(void)
{
    svc_objects *o = NULL;
    CHECK(svc_objects_create(&RULE, W, H, &o) == 0, "create");
    n_told = 0;
    uint8_t mask[W * H];
    unsigned seed = 7;
    for (int f = 0; f < 30; f++) {
        memset(mask, 0, sizeof mask);
        for (int i = 0; i < W * H; i++) { /* 5 % salt: no cell reaches a quarter */
            seed = seed * 1103515245u + 12345u;
            if ((seed >> 16) % 100 < 5)
                mask[i] = 255;
        }
        rect(mask, 100, 100, 3, 3); /* a speck: 9 pixels of its cell, below a quarter */
        svc_objects_frame(o, mask, W, f, hear, NULL);
    }
    svc_object now[8];
    /* the speck's cell is 9/64 full: off */
    CHECK(n_told == 0 && svc_objects_current(o, now, 8) == 0, "noise and a speck made %d events", n_told);
    /* a box for 2 frames (confirm 3), then gone */
    for (int f = 30; f < 40; f++) {
        memset(mask, 0, sizeof mask);
        if (f < 32)
            rect(mask, 40, 40, 30, 30);
        svc_objects_frame(o, mask, W, f, hear, NULL);
    }
    CHECK(n_told == 0, "a 2-frame box made %d events", n_told);
    svc_objects_destroy(&o);

    /* min_area: a 16x16 box is 4 cells of 300; with min_area 0.02 (6 cells) it is noise */
    svc_objects_rule big = RULE;
    big.min_area = 0.02;
    CHECK(svc_objects_create(&big, W, H, &o) == 0, "create");
    for (int f = 0; f < 10; f++) {
        memset(mask, 0, sizeof mask);
        rect(mask, 40, 40, 16, 16);
        rect(mask, 90, 40, 40, 40);
        svc_objects_frame(o, mask, W, f, hear, NULL);
    }
    CHECK(n_told == 1 && log_[0].start && log_[0].o.width >= 40, "min_area: %d events, first %dx%d", n_told,
          n_told ? log_[0].o.width : 0, n_told ? log_[0].o.height : 0);
    n_told = 0;
    svc_objects_end_all(o, hear, NULL);
    CHECK(n_told == 1 && !log_[0].start && log_[0].o.last_frame == 9, "end_all: %d events", n_told);
    svc_objects_destroy(&o);
}

/* The events module: "object" events and the boxes in "fraction". */
static cJSON *events_json[64];
static int n_events;

static void record(void *user, const char *topic, const char *id, const char *json, size_t length)
{
    (void)user;
    (void)length;
    if (n_events < 64 && (strstr(topic, "/objects") || strstr(topic, "/fraction")))
        events_json[n_events++] = cJSON_Parse(json);
    if (strstr(topic, "/objects"))
        CHECK(strstr(id, ":object:") != NULL, "object event id %s", id);
}

static void test_events(void)
{
    svc_camera cam = {0};
    cam.id = "gate";
    cam.motion = (svc_motion){0.5, 0.4, 1, 1};
    cam.objects = RULE;
    svc_events *e = NULL;
    char error[256];
    CHECK(svc_events_create(&cam, 0, W, H, &e, error, sizeof error) == 0, "events: %s", error);
    uint8_t mask[W * H];
    n_events = 0;
    for (int f = 0; f < 5; f++) {
        memset(mask, 0, sizeof mask);
        rect(mask, 10 + 2 * f, 10, 32, 32);
        svc_events_frame(e, mask, W, f, 1.8e9 + f, record, NULL);
    }
    svc_events_status(e, 0, "the file ended", 1.8e9 + 6, record, NULL);
    int starts = 0, ends = 0, boxes = 0;
    for (int i = 0; i < n_events; i++) {
        cJSON *j = events_json[i];
        const cJSON *type = cJSON_GetObjectItem(j, "type");
        if (cJSON_IsString(type) && !strcmp(type->valuestring, "object")) {
            const cJSON *state = cJSON_GetObjectItem(j, "state"), *box = cJSON_GetObjectItem(j, "box");
            int start = !strcmp(state->valuestring, "start");
            starts += start;
            ends += !start;
            CHECK(cJSON_GetArraySize(box) == 4 && cJSON_GetObjectItem(j, "id")->valuedouble == 0 &&
                      cJSON_GetObjectItem(j, "first_frame")->valuedouble == 0 &&
                      (start || cJSON_GetObjectItem(j, "last_frame")->valuedouble == 4),
                  "object event fields");
        } else {
            const cJSON *objects = cJSON_GetObjectItem(j, "objects");
            CHECK(cJSON_IsArray(objects), "fraction without objects");
            boxes += cJSON_GetArraySize(objects);
        }
        cJSON_Delete(j);
    }
    CHECK(starts == 1 && ends == 1, "events: %d starts, %d ends", starts, ends);
    CHECK(boxes == 3, "the fractions of frames 2..4 hold the object: %d boxes", boxes);
    svc_events_destroy(&e);
}

int main(void)
{
    test_two_objects();
    test_nothing();
    test_events();
    if (st_failures) {
        printf("%d failure%s\n", st_failures, st_failures == 1 ? "" : "s");
        return 1;
    }
    printf("ok\n");
    return 0;
}
