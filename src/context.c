/* Headless OpenGL contexts through EGL, and a probe for whatever GL context is current.
 *
 * Creation walks EGL's device platform (the requested CUDA device first, then devices with
 * EGL_NV_device_cuda, then the rest in enumeration order) and then Mesa's surfaceless platform.
 * libepoxy aborts the process when an entry point it cannot resolve is called, so every EGL
 * extension function is called only after its extension was seen in the client (or display)
 * extension string, and nothing EGL is called before epoxy_has_egl().
 *
 * Displays: EGL hands out one EGLDisplay per device (and one per platform for surfaceless), shared
 * by everything in the process, and eglInitialize/eglTerminate are not reference counted. glcv
 * never terminates a display: another user in the process may share it, a later context reuses
 * it (eglInitialize of an initialised display is cheap), and terminating the last one makes Mesa
 * unload its driver with its process-lifetime caches. A small table guarded by a mutex counts the
 * live glcv contexts of each display (for diagnostics and to keep creation attempts tidy).
 *
 * Context tokens: the live contexts glcv made carry a serial number, so that an object made in a
 * context that was destroyed is not taken for one of a new context at the same address
 * (glcv_gl_current_token, gl.h).
 *
 * Fault injection: the tests make chosen EGL calls fail through glcv_egl_fail_next (gl.h).
 *
 * Why one file of about 1,000 lines: the EGL platform walk, the display table, the context tokens,
 * the fault injection and the probe of the current context share the one rule above (no EGL call before its extension
 * is seen), which is easiest to keep when one file holds every EGL call.
 */
#include "core_internal.h"
#include "gl.h"

#include <glcv/context.h>

#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DESCRIPTION_SIZE 512
#define REASONS_SIZE 2048
#define WHY_SIZE 512
#define MAX_TRACKED_DISPLAYS 32

struct glcv_context {
    EGLDisplay dpy;
    EGLContext egl_ctx;
    EGLSurface surface; /* a 1x1 pbuffer, or EGL_NO_SURFACE when current without a surface */
    int cuda_device;
    glcv_logger logger;
    char description[DESCRIPTION_SIZE];
};

/* Core-profile versions asked for, newest first (major*10+minor). */
static const int k_versions[] = {46, 45, 43, 33};
#define NUM_VERSIONS ((int)(sizeof k_versions / sizeof k_versions[0]))

/* ---------------------------------------------------------------------------------------------
 * Small helpers
 */

/* Nonzero when `token` is one of the space-separated words of `list`. */
static int has_token(const char *list, const char *token)
{
    if (!list || !token || !*token)
        return 0;
    size_t n = strlen(token);
    for (const char *p = list; (p = strstr(p, token)) != NULL; p += n) {
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    }
    return 0;
}

static void appendf(char *buf, size_t size, const char *fmt, ...) GLCV_PRINTF(3, 4);

/* Appends formatted text to a NUL-terminated buffer, truncating silently. */
static void appendf(char *buf, size_t size, const char *fmt, ...)
{
    size_t len = strlen(buf);
    if (len + 1 >= size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

static const char *egl_error_name(EGLint e)
{
    switch (e) {
    case EGL_SUCCESS: return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
    case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
    case EGL_BAD_CURRENT_SURFACE: return "EGL_BAD_CURRENT_SURFACE";
    case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
    case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
    case EGL_BAD_NATIVE_PIXMAP: return "EGL_BAD_NATIVE_PIXMAP";
    case EGL_BAD_NATIVE_WINDOW: return "EGL_BAD_NATIVE_WINDOW";
    case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
    case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
    case EGL_CONTEXT_LOST: return "EGL_CONTEXT_LOST";
    }
    return "unknown EGL error";
}

/* "0x3009 EGL_BAD_MATCH" into a caller's buffer. */
static const char *egl_error_text(EGLint e, char *buf, size_t size)
{
    snprintf(buf, size, "0x%04x %s", (unsigned)e, egl_error_name(e));
    return buf;
}

/* ---------------------------------------------------------------------------------------------
 * Probing for a current context without loading anything
 */

typedef void *(*glx_get_current_context_fn)(void);

static pthread_mutex_t g_probe_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    void *egl_handle; /* kept open once found, so the pointers below stay valid */
    PFNEGLGETCURRENTCONTEXTPROC egl_get_current_context;
    PFNEGLGETCURRENTDISPLAYPROC egl_get_current_display;
    PFNEGLQUERYCONTEXTPROC egl_query_context;
    PFNEGLQUERYAPIPROC egl_query_api;
    void *glx_handle;
    glx_get_current_context_fn glx_get_current_context;
} g_probe;

/* Looks up the entry points of already-loaded EGL and GLX libraries (RTLD_NOLOAD: a library that
 * is not loaded yet is not loaded by this). Retried on every call until found. */
static void probe_resolve(void)
{
    pthread_mutex_lock(&g_probe_lock);
    if (!g_probe.egl_handle) {
        void *h = dlopen("libEGL.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (h) {
            g_probe.egl_get_current_context = (PFNEGLGETCURRENTCONTEXTPROC)dlsym(h, "eglGetCurrentContext");
            g_probe.egl_get_current_display = (PFNEGLGETCURRENTDISPLAYPROC)dlsym(h, "eglGetCurrentDisplay");
            g_probe.egl_query_context = (PFNEGLQUERYCONTEXTPROC)dlsym(h, "eglQueryContext");
            g_probe.egl_query_api = (PFNEGLQUERYAPIPROC)dlsym(h, "eglQueryAPI");
            if (g_probe.egl_get_current_context) {
                g_probe.egl_handle = h;
            } else {
                dlclose(h);
                g_probe.egl_get_current_display = NULL;
                g_probe.egl_query_context = NULL;
                g_probe.egl_query_api = NULL;
            }
        }
        (void)dlerror();
    }
    if (!g_probe.glx_handle) {
        static const char *const names[] = {"libGLX.so.0", "libGL.so.1"};
        for (size_t i = 0; i < sizeof names / sizeof names[0] && !g_probe.glx_handle; i++) {
            void *h = dlopen(names[i], RTLD_NOW | RTLD_NOLOAD);
            if (!h)
                continue;
            glx_get_current_context_fn fn = (glx_get_current_context_fn)dlsym(h, "glXGetCurrentContext");
            if (fn) {
                g_probe.glx_get_current_context = fn;
                g_probe.glx_handle = h;
            } else {
                dlclose(h);
            }
        }
        (void)dlerror();
    }
    pthread_mutex_unlock(&g_probe_lock);
}

static int glx_context_current(void)
{
    probe_resolve();
    pthread_mutex_lock(&g_probe_lock);
    glx_get_current_context_fn fn = g_probe.glx_get_current_context;
    pthread_mutex_unlock(&g_probe_lock);
    return fn && fn() != NULL;
}

/* Nonzero when an EGL context of the desktop OpenGL API is current on this thread. */
static int egl_gl_context_current(void)
{
    probe_resolve();
    pthread_mutex_lock(&g_probe_lock);
    PFNEGLGETCURRENTCONTEXTPROC get_context = g_probe.egl_get_current_context;
    PFNEGLGETCURRENTDISPLAYPROC get_display = g_probe.egl_get_current_display;
    PFNEGLQUERYCONTEXTPROC query_context = g_probe.egl_query_context;
    PFNEGLQUERYAPIPROC query_api = g_probe.egl_query_api;
    pthread_mutex_unlock(&g_probe_lock);
    if (!get_context)
        return 0;
    EGLContext cur = get_context();
    if (cur == EGL_NO_CONTEXT)
        return 0;
    /* The context's own client API decides (an OpenGL ES context does not count). */
    if (get_display && query_context) {
        EGLDisplay dpy = get_display();
        EGLint type = 0;
        if (dpy != EGL_NO_DISPLAY && query_context(dpy, cur, EGL_CONTEXT_CLIENT_TYPE, &type))
            return type == EGL_OPENGL_API;
    }
    return query_api && query_api() == EGL_OPENGL_API;
}

int glcv_gl_context_current(void)
{
    return glx_context_current() || egl_gl_context_current();
}

/* ---------------------------------------------------------------------------------------------
 * Context tokens: the live contexts glcv made, each with a serial number, so that an object made
 * in a context that was destroyed is not taken for one of a new context at the same address.
 */

#define MAX_TRACKED_CONTEXTS 256

typedef struct live_context {
    const void *ctx;
    uint64_t serial;
} live_context;

static pthread_mutex_t g_live_lock = PTHREAD_MUTEX_INITIALIZER;
static live_context g_live[MAX_TRACKED_CONTEXTS];
static uint64_t g_next_serial = 1;

static void live_add(const void *ctx)
{
    pthread_mutex_lock(&g_live_lock);
    for (int i = 0; i < MAX_TRACKED_CONTEXTS; i++)
        if (!g_live[i].ctx) {
            g_live[i] = (live_context){ctx, g_next_serial++};
            break;
        }
    pthread_mutex_unlock(&g_live_lock);
}

static void live_remove(const void *ctx)
{
    pthread_mutex_lock(&g_live_lock);
    for (int i = 0; i < MAX_TRACKED_CONTEXTS; i++)
        if (g_live[i].ctx == ctx)
            g_live[i] = (live_context){NULL, 0};
    pthread_mutex_unlock(&g_live_lock);
}

static uint64_t live_serial(const void *ctx)
{
    uint64_t serial = 0;
    pthread_mutex_lock(&g_live_lock);
    for (int i = 0; i < MAX_TRACKED_CONTEXTS && !serial; i++)
        if (g_live[i].ctx == ctx)
            serial = g_live[i].serial;
    pthread_mutex_unlock(&g_live_lock);
    return serial;
}

glcv_gl_token glcv_gl_current_token(void)
{
    glcv_gl_token t = {NULL, 0};
    if (egl_gl_context_current()) {
        probe_resolve();
        pthread_mutex_lock(&g_probe_lock);
        PFNEGLGETCURRENTCONTEXTPROC get_context = g_probe.egl_get_current_context;
        pthread_mutex_unlock(&g_probe_lock);
        t.ctx = get_context ? (const void *)get_context() : NULL;
    } else if (glx_context_current()) {
        pthread_mutex_lock(&g_probe_lock);
        glx_get_current_context_fn fn = g_probe.glx_get_current_context;
        pthread_mutex_unlock(&g_probe_lock);
        t.ctx = fn ? (const void *)fn() : NULL;
    }
    t.serial = t.ctx ? live_serial(t.ctx) : 0;
    return t;
}

int glcv_gl_token_current(glcv_gl_token t)
{
    glcv_gl_token now = glcv_gl_current_token();
    return t.ctx && now.ctx == t.ctx && now.serial == t.serial;
}

/* ---------------------------------------------------------------------------------------------
 * Display reference counts
 */

typedef struct display_ref {
    EGLDisplay dpy;
    int refs;       /* live glcv contexts (or attempts in progress) on the display */
} display_ref;

static pthread_mutex_t g_display_lock = PTHREAD_MUTEX_INITIALIZER;
static display_ref g_displays[MAX_TRACKED_DISPLAYS];

/* Initialises `dpy` (if needed) for one more user. Returns 0 with *err set on failure. */
/* ---- EGL failures injected by the tests (gl.h: glcv_egl_fail_next) ----------------------------- */

static const char *const k_fault_calls[] = {"", "eglInitialize", "eglCreateContext", "eglMakeCurrent",
                                            "eglCreatePbufferSurface"};
/* the index of a call in k_fault_calls */
enum { FAULT_NONE, FAULT_INITIALIZE, FAULT_CREATE_CONTEXT, FAULT_MAKE_CURRENT, FAULT_PBUFFER };
enum { FAULT_CALLS = 5 };
static atomic_int g_fault_count[FAULT_CALLS]; /* per call: failures still to inject */
static atomic_int g_fault_error[FAULT_CALLS];
/* The error of the last injected failure on this thread, returned by the next egl_error(). */
static _Thread_local EGLint tls_injected_error;

void glcv_egl_fail_next(const char *call, int count, int egl_error)
{
    int which = FAULT_NONE;
    for (int i = 1; call && i < FAULT_CALLS; i++)
        if (strcmp(call, k_fault_calls[i]) == 0)
            which = i;
    if (which == FAULT_NONE) {
        for (int i = 0; i < FAULT_CALLS; i++)
            atomic_store(&g_fault_count[i], 0);
        return;
    }
    atomic_store(&g_fault_error[which], egl_error ? egl_error : EGL_BAD_ALLOC);
    atomic_store(&g_fault_count[which], count > 0 ? count : 0);
}

/* Whether this call of `which` is to fail (one of the injected count). */
static int fault(int which)
{
    int left = atomic_load(&g_fault_count[which]);
    while (left > 0 && !atomic_compare_exchange_weak(&g_fault_count[which], &left, left - 1)) {
    }
    if (left <= 0)
        return 0;
    tls_injected_error = atomic_load(&g_fault_error[which]);
    return 1;
}

/* eglGetError, or the injected failure's error. */
static EGLint egl_error(void)
{
    EGLint e = tls_injected_error;
    if (!e)
        return eglGetError();
    tls_injected_error = 0;
    (void)eglGetError();
    return e;
}

static int display_acquire(EGLDisplay dpy, EGLint *major, EGLint *minor, EGLint *err)
{
    pthread_mutex_lock(&g_display_lock);
    display_ref *slot = NULL, *free_slot = NULL;
    for (int i = 0; i < MAX_TRACKED_DISPLAYS; i++) {
        if (g_displays[i].refs > 0 && g_displays[i].dpy == dpy)
            slot = &g_displays[i];
        else if (g_displays[i].refs == 0 && !free_slot)
            free_slot = &g_displays[i];
    }
    if (fault(FAULT_INITIALIZE) || !eglInitialize(dpy, major, minor)) {
        *err = egl_error();
        pthread_mutex_unlock(&g_display_lock);
        return 0;
    }
    if (slot) {
        slot->refs++;
    } else if (free_slot) {
        free_slot->dpy = dpy;
        free_slot->refs = 1;
    }
    pthread_mutex_unlock(&g_display_lock);
    return 1;
}

static void display_release(EGLDisplay dpy)
{
    pthread_mutex_lock(&g_display_lock);
    for (int i = 0; i < MAX_TRACKED_DISPLAYS; i++) {
        display_ref *r = &g_displays[i];
        if (r->refs > 0 && r->dpy == dpy) {
            if (--r->refs == 0)
                r->dpy = EGL_NO_DISPLAY;
            break;
        }
    }
    pthread_mutex_unlock(&g_display_lock);
}

/* ---------------------------------------------------------------------------------------------
 * GL library check
 */

/* libepoxy resolves glGetString & co. by dlopen()ing libOpenGL.so.0 or libGL.so.1 and exits the
 * process when neither exists; check first so that a missing library is an error, not an exit. */
static int gl_library_available(void)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static void *handle;
    pthread_mutex_lock(&lock);
    if (!handle) {
        handle = dlopen("libOpenGL.so.0", RTLD_LAZY | RTLD_LOCAL);
        if (!handle)
            handle = dlopen("libGL.so.1", RTLD_LAZY | RTLD_LOCAL);
        (void)dlerror();
    }
    int ok = handle != NULL;
    pthread_mutex_unlock(&lock);
    return ok;
}

/* Parses the "major.minor" at the first digit of a GL_VERSION string, as epoxy_gl_version() does
 * (which exits the process on a string it cannot parse). 0 when unparsable. */
static int parse_gl_version(const char *s)
{
    while (*s && (*s < '0' || *s > '9'))
        s++;
    int major = 0, minor = 0;
    if (sscanf(s, "%d.%d", &major, &minor) != 2 || major < 0 || minor < 0 || minor > 9)
        return 0;
    return major * 10 + minor;
}

/* ---------------------------------------------------------------------------------------------
 * Creation
 */

typedef struct attempt {
    const glcv_logger *lg;
    int min_version;
    char reasons[REASONS_SIZE]; /* what was tried and why it failed, for the final error */
    int out_of_memory;
    /* Filled by a successful try_display: */
    EGLint egl_major, egl_minor;
    int requested_version;
    int with_pbuffer;
} attempt;

/* What the context ended up on, for the description and the log. */
typedef struct chosen {
    const char *platform; /* "device" or "surfaceless" */
    char device[384];     /* extensions and DRM file of the EGL device, when known */
} chosen;

static void attempt_failed(attempt *at, const char *label, const char *why)
{
    glcv_logf(at->lg, GLCV_LOG_DEBUG, "EGL %s: %s", label, why);
    appendf(at->reasons, sizeof at->reasons, "%s%s: %s", at->reasons[0] ? "; " : "", label, why);
}

/* Picks a config for an OpenGL context: a pbuffer-capable one, else any, else none (when the
 * display supports EGL_KHR_no_config_context). Returns 0 when there is nothing usable. */
static int choose_config(EGLDisplay dpy, const char *exts, EGLConfig *cfg, char *why, size_t why_size)
{
    static const EGLint pbuffer_attribs[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                                             EGL_OPENGL_BIT, EGL_NONE};
    /* EGL_SURFACE_TYPE defaults to EGL_WINDOW_BIT; an empty mask matches every config. */
    static const EGLint any_attribs[] = {EGL_SURFACE_TYPE, 0, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
    const EGLint *lists[] = {pbuffer_attribs, any_attribs};
    char e[48];
    EGLint last_error = EGL_SUCCESS;
    for (int i = 0; i < 2; i++) {
        EGLint n = 0;
        if (eglChooseConfig(dpy, lists[i], cfg, 1, &n) && n > 0)
            return 1;
        EGLint err = eglGetError();
        if (err != EGL_SUCCESS)
            last_error = err;
    }
    if (has_token(exts, "EGL_KHR_no_config_context")) {
        *cfg = EGL_NO_CONFIG_KHR;
        return 1;
    }
    snprintf(why, why_size, "no EGLConfig with EGL_OPENGL_BIT (%s) and no EGL_KHR_no_config_context",
             last_error == EGL_SUCCESS ? "none listed" : egl_error_text(last_error, e, sizeof e));
    return 0;
}

/* Makes `ctx` current without a surface when the display allows it, else on a 1x1 pbuffer.
 * Returns 0 with `why` filled on failure; *surface is EGL_NO_SURFACE or the pbuffer. */
static int make_current_headless(EGLDisplay dpy, const char *exts, EGLConfig cfg, EGLContext ctx,
                                 EGLSurface *surface, char *why, size_t why_size)
{
    char e[48];
    *surface = EGL_NO_SURFACE;
    why[0] = '\0';
    if (has_token(exts, "EGL_KHR_surfaceless_context")) {
        if (!fault(FAULT_MAKE_CURRENT) && eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, ctx))
            return 1;
        appendf(why, why_size, "eglMakeCurrent without surface failed (%s)", egl_error_text(egl_error(), e, sizeof e));
    } else {
        appendf(why, why_size, "no EGL_KHR_surfaceless_context");
    }
    EGLint surface_type = 0;
    if (cfg == EGL_NO_CONFIG_KHR || !eglGetConfigAttrib(dpy, cfg, EGL_SURFACE_TYPE, &surface_type) ||
        !(surface_type & EGL_PBUFFER_BIT)) {
        (void)eglGetError();
        appendf(why, why_size, "; the config has no pbuffer support");
        return 0;
    }
    static const EGLint pbuffer_attribs[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
    EGLSurface s = fault(FAULT_PBUFFER) ? EGL_NO_SURFACE : eglCreatePbufferSurface(dpy, cfg, pbuffer_attribs);
    if (s == EGL_NO_SURFACE) {
        appendf(why, why_size, "; eglCreatePbufferSurface failed (%s)", egl_error_text(egl_error(), e, sizeof e));
        return 0;
    }
    if (fault(FAULT_MAKE_CURRENT) || !eglMakeCurrent(dpy, s, s, ctx)) {
        appendf(why, why_size, "; eglMakeCurrent on a pbuffer failed (%s)", egl_error_text(egl_error(), e, sizeof e));
        eglDestroySurface(dpy, s);
        return 0;
    }
    *surface = s;
    return 1;
}

/* Tries to create a core-profile context of at least the minimum version on `dpy` and make it
 * current. On success fills c->dpy, c->egl_ctx, c->surface and returns 1; on failure records why,
 * leaves nothing behind (the display is released again) and returns 0. */
static int try_display(attempt *at, glcv_context *c, EGLDisplay dpy, const char *label)
{
    char why[WHY_SIZE] = "";
    char e[48];
    EGLint major = 0, minor = 0, err = EGL_SUCCESS;
    EGLContext ctx = EGL_NO_CONTEXT;
    EGLSurface surface = EGL_NO_SURFACE;
    int current = 0;

    if (!display_acquire(dpy, &major, &minor, &err)) {
        snprintf(why, sizeof why, "eglInitialize failed (%s)", egl_error_text(err, e, sizeof e));
        attempt_failed(at, label, why);
        return 0;
    }
    if (!eglBindAPI(EGL_OPENGL_API)) {
        snprintf(why, sizeof why, "eglBindAPI(EGL_OPENGL_API) failed (%s): no desktop OpenGL",
                 egl_error_text(eglGetError(), e, sizeof e));
        goto fail;
    }
    const char *exts = eglQueryString(dpy, EGL_EXTENSIONS);
    if (!exts) {
        (void)eglGetError();
        exts = "";
    }
    if (!(major > 1 || (major == 1 && minor >= 5)) && !has_token(exts, "EGL_KHR_create_context")) {
        snprintf(why, sizeof why, "EGL %d.%d without EGL_KHR_create_context cannot ask for a core profile",
                 (int)major, (int)minor);
        goto fail;
    }
    EGLConfig cfg = EGL_NO_CONFIG_KHR;
    if (!choose_config(dpy, exts, &cfg, why, sizeof why))
        goto fail;

    int requested = 0;
    for (int i = 0; i < NUM_VERSIONS && ctx == EGL_NO_CONTEXT; i++) {
        if (k_versions[i] < at->min_version)
            continue;
        const EGLint attribs[] = {EGL_CONTEXT_MAJOR_VERSION, k_versions[i] / 10,
                                  EGL_CONTEXT_MINOR_VERSION, k_versions[i] % 10,
                                  EGL_CONTEXT_OPENGL_PROFILE_MASK, EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT,
                                  EGL_NONE};
        ctx = fault(FAULT_CREATE_CONTEXT) ? EGL_NO_CONTEXT : eglCreateContext(dpy, cfg, EGL_NO_CONTEXT, attribs);
        if (ctx != EGL_NO_CONTEXT) {
            requested = k_versions[i];
        } else {
            egl_error_text(egl_error(), e, sizeof e);
            glcv_logf(at->lg, GLCV_LOG_DEBUG, "EGL %s: eglCreateContext for OpenGL %d.%d core failed (%s)", label,
                      k_versions[i] / 10, k_versions[i] % 10, e);
            appendf(why, sizeof why, "%s%d.%d core: %s", why[0] ? ", " : "eglCreateContext failed for ",
                    k_versions[i] / 10, k_versions[i] % 10, e);
        }
    }
    if (ctx == EGL_NO_CONTEXT)
        goto fail;
    why[0] = '\0';

    if (!make_current_headless(dpy, exts, cfg, ctx, &surface, why, sizeof why))
        goto fail;
    current = 1;

    if (!gl_library_available()) {
        snprintf(why, sizeof why, "neither libOpenGL.so.0 nor libGL.so.1 can be loaded (libepoxy needs one)");
        goto fail;
    }
    const char *version = (const char *)glGetString(GL_VERSION);
    if (!version) {
        snprintf(why, sizeof why, "glGetString(GL_VERSION) returned NULL (GL error 0x%04x)", (unsigned)glGetError());
        goto fail;
    }
    if (strncmp(version, "OpenGL ES", 9) == 0) {
        snprintf(why, sizeof why, "got OpenGL ES (\"%s\"), not desktop OpenGL", version);
        goto fail;
    }
    int got = parse_gl_version(version);
    if (got > 0)
        got = epoxy_gl_version();
    if (got < at->min_version) {
        snprintf(why, sizeof why, "got GL_VERSION \"%s\", below the minimum %d.%d", version, at->min_version / 10,
                 at->min_version % 10);
        goto fail;
    }

    if (at->reasons[0])
        glcv_logf(at->lg, GLCV_LOG_DEBUG, "EGL %s: OpenGL %d.%d core context created", label, got / 10, got % 10);
    c->dpy = dpy;
    c->egl_ctx = ctx;
    c->surface = surface;
    at->egl_major = major;
    at->egl_minor = minor;
    at->requested_version = requested;
    at->with_pbuffer = surface != EGL_NO_SURFACE;
    return 1;

fail:
    if (current)
        eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (surface != EGL_NO_SURFACE)
        eglDestroySurface(dpy, surface);
    if (ctx != EGL_NO_CONTEXT)
        eglDestroyContext(dpy, ctx);
    (void)eglGetError();
    display_release(dpy);
    attempt_failed(at, label, why);
    return 0;
}

typedef struct device_entry {
    EGLDeviceEXT dev;
    const char *exts;
    const char *drm_file;
    int cuda; /* -1: no EGL_NV_device_cuda */
    int rank; /* 0: the CUDA device asked for, 1: other CUDA devices, 2: the rest */
} device_entry;

static void describe_device(const device_entry *d, char *buf, size_t size)
{
    snprintf(buf, size, "[%s]", d->exts && d->exts[0] ? d->exts : "no device extensions");
    if (d->cuda >= 0)
        appendf(buf, size, " CUDA %d", d->cuda);
    if (d->drm_file)
        appendf(buf, size, " %s", d->drm_file);
}

static void query_device(EGLDeviceEXT dev, device_entry *d)
{
    d->dev = dev;
    d->cuda = -1;
    d->drm_file = NULL;
    d->exts = eglQueryDeviceStringEXT(dev, EGL_EXTENSIONS);
    if (!d->exts) {
        (void)eglGetError();
        d->exts = "";
    }
    if (has_token(d->exts, "EGL_NV_device_cuda")) {
        EGLAttrib v = -1;
        if (eglQueryDeviceAttribEXT(dev, EGL_CUDA_DEVICE_NV, &v))
            d->cuda = (int)v;
        else
            (void)eglGetError();
    }
    if (has_token(d->exts, "EGL_EXT_device_drm")) {
        d->drm_file = eglQueryDeviceStringEXT(dev, EGL_DRM_DEVICE_FILE_EXT);
        if (!d->drm_file)
            (void)eglGetError();
    }
}

static int try_device_platform(attempt *at, glcv_context *c, const glcv_context_params *p, const char *client,
                               chosen *out)
{
    int base = has_token(client, "EGL_EXT_device_base");
    int enumeration = base || has_token(client, "EGL_EXT_device_enumeration");
    int query = base || has_token(client, "EGL_EXT_device_query");
    int platform = has_token(client, "EGL_EXT_platform_device");
    if (!enumeration || !query || !platform) {
        char why[WHY_SIZE] = "client extensions missing:";
        if (!enumeration)
            appendf(why, sizeof why, " EGL_EXT_device_enumeration");
        if (!query)
            appendf(why, sizeof why, " EGL_EXT_device_query");
        if (!platform)
            appendf(why, sizeof why, " EGL_EXT_platform_device");
        attempt_failed(at, "device platform", why);
        return 0;
    }

    char e[48], why[WHY_SIZE];
    EGLint n = 0;
    if (!eglQueryDevicesEXT(0, NULL, &n)) {
        snprintf(why, sizeof why, "eglQueryDevicesEXT failed (%s)", egl_error_text(eglGetError(), e, sizeof e));
        attempt_failed(at, "device platform", why);
        return 0;
    }
    if (n <= 0) {
        attempt_failed(at, "device platform", "no EGL devices");
        return 0;
    }
    EGLDeviceEXT *devs = calloc((size_t)n, sizeof *devs);
    device_entry *list = calloc((size_t)n, sizeof *list);
    if (!devs || !list) {
        free(devs);
        free(list);
        at->out_of_memory = 1;
        return 0;
    }
    EGLint count = 0;
    if (!eglQueryDevicesEXT(n, devs, &count) || count <= 0) {
        snprintf(why, sizeof why, "eglQueryDevicesEXT listed no devices (%s)",
                 egl_error_text(eglGetError(), e, sizeof e));
        attempt_failed(at, "device platform", why);
        free(devs);
        free(list);
        return 0;
    }
    if (count > n)
        count = n;

    for (EGLint i = 0; i < count; i++) {
        device_entry *d = &list[i];
        query_device(devs[i], d);
        if (p->match_cuda_device && d->cuda >= 0 && d->cuda == p->cuda_device)
            d->rank = 0;
        else if (has_token(d->exts, "EGL_NV_device_cuda"))
            d->rank = 1;
        else
            d->rank = 2;
        char desc[384];
        describe_device(d, desc, sizeof desc);
        glcv_logf(at->lg, GLCV_LOG_DEBUG, "EGL device %d of %d: %s", (int)i, (int)count, desc);
    }

    int ok = 0;
    for (int rank = 0; rank <= 2 && !ok; rank++) {
        for (EGLint i = 0; i < count && !ok; i++) {
            const device_entry *d = &list[i];
            if (d->rank != rank)
                continue;
            char label[64];
            snprintf(label, sizeof label, "device %d of %d", (int)i, (int)count);
            if (d->cuda >= 0)
                appendf(label, sizeof label, " (CUDA %d)", d->cuda);
            EGLDisplay dpy = eglGetPlatformDisplayEXT(EGL_PLATFORM_DEVICE_EXT, d->dev, NULL);
            if (dpy == EGL_NO_DISPLAY) {
                snprintf(why, sizeof why, "eglGetPlatformDisplayEXT failed (%s)",
                         egl_error_text(eglGetError(), e, sizeof e));
                attempt_failed(at, label, why);
                continue;
            }
            if (try_display(at, c, dpy, label)) {
                ok = 1;
                c->cuda_device = d->cuda;
                out->platform = "device";
                describe_device(d, out->device, sizeof out->device);
            }
        }
    }
    free(devs);
    free(list);
    return ok;
}

static int try_surfaceless_platform(attempt *at, glcv_context *c, const char *client, chosen *out)
{
    if (!has_token(client, "EGL_MESA_platform_surfaceless")) {
        attempt_failed(at, "surfaceless platform", "client extension EGL_MESA_platform_surfaceless missing");
        return 0;
    }
    char e[48], why[WHY_SIZE];
    EGLDisplay dpy = eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA, NULL, NULL);
    if (dpy == EGL_NO_DISPLAY) {
        snprintf(why, sizeof why, "eglGetPlatformDisplayEXT failed (%s)", egl_error_text(eglGetError(), e, sizeof e));
        attempt_failed(at, "surfaceless platform", why);
        return 0;
    }
    if (!try_display(at, c, dpy, "surfaceless platform"))
        return 0;
    out->platform = "surfaceless";
    snprintf(out->device, sizeof out->device, "unknown");
    /* The EGL device behind the display, when the implementation tells. */
    if (has_token(client, "EGL_EXT_device_base") || has_token(client, "EGL_EXT_device_query")) {
        EGLAttrib attr = 0;
        if (eglQueryDisplayAttribEXT(dpy, EGL_DEVICE_EXT, &attr) && attr) {
            device_entry d;
            query_device((EGLDeviceEXT)attr, &d);
            c->cuda_device = d.cuda;
            describe_device(&d, out->device, sizeof out->device);
        } else {
            (void)eglGetError();
        }
    }
    return 1;
}

typedef struct saved_current {
    EGLenum api;
    EGLDisplay dpy;
    EGLContext ctx;
    EGLSurface draw, read;
} saved_current;

static void save_current(saved_current *s)
{
    s->api = eglQueryAPI();
    s->ctx = eglGetCurrentContext();
    s->dpy = eglGetCurrentDisplay();
    s->draw = eglGetCurrentSurface(EGL_DRAW);
    s->read = eglGetCurrentSurface(EGL_READ);
}

/* After a failed creation: makes the EGL context that was current before current again. */
static void restore_current(const saved_current *s, const glcv_logger *lg)
{
    char e[48];
    if (s->ctx != EGL_NO_CONTEXT && s->dpy != EGL_NO_DISPLAY && eglGetCurrentContext() != s->ctx) {
        if (s->api)
            eglBindAPI(s->api);
        if (!eglMakeCurrent(s->dpy, s->draw, s->read, s->ctx))
            glcv_logf(lg, GLCV_LOG_WARN, "could not make the previously current EGL context current again (%s)",
                      egl_error_text(eglGetError(), e, sizeof e));
    }
    if (s->api && eglQueryAPI() != s->api)
        eglBindAPI(s->api);
}

glcv_status glcv_context_create(const glcv_context_params *params, glcv_context **out)
{
    static const glcv_context_params defaults = {0};
    const glcv_context_params *p = params ? params : &defaults;
    const glcv_logger *lg = &p->logger;
    if (!out)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT, "glcv_context_create: out is NULL");
    *out = NULL;
    /* a version as major*10+minor: 3.3, or 4.0 and later with a one-digit minor; above 4.6 is
     * NO_CONTEXT below (a version EGL cannot be asked for), anything else a mistake */
    if (p->min_gl_version < 0 || (p->min_gl_version > 0 && p->min_gl_version < 33) ||
        (p->min_gl_version > 33 && p->min_gl_version < 40) || p->min_gl_version > 99)
        return glcv_fail(lg, GLCV_ERROR_INVALID_ARGUMENT,
                         "glcv_context_create: min_gl_version %d is not a GL version 3.3 or later as "
                         "major*10+minor (e.g. 43 for 4.3), or 0 for 3.3",
                         p->min_gl_version);
    int min_version = p->min_gl_version ? p->min_gl_version : 33;
    if (min_version > k_versions[0])
        return glcv_fail(lg, GLCV_ERROR_NO_CONTEXT,
                         "no OpenGL context: OpenGL %d.%d was asked for, the newest version asked of EGL is %d.%d",
                         min_version / 10, min_version % 10, k_versions[0] / 10, k_versions[0] % 10);
    if (!epoxy_has_egl())
        return glcv_fail(lg, GLCV_ERROR_NO_CONTEXT, "no OpenGL context: libEGL.so.1 cannot be loaded");
    const char *client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (!client) {
        (void)eglGetError();
        return glcv_fail(lg, GLCV_ERROR_NO_CONTEXT,
                         "no OpenGL context: EGL has no client extensions (EGL_EXT_client_extensions), so neither "
                         "the device nor the surfaceless platform can be used");
    }
    if (!has_token(client, "EGL_EXT_platform_base"))
        return glcv_fail(lg, GLCV_ERROR_NO_CONTEXT,
                         "no OpenGL context: EGL lacks the client extension EGL_EXT_platform_base");

    glcv_context *c = calloc(1, sizeof *c);
    attempt *at = calloc(1, sizeof *at);
    if (!c || !at) {
        free(c);
        free(at);
        return glcv_fail(lg, GLCV_ERROR_OUT_OF_MEMORY, "glcv_context_create: out of memory");
    }
    c->dpy = EGL_NO_DISPLAY;
    c->egl_ctx = EGL_NO_CONTEXT;
    c->surface = EGL_NO_SURFACE;
    c->cuda_device = -1;
    c->logger = p->logger;
    at->lg = lg;
    at->min_version = min_version;

    saved_current prev;
    save_current(&prev);
    chosen where = {0};
    int ok = 0;
    if (!p->surfaceless_only)
        ok = try_device_platform(at, c, p, client, &where);
    if (!ok && !at->out_of_memory)
        ok = try_surfaceless_platform(at, c, client, &where);

    if (!ok) {
        restore_current(&prev, lg);
        glcv_status st;
        if (at->out_of_memory) {
            st = glcv_fail(lg, GLCV_ERROR_OUT_OF_MEMORY, "glcv_context_create: out of memory");
        } else {
            st = glcv_fail(lg, GLCV_ERROR_NO_CONTEXT, "no OpenGL %d.%d+ core context could be created. Tried: %s%s%s",
                           min_version / 10, min_version % 10,
                           p->surfaceless_only ? "(device platform skipped: surfaceless_only) " : "", at->reasons,
                           glx_context_current() ? ". Note: a GLX context is current on this thread, and libglvnd "
                                                   "refuses to make an EGL context current then"
                                                 : "");
        }
        free(at);
        free(c);
        return st;
    }

    const char *renderer = (const char *)glGetString(GL_RENDERER);
    const char *version = (const char *)glGetString(GL_VERSION);
    char platform[64];
    if (strcmp(where.platform, "device") == 0 && c->cuda_device >= 0)
        snprintf(platform, sizeof platform, "EGL device, CUDA %d", c->cuda_device);
    else
        snprintf(platform, sizeof platform, "EGL %s", where.platform);
    snprintf(c->description, sizeof c->description, "%s | %s | %s", renderer ? renderer : "unknown renderer",
             version ? version : "unknown version", platform);
    const char *vendor = eglQueryString(c->dpy, EGL_VENDOR);
    glcv_logf(lg, GLCV_LOG_INFO,
              "OpenGL context: %s; asked for %d.%d core, current %s; EGL %d.%d (%s), %s platform; device %s",
              c->description, at->requested_version / 10, at->requested_version % 10,
              at->with_pbuffer ? "on a 1x1 pbuffer" : "without a surface", (int)at->egl_major, (int)at->egl_minor,
              vendor ? vendor : "unknown vendor", where.platform, where.device);
    if (at->reasons[0])
        glcv_logf(lg, GLCV_LOG_WARN, "OpenGL context on the EGL %s platform after failed attempts: %s", where.platform,
                  at->reasons);
    if (p->match_cuda_device && c->cuda_device != p->cuda_device)
        glcv_logf(lg, GLCV_LOG_WARN, "CUDA device %d was asked for; the context is on %s", p->cuda_device,
                  c->cuda_device >= 0 ? "another CUDA device" : "an EGL device without CUDA");
    free(at);
    live_add(c->egl_ctx);
    *out = c;
    return GLCV_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Use and destruction
 */

/* The EGL context of the desktop OpenGL API current on this thread (the bound API is restored). */
static EGLContext current_egl_gl_context(void)
{
    EGLenum api = eglQueryAPI();
    if (api == EGL_OPENGL_API)
        return eglGetCurrentContext();
    if (!eglBindAPI(EGL_OPENGL_API)) {
        (void)eglGetError();
        return eglGetCurrentContext();
    }
    EGLContext cur = eglGetCurrentContext();
    eglBindAPI(api);
    return cur;
}

void glcv_context_destroy(glcv_context **ctx)
{
    if (!ctx || !*ctx)
        return;
    glcv_context *c = *ctx;
    *ctx = NULL;
    char e[48];
    if (current_egl_gl_context() == c->egl_ctx &&
        !eglMakeCurrent(c->dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT))
        glcv_logf(&c->logger, GLCV_LOG_WARN, "glcv_context_destroy: releasing the context failed (%s)",
                  egl_error_text(eglGetError(), e, sizeof e));
    if (c->surface != EGL_NO_SURFACE && !eglDestroySurface(c->dpy, c->surface))
        glcv_logf(&c->logger, GLCV_LOG_WARN, "glcv_context_destroy: eglDestroySurface failed (%s)",
                  egl_error_text(eglGetError(), e, sizeof e));
    live_remove(c->egl_ctx);
    if (!eglDestroyContext(c->dpy, c->egl_ctx))
        glcv_logf(&c->logger, GLCV_LOG_WARN, "glcv_context_destroy: eglDestroyContext failed (%s)",
                  egl_error_text(eglGetError(), e, sizeof e));
    display_release(c->dpy);
    free(c);
}

glcv_status glcv_context_make_current(glcv_context *ctx)
{
    if (!ctx)
        return GLCV_ERROR_INVALID_ARGUMENT;
    char e[48];
    if (!eglBindAPI(EGL_OPENGL_API))
        return glcv_fail(&ctx->logger, GLCV_ERROR_NO_CONTEXT, "eglBindAPI(EGL_OPENGL_API) failed (%s)",
                         egl_error_text(eglGetError(), e, sizeof e));
    if (eglGetCurrentContext() == ctx->egl_ctx)
        return GLCV_OK;
    if (fault(FAULT_MAKE_CURRENT) || !eglMakeCurrent(ctx->dpy, ctx->surface, ctx->surface, ctx->egl_ctx)) {
        EGLint err = egl_error();
        return glcv_fail(&ctx->logger, GLCV_ERROR_NO_CONTEXT, "eglMakeCurrent failed (%s)%s",
                         egl_error_text(err, e, sizeof e),
                         err == EGL_BAD_ACCESS    ? ": the context is current on another thread, or another window "
                                                    "system's (GLX) context is current on this one"
                         : err == EGL_CONTEXT_LOST ? ": the GPU lost the context (a reset, a removed device): "
                                                     "destroy what was made in it and the context, then create them "
                                                     "again"
                                                   : "");
    }
    return GLCV_OK;
}

const char *glcv_context_describe(const glcv_context *ctx)
{
    return ctx ? ctx->description : "no context";
}

int glcv_context_cuda_device(const glcv_context *ctx)
{
    return ctx ? ctx->cuda_device : -1;
}
