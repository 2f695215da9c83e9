"""ONNX export of frozen inference GraphDefs (`tensorweave export --onnx`)."""
from tensorweave.framework.onnx_export.converter import (  # noqa: F401
    OPSET, UnsupportedOpError, graph_def_to_onnx)
