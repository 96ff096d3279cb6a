#!/usr/bin/env bash
# The trees' benchmark table (docs/trees.md, "Performance") in one command: builds bench_trees, times the tree
# recursions beside MuJoCo and the serial recursions (interleaved, repeated), prints the table.
#
#   bench/run_trees.sh                    # REPS=5 MIN_TIME=0.2 by default
#   REPS=9 MIN_TIME=0.3 bench/run_trees.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build/release"
out="${OUT:-$build/bench-out}"
mkdir -p "$out"
cd "$root"
cmake --preset release >/dev/null
cmake --build --preset release -j "${JOBS:-2}" --target bench_trees
echo "== load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$build/bench/bench_trees" --benchmark_repetitions="${REPS:-5}" --benchmark_min_time="${MIN_TIME:-0.2}" \
  --benchmark_enable_random_interleaving=true --benchmark_display_aggregates_only=true \
  --benchmark_out_format=json --benchmark_out="$out/trees.json" >/dev/null
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
/usr/bin/python3 "$root/bench/trees_report.py" "$out/trees.json"
