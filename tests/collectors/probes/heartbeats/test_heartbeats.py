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
