"""systemd: failed units, and the units and timers named in `watch` with their state, restarts
and, for a timer, when its service last succeeded. No systemctl, or no systemd running (a
container, this test machine), is "source absent"."""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable
from typing import Any, ClassVar

from collectors.base import (
    Collector,
    CollectorError,
    CollectResult,
    CommandNotFound,
    Entity,
    MetricSpec,
    NoData,
    Runner,
    Sample,
    run_command,
)
from collectors.context import HostContext
from collectors.host.systemd.config import SystemdConfig
from collectors.host.systemd.state import SystemdState, UnitView
from collectors.host.systemd.systemctl import PROPERTIES, UnitProps, parse_list_units, parse_show
from collectors.increase import RecentIncrease

WINDOW = 600.0


class SystemdCollector(Collector):
    name: ClassVar[str] = "systemd"
    metrics: ClassVar[dict[str, MetricSpec]] = {
        "rackpulse_systemd_unit_failed": MetricSpec("1 while the unit is failed.", states=("ok", "failed")),
        "rackpulse_systemd_unit_active": MetricSpec("1 while a watched unit is active.", states=("inactive", "active")),
        "rackpulse_systemd_unit_restarts_total": MetricSpec("Times systemd restarted the service (NRestarts).",
                                                            "counter"),
        "rackpulse_systemd_timer_last_success_timestamp_seconds": MetricSpec(
            "When a watched timer's service last finished with success."),
        "rackpulse_systemd_timer_stale": MetricSpec("1 when a watched timer's service has not succeeded within "
                                                    "stale_after.", states=("on time", "stale")),
    }

    def __init__(self, cfg: SystemdConfig, runner: Runner = run_command, clock: Callable[[], float] = time.time) -> None:
        self.cfg, self.runner, self.clock = cfg, runner, clock
        self._restarts = RecentIncrease(WINDOW)

    def _run(self, *args: str) -> str:
        try:
            res = self.runner([*self.cfg.systemctl, *args], self.cfg.command_timeout)
        except CommandNotFound as exc:
            raise NoData(f"{exc} (no systemd here)") from None
        err = res.stderr.decode("utf-8", "replace").strip()
        if res.returncode != 0 and not res.stdout.strip():
            if "System has not been booted with systemd" in err or "Failed to connect to bus" in err:
                raise NoData(f"systemd is not running here: {err.splitlines()[0][:200]}")
            raise CollectorError(f"systemctl {' '.join(args[:2])}: {err[:300] or f'exit {res.returncode}'}")
        return res.stdout.decode("utf-8", "replace")

    def collect(self) -> CollectResult:
        listed = parse_list_units(self._run("list-units", "--all", "--output=json", "--no-pager"))
        watched = [u.unit for u in listed if any(fnmatch.fnmatch(u.unit, p) for p in self.cfg.watch)]
        failed = [u.unit for u in listed if u.active == "failed"]
        names = list(dict.fromkeys(watched + failed))
        props = {p.id: p for p in parse_show(self._run(
            "show", "--timestamp=unix", "--no-pager", f"--property={','.join(PROPERTIES)}", *names))} if names else {}
        # A timer's service, for its last success (asked too when it is not itself listed).
        services = [p.triggers for p in props.values() if p.id.endswith(".timer") and p.triggers
                    and p.triggers not in props]
        if services:
            props.update({p.id: p for p in parse_show(self._run(
                "show", "--timestamp=unix", "--no-pager", f"--property={','.join(PROPERTIES)}", *services))})
        now = self.clock()
        views = [self._view(props[n], n in watched, props, now) for n in names if n in props]
        result = CollectResult(state=SystemdState(units=views, stale_after=self.cfg.stale_after,
                                                  restart_count=self.cfg.restart_count))
        for v in views:
            labels = {"unit": v.unit}
            result.samples.append(Sample.of("rackpulse_systemd_unit_failed", 1 if v.active == "failed" else 0, **labels))
            if v.watched:
                result.samples.append(Sample.of("rackpulse_systemd_unit_active", 1 if v.active == "active" else 0,
                                                **labels))
            if v.restarts is not None:
                result.samples.append(Sample.of("rackpulse_systemd_unit_restarts_total", v.restarts, **labels))
            if v.triggers and v.watched:
                result.samples.append(Sample.of("rackpulse_systemd_timer_stale", 1 if v.stale else 0, **labels))
                if v.last_success is not None:
                    result.samples.append(Sample.of("rackpulse_systemd_timer_last_success_timestamp_seconds",
                                                    v.last_success, **labels))
            result.entities.append(Entity("systemd_unit", v.unit, {"active": v.active, "sub": v.sub,
                                                                   "result": v.result}))
        return result

    def _view(self, p: UnitProps, watched: bool, props: dict[str, UnitProps], now: float) -> UnitView:
        last_success = stale = None
        if p.id.endswith(".timer") and p.triggers:
            svc = props.get(p.triggers)
            if svc is not None and svc.result == "success" and svc.exited_at:
                last_success = svc.exited_at
            # never succeeded: counted from when the timer was started (a new timer is not stale at once);
            # a service that failed is unit_failed, not also a stale timer
            reference = last_success or p.active_since
            failed = svc is not None and svc.active == "failed"
            stale = watched and not failed and reference is not None and now - reference > self.cfg.stale_after
        since = p.active_since if p.active == "active" else p.inactive_since
        return UnitView(unit=p.id, description=p.description, active=p.active, sub=p.sub, result=p.result,
                        exit_status=p.exit_status, restarts=p.restarts, restarts_10m=self._restarts.rose(p.id, p.restarts, now),
                        watched=watched, since=since, triggers=p.triggers if p.id.endswith(".timer") else None,
                        last_trigger=p.last_trigger, next_trigger=p.next_elapse, last_success=last_success,
                        stale=bool(stale), public=watched and any(fnmatch.fnmatch(p.id, g) for g in self.cfg.public))


def build(c: Any, host: HostContext, runner: Runner) -> Collector:
    """The collector from its section, [collectors.systemd]."""
    return SystemdCollector(c, runner)
