#!/usr/bin/env python3
"""OpenCV background subtractors on a CDnet-2014 video folder, scored like 'glcv eval cdnet'.

usage: cdnet_peers.py DIR [--methods mog2,knn,gsoc] [--save-masks OUTDIR] [--csv FILE] [--quiet]

DIR is a CDnet video folder: input/inNNNNNN.jpg (or .png), groundtruth/gtNNNNNN.png, ROI.bmp
(or ROI.png) and temporalROI.txt ("FIRST LAST"). Every method is fed all frames 1..LAST in order
with its default parameters (it learns its background model from the warm-up frames 1..FIRST-1
on its own) and is scored on frames FIRST..LAST, on the nonzero pixels of the ROI only. Mask 255
is foreground; OpenCV's shadow label (127) counts as background. Ground truth: 255 foreground, 0
and 50 (shadow) background, 85 and 170 not scored. The counts are summed over all scored frames
and give the CDnet metrics: recall, precision, F-measure, specificity, FPR, FNR, PWC.

Methods: mog2 (cv2.createBackgroundSubtractorMOG2), knn (cv2.createBackgroundSubtractorKNN), gsoc
(cv2.bgsegm.createBackgroundSubtractorGSOC, from OpenCV's contrib modules: skipped with a message
when this OpenCV lacks them).

Needs OpenCV's Python module and numpy (Debian: apt-get install python3-opencv); without them it
says so and exits 1. Exit status: 0 ok, 1 missing module or bad folder, 2 usage error.
"""
import argparse
import os
import sys
import time


def fail(message):
    print("cdnet_peers: error: " + message, file=sys.stderr)
    sys.exit(1)


def find_file(*candidates):
    for path in candidates:
        if os.path.isfile(path):
            return path
    return None


def read_temporal_roi(folder):
    path = os.path.join(folder, "temporalROI.txt")
    try:
        with open(path) as f:
            parts = f.read().split()
    except OSError as e:
        fail("%s: %s" % (path, e.strerror))
    try:
        first, last = (int(p) for p in parts)
    except ValueError:
        first = last = 0
    if len(parts) != 2 or not 1 <= first <= last:
        fail("%s: malformed: expected two frame numbers 'FIRST LAST' with 1 <= FIRST <= LAST" % path)
    return first, last


def plan(folder):
    """Checks the layout; returns (first, last, frame paths 1..last, truth paths first..last, roi path)."""
    if not os.path.isdir(folder):
        fail("%s: not a folder" % folder)
    first, last = read_temporal_roi(folder)
    roi = find_file(os.path.join(folder, "ROI.bmp"), os.path.join(folder, "ROI.png"))
    if roi is None:
        fail("%s: no ROI.bmp (nor ROI.png): the spatial region of interest is missing" % folder)
    frames = []
    for k in range(1, last + 1):
        stem = os.path.join(folder, "input", "in%06d" % k)
        path = find_file(stem + ".jpg", stem + ".png")
        if path is None:
            fail("%s.jpg (or .png): no such frame (temporalROI.txt scores frames up to %d)" % (stem, last))
        frames.append(path)
    truths = []
    for k in range(first, last + 1):
        path = os.path.join(folder, "groundtruth", "gt%06d.png" % k)
        if not os.path.isfile(path):
            fail("%s: no such ground truth (frame %d is scored)" % (path, k))
        truths.append(path)
    return first, last, frames, truths, roi


def make_methods(cv2, names):
    makers = {
        "mog2": ("OpenCV MOG2", lambda: cv2.createBackgroundSubtractorMOG2()),
        "knn": ("OpenCV KNN", lambda: cv2.createBackgroundSubtractorKNN()),
    }
    bgsegm = getattr(cv2, "bgsegm", None)
    if bgsegm is not None and hasattr(bgsegm, "createBackgroundSubtractorGSOC"):
        makers["gsoc"] = ("OpenCV GSOC", lambda: bgsegm.createBackgroundSubtractorGSOC())
    methods = []
    for name in names:
        if name in makers:
            methods.append((name,) + makers[name])
        elif name == "gsoc":
            print("gsoc: skipped: this OpenCV has no cv2.bgsegm.createBackgroundSubtractorGSOC "
                  "(the contrib modules; Debian's python3-opencv has them)")
        else:
            fail("unknown method '%s': use mog2, knn, gsoc" % name)
    return methods


def metrics(tp, fp, fn, tn):
    recall = tp / (tp + fn) if tp + fn else 1.0
    precision = tp / (tp + fp) if tp + fp else 1.0
    f = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "recall": recall, "precision": precision, "F": f,
        "specificity": tn / (tn + fp) if tn + fp else 1.0,
        "FPR": fp / (fp + tn) if fp + tn else 0.0,
        "FNR": fn / (tp + fn) if tp + fn else 0.0,
        "PWC": 100.0 * (fn + fp) / (tp + fn + fp + tn) if tp + fn + fp + tn else 0.0,
    }


def evaluate(cv2, np, make, first, last, frames, truths, roi, save_dir, quiet, label):
    subtractor = make()
    counts = np.zeros(4, np.int64)  # tp fp fn tn
    odd = 0
    seconds = 0.0
    for k in range(1, last + 1):
        image = cv2.imread(frames[k - 1], cv2.IMREAD_COLOR)
        if image is None:
            fail("%s: cannot decode" % frames[k - 1])
        if image.shape[:2] != roi.shape:
            fail("%s is %dx%d but the ROI is %dx%d" % (frames[k - 1], image.shape[1], image.shape[0],
                                                     roi.shape[1], roi.shape[0]))
        t0 = time.perf_counter()
        mask = subtractor.apply(image)
        seconds += time.perf_counter() - t0
        if not quiet and sys.stderr.isatty() and k % 50 == 0:
            print("\r%s: frame %d/%d" % (label, k, last), end="", file=sys.stderr, flush=True)
        if k < first:
            continue
        truth = cv2.imread(truths[k - first], cv2.IMREAD_GRAYSCALE)
        if truth is None or truth.shape != roi.shape:
            fail("%s: cannot decode, or not the size of the frames" % truths[k - first])
        fg = mask == 255
        positive = (truth == 255) & roi
        negative = ((truth == 0) | (truth == 50)) & roi
        odd += int((roi & ~np.isin(truth, (0, 50, 85, 170, 255))).sum())
        counts += [(fg & positive).sum(), (fg & negative).sum(), (~fg & positive).sum(), (~fg & negative).sum()]
        if save_dir:
            cv2.imwrite(os.path.join(save_dir, "bin%06d.png" % k), np.where(fg, 255, 0).astype(np.uint8))
    if not quiet and sys.stderr.isatty():
        print("\r" + " " * 40 + "\r", end="", file=sys.stderr)
    if odd:
        print("cdnet_peers: warning: %d ground-truth pixels have values other than 0, 50, 85, 170 and 255: "
              "not scored" % odd, file=sys.stderr)
    return [int(c) for c in counts], 1e3 * seconds / last


def main():
    parser = argparse.ArgumentParser(
        description="OpenCV background subtractors on a CDnet-2014 video folder, with the CDnet protocol.")
    parser.add_argument("folder", metavar="DIR", help="CDnet video folder (input/, groundtruth/, ROI.bmp, "
                                                       "temporalROI.txt)")
    parser.add_argument("--methods", default="mog2,knn,gsoc", help="comma-separated: mog2, knn, gsoc "
                                                                   "[mog2,knn,gsoc]")
    parser.add_argument("--save-masks", metavar="OUTDIR",
                        help="write the masks of the scored frames as OUTDIR/<method>/binNNNNNN.png")
    parser.add_argument("--csv", metavar="FILE", help="append one line per method to FILE (header when new)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args()
    try:
        import cv2
        import numpy as np
    except ImportError as e:
        fail("needs OpenCV's Python module and numpy (%s): on Debian, apt-get install python3-opencv" % e)

    first, last, frames, truths, roi_path = plan(args.folder)
    roi_image = cv2.imread(roi_path, cv2.IMREAD_GRAYSCALE)
    if roi_image is None:
        fail("%s: cannot decode" % roi_path)
    roi = roi_image != 0
    name = os.path.basename(os.path.normpath(args.folder))
    methods = make_methods(cv2, [m.strip() for m in args.methods.split(",") if m.strip()])
    rows = []
    for key, label, make in methods:
        save_dir = os.path.join(args.save_masks, key) if args.save_masks else None
        if save_dir:
            os.makedirs(save_dir, exist_ok=True)
        (tp, fp, fn, tn), ms = evaluate(cv2, np, make, first, last, frames, truths, roi, save_dir, args.quiet,
                                        label)
        m = metrics(tp, fp, fn, tn)
        print("%s, %s: F %.4f (recall %.4f, precision %.4f, PWC %.3f) on frames %d..%d, default parameters, "
              "%.2f ms per frame (%d threads)" % (label, name, m["F"], m["recall"], m["precision"], m["PWC"],
                                                  first, last, ms, cv2.getNumThreads()))
        for key_name, fmt in (("recall", "%.4f"), ("precision", "%.4f"), ("F", "%.4f"), ("specificity", "%.4f"),
                              ("FPR", "%.6f"), ("FNR", "%.6f"), ("PWC", "%.4f")):
            print("  %-12s " % ("F-measure" if key_name == "F" else key_name) + fmt % m[key_name])
        print("  %-12s TP %d FP %d FN %d TN %d" % ("pixels", tp, fp, fn, tn))
        rows.append((name, key, first, last, tp, fp, fn, tn, m, ms))
    if args.csv and rows:
        new = not os.path.exists(args.csv) or os.path.getsize(args.csv) == 0
        with open(args.csv, "a") as f:
            if new:
                f.write("video,method,first,last,TP,FP,FN,TN,recall,precision,F,specificity,FPR,FNR,PWC,ms_per_frame\n")
            for name_, key, first_, last_, tp, fp, fn, tn, m, ms in rows:
                f.write("%s,%s,%d,%d,%d,%d,%d,%d,%.6f,%.6f,%.6f,%.6f,%.8f,%.8f,%.6f,%.3f\n" % (
                    name_, key, first_, last_, tp, fp, fn, tn, m["recall"], m["precision"], m["F"],
                    m["specificity"], m["FPR"], m["FNR"], m["PWC"], ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
