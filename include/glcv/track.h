/* glcv tracker: CAMSHIFT (Bradski 1998) on the GPU with CUDA (Perry 2016), many objects per
 * frame, with a CPU implementation that gives the same results; or a discriminative
 * correlation filter (DCF) with a scale filter and a colour model.
 *
 * Two methods (params.method):
 *   DCF:      a multi-channel correlation filter over HOG cells and intensity (Bolme 2010,
 *             Danelljan's DSST 2014) trained on the box's cells only (Lukezic's CSR-DCF 2017
 *             spatial constraint), its response merged with a colour-histogram likelihood
 *             (Bertinetto's Staple 2016), and DSST's one-dimensional scale filter. An object is
 *             given by its box (glcv_track_add's window, at least partly inside the frame; the
 *             histogram may be NULL and is kept but not used): the next frame tracked teaches it
 *             its models at that box, and its result on that frame is the box. Then, each frame,
 *             the filters find the box's new centre and size in a search window around the last
 *             box (the box grown by (w + h) / 2 a side), and on every second such frame learn
 *             from the frame there (Danelljan's sparse updates, ECO 2017; rates 0.01 for the
 *             filter, 0.04 for the colours, 0.025 for the scales per frame, compounded over the
 *             two; which frames follows from the first box, not from the object's id). The filter's
 *             peak-to-sidelobe ratio (glcv_track_result.peak) is judged against its mean over the
 *             frames the object was found in: below 0.3 times it the object is lost that frame
 *             (GLCV_TRACK_LOST_PEAK: the box coasts at its last velocity and nothing learns);
 *             below 0.45 times it the box moves but nothing learns (Wang's LMCF rule, 2017).
 *             glcv_track_set_window starts the object afresh at the window. The mask of
 *             glcv_track_frame is not used; the CAMSHIFT parameters (bins, limits, window mode,
 *             lost criteria other than PEAK, recovery) do not apply. Both engines run it: CUDA
 *             (one block per object, or a cluster of blocks when the set has few; every object
 *             of a set in one launch) and the CPU (objects spread over the library's
 *             threads), with one arithmetic (src/track_dcf_math.h): the tests find the same boxes
 *             and lost decisions on both.
 *   CAMSHIFT: as described below.
 *
 * Per frame, every pixel gets OpenCV's 8-bit HSV (H 0..179, S and V 0..255, cv::cvtColor's
 * integer arithmetic). A pixel counts only when s_min <= S, v_min <= V <= v_max (Bradski's
 * thresholds) and, when a mask is given, the mask says foreground. Each object has a model
 * histogram over hue (default 60 bins) or hue x saturation, normalised so its largest bin is
 * 255; the back-projection of a pixel is its bin's value rounded to 0..255. In the object's
 * search window the tracker sums the exact integer moments of the back-projection
 *   M00 = sum p, M10 = sum x p, M01 = sum y p, M11 = sum x y p, M20 = sum x^2 p, M02 = sum y^2 p
 * (x, y relative to the window), moves the window to the centroid until it moves less than
 * `epsilon` or `max_iterations` is reached (cv::meanShift), then sizes it:
 *   OPENCV mode: cv::CamShift: the window grows by 10 pixels a side, its moments give the
 *                rotated box (centre, size 4 sqrt(eigenvalues of the covariance), angle) and
 *                the next window is that box's extent + 2;
 *   PAPER mode:  every iteration, width = 2 sqrt(M00 / 255), height = aspect * width, centred
 *                on the centroid (Bradski's and Perry's rectangular window).
 *   ADAPTIVE mode: the mean shift runs with the window at the object's size; the box is measured
 *                in that window grown by a quarter a side: its centroid, and the sides of the
 *                uniform rectangle of the same variances (sqrt(12 var), so a solid object's box is
 *                its extent, where 4 sigma is 15 % wider). Each side follows its measurement by at
 *                most 1/8 a frame, half way, so a noisy frame cannot collapse or blow it up. A
 *                constant-velocity Kalman filter (noise scaled by the box's size) smooths the
 *                centre and predicts where the next search window goes; a lost object coasts on
 *                its velocity (decaying) and its result is the prediction. The box is upright
 *                (angle 0): width horizontal, height vertical.
 * Lost objects are detected by the iteration cap, a mass M00 below `min_mass` times the
 * object's first mass, and the Bhattacharyya distance between the model and the histogram of
 * the new window; an object lost for a few frames searches the whole frame (with a mask, only
 * its foreground counts). A window smaller than `min_window_area` pixels is reset to
 * `reset_width` wide (Perry's minimum-window heuristic).
 *
 * Engines: CUDA (every object's mean-shift loop runs on the device, one block or one cluster
 * of blocks per object, with no host round trip per iteration) or CPU (the same integer sums
 * and the same double-precision window arithmetic in C). Both give identical results:
 * moments, windows, boxes, iteration counts, lost flags and distances agree exactly.
 * Without a CUDA device the AUTO engine falls back to the CPU and says so once (logger).
 * Which device CUDA uses, and how texture inputs reach it: glcv/cuda.h.
 *
 * Many cameras: a tracker of `streams` cameras of one size takes their frames as one set
 * (glcv_track_frames: host images; glcv_track_frames_texture: a GL_TEXTURE_2D_ARRAY, a layer per
 * camera, such as glcv_bgsub_mask_texture's masks). Each object belongs to one stream
 * (glcv_track_add_to_stream) and is tracked in that stream's frames only, with exactly the
 * results a tracker of one stream gets on those frames alone; ids are shared by all streams.
 * The CUDA engine uploads or maps a set once, makes every stream's bin image in one launch and
 * tracks every object of every stream in another, so a set costs one GL->CUDA hand-over, not one
 * per camera.
 *
 * Thread safety: every function that takes a glcv_track locks its mutex, so one object may be
 * shared between threads. Texture inputs follow the GL rules of glcv/core.h; with the CUDA
 * engine, the context must be the one the tracker was created in (when it was created with
 * one current).
 */
#ifndef GLCV_TRACK_H
#define GLCV_TRACK_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct glcv_track glcv_track;

/* Largest hue_bins * sat_bins of a histogram. */
#define GLCV_TRACK_MAX_BINS 4096
/* Largest max_objects. */
#define GLCV_TRACK_MAX_OBJECTS 1024
/* Largest streams. */
#define GLCV_TRACK_MAX_STREAMS 2048
/* The largest glcv_track_params.min_window_area (10^9 pixels: more than any frame has). */
#define GLCV_TRACK_MAX_MIN_WINDOW_AREA 1000000000

/* The tracking method. 0 (DEFAULT) is DCF. */
typedef enum glcv_track_method {
    GLCV_TRACK_METHOD_DEFAULT = 0,
    GLCV_TRACK_METHOD_CAMSHIFT = 1, /* colour-histogram mean shift (Bradski) */
    GLCV_TRACK_METHOD_DCF = 2       /* correlation filters with a scale filter and a colour model */
} glcv_track_method;

/* How the window is sized after the mean shift. 0 (DEFAULT) is OPENCV. */
typedef enum glcv_track_window {
    GLCV_TRACK_WINDOW_DEFAULT = 0,
    GLCV_TRACK_WINDOW_OPENCV = 1, /* cv::CamShift's rotated box from the second moments */
    GLCV_TRACK_WINDOW_PAPER = 2,  /* width = 2 sqrt(M00/255), height = aspect * width */
    GLCV_TRACK_WINDOW_ADAPTIVE = 3 /* an upright box whose size follows the moments at a guarded
                                      rate, and a Kalman filter that predicts the next window */
} glcv_track_window;

/* Why an object is lost (bits; glcv_track_result.lost holds those that `lost_criteria` keeps). */
typedef enum glcv_track_lost {
    GLCV_TRACK_LOST_ITERATIONS = 1, /* the mean shift stopped at max_iterations without converging */
    GLCV_TRACK_LOST_MASS = 2,       /* M00 is 0, or below min_mass times the object's first M00 */
    GLCV_TRACK_LOST_HISTOGRAM = 4,  /* Bhattacharyya distance to the model above max_distance */
    GLCV_TRACK_LOST_PEAK = 8        /* DCF: the peak-to-sidelobe ratio below 0.3 times its mean over the
                                       frames the object was found in */
} glcv_track_lost;

/* What a lost object does. 0 (DEFAULT) is FRAME. */
typedef enum glcv_track_recovery {
    GLCV_TRACK_RECOVERY_DEFAULT = 0,
    /* After `recovery_interval` consecutive lost frames the next search window is the whole
     * frame (with a mask: its foreground is what counts), and again every recovery_interval
     * frames while the object stays lost. */
    GLCV_TRACK_RECOVERY_FRAME = 1,
    GLCV_TRACK_RECOVERY_NONE = 2 /* keep tracking from the last window */
} glcv_track_recovery;

/* Zero fields mean defaults. s_min, v_min and v_max, whose value 0 is meaningful, are set with
 * glcv_track_set_limits after creation. */
typedef struct glcv_track_params {
    int width;       /* frame width, required, 1..16384 */
    int height;      /* frame height, required, 1..16384 */
    int streams;     /* cameras whose frames the tracker takes together (glcv_track_frames,
                        glcv_track_frames_texture), all width x height; default 1;
                        1..GLCV_TRACK_MAX_STREAMS */
    int max_objects; /* objects tracked at once, in all streams together; default 64;
                        1..GLCV_TRACK_MAX_OBJECTS */
    glcv_track_method method; /* default DCF (the better on glcv eval otb: docs/QUALITY.md) */
    int hue_bins;    /* hue bins over H 0..179; default 60; 1..180 */
    int sat_bins;    /* saturation bins over S 0..255: 0 or 1 (default) = hue-only histogram,
                        2..256 = hue x saturation; hue_bins * sat_bins <= GLCV_TRACK_MAX_BINS */
    float epsilon;   /* convergence: the window moved by (dx, dy) with dx^2 + dy^2 < round(eps^2),
                        as cv::meanShift; default 1 (stop when it does not move); 0.001..1000 */
    int max_iterations;      /* mean-shift iterations per frame; default 10; 1..1000 */
    glcv_track_window window; /* default OPENCV */
    float aspect;            /* PAPER mode: height / width; default 1.2 (Bradski); 0.01..100 */
    float min_mass;          /* MASS: lost below this fraction of the first M00; default 0.1; 0..1 */
    float max_distance;      /* HISTOGRAM: lost above this Bhattacharyya distance (0 = same
                                histogram, 1 = disjoint); default 0.7; 0..1 (1 = never lost) */
    unsigned lost_criteria;  /* glcv_track_lost bits that mark an object lost; each method uses
                                those that apply to it (PEAK: DCF; the others: CAMSHIFT);
                                default MASS | HISTOGRAM | PEAK. The ITERATIONS bit is reported
                                in glcv_track_result.reasons whatever this says. */
    glcv_track_recovery recovery; /* default FRAME */
    int recovery_interval;   /* RECOVERY_FRAME: the whole frame is searched after every
                                recovery_interval consecutive lost frames (1 = at once); default 4
                                (a lost frame or two do not make the object jump); 1..1e6 */
    int min_window_area;     /* a window of fewer pixels (w * h) is reset; default 20; -1 = never;
                                -1..GLCV_TRACK_MAX_MIN_WINDOW_AREA */
    int reset_width;         /* width of a reset window (height: aspect * width in PAPER mode);
                                default 200; 1..1e6; clipped to the frame */
    /* Engines: CUDA, CPU; AUTO (the default) is CUDA when a device can be used, else the CPU
     * (logged once). FRAGMENT and COMPUTE are INVALID_ARGUMENT. */
    glcv_engine_mode engine;
    int cuda_device;         /* CUDA engine: the (first) device when the current GL context is not
                                on one (glcv/cuda.h); default 0; 0..1024 */
    /* CUDA engine: the number of devices the objects are spread over (object id on device
     * cuda_device + id % cuda_devices; each device receives the frames and tracks its objects,
     * side by side with the others); default 1; -1 = every device from cuda_device on; at most
     * 16. More than are present is UNSUPPORTED. With several, texture inputs are read back to
     * host memory once and uploaded to each device. The results do not depend on the number of
     * devices. */
    int cuda_devices;
    glcv_logger logger;
} glcv_track_params;

#define GLCV_TRACK_PARAMS(...) ((glcv_track_params){__VA_ARGS__})

/* A model histogram: `value` holds hue_bins * sat_bins bins, hue-major (bin of hue bin h and
 * saturation bin s: h * sat_bins + s), each 0..255. sat_bins is 1 for a hue-only histogram.
 * Plain data: copy it, keep it, save it. */
typedef struct glcv_track_hist {
    int hue_bins;
    int sat_bins;
    float value[GLCV_TRACK_MAX_BINS];
} glcv_track_hist;

/* One object's result for the last frame. */
typedef struct glcv_track_result {
    int id;            /* the object's id (glcv_track_add) */
    int stream;        /* the stream it is tracked in (0 unless added with glcv_track_add_to_stream) */
    float cx, cy;      /* rotated box: centre in pixels (pixel centres at +0.5) */
    float width;       /* rotated box: the minor axis (OPENCV) or the window width (PAPER) */
    float height;      /* rotated box: the major axis (OPENCV) or aspect * width (PAPER) */
    float angle;       /* degrees, 0..180, of the major axis as cv::CamShift reports it; 0 in PAPER mode */
    glcv_rect bbox;   /* the axis-aligned bounding box of the rotated box, inside the frame */
    glcv_rect window; /* the search window of the next frame */
    int iterations;    /* mean-shift iterations this frame (moment sums taken) */
    unsigned lost;     /* nonzero when lost: the glcv_track_lost bits kept by lost_criteria */
    unsigned reasons;  /* every glcv_track_lost bit that applied, kept or not */
    double m00, m10, m01, m11, m20, m02; /* moments of the window the box was measured in
                                            (exact integers, relative to that window) */
    glcv_rect measured; /* that window */
    double distance;   /* Bhattacharyya distance between the model and the new window's
                          histogram (1 when the window has no counted pixel; -1 when not
                          measured: HISTOGRAM is not in lost_criteria, or DCF) */
    double peak;       /* DCF: the filter response's peak-to-sidelobe ratio this frame (0 on the
                          frame the object learned from); -1 with CAMSHIFT */
} glcv_track_result;

/* Creates a tracker. The CUDA engine's device follows glcv/cuda.h's rule.
 * Errors: INVALID_ARGUMENT (NULL, sizes or parameters out of range, unknown enum, an engine the
 * tracker does not have), UNSUPPORTED (CUDA asked for and no CUDA device can be used),
 * OUT_OF_MEMORY, CUDA. *out is NULL on error. */
GLCV_API glcv_status glcv_track_create(const glcv_track_params *params, glcv_track **out);

/* Destroys the tracker and its CUDA and GL resources (for the GL ones, its context must be
 * current), dropping its registrations of the caller's textures. Accepts NULL and &NULL; sets
 * *track to NULL. */
GLCV_API void glcv_track_destroy(glcv_track **track);

/* The resolved parameters (defaults filled in; `engine` is CUDA or CPU, the one in use).
 * Errors: INVALID_ARGUMENT. */
GLCV_API glcv_status glcv_track_get_params(glcv_track *track, glcv_track_params *out);

/* Bradski's thresholds, for histograms and back-projection: a pixel counts when
 * s_min <= S and v_min <= V <= v_max. Defaults 30, 10, 255 (OpenCV's camshift sample).
 * Takes effect from the next frame or histogram. Errors: INVALID_ARGUMENT (outside 0..255,
 * v_min > v_max). */
GLCV_API glcv_status glcv_track_set_limits(glcv_track *track, int s_min, int v_min, int v_max);

/* Builds a model histogram (the tracker's bins and limits) from the pixels of `region` in a
 * host frame (RGB8, RGBA8, BGR8 or BGRA8, the tracker's size), counting only pixels where
 * `mask` (GRAY8, the tracker's size, nonzero = foreground; NULL = all) is set. Normalised so
 * the largest bin is 255 (cv::normalize NORM_MINMAX of the counts). The region is clipped to
 * the frame. With several streams the frame may be any stream's (the histogram does not depend
 * on the stream). Errors: INVALID_ARGUMENT (bad image, empty region), SIZE_MISMATCH. */
GLCV_API glcv_status glcv_track_hist_compute(glcv_track *track, const glcv_image *frame, const glcv_image *mask,
                                             glcv_rect region, glcv_track_hist *out);

/* As glcv_track_hist_compute, from GL textures (frame: a GL_TEXTURE_2D of the tracker's size
 * with a colour format, values 0..1 scaled by 255; mask: 0 = none, else a texture whose red
 * channel > 0.5 means foreground), whatever the number of streams. Needs a current GL context.
 * Errors: as above, NO_CONTEXT, UNSUPPORTED (format), GL. */
GLCV_API glcv_status glcv_track_hist_compute_texture(glcv_track *track, unsigned int frame, unsigned int mask,
                                                     glcv_rect region, glcv_track_hist *out);

/* Comaniciu, Ramesh and Meer's background-weighted histogram (2003): scales each bin u of `hist`
 * (a model of the object in `region` of `frame`, of the tracker's bins) by min(1, o* / o_u), where
 * o_u counts the pixels of bin u in the ring around the region (the region grown to three times its
 * area, clipped to the frame, without the region; every pixel within the limits counts) and o* is
 * the smallest nonzero o_u, then renormalises so the largest bin is 255. Colours common around the
 * object lose weight, so the back-projection of a background like the object's lights up less.
 * Errors: INVALID_ARGUMENT (NULL, bad image, bins differ, a bin value NaN or outside 0..255,
 * region outside the frame), SIZE_MISMATCH. On error `hist` is unchanged. */
GLCV_API glcv_status glcv_track_hist_weight_background(glcv_track *track, const glcv_image *frame, glcv_rect region,
                                                       glcv_track_hist *hist);
/* Histogram files: a small text format.
 *   line 1:          glcv-track-hist 1
 *   per histogram:   hist HUE_BINS SAT_BINS
 *                    HUE_BINS * SAT_BINS values (0..255, hue-major), separated by white space
 *   '#' starts a comment that runs to the end of the line.
 * save writes `count` histograms (to a temporary name, then renamed). load reads up to
 * `capacity` of them and sets *count. Errors: INVALID_ARGUMENT, IO, CORRUPT_DATA (bad header,
 * bin counts out of range, a value outside 0..255, fewer values than announced),
 * OUT_OF_MEMORY. */
GLCV_API glcv_status glcv_track_hist_save(const char *path, const glcv_track_hist *hists, int count,
                                          const glcv_logger *logger);
GLCV_API glcv_status glcv_track_hist_load(const char *path, glcv_track_hist *hists, int capacity, int *count,
                                          const glcv_logger *logger);

/* Bhattacharyya distance between two histograms of the same bins, as cv::compareHist
 * HISTCMP_BHATTACHARYYA: sqrt(1 - sum sqrt(a b) / sqrt(sum a * sum b)), 0..1.
 * Errors: INVALID_ARGUMENT (NULL, different bins). */
GLCV_API glcv_status glcv_track_hist_distance(const glcv_track_hist *a, const glcv_track_hist *b, double *out);

/* Adds an object with a model histogram (of the tracker's bins; DCF: may be NULL) and its first
 * search window (clipped to the frame when it is tracked; DCF: its box), in stream 0. *id
 * receives its id (0..max_objects-1; the smallest free one, whatever the stream; -1 on error).
 * The histogram is copied. Errors: INVALID_ARGUMENT (NULL, bins differ from the tracker's, a value
 * outside 0..255 or NaN, window width or height < 1; DCF: a box with no pixel in the frame),
 * STATE (max_objects reached), CUDA. */
GLCV_API glcv_status glcv_track_add(glcv_track *track, const glcv_track_hist *hist, glcv_rect window, int *id);

/* As glcv_track_add, for an object of stream `stream` (0..streams-1): it is tracked in that
 * stream's frames of each set (glcv_track_frames, glcv_track_frames_texture), its window is in
 * that stream's pixel coordinates, and a lost object searches that stream's whole frame. Ids are
 * shared by all streams. Errors: as glcv_track_add, and INVALID_ARGUMENT for a stream out of
 * range. */
GLCV_API glcv_status glcv_track_add_to_stream(glcv_track *track, int stream, const glcv_track_hist *hist,
                                              glcv_rect window, int *id);

/* Removes an object; its id may be given to a later object. Errors: INVALID_ARGUMENT (no such id). */
GLCV_API glcv_status glcv_track_remove(glcv_track *track, int id);

/* Sets an object's search window for the next frame and clears its lost state (DCF: the object
 * starts afresh at that box, learned from the next frame). Errors: INVALID_ARGUMENT (also DCF: a
 * box with no pixel in the frame). */
GLCV_API glcv_status glcv_track_set_window(glcv_track *track, int id, glcv_rect window);

/* The model histogram of an object (for saving). Errors: INVALID_ARGUMENT. */
GLCV_API glcv_status glcv_track_get_hist(glcv_track *track, int id, glcv_track_hist *out);

/* Tracks every object in a host frame (RGB8, RGBA8, BGR8 or BGRA8, any stride), with an
 * optional mask (GRAY8, nonzero = foreground; NULL = every pixel). With the CUDA engine the call
 * returns once the work is queued; glcv_track_results waits for it. The caller's memory is
 * not used after the call returns. A tracker of several streams takes sets instead
 * (glcv_track_frames). Errors: INVALID_ARGUMENT (also: the tracker has several streams),
 * SIZE_MISMATCH, OUT_OF_MEMORY, CUDA. */
GLCV_API glcv_status glcv_track_frame(glcv_track *track, const glcv_image *frame, const glcv_image *mask);

/* Tracks every object of every stream in one frame set: frames[i] is stream i's frame (count ==
 * streams; the tracker's size; RGB8, RGBA8, BGR8 or BGRA8, all of one format; any stride), masks
 * NULL (every pixel counts) or `count` GRAY8 images of the tracker's size (nonzero = foreground).
 * Each object is tracked in its own stream's frame and mask. The CUDA engine copies the set into
 * pinned staging memory and uploads it in one transfer, makes the bin images of all streams in
 * one launch and tracks all objects in another; it returns once that is queued, and
 * glcv_track_results waits for it. The caller's memory is not used after the call returns.
 * On a tracker of one stream it is glcv_track_frame with count 1. Nothing is tracked when an
 * argument is wrong.
 * Errors: INVALID_ARGUMENT (NULL frames, count != streams, a bad image, frames of different
 * formats), SIZE_MISMATCH, OUT_OF_MEMORY, CUDA. */
GLCV_API glcv_status glcv_track_frames(glcv_track *track, const glcv_image *frames, const glcv_image *masks,
                                       int count);

/* As glcv_track_frame, from GL textures in the current context: `frame` a GL_TEXTURE_2D of the
 * tracker's size with a colour format (row 0 = image row 0), `mask` 0 or a texture whose red
 * channel > 0.5 means foreground (e.g. glcv_segment_mask_texture). A tracker of several streams
 * takes array textures instead (glcv_track_frames_texture; INVALID_ARGUMENT here). The textures
 * are never modified, and the caller may draw into them or update them (glTexSubImage2D,
 * rendering) once the call returns: GL commands issued afterwards run after the tracker's reads.
 * The CUDA engine registers a GL_RGBA8 frame texture and a GL_R8 or GL_RGBA8 mask texture with
 * CUDA on first use and keeps the registration (by texture name, size and internal format);
 * each frame it maps them and reads them in place. Other formats are copied by GL into a
 * buffer of the tracker's (slower). Before deleting a texture given here, or re-specifying it
 * (glTexImage2D: the NVIDIA driver refuses that with GL_INVALID_OPERATION while the texture is
 * registered), call glcv_track_forget_texture (or destroy the tracker): a registration must not
 * outlive its texture, and a new texture that GL gives the same name could otherwise be read
 * through the old registration. A size or format found changed is registered again.
 * Errors: as glcv_track_frame, NO_CONTEXT, UNSUPPORTED (texture format), GL. */
GLCV_API glcv_status glcv_track_frame_texture(glcv_track *track, unsigned int frame, unsigned int mask);

/* As glcv_track_frames, from GL texture arrays in the current context: `frames` a
 * GL_TEXTURE_2D_ARRAY whose level 0 has exactly `streams` layers of the tracker's size (layer i =
 * stream i; a normalised or float colour format, values 0..1 scaled by 255; row 0 = image row
 * 0), `masks` 0 (every pixel counts) or a GL_TEXTURE_2D_ARRAY of as many layers of that size
 * whose red channel > 0.5 means foreground: glcv_bgsub_mask_texture of an object of the same
 * streams and size whose masks are unpacked (GL_R8), or glcv_segment_mask_texture of a
 * segmenter with params.streams. The textures are never modified, and the caller may update
 * them once the call returns, as with glcv_track_frame_texture.
 * The CUDA engine (its GL context on the CUDA device) registers a GL_RGBA8 frames array and a
 * GL_R8 or GL_RGBA8 masks array with CUDA on first use, once each, and keeps the registrations
 * (by texture name, size, layers and internal format: an array found changed is registered
 * again); each set maps both in one call, reads every layer in place through texture objects
 * built once (again when CUDA maps an array elsewhere), and runs one bin launch for all layers
 * and one tracking launch for all objects. Arrays of other formats, or ones CUDA refuses, are
 * copied by GL into a buffer of the tracker's (one copy per array per set; slower). Before
 * deleting or re-specifying an array given here, call glcv_track_forget_texture with it. The
 * CPU engine reads the layers back through GL (glReadPixels) and tracks on them.
 * Nothing is tracked when an argument is wrong.
 * Errors: NO_CONTEXT (no current context; checked before any GL call), INVALID_ARGUMENT (0, not
 * a texture or not a GL_TEXTURE_2D_ARRAY, another number of layers), SIZE_MISMATCH (layer size),
 * UNSUPPORTED (an integer, depth or sRGB format, a base level other than 0), OUT_OF_MEMORY, GL,
 * CUDA. */
GLCV_API glcv_status glcv_track_frames_texture(glcv_track *track, unsigned int frames, unsigned int masks);

/* Drops what the tracker keeps for a texture given to glcv_track_frame_texture, or an array given
 * to glcv_track_frames_texture (the CUDA engine's registration of it with CUDA, and its texture
 * objects), once the tracker's queued work is done. Call it,
 * with the tracker's GL context current, before deleting or re-specifying such a texture; the
 * next frame that uses it registers it again. A texture the tracker
 * does not know, and the CPU engine, are no-ops. Errors: INVALID_ARGUMENT (NULL), STATE, CUDA. */
GLCV_API glcv_status glcv_track_forget_texture(glcv_track *track, unsigned int texture);

/* Results of the last frame (or frame set) for every object tracked in it (objects added since
 * are not in it), in increasing id order whatever their streams: writes up to `capacity` results
 * and sets *count to the number of those objects. Waits for the GPU. Errors: INVALID_ARGUMENT,
 * STATE (no frame tracked yet), CUDA. */
GLCV_API glcv_status glcv_track_results(glcv_track *track, glcv_track_result *out, int capacity, int *count);

/* The four corners of a rotated box (centre cx, cy, size w x h, angle in degrees; a result's cx,
 * cy, width, height, angle) in pixels, as cv::RotatedRect::points: x[0], y[0] is the corner at
 * (-w/2, +h/2) from the centre before the rotation, then the others in turn (-w/2, -h/2),
 * (+w/2, -h/2), (+w/2, +h/2). For drawing a tracked object's box. x and y hold 4 values each;
 * with either NULL nothing is written. Non-finite arguments give non-finite corners. */
GLCV_API void glcv_track_box_points(float cx, float cy, float w, float h, float angle, float x[4], float y[4]);

/* The axis-aligned bounding box of a rotated box (centre cx, cy, size w x h, angle in degrees),
 * as cv::RotatedRect::boundingRect, clipped to a frame of frame_w x frame_h (may be empty; empty
 * for non-finite arguments or a frame smaller than 1 x 1). */
GLCV_API glcv_rect glcv_track_box_bounds(float cx, float cy, float w, float h, float angle, int frame_w,
                                               int frame_h);

#ifdef __cplusplus
}
#endif
#endif
