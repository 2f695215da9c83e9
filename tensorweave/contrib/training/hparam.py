"""`tf.contrib.training.HParams`: named hyperparameters with fixed types, overridable from a
"name=value,..." string, a dict or JSON (tensor2tensor, magenta and many TF 1.x programs keep
their configuration in one).

Each hyperparameter keeps the type of its first value: int, float, bool, str, or a list of one
of those. Setting or parsing converts compatible values (an int into a float parameter) and
refuses the rest with a ValueError naming the parameter."""
import json
import numbers
import re

_PARAM = re.compile(r"""
    (?P<name>[a-zA-Z][\w.]*)              # the name
    (\[\s*(?P<index>\d+)\s*\])?           # an optional [index] into a list parameter
    \s*=\s*
    ((?P<val>[^,\[]*)                     # a single value
     |\[(?P<vals>[^\]]*)\])               # or a list of values
    ($|,\s*)""", re.VERBOSE)


def _type_name(kind):
    return kind.__name__


def _cast(name, kind, value):
    """value as `kind`, when it converts without losing information."""
    if kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, numbers.Integral) and value in (0, 1):
            return bool(value)
    elif kind is int:
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            return int(value)
        if isinstance(value, numbers.Real) and float(value).is_integer() and \
                not isinstance(value, bool):
            return int(value)
    elif kind is float:
        if isinstance(value, numbers.Real) and not isinstance(value, bool):
            return float(value)
    elif kind is str:
        if isinstance(value, (str, bytes)):
            return value.decode() if isinstance(value, bytes) else value
    else:
        return value
    raise ValueError(f"Could not cast hparam {name!r} of type {_type_name(kind)!r} from value "
                     f"{value!r}")


def _parse_scalar(name, kind, text):
    text = text.strip()
    try:
        if kind is bool:
            lowered = text.lower()
            if lowered in ("true", "1"):
                return True
            if lowered in ("false", "0"):
                return False
            raise ValueError(text)
        if kind is int:
            return int(text)
        if kind is float:
            return float(text)
        return text
    except ValueError:
        raise ValueError(f"Could not parse hparam {name!r} of type {_type_name(kind)!r} with "
                         f"value {text!r}") from None


def parse_values(values, type_map, ignore_unknown=False):
    """{name: value} from a "name=value,name=[v1,v2],name[i]=v" string; `type_map` gives each
    name's type (a list value parses each element as that type)."""
    results = {}
    pos = 0
    values = values.strip()
    while pos < len(values):
        match = _PARAM.match(values, pos)
        if not match:
            raise ValueError(f"Malformed hyperparameter value: {values[pos:]!r}")
        pos = match.end()
        name = match.group("name")
        if name not in type_map:
            if ignore_unknown:
                continue
            raise ValueError(f"Unknown hyperparameter type for {name}")
        kind = type_map[name]
        if match.group("index") is not None:
            if match.group("vals") is not None:
                raise ValueError(f"Cannot assign a list to the element {name}[...]")
            index = int(match.group("index"))
            results.setdefault(name, {})
            if not isinstance(results[name], dict) or index in results[name]:
                raise ValueError(f"Multiple assignments to hyperparameter {name}[{index}]")
            results[name][index] = _parse_scalar(name, kind, match.group("val"))
            continue
        if name in results:
            raise ValueError(f"Multiple assignments to hyperparameter {name!r}")
        if match.group("vals") is not None:
            items = [v for v in match.group("vals").split(",") if v.strip()]
            results[name] = [_parse_scalar(name, kind, v) for v in items]
        else:
            results[name] = _parse_scalar(name, kind, match.group("val"))
    return results


class HParams:
    """Hyperparameters as attributes: `hparams.learning_rate`."""

    _HAS_DYNAMIC_ATTRIBUTES = True  # pytype's marker in TF; harmless here

    def __init__(self, hparam_def=None, model_structure=None, **kwargs):
        self._hparam_types = {}
        self._model_structure = model_structure
        if hparam_def is not None:
            raise ValueError("HParams from an HParamDef proto is not supported: pass the "
                             "values as keyword arguments")
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name, value):
        if getattr(self, name, None) is not None or name in self._hparam_types:
            raise ValueError(f"Hyperparameter name is reserved: {name}")
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError(f"Multi-valued hyperparameters cannot be empty: {name}")
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, list(value) if isinstance(value, tuple) else value)

    def set_hparam(self, name, value):
        if name not in self._hparam_types:
            raise KeyError(f"Unknown hyperparameter {name!r}")
        kind, is_list = self._hparam_types[name]
        if isinstance(value, (list, tuple)):
            if not is_list:
                raise ValueError(f"Must not pass a list for single-valued parameter: {name}")
            setattr(self, name, [_cast(name, kind, v) for v in value])
        else:
            if is_list:
                raise ValueError(f"Must pass a list for multi-valued parameter: {name}.")
            setattr(self, name, value if value is None else _cast(name, kind, value))

    def del_hparam(self, name):
        if name in self._hparam_types:
            delattr(self, name)
            del self._hparam_types[name]

    def parse(self, values):
        """Overrides from a "name=value,..." string; returns self."""
        types = {name: kind for name, (kind, _) in self._hparam_types.items()}
        return self.override_from_dict(parse_values(values, types))

    def override_from_dict(self, values_dict):
        for name, value in values_dict.items():
            if isinstance(value, dict):  # element assignments name[i]=v
                current = list(getattr(self, name))
                for index, element in value.items():
                    if index >= len(current):
                        raise ValueError(f"Index {index} out of range for hyperparameter "
                                         f"{name} of length {len(current)}")
                    current[index] = element
                value = current
            self.set_hparam(name, value)
        return self

    def set_model_structure(self, model_structure):
        self._model_structure = model_structure

    def get_model_structure(self):
        return self._model_structure

    def to_json(self, indent=None, separators=None, sort_keys=False):
        return json.dumps(self.values(), indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def parse_json(self, values_json):
        return self.override_from_dict(json.loads(values_json))

    def values(self):
        return {name: getattr(self, name) for name in self._hparam_types}

    def get(self, key, default=None):
        if key not in self._hparam_types:
            return default
        if default is not None:
            kind, is_list = self._hparam_types[key]
            expected = list if is_list else kind
            if not isinstance(default, expected) and not (
                    expected is float and isinstance(default, int)):
                raise ValueError(f"Hparam {key!r} of type {_type_name(expected)!r} is "
                                 f"incompatible with default={default!r}")
        return getattr(self, key)

    def __contains__(self, key):
        return key in self._hparam_types

    def __str__(self):
        return str(sorted(self.values().items()))

    def __repr__(self):
        return f"{type(self).__name__}({self})"
