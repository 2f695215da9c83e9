"""`tf.autograph`: Python control flow over tensors converted into graph control flow.

tf.function converts its Python function before tracing (autograph=True, the default);
to_graph converts one explicitly. What is converted and what is not: transformer.py and
conversion.py. Re-exports only, and hands the converter to the tracer (framework).
"""
from tensorweave.autograph.api import (to_graph, to_code, do_not_convert,  # noqa: F401
                                       set_verbosity, trace)
from tensorweave.autograph import experimental  # noqa: F401
from tensorweave.autograph.conversion import convert as _convert
from tensorweave.framework.function_trace import register_converter as _register

_register(_convert)
