"""What the SNMP collector knows of each switch and its ports: its state, typed."""

from __future__ import annotations

from typing import ClassVar

from collectors.state import Record, State


class PortView(Record):
    index: int | None = None  # ifIndex
    name: str
    alias: str = ""
    admin_up: bool = False
    oper: str = ""  # up, down, testing, dormant, notPresent, lowerLayerDown ...
    speed_bps: int | None = None
    in_octets: int | None = None
    out_octets: int | None = None
    counters_64bit: bool = False
    in_errors: int | None = None
    out_errors: int | None = None
    flaps: int | None = None  # status changes rackpulse has seen since it started


class Target(Record):
    name: str
    host: str = ""
    up: bool = False  # answered
    error: str | None = None
    ports: list[PortView] = []
    last_read: float | None = None  # when it last answered


class SnmpState(State):
    targets: list[Target] = []
    # A switch that stops answering has not repaired its ports: their firing alerts are held.
    source_label: ClassVar[str] = "target"

    def unreadable_sources(self) -> dict[str, float | None]:
        return {t.name: t.last_read for t in self.targets if not t.up}

    def sources(self) -> set[str]:
        return {t.name for t in self.targets}
