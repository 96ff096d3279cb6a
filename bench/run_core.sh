#!/usr/bin/env bash
# The core's benchmark report in one command: builds, times and writes docs/benchmarks.md,
# docs/figures/bench_*.png and the generated tables of docs/operation-counts.md.
#
#   bench/run_core.sh                  # release preset (build/release), plus the native preset for the arms
#   NATIVE=0 bench/run_core.sh         # without the -march=native build
#   REPS=9 MIN_TIME=0.3 bench/run_core.sh
#
# Environment: REPS (repetitions of every benchmark, default 5), MIN_TIME (seconds per repetition, default
# 0.2), NATIVE (1: also build the `native` preset and time the arms with it, default 1), CALLGRIND (1: count
# instructions per call with valgrind, default 1), VECTORIZE (1: also build the core with Eigen's explicit
# SIMD, build/vectorize, and time bench_profile against the default build, default 1), JOBS (build jobs,
# default 2), OUT (directory for the raw results, default build/release/bench-out), DOC (default
# docs/benchmarks.md).
#
# Steps and what they write into OUT: machine.json (lscpu, load, kernel); core.json (bench_core: ours and
# KDL's on the arms and the chains); batch.json (bench_batch: batches on pools of 1 and 2 threads);
# fixman_convective.json (bench_fixman_convective); callgrind.json (instructions per call of bench_profile);
# native.json (bench_core of the native build, the arms); opcount.md (bench_opcount).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
reps="${REPS:-5}"
min_time="${MIN_TIME:-0.2}"
native="${NATIVE:-1}"
vectorize="${VECTORIZE:-1}"
callgrind="${CALLGRIND:-1}"
jobs="${JOBS:-2}"
build="$root/build/release"
out="${OUT:-$build/bench-out}"
doc="${DOC:-$root/docs/benchmarks.md}"
mkdir -p "$out"
cd "$root"

loadavg() { cut -d' ' -f1-3 /proc/loadavg | sed 's/ /, /g'; }
load_start="$(loadavg)"
echo "== load average at start: $load_start"

echo "== building the release preset"
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs" --target bench_core bench_batch bench_fixman_convective bench_profile \
  bench_opcount

gb=(--benchmark_repetitions="$reps" --benchmark_min_time="$min_time" --benchmark_enable_random_interleaving=true
    --benchmark_display_aggregates_only=true --benchmark_out_format=json)

echo "== bench_core (ours and KDL's; about 10 minutes)"
"$build/bench/bench_core" "${gb[@]}" --benchmark_out="$out/core.json" >/dev/null

echo "== bench_batch"
"$build/bench/bench_batch" "${gb[@]}" --benchmark_out="$out/batch.json" >/dev/null

echo "== bench_fixman_convective"
"$build/bench/bench_fixman_convective" "${gb[@]}" --benchmark_out="$out/fixman_convective.json" >/dev/null

if [ "$callgrind" = "1" ] && command -v valgrind >/dev/null; then
  echo "== instructions per call (callgrind, the Panda)"
  count() {  # instructions of bench_profile panda $1 $2
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$build/bench/bench_profile" panda "$1" "$2" 2>&1 |
      sed -n 's/.*refs: *//p' | tr -d ,
  }
  calls=2000
  base="$(count id 0)"
  {
    echo "{"
    first=1
    for algo in id m ff minv fd chol kdl-id kdl-m kdl-ff kdl-minv kdl-fd kdl-chol; do
      total="$(count "$algo" "$calls")"
      [ $first = 1 ] || echo ","
      first=0
      printf '  "%s": %d' "$algo" $(( (total - base) / calls ))
    done
    echo
    echo "}"
  } > "$out/callgrind.json"
else
  rm -f "$out/callgrind.json"
fi

native_build=""
if [ "$native" = "1" ]; then
  echo "== building the native preset (-march=native) and timing the arms with it"
  cmake --preset native >/dev/null
  cmake --build --preset native -j "$jobs" --target bench_core
  native_build="$root/build/native"
  "$native_build/bench/bench_core" "${gb[@]}" --benchmark_filter='/(panda|stanford)$' \
    --benchmark_out="$out/native.json" >/dev/null
else
  rm -f "$out/native.json"
fi

if [ "$vectorize" = "1" ]; then
  echo "== Eigen's explicit SIMD (DENOC_EIGEN_VECTORIZE=ON) against the default build"
  cmake -S "$root" -B "$root/build/vectorize" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDENOC_EIGEN_VECTORIZE=ON \
    -DDENOC_BUILD_TESTS=OFF >/dev/null
  cmake --build "$root/build/vectorize" -j "$jobs" --target bench_profile
  # user CPU time of 10^6 calls, the two builds alternating, best of 5 rounds
  /usr/bin/python3 - "$build/bench/bench_profile" "$root/build/vectorize/bench/bench_profile" \
    "$out/vectorize.json" <<'PY'
import json, os, subprocess, sys
default, vectorized, path = sys.argv[1:4]
calls = 1000000
best = {}
for _ in range(5):
    for algo in ("id", "m", "ff", "fd"):
        for name, exe in (("default", default), ("vectorize", vectorized)):
            p = subprocess.Popen([exe, "panda", algo, str(calls)], stdout=subprocess.DEVNULL)
            _, _, usage = os.wait4(p.pid, 0)
            ns = usage.ru_utime * 1e9 / calls
            key = f"{algo}/{name}"
            best[key] = min(best.get(key, ns), ns)
json.dump({"calls": calls, "rounds": 5, "ns_per_call": best}, open(path, "w"), indent=1)
PY
else
  rm -f "$out/vectorize.json"
fi

echo "== operation counts"
"$build/bench/bench_opcount" > "$out/opcount.md"
/usr/bin/python3 - "$out/opcount.md" "$root/docs/operation-counts.md" <<'EOF'
import re, sys
table = open(sys.argv[1]).read().strip()
path = sys.argv[2]
doc = open(path).read()
begin, end = "<!-- generated by bench/run_core.sh: begin -->", "<!-- generated by bench/run_core.sh: end -->"
if begin not in doc or end not in doc:
    sys.exit(f"{path}: markers not found")
head, rest = doc.split(begin, 1)
_, tail = rest.split(end, 1)
open(path, "w").write(head + begin + "\n\n" + table + "\n\n" + end + tail)
EOF

load_end="$(loadavg)"
echo "== load average at end: $load_end"
/usr/bin/python3 - "$out/machine.json" "$load_start" "$load_end" <<'EOF'
import json, subprocess, sys
info = {}
for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
    k, _, v = line.partition(":")
    info[k.strip()] = v.strip()
json.dump({"model": info.get("Model name", "?"), "cpus": info.get("CPU(s)", "?"),
           "cores_per_socket": info.get("Core(s) per socket", "?"),
           "threads_per_core": info.get("Thread(s) per core", "?"),
           "kernel": subprocess.run(["uname", "-sr"], capture_output=True, text=True).stdout.strip(),
           "load_start": sys.argv[2], "load_end": sys.argv[3]}, open(sys.argv[1], "w"), indent=1)
EOF

/usr/bin/python3 "$root/bench/report.py" --dir "$out" --build-dir "$build" --native-build-dir "$native_build" \
  --doc "$doc" --figures "$root/docs/figures" --meta "repetitions=$reps, interleaved at random" \
  --meta "min_time=${min_time} s per repetition"
