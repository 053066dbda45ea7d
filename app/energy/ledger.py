"""Each source's energy by the hour, read from the store, and the report the /energy page and
/api/v1/energy show: the same figures, worked out once.

A source is a series of rackpulse_energy_joules_total (its `source` label): a counter that never
falls (a plug's, kept across its reboots). For a counter the highest value of an hour is where it
stood at the hour's end, so an hour's energy is that minus the hour before's. Sources that report
watts only are integrated where they are collected and stored as such a counter."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.energy.bill import SourceBill, bills, lab_total, previous_month_start, projected
from app.energy.config import EnergyConfig
from app.energy.reading import HourPoint, SeriesStore

clock = time.time  # what "now" is for the report (a test's month is a fixed one)
ENERGY = "rackpulse_energy_joules_total"
POWER = "rackpulse_power_watts"


def hourly(points: Sequence[HourPoint]) -> list[tuple[int, float]]:
    """(hour's start, joules) from a counter's hourly points (ts, vmin, vavg, vmax)."""
    out = []
    for i, p in enumerate(points):
        used = p.vmax - (points[i - 1].vmax if i else p.vmin)
        out.append((int(p.ts), max(used, 0.0)))  # a counter that fell (a reset not caught) counts nothing
    return out


def hourly_by_source(store: SeriesStore, since: float, now: float) -> dict[str, list[tuple[int, float]]]:
    """Each source's (hour's start, joules) from `since` on, read from the hourly rollups (and the
    raw samples of the hours not folded yet). A source stored as several series (its plug-in
    moved hosts' names, say) is their sum."""
    out: dict[str, list[tuple[int, float]]] = {}
    for sid, labels in store.series_of(ENERGY):
        source = labels.get("source")
        if source:
            span = int(now) + 1 - int(since) + 3600
            points = store.history(sid, int(since) - 3600, int(now) + 1, max_points=span // 3600 + 24)
            out.setdefault(source, []).extend(hourly(points))
    for rows in out.values():
        rows.sort()
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


def report(store: SeriesStore, snapshot_samples: dict[str, list[Any]], cfg: EnergyConfig, now: float | None = None) -> EnergyReport:
    now = now or clock()
    tz = cfg.zone()
    since = int(previous_month_start(datetime.fromtimestamp(now, tz)).timestamp())
    # two months of hours: 1,488 points a source at most
    sources = bills(hourly_by_source(store, since, now), cfg, now, tz)
    lab = lab_total(sources)
    watts = {dict(s.labels).get("source", ""): s.value for samples in snapshot_samples.values()
             for s in samples if s.metric == POWER}
    counted = [b for b in sources if b.inside is None]
    shares = {b.source: (b.month.kwh / lab.month.kwh if lab.month.kwh else 0.0) for b in counted}
    return EnergyReport(cfg.currency, sorted(sources, key=lambda b: -b.month.kwh), lab, watts,
                        projected(lab.month.cost, now, tz), cfg.monthly_budget, shares,
                        {labels.get("source", "") for _sid, labels in store.series_of(POWER)})
