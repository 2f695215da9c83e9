"""`tf.compat.v1` (and `import tensorweave.compat.v1 as tf`): the tensorweave namespace."""
import sys

import tensorweave

sys.modules[__name__] = tensorweave
