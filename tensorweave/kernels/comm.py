"""Kernels of _Send and _Recv: they only talk to the step's rendezvous (see registry.py for
the step context). A _Recv is asynchronous: it never holds a thread while its tensor is on the
way, and an aborted rendezvous (a failure or cancellation elsewhere in the step) completes it
with that error."""
from tensorweave.kernels.registry import register_kernel


@register_kernel("_Send", step_context=True)
def send(step, tensor, *, T, tensor_name, send_device, send_device_incarnation, recv_device,
         client_terminated):
    step.rendezvous.send(step.make_key(send_device, recv_device, tensor_name), tensor)
    return ()


@register_kernel("_Recv", step_context=True, execution="async")
def recv(step, *, done, tensor_type, tensor_name, send_device, send_device_incarnation,
         recv_device, client_terminated):
    step.rendezvous.recv_async(step.make_key(send_device, recv_device, tensor_name), done)
