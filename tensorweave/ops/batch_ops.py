"""`tf.nondifferentiable_batch_function` (TF 1.x's batch_function): a decorator whose
function, when several steps (concurrent session.run calls) run it at once, sees their inputs
concatenated along the first dimension and runs once for all of them (kernels/batching.py).
Built as TF 1.x first built it: Batch -> the function -> Unbatch per output. Every argument
must be a tensor batched along its first dimension; the function must map a batch of n rows
(n may be 0 for the steps whose rows went to another step's batch) to outputs of n rows.
The outputs are not differentiable."""
import itertools

from tensorweave.framework import tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import name_scope
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_op

register_op("Batch", inputs=["in_tensors: T"],
            outputs=["batched_tensors: T", "batch_index: int64", "id: int64"],
            attrs={"num_batch_threads": "int", "max_batch_size": "int",
                   "max_enqueued_batches": ("int", 10), "batch_timeout_micros": "int",
                   "allowed_batch_sizes": ("list(int)", []), "grad_timeout_micros": "int",
                   "container": ("string", ""), "shared_name": ("string", ""),
                   "batching_queue": ("string", ""), "T": "list(type)"},
            shape_fn=lambda op: [tensor_shape.TensorShape([None] + t.shape.as_list()[1:])
                                 if t.shape.ndims else tensor_shape.unknown_shape()
                                 for t in op.inputs] +
            [tensor_shape.TensorShape([None, 3]), tensor_shape.TensorShape([])],
            stateful=True)
register_op("Unbatch", inputs=["batched_tensor: T", "batch_index: int64", "id: int64"],
            outputs=["unbatched_tensor: T"],
            attrs={"timeout_micros": "int", "container": ("string", ""),
                   "shared_name": ("string", ""), "T": "type"},
            shape_fn=lambda op: [tensor_shape.TensorShape([None] +
                                                          op.inputs[0].shape.as_list()[1:])
                                 if op.inputs[0].shape.ndims else
                                 tensor_shape.unknown_shape()], stateful=True)
not_differentiable("Batch")
not_differentiable("Unbatch")
_SERIAL = itertools.count()


def batch_function(num_batch_threads, max_batch_size, batch_timeout_micros,
                   allowed_batch_sizes=None, max_enqueued_batches=10, autograph=True,
                   enable_large_batch_splitting=True):
    """See the module docstring; allowed_batch_sizes (increasing, the last equal to
    max_batch_size) pad a batch up to the next allowed size."""
    allowed = list(allowed_batch_sizes or [])
    if max_batch_size < 1 or batch_timeout_micros < 0:
        raise ValueError(f"batch_function: max_batch_size must be >= 1 and "
                         f"batch_timeout_micros >= 0, got {max_batch_size} and "
                         f"{batch_timeout_micros}")
    if allowed and (allowed != sorted(allowed) or allowed[-1] != max_batch_size):
        raise ValueError(f"batch_function: allowed_batch_sizes must increase and end with "
                         f"max_batch_size={max_batch_size}, got {allowed}")

    def decorator(function):
        shared = f"batch_function_{getattr(function, '__name__', 'f')}_{next(_SERIAL)}"

        def run(*args):
            with name_scope("batch"):
                tensors = [convert_to_tensor(a) for a in args]
                op = make_op("Batch", [tensors], {
                    "num_batch_threads": int(num_batch_threads),
                    "max_batch_size": int(max_batch_size),
                    "max_enqueued_batches": int(max_enqueued_batches),
                    "batch_timeout_micros": int(batch_timeout_micros),
                    "allowed_batch_sizes": allowed, "grad_timeout_micros": 0,
                    "shared_name": shared}, "Batch")
                batched, index, request = op.outputs[:-2], op.outputs[-2], op.outputs[-1]
                result = function(*batched)
                single = not isinstance(result, (list, tuple))
                outputs = [result] if single else list(result)
                unbatched = [make_op("Unbatch", [array_ops.stop_gradient(
                    convert_to_tensor(out)), index, request], {
                        "timeout_micros": max(int(batch_timeout_micros) * 10, 60_000_000),
                        "shared_name": f"{shared}_output_{k}"}, "Unbatch").outputs[0]
                    for k, out in enumerate(outputs)]
                return unbatched[0] if single else type(result)(unbatched)
        run.__name__ = getattr(function, "__name__", "batched")
        return run
    return decorator


nondifferentiable_batch_function = batch_function
