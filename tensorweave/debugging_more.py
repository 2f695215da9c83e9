"""The tf.debugging switches of TF 2 with their graph-mode meaning here.

- enable_check_numerics(): every op whose kernel runs in a plan bound afterwards (the first
  Session.run of a fetch signature, and every new one) has its floating-point outputs checked
  for NaN and Infinity; the first bad output raises InvalidArgumentError naming the op, the
  output and where the op was created. Plans bound before the call are not checked, nor
  ops that run in other processes (a remote worker's: enable it in that process).
- experimental.enable_dump_debug_info(dump_root, tensor_debug_mode): the same hook writes one
  JSON line per op run to <dump_root>/ops.jsonl: op name and type, and per output its dtype
  and shape plus, by mode, nothing more (NO_TENSOR, SHAPE), whether it has NaN/Inf
  (CURT_HEALTH), or the counts of NaN/-Inf/+Inf and its min/max/mean (FULL_HEALTH). This is
  not TF's tfdbg2 file format (TensorBoard's debugger cannot read it): it is for reading and
  grepping.
- set_log_device_placement(True): sessions made afterwards log each op's device (a ConfigProto
  that sets log_device_placement wins).
- traceback filtering: tensorweave's errors already name the user's op and its creation site;
  the switch is kept for API parity and changes nothing.
"""
import json
import os
import threading

import numpy as np

from tensorweave.framework import errors
from tensorweave.runtime import devices as devices_lib
from tensorweave.runtime import executor

_MODES = ("NO_TENSOR", "CURT_HEALTH", "CONCISE_HEALTH", "FULL_HEALTH", "SHAPE",
          "FULL_TENSOR")
_state = {"check": None, "dump": None, "traceback_filtering": True}


def _float_arrays(outputs):
    for index, value in enumerate(outputs):
        array = value if isinstance(value, np.ndarray) else None
        if array is not None and array.dtype.kind in "fc" and array.size:
            yield index, array


def _check_outputs(op, outputs):
    for index, array in _float_arrays(outputs):
        if not np.all(np.isfinite(array)):
            nans, infs = int(np.isnan(array).sum()), int(np.isinf(array).sum())
            raise errors.InvalidArgumentError(
                None, op, f"!!! Detected Infinity or NaN in output {index} of op {op.name} "
                f"({op.type}, dtype {array.dtype}, shape {list(array.shape)}): {nans} NaN, "
                f"{infs} Inf. {op.describe()} !!! (tf.debugging.enable_check_numerics)")


def enable_check_numerics(stack_height_limit=30, path_length_limit=50):
    if _state["check"] is None:
        _state["check"] = _check_outputs
        executor.OP_OBSERVERS.append(_check_outputs)


def disable_check_numerics():
    if _state["check"] is not None:
        executor.OP_OBSERVERS.remove(_state["check"])
        _state["check"] = None


class _Dumper:
    def __init__(self, dump_root, mode, op_regex, tensor_dtypes):
        import re
        os.makedirs(dump_root, exist_ok=True)
        self.path = os.path.join(dump_root, "ops.jsonl")
        self.mode = mode
        self.pattern = re.compile(op_regex) if op_regex else None
        self.dtypes = None if tensor_dtypes is None else {str(getattr(d, "name", d))
                                                         for d in tensor_dtypes}
        self.lock = threading.Lock()
        self.file = open(self.path, "a", encoding="utf-8")

    def __call__(self, op, outputs):
        if self.pattern is not None and not self.pattern.match(op.name):
            return
        record = {"op": op.name, "type": op.type, "outputs": []}
        for index, value in enumerate(outputs):
            array = np.asarray(value) if isinstance(value, np.ndarray) else None
            if array is None or (self.dtypes is not None and op.outputs[index].dtype.name
                                 not in self.dtypes):
                continue
            entry = {"index": index, "dtype": op.outputs[index].dtype.name,
                     "shape": list(array.shape)}
            if self.mode in ("CURT_HEALTH", "CONCISE_HEALTH", "FULL_HEALTH") and \
                    array.dtype.kind in "fc":
                finite = np.isfinite(array)
                entry["has_inf_or_nan"] = bool(array.size and not finite.all())
                if self.mode == "FULL_HEALTH" and array.size:
                    real = array.real
                    entry.update(nan=int(np.isnan(real).sum()),
                                 neg_inf=int(np.isneginf(real).sum()),
                                 pos_inf=int(np.isposinf(real).sum()),
                                 min=float(real[finite].min()) if finite.any() else None,
                                 max=float(real[finite].max()) if finite.any() else None,
                                 mean=float(real[finite].mean()) if finite.any() else None)
            if self.mode == "FULL_TENSOR" and array.dtype.kind in "biufc":
                entry["value"] = array.tolist()
            record["outputs"].append(entry)
        with self.lock:
            self.file.write(json.dumps(record) + "\n")
            self.file.flush()

    def close(self):
        self.file.close()


def enable_dump_debug_info(dump_root, tensor_debug_mode="NO_TENSOR", circular_buffer_size=1000,
                           op_regex=None, tensor_dtypes=None):
    if tensor_debug_mode not in _MODES:
        raise ValueError(f"enable_dump_debug_info: tensor_debug_mode must be one of "
                         f"{list(_MODES)}, got {tensor_debug_mode!r}")
    disable_dump_debug_info()
    _state["dump"] = _Dumper(str(dump_root), tensor_debug_mode, op_regex, tensor_dtypes)
    executor.OP_OBSERVERS.append(_state["dump"])
    return _state["dump"]


def disable_dump_debug_info():
    dumper = _state["dump"]
    if dumper is not None:
        executor.OP_OBSERVERS.remove(dumper)
        dumper.close()
        _state["dump"] = None


def set_log_device_placement(enabled):
    devices_lib.process_defaults.log_device_placement = bool(enabled)


def get_log_device_placement():
    return devices_lib.process_defaults.log_device_placement


def enable_traceback_filtering():
    _state["traceback_filtering"] = True


def disable_traceback_filtering():
    _state["traceback_filtering"] = False


def is_traceback_filtering_enabled():
    return _state["traceback_filtering"]
