/* Tracked objects from masks; see objects.h. */
#include "objects.h"

#include "service.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    MAX_TRACKS = 512, /* tracks of one camera at once; blobs past it start none */
    RANKS = 1000      /* id = first_frame * RANKS + rank */
};

static const double MIN_IOU = 0.1;
static const double FILL = 0.25; /* a cell is on when this share of its pixels is foreground */

typedef struct box {
    double x0, y0, x1, y1;
} box;

typedef struct track {
    int64_t id, first_frame, last_frame;
    box b;           /* the last box */
    double vx, vy;   /* its centre's velocity, pixels a frame */
    int hits;        /* frames matched in a row */
    int misses;      /* frames without a match since the last one */
    int confirmed;   /* an object (start told) */
} track;

struct svc_objects {
    svc_objects_rule rule;
    int width, height, gw, gh;
    int *label;      /* per cell: 0 off, else a component (union-find parents, 1-based) */
    int *parent;
    box *blobs;      /* this frame's */
    long *cells;     /* per blob: its cells */
    track *tracks;
    int n_tracks;
};

int svc_objects_create(const svc_objects_rule *rule, int width, int height, svc_objects **out)
{
    *out = NULL;
    svc_objects *o = calloc(1, sizeof *o);
    if (!o)
        return -1;
    o->rule = *rule;
    o->width = width;
    o->height = height;
    int cell = rule->cell > 0 ? rule->cell : 8;
    o->rule.cell = cell;
    o->gw = (width + cell - 1) / cell;
    o->gh = (height + cell - 1) / cell;
    size_t cells = (size_t)o->gw * (size_t)o->gh;
    o->label = calloc(cells, sizeof *o->label);
    o->parent = calloc(cells + 1, sizeof *o->parent);
    o->blobs = calloc(cells + 1, sizeof *o->blobs);
    o->cells = calloc(cells + 1, sizeof *o->cells);
    o->tracks = calloc(MAX_TRACKS, sizeof *o->tracks);
    if (!o->label || !o->parent || !o->blobs || !o->cells || !o->tracks) {
        svc_objects_destroy(&o);
        return -1;
    }
    *out = o;
    return 0;
}

void svc_objects_destroy(svc_objects **op)
{
    svc_objects *o = op ? *op : NULL;
    if (!o)
        return;
    free(o->label);
    free(o->parent);
    free(o->blobs);
    free(o->cells);
    free(o->tracks);
    free(o);
    *op = NULL;
}

static int find_root(int *parent, int a)
{
    while (parent[a] != a) {
        parent[a] = parent[parent[a]];
        a = parent[a];
    }
    return a;
}

static void unite(int *parent, int a, int b)
{
    a = find_root(parent, a);
    b = find_root(parent, b);
    if (a != b) /* the smaller label stays the root: labels follow the cells' raster order */
        parent[a > b ? a : b] = a < b ? a : b;
}

/* The frame's blobs into o->blobs (in the raster order of their first cells); returns how many. */
static int find_blobs(svc_objects *o, const uint8_t *mask, size_t stride)
{
    const int cell = o->rule.cell, gw = o->gw, gh = o->gh;
    /* foreground pixels per cell, a row of cells at a time */
    memset(o->label, 0, (size_t)gw * (size_t)gh * sizeof *o->label);
    for (int y = 0; y < o->height; y++) {
        const uint8_t *row = mask + (size_t)y * stride;
        int *counts = o->label + (size_t)(y / cell) * (size_t)gw;
        for (int cx = 0; cx < gw; cx++) {
            int x0 = cx * cell, n = x0 + cell <= o->width ? cell : o->width - x0;
            counts[cx] += (int)svc_count_nonzero(row + x0, n);
        }
    }
    /* on cells, labelled; 8-neighbours joined (union-find over the labels) */
    int next = 0;
    for (int cy = 0; cy < gh; cy++) {
        int ch = (cy + 1) * cell <= o->height ? cell : o->height - cy * cell;
        for (int cx = 0; cx < gw; cx++) {
            int cw = (cx + 1) * cell <= o->width ? cell : o->width - cx * cell;
            int *l = &o->label[(size_t)cy * gw + cx];
            if (*l < FILL * cw * ch) {
                *l = 0;
                continue;
            }
            int here = 0;
            static const int dx[] = {-1, -1, 0, 1}, dy[] = {0, -1, -1, -1};
            for (int k = 0; k < 4; k++) {
                int nx = cx + dx[k], ny = cy + dy[k];
                if (nx < 0 || ny < 0 || nx >= gw)
                    continue;
                int other = o->label[(size_t)ny * gw + nx];
                if (!other)
                    continue;
                if (!here)
                    here = other;
                else
                    unite(o->parent, here, other);
            }
            if (!here) {
                here = ++next;
                o->parent[here] = here;
            }
            *l = here;
        }
    }
    /* boxes per root; roots numbered in order of their first cell */
    int *slot = o->parent; /* reused below: parent[root] -> blob index, as -(index + 1) */
    int blobs = 0;
    double min_cells = o->rule.min_area * (double)o->width * (double)o->height / ((double)cell * cell);
    for (int i = 1; i <= next; i++)
        find_root(o->parent, i); /* flatten */
    int *root_of = calloc((size_t)next + 1, sizeof *root_of);
    if (!root_of)
        return 0;
    for (int i = 1; i <= next; i++)
        root_of[i] = find_root(o->parent, i);
    for (int i = 1; i <= next; i++)
        slot[i] = -1;
    for (int cy = 0; cy < gh; cy++)
        for (int cx = 0; cx < gw; cx++) {
            int l = o->label[(size_t)cy * gw + cx];
            if (!l)
                continue;
            int r = root_of[l];
            if (slot[r] < 0) {
                slot[r] = blobs;
                o->blobs[blobs] = (box){cx, cy, cx + 1, cy + 1};
                o->cells[blobs++] = 0;
            }
            box *b = &o->blobs[slot[r]];
            b->x0 = fmin(b->x0, cx);
            b->y0 = fmin(b->y0, cy);
            b->x1 = fmax(b->x1, cx + 1);
            b->y1 = fmax(b->y1, cy + 1);
            o->cells[slot[r]]++;
        }
    free(root_of);
    /* noise out; cells to pixels */
    int kept = 0;
    for (int i = 0; i < blobs; i++) {
        if ((double)o->cells[i] < min_cells)
            continue;
        box b = o->blobs[i];
        o->blobs[kept++] = (box){b.x0 * cell, b.y0 * cell, fmin(b.x1 * cell, o->width), fmin(b.y1 * cell, o->height)};
    }
    return kept;
}

static double iou(box a, box b)
{
    double w = fmin(a.x1, b.x1) - fmax(a.x0, b.x0), h = fmin(a.y1, b.y1) - fmax(a.y0, b.y0);
    if (w <= 0 || h <= 0)
        return 0;
    double inter = w * h, all = (a.x1 - a.x0) * (a.y1 - a.y0) + (b.x1 - b.x0) * (b.y1 - b.y0) - inter;
    return all > 0 ? inter / all : 0;
}

static box predicted(const track *t)
{
    double dx = t->vx * (t->misses + 1), dy = t->vy * (t->misses + 1);
    return (box){t->b.x0 + dx, t->b.y0 + dy, t->b.x1 + dx, t->b.y1 + dy};
}

static svc_object object_of(const track *t)
{
    return (svc_object){t->id,
                        (int)t->b.x0,
                        (int)t->b.y0,
                        (int)(t->b.x1 - t->b.x0),
                        (int)(t->b.y1 - t->b.y0),
                        t->first_frame,
                        t->last_frame};
}

typedef struct pair {
    double iou;
    int track, blob;
} pair;

static int by_iou(const void *a, const void *b)
{
    const pair *p = a, *q = b;
    if (p->iou != q->iou)
        return p->iou < q->iou ? 1 : -1;
    return p->track != q->track ? p->track - q->track : p->blob - q->blob; /* a stable order */
}

void svc_objects_frame(svc_objects *o, const uint8_t *mask, size_t stride, int64_t frame, svc_object_fn fn,
                       void *user)
{
    if (!o->rule.enabled)
        return;
    int nb = find_blobs(o, mask, stride), nt = o->n_tracks;
    pair *pairs = nb > 0 && nt > 0 ? malloc((size_t)nb * (size_t)nt * sizeof *pairs) : NULL;
    int *blob_track = calloc((size_t)(nb > 0 ? nb : 1), sizeof *blob_track);
    int *matched = calloc((size_t)(nt > 0 ? nt : 1), sizeof *matched);
    if ((nb > 0 && nt > 0 && !pairs) || !blob_track || !matched) {
        free(pairs);
        free(blob_track);
        free(matched);
        return; /* out of memory: this frame is not tracked */
    }
    int np = 0;
    for (int t = 0; t < nt; t++) {
        box p = predicted(&o->tracks[t]);
        for (int b = 0; b < nb; b++) {
            double v = iou(p, o->blobs[b]);
            if (v >= MIN_IOU)
                pairs[np++] = (pair){v, t, b};
        }
    }
    if (np > 1)
        qsort(pairs, (size_t)np, sizeof *pairs, by_iou);
    for (int b = 0; b < nb; b++)
        blob_track[b] = -1;
    for (int i = 0; i < np; i++) {
        if (matched[pairs[i].track] || blob_track[pairs[i].blob] >= 0)
            continue;
        matched[pairs[i].track] = 1;
        blob_track[pairs[i].blob] = pairs[i].track;
    }
    free(pairs);
    /* tracks: matched ones move on, the others miss */
    int kept = 0;
    for (int t = 0; t < nt; t++) {
        track tr = o->tracks[t];
        int b = -1;
        for (int k = 0; k < nb && b < 0; k++)
            if (blob_track[k] == t)
                b = k;
        if (b >= 0) {
            box nb_ = o->blobs[b];
            double cx = (nb_.x0 + nb_.x1) / 2 - (tr.b.x0 + tr.b.x1) / 2, cy = (nb_.y0 + nb_.y1) / 2 - (tr.b.y0 + tr.b.y1) / 2;
            int steps = tr.misses + 1;
            tr.vx = tr.hits > 0 ? 0.5 * tr.vx + 0.5 * cx / steps : 0;
            tr.vy = tr.hits > 0 ? 0.5 * tr.vy + 0.5 * cy / steps : 0;
            tr.b = nb_;
            tr.hits++;
            tr.misses = 0;
            tr.last_frame = frame;
            if (!tr.confirmed && tr.hits >= o->rule.confirm) {
                tr.confirmed = 1;
                svc_object ob = object_of(&tr);
                fn(user, &ob, 1, frame);
            }
        } else {
            tr.hits = 0;
            tr.misses++;
            if (!tr.confirmed)
                continue; /* a new track that missed: noise */
            if (tr.misses > o->rule.lost) {
                svc_object ob = object_of(&tr);
                fn(user, &ob, 0, frame);
                continue;
            }
        }
        for (int k = 0; k < nb; k++) /* the blob's track moves to its new place in the list */
            if (blob_track[k] == t)
                blob_track[k] = kept;
        o->tracks[kept++] = tr;
    }
    o->n_tracks = kept;
    /* blobs of no track: new tracks, ranked in the blobs' order */
    int rank = 0;
    for (int b = 0; b < nb && o->n_tracks < MAX_TRACKS; b++) {
        if (blob_track[b] >= 0)
            continue;
        if (rank >= RANKS)
            break;
        track tr = {.id = frame * RANKS + rank++, .first_frame = frame, .last_frame = frame, .b = o->blobs[b], .hits = 1};
        if (o->rule.confirm <= 1) {
            tr.confirmed = 1;
            svc_object ob = object_of(&tr);
            fn(user, &ob, 1, frame);
        }
        o->tracks[o->n_tracks++] = tr;
    }
    free(blob_track);
    free(matched);
}

void svc_objects_end_all(svc_objects *o, svc_object_fn fn, void *user)
{
    for (int t = 0; t < o->n_tracks; t++)
        if (o->tracks[t].confirmed) {
            svc_object ob = object_of(&o->tracks[t]);
            fn(user, &ob, 0, o->tracks[t].last_frame);
        }
    o->n_tracks = 0;
}

int svc_objects_current(const svc_objects *o, svc_object *out, int max)
{
    int n = 0;
    for (int t = 0; t < o->n_tracks && n < max; t++)
        if (o->tracks[t].confirmed && o->tracks[t].misses == 0)
            out[n++] = object_of(&o->tracks[t]);
    return n;
}
