#!/bin/bash
# glcvsegment in a GStreamer pipeline against 'glcv segment' on the same frames: the element hands
# the pipeline's texture to the segmenter and draws the mask texture into its output, so it should
# cost what the segmenter's GPU passes cost, with no upload or read-back of its own.
#
# usage: gst_bench.sh BUILD_DIR [--size WxH] [--frames N] [--learn L] [--engine E]
#   BUILD_DIR  a build folder with tools/glcv and gst/libgstglcv.so
#   --size     frame size (default 1920x1080)
#   --frames   frames of the synthetic sequence, written once as PNG files (default 200)
#   --learn    frames the background is learned from, in every run (default 10)
#   --engine   the segmenter's engine: auto, fragment, compute (default auto)
#   --resident R  the resident rows push R and 3R frames (default 1000)
# Rows: 'glcv segment' on the files (decode, upload, passes, mask read back; no PNG written), the
# pipeline on the files with and without glcvsegment (pngdec, queue, glupload, glcolorconvert), and one
# frame kept on the GPU (imagefreeze after glcolorconvert, 3R times) with and without glcvsegment,
# and through gleffects effect=identity, GStreamer's own GL filter, as the cost of a GL filter
# element that draws a new output texture; the time per frame of each comes from its runs of 3R and
# of R frames (the difference over 2R frames: set-up and learning cancel). Each pipeline ends in fakesink
# and is timed by gst-launch-1.0 (PLAYING to end of stream, so the GL context's creation is not
# counted). Without a display: GST_GL_PLATFORM=egl GST_GL_WINDOW=egl-device GST_GL_API=opengl3
# (the defaults here). Prints a Markdown table.
set -euo pipefail
if [ $# -lt 1 ]; then
    sed -n '6,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
build=$(cd "$1" && pwd)
shift
size=1920x1080
frames=200
learn=10
engine=auto
resident_frames=1000
while [ $# -gt 0 ]; do
    case $1 in
    --size) size=$2; shift 2 ;;
    --frames) frames=$2; shift 2 ;;
    --learn) learn=$2; shift 2 ;;
    --engine) engine=$2; shift 2 ;;
    --resident) resident_frames=$2; shift 2 ;;
    *) echo "gst_bench: unknown option $1" >&2; exit 2 ;;
    esac
done
glcv=$build/tools/glcv
[ -x "$glcv" ] || { echo "gst_bench: no $glcv" >&2; exit 1; }
[ -f "$build/gst/libgstglcv.so" ] || { echo "gst_bench: no $build/gst/libgstglcv.so" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GST_PLUGIN_PATH=$build/gst
export GST_REGISTRY=$tmp/registry.bin
export GST_GL_PLATFORM=${GST_GL_PLATFORM:-egl}
export GST_GL_WINDOW=${GST_GL_WINDOW:-egl-device}
export GST_GL_API=${GST_GL_API:-opengl3}

"$glcv" synth -o "$tmp/seq" --frames "$frames" --size "$size" >/dev/null
cat "$tmp"/seq/frame_*.png >/dev/null # into the page cache for every run

# The CLI: its summary gives the wall time, and per frame the segmenter's thread and GPU passes.
"$glcv" segment --learn "$learn" --engine "$engine" --no-masks --timing "$tmp"/seq/frame_*.png \
    -o "$tmp/cli" >"$tmp/cli.txt" 2>"$tmp/cli.err"
cli_wall=$(sed -n 's/^wall time: *\([0-9.]*\) s.*/\1/p' "$tmp/cli.txt")
cli_engine=$(sed -n 's/^frames: .* engine \([a-z]*\).*/\1/p' "$tmp/cli.txt")
cli_frame=$(sed -n 's/^frame time: mean [0-9.]* ms, median \([0-9.]*\) ms.*/\1/p' "$tmp/cli.txt")
cli_gpu=$(sed -n 's/^ *GPU passes (timer queries) *[0-9.]* *\([0-9.]*\).*/\1/p' "$tmp/cli.txt")

# time_pipeline NAME PIPELINE...: seconds from PLAYING to end of stream (with GST_DEBUG=$debug)
time_pipeline() {
    local name=$1
    shift
    if ! GST_DEBUG=${debug:-} GST_DEBUG_NO_COLOR=1 gst-launch-1.0 "$@" >"$tmp/$name.txt" 2>&1; then
        echo "gst_bench: pipeline $name failed:" >&2
        cat "$tmp/$name.txt" >&2
        exit 1
    fi
    sed -n 's/^Execution ended after \([0-9]*\):\([0-9]*\):\([0-9.]*\)$/\1 \2 \3/p' "$tmp/$name.txt" |
        awk '{ printf "%.3f", $1 * 3600 + $2 * 60 + $3 }'
}
# shellcheck disable=SC2054 # the commas are in caps
files=(multifilesrc "location=$tmp/seq/frame_%04d.png" caps=image/png,framerate=25/1 ! pngdec ! queue
    ! glupload ! glcolorconvert)
# resident N: one frame uploaded once and pushed N times (imagefreeze after glcolorconvert)
resident() {
    # shellcheck disable=SC2054
    RESIDENT=(multifilesrc "location=$tmp/seq/frame_0000.png" num-buffers=1 caps=image/png,framerate=25/1
        ! pngdec ! glupload ! glcolorconvert ! imagefreeze "num-buffers=$1")
}
element=(glcvsegment "learn-frames=$learn" "engine=$engine")
t_files=$(time_pipeline files "${files[@]}" ! fakesink)
t_files_seg=$(time_pipeline files_seg "${files[@]}" ! "${element[@]}" ! fakesink)
# Per frame on the GPU: the resident runs of R and of 3R frames; their difference over 2R frames is
# the cost of a frame alone (the context's creation, the learning and the first frame's set-up are in
# both). The same for the control filter. The first runs also log the GL renderer and the engine.
r1=$resident_frames
r3=$((3 * resident_frames))
resident "$r3"
t_res=$(time_pipeline resident "${RESIDENT[@]}" ! fakesink)
t_res_seg=$(time_pipeline resident_seg "${RESIDENT[@]}" ! "${element[@]}" ! fakesink)
# the control: a GL filter of GStreamer's own that draws its input into a new output texture, as
# glcvsegment draws its mask (the cost of being a GL filter element, without glcv)
t_res_filter=$(time_pipeline resident_filter "${RESIDENT[@]}" ! gleffects effect=identity ! fakesink)
resident "$r1"
t_res_seg_short=$(debug=glcv:4,glcontext:4 time_pipeline resident_seg_short "${RESIDENT[@]}" ! "${element[@]}" \
    ! fakesink)
t_res_filter_short=$(time_pipeline resident_filter_short "${RESIDENT[@]}" ! gleffects effect=identity ! fakesink)

gst_engine=$(sed -n 's/.*segmenter [0-9]*x[0-9]*, engine \([a-z]*\).*/\1/p' "$tmp/resident_seg_short.txt" | head -1)
gst_renderer=$(sed -n 's/.*GL_RENDERER: \(.*\)$/\1/p' "$tmp/resident_seg_short.txt" | head -1)
gst_version=$(sed -n 's/.*GL_VERSION: \(.*\)$/\1/p' "$tmp/resident_seg_short.txt" | head -1)
row() { # row LABEL SECONDS [FRAMES]
    awk -v l="$1" -v s="$2" -v n="${3:-$frames}" \
        'BEGIN { printf "| %s | %d | %.3f | %.1f | %.2f |\n", l, n, s, n / s, 1000 * s / n }'
}
echo "glcvsegment vs glcv segment: $frames frames of $size, background learned from $learn, engine $engine" \
    "(the element used $gst_engine, the CLI $cli_engine); $(date -u +%Y-%m-%d)"
echo "GStreamer's GL: $gst_renderer, $gst_version; the CLI's: $(sed -n 's/^glcv: engine [a-z]* on //p' "$tmp/cli.err")"
echo
echo "| path | frames | wall s | frames/s | ms/frame |"
echo "|---|---|---|---|---|"
row "glcv segment, PNG files (decode, upload, passes, mask read back)" "$cli_wall"
row "pipeline, PNG files -> glupload -> glcolorconvert -> fakesink" "$t_files"
row "pipeline, PNG files -> ... -> glcvsegment -> fakesink" "$t_files_seg"
row "pipeline, one resident frame (imagefreeze) -> fakesink" "$t_res" "$r3"
row "pipeline, one resident frame -> gleffects identity (a GL filter, no glcv) -> fakesink" "$t_res_filter" "$r3"
row "pipeline, one resident frame -> glcvsegment -> fakesink" "$t_res_seg" "$r3"
echo
awk -v a="$t_res_seg_short" -v b="$t_res_seg" -v c="$t_res_filter_short" -v d="$t_res_filter" -v n="$((r3 - r1))" \
    -v f="$cli_frame" -v g="$cli_gpu" 'BEGIN {
    printf "per frame on the GPU ((3R-frame run - R-frame run) / 2R, R = %d): glcvsegment %.3f ms, ", n / 2, 1000 * (b - a) / n
    printf "gleffects identity %.3f ms; glcv segment per frame: %s ms (upload + passes + wait, median), ", 1000 * (d - c) / n, f
    printf "GPU passes %s ms (median)\n", g }'
