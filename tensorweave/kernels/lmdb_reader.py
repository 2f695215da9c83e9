"""LMDBReader (TF 1.x's reader of LMDB databases, e.g. Caffe's image sets): each work unit
names an LMDB data file (data.mdb, opened as TF opens it, without a directory); its records
are the (key, value) pairs of the main database in key order.

The file is read directly (no liblmdb): the meta page with the newer transaction gives the
page size and the main database's root; the B+tree is walked from there, branch pages to
their children in order, leaf nodes giving key and value (a value too large for its leaf
lives on overflow pages). Databases with sorted duplicates (DUPSORT) or named sub-databases
are refused with an error saying so."""
import struct

from tensorweave.framework import errors
from tensorweave.kernels import file_access
from tensorweave.kernels.readers import Reader, _handle
from tensorweave.kernels.registry import register_kernel

_MAGIC = 0xBEEFC0DE
_HEADER = 16                      # page header: pgno u64, pad u16, flags u16, lower, upper u16
_P_BRANCH, _P_LEAF, _P_LEAF2 = 0x01, 0x02, 0x20
_F_BIGDATA, _F_SUBDATA, _F_DUPDATA = 0x01, 0x02, 0x04
_NO_ROOT = (1 << 64) - 1


def _bad(path, message):
    return errors.DataLossError(None, None, f"LMDBReader: {path}: {message}")


def _meta(data, offset, path):
    if len(data) < offset + 152:
        raise _bad(path, "too short for an LMDB meta page")
    magic, version = struct.unpack_from("<II", data, offset + 16)
    if magic != _MAGIC:
        raise _bad(path, f"not an LMDB data file (magic {magic:#x})")
    page_size = struct.unpack_from("<I", data, offset + 40)[0]
    # the main database's MDB_db: pad u32, flags u16, depth u16, 4 page counts u64, root
    flags = struct.unpack_from("<H", data, offset + 92)[0]
    root = struct.unpack_from("<Q", data, offset + 128)[0]
    txnid = struct.unpack_from("<Q", data, offset + 144)[0]
    return page_size, flags, root, txnid, version


def lmdb_records(data, path):
    """(key, value) pairs of the main database of an LMDB data file's bytes, in key order."""
    page_size = _meta(data, 0, path)[0]
    metas = [_meta(data, 0, path), _meta(data, page_size, path)]
    _, flags, root, _, _ = max(metas, key=lambda meta: meta[3])
    if flags & 0x04:  # MDB_DUPSORT
        raise _bad(path, "databases with sorted duplicates (MDB_DUPSORT) are not supported")
    if root == _NO_ROOT:
        return
    stack = [root]
    while stack:
        page = stack.pop()
        base = page * page_size
        if base + _HEADER > len(data):
            raise _bad(path, f"page {page} is past the end of the file")
        _, _, page_flags, lower, _ = struct.unpack_from("<QHHHH", data, base)
        count = (lower - _HEADER) // 2
        offsets = struct.unpack_from(f"<{count}H", data, base + _HEADER)
        if page_flags & _P_BRANCH:
            children = []
            for node in offsets:
                lo, hi, node_flags = struct.unpack_from("<HHH", data, base + node)
                children.append(lo | hi << 16 | node_flags << 32)
            stack.extend(reversed(children))  # leftmost child first
        elif page_flags & _P_LEAF and not page_flags & _P_LEAF2:
            for node in offsets:
                lo, hi, node_flags, key_size = struct.unpack_from("<HHHH", data, base + node)
                key = data[base + node + 8:base + node + 8 + key_size]
                size = lo | hi << 16
                at = base + node + 8 + key_size
                if node_flags & (_F_SUBDATA | _F_DUPDATA):
                    raise _bad(path, "named sub-databases and duplicate data are not supported")
                if node_flags & _F_BIGDATA:
                    overflow = struct.unpack_from("<Q", data, at)[0]
                    at = overflow * page_size + _HEADER
                yield bytes(key), bytes(data[at:at + size])
        else:
            raise _bad(path, f"page {page} is neither a branch nor a leaf (flags "
                             f"{page_flags:#x})")


class LMDBReader(Reader):
    kind = "LMDBReader"

    def records(self, work):
        path = file_access.as_path(work)
        data = file_access.read_input(path, self.kind)
        yield from lmdb_records(memoryview(data), path)


register_kernel("LMDBReader", resource="resource", resource_factory=LMDBReader)(_handle)
