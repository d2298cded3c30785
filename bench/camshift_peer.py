#!/usr/bin/env python3
"""OpenCV's CamShift on an OTB sequence, and the OTB scores of tracks.

usage:
  camshift_peer.py OTB_DIR [--csv NAME=FILE ...] [--compare FILE] [--time-frames N]

OTB_DIR holds img/*.jpg and groundtruth_rect.txt (x,y,w,h per frame, 1-based pixels).

Prints, per tracker, the mean IoU, the success rate at IoU 0.5, the success AUC (the mean over
the thresholds 0, 0.05, ..., 1 of the share of frames whose IoU is above it) and the precision at
20 px (centre within 20 pixels), over all frames - the scores of 'glcv eval otb' (the OTB
one-pass evaluation; frame 1 included, its box is the initial one): OpenCV's cv::CamShift with the
recipe of its camshift samples (C++ camshiftdemo: 16 hue bins, S >= 30, 10 <= V <= 255; Python
camshift.py: 16 bins, S >= 60, V >= 32), each box being the rotated box's bounding rectangle
clipped to the frame, and every glcv CSV given with --csv (its x,y,bw,bh columns, object 0).

--compare FILE runs cv::CamShift with glcv's defaults (60 hue bins, S >= 30, 10 <= V <= 255,
epsilon 1, 10 iterations, no mask) and compares its boxes and windows with a glcv CSV made with
the same defaults (glcv track --engine cpu): the number of frames whose rotated box (beyond the
CSV's rounding to 3 decimals) or bounding box differs, until glcv marks the object lost (glcv then
searches the whole frame; OpenCV has no such step). Both must read the same pixels: JPEG decoders
differ (glcv uses stb_image, OpenCV libjpeg), so convert the frames to PNG first for this check.

--time-frames N times cv::CamShift (with the back-projection and the HSV conversion) on the
first N frames scaled to 1920x1080, window 1080x720, for the benchmark's OpenCV column.

Needs python3-opencv and numpy; without them, says so and exits 0.
"""
import glob
import os
import sys
import time


def load_truth(path):
    boxes = []
    with open(path) as f:
        for line in f:
            line = line.strip().replace("\t", ",").replace(" ", ",")
            if not line:
                continue
            x, y, w, h = [float(v) for v in line.split(",") if v != ""][:4]
            boxes.append((x - 1.0, y - 1.0, w, h))  # OTB boxes are 1-based
    return boxes


def iou(a, b):
    ax0, ay0, aw, ah = a
    bx0, by0, bw, bh = b
    x0, y0 = max(ax0, bx0), max(ay0, by0)
    x1, y1 = min(ax0 + aw, bx0 + bw), min(ay0 + ah, by0 + bh)
    inter = max(0.0, x1 - x0) * max(0.0, y1 - y0)
    union = aw * ah + bw * bh - inter
    return inter / union if union > 0 else 0.0


def score(boxes, truth):
    """mean IoU, success@0.5, success AUC, precision@20, frames (boxes of width or height <= 0 in
    the ground truth are not scored)"""
    pairs = [(b, t) for b, t in zip(boxes, truth) if t[2] > 0 and t[3] > 0]
    n = len(pairs)
    if not n:
        return 0.0, 0.0, 0.0, 0.0, 0
    ious = [iou(b, t) for b, t in pairs]
    mean = sum(ious) / n
    success = sum(1 for v in ious if v >= 0.5) / n
    auc = sum(sum(1 for v in ious if v > k / 20.0) / n for k in range(21)) / 21.0
    near = sum(1 for b, t in pairs
               if (b[0] + b[2] / 2 - t[0] - t[2] / 2) ** 2 + (b[1] + b[3] / 2 - t[1] - t[3] / 2) ** 2 <= 400) / n
    return mean, success, auc, near, n


def read_csv(path):
    boxes = {}
    with open(path) as f:
        header = f.readline().strip().split(",")
        col = {name: i for i, name in enumerate(header)}
        for line in f:
            v = line.strip().split(",")
            if len(v) < len(header) or int(v[col["object"]]) != 0:
                continue
            boxes[int(v[col["frame"]])] = tuple(float(v[col[k]]) for k in ("x", "y", "bw", "bh")) + (
                float(v[col["cx"]]), float(v[col["cy"]]), float(v[col["w"]]), float(v[col["h"]]),
                float(v[col["angle"]]), int(v[col["lost"]]))
    return [boxes[k] for k in sorted(boxes)]


def rotated_bounds(np, box, cols, rows):
    """cv::RotatedRect::boundingRect (float32 corners, floor / ceil), clipped to the frame."""
    (cx, cy), (w, h), angle = box
    if w <= 0 or h <= 0:
        return (0, 0, 0, 0)
    f = np.float32
    a = np.deg2rad(np.float64(angle))
    b, s = f(np.cos(a)) * f(0.5), f(np.sin(a)) * f(0.5)
    cx, cy, w, h = f(cx), f(cy), f(w), f(h)
    px0, py0 = cx - s * h - b * w, cy + b * h - s * w
    px1, py1 = cx + s * h - b * w, cy - b * h - s * w
    xs = [px0, px1, f(2) * cx - px0, f(2) * cx - px1]
    ys = [py0, py1, f(2) * cy - py0, f(2) * cy - py1]
    x, y = int(np.floor(min(xs))), int(np.floor(min(ys)))
    x1, y1 = int(np.ceil(max(xs))) + 1, int(np.ceil(max(ys))) + 1
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x1, cols), min(y1, rows)
    return (x0, y0, max(x1 - x0, 0), max(y1 - y0, 0)) if x1 > x0 and y1 > y0 else (0, 0, 0, 0)


def camshift_run(cv2, np, frames, roi, bins, smin, vmin, vmax):
    """cv::CamShift with the samples' recipe; returns per frame (bbox, rotated box)."""
    x, y, w, h = roi
    hsv = cv2.cvtColor(frames[0], cv2.COLOR_BGR2HSV)
    mask = cv2.inRange(hsv, np.array((0.0, smin, vmin)), np.array((180.0, 256.0, vmax)))
    hist = cv2.calcHist([hsv[y:y + h, x:x + w]], [0], mask[y:y + h, x:x + w], [bins], [0, 180])
    cv2.normalize(hist, hist, 0, 255, cv2.NORM_MINMAX)
    window = (x, y, w, h)
    crit = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 10, 1)
    out = []
    rows, cols = frames[0].shape[:2]
    for frame in frames:
        hsv = cv2.cvtColor(frame, cv2.COLOR_BGR2HSV)
        mask = cv2.inRange(hsv, np.array((0.0, smin, vmin)), np.array((180.0, 256.0, vmax)))
        prob = cv2.calcBackProject([hsv], [0], hist, [0, 180], 1)
        prob &= mask
        box, window = cv2.CamShift(prob, window, crit)
        if window[2] * window[3] <= 1:  # the samples' reset
            r = (min(cols, rows) + 5) // 6
            window = (max(window[0] - r, 0), max(window[1] - r, 0), min(2 * r, cols), min(2 * r, rows))
        out.append((rotated_bounds(np, box, cols, rows), box))
    return out


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) >= 2 else 2
    try:
        import cv2
        import numpy as np
    except ImportError:
        print("skipped: python3-opencv (and numpy) are not installed")
        return 0
    folder = argv[1]
    csvs, compare, time_frames = [], None, 0
    i = 2
    while i < len(argv):
        if argv[i] == "--csv" and i + 1 < len(argv):
            name, _, path = argv[i + 1].rpartition("=")
            csvs.append((name, path) if path else (os.path.basename(name), name))
            i += 2
        elif argv[i] == "--compare" and i + 1 < len(argv):
            compare = argv[i + 1]
            i += 2
        elif argv[i] == "--time-frames" and i + 1 < len(argv):
            time_frames = int(argv[i + 1])
            i += 2
        else:
            print("unknown argument " + argv[i])
            return 2
    files = sorted(glob.glob(os.path.join(folder, "img", "*.jpg")) + glob.glob(os.path.join(folder, "img", "*.png")))
    truth = load_truth(os.path.join(folder, "groundtruth_rect.txt"))
    frames = [cv2.imread(f) for f in files]
    if not frames or not truth:
        print("skipped: no frames or no ground truth in " + folder)
        return 0
    x, y, w, h = truth[0]
    roi = (int(round(x)), int(round(y)), int(round(w)), int(round(h)))
    print("sequence %s: %d frames %dx%d, first box %s (0-based)" % (folder, len(frames), frames[0].shape[1],
                                                                    frames[0].shape[0], roi))
    print("%-58s %8s %12s %7s %7s" % ("tracker", "mean IoU", "success@0.5", "AUC", "prec20"))
    for name, bins, smin, vmin, vmax in (("opencv CamShift (C++ sample: 16 bins, S>=30, V 10..255)", 16, 30, 10, 255),
                                         ("opencv CamShift (Python sample: 16 bins, S>=60, V>=32)", 16, 60, 32, 255)):
        run = camshift_run(cv2, np, frames, roi, bins, smin, vmin, vmax)
        m, s, a, p, n = score([b for b, _ in run], truth)
        print("%-58s %8.3f %12.3f %7.3f %7.3f" % (name, m, s, a, p))
    for name, path in csvs:
        boxes = read_csv(path)
        m, s, a, p, n = score([b[:4] for b in boxes], truth)
        print("%-58s %8.3f %12.3f %7.3f %7.3f" % ("glcv " + name, m, s, a, p))
    if compare:
        run = camshift_run(cv2, np, frames, roi, 60, 30, 10, 255)
        boxes = read_csv(compare)
        differ, compared, worst = 0, 0, 0.0
        for k, ((bb, box), g) in enumerate(zip(run, boxes)):
            if g[9]:
                break
            compared += 1
            (cx, cy), (bw, bh), angle = box
            d = max(abs(cx - g[4]), abs(cy - g[5]), abs(bw - g[6]), abs(bh - g[7]))
            da = abs(angle - g[8]) % 180.0
            d = max(d, min(da, 180.0 - da))
            worst = max(worst, d)
            if d > 0.0005 + 1e-6 or tuple(bb) != tuple(int(v) for v in g[:4]):  # the CSV has 3 decimals
                differ += 1
        print("cv::CamShift vs glcv (same parameters): %d of %d frames differ (largest difference %.6f)" %
              (differ, compared, worst))
    if time_frames:
        big = [cv2.resize(f, (1920, 1080)) for f in frames[:time_frames]]
        hsv = cv2.cvtColor(big[0], cv2.COLOR_BGR2HSV)
        hist = cv2.calcHist([hsv[180:900, 420:1500]], [0], None, [60], [0, 180])
        cv2.normalize(hist, hist, 0, 255, cv2.NORM_MINMAX)
        crit = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 10, 1)
        for with_hsv in (True, False):
            probs = [cv2.calcBackProject([cv2.cvtColor(f, cv2.COLOR_BGR2HSV)], [0], hist, [0, 180], 1) for f in big]
            t0 = time.perf_counter()
            for k, f in enumerate(big):
                prob = probs[k]
                if with_hsv:
                    prob = cv2.calcBackProject([cv2.cvtColor(f, cv2.COLOR_BGR2HSV)], [0], hist, [0, 180], 1)
                cv2.CamShift(prob, (420, 180, 1080, 720), crit)
            ms = 1e3 * (time.perf_counter() - t0) / len(big)
            print("opencv CamShift 1920x1080, window 1080x720, %s: %.3f ms per frame (%d threads)" %
                  ("with HSV + back-projection" if with_hsv else "back-projection given", ms, cv2.getNumThreads()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
