"""`tensor_forest.ForestHParams` and `RandomForestGraphs`: a forest of trees that grow online
as training batches arrive (kernels/tensor_forest.py has the growing rule); inference averages
the trees' leaf distributions (classification, Laplace-smoothed class counts) or means
(regression, with their variance)."""
import math

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import (array_ops, control_flow_ops, math_ops, reduction_ops, resources,
                             slicing_ops)
from tensorweave.ops import tensor_forest_ops  # noqa: F401 - registers the ops
from tensorweave.ops.op_util import make_op, make_tensor


class ForestHParams:
    """The forest's settings; `fill()` derives the defaults that depend on the data
    (num_splits_to_consider, max_fertile_nodes, num_outputs)."""

    def __init__(self, num_trees=100, max_nodes=10000, bagging_fraction=1.0,
                 num_splits_to_consider=0, feature_bagging_fraction=1.0, max_fertile_nodes=0,
                 split_after_samples=250, valid_leaf_threshold=1, dominate_method="bootstrap",
                 dominate_fraction=0.99, model_name="all_dense", split_finish_name="basic",
                 split_pruning_name="none", prune_every_samples=0,
                 early_finish_check_every_samples=0, collate_examples=False,
                 checkpoint_stats=False, use_running_stats_method=False,
                 initialize_average_splits=False, inference_tree_paths=False, param_file=None,
                 split_name="less_or_equal", **kwargs):
        settings = dict(locals())
        settings.pop("self")
        settings.pop("kwargs")
        settings.update(kwargs)
        self.__dict__.update(settings)

    def values(self):
        return dict(self.__dict__)

    def fill(self):
        """Completes the settings; a classifier needs num_classes, every forest
        num_features."""
        self.regression = getattr(self, "regression", False)
        if not hasattr(self, "num_features"):
            raise ValueError("ForestHParams: num_features is required")
        if self.regression:
            self.num_outputs = getattr(self, "num_outputs", 1)
            self.num_classes = getattr(self, "num_classes", self.num_outputs)
        else:
            if not hasattr(self, "num_classes"):
                raise ValueError("ForestHParams: num_classes is required for classification")
            self.num_outputs = self.num_classes
        if self.split_name != "less_or_equal":
            raise ValueError(f"ForestHParams: split_name {self.split_name!r} is not "
                             "supported (only 'less_or_equal')")
        if self.feature_bagging_fraction != 1.0:
            raise ValueError("ForestHParams: feature_bagging_fraction other than 1.0 is not "
                             "supported by tensorweave")
        self.bagged_num_features = self.num_features
        self.num_splits_to_consider = self.num_splits_to_consider or max(
            10, int(math.ceil(math.sqrt(self.num_features))))
        self.max_fertile_nodes = self.max_fertile_nodes or int(math.ceil(self.max_nodes / 2.0))
        self.base_random_seed = getattr(self, "base_random_seed", 0)
        return self


class RandomForestGraphs:
    """`num_trees` tree resources (registered in GraphKeys.RESOURCES) and the graphs that
    train them, predict with them and measure them."""

    def __init__(self, params, tree_configs=None, tree_stats=None, device_assigner=None,
                 variables=None, tree_variables_class=None, tree_graphs=None, training=True):
        if not hasattr(params, "num_outputs"):
            params = params.fill()
        self.params = params
        self.trees = []
        with graph_lib.name_scope("forest"):
            for i in range(params.num_trees):
                seed = (params.base_random_seed or 0) * 100003 + i + 1
                with graph_lib.name_scope(f"tree-{i}"):
                    handle = make_tensor("TensorForestTree", [], {
                        "regression": bool(params.regression),
                        "num_outputs": int(params.num_outputs),
                        "max_nodes": int(params.max_nodes),
                        "split_after_samples": int(params.split_after_samples),
                        "num_splits_to_consider": int(params.num_splits_to_consider),
                        "max_fertile_nodes": int(params.max_fertile_nodes),
                        "bagging_fraction": float(params.bagging_fraction),
                        "seed": int(seed)}, "TreeVariable")
                    create = make_op("TensorForestCreateTree", [handle], name="CreateTree")
                    ready = make_tensor("TensorForestTreeIsInitialized", [handle],
                                        name="IsInitialized")
                resources.register_resource(handle, create, ready)
                self.trees.append(handle)

    def _inputs(self, input_data):
        data = convert_to_tensor(input_data)
        return data if data.dtype == dtypes.float32 else math_ops.cast(data, dtypes.float32)

    def training_graph(self, input_data, input_labels, num_trainers=1, trainer_id=0,
                       **tree_kwargs):
        """One op growing every tree with this batch."""
        data = self._inputs(input_data)
        labels = convert_to_tensor(input_labels)
        if self.params.regression and labels.dtype != dtypes.float32:
            labels = math_ops.cast(labels, dtypes.float32)
        with graph_lib.name_scope("training"):
            ops = [make_op("TensorForestTrain", [tree, data, labels], name=f"train-{i}")
                   for i, tree in enumerate(self.trees)]
            return control_flow_ops.group(*ops, name="train")

    def inference_graph(self, input_data, **inference_args):
        """(probabilities or predicted means [batch, outputs], the leaf each tree reached
        [batch, num_trees], and for regression the variance across and within trees, else
        None)."""
        data = self._inputs(input_data)
        with graph_lib.name_scope("inference"):
            means, variances, leaves = [], [], []
            for i, tree in enumerate(self.trees):
                op = make_op("TensorForestPredict", [tree, data], name=f"predict-{i}")
                means.append(op.outputs[0])
                variances.append(op.outputs[1])
                leaves.append(op.outputs[2])
            count = float(len(self.trees))
            mean = math_ops.add_n(means) / count if len(means) > 1 else means[0]
            paths = slicing_ops.stack(leaves, axis=1)
            if not self.params.regression:
                return array_ops.identity(mean, name="probabilities"), paths, None
            # law of total variance: the mean within-tree variance plus the spread of means
            spread = math_ops.add_n([math_ops.square(m - mean) for m in means]) / count
            within = math_ops.add_n(variances) / count
            return array_ops.identity(mean, name="predictions"), paths, within + spread

    def average_size(self):
        """The trees' mean number of nodes."""
        with graph_lib.name_scope("average_size"):
            sizes = [math_ops.cast(make_tensor("TensorForestTreeSize", [tree]), dtypes.float32)
                     for tree in self.trees]
            return reduction_ops.reduce_mean(slicing_ops.stack(sizes))

    def training_loss(self, features, labels, name="training_loss"):
        """What TF's tensor_forest reports as the training loss: minus the average tree
        size (it falls while the trees grow)."""
        return math_ops.negative(self.average_size(), name=name)

    def validation_loss(self, features, labels):
        return self.training_loss(features, labels, name="validation_loss")

