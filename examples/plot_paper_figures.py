#!/usr/bin/python3
"""Plots the CSV files written by denoc_paper_figures into PNG figures.

Usage: /usr/bin/python3 examples/plot_paper_figures.py CSV_DIR OUT_DIR

Writes OUT_DIR/planar_free_fall.png (Saha 1999 Fig. 6), OUT_DIR/stanford_eq39_torques.png (Fig. 8) and
OUT_DIR/stanford_free_fall.png (Fig. 9). Needs matplotlib (Debian python3-matplotlib).
"""
import csv
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return {k: [float(r[k]) for r in rows] for k in rows[0]}


def deg(values):
    return [math.degrees(v) for v in values]


def planar(d, out):
    fig, (ax, ax_e) = plt.subplots(2, 1, figsize=(8, 6.5), sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    for j in (1, 2, 3):
        ax.plot(d["t"], deg(d[f"q{j}"]), label=f"th_{j}")
    ax.set_ylabel("joint angle (deg)")
    ax.set_title("3-DOF planar arm, free fall from rest at theta = 0 (Saha 1999, Fig. 6)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right")
    e0 = d["energy"][0]
    scale = max(d["kinetic"])
    ax_e.plot(d["t"], [(e - e0) / scale for e in d["energy"]], color="k")
    ax_e.set_ylabel("(E - E0) / max T")
    ax_e.set_xlabel("time (s)")
    ax_e.grid(True, alpha=0.3)
    ax_e.ticklabel_format(axis="y", style="sci", scilimits=(0, 0))
    fig.tight_layout()
    fig.savefig(os.path.join(out, "planar_free_fall.png"), dpi=110)
    plt.close(fig)


def stanford_torques(d, out):
    fig, axes = plt.subplots(3, 2, figsize=(10, 8), sharex=True)
    for j in range(1, 7):
        ax = axes[(j - 1) // 2][(j - 1) % 2]
        ax.plot(d["t"], d[f"tau{j}"], color="C0")
        ax.set_title(f"({'abcdef'[j - 1]}) joint {j}", fontsize=10)
        ax.set_ylabel("force (N)" if j == 3 else "torque (N m)")
        ax.grid(True, alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    fig.suptitle("Stanford arm, joint torques and force along the eq. 39 trajectory (Saha 1999, Fig. 8)")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "stanford_eq39_torques.png"), dpi=110)
    plt.close(fig)


def stanford_free_fall(d, out):
    fig, axes = plt.subplots(3, 2, figsize=(10, 8), sharex=True)
    for j in range(1, 7):
        ax = axes[(j - 1) // 2][(j - 1) % 2]
        if j == 3:
            ax.plot(d["t"], d["q3"], color="C1")
            ax.set_ylabel("b_3 (m)")
        else:
            ax.plot(d["t"], deg(d[f"q{j}"]), color="C1")
            ax.set_ylabel(f"theta_{j} (deg)")
        ax.set_title(f"({'abcdef'[j - 1]}) joint {j}", fontsize=10)
        ax.grid(True, alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    fig.suptitle("Stanford arm, free fall from rest at the eq. 39 start pose (Saha 1999, Fig. 9)")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "stanford_free_fall.png"), dpi=110)
    plt.close(fig)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    planar(read(os.path.join(src, "planar_free_fall.csv")), out)
    stanford_torques(read(os.path.join(src, "stanford_eq39_torques.csv")), out)
    stanford_free_fall(read(os.path.join(src, "stanford_free_fall.csv")), out)
    print("wrote", ", ".join(os.path.join(out, n) for n in
                             ("planar_free_fall.png", "stanford_eq39_torques.png", "stanford_free_fall.png")))


if __name__ == "__main__":
    main()
