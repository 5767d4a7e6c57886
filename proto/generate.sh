#!/usr/bin/env bash
# The only way to regenerate the committed protobuf code. Needs the pinned generators of the
# project's test extras (grpcio-tools, mypy-protobuf): pip install -e '.[test]'.
# Usage: proto/generate.sh [OUT_DIR]   (default: proto/, beside the .proto files)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here}"
python="${PYTHON:-python}"
# The mypy-protobuf plugins live beside the interpreter (a virtualenv's bin/).
bindir="$(dirname "$(command -v "$python")")"
export PATH="$bindir:$PATH"
mkdir -p "$out/cpsettle/v1"
# google/rpc/*.proto (the error model the stream's results carry) from the vendored copy that is
# also buf's second module; only cpsettle's files are generated: Python code imports google.rpc
# from googleapis-common-protos, a dependency of grpcio-status.
"$python" -m grpc_tools.protoc \
  -I "$here" \
  -I "$here/../third_party/googleapis" \
  --python_out="$out" \
  --grpc_python_out="$out" \
  --mypy_out="$out" \
  --mypy_grpc_out="$out" \
  "$here"/cpsettle/v1/*.proto
# The Connect service (HTTP/JSON beside gRPC, api/connect): protoc-gen-connectrpc's ASGI app and
# client for google.protobuf messages, async only (the server's event loop).
"$python" -m grpc_tools.protoc \
  -I "$here" \
  -I "$here/../third_party/googleapis" \
  --connectrpc_out="$out" \
  --connectrpc_opt=protobuf=google,io=async \
  "$here"/cpsettle/v1/settlement.proto
