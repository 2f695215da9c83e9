"""`tf.tpu` on a machine without TPUs (tensorweave runs on CPUs), behaving as a TensorFlow
build without TPU support does:

  initialize_system, shutdown_system   the ConfigureDistributedTPU / ShutdownDistributedTPU
  cross_replica_sum                    and CrossReplicaSum ops build, and running them fails
                                       with InvalidArgumentError (TF: no kernel registered for
                                       the CPU device)
  rewrite, replicate, shard,           need TPU cores to place the computation on: ValueError
  batch_parallel                       when called, naming the function
  bfloat16_scope                       works on CPUs as in TF: a variable asked for as
                                       bfloat16 is stored as float32 and read through a cast
"""
import contextlib

from tensorweave.framework import dtypes, tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops import math_ops, variable_scope
from tensorweave.ops.gradients import not_differentiable, register_gradient
from tensorweave.ops.op_util import make_op, make_tensor

register_op("ConfigureDistributedTPU", inputs=[], outputs=["topology: string"],
            attrs={"embedding_config": ("string", ""), "is_global_init": ("bool", False)},
            shape_fn=lambda op: [tensor_shape.TensorShape([])], stateful=True)
register_op("ShutdownDistributedTPU", inputs=[], outputs=[], attrs={}, shape_fn=lambda op: [],
            stateful=True)
register_op("CrossReplicaSum", inputs=["input: T", "group_assignment: int32"],
            outputs=["output: T"], attrs={"T": "type"},
            shape_fn=lambda op: [op.inputs[0].shape])
not_differentiable("ConfigureDistributedTPU")
not_differentiable("ShutdownDistributedTPU")


@register_gradient("CrossReplicaSum")
def _cross_replica_sum_grad(op, grad):
    """The sum's gradient is the sum of the replicas' gradients (TF's rule)."""
    return [cross_replica_sum(grad, op.inputs[1]), None]


def initialize_system(embedding_config=None, job=None, compilation_failure_closes_chips=True,
                      tpu_cancellation_closes_chips=None):
    """The TPU system's topology (a serialized string) once initialised; fails when run."""
    return make_tensor("ConfigureDistributedTPU", [],
                       {"embedding_config": embedding_config or ""}, "ConfigureDistributedTPU")


def shutdown_system(job=None):
    return make_op("ShutdownDistributedTPU", [], {}, "ShutdownDistributedTPU")


def cross_replica_sum(x, group_assignment=None, name=None):
    """The sum of `x` over the TPU replicas of its group; fails when run (no TPU)."""
    x = convert_to_tensor(x)
    group = convert_to_tensor(group_assignment if group_assignment is not None else
                              [[0]], dtype=dtypes.int32)
    return make_tensor("CrossReplicaSum", [x, group], {}, name or "CrossReplicaSum")


def _needs_tpu(what):
    def refuse(*args, **kwargs):
        raise ValueError(f"tf.tpu.{what}: there are no TPU cores to place the computation on "
                         "(tensorweave runs on CPUs); call the computation directly, or use "
                         "a tf.distribute strategy")
    refuse.__name__ = what
    refuse.__doc__ = f"tf.tpu.{what}: needs TPU cores, which this machine has none of."
    return refuse


rewrite = _needs_tpu("rewrite")
replicate = _needs_tpu("replicate")
shard = _needs_tpu("shard")
batch_parallel = _needs_tpu("batch_parallel")


def _bfloat16_getter(getter, name, *args, **kwargs):
    requested = kwargs.get("dtype")
    if requested is not None and dtypes.as_dtype(requested) == dtypes.bfloat16:
        kwargs["dtype"] = dtypes.float32
        initializer = kwargs.get("initializer")
        if callable(initializer) and not isinstance(initializer, type):
            kwargs["initializer"] = lambda *a, **k: math_ops.cast(
                initializer(*a, **{**k, "dtype": dtypes.float32}), dtypes.float32)
        return math_ops.cast(getter(name, *args, **kwargs), dtypes.bfloat16)
    return getter(name, *args, **kwargs)


@contextlib.contextmanager
def bfloat16_scope(name=None):
    """A variable scope in which variables requested as bfloat16 are kept as float32 and
    read as bfloat16 (what TPU programs train mixed-precision models with)."""
    with variable_scope.variable_scope(name or "", custom_getter=_bfloat16_getter) as scope:
        yield scope
