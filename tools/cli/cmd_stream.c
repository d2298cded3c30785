/* glcv stream serve | view: video over TCP as frame deltas (glcv/delta.h), with an optional
 * shared token that both sides prove they hold. The options, their checks and the help texts;
 * the server is stream_serve.c, the viewer stream_view.c, the protocol stream_proto.h and
 * docs/STREAM.md. */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "commands.h"
#include "stream_crypto.h"
#include "stream.h"
#include "stream_encode.h"
#include "stream_net.h"
#include "stream_proto.h"

#include <glcv/delta.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum {
    DEFAULT_PORT_NONE = -1,
    DEFAULT_THRESHOLD = 8,
    DEFAULT_KEYFRAME_INTERVAL = 300,
    DEFAULT_LEARN = 25,
    DEFAULT_MAX_VIEWERS = 64,
    MAX_TOKEN_FILE = 1 << 16
};

const char cmd_stream_help[] =
    "usage: glcv stream serve SOURCE --port P [options]\n"
    "       glcv stream view HOST:PORT [options]\n"
    "\n"
    "Streams video over TCP as frame deltas: the server sends a keyframe, then for each frame\n"
    "only the bytes that changed by more than a threshold, with error feedback so that a viewer's\n"
    "picture never drifts from the frames (Polito 2021); Zstandard where it pays. One server,\n"
    "any number of viewers; a viewer that joins late or falls behind gets a snapshot keyframe of\n"
    "the current picture, and nobody else notices. With --token both sides prove that they hold\n"
    "a shared secret before any video is sent (HMAC-SHA256 challenge-response both ways; the\n"
    "video itself is not encrypted). The protocol is in docs/STREAM.md.\n"
    "\n"
    "  glcv stream serve --help    the server's options\n"
    "  glcv stream view --help     the viewer's options\n"
    "\n"
    "Example, two terminals:\n"
    "  glcv stream serve vtest.avi --port 9000 --filter segment\n"
    "  glcv stream view 127.0.0.1:9000 --window\n";

static const char serve_help[] =
    "usage: glcv stream serve SOURCE --port P [options]\n"
    "\n"
    "Reads SOURCE, encodes its frames as frame deltas and sends them to every viewer that connects\n"
    "('glcv stream view'). Capture, encoding (with the GL engines on a headless OpenGL context)\n"
    "and sending run on threads of their own with bounded queues between them.\n"
    "\n"
    "SOURCE (glcv's media input, built with FFmpeg):\n"
    "  FOLDER                an existing folder: its images (.png .jpg ...), in name order\n"
    "  FILE                  an existing file: a video (any container and codec FFmpeg reads)\n"
    "  DEVICE                a camera's device, e.g. /dev/video0\n"
    "  synthetic             the built-in synthetic scene (--size, --rate; it loops)\n"
    "  or one of --video FILE, --frames DIR, --sequence PATTERN, --camera DEV, --lavfi GRAPH,\n"
    "  --synthetic, with --size WxH, --rate FPS, --camera-format F, --mode live|every-frame,\n"
    "  --loop, --no-loop (see 'glcv segment --help'). Files, folders and the synthetic scene are\n"
    "  served every frame, at their frame rate (folders and the synthetic scene: --rate, default\n"
    "  25); cameras and lavfi graphs live.\n"
    "  --max-frames N        serve N frames, then end: what is queued is sent, END follows, the\n"
    "                        connections close\n"
    "  --fast                serve files, folders and the synthetic scene as fast as they encode\n"
    "  --wait N              wait until N viewers have joined before reading SOURCE [0]\n"
    "\n"
    "network:\n"
    "  --port P              the TCP port, 0..65535 (0: any free one); the port is printed as\n"
    "                        'glcv: listening on ADDRESS port P' on stderr\n"
    "  --bind ADDR           the address to listen on: an IPv4 or IPv6 address or a host name\n"
    "                        [127.0.0.1: this machine only]; 0.0.0.0 or :: for every interface\n"
    "  --token FILE          viewers must prove they hold the secret in FILE (its bytes, trailing\n"
    "                        whitespace stripped: 16..4096 bytes), and the server proves it too\n"
    "  --max-viewers N       viewers at once, 1..4096 [64]; more are refused\n"
    "  --queue-bytes N       each viewer's send queue, in bytes [two keyframes, at least 8 MiB]:\n"
    "                        a viewer that falls that far behind has its queue dropped and gets a\n"
    "                        snapshot keyframe when it catches up\n"
    "  --handshake-timeout S seconds a connection has to complete its handshake [5]. Connections\n"
    "                        in their handshake hold no viewer's place: at most 8 from one\n"
    "                        address (a ninth drops that address's oldest) and 256 in all\n"
    "\n"
    "encoding:\n"
    "  --threshold T         a byte is sent when it changed by more than T, 0..255; 0: every\n"
    "                        change (lossless) [8]. Every byte a viewer shows is within T of the\n"
    "                        frame it stands for\n"
    "  --keyframe-interval N a keyframe every N frames; 0: only the first one (and the snapshots\n"
    "                        viewers need) [300]\n"
    "  --compress LEVEL|off  Zstandard level 1..19 for each packet where it makes it smaller, once\n"
    "                        for all viewers [1; off when built without Zstandard]\n"
    "  --filter F            what is sent [none]:\n"
    "                          none     every frame as it is (RGB)\n"
    "                          gray     luma only, (77 R + 150 G + 29 B + 128) >> 8\n"
    "                          segment  only the moving objects: the ETH segmenter learns the\n"
    "                                   background from the first --learn frames (sent whole),\n"
    "                                   then each frame is sent as the frame where its mask is 1\n"
    "                                   and the background where it is 0: the objects over the\n"
    "                                   background, which comes back (within the threshold) as\n"
    "                                   soon as an object has gone\n"
    "  --learn N             segment: frames the background is learned from [25]\n"
    "  --engine E            auto, fragment, compute or cpu, for the encoder and the segmenter\n"
    "                        [auto: the GPU in a headless OpenGL context, else the CPU]\n"
    "  --Ts --Odc --B1 --B2 --iterations --seed --adapt --paper-defaults\n"
    "                        segment: the segmenter's parameters (see 'glcv segment --help')\n"
    "\n"
    "other:\n"
    "  --trace FILE          write a line per frame: frame, capture time, time it was queued for\n"
    "                        the viewers (seconds, CLOCK_MONOTONIC), packet bytes, keyframe\n"
    "  -q, --quiet           no input and engine lines\n"
    "  -v, --verbose         print the library's debug messages\n"
    "  -h, --help            show this help\n"
    "\n"
    "stderr gets a line per viewer event: connected, authenticated (or joined), rejected and why,\n"
    "asked for a keyframe, fell behind, disconnected (and why: refused for a wrong token, say).\n"
    "A viewer's keyframe requests make a snapshot follow at most every 0.5 s, and after the first\n"
    "they are logged as one line per 10 s ('N keyframe requests in the last 10 s, M ignored'); the\n"
    "lines about one address's connections are at most 40 per 10 s, the rest summed up in one\n"
    "line. At the end stdout gets a summary: frames, bytes against the raw frames, encoding and\n"
    "compression times, viewers, peak memory. Ctrl-C ends the stream cleanly (exit status 130).\n"
    "Example: glcv stream serve frames/ --port 9000 --token secret.txt --filter gray\n";

static const char view_help[] =
    "usage: glcv stream view HOST:PORT [options]\n"
    "\n"
    "Connects to 'glcv stream serve' (HOST an IPv4 address, a host name, or an IPv6 address in\n"
    "brackets: [::1]:9000), then decodes every packet into the picture. A delta that does not\n"
    "follow the picture (the server had to drop some for this viewer) makes it ask for a keyframe\n"
    "and skip deltas until one comes. A corrupt packet, a connection closed in the middle of one,\n"
    "a server that stalls (--read-timeout), or anything else against the protocol ends it with\n"
    "exit status 1 and a message saying which.\n"
    "\n"
    "options:\n"
    "  --record DIR          write every picture as DIR/frame_NNNNNN.png, NNNNNN the frame's\n"
    "                        number in the stream (the server's count from 0 at SOURCE's first\n"
    "                        frame). DIR (and --trace's file) is made once the server has\n"
    "                        accepted the viewer: a viewer refused leaves nothing behind\n"
    "  --window              show the pictures in a window (needs GLFW and a display; Esc or Q\n"
    "                        closes it and ends the viewer)\n"
    "  --screenshot FILE     with --window: write what the window shows last as FILE (PNG)\n"
    "  --max-frames N        stop after N pictures\n"
    "  --token FILE          the shared secret (as for serve). A viewer with a token refuses a\n"
    "                        server that takes none: it could not prove it holds the token\n"
    "  --max-bytes N         the largest picture accepted, in bytes [67108864: 4096x4096 RGBA];\n"
    "                        a larger one ends the viewer before anything is allocated\n"
    "  --timeout S           seconds for connecting and the handshake [10]\n"
    "  --read-timeout S      after the handshake, the most seconds without a byte from the server\n"
    "                        (one that stalls, before a packet or in the middle of one); 0: wait\n"
    "                        for ever [10]. Give more to viewers of a server that waits for others\n"
    "                        (serve --wait). TCP keepalive finds a server whose host is gone\n"
    "  --trace FILE          write a line per picture: frame, time it was decoded (seconds,\n"
    "                        CLOCK_MONOTONIC)\n"
    "  -q, --quiet           no connection and end lines\n"
    "  -v, --verbose         print the library's debug messages\n"
    "  -h, --help            show this help\n"
    "\n"
    "At the end stdout gets one line: 'frames F, bytes received B, raw bytes R, ratio X, keyframes\n"
    "K (snapshots S), resyncs Y, skipped Z': B counts the packets (headers and payloads), R the\n"
    "pictures' bytes, X = R / B; resyncs are the keyframes asked for, skipped the deltas dropped\n"
    "while waiting. Exit status: 0 the stream ended (or --max-frames), 1 an error, 2 a usage\n"
    "error, 130 Ctrl-C.\n"
    "Example: glcv stream view 127.0.0.1:9000 --record pictures/ --max-frames 300\n";

static const cli_command serve_command = {"stream serve", NULL, serve_help, NULL};
static const cli_command view_command = {"stream view", NULL, view_help, NULL};

/* ---- the token ------------------------------------------------------------------------------- */

/* Reads the token of --token FILE: a usage error naming the file when it cannot be read or its
 * token is not 16..4096 bytes long. */
static int load_token(const char *path, uint8_t **token, size_t *bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return cli_usage("--token %s: cannot read it: %s", path, strerror(errno));
    uint8_t *data = malloc(MAX_TOKEN_FILE + 1);
    if (!data) {
        fclose(f);
        return cli_out_of_memory();
    }
    size_t n = fread(data, 1, MAX_TOKEN_FILE + 1, f);
    int bad = ferror(f);
    fclose(f);
    size_t len = n <= MAX_TOKEN_FILE ? stream_token_trim(data, n) : n;
    int rc = CLI_OK;
    if (bad)
        rc = cli_usage("--token %s: cannot read it", path);
    else if (len < STREAM_TOKEN_MIN_BYTES)
        rc = cli_usage("--token %s: the token has %zu bytes (trailing whitespace stripped); it needs at least %d",
                       path, len, STREAM_TOKEN_MIN_BYTES);
    else if (len > STREAM_TOKEN_MAX_BYTES)
        rc = cli_usage("--token %s: the token has %s%zu bytes; at most %d are allowed", path,
                       n > MAX_TOKEN_FILE ? "more than " : "", n > MAX_TOKEN_FILE ? (size_t)MAX_TOKEN_FILE : len,
                       STREAM_TOKEN_MAX_BYTES);
    if (rc != CLI_OK) {
        stream_wipe(data, n < MAX_TOKEN_FILE + 1 ? n : MAX_TOKEN_FILE + 1);
        free(data);
        return rc;
    }
    stream_wipe(data + len, n - len);
    *token = data;
    *bytes = len;
    return CLI_OK;
}

static void free_token(uint8_t **token, size_t bytes)
{
    if (*token)
        stream_wipe(*token, bytes);
    free(*token);
    *token = NULL;
}

/* ---- serve ----------------------------------------------------------------------------------- */

/* The source: a source option, or the positional SOURCE. */
static int resolve_source(stream_serve_options *o, const cli_args *args)
{
    int kind = -1;
    int rc = cli_source_kind(&o->src, &kind);
    if (rc != CLI_OK)
        return rc;
    if (kind >= 0 && args->count > 0)
        return cli_usage("give the source either as SOURCE or with a source option, not both (got '%s')",
                         args->items[0]);
    if (kind < 0 && args->count == 0)
        return cli_usage("give a SOURCE: a folder of images, a video file, a camera device, or 'synthetic'");
    if (args->count > 1)
        return cli_usage("unexpected argument '%s': give one SOURCE", args->items[1]);
    if (kind >= 0) {
        o->source_kind = kind;
        return CLI_OK;
    }
    const char *s = args->items[0];
    struct stat sb;
    int exists = stat(s, &sb) == 0;
    if (strcmp(s, "synthetic") == 0) {
        if (exists)
            return cli_usage("SOURCE 'synthetic' is both a file and the name of the synthetic scene: write "
                             "./synthetic for the file, --synthetic for the scene");
        o->source_kind = CLI_SOURCE_SYNTHETIC;
        return CLI_OK;
    }
    if (!exists)
        return cli_usage("SOURCE '%s': no such file or folder (a SOURCE is a folder of images, a video file, a "
                         "camera device, or 'synthetic')",
                         s);
    if (S_ISDIR(sb.st_mode))
        o->source_kind = CLI_SOURCE_FRAMES;
    else if (S_ISCHR(sb.st_mode))
        o->source_kind = CLI_SOURCE_CAMERA;
    else if (S_ISREG(sb.st_mode))
        o->source_kind = CLI_SOURCE_VIDEO;
    else
        return cli_usage("SOURCE '%s' is neither a folder, a file nor a device", s);
    o->location = s;
    return CLI_OK;
}

/* --compress LEVEL|off into the level (0: off). */
static int parse_compress(const char *text, int given, int *level)
{
    if (!given) {
        *level = glcv_delta_can_compress() ? 1 : 0;
        return CLI_OK;
    }
    if (strcmp(text, "off") == 0) {
        *level = 0;
        return CLI_OK;
    }
    char *end = NULL;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || v < 1 || v > 19)
        return cli_usage("--compress: '%s' is neither a level from 1 to 19 nor 'off'", text);
    if (!glcv_delta_can_compress()) {
        cli_error("--compress %s: this glcv was built without Zstandard (libzstd)", text);
        return CLI_FAIL;
    }
    *level = (int)v;
    return CLI_OK;
}

static int check_serve(stream_serve_options *o, const cli_args *args, int threshold, int keyframe_interval)
{
    int rc = resolve_source(o, args);
    if (rc != CLI_OK)
        return rc;
    if (o->port == DEFAULT_PORT_NONE)
        return cli_usage("give --port P (0: any free port)");
    o->threshold = threshold == 0 ? GLCV_DELTA_LOSSLESS : threshold;
    o->keyframe_interval = keyframe_interval == 0 ? -1 : keyframe_interval;
    if (o->filter != STREAM_FILTER_SEGMENT) {
        const void *segment_only[] = {&o->seg.ts, &o->seg.odc, &o->seg.b1, &o->seg.b2, &o->seg.iterations,
                                      &o->seg.seed, &o->seg.adapt, &o->seg.paper, &o->learn};
        const char *names[] = {"--Ts", "--Odc", "--B1", "--B2", "--iterations", "--seed", "--adapt",
                               "--paper-defaults", "--learn"};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (cli_given(args, segment_only[i]))
                return cli_usage("%s applies only to --filter segment", names[i]);
    }
    if (o->src.max_frames > 0 && o->filter == STREAM_FILTER_SEGMENT && o->learn > o->src.max_frames)
        return cli_usage("--learn %d is more than --max-frames %d", o->learn, o->src.max_frames);
    return CLI_OK;
}

static int cmd_stream_serve(int argc, char **argv)
{
    cli_start("glcv", &serve_command);
    stream_serve_options o = {.src = CLI_SOURCE_INIT, .bind = "127.0.0.1", .port = DEFAULT_PORT_NONE,
                              .learn = DEFAULT_LEARN, .max_viewers = DEFAULT_MAX_VIEWERS, .handshake_s = 5};
    int threshold = DEFAULT_THRESHOLD, keyframe_interval = DEFAULT_KEYFRAME_INTERVAL;
    const char *token_path = NULL, *compress = NULL;
    uint64_t queue_bytes = 0;
    const cli_option options[] = {
        CLI_QUIET_VERBOSE_OPTIONS(&o.quiet, &o.verbose),
        CLI_SOURCE_OPTIONS(&o.src),
        {"--synthetic", NULL, &o.src.synthetic, .kind = CLI_FLAG, .count = &o.src.given[CLI_SOURCE_SYNTHETIC],
         .max_count = 1},
        {"--port", NULL, &o.port, .kind = CLI_INT, .min = 0, .max = 65535},
        {"--bind", NULL, &o.bind, .kind = CLI_STRING, .what = "address"},
        {"--threshold", NULL, &threshold, .kind = CLI_INT, .min = 0, .max = 255},
        {"--keyframe-interval", NULL, &keyframe_interval, .kind = CLI_INT, .min = 0, .max = INT_MAX},
        {"--filter", NULL, &o.filter, .kind = CLI_CHOICE, .choices = stream_filter_names, .what = "a filter"},
        {"--learn", NULL, &o.learn, .kind = CLI_INT, .min = 1, .max = 100000},
        {"--token", NULL, &token_path, .kind = CLI_STRING, .what = "file name"},
        {"--compress", NULL, &compress, .kind = CLI_STRING, .what = "level"},
        {"--wait", NULL, &o.wait, .kind = CLI_INT, .min = 0, .max = 4096},
        {"--queue-bytes", NULL, &queue_bytes, .kind = CLI_UINT, .umax = (uint64_t)1 << 40},
        {"--max-viewers", NULL, &o.max_viewers, .kind = CLI_INT, .min = 1, .max = 4096},
        {"--handshake-timeout", NULL, &o.handshake_s, .kind = CLI_REAL, .min = 0.1, .max = 3600},
        {"--fast", NULL, &o.fast, .kind = CLI_FLAG},
        {"--trace", NULL, &o.trace, .kind = CLI_STRING, .what = "file name"},
        CLI_SEGMENTER_OPTIONS(&o.seg),
        {NULL},
    };
    cli_args args;
    int rc = cli_parse(options, argc, argv, &args);
    o.args = &args;
    if (rc == CLI_OK)
        rc = check_serve(&o, &args, threshold, keyframe_interval);
    if (rc == CLI_OK)
        rc = parse_compress(compress, compress != NULL, &o.compress);
    if (rc == CLI_OK && queue_bytes > 0 && queue_bytes < 1024)
        rc = cli_usage("--queue-bytes %llu: at least 1024", (unsigned long long)queue_bytes);
    o.queue_bytes = (size_t)queue_bytes;
    if (rc == CLI_OK && token_path)
        rc = load_token(token_path, &o.token, &o.token_bytes);
    if (rc == CLI_OK)
        rc = stream_serve(&o);
    free_token(&o.token, o.token_bytes);
    return rc;
}

/* ---- view ------------------------------------------------------------------------------------ */

static int cmd_stream_view(int argc, char **argv)
{
    cli_start("glcv", &view_command);
    stream_view_options o = {.max_bytes = 64u << 20, .timeout_s = 10, .read_timeout_s = 10};
    const char *token_path = NULL;
    uint64_t max_bytes = o.max_bytes;
    const cli_option options[] = {
        CLI_QUIET_VERBOSE_OPTIONS(&o.quiet, &o.verbose),
        {"--window", NULL, &o.window, .kind = CLI_FLAG},
        {"--screenshot", NULL, &o.screenshot, .kind = CLI_STRING, .what = "file name"},
        {"--record", NULL, &o.record, .kind = CLI_STRING, .what = "folder name"},
        {"--max-frames", NULL, &o.max_frames, .kind = CLI_INT, .min = 1, .max = 1000000000},
        {"--token", NULL, &token_path, .kind = CLI_STRING, .what = "file name"},
        {"--max-bytes", NULL, &max_bytes, .kind = CLI_UINT, .umax = 2147483647},
        {"--timeout", NULL, &o.timeout_s, .kind = CLI_REAL, .min = 0.1, .max = 3600},
        {"--read-timeout", NULL, &o.read_timeout_s, .kind = CLI_REAL, .min = 0, .max = 86400},
        {"--trace", NULL, &o.trace, .kind = CLI_STRING, .what = "file name"},
        {NULL},
    };
    cli_args args;
    int rc = cli_parse_expecting(options, argc, argv, &args, 1, 1, "HOST:PORT (e.g. 127.0.0.1:9000)");
    char why[NET_TEXT_BYTES];
    if (rc == CLI_OK && net_split_host_port(args.items[0], o.host, sizeof o.host, &o.port, why) != 0)
        rc = cli_usage("%s", why);
    if (rc == CLI_OK && max_bytes < 1)
        rc = cli_usage("--max-bytes: at least 1");
    if (rc == CLI_OK && o.screenshot && !o.window)
        rc = cli_usage("--screenshot needs --window");
    o.max_bytes = (size_t)max_bytes;
#if !GLCV_STREAM_WINDOW
    if (rc == CLI_OK && o.window) {
        cli_error("--window: this glcv was built without GLFW, so it has no windows");
        rc = CLI_FAIL;
    }
#endif
    if (rc == CLI_OK && token_path)
        rc = load_token(token_path, &o.token, &o.token_bytes);
    if (rc == CLI_OK)
        rc = stream_view(&o);
    free_token(&o.token, o.token_bytes);
    return rc;
}

/* ---- the command ----------------------------------------------------------------------------- */

int cmd_stream(int argc, char **argv)
{
    if (argc < 1)
        return cli_usage("give 'serve' or 'view'");
    if (strcmp(argv[0], "-h") == 0 || strcmp(argv[0], "--help") == 0) {
        fputs(cmd_stream_help, stdout);
        return CLI_HELP;
    }
    if (strcmp(argv[0], "serve") == 0)
        return cmd_stream_serve(argc - 1, argv + 1);
    if (strcmp(argv[0], "view") == 0)
        return cmd_stream_view(argc - 1, argv + 1);
    return cli_usage("unknown subcommand '%s': give 'serve' or 'view'", argv[0]);
}
