"""Each source's energy by the hour, read from the store, and the report the /energy page and
/api/v1/energy show: the same figures, worked out once.

A source is a series of rackpulse_energy_joules_total (its `source` label): a counter that never
falls (a plug's, kept across its reboots). For a counter the highest value of an hour is where it
stood at the hour's end, so an hour's energy is that minus the hour before's. Sources that report
watts only are integrated where they are collected and stored as such a counter."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from app.energy.bill import SourceBill, bills, lab_total, previous_month_start, projected
from app.energy.book import Closed, books, energy_of
from app.energy.config import EnergyConfig
from app.energy.hours import HourTable, SourceHours
from app.energy.reading import HourPoint, Reading, SeriesStore

clock = time.time  # what "now" is for the report (a test's month is a fixed one)
ENERGY = "rackpulse_energy_joules_total"
POWER = "rackpulse_power_watts"


def hourly(points: Sequence[HourPoint]) -> list[tuple[int, float]]:
    """(hour's start, joules) from a counter's hourly points (ts, vmin, vavg, vmax)."""
    return energy_of(points)


def hourly_by_source(store: SeriesStore, since: float, now: float) -> dict[str, SourceHours]:
    """Each source's hours from `since` on: those the hourly fold closed kept between views
    (app/energy/book.py), the newer ones read fresh from the raw samples, all series in one query.
    A source stored as several series (its plug-in moved hosts' names, say) is their sum."""
    fold, generation = store.hourly_fold()
    first = int(since) // 3600 * 3600
    kept = books(store)
    named = [(sid, labels["source"]) for sid, labels in store.series_of(ENERGY) if labels.get("source")]
    closed = {sid: kept.closed(store, sid, first, fold, generation) if fold > first else Closed(HourTable(), None)
              for sid, _ in named}
    start = max(fold, first)
    # the hour before the newest from the raw samples too, where no closed hour gives the level
    raw = store.raw_hours([sid for sid, _ in named], start - 3600, int(now) + 1) if now >= start else {}
    out: dict[str, SourceHours] = {}
    for sid, source in named:
        level = closed[sid].level
        newest = [(t, j) for t, j in energy_of(raw.get(sid, ()), level) if t >= start]
        out.setdefault(source, SourceHours()).tables += [closed[sid].table, HourTable(newest)]
    return out


@dataclass
class EnergyReport:
    currency: str
    sources: list[SourceBill]
    lab: SourceBill
    watts: dict[str, float]  # now, per source that reports its draw
    projected: float  # the month's bill at this pace
    budget: float | None
    shares: dict[str, float]  # of the lab's energy this month, per source not inside another
    with_power: set[str]  # the sources that report their draw, not only a counter (a heat pump's kWh)


def report_since(now: float, cfg: EnergyConfig) -> float:
    """The first hour the report reads: last month's start (two months of hours at most)."""
    return previous_month_start(datetime.fromtimestamp(now, cfg.zone())).timestamp()


def report(store: SeriesStore, snapshot_samples: Mapping[str, Sequence[Reading]], cfg: EnergyConfig, now: float | None = None,
           hours: Mapping[str, SourceHours] | None = None) -> EnergyReport:
    """`hours`: what a page already read for its chart too (from report_since or earlier)."""
    now = now or clock()
    tz = cfg.zone()
    if hours is None:
        hours = hourly_by_source(store, report_since(now, cfg), now)
    sources = bills(hours, cfg, now, tz)
    lab = lab_total(sources)
    watts = {dict(s.labels).get("source", ""): s.value for samples in snapshot_samples.values()
             for s in samples if s.metric == POWER}
    counted = [b for b in sources if b.inside is None]
    shares = {b.source: (b.month.kwh / lab.month.kwh if lab.month.kwh else 0.0) for b in counted}
    return EnergyReport(cfg.currency, sorted(sources, key=lambda b: -b.month.kwh), lab, watts,
                        projected(lab.month.cost, now, tz), cfg.monthly_budget, shares,
                        {labels.get("source", "") for _sid, labels in store.series_of(POWER)})
