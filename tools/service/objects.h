/* Tracked objects of one camera of 'glcv serve', from its masks: the moving blobs of each mask,
 * followed from frame to frame, each with an id, a box and when it was first and last seen.
 *
 * Each mask is cut into cells of `cell` x `cell` pixels; a cell is on when at least a quarter of
 * its pixels are foreground. The 8-connected groups of on cells are the frame's blobs; a blob
 * whose cells cover less than `min_area` of the frame is noise and left out. A blob's box is the
 * pixel box of its cells: boxes lie on the cell grid, and each edge is within cell - 1 pixels of
 * the foreground's (out, or in where the edge's cells are less than a quarter full).
 *
 * Blobs become tracks: each track predicts its box from its last box and velocity (of the box's
 * centre, smoothed), and the frame's blobs are matched to the tracks greedily by the overlap
 * (intersection over union, at least 0.1) of the predicted box and the blob's, best first. A
 * matched track takes the blob's box; a blob matched to no track starts a new track. A track
 * becomes an object (start) once it was matched `confirm` frames in a row; a new track that misses
 * a frame before that is dropped; an object that is matched to no blob for more than `lost` frames
 * ends (end), with its last box and last frame.
 *
 * An object's id is made of the frame its track began and its rank among the tracks begun in that
 * frame: first_frame * 1000 + rank (the rank from 0, in the order of the blobs' top-left cells).
 * Since a camera's frame indices never repeat (a reconnected camera, or one another instance takes
 * over, counts on), neither do its object ids, and the same masks give the same ids. */
#ifndef GLCV_SERVICE_OBJECTS_H
#define GLCV_SERVICE_OBJECTS_H

#include "config.h"

#include <stddef.h>
#include <stdint.h>

typedef struct svc_object {
    int64_t id;
    int x, y, width, height; /* the last box, in pixels */
    int64_t first_frame;     /* the frame its track began */
    int64_t last_frame;      /* the last frame a blob was matched to it */
} svc_object;

/* An object starts (start nonzero) or ends. */
typedef void (*svc_object_fn)(void *user, const svc_object *object, int start, int64_t frame);

typedef struct svc_objects svc_objects;

/* For masks of width x height and the rule (enabled or not: a disabled rule tracks nothing).
 * Returns 0, or -1 when out of memory. */
int svc_objects_create(const svc_objects_rule *rule, int width, int height, svc_objects **out);

/* One mask (width x height bytes, rows `stride` bytes apart, nonzero: foreground) of frame
 * `frame`: the tracks move on; fn hears of each object that starts or ends. */
void svc_objects_frame(svc_objects *o, const uint8_t *mask, size_t stride, int64_t frame, svc_object_fn fn,
                       void *user);

/* Every object ends now (the camera went down, the rule was turned off), at its last frame; the
 * tracks are forgotten. */
void svc_objects_end_all(svc_objects *o, svc_object_fn fn, void *user);

/* The objects matched in the last frame, up to `max`; returns how many. */
int svc_objects_current(const svc_objects *o, svc_object *out, int max);

void svc_objects_destroy(svc_objects **o);

#endif
