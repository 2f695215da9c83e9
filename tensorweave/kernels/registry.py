"""The kernel table: op type -> a NumPy function computing it.

A kernel is `compute(*inputs, **attrs) -> array | tuple of arrays`, receiving only the attrs its
signature names. Stateful kernels receive their resource first: `compute(resource, *inputs, ...)`.
`resource` says which resource the runtime binds (see runtime/resources.py):
  "variable"      the variable cell this VariableV2 op owns;
  "variable_ref"  the variable cells behind the first `num_refs` inputs (ref inputs, e.g.
                  Assign's `ref`, ApplyAdam's var, m and v), passed as that many leading
                  arguments in place of those inputs;
  "rng"           a NumPy Generator owned by the op, seeded from its seed/seed2 attrs;
  "resource"      the stateful object this op owns (a queue, an accumulator, an iterator),
                  made once by `resource_factory(attrs)` and kept under (container,
                  shared_name or op name), so every session on the same resource manager
                  shares it;
  "resource_ref"  the resources owned by the ops that produced the first `num_refs` inputs
                  (handle inputs; one by default), in place of those inputs: a reader's read
                  gets its reader and the queue of file names it takes work from.
`forwards_input` marks kernels whose output may be a view of input 0 (Identity, Reshape): the
session copies a fetched value that may alias a variable's buffer. Kernels never write into
their inputs; kernels of the "variable_ref" kind update their variable in place.

Kernels that talk to the rest of the step (Send/Recv, queues, accumulators) ask for the step
context with `step_context=True` and receive it as their very first argument, before any
resource: `compute(step, resource, *inputs, ...)`. The context is built by the executor for
each step and partition; kernels rely only on this interface:
  step.step_id        the id shared by every partition of the step;
  step.device         the full name of the device running the op;
  step.rendezvous     `send(key, value)`, `recv_async(key, callback(value, error))`;
  step.make_key(src_device, dst_device, tensor_name)  the rendezvous key within this step;
  step.cancellation   the step's token: `cancelled`, `error`, `add_callback(fn(error)) -> id`,
                      `remove_callback(id)`, `raise_if_cancelled()`;
  step.run_function(func, inputs)  runs a function body (a "func" attr: If, While) on this
                      device within this step, returns its outputs (runtime/functions.py);
  step.function(func)  the same as a callable `run(inputs)`, looked up once (a loop's body);
  step.outliving()     a context with the same device and resource manager that stays valid
                      after the step, for functions a resource runs later (an iterator's).
`execution` says how the executor runs a kernel:
  "sync"      it computes and returns (the default);
  "blocking"  it may wait (a dequeue on an empty queue, take_grad before N gradients); it runs
              outside its device's compute lanes, so waiting never stalls other ops, and must
              return or raise promptly once `step.cancellation` is cancelled;
  "async"     `compute(step, *inputs, done=callback, ...)` returns at once and later calls
              `done(outputs)` or `done(None, error)`, from any thread (Recv); a traced
              step shows `done(outputs, label=text)`'s text in the op's step stats.
"""
import inspect
from dataclasses import dataclass

RESOURCE_KINDS = (None, "variable", "variable_ref", "rng", "resource", "resource_ref")
EXECUTION_KINDS = ("sync", "blocking", "async")


@dataclass(frozen=True)
class Kernel:
    op_type: str
    compute: object
    attr_names: tuple
    resource: str = None
    forwards_input: bool = False
    num_refs: int = 0
    resource_factory: object = None
    step_context: bool = False
    execution: str = "sync"


_KERNELS = {}
_PLAN_KERNELS = {}  # kernels that only the plan-time rewrite binds (runtime/fusion.py)


def register_kernel(op_type, resource=None, forwards_input=False, num_refs=None,
                    resource_factory=None, step_context=False, execution="sync",
                    plan_only=False):
    """Decorator: registers `compute` as the kernel of `op_type`. A `plan_only` kernel runs a
    chain of ops fused when a step is planned (kernels/fused.py): no graph op has its type, so
    it is not among the op kernels (`get_plan_kernel` finds it)."""
    if resource not in RESOURCE_KINDS:
        raise ValueError(f"Unknown resource kind {resource!r} for kernel {op_type!r}")
    if (resource == "resource") != (resource_factory is not None):
        raise ValueError(f"Kernel {op_type!r}: a resource_factory goes with resource='resource'")
    if execution not in EXECUTION_KINDS:
        raise ValueError(f"Kernel {op_type!r}: unknown execution {execution!r}; expected one "
                         f"of {EXECUTION_KINDS}")
    if execution != "sync" and not step_context:
        raise ValueError(f"Kernel {op_type!r}: {execution} kernels need step_context=True (they "
                         "must see the step's cancellation)")

    def decorate(compute):
        if op_type in _KERNELS or op_type in _PLAN_KERNELS:
            raise ValueError(f"Kernel for {op_type!r} is registered twice")
        params = inspect.signature(compute).parameters.values()
        attr_names = tuple(p.name for p in params
                           if p.kind == p.KEYWORD_ONLY and not (execution == "async" and
                                                                p.name == "done"))
        refs = num_refs if num_refs is not None else (
            1 if resource in ("variable_ref", "resource_ref") else 0)
        (_PLAN_KERNELS if plan_only else _KERNELS)[op_type] = Kernel(op_type, compute, attr_names, resource, forwards_input, refs,
                                   resource_factory, step_context, execution)
        return compute

    return decorate


def get_kernel(op_type):
    return _KERNELS.get(op_type)


def get_plan_kernel(op_type):
    return _PLAN_KERNELS.get(op_type)


def registered_kernel_types():
    return sorted(_KERNELS)
