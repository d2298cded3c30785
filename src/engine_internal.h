/* The GL engine's object (private to engine.c and engine_transfer.c; modules see engine.h). */
#ifndef GLCV_ENGINE_INTERNAL_H
#define GLCV_ENGINE_INTERNAL_H

#include "engine.h"

#define MAX_PROGRAMS 32
#define MAX_FBOS 32
#define MAX_TIMED_PASSES 128
#define TIMING_FRAMES 4
#define LOCAL_X 16 /* default compute work group; the prelude's GLCV_LOCAL_X/Y */
#define LOCAL_Y 8

typedef struct uniform_loc {
    const char *name; /* static string from the pass description */
    GLint location;
} uniform_loc;

struct glcv_program {
    char key[96];
    GLuint id;
    int n_outputs;
    glcv_format outputs[GLCV_MAX_OUTPUTS];
    GLint region_loc;
    int layered; /* GLCV_LAYERED in its defines */
    uniform_loc locs[24];
    int n_locs;
};

typedef struct fbo_entry {
    GLuint fbo;
    GLuint attachments[GLCV_MAX_OUTPUTS];
    int n;
    unsigned last_use;
} fbo_entry;

typedef struct timed_pass {
    GLuint query;
    const char *label;
} timed_pass;

typedef struct timing_frame {
    timed_pass passes[MAX_TIMED_PASSES];
    int n;
    int pending; /* queries issued, results not yet collected */
} timing_frame;

#define STAGE_SLOTS 3

/* Upload staging: a ring of pixel-unpack buffers. With GL 4.4 they are persistently mapped
 * (pinned memory the GPU copies from by DMA), otherwise mapped on demand. A fence per slot says
 * when the GPU has finished copying out of it. */
typedef struct stage_ring {
    GLuint buffers[STAGE_SLOTS];
    uint8_t *maps[STAGE_SLOTS];
    GLsync fences[STAGE_SLOTS];
    size_t size;
    int next;
    int persistent;
} stage_ring;

struct glcv_engine {
    glcv_engine_mode mode;
    glcv_logger logger;
    glcv_gl_token context; /* the context it was made in: the only one it touches */
    int gl_version;
    GLuint vertex_shader; /* fragment mode: the full-screen triangle */
    GLuint layered_shaders[2]; /* layered fragment passes: vertex and geometry shader, made on first use */
    GLuint vao;
    GLuint samplers[GLCV_SAMPLE_COUNT];
    glcv_program programs[MAX_PROGRAMS];
    int n_programs;
    fbo_entry fbos[MAX_FBOS];
    unsigned fbo_clock;
    GLuint read_fbo;
    stage_ring up;        /* pinned staging memory for uploads */
    GLuint down_buffer;   /* read-back buffer */
    uint8_t *down_map;    /* its persistent mapping (GL 4.4), or NULL */
    size_t down_size;
    /* overlapped downloads (glcv_engine_download) */
    GLuint dl_buffers[GLCV_ENGINE_DOWNLOAD_SLOTS];
    uint8_t *dl_maps[GLCV_ENGINE_DOWNLOAD_SLOTS]; /* persistent mapping, or the on-demand one */
    GLsync dl_fences[GLCV_ENGINE_DOWNLOAD_SLOTS];
    size_t dl_size;
    int dl_next;
    glcv_glstate *state;
    int depth; /* begin/end nesting */
    /* timing */
    int timing;
    GLuint query_pool[TIMING_FRAMES * MAX_TIMED_PASSES];
    timing_frame frames[TIMING_FRAMES];
    int frame_index;   /* frame being recorded, or -1 */
    int frame_counter; /* frames recorded so far */
    glcv_timing last[16];
    int n_last;
};


/* Deletes the staging ring, the download ring, the read-back buffer and the layer copy buffer
 * (engine destroy). */
void glcv_engine_transfers_release(glcv_engine *e);

#endif
