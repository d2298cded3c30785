#!/usr/bin/env bash
# Regenerates docs/RELIABILITY.md from runs on this machine:
#   scripts/reliability.sh BUILD_DIR [FUZZ_SECONDS] [SOAK_FRAMES]
# BUILD_DIR is a configured and built tree (the fuzzers need clang with libFuzzer; BUILD_DIR of a
# -DGLCV_SANITIZE=ON build runs the fault tests under the sanitizers). It runs every fuzzer for
# FUZZ_SECONDS (default 600), the fault and contract tests, and soak_bench for SOAK_FRAMES (default
# 100000); soak results of other machines (the GPU machine's) are added from files named in
# GLCV_SOAK_FILES ("label=path ..." of soak_bench's output); GLCV_SOAK_LOCAL=path uses a finished
# local soak run's output instead of running it again. The stream tool's soak (bench/stream_soak.sh,
# SOAK_FRAMES frames) likewise: GLCV_STREAM_SOAK_LOCAL=path, GLCV_STREAM_SOAK_FILES="label=path ...".
# The service's soak (bench/serve_soak.sh, SERVE_SOAK_SECONDS, default 3600): GLCV_SERVE_SOAK_LOCAL=path.
set -uo pipefail
build=$(cd "${1:?usage: scripts/reliability.sh BUILD_DIR [FUZZ_SECONDS] [SOAK_FRAMES]}" && pwd)
fuzz_seconds=${2:-600}
soak_frames=${3:-100000}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$root/docs/RELIABILITY.md
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

machine="$(nproc) cores, $(uname -sm), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
when=$(date -u '+%Y-%m-%d %H:%M UTC')

echo "reliability.sh: fuzzing ($fuzz_seconds s each)"
bash "$root/scripts/fuzz.sh" "$build" "$fuzz_seconds" >"$work/fuzz.txt" 2>&1
fuzz_rc=$?
echo "reliability.sh: fault and contract tests"
tests='test_context_lost|test_contracts|test_image$|test_cli$|test_cli_media|test_track_cli$|test_track_cpu|test_match_cpu|test_media$|test_correlate$|fuzz_'
(cd "$build" && ctest -R "$tests" >"$work/ctest.txt" 2>&1)
ctest_summary=$(grep -E 'tests passed' "$work/ctest.txt")
if [ -n "${GLCV_SOAK_LOCAL:-}" ]; then
    cp "$GLCV_SOAK_LOCAL" "$work/soak.txt"
else
    echo "reliability.sh: soak ($soak_frames frames)"
    "$build/bench/soak_bench" --frames "$soak_frames" --samples 50 --size 160x120 >"$work/soak.txt" 2>&1
fi
if [ -n "${GLCV_STREAM_SOAK_LOCAL:-}" ]; then
    cp "$GLCV_STREAM_SOAK_LOCAL" "$work/stream_soak.txt"
else
    echo "reliability.sh: stream soak ($soak_frames frames)"
    bash "$root/bench/stream_soak.sh" "$build" --frames "$soak_frames" --interval 5 >"$work/stream_soak.txt" 2>&1
fi
if [ -n "${GLCV_SERVE_SOAK_LOCAL:-}" ]; then
    cp "$GLCV_SERVE_SOAK_LOCAL" "$work/serve_soak.txt"
else
    echo "reliability.sh: service soak (${SERVE_SOAK_SECONDS:-3600} s)"
    bash "$root/bench/serve_soak.sh" "$build" --seconds "${SERVE_SOAK_SECONDS:-3600}" >"$work/serve_soak.txt" 2>&1
fi
sanitized=$(grep -q 'GLCV_SANITIZE:BOOL=ON' "$build/CMakeCache.txt" && echo "yes" || echo "no")

stream_soak_section() { # label file
    echo "### $1"
    echo
    grep -E '^stream_soak:|^    ' "$2" | sed 's/^ *//; s/^/    /'
    echo
    sed -n '/^| server/,/^[^|]/p' "$2" | grep '^|'
    echo
    sed -n '/^| steady viewer/,/^[^|]/p' "$2" | grep '^|'
    echo
}

soak_section() { # label file
    echo "### $1"
    echo
    grep -E '^soak_bench:|^GL:|^CUDA:' "$2" | sed 's/^/    /'
    echo
    sed -n '/^| quantity/,/^$/p' "$2"
    grep -E 'frames in .* s' "$2"
    echo
}

{
cat <<EOF
# Reliability

glcv promises that bad input gets a clear error and loses nothing, and that the library never
aborts or prints except through its logger. This page says how that is checked and what the last
runs found. It is written by \`scripts/reliability.sh\` (last: $when, on $machine;
build \`$(basename "$build")\`, sanitizers: $sanitized); the sections below the table are its output.

## Input classes and how each is checked

| class | examples | checked by |
|---|---|---|
| image files | corrupt, truncated, empty, a folder, a FIFO or a device (refused at once, not read), not an image, decompression bombs (a 33-byte PNG or a 23-byte JPEG whose header claims 16384x16384 or 32768x32768) | \`fuzz_image_load\` (libFuzzer, every stb format); \`test_image\` (\`test_load_errors\`, \`test_not_regular\`, \`test_load_limits\`); \`test_cli\` (a bomb as \`--bg\`: exit 1, nothing written; a frame replaced by a FIFO mid-run: exit 1 naming it); the limit: \`glcv_image_set_max_pixels\`, \`--max-pixels\` (default 8192x8192) |
| histogram files | any bytes, a folder, bins out of range, NaN values | \`fuzz_track_hist\`; \`test_track_cpu\` |
| command lines | every option kind, values out of range, reals that are 0 in single precision (\`--Ts 1e-50\`), products of flags (\`--bins 180 --sat-bins 256\`) | \`fuzz_cli_args\`; \`test_cli\`, \`test_track_cli\` (usage errors, exit 2, nothing written) |
| network input | frame-delta packets, the stream handshake; the service's YAML files, HTTP requests (methods, bodies, tokens), live-view WebSockets without or with a wrong token, brokers that go away mid-run | \`fuzz_delta_packet\`, \`fuzz_stream_handshake\`; \`test_stream_hostile\`; \`test_serve_config\` (118 broken files, each a one-line error naming file and line), \`test_serve_http\`, \`test_serve_live\` (refused, nothing of the camera sent), \`test_serve_restart\` (brokers restarted: nothing lost) |
| API arguments | NULL, sizes, strides below the width, rectangles near INT_MAX, NaN parameters, more devices than present | \`test_match_cpu\` (score-map strides), \`test_track_cpu\` (windows and regions beyond +-2^24, box bounds of huge or NaN boxes), \`test_correlate\`, the modules' API tests |
| every public function's contract | one bad argument a row, per class: NULL pointers, sizes and counts below 1, sizes whose products overflow, strides below a row, NaN and inf, enums out of range, no GL context current | \`test_contracts\` (the exact status, out-pointers NULL or unchanged, a message naming the argument; CPU engines, and objects of a destroyed Mesa EGL context; plain and under AddressSanitizer) |
| call order and GL contexts | objects used or destroyed after their context was destroyed, with none current, with another (new) one current; a context that cannot be made (eglInitialize, eglCreateContext, eglCreatePbufferSurface or eglMakeCurrent failing, injected through a private hook) or that the GPU lost (EGL_CONTEXT_LOST) | \`test_context_lost\` (every call NO_CONTEXT, no GL call; creation fails naming the EGL call, the AUTO engine then gives the CPU's exact mask; a lost context is named, its objects refuse every call and go without a GL call, a new context works; under AddressSanitizer in the sanitizer suite) |
| media sources | any bytes as a video file (every demuxer and decoder FFmpeg picks); timestamp jumps forward and back in a live source; truncated and corrupted video files; videos of frames above the pixel limit; empty locations, lavfi graphs without video; a network source (a camera) cut by a reset or stalled mid-stream | \`fuzz_media_open\`; \`test_media\` (16 frames with two jumps take 0.8 s, not 10 s a frame; a truncated file's missing frames counted as decode errors; LIMIT at open; a reset: the frames before it whole, then IO; a stall: IO after \`stall_timeout\`, and closing ends the wait at once); \`test_cli_media\` (cut and stalled loopback streams: exit 1 naming the cause, the masks written equal the file's) |
| output | a disk that fills while masks are written (a file size limit) | \`test_cli\` (exit 1 naming the file, no temporary file left, every mask written decodes) |
| long runs | 100,000 frames of segment + track, objects made again every 10,000 (or 1,000) frames; 100,000 frames streamed on loopback to a viewer while another joins and leaves every 2 s; \`glcv serve\` for an hour with 8 RTSP cameras that end and reconnect, a broker and live-view visits | \`bench/soak_bench\` (below): host memory, descriptors, threads, GL and CUDA memory; \`bench/stream_soak.sh\`: the server's and the viewer's memory, descriptors and threads; \`bench/serve_soak.sh\`: the service's |

Every change runs the whole test suite plain and with AddressSanitizer, UndefinedBehaviorSanitizer
and LeakSanitizer (\`scripts/build.sh test\`, also in CI), then every fuzzer for 60 s
(\`scripts/fuzz.sh\`). A crash input a fuzzer finds goes into \`tests/fuzz/corpus/<target>\` once
fixed, so that its replay test keeps it fixed.

Not covered yet: a named pipe (FIFO) that stalls is read without the stall bound (FFmpeg's file
reads block); a real camera unplugged (simulated above by a network stream cut mid-way).

## Fuzzing (\`scripts/fuzz.sh $fuzz_seconds\`)

| target | result |
|---|---|
EOF
grep -E '^fuzz_' "$work/fuzz.txt" | sed -E 's/^(fuzz_[a-z_]+): (.*)$/| \1 | \2 |/'
echo
[ $fuzz_rc -eq 0 ] || { echo "**A fuzzer failed:**"; echo; echo '```'; tail -n 60 "$work/fuzz.txt"; echo '```'; }
cat <<EOF

## Fault and contract tests (\`ctest -R '$tests'\`)

$ctest_summary

## Soak (\`bench/soak_bench\`)

A steady slope is a leak; the C library's and the GL driver's allocators rise to a high-water mark
and stay there (a slope over the whole run, none over the last half). Host memory (RSS), open
file descriptors and threads are the process's; GL memory (GL_NVX_gpu_memory_info) and CUDA
memory (cudaMemGetInfo) are the device's.

EOF
soak_section "This machine ($machine)" "$work/soak.txt"
for entry in ${GLCV_SOAK_FILES:-}; do
    label=${entry%%=*}
    soak_section "${label//_/ }" "${entry#*=}"
done
cat <<EOF

## The stream tool on loopback (\`bench/stream_soak.sh\`)

\`glcv stream serve\` sends the synthetic scene as fast as it encodes to one viewer for the whole
run, while a second viewer joins and leaves every few seconds (a connection, a handshake, a
keyframe and a teardown each time); the server's and the steady viewer's memory, descriptors and
threads are sampled from /proc.

EOF
stream_soak_section "This machine ($machine)" "$work/stream_soak.txt"
for entry in ${GLCV_STREAM_SOAK_FILES:-}; do
    label=${entry%%=*}
    stream_soak_section "${label//_/ }" "${entry#*=}"
done
cat <<EOF

## The camera service (\`bench/serve_soak.sh\`)

\`glcv serve\` runs 8 RTSP cameras (gst-rtsp-server on the loopback; a 2-minute scene that ends and
is opened again, so reconnections are part of the run) with tracked objects, events to mosquitto
(a subscriber counts them), \`/metrics\` scraped every sample, and a browser-like viewer of the live
view (\`tests/live_client\`) that watches a camera for 10 s, leaves, and comes back 10 s later on the
next one (a WebSocket, a handshake, a hub and a snapshot each time; a hub stops 30 s after its
last viewer). The service's memory, descriptors and threads are sampled from /proc every 10 s.

### This machine ($machine)

EOF
grep -E '^serve_soak:|^    ' "$work/serve_soak.txt" | sed 's/^ *//; s/^/    /'
echo
grep '^|' "$work/serve_soak.txt"
} >"$out"
echo "reliability.sh: wrote $out"
[ $fuzz_rc -eq 0 ]
