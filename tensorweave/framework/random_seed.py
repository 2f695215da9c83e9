"""Graph-level and op-level seeds (`tf.set_random_seed`), combined as TF 1.x does."""
from tensorweave.framework import graph as graph_lib

DEFAULT_GRAPH_SEED = 87654321
_MAX_INT32 = 2**31 - 1


def get_seed(op_seed):
    """(graph_seed, op_seed) for a new random op; (None, None) means nondeterministic.

    With a graph seed and no op seed, op seeds come from the graph's op counter, so the same
    program gives the same numbers; with only an op seed, the default graph seed is used.
    """
    graph = graph_lib.get_default_graph()
    graph_seed = graph.seed
    if graph_seed is not None:
        if op_seed is None:
            op_seed = graph._last_id
        seeds = int(graph_seed), int(op_seed)
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, int(op_seed)
    else:
        return None, None
    # Kernels read (0, 0) as "nondeterministic"; tf.set_random_seed(0) with seed=0 must not be.
    return (0, _MAX_INT32) if seeds == (0, 0) else seeds


def set_random_seed(seed):
    graph_lib.get_default_graph().seed = seed
