"""`tf.contrib.training`: HParams (hparam.py) and the training-loop helpers (training.py).
Re-exports only."""
from tensorweave.contrib.training.hparam import HParams, parse_values  # noqa: F401
from tensorweave.contrib.training.training import (add_gradients_summaries,  # noqa: F401
                                                   clip_gradient_norms, create_train_op,
                                                   multiply_gradients, train)
