"""Summary ops, the TF 1.x `tf.summary` graph API: scalar, histogram, image, audio, text,
tensor_summary, merge and merge_all.

Each op outputs a scalar string: a serialized `Summary` protobuf (kernels/summary.py) that a
`tf.summary.FileWriter` writes into a TensorBoard event file. Tags follow TF 1.x: the name,
cleaned of characters TensorBoard does not accept, inside the current name scope, made unique
as op names are ("loss", then "loss_1"); with `family`, the tag is "family/<scope>/family/name"
so TensorBoard shows it under the family's tab. Every summary joins the collections given
(GraphKeys.SUMMARIES by default), which `merge_all` merges. None is differentiable.
"""
import contextlib
import re

import numpy as np

from tensorweave.framework import common_shapes
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.op_def import register_op
from tensorweave.framework.protos import summary_pb2
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_tensor
from tensorweave.platform import tf_logging as logging

_REAL = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.int8, dtypes.int16,
         dtypes.int32, dtypes.int64, dtypes.uint8, dtypes.uint16)
_IMAGE = (dtypes.uint8, dtypes.float16, dtypes.float32, dtypes.float64)


def _same_shapes(op):
    tags, values = op.inputs[0].shape, op.inputs[1].shape
    if not tags.is_compatible_with(values):
        raise ValueError(f"tags and values not the same shape: {tags} != {values}")
    return [common_shapes.TensorShape([])]


register_op("ScalarSummary", inputs=["tags: string", "values: T"], outputs=["summary: string"],
            attrs={"T": "type"}, shape_fn=_same_shapes, allowed_types={"T": _REAL},
            doc="A Summary with one simple_value per element of `values`, tagged by the "
                "matching element of `tags` (same shape).")
register_op("HistogramSummary", inputs=["tag: string", "values: T"],
            outputs=["summary: string"], attrs={"T": ("type", dtypes.float32)},
            shape_fn=common_shapes.scalar, allowed_types={"T": _REAL},
            doc="A Summary with the histogram of `values` (TensorBoard's exponential buckets); "
                "fails on NaN or infinity.")
register_op("ImageSummary", inputs=["tag: string", "tensor: T"], outputs=["summary: string"],
            attrs={"T": ("type", dtypes.float32), "max_images": ("int", 3),
                   "bad_color": ("tensor", np.array([255, 0, 0, 255], np.uint8))},
            shape_fn=common_shapes.scalar, allowed_types={"T": _IMAGE},
            doc="A Summary with the first `max_images` images of a [batch, height, width, "
                "channels] tensor as PNGs, tagged 'tag/image/i' ('tag/image' when max_images "
                "is 1); float images are rescaled to 0..255, non-finite pixels get bad_color.")
register_op("AudioSummaryV2", inputs=["tag: string", "tensor: float", "sample_rate: float"],
            outputs=["summary: string"], attrs={"max_outputs": ("int", 3)},
            shape_fn=common_shapes.scalar,
            doc="A Summary with the first `max_outputs` clips of a [batch, frames(, channels)] "
                "tensor of samples in [-1, 1] as 16-bit WAV files, tagged 'tag/audio/i' "
                "('tag/audio' when max_outputs is 1).")
register_op("TensorSummaryV2", inputs=["tag: string", "tensor: T",
                                       "serialized_summary_metadata: string"],
            outputs=["summary: string"], attrs={"T": "type"}, shape_fn=common_shapes.scalar,
            doc="A Summary holding `tensor` as a TensorProto, with the given SummaryMetadata "
                "(which TensorBoard plugin shows it).")
register_op("MergeSummary", inputs=["inputs: N * string"], outputs=["summary: string"],
            attrs={"N": "int"}, shape_fn=common_shapes.scalar,
            doc="The union of the values of serialized Summaries; a tag seen twice fails.")
for _op_type in ("ScalarSummary", "HistogramSummary", "ImageSummary", "AudioSummaryV2",
                 "TensorSummaryV2", "MergeSummary"):
    not_differentiable(_op_type)

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")


def clean_tag(name):
    """`name` with characters TensorBoard does not accept replaced by '_' and leading slashes
    dropped (logged when it changes)."""
    if name is None:
        return None
    cleaned = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
    if cleaned != name:
        logging.info("Summary name %s is illegal; using %s instead.", name, cleaned)
    return cleaned


@contextlib.contextmanager
def summary_scope(name, family=None, default_name=None, values=None):
    """Opens the name scope of a summary op; yields (tag, scope)."""
    name, family = clean_tag(name), clean_tag(family)
    base = name if family is None else f"{family}/{name}"
    with graph_lib.name_scope(base, default_name, values) as scope:
        tag = scope.rstrip("/") if family is None else f"{family}/{scope.rstrip('/')}"
        yield tag, scope


def _collect(summary, collections, default=(GraphKeys.SUMMARIES,)):
    for key in (default if collections is None else collections):
        graph_lib.add_to_collection(key, summary)
    return summary


def scalar(name, tensor, collections=None, family=None):
    """`tf.summary.scalar`: a Summary holding the real scalar `tensor` under the tag `name`."""
    tensor = convert_to_tensor(tensor)
    if tensor.shape.ndims not in (None, 0):
        raise ValueError(f"tf.summary.scalar {name!r} needs a scalar, got shape {tensor.shape}; "
                         "reduce it first (tf.reduce_mean)")
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        summary = make_tensor("ScalarSummary", [constant(tag, dtypes.string), tensor],
                              name=scope)
    return _collect(summary, collections)


def histogram(name, values, collections=None, family=None):
    """`tf.summary.histogram`: the histogram of `values` (any shape) under the tag `name`."""
    with summary_scope(name, family, "HistogramSummary", [values]) as (tag, scope):
        summary = make_tensor("HistogramSummary",
                              [constant(tag, dtypes.string), convert_to_tensor(values)],
                              name=scope)
    return _collect(summary, collections)


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """`tf.summary.image`: the first `max_outputs` images of a [batch, height, width,
    channels] tensor (1, 3 or 4 channels; uint8, or floats rescaled to 0..255)."""
    tensor = convert_to_tensor(tensor)
    if tensor.shape.ndims not in (None, 4):
        raise ValueError(f"tf.summary.image {name!r} needs [batch, height, width, channels], "
                         f"got shape {tensor.shape}")
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        summary = make_tensor("ImageSummary", [constant(tag, dtypes.string), tensor],
                              {"max_images": int(max_outputs)}, name=scope)
    return _collect(summary, collections)


def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    """`tf.summary.audio`: the first `max_outputs` clips of float32 samples in [-1, 1],
    shaped [batch, frames] or [batch, frames, channels], at `sample_rate` Hz."""
    tensor = convert_to_tensor(tensor, dtypes.float32)
    if tensor.shape.ndims not in (None, 2, 3):
        raise ValueError(f"tf.summary.audio {name!r} needs [batch, frames] or [batch, frames, "
                         f"channels], got shape {tensor.shape}")
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        summary = make_tensor("AudioSummaryV2", [
            constant(tag, dtypes.string), tensor,
            convert_to_tensor(sample_rate, dtypes.float32)], {"max_outputs": int(max_outputs)},
            name=scope)
    return _collect(summary, collections)


def tensor_summary(name, tensor, summary_description=None, collections=None,
                   summary_metadata=None, family=None, display_name=None):
    """`tf.summary.tensor_summary`: the whole `tensor` in a Summary, with SummaryMetadata
    (a proto or its bytes) telling TensorBoard which plugin shows it."""
    if summary_metadata is None:
        summary_metadata = summary_pb2.SummaryMetadata()
    elif isinstance(summary_metadata, bytes):
        summary_metadata = summary_pb2.SummaryMetadata.FromString(summary_metadata)
    if summary_description is not None:
        summary_metadata.summary_description = summary_description
    if display_name is not None:
        summary_metadata.display_name = display_name
    tensor = convert_to_tensor(tensor)
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        summary = make_tensor("TensorSummaryV2", [
            constant(tag, dtypes.string), tensor,
            constant(summary_metadata.SerializeToString(), dtypes.string)], name=scope)
    return _collect(summary, collections)


def text(name, tensor, collections=None):
    """`tf.summary.text`: a string tensor shown by TensorBoard's text plugin."""
    tensor = convert_to_tensor(tensor)
    if tensor.dtype != dtypes.string:
        raise ValueError(f"tf.summary.text {name!r} needs a string tensor, got "
                         f"{tensor.dtype.name}")
    metadata = summary_pb2.SummaryMetadata(
        plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name, tensor, summary_metadata=metadata, collections=collections)


def merge(inputs, collections=None, name=None):
    """`tf.summary.merge`: one Summary with the values of all `inputs` (string tensors of
    serialized Summaries)."""
    inputs = [convert_to_tensor(summary, dtypes.string) for summary in inputs]
    with graph_lib.name_scope(name, "Merge", inputs):
        summary = make_tensor("MergeSummary", [inputs])
    return _collect(summary, collections, default=())


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """`tf.summary.merge_all`: the merge of every summary in collection `key` (whose name
    matches `scope`, a regex, if given); None when there is none."""
    summaries = graph_lib.get_collection(key, scope=scope)
    return merge(summaries, name=name) if summaries else None
