"""`tf.distribute.experimental`'s collective communication options.

CommunicationImplementation is CollectiveCommunication (AUTO, RING, NCCL), as in TF.
CommunicationOptions(bytes_per_pack=0, timeout_seconds=None, implementation=AUTO) and the
older CollectiveHints(bytes_per_pack=0, timeout_seconds=None) are what strategies'
all_reduce / reduce / batch_reduce_to take as `options`. Here every implementation is the
native collective backend, which already packs small tensors of one cycle together, and a
collective whose peers disagree fails at once rather than waiting for a timeout; the options
are validated as TF validates them and kept on the object."""
from tensorweave.distribute.multi_worker import CollectiveCommunication

CommunicationImplementation = CollectiveCommunication


def _check(bytes_per_pack, timeout_seconds):
    if bytes_per_pack < 0:
        raise ValueError(f"Argument `bytes_per_pack` must be >=0, Received {bytes_per_pack}.")
    if timeout_seconds is not None and timeout_seconds <= 0:
        raise ValueError(f"Argument `timeout_seconds` must be positive, Received "
                         f"{timeout_seconds}.")


class CommunicationOptions:
    def __init__(self, bytes_per_pack=0, timeout_seconds=None,
                 implementation=CommunicationImplementation.AUTO):
        _check(bytes_per_pack, timeout_seconds)
        if isinstance(implementation, str):
            implementation = CommunicationImplementation[implementation.upper()]
        if not isinstance(implementation, CommunicationImplementation):
            raise ValueError(f"Argument `implementation` must be a tf.distribute.experimental."
                             f"CommunicationImplementation, got {implementation!r}")
        self.bytes_per_pack, self.timeout_seconds = bytes_per_pack, timeout_seconds
        self.implementation = implementation

    def merge(self, options):
        """These options with `options`' non-default values taking precedence (TF's)."""
        merged = CommunicationOptions(self.bytes_per_pack, self.timeout_seconds,
                                      self.implementation)
        if options is None:
            return merged
        if options.bytes_per_pack:
            merged.bytes_per_pack = options.bytes_per_pack
        if options.timeout_seconds is not None:
            merged.timeout_seconds = options.timeout_seconds
        if getattr(options, "implementation", CommunicationImplementation.AUTO) != \
                CommunicationImplementation.AUTO:
            merged.implementation = options.implementation
        return merged

    def __repr__(self):
        return (f"Options(bytes_per_pack={self.bytes_per_pack},timeout_seconds="
                f"{self.timeout_seconds}, implementation={self.implementation})")


class CollectiveHints:
    """Deprecated in TF for CommunicationOptions: the same two hints."""

    def __init__(self, bytes_per_pack=0, timeout_seconds=None):
        _check(bytes_per_pack, timeout_seconds)
        self.bytes_per_pack, self.timeout_seconds = bytes_per_pack, timeout_seconds
