#!/usr/bin/env bash
# The measurements behind the resource requests and limits of deploy/k8s (deploy/README.md "Sizing"): one
# denocd (the image's configuration: the examples and the Panda preloaded) on 127.0.0.1, loaded by the denoc
# CLI's bench command and denoc_probe; prints the server's CPU time per call and per state (from
# /proc/PID/stat, so the clients' own CPU is not counted), its resident memory (VmRSS) and peak (VmHWM).
# Usage: deploy/measure-sizing.sh [BUILD_DIR]   (default build/release; needs denocd, denoc, denoc_probe)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/release}
denocd=$build/server/denocd denoc=$build/clients/cli/denoc probe=$build/server/tools/denoc_probe
work=$(mktemp -d /tmp/denoc-sizing.XXXXXX)
"$denocd" --listen 127.0.0.1:0 --port-file "$work/port" --store-dir "$work/store" \
  --preload examples/models/panda.urdf >"$work/denocd.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 300); do [ -s "$work/port" ] && break; sleep 0.05; done
server=127.0.0.1:$(cat "$work/port")
tck=$(getconf CLK_TCK)

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
mem() { awk '/^VmRSS/ { r = $2 } /^VmHWM/ { h = $2 } END { printf "RSS %.1f MiB, peak %.1f MiB", r / 1024, h / 1024 }' "/proc/$pid/status"; }

echo "denocd $server (pid $pid), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "idle: $(mem)"
echo
printf '%-52s %8s %10s %14s %14s  %s\n' scenario calls wall_s "cpu_us/call" "cpu_us/state" memory

# scenario NAME CLIENTS CALLS BATCH: CLIENTS concurrent `denoc bench panda` runs of CALLS calls of BATCH states
scenario() {
  local name=$1 clients=$2 calls=$3 batch=$4 c0 c1 t0 t1 i pids=()
  c0=$(cpu_ticks)
  t0=$(date +%s.%N)
  for i in $(seq 1 "$clients"); do
    "$denoc" --server "$server" bench panda --calls "$calls" --batch "$batch" --no-progress >"$work/bench.$i" 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"
  t1=$(date +%s.%N)
  c1=$(cpu_ticks)
  awk -v n="$name" -v k="$((clients * calls))" -v b="$batch" -v c="$((c1 - c0))" -v t="$tck" -v a="$t0" -v z="$t1" \
    -v m="$(mem)" 'BEGIN { us = c / t * 1e6; printf "%-52s %8d %10.2f %14.1f %14.3f  %s\n", n, k, z - a, us / k, us / (k * b), m }'
}
scenario "ID, 1 state per call, 1 client" 1 5000 1
scenario "ID, 1 state per call, 4 clients" 4 2000 1
scenario "ID, 100 states per call, 1 client" 1 2000 100
scenario "ID, 1000 states per call, 1 client" 1 300 1000
scenario "ID, 20000 states per call, 8 clients" 8 10 20000
scenario "ID, 100000 states per call (max), 1 client" 1 10 100000
scenario "ID, 100000 states per call (max), 4 clients" 4 5 100000
echo
echo "1000 distinct 7-dof models registered (denoc_probe):"
"$probe" --server "$server" --iterations 500 --server-pid "$pid" --register-models 1000 | grep -E 'RSS|Stream'
echo "after: $(mem)"
