"""The bill's arithmetic on the calendar's awkward days, with no store: January's last month is the
December before it (a year earlier), the month's projection spreads over the days this month
really has (28, 29, 30 or 31), and a day that DST makes 23 or 25 hours long is one day, each of
its hours booked once. Pure functions, so each case is a few microseconds."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from app.energy.bill import J_PER_KWH, bills, month_start, previous_month_start, projected
from app.energy.config import EnergyConfig

BERLIN = ZoneInfo("Europe/Berlin")
FLAT = EnergyConfig(price_per_kwh=0.30, timezone="Europe/Berlin")
KWH = J_PER_KWH  # one kWh an hour: a bill's kWh is its count of hours


def hours(first: datetime, last: datetime) -> list[tuple[int, float]]:
    """One kWh in every hour from `first` up to `last`, by real (UTC) hours: a DST day has 23 or 25."""
    out, t = [], int(first.timestamp())
    while t < last.timestamp():
        out.append((t, KWH))
        t += 3600
    return out


@pytest.mark.parametrize(("moment", "last_month"), [
    (datetime(2027, 1, 15, 12, 0, tzinfo=BERLIN), datetime(2026, 12, 1, tzinfo=BERLIN)),
    (datetime(2027, 1, 1, 0, 30, tzinfo=BERLIN), datetime(2026, 12, 1, tzinfo=BERLIN)),
    (datetime(2026, 3, 31, 23, 0, tzinfo=BERLIN), datetime(2026, 2, 1, tzinfo=BERLIN)),
    (datetime(2026, 12, 31, 23, 59, tzinfo=BERLIN), datetime(2026, 11, 1, tzinfo=BERLIN)),
])
def test_last_month_of_january_is_the_december_of_the_year_before(moment: datetime, last_month: datetime) -> None:
    assert previous_month_start(moment) == last_month
    assert month_start(moment) == moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def test_a_january_bill_books_december_as_last_month_and_nothing_older() -> None:
    now = datetime(2027, 1, 10, 12, 0, tzinfo=BERLIN)
    booked = hours(datetime(2026, 11, 1, tzinfo=BERLIN), now)
    (b,) = bills({"rack": booked}, FLAT, now.timestamp(), BERLIN)
    assert round(b.last_month.kwh) == 31 * 24  # December 2026; November's hours are not in it
    assert round(b.month.kwh) == 9 * 24 + 12
    assert round(b.today.kwh) == 12


@pytest.mark.parametrize(("year", "month", "days"), [
    (2026, 11, 30), (2026, 12, 31), (2026, 1, 31), (2026, 2, 28), (2028, 2, 29), (2100, 2, 28),
])
def test_the_projection_spreads_the_cost_so_far_over_the_days_the_month_has(year: int, month: int, days: int) -> None:
    # Ten days gone (UTC, so no DST hour shifts the share): the month will cost days/10 times as much.
    now = datetime(year, month, 11, tzinfo=ZoneInfo("UTC")).timestamp()
    assert projected(10.0, now, ZoneInfo("UTC")) == pytest.approx(10.0 * days / 10)


def test_the_projection_at_the_first_instant_of_a_month_is_nothing_not_a_division_by_zero() -> None:
    now = datetime(2026, 12, 1, tzinfo=BERLIN).timestamp()
    assert projected(5.0, now, BERLIN) == 0.0


@pytest.mark.parametrize(("day", "length"), [
    (datetime(2026, 3, 29, tzinfo=BERLIN), 23),  # clocks go forward: a day of 23 hours
    (datetime(2026, 10, 25, tzinfo=BERLIN), 25),  # and back: 25
])
def test_a_dst_day_is_one_day_with_each_of_its_real_hours_booked_once(day: datetime, length: int) -> None:
    end_of_day = (day + timedelta(days=1)).replace(hour=0)
    booked = hours(day - timedelta(days=2), end_of_day)
    (b,) = bills({"rack": booked}, FLAT, end_of_day.timestamp() - 1, BERLIN)
    assert round(b.today.kwh) == length
    assert b.today.cost == pytest.approx(length * 0.30)
