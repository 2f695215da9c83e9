"""`tf.gradients`: the backward walk, and the table of per-op gradient rules it reads.

An op family registers, next to each op, either a rule `fn(op, *output_grads) -> input_grads`
(`@register_gradient("MatMul")`) or the decision that the op has none (`not_differentiable`).
The walk knows nothing about particular ops: it visits the ops between `xs` and `ys` from the
last created to the first (creation order is a topological order: inputs exist before their
consumers), sums each output's incoming gradients, and asks the op's rule for its inputs'.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.indexed_slices import IndexedSlices

_GRADIENTS = {}
NOT_DIFFERENTIABLE = None


def register_gradient(op_type):
    """Decorator: `fn(op, *grads)` returns one gradient (or None) per input of `op`."""
    def decorate(fn):
        if op_type in _GRADIENTS:
            raise ValueError(f"Gradient of {op_type!r} is registered twice")
        _GRADIENTS[op_type] = fn
        return fn
    return decorate


class RegisterGradient:
    """TF-style spelling: `@tf.RegisterGradient("MyOp")`."""

    def __init__(self, op_type):
        self._op_type = op_type

    def __call__(self, fn):
        return register_gradient(self._op_type)(fn)


def not_differentiable(op_type):
    """Declares that no gradient flows through `op_type` (its inputs get None)."""
    if op_type in _GRADIENTS:
        raise ValueError(f"Gradient of {op_type!r} is registered twice")
    _GRADIENTS[op_type] = NOT_DIFFERENTIABLE


NotDifferentiable = no_gradient = not_differentiable


def has_gradient_decision(op_type):
    return op_type in _GRADIENTS


def gradient_function(op_type):
    return _GRADIENTS[op_type]


def _is_differentiable_dtype(dtype):
    return dtype.is_floating or dtype.is_complex


def _as_tensor(value):
    if hasattr(value, "_variable") and not isinstance(value, graph_lib.Tensor):
        return value._variable  # gradients w.r.t. a Variable flow to its storage op's output
    return convert_to_tensor(value)


def gradients(ys, xs, grad_ys=None, name="gradients", colocate_gradients_with_ops=False,
              gate_gradients=False, aggregation_method=None, stop_gradients=None,
              unconnected_gradients="none"):
    """Symbolic d(sum(ys))/d(x) for each x in xs, as graph tensors (None where unconnected,
    or zeros with unconnected_gradients=tf.UnconnectedGradients.ZERO)."""
    from tensorweave.ops import array_ops, math_ops  # the walk builds sums and seeds with them

    unconnected = getattr(unconnected_gradients, "value", unconnected_gradients)
    if unconnected not in ("none", "zero"):
        raise ValueError(f"tf.gradients: unconnected_gradients must be 'none' or 'zero' (a "
                         f"tf.UnconnectedGradients), got {unconnected_gradients!r}")

    ys = [_as_tensor(y) for y in (ys if isinstance(ys, (list, tuple)) else [ys])]
    xs = [_as_tensor(x) for x in (xs if isinstance(xs, (list, tuple)) else [xs])]
    if grad_ys is None:
        grad_ys = [None] * len(ys)
    elif not isinstance(grad_ys, (list, tuple)):
        grad_ys = [grad_ys]
    if len(grad_ys) != len(ys):
        raise ValueError(f"tf.gradients: {len(ys)} ys but {len(grad_ys)} grad_ys")
    stop = {_as_tensor(t) for t in (stop_gradients or [])}
    graph = ys[0].graph if ys else graph_lib.get_default_graph()

    with graph.name_scope(name):
        between = _ops_between(ys, xs, stop)
        grads = {}  # tensor -> list of partial gradients

        for y, grad_y in zip(ys, grad_ys):
            if grad_y is None:
                if not _is_differentiable_dtype(y.dtype):
                    raise TypeError(f"tf.gradients: ys {y.name} has dtype {y.dtype.name}; only "
                                    "floating-point tensors can be differentiated.")
                if y.shape.is_fully_defined():
                    grad_y = array_ops.ones(y.shape.as_list(), dtype=y.dtype,
                                            name=f"grad_ys_{len(grads)}")
                else:
                    grad_y = array_ops.ones_like(y, name=f"grad_ys_{len(grads)}")
            else:
                grad_y = convert_to_tensor(grad_y, dtype=y.dtype)
            grads.setdefault(y, []).append(grad_y)

        for op in sorted(between, key=lambda o: o._id, reverse=True):
            out_grads = [_aggregate(grads.get(t), math_ops) for t in op.outputs]
            if all(g is None for g in out_grads):
                continue
            if any(t in stop for t in op.outputs):
                continue
            # gradient_override_map names another rule for this op (a private attr).
            rule = op.attrs.get("_gradient_op_type", op.type)
            if rule not in _GRADIENTS:
                raise LookupError(f"No gradient defined for operation {op.describe()}: register "
                                  f"one with @tf.RegisterGradient({rule!r}) or mark it "
                                  "not differentiable.")
            grad_fn = _GRADIENTS[rule]
            if grad_fn is NOT_DIFFERENTIABLE:
                continue
            for i, (tensor, grad) in enumerate(zip(op.outputs, out_grads)):
                if grad is None and _is_differentiable_dtype(tensor.dtype):
                    out_grads[i] = array_ops.zeros_like(tensor)
            scope = op.name + "_grad"
            # A hint any rule may read: the inputs whose gradients this walk uses (a function
            # call's rule then differentiates its body for those only).
            op._needed_input_indices = frozenset(
                i for i, t in enumerate(op.inputs) if t.op in between or t in xs)
            with graph.name_scope(scope):
                if colocate_gradients_with_ops:
                    with graph.colocate_with(op):
                        in_grads = grad_fn(op, *out_grads)
                else:
                    in_grads = grad_fn(op, *out_grads)
            in_grads = list(in_grads) if isinstance(in_grads, (list, tuple)) else [in_grads]
            if len(in_grads) != len(op.inputs):
                raise ValueError(f"Gradient of {op.type} returned {len(in_grads)} values for "
                                 f"{len(op.inputs)} inputs")
            for tensor, grad in zip(op.inputs, in_grads):
                # A stop tensor still receives its gradient (it may be one of xs); the op that
                # produced it is skipped above, so nothing flows beyond it.
                if grad is None:
                    continue
                if not _is_differentiable_dtype(tensor.dtype):
                    continue
                if tensor.op in between or tensor in xs:
                    grads.setdefault(tensor, []).append(grad)

        result = [_aggregate(grads.get(x), math_ops) if x in grads else None for x in xs]
        if unconnected == "zero":
            result = [array_ops.zeros_like(x) if g is None else g for g, x in zip(result, xs)]
        return result


def _ops_between(ys, xs, stop):
    """Ops on some path from an x to a y (not going backward through a stop tensor)."""
    reaches_y = set()
    stack = [y.op for y in ys]
    while stack:
        op = stack.pop()
        if op in reaches_y:
            continue
        reaches_y.add(op)
        stack.extend(t.op for t in op.inputs if t not in stop)
    from_x = set()
    stack = [consumer for x in xs for consumer in x.consumers()]
    while stack:
        op = stack.pop()
        if op in from_x or op not in reaches_y:
            continue
        from_x.add(op)
        for tensor in op.outputs:
            stack.extend(tensor.consumers())
    return from_x


def _aggregate(partials, math_ops):
    """Sums the partial gradients of one tensor (IndexedSlices stay sparse when all are)."""
    if not partials:
        return None
    if len(partials) == 1:
        return partials[0]
    if all(isinstance(g, IndexedSlices) for g in partials):
        from tensorweave.ops import array_ops
        indices = [g.indices for g in partials]
        if len({i.dtype for i in indices}) > 1:  # gathers by int32 and int64 ids: concat
            indices = [math_ops.cast(i, dtypes.int64) for i in indices]  # needs one dtype
        return IndexedSlices(array_ops.concat([g.values for g in partials], 0),
                             array_ops.concat(indices, 0), partials[0].dense_shape)
    dense = [convert_to_tensor(g) for g in partials]
    return math_ops.add_n(dense)


def hessians(ys, xs, name="hessians"):
    """Second derivatives of sum(ys) w.r.t. each x, by differentiating the gradient again."""
    from tensorweave.ops import array_ops
    xs = xs if isinstance(xs, (list, tuple)) else [xs]
    results = []
    for x in xs:
        grad = gradients(ys, x, name=name)[0]
        flat = array_ops.reshape(grad, [-1])
        n = flat.shape.as_tuple()[0]
        if n is None:
            raise ValueError("tf.hessians needs statically shaped xs")
        rows = [gradients(array_ops.reshape(array_ops.slice_(flat, [i], [1]), []), x)[0]
                for i in range(n)]
        x_shape = _as_tensor(x).shape.as_list()
        results.append(array_ops.reshape(array_ops.stack(rows), x_shape + x_shape))
    return results


