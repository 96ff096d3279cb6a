#!/usr/bin/env bash
# The core's benchmark report in one command: builds, times and writes docs/benchmarks.md,
# docs/figures/bench_*.png and the generated tables of docs/operation-counts.md.
#
#   bench/run_core.sh                       # everything (about 40 minutes on 2 cores)
#   NATIVE=0 VECTORIZE=0 bench/run_core.sh  # without the extra builds
#   STEPS="batch" bench/run_core.sh         # time the batches again, keep the other results of OUT
#   REPS=9 MIN_TIME=0.3 bench/run_core.sh
#
# Steps, and what each writes into OUT:
#   core       core.json: bench_core, ours and KDL's on the arms and the chains
#   batch      batch.json: bench_batch, batches at every SIMD width, on pools of 1 and 2 threads, beside a loop
#   weak       inverse_cholesky.json: bench_inverse_cholesky, I(q)^-1 and the Cholesky route beside references
#   fixman     fixman_convective.json: bench_fixman_convective
#   callgrind  callgrind.json: instructions per call of bench_profile on the Panda, ours and KDL's
#   native     native.json: bench_core of the `native` preset (-march=native), the arms
#   vectorize  vectorize.json: bench_profile of a build with Eigen's explicit SIMD against the default
#   opcount    opcount.md: bench_opcount (also spliced into docs/operation-counts.md)
# Every step records its date and the load average before and after it in OUT/steps.json; the report
# shows them. The report is written from whatever results OUT holds.
#
# Environment: STEPS (default: all of the above), REPS (repetitions of every benchmark, default 5), MIN_TIME
# (seconds per repetition, default 0.2), NATIVE, VECTORIZE, CALLGRIND (0 drops that step from the default),
# JOBS (build jobs, default 2), OUT (default build/release/bench-out), DOC (default docs/benchmarks.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
reps="${REPS:-5}"
min_time="${MIN_TIME:-0.2}"
jobs="${JOBS:-2}"
build="$root/build/release"
out="${OUT:-$build/bench-out}"
doc="${DOC:-$root/docs/benchmarks.md}"
steps="${STEPS:-core batch weak fixman callgrind native vectorize opcount}"
[ "${NATIVE:-1}" = "1" ] || steps="${steps//native/}"
[ "${VECTORIZE:-1}" = "1" ] || steps="${steps//vectorize/}"
[ "${CALLGRIND:-1}" = "1" ] && command -v valgrind >/dev/null || steps="${steps//callgrind/}"
mkdir -p "$out"
cd "$root"

has() { [[ " $steps " == *" $1 "* ]]; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg | sed 's/ /, /g'; }
# record STEP's date and load average before (begin) or after (end) it in steps.json
record() {
  /usr/bin/python3 - "$out/steps.json" "$1" "$2" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(loadavg)" <<'PY'
import json, os, sys
path, step, when, date, load = sys.argv[1:6]
doc = json.load(open(path)) if os.path.exists(path) else {}
entry = doc.setdefault(step, {})
entry[when] = {"date": date, "load": load}
json.dump(doc, open(path, "w"), indent=1)
PY
}

echo "== steps: $steps; load average: $(loadavg)"
echo "== building the release preset"
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs" --target bench_core bench_batch bench_fixman_convective bench_profile \
  bench_opcount bench_inverse_cholesky simd_peak

gb=(--benchmark_repetitions="$reps" --benchmark_min_time="$min_time" --benchmark_enable_random_interleaving=true
    --benchmark_display_aggregates_only=true --benchmark_out_format=json)

if has core; then
  echo "== core: bench_core, ours and KDL's (about 10 minutes)"
  record core begin
  "$build/bench/bench_core" "${gb[@]}" --benchmark_out="$out/core.json" >/dev/null
  record core end
fi

if has batch; then
  echo "== batch: bench_batch"
  record batch begin
  "$build/bench/bench_batch" "${gb[@]}" --benchmark_out="$out/batch.json" >/dev/null
  # the CPU's peak multiply and add throughput at each vector width, which the lanes section quotes
  "$build/bench/simd_peak" 0.5 >"$out/simd_peak.txt"
  record batch end
fi

if has weak; then
  echo "== weak: bench_inverse_cholesky"
  record weak begin
  "$build/bench/bench_inverse_cholesky" "${gb[@]}" --benchmark_out="$out/inverse_cholesky.json" >/dev/null
  record weak end
fi

if has fixman; then
  echo "== fixman: bench_fixman_convective"
  record fixman begin
  "$build/bench/bench_fixman_convective" "${gb[@]}" --benchmark_out="$out/fixman_convective.json" >/dev/null
  record fixman end
fi

if has callgrind; then
  echo "== callgrind: instructions per call on the Panda"
  record callgrind begin
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
  record callgrind end
fi

native_build=""
[ -f "$out/native.json" ] && native_build="$root/build/native"
if has native; then
  echo "== native: the native preset (-march=native), the arms"
  cmake --preset native >/dev/null
  cmake --build --preset native -j "$jobs" --target bench_core
  native_build="$root/build/native"
  record native begin
  "$native_build/bench/bench_core" "${gb[@]}" --benchmark_filter='/(panda|stanford)$' \
    --benchmark_out="$out/native.json" >/dev/null
  record native end
fi

if has vectorize; then
  echo "== vectorize: Eigen's explicit SIMD (DENOC_EIGEN_VECTORIZE=ON) against the default build"
  cmake -S "$root" -B "$root/build/vectorize" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDENOC_EIGEN_VECTORIZE=ON \
    -DDENOC_BUILD_TESTS=OFF >/dev/null
  cmake --build "$root/build/vectorize" -j "$jobs" --target bench_profile
  record vectorize begin
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
  record vectorize end
fi

if has opcount; then
  echo "== opcount: operation counts"
  record opcount begin
  "$build/bench/bench_opcount" > "$out/opcount.md"
  record opcount end
fi
if [ -f "$out/opcount.md" ]; then
  /usr/bin/python3 - "$out/opcount.md" "$root/docs/operation-counts.md" <<'PY'
import sys
table = open(sys.argv[1]).read().strip()
path = sys.argv[2]
doc = open(path).read()
begin, end = "<!-- generated by bench/run_core.sh: begin -->", "<!-- generated by bench/run_core.sh: end -->"
if begin not in doc or end not in doc:
    sys.exit(f"{path}: markers not found")
head, rest = doc.split(begin, 1)
_, tail = rest.split(end, 1)
open(path, "w").write(head + begin + "\n\n" + table + "\n\n" + end + tail)
PY
fi

/usr/bin/python3 - "$out/machine.json" <<'PY'
import json, subprocess, sys
info = {}
for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
    k, _, v = line.partition(":")
    info[k.strip()] = v.strip()
json.dump({"model": info.get("Model name", "?"), "cpus": info.get("CPU(s)", "?"),
           "cores_per_socket": info.get("Core(s) per socket", "?"),
           "threads_per_core": info.get("Thread(s) per core", "?"),
           "kernel": subprocess.run(["uname", "-sr"], capture_output=True, text=True).stdout.strip()},
          open(sys.argv[1], "w"), indent=1)
PY

echo "== report; load average: $(loadavg)"
/usr/bin/python3 "$root/bench/report.py" --dir "$out" --build-dir "$build" --native-build-dir "$native_build" \
  --doc "$doc" --figures "$root/docs/figures" --meta "repetitions=$reps, interleaved at random" \
  --meta "min_time=${min_time} s per repetition"
