"""A channel's own policy: `escalate_after_minutes` (a second line told only what still fires
unacknowledged that long after) and `quiet_hours` (warnings wait for the morning, critical ones
pass, what resolved meanwhile is not sent). What is not sent says why, and the queue goes on."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.alerting.channels import Channel
from app.alerting.conditions import MetricRule
from app.alerting.engine import Rule
from app.alerting.policy import parse_quiet
from app.alerting.service import Alerting
from app.config import ConfigError, load_config
from app.scheduler import Snapshot
from app.storage.db import make_engine, upgrade
from app.storage.models import outbox
from collectors.base import Sample
from tests.alerting.sink import Sink

CRIT = MetricRule(Rule("bad", "critical"), "rackpulse_test_bad", ">", 0, message="{labels} bad")
WARN = MetricRule(Rule("meh", "warning"), "rackpulse_test_meh", ">", 0, message="{labels} meh")
UTC = dt.UTC
# 2026-11-25 22:00 UTC: an hour before quiet hours of 23:00-07:00 (UTC) begin.
EVENING = dt.datetime(2026, 11, 25, 22, 0, tzinfo=UTC).timestamp()


@pytest.fixture
def sink() -> Iterator[Sink]:
    s = Sink()
    yield s
    s.close()


def snap(bad: tuple[str, ...] = (), meh: tuple[str, ...] = ()) -> Snapshot:
    s = Snapshot(host="nas")
    s.samples["x"] = [Sample.of("rackpulse_test_bad", 1, thing=t) for t in bad]
    s.samples["x"] += [Sample.of("rackpulse_test_meh", 1, thing=t) for t in meh]
    return s


def alerting(tmp_path: Path, *channels: Channel) -> Alerting:
    url = f"sqlite:///{tmp_path / 'a.db'}"
    upgrade(url)
    return Alerting(make_engine(url), "nas", {}, [CRIT, WARN], list(channels))


def told(sink: Sink, path: str) -> list[tuple[str, str]]:
    return [(d["state"], d["subject"]) for d in (json.loads(b) for p, _, b in sink.received if p == path)]


def skipped(a: Alerting) -> list[str]:
    with a.engine.connect() as c:
        return [r.skipped for r in c.execute(outbox.select().where(outbox.c.skipped.is_not(None))
                                             .order_by(outbox.c.id))]


def test_the_second_line_hears_only_what_is_still_unacknowledged_after_its_minutes(tmp_path: Path, sink: Sink) -> None:
    a = alerting(tmp_path, Channel("first", sink.url + "/first"),
                 Channel("boss", sink.url + "/boss", escalate_after_minutes=30))
    t0 = EVENING
    a.tick(snap(bad=("md0", "md1", "md2")), now=t0)
    assert len(told(sink, "/first")) == 3 and told(sink, "/boss") == []
    assert a.ack("bad", "thing=md0", now=t0 + 600)  # someone is on md0
    a.tick(snap(bad=("md0", "md2")), now=t0 + 900)  # md1 heals within the half hour
    a.tick(snap(bad=("md0", "md2")), now=t0 + 1800)
    assert told(sink, "/boss") == [("firing", "thing=md2")]  # only what still fires unacknowledged
    assert sorted(skipped(a)) == ["acknowledged before it was due", "resolved before it was due"]
    a.tick(snap(), now=t0 + 2000)
    a.deliver(now=t0 + 2000 + 1800)
    assert told(sink, "/boss") == [("firing", "thing=md2"), ("resolved", "thing=md2")]  # md0's, md1's end: not told
    assert sorted(skipped(a))[1:3] == ["its firing was not sent on this channel"] * 2


def test_in_quiet_hours_warnings_wait_for_the_morning_and_critical_passes(tmp_path: Path, sink: Sink) -> None:
    quiet = parse_quiet("23:00-07:00", "UTC")
    a = alerting(tmp_path, Channel("phone", sink.url + "/phone", quiet=quiet))
    night = EVENING + 2 * 3600  # 00:00
    a.tick(snap(meh=("fan", "ups")), now=night)  # two warnings: held
    a.tick(snap(bad=("md0",), meh=("fan", "ups")), now=night + 60)  # a critical: at once, past them
    assert told(sink, "/phone") == [("firing", "thing=md0")]
    a.tick(snap(bad=("md0",), meh=("ups",)), now=night + 3600)  # the fan's warning resolved in the night
    a.deliver(now=night + 3 * 3600)
    assert told(sink, "/phone") == [("firing", "thing=md0")]  # still night: nothing more
    morning = EVENING + 9 * 3600 + 60  # 07:01
    a.deliver(now=morning)
    assert told(sink, "/phone") == [("firing", "thing=md0"), ("firing", "thing=ups")]  # what still matters
    assert sorted(skipped(a)) == ["its firing was not sent on this channel", "resolved during quiet hours"]


def test_quiet_hours_are_read_in_the_configured_zone_and_across_midnight() -> None:
    q = parse_quiet("23:00-07:00", "Europe/Berlin")  # UTC+1 in November
    assert q.until(dt.datetime(2026, 11, 25, 21, 59, tzinfo=UTC).timestamp()) is None  # 22:59 in Berlin
    end = q.until(dt.datetime(2026, 11, 25, 22, 0, tzinfo=UTC).timestamp())  # 23:00 in Berlin
    assert end == dt.datetime(2026, 11, 26, 6, 0, tzinfo=UTC).timestamp()  # 07:00 in Berlin
    assert q.until(dt.datetime(2026, 11, 26, 5, 59, tzinfo=UTC).timestamp()) == end
    day = parse_quiet("12:00-13:30", "UTC")
    assert day.until(dt.datetime(2026, 11, 26, 13, 0, tzinfo=UTC).timestamp()) == \
        dt.datetime(2026, 11, 26, 13, 30, tzinfo=UTC).timestamp()


@pytest.mark.parametrize("bad", ["23:00", "7-23", "23:00-23:00", "25:00-07:00"])
def test_quiet_hours_in_another_shape_or_an_unknown_zone_are_config_errors(bad: str) -> None:
    with pytest.raises(ConfigError, match="quiet_hours"):
        load_config(None, {"alerts": {"channels": [{"name": "p", "url": "https://x.example", "quiet_hours": bad}]}})
    with pytest.raises(ConfigError, match="unknown time zone"):
        load_config(None, {"alerts": {"timezone": "Mars/Olympus"}})


def utc(h: int, m: int = 0, s: int = 0, day: int = 26) -> float:
    return dt.datetime(2026, 11, day, h, m, s, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(("at", "until"), [
    (utc(12, 14, 59), None), (utc(12, 15), utc(13, 30)), (utc(12, 15, 30), utc(13, 30)),  # to the minute, any second
    (utc(13, 29, 59), utc(13, 30)), (utc(13, 30), None), (utc(13, 30, 1), None), (utc(23, 59), None),
])
def test_quiet_hours_within_a_day_begin_and_end_on_their_minutes(at: float, until: float | None) -> None:
    assert parse_quiet("12:15-13:30", "UTC").until(at) == until


@pytest.mark.parametrize(("at", "until"), [
    (utc(22, 44, 59), None), (utc(22, 45), utc(6, 50, day=27)), (utc(23, 59, 59), utc(6, 50, day=27)),
    (utc(0, 0), utc(6, 50)), (utc(6, 49, 59), utc(6, 50)), (utc(6, 50), None), (utc(6, 50, 30), None),
])
def test_quiet_hours_across_midnight_end_the_next_morning(at: float, until: float | None) -> None:
    assert parse_quiet("22:45-06:50", "UTC").until(at) == until


def test_without_a_zone_quiet_hours_are_the_hosts_local_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("TZ", "Asia/Kolkata")  # UTC+5:30, no summer time
    time.tzset()
    try:
        q = parse_quiet("23:00-07:00")
        assert q.zone is None
        assert q.until(utc(17, 29)) is None  # 22:59 there
        assert q.until(utc(17, 30)) == utc(1, 30, day=27)  # 23:00 there, until 07:00 there
    finally:  # the zone this run had (the calendar sweep sets one; deleting TZ left UTC for the next tests)
        monkeypatch.undo()
        time.tzset()


def test_only_warnings_are_held_and_only_inside_quiet_hours() -> None:
    from app.alerting.policy import held_for_quiet

    q = parse_quiet("23:00-07:00", "UTC")
    assert held_for_quiet("warning", q, utc(23, 30)) == utc(7, day=27)
    assert held_for_quiet("critical", q, utc(23, 30)) is None
    assert held_for_quiet("warning", q, utc(12)) is None
    assert held_for_quiet("warning", None, utc(23, 30)) is None


def test_a_bad_quiet_hours_says_the_shape_expected() -> None:
    with pytest.raises(ValueError, match=r"quiet_hours '23:00-23:00': use \"HH:MM-HH:MM\" with two different times"):
        parse_quiet("23:00-23:00")
    assert parse_quiet(" 07:05-08:10 ") == parse_quiet("07:05-08:10")
    q = parse_quiet("07:05-08:10", "Europe/Berlin")
    assert (q.start, q.end, str(q.zone)) == (dt.time(7, 5), dt.time(8, 10), "Europe/Berlin")
