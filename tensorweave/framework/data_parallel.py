"""The data-parallel role of this process, for layers that must act on it without knowing who
set it: transparent mode (tensorweave/transparent, L5) runs an unchanged single-process script
on N ranks by installing a policy here, and the layers below consult it at five points:

    Optimizer.apply_gradients      reduce_gradients(grads_and_vars)      (train/optimizer.py)
    Optimizer's learning rate      learning_rate(tensor)                 (train/optimizer.py)
    initializers and restores      after_variables_set(op, variables)    (ops/variables.py,
                                                                          train/saver.py)
    input pipelines                input_shard() -> (count, index)       (data/mnist.py,
                                                                          data/iterator_ops.py,
                                                                          train/input.py)
    checkpoints and summaries      writes_files()                        (train/saver.py,
                                                                          summary/writer.py)

The default policy is a lone process: every method leaves its argument as it is. A policy is
process-wide (transparent mode owns the whole process); `set_policy(None)` restores the
default.
"""


class DataParallelPolicy:
    """A lone process: nothing is reduced, broadcast, sharded or silenced."""

    def reduce_gradients(self, grads_and_vars):
        """The (gradient, variable) pairs an optimizer applies, given the ones it computed."""
        return grads_and_vars

    def learning_rate(self, tensor):
        """The learning-rate tensor an optimizer uses, given the one the script wrote."""
        return tensor

    def after_variables_set(self, op, variables):
        """An op to run in place of `op`, which initialises or restores `variables`."""
        return op

    def input_shard(self):
        """(number of shards, this process's shard) of every input pipeline's examples."""
        return 1, 0

    def writes_files(self):
        """False when this process must not write checkpoints or summaries."""
        return True


_DEFAULT = DataParallelPolicy()
_policy = _DEFAULT


def policy():
    """The policy in force (the lone-process default unless one was set)."""
    return _policy


def set_policy(new_policy):
    """Installs `new_policy` (None: the default); returns the one it replaces."""
    global _policy
    if new_policy is not None and not isinstance(new_policy, DataParallelPolicy):
        raise TypeError(f"set_policy takes a DataParallelPolicy or None, got "
                        f"{type(new_policy).__name__}")
    previous, _policy = _policy, new_policy or _DEFAULT
    return previous
