"""The running sums the bill and the chart read: a span's energy and cost are two look-ups, and they
agree with adding its hours one by one, with and without time-of-use bands, after the fold adds
hours to a table, and at spans that start or end between two hours."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from app.energy.config import EnergyConfig, Tariff
from app.energy.hours import J_PER_KWH, HourTable, Pricing, SourceHours

BERLIN = ZoneInfo("Europe/Berlin")
H = 3600
START = int(datetime(2026, 10, 24, 0, 0, tzinfo=BERLIN).timestamp())  # the clocks go back on the 25th
HOURS = [(START + i * H, (1 + i % 5) * J_PER_KWH / 10) for i in range(24 * 4)]
BANDS = EnergyConfig(price_per_kwh=0.30, timezone="Europe/Berlin",
                     tariffs=[Tariff.model_validate({"from": "22:30", "to": "06:00", "price": 0.10})])


def by_hand(a: float, b: float, price=None) -> float:
    return sum(j / J_PER_KWH * (price(t) if price else 1.0) for t, j in HOURS if a <= t < b)


@pytest.mark.parametrize(("a", "b"), [(START, START + 96 * H), (START + 5 * H, START + 30 * H),
                                      (START + 5 * H + 1, START + 30 * H - 1), (START + 40 * H, START + 40 * H),
                                      (START - 10 * H, START + 2 * H), (START + 95 * H, START + 200 * H)])
def test_a_spans_energy_and_cost_are_its_hours_added_one_by_one(a: int, b: int) -> None:
    table, pricing = HourTable(HOURS), Pricing(BANDS, BERLIN)
    assert table.joules(a, b) / J_PER_KWH == pytest.approx(by_hand(a, b))
    assert table.cost(a, b, pricing) == pytest.approx(by_hand(a, b, pricing.per_kwh))


def test_an_hour_cut_by_a_band_edge_is_priced_by_its_minutes_and_a_flat_price_needs_no_bands() -> None:
    pricing = Pricing(BANDS, BERLIN)
    at_22 = int(datetime(2026, 10, 24, 22, 0, tzinfo=BERLIN).timestamp())
    assert pricing.per_kwh(at_22) == pytest.approx((30 * 0.30 + 30 * 0.10) / 60)
    flat = Pricing(EnergyConfig(price_per_kwh=0.25), None)
    assert flat.flat == 0.25
    assert HourTable(HOURS).cost(START, START + 96 * H, flat) == pytest.approx(by_hand(START, START + 96 * H) * 0.25)


def test_hours_the_fold_adds_make_a_new_table_priced_on_and_leave_the_old_one_as_it_was() -> None:
    pricing = Pricing(BANDS, BERLIN)
    old = HourTable(HOURS[:50])
    before = old.cost(START + 10 * H, START + 50 * H, pricing)  # priced from hour 10 on
    new = old.extended(HOURS[50:])
    assert (len(old), len(new)) == (50, 96)
    assert old.cost(START + 10 * H, START + 96 * H, pricing) == pytest.approx(before)
    assert new.cost(START + 10 * H, START + 96 * H, pricing) == pytest.approx(by_hand(START + 10 * H, START + 96 * H,
                                                                                      pricing.per_kwh))
    assert new.cost(START, START + 96 * H, pricing) == pytest.approx(by_hand(START, START + 96 * H, pricing.per_kwh))


def test_an_hour_not_after_the_last_one_held_is_refused_with_both_named() -> None:
    with pytest.raises(ValueError, match=f"hour {START} is not after {START + H}"):
        HourTable([(START + H, 1.0), (START, 1.0)])


def test_a_source_of_two_series_sums_an_hour_both_have() -> None:
    both = SourceHours(HourTable([(START, 1.0), (START + H, 2.0)]), HourTable([(START + H, 3.0)]))
    assert both.pairs() == [(START, 1.0), (START + H, 5.0)]
    assert SourceHours.of([(START + H, 3.0), (START, 1.0), (START + H, 2.0)]).pairs() == [(START, 1.0), (START + H, 5.0)]
