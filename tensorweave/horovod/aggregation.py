"""Local gradient aggregation for DistributedOptimizer(backward_passes_per_step=N), Horovod's
semantics for TF 1.x graphs: each step adds this rank's gradients into local accumulators;
every N-th step the accumulated sums (divided by N if average_aggregated_gradients) are
reduced over the ranks and applied, and the accumulators start again from zero. On the other
steps nothing is applied, but the global step still advances (it counts backward passes, as
Estimators expect). Communication happens once per N passes: a larger effective batch without
the memory of one.

Every rank counts the same passes, so every rank takes the same branch of the conds and the
collectives inside them always meet their peers.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.ops import array_ops, cond_ops, control_flow_ops, math_ops, state_ops
from tensorweave.ops.variables import Variable


class LocalAggregation:
    def __init__(self, passes, average_aggregated_gradients, reduce_fn, name):
        if int(passes) != passes or passes < 1:
            raise ValueError(f"backward_passes_per_step must be a positive integer, got "
                             f"{passes!r}")
        self.passes = int(passes)
        self.average = average_aggregated_gradients
        self._reduce = reduce_fn
        self._name = name
        self._counter = None
        self._accumulators = None

    def _variable(self, initial, name):
        return Variable(initial, trainable=False, name=name,
                        collections=[GraphKeys.LOCAL_VARIABLES])

    def compute_gradients(self, grads_and_vars):
        """Accumulates the gradients and returns (gradient, variable) pairs whose gradients are
        the reduced sums on every N-th pass (and this pass's local sums on the others, which
        apply_gradients does not apply)."""
        graph = graph_lib.get_default_graph()
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        for grad, var in pairs:
            if isinstance(grad, IndexedSlices):
                raise ValueError(f"backward_passes_per_step > 1 accumulates dense gradients: "
                                 f"{var.name} has IndexedSlices; pass sparse_as_dense=True")
            if not grad.shape.is_fully_defined():
                raise ValueError(f"backward_passes_per_step > 1 needs gradients of known shape; "
                                 f"{var.name}'s is {grad.shape}")
        with graph.name_scope(f"{self._name}_LocalAggregation"), graph.control_dependencies(None):
            self._counter = self._variable(convert_to_tensor(0, dtype=dtypes.int32), "counter")
            self._accumulators = [
                self._variable(array_ops.zeros(g.shape.as_list(), dtype=g.dtype),
                               f"accumulator_{i}") for i, (g, _) in enumerate(pairs)]
        with graph.name_scope(f"{self._name}_LocalAggregation"):
            added = [state_ops.assign_add(acc, g) for acc, (g, _) in
                     zip(self._accumulators, pairs)]
            with graph.control_dependencies(added):
                count = state_ops.assign_add(self._counter, 1)
            self._boundary = math_ops.equal(count, self.passes)
            totals = [array_ops.identity(a) for a in added]

            def reduced():
                scale = 1.0 / self.passes if self.average else 1.0
                return [self._reduce(t * scale if scale != 1.0 else t) for t in totals]

            def local():
                return [array_ops.identity(t) for t in totals]

            results = cond_ops.cond(self._boundary, reduced, local, strict=True)
        by_var = {id(v): r for (_, v), r in zip(pairs, results)}
        return [(by_var.get(id(v)) if g is not None else None, v) for g, v in grads_and_vars]

    def apply_gradients(self, apply_fn, grads_and_vars, global_step):
        """`apply_fn()` on the N-th pass, then zero the accumulators; else only advance
        global_step."""
        if self._counter is None:
            raise ValueError("backward_passes_per_step > 1: call compute_gradients (or "
                             "minimize) of the DistributedOptimizer before apply_gradients")
        graph = graph_lib.get_default_graph()
        inputs = [g for g, _ in grads_and_vars if g is not None]

        def apply_and_reset():  # traced into the branch's own graph
            with graph_lib.get_default_graph().control_dependencies([apply_fn()]):
                resets = [state_ops.assign(a, array_ops.zeros_like(a)) for a in
                          self._accumulators]
                resets.append(state_ops.assign(self._counter, 0))
                return control_flow_ops.group(*resets)

        def skip():
            if global_step is None:
                return control_flow_ops.no_op()
            return state_ops.assign_add(global_step, convert_to_tensor(
                1, dtype=global_step.dtype.base_dtype)).op

        with graph.control_dependencies(inputs):
            return cond_ops.cond(self._boundary, apply_and_reset, skip)
