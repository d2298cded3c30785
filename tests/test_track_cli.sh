#!/usr/bin/env bash
# Tests of 'glcv track' on generated frames.
#   The checks are CAMSHIFT's (histograms, the mask, the CUDA engine): every run names that method,
#   but those of the last section, which check the default method (dcf): its tracks on the same
#   frames, its refusals, and glcv eval otb on a tracking scene of glcv synth.
#   cpu:  usage errors, the CSV (header, one row per frame and object, boxes following the blobs),
#         overlays, histogram files (written, then read back with identical tracks), file lists,
#         --mask-from-segmenter, on the CPU engine; without a CUDA device also the default engine's
#         fallback to the CPU (the same tracks).
#   cuda: the CUDA engine, asked for and as the default, gives the CPU engine's tracks (exit 77
#         without a CUDA device).
#
# usage: test_track_cli.sh PATH/TO/glcv PATH/TO/test_track_frames PATH/TO/cuda_probe cpu|cuda
#        (exit 0 pass, 1 fail, 77 skip)
set -uo pipefail

GLCV=${1:-}
FRAMES_TOOL=${2:-}
CUDA_PROBE=${3:-}
MODE=${4:-}
if [ "$MODE" != cpu ] && [ "$MODE" != cuda ]; then
    echo "usage: test_track_cli.sh GLCV TEST_TRACK_FRAMES CUDA_PROBE cpu|cuda" >&2
    exit 2
fi
if [ -z "$GLCV" ] || [ ! -x "$GLCV" ] || [ -z "$FRAMES_TOOL" ] || [ ! -x "$FRAMES_TOOL" ] || [ ! -x "$CUDA_PROBE" ]; then
    echo "test_track_cli: glcv, test_track_frames or cuda_probe missing: skipped"
    exit 77
fi
# Whether a CUDA device can be had (the probe says which, or why not).
probe=$("$CUDA_PROBE")
cuda_rc=$?
if [ "$cuda_rc" != 0 ] && [ "$cuda_rc" != 77 ]; then
    echo "test_track_cli: cuda_probe failed (exit $cuda_rc): $probe"
    exit 1
fi
if [ "$MODE" = cuda ] && [ "$cuda_rc" = 77 ]; then
    echo "$probe"
    exit 77
fi
echo "$probe" | head -n 1

# shellcheck source=testlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"
testlib_init glcv_track_cli
# glcv COMMAND ARGS... with --method camshift after the command (after "eval otb" for eval)
glcv_camshift() {
    if [ "$1" = eval ]; then
        "$GLCV" eval "$2" --method camshift "${@:3}"
    else
        "$GLCV" "$1" --method camshift "${@:2}"
    fi
}
RUN=(glcv_camshift)
N=24

mkdir -p "$TMP/seq"
"$FRAMES_TOOL" "$TMP/seq" "$N" || { echo "test_track_cli: cannot write frames"; exit 1; }
ROIS=(--roi 29,39,23,23 --roi 142,117,16,16)

# same_tracks NAME DESCRIPTION ENGINE ARGS...: a run whose engine line names ENGINE and whose CSV
# equals the CPU engine's ($TMP/cpu.csv).
same_tracks() {
    local name=$1 what=$2 engine=$3
    shift 3
    run "$name" track "$TMP/seq" "${ROIS[@]}" "$@" --csv "$TMP/$name.csv"
    expect_rc "$name" 0 "$what"
    CHECKS=$((CHECKS + 1))
    grep -q "^glcv: track engine $engine" "$TMP/$name.err" ||
        fail "$what: not on the $engine engine: $(head -n 1 "$TMP/$name.err")"
    CHECKS=$((CHECKS + 1))
    cmp -s "$TMP/cpu.csv" "$TMP/$name.csv" || fail "$what: the tracks differ from the CPU engine's"
}

if [ "$MODE" = cuda ]; then
    run cpu track "$TMP/seq" "${ROIS[@]}" --engine cpu --csv "$TMP/cpu.csv" -q
    expect_rc cpu 0 "track on the CPU"
    same_tracks cuda "track --engine cuda" cuda --engine cuda
    same_tracks auto "track on the default engine (a CUDA device is there)" cuda
    # the default method, dcf, on both engines: the same CSV
    RUN=("$GLCV")
    run cpu track "$TMP/seq" "${ROIS[@]}" --engine cpu --csv "$TMP/cpu.csv" -q
    expect_rc cpu 0 "dcf on the CPU"
    same_tracks dcf_cuda "dcf on CUDA" cuda --engine cuda
    testlib_finish "test_track_cli (cuda)" || exit 1
    exit 0
fi

# ---- usage -------------------------------------------------------------------------------------
run help track --help
expect_rc help 0 "track --help"
grep -q "usage: glcv track" "$TMP/help.out" || fail "track --help prints no usage"
run noroi track "$TMP/seq" --csv "$TMP/x.csv"
expect_rc noroi 2 "no --roi"
run nocsv track "$TMP/seq" "${ROIS[@]}"
expect_rc nocsv 2 "no --csv"
run badroi track "$TMP/seq" --roi 1,2,3 --csv "$TMP/x.csv"
expect_rc badroi 2 "--roi with three values"
run zeroroi track "$TMP/seq" --roi 1,2,0,5 --csv "$TMP/x.csv"
expect_rc zeroroi 2 "--roi of width 0"
run outroi track "$TMP/seq" --roi 500,2,5,5 --csv "$TMP/x.csv"
expect_rc outroi 2 "--roi outside the frames"
run manybins track "$TMP/seq" "${ROIS[@]}" --bins 180 --sat-bins 256 --csv "$TMP/x.csv"
expect_rc manybins 2 "--bins 180 --sat-bins 256 (46080 bins)"
expect_in manybins err "--bins 180 x --sat-bins 256 is 46080 bins: at most 4096" "the bins' usage error names both flags"
run tinyts track "$TMP/seq" "${ROIS[@]}" --Ts 1e-50 --csv "$TMP/x.csv"
expect_rc tinyts 2 "--Ts 1e-50 (0 in single precision)"
expect_in tinyts err "--Ts: '1e-50' is too close to 0" "--Ts 1e-50 is named"
run badengine track "$TMP/seq" "${ROIS[@]}" --engine gpu --csv "$TMP/x.csv"
expect_rc badengine 2 "--engine gpu"
run badopt track "$TMP/seq" "${ROIS[@]}" --frobnicate --csv "$TMP/x.csv"
expect_rc badopt 2 "unknown option"
run missing track "$TMP/nothing" "${ROIS[@]}" --csv "$TMP/x.csv"
expect_rc missing 1 "missing input"
[ -e "$TMP/x.csv" ] && fail "a failed run wrote the CSV"

# ---- a run on the CPU engine ---------------------------------------------------------------------
run cpu track "$TMP/seq" "${ROIS[@]}" --engine cpu --csv "$TMP/cpu.csv" --overlay "$TMP/ovl" \
    --hist "$TMP/model.hist" -q
expect_rc cpu 0 "track on the CPU"
CHECKS=$((CHECKS + 1))
if [ "$(head -n 1 "$TMP/cpu.csv")" != "frame,object,cx,cy,w,h,angle,x,y,bw,bh,iterations,lost,state,peak" ]; then
    fail "CSV header: $(head -n 1 "$TMP/cpu.csv")"
fi
rows=$(($(wc -l <"$TMP/cpu.csv") - 1))
[ "$rows" -eq $((2 * N)) ] || fail "CSV has $rows rows, expected $((2 * N))"
# every row: 15 fields (peak -1: camshift has none); the boxes follow the blobs within 2 pixels;
# never lost
bad=$(awk -F, 'NR > 1 {
    if (NF != 15) { print "row " NR ": " NF " fields"; next }
    if ($15 != -1) print "frame " $1 " object " $2 ": peak " $15 " (camshift: -1)"
    if ($14 != "tracked") print "frame " $1 " object " $2 ": state " $14
    f = $1; o = $2
    if (o == 0) { ex = 40 + 3 * f; ey = 50 + 1.5 * f } else { ex = 150 - 2 * f; ey = 125 - 0.5 * f }
    d = sqrt(($3 - ex) ^ 2 + ($4 - ey) ^ 2)
    if (d > 2 || $13 != 0) print "frame " f " object " o ": centre " $3 "," $4 ", expected " ex "," ey ", lost " $13
    if ($10 < 1 || $11 < 1) print "frame " f " object " o ": empty bounding box"
}' "$TMP/cpu.csv")
CHECKS=$((CHECKS + 1))
[ -z "$bad" ] || fail "tracks: $(echo "$bad" | head -n 5)"
n_ovl=$(ls "$TMP/ovl" | grep -c '_track\.png$')
[ "$n_ovl" -eq "$N" ] || fail "$n_ovl overlays, expected $N"
grep -q "^glcv-track-hist 1" "$TMP/model.hist" || fail "no histogram file written"
[ "$(grep -c '^hist ' "$TMP/model.hist")" -eq 2 ] || fail "the histogram file should hold 2 histograms"
grep -q "^frames $N objects 2" "$TMP/cpu.out" || fail "summary: $(head -n 1 "$TMP/cpu.out")"

# ---- the histogram file is read back: same tracks; a file list works like the folder -------------
run again track $(ls "$TMP"/seq/frame_*.png) "${ROIS[@]}" --engine cpu --csv "$TMP/again.csv" \
    --hist "$TMP/model.hist" -q
expect_rc again 0 "track with the saved histograms and a file list"
CHECKS=$((CHECKS + 1))
cmp -s "$TMP/cpu.csv" "$TMP/again.csv" || fail "tracks differ with the histograms read from the file"
echo "garbage" >"$TMP/bad.hist"
run badhist track "$TMP/seq" "${ROIS[@]}" --engine cpu --csv "$TMP/x.csv" --hist "$TMP/bad.hist"
expect_rc badhist 1 "a corrupt histogram file"
run binshist track "$TMP/seq" "${ROIS[@]}" --engine cpu --bins 30 --csv "$TMP/x.csv" --hist "$TMP/model.hist"
expect_rc binshist 1 "a histogram file with other bins"

# ---- without a CUDA device the default engine is the CPU one (with a device: the cuda mode) ------
if [ "$cuda_rc" = 77 ]; then
    same_tracks auto "track on the default engine without a CUDA device" cpu
    run cuda_refused track "$TMP/seq" "${ROIS[@]}" --engine cuda --csv "$TMP/x.csv"
    expect_rc cuda_refused 1 "--engine cuda without a CUDA device"
fi

# ---- an object hidden in frames 10..14: lost there (its box coasting on), recovered at 15 ------------
mkdir -p "$TMP/hide"
"$FRAMES_TOOL" "$TMP/hide" 30 10 14 || { echo "test_track_cli: cannot write frames"; exit 1; }
run hide track "$TMP/hide" --roi 142,117,16,16 --engine cpu --csv "$TMP/hide.csv"
expect_rc hide 0 "track an object that hides"
bad=$(awk -F, 'NR > 1 {
    f = $1; want = f >= 10 && f <= 14 ? "lost" : f == 15 ? "recovered" : "tracked"
    if ($14 != want) print "frame " f ": state " $14 ", expected " want
    if (f >= 11 && f <= 14 && $3 >= prev) print "frame " f ": the box stopped at x " $3
    if (f >= 15 && sqrt(($3 - (150 - 2 * f)) ^ 2 + ($4 - (125 - 0.5 * f)) ^ 2) > 2) print "frame " f ": centre " $3 "," $4
    prev = $3
}' "$TMP/hide.csv")
CHECKS=$((CHECKS + 1))
[ -z "$bad" ] || fail "hidden object: $(echo "$bad" | head -n 5)"
grep -q "^object 0: lost in 5 of 30 frames, recovered 1 times" "$TMP/hide.out" || fail "summary: $(tail -n 1 "$TMP/hide.out")"

# ---- glcv eval otb: an OTB folder of the same frames, object 0's boxes as its ground truth -------------
mkdir -p "$TMP/otb/Blob/img"
cp "$TMP"/seq/frame_*.png "$TMP/otb/Blob/img/"
# 1-based x,y,w,h; commas, tabs and spaces, CRLF line ends, as OTB's files come
awk -v n="$N" 'BEGIN { for (f = 0; f < n; f++) {
    x = 40 + 3 * f - 11.5 + 1; y = 50 + 1.5 * f - 11.5 + 1
    sep = f % 3 == 0 ? "," : f % 3 == 1 ? "\t" : " "
    printf "%g%s%g%s23%s23\r\n", x, sep, y, sep, sep } }' >"$TMP/otb/Blob/groundtruth_rect.txt"
run otb eval otb "$TMP/otb/Blob" --engine cpu
expect_rc otb 0 "eval otb"
line=$(grep '^Blob ' "$TMP/otb.out")
CHECKS=$((CHECKS + 1))
echo "$line" | awk -v n="$N" '{ exit !($2 == n && $3 > 0.7 && $4 > 0.6 && $5 == 1 && $6 == 0) }' ||
    fail "eval otb: '$line' (expected $N frames, mean IoU > 0.7, AUC > 0.6, precision 1, none lost)"
grep -q '^summary: 1 sequences, mean IoU' "$TMP/otb.out" || fail "eval otb: no summary line"
printf '1,2,3\n' >"$TMP/otb/bad.txt"
mkdir -p "$TMP/otb/Bad" && cp -r "$TMP/otb/Blob/img" "$TMP/otb/Bad/" && cp "$TMP/otb/bad.txt" "$TMP/otb/Bad/groundtruth_rect.txt"
run otb_bad eval otb "$TMP/otb/Bad" --engine cpu
expect_rc otb_bad 1 "eval otb with a malformed ground truth"
grep -q 'groundtruth_rect.txt:1: expected x,y,w,h' "$TMP/otb_bad.err" || fail "eval otb: $(cat "$TMP/otb_bad.err")"
run otb_none eval otb --engine cpu
expect_rc otb_none 2 "eval otb without a folder"
# A first box the tracker cannot start from is named by its file and line (no --roi was given), before
# any sequence runs (Blob, first, is not scored); a later line's box may be empty (it is not scored).
for first in "500,500,23,23 outside the" "30,40,0,23 has no area" "1e300,40,23,23 is beyond"; do
    mkdir -p "$TMP/otb/First" && cp -r "$TMP/otb/Blob/img" "$TMP/otb/First/"
    gt=$TMP/otb/First/groundtruth_rect.txt
    { printf '\r\n%s\r\n' "${first%% *}"; tail -n +2 "$TMP/otb/Blob/groundtruth_rect.txt"; } >"$gt"
    run otb_first eval otb "$TMP/otb/Blob" "$TMP/otb/First" --engine cpu
    expect_rc otb_first 1 "eval otb with the first box ${first%% *}"
    expect_in otb_first err "First/groundtruth_rect.txt:2: the first box" \
        "the first box ${first%% *}: file and line named"
    expect_in otb_first err "${first#* }" "the first box ${first%% *}: what is wrong with it"
    CHECKS=$((CHECKS + 1))
    ! grep -q -- "--roi" "$TMP/otb_first.err" || fail "eval otb blames --roi: $(cat "$TMP/otb_first.err")"
    CHECKS=$((CHECKS + 1))
    ! grep -q '^Blob ' "$TMP/otb_first.out" || fail "eval otb ran a sequence before checking every first box"
done
printf '30,40,23,23\n30,40,0,0\n' >"$TMP/otb/First/groundtruth_rect.txt"
run otb_later eval otb "$TMP/otb/First" --engine cpu
expect_rc otb_later 0 "eval otb with an empty box after the first"

# ---- with the segmenter's mask, paper window, 2-D histogram ----------------------------------------
run seg track "$TMP/seq" "${ROIS[@]}" --engine cpu --mask-from-segmenter --csv "$TMP/seg.csv" -q
expect_rc seg 0 "track --mask-from-segmenter"
bad=$(awk -F, 'NR > 1 { f = $1; o = $2
    if (o == 0) { ex = 40 + 3 * f; ey = 50 + 1.5 * f } else { ex = 150 - 2 * f; ey = 125 - 0.5 * f }
    if (sqrt(($3 - ex) ^ 2 + ($4 - ey) ^ 2) > 3) print "frame " f " object " o ": " $3 "," $4 }' "$TMP/seg.csv")
CHECKS=$((CHECKS + 1))
[ -z "$bad" ] || fail "tracks with the mask: $(echo "$bad" | head -n 3)"
run paper track "$TMP/seq" "${ROIS[@]}" --engine cpu --window paper --sat-bins 4 --csv "$TMP/paper.csv" -q
expect_rc paper 0 "track --window paper --sat-bins 4"
[ "$(($(wc -l <"$TMP/paper.csv") - 1))" -eq $((2 * N)) ] || fail "paper: wrong number of rows"

# ---- the default method, dcf --------------------------------------------------------------------------
RUN=("$GLCV")
run dcf track "$TMP/seq" "${ROIS[@]}" --csv "$TMP/dcf.csv" -q
expect_rc dcf 0 "track with the default method"
bad=$(awk -F, 'NR > 1 { f = $1; o = $2
    if (o == 0) { ex = 40 + 3 * f; ey = 50 + 1.5 * f } else { ex = 150 - 2 * f; ey = 125 - 0.5 * f }
    if (sqrt(($3 - ex) ^ 2 + ($4 - ey) ^ 2) > 3 || $13 != 0 || $12 != 0) print "frame " f " object " o ": " $3 "," $4 " lost " $13
    # the peak-to-sidelobe ratio: 0 on the frame the object learned from, then a clear peak (above 2)
    if ((f == 0 && $15 != 0) || (f > 0 && !($15 > 2))) print "frame " f " object " o ": peak " $15 }' "$TMP/dcf.csv")
CHECKS=$((CHECKS + 1))
[ -z "$bad" ] || fail "dcf tracks: $(echo "$bad" | head -n 3)"
[ "$(($(wc -l <"$TMP/dcf.csv") - 1))" -eq $((2 * N)) ] || fail "dcf: wrong number of rows"
run dcf_mask track "$TMP/seq" "${ROIS[@]}" --mask-from-segmenter --csv "$TMP/x.csv"
expect_rc dcf_mask 2 "dcf with --mask-from-segmenter is a usage error"
expect_in dcf_mask err "does not use the segmenter's mask" "dcf with the mask: the reason"
run badmethod track "$TMP/seq" "${ROIS[@]}" --method kcf --csv "$TMP/x.csv"
expect_rc badmethod 2 "an unknown --method is a usage error"
# a tracking scene: the figure hides behind a pole and comes out; eval otb scores the default method
run synth synth -q -o "$TMP/occlusion" --track occlusion --frames 90
expect_rc synth 0 "synth --track occlusion"
run otb_dcf eval otb "$TMP/occlusion"
expect_rc otb_dcf 0 "eval otb with dcf"
iou=$(awk '$1 == "occlusion" { print $3 }' "$TMP/otb_dcf.out")
lost=$(awk '$1 == "occlusion" { print $6 }' "$TMP/otb_dcf.out")
CHECKS=$((CHECKS + 1))
awk -v v="${iou:-0}" -v l="${lost:-0}" 'BEGIN { exit !(v >= 0.7 && l >= 3) }' ||
    fail "eval otb occlusion with dcf: mean IoU ${iou:-none} (expected 0.7 or more), lost ${lost:-none} (3 or more)"

testlib_finish "test_track_cli (cpu)" || exit 1
exit 0
