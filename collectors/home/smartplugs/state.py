"""What the smart plugs collector knows of each plug: its watts, its energy, how it is counted."""

from __future__ import annotations

from typing import ClassVar

from collectors.state import Record, State


class PlugView(Record):
    name: str
    kind: str = "shelly"
    watts: float | None = None  # None: no data (never heard, or silent for longer than silent_after)
    # Energy since rackpulse first heard the plug, in joules: never falls, across the plug's
    # reboots (its own counter restarting at 0) and rackpulse's restarts
    energy_joules: float | None = None
    counter_joules: float | None = None  # the plug's own counter at its last message
    method: str = "counter"  # counter: the plug's own; integrated: watts over time (it has no counter)
    last_seen: float | None = None
    silent: bool = False
    error: str | None = None  # its last message could not be read


class SmartplugsState(State):
    plugs: list[PlugView] = []
    broker_error: str | None = None  # the broker cannot be reached: every plug is no data
    # The broker away: no plug can be heard, and their firing alerts are held.
    source_label: ClassVar[str] = "plug"

    def unreadable_sources(self) -> dict[str, float | None]:
        return {p.name: p.last_seen for p in self.plugs} if self.broker_error else {}

    def sources(self) -> set[str]:
        return {p.name for p in self.plugs}
