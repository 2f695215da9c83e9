"""The cross-replica primitives between 2 processes (MultiWorkerReplicator, allreduce): every
rank prints its results as a RESULT line for the test to compare with NumPy, then builds a
second run where rank 0 calls all_sum and rank 1 all_gather, which must fail while the graph
is built (the ranks exchange their calls' signatures) and says so in `mismatch`."""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))))

import tensorweave as tf  # noqa: E402
from tensorweave import replicator  # noqa: E402

VALUES = np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2) - 4
WEIGHTS = np.linspace(-1, 1, 2 * 6 * 2, dtype=np.float32).reshape(2, 6, 2)


def main():
    repl = replicator.MultiWorkerReplicator(mode="allreduce")
    rank = repl.worker_index

    def step_fn():
        x = tf.constant(VALUES[rank])
        gathered = replicator.all_gather(x)
        loss = tf.reduce_sum(gathered * WEIGHTS[rank]) + \
            tf.reduce_sum(tf.square(replicator.all_reduce(x, "mean")))
        return {"sum": replicator.all_sum(x), "max": replicator.all_reduce(x, "max"),
                "gather": gathered, "bcast": replicator.broadcast(x, 1),
                "grad": tf.gradients(loss, x)[0], "id": repl.replica_id}

    [outputs] = repl.run(step_fn)
    mean = repl.reduce([outputs["sum"]], "mean")
    with tf.Session() as sess:
        got = sess.run(dict(outputs, reduced=mean))
    try:
        repl.run(lambda: replicator.all_sum(tf.ones([3])) if rank == 0 else
                 replicator.all_gather(tf.ones([3])))
        mismatch = "no error"
    except ValueError as exc:
        mismatch = str(exc)
    print("RESULT " + json.dumps({"rank": rank, "mismatch": mismatch,
                                  **{k: np.asarray(v).tolist() for k, v in got.items()}}),
          flush=True)


if __name__ == "__main__":
    main()
