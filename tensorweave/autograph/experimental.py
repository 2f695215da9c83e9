"""`tf.autograph.experimental`: re-exports."""
from tensorweave.autograph.api import Feature, do_not_convert, set_loop_options  # noqa: F401
