"""`tf.data.Options` and its parts: what a pipeline may be told besides its elements.

An options object holds named, typed settings; an unset one reads as None (a nested group reads
as an empty group, so `options.threading.private_threadpool_size = 2` works). Setting a name the
class does not have raises AttributeError; a value of the wrong type raises TypeError naming it.

`dataset.with_options(options)` attaches options to a dataset; `dataset.options()` is the merge
of the options of its inputs (in order) and then its own, so options travel down a pipeline
through every transformation. Merging keeps what either side set; where both set a value and
they differ, the later one wins and a warning says so (TF 2's rule; TF 1.15 raised instead).

What tensorweave does with them, when an iterator reads the pipeline:
- `deterministic` (alias `experimental_deterministic`) False lets a parallel map hand out
  results as they finish instead of in input order (pool.py); True or unset keeps the order.
  A `deterministic=` argument given to map itself takes precedence, as in TF.
- `threading.private_threadpool_size` (alias `experimental_threading`) > 0 caps how many
  calls of a parallel map run at once (TF gives such a pipeline a private pool of that size).
- The others are performance choices that do not change the elements in TF either
  (optimization rewrites, autotuning, slack, auto-sharding for distribution strategies, the
  external-state policy of checkpointing iterators, threading.max_intra_op_parallelism):
  they are validated, merged and returned by options(), and tensorweave's fixed execution plan
  does not consult them.
"""
import enum
import logging

from tensorweave.data.dataset import Dataset

_logger = logging.getLogger(__name__)


class AutoShardPolicy(enum.IntEnum):
    """How a distribution strategy splits a dataset between workers (TF's values)."""
    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class ExternalStatePolicy(enum.Enum):
    """What saving an iterator does with functions that read external state (TF's values)."""
    WARN = 0
    IGNORE = 1
    FAIL = 2


class AutotuneAlgorithm(enum.Enum):
    """The algorithm TF's autotuner uses (TF's values)."""
    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


class _Field:
    """One option: its accepted type, a factory for the value it reads as when unset, and the
    name it is stored under (an alias stores under its canonical name)."""

    def __init__(self, kind, default=None, alias_of=None):
        self.kind, self.default, self.alias_of = kind, default, alias_of


class OptionsBase:
    """Typed named settings (see the module docstring); subclasses list them in `_FIELDS`."""

    _FIELDS = {}

    def __init__(self):
        object.__setattr__(self, "_values", {})

    def _field(self, name, action="set"):
        field = self._FIELDS.get(name)
        if field is None:
            raise AttributeError(f"Cannot {action} the property {name!r} on "
                                 f"{type(self).__name__}: it has {sorted(self._FIELDS)}")
        if field.alias_of is not None:
            return field.alias_of, self._FIELDS[field.alias_of]
        return name, field

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        key, field = self._field(name, "get")
        values = object.__getattribute__(self, "_values")
        if key not in values and field.default is not None:
            values[key] = field.default()
        return values.get(key)

    def __setattr__(self, name, value):
        key, field = self._field(name)
        if value is not None:
            value = _checked(type(self).__name__, name, field.kind, value)
        self._values[key] = value

    def __eq__(self, other):
        return type(self) is type(other) and self._set_values() == other._set_values()

    def __ne__(self, other):
        return not self == other

    __hash__ = None

    def _set_values(self):
        """The options set to something (an empty nested group counts as unset)."""
        out = {}
        for key, value in self._values.items():
            if isinstance(value, OptionsBase):
                value = value._set_values() or None
            if value is not None:
                out[key] = value
        return out

    def merge(self, options):
        """A new object: this one's settings updated with those `options` sets."""
        return merge_options(self, options)

    def __repr__(self):
        return f"{type(self).__name__}({self._set_values()})"


def _checked(owner, name, kind, value):
    if isinstance(kind, type) and issubclass(kind, enum.Enum) and not isinstance(value, kind):
        try:
            return kind(value)
        except ValueError:
            raise TypeError(f"{owner}.{name} must be a {kind.__name__}, got {value!r}") from None
    if kind is bool and not isinstance(value, bool):
        raise TypeError(f"{owner}.{name} must be a bool, got {value!r}")
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise TypeError(f"{owner}.{name} must be an int, got {value!r}")
    if not isinstance(value, kind):
        raise TypeError(f"{owner}.{name} must be a {getattr(kind, '__name__', kind)}, got "
                        f"{type(value).__name__}")
    return value


def merge_options(*options_list):
    """The merge of several options objects of one type (later ones win; see module doc)."""
    if not options_list:
        raise ValueError("merge_options needs at least one options object")
    kind = type(options_list[0])
    result = kind()
    for options in options_list:
        if type(options) is not kind:
            raise TypeError(f"merge(): cannot merge {type(options).__name__} into "
                            f"{kind.__name__}")
        for key, that in options._values.items():
            if that is None:
                continue
            this = result._values.get(key)
            if this is None:
                result._values[key] = merge_options(that) if isinstance(
                    that, OptionsBase) else that
            elif isinstance(this, OptionsBase):
                result._values[key] = merge_options(this, that)
            elif this != that:
                _logger.warning("Changing the value of option %s from %r to %r", key, this,
                                that)
                result._values[key] = that
    return result


class ThreadingOptions(OptionsBase):
    """The threads a pipeline uses (see the module docstring for what is honoured)."""
    _FIELDS = {"max_intra_op_parallelism": _Field(int), "private_threadpool_size": _Field(int)}


class MapVectorizationOptions(OptionsBase):
    """TF 1.15's map vectorization switch (a performance choice)."""
    _FIELDS = {"enabled": _Field(bool), "use_choose_fastest": _Field(bool)}


class OptimizationOptions(OptionsBase):
    """Static rewrites and autotuning of TF's pipeline optimizer (performance choices)."""
    _FIELDS = dict(
        {name: _Field(bool) for name in (
            "apply_default_optimizations", "autotune", "autotune_buffers", "filter_fusion",
            "filter_parallelization", "filter_with_random_uniform_fusion",
            "hoist_random_uniform", "inject_prefetch", "map_and_batch_fusion",
            "map_and_filter_fusion", "map_fusion", "map_parallelization", "noop_elimination",
            "parallel_batch", "reorder_data_discarding_ops", "seq_interleave_prefetch",
            "shuffle_and_repeat_fusion", "warm_start")},
        autotune_cpu_budget=_Field(int), autotune_ram_budget=_Field(int),
        map_vectorization=_Field(MapVectorizationOptions, MapVectorizationOptions))


class DistributeOptions(OptionsBase):
    """How a distribution strategy shards the dataset (read by strategies, not iterators)."""
    _FIELDS = {"auto_shard_policy": _Field(AutoShardPolicy), "num_devices": _Field(int)}


class AutotuneOptions(OptionsBase):
    """TF's autotuner settings (a performance choice)."""
    _FIELDS = {"enabled": _Field(bool), "cpu_budget": _Field(int), "ram_budget": _Field(int),
               "autotune_algorithm": _Field(AutotuneAlgorithm)}


class Options(OptionsBase):
    """Options of a whole pipeline: `dataset.with_options(options)`."""
    _FIELDS = {
        "autotune": _Field(AutotuneOptions, AutotuneOptions),
        "deterministic": _Field(bool),
        "experimental_deterministic": _Field(bool, alias_of="deterministic"),
        "experimental_distribute": _Field(DistributeOptions, DistributeOptions),
        "experimental_external_state_policy": _Field(ExternalStatePolicy),
        "experimental_optimization": _Field(OptimizationOptions, OptimizationOptions),
        "experimental_slack": _Field(bool),
        "experimental_symbolic_checkpoint": _Field(bool),
        "experimental_warm_start": _Field(bool),
        "threading": _Field(ThreadingOptions, ThreadingOptions),
        "experimental_threading": _Field(ThreadingOptions, alias_of="threading"),
        "dataset_name": _Field(str),
    }


def pipeline_options(dataset):
    """The options in effect for `dataset`: its inputs' options merged in order, then its own
    (with_options)."""
    merged, stack, seen = [], [dataset], set()
    order = []
    while stack:  # inputs before the datasets built on them
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        order.append(current)
        stack.extend(current._inputs)
    for current in reversed(order):
        own = getattr(current, "_attached_options", None)
        if own is not None:
            merged.append(own)
    return merge_options(Options(), *merged)


_DEBUG_MODE = {"enabled": False}


def enable_debug_mode():
    """tf.data.experimental.enable_debug_mode(): from now on, in this process, every
    transformation that would run in parallel or ahead of its consumer (map with
    num_parallel_calls, prefetch) runs sequentially, in order, on the caller's thread, so a
    pipeline's user functions run one element at a time, deterministically (TF's first
    effect; its second, running the functions' Python bodies eagerly, has no counterpart in
    graph mode). It cannot be turned off again, as in TF."""
    _DEBUG_MODE["enabled"] = True


def debug_mode():
    return _DEBUG_MODE["enabled"]


def parallelism(options, requested):
    """How many calls a parallel transformation may run at once under `options` (1 in debug
    mode)."""
    if _DEBUG_MODE["enabled"]:
        return 1
    size = options.threading.private_threadpool_size if options is not None else 0
    return min(requested, size) if size else requested


class OptionsDataset(Dataset):
    """Built by Dataset.with_options: the input's elements, with options attached."""

    def __init__(self, input_dataset, options):
        if not isinstance(options, Options):
            raise TypeError(f"with_options(): options must be a tf.data.Options, got "
                            f"{type(options).__name__}")
        super().__init__([input_dataset], input_dataset.element_spec)
        self._attached_options = merge_options(options)

    def _cardinality(self, ctx):
        return self._inputs[0]._cardinality(ctx)

    def _elements(self, ctx):
        return self._inputs[0]._elements(ctx)

    def _index_plan(self, ctx):
        return self._inputs[0]._index_plan(ctx)

    def _batches(self, ctx, batch_size, drop_remainder):
        return self._inputs[0]._batches(ctx, batch_size, drop_remainder)
