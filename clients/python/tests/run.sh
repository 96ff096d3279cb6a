#!/usr/bin/env bash
# The Python client's tests against the installed package (ctest: python_client): a fresh virtual environment
# on Debian's Python (/usr/bin/python3 -m venv --system-site-packages: grpcio, protobuf, numpy, pytest and
# matplotlib come from Debian), `pip install` of clients/python offline (no build isolation, no index: the
# README's command), then pytest run from a directory outside the source tree, so `import denoc` can only
# find the installed package. DENOCD and DENOC_CLI name the binaries (ctest sets them).
# Usage: clients/python/tests/run.sh [PYTEST ARGS...]
set -euo pipefail
package=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/denoc-python.XXXXXX)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --no-build-isolation --no-index --disable-pip-version-check "$package"
cd "$work"
export PYTHONDONTWRITEBYTECODE=1
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider --rootdir "$package/tests" "$package/tests" "$@"
