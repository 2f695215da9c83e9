"""The meaning of a StridedSlice spec, shared by its shape function (ops/) and its kernel (kernels/).

A spec is `begin`, `end`, `strides` (one entry per item of a Python index such as
`x[1:, ..., tf.newaxis, 0]`) and five bit masks: bit i of `begin_mask` / `end_mask` says entry i
leaves its begin / end open (`:`), `ellipsis_mask` marks `...`, `new_axis_mask` marks
`tf.newaxis`, `shrink_axis_mask` marks a plain integer (the dimension is indexed and dropped).
Read this way the spec is exactly a NumPy basic index, which is how the kernel applies it.
"""
MASK_NAMES = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def entry_kinds(count, masks):
    """One of "ellipsis", "newaxis", "shrink", "slice" per spec entry (in the masks' priority)."""
    kinds = []
    for i in range(count):
        bit = 1 << i
        if masks["ellipsis_mask"] & bit:
            kinds.append("ellipsis")
        elif masks["new_axis_mask"] & bit:
            kinds.append("newaxis")
        elif masks["shrink_axis_mask"] & bit:
            kinds.append("shrink")
        else:
            kinds.append("slice")
    if kinds.count("ellipsis") > 1:
        raise ValueError("Multiple ellipses in a slice spec are not allowed")
    return kinds


def numpy_index(begin, end, strides, masks):
    """The NumPy index tuple a fully known spec stands for."""
    index = []
    kinds = entry_kinds(len(begin), masks)
    for i, kind in enumerate(kinds):
        bit = 1 << i
        if kind == "ellipsis":
            index.append(Ellipsis)
        elif kind == "newaxis":
            index.append(None)
        elif kind == "shrink":
            index.append(int(begin[i]))
        else:
            if int(strides[i]) == 0:
                raise ValueError(f"strides[{i}] must be non-zero")
            index.append(slice(None if masks["begin_mask"] & bit else int(begin[i]),
                               None if masks["end_mask"] & bit else int(end[i]),
                               int(strides[i])))
    return tuple(index)


def output_dims(input_dims, begin, end, strides, masks, count):
    """The static output dims (None where unknown), or None when the rank is unknown.

    `input_dims` is a tuple of ints/None or None (unknown rank); `begin`, `end`, `strides` are
    sequences of ints or None (not constant); `count` is the number of spec entries. Raises
    ValueError for specs that can never be valid (zero strides, integer indices out of range,
    more indices than dimensions).
    """
    kinds = entry_kinds(count, masks)
    consumed = sum(kind in ("shrink", "slice") for kind in kinds)
    if "ellipsis" not in kinds:
        kinds.append("ellipsis")  # the dimensions not named stay whole, as in NumPy
    if input_dims is None:
        return None
    rank = len(input_dims)
    if consumed > rank:
        raise ValueError(f"the slice spec indexes {consumed} dimensions but the input has rank "
                         f"{rank}")
    out, position = [], 0
    for i, kind in enumerate(kinds):
        if kind == "ellipsis":
            covered = rank - consumed
            out.extend(input_dims[position:position + covered])
            position += covered
        elif kind == "newaxis":
            out.append(1)
        elif kind == "shrink":
            dim, index = input_dims[position], _entry(begin, i)
            if dim is not None and index is not None and not -dim <= index < dim:
                raise ValueError(f"slice index {index} of dimension {position} out of bounds "
                                 f"(size {dim})")
            position += 1
        else:
            out.append(_slice_size(input_dims[position], i, begin, end, strides, masks))
            position += 1
    return out


def _entry(values, i):
    return None if values is None or values[i] is None else int(values[i])


def _slice_size(dim, i, begin, end, strides, masks):
    stride = _entry(strides, i)
    if stride == 0:
        raise ValueError(f"strides[{i}] must be non-zero")
    bit = 1 << i
    start = None if masks["begin_mask"] & bit else _entry(begin, i)
    stop = None if masks["end_mask"] & bit else _entry(end, i)
    if dim is None or stride is None:
        return None
    if (start is None and not masks["begin_mask"] & bit) or \
            (stop is None and not masks["end_mask"] & bit):
        return None
    return len(range(*slice(start, stop, stride).indices(dim)))
