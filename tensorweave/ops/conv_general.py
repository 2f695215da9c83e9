"""`tf.conv`: TF's general N-D convolution (the Conv op of TF 2.11+), composed from
tf.nn.convolution: N = 1..3 spatial dimensions, `batch_dims` leading batch dimensions,
channels last or first, SAME / VALID / EXPLICIT padding, dilations and grouped convolution
(`groups` splits the input channels and the filters' outputs into that many independent
convolutions, concatenated). Its gradient is that of the ops it is made of."""
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.graph import name_scope
from tensorweave.ops import array_ops
from tensorweave.ops.conv_variants import convolution
from tensorweave.ops.pad_tile_ops import pad


def _check_list(values, length, what, default):
    values = list(values) if values else [default] * length
    if len(values) != length:
        raise ValueError(f"tf.conv: {what} must have {length} entries (N + 2), got {values}")
    return [int(v) for v in values]


def conv(input, filter, strides, padding, explicit_paddings=(),  # noqa: A002 - TF's names
         data_format="CHANNELS_LAST", dilations=(), batch_dims=1, groups=1, name=None):
    """N-D convolution of `input` (batch_shape + spatial + [in_channels], or batch_shape +
    [in_channels] + spatial with data_format="CHANNELS_FIRST") with `filter` (spatial +
    [in_channels / groups, out_channels]). strides and dilations: N + 2 values, 1 at both
    ends; explicit_paddings (padding="EXPLICIT"): a (before, after) pair per dimension of N + 2
    in the input's layout, zero for the batch and channel dimensions."""
    with name_scope(name or "Conv"):
        input = convert_to_tensor(input, name="input")  # noqa: A001
        filter = convert_to_tensor(filter, name="filter", dtype=input.dtype)  # noqa: A001
        if filter.shape.ndims is None or not 3 <= filter.shape.ndims <= 5:
            raise ValueError(f"tf.conv: filter must have rank N + 2 with N in 1..3 spatial "
                             f"dimensions, got shape {filter.shape}")
        spatial = filter.shape.ndims - 2
        if batch_dims < 1:
            raise ValueError(f"tf.conv: batch_dims must be >= 1, got {batch_dims}")
        if input.shape.ndims is not None and input.shape.ndims != spatial + 1 + batch_dims:
            raise ValueError(f"tf.conv: input must have rank N + 1 + batch_dims = "
                             f"{spatial + 1 + batch_dims}, got shape {input.shape}")
        if data_format not in ("CHANNELS_LAST", "CHANNELS_FIRST"):
            raise ValueError(f"tf.conv: data_format must be 'CHANNELS_LAST' or "
                             f"'CHANNELS_FIRST', got {data_format!r}")
        strides = _check_list(strides, spatial + 2, "strides", 1)
        dilations = _check_list(dilations, spatial + 2, "dilations", 1)
        if strides[0] != 1 or strides[-1] != 1 or dilations[0] != 1 or dilations[-1] != 1:
            raise ValueError(f"tf.conv: strides and dilations must be 1 in the batch and "
                             f"channel dimensions, got {strides} and {dilations}")
        if padding not in ("SAME", "VALID", "EXPLICIT"):
            raise ValueError(f"tf.conv: padding must be 'SAME', 'VALID' or 'EXPLICIT', got "
                             f"{padding!r}")
        first = data_format == "CHANNELS_FIRST"
        outer = array_ops.shape(input)[:batch_dims]
        rest = input.shape.as_list()[batch_dims:] if input.shape.ndims is not None else [None]
        x = array_ops.reshape(input, [-1] + rest if None not in rest else array_ops.concat(
            [[-1], array_ops.shape(input)[batch_dims:]], 0))
        if first:  # [B, C, spatial...] -> [B, spatial..., C]
            x = array_ops.transpose(x, [0] + list(range(2, spatial + 2)) + [1])
        if padding == "EXPLICIT":
            pairs = _check_list(explicit_paddings, 2 * (spatial + 2), "explicit_paddings", 0)
            pairs = [pairs[2 * i:2 * i + 2] for i in range(spatial + 2)]
            if first:
                pairs = [pairs[0]] + pairs[2:] + [pairs[1]]
            if any(pairs[0]) or any(pairs[-1]) or min(min(p) for p in pairs) < 0:
                raise ValueError(f"tf.conv: explicit_paddings must be non-negative and zero "
                                 f"for the batch and channel dimensions, got "
                                 f"{list(explicit_paddings)}")
            x, padding = pad(x, pairs), "VALID"
        elif explicit_paddings:
            raise ValueError("tf.conv: explicit_paddings is only for padding='EXPLICIT'")
        y = _grouped(x, filter, groups, padding, strides[1:-1], dilations[1:-1])
        if first:
            y = array_ops.transpose(y, [0, spatial + 1] + list(range(1, spatial + 1)))
        if batch_dims == 1:
            return y
        return array_ops.reshape(y, array_ops.concat([outer, array_ops.shape(y)[1:]], 0))


def _grouped(x, filter, groups, padding, strides, dilations):  # noqa: A002
    if groups == 1:
        return convolution(x, filter, padding, strides=strides, dilations=dilations)
    channels, outputs = x.shape.as_list()[-1], filter.shape.as_list()[-1]
    per_group = filter.shape.as_list()[-2]
    if groups < 1 or channels is None or outputs is None or channels != per_group * groups \
            or outputs % groups:
        raise ValueError(f"tf.conv: groups={groups} must divide the input's {channels} "
                         f"channels into the filter's {per_group} per group, and its "
                         f"{outputs} outputs evenly")
    pieces = [convolution(part, kernel, padding, strides=strides, dilations=dilations)
              for part, kernel in zip(array_ops.split(x, groups, axis=-1),
                                      array_ops.split(filter, groups, axis=-1))]
    return array_ops.concat(pieces, -1)


