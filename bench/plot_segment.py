#!/usr/bin/env python3
"""Plots segment_bench's CSV: time per frame vs MRF iterations, one line per engine mode and
column (T1000 and T1+up+dn), one panel per image size.

usage: plot_segment.py BENCH.csv OUT.png        (needs python3-matplotlib)
"""
import csv
import sys
from collections import defaultdict


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip())
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_segment.py: python3-matplotlib is not installed")
        return 1
    data = defaultdict(list)  # (size, mode) -> [(iterations, t1000, t1_updn)]
    with open(sys.argv[1]) as f:
        for row in csv.reader(line for line in f if not line.startswith("#")):
            if row and row[0] == "frame":
                size = "%sx%s" % (row[1], row[2])
                data[(size, row[3])].append((int(row[4]), float(row[5]), float(row[9])))
    sizes = sorted({k[0] for k in data}, key=lambda s: int(s.split("x")[0]))
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4.5), squeeze=False)
    for ax, size in zip(axes[0], sizes):
        for (sz, mode), rows in sorted(data.items()):
            if sz != size:
                continue
            rows.sort()
            it = [r[0] for r in rows]
            line, = ax.plot(it, [r[1] for r in rows], marker="o", label="%s T1000" % mode)
            ax.plot(it, [r[2] for r in rows], marker="x", linestyle="--", color=line.get_color(),
                    label="%s T1+up+dn" % mode)
        ax.set_yscale("log")
        ax.set_xlabel("MRF iterations")
        ax.set_ylabel("ms per frame")
        ax.set_title("glcv segmenter, %s" % size)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main())
