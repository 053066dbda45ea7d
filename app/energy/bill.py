"""A month's energy and its cost from hourly energy, per source: pure arithmetic, no store.

Energy is priced by the hour it was used in (local time), by the minute: an hour a band edge cuts
(22:30) is priced at each band's share of its minutes, the energy taken as even over the hour. The month's projection is what it
cost so far, spread over the days the month has."""

from __future__ import annotations

import calendar
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, tzinfo

from app.energy.config import EnergyConfig

J_PER_KWH = 3.6e6


@dataclass
class Tally:
    kwh: float = 0.0
    cost: float = 0.0

    def add(self, joules: float, price: float) -> None:
        self.kwh += joules / J_PER_KWH
        self.cost += joules / J_PER_KWH * price


@dataclass
class SourceBill:
    source: str
    inside: str | None  # the source that already counts this one's energy
    today: Tally = field(default_factory=Tally)
    month: Tally = field(default_factory=Tally)
    last_month: Tally = field(default_factory=Tally)


def month_start(moment: datetime) -> datetime:
    return moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def previous_month_start(moment: datetime) -> datetime:
    first = month_start(moment)
    return first.replace(year=first.year - 1, month=12) if first.month == 1 else first.replace(month=first.month - 1)


def bills(hourly: Mapping[str, Iterable[tuple[int, float]]], cfg: EnergyConfig, now: float,
          tz: tzinfo | None) -> list[SourceBill]:
    """Per source: today, this month and last month, from (hour's start as epoch seconds, joules)."""
    local_now = datetime.fromtimestamp(now, tz)
    today = local_now.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()
    this_month = month_start(local_now).timestamp()
    last_month = previous_month_start(local_now).timestamp()
    out = []
    prices: dict[int, float] = {}  # by the hour's minute of the day: 60 look-ups once, not per hour
    for source, hours in hourly.items():
        # inside a source this host does not have (the UPS is on another host, or gone): nothing
        # else counts its energy, so the lab does
        holder = cfg.inside.get(source)
        b = SourceBill(source, holder if holder in hourly else None)
        for start, joules in hours:
            if start < last_month or start >= now:
                continue
            local = datetime.fromtimestamp(start, tz)
            minute = local.hour * 60 + local.minute
            price = prices.get(minute)
            if price is None:
                price = prices[minute] = cfg.price_of_hour(minute)
            if start >= this_month:
                b.month.add(joules, price)
                if start >= today:
                    b.today.add(joules, price)
            else:
                b.last_month.add(joules, price)
        out.append(b)
    return out


def lab_total(bills_: Iterable[SourceBill]) -> SourceBill:
    """The lab's: every source not inside another, counted once."""
    total = SourceBill("lab", None)
    for b in bills_:
        if b.inside is None:
            for mine, theirs in ((total.today, b.today), (total.month, b.month), (total.last_month, b.last_month)):
                mine.kwh += theirs.kwh
                mine.cost += theirs.cost
    return total


def projected(month_cost: float, now: float, tz: tzinfo | None) -> float:
    """The month's bill if the rest of it goes as it went so far."""
    local = datetime.fromtimestamp(now, tz)
    start = month_start(local)
    elapsed = (local - start).total_seconds()
    length = calendar.monthrange(local.year, local.month)[1] * 86400
    return month_cost * length / elapsed if elapsed > 0 else 0.0
