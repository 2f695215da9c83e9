"""TF 1.x's switches to TF 2 behaviour (tf.enable_*), answered for a graph-mode-only runtime.

- enable_control_flow_v2: tf.cond and tf.while_loop already are the functional If/While ops
  of control flow v2 here: nothing to switch (tf.control_flow_v2_enabled() is True).
- enable_eager_execution, enable_v2_behavior, enable_tensor_equality, enable_v2_tensorshape,
  enable_resource_variables: each would change what existing code computes (eager
  evaluation, elementwise `==` on tensors, ints from TensorShape indexing, resource-variable
  read semantics), which tensorweave does not implement; they raise NotImplementedError
  saying so, rather than leave a program believing it runs with TF 2 semantics.
"""


def _refuse(name, what):
    raise NotImplementedError(f"tf.{name}: tensorweave runs TF 1.x graph mode only and cannot "
                              f"switch to {what}; remove the call to run the program in graph "
                              "mode")


def enable_control_flow_v2():
    """Already on: cond and while_loop are functional ops."""


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    _refuse("enable_eager_execution", "eager execution")


def enable_v2_behavior():
    _refuse("enable_v2_behavior", "TF 2 behaviour (eager execution, resource variables, "
            "v2 tensor shapes)")


def enable_tensor_equality():
    _refuse("enable_tensor_equality", "elementwise Tensor == (tensors compare by identity "
            "and are hashable, as in TF 1.x)")


def enable_v2_tensorshape():
    _refuse("enable_v2_tensorshape", "v2 TensorShape (indexing gives Dimension objects, as "
            "in TF 1.x)")


def enable_resource_variables():
    _refuse("enable_resource_variables", "resource variables (variables keep TF 1.x's "
            "reference semantics)")
