"""The ledger's arithmetic over a store given as the Protocol the bill reads (app/energy/reading.py):
an hour's energy is its highest counter value minus the hour before's, a counter that fell counts
nothing, a source stored as several series is their sum, and the report's shares, watts and
projection come from those same hours. No database: a dict of points stands in for the store."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import NamedTuple
from zoneinfo import ZoneInfo

import pytest

from app.energy.bill import J_PER_KWH
from app.energy.config import EnergyConfig
from app.energy.ledger import ENERGY, POWER, hourly, hourly_by_source, report

UTC = ZoneInfo("UTC")
NOW = datetime(2026, 11, 15, 12, 0, tzinfo=UTC).timestamp()
H = 3600


class P(NamedTuple):
    ts: int
    vmin: float
    vavg: float
    vmax: float


class FakeStore:
    """series id -> (metric, labels, points); history() answers the points inside [start, end)."""

    def __init__(self, series: Mapping[int, tuple[str, dict[str, str], list[P]]]) -> None:
        self.series = series
        self.asked: list[tuple[int, int, int, int]] = []

    def series_of(self, metric: str) -> Sequence[tuple[int, Mapping[str, str]]]:
        return [(sid, labels) for sid, (m, labels, _) in self.series.items() if m == metric]

    def history(self, series_id: int, start: int, end: int, max_points: int = 1500, thinned: bool = True) -> list[P]:
        self.asked.append((series_id, start, end, max_points))
        return [p for p in self.series[series_id][2] if start <= p.ts < end]


def counter(start: float, hours: int, kwh_an_hour: float, base: float = 0.0) -> list[P]:
    """An hourly counter from `start`: each hour's highest value kwh_an_hour more than the last."""
    return [P(int(start) + i * H, base + i * kwh_an_hour * J_PER_KWH, 0.0, base + (i + 1) * kwh_an_hour * J_PER_KWH)
            for i in range(hours)]


def test_an_hours_energy_is_its_highest_value_minus_the_hour_befores() -> None:
    points = [P(0, 10.0, 0, 15.0), P(H, 15.0, 0, 40.0), P(2 * H, 40.0, 0, 41.5)]
    assert hourly(points) == [(0, 5.0), (H, 25.0), (2 * H, 1.5)]


def test_a_counter_that_fell_counts_nothing_that_hour_and_the_next_counts_from_the_low() -> None:
    points = [P(0, 100.0, 0, 110.0), P(H, 5.0, 0, 20.0), P(2 * H, 20.0, 0, 30.0)]
    assert hourly(points) == [(0, 10.0), (H, 0.0), (2 * H, 10.0)]


def test_a_sources_several_series_are_summed_hour_by_hour_and_unnamed_ones_left_out() -> None:
    start = NOW - 3 * H
    store = FakeStore({1: (ENERGY, {"source": "rack"}, counter(start, 3, 1.0)),
                       2: (ENERGY, {"source": "rack", "host": "old"}, counter(start, 3, 0.5)),
                       3: (ENERGY, {}, counter(start, 3, 9.0)),
                       4: (POWER, {"source": "rack"}, [])})
    got = hourly_by_source(store, start, NOW)
    assert list(got) == ["rack"]
    assert [t for t, _ in got["rack"]] == sorted(t for t, _ in got["rack"])
    assert sum(j for _, j in got["rack"]) == pytest.approx(4.5 * J_PER_KWH)


def test_the_read_reaches_one_hour_before_since_for_the_first_hours_base() -> None:
    store = FakeStore({1: (ENERGY, {"source": "rack"}, counter(NOW - 10 * H, 10, 1.0))})
    hourly_by_source(store, NOW - 5 * H, NOW)
    ((_, start, end, max_points),) = store.asked
    assert (start, end) == (int(NOW - 5 * H) - H, int(NOW) + 1)
    assert max_points == (int(NOW) + 1 - int(NOW - 5 * H) + H) // H + 24


def test_the_report_gives_each_source_its_share_of_the_lab_and_counts_one_inside_another_once() -> None:
    month = datetime(2026, 11, 1, tzinfo=UTC).timestamp()
    hours = int((NOW - month) // H)
    store = FakeStore({1: (ENERGY, {"source": "ups"}, counter(month, hours, 0.3)),
                       2: (ENERGY, {"source": "nas"}, counter(month, hours, 0.1)),
                       3: (ENERGY, {"source": "fridge"}, counter(month, hours, 0.1)),
                       4: (POWER, {"source": "ups"}, [])})
    cfg = EnergyConfig(price_per_kwh=0.25, timezone="UTC", inside={"nas": "ups"}, monthly_budget=100.0)

    class W(NamedTuple):
        metric: str
        value: float
        labels: tuple[tuple[str, str], ...]

    r = report(store, {"nut": [W(POWER, 310.0, (("source", "ups"),)), W("other", 1.0, ())]}, cfg, NOW)
    assert [b.source for b in r.sources] == ["ups", "nas", "fridge"]  # most used first, ties as stored
    assert r.lab.month.kwh == pytest.approx(0.4 * hours)  # ups + fridge; nas is inside the ups
    assert r.shares == pytest.approx({"ups": 0.75, "fridge": 0.25})
    assert r.watts == {"ups": 310.0}
    assert r.with_power == {"ups"}
    assert (r.currency, r.budget) == ("EUR", 100.0)
    assert r.projected == pytest.approx(r.lab.month.cost * 30 * 24 / ((NOW - month) / H))


def test_a_report_of_an_empty_lab_has_no_shares_and_costs_nothing() -> None:
    r = report(FakeStore({}), {}, EnergyConfig(timezone="UTC"), NOW)
    assert (r.sources, r.shares, r.watts, r.projected) == ([], {}, {}, 0.0)
