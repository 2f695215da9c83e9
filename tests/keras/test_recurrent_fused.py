"""tf.keras LSTM and GRU run as one fused sequence op (keras/layers/recurrent_fused.py) when
their configuration allows it: the same values and gradients (of the inputs, the initial states
and every weight) as the unrolled loop on random weights, for each recurrent activation and GRU
form, with masks, go_backwards, return_state, initial and stateful states, unknown lengths and
input dropout; configurations the fused op cannot run keep the loop."""
import numpy as np
import pytest

import tensorweave as tf

layers = tf.keras.layers
RNG = np.random.default_rng(11)
BATCH, TIME, DEPTH, UNITS = 3, 5, 4, 3
FUSED_TYPES = {"_KerasLSTMSequence", "_KerasGRUSequence"}
# row 0 all real; row 1 masked first, then in the middle; row 2 masked at the end
MASK = np.array([[1, 1, 1, 1, 1], [0, 0, 1, 0, 1], [1, 1, 1, 0, 0]], bool)


class _LoopLSTMCell(layers.LSTMCell):
    """A subclass, so its layer keeps the unrolled step (the reference here)."""


class _LoopGRUCell(layers.GRUCell):
    """As _LoopLSTMCell."""


def _layer(kind, fused, cell_args, layer_args):
    if fused:
        return (layers.LSTM if kind == "lstm" else layers.GRU)(
            UNITS, dtype="float64", **cell_args, **layer_args)
    cell = (_LoopLSTMCell if kind == "lstm" else _LoopGRUCell)(UNITS, dtype="float64",
                                                               **cell_args)
    return layers.RNN(cell, dtype="float64", **layer_args)


def _run(kind, fused, cell_args, layer_args, weights=None, masked=False, initial=False,
         static_time=True, training=None):
    """(fetched outputs and gradients, the weights used, the op types of the graph)."""
    x = RNG.normal(size=(BATCH, TIME, DEPTH)) if weights is None else weights["x"]
    states = 2 if kind == "lstm" else 1
    with tf.Graph().as_default() as graph:
        tf.set_random_seed(5)
        shape = [BATCH, TIME if static_time else None, DEPTH]
        time_major = layer_args.get("time_major", False)
        inputs = tf.placeholder(tf.float64, shape[1::-1] + shape[2:] if time_major else shape)
        layer = _layer(kind, fused, cell_args, layer_args)
        kwargs = {"mask": tf.constant(MASK.T if time_major else MASK)} if masked else {}
        if training is not None:
            kwargs["training"] = training
        initial_states = [tf.constant(RNG.normal(size=(BATCH, UNITS)) if weights is None
                                      else weights[f"state{k}"]) for k in range(states)]
        if initial:
            kwargs["initial_state"] = initial_states
        outputs = layer(inputs, **kwargs)
        outputs = outputs if isinstance(outputs, list) else [outputs]
        loss = sum(tf.reduce_sum(out * np.linspace(-1.0, 2.0, UNITS)) * (k + 1)
                   for k, out in enumerate(outputs))
        sources = [inputs] + layer.weights + (initial_states if initial else [])
        grads = tf.gradients(loss, sources)
        with tf.Session() as session:
            session.run(tf.global_variables_initializer())
            if weights is None:
                weights = {"x": x, **{f"state{k}": session.run(s)
                                      for k, s in enumerate(initial_states)}}
                weights["layer"] = [RNG.normal(size=w.shape.as_list()) * 0.6
                                    for w in layer.weights]
            for variable, value in zip(layer.weights, weights["layer"]):
                variable.load(value, session)
            got = session.run([outputs, grads],
                              {inputs: x.transpose(1, 0, 2) if time_major else x})
    return got, weights, {op.type for op in graph.get_operations()}


def _assert_same(kind, cell_args, layer_args, **run_args):
    fused, weights, fused_types = _run(kind, True, cell_args, layer_args, **run_args)
    looped, _, loop_types = _run(kind, False, cell_args, layer_args, weights, **run_args)
    assert fused_types & FUSED_TYPES and "While" not in fused_types
    assert not loop_types & FUSED_TYPES
    for got, want in zip(fused[0] + fused[1], looped[0] + looped[1]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    return fused


CELLS = [("lstm", {"recurrent_activation": "hard_sigmoid"}),
         ("lstm", {"recurrent_activation": "sigmoid"}),
         ("gru", {"recurrent_activation": "hard_sigmoid"}),
         ("gru", {"recurrent_activation": "sigmoid", "reset_after": True}),
         ("gru", {"recurrent_activation": "hard_sigmoid", "reset_after": True}),
         ("gru", {"recurrent_activation": "sigmoid", "use_bias": False})]
LAYERS = [({"return_sequences": True}, True, False),
          ({"return_state": True, "go_backwards": True}, True, True),
          ({"return_sequences": True, "return_state": True, "go_backwards": True}, False, True),
          ({}, False, False),
          ({"time_major": True, "return_sequences": True, "go_backwards": True}, True, True)]


@pytest.mark.parametrize("kind,cell_args", CELLS)
@pytest.mark.parametrize("layer_args,masked,initial", LAYERS)
def test_fused_layers_equal_the_unrolled_loop(kind, cell_args, layer_args, masked, initial):
    _assert_same(kind, cell_args, layer_args, masked=masked, initial=initial)


@pytest.mark.parametrize("kind,cell_args", [CELLS[0], CELLS[3]])
def test_unknown_lengths_fuse_instead_of_a_while_loop(kind, cell_args):
    _assert_same(kind, cell_args, {"return_sequences": True, "return_state": True},
                 masked=True, initial=True, static_time=False)


@pytest.mark.parametrize("kind,cell_args", [CELLS[1], CELLS[2]])
def test_input_dropout_draws_one_mask_per_call_as_the_loop(kind, cell_args):
    dropped = _assert_same(kind, {**cell_args, "dropout": 0.5}, {"return_sequences": True},
                           training=True)
    kept, _, _ = _run(kind, True, cell_args, {"return_sequences": True})
    assert not np.allclose(dropped[0][0], kept[0][0])  # the mask did drop something


def test_a_stateful_fused_lstm_carries_its_states_as_the_loop():
    x = RNG.normal(size=(2, BATCH, TIME, DEPTH))
    results = []
    for fused in (True, False):
        with tf.Graph().as_default():
            layer = _layer("lstm", fused, {}, {"stateful": True, "return_sequences": True,
                                              "batch_input_shape": (BATCH, TIME, DEPTH)})
            inputs = tf.placeholder(tf.float64, [BATCH, TIME, DEPTH])
            outputs = layer(inputs)
            with tf.Session() as session:
                session.run(tf.global_variables_initializer())
                for variable, seed in zip(layer.weights, range(3)):
                    variable.load(np.random.default_rng(seed).normal(
                        size=variable.shape.as_list()) * 0.5, session)
                results.append([session.run(outputs, {inputs: batch}) for batch in x])
    np.testing.assert_allclose(results[0], results[1], rtol=1e-10, atol=1e-12)
    assert not np.allclose(results[0][0], results[0][1])


@pytest.mark.parametrize("kind,cell_args", [
    ("lstm", {"recurrent_dropout": 0.2}), ("lstm", {"activation": "relu"}),
    ("gru", {"recurrent_activation": "tanh"})])
def test_other_configurations_keep_the_loop(kind, cell_args):
    with tf.Graph().as_default() as graph:
        layer = (layers.LSTM if kind == "lstm" else layers.GRU)(UNITS, **cell_args)
        layer(tf.placeholder(tf.float32, [BATCH, TIME, DEPTH]))
    assert not {op.type for op in graph.get_operations()} & FUSED_TYPES
