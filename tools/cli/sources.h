/* Source lists (--sources FILE): many cameras, video files and network streams in one run of
 * 'glcv segment'. The list has one source per line: a video file, a URL (rtsp://, http://,
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

/* The decoders of --decoder: "auto", "cpu", "nvdec". */
extern const char *const cli_decoder_names[];

typedef struct cli_sources_options {
    const char *list;       /* --sources FILE */
    const char *outdir;     /* -o */
    const char *background; /* --bg FILE */
    int learn;              /* --learn N, 0: none */
    const cli_source *src;  /* --size, --max-frames, --stall-timeout, --mode (the other source options: usage errors) */
    const cli_method *method;
    int masks;              /* write the masks */
    int gpus;               /* 1.. */
    int decoder;            /* index into cli_decoder_names */
    double cpu_share;       /* --cpu-decode F: share of NVDEC sources decoded on CPU threads */
    int threads;            /* PNG worker threads, 0: one fewer than the processors */
    int quiet, verbose;
} cli_sources_options;

/* Runs 'glcv segment --sources'; returns CLI_OK, CLI_FAIL (a source failed: the others finished),
 * CLI_USAGE or CLI_INTERRUPTED. Prints its errors and the summary. */
int cli_sources_segment(const cli_sources_options *options, const cli_args *args);

#endif
