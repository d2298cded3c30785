/* The configuration file of 'glcv serve' (tools/service/config.c): a file with every key, a minimal
 * file against every default, broken files against their exact error line, and the rule that
 * tells whether a reloaded camera can go on running. Files are written to a temporary folder. */
#define _POSIX_C_SOURCE 200809L

#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { ERROR_BYTES = 512, PATH_BYTES = 256 };

static char g_dir[PATH_BYTES];
static char g_config[PATH_BYTES];     /* the file each case is written to */
static char g_token[PATH_BYTES];      /* a token file: "tok-123\r\nsecond line\n" */
static char g_empty[PATH_BYTES];      /* an empty token file */
static char g_missing[PATH_BYTES];    /* a token file that does not exist */
static int g_failures;

static void check(int ok, const char *what, const char *text)
{
    if (ok)
        return;
    g_failures++;
    fprintf(stderr, "FAIL: %s\n", what);
    if (text)
        fprintf(stderr, "---- the file ----\n%s\n------------------\n", text);
}

static int write_text(const char *path, const char *text, size_t length)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = fwrite(text, 1, length, f);
    return fclose(f) == 0 && n == length ? 0 : -1;
}

/* Writes `text` (every "@TOKEN@" replaced by `token_path`) to g_config and loads it. */
static int load(const char *text, const char *token_path, svc_config *c, char *error)
{
    char buf[8192];
    const char *at = token_path ? strstr(text, "@TOKEN@") : NULL;
    if (at)
        snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - text), text, token_path, at + 7);
    else
        snprintf(buf, sizeof buf, "%s", text);
    if (write_text(g_config, buf, strlen(buf)) != 0) {
        fprintf(stderr, "cannot write %s\n", g_config);
        exit(1);
    }
    return svc_config_load(g_config, c, error, ERROR_BYTES);
}

/* The 1-based line of the first line of `text` that contains `needle`. */
static int line_with(const char *text, const char *needle)
{
    const char *at = strstr(text, needle);
    int line = 1;
    for (const char *p = text; at && p < at; p++)
        line += *p == '\n';
    return at ? line : -1;
}

static int same(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static void check_str(const char *got, const char *want, const char *what)
{
    if (!same(got, want))
        fprintf(stderr, "%s: got %s%s%s, expected %s%s%s\n", what, got ? "\"" : "", got ? got : "NULL",
                got ? "\"" : "", want ? "\"" : "", want ? want : "NULL", want ? "\"" : "");
    check(same(got, want), what, NULL);
}

static void check_int(long long got, long long want, const char *what)
{
    if (got != want)
        fprintf(stderr, "%s: got %lld, expected %lld\n", what, got, want);
    check(got == want, what, NULL);
}

static void check_real(double got, double want, const char *what)
{
    if (!(fabs(got - want) < 1e-12))
        fprintf(stderr, "%s: got %.17g, expected %.17g\n", what, got, want);
    check(fabs(got - want) < 1e-12, what, NULL);
}

#define CHECK_STR(got, want) check_str((got), (want), #got)
#define CHECK_INT(got, want) check_int((got), (want), #got)
#define CHECK_REAL(got, want) check_real((got), (want), #got)

static void check_motion(const svc_motion *m, double start, double end, int start_frames, int end_frames,
                         const char *what)
{
    int ok = fabs(m->start - start) < 1e-12 && fabs(m->end - end) < 1e-12 && m->start_frames == start_frames &&
             m->end_frames == end_frames;
    if (!ok)
        fprintf(stderr, "%s: motion {%g, %g, %d, %d}, expected {%g, %g, %d, %d}\n", what, m->start, m->end,
                m->start_frames, m->end_frames, start, end, start_frames, end_frames);
    check(ok, what, NULL);
}

/* ---- a file with every key ----------------------------------------------------------------------- */

static const char FULL[] = "# every key\n"
                           "http:\n"
                           "  listen: \"[::1]:9090\"\n"
                           "  token: s3cret\n"
                           "mqtt:\n"
                           "  url: mqtt://broker:1884\n"
                           "  prefix: site1\n"
                           "  client_id: glcv-a\n"
                           "nats:\n"
                           "  url: nats://natsbox:4223,nats://natsbox2\n"
                           "  prefix: site1n\n"
                           "  stream: EVENTS1\n"
                           "  replicas: 3\n"
                           "queue: 500\n"
                           "spool: /var/lib/glcv/spool.jsonl\n"
                           "fraction_every: 0.5\n"
                           "gpus: 0\n"
                           "decoder: nvdec\n"
                           "masks: /tmp/masks\n"
                           "defaults:\n"
                           "  method: vsam\n"
                           "  options: [--vote, 5, 0.25, 'a b']\n"
                           "  learn: 40\n"
                           "  motion: {start: 0.01, end: 0.004, start_frames: 4, end_frames: 20}\n"
                           "  objects: {cell: 16, confirm: 5}\n"
                           "cameras:\n"
                           "  - id: gate\n"
                           "    source: rtsp://cam1/stream\n"
                           "    transport: udp\n"
                           "    zones:\n"
                           "      - name: door\n"
                           "        polygon: [[10, 10], [200, 10], [200, 120.5], [10, 120]]\n"
                           "      - name: path_2\n"
                           "        polygon:\n"
                           "          - [0, 0]\n"
                           "          - [5, 0]\n"
                           "          - [5, 5e1]\n"
                           "        motion: {start: 0.2, end_frames: 2}\n"
                           "  - source: /dev/video0\n"
                           "    id: Yard-2\n"
                           "    method: diff3\n"
                           "    objects: false\n"
                           "    options: []\n"
                           "    learn: 0\n"
                           "    motion:\n"
                           "      start: 0.5\n"
                           "      end: 0.5\n"
                           "      start_frames: 1\n"
                           "      end_frames: 10000\n"
                           "  - id: c3\n"
                           "    source: c3.mp4\n"
                           "    transport: tcp\n"
                           "    realtime: true\n"
                           "    method: eth\n"
                           "    options:\n"
                           "      - --threshold\n"
                           "      - \"12\"\n"
                           "    motion: {end: 0.001}\n";

static void check_gate(const svc_camera *c)
{
    CHECK_STR(c->id, "gate");
    CHECK_INT(c->line, line_with(FULL, "- id: gate"));
    CHECK_STR(c->source, "rtsp://cam1/stream");
    CHECK_STR(c->transport, "udp");
    CHECK_STR(c->method, "vsam");
    CHECK_INT(c->learn, 40);
    CHECK_INT(c->options_line, 0);
    CHECK_INT(c->n_options, 4);
    if (c->n_options == 4) {
        CHECK_STR(c->options[0], "--vote");
        CHECK_STR(c->options[1], "5");
        CHECK_STR(c->options[2], "0.25");
        CHECK_STR(c->options[3], "a b");
    }
    check_motion(&c->motion, 0.01, 0.004, 4, 20, "gate: the defaults' motion");
    CHECK_INT(c->objects.enabled, 1);
    CHECK_INT(c->objects.cell, 16);
    CHECK_INT(c->objects.confirm, 5);
    CHECK_INT(c->objects.lost, 10);
    CHECK_REAL(c->objects.min_area, 0.001);
    CHECK_INT(c->n_zones, 2);
    if (c->n_zones != 2)
        return;
    const svc_zone *door = &c->zones[0], *path = &c->zones[1];
    CHECK_STR(door->name, "door");
    CHECK_INT(door->line, line_with(FULL, "- name: door"));
    CHECK_INT(door->n_points, 4);
    static const svc_point want[4] = {{10, 10}, {200, 10}, {200, 120.5}, {10, 120}};
    for (int i = 0; i < 4 && door->n_points == 4; i++) {
        CHECK_REAL(door->points[i].x, want[i].x);
        CHECK_REAL(door->points[i].y, want[i].y);
    }
    check_motion(&door->motion, 0.01, 0.004, 4, 20, "door: the camera's motion");
    CHECK_STR(path->name, "path_2");
    CHECK_INT(path->line, line_with(FULL, "- name: path_2"));
    CHECK_INT(path->n_points, 3);
    if (path->n_points == 3) {
        CHECK_REAL(path->points[1].x, 5.0);
        CHECK_REAL(path->points[2].y, 50.0);
    }
    check_motion(&path->motion, 0.2, 0.004, 4, 2, "path_2: its own start and end_frames, the camera's others");
}

static void check_others(const svc_camera *yard, const svc_camera *c3)
{
    CHECK_STR(yard->id, "Yard-2");
    CHECK_INT(yard->line, line_with(FULL, "- source: /dev/video0"));
    CHECK_STR(yard->source, "/dev/video0");
    CHECK_STR(yard->transport, NULL);
    CHECK_STR(yard->method, "diff3");
    CHECK_INT(yard->n_options, 0);
    CHECK_INT(yard->options_line, line_with(FULL, "options: []"));
    CHECK_INT(yard->learn, 0);
    check_motion(&yard->motion, 0.5, 0.5, 1, 10000, "Yard-2: its own motion");
    CHECK_INT(yard->n_zones, 0);

    CHECK_STR(c3->transport, "tcp");
    CHECK_INT(c3->realtime, 1);
    CHECK_INT(yard->realtime, 0);
    CHECK_INT(yard->objects.enabled, 0);
    CHECK_INT(c3->objects.enabled, 1);
    CHECK_INT(c3->objects.cell, 16);
    CHECK_STR(c3->method, "eth");
    CHECK_INT(c3->learn, 40);
    CHECK_INT(c3->options_line, line_with(FULL, "      - --threshold") - 1);
    CHECK_INT(c3->n_options, 2);
    if (c3->n_options == 2) {
        CHECK_STR(c3->options[0], "--threshold");
        CHECK_STR(c3->options[1], "12");
    }
    check_motion(&c3->motion, 0.01, 0.001, 4, 20, "c3: its own end, the defaults' others");
}

static void test_full(void)
{
    svc_config c;
    char error[ERROR_BYTES];
    if (load(FULL, NULL, &c, error) != 0) {
        check(0, error, FULL);
        return;
    }
    CHECK_STR(c.path, g_config);
    CHECK_STR(c.http_listen, "[::1]:9090");
    CHECK_STR(c.token, "s3cret");
    CHECK_STR(c.mqtt_url, "mqtt://broker:1884");
    CHECK_STR(c.mqtt_prefix, "site1");
    CHECK_STR(c.mqtt_client_id, "glcv-a");
    CHECK_STR(c.nats_url, "nats://natsbox:4223,nats://natsbox2");
    CHECK_STR(c.nats_prefix, "site1n");
    CHECK_STR(c.nats_stream, "EVENTS1");
    CHECK_INT(c.nats_replicas, 3);
    CHECK_INT(c.queue, 500);
    CHECK_STR(c.spool, "/var/lib/glcv/spool.jsonl");
    CHECK_REAL(c.fraction_every, 0.5);
    CHECK_INT(c.gpus, 0);
    CHECK_STR(c.decoder, "nvdec");
    CHECK_STR(c.masks, "/tmp/masks");
    CHECK_INT(c.n_cameras, 3);
    if (c.n_cameras == 3) {
        check_gate(&c.cameras[0]);
        check_others(&c.cameras[1], &c.cameras[2]);
    }
    svc_config_free(&c);
    check(c.cameras == NULL && c.n_cameras == 0, "svc_config_free clears the struct", NULL);
}

/* ---- the cluster section --------------------------------------------------------------------------- */

static void test_cluster(void)
{
    static const char given[] = "nats: {}\ncluster: {instance: host-a, capacity: 4, lease: 2.5, bucket: L2}\ncameras: [{id: a, source: s}]\n";
    static const char bare[] = "nats: {}\ncluster: {}\ncameras: [{id: a, source: s}]\n";
    svc_config c;
    char error[ERROR_BYTES];
    if (load(given, NULL, &c, error) != 0) {
        check(0, error, given);
    } else {
        CHECK_INT(c.cluster, 1);
        CHECK_STR(c.cluster_bucket, "L2");
        CHECK_STR(c.cluster_instance, "host-a");
        CHECK_INT(c.cluster_capacity, 4);
        CHECK_REAL(c.cluster_lease, 2.5);
        svc_config_free(&c);
    }
    if (load(bare, NULL, &c, error) != 0) {
        check(0, error, bare);
    } else {
        CHECK_INT(c.cluster, 1);
        CHECK_STR(c.cluster_bucket, "GLCV_LEASES");
        CHECK_STR(c.cluster_instance, NULL);
        CHECK_INT(c.cluster_capacity, 0);
        CHECK_REAL(c.cluster_lease, 10.0);
        svc_config_free(&c);
    }
}

/* ---- every default ------------------------------------------------------------------------------ */

static void test_minimal(void)
{
    static const char text[] = "cameras:\n  - {id: a, source: x.mp4}\n";
    svc_config c;
    char error[ERROR_BYTES];
    if (load(text, NULL, &c, error) != 0) {
        check(0, error, text);
        return;
    }
    CHECK_STR(c.path, g_config);
    CHECK_STR(c.http_listen, "127.0.0.1:8080");
    CHECK_STR(c.token, NULL);
    CHECK_STR(c.mqtt_url, NULL);
    CHECK_STR(c.mqtt_prefix, "glcv");
    CHECK_STR(c.mqtt_client_id, NULL);
    CHECK_STR(c.nats_url, NULL);
    CHECK_STR(c.nats_prefix, "glcv");
    CHECK_STR(c.nats_stream, "GLCV_EVENTS");
    CHECK_INT(c.nats_replicas, 1);
    CHECK_INT(c.queue, 10000);
    CHECK_STR(c.spool, NULL);
    CHECK_REAL(c.fraction_every, 1.0);
    CHECK_INT(c.gpus, 1);
    CHECK_STR(c.decoder, "auto");
    CHECK_STR(c.masks, NULL);
    CHECK_INT(c.cluster, 0);
    CHECK_INT(c.n_cameras, 1);
    if (c.n_cameras == 1) {
        const svc_camera *a = &c.cameras[0];
        CHECK_STR(a->id, "a");
        CHECK_INT(a->line, 2);
        CHECK_STR(a->source, "x.mp4");
        CHECK_STR(a->transport, NULL);
        CHECK_STR(a->method, "eth");
        CHECK_INT(a->n_options, 0);
        check(a->options == NULL, "no options: NULL", NULL);
        CHECK_INT(a->options_line, 0);
        CHECK_INT(a->learn, 25);
        check_motion(&a->motion, 0.005, 0.002, 3, 15, "the default motion");
        CHECK_INT(a->n_zones, 0);
    }
    svc_config_free(&c);
    svc_config_free(&c); /* a freed (zeroed) struct again */
}

/* Empty sections: the brokers on with their default URLs; a token from token_file's first line. */
static void test_sections(void)
{
    static const char text[] = "http: {token_file: @TOKEN@}\nmqtt: {}\nnats: {prefix: p}\n"
                               "cameras: [{id: a, source: s, zones: []}]\n";
    svc_config c;
    char error[ERROR_BYTES];
    if (load(text, g_token, &c, error) != 0) {
        check(0, error, text);
        return;
    }
    CHECK_STR(c.token, "tok-123");
    CHECK_STR(c.mqtt_url, "mqtt://127.0.0.1:1883");
    CHECK_STR(c.mqtt_prefix, "glcv");
    CHECK_STR(c.nats_url, "nats://127.0.0.1:4222");
    CHECK_STR(c.nats_prefix, "p");
    CHECK_STR(c.nats_stream, "GLCV_EVENTS");
    CHECK_INT(c.cameras[0].n_zones, 0);
    svc_config_free(&c);
}

/* ---- broken files ------------------------------------------------------------------------------- */

typedef struct broken {
    const char *text;
    int line;          /* 0: the error names no line ("PATH: ...") */
    const char *error; /* a part of the message */
} broken;

#define CAM "cameras: [{id: a, source: s}]\n"
#define CAM0 "cameras:\n  - id: a\n    source: s\n"

static const broken BROKEN[] = {
    /* unknown keys at each level */
    {"lisen: x\n" CAM, 1, ": lisen: unknown key: expected http, mqtt, nats, queue, spool,"},
    {"http:\n  lisen: 1:2\n" CAM, 2, ": http.lisen: unknown key: expected listen, token or token_file"},
    {"mqtt:\n  url: mqtt://a\n  qos: 1\n" CAM, 3, ": mqtt.qos: unknown key"},
    {"nats:\n  subject: x\n" CAM, 2, ": nats.subject: unknown key"},
    {"nats:\n  replicas: 6\n" CAM, 2, ": nats.replicas: '6' is out of range"},
    {"nats:\n  url: 'nats://a:4222,,nats://b'\n" CAM, 2, ": nats.url: nats url 'nats://a:4222,,nats://b': an empty entry"},
    {"nats:\n  url: 'nats://a:4222,mqtt://b'\n" CAM, 2, ": nats.url: nats url 'mqtt://b': expected nats://HOST[:PORT]"},
    {"nats:\n  replicas: 0\n" CAM, 2, ": nats.replicas: '0' is out of range"},
    {"defaults:\n  transport: tcp\n" CAM, 2, ": defaults.transport: unknown key"},
    {CAM0 "    sorce: t\n", 4, ": cameras[0].sorce: unknown key"},
    {CAM0 "    zones:\n      - name: z\n        polygon: [[0, 0], [1, 0], [1, 1]]\n        area: 3\n", 7,
     ": cameras[0].zones[0].area: unknown key"},
    {CAM0 "    motion: {start: 0.5, stop: 0.1}\n", 4, ": cameras[0].motion.stop: unknown key"},
    {"defaults:\n  motion:\n    begin: 0.1\n" CAM, 3, ": defaults.motion.begin: unknown key"},
    /* types */
    {"- a\n- b\n", 1, ": the file: a mapping is expected, not a sequence"},
    {"http: [1, 2]\n" CAM, 1, ": http: a mapping is expected, not a sequence"},
    {"mqtt:\n" CAM, 1, ": mqtt: a mapping is expected, not an empty value"},
    {"cameras: {id: a}\n", 1, ": cameras: a sequence of cameras is expected, not a mapping"},
    {"cameras:\n  - gate\n", 2, ": cameras[0]: a mapping is expected, not 'gate'"},
    {CAM0 "    source: [a]\n", 4, ": cameras[0].source: repeated key (the first is on line 3)"},
    {"cameras:\n  - id: a\n    source: [a]\n", 3, ": cameras[0].source: a text is expected, not a sequence"},
    {CAM0 "    options: --vote\n", 4, ": cameras[0].options: a sequence ([] for none) is expected, not '--vote'"},
    {CAM0 "    options: [--vote, {a: 1}]\n", 4, ": cameras[0].options[1]: an option is expected, not a mapping"},
    {CAM0 "    zones: {name: z}\n", 4, ": cameras[0].zones: a sequence of zones is expected"},
    {"queue: [1]\n" CAM, 1, ": queue: an integer is expected, not a sequence"},
    {"spool: ''\n" CAM, 1, ": spool: an empty text"},
    {CAM0 "    learn: ~\n", 4, ": cameras[0].learn: an integer is expected, not an empty value"},
    {"cameras:\n  - id: a\n    source: \"a\\0b\"\n", 3, ": cameras[0].source: a NUL character in the text"},
    {"? [a]\n: 1\n" CAM, 1, ": the file: a key is a name, not a sequence"},
    /* numbers and ranges */
    {"cluster: {lease: 5}\n" CAM, 1, ": cluster: needs a nats section"},
    {"nats: {}\ncluster: {instance: 'a b'}\n" CAM, 2, ": cluster.instance: 'a b' is not a name"},
    {"nats: {}\ncluster:\n  capacity: -1\n" CAM, 3, ": cluster.capacity: '-1' is out of range"},
    {"nats: {}\ncluster:\n  lease: 0.5\n" CAM, 3, ": cluster.lease: '0.5' is out of range"},
    {"nats: {}\ncluster:\n  leases: 5\n" CAM, 3, ": cluster.leases: unknown key"},
    {"queue: 0\n" CAM, 1, ": queue: '0' is out of range: it must be from 1 to 10000000"},
    {"queue: 10000001\n" CAM, 1, ": queue: '10000001' is out of range"},
    {"queue: 99999999999999999999999\n" CAM, 1, ": queue: '99999999999999999999999' is out of range"},
    {"queue: 12abc\n" CAM, 1, ": queue: '12abc' is not an integer"},
    {"queue: 0x10\n" CAM, 1, ": queue: '0x10' is not an integer"},
    {"queue: 1.5\n" CAM, 1, ": queue: '1.5' is not an integer"},
    {"gpus: 65\n" CAM, 1, ": gpus: '65' is out of range: it must be from 0 to 64"},
    {"gpus: -1\n" CAM, 1, ": gpus: '-1' is out of range"},
    {CAM0 "    learn: 10001\n", 4, ": cameras[0].learn: '10001' is out of range: it must be from 0 to 10000"},
    {"fraction_every: 3601\n" CAM, 1,
     ": fraction_every: '3601' is out of range: it must be at least 0 and at most 3600"},
    {"fraction_every: -0.5\n" CAM, 1, ": fraction_every: '-0.5' is out of range"},
    {"fraction_every: .nan\n" CAM, 1, ": fraction_every: '.nan' is not a finite number"},
    {"fraction_every: NaN\n" CAM, 1, ": fraction_every: 'NaN' is not a finite number"},
    {"fraction_every: inf\n" CAM, 1, ": fraction_every: 'inf' is not a finite number"},
    {"fraction_every: 1e999\n" CAM, 1, ": fraction_every: '1e999' is not a finite number"},
    {"fraction_every: 1.5s\n" CAM, 1, ": fraction_every: '1.5s' is not a number"},
    {"fraction_every: 0x1p3\n" CAM, 1, ": fraction_every: '0x1p3' is not a number"},
    /* choices */
    {"decoder: gpu\n" CAM, 1, ": decoder: 'gpu' is not auto, cpu or nvdec"},
    {CAM0 "    method: foo\n", 4, ": cameras[0].method: 'foo' is not eth, vsam, diff2 or diff3"},
    {"defaults:\n  method: ETH\n" CAM, 2, ": defaults.method: 'ETH' is not eth, vsam, diff2 or diff3"},
    {CAM0 "    transport: http\n", 4, ": cameras[0].transport: 'http' is not tcp or udp"},
    {CAM0 "    realtime: yes\n", 4, ": cameras[0].realtime: 'yes' is not true or false"},
    {CAM0 "    objects: maybe\n", 4, ": cameras[0].objects: 'maybe' is not true or false"},
    {CAM0 "    objects: {cell: 1}\n", 4, ": cameras[0].objects.cell: "},
    {CAM0 "    objects: {min_area: 0}\n", 4, ": cameras[0].objects.min_area: "},
    {CAM0 "    objects: {confirm: 0}\n", 4, ": cameras[0].objects.confirm: "},
    {CAM0 "    objects: {lost: -1}\n", 4, ": cameras[0].objects.lost: "},
    {CAM0 "    objects: {size: 3}\n", 4, ": cameras[0].objects.size: unknown key"},
    /* http, mqtt, nats */
    {"http: {listen: localhost}\n" CAM, 1, ": http.listen: 'localhost': it has no port"},
    {"http: {listen: ':80'}\n" CAM, 1, ": http.listen: ':80': it has no host"},
    {"http:\n  listen: h:65536\n" CAM, 2, ": http.listen: 'h:65536': the port must be a number from 0 to 65535"},
    {"http:\n  listen: h:8x\n" CAM, 2, "the port must be a number from 0 to 65535"},
    {"http:\n  listen: '::1:80'\n" CAM, 2, "an IPv6 address is written in brackets"},
    {"http:\n  listen: '[::1]80'\n" CAM, 2, "it is not [ADDRESS]:PORT"},
    {"http:\n  token: a\n  token_file: @TOKEN@\n" CAM, 3, ": http: token and token_file are both given"},
    {"http:\n  token_file: @TOKEN@\n  token: a\n" CAM, 3, ": http: token and token_file are both given"},
    {"http:\n  token_file: @MISSING@\n" CAM, 2, ": http.token_file: cannot read '@MISSING@': No such file"},
    {"http:\n  token_file: @EMPTY@\n" CAM, 2, ": http.token_file: '@EMPTY@' is empty"},
    {"http:\n  token:\n" CAM, 2, ": http.token: a text is expected, not an empty value"},
    {"mqtt:\n  url: tcp://a:1883\n" CAM, 2, ": mqtt.url: 'tcp://a:1883' is not a mqtt://HOST[:PORT] URL"},
    {"mqtt: {url: 'mqtt://'}\n" CAM, 1, ": mqtt.url: 'mqtt://' is not a mqtt://"},
    {"nats:\n  url: mqtt://a\n" CAM, 2, ": nats.url: 'mqtt://a' is not a nats://HOST[:PORT] URL"},
    /* cameras: presence, ids, duplicates */
    {"queue: 5\n", 1, ": cameras: missing: at least one camera is needed"},
    {"", 1, ": cameras: missing"},
    {"# nothing but a comment\n", 1, ": cameras: missing"},
    {"queue: 5\ncameras: []\n", 2, ": cameras: empty: at least one camera is needed"},
    {"cameras:\n  - id: a\n    method: eth\n", 2, ": cameras[0]: no source: a camera needs an id and a source"},
    {"cameras:\n  - id: a\n    source: s\n  - method: eth\n    source: t\n", 4, ": cameras[1]: no id"},
    {"cameras:\n  - {}\n", 2, ": cameras[0]: no id"},
    {"cameras:\n  - id: ga te\n    source: s\n", 2,
     ": cameras[0].id: 'ga te' is not a name of 1 to 64 letters, digits, '_' or '-'"},
    {"cameras:\n  - id: a.b\n    source: s\n", 2, ": cameras[0].id: 'a.b' is not a name"},
    {"cameras:\n  - id: ''\n    source: s\n", 2, ": cameras[0].id: an empty text"},
    {"cameras:\n  - id: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n    source: s\n", 2,
     "is not a name of 1 to 64"},
    {"cameras:\n  - id: gate\n    source: s\n  - id: yard\n    source: t\n  - source: u\n    id: gate\n", 7,
     ": cameras[2].id: 'gate' is used by cameras[0] (line 2)"},
    {"cameras: [{id: b, source: s}, {id: a, source: s},\n  {id: a, source: s}, {id: b, source: s}]\n", 2,
     ": cameras[2].id: 'a' is used by cameras[1] (line 1)"},
    {"cameras:\n- {id: b, source: s}\n- {id: a, source: s}\n- {id: b, source: s}\n- {id: a, source: s}\n", 4,
     ": cameras[2].id: 'b' is used by cameras[0] (line 2)"},
    {"queue: 1\nqueue: 2\n" CAM, 2, ": queue: repeated key (the first is on line 1)"},
    {"cameras:\n  - id: a\n    source: s\n    id: b\n", 4, ": cameras[0].id: repeated key (the first is on line 2)"},
    /* zones and polygons */
    {CAM0 "    zones:\n      - {name: z, polygon: [[0, 0], [1, 1]]}\n", 5,
     ": cameras[0].zones[0].polygon: 2 points: a polygon needs at least 3"},
    {CAM0 "    zones:\n      - name: z\n        polygon: [[0, 0], [1, -1], [1, 1]]\n", 6,
     ": cameras[0].zones[0].polygon[1][1]: '-1' is out of range: it must be at least 0"},
    {CAM0 "    zones:\n      - name: z\n        polygon: [[0, 0], [a, 1], [1, 1]]\n", 6,
     ": cameras[0].zones[0].polygon[1][0]: 'a' is not a number"},
    {CAM0 "    zones:\n      - name: z\n        polygon:\n"
          "          - [0, 0]\n          - [1, 1, 1]\n          - [2, 0]\n",
     8, ": cameras[0].zones[0].polygon[1]: 3 numbers: a point is [x, y]"},
    {CAM0 "    zones:\n      - name: z\n        polygon:\n          - [0, 0]\n          - [1, 1]\n", 6,
     ": cameras[0].zones[0].polygon: 2 points: a polygon needs at least 3"},
    {CAM0 "    zones:\n      - name: z\n        polygon: [[0, 0], 5, [1, 1]]\n", 6,
     ": cameras[0].zones[0].polygon[1]: a point [x, y] is expected, not '5'"},
    {CAM0 "    zones:\n      - name: z\n        polygon: [[0, 0], [.inf, 1], [1, 1]]\n", 6, "is not a finite number"},
    {CAM0 "    zones:\n      - name: z\n", 5, ": cameras[0].zones[0]: no polygon: a zone needs a name and a polygon"},
    {CAM0 "    zones:\n      - polygon: [[0, 0], [1, 0], [1, 1]]\n", 5, ": cameras[0].zones[0]: no name"},
    {CAM0 "    zones:\n      - {name: z, polygon: [[0, 0], [1, 0], [1, 1]]}\n"
          "      - {name: y, polygon: [[0, 0], [1, 0], [1, 1]]}\n"
          "      - {name: z, polygon: [[0, 0], [1, 0], [1, 1]]}\n",
     7, ": cameras[0].zones[2].name: 'z' is used by cameras[0].zones[0] (line 5)"},
    /* motion */
    {CAM0 "    motion: {start: 0.1, end: 0.2}\n", 4, ": cameras[0].motion: end 0.2 is above start 0.1"},
    {"defaults:\n  motion:\n    start: 0.001\n" CAM, 2, ": defaults.motion: end 0.002 is above start 0.001"},
    {CAM0 "    zones:\n      - name: z\n        polygon: [[0, 0], [1, 0], [1, 1]]\n        motion: {end: 0.9}\n", 7,
     ": cameras[0].zones[0].motion: end 0.9 is above start 0.005"},
    {CAM0 "    motion: {start: 0}\n", 4,
     ": cameras[0].motion.start: '0' is out of range: it must be above 0 and at most 1"},
    {CAM0 "    motion: {start: 1.5}\n", 4, ": cameras[0].motion.start: '1.5' is out of range"},
    {CAM0 "    motion:\n      start_frames: 0\n", 5,
     ": cameras[0].motion.start_frames: '0' is out of range: it must be from 1 to 10000"},
    {CAM0 "    motion:\n      end_frames: 10001\n", 5, ": cameras[0].motion.end_frames: '10001' is out of range"},
    {CAM0 "    motion: fast\n", 4, ": cameras[0].motion: a mapping is expected, not 'fast'"},
    /* YAML itself */
    {"cameras:\n  - &c {id: a, source: s}\n  - *c\n", 3, ": *c: aliases are not accepted"},
    {"defaults: &d {learn: 3}\nx: *d\n" CAM, 2, ": *d: aliases are not accepted"},
    {CAM "---\n" CAM, 2, ": a second YAML document: the file holds one"},
    {CAM "...\n---\n" CAM, 3, ": a second YAML document"},
    {CAM "...\n" CAM, 3, ": YAML: did not find expected <document start>"},
    {"cameras:\n\t- id: a\n", 2, ": YAML: found character that cannot start any token while scanning"},
    {"cameras: [{id: a, source: s}\n", 1, ": YAML: did not find expected ',' or ']' while parsing a flow sequence"},
    {"cameras: [{id: a, source: s}\nqueue: 1\n", 2,
     ": YAML: did not find expected ',' or ']' while parsing a flow sequence"},
    {"cameras:\n  - id: a\n   source: s\n", 3, ": YAML: "},
    {"queue: 'abc\n" CAM, 2, ": YAML: found unexpected end of stream while scanning a quoted scalar"},
    {"spool: \"\xc3\xa9\xc3\xa9\"\ncameras: [\n", 2, ": YAML: did not find expected node content"},
    {"queue: 1\ncameras: \xff\n", 2, ": YAML: invalid leading UTF-8 octet"},
    {"x: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n", 1,
     ": nested deeper than 32 levels"},
};

/* "@TOKEN@", "@MISSING@", "@EMPTY@" in a case's text and message: the files of this run. */
static void substitute(const char *in, char *out, size_t size)
{
    static const struct {
        const char *mark;
        const char *path;
    } marks[] = {{"@TOKEN@", g_token}, {"@MISSING@", g_missing}, {"@EMPTY@", g_empty}};
    size_t used = 0;
    out[0] = '\0';
    while (*in && used + 1 < size) {
        size_t i = 0;
        for (; i < sizeof marks / sizeof marks[0]; i++)
            if (!strncmp(in, marks[i].mark, strlen(marks[i].mark)))
                break;
        if (i < sizeof marks / sizeof marks[0]) {
            used += (size_t)snprintf(out + used, size - used, "%s", marks[i].path);
            in += strlen(marks[i].mark);
        } else {
            out[used++] = *in++;
            out[used] = '\0';
        }
    }
}

static void test_broken(void)
{
    static const svc_config zero;
    for (size_t i = 0; i < sizeof BROKEN / sizeof BROKEN[0]; i++) {
        const broken *b = &BROKEN[i];
        char text[8192], part[ERROR_BYTES], want[ERROR_BYTES + PATH_BYTES], error[ERROR_BYTES] = "";
        substitute(b->text, text, sizeof text);
        substitute(b->error, part, sizeof part);
        if (b->line > 0)
            snprintf(want, sizeof want, "%s:%d: ", g_config, b->line);
        else
            snprintf(want, sizeof want, "%s: ", g_config);
        svc_config c;
        memset(&c, 0xA5, sizeof c); /* *out must be cleared even on error */
        int rc = load(text, NULL, &c, error);
        int ok = rc == -1 && !strncmp(error, want, strlen(want)) && strstr(error, part) && !strchr(error, '\n') &&
                 !memcmp(&c, &zero, sizeof c);
        if (!ok) {
            fprintf(stderr, "case %zu: expected \"%s...%s\"\n         got %d \"%s\"%s\n", i, want, part, rc, error,
                    memcmp(&c, &zero, sizeof c) ? " (and *out not cleared)" : "");
            check(0, "a broken file", text);
        }
        if (rc == 0)
            svc_config_free(&c);
    }
    printf("%zu broken files\n", sizeof BROKEN / sizeof BROKEN[0]);
}

/* Files that are not YAML texts at all: missing, too big; and a short error buffer. */
static void test_files(void)
{
    svc_config c;
    char error[ERROR_BYTES], want[ERROR_BYTES];
    char missing[PATH_BYTES + 16];
    snprintf(missing, sizeof missing, "%s/none.yaml", g_dir);
    snprintf(want, sizeof want, "%s: cannot read: No such file or directory", missing);
    int rc = svc_config_load(missing, &c, error, sizeof error);
    if (rc != -1 || strcmp(error, want))
        fprintf(stderr, "missing file: expected \"%s\", got \"%s\"\n", want, error);
    check(rc == -1 && !strcmp(error, want), "a missing file", NULL);

    size_t big = (1u << 20) + 1;
    char *text = malloc(big);
    if (!text)
        exit(1);
    memset(text, '#', big);
    snprintf(want, sizeof want, "%s: larger than 1 MiB", g_config);
    if (write_text(g_config, text, big) != 0)
        exit(1);
    free(text);
    rc = svc_config_load(g_config, &c, error, sizeof error);
    if (rc != -1 || strncmp(error, want, strlen(want)))
        fprintf(stderr, "big file: expected \"%s\", got \"%s\"\n", want, error);
    check(rc == -1 && !strncmp(error, want, strlen(want)), "a file over 1 MiB", NULL);

    char small[12];
    rc = load("queue: x\n" CAM, NULL, &c, error);
    rc += svc_config_load(g_config, &c, small, sizeof small);
    check(rc == -2 && strlen(small) == sizeof small - 1, "a short error buffer: cut, terminated", NULL);
    check(svc_config_load(g_config, &c, NULL, 0) == -1, "no error buffer", NULL);
}

/* ---- svc_camera_same_run ------------------------------------------------------------------------ */

static void test_same_run(void)
{
    char *opts_a[] = {"--vote", "5"}, *opts_b[] = {"--vote", "6"}, *opts_c[] = {"--vote"};
    svc_point square[4] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
    svc_zone zone = {"door", 3, square, 4, {0.5, 0.1, 1, 1}};
    svc_camera a = {"gate", 2, "rtsp://x", NULL, "eth", opts_a, 2, 4, 25, {0.005, 0.002, 3, 15}, NULL, 0, 0, {0}};
    svc_camera b = a;
    b.line = 9;
    b.options_line = 0;
    b.motion.start = 0.3;
    b.zones = &zone;
    b.n_zones = 1;
    check(svc_camera_same_run(&a, &b), "same run: only line, motion and zones differ", NULL);
    char source[] = "rtsp://x", method[] = "eth";
    b.source = source; /* equal text, another pointer */
    b.method = method;
    check(svc_camera_same_run(&a, &b), "same run: equal strings at other addresses", NULL);

    svc_camera d = b;
    d.source = "rtsp://y";
    check(!svc_camera_same_run(&a, &d), "not the same run: source", NULL);
    d = b;
    d.method = "vsam";
    check(!svc_camera_same_run(&a, &d), "not the same run: method", NULL);
    d = b;
    d.options = opts_b;
    check(!svc_camera_same_run(&a, &d), "not the same run: an option", NULL);
    d = b;
    d.options = opts_c;
    d.n_options = 1;
    check(!svc_camera_same_run(&a, &d), "not the same run: fewer options", NULL);
    d = b;
    d.learn = 0;
    check(!svc_camera_same_run(&a, &d), "not the same run: learn", NULL);
    d = b;
    d.realtime = 1;
    check(!svc_camera_same_run(&a, &d), "not the same run: realtime", NULL);
    d = b;
    d.transport = "tcp";
    check(!svc_camera_same_run(&a, &d) && !svc_camera_same_run(&d, &a), "not the same run: transport", NULL);
    d = b;
    d.id = "yard";
    check(!svc_camera_same_run(&a, &d), "not the same run: id", NULL);
}

/* ---- main --------------------------------------------------------------------------------------- */

static int setup(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/glcv-config-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_dir))
        return -1;
    snprintf(g_config, sizeof g_config, "%.200s/cfg.yaml", g_dir);
    snprintf(g_token, sizeof g_token, "%.200s/token", g_dir);
    snprintf(g_empty, sizeof g_empty, "%.200s/empty", g_dir);
    snprintf(g_missing, sizeof g_missing, "%.200s/no-token", g_dir);
    static const char token[] = "tok-123\r\nsecond line\n";
    return write_text(g_token, token, strlen(token)) || write_text(g_empty, "", 0) ? -1 : 0;
}

int main(void)
{
    if (setup() != 0) {
        fprintf(stderr, "cannot set up a temporary folder\n");
        return 1;
    }
    test_full();
    test_minimal();
    test_cluster();
    test_sections();
    test_broken();
    test_files();
    test_same_run();
    remove(g_config);
    remove(g_token);
    remove(g_empty);
    rmdir(g_dir);
    if (g_failures)
        fprintf(stderr, "%d failure%s\n", g_failures, g_failures == 1 ? "" : "s");
    else
        printf("all passed\n");
    return g_failures ? 1 : 0;
}
