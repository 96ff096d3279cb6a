#!/usr/bin/env bash
# Builds bench_core and runs it with repetitions, then writes docs/benchmarks.md from the JSON.
#
#   bench/run_core.sh                 # release preset (build/release)
#   bench/run_core.sh BUILD_DIR       # any build directory (configured here as Release if needed)
#   bench/run_core.sh BUILD_DIR --benchmark_filter='panda'   # extra arguments go to bench_core
#
# Environment: REPS (repetitions, default 5), MIN_TIME (seconds per repetition, default 0.2),
# TIME (real or cpu: which time the report uses, default real), JOBS (build jobs, default 2),
# OUT (JSON file, default BUILD_DIR/bench_core.json), DOC (markdown, default docs/benchmarks.md; "-" for
# stdout only).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build/release}"
[ $# -gt 0 ] && shift
reps="${REPS:-5}"
min_time="${MIN_TIME:-0.2}"
time_kind="${TIME:-real}"
jobs="${JOBS:-2}"

if [ "$(realpath -m "$build")" = "$(realpath -m "$root/build/release")" ]; then
  (cd "$root" && cmake --preset release >/dev/null && cmake --build --preset release -j "$jobs" --target bench_core bench_fixman_convective)
else
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j "$jobs" --target bench_core bench_fixman_convective
fi

out="${OUT:-$build/bench_core.json}"
"$build/bench/bench_core" --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
  --benchmark_min_time="$min_time" --benchmark_out="$out" --benchmark_out_format=json "$@"

out_fc="${out%.json}_fixman_convective.json"
"$build/bench/bench_fixman_convective" --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
  --benchmark_min_time="$min_time" --benchmark_out="$out_fc" --benchmark_out_format=json >/dev/null

doc="${DOC:-$root/docs/benchmarks.md}"
report=(/usr/bin/python3 "$root/bench/report.py" "$out" --build-dir "$build" --time "$time_kind"
        --meta "repetitions=$reps" --meta "min_time=${min_time} s")
report_fc=(/usr/bin/python3 "$root/bench/report_fixman_convective.py" "$out_fc" --time "$time_kind")
if [ "$doc" = "-" ]; then
  "${report[@]}"
  "${report_fc[@]}"
else
  { "${report[@]}"; "${report_fc[@]}"; } > "$doc"
  echo "wrote $doc"
fi
