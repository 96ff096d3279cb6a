#!/usr/bin/env bash
# Makes a small private PKI for denocd in OUTDIR (default deploy/certs, ignored by git), for development,
# compose and tests: a CA (ca.crt, ca.key), a server certificate (tls.crt, tls.key), a client certificate
# for mutual TLS (client.crt, client.key) and the L7 balancer's client certificate (balancer.crt,
# balancer.key). The file names are those of a Kubernetes TLS secret (tls.crt,
# tls.key, ca.crt). The server certificate names localhost, 127.0.0.1, ::1, denocd, denocd-headless and their
# cluster names in the default namespace, plus every NAME given (a DNS name or an IP address).
# Keys are readable by their owner and, when run as root, by group 10001 (the image's denoc group), so a
# container running as the image's user can read a bind-mounted key.
# Usage: deploy/gen-certs.sh [OUTDIR] [NAME...]
set -euo pipefail
out=${1:-"$(dirname "$0")/certs"}
shift || true
command -v openssl >/dev/null || { echo "gen-certs.sh: openssl is missing (apt-get install openssl)" >&2; exit 1; }
mkdir -p "$out"
cd "$out"
umask 077

names=(localhost denocd denocd-headless denocd.default.svc denocd-headless.default.svc
       denocd.default.svc.cluster.local denocd-headless.default.svc.cluster.local "$@")
san="IP:127.0.0.1,IP:::1"
for n in "${names[@]}"; do
  if [[ $n =~ ^[0-9.]+$ || $n == *:* ]]; then san+=",IP:$n"; else san+=",DNS:$n"; fi
done

serial() { echo "0x$(openssl rand -hex 16)"; }
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

# the CA
key ca.key
openssl req -x509 -new -key ca.key -out ca.crt -days 3650 -subj "/CN=denoc development CA" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -set_serial "$(serial)"

# a certificate signed by the CA: sign NAME SUBJECT EXTENSIONS
sign() {
  key "$1.key"
  openssl req -new -key "$1.key" -out "$1.csr" -subj "$2"
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -set_serial "$(serial)" -days 825 \
    -out "$1.crt" -extfile <(printf '%s\n' "$3") 2>/dev/null
  rm -f "$1.csr"
}
sign tls "/CN=denocd" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=$san"
sign client "/CN=denoc-client" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
# the L7 balancer's client certificate for the replicas' fronts (deploy/k8s/balancer.yaml): its subject
# CN=denoc-balancer is the one they trust to name the robot
sign balancer "/CN=denoc-balancer" "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"

chmod 0644 ca.crt tls.crt client.crt balancer.crt
chmod 0640 tls.key client.key balancer.key
if [ "$(id -u)" -eq 0 ]; then chgrp 10001 tls.key client.key balancer.key; fi
echo "gen-certs.sh: wrote $(pwd)/{ca,tls,client,balancer}.{crt,key}; server names: $san"
