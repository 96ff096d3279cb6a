#!/usr/bin/env bash
# CI job for the container: builds the image (deploy/build-image.sh: the Debian base with debootstrap when it
# is missing, then the Dockerfile) and runs deploy/smoke-test.sh on it; prints the time of each part. Starts a
# Docker daemon for the whole job when none runs and stops it at the end. Needs root (or a running daemon).
# Usage: deploy/ci-container.sh [IMAGE]   (default denoc:ci)
set -euo pipefail
cd "$(dirname "$0")/.."
source deploy/docker-env.sh

image=${1:-denoc:ci}
t0=$(date +%s)
denoc_docker_up
trap denoc_docker_down EXIT
deploy/build-image.sh --tag "$image"
t1=$(date +%s)
deploy/smoke-test.sh "$image"
t2=$(date +%s)
echo "ci-container: image build $((t1 - t0)) s, smoke test $((t2 - t1)) s, total $((t2 - t0)) s"
