"""The Gorilla codec (app/storage/gorilla.py): lossless on every float and every time step, as
small as the paper says on a collector's series, and a damaged block named, never misread."""

from __future__ import annotations

import math
import random
import struct

import pytest

from app.storage import gorilla

STEP = 30


def bits(values: list[float]) -> list[int]:
    return [struct.unpack(">Q", struct.pack(">d", v))[0] for v in values]


def round_trip(times: list[int], values: list[float]) -> bytes:
    block = gorilla.encode(times, values)
    got_t, got_v = gorilla.decode(block)
    assert got_t == times
    assert bits(got_v) == bits(values)  # bit for bit: NaN and -0.0 compare by their bits
    assert gorilla.count(block) == len(times)
    return block


@pytest.mark.parametrize("values", [
    [1.0],
    [0.0, -0.0, 0.0],
    [math.nan, math.inf, -math.inf, 5e-324, 1.7976931348623157e308, -1.0],
    [float(2**53), float(2**53 + 2), 1e-300, 1e300],
    [0.1, 0.2, 0.30000000000000004, 0.1],
], ids=["one sample", "signed zeros", "non-finite and extremes", "large and tiny", "decimals"])
def test_every_float_comes_back_bit_for_bit(values: list[float]) -> None:
    round_trip([1_790_000_000 + STEP * i for i in range(len(values))], values)


@pytest.mark.parametrize("steps", [
    [30] * 10,
    [30, 29, 31, 30, 94, 30],  # a late run, then back on the beat
    [30, 30 + 64, 30 + 64 - 63, 30],  # the first bucket's two edges: D = +64, then D = -63
    [30, 30 + 65, 30, 300, 30 + 256 + 300, 30],  # just past them: the second bucket and its edge
    [1, 2048 + 1, 1, 2048 + 1 + 2049],  # the third bucket's edge, then 64 bits
    [86_400 * 365 * 50, 1, 2**40],  # gaps of decades
], ids=["on the beat", "jitter", "first bucket's edges", "second bucket", "third bucket and beyond",
        "huge gaps"])
def test_every_time_step_comes_back_whatever_its_delta_of_deltas(steps: list[int]) -> None:
    times = [1_790_000_000]
    for s in steps:
        times.append(times[-1] + s)
    round_trip(times, [float(i % 3) for i in range(len(times))])


def test_times_before_1970_and_far_ahead_come_back() -> None:
    round_trip([-2**62, -2**62 + 30, 0, 2**62], [1.0, 2.0, 3.0, 4.0])


def test_random_spans_of_every_shape_come_back() -> None:
    rng = random.Random(68)
    for _ in range(300):
        n = rng.randint(1, 400)
        t, times = rng.randint(0, 2**40), []
        for _ in range(n):
            times.append(t)
            t += rng.choice([1, 29, 30, 30, 30, 31, 300, 4000, 10**7])
        pick = rng.choice([
            lambda: rng.gauss(40, 5), lambda: float(rng.randint(0, 3)), lambda: rng.uniform(-1e12, 1e12),
            lambda: struct.unpack(">d", rng.randbytes(8))[0],  # any 64 bits, NaN payloads included
        ])
        round_trip(times, [pick() for _ in range(n)])


@pytest.mark.parametrize("name, values, at_most", [
    ("a constant (83 % of the demo's series)", [1.0] * 240, 0.35),
    ("a temperature in whole degrees", [float(40 + (i // 20) % 3) for i in range(240)], 0.5),
    ("a counter climbing by the step", [float(3_600_000 + STEP * i) for i in range(240)], 2.5),
], ids=["constant", "whole degrees", "climbing counter"])
def test_a_two_hour_span_of_a_collectors_series_takes_a_few_bits_a_sample(
        name: str, values: list[float], at_most: float) -> None:
    block = round_trip([1_790_000_000 + STEP * i for i in range(240)], values)
    assert len(block) / 240 <= at_most, f"{name}: {len(block) / 240:.2f} bytes a sample"


def test_a_truncated_block_is_named_not_misread() -> None:
    block = gorilla.encode([STEP * i for i in range(100)], [math.sin(i) for i in range(100)])
    with pytest.raises(gorilla.CorruptBlock, match="block ends at bit"):
        gorilla.decode(block[: len(block) // 2])
    with pytest.raises(gorilla.CorruptBlock, match="has no header"):
        gorilla.count(b"\x00\x01")


def test_a_block_cut_at_any_byte_is_a_corrupt_block_never_another_error() -> None:
    """The decoder reads a bit string and leans on IndexError past its end: every cut, inside a
    field or between two, must still come out as CorruptBlock (or as fewer bytes' worth of
    samples, never a wrong count)."""
    times = [1_790_000_000 + STEP * i + 400 * (i // 7) + 90_000 * (i // 50) for i in range(120)]  # every bucket
    values = [float(i % 3) if i % 5 else math.sin(i) * 1e6 for i in range(120)]
    block = gorilla.encode(times, values)
    for cut in range(len(block)):
        with pytest.raises(gorilla.CorruptBlock):
            gorilla.decode(block[:cut])


@pytest.mark.parametrize("times, values, message", [
    ([], [], "empty span"),
    ([1, 2], [1.0], "2 times for 1 values"),
    ([30, 30], [1.0, 2.0], "times must rise: 30 after 30"),
    ([60, 30], [1.0, 2.0], "times must rise: 30 after 60"),
], ids=["empty", "lengths differ", "a repeated time", "time going back"])
def test_a_span_that_cannot_be_a_block_is_refused_with_its_reason(
        times: list[int], values: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gorilla.encode(times, values)
