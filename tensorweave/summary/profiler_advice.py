"""`tf.profiler.advise(graph, run_meta, options)`: tfprof's checkers run over a graph (and a
step's RunMetadata), their findings as an AdviceProto:

  ExpensiveOperationChecker      the 3 op types that took the most time in the step (from
                                 run_meta's step stats), or without run_meta the 3 with the
                                 most float operations
  OperationChecker               ops whose data_format is NCHW, which CPU kernels run slower
                                 than NHWC (tensorweave runs on CPUs)
  AcceleratorUtilizationChecker  accelerator utilisation: no reports, there is no accelerator
  JobChecker                     (TF's, internal to Google) no reports
`options` picks the checkers: a dict keyed by checker name (ALL_ADVICE: all four).
"""
import collections

from tensorweave.framework import graph as graph_lib
from tensorweave.framework.protos.tfprof_pb2 import AdviceProto
from tensorweave.summary.profiler import op_float_ops

CHECKERS = ("AcceleratorUtilizationChecker", "ExpensiveOperationChecker", "JobChecker",
            "OperationChecker")
ALL_ADVICE = {name: {} for name in CHECKERS}


def _micros_by_type(graph, run_meta):
    types = {op.name: op.type for op in graph.get_operations()}
    micros, counts = collections.Counter(), collections.Counter()
    for device in run_meta.step_stats.dev_stats:
        for stats in device["node_stats"]:
            kind = types.get(stats["op"])
            if kind is not None:
                micros[kind] += int(stats.get("all_end_rel_micros", 0))
                counts[kind] += 1
    return micros, counts


def _expensive(graph, run_meta):
    if run_meta is not None:
        micros, counts = _micros_by_type(graph, run_meta)
        total = sum(micros.values()) or 1
        return [f"top {rank} operation type: {kind}, cpu: {value}us, accelerator: 0us, "
                f"total: {value}us ({100.0 * value / total:.2f}%), {counts[kind]} ops"
                for rank, (kind, value) in enumerate(micros.most_common(3), 1)]
    flops, counts = collections.Counter(), collections.Counter()
    for op in graph.get_operations():
        value = op_float_ops(op)
        if value:
            flops[op.type] += value
            counts[op.type] += 1
    total = sum(flops.values()) or 1
    return [f"top {rank} operation type by float operations (no run_meta for times): {kind}, "
            f"{value} flops ({100.0 * value / total:.2f}%), {counts[kind]} ops"
            for rank, (kind, value) in enumerate(flops.most_common(3), 1)]


def _operations(graph):
    slow = [op.name for op in graph.get_operations()
            if _text(op.attrs.get("data_format")) in ("NCHW", "NCDHW")]
    if not slow:
        return []
    return [f"Found {len(slow)} operation(s) using the NCHW data format, e.g. {slow[0]}: on "
            "CPUs NHWC is the faster format (transposes are added around NCHW kernels)"]


def _text(value):
    return value.decode() if isinstance(value, bytes) else value


def advise(graph=None, run_meta=None, options=None):
    """An AdviceProto with the reports of the checkers named in `options` (default all)."""
    graph = graph or graph_lib.get_default_graph()
    options = ALL_ADVICE if options is None else options
    unknown = set(options) - set(CHECKERS)
    if unknown:
        raise ValueError(f"tf.profiler.advise: unknown checkers {sorted(unknown)}; known: "
                         f"{list(CHECKERS)}")
    advice = AdviceProto()
    for name in options:
        reports = {"ExpensiveOperationChecker": lambda: _expensive(graph, run_meta),
                   "OperationChecker": lambda: _operations(graph)}.get(name, list)()
        advice.checkers[name].reports.extend(reports)
    return advice
