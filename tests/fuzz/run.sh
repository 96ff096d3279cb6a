#!/usr/bin/env bash
# Bounded fuzzing: builds the fuzz preset (clang 14, libFuzzer, ASan + UBSan), then runs each fuzz target
# for SECONDS (default 60) from its seed corpus, one after the other, and prints the executions and the
# crashes of each. Exits 1 if any target crashed (its input is in build/fuzz/fuzz-runs/artifacts/<target>/:
# fix the bug, copy the input to tests/fuzz/regressions/<target>/ and add a test to the normal suites).
#
# usage: tests/fuzz/run.sh [SECONDS]
# The working corpus (build/fuzz/fuzz-runs/corpus/<target>) is kept between runs, so repeated runs go on
# where the last one stopped; FUZZ_FRESH=1 starts from the seeds again. Extra libFuzzer flags may be given
# in FUZZ_FLAGS (e.g. FUZZ_FLAGS=-jobs=2).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
build=build/fuzz
runs=$build/fuzz-runs

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)"

if [ "${FUZZ_FRESH:-0}" = 1 ]; then rm -rf "$runs/corpus"; fi
mkdir -p "$runs"

# seed directories per target (libFuzzer takes directories only: files are gathered into one)
declare -A seeds=([urdf]=$runs/seeds/urdf [dh_json]=$runs/seeds/dh_json [request]=$build/tests/fuzz/seeds/request)
rm -rf "${seeds[urdf]}" "${seeds[dh_json]}" && mkdir -p "${seeds[urdf]}" "${seeds[dh_json]}"
cp tests/data/urdf/*.urdf tests/fuzz/seeds/urdf/* examples/models/*.urdf "${seeds[urdf]}"/
cp tests/fuzz/seeds/dh_json/* examples/models/*.json "${seeds[dh_json]}"/

export ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=1
if [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
fi
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-}${UBSAN_OPTIONS:+:}print_stacktrace=1

status=0
summary=()
for target in urdf dh_json request; do
  dirs=("${seeds[$target]}")
  [ -d "tests/fuzz/regressions/$target" ] && dirs+=("tests/fuzz/regressions/$target")
  corpus=$runs/corpus/$target
  artifacts=$runs/artifacts/$target
  mkdir -p "$corpus" "$artifacts"
  dict=()
  [ -f "tests/fuzz/$target.dict" ] && dict=(-dict="tests/fuzz/$target.dict")
  log=$runs/$target.log
  marker=$runs/$target.start
  touch "$marker"
  echo "== fuzz_$target: $seconds s (log: $log)"
  set +e
  # inputs up to 1 MiB: the URDF text limit (docs/urdf.md, "Limits"), and beyond the request limits
  # shellcheck disable=SC2086 # FUZZ_FLAGS is a word list
  "$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -print_final_stats=1 -timeout=30 \
    -rss_limit_mb=4096 -max_len=1048576 "${dict[@]}" -artifact_prefix="$artifacts/" ${FUZZ_FLAGS:-} \
    "$corpus" "${dirs[@]}" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  crashes=$(find "$artifacts" -type f -newer "$marker" | wc -l)
  [ "$rc" -ne 0 ] && [ "$crashes" -eq 0 ] && crashes=1  # a failure that left no input (e.g. at start)
  corpus_size=$(find "$corpus" -type f | wc -l)
  summary+=("$(printf '%-14s executions %10s  crashes %d  corpus %d  exit %d' "fuzz_$target" "${execs:-?}" \
    "$crashes" "$corpus_size" "$rc")")
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "fuzz_$target failed; the end of its log:"
    tail -40 "$log"
    echo "inputs: $(find "$artifacts" -type f -newer "$marker" | tr '\n' ' ')"
  fi
done
echo "== fuzzing summary ($seconds s per target)"
printf '%s\n' "${summary[@]}"
exit $status
