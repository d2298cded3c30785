/* The events of one camera of 'glcv serve', from its masks: motion start and end for the camera and
 * for each zone, tracked objects starting and ending (objects.h; with the foreground fraction, the
 * boxes of the objects in that frame), the foreground fraction at a rate, and the camera going up
 * or down. Each event is
 * a JSON object (cJSON) handed to a callback with its topic and id; docs/EVENTS.md documents them.
 *
 * Motion follows the rule of config.h: a region (the whole frame, or a zone's pixels) starts moving
 * when its foreground fraction is at least `start` for start_frames frames in a row, and stops
 * when it is below `end` for end_frames frames in a row. The fraction of a region is its
 * foreground pixels (mask value not 0) over its pixels. A zone's pixels are those whose centre
 * (x + 0.5, y + 0.5) lies inside its polygon (even-odd rule).
 *
 * Ids are made of the camera, the kind, the region, the frame and the state, so an event made
 * again for the same frame (a resend, a replay) has the same id. One object per camera, used by
 * one thread at a time; the rules may be replaced between frames (svc_events_set_rules). */
#ifndef GLCV_SERVICE_EVENTS_H
#define GLCV_SERVICE_EVENTS_H

#include "config.h"
#include "objects.h"

#include <stddef.h>
#include <stdint.h>

/* Receives one event: topic ("cameras/ID/motion", "cameras/ID/zones/NAME/motion",
 * "cameras/ID/fraction", "cameras/ID/status"), id, and the JSON text. */
typedef void (*svc_event_fn)(void *user, const char *topic, const char *id, const char *json, size_t length);

typedef struct svc_events svc_events;

/* For camera `camera` (its id, motion rule, zones and fraction period) on frames of width x height.
 * Returns 0, or -1 with one line in `error` (a zone with no pixel inside the frame, no memory). */
int svc_events_create(const svc_camera *camera, double fraction_every, int width, int height, svc_events **out,
                      char *error, size_t size);

/* Replaces the motion rule, the zones and the fraction period (a reloaded file). A zone kept by
 * name keeps its state; a new zone starts still; a removed zone that was moving ends now, at the
 * last frame seen (an end event). Returns 0, or -1 with `error` and the rules unchanged. */
int svc_events_set_rules(svc_events *e, const svc_camera *camera, double fraction_every, double time,
                         svc_event_fn fn, void *user, char *error, size_t size);

/* A mask (width x height bytes, rows `stride` bytes apart) of frame `frame` of the source, taken at
 * `time` (seconds since 1970, UTC). Emits the events it causes. */
void svc_events_frame(svc_events *e, const uint8_t *mask, size_t stride, int64_t frame, double time,
                      svc_event_fn fn, void *user);

/* The camera came up (up nonzero) or went down (why: one line). A camera that goes down while
 * moving ends its motion first (and its zones'), at the last frame seen. Repeats of the same
 * state are not events. */
void svc_events_status(svc_events *e, int up, const char *why, double time, svc_event_fn fn, void *user);

/* What the metrics show. */
typedef struct svc_events_state {
    int up;            /* seen up last */
    int moving;        /* the whole frame */
    double fraction;   /* of the last frame */
    int64_t frames;    /* masks seen */
    int64_t last_frame; /* the last frame's index, -1 before the first */
    long events;       /* events emitted */
} svc_events_state;

void svc_events_get_state(const svc_events *e, svc_events_state *out);

/* The tracked objects of the last frame (none when the camera's rule has them off), up to `max`. */
int svc_events_objects(const svc_events *e, svc_object *out, int max);

void svc_events_destroy(svc_events **e);

#endif
