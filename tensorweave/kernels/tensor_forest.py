"""Kernels of tf.contrib.tensor_forest's trees (ops/tensor_forest_ops.py): online random
forests after Saffari et al. / TF's tensor_forest. Each tree is a resource that grows as
batches arrive: a leaf collecting statistics ('fertile') draws candidate splits (a random
feature, the threshold of an example's value there), counts how its examples fall on each
side, and after `split_after_samples` examples splits on the candidate with the lowest Gini
impurity (classification) or summed variance (regression), until `max_nodes`. A sample goes
left when its feature value is <= the threshold."""
import threading

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel


class _Candidates:
    def __init__(self, width):
        self.features = np.zeros(0, np.int64)
        self.thresholds = np.zeros(0, np.float64)
        self.left = np.zeros((0, width))     # per candidate: stats of its left side
        self.total = np.zeros(width)         # stats of everything seen since collecting
        self.seen = 0


class Tree:
    """One tree: nodes in arrays (feature -1 marks a leaf; a split's children are left and
    left + 1), per-node statistics (class counts, or [count, sum, sum of squares] per
    output for regression), and the candidates of its fertile leaves."""

    def __init__(self, attrs):
        self.lock = threading.Lock()
        self.initialized = False
        self.regression = bool(attrs["regression"])
        self.outputs = int(attrs["num_outputs"])
        self.width = 1 + 2 * self.outputs if self.regression else self.outputs
        self.max_nodes = max(1, int(attrs["max_nodes"]))
        self.split_after = max(1, int(attrs["split_after_samples"]))
        self.num_splits = max(1, int(attrs["num_splits_to_consider"]))
        self.max_fertile = max(1, int(attrs["max_fertile_nodes"]))
        self.bagging = float(attrs["bagging_fraction"])
        self.seed = int(attrs["seed"])
        self.reset()

    def reset(self):
        self.rng = np.random.default_rng(self.seed)
        self.feature = np.full(self.max_nodes, -1, np.int64)
        self.threshold = np.zeros(self.max_nodes)
        self.child = np.zeros(self.max_nodes, np.int64)
        self.stats = np.zeros((self.max_nodes, self.width))
        self.size = 1
        self.fertile = {}

    def route(self, x):
        node = np.zeros(len(x), np.int64)
        active = np.flatnonzero(self.feature[node] >= 0)
        while active.size:
            at = node[active]
            right = x[active, self.feature[at]] > self.threshold[at]
            node[active] = self.child[at] + right
            active = active[self.feature[node[active]] >= 0]
        return node

    def _rows_stats(self, y):
        if not self.regression:
            return np.eye(self.outputs)[y]
        y = y.reshape(len(y), self.outputs)
        return np.concatenate([np.ones((len(y), 1)), y, y * y], axis=1)

    def train(self, x, y):
        if self.bagging < 1.0:
            keep = self.rng.random(len(x)) < self.bagging
            x, y = x[keep], y[keep]
        if not len(x):
            return
        leaves = self.route(x)
        rows_stats = self._rows_stats(y)
        np.add.at(self.stats, leaves, rows_stats)
        for leaf in np.unique(leaves):
            if self.size + 2 > self.max_nodes:
                break
            rows = np.flatnonzero(leaves == leaf)
            candidates = self.fertile.get(leaf)
            if candidates is None:
                if len(self.fertile) >= self.max_fertile:
                    continue
                candidates = self.fertile[leaf] = _Candidates(self.width)
            need = min(self.num_splits - len(candidates.features), len(rows))
            if need > 0:
                features = self.rng.integers(0, x.shape[1], size=need)
                thresholds = x[rows[:need], features].astype(np.float64)
                candidates.features = np.concatenate([candidates.features, features])
                candidates.thresholds = np.concatenate([candidates.thresholds, thresholds])
                candidates.left = np.concatenate([candidates.left,
                                                  np.zeros((need, self.width))])
            goes_left = x[rows][:, candidates.features] <= candidates.thresholds
            candidates.left += goes_left.T.astype(np.float64) @ rows_stats[rows]
            candidates.total += rows_stats[rows].sum(axis=0)
            candidates.seen += len(rows)
            if candidates.seen >= self.split_after:
                self._split(leaf, candidates)

    def _impurity(self, stats):
        """Summed impurity (times the count) of each row of statistics."""
        if self.regression:
            count = np.maximum(stats[:, :1], 1e-12)
            sums, squares = stats[:, 1:1 + self.outputs], stats[:, 1 + self.outputs:]
            return (squares - sums * sums / count).sum(axis=1)
        count = stats.sum(axis=1)
        safe = np.maximum(count, 1e-12)
        return count * (1.0 - ((stats / safe[:, None]) ** 2).sum(axis=1))

    def _split(self, leaf, candidates):
        del self.fertile[leaf]
        left, right = candidates.left, candidates.total - candidates.left
        count = (lambda s: s[:, 0]) if self.regression else (lambda s: s.sum(axis=1))
        valid = (count(left) > 0) & (count(right) > 0)
        if not valid.any():
            return      # every candidate put all examples on one side: collect anew
        score = np.where(valid, self._impurity(left) + self._impurity(right), np.inf)
        best = int(np.argmin(score))
        first = self.size
        self.feature[leaf] = candidates.features[best]
        self.threshold[leaf] = candidates.thresholds[best]
        self.child[leaf] = first
        self.stats[first], self.stats[first + 1] = left[best], right[best]
        self.size += 2

    def predict(self, x):
        stats = self.stats[self.route(x)]
        if self.regression:
            count = np.maximum(stats[:, :1], 1.0)
            mean = stats[:, 1:1 + self.outputs] / count
            variance = np.maximum(stats[:, 1 + self.outputs:] / count - mean * mean, 0.0)
            return mean, variance
        return (stats + 1.0) / (stats.sum(axis=1, keepdims=True) + self.outputs), None


def _ready(tree, what):
    if not tree.initialized:
        raise errors.FailedPreconditionError(None, None, f"{what}: the tree is not "
                                             "initialized: run tf.contrib.tensor_forest's "
                                             "resources.initialize_resources("
                                             "resources.shared_resources()) first")


def _features(x, tree, what):
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise errors.InvalidArgumentError(None, None, f"{what}: input_data must be "
                                          f"[batch, num_features], got shape {list(x.shape)}")
    return x


@register_kernel("TensorForestTree", resource="resource", resource_factory=Tree)
def tensor_forest_tree(tree):
    return np.array(b"", dtype=object)


@register_kernel("TensorForestCreateTree", resource="resource_ref")
def tensor_forest_create_tree(tree):
    with tree.lock:
        tree.reset()
        tree.initialized = True
    return ()


@register_kernel("TensorForestTreeIsInitialized", resource="resource_ref")
def tensor_forest_tree_is_initialized(tree):
    return np.bool_(tree.initialized)


@register_kernel("TensorForestTrain", resource="resource_ref")
def tensor_forest_train(tree, input_data, input_labels):
    _ready(tree, "TensorForestTrain")
    x = _features(input_data, tree, "TensorForestTrain")
    y = np.asarray(input_labels)
    if len(y) != len(x):
        raise errors.InvalidArgumentError(None, None, f"TensorForestTrain: {len(x)} examples "
                                          f"but {len(y)} labels")
    if not tree.regression:
        y = y.reshape(len(y)).astype(np.int64)
        if y.size and (y.min() < 0 or y.max() >= tree.outputs):
            raise errors.InvalidArgumentError(None, None, "TensorForestTrain: labels must be "
                                              f"in [0, {tree.outputs}), got {y.min()}.."
                                              f"{y.max()}")
    else:
        y = y.astype(np.float64)
    with tree.lock:
        tree.train(x, y)
    return ()


@register_kernel("TensorForestPredict", resource="resource_ref")
def tensor_forest_predict(tree, input_data):
    _ready(tree, "TensorForestPredict")
    x = _features(input_data, tree, "TensorForestPredict")
    with tree.lock:
        mean, variance = tree.predict(x)
        leaves = tree.route(x)
    if variance is None:
        variance = np.zeros_like(mean)
    return mean.astype(np.float32), variance.astype(np.float32), leaves.astype(np.int32)


@register_kernel("TensorForestTreeSize", resource="resource_ref")
def tensor_forest_tree_size(tree):
    _ready(tree, "TensorForestTreeSize")
    with tree.lock:
        return np.int32(tree.size)
