"""Learning-rate schedules of the global step, built as graph ops (TF 1.x `tf.train.*_decay`)."""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import math_ops


def _step_as_float(global_step, dtype):
    if global_step is None:
        raise ValueError("global_step is required for a learning rate schedule")
    return math_ops.cast(convert_to_tensor(global_step), dtype)


def exponential_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                      name=None):
    """learning_rate * decay_rate ^ (global_step / decay_steps), floored if staircase."""
    if decay_steps <= 0 if not hasattr(decay_steps, "dtype") else False:
        raise ValueError(f"exponential_decay: decay_steps must be positive, got {decay_steps}")
    with graph_lib.get_default_graph().name_scope(name or "ExponentialDecay"):
        lr = convert_to_tensor(learning_rate, name="learning_rate")
        dtype = lr.dtype if lr.dtype.is_floating else dtypes.float32
        lr = math_ops.cast(lr, dtype)
        step = _step_as_float(global_step, dtype)
        p = step / math_ops.cast(convert_to_tensor(decay_steps), dtype)
        if staircase:
            p = math_ops.floor(p)
        return math_ops.multiply(lr, math_ops.pow(math_ops.cast(convert_to_tensor(decay_rate),
                                                                dtype), p))


def piecewise_constant(x, boundaries, values, name=None):
    """values[i] while boundaries[i-1] < x <= boundaries[i] (values has one more entry)."""
    if len(values) != len(boundaries) + 1:
        raise ValueError(f"piecewise_constant: values must have one more element than "
                         f"boundaries ({len(values)} values, {len(boundaries)} boundaries)")
    with graph_lib.get_default_graph().name_scope(name or "PiecewiseConstant"):
        x = convert_to_tensor(x)
        value_tensors = [convert_to_tensor(v) for v in values]
        dtype = value_tensors[0].dtype
        value_tensors = [math_ops.cast(v, dtype) for v in value_tensors]
        result = value_tensors[-1]
        for boundary, value in reversed(list(zip(boundaries, value_tensors[:-1]))):
            bound = convert_to_tensor(boundary, dtype=x.dtype) if not hasattr(
                boundary, "dtype") else math_ops.cast(boundary, x.dtype)
            result = math_ops.select(math_ops.less_equal(x, bound), value, result)
        return result


def inverse_time_decay(learning_rate, global_step, decay_steps, decay_rate, staircase=False,
                       name=None):
    with graph_lib.get_default_graph().name_scope(name or "InverseTimeDecay"):
        lr = convert_to_tensor(learning_rate)
        step = _step_as_float(global_step, lr.dtype)
        p = step / float(decay_steps)
        if staircase:
            p = math_ops.floor(p)
        return lr / (1 + decay_rate * p)


def polynomial_decay(learning_rate, global_step, decay_steps, end_learning_rate=0.0001,
                     power=1.0, cycle=False, name=None):
    if cycle:
        raise NotImplementedError("polynomial_decay(cycle=True) is not supported yet")
    with graph_lib.get_default_graph().name_scope(name or "PolynomialDecay"):
        lr = convert_to_tensor(learning_rate)
        step = math_ops.minimum(_step_as_float(global_step, lr.dtype), float(decay_steps))
        fraction = 1 - step / float(decay_steps)
        return (lr - end_learning_rate) * math_ops.pow(fraction, convert_to_tensor(
            power, dtype=lr.dtype)) + end_learning_rate
