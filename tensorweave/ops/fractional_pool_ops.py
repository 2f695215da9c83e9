"""Fractional max and average pooling (tf.nn.fractional_max_pool / fractional_avg_pool,
Graham 2014): the rows (and columns) are cut into output_size = floor(input_size / ratio)
regions of k or k + 1 cells, at random: a random permutation of the region sizes, or with
`pseudo_random` the sequence ceil(alpha * (i + u)) for one uniform u. With `overlapping` a
region also takes the first cell of the next. Each op also returns the two cut sequences
(row_pooling_sequence, col_pooling_sequence: output_size + 1 boundaries each), which its
gradient reuses.

The region sizes follow TF's rules, but the random draws are NumPy's (seeded by the op's
(seed, seed2)), so the sequences differ from TF's for the same seeds. `deterministic=True`
draws the same sequences at every run (from the seeds); otherwise each run draws anew.

Gradients: FractionalMaxPoolGrad routes each output's gradient to the first cell (row-major)
of its region holding the maximum; FractionalAvgPoolGrad spreads it evenly over the region.
"""
import collections

from tensorweave.framework import dtypes
from tensorweave.framework import random_seed
from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops.array_ops import shape as shape_of
from tensorweave.ops.gradients import not_differentiable, register_gradient
from tensorweave.ops.op_util import make_op, make_tensor

_FLOATS = (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64)
_ATTRS = {"T": "type", "pooling_ratio": "list(float)", "pseudo_random": ("bool", False),
          "overlapping": ("bool", False), "deterministic": ("bool", False),
          "seed": ("int", 0), "seed2": ("int", 0)}
Pooled = collections.namedtuple("FractionalPool", ["output", "row_pooling_sequence",
                                                   "col_pooling_sequence"])


def _pool_shape(op):
    ratio = list(op.get_attr("pooling_ratio"))
    if len(ratio) != 4 or ratio[0] != 1.0 or ratio[3] != 1.0:
        raise ValueError(f"{op.type} {op.name}: pooling_ratio must be [1.0, rows, cols, 1.0] "
                         f"(no pooling over batch or depth), got {ratio}")
    if min(ratio) < 1.0:
        raise ValueError(f"{op.type} {op.name}: every pooling_ratio must be >= 1.0, got {ratio}")
    shape = op.inputs[0].shape
    if shape.ndims not in (None, 4):
        raise ValueError(f"{op.type} {op.name}: value must be 4-D (NHWC), got {shape}")
    dims = shape.as_list() if shape.ndims else [None] * 4
    out = [None if d is None else int(d // r) for d, r in zip(dims, ratio)]
    for axis in (1, 2):
        if out[axis] == 0:
            raise ValueError(f"{op.type} {op.name}: pooling_ratio {ratio[axis]} leaves no output "
                             f"for an input dimension of {dims[axis]}")
    sequences = [tensor_shape.TensorShape([None if out[a] is None else out[a] + 1])
                 for a in (1, 2)]
    return [tensor_shape.TensorShape(out)] + sequences


for _op_type in ("FractionalMaxPool", "FractionalAvgPool"):
    register_op(_op_type, inputs=["value: T"],
                outputs=["output: T", "row_pooling_sequence: int64",
                         "col_pooling_sequence: int64"],
                attrs=dict(_ATTRS), shape_fn=_pool_shape, stateful=True,
                allowed_types={"T": _FLOATS})
register_op("FractionalMaxPoolGrad",
            inputs=["orig_input: T", "orig_output: T", "out_backprop: T",
                    "row_pooling_sequence: int64", "col_pooling_sequence: int64"],
            outputs=["output: T"], attrs={"T": "type", "overlapping": ("bool", False)},
            shape_fn=lambda op: [op.inputs[0].shape], allowed_types={"T": _FLOATS})
register_op("FractionalAvgPoolGrad",
            inputs=["orig_input_tensor_shape: int64", "out_backprop: T",
                    "row_pooling_sequence: int64", "col_pooling_sequence: int64"],
            outputs=["output: T"], attrs={"T": "type", "overlapping": ("bool", False)},
            shape_fn=lambda op: [tensor_shape.unknown_shape(4)], allowed_types={"T": _FLOATS})
not_differentiable("FractionalMaxPoolGrad")
not_differentiable("FractionalAvgPoolGrad")


@register_gradient("FractionalMaxPool")
def _fractional_max_pool_grad(op, grad, _rows, _cols):
    return [make_tensor("FractionalMaxPoolGrad",
                        [op.inputs[0], op.outputs[0], grad, op.outputs[1], op.outputs[2]],
                        {"overlapping": op.get_attr("overlapping")})]


@register_gradient("FractionalAvgPool")
def _fractional_avg_pool_grad(op, grad, _rows, _cols):
    result = make_tensor("FractionalAvgPoolGrad",
                         [shape_of(op.inputs[0], out_type=dtypes.int64), grad, op.outputs[1],
                          op.outputs[2]], {"overlapping": op.get_attr("overlapping")})
    result.set_shape(op.inputs[0].shape)
    return [result]


def _pool(op_type, public_name):
    def pool(value, pooling_ratio, pseudo_random=False, overlapping=False,
             deterministic=False, seed=0, seed2=0, name=None):
        ratio = [float(r) for r in pooling_ratio]
        if len(ratio) == 2:  # TF 2's form: the spatial ratios only
            ratio = [1.0, *ratio, 1.0]
        if seed == 0 and seed2 == 0:
            graph_seed, op_seed = random_seed.get_seed(None)
            seed, seed2 = graph_seed or 0, op_seed or 0
        op = make_op(op_type, [convert_to_tensor(value)],
                     {"pooling_ratio": ratio, "pseudo_random": bool(pseudo_random),
                      "overlapping": bool(overlapping), "deterministic": bool(deterministic),
                      "seed": int(seed), "seed2": int(seed2)}, name or op_type)
        return Pooled(*op.outputs)
    pool.__name__ = public_name
    return pool


fractional_max_pool = _pool("FractionalMaxPool", "fractional_max_pool")
fractional_avg_pool = _pool("FractionalAvgPool", "fractional_avg_pool")
