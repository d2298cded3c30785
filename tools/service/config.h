/* The configuration file of 'glcv serve', in YAML (libyaml). The schema, with defaults:
 *
 *   http:                          # /metrics, /healthz, the live view (absent: 127.0.0.1:8080)
 *     listen: 127.0.0.1:8080       # HOST:PORT; port 0: any free port
 *     token: SECRET                # or token_file: PATH (its first line); /metrics, /cameras and
 *                                  # the live view's streams need it
 *   mqtt:                          # absent: no MQTT
 *     url: mqtt://127.0.0.1:1883
 *     prefix: glcv                 # topics PREFIX/cameras/ID/KIND
 *     client_id: NAME              # default glcv-HOSTNAME-PID
 *   nats:                          # absent: no NATS
 *     url: nats://127.0.0.1:4222
 *     prefix: glcv                 # subjects PREFIX.cameras.ID.KIND
 *     stream: GLCV_EVENTS          # the JetStream stream
 *     replicas: 1                  # 1..5: the servers that keep a copy of the stream and of the
 *                                  # cluster's buckets, when glcv creates them (3 on a 3-node cluster)
 *   cluster:                       # absent: this instance runs every camera
 *     bucket: GLCV_LEASES          # the JetStream key-value bucket of the leases (needs nats:)
 *     instance: NAME               # [A-Za-z0-9_-]{1,64}, unique; default HOSTNAME-PID
 *     capacity: 0                  # cameras this instance runs at most, 0: no limit
 *     lease: 10                    # seconds, 1..3600: a dead instance's cameras move after it
 *   queue: 10000                   # messages kept per broker while it is away, 1..10000000
 *   spool: PATH                    # undelivered messages at exit (absent: none)
 *   fraction_every: 1.0            # seconds between foreground-fraction events, 0: every frame
 *   gpus: 1                        # GPUs the cameras are spread over, 0: every GPU
 *   decoder: auto                  # auto, cpu or nvdec
 *   masks: DIR                     # also write each camera's masks to DIR/ID/ (absent: none)
 *   defaults:                      # every camera's values unless it gives its own
 *     method: eth                  # eth, vsam, diff2, diff3
 *     options: []                  # more options of 'glcv segment', e.g. [--vote, 5]
 *     learn: 25                    # frames learned before segmenting, 0: none (diff2/diff3)
 *     motion: {start: 0.005, end: 0.002, start_frames: 3, end_frames: 15}
 *     objects: false               # tracked objects (objects.h): true, false, or a mapping
 *                                  # {cell: 8, min_area: 0.001, confirm: 3, lost: 10} (turns them on)
 *   cameras:                       # at least one
 *     - id: gate                   # [A-Za-z0-9_-]{1,64}, unique
 *       source: rtsp://cam1/stream # a video file, a URL or /dev/videoN
 *       transport: tcp             # RTSP: tcp or udp (absent: FFmpeg's default)
 *       realtime: false            # true: a file is read at its frame rate, as a camera sends
 *       method, options, learn, motion, objects: as in defaults
 *       zones:                     # optional
 *         - name: door             # [A-Za-z0-9_-]{1,64}, unique in the camera
 *           polygon: [[10, 10], [200, 10], [200, 120], [10, 120]]   # pixels, at least 3 points
 *           motion: {...}          # absent: the camera's
 *
 * motion: a camera (or zone) starts moving when the foreground fraction of its pixels is at
 * least `start` for start_frames frames in a row, and stops when it is below `end` for end_frames
 * frames in a row; 0 < end <= start <= 1, start_frames and end_frames 1..10000.
 *
 * Errors name the file and line: "PATH:LINE: cameras[2].method: 'foo' is not eth, vsam, diff2
 * or diff3". Unknown keys are errors. */
#ifndef GLCV_SERVICE_CONFIG_H
#define GLCV_SERVICE_CONFIG_H

#include <stddef.h>

typedef struct svc_motion {
    double start, end;
    int start_frames, end_frames;
} svc_motion;

typedef struct svc_point {
    double x, y;
} svc_point;

typedef struct svc_zone {
    char *name;
    int line; /* of the zone's first key, from 1 */
    svc_point *points;
    int n_points;
    svc_motion motion;
} svc_zone;

/* The tracked objects' rule (objects.h). */
typedef struct svc_objects_rule {
    int enabled;
    int cell;        /* pixels, 2..64 */
    double min_area; /* share of the frame, (0, 1] */
    int confirm;     /* frames in a row before a track is an object, 1..1000 */
    int lost;        /* frames without its blob before an object ends, 0..10000 */
} svc_objects_rule;

typedef struct svc_camera {
    char *id;
    int line; /* of the camera's first key, from 1 */
    char *source;
    char *transport; /* NULL, "tcp" or "udp" */
    char *method;    /* "eth", "vsam", "diff2" or "diff3" */
    char **options;  /* options of 'glcv segment', in order: {"--vote", "5"} */
    int n_options;
    int options_line; /* the line of `options`, for errors about them (0: from defaults) */
    int learn;
    svc_motion motion;
    svc_zone *zones;
    int n_zones;
    int realtime; /* a file read at its frame rate, as a camera sends (default: as fast as it decodes) */
    svc_objects_rule objects;
} svc_camera;

typedef struct svc_config {
    char *path;
    char *http_listen; /* never NULL */
    char *token;       /* NULL: none */
    char *mqtt_url, *mqtt_prefix, *mqtt_client_id; /* mqtt_url NULL: no MQTT; prefix never NULL */
    char *nats_url, *nats_prefix, *nats_stream;    /* nats_url NULL: no NATS; the others never NULL */
    int nats_replicas;                             /* 1..5 */
    int cluster;                                   /* a cluster section was given (cluster.h) */
    char *cluster_bucket, *cluster_instance;       /* instance NULL: the default */
    int cluster_capacity;
    double cluster_lease;
    int queue;
    char *spool;
    double fraction_every;
    int gpus;
    char *decoder;
    char *masks;
    svc_camera *cameras;
    int n_cameras;
} svc_config;

/* Reads and checks the file. Returns 0, or -1 with one line in `error` ("PATH:LINE: ..."); *out
 * is then empty (svc_config_free accepts it). */
int svc_config_load(const char *path, svc_config *out, char *error, size_t size);

void svc_config_free(svc_config *c);

/* Nonzero when a camera of a reloaded file can go on as it runs: the same id, source, transport,
 * method, options and learn (its motion rules and zones may differ: they are applied as they are). */
int svc_camera_same_run(const svc_camera *a, const svc_camera *b);

#endif
