#!/usr/bin/env bash
# glcv serve on the loopback, one section a run (ctest runs them at once):
#   check    --check on good and broken files: errors name the file and line, exit 2
#   stdout   four files, no broker: the events on stdout against the run's masks (serve_check),
#            a camera's masks against a 'glcv segment --sources' run, /metrics and /healthz, SIGTERM;
#            again without mask files (vsam's masks lent in place): the same events
#   brokers  eight files, MQTT (mosquitto) and NATS JetStream (nats-server) started here: every event
#            in both, against the masks; JetStream holds each once
#   restart  two RTSP cameras (gst-rtsp-server), both brokers restarted while the service runs:
#            nothing lost, JetStream still holds each event once
#   reload   SIGHUP with one camera kept (its zones changed), two removed (one from a group that runs on:
#            its RTSP connection closes too), two added (one never opens); a second SIGHUP removes that
#            one, which is then never tried again
#   takeover three instances share twelve RTSP cameras through leases in NATS JetStream; one is
#            killed (SIGKILL): its cameras resume on the others within 10 s, their frames numbered on
#   nodes    a 3-node nats-server cluster (JetStream, replicas: 3) under two instances and four
#            cameras; the events stream's leader is killed (SIGKILL): the stream and the lease buckets
#            are on three servers, and every camera's events go on within 10 s, nothing lost
#   stall    one instance on a list of three NATS servers, then only servers that accept and never
#            answer: its rounds wait for seconds, past its leases; no frame after lease - period
#            from its last renewal gets an event (the spool holds what it queued)
#   live     the live view in headless Chromium (browser_check.py): with the token, the page's
#            picture of a frame within the threshold of the source frame, its mask the service's, and
#            the tracked objects' boxes drawn;
#            without it or with a wrong one, refused (TEST_SERVE_SHOT=FILE keeps the screenshot)
#
# usage: test_serve.sh SECTION PATH/TO/glcv PATH/TO/serve_check PATH/TO/test_video_fixture [PATH/TO/rtsp_server]
set -u
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

SECTION=${1:-}
GLCV=${2:-}
CHECK=${3:-}
FIXTURE=${4:-}
RTSP=${5:-}
if [ -z "$GLCV" ] || [ ! -x "$GLCV" ] || [ ! -x "$CHECK" ] || [ ! -x "$FIXTURE" ]; then
    echo "test_serve: glcv, serve_check or test_video_fixture missing: skipped"
    exit 77
fi
testlib_init "test_serve_$SECTION"
RUN=("$GLCV" serve)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

# videos NAME COUNT: COUNT synthetic scenes of 60 frames, 160x120 H.264, $TMP/NAME0.mkv ...
videos() {
    local i
    for i in $(seq 0 $(($2 - 1))); do
        "$FIXTURE" "$TMP/$1$i.mkv" "$TMP/png_$1$i" 60 160x120 h264 $((i + 1)) >"$TMP/fixture.out" 2>&1
        local rc=$?
        [ "$rc" = 77 ] && { echo "test_serve: no H.264 encoder: skipped"; exit 77; }
        [ "$rc" = 0 ] || { cat "$TMP/fixture.out"; fail "test_video_fixture $1$i: exit $rc"; }
    done
}

# serve_start NAME CONFIG [OPTIONS...]: the service in the background ($SERVE_PID), stdout in NAME.out,
# stderr in NAME.err; waits for its HTTP port ($HTTP_PORT)
serve_start() {
    "$GLCV" serve "${@:3}" "$2" >"$TMP/$1.out" 2>"$TMP/$1.err" &
    SERVE_PID=$!
    PIDS+=("$SERVE_PID")
    HTTP_PORT=
    local k
    for k in $(seq 200); do
        HTTP_PORT=$(sed -n 's/^glcv: http on 127.0.0.1:\([0-9]*\) .*/\1/p' "$TMP/$1.err")
        [ -n "$HTTP_PORT" ] && return 0
        kill -0 "$SERVE_PID" 2>/dev/null || break
        sleep 0.05
    done
    fail "$1: the service did not start"
    show "$1"
    return 1
}

# serve_stop NAME: SIGTERM, and its exit status in NAME.rc
serve_stop() {
    kill -TERM "$SERVE_PID" 2>/dev/null
    wait "$SERVE_PID"
    echo $? >"$TMP/$1.rc"
}

# wait_for FILE PATTERN COUNT SECONDS: until FILE has COUNT lines matching PATTERN (1: timed out)
wait_for() {
    local k
    for k in $(seq $(($4 * 10))); do
        [ "$(grep -c -- "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0
        sleep 0.1
    done
    return 1
}

# http NAME PATH: GET PATH from the service, the whole answer in NAME.http
http() {
    exec 3<>"/dev/tcp/127.0.0.1/$HTTP_PORT" || { fail "cannot connect to the HTTP port $HTTP_PORT"; return; }
    printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' "$2" >&3
    timeout 5 cat <&3 >"$TMP/$1.http"
    exec 3<&-
}

# A camera block: camera ID SOURCE [METHOD]
camera() {
    printf '  - id: %s\n    source: %s\n    method: %s\n' "$1" "$2" "${3:-eth}"
}

# ---- check --------------------------------------------------------------------------------------------
section_check() {
    videos v 1
    cat >"$TMP/good.yaml" <<EOF
http: {listen: "127.0.0.1:0"}
defaults: {learn: 5}
cameras:
$(camera a "$TMP/v0.mkv")
$(camera b "$TMP/v0.mkv" vsam)
$(camera c "$TMP/v0.mkv")
EOF
    run good --check "$TMP/good.yaml"
    expect_rc good 0 "--check on a good file"
    expect_in good out "3 cameras in 2 groups; events to stdout" "--check's summary"
    printf 'cameras:\n  - id: a\n    source: x.mkv\n    mehtod: eth\n' >"$TMP/bad_key.yaml"
    run bad_key --check "$TMP/bad_key.yaml"
    expect_rc bad_key 2 "an unknown key"
    expect_in bad_key err "bad_key.yaml:4:" "the unknown key's line"
    printf 'defaults: {learn: 5}\ncameras:\n  - id: a\n    source: x.mkv\n    options: [--vote, "12"]\n' >"$TMP/bad_opt.yaml"
    run bad_opt --check "$TMP/bad_opt.yaml"
    expect_rc bad_opt 2 "a camera option out of range"
    expect_in bad_opt err "--vote" "the option named"
    expect_in bad_opt err "bad_opt.yaml:5: in the options of camera 'a'" "the options' line"
    printf 'cameras:\n  - id: a\n    source: x.mkv\n    method: eth\n    learn: 0\n' >"$TMP/no_bg.yaml"
    run no_bg --check "$TMP/no_bg.yaml"
    expect_rc no_bg 2 "eth without learning"
    expect_in no_bg err "learn must be at least 1" "why"
    run none
    expect_rc none 2 "no file"
    run missing --check "$TMP/absent.yaml"
    expect_rc missing 2 "a file that is not there"
    expect_in missing err "absent.yaml" "the missing file named"
}

# ---- stdout -------------------------------------------------------------------------------------------
section_stdout() {
    videos v 3
    cat >"$TMP/s.yaml" <<EOF
http: {listen: "127.0.0.1:0"}
fraction_every: 0
masks: $TMP/masks
defaults:
  learn: 5
  motion: {start: 0.01, end: 0.004, start_frames: 2, end_frames: 3}
cameras:
$(camera a "$TMP/v0.mkv")
    objects: {confirm: 2, lost: 3}
    zones:
      - name: left
        polygon: [[0, 0], [80, 0], [80, 120], [0, 120]]
      - name: tri
        polygon: [[10.5, 5], [150, 60.25], [20, 115]]
        motion: {start: 0.02, end: 0.01, start_frames: 1, end_frames: 1}
$(camera b "$TMP/v1.mkv")
$(camera c "$TMP/v2.mkv" vsam)
$(camera d "$TMP/v0.mkv" vsam)
    objects: {confirm: 2, lost: 3}
    zones:
      - name: right
        polygon: [[70, 10], [160, 10], [160, 120], [90, 110]]
EOF
    serve_start s "$TMP/s.yaml" || return
    wait_for "$TMP/s.out" '"the file ended"' 4 120 || fail "the four files did not all end in 120 s"
    http metrics /metrics
    http health /healthz
    serve_stop s
    expect_rc s 0 "SIGTERM"
    expect_in s err "serving 4 cameras in 2 groups" "the start"
    CHECKS=$((CHECKS + 1))
    grep -q '^HTTP/1.1 200' "$TMP/metrics.http" && grep -q 'glcv_camera_frames_total{camera="a"} [1-9]' "$TMP/metrics.http" ||
        { fail "/metrics"; sed 's/^/  | /' "$TMP/metrics.http" | head -30; }
    CHECKS=$((CHECKS + 1))
    grep -q '^HTTP/1.1 \(200\|503\)' "$TMP/health.http" || { fail "/healthz"; cat "$TMP/health.http"; }
    CHECKS=$((CHECKS + 1))
    "$CHECK" "$TMP/s.yaml" --file "$TMP/s.out" --exact --ended >"$TMP/check.out" 2>&1 ||
        { fail "the events differ from the masks"; sed 's/^/  | /' "$TMP/check.out"; }
    grep 'motion changes\|object events' "$TMP/check.out"
    CHECKS=$((CHECKS + 1))
    [ "$(grep -c '"type":"object","camera":"a"' "$TMP/s.out")" -ge 2 ] || fail "camera a: no tracked objects"
    # without mask files the vsam set lends its masks to the event workers in place (no copy): the
    # same events, checked against the masks of the run above
    grep -v '^masks:' "$TMP/s.yaml" >"$TMP/lent.yaml"
    serve_start lent "$TMP/lent.yaml" -v || return
    wait_for "$TMP/lent.out" '"the file ended"' 4 120 || fail "lent: the four files did not all end in 120 s"
    serve_stop lent
    expect_rc lent 0 "SIGTERM (masks lent)"
    expect_in lent err "masks lent in place" "the vsam set's masks lent"
    CHECKS=$((CHECKS + 1))
    "$CHECK" "$TMP/lent.yaml" --file "$TMP/lent.out" --exact --ended --masks "$TMP/masks" >"$TMP/check_lent.out" 2>&1 ||
        { fail "masks lent: the events differ from the masks"; sed 's/^/  | /' "$TMP/check_lent.out"; }
    grep 'motion changes\|object events' "$TMP/check_lent.out"
    # the masks of a camera are those of 'glcv segment --sources' on its file
    printf '%s\n' "$TMP/v1.mkv" >"$TMP/list.txt"
    RUN=("$GLCV")
    run seg segment --sources "$TMP/list.txt" --learn 5 -q -o "$TMP/seg"
    RUN=("$GLCV" serve)
    expect_rc seg 0 "glcv segment --sources"
    CHECKS=$((CHECKS + 1))
    diff -r "$TMP/seg/cam000" "$TMP/masks/b" >/dev/null || fail "camera b's masks differ from glcv segment's"
    CHECKS=$((CHECKS + 1))
    [ "$(ls "$TMP/masks/b" | wc -l)" -ge 50 ] || fail "camera b: $(ls "$TMP/masks/b" | wc -l) masks"
}

# ---- brokers ------------------------------------------------------------------------------------------
MOSQUITTO=/usr/sbin/mosquitto
NATS=/usr/sbin/nats-server

# nats_start: nats-server with JetStream on $NATS_PORT ($NATS_PID, data in $TMP/js)
nats_start() {
    mkdir -p "$TMP/js"
    "$NATS" -js -a 127.0.0.1 -p "$NATS_PORT" -sd "$TMP/js" >"$TMP/nats.log" 2>&1 &
    NATS_PID=$!
    PIDS+=("$NATS_PID")
}

# brokers_start: mosquitto on $MQTT_PORT ($MOSQ_PID, data in $TMP/mosq) and nats_start, once both
# accept connections
brokers_start() {
    mkdir -p "$TMP/mosq"
    printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence true\npersistence_location %s/\n' \
        "$MQTT_PORT" "$TMP/mosq" >"$TMP/mosquitto.conf"
    # as root mosquitto changes to its user 'mosquitto', which only its package creates
    [ "$(id -u)" != 0 ] || echo "user root" >>"$TMP/mosquitto.conf"
    "$MOSQUITTO" -c "$TMP/mosquitto.conf" >"$TMP/mosquitto.log" 2>&1 &
    MOSQ_PID=$!
    PIDS+=("$MOSQ_PID")
    nats_start
    local k
    for k in $(seq 100); do
        (echo >"/dev/tcp/127.0.0.1/$MQTT_PORT") 2>/dev/null && (echo >"/dev/tcp/127.0.0.1/$NATS_PORT") 2>/dev/null &&
            return 0
        sleep 0.05
    done
    fail "the brokers did not start"
    cat "$TMP/mosquitto.log" "$TMP/nats.log"
    return 1
}

brokers_stop() {
    kill -TERM "$MOSQ_PID" "$NATS_PID" 2>/dev/null
    wait "$MOSQ_PID" "$NATS_PID" 2>/dev/null
}

subscriber_stop() {
    kill -TERM "$SUB_PID" 2>/dev/null
    wait "$SUB_PID" 2>/dev/null
}

# subscribe: mosquitto_sub on glcv/# (QoS 1, a session kept across the broker's restarts) into
# mqtt.raw (a probe message first, to know it listens; mqtt_events leaves it out)
subscribe() {
    mosquitto_sub -h 127.0.0.1 -p "$MQTT_PORT" -t 'glcv/#' -q 1 -c -i test-serve-sub >>"$TMP/mqtt.raw" \
        2>>"$TMP/sub.err" &
    SUB_PID=$!
    PIDS+=("$SUB_PID")
    local k
    for k in $(seq 50); do
        mosquitto_pub -h 127.0.0.1 -p "$MQTT_PORT" -t glcv/probe -q 1 -m probe 2>/dev/null
        grep -q '^probe$' "$TMP/mqtt.raw" 2>/dev/null && return 0
        sleep 0.1
    done
    fail "mosquitto_sub does not receive: $(cat "$TMP/sub.err")"
}

mqtt_events() {
    grep -v '^probe$' "$TMP/mqtt.raw" >"$TMP/mqtt.jsonl"
}

need_brokers() {
    if [ ! -x "$MOSQUITTO" ] || [ ! -x "$NATS" ] || ! command -v mosquitto_sub >/dev/null; then
        echo "test_serve: mosquitto, mosquitto_sub or nats-server missing: skipped"
        exit 77
    fi
}

# broker_config FILE CAMERAS...: both brokers, masks and every frame's fraction
broker_config() {
    local f=$1
    shift
    {
        printf 'http: {listen: "127.0.0.1:0"}\nfraction_every: 0\nmasks: %s/masks\n' "$TMP"
        printf 'mqtt: {url: "mqtt://127.0.0.1:%s"}\nnats: {url: "nats://127.0.0.1:%s"}\nspool: %s/spool.jsonl\n' \
            "$MQTT_PORT" "$NATS_PORT" "$TMP"
        printf 'defaults:\n  learn: 5\n  motion: {start: 0.01, end: 0.004, start_frames: 2, end_frames: 3}\ncameras:\n'
        printf '%s\n' "$@"
    } >"$f"
}

check_both() {
    mqtt_events
    CHECKS=$((CHECKS + 1))
    "$CHECK" "$1" --file "$TMP/mqtt.jsonl" $2 >"$TMP/check_mqtt.out" 2>&1 ||
        { fail "MQTT: the events differ from the masks"; sed 's/^/  | /' "$TMP/check_mqtt.out"; }
    CHECKS=$((CHECKS + 1))
    "$CHECK" "$1" --nats "nats://127.0.0.1:$NATS_PORT" GLCV_EVENTS --exact $2 >"$TMP/check_nats.out" 2>&1 ||
        { fail "NATS: the events differ from the masks"; sed 's/^/  | /' "$TMP/check_nats.out"; }
    grep -h 'events,\|messages in' "$TMP/check_mqtt.out" "$TMP/check_nats.out"
}

section_brokers() {
    need_brokers
    MQTT_PORT=$(free_port 19100)
    NATS_PORT=$(free_port $((MQTT_PORT + 1)))
    brokers_start || return
    subscribe
    videos v 8
    local cams=() i
    for i in $(seq 0 7); do cams+=("$(camera "cam$i" "$TMP/v$i.mkv" "$([ $((i % 2)) = 0 ] && echo eth || echo vsam)")"); done
    cams[0]+=$'\n    objects: true'
    cams[3]+=$'\n    objects: {cell: 4}'
    broker_config "$TMP/b.yaml" "${cams[@]}"
    serve_start b "$TMP/b.yaml" || return
    wait_for "$TMP/mqtt.raw" '"the file ended"' 8 180 || fail "the eight files did not all end in 180 s"
    http metrics /metrics
    serve_stop b
    expect_rc b 0 "SIGTERM"
    expect_in b err "none left" "every event acknowledged at the stop"
    CHECKS=$((CHECKS + 1))
    grep -q 'glcv_broker_connected{broker="nats"} 1' "$TMP/metrics.http" ||
        { fail "/metrics: NATS not connected"; grep broker "$TMP/metrics.http"; }
    sleep 0.5
    check_both "$TMP/b.yaml" --ended
    expect_absent "$TMP/spool.jsonl" "no spool when everything was delivered"
    subscriber_stop
    brokers_stop
}

# ---- restart: brokers restarted under live cameras ------------------------------------------------------
section_restart() {
    need_brokers
    [ -n "$RTSP" ] && [ -x "$RTSP" ] || { echo "test_serve: no rtsp_server: skipped"; exit 77; }
    MQTT_PORT=$(free_port 19300)
    NATS_PORT=$(free_port $((MQTT_PORT + 1)))
    local rtsp_port
    rtsp_port=$(free_port $((NATS_PORT + 1)))
    "$FIXTURE" "$TMP/cam.mkv" "$TMP/pngcam" 400 160x120 h264 3 >/dev/null 2>&1 || fail "the camera's video"
    start_rtsp "$TMP/cam.mkv" "$rtsp_port" || return
    PIDS+=("$RTSP_PID")
    brokers_start || return
    subscribe
    # a third camera, in live1's group, whose server starts only once the service runs
    local late_port rtsp_pid
    late_port=$(free_port $((rtsp_port + 1)))
    broker_config "$TMP/r.yaml" "$(camera live0 "rtsp://127.0.0.1:$rtsp_port/cam" vsam)" \
        "$(camera live1 "rtsp://127.0.0.1:$rtsp_port/cam" diff2)" \
        "$(camera late "rtsp://127.0.0.1:$late_port/cam" diff2)"
    serve_start r "$TMP/r.yaml" || return
    wait_for "$TMP/mqtt.raw" '"type":"fraction"' 40 60 ||
        { fail "no frames from the cameras in 60 s"; tail -5 "$TMP/rtsp.err"; }
    wait_for "$TMP/mqtt.raw" '"camera":"late".*"state":"down"' 1 10 || fail "the late camera: no down event"
    rtsp_pid=$RTSP_PID
    start_rtsp "$TMP/cam.mkv" "$late_port" || return
    PIDS+=("$RTSP_PID")
    RTSP_PID=$rtsp_pid
    wait_for "$TMP/mqtt.raw" '"camera":"late".*"state":"up"' 1 40 ||
        { fail "the camera down when its group started did not come up"; show r; }
    wait_for "$TMP/mqtt.raw" '"type":"fraction","camera":"late"' 5 30 || fail "the late camera: no frames"
    local before
    before=$(grep -c '"type":"fraction"' "$TMP/mqtt.raw")
    brokers_stop
    sleep 1.5 # events queue while the brokers are away
    brokers_start || return
    wait_for "$TMP/mqtt.raw" '"type":"fraction"' $((before + 160)) 60 || fail "few frames after the brokers' restart"
    http metrics /metrics
    serve_stop r
    CHECKS=$((CHECKS + 1))
    grep -q 'glcv_broker_reconnects_total{broker="mqtt"} [1-9]' "$TMP/metrics.http" &&
        grep -q 'glcv_broker_reconnects_total{broker="nats"} [1-9]' "$TMP/metrics.http" ||
        { fail "/metrics: no reconnection counted"; grep broker "$TMP/metrics.http"; }
    expect_rc r 0 "SIGTERM"
    expect_in r err "none left" "every event acknowledged at the stop"
    sleep 0.5
    check_both "$TMP/r.yaml" ""
    kill "$RTSP_PID" 2>/dev/null
    subscriber_stop
    brokers_stop
}

# ---- reload ---------------------------------------------------------------------------------------------
# rtsp_clients PORT: the established TCP connections to 127.0.0.1:PORT (their client ends)
rtsp_clients() {
    awk -v p="$(printf '%04X' "$1")" 'NR > 1 { split($3, a, ":"); if (a[2] == p && $4 == "01") n++ } END { print n + 0 }' \
        /proc/net/tcp
}

section_reload() {
    [ -n "$RTSP" ] && [ -x "$RTSP" ] || { echo "test_serve: no rtsp_server: skipped"; exit 77; }
    local rtsp_port
    rtsp_port=$(free_port 19500)
    "$FIXTURE" "$TMP/cam.mkv" "$TMP/pngcam" 400 160x120 h264 3 >/dev/null 2>&1 || fail "the camera's video"
    start_rtsp "$TMP/cam.mkv" "$rtsp_port" || return
    PIDS+=("$RTSP_PID")
    local url="rtsp://127.0.0.1:$rtsp_port/cam" refused_port
    refused_port=$(free_port $((rtsp_port + 1)))
    refuser "$refused_port" "$TMP/refused.log" && PIDS+=("$REFUSER_PID") || return
    printf 'http: {listen: "127.0.0.1:0"}\nfraction_every: 0\ncameras:\n%s\n%s\n%s\n' \
        "$(camera keep "$url" diff2)" "$(camera gone "$url" diff3)" "$(camera mate "$url" diff2)" >"$TMP/live.yaml"
    serve_start l "$TMP/live.yaml" || return
    wait_for "$TMP/l.out" '"camera":"gone","frame"' 20 60 && wait_for "$TMP/l.out" '"camera":"mate","frame"' 20 30 ||
        { fail "no frames from the cameras in 60 s"; tail -5 "$TMP/rtsp.err"; }
    # each camera holds a connection to the RTSP server while it runs
    CHECKS=$((CHECKS + 1))
    [ "$(rtsp_clients "$rtsp_port")" = 3 ] || fail "$(rtsp_clients "$rtsp_port") connections to the RTSP server, expected 3"
    # kept: 'keep' (its zones changed); removed: 'gone' (its whole group), 'mate' (from a group that runs
    # on); added: 'new' and 'absent', a camera that never opens (its group runs on with 'new')
    local kept_zone='    zones:\n      - name: all\n        polygon: [[0, 0], [160, 0], [160, 120], [0, 120]]'
    printf "http: {listen: \"127.0.0.1:0\"}\nfraction_every: 0\ncameras:\n%s\n$kept_zone\n%s\n%s\n" \
        "$(camera keep "$url" diff2)" "$(camera new "$url" diff2)" \
        "$(camera absent "rtsp://127.0.0.1:$refused_port/cam" diff2)" >"$TMP/live.yaml"
    local before
    before=$(grep -c . "$TMP/l.out")
    kill -HUP "$SERVE_PID"
    wait_for "$TMP/l.out" '"camera":"new","frame"' 20 60 || fail "the new camera sent no frames in 60 s"
    wait_for "$TMP/l.out" '"camera":"keep".*"zones":{"all"' 5 30 || fail "the kept camera's new zone is not in its events"
    # 'gone' went with its group; 'mate', removed from a group that runs on, closed its source too
    local k
    for k in $(seq 100); do [ "$(rtsp_clients "$rtsp_port")" = 2 ] && break; sleep 0.1; done
    CHECKS=$((CHECKS + 1))
    [ "$(rtsp_clients "$rtsp_port")" = 2 ] ||
        fail "$(rtsp_clients "$rtsp_port") connections to the RTSP server after the reload, expected 2 (keep, new)"
    # 'absent' is tried again and again (after 1, 2, 4 s ...) until a second reload removes it: then
    # never again, though its group runs on
    wait_for "$TMP/refused.log" accepted 2 30 || fail "the camera that never opens was not tried twice in 30 s"
    printf "http: {listen: \"127.0.0.1:0\"}\nfraction_every: 0\ncameras:\n%s\n$kept_zone\n%s\n" \
        "$(camera keep "$url" diff2)" "$(camera new "$url" diff2)" >"$TMP/live.yaml"
    kill -HUP "$SERVE_PID"
    wait_for "$TMP/l.err" "reload: 2 cameras kept, 0 started, 1 stopped" 1 30 || fail "the second reload did not apply"
    local tries
    tries=$(grep -c accepted "$TMP/refused.log")
    sleep 6
    CHECKS=$((CHECKS + 1))
    [ "$(grep -c accepted "$TMP/refused.log")" = "$tries" ] ||
        fail "the removed camera that never opened was tried $(($(grep -c accepted "$TMP/refused.log") - tries)) more times after its removal"
    serve_stop l
    expect_rc l 0 "SIGTERM"
    expect_in l err "reload: 1 camera kept, 2 started, 2 stopped" "the first reload's summary"
    for k in gone mate; do
        CHECKS=$((CHECKS + 1))
        grep -q '"camera":"'$k'".*"state":"down","reason":"removed from the configuration"' "$TMP/l.out" ||
            fail "the removed camera $k's status down"
    done
    CHECKS=$((CHECKS + 1))
    [ "$(grep -c '"camera":"keep".*"type":"status"\|"type":"status".*"camera":"keep"' "$TMP/l.out")" = 1 ] ||
        { fail "the kept camera went down or up again"; grep '"status"' "$TMP/l.out"; }
    # the kept camera's frames go on across the reload: counted on (a live camera drops frames when
    # its set falls behind, so the indices grow, not always by one), and many after it
    CHECKS=$((CHECKS + 1))
    grep '"type":"fraction","camera":"keep"' "$TMP/l.out" | sed 's/.*"frame":\([0-9]*\).*/\1/' >"$TMP/keep_frames"
    awk 'NR > 1 && $1 <= prev { bad = 1; print "not increasing: " prev " -> " $1 } { prev = $1 } END { exit bad }' \
        "$TMP/keep_frames" || fail "the kept camera's frame indices do not increase"
    CHECKS=$((CHECKS + 1))
    [ "$(tail -n +"$before" "$TMP/l.out" | grep -c '"type":"fraction","camera":"keep"')" -ge 10 ] ||
        fail "the kept camera sent few frames after the reload"
    CHECKS=$((CHECKS + 1))
    for k in gone mate; do
        CHECKS=$((CHECKS + 1))
        awk -v c="\"camera\":\"$k\"" 'index($0, c) && gone { n++ } index($0, c) && /removed from the configuration/ { gone = 1 }
            END { exit n > 0 }' "$TMP/l.out" || fail "the removed camera $k sent events after its removal"
    done
    kill "$RTSP_PID" 2>/dev/null
}

# The largest step between a camera's frame indices in time order when it moves between instances
# (lease 3 s): the next holder skips 1.5 x 30 frames/s x 3 s = 135 indices, and the last holder's
# queued masks (up to 64 a camera) may have been dropped when it stopped; the fraction events come
# 0.5 s apart
MAXGAP=250

# instances_start NATS COUNT CAMERA-LINES... -- NAME...: an instance per NAME sharing the cameras through
# a cluster (lease 3 s) on the nats section NATS, their PIDs and HTTP ports in PID_OF[NAME] and
# PORT_OF[NAME]; then waits (60 s at most) until COUNT cameras make frames on one of them (their /metrics)
instances_start() {
    local nats=$1 count=$2 name k
    shift 2
    local lines=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do lines+=("$1"); shift; done
    shift
    declare -gA PID_OF PORT_OF
    for name in "$@"; do
        {
            printf 'http: {listen: "127.0.0.1:0"}\nfraction_every: 0.5\nnats: %s\n' "$nats"
            printf 'cluster: {instance: %s, lease: 3}\n%s' "$name" "${INSTANCE_EXTRA:-}"
            printf 'cameras:\n'
            printf '%s\n' "${lines[@]}"
        } >"$TMP/$name.yaml"
        serve_start "$name" "$TMP/$name.yaml" || return
        PID_OF[$name]=$SERVE_PID
        PORT_OF[$name]=$HTTP_PORT
    done
    for k in $(seq 120); do
        for name in "$@"; do
            HTTP_PORT=${PORT_OF[$name]}
            http "m_$name" /metrics
        done
        [ "$(cat "$TMP"/m_?.http | grep -c '^glcv_camera_frames_total{camera="c[0-9]*"} [1-9]')" -ge "$count" ] && break
        sleep 0.5
    done
    sleep 1
}

# ---- takeover ---------------------------------------------------------------------------------------------
section_takeover() {
    [ -x "$NATS" ] || { echo "test_serve: nats-server missing: skipped"; exit 77; }
    [ -n "$RTSP" ] && [ -x "$RTSP" ] || { echo "test_serve: no rtsp_server: skipped"; exit 77; }
    MQTT_PORT=$(free_port 19700)
    NATS_PORT=$(free_port $((MQTT_PORT + 1)))
    local rtsp_port
    rtsp_port=$(free_port $((NATS_PORT + 1)))
    "$FIXTURE" "$TMP/cam.mkv" "$TMP/pngcam" 750 64x48 h264 3 >/dev/null 2>&1 || fail "the camera's video"
    start_rtsp "$TMP/cam.mkv" "$rtsp_port" || return
    PIDS+=("$RTSP_PID")
    nats_start
    local k i name
    for k in $(seq 100); do (echo >"/dev/tcp/127.0.0.1/$NATS_PORT") 2>/dev/null && break; sleep 0.05; done
    local cams=()
    for i in $(seq 0 11); do cams+=("$(camera "c$i" "rtsp://127.0.0.1:$rtsp_port/cam" diff2)"); done
    instances_start "{url: \"nats://127.0.0.1:$NATS_PORT\"}" 12 "${cams[@]}" -- a b c || return
    # each instance's cameras: claimed less lost or given back (its log), once the shares settled (an
    # instance that started late gets its share from the others in their next rounds)
    local victim=a most=-1 n fair
    declare -A HELD
    for k in $(seq 20); do
        fair=1
        for name in a b c; do
            HELD[$name]=$(sed -n 's/^glcv: cluster: \([0-9]*\) cameras\? claimed, \([0-9]*\) lost.*/\1 \2/p' \
                "$TMP/$name.err" | awk '{ n += $1 - $2 } END { print n + 0 }')
            [ "${HELD[$name]}" -ge 3 ] && [ "${HELD[$name]}" -le 5 ] || fair=0
        done
        [ "$fair" = 1 ] && break
        sleep 0.5
    done
    for name in a b c; do
        n=${HELD[$name]}
        echo "instance $name holds $n cameras"
        CHECKS=$((CHECKS + 1))
        [ "$n" -ge 3 ] && [ "$n" -le 5 ] || fail "instance $name holds $n of the 12 cameras (a fair share is 4)"
        [ "$n" -gt "$most" ] && { most=$n; victim=$name; }
    done
    local killed_at
    killed_at=$(date +%s.%N)
    kill -9 "${PID_OF[$victim]}"
    wait "${PID_OF[$victim]}" 2>/dev/null
    echo "killed instance $victim (its $most cameras)"
    sleep 10
    for name in a b c; do
        [ "$name" = "$victim" ] && continue
        SERVE_PID=${PID_OF[$name]}
        serve_stop "$name"
        expect_rc "$name" 0 "instance $name: SIGTERM"
    done
    CHECKS=$((CHECKS + 1))
    "$CHECK" --cluster "nats://127.0.0.1:$NATS_PORT" GLCV_EVENTS "$killed_at" 10 "$MAXGAP" c0 c1 c2 c3 c4 c5 c6 c7 c8 c9 c10 c11 \
        >"$TMP/check.out" 2>&1 || { fail "the cameras did not resume in time"; sed 's/^/  | /' "$TMP/check.out"; }
    cat "$TMP/check.out"
    [ -z "${TEST_SERVE_KEEP:-}" ] || { cp -r "$TMP" "$TEST_SERVE_KEEP"; echo "kept in $TEST_SERVE_KEEP"; }
    kill "$RTSP_PID" "$NATS_PID" 2>/dev/null
}

# ---- nodes: a 3-node NATS cluster ---------------------------------------------------------------------------
section_nodes() {
    [ -x "$NATS" ] || { echo "test_serve: nats-server missing: skipped"; exit 77; }
    local i k name port=19900 urls="" routes=""
    local -a client cluster monitor node_pid
    for i in 1 2 3; do
        client[$i]=$(free_port "$port")
        cluster[$i]=$(free_port $((client[i] + 1)))
        monitor[$i]=$(free_port $((cluster[i] + 1)))
        port=$((monitor[i] + 1))
        urls="$urls${urls:+,}nats://127.0.0.1:${client[$i]}"
        routes="$routes${routes:+, }nats://127.0.0.1:${cluster[$i]}"
    done
    for i in 1 2 3; do
        mkdir -p "$TMP/js$i"
        printf 'server_name: n%s\nlisten: 127.0.0.1:%s\nhttp: 127.0.0.1:%s\njetstream { store_dir: "%s" }\n' \
            "$i" "${client[$i]}" "${monitor[$i]}" "$TMP/js$i" >"$TMP/nats$i.conf"
        printf 'cluster {\n  name: glcv\n  listen: 127.0.0.1:%s\n  routes: [%s]\n}\n' "${cluster[$i]}" "$routes" \
            >>"$TMP/nats$i.conf"
        "$NATS" -c "$TMP/nats$i.conf" >"$TMP/nats$i.log" 2>&1 &
        node_pid[$i]=$!
        PIDS+=("${node_pid[$i]}")
    done
    # JetStream's meta group has a leader once the three found each other
    for k in $(seq 300); do
        curl -s "http://127.0.0.1:${monitor[1]}/jsz" 2>/dev/null | grep -q '"leader": *"n[123]"' && break
        sleep 0.1
    done
    curl -s "http://127.0.0.1:${monitor[1]}/jsz" | grep -q '"leader": *"n[123]"' ||
        { fail "the NATS cluster has no JetStream leader after 30 s"; tail -5 "$TMP"/nats?.log; return; }
    "$FIXTURE" "$TMP/cam.mkv" "$TMP/pngcam" 1000 64x48 h264 3 >/dev/null 2>&1 || fail "the camera's video"
    local cams=()
    for i in 0 1 2 3; do cams+=("$(camera "c$i" "$TMP/cam.mkv" diff2)" "    realtime: true"); done
    instances_start "{url: \"$urls\", replicas: 3}" 4 "${cams[@]}" -- a b || return
    CHECKS=$((CHECKS + 1))
    "$CHECK" --replicas "$urls" 3 GLCV_EVENTS KV_GLCV_LEASES KV_GLCV_LEASES_FRAMES >"$TMP/replicas.out" 2>&1 ||
        fail "the stream and the buckets are not on three servers"
    cat "$TMP/replicas.out"
    local leader
    leader=$(sed -n 's/^GLCV_EVENTS: leader n\([123]\)$/\1/p' "$TMP/replicas.out")
    [ -n "$leader" ] || { fail "no leader of the events stream"; return; }
    local killed_at survivors=""
    killed_at=$(date +%s.%N)
    kill -9 "${node_pid[$leader]}"
    wait "${node_pid[$leader]}" 2>/dev/null
    echo "killed n$leader, the events stream's leader"
    for i in 1 2 3; do [ "$i" = "$leader" ] || survivors="$survivors${survivors:+,}nats://127.0.0.1:${client[$i]}"; done
    sleep 8
    for name in a b; do
        SERVE_PID=${PID_OF[$name]}
        serve_stop "$name"
        expect_rc "$name" 0 "instance $name: SIGTERM"
        expect_in "$name" err "none left" "instance $name: every event acknowledged at the stop"
    done
    CHECKS=$((CHECKS + 1))
    "$CHECK" --cluster "$survivors" GLCV_EVENTS "$killed_at" 10 "$MAXGAP" c0 c1 c2 c3 >"$TMP/check.out" 2>&1 ||
        { fail "the cameras' events did not go on after the leader's loss"; sed 's/^/  | /' "$TMP/check.out"; }
    cat "$TMP/check.out"
    [ -z "${TEST_SERVE_KEEP:-}" ] || { cp -r "$TMP" "$TEST_SERVE_KEEP"; echo "kept in $TEST_SERVE_KEEP"; }
}

# ---- stall: rounds that wait on NATS past the leases ---------------------------------------------------------
section_stall() {
    [ -x "$NATS" ] || { echo "test_serve: nats-server missing: skipped"; exit 77; }
    NATS_PORT=$(free_port 20100)
    local hole1 hole2 k
    hole1=$(free_port $((NATS_PORT + 1)))
    hole2=$(free_port $((hole1 + 1)))
    nats_start
    for k in $(seq 100); do (echo >"/dev/tcp/127.0.0.1/$NATS_PORT") 2>/dev/null && break; sleep 0.05; done
    blackhole "$hole1" && PIDS+=("$HOLE_PID") && blackhole "$hole2" && PIDS+=("$HOLE_PID") || return
    "$FIXTURE" "$TMP/cam.mkv" "$TMP/pngcam" 1000 64x48 h264 3 >/dev/null 2>&1 || fail "the camera's video"
    local urls="nats://127.0.0.1:$NATS_PORT,nats://127.0.0.1:$hole1,nats://127.0.0.1:$hole2"
    INSTANCE_EXTRA="spool: $TMP/spool.jsonl"$'\n'
    instances_start "{url: \"$urls\"}" 2 "$(camera c0 "$TMP/cam.mkv" diff2)" "    realtime: true" \
        "$(camera c1 "$TMP/cam.mkv" diff2)" "    realtime: true" -- a || return
    # NATS gone, and its port a listener that never answers: a round connects to three servers that
    # accept and say nothing (a connection time-out each), far longer than what is left of the leases
    local killed_at
    kill -9 "$NATS_PID"
    wait "$NATS_PID" 2>/dev/null
    blackhole "$NATS_PORT" && PIDS+=("$HOLE_PID") || return
    killed_at=$(date +%s.%N)
    sleep 9
    HTTP_PORT=${PORT_OF[a]}
    http m_stall /metrics
    CHECKS=$((CHECKS + 1))
    grep -q '^glcv_cluster_unleased_frames_total [1-9]' "$TMP/m_stall.http" ||
        { fail "/metrics: no frames counted as unleased"; grep unleased "$TMP/m_stall.http" | sed 's/^/  | /'; }
    SERVE_PID=${PID_OF[a]}
    serve_stop a
    expect_rc a 0 "instance a: SIGTERM"
    expect_in a err "frames are dropped until a round renews them" "instance a: frames dropped once the leases ran out"
    # every fraction event of the queue (now in the spool) before the leases' end: the last renewal was
    # before the kill, so lease - period = 2 s after it at most (0.25 s for the clocks' reading)
    CHECKS=$((CHECKS + 1))
    python3 - "$TMP/spool.jsonl" "$killed_at" 2.25 >"$TMP/stall.out" 2>&1 <<'PY' || fail "events after the leases' end"
import calendar, json, sys, time
path, killed, limit = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
queued, after, late = 0, 0, []
for line in open(path):
    event = json.loads(json.loads(line)["payload"])
    if event.get("type") != "fraction":
        continue
    stamp, ms = event["time"].rstrip("Z").split(".")
    t = calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%S")) + int(ms) / 1000 - killed
    queued += 1
    after += t > 0
    if t > limit:
        late.append("%s frame %d at %.3f s" % (event["camera"], event["frame"], t))
print("stall: %d fraction events queued, %d of them after the kill, %d later than %.2f s after it%s" %
      (queued, after, len(late), limit, (": " + ", ".join(late[:8])) if late else ""))
sys.exit(0 if queued > 0 and not late else 1)
PY
    cat "$TMP/stall.out"
    [ -z "${TEST_SERVE_KEEP:-}" ] || { cp -r "$TMP" "$TEST_SERVE_KEEP"; echo "kept in $TEST_SERVE_KEEP"; }
}

# ---- live ------------------------------------------------------------------------------------------------
section_live() {
    # a lossless (FFV1) file read at its rate, so the viewers' pictures can be compared with the frames;
    # a minute long, so that it outlasts the viewers below on a loaded machine (SIGTERM ends the run)
    "$FIXTURE" "$TMP/live.mkv" "$TMP/live_png" 1500 160x120 ffv1 5 >"$TMP/fixture.out" 2>&1 ||
        { cat "$TMP/fixture.out"; fail "test_video_fixture live"; return; }
    # and an H.264 one: on a GPU, decoded by NVDEC into the set's texture, which the view reads back
    "$FIXTURE" "$TMP/yard.mkv" "$TMP/yard_png" 1000 160x120 h264 6 >"$TMP/fixture.out" 2>&1 ||
        { cat "$TMP/fixture.out"; fail "test_video_fixture yard"; return; }
    local token=live-view-token-0123456789
    cat >"$TMP/live.yaml" <<EOF
http: {listen: "127.0.0.1:0", token: $token}
masks: $TMP/masks
fraction_every: 3600
defaults: {learn: 5}
cameras:
$(camera gate "$TMP/live.mkv")
    realtime: true
    objects: true
$(camera yard "$TMP/yard.mkv" vsam)
    realtime: true
EOF
    serve_start live "$TMP/live.yaml" || return
    # the viewers once both cameras make frames (a slow machine, a sanitizer: their sets take a while)
    wait_for "$TMP/live.out" '"type":"fraction","camera":"gate"' 1 60 || fail "no frames from gate in 60 s"
    wait_for "$TMP/live.out" '"type":"fraction","camera":"yard"' 1 60 || fail "no frames from yard in 60 s"
    # glcv's own viewer of the WebSocket (live_client): the decoded pictures against the source
    RUN=("$(dirname "$CHECK")/live_client")
    run client 127.0.0.1 "$HTTP_PORT" gate --token "$token" --seconds 6 --frames "$TMP/live_png" \
        --masks "$TMP/masks/gate" --threshold 8 --checks 3
    expect_rc client 0 "live_client: pictures within the threshold of the source frames, masks exact"
    cat "$TMP/client.out"
    # H.264 is lossy: its pictures are compared by their mean difference (a few levels), masks exactly
    run client_h264 127.0.0.1 "$HTTP_PORT" yard --token "$token" --seconds 4 --frames "$TMP/yard_png" \
        --masks "$TMP/masks/yard" --threshold 255 --mean 8 --checks 3
    expect_rc client_h264 0 "live_client of the H.264 camera: pictures near the source frames, masks exact"
    cat "$TMP/client_h264.out"
    run client_wrong 127.0.0.1 "$HTTP_PORT" gate --token not-the-token-0123456789 --seconds 3
    expect_rc client_wrong 1 "live_client with a wrong token"
    expect_in client_wrong out "wrong token" "refused for its token"
    run client_none 127.0.0.1 "$HTTP_PORT" nosuchcamera --token "$token" --seconds 3
    expect_rc client_none 1 "live_client of a camera that is not there"
    RUN=("$GLCV" serve)
    # the page in headless Chromium
    local py=python3
    [ -x /usr/bin/python3 ] && py=/usr/bin/python3 # Debian's, with python3-websocket
    if ! "$py" -c 'import websocket' 2>/dev/null || ! command -v chromium >/dev/null; then
        echo "test_serve_live: no chromium or no python3-websocket: the browser's part skipped"
    else
        CHECKS=$((CHECKS + 1))
        "$py" "$(dirname "${BASH_SOURCE[0]}")/browser_check.py" "http://127.0.0.1:$HTTP_PORT/" "$token" gate \
            "$TMP/live_png" "$TMP/masks/gate" 8 "$TMP/live_view.png" >"$TMP/browser.out" 2>&1
        local rc=$?
        cat "$TMP/browser.out"
        if [ "$rc" = 77 ]; then
            echo "test_serve_live: chromium cannot start here: the browser's part skipped"
        elif [ "$rc" != 0 ]; then
            fail "the live view in Chromium (exit $rc)"
            show live
        fi
        [ -z "${TEST_SERVE_SHOT:-}" ] || cp "$TMP/live_view.png" "$TEST_SERVE_SHOT"
    fi
    expect_in live err "authenticated" "the service's log: a viewer proved the token"
    expect_in live err "rejected: wrong token" "the service's log: the wrong token refused"
    serve_stop live
    expect_rc live 0 "SIGTERM with viewers gone"
}

case "$SECTION" in
check | stdout | brokers | restart | reload | takeover | nodes | stall | live) "section_$SECTION" ;;
*)
    echo "usage: test_serve.sh check|stdout|brokers|restart|reload|takeover|nodes|stall|live GLCV SERVE_CHECK FIXTURE [RTSP_SERVER]"
    exit 2
    ;;
esac
testlib_finish "test_serve_$SECTION"
