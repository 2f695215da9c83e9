"""Horovod's Adasum reduction (op=hvd.Adasum), composed from graph ops.

Adasum (Maleki et al., "Scaling Distributed Training with Adaptive Summation", 2021) combines
two gradients a and b as

    adasum(a, b) = (1 - a.b / (2 |a|^2)) a + (1 - a.b / (2 |b|^2)) b

so parallel gradients are averaged (a = b gives a), orthogonal ones summed (a.b = 0 gives
a + b), and the rest in between. Over n ranks the combination is a binary tree in rank order
(the pairing of Horovod's recursive halving: ranks 2i and 2i+1 first, then pairs of pairs),
dot products and norms taken in float64. Horovod's CPU path needs a power-of-two number of
ranks; here any count works: an unpaired vector at some level moves up unchanged (for a power
of two the result is Horovod's). A zero vector gets coefficient 1 (it adds nothing).

Built as an allgather of the flattened tensor within the set, then the tree on every rank: the
result is identical on every rank, and the gradient comes from the ops' own. It moves n times
the tensor per rank where Horovod's vector-halving moves about twice: fine for the modest
tensor sizes of a CPU job, and the price of composing instead of a new primitive.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.ops import array_ops, collective_ops, math_ops, reduction_ops, slicing_ops


def combine(a, b):
    """adasum(a, b) of two flat tensors of one floating dtype (see the module docstring)."""
    wide_a, wide_b = math_ops.cast(a, dtypes.float64), math_ops.cast(b, dtypes.float64)
    dot = reduction_ops.reduce_sum(wide_a * wide_b)
    zero = convert_to_tensor(0.0, dtype=dtypes.float64)
    one = convert_to_tensor(1.0, dtype=dtypes.float64)

    def coefficient(norm_squared):
        nonzero = math_ops.greater(norm_squared, zero)
        safe = math_ops.where(nonzero, norm_squared, one)  # no 0/0, in values or gradients
        return math_ops.where(nonzero, one - dot / (2.0 * safe), one)

    coefficient_a = coefficient(reduction_ops.reduce_sum(wide_a * wide_a))
    coefficient_b = coefficient(reduction_ops.reduce_sum(wide_b * wide_b))
    return math_ops.cast(coefficient_a, a.dtype) * a + math_ops.cast(coefficient_b, b.dtype) * b


def tree(vectors):
    """The binary-tree Adasum of `vectors` (flat tensors) in order."""
    level = list(vectors)
    while len(level) > 1:
        paired = [combine(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def adasum(tensor, process_set, group, compression, name):
    """hvd.allreduce(tensor, op=hvd.Adasum, process_set=...): the Adasum of every member's
    `tensor`, on every member. `group`: the collective ops' group attributes of the set."""
    tensor = convert_to_tensor(tensor)
    if not tensor.dtype.is_floating:
        raise ValueError(f"hvd.allreduce: Adasum needs a floating tensor, got {tensor.dtype.name}")
    size = process_set.size()
    with graph_lib.name_scope(name, "HorovodAdasum", [tensor]):
        compressed, ctx = compression.compress(tensor)
        flat = array_ops.reshape(compressed, [1, -1])
        gathered = collective_ops.all_gather(flat, name="HorovodAdasumGather", **group)
        vectors = slicing_ops.unstack(gathered, num=size) if size > 1 else [flat[0]]
        result = array_ops.reshape(tree(vectors), array_ops.shape(compressed))
        return compression.decompress(result, ctx)
