"""`tf.train.experimental`: re-exports only."""
from tensorweave.train.loss_scale import (DynamicLossScale, FixedLossScale,  # noqa: F401
                                          LossScale, MixedPrecisionLossScaleOptimizer)
from tensorweave.train.loss_scale import (  # noqa: F401
    disable_mixed_precision_graph_rewrite, enable_mixed_precision_graph_rewrite)
from tensorweave.train.checkpoint_options import PythonState  # noqa: F401,E402
from tensorweave.train.checkpoint_sharding import (MaxShardSizePolicy,  # noqa: F401,E402
                                                   ShardableTensor, ShardByTaskPolicy,
                                                   ShardingCallback)
