#!/bin/bash
# glcv serve against glcv segment --sources: the same N sources of one video file, the same method,
# in one run, alternated. segment runs without masks (--no-masks); the service sends every camera's
# events (fraction every second) to stdout, as a service without a broker does. Each run is timed
# from its start to its exit (the service is stopped by SIGTERM once every source has told "the file
# ended"), both with their probing and teardown; frames/s is the frames segmented over that time
# (segment's summary; the service's /metrics, summed over the cameras). The last column: segment's
# own rate (its clock starts after probing), the service's time to the last source's end.
#
# usage: bench/serve_bench.sh BUILD_DIR VIDEO [--sources N] [--runs R] [--method M] [--learn L]
#                             [--decoder D] [--before OTHER_BUILD_DIR] [--viewer]
# --before: also the service of another build (the code before a change), in the same alternation.
# --viewer: each service run also has one viewer of camera c0's live view for the whole run
# (BUILD_DIR/tests/live_client: the page's protocol, every packet decoded); its summary line follows.
# defaults: 64 sources, 2 runs of each, vsam, learn 25, decoder auto. VIDEO: e.g. the VGA H.264 clip
# of docs/PERFORMANCE.md (ffmpeg -i vtest.avi -vf scale=640:480,fps=25 -c:v libx264 -crf 23 -bf 0 -g 50 vga.mkv).
set -u
BUILD=${1:?usage: bench/serve_bench.sh BUILD_DIR VIDEO [--sources N] [--runs R] [--method M] [--learn L]}
VIDEO=${2:?usage: bench/serve_bench.sh BUILD_DIR VIDEO [--sources N] [--runs R] [--method M] [--learn L]}
shift 2
N=64 RUNS=2 METHOD=vsam LEARN=25 DECODER=auto BEFORE= VIEWER=
while [ $# -gt 0 ]; do
    case "$1" in
        --sources) N=$2; shift 2 ;;
        --runs) RUNS=$2; shift 2 ;;
        --method) METHOD=$2; shift 2 ;;
        --learn) LEARN=$2; shift 2 ;;
        --decoder) DECODER=$2; shift 2 ;;
        --before) BEFORE=$2; shift 2 ;;
        --viewer) VIEWER=$BUILD/tests/live_client; shift ;;
        *) echo "serve_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
GLCV=$BUILD/tools/glcv
[ -x "$GLCV" ] || { echo "serve_bench.sh: $GLCV is missing" >&2; exit 2; }
[ -z "$VIEWER" ] || [ -x "$VIEWER" ] || { echo "serve_bench.sh: $VIEWER is missing (built with the tests)" >&2; exit 2; }
[ -z "$BEFORE" ] || [ -x "$BEFORE/tools/glcv" ] || { echo "serve_bench.sh: $BEFORE/tools/glcv is missing" >&2; exit 2; }
[ -r "$VIDEO" ] || { echo "serve_bench.sh: cannot read $VIDEO" >&2; exit 2; }
VIDEO=$(cd "$(dirname "$VIDEO")" && pwd)/$(basename "$VIDEO")
TMP=$(mktemp -d "${TMPDIR:-/tmp}/serve_bench.XXXXXX")
SERVE_PID= VIEWER_PID=
cleanup() {
    [ -n "$SERVE_PID" ] && kill -KILL "$SERVE_PID" 2>/dev/null
    [ -n "$VIEWER_PID" ] && kill -KILL "$VIEWER_PID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

: >"$TMP/list.txt"
{
    printf 'http: {listen: "127.0.0.1:0"}\nfraction_every: 1\ndecoder: %s\ndefaults: {learn: %s}\ncameras:\n' \
        "$DECODER" "$LEARN"
    for i in $(seq 0 $((N - 1))); do
        echo "$VIDEO" >>"$TMP/list.txt"
        printf '  - id: c%d\n    source: %s\n    method: %s\n' "$i" "$VIDEO" "$METHOD"
    done
} >"$TMP/serve.yaml"

now() { date +%s.%N; }

run_segment() {
    local t0 t1
    t0=$(now)
    "$GLCV" segment --sources "$TMP/list.txt" --method "$METHOD" --learn "$LEARN" --decoder "$DECODER" --no-masks \
        >"$TMP/seg.out" 2>"$TMP/seg.err" || { echo "segment failed:"; tail -5 "$TMP/seg.err"; return 1; }
    t1=$(now)
    local frames
    frames=$(sed -n 's/^frames: *\([0-9]*\) segmented.*/\1/p' "$TMP/seg.out")
    awk -v a="$t0" -v b="$t1" -v f="$frames" \
-v own="$(sed -n 's/^wall time: *[0-9.]* s: \([0-9.]*\) frames.*/\1/p' "$TMP/seg.out")" \
        'BEGIN { w = b - a; printf "| `glcv segment --sources`, no masks | %.2f | %d | %.0f | %s frames/s |\n", w, f / w, f / w / 25, own }'
}

# metrics PORT: the service's /metrics (bash's /dev/tcp: no HTTP client needed)
metrics() {
    exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
    printf 'GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
    cat <&3
    exec 3<&-
}

# run_serve GLCV LABEL
run_serve() {
    local t0 t1 t2 port= k
    t0=$(now)
    "$1" serve "$TMP/serve.yaml" >"$TMP/serve.out" 2>"$TMP/serve.err" &
    SERVE_PID=$!
    if [ -n "$VIEWER" ]; then
        for k in $(seq 200); do
            port=$(sed -n 's/^glcv: http on 127.0.0.1:\([0-9]*\) .*/\1/p' "$TMP/serve.err")
            [ -n "$port" ] && break
            sleep 0.05
        done
        "$VIEWER" 127.0.0.1 "$port" c0 --seconds 600 >"$TMP/viewer.out" 2>&1 &
        VIEWER_PID=$!
    fi
    for k in $(seq 6000); do
        [ "$(grep -c '"the file ended"' "$TMP/serve.out")" -ge "$N" ] && break
        kill -0 "$SERVE_PID" 2>/dev/null || { echo "serve stopped:"; tail -5 "$TMP/serve.err"; return 1; }
        sleep 0.05
    done
    t1=$(now)
    port=$(sed -n 's/^glcv: http on 127.0.0.1:\([0-9]*\) .*/\1/p' "$TMP/serve.err")
    local frames
    frames=$(metrics "$port" | awk '/^glcv_camera_frames_total\{/ { s += $2 } END { print s + 0 }')
    kill -TERM "$SERVE_PID"
    wait "$SERVE_PID"
    SERVE_PID=
    t2=$(now)
    if [ -n "$VIEWER_PID" ]; then
        wait "$VIEWER_PID"
        VIEWER_PID=
    fi
    awk -v a="$t0" -v b="$t1" -v c="$t2" -v f="$frames" -v l="$2" \
        'BEGIN { w = c - a; printf "| `glcv serve`, events to stdout%s | %.2f | %d | %.0f | last end at %.2f s |\n", l, w, f / w, f / w / 25, b - a }'
    [ -z "$VIEWER" ] || sed 's/^/  viewer of c0: /' "$TMP/viewer.out"
}

echo "$N sources of $(basename "$VIDEO"), $METHOD, learn $LEARN, decoder $DECODER; $(nproc) processors; $(date -u '+%Y-%m-%d %H:%M UTC')"
echo
echo "| | wall to exit (s) | frames/s | cameras at 25 fps | |"
echo "|---|---:|---:|---:|---|"
for r in $(seq "$RUNS"); do
    run_segment
    [ -z "$BEFORE" ] || run_serve "$BEFORE/tools/glcv" ", before ($BEFORE)${VIEWER:+, a viewer of c0}"
    run_serve "$GLCV" "${VIEWER:+, a viewer of c0}"
done
