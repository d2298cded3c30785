/* Prints the size of each struct the Python package declares (python/glcv/_lib.py) and the offsets
 * of fields that follow the ones most likely to change, one "name value" line each, for
 * test_api.py --layout to compare with cffi's view of the declarations. */
#include <stddef.h>
#include <stdio.h>

#include <glcv/glcv.h>

#define SIZE(t) printf("%s %zu\n", #t, sizeof(t))
#define OFFSET(t, f) printf("%s.%s %zu\n", #t, #f, offsetof(t, f))

int main(void)
{
    SIZE(glcv_logger);
    SIZE(glcv_rect);
    SIZE(glcv_image);
    SIZE(glcv_timing);
    SIZE(glcv_context_params);
    OFFSET(glcv_context_params, logger);
    SIZE(glcv_segment_params);
    OFFSET(glcv_segment_params, seed);
    OFFSET(glcv_segment_params, logger);
    OFFSET(glcv_segment_params, streams);
    SIZE(glcv_bgsub_params);
    OFFSET(glcv_bgsub_params, engine);
    OFFSET(glcv_bgsub_params, logger);
    SIZE(glcv_track_params);
    OFFSET(glcv_track_params, engine);
    OFFSET(glcv_track_params, logger);
    SIZE(glcv_track_hist);
    SIZE(glcv_track_result);
    OFFSET(glcv_track_result, iterations);
    OFFSET(glcv_track_result, m00);
    OFFSET(glcv_track_result, distance);
    SIZE(glcv_match_params);
    OFFSET(glcv_match_params, logger);
    SIZE(glcv_match_hit);
    SIZE(glcv_correlate_params);
    OFFSET(glcv_correlate_params, logger);
    return 0;
}
