"""STYLE item 6: the master and worker logic never import grpc; gRPC lives in distributed/grpc/
(and the generated service stubs in distributed/protos/*_pb2_grpc.py). The grpc:// session
target is registered once tensorweave is imported."""
import ast
import pathlib

import tensorweave
from tensorweave.runtime import session as session_lib

DISTRIBUTED = pathlib.Path(tensorweave.__file__).parent / "distributed"


def _imports_grpc(path):
    for node in ast.walk(ast.parse(path.read_text())):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        if any(name == "grpc" or name.startswith("grpc.") for name in names):
            return True
    return False


def test_only_the_grpc_adapter_imports_grpc():
    offenders = [str(path.relative_to(DISTRIBUTED)) for path in sorted(DISTRIBUTED.rglob("*.py"))
                 if "grpc" not in path.relative_to(DISTRIBUTED).parts[:1]
                 and not path.name.endswith("_pb2_grpc.py") and _imports_grpc(path)]
    assert not offenders, f"import grpc outside distributed/grpc/: {offenders}"


def test_the_grpc_target_is_registered():
    assert "grpc://" in session_lib._TARGET_FACTORIES
