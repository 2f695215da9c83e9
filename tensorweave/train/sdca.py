"""`tf.train.sdca_shrink_l1`: the proximal L1 step of stochastic dual coordinate ascent,
applied in place to each weight variable: w <- sign(w) * max(|w| - l1 / l2, 0) (TF's
Regularizations::Shrink; the shrinkage is symmetric_l1 / symmetric_l2). Composed of graph
ops; returns the op that applies it to every variable."""
from tensorweave.framework.graph import name_scope
from tensorweave.ops import control_flow_ops, math_ops, state_ops
from tensorweave.ops import variables as variables_lib


def sdca_shrink_l1(weights, l1, l2, name=None):
    l1, l2 = float(l1), float(l2)
    if l2 <= 0:
        raise ValueError(f"sdca_shrink_l1: l2 must be a positive float (the shrinkage is "
                         f"l1 / l2), got {l2}")
    if l1 < 0:
        raise ValueError(f"sdca_shrink_l1: l1 must be >= 0, got {l1}")
    weights = list(weights)
    for weight in weights:
        if not isinstance(weight, variables_lib.Variable):
            raise TypeError(f"sdca_shrink_l1: weights must be variables (mutable tensors), "
                            f"got {weight!r}")
    with name_scope(name or "SdcaShrinkL1"):
        shrinkage = l1 / l2
        updates = []
        for weight in weights:
            value = weight.value()
            shrunk = math_ops.maximum(math_ops.abs(value) - shrinkage, 0.0)
            updates.append(state_ops.assign(weight, math_ops.sign(value) * shrunk).op)
        return control_flow_ops.group(*updates)
