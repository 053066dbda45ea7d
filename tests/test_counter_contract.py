"""The counters contract, for every counter of every plug-in (the out-of-tree one included): fed
flapping, huge, negative, NaN and reset sequences through the scheduler, what it exports never
falls and never rises faster than the most the plug-in declares (a smart plug's max_watts, RAPL's
2,000 W, the heat pump's 100 kW). A Shelly counter alternating 1,000,000 Wh / 0 booked 10,000 kWh
in 20 s; a plug at -1,000,000 W booked -6.26 kWh and rackpulse_energy_joules_total fell."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any, ClassVar

import pytest

from app.scheduler import Scheduler, Snapshot
from collectors.base import Collector, CollectResult, MetricSpec, Sample, run_command
from collectors.context import HostContext
from collectors.counters import CounterBook, Most, default_most
from tests.test_source_contract import ALL

STEP = 10.0  # seconds between two runs
# (name, readings): what a broken device or a bad read sends, one reading per run
SEQUENCES = {
    "flapping": [0.0, 3.6e9, 0.0, 3.6e9, 0.0, 3.6e9, 0.0, 3.6e9],
    "huge": [100.0, 1e12, 1e12 + 1, 200.0, 1e15, 300.0],
    "negative": [100.0, -1e6, -1e6, -1e6, 150.0],
    "nan": [100.0, math.nan, math.inf, 120.0, -math.inf, 130.0],
    "reset": [5000.0, 5010.0, 3.0, 8.0, 12.0],
    "new base": [100.0, 9e12, 9e12, 9e12, 9e12 + 5, 9e12 + 10],
}
COUNTERS = sorted((name, metric) for name, p in ALL.items() for metric, spec in p.collector.metrics.items()
                  if spec.kind == "counter")


def built(name: str, tmp_path: Path) -> Collector:
    p = ALL[name]
    return p.build(p.config(), HostContext("nas", tmp_path), run_command)


class Replay(Collector):
    """The plug-in's own collector's metrics and limits, its samples replaced by the sequence."""

    name: ClassVar[str] = "replay"

    def __init__(self, real: Collector, metric: str, readings: list[float]) -> None:
        self.real, self.metric, self.readings = real, metric, list(readings)
        self.metrics = real.metrics  # type: ignore[misc]
        self.now = 1_790_000_000.0

    def counter_limits(self) -> Any:
        return self.real.counter_limits()

    def counter_now(self) -> float:
        return self.now

    def collect(self) -> CollectResult:
        self.now += STEP
        return CollectResult(samples=[Sample.of(self.metric, self.readings.pop(0), source="s1")])


def exported(snap: Snapshot, name: str, metric: str) -> float | None:
    got = [s.value for s in snap.samples.get(name, []) if s.metric == metric]
    return got[0] if got else None


def test_every_plug_in_with_counters_is_in_this_contract() -> None:
    assert COUNTERS and {n for n, _ in COUNTERS} >= {"smartplugs", "rapl", "heatpump", "nut", "ipmi", "snmp"}


@pytest.mark.parametrize("sequence", SEQUENCES)
@pytest.mark.parametrize(("name", "metric"), COUNTERS)
def test_what_a_counter_exports_never_falls_nor_rises_faster_than_the_device_can(
        name: str, metric: str, sequence: str, tmp_path: Path) -> None:
    coll = Replay(built(name, tmp_path), metric, SEQUENCES[sequence])
    most = coll.counter_limits().get(metric) or default_most(metric)
    snap = Snapshot(host="nas")
    sched = Scheduler({name: coll}, {name: (STEP, 5.0)}, snap)
    seen: list[float] = []
    for _ in SEQUENCES[sequence]:
        asyncio.run(sched.run_once(name))
        value = exported(snap, name, metric)
        if value is not None:
            seen.append(value)
    assert seen, "a counter is exported"
    assert all(math.isfinite(v) and v >= 0 for v in seen)
    assert all(b >= a for a, b in zip(seen, seen[1:], strict=False)), f"it fell: {seen}"
    # Booked in all: no more than the device could make in the time the sequence took.
    span = STEP * (len(SEQUENCES[sequence]) - 1)
    assert seen[-1] - seen[0] <= most.per_second * span + most.slack * len(seen), seen


def test_a_plugs_declared_most_is_its_max_watts(tmp_path: Path) -> None:
    p = ALL["smartplugs"]
    cfg = p.config(broker="mqtt://127.0.0.1:1883", plugs=[{"name": "rack", "topic": "shellyplugpm-rack",
                                                         "max_watts": 2300}])
    coll = p.build(cfg, HostContext("nas", tmp_path), run_command)
    assert coll.counter_limits()["rackpulse_energy_joules_total"] == Most(2300.0, 3600.0)


def test_the_shelly_that_flapped_books_no_more_than_its_plug_could_pass_in_the_time() -> None:
    """1,000,000 Wh / 0 alternating every 10 s for 20 s: 10,000 kWh booked before; now at most
    3,680 W x 20 s (+ a Wh of rounding)."""
    book = CounterBook()
    spec = {"rackpulse_energy_joules_total": MetricSpec("energy", "counter")}
    limits = {"rackpulse_energy_joules_total": Most(3680.0, 3600.0)}
    values = []
    for i, wh in enumerate([0, 1_000_000, 0]):
        out, _ = book.judge("smartplugs", [Sample.of("rackpulse_energy_joules_total", wh * 3600.0, source="rack")],
                            spec, limits, 1000.0 + 10 * i)
        values.append(out[0].value)
    assert values[-1] - values[0] <= 3680 * 20 + 3600


def test_a_counter_untouched_by_resets_is_exported_to_the_bit() -> None:
    book = CounterBook()
    spec = {"x_total": MetricSpec("x", "counter")}
    for i, v in enumerate([0.1, 0.30000000000000004, 0.7]):
        out, said = book.judge("c", [Sample.of("x_total", v)], spec, {}, 100.0 + i)
        assert out[0].value == v and said == []


def test_a_bad_read_is_said_as_a_warning_of_the_run_naming_the_series(tmp_path: Path) -> None:
    coll = Replay(built("smartplugs", tmp_path), "rackpulse_energy_joules_total", [0.0, 3.6e9])
    snap = Snapshot(host="nas")
    sched = Scheduler({"smartplugs": coll}, {"smartplugs": (STEP, 5.0)}, snap)
    asyncio.run(sched.run_once("smartplugs"))
    st = asyncio.run(sched.run_once("smartplugs"))
    assert st.up is True
    assert any('rackpulse_energy_joules_total{source="s1"}: moved from 0 to 3,600,000,000' in w for w in st.warnings)


def test_watts_below_zero_integrate_to_nothing_for_every_source_that_reports_watts_only() -> None:
    """A plug at -1,000,000 W for 10 s booked -6.26 kWh: a UPS or a BMC reporting watts alike."""
    from collectors.energy import Integrator

    i = Integrator(gap=60)
    totals = [i.add("ups", w, t) for t, w in ((0, 100.0), (10, -1_000_000.0), (20, 100.0), (30, 100.0))]
    assert totals == [0.0, 0.0, 0.0, 1000.0]
