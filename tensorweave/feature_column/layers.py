"""`tf.feature_column.input_layer` and `linear_model`: a features dict through columns.

input_layer concatenates the dense columns (sorted by name, as TF) into [batch, total width];
each column's variables live in variable scope input_layer/<column name>.
linear_model is a weighted sum over every column plus a bias: a dense column gets a
[width, units] weight matrix, a categorical one a [num_buckets, units] table whose rows for
an example's ids are combined with `sparse_combiner`; variables are
linear_model/<column name>/weights and linear_model/bias_weights, zero-initialised (TF's
names, so checkpoints line up).
"""
from tensorweave.feature_column.columns import (CategoricalColumn, DenseColumn, FeatureCache,
                                                combine_rows, lookup_rows)
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.ops import init_ops, linalg_ops, math_ops, slicing_ops, variable_scope

_COMBINERS = ("mean", "sqrtn", "sum")


def _checked_columns(feature_columns, allowed, function):
    if feature_columns is None:
        raise ValueError(f"{function}: feature_columns must not be None")
    columns = list(feature_columns) if isinstance(feature_columns, (list, tuple, set)) \
        else [feature_columns]
    if not columns:
        raise ValueError(f"{function}: feature_columns must not be empty")
    for column in columns:
        if not isinstance(column, allowed):
            hint = (" You can wrap a categorical column with an embedding_column or "
                    "indicator_column." if isinstance(column, CategoricalColumn) else "")
            raise ValueError(f"{function}: items of feature_columns must be "
                             f"{' or '.join(a.__name__ for a in allowed)}, got "
                             f"{column!r}.{hint}")
    names = [column.name for column in columns]
    if len(set(names)) != len(names):
        raise ValueError(f"{function}: duplicate feature column names {sorted(names)}")
    return sorted(columns, key=lambda column: column.name)


def _add_to(collections, variables):
    for key in collections or ():
        for var in variables:
            if var not in graph_lib.get_collection(key):
                graph_lib.add_to_collection(key, var)


def _variables_in(scope_name):
    return [v for v in graph_lib.get_collection(graph_lib.GraphKeys.GLOBAL_VARIABLES)
            if v.op.name.startswith(scope_name + "/")]


def input_layer(features, feature_columns, weight_collections=None, trainable=True,
                cols_to_vars=None):
    columns = _checked_columns(feature_columns, (DenseColumn,), "input_layer")
    cache = FeatureCache(features)
    outputs = []
    with variable_scope.variable_scope(None, default_name="input_layer"):
        for column in columns:
            with variable_scope.variable_scope(None, default_name=column.name) as scope:
                outputs.append(column.dense_tensor(cache, trainable=trainable))
                made = _variables_in(scope.name)
            _add_to(weight_collections, made)
            if cols_to_vars is not None:
                cols_to_vars[column] = made
        return slicing_ops.concat(outputs, 1)


def linear_model(features, feature_columns, units=1, sparse_combiner="sum",
                 weight_collections=None, trainable=True, cols_to_vars=None):
    if sparse_combiner not in _COMBINERS:
        raise ValueError(f"linear_model: sparse_combiner must be one of {_COMBINERS}, got "
                         f"{sparse_combiner!r}")
    columns = _checked_columns(feature_columns, (DenseColumn, CategoricalColumn),
                               "linear_model")
    cache = FeatureCache(features)
    terms = []
    with variable_scope.variable_scope(None, default_name="linear_model"):
        for column in columns:
            with variable_scope.variable_scope(None, default_name=column.name):
                # A bucketized column is both: like TF, it is read as categorical here.
                if isinstance(column, CategoricalColumn):
                    weights = variable_scope.get_variable(
                        "weights", [column.num_buckets, units], dtype=dtypes.float32,
                        initializer=init_ops.zeros_initializer(), trainable=trainable)
                    ids = column.ids(cache)
                    terms.append(combine_rows(lookup_rows(weights, ids), ids, sparse_combiner,
                                              column.weights(cache)))
                else:
                    weights = variable_scope.get_variable(
                        "weights", [column.variable_dimension, units], dtype=dtypes.float32,
                        initializer=init_ops.zeros_initializer(), trainable=trainable)
                    terms.append(linalg_ops.matmul(column.dense_tensor(cache, trainable),
                                                   weights))
            _add_to(weight_collections, [weights])
            if cols_to_vars is not None:
                cols_to_vars[column] = [weights]
        bias = variable_scope.get_variable("bias_weights", [units], dtype=dtypes.float32,
                                           initializer=init_ops.zeros_initializer(),
                                           trainable=trainable)
        _add_to(weight_collections, [bias])
        if cols_to_vars is not None:
            cols_to_vars["bias"] = [bias]
        return math_ops.add(math_ops.add_n(terms) if len(terms) > 1 else terms[0], bias,
                            name="weighted_sum")
