"""Kernel of ops/pinned_memory_ops.py: a build without CUDA has no pinned memory to check."""
from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel


@register_kernel("CheckPinned")
def check_pinned(tensor, *, T):  # noqa: N803 - TF's attr name
    raise errors.FailedPreconditionError(
        None, None, "CheckPinned: the tensor cannot be in GPU-pinned host memory: tensorweave "
        "is built without CUDA (runs on CPUs only), as a TensorFlow build without CUDA reports")
