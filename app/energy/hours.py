"""A source's energy by the hour, held as running sums: the energy (or the cost) of any span, a day,
a month, a bar of the chart, is two look-ups, not a walk over its hours. The bill and the chart ask
for a few dozen spans a view; a year of a source is 8,760 hours.

Pure arithmetic, no store: app/energy/ledger.py fills these from the store (and keeps the closed
hours between views, app/energy/book.py)."""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left
from collections.abc import Iterable
from datetime import datetime, tzinfo

from app.energy.config import EnergyConfig

J_PER_KWH = 3.6e6


class Pricing:
    """What a kWh costs by the hour it was used in, for one [energy] and time zone: the price of an
    hour depends on its local minute of the day (a band from 22:30 prices half the 22:00 hour)."""

    def __init__(self, cfg: EnergyConfig, tz: tzinfo | None) -> None:
        self.cfg, self.tz = cfg, tz
        # what an hour table's priced sums are kept under: a reloaded tariff prices them again
        self.key = (cfg.timezone, cfg.price_per_kwh, tuple((t.start, t.to, t.price) for t in cfg.tariffs))
        self._by_minute: dict[int, float] = {}  # 60 look-ups of the bands once, not per hour
        # no bands: every hour costs the same, and a span's cost is its energy times the price
        self.flat = None if cfg.tariffs else cfg.price_per_kwh

    def per_kwh(self, hour_start: int) -> float:
        local = datetime.fromtimestamp(hour_start, self.tz)
        minute = local.hour * 60 + local.minute
        price = self._by_minute.get(minute)
        if price is None:
            price = self._by_minute[minute] = self.cfg.price_of_hour(minute)
        return price


class HourTable:
    """Hours in order as (start, joules), with the running sum of their joules (and, once a
    pricing asks, of their cost). Not changed once made: a view may hold it while the ledger
    makes the next one with the hours the fold closed since (`extended`)."""

    def __init__(self, pairs: Iterable[tuple[int, float]] = ()) -> None:
        self.starts = array("q")
        self.joules_of = array("d")
        self._cum = array("d", [0.0])  # _cum[i]: the joules of the first i hours
        # per pricing: the first hour priced, and the running cost from it
        self._priced: dict[tuple[object, ...], tuple[Pricing, int, array[float]]] = {}
        self._append(pairs)

    def __len__(self) -> int:
        return len(self.starts)

    def _append(self, pairs: Iterable[tuple[int, float]]) -> int:
        first, total = len(self.starts), self._cum[-1]
        for start, joules in pairs:
            if self.starts and start <= self.starts[-1]:
                raise ValueError(f"hour {start} is not after {self.starts[-1]}: hours are added in order")
            self.starts.append(start)
            self.joules_of.append(joules)
            total += joules
            self._cum.append(total)
        return first

    def extended(self, pairs: Iterable[tuple[int, float]]) -> HourTable:
        """A new table: these hours, each after the last one held, added (the fold closed them)."""
        out = HourTable()
        out.starts, out.joules_of, out._cum = array("q", self.starts), array("d", self.joules_of), array("d", self._cum)
        first = out._append(pairs)
        for key, (pricing, offset, cum) in self._priced.items():  # priced on: the new hours only
            out._priced[key] = (pricing, offset, out._price(pricing, array("d", cum), first))
        return out

    def _price(self, pricing: Pricing, cum: array[float], first: int) -> array[float]:
        total = cum[-1]
        for i in range(first, len(self.starts)):
            total += self.joules_of[i] / J_PER_KWH * pricing.per_kwh(self.starts[i])
            cum.append(total)
        return cum

    def _span(self, a: float, b: float) -> tuple[int, int]:
        return bisect_left(self.starts, math.ceil(a)), bisect_left(self.starts, math.ceil(b))

    def joules(self, a: float, b: float) -> float:
        """The energy of the hours that start in [a, b)."""
        i, j = self._span(a, b)
        return self._cum[j] - self._cum[i] if j > i else 0.0

    def cost(self, a: float, b: float, pricing: Pricing) -> float:
        """What the hours that start in [a, b) cost, each at its own hour's price."""
        i, j = self._span(a, b)
        if j <= i:
            return 0.0
        if pricing.flat is not None:
            return (self._cum[j] - self._cum[i]) / J_PER_KWH * pricing.flat
        kept = self._priced.get(pricing.key)
        if kept is None or kept[1] > i:
            # priced from the first hour asked for (a bill asks for two months of a year's table);
            # one pricing at a time, the config's; two views at once price twice, harmlessly
            kept = (pricing, i, self._price(pricing, array("d", [0.0]), i))
            self._priced = {pricing.key: kept}
        _pricing, offset, cum = kept
        return cum[j - offset] - cum[i - offset]


class SourceHours:
    """One source's hours: the closed ones (kept between views) and the newest (read fresh), and a
    source stored as several series (its plug-in moved hosts' names) is their sum."""

    def __init__(self, *tables: HourTable) -> None:
        self.tables = list(tables)

    @classmethod
    def of(cls, pairs: Iterable[tuple[int, float]]) -> SourceHours:
        """From (hour's start, joules) in any order; two of the same hour are summed."""
        merged: dict[int, float] = {}
        for start, joules in pairs:
            merged[int(start)] = merged.get(int(start), 0.0) + joules
        return cls(HourTable(sorted(merged.items())))

    def joules(self, a: float, b: float) -> float:
        return sum(t.joules(a, b) for t in self.tables)

    def kwh(self, a: float, b: float) -> float:
        return self.joules(a, b) / J_PER_KWH

    def cost(self, a: float, b: float, pricing: Pricing) -> float:
        return sum(t.cost(a, b, pricing) for t in self.tables)

    def pairs(self) -> list[tuple[int, float]]:
        """Every hour as (start, joules), in order (an hour of two series summed): for a test, a script."""
        merged: dict[int, float] = {}
        for t in self.tables:
            for start, joules in zip(t.starts, t.joules_of, strict=True):
                merged[start] = merged.get(start, 0.0) + joules
        return sorted(merged.items())


def as_hours(hours: SourceHours | Iterable[tuple[int, float]]) -> SourceHours:
    return hours if isinstance(hours, SourceHours) else SourceHours.of(hours)
