"""`tf.contrib.stateless` (TF 1.x): random numbers that depend only on a shape and a `seed` of
two integers, the same on every run and every device. Re-exports only."""
from tensorweave.ops.random_sampling_ops import (  # noqa: F401
    stateless_normal as stateless_random_normal,
    stateless_truncated_normal as stateless_truncated_normal,
    stateless_multinomial)
from tensorweave.ops.stateless_random_ops import stateless_random_uniform  # noqa: F401
