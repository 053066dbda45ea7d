"""The scheduler isolates collectors: one that raises or hangs never stalls the others."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

import pytest

from app.scheduler import Scheduler, Snapshot
from collectors.base import Collector, CollectorError, CollectResult, MetricSpec, NoData, Sample


class Fake(Collector):
    metrics = {"rackpulse_fake_value": MetricSpec("a value")}

    def __init__(self, name: str, behaviour: str = "ok", value: float = 1.0) -> None:
        self.name = name  # type: ignore[misc]
        self.behaviour = behaviour
        self.value = value
        self.calls = 0
        self.release = threading.Event()

    def collect(self) -> CollectResult:
        self.calls += 1
        if self.behaviour == "raise":
            raise CollectorError("device unreachable")
        if self.behaviour == "bug":
            raise KeyError("oops")
        if self.behaviour == "hang":
            self.release.wait(10)
        if self.behaviour == "nodata":
            raise NoData("no /proc/mdstat")
        return CollectResult(samples=[Sample.of("rackpulse_fake_value", self.value, collector=self.name)],
                             state={"value": self.value})


def make(*colls: Fake, timeout: float = 0.3) -> Scheduler:
    snap = Snapshot(host="h")
    return Scheduler({c.name: c for c in colls}, {c.name: (60.0, timeout) for c in colls}, snap)


def run(coro):  # type: ignore[no-untyped-def]
    return asyncio.run(coro)


def test_a_collector_that_raises_is_down_with_its_error_and_the_others_are_up() -> None:
    s = make(Fake("good"), Fake("bad", "raise"))
    run(s.run_all_once())
    st = s.snapshot.statuses
    assert st["good"].up and not st["bad"].up
    assert st["bad"].last_error == "device unreachable"
    text = s.snapshot.metrics.decode()
    assert 'rackpulse_collector_up{host="h",collector="bad"} 0' in text
    assert 'rackpulse_collector_up{host="h",collector="good"} 1' in text
    assert 'rackpulse_fake_value{host="h",collector="good"} 1' in text


def test_a_bug_in_a_collector_is_caught_and_reported() -> None:
    s = make(Fake("buggy", "bug"))
    run(s.run_all_once())
    assert s.snapshot.statuses["buggy"].last_error == "KeyError: 'oops'"


def test_a_hung_collector_times_out_without_delaying_the_others() -> None:
    hung, good = Fake("hung", "hang"), Fake("good")
    s = make(hung, good, timeout=0.3)

    async def scenario() -> None:
        await s.run_all_once()
        assert not s.snapshot.statuses["hung"].up
        assert s.snapshot.statuses["hung"].last_error == "timed out after 0.3s"
        assert s.snapshot.statuses["good"].up
        # While the hung thread is still running, the next run is skipped, not stacked.
        await s.run_once("hung")
        assert hung.calls == 1
        hung.release.set()
        await asyncio.sleep(0.2)
        hung.behaviour = "ok"
        await s.run_once("hung")
        assert hung.calls == 2 and s.snapshot.statuses["hung"].up

    run(scenario())


def test_an_absent_source_is_up_with_no_data() -> None:
    s = make(Fake("md", "nodata"))
    run(s.run_all_once())
    st = s.snapshot.statuses["md"]
    assert st.up and st.no_data and "no /proc/mdstat" in (st.last_error or "")


def test_failures_are_logged_once_and_recovery_once(caplog: pytest.LogCaptureFixture) -> None:
    c = Fake("flaky", "raise")
    s = make(c)
    caplog.set_level(logging.DEBUG, logger="rackpulse.scheduler")

    async def scenario() -> None:
        for _ in range(3):
            await s.run_once("flaky")
        c.behaviour = "ok"
        await s.run_once("flaky")

    run(scenario())
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    infos = [r for r in caplog.records if r.levelno == logging.INFO and "recovered" in r.getMessage()]
    assert len(errors) == 1 and len(infos) == 1


def test_metrics_come_from_the_snapshot_and_a_failed_run_keeps_the_last_samples() -> None:
    c = Fake("x", value=5)
    s = make(c)
    run(s.run_once("x"))
    c.behaviour = "raise"
    run(s.run_once("x"))
    text = s.snapshot.metrics.decode()
    assert 'rackpulse_fake_value{host="h",collector="x"} 5' in text
    assert 'rackpulse_collector_up{host="h",collector="x"} 0' in text


def test_collectors_run_concurrently_on_their_own_intervals() -> None:
    slow, fast = Fake("slow", "hang"), Fake("fast")
    snap = Snapshot(host="h")
    s = Scheduler({"slow": slow, "fast": fast}, {"slow": (60.0, 5.0), "fast": (0.05, 1.0)}, snap)

    async def scenario() -> None:
        s.start(jitter=False)
        deadline = time.monotonic() + 5
        while fast.calls < 3 and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        slow.release.set()
        await s.stop()

    run(scenario())
    assert fast.calls >= 3 and slow.calls == 1
