#!/usr/bin/env bash
# The Node client's tests as one ctest test (node_client): installs the npm dependencies from the lock file
# when node_modules is missing or older than package-lock.json (npm ci; needs the npm registry), builds
# (proto copy, generated types, tsc) and runs `node --test` on the compiled tests. ctest passes DENOCD and
# DENOC_CLI, the denocd and denoc binaries of its build.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npm run build
node scripts/test.js
