"""[collectors.hwmon]: the rails and fans a user names; every other sensor is shown as found."""

from __future__ import annotations

from collectors.config import CollectorBase, Seconds, Strict


class Rail(Strict):
    name: str  # "12V battery bus"
    chip: str
    sensor: str  # "in4"
    multiplier: float = 1.0  # divider scaling, like lm-sensors `compute in4 @*12, @/12`
    offset: float = 0.0
    min: float | None = None
    max: float | None = None


class Fan(Strict):
    name: str  # "HBA fan"
    chip: str | None = None
    sensor: str | None = None  # "fan2"; None for a fan without a tach line
    min_rpm: float | None = None
    # For a fan without tach: the temperature it should hold ("chip/temp3") and its ceiling.
    holds: str | None = None
    max_celsius: float | None = None


class HwmonConfig(CollectorBase):
    interval: Seconds = 10.0
    rails: list[Rail] = []
    fans: list[Fan] = []
