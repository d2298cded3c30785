#!/usr/bin/env python3
"""OpenCV's cv2.matchTemplate on the data of match_bench (the peer of glcv's template matching).

Times TM_SQDIFF (glcv's SSD) and TM_CCOEFF_NORMED (glcv's ZNCC) on a 640x480 gray image with the
paper's masks 4..32, medians of --repeat runs, and, given the glcv tool (--glcv), checks that both
find the same best position as 'glcv match' (--metric ssd / zncc). OpenCV has no SAD.

Usage: match_peer.py [--data DIR] [--repeat N] [--threads N] [--glcv PATH] [--csv FILE]
  --data DIR   image.png and templ_N.png written by 'match_bench --write-data DIR'
               (default: a random 640x480 image and templates cut out of it, numpy seed 1)

An optional dependency: without OpenCV for Python (Debian: python3-opencv) it says so and exits 0.
"""
import argparse
import os
import subprocess
import sys
import time

MASKS = (4, 8, 12, 16, 24, 32)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data")
    ap.add_argument("--repeat", type=int, default=50)
    ap.add_argument("--threads", type=int, default=-1, help="cv2.setNumThreads (default: OpenCV's choice)")
    ap.add_argument("--glcv", help="the glcv tool, to compare best positions")
    ap.add_argument("--csv")
    args = ap.parse_args()
    try:
        import cv2
        import numpy as np
    except ImportError as e:
        print(f"match_peer: OpenCV for Python is not installed ({e}); skipped (Debian: apt-get install python3-opencv)")
        return 0
    if args.threads >= 0:
        cv2.setNumThreads(args.threads)

    if args.data:
        image = cv2.imread(os.path.join(args.data, "image.png"), cv2.IMREAD_GRAYSCALE)
        templs = {m: cv2.imread(os.path.join(args.data, f"templ_{m}.png"), cv2.IMREAD_GRAYSCALE) for m in MASKS}
        if image is None or any(t is None for t in templs.values()):
            print(f"match_peer: cannot read the data in {args.data}", file=sys.stderr)
            return 1
    else:
        rng = np.random.default_rng(1)
        image = rng.integers(0, 256, (480, 640), dtype=np.uint8)
        templs = {m: image[200 + 3 * i:200 + 3 * i + m, 100 + 7 * i:100 + 7 * i + m].copy() for i, m in enumerate(MASKS)}

    print(f"## OpenCV {cv2.__version__} cv2.matchTemplate, {image.shape[1]}x{image.shape[0]} gray, "
          f"{cv2.getNumThreads()} threads (ms per image: median (best) of {args.repeat})\n")
    print("| mask | TM_SQDIFF | TM_CCOEFF_NORMED | same best position as glcv (ssd, zncc) |")
    print("|---|---|---|---|")
    rows = []
    for m in MASKS:
        t = templs[m]
        cells = []
        best = {}
        for method in (cv2.TM_SQDIFF, cv2.TM_CCOEFF_NORMED):
            cv2.matchTemplate(image, t, method)  # warm-up
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                res = cv2.matchTemplate(image, t, method)
                times.append(1e3 * (time.perf_counter() - t0))
            times.sort()
            median = times[len(times) // 2]
            cells.append(f"{median:.3f} ({times[0]:.3f})")
            lo, hi, lo_at, hi_at = cv2.minMaxLoc(res)
            best[method] = lo_at if method == cv2.TM_SQDIFF else hi_at
            rows.append((m, "sqdiff" if method == cv2.TM_SQDIFF else "ccoeff_normed", median))
        same = "-"
        if args.glcv and args.data:
            verdicts = []
            for metric, method in (("ssd", cv2.TM_SQDIFF), ("zncc", cv2.TM_CCOEFF_NORMED)):
                out = subprocess.run([args.glcv, "match", os.path.join(args.data, "image.png"),
                                      os.path.join(args.data, f"templ_{m}.png"), "--metric", metric, "-q"],
                                     capture_output=True, text=True)
                if out.returncode != 0:
                    verdicts.append(f"glcv failed: {out.stderr.strip()}")
                    continue
                x, y, _ = out.stdout.splitlines()[0].split(",")
                verdicts.append("yes" if (int(x), int(y)) == tuple(best[method]) else
                                f"no: glcv ({x},{y}), OpenCV {best[method]}")
            same = ", ".join(verdicts)
        print(f"| {m}x{m} | {cells[0]} | {cells[1]} | {same} |")
    if args.csv:
        with open(args.csv, "a") as f:
            for m, method, ms in rows:
                f.write(f"opencv,{method},{m},{ms:.6f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
