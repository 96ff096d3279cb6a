#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs the main job: builds denoc and prints the dynamics of the
# bundled Stanford arm (torques, accelerations, inertia matrix and its U, D factors).
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
cmake --preset release
cmake --build --preset release --target denoc
build/release/clients/cli/denoc demo "$@"
