"""What the NUT collector knows of each UPS: its state, typed."""

from __future__ import annotations

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


class NutState(State):
    ups: list[Ups] = []
