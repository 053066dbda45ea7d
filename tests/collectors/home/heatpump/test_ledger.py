"""The heat pump's day book, piece by piece: a poll booked into its day (the booster's totals
into yesterday), days folded into months, totals of a period and the periods a page shows.
Pinned field by field: mutation testing found most of it read by nobody."""

from __future__ import annotations

import datetime as dt

import pytest

from collectors.home.heatpump.ledger import HeatpumpDay, book, fold, periods, season_of, seasons, total

NOON = dt.datetime(2026, 1, 14, 12, 0).timestamp()  # local time, as the book's days are


def test_a_poll_is_booked_into_today_with_its_starts_defrosts_and_outside_reading() -> None:
    days = book([], NOON, {"heat_heating": 1.5, "electricity_heating": 0.5}, outside=-3.0, starts=2,
                starts_last_hour=2, defrost_started=True, defrost_seconds=240.0)
    assert [d.model_dump() for d in days] == [{
        "date": "2026-01-14", "days": 1, "heat_heating": 1.5, "heat_hot_water": 0.0, "electricity_heating": 0.5,
        "electricity_hot_water": 0.0, "backup_heating": 0.0, "backup_hot_water": 0.0, "outside_sum": -3.0,
        "outside_count": 1, "starts": 2, "max_starts_per_hour": 2, "defrosts": 1, "defrost_seconds": 240.0}]
    again = book(days, NOON + 60, {"heat_heating": 0.5}, outside=-1.0, starts=1, starts_last_hour=1)
    d = again[-1]
    assert (d.heat_heating, d.outside_sum, d.outside_count, d.starts, d.max_starts_per_hour, d.defrosts,
            d.defrost_seconds) == (2.0, -4.0, 2, 3, 2, 1, 240.0)  # the most starts in an hour stays the most
    assert book(again, NOON + 120, {}, starts_last_hour=3)[-1].max_starts_per_hour == 3


def test_an_empty_poll_changes_nothing_of_the_day() -> None:
    days = book([], NOON, {})
    assert [d.model_dump() for d in days] == [HeatpumpDay(date="2026-01-14").model_dump()]


def test_the_boosters_totals_rise_at_midnight_and_count_for_yesterday() -> None:
    days = book([], NOON, {"backup_heating": 3.0, "backup_hot_water": 0.0, "heat_heating": 1.0})
    assert [(d.date, d.backup_heating, d.heat_heating) for d in days] == [("2026-01-13", 3.0, 0.0),
                                                                          ("2026-01-14", 0.0, 1.0)]
    # a booster total that did not rise makes no day of its own
    assert [d.date for d in book([], NOON, {"backup_heating": 0.0})] == ["2026-01-14"]


def day(date: str, **kw: float) -> HeatpumpDay:
    return HeatpumpDay(date=date, **kw)  # type: ignore[arg-type]


def test_days_past_the_kept_ones_fold_into_their_month_with_sums_and_the_highest_starts_an_hour() -> None:
    old = [day("2025-11-29", heat_heating=10, outside_sum=4, outside_count=2, starts=3, max_starts_per_hour=2,
               defrosts=1, defrost_seconds=60),
           day("2025-11-30", heat_heating=5, outside_sum=2, outside_count=1, starts=1, max_starts_per_hour=4),
           day("2025-12-01", heat_heating=7, max_starts_per_hour=1)]
    kept, months = fold(old, [], keep=1)
    assert [d.date for d in kept] == ["2025-12-01"]
    assert [(m.date, m.days, m.heat_heating, m.outside_sum, m.outside_count, m.starts, m.max_starts_per_hour,
             m.defrosts, m.defrost_seconds) for m in months] == [("2025-11", 2, 15, 6, 3, 4, 4, 1, 60)]
    _, more = fold([day("2025-11-28", max_starts_per_hour=1), day("2025-12-02")], months, keep=1)
    assert more[0].max_starts_per_hour == 4 and more[0].days == 3


def test_a_month_with_an_unreadable_outside_sum_keeps_what_it_had() -> None:
    month = day("2025-11", days=5, outside_sum=20, outside_count=5)
    _, out = fold([day("2025-11-30", outside_sum=None, outside_count=3), day("2025-12-01")], [month], keep=1)
    assert (out[0].outside_sum, out[0].outside_count, out[0].days) == (20, 5, 6)


def test_a_periods_total_sums_its_days_and_means_the_outside_readings() -> None:
    t = total("x", [day("2026-01-13", heat_heating=2, electricity_heating=1, outside_sum=-6, outside_count=3,
                        defrosts=2, starts=5),
                    day("2026-01-14", heat_hot_water=1, backup_heating=0.5, outside_sum=None, outside_count=4,
                        defrosts=1, starts=1)])
    assert t.model_dump() == {"label": "x", "days": 2, "heat_heating": 2.0, "heat_hot_water": 1.0,
                              "electricity_heating": 1.0, "electricity_hot_water": 0.0, "backup_heating": 0.5,
                              "backup_hot_water": 0.0, "outside_mean": -2.0, "defrosts": 3, "starts": 6,
                              "unbooked_heat": 0.0}
    assert total("none", []).model_dump()["outside_mean"] is None


def test_the_boosters_share_of_a_period_leaves_out_today_whose_booster_comes_after_midnight() -> None:
    book_ = [day("2026-11-30", heat_heating=40, backup_heating=10), day("2026-12-01", heat_heating=30),
             day("2026-12-02", heat_heating=20)]
    on_the_1st = periods(book_[:2], "2026-12-01")
    assert on_the_1st["today"].backup_share is None  # not booked yet: "–", not 0 %
    assert on_the_1st["month"].backup_share is None  # the month holds only today (it read 0 % on 1 December)
    assert on_the_1st["yesterday"].backup_share == 0.2  # 10 of 50 kWh, booked
    assert on_the_1st["season"].backup_share == 0.2  # today's 30 kWh on neither side
    assert on_the_1st["month"].cop is None and on_the_1st["month"].heat == 30  # the month's heat still counts
    on_the_2nd = periods(book_, "2026-12-02")
    assert on_the_2nd["month"].backup_share == 0.0  # 1 December is booked: no booster that day
    assert on_the_2nd["season"].backup_share == round(10 / 80, 3)


@pytest.mark.parametrize(("date", "start", "season"), [
    ("2025-07-01", 7, "2025/26"), ("2026-06-30", 7, "2025/26"), ("2025-09-30", 10, "2024/25"),
    ("2025-10-01", 10, "2025/26"), ("2025-12-31", 1, "2025"), ("1999-08-01", 7, "1999/00"),
])
def test_a_day_belongs_to_the_heating_season_that_began_before_it(date: str, start: int, season: str) -> None:
    assert season_of(date, start) == season


def test_today_yesterday_this_month_and_this_season_each_sum_their_own_days() -> None:
    book_ = [day("2025-06-30", heat_heating=100), day("2025-07-01", heat_heating=1), day("2025-12-31", heat_heating=2),
             day("2026-01-13", heat_heating=4), day("2026-01-14", heat_heating=8), day("2026-01-15", heat_heating=16)]
    got = periods(book_, "2026-01-14")
    assert {k: (t.label, t.heat_heating, t.days) for k, t in got.items()} == {
        "today": ("today", 8, 1), "yesterday": ("yesterday", 4, 1), "month": ("month", 28, 3),
        "season": ("season", 31, 5)}
    assert periods(book_, "2026-01-14", start_month=1)["season"].heat_heating == 28
    assert [(s.label, s.heat_heating) for s in seasons(book_)] == [("2024/25", 100), ("2025/26", 31)]
    assert [(s.label, s.heat_heating) for s in seasons(book_, 1)] == [("2025", 103), ("2026", 28)]
