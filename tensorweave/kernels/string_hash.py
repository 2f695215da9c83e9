"""The string hash-bucket kernels, with TF's hash functions so that buckets (and with them
checkpoints of hashed feature embeddings) match TensorFlow's:
  StringToHashBucketFast    FarmHash Fingerprint64 (farmhash-na Hash64) mod num_buckets;
  StringToHashBucketStrong  SipHash-2-4 keyed by the two 64-bit `key` words;
  StringToHashBucket        TF's legacy Hash64 (MurmurHash64A, seed 0xDECAFCAFFE).
Written from the published algorithms; tests/ops/test_string_ops.py checks them against the
published test vectors and TF's own test expectations. Python integers masked to 64 bits."""
import numpy as np

from tensorweave.framework import errors
from tensorweave.kernels.registry import register_kernel
from tensorweave.kernels.strings import as_strings

MASK = (1 << 64) - 1
K0, K1, K2 = 0xc3a5c85c97cb3127, 0xb492b66fbe98f273, 0x9ae16a3b2f90404f


def _fetch64(data, at):
    return int.from_bytes(data[at:at + 8], "little")


def _fetch32(data, at):
    return int.from_bytes(data[at:at + 4], "little")


def _rotate(value, shift):
    return value if shift == 0 else ((value >> shift) | (value << (64 - shift))) & MASK


def _shift_mix(value):
    return value ^ (value >> 47)


def _hash_len16(u, v, mul):
    a = ((u ^ v) * mul) & MASK
    a ^= a >> 47
    b = ((v ^ a) * mul) & MASK
    b ^= b >> 47
    return (b * mul) & MASK


def _hash_0_to_16(data):
    size = len(data)
    if size >= 8:
        mul = K2 + size * 2
        a = (_fetch64(data, 0) + K2) & MASK
        b = _fetch64(data, size - 8)
        c = (_rotate(b, 37) * mul + a) & MASK
        d = ((_rotate(a, 25) + b) * mul) & MASK
        return _hash_len16(c, d, mul)
    if size >= 4:
        mul = K2 + size * 2
        return _hash_len16((size + (_fetch32(data, 0) << 3)) & MASK, _fetch32(data, size - 4),
                           mul)
    if size > 0:
        y = (data[0] + (data[size >> 1] << 8)) & 0xFFFFFFFF
        z = (size + (data[size - 1] << 2)) & 0xFFFFFFFF
        return (_shift_mix(((y * K2) ^ (z * K0)) & MASK) * K2) & MASK
    return K2


def _hash_17_to_32(data):
    size = len(data)
    mul = K2 + size * 2
    a = (_fetch64(data, 0) * K1) & MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, size - 8) * mul) & MASK
    d = (_fetch64(data, size - 16) * K2) & MASK
    return _hash_len16((_rotate((a + b) & MASK, 43) + _rotate(c, 30) + d) & MASK,
                       (a + _rotate((b + K2) & MASK, 18) + c) & MASK, mul)


def _hash_33_to_64(data):
    size = len(data)
    mul = K2 + size * 2
    a = (_fetch64(data, 0) * K2) & MASK
    b = _fetch64(data, 8)
    c = (_fetch64(data, size - 8) * mul) & MASK
    d = (_fetch64(data, size - 16) * K2) & MASK
    y = (_rotate((a + b) & MASK, 43) + _rotate(c, 30) + d) & MASK
    z = _hash_len16(y, (a + _rotate((b + K2) & MASK, 18) + c) & MASK, mul)
    e = (_fetch64(data, 16) * mul) & MASK
    f = _fetch64(data, 24)
    g = ((y + _fetch64(data, size - 32)) * mul) & MASK
    h = ((z + _fetch64(data, size - 24)) * mul) & MASK
    return _hash_len16((_rotate((e + f) & MASK, 43) + _rotate(g, 30) + h) & MASK,
                       (e + _rotate((f + a) & MASK, 18) + g) & MASK, mul)


def _weak_hash_32(data, at, a, b):
    w, x, y, z = (_fetch64(data, at + 8 * k) for k in range(4))
    a = (a + w) & MASK
    b = _rotate((b + a + z) & MASK, 21)
    c = a
    a = (a + x + y) & MASK
    b = (b + _rotate(a, 44)) & MASK
    return (a + z) & MASK, (b + c) & MASK


def city_round(data, at, x, y, z, v, w):
    """One 64-byte round of the CityHash64 / CityHash128 inner loop over data[at:at + 64]:
    the new (x, y, z, v, w) state (x and z swapped, as the loop ends)."""
    x = (_rotate((x + y + v[0] + _fetch64(data, at + 8)) & MASK, 37) * K1) & MASK
    y = (_rotate((y + v[1] + _fetch64(data, at + 48)) & MASK, 42) * K1) & MASK
    x ^= w[1]
    y = (y + v[0] + _fetch64(data, at + 40)) & MASK
    z = (_rotate((z + w[0]) & MASK, 33) * K1) & MASK
    v = _weak_hash_32(data, at, (v[1] * K1) & MASK, (x + w[0]) & MASK)
    w = _weak_hash_32(data, at + 32, (z + w[1]) & MASK, (y + _fetch64(data, at + 16)) & MASK)
    return z, y, x, v, w


def fingerprint64(data):
    """FarmHash Fingerprint64 of bytes."""
    size = len(data)
    if size <= 16:
        return _hash_0_to_16(data)
    if size <= 32:
        return _hash_17_to_32(data)
    if size <= 64:
        return _hash_33_to_64(data)
    seed = 81
    x = seed
    y = (seed * K1 + 113) & MASK
    z = (_shift_mix((y * K2 + 113) & MASK) * K2) & MASK
    v, w = (0, 0), (0, 0)
    x = (x * K2 + _fetch64(data, 0)) & MASK
    end = ((size - 1) // 64) * 64
    last64 = end + ((size - 1) & 63) - 63
    at = 0
    while True:
        x, y, z, v, w = city_round(data, at, x, y, z, v, w)
        at += 64
        if at == end:
            break
    mul = K1 + ((z & 0xFF) << 1)
    at = last64
    w = ((w[0] + ((size - 1) & 63)) & MASK, w[1])
    v = ((v[0] + w[0]) & MASK, v[1])
    w = ((w[0] + v[0]) & MASK, w[1])
    x = (_rotate((x + y + v[0] + _fetch64(data, at + 8)) & MASK, 37) * mul) & MASK
    y = (_rotate((y + v[1] + _fetch64(data, at + 48)) & MASK, 42) * mul) & MASK
    x ^= (w[1] * 9) & MASK
    y = (y + v[0] * 9 + _fetch64(data, at + 40)) & MASK
    z = (_rotate((z + w[0]) & MASK, 33) * mul) & MASK
    v = _weak_hash_32(data, at, (v[1] * mul) & MASK, (x + w[0]) & MASK)
    w = _weak_hash_32(data, at + 32, (z + w[1]) & MASK, (y + _fetch64(data, at + 16)) & MASK)
    z, x = x, z
    return _hash_len16((_hash_len16(v[0], w[0], mul) + _shift_mix(y) * K0 + z) & MASK,
                       (_hash_len16(v[1], w[1], mul) + x) & MASK, mul)


def _sip_round(v0, v1, v2, v3):
    v0 = (v0 + v1) & MASK
    v1 = _rotate(v1, 64 - 13) ^ v0
    v0 = _rotate(v0, 64 - 32)
    v2 = (v2 + v3) & MASK
    v3 = _rotate(v3, 64 - 16) ^ v2
    v0 = (v0 + v3) & MASK
    v3 = _rotate(v3, 64 - 21) ^ v0
    v2 = (v2 + v1) & MASK
    v1 = _rotate(v1, 64 - 17) ^ v2
    v2 = _rotate(v2, 64 - 32)
    return v0, v1, v2, v3


def siphash24(key0, key1, data):
    """SipHash-2-4 of bytes under the 128-bit key (key0, key1)."""
    v0 = key0 ^ 0x736f6d6570736575
    v1 = key1 ^ 0x646f72616e646f6d
    v2 = key0 ^ 0x6c7967656e657261
    v3 = key1 ^ 0x7465646279746573
    size = len(data)
    tail = size & ~7
    for at in range(0, tail, 8):
        block = _fetch64(data, at)
        v3 ^= block
        v0, v1, v2, v3 = _sip_round(*_sip_round(v0, v1, v2, v3))
        v0 ^= block
    last = ((size & 0xFF) << 56) | int.from_bytes(data[tail:], "little")
    v3 ^= last
    v0, v1, v2, v3 = _sip_round(*_sip_round(v0, v1, v2, v3))
    v0 ^= last
    v2 ^= 0xFF
    for _ in range(4):
        v0, v1, v2, v3 = _sip_round(v0, v1, v2, v3)
    return v0 ^ v1 ^ v2 ^ v3


def legacy_hash64(data, seed=0xDECAFCAFFE):
    """TF's Hash64 (MurmurHash64A)."""
    mul, shift = 0xc6a4a7935bd1e995, 47
    size = len(data)
    h = (seed ^ (size * mul)) & MASK
    body = size & ~7
    for at in range(0, body, 8):
        k = (_fetch64(data, at) * mul) & MASK
        k ^= k >> shift
        k = (k * mul) & MASK
        h = ((h ^ k) * mul) & MASK
    rest = data[body:]
    if rest:
        h ^= int.from_bytes(rest, "little")
        h = (h * mul) & MASK
    h ^= h >> shift
    h = (h * mul) & MASK
    return h ^ (h >> shift)


def _buckets(hash_fn, input, num_buckets):  # noqa: A002
    if num_buckets < 1:
        raise errors.InvalidArgumentError(None, None, f"num_buckets must be >= 1, got "
                                          f"{num_buckets}")
    strings = as_strings(input)
    out = np.empty(strings.shape, dtype=np.int64)
    flat = out.reshape(-1)
    for k, text in enumerate(strings.reshape(-1)):
        flat[k] = hash_fn(text) % num_buckets
    return out


@register_kernel("StringToHashBucketFast")
def string_to_hash_bucket_fast(input, *, num_buckets):  # noqa: A002
    return _buckets(fingerprint64, input, num_buckets)


@register_kernel("StringToHashBucketStrong")
def string_to_hash_bucket_strong(input, *, num_buckets, key):  # noqa: A002
    if len(key) != 2:
        raise errors.InvalidArgumentError(None, None, f"Key must have 2 elements, got {key}")
    key0, key1 = (int(k) & MASK for k in key)
    return _buckets(lambda text: siphash24(key0, key1, text), input, num_buckets)


@register_kernel("StringToHashBucket")
def string_to_hash_bucket(string_tensor, *, num_buckets):
    return _buckets(legacy_hash64, string_tensor, num_buckets)
