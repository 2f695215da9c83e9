"""Cells made of cells (TF 1.x `tf.nn.rnn_cell`): MultiRNNCell stacks cells (variables under
"multi_rnn_cell/cell_<i>/"); DropoutWrapper, ResidualWrapper and DeviceWrapper change what a
cell sees or gives back and, as in TF 1.x, add no variable scope of their own.
"""
from tensorweave.framework import graph as graph_lib
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.layers import rnn_dropout
from tensorweave.layers.base import Layer
from tensorweave.layers.rnn_cell_impl import RNNCell
from tensorweave.ops import array_ops, nn_impl, variable_scope
from tensorweave.ops import functional_ops as nest


class MultiRNNCell(RNNCell):
    """The cells one after another: cell i's output is cell i+1's input; the state is the
    tuple of the cells' states."""

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("MultiRNNCell: must specify at least one cell")
        self._cells = list(cells)
        self._state_is_tuple = state_is_tuple
        if not state_is_tuple and any(not isinstance(c.state_size, int) for c in self._cells):
            raise ValueError("MultiRNNCell: state_is_tuple=False needs cells whose state_size "
                             "is an int; use state_is_tuple=True")

    @property
    def state_size(self):
        if self._state_is_tuple:
            return tuple(cell.state_size for cell in self._cells)
        return sum(cell.state_size for cell in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    def zero_state(self, batch_size, dtype):
        with graph_lib.get_default_graph().name_scope(type(self).__name__ + "ZeroState"):
            if self._state_is_tuple:
                return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)
            return super().zero_state(batch_size, dtype)

    @property
    def trainable_weights(self):
        return [w for cell in self._cells for w in cell.trainable_weights]

    @property
    def weights(self):
        return [w for cell in self._cells for w in cell.weights]

    trainable_variables = trainable_weights
    variables = weights

    def build(self, inputs_shape):
        self.built = True

    def _can_run_fused(self):
        return self._state_is_tuple and all(
            getattr(cell, "_can_run_fused", lambda: False)() for cell in self._cells)

    def _fused_dynamic_rnn(self, inputs, state, sequence_length):
        """dynamic_rnn over a stack of fusable LSTM cells as one fused op per layer, each
        layer's output sequence the next one's input (rnn_fused.py), or None."""
        if type(self) is not MultiRNNCell or not self._can_run_fused():
            return None
        return Layer.__call__(self, inputs, state, _sequence_length=(sequence_length,))

    def call(self, inputs, state, _sequence_length=None):
        if _sequence_length is not None:
            current, new_states = inputs, []
            for index, cell in enumerate(self._cells):
                with variable_scope.variable_scope(f"cell_{index}"):
                    current, new_state = cell._fused_dynamic_rnn(current, state[index],
                                                                 _sequence_length[0])
                new_states.append(new_state)
            return current, tuple(new_states)
        current, new_states, start = inputs, [], 0
        for index, cell in enumerate(self._cells):
            with variable_scope.variable_scope(f"cell_{index}"):
                if self._state_is_tuple:
                    cell_state = state[index]
                else:
                    cell_state = array_ops.slice_(state, [0, start], [-1, cell.state_size])
                    start += cell.state_size
                current, new_state = cell(current, cell_state)
                new_states.append(new_state)
        if self._state_is_tuple:
            return current, tuple(new_states)
        return current, array_ops.concat(new_states, 1)


class _Wrapper(RNNCell):
    """A cell around `cell`, calling it without a variable scope of its own."""

    def __init__(self, cell):
        super().__init__()
        if not isinstance(cell, RNNCell) and not (hasattr(cell, "state_size") and
                                                  callable(cell)):
            raise TypeError(f"{type(self).__name__}: the cell must be an RNNCell, got "
                            f"{type(cell).__name__}")
        self._cell = cell

    @property
    def wrapped_cell(self):
        return self._cell

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._cell.output_size

    def zero_state(self, batch_size, dtype):
        return self._cell.zero_state(batch_size, dtype)

    @property
    def trainable_weights(self):
        return self._cell.trainable_weights

    @property
    def weights(self):
        return self._cell.weights

    trainable_variables = trainable_weights
    variables = weights

    def __call__(self, inputs, state, scope=None):
        return self.call(inputs, state, scope=scope)


class ResidualWrapper(_Wrapper):
    """output = residual_fn(inputs, cell output), by default inputs + output."""

    def __init__(self, cell, residual_fn=None):
        super().__init__(cell)
        self._residual_fn = residual_fn

    def call(self, inputs, state, scope=None):
        output, new_state = self._cell(inputs, state, scope=scope)
        if self._residual_fn is not None:
            return self._residual_fn(inputs, output), new_state
        inputs_leaves, output_leaves = nest.flatten(inputs), nest.flatten(output)
        for x, y in zip(inputs_leaves, output_leaves):
            x.shape.assert_is_compatible_with(y.shape)
        summed = [x + y for x, y in zip(inputs_leaves, output_leaves)]
        return nest.pack_like(output, summed), new_state


class DeviceWrapper(_Wrapper):
    """Builds the cell's ops (and its state's zeros) on `device`."""

    def __init__(self, cell, device):
        super().__init__(cell)
        self._device = device

    def zero_state(self, batch_size, dtype):
        with graph_lib.get_default_graph().device(self._device):
            return self._cell.zero_state(batch_size, dtype)

    def call(self, inputs, state, scope=None):
        with graph_lib.get_default_graph().device(self._device):
            return self._cell(inputs, state, scope=scope)


class DropoutWrapper(_Wrapper):
    """Dropout on the cell's inputs, outputs and (the new) state, kept with probabilities
    input_keep_prob, output_keep_prob, state_keep_prob (floats or scalar tensors).
    `variational_recurrent` uses one mask per sequence (Gal & Ghahramani) instead of one per
    time step (as TF 1.x, it asks for dtype, and input_size with input dropout). Masks inside
    tf.nn.dynamic_rnn are drawn so that the loop's gradient sees the same ones (rnn_dropout.py).
    `dropout_state_filter_visitor(state_leaf) -> bool` picks the state parts to drop (by
    default every part but an LSTM's memory c)."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None):
        super().__init__(cell)
        for name, value in (("input_keep_prob", input_keep_prob),
                            ("output_keep_prob", output_keep_prob),
                            ("state_keep_prob", state_keep_prob)):
            if isinstance(value, (int, float)) and not 0.0 < value <= 1.0:
                raise ValueError(f"DropoutWrapper: parameter {name} must be between 0 and 1 "
                                 f"(0 excluded), got {value}")
        self._input_keep_prob, self._output_keep_prob = input_keep_prob, output_keep_prob
        self._state_keep_prob = state_keep_prob
        self._seed = seed
        self._state_filter = dropout_state_filter_visitor
        self._variational = variational_recurrent
        self._masks = {}
        self._tag = rnn_dropout.new_tag()
        if variational_recurrent:
            if dtype is None:
                raise ValueError("DropoutWrapper: variational_recurrent=True needs dtype")
            if _given(input_keep_prob) and input_size is None:
                raise ValueError("DropoutWrapper: variational_recurrent=True with input "
                                 "dropout needs input_size")

    def _state_parts_to_drop(self, state):
        from tensorweave.layers.rnn_cell_impl import LSTMStateTuple
        leaves = nest.flatten(state)
        if self._state_filter is not None:
            return [bool(self._state_filter(leaf)) for leaf in leaves]
        keep_c = []

        def visit(node):
            if isinstance(node, LSTMStateTuple):
                keep_c.extend([False, True])
            elif isinstance(node, (list, tuple)) and not hasattr(node, "shape"):
                for item in node:
                    visit(item)
            elif isinstance(node, dict):
                for key in sorted(node):
                    visit(node[key])
            else:
                keep_c.append(True)

        visit(state)
        return keep_c if len(keep_c) == len(leaves) else [True] * len(leaves)

    def _drop_leaf(self, leaf, keep_prob, part, index):
        tag_part = f"{part}_{index}"
        if not self._variational:
            return rnn_dropout.dropout(leaf, keep_prob, self._seed, self._tag, tag_part)
        if rnn_dropout.in_loop():  # one mask for every step of this run's sequences
            return rnn_dropout.dropout(leaf, keep_prob, self._seed, self._tag, tag_part,
                                       per_time_step=False)
        mask = self._masks.get(tag_part)
        if mask is None:  # drawn on the first call, reused by the later (unrolled) steps
            ones = array_ops.ones_like(leaf)
            mask = self._masks[tag_part] = rnn_dropout.dropout(ones, keep_prob, self._seed,
                                                               self._tag, tag_part)
        return leaf * mask

    def _drop(self, values, keep_prob, part, chosen=None):
        leaves = nest.flatten(values)
        chosen = chosen or [True] * len(leaves)
        dropped = [self._drop_leaf(leaf, keep_prob, part, index) if pick else leaf
                   for index, (leaf, pick) in enumerate(zip(leaves, chosen))]
        return nest.pack_like(values, dropped) if isinstance(values, (list, tuple, dict)) \
            else dropped[0]

    def _can_run_fused(self):
        return not _given(self._state_keep_prob) and \
            getattr(self._cell, "_can_run_fused", lambda: False)()

    def _fused_dynamic_rnn(self, inputs, state, sequence_length):
        """dynamic_rnn over the wrapped cell as its fused op (rnn_fused.py) when only the inputs
        and outputs are dropped (state dropout feeds back into the recurrence): dropout on the
        whole time-major sequence draws an independent mask per step, as the loop does, and a
        variational wrapper's [batch, depth] mask is broadcast over time. None otherwise."""
        if type(self) is not DropoutWrapper or not self._can_run_fused():
            return None
        if _given(self._input_keep_prob):
            inputs = self._drop_sequence(inputs, self._input_keep_prob)
        result = self._cell._fused_dynamic_rnn(inputs, state, sequence_length)
        if result is None:
            return None
        outputs, new_state = result
        if _given(self._output_keep_prob):
            outputs = self._drop_sequence(outputs, self._output_keep_prob)
        return outputs, new_state

    def _drop_sequence(self, sequence, keep_prob):
        noise_shape = None
        if self._variational:
            shape = array_ops.shape(sequence)
            noise_shape = array_ops.concat([[1], shape[1:]], 0)
        return nn_impl.dropout(sequence, keep_prob, noise_shape=noise_shape, seed=self._seed)

    def call(self, inputs, state, scope=None):
        if _given(self._input_keep_prob):
            inputs = self._drop(inputs, self._input_keep_prob, "input")
        output, new_state = self._cell(inputs, state, scope=scope)
        if _given(self._state_keep_prob):
            new_state = self._drop(new_state, self._state_keep_prob, "state",
                                   self._state_parts_to_drop(new_state))
        if _given(self._output_keep_prob):
            output = self._drop(output, self._output_keep_prob, "output")
        return output, new_state


def _given(keep_prob):
    """Whether a keep probability asks for dropout (a tensor always may)."""
    if isinstance(keep_prob, (int, float)):
        return keep_prob < 1.0
    return convert_to_tensor(keep_prob) is not None
