"""TF-Replicator: write the step for one replica, get it run on many.

    repl = replicator.MultiDeviceReplicator()          # or MultiWorkerReplicator(mode=...)
    with repl.context():
        model = build_model()
        opt = repl.wrap_optimizer(tf.train.AdamOptimizer(1e-3))
    per_replica_loss = repl.run(step_fn, input_fn)    # step_fn(inputs) builds one replica
    loss = repl.reduce(per_replica_loss, "mean")

Inside step_fn: `all_reduce(x, op)`, `all_sum`, `all_gather`, `broadcast(x, root)` and
`repl.replica_id`. Re-exports only.
"""
from tensorweave.replicator.context import (all_gather, all_reduce, all_sum,  # noqa: F401
                                            broadcast)
from tensorweave.replicator.multi_device import MultiDeviceReplicator  # noqa: F401
from tensorweave.replicator.multi_worker import MultiWorkerReplicator  # noqa: F401
