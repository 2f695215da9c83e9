"""The checkpoint files: safetensors data shards and a JSON index, written atomically.

A checkpoint is named by its prefix P (say `/ckpt/model.ckpt-200`) and made of

  P.index.json                               what is saved, and where (written last)
  P.data-00000-of-00002.safetensors          one data file per shard (per saving task)
  P.data-00001-of-00002.safetensors

A data file is a plain safetensors file, written here with NumPy: an 8-byte little-endian
header length, a JSON header `{key: {"dtype", "shape", "data_offsets": [begin, end]}}` (offsets
into the byte buffer that follows, padded with spaces to a multiple of 8) and the raw
little-endian bytes. Its `__metadata__` entry (string -> string, as the format requires) holds
under "tensorweave" a JSON object naming, for each key, the saved tensor and the slice it holds:
`{key: {"name", "full_shape", "start"}}`; a whole tensor is the slice starting at zeros.

The index is
  {"format": "tensorweave-checkpoint", "version": 1,
   "shards": ["model.ckpt-200.data-00000-of-00002.safetensors", ...],   (basenames, P's dir)
   "tensors": {name: {"dtype": "float32", "shape": [full shape],
                      "slices": [{"shard": 0, "key": key, "start": [...], "extent": [...]}]}}}
so a partitioned variable saved by two parameter servers is one name with two slices, and a
reader assembles any slice of it from whatever partitioning wrote it (restoring into a
different number of tasks).

Every file goes to a temporary name, is flushed and fsync'ed, then renamed over its final
name: a process killed while saving leaves a stray temporary file, never a damaged checkpoint;
the next save into the directory removes such files of processes that are gone.
A checkpoint exists once its index does.

Integrity: each slice's entry in the index (and in its data file's metadata) holds "crc32",
the CRC-32 of its stored bytes (zlib's, ~7 GB/s here; the CRC-32C of TF's format, computed in
NumPy, ran at ~100 MB/s and would add ~1 s per 100 MB saved and again restored); a restore
checks it and the slice's dtype and shape against the index and raises DataLossError naming
the tensor on a mismatch (a flipped bit or an edited header used to restore silently).
Checkpoints written before the checksum restore unchecked. Shard names in an index must be
plain file names in the checkpoint's directory: an index naming another path is refused, and
a save only ever deletes the data files of its own prefix.
"""
import json
import os
import re
import uuid
import zlib

import numpy as np

from tensorweave.framework import errors

FORMAT = "tensorweave-checkpoint"
VERSION = 1
INDEX_SUFFIX = ".index.json"
_DTYPE_CODES = {"bool": "BOOL", "uint8": "U8", "int8": "I8", "int16": "I16", "uint16": "U16",
                "float16": "F16", "int32": "I32", "uint32": "U32", "float32": "F32",
                "int64": "I64", "uint64": "U64", "float64": "F64"}
_CODE_DTYPES = {code: np.dtype(name) for name, code in _DTYPE_CODES.items()}


def index_path(prefix):
    return prefix + INDEX_SUFFIX


def data_path(prefix, shard, num_shards, tag=""):
    return f"{prefix}.data-{shard:05d}-of-{num_shards:05d}{tag}.safetensors"


def checkpoint_exists(prefix):
    return os.path.isfile(index_path(prefix))


# --- atomic files -----------------------------------------------------------------------------
def atomic_write(path, chunks):
    """Writes the byte strings `chunks` to `path` through a temporary file, fsync and rename."""
    directory = os.path.dirname(path) or "."
    temporary = f"{path}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        with open(temporary, "wb") as handle:
            for chunk in chunks:
                handle.write(chunk)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
    _fsync_directory(directory)


_TEMPORARY = re.compile(r".*\.tmp-(\d+)-[0-9a-f]{8}\Z")


def remove_stray_temporaries(directory):
    """Deletes the temporary files of checkpoint writes whose process is gone (killed while
    saving); those of running processes (a save in progress) stay."""
    try:
        names = os.listdir(directory or ".")
    except OSError:
        return
    for name in names:
        match = _TEMPORARY.match(name)
        if not match or (".data-" not in name and INDEX_SUFFIX not in name):
            continue
        if _process_alive(int(match.group(1))):
            continue
        try:
            os.remove(os.path.join(directory or ".", name))
        except OSError:
            pass


def _process_alive(pid):
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _fsync_directory(directory):
    """Makes a rename durable; some file systems do not allow opening a directory."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def atomic_write_text(path, text):
    atomic_write(path, [text.encode("utf-8")])


# --- safetensors ------------------------------------------------------------------------------
def _encode_strings(array):
    """A string tensor as bytes (safetensors has no strings): the element count and each
    element's length as little-endian uint64, then the elements' bytes, in C order."""
    items = [v.encode() if isinstance(v, str) else bytes(v) for v in array.reshape(-1).tolist()]
    head = np.array([len(items)] + [len(v) for v in items], dtype="<u8").tobytes()
    return np.frombuffer(head + b"".join(items), dtype=np.uint8)


def _decode_strings(raw, shape, name):
    data = raw.tobytes()
    try:
        count = int(np.frombuffer(data[:8], dtype="<u8")[0])
        lengths = np.frombuffer(data[8:8 + 8 * count], dtype="<u8").astype(np.int64)
        ends = 8 + 8 * count + np.cumsum(lengths)
        if count != int(np.prod(shape)) or (count and int(ends[-1]) != len(data)):
            raise ValueError
    except (ValueError, IndexError):
        raise errors.DataLossError(None, None, f"Tensor {name}: its string data does not "
                                   "match the index: the checkpoint was damaged or edited"
                                   ) from None
    out = np.empty(count, dtype=object)
    starts = ends - lengths
    out[:] = [data[b:e] for b, e in zip(starts.tolist(), ends.tolist())]
    return out.reshape(shape)


def _dtype_code(name, array):
    if array.dtype == object:
        return "U8"              # stored by _encode_strings
    code = _DTYPE_CODES.get(array.dtype.name)
    if code is None:
        raise errors.InvalidArgumentError(
            None, None, f"Cannot save tensor {name!r} of dtype {array.dtype}: checkpoints hold "
            f"numeric, bool and string tensors ({', '.join(sorted(_DTYPE_CODES))}).")
    return code


def _snapshot(array):
    """`array` as stored (little-endian, C order), copied once into immutable bytes: a variable
    that another step updates in place while it is saved (async training) cannot change what
    is checksummed and written after this point."""
    little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    return np.frombuffer(little.tobytes(), little.dtype).reshape(array.shape)


def _stored_bytes(array):
    """The bytes of `array` as stored: a snapshot's own bytes, anything else copied."""
    little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    owner = little
    while isinstance(owner, np.ndarray):
        owner = owner.base
    if isinstance(owner, bytes):
        return memoryview(little.reshape(-1)).cast("B")
    return little.tobytes()


def write_safetensors(path, arrays, metadata=None):
    """Writes {key: ndarray} to a safetensors file at `path` (atomically)."""
    header = {}
    buffers = []
    offset = 0
    for key, array in arrays.items():
        array = np.asarray(array)
        code = _dtype_code(key, array)
        raw = _stored_bytes(array)
        header[key] = {"dtype": code, "shape": list(array.shape),
                       "data_offsets": [offset, offset + len(raw)]}
        buffers.append(raw)
        offset += len(raw)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    encoded = json.dumps(header, separators=(",", ":")).encode("utf-8")
    encoded += b" " * (-len(encoded) % 8)
    atomic_write(path, [len(encoded).to_bytes(8, "little"), encoded] + buffers)


def read_safetensors_header(path):
    """(header dict, byte offset of the data buffer) of a safetensors file."""
    try:
        with open(path, "rb") as handle:
            length = int.from_bytes(handle.read(8), "little")
            if length <= 0 or length > 100 * 2**20:
                raise ValueError("bad header length")
            header = json.loads(handle.read(length).decode("utf-8"))
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"Checkpoint data file {path} not found") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise errors.DataLossError(None, None, f"{path} is not a safetensors file ({exc})"
                                   ) from None
    return header, 8 + length


def read_safetensors_tensor(path, header, data_start, key):
    entry = header[key]
    dtype = _CODE_DTYPES[entry["dtype"]].newbyteorder("<")
    begin, end = entry["data_offsets"]
    array = np.empty(entry["shape"], dtype=dtype)
    if end > begin:
        with open(path, "rb") as handle:
            handle.seek(data_start + begin)
            read = handle.readinto(memoryview(array.reshape(-1)).cast("B"))
        if read != end - begin:
            raise errors.DataLossError(None, None, f"{path}: tensor {key!r} is truncated")
    return array.astype(dtype.newbyteorder("="), copy=False)


# --- slices (TF's shape_and_slices strings) ---------------------------------------------------
def parse_slice_spec(spec, shape=None):
    """'' -> None (the whole tensor); '10 4 0,5:-' -> (full_shape, start, extent)."""
    spec = spec.decode() if isinstance(spec, bytes) else spec
    if not spec:
        return None
    parts = spec.split()
    full_shape = [int(p) for p in parts[:-1]]
    dims = parts[-1].split(":")
    if len(dims) != len(full_shape):
        raise errors.InvalidArgumentError(None, None, f"Bad slice spec {spec!r}: "
                                          f"{len(full_shape)} dims but {len(dims)} slices")
    start, extent = [], []
    for dim, size in zip(dims, full_shape):
        if dim == "-":
            start.append(0)
            extent.append(size)
        else:
            begin, length = (int(x) for x in dim.split(","))
            start.append(begin)
            extent.append(length)
    return full_shape, start, extent


def make_slice_spec(full_shape, start, extent):
    dims = ":".join(f"{b},{n}" for b, n in zip(start, extent))
    return " ".join(str(d) for d in full_shape) + " " + dims


# --- one shard (what SaveV2 writes) -----------------------------------------------------------
def checksum(array):
    """The CRC-32 of an array's bytes as stored (little-endian, C order)."""
    array = np.asarray(array)
    little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
    return zlib.crc32(memoryview(little.reshape(-1)).cast("B")) if little.size else 0


def write_checkpoint(prefix, names, specs, arrays, tag=""):
    """Writes a one-shard checkpoint: its data file and its index."""
    keyed, described = {}, {}
    for name, spec, array in zip(names, specs, arrays):
        array = np.asarray(array)
        parsed = parse_slice_spec(spec)
        if parsed is None:
            full_shape, start = list(array.shape), [0] * array.ndim
        else:
            full_shape, start, extent = parsed
            if list(extent) != list(array.shape):
                raise errors.InvalidArgumentError(
                    None, None, f"Tensor {name!r}: slice {spec!r} has extent {extent} but the "
                    f"value has shape {list(array.shape)}")
        key = name if parsed is None else f"{name}@{spec}"
        if key in keyed:
            raise errors.InvalidArgumentError(None, None, f"Tensor {name!r} is saved twice")
        _dtype_code(name, array)  # an unsavable dtype fails here, naming the tensor
        strings = array.dtype == object
        if strings and parsed is not None:
            raise errors.InvalidArgumentError(None, None, f"Tensor {name!r}: string tensors "
                                              "are saved whole, not in slices")
        array = _encode_strings(array) if strings else _snapshot(array)
        keyed[key] = array     # the checksum and the file describe the same bytes
        described[key] = {"name": name, "full_shape": full_shape, "start": start,
                          "crc32": checksum(array)}
        if strings:
            described[key]["strings"] = True
    directory = os.path.dirname(prefix)
    if directory:
        os.makedirs(directory, exist_ok=True)
    remove_stray_temporaries(directory)
    tag, previous = _tag_for(prefix)
    data_file = data_path(prefix, 0, 1, tag)
    write_safetensors(data_file, keyed, {"tensorweave": json.dumps(described)})
    _commit(prefix, [data_file], previous)


def _tag_for(prefix):
    """Re-saving over an existing checkpoint: the new data files get fresh names, so the old
    index stays valid until the new one replaces it. Returns (tag, the old data files)."""
    if not checkpoint_exists(prefix):
        return "", []
    return f".{uuid.uuid4().hex[:8]}", _referenced_files(prefix)


def _commit(prefix, data_files, previous):
    """Writes the index (the checkpoint now exists), then drops the replaced data files."""
    index = _index_of(data_files)
    atomic_write_text(index_path(prefix), json.dumps(index, sort_keys=True))
    for stale in previous:
        if stale not in data_files and os.path.exists(stale):
            os.remove(stale)


def _index_of(data_files):
    tensors = {}
    for shard, data_file in enumerate(data_files):
        header, _ = read_safetensors_header(data_file)
        described = json.loads(header.get("__metadata__", {}).get("tensorweave", "{}"))
        for key, about in described.items():
            strings = bool(about.get("strings"))
            entry = tensors.setdefault(about["name"], {
                "dtype": "object" if strings else _CODE_DTYPES[header[key]["dtype"]].name,
                "shape": about["full_shape"], "slices": []})
            if entry["shape"] != about["full_shape"]:
                raise errors.InvalidArgumentError(
                    None, None, f"Tensor {about['name']!r} is saved with shapes "
                    f"{entry['shape']} and {about['full_shape']}")
            piece = {"shard": shard, "key": key, "start": about["start"],
                     "extent": about["full_shape"] if strings else header[key]["shape"]}
            if strings:
                piece["strings"] = True
            if "crc32" in about:
                piece["crc32"] = about["crc32"]
            entry["slices"].append(piece)
    return {"format": FORMAT, "version": VERSION,
            "shards": [os.path.basename(f) for f in data_files], "tensors": tensors}


def merge_checkpoints(source_prefixes, prefix, delete_sources=True):
    """Gathers one-shard checkpoints into one checkpoint at `prefix`: their data files are
    renamed into place, then the merged index is written (the moment the checkpoint exists)."""
    count = len(source_prefixes)
    remove_stray_temporaries(os.path.dirname(prefix))
    tag, previous = _tag_for(prefix)
    moved = []
    for shard, source in enumerate(source_prefixes):
        source_index = read_index(source)
        if len(source_index["shards"]) != 1:
            raise errors.InvalidArgumentError(None, None, f"{source} is not a one-shard "
                                              "checkpoint")
        source_data = os.path.join(os.path.dirname(source),
                                   shard_name(source, source_index["shards"][0]))
        target = data_path(prefix, shard, count, tag)
        os.replace(source_data, target)
        moved.append(target)
    _commit(prefix, moved, previous)
    if delete_sources:
        for source in source_prefixes:
            _remove_if_exists(index_path(source))


def _remove_if_exists(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


def _referenced_files(prefix):
    """The data files of the checkpoint at `prefix` that a new save may delete: only files of
    this prefix in its directory, whatever its index says."""
    try:
        index = read_index(prefix)
    except errors.OpError:
        return []
    directory = os.path.dirname(prefix)
    own = os.path.basename(prefix) + ".data-"
    return [os.path.join(directory, name) for name in index.get("shards", ())
            if isinstance(name, str) and _plain_name(name) and name.startswith(own)]


def _plain_name(name):
    return bool(name) and name not in (".", "..") and os.path.basename(name) == name and \
        "\0" not in name and not os.path.isabs(name)


def shard_name(prefix, name):
    """`name` from the index of `prefix`, if it is a plain file name in its directory."""
    if not isinstance(name, str) or not _plain_name(name):
        raise errors.DataLossError(None, None, f"The index of checkpoint {prefix} names data "
                                   f"file {name!r}, which is not a file in its directory")
    return name


def checkpoint_files(prefix):
    """Every file of the checkpoint at `prefix` (for deletion)."""
    return _referenced_files(prefix) + [index_path(prefix)]


# --- reading ----------------------------------------------------------------------------------
def read_index(prefix):
    path = index_path(prefix)
    try:
        with open(path, encoding="utf-8") as handle:
            index = json.load(handle)
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"Unsuccessful TensorSliceReader constructor: "
                                   f"no checkpoint at {prefix} ({path} does not exist)") from None
    except ValueError as exc:
        raise errors.DataLossError(None, None, f"{path} is not a checkpoint index ({exc})"
                                   ) from None
    if index.get("format") != FORMAT:
        raise errors.DataLossError(None, None, f"{path} is not a tensorweave checkpoint index")
    return index


class CheckpointReader:
    """Reads tensors, or slices of them, from the checkpoint at `prefix`."""

    def __init__(self, prefix):
        self._prefix = prefix
        self._index = read_index(prefix)
        directory = os.path.dirname(prefix)
        self._files = [os.path.join(directory, shard_name(prefix, name))
                       for name in self._index.get("shards", ())]
        self._headers = {}

    def variable_shapes(self):
        return {name: list(entry["shape"]) for name, entry in self._index["tensors"].items()}

    def variable_dtypes(self):
        return {name: np.dtype(entry["dtype"]) for name, entry in self._index["tensors"].items()}

    def has_tensor(self, name):
        return name in self._index["tensors"]

    def _read_piece(self, name, entry, piece):
        """A stored slice, checked against the index: its dtype, shape and checksum."""
        try:
            path = self._files[piece["shard"]]
            key = piece["key"]
        except (IndexError, KeyError, TypeError):
            raise errors.DataLossError(None, None, f"Tensor {name}: the index of "
                                       f"{self._prefix} names no valid data file") from None
        if path not in self._headers:
            self._headers[path] = read_safetensors_header(path)
        header, start = self._headers[path]
        stored = header.get(key)
        strings = entry["dtype"] == "object"
        if not isinstance(stored, dict) or (
                stored.get("dtype") != "U8" or len(stored.get("shape", ())) != 1 if strings
                else _CODE_DTYPES.get(stored.get("dtype")) != np.dtype(entry["dtype"]) or
                list(stored.get("shape", ())) != list(piece["extent"])):
            raise errors.DataLossError(None, None, f"Tensor {name}: its data in {path} does not "
                                       f"match the index (dtype {entry['dtype']}, shape "
                                       f"{piece['extent']}): the checkpoint was damaged or "
                                       "edited")
        value = read_safetensors_tensor(path, header, start, key)
        if "crc32" in piece and checksum(value) != piece["crc32"]:
            raise errors.DataLossError(None, None, f"Tensor {name}: checksum mismatch in {path}"
                                       ": the checkpoint is corrupted")
        return _decode_strings(value, piece["extent"], name) if strings else value

    def get_tensor(self, name, spec=""):
        """The saved tensor `name`, or the slice of it that `spec` names."""
        entry = self._index["tensors"].get(name)
        if entry is None:
            raise errors.NotFoundError(None, None, f"Key {name} not found in checkpoint "
                                       f"{self._prefix}")
        full_shape = list(entry["shape"])
        parsed = parse_slice_spec(spec)
        if parsed is None:
            start, extent = [0] * len(full_shape), full_shape
        else:
            if list(parsed[0]) != full_shape:
                raise errors.InvalidArgumentError(
                    None, None, f"Tensor {name}: the checkpoint holds shape {full_shape}, the "
                    f"restore asks for a slice of shape {parsed[0]}")
            _, start, extent = parsed
        result = np.empty(extent, dtype=np.dtype(entry["dtype"]))
        covered = 0
        for piece in entry["slices"]:
            overlap = _overlap(start, extent, piece["start"], piece["extent"])
            if overlap is None:
                continue
            source, target, size = overlap
            value = self._read_piece(name, entry, piece)
            result[target] = value[source]
            covered += size
        if covered != result.size:
            raise errors.DataLossError(None, None, f"Tensor {name}: the checkpoint's slices do "
                                       f"not cover the requested {spec or 'whole tensor'}")
        return result


def _overlap(want_start, want_extent, have_start, have_extent):
    """(index into the stored slice, index into the result, element count) or None."""
    source, target, size = [], [], 1
    for w0, wn, h0, hn in zip(want_start, want_extent, have_start, have_extent):
        low, high = max(w0, h0), min(w0 + wn, h0 + hn)
        if high <= low:
            return None
        source.append(slice(low - h0, high - h0))
        target.append(slice(low - w0, high - w0))
        size *= high - low
    return tuple(source), tuple(target), size
