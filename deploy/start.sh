#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine (installing only the packages that are missing; deploy/install-deps.sh)
# and runs the main job: builds denoc and starts the dynamics service
# denocd on 127.0.0.1:50051 with the example models registered (the Stanford arm and the planar arm of
# Saha 1999, the Panda arm of examples/models/panda.urdf and the Solo-12 quadruped of
# examples/models/trees/solo12.urdf under a floating root), on its default store directory
# (./denoc-store). Extra arguments go to denocd (e.g. --listen 0.0.0.0:50051 --plaintext --without-front on a
# trusted network; docs/service.md, "Transport security"). Ctrl-C stops it gracefully.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
cmake --preset release
cmake --build --preset release --target denocd denoc
exec build/release/server/denocd --preload examples/models/panda.urdf,examples/models/trees/solo12.urdf#floating "$@"
