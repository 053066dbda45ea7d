"""What the IPMI collector knows of each BMC: its sensors, its SEL's news, its power, typed."""

from __future__ import annotations

from typing import ClassVar

from collectors.state import Record, State


class Sensor(Record):
    name: str
    type: str
    state: str | None = None  # Nominal | Warning | Critical (FreeIPMI's judgement)
    reading: float | None = None
    unit: str | None = None
    thresholds: dict[str, float | None] = {}  # "Lower C" -> 600.0
    events: list[str] = []


class SelEvent(Record):
    # None only for a stored value that could not be read back (see collectors/finite.py)
    id: int | None = None
    time: float | None = None  # when the BMC logged it; None before its clock was set
    seen: float | None = None  # when rackpulse first read it: what sel_hold counts from
    name: str
    type: str
    state: str | None = None
    asserted: bool = True
    event: str


class BmcView(Record):
    name: str  # "local" for this host's own BMC
    remote: bool = True
    up: bool = False
    error: str | None = None
    sensors: list[Sensor] = []
    power_watts: float | None = None  # DCMI's current power, where the BMC has it
    energy_joules: float | None = None  # DCMI's power over time since first read (collectors/energy.py)
    sel_entries: int | None = None
    sel_used_ratio: float | None = None
    sel_last_id: int | None = None  # the last record read: the next poll asks for what came after
    recent: list[SelEvent] = []  # the SEL's latest entries, newest last (the section's list)
    held: list[SelEvent] = []  # critical and warning entries read within sel_hold: findings
    last_read: float | None = None  # when it last answered


class IpmiState(State):
    bmcs: list[BmcView] = []
    sel_full_ratio: float | None = 0.9
    source_label: ClassVar[str] = "bmc"

    def unreadable_sources(self) -> dict[str, float | None]:
        return {b.name: b.last_read for b in self.bmcs if not b.up}

    def sources(self) -> set[str]:
        return {b.name for b in self.bmcs}
