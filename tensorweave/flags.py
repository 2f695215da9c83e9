"""`tf.flags`: re-exports."""
from tensorweave.platform.flags import (FLAGS, DEFINE_string, DEFINE_integer,  # noqa: F401
                                        DEFINE_float, DEFINE_boolean, DEFINE_bool, DEFINE_list,
                                        DEFINE_enum, mark_flag_as_required)
