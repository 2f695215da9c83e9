"""The fused LSTM step, TF's LSTMBlockCell op (same signature), and its gradient op.

    xh = [x, h_prev];  [i, ci, f, o] = xh w + b
    i = sigmoid(i + cs_prev wci);  f = sigmoid(f + forget_bias + cs_prev wcf);  ci = tanh(ci)
    cs = clip(ci i + cs_prev f, cell_clip)    (no clipping when cell_clip <= 0)
    o = sigmoid(o + cs wco);  co = tanh(cs);  h = co o
(the peephole terms only with use_peephole). BasicLSTMCell and LSTMCell run their step with it
when their equations are these (tanh activation, no cell clipping): measured on the LSTM
benchmark, the composed step spent more time in its dozen small ops than in its matmul.

Gradient, as TF builds it: LSTMBlockCellGrad gives the gradients of cs_prev, of the gate
pre-activations (dicfo) and of the peepholes; matmuls give those of x, h_prev and w. Only the
gradients of cs and h are used (as in TF: the other outputs are the step's internals); the
clipping of cs is not differentiated (TF's gradient ignores it too), so the cells use the fused
op only without clipping.
"""
from tensorweave.framework import tensor_shape
from tensorweave.framework.op_def import register_op
from tensorweave.ops import array_ops, math_ops
from tensorweave.ops.gradients import register_gradient
from tensorweave.ops.op_util import default_graph, make_tensor

def _block_shapes(op):
    x, cs_prev, h_prev, w = op.inputs[:4]
    batch = x.shape[0].merge_with(cs_prev.shape[0]).merge_with(h_prev.shape[0]) \
        if x.shape.ndims == 2 and cs_prev.shape.ndims == 2 and h_prev.shape.ndims == 2 \
        else tensor_shape.Dimension(None)
    units = cs_prev.shape[1] if cs_prev.shape.ndims == 2 else tensor_shape.Dimension(None)
    # h_prev may be narrower than cs_prev: LSTMCell's projected output (num_proj) feeds back.
    if w.shape.ndims == 2 and x.shape.ndims == 2:
        depth, gates = w.shape.as_tuple()
        h_width = h_prev.shape.as_tuple()[1] if h_prev.shape.ndims == 2 else None
        expected_depth = None if None in (x.shape.as_tuple()[1], h_width) else \
            x.shape.as_tuple()[1] + h_width
        if None not in (depth, expected_depth) and depth != expected_depth:
            raise ValueError(f"LSTMBlockCell: w has {depth} rows, expected input depth + "
                             f"h_prev depth = {expected_depth}")
        if None not in (gates, units.value) and gates != 4 * units.value:
            raise ValueError(f"LSTMBlockCell: w has {gates} columns, expected 4 * units = "
                             f"{4 * units.value}")
    return [tensor_shape.TensorShape([batch, units])] * 7


register_op("LSTMBlockCell",
            inputs=["x: T", "cs_prev: T", "h_prev: T", "w: T", "wci: T", "wcf: T", "wco: T",
                    "b: T"],
            outputs=["i: T", "cs: T", "f: T", "o: T", "ci: T", "co: T", "h: T"],
            attrs={"forget_bias": ("float", 1.0), "cell_clip": ("float", 3.0),
                   "use_peephole": ("bool", False), "T": "type"},
            shape_fn=_block_shapes, doc="One LSTM step (see the module docstring).")


def _block_grad_shapes(op):
    x, cs_prev = op.inputs[:2]
    shape = cs_prev.shape
    units = shape[1] if shape.ndims == 2 else tensor_shape.Dimension(None)
    batch = x.shape[0] if x.shape.ndims == 2 else tensor_shape.Dimension(None)
    gates = tensor_shape.Dimension(None if units.value is None else 4 * units.value)
    vector = tensor_shape.TensorShape([units])
    return [tensor_shape.TensorShape([batch, units]), tensor_shape.TensorShape([batch, gates]),
            vector, vector, vector]


register_op("LSTMBlockCellGrad",
            inputs=["x: T", "cs_prev: T", "h_prev: T", "w: T", "wci: T", "wcf: T", "wco: T",
                    "b: T", "i: T", "cs: T", "f: T", "o: T", "ci: T", "co: T", "cs_grad: T",
                    "h_grad: T"],
            outputs=["cs_prev_grad: T", "dicfo: T", "wci_grad: T", "wcf_grad: T",
                     "wco_grad: T"],
            attrs={"use_peephole": "bool", "T": "type"}, shape_fn=_block_grad_shapes,
            doc="The gradients of one LSTMBlockCell step but those computed by matmuls.")


@register_gradient("LSTMBlockCell")
def _lstm_block_cell_grad(op, *grads):
    x, cs_prev, h_prev, w, wci, wcf, wco, b = op.inputs
    i, cs, f, o, ci, co, _ = op.outputs
    cs_grad, h_grad = grads[1], grads[6]
    grad_op = default_graph().create_op(
        "LSTMBlockCellGrad", [x, cs_prev, h_prev, w, wci, wcf, wco, b, i, cs, f, o, ci, co,
                              cs_grad, h_grad],
        {"use_peephole": op.get_attr("use_peephole")}, name="LSTMBlockCellGrad")
    cs_prev_grad, dicfo, wci_grad, wcf_grad, wco_grad = grad_op.outputs
    depth = x.shape.as_tuple()[1] if x.shape.ndims == 2 else None
    xh = array_ops.concat([x, h_prev], 1)
    xh_grad = math_ops.matmul(dicfo, w, transpose_b=True)
    if depth is None:
        depth = array_ops.shape(x)[1]
    x_grad = xh_grad[:, :depth]
    h_prev_grad = xh_grad[:, depth:]
    w_grad = math_ops.matmul(xh, dicfo, transpose_a=True)
    b_grad = make_tensor("BiasAddGrad", [dicfo], name="b_grad")
    return [x_grad, cs_prev_grad, h_prev_grad, w_grad, wci_grad, wcf_grad, wco_grad, b_grad]


@register_gradient("LSTMBlockCellGrad")
def _no_second_derivative(op, *grads):
    raise NotImplementedError(f"Second derivatives through an LSTM block cell are not "
                              f"supported ({op.name}: LSTMBlockCellGrad has no gradient).")


def lstm_block_cell(x, cs_prev, h_prev, w, b, wci, wcf, wco, forget_bias=1.0, cell_clip=-1.0,
                    use_peephole=False, name=None):
    """The LSTMBlockCell op; returns its outputs (i, cs, f, o, ci, co, h)."""
    op = default_graph().create_op(
        "LSTMBlockCell", [x, cs_prev, h_prev, w, wci, wcf, wco, b],
        {"forget_bias": float(forget_bias), "cell_clip": float(cell_clip),
         "use_peephole": bool(use_peephole)}, name=name or "LSTMBlockCell")
    return op.outputs


# --- BlockLSTM: every step of a sequence in one op ----------------------------------------------
# tf.nn.dynamic_rnn runs an LSTM cell whose step is LSTMBlockCell's (BasicLSTMCell, LSTMCell
# without projection or clipping) as one BlockLSTM op instead of a while_loop: the input part of
# every step's gates is one matmul, and the gradient keeps the forward's gate values instead of
# re-running each step, and makes the weight gradient of all the steps one matmul.
def _sequence_shapes(op):
    x, cs_prev = op.inputs[1], op.inputs[2]
    time, batch = (x.shape.as_tuple()[:2] if x.shape.ndims == 3 else (None, None))
    units = cs_prev.shape.as_tuple()[1] if cs_prev.shape.ndims == 2 else None
    return [tensor_shape.TensorShape([time, batch, units])] * 7


register_op("BlockLSTM",
            inputs=["seq_len_max: int64", "x: T", "cs_prev: T", "h_prev: T", "w: T", "wci: T",
                    "wcf: T", "wco: T", "b: T"],
            outputs=["i: T", "cs: T", "f: T", "o: T", "ci: T", "co: T", "h: T"],
            attrs={"forget_bias": ("float", 1.0), "cell_clip": ("float", 3.0),
                   "use_peephole": ("bool", False), "T": "type"},
            shape_fn=_sequence_shapes,
            doc="LSTMBlockCell over every step of x [time, batch, depth]; zeros past "
                "seq_len_max.")

register_op("BlockLSTMGrad",
            inputs=["seq_len_max: int64", "x: T", "cs_prev: T", "h_prev: T", "w: T", "wci: T",
                    "wcf: T", "wco: T", "b: T", "i: T", "cs: T", "f: T", "o: T", "ci: T",
                    "co: T", "h: T", "cs_grad: T", "h_grad: T"],
            outputs=["x_grad: T", "cs_prev_grad: T", "h_prev_grad: T", "w_grad: T",
                     "wci_grad: T", "wcf_grad: T", "wco_grad: T", "b_grad: T"],
            attrs={"use_peephole": "bool", "T": "type"},
            shape_fn=lambda op: [t.shape for t in op.inputs[1:9]],
            doc="The gradients of BlockLSTM's inputs from those of its cs and h.")


@register_gradient("BlockLSTM")
def _block_lstm_grad(op, *grads):
    grad_op = default_graph().create_op(
        "BlockLSTMGrad", list(op.inputs) + list(op.outputs) + [grads[1], grads[6]],
        {"use_peephole": op.get_attr("use_peephole")}, name="BlockLSTMGrad")
    return [None] + list(grad_op.outputs)


@register_gradient("BlockLSTMGrad")
def _no_second_derivative_of_sequence(op, *grads):
    raise NotImplementedError(f"Second derivatives through a fused LSTM are not supported "
                              f"({op.name}: BlockLSTMGrad has no gradient).")


def block_lstm(seq_len_max, x, cs_prev, h_prev, w, b, wci, wcf, wco, forget_bias=1.0,
               cell_clip=-1.0, use_peephole=False, name=None):
    """The BlockLSTM op; returns its outputs (i, cs, f, o, ci, co, h), each [time, batch,
    units]."""
    from tensorweave.framework import dtypes
    from tensorweave.framework.constant_op import convert_to_tensor
    seq_len_max = math_ops.cast(convert_to_tensor(seq_len_max), dtypes.int64)
    op = default_graph().create_op(
        "BlockLSTM", [seq_len_max, x, cs_prev, h_prev, w, wci, wcf, wco, b],
        {"forget_bias": float(forget_bias), "cell_clip": float(cell_clip),
         "use_peephole": bool(use_peephole)}, name=name or "BlockLSTM")
    return op.outputs


# --- _BlockGRU: dynamic_rnn over a GRUCell in one op (kernels/rnn_gru.py) -----------------------
# TF has no such op (its GRUBlockCell is one step); tensorweave runs a tanh GRUCell's loop as
# one, as it does an LSTM's with BlockLSTM. Outputs r, u, c, h, each [time, batch, units].
def _gru_shapes(op):
    x, h_prev = op.inputs[1], op.inputs[2]
    time, batch = (x.shape.as_tuple()[:2] if x.shape.ndims == 3 else (None, None))
    units = h_prev.shape.as_tuple()[1] if h_prev.shape.ndims == 2 else None
    return [tensor_shape.TensorShape([time, batch, units])] * 4


_GRU_INPUTS = ["seq_len_max: int64", "x: T", "h_prev: T", "w_ru: T", "w_c: T", "b_ru: T",
               "b_c: T"]
register_op("_BlockGRU", inputs=_GRU_INPUTS, outputs=["r: T", "u: T", "c: T", "h: T"],
            attrs={"T": "type"}, shape_fn=_gru_shapes,
            doc="GRUCell (tanh) over every step of x [time, batch, depth]; zeros past "
                "seq_len_max.")
register_op("_BlockGRUGrad", inputs=_GRU_INPUTS + ["r: T", "u: T", "c: T", "h: T", "h_grad: T"],
            outputs=["x_grad: T", "h_prev_grad: T", "w_ru_grad: T", "w_c_grad: T",
                     "b_ru_grad: T", "b_c_grad: T"],
            attrs={"T": "type"}, shape_fn=lambda op: [t.shape for t in op.inputs[1:7]],
            doc="The gradients of _BlockGRU's inputs from that of its h sequence.")


@register_gradient("_BlockGRU")
def _block_gru_grad(op, *grads):
    grad_op = default_graph().create_op("_BlockGRUGrad", list(op.inputs) + list(op.outputs) +
                                        [grads[3]], {}, name="BlockGRUGrad")
    return [None] + list(grad_op.outputs)


@register_gradient("_BlockGRUGrad")
def _no_second_derivative_of_gru_sequence(op, *grads):
    raise NotImplementedError(f"Second derivatives through a fused GRU are not supported "
                              f"({op.name}: _BlockGRUGrad has no gradient).")


def block_gru(seq_len_max, x, h_prev, w_ru, w_c, b_ru, b_c, name=None):
    """The _BlockGRU op's outputs (r, u, c, h)."""
    from tensorweave.framework import dtypes
    from tensorweave.framework.constant_op import convert_to_tensor
    seq_len_max = math_ops.cast(convert_to_tensor(seq_len_max), dtypes.int64)
    return default_graph().create_op("_BlockGRU", [seq_len_max, x, h_prev, w_ru, w_c, b_ru, b_c],
                                     {}, name=name or "BlockGRU").outputs


# --- _KerasLSTMSequence, _KerasGRUSequence: a tf.keras LSTM/GRU layer in one op ------------------
# New ops rather than attributes on BlockLSTM/_BlockGRU: BlockLSTM keeps TF's signature (one
# concatenated [x, h] weight, gates [i, c, f, o], forget_bias, peepholes, seq_len_max), while a
# Keras layer has a kernel and a recurrent kernel, gates [i, f, c, o] / [z, r, h], a recurrent
# activation, a per-step row mask and GRU's two bias forms; the kernels (kernels/rnn_keras.py)
# take Keras's weights as they are, so the layer needs no concat or reorder ops.
def _keras_sequence_shapes(op, outputs):
    x, state = op.inputs[0], op.inputs[1]
    time, batch = x.shape.as_tuple()[:2] if x.shape.ndims == 3 else (None, None)
    units = state.shape.as_tuple()[1] if state.shape.ndims == 2 else None
    gate_count = 4 if op.type == "_KerasLSTMSequence" else 3
    widths = {"units": units, "gates": None if units is None else gate_count * units}
    shapes = [tensor_shape.TensorShape([time, batch, widths[width]]) for width in outputs]
    if op.type == "_KerasGRUSequence" and not op.get_attr("reset_after"):
        shapes[2] = tensor_shape.TensorShape([0, batch, units])
    return shapes


_KERAS_ATTRS = {"recurrent_activation": ("string", "hard_sigmoid"), "masked": ("bool", False),
                "T": "type"}
_LSTM_INPUTS = ["x: T", "h_prev: T", "c_prev: T", "kernel: T", "recurrent_kernel: T", "bias: T",
                "mask: T"]
register_op("_KerasLSTMSequence", inputs=_LSTM_INPUTS, outputs=["h: T", "c: T", "gates: T"],
            attrs=_KERAS_ATTRS,
            shape_fn=lambda op: _keras_sequence_shapes(op, ["units", "units", "gates"]),
            doc="A Keras LSTM over x [time, batch, depth]: the h and c states after every "
                "step and the activated gates [i, f, c, o]; rows where mask is 0 keep their "
                "states (with masked).")
register_op("_KerasLSTMSequenceGrad",
            inputs=_LSTM_INPUTS + ["h: T", "c: T", "gates: T", "h_grad: T", "c_grad: T"],
            outputs=["x_grad: T", "h_prev_grad: T", "c_prev_grad: T", "kernel_grad: T",
                     "recurrent_kernel_grad: T", "bias_grad: T"],
            attrs=_KERAS_ATTRS, shape_fn=lambda op: [t.shape for t in op.inputs[:6]],
            doc="The gradients of _KerasLSTMSequence's inputs from those of its h and c.")
_GRU_KERAS_INPUTS = ["x: T", "h_prev: T", "kernel: T", "recurrent_kernel: T", "input_bias: T",
                     "recurrent_bias: T", "mask: T"]
register_op("_KerasGRUSequence", inputs=_GRU_KERAS_INPUTS,
            outputs=["h: T", "gates: T", "candidate_part: T"],
            attrs={**_KERAS_ATTRS, "reset_after": ("bool", False)},
            shape_fn=lambda op: _keras_sequence_shapes(op, ["units", "gates", "units"]),
            doc="A Keras GRU over x [time, batch, depth]: the h state after every step, the "
                "activated [z, r, h~] and (reset_after) the recurrent part of the candidate.")
register_op("_KerasGRUSequenceGrad",
            inputs=_GRU_KERAS_INPUTS + ["h: T", "gates: T", "candidate_part: T", "h_grad: T"],
            outputs=["x_grad: T", "h_prev_grad: T", "kernel_grad: T", "recurrent_kernel_grad: T",
                     "input_bias_grad: T", "recurrent_bias_grad: T"],
            attrs={**_KERAS_ATTRS, "reset_after": ("bool", False)},
            shape_fn=lambda op: [t.shape for t in op.inputs[:6]],
            doc="The gradients of _KerasGRUSequence's inputs from that of its h.")


def _keras_attrs(op, *names):
    return {name: op.get_attr(name) for name in ("recurrent_activation", "masked") + names}


@register_gradient("_KerasLSTMSequence")
def _keras_lstm_sequence_grad(op, h_grad, c_grad, _):
    grad_op = default_graph().create_op(
        "_KerasLSTMSequenceGrad", list(op.inputs) + list(op.outputs) + [h_grad, c_grad],
        _keras_attrs(op), name="KerasLSTMSequenceGrad")
    return list(grad_op.outputs) + [None]


@register_gradient("_KerasGRUSequence")
def _keras_gru_sequence_grad(op, h_grad, *_):
    grad_op = default_graph().create_op(
        "_KerasGRUSequenceGrad", list(op.inputs) + list(op.outputs) + [h_grad],
        _keras_attrs(op, "reset_after"), name="KerasGRUSequenceGrad")
    return list(grad_op.outputs) + [None]


@register_gradient("_KerasLSTMSequenceGrad")
@register_gradient("_KerasGRUSequenceGrad")
def _no_second_derivative_of_keras_sequence(op, *grads):
    raise NotImplementedError(f"Second derivatives through a fused Keras LSTM/GRU are not "
                              f"supported ({op.name}: {op.type} has no gradient).")


def _keras_inputs(op_type, recurrent_activation, *tensors):
    """The inputs as tensors of the first one's dtype; a missing mask (the last) as an empty
    [0, 0] tensor (the `masked` attr says it is unused)."""
    from tensorweave.framework.constant_op import convert_to_tensor
    if recurrent_activation not in ("sigmoid", "hard_sigmoid"):
        raise ValueError(f"{op_type}: recurrent_activation must be 'sigmoid' or "
                         f"'hard_sigmoid', got {recurrent_activation!r}")
    x = convert_to_tensor(tensors[0])
    values = [x] + [convert_to_tensor(t, dtype=x.dtype) for t in tensors[1:-1]]
    mask = tensors[-1]
    return values + [array_ops.zeros([0, 0], dtype=x.dtype) if mask is None
                     else convert_to_tensor(mask, dtype=x.dtype)]


def keras_lstm_sequence(x, h_prev, c_prev, kernel, recurrent_kernel, bias, mask=None,
                        recurrent_activation="hard_sigmoid", name=None):
    """The _KerasLSTMSequence op's outputs (h, c, gates); mask [time, batch] of x's dtype
    (1: a real step) or None."""
    inputs = _keras_inputs("_KerasLSTMSequence", recurrent_activation, x, h_prev, c_prev, kernel,
                           recurrent_kernel, bias, mask)
    return default_graph().create_op(
        "_KerasLSTMSequence", inputs,
        {"recurrent_activation": recurrent_activation, "masked": mask is not None},
        name=name or "KerasLSTMSequence").outputs


def keras_gru_sequence(x, h_prev, kernel, recurrent_kernel, input_bias, recurrent_bias,
                       mask=None, recurrent_activation="hard_sigmoid", reset_after=False,
                       name=None):
    """The _KerasGRUSequence op's outputs (h, gates, candidate_part); recurrent_bias is used
    only with reset_after."""
    inputs = _keras_inputs("_KerasGRUSequence", recurrent_activation, x, h_prev, kernel,
                           recurrent_kernel, input_bias, recurrent_bias, mask)
    return default_graph().create_op(
        "_KerasGRUSequence", inputs,
        {"recurrent_activation": recurrent_activation, "masked": mask is not None,
         "reset_after": bool(reset_after)}, name=name or "KerasGRUSequence").outputs
