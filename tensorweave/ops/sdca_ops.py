"""`tf.train.sdca_optimizer` (the SdcaOptimizer op: one SDCA pass, kernels/sdca.py) and
`tf.train.sdca_fprint(input)`: the SdcaFprint op, a [N, 2] int64 fingerprint (FarmHash
Fingerprint128) of each of N strings, which TF's SDCA uses as compact example ids
(kernels/fingerprint128.py). Not differentiable."""
from tensorweave.framework import dtypes, tensor_shape
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_op, make_tensor


def _shape(op):
    shape = op.inputs[0].shape
    if not shape.is_compatible_with([None]):
        raise ValueError(f"SdcaFprint {op.name}: input must be a vector, got shape {shape}")
    return [tensor_shape.TensorShape([shape.as_tuple()[0] if shape.ndims else None, 2])]


register_op("SdcaFprint", inputs=["input: string"], outputs=["output: int64"], shape_fn=_shape)
not_differentiable("SdcaFprint")


def sdca_fprint(input, name=None):  # noqa: A002 - TF's name
    return make_tensor("SdcaFprint", [convert_to_tensor(input, dtype=dtypes.string)], {},
                       name or "SdcaFprint")


_SDCA_INPUTS = ["sparse_example_indices: num_sparse_features * int64",
                "sparse_feature_indices: num_sparse_features * int64",
                "sparse_feature_values: num_sparse_features_with_values * float",
                "dense_features: num_dense_features * float", "example_weights: float",
                "example_labels: float", "sparse_indices: num_sparse_features * int64",
                "sparse_weights: num_sparse_features * float",
                "dense_weights: num_dense_features * float", "example_state_data: float"]
_LOSSES = ("logistic_loss", "squared_loss", "hinge_loss", "smooth_hinge_loss")


def _sdca_shape(op):
    sparse = op.get_attr("num_sparse_features")
    dense = op.get_attr("num_dense_features")
    weights = op.inputs[len(op.inputs) - 1 - dense - sparse:len(op.inputs) - 1]
    return [op.inputs[-1].shape] + [w.shape for w in weights]


register_op("SdcaOptimizer", inputs=_SDCA_INPUTS,
            outputs=["out_example_state_data: float",
                     "out_delta_sparse_weights: num_sparse_features * float",
                     "out_delta_dense_weights: num_dense_features * float"],
            attrs={"loss_type": "string", "adaptative": ("bool", False),
                   "num_sparse_features": "int", "num_sparse_features_with_values": "int",
                   "num_dense_features": "int", "l1": "float", "l2": "float",
                   "num_loss_partitions": "int", "num_inner_iterations": "int"},
            shape_fn=_sdca_shape)
not_differentiable("SdcaOptimizer")


def sdca_optimizer(sparse_example_indices, sparse_feature_indices, sparse_feature_values,
                   dense_features, example_weights, example_labels, sparse_indices,
                   sparse_weights, dense_weights, example_state_data, loss_type, l1, l2,
                   num_loss_partitions, num_inner_iterations, adaptative=True, name=None):
    """One pass of stochastic dual coordinate ascent (Shalev-Shwartz & Zhang; CoCoA+ for
    num_loss_partitions > 1) over a mini-batch for an L1/L2-regularised linear model:
    returns (the updated [N, 4] example state: dual, primal loss, dual loss, weight; the
    deltas of each sparse weight vector; the deltas of each dense weight vector). The model
    predicts with shrink(weights + num_loss_partitions * deltas); add the deltas to the
    weights, then apply sdca_shrink_l1. See kernels/sdca.py."""
    if loss_type not in _LOSSES:
        raise ValueError(f"sdca_optimizer: unsupported loss_type {loss_type!r}; one of "
                         f"{_LOSSES}")
    if float(l2) <= 0:
        raise ValueError(f"sdca_optimizer: l2 must be positive, got {l2}")
    sparse = len(sparse_example_indices)
    lists = [sparse_example_indices, sparse_feature_indices, sparse_indices, sparse_weights]
    if any(len(group) != sparse for group in lists) or len(sparse_feature_values) > sparse:
        raise ValueError("sdca_optimizer: the sparse example indices, feature indices, weight "
                         "indices and weights need one entry per sparse feature group")
    if len(dense_features) != len(dense_weights):
        raise ValueError(f"sdca_optimizer: {len(dense_features)} dense feature groups but "
                         f"{len(dense_weights)} dense weight vectors")

    def tensors(values, dtype):
        return [convert_to_tensor(v, dtype=dtype) for v in values]
    inputs = [tensors(sparse_example_indices, dtypes.int64),
              tensors(sparse_feature_indices, dtypes.int64),
              tensors(sparse_feature_values, dtypes.float32),
              tensors(dense_features, dtypes.float32),
              convert_to_tensor(example_weights, dtype=dtypes.float32),
              convert_to_tensor(example_labels, dtype=dtypes.float32),
              tensors(sparse_indices, dtypes.int64), tensors(sparse_weights, dtypes.float32),
              tensors(dense_weights, dtypes.float32),
              convert_to_tensor(example_state_data, dtype=dtypes.float32)]
    attrs = {"loss_type": loss_type, "adaptative": bool(adaptative),
             "num_sparse_features": sparse,
             "num_sparse_features_with_values": len(sparse_feature_values),
             "num_dense_features": len(dense_features), "l1": float(l1), "l2": float(l2),
             "num_loss_partitions": int(num_loss_partitions),
             "num_inner_iterations": int(num_inner_iterations)}
    op = make_op("SdcaOptimizer", inputs, attrs, name or "SdcaOptimizer")
    outputs = op.outputs
    return outputs[0], outputs[1:1 + sparse], outputs[1 + sparse:]
