#!/usr/bin/env bash
# Makes a short sample video of glcv's built-in synthetic scene (a textured background, moving
# coloured and dark objects, sensor noise, a slow change of illumination), for the examples that
# take a video file:
#
#   bash scripts/sample-video.sh OUT [--frames N] [--size WxH] [--rate FPS] [--glcv PATH]
#
# OUT's extension picks the container (.mkv, .mp4, .avi, ...). The frames come from
# 'glcv synth' (N frames, default 60, of WxH, default 320x240: always the same pixels) and are
# encoded by ffmpeg (Debian: ffmpeg) at FPS frames per second (default 10) as H.264 (libx264), or
# MPEG-4 part 2 where this ffmpeg has no libx264; 4:2:0, as cameras send. The glcv tool is
# --glcv's, else $GLCV, else 'glcv' on PATH, else build/release/tools/glcv of this repository.
# OpenCV's vtest.avi (768x576, 795 frames of people walking) is a real-world alternative.
set -euo pipefail

die() {
    printf 'sample-video.sh: error: %s\n' "$*" >&2
    exit 1
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=""
frames=60
size=320x240
rate=10
glcv=${GLCV:-}
while [ $# -gt 0 ]; do
    case "$1" in
        --frames) frames=${2:?--frames needs a value}; shift 2 ;;
        --size) size=${2:?--size needs a value}; shift 2 ;;
        --rate) rate=${2:?--rate needs a value}; shift 2 ;;
        --glcv) glcv=${2:?--glcv needs a value}; shift 2 ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"; exit 0 ;;
        -*) die "unknown option $1 (see --help)" ;;
        *) [ -z "$out" ] || die "one output file only ('$out' and '$1')"; out=$1; shift ;;
    esac
done
[ -n "$out" ] || die "usage: bash scripts/sample-video.sh OUT [--frames N] [--size WxH] [--rate FPS] [--glcv PATH]"
[[ $rate =~ ^[1-9][0-9]*$ ]] || die "--rate must be a positive integer (is '$rate')"

if [ -z "$glcv" ]; then
    if command -v glcv >/dev/null 2>&1; then
        glcv=glcv
    elif [ -x "$root/build/release/tools/glcv" ]; then
        glcv=$root/build/release/tools/glcv
    else
        die "no glcv tool: build it (bash scripts/build.sh run) or give --glcv PATH"
    fi
fi
command -v ffmpeg >/dev/null 2>&1 || die "ffmpeg not found (Debian: apt-get install ffmpeg)"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$glcv" synth -o "$tmp" --frames "$frames" --size "$size" --quiet ||
    die "'$glcv synth' failed"

codec=(-c:v libx264 -preset medium -crf 18)
encoders=$(ffmpeg -hide_banner -encoders 2>/dev/null || true)
[[ $encoders == *" libx264 "* ]] || codec=(-c:v mpeg4 -q:v 2)
# the frames in name order: frame_0000.png, frame_0001.png ... (one width for all)
ffmpeg -nostdin -hide_banner -loglevel error -y -framerate "$rate" -pattern_type glob -i "$tmp/frame_*.png" \
    "${codec[@]}" -pix_fmt yuv420p "$out" || die "ffmpeg could not write $out"
echo "sample-video.sh: $out: $frames frames of ${size} at $rate fps (${codec[1]})"
