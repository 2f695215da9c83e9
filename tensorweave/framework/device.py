"""Device names: `/job:J/replica:R/task:T/device:TYPE:N`, the short forms, and merging.

`DeviceSpec.from_string` accepts the full form and the legacy short forms (`/cpu:0`, `/gpu:1`,
`/task:2`, `/device:CPU:*`); device types are case-insensitive and normalised to upper case.
Merging fills only the fields the receiving spec leaves unset: this is how nested `tf.device`
scopes combine (the inner scope's fields win, the outer ones fill the gaps).
"""


# Device types accepted in the legacy short form ("/cpu:0", "/gpu", "/GPU:1").
_SHORT_DEVICE_TYPES = ("cpu", "gpu", "tpu")


class DeviceSpec:
    __slots__ = ("job", "replica", "task", "device_type", "device_index")

    def __init__(self, job=None, replica=None, task=None, device_type=None, device_index=None):
        self.job = job
        self.replica = None if replica is None else int(replica)
        self.task = None if task is None else int(task)
        self.device_type = None if device_type is None else str(device_type).upper()
        self.device_index = None if device_index in (None, "*") else int(device_index)

    @classmethod
    def from_string(cls, spec):
        return cls().parse_from_string(spec)

    def parse_from_string(self, spec):
        if isinstance(spec, DeviceSpec):
            spec = spec.to_string()
        if not spec:
            return self
        type_seen = False
        for part in spec.split("/"):
            if not part:
                continue
            fields = part.split(":")
            key = fields[0].lower()
            if len(fields) == 2 and key in ("job", "replica", "task"):
                value = fields[1]
                if key == "job":
                    self.job = value
                elif key == "replica":
                    self.replica = _parse_index(value, spec)
                else:
                    self.task = _parse_index(value, spec)
                continue
            if key == "device" and len(fields) in (2, 3):
                device_type, index = fields[1], fields[2] if len(fields) == 3 else "*"
            elif key in _SHORT_DEVICE_TYPES and len(fields) in (1, 2):
                device_type, index = key, fields[1] if len(fields) == 2 else "*"
            else:
                raise ValueError(f"Unknown part {part!r} in device specification {spec!r}; expected "
                                 "/job:NAME/replica:R/task:T/device:TYPE:INDEX")
            if type_seen:
                # "/cpu:0/gpu:1" names two devices; silently keeping one would misplace ops.
                raise ValueError(f"Device specification {spec!r} names more than one device type")
            type_seen = True
            self.device_type = device_type.upper()
            self.device_index = None if index == "*" else _parse_index(index, spec)
        return self

    def merge_from(self, other):
        """Sets, from `other`, every field that `other` specifies (other wins)."""
        other = other if isinstance(other, DeviceSpec) else DeviceSpec.from_string(other)
        for field in self.__slots__:
            value = getattr(other, field)
            if value is not None:
                setattr(self, field, value)
        return self

    def make_merged_spec(self, other):
        return self.copy().merge_from(other)

    def fill_unset_from(self, other):
        """Sets only the fields this spec leaves unset (this spec wins)."""
        other = other if isinstance(other, DeviceSpec) else DeviceSpec.from_string(other)
        for field in self.__slots__:
            if getattr(self, field) is None:
                setattr(self, field, getattr(other, field))
        return self

    def copy(self):
        return DeviceSpec(self.job, self.replica, self.task, self.device_type, self.device_index)

    def replace(self, **kwargs):
        spec = self.copy()
        for key, value in kwargs.items():
            setattr(spec, key, value)
        return spec

    def is_compatible_with(self, other):
        """True when no field is set differently in the two specs."""
        other = other if isinstance(other, DeviceSpec) else DeviceSpec.from_string(other)
        return all(getattr(self, f) is None or getattr(other, f) is None or
                   getattr(self, f) == getattr(other, f) for f in self.__slots__)

    def to_string(self):
        parts = []
        if self.job is not None:
            parts.append(f"/job:{self.job}")
        if self.replica is not None:
            parts.append(f"/replica:{self.replica}")
        if self.task is not None:
            parts.append(f"/task:{self.task}")
        if self.device_type is not None:
            index = "*" if self.device_index is None else self.device_index
            parts.append(f"/device:{self.device_type}:{index}")
        return "".join(parts)

    def __eq__(self, other):
        return isinstance(other, DeviceSpec) and self.to_string() == other.to_string()

    def __hash__(self):
        return hash(self.to_string())

    def __repr__(self):
        return f"DeviceSpec({self.to_string()!r})"

    __str__ = to_string


def _parse_index(value, spec):
    try:
        index = int(value)
    except ValueError:
        raise ValueError(f"Device specification {spec!r}: {value!r} is not an integer") from None
    if index < 0:
        raise ValueError(f"Device specification {spec!r}: index {index} must be >= 0")
    return index


def canonical_name(spec):
    """The normalised string form of a device string or spec ('' stays '')."""
    if spec is None or spec == "":
        return ""
    return DeviceSpec.from_string(spec).to_string()


def merge_device(outer, inner):
    """The device string of `inner` with the fields it leaves unset filled from `outer`."""
    if not outer:
        return canonical_name(inner)
    if not inner:
        return canonical_name(outer)
    return DeviceSpec.from_string(inner).fill_unset_from(DeviceSpec.from_string(outer)).to_string()
