#!/usr/bin/env bash
# Regenerates the checked-in *_pb2.py modules from the .proto files (needs grpcio-tools).
# tests/framework/test_protos.py fails when the checked-in output is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
for proto in $(find tensorweave -name '*.proto' | sort); do
  python -m grpc_tools.protoc -I. --python_out=. "$proto"
done
