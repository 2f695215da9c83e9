"""Kernel of SdcaOptimizer (ops/sdca_ops.py): one pass of stochastic dual coordinate ascent,
with TF's loss updaters (squared, logistic, hinge, smooth hinge with gamma 1) and update
rules, written from TF's published equations.

For each example i (in order; with `adaptative`, first those drawn in proportion to how far
their dual is from optimal): wx = x_i . shrink(w + num_loss_partitions * delta) (shrink: the
proximal L1 step, l1 / l2), the loss updater gives the new dual a_i', the weights' deltas
move by (a_i' - a_i) * weight_i / l2 * x_i, and the example state records (a_i', primal loss
at the previous weights, dual loss at the previous dual, weight_i). TF runs the examples on
several threads at once (and draws the adaptive order from a nondeterministic source); here
they run one after the other, and the adaptive draw is seeded (0), so a pass is
reproducible.
"""
import math

import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel


def _bad(message):
    return errors.InvalidArgumentError(None, None, f"SdcaOptimizer: {message}")


class _Squared:
    smoothness = 1.0

    @staticmethod
    def label(value):
        return value

    @staticmethod
    def dual(partitions, label, weight, dual, wx, norm):
        return dual + (label - dual - wx) / (1 + partitions * norm * weight)

    @staticmethod
    def dual_loss(dual, label, weight):
        return dual * (0.5 * dual - label) * weight

    @staticmethod
    def primal_loss(wx, label, weight):
        return (wx - label) ** 2 * weight * 0.5

    @staticmethod
    def derivative(wx, label, weight):
        return (wx - label) * weight


class _Binary:
    """Labels 0 / 1 become -1 / 1."""

    @staticmethod
    def label(value):
        if value == 0.0:
            return -1.0
        if value == 1.0:
            return 1.0
        raise _bad(f"Only labels of 0.0 or 1.0 are supported right now. Found example with "
                   f"label: {value}")


class _Logistic(_Binary):
    smoothness = 4.0

    @staticmethod
    def dual(partitions, label, weight, dual, wx, norm):
        # Newton's method on TF's modified objective: 10 steps converge quadratically.
        scale = partitions * norm * weight
        x = 0.0
        for _ in range(10):
            t = math.tanh(x)
            numerator = -2 * label * x - wx - scale * (0.5 * (1 + t) / label - dual)
            denominator = -2 * label - scale * (1 - t * t) * 0.5 / label
            x -= numerator / denominator
        return 0.5 * (1 + math.tanh(x)) / label

    @staticmethod
    def dual_loss(dual, label, weight):
        ay = dual * label
        first = ay * math.log(ay) if ay > 0 else 0.0
        rest = 1 - ay
        return (first + (rest * math.log(rest) if rest > 0 else 0.0)) * weight

    @staticmethod
    def primal_loss(wx, label, weight):
        margin = label * wx
        if margin > 0:
            return math.log1p(math.exp(-margin)) * weight
        return (math.log1p(math.exp(margin)) - margin) * weight

    @staticmethod
    def derivative(wx, label, weight):
        margin = label * wx
        inverse = math.exp(-margin) / (1 + math.exp(-margin)) if margin > 0 else \
            1 / (1 + math.exp(margin))
        return -inverse * label * weight


class _Hinge(_Binary):
    smoothness = 0.0
    gamma = 0.0

    @classmethod
    def dual(cls, partitions, label, weight, dual, wx, norm):
        candidate = dual + (label - wx - cls.gamma * dual) / (partitions * weight * norm +
                                                               cls.gamma)
        if label * candidate < 0:
            return 0.0
        if label * candidate > 1.0:
            return label
        return candidate

    @classmethod
    def dual_loss(cls, dual, label, weight):
        y_alpha = dual * label
        if y_alpha < 0 or y_alpha > 1.0:
            return float(np.finfo(np.float64).max)
        return (-y_alpha + 0.5 * cls.gamma * dual * dual) * weight

    @staticmethod
    def primal_loss(wx, label, weight):
        return max(0.0, 1 - label * wx) * weight

    @staticmethod
    def derivative(wx, label, weight):
        return -label * weight if label * wx < 1 else 0.0


class _SmoothHinge(_Hinge):
    smoothness = 1.0
    gamma = 1.0

    @classmethod
    def primal_loss(cls, wx, label, weight):
        margin = label * wx
        if margin >= 1:
            return 0.0
        if margin <= 1 - cls.gamma:
            return (1 - margin - cls.gamma / 2) * weight
        return (1 - margin) ** 2 * weight * 0.5 / cls.gamma

    @classmethod
    def derivative(cls, wx, label, weight):
        margin = label * wx
        if margin >= 1:
            return 0.0
        return -label if margin <= 1 - cls.gamma else (wx - label) / cls.gamma


_LOSSES = {"squared_loss": _Squared, "logistic_loss": _Logistic, "hinge_loss": _Hinge,
           "smooth_hinge_loss": _SmoothHinge}


def _shrink(values, shrinkage):
    return np.sign(values) * np.maximum(np.abs(values) - shrinkage, 0.0)


class _Model:
    """The weights (nominal + deltas) and each example's features."""

    def __init__(self, groups, dense_features, dense_weights, count):
        self.sparse = []  # per group: (nominals, deltas, {feature index: position}, rows)
        for group, (example_ids, feature_ids, values, indices, weights) in enumerate(groups):
            position = {int(index): k for k, index in enumerate(np.asarray(indices))}
            rows = [([], []) for _ in range(count)]
            for k, (example, feature) in enumerate(zip(np.asarray(example_ids),
                                                       np.asarray(feature_ids))):
                if int(feature) not in position:
                    raise _bad(f"Found sparse feature indices out of valid range: {feature}")
                if not 0 <= example < count:
                    raise _bad(f"sparse example index {example} of group {group} is not one "
                               f"of the {count} examples")
                rows[int(example)][0].append(position[int(feature)])
                rows[int(example)][1].append(1.0 if values is None else float(values[k]))
            self.sparse.append((np.asarray(weights, np.float64).reshape(-1),
                                np.zeros(len(position)), [(np.array(i, np.int64),
                                                           np.array(v)) for i, v in rows]))
        self.dense = []
        for features, weights in zip(dense_features, dense_weights):
            features = np.asarray(features, np.float64)
            weights = np.asarray(weights, np.float64).reshape(-1)
            if features.ndim != 2 or features.shape[0] != count:
                raise _bad(f"dense features must be [{count}, dim], got {list(features.shape)}")
            if features.shape[1] > weights.size:
                raise _bad(f"More dense features than we have parameters for: "
                           f"{features.shape[1]}")
            self.dense.append((weights, np.zeros(weights.size), features))

    def squared_norm(self, i):
        total = sum(float(np.sum(values ** 2)) for _, _, rows in self.sparse
                    for values in (rows[i][1],))
        return total + sum(float(np.sum(features[i] ** 2)) for _, _, features in self.dense)

    def wx(self, i, partitions, shrinkage):
        """(wx with the current deltas, wx with the nominal weights)."""
        now = before = 0.0
        for nominals, deltas, rows in self.sparse:
            positions, values = rows[i]
            now += float(values @ _shrink(nominals[positions] + deltas[positions] * partitions,
                                          shrinkage))
            before += float(values @ _shrink(nominals[positions], shrinkage))
        for nominals, deltas, features in self.dense:
            row = features[i]
            width = row.size
            now += float(row @ _shrink(nominals[:width] + deltas[:width] * partitions,
                                       shrinkage))
            before += float(row @ _shrink(nominals[:width], shrinkage))
        return now, before

    def update(self, i, step):
        for _, deltas, rows in self.sparse:
            positions, values = rows[i]
            np.add.at(deltas, positions, values * step)
        for _, deltas, features in self.dense:
            deltas[:features.shape[1]] += features[i] * step


def _adaptive_order(model, loss, labels, weights, state, partitions, shrinkage, l2):
    """TF's adaptive sampling: draws in proportion to weight * sqrt(|x|^2 + l2 * smoothness) *
    |dual + loss'(wx)|, a drawn example kept with probability 0.1^(times drawn before); the
    examples never drawn follow, most probable first. Seeded, so reproducible."""
    count = len(labels)
    probabilities = np.array([
        weights[i] * math.sqrt(model.squared_norm(i) + l2 * loss.smoothness) *
        abs(state[i, 0] + loss.derivative(model.wx(i, partitions, shrinkage)[0], labels[i],
                                          weights[i])) for i in range(count)])
    rng = np.random.RandomState(0)
    order, drawn, retries = [], np.zeros(count, np.int64), 0
    total = probabilities.sum()
    while total > 0 and len(order) < count and retries < count:
        pick = int(rng.choice(count, p=probabilities / total))
        if rng.uniform() > 0.1 ** drawn[pick]:
            retries += 1
            continue
        drawn[pick] += 1
        order.append(pick)
    unseen = sorted((i for i in range(count) if drawn[i] == 0),
                    key=lambda i: -probabilities[i])
    return (order + unseen)[:count]


@register_kernel("SdcaOptimizer")
def sdca_optimizer(*args, loss_type, adaptative, num_sparse_features,
                   num_sparse_features_with_values, num_dense_features, l1, l2,
                   num_loss_partitions, num_inner_iterations):
    sparse, valued, dense = num_sparse_features, num_sparse_features_with_values, \
        num_dense_features
    if loss_type not in _LOSSES:
        raise _bad(f"Unsupported loss type: {loss_type}")
    if sparse + dense == 0:
        raise _bad("Requires at least one feature to train.")
    args = list(args)
    example_ids, feature_ids = args[:sparse], args[sparse:2 * sparse]
    values = args[2 * sparse:2 * sparse + valued]
    at = 2 * sparse + valued
    dense_features = args[at:at + dense]
    example_weights, example_labels = (np.asarray(a, np.float64).reshape(-1)
                                       for a in args[at + dense:at + dense + 2])
    at += dense + 2
    sparse_indices, sparse_weights = args[at:at + sparse], args[at + sparse:at + 2 * sparse]
    dense_weights = args[at + 2 * sparse:at + 2 * sparse + dense]
    state = np.array(args[-1], dtype=np.float32)
    count = example_weights.size
    if state.shape != (count, 4):
        raise _bad(f"Expected shape [{count},4] for example_state_data, got "
                   f"{list(state.shape)}")
    loss = _LOSSES[loss_type]
    groups = [(example_ids[g], feature_ids[g], values[g] if g < valued else None,
               sparse_indices[g], sparse_weights[g]) for g in range(sparse)]
    model = _Model(groups, dense_features, dense_weights, count)
    labels = [loss.label(float(y)) for y in example_labels]
    shrinkage = l1 / l2
    order = _adaptive_order(model, loss, labels, example_weights, state, num_loss_partitions,
                            shrinkage, l2) if adaptative else range(count)
    for i in order:
        dual, weight = float(state[i, 0]), float(example_weights[i])
        wx, previous_wx = model.wx(i, num_loss_partitions, shrinkage)
        norm = model.squared_norm(i) / l2
        new_dual = loss.dual(num_loss_partitions, labels[i], weight, dual, wx, norm)
        model.update(i, (new_dual - dual) * weight / l2)
        state[i] = (new_dual, loss.primal_loss(previous_wx, labels[i], weight),
                    loss.dual_loss(dual, labels[i], weight), weight)
    sparse_out = [deltas.astype(np.float32).reshape(np.shape(w))
                  for (_, deltas, _), w in zip(model.sparse, sparse_weights)]
    dense_out = [deltas.astype(np.float32).reshape(np.shape(w))
                 for (_, deltas, _), w in zip(model.dense, dense_weights)]
    return tuple([state] + sparse_out + dense_out)
