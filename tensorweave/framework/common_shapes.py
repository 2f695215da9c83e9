"""Shape functions shared by many ops. Each takes an Operation, returns a list of TensorShapes."""
from tensorweave.framework import tensor_shape
from tensorweave.framework import tensor_util

unknown = tensor_shape.unknown_shape
TensorShape = tensor_shape.TensorShape


def unchanged(op):
    """One output shaped like input 0."""
    return [op.inputs[0].shape]


def scalar(op):
    return [TensorShape([])] * len(op.outputs)


def unknown_outputs(op):
    return [unknown()] * len(op.outputs)


def no_outputs(op):
    return []


def broadcast_shapes(a, b):
    """The NumPy broadcast of two static shapes; raises ValueError if incompatible."""
    a, b = tensor_shape.as_shape(a), tensor_shape.as_shape(b)
    if a.ndims is None or b.ndims is None:
        return unknown()
    da, db = a.as_tuple(), b.as_tuple()
    rank = max(len(da), len(db))
    da = (1,) * (rank - len(da)) + da
    db = (1,) * (rank - len(db)) + db
    result = []
    for x, y in zip(da, db):
        if x == 1:
            result.append(y)
        elif y == 1:
            result.append(x)
        elif x is None:
            result.append(y)
        elif y is None:
            result.append(x)
        elif x == y:
            result.append(x)
        else:
            raise ValueError(f"Incompatible shapes for broadcasting: {a} and {b}")
    return TensorShape(result)


def broadcast_binary(op):
    return [broadcast_shapes(op.inputs[0].shape, op.inputs[1].shape)]


def merged_inputs(op):
    """All inputs must have compatible shapes; the output has their merge."""
    shape = unknown()
    for tensor in op.inputs:
        try:
            shape = shape.merge_with(tensor.shape)
        except ValueError:
            raise ValueError(f"Shapes must be equal: {shape} vs {tensor.shape} "
                             f"({tensor.name})") from None
    return [shape] * len(op.outputs)


def reduction(op):
    """Reduce input 0 over the axes in input 1 (a constant if the shape is to be known)."""
    shape = op.inputs[0].shape
    keep_dims = op.get_attr("keep_dims")
    axes_value = tensor_util.constant_value(op.inputs[1])
    if shape.ndims is None:
        return [unknown()]
    rank = shape.ndims
    if axes_value is None:
        return [unknown(rank) if keep_dims else unknown()]
    axes = set()
    for axis in axes_value.reshape(-1).tolist():
        if not -rank <= axis < rank:
            raise ValueError(f"Invalid reduction axis {axis} for input of rank {rank} "
                             f"(valid range [{-rank}, {rank}))")
        axes.add(axis % rank)
    dims = shape.as_tuple()
    if keep_dims:
        return [TensorShape([1 if i in axes else d for i, d in enumerate(dims)])]
    return [TensorShape([d for i, d in enumerate(dims) if i not in axes])]
