#!/usr/bin/env bash
# Load and soak tests of a real denocd on 127.0.0.1, every answer checked (server/tools/denoc_load).
#
#   tests/server/load.sh [BUILD_DIR] [SECONDS] [CLIENTS]            # load: default 60 s, 8 clients
#   SOAK=1 tests/server/load.sh [BUILD_DIR] [SECONDS] [CLIENTS]     # soak: default 600 s; fails when the
#                                                                   # server's RSS grows > 5% after warm-up
# Starts its own denocd (port 0, a temporary store), stops it with SIGTERM at the end and checks it exits 0.
# Exits non-zero on any error, wrong answer, RSS growth over the bound (soak) or an unclean shutdown.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build/release}"
soak="${SOAK:-0}"
if [ "$soak" = 1 ]; then seconds="${2:-600}"; else seconds="${2:-60}"; fi
clients="${3:-8}"
work="$(mktemp -d)"
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

"$build/server/denocd" --listen 127.0.0.1:0 --port-file "$work/port" --store-dir "$work/store" \
  --log-level warn --shutdown-grace-ms 0 >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 300); do [ -s "$work/port" ] && break; sleep 0.1; done
[ -s "$work/port" ] || { echo "denocd did not start"; cat "$work/server.log"; exit 1; }
port="$(cat "$work/port")"

extra=()
if [ "$soak" = 1 ]; then
  extra=(--warmup-seconds 60 --sample-seconds 30 --max-rss-growth 0.05)
else
  extra=(--warmup-seconds 10 --sample-seconds 10)
fi
status=0
"$build/server/tools/denoc_load" --server "127.0.0.1:$port" --seconds "$seconds" --clients "$clients" \
  --server-pid "$server_pid" "${extra[@]}" || status=$?

kill -TERM "$server_pid"
code=0
wait "$server_pid" || code=$?
server_pid=
if [ "$code" -ne 0 ]; then
  echo "denocd exited $code after SIGTERM"; tail -n 20 "$work/server.log"; exit 1
fi
if grep -q " error \| critical " "$work/server.log"; then
  echo "denocd logged errors:"; grep " error \| critical " "$work/server.log" | head; exit 1
fi
echo "denocd stopped cleanly (exit 0)"
exit "$status"
