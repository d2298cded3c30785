/* glcv stream view: connects to a server, proves the token (and has the server prove it), then
 * reads packets - the 64-byte header, checked (glcv_delta_header_parse) and its payload size held
 * to the limit before anything is allocated, then exactly the payload - and decodes them. A delta
 * that does not follow the picture (STATE: the server dropped some for this viewer, or they came
 * out of order) makes it ask for a keyframe and skip deltas until one comes; a corrupt packet, a
 * connection closed in the middle of one, a server that sends nothing for --read-timeout seconds,
 * or anything else that breaks the protocol ends it with exit status 1 and a message naming the
 * cause. Its outputs (--record, --trace) are made only once the server has accepted it: a viewer
 * that never got a stream leaves nothing behind. */
#define _GNU_SOURCE

#include "stream.h"

#include "stream_crypto.h"
#include "stream_net.h"
#include "stream_proto.h"

#include <glcv/delta.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct view_run {
    const stream_view_options *o;
    int fd;
    glcv_delta_decoder *decoder;
    glcv_logger logger;
    char last_message[512]; /* the library's last warning or error, for our own message */
    uint8_t *packet;
    size_t capacity;
    FILE *trace;
    stream_display *display;
    int waiting_for_key; /* a keyframe was asked for: deltas are skipped until it comes */
    int ended;           /* END came */
    int end_reason;
    uint64_t frames, received, raw, keyframes, snapshots, resyncs, skipped;
    uint64_t last_frame; /* of the last packet received */
} view_run;

/* The library's messages: kept for our own (the last one), shown at once with --verbose. */
static void keep_message(void *user, glcv_log_level level, const char *message)
{
    view_run *v = user;
    if (level <= GLCV_LOG_WARN)
        snprintf(v->last_message, sizeof v->last_message, "%s", message);
    if (v->o->verbose)
        glcv_log_stderr(NULL, level, message);
}

/* The viewer's window, while there is one: closing it stops the viewer as Ctrl-C does. */
static stream_display *g_display;

static int stopped(void)
{
    return cli_interrupted() || stream_display_closed(g_display);
}

static int net_failure(const char *what, net_result result, int err)
{
    cli_error("%s: %s", what, net_result_string(result, err));
    return CLI_FAIL;
}

/* ---- the handshake ---------------------------------------------------------------------------- */

static int handshake(view_run *v)
{
    const stream_view_options *o = v->o;
    double deadline = net_now() + o->timeout_s;
    uint8_t hello[STREAM_HELLO_BYTES], join[STREAM_JOIN_BYTES], welcome[STREAM_WELCOME_BYTES];
    uint8_t nonce_v[STREAM_NONCE_BYTES], nonce_s[STREAM_NONCE_BYTES];
    char why[STREAM_WHY_BYTES];
    int err = 0;
    net_result nr = net_read_exact(v->fd, hello, sizeof hello, deadline, stopped, NULL, &err);
    if (nr != NET_OK)
        return net_failure("waiting for the server's greeting", nr, err);
    if (stream_random(nonce_v, sizeof nonce_v) != 0) {
        cli_error("no random bytes for a nonce (libcrypto's RAND_bytes failed)");
        return CLI_FAIL;
    }
    int rc = stream_viewer_join(hello, sizeof hello, o->token, o->token_bytes, nonce_v, join, nonce_s, why);
    if (rc < 0) {
        cli_error("%s:%d: %s", o->host, o->port, why);
        return CLI_FAIL;
    }
    if ((nr = net_write_exact(v->fd, join, sizeof join, deadline, stopped, &err)) != NET_OK)
        return net_failure("sending the greeting", nr, err);
    if ((nr = net_read_exact(v->fd, welcome, sizeof welcome, deadline, stopped, NULL, &err)) != NET_OK)
        return net_failure(rc == 1 ? why : "waiting for the server's answer", nr, err);
    int check = stream_viewer_check_welcome(welcome, sizeof welcome, o->token, o->token_bytes, nonce_s, nonce_v,
                                            why);
    stream_wipe(nonce_s, sizeof nonce_s);
    if (check != 0) {
        if (rc == 1 && strstr(why, "requires a token"))
            snprintf(why, sizeof why, "the server requires a token: give --token FILE");
        cli_error("%s:%d: %s", o->host, o->port, why);
        return CLI_FAIL;
    }
    if (!o->quiet)
        fprintf(stderr, "glcv: connected to %s port %d%s\n", o->host, o->port,
                o->token ? " (both sides proved they hold the token)" : " (no token)");
    return CLI_OK;
}

static void send_request(view_run *v, stream_request_type type)
{
    uint8_t r[STREAM_REQUEST_BYTES];
    stream_request_write(r, type);
    /* A server that has gone cannot take it; the viewer learns that from its next read. */
    net_write_exact(v->fd, r, sizeof r, net_now() + 2.0, NULL, NULL);
}

/* ---- packets ----------------------------------------------------------------------------------- */

static int record(view_run *v, const glcv_image *picture, uint64_t frame)
{
    char name[64];
    snprintf(name, sizeof name, "frame_%06" PRIu64, frame);
    char *path = cli_path_join(v->o->record, name, ".png");
    if (!path)
        return cli_out_of_memory();
    glcv_status st = glcv_image_save_png_level(path, picture, GLCV_PNG_LEVEL_FAST, &v->logger);
    int rc = st == GLCV_OK ? CLI_OK : cli_lib_error(path, st);
    free(path);
    return rc;
}

/* The outputs, once the handshake succeeded. */
static int open_outputs(view_run *v)
{
    const stream_view_options *o = v->o;
    int rc = o->record ? cli_make_dir(o->record) : CLI_OK;
    if (rc == CLI_OK && o->trace && !(v->trace = fopen(o->trace, "w"))) {
        cli_error("%s: cannot write: %s", o->trace, strerror(errno));
        rc = CLI_FAIL;
    }
    return rc;
}

/* The error of a read of the stream that did not come to NET_OK; `what` says where in the stream. */
static int read_failure(view_run *v, net_result nr, int err, const char *what)
{
    if (nr == NET_STOPPED)
        return CLI_INTERRUPTED;
    if (nr == NET_TIMEOUT) {
        cli_error("the server sent nothing for %g s %s (--read-timeout)", v->o->read_timeout_s, what);
        return CLI_FAIL;
    }
    return net_failure("reading a packet", nr, err);
}

/* A decoded picture: counted, recorded, shown, traced. */
static int reconstructed(view_run *v, const glcv_delta_header *h)
{
    glcv_image picture;
    uint64_t frame = 0;
    glcv_status st = glcv_delta_decoder_picture(v->decoder, &picture, &frame);
    if (st != GLCV_OK)
        return cli_lib_error("the decoded picture", st);
    v->frames++;
    v->raw += (uint64_t)picture.width * (uint64_t)picture.height * (uint64_t)glcv_pixel_format_size(picture.format);
    v->keyframes += h->key != 0;
    v->snapshots += h->snapshot != 0;
    if (v->trace)
        fprintf(v->trace, "%" PRIu64 " %.6f\n", frame, net_now());
    if (v->display)
        stream_display_publish(v->display, &picture);
    return v->o->record ? record(v, &picture, frame) : CLI_OK;
}

/* Reads and applies one packet, or END. */
static int next_packet(view_run *v)
{
    int err = 0;
    size_t got = 0;
    uint8_t head[GLCV_DELTA_HEADER_BYTES];
    char where[160];
    net_result nr = net_read_idle(v->fd, head, sizeof head, v->o->read_timeout_s, stopped, &got, &err);
    if (nr == NET_TIMEOUT) {
        if (got > 0)
            snprintf(where, sizeof where, "in the middle of a packet header, %zu of %d bytes received", got,
                     GLCV_DELTA_HEADER_BYTES);
        else if (v->received == 0)
            snprintf(where, sizeof where, "after the handshake, before any packet");
        else
            snprintf(where, sizeof where, "after frame %" PRIu64, v->last_frame);
        return read_failure(v, nr, err, where);
    }
    if (nr == NET_STOPPED)
        return CLI_INTERRUPTED;
    if (nr == NET_CLOSED) {
        cli_error("the server closed the connection without ending the stream (after %" PRIu64 " frames)",
                  v->frames);
        return CLI_FAIL;
    }
    if (nr == NET_TRUNCATED) {
        cli_error("the connection was closed in the middle of a packet header (%zu of %d bytes)", got,
                  GLCV_DELTA_HEADER_BYTES);
        return CLI_FAIL;
    }
    if (nr != NET_OK)
        return net_failure("reading a packet", nr, err);
    char why[STREAM_WHY_BYTES];
    if (stream_is_end(head, sizeof head)) {
        uint64_t frames = 0;
        if (stream_end_parse(head, sizeof head, &v->end_reason, &frames, why) != 0) {
            cli_error("protocol violation: %s", why);
            return CLI_FAIL;
        }
        v->ended = 1;
        if (!v->o->quiet)
            fprintf(stderr, "glcv: end of the stream: %s (it encoded %" PRIu64 " frames)\n",
                    stream_end_reason_string(v->end_reason), frames);
        return CLI_OK;
    }
    if (memcmp(head, STREAM_PACKET_MAGIC, STREAM_MAGIC_BYTES) != 0) {
        cli_error("protocol violation: the server sent something that is neither a packet nor the end of the "
                  "stream (after %" PRIu64 " frames)",
                  v->frames);
        return CLI_FAIL;
    }
    glcv_delta_header h;
    v->last_message[0] = '\0';
    glcv_status st = glcv_delta_header_parse(head, sizeof head, &h, &v->logger);
    if (st != GLCV_OK) {
        cli_error("a malformed packet header (after %" PRIu64 " frames): %s", v->frames,
                  v->last_message[0] ? v->last_message : glcv_status_string(st));
        return CLI_FAIL;
    }
    size_t picture = (size_t)h.width * (size_t)h.height * (size_t)glcv_pixel_format_size(h.format);
    if (picture > v->o->max_bytes) {
        cli_error("frame %" PRIu64 ": a picture of %dx%d (%zu bytes) is above this viewer's limit of %zu bytes "
                  "(--max-bytes)",
                  h.frame, h.width, h.height, picture, v->o->max_bytes);
        return CLI_FAIL;
    }
    /* No valid packet's payload is larger than its picture (docs/STREAM.md: a delta's records are
     * smaller than the frame, a compressed payload smaller than the uncompressed one). */
    if (h.payload_bytes > picture) {
        cli_error("frame %" PRIu64 ": a payload of %" PRIu32 " bytes is more than a %dx%d picture can need", h.frame,
                  h.payload_bytes, h.width, h.height);
        return CLI_FAIL;
    }
    size_t bytes = GLCV_DELTA_HEADER_BYTES + (size_t)h.payload_bytes;
    if (bytes > v->capacity) {
        uint8_t *p = realloc(v->packet, bytes);
        if (!p)
            return cli_out_of_memory();
        v->packet = p;
        v->capacity = bytes;
    }
    memcpy(v->packet, head, sizeof head);
    nr = net_read_idle(v->fd, v->packet + sizeof head, h.payload_bytes, v->o->read_timeout_s, stopped, &got, &err);
    if (nr == NET_TIMEOUT) {
        snprintf(where, sizeof where, "in the middle of frame %" PRIu64 ", %zu of %" PRIu32 " payload bytes received",
                 h.frame, got, h.payload_bytes);
        return read_failure(v, nr, err, where);
    }
    if (nr == NET_STOPPED)
        return CLI_INTERRUPTED;
    if (nr == NET_CLOSED || nr == NET_TRUNCATED) {
        cli_error("the connection was closed in the middle of frame %" PRIu64 " (%zu of %" PRIu32
                  " payload bytes received)",
                  h.frame, got, h.payload_bytes);
        return CLI_FAIL;
    }
    if (nr != NET_OK)
        return net_failure("reading a packet", nr, err);
    v->received += bytes;
    v->last_frame = h.frame;
    if (v->waiting_for_key && !h.key) {
        v->skipped++;
        return CLI_OK;
    }
    v->last_message[0] = '\0';
    st = glcv_delta_decode(v->decoder, v->packet, bytes);
    if (st == GLCV_OK) {
        v->waiting_for_key = 0;
        return reconstructed(v, &h);
    }
    const char *detail = v->last_message[0] ? v->last_message : glcv_status_string(st);
    if (st == GLCV_ERROR_STATE) {
        v->resyncs++;
        v->skipped++;
        v->waiting_for_key = 1;
        if (!v->o->quiet)
            fprintf(stderr, "glcv: frame %" PRIu64 " cannot be applied (%s): asked for a keyframe\n", h.frame, detail);
        send_request(v, STREAM_REQUEST_KEYFRAME);
        return CLI_OK;
    }
    if (st == GLCV_ERROR_UNSUPPORTED)
        cli_error("frame %" PRIu64 " is compressed with Zstandard, and this glcv was built without it", h.frame);
    else if (st == GLCV_ERROR_CORRUPT_DATA)
        cli_error("frame %" PRIu64 ": a corrupt packet: %s", h.frame, detail);
    else
        cli_error("frame %" PRIu64 ": %s", h.frame, detail);
    return CLI_FAIL;
}

/* ---- the run ------------------------------------------------------------------------------------ */

static int view_body(void *user, stream_display *display)
{
    view_run *v = user;
    v->display = display;
    g_display = display;
    int rc = handshake(v);
    if (rc == CLI_OK)
        rc = open_outputs(v);
    while (rc == CLI_OK && !v->ended) {
        if (v->o->max_frames > 0 && v->frames >= (uint64_t)v->o->max_frames)
            break;
        if (stream_display_closed(display))
            break;
        rc = next_packet(v);
    }
    if (rc == CLI_INTERRUPTED && stream_display_closed(display))
        rc = CLI_OK; /* the window was closed: the viewer's own end */
    if (!v->ended && (rc == CLI_OK || rc == CLI_INTERRUPTED) && v->fd >= 0)
        send_request(v, STREAM_REQUEST_BYE);
    if (rc == CLI_OK && v->ended && v->end_reason == STREAM_END_FAILED) {
        cli_error("the server failed: the stream ended early");
        rc = CLI_FAIL;
    }
    return rc;
}

static void print_summary(const view_run *v)
{
    printf("frames %" PRIu64 ", bytes received %" PRIu64 ", raw bytes %" PRIu64 ", ratio %.2f, keyframes %" PRIu64
           " (snapshots %" PRIu64 "), resyncs %" PRIu64 ", skipped %" PRIu64 "\n",
           v->frames, v->received, v->raw, v->received ? (double)v->raw / (double)v->received : 0.0, v->keyframes,
           v->snapshots, v->resyncs, v->skipped);
}

int stream_view(const stream_view_options *o)
{
    view_run v = {.o = o, .fd = -1};
    v.logger = (glcv_logger){keep_message, &v, o->verbose ? GLCV_LOG_DEBUG : GLCV_LOG_WARN};
    int rc = CLI_OK;
    glcv_delta_decoder_params dp = GLCV_DELTA_DECODER_PARAMS(.max_bytes = o->max_bytes, .logger = v.logger);
    glcv_status st = glcv_delta_decoder_create(&dp, &v.decoder);
    if (st != GLCV_OK)
        rc = cli_lib_error("cannot create the decoder", st);
    char why[NET_TEXT_BYTES];
    if (rc == CLI_OK && net_connect(o->host, o->port, o->timeout_s, &v.fd, why) != 0) {
        cli_error("%s", why);
        rc = CLI_FAIL;
    }
    cli_interrupt_catch();
    if (rc == CLI_OK) {
        char title[300];
        snprintf(title, sizeof title, "glcv stream view %s:%d", o->host, o->port);
        rc = o->window ? stream_display_run(title, o->screenshot, view_body, &v) : view_body(&v, NULL);
    }
    int interrupted = cli_interrupted();
    cli_interrupt_release();
    if (v.fd >= 0)
        close(v.fd);
    if (v.frames > 0 || rc == CLI_OK || rc == CLI_INTERRUPTED)
        print_summary(&v);
    if (v.trace && fclose(v.trace) != 0 && rc == CLI_OK) {
        cli_error("%s: cannot write: %s", o->trace, strerror(errno));
        rc = CLI_FAIL;
    }
    glcv_delta_decoder_destroy(&v.decoder);
    free(v.packet);
    if ((rc == CLI_OK || rc == CLI_INTERRUPTED) && interrupted) {
        cli_warning("interrupted after %" PRIu64 " frames", v.frames);
        rc = CLI_INTERRUPTED;
    }
    return rc;
}
