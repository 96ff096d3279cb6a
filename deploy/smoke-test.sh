#!/usr/bin/env bash
# Smoke test of the denoc image: runs it with host networking on 127.0.0.1 and a free port (plaintext, which
# denocd allows on loopback), with the store in a fresh named volume, and checks
#  - start: denoc-health (inside the container) reports SERVING, and Docker's own HEALTHCHECK turns healthy;
#  - every Dynamics RPC once, with the image's own clients: RegisterModel, ListModels, GetModel,
#    InverseDynamics, ForwardDynamics, FullFactor, Simulate (the denoc CLI), Stream (denoc_probe), and
#    inverse dynamics through the server equal to the CLI's in-process answer;
#  - docker stop (SIGTERM): exit code 0 and the graceful shutdown lines in the log;
#  - a second container on the same volume finds the registered model (the store persisted), DeleteModel
#    removes it (GetModel then NOT_FOUND), and it too stops gracefully;
#  - a third one with mutual TLS and bearer tokens (certificates made now by deploy/gen-certs.sh, mounted
#    read-only as a Kubernetes TLS secret would be): its HEALTHCHECK speaks TLS, a client with the CA, a
#    client certificate and a token registers and computes, and plaintext, a missing client certificate, a
#    missing token and a wrong token are all refused; it stops gracefully;
#  - the hardened front: denocd on a unix socket in a shared volume with tokens and
#    DENOC_TRUSTED_FRONT_HEADER, nginx from the same image with the shipped configuration (deploy/nginx, only
#    the port changed): health, a registration and a computation through it with mutual TLS and a token;
#    no token, no client certificate and plaintext refused; a rapid-reset burst (5 connections) cut off by
#    nginx, and the front still answering after it;
#  - deploy/compose.yaml itself with docker-compose (this image, free ports, certificates made now): a
#    registration and a computation through the front, denocd's /metrics scraped, compose down.
# Prints a summary with the start-to-SERVING times. Exit 0 only when every step passed.
# Usage: deploy/smoke-test.sh [IMAGE]   (default denoc:latest; a Docker daemon is started if none runs)
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/docker-env.sh

image=${1:-denoc:latest}
run_id="denoc-smoke-$$"
volume="$run_id-store"
socket_volume="$run_id-socket"
container=
results=()
failures=0
work=$(mktemp -d /tmp/denoc-smoke.XXXXXX)

cleanup() {
  local c
  for c in "$run_id-1" "$run_id-2" "$run_id-3" "$run_id-4" "$run_id-5"; do docker rm -f "$c" >/dev/null 2>&1 || true; done
  docker volume rm -f "$volume" "$socket_volume" >/dev/null 2>&1 || true
  DENOC_IMAGE=$image docker-compose -p "$run_id" -f "$work/compose/compose.yaml" down -v >/dev/null 2>&1 || true
  rm -rf "$work"
  denoc_docker_down
}
trap cleanup EXIT

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
pass() { results+=("PASS  $1"); echo "PASS  $1"; }
fail() {
  results+=("FAIL  $1"); echo "FAIL  $1"; failures=$((failures + 1))
  [ -s "$work/out" ] && sed 's/^/      | /' "$work/out" | tail -n 15
  return 0
}
# step NAME COMMAND...: runs the command (output in $work/out), PASS when it exits 0
step() {
  local name=$1; shift
  if "$@" >"$work/out" 2>&1; then pass "$name"; else fail "$name (exit $?)"; fi
}
in_container() { docker exec -e DENOC_SERVER="127.0.0.1:$port" "$container" "$@"; }
cli() { in_container denoc "$@"; }

free_port() {
  local p
  for _ in $(seq 1 50); do
    p=$((20000 + RANDOM % 30000))
    # nothing answers on it
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  return 1
}

# start_container NAME [DOCKER RUN OPTIONS...]: runs it, waits for SERVING; sets container, t_serving (s from
# docker run), t_process
start_container() {
  container=$1
  shift
  local t0 t1 ok=0
  t0=$(now)
  docker run -d --name "$container" --network host \
    -e DENOC_LISTEN="127.0.0.1:$port" -e DENOC_SHUTDOWN_GRACE_MS=500 -e DENOC_DRAIN_TIMEOUT_MS=5000 \
    --health-interval 1s --health-timeout 5s --health-retries 3 \
    -v "$volume:/var/lib/denoc/store" "$@" "$image" >/dev/null
  for _ in $(seq 1 600); do
    if docker exec "$container" denoc-health --quiet >/dev/null 2>&1; then ok=1; break; fi
    if [ "$(docker inspect -f '{{.State.Running}}' "$container")" != true ]; then break; fi
    sleep 0.05
  done
  t1=$(now)
  t_serving=$(elapsed "$t0" "$t1")
  # process start (Docker's StartedAt) to the server's "SERVING" log line, both UTC
  local started logged
  started=$(docker inspect -f '{{.State.StartedAt}}' "$container")
  logged=$(docker logs "$container" 2>&1 | grep -m1 'SERVING' | sed -E 's/^([0-9-]+T[0-9:.]+) .*/\1/')
  t_process=$(/usr/bin/env python3 - "$started" "$logged" 2>/dev/null <<'EOF' || echo "?"
import sys
from datetime import datetime
a = datetime.fromisoformat(sys.argv[1][:26].rstrip("Z"))
b = datetime.fromisoformat(sys.argv[2])
print(f"{(b - a).total_seconds():.3f}")
EOF
)
  [ "$ok" = 1 ]
}

# wait_healthy: waits up to 30 s for Docker's HEALTHCHECK to report healthy; sets healthy, the probe's log in out
wait_healthy() {
  healthy=
  for _ in $(seq 1 60); do
    healthy=$(docker inspect -f '{{.State.Health.Status}}' "$container")
    [ "$healthy" = healthy ] && break
    sleep 0.5
  done
  docker inspect -f '{{range .State.Health.Log}}{{.ExitCode}} {{.Output}}{{end}}' "$container" >"$work/out"
}

# stop_container: docker stop (SIGTERM), then exit code 0 and the graceful lines
stop_container() {
  local t0 t1 code logs
  t0=$(now)
  docker stop -t 30 "$container" >/dev/null
  t1=$(now)
  t_stop=$(elapsed "$t0" "$t1")
  code=$(docker inspect -f '{{.State.ExitCode}}' "$container")
  logs=$(docker logs "$container" 2>&1)
  {
    echo "exit code $code, stopped in $t_stop s"
    echo "$logs" | tail -n 4
  } >"$work/out"
  [ "$code" = 0 ] &&
    grep -q 'SIGTERM received: NOT_SERVING' <<<"$logs" &&
    grep -q 'denocd stopped' <<<"$logs"
}

denoc_docker_up
docker image inspect "$image" >/dev/null 2>&1 || { echo "smoke-test: no image $image (deploy/build-image.sh)" >&2; exit 1; }
port=$(free_port)
size=$(docker image inspect -f '{{.Size}}' "$image")
echo "smoke-test: $image ($((size / 1000000)) MB), 127.0.0.1:$port, volume $volume"

# ---- first container --------------------------------------------------------------------------------------------
if start_container "$run_id-1"; then
  pass "start: SERVING after $t_serving s (process start to SERVING log line: $t_process s)"
  t_serving_1=$t_serving t_process_1=$t_process
else
  docker logs "$container" >"$work/out" 2>&1 || true
  fail "start: not SERVING"
  echo "smoke-test: the server did not start; stopping here" >&2
  exit 1
fi
wait_healthy
if [ "$healthy" = healthy ]; then pass "HEALTHCHECK (denoc-health): healthy"; else fail "HEALTHCHECK: $healthy"; fi

# RegisterModel: the planar arm with standard gravity (another id than the pinned built-in one's 9.81)
model=/usr/share/denoc/models/planar_3r.json
if cli register "$model" --gravity 0,-9.80665,0 --name smoke_planar -q >"$work/out" 2>&1 &&
  id=$(tail -n 1 "$work/out") && [[ $id =~ ^[0-9a-f]{64}$ ]]; then
  pass "RegisterModel: $id"
else
  fail "RegisterModel"
  id=none
fi
step "ListModels: the registered model and the examples" \
  bash -c "docker exec -e DENOC_SERVER=127.0.0.1:$port $container denoc list | tee /dev/stderr | grep -q $id"
step "GetModel" bash -c "docker exec -e DENOC_SERVER=127.0.0.1:$port $container denoc get $id | tee /dev/stderr | grep -q smoke_planar"
step "InverseDynamics" cli id "$id" --q=0.3,-0.2,0.1 --qd=0.1,0.2,0.3 --qdd=1,0,-1
step "ForwardDynamics (Saha, Fixman, Cholesky)" bash -c "
  for r in saha fixman cholesky; do
    docker exec -e DENOC_SERVER=127.0.0.1:$port $container denoc fd $id --q=0.3,-0.2,0.1 --qd=0.1,0.2,0.3 --tau=1,2,3 --route \$r || exit 1
  done"
step "FullFactor" cli factor "$id" --q=0.3,-0.2,0.1 --inverse
if cli simulate "$id" --t-end 0.05 --q0=0.3,-0.2,0.1 --no-progress >"$work/out" 2>&1 &&
  [ "$(wc -l <"$work/out")" -eq 7 ]; then
  pass "Simulate: 6 samples streamed"
else
  fail "Simulate"
fi
if in_container denoc_probe --server "127.0.0.1:$port" --iterations 20 >"$work/out" 2>&1 &&
  grep -q 'Stream round trip' "$work/out"; then
  pass "Stream (denoc_probe): $(grep 'Stream round trip' "$work/out")"
else
  fail "Stream (denoc_probe)"
fi
# the server's answer equals the in-process core's (the CLI's local mode) on the built-in Stanford arm
q=--q=0.1,0.7,0.05,-0.4,0.9,0.2
# (CSV: one line per state, q, qd, qdd and the 6 torques last)
tau() { tail -n +2 | awk -F, '{ for (i = NF - 5; i <= NF; i++) print $i }'; }
remote=$(cli id stanford_arm "$q" --qd=0.2,0.1,0.3,0,0.1,0.2 --format csv 2>&1 | tau)
local_=$(docker exec "$container" denoc id /usr/share/denoc/models/stanford_arm.json "$q" \
  --qd=0.2,0.1,0.3,0,0.1,0.2 --format csv 2>&1 | tau)
printf 'remote:\n%s\nlocal:\n%s\n' "$remote" "$local_" >"$work/out"
if [ "$(grep -c . <<<"$remote")" = 6 ] && [ "$(grep -c . <<<"$local_")" = 6 ] && awk 'NR==FNR { r[FNR] = $1; n = FNR; next }
      { d = r[FNR] - $1; s = ($1 < 0 ? -$1 : $1) + 1; if ((d < 0 ? -d : d) > 1e-12 * s) bad = 1 }
      END { exit (bad || n != FNR) }' <(echo "$remote") <(echo "$local_"); then
  pass "InverseDynamics through the server equals the in-process answer (6 torques, 1e-12)"
else
  fail "InverseDynamics remote vs in-process"
fi
if stop_container; then
  pass "SIGTERM: exit code 0, NOT_SERVING then 'denocd stopped', in $t_stop s"
  t_stop_1=$t_stop
else
  fail "SIGTERM: graceful shutdown"
fi

# ---- second container, same volume ------------------------------------------------------------------------------
if start_container "$run_id-2"; then
  pass "restart on the same volume: SERVING after $t_serving s (process: $t_process s)"
else
  docker logs "$container" >"$work/out" 2>&1 || true
  fail "restart: not SERVING"
fi
step "GetModel after the restart: the store kept the model" cli get "$id"
step "DeleteModel" cli delete "$id"
if cli get "$id" >"$work/out" 2>&1; then
  fail "GetModel after DeleteModel: still there"
elif grep -q NOT_FOUND "$work/out"; then
  pass "GetModel after DeleteModel: NOT_FOUND"
else
  fail "GetModel after DeleteModel: not NOT_FOUND"
fi
if stop_container; then pass "SIGTERM again: exit code 0, graceful, in $t_stop s"; else fail "SIGTERM again"; fi

# ---- third container: mutual TLS and bearer tokens -----------------------------------------------------------
certs=$work/certs
chmod 0755 "$work"  # the image's user (10001) reads the mounted files
deploy/gen-certs.sh "$certs" >"$work/out" 2>&1 || fail "gen-certs.sh"
token=$(openssl rand -hex 24)
printf 'smoke %s\n' "$token" >"$work/tokens"
printf '%s\n' "$token" >"$work/token"
printf '%s\n' "$(openssl rand -hex 24)" >"$work/wrong-token"
chmod 0644 "$work/tokens" "$work/token" "$work/wrong-token"
tls=/etc/denoc/tls
if start_container "$run_id-3" -v "$certs:$tls:ro" -v "$work/tokens:/etc/denoc/tokens:ro" \
  -v "$work/token:/tmp/token:ro" -v "$work/wrong-token:/tmp/wrong-token:ro" \
  -e DENOC_TLS_CERT=$tls/tls.crt -e DENOC_TLS_KEY=$tls/tls.key -e DENOC_TLS_CLIENT_CA=$tls/ca.crt \
  -e DENOC_TOKEN_FILE=/etc/denoc/tokens \
  -e DENOC_HEALTH_TLS_CA=$tls/ca.crt -e DENOC_HEALTH_TLS_CERT=$tls/client.crt \
  -e DENOC_HEALTH_TLS_KEY=$tls/client.key; then
  pass "mutual TLS and tokens: SERVING (denoc-health over TLS with a client certificate) after $t_serving s"
else
  docker logs "$container" >"$work/out" 2>&1 || true
  fail "mutual TLS and tokens: not SERVING"
fi
wait_healthy
if [ "$healthy" = healthy ]; then pass "HEALTHCHECK over mutual TLS: healthy"; else fail "HEALTHCHECK over TLS: $healthy"; fi
secure=(--tls-ca "$tls/ca.crt" --tls-cert "$tls/client.crt" --tls-key "$tls/client.key")
if cli "${secure[@]}" --token-file /tmp/token register "$model" --name smoke_tls -q >"$work/out" 2>&1 &&
  tls_id=$(tail -n 1 "$work/out") && [[ $tls_id =~ ^[0-9a-f]{64}$ ]]; then
  pass "RegisterModel over mutual TLS with a token: $tls_id"
else
  fail "RegisterModel over mutual TLS with a token"
  tls_id=none
fi
step "InverseDynamics over mutual TLS with a token" \
  cli "${secure[@]}" --token-file /tmp/token id "$tls_id" --q=0.3,-0.2,0.1 --qd=0.1,0.2,0.3 --qdd=1,0,-1
# refused: expect_refusal NAME PATTERN COMMAND...: the command must fail and its output match PATTERN
expect_refusal() {
  local name=$1 pattern=$2
  shift 2
  if "$@" >"$work/out" 2>&1; then
    fail "$name: answered"
  elif grep -Eq "$pattern" "$work/out"; then
    pass "$name: refused ($(grep -Eo "$pattern" "$work/out" | head -n 1))"
  else
    fail "$name: refused, but not with $pattern"
  fi
}
expect_refusal "no token" UNAUTHENTICATED cli "${secure[@]}" list
expect_refusal "wrong token" UNAUTHENTICATED cli "${secure[@]}" --token-file /tmp/wrong-token list
expect_refusal "no client certificate" UNAVAILABLE cli --tls-ca "$tls/ca.crt" --token-file /tmp/token list
expect_refusal "plaintext" UNAVAILABLE cli --token-file /tmp/token list
if stop_container; then pass "SIGTERM (TLS): exit code 0, graceful, in $t_stop s"; else fail "SIGTERM (TLS)"; fi

# ---- the hardened front: nginx (same image) before denocd on a unix socket in a shared volume ------------------
# the shipped configuration with only the port changed (host networking: a free port, not 8443)
front_port=$(free_port)
deploy/nginx/render.sh "$work/front" --listen "127.0.0.1:$front_port" >"$work/out" 2>&1 || fail "render.sh"
chmod -R a+rX "$work/front"
docker volume create "$socket_volume" >/dev/null
if start_container "$run_id-4" -v "$socket_volume:/run/denoc" -v "$certs:$tls:ro" \
  -v "$work/tokens:/etc/denoc/tokens:ro" -v "$work/token:/tmp/token:ro" \
  -e DENOC_LISTEN=unix:/run/denoc/denocd.sock -e DENOC_TRUSTED_FRONT_HEADER=true \
  -e DENOC_TOKEN_FILE=/etc/denoc/tokens -e DENOC_HEALTH_ADDRESS=unix:/run/denoc/denocd.sock; then
  pass "denocd on a unix socket: SERVING (denoc-health on the socket) after $t_serving s"
else
  docker logs "$container" >"$work/out" 2>&1 || true
  fail "denocd on a unix socket: not SERVING"
fi
docker run -d --name "$run_id-5" --network host -v "$socket_volume:/run/denoc" -v "$certs:$tls:ro" \
  -v "$work/front:/etc/denoc/nginx-smoke:ro" --read-only --tmpfs /tmp:uid=10001,gid=10001 \
  -e DENOC_FRONT_CONF=/etc/denoc/nginx-smoke/nginx.conf --entrypoint denoc-front "$image" >/dev/null
port=$front_port
front_ok=0
for _ in $(seq 1 100); do
  if docker exec "$container" denoc-health --quiet --address "127.0.0.1:$port" --tls-ca "$tls/ca.crt" \
    --tls-cert "$tls/client.crt" --tls-key "$tls/client.key" >/dev/null 2>&1; then front_ok=1; break; fi
  sleep 0.1
done
if [ "$front_ok" = 1 ]; then pass "front: SERVING through nginx with mutual TLS"; else
  docker logs "$run_id-5" >"$work/out" 2>&1 || true
  fail "front: not SERVING through nginx"
fi
if cli "${secure[@]}" --token-file /tmp/token register "$model" --name smoke_front -q >"$work/out" 2>&1 &&
  front_id=$(tail -n 1 "$work/out") && [[ $front_id =~ ^[0-9a-f]{64}$ ]]; then
  pass "RegisterModel through the front (mutual TLS, token): $front_id"
else
  fail "RegisterModel through the front"
  front_id=none
fi
step "InverseDynamics through the front" \
  cli "${secure[@]}" --token-file /tmp/token id "$front_id" --q=0.3,-0.2,0.1 --qd=0.1,0.2,0.3 --qdd=1,0,-1
expect_refusal "front: no token" UNAUTHENTICATED cli "${secure[@]}" list
expect_refusal "front: no client certificate" "UNAVAILABLE|UNKNOWN|INTERNAL" \
  cli --tls-ca "$tls/ca.crt" --token-file /tmp/token list
expect_refusal "front: plaintext" UNAVAILABLE cli --token-file /tmp/token list
# rapid reset (CVE-2023-44487) from this host: nginx ends every connection long before its 100,000 streams
if /usr/bin/python3 tests/front/h2_rapid_reset_tls.py --port "$port" --ca "$certs/ca.crt" \
  --cert "$certs/client.crt" --key "$certs/client.key" --token "$token" --connections 5 >"$work/reset" 2>&1 &&
  /usr/bin/python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))
sys.exit(0 if r["cut_off"] == len(r["connections"]) == 5 else 1)' "$work/reset"; then
  pass "front: rapid reset cut off ($(head -c 120 "$work/reset")...)"
else
  cp "$work/reset" "$work/out"
  fail "front: rapid reset not cut off"
fi
sleep 3  # the attack spent the certificate's burst of calls (limit_req, per certificate): let it refill
step "front: answers after the rapid reset" cli "${secure[@]}" --token-file /tmp/token get "$front_id"
docker stop -t 20 "$run_id-5" >/dev/null 2>&1 || true
if stop_container; then pass "SIGTERM (behind the front): exit code 0, graceful"; else fail "SIGTERM (front)"; fi

# ---- deploy/compose.yaml itself, run by docker-compose: through the front, metrics scraped --------------------
compose_dir=$work/compose
mkdir -p "$compose_dir"
cp deploy/compose.yaml "$compose_dir/"
deploy/gen-certs.sh "$compose_dir/certs" >/dev/null 2>&1
chmod -R a+rX "$compose_dir/certs"
compose_port=$(free_port)
metrics_port=$(free_port)
compose() {
  DENOC_IMAGE=$image DENOC_FRONT_PORT=$compose_port DENOC_METRICS_PORT=$metrics_port \
    docker-compose -p "$run_id" -f "$compose_dir/compose.yaml" "$@"
}
# the client: the image's CLI on the host network with the compose certificates
compose_cli() {
  docker run --rm --network host -v "$compose_dir/certs:/certs:ro" --entrypoint denoc "$image" \
    --server "127.0.0.1:$compose_port" --tls-ca /certs/ca.crt --tls-cert /certs/client.crt \
    --tls-key /certs/client.key "$@"
}
t0=$(now)
if compose up -d --no-build >"$work/out" 2>&1; then
  compose_ok=0
  for _ in $(seq 1 300); do
    if compose_cli list >/dev/null 2>&1; then compose_ok=1; break; fi
    sleep 0.2
  done
  if [ "$compose_ok" = 1 ]; then
    pass "compose: denocd and the front up, ListModels through the front after $(elapsed "$t0" "$(now)") s"
  else
    compose logs >"$work/out" 2>&1 || true
    fail "compose: no answer through the front"
  fi
else
  fail "compose up"
fi
if compose_cli register "$model" --name smoke_compose -q >"$work/out" 2>&1 &&
  compose_id=$(tail -n 1 "$work/out") && [[ $compose_id =~ ^[0-9a-f]{64}$ ]]; then
  pass "compose: RegisterModel through the front: $compose_id"
else
  fail "compose: RegisterModel through the front"
  compose_id=none
fi
step "compose: InverseDynamics through the front" \
  compose_cli id "$compose_id" --q=0.3,-0.2,0.1 --qd=0.1,0.2,0.3 --qdd=1,0,-1
# the scrape: denocd's /metrics, published on this host's loopback, counts the calls
if /usr/bin/python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
  "http://127.0.0.1:$metrics_port/metrics" >"$work/metrics" 2>"$work/out" &&
  grep -q 'denoc_requests_total{code="OK",rpc="RegisterModel"}' "$work/metrics" &&
  grep -q 'denoc_requests_total{code="OK",rpc="InverseDynamics"}' "$work/metrics"; then
  pass "compose: /metrics scraped ($(grep -c '^denoc_' "$work/metrics") samples; RegisterModel and InverseDynamics counted)"
else
  cp "$work/metrics" "$work/out" 2>/dev/null || true
  fail "compose: /metrics"
fi
if compose down --timeout 25 >"$work/out" 2>&1; then pass "compose down: both services stopped"; else
  fail "compose down"; fi

echo
echo "== smoke test of $image =="
printf '%s\n' "${results[@]}"
echo "image size: $((size / 1000000)) MB; start to SERVING: ${t_serving_1:-?} s from docker run," \
  "${t_process_1:-?} s from process start; graceful stop: ${t_stop_1:-?} s"
echo "$(( ${#results[@]} - failures )) passed, $failures failed"
[ "$failures" -eq 0 ]
