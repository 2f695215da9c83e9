"""The server half of the gRPC transport: the Worker and Master services as gRPC handlers.

Handlers take the request's raw bytes and parse them here, so that a malformed request
(garbage bytes, fields of the wrong type, fields this server does not know) is answered with
INVALID_ARGUMENT naming what was wrong, and an error inside a handler becomes the status of
its OpError; the server keeps serving either way. Tensors in requests are resolved through the
data plane (BulkReader), tensors in responses are packed for the caller's ReaderInfo
(BulkStore.pack).
"""
import threading

import grpc
import numpy as np
from google.protobuf import message as protobuf_message
from google.protobuf import unknown_fields

from tensorweave.framework import errors
from tensorweave.runtime.cancellation import CancellationToken
from tensorweave.distributed import data_plane
from tensorweave.distributed import wire
from tensorweave.distributed import worker_service
from tensorweave.distributed.grpc import clients
from tensorweave.distributed.grpc import status as status_lib
from tensorweave.distributed.protos import master_pb2
from tensorweave.distributed.protos import tensor_wire_pb2
from tensorweave.distributed.protos import worker_pb2

WORKER_SERVICE = "tensorweave.WorkerService"
MASTER_SERVICE = "tensorweave.MasterService"
# A RecvTensor over gRPC holds a handler thread while it waits; at most this many wait at
# once (others are refused with RESOURCE_EXHAUSTED), so waiting calls can never take every
# thread of the server (server.py). Steps pull over the TCP port, which holds no thread.
MAX_WAITING_RECVS = 128


def _parse(request_cls, raw):
    try:
        request = request_cls.FromString(raw)
    except protobuf_message.DecodeError as exc:
        raise errors.InvalidArgumentError(None, None, f"Malformed {request_cls.__name__}: "
                                          f"{exc}") from None
    if len(unknown_fields.UnknownFieldSet(request)):
        raise errors.InvalidArgumentError(None, None, f"Malformed {request_cls.__name__}: it "
                                          "has fields of unknown number or wrong type")
    return request


def _serialize(response):
    return response if isinstance(response, bytes) else response.SerializeToString()


def _unary(request_cls, fn):
    def handler(raw, context):
        try:
            return fn(_parse(request_cls, raw), context)
        except Exception as exc:  # noqa: BLE001 - every failure becomes the call's status
            error = status_lib.error_for_exception(exc)
        context.abort(status_lib.status_code(error), error.message)
    return grpc.unary_unary_rpc_method_handler(handler, request_deserializer=None,
                                               response_serializer=_serialize)


_require = worker_service.require


class WorkerServicer:
    """WorkerService over a Worker, with this server's BulkStore for outgoing payloads."""

    def __init__(self, worker, store, on_shutdown):
        self.worker = worker
        self.store = store
        self.service = worker_service.WorkerService(worker, store)
        self.on_shutdown = on_shutdown
        self._recv_slots = threading.BoundedSemaphore(MAX_WAITING_RECVS)

    def handler(self):
        methods = {
            "GetStatus": _unary(worker_pb2.GetStatusRequest, self.get_status),
            "RegisterGraph": _unary(worker_pb2.RegisterGraphRequest, self.register_graph),
            "DeregisterGraph": _unary(worker_pb2.DeregisterGraphRequest,
                                      lambda r, c: self.worker.deregister_graph(r)),
            "RunGraph": _unary(worker_pb2.RunGraphRequest, self.run_graph),
            "CleanupGraph": _unary(worker_pb2.CleanupGraphRequest, self.cleanup_graph),
            "AbortStep": _unary(worker_pb2.AbortStepRequest, self.abort_step),
            "RecvTensor": _unary(worker_pb2.RecvTensorRequest, self.recv_tensor),
            "FetchBulk": grpc.unary_stream_rpc_method_handler(self.fetch_bulk),
            "PushBulk": grpc.stream_unary_rpc_method_handler(
                self.push_bulk, response_serializer=_serialize),
            "CleanupAll": _unary(worker_pb2.CleanupAllRequest, self.cleanup_all),
            "Shutdown": _unary(worker_pb2.ShutdownRequest, self.shutdown),
        }
        return grpc.method_handlers_generic_handler(WORKER_SERVICE, methods)

    def get_status(self, request, context):
        return self.worker.get_status()

    def register_graph(self, request, context):
        _require(request.HasField("graph_def") and len(request.graph_def.node),
                 "RegisterGraph needs a GraphDef with at least one node")
        return self.worker.register_graph(request)

    def run_graph(self, request, context):
        """A step whose caller went away (its deadline passed while the request waited, a
        cancel, a lost connection) is not started, or is aborted here too if it runs: its
        blocked ops must not take queue elements or tokens for nobody."""
        if not context.is_active():
            raise errors.CancelledError(None, None, "The caller of RunGraph went away")
        finished = threading.Event()

        def on_rpc_end():
            if not finished.is_set():
                self.service.abort_step(worker_pb2.AbortStepRequest(
                    step_id=request.step_id, error_code=errors.CANCELLED,
                    error_message=f"The caller of step {request.step_id} went away"))

        context.add_callback(on_rpc_end)
        try:
            return self.service.run_graph(request)
        finally:
            finished.set()

    def cleanup_graph(self, request, context):
        self.worker.cleanup_graph(request.step_id)
        return worker_pb2.CleanupGraphResponse()

    def abort_step(self, request, context):
        return self.service.abort_step(request)

    def recv_tensor(self, request, context):
        """Waits for the tensor until it is sent, the call's timeout, or the caller going
        away (its deadline, a cancel, a lost connection): what a call held is freed then."""
        if not self._recv_slots.acquire(blocking=False):
            raise errors.ResourceExhaustedError(None, None, f"{MAX_WAITING_RECVS} RecvTensor "
                                                "calls already wait on this task; retry later")
        try:
            finished = threading.Event()
            outcome = []

            def done(response, error):
                outcome.append((response, error))
                finished.set()

            self.service.recv_tensor_async(request, done)
            context.add_callback(finished.set)
            timeout = request.timeout_ms / 1e3 if request.timeout_ms else None
            if not finished.wait(timeout):
                raise errors.DeadlineExceededError(None, None, "RecvTensor timed out")
            if not outcome:
                raise errors.CancelledError(None, None, "The caller of RecvTensor went away")
            response, error = outcome[0]
            if error is not None:
                raise error
            return response
        finally:
            self._recv_slots.release()

    def fetch_bulk(self, raw, context):
        try:
            request = _parse(worker_pb2.FetchBulkRequest, raw)
            payload = self.store.take(request.ticket)
            if payload is None:
                raise errors.AbortedError(None, None, f"No payload {request.ticket} is held "
                                          "here (taken already or expired)")
        except Exception as exc:  # noqa: BLE001
            error = status_lib.error_for_exception(exc)
            context.abort(status_lib.status_code(error), error.message)
        if hasattr(payload, "encode_all"):  # held to be encoded as the TCP plane sends it
            payload = payload.encode_all()
        for offset in range(0, len(payload), clients.CHUNK_BYTES):
            yield clients.chunk_bytes(payload[offset:offset + clients.CHUNK_BYTES])

    def push_bulk(self, chunks, context):
        try:
            buffer = None
            offset = 0
            for index, raw in enumerate(chunks):
                if index == 0:
                    total = _parse(tensor_wire_pb2.BulkChunk, raw).total
                    _require(total > 0, "PushBulk's first chunk must give the total size")
                    self.store.check_room(total, _client_address(context))
                    buffer = data_plane.READER.buffers.acquire(total)
                    continue
                data = clients.chunk_data(raw)
                _require(offset + len(data) <= total, "PushBulk sent more bytes than announced")
                buffer[offset:offset + len(data)] = np.frombuffer(data, np.uint8)
                offset += len(data)
            _require(buffer is not None and offset == len(buffer),
                     "PushBulk ended before its announced size")
            ticket = self.store.put(memoryview(buffer), _client_address(context))
            return worker_pb2.PushBulkResponse(ref=tensor_wire_pb2.BulkRef(
                holder=self.store.holder_address, ticket=ticket, nbytes=offset, plane="local"))
        except Exception as exc:  # noqa: BLE001
            error = status_lib.error_for_exception(exc)
        context.abort(status_lib.status_code(error), error.message)

    def cleanup_all(self, request, context):
        self.worker.cleanup_all(request.container)
        return worker_pb2.CleanupAllResponse()

    def shutdown(self, request, context):
        self.on_shutdown(request.reason)
        return worker_pb2.ShutdownResponse()


class MasterServicer:
    def __init__(self, master, store):
        self.master = master
        self.store = store

    def handler(self):
        methods = {
            "CreateSession": _unary(master_pb2.CreateSessionRequest,
                                    lambda r, c: self.master.create_session(
                                        r, _client_address(c))),
            "ExtendSession": _unary(master_pb2.ExtendSessionRequest,
                                    lambda r, c: self.master.extend_session(r)),
            "RunStep": _unary(master_pb2.RunStepRequest, self.run_step),
            "CloseSession": _unary(master_pb2.CloseSessionRequest,
                                   lambda r, c: self.master.close_session(r)),
            "ListDevices": _unary(master_pb2.ListDevicesRequest,
                                  lambda r, c: self.master.list_devices(r)),
            "Reset": _unary(master_pb2.ResetRequest, lambda r, c: self.master.reset(r)),
        }
        return grpc.method_handlers_generic_handler(MASTER_SERVICE, methods)

    def run_step(self, request, context):
        _require(request.session_handle, "RunStep needs a session_handle")
        feeds = {item.name: data_plane.READER.unpack(item.tensor, self.store)[0]
                 for item in request.feed}
        del request.feed[:]
        token = CancellationToken()
        finished = threading.Event()

        def on_rpc_end():
            if not finished.is_set():  # the client went away or cancelled
                token.cancel(errors.CancelledError(None, None, "The client cancelled the step"))

        context.add_callback(on_rpc_end)
        try:
            response, fetched = self.master.run_step(request, feeds, token)
        finally:
            finished.set()
        for name in request.fetch:
            response.tensor.add(name=name, tensor=self.store.pack(fetched[name], wire.RAW,
                                                                  request.reader))
        return response


def _client_address(context):
    """The caller's host from gRPC's peer string ("ipv4:127.0.0.1:5301", "ipv6:[::1]:5301")."""
    peer = context.peer() or ""
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        return rest.rsplit(":", 1)[0].strip("[]")
    return peer
