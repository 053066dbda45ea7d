"""Runs each collector on its own interval, in a thread, with a timeout.

A collector that raises or hangs is marked down with its error; it never delays the
others (each has its own task) and never blocks a scrape (/metrics reads the snapshot).
Broad exceptions are caught here (a collector's bug) and at the few other boundaries that
must not stop: each plug-in's findings, tile and section (collectors/plugin.py), a page's
section (app/web/site.py), the alert tick per agent host.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from pydantic import ValidationError

from app.exposition import render_families
from app.snapshot import SELF_METRICS, CollectorStatus, Snapshot, read_states
from collectors import finite
from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    Entity,
    NoData,
    Sample,
    exiting,
    kill_running_commands,
)
from collectors.counters import CounterBook

__all__ = ["SELF_METRICS", "CollectorStatus", "RunSink", "Scheduler", "Snapshot", "read_states", "sane_result"]

log = logging.getLogger("rackpulse.scheduler")


class RunSink(Protocol):
    """Where each run goes: the Store (app/storage), or an agent's outbox (app/agent/push.py).
    The agent runs the scheduler without a database: nothing here imports SQLAlchemy."""

    def write_run(self, collector: str, started: float, duration: float, ok: bool, error: str | None,
                  result: CollectResult | None, skip: frozenset[str] = ...) -> None: ...

    def load_states(self) -> Mapping[str, Mapping[str, object]]:
        """Each collector's last state as it was stored (JSON, `collectors.state.dump`)."""
        ...


def sane_result(result: CollectResult) -> CollectResult:
    """The result with every number a page, a rule or the database can hold: a value that is
    not finite (a UPS saying `inf`) is dropped from the samples and is None ("unknown") in the
    state and the entities, with a warning naming how many there were."""
    samples = [s for s in result.samples if finite.is_sane(s.value)]
    state, bad = result.state, 0
    if state is not None:
        raw = state.model_dump()
        bad = finite.count_bad(raw)
        if bad:
            try:
                state = type(state).model_validate(finite.clean(raw)[0])
            except ValidationError:  # a field that cannot be unknown: the state is not kept
                state = None
    entities = result.entities
    bad_attrs = sum(finite.count_bad(e.attrs) for e in entities)
    if bad_attrs:
        entities = [Entity(e.kind, e.key, finite.clean(dict(e.attrs))[0]) for e in entities]
    dropped = len(result.samples) - len(samples)
    if not (dropped or bad or bad_attrs):
        return result
    warning = (f"{dropped + bad + bad_attrs} values were not finite numbers (inf, nan or beyond ±1e30): "
               f"{dropped} samples dropped, the rest shown as unknown")
    return CollectResult(samples, entities, state, [*result.warnings, warning])


# Runs of one collector that timed out and may still hang in their threads before the next is
# not started: each holds a thread (and what it read), so they are bounded, not left to pile up.
ABANDONED_MAX = 2


def in_daemon_thread(fn: Callable[[], Any], name: str, started: list[threading.Thread] | None = None
                     ) -> asyncio.Future[Any]:
    """fn() in a thread of its own that never holds the process up: asyncio.to_thread's pool
    threads are joined when the loop closes, so one collection stuck in a read kept `serve` (and
    the demo) alive long after SIGTERM. A collection's thread is a daemon: it dies with the process."""
    loop = asyncio.get_running_loop()
    fut: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not fut.done():
            (fut.set_result if ok else fut.set_exception)(value)

    def run() -> None:
        try:
            result, ok = fn(), True
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task as it is
            result, ok = exc, False
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits any more
            loop.call_soon_threadsafe(settle, ok, result)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    if started is not None:  # the caller watches the thread itself (it outlives a closed loop's future)
        started.append(thread)
    return fut


def _close(coll: Collector) -> None:
    """A collector a reload dropped: its connection (the ISG's Modbus client) closed."""
    close = getattr(coll, "close", None)
    if callable(close):
        try:
            close()
        except Exception:  # noqa: BLE001 - a close that fails costs nothing but its socket
            log.debug("closing %s failed", type(coll).__name__, exc_info=True)


class Scheduler:
    def __init__(
        self,
        collectors: Mapping[str, Collector],
        settings: Mapping[str, tuple[float, float]],  # name -> (interval, timeout)
        snapshot: Snapshot,
        store: RunSink | None = None,
        on_update: Callable[[], None] | None = None,
        judging: bool = True,
    ) -> None:
        self.collectors = dict(collectors)
        self.snapshot = snapshot
        self.store: RunSink | None = store
        self.on_update = on_update
        # Findings after each run, for pages and alerts. An agent has neither: its server judges
        # what the agent sends (with the server's thresholds), so the agent does not.
        self.judging = judging
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = False
        self._running = False  # start() was called: a collector added by a reload starts its loop
        self._inflight: dict[str, asyncio.Future[CollectResult]] = {}
        # Threads of runs that timed out and still run (a read that trickles, a hung call): the
        # next run does not wait for them, but no more than ABANDONED_MAX pile up per collector.
        self._abandoned: dict[str, list[threading.Thread]] = {}
        # Every counter of every collector, guarded once here: never falling, never faster than
        # the device can (a flapping plug booked 10,000 kWh in 20 s), whichever plug-in reads it.
        self.counters = CounterBook()
        for name in self.collectors:
            interval, timeout = settings[name]
            snapshot.statuses[name] = CollectorStatus(name, interval, timeout)

    def restore(self) -> None:
        """Give collectors (and the pages) the state stored by the last run before a restart."""
        if self.store is None:
            return
        try:
            states = read_states(self.store.load_states(), self.snapshot.host)
        except Exception:  # noqa: BLE001 - a broken DB must not stop collection
            log.exception("could not load stored collector state")
            return
        for name, state in states.items():
            coll = self.collectors.get(name)
            if coll is not None:
                coll.restore(state)
            self.snapshot.states.setdefault(name, state)

    async def run_once(self, name: str) -> CollectorStatus:
        st = self.snapshot.statuses[name]
        if name in self._inflight and not self._inflight[name].done():
            # Telegraf's rule: never overlap a run that is still going (a hung smartctl).
            log.debug("%s: previous run still in progress; this run skipped", name)
            return st
        if (hung := self._still_hung(name)) is not None:
            self._record(st, time.time(), 0.0, False, hung, False, None)
            return st
        coll = self.collectors[name]
        started = time.time()
        t0 = time.perf_counter()
        st.running = True
        threads: list[threading.Thread] = []
        fut = in_daemon_thread(coll.collect, f"collect-{name}", threads)
        self._inflight[name] = fut
        result: CollectResult | None = None
        error: str | None = None
        no_data = False
        try:
            result = await asyncio.wait_for(asyncio.shield(fut), timeout=st.timeout)
        except TimeoutError:
            error = f"timed out after {st.timeout:g}s"
            # Abandoned: its thread may never return (Python cannot stop it), and the next run must
            # not wait for it (a trickling API's collector never ran again).
            self._abandoned.setdefault(name, []).extend(threads)
            self._inflight.pop(name, None)
        except NoData as exc:
            no_data, error = True, None
            result = CollectResult()
            log.debug("%s: %s", name, exc)
            st.last_error = str(exc)
        except CollectorError as exc:
            error = str(exc) or type(exc).__name__
        except Exception as exc:  # noqa: BLE001 - a bug in one collector must not stop the others
            error = f"{type(exc).__name__}: {exc}"
            log.error("%s: unexpected error\n%s", name, traceback.format_exc())
        duration = time.perf_counter() - t0
        if self.collectors.get(name) is not coll:
            # a reload removed or rebuilt it while it ran: what the old one read is not kept, and
            # nothing of it is looked up (a KeyError here was 19 "Task exception never retrieved")
            st.running = False
            log.info("%s: removed or rebuilt by a reload while it ran; this run's result is dropped", name)
            return st
        ok = error is None
        if result is not None:
            result = self._guarded(name, coll, sane_result(result))
        self._record(st, started, duration, ok, error, no_data, result)
        if self.store is not None:
            try:
                skip = frozenset(m for m, spec in coll.metrics.items() if not spec.store)
                await asyncio.to_thread(self.store.write_run, name, started, duration, ok, error, result, skip)
            except Exception:  # noqa: BLE001 - keep collecting; the snapshot still serves pages
                log.exception("%s: could not store the run", name)
        return st

    def _guarded(self, name: str, coll: Collector, result: CollectResult) -> CollectResult:
        """The result with its counters through the CounterBook; each bad read is a warning."""
        try:
            limits, now = coll.counter_limits(), coll.counter_now()
        except Exception as exc:  # noqa: BLE001 - a plug-in's bug costs its limits, not the run
            log.error("%s: its counter limits could not be read (%s); the limits of their units apply", name, exc)
            limits, now = {}, time.time()
        samples, said = self.counters.judge(name, result.samples, coll.metrics, limits, now)
        if said:
            log.info("%s: %s", name, "; ".join(said[:3]))  # said on /collectors as the run's warnings
        return CollectResult(samples, result.entities, result.state, [*result.warnings, *said])

    def abandoned_threads(self) -> list[threading.Thread]:
        """The threads of timed-out runs that are still running, of every collector: what a
        measurement of the process waits for (bench/hostile.py), lest it count their memory."""
        return [t for threads in self._abandoned.values() for t in threads if t.is_alive()]

    def _still_hung(self, name: str) -> str | None:
        """Why the run is not started: ABANDONED_MAX earlier runs of it still hang in their threads."""
        alive = [t for t in self._abandoned.get(name, []) if t.is_alive()]
        self._abandoned[name] = alive
        if len(alive) < ABANDONED_MAX:
            return None
        return (f"its last {len(alive)} runs timed out and still hang in their threads; it runs again as soon "
                "as one of them returns")

    def _record(self, st: CollectorStatus, started: float, duration: float, ok: bool, error: str | None,
                no_data: bool, result: CollectResult | None) -> None:
        was_up = st.up
        st.running = False
        st.runs += 1
        st.last_run = started
        st.duration = duration
        st.no_data = no_data
        if ok:
            st.up = True
            st.last_success = started
            if not no_data:
                st.last_error = None
                st.last_data = started
            st.warnings = list(result.warnings) if result else []
            if was_up is False:
                log.info("%s: recovered", st.name)
        else:
            st.up = False
            st.last_error = error
            # Log on transitions only: one ERROR when it breaks, DEBUG while it stays broken. A run
            # cut by the process's own stop is no breakage (it printed an ERROR after Ctrl-C).
            broke = was_up is not False and not exiting()
            (log.error if broke else log.debug)("%s: %s", st.name, error)
        coll = self.collectors[st.name]
        if result is not None:
            if result.state is not None:
                self.snapshot.states[st.name] = result.state
                if (before := self.snapshot.rebuilt.pop(st.name, None)) is not None:
                    self.snapshot.unwatched_sources[st.name] = before - result.state.sources()
            elif no_data:  # the source went away: nothing of it to show any more
                self.snapshot.states.pop(st.name, None)
        if self.judging:
            self.snapshot.findings_of(st.name)  # judged once, now: tiles, pages and alerts read these
        if result is not None:
            self.snapshot.samples[st.name] = result.samples
            try:
                self.snapshot.blocks[st.name] = render_families(result.samples, coll.metrics, self.snapshot.host)
            except ValueError as exc:  # an undeclared metric is a bug; keep the old block
                log.error("%s: %s", st.name, exc)
        elif not ok and st.name in self.snapshot.blocks:
            # The source cannot be read: its values are absent from /metrics, not its last ones served
            # as if fresh, and its own `_up` says 0 (the samples stay for the user rules, which hold).
            up = f"rackpulse_{st.name}_up"
            down = [Sample.of(up, 0)] if up in coll.metrics else []
            self.snapshot.blocks[st.name] = render_families(down, coll.metrics, self.snapshot.host)
        self.snapshot.rebuild_metrics()
        if self.on_update:
            self.on_update()

    async def run_all_once(self) -> None:
        await asyncio.gather(*(self.run_once(n) for n in self.collectors))

    async def _loop(self, name: str, first_delay: float) -> None:
        st = self.snapshot.statuses[name]
        await asyncio.sleep(first_delay)
        while not self._stopping:  # a cancellation that wait_for swallowed (Python 3.11) still ends here
            t0 = time.monotonic()
            await self.run_once(name)
            await asyncio.sleep(max(st.interval - (time.monotonic() - t0), 0.05))

    def start(self, jitter: bool = True) -> None:
        self._running = True
        for name, st in self.snapshot.statuses.items():
            delay = random.uniform(0, min(st.interval, 5.0)) if jitter else 0.0  # noqa: S311
            self._tasks.append(asyncio.create_task(self._loop(name, delay), name=f"collector-{name}"))

    def reconfigure(self, built: Mapping[str, Collector], settings: Mapping[str, tuple[float, float]],
                    changed: set[str]) -> None:
        """A reloaded config, while running: a collector no longer enabled stops and its state
        leaves the pages; a new one starts; one whose section `changed` is replaced by its new
        build, seeded with the state the old one left (its memory); every one takes its new
        interval and timeout from its next run. Unchanged collectors keep their objects."""
        tasks = {t.get_name(): t for t in self._tasks}
        for name in [n for n in self.collectors if n not in built]:
            if (task := tasks.get(f"collector-{name}")) is not None:
                task.cancel()
                self._tasks.remove(task)
            _close(self.collectors.pop(name))
            self.counters.forget(name)
            for held in (self.snapshot.statuses, self.snapshot.states, self.snapshot.blocks, self.snapshot.samples):
                held.pop(name, None)
            self.snapshot.unwatched.add(name)
        for name, coll in built.items():
            self.snapshot.unwatched.discard(name)
            interval, timeout = settings[name]
            st = self.snapshot.statuses.get(name)
            if st is not None:
                st.interval, st.timeout = interval, timeout
                if name not in changed:
                    continue
            if (old := self.collectors.get(name)) is not None and old is not coll:
                _close(old)
                if (before := self.snapshot.states.get(name)) is not None:
                    self.snapshot.rebuilt[name] = before.sources()
                self.snapshot.unwatched_sources.pop(name, None)
            self.collectors[name] = coll
            if (state := self.snapshot.states.get(name)) is not None:
                coll.restore(state)
            if st is None:
                self.snapshot.statuses[name] = CollectorStatus(name, interval, timeout)
                if self._running:
                    self._tasks.append(asyncio.create_task(self._loop(name, 0.0), name=f"collector-{name}"))
        self.snapshot.rebuild_metrics()

    def add_task(self, coro_factory: Callable[[], Any], interval: float | Callable[[], float], name: str) -> None:
        """`coro_factory` every `interval` seconds (a callable: read again before each wait, so a
        reloaded config's interval applies from the next one)."""
        every = interval if callable(interval) else (lambda: interval)

        async def loop() -> None:
            while not self._stopping:
                await asyncio.sleep(every())
                try:
                    await in_daemon_thread(coro_factory, name)
                except Exception:  # noqa: BLE001
                    log.exception("%s failed", name)

        self._tasks.append(asyncio.create_task(loop(), name=name))

    async def stop(self, grace: float = 1.0) -> None:
        """Stop within about `grace` seconds whatever the collectors are doing: their loops are
        cancelled (and flagged, in case a cancellation is swallowed), the commands they run are
        killed, and a collection still running in its thread is left to die with the process
        (its thread is a daemon). It once waited more than 15 minutes here."""
        self._stopping = True
        for t in self._tasks:
            t.cancel()
        kill_running_commands()
        if self._tasks:
            _, pending = await asyncio.wait(self._tasks, timeout=grace)
            for t in pending:
                t.cancel()
            if pending:
                await asyncio.wait(pending, timeout=grace)
                log.warning("stopping: %s did not end within %gs; left behind", ", ".join(t.get_name() for t in pending
                                                                                         if not t.done()) or "-", grace)
        self._tasks.clear()
