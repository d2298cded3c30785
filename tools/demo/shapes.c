/* glcv-demo: what the flat program draws, as lists of coloured triangles in window pixels: filled
 * rectangles, outlines, thick lines and text (stb_easy_font's quads). See demo.h. */
#include "demo.h"

#include <stb/stb_easy_font.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void shapes_push(shapes *s, float x, float y, const uint8_t rgba[4])
{
    if (s->count == s->capacity) {
        int cap = s->capacity ? s->capacity * 2 : 4096;
        vertex *v = realloc(s->v, (size_t)cap * sizeof *v);
        if (!v)
            return;
        s->v = v;
        s->capacity = cap;
    }
    vertex *o = &s->v[s->count++];
    o->x = x;
    o->y = y;
    memcpy(o->rgba, rgba, 4);
}

void shapes_rect(shapes *s, float x0, float y0, float x1, float y1, const uint8_t rgba[4])
{
    shapes_push(s, x0, y0, rgba);
    shapes_push(s, x1, y0, rgba);
    shapes_push(s, x1, y1, rgba);
    shapes_push(s, x0, y0, rgba);
    shapes_push(s, x1, y1, rgba);
    shapes_push(s, x0, y1, rgba);
}

/* A rectangle outline `t` pixels thick (GL core has no wide lines). */
void shapes_frame(shapes *s, float x0, float y0, float x1, float y1, float t, const uint8_t rgba[4])
{
    shapes_rect(s, x0, y0, x1, y0 + t, rgba);
    shapes_rect(s, x0, y1 - t, x1, y1, rgba);
    shapes_rect(s, x0, y0 + t, x0 + t, y1 - t, rgba);
    shapes_rect(s, x1 - t, y0 + t, x1, y1 - t, rgba);
}

/* A line `t` pixels thick from (x0, y0) to (x1, y1), with square caps. */
void shapes_line(shapes *s, float x0, float y0, float x1, float y1, float t, const uint8_t rgba[4])
{
    float dx = x1 - x0, dy = y1 - y0, len = sqrtf(dx * dx + dy * dy);
    if (len < 1e-3f)
        return;
    float ux = dx / len * t * 0.5f, uy = dy / len * t * 0.5f; /* along, half thickness */
    float ax = x0 - ux, ay = y0 - uy, bx = x1 + ux, by = y1 + uy;
    shapes_push(s, ax - uy, ay + ux, rgba);
    shapes_push(s, bx - uy, by + ux, rgba);
    shapes_push(s, bx + uy, by - ux, rgba);
    shapes_push(s, ax - uy, ay + ux, rgba);
    shapes_push(s, bx + uy, by - ux, rgba);
    shapes_push(s, ax + uy, ay - ux, rgba);
}

/* One run of text (no newlines or tabs) with stb_easy_font: quads of ~7-pixel-high glyphs. */
static void shapes_run(shapes *s, float x, float y, float scale, const char *text, size_t n, const uint8_t rgba[4])
{
    static char quads[512 * 270];
    char buf[512];
    if (n >= sizeof buf)
        n = sizeof buf - 1;
    memcpy(buf, text, n);
    buf[n] = '\0';
    unsigned char color[4] = {rgba[0], rgba[1], rgba[2], rgba[3]};
    int count = stb_easy_font_print(0, 0, buf, color, quads, (int)sizeof quads);
    static const int order[6] = {0, 1, 2, 0, 2, 3};
    for (int q = 0; q < count; q++) {
        for (int k = 0; k < 6; k++) {
            const float *p = (const float *)(quads + (size_t)(q * 4 + order[k]) * 16);
            shapes_push(s, x + p[0] * scale, y + p[1] * scale, rgba);
        }
    }
}

/* Text at (x, y) scaled by `scale`: lines of 12 units, and tabs that jump to the next multiple of
 * `tab` units (the font is proportional, so columns need them). */
void shapes_text(shapes *s, float x, float y, float scale, const char *text, float tab, const uint8_t rgba[4])
{
    float cx = 0;
    const char *p = text;
    while (*p) {
        size_t n = strcspn(p, "\t\n");
        if (n > 0) {
            char run[512];
            size_t m = n < sizeof run - 1 ? n : sizeof run - 1;
            memcpy(run, p, m);
            run[m] = '\0';
            shapes_run(s, x + cx * scale, y, scale, run, m, rgba);
            cx += (float)stb_easy_font_width(run);
        }
        p += n;
        if (*p == '\t') {
            cx = (floorf((cx + 4) / tab) + 1) * tab;
            p++;
        } else if (*p == '\n') {
            cx = 0;
            y += 12 * scale;
            p++;
        }
    }
}
