/* The core service, private: logging and small utilities every source of the library uses. */
#ifndef GLCV_INTERNAL_H
#define GLCV_INTERNAL_H

#include <glcv/core.h>

#if defined(__GNUC__)
#define GLCV_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define GLCV_PRINTF(a, b)
#endif

/* Formats a message and hands it to the logger (if any, and if the level passes). */
void glcv_logf(const glcv_logger *logger, glcv_log_level level, const char *fmt, ...) GLCV_PRINTF(3, 4);

/* Logs at ERROR level and returns `status`, for `return glcv_fail(lg, GLCV_ERROR_X, "...")`. */
glcv_status glcv_fail(const glcv_logger *logger, glcv_status status, const char *fmt, ...) GLCV_PRINTF(3, 4);

/* Copies up to `capacity` of the `n` timings in `src` to `out` and sets *count to how many were
 * copied (the modules' *_timings getters). INVALID_ARGUMENT for NULL count, capacity < 0, or
 * NULL out with capacity > 0. */
glcv_status glcv_timings_copy(const glcv_timing *src, int n, glcv_timing *out, int capacity, int *count);

/* Enum names: names[v] is the name of value v (v = 0, the DEFAULT, names the default's value).
 * glcv_enum_name returns "?" for values outside 0..count-1; glcv_enum_parse returns the value
 * >= 1 whose name is `name`, or -1 (also for NULL). */
const char *glcv_enum_name(const char *const *names, int count, int value);
int glcv_enum_parse(const char *const *names, int count, const char *name);

/* Nonzero for finite floats. */
int glcv_finite(double v);

/* Seconds from a monotonic clock. */
double glcv_now(void);

#endif
