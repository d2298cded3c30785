#!/usr/bin/env bash
# Compressed cameras end to end on this host, with the floors and FFmpeg's peers beside them, in one
# run (docs/PERFORMANCE.md, "Compressed cameras"):
#
#   bash bench/decode_bench.sh BUILD VGA_FILE HD_FILE [--sources N] [--hd-sources M] [--gpus G]
#                             [--seconds S] [--quick]
#
# VGA_FILE: a 640x480 H.264 video (cameras at 25 fps); HD_FILE: a 1920x1080 H.264 video (30 fps).
# Make them from any video, e.g. OpenCV's vtest.avi, as IP cameras send it (no B-frames):
#   ffmpeg -i vtest.avi -vf scale=640:480,fps=25 -c:v libx264 -crf 23 -bf 0 -g 50 vga.mkv
#   ffmpeg -i vtest.avi -vf scale=1920:1080,fps=30 -c:v libx264 -preset veryfast -crf 23 -bf 0 -g 60 hd.mkv
# Rows:
#   ffmpeg cpu      FFmpeg's CPU decoder on every processor: one single-threaded ffmpeg process per
#                   processor decoding the file to null (frames/s of all of them)
#   ffmpeg cuda     ffmpeg -hwaccel cuda -hwaccel_output_format cuda, one process per NVDEC engine
#                   and per processor up to 16, to null: FFmpeg's own GPU decoding
#   decode          glcv's decoders alone (the floor of the rows below): NVDEC, CPU
#   convert         + the texture set's conversion (one CUDA launch, one GL hand-over per set)
#   vsam / eth      + VSAM background subtraction (VGA) or the ETH segmenter (1080p), masks read back
#                   (masks) or kept as textures (tex); auto (a set's default: at most 64 NVDEC
#                   sessions per GPU for frames below 1 Mpixel, the rest on CPU threads), NVDEC
#                   only, CPU only, both
# --gpus G (default 1; 2 adds the rows on two GPUs). N (default 1000) VGA sources, M (default 130)
# 1080p sources. --quick: fewer rows (the end-to-end ones at N and M only).
set -euo pipefail

build=${1:?usage: decode_bench.sh BUILD VGA_FILE HD_FILE [options]}
vga=${2:?VGA_FILE}
hd=${3:?HD_FILE}
shift 3
sources=1000
hd_sources=130
gpus=1
seconds=5
quick=0
while [ $# -gt 0 ]; do
    case $1 in
        --sources) sources=$2; shift 2 ;;
        --hd-sources) hd_sources=$2; shift 2 ;;
        --gpus) gpus=$2; shift 2 ;;
        --seconds) seconds=$2; shift 2 ;;
        --quick) quick=1; shift ;;
        *) echo "decode_bench.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
bench=$build/bench/decode_bench
[ -x "$bench" ] || { echo "decode_bench.sh: $bench not built (glcv needs FFmpeg)" >&2; exit 1; }
cpus=$(nproc)

frames_of() { # frames in a video, decoded
    ffmpeg -hide_banner -nostats -loglevel error -i "$1" -map 0:v:0 -f null -progress pipe:1 - 2>/dev/null |
        awk -F= '$1 == "frame" { f = $2 } END { print f + 0 }'
}

# P processes of `ffmpeg ARGS -i FILE -f null -` at once: frames/s of all of them
ffmpeg_rate() {
    local procs=$1 file=$2
    shift 2
    local frames t0 t1
    frames=$(frames_of "$file")
    t0=$(date +%s.%N)
    for _ in $(seq "$procs"); do
        ffmpeg -hide_banner -nostats -loglevel error "$@" -i "$file" -f null - &
    done
    wait
    t1=$(date +%s.%N)
    awk -v f="$frames" -v p="$procs" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", f * p / (b - a) }'
}

row() { printf '%-44s %s\n' "$1" "$2"; }

echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1) x $(nvidia-smi -L 2>/dev/null | wc -l), $cpus processors, $(date -u +%Y-%m-%d)"
for f in "$vga" "$hd"; do
    echo "== $(basename "$f"): $(stat -c %s "$f") bytes, $(frames_of "$f") frames"
done

echo "== peers: FFmpeg decoding to null"
row "ffmpeg cpu VGA, $cpus processes x 1 thread" "$(ffmpeg_rate "$cpus" "$vga" -threads 1) frames/s"
row "ffmpeg cuda VGA, 16 processes" "$(ffmpeg_rate 16 "$vga" -hwaccel cuda -hwaccel_output_format cuda) frames/s"
row "ffmpeg cpu 1080p, $cpus processes x 1 thread" "$(ffmpeg_rate "$cpus" "$hd" -threads 1) frames/s"
row "ffmpeg cuda 1080p, 16 processes" "$(ffmpeg_rate 16 "$hd" -hwaccel cuda -hwaccel_output_format cuda) frames/s"

run() { "$bench" "$@" --seconds "$seconds" || echo "(failed: decode_bench $*)"; }

echo "== glcv, VGA H.264 at 25 fps ($sources sources)"
if [ "$quick" = 0 ]; then
    for n in 16 64 256; do run "$vga" --work decode --decoder nvdec --sources "$n" --label floor; done
    run "$vga" --work decode --decoder nvdec --sources "$sources" --label floor
    run "$vga" --work decode --decoder cpu --sources "$sources" --label floor
    run "$vga" --work decode --decoder auto --sources "$sources" --label floor
    run "$vga" --work convert --decoder nvdec --sources "$sources"
fi
run "$vga" --work vsam --decoder auto --sources "$sources"
run "$vga" --work vsam --decoder nvdec --sources "$sources"
run "$vga" --work vsam --decoder cpu --sources "$sources"
run "$vga" --work vsam --decoder both --sources "$sources"
run "$vga" --work vsam --decoder both --sources "$sources" --no-download
echo "== glcv, 1080p H.264 at 30 fps ($hd_sources sources)"
[ "$quick" = 0 ] && run "$hd" --work decode --decoder nvdec --sources "$hd_sources" --rate 30 --label floor
run "$hd" --work eth --decoder auto --sources "$hd_sources" --rate 30
run "$hd" --work eth --decoder nvdec --sources "$hd_sources" --rate 30
run "$hd" --work eth --decoder both --sources "$hd_sources" --rate 30 --cpu-share 0.1
if [ "$gpus" -gt 1 ]; then
    echo "== $gpus GPUs (and one, in the same run)"
    run "$vga" --work vsam --decoder auto --sources "$sources" --gpus "$gpus"
    run "$vga" --work vsam --decoder nvdec --sources "$((sources * gpus))" --gpus "$gpus"
    run "$vga" --work decode --decoder nvdec --sources "$((sources * gpus))" --gpus "$gpus" --label floor
    run "$hd" --work eth --decoder nvdec --sources "$((hd_sources * gpus))" --gpus "$gpus" --rate 30
fi
