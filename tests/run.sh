#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and passes every test: installs the packages, builds the release
# preset, runs ctest. Used as is by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/install-deps.sh
cmake --preset release
cmake --build --preset release
ctest --preset release
