"""Kernel of SdcaFprint (ops/sdca_ops.py): FarmHash's Fingerprint128 (farmhashcc, i.e.
CityHash128 v1.1.1) of each string, as two int64s, the first never 0 or 1 (TF keeps those
free as sentinels: low values 0 and 1 wrap to 2^64 - 2 and 2^64 - 1). Written from the
published algorithm on Python integers masked to 64 bits; tests/ops checks known answers."""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel
from tensorweave.kernels.string_hash import (K0, K1, MASK, _fetch64, _hash_0_to_16,
                                             _hash_len16, _rotate, _shift_mix,
                                             _weak_hash_32, city_round)
from tensorweave.kernels.strings import as_strings

_MUL = 0x9ddfea08eb382d69  # Hash128to64's multiplier


def _hash16(u, v):
    return _hash_len16(u, v, _MUL)


def _city_murmur(data, start, size, low, high):
    a, b = low, high
    if size <= 16:
        piece = data[start:start + size]
        a = (_shift_mix((a * K1) & MASK) * K1) & MASK
        c = (b * K1 + _hash_0_to_16(piece)) & MASK
        d = _shift_mix((a + (_fetch64(data, start) if size >= 8 else c)) & MASK)
    else:
        end = start + size
        c = _hash16((_fetch64(data, end - 8) + K1) & MASK, a)
        d = _hash16((b + size) & MASK, (c + _fetch64(data, end - 16)) & MASK)
        a = (a + d) & MASK
        left = size - 16
        at = start
        while True:
            a ^= (_shift_mix((_fetch64(data, at) * K1) & MASK) * K1) & MASK
            a = (a * K1) & MASK
            b ^= a
            c ^= (_shift_mix((_fetch64(data, at + 8) * K1) & MASK) * K1) & MASK
            c = (c * K1) & MASK
            d ^= c
            at += 16
            left -= 16
            if left <= 0:
                break
    a = _hash16(a, c)
    b = _hash16(d, b)
    return a ^ b, _hash16(b, a)


def _city128_with_seed(data, start, size, low, high):
    if size < 128:
        return _city_murmur(data, start, size, low, high)
    x, y, z = low, high, (size * K1) & MASK
    v0 = (_rotate(y ^ K1, 49) * K1 + _fetch64(data, start)) & MASK
    v = (v0, (_rotate(v0, 42) * K1 + _fetch64(data, start + 8)) & MASK)
    w = ((_rotate((y + z) & MASK, 35) * K1 + x) & MASK,
         (_rotate((x + _fetch64(data, start + 88)) & MASK, 53) * K1) & MASK)
    at = start
    while True:
        for _ in range(2):
            x, y, z, v, w = city_round(data, at, x, y, z, v, w)
            at += 64
        size -= 128
        if size < 128:
            break
    x = (x + _rotate((v[0] + z) & MASK, 49) * K0) & MASK
    y = (y * K0 + _rotate(w[1], 37)) & MASK
    z = (z * K0 + _rotate(w[0], 27)) & MASK
    w = ((w[0] * 9) & MASK, w[1])
    v = ((v[0] * K0) & MASK, v[1])
    done = 0
    while done < size:  # up to 4 chunks of 32 bytes from the end
        done += 32
        y = (_rotate((x + y) & MASK, 42) * K0 + v[1]) & MASK
        w = ((w[0] + _fetch64(data, at + size - done + 16)) & MASK, w[1])
        x = (x * K0 + w[0]) & MASK
        z = (z + w[1] + _fetch64(data, at + size - done)) & MASK
        w = (w[0], (w[1] + v[0]) & MASK)
        v = _weak_hash_32(data, at + size - done, (v[0] + z) & MASK, v[1])
        v = ((v[0] * K0) & MASK, v[1])
    x = _hash16(x, v[0])
    y = _hash16((y + z) & MASK, w[0])
    return ((_hash16((x + v[1]) & MASK, w[1]) + y) & MASK,
            _hash16((x + w[1]) & MASK, (y + v[1]) & MASK))


def fingerprint128(data):
    """(low64, high64) of FarmHash Fingerprint128 of `data` (bytes)."""
    if len(data) >= 16:
        return _city128_with_seed(data, 16, len(data) - 16, _fetch64(data, 0),
                                  (_fetch64(data, 8) + K0) & MASK)
    return _city128_with_seed(data, 0, len(data), K0, K1)


@register_kernel("SdcaFprint")
def sdca_fprint(input):  # noqa: A002 - TF's name
    strings = as_strings(input)
    if strings.ndim != 1:
        raise errors.InvalidArgumentError(None, None, f"SdcaFprint: input must be a vector, "
                                                      f"got shape {strings.shape}")
    out = np.empty((strings.shape[0], 2), dtype=np.uint64)
    for index, value in enumerate(strings):
        low, high = fingerprint128(value)
        out[index] = ((low if low >= 2 else (low - 2) & MASK), high)
    return out.view(np.int64)
