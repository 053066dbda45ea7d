"""Gorilla compression of one series' span of (seconds, float) samples, as Facebook's paper
("Gorilla: A Fast, Scalable, In-Memory Time Series Database", VLDB 2015, section 4.1) and
Prometheus's XOR chunks (tsdb/chunkenc/xor.go) do it.

Why: a raw sample costs 14 bytes as a SQLite row and 8 in PostgreSQL's chunk arrays; a
collector's series moves in steps of the same interval and its values repeat or change in a few
bits, so a sample needs about one bit for its time and one to a dozen for its value.

The stream, most significant bit first:

- a header: the sample count (32 bits), the first time (64, two's complement) and the first
  value (its 64 IEEE-754 bits);
- per later sample, its time as the delta of deltas D (the first delta counts from 0):
  ``0`` for D = 0; ``10`` + 7 bits for D in [-63, 64]; ``110`` + 9 bits for [-255, 256];
  ``1110`` + 12 bits for [-2047, 2048]; ``1111`` + 64 bits otherwise (a gap of days);
- then its value XORed with the previous one: ``0`` when equal; ``10`` + the meaningful bits when
  they fit in the previous window of leading and trailing zeros; else ``11`` + 5 bits of leading
  zeros (at most 31) + 6 bits of length (64 written as 0) + that many bits.

The codec is lossless: every float's bits come back, NaN and -0.0 included. It is pure
Python, so it is for closed spans written once and read now and then (history older than the
newest hours), not for the ingest path.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

_D = struct.Struct(">d")
_Q = struct.Struct(">Q")
_MASK64 = (1 << 64) - 1
# (prefix, its length, payload bits, the lowest and highest D it holds)
_DOD_BUCKETS = ((0b10, 2, 7, -63, 64), (0b110, 3, 9, -255, 256), (0b1110, 4, 12, -2047, 2048))


class CorruptBlock(ValueError):
    """A block that ends before its count of samples, or whose header cannot be read."""


def _bits(v: float) -> int:
    return int(_Q.unpack(_D.pack(v))[0])


def _float(b: int) -> float:
    return float(_D.unpack(_Q.pack(b))[0])


class _Writer:
    """Bits appended most significant first; whole 64-bit words moved out as they fill, so
    the pending int stays small (appending to one growing int is quadratic)."""

    def __init__(self) -> None:
        self.out = bytearray()
        self.acc = 0
        self.n = 0

    def put(self, value: int, width: int) -> None:
        self.acc = (self.acc << width) | (value & ((1 << width) - 1))
        self.n += width
        if self.n >= 64:
            self.n -= 64
            self.out += (self.acc >> self.n).to_bytes(8, "big")
            self.acc &= (1 << self.n) - 1

    def done(self) -> bytes:
        if self.n:
            pad = -self.n % 8
            self.out += (self.acc << pad).to_bytes((self.n + pad) // 8, "big")
        return bytes(self.out)


def _signed(v: int) -> int:
    """64 bits as two's complement."""
    return v - (1 << 64) if v >> 63 else v


def _in_bucket(v: int, width: int) -> int:
    """A bucket's payload back to its D: as Prometheus reads it, the buckets hold [-2^(w-1)+1,
    2^(w-1)], so the one pattern 1000…0 is the bucket's highest value, not its lowest."""
    return v - (1 << width) if v > 1 << (width - 1) else v


def encode(times: Sequence[int], values: Sequence[float]) -> bytes:
    """One span's samples, in time order, as a block; ``decode`` gives them back."""
    if len(times) != len(values):
        raise ValueError(f"{len(times)} times for {len(values)} values")
    if not times:
        raise ValueError("an empty span has no block")
    w = _Writer()
    w.put(len(times), 32)
    w.put(times[0], 64)
    prev = _bits(values[0])
    w.put(prev, 64)
    prev_t, prev_delta = times[0], 0
    lead, trail = -1, 0  # no window yet
    for t, v in zip(times[1:], values[1:], strict=True):
        delta = t - prev_t
        if delta <= 0:
            raise ValueError(f"times must rise: {t} after {prev_t}")
        _put_dod(w, delta - prev_delta)
        prev_t, prev_delta = t, delta
        cur = _bits(v)
        xor = cur ^ prev
        prev = cur
        if not xor:
            w.put(0, 1)
            continue
        lz = min(64 - xor.bit_length(), 31)
        tz = (xor & -xor).bit_length() - 1
        if lead >= 0 and lz >= lead and tz >= trail:
            w.put(0b10, 2)
            w.put(xor >> trail, 64 - lead - trail)
            continue
        lead, trail = lz, tz
        width = 64 - lz - tz
        w.put(0b11, 2)
        w.put(lz, 5)
        w.put(width & 63, 6)  # 64 meaningful bits are written as 0
        w.put(xor >> tz, width)
    return w.done()


def _put_dod(w: _Writer, dod: int) -> None:
    if dod == 0:
        w.put(0, 1)
        return
    for prefix, plen, width, lo, hi in _DOD_BUCKETS:
        if lo <= dod <= hi:
            w.put(prefix, plen)
            w.put(dod, width)
            return
    w.put(0b1111, 4)
    w.put(dod & _MASK64, 64)


def decode(block: bytes) -> tuple[list[int], list[float]]:
    """A block's times and values; `CorruptBlock` names where a damaged block ends.

    The block is read as a string of '0' and '1': a bit is one index and a field one slice and
    int(…, 2), about three times faster in Python than shifting words out of the bytes (a 12-hour
    raw chart decodes six blocks a series)."""
    limit = len(block) * 8
    if limit < 160:
        raise CorruptBlock(f"a block of {len(block)} bytes has no header" if len(block) < 4 else
                           f"block ends at bit {limit}, a read wants bits 0-160")
    bits = format(int.from_bytes(block, "big"), f"0{limit}b")
    count = int(bits[:32], 2)
    t = _signed(int(bits[32:96], 2))
    cur = int(bits[96:160], 2)
    value = _float(cur)
    times, values = [t], [value]
    delta, lead, trail, pos = 0, 0, 0, 160
    try:
        for _ in range(count - 1):
            if bits[pos] == "0":
                pos += 1
            else:  # a bucket: its prefix of 1s ends with a 0, or is 1111 and 64 bits follow
                ones = 1
                while ones < 4 and bits[pos + ones] == "1":
                    ones += 1
                width = _DOD_WIDTH[ones]
                pos += ones + (ones < 4)
                v = int(bits[pos:pos + width], 2) if pos + width <= limit else _short(limit, pos, width)
                pos += width
                delta += _signed(v) if width == 64 else _in_bucket(v, width)
            t += delta
            times.append(t)
            if bits[pos] == "1":
                if bits[pos + 1] == "1":
                    if pos + 13 > limit:
                        _short(limit, pos + 2, 11)
                    lead = int(bits[pos + 2:pos + 7], 2)
                    width = int(bits[pos + 7:pos + 13], 2) or 64
                    trail = 64 - lead - width
                    pos += 11
                pos += 2
                width = 64 - lead - trail
                if pos + width > limit:
                    _short(limit, pos, width)
                cur ^= int(bits[pos:pos + width], 2) << trail
                pos += width
                value = _float(cur)
            else:  # the same value: most samples of most series
                pos += 1
            values.append(value)
    except IndexError:
        _short(limit, pos, 1)
    return times, values


# the delta-of-delta payload width after a prefix of 1, 2, 3 or 4 ones: the buckets' own, and 64
_DOD_WIDTH = {**{plen - 1: width for _p, plen, width, _lo, _hi in _DOD_BUCKETS}, 4: 64}


def _short(limit: int, pos: int, width: int) -> int:
    raise CorruptBlock(f"block ends at bit {limit}, a read wants bits {pos}-{pos + width}")


def count(block: bytes) -> int:
    """How many samples a block holds, from its header alone."""
    if len(block) < 4:
        raise CorruptBlock(f"a block of {len(block)} bytes has no header")
    return int.from_bytes(block[:4], "big")
