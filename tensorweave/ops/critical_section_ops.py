"""`tf.CriticalSection`: `cs.execute(fn)` runs `fn`'s ops so that no two executions of one
critical section overlap, within a step or across concurrent steps.

`fn` is traced into a function body (framework/function_trace.py) and run by one
CriticalSectionExecute op that holds the section's lock, keyed by its shared name in the
resource manager of the device it runs on, for the whole body: a read-modify-write of a
variable inside `fn` is atomic with respect to every other `execute` of the same section.
TF builds this from MutexV2/MutexLock ops; one functional op gives the same exclusion.
Waiting for the lock stops when the step is cancelled. Gradients flow through the body as
for a tf.function call (the gradient itself runs outside the section).
"""
import itertools

from tensorweave.framework import graph as graph_lib
from tensorweave.framework.function_trace import trace
from tensorweave.framework.op_def import register_op
from tensorweave.ops.function_call_ops import call_gradient
from tensorweave.ops.gradients import register_gradient

register_op("CriticalSectionExecute", inputs=["args: Tin"], outputs=["output: Tout"],
            attrs={"Tin": "list(type)", "Tout": "list(type)", "f": "func",
                   "output_shapes": ("list(shape)", []), "shared_name": "string"},
            shape_fn=lambda op: list(op.get_attr("output_shapes")), stateful=True,
            doc="Runs f holding the lock of the critical section shared_name.")
register_gradient("CriticalSectionExecute")(call_gradient)
_ANONYMOUS = itertools.count()


class CriticalSection:
    """`tf.CriticalSection(name=None, shared_name=None)`."""

    def __init__(self, name=None, shared_name=None, critical_section_def=None,
                 import_scope=None):
        if critical_section_def is not None:
            raise NotImplementedError("tf.CriticalSection: critical_section_def (from a "
                                      "MetaGraphDef) is not supported; build it in Python")
        graph = graph_lib.get_default_graph()
        with graph.name_scope(name or "CriticalSection") as scope:
            self.name = scope[:-1]
        self._shared_name = shared_name or f"{self.name}_{next(_ANONYMOUS)}"

    @property
    def shared_name(self):
        return self._shared_name

    def execute(self, fn, exclusive_resource_access=True, name=None):
        """`fn()`'s results, computed while this section's lock is held."""
        if not callable(fn):
            raise TypeError(f"CriticalSection.execute: fn must be callable, got {fn!r}")
        concrete = trace(fn, [], {}, name or "critical_section_execute")
        return concrete._call_flat([], op_type="CriticalSectionExecute",
                                   attrs={"shared_name": self._shared_name})
