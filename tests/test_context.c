/* Headless context creation, switching between contexts and the current-context probe. */
#include "testutil.h"

#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include <pthread.h>
#include <string.h>

/* A logger for calls that are expected to fail: silent. */
static glcv_logger silent_logger(void)
{
    glcv_logger lg = {NULL, NULL, 0};
    return lg;
}

/* Checks that the current context is a working desktop GL core context of at least 3.3. */
static void check_gl_works(const char *what)
{
    const char *version = (const char *)glGetString(GL_VERSION);
    CHECK(version != NULL, "%s: glGetString(GL_VERSION) returned NULL", what);
    if (!version)
        return;
    CHECK(epoxy_is_desktop_gl(), "%s: not desktop OpenGL: %s", what, version);
    CHECK(epoxy_gl_version() >= 33, "%s: GL version %d < 33 (%s)", what, epoxy_gl_version(), version);
    GLint mask = 0;
    glGetIntegerv(GL_CONTEXT_PROFILE_MASK, &mask);
    CHECK(mask & GL_CONTEXT_CORE_PROFILE_BIT, "%s: GL_CONTEXT_PROFILE_MASK = 0x%x, no core bit", what, (unsigned)mask);
    GLenum err = glGetError();
    CHECK(err == GL_NO_ERROR, "%s: glGetError() = 0x%x", what, (unsigned)err);
}

/* Renders a solid colour into a new 4x4 RGBA8 texture through an FBO; returns the texture. The FBO
 * stays bound so that read_back() reads it. */
static GLuint render_color(const char *what, float r, float g, float b)
{
    GLuint tex = 0, fbo = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, 4, 4, 0, GL_RGBA, GL_UNSIGNED_BYTE, NULL);
    glGenFramebuffers(1, &fbo);
    glBindFramebuffer(GL_FRAMEBUFFER, fbo);
    glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
    GLenum fb = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    CHECK(fb == GL_FRAMEBUFFER_COMPLETE, "%s: framebuffer status 0x%x", what, (unsigned)fb);
    glViewport(0, 0, 4, 4);
    glClearColor(r, g, b, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    GLenum err = glGetError();
    CHECK(err == GL_NO_ERROR, "%s: glGetError() = 0x%x after rendering", what, (unsigned)err);
    return tex;
}

/* Reads pixel (1,1) of the framebuffer bound in the current context and compares it. */
static void check_read_back(const char *what, unsigned char r, unsigned char g, unsigned char b)
{
    unsigned char px[4] = {0, 0, 0, 0};
    glFinish();
    glReadPixels(1, 1, 1, 1, GL_RGBA, GL_UNSIGNED_BYTE, px);
    GLenum err = glGetError();
    CHECK(err == GL_NO_ERROR, "%s: glGetError() = 0x%x after glReadPixels", what, (unsigned)err);
    CHECK(px[0] == r && px[1] == g && px[2] == b && px[3] == 255, "%s: read %u,%u,%u,%u, expected %u,%u,%u,255",
          what, px[0], px[1], px[2], px[3], r, g, b);
}

/* Whether the platform named is offered by EGL at all (client extension). */
static int egl_client_extension(const char *name)
{
    if (!epoxy_has_egl())
        return 0;
    const char *client = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    if (!client)
        return 0;
    size_t n = strlen(name);
    for (const char *p = client; (p = strstr(p, name)) != NULL; p += n) {
        if ((p == client || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return 1;
    }
    return 0;
}

static int is_mesa(void)
{
    const char *version = (const char *)glGetString(GL_VERSION);
    return version && strstr(version, "Mesa") != NULL;
}

typedef struct thread_job {
    glcv_context *ctx;
    int current_at_start; /* glcv_gl_context_current() on the new thread before anything */
    glcv_status make_current;
    int current_after;
    int current_after_destroy;
    int ok_gl;
} thread_job;

static void *thread_main(void *arg)
{
    thread_job *job = arg;
    job->current_at_start = glcv_gl_context_current();
    job->make_current = glcv_context_make_current(job->ctx);
    job->current_after = glcv_gl_context_current();
    if (job->make_current == GLCV_OK) {
        const char *version = (const char *)glGetString(GL_VERSION);
        job->ok_gl = version != NULL && glGetError() == GL_NO_ERROR;
    }
    glcv_context_destroy(&job->ctx);
    job->current_after_destroy = glcv_gl_context_current();
    return NULL;
}

int main(void)
{
    /* Before anything: no context, and the probe must not load or abort anything. */
    CHECK(glcv_gl_context_current() == 0, "a GL context is current before any was created");

    glcv_context_params params = {0};
    params.logger = test_logger();
    glcv_context *a = NULL;
    glcv_status st = glcv_context_create(&params, &a);
    if (st == GLCV_ERROR_NO_CONTEXT) {
        printf("SKIP: no OpenGL context could be created (%s); the log above says why\n", glcv_status_string(st));
        return TEST_SKIP;
    }
    CHECK_STATUS(st, GLCV_OK);
    if (st != GLCV_OK || !a) {
        printf("glcv_context_create failed: %s\n", glcv_status_string(st));
        return test_finish("test_context");
    }
    const char *desc_a = glcv_context_describe(a);
    printf("GL context: %s\n", desc_a);
    CHECK(desc_a && strstr(desc_a, " | ") && strstr(desc_a, "EGL"), "odd description '%s'", desc_a);
    CHECK(glcv_gl_context_current() != 0, "no GL context current after glcv_context_create");
    check_gl_works("context A");
    int mesa = is_mesa();
    printf("CUDA device of context A: %d\n", glcv_context_cuda_device(a));
    if (mesa)
        CHECK(glcv_context_cuda_device(a) == -1, "Mesa context reports CUDA device %d", glcv_context_cuda_device(a));
    render_color("context A", 1.0f, 0.0f, 0.0f);
    check_read_back("context A", 255, 0, 0);

    /* A second context (NULL params: all defaults), current after creation. */
    glcv_context *b = NULL;
    CHECK_OK(glcv_context_create(NULL, &b));
    CHECK(b != NULL, "second context is NULL");
    if (b) {
        printf("GL context B: %s\n", glcv_context_describe(b));
        CHECK(glcv_gl_context_current() != 0, "no GL context current after creating B");
        check_gl_works("context B");
        render_color("context B", 0.0f, 0.0f, 1.0f);
        check_read_back("context B", 0, 0, 255);

        /* Switching: each context sees its own framebuffer (object names are per context, so a
         * switch that did not happen would read the other colour). */
        for (int round = 0; round < 2; round++) {
            CHECK_OK(glcv_context_make_current(a));
            CHECK(glcv_gl_context_current() != 0, "nothing current after making A current");
            check_read_back("A after switching", 255, 0, 0);
            check_gl_works("A after switching");
            CHECK_OK(glcv_context_make_current(b));
            CHECK(glcv_gl_context_current() != 0, "nothing current after making B current");
            check_read_back("B after switching", 0, 0, 255);
        }
        CHECK_OK(glcv_context_make_current(b)); /* already current: a no-op */

        /* Destroying a context that is not current leaves the current one alone. */
        CHECK_OK(glcv_context_make_current(a));
        glcv_context_destroy(&b);
        CHECK(b == NULL, "destroy did not clear the pointer");
        CHECK(glcv_gl_context_current() != 0, "destroying B (not current) released A");
        check_read_back("A after destroying B", 255, 0, 0);
        check_gl_works("A after destroying B");
    }

    /* A failed creation leaves the previously current context current and working; on Mesa's
     * llvmpipe (4.5) asking for 4.6 fails on every device and platform, and the failing attempts
     * must not terminate the display A lives on. */
    if (epoxy_gl_version() < 46) {
        glcv_context_params p46 = {0};
        p46.min_gl_version = 46;
        p46.logger = silent_logger();
        glcv_context *c = a; /* must be overwritten with NULL */
        CHECK_STATUS(glcv_context_create(&p46, &c), GLCV_ERROR_NO_CONTEXT);
        CHECK(c == NULL, "*out not NULL after a failure");
        CHECK(glcv_gl_context_current() != 0, "failed creation left no context current");
        check_read_back("A after a failed creation", 255, 0, 0);
        check_gl_works("A after a failed creation");
    }

    /* Unreachable minimum version. */
    {
        glcv_context_params p99 = {0};
        p99.min_gl_version = 99;
        p99.logger = silent_logger();
        glcv_context *c = NULL;
        CHECK_STATUS(glcv_context_create(&p99, &c), GLCV_ERROR_NO_CONTEXT);
        CHECK(c == NULL, "*out not NULL after min_gl_version=99");
        CHECK(glcv_gl_context_current() != 0, "min_gl_version=99 released the current context");
    }

    /* Bad arguments. */
    {
        glcv_context_params quiet = {0};
        quiet.logger = silent_logger();
        CHECK_STATUS(glcv_context_create(&quiet, NULL), GLCV_ERROR_INVALID_ARGUMENT);
    }
    /* not GL versions: negative, 1..32 (3 for 3.0, say), 34..39, 100 and above */
    static const int not_versions[] = {-1, 1, 3, 30, 32, 34, 39, 100, 330, 450};
    for (size_t i = 0; i < sizeof not_versions / sizeof not_versions[0]; i++) {
        glcv_context_params bad = {0};
        bad.min_gl_version = not_versions[i];
        bad.logger = silent_logger();
        glcv_context *c = NULL;
        CHECK_STATUS(glcv_context_create(&bad, &c), GLCV_ERROR_INVALID_ARGUMENT);
        CHECK(c == NULL, "*out not NULL after min_gl_version %d", not_versions[i]);
    }
    CHECK_STATUS(glcv_context_make_current(NULL), GLCV_ERROR_INVALID_ARGUMENT);
    glcv_context_destroy(NULL);
    glcv_context *null_ctx = NULL;
    glcv_context_destroy(&null_ctx);
    CHECK(glcv_context_describe(NULL) != NULL, "describe(NULL) returned NULL");
    CHECK(glcv_context_cuda_device(NULL) == -1, "cuda_device(NULL) != -1");

    /* Another thread: nothing is current there; it can take a context that is current nowhere,
     * use it and destroy it, while A stays current here. */
    {
        glcv_context *t = NULL;
        CHECK_OK(glcv_context_create(&params, &t)); /* current here now */
        CHECK_OK(glcv_context_make_current(a));     /* t is current nowhere */
        if (t) {
            thread_job job = {0};
            job.ctx = t;
            pthread_t th;
            CHECK(pthread_create(&th, NULL, thread_main, &job) == 0, "pthread_create failed");
            pthread_join(th, NULL);
            CHECK(job.current_at_start == 0, "a GL context is current on a fresh thread");
            CHECK(job.make_current == GLCV_OK, "make_current on another thread: %s",
                  glcv_status_string(job.make_current));
            CHECK(job.current_after != 0, "nothing current on the thread after make_current");
            CHECK(job.ok_gl, "GL did not work on the other thread");
            CHECK(job.current_after_destroy == 0, "still current on the thread after destroy");
            CHECK(glcv_gl_context_current() != 0, "the other thread's destroy released A here");
            check_read_back("A after the thread", 255, 0, 0);
        }
    }

    glcv_context_destroy(&a);
    CHECK(a == NULL, "destroy did not clear the pointer");
    CHECK(glcv_gl_context_current() == 0, "a GL context is still current after destroying the last one");

    /* Surfaceless platform only. */
    {
        glcv_context_params ps = {0};
        ps.surfaceless_only = 1;
        ps.logger = test_logger();
        glcv_context *s = NULL;
        st = glcv_context_create(&ps, &s);
        if (st == GLCV_ERROR_NO_CONTEXT && !egl_client_extension("EGL_MESA_platform_surfaceless")) {
            printf("surfaceless_only: skipped, EGL does not offer EGL_MESA_platform_surfaceless\n");
        } else {
            CHECK_STATUS(st, GLCV_OK);
            if (s) {
                printf("surfaceless GL context: %s\n", glcv_context_describe(s));
                CHECK(strstr(glcv_context_describe(s), "surfaceless") != NULL, "description '%s' does not say surfaceless",
                      glcv_context_describe(s));
                CHECK(glcv_gl_context_current() != 0, "no GL context current after creating the surfaceless one");
                check_gl_works("surfaceless context");
                render_color("surfaceless context", 0.0f, 1.0f, 0.0f);
                check_read_back("surfaceless context", 0, 255, 0);
                if (is_mesa())
                    CHECK(glcv_context_cuda_device(s) == -1, "Mesa surfaceless context reports CUDA device %d",
                          glcv_context_cuda_device(s));
                glcv_context_destroy(&s);
                CHECK(glcv_gl_context_current() == 0, "still current after destroying the surfaceless context");
            }
        }
    }

    /* Repeated create/destroy: displays are initialised and terminated again cleanly. */
    for (int i = 0; i < 3; i++) {
        glcv_context *r = NULL;
        glcv_context_params pr = {0};
        pr.logger = silent_logger();
        pr.surfaceless_only = i == 1;
        pr.match_cuda_device = i == 2; /* no CUDA device 0 on Mesa: falls back to the others */
        pr.cuda_device = 0;
        st = glcv_context_create(&pr, &r);
        if (pr.surfaceless_only && st == GLCV_ERROR_NO_CONTEXT && !egl_client_extension("EGL_MESA_platform_surfaceless"))
            continue;
        CHECK_STATUS(st, GLCV_OK);
        if (r) {
            check_gl_works("repeated context");
            glcv_context_destroy(&r);
        }
        CHECK(glcv_gl_context_current() == 0, "current after destroying repeated context %d", i);
    }

    return test_finish("test_context");
}
