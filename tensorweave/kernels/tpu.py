"""Kernels of ops/tpu_ops.py: there is no TPU, so each fails as TF's CPU build does."""
from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel


def _no_tpu(op_type):
    return errors.InvalidArgumentError(
        None, None, f"{op_type}: no kernel for this op on the available devices (registered "
        "devices: CPU): it needs a TPU, and tensorweave runs on CPUs")


@register_kernel("ConfigureDistributedTPU")
def configure_distributed_tpu(*, embedding_config, is_global_init):
    raise _no_tpu("ConfigureDistributedTPU")


@register_kernel("ShutdownDistributedTPU")
def shutdown_distributed_tpu():
    raise _no_tpu("ShutdownDistributedTPU")


@register_kernel("CrossReplicaSum")
def cross_replica_sum(input, group_assignment, *, T):  # noqa: A002,N803 - TF's names
    raise _no_tpu("CrossReplicaSum")
