#!/usr/bin/env bash
# Tests of 'glcv segment' on media sources: a lavfi graph with --max-frames; a lossless video file
# that test_video_fixture encodes from the synthetic scene, given as a FRAME and with --video,
# whose masks must be byte for byte those of the same frames as PNG files; a background of another
# size; a missing video; a network source cut or stalled mid-stream; Ctrl-C on an endless source. Without media input in glcv (no FFmpeg), a
# media source must fail with exit status 1, and the rest is skipped.
#
# usage: test_cli_media.sh PATH/TO/glcv PATH/TO/test_video_fixture   (exit 0 pass, 1 fail, 77 skip)
set -uo pipefail

GLCV=${1:-}
FIXTURE=${2:-}
if [ -z "$GLCV" ] || [ ! -x "$GLCV" ] || [ -z "$FIXTURE" ] || [ ! -x "$FIXTURE" ]; then
    echo "test_cli_media: glcv or test_video_fixture missing ('$GLCV', '$FIXTURE'): skipped"
    exit 77
fi

# shellcheck source=testlib.sh
source "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"
testlib_init glcv_cli_media
RUN=("$GLCV")

# expect_frames DIR FIRST LAST DESCRIPTION: DIR/frame_NNNNNN_mask.png exists for NNNNNN = FIRST..LAST
expect_frames() {
    CHECKS=$((CHECKS + 1))
    local k missing=""
    for k in $(seq "$2" "$3"); do
        [ -f "$(printf '%s/frame_%06d_mask.png' "$1" "$k")" ] || missing="$missing $k"
    done
    [ -z "$missing" ] || fail "$4: no mask for the frames$missing"
}

run info info
if ! grep -q "^media: *FFmpeg" "$TMP/info.out"; then
    echo "== without media input"
    run nomedia segment --lavfi testsrc --max-frames 3 --learn 1 -o "$TMP/nomedia"
    expect_rc nomedia 1 "a media source without media input"
    expect_in nomedia err "built without media input" "the error says that media input is missing"
    expect_absent "$TMP/nomedia" "without media input: nothing written"
    if testlib_finish test_cli_media; then
        echo "test_cli_media: glcv was built without media input (FFmpeg): the media tests are skipped"
        exit 77
    fi
    exit 1
fi

echo "== lavfi graph, --max-frames"
GRAPH="testsrc=size=160x120:rate=25"
run lavfi segment --lavfi "$GRAPH" --max-frames 20 --learn 5 --engine cpu -o "$TMP/lavfi"
expect_rc lavfi 0 "--lavfi --max-frames 20 --learn 5"
expect_count "$TMP/lavfi/*" 15 "--lavfi: the 15 frames after the 5 learned ones"
expect_frames "$TMP/lavfi" 5 19 "--lavfi: masks named by the frames' indices in the source"
expect_in lavfi err "glcv: input lavfi" "the input line names the source"
expect_in lavfi out "frames:     15 of 160x120" "--lavfi: the summary counts the segmented frames"
expect_in lavfi out "20 frames read (5 learned from)" "--lavfi: the summary counts the frames read"

echo "== a video file and the same frames as PNG files"
"$FIXTURE" "$TMP/clip.mkv" "$TMP/clip" 16 160x120 >"$TMP/fixture_run.out" 2>"$TMP/fixture_run.err"
echo $? >"$TMP/fixture_run.rc"
expect_rc fixture_run 0 "test_video_fixture writes the video"
expect_count "$TMP/clip/frame_*.png" 16 "test_video_fixture writes the frames as PNG files"
run clip_png segment --learn 4 "$TMP/clip" --engine cpu --panels -o "$TMP/clip_png"
expect_rc clip_png 0 "the PNG frames"
run clip_file segment --learn 4 "$TMP/clip.mkv" --engine cpu --panels -o "$TMP/clip_file"
expect_rc clip_file 0 "the video as a FRAME"
run clip_opt segment --learn 4 --video "$TMP/clip.mkv" --engine cpu --panels --threads 1 -o "$TMP/clip_opt"
expect_rc clip_opt 0 "the video with --video"
expect_count "$TMP/clip_file/*_mask.png" 12 "the video: 12 masks after 4 learned frames"
CHECKS=$((CHECKS + 1))
for k in $(seq 4 15); do
    png=$(printf '%s/frame_%04d' "$TMP/clip_png" "$k")
    for dir in clip_file clip_opt; do
        vid=$(printf '%s/frame_%06d' "$TMP/$dir" "$k")
        if ! cmp -s "${png}_mask.png" "${vid}_mask.png" || ! cmp -s "${png}_panel.png" "${vid}_panel.png"; then
            fail "$dir: frame $k of the video differs from the same frame as a PNG file"
            break 2
        fi
    done
done
echo "== --batch of video files: frame k of each as one set, up to the shortest"
"$FIXTURE" "$TMP/clip12.mkv" "$TMP/clip12" 12 160x120 >/dev/null 2>&1
"$FIXTURE" "$TMP/clip_small.mkv" "$TMP/clip_small" 12 96x64 >/dev/null 2>&1
run batch_vid segment --batch --method vsam --learn 4 "$TMP/clip.mkv" "$TMP/clip12.mkv" --engine cpu \
    -o "$TMP/batch_vid"
expect_rc batch_vid 0 "--batch of two videos"
expect_count "$TMP/batch_vid/0/frame_*_mask.png" 8 "--batch of videos: input 0 ends with the shortest"
expect_count "$TMP/batch_vid/1/frame_*_mask.png" 8 "--batch of videos: input 1's masks"
run batch_vid_0 segment --method vsam --learn 4 "$TMP/clip.mkv" --max-frames 12 --engine cpu -o "$TMP/batch_vid_0"
expect_rc batch_vid_0 0 "the first video alone"
CHECKS=$((CHECKS + 1))
for k in $(seq 4 11); do
    name=$(printf 'frame_%06d_mask.png' "$k")
    if ! cmp -s "$TMP/batch_vid/0/$name" "$TMP/batch_vid_0/$name"; then
        fail "--batch of videos: $name of input 0 differs from the video run alone"
        break
    fi
done
run batch_vid_size segment --batch --method vsam --learn 4 "$TMP/clip.mkv" "$TMP/clip_small.mkv" -o "$TMP/batch_vid_size"
expect_rc batch_vid_size 1 "--batch of videos of different sizes"
expect_in batch_vid_size err "96x64" "--batch names the other size"
expect_absent "$TMP/batch_vid_size" "--batch of videos of different sizes: nothing written"
run batch_mixed segment --batch --method vsam --learn 4 "$TMP/clip.mkv" "$TMP/clip" -o "$TMP/batch_mixed"
expect_rc batch_mixed 2 "--batch of a video and a folder: a usage error"

run clip_max segment --learn 4 "$TMP/clip.mkv" --max-frames 10 -o "$TMP/clip_max"
expect_rc clip_max 0 "the video with --max-frames, the default engine"
expect_frames "$TMP/clip_max" 4 9 "--max-frames 10 --learn 4: the masks of frames 4 to 9"
expect_count "$TMP/clip_max/*" 6 "--max-frames 10: nothing else"
run clip_short segment --learn 16 "$TMP/clip.mkv" -o "$TMP/clip_short"
expect_rc clip_short 1 "--learn with all of a video's frames"
expect_in clip_short err "the input ended after 16 frames" "a video read once needs frames after --learn"
run clip_bg segment --bg "$TMP/clip/frame_0000.png" "$TMP/clip.mkv" --size 80x60 -o "$TMP/clip_bg"
expect_rc clip_bg 1 "a background of another size than the scaled video"
expect_in clip_bg err "is 160x120 but the input's frames are 80x60" "the sizes are named"
expect_absent "$TMP/clip_bg" "a background of another size: nothing written"
run clip_missing segment --learn 2 "$TMP/no_such_clip.mkv" -o "$TMP/clip_missing"
expect_rc clip_missing 1 "a missing video"
expect_one_line clip_missing "glcv: error: cannot open video '$TMP/no_such_clip.mkv': No such file or directory" \
    "a missing video: one line, naming the file and the cause"
expect_absent "$TMP/clip_missing" "a missing video: nothing written"
run clip_missing_option track --video "$TMP/no_such_clip.mkv" --roi 1,1,8,8 --csv "$TMP/clip_missing.csv"
expect_rc clip_missing_option 1 "glcv track --video with a missing video"
expect_one_line clip_missing_option "glcv: error: cannot open video '$TMP/no_such_clip.mkv': No such file or directory" \
    "glcv track: a missing video in one line"
run clip_two segment --learn 2 "$TMP/clip.mkv" "$TMP/clip.mkv" -o "$TMP/clip_two"
expect_rc clip_two 2 "two video files"

echo "== glcv track on the video and on its PNG frames"
# The synthetic scene's red disc is near (103,67) in the first 160x120 frame: the same frames give
# the same tracks, whether read from the video or from the files (without the segmenter's mask,
# whose background each learns its own way: a median of the files, the video's first frames).
for input in clip.mkv clip; do
    run "track_$input" track "$TMP/$input" --roi 96,60,14,14 --engine cpu --no-mask --csv "$TMP/track_$input.csv"
    expect_rc "track_$input" 0 "glcv track $input"
done
run track_video_mask track "$TMP/clip.mkv" --roi 96,60,14,14 --method camshift --engine cpu --csv "$TMP/track_video_mask.csv"
expect_rc track_video_mask 0 "glcv track on a video, the mask by default"
expect_in track_video_mask err "background learned from the first 16 frames" "glcv track learns a video's background by default"
CHECKS=$((CHECKS + 1))
cmp -s "$TMP/track_clip.mkv.csv" "$TMP/track_clip.csv" || fail "glcv track: the video's tracks differ from the files'"
expect_in track_clip.mkv out "frames 16 objects 1" "glcv track: every frame of the video"
run track_lavfi track --lavfi "$GRAPH" --max-frames 12 --roi 10,10,30,30 --method camshift --mask-from-segmenter --csv "$TMP/track_lavfi.csv" \
    --overlay "$TMP/track_lavfi"
expect_rc track_lavfi 0 "glcv track --lavfi --max-frames 12 --mask-from-segmenter"
expect_in track_lavfi err "background learned from the first 12 frames" "glcv track learns a media source's background"
CHECKS=$((CHECKS + 1))
[ "$(wc -l <"$TMP/track_lavfi.csv")" = 13 ] || fail "glcv track --lavfi --max-frames 12: not a header and 12 rows"
expect_count "$TMP/track_lavfi/frame_0000??_track.png" 12 "glcv track --lavfi: overlays named by the frames' indices"

echo "== a network source cut or stalled mid-stream"
# A loopback server sends part of a video, then resets the connection (a network camera that went
# away) or stops sending (one that hangs). glcv segment must end with exit status 1 naming the
# cause, with the masks of the frames before it written whole and equal to those of the same frames
# read from the file. 200 frames at 25 fps: opening reads at most 5 s, so the fault comes after it.
PYTHON=$(command -v /usr/bin/python3 || command -v python3 || true)
"$FIXTURE" "$TMP/long.mkv" "$TMP/long" 200 64x48 >/dev/null 2>&1
if [ -z "$PYTHON" ] || [ ! -f "$TMP/long.mkv" ]; then
    echo "  skipped: no python3 for the loopback server, or no fixture video"
else
    cat >"$TMP/serve.py" <<'PY'
import socket, struct, sys, time
data = open(sys.argv[1], "rb").read()
cut = len(data) * int(sys.argv[2]) // 100
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
open(sys.argv[4], "w").write(str(s.getsockname()[1]))
s.settimeout(60)
c, _ = s.accept()
c.sendall(data[:cut])
if sys.argv[3] == "reset":
    time.sleep(0.3)
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
else:
    time.sleep(60)
c.close()
PY
    run long_file segment --learn 4 "$TMP/long.mkv" --engine cpu -o "$TMP/long_file"
    expect_rc long_file 0 "the whole video from the file"
    for end in reset stall; do
        rm -f "$TMP/port_$end"
        "$PYTHON" "$TMP/serve.py" "$TMP/long.mkv" 60 "$end" "$TMP/port_$end" &
        server=$!
        for _ in $(seq 100); do [ -s "$TMP/port_$end" ] && break; sleep 0.05; done
        start=$SECONDS
        run "net_$end" segment --learn 4 --video "tcp://127.0.0.1:$(cat "$TMP/port_$end")" --stall-timeout 1 \
            --engine cpu -o "$TMP/net_$end"
        took=$((SECONDS - start))
        kill "$server" 2>/dev/null
        wait "$server" 2>/dev/null
        expect_rc "net_$end" 1 "a network source that ends with a $end"
        if [ "$end" = reset ]; then
            expect_in "net_$end" err "Connection reset by peer" "the reset is named"
        else
            expect_in "net_$end" err "no data from video" "the stall is named"
            CHECKS=$((CHECKS + 1))
            [ "$took" -lt 20 ] || fail "a stalled source with --stall-timeout 1 took $took s"
        fi
        expect_count "$TMP/net_$end/*.tmp-*" 0 "$end: no temporary file is left"
        CHECKS=$((CHECKS + 1))
        masks=$(compgen -G "$TMP/net_$end/*_mask.png" | wc -l)
        [ "$masks" -ge 20 ] && [ "$masks" -lt 196 ] || fail "$end: $masks masks written (expected the frames before the fault)"
        for f in "$TMP/net_$end"/*_mask.png; do
            if ! cmp -s "$f" "$TMP/long_file/$(basename "$f")"; then
                fail "$end: $(basename "$f") differs from the same frame read from the file"
                break
            fi
        done
        echo "  $end: exit $(rc_of "net_$end") after $took s, $masks masks, equal to the file's"
    done
fi

# Once the 7th mask exists the pipeline runs; SIGINT (Ctrl-C) or SIGTERM (a supervisor, timeout)
# then stops the reading, the frames read are finished and written, the summary printed, and the
# exit status is 128 + the signal (130, 143).
for sig in INT TERM; do
    echo "== SIG$sig on an endless source"
    want=$([ "$sig" = INT ] && echo 130 || echo 143)
    out=$TMP/endless_$sig
    "$GLCV" segment --lavfi "$GRAPH" --learn 5 --engine cpu -o "$out" >"$out.out" 2>"$out.err" &
    pid=$!
    for _ in $(seq 3000); do
        [ -e "$out/frame_000011_mask.png" ] || ! kill -0 "$pid" 2>/dev/null && break
        sleep 0.1
    done
    kill -"$sig" "$pid" 2>/dev/null
    for _ in $(seq 3000); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid"
        fail "SIG$sig did not stop 'glcv segment --lavfi'"
    fi
    wait "$pid"
    echo $? >"$out.rc"
    name=endless_$sig
    expect_rc "$name" "$want" "SIG$sig: exit status $want"
    expect_in "$name" err "interrupted: stopped reading after" "SIG$sig is reported"
    expect_in "$name" out "written:    " "SIG$sig: the summary is printed"
    expect_count "$out/*.tmp-*" 0 "SIG$sig: no temporary file is left"
    CHECKS=$((CHECKS + 1))
    written=$(sed -n 's/^written: *\([0-9]*\) masks.*/\1/p' "$out.out")
    if [ -z "$written" ] || [ "$written" -lt 7 ] || [ "$(compgen -G "$out/*_mask.png" | wc -l)" != "$written" ]; then
        fail "SIG$sig: the summary says '$written' masks, $(compgen -G "$out/*_mask.png" | wc -l) were written"
    fi
    for f in "$out"/*_mask.png; do
        run endless_check compare "$f" "$f"
        if [ "$(rc_of endless_check)" != 0 ]; then
            expect_rc endless_check 0 "SIG$sig: $f is a whole PNG file"
            break
        fi
    done
done

testlib_finish test_cli_media
