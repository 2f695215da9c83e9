"""`tf.contrib.tensor_forest`: online random forests in the graph (ForestHParams,
RandomForestGraphs), as TF 1.x programs build them:

    from tensorflow.contrib.tensor_forest.python import tensor_forest
    from tensorflow.python.ops import resources
    hparams = tensor_forest.ForestHParams(num_classes=10, num_features=784, num_trees=10,
                                          max_nodes=1000).fill()
    forest = tensor_forest.RandomForestGraphs(hparams)
    train_op = forest.training_graph(X, Y)
    probabilities, _, _ = forest.inference_graph(X)
    init = tf.group(tf.global_variables_initializer(),
                    resources.initialize_resources(resources.shared_resources()))
"""
from tensorweave.contrib.tensor_forest import python  # noqa: F401
