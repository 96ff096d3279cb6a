#!/usr/bin/env bash
# Batched inverse dynamics (1000 states of the 7-DOF Panda per call) through the C++ and the Python clients,
# against one denocd on 127.0.0.1 started here, rounds interleaved so both see the same machine state.
#   bench/client_throughput.sh [BUILD_DIR] [ROUNDS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build/release}"
rounds="${2:-3}"
cmake --build "$build" --target denocd denoc_client_throughput >/dev/null
work="$(mktemp -d)"
trap 'kill "$server" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
"$build/server/denocd" --listen 127.0.0.1:0 --port-file "$work/port" --store-dir "$work/store" \
  --log-level warn &
server=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
target="127.0.0.1:$(cat "$work/port")"
urdf="$root/examples/models/panda.urdf"
# the Python package installed into a fresh environment, as clients/python/README.md says
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-build-isolation --no-index "$root/clients/python"
for r in $(seq "$rounds"); do
  "$build/bench/denoc_client_throughput" "$target" "$urdf" 1 | sed "s/round 1/round $r/"
  "$work/venv/bin/python" "$root/bench/client_throughput.py" "$target" "$urdf" 1 | sed "s/round 1/round $r/"
done
