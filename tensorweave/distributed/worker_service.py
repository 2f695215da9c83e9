"""The worker service's step-time calls, request proto in, response proto out, for every
transport that carries them (the gRPC services and the TCP fast path both call these).

Tensors in a request are resolved through the data plane (data_plane.READER), tensors in a
response are packed for the caller's ReaderInfo by this server's BulkStore.
"""
from tensorweave.framework import errors
from tensorweave.distributed import data_plane
from tensorweave.distributed import wire
from tensorweave.distributed import worker as worker_lib
from tensorweave.distributed.protos import worker_pb2


def require(condition, message):
    if not condition:
        raise errors.InvalidArgumentError(None, None, message)


class WorkerService:
    def __init__(self, worker, store):
        self.worker = worker
        self.store = store

    def run_graph(self, request):
        require(request.graph_handle, "RunGraph needs a graph_handle")
        require(request.step_id, "RunGraph needs a nonzero step_id")
        feeds = {item.name: data_plane.READER.unpack(item.tensor, self.store)[0]
                 for item in request.send}
        response, fetched = self.worker.run_graph(request, feeds)
        for name in request.recv_key:
            response.recv.add(name=name, tensor=self.store.pack(fetched[name], wire.RAW,
                                                                request.reader))
        return response

    def recv_tensor(self, request):
        require(request.step_id and request.rendezvous_key,
                "RecvTensor needs a step_id and a rendezvous_key")
        timeout = request.timeout_ms / 1e3 if request.timeout_ms else None
        value = self.worker.recv_tensor(request.step_id, request.rendezvous_key, timeout)
        return worker_pb2.RecvTensorResponse(
            tensor=self.store.pack(value, request.wire_encoding, request.reader))

    def recv_tensor_async(self, request, done):
        """Calls `done(response, None)` or `done(None, error)` once the tensor is sent (on
        the sending thread)."""
        require(request.step_id and request.rendezvous_key,
                "RecvTensor needs a step_id and a rendezvous_key")

        def sent(value, error):
            if error is not None:
                done(None, error)
                return
            try:
                tensor = self.store.pack(value, request.wire_encoding, request.reader)
            except errors.OpError as exc:
                done(None, exc)
                return
            done(worker_pb2.RecvTensorResponse(tensor=tensor), None)

        self.worker.recv_tensor_async(request.step_id, request.rendezvous_key, sent)

    def abort_step(self, request):
        self.worker.abort_step(request.step_id, worker_lib.error_from_status(
            request.error_code, request.error_message))
        return worker_pb2.AbortStepResponse()
