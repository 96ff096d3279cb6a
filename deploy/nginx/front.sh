#!/bin/sh
# The front's process: nginx in the foreground, reloaded when its TLS files change, so that a rotated
# certificate, key or client CA serves the connections made after it while calls in flight finish on the old
# workers, and (the L7 balancer, balancer.conf) when the addresses of the replicas' name change, so that a
# new replica gets calls and a removed one none (nginx's reload: the master reads the configuration and the files again and keeps the old workers
# when they do not load, e.g. a certificate whose key is not there yet). A Kubernetes secret volume swaps its
# files in one rename; the kubelet does it within its sync period (about a minute).
#   deploy/nginx/front.sh                    # the image's command for the front (docs/service.md, "The front")
# Environment:
#   DENOC_FRONT_PREFIX    nginx's prefix (-p), default /tmp/
#   DENOC_FRONT_CONF      its configuration (-c), default /etc/denoc/nginx/nginx.conf
#   DENOC_FRONT_WATCH     the files whose change reloads it, default the TLS secret's three files
#   DENOC_FRONT_WATCH_HOSTS  names whose addresses reload it when they change (the balancer: the replicas'
#                         headless Service), default none
#   DENOC_FRONT_RELOAD_S  seconds between looks at them, default 10 (0: never reload)
# Signals: TERM and QUIT end nginx gracefully (QUIT: calls in flight finish), HUP reloads it now; the script
# ends with nginx's exit status.
set -eu
prefix=${DENOC_FRONT_PREFIX:-/tmp/}
conf=${DENOC_FRONT_CONF:-/etc/denoc/nginx/nginx.conf}
watch=${DENOC_FRONT_WATCH:-/etc/denoc/tls/tls.crt /etc/denoc/tls/tls.key /etc/denoc/tls/ca.crt}
hosts=${DENOC_FRONT_WATCH_HOSTS:-}
interval=${DENOC_FRONT_RELOAD_S:-10}
case $interval in
  '' | *[!0-9]*) echo "front.sh: DENOC_FRONT_RELOAD_S must be a whole number of seconds, not '$interval'" >&2; exit 2 ;;
esac

# what the watched files hold now (their contents, not their times: a secret's swap keeps old times), and
# the watched names' addresses, sorted
fingerprint() {
  {
    # shellcheck disable=SC2086 # the lists are split on purpose
    cat $watch 2>/dev/null
    for h in $hosts; do getent ahosts "$h" | awk '{ print $1 }' | sort -u; done
  } | cksum
}

nginx -p "$prefix" -c "$conf" -g 'daemon off;' &
nginx_pid=$!
trap 'kill -QUIT "$nginx_pid" 2>/dev/null || true' TERM QUIT INT
trap 'kill -HUP "$nginx_pid" 2>/dev/null || true' HUP

if [ "$interval" -gt 0 ]; then
  seen=$(fingerprint)
  while kill -0 "$nginx_pid" 2>/dev/null; do
    # a sleep that a signal interrupts: the traps run at once, not after the sleep
    sleep "$interval" &
    wait $! 2>/dev/null || true
    now=$(fingerprint)
    if [ "$now" != "$seen" ] && kill -0 "$nginx_pid" 2>/dev/null; then
      echo "front.sh: the TLS files or the watched names' addresses changed; reloading nginx" >&2
      kill -HUP "$nginx_pid"
      seen=$now
    fi
  done
fi
# nginx's status; a wait interrupted by a trapped signal is repeated until nginx has ended
status=0
while :; do
  wait "$nginx_pid" && status=0 || status=$?
  kill -0 "$nginx_pid" 2>/dev/null || break
done
exit "$status"
