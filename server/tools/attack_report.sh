#!/usr/bin/env bash
# The attacks denocd must withstand, run against one denocd binary on 127.0.0.1 (a fresh server for each),
# with what the attacker got, the server's resident size and what a well-behaved client saw meanwhile:
#   idle        31 Stream calls that send nothing (h2_probe.py idle)
#   stall       31 Simulate calls on a connection granting no flow-control window (h2_probe.py stall)
#   flood       100,000 header-only calls on one connection (h2_probe.py header-flood)
#   gzip        16 gzip bombs of 60 MiB each (h2_probe.py gzip)
#   unauth      16 calls without a token announcing 60 MiB each, tokens on (h2_probe.py unauth)
#   register    4 slow registrations at once (a URDF of 6,000 fixed links) against health checks
#   reset       100,000 HEADERS+DATA+RST_STREAM on one connection (h2_probe.py rapid-reset) against a
#               client's unary calls (denoc_probe)
# The well-behaved client: denoc_probe --parts unary (200 one-state inverse-dynamics calls beside health
# checks: p50/p99, or its error) and denoc-health. Timing is reported, not judged.
#
#   server/tools/attack_report.sh build/release/server/denocd [ATTACK...] [-- DENOCD FLAGS...]
# Environment: TOOLS (denoc_probe and denoc-health; default beside the binary, in tools/), OUT (a directory
# for the servers' logs; default a temporary one).
set -euo pipefail
denocd=$(realpath "$1")
shift
attacks=()
flags=()
while [ $# -gt 0 ]; do
  if [ "$1" = -- ]; then
    shift
    flags=("$@")
    break
  fi
  attacks+=("$1")
  shift
done
[ ${#attacks[@]} -gt 0 ] || attacks=(idle stall flood gzip unauth register reset)
here=$(cd "$(dirname "$0")" && pwd)
tools=${TOOLS:-$(dirname "$denocd")/tools}
py=/usr/bin/python3
h2=$here/h2_probe.py
work=${OUT:-$(mktemp -d /tmp/denoc-attacks.XXXXXX)}
mkdir -p "$work"
pid=
cleanup() { if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null || true; fi; }
trap cleanup EXIT

start() {
  rm -rf "$work/store" "$work/port"
  # the default log level: every refused call is logged, as in a real deployment
  "$denocd" --listen 127.0.0.1:0 --port-file "$work/port" --store-dir "$work/store" --shutdown-grace-ms 0 \
    "${flags[@]}" "$@" >>"$work/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 300); do [ -s "$work/port" ] && break; sleep 0.05; done
  port=$(cat "$work/port")
}
stop() {
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=
}
rss() { awk '/VmRSS/{print $2}' "/proc/$pid/status"; }
peak() { awk '/VmHWM/{print $2}' "/proc/$pid/status"; }
mib() { awk -v k="$1" 'BEGIN{printf "%.1f", k/1024}'; }
# the error a tool printed (its first "Rpc: message" line), else its last line
failure() {
  local all
  all=$(cat)
  { echo "$all" | grep -E '^[A-Za-z]+: ' || echo "$all" | grep -vE '^$' | tail -1; } | head -1 | cut -c1-140
}
# what a well-behaved client sees: unary p50/p99 (or its error), then health
good() {
  local out
  out=$("$tools/denoc_probe" --server "127.0.0.1:$port" --iterations "${1:-200}" --parts unary 2>&1 || true)
  local line
  line=$(echo "$out" | grep -E "inverse dynamics, 1 state" | awk '{print "ID p50 " $(NF-6) " us, p99 " $(NF-5) " us"}' ||
    true)
  [ -n "$line" ] || line="failed: $(echo "$out" | failure)"
  local health
  if "$tools/denoc-health" --address "127.0.0.1:$port" --timeout-ms 3000 >/dev/null 2>&1; then
    health=SERVING
  else
    health="health exit $?"
  fi
  echo "$line; $health"
}
statuses() { "$py" -c 'import json,sys; r=json.loads(sys.stdin.read().strip().splitlines()[-1]); print(" ".join("%s x%s" % (k, v) for k, v in r["statuses"].items()) or "-", "| reset by server", r["reset_by_server"] or "-", "| GOAWAY", r["goaway"] and r["goaway"]["error_code"], "| closed", r["connection_closed"])'; }
model() { grep -o "stanford_arm (6 dof): [0-9a-f]*" "$work/server.log" | tail -1 | awk '{print $4}' || true; }
row() { printf '| %s | %s | %s | %s MiB -> %s MiB (peak %s) | %s |\n' "$1" "$2" "$3" "$4" "$5" "$6" "$7"; }

echo "denocd $denocd; load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo
echo "| attack | attacker got | server alive | server RSS | well-behaved client meanwhile |"
echo "|---|---|---|---|---|"
for attack in "${attacks[@]}"; do
  case "$attack" in
    idle | stall)
      start
      id=$(model)
      r0=$(rss)
      if [ "$attack" = idle ]; then
        "$py" "$h2" idle --port "$port" --calls 31 --hold 20 >"$work/$attack.out" 2>&1 &
      else
        "$py" "$h2" stall --port "$port" --calls 31 --hold 20 --model "$id" --dof 6 >"$work/$attack.out" 2>&1 &
      fi
      probe=$!
      for _ in $(seq 1 100); do grep -qE "^(idle|stalled)" "$work/$attack.out" && break; sleep 0.05; done
      sleep 0.5
      seen=$(good 100)
      alive=$(kill -0 "$pid" 2>/dev/null && echo yes || echo NO)
      row "31 $attack calls" "held open" "$alive" "$(mib "$r0")" "$(mib "$(rss)")" "$(mib "$(peak)")" "$seen"
      kill "$probe" 2>/dev/null || true
      wait "$probe" 2>/dev/null || true
      stop
      ;;
    flood)
      start
      r0=$(rss)
      got=$("$py" "$h2" header-flood --port "$port" --streams 100000 | statuses)
      sleep 1
      row "100,000 header-only streams" "$got" "$(kill -0 "$pid" 2>/dev/null && echo yes || echo NO)" "$(mib "$r0")" \
        "$(mib "$(rss)")" "$(mib "$(peak)")" "$(good)"
      stop
      ;;
    gzip)
      start
      r0=$(rss)
      got=$("$py" "$h2" gzip --port "$port" --calls 16 --inflated-mb 60 | statuses)
      row "16 gzip bombs (60 MiB each)" "$got" "$(kill -0 "$pid" 2>/dev/null && echo yes || echo NO)" "$(mib "$r0")" \
        "$(mib "$(rss)")" "$(mib "$(peak)")" "$(good)"
      stop
      ;;
    unauth)
      printf 'alice token-of-alice\n' >"$work/tokens"
      start --token-file "$work/tokens"
      r0=$(rss)
      got=$("$py" "$h2" unauth --port "$port" --calls 16 --mb 60 | statuses)
      row "16 calls without a token, 60 MiB each" "$got" "$(kill -0 "$pid" 2>/dev/null && echo yes || echo NO)" \
        "$(mib "$r0")" "$(mib "$(rss)")" "$(mib "$(peak)")" "(tokens on: not measured)"
      stop
      ;;
    register)
      start
      r0=$(rss)
      "$py" "$here/slow_registrations.py" --port "$port" --registrations 4 >"$work/register.out" 2>&1 ||
        true
      row "4 slow registrations at once" "$(tail -1 "$work/register.out")" \
        "$(kill -0 "$pid" 2>/dev/null && echo yes || echo NO)" "$(mib "$r0")" "$(mib "$(rss)")" "$(mib "$(peak)")" \
        "$(grep health "$work/register.out" | tail -1)"
      stop
      ;;
    reset)
      start
      id=$(model)
      r0=$(rss)
      "$tools/denoc_probe" --server "127.0.0.1:$port" --iterations 3000 --parts unary >"$work/reset-client.out" 2>&1 &
      client=$!
      sleep 0.5
      got=$("$py" "$h2" rapid-reset --port "$port" --streams 100000 --model "$id" --dof 6 | statuses)
      wait "$client" || true
      seen=$(grep -E "inverse dynamics, 1 state" "$work/reset-client.out" |
        awk '{print "ID p50 " $(NF-6) " us, p99 " $(NF-5) " us (3000 calls across the burst)"}' || true)
      [ -n "$seen" ] || seen="failed: $(failure <"$work/reset-client.out")"
      row "100,000 rapid resets" "$got" "$(kill -0 "$pid" 2>/dev/null && echo yes || echo NO)" "$(mib "$r0")" \
        "$(mib "$(rss)")" "$(mib "$(peak)")" "$seen"
      stop
      ;;
    *)
      echo "unknown attack $attack" >&2
      exit 2
      ;;
  esac
done
