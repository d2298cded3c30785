#!/usr/bin/env python3
"""multicam_peer: the peer of multicam_bench - OpenCV's background subtractors on the CPU, as
many cameras at once as the processors allow, in the chapter's metric (cameras served at 25
frames per second).

  multicam_peer.py [--sizes 160x120,320x240,640x480,720x576] [--seconds S] [--workers N]

Each worker process runs one camera after another (round robin over 8 cameras, each with its own
subtractor, so that the per-camera state is real) on moving-square frames; cameras served =
frames per second of all workers together / 25. Methods: MOG2 (createBackgroundSubtractorMOG2,
defaults), KNN (createBackgroundSubtractorKNN, defaults) and frame differencing
(cv2.absdiff + threshold against the previous frame, the cheapest thing a user would write).
Prints a Markdown table."""
import argparse
import multiprocessing as mp
import os
import time

import cv2
import numpy as np


def frames_for(w, h, n=16):
    rng = np.random.default_rng(1)
    base = (rng.integers(40, 104, size=(h, w, 3))).astype(np.uint8)
    out = []
    for t in range(n):
        f = base.copy()
        x = (10 + 7 * t) % max(1, w - 30)
        f[10:40, x:x + 30] = 220
        out.append(f)
    return out


def worker(args):
    method, w, h, seconds = args
    cv2.setNumThreads(1)
    frames = frames_for(w, h)
    cams = 8
    if method == "mog2":
        subs = [cv2.createBackgroundSubtractorMOG2() for _ in range(cams)]
    elif method == "knn":
        subs = [cv2.createBackgroundSubtractorKNN() for _ in range(cams)]
    else:
        subs = [None] * cams
    prev = [None] * cams
    n = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        f = frames[n % len(frames)]
        c = n % cams
        if subs[c] is not None:
            subs[c].apply(f)
        else:
            g = cv2.cvtColor(f, cv2.COLOR_BGR2GRAY)
            if prev[c] is not None:
                _, m = cv2.threshold(cv2.absdiff(g, prev[c]), 20, 255, cv2.THRESH_BINARY)
            prev[c] = g
        n += 1
    return n / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="160x120,320x240,640x480,720x576")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--workers", type=int, default=os.cpu_count())
    a = ap.parse_args()
    print(f"# OpenCV {cv2.__version__}, {a.workers} worker processes, {a.seconds} s each")
    print("| size | method | frames/s | cameras at 25 fps |")
    print("|---|---|---:|---:|")
    with mp.Pool(a.workers) as pool:
        for size in a.sizes.split(","):
            w, h = (int(v) for v in size.split("x"))
            for method in ("mog2", "knn", "absdiff"):
                rates = pool.map(worker, [(method, w, h, a.seconds)] * a.workers)
                fps = sum(rates)
                print(f"| {w}x{h} | {method} | {fps:.0f} | {fps / 25:.0f} |", flush=True)


if __name__ == "__main__":
    main()
