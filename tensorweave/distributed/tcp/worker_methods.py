"""The worker service's step-time methods on the TCP transport: server registration, and
the client half for one peer."""
from google.protobuf import message as protobuf_message

from tensorweave.framework import errors
from tensorweave.distributed.protos import worker_pb2

RUN_GRAPH, RECV_TENSOR, ABORT_STEP, RECV_TENSORS = 2, 3, 4, 5
_METHODS = {RUN_GRAPH: ("run_graph", worker_pb2.RunGraphRequest),
            RECV_TENSOR: ("recv_tensor", worker_pb2.RecvTensorRequest),
            ABORT_STEP: ("abort_step", worker_pb2.AbortStepRequest)}


def register(server, service):
    """Serves `service` (a worker_service.WorkerService) on `server` (a TcpServer)."""
    for method, (name, request_cls) in _METHODS.items():
        server.register(method, _handler(getattr(service, name), request_cls),
                        _abort_run_graph(service) if method == RUN_GRAPH else None)
    server.register_streaming(RECV_TENSORS, _recv_tensors_handler(service))


def _recv_tensors_handler(service):
    def handle(body, reply, expect):
        try:
            batch = worker_pb2.RecvTensorsRequest.FromString(body)
        except protobuf_message.DecodeError as exc:
            raise errors.InvalidArgumentError(None, None, f"Malformed RecvTensorsRequest: "
                                              f"{exc}") from None
        expect(len(batch.request))
        for index, request in enumerate(batch.request):
            def done(response, error, index=index):
                if error is not None:
                    reply(index, error.error_code, error.message.encode())
                else:
                    reply(index, 0, response.SerializeToString())
            try:
                service.recv_tensor_async(request, done)
            except errors.OpError as exc:
                done(None, exc)
    return handle


def _abort_run_graph(service):
    """A RunGraph whose caller hung up (gave up on the step) is aborted here too: its
    blocked ops (a dequeue, an accumulator take) must not take what others wait for."""
    def on_hangup(body):
        step_id = worker_pb2.RunGraphRequest.FromString(body).step_id
        service.abort_step(worker_pb2.AbortStepRequest(
            step_id=step_id, error_code=errors.CANCELLED,
            error_message=f"The caller of step {step_id} hung up"))
    return on_hangup


def _handler(fn, request_cls):
    def handle(body):
        try:
            request = request_cls.FromString(body)
        except protobuf_message.DecodeError as exc:
            raise errors.InvalidArgumentError(None, None, f"Malformed {request_cls.__name__}: "
                                              f"{exc}") from None
        return fn(request).SerializeToString()
    return handle


class TcpWorkerCalls:
    """The step-time calls to one peer's TCP endpoint."""

    def __init__(self, client, host, port, peer):
        self.client = client
        self.endpoint = (host, port)
        self.peer = peer

    def run_graph_async(self, request, timeout, finish, needs_pool, pool):
        return self.client.call_async(self.endpoint, RUN_GRAPH, request.SerializeToString(),
                                      timeout, worker_pb2.RunGraphResponse.FromString, finish,
                                      self.peer, needs_pool, pool)

    def recv_tensors_async(self, requests, timeout, finish, needs_pool, pool):
        batch = worker_pb2.RecvTensorsRequest(request=requests)
        return self.client.call_parts_async(self.endpoint, RECV_TENSORS,
                                            batch.SerializeToString(), len(requests), timeout,
                                            worker_pb2.RecvTensorResponse.FromString, finish,
                                            self.peer, needs_pool, pool)

    def recv_tensor_async(self, request, timeout, finish, needs_pool, pool):
        return self.client.call_async(self.endpoint, RECV_TENSOR, request.SerializeToString(),
                                      timeout, worker_pb2.RecvTensorResponse.FromString,
                                      finish, self.peer, needs_pool, pool)
