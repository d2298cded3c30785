# Helpers of the shell tests, sourced by them: a temporary folder removed at exit, counted checks,
# and runs whose output and exit status are kept in files named after the run ($TMP/NAME.out,
# NAME.err and NAME.rc; a script whose runs keep one log, NAME.log, defines its own run).

# testlib_init NAME: $TMP, a new folder removed at exit; no checks and no failures yet
testlib_init() {
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
    trap 'rm -rf "$TMP"' EXIT
    FAILURES=0
    CHECKS=0
}

fail() {
    FAILURES=$((FAILURES + 1))
    echo "FAIL: $*"
}

# run NAME ARGS...: runs the command in the array RUN (set by the script) with ARGS
run() {
    local name=$1
    shift
    "${RUN[@]}" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    echo $? >"$TMP/$name.rc"
}

rc_of() { cat "$TMP/$1.rc"; }

# show NAME: the exit status and what the run wrote (stdout and stderr, or its log)
show() {
    echo "  command output ($1): exit $(rc_of "$1")"
    local f
    for f in "$TMP/$1.out" "$TMP/$1.err" "$TMP/$1.log"; do
        [ ! -f "$f" ] || sed 's/^/  | /' "$f"
    done
}

# expect_rc NAME WANT DESCRIPTION
expect_rc() {
    CHECKS=$((CHECKS + 1))
    local got
    got=$(rc_of "$1")
    if [ "$got" != "$2" ]; then
        fail "$3: exit status $got, expected $2"
        show "$1"
    fi
}

# expect_failure NAME DESCRIPTION: a non-zero exit status other than a crash
expect_failure() {
    CHECKS=$((CHECKS + 1))
    local got
    got=$(rc_of "$1")
    if [ "$got" != 1 ] && [ "$got" != 2 ]; then
        fail "$2: exit status $got, expected 1 or 2"
        show "$1"
    fi
}

# expect_in NAME out|err|log TEXT DESCRIPTION: TEXT in the run's stdout, stderr or log
expect_in() {
    CHECKS=$((CHECKS + 1))
    if ! grep -qF -- "$3" "$TMP/$1.$2"; then
        if [ "$2" = log ]; then
            fail "$4: '$3' not in the output"
        else
            fail "$4: '$3' not in std$2"
        fi
        show "$1"
    fi
}

# expect_one_line NAME TEXT DESCRIPTION: the run's stderr is exactly one line, and it holds TEXT (a
# failure is reported once, naming its cause; run it with --quiet where the command prints more)
expect_one_line() {
    CHECKS=$((CHECKS + 1))
    local lines
    lines=$(wc -l <"$TMP/$1.err")
    if [ "$lines" != 1 ] || ! grep -qF -- "$2" "$TMP/$1.err"; then
        fail "$3: stderr has $lines lines, expected one line with '$2'"
        show "$1"
    fi
}

# expect_error_lines NAME WANT DESCRIPTION: the run's stderr has WANT lines starting "glcv: error:"
expect_error_lines() {
    CHECKS=$((CHECKS + 1))
    local n
    n=$(grep -c "^glcv: error:" "$TMP/$1.err")
    if [ "$n" != "$2" ]; then
        fail "$3: $n error lines, expected $2"
        show "$1"
    fi
}

# expect_count PATTERN WANT DESCRIPTION: number of files matching a glob
expect_count() {
    CHECKS=$((CHECKS + 1))
    local n
    n=$(compgen -G "$1" | wc -l)
    if [ "$n" != "$2" ]; then
        fail "$3: $n files match $1, expected $2"
    fi
}

# expect_absent PATH DESCRIPTION
expect_absent() {
    CHECKS=$((CHECKS + 1))
    if [ -e "$1" ]; then
        fail "$2: $1 exists"
    fi
}

# free_port [FROM]: a TCP port of the loopback nobody listens on, from FROM (18554) up; tests that
# run at the same time look from different FROMs
free_port() {
    local p from=${1:-18554}
    for p in $(seq "$from" $((from + 100))); do
        (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
    done
}

# blackhole PORT: a listener on PORT that accepts connections and never answers ($HOLE_PID; the caller
# kills it)
blackhole() {
    [ -f "$TMP/blackhole.py" ] || printf '%s\n' 'import socket, sys, time' 's = socket.socket()' \
        's.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)' 's.bind(("127.0.0.1", int(sys.argv[1])))' \
        's.listen(64)' 'time.sleep(600)' >"$TMP/blackhole.py"
    python3 "$TMP/blackhole.py" "$1" >/dev/null 2>&1 &
    HOLE_PID=$!
    local k
    for k in $(seq 100); do (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.05; done
    fail "the listener on $1 did not start"
}

# refuser PORT LOG: a listener on PORT that closes each connection at once, a line in LOG for each
# ($REFUSER_PID; the caller kills it): a camera that is there and never opens, whose attempts are counted
refuser() {
    printf '%s\n' 'import socket, sys' 's = socket.socket()' \
        's.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)' 's.bind(("127.0.0.1", int(sys.argv[1])))' \
        's.listen(64)' 'log = open(sys.argv[2], "a")' \
        'while True:' '    c, _ = s.accept()' '    log.write("accepted\n")' '    log.flush()' '    c.close()' \
        >"$TMP/refuser.py"
    python3 "$TMP/refuser.py" "$1" "$2" >/dev/null 2>&1 &
    REFUSER_PID=$!
    local k
    for k in $(seq 100); do (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null && break; sleep 0.05; done
    for k in $(seq 100); do [ -s "$2" ] && { : >"$2"; return 0; }; sleep 0.05; done
    fail "the listener on $1 did not start"
}

# start_rtsp FILE PORT: tests/rtsp_server ($RTSP) serving FILE in the background ($RTSP_PID), once it
# listens
start_rtsp() {
    "$RTSP" "$1" "$2" >"$TMP/rtsp.out" 2>"$TMP/rtsp.err" &
    RTSP_PID=$!
    local k
    for k in $(seq 100); do
        grep -q ready "$TMP/rtsp.out" 2>/dev/null && return 0
        sleep 0.05
    done
    fail "the RTSP server did not start: $(cat "$TMP/rtsp.err")"
    return 1
}

# testlib_finish TITLE: the summary line; the status of the script (0 when nothing failed)
testlib_finish() {
    echo "$1: $CHECKS checks, $FAILURES failed"
    [ "$FAILURES" -eq 0 ]
}
