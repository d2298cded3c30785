#!/usr/bin/env python3
"""The Python package gives the glcv tool's results on the same frames.

A synthetic scene (glcv synth) is written as PNG files; the tool segments or tracks it, and the
Python classes do the same from the same files (read with glcv.imread):
  segment-cpu  glcv segment --bg ... --engine cpu: the Segmenter's masks equal the tool's, byte for
               byte
  segment-gl   glcv segment --bg ... on its default engine (a GL one in a headless context): the
               Segmenter on the engine the tool reports, in a glcv.Context (exit 77 without one)
  track        glcv track --no-mask --csv, on the CPU and on the default engine: the Tracker's
               boxes equal the CSV's rows

usage: test_cli.py PATH/TO/glcv segment-cpu|segment-gl|track      (exit 0 pass, 1 fail, 77 skip)
"""
import csv
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

import glcv

FRAMES, SIZE = 12, (128, 96)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"test_cli: {' '.join(cmd)}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    return r


def synth(tool, d):
    run([tool, "synth", "-o", d, "--frames", str(FRAMES), "--size", f"{SIZE[0]}x{SIZE[1]}", "-q"])
    frames = sorted(glob.glob(os.path.join(d, "frame_*.png")))
    if len(frames) != FRAMES:
        raise SystemExit(f"test_cli: glcv synth wrote {len(frames)} frames, not {FRAMES}")
    return os.path.join(d, "background.png"), frames


def compare_masks(tool, d, engine_arg):
    """Segments with the tool, then with the Segmenter; returns the number of failures."""
    background, frames = synth(tool, os.path.join(d, "scene"))
    out = os.path.join(d, "masks")
    cmd = [tool, "segment", "--bg", background, *frames, "-o", out] + (["--engine", engine_arg] if engine_arg else [])
    r = run(cmd)
    m = re.search(r"^glcv: engine (\w+)", r.stderr, re.M) if engine_arg is None else None
    engine = m.group(1) if m else engine_arg
    if engine is None:
        raise SystemExit(f"test_cli: no engine line from glcv segment:\n{r.stderr}")
    ctx = glcv.Context() if engine != "cpu" else None
    print(f"glcv segment engine {engine}" + (f"; Python on {ctx.description}" if ctx else ""))
    failures = 0
    with glcv.Segmenter(SIZE[0], SIZE[1], engine=engine, context=ctx) as seg:
        if seg.engine != engine:
            print(f"FAIL: the Segmenter runs on {seg.engine}, not {engine}")
            return 1
        seg.set_background(glcv.imread(background))
        for f in frames:
            mine = seg.segment(glcv.imread(f))
            name = os.path.basename(f)[:-len(".png")] + "_mask.png"
            theirs = glcv.imread(os.path.join(out, name), "gray")
            if not np.array_equal(mine, theirs):
                diff = np.argwhere(mine != theirs)
                print(f"FAIL: {name}: {len(diff)} pixels differ, first (row, col, Python, tool): " +
                      ", ".join(f"({y}, {x}, {mine[y, x]}, {theirs[y, x]})" for y, x in diff[:8]))
                failures += 1
        fg = np.count_nonzero(mine) / mine.size
    if fg == 0 or fg > 0.5:
        print(f"FAIL: the last mask is {100 * fg:.1f} % foreground: the scene is not segmented")
        failures += 1
    print(f"{len(frames)} masks compared, {failures} differ (last mask {100 * fg:.1f} % foreground)")
    if ctx:
        ctx.close()
    return failures


def rois_of(truth_path, count=2, side=14):
    """Boxes around `count` objects of the ground truth: the centres of the first foreground
    pixels found, far enough apart."""
    truth = glcv.imread(truth_path, "gray")
    rois = []
    for y, x in np.argwhere(truth > 127):
        if all(abs(x - rx - side // 2) > 2 * side or abs(y - ry - side // 2) > 2 * side for rx, ry, _, _ in rois):
            rois.append((max(int(x) - side // 2, 0), int(y), side, side))
        if len(rois) == count:
            break
    return rois


def compare_tracks(tool, d):
    background, frames = synth(tool, os.path.join(d, "scene"))
    rois = rois_of(os.path.join(d, "scene", "truth_0000.png"))
    if not rois:
        raise SystemExit("test_cli: no object in the first frame's ground truth")
    failures = 0
    for engine, method in (("cpu", "camshift"), ("auto", "camshift"), ("auto", "dcf")):
        path = os.path.join(d, f"{engine}_{method}.csv")
        cmd = [tool, "track", *frames, "--no-mask", "--csv", path, "--engine", engine, "--method", method]
        for r in rois:
            cmd += ["--roi", ",".join(map(str, r))]
        out = run(cmd)
        m = re.search(r"^glcv: track engine (\w+)", out.stderr, re.M)
        if not m:
            raise SystemExit(f"test_cli: no engine line from glcv track:\n{out.stderr}")
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        header, rows = rows[0], rows[1:]
        # the tool's tracker: adaptive window, 60 hue bins, limits 30, 10, 255, up to 64 objects
        with glcv.Tracker(SIZE[0], SIZE[1], engine=m.group(1), method=method, window="adaptive", hue_bins=60,
                          max_objects=64) as tr:
            tr.set_limits(30, 10, 255)
            images = [glcv.imread(f) for f in frames]
            for r in rois:
                tr.add(tr.compute_hist(images[0], r) if method == "camshift" else None, r)
            mine = []
            for i, img in enumerate(images):
                for res in tr.track(img):
                    mine.append([str(i), str(res.id)] + [f"{v:.3f}" for v in (res.cx, res.cy, res.width, res.height,
                                                                           res.angle)]
                                + [str(v) for v in res.bbox] + [str(res.iterations), str(res.lost)]
                                + [f"{res.peak:.3f}"])
        theirs = [row[:13] + row[14:15] for row in rows]
        bad = [(a, b) for a, b in zip(mine, theirs) if a != b]
        if len(mine) != len(theirs) or bad:
            failures += 1
            print(f"FAIL: engine {engine}, {method}: {len(mine)} Python rows, {len(theirs)} tool rows, {len(bad)} differ")
            for a, b in bad[:5]:
                print("  Python:", ",".join(a), "\n  tool:  ", ",".join(b))
        else:
            moved = {row[1]: row[2:4] for row in theirs if row[0] == "0"} != \
                {row[1]: row[2:4] for row in theirs if row[0] == str(FRAMES - 1)}
            print(f"engine {engine} ({m.group(1)}): {len(mine)} rows ({len(rois)} objects x {FRAMES} frames) equal "
                  f"({header[2]},{header[3]}... of the CSV); boxes {'moved' if moved else 'did not move'}")
            if not moved:
                failures += 1
                print("FAIL: no box moved: the comparison proves nothing")
    return failures


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("segment-cpu", "segment-gl", "track"):
        print(__doc__, file=sys.stderr)
        return 2
    tool, mode = sys.argv[1], sys.argv[2]
    if not os.access(tool, os.X_OK):
        print(f"test_cli: {tool} is not an executable: skipped")
        return 77
    with tempfile.TemporaryDirectory(prefix="glcv_py_cli.") as d:
        if mode == "segment-cpu":
            failures = compare_masks(tool, d, "cpu")
        elif mode == "segment-gl":
            try:
                glcv.Context().close()
            except glcv.Error as e:
                print(f"test_cli: no GL context ({e}): skipped")
                return 77
            failures = compare_masks(tool, d, None)
        else:
            failures = compare_tracks(tool, d)
    print("test_cli", mode, "FAILED" if failures else "passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
