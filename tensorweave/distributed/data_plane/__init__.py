"""The data plane: how large tensors move between processes, behind one interface.

gRPC carries the control plane (sessions, graph registration, step calls) and small tensors
inline in its messages. A tensor of more than INLINE_BYTES travels by reference: its holder
keeps the payload (BulkStore.pack) and puts a BulkRef in the message; the reader pulls the
bytes through the first plane both sides can use, into a buffer it allocated for them
(BulkReader.unpack):

  "shm"   shared memory, when the reader reaches the holder's descriptor socket (checked
          once per holder): one memcpy by the holder, none by the reader, whose array views
          the segment until it is garbage collected; segments travel as descriptors, never
          as paths (shared_memory.py);
  "tcp"   a raw TCP stream to the holder's TCP port, negotiated by the BulkRef: no copy in
          user space on either side (../tcp/);
  "grpc"  the holder's FetchBulk stream of chunks, always available (the gRPC adapter).

Payloads received by TCP or gRPC land in recycled buffers (runtime/buffers.py).

A server pulls only from the tasks of its cluster: a payload whose BulkRef names another
holder is refused, and the TCP plane is used only on the port the holder advertised
(`BulkStore.holder_port`, set by the server); a request can never make a server connect to
an address of the sender's choosing.

The reader states which planes it accepts (ReaderInfo: a session may restrict them with
RPCOptions.data_planes, and tests force each one); the holder picks the first of them it can
serve. Payloads no reader takes are dropped after EXPIRY_SECONDS, and a store holds at most
MAX_HELD_BYTES of them (beyond that a new one is refused with ResourceExhaustedError, unless
the store is empty: one payload of any size always fits); payloads pushed by one peer address
(PushBulk) at most MAX_HELD_BYTES_PER_PEER of them (unless it holds none), so one client
cannot take every other's room.
"""
import functools
import itertools
import os
import random
import secrets
import threading
import time

from tensorweave.framework import errors
from tensorweave.runtime import buffers
from tensorweave.runtime.host import host_id
from tensorweave.distributed import wire
from tensorweave.distributed.data_plane import shared_memory
from tensorweave.distributed.data_plane import streaming
from tensorweave.distributed.tcp import client as tcp_client
from tensorweave.distributed.protos import tensor_wire_pb2

# Payloads up to this size travel inline in the gRPC message (measured: below ~256 KiB one
# message beats a second round trip).
INLINE_BYTES = 256 * 1024
EXPIRY_SECONDS = 300.0
MAX_HELD_BYTES = 2 << 30
MAX_HELD_BYTES_PER_PEER = 1 << 30
AUTOMATIC_PLANES = ("shm", "tcp", "grpc")


# Processes with the same id may try shared memory (one kernel, one network namespace).
HOST_ID = host_id()
READER_ID = f"{HOST_ID}/{os.getpid()}/{secrets.token_hex(16)}"
_tickets = itertools.count(random.getrandbits(40) << 20)


class BulkStore:
    """The holder side of one server: payloads waiting for their reader."""

    def __init__(self, holder_address, use_shm=True):
        self.holder_address = holder_address
        self.tcp_port = 0  # set by the server that serves FETCH_BULK from `take`
        # address -> the holder's TCP port (None: not known yet), raising for an address
        # outside the cluster; set by the server (None: no restriction, a client's store)
        self.holder_port = None
        self._lock = threading.Lock()
        self._entries = {}
        self.shm = shared_memory.SegmentPool() if use_shm and shared_memory.available() \
            else None

    def status_fields(self):
        """What GetStatus advertises about this holder."""
        return {"host_id": HOST_ID, "tcp_port": self.tcp_port,
                "shm_socket": self.shm.socket_name if self.shm else "",
                "shm_token": self.shm.token if self.shm else ""}

    def pack(self, value, encoding=wire.RAW, reader=None):
        """A WireTensor of `value`: inline when small or when the reader takes no plane. An
        encoded tensor for the TCP plane is encoded as it is sent (streaming.py)."""
        header, source = wire.prepare(value, encoding)
        if source is None or wire.payload_nbytes(header) <= INLINE_BYTES or reader is None:
            if source is not None:
                header.content = wire.encode_prepared(header, source).byte_view().tobytes()
            return header
        for plane in reader.planes:
            if plane == "shm" and self.shm is not None and reader.host_id == HOST_ID:
                break  # one host: no wire to overlap with
            if plane == "tcp" and self.tcp_port and header.encoding != wire.RAW:
                stream = streaming.EncodedSource(header, source)
                header.bulk.CopyFrom(tensor_wire_pb2.BulkRef(
                    holder=self.holder_address, ticket=self.put(stream), nbytes=len(stream),
                    plane="tcp", tcp_port=self.tcp_port, chunk_elements=stream.chunk_elements))
                return header
        payload = wire.encode_prepared(header, source)
        for plane in reader.planes:
            if plane == "shm" and self.shm is not None and reader.host_id == HOST_ID:
                try:
                    ref = shm_ref(self.shm, self.holder_address, reader.reader_id, payload)
                except (errors.ResourceExhaustedError, errors.InvalidArgumentError):
                    # Over a reader quota, or a reader id naming no process of this user
                    # here (only that process could take the segment): the next plane.
                    continue
                header.bulk.CopyFrom(ref)
                return header
            if plane == "tcp" and self.tcp_port or plane == "grpc":
                ticket = self.put(payload.byte_view())
                header.bulk.CopyFrom(tensor_wire_pb2.BulkRef(
                    holder=self.holder_address, ticket=ticket, nbytes=payload.nbytes,
                    plane=plane, tcp_port=self.tcp_port if plane == "tcp" else 0))
                return header
        header.content = payload.byte_view().tobytes()
        return header

    def held_bytes(self, peer=None):
        """Bytes held: all of them, or those pushed by `peer`."""
        with self._lock:
            return self._held(peer)

    def _held(self, peer=None):
        return sum(_held_nbytes(view) for view, _, owner in self._entries.values()
                   if peer is None or owner == peer)

    def check_room(self, nbytes, peer=None):
        """Raises ResourceExhaustedError if `nbytes` more (pushed by `peer`, if given) would
        pass a bound."""
        with self._lock:
            self._check_room(nbytes, peer)

    def _check_room(self, nbytes, peer):
        held = self._held()
        if held and held + nbytes > MAX_HELD_BYTES:
            raise errors.ResourceExhaustedError(
                None, None, f"This server already holds {held} bytes of payloads no reader "
                f"took yet; {nbytes} more would pass {MAX_HELD_BYTES}. Retry later")
        mine = self._held(peer) if peer is not None else 0
        if mine and mine + nbytes > MAX_HELD_BYTES_PER_PEER:
            raise errors.ResourceExhaustedError(
                None, None, f"{peer} already has {mine} bytes of pushed payloads held here; "
                f"{nbytes} more would pass its quota (MAX_HELD_BYTES_PER_PEER = "
                f"{MAX_HELD_BYTES_PER_PEER}). Retry once they are taken")

    def put(self, view, peer=None):
        """Holds `view` for a reader; `peer` is the address that pushed it (None: this
        process's own payload). -> its ticket."""
        ticket = next(_tickets)
        now = time.monotonic()
        with self._lock:
            expired = [t for t, (_, made, _) in self._entries.items()
                       if now - made > EXPIRY_SECONDS]
            for old in expired:
                del self._entries[old]
            self._check_room(_held_nbytes(view), peer)
            self._entries[ticket] = (view, now, peer)
        return ticket

    def take(self, ticket):
        """The payload of `ticket` (a memoryview), removed from the store; None if absent."""
        with self._lock:
            entry = self._entries.pop(ticket, None)
        return None if entry is None else entry[0]

    def close(self):
        if self.shm is not None:
            self.shm.close()
        with self._lock:
            self._entries.clear()


class BulkReader:
    """The reader side (one per process): resolves BulkRefs into arrays.

    `fetch_rpc(holder_address, ticket, out)` is the gRPC plane, supplied by the transport."""

    def __init__(self, fetch_rpc=None):
        self.fetch_rpc = fetch_rpc
        self.buffers = buffers.POOL
        self.segments = shared_memory.SegmentCache(READER_ID)

    def unpack(self, wire_tensor, local_store=None):
        """(array, info) of a WireTensor, pulling its payload if it is held elsewhere.
        `local_store` resolves payloads this process holds (a pushed feed)."""
        info = {"plane": "inline", "wire_bytes": len(wire_tensor.content),
                "encoding": wire.ENCODING_NAMES.get(wire_tensor.encoding, "?"),
                "max_abs_error": wire_tensor.max_abs_error}
        if not wire_tensor.HasField("bulk"):
            return wire.from_inline(wire_tensor), info
        ref = wire_tensor.bulk
        expected = wire.payload_nbytes(wire_tensor)
        if ref.nbytes != expected:
            raise errors.InvalidArgumentError(None, None, f"A bulk payload of {ref.nbytes} "
                                              f"bytes cannot hold a tensor of {expected} bytes")
        if ref.plane == "shm":  # in place: the segment is released with the last view
            raw = self.segments.view(ref.shm_socket, ref.shm_segment, ref.shm_generation,
                                     expected, ref.retired_shm_segments)
            buffer = raw.view(wire.wire_dtype(wire_tensor)).reshape(tuple(wire_tensor.shape))
            info.update(plane="shm", wire_bytes=ref.nbytes)
            return wire.decode(wire_tensor, buffer), info
        plane = ref.plane
        holder_port = getattr(local_store, "holder_port", None)
        if holder_port is not None and plane in ("tcp", "grpc"):
            port = holder_port(ref.holder)  # raises for a holder outside the cluster
            if plane == "tcp" and (not port or port != ref.tcp_port):
                plane = "grpc"  # only the port the holder advertised: else its gRPC address
        if plane == "tcp" and ref.chunk_elements:
            host = ref.holder.rsplit(":", 1)[0].strip("[]")
            info.update(plane="tcp", wire_bytes=ref.nbytes)
            return streaming.receive(functools.partial(
                tcp_client.CLIENT.fetch_stream, (host, ref.tcp_port)), wire_tensor, ref), info
        raw = self.buffers.acquire(expected)
        buffer = raw.view(wire.wire_dtype(wire_tensor)).reshape(tuple(wire_tensor.shape))
        out = memoryview(raw) if expected else memoryview(bytearray())
        if plane == "local":
            data = local_store.take(ref.ticket) if local_store is not None else None
            if data is None or len(data) != expected:
                raise errors.InvalidArgumentError(None, None, f"No pushed payload {ref.ticket}"
                                                  " of that size is held here")
            out[:] = data
        elif plane == "tcp":
            host = ref.holder.rsplit(":", 1)[0].strip("[]")
            tcp_client.CLIENT.fetch_bulk((host, ref.tcp_port), ref.ticket, out)
        elif plane == "grpc":
            if self.fetch_rpc is None:
                raise errors.UnimplementedError(None, None, "No gRPC data plane here")
            self.fetch_rpc(ref.holder, ref.ticket, out)
        else:
            raise errors.InvalidArgumentError(None, None, f"Unknown data plane {ref.plane!r}")
        info.update(plane=plane, wire_bytes=ref.nbytes)
        return wire.decode(wire_tensor, buffer), info


def _held_nbytes(payload):
    """The memory a held payload keeps: its bytes, or the float tensor of a stream."""
    return getattr(payload, "held_nbytes", None) or len(payload)


def shm_ref(pool, holder_address, reader_id, payload):
    """The BulkRef of `payload` (a wire.Payload) written into `pool` for `reader_id`."""
    segment, generation, retired = pool.write(reader_id, payload.byte_view())
    return tensor_wire_pb2.BulkRef(
        holder=holder_address, nbytes=payload.nbytes, plane="shm",
        shm_socket=pool.socket_name, shm_segment=segment, shm_generation=generation,
        retired_shm_segments=retired)


def reader_info(planes, shm_ok):
    """The ReaderInfo this process sends a holder: `planes` is the session's preference
    (empty: automatic); shared memory only if this process can see the holder's."""
    chosen = [p for p in (planes or AUTOMATIC_PLANES) if p != "shm" or shm_ok]
    if not chosen:
        raise errors.UnavailableError(None, None, f"None of the data planes {list(planes)} is "
                                      "available to this reader (shared memory needs both "
                                      "tasks on one host)")
    return tensor_wire_pb2.ReaderInfo(reader_id=READER_ID, host_id=HOST_ID, planes=chosen)


# The process's reader; the gRPC transport sets its `fetch_rpc` (the FetchBulk stream).
READER = BulkReader()
