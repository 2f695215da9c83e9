"""`tf.contrib.factorization.KMeans`: k-means clustering built as graph ops, as TF 1.x's
clustering_ops does. `training_graph()` returns (all_scores, cluster_idx, scores,
cluster_centers_initialized, init_op, training_op); the distance is the squared euclidean one
or, for 'cosine', 1 - (normalized input . center); the nearest center and its score use
the normalized centers.

Training: full batch sets each center to the mean of its points (a center with none becomes 0,
as in TF: sum / (count + 1e-6)); mini batch (with mini_batch_steps_per_iteration=1) moves each
center to the running mean of every point ever assigned to it, counts starting at 1. Initial
centers: 'random' (distinct random input rows), 'kmeans_plus_plus' (k-means++ seeding,
kernels/clustering.py), an array/tensor, or a function (inputs, k)."""
from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.framework.graph import name_scope
from tensorweave.ops import (array_ops, cond_ops, control_flow_ops, linalg_ops, math_ops,
                             nn_impl, random_ops, reduction_ops, slicing_ops, state_ops)
from tensorweave.ops import clustering_ops  # noqa: F401 - registers the k-means++ op
from tensorweave.ops.op_util import make_tensor
from tensorweave.ops.variables import Variable

SQUARED_EUCLIDEAN_DISTANCE = "squared_euclidean"
COSINE_DISTANCE = "cosine"
RANDOM_INIT = "random"
KMEANS_PLUS_PLUS_INIT = "kmeans_plus_plus"
KMC2_INIT = "kmc2"


class KMeans:
    def __init__(self, inputs, num_clusters, initial_clusters=RANDOM_INIT,
                 distance_metric=SQUARED_EUCLIDEAN_DISTANCE, use_mini_batch=False,
                 mini_batch_steps_per_iteration=1, random_seed=0,
                 kmeans_plus_plus_num_retries=0, kmc2_chain_length=200):
        if distance_metric not in (SQUARED_EUCLIDEAN_DISTANCE, COSINE_DISTANCE):
            raise ValueError(f"KMeans: distance_metric must be {SQUARED_EUCLIDEAN_DISTANCE!r} "
                             f"or {COSINE_DISTANCE!r}, got {distance_metric!r}")
        if isinstance(initial_clusters, str) and initial_clusters not in (
                RANDOM_INIT, KMEANS_PLUS_PLUS_INIT):
            raise ValueError(f"KMeans: initial_clusters={initial_clusters!r} is not supported by "
                             f"tensorweave; use {RANDOM_INIT!r}, {KMEANS_PLUS_PLUS_INIT!r} (what "
                             "kmc2 approximates), an array or a function")
        if use_mini_batch and mini_batch_steps_per_iteration != 1:
            raise ValueError("KMeans: mini_batch_steps_per_iteration > 1 is not supported by "
                             "tensorweave")
        if not isinstance(num_clusters, int) or num_clusters < 1:
            raise ValueError(f"KMeans: num_clusters must be an int >= 1, got {num_clusters!r}")
        self._inputs = [convert_to_tensor(x) for x in
                        (inputs if isinstance(inputs, (list, tuple)) else [inputs])]
        dims = self._inputs[0].shape.as_tuple()
        if dims is None or len(dims) != 2 or dims[1] is None:
            raise ValueError(f"KMeans: inputs must be [num_points, dim] with a known dim, got "
                             f"{self._inputs[0].shape}")
        self._dim = dims[1]
        self._num_clusters = num_clusters
        self._initial_clusters = initial_clusters
        self._cosine = distance_metric == COSINE_DISTANCE
        self._mini_batch = use_mini_batch
        self._seed = random_seed
        self._retries = kmeans_plus_plus_num_retries

    def _distances(self, inputs, centers):
        if self._cosine:
            return [1.0 - linalg_ops.matmul(x, centers, transpose_b=True) for x in inputs]
        center_norms = array_ops.expand_dims(
            reduction_ops.reduce_sum(math_ops.square(centers), 1), 0)
        return [reduction_ops.reduce_sum(math_ops.square(x), 1, keepdims=True)
                - 2.0 * linalg_ops.matmul(x, centers, transpose_b=True) + center_norms
                for x in inputs]

    def _initial_value(self, inputs):
        k, chosen = self._num_clusters, self._initial_clusters
        if callable(chosen):
            return convert_to_tensor(chosen(inputs, k))
        if not isinstance(chosen, str):
            return convert_to_tensor(chosen, inputs[0].dtype)
        data = array_ops.concat(inputs, 0) if len(inputs) > 1 else inputs[0]
        if chosen == KMEANS_PLUS_PLUS_INIT:
            seeds = make_tensor("KmeansPlusPlusInitialization", [
                math_ops.cast(data, dtypes.float32), constant(k, dtypes.int64),
                constant(self._seed, dtypes.int64), constant(self._retries, dtypes.int64)])
            return math_ops.cast(seeds, data.dtype)
        order = random_ops.random_shuffle(
            reduction_ops.range_(0, array_ops.shape(data)[0]), seed=self._seed)
        return slicing_ops.gather(data, order[:k])

    def training_graph(self):
        with name_scope("kmeans"):
            inputs = [nn_impl.l2_normalize(x, 1) for x in self._inputs] if self._cosine \
                else self._inputs
            dtype = inputs[0].dtype
            k = self._num_clusters
            centers = Variable(array_ops.zeros([k, self._dim], dtype), trainable=False,
                               name="clusters")
            initialized = Variable(False, trainable=False, name="initialized")
            initial = cond_ops.cond(initialized.read_value(), centers.read_value,
                                    lambda: self._initial_value(inputs))
            init_op = control_flow_ops.group(state_ops.assign(centers, initial),
                                             state_ops.assign(initialized, True))
            current = centers.read_value()
            all_scores = self._distances(inputs, current)
            # Nearest centers by cosine compare with the normalized centers (a mini-batch
            # running mean is not of norm 1); all_scores keep the raw centers, as in TF.
            nearest = self._distances(inputs, nn_impl.l2_normalize(current, 1)) \
                if self._cosine else all_scores
            cluster_idx = [reduction_ops.argmin(s, 1) for s in nearest]
            scores = [reduction_ops.reduce_min(s, 1) for s in nearest]
            sums = math_ops.add_n([reduction_ops.unsorted_segment_sum(x, i, k)
                                   for x, i in zip(inputs, cluster_idx)])
            counts = math_ops.add_n([reduction_ops.unsorted_segment_sum(
                array_ops.ones_like(i, dtype=dtype), i, k) for i in cluster_idx])
            if self._mini_batch:
                training_op = self._mini_batch_update(centers, sums, counts)
            else:
                new_centers = sums / array_ops.expand_dims(counts + constant(1e-6, dtype), 1)
                if self._cosine:
                    new_centers = nn_impl.l2_normalize(new_centers, 1)
                training_op = state_ops.assign(centers, new_centers).op
        return (all_scores, cluster_idx, scores, initialized.read_value(), init_op,
                training_op)

    def _mini_batch_update(self, centers, sums, counts):
        """center += (sum of new points - n_new * center) / (n_old + n_new); n += n_new."""
        total = Variable(array_ops.ones([self._num_clusters], dtypes.int64), trainable=False,
                         name="cluster_counts")
        old = math_ops.cast(total.read_value(), sums.dtype)
        step = (sums - array_ops.expand_dims(counts, 1) * centers.read_value()) / \
            array_ops.expand_dims(old + counts, 1)
        return control_flow_ops.group(
            state_ops.assign_add(centers, step),
            state_ops.assign_add(total, math_ops.cast(counts, dtypes.int64)))
