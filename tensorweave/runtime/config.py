"""`tf.ConfigProto`, `tf.RunOptions`, `tf.RunMetadata` and friends, as plain Python objects.

They accept the fields TF 1.x scripts set (unknown fields fail, naming the field), so scripts run
unchanged; fields that only matter for later layers (device filters, timeouts) are stored here.
"""


class _Options:
    _FIELDS = {}

    def __init__(self, **kwargs):
        for name, default in self._FIELDS.items():
            setattr(self, name, default() if callable(default) else default)
        for name, value in kwargs.items():
            if name not in self._FIELDS:
                raise TypeError(f"{type(self).__name__} has no field {name!r}; known fields: "
                                f"{', '.join(sorted(self._FIELDS))}")
            setattr(self, name, value)

    def __setattr__(self, name, value):
        if name not in self._FIELDS:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}")
        object.__setattr__(self, name, value)

    def CopyFrom(self, other):  # noqa: N802 - protobuf-style name
        for name in self._FIELDS:
            setattr(self, name, getattr(other, name))

    def __repr__(self):
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._FIELDS
                           if getattr(self, k) != (self._FIELDS[k]() if callable(self._FIELDS[k])
                                                   else self._FIELDS[k]))
        return f"{type(self).__name__}({fields})"


class GPUOptions(_Options):
    _FIELDS = {"allow_growth": False, "per_process_gpu_memory_fraction": 0.0,
               "visible_device_list": "", "allocator_type": "", "force_gpu_compatible": False}


class OptimizerOptions(_Options):
    L0, L1 = -1, 0
    # GlobalJitLevel, as TF names it. ON_1 / ON_2 compile the lowerable ops of a session's steps
    # with XLA through JAX (runtime/xla.py; pip install 'tensorweave[xla]'); without JAX the
    # graph runs as it is, as TF runs the ops XLA cannot cluster.
    DEFAULT, OFF, ON_1, ON_2 = 0, -1, 1, 2
    _FIELDS = {"opt_level": 0, "do_common_subexpression_elimination": False,
               "do_constant_folding": False, "global_jit_level": 0}


class GraphOptions(_Options):
    _FIELDS = {"optimizer_options": OptimizerOptions, "build_cost_model": 0,
               "infer_shapes": False, "place_pruned_graph": False, "enable_bfloat16_sendrecv": False,
               "rewrite_options": None}


class ConfigProto(_Options):
    _FIELDS = {"device_count": dict, "intra_op_parallelism_threads": 0,
               "inter_op_parallelism_threads": 0, "use_per_session_threads": False,
               "session_inter_op_thread_pool": list, "placement_period": 0,
               "device_filters": list, "gpu_options": GPUOptions,
               "allow_soft_placement": False, "log_device_placement": False,
               "graph_options": GraphOptions, "operation_timeout_in_ms": 0,
               "rpc_options": None, "cluster_def": None, "isolate_session_state": False,
               "experimental": None}


class RunOptions(_Options):
    NO_TRACE, SOFTWARE_TRACE, HARDWARE_TRACE, FULL_TRACE = 0, 1, 2, 3
    _FIELDS = {"trace_level": 0, "timeout_in_ms": 0, "inter_op_thread_pool": 0,
               "output_partition_graphs": False, "report_tensor_allocations_upon_oom": False,
               "debug_options": None, "experimental": None}


class _Record(dict):
    """A step-stats record read as a dict or, as TF's StepStats protos, by attribute."""

    _ALIASES = {"node_name": "op", "timeline_label": "type"}

    def __getattr__(self, name):
        try:
            return self[self._ALIASES.get(name, name)]
        except KeyError:
            raise AttributeError(name) from None


class NodeExecStats(_Record):
    """One op of a traced step: op, type, device, start_s, duration_s, output_bytes; also
    TF's node_name, all_start_micros, op_start_rel_micros, op_end_rel_micros and
    all_end_rel_micros."""

    @property
    def all_start_micros(self):
        return int(self["start_s"] * 1e6)

    @property
    def op_start_rel_micros(self):
        return 0

    @property
    def op_end_rel_micros(self):
        return int(self["duration_s"] * 1e6)

    all_end_rel_micros = op_end_rel_micros


class StepStats:
    """Per-op timing of one traced step: `dev_stats` lists {device, node_stats} (entries also
    read by attribute: `dev_stats[0].device`, `.node_stats[0].node_name`)."""

    def __init__(self):
        self.dev_stats = []

    def add_node_stats(self, records):
        by_device = {}
        for record in records:
            by_device.setdefault(record["device"] or "/job:localhost/replica:0/task:0/device:CPU:0",
                                 []).append(NodeExecStats(record))
        for device, node_stats in by_device.items():
            self.dev_stats.append(_Record(device=device, node_stats=node_stats))


class RunMetadata:
    def __init__(self):
        self.step_stats = StepStats()
        self.partition_graphs = []
        self.cost_graph = None
