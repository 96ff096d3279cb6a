#!/usr/bin/env bash
# Copies the front's configuration (nginx.conf, denoc.conf beside this script) into PREFIX, a directory nginx
# runs in without root (nginx -p PREFIX -c nginx.conf), with the deployment-specific lines replaced: the
# address listened on, the certificate files and denocd's socket. Everything else stays as shipped. Used by
# the tests (tests/front) and by hosts that do not use the shipped paths.
#   deploy/nginx/render.sh PREFIX --listen ADDR:PORT --socket PATH --cert CRT --key KEY --client-ca CA
#                          [--workers N] [--access-log FILE] [--user NAME]
# (--user: the workers' user when nginx starts as root, e.g. root itself in a test run as root, so that they
# may connect to a socket only root may use)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=$1
shift
listen=8443 socket=/run/denoc/denocd.sock cert=/etc/denoc/tls/tls.crt key=/etc/denoc/tls/tls.key
ca=/etc/denoc/tls/ca.crt workers=2 access=/dev/stdout user=
while [ $# -gt 0 ]; do
  case $1 in
    --listen) listen=$2 ;;
    --socket) socket=$2 ;;
    --cert) cert=$2 ;;
    --key) key=$2 ;;
    --client-ca) ca=$2 ;;
    --workers) workers=$2 ;;
    --access-log) access=$2 ;;
    --user) user=$2 ;;
    *) echo "render.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
mkdir -p "$prefix"
sed -e "s|^worker_processes .*;|worker_processes $workers;|" \
    -e "s|access_log /dev/stdout denoc;|access_log $access denoc;|" "$here/nginx.conf" >"$prefix/nginx.conf"
if [ -n "$user" ]; then sed -i "1i user $user;" "$prefix/nginx.conf"; fi
sed -e "s|^  listen 8443 ssl http2;|  listen $listen ssl http2;|" \
    -e "s|server unix:/run/denoc/denocd.sock;|server unix:$socket;|" \
    -e "s|ssl_certificate /etc/denoc/tls/tls.crt;|ssl_certificate $cert;|" \
    -e "s|ssl_certificate_key /etc/denoc/tls/tls.key;|ssl_certificate_key $key;|" \
    -e "s|ssl_client_certificate /etc/denoc/tls/ca.crt;|ssl_client_certificate $ca;|" \
    "$here/denoc.conf" >"$prefix/denoc.conf"
# every replaced line must have been found: a config edited out of step with this script fails here
for want in "listen $listen ssl http2;" "server unix:$socket;" "ssl_certificate $cert;" \
            "ssl_certificate_key $key;" "ssl_client_certificate $ca;"; do
  grep -qF "$want" "$prefix/denoc.conf" || { echo "render.sh: '$want' not set in denoc.conf" >&2; exit 1; }
done
grep -qF "worker_processes $workers;" "$prefix/nginx.conf" || { echo "render.sh: worker_processes not set" >&2; exit 1; }
