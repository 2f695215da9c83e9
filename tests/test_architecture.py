"""The architecture, enforced: imports go down the layers, every op is complete, modules stay small.

Layers (DESIGN.md): L0 framework/ platform/ < L1 ops/ kernels/ < L2 runtime/ < L3 distributed/
collective/ < L4 train/ data/ summary/ < L5 replicator/ horovod/ mpi/ < L6 cli/ and the public
re-export modules. Siblings in one layer do not import each other; nothing imports testing/.
"""
import ast
import importlib
import os
import pathlib

import pytest

import tensorweave
from tensorweave.framework import op_def
from tensorweave.kernels import registry as kernel_registry
from tensorweave.ops import gradients

PACKAGE = pathlib.Path(tensorweave.__file__).parent
LAYERS = {
    "framework": 0, "platform": 0,
    "ops": 1, "kernels": 1,
    "runtime": 2,
    # RaggedTensor is composed of graph ops (L1); runtime meets it only through
    # framework/composite_tensor.py, so the two L2 siblings never import each other.
    "ragged": 2,
    "distributed": 3, "collective": 3,
    "train": 4, "data": 4, "summary": 4, "layers": 4, "losses": 4, "metrics": 4,
    "feature_column": 4, "distributions": 4,
    # tf.distribute's strategies are built on the replicator, and the Estimator, Keras and
    # tf.contrib.distribute use them: so replicator < distribute < the other L5 packages.
    "replicator": 4.5, "distribute": 4.75,
    "horovod": 5, "mpi": 5,
    "contrib": 5,
    "keras": 5,
    "estimator": 5,
    "cli": 6,
    # Transparent mode is Horovod applied for the script (it reuses tensorweave/horovod's
    # reductions), so it sits above L5, beside cli, which must not import it either.
    "transparent": 6,
}
PUBLIC_LAYER = 6  # tensorweave/__init__.py, nn.py, train namespace shims, compat/, examples/ ...
MAX_MODULE_LINES = 600


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name.endswith("_pb2.py"):
            continue
        yield path, path.relative_to(PACKAGE).parts


def _component(parts):
    """The layer component of a module path, or None for a public re-export module."""
    return parts[0] if len(parts) > 1 and parts[0] in LAYERS else None


def _layer(component):
    return PUBLIC_LAYER if component is None else LAYERS[component]


def _imported_components(path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module + "." + alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] != "tensorweave":
                continue
            if len(parts) == 1:
                yield node.lineno, "tensorweave", None
                continue
            target = parts[1]
            yield node.lineno, ".".join(parts[:3]), target if target in LAYERS else (
                "testing" if target == "testing" else None)


def test_imports_only_go_down_the_layers():
    violations = []
    for path, parts in _modules():
        own = _component(parts)
        if own is None and parts[0] == "testing":
            continue
        for lineno, name, target in _imported_components(path):
            where = f"{'/'.join(parts)}:{lineno} imports {name}"
            if target == "testing":
                violations.append(f"{where} (the package never imports testing/)")
            elif target == own:
                continue
            elif _layer(target) > _layer(own) or (
                    _layer(target) == _layer(own) and not (own is None or target is None)):
                violations.append(f"{where} (L{_layer(own)} may not import L{_layer(target)})")
    assert not violations, "\n".join(violations)


def test_kernels_never_import_the_graph_or_ops():
    for path in (PACKAGE / "kernels").glob("*.py"):
        source = path.read_text()
        for forbidden in ("tensorweave.framework.graph", "tensorweave.ops"):
            assert forbidden not in source, f"kernels/{path.name} imports {forbidden}"


def test_modules_stay_small():
    too_long = [f"{'/'.join(parts)}: {len(path.read_text().splitlines())} lines"
                for path, parts in _modules()
                if len(path.read_text().splitlines()) > MAX_MODULE_LINES]
    assert not too_long, too_long


def _covered_op_types():
    covered = set()
    tests_dir = pathlib.Path(__file__).parent / "ops"
    for path in sorted(tests_dir.glob("test_*.py")):
        module = importlib.import_module(f"tests.ops.{path.stem}")
        covered |= set(getattr(module, "COVERED_OP_TYPES", ()))
    return covered


def test_every_registered_op_has_a_kernel_a_gradient_decision_and_a_test_row():
    registered = op_def.registered_op_types()
    assert len(registered) > 50
    missing_kernel = [t for t in registered if kernel_registry.get_kernel(t) is None]
    missing_gradient = [t for t in registered if not gradients.has_gradient_decision(t)]
    missing_test = sorted(set(registered) - _covered_op_types())
    assert not missing_kernel, f"ops without a kernel: {missing_kernel}"
    assert not missing_gradient, f"ops without a gradient decision: {missing_gradient}"
    assert not missing_test, f"ops without a test row in tests/ops: {missing_test}"


def test_every_kernel_belongs_to_a_registered_op():
    stray = set(kernel_registry.registered_kernel_types()) - set(op_def.registered_op_types())
    assert not stray, f"kernels for unregistered op types: {sorted(stray)}"


@pytest.mark.parametrize("proto", sorted(str(p) for p in PACKAGE.rglob("*.proto")))
def test_checked_in_protobuf_modules_are_current(proto, tmp_path):
    grpc_tools = pytest.importorskip("grpc_tools.protoc")
    root = PACKAGE.parent
    relative = os.path.relpath(proto, root)
    outputs = ["_pb2.py"]
    arguments = [f"--python_out={tmp_path}"]
    if any(line.startswith("service ") for line in pathlib.Path(proto).read_text().splitlines()):
        outputs.append("_pb2_grpc.py")  # the service stubs (tools/regenerate_protos.sh)
        arguments.append(f"--grpc_python_out={tmp_path}")
    status = grpc_tools.main(["protoc", f"-I{root}", *arguments, relative])
    assert status == 0
    for suffix in outputs:
        generated = (tmp_path / relative).with_name(pathlib.Path(relative).stem + suffix)
        checked_in = (root / relative).with_name(pathlib.Path(relative).stem + suffix)
        assert generated.read_text() == checked_in.read_text(), (
            f"{checked_in} is stale: run tools/regenerate_protos.sh")
