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

/* The arguments of a module's *_timings getter: INVALID_ARGUMENT, logged as "<module>: timings:
 * <which>", for NULL count, capacity < 0, or NULL out with capacity > 0; else OK. */
glcv_status glcv_check_timings_args(const glcv_logger *logger, const char *module, const glcv_timing *out,
                                    int capacity, const int *count);

/* Enum names: names[v] is the name of value v (v = 0, the DEFAULT, names the default's value).
 * glcv_enum_name returns "?" for values outside 0..count-1; glcv_enum_parse returns the value
 * >= 1 whose name is `name`, or -1 (also for NULL). */
const char *glcv_enum_name(const char *const *names, int count, int value);
int glcv_enum_parse(const char *const *names, int count, const char *name);

/* Defines the public pair `const char *PREFIX_string(TYPE)` and
 * `glcv_status PREFIX_parse(const char *, TYPE *)` over the name table NAMES (see above). */
#define GLCV_ENUM_NAMES(TYPE, PREFIX, NAMES)                                                                  \
    const char *PREFIX##_string(TYPE value)                                                                   \
    {                                                                                                         \
        return glcv_enum_name(NAMES, (int)(sizeof NAMES / sizeof NAMES[0]), (int)value);                      \
    }                                                                                                         \
    glcv_status PREFIX##_parse(const char *name, TYPE *out)                                                   \
    {                                                                                                         \
        int v = glcv_enum_parse(NAMES, (int)(sizeof NAMES / sizeof NAMES[0]), name);                          \
        if (v < 0 || !out)                                                                                    \
            return GLCV_ERROR_INVALID_ARGUMENT;                                                               \
        *out = (TYPE)v;                                                                                       \
        return GLCV_OK;                                                                                       \
    }

/* The first check of every X_create(params, out): both are required, and *out is NULL until the
 * object exists. */
#define GLCV_CREATE_BEGIN(PARAMS, OUT)                                                                        \
    do {                                                                                                      \
        if (!(OUT))                                                                                           \
            return GLCV_ERROR_INVALID_ARGUMENT;                                                               \
        *(OUT) = NULL;                                                                                        \
        if (!(PARAMS))                                                                                        \
            return GLCV_ERROR_INVALID_ARGUMENT;                                                               \
    } while (0)

/* Parameter resolution: a field left 0 (or its enum's DEFAULT, which is 0) takes `value`. */
#define GLCV_DEFAULT(field, value)                                                                            \
    do {                                                                                                      \
        if ((field) == 0)                                                                                     \
            (field) = (value);                                                                                \
    } while (0)

/* The body of every getter that copies a field out of a locked object (get_params, get_stats):
 * INVALID_ARGUMENT for a NULL object or out. */
#define GLCV_LOCKED_COPY(OBJ, FIELD, OUT)                                                                     \
    do {                                                                                                      \
        if (!(OBJ) || !(OUT))                                                                                 \
            return GLCV_ERROR_INVALID_ARGUMENT;                                                               \
        pthread_mutex_lock(&(OBJ)->lock);                                                                     \
        *(OUT) = (OBJ)->FIELD;                                                                                \
        pthread_mutex_unlock(&(OBJ)->lock);                                                                   \
        return GLCV_OK;                                                                                       \
    } while (0)

/* The body of a public function that evaluates CALL (a glcv_status expression) with OBJ's mutex
 * held and returns its status: INVALID_ARGUMENT for a NULL OBJ. */
#define GLCV_LOCKED_CALL(OBJ, CALL)                                                                           \
    do {                                                                                                      \
        if (!(OBJ))                                                                                           \
            return GLCV_ERROR_INVALID_ARGUMENT;                                                               \
        pthread_mutex_lock(&(OBJ)->lock);                                                                     \
        glcv_status locked_status_ = (CALL);                                                                  \
        pthread_mutex_unlock(&(OBJ)->lock);                                                                   \
        return locked_status_;                                                                                \
    } while (0)

/* Parameter checks shared by the modules: INVALID_ARGUMENT, logged as "<module>: <name> must be
 * in lo..hi (got v)", unless v is finite and lo <= v <= hi; likewise for a width x height that
 * must be 1..max each. */
glcv_status glcv_check_range(const glcv_logger *logger, const char *module, const char *name, double v, double lo,
                             double hi);
glcv_status glcv_check_size(const glcv_logger *logger, const char *module, int width, int height, int max);

/* The largest coordinate or size a caller's rectangle may have: every sum the modules make of
 * rectangles (x + width, a window grown by half its size, ...) then fits an int. */
#define GLCV_MAX_COORD (1 << 24)

/* A caller's rectangle (a window, a region): INVALID_ARGUMENT, logged as "<module>: <what>
 * x,y wxh: ...", unless width and height are 1..GLCV_MAX_COORD and |x|, |y| <= GLCV_MAX_COORD. It
 * may lie partly or wholly outside the frame; what a module does then is its own contract. */
glcv_status glcv_check_rect(const glcv_logger *logger, const char *module, const char *what, glcv_rect r);

/* Nonzero for finite floats. */
int glcv_finite(double v);

/* Seconds from a monotonic clock. */
double glcv_now(void);

/* ---- loops over many items on several threads (the CPU engines) ---- */

/* Processes items [begin, end) of a loop; called from any of the loop's threads. */
typedef void (*glcv_range_fn)(void *user, int begin, int end);

/* The work a thread must have before a loop uses it, in milliseconds of the calling thread: waking
 * a helper costs tens of microseconds (measured on 2 cores, docs/PERFORMANCE.md). */
#define GLCV_PARALLEL_MIN_MS 0.5

/* Runs fn over the items [0, n) (independent of each other) and returns the threads that took
 * part. The first 1/32 of them (at least one) run on the calling thread, timed; the rest are
 * shared by as many threads as give each GLCV_PARALLEL_MIN_MS of work by that measure, at most
 * `max_threads` (0: OpenMP's default, every core without OpenMP), in small chunks taken in turn;
 * short loops run on the calling thread alone. The other threads are the library's own helpers,
 * which sleep between loops and are woken for one, and the caller waits for them asleep too: on a
 * busy machine a loop then costs about what it costs one thread, where OpenMP's spinning threads
 * cost several milliseconds a loop (docs/PERFORMANCE.md), and the application's OpenMP settings
 * stay as they are. Loops started on several threads at once share the helpers: each gets those
 * free, and a helper whose loop has no items left goes on to another's. A loop inside another
 * loop's fn runs on its calling thread alone (but inside a loop of one item, which leaves the
 * helpers free). fn must not fork (a fork waits until no loop runs). */
int glcv_parallel_for(int n, int max_threads, glcv_range_fn fn, void *user);

/* A team: a task whose steps are each shared by several threads, too short for a loop each (a
 * loop wakes its helpers; a team's helpers wait for its next step awake, spinning, then yielding
 * their core). glcv_team_run runs main(team, user) on one of up to `max_threads` threads (0: the
 * default, as glcv_parallel_for), the others the loops' helpers standing by; inside it,
 * glcv_team_share(team, n, fn, user) runs fn over the items [0, n), an item at a time on whichever
 * teammates come, and returns when every item is done (its writes visible). A team's helpers come
 * on glcv_parallel_for's terms: those free join; inside a loop, main's steps run on its thread
 * alone (team may be NULL: glcv_team_share(NULL, ...) runs the items in order on the calling
 * thread). Items must write disjoint memory; then the results do not depend
 * on the threads. */
typedef struct glcv_team glcv_team;
typedef void (*glcv_team_fn)(glcv_team *team, void *user);
int glcv_team_run(int max_threads, glcv_team_fn main, void *user);
void glcv_team_share(glcv_team *team, int n, glcv_range_fn fn, void *user);

/* The most threads glcv_parallel_for may use for `requested` (> 0: that many; 0: the default). */
int glcv_parallel_max_threads(int requested);

#endif
