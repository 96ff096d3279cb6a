#!/usr/bin/env bash
# The service's benchmark report in one command: builds denocd and its load tools (release preset), then on
# 127.0.0.1, ROUNDS times (a fresh server each):
#   denoc_probe --parts unary,stream   one client: 7-DOF inverse dynamics vs an empty call; Stream vs echo
#   denoc_probe --parts batch          batched inverse dynamics at 1..10^5 states per call vs the core
#   denoc_probe --parts pipelined,rollout
#                                      a 10^4-state batch as 1..16 concurrent chunk calls vs the core's loop;
#                                      64 rollouts x 100 steps with A, B vs rolloutBatch in process (Panda)
#   denoc_load --clients 8             closed-loop calls/s with every answer checked
# and once the resident size of a server holding 10^4 registered 7-DOF models. Writes
# docs/service-benchmarks.md and docs/figures/service_*.png (bench/service_report.py). Timing only.
#
#   bench/run_service.sh                    # about 2 minutes on 2 cores
#   ROUNDS=1 LOAD_SECONDS=10 bench/run_service.sh
#
# Environment: ROUNDS (default 2), ITERATIONS (unary and stream calls, default 3000), LOAD_SECONDS (default
# 20), CLIENTS (default 8), MODELS (default 10000), OUT (default build/release/service-bench-out), DOC.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build/release"
out="${OUT:-$build/service-bench-out}"
doc="${DOC:-$root/docs/service-benchmarks.md}"
rounds="${ROUNDS:-2}"
iterations="${ITERATIONS:-3000}"
load_seconds="${LOAD_SECONDS:-20}"
clients="${CLIENTS:-8}"
models="${MODELS:-10000}"
cd "$root"
rm -rf "$out"
mkdir -p "$out"

cmake --preset release >/dev/null
cmake --build --preset release --target denocd denoc_probe denoc_load

server_pid=
work=$(mktemp -d /tmp/denoc-service-bench.XXXXXX)
cleanup() {
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# start_server ARGS...: a fresh denocd on a free port with a fresh store; sets server_pid and server
start_server() {
  rm -rf "$work/store" "$work/port"
  "$build/server/denocd" --listen 127.0.0.1:0 --port-file "$work/port" --store-dir "$work/store" \
    --log-level warn --shutdown-grace-ms 0 "$@" >"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 300); do [ -s "$work/port" ] && break; sleep 0.05; done
  [ -s "$work/port" ] || { cat "$work/server.log"; exit 1; }
  server="127.0.0.1:$(cat "$work/port")"
}
stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid" || { echo "denocd did not stop cleanly"; exit 1; }
  server_pid=
}
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

{
  echo "date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "load_start $(loadavg)"
  echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'); $(nproc) CPUs"
  echo "kernel $(uname -r)"
  echo "grpc $(dpkg-query -W -f '${Version}' libgrpc++-dev 2>/dev/null || echo '?')"
  echo "protobuf $(dpkg-query -W -f '${Version}' libprotobuf-dev 2>/dev/null || echo '?')"
  echo "rounds $rounds"
  echo "iterations $iterations"
  echo "load_seconds $load_seconds"
  echo "clients $clients"
} >"$out/meta.txt"

# denocd has one gRPC API (callback); the report's files keep its name
api=callback
for round in $(seq 1 "$rounds"); do
  echo "== round $round"
  start_server
  "$build/server/tools/denoc_probe" --server "$server" --iterations "$iterations" --parts unary,stream \
    >"$out/unary_${api}_$round.txt"
  "$build/server/tools/denoc_probe" --server "$server" --iterations 200 --parts batch \
    >"$out/batch_${api}_$round.txt"
  "$build/server/tools/denoc_probe" --server "$server" --iterations 1000 --parts pipelined,rollout \
    --urdf "$root/examples/models/panda.urdf" >"$out/planner_${api}_$round.txt"
  stop_server
  start_server
  "$build/server/tools/denoc_load" --server "$server" --seconds "$load_seconds" --clients "$clients" \
    --server-pid "$server_pid" --warmup-seconds 5 --sample-seconds 5 >"$out/load_${api}_$round.txt"
  stop_server
done

echo "== memory: $models models"
start_server --max-models $((2 * models))
"$build/server/tools/denoc_probe" --server "$server" --server-pid "$server_pid" --parts none \
  --register-models "$models" >"$out/memory.txt"
stop_server
echo "load_end $(loadavg)" >>"$out/meta.txt"

/usr/bin/python3 bench/service_report.py "$out" "$doc" "$root/docs/figures"
