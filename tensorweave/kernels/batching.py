"""Kernels of the Batch / Unbatch ops (ops/batch_ops.py): concurrent steps that run the same
batched function have their inputs concatenated and computed once.

A Batch kernel puts its step's request (one row block per input) into the batcher named by
its shared_name and waits. The request that fills the batch to max_batch_size, or the oldest
request once batch_timeout_micros have passed since it came, becomes the batch's leader: its
Batch outputs the concatenated inputs (padded with copies of the last row up to the next of
allowed_batch_sizes) and the batch index, a [members, 3] int64 of (request id, first row,
end row); every other member outputs empty inputs and an empty index. Each step then runs the
function on what its Batch gave it; the leader's Unbatch hands every member its rows of the
result (padding dropped), and a member's Unbatch waits for them (DeadlineExceededError after
timeout_micros). Waiting always checks the step's cancellation.
"""
import itertools
import threading
import time

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel

_POLL_SECONDS = 0.01
_BATCHERS = {}
_REGISTRY_LOCK = threading.Lock()
_IDS = itertools.count(1)


class _Batcher:
    def __init__(self):
        self.condition = threading.Condition()
        self.pending = []      # [(id, arrays, arrival time)]
        self.batches = {}      # id -> (arrays, index) for the leader of a formed batch
        self.members = set()   # ids taken into a batch whose leader is not this request
        self.results = {}      # id -> [arrays] handed out by a leader's Unbatch


def _batcher(name):
    with _REGISTRY_LOCK:
        return _BATCHERS.setdefault(name, _Batcher())


def _rows(request):
    return int(request[1][0].shape[0]) if request[1] and request[1][0].ndim else 1


def _form(batcher, requests, allowed):
    """Concatenates `requests` into a batch for the first one (its leader)."""
    index, start = [], 0
    for request_id, arrays, _ in requests:
        size = _rows((request_id, arrays, 0))
        index.append((request_id, start, start + size))
        start += size
    joined = [np.concatenate([arrays[k] for _, arrays, _ in requests]) for k in
              range(len(requests[0][1]))]
    target = next((size for size in sorted(allowed) if size >= start), start)
    if target > start:
        joined = [np.concatenate([part] + [part[-1:]] * (target - start)) for part in joined]
    leader = requests[0][0]
    batcher.batches[leader] = (joined, np.array(index, np.int64).reshape(-1, 3))
    batcher.members.update(request_id for request_id, _, _ in requests[1:])


@register_kernel("Batch", step_context=True, execution="blocking")
def batch(step, *in_tensors, num_batch_threads, max_batch_size, max_enqueued_batches,
          batch_timeout_micros, allowed_batch_sizes, grad_timeout_micros, container,
          shared_name, batching_queue, T):  # noqa: N803 - TF's attr name
    arrays = [np.asarray(t) for t in in_tensors]
    sizes = {int(a.shape[0]) if a.ndim else -1 for a in arrays}
    if len(sizes) != 1 or -1 in sizes:
        raise errors.InvalidArgumentError(None, None, f"Batch: every input must have the same "
                                          f"first (batch) dimension, got sizes {sorted(sizes)}")
    batcher = _batcher(f"{container}/{shared_name}")
    request_id = next(_IDS)
    timeout = batch_timeout_micros / 1e6
    with batcher.condition:
        batcher.pending.append((request_id, arrays, time.monotonic()))
        batcher.condition.notify_all()
        while True:
            if request_id in batcher.batches:
                joined, index = batcher.batches.pop(request_id)
                return tuple(joined) + (index, np.int64(request_id))
            if request_id in batcher.members:
                batcher.members.discard(request_id)
                empty = [np.zeros((0,) + a.shape[1:], a.dtype) for a in arrays]
                return tuple(empty) + (np.zeros((0, 3), np.int64), np.int64(request_id))
            rows = sum(_rows(r) for r in batcher.pending)
            oldest = batcher.pending[0]
            if rows >= max_batch_size or (oldest[0] == request_id and
                                          time.monotonic() - oldest[2] >= timeout):
                taken, total = [], 0
                for request in list(batcher.pending):
                    if taken and total + _rows(request) > max_batch_size:
                        break
                    taken.append(request)
                    total += _rows(request)
                for request in taken:
                    batcher.pending.remove(request)
                _form(batcher, taken, allowed_batch_sizes)
                batcher.condition.notify_all()
                continue
            batcher.condition.wait(_POLL_SECONDS)
            try:
                step.cancellation.raise_if_cancelled()
            except Exception:
                batcher.pending = [r for r in batcher.pending if r[0] != request_id]
                raise


@register_kernel("Unbatch", step_context=True, execution="blocking")
def unbatch(step, batched_tensor, batch_index, id, *, timeout_micros, container,  # noqa: A002
            shared_name, T):  # noqa: N803
    batcher = _batcher(f"{container}/{shared_name}/unbatch")
    own = int(id)
    index = np.asarray(batch_index).reshape(-1, 3)
    with batcher.condition:
        if index.shape[0]:
            mine = None
            for member, start, end in index:
                rows = np.asarray(batched_tensor)[start:end]
                if int(member) == own:
                    mine = rows
                else:
                    batcher.results[int(member)] = rows
            batcher.condition.notify_all()
            if mine is None:
                raise errors.InvalidArgumentError(None, None, f"Unbatch: the batch index does "
                                                  f"not hold this step's id {own}")
            return mine
        deadline = time.monotonic() + timeout_micros / 1e6
        while own not in batcher.results:
            if time.monotonic() > deadline:
                raise errors.DeadlineExceededError(
                    None, None, f"Unbatch: the batch holding request {own} gave no result "
                    f"within timeout_micros={timeout_micros}")
            batcher.condition.wait(_POLL_SECONDS)
            step.cancellation.raise_if_cancelled()
        return batcher.results.pop(own)
