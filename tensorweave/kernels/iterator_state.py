"""Kernels of ops/iterator_state_ops.py (see there for the state and how it is restored)."""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.dataset import lookup_dataset, resolve_handle
from tensorweave.kernels.registry import register_kernel

_PREFIX = "tensorweave-iterator-state:v1:"


@register_kernel("SerializeIterator")
def serialize_iterator(handle):
    resource = resolve_handle(handle)
    return np.array(f"{_PREFIX}{int(resource.started)}:{resource.produced}".encode(),
                    dtype=object)


def _parse(serialized):
    text = serialized.item() if isinstance(serialized, np.ndarray) else serialized
    text = text.decode() if isinstance(text, bytes) else str(text)
    try:
        if not text.startswith(_PREFIX):
            raise ValueError(text)
        started, produced = text[len(_PREFIX):].split(":")
        return started == "1", int(produced)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"DeserializeIterator: {text[:80]!r} is not an iterator state written "
            "by SerializeIterator") from None


@register_kernel("DeserializeIterator", step_context=True)
def deserialize_iterator(step, handle, serialized, *arguments, dataset):
    started, produced = _parse(serialized)
    resource = resolve_handle(handle)
    if not started:
        resource.close()
        resource.started, resource.produced = False, 0
        return ()
    source = lookup_dataset(dataset)
    resource.check_types(source.output_types)
    elements = source.make_iterator(arguments, step.outliving())
    skipped = 0
    for _ in range(produced):  # replay up to the saved position
        try:
            next(elements)
        except StopIteration:
            break
        skipped += 1
    resource.start(elements)
    resource.produced = skipped
    return ()
