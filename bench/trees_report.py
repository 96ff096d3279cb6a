#!/usr/bin/env python3
"""The trees' benchmark table from bench_trees' JSON (bench/run_trees.sh): medians of the repetitions, and the
ratios the targets of docs/trees.md are stated in. Prints markdown."""
import json
import re
import sys


def medians(path):
    doc = json.load(open(path))
    out = {}
    for b in doc["benchmarks"]:
        if b.get("aggregate_name") == "median":
            out[b["run_name"]] = b["real_time"] * {"ns": 1.0, "us": 1e3, "ms": 1e6}[b["time_unit"]]
    return out


def main():
    t = medians(sys.argv[1])
    models = sorted({k.split("/")[2] for k in t}, key=lambda m: (re.sub(r"\d+", "", m), m))

    def get(algo, lib, model):
        return t.get(f"{algo}/{lib}/{model}")

    def fmt(x, digits=2):
        return "—" if x is None else f"{x:.{digits}f}"

    print("Times: median of the repetitions, ns per call. Ratio: denoc / MuJoCo (below 1: denoc faster).\n")
    print("| model | ID | ID MuJoCo | ratio | FD (O(n)) | FD MuJoCo | ratio | FD by factor | M | M MuJoCo | ratio "
          "| I^-1 | dID | dFD |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for m in models:
        row = [m]
        for algo in ("ID", "FD"):
            d, j = get(algo, "denoc", m), get(algo, "mujoco", m)
            row += [fmt(d, 0), fmt(j, 0), fmt(d / j if d and j else None)]
        row.append(fmt(get("FDFactor", "denoc", m), 0))
        d, j = get("M", "denoc", m), get("M", "mujoco", m)
        row += [fmt(d, 0), fmt(j, 0), fmt(d / j if d and j else None)]
        for algo in ("Minv", "DID", "DFD"):
            row.append(fmt(get(algo, "denoc", m), 0))
        print("| " + " | ".join(row) + " |")

    print("\nPer body, tree against chain (target: at most 1.15) and floating against fixed "
          "(targets: ID 1.3, FD 1.6; M and I^-1 beside them):\n")
    print("| comparison | ID | FD (O(n)) | FD by factor | M | I^-1 | dID | dFD |")
    print("|---|---|---|---|---|---|---|---|")
    pairs = [("treechain12", "chain12", "a 12-joint chain on the tree recursions / on the serial ones"),
             ("treechain24", "chain24", "a 24-joint chain on the tree recursions / on the serial ones"),
             ("legs4x3", "chain12", "4 legs of 3 joints / a 12-joint chain"),
             ("legs4x6", "chain24", "4 legs of 6 joints / a 24-joint chain"),
             ("legs4x3_floating", "legs4x3", "floating / fixed root, 4 x 3"),
             ("legs4x6_floating", "legs4x6", "floating / fixed root, 4 x 6"),
             ("solo12", "solo12_fixed", "Solo-12 floating / fixed"),
             ("anymal_c", "anymal_c_fixed", "ANYmal C floating / fixed"),
             ("simple_humanoid", "simple_humanoid_fixed", "humanoid floating / fixed"),
             ("baxter_floating", "baxter", "Baxter floating / fixed")]
    for a, b, what in pairs:
        r = []
        for algo in ("ID", "FD", "FDFactor", "M", "Minv", "DID", "DFD"):
            x, y = get(algo, "denoc", a), get(algo, "denoc", b)
            r.append(fmt(x / y if x and y else None))
        if r != ["—"] * len(r):
            print(f"| {what} | " + " | ".join(r) + " |")

    print("\nBatches of 64 states on one thread, ns per state: the SIMD lanes at the default width, the engine's "
          "state-by-state loop, and the ratios lanes / loop and lanes / MuJoCo's single call:\n")
    print("| model | ID lanes | ID loop | lanes / loop | lanes / MuJoCo | FD lanes | FD loop | lanes / loop | "
          "lanes / MuJoCo | full factor lanes | loop | lanes / loop |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    per_state = 64.0
    for m in models:
        row = [m]
        for algo, single in (("IDBatch", "ID"), ("FDBatch", "FD"), ("FFBatch", None)):
            lanes, loop = get(algo, "lanes", m), get(algo, "loop", m)
            lanes = lanes / per_state if lanes else None
            loop = loop / per_state if loop else None
            row += [fmt(lanes, 0), fmt(loop, 0), fmt(lanes / loop if lanes and loop else None)]
            if single:
                j = get(single, "mujoco", m)
                row.append(fmt(lanes / j if lanes and j else None))
        if row[1:] != ["—"] * (len(row) - 1):
            print("| " + " | ".join(row) + " |")

    print("\nThe branch-induced sparsity: U D U^T on the tree's sparsity against Eigen's dense LLT of the same I(q):\n")
    print("| model | factor: tree | dense | dense / tree | solve: tree | dense | dense / tree |")
    print("|---|---|---|---|---|---|---|")
    for m in models:
        f, fd = get("Factor", "denoc", m), get("Factor", "dense", m)
        s, sd = get("Solve", "denoc", m), get("Solve", "dense", m)
        if f and fd:
            print(f"| {m} | {fmt(f, 0)} | {fmt(fd, 0)} | {fmt(fd / f)} | {fmt(s, 0)} | {fmt(sd, 0)} | "
                  f"{fmt(sd / s if s and sd else None)} |")


if __name__ == "__main__":
    main()
