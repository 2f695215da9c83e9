"""Keras masks: a layer call's output may carry a boolean mask ([batch, time] for sequences)
saying which timesteps are real and which are padding. Embedding(mask_zero=True) and Masking
make one; layers that support masking pass it on (compute_mask); RNN layers skip the masked
steps, GlobalAveragePooling1D averages over the kept ones, and a model's losses and metrics
weight by the mask of its output.

Graph Tensors have fixed slots, so, like the layer-call history (node.py), masks live in a
table per graph keyed by tensor name."""
import weakref

from tensorweave.framework import graph as graph_lib
from tensorweave.keras.engine import node as node_lib

_MASKS = weakref.WeakKeyDictionary()  # graph -> {tensor name: mask tensor}


def get_mask(tensor):
    """The mask carried by `tensor`, or None."""
    if not isinstance(tensor, graph_lib.Tensor):
        return None
    return _MASKS.get(tensor.graph, {}).get(tensor.name)


def input_masks(inputs):
    """The masks of a layer call's inputs: one mask (or None) for a single input, a list for a
    list of inputs, None when nothing is masked."""
    if isinstance(inputs, (list, tuple)):
        masks = [get_mask(t) for t in inputs]
        return masks if any(m is not None for m in masks) else None
    return get_mask(inputs)


def set_masks(outputs, masks):
    """Attaches `masks` (one mask, or a list matching the outputs) to the output tensors."""
    if masks is None:
        return
    flat = node_lib.flatten(outputs)
    masks = masks if isinstance(masks, (list, tuple)) else [masks] * len(flat)
    for tensor, mask in zip(flat, masks):
        if mask is not None and isinstance(tensor, graph_lib.Tensor):
            _MASKS.setdefault(tensor.graph, {})[tensor.name] = mask
