# shellcheck shell=bash
# Sourced by the scripts that start 'glcv stream serve --port 0' (tests/test_stream.sh,
# bench/stream_bench.sh, bench/stream_soak.sh).
#
# stream_port ERRFILE PID: waits (up to 60 s) until the server of process PID writes its
# "glcv: listening on ... port N" line to ERRFILE and prints N; returns 1 when the process ends
# first or the time runs out.
stream_port() {
    local err=$1 pid=$2 i port
    for i in $(seq 1 600); do
        port=$(sed -n 's/^glcv: listening on .* port \([0-9][0-9]*\).*/\1/p' "$err" 2>/dev/null | head -n 1)
        if [ -n "$port" ]; then
            echo "$port"
            return 0
        fi
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

# stream_cleanup_at_exit: from now on, at exit, the processes whose pids the caller appends to the
# array PIDS are killed (stopped ones continued first) and the folder TMP is removed.
stream_cleanup_at_exit() {
    PIDS=()
    trap stream_cleanup EXIT
}

stream_cleanup() {
    local p
    for p in "${PIDS[@]}"; do
        kill -CONT "$p" 2>/dev/null
        kill -KILL "$p" 2>/dev/null
    done
    rm -rf "$TMP"
}
