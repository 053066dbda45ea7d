"""What the hwmon collector knows of the named rails and fans and every sensor: its state, typed."""

from __future__ import annotations

from typing import ClassVar

from collectors.state import Record, State


class RailView(Record):
    name: str
    volts: float | None = None  # after its divider's scaling
    ok: bool | None = None  # within its limits; None when unreadable
    min: float | None = None
    max: float | None = None
    source: str = ""  # chip/sensor


class FanView(Record):
    name: str
    rpm: float | None = None
    stalled: bool = False
    why: str = ""  # in words: "0 RPM", "no tach; cpu at 61 °C"


class SensorView(Record):
    chip: str
    name: str  # in0, fan1, temp2 ...
    label: str | None = None
    kind: str = ""  # in, fan, temp, pwm, curr, power
    value: float | None = None
    attrs: dict[str, float | None] = {}  # min, max, crit, alarm ... in base units


class HwmonState(State):
    rails: list[RailView] = []
    fans: list[FanView] = []
    sensors: list[SensorView] = []
    # A rail whose sensor cannot be read now has not come back into its limits: held.
    source_label: ClassVar[str] = "rail"

    def unreadable_sources(self) -> dict[str, float | None]:
        return {r.name: None for r in self.rails if r.volts is None}

    def sources(self) -> set[str]:
        return {r.name for r in self.rails}
