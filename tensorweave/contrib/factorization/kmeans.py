"""`tf.contrib.factorization.KMeans`: k-means in the graph. `training_graph()` gives the
distance of every input row to every center, each row's nearest center and its distance,
the initialisation op (random rows, k-means++, or given centers; it runs once, guarded by a
variable) and the training op: a Lloyd step over the batch (full-batch mode) or a mini-batch
step moving each center to the running mean of every row ever assigned to it. With the
cosine distance rows and centers are unit-normalised and the distance is 1 - cosine."""
from tensorweave.framework import dtypes
from tensorweave.framework.constant_op import constant, convert_to_tensor
from tensorweave.framework import graph as graph_lib
from tensorweave.ops import (array_ops, control_flow_ops, linalg_ops, math_ops, nn_impl,
                             random_ops, reduction_ops, slicing_ops, state_ops, variables)
from tensorweave.ops import clustering_ops  # noqa: F401 - registers the op
from tensorweave.ops.cond_ops import cond
from tensorweave.ops.op_util import make_tensor
from tensorweave.ops.pad_tile_ops import tile

RANDOM_INIT = "random"
KMEANS_PLUS_PLUS_INIT = "kmeans_plus_plus"
KMC2_INIT = "kmc2"
SQUARED_EUCLIDEAN_DISTANCE = "squared_euclidean"
COSINE_DISTANCE = "cosine"


class KMeans:
    def __init__(self, inputs, num_clusters, initial_clusters=RANDOM_INIT,
                 distance_metric=SQUARED_EUCLIDEAN_DISTANCE, use_mini_batch=False,
                 mini_batch_steps_per_iteration=1, random_seed=0,
                 kmeans_plus_plus_num_retries=2, kmc2_chain_length=200):
        if distance_metric not in (SQUARED_EUCLIDEAN_DISTANCE, COSINE_DISTANCE):
            raise ValueError(f"KMeans: unknown distance_metric {distance_metric!r}")
        if initial_clusters == KMC2_INIT:
            raise ValueError("KMeans: KMC2_INIT is not supported by tensorweave; use "
                             "KMEANS_PLUS_PLUS_INIT (the exact seeding KMC2 approximates)")
        if mini_batch_steps_per_iteration != 1:
            raise ValueError("KMeans: only mini_batch_steps_per_iteration=1 is supported")
        self._inputs = [convert_to_tensor(x) for x in
                        (inputs if isinstance(inputs, (list, tuple)) else [inputs])]
        self._num_clusters = num_clusters
        self._initial_clusters = initial_clusters
        self._distance_metric = distance_metric
        self._use_mini_batch = use_mini_batch
        self._random_seed = random_seed
        self._retries = kmeans_plus_plus_num_retries

    def _prepared(self):
        inputs = [x if x.dtype == dtypes.float32 else math_ops.cast(x, dtypes.float32)
                  for x in self._inputs]
        if self._distance_metric == COSINE_DISTANCE:
            inputs = [nn_impl.l2_normalize(x, axis=1) for x in inputs]
        return inputs

    def _distances(self, x, centers):
        """[n, k] distances of each row to each center."""
        if self._distance_metric == COSINE_DISTANCE:
            return 1.0 - linalg_ops.matmul(x, centers, transpose_b=True)
        rows = reduction_ops.reduce_sum(math_ops.square(x), 1, keepdims=True)
        cols = reduction_ops.reduce_sum(math_ops.square(centers), 1)
        return math_ops.maximum(rows - 2.0 * linalg_ops.matmul(x, centers, transpose_b=True)
                                + array_ops.expand_dims(cols, 0), 0.0)

    def _initial_centers(self, inputs):
        k = self._num_clusters
        points = inputs[0] if len(inputs) == 1 else slicing_ops.concat(inputs, 0)
        choice = self._initial_clusters
        if callable(choice) and not isinstance(choice, str):
            return convert_to_tensor(choice(points, k), dtype=dtypes.float32)
        if not isinstance(choice, str):
            return convert_to_tensor(choice, dtype=dtypes.float32)
        if choice == RANDOM_INIT:
            order = random_ops.random_shuffle(reduction_ops.range_(
                array_ops.shape(points)[0]), seed=self._random_seed)
            return slicing_ops.gather(points, order[:k])
        if choice == KMEANS_PLUS_PLUS_INIT:
            return make_tensor("KmeansPlusPlusInitialization", [
                points, constant(k, dtypes.int64), constant(self._random_seed, dtypes.int64),
                constant(self._retries, dtypes.int64)])
        raise ValueError(f"KMeans: unknown initial_clusters {choice!r}")

    def training_graph(self):
        """(all_scores, cluster_idx, scores, cluster_centers_initialized,
        cluster_centers_var, init_op, training_op); the first three are lists, one entry
        per input tensor."""
        inputs = self._prepared()
        dims = inputs[0].shape.as_list()[-1] if inputs[0].shape.ndims == 2 else None
        if dims is None:
            raise ValueError("KMeans: the inputs must be matrices with a known number of "
                             f"columns, got shape {inputs[0].shape}")
        k = self._num_clusters
        with graph_lib.name_scope("kmeans"):
            centers = variables.Variable(array_ops.zeros([k, dims]), trainable=False,
                                         name="clusters")
            initialized = variables.Variable(False, trainable=False,
                                             name="initialized")
            counts = variables.Variable(array_ops.zeros([k]), trainable=False,
                                        name="cluster_counts")
            all_scores, cluster_idx, scores = [], [], []
            for x in inputs:
                distances = self._distances(x, centers)
                nearest = reduction_ops.argmin(distances, 1)
                all_scores.append(distances)
                cluster_idx.append(nearest)
                scores.append(reduction_ops.reduce_min(distances, 1))
            init_op = cond(initialized, control_flow_ops.no_op,
                           lambda: self._initialize(inputs, centers, initialized, counts))
            training_op = self._train(inputs, cluster_idx, centers, counts)
        return (all_scores, cluster_idx, scores, initialized, centers, init_op, training_op)

    def _initialize(self, inputs, centers, initialized, counts):
        start = self._initial_centers(inputs)
        with graph_lib.control_dependencies([state_ops.assign(centers, start,
                                                              validate_shape=False)]):
            return control_flow_ops.group(state_ops.assign(initialized, True),
                                          state_ops.assign(counts, array_ops.zeros_like(counts)))

    def _train(self, inputs, cluster_idx, centers, counts):
        k = self._num_clusters
        points = slicing_ops.concat(inputs, 0) if len(inputs) > 1 else inputs[0]
        idx = slicing_ops.concat(cluster_idx, 0) if len(inputs) > 1 else cluster_idx[0]
        sums = reduction_ops.unsorted_segment_sum(points, idx, k)
        batch_counts = reduction_ops.unsorted_segment_sum(
            array_ops.ones_like(math_ops.cast(idx, dtypes.float32)), idx, k)
        seen = array_ops.expand_dims(batch_counts, 1)
        if self._use_mini_batch:
            total = counts + batch_counts
            step = (sums - seen * centers) / array_ops.expand_dims(math_ops.maximum(total, 1.0),
                                                                   1)
            new_centers = centers + step
            update_counts = [state_ops.assign(counts, total)]
        else:   # Lloyd: each center to the mean of its rows; an empty cluster stays put
            new_centers = math_ops.where(math_ops.greater(
                tile(seen, [1, array_ops.shape(centers)[1]]), 0.0),
                sums / math_ops.maximum(seen, 1.0), centers)
            update_counts = []
        if self._distance_metric == COSINE_DISTANCE:
            new_centers = nn_impl.l2_normalize(new_centers, axis=1)
        return control_flow_ops.group(state_ops.assign(centers, new_centers), *update_counts)
