"""Kernels of the control-flow ops."""
from tensorweave.kernels.registry import register_kernel


@register_kernel("NoOp")
def no_op():
    return ()
