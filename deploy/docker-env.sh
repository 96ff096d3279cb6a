# shellcheck shell=bash
# Sourced by the container scripts (bash): makes a Docker daemon available in this shell.
#   denoc_docker_up   uses the daemon DOCKER_HOST (or the default socket) points to when it answers; otherwise
#                     installs Debian's docker.io if needed and starts dockerd by hand (no bridge, no
#                     iptables: containers use host networking; overlay2 storage, vfs when overlay2 does not
#                     work here), with its state under DENOC_DOCKER_ROOT (default /var/tmp/denoc-docker) so
#                     that images survive between runs; exports DOCKER_HOST. A daemon started here is stopped
#                     by denoc_docker_down (call it from an EXIT trap); one found running is left alone.
#   denoc_apt_install PKG...   apt-get install as root or through sudo.
# Needs root (dockerd) unless a daemon already runs.

denoc_apt_install() {
  local sudo=
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "$@" >/dev/null ||
    { DEBIAN_FRONTEND=noninteractive $sudo apt-get update -q >/dev/null &&
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "$@" >/dev/null; }
}

DENOC_DOCKERD_STARTED=
DENOC_DOCKERD_ROOT=

denoc_docker_up() {
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    return 0
  fi
  command -v dockerd >/dev/null 2>&1 || { echo "docker-env: installing docker.io" >&2; denoc_apt_install docker.io; }
  local root=${DENOC_DOCKER_ROOT:-/var/tmp/denoc-docker}
  DENOC_DOCKERD_ROOT=$root
  mkdir -p "$root/data" "$root/exec"
  export DOCKER_HOST="unix://$root/docker.sock"
  if docker info >/dev/null 2>&1; then
    return 0  # started earlier from this root and still running
  fi
  local driver
  for driver in ${DENOC_DOCKER_STORAGE:-overlay2 vfs}; do
    echo "docker-env: starting dockerd ($driver storage, state in $root)" >&2
    dockerd --data-root "$root/data" --exec-root "$root/exec" -H "$DOCKER_HOST" --pidfile "$root/dockerd.pid" \
      --iptables=false --ip6tables=false --bridge=none --storage-driver="$driver" \
      >"$root/dockerd.log" 2>&1 &
    DENOC_DOCKERD_STARTED=$!
    for _ in $(seq 1 60); do
      if docker info >/dev/null 2>&1; then return 0; fi
      kill -0 "$DENOC_DOCKERD_STARTED" 2>/dev/null || break
      sleep 0.5
    done
    echo "docker-env: dockerd did not start with $driver storage; its log:" >&2
    tail -n 5 "$root/dockerd.log" >&2
    denoc_docker_down
  done
  return 1
}

denoc_docker_down() {
  if [ -n "$DENOC_DOCKERD_STARTED" ]; then
    kill "$DENOC_DOCKERD_STARTED" 2>/dev/null || true
    for _ in $(seq 1 40); do
      kill -0 "$DENOC_DOCKERD_STARTED" 2>/dev/null || break
      sleep 0.25
    done
    # dockerd leaves its network namespace mounted
    umount "$DENOC_DOCKERD_ROOT/exec/netns/default" 2>/dev/null || true
    DENOC_DOCKERD_STARTED=
DENOC_DOCKERD_ROOT=
  fi
}
