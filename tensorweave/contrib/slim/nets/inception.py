"""`nets.inception`: the Inception family TF-Slim ships. Re-exports only."""
from tensorweave.contrib.slim.nets.inception_v1 import (inception_arg_scope,  # noqa: F401
                                                        inception_v1, inception_v1_arg_scope,
                                                        inception_v1_base)
from tensorweave.contrib.slim.nets.inception_v3 import (inception_v3,  # noqa: F401
                                                        inception_v3_arg_scope,
                                                        inception_v3_base)
