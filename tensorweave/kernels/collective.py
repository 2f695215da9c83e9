"""Kernels of the collective ops (ops/collective_ops.py): they hand their tensor to the current
communicator and complete when every rank has taken part. The communicator lives in a higher
layer (tensorweave/collective/), which registers itself here with set_communicator_provider
when it is imported; the kernels only rely on `submit(kind, array, name, ...) -> Future`,
`size` and `rank`.

The kernels are asynchronous: no executor thread waits while the peers catch up, and a
cancelled step (a deadline, a failure elsewhere) completes them with its error at once.
"""
import threading

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel

_provider = None


def set_communicator_provider(provider):
    """`provider()` returns the current communicator or raises FailedPreconditionError."""
    global _provider
    _provider = provider


def _communicator(op_name):
    if _provider is None:
        raise errors.FailedPreconditionError(None, None, f"{op_name}: collective ops need a "
                                             "communicator: call tensorweave.collective.init()"
                                             " (or hvd.init()) first")
    return _provider()


def _collective_name(tensor_name, instance_key):
    return f"instance:{instance_key}" if instance_key else tensor_name


def _start(step, done, op_type, tensor_name, group, kind, array, **params):
    """Submits the collective and wires its completion (or the step's cancellation) to done.
    `group` is (group_size, group_key, instance_key, group_ranks): among `group_ranks` if
    given, else, when group_size is not the whole job, among the first group_size ranks to
    use group_key (TF's groups)."""
    group_size, group_key, instance_key, group_ranks = group
    comm = _communicator(f"{op_type} '{tensor_name}'")
    if group_ranks:
        params["process_set"] = list(group_ranks)
    elif group_size and group_size != comm.size:  # TF's group: its members join at run time
        params["group"] = (group_key, group_size)
    future = comm.submit(kind, array, _collective_name(tensor_name, instance_key), **params)
    _complete(step, done, future,
              label_of=lambda plane: f"{op_type} {tensor_name}: {plane}, {array.nbytes} bytes")


def _complete(step, done, future, convert=None, label_of=None):
    """Calls done with the future's result (through `convert`) or error, or with the step's
    error if the step is cancelled first. `label_of(plane)` labels the op's step stats with
    the data plane the communicator used ("shm", "tcp", "mpi")."""
    lock = threading.Lock()
    state = {"finished": False, "token": None}

    def finish(outputs, error=None, label=""):
        with lock:
            if state["finished"]:
                return
            state["finished"] = True
            token = state["token"]
        step.cancellation.remove_callback(token)
        if error is not None:
            done(None, error)
        elif label:
            done(outputs, label=label)
        else:
            done(outputs)

    def on_done(completed):
        error = completed.exception()
        if error is not None:
            finish(None, error)
            return
        plane = getattr(completed, "data_plane", "")
        label = label_of(plane) if label_of and plane else ""
        finish(completed.result() if convert is None else convert(completed.result()),
               label=label)

    token = step.cancellation.add_callback(lambda error: finish(None, error))
    with lock:
        state["token"] = token
    future.add_done_callback(on_done)


@register_kernel("CollectiveAllReduce", step_context=True, execution="async")
def all_reduce(step, tensor, *, done, T, reduction, group_size, group_key, instance_key,
               tensor_name, compression, group_ranks):
    _start(step, done, "CollectiveAllReduce", tensor_name,
           (group_size, group_key, instance_key, group_ranks), "allreduce",
           np.asarray(tensor, T.np_dtype), op=reduction,
           compression=None if compression == "none" else compression)


@register_kernel("CollectiveAllGather", step_context=True, execution="async")
def all_gather(step, tensor, *, done, T, group_size, group_key, instance_key, tensor_name,
               group_ranks):
    _start(step, done, "CollectiveAllGather", tensor_name,
           (group_size, group_key, instance_key, group_ranks), "allgather",
           np.asarray(tensor, T.np_dtype))


@register_kernel("CollectiveBroadcast", step_context=True, execution="async")
def broadcast(step, tensor, *, done, T, root_rank, group_size, group_key, instance_key,
              tensor_name, group_ranks):
    _start(step, done, "CollectiveBroadcast", tensor_name,
           (group_size, group_key, instance_key, group_ranks), "broadcast",
           np.asarray(tensor, T.np_dtype), root=root_rank)


@register_kernel("CollectiveReduceScatter", step_context=True, execution="async")
def reduce_scatter(step, tensor, *, done, T, reduction, group_size, group_key, instance_key,
                   tensor_name, group_ranks):
    _start(step, done, "CollectiveReduceScatter", tensor_name,
           (group_size, group_key, instance_key, group_ranks), "reduce_scatter",
           np.asarray(tensor, T.np_dtype), op=reduction)


@register_kernel("CollectiveAllGatherGrad", step_context=True, execution="async")
def all_gather_grad(step, grad, rows, *, done, T, group_size, group_key, instance_key,
                    tensor_name, group_ranks):
    _start(step, done, "CollectiveAllGatherGrad", tensor_name,
           (group_size, group_key, instance_key, group_ranks), "reduce_scatter",
           np.asarray(grad, T.np_dtype), op="sum", rows=int(rows))


@register_kernel("CollectiveAllToAll", step_context=True, execution="async")
def all_to_all(step, tensor, splits, *, done, T, group_size, group_key, instance_key,
               tensor_name, group_ranks):
    _start(step, done, "CollectiveAllToAll", tensor_name,
           (group_size, group_key, instance_key, group_ranks), "alltoall",
           np.asarray(tensor, T.np_dtype),
           splits=None if np.size(splits) == 0 else [int(s) for s in np.ravel(splits)])


@register_kernel("CollectiveJoin", step_context=True, execution="async")
def join(step, *, done):
    future = _communicator("CollectiveJoin").join_async()
    _complete(step, done, future, lambda last: np.int32(last))
