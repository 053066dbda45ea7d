"""The demo's heat pump keeps its day book on a fast calendar (a day every four minutes): it starts
on the day the demo starts, not on a fixed January day (a November demo showed January)."""

from __future__ import annotations

import datetime as dt
import time

from app.demo import heatpump


def test_the_demo_day_book_starts_today_with_the_week_before_it() -> None:
    started = dt.date.fromtimestamp(heatpump.EPOCH)
    assert time.time() - heatpump.EPOCH < 3600 * 6  # the import's moment, this run's day
    assert dt.date.fromtimestamp(heatpump.sim_time(0.0)) == started
    assert dt.date.fromtimestamp(heatpump.sim_time(heatpump.DAY * 2)) == started + dt.timedelta(days=2)
    week = [d.date for d in heatpump.seeded_days()]
    assert week == [(started - dt.timedelta(days=n)).isoformat() for n in range(7, 0, -1)]


def test_a_pinned_calendar_dates_the_day_book_from_that_day_whatever_today_is() -> None:
    import argparse

    import pytest

    from app.demo.cli import _date

    before = heatpump.EPOCH
    try:
        heatpump.pin_calendar("2026-11-15")
        assert dt.date.fromtimestamp(heatpump.sim_time(0.0)) == dt.date(2026, 11, 15)
        assert [d.date for d in heatpump.seeded_days()][0] == "2026-11-08"
        heatpump.pin_calendar(None)
        assert dt.date.fromtimestamp(heatpump.sim_time(0.0)) == dt.date.today()
    finally:
        heatpump.EPOCH = before
    assert _date("2026-02-28") == "2026-02-28"
    with pytest.raises(argparse.ArgumentTypeError, match="not a date"):
        _date("2026-02-30")
