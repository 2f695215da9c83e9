"""The op-definition table: every op type's signature, attrs, shape function and statefulness.

An op family registers its ops in its own `ops/` module with `register_op`. A signature is written
the way one reads it: inputs and outputs are "name: T" (type given by attr T), "name: float32"
(a fixed type), "name: N * T" (a list of N tensors of type T) or "name: Tlist" (a list whose types
are the list(type) attr Tlist). Attr specs are "type", "int", "float", "bool", "string", "shape",
"tensor", "list(int)", "list(type)", ... optionally with a default: ("bool", False).
"""
from dataclasses import dataclass, field

from tensorweave.framework import dtypes

ATTR_KINDS = ("type", "int", "float", "bool", "string", "shape", "tensor", "list(int)",
              "list(float)", "list(type)", "list(string)", "list(shape)", "list(bool)", "func")
_NO_DEFAULT = object()


@dataclass(frozen=True)
class ArgDef:
    name: str
    type_attr: str = None     # the attr that holds this arg's dtype
    fixed_dtype: object = None
    number_attr: str = None   # homogeneous list: N * T
    type_list_attr: str = None  # heterogeneous list

    @property
    def is_list(self):
        return self.number_attr is not None or self.type_list_attr is not None


@dataclass(frozen=True)
class AttrDef:
    name: str
    kind: str
    default: object = _NO_DEFAULT

    @property
    def has_default(self):
        return self.default is not _NO_DEFAULT


@dataclass
class OpDef:
    name: str
    inputs: list
    outputs: list
    attrs: dict
    shape_fn: object
    is_stateful: bool = False
    doc: str = ""
    allowed_types: dict = field(default_factory=dict)  # type attr -> tuple of DTypes


_OP_DEFS = {}


def _parse_arg(spec, attrs):
    name, _, type_spec = (part.strip() for part in spec.partition(":"))
    if not name or not type_spec:
        raise ValueError(f"Bad arg spec {spec!r}; expected 'name: TYPE'")
    if "*" in type_spec:
        number_attr, _, type_part = (p.strip() for p in type_spec.partition("*"))
        if type_part in attrs:
            return ArgDef(name, type_attr=type_part, number_attr=number_attr)
        return ArgDef(name, fixed_dtype=dtypes.as_dtype(type_part), number_attr=number_attr)
    if type_spec in attrs:
        if attrs[type_spec].kind == "list(type)":
            return ArgDef(name, type_list_attr=type_spec)
        return ArgDef(name, type_attr=type_spec)
    return ArgDef(name, fixed_dtype=dtypes.as_dtype(type_spec))


def register_op(name, inputs=(), outputs=(), attrs=None, shape_fn=None, stateful=False,
                allowed_types=None, doc=""):
    """Registers op type `name`; returns its OpDef. Registering a name twice is an error."""
    if name in _OP_DEFS:
        raise ValueError(f"Op type {name!r} is registered twice")
    if shape_fn is None:
        raise ValueError(f"Op type {name!r} needs a shape function")
    attr_defs = {}
    for attr_name, spec in (attrs or {}).items():
        kind, default = (spec if isinstance(spec, tuple) else (spec, _NO_DEFAULT))
        if kind not in ATTR_KINDS:
            raise ValueError(f"Op {name!r}: attr {attr_name!r} has unknown kind {kind!r}")
        attr_defs[attr_name] = AttrDef(attr_name, kind, default)
    # Attrs only named by the signature ("N" of "N * T") are implicit ints / types.
    op_def = OpDef(name=name,
                   inputs=[_parse_arg(s, attr_defs) for s in inputs],
                   outputs=[_parse_arg(s, attr_defs) for s in outputs],
                   attrs=attr_defs, shape_fn=shape_fn, is_stateful=stateful,
                   allowed_types={k: tuple(dtypes.as_dtype(t) for t in v)
                                  for k, v in (allowed_types or {}).items()},
                   doc=doc)
    for arg in op_def.inputs + op_def.outputs:
        for attr in (arg.type_attr, arg.number_attr, arg.type_list_attr):
            if attr is not None and attr not in attr_defs:
                raise ValueError(f"Op {name!r}: arg {arg.name!r} names undeclared attr {attr!r}")
    _OP_DEFS[name] = op_def
    return op_def


def get_op_def(name):
    try:
        return _OP_DEFS[name]
    except KeyError:
        raise KeyError(f"Op type {name!r} is not registered") from None


def registered_op_types():
    return sorted(_OP_DEFS)
