"""Pure-Python references for ragged tests: a ragged value is nested lists."""
import numpy as np


def random_rows(rng, nrows, max_len=4, inner=()):
    """nrows rows of random lengths (empty rows included) of float64 cells of shape inner."""
    return [[rng.standard_normal(inner).tolist() if inner else float(rng.standard_normal())
             for _ in range(int(rng.integers(0, max_len + 1)))] for _ in range(nrows)]


def splits_of(rows):
    return np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(np.int64)


def flat_of(rows):
    return [cell for row in rows for cell in row]


def pad(rows, default, width=None):
    """Dense padding of a ragged list (rows may themselves be ragged lists)."""
    width = max([len(r) for r in rows] + [0]) if width is None else width
    return [list(r) + [default] * (width - len(r)) for r in rows]


def to_dense(nested, default=0):
    """np.array of a nested ragged list padded to its bounding box."""
    def bounds(x, depth, out):
        if isinstance(x, list):
            if len(out) <= depth:
                out.append(0)
            out[depth] = max(out[depth], len(x))
            for item in x:
                bounds(item, depth + 1, out)
        return out
    shape = bounds(nested, 0, [])
    result = np.full(shape, default, dtype=object)

    def fill(x, index):
        if isinstance(x, list):
            for i, item in enumerate(x):
                fill(item, index + (i,))
        else:
            result[index] = x
    fill(nested, ())
    return result


def sparse_entries(nested, prefix=()):
    """[(index tuple, value)] of every scalar, row-major."""
    if not isinstance(nested, list):
        return [(prefix, nested)]
    entries = []
    for i, item in enumerate(nested):
        entries += sparse_entries(item, prefix + (i,))
    return entries
