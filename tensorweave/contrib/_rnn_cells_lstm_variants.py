"""`tf.contrib.rnn`'s LSTM variants from speech recognition and event-driven models, with TF
1.x's equations and variable names:

  CoupledInputForgetGateLSTMCell  input gate = 1 - forget gate (Greff et al. 2015), optional
                                  peepholes, projection and layer normalisation
  TimeFreqLSTMCell                an LSTM run over overlapping frequency slices of each frame
                                  (Sainath & Li 2016); state [batch, 2 * num_units * slices]
  PhasedLSTMCell                  an LSTM whose update is gated by a periodic time gate
                                  (Neil et al. 2016); inputs are (time, features)
Weight matrices may be stored in `num_unit_shards` row shards (W_0, W_1, ...) as in TF.
GridLSTMCell and BidirectionalGridLSTMCell are in _rnn_cells_grid.py.
"""
import numpy as np

from tensorweave.layers.rnn_cell_impl import LSTMSized, LSTMStateTuple, RNNCell
from tensorweave.ops import (array_ops, clip_ops, conv_ops, init_ops, math_ops, nn_impl,
                             random_ops, slicing_ops, variable_scope)

_sigmoid, _tanh = math_ops.sigmoid, math_ops.tanh


def _sharded_matrix(name, shape, dtype, num_shards, initializer=None):
    """A [rows, cols] weight kept as `num_shards` row blocks name_0, name_1, ... (the first
    rows % num_shards blocks one row longer), joined into one tensor."""
    rows = shape[0]
    if num_shards > rows:
        raise ValueError(f"{name}: too many shards ({num_shards}) for a weight of {rows} rows")
    base, extra = divmod(rows, num_shards)
    shards = [variable_scope.get_variable(f"{name}_{index}",
                                          [base + (index < extra)] + list(shape[1:]),
                                          dtype=dtype, initializer=initializer)
              for index in range(num_shards)]
    return shards[0] if num_shards == 1 else array_ops.concat(shards, 0, name=name + "/concat")


def _zero_bias(name, width, dtype):
    return variable_scope.get_variable(name, [width], dtype=dtype,
                                       initializer=init_ops.zeros_initializer())


def _diagonal(name, width, dtype):
    return variable_scope.get_variable(name, [width], dtype=dtype)


def _static_width(tensor, who):
    width = tensor.shape.with_rank(2).as_list()[1]
    if width is None:
        raise ValueError(f"{who}: the inputs' last dimension must be known when the graph is "
                         f"built, got shape {tensor.shape}")
    return width


def _layer_norm(value, scope, gain, shift):
    """Layer normalisation over the last axis with gamma/beta in `scope` (as contrib's
    layer_norm: variance epsilon 1e-12)."""
    with variable_scope.variable_scope(scope):
        width = value.shape.as_list()[-1]
        gamma = variable_scope.get_variable("gamma", [width], dtype=value.dtype,
                                            initializer=init_ops.constant_initializer(gain))
        beta = variable_scope.get_variable("beta", [width], dtype=value.dtype,
                                           initializer=init_ops.constant_initializer(shift))
        mean, variance = nn_impl.moments(value, [1], keep_dims=True)
        return (value - mean) * math_ops.rsqrt(variance + 1e-12) * gamma + beta


class CoupledInputForgetGateLSTMCell(RNNCell):
    """An LSTM whose input gate is one minus its forget gate: c = f*c_prev + (1-f)*act(j),
    m = sigmoid(o) * act(c) (peepholes add w_f*c_prev to f and w_o*c to o); an optional
    projection m @ W_P clipped to proj_clip; with layer_norm, j, f, o and c are
    layer-normalised (and the bias B is made but not added, as in TF). `initializer` is the
    weights' initializer."""

    def __init__(self, num_units, use_peepholes=False, initializer=None, num_proj=None,
                 proj_clip=None, num_unit_shards=1, num_proj_shards=1, forget_bias=1.0,
                 state_is_tuple=True, activation=math_ops.tanh, reuse=None, layer_norm=False,
                 norm_gain=1.0, norm_shift=0.0):
        super().__init__(_reuse=reuse)
        self._num_units, self._use_peepholes = num_units, use_peepholes
        self._initializer, self._num_proj, self._proj_clip = initializer, num_proj, proj_clip
        self._num_unit_shards, self._num_proj_shards = num_unit_shards, num_proj_shards
        self._forget_bias, self._state_is_tuple = forget_bias, state_is_tuple
        self._activation, self._layer_norm = activation, layer_norm
        self._norm_gain, self._norm_shift = norm_gain, norm_shift

    @property
    def state_size(self):
        out = self._num_proj or self._num_units
        return LSTMStateTuple(self._num_units, out) if self._state_is_tuple else \
            self._num_units + out

    @property
    def output_size(self):
        return self._num_proj or self._num_units

    def call(self, inputs, state):
        units, out = self._num_units, self._num_proj or self._num_units
        if self._state_is_tuple:
            c_prev, m_prev = state
        else:
            c_prev, m_prev = state[:, :units], state[:, units:units + out]
        dtype = inputs.dtype
        depth = _static_width(inputs, type(self).__name__)
        weights = _sharded_matrix("W", [depth + out, 3 * units], dtype, self._num_unit_shards,
                                  self._initializer)
        bias = _zero_bias("B", 3 * units, dtype)
        lstm_matrix = math_ops.matmul(array_ops.concat([inputs, m_prev], 1), weights)
        if not self._layer_norm:
            lstm_matrix = conv_ops.bias_add(lstm_matrix, bias)
        j, f, o = slicing_ops.split(lstm_matrix, 3, axis=1)
        if self._layer_norm:
            j, f, o = (_layer_norm(gate, scope, self._norm_gain, self._norm_shift)
                       for gate, scope in ((j, "transform"), (f, "forget"), (o, "output")))
        if self._use_peepholes:
            w_f, w_o = _diagonal("W_F_diag", units, dtype), _diagonal("W_O_diag", units, dtype)
            f = f + w_f * c_prev
        forget = _sigmoid(f + self._forget_bias)
        c = forget * c_prev + (1 - forget) * self._activation(j)
        if self._layer_norm:
            c = _layer_norm(c, "state", self._norm_gain, self._norm_shift)
        m = _sigmoid(o + w_o * c if self._use_peepholes else o) * self._activation(c)
        if self._num_proj is not None:
            m = math_ops.matmul(m, _sharded_matrix("W_P", [units, self._num_proj], dtype,
                                                   self._num_proj_shards, self._initializer))
            if self._proj_clip is not None:
                m = clip_ops.clip_by_value(m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(c, m) if self._state_is_tuple else \
            array_ops.concat([c, m], 1)
        return m, new_state


def _frequency_slices(inputs, start, stop, feature_size, skip, offset, who):
    """The slices [start + k*skip, start + k*skip + feature_size) of inputs' columns that fit
    in [start, stop)."""
    if not feature_size or not skip:
        raise ValueError(f"{who}: feature_size and frequency_skip must be positive integers, "
                         f"got {feature_size!r} and {skip!r}")
    count = (stop - start - feature_size) // skip + 1
    return [inputs[:, start + offset + k * skip:start + offset + k * skip + feature_size]
            for k in range(count)]


class TimeFreqLSTMCell(RNNCell):
    """At each frame, an LSTM runs along the frequency axis over the input's overlapping
    slices of `feature_size` columns, `frequency_skip` apart: slice k's cell sees the slice,
    its own previous-frame output m_prev[k] and slice k-1's new output, and keeps its own
    (c, m) across frames. The output is every slice's m concatenated; the state is every
    slice's [c, m], concatenated ([batch, 2 * num_units * slices]: TF reports state_size as
    2 * num_units, so pass the state explicitly as TF's users do)."""

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_unit_shards=1, forget_bias=1.0, feature_size=None, frequency_skip=1,
                 reuse=None):
        super().__init__(_reuse=reuse)
        self._num_units, self._use_peepholes, self._cell_clip = num_units, use_peepholes, \
            cell_clip
        self._initializer, self._num_unit_shards = initializer, num_unit_shards
        self._forget_bias, self._feature_size = forget_bias, feature_size
        self._frequency_skip = frequency_skip

    @property
    def state_size(self):
        return 2 * self._num_units

    @property
    def output_size(self):
        return self._num_units

    def call(self, inputs, state):
        units, dtype = self._num_units, inputs.dtype
        width = _static_width(inputs, "TimeFreqLSTMCell")
        slices = _frequency_slices(inputs, 0, width, self._feature_size, self._frequency_skip,
                                   0, "TimeFreqLSTMCell")
        state_width = state.shape.as_list()[-1]
        if state_width is not None and state_width != 2 * units * len(slices):
            raise ValueError(f"TimeFreqLSTMCell: the state must hold (c, m) of each of the "
                             f"{len(slices)} frequency slices, [batch, {2 * units * len(slices)}]"
                             f", got width {state_width}")
        weights = _sharded_matrix("W", [self._feature_size + 2 * units, 4 * units], dtype,
                                  self._num_unit_shards, self._initializer)
        bias = _zero_bias("B", 4 * units, dtype)
        if self._use_peepholes:
            w_f, w_i, w_o = (_diagonal(f"W_{gate}_diag", units, dtype) for gate in "FIO")
        m_freq = array_ops.zeros_like(state[:, :units])
        outputs, states = [], []
        for index, piece in enumerate(slices):
            c_prev = state[:, 2 * index * units:(2 * index + 1) * units]
            m_prev = state[:, (2 * index + 1) * units:(2 * index + 2) * units]
            lstm_matrix = conv_ops.bias_add(math_ops.matmul(
                array_ops.concat([piece, m_prev, m_freq], 1), weights), bias)
            i, j, f, o = slicing_ops.split(lstm_matrix, 4, axis=1)
            if self._use_peepholes:
                i, f = i + w_i * c_prev, f + w_f * c_prev
            c = _sigmoid(f + self._forget_bias) * c_prev + _sigmoid(i) * _tanh(j)
            if self._cell_clip is not None:
                c = clip_ops.clip_by_value(c, -self._cell_clip, self._cell_clip)
            m = _sigmoid(o + w_o * c if self._use_peepholes else o) * _tanh(c)
            m_freq = m
            outputs.append(m)
            states.extend([c, m])
        return array_ops.concat(outputs, 1), array_ops.concat(states, 1)


def _linear_block(scope, args, width):
    """concat(args) @ kernel + bias in variable scope `scope` (TF's _Linear: the bias starts at
    zero)."""
    with variable_scope.variable_scope(scope):
        joined = array_ops.concat(list(args), 1)
        depth = _static_width(joined, "PhasedLSTMCell")
        kernel = variable_scope.get_variable("kernel", [depth, width], dtype=joined.dtype)
        return conv_ops.bias_add(math_ops.matmul(joined, kernel),
                                 _zero_bias("bias", width, joined.dtype))


class PhasedLSTMCell(LSTMSized, RNNCell):
    """An LSTM (gates from [x, h_prev], and c_prev / new c with peepholes) whose update is let
    through by a time gate k, per unit: with cycle phi = ((t - phase) mod period) / period,
    k = 2*phi/r_on while phi < r_on/2, 2 - 2*phi/r_on while phi < r_on, else leak*phi; then
    c = k*c_new + (1-k)*c_prev and h likewise. `inputs` is (time [batch, 1], features).
    period starts as exp(U(log period_init_min, log period_init_max)), phase as U(0, period),
    ratio_on as `ratio_on` (trainable unless trainable_ratio_on=False). The mod passes the
    gradient of t - phase unchanged, as TF's."""

    def __init__(self, num_units, use_peepholes=False, leak=0.001, ratio_on=0.1,
                 trainable_ratio_on=True, period_init_min=1.0, period_init_max=1000.0,
                 reuse=None):
        super().__init__(_reuse=reuse)
        if not 0 < period_init_min < period_init_max:
            raise ValueError(f"PhasedLSTMCell: need 0 < period_init_min < period_init_max, got "
                             f"{period_init_min} and {period_init_max}")
        self._num_units, self._use_peepholes, self._leak = num_units, use_peepholes, leak
        self._ratio_on, self._trainable_ratio_on = ratio_on, trainable_ratio_on
        self._period_range = (float(period_init_min), float(period_init_max))

    def __call__(self, inputs, state, scope=None):
        if not isinstance(inputs, (tuple, list)) or len(inputs) != 2:
            raise ValueError("PhasedLSTMCell: inputs must be a pair (time [batch, 1], "
                             f"features [batch, depth]), got {inputs!r}")
        return super().__call__(tuple(inputs), state, scope=scope)

    def call(self, inputs, state):
        c_prev, h_prev = state
        time, x = inputs
        units = self._num_units
        gates = [x, h_prev] + ([c_prev] if self._use_peepholes else [])
        input_gate, forget_gate = slicing_ops.split(
            _sigmoid(_linear_block("mask_gates", gates, 2 * units)), 2, axis=1)
        new_c = c_prev * forget_gate + input_gate * _tanh(_linear_block("new_input",
                                                                        [x, h_prev], units))
        out_args = [x, h_prev] + ([new_c] if self._use_peepholes else [])
        new_h = _tanh(new_c) * _sigmoid(_linear_block("output_gate", out_args, units))
        low, high = np.log(self._period_range)

        def period_init(shape, dtype=None, partition_info=None):
            return math_ops.exp(random_ops.random_uniform(shape, low, high, dtype or x.dtype))
        period = variable_scope.get_variable("period", [units], dtype=x.dtype,
                                             initializer=period_init)

        def phase_init(shape, dtype=None, partition_info=None):
            return random_ops.random_uniform(shape, 0.0, 1.0, dtype or x.dtype) * \
                period.initial_value
        phase = variable_scope.get_variable("phase", [units], dtype=x.dtype,
                                            initializer=phase_init)
        ratio_on = variable_scope.get_variable(
            "ratio_on", [units], dtype=x.dtype, trainable=self._trainable_ratio_on,
            initializer=init_ops.constant_initializer(self._ratio_on))
        shifted = time - math_ops.cast(phase, time.dtype)
        period_t = math_ops.cast(period, time.dtype)
        wrapped = array_ops.stop_gradient(math_ops.floormod(shifted, period_t) - shifted) + \
            shifted
        cycle = math_ops.cast(wrapped / period_t, x.dtype)
        rising = 2 * cycle / ratio_on
        k = math_ops.select(cycle < ratio_on, 2 - rising, self._leak * cycle)
        k = math_ops.select(cycle < 0.5 * ratio_on, rising, k)
        new_c = k * new_c + (1 - k) * c_prev
        new_h = k * new_h + (1 - k) * h_prev
        return new_h, LSTMStateTuple(new_c, new_h)
