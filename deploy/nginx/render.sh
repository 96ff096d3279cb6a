#!/usr/bin/env bash
# Copies a front's configuration into PREFIX, a directory nginx runs in without root (nginx -p PREFIX -c
# nginx.conf), with the deployment-specific lines replaced; everything else stays as shipped. Two sites: the
# replica's front (denoc.conf, calls to denocd's unix socket; the default) and the L7 balancer (balancer.conf,
# calls to the replicas' fronts), each written as PREFIX/denoc.conf beside nginx.conf and front-server.conf.
# Used by the tests (tests/front) and by hosts that do not use the shipped paths.
#   deploy/nginx/render.sh PREFIX --listen ADDR:PORT --cert CRT --key KEY --client-ca CA
#                          [--socket PATH]                                         (the replica's front)
#                          [--site balancer --upstream ADDR:PORT... --upstream-name NAME
#                           --balancer-cert CRT --balancer-key KEY]                (the L7 balancer)
#                          [--workers N] [--access-log FILE] [--user NAME]
# (--upstream may be given once per replica; --user: the workers' user when nginx starts as root, e.g. root
# itself in a test run as root, so that they may connect to a socket only root may use)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=$1
shift
site=denoc listen=8443 socket=/run/denoc/denocd.sock cert=/etc/denoc/tls/tls.crt key=/etc/denoc/tls/tls.key
ca=/etc/denoc/tls/ca.crt workers=2 access=/dev/stdout user=''
upstream_name=denocd-headless.default.svc.cluster.local
balancer_cert=/etc/denoc/balancer-tls/tls.crt balancer_key=/etc/denoc/balancer-tls/tls.key
upstreams=()
while [ $# -gt 0 ]; do
  case $1 in
    --site) site=$2 ;;
    --listen) listen=$2 ;;
    --socket) socket=$2 ;;
    --cert) cert=$2 ;;
    --key) key=$2 ;;
    --client-ca) ca=$2 ;;
    --upstream) upstreams+=("$2") ;;
    --upstream-name) upstream_name=$2 ;;
    --balancer-cert) balancer_cert=$2 ;;
    --balancer-key) balancer_key=$2 ;;
    --workers) workers=$2 ;;
    --access-log) access=$2 ;;
    --user) user=$2 ;;
    *) echo "render.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
case $site in
  denoc | balancer) ;;
  *) echo "render.sh: --site is denoc or balancer, not '$site'" >&2; exit 2 ;;
esac
mkdir -p "$prefix"
sed -e "s|^worker_processes .*;|worker_processes $workers;|" \
    -e "s|access_log /dev/stdout denoc;|access_log $access denoc;|" "$here/nginx.conf" >"$prefix/nginx.conf"
if [ -n "$user" ]; then sed -i "1i user $user;" "$prefix/nginx.conf"; fi
sed -e "s|^ssl_certificate /etc/denoc/tls/tls.crt;|ssl_certificate $cert;|" \
    -e "s|^ssl_certificate_key /etc/denoc/tls/tls.key;|ssl_certificate_key $key;|" \
    -e "s|^ssl_client_certificate /etc/denoc/tls/ca.crt;|ssl_client_certificate $ca;|" \
    "$here/front-server.conf" >"$prefix/front-server.conf"
wanted=("listen $listen ssl http2;")
if [ "$site" = denoc ]; then
  sed -e "s|^  listen 8443 ssl http2;|  listen $listen ssl http2;|" \
      -e "s|server unix:/run/denoc/denocd.sock;|server unix:$socket;|" \
      "$here/denoc.conf" >"$prefix/denoc.conf"
  wanted+=("server unix:$socket;")
else
  servers=""
  for u in "${upstreams[@]}"; do servers+="  server $u;\n"; done
  [ -n "$servers" ] || servers="  server $upstream_name:8443;\n"
  sed -e "s|^  listen 8443 ssl http2;|  listen $listen ssl http2;|" \
      -e "s|^  server denocd-headless.default.svc.cluster.local:8443;|${servers%\\n}|" \
      -e "s|grpc_ssl_name denocd-headless.default.svc.cluster.local;|grpc_ssl_name $upstream_name;|" \
      -e "s|grpc_ssl_certificate /etc/denoc/balancer-tls/tls.crt;|grpc_ssl_certificate $balancer_cert;|" \
      -e "s|grpc_ssl_certificate_key /etc/denoc/balancer-tls/tls.key;|grpc_ssl_certificate_key $balancer_key;|" \
      -e "s|grpc_ssl_trusted_certificate /etc/denoc/tls/ca.crt;|grpc_ssl_trusted_certificate $ca;|" \
      "$here/balancer.conf" >"$prefix/denoc.conf"
  wanted+=("grpc_ssl_name $upstream_name;" "grpc_ssl_certificate $balancer_cert;"
           "grpc_ssl_certificate_key $balancer_key;" "grpc_ssl_trusted_certificate $ca;")
  for u in "${upstreams[@]}"; do wanted+=("server $u;"); done
fi
# every replaced line must have been found: a config edited out of step with this script fails here
for want in "${wanted[@]}"; do
  grep -qF "$want" "$prefix/denoc.conf" || { echo "render.sh: '$want' not set in denoc.conf" >&2; exit 1; }
done
for want in "ssl_certificate $cert;" "ssl_certificate_key $key;" "ssl_client_certificate $ca;"; do
  grep -qF "$want" "$prefix/front-server.conf" || { echo "render.sh: '$want' not set in front-server.conf" >&2; exit 1; }
done
grep -qF "worker_processes $workers;" "$prefix/nginx.conf" || { echo "render.sh: worker_processes not set" >&2; exit 1; }
