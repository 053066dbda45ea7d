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
