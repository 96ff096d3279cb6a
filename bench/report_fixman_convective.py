#!/usr/bin/python3
"""Markdown section from the JSON of bench_fixman_convective (names ALGO/ROUTE/chain<n>), on stdout.

Usage: report_fixman_convective.py BENCH.json [--time real|cpu]
"""
import argparse
import json
import re
from collections import defaultdict

COLUMNS = [
    ("FD/saha", "Saha FD, O(n)"),
    ("FD/fixman", "Fixman FD, O(n)"),
    ("FD/cholesky", "I + Cholesky FD"),
    ("Solve/fixman", "Fixman solve I x = b"),
    ("LogDet/fixman", "Fixman log det"),
    ("LogDet/udu", "UDU log det"),
    ("C/saha", "C(q, qd), O(n^2)"),
    ("M/crba", "I(q), O(n^2)"),
]


def fmt(ns):
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e4:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--time", choices=["real", "cpu"], default="real")
    args = ap.parse_args()
    with open(args.json) as f:
        data = json.load(f)
    key = "real_time" if args.time == "real" else "cpu_time"
    have_aggregates = any(b.get("run_type") == "aggregate" for b in data["benchmarks"])
    table = defaultdict(dict)
    for b in data["benchmarks"]:
        if have_aggregates and b.get("aggregate_name") != "median":
            continue
        m = re.match(r"^(\w+/\w+)/chain(\d+)", b["name"])
        if not m:
            continue
        scale = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
        table[int(m.group(2))][m.group(1)] = b[key] * scale
    print("## Fixman's route, Saha's and the Cholesky route; the convective matrix (chains of PEERS.md)")
    print()
    print(f"`bench_fixman_convective`, {args.time} time per call, median of the repetitions:")
    print()
    print("| n | " + " | ".join(title for _, title in COLUMNS) + " | Fixman FD / Saha FD |")
    print("|---|" + "---|" * (len(COLUMNS) + 1))
    for n in sorted(table):
        row = table[n]
        cells = [fmt(row[k]) if k in row else "—" for k, _ in COLUMNS]
        ratio = row["FD/fixman"] / row["FD/saha"] if "FD/fixman" in row and "FD/saha" in row else float("nan")
        print(f"| {n} | " + " | ".join(cells) + f" | {ratio:.2f} |")
    print()


if __name__ == "__main__":
    main()
