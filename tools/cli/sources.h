/* Source lists (--sources FILE): many cameras, video files and network streams in one run of
 * 'glcv segment' or 'glcv track'. The list has one source per line: a video file, a URL (rtsp://, http://,
 * https://, tcp://, udp://, rtp://, ...: read live, reconnected with back-off when they fail) or a
 * camera (/dev/videoN, live); blank lines and lines starting with '#' are skipped. Source k is the
 * list's line k (from 0): its masks go to OUTDIR/camKKK/ (KKK zero-padded to 3 digits), named as a
 * run on that source alone names them, with the same bytes.
 *
 * Sources of one frame size are one camera set (glcv_media_set): read together, decoded on the GPU
 * (NVDEC) or on CPU threads, converted into one texture array on the GPU and processed by one object
 * of the method for all of them (glcv_segment / glcv_bgsub with streams); --size scales every source
 * to one size (one set). With --gpus N each set is split into N sets, one per GPU, each with its own
 * context, decoders and thread. PNG files are encoded and written by a pool of worker threads.
 *
 * A source that fails (cannot be opened, is corrupt, its connection is cut) is reported with its
 * line and the others go on; live sources are opened again after 1, 2, 4 ... 30 s. The run ends
 * when every file has ended (or failed) and no live source runs, at --max-frames, or at Ctrl-C; the
 * exit status is 1 when a source failed. */
#ifndef GLCV_TOOLS_SOURCES_H
#define GLCV_TOOLS_SOURCES_H

#include "cli.h"
#include "source.h"
#include "subtractor.h"

#include <stdatomic.h>

/* The decoders of --decoder: "auto", "cpu", "nvdec". */
extern const char *const cli_decoder_names[];

/* A source of a set, as the list gives it. */
typedef struct cli_set_member {
    int line;              /* the list's line, from 0: camLLL */
    const char *text;      /* the source as written */
    int live;              /* a URL or a camera */
    const glcv_rect *rois; /* the line's roi=x,y,w,h boxes, in order */
    int n_rois;
} cli_set_member;

/* A list run's work other than segmentation: glcv track's. A line may then give boxes after its
 * source (roi=x,y,w,h, repeated). Each set's thread calls, with the set's GL context current (none
 * when `engine` is the CPU), and host frames (RGB8):
 *   open       once: makes the set's objects (ctx: the set's context, NULL on the CPU). *learn_frames > 0 asks for a first pass over the
 *              set: each member k with learns[k] set gives up to that many frames from its start
 *              to learn(), then learn_end() is called and the sources are opened again, so that
 *              the run starts at their first frame (as a run on one source that learns first);
 *   frames     per read of the set that brought a frame for at least one member: frames[k] with
 *              out[k].has_frame, index[k] the frame's index in its source;
 *   close      once; ok is nonzero when the set's run ended without an error.
 * open, learn, learn_end and frames return a CLI_* code, their errors printed. */
typedef struct cli_sources_work {
    void *user;
    glcv_engine_mode engine;
    int max_set_objects;   /* boxes of one set at most (sets are split to stay below) */
    const glcv_rect *rois; /* the boxes of a line that gives none (--roi); none: such a line is an error */
    int n_rois;
    const char *done;      /* the summary's word for the frames handled: "tracked" */
    int (*open)(void *user, glcv_context *ctx, int width, int height, const cli_set_member *members, int count,
                void **state,
                int *learn_frames, int *learns, char *engine_line, size_t engine_size);
    int (*learn)(void *state, int member, const glcv_image *frame);
    int (*learn_end)(void *state);
    int (*frames)(void *state, const glcv_image *frames, const glcv_media_set_frame *out, const int64_t *index);
    void (*close)(void *state, int ok);
} cli_sources_work;

/* A service's run (glcv serve): the sources come from memory instead of a list file, what happens
 * goes to callbacks instead of the terminal (no progress, no summary, no Ctrl-C handling), and the
 * run ends when *stop is set (or every source has ended). Source k is "line" k. The callbacks run
 * on the sets' threads, several at once (one per set); a source belongs to one set.
 *   open    once per set, when its sources are open: its members and their frame size
 *   masks   per read of a set: masks[k] (GRAY8, 0 or 255) of members[k] where fresh[k], its frame's
 *           index in the source index[k]. Not lent: the sink may take a fresh mask (its pixels are
 *           then the sink's to free with glcv_image_free) by zeroing masks[k], unless outdir's masks
 *           are written too. Lent (only to a sink with release, when no masks are written and the
 *           method is not eth): views of the set's own memory, read-only, that the sink may use
 *           until release is called for these members (the masks are not copied)
 *   release (optional) before lent masks change (the next set processed, the set's end): the sink
 *           returns once it no longer reads the masks lent for `sources`
 *   frame   (optional) before masks, for each source with a fresh mask that wanted() says someone
 *           watches: its frame (RGB8 or RGBA8, valid
 *           during the call), mask and index, for its live view
 *   down    source `source` failed (why: one line): it could not be opened, broke, or ended; a live
 *           source is opened again with back-off, and its next mask says it is up again
 *   stats   about once a second per set: each member's dropped frames (of the stream open now) and
 *           the set's last read and processing times
 *   still   (optional) whether the service still runs source `source`: asked at each read of its set
 *           (0: its source closes at once, delivers nothing more and is reported nowhere) and for a
 *           live source that could not be opened at the start and opens now (0: it gets no set) */
typedef struct cli_sources_sink {
    void *user;
    const char *const *sources;    /* the sources as a list line gives them */
    const int *transports;         /* per source: glcv_media_rtsp_transport */
    const int *realtime;           /* per source: a file read at its frame rate (NULL: none) */
    const char *const *folders;    /* per source: its masks' folder under outdir (instead of camKKK) */
    const int64_t *first_index;    /* per source: the index of its first frame (NULL: 0): a camera that
                                      another instance ran before numbers on */
    int count;
    const atomic_int *stop;
    void (*open)(void *user, const int *sources, int count, int width, int height);
    void (*masks)(void *user, const int *sources, int count, glcv_image *masks, const int *fresh,
                  const int64_t *index, int lent);
    void (*release)(void *user, const int *sources, int count);
    void (*down)(void *user, int source, const char *why);
    int (*wanted)(void *user, int source); /* whether `frame` wants the source's frames now */
    void (*frame)(void *user, int source, const glcv_image *frame, const glcv_image *mask, int64_t index);
    void (*stats)(void *user, const int *sources, int count, const long *dropped, double read_ms,
                  double process_ms);
    int (*still)(void *user, int source);
} cli_sources_sink;

typedef struct cli_sources_options {
    const char *list;       /* --sources FILE */
    const char *outdir;     /* -o */
    const char *background; /* --bg FILE */
    int learn;              /* --learn N, 0: none */
    const cli_source *src;  /* --size, --max-frames, --stall-timeout, --mode (the other source options: usage errors) */
    const cli_method *method;    /* segmentation's method, or: */
    const cli_sources_work *work; /* another command's work (the method is then NULL) */
    int masks;              /* write the masks (with a work: make the camera folders) */
    int gpus;               /* 1.. */
    int decoder;            /* index into cli_decoder_names */
    double cpu_share;       /* --cpu-decode F: share of NVDEC sources decoded on CPU threads */
    int nvdec_sessions;     /* --nvdec-sessions N: auto's NVDEC sessions per GPU (0: no limit), -1: default */
    int threads;            /* PNG worker threads, 0: one fewer than the processors */
    int quiet, verbose;
    const cli_sources_sink *sink; /* a service's run (NULL: the list file's) */
} cli_sources_options;

/* Runs 'glcv segment --sources' (or the work's list run); returns CLI_OK, CLI_FAIL (a source failed:
 * the others finished), CLI_USAGE or CLI_INTERRUPTED. Prints its errors and the summary. */
int cli_sources_run(const cli_sources_options *options, const cli_args *args);

/* --gpus N: N, or for 0 every GPU CUDA sees (at least one). */
int cli_gpus(int requested);

#endif
