#!/usr/bin/env bash
# Tests of the GStreamer plugin (glcvsegment, glcvtrack, glcvbgsub) in real pipelines, against the
# glcv command-line tool on the same frames.
#
# usage: test_gst.sh PART GLCV ROI_DUMP PYTHON      (exit 0 pass, 1 fail, 77 skip)
#   PART      inspect | segment | track | bgsub | errors
#   GLCV      the glcv executable (frames, and the masks and tracks to compare with)
#   ROI_DUMP  gst_roi_dump (runs a pipeline, prints its ROI metas as CSV)
#   PYTHON    a python3 with numpy and the build's glcv package (PYTHONPATH), or OpenCV (gst_fixture.py)
# GST_PLUGIN_PATH must name the folder of libgstglcv.so; ctest also points GST_REGISTRY into the
# build folder. Headless (no display), GStreamer's GL needs EGL on a device:
#   GST_GL_PLATFORM=egl GST_GL_WINDOW=egl-device GST_GL_API=opengl3
# (the defaults below; glcv needs an OpenGL 3.3 core context, 4.3 for its compute engine).
set -uo pipefail

PART=${1:-}
GLCV=${2:-}
ROI_DUMP=${3:-}
PYTHON=${4:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
FIXTURE="$HERE/gst_fixture.py"

export GST_GL_PLATFORM=${GST_GL_PLATFORM:-egl}
export GST_GL_WINDOW=${GST_GL_WINDOW:-egl-device}
export GST_GL_API=${GST_GL_API:-opengl3}

skip() {
    echo "test_gst $PART: $*: skipped"
    exit 77
}

command -v gst-launch-1.0 >/dev/null && command -v gst-inspect-1.0 >/dev/null || skip "no gst-launch-1.0"
[ -n "$GLCV" ] && [ -x "$GLCV" ] || skip "no glcv executable given ('$GLCV')"
for element in pngdec pngenc multifilesrc multifilesink glupload glcolorconvert gldownload videoconvert; do
    gst-inspect-1.0 "$element" >/dev/null 2>&1 || skip "GStreamer element $element missing"
done
if ! gst-launch-1.0 -q videotestsrc num-buffers=1 ! glupload ! glcolorconvert ! gldownload ! fakesink \
    >/dev/null 2>&1; then
    skip "GStreamer cannot make an OpenGL context here (GST_GL_WINDOW=$GST_GL_WINDOW)"
fi
gst-inspect-1.0 glcvsegment >/dev/null 2>&1 || {
    echo "FAIL: gst-inspect-1.0 does not find glcvsegment (GST_PLUGIN_PATH=${GST_PLUGIN_PATH:-})"
    exit 1
}

# shellcheck source=../../tests/testlib.sh
source "$HERE/../../tests/testlib.sh"
testlib_init "test_gst_$PART"

need_python() {
    [ -n "$PYTHON" ] && { "$PYTHON" -c "import numpy, glcv" 2>/dev/null || "$PYTHON" -c "import numpy, cv2" 2>/dev/null; } ||
        skip "no python3 with numpy and the glcv package or OpenCV"
}

# gst NAME PIPELINE...: gst-launch-1.0 with the pipeline, its output and status kept as NAME
gst() {
    local name=$1
    shift
    gst-launch-1.0 -q "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    echo $? >"$TMP/$name.rc"
}

# check NAME DESCRIPTION COMMAND...: the command must succeed; its output is shown when it does not
check() {
    local name=$1 what=$2
    shift 2
    CHECKS=$((CHECKS + 1))
    if ! "$@" >"$TMP/$name.check" 2>&1; then
        fail "$what"
        sed 's/^/  | /' "$TMP/$name.check"
    fi
}

# png_in PATTERN: PNG=(the start of a pipeline that reads numbered PNG files into GL memory)
png_in() {
    # shellcheck disable=SC2054 # the commas are in caps
    PNG=(multifilesrc "location=$1" caps=image/png,framerate=25/1 ! pngdec ! glupload ! glcolorconvert)
}

part_inspect() {
    RUN=(gst-inspect-1.0)
    local element props
    for element in glcvsegment glcvtrack glcvbgsub; do
        run "inspect_$element" "$element"
        expect_rc "inspect_$element" 0 "gst-inspect-1.0 $element"
        expect_in "inspect_$element" out "Filename" "gst-inspect-1.0 $element names the plugin file"
        case $element in
        glcvsegment)
            props="output background-location learn-frames engine preset fixed-parameters ts odc b1 b2 iterations"
            props+=" seed adapt-rate"
            ;;
        glcvtrack)
            props="boxes draw-boxes bins sat-bins epsilon max-iterations window aspect min-mass max-distance"
            props+=" lost-criteria recovery recovery-interval min-window-area reset-width s-min v-min v-max engine"
            ;;
        glcvbgsub)
            props="output method learn-frames background-location engine gray alpha c min-threshold absorb vote"
            props+=" passes"
            ;;
        esac
        for p in $props; do
            expect_in "inspect_$element" out "  $p " "$element has the property $p"
        done
    done
    # A property's range is the one the library takes (include/glcv/track.h).
    CHECKS=$((CHECKS + 1))
    if ! grep -A2 "^  min-window-area " "$TMP/inspect_glcvtrack.out" | grep -qF "Range: -1 - 1000000000 "; then
        fail "glcvtrack's min-window-area range is not the library's -1..1000000000 (GLCV_TRACK_MAX_MIN_WINDOW_AREA)"
        grep -A2 "^  min-window-area " "$TMP/inspect_glcvtrack.out" | sed 's/^/  | /'
    fi
}

# The element's masks against glcv segment's on the same frames: with a learned background (the
# default way, on each GL engine) and with a background file.
part_segment() {
    need_python
    RUN=("$GLCV")
    run synth synth -o "$TMP/seq" --frames 10 --size 160x120
    expect_rc synth 0 "glcv synth"
    png_in "$TMP/seq/frame_%04d.png"
    local engine
    for engine in fragment compute; do
        mkdir -p "$TMP/gst_$engine"
        gst "gst_$engine" "${PNG[@]}" \
            ! glcvsegment learn-frames=4 engine=$engine ! gldownload ! videoconvert ! pngenc \
            ! multifilesink location="$TMP/gst_$engine/mask_%04d.png"
        expect_rc "gst_$engine" 0 "pipeline with glcvsegment engine=$engine learn-frames=4"
        expect_count "$TMP/gst_$engine/mask_*.png" 10 "one mask per frame (engine $engine)"
        run "cli_$engine" segment --learn 4 --engine "$engine" -q "$TMP"/seq/frame_*.png -o "$TMP/cli_$engine"
        expect_rc "cli_$engine" 0 "glcv segment --learn 4 --engine $engine"
        check "masks_$engine" "masks of glcvsegment engine=$engine = glcv segment's (learned background)" \
            "$PYTHON" "$FIXTURE" masks "$TMP/gst_$engine/mask_%04d.png" "$TMP/cli_$engine/frame_%04d_mask.png" 4 6 4
    done
    mkdir -p "$TMP/gst_bg"
    gst gst_bg "${PNG[@]}" \
        ! glcvsegment background-location="$TMP/seq/background.png" ! gldownload ! videoconvert ! pngenc \
        ! multifilesink location="$TMP/gst_bg/mask_%04d.png"
    expect_rc gst_bg 0 "pipeline with glcvsegment background-location"
    run cli_bg segment --bg "$TMP/seq/background.png" -q "$TMP"/seq/frame_*.png -o "$TMP/cli_bg"
    expect_rc cli_bg 0 "glcv segment --bg"
    check masks_bg "masks of glcvsegment background-location = glcv segment --bg's" \
        "$PYTHON" "$FIXTURE" masks "$TMP/gst_bg/mask_%04d.png" "$TMP/cli_bg/frame_%04d_mask.png" 0 10
    # The overlay: the frame where the mask is background, tinted where it is foreground.
    mkdir -p "$TMP/gst_overlay"
    gst gst_overlay "${PNG[@]}" \
        ! glcvsegment background-location="$TMP/seq/background.png" output=overlay ! gldownload ! videoconvert \
        ! pngenc ! multifilesink location="$TMP/gst_overlay/overlay_%04d.png"
    expect_rc gst_overlay 0 "pipeline with glcvsegment output=overlay"
    check overlay "the overlay is the frame where the mask is background and differs where it is foreground" \
        "$PYTHON" - "$TMP" "$HERE" <<'EOF'
import sys, numpy as np
sys.path.insert(0, sys.argv[2])
from gst_fixture import imread
t = sys.argv[1]
for k in range(10):
    o = imread(f"{t}/gst_overlay/overlay_{k:04d}.png", "bgr")
    f = imread(f"{t}/seq/frame_{k:04d}.png", "bgr")
    m = imread(f"{t}/cli_bg/frame_{k:04d}_mask.png", None) > 0
    bg_diff = np.count_nonzero((o != f).any(axis=2) & ~m)
    fg_same = np.count_nonzero((o == f).all(axis=2) & m)
    if bg_diff or fg_same or not m.any():
        sys.exit(f"frame {k}: {bg_diff} background pixels changed, {fg_same} foreground pixels not tinted, "
                 f"{np.count_nonzero(m)} foreground")
EOF
}

# glcvbgsub's masks against glcv segment --method's: VSAM learned (on each GL engine) and from a
# file, and two-frame differencing without learning.
part_bgsub() {
    need_python
    RUN=("$GLCV")
    run synth synth -o "$TMP/seq" --frames 10 --size 160x120
    expect_rc synth 0 "glcv synth"
    png_in "$TMP/seq/frame_%04d.png"
    local name props args first empty
    for name in vsam_fragment vsam_compute vsam_bg diff2; do
        case $name in
        vsam_fragment | vsam_compute)
            props="method=vsam learn-frames=4 engine=${name#vsam_}"
            args="--method vsam --learn 4 --engine ${name#vsam_}" first=4 empty=4
            ;;
        vsam_bg)
            props="method=vsam background-location=$TMP/seq/background.png"
            args="--method vsam --bg $TMP/seq/background.png" first=0 empty=0
            ;;
        diff2) props="method=diff2 learn-frames=0" args="--method diff2" first=1 empty=1 ;;
        esac
        mkdir -p "$TMP/gst_$name"
        # shellcheck disable=SC2086
        gst "gst_$name" "${PNG[@]}" ! glcvbgsub $props ! gldownload ! videoconvert ! pngenc \
            ! multifilesink location="$TMP/gst_$name/mask_%04d.png"
        expect_rc "gst_$name" 0 "pipeline with glcvbgsub $props"
        # shellcheck disable=SC2086
        run "cli_$name" segment $args -q "$TMP"/seq/frame_*.png -o "$TMP/cli_$name"
        expect_rc "cli_$name" 0 "glcv segment $args"
        check "masks_$name" "masks of glcvbgsub $props = glcv segment $args" "$PYTHON" "$FIXTURE" masks \
            "$TMP/gst_$name/mask_%04d.png" "$TMP/cli_$name/frame_%04d_mask.png" "$first" $((10 - first)) "$empty"
    done
}

# glcvtrack's ROI metas against glcv track's CSV (no mask: the element tracks the frames as they are)
# and against the square's true position.
part_track() {
    need_python
    [ -x "$ROI_DUMP" ] || skip "no gst_roi_dump given ('$ROI_DUMP')"
    local box
    box=$("$PYTHON" "$FIXTURE" track-frames "$TMP/seq") || {
        fail "cannot write the tracking frames"
        return
    }
    png_in "$TMP/seq/frame_%04d.png"
    RUN=("$ROI_DUMP")
    run roi "${PNG[*]} ! glcvtrack boxes=$box ! fakesink name=sink signal-handoffs=true"
    expect_rc roi 0 "pipeline with glcvtrack boxes=$box"
    expect_in roi out ",glcv-object," "ROI metas of type glcv-object"
    RUN=("$GLCV")
    run cli track "$TMP"/seq/frame_*.png --roi "$box" --no-mask --csv "$TMP/cli.csv" -q
    expect_rc cli 0 "glcv track --roi $box --no-mask"
    check boxes "glcvtrack's boxes = glcv track's, and on the square" "$PYTHON" "$FIXTURE" track "$TMP/roi.out" \
        "$TMP/cli.csv"
    # draw-boxes: the frame with the box outline; the metas stay the same.
    RUN=("$ROI_DUMP")
    run roi_drawn "${PNG[*]} ! glcvtrack boxes=$box draw-boxes=true ! gldownload ! videoconvert ! tee name=t \
        t. ! queue ! pngenc ! multifilesink location=$TMP/drawn_%04d.png \
        t. ! queue ! fakesink name=sink signal-handoffs=true"
    expect_rc roi_drawn 0 "pipeline with glcvtrack draw-boxes=true"
    CHECKS=$((CHECKS + 1))
    cmp -s "$TMP/roi.out" "$TMP/roi_drawn.out" || fail "draw-boxes changed the ROI metas"
    check drawn "the drawn box is green on the object's box outline, the frame elsewhere" "$PYTHON" - "$TMP" "$HERE" <<'EOF'
import csv, sys, numpy as np
sys.path.insert(0, sys.argv[2])
from gst_fixture import imread
t = sys.argv[1]
rows = list(csv.DictReader(open(f"{t}/roi.out")))
for r in rows[::5]:
    k, x, y, w, h = (int(r[n]) for n in ("frame", "x", "y", "w", "h"))
    d = imread(f"{t}/drawn_{k:04d}.png", "bgr")
    f = imread(f"{t}/seq/frame_{k:04d}.png", "bgr")
    changed = (d != f).any(axis=2)
    outline = np.zeros(changed.shape, bool)
    outline[y:y + h, x:x + w] = True
    outline[y + 2:y + h - 2, x + 2:x + w - 2] = False
    if changed[~outline].any() or not (d[outline] == (51, 255, 26)).all():
        sys.exit(f"frame {k}: {np.count_nonzero(changed & ~outline)} pixels changed off the outline of "
                 f"{x},{y},{w},{h}, {np.count_nonzero((d[outline] != (51, 255, 26)).any(axis=1))} on it not green")
EOF
}

# Errors: a clear message from GStreamer and a failed pipeline, never a crash.
part_errors() {
    # shellcheck disable=SC2054 # the commas are in caps
    local src=(videotestsrc num-buffers=3 ! video/x-raw,width=64,height=48 ! glupload ! glcolorconvert)
    gst missing_bg "${src[@]}" ! glcvsegment background-location="$TMP/nonexistent.png" ! fakesink
    expect_failure missing_bg "glcvsegment with a missing background file"
    expect_in missing_bg err "Could not read the background image \"$TMP/nonexistent.png\"" \
        "the error names the missing background file"
    # Outside a property's range (NaN included) GObject refuses the value with a warning that names
    # it, and the element keeps its default; within the range, a value glcv refuses (B1 = 0) stops
    # the pipeline with glcv's reason.
    gst bad_range "${src[@]}" ! glcvsegment iterations=5000 ! fakesink
    expect_in bad_range err "out of range for property 'iterations'" "GObject names the property out of range"
    gst bad_nan "${src[@]}" ! glcvsegment ts=nan ! fakesink
    expect_in bad_nan err "out of range for property 'ts'" "GObject refuses ts=nan"
    gst bad_enum "${src[@]}" ! glcvsegment engine=quantum ! fakesink
    expect_failure bad_enum "glcvsegment engine=quantum"
    expect_in bad_enum err "engine" "the error names the bad engine"
    gst bad_b1 "${src[@]}" ! glcvsegment learn-frames=0 b1=0 ! fakesink
    expect_failure bad_b1 "glcvsegment b1=0 (glcv refuses it)"
    expect_in bad_b1 err "Property b1 refused: invalid argument" "the error says glcv refused b1"
    RUN=("$GLCV")
    run small synth -o "$TMP/small" --frames 1 --size 64x48
    gst bg_size videotestsrc num-buffers=3 ! video/x-raw,width=80,height=48 ! glupload ! glcolorconvert \
        ! glcvsegment background-location="$TMP/small/background.png" ! fakesink
    expect_failure bg_size "glcvsegment with a background of another size"
    expect_in bg_size err "is 64x48, the frames 80x48" "the error gives both sizes"
    gst bad_boxes "${src[@]}" ! glcvtrack boxes="1,2,3" ! fakesink
    expect_failure bad_boxes "glcvtrack boxes=1,2,3"
    expect_in bad_boxes err "Cannot parse boxes=\"1,2,3\"" "the error quotes the bad boxes"
    gst bad_bins "${src[@]}" ! glcvtrack boxes="4,4,8,8" bins=100 sat-bins=100 ! fakesink
    expect_failure bad_bins "glcvtrack bins=100 sat-bins=100 (over 4096 bins)"
    expect_in bad_bins err "Cannot create the tracker: invalid argument" "glcv's refusal reaches the bus"
    # min-window-area: the library's largest value is taken, one more is refused by GObject.
    gst big_area "${src[@]}" ! glcvtrack boxes="4,4,8,8" min-window-area=1000000000 ! fakesink
    expect_rc big_area 0 "glcvtrack min-window-area=1000000000 (the library's largest)"
    gst bad_area "${src[@]}" ! glcvtrack boxes="4,4,8,8" min-window-area=1000000001 ! fakesink
    expect_in bad_area err "out of range for property 'min-window-area'" "GObject refuses min-window-area=1000000001"
    gst box_outside "${src[@]}" ! glcvtrack boxes="500,500,8,8" ! fakesink
    expect_failure box_outside "glcvtrack with a box outside the frame"
    expect_in box_outside err "Box 500,500,8,8 (frame 64x48)" "the error names the box and the frame"
    # The frame size changes mid-stream: PNG files of two sizes.
    mkdir -p "$TMP/sizes"
    gst size_a videotestsrc num-buffers=1 ! video/x-raw,width=64,height=48 ! pngenc ! filesink location="$TMP/sizes/f_0.png"
    gst size_b videotestsrc num-buffers=1 ! video/x-raw,width=80,height=60 ! pngenc ! filesink location="$TMP/sizes/f_1.png"
    cp "$TMP/sizes/f_1.png" "$TMP/sizes/f_2.png"
    local element name
    png_in "$TMP/sizes/f_%d.png"
    for element in "glcvsegment learn-frames=1" "glcvtrack boxes=4,4,8,8"; do
        name=resize_${element%% *}
        # shellcheck disable=SC2086
        gst "$name" "${PNG[@]}" ! $element ! fakesink
        expect_failure "$name" "$element with the frame size changing mid-stream"
        expect_in "$name" err "The frame size changed mid-stream from 64x48 to 80x60" \
            "$element: the error gives both sizes"
    done
}

case $PART in
inspect | segment | track | bgsub | errors) "part_$PART" ;;
*)
    echo "test_gst: unknown part '$PART'"
    exit 1
    ;;
esac
testlib_finish "test_gst $PART"
