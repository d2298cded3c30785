#!/usr/bin/env bash
# Windowed programs under a virtual X server (Xvfb).
#
#   test_demo.sh demo GLCV_DEMO DEMO_CHECK [SAMPLE_VIDEO]
#       glcv-demo on the synthetic scene, then on a lavfi source (the live-input path), each for a
#       fixed number of frames, writing a screenshot at exit; demo_check compares the screenshot's
#       panels with what the source put there (the synthetic scene's ground truth for the last
#       frame; the lavfi box's position). Then the synthetic scene with a tracked object (--track):
#       the tracked box at the last frame must cover the object's true position (the scene's
#       ground truth). The lavfi run again with --method vsam. With SAMPLE_VIDEO (when it exists): a
#       short run on it.
#   test_demo.sh host HOST_APP ENGINE...
#       the texture-ID integration example with each engine named (auto, fragment, compute, cpu):
#       the engine it says it runs (auto: a GPU engine), its GL state checks and mask checks.
#
# Exit status: 0 pass, 1 fail, 77 skipped (no xvfb-run, or no X display could be started, or the
# host's context cannot run an engine named).
set -uo pipefail

MODE=${1:-}
if ! command -v xvfb-run >/dev/null 2>&1; then
    echo "test_demo: xvfb-run is not installed: skipped"
    exit 77
fi
XVFB=(xvfb-run -a -s "-screen 0 1920x1200x24 -nolisten tcp")
if ! "${XVFB[@]}" true >/dev/null 2>&1; then
    echo "test_demo: xvfb-run could not start an X display: skipped"
    exit 77
fi

# Under AddressSanitizer: glfwTerminate unloads the GL driver, and LeakSanitizer then reports the
# driver's process-lifetime allocations from an "<unknown module>", which no suppression can name.
# Leak checking stays on for the headless tests; it is off for these windowed programs only.
if [ -n "${ASAN_OPTIONS:-}" ]; then
    export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
fi

# shellcheck source=testlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"
testlib_init glcv_demo

# run NAME PROGRAM ARGS...: runs a program under Xvfb, output in $TMP/NAME.log (shown), status in
# $TMP/NAME.rc
run() {
    local name=$1
    shift
    (cd "$TMP" && "${XVFB[@]}" "$@") >"$TMP/$name.log" 2>&1
    echo $? >"$TMP/$name.rc"
    sed 's/^/  | /' "$TMP/$name.log"
}

# run_bare NAME PROGRAM ARGS...: the same without a display (the program exits before it opens a
# window), the output not shown
run_bare() {
    local name=$1
    shift
    "$@" >"$TMP/$name.log" 2>&1
    echo $? >"$TMP/$name.rc"
}

# The source frame index the demo showed last ("last source frame K").
last_index() {
    sed -n 's/.*last source frame \([0-9-]*\).*/\1/p' "$TMP/$1.log" | tail -n 1
}

case "$MODE" in
demo)
    DEMO=${2:-}
    CHECK=${3:-}
    SAMPLE=${4:-}
    if [ ! -x "$DEMO" ] || [ ! -x "$CHECK" ]; then
        echo "test_demo: glcv-demo or demo_check missing ('$DEMO', '$CHECK'): skipped"
        exit 77
    fi

    echo "== usage errors"
    run_bare usage "$DEMO" --no-such-option
    expect_rc usage 2 "an unknown option is a usage error"
    run_bare two "$DEMO" --synthetic --lavfi testsrc
    expect_rc two 2 "two sources are a usage error"
    run_bare help "$DEMO" --help
    expect_rc help 0 "--help"
    expect_in help log "--screenshot FILE" "--help lists the options"
    expect_in help log "--track X,Y,W,H" "--help lists --track"
    run_bare badmethod "$DEMO" --method knn
    expect_rc badmethod 2 "an unknown --method is a usage error"
    expect_in help log "--method M" "--help lists --method"
    run_bare badtrack "$DEMO" --track 1,2,3
    expect_rc badtrack 2 "a malformed --track box is a usage error"
    run missing "$DEMO" --video "$TMP/missing.avi" --max-frames 5
    expect_rc missing 1 "a missing video file"
    expect_in missing log "cannot open" "a missing video file is reported"

    # The scene's clean background is the background, as in the paper: its values, no adaptation
    # (the background panel must show that background exactly).
    for engine in fragment cpu; do
        echo "== synthetic scene, engine $engine"
        run "syn_$engine" "$DEMO" --synthetic --size 320x240 --max-frames 30 --engine "$engine" --paper-defaults \
            --screenshot "$TMP/syn_$engine.png"
        expect_rc "syn_$engine" 0 "synthetic, $engine"
        expect_in "syn_$engine" log "source: synthetic scene" "the demo says which source it opened"
        expect_in "syn_$engine" log "engine $engine" "engine $engine in use"
        k=$(last_index "syn_$engine")
        CHECKS=$((CHECKS + 1))
        if [ "$k" != 29 ]; then
            fail "synthetic ($engine): last source frame '$k', expected 29"
        elif [ -f "$TMP/syn_$engine.png" ]; then
            "$CHECK" "$TMP/syn_$engine.png" synthetic 320 240 "$k" | sed 's/^/  /'
            [ "${PIPESTATUS[0]}" = 0 ] || fail "synthetic ($engine): screenshot check"
        else
            fail "synthetic ($engine): no screenshot"
        fi
    done

    # The synthetic scene's red disc (colour 200,45,40, radius 19 pixels at 320x240) is at about
    # (207,135) in frame 0; --track starts on a box inside it and the disc moves up to ~8 pixels a
    # frame. At the last frame the tracked rotated box must be on the disc: demo_check compares it
    # with the truth (centre within max(4, radius/3) pixels, IoU >= 0.5) and finds it drawn over
    # the overlay panel. The segmenter on the GPU with the mask tracks from the input texture; the
    # CPU engine without it from host pixels.
    for run_args in "fragment --mask-from-segmenter" "cpu"; do
        engine=${run_args%% *}
        name="track_$engine"
        echo "== synthetic scene, a tracked object, engine $run_args"
        # shellcheck disable=SC2086
        run "$name" "$DEMO" --synthetic --size 320x240 --max-frames 30 --engine $run_args \
            --track 192,120,30,30 --screenshot "$TMP/$name.png"
        expect_rc "$name" 0 "tracking ($engine)"
        expect_in "$name" log "tracker engine " "the demo says which tracker it uses"
        k=$(last_index "$name")
        # "object 0: centre CX,CY size WxH angle A bbox ... lost L" -> "CX CY W H A L"
        num='\([-0-9.]*\)'
        obj=$(sed -n "s/^glcv-demo: object 0: centre $num,$num size ${num}x$num angle $num .* lost $num\$/\\1 \\2 \\3 \\4 \\5 \\6/p" \
            "$TMP/$name.log" | tail -n 1)
        CHECKS=$((CHECKS + 1))
        if [ "$k" != 29 ]; then
            fail "tracking ($engine): last source frame '$k', expected 29"
        elif [ -z "$obj" ]; then
            fail "tracking ($engine): no result for object 0 in the output"
        elif [ "${obj##* }" != 0 ]; then
            fail "tracking ($engine): object 0 is lost at the last frame (lost ${obj##* })"
        elif [ -f "$TMP/$name.png" ]; then
            # shellcheck disable=SC2086
            set -- ${obj% *}
            "$CHECK" "$TMP/$name.png" track 320 240 "$k" "$1" "$2" "$3" "$4" "$5" 200 45 40 | sed 's/^/  /'
            [ "${PIPESTATUS[0]}" = 0 ] || fail "tracking ($engine): screenshot check"
        else
            fail "tracking ($engine): no screenshot"
        fi
    done

    # On a flat blue-grey background a yellow 40x40 box appears at frame 60 and then moves right
    # by a pixel a frame: x = 100 + (n mod 100). The background is learned from the first 10 frames
    # the demo gets, before the box appears.
    GRAPH="color=c=0x405060:size=320x240:rate=25[bg];color=c=0xffff00:size=40x40:rate=25[fg];[bg][fg]overlay=x='if(lt(n,60),-100,100+mod(n,100))':y=100"
    echo "== lavfi source, every frame: the last frame shown is 79, its mask is the box"
    run lavfi "$DEMO" --lavfi "$GRAPH" --mode every-frame --learn 10 --max-frames 80 --screenshot "$TMP/lavfi.png"
    expect_rc lavfi 0 "lavfi"
    expect_in lavfi log "source: lavfi" "lavfi source opened"
    k=$(last_index lavfi)
    CHECKS=$((CHECKS + 1))
    if [ "$k" != 79 ]; then
        fail "lavfi: last source frame '$k', expected 79 (every frame delivered)"
    elif [ -f "$TMP/lavfi.png" ]; then
        "$CHECK" "$TMP/lavfi.png" box 320 240 179 100 40 40 255 255 0 | sed 's/^/  /'
        [ "${PIPESTATUS[0]}" = 0 ] || fail "lavfi: screenshot check"
    else
        fail "lavfi: no screenshot"
    fi

    # The same run with VSAM: the background learned from the first 10 frames, the box (which
    # differs from it everywhere) is foreground; the mask panel shows vsam's mask, read back and
    # uploaded by the demo.
    echo "== lavfi source, every frame, --method vsam"
    run lavfi_vsam "$DEMO" --lavfi "$GRAPH" --mode every-frame --learn 10 --max-frames 80 --method vsam \
        --screenshot "$TMP/lavfi_vsam.png"
    expect_rc lavfi_vsam 0 "lavfi, vsam"
    expect_in lavfi_vsam log "method vsam" "the demo runs vsam"
    k=$(last_index lavfi_vsam)
    CHECKS=$((CHECKS + 1))
    if [ "$k" != 79 ]; then
        fail "lavfi vsam: last source frame '$k', expected 79"
    elif [ -f "$TMP/lavfi_vsam.png" ]; then
        "$CHECK" "$TMP/lavfi_vsam.png" box 320 240 179 100 40 40 255 255 0 | sed 's/^/  /'
        [ "${PIPESTATUS[0]}" = 0 ] || fail "lavfi vsam: screenshot check"
    else
        fail "lavfi vsam: no screenshot"
    fi

    # Live (the default for lavfi): the source runs at 25 fps whatever the demo does, so the last
    # frame shown is 79 or later (later when frames were dropped). What that frame shows depends on
    # the machine's speed, and after dropped frames the temporal prior still holds the box where it
    # was: the every-frame run above checks the pictures; this one checks the pacing.
    echo "== lavfi source, live (paced, may drop frames)"
    run live "$DEMO" --lavfi "$GRAPH" --learn 10 --max-frames 80 --screenshot "$TMP/live.png"
    expect_rc live 0 "lavfi live"
    expect_in live log "80 frames processed" "80 frames of the live source"
    k=$(last_index live)
    CHECKS=$((CHECKS + 1))
    if [ -z "$k" ] || [ "$k" -lt 79 ]; then
        fail "lavfi live: last source frame '$k', expected 79 or later"
    fi
    CHECKS=$((CHECKS + 1))
    [ -s "$TMP/live.png" ] || fail "lavfi live: no screenshot"

    if [ -n "$SAMPLE" ] && [ -f "$SAMPLE" ]; then
        echo "== sample video $SAMPLE"
        run sample "$DEMO" --video "$SAMPLE" --learn 20 --max-frames 40 --scale 0.5 --screenshot "$TMP/sample.png"
        expect_rc sample 0 "sample video"
        expect_in sample log "40 frames processed" "40 frames of the sample video"
        CHECKS=$((CHECKS + 1))
        [ -s "$TMP/sample.png" ] || fail "sample video: no screenshot"
    fi
    ;;
host)
    HOST=${2:-}
    if [ ! -x "$HOST" ]; then
        echo "test_demo: host_app missing ('$HOST'): skipped"
        exit 77
    fi
    shift 2
    [ $# -gt 0 ] || { echo "usage: test_demo.sh host HOST_APP ENGINE..."; exit 2; }
    UNSUPPORTED=""
    for engine in "$@"; do
        echo "== host_app, engine $engine"
        run "host_$engine" "$HOST" --frames 30 --engine "$engine"
        if [ "$engine" = compute ] && grep -q "glcv_segment_create: not supported" "$TMP/host_$engine.log"; then
            UNSUPPORTED="$UNSUPPORTED $engine"
            continue
        fi
        expect_rc "host_$engine" 0 "host_app, engine $engine"
        CHECKS=$((CHECKS + 1))
        want=$engine
        [ "$engine" = auto ] && want="\(fragment\|compute\)"
        grep -q "^host_app: glcv engine $want in the host's context" "$TMP/host_$engine.log" ||
            fail "host_app ($engine): not on the $engine engine"
        expect_in "host_$engine" log "0 GL state differences, 0 failed checks" "host_app ($engine) summary"
    done
    if [ -n "$UNSUPPORTED" ] && [ "$FAILURES" -eq 0 ]; then
        echo "test_demo host: skipped, the host's GL context cannot run:$UNSUPPORTED"
        exit 77
    fi
    ;;
*)
    echo "usage: test_demo.sh demo GLCV_DEMO DEMO_CHECK [SAMPLE_VIDEO] | host HOST_APP ENGINE..."
    exit 2
    ;;
esac

testlib_finish "test_demo $MODE"
