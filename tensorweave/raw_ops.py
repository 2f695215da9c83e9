"""`tf.raw_ops`: every op type tensorweave registers, as a function taking keyword arguments
named as the op's inputs and attrs (all by keyword, as TF's raw ops), plus `name`. It returns
the op's one output, a tuple-like of its outputs (a list output as a list), or the Operation
when it has none: `tf.raw_ops.MatMul(a=x, b=y, transpose_b=True)`."""
import collections

from tensorweave.framework import op_def as op_defs
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops.op_util import make_op


def _convert(value, arg, bound):
    dtype = arg.fixed_dtype or bound.get(arg.type_attr)
    tensor = convert_to_tensor(value, dtype=dtype) if dtype is not None else \
        convert_to_tensor(value)
    if arg.type_attr and arg.type_attr not in bound:
        bound[arg.type_attr] = tensor.dtype
    return tensor


def _outputs(op, definition):
    if not definition.outputs:
        return op
    values, at = [], 0
    for arg in definition.outputs:
        if arg.number_attr:
            count = op.get_attr(arg.number_attr)
        elif arg.type_list_attr:
            count = len(op.get_attr(arg.type_list_attr))
        else:
            values.append(op.outputs[at])
            at += 1
            continue
        values.append(list(op.outputs[at:at + count]))
        at += count
    if len(values) == 1:
        return values[0]
    return collections.namedtuple(definition.name, [a.name for a in definition.outputs])(*values)


def _raw_op(op_type):
    definition = op_defs.get_op_def(op_type)

    def raw_op(**kwargs):
        name = kwargs.pop("name", None)
        inputs, bound = [], {}
        for arg in definition.inputs:
            if arg.name not in kwargs:
                raise TypeError(f"raw_ops.{op_type}: missing input {arg.name!r} (inputs: "
                                f"{[a.name for a in definition.inputs]})")
            value = kwargs.pop(arg.name)
            if arg.is_list:
                inputs.append([_convert(v, arg, bound) for v in value])
            else:
                inputs.append(_convert(value, arg, bound))
        unknown = sorted(set(kwargs) - set(definition.attrs))
        if unknown:
            raise TypeError(f"raw_ops.{op_type}: unexpected arguments {unknown} (attrs: "
                            f"{sorted(definition.attrs)})")
        return _outputs(make_op(op_type, inputs, kwargs or None, name), definition)

    raw_op.__name__ = raw_op.__qualname__ = op_type
    raw_op.__doc__ = definition.doc or f"The {op_type} op."
    return raw_op


def __getattr__(name):
    if name.startswith("_") or name not in op_defs.registered_op_types():
        raise AttributeError(f"tf.raw_ops has no op {name!r} (tensorweave registers "
                             f"{len(op_defs.registered_op_types())} op types)")
    function = _raw_op(name)
    globals()[name] = function
    return function


def __dir__():
    return op_defs.registered_op_types()
