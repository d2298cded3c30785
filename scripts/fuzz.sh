#!/usr/bin/env bash
# Runs every libFuzzer target of a build for a bounded time, two at a time:
#   scripts/fuzz.sh BUILD_DIR [SECONDS_EACH]        (default 60)
# Each fuzzer starts from its corpus in tests/fuzz/corpus/<name> (copied: the corpus in the
# repository is not changed) and runs with AddressSanitizer and UndefinedBehaviorSanitizer. A
# crash stops that fuzzer; the script then prints the input that made it (keep it in the corpus
# as a regression input once fixed) and exits 1. Without fuzzers in the build (no clang with
# libFuzzer), it says so and exits 0.
set -uo pipefail
build=$(cd "${1:?usage: scripts/fuzz.sh BUILD_DIR [SECONDS_EACH]}" && pwd)
seconds=${2:-60}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$build/tests/fuzz
names=()
for f in "$root"/tests/fuzz/fuzz_*.c; do
    name=$(basename "$f" .c)
    name=${name#fuzz_}
    [ "$name" = replay_main ] && continue
    [ -x "$dir/fuzz_$name" ] && names+=("$name")
done
if [ ${#names[@]} -eq 0 ]; then
    echo "fuzz.sh: no libFuzzer targets in $dir (clang with libFuzzer not found at configure time)"
    exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run_one() {
    local name=$1
    mkdir -p "$work/$name/corpus" "$work/$name/artifacts"
    cp "$root/tests/fuzz/corpus/$name"/* "$work/$name/corpus/" 2>/dev/null
    (cd "$work/$name" && "$dir/fuzz_$name" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$work/$name/artifacts/" corpus >"$work/$name/log" 2>&1)
    local rc=$?
    local runs
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$name/log" | grep -o '[0-9]*$')
    if [ $rc -ne 0 ]; then
        echo "fuzz_$name: FAILED after ${runs:-?} runs"
        tail -n 40 "$work/$name/log"
        for a in "$work/$name/artifacts"/*; do
            [ -e "$a" ] && { echo "input ($a):"; od -A d -t x1 "$a" | head -n 20; }
        done
        return 1
    fi
    echo "fuzz_$name: ${runs:-?} runs in ${seconds} s, no failure (corpus $(ls "$work/$name/corpus" | wc -l) inputs)"
}
failed=0
for ((i = 0; i < ${#names[@]}; i += 2)); do
    run_one "${names[i]}" >"$work/out_$i" 2>&1 &
    p1=$!
    p2=""
    if [ $((i + 1)) -lt ${#names[@]} ]; then
        run_one "${names[i + 1]}" >"$work/out_$((i + 1))" 2>&1 &
        p2=$!
    fi
    wait $p1 || failed=1
    [ -n "$p2" ] && { wait "$p2" || failed=1; }
    cat "$work/out_$i"
    [ -n "$p2" ] && cat "$work/out_$((i + 1))"
done
exit $failed
