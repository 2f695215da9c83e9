"""`tf.contrib.deprecated`: the pre-1.0 summary functions (`scalar_summary`, `histogram_summary`,
`image_summary`, `audio_summary`, `merge_summary`, `merge_all_summaries`) that TF 1.x kept for
programs such as the CIFAR-10 tutorial. Unlike `tf.summary.*`, the tag is used as given (not
prefixed by the name scope, not cleaned: 'total_loss (raw)' stays as written), and
`scalar_summary` takes a tensor of tags with a value tensor of the same shape."""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops.op_util import make_tensor
from tensorweave.ops.summary_ops import merge, merge_all


def _summary(op_type, default_name, tag, values, attrs, collections, name):
    with graph_lib.name_scope(name, default_name, [tag] + list(values)) as scope:
        summary = make_tensor(op_type, [convert_to_tensor(tag, dtypes.string)] + list(values),
                              attrs, name=scope)
    for key in ([GraphKeys.SUMMARIES] if collections is None else collections):
        graph_lib.add_to_collection(key, summary)
    return summary


def scalar_summary(tags, values, collections=None, name=None):
    """Summary of scalar values: `tags` (a string or string tensor) and `values` (a real
    tensor) have the same shape; one simple value per element."""
    values = convert_to_tensor(values)
    tag_shape = convert_to_tensor(tags, dtypes.string).shape
    if not tag_shape.is_compatible_with(values.shape):
        raise ValueError(f"scalar_summary: tags of shape {tag_shape} and values of shape "
                         f"{values.shape} must have the same shape")
    return _summary("ScalarSummary", "ScalarSummary", tags, [values], None, collections, name)


def histogram_summary(tag, values, collections=None, name=None):
    return _summary("HistogramSummary", "HistogramSummary", tag, [convert_to_tensor(values)],
                    None, collections, name)


def image_summary(tag, tensor, max_images=3, collections=None, name=None):
    return _summary("ImageSummary", "ImageSummary", tag, [convert_to_tensor(tensor)],
                    {"max_images": int(max_images)}, collections, name)


def audio_summary(tag, tensor, sample_rate, max_outputs=3, collections=None, name=None):
    values = [convert_to_tensor(tensor, dtypes.float32),
              convert_to_tensor(sample_rate, dtypes.float32)]
    return _summary("AudioSummaryV2", "AudioSummary", tag, values,
                    {"max_outputs": int(max_outputs)}, collections, name)


def merge_summary(inputs, collections=None, name=None):
    return merge(inputs, collections, name)


def merge_all_summaries(key=GraphKeys.SUMMARIES):
    return merge_all(key)
