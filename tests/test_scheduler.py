"""The scheduler isolates collectors: one that raises or hangs never stalls the others."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

import pytest

from app.scheduler import Scheduler, Snapshot
from collectors.base import Collector, CollectorError, CollectResult, MetricSpec, NoData, Sample
from collectors.network.bonding.state import BondingState
from collectors.state import State, dump


class FakeState(State):
    value: float | None = None


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
                             state=FakeState(value=self.value))


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
        # The hung thread was abandoned: the next run starts on time, beside it.
        hung.behaviour = "ok"
        await s.run_once("hung")
        assert hung.calls == 2 and s.snapshot.statuses["hung"].up
        hung.release.set()

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


def test_metrics_come_from_the_snapshot_and_a_failed_runs_values_are_absent_not_stale() -> None:
    c = Fake("x", value=5)
    s = make(c)
    run(s.run_once("x"))
    assert 'rackpulse_fake_value{host="h",collector="x"} 5' in s.snapshot.metrics.decode()
    c.behaviour = "raise"
    run(s.run_once("x"))
    text = s.snapshot.metrics.decode()
    assert "rackpulse_fake_value{" not in text  # a value that was not read is not served as if it were
    assert 'rackpulse_collector_up{host="h",collector="x"} 0' in text
    c.behaviour = "ok"
    run(s.run_once("x"))
    assert 'rackpulse_fake_value{host="h",collector="x"} 5' in s.snapshot.metrics.decode()


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


class Store:
    """Records what the scheduler asks to store; can be made to fail."""

    def __init__(self, states: dict | None = None, fail: bool = False) -> None:  # type: ignore[type-arg]
        self.runs: list[tuple] = []  # type: ignore[type-arg]
        self.states = states or {}
        self.fail = fail

    def write_run(self, name, started, duration, ok, error, result, skip):  # type: ignore[no-untyped-def]
        if self.fail:
            raise OSError("disk full")
        self.runs.append((name, ok, error, skip, result))

    def load_states(self):  # type: ignore[no-untyped-def]
        if self.fail:
            raise OSError("database gone")
        return self.states


class Remembers(Fake):
    metrics = {"rackpulse_fake_value": MetricSpec("a value"), "rackpulse_fake_info": MetricSpec("id", store=False)}

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.restored: dict | None = None  # type: ignore[type-arg]

    def restore(self, state):  # type: ignore[no-untyped-def]
        self.restored = state


def test_every_run_is_stored_with_its_outcome_and_the_metrics_not_worth_keeping_are_skipped() -> None:
    c, store = Remembers("x"), Store()
    s = Scheduler({"x": c}, {"x": (60.0, 1.0)}, Snapshot(host="h"), store)  # type: ignore[arg-type]
    run(s.run_once("x"))
    c.behaviour = "raise"
    run(s.run_once("x"))
    assert [(n, ok, err) for n, ok, err, _, _ in store.runs] == [("x", True, None), ("x", False, "device unreachable")]
    assert store.runs[0][3] == frozenset({"rackpulse_fake_info"})


def test_a_store_that_fails_does_not_stop_collection() -> None:
    c = Fake("x", value=7)
    s = Scheduler({"x": c}, {"x": (60.0, 1.0)}, Snapshot(host="h"), Store(fail=True))  # type: ignore[arg-type]
    st = run(s.run_once("x"))
    assert st.up is True and s.snapshot.states["x"] == FakeState(value=7)


def test_restore_gives_each_collector_and_the_pages_the_state_stored_before_a_restart(
        caplog: pytest.LogCaptureFixture) -> None:
    c = Remembers("bonding")
    snap = Snapshot(host="h")
    stored = dump(BondingState.model_validate({"bonds": [{"name": "bond0", "slaves": [{"name": "eth0", "up": True}]}]}))
    s = Scheduler({"bonding": c}, {"bonding": (60.0, 1.0)}, snap,
                  Store({"bonding": stored, "gone": {"a": 1}, "frr": {"state_version": 99, "peers": []},
                         "nut": {"ups": [{"name": "u", "up": "maybe"}]}}))  # type: ignore[arg-type]
    s.restore()
    # The collector and the pages get its own type back; a plug-in no longer installed is left out,
    # and a state of another version or shape is dropped, said in one line each.
    assert isinstance(c.restored, BondingState) and c.restored.bonds[0].slaves[0].up is True
    assert snap.states == {"bonding": c.restored}
    said = [r.getMessage() for r in caplog.records if r.name == "rackpulse.scheduler"]
    assert any("frr is dropped: state of version 99; this rackpulse reads version 1" in m for m in said), said
    assert any("nut is dropped: ups.0.up:" in m for m in said), said
    broken = Scheduler({"x": Remembers("x")}, {"x": (60.0, 1.0)}, Snapshot(host="h"), Store(fail=True))  # type: ignore[arg-type]
    broken.restore()  # a broken database must not stop start-up
    assert broken.snapshot.states == {}


def test_the_collectors_own_metrics_say_up_duration_errors_and_last_success() -> None:
    c = Fake("x")
    s = make(c)
    st = run(s.run_once("x"))
    text = s.snapshot.metrics.decode()
    assert 'rackpulse_collector_up{host="h",collector="x"} 1' in text
    assert 'rackpulse_collector_item_errors{host="h",collector="x"} 0' in text
    # Compared as a number: a time that rounds to a whole second is written without ".0".
    line = next(ln for ln in text.splitlines()
                if ln.startswith('rackpulse_collector_last_success_timestamp_seconds{host="h",collector="x"} '))
    assert float(line.rsplit(" ", 1)[1]) == round(st.last_success, 3)
    assert 'rackpulse_collector_duration_seconds{host="h",collector="x"} ' in text
    assert st.runs == 1 and st.last_run == st.last_success and st.duration is not None and st.duration >= 0


def test_a_collector_never_run_has_no_metrics_of_its_own_yet() -> None:
    s = make(Fake("x"))
    s.snapshot.rebuild_metrics()
    assert b"rackpulse_collector_up" not in s.snapshot.metrics


def test_warnings_of_a_run_are_kept_and_counted_as_item_errors() -> None:
    class Warns(Fake):
        def collect(self) -> CollectResult:
            return CollectResult(warnings=["sdq: no answer", "sdr: no answer"])

    s = make(Warns("x"))
    st = run(s.run_once("x"))
    assert st.warnings == ["sdq: no answer", "sdr: no answer"] and st.up is True
    assert 'rackpulse_collector_item_errors{host="h",collector="x"} 2' in s.snapshot.metrics.decode()


def test_an_absent_source_keeps_its_reason_and_a_later_success_clears_it() -> None:
    c = Fake("x", "nodata")
    s = make(c)
    st = run(s.run_once("x"))
    assert (st.up, st.no_data, st.last_error) == (True, True, "no /proc/mdstat")
    c.behaviour = "ok"
    st = run(s.run_once("x"))
    assert (st.up, st.no_data, st.last_error) == (True, False, None)


def test_a_collector_is_stale_after_three_missed_intervals() -> None:
    s = make(Fake("x"))
    st = run(s.run_once("x"))
    assert not st.stale(st.last_success + 180)  # 3 x 60 s
    assert st.stale(st.last_success + 180.5)


def test_each_run_renews_the_snapshot_version_and_its_gzip() -> None:
    import gzip

    updates = []
    c = Fake("x")
    s = Scheduler({"x": c}, {"x": (60.0, 1.0)}, Snapshot(host="h"), on_update=lambda: updates.append(1))
    run(s.run_once("x"))
    run(s.run_once("x"))
    assert s.snapshot.version == 2 and len(updates) == 2
    packed = s.snapshot.metrics_gzip
    assert gzip.decompress(packed) == s.snapshot.metrics
    assert s.snapshot.metrics_gzip is packed  # made once per version, when a scrape asks
    run(s.run_once("x"))
    assert s.snapshot.metrics_gzip is not packed and gzip.decompress(s.snapshot.metrics_gzip) == s.snapshot.metrics


def test_a_scheduler_that_does_not_judge_leaves_findings_to_its_server() -> None:
    judged: list[str] = []
    for judging in (True, False):
        s = Scheduler({"x": Fake("x")}, {"x": (60.0, 1.0)}, Snapshot(host="h"), judging=judging)
        s.snapshot.judge.findings = lambda name, *_: judged.append(name) or []
        run(s.run_once("x"))
        assert s.snapshot.statuses["x"].up and s.snapshot.metrics  # collected all the same
    assert judged == ["x"]  # the judging one only


def test_a_background_task_runs_on_its_interval_and_outlives_its_own_errors() -> None:
    calls = []

    def task() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("first time fails")

    s = make(Fake("x"))

    async def scenario() -> None:
        s.add_task(task, 0.02, "maintenance")
        deadline = time.monotonic() + 5
        while len(calls) < 3 and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        await s.stop()

    run(scenario())
    assert len(calls) >= 3


def test_the_collectors_own_metrics_are_described_for_a_person_reading_metrics() -> None:
    s = make(Fake("x"))
    run(s.run_once("x"))
    text = s.snapshot.metrics.decode()
    for line in ("# HELP rackpulse_collector_up 1 if the collector's last run succeeded (an absent source counts "
                 "as up).", "# TYPE rackpulse_collector_up gauge",
                 "# HELP rackpulse_collector_duration_seconds Duration of the collector's last run.",
                 "# HELP rackpulse_collector_last_success_timestamp_seconds Unix time of the last successful run.",
                 "# HELP rackpulse_collector_item_errors Items (disks, arrays) the last run could not read."):
        assert line + "\n" in text


def test_what_goes_wrong_is_logged_in_words_that_name_the_collector(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="rackpulse.scheduler")
    c = Fake("disks", "raise")
    s = Scheduler({"disks": c}, {"disks": (60.0, 1.0)}, Snapshot(host="h"), Store(fail=True))  # type: ignore[arg-type]
    run(s.run_once("disks"))
    run(s.run_once("disks"))
    c.behaviour = "bug"
    run(s.run_once("disks"))
    c.behaviour = "ok"
    run(s.run_once("disks"))
    s.restore()
    msgs = [(r.levelname, r.getMessage().splitlines()[0]) for r in caplog.records]
    assert ("ERROR", "disks: device unreachable") in msgs
    assert ("DEBUG", "disks: device unreachable") in msgs  # the second time, quietly
    assert ("ERROR", "disks: unexpected error") in msgs
    assert ("ERROR", "disks: could not store the run") in msgs
    assert ("INFO", "disks: recovered") in msgs
    assert ("ERROR", "could not load stored collector state") in msgs


def test_a_run_that_overlaps_one_still_within_its_timeout_is_skipped_and_says_so(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="rackpulse.scheduler")
    c = Fake("smart", "hang")
    s = make(c, timeout=5.0)

    async def scenario() -> None:
        first = asyncio.create_task(s.run_once("smart"))
        await asyncio.sleep(0.05)  # it runs, within its timeout
        await s.run_once("smart")
        assert c.calls == 1
        c.release.set()
        await first

    run(scenario())
    assert any(r.getMessage() == "smart: previous run still in progress; this run skipped" for r in caplog.records)


class HangsFirst(Fake):
    """An API that trickles its answer once: the first run hangs far past its timeout."""

    def collect(self) -> CollectResult:
        if self.calls == 0:
            self.calls += 1
            self.release.wait(30)
            return CollectResult()
        return super().collect()


def test_a_run_that_timed_out_is_abandoned_and_the_next_run_happens_on_time() -> None:
    """A trickling API timed the run out but its thread never returned, and the collector never
    ran again: the next run no longer waits for the abandoned one."""
    c = HangsFirst("proxmox")
    s = make(c, timeout=0.2)
    try:
        st = run(s.run_once("proxmox"))
        assert st.up is False and st.last_error == "timed out after 0.2s"
        st = run(s.run_once("proxmox"))
        assert st.up is True and c.calls == 2
        assert s.snapshot.states["proxmox"] == FakeState(value=1.0)
    finally:
        c.release.set()


def test_runs_that_keep_hanging_hold_at_most_two_threads_and_the_status_says_why() -> None:
    c = Fake("ipmi", "hang")
    s = make(c, timeout=0.1)
    before = threading.active_count()
    try:
        for _ in range(6):
            st = run(s.run_once("ipmi"))
        assert c.calls == 2  # two abandoned runs; the others not started
        assert threading.active_count() - before <= 2
        assert st.up is False and "still hang in their threads" in (st.last_error or "")
        c.release.set()  # they return at last: the next run starts again
        deadline = time.monotonic() + 10
        while any(t.is_alive() for t in s._abandoned["ipmi"]) and time.monotonic() < deadline:
            time.sleep(0.01)
        c.behaviour = "ok"
        st = run(s.run_once("ipmi"))
        assert st.up is True and c.calls == 3
    finally:
        c.release.set()


class Clock:
    """A clock the test moves: time.monotonic and time.perf_counter of the scheduler."""

    def __init__(self, step: float = 0.0) -> None:
        self.now, self.step = 100.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


@pytest.mark.parametrize("run_takes, first, delays", [
    (0.3, 0.5, [0.5, 0.7, 0.7]),  # the next run one interval after this one began
    (2.5, 0.0, [0.0, 0.05, 0.05]),  # a run longer than its interval: only a moment's pause
])
def test_a_collector_runs_again_one_interval_after_its_last_run_began(
        monkeypatch: pytest.MonkeyPatch, run_takes: float, first: float, delays: list[float]) -> None:
    import app.scheduler as sched

    clock = Clock()
    monkeypatch.setattr(sched.time, "monotonic", clock)
    slept: list[float] = []

    async def fake_sleep(d: float) -> None:
        slept.append(round(d, 6))
        if len(slept) == 3:
            raise asyncio.CancelledError

    s = make(Fake("x"))
    s.snapshot.statuses["x"].interval = 1.0

    async def run_once(name: str):  # type: ignore[no-untyped-def]
        clock.now += run_takes
        return s.snapshot.statuses[name]

    s.run_once = run_once  # type: ignore[method-assign]
    monkeypatch.setattr(sched.asyncio, "sleep", fake_sleep)
    with pytest.raises(asyncio.CancelledError):
        run(s._loop("x", first))
    assert slept == delays


def test_start_spreads_first_runs_over_at_most_five_seconds_and_names_its_tasks(monkeypatch: pytest.MonkeyPatch) -> None:
    import app.scheduler as sched

    firsts: dict[str, float] = {}

    async def loop(self, name: str, first_delay: float) -> None:  # type: ignore[no-untyped-def]
        firsts[name] = first_delay

    monkeypatch.setattr(sched.Scheduler, "_loop", loop)
    monkeypatch.setattr(sched.random, "uniform", lambda a, b: (a, b))
    snap = Snapshot(host="h")
    s = Scheduler({"fast": Fake("fast"), "slow": Fake("slow")}, {"fast": (2.0, 1.0), "slow": (60.0, 1.0)}, snap)

    async def scenario(jitter: bool | None) -> list[str]:
        if jitter is None:
            s.start()
        else:
            s.start(jitter=jitter)
        s.add_task(lambda: None, 60, "maintenance")
        names = [t.get_name() for t in s._tasks]
        await asyncio.sleep(0)  # let the collector tasks begin
        await s.stop()
        return names

    names = run(scenario(None))
    assert firsts == {"fast": (0, 2.0), "slow": (0, 5.0)}
    assert names == ["collector-fast", "collector-slow", "maintenance"]
    run(scenario(False))
    assert firsts == {"fast": 0.0, "slow": 0.0}


def test_a_run_is_marked_running_while_it_runs_and_counted_when_done() -> None:
    c = Fake("x", "hang")
    s = make(c, timeout=5)

    async def scenario() -> None:
        task = asyncio.ensure_future(s.run_once("x"))
        while c.calls == 0:
            await asyncio.sleep(0.01)
        assert s.snapshot.statuses["x"].running is True
        c.release.set()
        st = await task
        assert st.running is False and st.runs == 1
        c.behaviour = "ok"
        assert (await s.run_once("x")).runs == 2

    run(scenario())


def test_a_run_stores_its_start_duration_and_result_and_feeds_user_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    import app.scheduler as sched

    monkeypatch.setattr(sched.time, "perf_counter", Clock(step=0.25))
    c, store = Remembers("x"), Store()
    s = Scheduler({"x": c}, {"x": (60.0, 1.0)}, Snapshot(host="h"), store)  # type: ignore[arg-type]
    st = run(s.run_once("x"))
    assert st.duration == 0.25
    name, ok, err, skip, result = store.runs[0]
    assert result.state == FakeState(value=1.0) and s.snapshot.samples["x"] == result.samples and result.samples


def test_a_source_that_disappears_clears_what_the_pages_show_of_it(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="rackpulse.scheduler")
    c = Fake("x", value=3)
    s = make(c)
    run(s.run_once("x"))
    c.behaviour = "nodata"
    run(s.run_once("x"))
    assert "x" not in s.snapshot.states and s.snapshot.samples["x"] == []
    assert ("DEBUG", "x: no /proc/mdstat") in [(r.levelname, r.getMessage()) for r in caplog.records]


def test_an_error_without_words_is_named_by_its_kind_and_a_bug_logs_its_traceback(
        caplog: pytest.LogCaptureFixture) -> None:
    class Silent(Fake):
        def collect(self) -> CollectResult:
            if self.behaviour == "bug":
                raise KeyError("oops")
            raise CollectorError("")

    c = Silent("x")
    s = make(c)
    assert run(s.run_once("x")).last_error == "CollectorError"
    c.behaviour = "bug"
    assert run(s.run_once("x")).last_error == "KeyError: 'oops'"
    logged = [r.getMessage() for r in caplog.records if "unexpected error" in r.getMessage()]
    assert logged and "Traceback" in logged[0] and "KeyError: 'oops'" in logged[0]


def test_an_undeclared_metric_is_logged_and_the_last_good_metrics_kept(caplog: pytest.LogCaptureFixture) -> None:
    c = Fake("x", value=4)
    s = make(c)
    run(s.run_once("x"))

    class Undeclared(Fake):
        def collect(self) -> CollectResult:
            return CollectResult(samples=[Sample.of("rackpulse_undeclared", 1)])

    s.collectors["x"] = Undeclared("x")
    run(s.run_once("x"))
    assert 'rackpulse_fake_value{host="h",collector="x"} 4' in s.snapshot.metrics.decode()
    assert ("ERROR", "x: metric 'rackpulse_undeclared' is not declared") in \
        [(r.levelname, r.getMessage()) for r in caplog.records]


def test_own_metrics_of_statuses_not_run_are_skipped_without_hiding_the_others() -> None:
    from app.scheduler import CollectorStatus

    snap = Snapshot(host="h")
    snap.statuses = {"a": CollectorStatus("a", 60, 30), "b": CollectorStatus("b", 60, 30, up=True, duration=None,
                                                                               last_success=1.23456)}
    snap.rebuild_metrics()
    text = snap.metrics.decode()
    assert 'collector="a"' not in text
    assert 'rackpulse_collector_duration_seconds{host="h",collector="b"} 0\n' in text
    assert 'rackpulse_collector_last_success_timestamp_seconds{host="h",collector="b"} 1.235\n' in text
    assert snap.parts and snap.version == 1
