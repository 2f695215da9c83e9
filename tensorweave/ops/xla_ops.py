"""`tf.xla.experimental`: compile(computation, inputs) and jit_scope(). tensorweave has no
XLA compiler: the computation's ops run on tensorweave's kernels and give the values TF's
XLA gives (up to float rounding); what is kept is TF's calling convention, so programs
written for XLA run unchanged:

  compile(computation, inputs=None)   computation(*inputs) built in the graph; None or an
                                      op-only result becomes a NoOp depending on it, a single
                                      tensor comes back in a tuple, other structures as built
  jit_scope(compile_ops=True, separate_compiled_gradients=False)
                                      a scope for the ops built inside; its arguments are
                                      checked as TF checks them
"""
import contextlib

from tensorweave.framework import graph as graph_lib
from tensorweave.framework import nest
from tensorweave.ops import control_flow_ops


def compile(computation, inputs=None):  # noqa: A001 - TF's name
    if not callable(computation):
        raise TypeError(f"xla.experimental.compile: computation must be callable, got "
                        f"{computation!r}")
    with graph_lib.name_scope("xla_compile"):
        result = computation(*(inputs or []))
        if result is None:
            return control_flow_ops.no_op()
        flat = nest.flatten(result)
        if all(isinstance(item, graph_lib.Operation) for item in flat):
            with graph_lib.control_dependencies(flat):
                return control_flow_ops.no_op()
        if isinstance(result, graph_lib.Tensor):
            return (result,)
        return result


@contextlib.contextmanager
def jit_scope(compile_ops=True, separate_compiled_gradients=False):
    if not (isinstance(compile_ops, bool) or callable(compile_ops)):
        raise TypeError(f"jit_scope: compile_ops must be a bool or a callable taking a "
                        f"NodeDef, got {compile_ops!r}")
    if not isinstance(separate_compiled_gradients, bool):
        raise TypeError("jit_scope: separate_compiled_gradients must be a bool")
    yield
