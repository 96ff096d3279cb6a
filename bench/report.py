#!/usr/bin/python3
"""Turns the JSON of bench_core into docs/benchmarks.md (markdown on stdout).

Usage: report.py BENCH.json [--build-dir DIR] [--time real|cpu] [--meta key=value ...]

Benchmarks are named ALGO/LIB/MODEL (see bench_core.cpp). With repetitions, the median aggregate is used;
without, the median of the iteration runs.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

ALGOS = [
    # key, description, ours, KDL's, best peer / KDL on the Panda from shared/PEERS.md
    ("ID", "inverse dynamics", "inverseDynamics", "ChainIdSolver_RNE", 2114 / 823),
    ("M", "inertia matrix", "computeInertiaMatrix", "ChainDynParam::JntToMass", 2896 / 788),
    ("FullFactor", "I, U, D and log det", "computeFullFactor", None, None),
    ("UDU", "U D U^T factors (U not formed)", "computeUDU(.., false)", None, None),
    ("FD", "O(n) forward dynamics", "forwardDynamics (Saha)", "ChainHdSolver_Vereshchagin", 6549 / 2216),
    ("FDChol", "I(q) + Cholesky forward dynamics", "forwardDynamicsCholesky", "ChainFdSolver_RNE",
     5330 / 2428),
    ("Minv", "I(q)^-1", "computeInverseInertia", None, None),
    ("FDFixman", "O(n) forward dynamics (Fixman)", "forwardDynamicsFixman", None, None),
]
O_N = [("ID", "denoc"), ("ID", "kdl"), ("UDU", "denoc"), ("FD", "denoc"), ("FDFixman", "denoc"), ("FD", "kdl")]


def load(path, time_key):
    with open(path) as f:
        doc = json.load(f)
    runs = {}
    medians = {}
    for b in doc["benchmarks"]:
        name = b.get("run_name", b["name"])
        unit = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[b.get("time_unit", "ns")]
        t = b[time_key] * unit
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[name] = t
        else:
            runs.setdefault(name, []).append(t)
    times = {name: statistics.median(ts) for name, ts in runs.items()}
    times.update(medians)  # the aggregate wins when there is one
    table = {}
    for name, t in times.items():
        parts = name.split("/")
        if len(parts) == 3:
            table[tuple(parts)] = t
    return doc.get("context", {}), table


def sh(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return ""


def cmake_cache(build_dir):
    cache = {}
    path = os.path.join(build_dir, "CMakeCache.txt") if build_dir else ""
    if path and os.path.exists(path):
        with open(path) as f:
            for line in f:
                m = re.match(r"^([A-Za-z_0-9]+):[A-Z]+=(.*)$", line.rstrip("\n"))
                if m:
                    cache[m.group(1)] = m.group(2)
    return cache


def machine(context, build_dir, meta, time_key):
    lines = []
    model = ""
    for line in sh(["lscpu"]).splitlines():
        if line.startswith("Model name:"):
            model = line.split(":", 1)[1].strip()
    cache = cmake_cache(build_dir)
    compiler = cache.get("CMAKE_CXX_COMPILER", "")
    version = sh([compiler, "--version"]).splitlines()[0] if compiler else ""
    build_type = cache.get("CMAKE_BUILD_TYPE", "")
    flags = " ".join(
        x for x in [cache.get("CMAKE_CXX_FLAGS", ""), cache.get("CMAKE_CXX_FLAGS_" + build_type.upper(), "")] if x)
    kdl = sh(["dpkg-query", "-W", "-f=${Version}", "liborocos-kdl-dev"])
    lines.append("| | |")
    lines.append("|---|---|")
    lines.append(f"| CPU | {model or '?'} ({context.get('num_cpus', '?')} CPUs at "
                 f"{context.get('mhz_per_cpu', '?')} MHz; nproc {sh(['nproc']) or '?'}) |")
    load_avg = context.get("load_avg")
    if load_avg:
        lines.append(f"| load average at start | {', '.join(f'{x:.2f}' for x in load_avg)} |")
    lines.append(f"| date | {context.get('date', '?')} |")
    lines.append(f"| compiler | {version or compiler or '?'} |")
    lines.append(f"| build type, flags | {build_type or '?'}, `{flags or '(none)'}` |")
    lines.append(f"| KDL | liborocos-kdl-dev {kdl or '?'} (Debian build) |")
    for m in meta:
        k, _, v = m.partition("=")
        lines.append(f"| {k} | {v} |")
    lines.append(f"| time reported | {'wall-clock' if time_key == 'real_time' else 'CPU'} time per call, median "
                 "over the repetitions |")
    return lines


def fmt(t):
    if t is None:
        return "—"
    if t >= 1e6:
        return f"{t / 1e6:.2f} ms"
    if t >= 1e4:
        return f"{t / 1e3:.1f} µs"
    return f"{t:.0f}"


def ratio(a, b):
    return "—" if a is None or b is None or b == 0 else f"{a / b:.2f}"


def chain_sizes(table):
    return sorted({int(m[5:]) for (_, _, m) in table if m.startswith("chain")})


def solve3(a, b):
    """Solves the 3x3 system a x = b (Gaussian elimination with partial pivoting)."""
    m = [row[:] + [v] for row, v in zip(a, b)]
    for c in range(3):
        p = max(range(c, 3), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        if m[c][c] == 0:
            return None
        for r in range(c + 1, 3):
            f = m[r][c] / m[c][c]
            m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    x = [0.0, 0.0, 0.0]
    for r in (2, 1, 0):
        x[r] = (m[r][3] - sum(m[r][k] * x[k] for k in range(r + 1, 3))) / m[r][r]
    return x


def crossover(table, lib, sizes, upto=24):
    """Where O(n) FD overtakes FDChol: the ratio FDChol / FD over n <= upto, least-squares fitted by a
    quadratic in n and solved for 1 (robust to the noise of single sizes); and the smallest timed n from
    which FD is faster at every larger size timed."""
    pts = [(n, table.get(("FDChol", lib, f"chain{n}")), table.get(("FD", lib, f"chain{n}"))) for n in sizes]
    pts = [(n, c / f) for n, c, f in pts if c is not None and f is not None]
    if not pts:
        return "no data"
    always = None
    for n, r in reversed(pts):
        if r <= 1.0:
            break
        always = n
    fit_pts = [(n, r) for n, r in pts if n <= upto]
    fitted = None
    if len(fit_pts) >= 3:
        a = [[sum(n ** (i + j) for n, _ in fit_pts) for j in range(3)] for i in range(3)]
        b = [sum(r * n ** i for n, r in fit_pts) for i in range(3)]
        c = solve3(a, b)
        if c:
            f = lambda x: c[0] + c[1] * x + c[2] * x * x - 1.0  # noqa: E731
            lo, hi = fit_pts[0][0], fit_pts[-1][0]
            steps = [lo + (hi - lo) * k / 1000 for k in range(1001)]
            for x0, x1 in zip(steps, steps[1:]):
                if f(x0) <= 0 < f(x1):
                    fitted = x0 + (x1 - x0) * (-f(x0)) / (f(x1) - f(x0))
                    break
            if fitted is None and f(lo) > 0:
                fitted = lo
    parts = []
    if fitted is not None:
        parts.append(f"fitted crossover n ≈ {fitted:.1f} (quadratic least-squares fit of FDChol / FD over "
                     f"n = {fit_pts[0][0]}..{fit_pts[-1][0]})")
    else:
        parts.append(f"no crossover in the fit over n = {fit_pts[0][0]}..{fit_pts[-1][0]}" if fit_pts else "no fit")
    if always is not None:
        parts.append(f"O(n) faster at every timed size from n = {always}")
    else:
        parts.append("O(n) not faster at the largest size timed")
    return "; ".join(parts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--build-dir", default="")
    ap.add_argument("--time", choices=["real", "cpu"], default="real")
    ap.add_argument("--meta", action="append", default=[])
    args = ap.parse_args()
    time_key = "real_time" if args.time == "real" else "cpu_time"
    context, table = load(args.json, time_key)
    out = []
    w = out.append

    w("# Benchmarks: denoc beside Orocos KDL")
    w("")
    w("Generated by `bench/run_core.sh` (Google Benchmark, `bench/bench_core.cpp`) and `bench/report.py`; "
      "regenerate with `bench/run_core.sh` on a quiet machine. Both libraries run in the same binary on the "
      "same models, each call on the next of 64 pre-generated random states (KDL caches joint poses when q "
      "does not change); the binary first checks that KDL's results agree with ours. Times are ns per call "
      "unless marked. KDL's chains have one segment per joint (as kdl_parser builds them).")
    w("")
    w("To regenerate: `bench/run_core.sh` (builds the release preset, runs `bench_core` with 5 repetitions "
      "of 0.2 s and writes this page); `bench/run_core.sh BUILD_DIR` for another build directory; "
      "`REPS`, `MIN_TIME`, `TIME=cpu` to change the run.")
    w("")
    w("## Machine")
    w("")
    out.extend(machine(context, args.build_dir, args.meta, time_key))
    w("")

    for model, title in [("panda", "Franka Panda, 7 DOF"), ("stanford", "Stanford arm (Saha 1999 Table 3), 6 DOF")]:
        if not any(m == model for (_, _, m) in table):
            continue
        w(f"## {title}")
        w("")
        w("| computation | denoc | ns | KDL | ns | KDL / denoc | best peer's KDL / peer (PEERS.md, Panda) |")
        w("|---|---|---|---|---|---|---|")
        for key, desc, ours, kdl, peer in ALGOS:
            a = table.get((key, "denoc", model))
            b = table.get((key, "kdl", model))
            if a is None and b is None:
                continue
            w(f"| {desc} | `{ours}` | {fmt(a)} | {('`' + kdl + '`') if kdl else '—'} | {fmt(b)} | "
              f"{ratio(b, a)} | {f'{peer:.2f}' if peer and model == 'panda' else '—'} |")
        w("")
        if model == "panda":
            w("The last column is how much faster than KDL the fastest of Pinocchio and RBDL was on the Panda "
              "(shared/PEERS.md, another run on a machine of this kind): a KDL / denoc ratio above it means "
              "faster than that library, with KDL in the same run as the yardstick.")
            w("")

    sizes = chain_sizes(table)
    main_sizes = [n for n in sizes if ("ID", "denoc", f"chain{n}") in table]
    series = [(k, lib) for k, *_ in ALGOS for lib in ("denoc", "kdl")
              if any((k, lib, f"chain{n}") in table for n in main_sizes)]
    if main_sizes:
        w("## Chains of n revolute joints (shared/PEERS.md)")
        w("")
        w("ns per call:")
        w("")
        w("| n | " + " | ".join(f"{k} {lib}" for k, lib in series) + " |")
        w("|---" * (len(series) + 1) + "|")
        for n in main_sizes:
            w(f"| {n} | " + " | ".join(fmt(table.get((k, lib, f'chain{n}'))) for k, lib in series) + " |")
        w("")
        w("ns per call and per DOF:")
        w("")
        w("| n | " + " | ".join(f"{k} {lib}" for k, lib in series) + " |")
        w("|---" * (len(series) + 1) + "|")
        for n in main_sizes:
            cells = []
            for k, lib in series:
                t = table.get((k, lib, f"chain{n}"))
                cells.append("—" if t is None else f"{t / n:.0f}")
            w(f"| {n} | " + " | ".join(cells) + " |")
        w("")
        w("KDL / denoc on the chains:")
        w("")
        paired = [k for k, *_ in ALGOS if (k, "kdl") in series and (k, "denoc") in series]
        w("| n | " + " | ".join(paired) + " |")
        w("|---" * (len(paired) + 1) + "|")
        for n in main_sizes:
            w(f"| {n} | " + " | ".join(
                ratio(table.get((k, "kdl", f"chain{n}")), table.get((k, "denoc", f"chain{n}"))) for k in paired) + " |")
        w("")

    if sizes:
        w("## Where O(n) forward dynamics overtakes the inertia matrix + Cholesky")
        w("")
        small = [n for n in sizes if n <= 24]
        w("| n | denoc FD (Saha) | denoc FDChol | FDChol / FD | KDL Vereshchagin | KDL ChainFdSolver_RNE | "
          "FdSolver / Vereshchagin |")
        w("|---|---|---|---|---|---|---|")
        for n in small:
            g = lambda k, lib: table.get((k, lib, f"chain{n}"))  # noqa: E731
            w(f"| {n} | {fmt(g('FD', 'denoc'))} | {fmt(g('FDChol', 'denoc'))} | "
              f"{ratio(g('FDChol', 'denoc'), g('FD', 'denoc'))} | {fmt(g('FD', 'kdl'))} | "
              f"{fmt(g('FDChol', 'kdl'))} | {ratio(g('FDChol', 'kdl'), g('FD', 'kdl'))} |")
        w("")
        for lib, label in [("denoc", "denoc (forwardDynamics vs forwardDynamicsCholesky)"),
                           ("kdl", "KDL (Vereshchagin vs ChainFdSolver_RNE)")]:
            w(f"- {label}: {crossover(table, lib, sizes)}.")
        w("- PEERS.md: RBDL from n ≈ 7, Pinocchio from n ≈ 10-12, KDL from n ≈ 12-14; Saha's operation "
          "counts put it at n = 12.")
        w("")

    big = 500 if 500 in sizes else (max(sizes) if sizes else None)
    mid = min(sizes, key=lambda n: abs(n - 50)) if sizes else None
    if big and mid and big != mid:
        w(f"## Scaling of the O(n) routes: time(n = {big}) / time(n = {mid})")
        w("")
        w(f"Linear scaling gives {big / mid:.1f}.")
        w("")
        w(f"| routine | n = {mid} | n = {big} | ratio | ns per DOF at {mid} | at {big} |")
        w("|---|---|---|---|---|---|")
        for k, lib in O_N:
            a = table.get((k, lib, f"chain{mid}"))
            b = table.get((k, lib, f"chain{big}"))
            if a is None or b is None:
                continue
            w(f"| {k} {lib} | {fmt(a)} | {fmt(b)} | {b / a:.2f} | {a / mid:.0f} | {b / big:.0f} |")
        w("")

    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
