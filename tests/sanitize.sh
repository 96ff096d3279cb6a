#!/usr/bin/env bash
# The core and server test suites under a sanitizer, on a fresh Debian 12 machine: installs the packages
# (deploy/install-deps.sh; DENOC_SKIP_DEPS=1 skips that), configures and builds the asan or tsan preset (asan:
# the test programs' own code without UBSan, the library, denocd and the clients with it) and
# runs ctest without the Node and Python client tests (label "clients"; they test the clients, not the
# server, and take minutes) and the packaging tests (label "packaging": an installed sanitizer build cannot be
# linked by a plain consumer). ThreadSanitizer runs the core's suites (the batch pool's threads, one model
# shared by threads) and the store's (label "store": test_store_units calls the registry, the model store and
# the log rate limit directly from several threads, without a gRPC server), not the server suites: every
# test that talks gRPC reports races inside Debian's gRPC, protobuf and Abseil, which are not built with
# -fsanitize=thread, so TSan cannot see their synchronization (buffers handed between gRPC's threads and the
# handlers show up as races; docs/reliability.md "Sanitizers"). The denocd processes the server tests start are sanitizer builds too; their
# stderr goes to the tests' log files, so every report of every process is also written to
# build/<preset>/sanitizer-reports/, and any file there fails the run.
#
# usage: tests/sanitize.sh asan|tsan
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-}
case "$preset" in
  asan | tsan) ;;
  *)
    echo "usage: tests/sanitize.sh asan|tsan" >&2
    exit 2
    ;;
esac

if [ "${DENOC_SKIP_DEPS:-0}" != 1 ]; then deploy/install-deps.sh; fi

reports=$PWD/build/$preset/sanitizer-reports
rm -rf "$reports"
mkdir -p "$reports"
# added to the options of the test presets (CMakePresets.json), which come after these and win on conflict;
# llvm-14's symbolizer (the unversioned llvm-symbolizer is not always on PATH)
common="log_path=$reports/$preset"
if [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
  common="$common external_symbolizer_path=/usr/lib/llvm-14/bin/llvm-symbolizer"
fi
case "$preset" in
  asan)
    export ASAN_OPTIONS="$common"
    export UBSAN_OPTIONS="log_path=$reports/ubsan print_stacktrace=1"
    ;;
  tsan)
    export TSAN_OPTIONS="$common"
    ;;
esac

start=$(date +%s)
cmake --preset "$preset"
cmake --build --preset "$preset" -j "$(nproc)"
built=$(date +%s)
set +e
if [ "$preset" = tsan ]; then
  # the core's suites and the store's (label "store"), not the gRPC ones
  ctest --preset "$preset" -j "$(nproc)" -LE 'clients|client|server|front|load|packaging' -E 'fuzz_replay_request'
else
  # the attack runs (labels hostile, front) assert resident sizes, which ASan's quarantine and shadow memory
  # inflate; they run in the release build
  ctest --preset "$preset" -j "$(nproc)" -LE 'clients|packaging|hostile|front'
fi
rc=$?
set -e
end=$(date +%s)

found=$(find "$reports" -type f | wc -l)
if [ "$found" -ne 0 ]; then
  echo "== $found sanitizer report(s) in $reports:"
  for f in "$reports"/*; do
    echo "--- $f"
    head -60 "$f"
  done
  rc=1
fi
echo "== $preset: configure+build $((built - start)) s, ctest $((end - built)) s, ctest exit $rc, reports $found"
exit $rc
