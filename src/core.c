/* Status strings, logging, engine-mode and pixel-format helpers. */
#include "core_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

const char *glcv_status_string(glcv_status status)
{
    switch (status) {
    case GLCV_OK: return "ok";
    case GLCV_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case GLCV_ERROR_SIZE_MISMATCH: return "size mismatch";
    case GLCV_ERROR_STATE: return "call out of order";
    case GLCV_ERROR_NO_CONTEXT: return "no OpenGL context";
    case GLCV_ERROR_UNSUPPORTED: return "not supported by this build, driver or device";
    case GLCV_ERROR_GL: return "OpenGL error";
    case GLCV_ERROR_OUT_OF_MEMORY: return "out of memory";
    case GLCV_ERROR_IO: return "input/output error";
    case GLCV_ERROR_CORRUPT_DATA: return "corrupt or unreadable data";
    case GLCV_ERROR_CUDA: return "CUDA error";
    case GLCV_ERROR_LIMIT: return "above a resource limit";
    }
    return "unknown status";
}

static const char *level_name(glcv_log_level level)
{
    switch (level) {
    case GLCV_LOG_ERROR: return "error";
    case GLCV_LOG_WARN: return "warning";
    case GLCV_LOG_INFO: return "info";
    case GLCV_LOG_DEBUG: return "debug";
    }
    return "log";
}

void glcv_log_stderr(void *user, glcv_log_level level, const char *message)
{
    (void)user;
    fprintf(stderr, "glcv: %s: %s\n", level_name(level), message);
}

static void vlogf(const glcv_logger *logger, glcv_log_level level, const char *fmt, va_list ap)
{
    if (!logger || !logger->fn)
        return;
    glcv_log_level max = logger->max_level ? logger->max_level : GLCV_LOG_INFO;
    if (level > max)
        return;
    char buf[1024];
    vsnprintf(buf, sizeof buf, fmt, ap);
    size_t n = strlen(buf);
    while (n > 0 && buf[n - 1] == '\n')
        buf[--n] = '\0';
    logger->fn(logger->user, level, buf);
}

void glcv_logf(const glcv_logger *logger, glcv_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlogf(logger, level, fmt, ap);
    va_end(ap);
}

glcv_status glcv_fail(const glcv_logger *logger, glcv_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlogf(logger, GLCV_LOG_ERROR, fmt, ap);
    va_end(ap);
    return status;
}

glcv_status glcv_timings_copy(const glcv_timing *src, int n, glcv_timing *out, int capacity, int *count)
{
    if (!count || capacity < 0 || (capacity > 0 && !out))
        return GLCV_ERROR_INVALID_ARGUMENT;
    *count = n < capacity ? n : capacity;
    if (*count > 0)
        memcpy(out, src, (size_t)*count * sizeof *out);
    return GLCV_OK;
}

glcv_status glcv_check_timings_args(const glcv_logger *logger, const char *module, const glcv_timing *out,
                                    int capacity, const int *count)
{
    if (count && capacity >= 0 && (capacity == 0 || out))
        return GLCV_OK;
    return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: timings: %s", module,
                     !count ? "NULL count" : capacity < 0 ? "capacity < 0" : "NULL out with capacity > 0");
}

const char *glcv_enum_name(const char *const *names, int count, int value)
{
    return value >= 0 && value < count && names[value] ? names[value] : "?";
}

int glcv_enum_parse(const char *const *names, int count, const char *name)
{
    for (int v = 1; name && v < count; v++)
        if (names[v] && strcmp(names[v], name) == 0)
            return v;
    return -1;
}

glcv_status glcv_check_range(const glcv_logger *logger, const char *module, const char *name, double v, double lo,
                             double hi)
{
    if (!isfinite(v) || v < lo || v > hi)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: %s must be in %g..%g (got %g)", module, name, lo, hi,
                         v);
    return GLCV_OK;
}

glcv_status glcv_check_size(const glcv_logger *logger, const char *module, int width, int height, int max)
{
    if (width < 1 || height < 1 || width > max || height > max)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: size %dx%d: width and height must be 1..%d", module,
                         width, height, max);
    return GLCV_OK;
}

glcv_status glcv_check_rect(const glcv_logger *logger, const char *module, const char *what, glcv_rect r)
{
    if (r.width < 1 || r.height < 1)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT, "%s: %s %d,%d %dx%d: width and height must be >= 1",
                         module, what, r.x, r.y, r.width, r.height);
    if (r.width > GLCV_MAX_COORD || r.height > GLCV_MAX_COORD || r.x < -GLCV_MAX_COORD || r.x > GLCV_MAX_COORD ||
        r.y < -GLCV_MAX_COORD || r.y > GLCV_MAX_COORD)
        return glcv_fail(logger, GLCV_ERROR_INVALID_ARGUMENT,
                         "%s: %s %d,%d %dx%d: coordinates and sizes must be within +-%d", module, what, r.x, r.y,
                         r.width, r.height, GLCV_MAX_COORD);
    return GLCV_OK;
}

int glcv_finite(double v)
{
    return isfinite(v);
}

double glcv_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *const engine_names[] = {
    [GLCV_ENGINE_DEFAULT] = "auto", [GLCV_ENGINE_AUTO] = "auto", [GLCV_ENGINE_FRAGMENT] = "fragment",
    [GLCV_ENGINE_COMPUTE] = "compute", [GLCV_ENGINE_CPU] = "cpu", [GLCV_ENGINE_CUDA] = "cuda"};
GLCV_ENUM_NAMES(glcv_engine_mode, glcv_engine_mode, engine_names)

int glcv_pixel_format_size(glcv_pixel_format format)
{
    switch (format) {
    case GLCV_PIXEL_GRAY8: return 1;
    case GLCV_PIXEL_RGB8:
    case GLCV_PIXEL_BGR8: return 3;
    case GLCV_PIXEL_RGBA8:
    case GLCV_PIXEL_BGRA8: return 4;
    case GLCV_PIXEL_DEFAULT: break;
    }
    return 0;
}
