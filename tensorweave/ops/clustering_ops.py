"""KmeansPlusPlusInitialization: k-means++ seeding of cluster centers (kernels/clustering.py),
for tf.contrib.factorization.KMeans."""
from tensorweave.framework import tensor_shape
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable

register_op("KmeansPlusPlusInitialization",
            inputs=["points: float", "num_to_sample: int64", "seed: int64",
                    "num_retries_per_sample: int64"], outputs=["samples: float"],
            shape_fn=lambda op: [tensor_shape.TensorShape([None]).concatenate(
                op.inputs[0].shape[1:] if op.inputs[0].shape.ndims else [None])],
            doc="num_to_sample rows of points chosen by k-means++.")
not_differentiable("KmeansPlusPlusInitialization")
