"""Running counters that rackpulse books (energy, starts, bytes): a reading that jumps by more than
the device could have made since the last good one is a bad read (a register that answered 0xFFFF,
a torn 32-bit pair), logged and skipped, never stored. One such value kept by a running maximum
used to poison a year of a day book; here it is simply not taken.

A counter that really moved to a new base (a replaced gateway, a reset controller), up or down,
reads the same "impossible" value poll after poll: after ``settle`` readings that agree with each
other it becomes the new base, and the jump itself is booked nowhere.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("collectors.counters")


@dataclass
class CounterGuard:
    """``rate``: the most the counter can rise per second (a heat pump's kW in kWh/s); ``slack``:
    what it may jump at once beyond that (rounding, a whole kWh moved at midnight); ``ceiling``:
    no true reading is ever above it (a first reading is judged on it alone)."""

    rate: float
    slack: float
    ceiling: float
    settle: int = 3
    _good: dict[str, tuple[float, float]] = field(default_factory=dict)  # key -> (value, at)
    _suspect: dict[str, tuple[float, float, int]] = field(default_factory=dict)  # key -> (value, at, times)

    def seed(self, key: str, value: float, at: float) -> None:
        """A value known good (restored from the stored state)."""
        self._good[key] = (value, at)

    def most(self, seconds: float) -> float:
        return self.rate * max(seconds, 0.0) + self.slack

    def check(self, key: str, value: float, now: float) -> str | None:
        """None when `value` is plausible (and it becomes the last good one); else why it is not."""
        if not value == value or value < 0 or value > self.ceiling:  # NaN, negative, past the ceiling
            return f"{key} read {value:g}: impossible for this counter (more than {self.ceiling:g}); skipped"
        good = self._good.get(key)
        # A little below the last good one is the counter's own rounding (the ISG moving whole kWh
        # from its day register at midnight): taken, the caller holds its running total. Further
        # below is a bad read, or a counter that moved to a lower base (a controller replaced):
        # judged as a jump is, and taken as the new base once readings agree.
        if good is None or good[0] - self.slack <= value <= good[0] or (
                value > good[0] and value - good[0] <= self.most(now - good[1])):
            self._good[key] = (value, now)
            self._suspect.pop(key, None)
            return None
        seen = self._suspect.get(key)
        if seen is not None and abs(value - seen[0]) <= self.most(now - seen[1]):
            times = seen[2] + 1
            if times >= self.settle:
                log.warning("counter %s: %d readings in a row agree on %g (was %g): taken as its new base, "
                            "the jump itself booked nowhere", key, times, value, good[0])
                self._good[key] = (value, now)
                self._suspect.pop(key, None)
                return "rebased"
            self._suspect[key] = (value, now, times)
        else:
            self._suspect[key] = (value, now, 1)
        if value < good[0]:
            return (f"{key} fell from {good[0]:g} to {value:g}: a bad read, or a counter set back (it is taken as "
                    f"its new base after {self.settle} readings agree), skipped")
        return (f"{key} jumped from {good[0]:g} to {value:g} within {now - good[1]:.0f} s, more than the "
                f"device can make ({self.most(now - good[1]):g}): a bad read, skipped")


# -- every exported counter ---------------------------------------------------------------------

@dataclass(frozen=True)
class Most:
    """The most a counter can rise: `per_second` (a plug's max_watts in J/s, a link's bytes/s)
    and `slack` at once beyond that (a whole Wh or kWh a counter moves in one step)."""

    per_second: float
    slack: float = 0.0


# What a counter without a limit of its own can do at most, by its unit: far beyond any device in
# a home lab (a 400 Gbit/s link, 1,024 cores, a 100 kW load), and still what stops a read of
# 10**12 from being booked.
BY_UNIT = (("_bytes_total", Most(5e10, 1e6)), ("_seconds_total", Most(1024.0, 1.0)),
           ("_joules_total", Most(1e5, 3.6e6)))
ANY_COUNT = Most(1e9, 1000.0)  # errors, drops, restarts, flaps: events per second


def default_most(metric: str) -> Most:
    return next((m for suffix, m in BY_UNIT if metric.endswith(suffix)), ANY_COUNT)


@dataclass
class _Series:
    raw: float  # the last reading taken
    at: float
    offset: float = 0.0  # what resets and new bases moved: exported = raw + offset
    suspect: tuple[float, float, int] | None = None  # an impossible reading, when, how often in a row


@dataclass
class CounterBook:
    """The guard every exported counter of every plug-in passes (the scheduler applies it to each
    run's samples; a plug-in declares only how fast its counters can rise: `counter_limits`).

    A counter rackpulse exports never falls and never rises faster than its declared most:
    - a reading below the last one is the device's counter reset: what it counted since (the
      reading itself) is added, if it could have counted that much;
    - a rise faster than the most is a bad read: skipped, the last value exported again, and said;
      the same "impossible" reading SETTLE times in a row is a new base, the jump booked nowhere;
    - a negative reading is a bad read. (NaN and inf never get here: sane_result drops them.)
    While nothing was reset or rebased the exported value is the device's own, to the bit."""

    settle: int = 3
    _series: dict[tuple[str, str, tuple[tuple[str, str], ...]], _Series] = field(default_factory=dict)

    def forget(self, collector: str) -> None:
        """A collector a reload removed or rebuilt: its counters start again from their next reading."""
        self._series = {k: v for k, v in self._series.items() if k[0] != collector}

    def judge(self, collector: str, samples: list[Any], kinds: Any, limits: Any, now: float
              ) -> tuple[list[Any], list[str]]:
        """`samples` with every counter guarded (`kinds`: metric -> its MetricSpec; `limits`:
        metric -> Most); the words of each bad read, to be the run's warnings."""
        out, said = [], []
        for s in samples:
            spec = kinds.get(s.metric)
            if spec is None or spec.kind != "counter":
                out.append(s)
                continue
            most = limits.get(s.metric) or default_most(s.metric)
            value, why = self._take((collector, s.metric, s.labels), s.value, most, now)
            if why:
                said.append(f"{s.metric}{_labels(s.labels)}: {why}")
            if value is not None:
                out.append(s if value == s.value else type(s)(s.metric, value, s.labels))
        return out, said[:20]

    def _take(self, key: tuple[str, str, tuple[tuple[str, str], ...]], value: float, most: Most, now: float
              ) -> tuple[float | None, str | None]:
        st = self._series.get(key)
        if value < 0:
            return (None if st is None else st.raw + st.offset), f"read {_n(value)}: a counter is never negative; skipped"
        if st is None:
            self._series[key] = _Series(value, now)
            return value, None
        allowed = most.per_second * max(now - st.at, 0.0) + most.slack
        step = value - st.raw if value >= st.raw else value  # a reset counted `value` since
        if step <= allowed:
            if value < st.raw:
                st.offset += st.raw
            st.raw, st.at, st.suspect = value, now, None
            return value + st.offset, None
        exported = st.raw + st.offset
        seen = st.suspect
        if seen is not None and abs(value - seen[0]) <= most.per_second * max(now - seen[1], 0.0) + most.slack:
            if seen[2] + 1 >= self.settle:
                st.offset = exported - value  # the new base: the jump itself booked nowhere
                st.raw, st.at, st.suspect = value, now, None
                return exported, f"{self.settle} readings in a row agree on {_n(value)}: taken as its new base, " \
                                 "the jump booked nowhere"
            st.suspect = (value, now, seen[2] + 1)
        else:
            st.suspect = (value, now, 1)
        return exported, (f"moved from {_n(st.raw)} to {_n(value)} in {now - st.at:.0f} s, more than it can "
                          f"({_n(allowed)}): a bad read, skipped")


def _n(x: float) -> str:
    """A reading in words: whole numbers with thousands' commas, not 2.592e+08."""
    return f"{x:,.0f}" if abs(x) >= 1e5 or x == int(x) else f"{x:g}"


def _labels(labels: tuple[tuple[str, str], ...]) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in labels) + "}" if labels else ""
