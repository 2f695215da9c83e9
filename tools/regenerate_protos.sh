#!/usr/bin/env bash
# Regenerates the checked-in *_pb2.py modules from the .proto files, and the *_pb2_grpc.py
# service stubs of the .proto files that declare a service (needs grpcio-tools).
# tests/test_architecture.py fails when the checked-in output is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
for proto in $(find tensorweave -name '*.proto' | sort); do
  python -m grpc_tools.protoc -I. --python_out=. "$proto"
  if grep -q '^service ' "$proto"; then
    python -m grpc_tools.protoc -I. --grpc_python_out=. "$proto"
  fi
done
