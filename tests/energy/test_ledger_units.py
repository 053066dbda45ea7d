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

    def __init__(self, series: Mapping[int, tuple[str, dict[str, str], list[P]]], fold: int = 0) -> None:
        self.series = series
        self.fold, self.generation = fold, 0  # the hours before `fold` are "folded"
        self.asked: list[tuple[int, int, int, int]] = []

    def series_of(self, metric: str) -> Sequence[tuple[int, Mapping[str, str]]]:
        return [(sid, labels) for sid, (m, labels, _) in self.series.items() if m == metric]

    def history(self, series_id: int, start: int, end: int, max_points: int = 1500, thinned: bool = True) -> list[P]:
        self.asked.append((series_id, start, end, max_points))
        return [p for p in self.series[series_id][2] if start <= p.ts < end]

    def hours(self, series_id: int, start: int, end: int) -> list[P]:
        self.asked.append((series_id, start, end, 0))
        return [p for p in self.series[series_id][2] if start <= p.ts < end]

    def raw_hours(self, series_ids: Sequence[int], start: int, end: int) -> dict[int, list[P]]:
        for sid in series_ids:
            self.asked.append((sid, start, end, -1))
        return {sid: [p for p in self.series[sid][2] if start <= p.ts < end] for sid in series_ids}

    def hourly_fold(self) -> tuple[int, int]:
        return self.fold, self.generation


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
    assert [t for t, _ in got["rack"].pairs()] == [int(start), int(start) + H, int(start) + 2 * H]
    assert got["rack"].joules(start, NOW) == pytest.approx(4.5 * J_PER_KWH)


def test_the_read_reaches_one_hour_before_since_for_the_first_hours_base() -> None:
    store = FakeStore({1: (ENERGY, {"source": "rack"}, counter(NOW - 10 * H, 10, 1.0))})
    got = hourly_by_source(store, NOW - 5 * H, NOW)
    ((_, start, end, _),) = store.asked
    assert (start, end) == (int(NOW - 5 * H) - H, int(NOW) + 1)
    assert got["rack"].kwh(NOW - 5 * H, NOW) == pytest.approx(5.0)  # the first hour counted from the one before


def test_folded_hours_are_read_once_and_only_the_hours_the_fold_closes_after_are_read_again() -> None:
    since = NOW - 48 * H
    store = FakeStore({1: (ENERGY, {"source": "rack"}, counter(NOW - 72 * H, 72, 1.0))}, fold=int(NOW - 2 * H))
    first = hourly_by_source(store, since, NOW)
    assert first["rack"].kwh(since, NOW) == pytest.approx(48.0)
    store.asked.clear()
    again = hourly_by_source(store, since, NOW)
    assert again["rack"].kwh(since, NOW) == pytest.approx(48.0)
    assert [(a, b, kind) for _, a, b, kind in store.asked] == [(int(NOW - 3 * H), int(NOW) + 1, -1)]  # the raw hours only
    store.asked.clear()
    store.fold += H  # the fold closed one more hour: that one is read, not the 46 before
    assert hourly_by_source(store, since, NOW)["rack"].kwh(since, NOW) == pytest.approx(48.0)
    # the hour the fold closed, counted from the level kept, then the raw hours after the fold
    assert [(a, b) for _, a, b, _ in store.asked] == [(int(NOW - 2 * H), int(NOW - H)), (int(NOW - 2 * H), int(NOW) + 1)]


def test_a_refold_or_an_earlier_start_reads_the_folded_hours_again() -> None:
    points = counter(NOW - 72 * H, 72, 1.0)
    store = FakeStore({1: (ENERGY, {"source": "rack"}, points)}, fold=int(NOW - 2 * H))
    hourly_by_source(store, NOW - 24 * H, NOW)
    points[-10] = P(points[-10].ts, points[-10].vmin, 0.0, points[-10].vmax + 2 * J_PER_KWH)  # a late batch, refolded
    store.generation += 1
    refolded = hourly_by_source(store, NOW - 24 * H, NOW)["rack"]
    assert refolded.kwh(NOW - 10 * H, NOW - 9 * H) == pytest.approx(3.0)  # the late batch is seen
    assert refolded.kwh(NOW - 9 * H, NOW - 8 * H) == 0.0  # and the hour after it, back at its old level
    store.asked.clear()
    longer = hourly_by_source(store, NOW - 48 * H, NOW)  # before the kept hours: all read again
    assert longer["rack"].kwh(NOW - 48 * H, NOW) == pytest.approx(49.0)  # 48 hours, one of 3 kWh, one of 0
    assert store.asked[0][1] == int(NOW - 49 * H)


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
