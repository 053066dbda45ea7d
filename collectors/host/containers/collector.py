"""Containers: every container of the host's Docker or Podman engine with its state, health,
exit code, OOM kill, restarts and one-shot CPU and memory. No engine socket is "source absent"."""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

from collectors.base import Collector, CollectorError, CollectResult, Entity, MetricSpec, Runner, Sample
from collectors.context import HostContext
from collectors.host.containers.client import EngineClient
from collectors.host.containers.config import ContainersConfig
from collectors.host.containers.engine import (
    PROJECT,
    SERVICE,
    Inspect,
    Stats,
    Summary,
    cpu_ratio,
    parse_inspect,
    parse_list,
    parse_stats,
    parse_version,
)
from collectors.host.containers.state import ContainersState, ContainerView
from collectors.increase import RecentIncrease

WINDOW = 600.0  # container_restarting counts restarts within 10 minutes


class ContainersCollector(Collector):
    name: ClassVar[str] = "containers"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_container_running": MetricSpec("1 while the container runs.", states=("not running", "running")),
        "rackpulse_container_healthy": MetricSpec("Its health check: 1 healthy, 0 unhealthy (absent without one).",
                                                  states=("unhealthy", "healthy")),
        "rackpulse_container_restarts_total": MetricSpec("Times the engine restarted it.", "counter"),
        "rackpulse_container_exit_code": MetricSpec("Its last exit code."),
        "rackpulse_container_oom_killed": MetricSpec("1 if the kernel's OOM killer ended it last time.",
                                                     states=("no", "OOM killed")),
        "rackpulse_container_cpu_ratio": MetricSpec("CPU used, as a share of one core."),
        "rackpulse_container_memory_bytes": MetricSpec("Memory used, without the page cache (as docker stats shows)."),
    }

    def __init__(self, cfg: ContainersConfig, clock: Callable[[], float] = time.time) -> None:
        self.cfg, self.clock = cfg, clock
        self._stats: dict[str, Stats] = {}  # id -> the last reading (CPU needs two)
        self._restarts = RecentIncrease(WINDOW)  # restarts within 10 minutes, per container

    def collect(self) -> CollectResult:
        with EngineClient(self.cfg.socket, self.cfg.command_timeout) as engine:
            try:
                version = parse_version(engine.get("/version"))
            except (CollectorError, LookupError):
                version = None
            listed = [c for c in parse_list(engine.get("/containers/json?all=true"))
                      if not any(fnmatch.fnmatch(c.name, p) for p in self.cfg.ignore)]
            with ThreadPoolExecutor(max_workers=self.cfg.parallel, thread_name_prefix="engine") as pool:
                views = [v for v in pool.map(lambda c: self._one(engine, c), listed) if v is not None]
        now = self.clock()
        result = CollectResult()
        views = [v.model_copy(update={"restarts_10m": self._restarts.rose(v.name, v.restart_count, now)})
                 for v in views]
        for v in views:
            result.samples += samples(v)
            result.entities.append(Entity("container", v.name, {"image": v.image, "project": v.project,
                                                                 "state": v.state, "health": v.health}))
        seen = {v.id for v in views}
        self._stats = {k: s for k, s in self._stats.items() if k in seen}
        result.state = ContainersState(containers=views, engine=version, restart_count=self.cfg.restart_count,
                                       stopped_on_request=self.cfg.stopped_on_request)
        return result

    def _one(self, engine: EngineClient, c: Summary) -> ContainerView | None:
        try:
            info = parse_inspect(engine.get(f"/containers/{c.id}/json"))
        except LookupError:
            return None  # removed since the list
        cpu = mem = limit = None
        if self.cfg.stats and info.state == "running":
            try:
                reading = parse_stats(engine.get(f"/containers/{c.id}/stats?stream=false&one-shot=true"))
            except (LookupError, CollectorError):
                reading = None
            if reading is not None:
                cpu = cpu_ratio(reading, self._stats.get(c.id))
                mem, limit = reading.memory_bytes, reading.memory_limit_bytes
                self._stats[c.id] = reading
        return ContainerView(
            id=c.id[:12], name=c.name, image=c.image, project=c.labels.get(PROJECT), service=c.labels.get(SERVICE),
            state=info.state or c.state, health=info.health, health_log=info.health_log,
            failing_streak=info.failing_streak, exit_code=info.exit_code, oom_killed=info.oom_killed,
            restart_count=info.restart_count, restart_policy=info.restart_policy, error=info.error,
            stopped_on_request=stopped_on_request(info), started_at=info.started_at,
            finished_at=info.finished_at, cpu_ratio=cpu, memory_bytes=mem, memory_limit_bytes=limit,
            public=any(fnmatch.fnmatch(c.name, p) for p in self.cfg.public))

def stopped_on_request(info: Inspect) -> bool:
    """Whether it exited because someone stopped it. Podman 5 says so (StoppedByUser); Docker and
    Podman 4 do not, but an engine restarts a container of policy always or unless-stopped that
    exits by itself (it is "restarting", not "exited"), unless it was stopped on request, its
    restart failed (State.Error says why) or the kernel killed it for memory (OOMKilled)."""
    if info.stopped_by_user is not None:
        return info.stopped_by_user
    return (info.state == "exited" and info.restart_policy in ("always", "unless-stopped") and not info.error
            and not info.oom_killed)


def samples(v: ContainerView) -> list[Sample]:
    labels = {"container": v.name, "project": v.project or ""}
    out = [Sample.of("rackpulse_container_running", 1 if v.state == "running" else 0, **labels),
           Sample.of("rackpulse_container_oom_killed", 1 if v.oom_killed else 0, **labels)]
    if v.health in ("healthy", "unhealthy"):
        out.append(Sample.of("rackpulse_container_healthy", 1 if v.health == "healthy" else 0, **labels))
    if v.restart_count is not None:
        out.append(Sample.of("rackpulse_container_restarts_total", v.restart_count, **labels))
    if v.exit_code is not None:
        out.append(Sample.of("rackpulse_container_exit_code", v.exit_code, **labels))
    if v.cpu_ratio is not None:
        out.append(Sample.of("rackpulse_container_cpu_ratio", v.cpu_ratio, **labels))
    if v.memory_bytes is not None:
        out.append(Sample.of("rackpulse_container_memory_bytes", v.memory_bytes, **labels))
    return out


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.containers] (it sends no command: the runner is unused)."""
    return ContainersCollector(c)
