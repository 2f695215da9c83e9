"""`tf.app.flags` / `tf.flags`: absl's flags, as TF 1.x had them.

TF 1.x's flags module is absl.flags (TF installed absl-py), so a program may mix
`tf.app.flags.DEFINE_*` with `from absl import flags` and both see one FLAGS. Two TF-isms on
top, as TF 1.x gives them:
- FLAGS parses `sys.argv` on the first read of a flag (known flags only; the rest is left for
  the program), so a script that never calls `tf.app.run` still sees its command line;
- DEFINE_* also take TF 0.x keyword names (`flag_name`, `default_value`, `docstring`).
"""
import functools
import sys

from absl import flags as _absl_flags
from absl.flags import *  # noqa: F401,F403 - the whole absl.flags surface is tf.flags'

from tensorweave.platform import tf_decorator  # noqa: F401 (TF 1.x's flags module shows it)


class _FlagValuesWrapper:
    """absl's FlagValues, parsing sys.argv (known flags only) when first read unparsed."""

    def __init__(self, flag_values):
        object.__setattr__(self, "_wrapped", flag_values)

    def _ensure_parsed(self):
        wrapped = object.__getattribute__(self, "_wrapped")
        if not wrapped.is_parsed():
            wrapped(sys.argv, known_only=True)

    def __getattr__(self, name):
        wrapped = object.__getattribute__(self, "_wrapped")
        if name.startswith("_") or callable(getattr(type(wrapped), name, None)):
            return getattr(wrapped, name)
        if name in wrapped:
            self._ensure_parsed()
        return getattr(wrapped, name)

    def __setattr__(self, name, value):
        setattr(object.__getattribute__(self, "_wrapped"), name, value)

    def __delattr__(self, name):
        delattr(object.__getattribute__(self, "_wrapped"), name)

    def __dir__(self):
        return dir(object.__getattribute__(self, "_wrapped"))

    def __getitem__(self, name):
        return object.__getattribute__(self, "_wrapped")[name]

    def __setitem__(self, name, flag):
        object.__getattribute__(self, "_wrapped")[name] = flag

    def __len__(self):
        return len(object.__getattribute__(self, "_wrapped"))

    def __iter__(self):
        return iter(object.__getattribute__(self, "_wrapped"))

    def __contains__(self, name):
        return name in object.__getattribute__(self, "_wrapped")

    def __call__(self, *args, **kwargs):
        return object.__getattribute__(self, "_wrapped")(*args, **kwargs)


_OLD_KEYWORDS = {"flag_name": "name", "default_value": "default", "docstring": "help"}


def _accept_tf_keywords(define):
    """DEFINE_* that also take TF 0.x's keyword names, and FLAGS as the wrapper."""

    @functools.wraps(define)
    def wrapper(*args, **kwargs):
        for old, new in _OLD_KEYWORDS.items():
            if old in kwargs:
                kwargs[new] = kwargs.pop(old)
        if isinstance(kwargs.get("flag_values"), _FlagValuesWrapper):
            kwargs["flag_values"] = object.__getattribute__(kwargs["flag_values"], "_wrapped")
        return define(*args, **kwargs)
    return wrapper


for _name in dir(_absl_flags):
    if _name.startswith("DEFINE"):
        globals()[_name] = _accept_tf_keywords(getattr(_absl_flags, _name))
del _name

FLAGS = _FlagValuesWrapper(_absl_flags.FLAGS)
