"""`tf.distributions` (L4): probability distributions as TF 1.x's (Normal, Bernoulli,
Categorical, Uniform, Laplace, Exponential) with sample / log_prob / prob / cdf / entropy /
mean / stddev / variance / mode, and kl_divergence with a registry (RegisterKL). Built from
graph ops, so log_prob, entropy and reparameterised samples are differentiable.
Re-exports only."""
from tensorweave.distributions.distribution import (  # noqa: F401
    Distribution, ReparameterizationType, FULLY_REPARAMETERIZED, NOT_REPARAMETERIZED,
    RegisterKL, kl_divergence)
from tensorweave.distributions.continuous import (Normal, Uniform, Laplace,  # noqa: F401
                                                  Exponential)
from tensorweave.distributions.discrete import Bernoulli, Categorical  # noqa: F401
from tensorweave.distributions.gamma_family import Gamma, Beta, Dirichlet, StudentT  # noqa: F401
from tensorweave.distributions.multivariate import (  # noqa: F401
    MultivariateNormalDiag, MultivariateNormalDiagWithSoftplusScale, MultivariateNormalTriL,
    MultivariateNormalFullCovariance, OneHotCategorical, RelaxedOneHotCategorical,
    RelaxedBernoulli, Poisson, Logistic)
from tensorweave.distributions.counts import Multinomial, DirichletMultinomial  # noqa: F401
