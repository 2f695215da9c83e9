"""`tf.random`: re-exports."""
from tensorweave.framework.random_seed import set_random_seed as set_seed  # noqa: F401
from tensorweave.ops.random_ops import (random_normal as normal,  # noqa: F401
                                        random_uniform as uniform, truncated_normal,
                                        random_shuffle as shuffle)
from tensorweave.framework.random_seed import set_random_seed, get_seed  # noqa: F401
from tensorweave.ops.random_sampling_ops import (categorical, multinomial, poisson,  # noqa: F401
                                                 stateless_normal,
                                                 stateless_truncated_normal,
                                                 stateless_categorical, stateless_multinomial)
from tensorweave.ops.stateless_random_ops import stateless_uniform  # noqa: F401,E402
from tensorweave.ops.random_gamma_ops import random_gamma as gamma  # noqa: F401
from tensorweave.ops.candidate_sampling_ops import (uniform_candidate_sampler,  # noqa: F401,E402
                                                    log_uniform_candidate_sampler,
                                                    learned_unigram_candidate_sampler,
                                                    fixed_unigram_candidate_sampler,
                                                    all_candidate_sampler)
from tensorweave.ops.stateless_sampling_ops import (  # noqa: F401,E402
    stateless_random_gamma as stateless_gamma, stateless_random_poisson as stateless_poisson,
    stateless_random_binomial as stateless_binomial, stateless_parameterized_truncated_normal,
    split, fold_in)
from tensorweave.ops.random_generator import (Algorithm, Generator,  # noqa: F401,E402
                                              create_rng_state, get_global_generator,
                                              set_global_generator)
from tensorweave import random_experimental as experimental  # noqa: F401,E402
