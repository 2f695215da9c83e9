"""Iterator ops: the graph face of tf.data input pipelines.

A dataset is a Python object of the data layer (L4) that yields NumPy elements; these ops only
name it. An iterator op owns an iterator resource and outputs its *handle*: a scalar string
that names the resource in this process. The ops that use an iterator (MakeIterator,
IteratorGetNext, IteratorToStringHandle) take that handle as an ordinary input and resolve it
at run time, so a handle fed through a placeholder (`Iterator.from_string_handle`) picks the
iterator per step. A dataset is named by the `dataset` attr: a key in the process-wide registry
of kernels/dataset.py, which is why a GraphDef holding these ops runs only in the process that
built its datasets.

No gradient flows through any of them.
"""
from tensorweave.framework import dtypes
from tensorweave.framework import tensor_shape
from tensorweave.framework.op_def import register_op
from tensorweave.ops.gradients import not_differentiable
from tensorweave.ops.op_util import make_op

_STRUCTURE_ATTRS = {"output_types": ("list(type)", []), "output_shapes": ("list(shape)", [])}
_RESOURCE_ATTRS = {"container": ("string", ""), "shared_name": ("string", "")}


def _declared_shapes(op):
    return [tensor_shape.as_shape(s) for s in op.get_attr("output_shapes")]


def _check_structure_attrs(op):
    types, shapes = op.get_attr("output_types"), op.get_attr("output_shapes")
    if shapes and len(shapes) != len(types):
        raise ValueError(f"output_types has {len(types)} components but output_shapes has "
                         f"{len(shapes)}")


def _handle_shape(op):
    _check_structure_attrs(op)
    return [tensor_shape.TensorShape([])]


def _scalar_handle_input(op):
    if not op.inputs[0].shape.is_compatible_with([]):
        raise ValueError(f"the iterator handle must be a scalar string, got shape "
                         f"{op.inputs[0].shape}")


def _get_next_shape(op):
    _check_structure_attrs(op)
    _scalar_handle_input(op)
    shapes = _declared_shapes(op)
    return shapes or [tensor_shape.unknown_shape()] * len(op.outputs)


def _component_shapes(op):
    _check_structure_attrs(op)
    _scalar_handle_input(op)
    return _declared_shapes(op) or [tensor_shape.unknown_shape()] * len(
        op.get_attr("output_types"))


def _handle_from_handle_shape(op):
    _scalar_handle_input(op)
    return _handle_shape(op)


def _to_string_handle_shape(op):
    _scalar_handle_input(op)
    return [tensor_shape.TensorShape([])]


def _make_iterator_shape(op):
    _scalar_handle_input(op)
    return []


register_op("IteratorV2", outputs=["handle: string"],
            attrs={**_RESOURCE_ATTRS, **_STRUCTURE_ATTRS}, shape_fn=_handle_shape,
            stateful=True,
            doc="Owns an iterator resource (uninitialized until MakeIterator runs); outputs its "
                "handle.")
register_op("OneShotIterator", outputs=["handle: string"],
            attrs={"dataset": "string", **_RESOURCE_ATTRS, **_STRUCTURE_ATTRS},
            shape_fn=_handle_shape, stateful=True,
            doc="Owns an iterator over the registered dataset `dataset`, initialized on first use "
                "and never again; outputs its handle.")
register_op("MakeIterator", inputs=["iterator: string", "arguments: Targuments"],
            attrs={"dataset": "string", "Targuments": ("list(type)", [])},
            shape_fn=_make_iterator_shape, stateful=True,
            doc="(Re)starts the iterator named by `iterator` on the registered dataset "
                "`dataset`, binding the dataset's captured tensors to `arguments`.")
register_op("IteratorGetNext", inputs=["iterator: string"], outputs=["components: output_types"],
            attrs=_STRUCTURE_ATTRS, shape_fn=_get_next_shape, stateful=True,
            doc="The next element of the iterator; OutOfRangeError at the end of its data.")
register_op("IteratorGetNextOrEmpty", inputs=["iterator: string"],
            outputs=["has_value: bool", "components: output_types"], attrs=_STRUCTURE_ATTRS,
            shape_fn=lambda op: [tensor_shape.TensorShape([])] + _component_shapes(op),
            stateful=True,
            doc="get_next_as_optional without a variant dtype: whether the iterator had a next "
                "element, and its components (zeros, unknown dimensions 0, at the end).")
register_op("IteratorToStringHandle", inputs=["resource_handle: string"],
            outputs=["string_handle: string"], shape_fn=_to_string_handle_shape, stateful=True,
            doc="The handle as a string that can be fed to IteratorFromStringHandle.")
register_op("IteratorFromStringHandle", inputs=["string_handle: string"],
            outputs=["resource_handle: string"], attrs=_STRUCTURE_ATTRS,
            shape_fn=_handle_from_handle_shape, stateful=True,
            doc="Checks that a string handle names a live iterator whose element types match "
                "`output_types` (when given) and passes it on.")

for _op_type in ("IteratorV2", "OneShotIterator", "MakeIterator", "IteratorGetNext",
                 "IteratorGetNextOrEmpty", "IteratorToStringHandle", "IteratorFromStringHandle"):
    not_differentiable(_op_type)


def _structure_attrs(output_types, output_shapes):
    types = [dtypes.as_dtype(t) for t in output_types]
    shapes = [tensor_shape.as_shape(s) for s in output_shapes]
    return {"output_types": types, "output_shapes": shapes}


def iterator(output_types, output_shapes, shared_name="", container="", name=None):
    """An IteratorV2 op; returns its handle tensor."""
    attrs = {"shared_name": shared_name or "", "container": container or "",
             **_structure_attrs(output_types, output_shapes)}
    return make_op("IteratorV2", [], attrs, name or "Iterator").outputs[0]


def one_shot_iterator(dataset_key, output_types, output_shapes, shared_name="", name=None):
    attrs = {"dataset": dataset_key, "shared_name": shared_name or "", "container": "",
             **_structure_attrs(output_types, output_shapes)}
    return make_op("OneShotIterator", [], attrs, name or "OneShotIterator").outputs[0]


def make_iterator(handle, dataset_key, arguments=(), name=None):
    return make_op("MakeIterator", [handle, list(arguments)], {"dataset": dataset_key},
                   name or "MakeIterator")


def iterator_get_next(handle, output_types, output_shapes, name=None):
    """The list of component tensors of the next element."""
    op = make_op("IteratorGetNext", [handle], _structure_attrs(output_types, output_shapes),
                 name or "IteratorGetNext")
    return op.outputs


def iterator_get_next_or_empty(handle, output_types, output_shapes, name=None):
    """(has_value, list of component tensors): the next element if there is one."""
    op = make_op("IteratorGetNextOrEmpty", [handle],
                 _structure_attrs(output_types, output_shapes), name or "IteratorGetNextOrEmpty")
    return op.outputs[0], op.outputs[1:]


def iterator_to_string_handle(handle, name=None):
    return make_op("IteratorToStringHandle", [handle], {},
                   name or "IteratorToStringHandle").outputs[0]


def iterator_from_string_handle(string_handle, output_types, output_shapes, name=None):
    return make_op("IteratorFromStringHandle", [string_handle],
                   _structure_attrs(output_types, output_shapes),
                   name or "IteratorFromStringHandle").outputs[0]


__all__ = ["iterator", "one_shot_iterator", "make_iterator", "iterator_get_next",
           "iterator_get_next_or_empty",
           "iterator_to_string_handle", "iterator_from_string_handle"]
