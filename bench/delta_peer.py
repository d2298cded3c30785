#!/usr/bin/env python3
"""The peer of bench/delta_bench.c: what a user would write with numpy (and OpenCV's absdiff when
it is there) for the same frame-delta encoding with error feedback - the difference, the bytes
above the threshold, their indices and deltas, and the reference moved on - on the same kind of
synthetic frames (a fraction of the bytes changes by more than the threshold, the rest by at most
half of it). Prints the median ms per frame, one process, as a markdown table.

  python3 bench/delta_peer.py [--size 1920x1080] [--changed 0.001,0.01,0.1] [--frames 60] [--threshold 8]
"""
import argparse
import time

import numpy as np

try:
    import cv2
except ImportError:  # numpy alone
    cv2 = None


def next_frame(base, changed, threshold, rng):
    """Moves a fraction `changed` of the scene's bytes by more than the threshold (for good), and
    returns the frame: the scene plus noise of at most threshold / 2, which never adds up to a
    change on its own."""
    moved = rng.random(base.size) < changed
    step = threshold + 1 + rng.integers(0, 60, base.size)
    v = base.astype(np.int16)
    base[:] = np.clip(np.where(moved, v + np.where(v < 128, step, -step), v), 0, 255)
    noise = threshold // 2
    v = base.astype(np.int16)
    if noise:
        v = v + rng.integers(-noise, noise + 1, base.size)
    return np.clip(v, 0, 255).astype(np.uint8)


def encode_numpy(cur, ref, threshold):
    d = cur.astype(np.int16) - ref
    idx = np.flatnonzero(np.abs(d) > threshold).astype(np.uint32)
    deltas = (d[idx] & 255).astype(np.uint8)
    ref[idx] = cur[idx]
    return idx.tobytes() + deltas.tobytes()


def encode_opencv(cur, ref, threshold):
    diff = cv2.absdiff(cur, ref)
    idx = np.flatnonzero(diff > threshold).astype(np.uint32)
    deltas = (cur[idx] - ref[idx]).astype(np.uint8)  # modulo 256
    ref[idx] = cur[idx]
    return idx.tobytes() + deltas.tobytes()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1920x1080")
    ap.add_argument("--changed", default="0.001,0.01,0.1")
    ap.add_argument("--frames", type=int, default=60)
    ap.add_argument("--threshold", type=int, default=8)
    a = ap.parse_args()
    w, h = (int(v) for v in a.size.split("x"))
    n = w * h * 3
    print(f"# delta_peer: numpy {np.__version__}" + (f", OpenCV {cv2.__version__}" if cv2 else "") +
          f"; {w}x{h} RGB, threshold {a.threshold}, medians of {a.frames} frames")
    print("| size | peer | changed | ms/frame | packet bytes |")
    print("|---|---|---:|---:|---:|")
    for changed in (float(c) for c in a.changed.split(",")):
        for name, fn in (("numpy", encode_numpy), ("opencv absdiff + numpy", encode_opencv)):
            if fn is encode_opencv and cv2 is None:
                continue
            rng = np.random.default_rng(1)
            base = rng.integers(40, 200, n, dtype=np.uint8)
            ref = base.copy()
            times, sizes = [], []
            for k in range(5 + a.frames):
                f = next_frame(base, changed, a.threshold, rng)
                t0 = time.perf_counter()
                packet = fn(f, ref, a.threshold)
                t1 = time.perf_counter()
                if k >= 5:
                    times.append((t1 - t0) * 1000)
                    sizes.append(len(packet))
            times.sort()
            print(f"| {w}x{h} | {name} | {changed * 100:.1f}% | {times[len(times) // 2]:.3f} | "
                  f"{sum(sizes) / len(sizes):.0f} |")


if __name__ == "__main__":
    main()
