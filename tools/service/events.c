/* The events of one camera: see events.h. */
#define _POSIX_C_SOURCE 200809L /* gmtime_r */
#include "events.h"

#include "service.h"

#include <cjson/cJSON.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A run of a zone's pixels on one row: x0 <= x < x1. */
typedef struct span {
    int y, x0, x1;
} span;

/* The whole frame (no spans) or a zone, and its motion state. */
typedef struct region {
    char name[72]; /* "" for the whole frame */
    svc_motion rule;
    span *spans;
    int n_spans;
    long pixels;
    int moving;
    int run;           /* frames in a row that meet the rule's condition for a change */
    int64_t run_first; /* the first of them */
    double fraction;
} region;

struct svc_events {
    char camera[72];
    int width, height;
    double fraction_every;
    double last_fraction_at; /* time of the last fraction event; < 0: none yet */
    region frame;
    region *zones;
    int n_zones;
    int up; /* -1: not known yet */
    int64_t frames, last_frame;
    long events;
    svc_objects *objects; /* NULL: no tracked objects */
    svc_objects_rule objects_rule;
};

/* ---- zones: the pixels inside a polygon ------------------------------------------------------------ */

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The zone's pixels as row spans: centres inside the polygon by the even-odd rule. */
static int rasterise(const svc_zone *z, int width, int height, region *r)
{
    double *cross = malloc((size_t)z->n_points * sizeof *cross);
    int cap = 0;
    if (!cross)
        return -1;
    for (int y = 0; y < height; y++) {
        double yc = y + 0.5;
        int n = 0;
        for (int i = 0; i < z->n_points; i++) {
            svc_point a = z->points[i], b = z->points[(i + 1) % z->n_points];
            if ((a.y <= yc) != (b.y <= yc))
                cross[n++] = a.x + (yc - a.y) * (b.x - a.x) / (b.y - a.y);
        }
        qsort(cross, (size_t)n, sizeof *cross, compare_double);
        for (int i = 0; i + 1 < n; i += 2) {
            /* pixel x is inside when cross[i] <= x + 0.5 < cross[i + 1] */
            double lo = ceil(cross[i] - 0.5), hi = ceil(cross[i + 1] - 0.5);
            int x0 = lo < 0 ? 0 : lo > width ? width : (int)lo;
            int x1 = hi < 0 ? 0 : hi > width ? width : (int)hi;
            if (x1 <= x0)
                continue;
            if (r->n_spans == cap) {
                cap = cap ? 2 * cap : 64;
                span *grown = realloc(r->spans, (size_t)cap * sizeof *grown);
                if (!grown) {
                    free(cross);
                    return -1;
                }
                r->spans = grown;
            }
            r->spans[r->n_spans++] = (span){y, x0, x1};
            r->pixels += x1 - x0;
        }
    }
    free(cross);
    return 0;
}

static void free_zones(region *zones, int n)
{
    for (int i = 0; zones && i < n; i++)
        free(zones[i].spans);
    free(zones);
}

/* The regions of the camera's zones, states reset. */
static int make_zones(const svc_camera *c, int width, int height, region **out, char *error, size_t size)
{
    *out = NULL;
    if (c->n_zones == 0)
        return 0;
    region *z = calloc((size_t)c->n_zones, sizeof *z);
    if (!z) {
        snprintf(error, size, "camera '%s': out of memory", c->id);
        return -1;
    }
    for (int i = 0; i < c->n_zones; i++) {
        snprintf(z[i].name, sizeof z[i].name, "%s", c->zones[i].name);
        z[i].rule = c->zones[i].motion;
        if (rasterise(&c->zones[i], width, height, &z[i]) != 0) {
            snprintf(error, size, "camera '%s': out of memory", c->id);
            free_zones(z, c->n_zones);
            return -1;
        }
        if (z[i].pixels == 0) {
            snprintf(error, size, "line %d: camera '%s', zone '%s': no pixel of the %dx%d frame lies inside its polygon",
                     c->zones[i].line, c->id, c->zones[i].name, width, height);
            free_zones(z, c->n_zones);
            return -1;
        }
    }
    *out = z;
    return 0;
}

/* ---- the events ------------------------------------------------------------------------------------- */

/* "2026-11-28T07:40:01.123Z" */
static void format_time(double t, char *out, size_t size)
{
    time_t s = (time_t)floor(t);
    int ms = (int)floor((t - (double)s) * 1000.0);
    ms = ms < 0 ? 0 : ms > 999 ? 999 : ms;
    struct tm tm;
    gmtime_r(&s, &tm);
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, size, "%s.%03dZ", day, ms);
}

/* Fractions as events give them: 6 decimals. */
static double rounded(double f)
{
    return round(f * 1e6) / 1e6;
}

/* A new event object with the fields every event has. */
static cJSON *event_new(const svc_events *e, const char *type, int64_t frame, double time)
{
    cJSON *o = cJSON_CreateObject();
    char when[48];
    format_time(time, when, sizeof when);
    if (o && (!cJSON_AddStringToObject(o, "type", type) || !cJSON_AddStringToObject(o, "camera", e->camera) ||
              !cJSON_AddNumberToObject(o, "frame", (double)frame) || !cJSON_AddStringToObject(o, "time", when))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

/* Hands the event to the callback and frees it. Without memory the event is lost: the callback's
 * queue could not have taken it either. */
static void emit(svc_events *e, cJSON *o, const char *topic, const char *id, svc_event_fn fn, void *user)
{
    char *text = o ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    if (!text)
        return;
    fn(user, topic, id, text, strlen(text));
    e->events++;
    free(text);
}

static void emit_motion(svc_events *e, const region *r, int start, int64_t frame, int64_t since, double time,
                        svc_event_fn fn, void *user)
{
    cJSON *o = event_new(e, "motion", frame, time);
    if (o && r->name[0] && !cJSON_AddStringToObject(o, "zone", r->name))
        o = (cJSON_Delete(o), NULL);
    if (o && (!cJSON_AddStringToObject(o, "state", start ? "start" : "end") ||
              !cJSON_AddNumberToObject(o, "since_frame", (double)since) ||
              !cJSON_AddNumberToObject(o, "fraction", rounded(r->fraction))))
        o = (cJSON_Delete(o), NULL);
    char topic[256], id[256];
    if (r->name[0]) {
        snprintf(topic, sizeof topic, "cameras/%s/zones/%s/motion", e->camera, r->name);
        snprintf(id, sizeof id, "%s:motion:%s:%s:%lld", e->camera, r->name, start ? "start" : "end", (long long)frame);
    } else {
        snprintf(topic, sizeof topic, "cameras/%s/motion", e->camera);
        snprintf(id, sizeof id, "%s:motion:%s:%lld", e->camera, start ? "start" : "end", (long long)frame);
    }
    emit(e, o, topic, id, fn, user);
}

/* One frame's fraction through the region's rule. */
static void step(svc_events *e, region *r, double fraction, int64_t frame, double time, svc_event_fn fn, void *user)
{
    r->fraction = fraction;
    int change = r->moving ? fraction < r->rule.end : fraction >= r->rule.start;
    if (!change) {
        r->run = 0;
        return;
    }
    if (r->run++ == 0)
        r->run_first = frame;
    if (r->run < (r->moving ? r->rule.end_frames : r->rule.start_frames))
        return;
    r->moving = !r->moving;
    r->run = 0;
    emit_motion(e, r, r->moving, frame, r->run_first, time, fn, user);
}

/* A region that stops without its rule (the camera went down, the zone was removed). */
static void stop_region(svc_events *e, region *r, double time, svc_event_fn fn, void *user)
{
    r->run = 0;
    if (!r->moving)
        return;
    r->moving = 0;
    emit_motion(e, r, 0, e->last_frame, e->last_frame, time, fn, user);
}

static long count_frame(const uint8_t *mask, size_t stride, int width, int height)
{
    long n = 0;
    for (int y = 0; y < height; y++)
        n += svc_count_nonzero(mask + (size_t)y * stride, width);
    return n;
}

static long count_spans(const region *r, const uint8_t *mask, size_t stride)
{
    long n = 0;
    for (int i = 0; i < r->n_spans; i++)
        n += svc_count_nonzero(mask + (size_t)r->spans[i].y * stride + (size_t)r->spans[i].x0,
                           r->spans[i].x1 - r->spans[i].x0);
    return n;
}

/* [[id, x, y, width, height], ...] of the objects in the last frame, into `o` under `key`. */
static int add_objects(const svc_events *e, cJSON *o, const char *key)
{
    enum { MAX = 256 };
    svc_object now[MAX];
    int n = svc_objects_current(e->objects, now, MAX);
    cJSON *list = cJSON_AddArrayToObject(o, key);
    for (int i = 0; list && i < n; i++) {
        double v[] = {(double)now[i].id, now[i].x, now[i].y, now[i].width, now[i].height};
        cJSON *item = cJSON_CreateDoubleArray(v, 5);
        if (!item || !cJSON_AddItemToArray(list, item))
            list = NULL;
    }
    return list ? 0 : -1;
}

typedef struct object_context {
    svc_events *e;
    double time;
    svc_event_fn fn;
    void *user;
} object_context;

static void emit_object(void *user, const svc_object *ob, int start, int64_t frame)
{
    object_context *x = user;
    svc_events *e = x->e;
    cJSON *o = event_new(e, "object", frame, x->time);
    if (o && (!cJSON_AddStringToObject(o, "state", start ? "start" : "end") ||
              !cJSON_AddNumberToObject(o, "id", (double)ob->id)))
        o = (cJSON_Delete(o), NULL);
    double box[] = {ob->x, ob->y, ob->width, ob->height};
    cJSON *b = o ? cJSON_CreateDoubleArray(box, 4) : NULL;
    if (o && (!b || !cJSON_AddItemToObject(o, "box", b))) {
        cJSON_Delete(b);
        o = (cJSON_Delete(o), NULL);
    }
    if (o && (!cJSON_AddNumberToObject(o, "first_frame", (double)ob->first_frame) ||
              (!start && !cJSON_AddNumberToObject(o, "last_frame", (double)ob->last_frame))))
        o = (cJSON_Delete(o), NULL);
    char topic[128], id[160];
    snprintf(topic, sizeof topic, "cameras/%s/objects", e->camera);
    snprintf(id, sizeof id, "%s:object:%lld:%s", e->camera, (long long)ob->id, start ? "start" : "end");
    emit(e, o, topic, id, x->fn, x->user);
}

static void emit_fraction(svc_events *e, int64_t frame, double time, svc_event_fn fn, void *user)
{
    cJSON *o = event_new(e, "fraction", frame, time);
    if (o && !cJSON_AddNumberToObject(o, "fraction", rounded(e->frame.fraction)))
        o = (cJSON_Delete(o), NULL);
    if (o && e->n_zones > 0) {
        cJSON *zones = cJSON_AddObjectToObject(o, "zones");
        for (int i = 0; zones && i < e->n_zones; i++)
            if (!cJSON_AddNumberToObject(zones, e->zones[i].name, rounded(e->zones[i].fraction)))
                zones = NULL;
        if (!zones)
            o = (cJSON_Delete(o), NULL);
    }
    if (o && e->objects && add_objects(e, o, "objects") != 0)
        o = (cJSON_Delete(o), NULL);
    char topic[128], id[160];
    snprintf(topic, sizeof topic, "cameras/%s/fraction", e->camera);
    snprintf(id, sizeof id, "%s:fraction:%lld", e->camera, (long long)frame);
    emit(e, o, topic, id, fn, user);
}

void svc_events_frame(svc_events *e, const uint8_t *mask, size_t stride, int64_t frame, double time,
                      svc_event_fn fn, void *user)
{
    if (e->up != 1)
        svc_events_status(e, 1, NULL, time, fn, user);
    e->frames++;
    e->last_frame = frame;
    long all = count_frame(mask, stride, e->width, e->height);
    step(e, &e->frame, (double)all / ((double)e->width * e->height), frame, time, fn, user);
    for (int i = 0; i < e->n_zones; i++) {
        region *z = &e->zones[i];
        step(e, z, (double)count_spans(z, mask, stride) / (double)z->pixels, frame, time, fn, user);
    }
    if (e->objects) {
        object_context x = {e, time, fn, user};
        svc_objects_frame(e->objects, mask, stride, frame, emit_object, &x);
    }
    if (e->last_fraction_at < 0 || time - e->last_fraction_at >= e->fraction_every) {
        emit_fraction(e, frame, time, fn, user);
        e->last_fraction_at = time;
    }
}

void svc_events_status(svc_events *e, int up, const char *why, double time, svc_event_fn fn, void *user)
{
    up = up != 0;
    if (e->up == up)
        return;
    if (!up) {
        for (int i = 0; i < e->n_zones; i++)
            stop_region(e, &e->zones[i], time, fn, user);
        stop_region(e, &e->frame, time, fn, user);
        if (e->objects) {
            object_context x = {e, time, fn, user};
            svc_objects_end_all(e->objects, emit_object, &x);
        }
    }
    e->up = up;
    cJSON *o = event_new(e, "status", e->last_frame, time);
    if (o && (!cJSON_AddStringToObject(o, "state", up ? "up" : "down") ||
              (!up && !cJSON_AddStringToObject(o, "reason", why ? why : ""))))
        o = (cJSON_Delete(o), NULL);
    char topic[128], id[160];
    snprintf(topic, sizeof topic, "cameras/%s/status", e->camera);
    snprintf(id, sizeof id, "%s:status:%s:%lld:%lld", e->camera, up ? "up" : "down", (long long)e->last_frame,
             (long long)llround(time * 1000.0));
    emit(e, o, topic, id, fn, user);
}

/* ---- the object ------------------------------------------------------------------------------------- */

int svc_events_create(const svc_camera *camera, double fraction_every, int width, int height, svc_events **out,
                      char *error, size_t size)
{
    *out = NULL;
    svc_events *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(error, size, "camera '%s': out of memory", camera->id);
        return -1;
    }
    snprintf(e->camera, sizeof e->camera, "%s", camera->id);
    e->width = width;
    e->height = height;
    e->fraction_every = fraction_every;
    e->last_fraction_at = -1;
    e->frame.rule = camera->motion;
    e->frame.pixels = (long)width * height;
    e->up = -1;
    e->last_frame = -1;
    e->objects_rule = camera->objects;
    if (camera->objects.enabled && svc_objects_create(&camera->objects, width, height, &e->objects) != 0) {
        snprintf(error, size, "camera '%s': out of memory", camera->id);
        free(e);
        return -1;
    }
    if (make_zones(camera, width, height, &e->zones, error, size) != 0) {
        svc_objects_destroy(&e->objects);
        free(e);
        return -1;
    }
    e->n_zones = camera->n_zones;
    *out = e;
    return 0;
}

int svc_events_set_rules(svc_events *e, const svc_camera *camera, double fraction_every, double time,
                         svc_event_fn fn, void *user, char *error, size_t size)
{
    region *zones = NULL;
    svc_objects *objects = NULL;
    const svc_objects_rule *rule = &camera->objects, *was = &e->objects_rule;
    int same_objects = rule->enabled == was->enabled && (!rule->enabled || (rule->cell == was->cell &&
                       rule->min_area == was->min_area && rule->confirm == was->confirm && rule->lost == was->lost));
    if (!same_objects && rule->enabled && svc_objects_create(rule, e->width, e->height, &objects) != 0) {
        snprintf(error, size, "camera '%s': out of memory", camera->id);
        return -1;
    }
    if (make_zones(camera, e->width, e->height, &zones, error, size) != 0) {
        svc_objects_destroy(&objects);
        return -1;
    }
    if (!same_objects) { /* a new rule: the objects so far end, tracking starts again */
        if (e->objects) {
            object_context x = {e, time, fn, user};
            svc_objects_end_all(e->objects, emit_object, &x);
        }
        svc_objects_destroy(&e->objects);
        e->objects = objects;
        e->objects_rule = *rule;
    }
    for (int i = 0; i < e->n_zones; i++) {
        int kept = 0;
        for (int j = 0; j < camera->n_zones && !kept; j++) {
            if (strcmp(e->zones[i].name, zones[j].name) != 0)
                continue;
            kept = 1;
            zones[j].moving = e->zones[i].moving;
            zones[j].run = e->zones[i].run;
            zones[j].run_first = e->zones[i].run_first;
            zones[j].fraction = e->zones[i].fraction;
        }
        if (!kept)
            stop_region(e, &e->zones[i], time, fn, user);
    }
    free_zones(e->zones, e->n_zones);
    e->zones = zones;
    e->n_zones = camera->n_zones;
    e->frame.rule = camera->motion;
    e->fraction_every = fraction_every;
    return 0;
}

int svc_events_objects(const svc_events *e, svc_object *out, int max)
{
    return e->objects ? svc_objects_current(e->objects, out, max) : 0;
}

void svc_events_get_state(const svc_events *e, svc_events_state *out)
{
    *out = (svc_events_state){.up = e->up == 1,
                              .moving = e->frame.moving,
                              .fraction = e->frame.fraction,
                              .frames = e->frames,
                              .last_frame = e->last_frame,
                              .events = e->events};
}

void svc_events_destroy(svc_events **e)
{
    if (!e || !*e)
        return;
    free_zones((*e)->zones, (*e)->n_zones);
    svc_objects_destroy(&(*e)->objects);
    free(*e);
    *e = NULL;
}
