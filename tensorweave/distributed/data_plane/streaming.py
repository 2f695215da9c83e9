"""Encoded tensors streamed over the TCP data plane: encode, send and decode overlap.

Encoded whole, a 64 MB float32 tensor under float16 spent ~100 ms encoding before its first
byte left and ~45 ms decoding after its last arrived, on top of ~270 ms on a 1 Gbit/s link
(BENCHMARKS.md, issue 18: the encodings gained 0.99-1.30x where the bytes halved). Here the
holder keeps the float tensor (`EncodedSource`) and encodes it chunk by chunk as the TCP server
sends it: chunk k+1 is encoded while the kernel's socket buffer drains chunk k onto the wire;
the reader decodes each chunk into the tensor as it lands, while the kernel receives the next.
Both sides hold one chunk beside the tensor, whatever its size.

On the wire, after the FETCH_BULK answer header (total bytes, OK), each chunk is framed
`<index u32><nbytes u32>` (tcp/framing.py); the reader knows the chunk size from the BulkRef
(`chunk_elements`, bounded by MAX_CHUNK_ELEMENTS) and accepts only the next index with exactly
the bytes that chunk must have. A chunk header out of order, a size it did not expect, or a
chunk that does not decode closes the connection with DataLossError naming the holder.
"""
import numpy as np

from tensorweave.framework import errors
from tensorweave.distributed import wire

# The largest chunk a reader accepts from a BulkRef: 16 MiB of float32 (the holder uses
# wire.CHUNK_ELEMENTS); a larger claim is refused before anything is allocated.
MAX_CHUNK_ELEMENTS = 4 << 20


class EncodedSource:
    """A float tensor a store holds for one reader, encoded only as it is sent.

    `len()` is the encoded size (what the reader receives); `chunks()` yields the encoded
    chunks as byte views of one reused buffer (each valid until the next is asked for)."""

    def __init__(self, header, source, chunk_elements=None):
        self.header = header
        self.flat = source.reshape(-1)
        self.chunk_elements = chunk_elements or wire.CHUNK_ELEMENTS
        self.wire_dtype = wire.wire_dtype(header)

    def __len__(self):
        return self.flat.size * self.wire_dtype.itemsize

    @property
    def held_nbytes(self):
        """What holding it costs (the store's bounds count this): the float tensor."""
        return self.flat.nbytes

    def chunks(self):
        buffer = np.empty(min(self.chunk_elements, self.flat.size), self.wire_dtype)
        for start in range(0, self.flat.size, self.chunk_elements):
            source = self.flat[start:start + self.chunk_elements]
            out = buffer[:source.size]
            wire.encode_chunk(self.header, source, out)
            yield memoryview(out).cast("B")

    def encode_all(self):
        """The whole encoded payload (for a reader that pulls it by gRPC instead)."""
        return wire.encode_prepared(self.header, self.flat).byte_view()


def receive(fetch_stream, wire_tensor, ref):
    """The tensor of `wire_tensor`, whose encoded payload `ref` names, decoded chunk by chunk
    as `fetch_stream(ticket, nbytes, chunk_bytes, on_chunk)` receives it."""
    chunk_elements = ref.chunk_elements
    if wire_tensor.encoding == wire.RAW or not 0 < chunk_elements <= MAX_CHUNK_ELEMENTS:
        raise errors.DataLossError(None, None, f"{ref.holder} announced a streamed payload "
                                   f"of {chunk_elements} elements per chunk with encoding "
                                   f"{wire_tensor.encoding}: expected a lossy encoding and "
                                   f"1 to {MAX_CHUNK_ELEMENTS} elements per chunk")
    out = wire.empty_tensor(wire_tensor)
    flat = out.reshape(-1)
    wire_dtype = wire.wire_dtype(wire_tensor)

    def on_chunk(index, view):
        data = np.frombuffer(view, wire_dtype)
        start = index * chunk_elements
        wire.decode_chunk(wire_tensor, data, flat[start:start + data.size])

    fetch_stream(ref.ticket, ref.nbytes, chunk_elements * wire_dtype.itemsize, on_chunk)
    return out
