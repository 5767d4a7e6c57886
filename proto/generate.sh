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
"$python" -m grpc_tools.protoc \
  -I "$here" \
  --python_out="$out" \
  --grpc_python_out="$out" \
  --mypy_out="$out" \
  --mypy_grpc_out="$out" \
  "$here"/cpsettle/v1/*.proto
