"""The lab's energy watched between pages: the bill as a gauge on /metrics, and the two energy
rules, `energy_budget` (the month's projected bill past `[energy] monthly_budget`) and
`power_above_baseline` (a source drawing well above its own usual: a disk array that stopped
spinning down, a VM spinning in a loop).

Both read the store, so they are worked out on a slower clock than the alert tick: the report
every few minutes (a month's projection does not move faster), each source's baseline every
hour. The draw now is the snapshot's, read on every tick."""

from __future__ import annotations

import logging
import statistics
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.alerting.engine import Condition
from app.energy.bill import month_start
from app.energy.config import EnergyConfig
from app.energy.ledger import POWER, EnergyReport, report
from app.energy.reading import SeriesStore
from app.exposition import render_families
from collectors.base import MetricSpec, Sample

log = logging.getLogger("app.energy")

COST = "rackpulse_energy_cost"
SPECS = {COST: MetricSpec(
    "What a source's energy cost in a period (today, month, last_month) and the month's bill at this pace "
    "(projected_month), in the currency of [energy]; source=\"lab\" counts each source once.")}
BLOCK = "energy"  # its part of the host's /metrics, beside the collectors'
REPORT_EVERY = 300.0
BASELINE_EVERY = 3600.0
BUDGET_AFTER_DAYS = 3  # before that a projection is one cold day times thirty


@dataclass
class EnergyWatch:
    """One per server, for its own host's sources. Never raises: a store that cannot be read
    leaves the last figures standing and says so once."""

    report_every: float = REPORT_EVERY
    baseline_every: float = BASELINE_EVERY
    last: EnergyReport | None = None
    _report_at: float = float("-inf")
    _baseline_at: float = float("-inf")
    baselines: dict[str, float] = field(default_factory=dict)  # source -> median watts over its days
    _failing: bool = False

    def update(self, store: SeriesStore, snap: Any, cfg: EnergyConfig, now: float) -> list[Condition]:
        """Refresh what is due; the conditions of this moment."""
        try:
            if now - self._report_at >= self.report_every:
                self._report_at = now
                self.last = report(store, dict(snap.samples), cfg, now)
                snap.blocks[BLOCK] = render_families(cost_samples(self.last), SPECS, snap.host)
                snap.rebuild_metrics()
            if now - self._baseline_at >= self.baseline_every:
                self._baseline_at = now
                self.baselines = baselines(store, now, cfg.baseline_days)
            self._failing = False
        except Exception as exc:  # noqa: BLE001 - the alert tick goes on without energy figures
            if not self._failing:
                log.warning("energy figures not worked out: %s", exc)
                self._failing = True
        watts = {dict(s.labels).get("source", ""): s.value for samples in list(snap.samples.values())
                 for s in samples if s.metric == POWER}
        out = above_baseline(watts, self.baselines, cfg, snap.host)
        if self.last is not None:
            out += over_budget(self.last, cfg, now, snap.host)
        return out


def cost_samples(r: EnergyReport) -> list[Sample]:
    out = []
    for b in [*r.sources, r.lab]:
        for period, tally in (("today", b.today), ("month", b.month), ("last_month", b.last_month)):
            out.append(Sample.of(COST, round(tally.cost, 4), source=b.source, period=period, currency=r.currency))
    out.append(Sample.of(COST, round(r.projected, 2), source="lab", period="projected_month", currency=r.currency))
    return out


def baselines(store: SeriesStore, now: float, days: int) -> dict[str, float]:
    """Each source's median draw over its last `days` days, from hourly means; only for a source
    with at least two days of them (a plug added yesterday has no usual yet)."""
    out = {}
    for sid, labels in store.series_of(POWER):
        source = labels.get("source")
        points = store.history(sid, int(now) - days * 86400, int(now), max_points=days * 24 + 24)
        if source and len(points) >= 48 and points[-1].ts - points[0].ts >= 2 * 86400:
            out[source] = statistics.median(p.vavg for p in points)
    return out


def above_baseline(watts: dict[str, float], usual: dict[str, float], cfg: EnergyConfig, host: str) -> list[Condition]:
    out = []
    for source, now_w in sorted(watts.items()):
        median = usual.get(source)
        if median is None or median <= 0:
            continue
        # a ratio alone would call a 3 W plug at 6 W a runaway: the rise must be worth watching too
        if now_w > cfg.baseline_ratio * median and now_w - median >= cfg.baseline_min_watts:
            out.append(Condition("power_above_baseline", source,
                                 f"{source} draws {now_w:.0f} W, {now_w / median:.1f}× its usual "
                                 f"{median:.0f} W (the median of its last {cfg.baseline_days} days)",
                                 {"host": host, "source": source}))
    return out


def over_budget(r: EnergyReport, cfg: EnergyConfig, now: float, host: str) -> list[Condition]:
    budget = cfg.monthly_budget
    if budget is None or r.projected <= budget:
        return []
    local = datetime.fromtimestamp(now, cfg.zone())
    days = (local - month_start(local)).total_seconds() / 86400
    if days < BUDGET_AFTER_DAYS and r.lab.month.cost <= budget:
        return []
    cur = r.currency
    return [Condition("energy_budget", "lab",
                      f"the lab's energy this month is on course for {r.projected:.2f} {cur}, over the budget "
                      f"of {budget:.2f} {cur} ({r.lab.month.cost:.2f} {cur} so far, {r.lab.month.kwh:.0f} kWh "
                      f"in {days:.0f} days)", {"host": host, "source": "lab"})]
