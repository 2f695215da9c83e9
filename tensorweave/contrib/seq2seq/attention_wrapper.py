"""`tf.contrib.seq2seq.AttentionWrapper`: an RNN cell that attends over a memory after each
step of the cell it wraps (TF 1.15 semantics).

Each call: the cell's input is cell_input_fn(inputs, previous attention) (their concatenation
by default); the cell runs; each mechanism turns the cell's output into alignments; the
context is the alignments' weighted sum of the memory's values; the attention is
attention_layer([cell output, context]) (a Dense without bias named "attention_layer") or the
context itself when there is no attention_layer_size. The output is the attention
(output_attention=True, Luong style) or the cell's output (Bahdanau style).
"""
import collections

from tensorweave.framework import dtypes
from tensorweave.framework import graph as graph_lib
from tensorweave.framework import tensor_shape
from tensorweave.layers.rnn_cell_impl import RNNCell, zeros_of_size
from tensorweave.ops import array_ops, check_ops, math_ops
from tensorweave.ops import functional_ops as nest
from tensorweave.ops.tensor_array import TensorArray
from tensorweave.contrib.seq2seq.attention_mechanisms import (AttentionMechanism,
                                                              ProjectionLayer)


class AttentionWrapperState(collections.namedtuple(
        "AttentionWrapperState", ("cell_state", "attention", "time", "alignments",
                                  "alignment_history", "attention_state"))):
    """The state of an AttentionWrapper: the wrapped cell's state, the last attention, the
    step, the alignments, their history (TensorArrays, when asked for) and the mechanisms'
    states."""
    __slots__ = ()

    def clone(self, **kwargs):
        """This state with some fields replaced (e.g. cell_state=the encoder's final state);
        a replaced tensor keeps the static shape of the one it replaces where they agree."""
        def keep_shape(old, new):
            if hasattr(old, "shape") and hasattr(new, "set_shape") and \
                    old.shape.is_compatible_with(new.shape):
                new.set_shape(old.shape)
            return new

        replaced = self._replace(**kwargs)
        if "cell_state" in kwargs and nest.same_structure(self.cell_state, replaced.cell_state):
            cell_state = nest.pack_like(replaced.cell_state, [
                keep_shape(o, n) for o, n in zip(nest.flatten(self.cell_state),
                                                 nest.flatten(replaced.cell_state))])
            replaced = replaced._replace(cell_state=cell_state)
        return replaced


def _depth(tensor, what):
    depth = tensor.shape.as_tuple()[-1] if tensor.shape.ndims else None
    if depth is None:
        raise ValueError(f"{what}: the last dimension of the memory must be known")
    return depth


class AttentionWrapper(RNNCell):
    def __init__(self, cell, attention_mechanism, attention_layer_size=None,
                 alignment_history=False, cell_input_fn=None, output_attention=True,
                 initial_cell_state=None, name=None, attention_layer=None, attention_fn=None):
        super().__init__(name=name)
        what = "AttentionWrapper"
        if not callable(cell) or not hasattr(cell, "state_size"):
            raise TypeError(f"{what}: cell must be an RNNCell, got {type(cell).__name__}")
        self._is_multi = isinstance(attention_mechanism, (list, tuple))
        mechanisms = tuple(attention_mechanism) if self._is_multi else (attention_mechanism,)
        for mechanism in mechanisms:
            if not isinstance(mechanism, AttentionMechanism):
                raise TypeError(f"{what}: attention_mechanism must be an AttentionMechanism or "
                                f"a list of them, got {type(mechanism).__name__}")
        if cell_input_fn is None:
            cell_input_fn = lambda inputs, attention: array_ops.concat(  # noqa: E731
                [inputs, attention], -1)
        elif not callable(cell_input_fn):
            raise TypeError(f"{what}: cell_input_fn must be callable, got "
                            f"{type(cell_input_fn).__name__}")
        if attention_layer_size is not None and attention_layer is not None:
            raise ValueError(f"{what}: give attention_layer_size or attention_layer, not both")
        if attention_fn is not None:
            raise ValueError(f"{what}: attention_fn is not supported")
        if attention_layer_size is not None:
            sizes = tuple(attention_layer_size) if isinstance(
                attention_layer_size, (list, tuple)) else (attention_layer_size,)
            if len(sizes) != len(mechanisms):
                raise ValueError(f"{what}: attention_layer_size has {len(sizes)} entries but "
                                 f"there are {len(mechanisms)} attention mechanisms")
            dtype = mechanisms[0].values.dtype
            self._attention_layers = tuple(
                ProjectionLayer(size, "attention_layer", dtype)
                for size in sizes)
            self._attention_layer_size = sum(sizes)
        elif attention_layer is not None:
            layers = tuple(attention_layer) if isinstance(attention_layer, (list, tuple)) \
                else (attention_layer,)
            if len(layers) != len(mechanisms):
                raise ValueError(f"{what}: attention_layer has {len(layers)} entries but "
                                 f"there are {len(mechanisms)} attention mechanisms")
            self._attention_layers = layers
            self._attention_layer_size = sum(int(layer.units) for layer in layers)
        else:
            self._attention_layers = None
            self._attention_layer_size = sum(_depth(m.values, what) for m in mechanisms)
        self._cell = cell
        self._mechanisms = mechanisms
        self._cell_input_fn = cell_input_fn
        self._output_attention = output_attention
        self._alignment_history = alignment_history
        self._initial_cell_state = initial_cell_state

    def _item_or_tuple(self, items):
        """One per mechanism: a tuple when the wrapper was given a list of them."""
        items = tuple(items)
        return items if self._is_multi else items[0]

    @property
    def output_size(self):
        return self._attention_layer_size if self._output_attention else self._cell.output_size

    @property
    def state_size(self):
        return AttentionWrapperState(
            cell_state=self._cell.state_size, time=tensor_shape.TensorShape([]),
            attention=self._attention_layer_size,
            alignments=self._item_or_tuple(m.alignments_size for m in self._mechanisms),
            attention_state=self._item_or_tuple(m.state_size for m in self._mechanisms),
            alignment_history=self._item_or_tuple(
                () for _ in self._mechanisms) if self._alignment_history else ())

    def zero_state(self, batch_size, dtype):
        """The initial state: the cell's zero state (or initial_cell_state), zero attention,
        the mechanisms' initial alignments and empty alignment histories."""
        with graph_lib.get_default_graph().name_scope(type(self).__name__ + "ZeroState"):
            dtype = dtypes.as_dtype(dtype)
            cell_state = self._initial_cell_state if self._initial_cell_state is not None \
                else self._cell.zero_state(batch_size, dtype)
            cell_state = nest.pack_like(cell_state, [self._checked_rows(s, batch_size)
                                                     for s in nest.flatten(cell_state)])
            alignments = [m.initial_alignments(batch_size, dtype) for m in self._mechanisms]
            history = tuple(TensorArray(dtype, size=0, dynamic_size=True,
                                        element_shape=a.shape) for a in alignments) \
                if self._alignment_history else ()
            return AttentionWrapperState(
                cell_state=cell_state, time=array_ops.zeros([], dtype=dtypes.int32),
                attention=zeros_of_size(self._attention_layer_size, batch_size, dtype),
                alignments=self._item_or_tuple(alignments),
                attention_state=self._item_or_tuple(m.initial_state(batch_size, dtype)
                                                    for m in self._mechanisms),
                alignment_history=self._item_or_tuple(history) if history else ())

    def _checked_rows(self, state, batch_size):
        """`state`, failing (at build time when the sizes are known, else when run) unless
        its rows match batch_size and the memory's: the usual slip is a beam search whose
        memory was tiled but whose encoder state was not."""
        message = ("AttentionWrapper.zero_state: the cell state and the attention memory "
                   "must have batch_size rows; with BeamSearchDecoder, tile both the memory "
                   "and the encoder state with tile_batch(t, beam_width)")
        memory_rows = self._mechanisms[0].batch_size
        rows = state.shape.as_tuple()[0] if state.shape.ndims else None
        for expected in (batch_size, memory_rows):
            if isinstance(expected, int) and rows is not None and rows != expected:
                raise ValueError(f"{message}: {state.name} has {rows} rows, expected "
                                 f"{expected}")
        checks = [check_ops.assert_equal(array_ops.shape(state)[0], expected, message=message)
                  for expected in (batch_size, memory_rows)
                  if not (isinstance(expected, int) and rows is not None)]
        with graph_lib.get_default_graph().control_dependencies(checks):
            return array_ops.identity(state, name="checked_cell_state")

    def build(self, inputs_shape):
        self.built = True

    def call(self, inputs, state):
        if not isinstance(state, AttentionWrapperState):
            raise TypeError("AttentionWrapper: expected state to be an AttentionWrapperState "
                            f"(from zero_state), got {type(state).__name__}")
        cell_inputs = self._cell_input_fn(inputs, state.attention)
        cell_output, next_cell_state = self._cell(cell_inputs, state.cell_state)
        as_tuple = lambda value: value if self._is_multi else (value,)  # noqa: E731
        previous_states = as_tuple(state.attention_state)
        histories = as_tuple(state.alignment_history) if self._alignment_history else ()
        attentions, alignments_out, states_out, histories_out = [], [], [], []
        for i, mechanism in enumerate(self._mechanisms):
            alignments, next_attention_state = mechanism(cell_output, previous_states[i])
            context = array_ops.squeeze(math_ops.matmul(
                array_ops.expand_dims(alignments, 1), mechanism.values), [1])
            layer = self._attention_layers[i] if self._attention_layers else None
            attention = layer(array_ops.concat([cell_output, context], 1)) \
                if layer is not None else context
            attentions.append(attention)
            alignments_out.append(alignments)
            states_out.append(next_attention_state)
            if self._alignment_history:
                histories_out.append(histories[i].write(state.time, alignments))
        attention = array_ops.concat(attentions, 1)
        next_state = AttentionWrapperState(
            time=state.time + 1, cell_state=next_cell_state, attention=attention,
            attention_state=self._item_or_tuple(states_out),
            alignments=self._item_or_tuple(alignments_out),
            alignment_history=self._item_or_tuple(histories_out)
            if self._alignment_history else ())
        return (attention if self._output_attention else cell_output), next_state
