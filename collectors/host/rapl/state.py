"""What the RAPL collector read: each zone's draw and its energy, and the source they make."""

from __future__ import annotations

from collectors.state import Record, State


class ZoneView(Record):
    id: str  # intel-rapl:0:1
    name: str  # package-0/uncore
    top: bool = True
    watts: float | None = None  # None on the first read (a rate needs two)
    energy_joules: float | None = None  # since rackpulse first read it: never falls (across wraps and restarts)


class RaplState(State):
    zones: list[ZoneView] = []
    source: str = "cpu"
    source_watts: float | None = None  # the packages' sum (not the platform zone, which holds them)
    source_joules: float | None = None
