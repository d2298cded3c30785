#!/usr/bin/env bash
# Tests of the glcv command-line tool: usage errors, input validation, outputs, and mask quality
# on the synthetic sequence, with the CPU engine and with the default engine (auto: GPU when a
# headless OpenGL context can be created, CPU otherwise).
#
# usage: test_cli.sh PATH/TO/glcv      (exit 0 pass, 1 fail, 77 skip)
set -uo pipefail

GLCV=${1:-}
if [ -z "$GLCV" ] || [ ! -x "$GLCV" ]; then
    echo "test_cli: no glcv executable given ('$GLCV'): skipped"
    exit 77
fi

# shellcheck source=testlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"
testlib_init glcv_cli
RUN=("$GLCV")

echo "== help and version"
run help --help
expect_rc help 0 "glcv --help"
expect_in help out "segment" "glcv --help lists the commands"
for cmd in segment synth compare info eval; do
    run "help_$cmd" "$cmd" --help
    expect_rc "help_$cmd" 0 "glcv $cmd --help"
    expect_in "help_$cmd" out "usage: glcv $cmd" "glcv $cmd --help shows its usage"
done
run version --version
expect_rc version 0 "glcv --version"
expect_in version out "glcv " "glcv --version prints the version"
run noargs
expect_rc noargs 2 "glcv without arguments"
run badcmd frobnicate
expect_rc badcmd 2 "unknown command"

echo "== synthetic sequence files"
run synth synth -o "$TMP/seq" --frames 12
expect_rc synth 0 "glcv synth --frames 12"
expect_count "$TMP/seq/frame_*.png" 12 "synth frames"
expect_count "$TMP/seq/truth_*.png" 12 "synth truth masks"
expect_count "$TMP/seq/background.png" 1 "synth background"
run small synth -o "$TMP/small" --frames 1 --size 64x48
expect_rc small 0 "glcv synth --size 64x48"
mkdir -p "$TMP/frames"
cp "$TMP"/seq/frame_*.png "$TMP/frames/" 2>/dev/null
printf 'not an image at all\n' >"$TMP/frames/README.txt"

echo "== usage errors (exit 2, nothing written)"
BG=$TMP/seq/background.png
F0=$TMP/seq/frame_0000.png
check_usage() {
    local name=$1
    shift
    run "$name" segment "$@" -o "$TMP/out_$name"
    expect_rc "$name" 2 "segment $*"
    expect_in "$name" err "glcv: error:" "segment $* explains the error"
    expect_absent "$TMP/out_$name" "segment $* writes nothing"
}
check_usage ts_abc --Ts abc --bg "$BG" "$F0"
expect_in ts_abc err "--Ts: 'abc' is not a number" "--Ts abc message"
check_usage ts_nan --Ts nan --bg "$BG" "$F0"
check_usage ts_inf --Ts inf --bg "$BG" "$F0"
check_usage ts_junk --Ts 12x --bg "$BG" "$F0"
check_usage ts_neg --Ts -1 --bg "$BG" "$F0"
check_usage b1_zero --B1 0 --bg "$BG" "$F0"
check_usage iter_neg --iterations -1 --bg "$BG" "$F0"
check_usage iter_big --iterations 1001 --bg "$BG" "$F0"
check_usage adapt_big --adapt 1.5 --bg "$BG" "$F0"
check_usage engine_gpu --engine gpu --bg "$BG" "$F0"
check_usage unknown --frobnicate --bg "$BG" "$F0"
run no_value segment -o "$TMP/out_no_value" --bg
expect_rc no_value 2 "--bg without a value"
expect_absent "$TMP/out_no_value" "--bg without a value writes nothing"
check_usage no_bg "$F0"
check_usage two_bgs --bg "$BG" --learn 1 "$F0"
check_usage learn_many --learn 5 "$F0" "$TMP/seq/frame_0001.png"
check_usage no_frames --bg "$BG"
run no_out segment --bg "$BG" "$F0"
expect_rc no_out 2 "segment without -o"
run cmp_args compare "$F0"
expect_rc cmp_args 2 "compare with one file"

echo "== input errors (nothing written)"
run missing segment --bg "$BG" "$TMP/seq/frame_0000.png" "$TMP/no_such_frame.png" -o "$TMP/out_missing"
expect_failure missing "missing input"
expect_in missing err "no_such_frame.png" "missing input is named"
expect_absent "$TMP/out_missing" "missing input: nothing written"
run missing_bg segment --bg "$TMP/no_such_bg.png" "$F0" -o "$TMP/out_missing_bg"
expect_failure missing_bg "missing background"
expect_in missing_bg err "no_such_bg.png" "missing background is named"
expect_absent "$TMP/out_missing_bg" "missing background: nothing written"
for _ in $(seq 200); do printf 'this is not a PNG file \001\002\003'; done >"$TMP/corrupt.png"
run corrupt segment --bg "$BG" "$F0" "$TMP/corrupt.png" -o "$TMP/out_corrupt"
expect_failure corrupt "corrupt input"
expect_in corrupt err "corrupt.png" "corrupt input is named"
expect_absent "$TMP/out_corrupt" "corrupt input: nothing written"
run mismatch segment --bg "$BG" "$F0" "$TMP/small/frame_0000.png" -o "$TMP/out_mismatch"
expect_failure mismatch "frames of different sizes"
expect_in mismatch err "320x240" "size mismatch names the first size"
expect_in mismatch err "64x48" "size mismatch names the second size"
expect_absent "$TMP/out_mismatch" "size mismatch: nothing written"
run bg_mismatch segment --bg "$TMP/small/frame_0000.png" "$F0" -o "$TMP/out_bg_mismatch"
expect_failure bg_mismatch "background of another size"
expect_in bg_mismatch err "64x48" "background size mismatch names the background size"
expect_absent "$TMP/out_bg_mismatch" "background size mismatch: nothing written"
mkdir -p "$TMP/empty"
run empty_dir segment --bg "$BG" "$TMP/empty" -o "$TMP/out_empty"
expect_failure empty_dir "folder without images"
expect_absent "$TMP/out_empty" "folder without images: nothing written"

echo "== compare"
run cmp_self compare "$TMP/seq/truth_0005.png" "$TMP/seq/truth_0005.png" --min-f 1
expect_rc cmp_self 0 "compare a mask with itself"
expect_in cmp_self out "precision 1.0000 recall 1.0000 F 1.0000" "a mask scores 1 against itself"
run cmp_size compare "$TMP/seq/truth_0000.png" "$TMP/small/truth_0000.png"
expect_failure cmp_size "compare masks of different sizes"
expect_in cmp_size err "64x48" "compare names the sizes"

# recall of OUTDIR/frame_NNNN_mask.png against the truth, for frames 5..11
check_quality() {
    local dir=$1 label=$2 k name
    for k in 5 6 7 8 9 10 11; do
        name=$(printf 'frame_%04d' "$k")
        run "cmp_${label}_$k" compare "$dir/${name}_mask.png" "$TMP/seq/truth_${name#frame_}.png" --min-recall 0.8
        expect_rc "cmp_${label}_$k" 0 "$label: recall of $name >= 0.8"
    done
}

for engine in cpu default; do
    if [ "$engine" = cpu ]; then ENGINE=(--engine cpu); else ENGINE=(); fi
    echo "== segment, engine $engine"

    out=$TMP/synthetic_$engine
    run "syn_$engine" segment --synthetic 12 "${ENGINE[@]}" --timing -o "$out"
    expect_rc "syn_$engine" 0 "$engine: --synthetic 12"
    expect_count "$out/frame_*_panel.png" 12 "$engine: --synthetic panels"
    expect_count "$out/frame_*_mask.png" 12 "$engine: --synthetic masks"
    expect_in "syn_$engine" err "glcv: engine " "$engine: engine line"
    expect_in "syn_$engine" out "frames:     12" "$engine: summary frame count"
    expect_in "syn_$engine" out "frame time: mean" "$engine: timing summary"
    expect_in "syn_$engine" out "foreground: mean" "$engine: foreground summary"
    expect_in "syn_$engine" out "truth:      precision" "$engine: quality summary"
    [ "$engine" = cpu ] && expect_in "syn_$engine" err "glcv: engine cpu on CPU" "cpu: engine line"
    sed 's/^/  /' "$TMP/syn_$engine.err" "$TMP/syn_$engine.out"

    out=$TMP/bg_$engine
    run "bg_$engine" segment --bg "$BG" "$TMP"/seq/frame_*.png "${ENGINE[@]}" -o "$out"
    expect_rc "bg_$engine" 0 "$engine: segment --bg"
    expect_count "$out/frame_*_mask.png" 12 "$engine: segment --bg masks"
    expect_count "$out/*_panel.png" 0 "$engine: no panels without --panels"
    check_quality "$out" "bg_$engine"

    out=$TMP/dir_$engine
    run "dir_$engine" segment --bg "$BG" "$TMP/frames" "${ENGINE[@]}" --panels --quiet -o "$out"
    expect_rc "dir_$engine" 0 "$engine: segment a folder"
    expect_count "$out/frame_*_mask.png" 12 "$engine: folder masks"
    expect_count "$out/frame_*_panel.png" 12 "$engine: folder panels"
    CHECKS=$((CHECKS + 1))
    if grep -q "glcv: engine " "$TMP/dir_$engine.err"; then
        fail "$engine: --quiet printed the engine line"
        show "dir_$engine"
    fi

    out=$TMP/learn_$engine
    run "learn_$engine" segment --learn 3 "$TMP/frames" "${ENGINE[@]}" -o "$out"
    expect_rc "learn_$engine" 0 "$engine: --learn 3"
    expect_count "$out/frame_*_mask.png" 9 "$engine: --learn 3 segments the frames after the first 3"
    expect_absent "$out/frame_0002_mask.png" "$engine: --learn 3 does not segment learned frames"

    out=$TMP/learn_all_$engine
    run "learn_all_$engine" segment --learn 12 "$TMP/frames" "${ENGINE[@]}" --Ts 0 --iterations 0 --adapt 0 -o "$out"
    expect_rc "learn_all_$engine" 0 "$engine: --learn with all frames, zero-valued parameters"
    expect_count "$out/frame_*_mask.png" 12 "$engine: --learn N = count segments all frames"

    run "nomask_$engine" segment --synthetic 3 --no-masks --no-panels "${ENGINE[@]}"
    expect_rc "nomask_$engine" 0 "$engine: nothing to write, no -o needed"
done

echo "== eval cdnet (a CDnet-format folder made from the synthetic sequence)"
# 40 frames of 160x120: frames 1..20 are the warm-up, 21..40 are scored. .png frames and ROI.png
# stand in for the benchmark's .jpg frames and ROI.bmp. The ROI is a white 160x120 grey PNG.
CD=$TMP/cdnet/video
run cd_synth synth -o "$TMP/cdnet/seq" --frames 40 --size 160x120 --quiet
expect_rc cd_synth 0 "synth for the CDnet folder"
mkdir -p "$CD/input" "$CD/groundtruth"
for k in $(seq 0 39); do
    cp "$TMP/cdnet/seq/frame_$(printf '%04d' "$k").png" "$CD/input/in$(printf '%06d' $((k + 1))).png"
    cp "$TMP/cdnet/seq/truth_$(printf '%04d' "$k").png" "$CD/groundtruth/gt$(printf '%06d' $((k + 1))).png"
done
printf '%s' 'iVBORw0KGgoAAAANSUhEUgAAAKAAAAB4CAAAAABQyaazAAAAZ0lEQVR42u3OMQEAAAgDoGn/zhrCxwMS' \
    'UJPfOoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKC' \
    'goKCgoKCgoKCgoKCgoKCgoKCZwvdswHvTPbGAAAAAABJRU5ErkJggg==' | base64 -d >"$CD/ROI.png"
echo "21 40" >"$CD/temporalROI.txt"

run cd_eval eval cdnet "$CD" --engine cpu --save-masks "$TMP/cdnet/bin" --csv "$TMP/cdnet/scores.csv"
expect_rc cd_eval 0 "eval cdnet"
expect_in cd_eval out "video: F " "eval cdnet summary line"
for metric in recall precision F-measure specificity FPR FNR PWC "TP "; do
    expect_in cd_eval out "$metric" "eval cdnet prints $metric"
done
CHECKS=$((CHECKS + 1))
f=$(sed -n 's/^video: F \([0-9.]*\) .*/\1/p' "$TMP/cd_eval.out")
if ! awk -v f="${f:-0}" 'BEGIN { exit !(f > 0.8) }'; then
    fail "eval cdnet on the synthetic folder: F '$f', expected > 0.8"
    show cd_eval
fi
sed 's/^/  /' "$TMP/cd_eval.out"
expect_count "$TMP/cdnet/bin/bin*.png" 20 "eval cdnet --save-masks writes the scored frames' masks"
expect_count "$TMP/cdnet/bin/bin000021.png" 1 "eval cdnet masks have CDnet names"
CHECKS=$((CHECKS + 1))
if [ "$(wc -l <"$TMP/cdnet/scores.csv")" != 2 ] || ! head -1 "$TMP/cdnet/scores.csv" | grep -q "^video,"; then
    fail "eval cdnet --csv: expected a header and one row"
fi
run cd_mean eval cdnet "$CD" --engine cpu --background mean --quiet
expect_rc cd_mean 0 "eval cdnet --background mean"
run cd_cal eval cdnet "$CD" --engine cpu --calibrate --adapt 0.01 --quiet
expect_rc cd_cal 0 "eval cdnet --calibrate"
expect_in cd_cal out "calibrated   median D^2" "eval cdnet --calibrate reports the noise level"
expect_in cd_cal out "Odc 100000" "eval cdnet --calibrate raises Odc when none is given"
CHECKS=$((CHECKS + 1))
f=$(sed -n 's/^video: F \([0-9.]*\) .*/\1/p' "$TMP/cd_cal.out")
if ! awk -v f="${f:-0}" 'BEGIN { exit !(f > 0.8) }'; then
    fail "eval cdnet --calibrate on the synthetic folder: F '$f', expected > 0.8"
    show cd_cal
fi
run cd_cal_ts eval cdnet "$CD" --calibrate --Ts 500
expect_rc cd_cal_ts 2 "eval cdnet --calibrate with --Ts"
run cd_usage eval cdnet
expect_rc cd_usage 2 "eval cdnet without a folder"
run cd_format eval kitti "$CD"
expect_rc cd_format 2 "eval with an unknown dataset format"
run cd_bgopt eval cdnet "$CD" --background mode
expect_rc cd_bgopt 2 "eval --background with a bad value"

cp -r "$CD" "$TMP/cdnet/no_roi" && rm "$TMP/cdnet/no_roi/ROI.png"
run cd_no_roi eval cdnet "$TMP/cdnet/no_roi" --engine cpu
expect_rc cd_no_roi 1 "eval cdnet without ROI"
expect_in cd_no_roi err "ROI.bmp" "eval cdnet names the missing ROI"
cp -r "$CD" "$TMP/cdnet/bad_troi" && echo "21 forty" >"$TMP/cdnet/bad_troi/temporalROI.txt"
run cd_bad_troi eval cdnet "$TMP/cdnet/bad_troi" --engine cpu
expect_rc cd_bad_troi 1 "eval cdnet with a malformed temporalROI.txt"
expect_in cd_bad_troi err "temporalROI.txt: malformed" "eval cdnet explains the malformed temporalROI.txt"
cp -r "$CD" "$TMP/cdnet/late" && echo "21 41" >"$TMP/cdnet/late/temporalROI.txt"
run cd_late eval cdnet "$TMP/cdnet/late" --engine cpu
expect_rc cd_late 1 "eval cdnet with a temporal ROI past the last frame"
expect_in cd_late err "in000041" "eval cdnet names the missing frame"
cp -r "$CD" "$TMP/cdnet/mismatch" && cp "$TMP/small/truth_0000.png" "$TMP/cdnet/mismatch/groundtruth/gt000030.png"
run cd_mismatch eval cdnet "$TMP/cdnet/mismatch" --engine cpu --save-masks "$TMP/cdnet/bin_mismatch"
expect_rc cd_mismatch 1 "eval cdnet with a ground truth of another size"
expect_in cd_mismatch err "64x48" "eval cdnet names the mismatching size"
expect_absent "$TMP/cdnet/bin_mismatch" "eval cdnet: nothing written on a layout error"

run info info
expect_rc info 0 "glcv info"
expect_in info out "engine:" "glcv info names the engine"
sed 's/^/  /' "$TMP/info.out"

testlib_finish test_cli
