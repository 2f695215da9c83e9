"""`tf.train.CheckpointOptions`: how tf.train.Checkpoint saves and restores.

  experimental_skip_slot_variables  the optimizers' slot variables are neither written nor
                                    read (restoring leaves them as they are)
  experimental_write_callbacks      callables run after each write, given the checkpoint's
                                    path (a callback may also take no argument)
  experimental_io_device            the device the save and restore ops run on (e.g.
                                    "/job:localhost"); by default, next to the variables
  enable_async / experimental_enable_async_checkpoint
                                    accepted; a graph-mode save here is one session.run that
                                    returns once the files are renamed into place, so
                                    writing is always complete when save() returns
  experimental_sharding_callback    not supported (a ValueError names it): TF 2's sharding
                                    policies need its tensor-slice writer
"""


class CheckpointOptions:
    __slots__ = ("experimental_io_device", "experimental_enable_async_checkpoint",
                 "experimental_write_callbacks", "enable_async",
                 "experimental_skip_slot_variables", "experimental_sharding_callback")

    def __init__(self, experimental_io_device=None, experimental_enable_async_checkpoint=False,
                 experimental_write_callbacks=None, enable_async=False,
                 experimental_skip_slot_variables=False, experimental_sharding_callback=None):
        if experimental_sharding_callback is not None:
            raise ValueError("CheckpointOptions: experimental_sharding_callback is not "
                             "supported here (checkpoints are sharded per task by the Saver)")
        callbacks = experimental_write_callbacks or []
        if not all(callable(cb) for cb in callbacks):
            raise TypeError(f"CheckpointOptions: experimental_write_callbacks must be a list of "
                            f"callables, got {experimental_write_callbacks!r}")
        self.experimental_io_device = experimental_io_device
        self.experimental_enable_async_checkpoint = bool(experimental_enable_async_checkpoint)
        self.enable_async = bool(enable_async or experimental_enable_async_checkpoint)
        self.experimental_write_callbacks = list(callbacks)
        self.experimental_skip_slot_variables = bool(experimental_skip_slot_variables)
        self.experimental_sharding_callback = None

    def select(self, var_map):
        """The part of a {checkpoint key: variable} map these options save or restore."""
        if not self.experimental_skip_slot_variables:
            return var_map
        return {key: var for key, var in var_map.items() if ".OPTIMIZER_SLOT/" not in key}

    def after_write(self, path):
        for callback in self.experimental_write_callbacks:
            try:
                callback(path)
            except TypeError:
                callback()

    def __repr__(self):
        return (f"CheckpointOptions(experimental_io_device={self.experimental_io_device!r}, "
                f"enable_async={self.enable_async}, experimental_skip_slot_variables="
                f"{self.experimental_skip_slot_variables})")


DEFAULT = CheckpointOptions()
