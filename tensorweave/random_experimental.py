"""`tf.random.experimental`: the generator API and the seed algebra under their older names.
Re-exports."""
from tensorweave.ops.random_generator import (Algorithm, Generator,  # noqa: F401
                                              create_rng_state, get_global_generator,
                                              set_global_generator)
from tensorweave.ops.stateless_sampling_ops import (fold_in as stateless_fold_in,  # noqa: F401
                                                    split as stateless_split)
from tensorweave.ops.index_shuffle_more import index_shuffle, stateless_shuffle  # noqa: F401,E402
