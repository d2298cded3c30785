#!/bin/bash
# 'glcv match' and 'glcv correlate' on OpenCV's sample images: a crop of messi5.jpg is found where
# it was cut (every metric, top-k, ROI, map), tmpl.png with mask.png is found where it was drawn,
# correlation gives 1 / -1 for the face against itself / its negative; usage errors exit 2, file
# errors 1. Runs on the engine named, cpu or cuda. Exits 77 when the samples are missing, and with
# cuda when no CUDA device can be had.
# Usage: test_match_cli.sh GLCV TEST_MATCH_FIXTURE DATA_DIR CUDA_PROBE cpu|cuda
set -u
glcv=$1
fixture=$2
data=$3
probe=$4
engine=${5:-}
if [ "$engine" != cpu ] && [ "$engine" != cuda ]; then
    echo "usage: test_match_cli.sh GLCV TEST_MATCH_FIXTURE DATA_DIR CUDA_PROBE cpu|cuda" >&2
    exit 2
fi
if [ "$engine" = cuda ]; then
    "$probe"
    rc=$?
    [ $rc = 0 ] || exit $rc
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# expect STATUS COMMAND...: runs the command, stdout to $tmp/out, stderr to $tmp/err
expect() {
    local want=$1
    shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    local got=$?
    if [ "$got" != "$want" ]; then
        fail "exit $got (want $want): $*"
        sed 's/^/  | /' "$tmp/err" >&2
    fi
}

first_line() { head -n 1 "$tmp/out"; }

"$fixture" "$data" "$tmp" >"$tmp/positions"
rc=$?
if [ $rc = 77 ]; then
    cat "$tmp/positions"
    exit 77
fi
[ $rc = 0 ] || { echo "fixture failed" >&2; exit 1; }
read -r _ fx fy < <(grep '^face' "$tmp/positions")
read -r _ sx sy < <(grep '^scene' "$tmp/positions")
m() { "$glcv" match --engine "$engine" -q "$@"; }

# the engine line names the engine asked for
expect 0 "$glcv" match --engine "$engine" "$data/messi5.jpg" "$tmp/face.png"
grep -q "^glcv: match engine $engine" "$tmp/err" || fail "match --engine $engine: $(head -n 1 "$tmp/err")"

# the crop of messi5.jpg, every metric
expect 0 m "$data/messi5.jpg" "$tmp/face.png"
[ "$(first_line)" = "$fx,$fy,0" ] || fail "sad: got '$(first_line)', want '$fx,$fy,0'"
for metric in ssd linf; do
    expect 0 m "$data/messi5.jpg" "$tmp/face.png" --metric $metric
    [ "$(first_line)" = "$fx,$fy,0" ] || fail "$metric: got '$(first_line)', want '$fx,$fy,0'"
done
expect 0 m "$data/messi5.jpg" "$tmp/face.png" --metric=zncc --gray
[ "$(first_line)" = "$fx,$fy,1.000000" ] || fail "zncc gray: got '$(first_line)'"

# top-k: k lines, best first, apart by at least the suppression distance
expect 0 m "$data/messi5.jpg" "$tmp/face.png" --top 4 --nms 20
[ "$(wc -l <"$tmp/out")" = 4 ] || fail "--top 4: $(wc -l <"$tmp/out") lines"
awk -F, -v d=20 '{x[NR]=$1; y[NR]=$2; s[NR]=$3}
    END { for (i = 2; i <= NR; i++) { if (s[i] < s[i-1]) exit 1;
          for (j = 1; j < i; j++) { dx = x[i]-x[j]; dy = y[i]-y[j]; if (dx < 0) dx = -dx; if (dy < 0) dy = -dy;
                                     if (dx < d && dy < d) exit 1 } } }' "$tmp/out" || fail "--top 4: order or suppression wrong"

# a ROI without the face finds something else; one around it finds the face
expect 0 m "$data/messi5.jpg" "$tmp/face.png" --roi 300,0,248,342
first=$(first_line)
[ "${first%,*}" != "$fx,$fy" ] && [ "${first%%,*}" -ge 300 ] || fail "--roi away from the face: got '$first'"
expect 0 m "$data/messi5.jpg" "$tmp/face.png" --roi $((fx - 5)),$((fy - 7)),70,80
[ "$(first_line)" = "$fx,$fy,0" ] || fail "--roi around the face: got '$(first_line)'"

# the map and the timing line
expect 0 m "$data/messi5.jpg" "$tmp/face.png" --map "$tmp/map.png" --repeat 5
[ -s "$tmp/map.png" ] || fail "--map wrote nothing"
grep -q '^# time per match: best [0-9.]* ms, median [0-9.]* ms over 5 runs' "$tmp/out" || fail "--repeat: no timing line"
expect 0 "$glcv" compare "$tmp/map.png" "$tmp/map.png"

# tmpl.png with mask.png, drawn into messi5.jpg through the mask
expect 0 m "$tmp/scene.png" "$data/tmpl.png" --mask "$data/mask.png"
[ "$(first_line | cut -d, -f1,2)" = "$sx,$sy" ] || fail "tmpl.png + mask.png: got '$(first_line)', want $sx,$sy"
expect 0 m "$tmp/scene.png" "$data/tmpl.png" --mask "$data/mask.png" --metric zncc
[ "$(first_line | cut -d, -f1,2)" = "$sx,$sy" ] || fail "tmpl.png + mask.png, zncc: got '$(first_line)'"

# errors
expect 2 m "$data/messi5.jpg" "$tmp/face.png" --metric l3
expect 2 m "$data/messi5.jpg" "$tmp/face.png" --roi 1,2,3
expect 2 m "$data/messi5.jpg" "$tmp/face.png" --top 0
expect 2 m "$data/messi5.jpg" "$tmp/face.png" --frobnicate
expect 2 m "$data/messi5.jpg"
expect 2 "$glcv" match "$data/messi5.jpg" "$tmp/face.png" --engine gpu
expect 1 m "$data/messi5.jpg" "$tmp/nonexistent.png"
expect 1 m "$tmp/face.png" "$data/messi5.jpg"
expect 1 m "$tmp/scene.png" "$data/tmpl.png" --mask "$tmp/face.png"
expect 0 "$glcv" match --help
grep -q 'usage: glcv match' "$tmp/out" || fail "match --help"

# correlate: 1 with itself, -1 with the negative, a folder, the CSV file
c() { "$glcv" correlate --engine "$engine" -q "$@"; }
mkdir -p "$tmp/folder" && cp "$tmp/face_noisy.png" "$tmp/face_neg.png" "$tmp/folder/"
expect 0 c "$tmp/face.png" "$tmp/face.png" "$tmp/face_neg.png" "$tmp/folder" --csv "$tmp/r.csv" --rgb
grep -qx "$tmp/face.png,1.000000000" "$tmp/out" || fail "correlate itself: $(sed -n 1p "$tmp/out")"
grep -qx "$tmp/face_neg.png,-1.000000000" "$tmp/out" || fail "correlate negative: $(sed -n 2p "$tmp/out")"
[ "$(wc -l <"$tmp/out")" = 4 ] || fail "correlate: $(wc -l <"$tmp/out") lines, want 4"
noisy=$(grep "^$tmp/folder/face_noisy.png," "$tmp/out" | cut -d, -f2)
awk -v r="$noisy" 'BEGIN { exit !(r > 0.8 && r < 1) }' || fail "correlate noisy copy: r = '$noisy'"
[ "$(head -n 1 "$tmp/r.csv")" = "file,r" ] && [ "$(wc -l <"$tmp/r.csv")" = 5 ] || fail "correlate --csv"
expect 1 c "$tmp/face.png" "$tmp/face_small.png"
expect 2 c "$tmp/face.png"
expect 2 c "$tmp/face.png" "$tmp/face.png" --metric sad

if [ $failures -gt 0 ]; then
    echo "test_match_cli: $failures failures"
    exit 1
fi
echo "test_match_cli: all checks passed (engine $engine)"
