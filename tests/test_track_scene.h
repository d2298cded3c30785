/* Synthetic scenes for the tracker's tests: a grey (zero-saturation) textured background, which
 * CAMSHIFT's limits exclude, and filled coloured ellipses whose moments are known. */
#ifndef GLCV_TEST_TRACK_SCENE_H
#define GLCV_TEST_TRACK_SCENE_H

#include <glcv/glcv.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct scene_blob {
    double cx, cy;   /* centre (pixel centres at integer + 0.5 are inside when within) */
    double rx, ry;   /* half axes; rx = ry = 0 means none */
    double angle;    /* degrees, of the rx axis from the x axis */
    int rect;        /* nonzero: an axis-aligned rectangle cx - rx .. cx + rx (angle ignored) */
    uint8_t r, g, b;
} scene_blob;

/* Is pixel (x, y) (its centre at x + 0.5, y + 0.5) inside the blob? */
static inline int scene_inside(const scene_blob *s, int x, int y)
{
    if (s->rx <= 0 || s->ry <= 0)
        return 0;
    double px = x + 0.5 - s->cx, py = y + 0.5 - s->cy;
    if (s->rect)
        return fabs(px) < s->rx && fabs(py) < s->ry;
    double a = s->angle * 3.14159265358979323846 / 180.0;
    double u = px * cos(a) + py * sin(a), v = -px * sin(a) + py * cos(a);
    return (u * u) / (s->rx * s->rx) + (v * v) / (s->ry * s->ry) <= 1.0;
}

/* Draws the blobs, in order, over an RGB8 image (any stride). */
static inline void scene_fill_blobs(glcv_image *img, const scene_blob *blobs, int n)
{
    size_t stride = img->stride ? img->stride : (size_t)img->width * 3;
    for (int k = 0; k < n; k++) {
        const scene_blob *b = &blobs[k];
        if (b->rx <= 0 || b->ry <= 0)
            continue;
        double reach = b->rx > b->ry ? b->rx : b->ry;
        int x0 = (int)floor(b->cx - reach) - 1, x1 = (int)ceil(b->cx + reach) + 1;
        int y0 = (int)floor(b->cy - reach) - 1, y1 = (int)ceil(b->cy + reach) + 1;
        x0 = x0 < 0 ? 0 : x0;
        y0 = y0 < 0 ? 0 : y0;
        x1 = x1 > img->width ? img->width : x1;
        y1 = y1 > img->height ? img->height : y1;
        for (int y = y0; y < y1; y++)
            for (int x = x0; x < x1; x++)
                if (scene_inside(b, x, y)) {
                    uint8_t *px = img->data + (size_t)y * stride + (size_t)x * 3;
                    px[0] = b->r;
                    px[1] = b->g;
                    px[2] = b->b;
                }
    }
}

/* Fills an RGB8 image: grey texture (0 saturation) with a little grey noise, then the blobs in
 * order. `seed` varies the texture. */
static inline void scene_draw(glcv_image *img, const scene_blob *blobs, int n, uint32_t seed)
{
    size_t stride = img->stride ? img->stride : (size_t)img->width * 3;
    for (int y = 0; y < img->height; y++) {
        uint8_t *row = img->data + (size_t)y * stride;
        for (int x = 0; x < img->width; x++) {
            uint32_t h = (uint32_t)x * 73856093u ^ (uint32_t)y * 19349663u ^ seed * 83492791u;
            h ^= h >> 13;
            h *= 0x5bd1e995u;
            h ^= h >> 15;
            uint8_t *px = row + (size_t)x * 3;
            px[0] = px[1] = px[2] = (uint8_t)(90 + ((x / 8 + y / 8) % 2) * 40 + (h & 15));
        }
    }
    scene_fill_blobs(img, blobs, n);
}

/* ---- many cameras: the scene of the streams tests ---------------------------------------------
 * SCENE_STREAMS cameras of SCENE_W x SCENE_H, each with its own structured grey background (which
 * CAMSHIFT's limits exclude), a few coloured patches of clutter and its own moving objects: two in
 * stream 0 (one added late and removed), none in stream 1, three in stream 2 (one of them the
 * colour of stream 0's first object, one vanishing and coming back elsewhere), two in stream 3
 * (one added late, reusing a freed id). */
enum { SCENE_STREAMS = 4, SCENE_W = 160, SCENE_H = 120, SCENE_OBJECTS = 7, SCENE_FRAMES = 32 };

typedef struct scene_object {
    int stream;
    int added_at;      /* added before frame added_at is tracked (its histogram from that frame) */
    int removed_at;    /* removed before frame removed_at is tracked; 0: never */
    double x, y;       /* centre at frame 0 */
    double vx, vy;     /* pixels per frame */
    double rx, ry;     /* half axes */
    double angle, spin; /* degrees, and degrees per frame */
    int rect;
    uint8_t r, g, b;
    int gone_from, gone_to; /* not drawn in frames gone_from .. gone_to - 1 (gone_to 0: always drawn) */
    double back_x, back_y;  /* from gone_to on, its centre is moved by this much */
} scene_object;

static const scene_object scene_objects[SCENE_OBJECTS] = {
    {0, 0, 0, 40, 60, 2.5, 0.8, 10, 10, 0, 0, 0, 250, 140, 30, 0, 0, 0, 0},
    {2, 0, 0, 120, 40, -2.0, 1.2, 10, 10, 0, 0, 0, 250, 140, 30, 0, 0, 0, 0},
    {2, 0, 0, 40, 90, 1.5, -1.0, 10, 8, 0, 0, 1, 40, 60, 230, 12, 15, 60, 8},
    {2, 0, 0, 80, 22, 0.5, 1.5, 13, 7, 30, 4, 0, 40, 210, 60, 0, 0, 0, 0},
    {3, 0, 0, 30, 30, 2.0, 1.8, 9, 9, 0, 0, 1, 235, 215, 30, 0, 0, 0, 0},
    {0, 5, 20, 130, 30, -1.0, 1.5, 9, 9, 0, 0, 0, 30, 210, 225, 0, 0, 0, 0},
    {3, 22, 0, 130, 90, -1.5, -0.5, 10, 10, 0, 0, 0, 220, 40, 225, 0, 0, 0, 0},
};

/* Object o's blob in frame f; 0 when it is not drawn then. */
static inline int scene_object_blob(const scene_object *o, int f, scene_blob *b)
{
    memset(b, 0, sizeof *b);
    if (o->gone_to && f >= o->gone_from && f < o->gone_to)
        return 0;
    b->cx = o->x + o->vx * f + (o->gone_to && f >= o->gone_to ? o->back_x : 0);
    b->cy = o->y + o->vy * f + (o->gone_to && f >= o->gone_to ? o->back_y : 0);
    b->rx = o->rx;
    b->ry = o->ry;
    b->angle = o->angle + o->spin * f;
    b->rect = o->rect;
    b->r = o->r;
    b->g = o->g;
    b->b = o->b;
    return 1;
}

/* The window an object is added with in frame f: its blob's bounding box. */
static inline glcv_rect scene_object_roi(const scene_object *o, int f)
{
    scene_blob b;
    scene_object_blob(o, f, &b);
    double reach = b.rx > b.ry ? b.rx : b.ry;
    glcv_rect r = {(int)floor(b.cx - reach), (int)floor(b.cy - reach), (int)(2 * reach) + 1, (int)(2 * reach) + 1};
    return r;
}

/* Stream `stream`'s frame f (RGB8, SCENE_W x SCENE_H, any stride): its background pattern, its
 * clutter and its objects. */
static inline void scene_stream_draw(glcv_image *img, int stream, int f)
{
    size_t stride = img->stride ? img->stride : (size_t)img->width * 3;
    for (int y = 0; y < img->height; y++)
        for (int x = 0; x < img->width; x++) {
            uint32_t h = (uint32_t)x * 73856093u ^ (uint32_t)y * 19349663u ^ (uint32_t)(f * 4 + stream) * 83492791u;
            h ^= h >> 13;
            h *= 0x5bd1e995u;
            h ^= h >> 15;
            int g;
            switch (stream % 4) {
            case 0: g = 90 + ((x / 8 + y / 8) % 2) * 40; break;        /* checks */
            case 1: g = 70 + (y / 6 % 3) * 35; break;                  /* stripes */
            case 2: g = 60 + ((x + y) / 10 % 4) * 30; break;           /* diagonals */
            default: g = 100 + ((x * x + y * y) / 400 % 2) * 50; break; /* rings */
            }
            uint8_t *px = img->data + (size_t)y * stride + (size_t)x * 3;
            px[0] = px[1] = px[2] = (uint8_t)(g + (h & 15));
        }
    /* clutter: two small patches of the objects' colours, somewhere else per stream */
    for (int k = 0; k < 2; k++) {
        const scene_object *o = &scene_objects[(stream + 3 * k) % SCENE_OBJECTS];
        int x0 = 8 + ((stream * 37 + k * 71) % (img->width - 16)), y0 = img->height - 12 - k * 40;
        for (int y = y0; y < y0 + 5; y++)
            for (int x = x0; x < x0 + 5; x++) {
                uint8_t *px = img->data + (size_t)y * stride + (size_t)x * 3;
                px[0] = o->r;
                px[1] = o->g;
                px[2] = o->b;
            }
    }
    scene_blob blobs[SCENE_OBJECTS];
    int n = 0;
    for (int k = 0; k < SCENE_OBJECTS; k++)
        if (scene_objects[k].stream == stream && scene_object_blob(&scene_objects[k], f, &blobs[n]))
            n++;
    scene_fill_blobs(img, blobs, n);
}

/* Stream `stream`'s mask for frame f (GRAY8, any stride): 0 on a band of columns and a few rows
 * that move with the frame, 255 elsewhere. */
static inline void scene_stream_mask(glcv_image *mask, int stream, int f)
{
    size_t stride = mask->stride ? mask->stride : (size_t)mask->width;
    for (int y = 0; y < mask->height; y++)
        for (int x = 0; x < mask->width; x++)
            mask->data[(size_t)y * stride + (size_t)x] =
                (x / 20 + stream + f / 8) % 5 == 0 || y % 13 == stream ? 0 : 255;
}

/* ---- many cameras: a batched tracker against one tracker per stream ----------------------------
 * The references are trackers of one stream each on the CPU engine; every object of the scene is
 * added to its stream's reference and to each batched tracker under test at the same frame, with
 * the same histogram and window, and removed at the same frame. A batched tracker's result for an
 * object must be, field for field, the reference's for that object (besides id and stream). */
typedef struct streams_check {
    glcv_track *refs[SCENE_STREAMS];
    int global_id[SCENE_OBJECTS]; /* in the batched trackers (-1: not added) */
    int local_id[SCENE_OBJECTS];  /* in its stream's reference */
    glcv_track_hist *hist;
    int differences, compared, lost;
} streams_check;

/* The parameters every tracker of the check uses, with `streams` and `engine`. */
static inline glcv_track_params streams_check_params(int streams, glcv_engine_mode engine, glcv_logger logger)
{
    glcv_track_params p = GLCV_TRACK_PARAMS(.method = GLCV_TRACK_METHOD_CAMSHIFT, .width = SCENE_W, .height = SCENE_H, .streams = streams,
                                            .engine = engine,
                                            .lost_criteria = GLCV_TRACK_LOST_MASS | GLCV_TRACK_LOST_HISTOGRAM |
                                                             GLCV_TRACK_LOST_ITERATIONS,
                                            .logger = logger);
    return p;
}

/* Creates the references; 0 when that failed. */
static inline int streams_check_open(streams_check *c, glcv_logger logger)
{
    memset(c, 0, sizeof *c);
    c->hist = (glcv_track_hist *)calloc(1, sizeof *c->hist);
    for (int k = 0; k < SCENE_OBJECTS; k++)
        c->global_id[k] = c->local_id[k] = -1;
    glcv_track_params p = streams_check_params(1, GLCV_ENGINE_CPU, logger);
    for (int s = 0; s < SCENE_STREAMS; s++)
        if (glcv_track_create(&p, &c->refs[s]) != GLCV_OK)
            return 0;
    return c->hist != NULL;
}

static inline void streams_check_close(streams_check *c)
{
    for (int s = 0; s < SCENE_STREAMS; s++)
        glcv_track_destroy(&c->refs[s]);
    free(c->hist);
}

/* Adds and removes the objects due at frame f, in object order, to the references and to the n
 * batched trackers; an object's histogram is that of its window in frames[s], its stream's frame f
 * (all pixels: a mask may still be empty then). Returns 0 when a call failed (the failure is the
 * caller's CHECK). */
static inline int streams_check_objects(streams_check *c, glcv_track *const *batched, int n, int f,
                                        const glcv_image *frames)
{
    int ok = 1;
    for (int k = 0; k < SCENE_OBJECTS; k++) {
        const scene_object *o = &scene_objects[k];
        if (o->removed_at == f && f > 0 && c->global_id[k] >= 0) {
            ok &= glcv_track_remove(c->refs[o->stream], c->local_id[k]) == GLCV_OK;
            for (int i = 0; i < n; i++)
                ok &= glcv_track_remove(batched[i], c->global_id[k]) == GLCV_OK;
            c->global_id[k] = c->local_id[k] = -1;
        }
        if (o->added_at != f)
            continue;
        glcv_rect roi = scene_object_roi(o, f);
        ok &= glcv_track_hist_compute(c->refs[o->stream], &frames[o->stream], NULL, roi, c->hist) == GLCV_OK;
        ok &= glcv_track_add(c->refs[o->stream], c->hist, roi, &c->local_id[k]) == GLCV_OK;
        for (int i = 0; i < n; i++) {
            int id = -1;
            ok &= glcv_track_add_to_stream(batched[i], o->stream, c->hist, roi, &id) == GLCV_OK;
            ok &= i == 0 || id == c->global_id[k];
            c->global_id[k] = id;
        }
    }
    return ok;
}

/* Tracks frame f in every reference (frames[s], masks[s] or NULL). */
static inline int streams_check_refs(streams_check *c, const glcv_image *frames, const glcv_image *masks)
{
    int ok = 1;
    for (int s = 0; s < SCENE_STREAMS; s++)
        ok &= glcv_track_frame(c->refs[s], &frames[s], masks ? &masks[s] : NULL) == GLCV_OK;
    return ok;
}

/* The result of `id` among n results, or NULL. */
static inline const glcv_track_result *streams_find(const glcv_track_result *r, int n, int id)
{
    for (int i = 0; i < n; i++)
        if (r[i].id == id)
            return &r[i];
    return NULL;
}

/* Compares a batched tracker's results of frame f with the references', printing up to a few
 * differences to stderr (where, and by how much). Returns the number of differing objects. */
static inline int streams_check_compare(streams_check *c, glcv_track *batched, const char *what, int f)
{
    glcv_track_result got[SCENE_OBJECTS], want[SCENE_OBJECTS];
    int n_got = 0, differ = 0, expected = 0;
    if (glcv_track_results(batched, got, SCENE_OBJECTS, &n_got) != GLCV_OK)
        n_got = -1;
    for (int k = 0; k < SCENE_OBJECTS; k++) {
        if (c->global_id[k] < 0)
            continue;
        expected++;
        const scene_object *o = &scene_objects[k];
        int n_want = 0;
        if (glcv_track_results(c->refs[o->stream], want, SCENE_OBJECTS, &n_want) != GLCV_OK)
            n_want = 0;
        const glcv_track_result *a = streams_find(want, n_want, c->local_id[k]);
        const glcv_track_result *b = n_got > 0 ? streams_find(got, n_got, c->global_id[k]) : NULL;
        c->compared++;
        if (!a || !b) {
            differ++;
            fprintf(stderr, "%s frame %d object %d (stream %d): no result (reference %s, batched %s)\n", what, f, k,
                    o->stream, a ? "has one" : "has none", b ? "has one" : "has none");
            continue;
        }
        c->lost += a->lost != 0;
        glcv_track_result same = *b;
        same.id = a->id;
        same.stream = a->stream;
        int ok = b->stream == o->stream && memcmp(&same, a, sizeof same) == 0;
        if (!ok) {
            differ++;
            if (c->differences + differ <= 5)
                fprintf(stderr,
                        "%s frame %d object %d (stream %d, batched stream %d): reference centre %.9g,%.9g box "
                        "%.9gx%.9g m00 %.17g window %d,%d %dx%d it %d lost %u d %.17g | batched centre %.9g,%.9g "
                        "box %.9gx%.9g m00 %.17g window %d,%d %dx%d it %d lost %u d %.17g (m00 off by %.17g)\n",
                        what, f, k, o->stream, b->stream, (double)a->cx, (double)a->cy, (double)a->width,
                        (double)a->height, a->m00, a->window.x, a->window.y, a->window.width, a->window.height,
                        a->iterations, a->lost, a->distance, (double)b->cx, (double)b->cy, (double)b->width,
                        (double)b->height, b->m00, b->window.x, b->window.y, b->window.width, b->window.height,
                        b->iterations, b->lost, b->distance, b->m00 - a->m00);
        }
    }
    if (n_got != expected) {
        differ++;
        fprintf(stderr, "%s frame %d: %d results, %d objects tracked\n", what, f, n_got, expected);
    }
    c->differences += differ;
    return differ;
}

#endif
