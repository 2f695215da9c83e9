"""RegAdagradOptimizer: Adagrad whose accumulator can be frozen for updates that should not
count as gradient history, e.g. a regularization step:

    optimizer = tf.contrib.opt.RegAdagradOptimizer(0.1)
    train_op = optimizer.minimize(loss)
    with optimizer.avoid_updating_slots():
        regularize_op = optimizer.minimize(regularization_loss)

Updates built inside the `with` block move the variable with the current accumulator and
leave the accumulator alone; those built outside update both, as Adagrad does.
"""
import contextlib

from tensorweave.train.adagrad import AdagradOptimizer


class RegAdagradOptimizer(AdagradOptimizer):
    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="RegAdagrad"):
        super().__init__(learning_rate, initial_accumulator_value=initial_accumulator_value,
                         use_locking=use_locking, name=name)

    @contextlib.contextmanager
    def avoid_updating_slots(self):
        """Within the block, the update ops built leave the accumulator unchanged."""
        previous = self._update_slots
        self._update_slots = False
        try:
            yield
        finally:
            self._update_slots = previous
