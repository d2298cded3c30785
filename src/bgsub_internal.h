/* Background subtraction (private): the object shared by its files, and the rule of one pixel
 * that both engines compute.
 *   bgsub.c      the object: parameters, validation, frame sets, learning, dispatch
 *   bgsub_gl.c   the GL passes (shaders/bgsub.glsl) on the engine, FRAGMENT or COMPUTE
 *   bgsub_cpu.c  the CPU implementation: the CPU engine and the tests' oracle
 * Every function here is called with the object's mutex held. */
#ifndef GLCV_BGSUB_INTERNAL_H
#define GLCV_BGSUB_INTERNAL_H

#include <glcv/bgsub.h>

#include "engine.h"

#include <pthread.h>
#include <stdlib.h>

#define GLCV_BGSUB_MAX_SIZE 16384
#define GLCV_BGSUB_MAX_STREAMS 2048
#define GLCV_BGSUB_LEARN_KEEP 16 /* learned sets kept for the median */
#define GLCV_BGSUB_GL_RING 4     /* frame sets the GL engines keep */

/* The rule's numbers in fixed point: A = alpha * 65536, C = c * 256, F = min_threshold * 256
 * (each rounded to the nearest integer); K the absorb count, vote the votes a foreground pixel
 * needs among its 3 x 3 (0: no vote). */
typedef struct glcv_bgsub_rule {
    glcv_bgsub_method method;
    uint32_t a, c, f;
    int k, vote;
} glcv_bgsub_rule;

/* Per-pixel decisions of a set, before the vote: bit 0 raw foreground, bit 1 moving. */
enum { GLCV_BGSUB_RAW = 1, GLCV_BGSUB_MOVING = 2 };

/* Step 1 of one pixel: lanes 1 (gray) or 3 (colour channels). `history` is the number of frames
 * before the current one (0, 1, 2 or more); `init` nonzero makes B the frame, T the floor and the
 * count 0 first (VSAM's first frame without learning). Returns the decisions (raw foreground:
 * VSAM |I - B| > T, DIFF2 |I - I1| > T, DIFF3 both differences > T; in colour where any channel
 * says so) and, for VSAM, updates B, T and the count:
 *   count <- moving ? count : raw ? min(K, count + 1) : max(0, count - 1)
 *   where not moving and (not raw or count = K): B and T adapt (bgsub.h). */
static inline int glcv_bgsub_pixel(const glcv_bgsub_rule *r, int lanes, const uint8_t *cur, const uint8_t *p1,
                                   const uint8_t *p2, uint16_t *bg, uint16_t *th, uint8_t *count, int history,
                                   int init)
{
    int moving = 0, diff = 0, fg = 0;
    if (init && r->method == GLCV_BGSUB_VSAM) {
        for (int k = 0; k < lanes; k++) {
            bg[k] = (uint16_t)(cur[k] << 8);
            th[k] = (uint16_t)r->f;
        }
        *count = 0;
    }
    for (int k = 0; k < lanes; k++) {
        uint32_t t = th[k];
        uint32_t d1 = history >= 1 ? (uint32_t)abs((int)cur[k] - (int)p1[k]) << 8 : 0;
        uint32_t d2 = history >= 2 ? (uint32_t)abs((int)cur[k] - (int)p2[k]) << 8 : 0;
        moving |= history >= 2 && d1 > t && d2 > t;
        diff |= history >= 1 && d1 > t;
    }
    if (r->method == GLCV_BGSUB_DIFF2)
        return diff ? GLCV_BGSUB_RAW : 0;
    if (r->method == GLCV_BGSUB_DIFF3)
        return moving ? GLCV_BGSUB_RAW | GLCV_BGSUB_MOVING : 0;
    for (int k = 0; k < lanes; k++) {
        uint32_t i16 = (uint32_t)cur[k] << 8;
        uint32_t d = i16 > bg[k] ? i16 - bg[k] : bg[k] - i16;
        fg |= d > th[k];
    }
    int c = *count;
    if (!moving)
        c = fg ? (c < r->k ? c + 1 : r->k) : (c > 0 ? c - 1 : 0);
    *count = (uint8_t)c;
    if (!moving && (!fg || c >= r->k)) {
        for (int k = 0; k < lanes; k++) {
            uint32_t i16 = (uint32_t)cur[k] << 8, b = bg[k], t = th[k];
            uint32_t d = i16 > b ? i16 - b : b - i16;
            uint32_t cd = (r->c * d + 128u) >> 8;
            if (cd > 65280u)
                cd = 65280u;
            uint32_t nb = (r->a * b + (65536u - r->a) * i16 + 32768u) >> 16;
            uint32_t nt = (r->a * t + (65536u - r->a) * cd + 32768u) >> 16;
            bg[k] = (uint16_t)nb;
            th[k] = (uint16_t)(nt > r->f ? nt : r->f);
        }
    }
    return (fg ? GLCV_BGSUB_RAW : 0) | (moving ? GLCV_BGSUB_MOVING : 0);
}

/* ---- the CPU implementation (bgsub_cpu.c) ------------------------------------------------------
 * Frames are held as lanes (1 or 3 bytes per pixel: luma, or R, G, B). */
typedef struct glcv_bgsub_cpu {
    int width, height, streams, lanes;
    uint8_t *ring[3];  /* per slot: streams * width * height * lanes */
    uint16_t *bg, *th; /* streams * width * height * lanes */
    uint8_t *count;    /* streams * width * height */
    uint8_t *raw;      /* the decisions of the last set: streams * width * height */
    uint8_t *masks[3]; /* the masks of the last three sets: streams * width * height, 0/255 */
} glcv_bgsub_cpu;

glcv_status glcv_bgsub_cpu_init(glcv_bgsub_cpu *cpu, int width, int height, int streams, int lanes);
void glcv_bgsub_cpu_free(glcv_bgsub_cpu *cpu);
/* Processes the set in ring slot `cur` with p1, p2 the slots before it, into mask slot `mask`. */
void glcv_bgsub_cpu_run(glcv_bgsub_cpu *cpu, const glcv_bgsub_rule *rule, int cur, int p1, int p2, int mask,
                        int history, int init);

/* Converts a frame of `format` (any stride) to lanes: 1 = luma (77 R + 150 G + 29 B + 128) >> 8
 * (GRAY8 as it is), 3 = R, G, B. */
void glcv_bgsub_to_lanes(const glcv_image *frame, int lanes, uint8_t *out);

/* ---- the object --------------------------------------------------------------------------------- */

struct glcv_bgsub {
    pthread_mutex_t lock;
    glcv_bgsub_params p;
    glcv_bgsub_rule rule;
    int lanes;   /* 1 gray, 3 colour */
    int bpp;     /* bytes per pixel of p.format */
    int packed;  /* GL layout: 4 gray pixels per texel */
    long sets;   /* sets processed since the history started */
    long total;  /* sets processed since creation (names the downloads) */
    int initialised; /* B and T hold values (learned, or from a first frame) */
    int ring_cur;    /* ring slot of the newest frame */
    /* learning */
    int learning;
    int learn_kept, learn_step, learn_seen;
    uint8_t *learn[GLCV_BGSUB_LEARN_KEEP]; /* kept sets as lanes: streams * width * height * lanes */
    uint8_t *mapped_host;                   /* CPU engine: memory of map_frames */
    int mapped_slot;                        /* GL: staging slot of map_frames, -1 none */
    int mapped;                             /* map_frames called, frames_mapped not yet */
    /* engines */
    glcv_engine *engine; /* NULL: CPU */
    glcv_bgsub_cpu cpu;
    /* GL */
    /* Frame sets as words (buffer textures), rotated by index: the current set, the two before
     * it, and a fourth that the next set's upload fills while the current set's passes run. */
    glcv_tex ring[GLCV_BGSUB_GL_RING];
    glcv_tex bg[2], th[2], count[2]; /* state, written in turn */
    glcv_tex state[2];                /* in blocks: B, T and the counter in one buffer, in turn */
    int state_cur;
    glcv_tex raw, moving;       /* decisions (in blocks: a buffer), the chain's moving pixels */
    glcv_tex raw_prev;          /* fused: the set before's decisions, which this set's dispatch votes */
    glcv_tex mask[2];           /* masks of even and odd sets: one is read back while the next is made */
    glcv_tex luma;              /* GRAY8 frames from a caller's texture: their luma, copied from here */
    glcv_tex stage_dev;         /* streamed: a caller's texture's set, read as the staging memory is */
    glcv_program *update;       /* stage 0: decisions, B, T, counter */
    glcv_program *chain[5];     /* the chain's stages 1..5 */
    glcv_program *vote;         /* stage 6 */
    int stream;                 /* frames read from the staging memory by the first pass */
    int blocks;                 /* ... in blocks of 64 quads (shaders/bgsub.glsl BGSUB_BLOCKS) */
    int fused;                  /* ... and the vote of a set runs in the dispatch of the next one */
    long made;                  /* the sets before this one (by `total`) have their masks made */
    int dl_slot[GLCV_ENGINE_DOWNLOAD_SLOTS];
    long dl_set[GLCV_ENGINE_DOWNLOAD_SLOTS];
    int dl_next;
};

glcv_status glcv_bgsub_gl_create(glcv_bgsub *b);
void glcv_bgsub_gl_destroy(glcv_bgsub *b);
/* Staging memory for one set of raw frames (streams * width * height * bpp bytes). */
glcv_status glcv_bgsub_gl_stage(glcv_bgsub *b, void **ptr, int *slot);
/* Copies the first `streams` layers of a caller's frames array (checked: glcv_gl_check_frames) on
 * the GPU, in params.format (GRAY8: their luma, by a pass), to where the next set's passes read a
 * set the host staged: glcv_bgsub_gl_run with slot -1 then runs them. */
glcv_status glcv_bgsub_gl_take_texture(glcv_bgsub *b, GLuint texture);
/* Uploads staging slot `slot` (-1: the set glcv_bgsub_gl_take_texture copied) as the newest frame
 * set and runs the passes. */
glcv_status glcv_bgsub_gl_run(glcv_bgsub *b, int slot, int wait);
/* Sets B and T of every stream (streams * width * height * lanes each, 8.8). */
glcv_status glcv_bgsub_gl_set_state(glcv_bgsub *b, const uint16_t *bg, const uint16_t *th);
glcv_status glcv_bgsub_gl_read_state(glcv_bgsub *b, int stream, uint16_t *bg, uint16_t *th);
/* Fused: votes the newest set now, unless done (its own pass; the next set's dispatch then votes
 * nothing). Otherwise nothing to do. */
glcv_status glcv_bgsub_gl_vote_newest(glcv_bgsub *b);
/* The masks of set `set` (streams * width * height bytes) in the download buffer: waits for its
 * download, or (the newest set only) downloads them now. */
glcv_status glcv_bgsub_gl_masks(glcv_bgsub *b, long set, const uint8_t **masks);

#endif
