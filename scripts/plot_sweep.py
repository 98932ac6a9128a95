"""Plots an ascendless-bench sweep: throughput against size for each series of the CSV.

usage: python3 plot_sweep.py SWEEP.csv OUT.png   (ascendless-bench sweep runs it itself)
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, out):
    series = {}
    with open(src, newline="") as f:
        for row in csv.DictReader(f):
            if row["gbps"]:
                series.setdefault(row["series"], []).append((int(row["size"]), float(row["gbps"])))
    fig, ax = plt.subplots(figsize=(8, 5))
    for name, points in sorted(series.items()):
        points.sort()
        baseline = not name.startswith("adxl")
        ax.plot([p[0] for p in points], [p[1] for p in points], "--" if baseline else "-",
                marker="o" if not baseline else ".", label=name + (" (baseline)" if baseline else ""))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes per call")
    ax.set_ylabel("throughput, GB/s")
    ax.set_title("ascendless ADXL against memcpy and raw TCP (same run)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=100)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
