"""`nets.inception`: the Inception family TF-Slim ships. Re-exports only."""
from tensorweave.contrib.slim.nets.inception_v1 import (inception_arg_scope,  # noqa: F401
                                                        inception_v1, inception_v1_arg_scope,
                                                        inception_v1_base)
