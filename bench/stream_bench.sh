#!/usr/bin/env bash
# The frame-delta streaming of 'glcv stream', measured three ways, each printed as a markdown table:
#   1. the codec (bench/stream_bench.c): bytes per frame against the raw frame and against
#      Zstandard of the raw frame, PSNR of the pictures a viewer reconstructs, encode, compress and
#      decode time per frame, on a 1920x1080 synthetic scene and on VIDEO;
#   2. the tool on loopback, one viewer: end-to-end latency (frame captured by the server ->
#      picture decoded by the viewer, both on CLOCK_MONOTONIC, from their --trace files), frames per
#      second, bytes per frame; the synthetic scene at 1920x1080 and 30 fps, and VIDEO at its rate;
#   3. the 1920x1080 30 fps synthetic stream served to VIEWERS viewers at once: what each got, the
#      snapshots and falls behind, the server's peak RSS (VmHWM) and peak queued bytes.
# The synthetic scene is written once as an uncompressed 30 fps video into a temporary folder
# (stream_bench --write-video: rendering it live, or decoding PNG files, is slower than 30 fps at
# 1080p on small machines) and served looping at its rate.
#
# usage: bench/stream_bench.sh BUILD_DIR [VIDEO] [--engine E] [--frames N] [--viewers N] [--threshold T]
#   BUILD_DIR  a build folder with tools/glcv and bench/stream_bench
#   --engine   the encoder's engine: auto, fragment, compute or cpu [auto]
#   --frames   frames served in each loopback run [300]
#   --viewers  viewers of run 3 [8]
set -uo pipefail
# shellcheck source=../scripts/stream_port.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/stream_port.sh"

BUILD=${1:-}
shift || true
VIDEO=
ENGINE=auto
FRAMES=300
VIEWERS=8
THRESHOLD=8
while [ $# -gt 0 ]; do
    case "$1" in
        --engine) ENGINE=$2; shift 2 ;;
        --frames) FRAMES=$2; shift 2 ;;
        --viewers) VIEWERS=$2; shift 2 ;;
        --threshold) THRESHOLD=$2; shift 2 ;;
        -*) echo "stream_bench.sh: unknown option $1" >&2; exit 2 ;;
        *) VIDEO=$1; shift ;;
    esac
done
GLCV=$BUILD/tools/glcv
CODEC=$BUILD/bench/stream_bench
if [ ! -x "$GLCV" ] || [ ! -x "$CODEC" ]; then
    echo "usage: bench/stream_bench.sh BUILD_DIR [VIDEO] [--engine E] [--frames N] [--viewers N]" >&2
    exit 2
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/stream_bench.XXXXXX")
stream_cleanup_at_exit

echo "# glcv stream: $(date -u +%Y-%m-%d), $(nproc) processors, engine $ENGINE, threshold $THRESHOLD"
"$GLCV" info 2>/dev/null | head -n 3 | sed 's/^/# /'
echo
echo "## 1. The codec"
echo
"$CODEC" --engine "$ENGINE" --threshold "$THRESHOLD" --frames 120 --header ${VIDEO:+"$VIDEO"}
echo

"$CODEC" --write-video "$TMP/synthetic.avi" --frames 60 --size 1920x1080 || exit 1

# serve NAME SOURCE_ARGS...: the server in the background (port in PORT, pid in SERVER)
serve() {
    local name=$1
    shift
    "$GLCV" stream serve "$@" --port 0 --engine "$ENGINE" --threshold "$THRESHOLD" --trace "$TMP/$name.strace" \
        >"$TMP/$name.out" 2>"$TMP/$name.err" &
    SERVER=$!
    PIDS+=("$SERVER")
    PORT=$(stream_port "$TMP/$name.err" "$SERVER") && return 0
    echo "stream_bench.sh: the server did not start:" >&2
    cat "$TMP/$name.err" >&2
    exit 1
}

# latency SERVER_TRACE VIEWER_TRACE: "median p95 max" in ms of viewer time - capture time, over
# the frames both traced
latency() {
    awk 'NR == FNR { cap[$1] = $2; next } ($1 in cap) { print ($2 - cap[$1]) * 1000 }' "$1" "$2" | sort -g |
        awk '{ v[NR] = $1 } END { if (NR == 0) { print "- - -"; exit }
              printf "%.1f %.1f %.1f\n", v[int((NR + 1) / 2)], v[int(NR * 0.95 + 0.999)], v[NR] }'
}

# one_viewer NAME LABEL SOURCE_ARGS...: a server and one viewer; a row of table 2
one_viewer() {
    local name=$1 label=$2
    shift 2
    serve "$name" "$@" --wait 1 --max-frames "$FRAMES"
    local t0=$SECONDS
    "$GLCV" stream view "127.0.0.1:$PORT" --trace "$TMP/$name.vtrace" >"$TMP/$name.vout" 2>"$TMP/$name.verr"
    wait "$SERVER"
    local took=$((SECONDS - t0))
    [ "$took" -gt 0 ] || took=1
    local frames bytes lat size
    frames=$(sed -n 's/^frames \([0-9]*\),.*/\1/p' "$TMP/$name.vout")
    bytes=$(sed -n 's/.*bytes received \([0-9]*\),.*/\1/p' "$TMP/$name.vout")
    size=$(sed -n 's/.*served ([^)]*), \([0-9x]*\) .*/\1/p' "$TMP/$name.out")
    lat=$(latency "$TMP/$name.strace" "$TMP/$name.vtrace")
    read -r med p95 max <<<"$lat"
    local enc
    enc=$(sed -n 's/^encode: \([0-9.]*\) ms.*/\1/p' "$TMP/$name.out")
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$size" "${frames:-0}" \
        "$(awk -v f="${frames:-0}" -v t="$took" 'BEGIN { printf "%.1f", f / t }')" \
        "$(awk -v b="${bytes:-0}" -v f="${frames:-1}" 'BEGIN { printf "%.0f", b / (f ? f : 1) }')" \
        "$enc" "$med" "$p95" "$max"
}

echo "## 2. Loopback, one viewer"
echo
echo "| source | size | frames | frames/s | bytes/frame | encode ms (median) | latency ms median | p95 | max |"
echo "|---|---|---|---|---|---|---|---|---|"
one_viewer syn "synthetic 30 fps" --video "$TMP/synthetic.avi" --loop
if [ -n "$VIDEO" ]; then
    one_viewer vid "$(basename "$VIDEO")" --video "$VIDEO" --loop
fi
echo

echo "## 3. 1920x1080 at 30 fps to $VIEWERS viewers"
echo
serve many --video "$TMP/synthetic.avi" --loop --wait "$VIEWERS" --max-frames "$FRAMES"
VPIDS=()
for k in $(seq 1 "$VIEWERS"); do
    "$GLCV" stream view "127.0.0.1:$PORT" --trace "$TMP/many.$k.vtrace" >"$TMP/many.$k.out" 2>"$TMP/many.$k.err" &
    VPIDS+=("$!")
    PIDS+=("$!")
done
t0=$SECONDS
for p in "${VPIDS[@]}"; do wait "$p"; done
wait "$SERVER"
took=$((SECONDS - t0))
echo "| viewer | frames | keyframes (snapshots) | resyncs | bytes received | latency ms median | p95 | max |"
echo "|---|---|---|---|---|---|---|---|"
for k in $(seq 1 "$VIEWERS"); do
    read -r med p95 max <<<"$(latency "$TMP/many.strace" "$TMP/many.$k.vtrace")"
    sed -n "s/^frames \([0-9]*\), bytes received \([0-9]*\), .* keyframes \([0-9]*\) (snapshots \([0-9]*\)), resyncs \([0-9]*\).*/| $k | \1 | \3 (\4) | \5 | \2 | $med | $p95 | $max |/p" \
        "$TMP/many.$k.out"
done
echo
echo "server (${took} s for $FRAMES frames):"
echo
sed 's/^/    /' "$TMP/many.out"
grep -c "fell behind" "$TMP/many.err" | sed 's/^/    viewer events "fell behind": /'
