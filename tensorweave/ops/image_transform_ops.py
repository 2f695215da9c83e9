"""Projective image transforms and connected components (tf.contrib.image's ops):
ImageProjectiveTransformV2 with its exact adjoint as the gradient to the images, and
ImageConnectedComponents. Kernels: kernels/image_transform.py."""
from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework import tensor_util
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops
from tensorweave.ops.gradients import not_differentiable, register_gradient
from tensorweave.ops.op_util import make_tensor

TensorShape = tensor_shape.TensorShape
_NUMBER = (dtypes.uint8, dtypes.int32, dtypes.int64, dtypes.float16, dtypes.float32,
           dtypes.float64)


def _transform_shape(op):
    images = op.inputs[0].shape
    if images.ndims not in (None, 4):
        raise ValueError(f"ImageProjectiveTransformV2 '{op.name}': images must be [batch, "
                         f"height, width, channels], got {images}")
    transforms = op.inputs[1].shape
    if transforms.ndims not in (None, 2) or (transforms.ndims == 2 and
                                             transforms.as_tuple()[1] not in (None, 8)):
        raise ValueError(f"ImageProjectiveTransformV2 '{op.name}': transforms must be [N, 8], "
                         f"got {transforms}")
    size = tensor_util.constant_value(op.inputs[2])
    dims = images.as_tuple() if images.ndims == 4 else (None,) * 4
    height, width = (None, None) if size is None else (int(size[0]), int(size[1]))
    return [TensorShape([dims[0], height, width, dims[3]])]


register_op("ImageProjectiveTransformV2",
            inputs=["images: dtype", "transforms: float32", "output_shape: int32"],
            outputs=["transformed_images: dtype"],
            attrs={"dtype": "type", "interpolation": "string"},
            shape_fn=_transform_shape, allowed_types={"dtype": _NUMBER})
register_op("ImageProjectiveTransformV2Grad",
            inputs=["grad: T", "transforms: float32", "image_shape: int32"], outputs=["output: T"],
            attrs={"T": "type", "interpolation": "string"},
            shape_fn=lambda op: [tensor_util.constant_value_as_shape(op.inputs[2])],
            allowed_types={"T": (dtypes.float16, dtypes.float32, dtypes.float64)})
not_differentiable("ImageProjectiveTransformV2Grad")
register_op("ImageConnectedComponents", inputs=["image: dtype"], outputs=["components: int64"],
            attrs={"dtype": "type"}, shape_fn=lambda op: [op.inputs[0].shape])
not_differentiable("ImageConnectedComponents")


@register_gradient("ImageProjectiveTransformV2")
def _transform_grad(op, grad):
    """The adjoint sampling: every output pixel's gradient goes back to the input pixels it
    read (TF itself applies the inverse transform, an approximation). No gradient flows to
    the transforms."""
    images, transforms = op.inputs[0], op.inputs[1]
    if not images.dtype.is_floating:
        return [None, None, None]
    back = make_tensor("ImageProjectiveTransformV2Grad",
                       [grad, transforms, array_ops.shape(images)],
                       {"interpolation": op.get_attr("interpolation")})
    return [back, None, None]
