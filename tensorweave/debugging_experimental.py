"""`tf.debugging.experimental`: re-exports."""
from tensorweave.debugging_more import (enable_dump_debug_info,  # noqa: F401
                                        disable_dump_debug_info)
