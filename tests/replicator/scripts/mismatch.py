"""Rank 0 calls all_sum where rank 1 calls all_gather: both must fail while building the
graph (the signature exchange), and say so, with no step run."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))))

import tensorweave as tf  # noqa: E402
from tensorweave import replicator  # noqa: E402

repl = replicator.MultiWorkerReplicator(mode="allreduce")


def step_fn():
    x = tf.ones([3])
    if repl.worker_index == 0:
        return replicator.all_sum(x)
    return replicator.all_gather(x)


try:
    repl.run(step_fn)
except ValueError as exc:
    print("MISMATCH", exc, flush=True)
else:
    print("NO ERROR", flush=True)
