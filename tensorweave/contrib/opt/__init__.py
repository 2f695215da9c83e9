"""`tf.contrib.opt`: TF 1.15's contributed optimizers, built on tf.train's Optimizer.
Re-exports only."""
from tensorweave.contrib.opt.weight_decay import (AdamWOptimizer,  # noqa: F401
                                                  DecoupledWeightDecayExtension,
                                                  MomentumWOptimizer,
                                                  extend_with_decoupled_weight_decay)
from tensorweave.contrib.opt.lazy_adam import (AdamGSOptimizer,  # noqa: F401
                                               LazyAdamGSOptimizer, LazyAdamOptimizer,
                                               NadamOptimizer)
from tensorweave.contrib.opt.sign import AddSignOptimizer, PowerSignOptimizer  # noqa: F401
from tensorweave.contrib.opt.lars import LARSOptimizer  # noqa: F401
from tensorweave.contrib.opt.moving_average import MovingAverageOptimizer  # noqa: F401
from tensorweave.contrib.opt.variable_clipping import VariableClippingOptimizer  # noqa: F401
from tensorweave.contrib.opt.drop_stale_gradient import DropStaleGradientOptimizer  # noqa: F401
from tensorweave.contrib.opt.elastic_average import (ElasticAverageCustomGetter,  # noqa: F401
                                                     ElasticAverageOptimizer)
from tensorweave.contrib.opt.model_average import (ModelAverageCustomGetter,  # noqa: F401
                                                   ModelAverageOptimizer)
from tensorweave.contrib.opt.adamax import AdaMaxOptimizer  # noqa: F401
from tensorweave.contrib.opt.sign_decay import (get_cosine_decay_fn,  # noqa: F401
                                                get_linear_decay_fn, get_restart_decay_fn)
from tensorweave.contrib.opt.multitask import (MultitaskOptimizerWrapper,  # noqa: F401
                                               clip_gradients_by_global_norm)
from tensorweave.contrib.opt.reg_adagrad import RegAdagradOptimizer  # noqa: F401
