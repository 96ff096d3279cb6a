#!/usr/bin/env bash
# The planners' benchmark table in one command: builds bench_planners (release preset), times it with Google
# Benchmark (repetitions interleaved at random), counts instructions per call on the Panda under callgrind
# (independent of the machine's load), and writes the generated section of docs/planning.md.
#
#   bench/run_planners.sh                  # about 6 minutes on 2 cores
#   REPS=3 MIN_TIME=0.1 bench/run_planners.sh
#
# Environment: REPS (default 5), MIN_TIME (s per repetition, default 0.2), JOBS (build jobs, default 2),
# OUT (default build/release/bench-out), DOC (default docs/planning.md), CALLGRIND (0: skip the counts).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
reps="${REPS:-5}"
min_time="${MIN_TIME:-0.2}"
jobs="${JOBS:-2}"
build="$root/build/release"
out="${OUT:-$build/bench-out}"
doc="${DOC:-$root/docs/planning.md}"
mkdir -p "$out"
cd "$root"
loadavg() { cut -d' ' -f1-3 /proc/loadavg | sed 's/ /, /g'; }

cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs" --target bench_planners
exe="$build/bench/bench_planners"

load_before="$(loadavg)"
date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "== bench_planners; load average: $load_before"
"$exe" --benchmark_repetitions="$reps" --benchmark_min_time="$min_time" \
  --benchmark_enable_random_interleaving=true --benchmark_display_aggregates_only=true \
  --benchmark_out_format=json --benchmark_out="$out/planners.json" >/dev/null
load_after="$(loadavg)"

counts="{}"
if [ "${CALLGRIND:-1}" = "1" ] && command -v valgrind >/dev/null; then
  echo "== callgrind: instructions per call on the Panda"
  count() {  # instructions of `bench_planners profile panda ALGO CALLS`
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$exe" profile panda "$1" "$2" 2>&1 |
      sed -n 's/.*refs: *//p' | tr -d ,
  }
  base="$(count id 0)"
  counts="{"
  for algo in id fd idd fdd jacobian jdotqd lambda; do
    total="$(count "$algo" 2000)"
    counts="$counts\"$algo\": $(( (total - base) / 2000 )),"
  done
  counts="${counts%,}}"
fi
echo "$counts" > "$out/planners_callgrind.json"

/usr/bin/python3 "$root/bench/planners_report.py" --json "$out/planners.json" \
  --callgrind "$out/planners_callgrind.json" --doc "$doc" --date "$date" \
  --load "$load_before" --load "$load_after" --meta "repetitions=$reps, min_time=${min_time} s"
echo "== wrote $doc; load average: $(loadavg)"
