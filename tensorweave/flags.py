"""`tf.flags`: re-exports (absl's flags with TF 1.x's implicit parse; platform/flags.py)."""
from tensorweave.platform.flags import *  # noqa: F401,F403
from tensorweave.platform.flags import FLAGS  # noqa: F401
from tensorweave.platform.flags import tf_decorator  # noqa: F401
