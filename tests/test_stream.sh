#!/usr/bin/env bash
# Tests of 'glcv stream serve' and 'glcv stream view' on the loopback interface, one section per
# ctest test:
#   cli        help texts, usage errors, token files
#   loopback   a server and a viewer over frames that 'glcv synth' writes: every byte of every
#              recorded picture against the source (threshold, lossless, gray, segment on the CPU
#              and on the default engine: the objects over the background, which comes back
#              where objects have gone), compression on and off alike, keyframes, --max-frames,
#              IPv6 when the machine has ::1
#   viewers    several viewers at once get the same pictures; a late one starts from a snapshot;
#              a viewer stopped (SIGSTOP) falls behind, gets snapshots and catches up while the
#              others are unaffected and the server's queues stay within their budget
#   auth       tokens: right, wrong, missing, on the viewer only; a server with no room; what the
#              server logs of the viewers it refused; a refused viewer makes no outputs
#   hostile    clients that send garbage, say nothing, leave in the middle of the handshake or
#              of a frame, or send garbage requests, while a viewer is served; a client that
#              floods the server with idle connections from another address while viewers with
#              a token join; a viewer that asks for keyframes without pause (python3 clients)
#   fake       a fake server (stream_fake_server) that breaks the protocol or stalls: the viewer
#              exits 1 with a message naming the cause (within its deadline when the server
#              stalls), or resyncs on a keyframe; the viewer's connection has TCP keepalive
#   window     the viewer's window under Xvfb (skipped without xvfb-run): its last screenshot is
#              the last picture; a viewer refused writes none
#
# usage: test_stream.sh SECTION GLCV STREAM_CHECK FAKE_SERVER     (exit 0 pass, 1 fail, 77 skip)
set -uo pipefail

SECTION=${1:-}
GLCV=${2:-}
CHECK=${3:-}
FAKE=${4:-}
if [ -z "$GLCV" ] || [ ! -x "$GLCV" ] || [ ! -x "$CHECK" ] || [ ! -x "$FAKE" ]; then
    echo "test_stream: usage: test_stream.sh SECTION GLCV STREAM_CHECK FAKE_SERVER: skipped"
    exit 77
fi

# shellcheck source=testlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"
# shellcheck source=../scripts/stream_port.sh
source "$(dirname "${BASH_SOURCE[0]}")/../scripts/stream_port.sh"
testlib_init "glcv_stream_$SECTION"
RUN=("$GLCV")
stream_cleanup_at_exit

# ---- helpers ---------------------------------------------------------------------------------------

# start_server NAME ARGS...: 'glcv stream serve ARGS --port 0' in the background, its output in
# $TMP/NAME.out and .err; sets PORT and SERVER_PID once it listens. 1 when it does not.
start_server() {
    local name=$1
    shift
    "$GLCV" stream serve "$@" --port 0 >"$TMP/$name.out" 2>"$TMP/$name.err" &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    PORT=$(stream_port "$TMP/$name.err" "$SERVER_PID") && return 0
    wait "$SERVER_PID" 2>/dev/null
    echo $? >"$TMP/$name.rc"
    fail "$name: the server did not start listening"
    show "$name"
    return 1
}

# finish NAME PID [SECONDS]: waits for the process (at most SECONDS, default 180; then Ctrl-C,
# then KILL), its exit status into $TMP/NAME.rc
finish() {
    local name=$1 pid=$2 limit=${3:-180} i
    for i in $(seq 1 $((limit * 10))); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        echo "  ($name still runs after $limit s: interrupted)"
        kill -INT "$pid" 2>/dev/null
        sleep 3
        kill -KILL "$pid" 2>/dev/null
    fi
    wait "$pid" 2>/dev/null
    echo $? >"$TMP/$name.rc"
}

# view_bg NAME ARGS...: a viewer of 127.0.0.1:$PORT in the background; its pid in VIEW_PID
# keepalive_timers local|remote PORT: the established TCP connections whose local (or remote) port is
# PORT, a line each with its timer: ss -tno where iproute2 is installed, else read from
# /proc/net/tcp and tcp6 (timer 2 is the keepalive timer), written as ss writes it
keepalive_timers() {
    local side=$1 port=$2
    if command -v ss >/dev/null 2>&1; then
        if [ "$side" = local ]; then
            ss -tnoH state established "( sport = :$port )"
        else
            ss -tnoH state established "( dport = :$port )"
        fi
        return
    fi
    awk -v side="$side" -v port="$(printf '%04X' "$port")" '
        FNR > 1 && $4 == "01" {
            n = split(side == "local" ? $2 : $3, a, ":")
            if (a[n] != port) next
            split($6, t, ":")
            print $2, $3, (t[1] == "02" ? "timer:(keepalive)" : "timer:(" t[1] ")")
        }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

view_bg() {
    local name=$1
    shift
    "$GLCV" stream view "127.0.0.1:$PORT" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    VIEW_PID=$!
    PIDS+=("$VIEW_PID")
}

# view NAME ARGS...: a viewer of 127.0.0.1:$PORT, waited for
view() {
    local name=$1
    view_bg "$@"
    finish "$name" "$VIEW_PID" 120
}

# wait_for_text FILE TEXT [SECONDS]: 0 once FILE holds TEXT (default: within 30 s)
wait_for_text() {
    local i
    for i in $(seq 1 $((${3:-30} * 10))); do
        grep -qF -- "$2" "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    return 1
}

# check NAME ARGS...: runs stream_check ARGS, counted as a check; its output shown on failure
check() {
    local name=$1
    shift
    CHECKS=$((CHECKS + 1))
    if ! "$CHECK" "$@" >"$TMP/$name.check" 2>&1; then
        fail "$name: stream_check $*"
        sed 's/^/  | /' "$TMP/$name.check"
    else
        sed 's/^/  /' "$TMP/$name.check"
    fi
}

# summary_field NAME FIELD: the number after FIELD in the viewer's summary line
summary_field() {
    sed -nE "s/(^|.*[ ,(])$2 ([0-9][0-9.]*).*/\\2/p" "$TMP/$1.out" | head -n 1
}

# expect_field NAME FIELD OP VALUE DESCRIPTION: e.g. expect_field v frames -eq 300 "..."
expect_field() {
    CHECKS=$((CHECKS + 1))
    local got
    got=$(summary_field "$1" "$2")
    if [ -z "$got" ] || ! [ "${got%%.*}" "$3" "$4" ]; then
        fail "$5: $2 is '${got}', expected $3 $4"
        show "$1"
    fi
}

# expect_absent PATH DESCRIPTION: PATH does not exist
expect_absent() {
    CHECKS=$((CHECKS + 1))
    if [ -e "$1" ]; then
        fail "$2: $1 exists"
        ls -la "$1" | sed 's/^/  | /'
    fi
}

# refused_line ERRFILE WHY: the server's last line about the viewer it refused for WHY ("wrong
# token", ...): it must say "disconnected (refused: WHY)", never that the viewer left at the end of
# a stream it never had
expect_refused_line() {
    CHECKS=$((CHECKS + 1))
    local id
    id=$(sed -n "s/^glcv: viewer \([0-9]*\) .*: rejected: $2.*/\1/p" "$1" | head -n 1)
    if [ -z "$id" ]; then
        fail "no viewer was rejected for '$2' in $1"
        return
    fi
    local last
    last=$(grep "^glcv: viewer $id (" "$1" | tail -n 1)
    case "$last" in
        *"disconnected (refused: $2"*) echo "  viewer $id: ${last#*: }" ;;
        *) fail "the last line about viewer $id (refused: $2) is '$last', expected 'disconnected (refused: $2...)'" ;;
    esac
}

# The clients of the hostile section, in Python (stdlib only).
write_clients() {
    # flood.py HOST PORT COUNT SECONDS SOURCE: COUNT connections from the address SOURCE that say
    # nothing, each opened again as soon as the server closes it, for SECONDS or until SIGTERM
    cat >"$TMP/flood.py" <<'PY'
import selectors, signal, socket, sys, time
host, port, count, seconds, source = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
sel = selectors.DefaultSelector()
opened = closed = failed = 0
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
def open_one():
    global opened
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    s.bind((source, 0))
    try:
        s.connect((host, port))
    except BlockingIOError:
        pass
    sel.register(s, selectors.EVENT_READ)
    opened += 1
for _ in range(count):
    open_one()
end = time.monotonic() + seconds
while not stop and time.monotonic() < end:
    for key, _ in sel.select(timeout=0.1):
        s = key.fileobj
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
            failed += 1
            time.sleep(0.01)
        if not data:
            sel.unregister(s)
            s.close()
            closed += 1
            open_one()
print(f"flood: {opened} connections from {source}, {closed} closed by the server, {failed} failed", flush=True)
PY
    # spam.py HOST PORT SECONDS: joins (no token), then sends KEYFRAME requests as fast as the
    # socket takes them for SECONDS, reading and dropping what the server sends
    cat >"$TMP/spam.py" <<'PY'
import os, select, socket, sys, time
host, port, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
s = socket.create_connection((host, port), timeout=10)
def exact(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            sys.exit("spam: the server closed the connection in the handshake")
        b += c
    return b
hello = exact(48)
assert hello[:8] == b"GLCVHELO" and hello[10] & 1 == 0, hello[:16]
s.sendall(b"GLCVJOIN" + bytes([1, 0, 0, 0, 0, 0, 0, 0]) + os.urandom(32) + bytes(32))
welcome = exact(48)
assert welcome[:8] == b"GLCVWLCM" and welcome[10:12] == b"\0\0", welcome[:16]
block = (b"GLCVVREQ" + (1).to_bytes(4, "little") + bytes(4)) * 4096
s.setblocking(False)
pending, sent, end = block, 0, time.monotonic() + seconds
while time.monotonic() < end:
    r, w, _ = select.select([s], [s], [], 0.1)
    if r:
        try:
            while s.recv(1 << 16):
                pass
        except BlockingIOError:
            pass
    if w:
        try:
            n = s.send(pending)
        except BlockingIOError:
            n = 0
        sent += n
        pending = pending[n:] or block
print(f"spam: {sent // 16} keyframe requests in {seconds:.0f} s", flush=True)
s.close()
PY
}

# sequence DIR FRAMES SIZE: the synthetic sequence's frames (only) in DIR, its truth in DIR.truth
sequence() {
    run synth_$$ synth -q -o "$TMP/synth_$1" --frames "$2" --size "$3"
    mkdir -p "$1" "$1.truth"
    mv "$TMP/synth_$1"/frame_*.png "$1/" && mv "$TMP/synth_$1"/truth_*.png "$1.truth/"
}

# ---- sections --------------------------------------------------------------------------------------

section_cli() {
    echo "== help"
    run help stream --help
    expect_rc help 0 "glcv stream --help"
    expect_in help out "glcv stream serve SOURCE" "glcv stream --help names serve"
    run help_serve stream serve --help
    expect_rc help_serve 0 "glcv stream serve --help"
    expect_in help_serve out "usage: glcv stream serve" "serve --help"
    expect_in help_serve out "--token FILE" "serve --help explains --token"
    run help_view stream view --help
    expect_rc help_view 0 "glcv stream view --help"
    expect_in help_view out "usage: glcv stream view HOST:PORT" "view --help"
    run help_all --help
    expect_in help_all out "stream" "glcv --help lists stream"

    echo "== usage errors"
    mkdir -p "$TMP/src"
    run u_sub stream frobnicate
    expect_rc u_sub 2 "unknown subcommand"
    run u_none stream
    expect_rc u_none 2 "no subcommand"
    run u_port stream serve synthetic
    expect_rc u_port 2 "serve without --port"
    expect_in u_port err "--port" "the message names --port"
    run u_src stream serve --port 0
    expect_rc u_src 2 "serve without a source"
    run u_missing stream serve "$TMP/no/such/folder" --port 0
    expect_rc u_missing 2 "a SOURCE that does not exist"
    expect_in u_missing err "no such file or folder" "the message says the SOURCE is missing"
    run u_two stream serve "$TMP/src" --video x.avi --port 0
    expect_rc u_two 2 "SOURCE and a source option"
    run u_filter stream serve synthetic --port 0 --filter blur
    expect_rc u_filter 2 "an unknown filter"
    run u_compress stream serve synthetic --port 0 --compress 20
    expect_rc u_compress 2 "--compress 20"
    run u_compress2 stream serve synthetic --port 0 --compress fast
    expect_rc u_compress2 2 "--compress fast"
    run u_threshold stream serve synthetic --port 0 --threshold 256
    expect_rc u_threshold 2 "--threshold 256"
    run u_learn stream serve synthetic --port 0 --learn 10
    expect_rc u_learn 2 "--learn without --filter segment"
    run u_ts stream serve synthetic --port 0 --Ts 100
    expect_rc u_ts 2 "--Ts without --filter segment"
    if [ "${GLCV_TEST_MEDIA:-1}" != 0 ]; then # (the source opens first)
        run u_bind stream serve synthetic --port 0 --bind 203.0.113.1 --max-frames 1
        expect_rc u_bind 1 "--bind to an address this machine does not have"
        expect_in u_bind err "cannot listen" "the message says it cannot listen"
    fi
    for bad in 127.0.0.1 127.0.0.1:0 127.0.0.1:70000 ::1:80 "[::1]" host:port; do
        run u_addr stream view "$bad"
        expect_rc u_addr 2 "view $bad"
    done
    run u_view_none stream view
    expect_rc u_view_none 2 "view without HOST:PORT"
    run u_view_two stream view 127.0.0.1:1 127.0.0.1:2
    expect_rc u_view_two 2 "view with two addresses"

    echo "== token files"
    printf 'fifteen-bytes!!' >"$TMP/short.tok"
    printf 'sixteen-bytes!!!\n\n  \t\n' >"$TMP/ok.tok"
    head -c 4097 /dev/zero | tr '\0' 'k' >"$TMP/long.tok"
    printf '               \n\n' >"$TMP/blank.tok"
    run t_short stream serve synthetic --port 0 --token "$TMP/short.tok"
    expect_rc t_short 2 "a 15-byte token"
    expect_in t_short err "short.tok" "the message names the token file"
    expect_in t_short err "at least 16" "the message says how long a token must be"
    run t_long stream view 127.0.0.1:1 --token "$TMP/long.tok"
    expect_rc t_long 2 "a 4097-byte token"
    expect_in t_long err "long.tok" "the message names the token file"
    run t_blank stream view 127.0.0.1:1 --token "$TMP/blank.tok"
    expect_rc t_blank 2 "a token of whitespace"
    run t_missing stream serve synthetic --port 0 --token "$TMP/no.tok"
    expect_rc t_missing 2 "a token file that does not exist"
    expect_in t_missing err "no.tok" "the message names the missing token file"
    # 16 bytes once the trailing whitespace is stripped: accepted (the viewer then fails to connect)
    run t_ok stream view 127.0.0.1:1 --token "$TMP/ok.tok" --timeout 2
    expect_rc t_ok 1 "a 16-byte token with trailing whitespace, nobody listening"
    expect_in t_ok err "cannot connect" "the viewer says it cannot connect"

    echo "== a viewer that cannot connect leaves no outputs"
    run noout stream view 127.0.0.1:1 --record "$TMP/noout.rec" --trace "$TMP/noout.trace" --timeout 2
    expect_rc noout 1 "a viewer of a port nobody listens on"
    expect_absent "$TMP/noout.rec" "the folder of --record, the connection refused"
    expect_absent "$TMP/noout.trace" "the file of --trace, the connection refused"
    run u_rt stream view 127.0.0.1:1 --read-timeout -1
    expect_rc u_rt 2 "--read-timeout -1"
}

section_loopback() {
    local src=$TMP/src
    sequence "$src" 240 160x120
    # serve_view NAME SERVE_ARGS -- VIEW_ARGS: one server (--fast, waiting for the viewer, a queue
    # that never overflows) and one viewer that records into $TMP/NAME.rec
    serve_view() {
        local name=$1
        shift
        local serve_args=()
        while [ $# -gt 0 ] && [ "$1" != -- ]; do
            serve_args+=("$1")
            shift
        done
        shift
        start_server "$name.s" "$src" --fast --wait 1 --queue-bytes 1000000000 "${serve_args[@]}" || return 1
        view "$name.v" --record "$TMP/$name.rec" "$@"
        finish "$name.s" "$SERVER_PID"
        expect_rc "$name.s" 0 "$name: the server"
        expect_rc "$name.v" 0 "$name: the viewer"
    }

    echo "== threshold 8, compressed (the defaults)"
    serve_view def --
    check def source "$src" "$TMP/def.rec" --threshold 8 --count 240
    expect_in def.v out "frames 240, bytes received" "the viewer's summary line"
    expect_field def.v ratio -ge 2 "the default stream is smaller than the raw frames"
    expect_in def.s out "frames 240 served" "the server's summary"
    expect_in def.s out "peak RSS" "the server reports its peak memory"
    expect_in def.s err "joined (no token)" "the server logs the viewer joining"
    expect_in def.s err "disconnected" "the server logs the viewer leaving"
    echo "== uncompressed: the same pictures"
    serve_view raw --compress off --
    check raw_same same "$TMP/def.rec" "$TMP/raw.rec"
    echo "== lossless (threshold 0): exactly the source"
    serve_view lossless --threshold 0 --compress 3 --
    check lossless source "$src" "$TMP/lossless.rec" --threshold 0 --count 240
    echo "== gray"
    serve_view gray --filter gray --threshold 4 --
    check gray source "$src" "$TMP/gray.rec" --threshold 4 --gray --count 240
    echo "== keyframes every 50 frames"
    serve_view key --keyframe-interval 50 --
    expect_field key.v keyframes -eq 5 "keyframes at 0, 50, 100, 150, 200"
    check key source "$src" "$TMP/key.rec" --threshold 8 --count 240
    echo "== segment, CPU engine: the objects over the background"
    serve_view segcpu --filter segment --learn 20 --engine cpu --keyframe-interval 100 --
    expect_in segcpu.s err "learning the background from the first 20 frames" "the server says it learns"
    expect_in segcpu.s err "background learned from 20 frames" "the server says what it learned"
    # every picture against what the server sends (the frame where the mask is 1, the background
    # where it is 0), and where objects have gone 3 frames before (2 pixels away or more) the
    # background within the threshold, not a copy of the object until the next keyframe
    check segcpu segment "$src" "$TMP/segcpu.rec" --threshold 8 --learn 20 --engine cpu \
        --truth "$src.truth" --after 3 --margin 2
    echo "== segment, default engine (GL textures where there is a context)"
    serve_view segauto --filter segment --learn 20 --keyframe-interval 100 --
    check segauto segment "$src" "$TMP/segauto.rec" --threshold 8 --learn 20 --engine auto \
        --truth "$src.truth" --after 3 --margin 2
    echo "== --max-frames on both sides"
    serve_view maxs --max-frames 40 --
    expect_field maxs.v frames -eq 40 "serve --max-frames 40"
    expect_in maxs.s out "frames 40 served" "the server served 40 frames"
    serve_view maxv -- --max-frames 30
    expect_field maxv.v frames -eq 30 "view --max-frames 30"
    expect_in maxv.s err "disconnected (bye)" "the viewer said bye"
    check maxv source "$src" "$TMP/maxv.rec" --threshold 8 --count 30
    echo "== Ctrl-C ends the server cleanly: END to the viewer, the summary, exit status 130"
    start_server int.s synthetic --size 160x120 --rate 50 --wait 1 || return
    view_bg int.v --record "$TMP/int.rec"
    local viewer=$VIEW_PID
    wait_for_text "$TMP/int.s.err" "in step from keyframe 0" 30
    sleep 1
    kill -INT "$SERVER_PID"
    finish int.s "$SERVER_PID"
    finish int.v "$viewer"
    expect_rc int.s 130 "the server after Ctrl-C"
    expect_rc int.v 0 "its viewer"
    expect_in int.v err "the server was stopped" "the viewer says why the stream ended"
    expect_in int.s out "(interrupted)" "the server's summary"
    expect_field int.v frames -ge 10 "the viewer got frames before the server stopped"
    echo "== Ctrl-C ends the viewer cleanly: bye to the server, the summary, exit status 130"
    start_server intv.s synthetic --size 160x120 --rate 50 --wait 1 --max-frames 150 || return
    view_bg intv.v
    viewer=$VIEW_PID
    wait_for_text "$TMP/intv.s.err" "in step from keyframe 0" 30
    sleep 1
    kill -INT "$viewer"
    finish intv.v "$viewer"
    finish intv.s "$SERVER_PID"
    expect_rc intv.v 130 "the viewer after Ctrl-C"
    expect_in intv.v out "frames " "the viewer's summary"
    expect_rc intv.s 0 "its server"
    expect_in intv.s err "disconnected (bye)" "the server logs the viewer's bye"
    echo "== IPv6"
    if "$GLCV" stream serve "$src" --bind ::1 --port 0 --max-frames 1 >/dev/null 2>"$TMP/v6probe.err" ||
        ! grep -q "cannot listen" "$TMP/v6probe.err"; then
        start_server v6.s "$src" --fast --wait 1 --bind ::1 --max-frames 20
        "$GLCV" stream view "[::1]:$PORT" --record "$TMP/v6.rec" >"$TMP/v6.v.out" 2>"$TMP/v6.v.err"
        echo $? >"$TMP/v6.v.rc"
        finish v6.s "$SERVER_PID"
        expect_rc v6.v 0 "a viewer of [::1]"
        expect_in v6.s err "([::1]:" "the server logs an IPv6 peer"
        check v6 source "$src" "$TMP/v6.rec" --threshold 8 --count 20
    else
        echo "  (no IPv6 loopback here: skipped)"
    fi
}

section_viewers() {
    local src=$TMP/src
    sequence "$src" 300 320x240

    echo "== three viewers at once"
    start_server many.s "$src" --wait 3 --fast --queue-bytes 1000000000 --max-frames 200 || return
    local pids=() n
    for n in a b c; do
        view_bg "many.$n" --record "$TMP/many.$n"
        pids+=("$VIEW_PID")
    done
    finish many.a "${pids[0]}"
    finish many.b "${pids[1]}"
    finish many.c "${pids[2]}"
    finish many.s "$SERVER_PID"
    for n in a b c s; do
        expect_rc "many.$n" 0 "three viewers: $n"
    done
    check many_a source "$src" "$TMP/many.a" --threshold 8 --count 200
    check many_ab same "$TMP/many.a" "$TMP/many.b"
    check many_ac same "$TMP/many.a" "$TMP/many.c"

    echo "== a viewer that joins late starts from a snapshot"
    start_server late.s "$src" --wait 1 --rate 50 --queue-bytes 1000000000 --max-frames 200 || return
    view_bg late.a --record "$TMP/late.a"
    local first=$VIEW_PID
    sleep 1.5
    view_bg late.b --record "$TMP/late.b"
    local second=$VIEW_PID
    finish late.a "$first"
    finish late.b "$second"
    finish late.s "$SERVER_PID"
    expect_rc late.a 0 "the first viewer"
    expect_rc late.b 0 "the late viewer"
    expect_field late.b snapshots -eq 1 "the late viewer's first picture is a snapshot"
    local from
    from=$("$CHECK" info "$TMP/late.b" | sed -n 's/^first \([0-9]*\) .*/\1/p')
    CHECKS=$((CHECKS + 1))
    if [ -z "$from" ] || [ "$from" -le 0 ]; then
        fail "the late viewer starts at frame '$from', expected after frame 0"
    else
        echo "  the late viewer starts at frame $from"
    fi
    check late_same same "$TMP/late.a" "$TMP/late.b" --subset
    check late_src source "$src" "$TMP/late.b" --threshold 8 --first "${from:-1}" --count $((200 - ${from:-1}))

    echo "== a viewer stopped until it falls behind, alone"
    # threshold 0 and no compression: about a frame (230 KB) a packet, 3.5 MB/s at 15 fps: in 8 s
    # more than the socket buffers (about 9 MB measured here) and the default budget (8 MiB a
    # viewer) hold; the other viewers have 2.4 s of slack
    start_server slow.s "$src" --wait 3 --rate 15 --threshold 0 --compress off || return
    view_bg slow.a --record "$TMP/slow.a"
    local pa=$VIEW_PID
    view_bg slow.b --record "$TMP/slow.b"
    local pb=$VIEW_PID
    view_bg slow.z --record "$TMP/slow.z"
    local pz=$VIEW_PID
    wait_for_text "$TMP/slow.s.err" "in step from keyframe 0" 30
    sleep 0.5
    kill -STOP "$pz"
    # stopped until the server drops it behind: about 8 s at 15 fps; longer where encoding is
    # slower than the rate (the sanitizer build on a loaded machine); never is a failure below
    wait_for_text "$TMP/slow.s.err" "fell behind" 90 || true
    kill -CONT "$pz"
    finish slow.a "$pa"
    finish slow.b "$pb"
    finish slow.z "$pz"
    finish slow.s "$SERVER_PID"
    for n in a b z s; do
        expect_rc "slow.$n" 0 "the slow-viewer run: $n"
    done
    expect_in slow.s err "fell behind" "the server says the stopped viewer fell behind"
    expect_field slow.z snapshots -ge 1 "the stopped viewer got a snapshot"
    check slow_z same "$TMP/slow.a" "$TMP/slow.z" --subset
    check slow_a source "$src" "$TMP/slow.a" --threshold 0 --count 300
    check slow_ab same "$TMP/slow.a" "$TMP/slow.b"
    local queued rss
    queued=$(sed -n 's/.*peak queued for viewers \([0-9.]*\) MiB.*/\1/p' "$TMP/slow.s.out")
    rss=$(sed -n 's/.*peak RSS \([0-9.]*\) MiB.*/\1/p' "$TMP/slow.s.out")
    echo "  server: peak RSS $rss MiB, peak queued $queued MiB (3 viewers, 8 MiB each)"
    CHECKS=$((CHECKS + 1))
    # the budget of three viewers and the one packet each may be writing past it
    if [ -z "$queued" ] || ! awk -v q="$queued" 'BEGIN { exit !(q <= 3 * (8 + 230464 / 1048576)) }'; then
        fail "the server queued $queued MiB at its peak, more than 3 budgets of 8 MiB and a frame each"
    fi
}

section_auth() {
    local src=$TMP/src
    sequence "$src" 60 160x120
    head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TMP/good.tok"
    echo >>"$TMP/good.tok"
    printf 'not-the-right-token-at-all\n' >"$TMP/wrong.tok"

    echo "== a server with a token"
    start_server tok.s "$src" --token "$TMP/good.tok" --wait 1 --fast --queue-bytes 100000000 || return
    view tok.wrong --token "$TMP/wrong.tok" --record "$TMP/tok.wrong.rec" --trace "$TMP/tok.wrong.trace"
    expect_rc tok.wrong 1 "a viewer with the wrong token"
    expect_in tok.wrong err "wrong token" "the viewer says the token is wrong"
    expect_absent "$TMP/tok.wrong.rec" "the folder of --record of a viewer refused"
    expect_absent "$TMP/tok.wrong.trace" "the file of --trace of a viewer refused"
    view tok.none
    expect_rc tok.none 1 "a viewer without a token"
    expect_in tok.none err "requires a token" "the viewer says a token is required"
    view tok.good --token "$TMP/good.tok" --record "$TMP/tok.rec"
    finish tok.s "$SERVER_PID"
    expect_rc tok.good 0 "a viewer with the token"
    expect_in tok.good err "both sides proved they hold the token" "the viewer says the server proved itself"
    expect_rc tok.s 0 "the server with a token"
    expect_in tok.s err "rejected: wrong token" "the server logs the wrong token"
    expect_in tok.s err "rejected: no token" "the server logs the missing token"
    expect_in tok.s err "authenticated" "the server logs the authenticated viewer"
    expect_refused_line "$TMP/tok.s.err" "wrong token"
    expect_refused_line "$TMP/tok.s.err" "no token"
    check tok source "$src" "$TMP/tok.rec" --threshold 8 --count 60

    echo "== a server with no room for another viewer"
    start_server full.s "$src" --max-viewers 1 --wait 1 --rate 20 --queue-bytes 100000000 || return
    view_bg full.a --record "$TMP/full.rec"
    local first=$VIEW_PID
    wait_for_text "$TMP/full.s.err" "joined" 30
    view full.b --record "$TMP/full.b.rec"
    finish full.a "$first"
    finish full.s "$SERVER_PID"
    expect_rc full.a 0 "the viewer the server has room for"
    expect_rc full.b 1 "a viewer the server has no room for"
    expect_in full.b err "no room for another viewer" "the viewer says the server is full"
    expect_absent "$TMP/full.b.rec" "the folder of --record of a viewer the server had no room for"
    expect_refused_line "$TMP/full.s.err" "no room for another viewer"

    echo "== a viewer with a token, a server without"
    start_server notok.s "$src" --wait 1 --fast --queue-bytes 100000000 || return
    view notok.tok --token "$TMP/good.tok"
    expect_rc notok.tok 1 "a viewer with a token against a server without"
    expect_in notok.tok err "takes no token" "the viewer says why it refuses the server"
    view notok.plain --record "$TMP/notok.rec"
    finish notok.s "$SERVER_PID"
    expect_rc notok.plain 0 "a viewer without a token, after that"
    expect_rc notok.s 0 "the server without a token"
    expect_in notok.s err "left during the handshake" "the server logs the viewer that left"
}

# The bytes of a JOIN without a token (protocol version 1, a nonce of 'n's, no MAC).
join_bytes() {
    printf 'GLCVJOIN\001\000\000\000\000\000\000\000'
    printf 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn'
    head -c 32 /dev/zero
}

section_hostile() {
    local src=$TMP/src
    sequence "$src" 200 160x120
    start_server h.s "$src" --wait 1 --rate 50 --handshake-timeout 1 --queue-bytes 100000000 || return
    view_bg h.v --record "$TMP/h.rec"
    local viewer=$VIEW_PID
    wait_for_text "$TMP/h.s.err" "joined" 30
    echo "== garbage instead of a greeting"
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT" && printf 'GET / HTTP/1.0\r\n\r\n' >&3 && sleep 0.5) 2>/dev/null
    echo "== a client that says nothing"
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT" && sleep 2.5) 2>/dev/null &
    local silent=$!
    # (ss shows a connection's keepalive timer while nothing is in flight: the silent client's is
    # idle once its greeting is acknowledged; the viewer's shows its retransmission timer at times)
    sleep 0.5
    echo "== TCP keepalive on the server's connections"
    CHECKS=$((CHECKS + 1))
    keepalive_timers local "$PORT" >"$TMP/h.ss" 2>&1
    if ! grep -q "keepalive" "$TMP/h.ss"; then
        fail "the server's connections have no keepalive timer"
        sed 's/^/  | /' "$TMP/h.ss"
    fi
    echo "== a client that leaves in the middle of its greeting"
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT" && join_bytes | head -c 40 >&3 && sleep 0.3) 2>/dev/null
    echo "== a client that leaves in the middle of a frame"
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT" && join_bytes >&3 && head -c 3000 <&3 >/dev/null) 2>/dev/null
    echo "== a client that sends a garbage request"
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT" && join_bytes >&3 && sleep 0.3 && printf 'xxxxxxxxxxxxxxxx' >&3 &&
        sleep 0.5) 2>/dev/null
    wait "$silent"
    finish h.v "$viewer"
    finish h.s "$SERVER_PID"
    expect_rc h.v 0 "the viewer served among hostile clients"
    expect_rc h.s 0 "the server among hostile clients"
    expect_in h.s err "not a glcv stream viewer's greeting" "the server logs the garbage"
    expect_in h.s err "no greeting within 1 s" "the server logs the silent client"
    expect_in h.s err "left during the handshake" "the server logs the client that left mid-handshake"
    expect_in h.s err "not a request" "the server logs the garbage request"
    CHECKS=$((CHECKS + 1))
    if ! grep -E -q "disconnected \((Connection reset by peer|Broken pipe|closed the connection)\)" "$TMP/h.s.err"; then
        fail "the server does not log the client that left in the middle of a frame"
        show h.s
    fi
    check hostile source "$src" "$TMP/h.rec" --threshold 8 --count 200

    if ! command -v python3 >/dev/null 2>&1; then
        fail "python3 is not installed: the flood and keyframe-request clients cannot run"
        return
    fi
    write_clients

    echo "== 64 idle connections from 127.0.0.2, each opened again when dropped, while 20 viewers join"
    head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TMP/flood.tok"
    start_server flood.s synthetic --size 160x120 --rate 25 --token "$TMP/flood.tok" || return
    python3 "$TMP/flood.py" 127.0.0.1 "$PORT" 64 300 127.0.0.2 >"$TMP/flood.out" 2>&1 &
    local flooder=$!
    PIDS+=("$flooder")
    # the flood in full swing: every handshake the address may have is taken
    wait_for_text "$TMP/flood.s.err" "127.0.0.2 has 8 connections in their handshake" 30 || true
    local k joined=0
    for k in $(seq 1 20); do
        if "$GLCV" stream view "127.0.0.1:$PORT" --token "$TMP/flood.tok" --max-frames 3 >"$TMP/flood.v$k.out" \
            2>"$TMP/flood.v$k.err"; then
            joined=$((joined + 1))
        else
            echo "  viewer $k failed:"
            sed 's/^/  | /' "$TMP/flood.v$k.err"
        fi
    done
    kill -TERM "$flooder" 2>/dev/null
    wait "$flooder" 2>/dev/null
    kill -INT "$SERVER_PID"
    finish flood.s "$SERVER_PID"
    sed 's/^/  /' "$TMP/flood.out"
    echo "  $joined of 20 viewers with the token got their 3 frames"
    CHECKS=$((CHECKS + 1))
    [ "$joined" = 20 ] || fail "the flood from 127.0.0.2 kept $((20 - joined)) of 20 viewers out"
    expect_rc flood.s 130 "the server under the flood, after Ctrl-C"
    expect_in flood.s err "127.0.0.2 has 8 connections in their handshake" "the server drops the flood's oldest"
    local bytes
    bytes=$(stat -c %s "$TMP/flood.s.err")
    echo "  the server's log: $bytes bytes"
    CHECKS=$((CHECKS + 1))
    [ "$bytes" -lt 131072 ] || fail "the flood made the server write $bytes bytes of log (at most 128 KiB expected)"

    echo "== a viewer that asks for keyframes as fast as it can, while another is served"
    start_server spam.s "$src" --wait 1 --rate 25 --queue-bytes 100000000 || return
    view_bg spam.v --record "$TMP/spam.rec"
    viewer=$VIEW_PID
    wait_for_text "$TMP/spam.s.err" "joined" 30
    python3 "$TMP/spam.py" 127.0.0.1 "$PORT" 5 >"$TMP/spam.out" 2>&1
    sed 's/^/  /' "$TMP/spam.out"
    finish spam.v "$viewer"
    finish spam.s "$SERVER_PID"
    expect_rc spam.v 0 "the viewer served beside the one asking for keyframes"
    expect_rc spam.s 0 "the server asked for keyframes without pause"
    check spam source "$src" "$TMP/spam.rec" --threshold 8 --count 200
    expect_in spam.s err "keyframe requests in the last" "the server sums the requests up"
    bytes=$(stat -c %s "$TMP/spam.s.err")
    echo "  the server's log: $bytes bytes"
    CHECKS=$((CHECKS + 1))
    if [ "$bytes" -ge 20480 ]; then
        fail "the keyframe requests made the server write $bytes bytes of log (under 20 KiB expected)"
        head -c 2000 "$TMP/spam.s.err" | sed 's/^/  | /'
    fi
}

section_fake() {
    printf 'a-token-of-the-fake-server\n' >"$TMP/fake.tok"
    # fake NAME SCENARIO WANT_RC TEXT [VIEW ARGS...]: the fake server playing SCENARIO, a viewer
    # that must exit WANT_RC with TEXT in its stderr (or stdout), within 20 s
    fake() {
        local name=$1 scenario=$2 want=$3 text=$4
        shift 4
        local token=()
        [ "$scenario" != bad-mac ] || token=("$TMP/fake.tok")
        "$FAKE" "$scenario" "${token[@]}" >"$TMP/$name.fake.out" 2>"$TMP/$name.fake.err" &
        local fpid=$!
        PIDS+=("$fpid")
        local i
        PORT=
        for i in $(seq 1 300); do
            PORT=$(sed -n 's/^port \([0-9]*\)/\1/p' "$TMP/$name.fake.out" | head -n 1)
            [ -n "$PORT" ] && break
            sleep 0.1
        done
        local t0=$SECONDS
        view "$name" "$@"
        local took=$((SECONDS - t0))
        finish "$name.fake" "$fpid" 30
        expect_rc "$name" "$want" "fake server '$scenario': the viewer's exit status"
        CHECKS=$((CHECKS + 1))
        if ! grep -qF -- "$text" "$TMP/$name.err" "$TMP/$name.out"; then
            fail "fake server '$scenario': '$text' not in the viewer's output"
            show "$name"
        fi
        CHECKS=$((CHECKS + 1))
        [ "$took" -le "${FAKE_LIMIT:-20}" ] || fail "fake server '$scenario': the viewer took $took s (at most ${FAKE_LIMIT:-20})"
        if [ "$want" != 0 ]; then
            CHECKS=$((CHECKS + 1))
            [ "$(grep -c '^glcv: error:' "$TMP/$name.err")" = 1 ] || fail "fake server '$scenario': not one error line"
        fi
    }
    fake stall stall 1 "timed out" --timeout 1
    fake badhello bad-hello 1 "not a glcv stream server"
    fake badversion bad-version 1 "protocol version 2"
    fake badmac bad-mac 1 "could not prove it holds the token" --token "$TMP/fake.tok"
    fake garbage garbage 1 "neither a packet nor the end"
    fake trunchead truncated-header 1 "in the middle of a packet header"
    fake trunc truncated 1 "in the middle of frame 1"
    fake noend no-end 1 "without ending the stream"
    fake corrupt corrupt 1 "corrupt packet"
    fake badheader bad-header 1 "malformed packet header"
    fake oversized oversized 1 "above this viewer's limit"
    fake small no-end 1 "above this viewer's limit" --max-bytes 1000
    fake badend bad-end 1 "protocol violation"
    fake gap gap 0 "resyncs 1" --record "$TMP/gap.rec"
    expect_rc gap.fake 0 "the fake server got the keyframe request (gap)"
    expect_in gap err "asked for a keyframe" "the viewer says it asked for a keyframe"
    expect_count "$TMP/gap.rec/frame_*.png" 4 "frames 0, 1, 3 and 4 recorded"
    expect_count "$TMP/gap.rec/frame_000002.png" 0 "frame 2 never came"
    fake first delta-first 0 "resyncs 1" --record "$TMP/first.rec"
    expect_rc first.fake 0 "the fake server got the keyframe request (delta first)"
    expect_count "$TMP/first.rec/frame_*.png" 2 "frames 3 and 4 recorded"

    echo "== servers that stall without closing: the viewer gives up within its deadline"
    FAKE_LIMIT=5 fake stallhello stall-hello 1 "waiting for the server's answer: timed out" --timeout 2
    FAKE_LIMIT=5 fake stallwelcome stall-welcome 1 "sent nothing for 2 s after the handshake" --read-timeout 2
    FAKE_LIMIT=5 fake stallpayload stall-payload 1 "sent nothing for 2 s in the middle of frame 1" --read-timeout 2
    FAKE_LIMIT=13 fake stalldefault stall-payload 1 "sent nothing for 10 s in the middle of frame 1"
    for name in stallwelcome stallpayload stalldefault; do
        expect_in "$name.fake" out "stalled until the viewer left: yes" "fake server $name: the viewer left"
    done

    echo "== TCP keepalive on the viewer's connection"
    "$FAKE" stall-welcome >"$TMP/ka.fake.out" 2>"$TMP/ka.fake.err" &
    local fpid=$! i
    PIDS+=("$fpid")
    PORT=
    for i in $(seq 1 300); do
        PORT=$(sed -n 's/^port \([0-9]*\)/\1/p' "$TMP/ka.fake.out" | head -n 1)
        [ -n "$PORT" ] && break
        sleep 0.1
    done
    view_bg ka --read-timeout 4
    local viewer=$VIEW_PID
    sleep 1.5
    keepalive_timers remote "$PORT" >"$TMP/ka.ss" 2>&1
    finish ka "$viewer" 20
    finish ka.fake "$fpid" 30
    CHECKS=$((CHECKS + 1))
    if ! grep -q "keepalive" "$TMP/ka.ss"; then
        fail "the viewer's connection has no keepalive timer"
        sed 's/^/  | /' "$TMP/ka.ss"
    fi
}

# under_x RCFILE CMD...: CMD under Xvfb, its own exit status in RCFILE: xvfb-run's own troubles after
# the command ended (it may fail to clean up its temporary folder) are not the command's. LeakSanitizer
# cannot name the GL driver's allocations that glfwTerminate leaves (test_demo.sh).
under_x() {
    local rc=$1
    shift
    rm -f "$rc"
    ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0" xvfb-run -a -s "-screen 0 1280x1024x24" \
        sh -c '"$@"; echo $? >"$0"' "$rc" "$@"
    local x=$?
    [ -s "$rc" ] || echo "$x" >"$rc" # the command never ran: xvfb-run's status
}

section_window() {
    if ! command -v xvfb-run >/dev/null 2>&1; then
        echo "test_stream: xvfb-run is not installed: skipped"
        exit 77
    fi
    local src=$TMP/src
    sequence "$src" 40 160x120
    head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TMP/wr.tok"
    start_server w.s "$src" --wait 1 --fast --queue-bytes 100000000 || return
    under_x "$TMP/w.v.rc" "$GLCV" stream view "127.0.0.1:$PORT" --window --screenshot "$TMP/w.png" \
        --record "$TMP/w.rec" >"$TMP/w.v.out" 2>"$TMP/w.v.err"
    finish w.s "$SERVER_PID"
    if grep -q "built without GLFW" "$TMP/w.v.err"; then
        expect_rc w.v 1 "--window without GLFW"
        return
    fi
    if grep -q "cannot open a window\|cannot create a window" "$TMP/w.v.err"; then
        echo "test_stream: no window could be opened under Xvfb: skipped"
        exit 77
    fi
    expect_rc w.v 0 "the viewer with a window"
    check window source "$src" "$TMP/w.rec" --threshold 8 --count 40
    check window_shows image "$TMP/w.png" "$TMP/w.rec/frame_000039.png"

    echo "== a viewer with a window that the server refuses writes no screenshot"
    start_server wr.s "$src" --token "$TMP/wr.tok" --max-frames 1 --wait 1 || return
    printf 'not-the-token-of-this-server\n' >"$TMP/wr.wrong.tok"
    under_x "$TMP/wr.v.rc" "$GLCV" stream view "127.0.0.1:$PORT" --window --screenshot "$TMP/wr.png" \
        --token "$TMP/wr.wrong.tok" >"$TMP/wr.v.out" 2>"$TMP/wr.v.err"
    kill -INT "$SERVER_PID"
    finish wr.s "$SERVER_PID"
    expect_rc wr.v 1 "a viewer with a window and the wrong token"
    expect_absent "$TMP/wr.png" "the screenshot of a viewer refused"
}

# Every source of 'glcv stream serve' is a media source (FFmpeg): without it no server runs.
# (GLCV_TEST_MEDIA: 1 or 0, from tests/CMakeLists.txt.)
needs_server() {
    if [ "${GLCV_TEST_MEDIA:-1}" = 0 ]; then
        echo "test_stream $SECTION: glcv was built without media input (FFmpeg), so no server can run: skipped"
        exit 77
    fi
}

case "$SECTION" in
    loopback | viewers | auth | hostile | window) needs_server ;;
esac
case "$SECTION" in
    cli) section_cli ;;
    loopback) section_loopback ;;
    viewers) section_viewers ;;
    auth) section_auth ;;
    hostile) section_hostile ;;
    fake) section_fake ;;
    window) section_window ;;
    *)
        echo "test_stream: unknown section '$SECTION'"
        exit 1
        ;;
esac
testlib_finish "test_stream $SECTION"
