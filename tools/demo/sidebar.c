/* glcv-demo: the sidebar's text (source, rates, state, engine, parameters, GPU time per pass,
 * tracked objects, view) and the message line under it. See demo.h. */
#include "demo.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const param_names[PARAM_COUNT] = {"Ts", "Odc", "B1", "B2", "iterations"};

void demo_set_message(demo *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->message, sizeof d->message, fmt, ap);
    va_end(ap);
    d->message_until = cli_now() + 4.0;
    printf("glcv-demo: %s\n", d->message);
    fflush(stdout);
}

static int append(char *buf, size_t size, size_t *len, const char *fmt, ...) CLI_PRINTF(4, 5);

static int append(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
    if (*len >= size)
        return 0;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, size - *len, fmt, ap);
    va_end(ap);
    if (n > 0)
        *len = (*len + (size_t)n < size) ? *len + (size_t)n : size - 1;
    return n;
}

/* Appends `text` broken into lines of at most `width` characters (at spaces where it can), each
 * indented by two spaces. */
static void append_wrapped(char *buf, size_t size, size_t *len, const char *text, int width)
{
    size_t n = strlen(text);
    for (size_t at = 0; at < n;) {
        size_t take = n - at;
        if (take > (size_t)width) {
            take = (size_t)width;
            for (size_t k = take; k > (size_t)width / 2; k--) {
                if (text[at + k] == ' ') {
                    take = k;
                    break;
                }
            }
        }
        append(buf, size, len, "  %.*s\n", (int)take, text + at);
        at += take;
        while (at < n && text[at] == ' ')
            at++;
    }
}

void demo_sidebar_text(demo *d, char *buf, size_t size)
{
    size_t len = 0;
    glcv_media_stats ms = {0};
    glcv_media_get_stats(d->media, &ms);
    const int cols = 38;
    append(buf, size, &len, "glcv-demo\t\th: help\n\n");
    append(buf, size, &len, "source\n");
    append_wrapped(buf, size, &len, glcv_media_describe(d->media), cols);
    append(buf, size, &len, "\nframe\t%lld  (%lld processed)\n", (long long)d->last_index,
           (long long)d->frames_processed);
    append(buf, size, &len, "processing\t%.1f fps\n", d->fps_process);
    append(buf, size, &len, "display\t%.1f fps\n", d->fps_display);
    append(buf, size, &len, "capture\t%lld captured, %lld dropped\n", (long long)ms.captured, (long long)ms.dropped);
    if (ms.decode_errors)
        append(buf, size, &len, "\t%lld decoding errors\n", (long long)ms.decode_errors);
    int eth = d->method == CLI_METHOD_ETH;
    const char *state = d->media_error != GLCV_OK  ? "input stopped (error)"
                        : d->ended                 ? "end of input"
                        : d->paused                ? "paused"
                        : d->learning              ? (eth || d->method == CLI_METHOD_VSAM ? "learning background"
                                                                                          : "learning thresholds")
                        : d->have_background || !eth ? "segmenting"
                                                     : "no background (b or l)";
    append(buf, size, &len, "state\t%s", state);
    if (d->learning)
        append(buf, size, &len, " %d/%d", d->learn_count, d->learn_frames);
    append(buf, size, &len, "\n\nmethod\t%s   (n: switch)\n", cli_method_names[d->method]);
    append(buf, size, &len, "engine\t%s   (e: switch)\n", glcv_engine_mode_string(d->engine));
    append_wrapped(buf, size, &len, d->renderer, cols);
    if (eth) {
        append(buf, size, &len, "\nparameters (up/down, left/right)\n");
        for (int i = 0; i < PARAM_COUNT; i++)
            append(buf, size, &len, "%s %s\t%g\n", i == d->selected ? ">" : "  ", param_names[i],
                   demo_param_value(d, i));
    } else if (d->sub) {
        char text[160];
        cli_subtractor_describe(d->sub, text, sizeof text);
        append(buf, size, &len, "\nparameters\n");
        append_wrapped(buf, size, &len, text, cols);
    }
    append(buf, size, &len, "\nGPU time per pass, ms\n");
    if (d->engine == GLCV_ENGINE_CPU) {
        append(buf, size, &len, "  (cpu engine: no GPU passes)\n");
    } else if (d->timing_count == 0) {
        append(buf, size, &len, "  (waiting for timer queries)\n");
    } else {
        double total = 0;
        for (int i = 0; i < d->timing_count; i++) {
            append(buf, size, &len, "  %s\t%.3f\tx%d\n", d->timings[i].name ? d->timings[i].name : "?",
                   d->timings[i].ms, d->timings[i].count);
            total += d->timings[i].ms;
        }
        append(buf, size, &len, "  total\t%.3f\n", total);
    }
    if (d->track) {
        append(buf, size, &len, "\ntracking\t%s engine, %.2f ms\n", glcv_engine_mode_string(d->track_engine),
               d->track_ms);
        append(buf, size, &len, "mask\t%s  (m: from segmenter)\n",
               !d->track_mask ? "off" : demo_have_mask(d) ? "on" : "on (no mask yet)");
    } else {
        append(buf, size, &len, "\ntracking\tunavailable\n");
    }
    append(buf, size, &len, "objects\t%d  (mouse drag; c clears)\n", d->object_count);
    for (int i = 0; i < d->object_count; i++) {
        const tracked *o = &d->objects[i];
        if (o->have_result)
            append(buf, size, &len, "  %d  %.0f,%.0f  %.0fx%.0f  it %d%s\n", o->id, o->r.cx, o->r.cy, o->r.width,
                   o->r.height, o->r.iterations, o->r.lost ? "  LOST" : "");
        else
            append(buf, size, &len, "  %d  from %d,%d %dx%d\n", o->id, o->start.x, o->start.y, o->start.width,
                   o->start.height);
    }
    append(buf, size, &len, "\nview\t%s  (v, 0..4)\n", demo_view_names[d->view]);
    if (d->view == VIEW_GRID)
        append(buf, size, &len, "\tinput | background\n\tmask | overlay\n");
    if (d->message[0] && cli_now() < d->message_until) {
        append(buf, size, &len, "\n");
        append_wrapped(buf, size, &len, d->message, cols);
    }
}
