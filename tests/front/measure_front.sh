#!/usr/bin/env bash
# What the front costs and what it stops, measured on this machine (timing reported, never judged):
#  - latency of one client (good_client, every answer checked against the core in its process): unary 7-DOF
#    inverse dynamics of one state, a Stream round trip, a 10,000-state batch; directly to denocd on
#    127.0.0.1 (plaintext), on its unix socket, and through nginx with mutual TLS;
#  - rapid reset (tests/front/h2_rapid_reset_tls.py with another robot's certificate from the same address,
#    CONNECTIONS x 100,000 streams) through
#    the front while good_client calls through it: peak resident size of denocd and of nginx (master and
#    workers), the client's calls, failures and p50/p99.
#   tests/front/measure_front.sh BUILD_DIR [SECONDS] [CONNECTIONS]
set -euo pipefail
build=$(realpath "$1")
seconds=${2:-10}
connections=${3:-200}
src=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/denoc-front-measure.XXXXXX)
pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
good=$build/tests/hostile/good_client
"$src/deploy/gen-certs.sh" "$work/certs" >/dev/null 2>&1
# the attacker: another robot of the fleet, with a certificate of its own from the same CA (the front's limits
# are per certificate subject)
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=denoc-attacker" \
  -keyout "$work/certs/attacker.key" -out "$work/certs/attacker.csr" 2>/dev/null
printf 'extendedKeyUsage=clientAuth\n' >"$work/certs/attacker.ext"
openssl x509 -req -in "$work/certs/attacker.csr" -CA "$work/certs/ca.crt" -CAkey "$work/certs/ca.key" \
  -CAcreateserial -out "$work/certs/attacker.crt" -days 2 -extfile "$work/certs/attacker.ext" 2>/dev/null
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
user=()
[ "$(id -u)" -ne 0 ] || user=(--user root)
"$src/deploy/nginx/render.sh" "$work/nginx" --listen "127.0.0.1:$port" --socket "$work/denocd.sock" \
  --cert "$work/certs/tls.crt" --key "$work/certs/tls.key" --client-ca "$work/certs/ca.crt" \
  --access-log "$work/nginx/access.log" "${user[@]}"
"$build/server/denocd" --listen "unix:$work/denocd.sock" --trusted-front-header --store-dir "$work/s1" \
  >"$work/denocd.log" 2>&1 &
pids+=($!)
denocd=$!
"$build/server/denocd" --listen 127.0.0.1:0 --port-file "$work/tcp.port" --store-dir "$work/s2" \
  >"$work/denocd-tcp.log" 2>&1 &
pids+=($!)
nginx -p "$work/nginx/" -c nginx.conf -g 'daemon off;' >"$work/nginx.log" 2>&1 &
pids+=($!)
nginx_master=$!
for _ in $(seq 1 200); do [ -S "$work/denocd.sock" ] && [ -s "$work/tcp.port" ] && break; sleep 0.05; done
sleep 0.5
tls=(--tls-ca "$work/certs/ca.crt" --tls-cert "$work/certs/client.crt" --tls-key "$work/certs/client.key")
echo "load before: $(cat /proc/loadavg)"
echo "| path | unary 1 state p50 / p99 (us) | Stream round trip p50 / p99 (us) | 10,000-state batch p50 / p99 (us) |"
echo "|---|---|---|---|"
for path in tcp unix front; do
  case $path in
    tcp) target=(--address "127.0.0.1:$(cat "$work/tcp.port")") ;;
    unix) target=(--address "unix:$work/denocd.sock") ;;
    front) target=(--address "127.0.0.1:$port" "${tls[@]}") ;;
  esac
  row="| $path"
  # 2 ms between calls: within the front's 500 calls a second per certificate (limit_req)
  for mode in "--pause-ms 2" "--stream 1 --pause-ms 2" "--states 10000 --pause-ms 2"; do
    # shellcheck disable=SC2086
    r=$("$good" "${target[@]}" --seconds "$seconds" $mode 2>/dev/null)
    row+=$(echo "$r" | /usr/bin/python3 -c 'import json, sys; r = json.load(sys.stdin)
print(" | %d / %d (%d calls, %d failed, %d wrong)" % (r["p50_us"], r["p99_us"], r["calls"], r["failed"], r["wrong"]), end="")')
  done
  echo "$row |"
done
rss_tree() {  # resident KiB of a process and its children
  local total=0 p
  for p in $1 $(pgrep -P "$1" || true); do
    total=$((total + $(awk '/^VmRSS/ { print $2 }' "/proc/$p/status" 2>/dev/null || echo 0)))
  done
  echo "$total"
}
d0=$(rss_tree "$denocd")
n0=$(rss_tree "$nginx_master")
"$good" --address "127.0.0.1:$port" "${tls[@]}" --seconds 600 --stop-file "$work/stop" >"$work/good.json" &
gpid=$!
sleep 1
/usr/bin/python3 "$src/tests/front/h2_rapid_reset_tls.py" --port "$port" --ca "$work/certs/ca.crt" \
  --cert "$work/certs/attacker.crt" --key "$work/certs/attacker.key" --source 127.0.0.1 \
  --connections "$connections" >"$work/reset.json" &
rpid=$!
dpeak=$d0 npeak=$n0
while kill -0 "$rpid" 2>/dev/null; do
  d=$(rss_tree "$denocd"); n=$(rss_tree "$nginx_master")
  [ "$d" -gt "$dpeak" ] && dpeak=$d
  [ "$n" -gt "$npeak" ] && npeak=$n
  sleep 0.05
done
touch "$work/stop"
wait "$gpid"
/usr/bin/python3 - "$work/reset.json" "$work/good.json" "$d0" "$dpeak" "$n0" "$npeak" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); g = json.load(open(sys.argv[2]))
taken = sum((c["goaway"]["last_stream_id"] + 1) // 2 for c in r["connections"] if c.get("goaway"))
secs = sum(c.get("seconds", 0) for c in r["connections"])
print("rapid reset through the front: %d connections, %d streams written in %.1f s, %d taken by nginx, %d cut off"
      % (len(r["connections"]), r["streams_sent"], secs, taken, r["cut_off"]))
print("denocd RSS %d -> peak %d KiB; nginx (master + workers) %d -> peak %d KiB" % tuple(map(int, sys.argv[3:7])))
print("well-behaved client through the front meanwhile: %d calls, %d failed, %d wrong, p50 %d us, p99 %d us"
      % (g["calls"], g["failed"], g["wrong"], g["p50_us"], g["p99_us"]))
PY
echo "access log: $(awk '{ print $(NF-4) }' "$work/nginx/access.log" | sort | uniq -c | tr '\n' ' ')"
echo "load after: $(cat /proc/loadavg)"
