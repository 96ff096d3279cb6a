#!/usr/bin/env bash
# Builds the denoc container image (the top-level Dockerfile) on a Debian 12 machine that reaches Debian's
# archive but no container registry:
#  1. the base image (debian:bookworm-slim) is made locally when it is missing: debootstrap --variant=minbase
#     bookworm, slimmed the way the official -slim images are (no documentation, manual pages or
#     translations; apt lists and caches removed), with the security and updates suites, then imported;
#  2. the image is built with docker (Debian's docker.io; the daemon is started here when none runs, see
#     docker-env.sh) or with buildah (--builder buildah, or automatically when there is no docker but
#     buildah), both with the host's network (RUN apt-get inside the build reaches the archive).
# Prints the build time and the image size. Run as root (debootstrap, dockerd) or with a daemon running.
# Usage: deploy/build-image.sh [--tag IMAGE] [--builder docker|buildah] [--no-cache]
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/docker-env.sh

tag=denoc:latest
builder=auto
base=debian:bookworm-slim  # the Dockerfile's FROM
cache=()
while [ $# -gt 0 ]; do
  case $1 in
    --tag) tag=$2; shift 2 ;;
    --builder) builder=$2; shift 2 ;;
    --no-cache) cache=(--no-cache); shift ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "build-image.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ "$builder" = auto ]; then
  if command -v docker >/dev/null 2>&1 || command -v dockerd >/dev/null 2>&1 || ! command -v buildah >/dev/null 2>&1; then
    builder=docker
  else
    builder=buildah
  fi
fi

# writes a slim Debian 12 root file system into $1
make_rootfs() {
  local dir=$1 mirror=${DENOC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
  command -v debootstrap >/dev/null 2>&1 || { echo "build-image.sh: installing debootstrap" >&2; denoc_apt_install debootstrap; }
  echo "build-image.sh: debootstrap --variant=minbase bookworm ($mirror)" >&2
  debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$dir.log" 2>&1 ||
    { tail -n 20 "$dir.log" >&2; return 1; }
  rm -f "$dir.log" "$dir/etc/apt/sources.list" "$dir/etc/hostname" "$dir/etc/resolv.conf"
  cat >"$dir/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: ${mirror}
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${DENOC_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  # what the official -slim images leave out, now and for every later package
  cat >"$dir/etc/dpkg/dpkg.cfg.d/docker-slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/lintian/*
path-exclude /usr/share/locale/*
EOF
  cat >"$dir/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  echo 'Acquire::Languages "none";' >"$dir/etc/apt/apt.conf.d/docker-no-languages"
  # no fsync per unpacked file: an interrupted image build is thrown away anyway (as in Docker's former
  # mkimage scripts); unpacking the build stage's ~600 packages is much faster
  echo 'force-unsafe-io' >"$dir/etc/dpkg/dpkg.cfg.d/docker-apt-speedup"
  find "$dir/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  find "$dir/usr/share/doc" -mindepth 1 -type d -empty -delete
  rm -rf "$dir"/usr/share/{man,info,groff,lintian,locale}/* "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/*.bin \
    "$dir"/var/cache/apt/archives/*.deb "$dir"/var/log/* "$dir"/tmp/*
}

has_image() {
  if [ "$builder" = docker ]; then docker image inspect "$1" >/dev/null 2>&1; else buildah inspect --type image "$1" >/dev/null 2>&1; fi
}

if [ "$builder" = docker ]; then
  denoc_docker_up
  trap denoc_docker_down EXIT
else
  command -v buildah >/dev/null 2>&1 || { echo "build-image.sh: installing buildah" >&2; denoc_apt_install buildah; }
fi

t_start=$(date +%s)
if ! has_image "$base"; then
  echo "build-image.sh: $base is missing: making it with debootstrap" >&2
  rootfs=$(mktemp -d /var/tmp/denoc-rootfs.XXXXXX)
  make_rootfs "$rootfs"
  if [ "$builder" = docker ]; then
    tar --numeric-owner -C "$rootfs" -c . | docker import --change 'CMD ["bash"]' - "$base" >/dev/null
  else
    ctr=$(buildah from scratch)
    mnt=$(buildah mount "$ctr")
    cp -a "$rootfs/." "$mnt/"
    buildah umount "$ctr" >/dev/null
    buildah config --cmd bash "$ctr"
    buildah commit --quiet "$ctr" "$base" >/dev/null
    buildah rm "$ctr" >/dev/null
  fi
  rm -rf "$rootfs"
  echo "build-image.sh: base image $base made in $(($(date +%s) - t_start)) s" >&2
fi

t_build=$(date +%s)
if [ "$builder" = docker ]; then
  DOCKER_BUILDKIT=0 docker build --network host "${cache[@]}" -t "$tag" .
  size=$(docker image inspect -f '{{.Size}}' "$tag")
else
  # the docker format keeps SHELL and HEALTHCHECK (the OCI format has neither)
  buildah bud --isolation chroot --network host --layers --format docker "${cache[@]}" -t "$tag" .
  size=$(buildah images --noheading --format '{{.Size}}' "$tag" | head -n 1)
fi
t_end=$(date +%s)
[[ $size =~ ^[0-9]+$ ]] && size="$((size / 1000000)) MB"
echo "build-image.sh: built $tag with $builder in $((t_end - t_build)) s ($((t_end - t_start)) s with the base image);" \
  "image size $size"
