"""A job's heartbeat at each edge: on time, running, late by a second, failed with its log, a
late ping that clears it; spans in the config; the words of tile and alert."""

from __future__ import annotations

import pytest

from collectors.context import Ping, PingBook, SavedEntries
from collectors.findings import Judging
from collectors.probes.heartbeats.collector import HeartbeatsCollector, judge_beat
from collectors.probes.heartbeats.config import Heartbeat, HeartbeatsConfig
from collectors.probes.heartbeats.findings import findings

T0 = 1_790_000_000.0
HB = Heartbeat(name="nightly-backup", every="24h", grace="2h")  # type: ignore[arg-type]
DAY, GRACE = 86400.0, 7200.0


def pings(**at: float) -> dict[str, Ping]:
    return {k: Ping(k, t, "rsync: error 23\nbackup failed" if k == "fail" else "") for k, t in at.items()}


@pytest.mark.parametrize(("what", "given", "now", "status"), [
    ("never pinged, not yet due", {}, T0 + DAY + GRACE, "new"),
    ("never pinged, past every and grace", {}, T0 + DAY + GRACE + 1, "late"),
    ("pinged, on time", {"success": T0}, T0 + DAY + GRACE, "up"),
    ("pinged, a second past every and grace", {"success": T0}, T0 + DAY + GRACE + 1, "late"),
    ("started after its last success", {"success": T0, "start": T0 + DAY}, T0 + DAY + 60, "running"),
    ("started and never ended", {"success": T0, "start": T0 + DAY}, T0 + DAY + GRACE + 1, "late"),
    ("failed last", {"success": T0, "fail": T0 + DAY}, T0 + DAY + 60, "failed"),
    ("failed, then a success", {"success": T0 + DAY + 5, "fail": T0 + DAY}, T0 + DAY + 60, "up"),
])
def test_a_jobs_state_at_each_edge(what: str, given: dict[str, float], now: float, status: str) -> None:
    assert judge_beat(HB, pings(**given), since=T0, now=now).status == status, what


def test_a_run_between_its_start_and_its_end_has_a_duration() -> None:
    beat = judge_beat(HB, pings(start=T0, success=T0 + 754), since=T0 - DAY, now=T0 + 800)
    assert beat.duration == 754 and beat.status == "up"


def test_spans_read_as_people_write_them_and_a_bad_one_is_refused() -> None:
    assert (HB.every, HB.grace) == (DAY, GRACE)
    assert Heartbeat(name="x", every=90).every == 90  # type: ignore[arg-type]
    assert Heartbeat(name="x", every="30m").every == 1800  # type: ignore[arg-type]
    assert Heartbeat(name="x", every="60", grace=" 30 ").every == 60  # type: ignore[arg-type]  # a quoted number: seconds
    with pytest.raises(ValueError, match="a span such as"):
        Heartbeat(name="x", every="daily")  # type: ignore[arg-type]
    cfg = HeartbeatsConfig.model_validate([{"name": "a", "every": "1d"}, {"name": "b", "every": "1w"}])
    assert [c.every for c in cfg.checks] == [DAY, 7 * DAY]


def test_a_missed_and_a_failed_job_say_what_and_the_failure_shows_its_log() -> None:
    late = judge_beat(HB, pings(success=T0), since=T0, now=T0 + 26 * 3600 + 60)
    (f,) = findings_of(late, T0 + 26 * 3600 + 60)
    assert (f.rule, f.subject) == ("heartbeat_missed", "nightly-backup")
    assert f.text.startswith("job nightly-backup missed: last ping 26 h 1 min ago (") and "every 24 h" in f.text
    failed = judge_beat(HB, pings(success=T0, fail=T0 + DAY), since=T0, now=T0 + DAY + 120)
    (f,) = findings_of(failed, T0 + DAY + 120)
    assert (f.rule, f.text) == ("heartbeat_failed", "job nightly-backup failed 2 min ago: backup failed")
    assert f.labels["log"] == "rsync: error 23\nbackup failed"


def findings_of(beat, now):  # type: ignore[no-untyped-def]
    from collectors.probes.heartbeats.state import HeartbeatsState

    return findings(HeartbeatsState(beats=[beat]), Judging(now=now))


def test_the_collector_reads_the_book_and_the_browsers_heartbeats_and_keeps_when_each_began() -> None:
    book, saved = PingBook(), SavedEntries({"heartbeats": [{"kind": "heartbeat", "spec": {"name": "photos",
                                                                                            "every": "1h"}},
                                                            {"kind": "heartbeat", "spec": {"name": "nightly-backup",
                                                                                            "every": "1h"}},
                                                            {"kind": "heartbeat", "spec": {"name": "odd"}}]})
    now = [T0]
    c = HeartbeatsCollector(HeartbeatsConfig(checks=[HB]), book, saved, clock=lambda: now[0])
    book.record("nightly-backup", Ping("success", T0 - 60))
    r = c.collect()
    beats = {b.name: b for b in r.state.beats}  # type: ignore[union-attr]
    assert (beats["nightly-backup"].status, beats["nightly-backup"].every) == ("up", DAY)  # the file's wins
    assert beats["photos"].status == "new" and beats["photos"].since == T0
    assert any("config file has a heartbeat of that name" in w for w in r.warnings)
    assert any("not understood" in w for w in r.warnings)
    now[0] = T0 + 3600 + 3601
    restarted = HeartbeatsCollector(HeartbeatsConfig(checks=[HB]), book, saved, clock=lambda: now[0])
    restarted.restore(r.state)  # type: ignore[arg-type]
    beats = {b.name: b for b in restarted.collect().state.beats}  # type: ignore[union-attr]
    assert beats["photos"].status == "late"  # due from when it was first known, not from the restart


# -- every field, pinned (mutation testing found them read by nobody) ---------------------------

def test_a_beat_carries_its_schedule_its_last_pings_and_when_it_is_due() -> None:
    quiet = Heartbeat(name="offsite", every="1h", grace="10m", public=True)  # type: ignore[arg-type]
    beat = judge_beat(quiet, pings(start=T0, fail=T0 + 30, success=T0 - 3600), since=T0 - DAY, now=T0 + 60)
    assert (beat.name, beat.every, beat.grace, beat.since, beat.public) == ("offsite", 3600, 600, T0 - DAY, True)
    assert (beat.last_success, beat.last_fail, beat.last_start) == (T0 - 3600, T0 + 30, T0)
    assert beat.due_at == T0 + 30 + 3600 + 600  # from the last end, failed or not
    assert beat.status == "failed" and beat.log == "rsync: error 23\nbackup failed" and beat.duration == 30
    never = judge_beat(quiet, {}, since=T0, now=T0)
    assert (never.due_at, never.duration, never.log, never.last_success, never.last_fail, never.last_start) == (
        T0 + 4200, None, "", None, None, None)


@pytest.mark.parametrize(("given", "duration"), [
    ({"start": T0, "success": T0 + 754}, 754),
    ({"start": T0, "success": T0}, 0),  # started and ended in the same second
    ({"start": T0 + 10, "success": T0}, None),  # a start after the end belongs to the next run
    ({"start": T0, "success": T0 + DAY}, DAY),  # as long as its period: still its run
    ({"start": T0, "success": T0 + DAY + 1}, None),  # longer than a period: a start of an older run
    ({"success": T0}, None),
])
def test_a_duration_is_told_only_for_a_start_that_belongs_to_the_last_end(given: dict[str, float],
                                                                         duration: float | None) -> None:
    assert judge_beat(HB, pings(**given), since=T0 - DAY, now=T0 + 60).duration == duration


def test_only_the_last_twenty_lines_of_a_failed_runs_log_are_kept() -> None:
    body = "\n".join(f"line {i}" for i in range(1, 31))
    beat = judge_beat(HB, {"fail": Ping("fail", T0, body)}, since=T0 - DAY, now=T0 + 1)
    assert beat.log.splitlines() == [f"line {i}" for i in range(11, 31)]


@pytest.mark.parametrize(("given", "now", "up"), [
    ({"success": T0}, T0 + 60, 1), ({"success": T0, "fail": T0 + 1}, T0 + 60, 0),
    ({"success": T0}, T0 + DAY + GRACE + 1, 0), ({"success": T0, "start": T0 + 5}, T0 + 60, 1), ({}, T0, 1),
])
def test_the_up_metric_is_zero_only_when_late_or_failed(given: dict[str, float], now: float, up: int) -> None:
    from collectors.probes.heartbeats.collector import beat_samples

    samples = beat_samples(judge_beat(HB, pings(**given), since=T0, now=now))
    assert samples[0].metric == "rackpulse_heartbeat_up" and samples[0].value == up
    assert dict(samples[0].labels) == {"heartbeat": "nightly-backup"}


def test_the_metrics_say_the_last_ping_and_the_duration_and_nothing_not_known() -> None:
    from collectors.probes.heartbeats.collector import beat_samples

    both = beat_samples(judge_beat(HB, pings(start=T0 - 100, success=T0 - 40, fail=T0), since=T0 - DAY, now=T0 + 1))
    assert [(s.metric, s.value, dict(s.labels)) for s in both] == [
        ("rackpulse_heartbeat_up", 0, {"heartbeat": "nightly-backup"}),
        ("rackpulse_heartbeat_last_ping_timestamp_seconds", T0, {"heartbeat": "nightly-backup"}),
        ("rackpulse_heartbeat_duration_seconds", 100, {"heartbeat": "nightly-backup"})]
    only_success = beat_samples(judge_beat(HB, pings(success=T0 - 40), since=T0 - DAY, now=T0))
    assert [(s.metric, s.value) for s in only_success] == [
        ("rackpulse_heartbeat_up", 1), ("rackpulse_heartbeat_last_ping_timestamp_seconds", T0 - 40)]
    assert [s.metric for s in beat_samples(judge_beat(HB, {}, since=T0, now=T0))] == ["rackpulse_heartbeat_up"]


@pytest.mark.parametrize(("seconds", "said"), [
    (-5, "0 s"), (0, "0 s"), (59, "59 s"), (60, "1 min"), (3599, "59 min"), (3600, "1 h"), (3659, "1 h"),
    (3660, "1 h 1 min"), (2 * 86400 - 1, "47 h 59 min"), (2 * 86400, "2 d"), (2 * 86400 + 3599, "2 d"),
    (2 * 86400 + 3600, "2 d 1 h"), (9 * 86400 + 7 * 3600, "9 d 7 h"),
])
def test_spans_are_said_in_their_largest_whole_units(seconds: float, said: str) -> None:
    from collectors.probes.heartbeats.findings import span

    assert span(seconds) == said


def test_the_words_of_a_late_and_a_failed_job_and_the_all_clear() -> None:
    from collectors.probes.heartbeats.findings import all_clear
    from collectors.probes.heartbeats.state import HeartbeatsState

    now = T0 + 3 * DAY
    late = judge_beat(HB, pings(success=T0 + DAY), since=T0, now=now)
    never = judge_beat(HB, {}, since=T0, now=now)
    silent = judge_beat(HB, {"fail": Ping("fail", now - 120, "  \n")}, since=T0, now=now)
    found = findings(HeartbeatsState(beats=[late, never, silent]), Judging(now=now))
    assert [(f.rule, f.subject, f.labels.get("heartbeat")) for f in found] == [
        ("heartbeat_missed", "nightly-backup", "nightly-backup")] * 2 + [("heartbeat_failed", "nightly-backup",
                                                                         "nightly-backup")]
    assert found[0].text.startswith("job nightly-backup missed: last ping 2 d ago (")
    assert found[0].text.endswith("; it runs every 24 h")
    assert found[1].text == "job nightly-backup missed: never pinged in the 3 d since it was set up; it runs every 24 h"
    assert found[2].text == "job nightly-backup failed 2 min ago: no log sent"
    assert found[2].labels["log"] == "  "  # the log as kept: its lines, joined
    on_time = judge_beat(HB, pings(success=now - 60), since=T0, now=now)
    assert findings(HeartbeatsState(beats=[on_time]), Judging(now=now)) == []
    assert all_clear(HeartbeatsState(beats=[on_time]), Judging(now=now)) == "1 job on time"
    assert all_clear(HeartbeatsState(beats=[on_time, on_time]), Judging(now=now)) == "2 jobs on time"
    assert all_clear(HeartbeatsState(beats=[]), Judging(now=now)) is None


def test_each_heartbeat_is_a_monitor_up_unless_late_or_failed_public_only_when_said() -> None:
    from collectors.probes.heartbeats.findings import monitors
    from collectors.probes.heartbeats.state import HeartbeatsState

    shown = Heartbeat(name="offsite", every="1h", grace="10m", public=True)  # type: ignore[arg-type]
    beats = [judge_beat(HB, pings(success=T0), since=T0, now=T0 + 60),
             judge_beat(shown, pings(fail=T0), since=T0, now=T0 + 60)]
    got = monitors(HeartbeatsState(beats=beats))
    assert [(m.name, m.kind, m.ok, m.target, m.error, m.metric, dict(m.labels), m.public) for m in got] == [
        ("nightly-backup", "heartbeat", True, "every 86400 s", None, "rackpulse_heartbeat_up",
         {"heartbeat": "nightly-backup"}, False),
        ("offsite", "heartbeat", False, "every 3600 s", "backup failed", "rackpulse_heartbeat_up",
         {"heartbeat": "offsite"}, True)]
