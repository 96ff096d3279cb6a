#!/usr/bin/python3
"""Writes docs/benchmarks.md and docs/figures/bench_*.png from the outputs of bench/run_core.sh.

Usage: report.py --dir OUT [--build-dir DIR] [--native-build-dir DIR] [--doc docs/benchmarks.md]
                 [--figures docs/figures] [--meta key=value ...]
       report.py --lanes-only --dir OUT [--doc ...] [--figures ...]   # only the section "SIMD lanes"

OUT holds core.json (bench_core), batch.json (bench_batch), inverse_cholesky.json (bench_inverse_cholesky),
fixman_convective.json
(bench_fixman_convective), callgrind.json (instructions per call), machine.json (lscpu, load) and, when the
native build was timed, native.json; simd_peak.txt (bench/simd_peak's output) if run, else the recorded
peak throughput below is quoted. Benchmark names: ALGO/LIB/MODEL (bench_core); Lanes/, Loop/, Cores/,
Small/ (bench_batch, see its file comment); Minv/, FDChol/, Chol/ (bench_inverse_cholesky).
Per-call tables use CPU time (robust to the preemption of a shared machine; both
libraries alike), the batch tables wall-clock time. Every timing is the median of the repetitions, shown with
the smallest and largest repetition; every ratio divides two medians of the same run.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# key, what, ours, KDL's equivalent, goal as KDL / denoc (the issue: 1.25 x the best of Pinocchio and RBDL,
# in KDL terms; docs/design.md, "Performance")
ALGOS = [
    ("ID", "inverse dynamics", "inverseDynamics", "ChainIdSolver_RNE", 5.0),
    ("M", "inertia matrix I(q)", "computeInertiaMatrix", "ChainDynParam::JntToMass", 5.0),
    ("FullFactor", "full factor: I, U, D, log det", "computeFullFactor", "JntToMass + Eigen LDLT", None),
    ("Minv", "I(q)^-1", "computeInverseInertia", "JntToMass + Eigen LLT solved for 1", None),
    ("FD", "O(n) forward dynamics", "forwardDynamics (Saha)", "ChainHdSolver_Vereshchagin", 4.0),
    ("FDChol", "I(q) + Cholesky forward dynamics", "forwardDynamicsCholesky", "ChainFdSolver_RNE", None),
    ("UDU", "U D U^T factors, U not formed", "computeUDU(.., false)", None, None),
    ("FDFixman", "O(n) forward dynamics, Fixman's route", "forwardDynamicsFixman", None, None),
]
CALLGRIND = [("id", "ID"), ("m", "M"), ("ff", "FullFactor"), ("minv", "Minv"), ("fd", "FD"), ("chol", "FDChol")]
UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


# ---------------------------------------------------------------- loading


class Timing:
    """The repetitions of one benchmark."""

    def __init__(self, values):
        self.values = sorted(values)
        self.median = statistics.median(values)
        self.min = self.values[0]
        self.max = self.values[-1]

    def spread(self):
        return (self.max - self.min) / self.median if self.median else 0.0


def load(path, key):
    """{name: Timing} from a Google Benchmark JSON file with the repetitions in it."""
    if not path or not os.path.exists(path):
        return {}, {}
    with open(path) as f:
        doc = json.load(f)
    runs = defaultdict(list)
    medians = {}
    for b in doc["benchmarks"]:
        name = b.get("run_name", b["name"])
        t = b[key] * UNIT[b.get("time_unit", "ns")]
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[name] = t
        else:
            runs[name].append(t)
    out = {name: Timing(ts) for name, ts in runs.items()}
    for name, t in medians.items():
        if name not in out:
            out[name] = Timing([t])
    return doc.get("context", {}), out


def by_parts(timings):
    """ALGO/LIB/MODEL -> Timing."""
    table = {}
    for name, t in timings.items():
        parts = name.split("/")
        if len(parts) == 3:
            table[tuple(parts)] = t
    return table


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


def build_flags(build_dir):
    cache = cmake_cache(build_dir)
    build_type = cache.get("CMAKE_BUILD_TYPE", "")
    flags = " ".join(x for x in [cache.get("CMAKE_CXX_FLAGS", ""),
                                 cache.get("CMAKE_CXX_FLAGS_" + build_type.upper(), "")] if x)
    vectorize = cache.get("DENOC_EIGEN_VECTORIZE", "OFF")
    if vectorize.upper() in ("OFF", "0", "FALSE", ""):
        flags += " -DEIGEN_DONT_VECTORIZE"
    return build_type, flags.strip(), cache


# ---------------------------------------------------------------- formatting


def fmt(t):
    if t is None:
        return "—"
    if t >= 1e6:
        return f"{t / 1e6:.2f} ms"
    if t >= 1e4:
        return f"{t / 1e3:.1f} µs"
    return f"{t:.0f}"


def fmt_spread(t):
    if t is None:
        return "—"
    return f"{fmt(t.median)} ({fmt(t.min)}–{fmt(t.max)})"


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def fmt_ratio(r):
    return "—" if r is None else f"{r:.2f}"


def median(t):
    return None if t is None else t.median


# ---------------------------------------------------------------- sections


STEP_NAMES = [("core", "bench_core (arms, chains)"), ("batch", "bench_batch"),
              ("weak", "bench_inverse_cholesky"), ("fixman", "bench_fixman_convective"),
              ("callgrind", "callgrind instruction counts"), ("native", "bench_core of the native build"),
              ("vectorize", "Eigen SIMD on/off"), ("opcount", "bench_opcount")]


def machine_section(w, ctx, machine, steps, build_dir, native_dir, meta):
    build_type, flags, cache = build_flags(build_dir)
    compiler = cache.get("CMAKE_CXX_COMPILER", "")
    version = sh([compiler, "--version"]).splitlines()[0] if compiler else ""
    w("## Machine and build")
    w("")
    w("| | |")
    w("|---|---|")
    w(f"| CPU | {machine.get('model', '?')}; {machine.get('cpus', '?')} CPUs "
      f"({machine.get('cores_per_socket', '?')} cores per socket, {machine.get('threads_per_core', '?')} thread per "
      f"core); {ctx.get('mhz_per_cpu', '?')} MHz as Google Benchmark reads it |")
    w(f"| date of bench_core | {ctx.get('date', '?')} |")
    w(f"| kernel | {machine.get('kernel', '?')} |")
    w(f"| compiler | {version or compiler or '?'} |")
    w(f"| build | {build_type or '?'} preset `release`: `{flags or '(none)'}` (portable x86-64: SSE2, no FMA) |")
    if native_dir:
        _, nflags, _ = build_flags(native_dir)
        w(f"| native build | preset `native`: `{nflags}` (this CPU only) |")
    w(f"| KDL | liborocos-kdl-dev {sh(['dpkg-query', '-W', '-f=${Version}', 'liborocos-kdl-dev']) or '?'} "
      "(Debian's build, -O2) |")
    w(f"| Google Benchmark | libbenchmark-dev {sh(['dpkg-query', '-W', '-f=${Version}', 'libbenchmark-dev']) or '?'} |")
    for m in meta:
        k, _, v = m.partition("=")
        w(f"| {k} | {v} |")
    w("")
    if steps:
        w("When each part ran, and the load average (1, 5, 15 min) of the machine, shared with other work, before "
          "and after it (2 CPUs: a load above 1 means that other work competed for the second core):")
        w("")
        w("| part | started (UTC) | load before | load after |")
        w("|---|---|---|---|")
        for key, name in STEP_NAMES:
            s = steps.get(key)
            if s:
                w(f"| {name} | {s.get('begin', {}).get('date', '?')} | {s.get('begin', {}).get('load', '?')} | "
                  f"{s.get('end', {}).get('load', '?')} |")
        w("")


def arms_section(w, table, figures, rel):
    w("## The arms: ns per call")
    w("")
    w("CPU time per call: median of the repetitions (smallest–largest repetition). KDL / denoc divides the two "
      "medians. The goal column is the project's (docs/design.md): 1.25 times the fastest of Pinocchio and "
      "RBDL, expressed as a multiple of KDL (5x for inverse dynamics and the inertia matrix, 4x for O(n) "
      "forward dynamics); the full factor, I^-1 and the Cholesky route have no goal of their own. KDL has no "
      "factorization or inverse: its equivalents are `JntToMass` followed by Eigen's pivoted LDL^T, and by "
      "Eigen's Cholesky solved for the identity.")
    w("")
    fig = {}
    for model, title in [("panda", "Franka Panda, 7 DOF"), ("stanford", "Stanford arm (Saha 1999 Table 3), 6 DOF")]:
        w(f"### {title}")
        w("")
        w("| computation | denoc | ns | KDL | ns | KDL / denoc | goal |")
        w("|---|---|---|---|---|---|---|")
        for key, what, ours, theirs, goal in ALGOS:
            a = table.get((key, "denoc", model))
            b = table.get((key, "kdl", model))
            r = ratio(median(b), median(a))
            met = ""
            if goal is not None and r is not None:
                met = f"{goal:.0f}x: {'met' if r >= goal else 'not met'}"
            w(f"| {what} | `{ours}` | {fmt_spread(a)} | {('`' + theirs + '`') if theirs else '—'} | "
              f"{fmt_spread(b)} | {fmt_ratio(r)} | {met or '—'} |")
            fig[(model, key)] = (a, b)
        w("")
    # figure: grouped bars per arm, log scale, min-max whiskers
    keys = [k for k, *_ in ALGOS if k not in ("UDU",)]
    fig_, axes = plt.subplots(1, 2, figsize=(12, 4.2), sharey=True)
    for ax, model in zip(axes, ["panda", "stanford"]):
        xs = range(len(keys))
        for off, lib, color in [(-0.2, "denoc", "tab:blue"), (0.2, "kdl", "tab:orange")]:
            med, lo, hi, pos = [], [], [], []
            for x, k in zip(xs, keys):
                t = fig.get((model, k), (None, None))[0 if lib == "denoc" else 1]
                if t is None:
                    continue
                pos.append(x + off)
                med.append(t.median)
                lo.append(t.median - t.min)
                hi.append(t.max - t.median)
            ax.bar(pos, med, width=0.4, color=color, label=lib if lib == "denoc" else "KDL (equivalent)",
                   yerr=[lo, hi], capsize=2)
        # KDL / denoc above each pair
        for x, k in zip(xs, keys):
            a, b = fig.get((model, k), (None, None))
            if a is not None and b is not None:
                ax.text(x, max(a.max, b.max) * 1.02, f"{b.median / a.median:.1f}x", ha="center", va="bottom",
                        fontsize=8)
        ax.set_xticks(list(xs))
        ax.set_xticklabels(keys, rotation=30)
        ax.set_title(f"{model} (KDL / denoc above the bars)")
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("CPU time per call (ns)")
    axes[0].legend()
    fig_.tight_layout()
    path = os.path.join(figures, "bench_arms.png")
    fig_.savefig(path, dpi=110)
    plt.close(fig_)
    w(f"![ns per call on the arms, denoc beside KDL]({rel}/bench_arms.png)")
    w("")


def callgrind_section(w, cg):
    if not cg:
        return
    w("## Instructions per call (callgrind, the Panda)")
    w("")
    w("`valgrind --tool=callgrind` on `bench_profile panda ALGO CALLS` (one algorithm in a plain loop over the "
      "same 64 random states), minus the same program with no calls, divided by the calls. Instruction counts "
      "do not depend on the machine's load, so they are the repeatable yardstick here; time per instruction "
      "differs between the libraries (KDL calls more small functions), so the time ratios above differ from "
      "these.")
    w("")
    w("| computation | denoc | KDL (equivalent) | KDL / denoc |")
    w("|---|---|---|---|")
    for mode, key in CALLGRIND:
        what = next(x[1] for x in ALGOS if x[0] == key)
        a, b = cg.get(mode), cg.get("kdl-" + mode)
        w(f"| {what} | {a if a is not None else '—'} | {b if b is not None else '—'} | "
          f"{fmt_ratio(ratio(b, a))} |")
    w("")


def chain_sizes(table):
    return sorted({int(m[5:]) for (_, _, m) in table if m.startswith("chain")})


def chains_section(w, table, figures, rel):
    full = sorted({int(m[5:]) for (a, _, m) in table if m.startswith("chain") and a == "ID"})
    cols = [("ID", "denoc"), ("ID", "kdl"), ("M", "denoc"), ("M", "kdl"), ("FullFactor", "denoc"),
            ("FullFactor", "kdl"), ("Minv", "denoc"), ("Minv", "kdl"), ("FD", "denoc"), ("FD", "kdl"),
            ("FDChol", "denoc"), ("FDChol", "kdl"), ("FDFixman", "denoc")]
    w("## Chains of n revolute joints (docs/design.md), n = 6..500")
    w("")
    w("CPU time per call, median of the repetitions; then per DOF. (I^-1 of KDL's equivalent is timed up to "
      "the sizes where it is timed at all; long chains are ill-conditioned, so their inverses are timed, not "
      "compared.)")
    w("")
    w("| n | " + " | ".join(f"{a} {('KDL' if l == 'kdl' else 'denoc')}" for a, l in cols) + " |")
    w("|---|" + "---|" * len(cols))
    for n in full:
        w(f"| {n} | " + " | ".join(fmt(median(table.get((a, l, f'chain{n}')))) for a, l in cols) + " |")
    w("")
    w("ns per DOF:")
    w("")
    w("| n | " + " | ".join(f"{a} {('KDL' if l == 'kdl' else 'denoc')}" for a, l in cols) + " |")
    w("|---|" + "---|" * len(cols))
    for n in full:
        cells = []
        for a, l in cols:
            t = median(table.get((a, l, f"chain{n}")))
            cells.append("—" if t is None else f"{t / n:.0f}")
        w(f"| {n} | " + " | ".join(cells) + " |")
    w("")
    w("KDL / denoc on the chains:")
    w("")
    pairs = ["ID", "M", "FullFactor", "Minv", "FD", "FDChol"]
    w("| n | " + " | ".join(pairs) + " |")
    w("|---|" + "---|" * len(pairs))
    for n in full:
        w(f"| {n} | " + " | ".join(
            fmt_ratio(ratio(median(table.get((a, 'kdl', f'chain{n}'))), median(table.get((a, 'denoc', f'chain{n}')))))
            for a in pairs) + " |")
    w("")
    styles = {"denoc": "-", "kdl": "--"}
    colors = {"ID": "tab:blue", "M": "tab:green", "FullFactor": "tab:olive", "Minv": "tab:purple",
              "FD": "tab:red", "FDChol": "tab:brown", "FDFixman": "tab:gray"}
    for per_dof, name, ylabel in [(False, "bench_chains_ns.png", "CPU time per call (ns)"),
                                  (True, "bench_chains_ns_per_dof.png", "CPU time per call and DOF (ns)")]:
        f, ax = plt.subplots(figsize=(9, 5.5))
        for a, l in cols:
            pts = [(n, median(table.get((a, l, f"chain{n}")))) for n in full]
            pts = [(n, t / n if per_dof else t) for n, t in pts if t is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], styles[l], color=colors[a], marker="o", ms=3,
                        label=f"{a} {'KDL' if l == 'kdl' else 'denoc'}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n (joints)")
        ax.set_ylabel(ylabel)
        ax.grid(which="both", alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
        f.tight_layout()
        f.savefig(os.path.join(figures, name), dpi=110)
        plt.close(f)
    w(f"![ns per call on the chains]({rel}/bench_chains_ns.png)")
    w("")
    w(f"![ns per call and DOF on the chains]({rel}/bench_chains_ns_per_dof.png)")
    w("")


def solve(a, b):
    """Gaussian elimination with partial pivoting."""
    k = len(b)
    m = [row[:] + [v] for row, v in zip(a, b)]
    for c in range(k):
        p = max(range(c, k), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        if m[c][c] == 0:
            return None
        for r in range(c + 1, k):
            f = m[r][c] / m[c][c]
            m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    x = [0.0] * k
    for r in reversed(range(k)):
        x[r] = (m[r][k] - sum(m[r][j] * x[j] for j in range(r + 1, k))) / m[r][r]
    return x


def crossover_fit(pts):
    """The n where a quadratic least-squares fit of the ratio crosses 1 (first upward crossing)."""
    if len(pts) < 3:
        return None
    a = [[sum(n ** (i + j) for n, _ in pts) for j in range(3)] for i in range(3)]
    b = [sum(r * n ** i for n, r in pts) for i in range(3)]
    c = solve(a, b)
    if not c:
        return None
    f = lambda x: c[0] + c[1] * x + c[2] * x * x - 1.0  # noqa: E731
    lo, hi = pts[0][0], pts[-1][0]
    if f(lo) > 0:
        return lo
    steps = [lo + (hi - lo) * k / 2000 for k in range(2001)]
    for x0, x1 in zip(steps, steps[1:]):
        if f(x0) <= 0 < f(x1):
            return x0 + (x1 - x0) * (-f(x0)) / (f(x1) - f(x0))
    return None


def crossover_section(w, table, figures, rel):
    sizes = [n for n in chain_sizes(table) if n <= 24]
    w("## Where O(n) forward dynamics overtakes I(q) + Cholesky")
    w("")
    w("| n | denoc FD (O(n)) | denoc FDChol | FDChol / FD | KDL Vereshchagin | KDL ChainFdSolver_RNE | "
      "FdSolver / Vereshchagin |")
    w("|---|---|---|---|---|---|---|")
    series = {}
    for n in sizes:
        m = f"chain{n}"
        fd, ch = median(table.get(("FD", "denoc", m))), median(table.get(("FDChol", "denoc", m)))
        kfd, kch = median(table.get(("FD", "kdl", m))), median(table.get(("FDChol", "kdl", m)))
        w(f"| {n} | {fmt(fd)} | {fmt(ch)} | {fmt_ratio(ratio(ch, fd))} | {fmt(kfd)} | {fmt(kch)} | "
          f"{fmt_ratio(ratio(kch, kfd))} |")
        for lib, r in [("denoc", ratio(ch, fd)), ("kdl", ratio(kch, kfd))]:
            if r is not None:
                series.setdefault(lib, []).append((n, r))
    w("")
    for lib, title in [("denoc", "denoc (forwardDynamics vs forwardDynamicsCholesky)"),
                       ("kdl", "KDL (Vereshchagin vs ChainFdSolver_RNE)")]:
        pts = series.get(lib, [])
        x = crossover_fit(pts)
        always = None
        for n, r in reversed(pts):
            if r <= 1.0:
                break
            always = n
        if pts and always == pts[0][0]:
            w(f"- {title}: the O(n) route is faster at every size timed, from n = {always} (FDChol / FD "
              f"{pts[0][1]:.2f} there).")
        else:
            parts = [f"fitted crossover n ≈ {x:.1f}" if x is not None else "no crossover in the fit"]
            parts.append(f"O(n) faster at every timed size from n = {always}" if always is not None
                         else "O(n) not faster at the largest size here")
            w(f"- {title}: " + "; ".join(parts) + f" (quadratic least-squares fit of the ratio over n = "
              f"{pts[0][0] if pts else '?'}..{pts[-1][0] if pts else '?'}).")
    w("- docs/design.md: RBDL from n ≈ 7, Pinocchio from n ≈ 10-12, KDL from n ≈ 12-14; Saha's operation "
      "counts put it at n = 12.")
    w("")
    f, ax = plt.subplots(figsize=(8, 4.5))
    for lib, color, label in [("denoc", "tab:blue", "denoc: FDChol / FD"),
                              ("kdl", "tab:orange", "KDL: ChainFdSolver_RNE / Vereshchagin")]:
        pts = series.get(lib, [])
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=color, label=label)
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xlabel("n (joints)")
    ax.set_ylabel("time of the Cholesky route / time of the O(n) route")
    ax.grid(alpha=0.3)
    ax.legend()
    f.tight_layout()
    f.savefig(os.path.join(figures, "bench_crossover.png"), dpi=110)
    plt.close(f)
    w(f"![O(n) vs Cholesky crossover]({rel}/bench_crossover.png)")
    w("")


def linearity_section(w, table, figures, rel):
    full = sorted({int(m[5:]) for (a, _, m) in table if m.startswith("chain") and a == "ID"})
    routines = [("ID", "denoc"), ("FD", "denoc"), ("UDU", "denoc"), ("FDFixman", "denoc"), ("ID", "kdl"),
                ("FD", "kdl")]
    w("## Linearity of the O(n) routines")
    w("")
    w("Least-squares line t = a + b n through the chains n = 6..500 (CPU time medians); b is the cost per "
      "joint. The largest residual is relative to the time at that n; t(500) / t(48) is 10.4 for exact "
      "proportionality.")
    w("")
    w("| routine | b (ns per joint) | a (ns) | R^2 | largest residual | t(500) / t(48) |")
    w("|---|---|---|---|---|---|")
    fits = {}
    for a_, l in routines:
        pts = [(n, median(table.get((a_, l, f"chain{n}")))) for n in full]
        pts = [(n, t) for n, t in pts if t is not None]
        if len(pts) < 3:
            continue
        nx = len(pts)
        sx = sum(n for n, _ in pts)
        sy = sum(t for _, t in pts)
        sxx = sum(n * n for n, _ in pts)
        sxy = sum(n * t for n, t in pts)
        b = (nx * sxy - sx * sy) / (nx * sxx - sx * sx)
        a = (sy - b * sx) / nx
        mean = sy / nx
        ss_res = sum((t - (a + b * n)) ** 2 for n, t in pts)
        ss_tot = sum((t - mean) ** 2 for _, t in pts)
        r2 = 1 - ss_res / ss_tot if ss_tot else 1.0
        worst = max(abs(t - (a + b * n)) / t for n, t in pts)
        t48 = dict(pts).get(48)
        t500 = dict(pts).get(500)
        fits[(a_, l)] = (a, b, pts)
        w(f"| {a_} {'KDL' if l == 'kdl' else 'denoc'} | {b:.1f} | {a:.0f} | {r2:.4f} | {100 * worst:.0f} % | "
          f"{fmt_ratio(ratio(t500, t48))} |")
    w("")
    f, ax = plt.subplots(figsize=(8, 5))
    for (a_, l), (a, b, pts) in fits.items():
        line = ax.plot([p[0] for p in pts], [p[1] / 1e3 for p in pts], "o", ms=4,
                       label=f"{a_} {'KDL' if l == 'kdl' else 'denoc'}: {b:.0f} ns/joint")[0]
        ax.plot([0, 500], [a / 1e3, (a + 500 * b) / 1e3], "-", color=line.get_color(), lw=0.8)
    ax.set_xlabel("n (joints)")
    ax.set_ylabel("CPU time per call (µs)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    f.tight_layout()
    f.savefig(os.path.join(figures, "bench_linearity.png"), dpi=110)
    plt.close(f)
    w(f"![linearity of the O(n) routines]({rel}/bench_linearity.png)")
    w("")


# The field's I(q)^-1 and I(q) + Cholesky figures, measured beside denoc's previous routes on this machine
# kind (2026-11-23, one process, interleaved): previous denoc time / Pinocchio 3.7 computeMinverse, and
# previous denoc Cholesky route / RBDL 3.3 (Eigen's blocked LLT). They let a run of ours, which times the
# previous routes too, estimate where the new ones stand.
PEER_MINV = {24: 1.17, 48: 1.31, 96: 1.93, 500: 1.61}
PEER_CHOL = {500: 1.34}
WIDTHS = (1, 2, 4, 8)
# the targets of the lanes, as the fastest width's time over the scalar loop's: at most 1/3 with AVX2 and
# 1/5 with AVX-512 for inverse dynamics, 1/2.5 with AVX2 for the other two
LANE_TARGETS = {("ID", 4): 3.0, ("ID", 8): 5.0, ("FD", 4): 2.5, ("FullFactor", 4): 2.5}


# bench/simd_peak on the machine of docs/benchmarks.md (AMD EPYC, Zen 4, 2026-11-24, `simd_peak 0.5`), used when
# OUT holds no simd_peak.txt: flops per ns of independent multiplies and adds, half of each, per vector width
PEAK_RECORDED = {"clock_ghz": 3.67, "mul+add": {128: 29.2, 256: 58.6, 512: 58.7},
                 "source": "recorded 2026-11-24 with `build/release/bench/simd_peak 0.5`"}


def simd_peak(path):
    """The flops per ns of bench/simd_peak's output (simd_peak.txt), or the recorded measurement."""
    if not os.path.exists(path):
        return PEAK_RECORDED
    peak = {"mul+add": {}, "source": f"`{os.path.basename(path)}` of this run (`bench/simd_peak`)"}
    with open(path) as f:
        for line in f:
            m = re.match(r"^dependent add: .* at ([\d.]+) GHz", line)
            if m:
                peak["clock_ghz"] = float(m.group(1))
            parts = line.split()
            if len(parts) == 7 and parts[2] == "mul+add" and parts[1].isdigit():
                peak["mul+add"][int(parts[1])] = float(parts[5])
    return peak


def peak_paragraph(w, peak):
    f = peak["mul+add"]
    if not {256, 512} <= set(f):
        return
    r = f[512] / f[256]
    clock = peak.get("clock_ghz")
    w("**What W8 can gain on this CPU.** `bench/simd_peak` times independent multiplies and adds of doubles "
      "(half of each, no fused multiply-add, as the kernels are built) at each vector width: "
      + ", ".join(f"{b}-bit {f[b]:.1f}" for b in sorted(f)) + " flops per ns"
      + (f" (clock {clock:.2f} GHz from the 3-cycle latency of a dependent add)" if clock else "")
      + f"; {peak['source']}. 512-bit vectors give {r:.2f}x the arithmetic of 256-bit ones"
      + (": the AVX-512 unit of this CPU (Zen 4) runs each 512-bit operation as two 256-bit halves, so W8 has "
         "no more arithmetic per ns than W4, and what W8 gains over W4 comes only from issuing half the "
         "instructions (loads, stores, shuffles) and from twice the independent work in flight where latency, "
         "not arithmetic, bounds the kernels (the sincos of the joint angles, the sweeps' chains from joint to "
         "joint). The 5x target of inverse dynamics with AVX-512 needs a CPU with full-width 512-bit units, "
         "where the peak doubles." if r < 1.3 else
         ": W8 can gain up to that factor over W4 in the arithmetic-bound parts."))
    w("")


def per_state(t, count):
    return None if t is None else Timing([v / count for v in t.values])


def lanes_section(w, batch, figures, rel, load_note, peak=None):
    lanes = defaultdict(dict)  # (op, model) -> width (0: plain loop) -> Timing per state
    for name, t in batch.items():
        m = re.match(r"^Lanes/(\w+)/(\w+)/W:(\d+)(?:/real_time)?$", name)
        if m:
            lanes[(m.group(1), m.group(2))][int(m.group(3))] = per_state(t, 1024)
        m = re.match(r"^Loop/(\w+)/(\w+)(?:/real_time)?$", name)
        if m:
            lanes[(m.group(1), m.group(2))][0] = per_state(t, 1024)
    if not lanes:
        return
    widths = sorted({wd for r in lanes.values() for wd in r if wd > 0})
    w("## SIMD lanes: W states per thread")
    w("")
    w("`bench_batch`, one thread, batches of 1024 states: CPU time per state in ns of `inverseDynamicsBatch`, "
      "`forwardDynamicsBatch` (Saha) and `fullFactorBatch` (I, U, D, log det) at every SIMD width this CPU runs "
      "(`BatchOptions::width`; W1 is the engine computing state by state, W2 SSE2, W4 AVX2, W8 AVX-512), beside "
      "a plain loop of single-state calls on one `Data` copying out the same way. Median of the repetitions "
      f"(smallest–largest). {load_note}")
    w("")
    w("| op | model | loop | " + " | ".join(f"W{x}" for x in widths) + " | " +
      " | ".join(f"loop / W{x}" for x in widths if x > 1) + " |")
    w("|---|---|---|" + "---|" * len(widths) + "---|" * len([x for x in widths if x > 1]))
    order = {"panda": 0, "stanford": 1}
    keys = sorted(lanes, key=lambda k: (k[0], order.get(k[1], 2), int(re.sub(r"\D", "", k[1]) or 0)))
    for op, model in keys:
        r = lanes[(op, model)]
        loop = median(r.get(0))
        w(f"| {op} | {model} | {fmt_spread(r.get(0))} | " + " | ".join(fmt_spread(r.get(x)) for x in widths) +
          " | " + " | ".join(fmt_ratio(ratio(loop, median(r.get(x)))) for x in widths if x > 1) + " |")
    w("")
    w("The targets, as the scalar loop's time over the lanes' (higher is better): inverse dynamics at least 3 "
      "with AVX2 (W4) and 5 with AVX-512 (W8), forward dynamics and the full factor at least 2.5 with AVX2.")
    w("")
    w("| op | width | target | " + " | ".join(m for _, m in sorted({(order.get(k[1], 2), k[1]) for k in keys})) +
      " |")
    models = [m for _, m in sorted({(order.get(k[1], 2), k[1]) for k in keys})]
    w("|---|---|---|" + "---|" * len(models))
    for (op, wd), target in LANE_TARGETS.items():
        if wd not in widths:
            continue
        cells = []
        for model in models:
            r = lanes.get((op, model), {})
            x = ratio(median(r.get(0)), median(r.get(wd)))
            cells.append("—" if x is None else f"{x:.2f} {'met' if x >= target else 'not met'}")
        w(f"| {op} | W{wd} | {target:g} | " + " | ".join(cells) + " |")
    w("")
    if peak:
        peak_paragraph(w, peak)
    f, axes = plt.subplots(1, 3, figsize=(13, 4), sharey=True)
    for ax, op in zip(axes, ("ID", "FD", "FullFactor")):
        for model in models:
            r = lanes.get((op, model), {})
            ys = [ratio(median(r.get(0)), median(r.get(x))) for x in widths]
            if any(y is None for y in ys):
                continue
            ax.plot(widths, ys, "o-", lw=1, label=model)
        ax.plot(widths, widths, "k:", lw=0.8, label="W")
        ax.set_xscale("log", base=2)
        ax.set_xticks(widths)
        ax.set_xticklabels([f"W{x}" for x in widths])
        ax.set_title(op)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("scalar loop / lanes (per state)")
    axes[0].legend(fontsize=7)
    f.tight_layout()
    f.savefig(os.path.join(figures, "bench_lanes.png"), dpi=110)
    plt.close(f)
    w(f"![lanes speed-up]({rel}/bench_lanes.png)")
    w("")


def cores_section(w, batch, figures, rel):
    rows = defaultdict(dict)  # (op, model, width) -> threads -> Timing per state
    for name, t in batch.items():
        m = re.match(r"^Cores/(\w+)/(\w+)/threads:(\d+)/W:(\d+)(?:/real_time)?$", name)
        if m:
            rows[(m.group(1), m.group(2), int(m.group(4)))][int(m.group(3))] = per_state(t, 4096)
    if not rows:
        return
    w("## Threads x lanes")
    w("")
    w("`bench_batch`, batches of 4096 states on a pool of 1 and 2 threads (all of this machine's cores) at every "
      "width: wall-clock ns per state, median (smallest–largest); the speed-up over one thread at W1 multiplies "
      "what the lanes give by what the cores give.")
    w("")
    w("| op | model | width | 1 thread | 2 threads | 1 / 2 threads | 1 thread W1 / 2 threads |")
    w("|---|---|---|---|---|---|---|")
    for key in sorted(rows):
        op, model, wd = key
        r = rows[key]
        base = median(rows.get((op, model, 1), {}).get(1))
        w(f"| {op} | {model} | W{wd} | {fmt_spread(r.get(1))} | {fmt_spread(r.get(2))} | "
          f"{fmt_ratio(ratio(median(r.get(1)), median(r.get(2))))} | {fmt_ratio(ratio(base, median(r.get(2))))} |")
    w("")
    w("### A model for 16 cores")
    w("")
    w("From the speed-up S2 = T1 / T2 of each case (the best repetition of each, the one least disturbed by the "
      "other work on the machine), Amdahl's law gives the parallel fraction f = 2 (1 - 1 / S2) and the serial "
      "fraction s = 1 - f; with them it predicts S16 = 1 / (s + f / 16) for a fixed batch on 16 cores, and "
      "Gustafson's law the scaled speed-up s + 16 f for a batch 16 times as large (the serial part, the dispatch "
      "and the wait for the last chunk, does not grow with the batch). The states per second on 16 cores are "
      "then 16-core speed-up / T1. Chunks are independent and each worker has its own workspaces, so what limits "
      "the real speed-up beyond this model is memory bandwidth (a 48-joint full factor writes 37 KB per state, "
      "which the lanes produce faster than one core's share of the memory bus takes it) and the clock a single "
      "busy core gets.")
    w("")
    w("| op | model | width | T1 (ns/state) | T2 | S2 | s | Amdahl S16 | Gustafson S16 | "
      "states/s on 16 cores (Amdahl) |")
    w("|---|---|---|---|---|---|---|---|---|---|")
    curves = []
    for key in sorted(rows):
        op, model, wd = key
        r = rows[key]
        if 1 not in r or 2 not in r:
            continue
        t1, t2 = r[1].min, r[2].min
        s2 = t1 / t2
        frac = max(0.0, min(1.0, 2 * (1 - 1 / s2)))
        s = 1 - frac
        amdahl = 1 / (s + frac / 16)
        gustafson = s + 16 * frac
        if model == "panda":
            curves.append((f"{op} W{wd}", frac, s2))
        w(f"| {op} | {model} | W{wd} | {t1:.0f} | {t2:.0f} | {s2:.2f} | {s:.3f} | {amdahl:.1f} | {gustafson:.1f} | "
          f"{amdahl / t1 * 1e9:.3g} |")
    w("")
    f, ax = plt.subplots(figsize=(8, 5))
    ps = list(range(1, 17))
    ax.plot(ps, ps, "k:", lw=0.8, label="linear")
    for label, frac, s2 in curves:
        line = ax.plot(ps, [1 / ((1 - frac) + frac / p) for p in ps], "-", lw=1,
                       label=f"panda {label}: Amdahl, f = {frac:.3f}")[0]
        ax.plot([1, 2], [1, s2], "o", color=line.get_color())
    ax.set_xlabel("threads")
    ax.set_ylabel("speed-up over one thread (same width)")
    ax.set_title("measured (dots, 1 and 2 threads) and modelled (lines)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    f.tight_layout()
    f.savefig(os.path.join(figures, "bench_batch_scaling.png"), dpi=110)
    plt.close(f)
    w(f"![batch scaling, measured and modelled]({rel}/bench_batch_scaling.png)")
    w("")


def small_section(w, batch):
    rows = defaultdict(dict)  # (op, count) -> width (0: loop) -> Timing per state
    for name, t in batch.items():
        m = re.match(r"^Small/(\w+)/panda/count:(\d+)/W:(\d+)(?:/real_time)?$", name)
        if m:
            rows[(m.group(1), int(m.group(2)))][int(m.group(3))] = per_state(t, int(m.group(2)))
    if not rows:
        return
    widest = max(wd for r in rows.values() for wd in r)
    w("## Small batches")
    w("")
    w("`bench_batch`, the Panda, one thread: CPU ns per state of batches of 1, 8 and 64 states (the engine's fixed "
      "cost per call: a workspace borrowed from the pool, the plan, the lane workspace) beside the plain loop.")
    w("")
    w(f"| op | states | loop | W1 | W{widest} |")
    w("|---|---|---|---|---|")
    for key in sorted(rows):
        r = rows[key]
        w(f"| {key[0]} | {key[1]} | {fmt_spread(r.get(0))} | {fmt_spread(r.get(1))} | {fmt_spread(r.get(widest))} |")
    w("")


def weak_section(w, weak, figures, rel, load_note):
    if not weak:
        return
    minv = defaultdict(dict)  # n -> route -> median
    chol = defaultdict(dict)  # n -> kind -> median
    for name, t in weak.items():
        m = re.match(r"^Minv/(\w+)/chain(\d+)$", name)
        if m:
            minv[int(m.group(2))][m.group(1)] = t.median
        m = re.match(r"^FDChol/denoc/chain(\d+)$", name)
        if m:
            chol[int(m.group(1))]["route"] = t.median
        m = re.match(r"^Chol/(plain|llt)/chain(\d+)$", name)
        if m:
            chol[int(m.group(2))][m.group(1)] = t.median
        m = re.match(r"^Chol/blocked/chain(\d+)/W:(\d+)$", name)
        if m:
            chol[int(m.group(1))][f"W{m.group(2)}"] = t.median
    w("## I(q)^-1")
    w("")
    w("`bench_inverse_cholesky`, the chains, CPU time per call from q, median of the repetitions. denoc: "
      "`computeInverseInertia` (the dense route, U^-T D^-1 U^-1 from reverse Gaussian elimination on I(q), up to "
      "`kDenseInverseMaxDof`, else the three sweeps on all unit vectors at once, 12 n^2 multiplications); dense "
      "and sweeps: each route at every n; previous: the route this release replaces (dense up to n = 24, then one "
      "three-sweep solve per column); reference: the O(n) factors with U formed (`computeUDU`) and U^-T D^-1 "
      "U^-1 by Eigen's triangular solves, O(n^2) per column. Pinocchio's `computeMinverse` was measured on this "
      "machine kind beside the previous route (previous / Pinocchio in the table); with the previous route timed "
      f"in this run, denoc / Pinocchio is estimated as (denoc / previous) x (previous / Pinocchio). {load_note}")
    w("")
    w("| n | denoc | dense | sweeps | previous | reference | denoc / reference | denoc / previous | "
      "previous / Pinocchio | denoc / Pinocchio (est.) |")
    w("|---|---|---|---|---|---|---|---|---|---|")
    for n in sorted(minv):
        r = minv[n]
        prev = r.get("dense") if n <= 24 else r.get("columns")
        peer = PEER_MINV.get(n)
        est = None if peer is None else ratio(r.get("denoc"), prev)
        w(f"| {n} | {fmt(r.get('denoc'))} | {fmt(r.get('dense'))} | {fmt(r.get('sweeps'))} | {fmt(prev)} | "
          f"{fmt(r.get('trsv'))} | {fmt_ratio(ratio(r.get('denoc'), r.get('trsv')))} | "
          f"{fmt_ratio(ratio(r.get('denoc'), prev))} | {fmt_ratio(peer)} | "
          f"{fmt_ratio(None if est is None else est * peer)} |")
    w("")
    faster = [n for n in sorted(minv) if "dense" in minv[n] and "sweeps" in minv[n] and
              minv[n]["sweeps"] < minv[n]["dense"]]
    slower = [n for n in sorted(minv) if "dense" in minv[n] and "sweeps" in minv[n] and
              minv[n]["sweeps"] >= minv[n]["dense"]]
    if faster:
        w(f"The sweeps are faster than the dense route at n = {', '.join(str(n) for n in faster)}; slower at "
          f"n = {', '.join(str(n) for n in slower) or 'none'}.")
        w("")
    w("## The I(q) + Cholesky route")
    w("")
    w("The same program: `forwardDynamicsCholesky` (route: I(q), its Cholesky factor, two triangular solves), and "
      "the factorization alone on I(q): the plain column loop (`choleskyInPlace`, the route's small-n path), the "
      "blocked kernel (`choleskyBlocked`) at every SIMD width, and Eigen's `LLT::compute` into a preallocated LLT "
      "(Eigen's blocked algorithm in this build's scalar mode; it allocates for large n). RBDL, whose route uses "
      "Eigen's LLT compiled with SIMD, was measured on this machine kind beside the previous route (the plain "
      "loop at every n); denoc / RBDL is estimated from the route's time with the plain loop put back in. The "
      "ratios to the blocked kernel take its fastest width.")
    w("")
    ws = sorted({k for r in chol.values() for k in r if k.startswith("W")}, key=lambda k: int(k[1:]))
    w("| n | route | plain | " + " | ".join(f"blocked {k}" for k in ws) + " | Eigen LLT | plain / blocked | "
      "LLT / blocked | denoc / RBDL (est.) |")
    w("|---|---|---|" + "---|" * len(ws) + "---|---|---|---|")
    for n in sorted(chol):
        r = chol[n]
        best = min((r[k] for k in ws if k in r), default=None)  # the fastest width
        peer = PEER_CHOL.get(n)
        est = None
        if peer is not None and best is not None and r.get("plain") and r.get("route"):
            previous = r["route"] - best + r["plain"]
            est = r["route"] / previous * peer
        w(f"| {n} | {fmt(r.get('route'))} | {fmt(r.get('plain'))} | " + " | ".join(fmt(r.get(k)) for k in ws) +
          f" | {fmt(r.get('llt'))} | {fmt_ratio(ratio(r.get('plain'), best))} | "
          f"{fmt_ratio(ratio(r.get('llt'), best))} | {fmt_ratio(est)} |")
    w("")
    f, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    ns = sorted(minv)
    for key, label in (("denoc", "denoc"), ("dense", "dense"), ("sweeps", "sweeps"), ("columns", "per column"),
                       ("trsv", "reference (Eigen triangular solves)")):
        pts = [(n, minv[n][key] / (n * n)) for n in ns if key in minv[n]]
        if pts:
            axes[0].plot([p[0] for p in pts], [p[1] for p in pts], "o-", lw=1, ms=3, label=label)
    axes[0].set_xscale("log")
    axes[0].set_yscale("log")
    axes[0].set_xlabel("n")
    axes[0].set_ylabel("ns per entry of I^-1")
    axes[0].set_title("I(q)^-1")
    axes[0].grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    ns = sorted(chol)
    for key in ["plain"] + ws + ["llt"]:
        pts = [(n, chol[n][key] / (n ** 3 / 6)) for n in ns if key in chol[n]]
        if pts:
            axes[1].plot([p[0] for p in pts], [p[1] for p in pts], "o-", lw=1, ms=3,
                         label={"plain": "plain loop", "llt": "Eigen LLT"}.get(key, f"blocked {key}"))
    axes[1].set_xscale("log")
    axes[1].set_yscale("log")
    axes[1].set_xlabel("n")
    axes[1].set_ylabel("ns per n^3 / 6")
    axes[1].set_title("Cholesky factorization of I(q)")
    axes[1].grid(alpha=0.3)
    axes[1].legend(fontsize=7)
    f.tight_layout()
    f.savefig(os.path.join(figures, "bench_inverse_cholesky.png"), dpi=110)
    plt.close(f)
    w(f"![I^-1 and Cholesky]({rel}/bench_inverse_cholesky.png)")
    w("")


def native_section(w, table, native, figures, rel, native_dir):
    if not native:
        return
    _, nflags, _ = build_flags(native_dir)
    w("## Portable build beside -march=native")
    w("")
    w(f"The `native` preset (`cmake --preset native && cmake --build --preset native`, `{nflags}`) builds for "
      "this CPU only: AVX-512 and FMA instructions, three-operand encodings. The same arms, timed in a separate "
      "run right after the portable one (so the machine's state may differ between the two columns; KDL, "
      "built by Debian and the same in both, shows how much). CPU time, median (smallest–largest).")
    w("")
    w("| model | computation | portable | native | portable / native | KDL in the portable run | "
      "KDL in the native run |")
    w("|---|---|---|---|---|---|---|")
    pts = []
    for model in ("panda", "stanford"):
        for key, what, *_ in ALGOS:
            a, b = table.get((key, "denoc", model)), native.get((key, "denoc", model))
            ka, kb = table.get((key, "kdl", model)), native.get((key, "kdl", model))
            if a is None or b is None:
                continue
            r = ratio(a.median, b.median)
            pts.append((f"{model[:2]} {key}", r))
            w(f"| {model} | {what} | {fmt_spread(a)} | {fmt_spread(b)} | {fmt_ratio(r)} | {fmt(median(ka))} | "
              f"{fmt(median(kb))} |")
    w("")
    f, ax = plt.subplots(figsize=(10, 4))
    ax.bar(range(len(pts)), [p[1] for p in pts], color="tab:green")
    ax.axhline(1.0, color="k", lw=0.8)
    ax.set_xticks(range(len(pts)))
    ax.set_xticklabels([p[0] for p in pts], rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("portable time / native time")
    ax.grid(axis="y", alpha=0.3)
    f.tight_layout()
    f.savefig(os.path.join(figures, "bench_native.png"), dpi=110)
    plt.close(f)
    w(f"![portable vs native]({rel}/bench_native.png)")
    w("")


def vectorize_section(w, vec):
    if not vec:
        return
    best = vec["ns_per_call"]
    names = {"id": "inverse dynamics", "m": "inertia matrix", "ff": "full factor", "fd": "O(n) forward dynamics"}
    w("## Eigen's explicit SIMD on or off")
    w("")
    w("The default build defines `EIGEN_DONT_VECTORIZE` (`docs/algorithms.md`). Re-measured here: "
      "`bench_profile panda ALGO 1000000` of the default build against one configured with "
      "`-DDENOC_EIGEN_VECTORIZE=ON` (`build/vectorize`), user CPU time per call, the two builds alternating, "
      f"best of {vec.get('rounds', '?')} rounds (setup included, about 1% of it).")
    w("")
    w("| computation (Panda) | EIGEN_DONT_VECTORIZE (default) | Eigen SIMD on | on / off |")
    w("|---|---|---|---|")
    for algo in ("id", "m", "ff", "fd"):
        a, b = best.get(f"{algo}/default"), best.get(f"{algo}/vectorize")
        w(f"| {names[algo]} | {fmt(a)} | {fmt(b)} | {fmt_ratio(ratio(b, a))} |")
    w("")


def fixman_section(w, fc):
    if not fc:
        return
    cols = [("FD/saha", "Saha FD, O(n)"), ("FD/fixman", "Fixman FD, O(n)"), ("FD/cholesky", "I + Cholesky FD"),
            ("Solve/fixman", "Fixman solve I x = b"), ("LogDet/fixman", "Fixman log det"),
            ("LogDet/udu", "UDU log det"), ("C/saha", "C(q, qd), O(n^2)"), ("M/crba", "I(q), O(n^2)")]
    table = defaultdict(dict)
    for name, t in fc.items():
        m = re.match(r"^(\w+/\w+)/chain(\d+)", name)
        if m:
            table[int(m.group(2))][m.group(1)] = t.median
    w("## Fixman's route, Saha's and the Cholesky route; the convective matrix (the chains of docs/design.md)")
    w("")
    w("`bench_fixman_convective`, CPU time per call, median of the repetitions:")
    w("")
    w("| n | " + " | ".join(t for _, t in cols) + " | Fixman FD / Saha FD |")
    w("|---|" + "---|" * (len(cols) + 1))
    for n in sorted(table):
        row = table[n]
        w(f"| {n} | " + " | ".join(fmt(row.get(k)) for k, _ in cols) + " | " +
          fmt_ratio(ratio(row.get("FD/fixman"), row.get("FD/saha"))) + " |")
    w("")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--build-dir", default="")
    ap.add_argument("--native-build-dir", default="")
    ap.add_argument("--doc", default="docs/benchmarks.md")
    ap.add_argument("--figures", default="docs/figures")
    ap.add_argument("--meta", action="append", default=[])
    ap.add_argument("--lanes-only", action="store_true",
                    help="rewrite only the section 'SIMD lanes' of --doc (and its figure) from --dir/batch.json, "
                         "e.g. of `bench_batch --benchmark_filter='^(Lanes|Loop)/'`; the rest of the page stays")
    args = ap.parse_args()
    os.makedirs(args.figures, exist_ok=True)
    rel = os.path.relpath(args.figures, os.path.dirname(os.path.abspath(args.doc)))
    if args.lanes_only:
        splice_lanes(args, rel)
        return
    ctx, core = load(os.path.join(args.dir, "core.json"), "cpu_time")
    table = by_parts(core)
    _, native = load(os.path.join(args.dir, "native.json"), "cpu_time")
    native = by_parts(native)
    # one thread: CPU time (robust to the other work of a shared machine); threads: wall-clock time
    _, batch_cpu = load(os.path.join(args.dir, "batch.json"), "cpu_time")
    _, batch = load(os.path.join(args.dir, "batch.json"), "real_time")
    _, weak = load(os.path.join(args.dir, "inverse_cholesky.json"), "cpu_time")
    _, fc = load(os.path.join(args.dir, "fixman_convective.json"), "cpu_time")
    machine = {}
    if os.path.exists(os.path.join(args.dir, "machine.json")):
        with open(os.path.join(args.dir, "machine.json")) as f:
            machine = json.load(f)
    steps = {}
    if os.path.exists(os.path.join(args.dir, "steps.json")):
        with open(os.path.join(args.dir, "steps.json")) as f:
            steps = json.load(f)
    cg = {}
    if os.path.exists(os.path.join(args.dir, "callgrind.json")):
        with open(os.path.join(args.dir, "callgrind.json")) as f:
            cg = json.load(f)

    out = []
    w = out.append
    w("# Benchmarks: denoc beside Orocos KDL")
    w("")
    w("Generated by `bench/run_core.sh` (the one command: it builds the `release` preset, and the `native` one "
      "unless `NATIVE=0`, runs `bench_core`, `bench_batch`, `bench_inverse_cholesky`, `bench_fixman_convective` and "
      "`bench_profile` under "
      "callgrind, and writes this page, its figures in `docs/figures/bench_*.png` and the tables of "
      "`docs/operation-counts.md` with `bench/report.py`). Both libraries run in the same binary on the same "
      "models and the same 64 random states (each call takes the next; KDL caches joint poses when q does not "
      "change), and the binary first checks that KDL's results agree with ours. The repetitions of all "
      "benchmarks run in a random interleaved order (`--benchmark_enable_random_interleaving`), so that the "
      "machine's drift between a fast and a slow state (docs/design.md) hits both libraries alike. KDL's chains "
      "have one segment per joint, as kdl_parser builds them.")
    w("")
    machine_section(w, ctx, machine, steps, args.build_dir, args.native_build_dir if native else "", args.meta)
    arms_section(w, table, args.figures, rel)
    callgrind_section(w, cg)
    chains_section(w, table, args.figures, rel)
    crossover_section(w, table, args.figures, rel)
    linearity_section(w, table, args.figures, rel)
    bl = steps.get("batch", {})
    load_note = (f"Load average before and after this part: {bl.get('begin', {}).get('load', '?')} and "
                 f"{bl.get('end', {}).get('load', '?')}: on this machine, shared with other work, a second thread "
                 "only speeds a batch up when a core is free, which the speed-ups show.")
    lanes_section(w, batch_cpu, args.figures, rel, load_note, simd_peak(os.path.join(args.dir, "simd_peak.txt")))
    cores_section(w, batch, args.figures, rel)
    small_section(w, batch_cpu)
    wl = steps.get("weak", {})
    weak_section(w, weak, args.figures, rel,
                 f"Load average before and after: {wl.get('begin', {}).get('load', '?')} and "
                 f"{wl.get('end', {}).get('load', '?')}.")
    native_section(w, table, native, args.figures, rel, args.native_build_dir)
    vec = None
    if os.path.exists(os.path.join(args.dir, "vectorize.json")):
        with open(os.path.join(args.dir, "vectorize.json")) as f:
            vec = json.load(f)
    vectorize_section(w, vec)
    fixman_section(w, fc)
    with open(args.doc, "w") as f:
        f.write("\n".join(out).rstrip() + "\n")
    print(f"wrote {args.doc} and {args.figures}/bench_*.png", file=sys.stderr)


def splice_lanes(args, rel):
    """Replaces the section '## SIMD lanes' of args.doc with one made from args.dir/batch.json."""
    _, batch_cpu = load(os.path.join(args.dir, "batch.json"), "cpu_time")
    steps = {}
    if os.path.exists(os.path.join(args.dir, "steps.json")):
        with open(os.path.join(args.dir, "steps.json")) as f:
            steps = json.load(f)
    bl = steps.get("batch", {})
    reps = max((len(t.values) for name, t in batch_cpu.items() if name.startswith(("Lanes/", "Loop/"))), default=0)
    load_note = (f"This section alone was rerun ({bl.get('begin', {}).get('date', '?')}, {reps} repetitions: "
                 "`bench_batch --benchmark_filter='^(Lanes|Loop)/'` with the other flags of `bench/run_core.sh`, "
                 "then `bench/report.py --lanes-only`; the other sections are from the run dated above); "
                 "load average before and after: "
                 f"{bl.get('begin', {}).get('load', '?')} and {bl.get('end', {}).get('load', '?')} (2 CPUs shared "
                 "with other work: CPU time is what other work disturbs least).")
    out = []
    lanes_section(out.append, batch_cpu, args.figures, rel, load_note,
                  simd_peak(os.path.join(args.dir, "simd_peak.txt")))
    if not out:
        sys.exit(f"{args.dir}/batch.json: no Lanes/ or Loop/ benchmarks")
    with open(args.doc) as f:
        lines = f.read().split("\n")
    head = "## SIMD lanes: W states per thread"
    if head not in lines:
        sys.exit(f"{args.doc}: no section '{head}'")
    begin = lines.index(head)
    end = next((i for i in range(begin + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    lines[begin:end] = out
    with open(args.doc, "w") as f:
        f.write("\n".join(lines))
    print(f"rewrote the lanes section of {args.doc} and {args.figures}/bench_lanes.png", file=sys.stderr)


if __name__ == "__main__":
    main()
