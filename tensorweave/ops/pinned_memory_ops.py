"""`tf.check_pinned(tensor)`: TF's check that a tensor lives in host memory pinned for a GPU
(CheckPinned). tensorweave runs on CPUs only, so, as a TensorFlow build without CUDA does,
running it fails with FailedPreconditionError; building the graph works (shape: the
input's)."""
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_tensor

register_op("CheckPinned", inputs=["tensor: T"], outputs=["output: T"], attrs={"T": "type"},
            shape_fn=lambda op: [op.inputs[0].shape])
not_differentiable("CheckPinned")


def check_pinned(tensor, name=None):
    return make_tensor("CheckPinned", [convert_to_tensor(tensor)], {}, name or "CheckPinned")
