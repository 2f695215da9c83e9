"""`tf.contrib.distributions`: tf.distributions' families and the multivariate, relaxed and
count ones contrib had (tensorweave/distributions/multivariate.py). Re-exports only."""
from tensorweave.distributions import *  # noqa: F401,F403
from tensorweave.distributions import (  # noqa: F401
    Distribution, ReparameterizationType, FULLY_REPARAMETERIZED, NOT_REPARAMETERIZED,
    RegisterKL, kl_divergence, Normal, Uniform, Laplace, Exponential, Bernoulli, Categorical,
    Gamma, Beta, Dirichlet, StudentT, MultivariateNormalDiag,
    MultivariateNormalDiagWithSoftplusScale, MultivariateNormalTriL,
    MultivariateNormalFullCovariance, OneHotCategorical, RelaxedOneHotCategorical,
    RelaxedBernoulli, Poisson, Logistic)
