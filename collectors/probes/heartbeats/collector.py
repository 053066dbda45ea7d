"""Heartbeats: each job's last pings (recorded by the web at `/ping/<token>`) against its
schedule. Nothing is run here: a collection reads the PingBook and says, per job, whether it is
on time, running, late or failed."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, ClassVar

from collectors.base import Collector, CollectResult, MetricSpec, NoData, Runner, Sample
from collectors.context import HostContext, Ping, PingBook, SavedEntries
from collectors.probes.heartbeats.config import Heartbeat, HeartbeatsConfig
from collectors.probes.heartbeats.state import Beat, HeartbeatsState
from collectors.state import State

LOG_LINES = 20  # of a failed run's log, the last ones (they say why)


def judge_beat(hb: Heartbeat, pings: dict[str, Ping], since: float, now: float) -> Beat:
    """How one job stands now, from its last success, failure and start."""
    ok, bad, start = pings.get("success"), pings.get("fail"), pings.get("start")
    last_end = max((p for p in (ok, bad) if p is not None), key=lambda p: p.at, default=None)
    due = (last_end.at if last_end else since) + hb.every + hb.grace
    duration = None
    if last_end is not None and start is not None and start.at <= last_end.at and last_end.at - start.at <= hb.every:
        duration = last_end.at - start.at
    log = ""
    if last_end is not None and last_end.kind == "fail":
        status = "failed"
        log = "\n".join(last_end.body.splitlines()[-LOG_LINES:])
    elif now > due:
        status = "late"
    elif start is not None and (last_end is None or start.at > last_end.at):
        status = "running"
    else:
        status = "up" if last_end is not None else "new"
    return Beat(name=hb.name, every=hb.every, grace=hb.grace, since=since, due_at=due, status=status, log=log,
                duration=duration, last_success=ok.at if ok else None, last_fail=bad.at if bad else None,
                last_start=start.at if start else None, public=hb.public)


class HeartbeatsCollector(Collector):
    name: ClassVar[str] = "heartbeats"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_heartbeat_up": MetricSpec("1 while the job pings on time (or has not been due yet), 0 when it "
                                             "is late or its last run failed.", states=("missed or failed", "ok")),
        "rackpulse_heartbeat_last_ping_timestamp_seconds": MetricSpec("When the job last said it ran (or failed)."),
        "rackpulse_heartbeat_duration_seconds": MetricSpec("How long the job's last run took, from its /start "
                                                           "ping to its end."),
    }

    def __init__(self, cfg: HeartbeatsConfig, pings: PingBook | None = None, saved: SavedEntries | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.cfg, self.clock = cfg, clock
        self.pings = pings or PingBook()
        self.saved = saved or SavedEntries()  # heartbeats made in the browser (/monitors)
        self._since: dict[str, float] = {}  # name -> when it was first known here

    def restore(self, state: State) -> None:
        """After a restart a heartbeat keeps when it was first known: a job never pinged stays due."""
        if isinstance(state, HeartbeatsState):
            for b in state.beats:
                if b.since is not None:
                    self._since.setdefault(b.name, b.since)

    def heartbeats(self) -> tuple[list[Heartbeat], list[str]]:
        """The config file's, then the browser's (checked by the same model; a clash of names keeps the file's)."""
        saved, warnings = self.saved.checked("heartbeats", {"heartbeat": Heartbeat}, {h.name for h in self.cfg.checks},
                                             "heartbeat")
        return [*self.cfg.checks, *saved], warnings

    def collect(self) -> CollectResult:
        checks, warnings = self.heartbeats()
        if not checks:
            raise NoData("no heartbeats configured ([[collectors.heartbeats]] or /monitors)")
        now = self.clock()
        result = CollectResult(warnings=warnings)
        beats = []
        for hb in checks:
            since = self._since.setdefault(hb.name, now)
            beat = judge_beat(hb, self.pings.last(hb.name), since, now)
            beats.append(beat)
            result.samples.extend(beat_samples(beat))
        result.state = HeartbeatsState(beats=beats)
        return result


def beat_samples(b: Beat) -> list[Sample]:
    out = [Sample.of("rackpulse_heartbeat_up", 0 if b.status in ("late", "failed") else 1, heartbeat=b.name)]
    last = max((t for t in (b.last_success, b.last_fail) if t is not None), default=None)
    if last is not None:
        out.append(Sample.of("rackpulse_heartbeat_last_ping_timestamp_seconds", last, heartbeat=b.name))
    if b.duration is not None:
        out.append(Sample.of("rackpulse_heartbeat_duration_seconds", b.duration, heartbeat=b.name))
    return out


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.heartbeats]; it runs no command."""
    return HeartbeatsCollector(c, host.pings, host.saved)
