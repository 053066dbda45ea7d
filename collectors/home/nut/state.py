"""What the NUT collector knows of each UPS: its state, typed."""

from __future__ import annotations

from typing import ClassVar

from collectors.state import Record, State


class Ups(Record):
    name: str
    up: bool = False  # upsd (or the UPS-MIB card) answered for it
    error: str | None = None
    flags: list[str] = []  # OL, OB, LB, CHRG ... as upsd says them
    on_battery: bool = False
    on_battery_seconds: float | None = None
    low_battery: bool = False
    model: str | None = None
    battery_voltage: float | None = None
    charge: float | None = None  # percent
    runtime: float | None = None  # seconds on battery left
    load: float | None = None  # percent
    input_voltage: float | None = None
    output_voltage: float | None = None
    watts: float | None = None  # its output's draw: ups.realpower, or the load of ups.realpower.nominal
    energy_joules: float | None = None  # those watts over time since first read (collectors/energy.py)
    last_read: float | None = None  # when upsd (or the card) last answered for it


class NutState(State):
    ups: list[Ups] = []
    # A UPS whose upsd stops answering has not come back on line: its firing alerts are held.
    source_label: ClassVar[str] = "ups"

    def unreadable_sources(self) -> dict[str, float | None]:
        return {u.name: u.last_read for u in self.ups if not u.up}

    def sources(self) -> set[str]:
        return {u.name for u in self.ups}
