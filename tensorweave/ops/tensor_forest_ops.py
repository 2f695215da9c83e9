"""Ops of tf.contrib.tensor_forest's online random-forest trees (kernels/tensor_forest.py):
a tree resource, the op that (re)creates it, training on a batch, prediction, and its size."""
from tensorweave.framework import common_shapes, tensor_shape
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable

_TREE_ATTRS = {"container": ("string", ""), "shared_name": ("string", ""),
               "regression": ("bool", False), "num_outputs": "int", "max_nodes": "int",
               "split_after_samples": "int", "num_splits_to_consider": "int",
               "max_fertile_nodes": "int", "bagging_fraction": ("float", 1.0),
               "seed": ("int", 0)}


def _predict_shapes(op):
    batch = op.inputs[1].shape[:1] if op.inputs[1].shape.ndims else \
        tensor_shape.TensorShape([None])
    outputs = op.inputs[0].op.attrs.get("num_outputs") if \
        op.inputs[0].op.type == "TensorForestTree" else None
    rows = batch.concatenate([outputs])
    return [rows, rows, batch]


register_op("TensorForestTree", outputs=["tree_handle: string"], attrs=_TREE_ATTRS,
            shape_fn=common_shapes.scalar, stateful=True)
register_op("TensorForestCreateTree", inputs=["tree_handle: string"],
            shape_fn=common_shapes.no_outputs, stateful=True)
register_op("TensorForestTreeIsInitialized", inputs=["tree_handle: string"],
            outputs=["is_initialized: bool"], shape_fn=common_shapes.scalar, stateful=True)
register_op("TensorForestTrain", inputs=["tree_handle: string", "input_data: float",
                                         "input_labels: Tlabels"],
            attrs={"Tlabels": "type"}, shape_fn=common_shapes.no_outputs, stateful=True)
register_op("TensorForestPredict", inputs=["tree_handle: string", "input_data: float"],
            outputs=["mean: float", "variance: float", "leaf: int32"],
            shape_fn=_predict_shapes, stateful=True)
register_op("TensorForestTreeSize", inputs=["tree_handle: string"], outputs=["size: int32"],
            shape_fn=common_shapes.scalar, stateful=True)
for _name in ("TensorForestTree", "TensorForestCreateTree", "TensorForestTreeIsInitialized",
              "TensorForestTrain", "TensorForestPredict", "TensorForestTreeSize"):
    not_differentiable(_name)
