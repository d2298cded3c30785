#!/usr/bin/env python3
"""glcv's tracker beside OpenCV's CSRT and KCF on OTB sequences, with one protocol and one scorer.

    python3 bench/track_peers.py GLCV SEQDIR... [--methods dcf,camshift] [--engines auto] [--peers csrt,kcf]

GLCV is the glcv program (build/tools/glcv); each SEQDIR an OTB sequence as the benchmark
distributes it (img/*.jpg and groundtruth_rect.txt). The protocol is OTB's one-pass evaluation, as
`glcv eval otb` runs it: every tracker starts from the first ground-truth box (1-based x, y in the
file, 0-based pixels here) and runs through every frame that has a ground-truth line; frames whose
ground-truth box has a width or height <= 0 are not scored. The scores are `glcv eval otb`'s:
  mean IoU   of the tracker's axis-aligned box with the ground truth's
  AUC        the mean over the thresholds 0, 0.05, ..., 1 of the share of frames with IoU above it
  prec@20    the share of frames whose box centre is within 20 pixels of the ground truth's
and the time: milliseconds per frame of the tracking calls alone, the frames decoded beforehand
(OpenCV: tracker.update; glcv: the frame and results calls, from `glcv track`'s summary), and the
frames per second that gives for one object.

glcv's rows come from `glcv eval otb` (the scores) and `glcv track` (the time), with the default
options and --method M --engine E for each M of --methods and E of --engines. The peers need OpenCV's Python module with the
tracking module (Debian: python3-opencv). Prints a table per sequence, then the means.
"""
import argparse
import glob
import math
import os
import re
import subprocess
import sys
import time

THRESHOLDS = 21
PRECISION_PX = 20
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".tga", ".ppm", ".pgm")


def load_truth(path):
    """The ground-truth boxes (x, y, w, h; 1-based x, y), one per non-empty line."""
    boxes = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            fields = [v for v in re.split(r"[,\s]+", line.strip()) if v]
            if not fields:
                continue
            if len(fields) != 4:
                sys.exit(f"track_peers: {path}:{number}: expected x,y,w,h")
            boxes.append(tuple(float(v) for v in fields))
    return boxes


def frames_of(seqdir, count):
    """The sequence's frame files in name order, as many as there are ground-truth boxes."""
    names = sorted(f for f in glob.glob(os.path.join(seqdir, "img", "*")) if f.lower().endswith(IMAGE_EXTENSIONS))
    if len(names) < 1:
        sys.exit(f"track_peers: {seqdir}/img holds no image files")
    return names[:count]


def score(boxes, truth):
    """(mean IoU, AUC, precision@20) of 0-based boxes against 1-based ground truth, as glcv eval otb."""
    above = [0] * THRESHOLDS
    near = scored = 0
    total = 0.0
    for box, gt in zip(boxes, truth):
        gx, gy, gw, gh = gt[0] - 1.0, gt[1] - 1.0, gt[2], gt[3]
        if gw <= 0 or gh <= 0:
            continue
        bx, by, bw, bh = box
        ix = min(bx + bw, gx + gw) - max(bx, gx)
        iy = min(by + bh, gy + gh) - max(by, gy)
        inter = ix * iy if ix > 0 and iy > 0 else 0.0
        union = bw * bh + gw * gh - inter
        iou = inter / union if union > 0 else 0.0
        dx = bx + bw * 0.5 - (gx + gw * 0.5)
        dy = by + bh * 0.5 - (gy + gh * 0.5)
        total += iou
        for k in range(THRESHOLDS):
            above[k] += iou > k / (THRESHOLDS - 1)
        near += dx * dx + dy * dy <= PRECISION_PX * PRECISION_PX
        scored += 1
    if scored == 0:
        return 0.0, 0.0, 0.0
    return total / scored, sum(a / scored for a in above) / THRESHOLDS, near / scored


def make_opencv_tracker(cv2, name):
    makers = {"csrt": "TrackerCSRT_create", "kcf": "TrackerKCF_create"}
    for owner in (cv2, getattr(cv2, "legacy", None)):
        if owner is not None and hasattr(owner, makers[name]):
            return getattr(owner, makers[name])()
    sys.exit(f"track_peers: this OpenCV has no {makers[name]} (its tracking module: Debian's python3-opencv)")


def run_opencv(cv2, name, files, truth):
    """The peer's boxes on every frame and its milliseconds per frame of update calls."""
    images = [cv2.imread(f, cv2.IMREAD_COLOR) for f in files]
    if any(im is None for im in images):
        sys.exit("track_peers: OpenCV cannot read a frame of " + os.path.dirname(files[0]))
    x, y, w, h = truth[0]
    start = (int(round(x - 1.0)), int(round(y - 1.0)), int(round(w)), int(round(h)))
    tracker = make_opencv_tracker(cv2, name)
    tracker.init(images[0], start)
    boxes = [start]
    elapsed = 0.0
    for image in images[1:]:
        t0 = time.perf_counter()
        ok, box = tracker.update(image)
        elapsed += time.perf_counter() - t0
        boxes.append(tuple(box) if ok else boxes[-1])
    return boxes, 1e3 * elapsed / max(1, len(images) - 1)


def run_glcv(glcv, seqdir, truth, method, engine):
    """glcv's scores (glcv eval otb) and its milliseconds per frame of tracking calls (glcv track)."""
    options = ["--method", method, "--engine", engine]
    out = subprocess.run([glcv, "eval", "otb", seqdir, *options, "-q"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"track_peers: glcv eval otb {seqdir} {' '.join(options)}: {out.stderr.strip()}")
    row = [line.split() for line in out.stdout.splitlines() if line.startswith(os.path.basename(seqdir.rstrip("/")))]
    if not row:
        sys.exit(f"track_peers: no row for {seqdir} in glcv eval otb's output:\n{out.stdout}")
    iou, auc, prec = (float(v) for v in row[0][2:5])
    x, y, w, h = truth[0]
    roi = f"{int(round(x - 1.0))},{int(round(y - 1.0))},{int(round(w))},{int(round(h))}"
    csv = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"track_peers_{os.getpid()}.csv")
    files = frames_of(seqdir, len(truth))
    tr = subprocess.run([glcv, "track", *files, "--roi", roi, "--csv", csv, *options, "-q"],
                        capture_output=True, text=True)
    if os.path.exists(csv):
        os.remove(csv)
    found = re.search(r"tracking ([0-9.]+) ms per frame", tr.stdout)
    if tr.returncode != 0 or not found:
        sys.exit(f"track_peers: glcv track on {seqdir}: {tr.stderr.strip() or tr.stdout.strip()}")
    return (iou, auc, prec), float(found.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("glcv", help="the glcv program")
    ap.add_argument("seqdirs", nargs="+", help="OTB sequence folders (img/, groundtruth_rect.txt)")
    ap.add_argument("--methods", default="dcf,camshift", help="glcv's methods, comma-separated [dcf,camshift]")
    ap.add_argument("--engines", default="auto", help="glcv's engines, comma-separated [auto]")
    ap.add_argument("--peers", default="csrt,kcf", help="OpenCV's trackers: csrt, kcf [csrt,kcf]")
    args = ap.parse_args()
    peers = [p for p in args.peers.split(",") if p]
    for p in peers:
        if p not in ("csrt", "kcf"):
            sys.exit(f"track_peers: unknown peer '{p}' (csrt, kcf)")
    cv2 = None
    if peers:
        try:
            import cv2
        except ImportError:
            sys.exit("track_peers: OpenCV's Python module is not installed (Debian: python3-opencv)")
    means = {}
    print(f"{'sequence':<16} {'tracker':<20} {'frames':>6} {'meanIoU':>8} {'AUC':>6} {'prec20':>7} {'ms/frame':>9} {'fps':>8}")
    for seqdir in args.seqdirs:
        truth = load_truth(os.path.join(seqdir, "groundtruth_rect.txt"))
        files = frames_of(seqdir, len(truth))
        truth = truth[: len(files)]
        rows = []
        for method in [m for m in args.methods.split(",") if m]:
            for engine in [e for e in args.engines.split(",") if e]:
                scores, ms = run_glcv(args.glcv, seqdir, truth, method, engine)
                rows.append((f"glcv {method} {engine}", scores, ms))
        for name in peers:
            boxes, ms = run_opencv(cv2, name, files, truth)
            rows.append((f"opencv {name}", score(boxes, truth), ms))
        for name, (iou, auc, prec), ms in rows:
            fps = 1e3 / ms if ms > 0 else math.inf
            print(f"{os.path.basename(seqdir.rstrip('/')):<16} {name:<20} {len(files):>6} {iou:>8.3f} {auc:>6.3f} "
                  f"{prec:>7.3f} {ms:>9.3f} {fps:>8.1f}")
            means.setdefault(name, []).append((iou, auc, prec, ms))
    if len(args.seqdirs) > 1:
        for name, values in means.items():
            n = len(values)
            iou, auc, prec, ms = (sum(v[i] for v in values) / n for i in range(4))
            print(f"{'mean':<16} {name:<20} {n:>6} {iou:>8.3f} {auc:>6.3f} {prec:>7.3f} {ms:>9.3f} {1e3 / ms:>8.1f}")


if __name__ == "__main__":
    main()
