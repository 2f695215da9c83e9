"""The call ops of tf.function (framework/function_trace.py): PartitionedCall runs the body
in its "f" attr on its inputs (the arguments, then the captured tensors);
StatefulPartitionedCall is the same for a body with stateful ops (never pruned or merged).

Gradient: a call of the body's gradient function (functional_ops.gradient_function), which
takes the call's inputs and its outputs' gradients and gives the gradient of every float
input, captured tensors included, so gradients flow through to variables read in the body.
"""
from tensorweave.framework.constant_op import convert_to_tensor
from tensorweave.framework.op_def import register_op
from tensorweave.ops import functional_ops as functional
from tensorweave.ops.gradients import register_gradient

for _op_type in ("PartitionedCall", "StatefulPartitionedCall"):
    register_op(_op_type, inputs=["args: Tin"], outputs=["output: Tout"],
                attrs={"Tin": "list(type)", "Tout": "list(type)", "f": "func",
                       "output_shapes": ("list(shape)", [])},
                shape_fn=lambda op: list(op.get_attr("output_shapes")),
                stateful=_op_type.startswith("Stateful"),
                doc="Runs the function body f on the inputs (a tf.function call).")


def call_gradient(op, *grads):
    """The gradient of a functional op whose inputs are exactly its body's inputs."""
    body = op.get_attr("f")
    inputs = list(op.inputs)
    needed = getattr(op, "_needed_input_indices", None)  # set by the gradients walk
    wrt = [i for i, t in enumerate(inputs) if (t.dtype.is_floating or t.dtype.is_complex) and
           (needed is None or i in needed)]
    grad_of = [k for k, t in enumerate(op.outputs)
               if (t.dtype.is_floating or t.dtype.is_complex) and grads[k] is not None]
    if not wrt or not grad_of:
        return [None] * len(inputs)
    grad_body = functional.gradient_function(body, wrt, grad_of, f"{body.name}_grad",
                                             f"the tf.function call {op.name}")
    grad_inputs = inputs + [convert_to_tensor(grads[k]) for k in grad_of] + \
        list(grad_body.captured_outer)
    graph = op.graph
    with graph.colocate_with(op):
        grad_op = graph.create_op(
            "StatefulPartitionedCall", [grad_inputs],
            {"Tout": [inputs[i].dtype for i in wrt], "f": grad_body,
             "output_shapes": [inputs[i].shape for i in wrt]}, name=f"{op.name}_grad")
    result = [None] * len(inputs)
    for position, index in enumerate(wrt):
        result[index] = grad_op.outputs[position]
    return result


register_gradient("PartitionedCall")(call_gradient)
register_gradient("StatefulPartitionedCall")(call_gradient)
