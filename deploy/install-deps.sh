#!/usr/bin/env bash
# Installs every Debian 12 package denoc needs to build, test, lint, package and benchmark, and only those
# missing: when dpkg-query finds all of them installed, nothing runs (no apt-get update).
# Used by the README, deploy/start.sh, tests/run.sh, .ci/run and the Dockerfile. Run as root (or with sudo).
set -euo pipefail

packages=(
  # build tools
  build-essential cmake ninja-build ccache pkg-config git
  # core
  libeigen3-dev liburdfdom-dev libtinyxml-dev libexpat1-dev nlohmann-json3-dev libcli11-dev
  # service (denocd): gRPC, protobuf, logging, SHA-256 and TLS, Prometheus metrics and their HTTP server
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libspdlog-dev libfmt-dev libssl-dev
  prometheus-cpp-dev libmicrohttpd-dev
  # tests and benchmarks
  googletest libgtest-dev libgmock-dev libbenchmark-dev liborocos-kdl-dev libmujoco-dev
  # TLS certificates for the tests and deploy/gen-certs.sh
  openssl
  # fuzzing and sanitizers (tests/fuzz/run.sh, tests/sanitize.sh): clang with libFuzzer and the sanitizer
  # runtimes, llvm-symbolizer for the reports' stack traces
  clang-14 libclang-rt-14-dev llvm-14
  # plots of the papers' examples
  python3 python3-numpy python3-matplotlib
  # the Python client (clients/python; stubs from protoc + grpc_python_plugin of protobuf-compiler-grpc),
  # installed with pip into a virtual environment built offline with Debian's setuptools and wheel
  python3-grpcio python3-protobuf python3-pytest python3-setuptools python3-wheel python3-venv
  # lint (deploy/lint.sh) and the Debian package's checks (deploy/package-deb.sh)
  clang-format flake8 shellcheck yamllint lintian
  # manual pages of the programs, from their --help (cmake/DenocPackaging.cmake)
  help2man
  # the raw HTTP/2 client of the transport tests (server/tools/h2_probe.py)
  python3-h2
  # the deployment manifests read by tests/deploy/manifest_env.py
  python3-yaml
  # the hardened front (deploy/nginx) and its tests (tests/front): Debian's nginx, with the HTTP/2
  # rapid-reset mitigation (CVE-2023-44487) and the gRPC proxy module
  nginx
)

if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
# one dpkg-query for all: the packages installed, then those of the list that are not among them
# (dpkg-query fails when it knows some of them not at all: the list then still holds the others)
installed=$({ dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null || true; } |
  awk '/ install ok installed$/ { print $1 }')
missing=()
for p in "${packages[@]}"; do
  grep -qx -- "$p" <<<"$installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: the ${#packages[@]} Debian packages are installed"
else
  echo "install-deps: installing ${#missing[@]} of ${#packages[@]} Debian packages: ${missing[*]}"
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
  # the package starts a web server on port 80 where systemd runs; the front is started by its own
  # configuration (deploy/nginx), never as the host's default site
  if [[ " ${missing[*]} " == *" nginx "* ]] && [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now nginx.service || true
  fi
fi

# Node.js and npm for the TypeScript client (clients/node): Debian's packages (node 18) only when there is no
# node at all, so a newer node already installed (with its own npm) is kept.
if ! command -v node >/dev/null 2>&1; then
  $SUDO apt-get install -y -q --no-install-recommends nodejs npm
fi
