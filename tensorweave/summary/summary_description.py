"""`tf.summary.get_summary_description(node_def)`: the SummaryDescription a TF 1.x
TensorSummary op carries in its "description" attr (a JSON-encoded SummaryDescription)."""
from google.protobuf import json_format

from tensorweave.framework.protos.summary_pb2 import SummaryDescription


def get_summary_description(node_def):
    """The summary_pb2.SummaryDescription of a TensorSummary NodeDef (empty when the node
    has no description); ValueError for any other op."""
    if node_def.op != "TensorSummary":
        raise ValueError(f"Can't get_summary_description on {node_def.op}: only a "
                         "TensorSummary node carries a SummaryDescription")
    description = SummaryDescription()
    if "description" in node_def.attr:
        text = node_def.attr["description"].s
        json_format.Parse(text.decode() if isinstance(text, bytes) else text, description)
    return description
