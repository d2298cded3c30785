/* The window of 'glcv stream view --window' (GLFW): the viewer's loop runs on a thread of its own
 * and hands each picture over; this thread, the main one as GLFW wants, uploads the newest into a
 * texture and blits it, scaled to the window (which takes the picture's size, up to 1280 pixels
 * wide), row 0 at the top. Esc or Q closes the window, which ends the viewer. Built with GLFW only (GLCV_STREAM_WINDOW); without it, --window is an error. */
#define _POSIX_C_SOURCE 200809L

#include "stream.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#if GLCV_STREAM_WINDOW

#include <epoxy/gl.h>
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <pthread.h>
#include <stdio.h>

struct stream_display {
    pthread_mutex_t lock;
    uint8_t *rgb; /* the newest picture as RGB8 */
    int width, height;
    uint64_t version; /* pictures published */
    atomic_int closed, done;
    int (*body)(void *user, stream_display *display);
    void *user;
    int rc;
};

void stream_display_publish(stream_display *d, const glcv_image *picture)
{
    size_t n = (size_t)picture->width * (size_t)picture->height;
    pthread_mutex_lock(&d->lock);
    if (picture->width != d->width || picture->height != d->height) {
        uint8_t *p = realloc(d->rgb, 3 * n);
        if (!p) {
            pthread_mutex_unlock(&d->lock);
            return; /* not shown; the stream goes on */
        }
        d->rgb = p;
        d->width = picture->width;
        d->height = picture->height;
    }
    glcv_image out = {d->rgb, picture->width, picture->height, 0, GLCV_PIXEL_RGB8};
    if (glcv_image_convert(picture, &out) == GLCV_OK)
        d->version++;
    pthread_mutex_unlock(&d->lock);
    glfwPostEmptyEvent();
}

int stream_display_closed(stream_display *d)
{
    return d && atomic_load(&d->closed);
}

static void *body_main(void *arg)
{
    stream_display *d = arg;
    d->rc = d->body(d->user, d);
    atomic_store(&d->done, 1);
    glfwPostEmptyEvent();
    return NULL;
}

static void on_key(GLFWwindow *win, int key, int scancode, int action, int mods)
{
    (void)scancode;
    (void)mods;
    if (action == GLFW_PRESS && (key == GLFW_KEY_ESCAPE || key == GLFW_KEY_Q))
        glfwSetWindowShouldClose(win, GLFW_TRUE);
}

static void on_glfw_error(int code, const char *text)
{
    cli_warning("GLFW error 0x%x: %s", code, text);
}

/* Draws the newest picture (uploaded when it changed) into the window, letterboxed. */
static void draw(stream_display *d, GLFWwindow *win, GLuint tex, GLuint fbo, uint64_t *shown, int *tw, int *th,
                 int swap)
{
    pthread_mutex_lock(&d->lock);
    if (d->version != *shown && d->rgb) {
        glBindTexture(GL_TEXTURE_2D, tex);
        glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
        if (d->width != *tw || d->height != *th)
            glTexImage2D(GL_TEXTURE_2D, 0, GL_RGB8, d->width, d->height, 0, GL_RGB, GL_UNSIGNED_BYTE, d->rgb);
        else
            glTexSubImage2D(GL_TEXTURE_2D, 0, 0, 0, d->width, d->height, GL_RGB, GL_UNSIGNED_BYTE, d->rgb);
        *tw = d->width;
        *th = d->height;
        *shown = d->version;
    }
    pthread_mutex_unlock(&d->lock);
    int ww = 0, wh = 0;
    glfwGetFramebufferSize(win, &ww, &wh);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
    glViewport(0, 0, ww, wh);
    glClearColor(0, 0, 0, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    if (*tw > 0 && ww > 0 && wh > 0) {
        glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo);
        glFramebufferTexture2D(GL_READ_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, tex, 0);
        double s = (double)ww / *tw < (double)wh / *th ? (double)ww / *tw : (double)wh / *th;
        int w = (int)(*tw * s), h = (int)(*th * s), x = (ww - w) / 2, y = (wh - h) / 2;
        /* Row 0 of the picture at the top: the destination's y runs the other way. */
        glBlitFramebuffer(0, 0, *tw, *th, x, y + h, x + w, y, GL_COLOR_BUFFER_BIT, GL_LINEAR);
        glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    }
    if (swap)
        glfwSwapBuffers(win);
}

/* The window's content as a PNG file (row 0 at the top). */
static int save_screenshot(GLFWwindow *win, const char *path)
{
    int w = 0, h = 0;
    glfwGetFramebufferSize(win, &w, &h);
    glcv_image shot = {0};
    if (w < 1 || h < 1 || glcv_image_alloc(w, h, GLCV_PIXEL_RGB8, &shot) != GLCV_OK)
        return cli_out_of_memory();
    uint8_t *rows = malloc((size_t)w * (size_t)h * 3);
    if (!rows) {
        glcv_image_free(&shot);
        return cli_out_of_memory();
    }
    glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
    glReadBuffer(GL_BACK);
    glPixelStorei(GL_PACK_ALIGNMENT, 1);
    glReadPixels(0, 0, w, h, GL_RGB, GL_UNSIGNED_BYTE, rows);
    for (int y = 0; y < h; y++)
        memcpy(shot.data + (size_t)y * (size_t)w * 3, rows + (size_t)(h - 1 - y) * (size_t)w * 3, (size_t)w * 3);
    free(rows);
    glcv_status st = glcv_image_save_png(path, &shot, NULL);
    glcv_image_free(&shot);
    return st == GLCV_OK ? CLI_OK : cli_lib_error(path, st);
}

int stream_display_run(const char *title, const char *screenshot, int (*body)(void *user, stream_display *display),
                       void *user)
{
    glfwSetErrorCallback(on_glfw_error);
    if (!glfwInit()) {
        cli_error("--window: cannot open a window (no display?)");
        return CLI_FAIL;
    }
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    GLFWwindow *win = glfwCreateWindow(640, 480, title, NULL, NULL);
    if (!win) {
        cli_error("--window: cannot create a window with an OpenGL 3.3 core context");
        glfwTerminate();
        return CLI_FAIL;
    }
    glfwMakeContextCurrent(win);
    glfwSwapInterval(0);
    glfwSetKeyCallback(win, on_key);
    GLuint tex = 0, fbo = 0;
    glGenTextures(1, &tex);
    glBindTexture(GL_TEXTURE_2D, tex);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
    glGenFramebuffers(1, &fbo);

    stream_display d = {.body = body, .user = user, .rc = CLI_FAIL};
    pthread_mutex_init(&d.lock, NULL);
    atomic_init(&d.closed, 0);
    atomic_init(&d.done, 0);
    pthread_t thread;
    int rc = CLI_FAIL;
    if (pthread_create(&thread, NULL, body_main, &d) != 0) {
        cli_error("cannot start a thread");
    } else {
        uint64_t shown = 0;
        int tw = 0, th = 0, sized = 0;
        while (!atomic_load(&d.done)) {
            glfwWaitEventsTimeout(0.05);
            if (glfwWindowShouldClose(win))
                atomic_store(&d.closed, 1);
            draw(&d, win, tex, fbo, &shown, &tw, &th, 1);
            if (!sized && tw > 0) { /* the window takes the picture's size (up to 1280 wide) */
                int w = tw > 1280 ? 1280 : tw;
                glfwSetWindowSize(win, w, (int)((double)th * w / tw));
                sized = 1;
            }
        }
        pthread_join(thread, NULL);
        rc = d.rc;
        /* The last picture, drawn once more into the back buffer and read; none from a viewer that
         * failed before it had a picture (refused, say): it leaves no output behind. */
        if (screenshot && (rc == CLI_OK || tw > 0)) {
            shown = 0;
            draw(&d, win, tex, fbo, &shown, &tw, &th, 0);
            int saved = save_screenshot(win, screenshot);
            rc = rc == CLI_OK ? saved : rc;
        }
    }
    glDeleteFramebuffers(1, &fbo);
    glDeleteTextures(1, &tex);
    glfwDestroyWindow(win);
    glfwTerminate();
    free(d.rgb);
    pthread_mutex_destroy(&d.lock);
    return rc;
}

#else

struct stream_display {
    int unused;
};

int stream_display_run(const char *title, const char *screenshot, int (*body)(void *user, stream_display *display),
                       void *user)
{
    (void)title;
    (void)screenshot;
    (void)body;
    (void)user;
    cli_error("--window: this glcv was built without GLFW, so it has no windows");
    return CLI_FAIL;
}

void stream_display_publish(stream_display *d, const glcv_image *picture)
{
    (void)d;
    (void)picture;
}

int stream_display_closed(stream_display *d)
{
    (void)d;
    return 0;
}

#endif
