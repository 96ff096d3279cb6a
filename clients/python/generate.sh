#!/bin/sh
# Generates the Python gRPC stubs of proto/denoc/v1/dynamics.proto into DIR (default: build/python-stubs)
# with the system protoc and Debian's grpc_python_plugin. Use the result with DENOC_PY_STUBS_DIR=DIR.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../build/python-stubs}
mkdir -p "$out"
protoc -I"$here/../../proto" --python_out="$out" --pyi_out="$out" \
    --plugin=protoc-gen-grpc_python="${DENOC_GRPC_PYTHON_PLUGIN:-/usr/bin/grpc_python_plugin}" \
    --grpc_python_out="$out" "$here/../../proto/denoc/v1/dynamics.proto"
echo "$out"
