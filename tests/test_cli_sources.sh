#!/usr/bin/env bash
# Tests of 'glcv segment --sources LIST' (camera lists): 8 H.264 files in one list give masks byte for
# byte those of 8 runs on each file alone (eth and vsam), named as those runs name them, in
# OUTDIR/camKKK with KKK the list's line; a second frame size makes a set of its own; an unreachable
# URL and a corrupt file are reported with their lines while the others finish, exit status 1;
# usage errors; glcv track --sources: per camera the CSV file and overlays of a run on it alone,
# the boxes of each line, failures named by their lines; and, with GStreamer's RTSP server (rtsp_server, when it was built), a live RTSP
# camera over UDP and over TCP in a list with files, and a camera whose server goes away and comes
# back: reported, reconnected, its masks' numbering going on.
#
# usage: test_cli_sources.sh PATH/TO/glcv PATH/TO/test_video_fixture [PATH/TO/rtsp_server]
#        (exit 0 pass, 1 fail, 77 skip: no media input or no H.264 encoder)
set -uo pipefail

GLCV=${1:-}
FIXTURE=${2:-}
RTSP=${3:-}
if [ -z "$GLCV" ] || [ ! -x "$GLCV" ] || [ -z "$FIXTURE" ] || [ ! -x "$FIXTURE" ]; then
    echo "test_cli_sources: glcv or test_video_fixture missing: skipped"
    exit 77
fi

# shellcheck source=testlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"
testlib_init glcv_cli_sources
RUN=("$GLCV")

run info info
if ! grep -q "^media: *FFmpeg" "$TMP/info.out"; then
    echo "test_cli_sources: glcv was built without media input (FFmpeg): skipped"
    exit 77
fi

# the videos: 8 H.264 clips of the synthetic scene (other seeds, other lengths), one of another size
for i in 0 1 2 3 4 5 6 7; do
    "$FIXTURE" "$TMP/v$i.mkv" "$TMP/png$i" $((14 + i)) 160x120 h264 $((i + 1)) >"$TMP/fixture$i.out" 2>&1
    rc=$?
    if [ "$rc" = 77 ]; then
        echo "test_cli_sources: no H.264 encoder in this FFmpeg: skipped"
        exit 77
    fi
    [ "$rc" = 0 ] || { cat "$TMP/fixture$i.out"; fail "test_video_fixture h264 $i: exit $rc"; }
done
"$FIXTURE" "$TMP/small.mkv" "$TMP/pngs" 12 96x64 h264 9 >/dev/null 2>&1 || fail "the small video"

# same_masks ONE LIST_DIR DESCRIPTION: the masks of a single run and a list's camera folder match
same_masks() {
    CHECKS=$((CHECKS + 1))
    local n1 n2
    n1=$(find "$1" -name '*_mask.png' | wc -l)
    n2=$(find "$2" -name '*_mask.png' | wc -l)
    if [ "$n1" = 0 ] || [ "$n1" != "$n2" ]; then
        fail "$3: $n1 masks alone, $n2 in the list's folder"
    elif ! diff -r "$1" "$2" >"$TMP/diff.out"; then
        fail "$3: the masks differ: $(head -3 "$TMP/diff.out" | tr '\n' ' ')"
    fi
}

echo "== 8 H.264 files: the list's masks are those of 8 single runs"
{
    echo "# eight cameras"
    for i in 0 1 2 3 4 5 6 7; do echo "$TMP/v$i.mkv"; done
} >"$TMP/eight.txt"
for method in eth vsam; do
    run "list_$method" segment --sources "$TMP/eight.txt" --method "$method" --learn 4 -o "$TMP/list_$method"
    expect_rc "list_$method" 0 "--sources, $method"
    expect_in "list_$method" out "sources:    8 in 1 camera set" "one set for 8 sources of one size ($method)"
    expect_in "list_$method" err "cam001..cam008: 8 sources of 160x120" "the set's line names its cameras"
    for i in 0 1 2 3 4 5 6 7; do
        run "one_${method}_$i" segment "$TMP/v$i.mkv" --method "$method" --learn 4 -o "$TMP/one_${method}_$i" -q
        expect_rc "one_${method}_$i" 0 "single run $i ($method)"
        same_masks "$TMP/one_${method}_$i" "$TMP/list_$method/cam00$((i + 1))" "camera $i ($method)"
    done
done
expect_count "$TMP/list_eth/cam001/frame_0000??_mask.png" 10 "cam001: the 10 frames after the 4 learned"
expect_absent "$TMP/list_eth/cam000" "a comment line makes no camera"

echo "== an unreachable URL and a corrupt file among the files"
head -c 50000 /dev/urandom >"$TMP/corrupt.mkv"
cat >"$TMP/mixed.txt" <<EOF
$TMP/v0.mkv
rtsp://127.0.0.1:9/nothing
$TMP/small.mkv

$TMP/corrupt.mkv
$TMP/v1.mkv
EOF
run mixed segment --sources "$TMP/mixed.txt" --learn 4 --method vsam -o "$TMP/mixed" --stall-timeout 2
expect_rc mixed 1 "a list with an unreachable URL and a corrupt file"
expect_in mixed err "mixed.txt:2: source 'rtsp://127.0.0.1:9/nothing' (cam001)" "the unreachable URL is named by its line"
expect_in mixed err "mixed.txt:5: source '$TMP/corrupt.mkv' (cam004)" "the corrupt file is named by its line"
expect_in mixed out "sources:    5 in 2 camera sets" "two frame sizes: two sets (the blank line is none)"
expect_in mixed err "(cam001): cannot open: media: cannot open video 'rtsp://127.0.0.1:9/nothing': Connection refused (opened again after 1, 2, 4" "one line for the unreachable URL, with its cause and what happens to it"
CHECKS=$((CHECKS + 1))
[ "$(grep -c "glcv: error:" "$TMP/mixed.err")" = 2 ] || { fail "not one error line per failed source"; show mixed; }
same_masks "$TMP/one_vsam_0" "$TMP/mixed/cam000" "the first file, beside the failures"
same_masks "$TMP/one_vsam_1" "$TMP/mixed/cam005" "the last file, beside the failures"
expect_count "$TMP/mixed/cam002/frame_0000??_mask.png" 8 "the small video, a set of its own"
# with --size every source is scaled into one set, and the unreachable one is retried until the files end
run mixed_size segment --sources "$TMP/mixed.txt" --learn 4 --method vsam -o "$TMP/mixed_size" --stall-timeout 1 \
    --size 160x120
expect_rc mixed_size 1 "--size: the unreachable URL still fails the run"
expect_in mixed_size out "sources:    5 in 1 camera set" "--size: one set"
expect_in mixed_size err "(cam001): cannot open: media: cannot open video 'rtsp://127.0.0.1:9/nothing': Connection refused" \
    "--size: the URL's failure says why, in one line"
CHECKS=$((CHECKS + 1))
[ "$(grep -c "glcv: error:" "$TMP/mixed_size.err")" = 2 ] || { fail "--size: not one error line per failed source"; show mixed_size; }
expect_in mixed_size err "mixed.txt:2: source 'rtsp://127.0.0.1:9/nothing' (cam001)" "--size: the URL named"
same_masks "$TMP/one_vsam_0" "$TMP/mixed_size/cam000" "--size: a file of that size, unscaled"

echo "== usage errors"
run usage_arg segment --sources "$TMP/eight.txt" --learn 4 "$TMP/v0.mkv" -o "$TMP/u1"
expect_rc usage_arg 2 "--sources and a FRAME argument"
run usage_batch segment --sources "$TMP/eight.txt" --learn 4 --batch -o "$TMP/u2"
expect_rc usage_batch 2 "--sources and --batch"
run usage_decoder segment --learn 4 "$TMP/v0.mkv" --decoder nvdec -o "$TMP/u3"
expect_rc usage_decoder 2 "--decoder without --sources"
run no_list segment --sources "$TMP/none.txt" --learn 4 -o "$TMP/u4"
expect_rc no_list 1 "a missing list"
expect_in no_list err "cannot read the source list" "a missing list: the error says so"
printf '# nothing\n\n' >"$TMP/empty.txt"
run empty segment --sources "$TMP/empty.txt" --learn 4 -o "$TMP/u5"
expect_rc empty 1 "a list without sources"
echo "$TMP" >"$TMP/folder.txt"
run folder segment --sources "$TMP/folder.txt" --learn 4 -o "$TMP/u6"
expect_rc folder 1 "a folder in a list"
expect_in folder err "folder.txt:1:" "a folder in a list: the line is named"
echo "$TMP/v0.mkv transport=ftp" >"$TMP/transport.txt"
run transport segment --sources "$TMP/transport.txt" --learn 4 -o "$TMP/u7"
expect_rc transport 1 "transport=ftp"
expect_absent "$TMP/u1" "usage errors write nothing"

echo "== glcv track --sources: each camera's CSV file and overlays are those of a run on it alone"
cat >"$TMP/track.txt" <<EOF
$TMP/v0.mkv roi=30,60,30,30
# a comment
$TMP/v1.mkv roi=60,60,30,30 roi=90,30,30,30
$TMP/v2.mkv
$TMP/v3.mkv roi=90,90,30,30 transport=tcp
EOF
track_rois=("--roi 30,60,30,30" "--roi 60,60,30,30 --roi 90,30,30,30" "--roi 60,60,30,30" "--roi 90,90,30,30")
track_cams=(000 002 003 004)
for variant in default camshift camshift_no_mask cpu; do
    case $variant in
        default) opts=() ;;
        camshift) opts=(--method camshift) ;;  # the segmenter's mask: each file learned first
        camshift_no_mask) opts=(--method camshift --no-mask) ;;
        cpu) opts=(--engine cpu) ;;
    esac
    run "track_$variant" track --sources "$TMP/track.txt" --roi 60,60,30,30 -o "$TMP/track_$variant" "${opts[@]}" \
        --overlay boxes
    expect_rc "track_$variant" 0 "track --sources ($variant)"
    expect_in "track_$variant" out "frames:     $((14 + 15 + 16 + 17)) tracked, 5 objects" "track: every frame, every box ($variant)"
    for i in 0 1 2 3; do
        # shellcheck disable=SC2086 # the boxes are separate options
        run "track_one_${variant}_$i" track "$TMP/v$i.mkv" ${track_rois[$i]} --csv "$TMP/track_one_${variant}_$i.csv" \
            --overlay "$TMP/track_one_${variant}_$i" "${opts[@]}" -q
        expect_rc "track_one_${variant}_$i" 0 "track alone, camera $i ($variant)"
        CHECKS=$((CHECKS + 1))
        if ! cmp "$TMP/track_one_${variant}_$i.csv" "$TMP/track_$variant/cam${track_cams[$i]}/tracks.csv" >"$TMP/cmp.out" 2>&1; then
            fail "track ($variant), camera $i: the CSV files differ: $(head -2 "$TMP/cmp.out" | tr '\n' ' ')"
            diff "$TMP/track_one_${variant}_$i.csv" "$TMP/track_$variant/cam${track_cams[$i]}/tracks.csv" | head -5
        fi
        same_overlays=$(diff -r "$TMP/track_one_${variant}_$i" "$TMP/track_$variant/cam${track_cams[$i]}/boxes" 2>&1 | head -2)
        CHECKS=$((CHECKS + 1))
        [ -z "$same_overlays" ] || fail "track ($variant), camera $i: the overlays differ: $same_overlays"
    done
done
expect_count "$TMP/track_default/cam002/boxes/frame_0000??_track.png" 15 "track: an overlay per frame"
CHECKS=$((CHECKS + 1))
[ "$(grep -c '^[0-9]*,1,' "$TMP/track_default/cam002/tracks.csv")" = 15 ] || fail "track: the line's second box is object 1"
CHECKS=$((CHECKS + 1))
if ! grep -q ',tracked,' "$TMP/track_default/cam000/tracks.csv" ||
    ! grep -q ',recovered,' "$TMP/track_camshift/cam002/tracks.csv"; then
    fail "track: the scenes' objects are not tracked (or never recovered): the comparison shows little"
fi
cat >"$TMP/track_mixed.txt" <<EOF
$TMP/v0.mkv roi=30,60,30,30
rtsp://127.0.0.1:9/nothing roi=1,1,8,8
$TMP/corrupt.mkv roi=1,1,8,8
EOF
run track_mixed track --sources "$TMP/track_mixed.txt" -o "$TMP/track_mixed" --stall-timeout 2
expect_rc track_mixed 1 "track: a list with an unreachable URL and a corrupt file"
expect_in track_mixed err "track_mixed.txt:2: source 'rtsp://127.0.0.1:9/nothing' (cam001)" "track: the URL named by its line"
expect_in track_mixed err "track_mixed.txt:3: source '$TMP/corrupt.mkv' (cam002)" "track: the corrupt file named by its line"
CHECKS=$((CHECKS + 1))
cmp -s "$TMP/track_one_default_0.csv" "$TMP/track_mixed/cam000/tracks.csv" || fail "track: the file beside the failures differs"
expect_absent "$TMP/track_mixed/cam001/tracks.csv" "track: a source that never opened writes no CSV file"
echo "$TMP/v0.mkv" >"$TMP/track_nobox.txt"
run track_nobox track --sources "$TMP/track_nobox.txt" -o "$TMP/track_nobox"
expect_rc track_nobox 1 "track: a line without a box and no --roi"
expect_in track_nobox err "track_nobox.txt:1: no box for '$TMP/v0.mkv'" "track: the line without a box is named"
echo "$TMP/v0.mkv roi=1,2,3" >"$TMP/track_badbox.txt"
run track_badbox track --sources "$TMP/track_badbox.txt" -o "$TMP/track_badbox"
expect_failure track_badbox "track: a malformed roi="
expect_in track_badbox err "track_badbox.txt:1: roi" "track: the malformed box's line is named"
echo "$TMP/v0.mkv roi=500,500,10,10" >"$TMP/track_outside.txt"
run track_outside track --sources "$TMP/track_outside.txt" -o "$TMP/track_outside"
expect_rc track_outside 1 "track: a box outside the frames"
expect_in track_outside err "track_outside.txt:1: roi=500,500,10,10 is outside the 160x120 frames" "track: the box outside is named"
run segment_roi segment --sources "$TMP/track.txt" --learn 4 -o "$TMP/segment_roi"
expect_rc segment_roi 1 "roi= in a segment list"
expect_in segment_roi err "track.txt:1: roi= gives a box to track" "roi= in a segment list: the line is named"
run track_hist track --sources "$TMP/track.txt" -o "$TMP/track_hist" --hist "$TMP/h.bin"
expect_rc track_hist 2 "track --sources --hist"
run track_o track "$TMP/v0.mkv" --roi 1,1,8,8 --csv "$TMP/x.csv" -o "$TMP/track_o"
expect_rc track_o 2 "track -o without --sources"

if [ -z "$RTSP" ] || [ ! -x "$RTSP" ]; then
    echo "== RTSP: no rtsp_server (GStreamer's gst-rtsp-server was not found at build time): not tested"
else
    echo "== a live RTSP camera (gst-rtsp-server on the loopback), over UDP and over TCP"
    # a longer clip for the camera: 10 s at 25 fps
    "$FIXTURE" "$TMP/cam.mkv" "$TMP/pngcam" 250 160x120 h264 3 >/dev/null 2>&1 || fail "the camera's video"
    PORT=$(free_port)
    if start_rtsp "$TMP/cam.mkv" "$PORT"; then
        for transport in udp tcp; do
            printf 'rtsp://127.0.0.1:%s/cam transport=%s\n%s\n' "$PORT" "$transport" "$TMP/v2.mkv" >"$TMP/live_$transport.txt"
            run "live_$transport" segment --sources "$TMP/live_$transport.txt" --method vsam --learn 4 --max-frames 60 \
                -o "$TMP/live_$transport"
            expect_rc "live_$transport" 0 "an RTSP camera over $transport with a file"
            n=$(find "$TMP/live_$transport/cam000" -name '*_mask.png' | wc -l)
            CHECKS=$((CHECKS + 1))
            [ "$n" -ge 20 ] || fail "RTSP over $transport: only $n masks of the camera"
            same_masks "$TMP/one_vsam_2" "$TMP/live_$transport/cam001" "the file beside the RTSP camera ($transport)"
        done
        # glcv track: the live camera tracked without a mask, beside a file tracked with one
        printf 'rtsp://127.0.0.1:%s/cam roi=90,30,30,30\n%s roi=60,60,30,30\n' "$PORT" "$TMP/v2.mkv" >"$TMP/live_track.txt"
        run live_track track --sources "$TMP/live_track.txt" --max-frames 40 -o "$TMP/live_track"
        expect_rc live_track 0 "track: an RTSP camera with a file"
        n=$(grep -c ',0,' "$TMP/live_track/cam000/tracks.csv" 2>/dev/null)
        CHECKS=$((CHECKS + 1))
        [ "${n:-0}" -ge 15 ] || fail "track, RTSP: only ${n:-0} rows of the camera"
        CHECKS=$((CHECKS + 1))
        cmp -s "$TMP/track_one_default_2.csv" "$TMP/live_track/cam001/tracks.csv" ||
            fail "track: the file beside the RTSP camera differs from its run alone"
        echo "== the camera's server goes away and comes back: reported, reconnected, numbering goes on"
        printf 'rtsp://127.0.0.1:%s/cam transport=tcp\n' "$PORT" >"$TMP/flaky.txt"
        "$GLCV" segment --sources "$TMP/flaky.txt" --method diff2 --max-frames 150 -o "$TMP/flaky" --stall-timeout 1 \
            >"$TMP/flaky.out" 2>"$TMP/flaky.err" &
        GLCV_PID=$!
        for k in $(seq 150); do
            [ "$(find "$TMP/flaky/cam000" -name '*_mask.png' 2>/dev/null | wc -l)" -ge 10 ] && break
            sleep 0.1
        done
        kill "$RTSP_PID" 2>/dev/null
        wait "$RTSP_PID" 2>/dev/null
        before=$(find "$TMP/flaky/cam000" -name '*_mask.png' 2>/dev/null | wc -l)
        sleep 2
        start_rtsp "$TMP/cam.mkv" "$PORT"
        for k in $(seq 300); do kill -0 "$GLCV_PID" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$GLCV_PID" 2>/dev/null; then
            kill -INT "$GLCV_PID"
            sleep 1
        fi
        wait "$GLCV_PID"
        echo $? >"$TMP/flaky.rc"
        expect_in flaky err "flaky.txt:1: source 'rtsp://127.0.0.1:$PORT/cam' (cam000)" "the cut camera is reported"
        after=$(find "$TMP/flaky/cam000" -name '*_mask.png' | wc -l)
        last=$(find "$TMP/flaky/cam000" -name '*_mask.png' | sort | tail -1)
        CHECKS=$((CHECKS + 1))
        [ "$after" -gt "$before" ] && [ "$before" -ge 10 ] ||
            fail "reconnect: $before masks before the cut, $after at the end"
        CHECKS=$((CHECKS + 1))
        # the numbering goes on: the last mask's index is at least the number of masks less one
        idx=$(basename "$last" | sed 's/frame_0*\([0-9]*\)_mask.png/\1/')
        [ "${idx:-0}" -ge $((after - 1)) ] || fail "reconnect: the last mask is $last of $after masks"
        kill "$RTSP_PID" 2>/dev/null
        wait "$RTSP_PID" 2>/dev/null
        echo "== a camera that is down when the run starts: opened later, in a set of its own"
        # run_late NAME [OPTIONS]: segment --sources NAME.txt (diff2, read at the files' rate, 200 sets)
        # into NAME/, the camera's server started $LATE_AT s in (2 by default); NAME.out, NAME.err and NAME.rc
        run_late() {
            local name=$1 k
            shift
            "$GLCV" segment --sources "$TMP/$name.txt" --method diff2 --mode live --max-frames 200 "$@" \
                -o "$TMP/$name" >"$TMP/$name.out" 2>"$TMP/$name.err" &
            GLCV_PID=$!
            sleep "${LATE_AT:-2}"
            start_rtsp "$TMP/cam.mkv" "$PORT"
            for k in $(seq 300); do kill -0 "$GLCV_PID" 2>/dev/null || break; sleep 0.1; done
            if kill -0 "$GLCV_PID" 2>/dev/null; then
                fail "the run '$name' did not end"
                kill -INT "$GLCV_PID"
                sleep 1
            fi
            wait "$GLCV_PID"
            echo $? >"$TMP/$name.rc"
        }
        # the file is read at its rate (--mode live) for 8 s; the camera's server starts 2 s in
        "$FIXTURE" "$TMP/long.mkv" "$TMP/pnglong" 250 160x120 ffv1 4 >/dev/null 2>&1 || fail "the long video"
        printf 'rtsp://127.0.0.1:%s/cam transport=tcp\n%s\n' "$PORT" "$TMP/long.mkv" >"$TMP/late.txt"
        run_late late
        expect_rc late 1 "a camera down at the start counts as failed"
        expect_in late err "late.txt:1: source 'rtsp://127.0.0.1:$PORT/cam' (cam000): cannot open" "the camera down at the start is reported"
        expect_in late err "source 'rtsp://127.0.0.1:$PORT/cam' (cam000) opened: 160x120, in a camera set of its own" "the camera is opened once its server is up"
        expect_in late out "sources:    2 in 2 camera sets" "the late camera's set counted"
        n=$(find "$TMP/late/cam000" -name '*_mask.png' 2>/dev/null | wc -l)
        CHECKS=$((CHECKS + 1))
        [ "$n" -ge 20 ] || { fail "the late camera: only $n masks"; show late; }
        n=$(find "$TMP/late/cam001" -name '*_mask.png' 2>/dev/null | wc -l)
        CHECKS=$((CHECKS + 1))
        [ "$n" -ge 20 ] || { fail "the file beside the late camera: only $n masks"; show late; }
        kill "$RTSP_PID" 2>/dev/null
        wait "$RTSP_PID" 2>/dev/null
        echo "== cameras that never answer do not hold back the retries of the others"
        # four listeners that accept and never answer come first in the list, then the camera (its server
        # starts 6.5 s in) and the file (8 s). A probe of a silent one waits its stall timeout (6 s), so
        # the run starts about 6 s in, and a second later all five are tried again: the camera opens now.
        # Each source has a waiter of its own, so the camera's set opens about 2 s after the file's (which
        # opens at the run's start); had its retry waited for the silent ones' (a batch), 7 s after
        : >"$TMP/silent.txt"
        holes=()
        hp=$((PORT + 1))
        for i in 1 2 3 4; do
            hp=$(free_port "$hp")
            blackhole "$hp" && holes+=("$HOLE_PID")
            printf 'rtsp://127.0.0.1:%s/cam transport=tcp\n' "$hp" >>"$TMP/silent.txt"
            hp=$((hp + 1))
        done
        printf 'rtsp://127.0.0.1:%s/cam transport=tcp\n%s\n' "$PORT" "$TMP/long.mkv" >>"$TMP/silent.txt"
        LATE_AT=6.5 run_late silent --stall-timeout 6
        kill "${holes[@]}" 2>/dev/null
        opened=$(sed -n 's/^glcv: cam004\.\.cam004: open at \([0-9.]*\) s.*/\1/p' "$TMP/silent.err")
        file_opened=$(sed -n 's/^glcv: cam005\.\.cam005: open at \([0-9.]*\) s.*/\1/p' "$TMP/silent.err")
        grep 'cam00[45]\.\.cam00[45]: open at' "$TMP/silent.err"
        CHECKS=$((CHECKS + 1))
        awk -v t="${opened:-99}" -v f="${file_opened:-0}" 'BEGIN { exit !(t - f < 4.5) }' ||
            { fail "the camera behind the silent ones opened at ${opened:-never} s, the file at ${file_opened:-never} s (expected < 4.5 s apart)"; show silent; }
        expect_rc silent 1 "cameras that never opened count as failed"
        expect_in silent err "source 'rtsp://127.0.0.1:$PORT/cam' (cam004) opened: 160x120, in a camera set of its own" \
            "the camera behind the silent ones is opened once its server is up"
        n=$(find "$TMP/silent/cam004" -name '*_mask.png' 2>/dev/null | wc -l)
        CHECKS=$((CHECKS + 1))
        [ "$n" -ge 20 ] || { fail "the camera behind the silent ones: only $n masks"; show silent; }
        kill "$RTSP_PID" 2>/dev/null
        wait "$RTSP_PID" 2>/dev/null
    fi
fi

testlib_finish test_cli_sources
