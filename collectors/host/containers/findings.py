"""What is wrong with a container, in the words the tile, the alert and the webhook share."""

from __future__ import annotations

from collections.abc import Sequence

from collectors.findings import BAD, WARN, Finding, Judging, Monitor, RuleSpec, Tile, about, level_of
from collectors.host.containers.engine import SHOULD_RUN
from collectors.host.containers.state import ContainersState, ContainerView
from collectors.plugin import View

RULES = (
    RuleSpec("container_unhealthy", "warning", 60, title="Container unhealthy"),
    RuleSpec("container_restarting", "warning", title="Container restarting"),
    RuleSpec("container_exited", "critical", title="Container stopped"),
    RuleSpec("container_oom", "warning", title="Container out of memory"),
)


def who(c: ContainerView) -> str:
    where = f" ({c.project}/{c.service})" if c.project and c.service else ""
    return f"container {c.name}{where}"


def container_findings(c: ContainerView, restart_limit: int, on_request: str = "warning") -> list[Finding]:
    labels = {"container": c.name, "project": c.project, "image": c.image}
    out = []
    if c.health == "unhealthy":
        said = f": {c.health_log}" if c.health_log else ""
        streak = f" ({c.failing_streak} checks failed in a row)" if c.failing_streak else ""
        out.append(Finding(WARN, f"{who(c)} is unhealthy{streak}{said}", "container_unhealthy", c.name, labels))
    if c.restarts_10m is not None and c.restarts_10m > restart_limit:
        out.append(Finding(WARN, f"{who(c)} restarted {c.restarts_10m} times in 10 minutes "
                                 f"({c.restart_count} in all)", "container_restarting", c.name, labels))
    if c.state == "exited" and c.exit_code and c.restart_policy in SHOULD_RUN:
        if c.stopped_on_request:
            if on_request != "ignore":
                out.append(Finding(BAD if on_request == "critical" else WARN,
                                   f"{who(c)} was stopped (exit code {c.exit_code}; restart policy {c.restart_policy}: "
                                   "the engine leaves a container stopped on request stopped)", "container_exited",
                                   c.name, labels, severity=on_request))
        else:
            why = f": {c.error}" if c.error else ""
            out.append(Finding(BAD, f"{who(c)} exited with code {c.exit_code} (restart policy {c.restart_policy}: "
                                    f"it should be running){why}", "container_exited", c.name, labels))
    if c.oom_killed:
        limit = f" at its {c.memory_limit_bytes / 2**20:.0f} MiB limit" if c.memory_limit_bytes else ""
        out.append(Finding(WARN, f"{who(c)} was killed for lack of memory (OOM){limit}", "container_oom", c.name,
                           labels))
    return out


def findings(state: ContainersState, judging: Judging) -> list[Finding]:
    limit = state.restart_count or 3
    on_request = state.stopped_on_request or "warning"
    return [f for c in state.containers for f in container_findings(c, limit, on_request)]


def all_clear(state: ContainersState, judging: Judging) -> str | None:
    if not state.containers:
        return None
    running = sum(1 for c in state.containers if c.state == "running")
    checked = sum(1 for c in state.containers if c.health == "healthy")
    healthy = f", {checked} healthy by their checks" if checked else ""
    return f"{running} of {len(state.containers)} containers running{healthy}"


def view(state: ContainersState, found: Sequence[Finding]) -> View:
    """Grouped by compose project (a container outside one stands alone), the projects by name."""
    groups: dict[str, list[tuple[ContainerView, str]]] = {}
    for c in sorted(state.containers, key=lambda c: (c.project or "~", c.service or c.name)):
        groups.setdefault(c.project or "", []).append((c, level_of(about(found, container=c.name))))
    return {"groups": sorted(groups.items(), key=lambda g: (g[0] == "", g[0])), "engine": state.engine}


TILE = Tile("Containers", "/host#containers", all_clear)


def monitors(state: ContainersState) -> list[Monitor]:
    """The containers marked public, for /status: up while running (and not unhealthy)."""
    return [Monitor(c.name, "container", c.state == "running" and c.health != "unhealthy", c.image,
                    c.health_log if c.health == "unhealthy" else None, "rackpulse_container_running",
                    {"container": c.name, "project": c.project or ""}) for c in state.containers if c.public]
