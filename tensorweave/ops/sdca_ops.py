"""`tf.train.sdca_fprint(input)`: the SdcaFprint op, a [N, 2] int64 fingerprint (FarmHash
Fingerprint128) of each of N strings, which TF's SDCA uses as compact example ids
(kernels/fingerprint128.py). Not differentiable."""
from tensorweave.framework import dtypes, tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_tensor


def _shape(op):
    shape = op.inputs[0].shape
    if not shape.is_compatible_with([None]):
        raise ValueError(f"SdcaFprint {op.name}: input must be a vector, got shape {shape}")
    return [tensor_shape.TensorShape([shape.as_tuple()[0] if shape.ndims else None, 2])]


register_op("SdcaFprint", inputs=["input: string"], outputs=["output: int64"], shape_fn=_shape)
not_differentiable("SdcaFprint")


def sdca_fprint(input, name=None):  # noqa: A002 - TF's name
    return make_tensor("SdcaFprint", [convert_to_tensor(input, dtype=dtypes.string)], {},
                       name or "SdcaFprint")
