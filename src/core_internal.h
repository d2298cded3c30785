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

/* Nonzero for finite floats. */
int glcv_finite(double v);

/* Seconds from a monotonic clock. */
double glcv_now(void);

#endif
