"""`tf.contrib.seq2seq.BasicDecoder`: one RNN cell step, an optional output layer, and a
Helper that picks the sample and the next input."""
import collections

from tensorweave.framework import tensor_shape
from tensorweave.framework import graph as graph_lib
from tensorweave.ops import functional_ops as nest
from tensorweave.contrib.seq2seq.decoder import Decoder


class BasicDecoderOutput(collections.namedtuple("BasicDecoderOutput",
                                                ("rnn_output", "sample_id"))):
    __slots__ = ()


def check_cell(cell, what):
    if not callable(cell) or not hasattr(cell, "output_size"):
        raise TypeError(f"{what}: cell must be an RNNCell, got {type(cell).__name__}")


def check_output_layer(output_layer, what):
    if output_layer is not None and not callable(output_layer):
        raise TypeError(f"{what}: output_layer must be a Layer (e.g. tf.layers.Dense), got "
                        f"{type(output_layer).__name__}")


def layer_output_size(output_layer, size):
    """The output size of `output_layer` applied to outputs of `size` (an int or a shape)."""
    if output_layer is None:
        return size
    compute = getattr(output_layer, "compute_output_shape", None)
    if compute is not None:
        try:
            return compute(tensor_shape.TensorShape([None]).concatenate(
                tensor_shape.as_shape([size] if isinstance(size, int) else size)))[1:]
        except NotImplementedError:
            pass
    units = getattr(output_layer, "units", None)
    if units is None:
        raise TypeError(f"seq2seq: cannot tell the output size of {type(output_layer).__name__}"
                        "; give it compute_output_shape or units")
    return tensor_shape.TensorShape([units])


class BasicDecoder(Decoder):
    def __init__(self, cell, helper, initial_state, output_layer=None):
        check_cell(cell, "BasicDecoder")
        check_output_layer(output_layer, "BasicDecoder")
        self._cell, self._helper = cell, helper
        self._initial_state = initial_state
        self._output_layer = output_layer

    @property
    def batch_size(self):
        return self._helper.batch_size

    @property
    def stops_at_end_token(self):
        """True when only the samples can end decoding (inference helpers), so that
        dynamic_decode warns if it has no maximum_iterations."""
        return hasattr(self._helper, "_end_token")

    @property
    def output_size(self):
        return BasicDecoderOutput(
            rnn_output=layer_output_size(self._output_layer, self._cell.output_size),
            sample_id=self._helper.sample_ids_shape)

    @property
    def output_dtype(self):
        dtype = nest.flatten(self._initial_state)[0].dtype
        return BasicDecoderOutput(dtype, self._helper.sample_ids_dtype)

    def initialize(self, name=None):
        return self._helper.initialize() + (self._initial_state,)

    def step(self, time, inputs, state, name=None):
        with graph_lib.name_scope(name, "BasicDecoderStep", [time, inputs, state]):
            cell_outputs, cell_state = self._cell(inputs, state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            sample_ids = self._helper.sample(time=time, outputs=cell_outputs, state=cell_state)
            finished, next_inputs, next_state = self._helper.next_inputs(
                time=time, outputs=cell_outputs, state=cell_state, sample_ids=sample_ids)
        return BasicDecoderOutput(cell_outputs, sample_ids), next_state, next_inputs, finished
