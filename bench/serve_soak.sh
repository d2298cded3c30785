#!/usr/bin/env bash
# glcv serve under a long run: CAMERAS RTSP cameras (gst-rtsp-server on the loopback, serving a
# synthetic H.264 scene of 2 minutes that ends and is opened again, so reconnections are part of
# the run), tracked objects on, events to a mosquitto broker on the loopback with a subscriber
# counting them, /metrics scraped at every sample, and a viewer of the live view
# (tests/live_client) that watches a camera for VISIT seconds, leaves, and comes back VISIT seconds
# later on the next camera (a new WebSocket, handshake, hub and snapshot each time; --visit 0: no
# viewer). Every INTERVAL seconds the service's resident memory
# (VmRSS), open file descriptors and threads are read from /proc with the frames it has processed
# (the sum of glcv_camera_frames_total). Prints a Markdown table: the value after warm-up (a tenth
# of the run), at the end, and the slope per hour over the run and over its last half, so that a
# leak per frame, per event or per reconnection shows as a steady slope.
#
# usage: bench/serve_soak.sh BUILD_DIR [--seconds S] [--cameras N] [--interval S] [--method M]
#   --seconds   how long the service runs [3600]
#   --cameras   cameras [8]
#   --interval  seconds between samples [10]
#   --method    the cameras' method: eth, vsam, diff2, diff3 [eth]
#   --visit     seconds a viewer stays, and between its visits; 0: no viewer [10]
set -uo pipefail
# shellcheck source=../tests/testlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tests/testlib.sh"
# shellcheck source=soak_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/soak_lib.sh"

BUILD=${1:-}
shift || true
DURATION=3600
CAMERAS=8
INTERVAL=10
METHOD=eth
VISIT=10
while [ $# -gt 0 ]; do
    case "$1" in
        --seconds) DURATION=$2; shift 2 ;;
        --cameras) CAMERAS=$2; shift 2 ;;
        --interval) INTERVAL=$2; shift 2 ;;
        --method) METHOD=$2; shift 2 ;;
        --visit) VISIT=$2; shift 2 ;;
        *) echo "serve_soak.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
GLCV=$BUILD/tools/glcv
FIXTURE=$BUILD/tests/test_video_fixture
RTSP=$BUILD/tests/rtsp_server
VIEWER=$BUILD/tests/live_client
for f in "$GLCV" "$FIXTURE" "$RTSP" "$VIEWER" /usr/sbin/mosquitto /usr/bin/mosquitto_sub; do
    if [ ! -x "$f" ]; then
        echo "serve_soak.sh: $f is missing (usage: bench/serve_soak.sh BUILD_DIR [--seconds S] [--cameras N])" >&2
        exit 2
    fi
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/serve_soak.XXXXXX")
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

# 3000 frames at 25 fps: each camera's stream ends every 2 minutes and is opened again
if ! "$FIXTURE" "$TMP/scene.mkv" "$TMP/png" 3000 160x120 h264 7 >"$TMP/fixture.out" 2>&1; then
    echo "serve_soak.sh: cannot make the scene:" >&2
    cat "$TMP/fixture.out" >&2
    exit 1
fi
rm -rf "$TMP/png"
RTSP_PORT=$(free_port 19554)
start_rtsp "$TMP/scene.mkv" "$RTSP_PORT" || exit 1
PIDS+=("$RTSP_PID")
MQTT_PORT=$(free_port 19654)
mkdir -p "$TMP/mosq"
printf 'listener %s 127.0.0.1\nallow_anonymous true\n' "$MQTT_PORT" >"$TMP/mosquitto.conf"
[ "$(id -u)" != 0 ] || echo "user root" >>"$TMP/mosquitto.conf"
/usr/sbin/mosquitto -c "$TMP/mosquitto.conf" >"$TMP/mosquitto.log" 2>&1 &
PIDS+=("$!")
sleep 0.5
mosquitto_sub -h 127.0.0.1 -p "$MQTT_PORT" -t 'glcv/#' -q 1 >"$TMP/events.jsonl" 2>"$TMP/sub.err" &
PIDS+=("$!")

{
    printf 'http: {listen: "127.0.0.1:0", token: soak-token-0123456789}\n'
    printf 'mqtt: {url: "mqtt://127.0.0.1:%s"}\nfraction_every: 1\n' "$MQTT_PORT"
    printf 'defaults:\n  method: %s\n  learn: 10\n  objects: true\ncameras:\n' "$METHOD"
    for i in $(seq 0 $((CAMERAS - 1))); do
        printf '  - id: cam%d\n    source: rtsp://127.0.0.1:%s/cam\n' "$i" "$RTSP_PORT"
        printf '    zones: [{name: left, polygon: [[0, 0], [80, 0], [80, 120], [0, 120]]}]\n'
    done
} >"$TMP/soak.yaml"
"$GLCV" serve "$TMP/soak.yaml" >"$TMP/serve.out" 2>"$TMP/serve.err" &
SERVE=$!
PIDS+=("$SERVE")
HTTP_PORT=
for k in $(seq 200); do
    HTTP_PORT=$(sed -n 's/^glcv: http on 127.0.0.1:\([0-9]*\) .*/\1/p' "$TMP/serve.err")
    [ -n "$HTTP_PORT" ] && break
    sleep 0.05
done
if [ -z "$HTTP_PORT" ]; then
    echo "serve_soak.sh: the service did not start:" >&2
    cat "$TMP/serve.err" >&2
    exit 1
fi

# frames: the frames the service has processed, from /metrics
frames() {
    curl -s --max-time 5 -H "Authorization: Bearer soak-token-0123456789" "http://127.0.0.1:$HTTP_PORT/metrics" |
        awk '/^glcv_camera_frames_total/ { n += $NF } END { printf "%d", n }'
}

start=$SECONDS
visits=0
visit_failures=0
next_visit=$SECONDS
next_sample=$SECONDS
while [ $((SECONDS - start)) -lt "$DURATION" ] && kill -0 "$SERVE" 2>/dev/null; do
    if [ "$SECONDS" -ge "$next_sample" ]; then
        s=$(sample "$SERVE")
        [ -n "$s" ] && echo "$((SECONDS - start)) $(frames) $s" >>"$TMP/samples"
        next_sample=$((SECONDS + INTERVAL))
    fi
    if [ "$VISIT" -gt 0 ] && [ "$SECONDS" -ge "$next_visit" ]; then
        # a viewer of camera (visits mod CAMERAS) for VISIT seconds: it must get pictures (a camera
        # between the end of its stream and its reopening may have none: retried on the next one)
        "$VIEWER" 127.0.0.1 "$HTTP_PORT" "cam$((visits % CAMERAS))" --token soak-token-0123456789 \
            --seconds "$VISIT" >"$TMP/visit.out" 2>&1
        vrc=$?
        visits=$((visits + 1))
        if [ "$vrc" != 0 ] && ! grep -q "fewer than 10 pictures" "$TMP/visit.out"; then
            visit_failures=$((visit_failures + 1))
            [ "$visit_failures" = 1 ] && cp "$TMP/visit.out" "$TMP/first_failed_visit.out"
        fi
        next_visit=$((SECONDS + VISIT))
    else
        sleep 1
    fi
done
alive=0
kill -0 "$SERVE" 2>/dev/null && alive=1
kill -TERM "$SERVE" 2>/dev/null
wait "$SERVE"
rc=$?
sleep 1
events=$(wc -l <"$TMP/events.jsonl")
reconnects=$(grep -c "stream ended\|cannot open" "$TMP/events.jsonl")
last=$(tail -n 1 "$TMP/samples")

echo "serve_soak: $CAMERAS RTSP cameras of 160x120 at 25 fps (method $METHOD, streams end and reopen every 2 min)," \
    "events to mosquitto, /metrics every ${INTERVAL} s; ${DURATION} s; $(date -u +%Y-%m-%d), $(nproc) processors"
echo "    service alive to the end: $alive, exit $rc after SIGTERM; $(echo "$last" | awk '{ print $2 }') frames;" \
    "$events events received ($reconnects camera-down events, $(grep -c '"type":"object"' "$TMP/events.jsonl") object events);" \
    "$visits live-view visits, $visit_failures failed"
[ -f "$TMP/first_failed_visit.out" ] && sed 's/^/    first failed visit: /' "$TMP/first_failed_visit.out" | head -n 3
grep -m 3 "error" "$TMP/serve.err" | sed 's/^/    service: /'
echo
awk '{ print $1, $3, $4, $5 }' "$TMP/samples" >"$TMP/table"
soak_table "$TMP/table" "service (at: seconds)" "$DURATION" hour 3600
[ "$alive" = 1 ] && [ "$rc" = 0 ] && [ "$visit_failures" = 0 ]
