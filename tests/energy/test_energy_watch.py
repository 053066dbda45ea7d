"""The energy figures between pages: the bill as a gauge on /metrics, the month's projection past
its budget as `energy_budget`, a source drawing well above its own usual as `power_above_baseline`,
through the real alert engine and a real SQLite store (the counters of test_energy_bill)."""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from app.alerting.conditions import BUILTIN
from app.config import load_config
from app.energy.watch import EnergyWatch
from app.runtime import Runtime
from app.storage.base import RES_1H
from app.storage.db import make_engine, upgrade
from app.storage.store import Store, labels_key
from collectors.base import Sample
from tests.energy.test_energy_bill import BERLIN, NOW, config, store_counters


def runtime(tmp_path: Path, **energy: Any) -> Runtime:
    cfg = config(f"sqlite:///{tmp_path / 'db.sqlite'}")
    if energy:
        cfg = load_config(None, {**cfg.model_dump(mode="json", exclude={"alerts"}), "storage": {"url": cfg.storage.url},
                                 "energy": {**cfg.energy.model_dump(by_alias=True), **energy}})
    upgrade(cfg.storage.url)
    return Runtime(cfg, collect=False, migrate=False)


def test_the_months_bill_is_a_gauge_on_metrics_and_its_projection_past_the_budget_an_alert(tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    store_counters(rt.store)
    conds = rt.energy.update(rt.store, rt.snap, rt.cfg.energy, NOW)
    metrics = rt.snap.metrics.decode()
    # the figures worked out by hand in test_energy_bill: 24.33 EUR so far, 50.34 at this pace
    assert 'rackpulse_energy_cost{host="nas",currency="EUR",period="projected_month",source="lab"} 50.34' in metrics
    assert 'rackpulse_energy_cost{host="nas",currency="EUR",period="month",source="lab"} 24.33' in metrics
    assert 'period="month",source="r720"' in metrics  # inside the UPS: its own cost shown, the lab's counts it once
    [budget] = [c for c in conds if c.rule == "energy_budget"]
    assert budget.summary.startswith("the lab's energy this month is on course for 50.34 EUR, over the budget "
                                     "of 45.00 EUR (24.33 EUR so far")
    alerting = rt.get_alerting()
    assert alerting is not None
    alerting.tick(rt.snap, NOW, extra=conds, deliver=False)
    assert [(a.rule, a.state) for a in alerting.active(NOW)] == [("energy_budget", "firing")]


def test_a_projection_of_the_months_first_days_is_not_called_over_budget_until_the_cost_itself_is(
        tmp_path: Path) -> None:
    rt = runtime(tmp_path)
    store_counters(rt.store)
    second = datetime(2026, 11, 2, 12, 0, tzinfo=BERLIN).timestamp()  # 36 hours: 2.5 EUR, "75 EUR" at this pace
    assert EnergyWatch().update(rt.store, rt.snap, rt.cfg.energy, second) == []
    rt2 = runtime(tmp_path / "b", monthly_budget=2.0)
    store_counters(rt2.store)
    [c] = EnergyWatch().update(rt2.store, rt2.snap, rt2.cfg.energy, second)
    assert c.rule == "energy_budget" and "over the budget of 2.00 EUR" in c.summary


def store_power(store: Any, usual: dict[str, float], days: int = 7) -> None:
    """A week of hourly means of each source's draw, as the rollups hold them."""
    with store.engine.begin() as conn:
        ids = store.series_ids(conn, [("rackpulse_power_watts",
                                       labels_key(Sample.of("rackpulse_power_watts", 0, source=s).labels))
                                      for s in usual])
    rows = []
    for sid, watts in zip(ids, usual.values(), strict=True):
        for i, hour in enumerate(range(int(NOW) // RES_1H * RES_1H - days * 86400, int(NOW), RES_1H)):
            w = watts * (1.2 if i % 24 < 6 else 1.0)  # a busy quarter of each day does not move the median
            rows.append({"series_id": sid, "bucket": hour // RES_1H, "vmin": w, "vavg": w, "vmax": w, "n": 120})
    store.import_rollups({RES_1H: rows}, {RES_1H: int(NOW) // RES_1H * RES_1H})


def draw(rt: Runtime, **watts: float) -> None:
    rt.snap.samples["smartplugs"] = [Sample.of("rackpulse_power_watts", w, source=s) for s, w in watts.items()]


def test_a_source_drawing_well_above_its_weeks_median_fires_after_half_an_hour(tmp_path: Path) -> None:
    rt = runtime(tmp_path, monthly_budget=None)
    store_power(rt.store, {"rack": 330.0, "desk": 5.0, "network": 34.0})
    watch = rt.energy
    draw(rt, rack=520.0, desk=14.0, network=40.0)  # the desk: 2.8x, but 9 W is no runaway
    [c] = watch.update(rt.store, rt.snap, rt.cfg.energy, NOW)
    assert (c.rule, c.subject) == ("power_above_baseline", "rack")
    assert c.summary == "rack draws 520 W, 1.6× its usual 330 W (the median of its last 7 days)"
    alerting = rt.get_alerting()
    assert alerting is not None and BUILTIN["power_above_baseline"].for_seconds == 1800
    alerting.tick(rt.snap, NOW, extra=[c], deliver=False)
    assert [a.state for a in alerting.active(NOW)] == ["pending"]
    later = NOW + 1800
    alerting.tick(rt.snap, later, extra=watch.update(rt.store, rt.snap, rt.cfg.energy, later), deliver=False)
    assert [(a.subject, a.state) for a in alerting.active(later)] == [("rack", "firing")]
    draw(rt, rack=480.0)  # 1.45x: within the ratio, and it resolves
    assert watch.update(rt.store, rt.snap, rt.cfg.energy, later + 60) == []


def test_a_source_with_less_than_two_days_of_history_has_no_usual_yet(tmp_path: Path) -> None:
    rt = runtime(tmp_path, monthly_budget=None)
    store_power(rt.store, {"rack": 330.0}, days=1)
    draw(rt, rack=900.0)
    assert rt.energy.update(rt.store, rt.snap, rt.cfg.energy, NOW) == []


def test_a_store_that_cannot_be_read_leaves_the_alert_tick_going_and_says_so_once(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rt = runtime(tmp_path)
    empty = tmp_path / "empty.sqlite"  # a database never migrated: no tables
    broken = Store(make_engine(f"sqlite:///{empty}"), "nas")
    watch = EnergyWatch(report_every=0, baseline_every=0)
    with caplog.at_level(logging.WARNING, logger="app.energy"):
        for i in range(3):
            assert watch.update(broken, rt.snap, rt.cfg.energy, NOW + i) == []
    said = [r.getMessage() for r in caplog.records if r.name == "app.energy"]
    assert len(said) == 1 and said[0].startswith("energy figures not worked out:")
