#!/usr/bin/env python3
"""OpenCV background subtractors (MOG2, KNN) on the frames segment_bench wrote, for its peer column.

usage: peers_bgsub.py DIR      (DIR holds background.png and frame_NNNN.png)
Prints one line per method: "<name> <ms> ms per frame (<threads> threads)". Needs python3-opencv;
without it, says so and exits 0 so the benchmark goes on.
"""
import glob
import os
import sys
import time


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip())
        return 2
    try:
        import cv2
    except ImportError:
        print("skipped: python3-opencv is not installed")
        return 0
    folder = sys.argv[1]
    files = sorted(glob.glob(os.path.join(folder, "frame_*.png")))
    background = cv2.imread(os.path.join(folder, "background.png"))
    frames = [cv2.imread(f) for f in files]
    if background is None or not frames:
        print("skipped: no frames in " + folder)
        return 0
    for name, make in (("opencv-MOG2", cv2.createBackgroundSubtractorMOG2),
                       ("opencv-KNN", cv2.createBackgroundSubtractorKNN)):
        sub = make()
        for _ in range(20):  # learn the background
            sub.apply(background)
        times = []
        for rep in range(5):
            for f in frames:
                t0 = time.perf_counter()
                sub.apply(f)
                times.append((time.perf_counter() - t0) * 1e3)
        times.sort()
        print("%s %.4f ms per frame (%d threads)" % (name, times[len(times) // 2], cv2.getNumThreads()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
