"""`tf.tpu`: TF's TPU API as a build without TPUs answers it (ops/tpu_ops.py,
train/tpu_optimizer.py). Re-exports only."""
from tensorweave.ops.tpu_ops import (batch_parallel, bfloat16_scope,  # noqa: F401
                                     cross_replica_sum, initialize_system, replicate, rewrite,
                                     shard, shutdown_system)
from tensorweave.train.tpu_optimizer import CrossShardOptimizer  # noqa: F401
