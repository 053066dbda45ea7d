"""What the HAProxy collector knows of each instance: its frontends, backends and servers, typed."""

from __future__ import annotations

from typing import ClassVar

from collectors.state import Record, State


class HaproxyServerView(Record):
    backend: str
    name: str
    status: str  # as HAProxy says it: UP, DOWN, "UP 1/3", MAINT, DRAIN, NOLB, "no check"
    check: str = ""  # why its check failed: "Layer4 connection problem: Connection refused"
    sessions: int | None = None
    queue: int | None = None
    backup: bool = False


class HaproxyProxyView(Record):
    name: str
    kind: str  # frontend or backend
    status: str  # OPEN, FULL, STOP (a frontend); UP, DOWN (a backend)
    sessions: int | None = None
    limit: int | None = None
    queue: int | None = None
    servers: int | None = 0  # a backend's servers, not counting those in maintenance
    servers_up: int | None = 0
    responses_5xx: int | None = None


class HaproxyInstanceView(Record):
    name: str
    where: str  # the socket's path or the stats URL (never a password)
    error: str | None = None  # it could not be read: the socket gone, refused, timed out
    version: str | None = None
    uptime_seconds: float | None = None
    proxies: list[HaproxyProxyView] = []
    servers: list[HaproxyServerView] = []


class HaproxyState(State):
    instances: list[HaproxyInstanceView] = []
    sessions_near: float | None = 0.9
    source_label: ClassVar[str] = "instance"

    def unreadable_sources(self) -> dict[str, float | None]:
        """Instances that could not be read: their alerts are held, not resolved."""
        return {i.name: None for i in self.instances if i.error}

    def sources(self) -> set[str]:
        return {i.name for i in self.instances}
