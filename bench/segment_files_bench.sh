#!/bin/bash
# 'glcv segment' over a folder of image files writing PNG masks, end to end (decode, upload, GPU,
# download, encode, write), beside OpenCV's KNN subtractor doing the same on the same files, cores
# and machine in the same run (bench/segment_files_peer.py).
#
# usage: segment_files_bench.sh GLCV DIR [--copies K] [--threads N] [--learn N] [-- GLCV_OPTIONS...]
#   DIR       a folder of image files (e.g. CDnet's highway/input: 1700 JPEG frames of 320x240)
#   --copies  the folder is played K times in a row (links named in order), for runs long enough
#             to time (default 5)
#   --threads worker threads of both (default: all online CPUs)
#   --learn   frames learned from before segmenting (default 30)
#   GLCV_OPTIONS are passed to 'glcv segment' (e.g. --engine cpu)
# PYTHON names the Python with OpenCV (default python3).
# Prints a Markdown table: frames, wall seconds, frames/s of each. The files are read once before
# the timed runs so that both read them from the page cache.
set -euo pipefail
if [ $# -lt 2 ]; then
    sed -n '6,14p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
glcv=$1
dir=$2
shift 2
copies=5
threads=$(getconf _NPROCESSORS_ONLN)
learn=30
extra=()
while [ $# -gt 0 ]; do
    case $1 in
    --copies) copies=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --learn) learn=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "segment_files_bench: unknown option $1" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/frames"
n=0
for ((c = 0; c < copies; c++)); do
    for f in "$dir"/*; do
        case ${f,,} in *.jpg | *.jpeg | *.png | *.bmp | *.ppm | *.pgm) ;; *) continue ;; esac
        n=$((n + 1))
        ext=${f##*.}
        ln -s "$(readlink -f "$f")" "$(printf '%s/frames/%08d.%s' "$tmp" "$n" "$ext")"
    done
done
cat "$tmp"/frames/* >/dev/null
segmented=$((n - learn))

now() { date +%s.%N; }
t0=$(now)
"$glcv" segment --learn "$learn" "$tmp/frames" -o "$tmp/glcv" --threads "$threads" -q "${extra[@]}" >"$tmp/glcv.txt"
t1=$(now)
written=$(find "$tmp/glcv" -name '*_mask.png' | wc -l)
if [ "$written" != "$segmented" ]; then
    echo "segment_files_bench: glcv wrote $written masks, expected $segmented" >&2
    exit 1
fi
glcv_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
"${PYTHON:-python3}" "$here/segment_files_peer.py" "$tmp/frames" "$tmp/knn" --threads "$threads" --learn "$learn" >"$tmp/knn.txt"
knn_s=$(sed -n 's/^opencv-KNN files: [0-9]* frames in \([0-9.]*\) s.*/\1/p' "$tmp/knn.txt")

echo "$(nproc) cores, $threads threads, $n frames ($copies x $dir), $learn learned, $segmented segmented"
echo "glcv summary:"
sed 's/^/    /' "$tmp/glcv.txt"
echo "peer:"
sed 's/^/    /' "$tmp/knn.txt"
echo
echo "| program | frames | wall s (whole process) | frames/s |"
echo "|---|---|---|---|"
row() { awk -v name="$1" -v n="$2" -v s="$3" 'BEGIN { printf "| %s | %d | %.2f | %.0f |\n", name, n, s, n / s }'; }
row "glcv segment ${extra[*]}" "$segmented" "$glcv_s"
row "OpenCV KNN (decode, KNN, PNG level 1)" "$segmented" "$knn_s"
