#!/usr/bin/env python3
"""OpenCV's KNN background subtractor on image files, writing PNG masks: the peer of 'glcv segment'.

usage: segment_files_peer.py DIR OUTDIR [--threads N] [--learn N] [--limit N]

Reads the image files of DIR (sorted by name), feeds them in order to
cv2.createBackgroundSubtractorKNN (default parameters; the first --learn frames only train it, as
'glcv segment --learn N' learns from them), turns its mask into 0/255 (the shadow label 127 is
background) and writes OUTDIR/<stem>_mask.png at PNG compression level 1. The work overlaps the
way a user would write it: files are decoded and masks encoded on a pool of N threads (cv2.imread
and cv2.imwrite release Python's lock), the subtractor runs in frame order on the main thread with
N threads of its own (cv2.setNumThreads), and a bounded window of frames is in flight.

Prints two lines:
  opencv-KNN files: <frames> frames in <s> s: <fps> frames/s (<N> threads)   decode+KNN+encode+write
  opencv-KNN only:  <ms> ms per frame (<fps> frames/s)                       KNN on decoded frames
Needs OpenCV's Python module (Debian: python3-opencv); without it, says so and exits 1.
"""
import argparse
import collections
import concurrent.futures
import os
import sys
import time

EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".ppm", ".pgm", ".tga", ".tif", ".tiff")


def main():
    ap = argparse.ArgumentParser(usage=__doc__.strip().splitlines()[2][7:])
    ap.add_argument("dir")
    ap.add_argument("outdir")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--learn", type=int, default=30)
    ap.add_argument("--limit", type=int, default=0, help="at most this many files")
    args = ap.parse_args()
    try:
        import cv2
    except ImportError:
        print("segment_files_peer: error: python3-opencv is not installed", file=sys.stderr)
        return 1
    names = sorted(n for n in os.listdir(args.dir)
                   if n.lower().endswith(EXTENSIONS) and not n.startswith("."))
    if args.limit > 0:
        names = names[:args.limit]
    if len(names) <= args.learn:
        print("segment_files_peer: error: %s has %d image files, need more than --learn %d"
              % (args.dir, len(names), args.learn), file=sys.stderr)
        return 1
    os.makedirs(args.outdir, exist_ok=True)
    threads = max(1, args.threads)
    cv2.setNumThreads(threads)
    level = [cv2.IMWRITE_PNG_COMPRESSION, 1]

    def decode(name):
        image = cv2.imread(os.path.join(args.dir, name), cv2.IMREAD_COLOR)
        if image is None:
            raise RuntimeError("cannot decode " + name)
        return image

    def encode(name, mask):
        stem = os.path.splitext(name)[0]
        if not cv2.imwrite(os.path.join(args.outdir, stem + "_mask.png"), mask, level):
            raise RuntimeError("cannot write the mask of " + name)

    sub = cv2.createBackgroundSubtractorKNN()
    window = 4 * threads
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        pending = collections.deque()
        writes = collections.deque()
        next_submit = 0
        for i, name in enumerate(names):
            while next_submit < len(names) and next_submit < i + window:
                pending.append(pool.submit(decode, names[next_submit]))
                next_submit += 1
            frame = pending.popleft().result()
            mask = sub.apply(frame)
            if i < args.learn:
                continue
            _, mask = cv2.threshold(mask, 200, 255, cv2.THRESH_BINARY)
            writes.append(pool.submit(encode, name, mask))
            while len(writes) > window:
                writes.popleft().result()
        for w in writes:
            w.result()
    wall = time.perf_counter() - t0
    segmented = len(names) - args.learn
    print("opencv-KNN files: %d frames in %.3f s: %.1f frames/s (%d threads)"
          % (segmented, wall, segmented / wall, threads))

    # The subtractor alone, on frames decoded beforehand (at most 500 of them).
    frames = [decode(n) for n in names[:min(len(names), 500)]]
    sub = cv2.createBackgroundSubtractorKNN()
    for f in frames[:args.learn]:
        sub.apply(f)
    t0 = time.perf_counter()
    for f in frames[args.learn:]:
        sub.apply(f)
    per = (time.perf_counter() - t0) / (len(frames) - args.learn)
    print("opencv-KNN only:  %.4f ms per frame (%.1f frames/s, %d threads)" % (per * 1e3, 1.0 / per, threads))
    return 0


if __name__ == "__main__":
    sys.exit(main())
