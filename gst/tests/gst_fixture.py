"""Fixtures and checks of the GStreamer plugin's tests (test_gst.sh).

  masks GST_PATTERN CLI_PATTERN FIRST COUNT [EMPTY]
      compares the element's masks (PNG, grey RGBA: the red channel) of frames FIRST..FIRST+COUNT-1
      with glcv segment's (8-bit grey), byte for byte, and checks that the element's frames
      0..EMPTY-1 (learned from) are empty. Prints how many pixels differ where they do.
  track-frames DIR
      writes a 160x120 sequence of 24 frames: a red square (24x24) moving right and down over a
      grey textured background; prints the first frame's box x,y,w,h.
  track GST_CSV CLI_CSV
      compares the element's ROI metas (frame,id,x,y,w,h) with glcv track's CSV (x,y,bw,bh) frame by
      frame, and each box with the square's true position (within 6 pixels).
"""
import csv
import os
import sys

import numpy as np

try:  # the build's own package reads and writes the images; else OpenCV, where it is installed
    import glcv
    cv2 = None
except ImportError:
    import cv2

W, H, FRAMES, SIDE = 160, 120, 24, 24


def imread(path, mode=None):
    """The image, or None: mode None keeps the file's channels (HxW, or RGB(A) order), "bgr" gives
    HxWx3 in BGR order (as cv2.imread)."""
    if cv2 is None:
        try:
            return glcv.imread(path, mode)
        except glcv.Error:
            return None
    a = cv2.imread(path, cv2.IMREAD_UNCHANGED if mode is None else cv2.IMREAD_COLOR)
    if a is not None and mode is None and a.ndim == 3:
        a = np.ascontiguousarray(a[..., [2, 1, 0, 3][:a.shape[2]]])
    return a


def imwrite_bgr(path, frame):
    if cv2 is None:
        glcv.imwrite(path, frame, order="bgr")
    elif not cv2.imwrite(path, frame):
        raise OSError(f"cannot write {path}")


def square_at(k):
    return 20 + 3 * k, 30 + k  # top-left corner of the square in frame k


def masks(gst_pattern, cli_pattern, first, count, empty=0):
    failures = 0
    for k in range(empty):
        a = imread(gst_pattern % k)
        if a is None or np.count_nonzero(a[..., 0]) != 0:
            print(f"frame {k}: learned from, but its mask is not empty (or unreadable)")
            failures += 1
    for k in range(first, first + count):
        a = imread(gst_pattern % k)
        b = imread(cli_pattern % k)
        if a is None or b is None:
            print(f"frame {k}: missing mask ({gst_pattern % k}: {a is not None}, {cli_pattern % k}: {b is not None})")
            failures += 1
            continue
        got = a[..., 0] if a.ndim == 3 else a  # RGBA: the red channel is index 0
        if got.shape != b.shape:
            print(f"frame {k}: element mask {got.shape}, glcv segment's {b.shape}")
            failures += 1
            continue
        diff = np.count_nonzero(got != b)
        if diff:
            ys, xs = np.nonzero(got != b)
            print(f"frame {k}: {diff} of {b.size} pixels differ (first at x={xs[0]} y={ys[0]}: element "
                  f"{got[ys[0], xs[0]]}, glcv segment {b[ys[0], xs[0]]}); foreground {np.count_nonzero(got)} vs "
                  f"{np.count_nonzero(b)}")
            failures += 1
        elif np.count_nonzero(b) == 0:
            print(f"frame {k}: glcv segment's mask is empty: the comparison proves nothing")
            failures += 1
    print(f"masks: {count} frames compared, {failures} failed")
    return failures == 0


def track_frames(folder):
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(7)
    texture = rng.integers(90, 140, size=(H, W), dtype=np.uint8)
    for k in range(FRAMES):
        frame = np.repeat(texture[:, :, None], 3, axis=2).copy()
        x, y = square_at(k)
        frame[y:y + SIDE, x:x + SIDE] = (30, 40, 220)  # BGR: red
        imwrite_bgr(os.path.join(folder, f"frame_{k:04d}.png"), frame)
    x, y = square_at(0)
    print(f"{x},{y},{SIDE},{SIDE}")
    return True


def track(gst_csv, cli_csv):
    with open(gst_csv) as f:
        gst = {(int(r["frame"]), int(r["id"])): r for r in csv.DictReader(f)}
    with open(cli_csv) as f:
        cli = {(int(r["frame"]), int(r["object"])): r for r in csv.DictReader(f)}
    failures = 0
    if len(gst) != FRAMES or len(cli) != FRAMES:
        print(f"{len(gst)} element boxes and {len(cli)} glcv track rows, expected {FRAMES} each")
        failures += 1
    for key in sorted(cli):
        c = cli[key]
        want = tuple(int(c[n]) for n in ("x", "y", "bw", "bh"))
        if key not in gst:
            print(f"frame {key[0]} object {key[1]}: no ROI meta")
            failures += 1
            continue
        got = tuple(int(gst[key][n]) for n in ("x", "y", "w", "h"))
        if got != want:
            print(f"frame {key[0]} object {key[1]}: element box {got}, glcv track {want}")
            failures += 1
        x, y = square_at(key[0])
        cx, cy = got[0] + got[2] / 2, got[1] + got[3] / 2
        if abs(cx - (x + SIDE / 2)) > 6 or abs(cy - (y + SIDE / 2)) > 6:
            print(f"frame {key[0]}: box centre ({cx:.1f}, {cy:.1f}), the square's ({x + SIDE / 2}, {y + SIDE / 2})")
            failures += 1
    print(f"track: {len(cli)} boxes compared, {failures} failed")
    return failures == 0


def main(argv):
    if argv[1] == "masks":
        return masks(argv[2], argv[3], int(argv[4]), int(argv[5]), int(argv[6]) if len(argv) > 6 else 0)
    if argv[1] == "track-frames":
        return track_frames(argv[2])
    if argv[1] == "track":
        return track(argv[2], argv[3])
    print(f"unknown command {argv[1]}")
    return False


if __name__ == "__main__":
    sys.exit(0 if main(sys.argv) else 1)
