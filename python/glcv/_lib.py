"""The C declarations glcv's Python classes call, and the loading of libglcv.

The declarations are those of include/glcv/*.h, written for cffi's ABI mode (no compiler at
install time): the enums are ints, the structs are the headers' structs field for field. cffi
over ctypes: its calls cost less (bench/python_call_bench.py, docs/PERFORMANCE.md).

Which library is loaded, first found wins:
  1. the file named by the environment variable GLCV_LIBRARY;
  2. the one the build recorded in _paths.py (the build tree's libglcv.so.0, or the installed
     one, relative to where the package was installed);
  3. libglcv.so.0 through the dynamic loader's search path (ctypes.util.find_library("glcv")
     first, for a library that is only on ldconfig's list under another name).
"""
import ctypes.util
import os

import cffi

CDEF = """
typedef int glcv_status;
typedef int glcv_log_level;
typedef int glcv_engine_mode;
typedef int glcv_pixel_format;
typedef int glcv_clock;
typedef void (*glcv_log_fn)(void *user, glcv_log_level level, const char *message);
typedef struct glcv_logger { glcv_log_fn fn; void *user; glcv_log_level max_level; } glcv_logger;
typedef struct glcv_rect { int x, y, width, height; } glcv_rect;
typedef struct glcv_image {
    uint8_t *data; int width; int height; size_t stride; glcv_pixel_format format;
} glcv_image;
typedef struct glcv_timing { const char *name; double ms; int count; glcv_clock clock; } glcv_timing;

const char *glcv_status_string(glcv_status status);
const char *glcv_engine_mode_string(glcv_engine_mode mode);
glcv_status glcv_engine_mode_parse(const char *name, glcv_engine_mode *out);
int glcv_pixel_format_size(glcv_pixel_format format);

/* image.h */
void glcv_image_free(glcv_image *image);
size_t glcv_image_set_max_pixels(size_t n);
size_t glcv_image_max_pixels(void);
glcv_status glcv_image_load(const char *path, glcv_pixel_format format, const glcv_logger *logger,
                            glcv_image *out);
glcv_status glcv_image_info(const char *path, int *width, int *height, int *channels,
                            const glcv_logger *logger);
glcv_status glcv_image_save_png_level(const char *path, const glcv_image *image, int level,
                                      const glcv_logger *logger);

/* context.h */
typedef struct glcv_context glcv_context;
typedef struct glcv_context_params {
    int match_cuda_device; int cuda_device; int surfaceless_only; int min_gl_version;
    glcv_logger logger;
} glcv_context_params;
glcv_status glcv_context_create(const glcv_context_params *params, glcv_context **out);
void glcv_context_destroy(glcv_context **ctx);
glcv_status glcv_context_make_current(glcv_context *ctx);
const char *glcv_context_describe(const glcv_context *ctx);
int glcv_context_cuda_device(const glcv_context *ctx);
int glcv_gl_context_current(void);

/* segment.h */
typedef struct glcv_segment glcv_segment;
typedef struct glcv_segment_params {
    int width; int height; float ts; float odc; float b1; float b2; int iterations;
    uint64_t seed; glcv_engine_mode engine; float adapt_rate; int timing; int fixed_parameters;
    glcv_logger logger; int preset; int streams;
} glcv_segment_params;
glcv_status glcv_segment_create(const glcv_segment_params *params, glcv_segment **out);
void glcv_segment_destroy(glcv_segment **seg);
glcv_status glcv_segment_get_params(glcv_segment *seg, glcv_segment_params *out);
glcv_status glcv_segment_set_ts(glcv_segment *seg, float ts);
glcv_status glcv_segment_set_odc(glcv_segment *seg, float odc);
glcv_status glcv_segment_set_b1(glcv_segment *seg, float b1);
glcv_status glcv_segment_set_b2(glcv_segment *seg, float b2);
glcv_status glcv_segment_set_iterations(glcv_segment *seg, int iterations);
glcv_status glcv_segment_set_adapt_rate(glcv_segment *seg, float rate);
glcv_status glcv_segment_set_seed(glcv_segment *seg, uint64_t seed);
glcv_status glcv_segment_set_background(glcv_segment *seg, const glcv_image *background);
glcv_status glcv_segment_learn_begin(glcv_segment *seg);
glcv_status glcv_segment_learn_add(glcv_segment *seg, const glcv_image *frame);
glcv_status glcv_segment_learn_end(glcv_segment *seg);
glcv_status glcv_segment_calibrate_begin(glcv_segment *seg);
glcv_status glcv_segment_calibrate_add(glcv_segment *seg, const glcv_image *frame);
glcv_status glcv_segment_calibrate_end(glcv_segment *seg, float *g_out);
glcv_status glcv_segment_frame(glcv_segment *seg, const glcv_image *frame, int wait);
glcv_status glcv_segment_read_mask(glcv_segment *seg, glcv_image *out);
glcv_status glcv_segment_read_background(glcv_segment *seg, glcv_image *out);
glcv_status glcv_segment_read_noise(glcv_segment *seg, float *k);
glcv_status glcv_segment_reset(glcv_segment *seg);
glcv_status glcv_segment_timings(glcv_segment *seg, glcv_timing *out, int capacity, int *count, int wait);
unsigned int glcv_segment_mask_texture(glcv_segment *seg);

/* bgsub.h */
typedef struct glcv_bgsub glcv_bgsub;
typedef struct glcv_bgsub_params {
    int width; int height; int streams; int method; glcv_pixel_format format; int gray;
    float alpha; float c; float min_threshold; int absorb; int vote; glcv_engine_mode engine;
    int passes; int upload; int packed; int download; int timing; glcv_logger logger;
} glcv_bgsub_params;
const char *glcv_bgsub_method_string(int method);
glcv_status glcv_bgsub_method_parse(const char *name, int *out);
glcv_status glcv_bgsub_create(const glcv_bgsub_params *params, glcv_bgsub **out);
void glcv_bgsub_destroy(glcv_bgsub **bgsub);
glcv_status glcv_bgsub_get_params(glcv_bgsub *bgsub, glcv_bgsub_params *out);
glcv_status glcv_bgsub_frames(glcv_bgsub *bgsub, const glcv_image *frames, int count, int wait);
glcv_status glcv_bgsub_learn_begin(glcv_bgsub *bgsub);
glcv_status glcv_bgsub_learn_add(glcv_bgsub *bgsub, const glcv_image *frames, int count);
glcv_status glcv_bgsub_learn_end(glcv_bgsub *bgsub);
glcv_status glcv_bgsub_read_masks(glcv_bgsub *bgsub, int age, glcv_image *out, int count);
glcv_status glcv_bgsub_read_state(glcv_bgsub *bgsub, int stream, uint16_t *background, uint16_t *threshold);
glcv_status glcv_bgsub_reset(glcv_bgsub *bgsub);

/* track.h */
typedef struct glcv_track glcv_track;
typedef struct glcv_track_params {
    int width; int height; int streams; int max_objects; int method; int hue_bins; int sat_bins; float epsilon;
    int max_iterations; int window; float aspect; float min_mass; float max_distance;
    unsigned lost_criteria; int recovery; int recovery_interval; int min_window_area;
    int reset_width; glcv_engine_mode engine; int cuda_device; int cuda_devices; glcv_logger logger;
} glcv_track_params;
typedef struct glcv_track_hist { int hue_bins; int sat_bins; float value[4096]; } glcv_track_hist;
typedef struct glcv_track_result {
    int id; int stream; float cx, cy; float width; float height; float angle; glcv_rect bbox;
    glcv_rect window; int iterations; unsigned lost; unsigned reasons;
    double m00, m10, m01, m11, m20, m02; glcv_rect measured; double distance; double peak;
} glcv_track_result;
glcv_status glcv_track_create(const glcv_track_params *params, glcv_track **out);
void glcv_track_destroy(glcv_track **track);
glcv_status glcv_track_get_params(glcv_track *track, glcv_track_params *out);
glcv_status glcv_track_set_limits(glcv_track *track, int s_min, int v_min, int v_max);
glcv_status glcv_track_hist_compute(glcv_track *track, const glcv_image *frame, const glcv_image *mask,
                                    glcv_rect region, glcv_track_hist *out);
glcv_status glcv_track_hist_weight_background(glcv_track *track, const glcv_image *frame, glcv_rect region,
                                              glcv_track_hist *hist);
glcv_status glcv_track_hist_save(const char *path, const glcv_track_hist *hists, int count,
                                 const glcv_logger *logger);
glcv_status glcv_track_hist_load(const char *path, glcv_track_hist *hists, int capacity, int *count,
                                 const glcv_logger *logger);
glcv_status glcv_track_hist_distance(const glcv_track_hist *a, const glcv_track_hist *b, double *out);
glcv_status glcv_track_add_to_stream(glcv_track *track, int stream, const glcv_track_hist *hist,
                                     glcv_rect window, int *id);
glcv_status glcv_track_remove(glcv_track *track, int id);
glcv_status glcv_track_set_window(glcv_track *track, int id, glcv_rect window);
glcv_status glcv_track_get_hist(glcv_track *track, int id, glcv_track_hist *out);
glcv_status glcv_track_frames(glcv_track *track, const glcv_image *frames, const glcv_image *masks, int count);
glcv_status glcv_track_results(glcv_track *track, glcv_track_result *out, int capacity, int *count);
void glcv_track_box_points(float cx, float cy, float w, float h, float angle, float x[4], float y[4]);
glcv_rect glcv_track_box_bounds(float cx, float cy, float w, float h, float angle, int frame_w, int frame_h);

/* match.h */
typedef struct glcv_match glcv_match;
typedef struct glcv_match_params {
    int width; int height; glcv_pixel_format format; int metric; glcv_engine_mode engine;
    int nms_distance; int threads; int simd; int cuda_device; int cuda_devices; int cuda_chunks;
    glcv_logger logger;
} glcv_match_params;
typedef struct glcv_match_hit { int x, y; int cx, cy; double score; } glcv_match_hit;
const char *glcv_match_metric_string(int metric);
glcv_status glcv_match_metric_parse(const char *name, int *out);
glcv_status glcv_match_create(const glcv_match_params *params, glcv_match **out);
void glcv_match_destroy(glcv_match **match);
glcv_status glcv_match_get_params(glcv_match *match, glcv_match_params *out);
glcv_status glcv_match_set_metric(glcv_match *match, int metric);
glcv_status glcv_match_set_template(glcv_match *match, const glcv_image *templ, const glcv_image *mask);
glcv_status glcv_match_set_roi(glcv_match *match, const glcv_rect *roi);
glcv_status glcv_match_image(glcv_match *match, const glcv_image *image);
glcv_status glcv_match_read_scores(glcv_match *match, double *out, size_t stride);
glcv_status glcv_match_read_normalized(glcv_match *match, float *out, size_t stride);
glcv_status glcv_match_best(glcv_match *match, int k, glcv_match_hit *hits, int *count);

/* correlate.h */
typedef struct glcv_correlate glcv_correlate;
typedef struct glcv_correlate_params {
    int width; int height; glcv_pixel_format format; glcv_engine_mode engine; int threads;
    int no_simd; int cuda_device; int cuda_devices; int batch; glcv_logger logger;
} glcv_correlate_params;
glcv_status glcv_correlate_create(const glcv_correlate_params *params, glcv_correlate **out);
void glcv_correlate_destroy(glcv_correlate **correlate);
glcv_status glcv_correlate_get_params(glcv_correlate *correlate, glcv_correlate_params *out);
glcv_status glcv_correlate_set_reference(glcv_correlate *correlate, const glcv_image *reference);
glcv_status glcv_correlate_images(glcv_correlate *correlate, const glcv_image *images, int n, double *r);
glcv_status glcv_correlate_files(glcv_correlate *correlate, const char *const *paths, int n, double *r);
glcv_status glcv_correlate_bank_load(glcv_correlate *correlate, const glcv_image *images, int n);
glcv_status glcv_correlate_bank_run(glcv_correlate *correlate, double *r);
int glcv_correlate_bank_size(glcv_correlate *correlate);
"""

ffi = cffi.FFI()
ffi.cdef(CDEF)


def _candidates():
    env = os.environ.get("GLCV_LIBRARY")
    if env:
        yield env
        return  # an explicit choice: no fallback that would hide a wrong path
    try:
        from . import _paths
        recorded = _paths.library()
        if recorded:
            yield recorded
    except ImportError:
        pass
    found = ctypes.util.find_library("glcv")
    if found:
        yield found
    yield "libglcv.so.0"


def _load():
    errors = []
    for path in _candidates():
        try:
            return ffi.dlopen(path), path
        except OSError as e:
            errors.append(f"{path}: {e}")
    raise ImportError("glcv: cannot load libglcv (set GLCV_LIBRARY to its path): " + "; ".join(errors))


lib, library_path = _load()
