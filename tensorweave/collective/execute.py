"""Running one negotiated response on this rank: pack the calls' arrays into flat buffers
(several fused allreduces share one), hand them to the data plane, unpack the results.

A rank that has joined (Communicator.join) gets responses for collectives it never submitted:
it takes part with zeros of the negotiated shape (allreduce, reduce_scatter) or no rows
(allgather), so the ranks still running finish their epoch without deadlocking.
"""
import math

import numpy as np

from tensorweave.collective import wire
from tensorweave.framework import errors

REDUCTIONS = ("sum", "mean", "min", "max", "product")
_UFUNCS = {"sum": np.add, "mean": np.add, "min": np.minimum, "max": np.maximum,
           "product": np.multiply}


def reduction_ufunc(op):
    return _UFUNCS[op]


def run(plane, topology, response, calls):
    """The results (one ndarray per call, None for a joined rank's stand-ins)."""
    kind = response["kind"]
    dtype = np.dtype(response["dtype"])
    shapes = [tuple(shape) for shape in response["shapes"]]
    arrays = [call.array if call is not None else np.zeros(shape, dtype)
              for call, shape in zip(calls, shapes)]
    name = response["names"][0] + (f"+{len(arrays) - 1}" if len(arrays) > 1 else "")
    size = topology.size
    if kind == "barrier":
        return [np.zeros(0, np.uint8)]
    if kind == "allreduce":
        return _allreduce(plane, response, arrays, shapes, dtype, name, size)
    array, shape = arrays[0], shapes[0]
    tag = (response["seq"], wire.describe(name, dtype, shape))
    row_elems = int(np.prod(shape[1:], dtype=np.int64)) if shape else 1
    if kind == "broadcast":
        buf = np.array(array, copy=True).reshape(-1)
        plane.broadcast(buf, response["root"], tag)
        return [buf.reshape(shape)]
    if kind == "allgather":
        rows = response["rows"]
        mine = array.reshape(-1) if calls[0] is not None else np.zeros(0, dtype)
        out = np.empty(sum(rows) * row_elems, dtype)
        plane.allgather(mine, [r * row_elems for r in rows], out, tag)
        return [out.reshape((sum(rows),) + shape[1:])]
    if kind == "reduce_scatter":
        rows = response["rows"]
        if sum(rows) != shape[0]:
            raise errors.InvalidArgumentError(None, None, f"reduce_scatter '{name}': the ranks'"
                                              f" rows {rows} do not add up to {shape[0]}")
        buf = np.array(array, copy=True).reshape(-1)
        piece = plane.reduce_scatter(buf, response["op"], [r * row_elems for r in rows], tag)
        finish_mean(piece, response["op"], size)
        return [piece.reshape((rows[topology.rank],) + shape[1:])]
    if kind == "alltoall":
        splits = response["splits"]  # splits[sender][receiver], in rows
        send_counts = [s * row_elems for s in splits[topology.rank]]
        recv_counts = [splits[sender][topology.rank] * row_elems for sender in range(size)]
        received = plane.alltoall(array.reshape(-1), send_counts, recv_counts, tag)
        rows = sum(splits[sender][topology.rank] for sender in range(size))
        return [received.reshape((rows,) + shape[1:])]
    raise ValueError(f"unknown collective kind {kind!r}")


def _allreduce(plane, response, arrays, shapes, dtype, name, size):
    op = response["op"]
    tag = (response["seq"], wire.describe(name, dtype, (sum(a.size for a in arrays),)))
    buf = plane.allreduce_parts([a.reshape(-1) for a in arrays], op, tag,
                                response.get("comp"))
    results, offset = [], 0
    for shape in shapes:  # (math.prod: np.prod costs ~5 us a call, per fused tensor)
        count = math.prod(shape)
        results.append(buf[offset:offset + count].reshape(shape))
        offset += count
    return results


def finish_mean(buf, op, size):
    if op != "mean" or size == 1:
        return
    if buf.dtype.kind in "fc":
        np.divide(buf, buf.dtype.type(size), out=buf)
    elif buf.dtype.kind in "iu":
        np.floor_divide(buf, buf.dtype.type(size), out=buf)
