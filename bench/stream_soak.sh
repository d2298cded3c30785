#!/usr/bin/env bash
# The stream tool under a long run: 'glcv stream serve' on loopback sends FRAMES frames of the
# synthetic scene as fast as they encode to one viewer that stays for the whole run, while a second
# viewer joins and leaves again and again (each visit a new connection, handshake, keyframe and
# teardown). Every INTERVAL seconds the server's and the steady viewer's resident memory (VmRSS),
# open file descriptors and threads are read from /proc. Prints, per process, a Markdown table in
# the form of bench/soak_bench's: the value after warm-up (a tenth of the run), at the end, and the
# slope per 100,000 frames over the run and over its last half (frames counted from the server's
# trace), so that a leak per frame or per connection shows as a steady slope.
#
# usage: bench/stream_soak.sh BUILD_DIR [--frames N] [--size WxH] [--interval S] [--visit S]
#                             [--engine E] [--filter F]
#   --frames    frames served [100000]
#   --size      frame size [160x120]
#   --interval  seconds between samples [2]
#   --visit     seconds the second viewer stays, and between its visits [1]
#   --engine    the server's engine: auto, fragment, compute or cpu [auto]
#   --filter    what is sent (see 'glcv stream serve --help') [none]
set -uo pipefail
# shellcheck source=../scripts/stream_port.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/stream_port.sh"
# shellcheck source=soak_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/soak_lib.sh"

BUILD=${1:-}
shift || true
FRAMES=100000
SIZE=160x120
INTERVAL=2
VISIT=1
ENGINE=auto
FILTER=none
while [ $# -gt 0 ]; do
    case "$1" in
        --frames) FRAMES=$2; shift 2 ;;
        --size) SIZE=$2; shift 2 ;;
        --interval) INTERVAL=$2; shift 2 ;;
        --visit) VISIT=$2; shift 2 ;;
        --engine) ENGINE=$2; shift 2 ;;
        --filter) FILTER=$2; shift 2 ;;
        *) echo "stream_soak.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
GLCV=$BUILD/tools/glcv
if [ ! -x "$GLCV" ]; then
    echo "usage: bench/stream_soak.sh BUILD_DIR [--frames N] [--size WxH] [--interval S] [--visit S]" >&2
    exit 2
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/stream_soak.XXXXXX")
stream_cleanup_at_exit

"$GLCV" stream serve synthetic --size "$SIZE" --fast --max-frames "$FRAMES" --wait 1 --port 0 --engine "$ENGINE" \
    --filter "$FILTER" --trace "$TMP/server.trace" >"$TMP/server.out" 2>"$TMP/server.err" &
SERVER=$!
PIDS+=("$SERVER")
if ! PORT=$(stream_port "$TMP/server.err" "$SERVER"); then
    echo "stream_soak.sh: the server did not start:" >&2
    cat "$TMP/server.err" >&2
    exit 1
fi
"$GLCV" stream view "127.0.0.1:$PORT" >"$TMP/viewer.out" 2>"$TMP/viewer.err" &
VIEWER=$!
PIDS+=("$VIEWER")

visits=0
visit_failures=0
next_visit=$SECONDS
t0=$(date +%s.%N)
while kill -0 "$SERVER" 2>/dev/null; do
    frames=$(wc -l <"$TMP/server.trace" 2>/dev/null || echo 0)
    s=$(sample "$SERVER")
    v=$(sample "$VIEWER")
    [ -n "$s" ] && echo "$frames $s" >>"$TMP/server.samples"
    [ -n "$v" ] && echo "$frames $v" >>"$TMP/viewer.samples"
    if [ "$SECONDS" -ge "$next_visit" ]; then
        # a visitor: joins, receives for VISIT seconds, leaves (SIGINT, as a user's Ctrl-C)
        "$GLCV" stream view "127.0.0.1:$PORT" >"$TMP/visit.out" 2>"$TMP/visit.err" &
        vp=$!
        sleep "$VISIT"
        kill -INT "$vp" 2>/dev/null
        wait "$vp"
        rc=$?
        visits=$((visits + 1))
        # 0 or 130 (stopped by Ctrl-C); 1 only when the server ended meanwhile
        if [ "$rc" != 0 ] && [ "$rc" != 130 ] && kill -0 "$SERVER" 2>/dev/null; then
            visit_failures=$((visit_failures + 1))
            [ "$visit_failures" = 1 ] && cp "$TMP/visit.err" "$TMP/first_failed_visit.err"
        fi
        next_visit=$((SECONDS + VISIT))
    else
        sleep "$INTERVAL"
    fi
done
wait "$SERVER"
server_rc=$?
wait "$VIEWER"
viewer_rc=$?
elapsed=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
served=$(wc -l <"$TMP/server.trace")
got=$(sed -n 's/^frames \([0-9]*\),.*/\1/p' "$TMP/viewer.out")

echo "stream_soak: $FRAMES frames of $SIZE served as fast as they encode (engine $ENGINE, filter $FILTER)" \
    "to one viewer for the whole run and a visitor every $((2 * VISIT)) s; $(date -u +%Y-%m-%d), $(nproc) processors"
echo "    server exit $server_rc, $served frames traced; steady viewer exit $viewer_rc, ${got:-0} pictures;" \
    "$visits visits, $visit_failures failed; $elapsed s"
[ -f "$TMP/first_failed_visit.err" ] && sed 's/^/    first failed visit: /' "$TMP/first_failed_visit.err" | head -n 5
echo

soak_table "$TMP/server.samples" "server" "$FRAMES" "100k frames" 100000
echo
soak_table "$TMP/viewer.samples" "steady viewer" "$FRAMES" "100k frames" 100000
[ "$server_rc" = 0 ] && [ "$viewer_rc" = 0 ] && [ "$visit_failures" = 0 ]
