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
from app.energy.hours import J_PER_KWH, Pricing, SourceHours, as_hours

__all__ = ["J_PER_KWH", "SourceBill", "Tally", "bills", "lab_total", "month_start", "previous_month_start", "projected"]


@dataclass
class Tally:
    kwh: float = 0.0
    cost: float = 0.0


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


def bills(hourly: Mapping[str, SourceHours | Iterable[tuple[int, float]]], cfg: EnergyConfig, now: float,
          tz: tzinfo | None) -> list[SourceBill]:
    """Per source: today, this month and last month, from its hours (or (hour's start as epoch
    seconds, joules) pairs): each period two look-ups of the hours' running sums."""
    local_now = datetime.fromtimestamp(now, tz)
    today = local_now.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()
    this_month = month_start(local_now).timestamp()
    last_month = previous_month_start(local_now).timestamp()
    pricing = Pricing(cfg, tz)
    out = []
    for source, given in hourly.items():
        hours = as_hours(given)
        # inside a source this host does not have (the UPS is on another host, or gone): nothing
        # else counts its energy, so the lab does
        holder = cfg.inside.get(source)
        b = SourceBill(source, holder if holder in hourly else None)
        for tally, a, z in ((b.today, today, now), (b.month, this_month, now), (b.last_month, last_month, this_month)):
            tally.kwh, tally.cost = hours.kwh(a, z), hours.cost(a, z, pricing)
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
