"""Kernel of ops/user_ops.py."""
import numpy as np

from tensorweave.kernels.registry import register_kernel


@register_kernel("Fact")
def fact():
    return np.array(b"0! == 1", dtype=object)
