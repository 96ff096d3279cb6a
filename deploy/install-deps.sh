#!/usr/bin/env bash
# Installs every Debian 12 package denoc needs to build, test and benchmark.
# Used by the README, .ci/run and the Dockerfile. Run as root (or with sudo).
set -euo pipefail

packages=(
  # build tools
  build-essential cmake ninja-build ccache pkg-config git
  # core
  libeigen3-dev liburdfdom-dev libtinyxml-dev libexpat1-dev nlohmann-json3-dev libcli11-dev
  # service (denocd): gRPC, protobuf, logging, SHA-256 and TLS, Prometheus metrics
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libspdlog-dev libfmt-dev libssl-dev
  prometheus-cpp-dev
  # tests and benchmarks
  googletest libgtest-dev libgmock-dev libbenchmark-dev liborocos-kdl-dev
  # TLS certificates for the tests and deploy/gen-certs.sh
  openssl
  # fuzzing and sanitizers (tests/fuzz/run.sh, tests/sanitize.sh): clang with libFuzzer and the sanitizer
  # runtimes, llvm-symbolizer for the reports' stack traces
  clang-14 libclang-rt-14-dev llvm-14
  # plots of the papers' examples
  python3 python3-numpy python3-matplotlib
  # the Python client (clients/python; stubs from protoc + grpc_python_plugin of protobuf-compiler-grpc)
  python3-grpcio python3-protobuf python3-pytest
)

if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${packages[@]}"

# Node.js and npm for the TypeScript client (clients/node): Debian's packages (node 18) only when there is no
# node at all, so a newer node already installed (with its own npm) is kept.
if ! command -v node >/dev/null 2>&1; then
  $SUDO apt-get install -y -q --no-install-recommends nodejs npm
fi
