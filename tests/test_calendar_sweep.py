"""The calendar sweep (scripts/calendar_sweep.py) runs the date-bound tests at fixed moments: its
clock must really move the wall clock and zone, leave waits alone, and its moments must be the
ones calendars break at."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from zoneinfo import ZoneInfo

from scripts.calendar_sweep import LIST, MOMENTS, selections, sqlite_twins_only
from tests.paths import TESTS

PROBE = """
import time, threading, datetime
import tests.conftest
t = time.monotonic()
threading.Event().wait(0.3)
time.sleep(0.1)
print(datetime.datetime.now().isoformat(timespec="minutes"), time.strftime("%Z"), round(time.monotonic() - t, 1))
"""


def test_the_sweeps_clock_moves_the_wall_clock_and_zone_and_leaves_waits_alone() -> None:
    env = {**os.environ, "RACKPULSE_TEST_CLOCK": "2028-02-29T23:59:00", "TZ": "Asia/Dubai"}
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=TESTS.parent, env=env, capture_output=True, text=True,
                         check=True, timeout=60).stdout.split()
    assert out[0] == "2028-02-29T23:59" and out[1] == "+04"
    assert 0.3 <= float(out[2]) < 30  # the waits took about their own time: not forever, not none


def _local(when: str, tz: str) -> dt.datetime:
    moment = dt.datetime.fromisoformat(when)
    return (moment.replace(tzinfo=ZoneInfo(tz)) if moment.tzinfo is None else moment).astimezone(ZoneInfo(tz))


def test_the_moments_are_where_calendars_break() -> None:
    local = [_local(when, tz) for when, tz, _ in MOMENTS]
    assert any(m.day == 1 and m.month != 1 for m in local)  # the 1st of a month
    assert any((m.month, m.day) == (1, 1) for m in local)
    assert any((m.month, m.day) == (2, 29) for m in local)
    berlin = [m for m in local if str(m.tzinfo) == "Europe/Berlin"]
    # both DST changes: the offset an hour before differs from the offset at the moment
    changes = {(m - dt.timedelta(hours=1)).astimezone(ZoneInfo("Europe/Berlin")).utcoffset() != m.utcoffset()
               for m in berlin if m.month in (3, 10)}
    assert changes == {True} and {m.month for m in berlin if m.month in (3, 10)} == {3, 10}
    assert any(m.utcoffset() == dt.timedelta(hours=4) and m.hour >= 21 for m in local)


def test_every_line_of_the_sweep_list_names_a_test_file_that_exists() -> None:
    picks = selections(LIST.read_text())
    assert len(picks) >= 15
    for target, _ in picks:
        assert (TESTS.parent / target.split("::")[0]).exists(), target


def test_a_test_run_on_both_databases_is_swept_on_sqlite_only_and_a_postgresql_only_test_stays() -> None:
    ids = ["t.py::test_a[sqlite]", "t.py::test_a[postgresql]", "t.py::test_b[postgresql-x]", "t.py::test_b[sqlite-x]",
           "t.py::test_postgresql_only", "t.py::test_c[postgresql]"]
    assert sqlite_twins_only(ids) == ["t.py::test_a[sqlite]", "t.py::test_b[sqlite-x]", "t.py::test_postgresql_only",
                                      "t.py::test_c[postgresql]"]
