"""Kernels of function_call_ops.py: run the body through the step's function runner (as If
and While do, kernels/control_flow.py), a blocking kernel that stops once the step is
cancelled.

CriticalSectionExecute runs its body holding a lock named by its shared_name, one table per
resource manager (the device's, as TF's Mutex resource), polled so cancellation is seen."""
import threading
import weakref

from tensorweave.framework import errors
from tensorweave.kernels.control_flow import _detached, _outputs
from tensorweave.kernels.registry import register_kernel


def _call(step, *inputs, Tin, Tout, f, output_shapes):  # noqa: N803 - the op's attr names
    return _outputs(_detached(step.run_function(f, list(inputs)), inputs))


register_kernel("PartitionedCall", step_context=True, execution="blocking")(_call)
register_kernel("StatefulPartitionedCall", step_context=True, execution="blocking")(_call)


_SECTION_LOCKS = weakref.WeakKeyDictionary()  # resource manager -> {shared_name: Lock}
_TABLE_LOCK = threading.Lock()


def _section_lock(step, shared_name):
    with _TABLE_LOCK:
        locks = _SECTION_LOCKS.setdefault(step.resource_manager, {})
        return locks.setdefault(shared_name, threading.Lock())


@register_kernel("CriticalSectionExecute", step_context=True, execution="blocking")
def critical_section_execute(step, *inputs, Tin, Tout, f, output_shapes, shared_name):  # noqa: N803
    lock = _section_lock(step, shared_name)
    token = step.cancellation
    while not lock.acquire(timeout=0.05):
        if token.cancelled:
            raise errors.CancelledError(None, None, f"waiting for critical section "
                                        f"{shared_name!r} was cancelled: the step was "
                                        "cancelled")
    try:
        return _call(step, *inputs, Tin=Tin, Tout=Tout, f=f, output_shapes=output_shapes)
    finally:
        lock.release()
